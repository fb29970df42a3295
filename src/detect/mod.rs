//! Timeline → findings.
//!
//! Each finding is one file with one `Detector`; `DETECTORS` is the only list of them, and
//! `explain`, the docs check and the report all read it. A detector reads the timeline, the lock
//! parameters and the analysis settings, and writes findings. It knows nothing of files, flags or
//! printing, and it reasons from times and ids, never from the order of lines. Three files are not
//! findings but readings several detectors share: `lease` (the lease an owner held at a moment, from
//! a lease ledger), `retries` (a job's attempts and the causes of their failures) and `stalls`
//! (each stall, with the log lines that record it).

pub mod clock_offset;
pub mod clocks;
pub mod duplicate_effect;
pub mod duplicate_selection;
pub mod early_takeover;
pub mod jobs;
pub mod lease;
pub mod links;
pub mod lock_headroom;
pub mod lock_params_contradicted;
pub mod orphaned_round;
pub mod processes;
pub mod retries;
pub mod retry_exhausted;
pub mod retry_storm;
pub mod stale_completion;
pub mod stale_heartbeat;
pub mod stalled_limit_exceeded;
pub mod stalled_rerun;
pub mod stalls;
pub mod stuck_running;
pub mod sweep_overlap;
pub mod unlogged_stall;

use rustc_hash::FxHashSet;

use crate::model::event::ByHandle;
use crate::model::job::JobKey;
use crate::model::rounds::{self, Attempt, Rounds};
use crate::model::timeline::EventId;
use crate::model::{Chain, Channel, EventKind, Finding, LockParams, Moment, Scope, Timeline};
use jobs::{JobEvents, JobIndex, kind_bit};

/// Settings that shape detection, validated before analysis starts.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Settings {
    /// `duplicate-selection`: `None` = the later selection happened while the earlier round was
    /// still running (default); `Some(s)` = the two selections are at most `s` seconds apart.
    pub duplicate_window_s: Option<f64>,
    /// The zone each source's wall-clock timestamps were read in, by source position (`None` for
    /// sources whose times carry their own offset or are epoch counts).
    pub source_zones: Vec<Option<chrono_tz::Tz>>,
}

/// Everything a detector may read, with the groupings several detectors need built once.
pub struct Context<'a> {
    pub timeline: &'a Timeline,
    pub params: &'a LockParams,
    pub settings: &'a Settings,
    pub rounds: Rounds,
    /// Each job's activations (see `rounds::JobAttempts`), in job order.
    pub attempts: rounds::JobAttempts,
    /// Every event that names a job, by job (queue and id, see `jobs`), in time order.
    pub job_events: JobEvents,
    /// Each scope's job: what `job_of` answers.
    place_of_scope: ByHandle<Scope, u32>,
    /// Job ids of several queues, and the events that named them without a queue: given to no
    /// job (see `jobs`).
    pub unattributed: Vec<jobs::Unattributed>,
    /// Jobs with a lease claim: their attempts are their claims (see `retries`).
    pub lease_jobs: FxHashSet<JobKey>,
    /// Every process start, in time order.
    pub restarts: Vec<EventId>,
    /// The kinds of the events that name a job, one bit per kind: a detector that reads only a
    /// few kinds has nothing to do on a case without them (a BullMQ case has no lease rows).
    job_kinds: u32,
    /// The first entry of BullMQ's events stream, when one was read: the stream is trimmed, so
    /// it cannot speak for anything earlier. The earliest of every stream read: a question about
    /// one job asks `stream_start_for` instead, which knows the job's queue.
    pub stream_from: Option<chrono::DateTime<chrono::Utc>>,
    /// Each events stream read: its source, its queue and its first entry, in source order.
    streams: Vec<jobs::StreamStart>,
    /// The stalls and their log lines (`stalls::read`), read once by whichever detector asks
    /// first: `stalled-rerun` and `unlogged-stall` must see the same matching.
    stalls: std::sync::OnceLock<stalls::Stalls>,
    /// Which logs, hosts and instances run one process at a time (`processes`), read when a
    /// detector first asks which restart ended a job's process.
    processes: std::sync::OnceLock<processes::Processes>,
    /// How late each source writes what the events stream records (`clocks`), measured when a
    /// detector first asks when an activation happened.
    lags: std::sync::OnceLock<clocks::Lags>,
}

