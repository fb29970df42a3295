//! Where a case folder's manifest may send the reader: to regular files inside the folder.
//!
//! A case folder is often handed over by someone else, and a report quotes the lines it cites. A
//! manifest that names `/etc/passwd`, `../../secret` or a link out of the folder would make the
//! report print a file nobody meant to share; a FIFO or a device would hang the run or read
//! without end. So every path a manifest names must resolve, links followed, to a regular file
//! inside the folder (the folder's own path resolved the same way). This is the default because
//! a forensics tool is run on folders nobody has read yet: the safe reading must not depend on
//! remembering a flag. `--allow-outside-case` lifts the folder check for one run, and the report
//! says at its top which sources it read outside; nothing lifts the regular-file check for a
//! manifest, since a source named there is opened as a file.
//!
//! Paths on the command line (`--ledger`, `--log`, `--params`, `-`) are the user's own choice:
//! they are not checked here, and a FIFO given there is read once, like standard input.

use std::fs::Metadata;
use std::path::{Path, PathBuf};

/// A case folder, resolved: the root that manifest paths must stay inside.
#[derive(Debug)]
pub struct CaseFolder {
    root: PathBuf,
}

/// Where a path named by a manifest leads.
#[derive(Debug, PartialEq, Eq)]
pub enum Place {
    /// To a regular file inside the folder, or nowhere (a missing file, which the reader reports
    /// as it reports any file it cannot open).
    Inside,
    /// To this path outside the folder.
    Outside(PathBuf),
}

impl CaseFolder {
    /// The folder `base` (`""` for the current one), resolved; `None` when it cannot be (then no
    /// path in it can be read either, and the reader says why).
    pub fn new(base: &Path) -> Option<CaseFolder> {
        let base = if base.as_os_str().is_empty() { Path::new(".") } else { base };
        std::fs::canonicalize(base).ok().map(|root| CaseFolder { root })
    }

    /// The folder's resolved path, for messages.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where `path` leads: inside the folder or outside it. A path that does not resolve (missing,
    /// a dangling link, no permission) is left to the reader, whose error names it: it reads
    /// nothing, inside or out.
    pub fn place(&self, path: &Path) -> Place {
        match std::fs::canonicalize(path) {
            Ok(resolved) if !resolved.starts_with(&self.root) => Place::Outside(resolved),
            _ => Place::Inside,
        }
    }
}

/// What `path` is when it is not a regular file (links followed): "a named pipe (FIFO)", "a
/// character device", ...; `None` for a regular file or a path that does not resolve.
pub fn not_a_file(path: &Path) -> Option<&'static str> {
    std::fs::metadata(path).ok().and_then(|metadata| what_it_is(&metadata))
}

fn what_it_is(metadata: &Metadata) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let kind = metadata.file_type();
    if kind.is_file() {
        None
    } else if kind.is_dir() {
        Some("a folder")
    } else if kind.is_fifo() {
        Some("a named pipe (FIFO)")
    } else if kind.is_char_device() {
        Some("a character device")
    } else if kind.is_block_device() {
        Some("a block device")
    } else if kind.is_socket() {
        Some("a socket")
    } else {
        Some("not a regular file")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_inside_resolves_inside_and_one_out_resolves_outside() {
        let outer = tempfile::tempdir().unwrap();
        let case = outer.path().join("case");
        std::fs::create_dir(&case).unwrap();
        std::fs::write(case.join("a.log"), "x").unwrap();
        std::fs::write(outer.path().join("secret"), "x").unwrap();
        let folder = CaseFolder::new(&case).unwrap();
        assert_eq!(folder.place(&case.join("a.log")), Place::Inside);
        assert_eq!(folder.place(&case.join("missing.log")), Place::Inside, "left to the reader");
        let secret = std::fs::canonicalize(outer.path().join("secret")).unwrap();
        assert_eq!(folder.place(&case.join("../secret")), Place::Outside(secret.clone()));
        std::os::unix::fs::symlink("../secret", case.join("link.log")).unwrap();
        assert_eq!(folder.place(&case.join("link.log")), Place::Outside(secret));
    }

    #[test]
    fn a_sibling_folder_sharing_the_name_prefix_is_outside() {
        // `/x/case-old` starts with the characters of `/x/case` but is not inside it.
        let outer = tempfile::tempdir().unwrap();
        for name in ["case", "case-old"] {
            std::fs::create_dir(outer.path().join(name)).unwrap();
        }
        std::fs::write(outer.path().join("case-old/a.log"), "x").unwrap();
        let folder = CaseFolder::new(&outer.path().join("case")).unwrap();
        assert!(matches!(folder.place(&outer.path().join("case/../case-old/a.log")), Place::Outside(_)));
    }

    #[test]
    fn what_is_not_a_regular_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.log"), "x").unwrap();
        assert_eq!(not_a_file(&dir.path().join("a.log")), None);
        assert_eq!(not_a_file(dir.path()), Some("a folder"));
        assert_eq!(not_a_file(Path::new("/dev/null")), Some("a character device"));
    }
}
