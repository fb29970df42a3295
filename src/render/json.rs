//! The JSON report: a public interface other tools parse (contract in docs/json.md).
//!
//! Wire rules: `schema` names the version; times are RFC 3339 in UTC with milliseconds; durations
//! are seconds as numbers; every event carries `source.path` and `source.line`. Any change to
//! these shapes needs a new schema version and a note in docs/json.md.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;
use serde_json::{Map, Value as JsonValue};

use crate::model::report::View;
use crate::model::timeline::EventId;
use crate::model::{Finding, InputSummary, Report, Value};
use crate::time::format_rfc3339;

use super::{Renderer, fill_summary};

pub const SCHEMA: &str = "leasetrace.report/v5";

pub struct Json;

#[derive(Serialize)]
struct Wire<'a> {
    schema: &'static str,
    command: &'static str,
    display_tz: &'a str,
    warnings: &'a [crate::model::warnings::Warning],
    inputs: &'a [InputSummary],
    params: Params<'a>,
    assumptions: &'a [String],
    timeline: ShownEvents<'a>,
    findings: Vec<WireFinding<'a>>,
    chains: Vec<WireChain>,
    #[serde(skip_serializing_if = "Option::is_none")]
    check: Option<Check>,
    #[serde(skip_serializing_if = "Option::is_none")]
    filter: Option<WireFilter<'a>>,
}

/// What a filter (`--since`, `--job`, ...) showed of the report, and what the analysis had.
#[derive(Serialize)]
pub(crate) struct WireFilter<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    since: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    until: Option<String>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    job_id: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    run_id: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    item: &'a [String],
    events_read: usize,
    findings_found: usize,
    findings_hidden: BTreeMap<&'static str, usize>,
}

pub(crate) fn wire_filter(report: &Report) -> Option<WireFilter<'_>> {
    let shown = report.shown.as_ref()?;
    let filter = &shown.filter;
    Some(WireFilter {
        since: filter.since.map(format_rfc3339),
        until: filter.until.map(format_rfc3339),
        job_id: &filter.jobs,
        run_id: &filter.runs,
        item: &filter.items,
        events_read: shown.events_read,
        findings_found: shown.findings_found,
        findings_hidden: ["error", "warning", "info"].into_iter().zip(shown.hidden).collect(),
    })
}

/// A group of findings linked by cause, by finding `id`.
#[derive(Serialize)]
pub(crate) struct WireChain {
    severity: &'static str,
    /// From the most severe effect back to the first finding it follows from.
    path: Vec<usize>,
    also: Vec<usize>,
    /// The first cause that is not a finding, filled (the last finding of `path` states it).
    #[serde(skip_serializing_if = "Option::is_none")]
    root_cause: Option<String>,
}

pub(crate) fn wire_chains(report: &Report) -> Vec<WireChain> {
    report
        .chains
        .iter()
        .map(|chain| {
            let last = &report.findings[chain.first_cause()];
            WireChain {
                severity: chain.severity(&report.findings).name(),
                path: chain.path.iter().map(|i| i + 1).collect(),
                also: chain.also.iter().map(|i| i + 1).collect(),
                root_cause: super::root_cause(last, report.display_tz),
            }
        })
        .collect()
}

/// The events a report shows, serialized one by one as they are written: a whole timeline is
/// millions of events, never held as wire structs at once.
struct ShownEvents<'a> {
    report: &'a Report,
    ids: Vec<crate::model::timeline::EventId>,
    /// A read-back failure, kept whole: serde's error carries only its text.
    failure: std::cell::RefCell<Option<crate::error::Error>>,
}

impl Serialize for ShownEvents<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error as _, SerializeSeq};
        let mut events = serializer.serialize_seq(Some(self.ids.len()))?;
        let failed = |error: crate::error::Error| {
            let error_text = S::Error::custom(&error);
            *self.failure.borrow_mut() = Some(error);
            error_text
        };
        self.report
            .each_raw(&self.ids, failed, |id, raw| events.serialize_element(&wire_event(self.report, id, raw)))?;
        events.end()
    }
}

#[derive(Serialize)]
pub(crate) struct Params<'a> {
    #[serde(flatten)]
    values: &'a crate::model::LockParams,
    origins: BTreeMap<&'static str, crate::model::ParamOrigin>,
    /// Every value given for each parameter that something gave (flag, file, each distinct
    /// logged value), and which one is in force.
    given: BTreeMap<&'static str, &'a [crate::model::params::Given]>,
}

#[derive(Serialize)]
pub(crate) struct Check {
    fail_on: &'static str,
    failing: usize,
    passed: bool,
}

#[derive(Serialize)]
struct Source<'a> {
    path: &'a str,
    line: u64,
    /// The instance that wrote the line, as its log envelope labels it (`pod=web-1 container=app`).
    #[serde(skip_serializing_if = "Option::is_none")]
    instance: Option<&'a str>,
}

#[derive(Serialize)]
pub struct WireEvent<'a> {
    at: String,
    kind: &'static str,
    source: Source<'a>,
    channel: crate::model::Channel,
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
    #[serde(skip_serializing_if = "Option::is_none")]
    settings: Option<crate::model::WorkerSettings>,
    raw: &'a str,
}

#[derive(Serialize)]
struct Step<'a> {
    result: &'static str,
    formula: &'a str,
}

