//! `retry-storm`: retries without backoff or jitter, or retries that cannot succeed.
//!
//! The seed splits retries by cause before counting them: a brief outage calls for a delay that
//! grows, has a cap and is spread out, so that the retries do not all land on the recovering
//! service at once; invalid input calls for no retry at all. Three patterns break that:
//!
//! - **no-backoff**: one job retried again and again after failures with short delays that do not
//!   grow;
//! - **herd**: several workers retrying at the same instant (no jitter);
//! - **invalid-input-retried**: a failure caused by the input itself, retried anyway.
//!
//! A re-activation after a stall is BullMQ recovering a lost lock, not a retry, and is left out.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::model::timeline::EventId;
use crate::model::{Channel, EventKind, Finding, JobKey, Severity, Text, Value};
use crate::time::{format_duration, seconds_between};

use super::retries::{self, CauseClass};
use super::{Context, Detector};

/// no-backoff: at least this many attempts in a row, each after a failure.
pub const STORM_MIN_ATTEMPTS: usize = 3;
/// no-backoff: every retry delay (failure → next attempt) under this many seconds.
pub const STORM_MAX_DELAY_S: f64 = 10.0;
/// no-backoff: a delay at least this many times the previous one (and longer) is backoff.
pub const BACKOFF_GROWTH: f64 = 1.5;
/// herd: retry claims or activations within this many milliseconds of the first...
pub const HERD_WINDOW_MS: i64 = 100;
/// herd: ...by at least this many different workers.
pub const HERD_MIN_WORKERS: usize = 3;

pub struct RetryStorm;

impl Detector for RetryStorm {
    fn code(&self) -> &'static str {
        "retry-storm"
    }

    fn doc(&self) -> &'static str {
        include_str!("../../docs/findings/retry-storm.md")
    }

    fn detect(&self, context: &Context) -> Vec<Finding> {
        // Both patterns are about what follows a failure: most jobs never failed, and are not
        // looked at (nor sorted).
        let mut jobs: Vec<JobKey> = context
            .job_events
            .iter_having(&[EventKind::JobFailed, EventKind::RoundFailed])
            .map(|(job, _)| job)
            .collect();
        jobs.sort_unstable();
        let mut findings = Vec::new();
        for job in jobs {
            let failures = retries::failures(context, job);
            if failures.is_empty() {
                continue;
            }
            let starts = retries::starts(context, job);
            findings.extend(no_backoff(context, job, &starts, &failures));
            findings.extend(invalid_input_retried(context, job, &starts, &failures));
        }
        findings.extend(herds(context));
        findings
    }
}

/// The delay before each retry: `starts[i] − the last failure since starts[i − 1]`, or `None`
/// when no failure came between (a takeover, a repeat) or a stall did (a recovery).
fn retry_delays(context: &Context, job: JobKey, starts: &[EventId], failures: &[EventId]) -> Vec<Option<EventId>> {
    let timeline = context.timeline;
    let mut delays = vec![None];
    for pair in starts.windows(2) {
        let (from, to) = (timeline.get(pair[0]).at(), timeline.get(pair[1]).at());
        let failure =
            failures.iter().copied().rfind(|&id| from <= timeline.get(id).at() && timeline.get(id).at() <= to);
        let recovered = retries::stalled_between(context, job, from, to);
        delays.push(failure.filter(|_| !recovered));
    }
    delays
}

fn seconds_list(values: &[f64]) -> String {
    values.iter().map(|&s| format_duration(s)).collect::<Vec<_>>().join(", ")
}

/// Whether the job's own options declare a backoff (its job hash's `opts`, read as the job-added
/// detail `backoff=<type>:<delay>ms`): its retries are delayed by design.
fn declares_backoff(context: &Context, job: JobKey) -> bool {
    context.events_of_job(job).iter().any(|&id| {
        let event = context.timeline.get(id);
        event.kind == EventKind::JobAdded
            && event
                .detail_str()
                .and_then(crate::ingest::bullmq::jobs::declared_backoff)
                .is_some_and(|(_, delay)| delay > 0)
    })
}

