//! `stuck-running`: jobs still marked running at the end of the evidence, with their lease or lock
//! expired and nobody left to finish them.
//!
//! "Running" has no expiry date by itself: a new worker leaves a job alone because someone seems
//! to own it, and restarting processes does not move it on. The seed says what to watch instead of
//! the process count: the age of the oldest running job and the number of expired leases. So this
//! is one finding per case, a snapshot at the last event of the timeline carrying those two numbers
//! and the list of stuck jobs, rather than one per job: it answers "how stuck is the queue", and
//! each job's own story is in the other findings.
//!
//! A lease ledger states the expiry (`lease_until`); a lease that ran out without a completion
//! means its owner stopped renewing it. BullMQ renewals leave no trace, so a queue job's lock is
//! only known to have expired after a process restart: exactly `lockDuration` after activation
//! when the restart came before the first renewal could, else at the latest `lockDuration` after
//! the restart.

use chrono::{DateTime, Utc};

use crate::model::timeline::EventId;
use crate::model::{Channel, Event, EventKind, Finding, JobKey, Severity, Text, Value};
use crate::time::{format_duration, plus_millis, seconds_between};

use super::stalled_rerun::RenewalModel;
use super::{Context, Detector, retries};

pub struct StuckRunning;

/// One job (or round) still running at the end of the evidence.
struct Running {
    label: String,
    what: &'static str,
    since: EventId,
    owner: Option<crate::model::Text>,
    /// When its lease or lock ran out, if the evidence says; with the formula.
    expiry: Option<(DateTime<Utc>, &'static str)>,
    evidence: Vec<EventId>,
}

impl Detector for StuckRunning {
    fn code(&self) -> &'static str {
        "stuck-running"
    }

    fn doc(&self) -> &'static str {
        include_str!("../../docs/findings/stuck-running.md")
    }

    fn detect(&self, context: &Context) -> Vec<Finding> {
        // The timeline is in time order: its last event is the latest.
        let Some(end) = context.timeline.events().last().map(Event::at) else {
            return Vec::new();
        };
        let mut running = Vec::new();
        // A lease job runs from an accepted claim, a queue job from an activation BullMQ or the
        // log saw (one the ledger alone saw is a round, below): jobs with neither are not looked at.
        for (job, _) in context.job_events.iter_having(&[EventKind::LeaseClaimed, EventKind::JobActive]) {
            if retries::is_lease_job(context, job) {
                running.extend(lease_job(context, job));
            } else {
                running.extend(queue_job(context, job));
            }
        }
        running.extend(rounds(context));
        let stuck: Vec<&Running> = running.iter().filter(|r| r.expiry.is_some_and(|(at, _)| at < end)).collect();
        if stuck.is_empty() {
            return Vec::new();
        }
        vec![snapshot(context, end, &running, &stuck)]
    }
}

/// A lease job is running when its last accepted claim was not followed by an accepted
/// completion, a failed-attempt row or a dead row; its lease runs until the latest `lease_until`
/// of that claim and the owner's accepted extensions.
fn lease_job(context: &Context, job: JobKey) -> Option<Running> {
    let timeline = context.timeline;
    let ids = &context.events_of_job(job);
    let claim = ids.iter().copied().rfind(|&id| {
        let event = timeline.get(id);
        event.kind == EventKind::LeaseClaimed && event.lease().accepted != Some(false)
    })?;
    let claimed = timeline.get(claim);
    let same_owner = |event: &Event| match (event.lease().generation, claimed.lease().generation) {
        (Some(a), Some(b)) => a == b,
        _ => event.worker == claimed.worker,
    };
    let later = || ids.iter().copied().filter(|&id| id != claim && timeline.get(id).moment() >= claimed.moment());
    let ended = later().any(|id| {
        let event = timeline.get(id);
        match event.kind {
            EventKind::LeaseCompleted => event.lease().accepted != Some(false),
            EventKind::JobDead
            | EventKind::RoundFailed
            | EventKind::RoundFinished
            | EventKind::JobCompleted
            | EventKind::JobFailed => true,
            _ => false,
        }
    });
    if ended {
        return None;
    }
    let extensions: Vec<EventId> = later()
        .filter(|&id| {
            let event = timeline.get(id);
            event.kind == EventKind::LeaseExtended && event.lease().accepted != Some(false) && same_owner(event)
        })
        .collect();
    let until = std::iter::once(claim)
        .chain(extensions.iter().copied())
        .filter_map(|id| timeline.get(id).lease().lease_until)
        .max();
    let mut evidence = vec![claim];
    evidence.extend(extensions.last());
    Some(Running {
        label: job.to_string(),
        what: "lease",
        since: claim,
        owner: claimed.worker,
        expiry: until.map(|at| (at, "lease_until")),
        evidence,
    })
}

