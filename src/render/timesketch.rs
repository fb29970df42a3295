//! A timeline for Timesketch (`--format timesketch`): one JSON object per line, in the shape its
//! JSONL importer takes, so that a responder loads leasetrace's normalized timeline (every source
//! in UTC, on one clock) into the tool a forensics team already works in. Contract and upload
//! steps in docs/outputs/timesketch.md.
//!
//! Timesketch's rules (google/timesketch, `docs/guides/user/import-from-json-csv.md` and
//! `timesketch/lib/utils.py`, `read_and_validate_jsonl`): each line must have `message`,
//! `datetime` (ISO 8601) and `timestamp_desc`; `timestamp` (microseconds since the epoch) is
//! computed from `datetime` when absent, and kept as given otherwise, so it is written here from
//! the same instant; `tag` (a list of strings) becomes the event's tags; every other field is
//! kept as an attribute. Attributes are flat strings and numbers (no nested objects), and none
//! starts with `_`, which the importer client drops.
//!
//! Rows: each shown event (`data_type` after its source, `leasetrace:ledger:row`, ...); for
//! `analyze` and `check`, each shown finding too (`leasetrace:finding`, at the finding's `at`,
//! tagged with its code and severity), and each cited event is tagged with the codes of the
//! findings citing it. The report's header warnings, which a reader must see first, are rows
//! placed at the time of the earliest row (`leasetrace:warning`), where a time-sorted view starts.

use std::collections::HashMap;
use std::io::{self, Write};

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::model::timeline::EventId;
use crate::model::{Channel, Event, EventKind, Finding, Report};
use crate::time::format_rfc3339;

use super::{Renderer, fill_summary};

pub struct Timesketch;

/// One row of the import. Field names are Timesketch's for the first four, leasetrace's event
/// fields (docs/json.md) for the rest, flattened.
#[derive(Serialize)]
struct Row<'a> {
    message: String,
    datetime: String,
    timestamp: i64,
    timestamp_desc: &'static str,
    data_type: &'static str,
    #[serde(skip_serializing_if = "<[&str]>::is_empty")]
    tag: Vec<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    channel: Option<Channel>,
    #[serde(skip_serializing_if = "Option::is_none")]
    source_file: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    source_line: Option<u64>,
    /// Who wrote the line, as its log envelope labels it.
    #[serde(skip_serializing_if = "Option::is_none")]
    source_instance: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    job_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    job_name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    queue: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    run_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    slot: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    item: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    worker: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    generation: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lease_until: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    attempt: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    accepted: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    payload_hash: Option<&'a str>,
    /// `worker-settings` events: the settings as `lockDuration=12000ms stalledInterval=5000ms`.
    #[serde(skip_serializing_if = "Option::is_none")]
    settings: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    raw: Option<&'a str>,
    /// Findings: the finding's code, severity and evidence (`path:line`, comma-separated).
    #[serde(skip_serializing_if = "Option::is_none")]
    finding: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    severity: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    evidence: Option<String>,
    /// Findings: the finding's number in the report (1-based, as the JSON report's `id`), the
    /// numbers of the findings it follows from (comma-separated), and its first cause when it
    /// states one.
    #[serde(skip_serializing_if = "Option::is_none")]
    finding_id: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    caused_by: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    root_cause: Option<String>,
    /// Warnings: the warning's kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    warning: Option<&'static str>,
}

impl Row<'_> {
    fn at(message: String, at: DateTime<Utc>, timestamp_desc: &'static str, data_type: &'static str) -> Self {
        Row {
            message,
            datetime: datetime(at),
            timestamp: at.timestamp_micros(),
            timestamp_desc,
            data_type,
            tag: Vec::new(),
            kind: None,
            channel: None,
            source_file: None,
            source_line: None,
            source_instance: None,
            job_id: None,
            job_name: None,
            queue: None,
            run_id: None,
            slot: None,
            item: None,
            worker: None,
            detail: None,
            generation: None,
            lease_until: None,
            attempt: None,
            accepted: None,
            key: None,
            payload_hash: None,
            settings: None,
            raw: None,
            finding: None,
            severity: None,
            evidence: None,
            finding_id: None,
            caused_by: None,
            root_cause: None,
            warning: None,
        }
    }
}

/// ISO 8601 in UTC to the microsecond, as Timesketch writes its own (`2015-07-24T19:01:01+00:00`
/// with a fraction): the precision of its `timestamp`.
fn datetime(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%dT%H:%M:%S%.6f+00:00").to_string()
}

/// What an event's time is, in Timesketch's words ("what type of timestamp it is").
fn timestamp_desc(event: &Event) -> &'static str {
    match event.origin().channel {
        Channel::Ledger => "Ledger row time",
        Channel::Log => "Log line time",
        Channel::EventsStream => "Stream entry time (Redis clock)",
        // The job hash field each event is read from (ingest/bullmq/jobs).
        Channel::JobHash => match event.kind {
            EventKind::JobAdded => "Job hash timestamp (added)",
            EventKind::JobActive => "Job hash processedOn (last activation)",
            _ => "Job hash finishedOn",
        },
    }
}

