//! `early-takeover`: the store let a second owner claim a job while the first one's lease ran.
//!
//! A lease is only worth its expiry if nobody else gets the job before it: that is what lets the
//! owner work without checking every second. So each accepted claim is compared with the lease in
//! force just before it (`lease::current_grant`, heartbeats included, early releases honoured):
//! a claim by a different owner strictly before that lease's `lease_until` means two owners at
//! once. A refused claim before expiry is the fence working and is no finding; a claim at the very
//! instant the lease ends is on time (the boundary is closed).

use crate::model::timeline::EventId;
use crate::model::{Event, EventKind, Finding, JobKey, Severity, Value};
use crate::time::seconds_between;

use super::lease::{self, Grant};
use super::{Context, Detector};

pub struct EarlyTakeover;

impl Detector for EarlyTakeover {
    fn code(&self) -> &'static str {
        "early-takeover"
    }

    fn doc(&self) -> &'static str {
        include_str!("../../docs/findings/early-takeover.md")
    }

    fn detect(&self, context: &Context) -> Vec<Finding> {
        let timeline = context.timeline;
        let mut findings = Vec::new();
        if !context.jobs_have(&[EventKind::LeaseClaimed]) {
            return findings;
        }
        for (job, job_events) in context.job_events.iter_having(&[EventKind::LeaseClaimed]) {
            for &id in job_events {
                let claim = timeline.get(id);
                if claim.kind != EventKind::LeaseClaimed || !lease::granted(claim) {
                    continue;
                }
                let Some(previous) = lease::current_grant(context, job_events, id) else {
                    continue;
                };
                let holder = timeline.get(previous.claim);
                let (Some(until), None) = (previous.until, previous.released_by) else {
                    continue;
                };
                if claim.at() < until && other_owner(holder, claim) {
                    findings.push(takeover(context, job, &previous, id, until));
                }
            }
        }
        findings
    }
}

/// A different owner: both named and different, or (unnamed) a different generation. The same
/// owner claiming again is a renewal in disguise, not a second owner.
fn other_owner(holder: &Event, claim: &Event) -> bool {
    match (&holder.worker, &claim.worker) {
        (Some(a), Some(b)) => a != b,
        _ => matches!((holder.lease().generation, claim.lease().generation), (Some(a), Some(b)) if a != b),
    }
}

