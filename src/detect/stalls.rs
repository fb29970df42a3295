//! Stalls, and the log lines that record them: what `stalled-rerun` and `unlogged-stall` both read.
//!
//! A stall is known from BullMQ's events stream (a `stalled` entry) or from timing (a recovery: two
//! activations of one job with nothing ending it between, `Context::recoveries`). An application
//! that listens for `stalled` writes its line after BullMQ's entry: the worker emits the event
//! once the stalled-check script has returned, and by then a worker may already have taken the job
//! again, so the line often comes after the rerun's `active` too. A window that closes at the rerun
//! misses the line, and the next stall's window finds it. So every stalled log line is matched to
//! one stall, the nearest, here, once; both findings read the matching, so that one can never say
//! "logged" of a stall the other calls unlogged.
//!
//! **When a line is a stall's.** A stall's time is its stream entry; a stall known by timing only
//! happened between the earliest moment its lock could expire (the lost activation +
//! `lockDuration`) and the rerun. A line is matched to the stall nearest to it (0 inside that
//! span), if that is at most `STALL_LINE_SLACK_MS` plus its source's time resolution
//! (`Timeline::time_resolution_ns`: a log of whole seconds, as NestJS writes, knows a line's time
//! to a second); on equal distances, to the earlier stall (a line follows its stall). A line near
//! no stall that falls between a recovery's two activations is that recovery's stall: between two
//! activations of one job there is only one stall. Any other line is matched to none. A stall may
//! have several lines (a `Worker` listener and a `QueueEvents` listener both logging it).

use chrono::{DateTime, TimeDelta, Utc};
use rustc_hash::FxHashMap;

use crate::model::timeline::{CLOCK_SKEW_MS, EventId};
use crate::model::{Channel, EventKind, JobKey, Timeline};

use super::Context;

/// How far from its stall a log line may be, beyond its source's time resolution, in
/// milliseconds: the two clocks (`CLOCK_SKEW_MS`) and up to 4 s for the listener to run after the
/// stalled check returned (milliseconds, unless the worker's event loop is busy with a job).
/// Stalls of one job are at least `lockDuration` apart, and the nearest takes the line.
pub const STALL_LINE_SLACK_MS: i64 = CLOCK_SKEW_MS + 4_000;

/// One stall of one job.
#[derive(Debug, Clone, PartialEq)]
pub struct Stall {
    pub job: JobKey,
    /// BullMQ's `stalled` entry in the events stream, when the stream recorded it.
    pub entry: Option<EventId>,
    /// The activation that lost its lock and the rerun, when the job was taken again.
    pub recovery: Option<(EventId, EventId)>,
    /// The log lines that record this stall, in time order (empty: the stall was not logged).
    pub lines: Vec<EventId>,
}

impl Stall {
    /// When the stall is dated: its stream entry, else the rerun.
    pub fn at(&self, timeline: &Timeline) -> DateTime<Utc> {
        let id = self.entry.or(self.recovery.map(|(_, rerun)| rerun)).expect("a stall has an entry or a recovery");
        timeline.get(id).at()
    }

    /// When the stall could have happened: its stream entry, else from the earliest lock expiry
    /// (never after the rerun) to the rerun.
    fn span(&self, timeline: &Timeline, lock_ms: i64) -> (DateTime<Utc>, DateTime<Utc>) {
        if let Some(entry) = self.entry {
            let at = timeline.get(entry).at();
            return (at, at);
        }
        let (first, rerun) = self.recovery.expect("a stall has an entry or a recovery");
        let rerun = timeline.get(rerun).at();
        let expiry = crate::time::plus_millis(timeline.get(first).at(), lock_ms);
        (expiry.min(rerun), rerun)
    }
}

/// Every stall of the case, by time (then job id), with its log lines.
#[derive(Debug, Default)]
pub struct Stalls {
    all: Vec<Stall>,
    /// Where each job's stalls are in `all`, in time order.
    of_job: FxHashMap<JobKey, Vec<u32>>,
}

impl Stalls {
    pub fn iter(&self) -> impl Iterator<Item = &Stall> {
        self.all.iter()
    }

    /// The stall of the recovery from `first` to `rerun` of `job_id`.
    pub fn of_recovery(&self, job: JobKey, first: EventId, rerun: EventId) -> Option<&Stall> {
        self.of_job(job).find(|stall| stall.recovery == Some((first, rerun)))
    }

    /// The job's stalls, in time order.
    pub fn of_job(&self, job: JobKey) -> impl Iterator<Item = &Stall> {
        self.of_job.get(&job).into_iter().flatten().map(|&place| &self.all[place as usize])
    }
}

