//! The JSON values of a trace export, as the trace formats read them: one compact value a line (the
//! Collector's file exporter, a saved OTLP/HTTP body, `jq -c`), or a pretty-printed document over
//! many lines (what `curl` saves from Tempo's or Jaeger's query API once it has been through `jq .`,
//! Grafana's "Download trace"), told by its first non-blank line being a lone `{` or `[`.
//!
//! A document is held whole to be parsed, so it is bounded as a line is (`--max-line-bytes`): past
//! it, the read stops with the fix, rather than holding a file of any size. Several documents one
//! after another (`jq .` of a file of lines) are read one by one. Every line of a document takes its
//! value's account: used when the value gave events, else ignored with the format's reason; a
//! rejected value is rejected once, at its first line, and its other lines are ignored as part of it.
//! In a document each event is at the line where its span opens, and its text is that span's JSON
//! (`span_objects`), not the whole document.

use std::io::BufRead;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::ingest::SourceSpec;
use crate::ingest::io::lines::{Lines, json_problem, size};
use crate::model::{Channel, Event, InputSummary, Origin};

/// Where a value's spans are: each span's line, in document order, when the value spreads over
/// lines (a pretty-printed document), so that each event is at its own span's line; on one line,
/// every span is at it.
pub struct Places {
    pub origin: Origin,
    span_lines: Vec<u32>,
}

impl Places {
    /// The origin of the value's `n`th span (counted in document order across the whole value).
    pub fn span(&self, n: usize) -> Origin {
        Origin { line: self.span_lines.get(n).copied().unwrap_or(self.origin.line), ..self.origin }
    }
}

/// Why the other lines of a rejected multi-line value are not rejected themselves.
pub const IN_REJECTED_DOCUMENT: &str = "part of a JSON document rejected at its first line";

/// What a format makes of one JSON value: its events (none: the value is ignored with `ignored`),
/// or why it is not evidence.
pub struct Reading<'a> {
    /// What one value should be, for the messages of the values that are not.
    pub expected: &'a str,
    /// Why a value without events is ignored.
    pub ignored: &'a str,
}

pub fn read_values(
    spec: &SourceSpec,
    source: u16,
    input: Box<dyn BufRead + Send>,
    events: &mut Vec<Event>,
    summary: &mut InputSummary,
    reading: &Reading,
    mut events_of: impl FnMut(&Value, &Places) -> std::result::Result<Vec<Event>, String>,
) -> Result<()> {
    let expected = reading.expected;
    let mut lines = Lines::new(input, spec.max_line_bytes);
    let mut first = true;
    while let Some((line, text)) = lines.next_line(&spec.path, summary)? {
        summary.lines += 1;
        let trimmed = text.trim();
        if trimmed.is_empty() {
            summary.ignore("blank");
            continue;
        }
        if first && (trimmed == "{" || trimmed == "[") {
            let mut document = Document { first_line: line, text: text.to_string(), line_starts: vec![0] };
            read_document(spec, &mut lines, summary, &mut document)?;
            return account_document(spec, source, &document, events, summary, reading, &mut events_of);
        }
        first = false;
        let value: Value = match serde_json::from_str(text) {
            Ok(value) => value,
            Err(error) => {
                summary.reject(line, format!("not JSON: {}; expected {expected}", json_problem(&error, text)));
                continue;
            }
        };
        let origin = Origin { channel: Channel::Log, source, line: crate::ingest::line_of(spec, line)? };
        match events_of(&value, &Places { origin, span_lines: Vec::new() }) {
            Ok(found) if found.is_empty() => summary.ignore(reading.ignored),
            Ok(found) => {
                summary.used();
                summary.texts.keep(origin.line, text);
                events.extend(found);
            }
            Err(reason) => summary.reject(line, reason),
        }
    }
    Ok(())
}

/// The text of a multi-line document and where each of its lines starts in it.
struct Document {
    first_line: u64,
    text: String,
    line_starts: Vec<usize>,
}

impl Document {
    /// The line of the byte at `offset`.
    fn line_at(&self, offset: usize) -> u64 {
        self.first_line + self.line_starts.partition_point(|&start| start <= offset).saturating_sub(1) as u64
    }

    fn last_line(&self) -> u64 {
        self.first_line + self.line_starts.len() as u64 - 1
    }
}

