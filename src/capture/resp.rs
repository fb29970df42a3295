//! Redis' replies read off the connection (RESP2, and RESP3's types), with a ceiling on what one
//! reply may make us hold.
//!
//! Why not the client crate's parser: it takes a bulk string's length from its header and reads
//! that many bytes before it looks at anything else, and reads a simple string up to a CRLF that
//! may never come, so a server that says `$100000000000` or streams bytes without a line end makes
//! the process grow until it is killed (issue 34). Here every reply has a budget (`--max-reply-
//! bytes`): the bytes it carries plus the size of each item we keep for it. A header that asks for
//! more than what is left is refused before a byte of its body is read; a line (a simple string,
//! an error, a number) is at most `MAX_LINE` bytes; arrays are nested at most `MAX_DEPTH` deep
//! (the replies `capture` reads nest 3 deep). What is kept is at most the budget, whatever the
//! server sends.

use std::io::{BufRead, ErrorKind, Read};

/// The longest line of a reply: a simple string, an error, an integer, a double, a big number or
/// a header. Redis' own are short (`+OK`, `+hash`, `-WRONGTYPE ...`).
pub const MAX_LINE: usize = 64 << 10;

/// Arrays, maps and sets within one another, at most. XINFO STREAM's `first-entry` is 3 deep.
pub const MAX_DEPTH: usize = 16;

/// What each item of an aggregate costs the budget besides its bytes: the memory it takes to hold.
const ITEM_COST: u64 = std::mem::size_of::<Reply>() as u64;

/// One reply, as the server sent it. Texts stay bytes until a shape (`shape.rs`) says what they
/// are: a key, a job hash's field, a stream id.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// `$-1`, `*-1` (RESP2) or `_` (RESP3).
    Nil,
    /// `+...`: a status (`OK`) or a short text (`TYPE`'s answer).
    Simple(Vec<u8>),
    /// `-...` or RESP3's `!<len>`: the server refused the command.
    Error(Vec<u8>),
    /// `:<n>`.
    Int(i64),
    /// `$<len>`, and RESP3's `=<len>` (verbatim text: its `txt:` prefix left out).
    Bulk(Vec<u8>),
    /// `*<n>`, and RESP3's `~<n>` (a set) and `><n>` (a push).
    Array(Vec<Reply>),
    /// RESP3's `%<n>`: n pairs.
    Map(Vec<(Reply, Reply)>),
    /// RESP3's `,` (as written), `#t`/`#f`, and `(` (a big number, as written).
    Double(String),
    Boolean(bool),
    BigNumber(String),
}

impl Reply {
    /// What this reply is, for a message saying what was expected instead: `an integer (42)`.
    pub fn kind(&self) -> String {
        match self {
            Reply::Nil => "nil".into(),
            Reply::Simple(text) => format!("a simple string ('{}')", preview(text)),
            Reply::Error(text) => format!("an error reply ('{}')", preview(text)),
            Reply::Int(n) => format!("an integer ({n})"),
            Reply::Bulk(bytes) => format!("a bulk string of {} bytes ('{}')", bytes.len(), preview(bytes)),
            Reply::Array(items) => format!("an array of {} items", items.len()),
            Reply::Map(pairs) => format!("a map of {} pairs", pairs.len()),
            Reply::Double(text) => format!("a double ({text})"),
            Reply::Boolean(value) => format!("a boolean ({value})"),
            Reply::BigNumber(text) => format!("a big number ({})", preview(text.as_bytes())),
        }
    }

    /// The bytes this reply holds (texts and items), as the budget counts them.
    pub fn held(&self) -> u64 {
        let own = match self {
            Reply::Simple(bytes) | Reply::Error(bytes) | Reply::Bulk(bytes) => bytes.len() as u64,
            Reply::Double(text) | Reply::BigNumber(text) => text.len() as u64,
            Reply::Array(items) => items.iter().map(Reply::held).sum(),
            Reply::Map(pairs) => pairs.iter().map(|(k, v)| k.held() + v.held()).sum(),
            Reply::Nil | Reply::Int(_) | Reply::Boolean(_) => 0,
        };
        own + ITEM_COST
    }
}

