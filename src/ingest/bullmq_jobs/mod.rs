//! BullMQ job hashes (`HGETALL bull:<queue>:<id>`), exported one job per JSON line:
//! `{"key": "bull:pr-review:42", "fields": {"name": "...", "timestamp": "...", ...}}`
//! (a JSON array of such objects, or one object mapping keys to field maps, is read too).
//!
//! A hash keeps only the latest value of each field: `processedOn` is overwritten on every
//! activation, so a hash shows the last activation only, and detectors take activations from it
//! only when no other channel saw the job. Field names follow BullMQ v5 (`atm`, `ats`, `stc`,
//! `defa`, `pb`); the older `attemptsMade` and `stalledCounter` are read as well.

use std::io::{BufRead, Read};

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::model::{Channel, Event, EventKind, InputSummary, Moment, Origin, Text};
use crate::time;

use super::{EventFormat, SourceKind, SourceSpec};

/// The slot a scheduled round's job id carries: `repeat:<scheduler or hash>:<slot millis>`.
pub fn repeat_slot(job_id: &str) -> Option<DateTime<Utc>> {
    let rest = job_id.strip_prefix("repeat:")?;
    let (_, millis) = rest.rsplit_once(':')?;
    if millis.len() < 12 || !millis.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    DateTime::from_timestamp_millis(millis.parse().ok()?)
}

/// `bull:<queue>:<id>` → (queue, id). Ids may themselves contain `:`.
fn split_key(key: &str) -> Option<(&str, &str)> {
    let (_prefix, rest) = key.split_once(':')?;
    let (queue, id) = rest.split_once(':')?;
    (!queue.is_empty() && !id.is_empty()).then_some((queue, id))
}

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
        first_line.starts_with('{') || first_line.starts_with('[')
    }

    fn read(
        &self,
        spec: &SourceSpec,
        source: u16,
        mut input: Box<dyn BufRead + Send>,
        events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<()> {
        let mut text = String::new();
        input
            .read_to_string(&mut text)
            .map_err(|_| Error::input(&spec.path, None, "binary data (not UTF-8 text): expected JSON job hashes"))?;
        let records = records(spec, &text)?;
        for (line, key, fields, raw) in records {
            summary.lines += 1;
            let Some((queue, job_id)) = split_key(&key) else {
                summary.reject(line, format!("key '{key}' is not a job key: expected <prefix>:<queue>:<job id>"));
                continue;
            };
            if fields.get("name").is_none() {
                summary.ignore("not a job hash (no 'name' field)");
                continue;
            }
            let made = job_events(spec, source, line, queue, job_id, &fields)?;
            if made.is_empty() {
                summary.ignore("job hash without timestamps");
                continue;
            }
            summary.used();
            summary.texts.keep(super::line_of(spec, line)?, &raw);
            events.extend(made);
        }
        Ok(())
    }
}

type Record = (u64, String, Map<String, Value>, String);

