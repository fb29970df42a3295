//! Rounds and job attempts: the units detectors reason about, assembled from events by id.
//!
//! A round is everything the ledger recorded under one run id. A job attempt is one activation of
//! one job id. Both are built from ids and times only, never from line order.

use ustr::UstrMap;

use chrono::{DateTime, Utc};

use super::event::ByHandle;
use super::job::JobKey;
use super::timeline::EventId;
use super::{Channel, EventKind, Moment, Scope, Text, Timeline};

#[derive(Debug, Clone, PartialEq)]
pub struct Round {
    pub run_id: Text,
    /// Which periodic sweep the round belongs to: its `job_name`, else the repeatable job's key in
    /// its job id (`repeat:<key>:<millis>`, as BullMQ names a repeatable or scheduled job's runs),
    /// else its `queue`; `None` when the ledger does not say, in which case all such rounds are
    /// taken as one sweep.
    pub sweep: Option<Text>,
    pub job_id: Option<Text>,
    pub slot: Option<DateTime<Utc>>,
    // `started` and `ended` are read through their methods: `NO_EVENT` for none keeps a round at
    // 64 bytes (an `Option` is 8), and a ledger has hundreds of thousands of rounds.
    started: EventId,
    ended: EventId,
    pub first_event: EventId,
    pub last_event: EventId,
    /// Where the round's `item-selected` rows start in `Rounds::ids`, its `effect-posted` rows
    /// right after them (see `Rounds::selections` and `Rounds::effects`).
    members_start: u32,
    selection_count: u32,
    effect_count: u32,
}

/// `Round::started` or `Round::ended` when the round has no such row: never an event's id, as a
/// timeline holds fewer than `MAX_EVENTS` (`EventId::MAX`) events.
const NO_EVENT: EventId = EventId::MAX;

/// Every round, ordered by start time (then run id, for stable output), and the ids of their
/// selections and effects in one flat list: a list per round would cost two allocations, and
/// their spare room, for each of a ledger's hundreds of thousands of rounds.
#[derive(Debug, Default)]
pub struct Rounds {
    all: Vec<Round>,
    ids: Vec<EventId>,
}

impl std::ops::Deref for Rounds {
    type Target = [Round];

    fn deref(&self) -> &[Round] {
        &self.all
    }
}

impl<'a> IntoIterator for &'a Rounds {
    type Item = &'a Round;
    type IntoIter = std::slice::Iter<'a, Round>;

    fn into_iter(self) -> Self::IntoIter {
        self.all.iter()
    }
}

impl Rounds {
    /// The round's `item-selected` rows, in time order.
    pub fn selections(&self, round: &Round) -> &[EventId] {
        let start = round.members_start as usize;
        &self.ids[start..start + round.selection_count as usize]
    }

    /// The round's `effect-posted` rows, in time order.
    pub fn effects(&self, round: &Round) -> &[EventId] {
        let start = (round.members_start + round.selection_count) as usize;
        &self.ids[start..start + round.effect_count as usize]
    }

    /// How many `item-selected` rows all rounds have together.
    pub fn selection_count(&self) -> usize {
        self.all.iter().map(|round| round.selection_count as usize).sum()
    }
}

impl Round {
    /// The round's first `round-started` row.
    pub fn started(&self) -> Option<EventId> {
        (self.started != NO_EVENT).then_some(self.started)
    }

    /// The earliest `round-finished` or `round-failed` row.
    pub fn ended(&self) -> Option<EventId> {
        (self.ended != NO_EVENT).then_some(self.ended)
    }

    /// When the round began: its `round-started` row, else its first row.
    pub fn start_at(&self, timeline: &Timeline) -> DateTime<Utc> {
        self.start_moment(timeline).utc()
    }

    /// When the round is known to have stopped running: its end row, else its last row (it was
    /// running at least until then).
    pub fn end_at(&self, timeline: &Timeline) -> DateTime<Utc> {
        self.end_moment(timeline).utc()
    }

    /// `start_at` as the timeline orders it.
    pub fn start_moment(&self, timeline: &Timeline) -> Moment {
        timeline.get(self.started().unwrap_or(self.first_event)).moment()
    }

    /// `end_at` as the timeline orders it.
    pub fn end_moment(&self, timeline: &Timeline) -> Moment {
        timeline.get(self.ended().unwrap_or(self.last_event)).moment()
    }

