//! `stalled-rerun`: a job that lost its lock and was run again from the start.
//!
//! BullMQ never tells a worker that its process died; the job's lock simply runs out and a later
//! stalled check moves the job back to wait, where any worker takes it again. So the rerun is
//! inferred from two activations of one job id with no completion or failure between them, and
//! the lock arithmetic (activation, renewal schedule, expiry, stalled-check window) is rebuilt from
//! the lock parameters, because renewals leave no trace in any export.

use std::collections::HashMap;

use chrono::{DateTime, TimeDelta, Utc};

use crate::model::params::QueueBackend;
use crate::model::timeline::{CLOCK_SKEW_MS, EventId, Timeline};
use crate::model::{Channel, Event, EventKind, Finding, JobKey, LockParams, Moment, Severity, Value};
use crate::time::{plus_millis, seconds_between};

use super::{Context, Detector};

pub struct StalledRerun;

/// How the lock manager of the BullMQ version in use renews locks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RenewalModel {
    /// v3.10.0 and later: one timer per worker ticks every `lockRenewTime/2` and renews every job
    /// whose last renewal (or activation) is more than `lockRenewTime/2` old, so the first renewal
    /// lands in (activation + R/2, activation + R].
    BatchTimer,
    /// v1.1.0 to v3.9.x: a timer per job renews it exactly `lockRenewTime` after processing began.
    PerJobTimer,
}

impl RenewalModel {
    /// The model of the library and version in force: legacy Bull renews each job on a timer of
    /// its own, as BullMQ did before 3.10 (`crate::model::bull`).
    pub fn for_params(params: &LockParams) -> RenewalModel {
        match crate::model::bull::Library::of(params) {
            crate::model::bull::Library::Bull => RenewalModel::PerJobTimer,
            crate::model::bull::Library::Bullmq => RenewalModel::for_version(params.version.as_deref()),
        }
    }

    pub fn for_version(version: Option<&str>) -> RenewalModel {
        let parsed = version.and_then(|v| {
            let mut parts = v.trim_start_matches('v').split('.').map(|p| p.parse::<u32>().ok());
            Some((parts.next()??, parts.next().flatten().unwrap_or(0)))
        });
        match parsed {
            Some((major, minor)) if (major, minor) < (3, 10) => RenewalModel::PerJobTimer,
            _ => RenewalModel::BatchTimer,
        }
    }

    /// Offsets (ms after activation) of the earliest and latest first renewal.
    pub fn first_renewal_window(self, params: &LockParams) -> (i64, i64) {
        let renew = to_i64(params.lock_renew_time);
        match self {
            RenewalModel::BatchTimer => (renew / 2, renew),
            RenewalModel::PerJobTimer => (renew, renew),
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            RenewalModel::BatchTimer => {
                "BullMQ ≥ 3.10 lock manager: a worker-wide timer ticks every lockRenewTime/2 and renews a job once more than lockRenewTime/2 has passed since its activation or last renewal, so the first renewal lands between activation + lockRenewTime/2 and activation + lockRenewTime"
            }
            RenewalModel::PerJobTimer => {
                "BullMQ 1.1–3.9 lock extender: a timer per job renews it exactly lockRenewTime after processing began"
            }
        }
    }
}

/// How long after the lock expires a stalled check can move the job.
///
/// A check only moves a job that the previous effective check marked, and effective checks are
/// one to two `stalledInterval`s apart: each worker tries again `stalledInterval` after its last
/// check, but the queue-wide `stalled-check` key it set lives exactly that long, so the retry often
/// finds it still set and does nothing (seen on BullMQ 5.81.5 with a real Redis: moves up to
/// 1.63 × stalledInterval after expiry). So the first effective check after expiry comes within
/// 2 × stalledInterval; if the lock is shorter than that, the check before expiry may predate the
/// last lock write and marking takes up to another 2 × stalledInterval.
pub fn detection_delay_ms(params: &LockParams) -> (i64, &'static str) {
    let interval = to_i64(params.stalled_interval);
    if params.stalled_interval.saturating_mul(2) <= params.lock_duration {
        (
            2 * interval,
            "2 × stalledInterval ≤ lockDuration: the job was marked by a check before expiry, and the first effective check after expiry, at most 2 × stalledInterval later (a retry that finds the previous check's stalled-check key still set does nothing), moves it",
        )
    } else {
        (
            4 * interval,
            "2 × stalledInterval > lockDuration: the check before expiry may predate the last lock write, so marking and moving may take two effective checks, each up to 2 × stalledInterval apart",
        )
    }
}

/// The end of the stalled-check window on BullMQ's PostgreSQL backend (`move_stalled_jobs_to_wait`
/// in its `0002_functions.sql`): every effective check first moves the active jobs that are
/// marked (`stalled_marked`) and whose `locked_until_ms` is before its own clock's now, then marks
/// every active job; a renewal (`extend_lock`) moves `locked_until_ms` and leaves the mark. So a
/// job that one effective check saw active before its lock ran out is moved by the first effective
/// check after that, at most 2 × stalledInterval later, however many renewals came between
/// (on Redis a renewal unmarks it). The first effective check after the activation comes within
/// 2 × stalledInterval of it: when the lock may run out before that, the check that marks it may
/// come after the expiry, and the next one moves it.
pub fn postgres_window(
    params: &LockParams,
    activated_latest: DateTime<Utc>,
    expiry_latest: DateTime<Utc>,
    basis: &str,
) -> (DateTime<Utc>, String, &'static str) {
    let check_ms = 2 * to_i64(params.stalled_interval);
    let marked_by = plus_millis(activated_latest, check_ms);
    let reason = "BullMQ on PostgreSQL: every effective stalled check marks every active job and a lock renewal leaves the mark, so the job was moved by the first effective check after its lock ran out (locked_until_ms before the checking worker's clock), at most 2 × stalledInterval later, once a check had seen it active; the first check after the activation comes within 2 × stalledInterval of it";
    if expiry_latest >= marked_by {
        (plus_millis(expiry_latest, check_ms), format!("{basis} + 2 × stalledInterval ({})", seconds(check_ms)), reason)
    } else {
        (
            plus_millis(marked_by, check_ms),
            format!(
                "activated_at + 4 × stalledInterval ({}): the lock may run out before the first check marked the job",
                seconds(2 * check_ms)
            ),
            reason,
        )
    }
}

fn to_i64(millis: u64) -> i64 {
    i64::try_from(millis).unwrap_or(i64::MAX)
}

fn seconds(millis: i64) -> String {
    format!("{} s", crate::time::seconds_text(millis))
}

impl Detector for StalledRerun {
    fn code(&self) -> &'static str {
        "stalled-rerun"
    }

    fn doc(&self) -> &'static str {
        include_str!("../../docs/findings/stalled-rerun.md")
    }

    fn detect(&self, context: &Context) -> Vec<Finding> {
        let mut findings = Vec::new();
        let mut resolutions = HashMap::new();
        for (job, attempts) in context.attempts.iter() {
            for (index, pair) in attempts.windows(2).enumerate() {
                if !context.is_recovery(job, &pair[0], &pair[1]) {
                    continue;
                }
                let rerun_span = (pair[1].first, attempts.get(index + 2).map(|next| next.first));
                findings.push(rerun(
                    context,
                    job,
                    pair[0].activated,
                    (pair[1].activated, rerun_span),
                    &mut resolutions,
                ));
            }
        }
        findings
    }
}

