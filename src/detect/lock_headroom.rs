//! `lock-headroom`: how long jobs actually ran, against `lockDuration`.
//!
//! The question a postmortem asks after a stalled rerun is "was the lock too short?". BullMQ
//! renews locks while the processor runs, so a long job alone never loses its lock; only a job
//! that keeps the event loop from renewing for longer than `lockDuration − lockRenewTime/2` (the
//! most a lock can have left when a renewal is missed) would. The observed durations bound that
//! risk: if even the longest run, blocking from start to end, stays under that limit, the lock
//! length did not cause the rerun.

use crate::model::timeline::EventId;
use crate::model::{Channel, EventKind, Finding, JobKey, Severity, Text, Value};

use super::{Context, Detector};

pub struct LockHeadroom;

/// Reported without a stall in the group when the longest run reaches this share of the lock.
pub const REPORT_RATIO: f64 = 0.5;

/// One observed run of a job: activation to its completion or failure.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub job: JobKey,
    pub group: Text,
    pub started: EventId,
    pub ended: EventId,
    pub seconds: f64,
}

/// Every run whose end was seen, from the job's activations (see `rounds::attempts`) to the first
/// completion, failure or finished round of the same job before its next activation.
pub fn runs(context: &Context) -> Vec<Run> {
    let mut out = Vec::new();
    each_run(context, |run| out.push(run));
    out
}

/// `runs`, one at a time, without a list of them.
fn each_run(context: &Context, mut found: impl FnMut(Run)) {
    let timeline = context.timeline;
    let unnamed = Text::from("(unnamed)");
    // Jobs in the order their events are laid out (`JobEvents`): the walk reads those lists from
    // start to end, and finds each job's attempts through its group, without a lookup by id.
    for (job, events, attempts) in context.job_events.iter_attempted(&context.attempts) {
        let group = events
            .iter()
            .find_map(|&id| timeline.get(id).job_name)
            .or_else(|| events.iter().find_map(|&id| timeline.get(id).queue))
            .unwrap_or(unnamed);
        for (index, attempt) in attempts.iter().enumerate() {
            let start = timeline.get(attempt.activated).moment();
            let next = attempts.get(index + 1).map(|a| timeline.get(a.activated).moment());
            // The end as seen by the channel that saw the start, so both ends share one clock;
            // else the first end any channel saw.
            let channel = timeline.get(attempt.activated).origin().channel;
            let mut first_end = None;
            let mut end = None;
            for &id in events {
                if !matches!(
                    timeline.kind(id),
                    EventKind::JobCompleted | EventKind::JobFailed | EventKind::RoundFinished
                ) {
                    continue;
                }
                let e = timeline.get(id);
                if e.origin().channel == Channel::JobHash || e.moment() <= start || next.is_some_and(|n| e.moment() > n)
                {
                    continue;
                }
                first_end.get_or_insert(id);
                if e.origin().channel == channel {
                    end = Some(id);
                    break;
                }
            }
            let end = end.or(first_end);
            if let Some(end) = end {
                found(Run {
                    job,
                    group,
                    started: attempt.activated,
                    ended: end,
                    seconds: start.seconds_to(timeline.get(end).moment()),
                });
            }
        }
    }
}

/// What a group's runs come to: their durations, the longest run, and whether a job of the group
/// was recovered from a stall.
struct GroupRuns {
    seconds: Vec<f64>,
    longest: Run,
    stalled_here: bool,
    /// A job of the group whose live worker lost its lock: BullMQ refused its completion or its
    /// renewal (`lost_lock`).
    lost_here: Option<EventId>,
}

/// The first sign that a live worker of `job` lost its lock: BullMQ refusing the job's
/// completion or renewal (`lock-refused`, "Missing lock" / "Lock mismatch"), or the worker's
/// error that it could not renew the lock. A job whose process died also loses its lock, but that
/// says nothing of lockDuration: only these do.
fn lost_lock(context: &Context, job: JobKey) -> Option<EventId> {
    if !context.job_has(job, &[EventKind::LockRefused, EventKind::Error]) {
        return None;
    }
    context.events_of_job(job).iter().copied().find(|&id| {
        let event = context.timeline.get(id);
        event.kind == EventKind::LockRefused
            || (event.kind == EventKind::Error
                && event.detail_str().is_some_and(|detail| detail.to_ascii_lowercase().contains("renew lock")))
    })
}

/// Of equally long runs, the job last in id order, then the later one of that job.
fn longer(a: &Run, b: &Run) -> std::cmp::Ordering {
    (a.seconds.total_cmp(&b.seconds)).then_with(|| a.job.cmp(&b.job)).then(a.started.cmp(&b.started))
}

