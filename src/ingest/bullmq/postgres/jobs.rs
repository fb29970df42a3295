//! The `job` table of BullMQ's PostgreSQL backend: one row a job, the Redis job hash's fields as
//! columns (`0001_schema.sql`). A row is read as the hash it stands for (`jobs::job_events`):
//! `added_at_ms` is `timestamp`, `processed_at_ms` `processedOn` (the last activation: each one
//! overwrites it), `finished_at_ms` `finishedOn`, `attempts_started`/`attempts_made`/
//! `stalled_count` `ats`/`atm`/`stc`, `deferred_failure` `defa`, `processed_by` `pb`; `state`
//! says whether a finished job completed or failed. The times are the workers' clocks
//! (`Date.now()` passed to `move_to_active`, `move_to_completed`, …), not the database's.
//!
//! An active job's `locked_until_ms` (its lock's end as the last activation or renewal wrote it:
//! the writer's clock + `lockDuration`) and `stalled_marked` (marked by the last effective
//! stalled check, moved by the next if its lock has run out) are put in its activation's detail:
//! they are the backend's lock, which Redis keeps in a key that no dump of hashes shows.

use std::io::BufRead;

use super::{Row, Table, cut, queue_of, read_rows};
use crate::error::{Error, Result};
use crate::ingest::bullmq::jobs::{JobKey, job_events};
use crate::ingest::{EventFormat, SourceKind, SourceSpec};
use crate::model::{Event, EventKind, InputSummary, Text};

/// Column → the job hash field it is read as.
const AS_HASH_FIELD: &[(&str, &str)] = &[
    ("name", "name"),
    ("opts", "opts"),
    ("added_at_ms", "timestamp"),
    ("processed_at_ms", "processedOn"),
    ("finished_at_ms", "finishedOn"),
    ("attempts_started", "ats"),
    ("attempts_made", "atm"),
    ("stalled_count", "stc"),
    ("deferred_failure", "defa"),
    ("processed_by", "pb"),
    ("failed_reason", "failedReason"),
    ("return_value", "returnvalue"),
];

pub const JOB: Table = Table {
    name: "job",
    required: &["id", "state", "processed_at_ms"],
    read: &[
        "queue",
        "name",
        "opts",
        "added_at_ms",
        "finished_at_ms",
        "attempts_started",
        "attempts_made",
        "stalled_count",
        "deferred_failure",
        "processed_by",
        "failed_reason",
        "return_value",
        "lock_token",
        "locked_until_ms",
        "stalled_marked",
    ],
    known: &[
        "seq",
        "data",
        "priority",
        "delay_ms",
        "max_attempts",
        "progress",
        "stacktrace",
        "process_at_ms",
        "dedup_id",
        "scheduler_id",
        "parent_queue",
        "parent_id",
        "parent_key",
        "pending_deps",
    ],
};

pub const CLOCK_NOTE: &str = "times are the workers' clocks (Date.now() that BullMQ passed to the SQL functions: added_at_ms, processed_at_ms, finished_at_ms, locked_until_ms), not the database's that bullmq.event's created_at_ms is written on; processed_at_ms is a job's last activation only";

pub struct PgJobTable;

impl EventFormat for PgJobTable {
    fn name(&self) -> &'static str {
        "pg-job-table"
    }

    fn kind(&self) -> SourceKind {
        SourceKind::BullmqJobs
    }

    fn extensions(&self) -> &'static [&'static str] {
        &[]
    }

    fn sniff(&self, first_line: &str) -> bool {
        super::csv_header_is(first_line, &JOB) || super::json_row_is(first_line, &JOB)
    }

    fn read(
        &self,
        spec: &SourceSpec,
        source: u16,
        input: Box<dyn BufRead + Send>,
        events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<()> {
        read_rows(spec, input, &JOB, summary, |row, summary| {
            let (queue, wanted) = queue_of(spec, row);
            let ignore = |summary: &mut InputSummary, reason: &str| {
                for _ in 0..row.span {
                    summary.ignore(reason);
                }
            };
            if !wanted {
                ignore(summary, "another queue's row");
                return Ok(());
            }
            let read = row_events(spec, source, row, queue)?;
            if read.is_empty() {
                ignore(summary, "a job never added nor activated (no times)");
                return Ok(());
            }
            summary.used += row.span;
            summary.texts.keep(read[0].origin().line, &row.raw);
            events.extend(read);
            Ok(())
        })?;
        if summary.used > 0 && !summary.notes.iter().any(|n| n == CLOCK_NOTE) {
            summary.notes.push(CLOCK_NOTE.to_string());
        }
        Ok(())
    }
}

