//! Line reading shared by the text formats: numbered lines, `\r\n` tolerated, binary refused;
//! and `Text`, through which every source's bytes pass (a leading byte-order mark skipped).

use std::io::{BufRead, Read};
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

/// The UTF-8 byte-order mark some Windows tools write at the start of a text file.
pub const BOM: &[u8] = b"\xef\xbb\xbf";

/// A source's bytes as its reader sees them: a UTF-8 byte-order mark at the start of the input
/// (a file, standard input, a decompressed gzip) is skipped, so that line 1 is read as written
/// rather than as a line that starts with three odd bytes (a log's first entry counted as a
/// continuation, a JSON reader's "expected value"). Every source is opened through it
/// (`ingest::open`); a part of a file that starts after byte 0 is not (a BOM is only a mark at
/// the very start). A plain file's byte offsets still count the BOM: see `SourceSpec::text_start`.
pub struct Text<R> {
    input: R,
    /// Bytes of the input's start held back while looking for a BOM: `head[at..]` is unread.
    head: Vec<u8>,
    at: usize,
    at_start: bool,
}

impl<R: BufRead> Text<R> {
    pub fn new(input: R) -> Self {
        Text { input, head: Vec::new(), at: 0, at_start: true }
    }
}

impl<R: BufRead> BufRead for Text<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.at_start {
            let available = self.input.fill_buf()?;
            if available.starts_with(BOM) {
                self.input.consume(BOM.len());
            } else if BOM.starts_with(available) && !available.is_empty() {
                // A pipe may give the first bytes one at a time: held back until three are in, a
                // byte differs from the BOM's, or the input ends.
                while self.head.len() < BOM.len() && BOM.starts_with(&self.head) {
                    let available = self.input.fill_buf()?;
                    if available.is_empty() {
                        break;
                    }
                    let taken = available.len().min(BOM.len() - self.head.len());
                    self.head.extend_from_slice(&available[..taken]);
                    self.input.consume(taken);
                }
                if self.head == BOM {
                    self.head.clear();
                }
            }
            self.at_start = false;
        }
        if self.at < self.head.len() {
            return Ok(&self.head[self.at..]);
        }
        self.input.fill_buf()
    }

    fn consume(&mut self, count: usize) {
        let from_head = count.min(self.head.len() - self.at);
        self.at += from_head;
        self.input.consume(count - from_head);
    }
}

impl<R: BufRead> Read for Text<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let available = self.fill_buf()?;
        let count = available.len().min(out.len());
        out[..count].copy_from_slice(&available[..count]);
        self.consume(count);
        Ok(count)
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
