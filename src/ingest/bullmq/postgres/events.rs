//! The `event` table of BullMQ's PostgreSQL backend: its events stream.
//!
//! `publish_event` (migration `0002_functions.sql`) inserts one row per event with the event's
//! name, its fields as a `jsonb` object (`jobId`, `prev`, `failedReason`, …, the stream entry's
//! fields) and `created_at_ms`, the database's `clock_timestamp()` in epoch milliseconds; `id`
//! comes from the sequence `event_seq`, shared by every queue of the schema. The rows become the
//! events a Redis stream entry of the same name becomes (`bullmq::events::EVENT_NAMES`), on the
//! same channel: what BullMQ wrote at the moment it happened, on the store's clock. What differs
//! from Redis is said in docs/bullmq.md ("BullMQ on PostgreSQL"): a stalled sweep writes
//! `stalled` alone (no `waiting`), and the table is trimmed to `opts.maxLenEvents` only when an
//! id is a multiple of 256.

use std::io::BufRead;

use serde_json::{Map, Value};

use super::{Row, Table, cut, millis, queue_of, read_rows};
use crate::error::{Error, Result};
use crate::ingest::bullmq::events::EVENT_NAMES;
use crate::ingest::{EventFormat, SourceKind, SourceSpec};
use crate::model::{Channel, Event, EventKind, InputSummary, Origin, Text};

pub const EVENT: Table =
    Table { name: "event", required: &["event", "data", "created_at_ms"], read: &["queue", "id"], known: &[] };

/// What the assumptions say of the table's clock, once per source.
pub const CLOCK_NOTE: &str = "times are created_at_ms, the PostgreSQL server's clock (clock_timestamp() when BullMQ's publish_event inserted the row), not the workers' clocks that bullmq.job's times are written on";

pub struct PgEventTable;

impl EventFormat for PgEventTable {
    fn name(&self) -> &'static str {
        "pg-event-table"
    }

    fn kind(&self) -> SourceKind {
        SourceKind::BullmqEvents
    }

    /// Known by content only, before the Redis stream's JSON (which takes `.json` files).
    fn extensions(&self) -> &'static [&'static str] {
        &[]
    }

    fn sniff(&self, first_line: &str) -> bool {
        super::csv_header_is(first_line, &EVENT) || super::json_row_is(first_line, &EVENT)
    }

    fn read(
        &self,
        spec: &SourceSpec,
        source: u16,
        input: Box<dyn BufRead + Send>,
        events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<()> {
        let mut last_id: Option<i64> = None;
        read_rows(spec, input, &EVENT, summary, |row, summary| {
            // Rows in sequence order are the order BullMQ wrote them in: events of one
            // millisecond keep it on the timeline (which keeps line order among equal times).
            if let Some(id) = row.get("id").and_then(|id| id.parse::<i64>().ok()) {
                if last_id.is_some_and(|last| id < last) {
                    let note = "rows are not in id order: events of one millisecond are placed in the file's order, not BullMQ's (export with ORDER BY id)".to_string();
                    if !summary.notes.contains(&note) {
                        summary.notes.push(note);
                    }
                }
                last_id = Some(id);
            }
            let ignore = |summary: &mut InputSummary, reason: &str| {
                for _ in 0..row.span {
                    summary.ignore(reason);
                }
            };
            let (queue, wanted) = queue_of(spec, row);
            if !wanted {
                ignore(summary, "another queue's row");
                return Ok(());
            }
            if let Some(event) = to_event(spec, source, row, queue)? {
                summary.used += row.span;
                summary.texts.keep(event.origin().line, &row.raw);
                events.push(event);
            } else {
                let name = cut(row.get("event").unwrap_or_default(), 40);
                ignore(summary, &format!("event '{name}' not used"));
            }
            Ok(())
        })?;
        if summary.used > 0 && !summary.notes.iter().any(|n| n == CLOCK_NOTE) {
            summary.notes.push(CLOCK_NOTE.to_string());
        }
        Ok(())
    }
}

