//! Recognising BullMQ job-hash exports (`HGETALL bull:<queue>:<id>`) in the shapes clients
//! write them: `{key, fields}` per line or in an array, `{key, id, state, hash}`, one object
//! keyed by Redis key, or the text `redis-cli HGETALL` prints. A hash is a job's when it has
//! BullMQ's job fields (`processedOn`, `finishedOn`, `attemptsMade`/`atm`, ... or `timestamp`
//! with `name`/`data`/`opts`). Its epoch-millisecond times are moments on Redis's clock that the
//! zone proposer compares with naive logs.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use crate::ingest::bullmq::postgres::meta::PgMetaTable;
use crate::ingest::{self, EventFormat, SourceKind, SourceSpec};
use crate::model::EventKind;

use super::redis_text;
use super::sample::read_sample;
use super::sample::{Json, Sample, shown};
use super::{Reference, What};

/// Fields only a BullMQ job hash has.
const JOB_FIELDS: &[&str] =
    &["processedOn", "finishedOn", "attemptsMade", "atm", "ats", "stc", "failedReason", "returnvalue", "stacktrace"];
/// Fields a job hash has from its creation on.
const CREATED_FIELDS: &[&str] = &["name", "data", "opts"];

#[derive(Debug)]
pub struct Found {
    /// The reader that reads it (`hgetall-json`, `hgetall-text`), when it read the sample.
    pub format: Option<&'static str>,
    /// Why no reader read the sample (a JSON array cut by the sample, a shape it refuses).
    pub reader_error: Option<String>,
    pub shape: &'static str,
    pub hashes: usize,
    pub queues: BTreeSet<String>,
    /// The job ids of each queue (a job id names a job within its queue only).
    pub ids: BTreeMap<String, HashSet<String>>,
    pub moments: Vec<Reference>,
    /// The first job key (or id), for the evidence.
    pub example: String,
    /// A meta table's rows as its reader says them (versions, the last stalled check, the
    /// events' cap), sorted: two exports of one meta table say the same, and it places no job
    /// moment to tell them apart by.
    pub meta_rows: Vec<String>,
}

impl Found {
    pub fn evidence(&self) -> String {
        if self.shape == PgMetaTable.name() {
            return "the meta table of BullMQ's PostgreSQL backend (queue, field, value rows: version, stalled-check, opts.maxLenEvents)".into();
        }
        let queues: Vec<&str> = self.queues.iter().map(String::as_str).collect();
        format!(
            "{} job hash{} ({}) with BullMQ job fields, e.g. {}{}",
            self.hashes,
            if self.hashes == 1 { "" } else { "es" },
            self.shape,
            shown(&self.example, 60),
            if queues.is_empty() { String::new() } else { format!("; queue {}", queues.join(", ")) }
        )
    }
}

fn is_job_hash(fields: &Map<String, Value>) -> bool {
    JOB_FIELDS.iter().any(|f| fields.contains_key(*f))
        || (fields.contains_key("timestamp") && CREATED_FIELDS.iter().any(|f| fields.contains_key(*f)))
}

/// `bull:<queue>:<id>` → (queue, id); ids may contain `:`.
fn split_key(key: &str) -> Option<(&str, &str)> {
    let (_prefix, rest) = key.split_once(':')?;
    let (queue, id) = rest.split_once(':')?;
    (!queue.is_empty() && !id.is_empty()).then_some((queue, id))
}

/// A `fields`/`hash` value: an object, or the flat `[field, value, ...]` list HGETALL returns.
fn as_fields(value: &Value) -> Option<Map<String, Value>> {
    match value {
        Value::Object(object) => Some(object.clone()),
        Value::Array(items) if items.len() % 2 == 0 && items.iter().all(Value::is_string) => Some(
            items.chunks(2).map(|pair| (pair[0].as_str().unwrap_or_default().to_string(), pair[1].clone())).collect(),
        ),
        _ => None,
    }
}

/// A job-hash export: read by one of leasetrace's job-hash readers (what `analyze` will do), or,
/// when none reads the sample, recognised by its shape here and the readers' error kept.
pub fn recognise(sample: &Sample, json: Option<&Json>, name: &str) -> Option<Found> {
    let (by_reader, error) = by_reader(sample, name);
    let mine = by_shape(sample, json);
    match (by_reader, mine) {
        (Some(mut found), mine) => {
            if let Some(mine) = mine {
                found.shape = mine.shape;
            }
            Some(found)
        }
        (None, Some(mut mine)) => {
            mine.reader_error = error;
            Some(mine)
        }
        (None, None) => None,
    }
}

