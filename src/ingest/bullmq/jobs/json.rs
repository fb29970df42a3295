//! Job hashes as JSON (`hgetall-json`): what a script writes after `HGETALL`, in any of
//! - records, one per line (JSON Lines), one after another (`jq` without `-c`), or in an array:
//!   `{"key": "bull:q:42", "fields": {...}}`, or `{"key": ..., "id": "42", "state": "failed",
//!   "hash": {...}}` (`fields`/`hash` may also be the flat `[field, value, ...]` list HGETALL
//!   returns);
//! - one object keyed by Redis key: `{"bull:q:42": {...fields...}, ...}`;
//! - BullMQ's own job JSON, `JSON.stringify(await queue.getJobs())`: `{"id": "42", "name": ...,
//!   "timestamp": 1791333180000, "queueQualifiedName": "bull:q", ...}`.
//!
//! The file is read a value at a time, never whole: each record (at most `MAX_RECORD_BYTES`) is cut
//! out of the byte stream by its brackets, with the lines it spans, and parsed alone. A top-level
//! object is a keyed dump when its first member's name is a Redis key (it holds a `:`; a record's
//! member names never do), and a record otherwise.

use std::io::BufRead;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::model::{Event, InputSummary};

use crate::ingest::bullmq::jobs::{Jobs, MAX_RECORD_BYTES, Record, Reply, evidence};
use crate::ingest::{EventFormat, SourceKind, SourceSpec};

const EXPECTED: &str = "expected job records such as {\"key\": \"bull:<queue>:<id>\", \"fields\": {...HGETALL...}} (an array, or one per line), or one object keyed by Redis key";

/// For a file named `.json` that holds redis-cli text.
const TEXT_HINT: &str = " (for redis-cli output, declare format = \"hgetall-text\" for the source)";

/// What lines outside the records are, for the account.
const BETWEEN: &str = "JSON punctuation or blank";

pub struct HgetallJson;

impl EventFormat for HgetallJson {
    fn name(&self) -> &'static str {
        "hgetall-json"
    }

    fn kind(&self) -> SourceKind {
        SourceKind::BullmqJobs
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["jsonl", "ndjson", "json"]
    }

    fn sniff(&self, first_line: &str) -> bool {
        // `{bull}:q:42` (a hash-tagged key that starts redis-cli text) is not JSON.
        first_line.starts_with('[')
            || first_line.strip_prefix('{').is_some_and(|rest| {
                rest.trim_start().is_empty() || rest.trim_start().starts_with('"') || rest.trim_start().starts_with('}')
            })
    }

    fn read(
        &self,
        spec: &SourceSpec,
        source: u16,
        input: Box<dyn BufRead + Send>,
        events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<()> {
        read(spec, source, input, events, summary, MAX_RECORD_BYTES)
    }
}

fn read(
    spec: &SourceSpec,
    source: u16,
    input: Box<dyn BufRead + Send>,
    events: &mut Vec<Event>,
    summary: &mut InputSummary,
    cap: usize,
) -> Result<()> {
    let mut scanner = Scanner::new(input, spec, cap);
    let mut jobs = Jobs::new(spec, source, events, summary);
    while let Some(first) = scanner.skip_whitespace()? {
        match first {
            b'[' => {
                scanner.bump()?;
                read_array(spec, &mut scanner, &mut jobs)?;
            }
            b'{' => read_object(spec, &mut scanner, &mut jobs)?,
            _ => return Err(scanner.error(scanner.line, format!("not JSON here; {EXPECTED}{TEXT_HINT}"))),
        }
    }
    let lines = scanner.lines();
    jobs.finish(lines, BETWEEN)
}

