//! `unlogged-stall`: BullMQ recovered a stalled job and no server log line says so.
//!
//! BullMQ emits `stalled` on the worker whose check moved the job; unless the application listens
//! for it, the recovery leaves no line in the logs and a responder has to rebuild it from timing,
//! as the 2026-10-07 postmortem did. A stall is proven either by BullMQ's events stream (a
//! `stalled` entry) or by timing (two activations of one job with no completion or failure
//! between). Reported only when logs were read at all: without logs there is nothing to miss.
//! Which log line records which stall is decided once, in `stalls`, for this finding and
//! `stalled-rerun` alike.

use crate::model::timeline::EventId;
use crate::model::{Channel, Finding, JobKey, Severity, Value};
use crate::time::seconds_between;

use super::{Context, Detector};

pub struct UnloggedStall;

pub const MISSING_LISTENER: &str =
    "worker.on('stalled', (jobId, prev) => …) on every worker, logging the queue, job name and job id";

impl Detector for UnloggedStall {
    fn code(&self) -> &'static str {
        "unlogged-stall"
    }

    fn doc(&self) -> &'static str {
        include_str!("../../docs/findings/unlogged-stall.md")
    }

    /// The stall that went unlogged is a rerun's: the same job, and the rerun nearest in time to
    /// the recovery (the same activation when both name it).
    fn follows_from(&self, finding: &Finding, found: &super::links::Found) -> Vec<usize> {
        let (Some(job), Some(recovered)) = (finding.text("job_id"), super::links::time(finding, "recovered_at")) else {
            return Vec::new();
        };
        let activated = super::links::time(finding, "activated_at");
        let candidates = super::links::RERUNS.iter().flat_map(|code| found.of_code(code));
        let same_job: Vec<(usize, &Finding)> =
            candidates.filter(|(_, rerun)| rerun.text("job_id") == Some(job)).collect();
        let same_activation = same_job
            .iter()
            .filter(|(_, rerun)| activated.is_some() && super::links::time(rerun, "activated_at") == activated)
            .map(|&(index, _)| index)
            .next();
        let nearest = || {
            same_job
                .iter()
                .filter_map(|&(index, rerun)| Some((index, super::links::time(rerun, "rerun_at")?)))
                .min_by_key(|&(_, rerun_at)| (rerun_at - recovered).abs())
                .map(|(index, _)| index)
        };
        same_activation.or_else(nearest).into_iter().collect()
    }

    fn detect(&self, context: &Context) -> Vec<Finding> {
        let timeline = context.timeline;
        if !timeline.events().iter().any(|e| e.origin().channel == Channel::Log) {
            return Vec::new();
        }
        // The stalls and their lines as `stalled-rerun` reads them: a stall is proven by BullMQ's
        // own record when the stream has it, else by timing.
        let mut findings = Vec::new();
        for stall in context.stalls().iter().filter(|stall| stall.lines.is_empty()) {
            match (stall.entry, stall.recovery) {
                (Some(entry), _) => {
                    findings.push(finding(context, stall.job, timeline.get(entry).at(), "events-stream", vec![entry]));
                }
                (None, Some((first, rerun))) => {
                    findings.push(finding(context, stall.job, timeline.get(rerun).at(), "timing", vec![first, rerun]));
                }
                (None, None) => {}
            }
        }
        findings
    }
}

