//! BullMQ's lock parameters, in BullMQ's own names and units (milliseconds).
//!
//! Defaults are BullMQ v5's worker defaults (see docs/inputs/params.md for the source lines); each value
//! remembers where it came from so that the report can say which numbers were assumed.
//!
//! Three things can give a parameter: a flag, the lock parameters file, and the worker settings an
//! application logged (`worker-settings` events). Flags and the file are what the user declared, so
//! they win (flag > file); a logged value is evidence, used only when neither gives the parameter
//! (origin `log`). Every value given is kept (`LockParams::given`), so that the report can say
//! when they disagree, and which value each job ran under when the log shows the settings change
//! between boots (`LockParams::value_at`).

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::Text;
use super::timeline::EventId;

/// BullMQ v5 `Worker` default: `lockDuration: 30000`.
pub const DEFAULT_LOCK_DURATION_MS: u64 = 30_000;
/// BullMQ v5 `Worker` default: `stalledInterval: 30000`.
pub const DEFAULT_STALLED_INTERVAL_MS: u64 = 30_000;
/// BullMQ v5 `Worker` default: `maxStalledCount: 1`.
pub const DEFAULT_MAX_STALLED_COUNT: u64 = 1;
/// The largest value a parameter may have (10^12: about 31 years of milliseconds). The detectors
/// add multiples of the durations to times of the timeline (years 1677-2262); a larger value,
/// never a real setting, would overflow that arithmetic, so the readers refuse it.
pub const MAX_PARAM_VALUE: u64 = 1_000_000_000_000;

/// BullMQ's default lockRenewTime, `lockDuration / 2`, in whole ms: never 0 (found by fuzzing: a
/// 1 ms lock gave a 0 ms renew time, which no flag or file may give). BullMQ divides without
/// rounding, and Node runs a timer of less than 1 ms after 1 ms.
pub fn half_of_lock(lock_duration: u64) -> u64 {
    (lock_duration / 2).max(1)
}

/// The four lock parameters, in the order reports list them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Param {
    LockDuration,
    LockRenewTime,
    StalledInterval,
    MaxStalledCount,
}

impl Param {
    pub const ALL: [Param; 4] =
        [Param::LockDuration, Param::LockRenewTime, Param::StalledInterval, Param::MaxStalledCount];

    /// BullMQ's option name.
    pub fn name(self) -> &'static str {
        match self {
            Param::LockDuration => "lockDuration",
            Param::LockRenewTime => "lockRenewTime",
            Param::StalledInterval => "stalledInterval",
            Param::MaxStalledCount => "maxStalledCount",
        }
    }

    /// The flag that gives it.
    pub fn flag(self) -> &'static str {
        match self {
            Param::LockDuration => "--lock-duration",
            Param::LockRenewTime => "--lock-renew-time",
            Param::StalledInterval => "--stalled-interval",
            Param::MaxStalledCount => "--max-stalled-count",
        }
    }

    /// All but `maxStalledCount` are milliseconds.
    pub fn is_duration(self) -> bool {
        self != Param::MaxStalledCount
    }

    /// A value with its unit: `12000 ms`, `1`.
    pub fn show(self, value: u64) -> String {
        if self.is_duration() { format!("{value} ms") } else { value.to_string() }
    }

    fn index(self) -> usize {
        self as usize
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ParamOrigin {
    /// Not given anywhere: BullMQ v5's default.
    Default,
    /// `lockRenewTime` not given: half of `lockDuration`, as BullMQ computes it.
    HalfOfLockDuration,
    /// Read from the lock parameters file.
    File,
    /// Given on the command line.
    Flag,
    /// Logged by the application (a `worker-settings` line), and given by no flag or file.
    Log,
}

/// Lock settings as one source gave them: any of the four, in BullMQ's units (milliseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkerSettings {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lock_duration: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lock_renew_time: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stalled_interval: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_stalled_count: Option<u64>,
}

impl WorkerSettings {
    pub fn get(&self, param: Param) -> Option<u64> {
        match param {
            Param::LockDuration => self.lock_duration,
            Param::LockRenewTime => self.lock_renew_time,
            Param::StalledInterval => self.stalled_interval,
            Param::MaxStalledCount => self.max_stalled_count,
        }
    }

    pub fn slot(&mut self, param: Param) -> &mut Option<u64> {
        match param {
            Param::LockDuration => &mut self.lock_duration,
            Param::LockRenewTime => &mut self.lock_renew_time,
            Param::StalledInterval => &mut self.stalled_interval,
            Param::MaxStalledCount => &mut self.max_stalled_count,
        }
    }

    pub fn is_empty(&self) -> bool {
        Param::ALL.iter().all(|&param| self.get(param).is_none())
    }

