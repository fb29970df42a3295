//! BullMQ's events stream (`bull:<queue>:events`), as `XRANGE` exports it.
//!
//! Two shapes are read: JSON (an array of `{"id": "<ms>-<seq>", "fields": {...}}`, or the same
//! objects one per line) and the text `redis-cli XRANGE` prints, both its plain form (one token per
//! line, as when stdout is not a terminal) and its numbered, quoted terminal form. The stream id
//! carries Redis's clock in epoch milliseconds: these events need no zone. Event names and fields
//! are BullMQ's (see docs/inputs/events.md for the table and the Lua scripts that write them).

use std::io::{BufRead, Read};

use chrono::DateTime;
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::model::{Channel, Event, EventKind, InputSummary, Moment, Origin, Text};
use crate::time;

use crate::ingest::io::lines::Lines;
use crate::ingest::{EventFormat, SourceKind, SourceSpec};

/// BullMQ stream event names and the timeline kinds they become.
pub const EVENT_NAMES: &[(&str, EventKind)] = &[
    ("added", EventKind::JobAdded),
    ("waiting", EventKind::JobWaiting),
    ("delayed", EventKind::JobDelayed),
    ("active", EventKind::JobActive),
    ("progress", EventKind::JobProgress),
    ("stalled", EventKind::JobStalled),
    ("completed", EventKind::JobCompleted),
    ("failed", EventKind::JobFailed),
    ("retries-exhausted", EventKind::JobRetriesExhausted),
    ("removed", EventKind::JobRemoved),
];

/// One stream entry, whatever shape it was read from.
struct Entry {
    id: String,
    fields: Vec<(String, String)>,
    line: u64,
    /// Physical lines the entry spans (redis-cli text puts every token on its own line).
    span: u64,
    raw: String,
}

/// The instant a stream id stands for: its millisecond part.
fn stream_time(id: &str) -> Option<Moment> {
    let (millis, seq) = id.split_once('-')?;
    if !seq.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    time::moment(DateTime::from_timestamp_millis(millis.parse().ok()?)?).ok()
}

fn looks_like_stream_id(token: &str) -> bool {
    token.split_once('-').is_some_and(|(ms, seq)| {
        ms.len() >= 10
            && ms.bytes().all(|b| b.is_ascii_digit())
            && !seq.is_empty()
            && seq.bytes().all(|b| b.is_ascii_digit())
    })
}

fn field<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// Turns an entry into an event, or says why it is not one.
fn to_event(spec: &SourceSpec, source: u16, entry: &Entry) -> Result<Option<Event>> {
    let at = stream_time(&entry.id).ok_or_else(|| {
        Error::input(
            &spec.path,
            Some(entry.line),
            format!("'{}' is not a stream id: expected <milliseconds>-<sequence>, in the years 1677-2262", entry.id),
        )
    })?;
    let Some(name) = field(&entry.fields, "event") else {
        return Err(Error::input(
            &spec.path,
            Some(entry.line),
            format!("stream entry {} has no 'event' field", entry.id),
        ));
    };
    let Some(kind) = EVENT_NAMES.iter().find(|(n, _)| *n == name).map(|(_, k)| *k) else {
        return Ok(None);
    };
    let origin = Origin { channel: Channel::EventsStream, source, line: crate::ingest::line_of(spec, entry.line)? };
    let mut event = Event::new(at, kind, origin);
    let job_id = field(&entry.fields, "jobId").map(Text::from);
    let scope = crate::model::Scope {
        job_id,
        job_name: field(&entry.fields, "name").map(Text::from),
        queue: spec.queue.as_deref().map(Text::from),
        slot: job_id.as_deref().and_then(crate::ingest::bullmq::jobs::repeat_slot),
        ..Default::default()
    };
    event.set_scope(scope.interned());
    let detail = match kind {
        EventKind::JobFailed => field(&entry.fields, "failedReason").map(Text::from),
        EventKind::JobWaiting | EventKind::JobActive | EventKind::JobCompleted => {
            field(&entry.fields, "prev").map(|prev| Text::from(format!("prev={prev}").as_str()))
        }
        EventKind::JobRetriesExhausted => {
            field(&entry.fields, "attemptsMade").map(|n| Text::from(format!("attemptsMade={n}").as_str()))
        }
        EventKind::JobDelayed => field(&entry.fields, "delay").map(|d| Text::from(format!("delay={d}").as_str())),
        _ => None,
    };
    event.set_detail(detail);
    Ok(Some(event))
}