/// The elements of an array whose `[` was read, each a record.
fn read_array(spec: &SourceSpec, scanner: &mut Scanner, jobs: &mut Jobs) -> Result<()> {
    loop {
        match scanner.skip_whitespace()? {
            Some(b']') => {
                scanner.bump()?;
                return Ok(());
            }
            None => return Err(scanner.error(scanner.line, "the JSON array does not end (no ']')".into())),
            Some(_) => {}
        }
        let (text, start, end) = scanner.value(Vec::new())?;
        let record = record(spec, start, end, &parse(scanner, &text, start)?, None)?;
        jobs.take(&record, BETWEEN)?;
        match scanner.skip_whitespace()? {
            Some(b',') => {
                scanner.bump()?;
            }
            Some(b']') => {}
            _ => return Err(scanner.error(scanner.line, "expected ',' or ']' after an array element".into())),
        }
    }
}

/// A top-level object: a record, or a dump keyed by Redis key (see the module's comment).
fn read_object(spec: &SourceSpec, scanner: &mut Scanner, jobs: &mut Jobs) -> Result<()> {
    let start = scanner.line;
    let mut head = vec![scanner.bump()?.unwrap_or(b'{')];
    let name_at = scanner.skip_whitespace()?;
    if name_at != Some(b'"') {
        // `{}` or not JSON: the object is read whole, as a record, and says which.
        let (text, start, end) = scanner.value_from(head, 1, start)?;
        let value = parse(scanner, &text, start)?;
        if value.as_object().is_some_and(Map::is_empty) {
            jobs.gap(end, "empty JSON object");
            return Ok(());
        }
        return jobs.take(&record(spec, start, end, &value, None)?, BETWEEN);
    }
    let (name_text, _, _) = scanner.value(Vec::new())?;
    let name: String = serde_json::from_slice(&name_text)
        .map_err(|e| scanner.error(scanner.line, format!("not JSON: {e}; {EXPECTED}")))?;
    if !name.contains(':') {
        // A record: read on from its first member's name.
        head.extend_from_slice(&name_text);
        let (text, _, end) = scanner.value_from(head, 1, start)?;
        let value = parse(scanner, &text, start)?;
        return jobs.take(&record(spec, start, end, &value, None)?, BETWEEN);
    }
    // Keyed by Redis key: each member is a record.
    let mut name = name;
    loop {
        if scanner.skip_whitespace()? != Some(b':') {
            return Err(scanner.error(scanner.line, format!("expected ':' after \"{name}\"")));
        }
        scanner.bump()?;
        scanner.skip_whitespace()?;
        let (text, start, end) = scanner.value(Vec::new())?;
        let value = parse(scanner, &text, start)?;
        jobs.take(&record(spec, start, end, &value, Some(name))?, BETWEEN)?;
        match scanner.skip_whitespace()? {
            Some(b',') => {
                scanner.bump()?;
            }
            Some(b'}') => {
                scanner.bump()?;
                return Ok(());
            }
            _ => {
                return Err(
                    scanner.error(scanner.line, "expected ',' or '}' after a member of the keyed object".into())
                );
            }
        }
        if scanner.skip_whitespace()? != Some(b'"') {
            return Err(scanner.error(scanner.line, "expected a Redis key in quotes".into()));
        }
        let (name_text, _, _) = scanner.value(Vec::new())?;
        name = serde_json::from_slice(&name_text)
            .map_err(|e| scanner.error(scanner.line, format!("not JSON: {e}; {EXPECTED}")))?;
    }
}

fn parse(scanner: &Scanner, text: &[u8], line: u64) -> Result<Value> {
    serde_json::from_slice(text).map_err(|e| {
        let at = line + e.line().saturating_sub(1) as u64;
        let hint = if text.contains(&0) || std::str::from_utf8(text).is_err() {
            "binary data (not UTF-8 text): is this the right file?".to_string()
        } else {
            format!("not JSON: {e}; {EXPECTED}{TEXT_HINT}")
        };
        scanner.error(at, hint)
    })
}