    /// The parameters given, with their values, in report order.
    pub fn entries(&self) -> impl Iterator<Item = (Param, u64)> + '_ {
        Param::ALL.into_iter().filter_map(|param| self.get(param).map(|value| (param, value)))
    }

    /// `lockDuration=12000ms stalledInterval=5000ms maxStalledCount=1`, for tables.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self
            .entries()
            .map(|(param, value)| {
                if param.is_duration() {
                    format!("{}={value}ms", param.name())
                } else {
                    format!("{}={value}", param.name())
                }
            })
            .collect();
        parts.join(" ")
    }
}

/// A `worker-settings` line of a log, as resolution and the detectors read it.
#[derive(Debug, Clone, PartialEq)]
pub struct Logged {
    pub at: DateTime<Utc>,
    /// `path:line`, for reports.
    pub place: String,
    /// The source's position in the case (`Origin::source`).
    pub source: u16,
    /// The worker (pid, host) the line names, if any.
    pub worker: Option<Text>,
    /// The queue whose worker the line describes, if it names one.
    pub queue: Option<Text>,
    pub settings: WorkerSettings,
    /// The event on the timeline, for evidence.
    pub event: EventId,
}

impl Logged {
    /// Every `worker-settings` event of the timeline, in time order.
    pub fn from_timeline(timeline: &super::Timeline) -> Vec<Logged> {
        let kinds = timeline.kinds_in_order();
        (0..)
            .zip(kinds)
            .filter(|(_, kind)| **kind == super::EventKind::WorkerSettings)
            .filter_map(|(id, _)| {
                let event = timeline.get(id);
                Some(Logged {
                    at: event.at(),
                    place: format!("{}:{}", timeline.path(event), event.origin().line),
                    source: event.origin().source,
                    worker: event.worker,
                    queue: event.queue,
                    settings: event.settings()?,
                    event: id,
                })
            })
            .collect()
    }

    /// Whether the lines give some parameter more than one value: only then does it matter which
    /// job ran under which (`Activation`).
    pub fn values_differ(logged: &[Logged]) -> bool {
        Param::ALL.iter().any(|&param| {
            let mut values = logged.iter().filter_map(|line| line.settings.get(param));
            values.next().is_some_and(|first| values.any(|value| value != first))
        })
    }
}

/// A job activation, as resolution weighs the logged values: when, in which source, by whom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Activation {
    pub at: DateTime<Utc>,
    pub source: u16,
    pub worker: Option<Text>,
    pub queue: Option<Text>,
}

impl Activation {
    /// Every activation of the timeline: `job-active` records but a job hash's (which keeps only
    /// the last) and ledger `round-started` rows, with a job id.
    pub fn from_timeline(timeline: &super::Timeline) -> Vec<Activation> {
        use super::{Channel, EventKind};
        let kinds = timeline.kinds_in_order();
        (0..)
            .zip(kinds)
            .filter(|(_, kind)| matches!(kind, EventKind::JobActive | EventKind::RoundStarted))
            .map(|(id, _)| timeline.get(id))
            .filter(|event| {
                event.job_id.is_some()
                    && match event.kind {
                        EventKind::JobActive => event.origin().channel != Channel::JobHash,
                        _ => event.origin().channel == Channel::Ledger,
                    }
            })
            .map(|event| Activation {
                at: event.at(),
                source: event.origin().source,
                worker: event.worker,
                queue: event.queue,
            })
            .collect()
    }
}

/// One value given for a parameter, and by what. Every distinct value is listed once, so that a
/// report can name each source of a disagreement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Given {
    pub value: u64,
    /// `flag`, `file` or `log`.
    pub origin: ParamOrigin,
    /// The flag, the parameters file's path, or the first log line (`path:line`) with this value.
    pub place: String,
    /// Log: when that first line was written.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "crate::model::input::rfc3339_opt")]
    pub at: Option<DateTime<Utc>>,
    /// Log: the worker that line names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker: Option<String>,
    /// Log: how many lines gave this value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<u64>,
    /// Log: the queues whose workers' lines gave this value, when the lines name their queue.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub queues: Vec<String>,
    /// Log, when the log gives the parameter more than one value: how many job activations came
    /// after a line with this value (of their worker, else of their source, else of any): the
    /// value they ran under, as far as the log says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub activations: Option<u64>,
    /// Whether this is the value the analysis uses.
    pub in_force: bool,
    /// Log: when the last line with this value was written (ties of `activations` go to the
    /// value logged last).
    #[serde(skip)]
    last_logged: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LockParams {
    pub lock_duration: u64,
    pub lock_renew_time: u64,
    pub stalled_interval: u64,
    pub max_stalled_count: u64,
    /// BullMQ version the parameters file names, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// No exact version, but a dependency range (`^5.58.0`) says the one installed is at least
    /// this: it decides a model only where every later version behaves alike (`version_from`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version_at_least: Option<String>,
    /// Legacy Bull's version, when the case ran Bull rather than BullMQ (`bull::Library`); then
    /// `version` is none. Not in the JSON report: `params.version` names BullMQ's.
    #[serde(skip)]
    pub bull_version: Option<String>,
    #[serde(skip)]
    pub origins: ParamOrigins,
    /// Every value given for each parameter (flag, file, each distinct logged value), by
    /// `Param` order.
    #[serde(skip)]
    pub given: [Vec<Given>; 4],
    /// Every worker-settings line, in time order.
    #[serde(skip)]
    pub logged: Vec<Logged>,
    /// The parameters of the queues whose workers logged settings of their own that differ from
    /// the case's (`per_queue`): the jobs of such a queue are analysed with these.
    #[serde(rename = "by_queue", skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub by_queue: std::collections::BTreeMap<String, LockParams>,
    /// Where the queue keeps its jobs: the stall model differs (`QueueBackend`).
    #[serde(skip)]
    pub backend: QueueBackend,
}

