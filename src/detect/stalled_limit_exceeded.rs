//! `stalled-limit-exceeded`: BullMQ failed a job because it stalled more than `maxStalledCount`
//! times.
//!
//! The failure is BullMQ's, not the application's: from v5.53.2 the stalled check only marks the
//! job (`defa`) and the next worker that takes it fails it before calling the processor, so the
//! consumer's own logging never runs for that attempt. Unless a `failed` listener logs it, the only
//! trace is in BullMQ's events stream or job hash.

use std::collections::BTreeMap;

use crate::model::timeline::EventId;
use crate::model::{Channel, EventKind, Finding, JobKey, LockParams, Severity, Value};
use crate::time::seconds_between;

use super::{Context, Detector};

/// The reason BullMQ writes (moveStalledJobsToWait Lua script, every version).
pub const STALLED_LIMIT_REASON: &str = "job stalled more than allowable limit";

pub struct StalledLimitExceeded;

/// The first version whose stalled check only marks a job over the limit (`defa`).
pub const DEFERRED_FAILURE_SINCE: (u32, u32, u32) = (5, 53, 2);
/// The first version that exempts repeatable jobs from the stall limit.
const REPEATABLE_EXEMPT_SINCE: (u32, u32, u32) = (5, 58, 8);

/// How the BullMQ version in use fails a job over the stall limit; `None` when no version (or
/// no range's lower bound) decides it and the newer model is assumed.
pub fn failure_model(params: &LockParams) -> (String, Option<bool>) {
    if params.bull_version.is_some() {
        return (crate::model::bull::stall_limit_model().to_string(), Some(false));
    }
    let floor = params.version.is_none().then_some(params.version_at_least.as_deref()).flatten();
    // The PostgreSQL backend's floor is its own (`LockParams::on_backend`), not a range's.
    let said_by = if params.backend == crate::model::params::QueueBackend::Postgres
        && floor == Some(crate::model::params::POSTGRES_BACKEND_SINCE)
    {
        "the PostgreSQL backend's tables say"
    } else {
        "a dependency range says"
    };
    let from_range = |text: &str| match floor {
        Some(floor) => format!("{text} ({said_by} at least {floor})"),
        None => text.to_string(),
    };
    match params.version_from(DEFERRED_FAILURE_SINCE) {
        Some(false) => (
            "BullMQ ≤ 5.53.1: the stalled check itself failed the job (no new activation before the failure)".into(),
            Some(false),
        ),
        Some(true) => (
            from_range("BullMQ ≥ 5.53.2: the stalled check marked the job (defa) and moved it to wait; the next worker took it and failed it before calling the processor"),
            Some(true),
        ),
        None => (
            match floor {
                Some(floor) => format!("BullMQ version not known (a dependency range says at least {floor}, which may be before 5.53.2): assumed ≥ 5.53.2 (the check marks the job, the next worker fails it without calling the processor); give the exact version (--bullmq-version) to be sure"),
                None => "BullMQ version not given: assumed ≥ 5.53.2 (the check marks the job, the next worker fails it without calling the processor); give version in the lock parameters file to be sure".into(),
            },
            None,
        ),
    }
}

fn repeatable_exempt(params: &LockParams) -> bool {
    params.version_from(REPEATABLE_EXEMPT_SINCE) == Some(true)
}

impl Detector for StalledLimitExceeded {
    fn code(&self) -> &'static str {
        "stalled-limit-exceeded"
    }

    fn doc(&self) -> &'static str {
        include_str!("../../docs/findings/stalled-limit-exceeded.md")
    }

    /// The stalls it counted: the job's reruns up to the failure.
    fn follows_from(&self, finding: &Finding, found: &super::links::Found) -> Vec<usize> {
        found.of_job_before(super::links::RERUNS, finding, finding.at)
    }

    fn detect(&self, context: &Context) -> Vec<Finding> {
        let timeline = context.timeline;
        // Every channel that recorded the failure is evidence; one finding per job.
        let mut by_job: BTreeMap<JobKey, Vec<EventId>> = BTreeMap::new();
        for (id, event) in timeline.ids() {
            let over_limit = event.kind == EventKind::JobFailed
                && event.detail_str().is_some_and(|d| d.to_ascii_lowercase().contains(STALLED_LIMIT_REASON));
            if let (true, Some(job)) = (over_limit, context.job_of(event)) {
                by_job.entry(job).or_default().push(id);
            }
        }
        by_job.into_iter().map(|(job, failures)| finding(context, job, &failures)).collect()
    }
}

