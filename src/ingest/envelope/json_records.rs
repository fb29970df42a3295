//! The records of a log store's export that is one JSON document (`aws logs filter-log-events`,
//! an Elasticsearch `_search` response, `gcloud logging read --format=json`), read element by
//! element in bounded memory.
//!
//! Such an export is one value of any size: serde would hold all of it before the first record
//! came out. `Scanner` walks its bytes by hand instead (strings, escapes and brackets, the only
//! things that say where a value ends), follows the keys down to the record array (`events`,
//! `hits.hits`, or the document itself when it is an array), and hands each element's bytes, with
//! the export lines it covers, to the envelope, which parses that one element with serde. What
//! is outside the elements (the brackets, `nextToken`, `took`, `_shards`) becomes ignored lines.
//!
//! The same records saved one per line (`jq -c '.events[]'`) or pretty-printed one after the
//! other (`jq '.events[]'`) are read too: a value at the top of the file that does not lead to
//! the record array is a record itself. So is each element of a top-level array (`jq '.events'`).
//!
//! Lines: each physical line of the export is in exactly one piece. A record covers the lines
//! from the one its first byte is on to the one its last byte is on; a line it shares with the
//! record before it (`}, {` or a whole document on one line, as Elasticsearch answers without
//! `?pretty`) stays the earlier record's, so the later record's `lines` counts only the lines it
//! adds (0 when it begins and ends on the earlier record's last line). A rejected piece holds at
//! least one line, counting its first again when it shares it: a rejection counts as a line of
//! its own. Lines no record touches are ignored, in runs.

use std::collections::VecDeque;
use std::io::BufRead;
use std::path::Path;

use serde_json::{Map, Value};

use super::{Context, Labels, Piece, Record};
use crate::error::{Error, Result};
use crate::ingest::io::lines::too_long;
use crate::model::Moment;

/// What an envelope tells the scanner about its document.
pub struct Shape {
    /// The keys from the top of the document down to the record array: `["events"]`,
    /// `["hits", "hits"]`, or none when the document is the array (gcloud).
    pub path: &'static [&'static str],
    /// Why the lines outside the records are ignored, naming what they hold.
    pub outside: &'static str,
    /// What one record looks like, for the reasons of the rejected ones (`Envelope::example`).
    pub example: &'static str,
}

/// What an envelope reads out of one record: its UTC time, labels and the application's line.
pub struct Read {
    pub at: Option<Moment>,
    pub labels: Labels,
    pub message: String,
}

/// One element parsed: what the envelope made of it, or why it is not a record.
pub type ReadRecord = fn(&Map<String, Value>) -> std::result::Result<Read, String>;

/// The export's pieces, in file order: each element parsed by `read`.
pub fn pieces<'a>(
    input: Box<dyn BufRead + Send>,
    context: Context<'a>,
    shape: &'static Shape,
    read: ReadRecord,
) -> Box<dyn Iterator<Item = Result<Piece>> + Send + 'a> {
    let mut scanner = Scanner::new(shape, context.max_line_bytes);
    let mut input = input;
    let path = context.path;
    let mut done = false;
    Box::new(std::iter::from_fn(move || {
        loop {
            if let Some(out) = scanner.out.pop_front() {
                return Some(out.into_piece(path, shape, read));
            }
            if done {
                return None;
            }
            let available = match input.fill_buf() {
                Ok(available) => available,
                Err(source) => {
                    done = true;
                    let line = scanner.line;
                    return Some(Err(Error::input(path, Some(line), format!("cannot read: {source}"))));
                }
            };
            if available.is_empty() {
                scanner.finish();
                done = true;
                continue;
            }
            let used = scanner.feed(available);
            input.consume(used);
            if scanner.failed {
                done = true;
            }
        }
    }))
}

/// One element parsed by the envelope, or why it is not a record.
fn element(bytes: &[u8], shape: &Shape, read: ReadRecord) -> std::result::Result<Read, String> {
    let expected = |why: String| format!("{why}: expected a record like {}", shape.example);
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(map)) => read(&map).map_err(expected),
        Ok(other) => Err(expected(format!("a JSON {}, not an object", kind(&other)))),
        Err(error) => Err(expected(format!("not JSON ({})", without_position(&error)))),
    }
}

/// serde's message without its ` at line 1 column 9`: that position is inside the element,
/// not the export's, and the piece already names the export's line.
fn without_position(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The field at a dotted `name` (`host.name`), written nested (`{"host": {"name": ..}}`),
/// dotted (`{"host.name": ..}`) or both (`{"kubernetes": {"pod.name": ..}}`): a document store
/// keeps the source as it was sent, and shippers send either.
pub fn field<'v>(object: &'v Map<String, Value>, name: &str) -> Option<&'v Value> {
    if let Some(value) = object.get(name) {
        return Some(value);
    }
    let mut dots = name.match_indices('.').map(|(at, _)| at);
    dots.find_map(|at| match object.get(&name[..at]) {
        Some(Value::Object(inner)) => field(inner, &name[at + 1..]),
        _ => None,
    })
}

/// A label's text: a string as it is, a number (`process.pid`) as written; nothing else.
pub fn label_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

