//! Line reading shared by the text formats: numbered lines, `\r\n` tolerated, binary refused;
//! `Text`, through which every source's bytes pass (a leading byte-order mark skipped); and
//! `LineEnds`, through which the line readers' do (a lone CR read as a line end).

use std::io::{BufRead, Read};
use std::path::Path;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::model::InputSummary;

/// The longest line (a CSV ledger: record) a source may hold unless `--max-line-bytes` or
/// `[analysis] max_line_bytes` says otherwise. A line with no end (`/dev/zero`, a gzip that
/// inflates to one line of a GB, a quote that never closes) would otherwise be held whole in
/// memory until the process aborts; a longer line is rejected with its number and passed over
/// without being held. 16 MiB is far above any log line or ledger row a program writes (pino's
/// and winston's largest objects, a stack trace on one line) and small beside a machine's memory.
pub const MAX_LINE_BYTES: usize = 16 << 20;

/// The highest `--max-line-bytes` taken: a line is held whole while it is read, so the setting
/// bounds the memory a source may take, and a GiB is already more than a line needs.
pub const MAX_LINE_BYTES_CEILING: u64 = 1 << 30;

/// The most a reader that must keep a source aside before it can read it (a log store's export
/// sorted newest first, read from its last record: its records kept in a temporary file,
/// `envelope::reverse`) keeps, in bytes of its records (512 MiB unless `--max-held-bytes` says
/// otherwise): past it the run stops with an error that names the fix.
pub const MAX_HELD_BYTES: usize = 512 << 20;

/// The most `--max-held-bytes` may allow (64 GiB).
pub const MAX_HELD_BYTES_CEILING: u64 = 64 << 30;

/// `bytes` as the messages say it: `16 MiB`, `64 KiB`, `1000 bytes`.
pub fn size(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} bytes")
    }
}

/// Why a line longer than `cap` bytes is rejected, with the setting that raises the limit.
pub fn too_long(cap: usize) -> String {
    format!("line longer than {} (the limit; raise it with --max-line-bytes or [analysis] max_line_bytes)", size(cap))
}

/// Reads and drops the rest of a line, through its `\n`, a buffer at a time: a line too long to
/// keep is passed over in bounded memory. Returns whether a `\n` was found before the end.
pub fn pass_line(input: &mut dyn BufRead) -> std::io::Result<bool> {
    loop {
        let available = input.fill_buf()?;
        if available.is_empty() {
            return Ok(false);
        }
        if let Some(at) = memchr::memchr(b'\n', available) {
            input.consume(at + 1);
            return Ok(true);
        }
        let all = available.len();
        input.consume(all);
    }
}