/// The store BullMQ ran on, told by the evidence read: the PostgreSQL backend's tables
/// (`ingest::bullmq::postgres`) say PostgreSQL; anything else is Redis, the only store before 6.0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum QueueBackend {
    #[default]
    Redis,
    /// `createPostgresBackend` (bullmq ≥ 6.0.0): locks are a column the stalled check compares with
    /// its own clock, and a renewal does not clear the stall mark (docs/bullmq.md).
    Postgres,
}

impl QueueBackend {
    /// What BullMQ's own record of a job's events is called on this store, for the report's words:
    /// a summary that says "events stream" of a PostgreSQL table sends a reader to look in Redis.
    pub fn events_record(self) -> &'static str {
        match self {
            QueueBackend::Redis => "events stream",
            QueueBackend::Postgres => "event table",
        }
    }
}

/// The first BullMQ with the PostgreSQL backend.
pub const POSTGRES_BACKEND_SINCE: &str = "6.0.0";

// `Given` and `Logged` hold times and texts compared as values: equality is enough for tests.
impl Eq for Given {}
impl Eq for Logged {}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamOrigins {
    pub lock_duration: ParamOrigin,
    pub lock_renew_time: ParamOrigin,
    pub stalled_interval: ParamOrigin,
    pub max_stalled_count: ParamOrigin,
}

impl ParamOrigins {
    pub fn get(&self, param: Param) -> ParamOrigin {
        match param {
            Param::LockDuration => self.lock_duration,
            Param::LockRenewTime => self.lock_renew_time,
            Param::StalledInterval => self.stalled_interval,
            Param::MaxStalledCount => self.max_stalled_count,
        }
    }
}

impl Default for LockParams {
    fn default() -> Self {
        LockParams {
            lock_duration: DEFAULT_LOCK_DURATION_MS,
            lock_renew_time: DEFAULT_LOCK_DURATION_MS / 2,
            stalled_interval: DEFAULT_STALLED_INTERVAL_MS,
            max_stalled_count: DEFAULT_MAX_STALLED_COUNT,
            version: None,
            version_at_least: None,
            bull_version: None,
            origins: ParamOrigins {
                lock_duration: ParamOrigin::Default,
                lock_renew_time: ParamOrigin::HalfOfLockDuration,
                stalled_interval: ParamOrigin::Default,
                max_stalled_count: ParamOrigin::Default,
            },
            given: Default::default(),
            logged: Vec::new(),
            by_queue: std::collections::BTreeMap::new(),
            backend: QueueBackend::Redis,
        }
    }
}

/// Values given for some parameters; the rest fall back to BullMQ's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParamOverrides {
    pub lock_duration: Option<u64>,
    pub lock_renew_time: Option<u64>,
    pub stalled_interval: Option<u64>,
    pub max_stalled_count: Option<u64>,
    pub version: Option<String>,
    /// The lower bound of a dependency range, when no exact version was found (see `LockParams`).
    pub version_at_least: Option<String>,
    /// Legacy Bull's version (`--bull-version`, a `bull` dependency): the case ran Bull.
    pub bull_version: Option<String>,
}

impl ParamOverrides {
    pub fn get(&self, param: Param) -> Option<u64> {
        match param {
            Param::LockDuration => self.lock_duration,
            Param::LockRenewTime => self.lock_renew_time,
            Param::StalledInterval => self.stalled_interval,
            Param::MaxStalledCount => self.max_stalled_count,
        }
    }
}

/// What the user declared: the parameters file (and its path, for reports) and the flags.
#[derive(Debug, Clone, Copy)]
pub struct Declared<'a> {
    pub file: &'a ParamOverrides,
    pub file_path: Option<&'a str>,
    pub flags: &'a ParamOverrides,
}

impl LockParams {
    /// Applies file values, then flag values, over BullMQ's defaults. `lockRenewTime` follows
    /// `lockDuration` unless it was given itself, as in BullMQ.
    pub fn resolve(file: &ParamOverrides, flags: &ParamOverrides) -> LockParams {
        LockParams::resolve_with_log(Declared { file, file_path: None, flags }, Vec::new(), &[])
    }