/// When a queue job's lock ran out, given the activation and a restart after it.
fn lock_expiry(context: &Context, activated_at: DateTime<Utc>, restart: &Event) -> (DateTime<Utc>, &'static str) {
    let params = context.params;
    let (earliest_renewal_ms, _) = RenewalModel::for_params(params).first_renewal_window(params);
    let lock_ms = i64::try_from(params.lock_duration).unwrap_or(i64::MAX);
    if restart.at() <= plus_millis(activated_at, earliest_renewal_ms) {
        (plus_millis(activated_at, lock_ms), "activated_at + lockDuration (the restart came before the first renewal)")
    } else {
        (
            plus_millis(restart.at(), lock_ms),
            "restart_at + lockDuration (the latest a renewal before the restart could hold it)",
        )
    }
}

/// The first process start after `after` that is tied to the process `near` came from
/// (`processes`).
fn restart_after(context: &Context, after: DateTime<Utc>, near: &Event) -> Option<EventId> {
    let restarts: Vec<EventId> =
        context.restarts.iter().copied().filter(|&id| context.timeline.get(id).at() > after).collect();
    context.restart_of(near, &restarts).map(|(restart, _)| restart)
}

/// Whether the owner wrote anything after the restart: then it was not the process that died (a
/// restart line reusing the owner's id is the new process, not a sign of life).
fn alive_after(context: &Context, owner: Option<Text>, restart: EventId) -> bool {
    let Some(owner) = owner else {
        return false;
    };
    let restart_event = context.timeline.get(restart);
    if restart_event.worker == Some(owner) {
        return false;
    }
    // Only the events after the restart's instant, found by halving: the timeline is in time order.
    let events = context.timeline.events();
    let after = events.partition_point(|e| e.moment() <= restart_event.moment());
    events[after..].iter().any(|e| e.worker == Some(owner))
}

/// A queue job (BullMQ) is running when nothing followed its last activation: no completion,
/// failure, stall, move to wait or delay, removal, or ledger end row.
fn queue_job(context: &Context, job: JobKey) -> Option<Running> {
    let timeline = context.timeline;
    let activation = context.attempts_of_job(job).last()?.activated;
    let active = timeline.get(activation);
    if active.origin().channel == Channel::Ledger {
        return None;
    }
    let ended = context.events_of_job(job).iter().any(|&id| {
        let event = timeline.get(id);
        let finished = matches!(
            event.kind,
            EventKind::JobCompleted
                | EventKind::JobFailed
                | EventKind::JobRetriesExhausted
                | EventKind::JobRemoved
                | EventKind::JobDead
                | EventKind::RoundFinished
        );
        let moved = matches!(event.kind, EventKind::JobStalled | EventKind::JobWaiting | EventKind::JobDelayed);
        (finished && event.moment() >= active.moment()) || (moved && event.moment() > active.moment())
    });
    if ended {
        return None;
    }
    // The same activation as another channel saw it may name the worker (a log line's pid).
    let owner = active.worker.or_else(|| {
        context.events_of_job(job).iter().find_map(|&id| {
            let event = timeline.get(id);
            let same = event.kind == EventKind::JobActive && seconds_between(active.at(), event.at()).abs() <= 1.0;
            event.worker.filter(|_| same)
        })
    });
    let restart = restart_after(context, active.at(), active).filter(|&id| !alive_after(context, owner, id));
    let mut evidence = vec![activation];
    evidence.extend(restart);
    Some(Running {
        label: job.to_string(),
        what: "queue job",
        since: activation,
        owner,
        expiry: restart.map(|id| lock_expiry(context, active.at(), timeline.get(id))),
        evidence,
    })
}

