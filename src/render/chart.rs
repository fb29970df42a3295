//! The picture both chart renderers draw (`mermaid`, `svg`): lanes of bars and milestones, laid
//! out from a finished report.
//!
//! A lane is one job attempt or one ledger round; its marks are spans (the lock held, the renewal
//! window, a round running, two rounds overlapping) and instants (the restart, the lock expiry, the
//! rerun, each pick of a duplicate). Nothing here is computed: every time is a metric a detector
//! wrote, or the time of an evidence event. Which metric becomes which mark is written once, in
//! `RULES` below, so both pictures say the same thing and a new detector gets a picture by adding
//! rows there. A finding without rows (or whose metrics match none of its rows) is drawn as
//! generic marks at its evidence events, in a lane of its own subject.
//!
//! Info findings are not drawn (a lock's headroom over weeks of runs would stretch the axis away
//! from the incident); the chart lists them in `not_drawn`, which both pictures print.
//!
//! Lanes are found by keys: `run:<run id>` for a ledger round, `job:<job id>@<activation>` for a
//! job attempt. A rule that knows both (stalled-rerun's lost attempt has `run_id` and `activated_at`)
//! gives its lane both keys, so a later finding naming the attempt either way lands in the same lane.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use crate::model::timeline::EventId;
use crate::model::{Finding, Report, Severity, Value};
use crate::time::{format_clock, format_rfc3339};

/// What a mark stands for: each picture gives each its own look, and the legend its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Element {
    /// A job's BullMQ lock, from activation to expiry.
    Lock,
    /// When the first lock renewal was due (earliest to latest).
    RenewalWindow,
    /// The span the lock's expiry lies in, when the evidence cannot pin it down.
    ExpiryWindow,
    /// A ledger round, from its first row to its last.
    Run,
    /// Two rounds running at once.
    Overlap,
    /// A server process started while a job was active.
    Restart,
    /// The lock expired.
    Expiry,
    /// The job ran again from the start.
    Rerun,
    /// A round picked an item (one of a duplicate pair).
    Pick,
    /// A job failed for good.
    Failure,
    /// A stall recovered with no log line.
    Unlogged,
    /// An evidence event of a finding that has no rows of its own.
    Evidence,
}

impl Element {
    /// The class name the pictures use (`mermaid` in comments, `svg` as a CSS class).
    pub fn name(self) -> &'static str {
        match self {
            Element::Lock => "lock",
            Element::RenewalWindow => "renewal-window",
            Element::ExpiryWindow => "expiry-window",
            Element::Run => "run",
            Element::Overlap => "overlap",
            Element::Restart => "restart",
            Element::Expiry => "expiry",
            Element::Rerun => "rerun",
            Element::Pick => "pick",
            Element::Failure => "failure",
            Element::Unlogged => "unlogged",
            Element::Evidence => "evidence",
        }
    }

    /// What the legend says.
    pub fn legend(self) -> &'static str {
        match self {
            Element::Lock => "lock held (activation to expiry)",
            Element::RenewalWindow => "first lock renewal due",
            Element::ExpiryWindow => "lock expiry (somewhere in)",
            Element::Run => "round running (ledger)",
            Element::Overlap => "rounds overlapping",
            Element::Restart => "process restart",
            Element::Expiry => "lock expired",
            Element::Rerun => "job re-run",
            Element::Pick => "item picked",
            Element::Failure => "job failed",
            Element::Unlogged => "stall recovered, not logged",
            Element::Evidence => "evidence event",
        }
    }
}

/// Which lane a rule's mark goes to: the round named by the text metric `run`, and/or the attempt
/// of the finding's `job_id` activated at the time metric `job_at`.
#[derive(Debug, Clone, Copy)]
pub struct LaneOf {
    pub run: Option<&'static str>,
    pub job_at: Option<&'static str>,
}

/// The lost attempt of a stalled-rerun.
const LOST: LaneOf = LaneOf { run: Some("run_id"), job_at: Some("activated_at") };
/// The attempt that ran again.
const RERUN: LaneOf = LaneOf { run: Some("rerun_run_id"), job_at: Some("rerun_at") };
const RUN_A: LaneOf = LaneOf { run: Some("run_a"), job_at: None };
const RUN_B: LaneOf = LaneOf { run: Some("run_b"), job_at: None };