fn read_document(
    spec: &SourceSpec,
    lines: &mut Lines,
    summary: &mut InputSummary,
    document: &mut Document,
) -> Result<()> {
    let too_big = |line: u64| {
        Error::input(
            &spec.path,
            Some(line),
            format!(
                "a JSON document of more than {} from line {}, past the limit that bounds what is held (raise it with --max-line-bytes or [analysis] max_line_bytes, or write one object a line: jq -c . FILE)",
                size(spec.max_line_bytes),
                document.first_line
            ),
        )
    };
    // A line past the cap is passed over (and rejected) by `Lines` itself: the document it was
    // part of is past the bound too.
    let rejected_before = summary.rejected;
    while let Some((line, text)) = lines.next_line(&spec.path, summary)? {
        summary.lines += 1;
        document.text.push('\n');
        document.line_starts.push(document.text.len());
        document.text.push_str(text);
        if summary.rejected != rejected_before || document.text.len() > spec.max_line_bytes {
            return Err(too_big(line));
        }
    }
    if summary.rejected != rejected_before {
        return Err(too_big(summary.lines));
    }
    Ok(())
}

/// Reads the document's values one by one and accounts for each of its lines.
fn account_document(
    spec: &SourceSpec,
    source: u16,
    document: &Document,
    events: &mut Vec<Event>,
    summary: &mut InputSummary,
    reading: &Reading,
    events_of: &mut impl FnMut(&Value, &Places) -> std::result::Result<Vec<Event>, String>,
) -> Result<()> {
    let text = document.text.as_str();
    // Lines before the first value, and between values, hold only white space: `blank`.
    let mut accounted_to = document.first_line - 1;
    // How the last line accounted was counted: a value that starts on it (`}{`, a value after
    // another on one line) shares it, and the line is counted once, by its worse outcome.
    let mut last = Outcome::Ignored("blank");
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    loop {
        let start = stream.byte_offset()
            + (text[stream.byte_offset()..].len() - text[stream.byte_offset()..].trim_start().len());
        let next = stream.next();
        let Some(next) = next else { break };
        let first_line = document.line_at(start);
        for _ in accounted_to + 1..first_line {
            summary.ignore("blank");
            last = Outcome::Ignored("blank");
        }
        // The value's first line was counted already, with the value before it.
        let shared = first_line <= accounted_to;
        match next {
            Ok(value) => {
                let last_line = document.line_at(stream.byte_offset().saturating_sub(1));
                accounted_to = last_line;
                let count = last_line - first_line + 1 - u64::from(shared);
                let origin = Origin { channel: Channel::Log, source, line: crate::ingest::line_of(spec, first_line)? };
                let spans: Vec<(usize, usize)> = span_objects(&text[start..stream.byte_offset()])
                    .into_iter()
                    .map(|(from, to)| (start + from, start + to))
                    .collect();
                let span_lines = spans
                    .iter()
                    .map(|&(from, _)| crate::ingest::line_of(spec, document.line_at(from)))
                    .collect::<Result<Vec<u32>>>()?;
                let places = Places { origin, span_lines };
                match events_of(&value, &places) {
                    Ok(found) if found.is_empty() => {
                        (0..count).for_each(|_| summary.ignore(reading.ignored));
                        if count > 0 {
                            last = Outcome::Ignored(reading.ignored);
                        }
                    }
                    Ok(found) => {
                        if shared && count == 0 {
                            // Evidence on a line counted as nothing: it is used now.
                            last.recount(summary, Outcome::Used);
                        }
                        (0..count).for_each(|_| summary.used());
                        last = Outcome::Used;
                        // Each event's text is its span's JSON, not the whole document.
                        let mut lines: Vec<u32> = found.iter().map(|event| event.origin().line).collect();
                        lines.sort_unstable();
                        lines.dedup();
                        for line in lines {
                            // The spans are in document order: their lines never decrease.
                            let kept = match places.span_lines.binary_search(&line) {
                                Ok(n) => &text[spans[n].0..spans[n].1],
                                Err(_) => &text[start..stream.byte_offset()],
                            };
                            summary.texts.keep(line, kept);
                        }
                        events.extend(found);
                    }
                    Err(reason) => {
                        if !shared || last.recount(summary, Outcome::Rejected) {
                            summary.reject(first_line, reason);
                        }
                        let rest = last_line - first_line;
                        (0..rest).for_each(|_| summary.ignore(IN_REJECTED_DOCUMENT));
                        last = if rest > 0 { Outcome::Ignored(IN_REJECTED_DOCUMENT) } else { Outcome::Rejected };
                    }
                }
            }
            Err(error) => {
                // The parser cannot say where a broken value would have ended: the rest is its.
                let at = document.first_line + error.line().saturating_sub(1) as u64;
                let problem = json_problem(&error, text.lines().nth(error.line().saturating_sub(1)).unwrap_or(""));
                if !shared || last.recount(summary, Outcome::Rejected) {
                    summary.reject(
                        first_line,
                        format!("not JSON (at line {at}): {problem}; expected {}", reading.expected),
                    );
                }
                for _ in first_line + 1..=document.last_line() {
                    summary.ignore(IN_REJECTED_DOCUMENT);
                }
                return Ok(());
            }
        }
    }
    for _ in accounted_to + 1..=document.last_line() {
        summary.ignore("blank");
    }
    Ok(())
}