    /// As `resolve`, with the worker settings a log gave (`logged`, in time order) for the
    /// parameters neither flag nor file gives. When the log gives a parameter more than one
    /// value (the settings changed between boots, or replicas differ), the value in force is the
    /// one most of `activations` ran under (ties, and no activation after any line: the value
    /// logged last).
    pub fn resolve_with_log(declared: Declared<'_>, logged: Vec<Logged>, activations: &[Activation]) -> LockParams {
        let defaults = LockParams::default();
        let mut params = LockParams { logged, ..LockParams::default() };
        for param in Param::ALL {
            let mut given = Vec::new();
            if let Some(value) = declared.flags.get(param) {
                given.push(Given::declared(value, ParamOrigin::Flag, param.flag()));
            }
            if let Some(value) = declared.file.get(param) {
                given.push(Given::declared(
                    value,
                    ParamOrigin::File,
                    declared.file_path.unwrap_or("lock parameters file"),
                ));
            }
            given.extend(params.logged_values(param, activations));
            params.given[param.index()] = given;
        }
        let chosen = |params: &mut LockParams, param: Param| -> Option<(u64, ParamOrigin)> {
            let given = &mut params.given[param.index()];
            let pick = given.iter().position(|g| g.origin != ParamOrigin::Log).or_else(|| {
                // The value most activations ran under; ties go to the one logged last.
                let logged: Vec<usize> = (0..given.len()).collect();
                logged.into_iter().max_by_key(|&i| (given[i].activations.unwrap_or(0), given[i].last_at()))
            })?;
            given[pick].in_force = true;
            Some((given[pick].value, given[pick].origin))
        };
        let (lock_duration, lock_duration_origin) =
            chosen(&mut params, Param::LockDuration).unwrap_or((defaults.lock_duration, ParamOrigin::Default));
        let (lock_renew_time, renew_origin) = chosen(&mut params, Param::LockRenewTime)
            .unwrap_or((half_of_lock(lock_duration), ParamOrigin::HalfOfLockDuration));
        let (stalled_interval, stalled_origin) =
            chosen(&mut params, Param::StalledInterval).unwrap_or((defaults.stalled_interval, ParamOrigin::Default));
        let (max_stalled_count, max_origin) =
            chosen(&mut params, Param::MaxStalledCount).unwrap_or((defaults.max_stalled_count, ParamOrigin::Default));
        params.lock_duration = lock_duration;
        params.lock_renew_time = lock_renew_time;
        params.stalled_interval = stalled_interval;
        params.max_stalled_count = max_stalled_count;
        // The strongest source names the library: a flag over the file, and within one the
        // reader lets only one library through.
        let library_source = if declared.flags.version.is_some() || declared.flags.bull_version.is_some() {
            declared.flags
        } else {
            declared.file
        };
        params.bull_version.clone_from(&library_source.bull_version);
        params.version = if params.bull_version.is_some() { None } else { library_source.version.clone() };
        // A range's lower bound stands only where no exact version is known.
        if params.version.is_none() && params.bull_version.is_none() {
            params.version_at_least.clone_from(&declared.file.version_at_least);
        }
        params.origins = ParamOrigins {
            lock_duration: lock_duration_origin,
            lock_renew_time: renew_origin,
            stalled_interval: stalled_origin,
            max_stalled_count: max_origin,
        };
        params
    }

    /// The parameters of each queue whose workers' settings lines give values that differ from
    /// another queue's, resolved as the case's are (flag over file over log) from the lines of
    /// that queue's workers and the lines that name no queue, and kept only where they differ
    /// from the case's: a flag or the file gives every queue the same value.
    #[must_use]
    pub fn per_queue(mut self, declared: Declared<'_>, activations: &[Activation]) -> LockParams {
        let mut queues: Vec<Text> = self.logged.iter().filter_map(|line| line.queue).collect();
        queues.sort_unstable_by(|a, b| a.as_str().cmp(b.as_str()));
        queues.dedup();
        if queues.len() < 2 {
            return self;
        }
        let values_of = |queue: Text, param: Param| -> Vec<u64> {
            let mut values: Vec<u64> = self
                .logged
                .iter()
                .filter(|line| line.queue == Some(queue))
                .filter_map(|line| line.settings.get(param))
                .collect();
            values.sort_unstable();
            values.dedup();
            values
        };
        let differ = Param::ALL
            .iter()
            .any(|&param| queues.iter().any(|&queue| values_of(queue, param) != values_of(queues[0], param)));
        if !differ {
            return self;
        }
        for queue in queues {
            let lines: Vec<Logged> =
                self.logged.iter().filter(|line| line.queue.is_none_or(|q| q == queue)).cloned().collect();
            let ran: Vec<Activation> = activations.iter().filter(|a| a.queue == Some(queue)).copied().collect();
            let own = LockParams::resolve_with_log(declared, lines, &ran);
            let same = Param::ALL.iter().all(|&param| own.value(param) == self.value(param));
            if !same {
                self.by_queue.insert(queue.to_string(), own);
            }
        }
        self
    }

