//! The questions a detector asks of the other findings to state what its own follows from
//! (`Detector::follows_from`). A link is stated only on shared identity (the same round, job or
//! item named by both findings' metrics), never on nearness in time alone: a chain the reader is
//! shown must be one the evidence names.

use chrono::{DateTime, Utc};
use rustc_hash::FxHashMap;

use crate::model::{Finding, Value};

/// The codes of the findings that record a job re-run after it lost its lock or lease.
pub const RERUNS: &[&str] = &["stalled-rerun"];

/// Every finding of the analysis, in time order, with their positions by code: a case can have
/// thousands of findings of one code (a duplicate for each item a rerun picked again), and each
/// asks only about the few of its causes' codes, never about all findings.
pub struct Found<'a> {
    pub findings: &'a [Finding],
    by_code: FxHashMap<&'static str, Vec<usize>>,
}

impl<'a> Found<'a> {
    pub fn new(findings: &'a [Finding]) -> Self {
        let mut by_code: FxHashMap<&'static str, Vec<usize>> = FxHashMap::default();
        for (index, finding) in findings.iter().enumerate() {
            by_code.entry(finding.code).or_default().push(index);
        }
        Found { findings, by_code }
    }

    /// Every finding of `code`, with its position.
    pub fn of_code(&self, code: &str) -> impl Iterator<Item = (usize, &'a Finding)> + '_ {
        let findings = self.findings;
        self.by_code.get(code).into_iter().flatten().map(move |&index| (index, &findings[index]))
    }

    /// The reruns whose re-run round is `run`.
    pub fn reruns_into_round(&self, run: &str) -> Vec<usize> {
        self.of_codes(RERUNS).filter(|(_, rerun)| rerun.text("rerun_run_id") == Some(run)).map(|(i, _)| i).collect()
    }

    /// The reruns whose first (lost) round is `run`.
    pub fn reruns_of_round(&self, run: &str) -> Vec<usize> {
        self.of_codes(RERUNS).filter(|(_, rerun)| rerun.text("run_id") == Some(run)).map(|(i, _)| i).collect()
    }

    /// The findings of `codes` about the job of `finding` (its `job_id`, and its `queue` when both
    /// name one: the same id in two queues is two jobs) that became visible at or before `until`.
    pub fn of_job_before(&self, codes: &[&str], finding: &Finding, until: DateTime<Utc>) -> Vec<usize> {
        let Some(job_id) = finding.text("job_id") else { return Vec::new() };
        let queue = finding.text("queue");
        let same_queue = |f: &Finding| match (queue, f.text("queue")) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        let mut found: Vec<usize> = self
            .of_codes(codes)
            .filter(|(_, f)| f.text("job_id") == Some(job_id) && same_queue(f) && f.at <= until)
            .map(|(i, _)| i)
            .collect();
        found.sort_unstable();
        found
    }

    fn of_codes<'b>(&'b self, codes: &'b [&str]) -> impl Iterator<Item = (usize, &'a Finding)> + 'b {
        codes.iter().flat_map(move |code| self.of_code(code))
    }
}

/// The metric `name` of `finding` as a time.
pub fn time(finding: &Finding, name: &str) -> Option<DateTime<Utc>> {
    match finding.get(name) {
        Some(Value::Time(at)) => Some(*at),
        _ => None,
    }
}