fn no_backoff(context: &Context, job: JobKey, starts: &[EventId], failures: &[EventId]) -> Option<Finding> {
    let timeline = context.timeline;
    if starts.len() < STORM_MIN_ATTEMPTS || declares_backoff(context, job) {
        return None;
    }
    let after = retry_delays(context, job, starts, failures);
    // A delay that BullMQ spent in its delayed set (a `delayed` record between the failure and
    // the retry: the job's backoff), or across a process restart (no worker may have been there
    // to take the job), says nothing of a retry without backoff.
    let judged = |failure: EventId, start: EventId| {
        let (from, to) = (timeline.get(failure).moment(), timeline.get(start).moment());
        let between = |id: EventId| from <= timeline.get(id).moment() && timeline.get(id).moment() <= to;
        let delayed =
            context.events_of_job(job).iter().any(|&id| timeline.kind(id) == EventKind::JobDelayed && between(id));
        let restarted = context.restarts.iter().any(|&id| between(id));
        !delayed && !restarted
    };
    let delay = |i: usize| {
        after[i]
            .filter(|&failure| judged(failure, starts[i]))
            .map(|failure| seconds_between(timeline.get(failure).at(), timeline.get(starts[i]).at()))
            .filter(|&d| d < STORM_MAX_DELAY_S)
    };
    // The longest stretch of attempts each retried quickly after a failure, with no delay growing
    // into backoff; a growing delay may start a new stretch.
    let mut best: Option<(usize, usize)> = None;
    let mut stretch: Option<usize> = None;
    for index in 1..starts.len() {
        let Some(d) = delay(index) else {
            stretch = None;
            continue;
        };
        let grows = |p: f64| d >= BACKOFF_GROWTH * p && d > p;
        match stretch {
            Some(_) if delay(index - 1).is_some_and(grows) => stretch = Some(index),
            Some(_) => {}
            None => stretch = Some(index),
        }
        let begin = stretch.expect("set above") - 1;
        if best.is_none_or(|(b, e)| index - begin > e - b) {
            best = Some((begin, index));
        }
    }
    let (begin, end) = best?;
    if end - begin + 1 < STORM_MIN_ATTEMPTS {
        return None;
    }
    let delays: Vec<f64> = (begin + 1..=end)
        .map(|i| {
            seconds_between(timeline.get(after[i].expect("a stretch has failures")).at(), timeline.get(starts[i]).at())
        })
        .collect();
    let first_at = timeline.get(starts[begin]).at();
    let last_at = timeline.get(starts[end]).at();
    let mut reasons: Vec<String> = Vec::new();
    for reason in (begin + 1..=end).filter_map(|i| after[i]).map(|id| retries::reason(timeline.get(id))) {
        if !reasons.contains(&reason) {
            reasons.push(reason);
        }
    }
    let mut finding = Finding::new("retry-storm", Severity::Warning, first_at);
    finding.metric("pattern", Value::Text("no-backoff".into()));
    finding.metric("job_id", Value::Text(job.to_string()));
    finding.metric("attempts", Value::Count((end - begin + 1) as u64));
    finding.metric("retry_delays", Value::Text(seconds_list(&delays)));
    finding.metric("max_delay_s", Value::Seconds(delays.iter().copied().fold(0.0, f64::max)));
    finding.metric("first_attempt_at", Value::Time(first_at));
    finding.metric("last_attempt_at", Value::Time(last_at));
    finding.metric("causes", Value::Text(reasons.join("; ")));
    finding.derive("retry_delays", "each attempt's start − the failure before it");
    finding.evidence.extend(&starts[begin..=end]);
    finding.evidence.extend((begin + 1..=end).filter_map(|i| after[i]));
    finding.evidence.sort_unstable();
    finding.note(format!(
        "no-backoff: at least {STORM_MIN_ATTEMPTS} attempts in a row, each after a failure, every delay under {STORM_MAX_DELAY_S} s and none at least {BACKOFF_GROWTH} × the one before"
    ));
    finding.summary = format!(
        "Job {{job_id}} was retried without backoff: {{attempts}} attempts from {{first_attempt_at}} to {{last_attempt_at}}, with retry delays (failure to next attempt) of {{retry_delays}}, never growing and all under {STORM_MAX_DELAY_S} s; causes: {{causes}}."
    );
    Some(finding)
}