fn data_type(channel: Channel) -> &'static str {
    match channel {
        Channel::Ledger => "leasetrace:ledger:row",
        Channel::Log => "leasetrace:log:line",
        Channel::EventsStream => "leasetrace:bullmq:stream-entry",
        Channel::JobHash => "leasetrace:bullmq:job-hash",
    }
}

/// The row's one readable line: the kind, the ids, the detail.
fn message(event: &Event) -> String {
    let mut text = String::from(event.kind.name());
    for (label, value) in [
        ("job", event.job_id.as_deref()),
        ("run", event.run_id.as_deref()),
        ("item", event.item.as_deref()),
        ("worker", event.worker.as_deref()),
    ] {
        if let Some(value) = value {
            text.push(' ');
            text.push_str(label);
            text.push('=');
            text.push_str(value);
        }
    }
    if let Some(accepted) = event.lease().accepted {
        text.push_str(if accepted { " accepted" } else { " REJECTED" });
    }
    if let Some(settings) = event.settings() {
        text.push(' ');
        text.push_str(&settings.describe());
    }
    if let Some(detail) = event.detail_str() {
        text.push_str(": ");
        text.push_str(detail);
    }
    text
}

fn event_row<'a>(report: &'a Report, id: EventId, raw: &'a str, tag: Vec<&'a str>) -> Row<'a> {
    let event = report.timeline.get(id);
    let lease = event.lease();
    Row {
        tag,
        kind: Some(event.kind.name()),
        channel: Some(event.origin().channel),
        source_file: Some(report.timeline.path(event)),
        source_line: Some(u64::from(event.origin().line)),
        source_instance: event.instance.as_deref(),
        job_id: event.job_id.as_deref(),
        job_name: event.job_name.as_deref(),
        queue: event.queue.as_deref(),
        run_id: event.run_id.as_deref(),
        slot: event.slot.map(format_rfc3339),
        item: event.item.as_deref(),
        worker: event.worker.as_deref(),
        detail: event.detail_str(),
        generation: lease.generation,
        lease_until: lease.lease_until.map(format_rfc3339),
        attempt: lease.attempt,
        accepted: lease.accepted,
        key: lease.key.as_deref(),
        payload_hash: lease.payload_hash.as_deref(),
        settings: event.settings().map(|s| s.describe()),
        raw: Some(raw),
        ..Row::at(message(event), event.at(), timestamp_desc(event), data_type(event.origin().channel))
    }
}

fn finding_row<'a>(report: &'a Report, index: usize, finding: &'a Finding) -> Row<'a> {
    let tz = report.display_tz;
    let summary = fill_summary(&finding.summary, &finding.metrics, tz);
    let causes: Vec<String> = finding.caused_by.iter().map(|cause| (cause + 1).to_string()).collect();
    let evidence: Vec<String> = finding
        .evidence
        .iter()
        .map(|&id| {
            let event = report.timeline.get(id);
            format!("{}:{}", report.timeline.path(event), event.origin().line)
        })
        .collect();
    Row {
        tag: vec![finding.code, finding.severity.name()],
        finding: Some(finding.code),
        severity: Some(finding.severity.name()),
        evidence: Some(evidence.join(", ")),
        finding_id: Some(index + 1),
        caused_by: (!causes.is_empty()).then(|| causes.join(", ")),
        root_cause: super::root_cause(finding, tz),
        ..Row::at(
            // The summary's times are in the display zone; Timesketch shows its own.
            format!(
                "{} {}: {summary} (times in {})",
                finding.severity.name().to_uppercase(),
                finding.code,
                report.display_tz.name()
            ),
            finding.at,
            "Finding time (when the pattern became visible)",
            "leasetrace:finding",
        )
    }
}

fn line(out: &mut impl Write, row: &Row<'_>) -> io::Result<()> {
    serde_json::to_writer(&mut *out, row)?;
    out.write_all(b"\n")
}