fn accept(
    spec: &SourceSpec,
    source: u16,
    entry: &Entry,
    events: &mut Vec<Event>,
    summary: &mut InputSummary,
) -> Result<()> {
    let name = field(&entry.fields, "event").unwrap_or_default().to_string();
    let span = entry.span;
    match to_event(spec, source, entry)? {
        Some(event) => {
            summary.used += span;
            summary.texts.keep(event.origin().line, &entry.raw);
            events.push(event);
        }
        None => {
            for _ in 0..span {
                summary.ignore(&format!("stream event '{name}' not used"));
            }
        }
    }
    Ok(())
}

/// The largest events stream read as one JSON array (`redis-cli --json XRANGE`): the array is
/// held whole, so it is bounded; entries one per line have no such limit.
pub const MAX_ARRAY_BYTES: u64 = 64 << 20;

pub struct XrangeJson;

impl EventFormat for XrangeJson {
    fn name(&self) -> &'static str {
        "xrange-json"
    }

    fn kind(&self) -> SourceKind {
        SourceKind::BullmqEvents
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["json", "jsonl", "ndjson"]
    }

    fn sniff(&self, first_line: &str) -> bool {
        first_line.starts_with('[') || first_line.starts_with('{')
    }

    fn read(
        &self,
        spec: &SourceSpec,
        source: u16,
        mut input: Box<dyn BufRead + Send>,
        events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<()> {
        let head = input.fill_buf().unwrap_or_default();
        let array = head.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
        if array {
            // An XRANGE export is bounded by the stream's trim length (about 10,000 entries by
            // default, a few MB), so reading the array whole is fine up to a limit far above
            // that: a larger (or endless) input is refused, not held.
            let mut bytes = Vec::new();
            input
                .take(MAX_ARRAY_BYTES + 1)
                .read_to_end(&mut bytes)
                .map_err(|source| Error::Io { path: spec.path.clone(), source })?;
            if bytes.len() as u64 > MAX_ARRAY_BYTES {
                return Err(Error::input(
                    &spec.path,
                    None,
                    format!(
                        "larger than {} MiB as one JSON array: write one entry per line instead (e.g. jq -c '.[]'), which is read a line at a time",
                        MAX_ARRAY_BYTES >> 20
                    ),
                ));
            }
            let entries: Vec<Value> = serde_json::from_slice(&bytes).map_err(|e| {
                Error::input(&spec.path, Some(e.line() as u64), format!("not a JSON array of stream entries: {e}"))
            })?;
            drop(bytes);
            // An export of an empty stream: the file holds a document, `[]`, and no entry. Not
            // an empty file (that is an error, `ingest::empty`): its one line is accounted, and
            // the report says the export holds no entries (`warnings::empty_inputs`).
            if entries.is_empty() {
                summary.lines += 1;
                summary.ignore(NO_ENTRIES);
                return Ok(());
            }
            for (index, value) in entries.into_iter().enumerate() {
                summary.lines += 1;
                let entry = json_entry(spec, index as u64 + 1, &value)?;
                accept(spec, source, &entry, events, summary)?;
            }
            return Ok(());
        }
        let mut lines = Lines::new(input, spec.max_line_bytes);
        while let Some((line, text)) = lines.next_line(&spec.path, summary)? {
            summary.lines += 1;
            if text.trim().is_empty() {
                summary.ignore("blank");
                continue;
            }
            let value: Value = serde_json::from_str(text).map_err(|e| {
                Error::input(
                    &spec.path,
                    Some(line),
                    format!(
                        "not a JSON stream entry: {}; expected {{\"id\": \"<ms>-<seq>\", \"fields\": {{...}}}}",
                        crate::ingest::io::lines::json_problem(&e, text)
                    ),
                )
            })?;
            let entry = json_entry(spec, line, &value)?;
            accept(spec, source, &entry, events, summary)?;
        }
        Ok(())
    }
}

