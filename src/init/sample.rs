//! What `init` reads of a file: its first bytes only, and every byte taken as hostile.
//!
//! `init` decides from a sample so that a folder of gigabyte exports is inspected in a second:
//! the first `SAMPLE_BYTES` of each file (decompressed when it is gzip), cut back to the last
//! whole line, and of a ledger at most its first `SAMPLE_ROWS` rows. Everything it concludes is
//! said to be from that sample. Nothing here panics on any input: text that is not UTF-8 is
//! replaced (and said), a NUL byte makes the file binary, a JSON document cut by the sample is
//! read element by element up to the cut.

use std::fmt::Write as _;
use std::io::Read;
use std::path::Path;

use serde_json::Value;

/// The most of a file `init` reads (after decompression).
pub const SAMPLE_BYTES: usize = 4 << 20;
/// The most ledger rows `init` looks at.
pub const SAMPLE_ROWS: usize = 5000;

/// The start of a file, as text.
#[derive(Debug)]
pub struct Sample {
    pub text: String,
    /// The file goes on past the sample.
    pub truncated: bool,
    /// Some bytes were not UTF-8 and were replaced.
    pub lossy: bool,
}

impl Sample {
    #[cfg(test)]
    pub fn from_text(text: &str) -> Sample {
        Sample { text: text.to_string(), truncated: false, lossy: false }
    }

    /// The non-blank lines with their 1-based numbers (lines end at LF; a CR before it is dropped).
    pub fn lines(&self) -> impl Iterator<Item = (u64, &str)> {
        self.text
            .split('\n')
            .enumerate()
            .map(|(index, line)| (index as u64 + 1, line.strip_suffix('\r').unwrap_or(line)))
            .filter(|(_, line)| !line.trim().is_empty())
    }

    pub fn first_line(&self) -> Option<&str> {
        self.lines().next().map(|(_, line)| line.trim())
    }

    /// "the first 4 MiB" or "all 2,345 lines", for the evidence comments.
    pub fn extent(&self) -> String {
        let lines = self.text.lines().count();
        if self.truncated {
            format!("its first {} lines ({} MiB sample)", group(lines as u64), SAMPLE_BYTES >> 20)
        } else {
            format!("all {} lines", group(lines as u64))
        }
    }
}