/// A JSON value as a hash field's value: strings as they are, other values as JSON (BullMQ's job
/// JSON has numbers and objects where a hash has strings); `null` as no value.
fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// The pairs of a hash given as an object or as HGETALL's flat list.
fn pairs(value: &Value, bad: &dyn Fn(String) -> Error) -> Result<Vec<(String, String)>> {
    match value {
        Value::Object(map) => Ok(map.iter().filter_map(|(k, v)| Some((k.clone(), scalar(v)?))).collect()),
        Value::Array(list) => {
            if list.len() % 2 == 1 {
                return Err(bad(format!(
                    "the flat field list has {} items: HGETALL lists fields and values in pairs",
                    list.len()
                )));
            }
            Ok(list.chunks(2).filter_map(|pair| Some((scalar(&pair[0])?, scalar(&pair[1])?))).collect())
        }
        _ => Err(bad("the hash is neither an object of fields nor a [field, value, ...] list".into())),
    }
}

/// Members of a record that describe it rather than being hash fields.
const RECORD_MEMBERS: &[&str] = &["key", "id", "state", "fields", "hash", "queueQualifiedName"];

/// The record a JSON value is; `map_key` is its key in an object keyed by Redis key.
fn record(spec: &SourceSpec, start: u64, end: u64, value: &Value, map_key: Option<String>) -> Result<Record> {
    let bad = |what: String| Error::input(&spec.path, Some(start), format!("{what}; {EXPECTED}"));
    let Value::Object(object) = value else {
        return Err(bad("a job record is not an object".into()));
    };
    let text = |name: &str| -> Result<Option<String>> {
        match object.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Number(n)) if name == "id" => Ok(Some(n.to_string())),
            Some(_) => Err(bad(format!("'{name}' is not a string"))),
        }
    };
    let hash = object.get("fields").or_else(|| object.get("hash"));
    let keyed = map_key.is_some();
    let (key, reply) = match (hash, map_key) {
        // `{key, fields}`, `{key, id, state, hash}`, or such a record as a keyed dump's member.
        (Some(hash), map_key) => (map_key.map_or_else(|| text("key"), |k| Ok(Some(k)))?, pairs(hash, &bad)?),
        // A keyed dump's member that is the hash itself.
        (None, Some(map_key)) => (Some(map_key), pairs(value, &bad)?),
        // A bare hash with its id: BullMQ's job JSON (`redis-cli --json` writes bare hashes too,
        // without their key: those are refused for want of an id).
        (None, None) if object.contains_key("name") || object.contains_key("timestamp") => {
            let fields = object
                .iter()
                .filter(|(k, _)| !RECORD_MEMBERS.contains(&k.as_str()))
                .filter_map(|(k, v)| Some((k.clone(), scalar(v)?)))
                .collect();
            (text("key")?, fields)
        }
        (None, None) if object.contains_key("key") => {
            return Err(bad("a job record without 'fields' or 'hash'".into()));
        }
        (None, None) => return Err(bad("not a job record (no 'key', 'fields', 'hash' or 'name')".into())),
    };
    let (id, state, qualified) = if keyed && hash.is_none() {
        (None, None, None)
    } else {
        (text("id")?, text("state")?, text("queueQualifiedName")?)
    };
    // A keyed dump's member is shown with its key, as it is written.
    let raw = match (keyed, &key) {
        (true, Some(key)) => format!("{}: {value}", Value::String(key.clone())),
        _ => value.to_string(),
    };
    Ok(Record { start, end, key, id, state, qualified, reply: Reply::Hash(reply), raw: evidence(raw) })
}

// ---------------------------------------------------------------- scanning

/// Bytes of the input, one at a time, with the line they are on.
struct Scanner<'a> {
    input: Box<dyn BufRead + Send>,
    spec: &'a SourceSpec,
    /// The line of the next byte (1-based).
    line: u64,
    /// Whether the last byte read was a line end (or none was read).
    at_line_start: bool,
    any: bool,
    /// The largest record read, in bytes.
    cap: usize,
}