fn invalid_input_retried(context: &Context, job: JobKey, starts: &[EventId], failures: &[EventId]) -> Option<Finding> {
    let timeline = context.timeline;
    let invalid = failures
        .iter()
        .copied()
        .find(|&id| retries::classify(&retries::reason(timeline.get(id))) == CauseClass::InvalidInput)?;
    let failed_at = timeline.get(invalid).at();
    let retried: Vec<EventId> = starts.iter().copied().filter(|&id| timeline.get(id).at() > failed_at).collect();
    let first_retry = *retried.first()?;
    let mut finding = Finding::new("retry-storm", Severity::Warning, timeline.get(first_retry).at());
    finding.metric("pattern", Value::Text("invalid-input-retried".into()));
    finding.metric("job_id", Value::Text(job.to_string()));
    finding.metric("cause", Value::Text(retries::reason(timeline.get(invalid))));
    finding.metric("failed_at", Value::Time(failed_at));
    finding.metric("retried_at", Value::Time(timeline.get(first_retry).at()));
    finding.metric("retries_after_invalid", Value::Count(retried.len() as u64));
    let later_invalid = failures
        .iter()
        .filter(|&&id| {
            timeline.get(id).at() > failed_at
                && retries::classify(&retries::reason(timeline.get(id))) == CauseClass::InvalidInput
        })
        .count();
    finding.metric("invalid_failures_after", Value::Count(later_invalid as u64));
    finding.evidence.push(invalid);
    finding.evidence.extend(&retried);
    finding.evidence.sort_unstable();
    finding.note("invalid input: the reason names invalid input, validation, a schema, a bad request or HTTP 400/422 (see retry-exhausted for the classes)");
    finding.summary = "Job {job_id} failed on invalid input at {failed_at} (\"{cause}\") and was retried {retries_after_invalid} time(s), first at {retried_at}, failing the same way {invalid_failures_after} more time(s): input that is wrong will not become right; quarantine it at once.".to_string();
    Some(finding)
}

/// A retry start with the worker that made it.
struct Retry {
    id: EventId,
    at: DateTime<Utc>,
    worker: Text,
    job: JobKey,
}

/// Retry claims and activations, by channel: for a lease job every claim after its first (taken
/// or refused), else every attempt after the first that no stall preceded (its activations merged
/// from every channel that recorded them: a pod's log and a shared log both write each one), with
/// the process that made it.
fn retry_starts(context: &Context) -> BTreeMap<Channel, Vec<Retry>> {
    let timeline = context.timeline;
    let mut by_channel: BTreeMap<Channel, Vec<Retry>> = BTreeMap::new();
    // Only a lease job (its claims) or a job with a second activation can have retried.
    for (job, ids) in context.job_events.iter_reactivated_or_having(&[EventKind::LeaseClaimed]) {
        if retries::is_lease_job(context, job) {
            for id in ids.iter().copied().filter(|&id| timeline.kind(id) == EventKind::LeaseClaimed).skip(1) {
                let event = timeline.get(id);
                if let Some(worker) = event.worker {
                    by_channel.entry(event.origin().channel).or_default().push(Retry {
                        id,
                        at: event.at(),
                        worker,
                        job,
                    });
                }
            }
            continue;
        }
        let failures = retries::failures(context, job);
        for pair in context.attempts_of_job(job).windows(2) {
            let (from, to) = (timeline.get(pair[0].activated).at(), timeline.get(pair[1].activated).at());
            if retries::stalled_between(context, job, from, to) {
                continue;
            }
            // BullMQ retries only an attempt that failed: a second activation with no failure of
            // the job between is a stall recovery no record names (stalled-rerun finds it by
            // timing), and a dead process's jobs all come back at one stalled check, which is no
            // herd of retries.
            let failed_between = failures.iter().any(|&id| (from..=to).contains(&timeline.get(id).at()));
            if !failed_between {
                continue;
            }
            let event = timeline.get(pair[1].activated);
            if let Some(worker) = context.process_of(event) {
                // One clock for a herd: the attempts' best records, whatever channel gave each.
                by_channel.entry(Channel::EventsStream).or_default().push(Retry {
                    id: pair[1].activated,
                    at: event.at(),
                    worker,
                    job,
                });
            }
        }
    }
    for retries in by_channel.values_mut() {
        retries.sort_by_key(|r| (r.at, r.id));
    }
    by_channel
}

