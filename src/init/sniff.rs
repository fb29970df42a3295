//! What a file is, from its content: the recognisers tried in turn on its sample.
//!
//! The order matters only where shapes overlap: an events-stream export and a job-hash export
//! are both JSON objects with `fields` (a stream entry has a stream id, a hash a Redis key), a
//! pino or winston log is JSON that may carry any key (a job's `failedReason` included), a ledger
//! is the table left when nothing else fits.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::NaiveDateTime;

use crate::ingest::{self, SourceKind, SourceSpec};
use crate::model::{EventKind, InputSummary};
use crate::time::Stamp;

use super::ledger::{self, Proposal};
use super::sample::{self, read_sample};
use super::{File, Found, Reference, What, events, jobs, logs, monitor, params, trace};

/// A ledger recognised, with what its sampled rows give the other proposers.
#[derive(Debug)]
pub struct LedgerFound {
    pub name: String,
    /// The sampled rows, and the text they were read from (to propose again with the folder's
    /// job ids, `with_jobs`).
    pub table: ledger::Table,
    pub text: String,
    pub proposal: Proposal,
    /// The header (CSV) or the keys (JSON Lines), for the evidence.
    pub header: String,
    /// The first row whose field count is not the header's (the reader stops there).
    pub ragged: Option<(u64, usize)>,
    /// Rows with times with offsets: their job and run ids at those instants.
    pub moments: Vec<Reference>,
    /// Rows with naive times: (line, time, ids).
    pub naive_rows: Vec<(u64, NaiveDateTime, Vec<String>)>,
    /// The ledger reader run on the sampled rows with the proposed mapping.
    pub check: Result<InputSummary, String>,
}

pub fn recognise(path: &Path, name: &str) -> Result<File, String> {
    let sample = sample::read(path)?;
    let json = sample::json(&sample);
    let file = |found| File {
        name: name.to_string(),
        extent: sample.extent(),
        lossy: sample.lossy,
        truncated: sample.truncated,
        check: None,
        found,
    };
    // The reader of a kind and format on the sample. Naive times are read as UTC here: this checks
    // that the lines can be read, not the zone.
    let check_with = |kind: SourceKind, format: &str| {
        let mut spec = SourceSpec::new(kind, PathBuf::from(name), Some(chrono_tz::UTC), "tz".into());
        spec.format = Some(format.to_string());
        let reader = ingest::choose_format(&spec, "").map_err(|e| e.to_string())?;
        read_sample(&spec, reader, &sample.text).map(|(_, summary)| summary)
    };
    // First: an OTLP object is JSON that a log or job-hash recogniser could take a field of.
    if let Some(format) = trace::format_of(&sample) {
        let mut spec = SourceSpec::new(SourceKind::Trace, PathBuf::from(name), None, String::new());
        spec.format = Some(format.to_string());
        let read = ingest::choose_format(&spec, "")
            .map_err(|e| e.to_string())
            .and_then(|reader| read_sample(&spec, reader, &sample.text));
        let (found, checked) = match read {
            Ok((events, summary)) => (trace::found(&events, &summary), Ok(summary)),
            Err(error) => (trace::Found { format: "", lines: 0, used: 0, events: 0, moments: Vec::new() }, Err(error)),
        };
        return Ok(File { check: Some(checked), ..file(Found::Trace(found)) });
    }
    // Before logs: a MONITOR line starts with a time too (epoch seconds).
    if monitor::looks_like(&sample) {
        let mut spec = SourceSpec::new(SourceKind::RedisMonitor, PathBuf::from(name), None, String::new());
        spec.format = Some("redis-monitor".to_string());
        let read = ingest::choose_format(&spec, "")
            .map_err(|e| e.to_string())
            .and_then(|reader| read_sample(&spec, reader, &sample.text));
        let (found, checked) = match read {
            Ok((events, summary)) => (trace::found(&events, &summary), Ok(summary)),
            Err(error) => (trace::Found { format: "", lines: 0, used: 0, events: 0, moments: Vec::new() }, Err(error)),
        };
        return Ok(File { check: Some(checked), ..file(Found::Monitor(found)) });
    }
    if let Some(found) = events::recognise(&sample, json.as_ref()) {
        let checked = check_with(SourceKind::BullmqEvents, found.format);
        return Ok(File { check: Some(checked), ..file(Found::Events(found)) });
    }
    // Before job hashes: a JSON log line may carry a job's fields (`attemptsMade`, `failedReason`).
    // Before plain logs: an envelope's line starts with a time too (`kubectl logs --timestamps`).
    if let Some(found) =
        logs::recognise_enveloped(&sample).or_else(|| logs::recognise(&sample)).filter(|found| !found.lines.is_empty())
    {
        let checked = check_with(SourceKind::Log, &found.declared());
        return Ok(File { check: Some(checked), ..file(Found::Log(found)) });
    }
    if let Some(found) = jobs::recognise(&sample, json.as_ref(), name) {
        return Ok(file(Found::Jobs(found)));
    }
    if let Some(mut found) = params::recognise(&sample, json.as_ref()) {
        found.read = params::read(path);
        return Ok(file(Found::Params(found)));
    }
    let Some(table) = ledger::table(&sample, json.as_ref()) else {
        return Err(
            "not a ledger, log, BullMQ export or lock parameters file that leasetrace can tell from its first lines"
                .into(),
        );
    };
    let proposal = ledger::propose(&table, &ledger::Known::default())
        .map_err(|why| format!("a table, but not a ledger: {why}"))?;
    let text = sample.text[..table.end.min(sample.text.len())].to_string();
    let found = LedgerFound::new(name, table, text, proposal);
    Ok(file(Found::Ledger(Box::new(found))))
}

