//! `clock-offset-suspected`: two sources that saw the same moments disagree by about a whole
//! number of hours.
//!
//! The first mistake a responder makes is reading a KST log as UTC (or a UTC ledger as local
//! time). The same activation is often seen twice — a `job-active` log line and BullMQ's `active`
//! stream event, or the ledger's `round-started` row written a moment later — so the offset
//! between sources can be measured instead of assumed.

use std::collections::BTreeMap;

use chrono::{Offset, TimeZone};

use crate::model::timeline::EventId;
use crate::model::{Channel, EventKind, Finding, Severity, Value};
use crate::time::{format_duration, seconds_between, zones_with_offset};

use super::{Context, Detector};

pub struct ClockOffsetSuspected;

/// One activation seen by two sources: (seconds from the first to the second, first, second).
type Matched = (f64, EventId, EventId);

/// Offsets shorter than this are normal lag between sources (a ledger row written after the
/// activation), not a zone mix-up.
const MIN_OFFSET_S: f64 = 45.0 * 60.0;
/// How far the median offset may be from a multiple of 15 minutes (zone offsets are).
const TOLERANCE_S: f64 = 120.0;
/// Pairs further apart than this are not the same moment: the widest gap two zones' offsets
/// can have (UTC−12:00 to UTC+14:00), so that a Los Angeles log read as Seoul (17 h) is caught.
const MAX_PAIR_S: f64 = 26.0 * 3600.0;

/// The activation a ledger row or log line reports: events that stand for "job X became active".
fn activation_like(kind: EventKind, channel: Channel) -> bool {
    match kind {
        EventKind::JobActive => channel != Channel::JobHash,
        EventKind::RoundStarted => channel == Channel::Ledger,
        _ => false,
    }
}

impl Detector for ClockOffsetSuspected {
    fn code(&self) -> &'static str {
        "clock-offset-suspected"
    }

    fn doc(&self) -> &'static str {
        include_str!("../../docs/findings/clock-offset-suspected.md")
    }

    fn detect(&self, context: &Context) -> Vec<Finding> {
        let timeline = context.timeline;
        // For each pair of sources: the offsets of matched activations (later source − earlier).
        let mut pairs: BTreeMap<(u16, u16), Vec<Matched>> = BTreeMap::new();
        let maybe_activation =
            |&id: &EventId| matches!(timeline.kind(id), EventKind::JobActive | EventKind::RoundStarted);
        let mut activations: Vec<EventId> = Vec::new();
        // A pair needs two activations: a job activated once needs no look at its events.
        for (_, ids) in context.job_events.iter_reactivated_or_having(&[]) {
            activations.clear();
            activations.extend(ids.iter().copied().filter(maybe_activation).filter(|&id| {
                let e = timeline.get(id);
                activation_like(e.kind, e.origin().channel)
            }));
            for &a in &activations {
                let source_a = timeline.get(a).origin().source;
                // Nearest activation of the same job in each other source.
                let mut nearest: BTreeMap<u16, (f64, EventId)> = BTreeMap::new();
                for &b in &activations {
                    let source_b = timeline.get(b).origin().source;
                    if source_b <= source_a {
                        continue;
                    }
                    let delta = seconds_between(timeline.get(a).at(), timeline.get(b).at());
                    if delta.abs() > MAX_PAIR_S {
                        continue;
                    }
                    let better = nearest.get(&source_b).is_none_or(|(d, _)| delta.abs() < d.abs());
                    if better {
                        nearest.insert(source_b, (delta, b));
                    }
                }
                for (source_b, (delta, b)) in nearest {
                    pairs.entry((source_a, source_b)).or_default().push((delta, a, b));
                }
            }
        }
        let mut findings: Vec<Finding> =
            pairs.into_iter().filter_map(|((a, b), offsets)| judge(context, a, b, &offsets)).collect();
        findings.extend(timeline.enveloped_sources().filter_map(|source| judge_envelope(context, source)));
        findings
    }
}

