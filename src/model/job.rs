//! A job as BullMQ knows it: an id within a queue.
//!
//! BullMQ keys a job by its queue and its id (`bull:<queue>:<id>`), and a custom id (`jobId:
//! 'daily-1'`) may be used by two queues at once. So the id alone is not a job: two queues' jobs
//! `daily-1` have their own activations, locks and stalls, and pairing one's activation with the
//! other's would invent a stalled rerun. A `JobKey` is what detectors group a job's events by.
//! Which queue an event that names no queue belongs to is decided once, for every detector, when
//! the detectors' context is built (`detect::Context::job_of`).

use super::Text;

/// A job: its queue, when the evidence says or implies it, and its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct JobKey {
    /// The queue; `None` when no event of the job names one (a ledger or log without queues).
    pub queue: Option<Text>,
    pub id: Text,
}

impl JobKey {
    pub fn new(queue: Option<Text>, id: Text) -> Self {
        JobKey { queue, id }
    }

    /// The job's id as written.
    pub fn as_str(&self) -> &'static str {
        self.id.as_str()
    }
}

/// By id, then queue: the order jobs are listed in.
impl Ord for JobKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        let queue = |key: &JobKey| key.queue.map(|queue| queue.as_str());
        self.id.as_str().cmp(other.id.as_str()).then_with(|| queue(self).cmp(&queue(other)))
    }
}

impl PartialOrd for JobKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// A job of no known queue, for tests that build events without queues.
#[cfg(test)]
impl From<&str> for JobKey {
    fn from(id: &str) -> Self {
        JobKey::new(None, id.into())
    }
}

/// The id, as findings name a job; the queue is a metric of its own.
impl std::fmt::Display for JobKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_id_in_two_queues_is_two_jobs_listed_by_id_then_queue() {
        let a = JobKey::new(Some("emails".into()), "daily-1".into());
        let b = JobKey::new(Some("reviews".into()), "daily-1".into());
        let c = JobKey::new(None, "daily-1".into());
        assert_ne!(a, b);
        let mut keys = [b, a, c, JobKey::new(Some("a".into()), "1".into())];
        keys.sort();
        let listed: Vec<(String, Option<&str>)> =
            keys.iter().map(|k| (k.to_string(), k.queue.map(|q| q.as_str()))).collect();
        assert_eq!(
            listed,
            [
                ("1".to_string(), Some("a")),
                ("daily-1".to_string(), None),
                ("daily-1".to_string(), Some("emails")),
                ("daily-1".to_string(), Some("reviews"))
            ]
        );
    }
}
