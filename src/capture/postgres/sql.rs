//! The statements `capture --postgres` sends, built here and nowhere else. Every value in them
//! is the user's (queue, schema, the ledger's query and column) or capture's own (times): names
//! are quoted as identifiers, texts as literals (the session has `standard_conforming_strings` on,
//! PostgreSQL's default since 9.1, checked before any of them is sent), and times are numbers or
//! RFC 3339 texts capture wrote itself. The window (`--since`, `--until`) is part of each `WHERE`,
//! so the server reads and sends the window, not the table.

use chrono::{DateTime, Duration, NaiveDateTime, Offset, TimeZone, Utc};
use chrono_tz::Tz;

/// `name` as an SQL identifier: `"job"`, `"a""b"`.
pub fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `text` as an SQL string literal under `standard_conforming_strings`: `'pr-review'`, `'it''s'`.
pub fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// The window capture was asked for, in the forms the tables' columns hold.
#[derive(Debug, Clone, Copy, Default)]
pub struct Window {
    pub since: Option<DateTime<Utc>>,
    pub until: Option<DateTime<Utc>>,
}

impl Window {
    /// `column` (epoch milliseconds) inside the window: `created_at_ms >= 1796... AND ...`, or
    /// `TRUE` when the window is open on both sides.
    pub fn millis(&self, column: &str) -> String {
        let mut parts = Vec::new();
        if let Some(since) = self.since {
            parts.push(format!("{column} >= {}", since.timestamp_millis()));
        }
        if let Some(until) = self.until {
            parts.push(format!("{column} < {}", until.timestamp_millis()));
        }
        if parts.is_empty() { "TRUE".into() } else { parts.join(" AND ") }
    }

    /// A job whose life (added, to finished or still open) meets the window: one that was in the
    /// queue at any moment of it. A job added before `--since` and finished after it is kept (its
    /// lock may have run out inside the window); one finished before it, or added after
    /// `--until`, is not.
    pub fn job_life(&self) -> String {
        let mut parts = Vec::new();
        if let Some(since) = self.since {
            let ms = since.timestamp_millis();
            parts.push(format!(
                "(finished_at_ms IS NULL OR finished_at_ms >= {ms} OR processed_at_ms >= {ms} OR added_at_ms >= {ms})"
            ));
        }
        if let Some(until) = self.until {
            parts.push(format!("added_at_ms < {}", until.timestamp_millis()));
        }
        if parts.is_empty() { "TRUE".into() } else { parts.join(" AND ") }
    }

    /// A `timestamptz` column inside the window.
    pub fn instants(&self, column: &str) -> String {
        let rfc = |t: DateTime<Utc>| literal(&t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true));
        let mut parts = Vec::new();
        if let Some(since) = self.since {
            parts.push(format!("{column} >= {}::timestamptz", rfc(since)));
        }
        if let Some(until) = self.until {
            parts.push(format!("{column} < {}::timestamptz", rfc(until)));
        }
        if parts.is_empty() { "TRUE".into() } else { parts.join(" AND ") }
    }

    /// A `timestamp` column (no zone) that holds wall-clock times of `zone` inside the window.
    /// The bounds are widened by the zone's offset changes over the window, so that the wall
    /// times an hour of a DST fold repeats, or a spring gap skips, are all kept: the server may
    /// send a few rows beyond the window (analyze's `--since/--until` place them), never fewer.
    pub fn wall_times(&self, column: &str, zone: Tz) -> String {
        let wall = |t: NaiveDateTime| literal(&t.format("%Y-%m-%d %H:%M:%S%.6f").to_string());
        let (low, high) = offset_range(zone, self.since, self.until);
        let mut parts = Vec::new();
        if let Some(since) = self.since {
            parts.push(format!("{column} >= {}::timestamp", wall(since.naive_utc() + low)));
        }
        if let Some(until) = self.until {
            parts.push(format!("{column} < {}::timestamp", wall(until.naive_utc() + high)));
        }
        if parts.is_empty() { "TRUE".into() } else { parts.join(" AND ") }
    }
}

/// The least and the greatest UTC offset `zone` has over the window (a day past each side when
/// the window is open there), sampled every 15 minutes: a wall time `t + offset(t)` of an
/// instant `t` in the window lies between `since + least` and `until + greatest`.
fn offset_range(zone: Tz, since: Option<DateTime<Utc>>, until: Option<DateTime<Utc>>) -> (Duration, Duration) {
    let offset = |t: DateTime<Utc>| {
        Duration::seconds(i64::from(zone.offset_from_utc_datetime(&t.naive_utc()).fix().local_minus_utc()))
    };
    let from = since.or(until.map(|u| u - Duration::days(1))).unwrap_or_else(Utc::now);
    let to = until.unwrap_or(from + Duration::days(1)).max(from);
    let (mut low, mut high) = (offset(from), offset(from));
    let mut t = from;
    // A window of years is sampled at most ~100,000 times (15 minutes apart, or wider).
    let step = Duration::minutes(15).max((to - from) / 100_000);
    while t < to {
        t += step;
        let here = offset(t.min(to));
        low = low.min(here);
        high = high.max(here);
    }
    (low, high)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn names_and_texts_are_quoted_so_that_no_quote_ends_them() {
        assert_eq!(ident("job"), "\"job\"");
        assert_eq!(ident("a\"b"), "\"a\"\"b\"");
        assert_eq!(literal("pr-review"), "'pr-review'");
        assert_eq!(literal("x'; DELETE FROM t; --"), "'x''; DELETE FROM t; --'");
    }

    #[test]
    fn the_window_becomes_each_tables_where() {
        let window = Window { since: Some(at("2026-10-07T00:30:00Z")), until: Some(at("2026-10-07T01:00:00Z")) };
        assert_eq!(window.millis("created_at_ms"), "created_at_ms >= 1791333000000 AND created_at_ms < 1791334800000");
        assert_eq!(
            window.instants("\"ts\""),
            "\"ts\" >= '2026-10-07T00:30:00.000000Z'::timestamptz AND \"ts\" < '2026-10-07T01:00:00.000000Z'::timestamptz"
        );
        assert!(window.job_life().contains("added_at_ms < 1791334800000"));
        assert_eq!(Window::default().millis("x"), "TRUE");
    }

    #[test]
    fn wall_times_of_a_zone_without_dst_are_the_window_shifted() {
        let window = Window { since: Some(at("2026-10-07T00:30:00Z")), until: Some(at("2026-10-07T01:00:00Z")) };
        assert_eq!(
            window.wall_times("ts", chrono_tz::Asia::Seoul),
            "ts >= '2026-10-07 09:30:00.000000'::timestamp AND ts < '2026-10-07 10:00:00.000000'::timestamp"
        );
    }

    #[test]
    fn wall_times_across_a_fold_keep_the_hour_the_fold_repeats() {
        // New York falls back at 06:00 UTC on 2026-11-01: 01:00-02:00 EDT, then again EST.
        // The window 05:30-06:30 UTC is 01:30 EDT to 01:30 EST: in wall times 01:30 to 01:30.
        let window = Window { since: Some(at("2026-11-01T05:30:00Z")), until: Some(at("2026-11-01T06:30:00Z")) };
        let clause = window.wall_times("ts", chrono_tz::America::New_York);
        // From 00:30 (05:30 at -05:00, the least offset) to 02:30 (06:30 at -04:00): every wall
        // time of both passes through the fold's hour lies between.
        assert_eq!(
            clause,
            "ts >= '2026-11-01 00:30:00.000000'::timestamp AND ts < '2026-11-01 02:30:00.000000'::timestamp"
        );
    }
}
