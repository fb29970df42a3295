//! `lock-params-contradicted`: BullMQ did something sooner than the lock parameters in force allow.
//!
//! Every lock time of a report (expiry, renewal window, stalled-check window) is computed from
//! `lockDuration` and `stalledInterval`; when those are wrong (defaults assumed, a stale file, a
//! config changed since), every time is wrong with them, confidently. The evidence can prove them
//! wrong, because BullMQ's stalled check obeys two rules (`moveStalledJobsToWait-*.lua`, the
//! `stalledChecker` loop of `worker.ts`):
//!
//! 1. It moves a job back to wait only when the job's lock key is gone and its id is in the
//!    `stalled` set, put there by the previous effective check while the job was active (a renewal
//!    or a finish takes it out again). The lock was set when the job became active (A) with a time
//!    to live of `lockDuration`, and renewals only extend it; the marking check came after A, and
//!    the moving check at least `stalledInterval` after it. So a move at M means
//!    `lockDuration ≤ M − A` and `stalledInterval ≤ M − A`: a `stalled` record, or a second
//!    activation by a new process after the first one's died, sooner than that contradicts them.
//! 2. Effective checks are at least `stalledInterval` apart: each sets the queue-wide
//!    `stalled-check` key for exactly `stalledInterval`, and a check that finds it does nothing.
//!    So two moves by different checks, closer together than that, contradict `stalledInterval`.
//!
//! Records are written by different clocks with different resolutions, a moment after what they
//! record: each bound is widened by an allowance for that (see `Allowances`), and a finding is made
//! only when even the widened bound is below the value in force. One finding per parameter, with
//! the tightest bound and how many records contradict it; stalled-rerun keeps its own finding of
//! the rerun and points here.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::model::params::Param;
use crate::model::timeline::EventId;
use crate::model::{Channel, Event, EventKind, Finding, JobKey, Severity, Text, Value};

use super::{Context, Detector};

pub const CODE: &str = "lock-params-contradicted";

pub struct LockParamsContradicted;

/// How much later than what it records a record may be written, and how far two clocks may be
/// apart: the slack every bound is widened by (docs/findings/lock-params-contradicted.md).
pub struct Allowances;

impl Allowances {
    /// A `job-active` log line or a ledger row is written after BullMQ set the lock (the
    /// `active` listener, the processor's first line): within this. The events stream's `active`
    /// entry is written by the script that sets the lock: 0.
    pub const ACTIVATION_MS: i64 = 1000;
    /// Two sources (two hosts, a host and Redis) keep different clocks: at most this apart.
    pub const CLOCK_MS: i64 = 1000;
    /// A `stalled` listener writes its line within this after the check that moved the job.
    pub const LISTENER_MS: i64 = 1000;
    /// Records of jobs moved by one check lie within this of each other (the stream's are written
    /// by one script; log lines by one listener, one after another).
    pub const SAME_CHECK_MS: i64 = 1000;
}

/// What shows the stalled check at work, and sooner than the parameters allow.
#[derive(Debug, Clone)]
enum Shown {
    /// A `stalled` record of a job, `gap_ms` after its activation.
    EarlyStall { job: JobKey, activation: EventId, stalled: EventId },
    /// A second activation by a new process (the first one's restarted), with no stall record.
    /// `restart_resolution_ms`: the restart's log writes times to this only (0: milliseconds).
    EarlyRerun { job: JobKey, activation: EventId, rerun: EventId, restart: EventId, restart_resolution_ms: i64 },
    /// Moves by two different checks.
    Cadence { earlier: EventId, later: EventId },
}

/// One record's bound on one parameter.
#[derive(Debug, Clone)]
struct Bound {
    param: Param,
    shown: Shown,
    gap_ms: i64,
    allowance_ms: i64,
    /// Why the allowance is what it is, for the arithmetic.
    allowance_parts: Vec<String>,
    /// The value in force for the work the record is about, and where it came from.
    in_force_ms: u64,
    in_force_origin: String,
    at: DateTime<Utc>,
}

impl Bound {
    fn bound_ms(&self) -> i64 {
        self.gap_ms + self.allowance_ms
    }

    fn contradicts(&self) -> bool {
        i64::try_from(self.in_force_ms).is_ok_and(|in_force| self.bound_ms() < in_force)
    }
}

impl Detector for LockParamsContradicted {
    fn code(&self) -> &'static str {
        CODE
    }

    fn doc(&self) -> &'static str {
        include_str!("../../docs/findings/lock-params-contradicted.md")
    }

    fn detect(&self, context: &Context) -> Vec<Finding> {
        let resolution = Resolution::new(context);
        let mut bounds = early_recoveries(context, &resolution);
        bounds.extend(cadence(context, &resolution));
        let mut by_param: BTreeMap<Param, Vec<Bound>> = BTreeMap::new();
        for bound in bounds.into_iter().filter(Bound::contradicts) {
            by_param.entry(bound.param).or_default().push(bound);
        }
        by_param.into_values().map(|bounds| finding(context, &bounds)).collect()
    }
}

