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
}

/// Index of an event in the timeline; findings cite evidence by it. 32 bits: the indexes detectors
/// build hold millions of them, and a case of more than 4 billion events is refused when it is read
/// (`MAX_EVENTS`).
pub type EventId = u32;

/// The most events one timeline holds.
pub const MAX_EVENTS: usize = EventId::MAX as usize;

impl Timeline {
    pub fn new(mut events: Vec<Event>) -> Self {
        // The key is unique (one event per source line, except a job hash's few, which keep
        // their order by kind below), so an unstable sort gives one order and needs no scratch
        // copy of millions of events.
        events.sort_unstable_by_key(|a| (a.at, a.origin.source, a.origin.line, a.kind));
        let kinds = events.iter().map(|event| event.kind).collect();
        Timeline { events, kinds, paths: Vec::new() }
    }

    /// The timeline with the paths of its sources, in source order.
    #[must_use]
    pub fn with_paths(self, paths: Vec<Text>) -> Self {
        Timeline { paths, ..self }
    }

    /// The path of the source `event` was read from (empty when the timeline was given none).
    pub fn path(&self, event: &Event) -> &str {
        self.paths.get(event.origin.source as usize).map_or("", Text::as_str)
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

    /// How many events are of `kind`.
    pub fn count_of(&self, kind: EventKind) -> usize {
        self.kinds.iter().filter(|&&k| k == kind).count()
    }

    pub fn ids(&self) -> impl Iterator<Item = (EventId, &Event)> {
        // In range: `ingest::read_sources` refuses more than `MAX_EVENTS`.
        (0..).zip(self.events.iter())
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }
}