/// The first 40 characters of a text, for a message (control characters are made visible when
/// the message is printed: `capture::escape`).
fn preview(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut shown: String = text.chars().take(40).collect();
    if text.chars().nth(40).is_some() {
        shown.push_str("...");
    }
    shown
}

/// Why a reply could not be read: each says what was expected, for a one-line message.
#[derive(Debug)]
pub enum ReadError {
    /// The connection failed (a timeout, a reset); the caller knows which limit fired.
    Io(std::io::Error),
    /// The server closed the connection: before the reply began, or after `read` of its bytes.
    Closed { read: u64 },
    /// Not RESP: what was expected, what came, and where in the reply.
    Malformed(String),
    /// More than the budget: `what` names the part that did not fit (`a bulk string of
    /// 100000000000 bytes`), `limit` the budget in bytes, `read` the bytes of the reply read
    /// until then (its header included).
    TooLarge { what: String, limit: u64, read: u64 },
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(error) => write!(f, "{error}"),
            ReadError::Closed { read: 0 } => write!(f, "the server closed the connection without a reply"),
            ReadError::Closed { read } => {
                write!(f, "the server closed the connection in the middle of a reply (after {read} bytes of it)")
            }
            ReadError::Malformed(why) => write!(f, "not a Redis reply: {why}"),
            ReadError::TooLarge { what, limit, read } => write!(
                f,
                "the reply is larger than the --max-reply-bytes limit of {} ({what}, after {read} bytes of the reply): the rest is not read; raise --max-reply-bytes if the server is to be trusted with that much",
                crate::capture::size(*limit)
            ),
        }
    }
}

/// Where one reply is in its reading: what is left of the budget and how far it has come.
struct Budget {
    limit: u64,
    left: u64,
    /// Bytes of the reply read so far, for a message.
    read: u64,
}

impl Budget {
    fn take(&mut self, cost: u64, what: impl FnOnce() -> String) -> Result<(), ReadError> {
        if cost > self.left {
            return Err(ReadError::TooLarge { what: what(), limit: self.limit, read: self.read });
        }
        self.left -= cost;
        Ok(())
    }
}

/// Reads one reply, holding at most `max_bytes` for it (its texts plus `ITEM_COST` per item).
pub fn read(input: &mut impl BufRead, max_bytes: u64) -> Result<Reply, ReadError> {
    let mut budget = Budget { limit: max_bytes, left: max_bytes, read: 0 };
    value(input, &mut budget, 0)
}