/// Each source's time resolution: whole seconds when every event of it falls on one (NestJS
/// writes no fraction), else milliseconds, which no parameter worth checking is near: counted as 0.
/// Worked out for a source when first asked: the look stops at the source's first event with a
/// fraction, so only a log in whole seconds is read to its end.
struct Resolution<'a> {
    timeline: &'a crate::model::Timeline,
    whole_seconds: std::cell::RefCell<Vec<Option<bool>>>,
    /// BullMQ on PostgreSQL: locks and checks run on the workers' clocks, read before their calls,
    /// and the event rows on the database's (`Allowances::CLOCK_MS` more for every bound).
    postgres: bool,
}

impl<'a> Resolution<'a> {
    fn new(context: &'a Context) -> Resolution<'a> {
        Resolution {
            timeline: context.timeline,
            whole_seconds: std::cell::RefCell::new(Vec::new()),
            postgres: context.params.backend == crate::model::params::QueueBackend::Postgres,
        }
    }

    fn of(&self, event: &Event) -> i64 {
        let source = event.origin().source;
        let mut known = self.whole_seconds.borrow_mut();
        if known.len() <= usize::from(source) {
            known.resize(usize::from(source) + 1, None);
        }
        let whole = *known[usize::from(source)].get_or_insert_with(|| {
            self.timeline
                .events()
                .iter()
                .filter(|e| e.origin().source == source)
                .all(|e| e.moment().subsec_nanos() == 0)
        });
        if whole { 1000 } else { 0 }
    }
}

/// The slack between two records: the first one's writing delay (an activation's, or a
/// listener's), the clocks when they come from two sources, and both resolutions.
fn allowance(first: &Event, second: &Event, resolution: &Resolution<'_>, cadence: bool) -> (i64, Vec<String>) {
    let mut parts = Vec::new();
    let mut total = 0;
    let mut add = |ms: i64, why: String| {
        if ms > 0 {
            total += ms;
            parts.push(why);
        }
    };
    if cadence {
        if first.origin().channel == Channel::Log {
            add(
                Allowances::LISTENER_MS,
                format!(
                    "{} s for the stalled listener (its line comes up to that after its check)",
                    seconds(Allowances::LISTENER_MS)
                ),
            );
        }
    } else if first.origin().channel != Channel::EventsStream {
        add(
            Allowances::ACTIVATION_MS,
            format!(
                "{} s for the activation record (written up to that after BullMQ set the lock)",
                seconds(Allowances::ACTIVATION_MS)
            ),
        );
    }
    if first.origin().source != second.origin().source {
        add(Allowances::CLOCK_MS, format!("{} s for two sources' clocks", seconds(Allowances::CLOCK_MS)));
    } else if resolution.postgres {
        add(
            Allowances::CLOCK_MS,
            format!(
                "{} s for the workers' clocks (PostgreSQL: a lock and a check run on the worker's clock, read before its call; the event rows on the database's)",
                seconds(Allowances::CLOCK_MS)
            ),
        );
    }
    let resolutions = resolution.of(first) + resolution.of(second);
    add(resolutions, format!("{} s for timestamps in whole seconds", seconds(resolutions)));
    if parts.is_empty() {
        parts.push("0 s (both records from one clock, in milliseconds)".into());
    }
    (total, parts)
}

/// The values in force for work that started with `event`.
fn in_force(context: &Context, param: Param, event: &Event) -> (u64, String) {
    // The parameters of the event's job's queue, when its workers logged their own.
    let params = context.job_of(event).map_or(context.params, |job| context.params_of(job));
    let (value, line) = params.value_at(param, event.at(), event.origin().source, event.worker);
    let origin = match line {
        Some(line) => format!("logged by the worker at {}", line.place),
        None => params.describe_origin(param),
    };
    (value, origin)
}

/// Stall records and reruns sooner after their activation than the lock and the check allow.
fn early_recoveries(context: &Context, resolution: &Resolution<'_>) -> Vec<Bound> {
    let timeline = context.timeline;
    let mut bounds = Vec::new();
    // Only a job activated twice, or with a stall record, can show anything.
    for (job, events) in context.job_events.iter_reactivated_or_having(&[EventKind::JobStalled]) {
        let attempts = context.attempts_of_job(job);
        let stalls = stall_records(context, job, events, resolution);
        if attempts.len() < 2 && stalls.is_empty() {
            continue;
        }
        let ended_between = |from: DateTime<Utc>, to: DateTime<Utc>, kinds: &[EventKind]| {
            events.iter().any(|&id| {
                let event = timeline.get(id);
                kinds.contains(&event.kind) && from <= event.at() && event.at() <= to
            })
        };
        for (k, attempt) in attempts.iter().enumerate() {
            let activation = timeline.get(attempt.activated);
            let next = attempts.get(k + 1).map(|a| a.activated);
            // A stall record belongs to the activation before it; a listener's line can come a
            // moment after the rerun's own activation, so the window runs that far past it, and
            // a record right after an activation belongs to the one before.
            let resolution_ms = if stalls.is_empty() { 0 } else { resolution.of(activation) };
            let lag = chrono::Duration::milliseconds(Allowances::LISTENER_MS + resolution_ms);
            let from = activation.at() + lag;
            let until = next.map(|id| timeline.get(id).at() + lag);
            let stall = stalls.iter().copied().find(|&id| {
                let at = timeline.get(id).at();
                from < at
                    && until.is_none_or(|until| at <= until)
                    && !context.job_ended_between(job, activation.moment(), timeline.get(id).moment())
            });
            if let Some(stalled) = stall {
                let record = timeline.get(stalled);
                for param in [Param::LockDuration, Param::StalledInterval] {
                    bounds.push(bound(
                        context,
                        param,
                        (activation, record),
                        resolution,
                        Shown::EarlyStall { job, activation: attempt.activated, stalled },
                    ));
                }
                continue;
            }
            let Some(rerun_id) = next else { continue };
            let rerun = timeline.get(rerun_id);
            if context.job_ended_between(job, activation.moment(), rerun.moment())
                || ended_between(activation.at(), rerun.at(), &[EventKind::JobDelayed])
            {
                continue;
            }
            // A stream that covers the job shows every stall: without one there, the job came
            // back some other way (a rate limit's move to wait, a manual retry).
            let stream_covers = context.stream_from.is_some_and(|from| from <= activation.at())
                && events.iter().any(|&id| timeline.get(id).origin().channel == Channel::EventsStream);
            if stream_covers {
                continue;
            }
            // The old process died: it restarted (in its own log when that log has a restart).
            // A log of whole seconds (NestJS) writes a restart in the second it happened in: a
            // line stamped before the activation, in its second, may be the restart after it
            // (as stalled-rerun reads it). The restart is only a condition here, never a term of
            // the bound (the rerun and the activation are).
            let restarts: Vec<EventId> = context
                .restarts
                .iter()
                .copied()
                .filter(|&id| {
                    let restart = timeline.get(id);
                    let late = chrono::Duration::milliseconds(resolution.of(restart));
                    activation.at() < restart.at() + late && restart.at() <= rerun.at()
                })
                .collect();
            let restart = context.restart_of(activation, &restarts);
            let Some((restart, _)) = restart else { continue };
            let restart_resolution_ms = resolution.of(timeline.get(restart));
            for param in [Param::LockDuration, Param::StalledInterval] {
                bounds.push(bound(
                    context,
                    param,
                    (activation, rerun),
                    resolution,
                    Shown::EarlyRerun {
                        job,
                        activation: attempt.activated,
                        rerun: rerun_id,
                        restart,
                        restart_resolution_ms,
                    },
                ));
            }
        }
    }
    bounds
}

/// The job's stall records, one for each stall, in time order: of the records the shared matcher
/// (`stalls`) says are one stall, the most precise (BullMQ's stream entry, written by the script
/// that moved the job, else the line of the finest log, the earliest of those), so that a
/// whole-second log line does not loosen the bound the stream allows; and every stalled line
/// matched to no stall, on its own.
fn stall_records(context: &Context, job: JobKey, events: &[EventId], resolution: &Resolution<'_>) -> Vec<EventId> {
    let timeline = context.timeline;
    let known = context.stalls();
    let mut records: Vec<EventId> = Vec::new();
    let mut matched: Vec<EventId> = Vec::new();
    for stall in known.of_job(job) {
        matched.extend(&stall.lines);
        let finest_line = stall.lines.iter().copied().min_by_key(|&id| (resolution.of(timeline.get(id)), id));
        records.extend(stall.entry.or(finest_line));
    }
    matched.extend(known.of_job(job).filter_map(|stall| stall.entry));
    let unmatched: Vec<EventId> = events
        .iter()
        .copied()
        .filter(|&id| {
            let event = timeline.get(id);
            event.kind == EventKind::JobStalled
                && matches!(event.origin().channel, Channel::Log | Channel::EventsStream)
                && !matched.contains(&id)
        })
        .collect();
    records.extend(unmatched);
    records.sort_unstable();
    records
}

fn bound(
    context: &Context,
    param: Param,
    (first, second): (&Event, &Event),
    resolution: &Resolution<'_>,
    shown: Shown,
) -> Bound {
    let cadence = matches!(shown, Shown::Cadence { .. });
    let (allowance_ms, allowance_parts) = allowance(first, second, resolution, cadence);
    let (in_force_ms, in_force_origin) = in_force(context, param, first);
    Bound {
        param,
        shown,
        gap_ms: (second.at() - first.at()).num_milliseconds(),
        allowance_ms,
        allowance_parts,
        in_force_ms,
        in_force_origin,
        at: second.at(),
    }
}

/// Moves by different stalled checks closer together than stalledInterval, queue by queue. The
/// events stream's `stalled` entries are the checks' own records, one stream per queue (each
/// stream file on its own); without a stream, the logs' `job-stalled` lines, by their `queue`.
/// Log lines that name no queue are one queue's only when the evidence shows one queue: two
/// queues' checks interleave. Records within `SAME_CHECK_MS` (and the allowances) of each other
/// are one check's.
fn cadence(context: &Context, resolution: &Resolution<'_>) -> Vec<Bound> {
    let timeline = context.timeline;
    let mut streams: BTreeMap<u16, Vec<EventId>> = BTreeMap::new();
    let mut logs: BTreeMap<Option<Text>, Vec<EventId>> = BTreeMap::new();
    // Stall records are a few of millions of events: their kinds are looked at first.
    let stalls = (0..).zip(timeline.kinds_in_order()).filter(|(_, kind)| **kind == EventKind::JobStalled);
    for (id, _) in stalls {
        let event = timeline.get(id);
        if event.job_id.is_none() {
            continue;
        }
        match event.origin().channel {
            Channel::EventsStream => streams.entry(event.origin().source).or_default().push(id),
            Channel::Log => logs.entry(event.queue).or_default().push(id),
            _ => {}
        }
    }
    let groups: Vec<Vec<EventId>> = if streams.is_empty() {
        if logs.contains_key(&None) && queues_seen(context) > 1 {
            logs.remove(&None);
        }
        logs.into_values().collect()
    } else {
        streams.into_values().collect()
    };
    let mut bounds = Vec::new();
    for records in groups {
        let mut check_starts: Vec<EventId> = Vec::new();
        let mut last: Option<EventId> = None;
        for id in records {
            let event = timeline.get(id);
            let same_check = last.is_some_and(|previous| {
                let previous = timeline.get(previous);
                let (slack, _) = allowance(previous, event, resolution, true);
                (event.at() - previous.at()).num_milliseconds() <= Allowances::SAME_CHECK_MS + slack
            });
            if !same_check {
                check_starts.push(id);
            }
            last = Some(id);
        }
        for pair in check_starts.windows(2) {
            let (earlier, later) = (timeline.get(pair[0]), timeline.get(pair[1]));
            bounds.push(bound(
                context,
                Param::StalledInterval,
                (earlier, later),
                resolution,
                Shown::Cadence { earlier: pair[0], later: pair[1] },
            ));
        }
    }
    bounds
}

/// How many queues the activations and stalls name (0 when none names one).
fn queues_seen(context: &Context) -> usize {
    let timeline = context.timeline;
    let mut queues: Vec<Text> = (0..)
        .zip(timeline.kinds_in_order())
        .filter(|(_, kind)| matches!(kind, EventKind::JobActive | EventKind::JobStalled))
        .filter_map(|(id, _)| timeline.get(id).queue)
        .collect();
    queues.sort_unstable_by(|a, b| a.as_str().cmp(b.as_str()));
    queues.dedup();
    queues.len()
}

/// The finding for one parameter: the tightest of the bounds that contradict it.
fn finding(context: &Context, bounds: &[Bound]) -> Finding {
    let timeline = context.timeline;
    let tightest = bounds.iter().min_by_key(|b| (b.bound_ms(), b.at)).expect("a finding has a bound");
    let param = tightest.param;
    let mut finding = Finding::new(CODE, Severity::Warning, tightest.at);
    finding.metric("parameter", Value::Text(param.name().to_string()));
    finding.metric("in_force_s", Value::Seconds(millis_as_seconds(tightest.in_force_ms)));
    finding.metric("in_force_origin", Value::Text(tightest.in_force_origin.clone()));
    let what = match &tightest.shown {
        Shown::EarlyStall { .. } => "early-stall",
        Shown::EarlyRerun { .. } => "early-rerun",
        Shown::Cadence { .. } => "check-cadence",
    };
    finding.metric("evidence_kind", Value::Text(what.to_string()));
    let rule = match (param, &tightest.shown) {
        (Param::LockDuration, _) => {
            "a stalled check moves a job only once its lock key is gone, and the lock lives at least lockDuration from the activation (renewals only extend it)"
        }
        (_, Shown::Cadence { .. }) => {
            "two effective stalled checks are at least stalledInterval apart (each sets the queue's stalled-check key for stalledInterval, and a check that finds it does nothing)"
        }
        _ => {
            "a stalled check moves only a job that the check before it marked while the job was active, and checks are at least stalledInterval apart"
        }
    };
    let summary = match &tightest.shown {
        Shown::EarlyStall { job, activation, stalled } => {
            finding.metric("job_id", Value::Text(job.to_string()));
            finding.metric("activated_at", Value::Time(timeline.get(*activation).at()));
            finding.metric("recovered_at", Value::Time(timeline.get(*stalled).at()));
            finding.metric("activation_to_recovery_s", Value::Seconds(gap_seconds(tightest)));
            finding.derive("activation_to_recovery_s", "recovered_at − activated_at");
            finding.evidence.extend([*activation, *stalled]);
            format!(
                "The evidence contradicts {{parameter}} {{in_force_s}} ({{in_force_origin}}): job {{job_id}}, activated at {{activated_at}}, was moved back to wait by a stalled check at {{recovered_at}}, {{activation_to_recovery_s}} later. As {rule}: {} ≤ {{bound_s}}.",
                param.name()
            )
        }
        Shown::EarlyRerun { job, activation, rerun, restart, restart_resolution_ms } => {
            finding.metric("job_id", Value::Text(job.to_string()));
            finding.metric("activated_at", Value::Time(timeline.get(*activation).at()));
            let restart_at = timeline.get(*restart).at();
            finding.metric("restart_at", Value::Time(restart_at));
            // A restart known to a second is said as the span it allows, as stalled-rerun says it.
            let restarted = if *restart_resolution_ms > 0 {
                finding.metric(
                    "restart_latest_at",
                    Value::Time(restart_at + chrono::Duration::milliseconds(*restart_resolution_ms)),
                );
                finding.derive(
                    "restart_latest_at",
                    format!("restart_at + {} s (its log writes times to that only)", seconds(*restart_resolution_ms)),
                );
                "between {restart_at} and {restart_latest_at}"
            } else {
                "at {restart_at}"
            };
            finding.metric("recovered_at", Value::Time(timeline.get(*rerun).at()));
            finding.metric("activation_to_recovery_s", Value::Seconds(gap_seconds(tightest)));
            finding.derive("activation_to_recovery_s", "recovered_at − activated_at");
            finding.evidence.extend([*activation, *restart, *rerun]);
            format!(
                "The evidence contradicts {{parameter}} {{in_force_s}} ({{in_force_origin}}): job {{job_id}}, activated at {{activated_at}}, was taken again at {{recovered_at}}, {{activation_to_recovery_s}} later, after its process restarted {restarted}, with no completion or failure between. Only a stalled check hands a dead process's job to another worker, and as {rule}: {} ≤ {{bound_s}}.",
                param.name()
            )
        }
        Shown::Cadence { earlier, later } => {
            finding.metric("earlier_check_at", Value::Time(timeline.get(*earlier).at()));
            finding.metric("later_check_at", Value::Time(timeline.get(*later).at()));
            finding.metric("check_gap_s", Value::Seconds(gap_seconds(tightest)));
            finding.derive("check_gap_s", "later_check_at − earlier_check_at");
            finding.evidence.extend([*earlier, *later]);
            format!(
                "The evidence contradicts {{parameter}} {{in_force_s}} ({{in_force_origin}}): BullMQ's stalled checks moved jobs at {{earlier_check_at}} and at {{later_check_at}}, {{check_gap_s}} apart, further apart than one check's records are. As {rule}: stalledInterval ≤ {{bound_s}}."
            )
        }
    };
    finding.summary = summary;
    finding.metric("allowance_s", Value::Seconds(millis_as_seconds_i(tightest.allowance_ms)));
    finding.derive("allowance_s", tightest.allowance_parts.join(" + "));
    finding.metric("bound_s", Value::Seconds(millis_as_seconds_i(tightest.bound_ms())));
    let gap_name =
        if matches!(tightest.shown, Shown::Cadence { .. }) { "check_gap_s" } else { "activation_to_recovery_s" };
    finding.derive("bound_s", format!("{gap_name} + allowance_s: the most {} can be", param.name()));
    #[allow(clippy::cast_possible_truncation)]
    finding.metric("contradicting_records", Value::Count(bounds.len() as u64));
    finding.evidence.sort_unstable();
    finding.evidence.dedup();

    let given = context.params.given(param);
    for value in given {
        let agrees = i64::try_from(value.value).is_ok_and(|v| v <= tightest.bound_ms());
        finding.note(format!(
            "{} {} ({} {}) {} the evidence",
            param.name(),
            param.show(value.value),
            value.origin.describe(),
            value.place,
            if agrees { "agrees with" } else { "is contradicted by" }
        ));
    }
    if given.is_empty() {
        finding.note(format!(
            "no flag, parameters file or log line gave {}: {} is BullMQ's default; give the real value with {} or in the parameters file",
            param.name(),
            param.show(context.params.value(param)),
            param.flag()
        ));
    }
    let mut others: Vec<&Bound> = bounds.iter().filter(|b| !std::ptr::eq(*b, tightest)).collect();
    others.sort_by_key(|b| b.at);
    for other in others.iter().take(5) {
        finding.note(format!(
            "also: {} ≤ {} s ({})",
            param.name(),
            seconds(other.bound_ms()),
            describe(context, other)
        ));
    }
    if others.len() > 5 {
        finding.note(format!("… and {} more record(s) that contradict {}", others.len() - 5, param.name()));
    }
    finding.note("other ways a job comes back early leave other traces: a manual retry or a rate limit moves it without a stalled record, and a lock key deleted by hand or evicted by Redis (maxmemory with a volatile policy) expires it early; rule them out before trusting the bound");
    finding
}

fn describe(context: &Context, bound: &Bound) -> String {
    let timeline = context.timeline;
    let place = |id: EventId| {
        let event = timeline.get(id);
        format!("{}:{}", timeline.path(event), event.origin().line)
    };
    match &bound.shown {
        Shown::EarlyStall { job, activation, stalled } => {
            format!(
                "job {job}: stalled {} s after activation, {} → {}",
                seconds(bound.gap_ms),
                place(*activation),
                place(*stalled)
            )
        }
        Shown::EarlyRerun { job, activation, rerun, .. } => {
            format!(
                "job {job}: taken again {} s after activation, {} → {}",
                seconds(bound.gap_ms),
                place(*activation),
                place(*rerun)
            )
        }
        Shown::Cadence { earlier, later } => {
            format!("stalled checks {} s apart, {} → {}", seconds(bound.gap_ms), place(*earlier), place(*later))
        }
    }
}

fn gap_seconds(bound: &Bound) -> f64 {
    millis_as_seconds_i(bound.gap_ms)
}

#[allow(clippy::cast_precision_loss)]
fn millis_as_seconds(millis: u64) -> f64 {
    millis as f64 / 1000.0
}

#[allow(clippy::cast_precision_loss)]
fn millis_as_seconds_i(millis: i64) -> f64 {
    millis as f64 / 1000.0
}

fn seconds(millis: i64) -> String {
    crate::time::seconds_text(millis)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::Settings;
    use crate::model::params::{Declared, Logged, ParamOverrides};
    use crate::model::{LockParams, Origin, Timeline, WorkerSettings};

    const T0: &str = "2026-10-07T00:33:00Z";

    fn at(offset_ms: i64) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(T0).unwrap().with_timezone(&Utc) + chrono::Duration::milliseconds(offset_ms)
    }

