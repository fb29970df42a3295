//! All events of a case, merged in UTC.
//!
//! Sorting is by time, then by source position and line, so that the same inputs always give the
//! same order. Detectors must not read meaning into the order of simultaneous events: sources log
//! asynchronously and their clocks differ.

use super::Event;

#[derive(Debug, Default)]
pub struct Timeline {
    events: Vec<Event>,
}

/// Index of an event in the timeline; findings cite evidence by it.
pub type EventId = usize;

impl Timeline {
    pub fn new(mut events: Vec<Event>) -> Self {
        // The key is unique (one event per source line, except a job hash's few, which keep
        // their order by kind below), so an unstable sort gives one order and needs no scratch
        // copy of millions of events.
        events.sort_unstable_by_key(|a| (a.at, a.origin.source, a.origin.line, a.kind));
        Timeline { events }
    }

    pub fn events(&self) -> &[Event] {
        &self.events
    }

    pub fn get(&self, id: EventId) -> &Event {
        &self.events[id]
    }

    pub fn ids(&self) -> impl Iterator<Item = (EventId, &Event)> {
        self.events.iter().enumerate()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }
}