    /// Whether the round is a run of a periodic job: it has a scheduled slot, or its job id is a
    /// repeatable job's (`repeat:<key>:<millis>`). A one-off job's runs are not a sweep's rounds.
    pub fn is_periodic(&self) -> bool {
        self.slot.is_some() || self.job_id.is_some_and(|job| repeat_key(job).is_some())
    }

    pub fn is_running_at(&self, timeline: &Timeline, at: DateTime<Utc>) -> bool {
        self.start_at(timeline) <= at && at <= self.end_at(timeline)
    }
}

/// The key of a repeatable job from one of its runs' job ids: BullMQ names each run
/// `repeat:<key>:<millis>` (`Queue.add` with `repeat`, and job schedulers since 5.16), where the key
/// is the job's name, a scheduler id or a hash of its options.
pub fn repeat_key(job_id: Text) -> Option<Text> {
    let rest = job_id.as_str().strip_prefix("repeat:")?;
    let (key, millis) = rest.rsplit_once(':')?;
    (!key.is_empty() && !millis.is_empty() && millis.bytes().all(|b| b.is_ascii_digit())).then(|| Text::from(key))
}

/// Groups ledger events by run id, ordered by start time (then run id, for stable output).
pub fn rounds(timeline: &Timeline) -> Rounds {
    // Rounds in the order they are first seen, and where each run id's round is: the table of
    // places is a third the size of a table of rounds. Nearly every round has one start row:
    // sized for them, neither is rebuilt as it grows.
    let expected = timeline.count_of(EventKind::RoundStarted);
    let mut all: Vec<Round> = Vec::with_capacity(expected);
    let mut place_of: UstrMap<u32> =
        UstrMap::with_capacity_and_hasher(expected, std::hash::BuildHasherDefault::default());
    // Each round's selections and effects are counted first and placed in one list below, by a
    // second pass that finds each one's round again from its scope (a list of every member's round
    // between the passes was the largest part of building the detectors' context, 7 MB of the
    // main benchmark case's peak).
    let is_member = |kind: EventKind| matches!(kind, EventKind::ItemSelected | EventKind::EffectPosted);
    // Each event's round, worked out once per scope (the rows of a round share theirs), not looked
    // up by run id for each of millions of rows.
    let mut place_of_scope: ByHandle<Scope, Option<u32>> = ByHandle::new();
    for (id, event) in timeline.ids() {
        if !matches!(
            timeline.kind(id),
            EventKind::RoundStarted
                | EventKind::ItemSelected
                | EventKind::EffectPosted
                | EventKind::RoundFinished
                | EventKind::RoundFailed
        ) {
            continue;
        }
        let Some(place) = place_of_scope.get_or(event.scope(), |scope| {
            let run_id = scope.run_id?;
            let place = *place_of.entry(run_id).or_insert_with(|| {
                all.push(Round {
                    run_id,
                    sweep: None,
                    job_id: None,
                    slot: None,
                    started: NO_EVENT,
                    ended: NO_EVENT,
                    first_event: id,
                    last_event: id,
                    members_start: 0,
                    selection_count: 0,
                    effect_count: 0,
                });
                // Fewer rounds than events, and `read_sources` bounds those to 32 bits.
                u32::try_from(all.len() - 1).expect("fewer rounds than events")
            });
            // What the round's rows say of it, from the first that says it: rows with the same
            // scope say the same, so once per scope is enough.
            let round = &mut all[place as usize];
            if round.sweep.is_none() {
                round.sweep = scope.job_name.or_else(|| scope.job_id.and_then(repeat_key)).or(scope.queue);
            }
            if round.job_id.is_none() {
                round.job_id = scope.job_id;
            }
            if round.slot.is_none() {
                round.slot = scope.slot;
            }
            Some(place)
        }) else {
            continue;
        };
        let round = &mut all[place as usize];
        round.last_event = id;
        match event.kind {
            EventKind::RoundStarted if round.started == NO_EVENT => round.started = id,
            EventKind::RoundFinished | EventKind::RoundFailed if round.ended == NO_EVENT => round.ended = id,
            EventKind::ItemSelected => round.selection_count += 1,
            EventKind::EffectPosted => round.effect_count += 1,
            _ => {}
        }
    }
    drop(place_of);
    // Each round's stretch of the flat list, and how many of its selections and effects are
    // placed so far (the counts are the lengths again once all are).
    let mut start = 0;
    let mut placed: Vec<[u32; 2]> = Vec::with_capacity(all.len());
    for round in &mut all {
        round.members_start = start;
        start += round.selection_count + round.effect_count;
        placed.push([0, 0]);
    }
    let mut ids = vec![0; start as usize];
    let members = (0..).zip(timeline.kinds_in_order()).filter(|&(_, &kind)| is_member(kind));
    for (id, &kind) in members {
        // The first pass worked out every member's scope, and kept it: `ByHandle` has room for
        // every scope made before it, as all of the timeline's were.
        let worked_out = place_of_scope.known(timeline.get(id).scope());
        let Some(place) = worked_out.expect("the first pass worked out every member's scope") else { continue };
        let (round, placed) = (&all[place as usize], &mut placed[place as usize]);
        let (offset, count) =
            if kind == EventKind::EffectPosted { (round.selection_count, &mut placed[1]) } else { (0, &mut placed[0]) };
        ids[(round.members_start + offset + *count) as usize] = id;
        *count += 1;
    }
    drop(placed);
    // Each start time is looked up once: the comparisons would otherwise read events all over
    // the timeline.
    all.sort_by_cached_key(|a| (a.start_moment(timeline), a.run_id));
    Rounds { all, ids }
}