/// How much later than its time an event may have happened: its source's time resolution
/// (`Timeline::time_resolution_ns`), looked up once per source, and only for a time in whole
/// seconds (no finer source can be coarser than its own times).
fn resolution(timeline: &Timeline, event: &Event, cache: &mut HashMap<u16, i64>) -> TimeDelta {
    if event.at().timestamp_subsec_nanos() != 0 {
        return TimeDelta::zero();
    }
    let source = event.origin().source;
    TimeDelta::nanoseconds(*cache.entry(source).or_insert_with(|| timeline.time_resolution_ns(source)))
}

/// `second`: the rerun's activation, with its attempt's earliest record and the next attempt's
/// (what the rerun's own outcome lies between).
fn rerun(
    context: &Context,
    job: JobKey,
    first: EventId,
    (second, (rerun_first, next_first)): (EventId, (Moment, Option<Moment>)),
    resolutions: &mut HashMap<u16, i64>,
) -> Finding {
    let timeline = context.timeline;
    let params = context.params_of(job);
    let activation = timeline.get(first);
    let rerun = timeline.get(second);
    let (activated_at, rerun_at) = (activation.at(), rerun.at());
    let (activated, rerun_moment) = (activation.moment(), rerun.moment());
    let job_events = context.events_of_job(job);

    // The restart that ended the job's process: one in the same log as the activation when that
    // log has one (replicas usually log to their own files), else any. A log of whole seconds
    // (NestJS) writes a restart in the second it happened in: a line stamped before the
    // activation, in the same second, may still be the restart after it.
    let restarts: Vec<EventId> = context
        .restarts
        .iter()
        .copied()
        .filter(|&id| {
            let e = timeline.get(id);
            e.moment() <= rerun_moment
                && (activated < e.moment() || activated_at < e.at() + resolution(timeline, e, resolutions))
        })
        .collect();
    let attributed = context.restart_of(activation, &restarts);
    let restart = attributed.map(|(id, _)| id);
    let model = RenewalModel::for_params(params);
    let (renew_earliest_ms, renew_due_ms) = model.first_renewal_window(params);
    let lock_ms = to_i64(params.lock_duration);
    let (delay_ms, delay_reason) = detection_delay_ms(params);
    // An activation known from a log line only (the stream trimmed) came a little before the line:
    // every lock time from it is a window that wide (`clocks`).
    let when = context.activation_when(first);
    let (activated_earliest, activated_latest) = (when.earliest.utc(), when.latest.utc());
    let first_renewal_earliest = plus_millis(activated_earliest, renew_earliest_ms);
    let first_renewal_due = plus_millis(activated_latest, renew_due_ms);
    // On PostgreSQL the lock runs from the claiming worker's `Date.now()`, read before its call;
    // the `active` row is written during it, on the database's clock: the lock may run out up to
    // the call's latency and the clocks' skew (1 s allowed) before activation + lockDuration.
    let claim_ms = if params.backend == QueueBackend::Postgres { CLOCK_SKEW_MS } else { 0 };
    let exact = when.is_exact() && claim_ms == 0;
    let expiry_if_never_renewed = plus_millis(activated_earliest, lock_ms - claim_ms);
    let expiry_if_never_renewed_latest = plus_millis(activated_latest, lock_ms);

    let mut finding = Finding::new("stalled-rerun", Severity::Warning, rerun_at);
    finding.metric("job_id", Value::Text(job.to_string()));
    if let Some(name) = activation.job_name.or(rerun.job_name) {
        finding.metric("job_name", Value::Text(name.to_string()));
    }
    if let Some(queue) = job.queue {
        finding.metric("queue", Value::Text(queue.to_string()));
    }
    finding.metric("activated_at", Value::Time(activated_at));
    finding.evidence.push(first);
    let lag_text = |lag: super::clocks::Lag| {
        format!(
            "{}–{} ms on the {} activations both recorded",
            lag.least_ns / 1_000_000,
            (lag.most_ns + 999_999) / 1_000_000,
            lag.samples
        )
    };
    if let (false, Some(lag)) = (when.is_exact(), when.lag) {
        finding.metric("activated_earliest_at", Value::Time(activated_earliest));
        finding.metric("activated_latest_at", Value::Time(activated_latest));
        finding.derive("activated_earliest_at", "activated_at − the most its source lagged BullMQ's stream");
        finding.derive("activated_latest_at", "activated_at − the least its source lagged BullMQ's stream");
        finding.note(format!(
            "the lost activation is known from its {}'s record only (the events stream does not have it): that source wrote what the stream also recorded {} later than the stream, so the activation came between activated_earliest_at and activated_latest_at, and every lock time from it is a window",
            activation.origin().channel.describe(),
            lag_text(lag)
        ));
    }

    let restart_at = restart.map(|id| timeline.get(id).at());
    // When the restart may have happened up to a resolution after its line's time: the end of
    // that second is the latest it can have been, and what lock arithmetic may rely on. Its
    // earliest is the line's time, or the activation when the line is stamped before it in the
    // activation's second (the restart ended the activation's process, so came after it).
    let restart_resolution =
        restart.map_or(TimeDelta::zero(), |id| resolution(timeline, timeline.get(id), resolutions));
    let coarse_restart = restart_resolution > TimeDelta::milliseconds(1);
    let restart_latest = restart_at.map(|at| at + restart_resolution);
    let restart_earliest = restart_at.map(|at| at.max(activated_at));
    let resolution_text = seconds(restart_resolution.num_milliseconds());
    match attributed {
        Some((_, how)) => {
            finding.note(how.describe());
        }
        None if !restarts.is_empty() => {
            finding.note(format!(
                "{} process start(s) between the activation and the rerun cannot be tied to the process that ran the job (another instance, host or log, or a log several processes write at once): none is taken as its restart, and the lock's expiry stays a window",
                restarts.len()
            ));
        }
        None => {}
    }
    if let (Some(id), Some(at)) = (restart, restart_at) {
        finding.evidence.push(id);
        finding.metric("restart_at", Value::Time(at));
        // The span is given as metrics too, not only in the summary: a JSON reader must not take
        // a line's whole second for the restart's millisecond.
        if let (true, Some(latest)) = (coarse_restart, restart_latest) {
            finding.metric("restart_resolution_s", Value::Seconds(restart_resolution.as_seconds_f64()));
            finding.metric("restart_latest_at", Value::Time(latest));
            finding.derive("restart_latest_at", format!("restart_at + restart_resolution_s ({resolution_text})"));
        }
        let least = if coarse_restart { ": the least (the restart at its earliest)" } else { "" };
        if at < activated_at {
            finding.metric("activation_to_restart_s", Value::Seconds(0.0));
            finding.derive(
                "activation_to_restart_s",
                format!("0{least}: the restart line's time is the start of the second that holds the activation"),
            );
        } else {
            finding.metric("activation_to_restart_s", Value::Seconds(seconds_between(activated_at, at)));
            finding.derive("activation_to_restart_s", format!("restart_at − activated_at{least}"));
        }
        if let (true, Some(latest)) = (coarse_restart, restart_latest) {
            finding.metric("activation_to_restart_max_s", Value::Seconds(seconds_between(activated_at, latest)));
            finding.derive(
                "activation_to_restart_max_s",
                "restart_latest_at − activated_at: the most (the restart at its latest)",
            );
            finding.note(format!(
                "the restart line is from a log that writes times to {resolution_text} only: the restart happened between restart_at and restart_latest_at, {resolution_text} later, and the lock arithmetic allows for that (the restart is taken at its latest); the durations from it are given as spans (activation_to_restart_s to activation_to_restart_max_s, restart_to_rerun_min_s to restart_to_rerun_s)"
            ));
        }
    }
    finding.metric("first_renewal_earliest_at", Value::Time(first_renewal_earliest));
    finding.metric("first_renewal_due_at", Value::Time(first_renewal_due));
    match model {
        RenewalModel::BatchTimer => {
            finding.derive(
                "first_renewal_earliest_at",
                format!("activated_at + lockRenewTime/2 ({})", seconds(renew_earliest_ms)),
            );
            finding.derive("first_renewal_due_at", format!("activated_at + lockRenewTime ({})", seconds(renew_due_ms)));
        }
        RenewalModel::PerJobTimer => {
            finding.derive("first_renewal_due_at", format!("activated_at + lockRenewTime ({})", seconds(renew_due_ms)));
        }
    }
    finding.note(if params.bull_version.is_some() { crate::model::bull::renewal_model() } else { model.describe() });

    // The lock's expiry is exact only when the evidence proves no renewal happened: the process
    // was gone before the earliest possible first renewal.
    let died_before_renewal = restart_latest.is_some_and(|at| at <= first_renewal_earliest);
    if coarse_restart {
        let compared = if died_before_renewal { "≤" } else { ">" };
        finding.derive(
            "died_before_first_renewal",
            format!("restart_latest_at {compared} first_renewal_earliest_at (the restart at its latest)"),
        );
    }
    let (from, to) = if when.is_exact() {
        ("activated_at", "activated_at")
    } else {
        ("activated_earliest_at", "activated_latest_at")
    };
    let earliest_formula = if claim_ms > 0 {
        format!(
            "{from} + lockDuration ({}) − {}: on PostgreSQL the lock runs from the claiming worker's clock, read before its call wrote the active row",
            seconds(lock_ms),
            seconds(claim_ms)
        )
    } else {
        format!("{from} + lockDuration ({})", seconds(lock_ms))
    };
    let (expiry_earliest, expiry_latest) = if died_before_renewal && exact {
        finding.metric("died_before_first_renewal", Value::Flag(true));
        finding.metric("lock_expired_at", Value::Time(expiry_if_never_renewed));
        finding.derive("lock_expired_at", format!("activated_at + lockDuration ({})", seconds(lock_ms)));
        finding.note("the restart came before the earliest first renewal, so the lock was never renewed: its expiry is exact (the old process is taken to have died at or before the restart line)");
        (expiry_if_never_renewed, expiry_if_never_renewed)
    } else if died_before_renewal {
        finding.metric("died_before_first_renewal", Value::Flag(true));
        finding.metric("lock_expired_earliest_at", Value::Time(expiry_if_never_renewed));
        finding.metric("lock_expired_latest_at", Value::Time(expiry_if_never_renewed_latest));
        finding.derive("lock_expired_earliest_at", earliest_formula.clone());
        finding.derive("lock_expired_latest_at", format!("{to} + lockDuration ({})", seconds(lock_ms)));
        finding.note("the restart came before the earliest first renewal, so the lock was never renewed: it expired a lockDuration after the activation, within the activation's window");
        (expiry_if_never_renewed, expiry_if_never_renewed_latest)
    } else {
        if restart_at.is_some() {
            finding.metric("died_before_first_renewal", Value::Flag(false));
        }
        // The latest expiry the evidence allows: a renewal just before the restart, but never
        // after the rerun (the lock was gone by then) and never before activation + lockDuration
        // (a rerun that early is reported outside the window instead).
        let renewed_until_restart = restart_latest.map(|at| plus_millis(at, lock_ms));
        let restart_term = if coarse_restart { "restart_latest_at (the restart at its latest)" } else { "restart_at" };
        let (latest, formula) = match renewed_until_restart {
            Some(at) if at < rerun_at => (at, format!("{restart_term} + lockDuration ({})", seconds(lock_ms))),
            _ => (rerun_at, "rerun_at".to_string()),
        };
        let (latest, formula) = if latest < expiry_if_never_renewed_latest {
            (expiry_if_never_renewed_latest, format!("{to} + lockDuration ({})", seconds(lock_ms)))
        } else {
            (latest, formula)
        };
        finding.derive("lock_expired_latest_at", formula);
        let earliest = expiry_if_never_renewed;
        finding.metric("lock_expired_earliest_at", Value::Time(earliest));
        finding.metric("lock_expired_latest_at", Value::Time(latest));
        finding.derive("lock_expired_earliest_at", earliest_formula);
        let traceless = match params.backend {
            QueueBackend::Redis => "logs, the events stream or the job hash",
            // The job row's locked_until_ms is overwritten by each renewal and cleared by the move.
            QueueBackend::Postgres => {
                "logs or the event table (the job row keeps only the last lock's end, and the stalled check clears it)"
            }
        };
        finding.note(format!("renewals leave no trace in {traceless}, and the evidence does not rule one out: the lock expiry is a window from activation + lockDuration (no renewal) to the latest time the evidence allows (the last possible renewal before the restart + lockDuration, and never after the rerun, when the lock was already gone)"));
        (earliest, latest)
    };

    let window_start = expiry_earliest;
    let basis = if died_before_renewal { "lock_expired_at" } else { "lock_expired_latest_at" };
    let (window_end, formula, reason) = match params.backend {
        QueueBackend::Redis => {
            let factor = if delay_ms == 2 * to_i64(params.stalled_interval) {
                "2 × stalledInterval"
            } else {
                "4 × stalledInterval"
            };
            (plus_millis(expiry_latest, delay_ms), format!("{basis} + {factor} ({})", seconds(delay_ms)), delay_reason)
        }
        QueueBackend::Postgres => postgres_window(params, activated_latest, expiry_latest, basis),
    };
    finding.metric("stalled_check_window_start_at", Value::Time(window_start));
    finding.metric("stalled_check_window_end_at", Value::Time(window_end));
    finding.derive("stalled_check_window_end_at", formula);
    finding.note(reason);

    finding.metric("rerun_at", Value::Time(rerun_at));
    let rerun_when = context.activation_when(second);
    if let (false, Some(lag)) = (rerun_when.is_exact(), rerun_when.lag) {
        finding.metric("rerun_earliest_at", Value::Time(rerun_when.earliest.utc()));
        finding.metric("rerun_latest_at", Value::Time(rerun_when.latest.utc()));
        finding.note(format!(
            "the rerun is known from its {}'s record only: it came between rerun_earliest_at and rerun_latest_at ({})",
            rerun.origin().channel.describe(),
            lag_text(lag)
        ));
    }
    finding.evidence.push(second);
    if let (Some(at), Some(earliest), Some(latest)) = (restart_at, restart_earliest, restart_latest) {
        finding.metric("restart_to_rerun_s", Value::Seconds(seconds_between(earliest, rerun_at)));
        if coarse_restart {
            let from = if at < activated_at {
                "rerun_at − activated_at: the most (the restart at its earliest, the activation: its line is stamped before it, in the activation's second)"
            } else {
                "rerun_at − restart_at: the most (the restart at its earliest)"
            };
            finding.derive("restart_to_rerun_s", from);
            let least = seconds_between(latest, rerun_at).max(0.0);
            finding.metric("restart_to_rerun_min_s", Value::Seconds(least));
            finding.derive(
                "restart_to_rerun_min_s",
                "rerun_at − restart_latest_at: the least (the restart at its latest)",
            );
        } else {
            finding.derive("restart_to_rerun_s", "rerun_at − restart_at");
        }
    }
    if died_before_renewal {
        finding.metric("expiry_to_rerun_s", Value::Seconds(seconds_between(expiry_earliest, rerun_at)));
        finding.derive("expiry_to_rerun_s", "rerun_at − lock_expired_at");
    }
    let in_window = window_start <= rerun_at && rerun_at <= window_end;
    finding.metric("rerun_in_stalled_window", Value::Flag(in_window));
    if rerun_at < window_start {
        finding.note("the rerun came before the lock could have expired under these parameters: the parameters are off, or the job came back another way (a manual retry, a rate limit's move to wait, a deleted lock); when a stalled check did it, lock-params-contradicted gives the bounds the evidence puts on lockDuration and stalledInterval");
    } else if !in_window {
        finding.note("the rerun came after the stalled-check window: no worker with stalled checks was running when the lock expired, or the job waited in the queue");
    }

    // The stall's records: BullMQ's entry in its events stream (what BullMQ wrote) and the log
    // lines matched to it (what the application wrote), told apart because the gap the seed
    // describes is the second being absent while the first exists. The lines are matched once
    // for every stall (`stalls`), so that `unlogged-stall` reads the same answer.
    let stall = context.stalls().of_recovery(job, first, second);
    let logged = stall.is_some_and(|stall| !stall.lines.is_empty());
    let in_stream = stall.is_some_and(|stall| stall.entry.is_some());
    finding.metric("stalled_logged", Value::Flag(logged));
    // The stream can speak for this stall when it began by the lost activation: the stall came
    // at least a lock's life later. An activation seen on another clock (a log, the ledger) is
    // allowed the clock skew: the stream's own `active` of it may be that much later.
    if let Some(stream_from) = context.stream_start_for(job) {
        let skew_ms = if activation.origin().channel == Channel::EventsStream { 0 } else { CLOCK_SKEW_MS };
        if stream_from <= plus_millis(activated_at, skew_ms) {
            finding.metric("stalled_in_stream", Value::Flag(in_stream));
        } else {
            finding.note(format!(
                "the {} starts after the activation (it is trimmed): it cannot say whether BullMQ wrote a stalled event",
                params.backend.events_record()
            ));
        }
    }
    if let Some(stall) = stall {
        finding.evidence.extend(stall.entry);
        finding.evidence.extend(&stall.lines);
    }
    // The two activations from two channels: say which, and why the better one lacks the first.
    let (first_channel, rerun_channel) = (activation.origin().channel, rerun.origin().channel);
    if first_channel != rerun_channel {
        let why = match context.stream_start_for(job) {
            Some(from) if rerun_channel == Channel::EventsStream && from > activated_at => {
                "; the events stream begins after the lost activation (it was trimmed)"
            }
            _ => "",
        };
        finding.note(format!(
            "the lost activation is the {}'s record and the rerun the {}'s: a job's activations are merged from every channel that recorded them{why}",
            first_channel.describe(),
            rerun_channel.describe()
        ));
    }

    // Over the stall limit (BullMQ ≥ 5.53.2) the worker that takes the job again fails it at once
    // without running the processor: the second activation is then not a re-run of the work.
    // The rerun's own outcome: the first completion or failure from its earliest record on, before
    // the next attempt (every record of the rerun's activation is part of it, not a later one).
    let next_outcome = job_events.iter().copied().find(|&id| {
        let event = timeline.get(id);
        matches!(event.kind, EventKind::JobCompleted | EventKind::JobFailed)
            && event.origin().channel != Channel::Ledger
            && event.moment() >= rerun_first
            && next_first.is_none_or(|next| event.moment() < next)
    });
    let over_limit = next_outcome.is_some_and(|id| {
        let event = timeline.get(id);
        event.kind == EventKind::JobFailed
            && event
                .detail()
                .as_deref()
                .is_some_and(|d| d.to_ascii_lowercase().contains(super::stalled_limit_exceeded::STALLED_LIMIT_REASON))
    });
    // Where the stalled check itself fails a job over the limit (Bull, BullMQ ≤ 5.53.1), such a
    // failure after the rerun began means the rerun stalled in its turn: its processor ran.
    let check_fails = super::stalled_limit_exceeded::failure_model(params).1 == Some(false);
    let failed_at_once = over_limit && !check_fails;
    finding.metric("processor_reran", Value::Flag(!failed_at_once));
    if let (true, Some(id)) = (over_limit, next_outcome) {
        finding.evidence.push(id);
        finding.note(if failed_at_once {
            "BullMQ failed the job for exceeding maxStalledCount as soon as it was taken again: the processor did not run (see stalled-limit-exceeded)"
        } else {
            "the rerun lost its lock in its turn: a later stalled check failed the job for exceeding maxStalledCount (see stalled-limit-exceeded)"
        });
    }

    let cause = lost_lock_cause(context, job, (first, second), expiry_earliest, restart);
    finding.metric("lost_lock_cause", Value::Text(cause.name().to_string()));
    if let LostLockCause::LivedOn { seen } = &cause {
        let last = seen.iter().map(|&id| timeline.get(id).at()).max();
        if let Some(last) = last {
            finding.metric("old_worker_last_seen_at", Value::Time(last));
        }
        // The first few signs of life and the last one are enough to see it.
        finding.evidence.extend(seen.iter().take(5).chain(seen.last()));
    }
    finding.note(cause.remedy());

    attach_rounds(context, job, activated_at, rerun_at, &mut finding);
    let library = if params.bull_version.is_some() { "Bull" } else { "BullMQ" };
    finding.note(format!("activation is the time the job-active record was written; {library} set the lock a few milliseconds earlier, when it moved the job to active"));

    let stall_text = match (logged, in_stream) {
        (true, _) => "a stalled line was logged".to_string(),
        (false, true) => {
            format!("BullMQ's {} has the stalled event but no log line recorded it", params.backend.events_record())
        }
        (false, false) => "no stalled line or event was logged: the recovery was invisible in the logs".to_string(),
    };
    let taken = if failed_at_once {
        "taken again at {rerun_at} and failed at once for exceeding the stall limit"
    } else {
        "re-run from the start at {rerun_at}"
    };
    let cause_text = cause.summary();
    // A restart known to a second is said as the span it allows, never as a millisecond figure:
    // the same ends as the metrics.
    let (after_activation, restart_to_rerun) = if coarse_restart {
        (
            "{activation_to_restart_s}–{activation_to_restart_max_s} after".to_string(),
            "{restart_to_rerun_min_s}–{restart_to_rerun_s}".to_string(),
        )
    } else {
        ("{activation_to_restart_s} after".to_string(), "{restart_to_rerun_s}".to_string())
    };
    // The span says the resolution; the note says why.
    let restarted = if coarse_restart {
        "its process restarted between {restart_at} and {restart_latest_at}"
    } else {
        "its process restarted at {restart_at}"
    };
    // Exact only when the activation is: else the expiry is the activation's window.
    let expired = if exact {
        "the lock expired at {lock_expired_at}"
    } else {
        "the lock expired between {lock_expired_earliest_at} and {lock_expired_latest_at}"
    };
    finding.summary = match (restart_at, died_before_renewal) {
        (Some(_), true) => format!(
            "Job {{job_id}} was {taken}: {restarted}, {after_activation} activation at {{activated_at}} and before the first lock renewal ({{first_renewal_earliest_at}}–{{first_renewal_due_at}}); {expired}, {restart_to_rerun} passed from restart to rerun; {stall_text}.{cause_text}"
        ),
        (Some(_), false) => format!(
            "Job {{job_id}} was {taken} after {restarted} ({after_activation} activation at {{activated_at}}); renewals may have extended the lock, so it expired between {{lock_expired_earliest_at}} and {{lock_expired_latest_at}}; {stall_text}.{cause_text}"
        ),
        (None, _) => format!(
            "Job {{job_id}} was {taken} without a recorded restart (activated at {{activated_at}}): its lock ran out between {{lock_expired_earliest_at}} and {{lock_expired_latest_at}} while the process may have lived on without renewing it; {stall_text}.{cause_text}"
        ),
    };
    finding.headline = match restart_at {
        Some(_) => format!("Job {{job_id}} was {taken}, {restart_to_rerun} after its process restarted"),
        None => format!("Job {{job_id}} was {taken} after its lock ran out, with no restart recorded"),
    };
    finding.root_cause = Some(match (&cause, restart_at, died_before_renewal) {
        (LostLockCause::LivedOn { .. }, _, _) => {
            "the old worker lived on without renewing the lock (it still wrote at {old_worker_last_seen_at}, after the lock expired)".to_string()
        }
        (_, Some(_), true) => format!(
            "{restarted}, {after_activation} the job's activation at {{activated_at}} and before its first lock renewal ({{first_renewal_earliest_at}}–{{first_renewal_due_at}}), so {expired}"
        ),
        (_, Some(_), false) => format!(
            "{restarted}, {after_activation} the job's activation at {{activated_at}}, after its first lock renewal could have happened"
        ),
        (_, None, _) => "why the lock was lost is not in the evidence: no restart was logged and the old worker was not seen after the lock expired".to_string(),
    });
    finding
}

