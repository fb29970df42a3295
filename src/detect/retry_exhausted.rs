//! `retry-exhausted`: a job used up its attempts and was given up (dead, quarantined, failed for
//! good).
//!
//! Going dead is the designed end of a retry budget, not a bug in itself; what makes it worth a
//! responder's time is the list of causes, because the seed's advice differs by cause: a budget
//! spent on a transient outage means the retries came too fast or too few and work was lost to a
//! blip (an error), a budget spent on invalid input means the job should have been quarantined at
//! the first failure, and a budget spent on lost leases points at the workers, not the job.
//!
//! A BullMQ job failed for stalling more than `maxStalledCount` times also ends in
//! `retries-exhausted`; that one is `stalled-limit-exceeded`'s, which explains it better.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::model::event::{ByHandle, Extra};
use crate::model::timeline::EventId;
use crate::model::{Channel, Event, EventKind, Finding, JobKey, Severity, Value};
use crate::time::seconds_between;

use super::retries::{self, CauseClass};
use super::stalled_limit_exceeded::STALLED_LIMIT_REASON;
use super::{Context, Detector};

pub struct RetryExhausted;

/// Ledger statuses that mean the job was given up (the first word of the status or detail).
pub const DEAD_STATUSES: &[&str] = &["dead", "quarantined", "dead_lettered", "dead-lettered", "deadlettered"];

/// Whether an event records the job being given up: a `job-dead` row, BullMQ's
/// `retries-exhausted`, or a ledger row whose status is dead.
fn gives_up(event: &Event, dead_details: &mut ByHandle<Extra, bool>) -> bool {
    match event.kind {
        EventKind::JobDead | EventKind::JobRetriesExhausted => true,
        // A ledger's rows share a few details: each is read once.
        _ => {
            event.origin().channel == Channel::Ledger
                && dead_details.get_or(event.extra(), |extra| {
                    extra.detail.is_some_and(|d| {
                        let first = d.split([':', ' ', ';']).next().unwrap_or("");
                        DEAD_STATUSES.iter().any(|status| first.eq_ignore_ascii_case(status))
                    })
                })
        }
    }
}

impl Detector for RetryExhausted {
    fn code(&self) -> &'static str {
        "retry-exhausted"
    }

    fn doc(&self) -> &'static str {
        include_str!("../../docs/findings/retry-exhausted.md")
    }

    /// Retries without backoff (`retry-storm` of the same job) used the attempts up.
    fn follows_from(&self, finding: &Finding, found: &super::links::Found) -> Vec<usize> {
        found.of_job_before(&["retry-storm"], finding, finding.at)
    }

    fn detect(&self, context: &Context) -> Vec<Finding> {
        let mut dead: BTreeMap<JobKey, Vec<EventId>> = BTreeMap::new();
        let mut dead_details = ByHandle::new();
        for (id, event) in context.timeline.ids() {
            if let (true, Some(job)) = (gives_up(event, &mut dead_details), context.job_of(event)) {
                dead.entry(job).or_default().push(id);
            }
        }
        // A job hash that failed with its attempts used up (`atm` ≥ its options' `attempts`) is
        // BullMQ's own record of the job given up, when its stream was trimmed past the
        // `retries-exhausted` entry.
        if context.jobs_have(&[EventKind::JobFailed]) {
            for (job, ids) in context.job_events.iter_having(&[EventKind::JobFailed]) {
                if dead.contains_key(&job) {
                    continue;
                }
                if let Some(failed) = used_up_in_hash(context, ids) {
                    dead.entry(job).or_default().push(failed);
                }
            }
        }
        dead.into_iter().filter_map(|(job, markers)| exhausted(context, job, &markers)).collect()
    }
}

/// The job hash's failure of a job whose hash says its attempts were used up: its last
/// activation's `atm` (attemptsMade) at least the `attempts` of its options.
fn used_up_in_hash(context: &Context, ids: &[EventId]) -> Option<EventId> {
    let timeline = context.timeline;
    let in_hash = |kind: EventKind| {
        ids.iter()
            .copied()
            .rfind(|&id| timeline.kind(id) == kind && timeline.get(id).origin().channel == Channel::JobHash)
    };
    let failed = in_hash(EventKind::JobFailed)?;
    let number = |id: EventId, key: &str| -> Option<u64> {
        let detail = timeline.get(id).detail_str()?;
        detail.split([' ', ';']).find_map(|part| part.strip_prefix(key)?.parse().ok())
    };
    let budget = number(in_hash(EventKind::JobAdded)?, "attempts=")?;
    let made = number(in_hash(EventKind::JobActive)?, "atm=")?;
    (made >= budget).then_some(failed)
}

