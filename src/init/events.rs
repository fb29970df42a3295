//! Recognising an export of BullMQ's events stream (`XRANGE bull:<queue>:events`): JSON entries
//! `{"id": "<ms>-<seq>", "fields": {...}}` or `redis-cli` text. The stream id is Redis's clock in
//! epoch milliseconds, so each entry with a `jobId` is a moment the zone and rule proposers can
//! compare naive logs with.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::Value;

use std::path::PathBuf;

use crate::ingest::bullmq::postgres::events::PgEventTable;
use crate::ingest::{EventFormat, SourceKind, SourceSpec};
use crate::model::EventKind;

use super::redis_text;
use super::sample::{Json, Sample, read_sample};
use super::{Reference, What};

#[derive(Debug)]
pub struct Found {
    pub format: &'static str,
    pub entries: usize,
    /// How many entries of each event name.
    pub names: BTreeMap<String, usize>,
    pub moments: Vec<Reference>,
}

impl Found {
    /// Whether each row says its queue (the PostgreSQL event table), so that none is declared.
    pub fn queues_in_rows(&self) -> bool {
        self.format == PgEventTable.name()
    }

    pub fn evidence(&self) -> String {
        let names: Vec<String> = self.names.iter().take(8).map(|(name, n)| format!("{name} {n}")).collect();
        if self.format == PgEventTable.name() {
            return format!(
                "{} events in the event table of BullMQ's PostgreSQL backend, each row's queue in its queue column ({})",
                self.entries,
                names.join(", ")
            );
        }
        format!("{} stream entries with <ms>-<seq> ids and an event field ({})", self.entries, names.join(", "))
    }
}

/// `1791333180000-0` → its instant (milliseconds of at least 10 digits: 2001 on).
fn stream_time(id: &str) -> Option<DateTime<Utc>> {
    let (millis, seq) = id.split_once('-')?;
    let plausible = millis.len() >= 12 && millis.len() <= 14 && millis.bytes().all(|b| b.is_ascii_digit());
    if !plausible || seq.is_empty() || !seq.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    DateTime::from_timestamp_millis(millis.parse().ok()?)
}

fn what(name: &str) -> What {
    match name {
        "active" => What::Active,
        "stalled" => What::Stalled,
        "failed" => What::Failed,
        "completed" => What::Completed,
        _ => What::Other,
    }
}

/// An entry: its line, its instant, its fields.
type Entry = (u64, DateTime<Utc>, Vec<(String, String)>);

pub fn recognise(sample: &Sample, json: Option<&Json>) -> Option<Found> {
    if let Some(found) = postgres_table(sample) {
        return Some(found);
    }
    let mut entries: Vec<Entry> = Vec::new();
    let format = if let Some(json) = json {
        for (line, record) in json.records() {
            let Value::Object(object) = record else { continue };
            let Some(at) = object.get("id").and_then(Value::as_str).and_then(stream_time) else { continue };
            let fields: Vec<(String, String)> = match object.get("fields") {
                Some(Value::Object(fields)) => fields.iter().map(|(k, v)| (k.clone(), text(v))).collect(),
                Some(Value::Array(flat)) => {
                    flat.chunks(2).map(|pair| (text(&pair[0]), pair.get(1).map(text).unwrap_or_default())).collect()
                }
                _ => continue,
            };
            entries.push((line, at, fields));
        }
        "xrange-json"
    } else {
        let tokens = redis_text::tokens(&sample.text);
        let mut current: Option<(u64, DateTime<Utc>, Vec<String>)> = None;
        let mut close = |current: Option<(u64, DateTime<Utc>, Vec<String>)>| {
            if let Some((line, at, tokens)) = current {
                let fields = tokens.chunks(2).map(|p| (p[0].clone(), p.get(1).cloned().unwrap_or_default())).collect();
                entries.push((line, at, fields));
            }
        };
        for (line, token) in tokens {
            match stream_time(&token) {
                // A stream id starts an entry, unless it is the value of a field.
                Some(at) if current.as_ref().is_none_or(|(_, _, t)| t.len() % 2 == 0) => {
                    close(current.replace((line, at, Vec::new())));
                }
                _ => match &mut current {
                    Some((_, _, tokens)) => tokens.push(token),
                    // Text before the first entry: not an XRANGE export.
                    None => return None,
                },
            }
        }
        close(current);
        "xrange-text"
    };
    entries.retain(|(_, _, fields)| fields.iter().any(|(k, _)| k == "event"));
    if entries.is_empty() {
        return None;
    }
    let mut found = Found { format, entries: entries.len(), names: BTreeMap::new(), moments: Vec::new() };
    for (line, at, fields) in entries {
        let get = |name: &str| fields.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
        let name = get("event").unwrap_or_default();
        *found.names.entry(name.to_string()).or_default() += 1;
        if let Some(job) = get("jobId").filter(|j| !j.is_empty()) {
            found.moments.push(Reference { id: job.to_string(), at, what: what(name), file: 0, line });
        }
    }
    Some(found)
}