/// A ledger round with a start row and no end row, whose job no other record follows (a lease
/// job or a queue job is judged by its own records; a round whose job started again later was
/// left behind, not stuck: `orphaned-round` reports it).
fn rounds(context: &Context) -> Vec<Running> {
    let timeline = context.timeline;
    let mut found = Vec::new();
    for round in &context.rounds {
        let (Some(started), None) = (round.started(), round.ended()) else {
            continue;
        };
        if let Some(job) = context.job_of_round(round) {
            let queue_seen = context
                .attempts_of_job(job)
                .iter()
                .any(|attempt| timeline.get(attempt.activated).origin().channel != Channel::Ledger);
            let restarted_later = context.rounds.iter().any(|other| {
                context.job_of_round(other) == Some(job) && other.start_at(timeline) > round.start_at(timeline)
            });
            if retries::is_lease_job(context, job) || queue_seen || restarted_later {
                continue;
            }
        }
        let start = timeline.get(started);
        let last_row = timeline.get(round.last_event).at();
        let restart = restart_after(context, last_row, start).filter(|&id| !alive_after(context, start.worker, id));
        let mut evidence = vec![started];
        evidence.extend(restart);
        found.push(Running {
            label: round.run_id.to_string(),
            what: "round",
            since: started,
            owner: start.worker,
            expiry: restart.map(|id| lock_expiry(context, start.at(), timeline.get(id))),
            evidence,
        });
    }
    found
}