impl Renderer for Timesketch {
    fn name(&self) -> &'static str {
        "timesketch"
    }

    fn render(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        let mut out = io::BufWriter::with_capacity(1 << 16, out);
        let shown = report.shown_events();
        // The warnings first: at the earliest row, where a time-sorted view starts.
        let first_event = shown.first().map(|&id| report.timeline.get(id).at());
        let first_finding = report.findings.iter().map(|f| f.at).min();
        // Nothing shown (a clean `analyze`): the case's first event still places them.
        let first = first_event
            .into_iter()
            .chain(first_finding)
            .min()
            .or_else(|| report.timeline.events().first().map(Event::at));
        if let Some(first) = first {
            for warning in &report.warnings {
                let row = Row {
                    tag: vec!["leasetrace-warning"],
                    warning: Some(warning.kind),
                    ..Row::at(
                        format!("WARNING {}: {}", warning.kind, warning.message),
                        first,
                        "Report warning (placed first; not a time of the case)",
                        "leasetrace:warning",
                    )
                };
                line(&mut out, &row)?;
            }
        }
        // Which findings cite each event, for its tags (a few events: only `analyze` and `check`
        // have findings).
        let mut cited: HashMap<EventId, Vec<&str>> = HashMap::new();
        for finding in &report.findings {
            for &id in &finding.evidence {
                let codes = cited.entry(id).or_default();
                if !codes.contains(&finding.code) {
                    codes.push(finding.code);
                }
            }
        }
        report.each_raw(&shown, super::read_back_failed, |id, raw| {
            line(&mut out, &event_row(report, id, raw, cited.get(&id).cloned().unwrap_or_default()))
        })?;
        for (index, finding) in report.findings.iter().enumerate() {
            line(&mut out, &finding_row(report, index, finding))?;
        }
        out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::report::{RawTexts, View};
    use crate::model::{Origin, Severity, Timeline};

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    fn report() -> Report {
        let origin = |channel, line| Origin { channel, source: 0, line };
        let mut selected =
            Event::new(at("2026-10-07T00:54:05.7Z").into(), EventKind::ItemSelected, origin(Channel::Ledger, 18));
        selected.item = Some("PR-4412".into());
        selected.edit().run_id = Some("run-0933-b".into());
        let added =
            Event::new(at("2026-10-07T00:33:00.000123456Z").into(), EventKind::JobAdded, origin(Channel::JobHash, 2));
        let mut finding = Finding::new("duplicate-selection", Severity::Error, at("2026-10-07T00:54:06.36Z"));
        finding.summary = "picked at {selected_at}".into();
        finding.metric("selected_at", crate::model::Value::Time(at("2026-10-07T00:54:05.7Z")));
        finding.evidence = vec![1];
        Report {
            view: View::Analyze,
            display_tz: chrono_tz::Asia::Seoul,
            inputs: Vec::new(),
            params: crate::model::LockParams::default(),
            warnings: vec![crate::model::warnings::Warning { kind: "lock-params-default", message: "assumed".into() }],
            assumptions: Vec::new(),
            timeline: Timeline::new(vec![selected, added]).with_paths(vec!["ledger.csv".into()]),
            findings: vec![finding],
            chains: Vec::new(),
            raw_texts: RawTexts::Read(std::collections::HashMap::new()),
            shown: None,
        }
    }

    fn rows(report: &Report) -> Vec<serde_json::Value> {
        let mut out = Vec::new();
        Timesketch.render(report, &mut out).unwrap();
        String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }

    #[test]
    fn every_row_has_timesketchs_mandatory_fields_and_a_timestamp_from_the_same_instant() {
        let rows = rows(&report());
        assert_eq!(rows.len(), 3, "the warning, the cited event, the finding");
        for row in &rows {
            for field in ["message", "datetime", "timestamp_desc"] {
                assert!(row[field].as_str().is_some_and(|v| !v.is_empty()), "{field} in {row}");
            }
            let datetime = DateTime::parse_from_rfc3339(row["datetime"].as_str().unwrap()).unwrap();
            assert_eq!(row["timestamp"], datetime.timestamp_micros(), "{row}");
            assert!(row.as_object().unwrap().keys().all(|k| !k.starts_with('_')));
            assert!(row.as_object().unwrap().values().all(|v| !v.is_object()), "flat attributes: {row}");
        }
        let [warning, event, finding] = &rows[..] else { unreachable!() };
        assert_eq!(warning["data_type"], "leasetrace:warning");
        assert_eq!(warning["datetime"], "2026-10-07T00:54:05.700000+00:00", "at the first row: the cited event");
        assert_eq!(event["message"], "item-selected run=run-0933-b item=PR-4412");
        assert_eq!(event["timestamp_desc"], "Ledger row time");
        assert_eq!(event["data_type"], "leasetrace:ledger:row");
        assert_eq!((event["source_file"].as_str(), event["source_line"].as_u64()), (Some("ledger.csv"), Some(18)));
        assert_eq!(event["tag"], serde_json::json!(["duplicate-selection"]), "tagged with the finding citing it");
        assert_eq!(finding["message"], "ERROR duplicate-selection: picked at 09:54:05.70 (times in Asia/Seoul)");
        assert_eq!(finding["tag"], serde_json::json!(["duplicate-selection", "error"]));
        assert_eq!(finding["evidence"], "ledger.csv:18");
        assert_eq!(finding["finding_id"], 1);
        assert!(finding.get("caused_by").is_none(), "it follows from no finding");
        assert_eq!(finding["datetime"], "2026-10-07T00:54:06.360000+00:00");
    }

    #[test]
    fn a_job_hash_time_says_which_field_it_is_and_keeps_its_microseconds() {
        let report = Report { view: View::Timeline, findings: Vec::new(), warnings: Vec::new(), ..report() };
        let rows = rows(&report);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0]["timestamp_desc"], "Job hash timestamp (added)");
        assert_eq!(rows[0]["datetime"], "2026-10-07T00:33:00.000123+00:00");
        assert_eq!(rows[0]["timestamp"], 1_791_333_180_000_123_i64);
        assert!(rows[1].get("tag").is_none(), "no finding, no tag");
    }
}