/// A message as the application wrote it: without the one line end a log agent keeps on it
/// (CloudWatch's agent and Docker's `log` field end with the line's `\n`).
pub fn without_line_end(message: &str) -> String {
    let message = message.strip_suffix('\n').unwrap_or(message);
    message.strip_suffix('\r').unwrap_or(message).to_string()
}

/// Milliseconds since 1970 as a moment (`None` outside what a timeline holds).
pub fn epoch_millis(millis: i64) -> Option<Moment> {
    chrono::DateTime::from_timestamp_millis(millis).and_then(|at| Moment::new(at).ok())
}

/// An RFC 3339 time with its offset (`2026-10-06T23:50:00.123456789Z`) as a UTC moment.
pub fn rfc3339(text: &str) -> Option<Moment> {
    chrono::DateTime::parse_from_rfc3339(text).ok().and_then(|at| Moment::new(at.to_utc()).ok())
}

/// Whether `head` starts (after blanks) like a JSON document or JSON line: `{` or `[`.
pub fn looks_like_json(head: &str) -> bool {
    matches!(head.trim_start().as_bytes().first(), Some(b'{' | b'['))
}

/// Whether `head` holds `key` as a JSON key (`"key":`, `"key" :`), followed by a value that
/// starts with one of `starts` (any value when empty).
pub fn has_key(head: &str, key: &str, starts: &[u8]) -> bool {
    let quoted = format!("\"{key}\"");
    head.match_indices(&quoted).any(|(at, _)| {
        let rest = head[at + quoted.len()..].trim_start();
        rest.strip_prefix(':').is_some_and(|value| {
            let value = value.trim_start();
            starts.is_empty() || value.as_bytes().first().is_some_and(|first| starts.contains(first))
        })
    })
}

/// The deepest nesting followed. serde reads an element only to 128 levels, so a deeper one is
/// rejected when it is parsed; past this the scanner itself stops, since each level is a frame
/// it holds.
const MAX_DEPTH: usize = 512;

/// The longest key held while looking for the record array: the keys on its path are short, so
/// a longer one is simply not one of them.
const MAX_KEY: usize = 64;

/// What the scanner found, before the envelope reads the elements.
#[derive(Debug, PartialEq)]
enum Out {
    Piece(Piece),
    /// `first_new`: the first line it adds, where it is cited if it is rejected.
    Element {
        line: u64,
        lines: u64,
        first_new: u64,
        bytes: Vec<u8>,
    },
    Fatal {
        line: u64,
        message: String,
    },
}

