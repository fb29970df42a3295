//! The instant the timeline keeps for every event, in 8 bytes.

use chrono::{DateTime, Utc};

/// A point on the timeline: nanoseconds since 1970-01-01 UTC in 64 bits, which covers the years
/// 1677 to 2262. 8 bytes in each of millions of events where a `DateTime` takes 12; readers refuse
/// a time outside that range (`time::ZoneProblem::OutOfRange`) rather than move it.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Moment(i64);

/// A time a timeline cannot hold (see `Moment`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfRange;

/// Tests write times as `DateTime`s: one outside the range fails the test.
#[cfg(test)]
impl From<DateTime<Utc>> for Moment {
    fn from(at: DateTime<Utc>) -> Moment {
        Moment::new(at).expect("a test time in 1677-2262")
    }
}

impl Moment {
    /// `at` as the timeline keeps it, or `OutOfRange` outside the years 1677-2262.
    pub fn new(at: DateTime<Utc>) -> Result<Moment, OutOfRange> {
        at.timestamp_nanos_opt().map(Moment).ok_or(OutOfRange)
    }

    /// As a `DateTime`: a calendar computation, so loops over millions of events compare
    /// moments and convert only what they report.
    pub fn utc(self) -> DateTime<Utc> {
        DateTime::from_timestamp_nanos(self.0)
    }

    /// Nanoseconds since 1970-01-01 UTC, as kept.
    pub fn nanos(self) -> i64 {
        self.0
    }

    /// The moment `nanos` after 1970-01-01 UTC (every 64-bit value is one).
    pub fn from_nanos(nanos: i64) -> Moment {
        Moment(nanos)
    }

    /// The nanoseconds past the whole second (`at().timestamp_subsec_nanos()`, without the
    /// calendar).
    pub fn subsec_nanos(self) -> u32 {
        // In 0..1e9: fits.
        u32::try_from(self.0.rem_euclid(1_000_000_000)).unwrap_or(0)
    }

    /// Seconds from `self` to `later`, in whole milliseconds as `time::seconds_between` counts.
    #[allow(clippy::cast_precision_loss)] // milliseconds over 292 years: exact below 2^53
    pub fn seconds_to(self, later: Moment) -> f64 {
        ((later.0 - self.0) / 1_000_000) as f64 / 1000.0
    }
}

impl std::fmt::Debug for Moment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.utc().to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true))
    }
}
