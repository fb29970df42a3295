//! All events of a case, merged in UTC.
//!
//! Sorting is by time, then by source position and line, so that the same inputs always give the
//! same order. Detectors must not read meaning into the order of simultaneous events: sources log
//! asynchronously and their clocks differ.

use super::{Event, EventKind, Text};

#[derive(Debug, Default)]
pub struct Timeline {
    events: Vec<Event>,
    /// Each event's kind again, one byte each: detectors that look for a few kinds among a job's
    /// events, scattered over the timeline, read this instead of a cache line per event.
    kinds: Vec<EventKind>,
    /// Each source's path as the report shows it, by source position (`Origin::source`): an
    /// event carries the position only, which keeps millions of events 8 bytes smaller.
    paths: Vec<Text>,
    /// Where the texts of each source's lines are, by source position.
    line_texts: Vec<super::LineTexts>,
    /// For a log read inside an envelope, the envelope's UTC time of each line that became an
    /// event, by line (`InputSummary::envelope_times`), by source position.
    envelope_times: Vec<Vec<(u32, super::Moment)>>,
    /// Each source's time resolution (`time_resolution_ns`), found in one pass when first asked.
    resolutions: std::sync::OnceLock<Vec<i64>>,
}

/// The order of the timeline: time, then source position and line (then kind, for a job hash's
/// events, which share a line).
fn key(event: &Event) -> (super::Moment, u16, u32, EventKind) {
    let origin = event.origin();
    (event.moment(), origin.source, origin.line, event.kind)
}

/// How many events are earlier, in the timeline's order, than the event before them.
fn descents(events: &[Event]) -> usize {
    events.windows(2).filter(|pair| key(&pair[0]) > key(&pair[1])).count()
}

/// At most this many places where an event is earlier than the one before: the events are then
/// a few sorted runs (the sources, the parts of a ledger read in two), merged rather than sorted.
const MERGED_RUNS: usize = 64;

/// Index of an event in the timeline; findings cite evidence by it. 32 bits: the indexes detectors
/// build hold millions of them, and a case of more than 4 billion events is refused when it is read
/// (`MAX_EVENTS`).
pub type EventId = u32;

/// The most events one timeline holds.
pub const MAX_EVENTS: usize = EventId::MAX as usize;

/// How far apart two hosts' clocks are taken to be, at most, in milliseconds: an application
/// server's (its log, its ledger, the times a BullMQ client writes into a job hash) and Redis' (the
/// ids of the events stream). NTP keeps them within milliseconds; a second allows for a host that
/// syncs poorly. Whole hours apart is a zone mix-up, reported by `clock-offset-suspected`.
pub const CLOCK_SKEW_MS: i64 = 1_000;

/// The time units a source's timestamps may be written in, coarsest first (nanoseconds).
const UNITS_NS: [i64; 4] = [1_000_000_000, 1_000_000, 1_000, 1];

impl Timeline {
    pub fn new(mut events: Vec<Event>) -> Self {
        // The key is unique (one event per source line, except a job hash's few, which keep
        // their order by kind below), so every sort gives the same order.
        // Sources are usually written in time order, and they are appended one after another:
        // a few long runs, which a merging sort joins in a pass or two, with a scratch copy of
        // half the events (below the detectors' peak).
        if descents(&events) <= MERGED_RUNS {
            events.sort_by_key(key);
        } else if events.len() >= 1 << 16 {
            // Otherwise an unstable sort, which needs no scratch copy, with both halves on their
            // own core: split around the median first (in place), then each half on its own.
            let middle = events.len() / 2;
            events.select_nth_unstable_by_key(middle, key);
            let (earlier, later) = events.split_at_mut(middle);
            std::thread::scope(|scope| {
                scope.spawn(|| earlier.sort_unstable_by_key(key));
                later.sort_unstable_by_key(key);
            });
        } else {
            events.sort_unstable_by_key(key);
        }
        let kinds = events.iter().map(|event| event.kind).collect();
        Timeline {
            events,
            kinds,
            paths: Vec::new(),
            line_texts: Vec::new(),
            envelope_times: Vec::new(),
            resolutions: std::sync::OnceLock::new(),
        }
    }