/// Reads the sample of a file: plain or gzip, at most `SAMPLE_BYTES`.
pub fn read(path: &Path) -> Result<Sample, String> {
    // Lines split as the readers split them: a lone `\r` ends one.
    let input = crate::ingest::io::lines::LineEnds::new(crate::ingest::open(path).map_err(|e| e.to_string())?);
    let mut bytes = Vec::new();
    input.take(SAMPLE_BYTES as u64 + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot read: {e}"))?;
    from_bytes(bytes)
}

pub fn from_bytes(mut bytes: Vec<u8>) -> Result<Sample, String> {
    let truncated = bytes.len() > SAMPLE_BYTES;
    if truncated {
        bytes.truncate(SAMPLE_BYTES);
        // Whole lines only: the cut may split a line (and a character).
        match memchr::memrchr(b'\n', &bytes) {
            Some(end) => bytes.truncate(end + 1),
            None => return Err(format!("no line ends in the first {} MiB: not a text export", SAMPLE_BYTES >> 20)),
        }
    }
    if memchr::memchr(0, &bytes).is_some() {
        return Err("binary data (a NUL byte)".into());
    }
    let (text, lossy) = match String::from_utf8(bytes) {
        Ok(text) => (text, false),
        Err(error) => (String::from_utf8_lossy(error.as_bytes()).into_owned(), true),
    };
    if text.trim().is_empty() {
        return Err("empty file".into());
    }
    Ok(Sample { text, truncated, lossy })
}

/// A JSON document, or as much of it as the sample holds.
#[derive(Debug)]
pub enum Json {
    /// The whole text is one JSON value (with the line each element starts on, for an array).
    Whole(Value, Vec<u64>),
    /// Records with the line each starts on: the elements of a top-level array (all of them, or
    /// those before the sample's cut), or one JSON value per line.
    Records(Vec<(u64, Value)>),
}

impl Json {
    /// The records: an array's elements, the lines, or the one whole value.
    pub fn records(&self) -> Vec<(u64, &Value)> {
        match self {
            Json::Whole(Value::Array(items), lines) => {
                items.iter().enumerate().map(|(i, v)| (lines.get(i).copied().unwrap_or(1), v)).collect()
            }
            Json::Whole(value, _) => vec![(1, value)],
            Json::Records(records) => records.iter().map(|(line, v)| (*line, v)).collect(),
        }
    }
}

/// Reads the sample as JSON: a whole document, an array cut by the sample, or JSON Lines (at
/// least the first non-blank line and most lines must be JSON). `None` when it is not JSON.
pub fn json(sample: &Sample) -> Option<Json> {
    let text = sample.text.trim_start();
    if !(text.starts_with('{') || text.starts_with('[')) {
        return None;
    }
    if let Ok(value) = serde_json::from_str::<Value>(&sample.text) {
        let lines = match &value {
            Value::Array(_) => array_prefix(&sample.text).into_iter().map(|(line, _)| line).collect(),
            _ => Vec::new(),
        };
        return Some(Json::Whole(value, lines));
    }
    if text.starts_with('[') {
        let elements = array_prefix(&sample.text);
        if !elements.is_empty() {
            return Some(Json::Records(elements));
        }
    }
    let mut records = Vec::new();
    let mut other = 0usize;
    for (line, text) in sample.lines() {
        match serde_json::from_str::<Value>(text) {
            Ok(value) => records.push((line, value)),
            Err(_) if records.is_empty() => return None,
            Err(_) => other += 1,
        }
    }
    (records.len() > other).then_some(Json::Records(records))
}

/// The complete elements of a top-level JSON array at the start of `text`, each with the line it
/// starts on; stops at the first element that is cut off or malformed.
pub fn array_prefix(text: &str) -> Vec<(u64, Value)> {
    let bytes = text.as_bytes();
    let Some(open) = bytes.iter().position(|b| !b.is_ascii_whitespace()).filter(|&at| bytes[at] == b'[') else {
        return Vec::new();
    };
    let mut elements = Vec::new();
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let mut start = open + 1;
    let mut line = 1 + memchr::memchr_iter(b'\n', &bytes[..=open]).count() as u64;
    let mut start_line = line;
    for (at, &byte) in bytes.iter().enumerate().skip(open + 1) {
        if byte == b'\n' {
            line += 1;
        }
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' if depth > 0 => depth -= 1,
            b',' | b']' if depth == 0 => {
                let piece = &text[start..at];
                if !piece.trim().is_empty() {
                    let Ok(value) = serde_json::from_str::<Value>(piece) else { break };
                    let leading = piece.len() - piece.trim_start().len();
                    let newlines = piece[..leading].matches('\n').count() as u64;
                    elements.push((start_line + newlines, value));
                }
                if byte == b']' {
                    break;
                }
                start = at + 1;
                start_line = line;
            }
            _ => {}
        }
    }
    elements
}