/// One metric → picture-element row: a finding of `code` that has the time metric `from` (and
/// `to`, for a span; and not `unless`) gets a mark of `element` in the lane `lane`, labelled with
/// `label` (a summary template: `{metric}` is filled in the display zone). `crit` marks the parts
/// that went wrong (drawn red; Mermaid's `crit`).
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub code: &'static str,
    pub element: Element,
    pub from: &'static str,
    pub to: Option<&'static str>,
    pub unless: Option<&'static str>,
    pub lane: LaneOf,
    pub label: &'static str,
    pub crit: bool,
}

const fn span(
    code: &'static str,
    element: Element,
    from: &'static str,
    to: &'static str,
    lane: LaneOf,
    label: &'static str,
) -> Rule {
    Rule { code, element, from, to: Some(to), unless: None, lane, label, crit: false }
}

const fn instant(code: &'static str, element: Element, at: &'static str, lane: LaneOf, label: &'static str) -> Rule {
    Rule { code, element, from: at, to: None, unless: None, lane, label, crit: false }
}

const fn crit(rule: Rule) -> Rule {
    Rule { crit: true, ..rule }
}

const fn unless(rule: Rule, metric: &'static str) -> Rule {
    Rule { unless: Some(metric), ..rule }
}

/// Every metric a picture shows, and as what. The only place that knows detectors' metric names.
#[rustfmt::skip]
pub static RULES: &[Rule] = &[
    // stalled-rerun: the lost attempt's lock, its renewal window, the restart that killed it, the
    // expiry (exact, or a window), then the rerun in the next attempt's lane.
    span("stalled-rerun", Element::Lock, "activated_at", "lock_expired_at", LOST, "lock held {activated_at}–{lock_expired_at}"),
    span("stalled-rerun", Element::Lock, "activated_at", "lock_expired_earliest_at", LOST, "lock held from {activated_at}"),
    span("stalled-rerun", Element::ExpiryWindow, "lock_expired_earliest_at", "lock_expired_latest_at", LOST, "lock expired {lock_expired_earliest_at}–{lock_expired_latest_at}"),
    span("stalled-rerun", Element::RenewalWindow, "first_renewal_earliest_at", "first_renewal_due_at", LOST, "first renewal due {first_renewal_earliest_at}–{first_renewal_due_at}"),
    crit(unless(instant("stalled-rerun", Element::Restart, "restart_at", LOST, "restart {restart_at}"), "restart_latest_at")),
    crit(span("stalled-rerun", Element::Restart, "restart_at", "restart_latest_at", LOST, "restart {restart_at}–{restart_latest_at}")),
    instant("stalled-rerun", Element::Expiry, "lock_expired_at", LOST, "lock expired {lock_expired_at}"),
    instant("stalled-rerun", Element::Rerun, "rerun_at", RERUN, "re-run from the start {rerun_at}"),
    // unlogged-stall: the recovery, in the lane of the attempt that it started.
    instant("unlogged-stall", Element::Unlogged, "recovered_at", LaneOf { run: None, job_at: Some("recovered_at") }, "stall not logged {recovered_at}"),
    // stalled-limit-exceeded: the failure, in the lane of the last attempt.
    crit(instant("stalled-limit-exceeded", Element::Failure, "failed_at", LaneOf { run: None, job_at: Some("last_activated_at") }, "failed: stalled more than allowed {failed_at}")),
    // sweep-overlap: both rounds running, and the overlap in the round that should not have started.
    span("sweep-overlap", Element::Run, "a_started_at", "a_ended_at", RUN_A, "round {a_started_at}–{a_ended_at}"),
    span("sweep-overlap", Element::Run, "b_started_at", "b_ended_at", RUN_B, "round {b_started_at}–{b_ended_at}"),
    crit(span("sweep-overlap", Element::Overlap, "b_started_at", "overlap_end_at", RUN_B, "overlap with {run_a} {b_started_at}–{overlap_end_at}")),
    // duplicate-selection: each round's pick of the same item.
    crit(instant("duplicate-selection", Element::Pick, "selected_a_at", RUN_A, "picks {item} {selected_a_at}")),
    crit(instant("duplicate-selection", Element::Pick, "selected_b_at", RUN_B, "picks {item} again {selected_b_at} (+{delta_s})")),
];

/// At most this many lanes: a case of thousands of findings still gives a picture a person reads
/// (and a Mermaid chart a browser draws). Findings come in the report's order, most severe chain
/// first, so the lanes kept are those of the findings people read first; the others are listed
/// in `not_drawn`.
pub const MAX_LANES: usize = 24;

/// At most this many evidence events of one finding are drawn as generic marks.
pub const MAX_EVIDENCE_MARKS: usize = 8;