fn herds(context: &Context) -> Vec<Finding> {
    let mut findings = Vec::new();
    for retries in retry_starts(context).values() {
        let mut index = 0;
        while index < retries.len() {
            let first = &retries[index];
            let group: Vec<&Retry> = retries[index..]
                .iter()
                .take_while(|r| (r.at - first.at).num_milliseconds() <= HERD_WINDOW_MS)
                .collect();
            let mut workers: Vec<&str> = Vec::new();
            for retry in &group {
                if !workers.contains(&retry.worker.as_str()) {
                    workers.push(&retry.worker);
                }
            }
            if workers.len() < HERD_MIN_WORKERS {
                index += 1;
                continue;
            }
            let mut jobs: Vec<&str> = Vec::new();
            for retry in &group {
                if !jobs.contains(&retry.job.as_str()) {
                    jobs.push(retry.job.as_str());
                }
            }
            let last = group[group.len() - 1];
            let mut finding = Finding::new("retry-storm", Severity::Warning, first.at);
            finding.metric("pattern", Value::Text("herd".into()));
            finding.metric("retrying_workers", Value::Count(workers.len() as u64));
            finding.metric("retries", Value::Count(group.len() as u64));
            finding.metric("worker_names", Value::Text(workers.join(", ")));
            finding.metric("jobs", Value::Text(jobs.join(", ")));
            finding.metric("first_at", Value::Time(first.at));
            finding.metric("last_at", Value::Time(last.at));
            finding.metric("spread_s", Value::Seconds(seconds_between(first.at, last.at)));
            finding.derive("spread_s", "last_at − first_at");
            finding.evidence.extend(group.iter().map(|r| r.id));
            finding.note(format!(
                "herd: retry claims, or retry attempts (each once, however many channels recorded it), by at least {HERD_MIN_WORKERS} different workers within {HERD_WINDOW_MS} ms"
            ));
            finding.summary = "{retrying_workers} workers retried within {spread_s} of each other from {first_at} ({retries} retries of {jobs} by {worker_names}): retries without jitter land on the recovering service all at once.".to_string();
            findings.push(finding);
            index += group.len();
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::Settings;
    use crate::model::{Event, LockParams, Origin, Timeline};

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    fn row(when: &str, kind: EventKind, job: &str, worker: &str, detail: Option<&str>) -> Event {
        let origin = Origin { channel: Channel::Ledger, source: 0, line: 0 };
        let mut event = Event::new(at(when).into(), kind, origin);
        event.edit().job_id = Some(crate::model::Text::from(job));
        event.edit().worker = Some(crate::model::Text::from(worker));
        event.set_detail(detail.map(crate::model::Text::from));
        if kind == EventKind::LeaseClaimed {
            event.lease_mut().accepted = Some(true);
        }
        event
    }

    fn detect(mut events: Vec<Event>) -> Vec<Finding> {
        for (n, event) in events.iter_mut().enumerate() {
            event.set_origin(Origin { line: u32::try_from(n).unwrap() + 2, ..event.origin() });
        }
        let timeline = Timeline::new(events);
        let params = LockParams::default();
        let settings = Settings::default();
        RetryStorm.detect(&Context::new(&timeline, &params, &settings))
    }

    fn text(f: &Finding, name: &str) -> String {
        match f.get(name) {
            Some(Value::Text(t)) => t.clone(),
            other => panic!("{name}: {other:?}"),
        }
    }

    /// Attempts at `starts` milliseconds, each failing one second later with `cause`.
    fn attempts(starts: &[i64], cause: &str) -> Vec<Event> {
        let mut events = Vec::new();
        for (n, &s) in starts.iter().enumerate() {
            let start = at("2026-12-01T00:00:00Z") + chrono::Duration::milliseconds(s);
            let worker = format!("w-{}", n % 2);
            let mut claim = row("2026-12-01T00:00:00Z", EventKind::LeaseClaimed, "job-3", &worker, None);
            claim.set_at(start.into());
            let mut failed = row("2026-12-01T00:00:00Z", EventKind::RoundFailed, "job-3", &worker, Some(cause));
            failed.set_at((start + chrono::Duration::seconds(1)).into());
            events.extend([claim, failed]);
        }
        events
    }

    #[test]
    fn constant_short_delays_are_no_backoff() {
        // Failures at +1 s; retries 2 s after each.
        let found = detect(attempts(&[0, 3000, 6000, 9000], "ECONNRESET"));
        assert_eq!(found.len(), 1);
        let f = &found[0];
        assert_eq!(text(f, "pattern"), "no-backoff");
        assert_eq!(f.get("attempts"), Some(&Value::Count(4)));
        assert_eq!(text(f, "retry_delays"), "2 s, 2 s, 2 s");
        assert_eq!(f.get("max_delay_s"), Some(&Value::Seconds(2.0)));
    }

    #[test]
    fn growing_delays_are_backoff_and_long_ones_are_not_a_storm() {
        // Delays 2 s, 3 s (1.5 ×), 4.5 s (1.5 ×): backoff at the boundary.
        assert!(detect(attempts(&[0, 3000, 7000, 12_500], "ECONNRESET")).is_empty());
        // Constant delays of exactly 10 s are not under the threshold.
        assert!(detect(attempts(&[0, 11_000, 22_000], "ECONNRESET")).is_empty());
        // Two attempts are not a storm.
        assert!(detect(attempts(&[0, 3000], "ECONNRESET")).is_empty());
    }

    #[test]
    fn invalid_input_retried_is_flagged_once() {
        let found = detect(attempts(&[0, 30_000], "422 Unprocessable Entity: schema validation failed"));
        assert_eq!(found.len(), 1);
        assert_eq!(text(&found[0], "pattern"), "invalid-input-retried");
        assert_eq!(found[0].get("retries_after_invalid"), Some(&Value::Count(1)));
        assert_eq!(found[0].get("invalid_failures_after"), Some(&Value::Count(1)));
        assert!(detect(attempts(&[0, 30_000], "timeout after 400 ms")).is_empty());
    }

    #[test]
    fn three_workers_retrying_within_100_ms_are_a_herd() {
        let herd = |offsets: [i64; 3]| {
            let mut events = Vec::new();
            for (n, offset) in offsets.iter().enumerate() {
                let job = format!("job-{n}");
                let worker = format!("w-{n}");
                events.push(row("2026-12-01T00:00:00Z", EventKind::LeaseClaimed, &job, &worker, None));
                let mut retry = row("2026-12-01T00:00:05Z", EventKind::LeaseClaimed, &job, &worker, None);
                retry.set_at((retry.at() + chrono::Duration::milliseconds(*offset)).into());
                events.push(retry);
            }
            detect(events)
        };
        let found = herd([0, 40, 100]);
        assert_eq!(found.len(), 1);
        assert_eq!(text(&found[0], "pattern"), "herd");
        assert_eq!(found[0].get("retrying_workers"), Some(&Value::Count(3)));
        assert_eq!(found[0].get("spread_s"), Some(&Value::Seconds(0.1)));
        assert!(herd([0, 40, 101]).is_empty());
    }

    #[test]
    fn activations_of_a_dead_process_jobs_at_one_check_are_no_herd_unless_each_failed() {
        // Three jobs of one dead process, taken again by three workers 4 ms apart at the stalled
        // check that moved them, with no stall record (no stream, no listener): seen in a fleet
        // run (seed 7), found as a herd before.
        let log = |when: &str, job: &str, worker: &str, kind: EventKind, detail: Option<&str>| {
            let origin = Origin { channel: Channel::Log, source: 2, line: 0 };
            let mut event = Event::new(at(when).into(), kind, origin);
            event.edit().job_id = Some(job.into());
            event.edit().worker = Some(worker.into());
            event.set_detail(detail.map(Into::into));
            event
        };
        let herd = |failed: bool| {
            let mut events = Vec::new();
            for (n, job) in ["gh-1015", "gh-1014", "sweep-1"].iter().enumerate() {
                events.push(log("2026-12-01T00:00:00Z", job, "dead", EventKind::JobActive, None));
                if failed {
                    events.push(log(
                        "2026-12-01T00:00:01Z",
                        job,
                        "dead",
                        EventKind::JobFailed,
                        Some("502 Bad Gateway"),
                    ));
                }
                let again = format!("2026-12-01T00:00:05.00{n}Z");
                events.push(log(&again, job, &format!("w-{n}"), EventKind::JobActive, None));
            }
            detect(events)
        };
        assert!(herd(false).is_empty(), "{:?}", herd(false));
        let found = herd(true);
        assert_eq!(found.iter().filter(|f| text(f, "pattern") == "herd").count(), 1, "{found:?}");
    }

    #[test]
    fn a_reactivation_after_a_stall_is_not_a_retry() {
        let stream = |when: &str, kind: EventKind| {
            let origin = Origin { channel: Channel::EventsStream, source: 1, line: 0 };
            let mut event = Event::new(at(when).into(), kind, origin);
            event.edit().job_id = Some("1".into());
            event
        };
        let mut events = Vec::new();
        for (n, second) in ["00", "04", "08"].iter().enumerate() {
            if n > 0 {
                events.push(stream(&format!("2026-12-01T00:00:{second}Z"), EventKind::JobStalled));
            }
            events.push(stream(&format!("2026-12-01T00:00:{second}.001Z"), EventKind::JobActive));
            events.push(row(&format!("2026-12-01T00:00:{second}.500Z"), EventKind::RoundFailed, "1", "w", Some("x")));
        }
        assert!(detect(events).is_empty());
    }
}