impl<'a> Context<'a> {
    pub fn new(timeline: &'a Timeline, params: &'a LockParams, settings: &'a Settings) -> Self {
        // Two independent passes over millions of events, on as many cores as there are: the
        // rounds, and everything keyed by job.
        let (rounds, jobs) = std::thread::scope(|scope| {
            let rounds = scope.spawn(|| rounds::rounds(timeline));
            let jobs = JobIndex::build(timeline, params.lock_duration);
            let rounds = rounds.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (rounds, jobs)
        });
        Context {
            timeline,
            params,
            settings,
            rounds,
            attempts: jobs.attempts,
            job_events: jobs.job_events,
            place_of_scope: jobs.place_of_scope,
            unattributed: jobs.unattributed,
            lease_jobs: jobs.lease_jobs,
            restarts: jobs.restarts,
            job_kinds: jobs.job_kinds,
            stream_from: jobs.stream_from,
            streams: jobs.streams,
            stalls: std::sync::OnceLock::new(),
            processes: std::sync::OnceLock::new(),
            lags: std::sync::OnceLock::new(),
        }
    }

    /// The lock parameters the jobs of `job`'s queue ran under (`LockParams::of_queue`).
    pub fn params_of(&self, job: JobKey) -> &'a LockParams {
        self.params.of_queue(job.queue.as_ref().map(ustr::Ustr::as_str))
    }

    /// Every stall, with the log lines matched to it (see `stalls`).
    pub fn stalls(&self) -> &stalls::Stalls {
        self.stalls.get_or_init(|| stalls::read(self))
    }

    /// The job `event` is about (its queue and id), when it names one that could be attributed
    /// (see `jobs`).
    pub fn job_of(&self, event: &crate::model::Event) -> Option<JobKey> {
        JobIndex::job_of_scope(&self.place_of_scope, &self.job_events, event.scope())
    }

    /// The job that ran `round`, as its rows name it (they share one scope).
    pub fn job_of_round(&self, round: &crate::model::Round) -> Option<JobKey> {
        self.job_of(self.timeline.get(round.first_event))
    }
}

