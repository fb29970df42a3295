//! `sweep-overlap`: a round of a periodic sweep started while an earlier round of the same sweep
//! (a regular one or a re-run) was still running.
//!
//! A sweep that assumes one round at a time picks its work from shared state; two rounds running
//! together can pick the same items. Rounds come from the ledger, grouped by run id.

use crate::model::{Finding, Round, Severity, Value};
use crate::time::seconds_between;

use super::{Context, Detector};

pub struct SweepOverlap;

impl Detector for SweepOverlap {
    fn code(&self) -> &'static str {
        "sweep-overlap"
    }

    fn doc(&self) -> &'static str {
        include_str!("../../docs/findings/sweep-overlap.md")
    }

    /// The re-run round of the pair was started by a rerun: the overlap follows from it.
    fn follows_from(&self, finding: &Finding, found: &super::links::Found) -> Vec<usize> {
        let rerun_round = finding.text("run_a").filter(|_| finding.get("a_is_rerun") == Some(&Value::Flag(true)));
        rerun_round.map(|run| found.reruns_into_round(run)).unwrap_or_default()
    }

    fn detect(&self, context: &Context) -> Vec<Finding> {
        let timeline = context.timeline;
        let rounds = &context.rounds;
        let mut findings = Vec::new();
        // Only the rounds of periodic jobs are a sweep's: one-off jobs sharing the ledger run side
        // by side by design. A ledger that marks none (no slot, no repeatable job ids) cannot tell
        // them apart, and all its rounds are taken as the sweep's.
        let periodic_only = rounds.iter().any(Round::is_periodic);
        // Rounds come sorted by start: keep only those still running, so a long ledger is one pass.
        let mut running: Vec<&Round> = Vec::new();
        for later in rounds.iter().filter(|round| !periodic_only || round.is_periodic()) {
            let later_start = later.start_moment(timeline);
            // A round is known to run until its earliest end: a later start before it overlaps.
            running.retain(|earlier| later_start < context.round_end(earlier).earliest);
            for earlier in &running {
                if earlier.sweep != later.sweep || earlier.run_id == later.run_id {
                    continue;
                }
                if earlier.start_moment(timeline) < later_start {
                    findings.push(overlap(context, earlier, later));
                }
            }
            running.push(later);
        }
        findings
    }
}

/// A round is a re-run when an earlier round of the same sweep carried the same job (queue and
/// id) or the same slot.
fn is_rerun(context: &Context, round: &Round) -> bool {
    let timeline = context.timeline;
    let start = round.start_moment(timeline);
    let job = context.job_of_round(round);
    context.rounds.iter().any(|other| {
        other.run_id != round.run_id
            && other.sweep == round.sweep
            && other.start_moment(timeline) < start
            && ((job.is_some() && context.job_of_round(other) == job)
                || (round.slot.is_some() && other.slot == round.slot))
    })
}

