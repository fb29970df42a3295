//! How late each source writes what BullMQ's events stream records: the window a time read from a
//! log or a job hash stands for.
//!
//! BullMQ writes its stream entry in the same Redis script that moves the job (Redis's clock, the
//! clock its locks run on). A log writes its line when the application's listener runs, a few to a
//! few dozen milliseconds later on a busy process, on the pod's clock; a job hash's `processedOn`
//! is the worker's `Date.now()` taken before the script ran. Every lock time rests on the
//! activation, so an activation known only from a log line is not known to the millisecond: it
//! came between the line's time less the most the line lagged and less the least.
//!
//! The lag is measured in the case itself, on the activations that both the stream and the source
//! recorded (merged as one attempt, `rounds::Merger`): no constant, and no guess when a source was
//! never seen beside the stream (then its time is taken as it is, and the finding says so).

use std::collections::HashMap;

use crate::model::timeline::{CLOCK_SKEW_MS, EventId};
use crate::model::{Channel, Event, EventKind, Moment};

use super::Context;

/// The least and the most a source's records of activations came after the stream's, in
/// nanoseconds, and on how many activations that was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lag {
    pub least_ns: i64,
    pub most_ns: i64,
    pub samples: u32,
}

/// Each source's `Lag` by kind of record, for the sources that recorded what the stream recorded
/// too: a log's `job completed` lines may lag more than its `job active` lines, and a job hash's
/// `processedOn` and `finishedOn` are taken before BullMQ's script ran, not after.
#[derive(Debug, Default)]
pub struct Lags {
    of_source: HashMap<(u16, EventKind), Lag>,
}

/// The kinds of record whose lag is measured: what BullMQ writes to its stream and the other
/// channels record too.
const MEASURED: [EventKind; 3] = [EventKind::JobActive, EventKind::JobCompleted, EventKind::JobFailed];

impl Lags {
    pub fn measure(context: &Context) -> Lags {
        let timeline = context.timeline;
        let mut of_source: HashMap<(u16, EventKind), Lag> = HashMap::new();
        let skew_ns = CLOCK_SKEW_MS * 1_000_000;
        for (_, events) in context.job_events.iter() {
            let entries = events
                .iter()
                .map(|&id| timeline.get(id))
                .filter(|e| e.origin().channel == Channel::EventsStream && MEASURED.contains(&e.kind));
            for entry in entries {
                let at = entry.moment().nanos();
                // Each other source's nearest record of the same kind, within the clocks' skew.
                let mut nearest: HashMap<u16, i64> = HashMap::new();
                for &id in events {
                    let record = timeline.get(id);
                    let after = record.moment().nanos() - at;
                    let same = record.kind == entry.kind
                        && matches!(record.origin().channel, Channel::Log | Channel::JobHash)
                        && after.abs() <= skew_ns;
                    if same {
                        let best = nearest.entry(record.origin().source).or_insert(after);
                        if after.abs() < best.abs() {
                            *best = after;
                        }
                    }
                }
                for (source, after) in nearest {
                    let lag = of_source.entry((source, entry.kind)).or_insert(Lag {
                        least_ns: after,
                        most_ns: after,
                        samples: 0,
                    });
                    lag.least_ns = lag.least_ns.min(after);
                    lag.most_ns = lag.most_ns.max(after);
                    lag.samples += 1;
                }
            }
        }
        Lags { of_source }
    }

    /// How `source`'s records of `kind` lagged the stream's.
    pub fn of(&self, source: u16, kind: EventKind) -> Option<Lag> {
        self.of_source.get(&(source, kind)).copied()
    }
}

/// When something a record stands for happened, as far as the record pins it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct When {
    pub earliest: Moment,
    pub latest: Moment,
    /// The lag it was widened by, when the record is not BullMQ's stream entry.
    pub lag: Option<Lag>,
}

impl When {
    /// Whether the window is a moment (within a millisecond).
    pub fn is_exact(&self) -> bool {
        self.latest.nanos() - self.earliest.nanos() < 1_000_000
    }
}