fn value(input: &mut impl BufRead, budget: &mut Budget, depth: usize) -> Result<Reply, ReadError> {
    if depth > MAX_DEPTH {
        return Err(ReadError::Malformed(format!("arrays nested more than {MAX_DEPTH} deep")));
    }
    budget.take(ITEM_COST, || "one item more".into())?;
    let at = budget.read;
    let line = line(input, budget)?;
    let Some((&kind, rest)) = line.split_first() else {
        return Err(ReadError::Malformed(format!("an empty line at byte {at} where a reply type byte was expected")));
    };
    let text = || String::from_utf8_lossy(rest).into_owned();
    if matches!(kind, b'+' | b'-' | b',' | b'(') {
        budget.take(rest.len() as u64, || format!("a line of {} bytes", rest.len()))?;
    }
    match kind {
        b'+' => Ok(Reply::Simple(rest.to_vec())),
        b'-' => Ok(Reply::Error(rest.to_vec())),
        b':' => Ok(Reply::Int(number(rest, "an integer", at)?)),
        b'_' if rest.is_empty() => Ok(Reply::Nil),
        b',' => {
            let text = text();
            // RESP3 writes `inf`, `-inf` and `nan` as Rust reads them.
            text.parse::<f64>().map_err(|_| malformed("a double", rest, at))?;
            Ok(Reply::Double(text))
        }
        b'#' => match rest {
            b"t" => Ok(Reply::Boolean(true)),
            b"f" => Ok(Reply::Boolean(false)),
            _ => Err(malformed("a boolean (t or f)", rest, at)),
        },
        b'(' => {
            let digits = rest.strip_prefix(b"-").unwrap_or(rest);
            if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
                return Err(malformed("a big number", rest, at));
            }
            Ok(Reply::BigNumber(text()))
        }
        b'$' | b'=' | b'!' => {
            let length = number(rest, "a length", at)?;
            if length == -1 && kind == b'$' {
                return Ok(Reply::Nil);
            }
            let length = u64::try_from(length).map_err(|_| malformed("a length", rest, at))?;
            let name = match kind {
                b'$' => "a bulk string",
                b'=' => "a verbatim string",
                _ => "a bulk error",
            };
            let bytes = bulk(input, budget, length, name)?;
            match kind {
                b'$' => Ok(Reply::Bulk(bytes)),
                b'!' => Ok(Reply::Error(bytes)),
                // `txt:` or `mkd:`, then the text.
                _ => match bytes.get(3) {
                    Some(b':') => Ok(Reply::Bulk(bytes[4..].to_vec())),
                    _ => Err(ReadError::Malformed(format!(
                        "a verbatim string at byte {at} without its 3-letter format and ':'"
                    ))),
                },
            }
        }
        b'*' | b'~' | b'>' | b'%' | b'|' => {
            let count = number(rest, "a count", at)?;
            if count == -1 && kind == b'*' {
                return Ok(Reply::Nil);
            }
            let count = u64::try_from(count).map_err(|_| malformed("a count", rest, at))?;
            let per = if matches!(kind, b'%' | b'|') { 2 } else { 1 };
            let name = match kind {
                b'%' => "a map of",
                b'|' => "an attribute of",
                b'~' => "a set of",
                _ => "an array of",
            };
            // Every item costs at least `ITEM_COST`: a count the budget cannot hold is refused
            // here, before any is read or any room made for them.
            if count.saturating_mul(per).saturating_mul(ITEM_COST) > budget.left {
                return Err(ReadError::TooLarge {
                    what: format!("{name} {count} {}", if per == 2 { "pairs" } else { "items" }),
                    limit: budget.limit,
                    read: budget.read,
                });
            }
            let room = usize::try_from(count.min(1024)).unwrap_or(1024);
            if per == 2 {
                let mut pairs = Vec::with_capacity(room);
                for _ in 0..count {
                    let key = value(input, budget, depth + 1)?;
                    let value = value(input, budget, depth + 1)?;
                    pairs.push((key, value));
                }
                if kind == b'|' {
                    // Attributes describe the reply that follows them: nothing capture reads.
                    return value(input, budget, depth);
                }
                Ok(Reply::Map(pairs))
            } else {
                let mut items = Vec::with_capacity(room);
                for _ in 0..count {
                    items.push(value(input, budget, depth + 1)?);
                }
                Ok(Reply::Array(items))
            }
        }
        _ => Err(ReadError::Malformed(format!(
            "expected a reply type byte (one of + - : $ * _ , # ( = ! % ~ > |) at byte {at}, got {}",
            shown_byte(kind)
        ))),
    }
}

fn shown_byte(byte: u8) -> String {
    if byte.is_ascii_graphic() { format!("'{}'", char::from(byte)) } else { format!("the byte 0x{byte:02x}") }
}

fn malformed(expected: &str, got: &[u8], at: u64) -> ReadError {
    ReadError::Malformed(format!("expected {expected} at byte {at}, got '{}'", preview(got)))
}

/// A header's or an integer's number: an optional `-` and at most 19 digits.
fn number(text: &[u8], expected: &str, at: u64) -> Result<i64, ReadError> {
    std::str::from_utf8(text)
        .ok()
        .filter(|t| !t.starts_with('+'))
        .and_then(|t| t.parse::<i64>().ok())
        .ok_or_else(|| malformed(expected, text, at))
}