impl<'a> Scanner<'a> {
    fn new(input: Box<dyn BufRead + Send>, spec: &'a SourceSpec, cap: usize) -> Self {
        Scanner { input, spec, line: 1, at_line_start: true, any: false, cap }
    }

    fn error(&self, line: u64, message: String) -> Error {
        Error::input(&self.spec.path, Some(line), message)
    }

    fn peek(&mut self) -> Result<Option<u8>> {
        let buffer = self.input.fill_buf().map_err(|source| Error::Io { path: self.spec.path.clone(), source })?;
        Ok(buffer.first().copied())
    }

    fn bump(&mut self) -> Result<Option<u8>> {
        let byte = self.peek()?;
        if let Some(byte) = byte {
            self.input.consume(1);
            self.any = true;
            if byte == b'\n' {
                self.line += 1;
                self.at_line_start = true;
            } else {
                self.at_line_start = false;
            }
        }
        Ok(byte)
    }

    /// Lines the input had: a last line without a line end counts.
    fn lines(&self) -> u64 {
        if !self.any {
            0
        } else if self.at_line_start {
            self.line - 1
        } else {
            self.line
        }
    }

    /// Skips JSON whitespace; the next byte, not consumed.
    fn skip_whitespace(&mut self) -> Result<Option<u8>> {
        while let Some(byte) = self.peek()? {
            if !matches!(byte, b' ' | b'\t' | b'\r' | b'\n') {
                return Ok(Some(byte));
            }
            self.bump()?;
        }
        Ok(None)
    }

    /// One JSON value from the next byte on: its bytes, and its first and last lines.
    fn value(&mut self, into: Vec<u8>) -> Result<(Vec<u8>, u64, u64)> {
        let start = self.line;
        let Some(first) = self.peek()? else {
            return Err(self.error(start, "the JSON ends where a value was expected".into()));
        };
        if first == b'"' {
            let mut text = into;
            self.push(&mut text, start)?;
            self.string_rest(&mut text, start)?;
            let end = self.line;
            return Ok((text, start, end));
        }
        if first == b'{' || first == b'[' {
            let mut text = into;
            self.push(&mut text, start)?;
            return self.value_from(text, 1, start);
        }
        // A number, `true`, `false` or `null`: up to the next delimiter.
        let mut text = into;
        while let Some(byte) = self.peek()? {
            if matches!(byte, b',' | b']' | b'}' | b' ' | b'\t' | b'\r' | b'\n') {
                break;
            }
            self.push(&mut text, start)?;
        }
        Ok((text, start, self.line))
    }

    /// The rest of an object or array of which `text` holds the start (from line `start`), `depth`
    /// brackets open.
    fn value_from(&mut self, mut text: Vec<u8>, mut depth: u32, start: u64) -> Result<(Vec<u8>, u64, u64)> {
        while depth > 0 {
            let Some(byte) = self.peek()? else {
                return Err(self.error(start, "the JSON value starting here does not end".into()));
            };
            self.push(&mut text, start)?;
            match byte {
                b'"' => self.string_rest(&mut text, start)?,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => depth -= 1,
                _ => {}
            }
        }
        // The line of the closing bracket (a line end is never the last byte of a value).
        Ok((text, start, self.line))
    }

    /// The rest of a string whose opening quote was read.
    fn string_rest(&mut self, text: &mut Vec<u8>, start: u64) -> Result<()> {
        loop {
            let Some(byte) = self.peek()? else {
                return Err(self.error(start, "a JSON string starting here does not end".into()));
            };
            self.push(text, start)?;
            match byte {
                b'\\' if self.peek()?.is_some() => self.push(text, start)?,
                b'"' => return Ok(()),
                _ => {}
            }
        }
    }