fn finding(
    context: &Context,
    job: JobKey,
    at: chrono::DateTime<chrono::Utc>,
    proven_by: &str,
    evidence: Vec<EventId>,
) -> Finding {
    let timeline = context.timeline;
    let mut finding = Finding::new("unlogged-stall", Severity::Warning, at);
    finding.metric("job_id", Value::Text(job.to_string()));
    let events = context.events_of_job(job);
    if let Some(name) = events.iter().find_map(|&id| timeline.get(id).job_name) {
        finding.metric("job_name", Value::Text(name.to_string()));
    }
    if let Some(queue) = job.queue.or_else(|| events.iter().find_map(|&id| timeline.get(id).queue)) {
        finding.metric("queue", Value::Text(queue.to_string()));
    }
    finding.metric("recovered_at", Value::Time(at));
    finding.metric("proven_by", Value::Text(proven_by.to_string()));
    finding.metric("missing_listener", Value::Text(MISSING_LISTENER.to_string()));
    finding.headline =
        "No log line recorded the stall of job {job_id} (recovered at {recovered_at}): no worker logs BullMQ's stalled event".into();
    if proven_by == "timing" {
        let (first, second) = (timeline.get(evidence[0]).at(), timeline.get(evidence[1]).at());
        finding.metric("activated_at", Value::Time(first));
        finding.metric("gap_s", Value::Seconds(seconds_between(first, second)));
        finding.derive("gap_s", "recovered_at − activated_at");
        // A time read from a log line stands for a moment a little before it (`clocks`).
        let windows = [
            ("activated", evidence[0], ("activated_earliest_at", "activated_latest_at")),
            ("recovered", evidence[1], ("recovered_earliest_at", "recovered_latest_at")),
        ];
        for (name, id, (earliest, latest)) in windows {
            let when = context.activation_when(id);
            if !when.is_exact() {
                finding.metric(earliest, Value::Time(when.earliest.utc()));
                finding.metric(latest, Value::Time(when.latest.utc()));
                finding.note(format!(
                    "{name}_at is a log line's time: the line's source wrote what BullMQ's stream also recorded a little later than the stream, so it stands for a moment between {earliest} and {latest}"
                ));
            }
        }
        finding.note("proven by timing: the job became active again with no completion or failure between (see stalled-rerun for the lock arithmetic)");
        finding.summary = "Job {job_id} was recovered from a stall at {recovered_at} ({gap_s} after its activation at {activated_at}), shown only by timing: no server log line records the stall, because no worker logs BullMQ's stalled event. Add {missing_listener}.".into();
    } else {
        let record = context.params_of(job).backend.events_record();
        finding.note(format!(
            "proven by BullMQ's {record}; no log line was matched to this stall: none of the job's stalled lines is within {} s of it (plus the log's time resolution) or between the activations around it",
            super::stalls::STALL_LINE_SLACK_MS / 1000
        ));
        finding.summary = format!(
            "BullMQ's {record} shows job {{job_id}} stalled and recovered at {{recovered_at}}, but no server log line records it: no worker logs BullMQ's stalled event. Add {{missing_listener}}."
        );
    }
    finding.evidence = evidence;
    finding
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::Settings;
    use crate::model::{Event, EventKind, LockParams, Origin, Timeline};
    use chrono::{DateTime, Utc};

    fn event(channel: Channel, line: u32, when: &str, kind: EventKind) -> Event {
        // One source per channel, as a case reads them.
        let origin = Origin { channel, source: channel as u16, line };
        let mut event =
            Event::new(DateTime::parse_from_rfc3339(when).unwrap().with_timezone(&Utc).into(), kind, origin);
        event.edit().job_id = Some("j".into());
        event
    }

    fn detect(events: Vec<Event>) -> Vec<Finding> {
        let timeline = Timeline::new(events);
        let params = LockParams::default();
        let settings = Settings::default();
        UnloggedStall.detect(&Context::new(&timeline, &params, &settings))
    }

    #[test]
    fn a_rerun_without_a_stalled_line_is_unlogged_by_timing() {
        let findings = detect(vec![
            event(Channel::Log, 1, "2026-10-07T00:33:00Z", EventKind::JobActive),
            event(Channel::Log, 2, "2026-10-07T00:53:00Z", EventKind::JobActive),
        ]);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].get("proven_by"), Some(&Value::Text("timing".into())));
        assert_eq!(findings[0].get("gap_s"), Some(&Value::Seconds(1200.0)));
    }

    #[test]
    fn a_logged_stall_is_not_a_finding() {
        let findings = detect(vec![
            event(Channel::Log, 1, "2026-10-07T00:33:00Z", EventKind::JobActive),
            event(Channel::Log, 2, "2026-10-07T00:52:59Z", EventKind::JobStalled),
            event(Channel::Log, 3, "2026-10-07T00:53:00Z", EventKind::JobActive),
            event(Channel::EventsStream, 1, "2026-10-07T00:52:58Z", EventKind::JobStalled),
        ]);
        assert!(findings.is_empty(), "{findings:?}");
    }

    #[test]
    fn a_stream_stall_without_a_log_line_is_one_finding_not_two() {
        let findings = detect(vec![
            event(Channel::EventsStream, 1, "2026-10-07T00:33:00Z", EventKind::JobActive),
            event(Channel::EventsStream, 2, "2026-10-07T00:52:58Z", EventKind::JobStalled),
            event(Channel::EventsStream, 3, "2026-10-07T00:53:00Z", EventKind::JobActive),
            event(Channel::Log, 9, "2026-10-07T00:33:00Z", EventKind::JobActive),
        ]);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].get("proven_by"), Some(&Value::Text("events-stream".into())));
    }

    #[test]
    fn without_any_log_there_is_nothing_to_miss() {
        let findings = detect(vec![
            event(Channel::EventsStream, 1, "2026-10-07T00:33:00Z", EventKind::JobActive),
            event(Channel::EventsStream, 2, "2026-10-07T00:52:58Z", EventKind::JobStalled),
        ]);
        assert!(findings.is_empty());
    }
}