fn snapshot(context: &Context, end: DateTime<Utc>, running: &[Running], stuck: &[&Running]) -> Finding {
    let timeline = context.timeline;
    let since = |r: &Running| timeline.get(r.since).at();
    let oldest = *stuck.iter().min_by_key(|r| (since(r), r.label.clone())).expect("at least one stuck job");
    let (expired_at, formula) = oldest.expiry.expect("a stuck job has an expiry");

    let mut finding = Finding::new("stuck-running", Severity::Warning, end);
    finding.metric("evidence_end_at", Value::Time(end));
    finding.metric("expired_leases", Value::Count(stuck.len() as u64));
    finding.metric("running_jobs", Value::Count(running.len() as u64));
    finding.metric("oldest_job", Value::Text(oldest.label.clone()));
    finding.metric("oldest_since_at", Value::Time(since(oldest)));
    finding.metric("oldest_age_s", Value::Seconds(seconds_between(since(oldest), end)));
    finding.derive("oldest_age_s", "evidence_end_at − oldest_since_at");
    finding.metric("oldest_expired_at", Value::Time(expired_at));
    finding.derive("oldest_expired_at", formula);
    finding.metric("oldest_expired_for_s", Value::Seconds(seconds_between(expired_at, end)));
    finding.derive("oldest_expired_for_s", "evidence_end_at − oldest_expired_at");
    let mut listed: Vec<&&Running> = stuck.iter().collect();
    listed.sort_by_key(|r| (since(r), r.label.clone()));
    let text: Vec<String> = listed
        .iter()
        .map(|r| {
            let (expired, _) = r.expiry.expect("stuck");
            let owner = r.owner.as_deref().map_or(String::new(), |o| format!(", owner {o}"));
            let gone = if r.what == "lease" { "lease" } else { "lock" };
            format!(
                "{} ({}{owner}): running {}, {gone} expired {} before the end",
                r.label,
                r.what,
                format_duration(seconds_between(since(r), end)),
                format_duration(seconds_between(expired, end))
            )
        })
        .collect();
    finding.metric("stuck", Value::Text(text.join("; ")));
    for r in stuck {
        finding.evidence.extend(&r.evidence);
    }
    finding.evidence.sort_unstable();
    finding.evidence.dedup();
    finding.note("the end of the evidence is the latest event of any source: the snapshot is as of then, and a job finished after it is not seen");
    finding.note("age is counted from the current owner's claim (a lease) or the last activation or round start");
    if stuck.iter().any(|r| r.what != "lease") {
        finding.note("a queue job's or round's lock is known to have expired only after a process restart: renewals leave no trace, so a job whose process did not restart is counted running but not expired");
    }
    let still_valid = running.len() - stuck.len();
    let others = if still_valid == 0 {
        String::new()
    } else {
        format!(
            " {still_valid} more job(s) were running with a lease or lock not known to have expired ({{running_jobs}} running in all)."
        )
    };
    finding.summary = format!(
        "{{expired_leases}} job(s) were still marked running at the end of the evidence ({{evidence_end_at}}) with their lease or lock expired and no owner to finish them; the oldest, {{oldest_job}}, has been running for {{oldest_age_s}} (since {{oldest_since_at}}), expired for {{oldest_expired_for_s}}. Stuck: {{stuck}}.{others}"
    );
    finding
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::Settings;
    use crate::model::{LockParams, Origin, Timeline};

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    fn event(channel: Channel, when: &str, kind: EventKind, job: Option<&str>, worker: &str) -> Event {
        let origin = Origin { channel, source: 0, line: 0 };
        let mut event = Event::new(at(when).into(), kind, origin);
        event.edit().job_id = job.map(crate::model::Text::from);
        event.edit().worker = Some(crate::model::Text::from(worker));
        event
    }

    fn claim(when: &str, job: &str, worker: &str, until: &str) -> Event {
        let mut e = event(Channel::Ledger, when, EventKind::LeaseClaimed, Some(job), worker);
        e.lease_mut().accepted = Some(true);
        e.lease_mut().lease_until = Some(at(until));
        e
    }

    fn detect(mut events: Vec<Event>, params: &LockParams) -> Vec<Finding> {
        for (n, event) in events.iter_mut().enumerate() {
            event.set_origin(crate::model::Origin { line: u32::try_from(n).unwrap() + 1, ..event.origin() });
        }
        let timeline = Timeline::new(events);
        let settings = Settings::default();
        StuckRunning.detect(&Context::new(&timeline, params, &settings))
    }

    #[test]
    fn an_expired_lease_without_completion_is_stuck_with_its_age() {
        let mut extended = claim("2026-12-01T00:00:20Z", "job-1", "w-a", "2026-12-01T00:00:40Z");
        extended.kind = EventKind::LeaseExtended;
        let events = vec![
            claim("2026-12-01T00:00:00Z", "job-1", "w-a", "2026-12-01T00:00:30Z"),
            extended,
            claim("2026-12-01T00:04:00Z", "job-2", "w-b", "2026-12-01T00:05:30Z"),
            event(Channel::Ledger, "2026-12-01T00:05:00Z", EventKind::RoundStarted, None, "w-c"),
        ];
        let found = detect(events, &LockParams::default());
        assert_eq!(found.len(), 1);
        let f = &found[0];
        assert_eq!(f.get("expired_leases"), Some(&Value::Count(1)));
        assert_eq!(f.get("running_jobs"), Some(&Value::Count(2)), "job-2's lease is still valid");
        assert_eq!(f.get("oldest_job"), Some(&Value::Text("job-1".into())));
        assert_eq!(f.get("oldest_age_s"), Some(&Value::Seconds(300.0)));
        assert_eq!(f.get("oldest_expired_for_s"), Some(&Value::Seconds(260.0)));
    }

    #[test]
    fn a_lease_expiring_exactly_at_the_end_is_not_expired_and_a_completion_ends_it() {
        let events = vec![
            claim("2026-12-01T00:00:00Z", "job-1", "w-a", "2026-12-01T00:01:00Z"),
            event(Channel::Ledger, "2026-12-01T00:01:00Z", EventKind::RoundStarted, None, "w-c"),
        ];
        assert!(detect(events, &LockParams::default()).is_empty());
        let mut done = event(Channel::Ledger, "2026-12-01T00:00:10Z", EventKind::LeaseCompleted, Some("job-1"), "w-a");
        done.lease_mut().accepted = Some(true);
        let events = vec![
            claim("2026-12-01T00:00:00Z", "job-1", "w-a", "2026-12-01T00:00:30Z"),
            done,
            event(Channel::Ledger, "2026-12-01T00:05:00Z", EventKind::RoundStarted, None, "w-c"),
        ];
        assert!(detect(events, &LockParams::default()).is_empty());
    }

    #[test]
    fn a_queue_job_is_stuck_only_once_a_restart_let_its_lock_expire() {
        let params = LockParams { lock_duration: 30_000, lock_renew_time: 15_000, ..LockParams::default() };
        let base = vec![
            event(Channel::Log, "2026-12-01T00:00:00Z", EventKind::JobActive, Some("42"), "100"),
            event(Channel::Log, "2026-12-01T00:00:05Z", EventKind::ProcessStart, None, "200"),
        ];
        let mut late = base.clone();
        late.push(event(Channel::Log, "2026-12-01T00:00:31Z", EventKind::JobActive, Some("43"), "200"));
        late.push(event(Channel::Log, "2026-12-01T00:00:32Z", EventKind::JobCompleted, Some("43"), "200"));
        let found = detect(late, &params);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].get("oldest_expired_at"), Some(&Value::Time(at("2026-12-01T00:00:30Z"))));
        assert_eq!(found[0].get("oldest_age_s"), Some(&Value::Seconds(32.0)));
        let mut early = base.clone();
        early.push(event(Channel::Log, "2026-12-01T00:00:30Z", EventKind::JobCompleted, Some("43"), "200"));
        assert!(detect(early, &params).is_empty(), "the lock expires exactly at the end: not yet");
        let mut no_restart = base;
        no_restart.remove(1);
        no_restart.push(event(Channel::Log, "2026-12-01T01:00:00Z", EventKind::JobCompleted, Some("43"), "200"));
        assert!(detect(no_restart, &params).is_empty(), "without a restart the lock may still be renewed");
    }

    #[test]
    fn an_owner_still_writing_after_the_restart_did_not_die() {
        let params = LockParams { lock_duration: 30_000, lock_renew_time: 15_000, ..LockParams::default() };
        let events = vec![
            event(Channel::Log, "2026-12-01T00:00:00Z", EventKind::JobActive, Some("42"), "100"),
            event(Channel::Log, "2026-12-01T00:00:05Z", EventKind::ProcessStart, None, "200"),
            event(Channel::Log, "2026-12-01T00:00:40Z", EventKind::Error, None, "100"),
        ];
        assert!(detect(events, &params).is_empty(), "another replica restarted; 100 lived on");
    }

    #[test]
    fn a_round_without_an_end_row_is_stuck_after_a_restart() {
        let params = LockParams { lock_duration: 30_000, lock_renew_time: 15_000, ..LockParams::default() };
        let mut started = event(Channel::Ledger, "2026-12-01T00:00:00Z", EventKind::RoundStarted, None, "api/1");
        started.edit().run_id = Some("run-a".into());
        let events = vec![
            started.clone(),
            // The owner's process (pid 1) writes the log that has the restart.
            event(Channel::Log, "2026-12-01T00:00:01Z", EventKind::JobProgress, None, "1"),
            event(Channel::Log, "2026-12-01T00:00:05Z", EventKind::ProcessStart, None, "2"),
            event(Channel::Log, "2026-12-01T00:10:00Z", EventKind::Error, None, "2"),
        ];
        let found = detect(events, &params);
        assert_eq!(found[0].get("oldest_job"), Some(&Value::Text("run-a".into())));
        let mut ended = started.clone();
        ended.kind = EventKind::RoundFailed;
        ended.set_at(at("2026-12-01T00:00:06Z").into());
        let events = vec![
            started,
            ended,
            event(Channel::Log, "2026-12-01T00:00:05Z", EventKind::ProcessStart, None, "2"),
            event(Channel::Log, "2026-12-01T00:10:00Z", EventKind::Error, None, "2"),
        ];
        assert!(detect(events, &params).is_empty());
    }
}
