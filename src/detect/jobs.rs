//! Which job each event is about, and each job's events: the grouping every detector reads.
//!
//! A job is its queue and its id (`JobKey`): two queues may use the same custom id. An event that
//! names its queue is that queue's job's. One that names none (a log line `job 42 completed`, a
//! ledger without a queue column) is the job of the only queue that has a job with that id; when
//! no event names a queue for the id, the job's queue is unknown and the id alone is the job. When
//! two or more queues have a job with that id, the event could be either's: it is given to
//! neither (a guess would pair one queue's activation with the other's and invent a stalled
//! rerun), and the report says how many such events were left out and how to attribute them
//! (`Unattributed`).

use rustc_hash::{FxHashMap, FxHashSet};
use ustr::UstrMap;

use crate::model::event::ByHandle;
use crate::model::job::JobKey;
use crate::model::rounds::{self, Attempt};
use crate::model::timeline::EventId;
use crate::model::{Channel, EventKind, Scope, Text, Timeline};

pub(super) fn kind_bit(kind: EventKind) -> u32 {
    1 << kind as u32
}

/// The events of each job, in time order: one flat list grouped by job, and where each job's
/// group is. A list per job would cost its own allocation and its spare capacity, for each of a
/// ledger's hundreds of thousands of jobs.
#[derive(Debug, Default)]
pub struct JobEvents {
    ids: Vec<EventId>,
    /// Each job's group, in the order jobs were first met, and where each job's group is: the
    /// table of places is two thirds the size of a table of groups.
    groups: Vec<Group>,
    places: FxHashMap<JobKey, u32>,
}

/// Where one job's events are in `JobEvents::ids`, and their kinds.
#[derive(Debug, Clone, Copy)]
struct Group {
    key: JobKey,
    start: u32,
    len: u32,
    /// One bit per kind (`kind_bit`): most questions about a job are about kinds it never had
    /// (a failure, a stall), and the answer should not cost a look at each of its events.
    kinds: u32,
    /// How many of its events may be activations (`job-active`, `round-started`): nearly every
    /// round's job has one, and a detector that compares activations has nothing to compare.
    activations: u32,
    /// Where the job's attempts are (`JobAttempts::at`; `NO_ATTEMPTS`: it has none): one number
    /// here instead of a second table by job.
    attempts: u32,
}

const NO_ATTEMPTS: u32 = u32::MAX;

impl Group {
    fn new(key: JobKey) -> Self {
        Group { key, start: 0, len: 0, kinds: 0, activations: 0, attempts: NO_ATTEMPTS }
    }
}

impl JobEvents {
    /// The events of `job`, in time order (none: empty).
    pub fn get(&self, job: JobKey) -> &[EventId] {
        self.group_of(job).map_or(&[], |group| self.group(group))
    }

    /// Whether any event of `job` is of one of `kinds`.
    pub fn has(&self, job: JobKey, kinds: &[EventKind]) -> bool {
        self.group_of(job).is_some_and(|group| kinds.iter().any(|&kind| group.kinds & kind_bit(kind) != 0))
    }

    /// Every job with its events.
    pub fn iter(&self) -> impl Iterator<Item = (JobKey, &[EventId])> {
        self.groups.iter().map(|group| (group.key, self.group(*group)))
    }

    /// Every job that has an event of one of `kinds`, with its events: the others are skipped
    /// without a look at their events or a lookup of their id.
    pub fn iter_having(&self, kinds: &[EventKind]) -> impl Iterator<Item = (JobKey, &[EventId])> {
        let bits = kinds.iter().fold(0, |bits, &kind| bits | kind_bit(kind));
        self.groups.iter().filter(move |group| group.kinds & bits != 0).map(|group| (group.key, self.group(*group)))
    }

    /// Every job with two or more events that may be activations (`job-active`,
    /// `round-started`), or with an event of one of `kinds`, with its events: the others are
    /// skipped without a look at their events or a lookup of their id.
    pub fn iter_reactivated_or_having(&self, kinds: &[EventKind]) -> impl Iterator<Item = (JobKey, &[EventId])> {
        let bits = kinds.iter().fold(0, |bits, &kind| bits | kind_bit(kind));
        self.groups
            .iter()
            .filter(move |group| group.activations >= 2 || group.kinds & bits != 0)
            .map(|group| (group.key, self.group(*group)))
    }