    fn push(&mut self, text: &mut Vec<u8>, start: u64) -> Result<()> {
        if text.len() >= self.cap {
            return Err(self.error(
                start,
                format!(
                    "the record starting here is larger than {}: leasetrace reads job hashes up to that size (drop large fields such as data and returnvalue from the export, e.g. with jq 'del(.fields.data, .fields.returnvalue)')",
                    crate::ingest::bullmq::jobs::size(self.cap)
                ),
            ));
        }
        if let Some(byte) = self.bump()? {
            text.push(byte);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EventKind;
    use std::path::PathBuf;

    fn read_as(text: &str, queue: Option<&str>) -> Result<(Vec<Event>, InputSummary)> {
        read_capped(text, queue, MAX_RECORD_BYTES)
    }

    fn read_capped(text: &str, queue: Option<&str>, cap: usize) -> Result<(Vec<Event>, InputSummary)> {
        let mut spec = SourceSpec::new(SourceKind::BullmqJobs, PathBuf::from("jobs.json"), None, String::new());
        spec.queue = queue.map(str::to_string);
        let mut events = Vec::new();
        let mut summary = InputSummary::new("jobs.json", "bullmq-jobs", "hgetall-json", None);
        super::read(&spec, 0, Box::new(std::io::Cursor::new(text.to_string())), &mut events, &mut summary, cap)?;
        Ok((events, summary))
    }

    fn read(text: &str) -> Result<(Vec<Event>, InputSummary)> {
        read_as(text, None)
    }

    /// (instant in ms, kind, job id, queue, worker, detail) of every event.
    fn shown(events: &[Event]) -> Vec<(i64, EventKind, String, String, String, String)> {
        events
            .iter()
            .map(|e| {
                (
                    e.at().timestamp_millis(),
                    e.kind,
                    e.job_id.as_deref().unwrap_or_default().to_string(),
                    e.queue.as_deref().unwrap_or_default().to_string(),
                    e.worker.as_deref().unwrap_or_default().to_string(),
                    e.detail_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    }

    fn accounted(summary: &InputSummary) -> (u64, u64, u64, u64) {
        assert_eq!(summary.lines, summary.used + summary.ignored + summary.rejected, "every line once");
        assert_eq!(summary.ignored_by_reason.values().sum::<u64>(), summary.ignored);
        (summary.lines, summary.used, summary.ignored, summary.rejected)
    }

    const FAILED: &str = r#"{"key":"bull:pr-review:42","fields":{"name":"review","timestamp":"1791333180000","processedOn":"1791333240000","finishedOn":"1791333240005","failedReason":"job stalled more than allowable limit","atm":"1","ats":"3","stc":"2","pb":"api-1"}}"#;

    #[test]
    fn a_failed_job_hash_yields_added_last_activation_and_failure() {
        let (events, summary) = read(&format!(
            "{FAILED}\n{{\"key\":\"bull:pr-review:meta\",\"fields\":{{\"opts.maxLenEvents\":\"10000\"}}}}\n"
        ))
        .unwrap();
        let kinds: Vec<EventKind> = events.iter().map(|e| e.kind).collect();
        assert_eq!(kinds, [EventKind::JobAdded, EventKind::JobActive, EventKind::JobFailed]);
        assert_eq!(events[1].detail_str(), Some("last activation (processedOn); ats=3 atm=1 stc=2"));
        assert_eq!(events[2].detail_str(), Some("job stalled more than allowable limit"));
        assert_eq!(events[2].queue.as_deref(), Some("pr-review"));
        assert_eq!(events[2].worker.as_deref(), Some("api-1"));
        assert_eq!(accounted(&summary), (2, 1, 1, 0));
        assert_eq!(summary.ignored_by_reason["BullMQ's ':meta' key, not a job"], 1);
    }

    #[test]
    fn every_json_shape_of_the_same_job_gives_the_same_events() {
        let (expected, _) = read(FAILED).unwrap();
        let fields = r#"{"name":"review","timestamp":"1791333180000","processedOn":"1791333240000","finishedOn":"1791333240005","failedReason":"job stalled more than allowable limit","atm":"1","ats":"3","stc":"2","pb":"api-1"}"#;
        let shapes = [
            format!("[\n  {FAILED}\n]\n"),
            format!("{{\"key\":\"bull:pr-review:42\",\"id\":\"42\",\"state\":\"failed\",\"hash\":{fields}}}\n"),
            format!("{{\n  \"bull:pr-review:42\": {fields}\n}}\n"),
            "{\"key\":\"bull:pr-review:42\",\"fields\":[\"name\",\"review\",\"timestamp\",\"1791333180000\",\"processedOn\",\"1791333240000\",\"finishedOn\",\"1791333240005\",\"failedReason\",\"job stalled more than allowable limit\",\"atm\",\"1\",\"ats\",\"3\",\"stc\",\"2\",\"pb\",\"api-1\"]}".to_string(),
            // BullMQ's job JSON: numbers, long names, the queue apart.
            r#"[{"name":"review","data":{},"id":"42","attemptsStarted":3,"attemptsMade":1,"stalledCounter":2,"timestamp":1791333180000,"queueQualifiedName":"bull:pr-review","finishedOn":1791333240005,"processedOn":1791333240000,"failedReason":"job stalled more than allowable limit","returnvalue":null,"processedBy":"api-1"}]"#.to_string(),
        ];
        for shape in shapes {
            let (events, summary) = read(&shape).unwrap_or_else(|e| panic!("{shape}: {e}"));
            assert_eq!(shown(&events), shown(&expected), "{shape}");
            let (lines, _, _, rejected) = accounted(&summary);
            assert_eq!((lines, rejected), (shape.trim_end().lines().count() as u64, 0), "{shape}");
        }
    }

    #[test]
    fn pretty_records_count_their_lines_and_cite_their_first() {
        let text = "[\n  {\n    \"key\": \"bull:q:1\",\n    \"fields\": {\"name\": \"n\", \"timestamp\": \"1791333180000\"}\n  },\n  {\n    \"key\": \"bull:q:meta\",\n    \"fields\": {\"version\": \"bullmq:5.81.5\"}\n  }\n]\n";
        let (events, summary) = read(text).unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].origin().line, 2);
        // Lines 2-5 the job, 6-9 the meta hash, `[` and `]` between.
        assert_eq!(accounted(&summary), (10, 4, 6, 0));
        assert_eq!(summary.ignored_by_reason[BETWEEN], 2);
        assert_eq!(
            summary.texts.kept(2),
            Some(r#"{"key":"bull:q:1","fields":{"name":"n","timestamp":"1791333180000"}}"#)
        );
    }

    #[test]
    fn objects_one_after_another_as_jq_writes_them() {
        let text = "{\n  \"key\": \"bull:q:1\",\n  \"fields\": {\"name\": \"n\", \"timestamp\": \"1791333180000\"}\n}\n{\n  \"key\": \"bull:q:2\",\n  \"fields\": {\"name\": \"n\", \"timestamp\": \"1791333180001\"}\n}\n";
        let (events, summary) = read(text).unwrap();
        assert_eq!(
            events.iter().map(|e| (e.job_id.as_deref().unwrap(), e.origin().line)).collect::<Vec<_>>(),
            [("1", 1), ("2", 5)]
        );
        assert_eq!(accounted(&summary), (8, 8, 0, 0));
    }

    #[test]
    fn records_on_one_line_share_its_evidence_which_names_them_all() {
        let text = r#"[{"key":"bull:q:1","fields":{"name":"n","timestamp":"1791333180000"}},{"key":"bull:q:2","fields":{"name":"n","timestamp":"1791333180001"}}]"#;
        let (events, summary) = read(text).unwrap();
        assert_eq!(events.iter().map(|e| e.job_id.as_deref().unwrap()).collect::<Vec<_>>(), ["1", "2"]);
        assert_eq!(accounted(&summary), (1, 1, 0, 0));
        let kept = summary.texts.kept(1).unwrap();
        assert!(kept.starts_with("2 job records start on this line: {\"key\":\"bull:q:1\""), "{kept}");
        assert!(kept.contains("bull:q:2"), "{kept}");
    }

    #[test]
    fn a_keyed_dump_ignores_bullmqs_other_hashes_with_their_reason() {
        let text = "{\n  \"bull:q:7\": {\"name\": \"n\", \"timestamp\": \"1791333180000\"},\n  \"bull:q:meta\": {\"opts.maxLenEvents\": \"10000\"},\n  \"bull:q:repeat:sweep\": {\"name\": \"sweep\", \"every\": \"60000\"},\n  \"bull:q:7:processed\": {}\n}\n";
        let (events, summary) = read(text).unwrap();
        assert_eq!(events[0].job_id.as_deref(), Some("7"));
        assert_eq!(accounted(&summary), (6, 1, 5, 0));
        assert_eq!(summary.ignored_by_reason["job scheduler hash (':repeat:<scheduler id>'), not a job"], 1);
        assert_eq!(summary.ignored_by_reason["BullMQ's ':processed' key, not a job"], 1);
        assert!(summary.notes.is_empty(), "{:?}", summary.notes);
        assert_eq!(summary.texts.kept(2), Some(r#""bull:q:7": {"name":"n","timestamp":"1791333180000"}"#));
    }

    #[test]
    fn the_state_decides_how_a_job_ended_and_must_be_bullmqs() {
        // A return value and a failure reason: the fields alone would say completed.
        let line = r#"{"key":"bull:q:7","id":"7","state":"failed","hash":{"name":"n","timestamp":"1791333180000","finishedOn":"1791333180100","returnvalue":"null","failedReason":"boom"}}"#;
        let (events, _) = read(line).unwrap();
        assert_eq!(events.last().map(|e| (e.kind, e.detail_str())), Some((EventKind::JobFailed, Some("boom"))));
        let (events, summary) = read(&line.replace("\"failed\"", "\"finished\"")).unwrap();
        assert!(events.is_empty());
        assert_eq!(accounted(&summary), (1, 0, 0, 1));
        assert!(
            summary.rejections[0].reason.contains("state 'finished' is not a BullMQ job state"),
            "{:?}",
            summary.rejections
        );
    }

    #[test]
    fn records_that_name_no_job_are_rejected_with_their_line() {
        let text = format!(
            "{FAILED}\n{{\"name\":\"n\",\"timestamp\":\"1791333180000\"}}\n{{\"key\":\"bull:q\",\"fields\":{{\"name\":\"n\",\"timestamp\":\"1\"}}}}\n{{\"key\":\"bull:q:8\",\"id\":\"9\",\"fields\":{{\"name\":\"n\",\"timestamp\":\"1\"}}}}\n{FAILED}\n"
        );
        let (events, summary) = read(&text).unwrap();
        assert_eq!(events.len(), 3, "the first record only");
        assert_eq!(accounted(&summary), (5, 1, 0, 4));
        let reasons: Vec<(u64, &str)> = summary.rejections.iter().map(|r| (r.line, r.reason.as_str())).collect();
        assert!(reasons[0].1.contains("without its key or id"), "{reasons:?}");
        assert!(reasons[1].1.contains("is not a job key"), "{reasons:?}");
        assert!(reasons[2].1.contains("does not end with the job id '9'"), "{reasons:?}");
        assert_eq!(reasons[3], (5, "job 42 was read already, at line 1: one record per job (two dumps in one file?)"));
    }

    #[test]
    fn malformed_json_is_an_error_naming_the_line() {
        let error = |text: &str| read(text).unwrap_err().to_string();
        assert!(
            error(&format!("{FAILED}\n{{\"key\": \"bull:q:1\", \"fields\": \n")).starts_with("jobs.json:2: "),
            "unterminated"
        );
        let e = error("[\n  {\"key\": \"bull:q:1\", \"fields\": {\"name\": \"n\",}}\n]\n");
        assert!(e.starts_with("jobs.json:2: not JSON"), "{e}");
        let e = error(
            "{\"key\":\"bull:q:7\",\"fields\":{\"name\":\"n\",\"timestamp\":\"1791333180000\",\"processedOn\":\"soon\"}}\n",
        );
        assert!(e.starts_with("jobs.json:1: job 7: 'processedOn' is 'soon'"), "{e}");
        let e = error("[{\"key\":\"bull:q:7\"}]");
        assert!(e.contains("a job record without 'fields' or 'hash'"), "{e}");
        let e = error("{\"key\":\"bull:q:7\",\"fields\":[\"name\"]}\n");
        assert!(e.contains("has 1 items"), "{e}");
        let e = error("bull:q:7\nname\n");
        assert!(e.starts_with("jobs.json:1: not JSON here"), "{e}");
    }

    #[test]
    fn a_dump_without_jobs_and_ambiguous_keys_are_said() {
        let (_, summary) = read("{\"key\":\"bull:q:meta\",\"fields\":{\"version\":\"bullmq:5.81.5\"}}\n").unwrap();
        // Not a job, but the version BullMQ's Queue wrote, kept as evidence with its line.
        assert_eq!(summary.meta_versions, [("5.81.5".to_string(), 1)]);
        assert_eq!(summary.notes.len(), 1);
        assert!(
            summary.notes[0].starts_with("no job hash in this file (lines ignored: 1 BullMQ's ':meta' key"),
            "{:?}",
            summary.notes
        );
        let (events, summary) =
            read("{\"key\":\"bull:q:a:b:c\",\"fields\":{\"name\":\"n\",\"timestamp\":\"1791333180000\"}}\n").unwrap();
        assert_eq!(events[0].job_id.as_deref(), Some("a:b:c"));
        assert!(
            summary.notes[0].starts_with("1 job key(s) could be split two ways (e.g. 'bull:q:a:b:c')"),
            "{:?}",
            summary.notes
        );
        let (events, summary) = read_as(
            "{\"key\":\"bull:q:a:b:c\",\"fields\":{\"name\":\"n\",\"timestamp\":\"1791333180000\"}}\n",
            Some("b"),
        )
        .unwrap();
        assert_eq!(events[0].job_id.as_deref(), Some("c"));
        assert!(summary.notes.is_empty());
        let two_queues = "{\"key\":\"bull:a:1\",\"fields\":{\"name\":\"n\",\"timestamp\":\"1791333180000\"}}\n{\"key\":\"bull:b:1\",\"fields\":{\"name\":\"n\",\"timestamp\":\"1791333180000\"}}\n";
        let (_, summary) = read(two_queues).unwrap();
        assert!(summary.notes[0].starts_with("1 job id(s) appear in more than one queue"), "{:?}", summary.notes);
    }

    #[test]
    fn a_record_over_the_cap_is_refused_at_its_line() {
        let big = format!("{FAILED}\n{{\"key\":\"bull:q:2\",\"fields\":{{\"data\":\"{}\"}}}}\n", "x".repeat(400));
        let error = read_capped(&big, None, 400).unwrap_err().to_string();
        assert!(error.starts_with("jobs.json:2: the record starting here is larger than 400 bytes"), "{error}");
        assert_eq!(crate::ingest::bullmq::jobs::size(MAX_RECORD_BYTES), "64 MiB");
    }

    #[test]
    fn sniffs_json_but_not_a_hash_tagged_key() {
        assert!(HgetallJson.sniff("[{\"key\": 1}]"));
        assert!(HgetallJson.sniff("{\"key\": 1}"));
        assert!(HgetallJson.sniff("{"));
        assert!(!HgetallJson.sniff("{bull}:notify:1"));
    }
}