impl Context<'_> {
    /// The events of `job`, in time order (none: empty).
    pub fn events_of_job(&self, job: JobKey) -> &[EventId] {
        self.job_events.get(job)
    }

    /// The job's activations (see `rounds::JobAttempts`), in time order.
    pub fn attempts_of_job(&self, job: JobKey) -> &[Attempt] {
        self.job_events.attempts_of(job, &self.attempts)
    }

    /// When the events stream that would have recorded `job`'s events begins, as far as the
    /// evidence tells which stream that is: the streams that have an entry of the job; else the
    /// streams of its queue (a stream declared for no queue may be any queue's); else, when the
    /// job's queue is not known, every stream. Of several, the latest start: each may be the job's.
    /// `None`: no stream read can be the job's.
    pub fn stream_start_for(&self, job: JobKey) -> Option<chrono::DateTime<chrono::Utc>> {
        jobs::stream_start(self.timeline, &self.streams, job, self.events_of_job(job))
    }

    /// Whether any event that names a job is of one of `kinds`.
    pub fn jobs_have(&self, kinds: &[EventKind]) -> bool {
        kinds.iter().any(|&kind| self.job_kinds & kind_bit(kind) != 0)
    }

    /// Whether any event of `job` is of one of `kinds`.
    pub fn job_has(&self, job: JobKey, kinds: &[EventKind]) -> bool {
        self.job_events.has(job, kinds)
    }

    /// Whether `job` ended a run in `[from, to]`: BullMQ completed or failed it (a record of the
    /// stream, a log or a job hash), or, for a job only a ledger knows, its round finished. The
    /// application's ledger saying its run finished or failed does not end a BullMQ job: only
    /// BullMQ moving it to completed or failed releases its lock, and a process killed after its
    /// last row leaves the job active until its lock expires.
    pub fn job_ended_between(&self, job: JobKey, from: Moment, to: Moment) -> bool {
        let events = self.events_of_job(job);
        let timeline = self.timeline;
        let queue_saw_it = events.iter().any(|&id| timeline.get(id).origin().channel != Channel::Ledger);
        events.iter().any(|&id| {
            let event = timeline.get(id);
            let ends = match event.kind {
                EventKind::JobCompleted | EventKind::JobFailed => event.origin().channel != Channel::Ledger,
                EventKind::RoundFinished => !queue_saw_it,
                _ => false,
            };
            ends && from <= event.moment() && event.moment() <= to
        })
    }

    /// Whether BullMQ's events stream recorded a stall of `job` in `(from, to]`.
    fn stall_entry_between(&self, job: JobKey, from: Moment, to: Moment) -> bool {
        self.job_has(job, &[EventKind::JobStalled])
            && self.events_of_job(job).iter().any(|&id| {
                let event = self.timeline.get(id);
                event.kind == EventKind::JobStalled
                    && event.origin().channel == Channel::EventsStream
                    && from < event.moment()
                    && event.moment() <= to
            })
    }

    /// Consecutive activations of one job that BullMQ recorded a stall between, or with nothing
    /// ending a run between them (`job_ended_between`): the second is a recovery of the first (a
    /// stalled rerun), not a retry or a repeat.
    pub fn recoveries(&self) -> Vec<(JobKey, EventId, EventId)> {
        let mut found = Vec::new();
        // Nearly every job of a big ledger was activated once: its events are not looked up.
        for (job, attempts) in self.attempts.iter().filter(|(_, attempts)| attempts.len() >= 2) {
            for pair in attempts.windows(2) {
                if self.is_recovery(job, &pair[0], &pair[1]) {
                    found.push((job, pair[0].activated, pair[1].activated));
                }
            }
        }
        found
    }

    /// Whether the attempt `second` of `job` recovered `first`, the one before it (see
    /// `recoveries`). What ended `first` came before `second`'s earliest record: a job failed at
    /// once when it is taken again (over the stall limit) fails after its activation, though a
    /// record of the activation on another clock may be stamped later than the failure.
    pub fn is_recovery(&self, job: JobKey, first: &Attempt, second: &Attempt) -> bool {
        let from = self.timeline.get(first.activated).moment();
        let to = self.timeline.get(second.activated).moment();
        let ended_by = Moment::from_nanos(second.first.nanos().min(to.nanos()).saturating_sub(1));
        self.stall_entry_between(job, from, to) || !self.job_ended_between(job, from, ended_by)
    }
}

pub trait Detector: Sync {
    /// The stable finding code, e.g. `stalled-rerun`.
    fn code(&self) -> &'static str;
    /// The finding's documentation (Markdown), shown by `leasetrace explain`.
    fn doc(&self) -> &'static str;
    fn detect(&self, context: &Context) -> Vec<Finding>;
    /// The findings `finding` (one of this detector's) follows from, by position in `found`
    /// (every finding of the analysis, in time order): the causal links the report's headline
    /// and chains present. A link to itself or to no finding is dropped (`model::chain::arrange`).
    fn follows_from(&self, finding: &Finding, found: &links::Found) -> Vec<usize> {
        let _ = (finding, found);
        Vec::new()
    }
}

/// Every finding leasetrace knows. Adding one: one file and one line here.
#[rustfmt::skip]
pub static DETECTORS: &[&dyn Detector] = &[
    &stalled_rerun::StalledRerun,
    &stalled_limit_exceeded::StalledLimitExceeded,
    &sweep_overlap::SweepOverlap,
    &duplicate_selection::DuplicateSelection,
    &clock_offset::ClockOffsetSuspected,
    &unlogged_stall::UnloggedStall,
    &lock_headroom::LockHeadroom,
    &stale_completion::StaleCompletion,
    &stale_heartbeat::StaleHeartbeat,
    &early_takeover::EarlyTakeover,
    &duplicate_effect::DuplicateEffect,
    &retry_exhausted::RetryExhausted,
    &retry_storm::RetryStorm,
    &stuck_running::StuckRunning,
    &orphaned_round::OrphanedRound,
    &lock_params_contradicted::LockParamsContradicted,
];