    /// The parameters on `backend`, for the case and each queue. The PostgreSQL backend exists
    /// from bullmq 6.0.0: without an exact version, that is the floor (`version_at_least`).
    #[must_use]
    pub fn on_backend(mut self, backend: QueueBackend) -> LockParams {
        self.backend = backend;
        if backend == QueueBackend::Postgres && self.version.is_none() {
            let since = parse_version(POSTGRES_BACKEND_SINCE);
            let below =
                self.version_at_least.as_deref().and_then(parse_version).is_none_or(|floor| Some(floor) < since);
            if below {
                self.version_at_least = Some(POSTGRES_BACKEND_SINCE.to_string());
            }
        }
        for queue in self.by_queue.values_mut() {
            *queue = std::mem::take(queue).on_backend(backend);
        }
        self
    }

    /// The parameters the jobs of `queue` ran under: the queue's own (`per_queue`), else the
    /// case's.
    pub fn of_queue(&self, queue: Option<&str>) -> &LockParams {
        queue.and_then(|queue| self.by_queue.get(queue)).unwrap_or(self)
    }

    /// The distinct values the log gives `param`, each with its first line, its count of lines
    /// and of the activations that ran under it.
    fn logged_values(&self, param: Param, activations: &[Activation]) -> Vec<Given> {
        let mut values: Vec<Given> = Vec::new();
        for line in &self.logged {
            let Some(value) = line.settings.get(param) else { continue };
            let queue = line.queue.map(|queue| queue.to_string());
            if let Some(known) = values.iter_mut().find(|g| g.value == value) {
                *known.lines.get_or_insert(0) += 1;
                known.last_logged = Some(line.at);
                if let Some(queue) = queue
                    && !known.queues.contains(&queue)
                {
                    known.queues.push(queue);
                }
            } else {
                values.push(Given {
                    value,
                    origin: ParamOrigin::Log,
                    place: line.place.clone(),
                    at: Some(line.at),
                    worker: line.worker.map(|w| w.to_string()),
                    lines: Some(1),
                    queues: queue.into_iter().collect(),
                    activations: None,
                    in_force: false,
                    last_logged: Some(line.at),
                });
            }
        }
        if values.len() > 1 {
            for given in &mut values {
                given.activations = Some(0);
            }
            for activation in activations {
                if let Some(line) = self.logged_in_force(param, activation.at, activation.source, activation.worker)
                    && let Some(known) = values.iter().position(|g| Some(g.value) == line.settings.get(param))
                {
                    *values[known].activations.get_or_insert(0) += 1;
                }
            }
        }
        values
    }

    /// The worker-settings line that gave `param` to work starting at `at` in source `source` by
    /// `worker`: the latest line at or before `at` of that worker, else of that source, else of
    /// any source. `None`: no line before `at` gives it.
    pub fn logged_in_force(
        &self,
        param: Param,
        at: DateTime<Utc>,
        source: u16,
        worker: Option<Text>,
    ) -> Option<&Logged> {
        let before = self.logged.iter().filter(|line| line.at <= at && line.settings.get(param).is_some());
        let of_worker = worker.and_then(|w| before.clone().rfind(|line| line.worker == Some(w)));
        of_worker.or_else(|| before.clone().rfind(|line| line.source == source)).or_else(|| before.clone().next_back())
    }

    /// The value of `param` that work starting at `at` in `source` by `worker` ran under: a value
    /// given by flag or file, or BullMQ's default, holds for all work; a logged one is the value of
    /// the line in force then (`logged_in_force`), else the value in force for the case.
    pub fn value_at(
        &self,
        param: Param,
        at: DateTime<Utc>,
        source: u16,
        worker: Option<Text>,
    ) -> (u64, Option<&Logged>) {
        match self.origins.get(param) {
            ParamOrigin::Log => match self.logged_in_force(param, at, source, worker) {
                Some(line) => (line.settings.get(param).unwrap_or(self.value(param)), Some(line)),
                None => (self.value(param), None),
            },
            ParamOrigin::HalfOfLockDuration => {
                let (lock, line) = self.value_at(Param::LockDuration, at, source, worker);
                (half_of_lock(lock), line)
            }
            _ => (self.value(param), None),
        }
    }

    pub fn value(&self, param: Param) -> u64 {
        match param {
            Param::LockDuration => self.lock_duration,
            Param::LockRenewTime => self.lock_renew_time,
            Param::StalledInterval => self.stalled_interval,
            Param::MaxStalledCount => self.max_stalled_count,
        }
    }

    /// Every value given for `param` (flag, file, each distinct logged value).
    pub fn given(&self, param: Param) -> &[Given] {
        &self.given[param.index()]
    }

    /// The given value in force for `param` (`None`: a default).
    pub fn in_force(&self, param: Param) -> Option<&Given> {
        self.given(param).iter().find(|given| given.in_force)
    }