#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    pub element: Element,
    /// Filled, in the display zone.
    pub label: String,
    pub start: DateTime<Utc>,
    /// `None`: an instant (a milestone).
    pub end: Option<DateTime<Utc>>,
    /// A part that went wrong.
    pub crit: bool,
    /// The finding it shows, by index into `report.findings`.
    pub finding: usize,
    /// Later findings that would draw the very same mark (a round cited by five findings): drawn
    /// once, numbered with all of them, so a dense lane does not say one thing five times.
    pub also: Vec<usize>,
    pub code: &'static str,
    /// The metrics it was drawn from (`from`, `to`), or the evidence event it marks.
    pub from: Source,
}

impl Mark {
    /// The label with the number of its finding (`[4]`, or `[19, 31]` for a mark several findings
    /// draw), as the headline and the tables number them.
    pub fn caption(&self) -> String {
        let numbers: Vec<String> = self.findings().map(|index| (index + 1).to_string()).collect();
        format!("{} [{}]", self.label, numbers.join(", "))
    }

    /// Every finding the mark shows, its own first.
    pub fn findings(&self) -> impl Iterator<Item = usize> + '_ {
        std::iter::once(self.finding).chain(self.also.iter().copied())
    }

    /// Whether `other` draws the same thing at the same place (its finding aside).
    fn same_drawing(&self, other: &Mark) -> bool {
        self.element == other.element
            && self.label == other.label
            && self.start == other.start
            && self.end == other.end
            && self.crit == other.crit
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Source {
    Metrics(&'static str, Option<&'static str>),
    Event(EventId),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Lane {
    /// `run:<id>`, `job:<id>@<RFC 3339>`, `job:<id>` or `finding:<index>`: the first is its name.
    pub keys: Vec<String>,
    /// `round run-0933-a`, `job 42`, or a finding's code.
    pub title: String,
    /// A second line: the job of a round, the activation of an attempt.
    pub detail: String,
    pub marks: Vec<Mark>,
}

impl Lane {
    pub fn start(&self) -> Option<DateTime<Utc>> {
        self.marks.iter().map(|m| m.start).min()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub tz: Tz,
    /// What the chart is about, in one line (the headline's first line).
    pub title: String,
    /// The headline's other lines, with their depth: what the title follows from.
    pub story: Vec<(usize, String)>,
    /// The title's chain as codes and numbers, from its effect back (`duplicate-selection [4]`,
    /// `sweep-overlap [3]`, …): a title in few words, for a picture that cannot wrap one (Mermaid).
    pub chain: Vec<String>,
    /// The report's warnings (what makes its numbers untrustworthy: defaults in force, a filter),
    /// which every picture says before anything else.
    pub warnings: Vec<String>,
    /// Lanes in order of their first mark.
    pub lanes: Vec<Lane>,
    /// Findings not drawn, and why (`lock-headroom (info)`).
    pub not_drawn: Vec<String>,
}

impl Chart {
    /// The earliest and latest time drawn, or `None` for an empty chart.
    pub fn range(&self) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
        let marks = || self.lanes.iter().flat_map(|l| &l.marks);
        let start = marks().map(|m| m.start).min()?;
        let end = marks().map(|m| m.end.unwrap_or(m.start)).max()?;
        Some((start, end))
    }

    /// The display zone's abbreviation over the chart (`KST`; `EDT/EST` across a change); `None`
    /// for an empty chart, which has no time to take it at.
    pub fn zone_abbreviation(&self) -> Option<String> {
        let (start, end) = self.range()?;
        let at = |t: DateTime<Utc>| t.with_timezone(&self.tz).format("%Z").to_string();
        let (first, last) = (at(start), at(end));
        Some(if first == last { first } else { format!("{first}/{last}") })
    }

    /// The abbreviation when it says something the zone's name does not: `None` for `UTC`, whose
    /// abbreviation is its name (a title then says "times in UTC", not "UTC, UTC").
    pub fn distinct_abbreviation(&self) -> Option<String> {
        self.zone_abbreviation().filter(|abbreviation| abbreviation != self.tz.name())
    }

    /// Whether the chart crosses a change of the display zone's offset (a DST change): wall times
    /// then jump, which a picture drawn in wall time (Mermaid) shows as a gap or a fold.
    pub fn crosses_offset_change(&self) -> bool {
        use chrono::Offset;
        self.range().is_some_and(|(start, end)| {
            let offset = |t: DateTime<Utc>| t.with_timezone(&self.tz).offset().fix();
            offset(start) != offset(end)
        })
    }
}

/// The chart of `report`.
pub fn chart(report: &Report) -> Chart {
    let tz = report.display_tz;
    let (title, story) = headline(report);
    let chain = crate::render::headline::lines(report)
        .iter()
        .enumerate()
        .take_while(|(i, line)| {
            use crate::render::headline::Role;
            (*i == 0 && line.role == Role::Effect) || (*i > 0 && line.role == Role::CausedBy)
        })
        .filter_map(|(_, line)| Some(format!("{} [{}]", line.code?, line.number?)))
        .collect();
    let warnings = report.warnings.iter().map(|w| w.message.clone()).collect();
    let mut chart = Chart { tz, title, story, chain, warnings, lanes: Vec::new(), not_drawn: Vec::new() };
    for (index, finding) in report.findings.iter().enumerate() {
        if finding.severity == Severity::Info {
            chart.not_drawn.push(format!("{} (info)", finding.code));
            continue;
        }
        let before = mark_count(&chart);
        let mut full = false;
        for rule in RULES.iter().filter(|r| r.code == finding.code) {
            apply(&mut chart, rule, index, finding, tz, &mut full);
        }
        if mark_count(&chart) == before && !full {
            generic(&mut chart, report, index, finding, &mut full);
        }
        if full {
            let what = if mark_count(&chart) == before { "" } else { ", in part" };
            chart.not_drawn.push(format!(
                "{} [{}]{what} (the picture holds {MAX_LANES} lanes)",
                finding.code,
                index + 1
            ));
        }
    }
    for lane in &mut chart.lanes {
        merge_same_drawings(&mut lane.marks);
        lane.marks.sort_by_key(|m| (m.start, m.end.is_some()));
    }
    // A stable sort: lanes starting together keep the order their findings came in.
    chart.lanes.sort_by_key(Lane::start);
    chart
}

/// The chart's title and story: the headline's first line, what people read first in every
/// format, and the lines after it (the causes, with their depth), led as the table leads them.
fn headline(report: &Report) -> (String, Vec<(usize, String)>) {
    use crate::render::headline::Role;
    if report.view == crate::model::report::View::Timeline {
        // `timeline` runs no detector: "no findings" would be a wrong answer.
        return ("The timeline view has no findings to draw: run leasetrace analyze".to_string(), Vec::new());
    }
    let lines = crate::render::headline::lines(report);
    let Some(first) = lines.first() else { return ("No findings".to_string(), Vec::new()) };
    let title = match first.code {
        Some(code) => format!("{code}: {}", first.text),
        None => first.text.clone(),
    };
    let story = lines[1..]
        .iter()
        .map(|line| {
            let finding = match (line.severity, line.code, line.number) {
                (Some(severity), Some(code), Some(number)) => {
                    format!("{} [{number}] {code}: ", severity.name().to_uppercase())
                }
                _ => String::new(),
            };
            let lead = match line.role {
                Role::Effect | Role::More => "",
                Role::CausedBy => "← caused by ",
                Role::RootCause => "← because ",
                Role::Also => "also ",
            };
            (line.depth, format!("{lead}{finding}{}", line.text))
        })
        .collect();
    (title, story)
}

/// Folds marks that draw the same thing into the first of them (see `Mark::also`). Quadratic in
/// a lane's marks, which `MAX_EVIDENCE_MARKS` and the rules keep to a few dozen.
fn merge_same_drawings(marks: &mut Vec<Mark>) {
    let mut kept: Vec<Mark> = Vec::with_capacity(marks.len());
    for mark in marks.drain(..) {
        match kept.iter_mut().find(|k| k.same_drawing(&mark)) {
            Some(first) => first.also.extend(mark.findings()),
            None => kept.push(mark),
        }
    }
    for mark in &mut kept {
        mark.also.sort_unstable();
        mark.also.dedup();
        let own = mark.finding;
        mark.also.retain(|&index| index != own);
    }
    *marks = kept;
}

fn mark_count(chart: &Chart) -> usize {
    chart.lanes.iter().map(|l| l.marks.len()).sum()
}

fn time(finding: &Finding, name: &str) -> Option<DateTime<Utc>> {
    match finding.get(name) {
        Some(Value::Time(at)) => Some(*at),
        _ => None,
    }
}

fn text<'a>(finding: &'a Finding, name: &str) -> Option<&'a str> {
    match finding.get(name) {
        Some(Value::Text(t)) => Some(t),
        _ => None,
    }
}

