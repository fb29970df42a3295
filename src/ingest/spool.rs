//! A source that can be read only once (standard input, or a FIFO or device given by flag) is
//! copied to a temporary file while it is read, so that it is read as a file is: its events keep
//! only where their lines are, and the report reads the lines it cites back from the copy. Without
//! the copy every event would keep its line's text, three times the memory of the same file.
//!
//! The copy is made while reading, not before: it holds exactly the bytes the reader took, so an
//! input without end (`/dev/zero` through a FIFO) fills the disk no more than it fills memory, and
//! stops where the reader stops (a line past `--max-line-bytes` that holds a NUL byte).

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::SourceSpec;
use crate::error::{Error, Result};

/// The temporary copy of a source read once: removed when the last spec holding it is dropped.
#[derive(Debug)]
pub struct Spool {
    path: tempfile::TempPath,
    dir: PathBuf,
}

impl Spool {
    /// Where the copy is, for reading it back.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Whether a source is read once: standard input, or a path that is not a regular file.
pub fn is_read_once(path: &Path) -> bool {
    path == Path::new("-") || std::fs::metadata(path).is_ok_and(|m| !m.is_file())
}

/// Gives each source that is read once a temporary file to be copied to while it is read, in the
/// system's temporary folder (`TMPDIR`).
pub fn attach(sources: &mut [SourceSpec]) -> Result<()> {
    for spec in sources.iter_mut().filter(|spec| spec.spool.is_none() && is_read_once(&spec.path)) {
        let dir = std::env::temp_dir();
        let file = tempfile::Builder::new().prefix("leasetrace-input-").tempfile_in(&dir).map_err(|source| {
            Error::input(
                &spec.path,
                None,
                format!(
                    "cannot make a temporary copy in {} ({source}): a source read once is copied there so that the lines a report cites can be read back; set TMPDIR to a writable folder",
                    dir.display()
                ),
            )
        })?;
        spec.spool = Some(Arc::new(Spool { path: file.into_temp_path(), dir }));
    }
    Ok(())
}

/// Reads `inner`, writing every byte it gives to the spool's file.
pub struct Tee<R> {
    inner: R,
    copy: File,
    dir: PathBuf,
}

impl<R: Read> Tee<R> {
    pub fn new(inner: R, spool: &Spool) -> std::io::Result<Self> {
        let copy = std::fs::OpenOptions::new().write(true).truncate(true).open(spool.path())?;
        Ok(Tee { inner, copy, dir: spool.dir.clone() })
    }
}

impl<R: Read> Read for Tee<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let read = self.inner.read(out)?;
        // Read in blocks of 64 KiB (the reader's buffer): one write each, no buffer of its own to
        // flush, so the copy is whole the moment the reader has seen the end.
        self.copy.write_all(&out[..read]).map_err(|source| {
            std::io::Error::new(
                source.kind(),
                format!(
                    "writing the temporary copy in {} ({source}): a source read once is copied there so that the lines a report cites can be read back; set TMPDIR to a folder with room for it",
                    self.dir.display()
                ),
            )
        })?;
        Ok(read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_copy_holds_exactly_the_bytes_read_and_goes_with_the_last_spec() {
        let mut specs = vec![SourceSpec::new(
            crate::ingest::SourceKind::Log,
            PathBuf::from("-"),
            Some(chrono_tz::UTC),
            "--log-tz".into(),
        )];
        attach(&mut specs).unwrap();
        let spool = Arc::clone(specs[0].spool.as_ref().unwrap());
        let path = spool.path().to_path_buf();
        let mut tee = Tee::new(std::io::Cursor::new(b"one\ntwo\nthree".to_vec()), &spool).unwrap();
        let mut first = [0u8; 5];
        tee.read_exact(&mut first).unwrap();
        // Only what was read so far is in the copy.
        assert_eq!(std::fs::read(&path).unwrap(), b"one\nt");
        std::io::copy(&mut tee, &mut std::io::sink()).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"one\ntwo\nthree");
        drop((tee, spool, specs));
        assert!(!path.exists(), "the copy outlived its specs");
    }

    #[test]
    fn a_regular_file_is_not_copied() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("server.log");
        std::fs::write(&path, "line\n").unwrap();
        let mut specs =
            vec![SourceSpec::new(crate::ingest::SourceKind::Log, path, Some(chrono_tz::UTC), "--log-tz".into())];
        attach(&mut specs).unwrap();
        assert!(specs[0].spool.is_none());
    }
}