/// One attempt of the job and what ended it.
struct Ran {
    start: Option<EventId>,
    number: usize,
    cause: Option<(String, Option<EventId>)>,
}

fn exhausted(context: &Context, job: JobKey, markers: &[EventId]) -> Option<Finding> {
    let timeline = context.timeline;
    // BullMQ's own record first, then the log, the ledger, a job hash; the earliest of those.
    let primary = *markers
        .iter()
        .min_by_key(|&&id| (timeline.get(id).origin().channel.activation_rank(), timeline.get(id).at()))
        .expect("a dead job has a marker");
    let dead_at = timeline.get(primary).at();
    // A ledger row that both fails and gives up the job is the end, not one more attempt's cause.
    let failures: Vec<EventId> = retries::failures(context, job)
        .into_iter()
        .filter(|&id| timeline.get(id).at() <= dead_at && !markers.contains(&id))
        .collect();
    let stall_limit = failures.last().is_some_and(|&id| {
        timeline.get(id).detail_str().is_some_and(|d| d.to_ascii_lowercase().contains(STALLED_LIMIT_REASON))
    });
    if stall_limit {
        return None;
    }
    let starts: Vec<EventId> =
        retries::starts(context, job).into_iter().filter(|&id| timeline.get(id).at() <= dead_at).collect();
    let lease_job = retries::is_lease_job(context, job);
    let ran = attempts(context, job, &starts, &failures, dead_at, markers, lease_job);

    let (job_name, queue) = retries::name_and_queue(context, job);
    let mut finding = Finding::new("retry-exhausted", Severity::Warning, dead_at);
    finding.metric("job_id", Value::Text(job.to_string()));
    if let Some(name) = job_name {
        finding.metric("job_name", Value::Text(name));
    }
    if let Some(queue) = job.queue.map(|queue| queue.to_string()).or(queue) {
        finding.metric("queue", Value::Text(queue));
    }
    finding.metric("dead_at", Value::Time(dead_at));
    // A log line or a job hash's stamp stands for a moment near it (`clocks`).
    let when = context.failure_when(job, primary);
    if !when.is_exact() {
        finding.metric("dead_earliest_at", Value::Time(when.earliest.utc()));
        finding.metric("dead_latest_at", Value::Time(when.latest.utc()));
        finding.note(format!(
            "dead_at is the {}'s record of it (BullMQ's stream does not have it): that source's records, and the other records of this failure, of what the stream also recorded came earlier or later than the stream's, so the job was given up between dead_earliest_at and dead_latest_at",
            timeline.get(primary).origin().channel.describe()
        ));
    }
    finding.metric("attempts", Value::Count(ran.len() as u64));
    let attempts_made = markers.iter().find_map(|&id| {
        let event = timeline.get(id);
        (event.kind == EventKind::JobRetriesExhausted)
            .then(|| event.detail_str()?.strip_prefix("attemptsMade=")?.parse::<u64>().ok())
            .flatten()
    });
    if let Some(made) = attempts_made {
        finding.metric("attempts_made", Value::Count(made));
        if made == 1 {
            finding.note("BullMQ says attemptsMade=1: the job had a budget of one attempt and was never retried (attempts: 1 is BullMQ's default)");
        }
    }
    let first_start = ran.iter().find_map(|a| a.start).map(|id| timeline.get(id).at());
    if let Some(at) = first_start {
        finding.metric("first_attempt_at", Value::Time(at));
        finding.metric("dead_after_s", Value::Seconds(seconds_between(at, dead_at)));
        finding.derive("dead_after_s", "dead_at − first_attempt_at");
    }

    let mut counts: BTreeMap<CauseClass, u64> = BTreeMap::new();
    let mut listed = Vec::new();
    for attempt in &ran {
        let worker = attempt.start.and_then(|id| timeline.get(id).worker.as_deref());
        let text = match &attempt.cause {
            Some((cause, _)) => {
                *counts.entry(retries::classify(cause)).or_default() += 1;
                cause.clone()
            }
            None => "no cause recorded".to_string(),
        };
        listed.push(match worker {
            Some(worker) => format!("{}: {text} ({worker})", attempt.number),
            None => format!("{}: {text}", attempt.number),
        });
        finding.evidence.extend(attempt.start);
        finding.evidence.extend(attempt.cause.as_ref().and_then(|(_, id)| *id));
    }
    finding.metric("causes", Value::Text(if listed.is_empty() { "none recorded".into() } else { listed.join("; ") }));
    let last = ran.iter().rev().find_map(|a| a.cause.as_ref().map(|(c, _)| c.clone()));
    let class = last.as_deref().map_or(CauseClass::Other, retries::classify);
    finding.metric("last_cause", Value::Text(last.clone().unwrap_or_else(|| "none recorded".into())));
    finding.metric("last_cause_class", Value::Text(class.name().to_string()));
    for (name, class) in [
        ("transient_causes", CauseClass::Transient),
        ("invalid_input_causes", CauseClass::InvalidInput),
        ("lost_owner_causes", CauseClass::LostOwner),
        ("other_causes", CauseClass::Other),
    ] {
        finding.metric(name, Value::Count(counts.get(&class).copied().unwrap_or(0)));
    }
    finding.evidence.extend(markers);
    finding.evidence.sort_unstable();
    finding.evidence.dedup();
    if class == CauseClass::Transient {
        finding.severity = Severity::Error;
    }
    finding.note("causes are read per attempt: the failure recorded between its start and the next (from one channel), else, for a lease, its lease running out before the next claim, else a stall BullMQ recorded");
    if ran.is_empty() {
        finding.note("no attempt or failure of this job was seen before it was given up: the evidence starts too late");
    }
    let advice = match (class, last.is_some()) {
        (_, false) => "no cause was recorded: find out why before re-running it",
        (CauseClass::Transient, _) => {
            "a transient failure used up the budget: the retries came too fast or too few for the outage (back off longer, with a cap and jitter), and the job is lost unless someone re-runs it"
        }
        (CauseClass::InvalidInput, _) => {
            "retrying invalid input cannot succeed: quarantine it at the first such failure, with the cause and the input's id"
        }
        (CauseClass::LostOwner, _) => {
            "its owners kept losing it (lease expired, stalled, restarted): look at the workers, not the job"
        }
        (CauseClass::Other, _) => "check the cause before re-running it",
    };
    finding.summary = format!(
        "Job {{job_id}} was given up at {{dead_at}} after {{attempts}} attempt(s): {{causes}}. The last cause is {{last_cause_class}}; {advice}."
    );
    Some(finding)
}