impl Context<'_> {
    /// When the activation whose most authoritative record is `activated` happened: that record's
    /// time when it is the stream's (or when its source was never seen beside the stream), else
    /// the window its source's measured lag allows.
    pub fn activation_when(&self, activated: EventId) -> When {
        self.when_of(self.timeline.get(activated))
    }

    /// When what `event` records (an activation, a completion, a failure) happened, as
    /// `activation_when` says it.
    pub fn when_of(&self, event: &Event) -> When {
        let at = event.moment();
        let exact = When { earliest: at, latest: at, lag: None };
        if event.origin().channel == Channel::EventsStream {
            return exact;
        }
        let lags = self.lags.get_or_init(|| Lags::measure(self));
        match lags.of(event.origin().source, event.kind) {
            Some(lag) if lag.most_ns > lag.least_ns || lag.least_ns != 0 => When {
                earliest: Moment::from_nanos(at.nanos().saturating_sub(lag.most_ns)),
                latest: Moment::from_nanos(at.nanos().saturating_sub(lag.least_ns)),
                lag: Some(lag),
            },
            _ => exact,
        }
    }

    /// When the failure that `primary` records happened, from every record of it: the job's
    /// other `job-failed` records within the clocks' skew with no activation of the job between
    /// (a job hash's `finishedOn`, taken before BullMQ's script ran, and a log's line, written
    /// after it). Each record's window (`when_of`) is intersected; when they do not meet, the
    /// lags measured on other failures were narrower than this one's, and the window is all of
    /// them together: never narrower than the evidence.
    pub fn failure_when(&self, job: crate::model::JobKey, primary: EventId) -> When {
        let timeline = self.timeline;
        let at = timeline.get(primary).moment().nanos();
        let skew_ns = CLOCK_SKEW_MS * 1_000_000;
        let ids = self.events_of_job(job);
        let between_activation = |a: i64, b: i64| {
            let (from, to) = (a.min(b), a.max(b));
            ids.iter().any(|&id| {
                let event = timeline.get(id);
                let t = event.moment().nanos();
                event.kind == EventKind::JobActive && from < t && t < to
            })
        };
        let records: Vec<&Event> = ids
            .iter()
            .map(|&id| timeline.get(id))
            .filter(|event| {
                let t = event.moment().nanos();
                event.kind == EventKind::JobFailed && (t - at).abs() <= skew_ns && !between_activation(at, t)
            })
            .collect();
        let first = self.when_of(timeline.get(primary));
        if timeline.get(primary).origin().channel == Channel::EventsStream {
            return first;
        }
        let windows: Vec<When> = records.iter().map(|event| self.when_of(event)).collect();
        let earliest = windows.iter().map(|w| w.earliest).max().unwrap_or(first.earliest);
        let latest = windows.iter().map(|w| w.latest).min().unwrap_or(first.latest);
        if earliest <= latest {
            When { earliest, latest, lag: first.lag }
        } else {
            When {
                earliest: windows.iter().map(|w| w.earliest).min().unwrap_or(first.earliest),
                latest: windows.iter().map(|w| w.latest).max().unwrap_or(first.latest),
                lag: first.lag,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::Settings;
    use crate::model::{LockParams, Origin, Timeline};

    /// Job `job`'s `job-active` at `ms` after a minute mark, from the stream (source 0) or a log
    /// (source 1).
    fn active(ms: i64, job: &str, channel: Channel) -> Event {
        let at = chrono::DateTime::from_timestamp_millis(1_796_028_400_000 + ms).unwrap();
        let source = u16::from(channel == Channel::Log);
        let line = u32::try_from(ms / 10).unwrap() + 1;
        let mut event = Event::new(at.into(), EventKind::JobActive, Origin { channel, source, line });
        event.edit().job_id = Some(job.into());
        event
    }

    #[test]
    fn a_log_only_activation_is_a_window_its_measured_lag_allows() {
        // The log wrote the activations it shares with the stream 4 ms and 31 ms late; job c's
        // first activation is the log's alone (the stream was trimmed).
        let timeline = Timeline::new(vec![
            active(0, "c", Channel::Log),
            active(10_000, "a", Channel::EventsStream),
            active(10_004, "a", Channel::Log),
            active(20_000, "b", Channel::EventsStream),
            active(20_031, "b", Channel::Log),
            active(30_000, "c", Channel::EventsStream),
            active(30_020, "c", Channel::Log),
        ]);
        let (params, settings) = (LockParams::default(), Settings::default());
        let context = Context::new(&timeline, &params, &settings);
        let lag = Lags::measure(&context).of(1, EventKind::JobActive).unwrap();
        assert_eq!((lag.least_ns, lag.most_ns, lag.samples), (4_000_000, 31_000_000, 3));
        let when = context.activation_when(0);
        assert!(!when.is_exact());
        let ms = |m: Moment| (m.nanos() - 1_796_028_400_000_000_000) / 1_000_000;
        assert_eq!((ms(when.earliest), ms(when.latest)), (-31, -4));
        // The stream's own entry is exact.
        assert!(context.activation_when(1).is_exact());
    }

    /// Job `job`'s `job-failed` at `ms` after a minute mark, from the stream (source 0), a log
    /// (source 1) or a job hash (source 2).
    fn failed(ms: i64, job: &str, channel: Channel) -> Event {
        let mut event = active(ms, job, channel);
        event.kind = EventKind::JobFailed;
        event.set_origin(Origin {
            channel,
            source: match channel {
                Channel::EventsStream => 0,
                Channel::Log => 1,
                _ => 2,
            },
            line: event.origin().line,
        });
        event
    }

    #[test]
    fn a_failure_whose_records_disagree_with_the_measured_lags_is_the_window_of_all_of_them() {
        // Jobs a and b: the hash's finishedOn 1–2 ms before the stream's entry, the log's line
        // 1–3 ms after. Job c's stream entry was trimmed: its hash says 0, its log 27 ms later,
        // more than either lag allows; the failure is somewhere between, not at the hash's time.
        let timeline = Timeline::new(vec![
            failed(0, "c", Channel::JobHash),
            failed(27, "c", Channel::Log),
            failed(9_999, "a", Channel::JobHash),
            failed(10_001, "a", Channel::EventsStream),
            failed(10_002, "a", Channel::Log),
            failed(19_999, "b", Channel::JobHash),
            failed(20_000, "b", Channel::EventsStream),
            failed(20_003, "b", Channel::Log),
        ]);
        let (params, settings) = (LockParams::default(), Settings::default());
        let context = Context::new(&timeline, &params, &settings);
        let job = context.job_of(timeline.get(0)).unwrap();
        let ms = |m: Moment| (m.nanos() - 1_796_028_400_000_000_000) / 1_000_000;
        let alone = context.when_of(timeline.get(0));
        assert_eq!((ms(alone.earliest), ms(alone.latest)), (1, 2), "the hash's own window");
        let when = context.failure_when(job, 0);
        assert_eq!((ms(when.earliest), ms(when.latest)), (1, 26), "from the hash's window to the log's");
        // A stream entry is BullMQ's own record: exact, whatever the other records say.
        let job_a = context.job_of(timeline.get(3)).unwrap();
        assert!(context.failure_when(job_a, 3).is_exact());
    }
}
