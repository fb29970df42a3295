//! Line reading shared by the text formats: numbered lines, `\r\n` tolerated, binary refused.

use std::io::BufRead;
use std::path::Path;

use serde_json::{Map, Value};

use crate::error::{Error, Result};

pub struct Lines {
    input: Box<dyn BufRead + Send>,
    buffer: Vec<u8>,
    number: u64,
}

impl Lines {
    pub fn new(input: Box<dyn BufRead + Send>) -> Self {
        Lines { input, buffer: Vec::with_capacity(256), number: 0 }
    }

    /// The next line (with its 1-based number) without its line ending, or `None` at the end. Text that is not UTF-8 or
    /// holds a NUL byte is an error naming the line: it is not a log or a ledger.
    pub fn next_line(&mut self, path: &Path) -> Result<Option<(u64, &str)>> {
        self.buffer.clear();
        let read =
            self.input.read_until(b'\n', &mut self.buffer).map_err(|source| read_error(path, self.number, source))?;
        if read == 0 {
            return Ok(None);
        }
        self.number += 1;
        while matches!(self.buffer.last(), Some(b'\n' | b'\r')) {
            self.buffer.pop();
        }
        if self.buffer.contains(&0) {
            return Err(binary(path, self.number));
        }
        std::str::from_utf8(&self.buffer).map(|text| Some((self.number, text))).map_err(|_| binary(path, self.number))
    }
}

/// A failed read after `line` lines: a gzip stream's problem says after which line it stopped,
/// so that the user knows how much of the file was read (and the report would have held).
fn read_error(path: &Path, line: u64, source: std::io::Error) -> Error {
    match super::gzip::GzipProblem::of(&source) {
        Some(problem) if line == 0 => Error::input(path, None, problem.describe("before its first line")),
        Some(problem) => Error::input(path, None, problem.describe(&format!("after line {line}"))),
        None => Error::Io { path: path.to_path_buf(), source },
    }
}

fn binary(path: &Path, line: u64) -> Error {
    Error::input(path, Some(line), "binary data (not UTF-8 text): expected a text export; is this the right file?")
}

/// One line of a JSON Lines file as an object, or an error naming the line and what a record of
/// this file should look like (`expected`, e.g. "one ledger record per line").
pub fn json_object(path: &Path, line: u64, text: &str, expected: &str) -> Result<Map<String, Value>> {
    serde_json::from_str(text)
        .map_err(|error| Error::input(path, Some(line), format!("not a JSON object: {error}; expected {expected}")))
}
