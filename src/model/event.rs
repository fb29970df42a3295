//! One thing that happened, as one source saw it.
//!
//! An event never loses its origin: the file and the line travel with it, so that every finding
//! can show the evidence it rests on.
//!
//! Millions of events are kept at once (a ledger of a sweep that runs every minute), so an event is
//! small (32 bytes): its texts are interned (`Text`: one copy of each distinct string, compared by
//! pointer) except its item, which is nearly always new (`Item`: kept per row, with a hash), its
//! scope and details are numbers into interned lists (`Handle`), its time is 64-bit
//! nanoseconds (`Moment`), and the text of its line is found by the line (`LineTexts`): it stays in
//! the source file until a report shows it.

pub use crate::time::moment::{Moment, OutOfRange};

use chrono::{DateTime, Utc};
use rustc_hash::FxBuildHasher;
use serde::Serialize;
use std::hash::BuildHasher;

/// An interned string: copying and comparing is a pointer; the text lives once per process.
pub type Text = ustr::Ustr;

/// What kind of thing happened. The names are the wire names used in JSON and in manifest rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    /// A server process started (a restart, a deploy, a new replica).
    ProcessStart,
    /// A job was added to the queue (BullMQ's `added`).
    JobAdded,
    /// A job entered the wait list (BullMQ's `waiting`; after a stall its `prev` is `active`).
    JobWaiting,
    /// A job was scheduled for later (BullMQ's `delayed`: a retry with backoff, a delayed job).
    JobDelayed,
    /// A queue worker began processing a job (BullMQ's `active`).
    JobActive,
    /// A job reported progress (BullMQ's `progress`).
    JobProgress,
    /// The queue moved a job whose lock had expired back to wait (BullMQ's `stalled`).
    JobStalled,
    /// A job attempt failed, with its reason.
    JobFailed,
    /// A job attempt completed.
    JobCompleted,
    /// A job used up its attempts (BullMQ's `retries-exhausted`).
    JobRetriesExhausted,
    /// A job was removed from the queue (BullMQ's `removed`).
    JobRemoved,
    /// Any other error the server logged.
    Error,
    /// The ledger opened a run of a round.
    RoundStarted,
    /// A round picked an item (a PR) to work on.
    ItemSelected,
    /// A round delivered an external effect for an item (e.g. posted a review).
    EffectPosted,
    /// The receiver of an external effect recorded a delivery, in its own record (a ledger with
    /// `role = "receiver"`): accepted, or recognised as a repeat by its idempotency key.
    EffectReceived,
    /// A round ended normally.
    RoundFinished,
    /// A round was marked failed (in a lease ledger: one attempt failed, with its cause).
    RoundFailed,
    /// A worker tried to claim a job's lease (accepted or rejected by the store).
    LeaseClaimed,
    /// A worker tried to extend its lease (a heartbeat; accepted or rejected).
    LeaseExtended,
    /// A worker tried to write its result / mark the job done (accepted or rejected).
    LeaseCompleted,
    /// The job was given up: attempts exhausted, dead-lettered or quarantined.
    JobDead,
    /// BullMQ refused a late worker's finishing call (`Missing lock for job …`, `Lock mismatch …`).
    LockRefused,
    /// A worker logged its lock settings (`lockDuration=12000ms, stalledInterval=5000ms`), usually
    /// at boot: evidence of the parameters it ran with (the values are in `Event::settings`).
    WorkerSettings,
}