fn apply(chart: &mut Chart, rule: &Rule, index: usize, finding: &Finding, tz: Tz, full: &mut bool) {
    let Some(start) = time(finding, rule.from) else { return };
    let end = match rule.to {
        Some(to) => match time(finding, to) {
            Some(end) => Some(end),
            None => return,
        },
        None => None,
    };
    if rule.unless.is_some_and(|m| finding.get(m).is_some()) {
        return;
    }
    let Some(lane) = lane_for(chart, rule.lane, finding, tz, full) else { return };
    chart.lanes[lane].marks.push(Mark {
        element: rule.element,
        label: crate::render::fill_summary(rule.label, &finding.metrics, tz),
        start,
        end,
        crit: rule.crit,
        finding: index,
        also: Vec::new(),
        code: finding.code,
        from: Source::Metrics(rule.from, rule.to),
    });
}

/// The lane `of` names for `finding`, made if new; `None` when the finding has none of its ids.
fn lane_for(chart: &mut Chart, of: LaneOf, finding: &Finding, tz: Tz, full: &mut bool) -> Option<usize> {
    let run = of.run.and_then(|m| text(finding, m));
    let job = text(finding, "job_id");
    let attempt = of.job_at.and_then(|m| Some((job?, time(finding, m)?)));
    let mut keys = Vec::new();
    if let Some(run) = run {
        keys.push(format!("run:{run}"));
    }
    if let Some((job, at)) = attempt {
        keys.push(format!("job:{job}@{}", format_rfc3339(at)));
    }
    if keys.is_empty() {
        return None;
    }
    let detail = match (run, attempt) {
        (Some(_), Some((job, _))) => format!("job {job}"),
        (None, Some((_, at))) => format!("active from {}", format_clock(at, tz)),
        _ => String::new(),
    };
    let title = match (run, attempt) {
        (Some(run), _) => format!("round {run}"),
        (None, Some((job, _))) => format!("job {job}"),
        (None, None) => unreachable!("keys is not empty"),
    };
    add_lane(chart, keys, title, detail, full)
}

