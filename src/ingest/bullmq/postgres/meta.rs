//! The `meta` table of BullMQ's PostgreSQL backend: Redis' `<prefix>:<queue>:meta` hash as rows
//! `(queue, field, value)`. Three fields are evidence and go to the report's assumptions (they
//! place no event on the timeline):
//! - `version` (`bullmq:6.7.0`): written by the last `Queue` constructed, as in Redis: set
//!   against the version in force (`bullmq-version-disagree`), never taken as it;
//! - `stalled-check`: the time of the last **effective** stalled check, on the clock of the worker
//!   that ran it (`move_stalled_jobs_to_wait` writes its `p_now`; a check within
//!   `stalledInterval` of it does nothing);
//! - `opts.maxLenEvents`: how many events the queue keeps (10000 when absent), trimmed only when an
//!   event id is a multiple of 256 (`publish_event`).
//!
//! Every other field (`paused`, `concurrency`, `max`, `duration`, …) is counted as not used.

use std::io::BufRead;

use super::{Table, cut, queue_of, read_rows};
use crate::error::Result;
use crate::ingest::{EventFormat, SourceKind, SourceSpec};
use crate::model::{Event, InputSummary};

pub const META: Table = Table { name: "meta", required: &["queue", "field", "value"], read: &[], known: &[] };

pub struct PgMetaTable;

impl EventFormat for PgMetaTable {
    fn name(&self) -> &'static str {
        "pg-meta-table"
    }

    fn kind(&self) -> SourceKind {
        SourceKind::BullmqJobs
    }

    fn extensions(&self) -> &'static [&'static str] {
        &[]
    }

    fn sniff(&self, first_line: &str) -> bool {
        super::csv_header_is(first_line, &META) || super::json_row_is(first_line, &META)
    }

    fn read(
        &self,
        spec: &SourceSpec,
        _source: u16,
        input: Box<dyn BufRead + Send>,
        _events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<()> {
        read_rows(spec, input, &META, summary, |row, summary| {
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
            let queue = cut(queue.unwrap_or_default(), 80);
            let field = row.get("field").unwrap_or_default();
            let value = row.get("value").unwrap_or_default();
            let note = match field {
                "version" => {
                    let version = value.strip_prefix("bullmq:").unwrap_or(value);
                    summary.meta_versions.push((cut(version, 40), row.line));
                    None
                }
                "stalled-check" => {
                    let at = super::millis(spec, row, "value")?.map(crate::model::Moment::utc);
                    at.map(|at| {
                        format!(
                            "queue {queue}: the last effective stalled check ran at {} (stalled-check, on the clock of the worker that ran it)",
                            at.format("%Y-%m-%dT%H:%M:%S%.3fZ")
                        )
                    })
                }
                "opts.maxLenEvents" => Some(format!(
                    "queue {queue}: opts.maxLenEvents {}: bullmq.event keeps about that many of the queue's events, trimmed only when an event id is a multiple of 256",
                    cut(value, 20)
                )),
                other => {
                    ignore(summary, &format!("meta field '{}' not used", cut(other, 40)));
                    return Ok(());
                }
            };
            summary.notes.extend(note);
            summary.used += row.span;
            summary.texts.keep(crate::ingest::line_of(spec, row.line)?, &row.raw);
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_the_last_check_and_the_trim_length_are_said() {
        // fixtures/bullmq-6.7.0-postgres-stalled/meta.csv, and a field not used.
        let text = "queue,field,value\nnightly-sweep,opts.maxLenEvents,10000\nnightly-sweep,stalled-check,1796548790052\nnightly-sweep,version,bullmq:6.7.0\nnightly-sweep,paused,1\n";
        let spec = SourceSpec::new(SourceKind::BullmqJobs, "meta.csv".into(), None, String::new());
        let mut summary = InputSummary::new("t", "bullmq-events", "pg", None);
        PgMetaTable
            .read(&spec, 0, Box::new(std::io::Cursor::new(text.to_string())), &mut Vec::new(), &mut summary)
            .unwrap();
        assert_eq!(summary.meta_versions, [("6.7.0".to_string(), 4)]);
        assert!(summary.notes.iter().any(|n| n.contains("2026-12-06T09:19:50.052Z")), "{:?}", summary.notes);
        assert_eq!((summary.lines, summary.used, summary.ignored), (5, 3, 2));
        assert_eq!(summary.ignored_by_reason.get("meta field 'paused' not used"), Some(&1));
    }
}