/// A log read inside an envelope (`kubectl logs --timestamps`, journald, a log store's export)
/// whose lines carry their own times: each line that became an event is seen twice, by the
/// application's clock as read in the declared zone and by the envelope's UTC time a moment
/// later. A whole number of hours between them is the declared zone, not lag.
fn judge_envelope(context: &Context, source: u16) -> Option<Finding> {
    let timeline = context.timeline;
    let seen: Vec<(f64, EventId)> = timeline
        .ids()
        .filter(|(_, e)| e.origin().source == source)
        .filter_map(|(id, e)| timeline.envelope_at(e).map(|envelope| (e.moment().seconds_to(envelope), id)))
        .collect();
    let mut deltas: Vec<f64> = seen.iter().map(|(d, _)| *d).collect();
    if deltas.is_empty() {
        return None;
    }
    let measured = median(&mut deltas);
    let whole = (measured / 900.0).round() * 900.0;
    if measured.abs() < MIN_OFFSET_S || (measured - whole).abs() > TOLERANCE_S {
        return None;
    }
    // Most lines must agree: a few lines quoting another clock are not the log's zone.
    let agreeing = seen.iter().filter(|(d, _)| (d - measured).abs() <= TOLERANCE_S).count();
    if agreeing * 2 <= seen.len() {
        return None;
    }
    let first = seen[0].1;
    let path = timeline.path(timeline.get(first)).to_string();
    let at = timeline.get(first).at();
    let mut finding = Finding::new("clock-offset-suspected", Severity::Warning, at);
    finding.metric("source_a", Value::Text(path.clone()));
    finding.metric("source_b", Value::Text(format!("{path} (envelope, UTC)")));
    finding.metric("offset_s", Value::Seconds(measured));
    #[allow(clippy::cast_possible_truncation)]
    let minutes = (whole / 60.0) as i64;
    finding.metric(
        "offset_hours",
        Value::Text(format!("{}{}:{:02}", if minutes < 0 { "-" } else { "+" }, minutes.abs() / 60, minutes.abs() % 60)),
    );
    finding.metric("matched_pairs", Value::Count(seen.len() as u64));
    finding.derive(
        "offset_s",
        "median over the log's events of (its record's envelope time − the line's own time as read in the declared zone)",
    );
    finding.evidence.extend(seen.iter().take(3).map(|(_, id)| *id));
    let mut fix = String::new();
    if let Some(Some(declared)) = context.settings.source_zones.get(usize::from(source)) {
        #[allow(clippy::cast_possible_truncation)]
        let wanted = declared.offset_from_utc_datetime(&at.naive_utc()).fix().local_minus_utc() - whole as i32;
        let names = zones_with_offset(at, wanted);
        if !names.is_empty() {
            fix = format!(
                "{path} was read as {declared}; if its lines were written in UTC{} ({}) they agree with their envelope's times",
                offset_label(wanted),
                names.join(", ")
            );
            finding.metric("zone_for_a", Value::Text(names[0].clone()));
        }
    }
    if fix.is_empty() {
        finding.note("the lines carry their own offsets: the clock of the application or of the platform was off");
    } else {
        finding.note(fix.clone());
    }
    finding.note("matched: each event's line against the envelope's UTC time of the same record (the platform's read of the line, normally milliseconds later)");
    let fix_text = if fix.is_empty() { String::new() } else { format!(": {fix}") };
    finding.summary = format!(
        "The lines of {{source_a}} and their envelope's UTC times disagree by {} ({{matched_pairs}} events, median {{offset_s}}): the declared zone is likely wrong{fix_text}.",
        format_duration(whole.abs())
    );
    Some(finding)
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len().is_multiple_of(2) { f64::midpoint(values[mid - 1], values[mid]) } else { values[mid] }
}