/// One activation of a job, as every channel that recorded it saw it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Attempt {
    /// Its record from the most authoritative channel that saw it (`Channel::activation_rank`:
    /// the events stream, then a log, then the ledger's `round-started` row, then a job hash's
    /// `processedOn`).
    pub activated: EventId,
    /// Every channel that recorded it, one bit per channel (`Channel::bit`).
    pub channels: u8,
    /// Its earliest record's time: what ended the attempt before it came before this.
    pub first: Moment,
}

impl Attempt {
    /// Whether `channel` recorded this activation.
    pub fn seen_by(&self, channel: Channel) -> bool {
        self.channels & channel.bit() != 0
    }
}

/// Each job's activations, in time order, merged from every channel: an activation recorded by
/// the events stream, a log, the ledger and a job hash is one attempt, and one that only some
/// channels recorded (the stream trimmed before it, a log that lost its line) is still there. See
/// `JobAttempts::build` for when two records are one activation.
///
/// One flat list grouped by job, jobs in id order: a list per job would cost an allocation, and
/// room for four, for each of a ledger's hundreds of thousands of jobs activated once.
#[derive(Debug, Default)]
pub struct JobAttempts {
    all: Vec<Attempt>,
    /// Each job, with where its attempts are in `all`, in job order (id, then queue). A job's
    /// place in this list is kept with its events (`detect::JobEvents`), not in a table of its own.
    jobs: Vec<(JobKey, u32, u32)>,
}

impl JobAttempts {
    /// Every job with its attempts, in job order (id, then queue).
    pub fn iter(&self) -> impl Iterator<Item = (JobKey, &[Attempt])> {
        self.jobs.iter().map(|&(job, start, len)| (job, &self.all[start as usize..(start + len) as usize]))
    }