/// `{"id": "...", "fields": {"event": "active", ...}}`; `fields` may also be the flat
/// `["event", "active", ...]` list XRANGE returns.
fn json_entry(spec: &SourceSpec, line: u64, value: &Value) -> Result<Entry> {
    let bad = |what: &str| {
        Error::input(
            &spec.path,
            Some(line),
            format!("{what}: expected {{\"id\": \"<ms>-<seq>\", \"fields\": {{\"event\": ..., \"jobId\": ...}}}}"),
        )
    };
    let object: &Map<String, Value> = value.as_object().ok_or_else(|| bad("stream entry is not an object"))?;
    // A row of BullMQ's PostgreSQL event table in an array spread over many lines (the table's own
    // reader takes one row a line): said as what it is.
    if object.contains_key("created_at_ms") && object.contains_key("event") && !object.contains_key("fields") {
        return Err(Error::input(
            &spec.path,
            Some(line),
            "a row of BullMQ's PostgreSQL event table, in a JSON array spread over several lines: write one row a line (jq -c '.[]', or psql -At) and it is read as the table (format pg-event-table, leasetrace docs inputs/postgres)",
        ));
    }
    let id = object.get("id").and_then(Value::as_str).ok_or_else(|| bad("stream entry without an 'id' string"))?;
    let fields = match object.get("fields") {
        Some(Value::Object(map)) => map.iter().map(|(k, v)| (k.clone(), scalar(v))).collect(),
        Some(Value::Array(list)) => {
            list.chunks(2).map(|pair| (scalar(&pair[0]), pair.get(1).map(scalar).unwrap_or_default())).collect()
        }
        _ => return Err(bad("stream entry without 'fields'")),
    };
    Ok(Entry { id: id.to_string(), fields, line, span: 1, raw: value.to_string() })
}