impl EventKind {
    pub const ALL: [EventKind; 24] = [
        EventKind::ProcessStart,
        EventKind::JobAdded,
        EventKind::JobWaiting,
        EventKind::JobDelayed,
        EventKind::JobActive,
        EventKind::JobProgress,
        EventKind::JobStalled,
        EventKind::JobFailed,
        EventKind::JobCompleted,
        EventKind::JobRetriesExhausted,
        EventKind::JobRemoved,
        EventKind::Error,
        EventKind::RoundStarted,
        EventKind::ItemSelected,
        EventKind::EffectPosted,
        EventKind::EffectReceived,
        EventKind::RoundFinished,
        EventKind::RoundFailed,
        EventKind::LeaseClaimed,
        EventKind::LeaseExtended,
        EventKind::LeaseCompleted,
        EventKind::JobDead,
        EventKind::LockRefused,
        EventKind::WorkerSettings,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EventKind::ProcessStart => "process-start",
            EventKind::JobAdded => "job-added",
            EventKind::JobWaiting => "job-waiting",
            EventKind::JobDelayed => "job-delayed",
            EventKind::JobActive => "job-active",
            EventKind::JobProgress => "job-progress",
            EventKind::JobRetriesExhausted => "job-retries-exhausted",
            EventKind::JobRemoved => "job-removed",
            EventKind::JobStalled => "job-stalled",
            EventKind::JobFailed => "job-failed",
            EventKind::JobCompleted => "job-completed",
            EventKind::Error => "error",
            EventKind::RoundStarted => "round-started",
            EventKind::ItemSelected => "item-selected",
            EventKind::EffectPosted => "effect-posted",
            EventKind::EffectReceived => "effect-received",
            EventKind::RoundFinished => "round-finished",
            EventKind::RoundFailed => "round-failed",
            EventKind::LeaseClaimed => "lease-claimed",
            EventKind::LeaseExtended => "lease-extended",
            EventKind::LeaseCompleted => "lease-completed",
            EventKind::JobDead => "job-dead",
            EventKind::LockRefused => "lock-refused",
            EventKind::WorkerSettings => "worker-settings",
        }
    }

    pub fn from_name(name: &str) -> Option<EventKind> {
        EventKind::ALL.into_iter().find(|kind| kind.name() == name)
    }
}

/// What kind of evidence a source is. When several channels saw the same activation of a job,
/// detectors take it from the most authoritative one (see `Channel::activation_rank`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Channel {
    /// The application's run ledger.
    Ledger,
    /// Server or application logs.
    Log,
    /// BullMQ's Redis events stream (`bull:<queue>:events`): written by BullMQ itself, Redis clock.
    EventsStream,
    /// BullMQ job hashes (`HGETALL bull:<queue>:<id>`): only the latest value of each field.
    JobHash,
}

impl Channel {
    /// The channel's bit in a set of channels (`Attempt::channels`).
    pub fn bit(self) -> u8 {
        1 << self as u8
    }

    /// The channel in words, for a finding's notes.
    pub fn describe(self) -> &'static str {
        match self {
            Channel::Ledger => "ledger",
            Channel::Log => "log",
            Channel::EventsStream => "events stream",
            Channel::JobHash => "job hash",
        }
    }

    /// Lower is preferred for job activations: the events stream records every activation at the
    /// moment BullMQ made it; logs record what the application saw; the ledger records when the
    /// processor wrote its first row; a job hash keeps only the last activation.
    pub fn activation_rank(self) -> u8 {
        match self {
            Channel::EventsStream => 0,
            Channel::Log => 1,
            Channel::Ledger => 2,
            Channel::JobHash => 3,
        }
    }
}

/// Where an event came from: 8 bytes, as it is kept with each of millions of events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin {
    pub channel: Channel,
    /// Position of the source in the case, for a stable order of simultaneous events; the
    /// timeline knows its path (`Timeline::path`). A case has at most `MAX_SOURCES`.
    pub source: u16,
    /// 1-based line (for CSV: the physical line the record starts on). A source has at most
    /// `u32::MAX` lines (`Origin::line_number`).
    pub line: u32,
}

/// The most sources one case reads (`Origin::source`).
pub const MAX_SOURCES: usize = u16::MAX as usize + 1;

impl Origin {
    /// `line` as an event keeps it, or why it cannot be: a source of more than 4 billion lines.
    pub fn line_number(line: u64) -> Result<u32, String> {
        u32::try_from(line)
            .map_err(|_| format!("more than {} lines: split the file and read the part with the incident", u32::MAX))
    }
}