/// Runs every detector; findings come out ordered by time, then code, for stable reports.
///
/// Detectors only read the context, so they run on every core at once; their findings are
/// gathered in registry order before the sort, so the report is the same however they were
/// scheduled.
pub fn analyze(context: &Context) -> (Vec<Finding>, Vec<Chain>) {
    let in_list_order: Vec<usize> = (0..DETECTORS.len()).collect();
    let found = crate::parallel::map_in_order(&in_list_order, crate::parallel::cores(), |index| {
        DETECTORS[index].detect(context)
    });
    let mut findings: Vec<Finding> = found.into_iter().flatten().collect();
    findings.sort_by(|a, b| (a.at, a.code).cmp(&(b.at, b.code)));
    // Every detector sees every finding: a link is stated by the effect's detector.
    let found = links::Found::new(&findings);
    let links: Vec<Vec<usize>> = findings
        .iter()
        .map(|finding| find(finding.code).map(|d| d.follows_from(finding, &found)).unwrap_or_default())
        .collect();
    for (finding, causes) in findings.iter_mut().zip(links) {
        finding.caused_by = causes;
    }
    crate::model::chain::arrange(findings)
}

pub fn find(code: &str) -> Option<&'static dyn Detector> {
    DETECTORS.iter().copied().find(|d| d.code() == code)
}

/// The BullMQ behaviour models the analysis applied, for the report: they follow the version in
/// the lock parameters, and say so when it was not given.
pub fn models_applied(params: &LockParams) -> Vec<String> {
    if let Some(bull) = &params.bull_version {
        let named = crate::model::bull::named(bull);
        return vec![
            format!("{named}: lock renewal model: {}", crate::model::bull::renewal_model()),
            format!("{named}: stall-limit model: {}", crate::model::bull::stall_limit_model()),
            format!("{named}: {}", crate::model::bull::stall_check_model()),
        ];
    }
    let version = params.version.as_deref();
    let named = match (version, params.version_at_least.as_deref()) {
        (Some(v), _) => format!("BullMQ {v}"),
        (None, Some(floor)) => format!("BullMQ version not known exactly (at least {floor})"),
        (None, None) => "BullMQ version not given".to_string(),
    };
    // Without an exact version the stall-limit model's text says itself how the version stands
    // (not given, or a dependency range's floor), so it is not prefixed again: "BullMQ version not
    // given: stall-limit model: BullMQ version not given: ..." said one thing twice.
    let stall_limit = stalled_limit_exceeded::failure_model(params).0;
    let stall_limit = if version.is_some() {
        format!("{named}: stall-limit model: {stall_limit}")
    } else {
        format!("stall-limit model: {stall_limit}")
    };
    let mut models = vec![
        format!("{named}: lock renewal model: {}", stalled_rerun::RenewalModel::for_version(version).describe()),
        stall_limit,
    ];
    if params.backend == crate::model::params::QueueBackend::Postgres {
        models.push(POSTGRES_MODEL.to_string());
    }
    models
}

/// The stall model of BullMQ's PostgreSQL backend, as the report's assumptions say it
/// (docs/bullmq.md, "BullMQ on PostgreSQL").
pub const POSTGRES_MODEL: &str = "BullMQ on PostgreSQL (the evidence holds the backend's tables; the backend exists from bullmq 6.0.0): a job's lock is its locked_until_ms, the activating or renewing worker's clock + lockDuration, which a stalled check compares with its own worker's clock; the lock times here take the workers' clocks and the database's (bullmq.event's times) to agree, and allow 1 s between a worker reading its clock and its call writing the row (a lock may run out that much before the active row + lockDuration). Every effective check marks every active job and a renewal leaves the mark, so a job is moved at the first effective check after its lock ran out; the check writes 'stalled' alone (no 'waiting'). A lock that ran out and was not yet swept can still be renewed and the job completed. A late worker's finishing call is refused with 'Lock mismatch' (another worker holds the job) or 'is not in the active state' (it was moved back to wait or finished), never 'Missing lock' (leasetrace docs bullmq)";

