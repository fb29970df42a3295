//! One error type for everything that can stop a run.
//!
//! Every variant that comes from an input carries the file and, where there is one, the line, so
//! that a responder can open the export at the right place. The exit code is chosen here, not at
//! the call sites: all errors are exit 2 (usage or input), findings are exit 1, clean is exit 0.
//!
//! A file name is case text like any other: `Display` shows it as `terminal::visible` writes it
//! (a name with an escape sequence or a line break in it neither controls the terminal nor adds a
//! line), and `main.rs` does the same for the message that quotes the file's content.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A problem with the command line or the values it carries.
    #[error("{0}")]
    Usage(String),

    /// A problem in one input file, at one line when the problem has a line.
    #[error("{}: {message}", location(path, *line))]
    Input { path: PathBuf, line: Option<u64>, message: String },

    /// The file could not be opened or read at all.
    #[error("{}: cannot read: {source}", shown(path))]
    Io { path: PathBuf, source: std::io::Error },

    /// A file leasetrace writes (a manifest, a manual page) could not be written: not `Io`,
    /// whose "cannot read" would send the user looking at the wrong side.
    #[error("{}: cannot write: {source}", shown(path))]
    Write { path: PathBuf, source: std::io::Error },

    /// A live system `capture` reads (a Redis server) refused or failed a command. `target` names
    /// the server without its credentials (`redis://10.0.0.5:6379/0`), `command` the command that
    /// failed (`XRANGE bull:pr-review:events`), so the user knows where to look.
    #[error("{target}: {command}: {message}")]
    Remote { target: String, command: String, message: String },
}

fn location(path: &std::path::Path, line: Option<u64>) -> String {
    match line {
        Some(n) => format!("{}:{n}", shown(path)),
        None => shown(path),
    }
}

/// A path as an error message shows it (`terminal::visible`).
fn shown(path: &std::path::Path) -> String {
    crate::terminal::visible(&path.display().to_string()).into_owned()
}

impl Error {
    pub fn input(path: impl Into<PathBuf>, line: Option<u64>, message: impl Into<String>) -> Self {
        Error::Input { path: path.into(), line, message: message.into() }
    }

    pub fn usage(message: impl Into<String>) -> Self {
        Error::Usage(message.into())
    }

    /// Errors are always exit 2: the report could not be built, so neither "clean" nor
    /// "findings" would be true.
    pub fn exit_code(&self) -> i32 {
        2
    }
}

pub type Result<T> = std::result::Result<T, Error>;