/// How a line of a document was counted, so that a second value on it can change the count
/// instead of adding to it.
#[derive(Clone, Copy)]
enum Outcome<'a> {
    Used,
    Ignored(&'a str),
    Rejected,
}

impl Outcome<'_> {
    /// Moves the line counted as `self` to `worse`, when `worse` is worse (ignored < used <
    /// rejected); whether it moved. A line already rejected stays rejected once.
    fn recount(self, summary: &mut InputSummary, worse: Outcome<'_>) -> bool {
        let rank = |outcome: Outcome| match outcome {
            Outcome::Ignored(_) => 0,
            Outcome::Used => 1,
            Outcome::Rejected => 2,
        };
        if rank(worse) <= rank(self) {
            return false;
        }
        match self {
            Outcome::Used => summary.used -= 1,
            Outcome::Ignored(reason) => {
                summary.ignored -= 1;
                if let Some(count) = summary.ignored_by_reason.get_mut(reason) {
                    *count -= 1;
                    if *count == 0 {
                        summary.ignored_by_reason.remove(reason);
                    }
                }
            }
            Outcome::Rejected => {}
        }
        if let Outcome::Used = worse {
            summary.used += 1;
        }
        true
    }
}

/// The byte ranges of the objects that are elements of a `spans` list in `text` (one JSON value),
/// in document order: the spans of OTLP, Tempo and Jaeger alike. One pass over the bytes, no
/// recursion: the value was parsed already, so the text is well-formed JSON.
fn span_objects(text: &str) -> Vec<(usize, usize)> {
    enum Frame {
        Object,
        List { spans: bool },
    }
    let bytes = text.as_bytes();
    let mut frames: Vec<Frame> = Vec::new();
    let mut open_spans: Vec<(usize, usize)> = Vec::new(); // (depth, start) of a span being read
    let mut found = Vec::new();
    let mut last_string = (0, 0);
    let mut key = (0, 0);
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'"' => {
                let from = at + 1;
                at += 1;
                while at < bytes.len() && bytes[at] != b'"' {
                    at += if bytes[at] == b'\\' { 2 } else { 1 };
                }
                last_string = (from, at.min(bytes.len()));
            }
            b':' => key = last_string,
            b'{' => {
                if matches!(frames.last(), Some(Frame::List { spans: true })) {
                    open_spans.push((frames.len(), at));
                }
                frames.push(Frame::Object);
            }
            b'[' => {
                let spans = matches!(frames.last(), Some(Frame::Object)) && &text[key.0..key.1] == "spans";
                frames.push(Frame::List { spans });
            }
            b'}' | b']' => {
                frames.pop();
                if bytes[at] == b'}' && open_spans.last().is_some_and(|&(depth, _)| depth == frames.len()) {
                    let (_, start) = open_spans.pop().unwrap_or_default();
                    found.push((start, at + 1));
                }
            }
            _ => {}
        }
        at += 1;
    }
    found.sort_unstable();
    found
}

#[cfg(test)]
mod tests {
    use super::span_objects;

    #[test]
    fn span_objects_are_the_objects_of_spans_lists_and_nothing_in_a_string() {
        let text = r#"{"data":[{"spans":[{"a":"} ] { \"spans\": [{"},{"b":{"spans":1},"c":[{"d":2}]}],"x":["spans",{"e":3}]},{"spans":[ {"f":4} ]}]}"#;
        let found: Vec<&str> = span_objects(text).into_iter().map(|(from, to)| &text[from..to]).collect();
        assert_eq!(found, [r#"{"a":"} ] { \"spans\": [{"}"#, r#"{"b":{"spans":1},"c":[{"d":2}]}"#, r#"{"f":4}"#]);
        assert!(span_objects(r#"{"spans":[1,2]}"#).is_empty());
    }
}
