//! The case folder as `capture` writes it: all or nothing.
//!
//! A capture that fails or is killed half-way must not leave a folder that looks like evidence
//! (issue 34: a killed capture left an `events.jsonl` of part of the stream, and nothing said so).
//! So nothing is written into OUT until the capture is complete:
//! - OUT does not exist: the files are written into a hidden folder beside it
//!   (`.OUT.leasetrace-incomplete-<pid>`), which is renamed to OUT at the end, in one step.
//! - OUT is an empty folder: the files are written into a hidden folder inside it and moved up
//!   at the end, the manifest last (a folder without `leasetrace.toml` is not taken for a case).
//!   Not a rename of the folder onto OUT: OUT may be a mount point (a container's volume) or a
//!   link, which cannot be replaced, and it keeps its own owner and permissions this way.
//!
//! A capture that fails removes its hidden folder; one that is killed leaves it, named
//! `*leasetrace-incomplete*` so that nobody takes it for a capture.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use super::client::Stop;
use super::shape::Wrong;
use crate::error::{Error, Result};

/// What a folder of an interrupted capture is called (with the process id after it).
pub const INCOMPLETE: &str = "leasetrace-incomplete";

/// OUT must not exist, or be an empty folder: a capture never mixes with, or overwrites, other
/// evidence. Checked before connecting, and again by the final rename or moves.
pub fn check(out: &Path) -> Result<()> {
    let Ok(meta) = std::fs::metadata(out) else { return Ok(()) };
    if !meta.is_dir() {
        return Err(Error::usage(format!(
            "{}: not a folder: capture writes into a new or empty folder (it never overwrites evidence)",
            out.display()
        )));
    }
    let mut entries = std::fs::read_dir(out).map_err(|source| Error::Io { path: out.to_path_buf(), source })?;
    if let Some(entry) = entries.next() {
        let name = entry.map(|e| e.file_name().to_string_lossy().into_owned()).unwrap_or_default();
        let left = if name.contains(INCOMPLETE) {
            format!(" ({name}: the files of a capture that was interrupted; delete it)")
        } else {
            format!(" (it holds {})", crate::capture::escape::visible(&name))
        };
        return Err(Error::usage(format!(
            "{}: the folder is not empty{left}: capture writes into a new or empty folder (it never overwrites evidence)",
            out.display()
        )));
    }
    Ok(())
}

/// Where the files of a capture are written until it is complete.
pub struct Staging {
    out: PathBuf,
    dir: PathBuf,
    /// OUT existed (empty): the files move into it; else the folder is renamed to it.
    into_existing: bool,
    /// The files written, in order, for the moves into an existing OUT.
    files: Vec<&'static str>,
    done: bool,
}