/// The case's stalls, each with the log lines matched to it (see the module's introduction).
pub fn read(context: &Context) -> Stalls {
    let timeline = context.timeline;
    let mut by_job: FxHashMap<JobKey, Vec<Stall>> = FxHashMap::default();
    for (job, first, rerun) in context.recoveries() {
        by_job.entry(job).or_default().push(Stall {
            job,
            entry: None,
            recovery: Some((first, rerun)),
            lines: Vec::new(),
        });
    }
    let mut lines: Vec<(JobKey, EventId)> = Vec::new();
    if context.jobs_have(&[EventKind::JobStalled]) {
        for (job, ids) in context.job_events.iter_having(&[EventKind::JobStalled]) {
            let stalled = ids.iter().copied().filter(|&id| timeline.kind(id) == EventKind::JobStalled);
            let mut entries = Vec::new();
            for id in stalled {
                match timeline.get(id).origin().channel {
                    Channel::EventsStream => entries.push(id),
                    Channel::Log => lines.push((job, id)),
                    Channel::Ledger | Channel::JobHash => {}
                }
            }
            let stalls = by_job.entry(job).or_default();
            stalls.sort_by_key(|stall| stall.recovery.map(|(_, rerun)| timeline.get(rerun).moment()));
            // Latest first: of two entries between the same activations, the later one made the
            // rerun; on a shared activation the earlier recovery takes it (a stall precedes its
            // rerun).
            for &entry in entries.iter().rev() {
                let at = timeline.get(entry).moment();
                let recovery = stalls.iter_mut().find(|stall| {
                    stall.entry.is_none()
                        && stall.recovery.is_some_and(|(first, rerun)| {
                            timeline.get(first).moment() <= at && at <= timeline.get(rerun).moment()
                        })
                });
                match recovery {
                    Some(stall) => stall.entry = Some(entry),
                    None => stalls.push(Stall { job, entry: Some(entry), recovery: None, lines: Vec::new() }),
                }
            }
        }
    }
    let lock_ms = i64::try_from(context.params.lock_duration).unwrap_or(i64::MAX);
    let mut resolutions: std::collections::HashMap<u16, i64> = std::collections::HashMap::new();
    // Each job's stalls in time order, for the earlier of two equally near to take a line.
    for stalls in by_job.values_mut() {
        stalls.sort_by_cached_key(|stall| stall.span(timeline, lock_ms).0);
    }
    for (job, line) in lines {
        let Some(stalls) = by_job.get_mut(&job) else {
            continue;
        };
        let event = timeline.get(line);
        let resolution_ns = *resolutions
            .entry(event.origin().source)
            .or_insert_with(|| timeline.time_resolution_ns(event.origin().source));
        if let Some(place) = matching_stall(timeline, stalls, event.at(), resolution_ns, lock_ms) {
            stalls[place].lines.push(line);
        }
    }
    let mut all: Vec<Stall> = by_job.into_values().flatten().collect();
    all.sort_by_cached_key(|stall| (stall.at(timeline), stall.job));
    let mut of_job: FxHashMap<JobKey, Vec<u32>> = FxHashMap::default();
    for (place, stall) in (0..).zip(&mut all) {
        stall.lines.sort_unstable();
        of_job.entry(stall.job).or_default().push(place);
    }
    Stalls { all, of_job }
}

/// How far a line from a source of `resolution_ns` may be from its stall.
pub fn line_tolerance(resolution_ns: i64) -> TimeDelta {
    TimeDelta::milliseconds(STALL_LINE_SLACK_MS) + TimeDelta::nanoseconds(resolution_ns)
}