fn overlap(context: &Context, earlier: &Round, later: &Round) -> Finding {
    let timeline = context.timeline;
    let later_start = later.start_at(timeline);
    let earlier_end = context.round_end(earlier);
    let later_end = context.round_end(later);
    let overlap_end = earlier_end.earliest.utc().min(later_end.earliest.utc());
    let mut finding = Finding::new("sweep-overlap", Severity::Warning, later_start);
    finding.metric("run_a", Value::Text(earlier.run_id.to_string()));
    finding.metric("run_b", Value::Text(later.run_id.to_string()));
    if let Some(sweep) = &later.sweep {
        finding.metric("sweep", Value::Text(sweep.to_string()));
    }
    if let Some(slot) = earlier.slot {
        finding.metric("slot_a", Value::Time(slot));
    }
    if let Some(slot) = later.slot {
        finding.metric("slot_b", Value::Time(slot));
    }
    finding.metric("a_started_at", Value::Time(earlier.start_at(timeline)));
    finding.metric("b_started_at", Value::Time(later_start));
    finding.metric("a_ended_at", Value::Time(earlier_end.earliest.utc()));
    finding.metric("b_ended_at", Value::Time(later_end.earliest.utc()));
    for (round, end) in [(earlier, earlier_end), (later, later_end)] {
        if let Some(restart) = end.restart {
            finding.evidence.push(restart);
            finding.note(format!(
                "run {} was marked ended by another process after its owner's process restarted: it stopped between its owner's last sign of life and that restart ({} later), and is taken to have run until the first, the least it ran",
                round.run_id,
                crate::time::format_duration(end.earliest.seconds_to(end.latest))
            ));
        }
    }
    finding.metric("overlap_end_at", Value::Time(overlap_end));
    finding.metric("overlap_s", Value::Seconds(seconds_between(later_start, overlap_end)));
    finding.derive("overlap_s", "min(a_ended_at, b_ended_at) − b_started_at");
    let rerun = is_rerun(context, earlier);
    finding.metric("a_is_rerun", Value::Flag(rerun));
    for round in [earlier, later] {
        finding.evidence.extend(round.started());
        finding.evidence.extend(round.ended());
        if round.ended().is_none() {
            finding.evidence.push(round.last_event);
            finding.note(format!(
                "run {} has no finished or failed row: it is taken to run until its last row",
                round.run_id
            ));
        }
    }
    finding.evidence.sort_unstable();
    finding.evidence.dedup();
    if later.sweep.is_none() {
        finding.note("the ledger names no sweep for these rounds: all its rounds are taken as one sweep");
    }
    let what = if rerun { "a re-run" } else { "a regular round" };
    let slot = |key: &str, round: &Round| {
        if round.slot.is_some() { format!(" (slot {{{key}}})") } else { String::new() }
    };
    finding.summary = format!(
        "Round {{run_b}}{} started at {{b_started_at}} while round {{run_a}}{}, {what}, was still running; they overlapped for {{overlap_s}} (until {{overlap_end_at}}).",
        slot("slot_b", later),
        slot("slot_a", earlier)
    );
    finding.headline = format!(
        "Round {{run_b}} started at {{b_started_at}} while round {{run_a}}, {what}, was still running: they overlapped for {{overlap_s}}"
    );
    finding
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::Settings;
    use crate::model::{Event, EventKind, LockParams, Origin, Timeline};
    use chrono::{DateTime, Utc};

    fn row(line: u32, when: &str, kind: EventKind, run: &str) -> Event {
        let origin = Origin { channel: crate::model::Channel::Ledger, source: 0, line };
        let mut event =
            Event::new(DateTime::parse_from_rfc3339(when).unwrap().with_timezone(&Utc).into(), kind, origin);
        event.edit().run_id = Some(crate::model::Text::from(run));
        event
    }

    fn detect(events: Vec<Event>) -> Vec<Finding> {
        let timeline = Timeline::new(events);
        let params = LockParams::default();
        let settings = Settings::default();
        SweepOverlap.detect(&Context::new(&timeline, &params, &settings))
    }

    #[test]
    fn a_round_starting_inside_another_is_an_overlap() {
        let findings = detect(vec![
            row(2, "2026-10-07T00:53:03Z", EventKind::RoundStarted, "a"),
            row(3, "2026-10-07T00:54:03Z", EventKind::RoundStarted, "b"),
            row(4, "2026-10-07T00:55:40Z", EventKind::RoundFinished, "a"),
            row(5, "2026-10-07T00:55:00Z", EventKind::RoundFinished, "b"),
        ]);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].get("overlap_s"), Some(&Value::Seconds(57.0)));
    }

    #[test]
    fn back_to_back_rounds_do_not_overlap() {
        let findings = detect(vec![
            row(2, "2026-10-07T00:53:03Z", EventKind::RoundStarted, "a"),
            row(3, "2026-10-07T00:54:03Z", EventKind::RoundFinished, "a"),
            row(4, "2026-10-07T00:54:03Z", EventKind::RoundStarted, "b"),
            row(5, "2026-10-07T00:55:00Z", EventKind::RoundFinished, "b"),
        ]);
        assert!(findings.is_empty());
    }
}