    /// An event `offset_ms` after T0 from `channel` (the stream is source 0, the log source 1).
    fn event(offset_ms: i64, kind: EventKind, channel: Channel, job: Option<&str>) -> Event {
        let source = u16::from(channel != Channel::EventsStream);
        let line = u32::try_from(offset_ms.rem_euclid(10_000_000) / 100 + 2).unwrap();
        let mut event = Event::new(at(offset_ms).into(), kind, Origin { channel, source, line });
        event.edit().job_id = job.map(Text::from);
        event
    }

    fn stream(offset_ms: i64, kind: EventKind, job: &str) -> Event {
        event(offset_ms, kind, Channel::EventsStream, Some(job))
    }

    fn run(events: Vec<Event>, params: &LockParams) -> Vec<Finding> {
        let timeline = Timeline::new(events);
        let settings = Settings::default();
        LockParamsContradicted.detect(&Context::new(&timeline, params, &settings))
    }

    fn given(lock: u64, interval: u64) -> LockParams {
        let file =
            ParamOverrides { lock_duration: Some(lock), stalled_interval: Some(interval), ..ParamOverrides::default() };
        LockParams::resolve(&file, &ParamOverrides::default())
    }

    fn of<'a>(findings: &'a [Finding], param: &str) -> Option<&'a Finding> {
        findings.iter().find(|f| f.get("parameter") == Some(&Value::Text(param.into())))
    }

    #[test]
    fn a_stall_sooner_than_the_lock_could_expire_bounds_both_parameters() {
        // The default 30 s lock, but BullMQ's check moved the job 12.4 s after activation: both
        // records from the stream, one clock, so the bound is the gap itself.
        let findings = run(
            vec![
                stream(0, EventKind::JobActive, "7"),
                stream(12_400, EventKind::JobWaiting, "7"),
                stream(12_400, EventKind::JobStalled, "7"),
                stream(13_000, EventKind::JobActive, "7"),
            ],
            &LockParams::default(),
        );
        assert_eq!(findings.len(), 2, "{findings:#?}");
        let lock = of(&findings, "lockDuration").unwrap();
        assert_eq!(lock.get("evidence_kind"), Some(&Value::Text("early-stall".into())));
        assert_eq!(lock.get("in_force_s"), Some(&Value::Seconds(30.0)));
        assert_eq!(lock.get("activation_to_recovery_s"), Some(&Value::Seconds(12.4)));
        assert_eq!(lock.get("allowance_s"), Some(&Value::Seconds(0.0)));
        assert_eq!(lock.get("bound_s"), Some(&Value::Seconds(12.4)));
        assert_eq!(lock.get("recovered_at"), Some(&Value::Time(at(12_400))));
        assert_eq!(lock.severity, Severity::Warning);
        assert!(lock.summary.contains("lockDuration ≤ {bound_s}"), "{}", lock.summary);
        assert!(lock.notes.iter().any(|n| n.contains("BullMQ's default")), "{:?}", lock.notes);
        let interval = of(&findings, "stalledInterval").unwrap();
        assert_eq!(interval.get("bound_s"), Some(&Value::Seconds(12.4)));
    }

    #[test]
    fn a_stall_after_the_lock_expired_contradicts_nothing() {
        // lockDuration 12 s, stalledInterval 5 s: a move 14 s after activation is what BullMQ does.
        let findings = run(
            vec![
                stream(0, EventKind::JobActive, "7"),
                stream(14_000, EventKind::JobStalled, "7"),
                stream(14_100, EventKind::JobActive, "7"),
            ],
            &given(12_000, 5_000),
        );
        assert!(findings.is_empty(), "{findings:#?}");
    }

    #[test]
    fn log_records_are_widened_by_their_allowances() {
        // Activation in the log (written up to 1 s after the lock), the stall in the stream (another
        // clock): 12.4 s measured bounds lockDuration by 14.4 s. In force 14 s: no contradiction;
        // 15 s: one.
        let events = || {
            vec![
                event(0, EventKind::JobActive, Channel::Log, Some("7")),
                stream(12_400, EventKind::JobStalled, "7"),
                event(12_500, EventKind::JobActive, Channel::Log, Some("7")),
            ]
        };
        assert!(of(&run(events(), &given(14_000, 5_000)), "lockDuration").is_none());
        let findings = run(events(), &given(15_000, 5_000));
        let lock = of(&findings, "lockDuration").unwrap();
        assert_eq!(lock.get("bound_s"), Some(&Value::Seconds(14.4)));
        assert_eq!(lock.get("allowance_s"), Some(&Value::Seconds(2.0)));
    }

    #[test]
    fn a_rerun_by_a_new_process_before_expiry_bounds_the_lock_and_needs_the_restart() {
        let events = |restart: bool| {
            let mut events = vec![
                event(3, EventKind::JobActive, Channel::Log, Some("7")),
                event(13_003, EventKind::JobActive, Channel::Log, Some("7")),
            ];
            if restart {
                events.push(event(2_017, EventKind::ProcessStart, Channel::Log, None));
            }
            events
        };
        let findings = run(events(true), &LockParams::default());
        let lock = of(&findings, "lockDuration").unwrap();
        assert_eq!(lock.get("evidence_kind"), Some(&Value::Text("early-rerun".into())));
        // One log file, millisecond stamps: only the activation's 1 s.
        assert_eq!(lock.get("bound_s"), Some(&Value::Seconds(14.0)));
        assert_eq!(lock.get("restart_at"), Some(&Value::Time(at(2_017))));
        assert_eq!(lock.evidence.len(), 3);
        // Without a restart the first process may still hold the job: nothing is proven.
        assert!(run(events(false), &LockParams::default()).is_empty());
        // A rerun after a completion is a new run.
        let mut completed = events(true);
        completed.push(event(5_000, EventKind::JobCompleted, Channel::Log, Some("7")));
        // The same log in whole seconds: each stamp may be up to 1 s off.
        let whole = vec![
            event(0, EventKind::JobActive, Channel::Log, Some("7")),
            event(2_000, EventKind::ProcessStart, Channel::Log, None),
            event(13_000, EventKind::JobActive, Channel::Log, Some("7")),
        ];
        let findings = run(whole, &LockParams::default());
        assert_eq!(of(&findings, "lockDuration").unwrap().get("bound_s"), Some(&Value::Seconds(16.0)));
        assert!(run(completed, &LockParams::default()).is_empty());
    }

    /// A NestJS line (source 2, whole seconds) `offset_ms` after T0.
    fn nest(offset_ms: i64, kind: EventKind, job: Option<&str>) -> Event {
        assert_eq!(offset_ms % 1000, 0, "NestJS writes whole seconds");
        let mut event = event(offset_ms, kind, Channel::Log, job);
        event.set_origin(Origin { source: 2, ..event.origin() });
        event
    }

    #[test]
    fn an_early_stall_is_bounded_by_its_most_precise_record() {
        // The stream's entry at 28.982 and a NestJS line of the same stall, stamped 28: the
        // entry gives the bound (one clock, no allowance), not the line (≤ 4.416 s).
        let events = |entry: bool| {
            let mut events = vec![
                stream(25_584, EventKind::JobActive, "1"),
                nest(28_000, EventKind::JobStalled, Some("1")),
                stream(28_983, EventKind::JobActive, "1"),
            ];
            if entry {
                events.push(stream(28_982, EventKind::JobStalled, "1"));
            }
            events
        };
        let findings = run(events(true), &LockParams::default());
        let lock = of(&findings, "lockDuration").unwrap();
        assert_eq!(lock.get("recovered_at"), Some(&Value::Time(at(28_982))));
        assert_eq!(lock.get("allowance_s"), Some(&Value::Seconds(0.0)));
        assert_eq!(lock.get("bound_s"), Some(&Value::Seconds(3.398)));
        // Only the line: its second and the two clocks are allowed for.
        let findings = run(events(false), &LockParams::default());
        let lock = of(&findings, "lockDuration").unwrap();
        assert_eq!(lock.get("recovered_at"), Some(&Value::Time(at(28_000))));
        assert_eq!(lock.get("activation_to_recovery_s"), Some(&Value::Seconds(2.416)));
        assert_eq!(lock.get("allowance_s"), Some(&Value::Seconds(2.0)));
        let formula = lock.derivations.iter().find(|d| d.result == "allowance_s").unwrap();
        assert!(formula.formula.contains("1 s for timestamps in whole seconds"), "{}", formula.formula);
        assert_eq!(lock.get("bound_s"), Some(&Value::Seconds(4.416)));
    }

    #[test]
    fn a_whole_second_restart_in_the_activations_second_counts_for_an_early_rerun() {
        // Activation and rerun in a log of milliseconds; the restart in a NestJS log, stamped 25
        // though it came after the activation at 25.584.
        let findings = run(
            vec![
                event(25_584, EventKind::JobActive, Channel::Log, Some("1")),
                // The NestJS log's own line of the activation: the restart is that process's.
                nest(25_000, EventKind::JobActive, Some("1")),
                nest(25_000, EventKind::ProcessStart, None),
                event(28_983, EventKind::JobActive, Channel::Log, Some("1")),
            ],
            &LockParams::default(),
        );
        let lock = of(&findings, "lockDuration").expect("the restart in the activation's second is found");
        assert_eq!(lock.get("evidence_kind"), Some(&Value::Text("early-rerun".into())));
        assert_eq!(lock.get("restart_at"), Some(&Value::Time(at(25_000))));
        assert_eq!(lock.get("restart_latest_at"), Some(&Value::Time(at(26_000))));
        assert!(lock.summary.contains("restarted between {restart_at} and {restart_latest_at}"), "{}", lock.summary);
        // The restart is not a term of the bound: the gap and the activation's 1 s only.
        assert_eq!(lock.get("bound_s"), Some(&Value::Seconds(4.399)));
        // A millisecond restart before the activation is not its restart.
        let findings = run(
            vec![
                event(25_584, EventKind::JobActive, Channel::Log, Some("1")),
                event(25_100, EventKind::ProcessStart, Channel::Log, None),
                event(28_983, EventKind::JobActive, Channel::Log, Some("1")),
            ],
            &LockParams::default(),
        );
        assert!(findings.is_empty(), "{findings:#?}");
    }

    #[test]
    fn stalled_checks_closer_than_the_interval_bound_it_and_one_checks_records_do_not() {
        // Checks every 5 s although stalledInterval is 30 s; the two moves at 5.000 and 5.003 s
        // are one check's.
        let cadence = |gaps: &[i64]| {
            let mut events = Vec::new();
            for (n, &offset) in gaps.iter().enumerate() {
                let job = format!("j{n}");
                events.push(stream(offset - 40_000, EventKind::JobActive, &job));
                events.push(stream(offset, EventKind::JobStalled, &job));
            }
            events
        };
        let findings = run(cadence(&[0, 5_000, 5_003, 10_000]), &given(30_000, 30_000));
        assert_eq!(findings.len(), 1, "{findings:#?}");
        let interval = &findings[0];
        assert_eq!(interval.get("evidence_kind"), Some(&Value::Text("check-cadence".into())));
        assert_eq!(interval.get("check_gap_s"), Some(&Value::Seconds(5.0)));
        assert_eq!(interval.get("bound_s"), Some(&Value::Seconds(5.0)));
        assert_eq!(interval.get("contradicting_records"), Some(&Value::Count(2)));
        // At the right cadence (one to two intervals apart), nothing.
        assert!(run(cadence(&[0, 30_200, 90_100, 90_102]), &given(30_000, 30_000)).is_empty());
    }

    #[test]
    fn log_stalls_of_two_queues_are_not_one_cadence() {
        // Two queues' checks, 5 s apart from each other, each at its own 30 s cadence: lines that
        // name their queue are kept apart, lines that name none prove nothing when two queues run.
        let stall = |offset: i64, job: &str, queue: Option<&str>| {
            let mut e = event(offset, EventKind::JobStalled, Channel::Log, Some(job));
            e.edit().queue = queue.map(Text::from);
            e
        };
        let lines = |named: bool| {
            let (a, b) = if named { (Some("a"), Some("b")) } else { (None, None) };
            let mut events =
                vec![stall(100, "a1", a), stall(5_100, "b1", b), stall(30_200, "a2", a), stall(35_200, "b2", b)];
            let mut active = event(-60_000, EventKind::JobActive, Channel::Log, Some("a0"));
            active.edit().queue = Some("a".into());
            events.push(active);
            let mut active = event(-60_100, EventKind::JobActive, Channel::Log, Some("b0"));
            active.edit().queue = Some("b".into());
            events.push(active);
            events
        };
        assert!(run(lines(true), &given(30_000, 30_000)).is_empty());
        assert!(run(lines(false), &given(30_000, 30_000)).is_empty());
        // One queue whose lines name none: its checks 5 s apart contradict 30 s.
        let one = vec![stall(100, "a1", None), stall(5_100, "a2", None), stall(10_100, "a3", None)];
        assert_eq!(run(one, &given(30_000, 30_000)).len(), 1);
    }

    #[test]
    fn a_logged_value_is_checked_against_the_work_that_ran_under_it() {
        // The log says 30 s at the first boot and 12 s at the second: a stall 13 s after an
        // activation under the second is what BullMQ does, under the first it is not.
        let boot = |offset_ms: i64, lock: u64, line: u32| Logged {
            at: at(offset_ms),
            place: format!("server.log:{line}"),
            source: 1,
            worker: None,
            queue: None,
            settings: WorkerSettings {
                lock_duration: Some(lock),
                stalled_interval: Some(5_000),
                ..WorkerSettings::default()
            },
            event: 0,
        };
        let logged = vec![boot(-60_000, 30_000, 1), boot(100_000, 12_000, 90)];
        let declared =
            Declared { file: &ParamOverrides::default(), file_path: None, flags: &ParamOverrides::default() };
        let params = LockParams::resolve_with_log(declared, logged, &[]);
        let job = |start: i64, name: &str| {
            vec![
                event(start, EventKind::JobActive, Channel::Log, Some(name)),
                event(start + 13_000, EventKind::JobStalled, Channel::Log, Some(name)),
            ]
        };
        assert!(run(job(200_000, "late"), &params).is_empty());
        let findings = run(job(0, "early"), &params);
        let lock = of(&findings, "lockDuration").unwrap();
        assert_eq!(lock.get("in_force_s"), Some(&Value::Seconds(30.0)));
        assert_eq!(lock.get("in_force_origin"), Some(&Value::Text("logged by the worker at server.log:1".into())));
    }
}