/// One line without its CRLF, at most `MAX_LINE` bytes. Not charged to the budget: a header is
/// not kept, and the texts that are (`+`, `-`, `,`, `(`) are charged by the caller.
fn line(input: &mut impl BufRead, budget: &mut Budget) -> Result<Vec<u8>, ReadError> {
    let at = budget.read;
    let mut line = Vec::new();
    loop {
        let available = match input.fill_buf() {
            Ok(available) => available,
            Err(error) if error.kind() == ErrorKind::Interrupted => continue,
            Err(error) => return Err(ReadError::Io(error)),
        };
        if available.is_empty() {
            return Err(ReadError::Closed { read: budget.read });
        }
        let (part, end) = match memchr::memchr(b'\n', available) {
            Some(at) => (&available[..at], Some(at + 1)),
            None => (available, None),
        };
        // The CR before the LF is part of the line here: one byte more than `MAX_LINE`.
        if line.len() + part.len() > MAX_LINE + 1 {
            return Err(ReadError::Malformed(format!(
                "a line at byte {at} runs past {} KiB without its end (CRLF): no reply of Redis has one so long",
                MAX_LINE >> 10
            )));
        }
        line.extend_from_slice(part);
        let used = end.unwrap_or(part.len());
        input.consume(used);
        budget.read += used as u64;
        if end.is_some() {
            break;
        }
    }
    if line.pop() != Some(b'\r') {
        return Err(ReadError::Malformed(format!(
            "a line at byte {at} ends in LF without CR (RESP ends lines in CRLF)"
        )));
    }
    Ok(line)
}