/// The job, run and worker an event is about. Every row of one round repeats them, so each
/// distinct combination is kept once for the process (`Scope::interned`) and an event holds its
/// number (`Handle`): 4 bytes in each of millions of events instead of 52. An event's scope fields
/// read as its own (`event.job_id`); they are written through `Event::edit` or `Event::set_scope`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Scope {
    pub job_id: Option<Text>,
    pub job_name: Option<Text>,
    pub queue: Option<Text>,
    pub run_id: Option<Text>,
    /// The scheduled time of the round this event belongs to.
    pub slot: Option<DateTime<Utc>>,
    /// Who acted: worker name, host or pid, as the source wrote it.
    pub worker: Option<Text>,
    /// The process whose output the line is, as a log envelope labels it (`pod=web-1
    /// container=app`, `host=api-1 unit=api.service`: `envelope::Labels::instance`): a restart in one
    /// instance is that instance's process start, not every instance's.
    pub instance: Option<Text>,
}

/// A process-wide set of interned values, each with a 32-bit number: an event holds the number,
/// 4 bytes in each of millions of events instead of a pointer's 8. Values are kept for the life
/// of the process, as interned texts are; number 0 is the empty value (`T::default()`).
///
/// The values live in an append-only list that any thread reads without a lock (`boxcar`); the
/// set that finds a value's number is in shards, so that the threads reading sources seldom wait
/// for each other.
pub struct Interned<T: 'static> {
    values: boxcar::Vec<T>,
    numbers: [std::sync::Mutex<std::collections::HashMap<&'static T, u32, FxBuildHasher>>; 16],
}

/// A value kept in a process-wide `Interned` set.
pub trait Internable: std::hash::Hash + Eq + Default + Sized + Send + Sync + 'static {
    /// The empty value, number 0 (equal to `Self::default()`).
    const EMPTY: &'static Self;

    fn set() -> &'static Interned<Self>;
}

/// An interned value: 4 bytes, copied and compared as a number, read as the value (`Deref`).
pub struct Handle<T: Internable>(u32, std::marker::PhantomData<&'static T>);

// By hand: derived, they would ask the value to be `Copy` too.
impl<T: Internable> Clone for Handle<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Internable> Copy for Handle<T> {}

impl<T: Internable> PartialEq for Handle<T> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl<T: Internable> Eq for Handle<T> {}

impl<T: Internable> std::hash::Hash for Handle<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl<T: Internable> Interned<T> {
    // `const`, so that the sets are plain statics: reading a value checks no lazy initialization.
    const fn new() -> Self {
        Interned {
            values: boxcar::Vec::new(),
            numbers: [const { std::sync::Mutex::new(std::collections::HashMap::with_hasher(FxBuildHasher)) }; 16],
        }
    }

    /// The number of `value`, given to it when first seen.
    fn number(&'static self, value: T) -> u32 {
        if value == *T::EMPTY {
            return 0;
        }
        let shard = &self.numbers[shard_of(FxBuildHasher.hash_one(&value))];
        // A panic elsewhere cannot leave the set half-changed: it is only ever inserted into.
        let mut numbers = shard.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(&number) = numbers.get(&value) {
            return number;
        }
        // Values of one shard are numbered under its lock, so a value is never kept twice.
        let place = self.values.push(value);
        let number = u32::try_from(place + 1).expect("fewer than 4 billion distinct scopes and details");
        numbers.insert(&self.values[place], number);
        number
    }
}

/// The shard of a value with this hash: from bits the shard's table (`hashbrown`) uses for
/// neither a value's bucket (the low bits) nor its tag (the top 7). Taken from the top, they made
/// every tag in a shard share 4 of its 7 bits, and a lookup then compared eight times as many
/// values, each a cache miss: a twentieth of reading a ledger.
fn shard_of(hash: u64) -> usize {
    ((hash >> 32) & 15) as usize
}

impl<T: Internable> Handle<T> {
    /// The handle of the one copy of `value`.
    pub fn of(value: T) -> Self {
        Handle(T::set().number(value), std::marker::PhantomData)
    }

    /// The value's number: 0 for the empty value, then 1, 2, ... in the order values were first
    /// seen, so that a pass over millions of events can keep what it worked out per value in a
    /// list (`ByHandle`) instead of looking the value up again.
    pub fn number(self) -> usize {
        self.0 as usize
    }
}

/// What a pass over events worked out for each value it met (each scope, for instance), kept by
/// the value's number: events of one round share their scope, so the pass looks a round up in its
/// tables once per scope, not once per event.
pub struct ByHandle<T: Internable, V> {
    known: Vec<Option<V>>,
    marker: std::marker::PhantomData<T>,
}

impl<T: Internable, V: Copy> ByHandle<T, V> {
    /// Sized for the values interned so far (more can be met: they are worked out each time).
    pub fn new() -> Self {
        ByHandle { known: vec![None; T::set().values.count() + 1], marker: std::marker::PhantomData }
    }

    /// What was worked out for `handle` already (`None`: nothing yet).
    pub fn known(&self, handle: Handle<T>) -> Option<V> {
        self.known.get(handle.number()).copied().flatten()
    }

    /// What was worked out for `handle`, else `work(value)`, kept for the next event.
    pub fn get_or(&mut self, handle: Handle<T>, work: impl FnOnce(&'static T) -> V) -> V {
        match self.known.get_mut(handle.number()) {
            Some(Some(known)) => *known,
            Some(slot) => *slot.insert(work(handle.get())),
            None => work(handle.get()),
        }
    }
}

impl<T: Internable, V: Copy> Default for ByHandle<T, V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Internable> Default for Handle<T> {
    fn default() -> Self {
        Handle(0, std::marker::PhantomData)
    }
}

impl<T: Internable> Handle<T> {
    /// The value, kept for the life of the process.
    #[inline]
    pub fn get(self) -> &'static T {
        match self.0 {
            0 => T::EMPTY,
            // Every other number was given by `Interned::number` after its value was pushed.
            number => &T::set().values[number as usize - 1],
        }
    }
}

impl<T: Internable> std::ops::Deref for Handle<T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        self.get()
    }
}