fn to_event(spec: &SourceSpec, source: u16, row: &Row, queue: Option<&str>) -> Result<Option<Event>> {
    let name = row.get("event").unwrap_or_default();
    let Some(kind) = EVENT_NAMES.iter().find(|(n, _)| *n == name).map(|(_, k)| *k) else {
        return Ok(None);
    };
    let at = millis(spec, row, "created_at_ms")?
        .ok_or_else(|| Error::input(&spec.path, Some(row.line), "an event row without created_at_ms"))?;
    let data: Map<String, Value> = match row.get("data") {
        None => Map::new(),
        Some(text) => serde_json::from_str(text).map_err(|e| {
            Error::input(
                &spec.path,
                Some(row.line),
                format!("data is not a JSON object ({e}): expected the event's fields, e.g. {{\"jobId\": \"42\", \"prev\": \"waiting\"}}"),
            )
        })?,
    };
    let field = |key: &str| -> Option<String> {
        data.get(key).and_then(|value| match value {
            Value::String(text) => Some(text.clone()),
            Value::Null => None,
            other => Some(other.to_string()),
        })
    };
    let origin = Origin { channel: Channel::EventsStream, source, line: crate::ingest::line_of(spec, row.line)? };
    let mut event = Event::new(at, kind, origin);
    let job_id = field("jobId");
    let scope = crate::model::Scope {
        job_id: job_id.as_deref().map(Text::from),
        job_name: field("name").as_deref().map(Text::from),
        queue: queue.or(spec.queue.as_deref()).map(Text::from),
        slot: job_id.as_deref().and_then(crate::ingest::bullmq::jobs::repeat_slot),
        ..Default::default()
    };
    event.set_scope(scope.interned());
    let detail = match kind {
        EventKind::JobFailed => field("failedReason"),
        EventKind::JobWaiting | EventKind::JobActive | EventKind::JobCompleted => {
            field("prev").map(|prev| format!("prev={prev}"))
        }
        EventKind::JobRetriesExhausted => field("attemptsMade").map(|n| format!("attemptsMade={n}")),
        EventKind::JobDelayed => field("delay").map(|d| format!("delay={d}")),
        _ => None,
    };
    event.set_detail(detail.as_deref().map(Text::from));
    Ok(Some(event))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::SourceSpec;

    fn read(text: &str, queue: Option<&str>) -> Result<(Vec<Event>, InputSummary)> {
        let mut spec = SourceSpec::new(SourceKind::BullmqEvents, "event.csv".into(), None, String::new());
        spec.queue = queue.map(str::to_string);
        let mut events = Vec::new();
        let mut summary = InputSummary::new("t", "bullmq-events", "pg", None);
        PgEventTable.read(&spec, 0, Box::new(std::io::Cursor::new(text.to_string())), &mut events, &mut summary)?;
        Ok((events, summary))
    }

    // Rows cut from fixtures/bullmq-6.7.0-postgres-stalled/event.csv.
    const CSV: &str = r#"queue,id,event,data,created_at_ms
pr-review,3,active,"{""prev"": ""waiting"", ""jobId"": ""pr-4412""}",1796548779608
pr-review,4,stalled,"{""jobId"": ""pr-4412""}",1796548781724
pr-review,7,drained,{},1796548783266
nightly-sweep,15,failed,"{""prev"": ""active"", ""jobId"": ""sweep-1"", ""failedReason"": ""job stalled more than allowable limit""}",1796548790102
"#;

    #[test]
    fn csv_rows_become_the_stream_events_on_the_databases_clock() {
        let (events, summary) = read(CSV, None).unwrap();
        let kinds: Vec<EventKind> = events.iter().map(|e| e.kind).collect();
        assert_eq!(kinds, [EventKind::JobActive, EventKind::JobStalled, EventKind::JobFailed]);
        assert_eq!(events[0].at().timestamp_millis(), 1_796_548_779_608);
        assert_eq!(events[0].job_id.as_deref(), Some("pr-4412"));
        assert_eq!(events[0].queue.as_deref(), Some("pr-review"));
        assert_eq!(events[2].queue.as_deref(), Some("nightly-sweep"));
        assert_eq!(events[2].detail().as_deref(), Some("job stalled more than allowable limit"));
        assert_eq!(events[0].origin().channel, Channel::EventsStream);
        assert_eq!((summary.lines, summary.used, summary.ignored), (5, 3, 2));
        assert_eq!(summary.ignored_by_reason.get("event 'drained' not used"), Some(&1));
        assert!(summary.notes.iter().any(|n| n == CLOCK_NOTE), "{:?}", summary.notes);
    }

    #[test]
    fn a_declared_queue_keeps_its_rows_only() {
        let (events, summary) = read(CSV, Some("nightly-sweep")).unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(summary.ignored_by_reason.get("another queue's row"), Some(&3));
    }

    #[test]
    fn json_lines_and_json_agg_read_alike() {
        let lines = r#"{"queue":"pr-review","id":3,"event":"active","data":{"prev": "waiting", "jobId": "pr-4412"},"created_at_ms":1796548779608}
{"queue":"pr-review","id":4,"event":"stalled","data":{"jobId": "pr-4412"},"created_at_ms":1796548781724}
"#;
        let agg = r#"[{"queue":"pr-review","id":3,"event":"active","data":{"prev": "waiting", "jobId": "pr-4412"},"created_at_ms":1796548779608}, 
 {"queue":"pr-review","id":4,"event":"stalled","data":{"jobId": "pr-4412"},"created_at_ms":1796548781724}]
"#;
        for text in [lines, agg] {
            let (events, summary) = read(text, None).unwrap();
            assert_eq!(events.len(), 2, "{text}");
            assert_eq!(events[1].kind, EventKind::JobStalled);
            assert_eq!(events[1].at().timestamp_millis(), 1_796_548_781_724);
            assert_eq!((summary.lines, summary.used), (2, 2));
        }
        assert!(PgEventTable.sniff(agg.lines().next().unwrap()));
        assert!(PgEventTable.sniff("queue,id,event,data,created_at_ms"));
        assert!(!PgEventTable.sniff(r#"{"id":"1796548779608-0","fields":{"event":"active"}}"#));
    }

    #[test]
    fn unknown_columns_are_said_and_bad_rows_named_by_line() {
        let (_, summary) = read("event,data,created_at_ms,shard\nactive,{},1796548779608,7\n", None).unwrap();
        assert!(summary.notes.iter().any(|n| n.contains("shard") && n.contains("not read")), "{:?}", summary.notes);
        let error = read("event,data,created_at_ms\nactive,{},1796548779\n", None).unwrap_err().to_string();
        assert!(error.contains("event.csv:2") && error.contains("seconds"), "{error}");
        let error = read("event,data\nactive,{}\n", None).unwrap_err().to_string();
        assert!(error.contains("created_at_ms"), "{error}");
        let error = read("event,data,created_at_ms\nactive,\"{\n", None).unwrap_err().to_string();
        assert!(error.contains("ends inside a quoted cell"), "{error}");
        let error = read("event,data,created_at_ms\nactive,not json,1796548779608\n", None).unwrap_err().to_string();
        assert!(error.contains(":2") && error.contains("JSON object"), "{error}");
        let error =
            read("{\"event\":\"active\",\"data\":{},\"created_at_ms\":1796548779608\n", None).unwrap_err().to_string();
        assert!(error.contains(":1") && error.contains("row_to_json"), "{error}");
    }
}