/// The job records of the file, each with the line it starts on.
fn records(spec: &SourceSpec, text: &str) -> Result<Vec<Record>> {
    let trimmed = text.trim_start();
    let bad = |line: u64, what: String| Error::input(&spec.path, Some(line), what);
    let expected = "expected {\"key\": \"bull:<queue>:<id>\", \"fields\": {...HGETALL...}} per line";
    let one = |line: u64, value: Value| -> Result<Record> {
        let raw = value.to_string();
        let Value::Object(mut object) = value else {
            return Err(bad(line, format!("a job record is not an object: {expected}")));
        };
        let key = object.get("key").and_then(Value::as_str).map(str::to_string);
        let Some(Value::Object(fields)) = object.remove("fields") else {
            return Err(bad(line, format!("a job record without 'fields': {expected}")));
        };
        let key = key.ok_or_else(|| bad(line, format!("a job record without 'key': {expected}")))?;
        Ok((line, key, fields, raw))
    };
    let whole = || -> Result<Value> {
        serde_json::from_str(text).map_err(|e| bad(e.line() as u64, format!("not JSON: {e}; {expected}")))
    };
    if trimmed.starts_with('[') {
        let Value::Array(items) = whole()? else { unreachable!("starts with '['") };
        return items.into_iter().enumerate().map(|(i, v)| one(i as u64 + 1, v)).collect();
    }
    let first_line = trimmed.lines().next().unwrap_or_default();
    if serde_json::from_str::<Value>(first_line).is_ok() {
        let mut out = Vec::new();
        for (index, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let number = index as u64 + 1;
            let value: Value =
                serde_json::from_str(line).map_err(|e| bad(number, format!("not JSON: {e}; {expected}")))?;
            out.push(one(number, value)?);
        }
        return Ok(out);
    }
    // One object mapping each key to its fields.
    let Value::Object(map) = whole()? else {
        return Err(bad(1, format!("not a JSON object of job hashes; {expected}")));
    };
    let mut out = Vec::new();
    for (key, fields) in map {
        let raw = fields.to_string();
        let Value::Object(fields) = fields else {
            return Err(bad(1, format!("the value of '{key}' is not an object of hash fields")));
        };
        let line = text.lines().position(|l| l.contains(&format!("\"{key}\""))).map_or(1, |i| i as u64 + 1);
        out.push((line, key, fields, raw));
    }
    Ok(out)
}

fn text_field<'a>(fields: &'a Map<String, Value>, names: &[&str]) -> Option<std::borrow::Cow<'a, str>> {
    names.iter().find_map(|name| match fields.get(*name)? {
        Value::String(s) if !s.is_empty() => Some(std::borrow::Cow::Borrowed(s.as_str())),
        Value::Number(n) => Some(std::borrow::Cow::Owned(n.to_string())),
        _ => None,
    })
}