impl LedgerFound {
    fn new(name: &str, table: ledger::Table, text: String, proposal: Proposal) -> LedgerFound {
        LedgerFound {
            name: name.to_string(),
            header: sample::shown(&table.columns.join(","), 120),
            ragged: table.ragged,
            // A receiver's record is on the receiver's clock, and its rows are no moments of a run.
            moments: if proposal.receiver { Vec::new() } else { moments(&table, &proposal) },
            naive_rows: naive_rows(&table, &proposal),
            check: check(name, &text, &proposal),
            proposal,
            table,
            text,
        }
    }

    /// Proposed again knowing the job ids and queues of the folder's streams and job hashes, when
    /// they change the mapping.
    pub fn with_known(self, known: &ledger::Known) -> LedgerFound {
        match ledger::propose(&self.table, known) {
            Ok(proposal) if proposal.mapped != self.proposal.mapped => {
                LedgerFound::new(&self.name, self.table, self.text, proposal)
            }
            _ => self,
        }
    }
}

fn cell<'t>(table: &'t ledger::Table, row: &'t ledger::Row, column: Option<&str>) -> Option<&'t str> {
    let index = table.columns.iter().position(|c| Some(c.as_str()) == column)?;
    row.cells.get(index).map(String::as_str).filter(|c| !c.is_empty())
}

fn ids(table: &ledger::Table, row: &ledger::Row, proposal: &Proposal) -> Vec<String> {
    ["job", "run"].iter().filter_map(|field| cell(table, row, proposal.column(field)).map(str::to_string)).collect()
}

fn moments(table: &ledger::Table, proposal: &Proposal) -> Vec<Reference> {
    let kinds: BTreeMap<&str, Option<EventKind>> =
        proposal.events.iter().map(|e| (e.value.as_str(), e.proposal.kind)).collect();
    let mut out = Vec::new();
    for row in &table.rows {
        let Some(Stamp::Absolute(at)) = cell(table, row, proposal.column("time")).and_then(ledger::timestamp) else {
            continue;
        };
        let kind = cell(table, row, proposal.column("event")).and_then(|v| kinds.get(v).copied().flatten());
        for (field, id) in ["job", "run"].iter().filter_map(|f| cell(table, row, proposal.column(f)).map(|id| (*f, id)))
        {
            // A round-started row records the job's activation (the app writes it seconds after).
            let what = if field == "job" && kind == Some(EventKind::RoundStarted) { What::Active } else { What::Other };
            out.push(Reference { id: id.to_string(), at, what, file: 0, line: row.line });
        }
    }
    out
}

fn naive_rows(table: &ledger::Table, proposal: &Proposal) -> Vec<(u64, NaiveDateTime, Vec<String>)> {
    table
        .rows
        .iter()
        .filter_map(|row| match cell(table, row, proposal.column("time")).and_then(ledger::timestamp) {
            Some(Stamp::Local(naive)) => Some((row.line, naive, ids(table, row, proposal))),
            _ => None,
        })
        .collect()
}

