//! `stale-heartbeat`: a lease extension sent by an owner that no longer held the job.
//!
//! A heartbeat is how a live owner says "still mine". From a worker that lost its lease it must
//! not work: accepted, it would hand an expired or superseded generation a fresh lease, and that
//! owner's later result would then pass every check on the lease's end. So extensions are judged
//! like completions (`lease::Judgement`): an old generation or a lease already over at the
//! heartbeat is stale; accepted is an error, refused is the fence working (info, counted). BullMQ's
//! `could not renew lock for job <id>` and refused `extendLock` calls are refused heartbeats.

use crate::model::{EventKind, Finding};

use super::lease::{self, WriteKind};
use super::{Context, Detector};

pub struct StaleHeartbeat;

pub const KIND: WriteKind = WriteKind {
    code: "stale-heartbeat",
    event: EventKind::LeaseExtended,
    did: "extended its lease on job {job_id}",
    noun: "lease extension",
    harm: "a worker that no longer owned the job was given more time, and its later writes would pass a lease check",
    fix: "fence the heartbeat like the completion: extend only WHERE owner = :owner AND generation = :generation AND lease_until > :store_now, and stop the worker's processing when the extension changes no row",
};

impl Detector for StaleHeartbeat {
    fn code(&self) -> &'static str {
        KIND.code
    }

    fn doc(&self) -> &'static str {
        include_str!("../../docs/findings/stale-heartbeat.md")
    }

    /// As `stale-completion`: the takeover or rerun of the same job.
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

    fn seed(a_heartbeat_accepted: bool) -> Vec<crate::model::Event> {
        vec![
            row(1, 0.0, LeaseClaimed, "worker-a", Some(1), Some(10.0), Some(true)),
            row(2, 11.0, LeaseClaimed, "worker-b", Some(2), Some(21.0), Some(true)),
            row(3, 13.0, LeaseCompleted, "worker-b", Some(2), None, Some(true)),
            row(
                4,
                14.0,
                LeaseExtended,
                "worker-a",
                Some(1),
                a_heartbeat_accepted.then_some(24.0),
                Some(a_heartbeat_accepted),
            ),
        ]
    }

    #[test]
    fn an_old_generation_heartbeat_refused_is_info() {
        let findings = detect(&StaleHeartbeat, seed(false));
        assert_eq!(findings.len(), 1);
        let f = &findings[0];
        assert_eq!(f.severity, Severity::Info);
        assert_eq!(f.get("generation"), Some(&Value::Count(1)));
        assert_eq!(f.get("current_generation"), Some(&Value::Count(2)));
        assert_eq!(f.get("lease_until"), Some(&Value::Time(t(10.0))));
        assert_eq!(f.get("late_by_s"), Some(&Value::Seconds(4.0)));
        assert_eq!(f.get("rejected_count"), Some(&Value::Count(1)));
        assert_eq!(f.get("extended_to"), None);
        assert!(f.summary.starts_with("The store refused the lease extension {owner} sent"), "{}", f.summary);
    }

    #[test]
    fn an_old_generation_heartbeat_accepted_is_an_error_with_its_new_end() {
        let findings = detect(&StaleHeartbeat, seed(true));
        assert_eq!(findings[0].severity, Severity::Error);
        assert_eq!(findings[0].get("extended_to"), Some(&Value::Time(t(24.0))));
    }

    #[test]
    fn heartbeats_of_the_current_generation_in_time_are_not_stale() {
        let events = vec![
            row(1, 0.0, LeaseClaimed, "worker-a", Some(1), Some(10.0), Some(true)),
            row(2, 9.999, LeaseExtended, "worker-a", Some(1), Some(19.999), Some(true)),
            row(3, 19.998, LeaseExtended, "worker-a", Some(1), Some(29.998), Some(true)),
            row(4, 25.0, LeaseCompleted, "worker-a", Some(1), None, Some(true)),
        ];
        assert!(detect(&StaleHeartbeat, events).is_empty());
    }

    #[test]
    fn a_heartbeat_at_the_end_of_its_lease_is_stale_even_without_a_takeover() {
        let events = vec![
            row(1, 0.0, LeaseClaimed, "worker-a", Some(1), Some(10.0), Some(true)),
            row(2, 10.0, LeaseExtended, "worker-a", Some(1), Some(20.0), Some(true)),
        ];
        let findings = detect(&StaleHeartbeat, events);
        assert_eq!(findings[0].severity, Severity::Error);
        assert_eq!(findings[0].get("late_by_s"), Some(&Value::Seconds(0.0)));
        assert_eq!(findings[0].get("stale_because"), Some(&Value::Text("lease expired".into())));
    }

    #[test]
    fn a_bullmq_renewal_failure_is_a_refused_heartbeat() {
        let mut renewal = row(1, 90.0, EventKind::Error, "41877", None, None, None);
        renewal.edit().job_id = Some("42".into());
        renewal.set_detail(Some("ERROR [BullWorker] could not renew lock for job 42".into()));
        let findings = detect(&StaleHeartbeat, vec![renewal]);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].get("command"), Some(&Value::Text("extendLock".into())));
        assert_eq!(findings[0].severity, Severity::Info);
    }
}