fn scalar(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Why the one line of an events export `[]` is ignored: it holds no stream entry.
pub use crate::model::input::NO_ENTRIES;

pub struct XrangeText;

impl EventFormat for XrangeText {
    fn name(&self) -> &'static str {
        "xrange-text"
    }

    fn kind(&self) -> SourceKind {
        SourceKind::BullmqEvents
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["txt"]
    }

    fn sniff(&self, first_line: &str) -> bool {
        looks_like_stream_id(&token_of(first_line))
    }

    fn read(
        &self,
        spec: &SourceSpec,
        source: u16,
        input: Box<dyn BufRead + Send>,
        events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<()> {
        let mut lines = Lines::new(input, spec.max_line_bytes).pairs();
        let mut current: Option<Entry> = None;
        // Within an entry tokens come in field/value pairs; a stream id can only start a new
        // entry where a field name is expected.
        let mut pending_field: Option<String> = None;
        while let Some((line, text)) = lines.next_line(&spec.path, summary)? {
            summary.lines += 1;
            if text.trim().is_empty() {
                summary.ignore("blank");
                continue;
            }
            let token = token_of(text);
            if pending_field.is_none() && looks_like_stream_id(&token) {
                if let Some(entry) = current.take() {
                    accept(spec, source, &entry, events, summary)?;
                }
                current = Some(Entry { id: token, fields: Vec::new(), line, span: 1, raw: text.trim().to_string() });
                continue;
            }
            let Some(entry) = current.as_mut() else {
                return Err(Error::input(
                    &spec.path,
                    Some(line),
                    format!(
                        "expected a stream id such as 1791333180000-0 before '{}' (is this redis-cli XRANGE output?)",
                        text.trim()
                    ),
                ));
            };
            entry.raw.push(' ');
            entry.raw.push_str(text.trim());
            entry.span += 1;
            match pending_field.take() {
                None => pending_field = Some(token),
                Some(name) => entry.fields.push((name, token)),
            }
        }
        if pending_field.is_some() {
            return Err(Error::input(
                &spec.path,
                Some(summary.lines),
                "stream entry ends with a field name and no value",
            ));
        }
        if let Some(entry) = current.take() {
            accept(spec, source, &entry, events, summary)?;
        }
        Ok(())
    }
}

/// The token a redis-cli line holds: without the `1) 2) ` numbering of the terminal form and
/// without its quotes.
fn token_of(line: &str) -> String {
    let mut rest = line.trim();
    loop {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && rest[digits..].starts_with(") ") {
            rest = rest[digits + 2..].trim_start();
        } else {
            break;
        }
    }
    match rest.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        Some(quoted) => quoted.replace("\\\"", "\"").replace("\\\\", "\\"),
        None => rest.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn read(format: &dyn EventFormat, text: &str) -> Result<(Vec<Event>, InputSummary)> {
        let mut spec = SourceSpec::new(SourceKind::BullmqEvents, PathBuf::from("events"), None, "--log-tz".into());
        spec.queue = Some("pr-review".into());
        let mut events = Vec::new();
        let mut summary = InputSummary::new("events", "bullmq-events", format.name(), None);
        format.read(&spec, 0, Box::new(std::io::Cursor::new(text.to_string())), &mut events, &mut summary)?;
        Ok((events, summary))
    }

    const JSON: &str = r#"[
      {"id": "1791333180000-0", "fields": {"event": "active", "jobId": "repeat:pr-review-sweep:1791333180000", "prev": "waiting"}},
      {"id": "1791334358021-0", "fields": {"event": "waiting", "jobId": "repeat:pr-review-sweep:1791333180000", "prev": "active"}},
      {"id": "1791334358021-1", "fields": {"event": "stalled", "jobId": "repeat:pr-review-sweep:1791333180000"}},
      {"id": "1791334358100-0", "fields": {"event": "drained"}},
      {"id": "1791334380000-0", "fields": {"event": "failed", "jobId": "42", "failedReason": "job stalled more than allowable limit", "prev": "active"}}
    ]"#;

    #[test]
    fn json_array_entries_become_events_at_the_stream_time() {
        let (events, summary) = read(&XrangeJson, JSON).unwrap();
        let kinds: Vec<EventKind> = events.iter().map(|e| e.kind).collect();
        assert_eq!(kinds, [EventKind::JobActive, EventKind::JobWaiting, EventKind::JobStalled, EventKind::JobFailed]);
        assert_eq!(events[0].at().to_rfc3339(), "2026-10-07T00:33:00+00:00");
        assert_eq!(events[0].slot.map(|s| s.to_rfc3339()).as_deref(), Some("2026-10-07T00:33:00+00:00"));
        assert_eq!(events[0].queue.as_deref(), Some("pr-review"));
        assert_eq!(events[3].detail_str(), Some("job stalled more than allowable limit"));
        assert_eq!((summary.lines, summary.used, summary.ignored), (5, 4, 1));
        assert_eq!(summary.ignored_by_reason["stream event 'drained' not used"], 1);
    }

    #[test]
    fn an_empty_array_is_one_line_that_holds_no_entries() {
        for text in ["[]", " [ ]\n", "[\n]\n"] {
            let (events, summary) = read(&XrangeJson, text).unwrap();
            assert!(events.is_empty());
            assert_eq!((summary.lines, summary.ignored), (1, 1), "{text:?}");
            assert_eq!(summary.ignored_by_reason[NO_ENTRIES], 1);
        }
    }

    #[test]
    fn json_lines_and_flat_field_lists_are_read_too() {
        let text = "{\"id\":\"1791333180000-0\",\"fields\":[\"event\",\"active\",\"jobId\",\"7\"]}\n\n";
        let (events, summary) = read(&XrangeJson, text).unwrap();
        assert_eq!(events[0].job_id.as_deref(), Some("7"));
        assert_eq!((summary.lines, summary.used, summary.ignored), (2, 1, 1));
        let error = read(&XrangeJson, "{\"id\":\"soon\",\"fields\":{\"event\":\"active\"}}\n").unwrap_err().to_string();
        assert!(error.starts_with("events:1: 'soon' is not a stream id"), "{error}");
    }

    #[test]
    fn redis_cli_plain_output_is_read_by_pairs() {
        let text = "1791333180000-0\nevent\nactive\njobId\n1791333180000-5\nprev\nwaiting\n1791333181000-0\nevent\ncompleted\njobId\n7\nreturnvalue\nnull\n";
        let (events, summary) = read(&XrangeText, text).unwrap();
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].job_id.as_deref(), Some("1791333180000-5"), "a value shaped like an id stays a value");
        assert_eq!(events[1].kind, EventKind::JobCompleted);
        assert_eq!((summary.lines, summary.used, summary.ignored, summary.rejected), (14, 14, 0, 0));
    }

    #[test]
    fn redis_cli_terminal_output_is_read_too() {
        let text = "1) 1) \"1791333180000-0\"\n   2) 1) \"event\"\n      2) \"active\"\n      3) \"jobId\"\n      4) \"7\"\n2) 1) \"1791333181000-0\"\n   2) 1) \"event\"\n      2) \"stalled\"\n      3) \"jobId\"\n      4) \"7\"\n";
        let (events, _) = read(&XrangeText, text).unwrap();
        assert_eq!(events.iter().map(|e| e.kind).collect::<Vec<_>>(), [EventKind::JobActive, EventKind::JobStalled]);
        assert!(XrangeText.sniff("1) 1) \"1791333180000-0\""));
        assert!(!XrangeText.sniff("2026-10-07 09:33:00 INFO x"));
    }

    #[test]
    fn text_that_is_not_xrange_output_is_an_error_with_its_line() {
        let error = read(&XrangeText, "hello\n").unwrap_err().to_string();
        assert!(error.starts_with("events:1: expected a stream id"), "{error}");
    }
}