    /// The parameters in force and where each came from, for the `Lock parameters:` line:
    /// `lockDuration 12000 ms (lock parameters file) · ...`.
    pub fn summary_line(&self) -> String {
        let entries: Vec<String> = Param::ALL
            .iter()
            .map(|&param| {
                format!("{} {} ({})", param.name(), param.show(self.value(param)), self.describe_origin(param))
            })
            .collect();
        let mut line = entries.join(" · ");
        for (queue, own) in &self.by_queue {
            let differ: Vec<String> = Param::ALL
                .iter()
                .filter(|&&param| own.value(param) != self.value(param))
                .map(|&param| {
                    format!("{} {} ({})", param.name(), param.show(own.value(param)), own.describe_origin(param))
                })
                .collect();
            line.push_str("; queue ");
            line.push_str(queue);
            line.push_str(": ");
            line.push_str(&differ.join(" · "));
        }
        line
    }

    /// Where the value in force of `param` came from, for people: `lock parameters file`, or
    /// `logged by the worker at server.log:3`.
    pub fn describe_origin(&self, param: Param) -> String {
        let origin = self.origins.get(param);
        match (origin, self.in_force(param)) {
            (ParamOrigin::Log, Some(given)) => format!("{} at {}", origin.describe(), given.place),
            (ParamOrigin::Default, _) => match &self.bull_version {
                Some(bull) => format!("{} default", super::bull::named(bull)),
                None => default_label(self.version.as_deref(), false),
            },
            (ParamOrigin::HalfOfLockDuration, _) if self.bull_version.is_some() => {
                "lockDuration / 2 (Bull default)".into()
            }
            _ => origin.describe().to_string(),
        }
    }

    /// Each parameter with its BullMQ name, value and origin, for reports.
    pub fn entries(&self) -> [(&'static str, u64, ParamOrigin); 4] {
        [
            ("lockDuration", self.lock_duration, self.origins.lock_duration),
            ("lockRenewTime", self.lock_renew_time, self.origins.lock_renew_time),
            ("stalledInterval", self.stalled_interval, self.origins.stalled_interval),
            ("maxStalledCount", self.max_stalled_count, self.origins.max_stalled_count),
        ]
    }
}

impl Given {
    fn declared(value: u64, origin: ParamOrigin, place: &str) -> Given {
        Given {
            value,
            origin,
            place: place.to_string(),
            at: None,
            worker: None,
            lines: None,
            queues: Vec::new(),
            activations: None,
            in_force: false,
            last_logged: None,
        }
    }

