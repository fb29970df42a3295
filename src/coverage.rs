//! What a source cannot speak for: the times before a trimmed events stream begins.
//!
//! BullMQ trims its events stream (`streams.events.maxLen`, about 10,000 entries by default), so an
//! export reaches back only so far, and a missing stream event before its first entry proves
//! nothing. That is worth an assumption in the report only when the stream really starts late,
//! and the other sources' first lines do not show it: a log starts with the server's own start,
//! and a job hash's `timestamp` is the client's clock a moment before the same Lua script
//! (`storeJob`) writes the `added` entry on Redis' clock. So like is compared with like: the
//! stream's first entry against the earliest event of another source that BullMQ writes to the
//! stream as well (a job being added, activated, stalled, finished: from a log line, a job hash
//! field, a ledger's `round-started`), of the stream's queue, that is earlier by more than the
//! clock skew between a server and Redis (`CLOCK_SKEW_MS`) and the time resolution of its source.

use std::collections::HashMap;

use chrono::{DateTime, TimeDelta, Utc};

use crate::model::timeline::CLOCK_SKEW_MS;
use crate::model::{Channel, Event, EventKind, Text, Timeline};

/// The kinds of event BullMQ writes to its events stream as they happen, whoever else saw them;
/// and a ledger's `round-started`, which the processor writes after BullMQ's `active`.
const RECORDED_BY_THE_STREAM: [EventKind; 11] = [
    EventKind::JobAdded,
    EventKind::JobWaiting,
    EventKind::JobDelayed,
    EventKind::JobActive,
    EventKind::JobProgress,
    EventKind::JobStalled,
    EventKind::JobCompleted,
    EventKind::JobFailed,
    EventKind::JobRetriesExhausted,
    EventKind::JobRemoved,
    EventKind::RoundStarted,
];

/// One events stream: its source, its queue, its first entry.
struct Stream<'a> {
    source: u16,
    queue: Option<Text>,
    from: DateTime<Utc>,
    first: &'a Event,
}