fn finding(context: &Context, job: JobKey, failures: &[EventId]) -> Finding {
    let timeline = context.timeline;
    let params = context.params_of(job);
    // BullMQ's own record (stream, then hash) gives the failure time; a log line comes later.
    let own_record_first = |channel: Channel| match channel {
        Channel::EventsStream => 0,
        Channel::JobHash => 1,
        Channel::Log => 2,
        Channel::Ledger => 3,
    };
    let primary = *failures
        .iter()
        .min_by_key(|&&id| {
            let event = timeline.get(id);
            (own_record_first(event.origin().channel), event.at())
        })
        .expect("a finding has at least one failure");
    let failed = timeline.get(primary);
    let job_events = context.events_of_job(job);
    // The job's stalls before the failure, as `stalled-rerun` and `unlogged-stall` know them: by
    // BullMQ's `stalled` entry or by timing (a recovery), each once with its records.
    let known: Vec<&super::stalls::Stall> =
        context.stalls().of_job(job).filter(|stall| stall.at(timeline) <= failed.at()).collect();
    let stalls_counted = known.len();
    let stalls: Vec<EventId> =
        known.iter().flat_map(|stall| stall.entry.into_iter().chain(stall.lines.iter().copied())).collect();
    // The last activation before the failure, from the most authoritative channel that saw one.
    let activations: Vec<EventId> = job_events
        .iter()
        .copied()
        .filter(|&id| {
            let event = timeline.get(id);
            event.kind == EventKind::JobActive
                && event.moment() <= failed.moment()
                && event.origin().channel != Channel::JobHash
        })
        .collect();
    let best_rank = activations.iter().map(|&id| timeline.get(id).origin().channel.activation_rank()).min();
    let last_activation = activations
        .into_iter()
        .filter(|&id| Some(timeline.get(id).origin().channel.activation_rank()) == best_rank)
        .max_by_key(|&id| timeline.get(id).at());
    let logged = failures.iter().any(|&id| timeline.get(id).origin().channel == Channel::Log);

    let mut finding = Finding::new("stalled-limit-exceeded", Severity::Error, failed.at());
    finding.metric("job_id", Value::Text(job.to_string()));
    // The stream's `failed` entry carries no name: any record of the job may.
    let known = |pick: fn(&crate::model::Event) -> Option<crate::model::Text>| {
        pick(failed).or_else(|| job_events.iter().find_map(|&id| pick(timeline.get(id))))
    };
    if let Some(name) = known(|e| e.job_name) {
        finding.metric("job_name", Value::Text(name.to_string()));
    }
    if let Some(queue) = known(|e| e.queue) {
        finding.metric("queue", Value::Text(queue.to_string()));
    }
    finding.metric("failed_at", Value::Time(failed.at()));
    // A log line or a job hash's stamp stands for a moment near it (`clocks`).
    let when = context.failure_when(job, primary);
    if !when.is_exact() {
        finding.metric("failed_earliest_at", Value::Time(when.earliest.utc()));
        finding.metric("failed_latest_at", Value::Time(when.latest.utc()));
        finding.note(format!(
            "failed_at is the {}'s record of the failure (BullMQ's stream does not have it): that source's records of what the stream also recorded came earlier or later than the stream's, so BullMQ failed the job between failed_earliest_at and failed_latest_at",
            failed.origin().channel.describe()
        ));
    }
    finding.metric("reason", Value::Text(failed.detail().map(|d| d.to_string()).unwrap_or_default()));
    finding.metric("stalls_seen", Value::Count(stalls_counted as u64));
    finding.metric("max_stalled_count", Value::Count(params.max_stalled_count));
    if let Some(id) = last_activation {
        let at = timeline.get(id).at();
        finding.metric("last_activated_at", Value::Time(at));
        finding.metric("activation_to_failure_s", Value::Seconds(seconds_between(at, failed.at())));
        finding.derive("activation_to_failure_s", "failed_at − last_activated_at");
        finding.evidence.push(id);
    }
    finding.metric("logged", Value::Flag(logged));
    finding.evidence.extend(failures);
    finding.evidence.extend(&stalls);
    finding.evidence.sort_unstable();
    finding.evidence.dedup();

    let (model, lazy) = failure_model(params);
    finding.note(model);
    if lazy == Some(true) && last_activation.is_none() {
        finding.note(format!(
            "no activation right before the failure was seen: the {} may be trimmed, or the version is older than declared",
            params.backend.events_record()
        ));
    }
    if job.as_str().starts_with("repeat:") && repeatable_exempt(params) {
        finding.note("repeatable jobs are exempt from the stall limit from BullMQ 5.58.8: this failure does not fit the declared version");
    }
    if stalls_counted == 0 {
        finding.note(format!(
            "no stalled event of this job was seen: the {} does not reach back that far, or no listener logged the stalls",
            params.backend.events_record()
        ));
    }
    let library = if params.bull_version.is_some() { "Bull" } else { "BullMQ" };
    let logged_text = if logged {
        "a log line recorded the failure".to_string()
    } else {
        format!(
            "no log line recorded it: only {library}'s own records show this job was lost (a failed listener is missing)"
        )
    };
    finding.summary = if lazy == Some(false) {
        // The check that failed it found one stall more than those recorded as reruns.
        format!(
            "{library}'s stalled check failed job {{job_id}} at {{failed_at}} with \"{STALLED_LIMIT_REASON}\" after {{stalls_seen}} recorded stall(s) (maxStalledCount {{max_stalled_count}}): its last run lost its lock too and was not run again; {logged_text}."
        )
    } else {
        format!(
            "{library} failed job {{job_id}} at {{failed_at}} with \"{STALLED_LIMIT_REASON}\" after {{stalls_seen}} recorded stall(s) (maxStalledCount {{max_stalled_count}}): the processor did not run that attempt; {logged_text}."
        )
    };
    finding
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::Settings;
    use crate::model::{Event, Origin, Timeline};
    use chrono::{DateTime, Utc};

    #[test]
    fn a_range_floor_decides_the_failure_model_only_from_5_53_2() {
        let floor = |v: &str| LockParams { version_at_least: Some(v.into()), ..LockParams::default() };
        let (text, lazy) = failure_model(&floor("5.58.0"));
        assert_eq!(lazy, Some(true));
        assert!(text.contains("BullMQ ≥ 5.53.2") && text.contains("a dependency range says at least 5.58.0"), "{text}");
        let (text, lazy) = failure_model(&floor("5.40.0"));
        assert_eq!(lazy, None);
        assert!(text.contains("at least 5.40.0, which may be before 5.53.2): assumed ≥ 5.53.2"), "{text}");
        assert_eq!(failure_model(&LockParams::default()).1, None);
        // Repeatable jobs: exempt only when every version allowed is 5.58.8 or later.
        assert!(repeatable_exempt(&floor("5.60.0")));
        assert!(!repeatable_exempt(&floor("5.58.0")));
    }

    fn event(channel: Channel, line: u32, when: &str, kind: EventKind, detail: Option<&str>) -> Event {
        let origin = Origin { channel, source: 0, line };
        let mut event =
            Event::new(DateTime::parse_from_rfc3339(when).unwrap().with_timezone(&Utc).into(), kind, origin);
        event.edit().job_id = Some("42".into());
        event.set_detail(detail.map(crate::model::Text::from));
        event
    }

    fn detect(events: Vec<Event>, version: Option<&str>) -> Vec<Finding> {
        let timeline = Timeline::new(events);
        let params = LockParams { version: version.map(str::to_string), ..LockParams::default() };
        let settings = Settings::default();
        StalledLimitExceeded.detect(&Context::new(&timeline, &params, &settings))
    }

    fn over_limit() -> Vec<Event> {
        vec![
            event(Channel::EventsStream, 1, "2026-10-07T00:00:00Z", EventKind::JobActive, None),
            event(Channel::EventsStream, 2, "2026-10-07T00:00:35Z", EventKind::JobStalled, None),
            event(Channel::EventsStream, 3, "2026-10-07T00:00:35.010Z", EventKind::JobActive, None),
            event(Channel::EventsStream, 4, "2026-10-07T00:01:10Z", EventKind::JobStalled, None),
            event(Channel::EventsStream, 5, "2026-10-07T00:01:10.020Z", EventKind::JobActive, None),
            event(
                Channel::EventsStream,
                6,
                "2026-10-07T00:01:10.031Z",
                EventKind::JobFailed,
                Some(STALLED_LIMIT_REASON),
            ),
            event(Channel::JobHash, 1, "2026-10-07T00:01:10.031Z", EventKind::JobFailed, Some(STALLED_LIMIT_REASON)),
        ]
    }

    #[test]
    fn a_job_failed_for_stalling_is_one_error_with_its_stalls() {
        let findings = detect(over_limit(), Some("5.81.5"));
        assert_eq!(findings.len(), 1);
        let f = &findings[0];
        assert_eq!(f.severity, Severity::Error);
        assert_eq!(f.get("stalls_seen"), Some(&Value::Count(2)));
        assert_eq!(f.get("logged"), Some(&Value::Flag(false)));
        assert_eq!(f.get("activation_to_failure_s"), Some(&Value::Seconds(0.011)));
        assert!(f.notes.iter().any(|n| n.contains("≥ 5.53.2")));
    }

    #[test]
    fn a_logged_failure_is_marked_logged() {
        let mut events = over_limit();
        events.push(event(
            Channel::Log,
            9,
            "2026-10-07T00:01:10.200Z",
            EventKind::JobFailed,
            Some("Job stalled more than allowable limit"),
        ));
        let findings = detect(events, None);
        assert_eq!(findings[0].get("logged"), Some(&Value::Flag(true)));
        assert!(findings[0].notes.iter().any(|n| n.contains("version not given")));
    }

    #[test]
    fn bulls_stalled_check_fails_the_job_itself_and_the_last_run_ran() {
        // bull 4.16.5, as the e2e saw it: two runs, each lost its lock; the second stall failed it
        // inside the check, with no activation after.
        let events = vec![
            event(Channel::Log, 1, "2026-12-06T09:23:34.254Z", EventKind::JobActive, None),
            event(Channel::Log, 4, "2026-12-06T09:23:36.847Z", EventKind::JobActive, None),
            event(Channel::Log, 7, "2026-12-06T09:23:36.856Z", EventKind::JobStalled, None),
            event(Channel::JobHash, 40, "2026-12-06T09:23:39.716Z", EventKind::JobFailed, Some(STALLED_LIMIT_REASON)),
        ];
        let timeline = Timeline::new(events);
        let params = LockParams { bull_version: Some("4.16.5".into()), ..LockParams::default() };
        let settings = Settings::default();
        let findings = StalledLimitExceeded.detect(&Context::new(&timeline, &params, &settings));
        assert_eq!(findings.len(), 1);
        let f = &findings[0];
        assert!(f.summary.starts_with("Bull's stalled check failed job"), "{}", f.summary);
        assert!(!f.summary.contains("the processor did not run"), "{}", f.summary);
        assert!(f.notes.iter().any(|n| n.contains("moveStalledJobsToWait")), "{:?}", f.notes);
        assert_eq!(f.get("activation_to_failure_s"), Some(&Value::Seconds(2.869)));
    }

    #[test]
    fn other_failures_are_not_this_finding() {
        let events =
            vec![event(Channel::EventsStream, 1, "2026-10-07T00:00:00Z", EventKind::JobFailed, Some("ECONNRESET"))];
        assert!(detect(events, None).is_empty());
    }
}