impl<T: Internable + std::fmt::Debug> std::fmt::Debug for Handle<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

static SCOPES: Interned<Scope> = Interned::new();

static NO_SCOPE: Scope =
    Scope { job_id: None, job_name: None, queue: None, run_id: None, slot: None, worker: None, instance: None };

impl Internable for Scope {
    const EMPTY: &'static Scope = &NO_SCOPE;

    fn set() -> &'static Interned<Scope> {
        &SCOPES
    }
}

impl Scope {
    /// The one copy of this scope (kept for the life of the process, as interned texts are).
    pub fn interned(self) -> Handle<Scope> {
        Handle::of(self)
    }
}

/// One thing that happened, in 40 bytes (see the module's introduction).
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    at: Moment,
    pub kind: EventKind,
    /// Job, run, slot and worker, shared with the events of the same round (see `Scope`).
    scope: Handle<Scope>,
    /// What the row selected or acted on (see `Item`: equal by text, not interned).
    pub item: Option<super::Item>,
    /// The failure reason and the lease columns, shared with the events that have the same (see
    /// `Extra`): read with `detail()` and `lease()`.
    extra: Handle<Extra>,
    // The origin's fields, read together with `origin()`: kept flat, because a nested `Origin`
    // would bring its padding and cost 8 bytes more per event.
    channel: Channel,
    source: u16,
    line: u32,
}

/// What some events add: a failure reason, status or error text, and the columns of lease and
/// effect ledgers. Most events have none and the rest share a few details ("review posted"), so
/// each distinct combination is kept once for the process and an event holds its number
/// (`Handle`): 4 bytes in each of millions of events instead of 16.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Extra {
    /// Failure reason, status or error text.
    pub detail: Option<Text>,
    /// What lease and effect ledgers add to a row (absent for nearly every event).
    pub lease: Option<LeaseFacts>,
    /// The lock settings a `worker-settings` line gave (absent for every other event).
    pub settings: Option<super::WorkerSettings>,
}

static EXTRAS: Interned<Extra> = Interned::new();

static NO_EXTRA: Extra = Extra { detail: None, lease: None, settings: None };

impl Internable for Extra {
    const EMPTY: &'static Extra = &NO_EXTRA;

    fn set() -> &'static Interned<Extra> {
        &EXTRAS
    }
}

impl Extra {
    /// The one copy of this combination (kept for the life of the process, as interned texts are).
    pub fn interned(self) -> Handle<Extra> {
        Handle::of(self)
    }
}