/// A length-prefixed body and its CRLF; refused before reading when the budget cannot hold it.
fn bulk(input: &mut impl BufRead, budget: &mut Budget, length: u64, name: &str) -> Result<Vec<u8>, ReadError> {
    budget.take(length, || format!("{name} of {length} bytes"))?;
    // Room grows with what arrives, not with what the header promised.
    let mut bytes = Vec::with_capacity(usize::try_from(length.min(64 << 10)).unwrap_or(0));
    let mut body = input.by_ref().take(length);
    loop {
        match body.read_to_end(&mut bytes) {
            Ok(_) => break,
            Err(error) if error.kind() == ErrorKind::Interrupted => {}
            Err(error) => return Err(ReadError::Io(error)),
        }
    }
    budget.read += bytes.len() as u64;
    if (bytes.len() as u64) < length {
        return Err(ReadError::Closed { read: budget.read });
    }
    let mut end = [0u8; 2];
    let mut got = 0;
    while got < 2 {
        match input.read(&mut end[got..]) {
            Ok(0) => return Err(ReadError::Closed { read: budget.read }),
            Ok(n) => got += n,
            Err(error) if error.kind() == ErrorKind::Interrupted => {}
            Err(error) => return Err(ReadError::Io(error)),
        }
    }
    budget.read += 2;
    if &end != b"\r\n" {
        return Err(ReadError::Malformed(format!(
            "{name} of {length} bytes not followed by CRLF (at byte {} of the reply)",
            budget.read - 2
        )));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(bytes: &[u8]) -> Result<Reply, ReadError> {
        read(&mut std::io::Cursor::new(bytes), 1 << 20)
    }

    fn error(bytes: &[u8], limit: u64) -> String {
        read(&mut std::io::Cursor::new(bytes), limit).unwrap_err().to_string()
    }

    #[test]
    fn the_replies_capture_reads_in_both_protocols() {
        assert_eq!(parse(b"+hash\r\n").unwrap(), Reply::Simple(b"hash".to_vec()));
        assert_eq!(parse(b":-2\r\n").unwrap(), Reply::Int(-2));
        assert_eq!(parse(b"$-1\r\n").unwrap(), Reply::Nil);
        assert_eq!(parse(b"_\r\n").unwrap(), Reply::Nil);
        assert_eq!(parse(b"$0\r\n\r\n").unwrap(), Reply::Bulk(Vec::new()));
        let page = b"*1\r\n*2\r\n$15\r\n1791333180000-0\r\n*2\r\n$5\r\nevent\r\n$6\r\nactive\r\n";
        assert_eq!(
            parse(page).unwrap(),
            Reply::Array(vec![Reply::Array(vec![
                Reply::Bulk(b"1791333180000-0".to_vec()),
                Reply::Array(vec![Reply::Bulk(b"event".to_vec()), Reply::Bulk(b"active".to_vec())]),
            ])])
        );
        assert_eq!(
            parse(b"%1\r\n+name\r\n=8\r\ntxt:send\r\n").unwrap(),
            Reply::Map(vec![(Reply::Simple(b"name".to_vec()), Reply::Bulk(b"send".to_vec()))])
        );
        assert_eq!(parse(b"|1\r\n+ttl\r\n:3\r\n#t\r\n").unwrap(), Reply::Boolean(true), "an attribute is passed over");
        assert_eq!(parse(b",inf\r\n").unwrap(), Reply::Double("inf".into()));
        assert_eq!(parse(b"!3\r\nERR\r\n").unwrap(), Reply::Error(b"ERR".to_vec()));
    }

    #[test]
    fn a_bulk_header_past_the_budget_is_refused_before_its_body_is_read() {
        // The header, and bytes that never end: nothing past the header is read.
        let message = error(b"$100000000000\r\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 64 << 20);
        assert_eq!(
            message,
            "the reply is larger than the --max-reply-bytes limit of 64 MiB (a bulk string of 100000000000 bytes, after 15 bytes of the reply): the rest is not read; raise --max-reply-bytes if the server is to be trusted with that much"
        );
        assert!(
            error(b"*4000000000\r\n", 64 << 20).contains("(an array of 4000000000 items, after 13 bytes of the reply)")
        );
        // Many small items add up too.
        let many = b"*100\r\n".iter().chain(b":1\r\n".repeat(100).iter()).copied().collect::<Vec<_>>();
        assert!(error(&many, 1000).contains("larger than the --max-reply-bytes limit"), "{}", error(&many, 1000));
        assert!(read(&mut std::io::Cursor::new(&many), 100_000).is_ok());
    }

    #[test]
    fn a_line_without_end_stops_at_64_kib() {
        let mut endless = b"+".to_vec();
        endless.extend(std::iter::repeat_n(b'x', 1 << 20));
        assert_eq!(
            error(&endless, 64 << 20),
            "not a Redis reply: a line at byte 0 runs past 64 KiB without its end (CRLF): no reply of Redis has one so long"
        );
    }

    #[test]
    fn what_is_not_resp_is_named_with_where_it_was() {
        assert_eq!(
            error(b"HTTP/1.1 400 Bad Request\r\n", 1 << 20),
            "not a Redis reply: expected a reply type byte (one of + - : $ * _ , # ( = ! % ~ > |) at byte 0, got 'H'"
        );
        assert_eq!(error(b":12x\r\n", 1 << 20), "not a Redis reply: expected an integer at byte 0, got '12x'");
        assert_eq!(
            error(b"$3\r\nabcd\r\n", 1 << 20),
            "not a Redis reply: a bulk string of 3 bytes not followed by CRLF (at byte 7 of the reply)"
        );
        assert_eq!(
            error(b"+OK\n", 1 << 20),
            "not a Redis reply: a line at byte 0 ends in LF without CR (RESP ends lines in CRLF)"
        );
        assert_eq!(error(b"$-2\r\n", 1 << 20), "not a Redis reply: expected a length at byte 0, got '-2'");
        assert_eq!(error(b"", 1 << 20), "the server closed the connection without a reply");
        assert_eq!(
            error(b"*2\r\n$5\r\nab", 1 << 20),
            "the server closed the connection in the middle of a reply (after 10 bytes of it)"
        );
        let deep = "*1\r\n".repeat(40);
        assert_eq!(error(deep.as_bytes(), 1 << 20), "not a Redis reply: arrays nested more than 16 deep");
    }

    #[test]
    fn what_a_reply_holds_stays_within_its_budget() {
        let page = b"*2\r\n$3\r\nabc\r\n*1\r\n:5\r\n";
        let reply = parse(page).unwrap();
        // The budget counts what `held` counts: a reply read within N holds at most N.
        assert!(read(&mut std::io::Cursor::new(page), reply.held()).is_ok());
        assert!(read(&mut std::io::Cursor::new(page), reply.held() - 1).is_err());
    }
}