/// Two rounds named by a finding (`run_a`, `run_b`), in either order.
pub fn same_pair(finding: &Finding, other: &Finding) -> bool {
    let pair = |f: &Finding| (f.text("run_a").map(str::to_owned), f.text("run_b").map(str::to_owned));
    match (pair(finding), pair(other)) {
        ((Some(a), Some(b)), (Some(c), Some(d))) => (a == c && b == d) || (a == d && b == c),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Severity;
    use chrono::TimeZone;

    fn rerun(run: &str, rerun_run: &str) -> Finding {
        let mut f = Finding::new("stalled-rerun", Severity::Warning, Utc.timestamp_opt(100, 0).unwrap());
        f.metric("run_id", Value::Text(run.into())).metric("rerun_run_id", Value::Text(rerun_run.into()));
        f.metric("job_id", Value::Text("job-1".into()));
        f
    }

    #[test]
    fn reruns_are_found_by_the_round_they_lost_and_the_round_they_started() {
        let findings = vec![rerun("run-a", "run-b"), rerun("run-b", "run-c")];
        let found = Found::new(&findings);
        assert_eq!(found.reruns_into_round("run-b"), vec![0]);
        assert_eq!(found.reruns_of_round("run-b"), vec![1]);
        assert!(found.reruns_into_round("run-x").is_empty());
        let about = |job: &str, queue: Option<&str>| {
            let mut f = Finding::new("duplicate-effect", Severity::Error, Utc.timestamp_opt(100, 0).unwrap());
            f.metric("job_id", Value::Text(job.into()));
            if let Some(queue) = queue {
                f.metric("queue", Value::Text(queue.into()));
            }
            f
        };
        let at = |second| Utc.timestamp_opt(second, 0).unwrap();
        assert_eq!(found.of_job_before(RERUNS, &about("job-1", None), at(100)), vec![0, 1]);
        assert!(found.of_job_before(RERUNS, &about("job-1", None), at(99)).is_empty());
        assert!(found.of_job_before(RERUNS, &about("job-2", None), at(100)).is_empty());
        // The same id in another queue is another job.
        let mut in_queues = findings.clone();
        in_queues[0].metric("queue", Value::Text("a".into()));
        in_queues[1].metric("queue", Value::Text("b".into()));
        let found = Found::new(&in_queues);
        assert_eq!(found.of_job_before(RERUNS, &about("job-1", Some("b")), at(100)), vec![1]);
        assert_eq!(found.of_job_before(RERUNS, &about("job-1", None), at(100)), vec![0, 1]);
    }

    #[test]
    fn a_pair_of_rounds_is_the_same_in_either_order() {
        let mut a = Finding::new("x", Severity::Warning, Utc.timestamp_opt(0, 0).unwrap());
        a.metric("run_a", Value::Text("r1".into())).metric("run_b", Value::Text("r2".into()));
        let mut b = a.clone();
        b.metrics.clear();
        b.metric("run_a", Value::Text("r2".into())).metric("run_b", Value::Text("r1".into()));
        assert!(same_pair(&a, &b));
        b.metrics[0].1 = Value::Text("r3".into());
        assert!(!same_pair(&a, &b));
    }

    fn found(code: &'static str, seconds: i64, metrics: &[(&'static str, &str)]) -> Finding {
        let mut f = Finding::new(code, Severity::Warning, Utc.timestamp_opt(seconds, 0).unwrap());
        for &(name, text) in metrics {
            f.metric(name, Value::Text(text.into()));
        }
        f
    }

    fn links(found: &[Finding], index: usize) -> Vec<usize> {
        crate::detect::find(found[index].code).unwrap().follows_from(&found[index], &Found::new(found))
    }

    #[test]
    fn each_detector_links_only_on_the_ids_both_findings_name() {
        let mut effect = found("duplicate-effect", 50, &[("item", "user-7"), ("job_id", "notify-1")]);
        effect.metric("second_at", Value::Time(Utc.timestamp_opt(50, 0).unwrap()));
        let found = vec![
            found("stalled-rerun", 10, &[("job_id", "notify-1"), ("run_id", "r1"), ("rerun_run_id", "r2")]),
            found("duplicate-selection", 40, &[("item", "user-7"), ("run_a", "r2"), ("run_b", "r3")]),
            found("duplicate-selection", 41, &[("item", "user-8"), ("run_a", "r2"), ("run_b", "r3")]),
            effect,
            found("retry-storm", 5, &[("job_id", "job-4")]),
            found("retry-exhausted", 60, &[("job_id", "job-4")]),
            found("retry-exhausted", 61, &[("job_id", "job-5")]),
            found("stale-heartbeat", 62, &[("job_id", "notify-1")]),
            found("orphaned-round", 63, &[("run_id", "r1")]),
        ];
        assert_eq!(links(&found, 3), vec![1], "the selection of the same item, not of another");
        assert_eq!(links(&found, 1), vec![0], "no overlap of the pair: the rerun into one of its rounds");
        assert_eq!(links(&found, 5), vec![4]);
        assert!(links(&found, 6).is_empty(), "another job's storm is not a cause");
        assert_eq!(links(&found, 7), vec![0], "the rerun of the same job made the heartbeat stale");
        assert_eq!(links(&found, 8), vec![0], "the round the rerun lost");
        // Without the selection, the effect follows from the rerun of its job.
        let without: Vec<Finding> = found.iter().filter(|f| f.code != "duplicate-selection").cloned().collect();
        assert_eq!(links(&without, 1), vec![0]);
    }
}