/// `Read::take(input, limit).read_until(b'\n', buffer)`, with the memchr crate's search: std's
/// `read_until` and `<[u8]>::contains` search byte by byte in aligned words, and were a fifth of
/// the instructions of reading an enveloped log (callgrind, 200,000 lines of the smoke case's
/// kubectl envelope).
fn read_line_within(input: &mut dyn BufRead, buffer: &mut Vec<u8>, limit: u64) -> std::io::Result<usize> {
    let mut read = 0usize;
    loop {
        let available = match input.fill_buf() {
            Ok(available) => available,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if available.is_empty() {
            return Ok(read);
        }
        let room = usize::try_from(limit.saturating_sub(read as u64)).unwrap_or(usize::MAX);
        let window = &available[..available.len().min(room)];
        let (found, used) = match memchr::memchr(b'\n', window) {
            Some(at) => (true, at + 1),
            None => (false, window.len()),
        };
        buffer.extend_from_slice(&window[..used]);
        input.consume(used);
        read += used;
        if found || read as u64 >= limit {
            return Ok(read);
        }
    }
}

pub struct Lines {
    input: Box<dyn BufRead + Send>,
    buffer: Vec<u8>,
    number: u64,
    /// The longest line kept (`SourceSpec::max_line_bytes`).
    cap: usize,
    /// Whether a line past the cap is an error rather than a rejected line (`pairs`).
    paired: bool,
}

impl Lines {
    pub fn new(input: Box<dyn BufRead + Send>, cap: usize) -> Self {
        Lines { input, buffer: Vec::with_capacity(256), number: 0, cap, paired: false }
    }

    /// For a text whose lines come in pairs (redis-cli's field and value lines): a line past the
    /// cap is an error, since passing over one would pair every line after it with the wrong one.
    #[must_use]
    pub fn pairs(self) -> Self {
        Lines { paired: true, ..self }
    }

    /// The next line (with its 1-based number) without its line ending, or `None` at the end. Text that is not UTF-8 or
    /// holds a NUL byte is an error naming the line: it is not a log or a ledger. A line longer than the cap is
    /// counted in `summary` (a line, rejected with its number: `too_long`) and passed over without being held; the
    /// next line is returned instead.
    pub fn next_line(&mut self, path: &Path, summary: &mut InputSummary) -> Result<Option<(u64, &str)>> {
        loop {
            self.buffer.clear();
            // The line, its `\r\n` and one byte more: a text past the cap is known without holding more.
            let limit = u64::try_from(self.cap).unwrap_or(u64::MAX).saturating_add(3);
            let read = read_line_within(&mut *self.input, &mut self.buffer, limit)
                .map_err(|source| read_error(path, self.number, source))?;
            if read == 0 {
                return Ok(None);
            }
            self.number += 1;
            let ended = self.buffer.last() == Some(&b'\n');
            while matches!(self.buffer.last(), Some(b'\n' | b'\r')) {
                self.buffer.pop();
            }
            if self.buffer.len() > self.cap || (!ended && read as u64 == limit) {
                if self.paired {
                    return Err(Error::input(
                        path,
                        Some(self.number),
                        format!(
                            "{}: its lines come in field/value pairs, so it cannot be passed over",
                            too_long(self.cap)
                        ),
                    ));
                }
                if !ended {
                    pass_line(&mut self.input).map_err(|source| read_error(path, self.number, source))?;
                }
                summary.lines += 1;
                summary.reject(self.number, too_long(self.cap));
                continue;
            }
            break;
        }
        if memchr::memchr(0, &self.buffer).is_some() {
            return Err(binary(path, self.number));
        }
        std::str::from_utf8(&self.buffer).map(|text| Some((self.number, text))).map_err(|_| binary(path, self.number))
    }
}

/// A small text file read whole (a manifest, a capture record), refused past `max` bytes before
/// more than that is read: a hostile case folder can hold a file of any size under any name.
/// `what` says what the file should be, for the message.
pub fn read_small_text(path: &Path, max: u64, what: &str) -> Result<String> {
    let file = std::fs::File::open(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes).map_err(|source| read_error(path, 0, source))?;
    if bytes.len() as u64 > max {
        return Err(Error::input(path, None, format!("larger than {} KiB: expected {what}", max >> 10)));
    }
    String::from_utf8(bytes)
        .map_err(|_| Error::input(path, None, format!("binary data (not UTF-8 text): expected {what}")))
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

/// `Read::read` of a reader whose `BufRead` side does the work: what its buffer holds, consumed.
pub fn read_through_buffer(reader: &mut impl BufRead, out: &mut [u8]) -> std::io::Result<usize> {
    let available = reader.fill_buf()?;
    let count = available.len().min(out.len());
    out[..count].copy_from_slice(&available[..count]);
    reader.consume(count);
    Ok(count)
}

impl<R: BufRead> Read for Text<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        read_through_buffer(self, out)
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
        read_through_buffer(self, out)
    }
}

/// A failed read after `line` lines: a gzip stream's problem says after which line it stopped,
/// so that the user knows how much of the file was read (and the report would have held).
fn read_error(path: &Path, line: u64, source: std::io::Error) -> Error {
    match crate::ingest::io::gzip::GzipProblem::of(&source) {
        Some(problem) if line == 0 => Error::input(path, None, problem.describe("before its first line")),
        Some(problem) => Error::input(path, None, problem.describe(&format!("after line {line}"))),
        None => Error::Io { path: path.to_path_buf(), source },
    }
}

pub fn binary(path: &Path, line: u64) -> Error {
    Error::input(path, Some(line), "binary data (not UTF-8 text): expected a text export; is this the right file?")
}

/// One line of a JSON Lines file as an object, or an error naming the line and what a record of
/// this file should look like (`expected`, e.g. "one ledger record per line").
pub fn json_object(path: &Path, line: u64, text: &str, expected: &str) -> Result<Map<String, Value>> {
    serde_json::from_str(text).map_err(|error| {
        Error::input(
            path,
            Some(line),
            format!("not a JSON object: {}; expected {expected}", json_problem(&error, text)),
        )
    })
}

/// What is wrong with the JSON text `text` (one line) that serde_json refused with `error`: its
/// message, except for an escape of half a UTF-16 surrogate pair (`\ud800` without the `\udc00`
/// that must follow it, or a `\udc00` alone), which serde_json calls "unexpected end of hex
/// escape" or "lone leading surrogate": said as what it is, with its column (in characters).
pub fn json_problem(error: &serde_json::Error, text: &str) -> String {
    let message = error.to_string();
    if (message.contains("hex escape") || message.contains("surrogate"))
        && let Some((column, escape)) = lone_surrogate(text)
    {
        return format!(
            "an invalid escape at column {column}: '{escape}' is a lone UTF-16 surrogate (half of a pair, without its other half), which no JSON reader can turn into a character"
        );
    }
    message
}