#[derive(Serialize)]
pub(crate) struct WireFinding<'a> {
    /// The finding's 1-based position in the report: what `caused_by` and `chains` refer to.
    id: usize,
    kind: &'static str,
    severity: &'static str,
    at: String,
    summary: String,
    evidence: Vec<WireEvent<'a>>,
    metrics: Map<String, JsonValue>,
    arithmetic: Vec<Step<'a>>,
    notes: &'a [String],
    /// The one-line form of `summary` that the headline shows.
    headline: String,
    /// The ids of the findings this one follows from.
    caused_by: Vec<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    root_cause: Option<String>,
}

pub fn wire_event<'a>(report: &'a Report, id: EventId, raw: &'a str) -> WireEvent<'a> {
    let event = report.timeline.get(id);
    WireEvent {
        at: format_rfc3339(event.at()),
        kind: event.kind.name(),
        source: Source {
            path: report.timeline.path(event),
            line: u64::from(event.origin().line),
            instance: event.instance.as_deref(),
        },
        channel: event.origin().channel,
        job_id: event.job_id.as_deref(),
        job_name: event.job_name.as_deref(),
        queue: event.queue.as_deref(),
        run_id: event.run_id.as_deref(),
        slot: event.slot.map(format_rfc3339),
        item: event.item.as_deref(),
        worker: event.worker.as_deref(),
        detail: event.detail_str(),
        generation: event.lease().generation,
        lease_until: event.lease().lease_until.map(format_rfc3339),
        attempt: event.lease().attempt,
        accepted: event.lease().accepted,
        key: event.lease().key.as_deref(),
        payload_hash: event.lease().payload_hash.as_deref(),
        settings: event.settings(),
        raw,
    }
}

fn wire_value(value: &Value) -> JsonValue {
    match value {
        Value::Time(at) => JsonValue::String(format_rfc3339(*at)),
        Value::Seconds(s) | Value::Ratio(s) => {
            serde_json::Number::from_f64(*s).map_or(JsonValue::Null, JsonValue::Number)
        }
        Value::Count(n) => JsonValue::from(*n),
        Value::Flag(b) => JsonValue::Bool(*b),
        Value::Text(t) => JsonValue::String(t.clone()),
    }
}

pub(crate) fn wire_finding<'a>(report: &'a Report, index: usize, finding: &'a Finding) -> WireFinding<'a> {
    let tz = report.display_tz;
    WireFinding {
        id: index + 1,
        kind: finding.code,
        severity: finding.severity.name(),
        at: format_rfc3339(finding.at),
        summary: fill_summary(&finding.summary, &finding.metrics, report.display_tz),
        evidence: finding.evidence.iter().map(|&id| wire_event(report, id, report.raw(id))).collect(),
        metrics: finding.metrics.iter().map(|(name, value)| ((*name).to_string(), wire_value(value))).collect(),
        arithmetic: finding.derivations.iter().map(|d| Step { result: d.result, formula: &d.formula }).collect(),
        notes: &finding.notes,
        headline: fill_summary(finding.headline_template(), &finding.metrics, tz),
        caused_by: finding.caused_by.iter().map(|i| i + 1).collect(),
        root_cause: super::root_cause(finding, tz),
    }
}

/// The command that built `report`, as the wire names it.
pub(crate) fn command(report: &Report) -> &'static str {
    match report.view {
        View::Timeline => "timeline",
        View::Analyze => "analyze",
        View::Check(_) => "check",
    }
}

pub(crate) fn params(report: &Report) -> Params<'_> {
    Params {
        values: &report.params,
        origins: report.params.entries().iter().map(|(name, _, origin)| (*name, *origin)).collect(),
        given: crate::model::Param::ALL
            .iter()
            .map(|&param| (param.name(), report.params.given(param)))
            .filter(|(_, given)| !given.is_empty())
            .collect(),
    }
}

/// The verdict of `check` (`None` for the other commands).
pub(crate) fn check(report: &Report) -> Option<Check> {
    match report.view {
        View::Check(threshold) => {
            Some(Check { fail_on: threshold.name(), failing: report.failing(), passed: report.failing() == 0 })
        }
        _ => None,
    }
}

impl Renderer for Json {
    fn name(&self) -> &'static str {
        "json"
    }

    fn render(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        let wire = Wire {
            schema: SCHEMA,
            command: command(report),
            display_tz: report.display_tz.name(),
            warnings: &report.warnings,
            inputs: &report.inputs,
            params: params(report),
            assumptions: &report.assumptions,
            timeline: ShownEvents { report, ids: report.shown_events(), failure: std::cell::RefCell::new(None) },
            findings: report.findings.iter().enumerate().map(|(i, f)| wire_finding(report, i, f)).collect(),
            chains: wire_chains(report),
            check: check(report),
            filter: wire_filter(report),
        };
        // serde_json writes a few bytes at a time: into a buffer of a known type, not through `dyn`
        // for each piece (a quarter of the time of writing a whole timeline).
        let mut buffered = io::BufWriter::with_capacity(1 << 16, &mut *out);
        if let Err(error) = serde_json::to_writer_pretty(&mut buffered, &wire) {
            return Err(match wire.timeline.failure.take() {
                Some(failure) => super::read_back_failed(failure),
                None => error.into(),
            });
        }
        buffered.write_all(b"\n")?;
        buffered.flush()
    }
}
