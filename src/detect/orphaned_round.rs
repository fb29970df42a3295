//! `orphaned-round`: a ledger round left running by an owner that died, after BullMQ gave its job
//! to another run. Nobody will ever close its rows.
//!
//! A replica that dies and never comes back marks nothing failed; BullMQ's stalled check moves the
//! job back to wait once its lock expires, and another replica runs it again under a new run id.
//! The dead run's rows say `RUNNING` for good, and every dashboard that counts running rounds
//! counts it. `stuck-running` does not report it: the job moved on, so the queue is not stuck. This
//! finding is the other half: one per round left behind, with its rows, its owner, when the owner
//! was last seen and when BullMQ took the job back, and the run that replaced it.
//!
//! The lost run and its replacement are the two activations of a stall recovery (`stalls`), so a
//! round that finished late (it has an end row), a job that completed or failed before it ran
//! again (a retry, not a recovery), and the last round of a job (nothing replaced it, whether it is
//! still within its lock or stuck) are not reported. Nor is a round whose owner still wrote after
//! its job was taken again: a live owner may yet end it.

use chrono::{DateTime, TimeDelta, Utc};
use rustc_hash::{FxHashMap, FxHashSet};
use ustr::{UstrMap, UstrSet};

use crate::model::timeline::{CLOCK_SKEW_MS, EventId};
use crate::model::{EventKind, Finding, JobKey, Round, Severity, Text, Value};
use crate::time::seconds_between;

use super::stalls::Stall;
use super::{Context, Detector};

pub struct OrphanedRound;

/// At most this many of a round's rows are cited (its first rows and its last): enough to find
/// them all by their run id.
const CITED_ROWS: usize = 5;

impl Detector for OrphanedRound {
    fn code(&self) -> &'static str {
        "orphaned-round"
    }

    fn doc(&self) -> &'static str {
        include_str!("../../docs/findings/orphaned-round.md")
    }

    /// The round was left running because its job lost its lock and was re-run.
    fn follows_from(&self, finding: &Finding, found: &super::links::Found) -> Vec<usize> {
        let mut causes = finding.text("run_id").map(|run| found.reruns_of_round(run)).unwrap_or_default();
        if let Some(replacement) = finding.text("replaced_by_run_id") {
            causes.extend(found.reruns_into_round(replacement));
        }
        causes
    }

    fn detect(&self, context: &Context) -> Vec<Finding> {
        let timeline = context.timeline;
        let Some(end) = timeline.events().last().map(crate::model::Event::at) else {
            return Vec::new();
        };
        let recovered: Vec<&Stall> = context.stalls().iter().filter(|stall| stall.recovery.is_some()).collect();
        if recovered.is_empty() {
            return Vec::new();
        }
        let jobs: FxHashSet<JobKey> = recovered.iter().map(|stall| stall.job).collect();
        let mut rounds_of_job: FxHashMap<JobKey, Vec<&Round>> = FxHashMap::default();
        for round in &context.rounds {
            if let Some(job) = context.job_of_round(round).filter(|job| jobs.contains(job)) {
                rounds_of_job.entry(job).or_default().push(round);
            }
        }
        let mut candidates = Vec::new();
        for stall in recovered {
            if let Some(rounds) = rounds_of_job.get(&stall.job) {
                candidates.extend(lost_rounds(context, stall, rounds));
            }
        }
        if candidates.is_empty() {
            return Vec::new();
        }
        // Every event of the owners in question, in one pass: each owner's last sign of life is
        // then found by halving, not by a walk back through the timeline per round.
        let names: UstrSet = candidates.iter().flat_map(|candidate| candidate.owners.iter().copied()).collect();
        let mut events_of: UstrMap<Vec<EventId>> = UstrMap::default();
        for (id, event) in timeline.ids() {
            if let Some(worker) = event.worker.filter(|worker| names.contains(worker)) {
                events_of.entry(worker).or_default().push(id);
            }
        }
        candidates.iter().filter_map(|candidate| orphan(context, candidate, &events_of, end)).collect()
    }
}

/// A round of a lost run that never ended, with the run that replaced it and the names of its
/// owner.
struct Candidate<'a> {
    stall: &'a Stall,
    round: &'a Round,
    replacement: Option<&'a Round>,
    owners: Vec<Text>,
}

/// The activation a round ran under: the job's latest activation at or before its start row,
/// allowing the clock skew (the ledger's clock is not the events stream's).
fn activation_of(context: &Context, job: JobKey, round: &Round) -> Option<EventId> {
    let timeline = context.timeline;
    let start = round.start_at(timeline) + TimeDelta::milliseconds(CLOCK_SKEW_MS);
    context.attempts_of_job(job).iter().map(|attempt| attempt.activated).rfind(|&id| timeline.get(id).at() <= start)
}

