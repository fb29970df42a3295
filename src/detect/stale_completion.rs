//! `stale-completion`: a result written by an owner that no longer held the job's lease.
//!
//! A recovered job has two workers that both believe they own it: the one that lost its lease and
//! the one that took over. Re-running is only half the recovery; the other half is that the late
//! worker's result must not land. So every completion row is judged against the store's own
//! record of leases (`lease::Judgement`): is its generation still the newest, and was its lease
//! still running at the write? The answer matters less than what the store did with it: accepted
//! means the fence is missing (error), refused means it worked (info, counted, because a rising
//! count of late results is what a responder watches for). BullMQ's `Missing lock` and `Lock
//! mismatch` refusals of a finishing call are the same fence and count as refused completions.

use crate::model::{EventKind, Finding};

use super::lease::{self, WriteKind};
use super::{Context, Detector};

pub struct StaleCompletion;

pub const KIND: WriteKind = WriteKind {
    code: "stale-completion",
    event: EventKind::LeaseCompleted,
    did: "wrote the result of job {job_id}",
    noun: "result",
    harm: "a worker that no longer owned the job wrote its result over the current owner's",
    fix: "fence the completion in the store: one conditional write (UPDATE … WHERE id = :job AND owner = :owner AND generation = :generation AND lease_until > :store_now) that must change exactly one row, with the result written in the same transaction",
};