/// The job-hash readers whose first-line test the sample passes, tried in turn.
fn by_reader(sample: &Sample, name: &str) -> (Option<Found>, Option<String>) {
    let Some(first) = sample.first_line() else { return (None, None) };
    let mut error = None;
    for format in ingest::plain_formats().filter(|f| f.kind() == SourceKind::BullmqJobs && f.sniff(first)) {
        let spec = SourceSpec::new(SourceKind::BullmqJobs, PathBuf::from(name), None, "tz".into());
        match read_sample(&spec, format, &sample.text) {
            // A meta table places no event: its rows (a version, the last stalled check) are read.
            Ok((events, summary))
                if !events.is_empty() || (format.name() == PgMetaTable.name() && summary.used > 0) =>
            {
                let mut found = Found {
                    format: Some(format.name()),
                    reader_error: None,
                    shape: format.name(),
                    hashes: 0,
                    queues: BTreeSet::new(),
                    ids: BTreeMap::new(),
                    moments: Vec::new(),
                    example: String::new(),
                    meta_rows: Vec::new(),
                };
                if format.name() == PgMetaTable.name() {
                    found.meta_rows.clone_from(&summary.notes);
                    found
                        .meta_rows
                        .extend(summary.meta_versions.iter().map(|(version, _)| format!("version {version}")));
                    found.meta_rows.sort();
                }
                for event in &events {
                    if let Some(queue) = event.queue.as_deref() {
                        found.queues.insert(queue.to_string());
                    }
                    let Some(id) = event.job_id.as_deref() else { continue };
                    if let Some(queue) = event.queue.as_deref() {
                        found.ids.entry(queue.to_string()).or_default().insert(id.to_string());
                    }
                    if found.example.is_empty() {
                        found.example = format!("job {id}");
                    }
                    let what = match event.kind {
                        EventKind::JobActive => What::Active,
                        EventKind::JobFailed => What::Failed,
                        EventKind::JobCompleted => What::Completed,
                        EventKind::JobStalled => What::Stalled,
                        _ => What::Other,
                    };
                    let line = u64::from(event.origin().line);
                    found.moments.push(Reference { id: id.to_string(), at: event.at(), what, file: 0, line });
                }
                let jobs: BTreeSet<&str> = found.moments.iter().map(|m| m.id.as_str()).collect();
                found.hashes = jobs.len();
                return (Some(found), None);
            }
            Ok(_) => error = Some(format!("the {} reader finds no job in the sample", format.name())),
            Err(e) => error = Some(e),
        }
    }
    (None, error)
}

fn by_shape(sample: &Sample, json: Option<&Json>) -> Option<Found> {
    let mut hashes: Vec<(u64, Option<String>, Map<String, Value>)> = Vec::new();
    let mut shape = "";
    if let Some(json) = json {
        for (line, record) in json.records() {
            let Value::Object(object) = record else { continue };
            let key = object.get("key").and_then(Value::as_str).map(str::to_string);
            // A stream entry has `id` and `fields` (some with `returnvalue`): a hash has a key.
            if let Some(fields) = object.get("fields").and_then(as_fields).filter(|_| key.is_some()) {
                shape = "{key, fields}";
                hashes.push((line, key, fields));
            } else if let Some(fields) = object.get("hash").and_then(as_fields) {
                shape = "{key, id, state, hash}";
                let key = key.or_else(|| object.get("id").and_then(Value::as_str).map(|id| format!("?:?:{id}")));
                hashes.push((line, key, fields));
            } else if object.keys().any(|k| k.contains(':')) && object.values().all(Value::is_object) {
                shape = "an object keyed by Redis key";
                for (key, value) in object {
                    if let Some(fields) = as_fields(value) {
                        hashes.push((line, Some(key.clone()), fields));
                    }
                }
            } else if is_job_hash(object) && !["level", "msg", "message"].iter().any(|k| object.contains_key(*k)) {
                // A log record may carry a job's fields; it has a level and a message.
                shape = "bare field maps";
                let id = object.get("id").and_then(Value::as_str).map(|id| format!("?:?:{id}"));
                hashes.push((line, id, object.clone()));
            }
        }
    } else {
        shape = "redis-cli HGETALL text";
        hashes = text_hashes(sample);
    }
    hashes.retain(|(_, _, fields)| is_job_hash(fields));
    if hashes.is_empty() {
        return None;
    }
    let mut found = Found {
        format: None,
        reader_error: None,
        shape,
        hashes: hashes.len(),
        queues: BTreeSet::new(),
        ids: BTreeMap::new(),
        moments: Vec::new(),
        example: String::new(),
        meta_rows: Vec::new(),
    };
    for (line, key, fields) in &hashes {
        let split = key.as_deref().and_then(split_key);
        if let Some((queue, id)) = split.filter(|(queue, _)| *queue != "?") {
            found.queues.insert(queue.to_string());
            found.ids.entry(queue.to_string()).or_default().insert(id.to_string());
        }
        if found.example.is_empty() {
            found.example = key.clone().unwrap_or_else(|| "(no key)".into());
        }
        let Some((_, id)) = split else { continue };
        let time = |name: &str| fields.get(name).and_then(epoch_millis);
        let failed = fields.contains_key("failedReason") && !fields.contains_key("returnvalue");
        for (name, what) in [
            ("processedOn", What::Active),
            ("finishedOn", if failed { What::Failed } else { What::Completed }),
            ("timestamp", What::Other),
        ] {
            if let Some(at) = time(name) {
                found.moments.push(Reference { id: id.to_string(), at, what, file: 0, line: *line });
            }
        }
    }
    Some(found)
}