    /// Every job with its place in the list (`at`), in job order.
    pub fn places(&self) -> impl Iterator<Item = (JobKey, u32)> + '_ {
        (0..).zip(&self.jobs).map(|(place, &(job, _, _))| (job, place))
    }

    /// The attempts of the job at `place` (see `places`; none: empty).
    pub fn at(&self, place: u32) -> &[Attempt] {
        self.jobs.get(place as usize).map_or(&[], |&(_, start, len)| &self.all[start as usize..(start + len) as usize])
    }

    /// The attempts of the job with id `job_id` in any queue (none: empty), by a search of the
    /// list: detectors use `Context::attempts_of_job`, which needs no search.
    #[cfg(test)]
    pub fn of(&self, job_id: Text) -> &[Attempt] {
        let place = self.jobs.iter().position(|&(job, _, _)| job.id == job_id);
        place.map_or(&[], |place| self.at(u32::try_from(place).unwrap_or(u32::MAX)))
    }

    /// The attempts of `jobs` (each job with its events, in time order, and when the events
    /// stream of its queue begins, if one was read): each job's activations merged from every
    /// channel that recorded them (`merge`, with `lock_ms`, `lockDuration`, bounding how late a
    /// ledger row of an activation may be).
    pub fn build<'a>(
        timeline: &Timeline,
        lock_ms: i64,
        jobs: impl Iterator<Item = (JobKey, &'a [EventId], Option<Moment>)>,
    ) -> JobAttempts {
        let mut all = Vec::new();
        let mut listed = Vec::new();
        let mut merger = Merger::new(timeline);
        for (job, events, stream_from) in jobs {
            let activations = merger.merge(events, Happening::Activation, stream_from, lock_ms);
            if activations.is_empty() {
                continue;
            }
            let start = u32::try_from(all.len()).expect("fewer attempts than events");
            all.extend(activations.iter().map(|&(activated, channels, first)| Attempt { activated, channels, first }));
            let len = u32::try_from(all.len()).expect("fewer attempts than events") - start;
            listed.push((job, start, len));
        }
        listed.sort_unstable_by_key(|a| a.0);
        JobAttempts { all, jobs: listed }
    }
}

/// What a job's records are merged into (`Merger::merge`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Happening {
    /// Activations: `job-active` of any channel, the ledger's `round-started`; a completion,
    /// failure or stall ends one.
    Activation,
    /// Failures: `job-failed` of any channel but the ledger (the application marking its run
    /// failed does not fail BullMQ's job); an activation ends one.
    Failure,
}

impl Happening {
    fn is_record(self, event: &super::Event) -> bool {
        match self {
            Happening::Activation => match event.kind {
                EventKind::JobActive => true,
                EventKind::RoundStarted => event.origin().channel == Channel::Ledger,
                _ => false,
            },
            Happening::Failure => event.kind == EventKind::JobFailed && event.origin().channel != Channel::Ledger,
        }
    }

    /// A record of this kind ends the happening gathered before it: a later record is another.
    fn closes(self, event: &super::Event) -> bool {
        match self {
            Happening::Activation => {
                matches!(event.kind, EventKind::JobCompleted | EventKind::JobFailed | EventKind::JobStalled)
            }
            Happening::Failure => Happening::Activation.is_record(event),
        }
    }
}

/// A happening being gathered from its records.
struct Gathering {
    best: (u8, EventId),
    first: Moment,
    /// The sources that recorded it: one source records a happening once.
    sources: Vec<u16>,
    channels: u8,
    /// When a completion, failure or stall of the job came after it began, if one did (`Happening::closes`): a
    /// record later than that is another happening's. A record at the very same moment is not (the
    /// timeline's order within a moment is the sources' order, which means nothing).
    closed: Option<Moment>,
}

/// Merges one job's records of a happening (an activation, a failure) from every channel into
/// one per happening, and remembers each source's time resolution between jobs.
pub struct Merger<'t> {
    timeline: &'t Timeline,
    resolutions: std::collections::HashMap<u16, i64>,
    gathered: Vec<Gathering>,
}

impl<'t> Merger<'t> {
    pub fn new(timeline: &'t Timeline) -> Self {
        Merger { timeline, resolutions: std::collections::HashMap::new(), gathered: Vec::new() }
    }

    fn resolution_of(&mut self, event: &super::Event) -> i64 {
        // Only a time on a whole second may be a whole-second log's.
        if event.at().timestamp_subsec_nanos() != 0 {
            return 0;
        }
        let source = event.origin().source;
        let timeline = self.timeline;
        *self.resolutions.entry(source).or_insert_with(|| timeline.time_resolution_ns(source))
    }