/// The lane with any of `keys`, which gains the others (and a detail it lacked); else a new one,
/// unless there are `MAX_LANES` already (then `full` is set).
fn add_lane(chart: &mut Chart, keys: Vec<String>, title: String, detail: String, full: &mut bool) -> Option<usize> {
    if let Some(found) = chart.lanes.iter().position(|l| keys.iter().any(|k| l.keys.contains(k))) {
        let lane = &mut chart.lanes[found];
        for key in keys {
            if !lane.keys.contains(&key) {
                lane.keys.push(key);
            }
        }
        if lane.detail.is_empty() {
            lane.detail = detail;
        }
        return Some(found);
    }
    if chart.lanes.len() >= MAX_LANES {
        *full = true;
        return None;
    }
    chart.lanes.push(Lane { keys, title, detail, marks: Vec::new() });
    Some(chart.lanes.len() - 1)
}

/// A finding no rule draws: its evidence events as instants, in the lane of its round or job (or
/// a lane of its own), labelled with the code and what each event was.
fn generic(chart: &mut Chart, report: &Report, index: usize, finding: &Finding, full: &mut bool) {
    let (keys, title, detail) = if let Some(run) = text(finding, "run_id") {
        (vec![format!("run:{run}")], format!("round {run}"), String::new())
    } else if let Some(job) = text(finding, "job_id") {
        (vec![format!("job:{job}")], format!("job {job}"), String::new())
    } else {
        // A finding about no one round or job (a group of jobs, a pair of sources): its own lane,
        // named by its code and, when it has one, the group it is about.
        let about = ["job_name", "sweep", "item"].iter().find_map(|m| text(finding, m));
        (vec![format!("finding:{index}")], finding.code.to_string(), about.unwrap_or_default().to_string())
    };
    let mut evidence = finding.evidence.clone();
    evidence.sort_unstable();
    evidence.dedup();
    if evidence.is_empty() {
        chart.not_drawn.push(format!("{} (no evidence events)", finding.code));
        return;
    }
    let Some(lane) = add_lane(chart, keys, title, detail, full) else { return };
    if chart.lanes[lane].detail.is_empty() && chart.lanes[lane].title != finding.code {
        chart.lanes[lane].detail = finding.code.to_string();
    }
    if evidence.len() > MAX_EVIDENCE_MARKS {
        chart.not_drawn.push(format!(
            "{}: {} of its {} evidence events",
            finding.code,
            evidence.len() - MAX_EVIDENCE_MARKS,
            evidence.len()
        ));
        evidence.truncate(MAX_EVIDENCE_MARKS);
    }
    for id in evidence {
        let event = report.timeline.get(id);
        let at = event.at();
        chart.lanes[lane].marks.push(Mark {
            element: Element::Evidence,
            label: format!("{} {} {}", finding.code, event.kind.name(), format_clock(at, report.display_tz)),
            start: at,
            end: None,
            crit: finding.severity == Severity::Error,
            finding: index,
            also: Vec::new(),
            code: finding.code,
            from: Source::Event(id),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    fn report(findings: Vec<Finding>) -> Report {
        Report {
            view: crate::model::report::View::Analyze,
            display_tz: chrono_tz::Asia::Seoul,
            inputs: Vec::new(),
            params: crate::model::LockParams::default(),
            warnings: Vec::new(),
            assumptions: Vec::new(),
            timeline: crate::model::Timeline::default(),
            findings,
            chains: Vec::new(),
            shown: None,
            raw_texts: crate::model::report::RawTexts::Read(std::collections::HashMap::new()),
        }
    }

    fn stalled_rerun() -> Finding {
        let mut f = Finding::new("stalled-rerun", Severity::Warning, at("2026-10-07T00:53:00Z"));
        f.metric("job_id", Value::Text("j:1".into()))
            .metric("activated_at", Value::Time(at("2026-10-07T00:33:00Z")))
            .metric("restart_at", Value::Time(at("2026-10-07T00:37:26Z")))
            .metric("first_renewal_earliest_at", Value::Time(at("2026-10-07T00:37:54.5Z")))
            .metric("first_renewal_due_at", Value::Time(at("2026-10-07T00:42:49Z")))
            .metric("lock_expired_at", Value::Time(at("2026-10-07T00:52:38Z")))
            .metric("rerun_at", Value::Time(at("2026-10-07T00:53:00Z")))
            .metric("run_id", Value::Text("r-a".into()))
            .metric("rerun_run_id", Value::Text("r-b".into()));
        f
    }

    fn marks(chart: &Chart, element: Element) -> Vec<(&str, &Mark)> {
        chart
            .lanes
            .iter()
            .flat_map(|l| l.marks.iter().map(move |m| (l.title.as_str(), m)))
            .filter(|(_, m)| m.element == element)
            .collect()
    }

    #[test]
    fn a_stalled_rerun_draws_the_lost_attempt_and_the_rerun_from_its_metrics() {
        let chart = chart(&report(vec![stalled_rerun()]));
        let titles: Vec<&str> = chart.lanes.iter().map(|l| l.title.as_str()).collect();
        assert_eq!(titles, ["round r-a", "round r-b"]);
        assert_eq!(chart.lanes[0].detail, "job j:1");
        let (lane, lock) = marks(&chart, Element::Lock)[0];
        assert_eq!(
            (lane, lock.start, lock.end),
            ("round r-a", at("2026-10-07T00:33:00Z"), Some(at("2026-10-07T00:52:38Z")))
        );
        assert_eq!(lock.label, "lock held 09:33:00–09:52:38");
        let (_, window) = marks(&chart, Element::RenewalWindow)[0];
        assert_eq!((window.start, window.end), (at("2026-10-07T00:37:54.5Z"), Some(at("2026-10-07T00:42:49Z"))));
        let (_, restart) = marks(&chart, Element::Restart)[0];
        assert_eq!((restart.start, restart.end, restart.crit), (at("2026-10-07T00:37:26Z"), None, true));
        let (lane, rerun) = marks(&chart, Element::Rerun)[0];
        assert_eq!((lane, rerun.start), ("round r-b", at("2026-10-07T00:53:00Z")));
        assert_eq!(chart.zone_abbreviation().as_deref(), Some("KST"));
    }

    #[test]
    fn a_coarse_restart_is_a_span_and_an_uncertain_expiry_a_window() {
        let mut f = stalled_rerun();
        f.metrics.retain(|(n, _)| *n != "lock_expired_at");
        f.metric("restart_latest_at", Value::Time(at("2026-10-07T00:37:27Z")))
            .metric("lock_expired_earliest_at", Value::Time(at("2026-10-07T00:52:38Z")))
            .metric("lock_expired_latest_at", Value::Time(at("2026-10-07T00:52:59Z")));
        let chart = chart(&report(vec![f]));
        let restarts = marks(&chart, Element::Restart);
        assert_eq!(restarts.len(), 1, "the instant gives way to the span");
        assert_eq!(restarts[0].1.end, Some(at("2026-10-07T00:37:27Z")));
        assert_eq!(marks(&chart, Element::Expiry).len(), 0);
        assert_eq!(marks(&chart, Element::ExpiryWindow)[0].1.end, Some(at("2026-10-07T00:52:59Z")));
        assert_eq!(marks(&chart, Element::Lock)[0].1.end, Some(at("2026-10-07T00:52:38Z")));
    }

    #[test]
    fn findings_naming_the_same_round_or_attempt_share_its_lane() {
        let mut overlap = Finding::new("sweep-overlap", Severity::Warning, at("2026-10-07T00:54:03.31Z"));
        overlap
            .metric("run_a", Value::Text("r-b".into()))
            .metric("run_b", Value::Text("r-c".into()))
            .metric("a_started_at", Value::Time(at("2026-10-07T00:53:03.204Z")))
            .metric("b_started_at", Value::Time(at("2026-10-07T00:54:03.31Z")))
            .metric("a_ended_at", Value::Time(at("2026-10-07T00:55:40.2Z")))
            .metric("b_ended_at", Value::Time(at("2026-10-07T00:56:02.5Z")))
            .metric("overlap_end_at", Value::Time(at("2026-10-07T00:55:40.2Z")));
        let mut unlogged = Finding::new("unlogged-stall", Severity::Warning, at("2026-10-07T00:53:00Z"));
        unlogged
            .metric("job_id", Value::Text("j:1".into()))
            .metric("recovered_at", Value::Time(at("2026-10-07T00:53:00Z")));
        let chart = chart(&report(vec![stalled_rerun(), overlap, unlogged]));
        let titles: Vec<&str> = chart.lanes.iter().map(|l| l.title.as_str()).collect();
        assert_eq!(titles, ["round r-a", "round r-b", "round r-c"]);
        // The rerun's lane holds the rerun, the stall recovery (by job and time) and the round.
        let kinds: Vec<Element> = chart.lanes[1].marks.iter().map(|m| m.element).collect();
        assert_eq!(kinds, [Element::Rerun, Element::Unlogged, Element::Run]);
        let (lane, overlap) = marks(&chart, Element::Overlap)[0];
        assert_eq!((lane, overlap.crit), ("round r-c", true));
        assert_eq!(overlap.label, "overlap with r-b 09:54:03.31–09:55:40.20");
    }

    #[test]
    fn a_round_several_findings_cite_is_drawn_once_numbered_with_each() {
        let overlap = |other: &str, start: &str| {
            let mut f = Finding::new("sweep-overlap", Severity::Warning, at(start));
            f.metric("run_a", Value::Text("r-b".into()))
                .metric("run_b", Value::Text(other.into()))
                .metric("a_started_at", Value::Time(at("2026-10-07T00:53:03.204Z")))
                .metric("b_started_at", Value::Time(at(start)))
                .metric("a_ended_at", Value::Time(at("2026-10-07T00:55:40.2Z")))
                .metric("b_ended_at", Value::Time(at("2026-10-07T00:56:02.5Z")))
                .metric("overlap_end_at", Value::Time(at("2026-10-07T00:55:40.2Z")));
            f
        };
        let chart = chart(&report(vec![
            overlap("r-c", "2026-10-07T00:54:03.31Z"),
            overlap("r-d", "2026-10-07T00:54:10Z"),
            overlap("r-e", "2026-10-07T00:54:20Z"),
        ]));
        let shared = chart.lanes.iter().find(|l| l.title == "round r-b").unwrap();
        let runs: Vec<&Mark> = shared.marks.iter().filter(|m| m.element == Element::Run).collect();
        assert_eq!(runs.len(), 1, "one round, one bar: {runs:?}");
        assert_eq!(runs[0].caption(), "round 09:53:03.204–09:55:40.20 [1, 2, 3]");
        assert_eq!(runs[0].findings().collect::<Vec<_>>(), [0, 1, 2]);
        // Marks that differ in anything drawn stay apart: each other round has its own bar.
        for other in ["round r-c", "round r-d", "round r-e"] {
            let lane = chart.lanes.iter().find(|l| l.title == other).unwrap();
            assert_eq!(lane.marks.iter().filter(|m| m.element == Element::Run).count(), 1, "{other}");
            assert_eq!(lane.marks.iter().filter(|m| m.element == Element::Overlap).count(), 1, "{other}");
        }
    }

    #[test]
    fn info_findings_are_listed_not_drawn_and_others_fall_back_to_their_evidence() {
        let info = Finding::new("lock-headroom", Severity::Info, at("2026-10-07T00:24:37Z"));
        // A finding with no rows and no evidence: nothing to place it by, and it says so.
        let mut other = Finding::new("retry-storm", Severity::Warning, at("2026-10-07T00:24:37Z"));
        other.metric("job_id", Value::Text("push-71".into()));
        let chart = chart(&report(vec![info, other]));
        assert!(chart.lanes.is_empty());
        assert_eq!(chart.not_drawn, ["lock-headroom (info)", "retry-storm (no evidence events)"]);
        assert_eq!(chart.range(), None);
    }

    #[test]
    fn past_the_lane_limit_findings_are_listed_not_drawn() {
        let overlap = |i: usize| {
            let mut f = Finding::new("sweep-overlap", Severity::Warning, at("2026-10-07T00:54:03Z"));
            f.metric("run_a", Value::Text(format!("a{i}")))
                .metric("run_b", Value::Text(format!("b{i}")))
                .metric("a_started_at", Value::Time(at("2026-10-07T00:53:00Z")))
                .metric("a_ended_at", Value::Time(at("2026-10-07T00:56:00Z")))
                .metric("b_started_at", Value::Time(at("2026-10-07T00:54:00Z")))
                .metric("b_ended_at", Value::Time(at("2026-10-07T00:57:00Z")))
                .metric("overlap_end_at", Value::Time(at("2026-10-07T00:56:00Z")));
            f
        };
        // Each overlap needs two lanes: 12 fill the picture, the 13th finds none.
        let chart = chart(&report((0..13).map(overlap).collect()));
        assert_eq!(chart.lanes.len(), MAX_LANES);
        assert_eq!(chart.not_drawn, [format!("sweep-overlap [13] (the picture holds {MAX_LANES} lanes)")]);
    }

    #[test]
    fn a_chart_across_a_dst_change_says_both_abbreviations() {
        let mut f = Finding::new("sweep-overlap", Severity::Warning, at("2026-11-01T05:50:00Z"));
        // New York falls back from EDT to EST at 06:00 UTC on 2026-11-01.
        f.metric("run_a", Value::Text("a".into()))
            .metric("run_b", Value::Text("b".into()))
            .metric("a_started_at", Value::Time(at("2026-11-01T05:30:00Z")))
            .metric("a_ended_at", Value::Time(at("2026-11-01T06:30:00Z")))
            .metric("b_started_at", Value::Time(at("2026-11-01T05:50:00Z")))
            .metric("b_ended_at", Value::Time(at("2026-11-01T06:10:00Z")))
            .metric("overlap_end_at", Value::Time(at("2026-11-01T06:10:00Z")));
        let mut report = report(vec![f]);
        report.display_tz = chrono_tz::America::New_York;
        let chart = chart(&report);
        assert_eq!(chart.zone_abbreviation().as_deref(), Some("EDT/EST"));
        assert!(chart.crosses_offset_change());
        report.display_tz = chrono_tz::Asia::Seoul;
        assert!(!super::chart(&report).crosses_offset_change());
    }

    #[test]
    fn the_timeline_view_says_it_has_no_findings_to_draw_rather_than_none_found() {
        let mut report = report(Vec::new());
        report.view = crate::model::report::View::Timeline;
        assert_eq!(chart(&report).title, "The timeline view has no findings to draw: run leasetrace analyze");
        report.view = crate::model::report::View::Analyze;
        assert_eq!(chart(&report).title, "No findings");
    }

    #[test]
    fn every_rule_reads_metrics_its_detector_writes() {
        // A renamed metric would silently drop a mark: each rule's names must be written by the
        // detector of its code (its source file writes `metric("name"`).
        let sources: &[(&str, &str)] = &[
            ("stalled-rerun", include_str!("../detect/stalled_rerun.rs")),
            ("unlogged-stall", include_str!("../detect/unlogged_stall.rs")),
            ("stalled-limit-exceeded", include_str!("../detect/stalled_limit_exceeded.rs")),
            ("sweep-overlap", include_str!("../detect/sweep_overlap.rs")),
            ("duplicate-selection", include_str!("../detect/duplicate_selection.rs")),
        ];
        for rule in RULES {
            let (_, source) = sources.iter().find(|(code, _)| *code == rule.code).expect("a detector source per code");
            let names = [Some(rule.from), rule.to, rule.unless, rule.lane.run, rule.lane.job_at];
            for name in names.into_iter().flatten() {
                assert!(source.contains(&format!("metric(\"{name}\"")), "{}: no metric {name}", rule.code);
            }
        }
    }
}
