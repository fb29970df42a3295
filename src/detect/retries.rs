//! Attempts, failures and their causes: what `retry-exhausted` and `retry-storm` both read.
//!
//! Two kinds of queue write these down differently. A lease ledger records every claim (with its
//! outcome) and every failed attempt as a row; BullMQ records activations and failures in its
//! events stream, its job hashes and the application's log, often the same failure three times.
//! So a job's attempts are its accepted claims when it has any, else its activations
//! (`Context::attempts`, one channel); and its failures come from one channel only. A ledger's
//! `round-failed` row does not count as a failure of a job BullMQ saw: the application marking its
//! run failed (at a restart, say) does not fail BullMQ's job, which is recovered by a stall.
//!
//! Causes are sorted into classes by their wording, because the seed's advice depends on the
//! class: back off and retry transient ones, quarantine invalid input at once, and look for the
//! dead owner when the lease ran out.

use chrono::{DateTime, Utc};

use crate::model::timeline::EventId;
use crate::model::{Channel, Event, EventKind, JobKey};

use super::Context;

/// What kind of cause a failure reason names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CauseClass {
    /// Network errors, timeouts, rate limits, 5xx: may succeed later, with backoff.
    Transient,
    /// The input itself is wrong (validation, schema, 400/422): retrying cannot help.
    InvalidInput,
    /// The worker lost the job (lease expired, stalled, process restarted): not the job's fault.
    LostOwner,
    /// Anything else.
    Other,
}

impl CauseClass {
    pub fn name(self) -> &'static str {
        match self {
            CauseClass::Transient => "transient",
            CauseClass::InvalidInput => "invalid-input",
            CauseClass::LostOwner => "lost-owner",
            CauseClass::Other => "other",
        }
    }
}

/// Phrases per class, matched in the reason lower-cased with every run of other characters
/// turned into one space (so `status=422` reads `status 422`). Classes are tried in this order.
pub const CAUSE_PHRASES: &[(CauseClass, &[&str])] = &[
    (
        CauseClass::LostOwner,
        &[
            "lease expired",
            "lease lost",
            "stalled",
            "server restarted",
            "marked failed at startup",
            "missing lock",
            "lock mismatch",
            "worker died",
            "worker lost",
        ],
    ),
    (
        CauseClass::InvalidInput,
        &[
            "invalid",
            "validation",
            "schema",
            "bad request",
            "unprocessable",
            "malformed",
            "parse error",
            "cannot parse",
            "status 400",
            "status 422",
            "http 400",
            "http 422",
            "code 400",
            "code 422",
        ],
    ),
    (
        CauseClass::Transient,
        &[
            "timeout",
            "timed out",
            "etimedout",
            "econnreset",
            "econnrefused",
            "eai again",
            "socket hang up",
            "connection reset",
            "connection refused",
            "network",
            "rate limit",
            "too many requests",
            "throttl",
            "unavailable",
            "temporar",
            "try again",
            "bad gateway",
            "status 429",
            "status 502",
            "status 503",
            "status 504",
            "http 429",
            "http 502",
            "http 503",
            "http 504",
        ],
    ),
];

/// Sorts a failure reason into a class. A reason that starts with an HTTP status (`422 ...`,
/// `503 ...`) is read by that status.
pub fn classify(reason: &str) -> CauseClass {
    let words: String = reason
        .to_lowercase()
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let padded = format!(" {words} ");
    for (class, phrases) in CAUSE_PHRASES {
        // A phrase must start a word: `invalid` matches `invalidated`, `400` does not match `1400`.
        if phrases.iter().any(|p| padded.contains(&format!(" {p}"))) {
            return *class;
        }
    }
    match words.split(' ').next() {
        Some("400" | "422") => CauseClass::InvalidInput,
        Some("429" | "502" | "503" | "504") => CauseClass::Transient,
        _ => CauseClass::Other,
    }
}

/// Whether the job left any record outside the ledger: then BullMQ ran it.
fn seen_by_queue(context: &Context, job: JobKey) -> bool {
    Some(context.events_of_job(job))
        .is_some_and(|ids| ids.iter().any(|&id| context.timeline.get(id).origin().channel != Channel::Ledger))
}

/// Whether the job has lease rows (claims): then its attempts are its accepted claims.
pub fn is_lease_job(context: &Context, job: JobKey) -> bool {
    context.lease_jobs.contains(&job)
}