fn judge(context: &Context, source_a: u16, source_b: u16, offsets: &[Matched]) -> Option<Finding> {
    let timeline = context.timeline;
    let mut deltas: Vec<f64> = offsets.iter().map(|(d, _, _)| *d).collect();
    let measured = median(&mut deltas);
    let quarter_hours = (measured / 900.0).round();
    let whole = quarter_hours * 900.0;
    if measured.abs() < MIN_OFFSET_S || (measured - whole).abs() > TOLERANCE_S {
        return None;
    }
    let (_, first_a, first_b) = offsets[0];
    let path = |id: EventId| timeline.path(timeline.get(id)).to_string();
    let (path_a, path_b) = (path(first_a), path(first_b));
    let at = timeline.get(first_b).at();
    let mut finding = Finding::new("clock-offset-suspected", Severity::Warning, timeline.get(first_a).at().min(at));
    finding.metric("source_a", Value::Text(path_a.clone()));
    finding.metric("source_b", Value::Text(path_b.clone()));
    finding.metric("offset_s", Value::Seconds(measured));
    #[allow(clippy::cast_possible_truncation)]
    let minutes = (whole / 60.0) as i64;
    finding.metric(
        "offset_hours",
        Value::Text(format!("{}{}:{:02}", if minutes < 0 { "-" } else { "+" }, minutes.abs() / 60, minutes.abs() % 60)),
    );
    finding.metric("matched_pairs", Value::Count(offsets.len() as u64));
    finding.derive("offset_s", "median over matched activations of (time in source_b − time in source_a)");
    for (_, a, b) in offsets.iter().take(3) {
        finding.evidence.extend([*a, *b]);
    }
    finding.evidence.sort_unstable();
    finding.evidence.dedup();

    // Which zone would make them agree: source_b read in a zone `whole` seconds further east, or
    // source_a read in a zone `whole` seconds further west — for whichever was read as wall time.
    let zones = &context.settings.source_zones;
    let mut fixes = Vec::new();
    #[allow(clippy::cast_possible_truncation)]
    let shift = whole as i32;
    for (source, path, sign) in [(source_b, &path_b, 1), (source_a, &path_a, -1)] {
        if let Some(Some(declared)) = zones.get(source as usize) {
            let wanted = declared.offset_from_utc_datetime(&at.naive_utc()).fix().local_minus_utc() + sign * shift;
            let names = zones_with_offset(at, wanted);
            if !names.is_empty() {
                fixes.push(format!(
                    "{path} was read as {declared}; if it was written in UTC{} ({}) the sources agree",
                    offset_label(wanted),
                    names.join(", ")
                ));
                finding.metric(if sign == 1 { "zone_for_b" } else { "zone_for_a" }, Value::Text(names[0].clone()));
            }
        }
    }
    for fix in &fixes {
        finding.note(fix.clone());
    }
    if fixes.is_empty() {
        finding.note("neither source was read as wall-clock time (both carry offsets or epoch times): one of the clocks that wrote them was off");
    }
    finding.note("matched: activations of the same job id seen by both sources (log job-active, events-stream active, ledger round-started), nearest pair per activation");
    let fix_text = fixes.first().map_or(String::new(), |f| format!(": {f}"));
    finding.summary = format!(
        "{{source_b}} and {{source_a}} disagree by {} ({{matched_pairs}} matched job activations, median {{offset_s}}): a time-zone mix-up is likely{fix_text}.",
        format_duration(whole.abs())
    );
    Some(finding)
}