/// The rounds of the stall's lost run that never ended (`rounds`: the job's, by start).
fn lost_rounds<'a>(context: &Context, stall: &'a Stall, rounds: &[&'a Round]) -> Vec<Candidate<'a>> {
    let (first, rerun) = stall.recovery.expect("a recovered stall");
    let job = stall.job;
    let replacement = rounds.iter().copied().find(|round| activation_of(context, job, round) == Some(rerun));
    rounds
        .iter()
        .copied()
        .filter(|round| round.started().is_some() && round.ended().is_none())
        .filter(|round| activation_of(context, job, round) == Some(first))
        .map(|round| Candidate { stall, round, replacement, owners: owners(context, job, round, first) })
        .collect()
}

/// Who ran the lost run, as the evidence names it: the round's `worker` (the ledger's owner
/// column), the lost activation's, and that of another channel's record of the same activation
/// within a second (a log line's pid).
fn owners(context: &Context, job: JobKey, round: &Round, first: EventId) -> Vec<Text> {
    let timeline = context.timeline;
    let activation = timeline.get(first);
    let same_activation = context.events_of_job(job).iter().map(|&id| timeline.get(id)).filter(|event| {
        event.kind == EventKind::JobActive && seconds_between(activation.at(), event.at()).abs() <= 1.0
    });
    let mut owners: Vec<Text> = Vec::new();
    let named = round.started().map(|id| timeline.get(id).worker).into_iter().chain([activation.worker]);
    for owner in named.chain(same_activation.map(|event| event.worker)).flatten() {
        if !owners.contains(&owner) {
            owners.push(owner);
        }
    }
    owners
}

fn orphan(
    context: &Context,
    candidate: &Candidate,
    events_of: &UstrMap<Vec<EventId>>,
    end: DateTime<Utc>,
) -> Option<Finding> {
    let timeline = context.timeline;
    let Candidate { stall, round, replacement, owners } = candidate;
    let (first, rerun) = stall.recovery.expect("a recovered stall");
    let job = stall.job;
    let rerun_event = timeline.get(rerun);
    let started = round.started().expect("a round with a start row");
    let start = timeline.get(started);

    // The owner's last sign of life: its latest event, up to a process start that reuses one of
    // its names (a pid reused in a container is a new process).
    let lost_at = timeline.get(first).moment();
    let reused = context
        .restarts
        .iter()
        .copied()
        .filter(|&id| timeline.get(id).moment() > lost_at)
        .find(|&id| timeline.get(id).worker.is_some_and(|w| owners.contains(&w)));
    let until = reused.unwrap_or(EventId::MAX);
    let last_seen = owners
        .iter()
        .filter_map(|owner| {
            let ids = events_of.get(owner)?;
            ids[..ids.partition_point(|&id| id < until)].last().copied()
        })
        .max();
    // A live owner may yet end its round: not reported.
    if last_seen.is_some_and(|id| timeline.get(id).moment() > rerun_event.moment()) {
        return None;
    }

    let mut finding = Finding::new("orphaned-round", Severity::Warning, rerun_event.at());
    finding.metric("run_id", Value::Text(round.run_id.to_string()));
    finding.metric("job_id", Value::Text(job.to_string()));
    if let Some(owner) = start.worker {
        finding.metric("owner", Value::Text(owner.to_string()));
    }
    finding.metric("started_at", Value::Time(start.at()));
    let rows: Vec<EventId> = context
        .events_of_job(job)
        .iter()
        .copied()
        .filter(|&id| timeline.get(id).run_id == Some(round.run_id))
        .collect();
    finding.metric("rows", Value::Count(rows.len() as u64));
    let last_row = timeline.get(round.last_event);
    finding.metric("last_row_at", Value::Time(last_row.at()));
    finding.evidence.extend(rows.iter().take(CITED_ROWS));
    finding.evidence.push(round.last_event);

    let gone = if let Some(id) = last_seen {
        finding.metric("owner_last_seen_at", Value::Time(timeline.get(id).at()));
        finding.evidence.push(id);
        "Its owner wrote nothing after {owner_last_seen_at}"
    } else {
        finding.note("neither the ledger nor the activation names the round's owner (no worker column, no pid): whether its process died is not in the evidence, and if it lived on it may still write an end row");
        "Its owner is not named"
    };
    // A process start between the owner's last sign and the rerun: where it died, if it was this
    // owner's host (the same log as its last line when that log has one).
    let after = last_seen.map_or(lost_at, |id| timeline.get(id).moment());
    let restarts: Vec<EventId> = context
        .restarts
        .iter()
        .copied()
        .filter(|&id| after < timeline.get(id).moment() && timeline.get(id).moment() <= rerun_event.moment())
        .collect();
    let restart = match last_seen {
        Some(id) => context.restart_of(timeline.get(id), &restarts).map(|(restart, _)| restart),
        // Nobody named: no restart can be tied to the owner.
        None => None,
    };
    let restart_text = if let Some(id) = restart {
        finding.metric("restart_at", Value::Time(timeline.get(id).at()));
        finding.evidence.push(id);
        "; a process started at {restart_at} and did not close the round"
    } else {
        ""
    };
    let taken_back = if let Some(entry) = stall.entry {
        finding.metric("stalled_at", Value::Time(timeline.get(entry).at()));
        finding.evidence.push(entry);
        "Its lock expired and BullMQ moved the job back to wait at {stalled_at}"
    } else {
        "Its lock expired and BullMQ took the job back"
    };
    finding.metric("replaced_at", Value::Time(rerun_event.at()));
    finding.evidence.push(rerun);
    let replaced = if let Some(other) = *replacement {
        replaced_by(context, other, &mut finding)
    } else {
        finding.note("no ledger round of the job started with the rerun: the rerun wrote no rows (over the stall limit BullMQ fails the job without calling the processor) or the ledger ends before them");
        "BullMQ activated it again at {replaced_at}, with no round in the ledger".to_string()
    };
    finding.metric("evidence_end_at", Value::Time(end));
    finding.metric("running_for_s", Value::Seconds(seconds_between(start.at(), end)));
    finding.derive("running_for_s", "evidence_end_at − started_at");
    finding.note("the round has a start row and no end row (finished or failed), and its job was run again after a stall: its owner lost the job, and nobody will mark the round's rows failed");
    finding.note("remedy: when a job becomes active, close any run of the same job id still marked running (status failed, reason: lock lost, re-run by the new run); on startup, close the runs of owners that are gone, judged by a lease or heartbeat, not by pids on this host; dashboards should count running rounds whose lease is current");
    let owner_text = if start.worker.is_some() { " (owner {owner})" } else { "" };
    let rows_text = if rows.len() <= 1 {
        "its only row, the start at {started_at}, has no end row"
    } else {
        "its {rows} rows, {started_at} to {last_row_at}, have no end row"
    };
    finding.summary = format!(
        "Round {{run_id}} of job {{job_id}}{owner_text} was left running: {rows_text}. {gone}{restart_text}. {taken_back}; {replaced}. The ledger will show {{run_id}} running for good (already {{running_for_s}} at the end of the evidence): nobody marks it failed."
    );
    finding.evidence.sort_unstable();
    finding.evidence.dedup();
    Some(finding)
}

/// Adds the round that ran under the rerun; says who ran it and how it ended.
fn replaced_by(context: &Context, other: &Round, finding: &mut Finding) -> String {
    let timeline = context.timeline;
    finding.metric("replaced_by_run_id", Value::Text(other.run_id.to_string()));
    finding.evidence.extend(other.started());
    let owner = other.started().and_then(|id| timeline.get(id).worker);
    if let Some(owner) = owner {
        finding.metric("replacement_owner", Value::Text(owner.to_string()));
    }
    finding.evidence.extend(other.ended());
    let status = match other.ended().map(|id| timeline.kind(id)) {
        Some(EventKind::RoundFailed) => "failed",
        Some(_) => "finished",
        None => "running",
    };
    finding.metric("replacement_status", Value::Text(status.to_string()));
    let by = if owner.is_some() { " (owner {replacement_owner})" } else { "" };
    format!("run {{replaced_by_run_id}}{by} re-ran it from {{replaced_at}} and is {status}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::Settings;
    use crate::model::{Channel, Event, LockParams, Origin, Timeline};

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    /// Source 0 is the events stream, 1 the ledger, 2 the log.
    fn event(source: u16, line: u32, when: &str, kind: EventKind, worker: Option<&str>) -> Event {
        let channel = [Channel::EventsStream, Channel::Ledger, Channel::Log][usize::from(source)];
        let mut event = Event::new(at(when).into(), kind, Origin { channel, source, line });
        event.edit().job_id = Some("7".into());
        event.edit().worker = worker.map(Text::from);
        event
    }

    fn row(line: u32, when: &str, kind: EventKind, run: &str, worker: &str) -> Event {
        let mut event = event(1, line, when, kind, Some(worker));
        event.edit().run_id = Some(run.into());
        event
    }

    fn detect(events: Vec<Event>) -> Vec<Finding> {
        let timeline = Timeline::new(events);
        let params = LockParams { lock_duration: 4_000, lock_renew_time: 2_000, ..LockParams::default() };
        let settings = Settings::default();
        OrphanedRound.detect(&Context::new(&timeline, &params, &settings))
    }

    /// Replica a (pid 100) runs job 7 as run-a and dies; replica b (pid 200) takes it back.
    fn replica_died() -> Vec<Event> {
        vec![
            event(0, 1, "2026-12-01T00:00:00.000Z", EventKind::JobActive, None),
            event(2, 1, "2026-12-01T00:00:00.002Z", EventKind::JobActive, Some("100")),
            row(2, "2026-12-01T00:00:00.003Z", EventKind::RoundStarted, "run-a", "host-a/100"),
            row(3, "2026-12-01T00:00:00.500Z", EventKind::ItemSelected, "run-a", "host-a/100"),
            event(0, 2, "2026-12-01T00:00:05.400Z", EventKind::JobStalled, None),
            event(0, 3, "2026-12-01T00:00:05.401Z", EventKind::JobActive, None),
            event(2, 2, "2026-12-01T00:00:05.403Z", EventKind::JobActive, Some("200")),
            row(4, "2026-12-01T00:00:05.404Z", EventKind::RoundStarted, "run-b", "host-b/200"),
            row(5, "2026-12-01T00:00:09.000Z", EventKind::RoundFinished, "run-b", "host-b/200"),
            event(0, 4, "2026-12-01T00:00:09.001Z", EventKind::JobCompleted, None),
        ]
    }

    #[test]
    fn a_round_of_a_dead_replica_replaced_by_another_run_is_orphaned() {
        let found = detect(replica_died());
        assert_eq!(found.len(), 1, "{found:?}");
        let f = &found[0];
        assert_eq!(f.get("run_id"), Some(&Value::Text("run-a".into())));
        assert_eq!(f.get("owner"), Some(&Value::Text("host-a/100".into())));
        assert_eq!(f.get("rows"), Some(&Value::Count(2)));
        assert_eq!(f.get("owner_last_seen_at"), Some(&Value::Time(at("2026-12-01T00:00:00.500Z"))));
        assert_eq!(f.get("stalled_at"), Some(&Value::Time(at("2026-12-01T00:00:05.400Z"))));
        assert_eq!(f.get("replaced_by_run_id"), Some(&Value::Text("run-b".into())));
        assert_eq!(f.get("replacement_owner"), Some(&Value::Text("host-b/200".into())));
        assert_eq!(f.get("replacement_status"), Some(&Value::Text("finished".into())));
        assert_eq!(f.get("running_for_s"), Some(&Value::Seconds(8.998)));
        assert_eq!(f.get("restart_at"), None, "no process started");
        assert_eq!(f.at, at("2026-12-01T00:00:05.401Z"));
    }

    #[test]
    fn a_round_that_finished_late_is_not_orphaned() {
        let mut events = replica_died();
        events.push(row(6, "2026-12-01T00:00:06.000Z", EventKind::RoundFinished, "run-a", "host-a/100"));
        assert!(detect(events).is_empty());
    }

    #[test]
    fn an_owner_still_writing_after_the_takeover_may_yet_end_its_round() {
        let mut events = replica_died();
        events.push(event(2, 3, "2026-12-01T00:00:07.000Z", EventKind::Error, Some("100")));
        assert!(detect(events).is_empty());
    }

    #[test]
    fn the_last_round_of_a_job_is_not_orphaned_whether_within_its_lock_or_not() {
        // Still within its 4 s lock at the end of the evidence, and nothing replaced it.
        let mut events: Vec<Event> = replica_died().into_iter().take(4).collect();
        events.push(event(2, 3, "2026-12-01T00:00:02.000Z", EventKind::Error, Some("300")));
        assert!(detect(events.clone()).is_empty());
        // Long after its lock: stuck-running's, not this finding's.
        events.push(event(2, 4, "2026-12-01T00:10:00.000Z", EventKind::Error, Some("300")));
        assert!(detect(events).is_empty());
    }

    #[test]
    fn a_retry_after_a_failure_is_no_replacement() {
        // The first run failed, and BullMQ retried the job: no stall between the two runs.
        let mut events = replica_died();
        events.retain(|e| e.kind != EventKind::JobStalled);
        events.push(event(0, 5, "2026-12-01T00:00:03.000Z", EventKind::JobFailed, None));
        assert!(detect(events).is_empty());
    }

    #[test]
    fn from_the_ledger_alone_the_rounds_are_the_activations() {
        let events = vec![
            row(2, "2026-12-01T00:00:00.003Z", EventKind::RoundStarted, "run-a", "host-a/100"),
            row(3, "2026-12-01T00:00:05.404Z", EventKind::RoundStarted, "run-b", "host-b/200"),
        ];
        let found = detect(events);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].get("replacement_status"), Some(&Value::Text("running".into())));
        assert_eq!(found[0].get("stalled_at"), None);
    }
}