/// The event table of BullMQ's PostgreSQL backend (a psql export its reader reads): its rows'
/// times are the database's clock, each with a job a moment as a stream entry is.
fn postgres_table(sample: &Sample) -> Option<Found> {
    let first = sample.first_line()?;
    if !PgEventTable.sniff(first) {
        return None;
    }
    let spec = SourceSpec::new(SourceKind::BullmqEvents, PathBuf::from("event table"), None, String::new());
    let (events, _) = read_sample(&spec, &PgEventTable, &sample.text).ok()?;
    let mut found =
        Found { format: PgEventTable.name(), entries: events.len(), names: BTreeMap::new(), moments: Vec::new() };
    for event in &events {
        let name = event.kind.name();
        *found.names.entry(name.to_string()).or_default() += 1;
        let what = match event.kind {
            EventKind::JobActive => What::Active,
            EventKind::JobStalled => What::Stalled,
            EventKind::JobFailed => What::Failed,
            EventKind::JobCompleted => What::Completed,
            _ => What::Other,
        };
        if let Some(job) = event.job_id.as_deref() {
            let line = u64::from(event.origin().line);
            found.moments.push(Reference { id: job.to_string(), at: event.at(), what, file: 0, line });
        }
    }
    (found.entries > 0).then_some(found)
}

fn text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::sample;
    use super::*;

    fn found(text: &str) -> Option<Found> {
        let sample = Sample::from_text(text);
        recognise(&sample, sample::json(&sample).as_ref())
    }

    #[test]
    fn json_and_redis_cli_text_give_the_same_moments() {
        let json = found(
            r#"[{"id":"1796028384205-0","fields":{"event":"active","jobId":"7","prev":"waiting"}},{"id":"1796028389000-0","fields":["event","stalled","jobId","7"]}]"#,
        )
        .unwrap();
        let text = found(
            "1796028384205-0\nevent\nactive\njobId\n7\nprev\nwaiting\n1796028389000-0\nevent\nstalled\njobId\n7\n",
        )
        .unwrap();
        let moments = |f: &Found| f.moments.iter().map(|m| (m.id.clone(), m.at, m.what)).collect::<Vec<_>>();
        assert_eq!(moments(&json), moments(&text));
        assert_eq!(moments(&json)[1].2, What::Stalled);
        assert_eq!((json.format, text.format), ("xrange-json", "xrange-text"));
        assert_eq!(text.moments[1].line, 8);
    }

    #[test]
    fn other_files_are_not_streams() {
        assert!(found("2026-10-07 09:00:00 INFO job active id=7\n").is_none());
        assert!(found(r#"{"id":"7","fields":{"name":"x"}}"#).is_none());
        assert!(found("1796028384205-0\nname\nx\n").is_none(), "no event field");
    }
}