    /// Every job that has attempts, with its events and its attempts, in the order of the groups
    /// (`iter`'s): no lookup by job for either.
    pub fn iter_attempted<'a>(
        &'a self,
        attempts: &'a rounds::JobAttempts,
    ) -> impl Iterator<Item = (JobKey, &'a [EventId], &'a [Attempt])> + 'a {
        self.groups
            .iter()
            .filter(|group| group.attempts != NO_ATTEMPTS)
            .map(|group| (group.key, self.group(*group), attempts.at(group.attempts)))
    }

    /// The job's attempts in `attempts` (none: empty).
    pub(super) fn attempts_of<'a>(&self, job: JobKey, attempts: &'a rounds::JobAttempts) -> &'a [Attempt] {
        match self.group_of(job) {
            Some(group) if group.attempts != NO_ATTEMPTS => attempts.at(group.attempts),
            _ => &[],
        }
    }

    /// How many jobs there are.
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    /// Whether no event names a job.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    fn group_of(&self, job: JobKey) -> Option<Group> {
        self.places.get(&job).map(|&place| self.groups[place as usize])
    }

    fn group(&self, group: Group) -> &[EventId] {
        &self.ids[group.start as usize..(group.start + group.len) as usize]
    }
}

/// Where one events stream begins.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct StreamStart {
    pub source: u16,
    /// The queue the source was declared for (`None`: not declared; it may be any queue's).
    pub queue: Option<Text>,
    pub from: chrono::DateTime<chrono::Utc>,
}

/// When the events stream that would have recorded `job`'s events (`events`) begins, as far as
/// the evidence tells which stream that is: the streams that have an entry of the job; else the
/// streams of its queue (a stream declared for no queue may be any queue's); else, when the job's
/// queue is not known, every stream. Of several, the latest start: each may be the job's. `None`:
/// no stream read can be the job's.
pub(super) fn stream_start(
    timeline: &Timeline,
    streams: &[StreamStart],
    job: JobKey,
    events: &[EventId],
) -> Option<chrono::DateTime<chrono::Utc>> {
    let queue = job.queue;
    let named: Vec<u16> = events
        .iter()
        .map(|&id| timeline.get(id).origin())
        .filter(|origin| origin.channel == Channel::EventsStream)
        .map(|origin| origin.source)
        .collect();
    let of_job = |stream: &&StreamStart| named.contains(&stream.source);
    let of_queue = |stream: &&StreamStart| queue.is_none() || stream.queue.is_none() || stream.queue == queue;
    let latest = |keep: &dyn Fn(&&StreamStart) -> bool| streams.iter().filter(keep).map(|s| s.from).max();
    if named.is_empty() { latest(&of_queue) } else { latest(&of_job) }
}

/// A job id that two or more queues use, and the events that named it without a queue: they were
/// given to no job.
#[derive(Debug, Clone, PartialEq)]
pub struct Unattributed {
    pub id: Text,
    /// The queues that have a job with this id, by name.
    pub queues: Vec<Text>,
    /// The events left out, in time order.
    pub events: Vec<EventId>,
}

/// What an event's scope says of its job, worked out once per scope.
const NO_JOB: u32 = u32::MAX;
/// The scope names a job id that several queues use, and no queue.
const UNATTRIBUTED: u32 = u32::MAX - 1;

/// What one pass over the timeline gathers for `Context`.
pub(super) struct JobIndex {
    pub job_events: JobEvents,
    pub attempts: rounds::JobAttempts,
    /// Each scope's job (its place in `job_events`), or `NO_JOB` / `UNATTRIBUTED`.
    pub place_of_scope: ByHandle<Scope, u32>,
    pub unattributed: Vec<Unattributed>,
    pub lease_jobs: FxHashSet<JobKey>,
    pub restarts: Vec<EventId>,
    pub job_kinds: u32,
    pub stream_from: Option<chrono::DateTime<chrono::Utc>>,
    pub streams: Vec<StreamStart>,
}