/// The version-dependent models that no version decided, each with the findings that conclude from
/// it: the report's `bullmq-version-assumed` warning. The lock renewal model is not one: BullMQ
/// before 3.10 (2023) is the only other, and a stall's conclusion does not hang on it (only the
/// bounds of the first renewal's window move).
pub fn version_assumptions(params: &LockParams) -> Vec<(&'static str, String)> {
    let (model, decided) = stalled_limit_exceeded::failure_model(params);
    match decided {
        Some(_) => Vec::new(),
        None => vec![("stalled-limit-exceeded", format!("stall-limit model: {model}"))],
    }
}

#[cfg(test)]
mod tests {
    use super::lease::tests::row;
    use super::*;
    use crate::model::Text;

    #[test]
    fn each_job_has_its_events_in_time_order_and_no_other() {
        let mut rows = vec![
            row(1, 30.0, EventKind::LeaseClaimed, "w1", Some(1), None, None),
            row(2, 10.0, EventKind::LeaseClaimed, "w1", Some(1), None, None),
            row(3, 20.0, EventKind::LeaseClaimed, "w1", Some(1), None, None),
            row(4, 15.0, EventKind::LeaseClaimed, "w1", Some(1), None, None),
        ];
        rows[1].edit().job_id = Some("job-2".into());
        rows[3].edit().job_id = None;
        let timeline = Timeline::new(rows);
        let (params, settings) = (LockParams::default(), Settings::default());
        let context = Context::new(&timeline, &params, &settings);
        let lines = |job: &str| -> Vec<u32> {
            context.events_of_job(job.into()).iter().map(|&id| timeline.get(id).origin().line).collect()
        };
        assert_eq!(lines("job-1"), [3, 1]);
        assert_eq!(lines("job-2"), [2]);
        assert!(lines("job-3").is_empty());
        let mut jobs: Vec<(String, usize)> =
            context.job_events.iter().map(|(job, ids)| (job.to_string(), ids.len())).collect();
        jobs.sort();
        assert_eq!(jobs, [("job-1".to_string(), 2), ("job-2".to_string(), 1)]);
        assert!(context.job_has("job-1".into(), &[EventKind::JobFailed, EventKind::LeaseClaimed]));
        assert!(!context.job_has("job-1".into(), &[EventKind::JobFailed]));
        assert!(!context.job_has("job-3".into(), &[EventKind::LeaseClaimed]));
        assert_eq!(timeline.kind(1), EventKind::LeaseClaimed);
    }

    #[test]
    fn jobs_are_picked_by_their_kinds_and_by_a_second_activation() {
        // job-1: claimed; job-2: activated twice (a job-active and a round-started); job-3:
        // activated once and failed; job-4: activated once.
        let mut rows = vec![
            row(1, 10.0, EventKind::LeaseClaimed, "w1", Some(1), None, None),
            row(2, 11.0, EventKind::JobActive, "w1", None, None, None),
            row(3, 12.0, EventKind::RoundStarted, "w1", None, None, None),
            row(4, 13.0, EventKind::RoundStarted, "w1", None, None, None),
            row(5, 14.0, EventKind::RoundFailed, "w1", None, None, None),
            row(6, 15.0, EventKind::JobActive, "w1", None, None, None),
        ];
        for (row, job) in rows.iter_mut().zip(["job-1", "job-2", "job-2", "job-3", "job-3", "job-4"]) {
            row.edit().job_id = Some(job.into());
        }
        let timeline = Timeline::new(rows);
        let (params, settings) = (LockParams::default(), Settings::default());
        let context = Context::new(&timeline, &params, &settings);
        let picked = |jobs: Vec<(JobKey, &[EventId])>| {
            let mut names: Vec<String> = jobs.iter().map(|(job, _)| job.to_string()).collect();
            names.sort();
            names
        };
        let having = |kinds: &[EventKind]| picked(context.job_events.iter_having(kinds).collect());
        assert_eq!(having(&[EventKind::LeaseClaimed]), ["job-1"]);
        assert_eq!(having(&[EventKind::RoundFailed, EventKind::LeaseClaimed]), ["job-1", "job-3"]);
        assert!(having(&[EventKind::JobStalled]).is_empty());
        let reactivated = |kinds: &[EventKind]| picked(context.job_events.iter_reactivated_or_having(kinds).collect());
        assert_eq!(reactivated(&[]), ["job-2"]);
        assert_eq!(reactivated(&[EventKind::LeaseClaimed]), ["job-1", "job-2"]);
        // Each with all of its events.
        let events: Vec<usize> =
            context.job_events.iter_having(&[EventKind::RoundFailed]).map(|(_, ids)| ids.len()).collect();
        assert_eq!(events, [2]);
    }