/// The stall (a place in `stalls`, which are in time order) a stalled line at `at` records.
fn matching_stall(
    timeline: &Timeline,
    stalls: &[Stall],
    at: DateTime<Utc>,
    resolution_ns: i64,
    lock_ms: i64,
) -> Option<usize> {
    let tolerance = line_tolerance(resolution_ns);
    let distance = |stall: &Stall| {
        let (from, to) = stall.span(timeline, lock_ms);
        if at < from {
            from - at
        } else if at > to {
            at - to
        } else {
            TimeDelta::zero()
        }
    };
    // The first of the nearest: `min_by_key` would keep the last.
    let nearest = stalls
        .iter()
        .enumerate()
        .map(|(place, stall)| (distance(stall), place))
        .filter(|&(distance, _)| distance <= tolerance)
        .min();
    nearest.map(|(_, place)| place).or_else(|| {
        stalls.iter().position(|stall| {
            stall.recovery.is_some_and(|(first, rerun)| timeline.get(first).at() < at && at <= timeline.get(rerun).at())
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::Settings;
    use crate::model::{Event, LockParams, Origin};
    use chrono::Timelike;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    /// An event of job `j`; source 0 is the stream, 1 a log in milliseconds, 2 a log in whole
    /// seconds.
    fn event(source: u16, line: u32, when: &str, kind: EventKind) -> Event {
        let channel = if source == 0 { Channel::EventsStream } else { Channel::Log };
        let mut event = Event::new(at(when).into(), kind, Origin { channel, source, line });
        event.edit().job_id = Some("j".into());
        event
    }

    fn read_stalls(events: Vec<Event>) -> (Timeline, Vec<Stall>) {
        let timeline = Timeline::new(events);
        let params = LockParams { lock_duration: 4_000, lock_renew_time: 2_000, ..LockParams::default() };
        let settings = Settings::default();
        let context = Context::new(&timeline, &params, &settings);
        let stalls = read(&context).all;
        (timeline, stalls)
    }

    fn line_numbers(timeline: &Timeline, stall: &Stall) -> Vec<u32> {
        stall.lines.iter().map(|&id| timeline.get(id).origin().line).collect()
    }

    #[test]
    fn two_stalls_of_one_job_each_get_the_line_written_just_after_them() {
        // Activated at 0 s; stalled and taken again at 5 s; again at 35 s. Each stalled line is
        // written 5 ms after BullMQ's entry and the rerun's `active`.
        let (timeline, stalls) = read_stalls(vec![
            event(0, 1, "2026-12-01T00:00:00Z", EventKind::JobActive),
            event(0, 2, "2026-12-01T00:00:05Z", EventKind::JobStalled),
            event(0, 3, "2026-12-01T00:00:05Z", EventKind::JobActive),
            event(1, 10, "2026-12-01T00:00:05.005Z", EventKind::JobStalled),
            event(0, 4, "2026-12-01T00:00:35Z", EventKind::JobStalled),
            event(0, 5, "2026-12-01T00:00:35Z", EventKind::JobActive),
            event(1, 11, "2026-12-01T00:00:35.005Z", EventKind::JobStalled),
        ]);
        assert_eq!(stalls.len(), 2);
        assert_eq!(line_numbers(&timeline, &stalls[0]), [10]);
        assert_eq!(line_numbers(&timeline, &stalls[1]), [11], "not the first stall's line");
        assert!(stalls.iter().all(|s| s.entry.is_some() && s.recovery.is_some()));
    }

    #[test]
    fn by_timing_alone_each_line_goes_to_the_rerun_it_follows() {
        let (timeline, stalls) = read_stalls(vec![
            event(1, 1, "2026-12-01T00:00:00Z", EventKind::JobActive),
            event(1, 2, "2026-12-01T00:00:05Z", EventKind::JobActive),
            event(1, 3, "2026-12-01T00:00:05.005Z", EventKind::JobStalled),
            event(1, 4, "2026-12-01T00:00:35Z", EventKind::JobActive),
            event(1, 5, "2026-12-01T00:00:35.005Z", EventKind::JobStalled),
        ]);
        assert_eq!(stalls.iter().map(|s| line_numbers(&timeline, s)).collect::<Vec<_>>(), [vec![3], vec![5]]);
    }

    #[test]
    fn a_whole_second_line_is_matched_as_far_as_its_resolution_allows() {
        // BullMQ's entry at 05.750; a NestJS line written a few ms later reads 00:00:05 (its
        // second truncated).
        let (timeline, stalls) = read_stalls(vec![
            event(0, 1, "2026-12-01T00:00:05.750Z", EventKind::JobStalled),
            event(2, 1, "2026-12-01T00:00:05Z", EventKind::JobStalled),
            event(2, 2, "2026-12-01T00:00:01Z", EventKind::ProcessStart),
        ]);
        assert_eq!(timeline.time_resolution_ns(2), 1_000_000_000);
        assert_eq!(line_numbers(&timeline, &stalls[0]), [1]);
        // A line written 0.5 s beyond the slack before the entry (at 00:00:00.250): a log of
        // whole seconds writes 00:00:00, 5.75 s away, within its tolerance of slack + 1 s; a log
        // of milliseconds writes it exactly, outside its tolerance of slack + 1 ms.
        assert_eq!(STALL_LINE_SLACK_MS, 5_000, "the times below are worked out for a 5 s slack");
        for (source, line, matched) in [(2, "2026-12-01T00:00:00Z", true), (1, "2026-12-01T00:00:00.250Z", false)] {
            let (timeline, stalls) = read_stalls(vec![
                event(0, 1, "2026-12-01T00:00:05.750Z", EventKind::JobStalled),
                event(source, 1, line, EventKind::JobStalled),
                event(source, 2, "2026-12-01T00:00:07Z", EventKind::ProcessStart),
            ]);
            assert_eq!(!stalls[0].lines.is_empty(), matched, "source {source}, line at {line}");
            let expected = if source == 2 { 1_000_000_000 } else { 1_000_000 };
            assert_eq!(timeline.time_resolution_ns(source), expected);
        }
    }

    #[test]
    fn a_line_40_s_from_any_stall_is_matched_to_none() {
        let (_, stalls) = read_stalls(vec![
            event(0, 1, "2026-12-01T00:00:00Z", EventKind::JobActive),
            event(0, 2, "2026-12-01T00:00:05Z", EventKind::JobStalled),
            event(0, 3, "2026-12-01T00:00:05Z", EventKind::JobActive),
            event(0, 4, "2026-12-01T00:00:06Z", EventKind::JobCompleted),
            event(1, 1, "2026-12-01T00:00:45Z", EventKind::JobStalled),
        ]);
        assert_eq!(stalls.len(), 1);
        assert!(stalls[0].lines.is_empty());
    }

    #[test]
    fn a_line_far_from_the_entry_between_the_two_activations_is_that_stalls() {
        // The line is 29.9 s before BullMQ's entry, beyond any slack, but between the lost
        // activation and the rerun, where only one stall can be.
        let (timeline, stalls) = read_stalls(vec![
            event(0, 1, "2026-12-01T00:00:00Z", EventKind::JobActive),
            event(0, 2, "2026-12-01T00:00:59.900Z", EventKind::JobStalled),
            event(0, 3, "2026-12-01T00:01:00Z", EventKind::JobActive),
            event(1, 1, "2026-12-01T00:00:30Z", EventKind::JobStalled),
        ]);
        assert_eq!(line_numbers(&timeline, &stalls[0]), [1]);
        // After the rerun, as far away, it is nobody's.
        let (_, stalls) = read_stalls(vec![
            event(0, 1, "2026-12-01T00:00:00Z", EventKind::JobActive),
            event(0, 2, "2026-12-01T00:00:59.900Z", EventKind::JobStalled),
            event(0, 3, "2026-12-01T00:01:00Z", EventKind::JobActive),
            event(1, 1, "2026-12-01T00:01:29.800Z", EventKind::JobStalled),
        ]);
        assert!(stalls[0].lines.is_empty());
    }

    fn detect_both(events: Vec<Event>) -> (Timeline, Vec<crate::model::Finding>, Vec<crate::model::Finding>) {
        use crate::detect::Detector;
        let timeline = Timeline::new(events);
        let params = LockParams {
            lock_duration: 4_000,
            lock_renew_time: 2_000,
            stalled_interval: 1_000,
            ..LockParams::default()
        };
        let settings = Settings::default();
        let context = Context::new(&timeline, &params, &settings);
        let reruns = crate::detect::stalled_rerun::StalledRerun.detect(&context);
        let unlogged = crate::detect::unlogged_stall::UnloggedStall.detect(&context);
        (timeline, reruns, unlogged)
    }

    #[test]
    fn each_stalled_rerun_cites_its_own_line_and_neither_finding_calls_it_unlogged() {
        let (timeline, reruns, unlogged) = detect_both(vec![
            event(0, 1, "2026-12-01T00:00:00Z", EventKind::JobActive),
            event(0, 2, "2026-12-01T00:00:05Z", EventKind::JobStalled),
            event(0, 3, "2026-12-01T00:00:05Z", EventKind::JobActive),
            event(1, 10, "2026-12-01T00:00:05.005Z", EventKind::JobStalled),
            event(0, 4, "2026-12-01T00:00:35Z", EventKind::JobStalled),
            event(0, 5, "2026-12-01T00:00:35Z", EventKind::JobActive),
            event(1, 11, "2026-12-01T00:00:35.005Z", EventKind::JobStalled),
        ]);
        assert_eq!(reruns.len(), 2);
        let cited_lines = |finding: &crate::model::Finding| -> Vec<u32> {
            finding
                .evidence
                .iter()
                .map(|&id| timeline.get(id))
                .filter(|e| e.origin().channel == Channel::Log)
                .map(|e| e.origin().line)
                .collect()
        };
        let by_time = |at: &str| reruns.iter().find(|f| f.at == super::tests::at(at)).expect("a rerun then");
        assert_eq!(cited_lines(by_time("2026-12-01T00:00:05Z")), [10]);
        assert_eq!(cited_lines(by_time("2026-12-01T00:00:35Z")), [11]);
        for rerun in &reruns {
            assert_eq!(rerun.get("stalled_logged"), Some(&crate::model::Value::Flag(true)));
        }
        assert!(unlogged.is_empty(), "{unlogged:?}");
    }

    /// A small deterministic generator (a 64-bit LCG): the same cases on every run.
    struct Cases(u64);

    impl Cases {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 33) % n
        }
    }

    #[test]
    fn for_every_stall_stalled_rerun_says_logged_exactly_when_unlogged_stall_is_silent() {
        use crate::model::Value;
        let base = at("2026-12-01T00:00:00Z");
        let mut cases = Cases(16);
        let mut reruns_seen = 0;
        let mut logged_seen = 0;
        for case in 0..300 {
            let with_stream = cases.below(2) == 0;
            // Source 1 writes milliseconds, source 2 whole seconds (NestJS).
            let log = 1 + u16::try_from(cases.below(2)).unwrap();
            let when = |ms: i64| {
                let at = base + TimeDelta::milliseconds(ms);
                let at = if log == 2 { at.with_nanosecond(0).unwrap() } else { at };
                at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
            };
            let stream_at =
                |ms: i64| (base + TimeDelta::milliseconds(ms)).to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
            let mut events = Vec::new();
            let mut line = 0;
            let mut next = || {
                line += 1;
                line
            };
            let mut t: i64 = 0;
            let activations = 2 + cases.below(3);
            for n in 0..activations {
                if n > 0 {
                    // Lost (a stall: the lock of 4 s ran out) or ended (a completion, then a
                    // new activation: a retry, no stall).
                    let stalled = cases.below(4) != 0;
                    let gap = 4_500 + i64::try_from(cases.below(40_000)).unwrap();
                    if !stalled {
                        events.push(event(log, next(), &when(t + gap / 2), EventKind::JobCompleted));
                    }
                    t += gap;
                    if stalled && with_stream {
                        let early = i64::try_from(cases.below(300)).unwrap();
                        events.push(event(0, next(), &stream_at(t - early), EventKind::JobStalled));
                    }
                    if stalled {
                        // The listener's line, if any: usually just after, sometimes far.
                        match cases.below(5) {
                            0 => {}
                            1 => {
                                let far = 6_000 + i64::try_from(cases.below(60_000)).unwrap();
                                events.push(event(log, next(), &when(t + far), EventKind::JobStalled));
                            }
                            _ => {
                                let near = i64::try_from(cases.below(3_000)).unwrap() - 1_000;
                                events.push(event(log, next(), &when(t + near), EventKind::JobStalled));
                            }
                        }
                    }
                }
                if with_stream {
                    events.push(event(0, next(), &stream_at(t), EventKind::JobActive));
                }
                events.push(event(log, next(), &when(t + 2), EventKind::JobActive));
            }
            // A stray stalled line anywhere.
            if cases.below(3) == 0 {
                let stray = i64::try_from(cases.below(u64::try_from(t).unwrap() + 60_000)).unwrap();
                events.push(event(log, next(), &when(stray), EventKind::JobStalled));
            }
            let (timeline, reruns, unlogged) = detect_both(events);
            let mut cited = std::collections::HashSet::new();
            for rerun in &reruns {
                reruns_seen += 1;
                let logged = rerun.get("stalled_logged") == Some(&Value::Flag(true));
                logged_seen += usize::from(logged);
                let fired = unlogged.iter().any(|u| u.evidence.iter().all(|id| rerun.evidence.contains(id)));
                assert_ne!(logged, fired, "case {case}: {rerun:?}\nunlogged: {unlogged:?}");
                for &id in &rerun.evidence {
                    if timeline.get(id).kind == EventKind::JobStalled
                        && timeline.get(id).origin().channel == Channel::Log
                    {
                        assert!(cited.insert(id), "case {case}: line {id} cited by two reruns");
                    }
                }
            }
        }
        assert!(
            reruns_seen > 300 && logged_seen > 100 && reruns_seen - logged_seen > 100,
            "{reruns_seen} {logged_seen}"
        );
    }
}