/// The starts of the job's attempts, in time order: accepted claims (a claim without an outcome
/// counts as accepted) for a lease job, else its activations from the best channel.
pub fn starts(context: &Context, job: JobKey) -> Vec<EventId> {
    if is_lease_job(context, job) {
        return context
            .events_of_job(job)
            .iter()
            .copied()
            .filter(|&id| {
                let event = context.timeline.get(id);
                event.kind == EventKind::LeaseClaimed && event.lease().accepted != Some(false)
            })
            .collect();
    }
    context.attempts_of_job(job).iter().map(|a| a.activated).collect()
}

/// The job's failures, in time order: for a job BullMQ saw, its `job-failed` records merged from
/// every channel that recorded them, one per failure, as activations are (`rounds::Merger`: a
/// stream trimmed after the first failures loses none that the log has); otherwise the ledger's
/// failed-attempt rows.
pub fn failures(context: &Context, job: JobKey) -> Vec<EventId> {
    if !context.job_has(job, &[EventKind::JobFailed, EventKind::RoundFailed]) {
        return Vec::new();
    }
    let ids = context.events_of_job(job);
    let timeline = context.timeline;
    if seen_by_queue(context, job) {
        if !context.job_has(job, &[EventKind::JobFailed]) {
            return Vec::new();
        }
        let stream_from = context.stream_start_for(job).and_then(|at| crate::model::Moment::new(at).ok());
        let lock_ms = i64::try_from(context.params_of(job).lock_duration).unwrap_or(i64::MAX);
        return crate::model::rounds::Merger::new(timeline)
            .merge(ids, crate::model::rounds::Happening::Failure, stream_from, lock_ms)
            .into_iter()
            .map(|(id, _, _)| id)
            .collect();
    }
    ids.iter()
        .copied()
        .filter(|&id| matches!(timeline.kind(id), EventKind::RoundFailed | EventKind::JobFailed))
        .collect()
}

/// Whether BullMQ recorded a stall of the job in `(from, to]`: a re-activation after it is a
/// recovery, not a retry.
pub fn stalled_between(context: &Context, job: JobKey, from: DateTime<Utc>, to: DateTime<Utc>) -> bool {
    context.job_has(job, &[EventKind::JobStalled])
        && context.events_of_job(job).iter().any(|&id| {
            let event = context.timeline.get(id);
            event.kind == EventKind::JobStalled && from < event.at() && event.at() <= to
        })
}

/// The reason a failure record gives, without the ledger's status prefix when it says no more
/// than "failed".
pub fn reason(event: &Event) -> String {
    let detail = event.detail_str().unwrap_or("").trim();
    for prefix in ["FAILED: ", "failed: ", "ATTEMPT_FAILED: ", "attempt_failed: "] {
        if let Some(rest) = detail.strip_prefix(prefix) {
            return rest.trim().to_string();
        }
    }
    if detail.is_empty() { "no reason recorded".to_string() } else { detail.to_string() }
}

/// The job's name and queue, from any record of it.
pub fn name_and_queue(context: &Context, job: JobKey) -> (Option<String>, Option<String>) {
    let ids = context.events_of_job(job);
    let timeline = context.timeline;
    (
        ids.iter().find_map(|&id| timeline.get(id).job_name.map(|n| n.to_string())),
        ids.iter().find_map(|&id| timeline.get(id).queue.map(|q| q.to_string())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_classified_by_their_wording() {
        for (reason, class) in [
            ("ECONNRESET", CauseClass::Transient),
            ("socket hang up", CauseClass::Transient),
            ("503 Service Unavailable", CauseClass::Transient),
            ("upstream status=429", CauseClass::Transient),
            ("timeout after 400 ms", CauseClass::Transient),
            ("422 Unprocessable Entity", CauseClass::InvalidInput),
            ("schema validation failed: missing field repo", CauseClass::InvalidInput),
            ("HTTP 400 from api", CauseClass::InvalidInput),
            ("job stalled more than allowable limit", CauseClass::LostOwner),
            ("marked failed at startup: server restarted", CauseClass::LostOwner),
            ("lease expired", CauseClass::LostOwner),
            ("TypeError: x is undefined", CauseClass::Other),
            ("processed 400 items then crashed", CauseClass::Other),
        ] {
            assert_eq!(classify(reason), class, "{reason}");
        }
    }
}
