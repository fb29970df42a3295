//! Line reading shared by the text formats: numbered lines, `\r\n` tolerated, binary refused;
//! `Text`, through which every source's bytes pass (a leading byte-order mark skipped); and
//! `LineEnds`, through which the line readers' do (a lone CR read as a line end).

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

/// A text's line endings as the line readers split them: each lone `\r` (old Mac exports, some
/// Windows tools) is read as `\n`, so that a log or JSON Lines file with CR endings is read as its
/// lines rather than as one line. A `\r\n` stays as it is (one line end, its `\r` dropped with the
/// line ending) and the text keeps its length, so byte offsets and line numbers (`ingest::line_ends`:
/// LF, CRLF and a lone CR are one line end each) are those of the file. Bytes without a `\r` are
/// handed through from the input's buffer (one `memchr` over them); only from a `\r` on is a block
/// copied to be changed.
pub struct LineEnds<R> {
    input: R,
    /// Changed bytes: `changed[at..]` are unread.
    changed: Vec<u8>,
    at: usize,
    /// Bytes at the front of the input's buffer known to hold no `\r`.
    clean: usize,
    /// Whether the last changed block ended in a `\r` not yet handed out: whether it is lone
    /// depends on the byte after it.
    pending_cr: bool,
}

impl<R: BufRead> LineEnds<R> {
    pub fn new(input: R) -> Self {
        LineEnds { input, changed: Vec::new(), at: 0, clean: 0, pending_cr: false }
    }

    /// Turns each lone `\r` of `changed` into `\n`; a `\r` at its end is held back.
    fn change(&mut self) {
        let mut from = 0;
        while let Some(found) = memchr::memchr(b'\r', &self.changed[from..]) {
            let cr = from + found;
            if cr + 1 == self.changed.len() {
                self.changed.pop();
                self.pending_cr = true;
                return;
            }
            if self.changed[cr + 1] != b'\n' {
                self.changed[cr] = b'\n';
            }
            from = cr + 1;
        }
    }
}

impl<R: BufRead> BufRead for LineEnds<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        loop {
            if self.at < self.changed.len() {
                return Ok(&self.changed[self.at..]);
            }
            if self.pending_cr {
                self.pending_cr = false;
                let next = self.input.fill_buf()?.first().copied();
                self.changed.clear();
                self.at = 0;
                self.changed.push(if next == Some(b'\n') { b'\r' } else { b'\n' });
                continue;
            }
            if self.clean == 0 {
                let available = self.input.fill_buf()?;
                match memchr::memchr(b'\r', available) {
                    _ if available.is_empty() => return Ok(&[]),
                    None => self.clean = available.len(),
                    Some(0) => {
                        self.changed.clear();
                        self.at = 0;
                        self.changed.extend_from_slice(available);
                        let taken = available.len();
                        self.input.consume(taken);
                        self.change();
                        continue;
                    }
                    Some(cr) => self.clean = cr,
                }
            }
            let clean = self.clean;
            return Ok(&self.input.fill_buf()?[..clean]);
        }
    }

    fn consume(&mut self, count: usize) {
        if self.at < self.changed.len() {
            self.at = (self.at + count).min(self.changed.len());
        } else {
            let count = count.min(self.clean);
            self.clean -= count;
            self.input.consume(count);
        }
    }
}

impl<R: BufRead> Read for LineEnds<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let available = self.fill_buf()?;
        let count = available.len().min(out.len());
        out[..count].copy_from_slice(&available[..count]);
        self.consume(count);
        Ok(count)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Gives its bytes `step` at a time, through a buffer of that size.
    fn trickle(bytes: &[u8], step: usize) -> std::io::BufReader<std::io::Cursor<Vec<u8>>> {
        std::io::BufReader::with_capacity(step, std::io::Cursor::new(bytes.to_vec()))
    }

    fn read_all(mut input: impl Read) -> Vec<u8> {
        let mut out = Vec::new();
        input.read_to_end(&mut out).unwrap();
        out
    }

    #[test]
    fn a_bom_is_skipped_only_at_the_start_however_the_bytes_come() {
        for step in [1, 2, 3, 4, 64] {
            assert_eq!(
                read_all(Text::new(trickle(b"\xef\xbb\xbfa\n\xef\xbb\xbfb", step))),
                b"a\n\xef\xbb\xbfb",
                "{step}"
            );
            assert_eq!(read_all(Text::new(trickle(b"\xef\xbbx", step))), b"\xef\xbbx", "{step}");
            assert_eq!(read_all(Text::new(trickle(b"\xef\xbb", step))), b"\xef\xbb", "{step}");
            assert_eq!(read_all(Text::new(trickle(b"\xef\xbb\xbf", step))), b"", "{step}");
        }
    }

    #[test]
    fn lone_crs_become_line_feeds_and_crlf_stays_however_the_bytes_come() {
        let text = b"a\rb\r\nc\n\rd\r\r\ne\r";
        let expected = b"a\nb\r\nc\n\nd\n\r\ne\n";
        for step in 1..=text.len() + 1 {
            assert_eq!(read_all(LineEnds::new(trickle(text, step))), expected, "{step} bytes at a time");
            // Line by line, as `Lines` reads them.
            let mut lines = Lines::new(Box::new(LineEnds::new(trickle(text, step))));
            let mut read = Vec::new();
            while let Some((number, line)) = lines.next_line(Path::new("x")).unwrap() {
                read.push((number, line.to_string()));
            }
            let numbered: Vec<(u64, String)> =
                ["a", "b", "c", "", "d", "", "e"].iter().zip(1..).map(|(l, n)| (n, l.to_string())).collect();
            assert_eq!(read, numbered, "{step} bytes at a time");
        }
        // Without a `\r`, the text comes through as it is.
        let plain: Vec<u8> = (0..100_000).flat_map(|i| format!("line {i}\n").into_bytes()).collect();
        assert_eq!(read_all(LineEnds::new(trickle(&plain, 4096))), plain);
    }
}