#[allow(clippy::too_many_arguments)]
fn job_events(
    spec: &SourceSpec,
    source: u16,
    line: u64,
    queue: &str,
    job_id: &str,
    fields: &Map<String, Value>,
) -> Result<Vec<Event>> {
    let millis = |name: &str| -> Result<Option<Moment>> {
        let Some(text) = text_field(fields, &[name]) else { return Ok(None) };
        let value: i64 = text.parse().map_err(|_| {
            Error::input(
                &spec.path,
                Some(line),
                format!("job {job_id}: '{name}' is '{text}', expected epoch milliseconds"),
            )
        })?;
        DateTime::from_timestamp_millis(value).and_then(|at| time::moment(at).ok()).map(Some).ok_or_else(|| {
            Error::input(
                &spec.path,
                Some(line),
                format!("job {job_id}: '{name}' is '{text}', outside the years 1677-2262 that a timeline holds"),
            )
        })
    };
    let counters: Vec<String> =
        [("ats", &["ats"][..]), ("atm", &["atm", "attemptsMade"]), ("stc", &["stc", "stalledCounter"])]
            .iter()
            .filter_map(|(label, names)| text_field(fields, names).map(|v| format!("{label}={v}")))
            .collect();
    // One hash, one line: its events share their origin.
    let origin = Origin { channel: Channel::JobHash, source, line: super::line_of(spec, line)? };
    let make = |at: Moment, kind: EventKind, detail: Option<String>| {
        let mut event = Event::new(at, kind, origin);
        let scope = crate::model::Scope {
            job_id: Some(job_id.into()),
            job_name: text_field(fields, &["name"]).as_deref().map(Text::from),
            queue: Some(queue.into()),
            run_id: None,
            slot: repeat_slot(job_id),
            worker: text_field(fields, &["pb"]).as_deref().map(Text::from),
        };
        event.set_scope(scope.interned());
        event.set_detail(detail.as_deref().map(Text::from));
        event
    };
    let mut out = Vec::new();
    if let Some(at) = millis("timestamp")? {
        out.push(make(at, EventKind::JobAdded, None));
    }
    if let Some(at) = millis("processedOn")? {
        let mut detail = String::from("last activation (processedOn)");
        if !counters.is_empty() {
            detail = format!("{detail}; {}", counters.join(" "));
        }
        out.push(make(at, EventKind::JobActive, Some(detail)));
    }
    if let Some(at) = millis("finishedOn")? {
        // The hash does not say which set the job ended in: a return value means completed,
        // otherwise a failure reason means failed.
        let failed = text_field(fields, &["returnvalue"]).is_none() && text_field(fields, &["failedReason"]).is_some();
        if failed {
            out.push(make(
                at,
                EventKind::JobFailed,
                text_field(fields, &["failedReason"]).map(std::borrow::Cow::into_owned),
            ));
        } else {
            out.push(make(at, EventKind::JobCompleted, None));
        }
    }
    if let Some(reason) = text_field(fields, &["defa"])
        && let Some(last) = out.last_mut()
        && last.kind != EventKind::JobFailed
    {
        let note = format!("deferred failure pending: {reason}");
        last.set_detail(Some(
            last.detail().map_or_else(|| Text::from(note.as_str()), |d| Text::from(format!("{d}; {note}").as_str())),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn read(text: &str) -> Result<(Vec<Event>, InputSummary)> {
        let spec = SourceSpec::new(SourceKind::BullmqJobs, PathBuf::from("jobs.jsonl"), None, String::new());
        let mut events = Vec::new();
        let mut summary = InputSummary::new("jobs.jsonl", "bullmq-jobs", "hgetall-json", None);
        HgetallJson.read(&spec, 0, Box::new(std::io::Cursor::new(text.to_string())), &mut events, &mut summary)?;
        Ok((events, summary))
    }

    #[test]
    fn a_failed_job_hash_yields_added_last_activation_and_failure() {
        let line = r#"{"key":"bull:pr-review:42","fields":{"name":"review","timestamp":"1791333180000","processedOn":"1791333240000","finishedOn":"1791333240005","failedReason":"job stalled more than allowable limit","atm":"1","ats":"3","stc":"2","pb":"api-1"}}"#;
        let (events, summary) = read(&format!(
            "{line}\n{{\"key\":\"bull:pr-review:meta\",\"fields\":{{\"opts.maxLenEvents\":\"10000\"}}}}\n"
        ))
        .unwrap();
        let kinds: Vec<EventKind> = events.iter().map(|e| e.kind).collect();
        assert_eq!(kinds, [EventKind::JobAdded, EventKind::JobActive, EventKind::JobFailed]);
        assert_eq!(events[1].detail_str(), Some("last activation (processedOn); ats=3 atm=1 stc=2"));
        assert_eq!(events[2].detail_str(), Some("job stalled more than allowable limit"));
        assert_eq!(events[2].queue.as_deref(), Some("pr-review"));
        assert_eq!(events[2].worker.as_deref(), Some("api-1"));
        assert_eq!((summary.lines, summary.used, summary.ignored), (2, 1, 1));
    }

    #[test]
    fn repeat_job_ids_carry_their_slot() {
        assert_eq!(
            repeat_slot("repeat:pr-review-sweep:1791333180000").map(|s| s.to_rfc3339()).as_deref(),
            Some("2026-10-07T00:33:00+00:00")
        );
        assert_eq!(repeat_slot("repeat:8f3a:1791333180000").map(|s| s.timestamp()), Some(1_791_333_180));
        assert_eq!(repeat_slot("42"), None);
        assert_eq!(split_key("bull:pr-review:repeat:s:1"), Some(("pr-review", "repeat:s:1")));
    }

    #[test]
    fn an_object_of_keys_is_read_and_bad_times_name_the_line() {
        let text = "{\n  \"bull:q:7\": {\"name\": \"n\", \"timestamp\": \"1791333180000\"}\n}\n";
        let (events, _) = read(text).unwrap();
        assert_eq!(events[0].job_id.as_deref(), Some("7"));
        let error = read("{\"key\":\"bull:q:7\",\"fields\":{\"name\":\"n\",\"processedOn\":\"soon\"}}\n")
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("jobs.jsonl:1: job 7: 'processedOn' is 'soon'"), "{error}");
    }
}