impl JobIndex {
    /// `lock_ms`: `lockDuration`, which bounds how late a ledger row of an activation may be.
    pub fn build(timeline: &Timeline, lock_ms: u64) -> JobIndex {
        // The queues of each job id, from the scopes that name both (a round's rows share one
        // scope: each is looked at once).
        let mut queues_of: UstrMap<Vec<Text>> = UstrMap::default();
        let mut seen: ByHandle<Scope, bool> = ByHandle::new();
        for (_, event) in timeline.ids() {
            seen.get_or(event.scope(), |scope| {
                if let (Some(id), Some(queue)) = (scope.job_id, scope.queue) {
                    let queues = queues_of.entry(id).or_default();
                    if !queues.contains(&queue) {
                        queues.push(queue);
                    }
                }
                true
            });
        }
        drop(seen);
        let mut index = JobIndex {
            job_events: JobEvents::default(),
            attempts: rounds::JobAttempts::default(),
            place_of_scope: ByHandle::new(),
            unattributed: Vec::new(),
            lease_jobs: FxHashSet::default(),
            restarts: Vec::new(),
            job_kinds: 0,
            stream_from: None,
            streams: Vec::new(),
        };
        // The groups are built in a list, each job's place in it found once per scope; detectors
        // ask the same table of places (a lookup is one probe and one read of the list).
        let mut jobs = Jobs::default();
        let mut left_out: UstrMap<Vec<EventId>> = UstrMap::default();
        for (id, event) in timeline.ids() {
            let place = index.place_of_scope.get_or(event.scope(), |scope| {
                let Some(job_id) = scope.job_id else { return NO_JOB };
                let queue = match (scope.queue, queues_of.get(&job_id).map(Vec::as_slice)) {
                    (Some(queue), _) => Some(queue),
                    (None, None | Some([])) => None,
                    (None, Some([only])) => Some(*only),
                    (None, Some(_)) => return UNATTRIBUTED,
                };
                jobs.place(JobKey::new(queue, job_id))
            });
            if place == UNATTRIBUTED {
                if let Some(job_id) = event.job_id {
                    left_out.entry(job_id).or_default().push(id);
                }
            } else if place != NO_JOB {
                // Counted here, placed below: the groups' sizes are known only at the end.
                let group = &mut jobs.groups[place as usize];
                group.len += 1;
                group.kinds |= kind_bit(event.kind);
                if matches!(event.kind, EventKind::JobActive | EventKind::RoundStarted) {
                    group.activations = group.activations.saturating_add(1);
                }
                index.job_kinds |= kind_bit(event.kind);
                if event.kind == EventKind::LeaseClaimed {
                    index.lease_jobs.insert(group.key);
                }
            }
            if event.kind == EventKind::ProcessStart {
                index.restarts.push(id);
            }
            // The timeline is in time order: a stream's first event is its earliest.
            if event.origin().channel == Channel::EventsStream {
                let source = event.origin().source;
                if index.stream_from.is_none() {
                    index.stream_from = Some(event.at());
                }
                if !index.streams.iter().any(|stream| stream.source == source) {
                    index.streams.push(StreamStart { source, queue: event.queue, from: event.at() });
                }
            }
        }
        let mut start = 0;
        for group in &mut jobs.groups {
            let len = group.len;
            // From here on, a group's length counts the ids placed in it so far.
            (group.start, group.len) = (start, 0);
            start += len;
        }
        let mut ids = vec![0; start as usize];
        for (id, event) in timeline.ids() {
            let place = index.place_of_scope.known(event.scope()).unwrap_or(NO_JOB);
            if place < UNATTRIBUTED {
                let group = &mut jobs.groups[place as usize];
                ids[(group.start + group.len) as usize] = id;
                group.len += 1;
            }
        }
        let mut job_events = JobEvents { ids, groups: jobs.groups, places: jobs.places };
        let attempts = rounds::JobAttempts::build(
            timeline,
            i64::try_from(lock_ms).unwrap_or(i64::MAX),
            job_events.groups.iter().filter(|group| group.activations > 0).map(|group| {
                let events = &job_events.ids[group.start as usize..(group.start + group.len) as usize];
                let from = stream_start(timeline, &index.streams, group.key, events)
                    .and_then(|at| crate::model::Moment::new(at).ok());
                (group.key, events, from)
            }),
        );
        for (job, place) in attempts.places() {
            if let Some(&group) = job_events.places.get(&job) {
                job_events.groups[group as usize].attempts = place;
            }
        }
        index.job_events = job_events;
        index.attempts = attempts;
        let mut unattributed: Vec<Unattributed> = left_out
            .into_iter()
            .map(|(id, events)| {
                let mut queues = queues_of.get(&id).cloned().unwrap_or_default();
                queues.sort_unstable_by(|a, b| a.as_str().cmp(b.as_str()));
                Unattributed { id, queues, events }
            })
            .collect();
        unattributed.sort_unstable_by(|a, b| a.id.as_str().cmp(b.id.as_str()));
        index.unattributed = unattributed;
        index
    }
}

/// `JobEvents` while it is built: the groups in a list, and each job's place in it.
#[derive(Default)]
struct Jobs {
    groups: Vec<Group>,
    places: FxHashMap<JobKey, u32>,
}

impl Jobs {
    /// Where `job`'s group is, made when the job is first met.
    fn place(&mut self, job: JobKey) -> u32 {
        // Fewer jobs than events, and `read_sources` bounds those to 32 bits.
        let next = u32::try_from(self.groups.len()).expect("fewer jobs than events");
        let place = *self.places.entry(job).or_insert(next);
        if place == next {
            self.groups.push(Group::new(job));
        }
        place
    }
}