    /// The timeline with the paths of its sources, in source order.
    #[must_use]
    pub fn with_paths(self, paths: Vec<Text>) -> Self {
        Timeline { paths, ..self }
    }

    /// The timeline with where the texts of its sources' lines are, in source order.
    #[must_use]
    pub fn with_line_texts(self, line_texts: Vec<super::LineTexts>) -> Self {
        Timeline { line_texts, ..self }
    }

    /// The timeline with its sources' envelope times (`InputSummary::envelope_times`), in source
    /// order.
    #[must_use]
    pub fn with_envelope_times(self, envelope_times: Vec<Vec<(u32, super::Moment)>>) -> Self {
        Timeline { envelope_times, ..self }
    }

    /// The sources that have envelope times of their lines.
    pub fn enveloped_sources(&self) -> impl Iterator<Item = u16> + '_ {
        (0..).zip(&self.envelope_times).filter(|(_, times)| !times.is_empty()).map(|(source, _)| source)
    }

    /// The envelope's UTC time of `event`'s line, when its source was read inside an envelope
    /// whose lines carry their own times.
    pub fn envelope_at(&self, event: &Event) -> Option<super::Moment> {
        let origin = event.origin();
        let times = self.envelope_times.get(usize::from(origin.source))?;
        let at = times.binary_search_by_key(&origin.line, |&(line, _)| line).ok()?;
        Some(times[at].1)
    }

    /// Where the texts of the lines of source `source` are (`None` when the timeline was given
    /// none for it).
    pub fn line_texts(&self, source: u16) -> Option<&super::LineTexts> {
        self.line_texts.get(usize::from(source))
    }

    /// The text of `event`'s line when it is kept in memory (`None`: it stays in its file, or the
    /// timeline was given no texts).
    pub fn kept_text(&self, event: &Event) -> Option<&str> {
        let origin = event.origin();
        self.line_texts(origin.source)?.kept(origin.line)
    }

    /// The path of the source `event` was read from (empty when the timeline was given none).
    pub fn path(&self, event: &Event) -> &str {
        self.paths.get(event.origin().source as usize).map_or("", Text::as_str)
    }

    pub fn events(&self) -> &[Event] {
        &self.events
    }

    pub fn get(&self, id: EventId) -> &Event {
        &self.events[id as usize]
    }

    pub fn kind(&self, id: EventId) -> EventKind {
        self.kinds[id as usize]
    }

    /// Every event's kind, in timeline order.
    pub fn kinds_in_order(&self) -> &[EventKind] {
        &self.kinds
    }

    /// How many events are of `kind`.
    pub fn count_of(&self, kind: EventKind) -> usize {
        self.kinds.iter().filter(|&&k| k == kind).count()
    }

    pub fn ids(&self) -> impl Iterator<Item = (EventId, &Event)> {
        // In range: `ingest::read_sources` refuses more than `MAX_EVENTS`.
        (0..).zip(self.events.iter())
    }

    /// `ids()` from the event at `first` on.
    pub fn ids_from(&self, first: usize) -> impl Iterator<Item = (EventId, &Event)> {
        // In range: `ingest::read_sources` refuses more than `MAX_EVENTS`.
        (EventId::try_from(first).unwrap_or(EventId::MAX)..).zip(self.events[first..].iter())
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// How finely source `source` wrote its times, in nanoseconds: the coarsest unit (1 s, 1 ms,
    /// 1 µs, 1 ns) of which every one of its events' times is a whole number. A log that writes
    /// whole seconds (NestJS) gives 1 s, and its lines' times are then known to a second only.
    /// Derived from the times rather than the format, because one format (a text log) may write
    /// either. A source with no event gives 1 ns.
    pub fn time_resolution_ns(&self, source: u16) -> i64 {
        let resolutions = self.resolutions.get_or_init(|| {
            // Per source, the index of the coarsest unit every time seen so far is a multiple of;
            // `None` until the source's first event. One pass for every source: detectors ask
            // about many events of few sources.
            let mut units: Vec<Option<usize>> = Vec::new();
            for event in &self.events {
                let source = usize::from(event.origin().source);
                if units.len() <= source {
                    units.resize(source + 1, None);
                }
                let nanos = i64::from(event.at().timestamp_subsec_nanos());
                let mut at = units[source].unwrap_or(0);
                while at < UNITS_NS.len() - 1 && nanos % UNITS_NS[at] != 0 {
                    at += 1;
                }
                units[source] = Some(at);
            }
            units.into_iter().map(|unit| UNITS_NS[unit.unwrap_or(UNITS_NS.len() - 1)]).collect()
        });
        resolutions.get(usize::from(source)).copied().unwrap_or(UNITS_NS[UNITS_NS.len() - 1])
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// The timeline without the events `drop` marks (by event id): evidence read twice, kept
    /// once. The order of the rest is unchanged, so ids change; nothing has cited any yet.
    #[must_use]
    pub fn without(self, drop: &[bool]) -> Self {
        let mut place = 0;
        let mut events = self.events;
        events.retain(|_| {
            place += 1;
            !drop.get(place - 1).copied().unwrap_or(false)
        });
        let kinds = events.iter().map(|event| event.kind).collect();
        Timeline { events, kinds, resolutions: std::sync::OnceLock::new(), ..self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Channel, Origin};

    #[test]
    fn a_large_timeline_is_sorted_by_time_then_source_then_line_as_one_sort_would() {
        // Enough events for the sort on both cores, with many equal times.
        let base = chrono::DateTime::from_timestamp(1_791_333_180, 0).unwrap();
        let mut seed: u64 = 7;
        let events: Vec<Event> = (0..100_000u32)
            .map(|line| {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                let at = base + chrono::Duration::milliseconds(i64::try_from(seed >> 54).unwrap());
                let source = u16::from(seed & 1 == 1);
                Event::new(at.into(), EventKind::ItemSelected, Origin { channel: Channel::Ledger, source, line })
            })
            .collect();
        assert!(descents(&events) > MERGED_RUNS, "random times: the unstable sort on two cores");
        sorts_as_one_sort_would(events);
        // Three sources, each in time order, appended: a few runs, merged. Equal times across
        // sources are ordered by source, then line.
        let mut events = Vec::new();
        for source in [2u16, 0, 1] {
            events.extend((0..40_000u32).map(|line| {
                let at = base + chrono::Duration::milliseconds(i64::from(line / 3 * 7 + u32::from(source)) % 90_000);
                Event::new(
                    at.into(),
                    EventKind::ItemSelected,
                    Origin { channel: Channel::Ledger, source, line: line + 1 },
                )
            }));
        }
        assert!(descents(&events) <= MERGED_RUNS, "a few runs: merged");
        sorts_as_one_sort_would(events);
    }

    #[test]
    fn a_sources_time_resolution_is_the_coarsest_unit_all_its_times_are_whole_in() {
        let base = chrono::DateTime::from_timestamp(1_791_333_180, 0).unwrap();
        let event = |source: u16, nanos: i64| {
            let origin = Origin { channel: Channel::Log, source, line: 1 };
            Event::new((base + chrono::Duration::nanoseconds(nanos)).into(), EventKind::JobActive, origin)
        };
        let timeline = Timeline::new(vec![
            // Whole seconds.
            event(0, 0),
            event(0, 3_000_000_000),
            // Milliseconds, one of them on a whole second.
            event(1, 0),
            event(1, 1_250_000_000),
            // Microseconds.
            event(2, 1_250_000),
            event(2, 17_000),
        ]);
        assert_eq!(timeline.time_resolution_ns(0), 1_000_000_000);
        assert_eq!(timeline.time_resolution_ns(1), 1_000_000);
        assert_eq!(timeline.time_resolution_ns(2), 1_000);
        assert_eq!(timeline.time_resolution_ns(3), 1, "no events: nothing coarser is known");
    }

    fn sorts_as_one_sort_would(events: Vec<Event>) {
        let mut expected = events.clone();
        expected.sort_by_key(|a| (a.at(), a.origin().source, a.origin().line));
        let timeline = Timeline::new(events);
        assert!(
            timeline.events().iter().zip(&expected).all(|(a, b)| a.origin() == b.origin() && a.moment() == b.moment())
        );
        assert_eq!(timeline.len(), expected.len());
        assert_eq!(descents(timeline.events()), 0);
    }
}