/// An assumption for every events stream that begins after another source's record of something
/// the stream would have recorded too (see the module's introduction).
pub fn coverage_gaps(timeline: &Timeline) -> Vec<String> {
    // The timeline is in time order: a stream's first event is its first entry.
    let mut streams: Vec<Stream> = Vec::new();
    // The streams that name each job: a job of one stream is compared with that stream only.
    let mut streams_of_job: HashMap<Text, Vec<u16>> = HashMap::new();
    for event in timeline.events().iter().filter(|e| e.origin().channel == Channel::EventsStream) {
        let source = event.origin().source;
        if !streams.iter().any(|stream| stream.source == source) {
            streams.push(Stream { source, queue: event.queue, from: event.at(), first: event });
        }
        if let Some(job_id) = event.job_id {
            let named = streams_of_job.entry(job_id).or_default();
            if !named.contains(&source) {
                named.push(source);
            }
        }
    }
    let mut resolutions: HashMap<u16, i64> = HashMap::new();
    let mut gaps = Vec::new();
    for stream in &streams {
        // Whether `event` is something `stream` would have recorded.
        let recorded_by = |event: &Event| {
            let Some(job_id) = event.job_id else {
                return false;
            };
            if event.origin().channel == Channel::EventsStream || !RECORDED_BY_THE_STREAM.contains(&event.kind) {
                return false;
            }
            match streams_of_job.get(&job_id) {
                Some(named) => named.contains(&stream.source),
                // A job no stream names: the stream's if its queue is the stream's, or either is
                // not known and there is no other stream it could be of.
                None => match (event.queue, stream.queue) {
                    (Some(a), Some(b)) => a == b,
                    _ => streams.len() == 1,
                },
            }
        };
        let earlier = timeline.events().iter().take_while(|e| e.at() < stream.from);
        let missed = earlier.filter(|e| recorded_by(e)).find(|event| {
            let source = event.origin().source;
            let resolution_ns = *resolutions.entry(source).or_insert_with(|| timeline.time_resolution_ns(source));
            let slack = TimeDelta::milliseconds(CLOCK_SKEW_MS) + TimeDelta::nanoseconds(resolution_ns);
            event.at() + slack < stream.from
        });
        if let Some(event) = missed {
            let job = event.job_id.map_or("", |job| job.as_str());
            gaps.push(format!(
                "{}: the events stream starts at {}, but {}:{} records {} of job {job} at {}, which BullMQ writes to the stream as well, earlier by more than the {} s allowed for the clocks of a server and Redis (and the line's time resolution): the stream was trimmed, or exported late, and says nothing about earlier times; a missing stream event before its first entry is not evidence",
                timeline.path(stream.first),
                crate::time::format_rfc3339(stream.from),
                timeline.path(event),
                event.origin().line,
                event.kind.name(),
                crate::time::format_rfc3339(event.at()),
                CLOCK_SKEW_MS / 1000,
            ));
        }
    }
    gaps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Origin;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    /// Source 0 is the stream, 1 the job hashes, 2 a log, 3 a second stream.
    fn event(source: u16, when: &str, kind: EventKind, job: &str, queue: Option<&str>) -> Event {
        let channel = match source {
            0 | 3 => Channel::EventsStream,
            1 => Channel::JobHash,
            _ => Channel::Log,
        };
        let mut event = Event::new(at(when).into(), kind, Origin { channel, source, line: 1 });
        event.edit().job_id = Some(job.into());
        event.edit().queue = queue.map(Text::from);
        event
    }

    fn gaps(events: Vec<Event>) -> Vec<String> {
        let paths = ["events.json", "jobs.jsonl", "server.log", "other-events.json"].map(Text::from).to_vec();
        coverage_gaps(&Timeline::new(events).with_paths(paths))
    }

    #[test]
    fn a_hash_created_a_millisecond_before_its_added_entry_is_no_gap() {
        let found = gaps(vec![
            event(1, "2026-11-30T08:46:24.203Z", EventKind::JobAdded, "1", Some("q")),
            event(0, "2026-11-30T08:46:24.204Z", EventKind::JobAdded, "1", Some("q")),
            // A log that starts with the server's own start, before any job.
            event(2, "2026-11-30T08:46:23.000Z", EventKind::ProcessStart, "-", None),
        ]);
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn a_job_activated_well_before_the_first_entry_shows_the_stream_trimmed() {
        let found = gaps(vec![
            event(2, "2026-11-30T08:40:00.000Z", EventKind::JobActive, "1", Some("q")),
            event(0, "2026-11-30T08:46:24.204Z", EventKind::JobActive, "2", Some("q")),
        ]);
        assert_eq!(found.len(), 1);
        assert!(found[0].starts_with("events.json: the events stream starts at 2026-11-30T08:46:24.204Z"));
        assert!(found[0].contains("server.log:1 records job-active of job 1 at 2026-11-30T08:40:00.000Z"));
    }

    #[test]
    fn only_what_the_streams_queue_would_have_recorded_counts() {
        // Job 1 is of queue `other`; job 3's record is within the skew of the first entry.
        let found = gaps(vec![
            event(2, "2026-11-30T08:40:00.000Z", EventKind::JobActive, "1", Some("other")),
            event(2, "2026-11-30T08:46:23.500Z", EventKind::JobActive, "3", Some("q")),
            event(0, "2026-11-30T08:46:24.204Z", EventKind::JobActive, "2", Some("q")),
        ]);
        assert!(found.is_empty(), "{found:?}");
        // A job the second stream names is compared with that stream only.
        let found = gaps(vec![
            event(2, "2026-11-30T08:40:00.000Z", EventKind::JobActive, "1", None),
            event(3, "2026-11-30T08:39:59.000Z", EventKind::JobAdded, "1", None),
            event(0, "2026-11-30T08:46:24.204Z", EventKind::JobActive, "2", None),
        ]);
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn a_whole_second_log_is_allowed_its_second() {
        // The line reads 08:46:23 (a NestJS log) for a moment up to a second later: within the
        // skew plus its resolution of the first entry at 08:46:24.9.
        let found = gaps(vec![
            event(2, "2026-11-30T08:46:23Z", EventKind::JobActive, "1", Some("q")),
            event(2, "2026-11-30T08:46:30Z", EventKind::JobCompleted, "1", Some("q")),
            event(0, "2026-11-30T08:46:24.900Z", EventKind::JobCompleted, "2", Some("q")),
        ]);
        assert!(found.is_empty(), "{found:?}");
        // The same line in milliseconds is known to the millisecond: 1.9 s early is too early.
        let found = gaps(vec![
            event(2, "2026-11-30T08:46:23.000Z", EventKind::JobActive, "1", Some("q")),
            event(2, "2026-11-30T08:46:30.001Z", EventKind::JobCompleted, "1", Some("q")),
            event(0, "2026-11-30T08:46:24.900Z", EventKind::JobCompleted, "2", Some("q")),
        ]);
        assert_eq!(found.len(), 1, "{found:?}");
    }
}