/// The columns of lease and effect ledgers: fencing, expiry, attempt, the store's verdict and
/// the effect's identity.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct LeaseFacts {
    /// The fencing number the actor held (incremented on every claim).
    pub generation: Option<u64>,
    /// Until when the lease is valid after this event (the store's clock).
    pub lease_until: Option<DateTime<Utc>>,
    /// Which attempt of the job this is (1-based).
    pub attempt: Option<u64>,
    /// Whether the store accepted the claim, extension, completion or effect (`None`: not said).
    pub accepted: Option<bool>,
    /// Idempotency key sent with an external effect.
    pub key: Option<Text>,
    /// Hash of an external effect's payload.
    pub payload_hash: Option<Text>,
}

static NO_LEASE_FACTS: LeaseFacts =
    LeaseFacts { generation: None, lease_until: None, attempt: None, accepted: None, key: None, payload_hash: None };

impl Event {
    /// Failure reason, status or error text.
    pub fn detail(&self) -> Option<Text> {
        self.extra.detail
    }

    /// The detail as text, for the life of the process (as every interned text).
    pub fn detail_str(&self) -> Option<&'static str> {
        self.extra.detail.map(|detail| detail.as_str())
    }

    pub fn set_detail(&mut self, detail: Option<Text>) {
        if self.extra.detail != detail {
            self.extra = Extra { detail, ..self.extra.get().clone() }.interned();
        }
    }

    /// The lease and effect columns of the event (all `None` for most events).
    pub fn lease(&self) -> &LeaseFacts {
        self.extra.get().lease.as_ref().unwrap_or(&NO_LEASE_FACTS)
    }

    /// The lease and effect columns to change, field by field: `event.lease_mut().accepted =
    /// Some(true)`. The changed columns are interned when the edit ends.
    pub fn lease_mut(&mut self) -> Edit<'_, LeaseFacts> {
        let value = self.lease().clone();
        let keep = |event: &mut Event, lease: LeaseFacts| {
            let lease = (lease != LeaseFacts::default()).then_some(lease);
            event.extra = Extra { lease, ..event.extra.get().clone() }.interned();
        };
        Edit { event: self, value, keep }
    }

    /// The lock settings of a `worker-settings` event (`None` for every other event).
    pub fn settings(&self) -> Option<super::WorkerSettings> {
        self.extra.get().settings
    }

    pub fn set_settings(&mut self, settings: Option<super::WorkerSettings>) {
        if self.settings() != settings {
            self.extra = Extra { settings, ..self.extra.get().clone() }.interned();
        }
    }

    /// The detail and lease columns at once (see `Extra::interned`, or a reader's cache of them).
    pub fn set_extra(&mut self, extra: Handle<Extra>) {
        self.extra = extra;
    }

    pub fn extra(&self) -> Handle<Extra> {
        self.extra
    }

    pub fn new(at: Moment, kind: EventKind, origin: Origin) -> Self {
        let Origin { channel, source, line } = origin;
        Event { at, kind, scope: Handle::default(), item: None, extra: Handle::default(), channel, source, line }
    }

    /// When it happened, in UTC.
    pub fn at(&self) -> DateTime<Utc> {
        self.at.utc()
    }

    /// When it happened, as the timeline orders it (cheaper to compare than `at()`).
    pub fn moment(&self) -> Moment {
        self.at
    }

    pub fn set_at(&mut self, at: Moment) {
        self.at = at;
    }

    /// Where it was read from.
    pub fn origin(&self) -> Origin {
        Origin { channel: self.channel, source: self.source, line: self.line }
    }

    pub fn set_origin(&mut self, origin: Origin) {
        Origin { channel: self.channel, source: self.source, line: self.line } = origin;
    }

    /// What an event says, but not where: its time, kind, ids, item, detail and channel. Two
    /// events of one source with the same key on different lines, and the same text, are a line
    /// repeated (`ingest::io::repeats`).
    pub fn content_key(&self) -> (Moment, EventKind, Handle<Scope>, Option<super::Item>, Handle<Extra>, Channel) {
        (self.at, self.kind, self.scope, self.item, self.extra, self.channel)
    }

    /// Feeds what the event says and its line, not its source, to `state`: two sources that
    /// give the same events on the same lines are one piece of evidence read twice.
    pub fn hash_content<H: std::hash::Hasher>(&self, state: &mut H) {
        use std::hash::Hash;
        (self.content_key(), self.line).hash(state);
    }

    pub fn scope(&self) -> Handle<Scope> {
        self.scope
    }

    /// Gives the event an interned scope (see `Scope::interned`, or a reader's cache of them).
    pub fn set_scope(&mut self, scope: Handle<Scope>) {
        self.scope = scope;
    }

    /// The event's scope to change, field by field: `event.edit().job_id = Some(id)`. The
    /// changed scope is interned when the edit ends.
    pub fn edit(&mut self) -> Edit<'_, Scope> {
        let value = *self.scope;
        Edit { event: self, value, keep: |event, scope| event.scope = scope.interned() }
    }
}