    /// The happenings in `events` (one job's, in time order), each as its most authoritative
    /// record, the channels that recorded it and its earliest record's time, in time order.
    ///
    /// The records are taken in time order; a record joins the happening gathered before it,
    /// rather than starting one of its own, when all of these hold:
    /// - nothing that ends it came between (`Happening::closes`);
    /// - its source has not recorded that happening already (a source records it once: two
    ///   `active` entries of one stream are two activations);
    /// - it is no later than the happening's first record by more than the clocks may disagree
    ///   (`CLOCK_SKEW_MS`, plus a whole second for a source that writes whole seconds), or, for a
    ///   ledger's `round-started` row (written when the processor began its run, often seconds
    ///   later), less than `lock_ms` later and no other ledger row is in the activation: a rerun
    ///   cannot come before the lock has expired.
    ///
    /// The most authoritative record is that of the best channel (`Channel::activation_rank`), of
    /// two of one channel the one with the finer time. A record that joins nothing is a happening
    /// of its own only where a more authoritative channel cannot speak: the events stream records
    /// every activation of its queue from its first entry on (`stream_from`), so a log's activation
    /// is one of its own when the job has no stream activation or it is older than the stream
    /// (trimmed; up to the clocks' skew after its first entry), and a log's failure always (the stream records only final failures); a ledger row, likewise and only when no log recorded one; a job hash's,
    /// when no other channel recorded any. A record that is not taken is left out, never counted
    /// twice: a log or ledger read in the wrong zone then adds nothing (`clock-offset-suspected`
    /// reports the zone).
    pub fn merge(
        &mut self,
        events: &[EventId],
        happening: Happening,
        stream_from: Option<Moment>,
        lock_ms: i64,
    ) -> Vec<(EventId, u8, Moment)> {
        let timeline = self.timeline;
        let skew_ns = super::timeline::CLOCK_SKEW_MS * 1_000_000;
        let mut recorded_by = 0u8;
        for &id in events {
            let event = timeline.get(id);
            if happening.is_record(event) {
                recorded_by |= event.origin().channel.bit();
            }
        }
        let by = |channel: Channel| recorded_by & channel.bit() != 0;
        // Where the stream cannot speak: before its first entry, the clocks' skew allowed (a
        // record that joined no stream entry, up to a skew after the stream's first, may be of an
        // entry trimmed just before it).
        let before_stream = |event: &super::Event| {
            !by(Channel::EventsStream)
                || stream_from.is_some_and(|from| event.moment().nanos() < from.nanos().saturating_add(skew_ns))
        };
        let mut gathered = std::mem::take(&mut self.gathered);
        gathered.clear();
        for &id in events {
            let event = timeline.get(id);
            let channel = event.origin().channel;
            if happening.closes(event) {
                if let Some(last) = gathered.last_mut() {
                    last.closed.get_or_insert(event.moment());
                }
                continue;
            }
            if !happening.is_record(event) {
                continue;
            }
            let source = event.origin().source;
            let rank = channel.activation_rank();
            let joins = match gathered.last() {
                Some(last)
                    if last.closed.is_none_or(|closed| event.moment() <= closed) && !last.sources.contains(&source) =>
                {
                    let after_ns = event.moment().nanos().saturating_sub(last.first.nanos());
                    if channel == Channel::Ledger {
                        last.channels & Channel::Ledger.bit() == 0
                            && after_ns > -skew_ns
                            && after_ns < lock_ms.saturating_mul(1_000_000)
                    } else {
                        let best = timeline.get(last.best.1);
                        let slack_ns = skew_ns + self.resolution_of(event).max(self.resolution_of(best));
                        after_ns.saturating_abs() <= slack_ns
                    }
                }
                _ => false,
            };
            if let (true, Some(last)) = (joins, gathered.last_mut()) {
                last.sources.push(source);
                last.channels |= channel.bit();
                // Of two records of one channel, the one with the finer time: a log of whole
                // seconds knows the moment only to its second.
                let whole = |e: &super::Event| e.at().timestamp_subsec_nanos() == 0;
                let finer = rank == last.best.0 && whole(timeline.get(last.best.1)) && !whole(event);
                if rank < last.best.0 || finer {
                    last.best = (rank, id);
                }
                continue;
            }
            let own = match channel {
                Channel::EventsStream => true,
                // BullMQ writes `failed` to its stream only when a job has failed for good (a
                // failure it retries leaves `delayed` or `waiting` there): the stream cannot speak
                // for the others.
                Channel::Log => happening == Happening::Failure || before_stream(event),
                Channel::Ledger => before_stream(event) && !by(Channel::Log),
                Channel::JobHash => recorded_by == Channel::JobHash.bit(),
            };
            if own {
                gathered.push(Gathering {
                    best: (rank, id),
                    first: event.moment(),
                    sources: vec![source],
                    channels: channel.bit(),
                    closed: None,
                });
            }
        }
        let merged = gathered.iter().map(|g| (g.best.1, g.channels, g.first)).collect();
        self.gathered = gathered;
        merged
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Event, Origin};
    use chrono::DateTime;

