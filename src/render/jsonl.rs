//! JSON Lines (`--format jsonl`): the JSON report cut into one object per line, in the spirit of
//! `rg --json`, for programs that read a report as a stream (`jq -c 'select(.type == "finding")'`,
//! a log shipper, a line-by-line importer). Contract in docs/outputs/jsonl.md.
//!
//! Each line is an object with a `type`: one `begin` (the schema, the command, and the header
//! warnings, so that a reader of the first line knows what makes the rest untrustworthy), one
//! `input` per source, one `event` per shown event, one `finding` per shown finding, and one
//! `summary` last (everything else of the JSON report, and the counts). The `input`, `event` and
//! `finding` objects are the JSON report's own (`json.rs`'s wire structs, with `type` added), so
//! the two formats cannot drift apart.
//!
//! Lines are written as they are produced: a timeline's events are serialized one at a time,
//! their raw lines read back a chunk at a time (`Report::each_raw`), so `timeline --format jsonl`
//! of millions of events holds no more than the timeline itself.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;

use crate::model::{InputSummary, Report, Severity};

use super::Renderer;
use super::json::{self, WireEvent, WireFinding};

/// The version of the line protocol: the set of line types and the `begin`/`summary` fields. The
/// `input`, `event` and `finding` objects follow the JSON report's schema (`report_schema`).
pub const SCHEMA: &str = "leasetrace.jsonl/v1";

pub struct JsonLines;

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Line<'a> {
    Begin(Begin<'a>),
    Input(&'a InputSummary),
    Event(WireEvent<'a>),
    Finding(WireFinding<'a>),
    Summary(Summary<'a>),
}

#[derive(Serialize)]
struct Begin<'a> {
    schema: &'static str,
    report_schema: &'static str,
    command: &'static str,
    display_tz: &'a str,
    warnings: &'a [crate::model::warnings::Warning],
}

#[derive(Serialize)]
struct Summary<'a> {
    schema: &'static str,
    report_schema: &'static str,
    command: &'static str,
    display_tz: &'a str,
    warnings: &'a [crate::model::warnings::Warning],
    params: json::Params<'a>,
    assumptions: &'a [String],
    /// The findings grouped by cause, by finding `id`, as the JSON report's `chains`.
    chains: Vec<json::WireChain>,
    counts: Counts,
    #[serde(skip_serializing_if = "Option::is_none")]
    check: Option<json::Check>,
    #[serde(skip_serializing_if = "Option::is_none")]
    filter: Option<json::WireFilter<'a>>,
}

/// How many lines of each type came before, and what the analysis read.
#[derive(Serialize)]
struct Counts {
    inputs: usize,
    /// `event` lines written.
    events: usize,
    /// Events on the timeline the analysis read (all of them, whatever was shown).
    events_read: usize,
    /// `finding` lines written, and of them by severity.
    findings: usize,
    findings_by_severity: BTreeMap<&'static str, usize>,
}

/// Writes one line: the object and a newline.
fn line(out: &mut impl Write, line: &Line<'_>) -> io::Result<()> {
    serde_json::to_writer(&mut *out, line)?;
    out.write_all(b"\n")
}

impl Renderer for JsonLines {
    fn name(&self) -> &'static str {
        "jsonl"
    }

    fn render(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        // serde_json writes a few bytes at a time: into a buffer of a known type (see json.rs).
        let mut out = io::BufWriter::with_capacity(1 << 16, out);
        let command = json::command(report);
        let display_tz = report.display_tz.name();
        line(
            &mut out,
            &Line::Begin(Begin {
                schema: SCHEMA,
                report_schema: json::SCHEMA,
                command,
                display_tz,
                warnings: &report.warnings,
            }),
        )?;
        for input in &report.inputs {
            line(&mut out, &Line::Input(input))?;
        }
        let shown = report.shown_events();
        report.each_raw(&shown, super::read_back_failed, |id, raw| {
            line(&mut out, &Line::Event(json::wire_event(report, id, raw)))
        })?;
        for (index, finding) in report.findings.iter().enumerate() {
            line(&mut out, &Line::Finding(json::wire_finding(report, index, finding)))?;
        }
        let by_severity = |severity| report.findings.iter().filter(|f| f.severity == severity).count();
        let counts = Counts {
            inputs: report.inputs.len(),
            events: shown.len(),
            events_read: report.timeline.len(),
            findings: report.findings.len(),
            findings_by_severity: [Severity::Error, Severity::Warning, Severity::Info]
                .into_iter()
                .map(|severity| (severity.name(), by_severity(severity)))
                .collect(),
        };
        line(
            &mut out,
            &Line::Summary(Summary {
                schema: SCHEMA,
                report_schema: json::SCHEMA,
                command,
                display_tz,
                warnings: &report.warnings,
                params: json::params(report),
                assumptions: &report.assumptions,
                chains: json::wire_chains(report),
                counts,
                check: json::check(report),
                filter: json::wire_filter(report),
            }),
        )?;
        out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::report::{RawTexts, View};
    use crate::model::{Channel, Event, EventKind, Origin, Timeline};

    fn report(view: View) -> Report {
        let at = chrono::DateTime::parse_from_rfc3339("2026-10-07T00:54:05.700Z").unwrap().with_timezone(&chrono::Utc);
        let mut event =
            Event::new(at.into(), EventKind::ItemSelected, Origin { channel: Channel::Ledger, source: 0, line: 18 });
        event.item = Some("PR-4412".into());
        Report {
            view,
            display_tz: chrono_tz::Asia::Seoul,
            inputs: Vec::new(),
            params: crate::model::LockParams::default(),
            warnings: Vec::new(),
            assumptions: vec!["an assumption".into()],
            timeline: Timeline::new(vec![event]).with_paths(vec!["ledger.csv".into()]),
            findings: Vec::new(),
            chains: Vec::new(),
            raw_texts: RawTexts::Read(std::collections::HashMap::new()),
            shown: None,
        }
    }

    fn lines(report: &Report) -> Vec<serde_json::Value> {
        let mut out = Vec::new();
        JsonLines.render(report, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.ends_with('\n'));
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }

    #[test]
    fn each_line_is_one_object_with_its_type_begin_first_and_summary_last() {
        let lines = lines(&report(View::Timeline));
        let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
        assert_eq!(types, ["begin", "event", "summary"]);
        assert_eq!(lines[0]["schema"], SCHEMA);
        assert_eq!(lines[0]["report_schema"], json::SCHEMA);
        assert_eq!(lines[0]["command"], "timeline");
        // The event is the JSON report's event, with `type` added.
        assert_eq!(lines[1]["kind"], "item-selected");
        assert_eq!(lines[1]["item"], "PR-4412");
        assert_eq!(lines[1]["source"], serde_json::json!({ "path": "ledger.csv", "line": 18 }));
        assert_eq!(lines[2]["counts"]["events"], 1);
        assert_eq!(lines[2]["counts"]["events_read"], 1);
        assert_eq!(lines[2]["assumptions"], serde_json::json!(["an assumption"]));
        assert!(lines[2].get("check").is_none(), "no verdict outside check");
    }

    #[test]
    fn check_ends_with_its_verdict() {
        let lines = lines(&report(View::Check(Severity::Warning)));
        let summary = lines.last().unwrap();
        assert_eq!(summary["check"], serde_json::json!({ "fail_on": "warning", "failing": 0, "passed": true }));
        assert_eq!(lines.iter().filter(|l| l["type"] == "event").count(), 0, "no finding cites the event");
    }
}