/// Reading an event's scope fields as its own: `event.job_id`, `event.run_id`, ...
impl std::ops::Deref for Event {
    type Target = Scope;

    fn deref(&self) -> &Scope {
        self.scope.get()
    }
}

/// A part of an event being changed field by field (`Event::edit`, `Event::lease_mut`): the
/// changed value is interned and kept when the edit ends.
pub struct Edit<'a, T: Default> {
    event: &'a mut Event,
    value: T,
    keep: fn(&mut Event, T),
}

impl<T: Default> std::ops::Deref for Edit<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T: Default> std::ops::DerefMut for Edit<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.value
    }
}

impl<T: Default> Drop for Edit<'_, T> {
    fn drop(&mut self) {
        (self.keep)(self.event, std::mem::take(&mut self.value));
    }
}

/// A log's events are moved by the order of its lines when a fall-back repeats an hour.
impl crate::time::fold::Timed for Event {
    fn at(&self) -> DateTime<Utc> {
        Event::at(self)
    }

    fn set_at(&mut self, at: Moment) {
        Event::set_at(self, at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_of_one_round_share_one_scope_and_an_edit_changes_only_its_event() {
        let origin = || Origin { channel: Channel::Ledger, source: 0, line: 1 };
        let at = DateTime::parse_from_rfc3339("2026-10-07T00:33:00Z").unwrap().with_timezone(&Utc);
        let mut first = Event::new(at.into(), EventKind::RoundStarted, origin());
        let mut second = Event::new(at.into(), EventKind::ItemSelected, origin());
        assert_eq!(first.scope(), second.scope(), "no scope yet: the empty one");
        first.edit().run_id = Some("run-a".into());
        first.edit().job_id = Some("job-a".into());
        second.set_scope(
            Scope { run_id: Some("run-a".into()), job_id: Some("job-a".into()), ..Scope::default() }.interned(),
        );
        // Read as the event's own fields, kept once.
        assert_eq!(first.run_id.as_deref(), Some("run-a"));
        assert_eq!(first.scope(), second.scope());
        // Editing one event leaves the other, which shares the old scope, as it was.
        second.edit().worker = Some("w1".into());
        assert_eq!(second.worker.as_deref(), Some("w1"));
        assert_eq!(first.worker, None);
        assert_eq!(second.job_id.as_deref(), Some("job-a"));
    }

    #[test]
    fn details_and_lease_columns_are_shared_and_an_edit_changes_only_its_event() {
        let origin = || Origin { channel: Channel::Ledger, source: 0, line: 1 };
        let at = DateTime::parse_from_rfc3339("2026-10-07T00:33:00Z").unwrap().with_timezone(&Utc);
        let mut first = Event::new(at.into(), EventKind::EffectPosted, origin());
        let mut second = Event::new(at.into(), EventKind::EffectPosted, origin());
        assert_eq!(first.extra(), second.extra(), "no detail yet: the empty one");
        first.set_detail(Some("review posted".into()));
        second.set_detail(Some("review posted".into()));
        assert_eq!(first.extra(), second.extra());
        assert_eq!(first.detail_str(), Some("review posted"));
        // Lease columns for one event: the other keeps its detail alone.
        second.lease_mut().generation = Some(7);
        second.lease_mut().accepted = Some(false);
        assert_eq!((second.lease().generation, second.lease().accepted), (Some(7), Some(false)));
        assert_eq!(second.detail_str(), Some("review posted"), "a lease edit keeps the detail");
        assert_eq!(first.lease(), &LeaseFacts::default());
        // A new detail keeps the lease columns.
        second.set_detail(Some("deduplicated".into()));
        assert_eq!(second.lease().generation, Some(7));
        assert_eq!(first.detail_str(), Some("review posted"));
    }

    #[test]
    fn threads_interning_at_once_get_one_number_per_value() {
        // The readers of a case intern scopes on several threads at once: the same scope must get
        // the same number on all of them, and different scopes different numbers.
        let scope = |n: u32| Scope { run_id: Some(format!("run-threads-{n}").as_str().into()), ..Scope::default() };
        let numbered: Vec<Vec<Handle<Scope>>> = std::thread::scope(|threads| {
            let workers: Vec<_> =
                (0..4).map(|_| threads.spawn(move || (0..2000).map(|n| scope(n).interned()).collect())).collect();
            workers.into_iter().map(|worker| worker.join().unwrap()).collect()
        });
        assert!(numbered.iter().all(|handles| handles == &numbered[0]));
        let distinct: std::collections::HashSet<_> = numbered[0].iter().collect();
        assert_eq!(distinct.len(), 2000);
        assert!(numbered[0].iter().enumerate().all(|(n, handle)| **handle == scope(u32::try_from(n).unwrap())));
        assert_eq!(Scope::default().interned(), Handle::default(), "the empty scope is number 0");
    }

    #[test]
    fn the_values_of_one_shard_keep_the_table_tags_apart() {
        // hashbrown tags each value with the top 7 bits of its hash and compares a value only
        // where the tags match: a shard chosen from those bits would leave its values few tags.
        let mut tags: Vec<std::collections::HashSet<u64>> = vec![std::collections::HashSet::new(); 16];
        for n in 0..20_000 {
            let scope = Scope { run_id: Some(format!("run-tags-{n}").as_str().into()), ..Scope::default() };
            let hash = FxBuildHasher.hash_one(scope);
            tags[shard_of(hash)].insert(hash >> 57);
        }
        for (shard, tags) in tags.iter().enumerate() {
            assert!(tags.len() > 100, "shard {shard}: {} of 128 tags", tags.len());
        }
    }

    #[test]
    fn a_pass_works_out_each_scope_once_and_scopes_met_later_each_time() {
        let early = Scope { run_id: Some("run-by-handle-early".into()), ..Scope::default() }.interned();
        let mut places: ByHandle<Scope, u32> = ByHandle::new();
        let mut worked = 0;
        for _ in 0..3 {
            let place = places.get_or(early, |scope| {
                worked += 1;
                assert_eq!(scope.run_id.as_deref(), Some("run-by-handle-early"));
                7
            });
            assert_eq!(place, 7);
        }
        assert_eq!(worked, 1, "kept after the first time");
        // A scope interned after the pass was sized is still answered, worked out each time.
        let late = Scope { run_id: Some("run-by-handle-late".into()), ..Scope::default() }.interned();
        assert!(late.number() >= places.known.len());
        let mut calls = 0;
        for _ in 0..2 {
            places.get_or(late, |_| {
                calls += 1;
                9
            });
        }
        assert_eq!(calls, 2);
    }

    #[test]
    fn an_event_stays_small() {
        // Millions of ledger rows are kept at once: every byte here is megabytes of peak memory
        // (docs/performance.md). Texts are interned pointers, the job, run, slot and worker are one
        // interned scope and the detail and lease columns one interned `Extra` (numbered, 4 bytes
        // each), the source's path is kept once by the timeline, and the text of the line is
        // found by the line (`LineTexts`).
        let size = std::mem::size_of::<Event>();
        assert!(size <= 32, "Event is {size} bytes");
        assert_eq!(std::mem::size_of::<Origin>(), 8);
        assert_eq!(std::mem::size_of::<Option<Text>>(), 8);
    }
}