/// Pairs each attempt with what ended it. An attempt ends at the next one's start (the last at
/// `dead_at`). The claim that found the budget spent (the last, with nothing recorded between it
/// and the dead row) is not an attempt.
fn attempts(
    context: &Context,
    job: JobKey,
    starts: &[EventId],
    failures: &[EventId],
    dead_at: DateTime<Utc>,
    markers: &[EventId],
    lease_job: bool,
) -> Vec<Ran> {
    let timeline = context.timeline;
    let events = context.events_of_job(job);
    let mut used = vec![false; failures.len()];
    let mut ran = Vec::new();
    for (index, &start) in starts.iter().enumerate() {
        let from = timeline.get(start).at();
        let next = starts.get(index + 1).map(|&id| timeline.get(id).at());
        let until = next.unwrap_or(dead_at);
        let inside = |at: DateTime<Utc>| from <= at && (next.map_or(at <= dead_at, |n| at < n));
        let failure = failures.iter().enumerate().rev().find(|&(n, &id)| !used[n] && inside(timeline.get(id).at()));
        let cause = if let Some((n, &id)) = failure {
            used[n] = true;
            Some((retries::reason(timeline.get(id)), Some(id)))
        } else if lease_job {
            let worker = &timeline.get(start).worker;
            let lease_until = events
                .iter()
                .filter(|&&id| {
                    let e = timeline.get(id);
                    matches!(e.kind, EventKind::LeaseClaimed | EventKind::LeaseExtended)
                        && e.lease().accepted != Some(false)
                        && inside(e.at())
                        && (id == start || &e.worker == worker)
                })
                .filter_map(|&id| timeline.get(id).lease().lease_until.map(|until_at| (until_at, id)))
                .max();
            // The row that set the lease's end is the evidence that it ran out.
            lease_until.filter(|&(until_at, _)| until_at < until).map(|(_, id)| ("lease expired".to_string(), Some(id)))
        } else if retries::stalled_between(context, job, from, until) {
            Some(("stalled (lock expired)".to_string(), None))
        } else {
            None
        };
        let number = timeline.get(start).lease().attempt.map_or(index + 1, |n| usize::try_from(n).unwrap_or(index + 1));
        ran.push(Ran { start: Some(start), number, cause });
    }
    if let Some(last) = ran.last()
        && last.cause.is_none()
        && let Some(start) = last.start
    {
        let from = timeline.get(start).at();
        let quiet = !events.iter().any(|&id| {
            let event = timeline.get(id);
            id != start
                && !markers.contains(&id)
                && from <= event.at()
                && event.at() <= dead_at
                && !matches!(event.kind, EventKind::JobActive | EventKind::RoundStarted | EventKind::JobDead)
        });
        if quiet {
            ran.pop();
        }
    }
    // Failures outside every attempt (the activations were not seen): each is an attempt.
    for (n, &id) in failures.iter().enumerate() {
        if !used[n] && !ran.iter().any(|a| a.cause.as_ref().is_some_and(|(_, c)| *c == Some(id))) {
            let inside_one =
                ran.iter().any(|a| a.start.is_some_and(|s| timeline.get(s).moment() <= timeline.get(id).moment()));
            if !inside_one {
                let number =
                    timeline.get(id).lease().attempt.map_or(ran.len() + 1, |a| usize::try_from(a).unwrap_or(0));
                ran.push(Ran { start: None, number, cause: Some((retries::reason(timeline.get(id)), Some(id))) });
            }
        }
    }
    ran.sort_by_key(|a| a.start.or_else(|| a.cause.as_ref().and_then(|(_, id)| *id)).map(|id| timeline.get(id).at()));
    ran
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::Settings;
    use crate::model::{LockParams, Origin, Timeline};

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    fn row(line: u32, when: &str, kind: EventKind, worker: &str, attempt: Option<u64>, detail: Option<&str>) -> Event {
        let origin = Origin { channel: Channel::Ledger, source: 0, line };
        let mut event = Event::new(at(when).into(), kind, origin);
        event.edit().job_id = Some("job-9".into());
        event.edit().worker = Some(crate::model::Text::from(worker));
        event.lease_mut().attempt = attempt;
        event.set_detail(detail.map(crate::model::Text::from));
        if kind == EventKind::LeaseClaimed {
            event.lease_mut().accepted = Some(true);
            event.lease_mut().lease_until = Some(at(when) + chrono::Duration::seconds(10));
        }
        event
    }

    fn detect(events: Vec<Event>) -> Vec<Finding> {
        let timeline = Timeline::new(events);
        let params = LockParams::default();
        let settings = Settings::default();
        RetryExhausted.detect(&Context::new(&timeline, &params, &settings))
    }

    fn text(f: &Finding, name: &str) -> String {
        match f.get(name) {
            Some(Value::Text(t)) => t.clone(),
            other => panic!("{name}: {other:?}"),
        }
    }

    fn three_failures(last: &str) -> Vec<Event> {
        vec![
            row(2, "2026-12-01T00:00:00Z", EventKind::LeaseClaimed, "w-a", Some(1), None),
            row(3, "2026-12-01T00:00:02Z", EventKind::RoundFailed, "w-a", Some(1), Some("ETIMEDOUT")),
            row(4, "2026-12-01T00:00:04Z", EventKind::LeaseClaimed, "w-b", Some(2), None),
            row(5, "2026-12-01T00:00:20Z", EventKind::LeaseClaimed, "w-c", Some(3), None),
            row(6, "2026-12-01T00:00:21Z", EventKind::RoundFailed, "w-c", Some(3), Some(last)),
            row(7, "2026-12-01T00:00:30Z", EventKind::LeaseClaimed, "w-a", Some(4), None),
            row(8, "2026-12-01T00:00:30Z", EventKind::JobDead, "w-a", Some(4), Some("attempts exhausted")),
        ]
    }

    #[test]
    fn a_dead_job_lists_the_cause_of_each_attempt() {
        let found = detect(three_failures("503 Service Unavailable"));
        assert_eq!(found.len(), 1);
        let f = &found[0];
        assert_eq!(f.get("attempts"), Some(&Value::Count(3)), "the claim that found the budget spent is no attempt");
        assert_eq!(text(f, "causes"), "1: ETIMEDOUT (w-a); 2: lease expired (w-b); 3: 503 Service Unavailable (w-c)");
        assert_eq!(f.get("transient_causes"), Some(&Value::Count(2)));
        assert_eq!(f.get("lost_owner_causes"), Some(&Value::Count(1)));
        assert_eq!(f.get("dead_after_s"), Some(&Value::Seconds(30.0)));
        assert_eq!(f.severity, Severity::Error, "the last cause is transient");
    }

    #[test]
    fn a_job_given_up_on_invalid_input_is_a_warning() {
        let found = detect(three_failures("422 Unprocessable Entity"));
        assert_eq!(found[0].severity, Severity::Warning);
        assert_eq!(text(&found[0], "last_cause_class"), "invalid-input");
    }

    #[test]
    fn a_job_that_succeeded_on_its_last_attempt_is_not_dead() {
        let mut events = three_failures("ETIMEDOUT");
        events.truncate(4);
        events.push(row(9, "2026-12-01T00:00:22Z", EventKind::LeaseCompleted, "w-c", Some(3), None));
        assert!(detect(events).is_empty());
    }

    #[test]
    fn the_stall_limit_is_left_to_stalled_limit_exceeded() {
        let stream = |line: u32, when: &str, kind: EventKind, detail: &str| {
            let origin = Origin { channel: Channel::EventsStream, source: 1, line };
            let mut event = Event::new(at(when).into(), kind, origin);
            event.edit().job_id = Some("7".into());
            event.set_detail(Some(crate::model::Text::from(detail)));
            event
        };
        let found = detect(vec![
            stream(1, "2026-12-01T00:00:00Z", EventKind::JobActive, "prev=waiting"),
            stream(2, "2026-12-01T00:00:00.004Z", EventKind::JobFailed, STALLED_LIMIT_REASON),
            stream(3, "2026-12-01T00:00:00.004Z", EventKind::JobRetriesExhausted, "attemptsMade=1"),
        ]);
        assert!(found.is_empty());
        let found = detect(vec![
            stream(1, "2026-12-01T00:00:00Z", EventKind::JobActive, "prev=waiting"),
            stream(2, "2026-12-01T00:00:01Z", EventKind::JobFailed, "ECONNRESET"),
            stream(3, "2026-12-01T00:00:03Z", EventKind::JobActive, "prev=delayed"),
            stream(4, "2026-12-01T00:00:04Z", EventKind::JobFailed, "ECONNRESET"),
            stream(5, "2026-12-01T00:00:04Z", EventKind::JobRetriesExhausted, "attemptsMade=2"),
        ]);
        assert_eq!(found.len(), 1);
        assert_eq!(text(&found[0], "causes"), "1: ECONNRESET; 2: ECONNRESET");
        assert_eq!(found[0].get("attempts_made"), Some(&Value::Count(2)));
    }

    #[test]
    fn a_dead_status_on_a_ledger_row_counts_and_a_deadline_does_not() {
        let mut events = three_failures("ETIMEDOUT");
        events.truncate(5);
        events.push(row(9, "2026-12-01T00:00:22Z", EventKind::RoundFailed, "w-c", None, Some("DEAD: gave up")));
        assert_eq!(detect(events).len(), 1);
        let mut events = three_failures("ETIMEDOUT");
        events.truncate(5);
        events.push(row(9, "2026-12-01T00:00:22Z", EventKind::RoundFailed, "w-c", None, Some("deadline exceeded")));
        assert!(detect(events).is_empty());
    }
}