    fn activation(second: i64, kind: EventKind, channel: Channel, job: &str) -> Event {
        let at = DateTime::parse_from_rfc3339("2026-10-07T00:33:00Z").unwrap().with_timezone(&Utc)
            + chrono::Duration::seconds(second);
        let source = u16::from(channel == Channel::Log);
        let line = u32::try_from(second).unwrap() + 1;
        let mut event = Event::new(at.into(), kind, Origin { channel, source, line });
        event.edit().job_id = Some(job.into());
        event
    }

    fn row(second: i64, kind: EventKind, run: &str, item: Option<&str>) -> Event {
        let mut event = activation(second, kind, Channel::Ledger, run);
        event.edit().run_id = Some(run.into());
        event.item = item.map(crate::model::Item::from);
        event
    }

    #[test]
    fn a_failure_at_the_very_moment_of_an_activation_does_not_split_its_records() {
        // Two logs recorded the activation at 10.244 and a job hash the failure over the stall
        // limit in the same millisecond; whatever the order of the sources (the timeline orders
        // one moment by source), it is one activation.
        for order in [[0u16, 1, 2], [1, 0, 2], [0, 2, 1], [2, 1, 0]] {
            let at = DateTime::parse_from_rfc3339("2026-12-06T02:53:10.244Z").unwrap().with_timezone(&Utc);
            let record = |kind: EventKind, channel: Channel, source: u16| {
                let mut event = Event::new(at.into(), kind, Origin { channel, source, line: 1 });
                event.edit().job_id = Some("bf-x2".into());
                event
            };
            let timeline = Timeline::new(vec![
                record(EventKind::JobActive, Channel::Log, order[0]),
                record(EventKind::JobFailed, Channel::JobHash, order[1]),
                record(EventKind::JobActive, Channel::Log, order[2]),
            ]);
            let ids: Vec<EventId> = (0..3).collect();
            let merged = Merger::new(&timeline).merge(&ids, Happening::Activation, None, 4_000);
            assert_eq!(merged.len(), 1, "sources in the order {order:?}");
        }
    }

    #[test]
    fn interleaved_rounds_keep_their_own_selections_and_effects_in_time_order() {
        use EventKind::{EffectPosted, ItemSelected, RoundFinished, RoundStarted};
        let timeline = Timeline::new(vec![
            row(1, RoundStarted, "run-b", None),
            row(0, RoundStarted, "run-a", None),
            row(2, ItemSelected, "run-a", Some("PR-1")),
            row(3, ItemSelected, "run-b", Some("PR-2")),
            row(4, EffectPosted, "run-b", Some("PR-2")),
            row(5, ItemSelected, "run-a", Some("PR-3")),
            row(6, EffectPosted, "run-a", Some("PR-3")),
            row(7, EffectPosted, "run-a", Some("PR-1")),
            row(8, RoundFinished, "run-a", None),
            // A round with no start row, selections or effects.
            row(9, RoundFinished, "run-c", None),
            // Rows that name no run belong to no round, between the others'.
            activation(10, ItemSelected, Channel::Ledger, "job-without-run"),
            row(11, ItemSelected, "run-b", Some("PR-4")),
            activation(12, EffectPosted, Channel::Ledger, "job-without-run"),
            row(13, EffectPosted, "run-b", Some("PR-4")),
        ]);
        let rounds = rounds(&timeline);
        let items = |ids: &[EventId]| -> Vec<&str> {
            ids.iter().map(|&id| timeline.get(id).item.map_or("", |item| item.as_str())).collect()
        };
        let seen: Vec<(&str, Vec<&str>, Vec<&str>)> = rounds
            .iter()
            .map(|round| (round.run_id.as_str(), items(rounds.selections(round)), items(rounds.effects(round))))
            .collect();
        assert_eq!(
            seen,
            [
                ("run-a", vec!["PR-1", "PR-3"], vec!["PR-3", "PR-1"]),
                ("run-b", vec!["PR-2", "PR-4"], vec!["PR-2", "PR-4"]),
                ("run-c", vec![], vec![]),
            ]
        );
        assert_eq!(rounds[0].ended().map(|id| timeline.get(id).at()), Some(timeline.get(8).at()));
    }