    fn last_at(&self) -> Option<DateTime<Utc>> {
        self.last_logged
    }
}

/// A version as `(major, minor, patch)`, with an optional `v`; missing parts are 0.
pub fn parse_version(version: &str) -> Option<(u32, u32, u32)> {
    let mut parts = version.trim().trim_start_matches('v').split('.').map(|p| p.parse::<u32>().ok());
    Some((parts.next()??, parts.next().flatten().unwrap_or(0), parts.next().flatten().unwrap_or(0)))
}

impl LockParams {
    /// Whether the BullMQ version in use is `since` or later: `Some` when the exact version says
    /// so, or when a range's lower bound is `since` or later (every version it allows is); `None`
    /// when nothing says (no version, or a lower bound below `since`: the installed one may be
    /// either side).
    pub fn version_from(&self, since: (u32, u32, u32)) -> Option<bool> {
        if let Some(version) = self.version.as_deref() {
            return parse_version(version).map(|v| v >= since);
        }
        let floor = self.version_at_least.as_deref().and_then(parse_version)?;
        (floor >= since).then_some(true)
    }
}

/// The words for BullMQ's default(s), named after the version in force when it is one whose
/// Worker defaults were checked (the same from v2.0.0 to 6.7.0, docs/bullmq.md "Versions
/// checked"), else after the whole checked range, so that a 6.x case never reads "v5 default".
pub fn default_label(version: Option<&str>, plural: bool) -> String {
    let noun = if plural { "defaults" } else { "default" };
    let Some(version) = version else { return format!("BullMQ v2–v6 {noun}") };
    let parsed: Vec<Option<u32>> = version.trim_start_matches('v').split('.').map(|p| p.parse().ok()).collect();
    match parsed.as_slice() {
        [Some(major), ..] if (2..=5).contains(major) => format!("BullMQ {version} {noun}"),
        [Some(6), rest @ ..] if rest.first().copied().flatten().unwrap_or(0) <= 7 => format!("BullMQ {version} {noun}"),
        _ => format!("BullMQ v2–v6 {noun} ({version} not checked)"),
    }
}

impl ParamOrigin {
    /// Where a value came from, for people; a default's words depend on the BullMQ version in
    /// force: use [`LockParams::describe_origin`] for it.
    pub fn describe(self) -> &'static str {
        match self {
            ParamOrigin::Default => "BullMQ default",
            ParamOrigin::HalfOfLockDuration => "lockDuration / 2 (BullMQ default)",
            ParamOrigin::File => "lock parameters file",
            ParamOrigin::Flag => "command line",
            ParamOrigin::Log => "logged by the worker",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_postgres_backend_says_the_version_is_at_least_6_0_0_and_nothing_more() {
        let on = |version: Option<&str>, floor: Option<&str>| {
            let params = LockParams {
                version: version.map(str::to_string),
                version_at_least: floor.map(str::to_string),
                ..LockParams::default()
            };
            params.on_backend(QueueBackend::Postgres)
        };
        assert_eq!(on(None, None).version_at_least.as_deref(), Some("6.0.0"));
        assert_eq!(on(None, Some("5.58.0")).version_at_least.as_deref(), Some("6.0.0"));
        assert_eq!(on(None, Some("6.3.0")).version_at_least.as_deref(), Some("6.3.0"));
        let exact = on(Some("6.7.0"), None);
        assert_eq!((exact.version.as_deref(), exact.version_at_least), (Some("6.7.0"), None));
        assert_eq!(exact.backend, QueueBackend::Postgres);
        assert_eq!(LockParams::default().on_backend(QueueBackend::Redis).version_at_least, None);
    }

    #[test]
    fn a_range_floor_decides_a_threshold_only_at_or_above_it() {
        let since = (5, 53, 2);
        let mut params = LockParams::default();
        assert_eq!(params.version_from(since), None);
        params.version_at_least = Some("5.58.0".into());
        assert_eq!(params.version_from(since), Some(true));
        // At least 5.40.0 may be 5.45 or 5.60: nothing decided.
        params.version_at_least = Some("5.40.0".into());
        assert_eq!(params.version_from(since), None);
        // An exact version decides both ways, and wins over a floor.
        params.version = Some("5.40.0".into());
        assert_eq!(params.version_from(since), Some(false));
        params.version = Some("v5.53.2".into());
        assert_eq!(params.version_from(since), Some(true));
        // resolve keeps a floor only where no exact version is known.
        let file = ParamOverrides { version_at_least: Some("5.58.0".into()), ..ParamOverrides::default() };
        let flags = ParamOverrides { version: Some("5.81.5".into()), ..ParamOverrides::default() };
        let none = ParamOverrides::default();
        let floor_only = LockParams::resolve(&file, &none);
        assert_eq!((floor_only.version, floor_only.version_at_least.as_deref()), (None, Some("5.58.0")));
        let flagged = LockParams::resolve(&file, &flags);
        assert_eq!((flagged.version.as_deref(), flagged.version_at_least), (Some("5.81.5"), None));
    }

    #[test]
    fn default_origin_is_not_called_v5_when_bullmq_6_is_in_force() {
        let mut params = LockParams::default();
        assert_eq!(params.describe_origin(Param::StalledInterval), "BullMQ v2–v6 default");
        params.version = Some("6.7.0".into());
        assert_eq!(params.describe_origin(Param::StalledInterval), "BullMQ 6.7.0 default");
        params.version = Some("5.81.5".into());
        assert_eq!(params.describe_origin(Param::LockDuration), "BullMQ 5.81.5 default");
        params.version = Some("7.0.0".into());
        assert_eq!(params.describe_origin(Param::LockDuration), "BullMQ v2–v6 default (7.0.0 not checked)");
    }

    #[test]
    fn lock_parameters_at_the_ceiling_keep_every_lock_time_representable() {
        // The most the lock arithmetic adds to a time: lockDuration plus the 4 × stalledInterval
        // detection delay (`detect::stalled_rerun::detection_delay_ms`), each at most the ceiling;
        // the latest time a timeline holds is in 2262. chrono's range (±262 000 years) holds it, so
        // `time::plus_millis` cannot overflow on any value the readers let through.
        let latest = DateTime::parse_from_rfc3339("2262-04-11T23:47:16.854Z").unwrap().with_timezone(&Utc);
        let most = i64::try_from(5 * MAX_PARAM_VALUE).unwrap();
        let end = latest.checked_add_signed(chrono::TimeDelta::milliseconds(most));
        assert!(end.is_some_and(|end| end > latest));
        // And a value past the ceiling is where that stops holding (about 8.2e15 ms): the
        // readers' bound is what keeps the arithmetic safe, not luck.
        assert!(latest.checked_add_signed(chrono::TimeDelta::milliseconds(i64::MAX / 1000)).is_none());
    }

    #[test]
    fn renew_time_follows_lock_duration_unless_given() {
        let file = ParamOverrides { lock_duration: Some(1_178_000), ..ParamOverrides::default() };
        let params = LockParams::resolve(&file, &ParamOverrides::default());
        assert_eq!(params.lock_renew_time, 589_000);
        assert_eq!(params.origins.lock_renew_time, ParamOrigin::HalfOfLockDuration);
        assert_eq!(params.stalled_interval, 30_000);
        assert_eq!(params.origins.stalled_interval, ParamOrigin::Default);
    }

    #[test]
    fn flags_override_the_file() {
        let file = ParamOverrides {
            lock_duration: Some(1_178_000),
            stalled_interval: Some(30_000),
            ..ParamOverrides::default()
        };
        let flags = ParamOverrides { lock_duration: Some(60_000), ..ParamOverrides::default() };
        let params = LockParams::resolve(&file, &flags);
        assert_eq!(params.lock_duration, 60_000);
        assert_eq!(params.origins.lock_duration, ParamOrigin::Flag);
        assert_eq!(params.lock_renew_time, 30_000);
        assert_eq!(params.origins.stalled_interval, ParamOrigin::File);
    }

    fn line(offset_s: i64, source: u16, worker: Option<&str>, line: u32, settings: WorkerSettings) -> Logged {
        Logged {
            at: chrono::DateTime::parse_from_rfc3339("2026-10-07T00:00:00Z").unwrap().with_timezone(&Utc)
                + chrono::Duration::seconds(offset_s),
            place: format!("server.log:{line}"),
            source,
            worker: worker.map(Text::from),
            queue: None,
            settings,
            event: line,
        }
    }

    fn lock(ms: u64) -> WorkerSettings {
        WorkerSettings { lock_duration: Some(ms), ..WorkerSettings::default() }
    }

    #[test]
    fn a_logged_value_is_used_only_where_no_flag_or_file_gives_one() {
        let logged =
            vec![line(0, 1, Some("41877"), 3, WorkerSettings { stalled_interval: Some(5_000), ..lock(12_000) })];
        let none = ParamOverrides::default();
        let from_log =
            LockParams::resolve_with_log(Declared { file: &none, file_path: None, flags: &none }, logged.clone(), &[]);
        assert_eq!((from_log.lock_duration, from_log.origins.lock_duration), (12_000, ParamOrigin::Log));
        assert_eq!(
            (from_log.lock_renew_time, from_log.origins.lock_renew_time),
            (6_000, ParamOrigin::HalfOfLockDuration)
        );
        assert_eq!(from_log.stalled_interval, 5_000);
        assert_eq!(from_log.describe_origin(Param::LockDuration), "logged by the worker at server.log:3");
        assert_eq!(from_log.given(Param::LockDuration)[0].worker.as_deref(), Some("41877"));
        let file = ParamOverrides { lock_duration: Some(30_000), ..ParamOverrides::default() };
        let declared = Declared { file: &file, file_path: Some("bullmq.json"), flags: &none };
        let with_file = LockParams::resolve_with_log(declared, logged, &[]);
        assert_eq!((with_file.lock_duration, with_file.origins.lock_duration), (30_000, ParamOrigin::File));
        assert_eq!(with_file.stalled_interval, 5_000, "the file gives no stalledInterval: the log's is used");
        let given = with_file.given(Param::LockDuration);
        assert_eq!(
            given.iter().map(|g| (g.value, g.origin, g.in_force)).collect::<Vec<_>>(),
            [(30_000, ParamOrigin::File, true), (12_000, ParamOrigin::Log, false)]
        );
        assert_eq!(given[0].place, "bullmq.json");
    }

    #[test]
    fn values_that_change_between_boots_go_to_the_work_that_ran_under_them() {
        // Boot 1 (30 s) then boot 2 (12 s) in one log; a replica in another log never changed.
        let logged = vec![
            line(0, 1, Some("100"), 1, lock(30_000)),
            line(10, 2, Some("200"), 1, lock(30_000)),
            line(600, 1, Some("300"), 90, lock(12_000)),
        ];
        let start = logged[0].at;
        let activation = |offset_s: i64, source: u16, worker: Option<&str>| Activation {
            at: start + chrono::Duration::seconds(offset_s),
            source,
            worker: worker.map(Text::from),
            queue: None,
        };
        // Three jobs after boot 2 in its log, one on the replica, one before boot 2.
        let activations = [
            activation(700, 1, Some("300")),
            activation(800, 1, None),
            activation(900, 1, None),
            activation(700, 2, Some("200")),
            activation(300, 1, Some("100")),
        ];
        assert!(Logged::values_differ(&logged));
        let none = ParamOverrides::default();
        let params =
            LockParams::resolve_with_log(Declared { file: &none, file_path: None, flags: &none }, logged, &activations);
        assert_eq!((params.lock_duration, params.origins.lock_duration), (12_000, ParamOrigin::Log));
        let given = params.given(Param::LockDuration);
        assert_eq!(
            given.iter().map(|g| (g.value, g.lines, g.activations)).collect::<Vec<_>>(),
            [(30_000, Some(2), Some(2)), (12_000, Some(1), Some(3))]
        );
        // Each job's own value: by its worker, else its log, else any.
        let value = |a: Activation| params.value_at(Param::LockDuration, a.at, a.source, a.worker).0;
        assert_eq!(value(activation(700, 2, None)), 30_000, "the replica's own log");
        assert_eq!(value(activation(700, 1, Some("100"))), 30_000, "the old worker, still running");
        assert_eq!(value(activation(700, 1, None)), 12_000);
        assert_eq!(params.value_at(Param::LockRenewTime, activations[4].at, 1, None).0, 15_000);
        // Before any line: the value in force for the case.
        assert_eq!(value(activation(-5, 3, None)), 12_000);
    }
}