/// Nearest-rank percentile of sorted values.
pub fn percentile(sorted: &[f64], share: f64) -> f64 {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_precision_loss)]
    let rank = ((share * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

impl Detector for LockHeadroom {
    fn code(&self) -> &'static str {
        "lock-headroom"
    }

    fn doc(&self) -> &'static str {
        include_str!("../../docs/findings/lock-headroom.md")
    }

    fn detect(&self, context: &Context) -> Vec<Finding> {
        let timeline = context.timeline;
        let stalled_jobs: rustc_hash::FxHashSet<JobKey> =
            context.recoveries().into_iter().map(|(job, _, _)| job).collect();
        // Each group's figures are gathered as the runs are found: a list of every run of a big
        // ledger (150 k of 32 bytes, sorted with a scratch copy) was most of the detectors' peak
        // of memory. Groups in name order (`Text` orders by its text).
        let mut by_group: std::collections::HashMap<Text, GroupRuns, rustc_hash::FxBuildHasher> =
            std::collections::HashMap::default();
        each_run(context, |run| {
            let stalled = stalled_jobs.contains(&run.job);
            let lost = lost_lock(context, run.job);
            match by_group.get_mut(&run.group) {
                Some(group) => {
                    group.seconds.push(run.seconds);
                    group.stalled_here |= stalled;
                    group.lost_here = group.lost_here.or(lost);
                    if longer(&run, &group.longest).is_gt() {
                        group.longest = run;
                    }
                }
                None => {
                    by_group.insert(
                        run.group,
                        GroupRuns { seconds: vec![run.seconds], longest: run, stalled_here: stalled, lost_here: lost },
                    );
                }
            }
        });
        let mut groups: Vec<(Text, GroupRuns)> = by_group.into_iter().collect();
        groups.sort_by_key(|(group, _)| *group);
        #[allow(clippy::cast_precision_loss)]
        let lock_s = context.params.lock_duration as f64 / 1000.0;
        #[allow(clippy::cast_precision_loss)]
        let renew_s = context.params.lock_renew_time as f64 / 1000.0;
        let blocking_limit_s = lock_s - renew_s / 2.0;
        let mut findings = Vec::new();
        for (group, GroupRuns { mut seconds, longest, stalled_here, lost_here }) in groups {
            seconds.sort_by(f64::total_cmp);
            let max = *seconds.last().expect("groups are not empty");
            if max / lock_s < REPORT_RATIO && !stalled_here {
                continue;
            }
            let longest = &longest;
            let could_outlive = max > blocking_limit_s;
            // Loud only when the evidence shows the risk came true: a run that could outlive its
            // lock is how healthy long jobs look too (every renewal made), and a CI gate on a
            // healthy run must pass.
            let severity = if could_outlive && lost_here.is_some() { Severity::Warning } else { Severity::Info };
            let mut finding = Finding::new("lock-headroom", severity, timeline.get(longest.ended).at());
            finding.metric("job_name", Value::Text(group.to_string()));
            finding.metric("samples", Value::Count(seconds.len() as u64));
            finding.metric("median_s", Value::Seconds(percentile(&seconds, 0.5)));
            finding.metric("p95_s", Value::Seconds(percentile(&seconds, 0.95)));
            finding.metric("max_s", Value::Seconds(max));
            finding.metric("longest_job_id", Value::Text(longest.job.to_string()));
            finding.metric("lock_duration_s", Value::Seconds(lock_s));
            finding.metric("max_ratio", Value::Ratio(max / lock_s));
            finding.metric("p95_ratio", Value::Ratio(percentile(&seconds, 0.95) / lock_s));
            finding.metric("blocking_limit_s", Value::Seconds(blocking_limit_s));
            finding.metric("could_outlive_lock", Value::Flag(could_outlive));
            finding.derive("max_ratio", "max_s / lockDuration");
            finding.derive("blocking_limit_s", "lockDuration − lockRenewTime/2: the lock left after a missed renewal");
            finding.metric("lock_lost_by_live_worker", Value::Flag(lost_here.is_some()));
            finding.evidence.extend([longest.started, longest.ended]);
            finding.evidence.extend(lost_here);
            finding.note("a run is a job's activation to its completion or failure (the time its lock had to cover); runs whose end was not seen are left out");
            finding.note("BullMQ renews the lock while the processor runs: a run longer than lockDuration is safe unless it keeps the event loop from renewing for longer than blocking_limit_s");
            if stalled_here {
                finding.note(
                    "a job of this group was recovered from a stall: see stalled-rerun for how its lock was lost",
                );
            }
            let verdict = if could_outlive && lost_here.is_some() {
                "a run that blocked its event loop for as long as the longest one would have lost its lock, and a live worker of this group did lose its lock: lockDuration could have caused a rerun"
            } else if could_outlive {
                "a run that blocked its event loop for as long as the longest one would have lost its lock, but no live worker of this group lost its lock or failed a renewal: the renewals kept up"
            } else {
                "even a run that blocked its event loop from start to end would have kept its lock: lockDuration did not cause a rerun"
            };
            finding.summary = format!(
                "{{job_name}}: {{samples}} runs took median {{median_s}}, p95 {{p95_s}}, max {{max_s}} ({{max_ratio}} of lockDuration {{lock_duration_s}}); {verdict}."
            );
            findings.push(finding);
        }
        findings
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::Settings;
    use crate::model::params::ParamOverrides;
    use crate::model::{Event, LockParams, Origin, Timeline};
    use chrono::{DateTime, Utc};

    fn event(line: u32, when: &str, kind: EventKind, job: &str) -> Event {
        let origin = Origin { channel: Channel::Log, source: 0, line };
        let mut event =
            Event::new(DateTime::parse_from_rfc3339(when).unwrap().with_timezone(&Utc).into(), kind, origin);
        event.edit().job_id = Some(job.into());
        event.edit().job_name = Some("sweep".into());
        event
    }

    fn detect(events: Vec<Event>, lock_ms: u64) -> Vec<Finding> {
        let timeline = Timeline::new(events);
        let params = LockParams::resolve(
            &ParamOverrides { lock_duration: Some(lock_ms), ..ParamOverrides::default() },
            &ParamOverrides::default(),
        );
        let settings = Settings::default();
        LockHeadroom.detect(&Context::new(&timeline, &params, &settings))
    }

    fn runs_of(seconds: &[u32]) -> Vec<Event> {
        let mut events = Vec::new();
        for (i, s) in seconds.iter().enumerate() {
            let job = format!("j{i}");
            let start = format!("2026-10-07T0{i}:00:00Z");
            let end = format!("2026-10-07T0{i}:{:02}:{:02}Z", s / 60, s % 60);
            events.push(event(1, &start, EventKind::JobActive, &job));
            events.push(event(2, &end, EventKind::JobCompleted, &job));
        }
        events
    }

    #[test]
    fn the_longest_run_against_the_lock() {
        // 64% of a 1,178 s lock: reported, and the lock was long enough.
        let findings = detect(runs_of(&[200, 754, 300]), 1_178_000);
        assert_eq!(findings.len(), 1);
        let f = &findings[0];
        assert_eq!(f.get("max_s"), Some(&Value::Seconds(754.0)));
        assert_eq!(f.get("median_s"), Some(&Value::Seconds(300.0)));
        assert_eq!(f.get("samples"), Some(&Value::Count(3)));
        assert_eq!(f.get("blocking_limit_s"), Some(&Value::Seconds(883.5)));
        assert_eq!(f.get("could_outlive_lock"), Some(&Value::Flag(false)));
        assert_eq!(f.severity, Severity::Info);
        assert!(matches!(f.get("max_ratio"), Some(Value::Ratio(r)) if (r - 0.64).abs() < 0.001));
    }

    #[test]
    fn of_equally_long_runs_the_last_job_in_id_order_is_cited() {
        // j0, j1 and j2 all ran 754 s: the longest is j2's whatever order the jobs are walked in.
        for seconds in [[754, 754, 754], [300, 754, 754]] {
            let findings = detect(runs_of(&seconds), 1_178_000);
            assert_eq!(findings[0].get("longest_job_id"), Some(&Value::Text("j2".into())), "{seconds:?}");
        }
        let findings = detect(runs_of(&[754, 754, 300]), 1_178_000);
        assert_eq!(findings[0].get("longest_job_id"), Some(&Value::Text("j1".into())));
    }

    #[test]
    fn short_runs_without_a_stall_are_not_reported() {
        // Just under half of the lock: nothing to say.
        assert!(detect(runs_of(&[200, 588]), 1_178_000).is_empty());
    }

    #[test]
    fn a_healthy_run_past_the_blocking_limit_is_info() {
        // 900 s could outlive a 1,178 s lock if it blocked, but every renewal was made: a CI gate
        // on this run must pass.
        let findings = detect(runs_of(&[900]), 1_178_000);
        assert_eq!(findings[0].severity, Severity::Info);
        assert_eq!(findings[0].get("could_outlive_lock"), Some(&Value::Flag(true)));
        assert_eq!(findings[0].get("lock_lost_by_live_worker"), Some(&Value::Flag(false)));
    }

    #[test]
    fn a_run_past_the_blocking_limit_whose_worker_lost_its_lock_is_a_warning() {
        let mut events = runs_of(&[900]);
        events.push(event(3, "2026-10-07T00:15:00Z", EventKind::LockRefused, "j0"));
        let findings = detect(events, 1_178_000);
        assert_eq!(findings[0].severity, Severity::Warning);
        assert_eq!(findings[0].get("lock_lost_by_live_worker"), Some(&Value::Flag(true)));
        assert!(findings[0].evidence.len() == 3, "the refusal is evidence: {:?}", findings[0].evidence);
    }

    #[test]
    fn a_failed_renewal_is_a_lost_lock_but_another_error_is_not() {
        for (detail, severity) in
            [("could not renew lock for job j0", Severity::Warning), ("ECONNRESET", Severity::Info)]
        {
            let mut events = runs_of(&[900]);
            let mut error = event(3, "2026-10-07T00:15:00Z", EventKind::Error, "j0");
            error.set_detail(Some(detail.into()));
            events.push(error);
            assert_eq!(detect(events, 1_178_000)[0].severity, severity, "{detail}");
        }
    }

    #[test]
    #[allow(clippy::float_cmp)]
    fn nearest_rank_percentiles() {
        let sorted: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(percentile(&sorted, 0.95), 19.0);
        assert_eq!(percentile(&sorted, 0.5), 10.0);
        assert_eq!(percentile(&[7.0], 0.95), 7.0);
    }
}