/// An epoch-millisecond field (string or number), within the years a log can be from.
fn epoch_millis(value: &Value) -> Option<DateTime<Utc>> {
    let millis = match value {
        Value::String(text) => text.trim().parse::<i64>().ok()?,
        Value::Number(number) => number.as_i64()?,
        _ => return None,
    };
    // 2001-09-09 to 2286: below that a number is not a millisecond time.
    (millis >= 1_000_000_000_000).then(|| DateTime::from_timestamp_millis(millis)).flatten()
}

/// The hashes of `redis-cli HGETALL` text: field and value tokens in turn; a `bull:...` key on a
/// line of its own before a hash (as a dump loop echoes it) names the job.
fn text_hashes(sample: &Sample) -> Vec<(u64, Option<String>, Map<String, Value>)> {
    let tokens = redis_text::tokens(&sample.text);
    let mut hashes = Vec::new();
    let mut key: Option<String> = None;
    let mut start = 1;
    let mut pending: Vec<String> = Vec::new();
    let flush = |key: &Option<String>, start: u64, pending: &mut Vec<String>, hashes: &mut Vec<_>| {
        if pending.len() >= 2 {
            let fields: Map<String, Value> =
                pending.chunks_exact(2).map(|pair| (pair[0].clone(), Value::String(pair[1].clone()))).collect();
            hashes.push((start, key.clone(), fields));
        }
        pending.clear();
    };
    for (line, token) in tokens {
        if pending.len().is_multiple_of(2) && split_key(&token).is_some() && token.starts_with("bull:") {
            flush(&key, start, &mut pending, &mut hashes);
            key = Some(token);
            start = line;
            continue;
        }
        if pending.is_empty() {
            start = line;
        }
        pending.push(token);
    }
    flush(&key, start, &mut pending, &mut hashes);
    hashes
}

#[cfg(test)]
mod tests {
    use super::super::sample;
    use super::*;

    fn found(text: &str) -> Option<Found> {
        let sample = Sample::from_text(text);
        recognise(&sample, sample::json(&sample).as_ref(), "jobs")
    }

    const HASH: &str = r#"{"name":"pr-review-sweep","timestamp":"1796028384203","processedOn":"1796028384205","finishedOn":"1796028388214","returnvalue":"{}","atm":"1"}"#;

    #[test]
    fn every_json_shape_gives_the_job_and_its_times() {
        let shapes = [
            format!(r#"{{"key":"bull:pr-review:repeat:pr-review-sweep:1796028384203","fields":{HASH}}}"#),
            format!(r#"[{{"key":"bull:pr-review:repeat:pr-review-sweep:1796028384203","fields":{HASH}}}]"#),
            format!(
                r#"{{"key":"bull:pr-review:repeat:pr-review-sweep:1796028384203","id":"repeat:pr-review-sweep:1796028384203","state":"completed","hash":{HASH}}}"#
            ),
            format!(r#"{{"bull:pr-review:repeat:pr-review-sweep:1796028384203":{HASH}}}"#),
        ];
        for text in shapes {
            let found = found(&text).unwrap_or_else(|| panic!("not recognised: {text}"));
            assert_eq!(found.hashes, 1, "{text}");
            assert_eq!(found.queues.iter().collect::<Vec<_>>(), ["pr-review"], "{text}");
            let active = found.moments.iter().find(|m| m.what == What::Active).unwrap();
            assert_eq!(active.id, "repeat:pr-review-sweep:1796028384203");
            assert_eq!(active.at.timestamp_millis(), 1_796_028_384_205);
            assert!(found.moments.iter().any(|m| m.what == What::Completed), "returnvalue: completed");
        }
    }

    #[test]
    fn redis_cli_text_with_key_lines_is_read() {
        let text = "bull:notify:42\n1) \"name\"\n2) \"send\"\n3) \"processedOn\"\n4) \"1796028384205\"\n5) \"finishedOn\"\n6) \"1796028385000\"\n7) \"failedReason\"\n8) \"socket hang up\"\n";
        let found = found(text).unwrap();
        assert_eq!(found.shape, "redis-cli HGETALL text");
        assert_eq!(found.moments.len(), 2);
        assert_eq!(found.moments[1].what, What::Failed);
        assert_eq!(found.moments[0].id, "42");
        assert!(found.evidence().contains("queue notify"), "{}", found.evidence());
    }

    #[test]
    fn other_json_and_text_are_not_job_hashes() {
        assert!(found(r#"{"id":"1796028384204-0","fields":{"event":"added","jobId":"7"}}"#).is_none());
        assert!(found("at,run_id,event\n2026-10-07T00:00:00Z,r1,start\n").is_none());
        assert!(found(r#"{"key":"bull:q:1","fields":{"processedOn":"12"}}"#).unwrap().moments.is_empty());
        let winston = r#"{"attemptsMade":1,"failedReason":"socket hang up","jobId":"8815","level":"warn","message":"job failed","timestamp":"2026-10-07T00:21:12.901Z"}"#;
        assert!(found(winston).is_none(), "a log line with a job's fields is not a job hash");
    }
}