impl Out {
    fn into_piece(self, path: &Path, shape: &Shape, read: ReadRecord) -> Result<Piece> {
        match self {
            Out::Piece(piece) => Ok(piece),
            Out::Element { line, lines, first_new, bytes } => Ok(match element(&bytes, shape, read) {
                Ok(Read { at, labels, message }) => Piece::Record(Record { line, lines, at, labels, message }),
                // As `Scanner::claim_rejected`.
                Err(reason) if lines == 0 => Piece::Rejected { line, lines: 0, reason },
                Err(reason) => Piece::Rejected { line: first_new, lines, reason },
            }),
            Out::Fatal { line, message } => Err(Error::input(path, Some(line), message)),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Value,
    ValueOrEnd,
    Key,
    KeyOrEnd,
    Colon,
    CommaOrEnd,
}

#[derive(Debug)]
struct Frame {
    array: bool,
    expect: Expect,
    /// How many keys of the path lead here (`None`: off the path).
    matched: Option<usize>,
    /// Whether the key just read is the path's next one (its value goes on down the path).
    key_on_path: bool,
    /// Whether this is the record array: its elements are the records.
    records: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lex {
    Normal,
    Str {
        key: bool,
    },
    Escape {
        key: bool,
    },
    Scalar,
    /// Passing over the rest of a line that was rejected.
    SkipLine,
}

/// The bytes of the value being kept: an element of the record array, or a value at the top
/// of the file that may be a record (`candidate`: until it turns out to hold the array).
struct Capture {
    start: u64,
    /// The stack's depth outside the value: it ends when the stack is back to this.
    depth: usize,
    candidate: bool,
    bytes: Vec<u8>,
    /// Longer than the cap: no more bytes kept, the record is rejected when it ends.
    over: bool,
}

struct Scanner {
    shape: &'static Shape,
    cap: usize,
    stack: Vec<Frame>,
    lex: Lex,
    key: Vec<u8>,
    capture: Option<Capture>,
    /// The line of the byte being read (1-based).
    line: u64,
    at_line_start: bool,
    /// The first line no piece holds yet.
    unclaimed: u64,
    /// The first unclaimed line with something on it besides blanks.
    text_from: Option<u64>,
    /// The line the value at the top of the file being read starts on.
    top_value: Option<u64>,
    /// Whether that value holds the record array (then broken JSON stops the reading: where
    /// its records go on cannot be known).
    document: bool,
    out: VecDeque<Out>,
    failed: bool,
}

fn is_blank(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_scalar(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'+' | b'-')
}

impl Scanner {
    fn new(shape: &'static Shape, cap: usize) -> Self {
        Scanner {
            shape,
            cap,
            stack: Vec::new(),
            lex: Lex::Normal,
            key: Vec::new(),
            capture: None,
            line: 1,
            at_line_start: true,
            unclaimed: 1,
            text_from: None,
            top_value: None,
            document: false,
            out: VecDeque::new(),
            failed: false,
        }
    }

    /// Reads `bytes` until a piece is ready (or an error); returns how many were read.
    fn feed(&mut self, bytes: &[u8]) -> usize {
        for (at, &byte) in bytes.iter().enumerate() {
            if byte == 0 {
                self.fatal("binary data (a NUL byte): expected a JSON export of a log store".into());
                return at + 1;
            }
            if !is_blank(byte) && self.line >= self.unclaimed && self.text_from.is_none() {
                self.text_from = Some(self.line);
            }
            self.byte(byte);
            if byte == b'\n' {
                self.line += 1;
                self.at_line_start = true;
            } else {
                self.at_line_start = false;
            }
            if self.failed || !self.out.is_empty() {
                return at + 1;
            }
        }
        bytes.len()
    }

    fn byte(&mut self, byte: u8) {
        match self.lex {
            Lex::SkipLine => {
                if byte == b'\n' {
                    self.lex = Lex::Normal;
                }
                return;
            }
            Lex::Str { key } => {
                if byte == b'\n' {
                    return self.broken("a string is not closed before its line ends", byte);
                }
                self.keep(byte);
                match byte {
                    b'\\' => self.lex = Lex::Escape { key },
                    b'"' => {
                        self.lex = Lex::Normal;
                        if key {
                            self.key_done();
                        } else {
                            self.value_done();
                        }
                    }
                    _ if key => self.key_byte(byte),
                    _ => {}
                }
                return;
            }
            Lex::Escape { key } => {
                if byte == b'\n' {
                    return self.broken("a string is not closed before its line ends", byte);
                }
                self.keep(byte);
                if key {
                    // An escaped key is never one of the path's: keep it unequal.
                    self.key_byte(b'\\');
                }
                self.lex = Lex::Str { key };
                return;
            }
            Lex::Scalar => {
                if is_scalar(byte) {
                    self.keep(byte);
                    return;
                }
                self.lex = Lex::Normal;
                self.value_done();
            }
            Lex::Normal => {}
        }
        self.normal(byte);
    }

    fn expect(&self) -> Option<Expect> {
        self.stack.last().map(|frame| frame.expect)
    }

    fn value_may_start(&self) -> bool {
        matches!(self.expect(), None | Some(Expect::Value | Expect::ValueOrEnd))
    }

    fn normal(&mut self, byte: u8) {
        match byte {
            b' ' | b'\t' | b'\r' | b'\n' => self.keep(byte),
            b'{' | b'[' => {
                if !self.value_may_start() {
                    return self.broken(self.unexpected(byte), byte);
                }
                if self.stack.len() >= MAX_DEPTH {
                    return self.broken("nested deeper than 512 levels", byte);
                }
                let array = byte == b'[';
                self.start_value(Some(array));
                self.keep(byte);
            }
            b'}' | b']' => {
                let array = byte == b']';
                let closes = match self.stack.last() {
                    Some(frame) if frame.array == array => match frame.expect {
                        Expect::CommaOrEnd => true,
                        Expect::ValueOrEnd => array,
                        Expect::KeyOrEnd => !array,
                        _ => false,
                    },
                    _ => false,
                };
                if !closes {
                    return self.broken(self.unexpected(byte), byte);
                }
                self.keep(byte);
                self.stack.pop();
                self.value_done();
            }
            b',' => match self.stack.last_mut() {
                Some(frame) if frame.expect == Expect::CommaOrEnd => {
                    frame.expect = if frame.array { Expect::Value } else { Expect::Key };
                    self.keep(byte);
                }
                _ => self.broken(self.unexpected(byte), byte),
            },
            b':' => match self.stack.last_mut() {
                Some(frame) if frame.expect == Expect::Colon => {
                    frame.expect = Expect::Value;
                    self.keep(byte);
                }
                _ => self.broken(self.unexpected(byte), byte),
            },
            b'"' => {
                if matches!(self.expect(), Some(Expect::Key | Expect::KeyOrEnd)) {
                    self.keep(byte);
                    self.key.clear();
                    self.lex = Lex::Str { key: true };
                } else if self.value_may_start() {
                    self.start_value(None);
                    self.keep(byte);
                    self.lex = Lex::Str { key: false };
                } else {
                    self.broken(self.unexpected(byte), byte);
                }
            }
            b'-' | b'0'..=b'9' | b't' | b'f' | b'n' if self.value_may_start() => {
                self.start_value(None);
                self.keep(byte);
                self.lex = Lex::Scalar;
            }
            _ => self.broken(self.unexpected(byte), byte),
        }
    }

    fn unexpected(&self, byte: u8) -> String {
        let wanted = match self.expect() {
            None => "a JSON value",
            Some(Expect::Value) => "a value",
            Some(Expect::ValueOrEnd) => "a value or `]`",
            Some(Expect::Key) => "a key",
            Some(Expect::KeyOrEnd) => "a key or `}`",
            Some(Expect::Colon) => "`:`",
            Some(Expect::CommaOrEnd) if self.stack.last().is_some_and(|frame| frame.array) => "`,` or `]`",
            Some(Expect::CommaOrEnd) => "`,` or `}`",
        };
        let found = if byte.is_ascii_graphic() { format!("`{}`", byte as char) } else { format!("byte 0x{byte:02x}") };
        format!("expected {wanted}, found {found}")
    }

    /// A value starts at this byte: `Some(array)` for a container (its frame is pushed here),
    /// `None` for a string or a scalar.
    fn start_value(&mut self, container: Option<bool>) {
        let len = self.shape.path.len();
        let (matched, records) = match self.stack.last() {
            None => {
                self.top_value = Some(self.line);
                self.document = false;
                match container {
                    // A top-level array is the record array: the document itself (gcloud), or
                    // `jq '.events'`.
                    Some(true) => (None, true),
                    Some(false) if len > 0 => {
                        self.begin_capture(true);
                        (Some(0), false)
                    }
                    _ => {
                        self.begin_capture(false);
                        (None, false)
                    }
                }
            }
            Some(parent) => {
                let matched = match (parent.array, parent.matched) {
                    (false, Some(k)) if parent.key_on_path => Some(k + 1),
                    _ => None,
                };
                if parent.records && self.capture.is_none() {
                    self.begin_capture(false);
                }
                (matched, container == Some(true) && matched == Some(len))
            }
        };
        if records {
            self.document = true;
            if self.capture.as_ref().is_some_and(|capture| capture.candidate) {
                // The value at the top holds the record array: it is the document, not a record.
                self.capture = None;
            }
        }
        if let Some(array) = container {
            let expect = if array { Expect::ValueOrEnd } else { Expect::KeyOrEnd };
            self.stack.push(Frame { array, expect, matched, key_on_path: false, records });
        }
    }

    fn begin_capture(&mut self, candidate: bool) {
        self.capture =
            Some(Capture { start: self.line, depth: self.stack.len(), candidate, bytes: Vec::new(), over: false });
    }

    fn keep(&mut self, byte: u8) {
        if let Some(capture) = &mut self.capture {
            if capture.over {
                return;
            }
            if capture.bytes.len() >= self.cap {
                capture.over = true;
                capture.bytes = Vec::new();
            } else {
                capture.bytes.push(byte);
            }
        }
    }

    fn key_byte(&mut self, byte: u8) {
        if self.key.len() <= MAX_KEY {
            self.key.push(byte);
        }
    }

    fn key_done(&mut self) {
        let path = self.shape.path;
        let key = std::mem::take(&mut self.key);
        if let Some(frame) = self.stack.last_mut() {
            frame.key_on_path = frame.matched.is_some_and(|k| k < path.len() && path[k].as_bytes() == key.as_slice());
            frame.expect = Expect::Colon;
        }
        self.key = key;
    }

    /// The value being read has ended (its last byte kept).
    fn value_done(&mut self) {
        if self.capture.as_ref().is_some_and(|capture| capture.depth == self.stack.len()) {
            let capture = self.capture.take().expect("checked just above");
            let first_new = capture.start.max(self.unclaimed);
            let out = if capture.over {
                let (line, lines) = self.claim_rejected(capture.start, self.line);
                Out::Piece(Piece::Rejected { line, lines, reason: too_long(self.cap) })
            } else {
                let (line, lines) = self.claim(capture.start, self.line);
                Out::Element { line, lines, first_new, bytes: capture.bytes }
            };
            self.out.push_back(out);
        }
        if let Some(frame) = self.stack.last_mut() {
            frame.expect = Expect::CommaOrEnd;
        } else {
            self.top_value = None;
            self.document = false;
        }
    }

    /// Gives the lines `start..=end` to a piece about to be pushed, after an ignored piece for
    /// the lines before it that none holds; returns the piece's `line` and `lines`.
    fn claim(&mut self, start: u64, end: u64) -> (u64, u64) {
        if start > self.unclaimed {
            let text = self.text_from.is_some_and(|first| first < start);
            self.ignored(self.unclaimed, start - self.unclaimed, text);
        }
        let lines = (end + 1).saturating_sub(start.max(self.unclaimed));
        self.unclaimed = self.unclaimed.max(end + 1);
        self.text_from = None;
        (start, lines)
    }

    /// `claim` for a rejected piece. It starts on the first line it adds; when it adds none (it
    /// begins and ends on the line the piece before holds), it holds no line of its own and is
    /// named at that line (`unwrap` lists it without counting the line again).
    fn claim_rejected(&mut self, start: u64, end: u64) -> (u64, u64) {
        let first_new = start.max(self.unclaimed);
        let (line, lines) = self.claim(start, end);
        if lines == 0 { (line, 0) } else { (first_new, lines) }
    }

    fn ignored(&mut self, line: u64, lines: u64, text: bool) {
        let reason = if text { self.shape.outside } else { "blank line" };
        self.out.push_back(Out::Piece(Piece::Ignored { line, lines, reason }));
    }

    /// Bytes that are not JSON at `byte`. Inside the document that holds the record array,
    /// where its records go on cannot be known: the reading stops there. A value at the top
    /// (a record saved one per line) is rejected through the end of its line, and the reading
    /// goes on at the next.
    fn broken(&mut self, what: impl Into<String>, byte: u8) {
        let what = what.into();
        if self.document {
            return self.fatal(format!(
                "{what}: the export is not JSON from here, so where its records go on cannot be found"
            ));
        }
        let start = self.top_value.unwrap_or(self.line).min(self.line);
        let (line, lines) = self.claim_rejected(start, self.line);
        let reason = format!("not JSON ({what}): expected a record like {}", self.shape.example);
        self.out.push_back(Out::Piece(Piece::Rejected { line, lines, reason }));
        self.stack.clear();
        self.capture = None;
        self.top_value = None;
        self.lex = if byte == b'\n' { Lex::Normal } else { Lex::SkipLine };
    }

    fn fatal(&mut self, message: String) {
        self.out.push_back(Out::Fatal { line: self.line, message });
        self.failed = true;
    }

    /// The end of the input: what was left open is rejected, the lines after the last piece are
    /// ignored.
    fn finish(&mut self) {
        if self.lex == Lex::Scalar {
            self.lex = Lex::Normal;
            self.value_done();
        }
        let total = if self.at_line_start { self.line - 1 } else { self.line };
        if self.top_value.is_some() && self.lex != Lex::SkipLine {
            if let Some(capture) = self.capture.take() {
                let (line, lines) = self.claim_rejected(capture.start, total);
                let reason = "the file ends inside this record: is the export truncated?".to_string();
                self.out.push_back(Out::Piece(Piece::Rejected { line, lines, reason }));
            } else {
                let (line, lines) = self.claim_rejected(total.max(1), total);
                let reason = "the file ends before the document's closing brackets: is the export truncated? \
                              (the records before this line were read)"
                    .to_string();
                self.out.push_back(Out::Piece(Piece::Rejected { line, lines, reason }));
            }
        }
        if total >= self.unclaimed {
            let text = self.text_from.is_some();
            self.ignored(self.unclaimed, total + 1 - self.unclaimed, text);
            self.unclaimed = total + 1;
        }
    }
}

/// For the envelopes' tests: `fixtures/envelopes/<file>` is the reference incident's
/// `server.log` wrapped whole. Each line of the log is one record, in the log's order or
/// reversed (`newest_first`), every line of the export is in one piece, and each envelope time
/// is the line's own time (naive, in Asia/Seoul) plus 0 to 30 ms, the shipper's read.
#[cfg(test)]
pub fn check_reference_fixture(envelope: &dyn super::Envelope, file: &str, newest_first: bool) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let log = std::fs::read_to_string(root.join("fixtures/incident-2026-10-07/server.log")).unwrap();
    let path = root.join("fixtures/envelopes").join(file);
    let export = std::fs::read_to_string(&path).unwrap();
    let head = &export[..export.len().min(64 << 10)];
    assert!(envelope.sniff(head), "{file} sniffs as {}", envelope.name());
    for other in super::ENVELOPES.iter().map(|other| other.0).filter(|other| other.name() != envelope.name()) {
        if ["cloudwatch-json", "elasticsearch-json", "gcloud-json"].contains(&other.name()) {
            assert!(!other.sniff(head), "{file} does not sniff as {}", other.name());
        }
    }
    let context = Context { path: &path, max_line_bytes: 1 << 20 };
    let pieces: Vec<Piece> =
        envelope.pieces(Box::new(std::io::Cursor::new(export.clone())), context).map(|piece| piece.unwrap()).collect();
    let lines: u64 = pieces
        .iter()
        .map(|piece| match piece {
            Piece::Record(record) => record.lines,
            Piece::Ignored { lines, .. } | Piece::Rejected { lines, .. } => *lines,
        })
        .sum();
    assert_eq!(lines, export.lines().count() as u64, "every line of {file} in one piece");
    assert!(!pieces.iter().any(|piece| matches!(piece, Piece::Rejected { .. })), "{file}: nothing rejected");
    let mut records: Vec<&Record> = pieces
        .iter()
        .filter_map(|piece| match piece {
            Piece::Record(record) => Some(record),
            _ => None,
        })
        .collect();
    if newest_first {
        records.reverse();
    }
    let log: Vec<&str> = log.lines().collect();
    assert_eq!(records.iter().map(|record| record.message.as_str()).collect::<Vec<_>>(), log);
    let seoul = chrono::FixedOffset::east_opt(9 * 3600).unwrap();
    for record in records {
        let naive = chrono::NaiveDateTime::parse_from_str(&record.message[..23], "%Y-%m-%d %H:%M:%S%.3f").unwrap();
        let written = naive.and_local_timezone(seoul).unwrap().to_utc();
        let lag = record.at.expect("an envelope time").utc() - written;
        assert!(
            lag > chrono::TimeDelta::zero() && lag <= chrono::TimeDelta::milliseconds(30),
            "{lag} on line {}",
            record.line
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static EVENTS: Shape = Shape { path: &["events"], outside: "outside the events", example: r#"{"message": "x"}"# };
    static HITS: Shape = Shape { path: &["hits", "hits"], outside: "outside the hits", example: r#"{"message": "x"}"# };
    static TOP: Shape = Shape { path: &[], outside: "outside the array", example: r#"{"message": "x"}"# };

    fn message(object: &Map<String, Value>) -> std::result::Result<Read, String> {
        match object.get("message") {
            Some(Value::String(text)) => Ok(Read { at: None, labels: Labels::default(), message: text.clone() }),
            _ => Err("no `message`".into()),
        }
    }

    fn run_capped(shape: &'static Shape, text: &[u8], cap: usize) -> Vec<Result<Piece>> {
        let context = Context { path: Path::new("export.json"), max_line_bytes: cap };
        pieces(Box::new(std::io::Cursor::new(text.to_vec())), context, shape, message).collect()
    }

    fn run(shape: &'static Shape, text: &str) -> Vec<Piece> {
        run_capped(shape, text.as_bytes(), 1 << 20).into_iter().map(|piece| piece.expect("no error")).collect()
    }

    fn line_count(text: &[u8]) -> u64 {
        text.split(|&byte| byte == b'\n').count() as u64 - u64::from(text.ends_with(b"\n") || text.is_empty())
    }

    fn lines_of(piece: &Piece) -> (u64, u64) {
        match piece {
            Piece::Record(record) => (record.line, record.lines),
            Piece::Ignored { line, lines, .. } | Piece::Rejected { line, lines, .. } => (*line, *lines),
        }
    }

    /// Every line in exactly one piece, in order: a piece starts on the first line no piece
    /// holds, or (a record) on the last one held, a line it shares with the piece before; a
    /// rejected piece may share that last line (`claim_rejected`), and then holds no line of its own.
    fn assert_accounted(text: &[u8], pieces: &[Piece]) {
        let mut next = 1;
        for piece in pieces {
            let (line, lines) = lines_of(piece);
            let shares = line + 1 == next;
            match piece {
                Piece::Rejected { .. } if shares => assert_eq!(lines, 0, "{piece:?}: {pieces:#?}"),
                Piece::Rejected { .. } | Piece::Ignored { .. } => {
                    assert!(line == next && lines > 0, "{piece:?} does not start line {next}: {pieces:#?}");
                    next += lines;
                }
                Piece::Record(_) => {
                    assert!(line == next || shares, "{piece:?} does not follow line {}: {pieces:#?}", next - 1);
                    next += lines;
                }
            }
        }
        assert_eq!(next - 1, line_count(text), "{pieces:#?}");
    }

    fn messages(pieces: &[Piece]) -> Vec<(u64, u64, &str)> {
        pieces
            .iter()
            .filter_map(|piece| match piece {
                Piece::Record(record) => Some((record.line, record.lines, record.message.as_str())),
                _ => None,
            })
            .collect()
    }

    const PRETTY: &str = r#"{
    "events": [
        {
            "logStreamName": "i-0abc",
            "message": "one"
        },
        {
            "message": "two \"}]\" [{ \\"
        }
    ],
    "searchedLogStreams": [],
    "nextToken": "Bxk"
}
"#;

    #[test]
    fn pretty_document_gives_each_element_with_its_lines_and_ignores_the_rest() {
        let pieces = run(&EVENTS, PRETTY);
        assert_eq!(messages(&pieces), vec![(3, 4, "one"), (7, 3, "two \"}]\" [{ \\")]);
        assert_eq!(pieces[0], Piece::Ignored { line: 1, lines: 2, reason: "outside the events" });
        assert_eq!(pieces.last(), Some(&Piece::Ignored { line: 10, lines: 4, reason: "outside the events" }));
        assert_accounted(PRETTY.as_bytes(), &pieces);
    }

    #[test]
    fn a_document_on_one_line_gives_its_line_to_the_first_record() {
        let text = r#"{"took":3,"hits":{"total":{"value":2},"hits":[{"message":"a"},{"message":"b"}]},"_shards":{}}"#;
        let pieces = run(&HITS, text);
        assert_eq!(messages(&pieces), vec![(1, 1, "a"), (1, 0, "b")]);
        assert_eq!(pieces.len(), 2);
        assert_accounted(text.as_bytes(), &pieces);
    }

    #[test]
    fn nested_path_with_spaced_colons_as_elasticsearch_pretty_prints() {
        let text = "{\n  \"took\" : 5,\n  \"hits\" : {\n    \"total\" : { \"value\" : 1 },\n    \"hits\" : [\n      {\n        \"message\" : \"x\"\n      }\n    ]\n  }\n}\n";
        let pieces = run(&HITS, text);
        assert_eq!(messages(&pieces), vec![(6, 3, "x")]);
        assert_accounted(text.as_bytes(), &pieces);
    }

    #[test]
    fn a_key_named_like_the_path_elsewhere_is_not_the_record_array() {
        // `hits` inside `_shards` is off the path: its elements are not records.
        let text = r#"{"_shards":{"hits":[{"message":"no"}]},"hits":{"hits":[{"message":"yes"}]}}"#;
        assert_eq!(messages(&run(&HITS, text)), vec![(1, 1, "yes")]);
    }

    #[test]
    fn json_lines_and_concatenated_pretty_values_are_records_themselves() {
        let text = "{\"message\":\"a\"}\n\n{\"message\":\"b\"}\n{\n  \"message\": \"c\"\n}\n";
        let pieces = run(&EVENTS, text);
        assert_eq!(messages(&pieces), vec![(1, 1, "a"), (3, 1, "b"), (4, 3, "c")]);
        assert_eq!(pieces[1], Piece::Ignored { line: 2, lines: 1, reason: "blank line" });
        assert_accounted(text.as_bytes(), &pieces);
    }

    #[test]
    fn a_top_level_array_is_the_record_array_for_any_path() {
        let text = "[\n  {\"message\": \"a\"},\n  {\"message\": \"b\"}\n]\n";
        for shape in [&EVENTS, &TOP] {
            let pieces = run(shape, text);
            assert_eq!(messages(&pieces), vec![(2, 1, "a"), (3, 1, "b")]);
            assert_accounted(text.as_bytes(), &pieces);
        }
    }

    #[test]
    fn an_element_that_is_not_a_record_is_rejected_with_what_was_expected() {
        let text = "[\n  42,\n  {\"other\": 1},\n  {\"message\": \"ok\"}\n]\n";
        let pieces = run(&TOP, text);
        let reasons: Vec<&str> = pieces
            .iter()
            .filter_map(|piece| match piece {
                Piece::Rejected { reason, .. } => Some(reason.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            reasons,
            vec![
                r#"a JSON number, not an object: expected a record like {"message": "x"}"#,
                r#"no `message`: expected a record like {"message": "x"}"#
            ]
        );
        assert_eq!(messages(&pieces), vec![(4, 1, "ok")]);
        assert_accounted(text.as_bytes(), &pieces);
    }

    #[test]
    fn a_truncated_document_keeps_the_records_before_and_rejects_the_rest() {
        // Cut inside a record.
        let cut = &PRETTY[..PRETTY.find("\"two").unwrap() + 6];
        let pieces = run(&EVENTS, cut);
        assert_eq!(messages(&pieces), vec![(3, 4, "one")]);
        assert!(
            matches!(pieces.last(), Some(Piece::Rejected { line: 7, lines: 2, reason }) if reason.contains("truncated"))
        );
        assert_accounted(cut.as_bytes(), &pieces);
        // Cut between records: the last line is the record's, the rejection holds none of its own.
        let cut = &PRETTY[..PRETTY.find("        {\n            \"message\": \"two").unwrap()];
        let pieces = run(&EVENTS, cut);
        assert_eq!(messages(&pieces), vec![(3, 4, "one")]);
        assert!(
            matches!(pieces.last(), Some(Piece::Rejected { line: 6, lines: 0, reason }) if reason.contains("closing brackets"))
        );
        assert_accounted(cut.as_bytes(), &pieces);
    }

    #[test]
    fn unbalanced_brackets_in_the_document_stop_the_reading_at_their_line() {
        let text = "{\"events\": [\n {\"message\": \"a\"},\n {\"message\": \"b\"]\n]}\n";
        let pieces = run_capped(&EVENTS, text.as_bytes(), 1 << 20);
        assert!(matches!(&pieces[1], Ok(Piece::Record(record)) if record.message == "a"));
        let error = pieces.last().unwrap().as_ref().unwrap_err().to_string();
        assert!(error.contains("export.json:3") && error.contains("expected `,` or `}`, found `]`"), "{error}");
    }

    #[test]
    fn a_broken_json_line_is_rejected_and_the_next_line_is_read() {
        let text = "{\"message\": \"a\"}\n{\"message\": \"cut\n{\"message\": \"b\"}\nhello world\n{\"message\": \"c\"}";
        let pieces = run(&EVENTS, text);
        assert_eq!(messages(&pieces), vec![(1, 1, "a"), (3, 1, "b"), (5, 1, "c")]);
        assert!(
            matches!(&pieces[1], Piece::Rejected { line: 2, lines: 1, reason } if reason.contains("not closed before its line ends"))
        );
        assert!(matches!(&pieces[3], Piece::Rejected { line: 4, lines: 1, reason } if reason.contains("found `h`")));
        assert_accounted(text.as_bytes(), &pieces);
    }

    #[test]
    fn deep_nesting_is_refused_without_a_panic() {
        let deep = "[".repeat(100_000);
        let pieces = run_capped(&EVENTS, deep.as_bytes(), 1 << 20);
        assert!(pieces.last().unwrap().as_ref().unwrap_err().to_string().contains("nested deeper than 512"));
        // Within serde's limit for the scanner but past serde's own: rejected when parsed.
        let element = format!("{{\"events\": [{}{}]}}", "[".repeat(200), "]".repeat(200));
        let pieces = run(&EVENTS, &element);
        assert!(
            matches!(&pieces[0], Piece::Rejected { reason, .. } if reason.contains("recursion limit")),
            "{pieces:?}"
        );
        // A record line nested too deep is rejected and the next line read.
        let text = format!("{{\"a\": {}\n{{\"message\": \"b\"}}\n", "[".repeat(600));
        let pieces = run(&EVENTS, &text);
        assert_eq!(messages(&pieces), vec![(2, 1, "b")]);
    }

    #[test]
    fn an_element_past_the_cap_is_rejected_and_passed_over() {
        let long = "x".repeat(5000);
        let text = format!("{{\"events\": [\n{{\"message\": \"{long}\"}},\n{{\"message\": \"short\"}}\n]}}\n");
        let pieces: Vec<Piece> = run_capped(&EVENTS, text.as_bytes(), 100).into_iter().map(|p| p.unwrap()).collect();
        assert_eq!(pieces[1], Piece::Rejected { line: 2, lines: 1, reason: too_long(100) });
        assert_eq!(messages(&pieces), vec![(3, 1, "short")]);
        assert_accounted(text.as_bytes(), &pieces);
        // The same as a JSON line.
        let text = format!("{{\"message\": \"{long}\"}}\n{{\"message\": \"short\"}}\n");
        let pieces: Vec<Piece> = run_capped(&EVENTS, text.as_bytes(), 100).into_iter().map(|p| p.unwrap()).collect();
        assert_eq!(pieces[0], Piece::Rejected { line: 1, lines: 1, reason: too_long(100) });
        assert_eq!(messages(&pieces), vec![(2, 1, "short")]);
    }

    #[test]
    fn a_nul_byte_is_binary_data_at_its_line() {
        let pieces = run_capped(&EVENTS, b"{\"events\": [\n\0]}", 1 << 20);
        let error = pieces.last().unwrap().as_ref().unwrap_err().to_string();
        assert!(error.contains("export.json:2") && error.contains("binary"), "{error}");
    }

    #[test]
    fn hostile_bytes_never_panic_and_every_line_is_accounted_for() {
        // JSON's own marks, shuffled: whatever comes out, no panic, and when the reading ends
        // without an error the pieces hold every line once.
        let alphabet = b"{}[]\",:\\ \n\tabn0-1\"\"eventsmessage";
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        for round in 0..3000 {
            let mut text = Vec::new();
            if round % 3 == 0 {
                text.extend_from_slice(b"{\"events\": [");
            }
            let length = (round % 97) + 1;
            for _ in 0..length {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                text.push(alphabet[usize::try_from(state % alphabet.len() as u64).unwrap()]);
            }
            for shape in [&EVENTS, &HITS, &TOP] {
                let pieces = run_capped(shape, &text, 16);
                if pieces.iter().all(Result::is_ok) {
                    let pieces: Vec<Piece> = pieces.into_iter().map(|piece| piece.unwrap()).collect();
                    assert_accounted(&text, &pieces);
                }
            }
        }
    }

    #[test]
    fn fields_are_found_nested_dotted_or_mixed() {
        let object: Map<String, Value> = serde_json::from_str(
            r#"{"host": {"name": "a"}, "kubernetes.pod.name": "p", "kubernetes": {"namespace": "n", "container.name": "c"}}"#,
        )
        .unwrap();
        assert_eq!(field(&object, "host.name"), Some(&Value::from("a")));
        assert_eq!(field(&object, "kubernetes.pod.name"), Some(&Value::from("p")));
        assert_eq!(field(&object, "kubernetes.namespace"), Some(&Value::from("n")));
        assert_eq!(field(&object, "kubernetes.container.name"), Some(&Value::from("c")));
        assert_eq!(field(&object, "host.hostname"), None);
    }
}

#[cfg(test)]
mod sniffing {
    use super::super::{
        Envelope, cloudwatch_json::CloudwatchJson, elasticsearch_json::ElasticsearchJson, gcloud_json::GcloudJson,
    };

    /// The other envelopes' shapes, as their tools write them: none is a log store's JSON export.
    const OTHERS: &[&str] = &[
        // kubectl logs --timestamps, with a JSON app line inside
        "2026-10-06T23:50:00.004123456Z {\"level\":30,\"time\":1791330600000,\"msg\":\"started\",\"timestamp\":1,\"ingestionTime\":2,\"message\":\"m\"}\n",
        // the kubelet's CRI file
        "2026-10-06T23:50:00.004123456Z stdout F 2026-10-07 08:50:00.000 INFO  [main] started\n",
        // journalctl -o json
        "{\"__CURSOR\":\"s=1\",\"__REALTIME_TIMESTAMP\":\"1791330600004123\",\"_HOSTNAME\":\"web-1\",\"_PID\":\"41877\",\"MESSAGE\":\"2026-10-07 08:50:00.000 INFO  [main] started\"}\n",
        // logcli query --output=jsonl
        "{\"labels\":{\"app\":\"review\",\"pod\":\"web-1\"},\"line\":\"2026-10-07 08:50:00.000 INFO  [main] started\",\"timestamp\":\"2026-10-06T23:50:00.004123456Z\"}\n",
        // a Logs Insights CSV and aws logs tail
        "@timestamp,@message\n2026-10-06 23:50:00.004,2026-10-07 08:50:00.000 INFO  [main] started\n",
        "2026-10-06T23:50:00.004000+00:00 i-0abc 2026-10-07 08:50:00.000 INFO  [main] started\n",
        // pino and winston app logs
        "{\"level\":30,\"time\":1791330600000,\"pid\":41877,\"hostname\":\"web-1\",\"msg\":\"started\"}\n",
        "{\"level\":\"info\",\"message\":\"started\",\"timestamp\":\"2026-10-06T23:50:00.004Z\"}\n",
    ];

    #[test]
    fn no_other_envelope_or_app_log_sniffs_as_a_log_stores_json() {
        let ours: [&dyn Envelope; 3] = [&CloudwatchJson, &ElasticsearchJson, &GcloudJson];
        for envelope in ours {
            for other in OTHERS {
                assert!(!envelope.sniff(other), "{} sniffs {other}", envelope.name());
            }
        }
    }
}