fn offset_label(seconds: i32) -> String {
    let sign = if seconds < 0 { '-' } else { '+' };
    let minutes = seconds.abs() / 60;
    format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::Settings;
    use crate::model::{Event, LockParams, Origin, Timeline};
    use chrono::{DateTime, Utc};
    use chrono_tz::Tz;

    fn event(source: u16, channel: Channel, when: &str, kind: EventKind, job: &str) -> Event {
        let origin = Origin { channel, source, line: 1 };
        let mut event =
            Event::new(DateTime::parse_from_rfc3339(when).unwrap().with_timezone(&Utc).into(), kind, origin);
        event.edit().job_id = Some(job.into());
        event
    }

    fn detect(log_shift_hours: i64, log_zone: Tz) -> Vec<Finding> {
        let mut events = Vec::new();
        for (i, minute) in [12, 33, 54].iter().enumerate() {
            let job = format!("j{i}");
            events.push(event(
                0,
                Channel::Ledger,
                &format!("2026-10-07T00:{minute}:03Z"),
                EventKind::RoundStarted,
                &job,
            ));
            let hour = log_shift_hours;
            events.push(event(
                1,
                Channel::Log,
                &format!("2026-10-07T{hour:02}:{minute}:00Z"),
                EventKind::JobActive,
                &job,
            ));
        }
        let timeline = Timeline::new(events).with_paths(vec!["ledger.csv".into(), "server.log".into()]);
        let params = LockParams::default();
        let settings = Settings { duplicate_window_s: None, source_zones: vec![Some(chrono_tz::UTC), Some(log_zone)] };
        ClockOffsetSuspected.detect(&Context::new(&timeline, &params, &settings))
    }

    #[test]
    fn a_kst_log_read_as_utc_is_named_with_the_zone_that_fixes_it() {
        let findings = detect(9, chrono_tz::UTC);
        assert_eq!(findings.len(), 1);
        let f = &findings[0];
        assert_eq!(f.get("offset_s"), Some(&Value::Seconds(32_397.0)));
        assert_eq!(f.get("offset_hours"), Some(&Value::Text("+9:00".into())));
        assert_eq!(f.get("zone_for_b"), Some(&Value::Text("Asia/Seoul".into())));
        assert!(
            f.notes[0].contains("server.log was read as UTC; if it was written in UTC+09:00 (Asia/Seoul, Asia/Tokyo)"),
            "{:?}",
            f.notes
        );
    }

    #[test]
    fn a_los_angeles_log_read_as_seoul_17_hours_off_is_suspected() {
        // Written in America/Los_Angeles (UTC−8 in December), declared Asia/Seoul (UTC+9): 17 h early.
        let mut events = Vec::new();
        for (i, minute) in [12, 33, 54].iter().enumerate() {
            let job = format!("j{i}");
            let ledger_at = format!("2026-12-01T21:{minute}:03Z");
            events.push(event(0, Channel::Ledger, &ledger_at, EventKind::RoundStarted, &job));
            let log_at = format!("2026-12-01T04:{minute}:00Z");
            events.push(event(1, Channel::Log, &log_at, EventKind::JobActive, &job));
        }
        let timeline = Timeline::new(events).with_paths(vec!["ledger.csv".into(), "server.log".into()]);
        let params = LockParams::default();
        let settings = Settings {
            duplicate_window_s: None,
            source_zones: vec![Some(chrono_tz::UTC), Some(chrono_tz::Asia::Seoul)],
        };
        let findings = ClockOffsetSuspected.detect(&Context::new(&timeline, &params, &settings));
        assert_eq!(findings.len(), 1, "{findings:?}");
        let f = &findings[0];
        assert_eq!(f.get("offset_hours"), Some(&Value::Text("-17:00".into())));
        assert_eq!(f.get("zone_for_b"), Some(&Value::Text("America/Los_Angeles".into())));
    }

    /// A log whose lines are read in `declared` and whose envelope says they happened at
    /// `written_offset_h` hours from the line's wall time.
    fn enveloped(declared: Tz, lag_s: i64) -> Vec<Finding> {
        let mut events = Vec::new();
        let mut times = Vec::new();
        for (i, minute) in [12u32, 33, 54].iter().enumerate() {
            let mut e = event(0, Channel::Log, &format!("2026-10-07T09:{minute}:00Z"), EventKind::JobActive, "j");
            let line = u32::try_from(i + 1).unwrap();
            e.set_origin(Origin { line, ..e.origin() });
            times.push((line, crate::model::Moment::from(e.at() + chrono::TimeDelta::seconds(lag_s))));
            events.push(e);
        }
        let timeline = Timeline::new(events).with_paths(vec!["pods.log".into()]).with_envelope_times(vec![times]);
        let params = LockParams::default();
        let settings = Settings { duplicate_window_s: None, source_zones: vec![Some(declared)] };
        ClockOffsetSuspected.detect(&Context::new(&timeline, &params, &settings))
    }

    #[test]
    fn a_kst_log_in_an_envelope_read_as_utc_is_caught_by_its_envelope() {
        // KST lines read as UTC: the envelope's UTC times are 9 h (less 20 ms of lag) earlier.
        let findings = enveloped(chrono_tz::UTC, -9 * 3600);
        assert_eq!(findings.len(), 1, "{findings:?}");
        let f = &findings[0];
        assert_eq!(f.get("offset_hours"), Some(&Value::Text("-9:00".into())));
        assert_eq!(f.get("matched_pairs"), Some(&Value::Count(3)));
        assert_eq!(f.get("zone_for_a"), Some(&Value::Text("Asia/Seoul".into())));
        assert_eq!(f.evidence.len(), 3);
        assert!(
            f.notes[0].contains("pods.log was read as UTC; if its lines were written in UTC+09:00"),
            "{:?}",
            f.notes
        );
    }

    #[test]
    fn an_envelope_a_moment_after_its_lines_is_lag_not_a_zone_problem() {
        assert!(enveloped(chrono_tz::Asia::Seoul, 2).is_empty());
    }

    #[test]
    fn seconds_of_lag_between_sources_are_not_a_zone_problem() {
        assert!(detect(0, chrono_tz::UTC).is_empty());
    }
}