/// The first `\uD800`–`\uDFFF` escape inside a JSON string of `text` that is not a high
/// surrogate followed by a low one: its 1-based column in characters and its text.
fn lone_surrogate(text: &str) -> Option<(usize, &str)> {
    let bytes = text.as_bytes();
    let escape_at = |at: usize| -> Option<u32> {
        let digits = text.get(at + 2..at + 6)?;
        (bytes.get(at..at + 2)? == b"\\u" && digits.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| u32::from_str_radix(digits, 16).ok())
            .flatten()
    };
    let (mut at, mut in_string) = (0, false);
    while at < bytes.len() {
        match bytes[at] {
            b'"' => in_string = !in_string,
            b'\\' if in_string => {
                match escape_at(at) {
                    // A high surrogate and a low one: one character.
                    Some(0xD800..=0xDBFF) if escape_at(at + 6).is_some_and(|low| (0xDC00..=0xDFFF).contains(&low)) => {
                        at += 12;
                        continue;
                    }
                    Some(0xD800..=0xDFFF) => return Some((text[..at].chars().count() + 1, &text[at..at + 6])),
                    _ => {}
                }
                // Any other escape: its backslash and the character after it.
                at += 2;
                continue;
            }
            _ => {}
        }
        at += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_surrogate_escape_is_said_with_its_column() {
        let path = Path::new("app.log");
        for (text, column, escape) in [
            (r#"{"msg":"job \ud800 active"}"#, 13, r"\ud800"),
            (r#"{"msg":"job \ud800x"}"#, 13, r"\ud800"),
            (r#"{"msg":"é \udc00"}"#, 11, r"\udc00"),
            (r#"{"msg":"😀 \ud83d\ude00 then \uDBFF\u0041"}"#, 29, r"\uDBFF"),
        ] {
            let error = json_object(path, 3, text, "one record per line").unwrap_err().to_string();
            assert_eq!(
                error,
                format!(
                    "app.log:3: not a JSON object: an invalid escape at column {column}: '{escape}' is a lone UTF-16 surrogate (half of a pair, without its other half), which no JSON reader can turn into a character; expected one record per line"
                ),
                "{text}"
            );
        }
        // A pair is a character; an escaped backslash before `u` is no escape.
        assert!(json_object(path, 1, r#"{"msg":"\ud83d\ude00 \\ud800"}"#, "x").is_ok());
        // Other errors keep serde_json's message.
        let error = json_object(path, 1, r#"{"msg":"\u12"}"#, "x").unwrap_err().to_string();
        assert!(error.ends_with("not a JSON object: invalid escape at line 1 column 14; expected x"), "{error}");
    }

    #[test]
    fn a_small_text_is_read_whole_up_to_its_limit_and_refused_past_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("capture.json");
        std::fs::write(&path, vec![b'x'; 2048]).unwrap();
        assert_eq!(read_small_text(&path, 2048, "a record").unwrap().len(), 2048, "at the limit: read");
        let error = read_small_text(&path, 2047, "a record").unwrap_err().to_string();
        assert!(error.ends_with("capture.json: larger than 1 KiB: expected a record"), "{error}");
        std::fs::write(&path, b"{\xff}").unwrap();
        let error = read_small_text(&path, 2048, "a record").unwrap_err().to_string();
        assert!(error.ends_with("binary data (not UTF-8 text): expected a record"), "{error}");
    }

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
            let mut lines = Lines::new(Box::new(LineEnds::new(trickle(text, step))), MAX_LINE_BYTES);
            let mut read = Vec::new();
            let mut summary = InputSummary::new("x", "log", "text", None);
            while let Some((number, line)) = lines.next_line(Path::new("x"), &mut summary).unwrap() {
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

    #[test]
    fn a_line_past_the_cap_is_rejected_and_passed_over() {
        let text = format!("a\n{}\nb\r\n{}\r\nc\n{}", "x".repeat(11), "y".repeat(10), "z".repeat(50));
        for step in [1, 3, 4096] {
            let mut lines = Lines::new(Box::new(trickle(text.as_bytes(), step)), 10);
            let mut summary = InputSummary::new("x", "log", "text", None);
            let mut read = Vec::new();
            while let Some((number, line)) = lines.next_line(Path::new("x"), &mut summary).unwrap() {
                read.push((number, line.len()));
            }
            // 10 bytes is the cap: kept, its `\r\n` not counted.
            assert_eq!(read, [(1, 1), (3, 1), (4, 10), (5, 1)], "{step}");
            let rejected: Vec<u64> = summary.rejections.iter().map(|r| r.line).collect();
            assert_eq!((summary.lines, rejected), (2, vec![2, 6]), "{step}");
            assert_eq!(summary.rejections[0].reason, too_long(10));
        }
        // Paired lines (redis-cli replies): an error naming the line.
        let mut lines = Lines::new(Box::new(trickle(text.as_bytes(), 7)), 10).pairs();
        let mut summary = InputSummary::new("x", "log", "text", None);
        lines.next_line(Path::new("x"), &mut summary).unwrap();
        let error = lines.next_line(Path::new("x"), &mut summary).unwrap_err().to_string();
        assert!(error.contains("x:2: line longer than 10 bytes"), "{error}");
    }
}