fn row_events(spec: &SourceSpec, source: u16, row: &Row, queue: Option<&str>) -> Result<Vec<Event>> {
    let id = row.get("id").unwrap_or_default();
    if id.is_empty() {
        return Err(Error::input(&spec.path, Some(row.line), "a job row without an id"));
    }
    let state = row.get("state").unwrap_or_default();
    let finished = match state {
        "completed" => Some(EventKind::JobCompleted),
        "failed" => Some(EventKind::JobFailed),
        "waiting" | "active" | "delayed" | "waiting-children" => None,
        other => {
            return Err(Error::input(
                &spec.path,
                Some(row.line),
                format!(
                    "job {}: state '{}' is none of BullMQ's job_state values (waiting, active, completed, failed, delayed, waiting-children)",
                    cut(id, 80),
                    cut(other, 40)
                ),
            ));
        }
    };
    let fields: Vec<(String, String)> = AS_HASH_FIELD
        .iter()
        .filter_map(|(column, field)| row.get(column).map(|value| ((*field).to_string(), value.to_string())))
        .collect();
    let job =
        JobKey { id: id.to_string(), queue: queue.or(spec.queue.as_deref()).map(str::to_string), ambiguous: false };
    let mut read = job_events(spec, source, row.line, &job, &fields, finished)?;
    // The lock of a job still active: what the stalled check compares with its own clock.
    if state == "active"
        && let Some(activation) = read.iter_mut().find(|e| e.kind == EventKind::JobActive)
    {
        let mut lock = Vec::new();
        if let Some(until) = row.get("locked_until_ms") {
            super::millis(spec, row, "locked_until_ms")?;
            lock.push(format!("locked_until_ms={until}"));
        }
        if let Some(marked) = row.get("stalled_marked") {
            lock.push(format!("stalled_marked={}", matches!(marked, "t" | "true")));
        }
        if !lock.is_empty() {
            let said = lock.join(" ");
            let detail = activation.detail().map_or(said.clone(), |d| format!("{d}; {said}"));
            activation.set_detail(Some(Text::from(detail.as_str())));
        }
    }
    Ok(read)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<(Vec<Event>, InputSummary)> {
        let spec = SourceSpec::new(SourceKind::BullmqJobs, "job.csv".into(), None, String::new());
        let mut events = Vec::new();
        let mut summary = InputSummary::new("t", "bullmq-events", "pg", None);
        PgJobTable.read(&spec, 0, Box::new(std::io::Cursor::new(text.to_string())), &mut events, &mut summary)?;
        Ok((events, summary))
    }

    // Cut from fixtures/bullmq-6.7.0-postgres-stalled/job.csv (the stack trace shortened), and one
    // row of a job still active.
    const CSV: &str = r#"queue,id,seq,name,state,data,opts,priority,delay_ms,max_attempts,attempts_made,attempts_started,progress,return_value,failed_reason,stacktrace,deferred_failure,processed_by,added_at_ms,process_at_ms,processed_at_ms,finished_at_ms,lock_token,locked_until_ms,stalled_count,dedup_id,scheduler_id,parent_queue,parent_id,parent_key,pending_deps,stalled_marked
nightly-sweep,sweep-1,5,sweep,failed,"{""night"": ""2026-12-06""}","{""jobId"": ""sweep-1"", ""attempts"": 0}",0,0,0,1,3,,,job stalled more than allowable limit,"[""UnrecoverableError: job stalled more than allowable limit\n    at Worker.processJob""]",,worker-e,1796548784290,,1796548790063,1796548790088,,,2,,,,,,0,f
pr-review,pr-4412,2,review,completed,"{""pr"": ""PR-4412""}","{""jobId"": ""pr-4412"", ""attempts"": 0}",0,0,0,1,2,,"{""done"": ""pr-4412""}",,,,worker-b,1796548779359,,1796548781732,1796548783251,,,1,,,,,,0,f
pr-review,pr-4413,3,review,active,{},{},0,0,0,0,1,,,,,,worker-a,1796548779400,,1796548779608,,3c1f,1796548781608,0,,,,,,0,t
"#;

    #[test]
    fn rows_are_read_as_the_job_hashes_they_stand_for() {
        let (events, summary) = read(CSV).unwrap();
        let of = |id: &str| -> Vec<(EventKind, i64)> {
            events
                .iter()
                .filter(|e| e.job_id.as_deref() == Some(id))
                .map(|e| (e.kind, e.at().timestamp_millis()))
                .collect()
        };
        assert_eq!(
            of("sweep-1"),
            [
                (EventKind::JobAdded, 1_796_548_784_290),
                (EventKind::JobActive, 1_796_548_790_063),
                (EventKind::JobFailed, 1_796_548_790_088)
            ]
        );
        assert_eq!(of("pr-4412")[2], (EventKind::JobCompleted, 1_796_548_783_251));
        let failed = events.iter().find(|e| e.kind == EventKind::JobFailed).unwrap();
        assert_eq!(failed.detail().as_deref(), Some("job stalled more than allowable limit"));
        assert_eq!(failed.queue.as_deref(), Some("nightly-sweep"));
        assert_eq!(failed.worker.as_deref(), Some("worker-e"));
        let activation = events.iter().find(|e| e.kind == EventKind::JobActive).unwrap();
        assert_eq!(activation.detail().as_deref(), Some("last activation (processedOn); ats=3 atm=1 stc=2"));
        let active = events.iter().find(|e| e.job_id.as_deref() == Some("pr-4413") && e.kind == EventKind::JobActive);
        let detail = active.unwrap().detail().unwrap().to_string();
        assert!(detail.ends_with("locked_until_ms=1796548781608 stalled_marked=true"), "{detail}");
        assert_eq!((summary.lines, summary.used, summary.ignored), (4, 3, 1));
    }

    /// A header whose quoted column name holds a line end takes two lines: both are the header
    /// (found by fuzzing: the second was counted as nothing).
    #[test]
    fn a_header_across_lines_is_counted_on_every_line() {
        let text = "id,state,processed_at_ms,finished_at_ms,\"odd\nname\"\n7,completed,1796548779608,1796548779700,x\n";
        let (events, summary) = read(text).unwrap();
        assert_eq!(events.iter().find(|e| e.kind == EventKind::JobCompleted).unwrap().origin().line, 3);
        assert_eq!((summary.lines, summary.used, summary.ignored), (3, 1, 2));
    }

    /// A reason with a line end in it: psql quotes the cell, and the record spans two lines, both
    /// used, its events on its first.
    #[test]
    fn a_quoted_cell_across_lines_is_one_row() {
        let text = "id,state,processed_at_ms,finished_at_ms,failed_reason\n7,failed,1796548779608,1796548779700,\"boom\nat line 2\"\n8,completed,1796548779608,1796548779701,\n";
        let (events, summary) = read(text).unwrap();
        let failed = events.iter().find(|e| e.kind == EventKind::JobFailed).unwrap();
        assert_eq!(failed.detail().as_deref(), Some("boom\nat line 2"));
        assert_eq!(failed.origin().line, 2);
        assert_eq!(events.iter().find(|e| e.kind == EventKind::JobCompleted).unwrap().origin().line, 4);
        assert_eq!((summary.lines, summary.used, summary.ignored), (4, 3, 1));
    }

    #[test]
    fn a_state_bullmq_does_not_have_is_refused_with_its_line() {
        let error = read("id,state,processed_at_ms\n7,paused,1796548779608\n").unwrap_err().to_string();
        assert!(error.contains("job.csv:2") && error.contains("'paused'"), "{error}");
    }
}