    #[test]
    fn a_round_stays_small() {
        // A ledger has a round per run of its sweep, hundreds of thousands of them, all kept while
        // the detectors run (docs/performance.md): 16 bytes more is megabytes of peak memory.
        let size = std::mem::size_of::<Round>();
        assert!(size <= 64, "Round is {size} bytes");
    }

    #[test]
    fn a_round_without_start_or_end_rows_says_so() {
        let timeline = Timeline::new(vec![
            row(0, EventKind::ItemSelected, "run-a", Some("PR-1")),
            row(1, EventKind::RoundStarted, "run-b", None),
            row(2, EventKind::RoundFailed, "run-b", None),
        ]);
        let rounds = rounds(&timeline);
        let seen: Vec<_> = rounds.iter().map(|round| (round.run_id.as_str(), round.started(), round.ended())).collect();
        assert_eq!(seen, [("run-a", None, None), ("run-b", Some(1), Some(2))]);
    }

    /// Each job id's attempts, its events grouped by id alone.
    pub(crate) fn attempts_of_each_id(timeline: &Timeline) -> JobAttempts {
        let mut by_id: std::collections::BTreeMap<&str, Vec<EventId>> = std::collections::BTreeMap::new();
        for (id, event) in timeline.ids() {
            if let Some(job_id) = event.job_id {
                by_id.entry(job_id.as_str()).or_default().push(id);
            }
        }
        // The stream, when there is one, is source 0, and begins with its first entry.
        let stream_from =
            timeline.events().iter().find(|e| e.origin().channel == Channel::EventsStream).map(Event::moment);
        JobAttempts::build(
            timeline,
            1_178_000,
            by_id.iter().map(|(id, events)| (JobKey::new(None, Text::from(id)), events.as_slice(), stream_from)),
        )
    }

    #[test]
    fn each_job_keeps_the_activations_of_its_best_channel_in_time_order() {
        let timeline = Timeline::new(vec![
            // job-b: the ledger and the log both saw it; the log's two activations count.
            activation(10, EventKind::RoundStarted, Channel::Ledger, "job-b"),
            activation(40, EventKind::JobActive, Channel::Log, "job-b"),
            activation(11, EventKind::JobActive, Channel::Log, "job-b"),
            // job-a: only the ledger saw it.
            activation(5, EventKind::RoundStarted, Channel::Ledger, "job-a"),
            activation(6, EventKind::ItemSelected, Channel::Ledger, "job-a"),
        ]);
        let attempts = attempts_of_each_id(&timeline);
        let seen: Vec<(String, Vec<u64>)> = attempts
            .iter()
            .map(|(job, attempts)| {
                (job.to_string(), attempts.iter().map(|a| u64::from(timeline.get(a.activated).origin().line)).collect())
            })
            .collect();
        assert_eq!(seen, [("job-a".to_string(), vec![6]), ("job-b".to_string(), vec![12, 41])]);
        assert_eq!(attempts.of("job-b".into()).len(), 2);
        assert!(attempts.of("job-c".into()).is_empty());
    }

    /// A record of job `j` at `ms` milliseconds after 00:33:00, from `source` of `channel`.
    fn record(ms: i64, kind: EventKind, channel: Channel, source: u16) -> Event {
        let at = DateTime::parse_from_rfc3339("2026-10-07T00:33:00.000Z").unwrap().with_timezone(&Utc)
            + chrono::Duration::milliseconds(ms);
        let line = u32::try_from(ms / 10).unwrap() + 1;
        let mut event = Event::new(at.into(), kind, Origin { channel, source, line });
        event.edit().job_id = Some("j".into());
        event
    }

    /// Each attempt of `j`: when it was activated (ms after 00:33:00) and by which channels.
    fn merged(events: Vec<Event>) -> Vec<(i64, Vec<Channel>)> {
        let timeline = Timeline::new(events);
        let attempts = attempts_of_each_id(&timeline);
        let start = DateTime::parse_from_rfc3339("2026-10-07T00:33:00.000Z").unwrap().with_timezone(&Utc);
        attempts
            .of("j".into())
            .iter()
            .map(|a| {
                let channels = [Channel::EventsStream, Channel::Log, Channel::Ledger, Channel::JobHash]
                    .into_iter()
                    .filter(|&c| a.seen_by(c))
                    .collect();
                ((timeline.get(a.activated).at() - start).num_milliseconds(), channels)
            })
            .collect()
    }