impl Staging {
    /// The hidden folder for a capture into `out` (checked by `check` before).
    pub fn begin(out: &Path) -> Result<Staging> {
        check(out)?;
        let into_existing = out.is_dir();
        let pid = std::process::id();
        let (parent, name) = if into_existing {
            (out.to_path_buf(), format!(".{INCOMPLETE}-{pid}"))
        } else {
            let parent = match out.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
                _ => PathBuf::from("."),
            };
            std::fs::create_dir_all(&parent).map_err(|source| Error::Write { path: parent.clone(), source })?;
            let name = out.file_name().map_or_else(|| "capture".into(), |n| n.to_string_lossy().into_owned());
            (parent, format!(".{name}.{INCOMPLETE}-{pid}"))
        };
        let mut dir = parent.join(&name);
        let mut n = 1;
        loop {
            match std::fs::create_dir(&dir) {
                Ok(()) => break,
                Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => {
                    dir = parent.join(format!("{name}-{n}"));
                    n += 1;
                }
                Err(source) => return Err(Error::Write { path: dir, source }),
            }
        }
        Ok(Staging { out: out.to_path_buf(), dir, into_existing, files: Vec::new(), done: false })
    }

    /// A file of the capture, to write now and find in OUT at the end.
    pub fn file(&mut self, name: &'static str) -> PathBuf {
        if !self.files.contains(&name) {
            self.files.push(name);
        }
        self.dir.join(name)
    }

    /// Puts the complete capture in place: OUT holds it all, or (on an error) nothing new.
    pub fn commit(mut self) -> Result<()> {
        sync(&self.dir);
        let mut files = std::mem::take(&mut self.files);
        if self.into_existing {
            // The manifest last: until it is there, the folder is not a case.
            files.sort_by_key(|name| *name == "leasetrace.toml");
            for name in files {
                let (from, to) = (self.dir.join(name), self.out.join(name));
                let moved = if to.exists() {
                    Err(std::io::Error::from(std::io::ErrorKind::AlreadyExists))
                } else {
                    std::fs::rename(&from, &to)
                };
                moved.map_err(|source| self.kept(&to, &source))?;
            }
            std::fs::remove_dir(&self.dir).map_err(|source| Error::Write { path: self.dir.clone(), source })?;
            sync(&self.out);
        } else {
            let out = self.out.clone();
            std::fs::rename(&self.dir, &out).map_err(|source| self.kept(&out, &source))?;
            if let Some(parent) = out.parent() {
                sync(parent);
            }
        }
        self.done = true;
        Ok(())
    }

    /// OUT changed under the capture (another program wrote into it): the capture is complete,
    /// so it is kept where it is, and the message says where.
    fn kept(&mut self, path: &Path, source: &std::io::Error) -> Error {
        self.done = true;
        Error::Write {
            path: path.to_path_buf(),
            source: std::io::Error::new(
                source.kind(),
                format!(
                    "{source}: OUT changed during the capture (was something else writing into it?); the complete capture is kept in {}",
                    self.dir.display()
                ),
            ),
        }
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.done {
            // A failed capture leaves nothing behind; if even this fails, the folder's name says
            // what it is.
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// The folder's entries on disk before they are renamed into view (best effort: a filesystem
/// that cannot sync a folder still renames it).
fn sync(dir: &Path) {
    if let Ok(folder) = File::open(dir) {
        let _ = folder.sync_all();
    }
}

/// A JSON Lines file of the capture, each line (a record) at most `limit` bytes.
pub struct Jsonl {
    path: PathBuf,
    name: &'static str,
    out: BufWriter<File>,
    limit: u64,
}

impl Jsonl {
    pub fn create(staging: &mut Staging, name: &'static str, limit: u64) -> Result<Jsonl> {
        let path = staging.file(name);
        let out =
            File::create(&path).map(BufWriter::new).map_err(|source| Error::Write { path: path.clone(), source })?;
        Ok(Jsonl { path, name, out, limit })
    }

    /// One record. One past the limit stops the reading of the reply it came from (the error
    /// names the command), with its size.
    pub fn write(&mut self, value: &Json) -> std::result::Result<(), Stop> {
        match write_record(&mut self.out, value, self.limit) {
            Ok(()) => Ok(()),
            Err(RecordError::Io(source)) => Err(Stop::Error(Error::Write { path: self.path.clone(), source })),
            Err(RecordError::TooLong(size)) => Err(Stop::Reply(Wrong(too_long_message(self.name, size, self.limit)))),
        }
    }

    pub fn finish(self) -> Result<()> {
        let Jsonl { path, out, .. } = self;
        out.into_inner()
            .map_err(std::io::IntoInnerError::into_error)
            .and_then(|file| file.sync_all())
            .map_err(|source| Error::Write { path, source })
    }
}

/// The message of a record past the limit: where it would have gone, its size, the way out.
pub fn too_long_message(file: &str, size: u64, limit: u64) -> String {
    format!(
        "a record of {size} bytes for {file}, more than the --max-record-bytes limit of {} (the longest line analyze reads by default): raise --max-record-bytes, and give analyze --max-line-bytes as large",
        crate::capture::size(limit)
    )
}

#[derive(Debug)]
pub enum RecordError {
    Io(std::io::Error),
    /// The record's whole size in bytes, its line end included.
    TooLong(u64),
}

/// Writes `value` as one line of at most `limit` bytes (with its `\n`). Past the limit, the
/// rest is counted, not written: the error gives the size, and the capture stops (its staging
/// folder, with the cut line, is removed).
pub fn write_record(out: &mut impl Write, value: &Json, limit: u64) -> std::result::Result<(), RecordError> {
    let mut capped = Capped { out, limit, count: 0 };
    serde_json::to_writer(&mut capped, value).map_err(|e| RecordError::Io(e.into()))?;
    capped.write_all(b"\n").map_err(RecordError::Io)?;
    if capped.count > limit { Err(RecordError::TooLong(capped.count)) } else { Ok(()) }
}

struct Capped<'a, W: Write> {
    out: &'a mut W,
    limit: u64,
    count: u64,
}

impl<W: Write> Write for Capped<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let room = usize::try_from(self.limit.saturating_sub(self.count)).unwrap_or(usize::MAX);
        if room > 0 {
            self.out.write_all(&buf[..buf.len().min(room)])?;
        }
        self.count += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_past_the_limit_is_refused_with_its_whole_size() {
        let mut out = Vec::new();
        write_record(&mut out, &serde_json::json!({"id": "1-0"}), 100).unwrap();
        assert_eq!(out, b"{\"id\":\"1-0\"}\n");
        let big = serde_json::json!({"data": "x".repeat(1000)});
        let mut out = Vec::new();
        match write_record(&mut out, &big, 100) {
            Err(RecordError::TooLong(size)) => assert_eq!(size, 1000 + 12),
            other => panic!("{other:?}"),
        }
        assert_eq!(out.len(), 100, "no more than the limit is written");
    }

    #[test]
    fn a_new_folder_appears_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("cases/case");
        let mut staging = Staging::begin(&out).unwrap();
        std::fs::write(staging.file("events.jsonl"), "{}\n").unwrap();
        assert!(!out.exists(), "nothing in OUT while the capture runs");
        staging.commit().unwrap();
        assert_eq!(std::fs::read_to_string(out.join("events.jsonl")).unwrap(), "{}\n");
        let left: Vec<_> =
            std::fs::read_dir(dir.path().join("cases")).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(left, vec![std::ffi::OsString::from("case")], "no staging folder left");

        // A capture that fails: dropped before its commit.
        let other = dir.path().join("cases/other");
        let mut staging = Staging::begin(&other).unwrap();
        std::fs::write(staging.file("events.jsonl"), "{}\n").unwrap();
        drop(staging);
        assert!(!other.exists());
        assert_eq!(std::fs::read_dir(dir.path().join("cases")).unwrap().count(), 1, "its staging folder removed");
    }

    #[test]
    fn an_empty_folder_receives_the_files_the_manifest_last_and_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("case");
        std::fs::create_dir(&out).unwrap();
        std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o750)).unwrap();
        let mut staging = Staging::begin(&out).unwrap();
        std::fs::write(staging.file("leasetrace.toml"), "").unwrap();
        std::fs::write(staging.file("events.jsonl"), "").unwrap();
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1, "only the hidden staging folder");
        staging.commit().unwrap();
        let mut names: Vec<_> =
            std::fs::read_dir(&out).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        assert_eq!(names, ["events.jsonl", "leasetrace.toml"]);
        assert_eq!(std::fs::metadata(&out).unwrap().permissions().mode() & 0o777, 0o750);

        let empty = dir.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        drop(Staging::begin(&empty).unwrap());
        assert_eq!(std::fs::read_dir(&empty).unwrap().count(), 0, "a failed capture leaves it empty");
    }

    #[test]
    fn a_folder_that_is_not_empty_or_not_a_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "").unwrap();
        let error = check(dir.path()).unwrap_err().to_string();
        assert!(error.contains("the folder is not empty (it holds notes.txt)"), "{error}");
        let error = check(&dir.path().join("notes.txt")).unwrap_err().to_string();
        assert!(error.contains("notes.txt: not a folder"), "{error}");
        std::fs::remove_file(dir.path().join("notes.txt")).unwrap();
        std::fs::create_dir(dir.path().join(format!(".{INCOMPLETE}-42"))).unwrap();
        let error = check(dir.path()).unwrap_err().to_string();
        assert!(error.contains("a capture that was interrupted; delete it"), "{error}");
    }
}