impl Detector for StaleCompletion {
    fn code(&self) -> &'static str {
        KIND.code
    }

    fn doc(&self) -> &'static str {
        include_str!("../../docs/findings/stale-completion.md")
    }

    /// A write refused (or wrongly accepted) because another owner took the job over: the
    /// early takeover or the rerun of the same job.
    fn follows_from(&self, finding: &Finding, found: &super::links::Found) -> Vec<usize> {
        super::lease::follows_from(finding, found)
    }

    fn detect(&self, context: &Context) -> Vec<Finding> {
        lease::stale_writes(context, &KIND)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::lease::tests::{detect, row, t};
    use crate::model::{Severity, Value};
    use EventKind::{LeaseClaimed, LeaseCompleted, LeaseExtended};

    /// The seed's job: A claims at 0 (10 s lease), B takes over at 11, A's result comes at 12.
    fn seed(a_accepted: bool) -> Vec<crate::model::Event> {
        vec![
            row(1, 0.0, LeaseClaimed, "worker-a", Some(1), Some(10.0), Some(true)),
            row(2, 5.0, LeaseClaimed, "worker-b", None, None, Some(false)),
            row(3, 11.0, LeaseClaimed, "worker-b", Some(2), Some(21.0), Some(true)),
            row(4, 12.0, LeaseCompleted, "worker-a", Some(1), None, Some(a_accepted)),
            row(5, 13.0, LeaseCompleted, "worker-b", Some(2), None, Some(true)),
        ]
    }

    #[test]
    fn a_refused_late_result_is_info_with_its_figures() {
        let findings = detect(&StaleCompletion, seed(false));
        assert_eq!(findings.len(), 1, "B's result within its own lease is not stale");
        let f = &findings[0];
        assert_eq!(f.severity, Severity::Info);
        assert_eq!(f.get("owner"), Some(&Value::Text("worker-a".into())));
        assert_eq!(f.get("generation"), Some(&Value::Count(1)));
        assert_eq!(f.get("current_generation"), Some(&Value::Count(2)));
        assert_eq!(f.get("current_owner"), Some(&Value::Text("worker-b".into())));
        assert_eq!(f.get("lease_until"), Some(&Value::Time(t(10.0))));
        assert_eq!(f.get("written_at"), Some(&Value::Time(t(12.0))));
        assert_eq!(f.get("late_by_s"), Some(&Value::Seconds(2.0)));
        assert_eq!(f.get("accepted"), Some(&Value::Flag(false)));
        assert_eq!(f.get("rejected_count"), Some(&Value::Count(1)));
        assert_eq!(f.get("stale_because"), Some(&Value::Text("lease expired; generation superseded".into())));
        assert_eq!(f.evidence, vec![0, 2, 3], "A's claim, B's takeover, A's write");
    }

    #[test]
    fn an_accepted_late_result_is_an_error_that_says_who_wrote_last() {
        let findings = detect(&StaleCompletion, seed(true));
        assert_eq!(findings.len(), 1);
        let f = &findings[0];
        assert_eq!(f.severity, Severity::Error);
        assert_eq!(f.get("accepted"), Some(&Value::Flag(true)));
        assert_eq!(f.get("rejected_count"), None);
        assert!(f.summary.contains("yet the store accepted it"), "{}", f.summary);
        assert!(f.notes.iter().any(|n| n.contains("wrote its result 1.000 s later")), "{:?}", f.notes);
        assert!(f.notes.iter().any(|n| n.contains("lease_until > :store_now")));
    }

    #[test]
    fn the_lease_boundary_is_closed() {
        let at_end = vec![
            row(1, 40.0, LeaseClaimed, "worker-e", Some(1), Some(50.0), Some(true)),
            row(2, 50.0, LeaseCompleted, "worker-e", Some(1), None, Some(false)),
        ];
        let findings = detect(&StaleCompletion, at_end);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].get("late_by_s"), Some(&Value::Seconds(0.0)));
        assert_eq!(findings[0].get("stale_because"), Some(&Value::Text("lease expired".into())));
        assert_eq!(findings[0].get("current_owner"), None, "nobody took over");
        assert!(findings[0].summary.contains("at the very instant its lease ended"));

        let just_inside = vec![
            row(1, 40.0, LeaseClaimed, "worker-e", Some(1), Some(50.0), Some(true)),
            row(2, 49.999, LeaseCompleted, "worker-e", Some(1), None, Some(true)),
        ];
        assert!(detect(&StaleCompletion, just_inside).is_empty());
    }

    #[test]
    fn a_heartbeat_moves_the_end_of_the_lease() {
        let events = vec![
            row(1, 20.0, LeaseClaimed, "worker-c", Some(1), Some(30.0), Some(true)),
            row(2, 27.0, LeaseExtended, "worker-c", Some(1), Some(37.0), Some(true)),
            row(3, 34.0, LeaseCompleted, "worker-c", Some(1), None, Some(true)),
        ];
        assert!(detect(&StaleCompletion, events).is_empty());
    }

    #[test]
    fn a_result_without_an_outcome_is_a_warning() {
        let events = vec![
            row(1, 0.0, LeaseClaimed, "worker-a", Some(1), Some(10.0), None),
            row(2, 12.0, LeaseCompleted, "worker-a", Some(1), None, None),
        ];
        let findings = detect(&StaleCompletion, events);
        assert_eq!(findings[0].severity, Severity::Warning);
        assert_eq!(findings[0].get("accepted"), None);
    }

    #[test]
    fn refused_retries_of_one_late_worker_are_one_finding_counted() {
        let mut events = seed(false);
        events.push(row(6, 12.5, LeaseCompleted, "worker-a", Some(1), None, Some(false)));
        let findings = detect(&StaleCompletion, events);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].get("rejected_count"), Some(&Value::Count(2)));
        assert_eq!(findings[0].get("written_at"), Some(&Value::Time(t(12.0))), "the first refusal");
    }

    #[test]
    fn a_bullmq_missing_lock_refusal_is_a_refused_completion() {
        let mut refusal = row(1, 100.0, EventKind::LockRefused, "41877", None, None, None);
        refusal.edit().job_id = Some("42".into());
        refusal.set_detail(Some("moveToFinished".into()));
        let mut renewal = row(2, 90.0, EventKind::Error, "41877", None, None, None);
        renewal.edit().job_id = Some("42".into());
        renewal.set_detail(Some("could not renew lock for job 42".into()));
        let findings = detect(&StaleCompletion, vec![refusal, renewal]);
        assert_eq!(findings.len(), 1, "the renewal failure is a heartbeat, not a completion");
        let f = &findings[0];
        assert_eq!(f.severity, Severity::Info);
        assert_eq!(f.get("job_id"), Some(&Value::Text("42".into())));
        assert_eq!(f.get("command"), Some(&Value::Text("moveToFinished".into())));
        assert_eq!(f.get("accepted"), Some(&Value::Flag(false)));
        assert!(f.summary.starts_with("BullMQ refused {command} for job {job_id}"), "{}", f.summary);
    }
}