    #[test]
    fn an_activation_the_trimmed_stream_lost_is_kept_from_the_log() {
        use Channel::{EventsStream, Log};
        // The stream begins after the first activation; the log has both.
        let attempts = merged(vec![
            record(0, EventKind::JobActive, Log, 1),
            record(60_000, EventKind::JobActive, Log, 1),
            record(59_998, EventKind::JobActive, EventsStream, 0),
        ]);
        assert_eq!(attempts, [(0, vec![Log]), (59_998, vec![EventsStream, Log])]);
    }

    #[test]
    fn one_activation_in_two_logs_and_the_ledger_is_one_attempt() {
        use Channel::{Ledger, Log};
        // A pod's own log and the shared text log both wrote the activation; the processor wrote
        // its ledger row 3.1 s later.
        let attempts = merged(vec![
            record(5, EventKind::JobActive, Log, 1),
            record(6, EventKind::JobActive, Log, 2),
            record(3_118, EventKind::RoundStarted, Ledger, 3),
        ]);
        assert_eq!(attempts, [(5, vec![Log, Ledger])]);
        // A log of whole seconds (its line stamped 00:33:00) and one of milliseconds: the finer
        // record gives the time.
        let attempts = merged(vec![record(0, EventKind::JobActive, Log, 2), record(584, EventKind::JobActive, Log, 1)]);
        assert_eq!(attempts, [(584, vec![Log])]);
    }

    #[test]
    fn a_ledger_row_older_than_the_stream_of_a_job_no_log_saw_is_an_activation_of_its_own() {
        use Channel::{EventsStream, Ledger};
        // The stream was trimmed after the first activation; the ledger has both runs' rows.
        let attempts = merged(vec![
            record(3_000, EventKind::RoundStarted, Ledger, 3),
            record(1_200_000, EventKind::JobActive, EventsStream, 0),
            record(1_203_000, EventKind::RoundStarted, Ledger, 3),
        ]);
        assert_eq!(attempts, [(3_000, vec![Ledger]), (1_200_000, vec![EventsStream, Ledger])]);
    }

    #[test]
    fn records_a_zone_away_from_the_best_channel_add_no_attempt() {
        use Channel::{Ledger, Log};
        // The log read in the wrong zone: its activations are 9 h after the ledger's rows. The
        // log is the job's best channel; the ledger's rows join none of its activations and are
        // left out rather than counted as two more.
        let hours = 9 * 3_600_000;
        let attempts = merged(vec![
            record(3_000, EventKind::RoundStarted, Ledger, 3),
            record(1_203_000, EventKind::RoundStarted, Ledger, 3),
            record(hours, EventKind::JobActive, Log, 1),
            record(hours + 1_200_000, EventKind::JobActive, Log, 1),
        ]);
        assert_eq!(attempts, [(hours, vec![Log]), (hours + 1_200_000, vec![Log])]);
    }

    #[test]
    fn a_retry_right_after_a_failure_is_a_second_attempt_in_every_channel() {
        use Channel::{EventsStream, Log};
        let attempts = merged(vec![
            record(0, EventKind::JobActive, EventsStream, 0),
            record(2, EventKind::JobActive, Log, 1),
            record(300, EventKind::JobFailed, EventsStream, 0),
            record(301, EventKind::JobFailed, Log, 1),
            record(310, EventKind::JobActive, EventsStream, 0),
            record(312, EventKind::JobActive, Log, 1),
        ]);
        assert_eq!(attempts, [(0, vec![EventsStream, Log]), (310, vec![EventsStream, Log])]);
        // Without the failure lines, the one stream cannot have recorded one activation twice.
        let attempts = merged(vec![
            record(0, EventKind::JobActive, EventsStream, 0),
            record(2, EventKind::JobActive, Log, 1),
            record(310, EventKind::JobActive, EventsStream, 0),
            record(312, EventKind::JobActive, Log, 1),
        ]);
        assert_eq!(attempts.len(), 2);
    }
}