/// Why the first run lost its lock, as far as the evidence goes.
#[derive(Debug, Clone, PartialEq)]
pub enum LostLockCause {
    /// A process start followed the activation before the rerun, and the old worker wrote nothing
    /// after the lock could first expire.
    ProcessDied,
    /// The old worker still wrote after the lock could first expire (these events): it was alive
    /// but did not renew.
    LivedOn { seen: Vec<EventId> },
    /// Neither: no restart, and no sign of the old worker after expiry.
    Unknown,
}

impl LostLockCause {
    pub fn name(&self) -> &'static str {
        match self {
            LostLockCause::ProcessDied => "process-died",
            LostLockCause::LivedOn { .. } => "lived-on-without-renewing",
            LostLockCause::Unknown => "unknown",
        }
    }

    fn summary(&self) -> String {
        match self {
            LostLockCause::ProcessDied => {
                " The lock was lost because the process died: it restarted, and the old worker wrote nothing after the lock expired.".to_string()
            }
            LostLockCause::LivedOn { seen } => format!(
                " The old worker lived on without renewing the lock: it still wrote {} event(s) after the lock expired, the last at {{old_worker_last_seen_at}}.",
                seen.len()
            ),
            LostLockCause::Unknown => {
                " Why the lock was lost is not in the evidence: no restart was logged and the old worker was not seen after the lock expired.".to_string()
            }
        }
    }

    fn remedy(&self) -> &'static str {
        match self {
            LostLockCause::ProcessDied => {
                "lost_lock_cause process-died: remedy: shut down gracefully (on SIGTERM await worker.close() within a grace period longer than the longest job, so that running jobs finish and release their locks) and detect stalls sooner (a shorter lockDuration and stalledInterval bound how long a dead process's job waits)"
            }
            LostLockCause::LivedOn { .. } => {
                "lost_lock_cause lived-on-without-renewing: the process was alive but its renewals did not get through (a blocked event loop or an unreachable Redis): remedy: move blocking or CPU-bound work off the event loop (sandboxed processor, worker thread) or lengthen lockDuration beyond the longest stall; shortening the lock would make it worse"
            }
            LostLockCause::Unknown => {
                "lost_lock_cause unknown: log a pid= on every line and the worker's error event (could not renew lock for job <id>), so that a dead process can be told from a live one that stopped renewing"
            }
        }
    }
}

