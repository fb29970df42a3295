//! A source that can be read only once (standard input, or a FIFO or device given by flag) is
//! copied to a temporary file while it is read, so that it is read as a file is: its events keep
//! only where their lines are, and the report reads the lines it cites back from the copy. Without
//! the copy every event would keep its line's text, three times the memory of the same file.
//!
//! The copy is made while reading, not before: it holds exactly the bytes the reader took, so an
//! input without end (`/dev/zero` through a FIFO) fills the disk no more than it fills memory, and
//! stops where the reader stops (a line past `--max-line-bytes` that holds a NUL byte). Standard
//! input that is a regular file not yet read from is read in place instead (`Spool::InPlace`).

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::ingest::SourceSpec;

/// Where a source read once is read again from: its temporary copy (removed when the last spec
/// holding it is dropped), or, for standard input that is a regular file at its start (`< file`),
/// that file itself, through `/proc/self/fd/0` (Linux): no copy, and read in two parts as a file
/// is.
#[derive(Debug)]
pub enum Spool {
    Copy { path: tempfile::TempPath, dir: PathBuf },
    InPlace { path: PathBuf },
}

impl Spool {
    /// Where the text is read again from.
    pub fn path(&self) -> &Path {
        match self {
            Spool::Copy { path, .. } => path,
            Spool::InPlace { path } => path,
        }
    }

    /// Whether the source is copied while it is read (not read in place).
    pub fn is_copy(&self) -> bool {
        matches!(self, Spool::Copy { .. })
    }
}

/// Whether a source is read once: standard input, or a path that is not a regular file.
pub fn is_read_once(path: &Path) -> bool {
    path == Path::new("-") || std::fs::metadata(path).is_ok_and(|m| !m.is_file())
}

/// Gives each source that is read once where it is read again from: standard input that is a
/// regular file at its start, in place; any other, a temporary file in the system's temporary
/// folder (`TMPDIR`), to be copied to while it is read.
pub fn attach(sources: &mut [SourceSpec]) -> Result<()> {
    for spec in sources.iter_mut().filter(|spec| spec.spool.is_none() && is_read_once(&spec.path)) {
        if spec.path == Path::new("-")
            && let Some(path) = stdin_in_place()
        {
            spec.spool = Some(Arc::new(Spool::InPlace { path }));
            continue;
        }
        spec.spool = Some(Arc::new(Spool::copy_in(&spec.path, std::env::temp_dir())?));
    }
    Ok(())
}

impl Spool {
    /// An empty temporary file in `dir` for the copy of the source at `path` (for its errors).
    fn copy_in(path: &Path, dir: PathBuf) -> Result<Spool> {
        let file = tempfile::Builder::new().prefix("leasetrace-input-").tempfile_in(&dir).map_err(|source| {
            Error::input(
                path,
                None,
                format!(
                    "cannot make a temporary copy in {} ({source}): a source read once is copied there so that the lines a report cites can be read back; set TMPDIR to a writable folder",
                    dir.display()
                ),
            )
        })?;
        Ok(Spool::Copy { path: file.into_temp_path(), dir })
    }
}

/// `/proc/self/fd/0` when standard input is a regular file not yet read from (`< file`) and that
/// path opens the same file: it can then be opened again at any offset, as the file. Where stdin
/// was read from already (`(head -1; leasetrace --ledger -) < file`), opening it again would start
/// at the file's start, not where stdin is: it is copied instead.
#[cfg(target_os = "linux")]
fn stdin_in_place() -> Option<PathBuf> {
    use std::io::Seek;
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    // A second descriptor of stdin's open file: its position is stdin's.
    let mut stdin = File::from(std::io::stdin().as_fd().try_clone_to_owned().ok()?);
    let meta = stdin.metadata().ok()?;
    if !meta.is_file() || stdin.stream_position().ok()? != 0 {
        return None;
    }
    let path = PathBuf::from("/proc/self/fd/0");
    let again = std::fs::metadata(&path).ok()?;
    (again.dev() == meta.dev() && again.ino() == meta.ino()).then_some(path)
}

#[cfg(not(target_os = "linux"))]
fn stdin_in_place() -> Option<PathBuf> {
    None
}

/// Reads `inner`, writing every byte it gives to the spool's file.
pub struct Tee<R> {
    inner: R,
    copy: File,
    dir: PathBuf,
}

impl<R: Read> Tee<R> {
    pub fn new(inner: R, spool: &Spool) -> std::io::Result<Self> {
        // Only a copy is written: a source read in place is the user's own file.
        let Spool::Copy { path, dir } = spool else {
            return Err(std::io::Error::other("internal: a source read in place is not copied"));
        };
        let copy = std::fs::OpenOptions::new().write(true).truncate(true).open(path)?;
        Ok(Tee { inner, copy, dir: dir.clone() })
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
        let dir = tempfile::tempdir().unwrap();
        let spool = Arc::new(Spool::copy_in(Path::new("-"), dir.path().to_path_buf()).unwrap());
        let mut spec = SourceSpec::new(
            crate::ingest::SourceKind::Log,
            PathBuf::from("-"),
            Some(chrono_tz::UTC),
            "--log-tz".into(),
        );
        spec.spool = Some(Arc::clone(&spool));
        let path = spool.path().to_path_buf();
        assert_eq!(spec.file(), path, "the copy is what the source is read again from");
        let mut tee = Tee::new(std::io::Cursor::new(b"one\ntwo\nthree".to_vec()), &spool).unwrap();
        let mut first = [0u8; 5];
        tee.read_exact(&mut first).unwrap();
        // Only what was read so far is in the copy.
        assert_eq!(std::fs::read(&path).unwrap(), b"one\nt");
        std::io::copy(&mut tee, &mut std::io::sink()).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"one\ntwo\nthree");
        drop((tee, spool, spec));
        assert!(!path.exists(), "the copy outlived its specs");
    }

    #[test]
    fn a_source_read_in_place_is_never_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.csv");
        std::fs::write(&path, "at,event\n").unwrap();
        let spool = Spool::InPlace { path: path.clone() };
        assert!(Tee::new(std::io::Cursor::new(b"x".to_vec()), &spool).is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"at,event\n");
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
