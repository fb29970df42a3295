//! Line reading shared by the text formats: numbered lines, `\r\n` tolerated, binary refused.

use std::io::BufRead;
use std::path::Path;

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
        let read = self
            .input
            .read_until(b'\n', &mut self.buffer)
            .map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
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

fn binary(path: &Path, line: u64) -> Error {
    Error::input(path, Some(line), "binary data (not UTF-8 text): expected a text export; is this the right file?")
}