/// Decides between a dead process and a live one that stopped renewing. The old worker is the
/// activation's `worker` (pid), else the worker of another channel's record of the same
/// activation (within a second). Signs of life after the lock's earliest expiry are any event of
/// that worker (unless a restart line reuses the same id), and the job's own lock errors (`could
/// not renew lock`, `Missing lock`) that name no other worker and come before the rerun's own
/// lock could expire: until then only a worker that had lost the lock earlier can get them.
fn lost_lock_cause(
    context: &Context,
    job: JobKey,
    (first, second): (EventId, EventId),
    expiry_earliest: DateTime<Utc>,
    restart: Option<EventId>,
) -> LostLockCause {
    let timeline = context.timeline;
    let activation = timeline.get(first);
    let rerun_at = timeline.get(second).at();
    let job_events = context.events_of_job(job);
    let worker = activation.worker.or_else(|| {
        job_events.iter().find_map(|&id| {
            let event = timeline.get(id);
            let same_activation = event.kind == EventKind::JobActive
                && seconds_between(activation.at(), event.at()).abs() <= 1.0
                && event.at() < rerun_at;
            event.worker.filter(|_| same_activation)
        })
    });
    let reused = worker.as_deref().is_some_and(|w| {
        context
            .restarts
            .iter()
            .map(|&id| timeline.get(id))
            .any(|e| e.worker.as_deref() == Some(w) && activation.moment() < e.moment() && e.at() <= rerun_at)
    });
    let rerun_lock_end = plus_millis(rerun_at, to_i64(context.params_of(job).lock_duration));
    // The events from the earliest expiry on, found by halving: the timeline is in time order.
    let from = timeline.events().partition_point(|e| e.at() < expiry_earliest);
    let mut seen: Vec<EventId> = timeline
        .ids_from(from)
        .filter(|(_, e)| {
            let by_old_worker = !reused && worker.is_some() && e.worker == worker;
            let lock_error = context.job_of(e) == Some(job)
                && super::lease::bullmq_refusal(e).is_some()
                && e.at() < rerun_lock_end
                && (e.worker.is_none() || e.worker == worker);
            by_old_worker || lock_error
        })
        .map(|(id, _)| id)
        .collect();
    seen.sort_unstable();
    if !seen.is_empty() {
        LostLockCause::LivedOn { seen }
    } else if restart.is_some() {
        LostLockCause::ProcessDied
    } else {
        LostLockCause::Unknown
    }
}