/// The ledger reader on the sampled rows, with the mapping as it will be written. Naive times
/// are read as UTC here: this checks the mapping, not the zone.
fn check(name: &str, text: &str, proposal: &Proposal) -> Result<InputSummary, String> {
    let tz = (!proposal.time_absolute).then_some(chrono_tz::UTC);
    let mut spec = SourceSpec::new(SourceKind::Ledger, PathBuf::from(name), tz, "tz".into());
    spec.format = Some(proposal.format.to_string());
    if proposal.receiver {
        spec.role = crate::ingest::LedgerRole::Receiver;
    }
    spec.columns = proposal.mapped.iter().map(|m| (m.field.to_string(), m.column.clone())).collect();
    spec.event_values = proposal
        .events
        .iter()
        .filter_map(|e| e.proposal.kind.map(|kind| (e.value.clone(), kind.name().to_string())))
        .collect();
    let format = ingest::choose_format(&spec, "").map_err(|e| e.to_string())?;
    read_sample(&spec, format, text).map(|(_, summary)| summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recognised(name: &str, text: &str) -> Result<File, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        recognise(&path, name)
    }

    #[test]
    fn each_kind_is_told_by_its_content_not_its_name() {
        let kinds = [
            ("a.txt", "{\"app\":{\"worker\":{\"lockDuration\":12000}}}", SourceKind::BullmqParams),
            ("b.txt", "worker:\n  stalledInterval: 5000\n", SourceKind::BullmqParams),
            (
                "c.json",
                "[{\"id\":\"1796028384205-0\",\"fields\":{\"event\":\"active\",\"jobId\":\"7\"}}]",
                SourceKind::BullmqEvents,
            ),
            (
                "d.json",
                "{\"key\":\"bull:q:7\",\"fields\":{\"name\":\"x\",\"processedOn\":\"1796028384205\"}}\n",
                SourceKind::BullmqJobs,
            ),
            ("e.csv", "2026-10-07 09:33:00.000 INFO job active id=7\n", SourceKind::Log),
            (
                "g.log",
                "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{\"name\":\"process q\",\"startTimeUnixNano\":\"1796028384205000000\",\"attributes\":[{\"key\":\"bullmq.job.id\",\"value\":{\"stringValue\":\"7\"}}]}]}]}]}\n",
                SourceKind::Trace,
            ),
            (
                "monitor.txt",
                "OK\n1796549993.412538 [0 lua] \"EXISTS\" \"bull:review:stalled-check\"\n",
                SourceKind::RedisMonitor,
            ),
            (
                "f.log",
                "at,run,event\n2026-10-07T00:33:00Z,r1,start\n2026-10-07T00:34:00Z,r1,done\n",
                SourceKind::Ledger,
            ),
        ];
        for (name, text, kind) in kinds {
            let file = recognised(name, text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(file.kind(), kind, "{name}");
        }
    }

    #[test]
    fn the_ledger_check_reads_the_sample_with_the_proposed_mapping() {
        let file = recognised(
            "runs.csv",
            "ts_utc,execution_id,step\n2026-10-07T00:33:00Z,e1,begin\n2026-10-07T00:34:00Z,e1,end\n2026-10-07T00:35:00Z,e1,ping\n2026-10-07T00:36:00Z,e2,begin\n",
        )
        .unwrap();
        let Found::Ledger(found) = file.found else { panic!("a ledger") };
        let summary = found.check.unwrap();
        assert_eq!((summary.events, summary.rejected), (3, 1), "'ping' has no proposal: rejected with a reason");
        assert_eq!(found.proposal.column("run"), Some("execution_id"));
        let runs: Vec<(&str, u64)> = found.moments.iter().map(|m| (m.id.as_str(), m.line)).collect();
        assert_eq!(runs, [("e1", 2), ("e1", 3), ("e1", 4), ("e2", 5)]);
    }

    #[test]
    fn what_is_not_a_source_says_why() {
        assert_eq!(recognised("x.bin", "a\0b").unwrap_err(), "binary data (a NUL byte)");
        assert_eq!(
            recognised("x.csv", "a,b\n1,2\n").unwrap_err(),
            "a table, but not a ledger: no column of timestamps among a, b"
        );
        assert!(recognised("x.txt", "hello\nworld\n").unwrap_err().starts_with("not a ledger, log"));
    }
}