    #[test]
    fn a_job_is_judged_by_the_stream_of_its_own_queue() {
        let event = |source: u16, second: i64, job: &str, queue: Option<&str>| {
            let channel = if source < 2 { Channel::EventsStream } else { Channel::Log };
            let at = chrono::DateTime::from_timestamp(1_796_028_400 + second, 0).unwrap();
            let mut event = crate::model::Event::new(
                at.into(),
                EventKind::JobActive,
                crate::model::Origin { channel, source, line: 1 },
            );
            event.edit().job_id = Some(job.into());
            event.edit().queue = queue.map(Text::from);
            event
        };
        let timeline = Timeline::new(vec![
            event(0, 0, "x", Some("a")),
            event(1, 300, "y", Some("b")),
            event(2, 100, "y", Some("b")),
        ]);
        let (params, settings) = (LockParams::default(), Settings::default());
        let context = Context::new(&timeline, &params, &settings);
        let start = |second: i64| chrono::DateTime::from_timestamp(1_796_028_400 + second, 0);
        let job = |id: &str, queue: Option<&str>| JobKey::new(queue.map(Text::from), id.into());
        assert_eq!(context.stream_start_for(job("y", Some("b"))), start(300), "the stream that names it");
        assert_eq!(context.stream_start_for(job("z", Some("a"))), start(0), "its queue's");
        assert_eq!(context.stream_start_for(job("z", Some("c"))), None, "no stream of its queue");
        assert_eq!(context.stream_start_for(job("z", None)), start(300), "either: the later");
        assert_eq!(context.stream_from, start(0));
    }

    #[test]
    fn a_logged_activation_a_moment_before_the_streams_first_entry_is_within_the_stream() {
        // The log's clock is 2 ms ahead of Redis': the stream began with this activation, and
        // saw the stall (none), rather than starting after it.
        let at = |text: &str| chrono::DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&chrono::Utc);
        let event = |channel: Channel, when: &str, job: &str| {
            let mut event = crate::model::Event::new(
                at(when).into(),
                EventKind::JobActive,
                crate::model::Origin { channel, source: u16::from(channel == Channel::Log), line: 1 },
            );
            event.edit().job_id = Some(job.into());
            event
        };
        let timeline = Timeline::new(vec![
            event(Channel::Log, "2026-12-01T00:00:00.000Z", "j"),
            event(Channel::EventsStream, "2026-12-01T00:00:00.002Z", "other"),
            event(Channel::Log, "2026-12-01T00:01:00.000Z", "j"),
        ]);
        let (params, settings) = (LockParams::default(), Settings::default());
        let findings = stalled_rerun::StalledRerun.detect(&Context::new(&timeline, &params, &settings));
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].get("stalled_in_stream"), Some(&crate::model::Value::Flag(false)));
        assert!(!findings[0].notes.iter().any(|n| n.contains("trimmed")), "{:?}", findings[0].notes);
    }
}