fn takeover(
    context: &Context,
    job: JobKey,
    previous: &Grant,
    claim_id: EventId,
    until: chrono::DateTime<chrono::Utc>,
) -> Finding {
    let timeline = context.timeline;
    let holder = timeline.get(previous.claim);
    let claim = timeline.get(claim_id);
    let mut finding = Finding::new("early-takeover", Severity::Error, claim.at());
    finding.metric("job_id", Value::Text(job.to_string()));
    if let Some(owner) = &holder.worker {
        finding.metric("previous_owner", Value::Text(owner.to_string()));
    }
    if let Some(generation) = holder.lease().generation {
        finding.metric("previous_generation", Value::Count(generation));
    }
    finding.metric("previous_lease_until", Value::Time(until));
    finding.metric("previous_lease_set_at", Value::Time(timeline.get(previous.set_by).at()));
    if let Some(owner) = &claim.worker {
        finding.metric("new_owner", Value::Text(owner.to_string()));
    }
    if let Some(generation) = claim.lease().generation {
        finding.metric("new_generation", Value::Count(generation));
    }
    finding.metric("claimed_at", Value::Time(claim.at()));
    finding.metric("early_by_s", Value::Seconds(seconds_between(claim.at(), until)));
    finding.derive("early_by_s", "previous_lease_until − claimed_at");
    finding.evidence.extend([previous.claim, previous.set_by, claim_id]);
    finding.evidence.sort_unstable();
    finding.evidence.dedup();
    if previous.set_by != previous.claim {
        finding.note("previous_lease_until comes from the previous owner's last accepted heartbeat before the claim");
    }
    finding.note("a claim must be a conditional write on the lease (… WHERE lease_until <= :store_now OR owner IS NULL) whose changed-row count is checked; comparing first and updating after leaves a gap in which two workers both win");
    finding.note("times and lease_until are read from the ledger: the store's clock, the one the fence compares");

    let previous_who = if holder.worker.is_some() { "{previous_owner}'s" } else { "the previous owner's" };
    let previous_generation =
        if holder.lease().generation.is_some() { " (generation {previous_generation})" } else { "" };
    let new_who = if claim.worker.is_some() { "{new_owner}" } else { "Another worker" };
    let new_generation = if claim.lease().generation.is_some() { " as generation {new_generation}" } else { "" };
    finding.summary = format!(
        "{new_who} claimed job {{job_id}}{new_generation} at {{claimed_at}}, {{early_by_s}} before {previous_who} lease{previous_generation} ran out at {{previous_lease_until}}, and the store accepted it: two workers owned the job at once."
    );
    finding
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::lease::tests::{detect, row, t};
    use EventKind::{LeaseClaimed, LeaseCompleted, LeaseExtended, RoundFailed};

    #[test]
    fn an_accepted_claim_inside_the_lease_is_an_error_with_its_margin() {
        let events = vec![
            row(1, 0.0, LeaseClaimed, "worker-a", Some(1), Some(10.0), Some(true)),
            row(2, 7.0, LeaseExtended, "worker-a", Some(1), Some(17.0), Some(true)),
            row(3, 12.0, LeaseClaimed, "worker-b", Some(2), Some(22.0), Some(true)),
        ];
        let findings = detect(&EarlyTakeover, events);
        assert_eq!(findings.len(), 1);
        let f = &findings[0];
        assert_eq!(f.severity, Severity::Error);
        assert_eq!(f.get("previous_owner"), Some(&Value::Text("worker-a".into())));
        assert_eq!(f.get("new_owner"), Some(&Value::Text("worker-b".into())));
        assert_eq!(f.get("previous_lease_until"), Some(&Value::Time(t(17.0))), "the heartbeat moved the end");
        assert_eq!(f.get("previous_lease_set_at"), Some(&Value::Time(t(7.0))));
        assert_eq!(f.get("claimed_at"), Some(&Value::Time(t(12.0))));
        assert_eq!(f.get("early_by_s"), Some(&Value::Seconds(5.0)));
        assert_eq!(f.get("previous_generation"), Some(&Value::Count(1)));
        assert_eq!(f.get("new_generation"), Some(&Value::Count(2)));
        assert_eq!(f.evidence, vec![0, 1, 2]);
    }

    #[test]
    fn a_refused_claim_before_expiry_is_the_fence_working() {
        let events = vec![
            row(1, 0.0, LeaseClaimed, "worker-a", Some(1), Some(10.0), Some(true)),
            row(2, 5.0, LeaseClaimed, "worker-b", None, None, Some(false)),
            row(3, 11.0, LeaseClaimed, "worker-b", Some(2), Some(21.0), Some(true)),
        ];
        assert!(detect(&EarlyTakeover, events).is_empty());
    }

    #[test]
    fn a_claim_at_the_very_end_of_the_lease_is_on_time() {
        let events = vec![
            row(1, 0.0, LeaseClaimed, "worker-a", Some(1), Some(10.0), Some(true)),
            row(2, 10.0, LeaseClaimed, "worker-b", Some(2), Some(20.0), Some(true)),
        ];
        assert!(detect(&EarlyTakeover, events).is_empty());
        let a_millisecond_early = vec![
            row(1, 0.0, LeaseClaimed, "worker-a", Some(1), Some(10.0), Some(true)),
            row(2, 9.999, LeaseClaimed, "worker-b", Some(2), Some(19.999), Some(true)),
        ];
        let findings = detect(&EarlyTakeover, a_millisecond_early);
        assert_eq!(findings[0].get("early_by_s"), Some(&Value::Seconds(0.001)));
    }

    #[test]
    fn a_released_lease_may_be_claimed_at_once() {
        let events = vec![
            row(1, 60.0, LeaseClaimed, "worker-a", Some(1), Some(70.0), Some(true)),
            row(2, 61.0, RoundFailed, "worker-a", Some(1), None, None),
            row(3, 63.0, LeaseClaimed, "worker-b", Some(2), Some(73.0), Some(true)),
            row(4, 64.0, LeaseCompleted, "worker-b", Some(2), None, Some(true)),
            row(5, 65.0, LeaseClaimed, "worker-c", Some(3), Some(75.0), Some(true)),
        ];
        assert!(detect(&EarlyTakeover, events).is_empty());
    }

    #[test]
    fn the_same_owner_claiming_again_is_not_a_second_owner() {
        let events = vec![
            row(1, 0.0, LeaseClaimed, "worker-a", Some(1), Some(10.0), Some(true)),
            row(2, 5.0, LeaseClaimed, "worker-a", Some(2), Some(15.0), Some(true)),
        ];
        assert!(detect(&EarlyTakeover, events).is_empty());
    }
}
