//! Legacy Bull (npm `bull`, 3.x and 4.x), the library BullMQ grew out of: the facts where its
//! lock behaviour differs from BullMQ's, in one place, so that a detector asks "which library?"
//! here instead of reading version numbers.
//!
//! Bull's version is kept apart from BullMQ's (`LockParams::bull_version`, never `version`):
//! Bull 4.16.5 is not BullMQ 4.16.5, and the JSON report's `params.version` names BullMQ's.
//! Facts checked against bull@4.16.5 (lib/queue.js, lib/scripts.js, lib/commands/*.lua); where
//! each is, docs/bullmq.md "Legacy Bull".

use super::LockParams;

/// Bull's `Queue` defaults (lib/queue.js `settings`): the same numbers as BullMQ's worker.
pub const DEFAULT_LOCK_DURATION_MS: u64 = 30_000;
pub const DEFAULT_STALLED_INTERVAL_MS: u64 = 30_000;
pub const DEFAULT_MAX_STALLED_COUNT: u64 = 1;

/// The error Bull's completion raises when the job's lock is gone or held by another token
/// (lib/scripts.js `finishedErrors`, code -2): `Missing lock for job <id> finished`.
pub const MISSING_LOCK_PREFIX: &str = "Missing lock for job ";

/// The library whose lock rules the case ran under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Library {
    Bullmq,
    Bull,
}

impl Library {
    pub fn of(params: &LockParams) -> Library {
        if params.bull_version.is_some() { Library::Bull } else { Library::Bullmq }
    }
}

/// `Bull 4.16.5`, for the report's words.
pub fn named(version: &str) -> String {
    format!("Bull {version}")
}

/// Bull's lock renewal, for Assumptions.
pub fn renewal_model() -> &'static str {
    "Bull lock extender (lib/queue.js processJob): a timer per job renews its lock lockRenewTime after processing began and is set again after each extendLock reply; when extendLock returns 0 (the lock is gone or another token holds it) the timer stops without a word"
}

/// Bull's stalled check and its limit, for Assumptions.
pub fn stall_limit_model() -> &'static str {
    "Bull: the stalled check itself failed the job (moveStalledJobsToWait: a job in the stalled set whose lock is gone gets HINCRBY stalledCounter; over maxStalledCount it is moved to failed with failedReason \"job stalled more than allowable limit\" at once, no new activation before the failure; Bull 4 writes finishedOn with it, Bull 3 the reason alone)"
}

/// What Bull shares with BullMQ and what it lacks as evidence, for Assumptions.
pub fn stall_check_model() -> &'static str {
    "Bull stalled check: every stalledInterval each Queue that processes runs moveStalledJobsToWait, skipped while the queue-wide stalled-check key (set for stalledInterval) lives, as BullMQ's does; one lock token per Queue instance, so a Queue's late completion of a job it also took again passes the token check; no events stream: Bull's events are pub/sub only, so nothing but job hashes, logs and MONITOR output records them"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_library_is_bull_only_when_a_bull_version_is_in_force() {
        let mut params = LockParams::default();
        assert_eq!(Library::of(&params), Library::Bullmq);
        params.bull_version = Some("4.16.5".into());
        assert_eq!(Library::of(&params), Library::Bull);
        assert_eq!(named("4.16.5"), "Bull 4.16.5");
    }
}