impl JobIndex {
    /// The job of the event with `scope`, when the scope names one that could be attributed.
    pub fn job_of_scope(
        place_of_scope: &ByHandle<Scope, u32>,
        job_events: &JobEvents,
        scope: crate::model::event::Handle<Scope>,
    ) -> Option<JobKey> {
        let place = place_of_scope.known(scope)?;
        (place < UNATTRIBUTED).then(|| job_events.groups[place as usize].key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::{Context, Settings};
    use crate::model::{Event, LockParams, Origin};

    /// An event of job `id` at `second`, from the events stream of `queue` (source 0 for `a`, 1
    /// for `b`), or from a log (source 2) that names no queue.
    fn event(second: i64, kind: EventKind, id: &str, queue: Option<&str>) -> Event {
        let at = chrono::DateTime::from_timestamp(1_796_028_400 + second, 0).unwrap();
        let (channel, source) = match queue {
            Some("a") => (Channel::EventsStream, 0),
            Some(_) => (Channel::EventsStream, 1),
            None => (Channel::Log, 2),
        };
        let line = u32::try_from(second).unwrap() + 1;
        let mut event = Event::new(at.into(), kind, Origin { channel, source, line });
        event.edit().job_id = Some(id.into());
        event.edit().queue = queue.map(Text::from);
        event
    }

    fn key(id: &str, queue: Option<&str>) -> JobKey {
        JobKey::new(queue.map(Text::from), id.into())
    }

    #[test]
    fn the_same_custom_id_in_two_queues_is_two_jobs_never_paired() {
        // daily-1 of queue a and daily-1 of queue b, each activated once and completed: read as
        // one job, the second activation would be a rerun of the first.
        let timeline = Timeline::new(vec![
            event(0, EventKind::JobActive, "daily-1", Some("a")),
            event(2, EventKind::JobActive, "daily-1", Some("b")),
            event(30, EventKind::JobCompleted, "daily-1", Some("a")),
            event(31, EventKind::JobCompleted, "daily-1", Some("b")),
        ]);
        let (params, settings) = (LockParams::default(), Settings::default());
        let context = Context::new(&timeline, &params, &settings);
        assert!(context.recoveries().is_empty());
        assert_eq!(context.attempts_of_job(key("daily-1", Some("a"))).len(), 1);
        assert_eq!(context.attempts_of_job(key("daily-1", Some("b"))).len(), 1);
        assert!(context.attempts_of_job(key("daily-1", None)).is_empty());
        assert_eq!(context.events_of_job(key("daily-1", Some("b"))), [1, 3]);
    }

    #[test]
    fn an_event_without_a_queue_is_the_job_of_the_only_queue_with_that_id() {
        let timeline = Timeline::new(vec![
            event(0, EventKind::JobActive, "42", Some("a")),
            event(1, EventKind::JobActive, "42", None),
            event(5, EventKind::JobCompleted, "42", None),
            // No event names a queue for 43: its queue is unknown, and it is a job of its own.
            event(6, EventKind::JobActive, "43", None),
        ]);
        let (params, settings) = (LockParams::default(), Settings::default());
        let context = Context::new(&timeline, &params, &settings);
        assert_eq!(context.events_of_job(key("42", Some("a"))).len(), 3);
        assert_eq!(context.job_of(timeline.get(2)), Some(key("42", Some("a"))));
        assert_eq!(context.job_of(timeline.get(3)), Some(key("43", None)));
        assert!(context.unattributed.is_empty());
    }

    #[test]
    fn an_event_without_a_queue_of_an_id_in_two_queues_is_given_to_neither_and_counted() {
        let timeline = Timeline::new(vec![
            event(0, EventKind::JobActive, "daily-1", Some("a")),
            event(1, EventKind::JobActive, "daily-1", Some("b")),
            event(2, EventKind::JobActive, "daily-1", None),
            event(40, EventKind::JobActive, "daily-1", None),
        ]);
        let (params, settings) = (LockParams::default(), Settings::default());
        let context = Context::new(&timeline, &params, &settings);
        assert_eq!(context.job_of(timeline.get(2)), None);
        assert_eq!(context.events_of_job(key("daily-1", Some("a"))), [0]);
        assert_eq!(context.events_of_job(key("daily-1", Some("b"))), [1]);
        assert!(context.recoveries().is_empty(), "the unattributed activations pair with nothing");
        let queues: Vec<&str> = context.unattributed[0].queues.iter().map(ustr::Ustr::as_str).collect();
        assert_eq!((context.unattributed[0].id.as_str(), queues), ("daily-1", vec!["a", "b"]));
        assert_eq!(context.unattributed[0].events, [2, 3]);
    }
}