/// Adds the ledger's rounds for the two activations: how the application recorded the lost run
/// and its rerun.
fn attach_rounds(
    context: &Context,
    job: JobKey,
    activated_at: DateTime<Utc>,
    rerun_at: DateTime<Utc>,
    finding: &mut Finding,
) {
    let timeline = context.timeline;
    let of_job = context.rounds.iter().filter(|r| context.job_of_round(r) == Some(job));
    let lost = of_job.clone().find(|r| {
        let start = r.start_at(timeline);
        activated_at <= start && start < rerun_at
    });
    let again = of_job.clone().find(|r| r.start_at(timeline) >= rerun_at);
    if let Some(round) = lost {
        finding.metric("run_id", Value::Text(round.run_id.to_string()));
        finding.evidence.extend(round.started());
        finding.evidence.extend(round.ended());
        if let Some(ended) = round.ended() {
            let event = timeline.get(ended);
            if event.kind == EventKind::RoundFailed {
                finding.note("the ledger marked the lost run failed, but that does not release BullMQ's lock: only its expiry does");
            }
        }
    }
    if let Some(round) = again {
        finding.metric("rerun_run_id", Value::Text(round.run_id.to_string()));
        finding.evidence.extend(round.started());
    }
    finding.evidence.sort_unstable();
    finding.evidence.dedup();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::{Context, Settings};
    use crate::model::params::ParamOverrides;
    use crate::model::{Event, Origin, Timeline};

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    /// On PostgreSQL a renewal leaves the stall mark: a lock shorter than two checks, renewed for
    /// a long time, is moved by the first effective check after its expiry (Redis: a renewal
    /// unmarks it, so two checks may be needed); a lock that runs out before any check saw the
    /// job waits for the check that marks it and the next.
    #[test]
    fn on_postgres_the_mark_survives_renewals() {
        let params = LockParams { lock_duration: 2_000, stalled_interval: 1_500, ..LockParams::default() };
        let activated = at("2026-12-06T09:00:00Z");
        let renewed_long = at("2026-12-06T09:01:00Z");
        let (end, formula, _) = postgres_window(&params, activated, renewed_long, "lock_expired_latest_at");
        assert_eq!(end, at("2026-12-06T09:01:03Z"));
        assert_eq!(formula, "lock_expired_latest_at + 2 × stalledInterval (3 s)");
        assert_eq!(detection_delay_ms(&params).0, 6_000, "Redis: two checks after a renewal");
        let never_renewed = at("2026-12-06T09:00:02Z");
        let (end, formula, _) = postgres_window(&params, activated, never_renewed, "lock_expired_at");
        assert_eq!(end, at("2026-12-06T09:00:06Z"));
        assert!(formula.starts_with("activated_at + 4 × stalledInterval (6 s)"), "{formula}");
    }

    fn event(line: u32, when: &str, kind: EventKind, job: Option<&str>) -> Event {
        let origin = Origin { channel: crate::model::Channel::Log, source: 0, line };
        let mut event = Event::new(at(when).into(), kind, origin);
        event.edit().job_id = job.map(crate::model::Text::from);
        event
    }

    fn params(lock_ms: u64) -> LockParams {
        LockParams::resolve(
            &ParamOverrides {
                lock_duration: Some(lock_ms),
                stalled_interval: Some(30_000),
                ..ParamOverrides::default()
            },
            &ParamOverrides::default(),
        )
    }

    fn run(events: Vec<Event>, params: &LockParams) -> Vec<Finding> {
        let timeline = Timeline::new(events);
        let settings = Settings::default();
        StalledRerun.detect(&Context::new(&timeline, params, &settings))
    }

    #[test]
    fn restart_before_first_renewal_gives_an_exact_expiry() {
        let findings = run(
            vec![
                event(1, "2026-10-07T00:33:00Z", EventKind::JobActive, Some("j")),
                event(2, "2026-10-07T00:37:26Z", EventKind::ProcessStart, None),
                event(3, "2026-10-07T00:53:00Z", EventKind::JobActive, Some("j")),
            ],
            &params(1_178_000),
        );
        assert_eq!(findings.len(), 1);
        let f = &findings[0];
        assert_eq!(f.get("first_renewal_earliest_at"), Some(&Value::Time(at("2026-10-07T00:37:54.500Z"))));
        assert_eq!(f.get("first_renewal_due_at"), Some(&Value::Time(at("2026-10-07T00:42:49Z"))));
        assert_eq!(f.get("lock_expired_at"), Some(&Value::Time(at("2026-10-07T00:52:38Z"))));
        assert_eq!(f.get("restart_to_rerun_s"), Some(&Value::Seconds(934.0)));
        assert_eq!(f.get("stalled_check_window_end_at"), Some(&Value::Time(at("2026-10-07T00:53:38Z"))));
        assert_eq!(f.get("rerun_in_stalled_window"), Some(&Value::Flag(true)));
        assert_eq!(f.get("stalled_logged"), Some(&Value::Flag(false)));
        assert_eq!(f.evidence, vec![0, 1, 2]);
    }

    fn from_instance(mut event: Event, instance: &str) -> Event {
        event.edit().instance = Some(crate::model::Text::from(instance));
        event
    }

    #[test]
    fn a_restart_of_another_pod_is_not_the_restart_that_ended_the_job() {
        // One export of two pods (kubectl logs --prefix): web-2 restarts, the job ran on web-1.
        let events = |restarted: &str| {
            vec![
                from_instance(event(1, "2026-10-07T00:33:00Z", EventKind::JobActive, Some("j")), "pod=web-1"),
                from_instance(event(2, "2026-10-07T00:37:26Z", EventKind::ProcessStart, None), restarted),
                from_instance(event(3, "2026-10-07T00:53:00Z", EventKind::JobActive, Some("j")), "pod=web-2"),
            ]
        };
        let other = run(events("pod=web-2"), &params(1_178_000));
        assert_eq!(other.len(), 1);
        assert_eq!(other[0].get("restart_at"), None, "web-2's restart did not end web-1's process");
        assert!(other[0].evidence.iter().all(|&id| id != 1));
        let own = run(events("pod=web-1"), &params(1_178_000));
        assert_eq!(own[0].get("restart_at"), Some(&Value::Time(at("2026-10-07T00:37:26Z"))));
        assert_eq!(own[0].get("lock_expired_at"), Some(&Value::Time(at("2026-10-07T00:52:38Z"))));
    }

    #[test]
    fn an_activation_from_the_events_stream_takes_the_instance_of_its_log_line() {
        // The stream's `active` names no worker; the log line of the same activation does.
        let stream = |line, when| {
            let mut e = event(line, when, EventKind::JobActive, Some("j"));
            e.set_origin(Origin { channel: crate::model::Channel::EventsStream, source: 1, line });
            e
        };
        let findings = run(
            vec![
                stream(1, "2026-10-07T00:33:00Z"),
                from_instance(event(1, "2026-10-07T00:33:00.004Z", EventKind::JobActive, Some("j")), "pod=web-1"),
                from_instance(event(2, "2026-10-07T00:37:26Z", EventKind::ProcessStart, None), "pod=web-2"),
                stream(2, "2026-10-07T00:53:00Z"),
            ],
            &params(1_178_000),
        );
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].get("restart_at"), None);
    }

    fn in_source(mut event: Event, source: u16) -> Event {
        let origin = event.origin();
        event.set_origin(Origin { source, ..origin });
        event
    }

    #[test]
    fn whole_second_restart_in_the_activations_second_is_the_restart_and_is_said_as_a_span() {
        // The activation from the events stream (ms); a NestJS log (whole seconds) writes its own
        // line of it, and the restart, 0.222 s after it in truth, in the same second: stamped
        // before the activation.
        let findings = run(
            vec![
                in_source(event(1, "2026-12-01T21:40:25.584Z", EventKind::JobActive, Some("1")), 0),
                in_source(event(1, "2026-12-01T21:40:20Z", EventKind::ProcessStart, None), 1),
                in_source(event(3, "2026-12-01T21:40:25Z", EventKind::JobActive, Some("1")), 1),
                in_source(event(2, "2026-12-01T21:40:25Z", EventKind::ProcessStart, None), 1),
                in_source(event(2, "2026-12-01T21:40:28.983Z", EventKind::JobActive, Some("1")), 0),
            ],
            &params(3_000),
        );
        assert_eq!(findings.len(), 1);
        let f = &findings[0];
        assert_eq!(f.get("restart_at"), Some(&Value::Time(at("2026-12-01T21:40:25Z"))));
        assert_eq!(f.get("activation_to_restart_s"), Some(&Value::Seconds(0.0)));
        // Died by 21:40:26 at the latest, before the earliest renewal at 21:40:26.334: exact expiry.
        assert_eq!(f.get("died_before_first_renewal"), Some(&Value::Flag(true)));
        assert_eq!(f.get("lock_expired_at"), Some(&Value::Time(at("2026-12-01T21:40:28.584Z"))));
        // The span, in the metrics as in the summary: from the activation (the line is stamped
        // before it) to the end of the line's second.
        assert_eq!(f.get("restart_resolution_s"), Some(&Value::Seconds(1.0)));
        assert_eq!(f.get("restart_latest_at"), Some(&Value::Time(at("2026-12-01T21:40:26Z"))));
        assert_eq!(f.get("activation_to_restart_max_s"), Some(&Value::Seconds(0.416)));
        assert_eq!(f.get("restart_to_rerun_min_s"), Some(&Value::Seconds(2.983)));
        assert_eq!(f.get("restart_to_rerun_s"), Some(&Value::Seconds(3.399)), "from the activation, not 21:40:25");
        assert!(f.summary.contains("restarted between {restart_at} and {restart_latest_at}"), "{}", f.summary);
        assert!(
            f.summary.contains("{activation_to_restart_s}–{activation_to_restart_max_s} after activation"),
            "{}",
            f.summary
        );
        assert!(
            f.summary.contains("{restart_to_rerun_min_s}–{restart_to_rerun_s} passed from restart to rerun"),
            "{}",
            f.summary
        );
        let formula = |name: &str| f.derivations.iter().find(|d| d.result == name).map(|d| d.formula.clone());
        assert!(formula("restart_to_rerun_s").unwrap().starts_with("rerun_at − activated_at: the most"));
        assert!(formula("restart_to_rerun_min_s").unwrap().starts_with("rerun_at − restart_latest_at: the least"));
        assert!(
            formula("died_before_first_renewal").unwrap().starts_with("restart_latest_at ≤ first_renewal_earliest_at")
        );
    }

    #[test]
    fn whole_second_restart_too_close_to_the_first_renewal_gives_an_expiry_window() {
        // Known only to lie in 21:40:29.000–30.000: the earliest renewal (29.733) may have come first.
        let findings = run(
            vec![
                in_source(event(1, "2026-12-01T21:40:28.983Z", EventKind::JobActive, Some("1")), 0),
                in_source(event(3, "2026-12-01T21:40:28Z", EventKind::JobActive, Some("1")), 1),
                in_source(event(1, "2026-12-01T21:40:29Z", EventKind::ProcessStart, None), 1),
                in_source(event(2, "2026-12-01T21:40:32.439Z", EventKind::JobActive, Some("1")), 0),
            ],
            &params(3_000),
        );
        let f = &findings[0];
        assert_eq!(f.get("died_before_first_renewal"), Some(&Value::Flag(false)));
        assert_eq!(f.get("lock_expired_earliest_at"), Some(&Value::Time(at("2026-12-01T21:40:31.983Z"))));
        assert_eq!(f.get("lock_expired_latest_at"), Some(&Value::Time(at("2026-12-01T21:40:32.439Z"))));
        assert_eq!(f.get("activation_to_restart_s"), Some(&Value::Seconds(0.017)));
        assert_eq!(f.get("activation_to_restart_max_s"), Some(&Value::Seconds(1.017)));
        assert_eq!(f.get("restart_to_rerun_min_s"), Some(&Value::Seconds(2.439)));
        assert_eq!(f.get("restart_to_rerun_s"), Some(&Value::Seconds(3.439)));
        let formula = |name: &str| f.derivations.iter().find(|d| d.result == name).map(|d| d.formula.clone());
        assert_eq!(
            formula("died_before_first_renewal").as_deref(),
            Some("restart_latest_at > first_renewal_earliest_at (the restart at its latest)")
        );
        assert_eq!(formula("lock_expired_latest_at").as_deref(), Some("rerun_at"));
    }

    #[test]
    fn restart_after_a_possible_renewal_gives_an_expiry_window() {
        let findings = run(
            vec![
                event(1, "2026-10-07T00:33:00Z", EventKind::JobActive, Some("j")),
                // A log of milliseconds: the restart is known to the millisecond.
                event(2, "2026-10-07T00:40:00.250Z", EventKind::ProcessStart, None),
                event(3, "2026-10-07T01:00:00Z", EventKind::JobActive, Some("j")),
                event(4, "2026-10-07T00:59:59Z", EventKind::JobStalled, Some("j")),
            ],
            &params(1_178_000),
        );
        let f = &findings[0];
        assert_eq!(f.get("lock_expired_at"), None);
        assert_eq!(f.get("lock_expired_earliest_at"), Some(&Value::Time(at("2026-10-07T00:52:38Z"))));
        assert_eq!(f.get("lock_expired_latest_at"), Some(&Value::Time(at("2026-10-07T00:59:38.250Z"))));
        assert_eq!(f.get("stalled_logged"), Some(&Value::Flag(true)));
    }

    #[test]
    fn a_completed_attempt_followed_by_another_is_not_a_rerun() {
        let findings = run(
            vec![
                event(1, "2026-10-07T00:33:00Z", EventKind::JobActive, Some("j")),
                event(2, "2026-10-07T00:34:00Z", EventKind::JobFailed, Some("j")),
                event(3, "2026-10-07T00:34:05Z", EventKind::JobActive, Some("j")),
            ],
            &params(30_000),
        );
        assert!(findings.is_empty());
    }

    #[test]
    fn rerun_before_the_lock_could_expire_is_flagged_outside_the_window() {
        let findings = run(
            vec![
                event(1, "2026-10-07T00:33:00Z", EventKind::JobActive, Some("j")),
                event(2, "2026-10-07T00:33:10Z", EventKind::JobActive, Some("j")),
            ],
            &params(30_000),
        );
        assert_eq!(findings[0].get("rerun_in_stalled_window"), Some(&Value::Flag(false)));
    }

    #[test]
    fn a_job_failed_at_once_over_the_stall_limit_did_not_rerun_the_processor() {
        let in_stream = |line, when, kind, detail: Option<&str>| {
            let mut e = event(line, when, kind, Some("j"));
            e.set_origin(crate::model::Origin { channel: Channel::EventsStream, source: 7, ..e.origin() });
            e.set_detail(detail.map(crate::model::Text::from));
            e
        };
        let findings = run(
            vec![
                in_stream(1, "2026-10-07T00:33:00Z", EventKind::JobActive, None),
                in_stream(2, "2026-10-07T00:34:00Z", EventKind::JobActive, None),
                // The worker's own log line of the same activation comes a moment later.
                event(3, "2026-10-07T00:34:00.002Z", EventKind::JobActive, Some("j")),
                in_stream(
                    4,
                    "2026-10-07T00:34:00.005Z",
                    EventKind::JobFailed,
                    Some("job stalled more than allowable limit"),
                ),
            ],
            &params(30_000),
        );
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].get("processor_reran"), Some(&Value::Flag(false)));
        assert!(findings[0].summary.contains("failed at once"));
    }

    fn by(mut event: Event, worker: &str) -> Event {
        event.edit().worker = Some(crate::model::Text::from(worker));
        event
    }

    #[test]
    fn a_restart_and_silence_from_the_old_pid_mean_the_process_died() {
        let findings = run(
            vec![
                by(event(1, "2026-10-07T00:33:00Z", EventKind::JobActive, Some("j")), "41877"),
                by(event(2, "2026-10-07T00:37:19Z", EventKind::Error, None), "41877"),
                by(event(3, "2026-10-07T00:37:26Z", EventKind::ProcessStart, None), "52117"),
                by(event(4, "2026-10-07T00:53:00Z", EventKind::JobActive, Some("j")), "52117"),
            ],
            &params(1_178_000),
        );
        let f = &findings[0];
        assert_eq!(f.get("lost_lock_cause"), Some(&Value::Text("process-died".into())));
        assert_eq!(f.get("old_worker_last_seen_at"), None);
        assert!(f.summary.contains("because the process died"), "{}", f.summary);
        assert!(f.notes.iter().any(|n| n.contains("await worker.close()")));
        assert_eq!(f.evidence, vec![0, 2, 3], "the cause adds no evidence");
    }

    #[test]
    fn the_old_worker_still_writing_after_expiry_lived_on_without_renewing() {
        let mut renewal = event(3, "2026-10-07T00:00:45Z", EventKind::Error, Some("j"));
        renewal.set_detail(Some("could not renew lock for job j".into()));
        let mut refused = by(event(5, "2026-10-07T00:01:20Z", EventKind::LockRefused, Some("j")), "100");
        refused.set_detail(Some("moveToFinished".into()));
        let findings = run(
            vec![
                by(event(1, "2026-10-07T00:00:00Z", EventKind::JobActive, Some("j")), "100"),
                by(event(2, "2026-10-07T00:00:20Z", EventKind::JobProgress, Some("j")), "100"),
                renewal,
                by(event(4, "2026-10-07T00:01:00Z", EventKind::JobActive, Some("j")), "200"),
                refused,
            ],
            &params(30_000),
        );
        let f = &findings[0];
        assert_eq!(f.get("lost_lock_cause"), Some(&Value::Text("lived-on-without-renewing".into())));
        assert_eq!(f.get("old_worker_last_seen_at"), Some(&Value::Time(at("2026-10-07T00:01:20Z"))));
        assert!(f.summary.contains("still wrote 2 event(s) after the lock expired"), "{}", f.summary);
        assert!(f.notes.iter().any(|n| n.contains("off the event loop")));
        assert_eq!(f.evidence, vec![0, 2, 3, 4], "the progress line at +20 s came before the expiry");
    }

    #[test]
    fn no_restart_and_no_sign_of_the_old_worker_is_unknown() {
        let findings = run(
            vec![
                by(event(1, "2026-10-07T00:00:00Z", EventKind::JobActive, Some("j")), "100"),
                by(event(2, "2026-10-07T00:01:00Z", EventKind::JobActive, Some("j")), "200"),
            ],
            &params(30_000),
        );
        assert_eq!(findings[0].get("lost_lock_cause"), Some(&Value::Text("unknown".into())));
        assert!(findings[0].summary.contains("not in the evidence"));
    }

    #[test]
    fn a_restarted_process_reusing_the_pid_is_not_the_old_worker() {
        let findings = run(
            vec![
                by(event(1, "2026-10-07T00:00:00Z", EventKind::JobActive, Some("j")), "1"),
                by(event(2, "2026-10-07T00:00:05Z", EventKind::ProcessStart, None), "1"),
                by(event(3, "2026-10-07T00:00:40Z", EventKind::Error, None), "1"),
                by(event(4, "2026-10-07T00:01:00Z", EventKind::JobActive, Some("j")), "1"),
            ],
            &params(30_000),
        );
        assert_eq!(findings[0].get("lost_lock_cause"), Some(&Value::Text("process-died".into())));
    }

    #[test]
    fn old_versions_renew_exactly_lock_renew_time_after_activation() {
        let mut p = params(1_178_000);
        p.version = Some("3.9.2".into());
        assert_eq!(RenewalModel::for_version(p.version.as_deref()), RenewalModel::PerJobTimer);
        assert_eq!(RenewalModel::PerJobTimer.first_renewal_window(&p), (589_000, 589_000));
        assert_eq!(RenewalModel::for_version(Some("5.58.0")), RenewalModel::BatchTimer);
        assert_eq!(RenewalModel::for_version(None), RenewalModel::BatchTimer);
        // Bull 4.16.5 is no BullMQ 4.x: its lock extender is a timer per job.
        let bull = LockParams { bull_version: Some("4.16.5".into()), ..LockParams::default() };
        assert_eq!(RenewalModel::for_params(&bull), RenewalModel::PerJobTimer);
        assert_eq!(RenewalModel::for_version(Some("4.16.5")), RenewalModel::BatchTimer);
    }
}