/// `12345` → `12,345`.
pub fn group(number: u64) -> String {
    let digits = number.to_string();
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Text from a file made fit for a one-line TOML comment and a terminal: control and invisible
/// characters written out as `terminal::visible` writes them (`\x1b`, `\n`, `<U+202E>`), cut to
/// `max` characters (on a character boundary) with `…`.
pub fn shown(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (count, c) in text.trim().chars().enumerate() {
        if count == max {
            out.push('…');
            break;
        }
        crate::terminal::push_visible(&mut out, c);
    }
    out
}

/// A TOML basic string: `"..."` with `"`, `\` and every control or invisible character
/// (`terminal::is_hidden`: bidi overrides too) escaped, so that the value is exact and its bytes
/// show what it is in any editor.
pub fn toml_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if crate::terminal::is_hidden(c) && u32::from(c) > 0xFFFF => {
                let _ = write!(out, "\\U{:08X}", u32::from(c));
            }
            c if crate::terminal::is_hidden(c) => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A regex as a TOML string: a literal `'...'` (no escapes to double) when it can be one.
pub fn toml_pattern(pattern: &str) -> String {
    if pattern.contains('\'') || pattern.chars().any(crate::terminal::is_hidden) {
        toml_string(pattern)
    } else {
        format!("'{pattern}'")
    }
}

/// A reader of leasetrace on the sampled text, as `analyze` will run it on the file.
pub fn read_sample(
    spec: &crate::ingest::SourceSpec,
    format: &dyn crate::ingest::EventFormat,
    text: &str,
) -> Result<(Vec<crate::model::Event>, crate::model::InputSummary), String> {
    let mut summary = crate::model::InputSummary::new(&spec.display_path(), spec.kind.name(), format.name(), spec.tz);
    let mut events = Vec::new();
    let input = Box::new(std::io::Cursor::new(text.as_bytes().to_vec()));
    format.read(spec, 0, input, &mut events, &mut summary).map_err(|e| e.to_string())?;
    summary.events = events.len() as u64;
    Ok((events, summary))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_is_cut_at_a_line_and_says_so() {
        let mut bytes = b"a,b\n".repeat(SAMPLE_BYTES / 4 + 10);
        bytes.push(b'x');
        let sample = from_bytes(bytes).unwrap();
        assert!(sample.truncated);
        assert!(sample.text.ends_with("a,b\n"));
        assert!(sample.extent().starts_with("its first 1,048,576 lines"), "{}", sample.extent());
    }

    #[test]
    fn hostile_bytes_are_refused_or_replaced_never_a_panic() {
        assert_eq!(from_bytes(b"ab\0cd".to_vec()).unwrap_err(), "binary data (a NUL byte)");
        assert_eq!(from_bytes(b" \n\n".to_vec()).unwrap_err(), "empty file");
        let sample = from_bytes(b"ok \xff\xfe line\n".to_vec()).unwrap();
        assert!(sample.lossy);
        assert!(sample.text.contains('\u{fffd}'));
        assert_eq!(shown("a\u{1b}[31mred\r", 80), "a\\x1b[31mred");
        assert_eq!(shown("x\n[[sources]]\u{202E}", 80), "x\\n[[sources]]<U+202E>");
        assert_eq!(shown("abcdef", 3), "abc…");
    }

    #[test]
    fn a_json_array_cut_by_the_sample_keeps_its_whole_elements() {
        let text = "[\n  {\"id\": \"1-0\", \"s\": \"a,]\\\"\"},\n  {\"id\": \"2-0\"},\n  {\"id\": \"3-";
        let elements = array_prefix(text);
        assert_eq!(elements.len(), 2);
        assert_eq!(elements[0], (2, serde_json::json!({"id": "1-0", "s": "a,]\""})));
        assert_eq!(elements[1].0, 3);
        let Some(Json::Records(records)) = json(&Sample::from_text(text)) else { panic!("a cut array is records") };
        assert_eq!(records.len(), 2);
        assert!(json(&Sample::from_text("at,run\n")).is_none());
        let lines = json(&Sample::from_text("{\"a\":1}\n\n{\"a\":2}\n")).unwrap();
        assert_eq!(lines.records().iter().map(|(line, _)| *line).collect::<Vec<_>>(), [1, 3]);
    }

    #[test]
    fn toml_strings_escape_what_toml_needs() {
        assert_eq!(toml_string("a\"b\\c\u{1}"), "\"a\\\"b\\\\c\\u0001\"");
        assert_eq!(toml_pattern(r"job (?P<job_id>\S+)"), r"'job (?P<job_id>\S+)'");
        assert_eq!(toml_pattern(r"it's (\d+)"), "\"it's (\\\\d+)\"");
        let parsed: toml::Value = toml::from_str(&format!("x = {}", toml_string("a\"\\\t\u{7f}"))).unwrap();
        assert_eq!(parsed["x"].as_str(), Some("a\"\\\t\u{7f}"));
    }
}
