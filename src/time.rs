//! Every rule about time zones lives here.
//!
//! Sources disagree about time: ledgers are exported in UTC, server logs are written in local time
//! without an offset. Each source declares its zone once (manifest or flag); this module turns
//! what is written on a line into a UTC instant and refuses to guess. A timestamp without an
//! offset in a source without a declared zone is an error, and so is a local time that a DST
//! transition makes ambiguous or impossible. The machine's own zone is never consulted.

use chrono::{DateTime, FixedOffset, LocalResult, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Utc};
use chrono_tz::Tz;

pub mod fold;
pub mod moment;
mod zone_hints;

pub use fold::Ambiguous;
pub use moment::Moment;

/// A timestamp as written, before any zone is applied.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stamp {
    /// Wall-clock time; needs the source's declared zone.
    Local(NaiveDateTime),
    /// Carries its own offset (`Z`, `+09:00`) or is an epoch count: no zone needed.
    Absolute(DateTime<Utc>),
}

/// Why a stamp could not become an instant on the timeline.
#[derive(Debug, Clone, PartialEq)]
pub enum ZoneProblem {
    /// Outside the years a timeline holds (1677-2262, see `Moment`).
    OutOfRange,
    /// No offset on the line and no zone declared for the source.
    Undeclared,
    /// The local time happens twice in the zone (DST fold).
    Ambiguous(Tz),
    /// The local time never happens in the zone (DST gap).
    Skipped(Tz),
}

impl Stamp {
    /// The instant, refusing a local time that happens twice.
    pub fn to_utc(self, declared: Option<Tz>) -> Result<DateTime<Utc>, ZoneProblem> {
        self.to_utc_as(declared, Ambiguous::Error)
    }

    /// The instant, a local time that happens twice taken as `choice` says: its first or second
    /// time for `earlier` and `later`, refused for `error` and `order` (line order is the
    /// reader's to follow, see `fold::LineOrder`).
    pub fn to_utc_as(self, declared: Option<Tz>, choice: Ambiguous) -> Result<DateTime<Utc>, ZoneProblem> {
        self.place(declared, choice).map(|(at, _)| at)
    }

    /// `to_utc_as`, and whether the time was one that happens twice.
    pub fn place(self, declared: Option<Tz>, choice: Ambiguous) -> Result<(DateTime<Utc>, bool), ZoneProblem> {
        match self {
            Stamp::Absolute(at) => Ok((at, false)),
            Stamp::Local(naive) => {
                let zone = declared.ok_or(ZoneProblem::Undeclared)?;
                match (zone.from_local_datetime(&naive), choice) {
                    (LocalResult::Single(at), _) => Ok((at.with_timezone(&Utc), false)),
                    (LocalResult::Ambiguous(first, _), Ambiguous::Earlier) => Ok((first.with_timezone(&Utc), true)),
                    (LocalResult::Ambiguous(_, second), Ambiguous::Later) => Ok((second.with_timezone(&Utc), true)),
                    (LocalResult::Ambiguous(..), Ambiguous::Error | Ambiguous::Order) => {
                        Err(ZoneProblem::Ambiguous(zone))
                    }
                    (LocalResult::None, _) => Err(ZoneProblem::Skipped(zone)),
                }
            }
        }
    }

    /// The instant as the timeline keeps it (see `Moment`).
    pub fn to_moment(self, declared: Option<Tz>) -> Result<Moment, ZoneProblem> {
        moment(self.to_utc(declared)?)
    }

    /// `to_utc_as`, as the timeline keeps it.
    pub fn to_moment_as(self, declared: Option<Tz>, choice: Ambiguous) -> Result<Moment, ZoneProblem> {
        moment(self.to_utc_as(declared, choice)?)
    }
}

/// `at` as the timeline keeps it, or why it cannot be (see `Moment`).
pub fn moment(at: DateTime<Utc>) -> Result<Moment, ZoneProblem> {
    Moment::new(at).map_err(|_| ZoneProblem::OutOfRange)
}

impl ZoneProblem {
    /// A sentence for the error message; `fix` names the flag or manifest key that declares the zone.
    pub fn explain(&self, fix: &str) -> String {
        match self {
            ZoneProblem::OutOfRange => "time outside the years 1677-2262 that a timeline holds (nanoseconds since 1970 in 64 bits); is it a placeholder such as 0001-01-01 or 9999-12-31?".to_string(),
            ZoneProblem::Undeclared => format!(
                "timestamp has no UTC offset and no time zone is declared for this source; declare it with {fix} (an IANA name such as UTC or Asia/Seoul)"
            ),
            ZoneProblem::Ambiguous(tz) => format!(
                "local time occurs twice in {tz} (daylight-saving fold: the clocks went back); the line cannot be placed on the timeline without an offset"
            ),
            ZoneProblem::Skipped(tz) => {
                format!("local time does not exist in {tz} (daylight-saving gap); is the declared zone right?")
            }
        }
    }
}

/// Parses an IANA zone name (`UTC`, `Asia/Seoul`). Abbreviations such as `KST` and offsets such
/// as `+09:00` are refused, because they are ambiguous across the world or silent about daylight
/// saving; the refusal names the zones meant (`zone_hints`).
pub fn parse_zone(name: &str) -> Result<Tz, String> {
    let trimmed = name.trim();
    // The tz database also carries a few legacy abbreviations (EST, MST, CET, ...) whose meaning
    // differs from what people usually mean by them; only region names and UTC/GMT are taken.
    let region_or_utc = trimmed.contains('/') || ["UTC", "GMT"].iter().any(|z| z.eq_ignore_ascii_case(trimmed));
    chrono_tz::TZ_VARIANTS
        .iter()
        .copied()
        .find(|tz| tz.name().eq_ignore_ascii_case(trimmed))
        .filter(|_| region_or_utc)
        .ok_or_else(|| zone_hints::refusal(name))
}

/// Outcome of looking for a timestamp at the start of a log line.
#[derive(Debug, PartialEq)]
pub enum Leading {
    /// The line does not start with anything date-like (a continuation line, a banner).
    Absent,
    /// The line starts like a date but is not a valid one.
    Malformed(String),
    /// A timestamp, and the byte offset where the rest of the line begins.
    Found(Stamp, usize),
}

/// Finds the timestamp a log line starts with: `2026-10-07 09:33:00.012`, the same with `T`,
/// optionally in square brackets, optionally with `Z` or a numeric offset.
pub fn leading_stamp(line: &str) -> Leading {
    let bytes = line.as_bytes();
    let start = usize::from(bytes.first() == Some(&b'['));
    let body = &bytes[start..];
    if !looks_like_date(body) {
        return Leading::Absent;
    }
    match parse_datetime(body) {
        Ok((stamp, mut len)) => {
            len += start;
            if start == 1 {
                if bytes.get(len) != Some(&b']') {
                    return Leading::Malformed("timestamp opened with '[' is not closed by ']'".into());
                }
                len += 1;
            }
            match bytes.get(len) {
                None | Some(b' ' | b'\t' | b'|' | b',') => Leading::Found(stamp, len),
                Some(_) => Leading::Malformed(format!(
                    "unexpected text after the timestamp '{}'",
                    &line[..len.min(line.len())]
                )),
            }
        }
        Err(reason) => Leading::Malformed(reason),
    }
}

/// What the start of a log line looks like, judged from its bytes alone (no calendar): the cheap
/// check every line gets. Only lines that matter are then parsed in full by `leading_stamp`, so a
/// date that has the right shape but impossible values (month 13) is caught only on those lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Empty or whitespace only.
    Blank,
    /// Does not start like a date: a continuation line.
    Absent,
    /// Starts like a date but is not shaped like `YYYY-MM-DD HH:MM:SS[.f][offset]`.
    Malformed,
    /// A timestamp; `true` when it carries an offset (`Z`, `+09:00`).
    Stamped(bool),
}

pub fn stamp_shape(line: &[u8]) -> Shape {
    let Some(&first) = line.first() else { return Shape::Blank };
    if first.is_ascii_whitespace() {
        return if line.iter().all(u8::is_ascii_whitespace) { Shape::Blank } else { Shape::Absent };
    }
    let start = usize::from(first == b'[');
    let b = &line[start..];
    if !looks_like_date(b) {
        return Shape::Absent;
    }
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let is = |i: usize, c: u8| b.get(i) == Some(&c);
    let digits_ok = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18].iter().all(|&i| digit(i));
    let separators_ok = is(7, b'-') && matches!(b.get(10), Some(b'T' | b't' | b' ')) && is(13, b':') && is(16, b':');
    if !(digits_ok && separators_ok) {
        return Shape::Malformed;
    }
    let mut at = 19;
    if matches!(b.get(at), Some(b'.' | b',')) && digit(at + 1) {
        at += 1;
        while digit(at) {
            at += 1;
        }
    }
    let offset = match b.get(at) {
        Some(b'Z' | b'z') => {
            at += 1;
            true
        }
        Some(b'+' | b'-') if digit(at + 1) && digit(at + 2) => {
            at += 3;
            if is(at, b':') && digit(at + 1) && digit(at + 2) {
                at += 3;
                if is(at, b':') && digit(at + 1) && digit(at + 2) {
                    at += 3;
                }
            } else if digit(at) && digit(at + 1) {
                at += 2;
            }
            true
        }
        _ => false,
    };
    if start == 1 {
        if !is(at, b']') {
            return Shape::Malformed;
        }
        at += 1;
    }
    match b.get(at) {
        None | Some(b' ' | b'\t' | b'|' | b',' | b'\r') => Shape::Stamped(offset),
        Some(_) => Shape::Malformed,
    }
}

/// Parses a whole field (a ledger cell): RFC 3339 / ISO 8601 with or without offset (what `psql`
/// and MySQL write included: `2026-12-01 19:48:40.036865+00`), or an epoch count (seconds,
/// milliseconds, microseconds or nanoseconds, told apart by size: `EPOCH_UNITS`).
pub fn parse_field(text: &str) -> Result<Stamp, String> {
    if let Some(at) = utc_rfc3339(text.as_bytes()) {
        return Ok(Stamp::Absolute(at));
    }
    let text = text.trim();
    if text.is_empty() {
        return Err("empty timestamp".into());
    }
    if text.bytes().all(|b| b.is_ascii_digit() || b == b'.') && text.bytes().filter(|&b| b == b'.').count() <= 1 {
        return epoch(text);
    }
    let (stamp, len) = parse_datetime(text.as_bytes())?;
    if len != text.len() {
        return Err(format!("unexpected text after the timestamp in '{text}'"));
    }
    Ok(stamp)
}

/// `YYYY-MM-DDTHH:MM:SS[.fff]Z`, what ledgers are usually exported as, read with fewer checks
/// (this runs two or three times for every ledger row). `None` for anything else, impossible
/// values and surrounding spaces included: `parse_datetime` then reads it or says what is wrong.
fn utc_rfc3339(b: &[u8]) -> Option<DateTime<Utc>> {
    // Days before each month in a common year; the ordinal skips `from_ymd_opt`'s month tables.
    const BEFORE: [u32; 12] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
    let [date @ .., b'Z'] = b else { return None };
    if date.len() < 19 || date[4] != b'-' || date[7] != b'-' || date[10] != b'T' || date[13] != b':' || date[16] != b':'
    {
        return None;
    }
    let (year, month, day) = (digits(date, 0, 4)?, digits(date, 5, 2)?, digits(date, 8, 2)?);
    let (hour, minute, second) = (digits(date, 11, 2)?, digits(date, 14, 2)?, digits(date, 17, 2)?);
    let nanos = match &date[19..] {
        [] => 0,
        [b'.', fraction @ ..] if (1..=9).contains(&fraction.len()) => {
            digits(fraction, 0, fraction.len())? * 10u32.pow(9 - u32::try_from(fraction.len()).ok()?)
        }
        _ => return None,
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = match month {
        2 => 28 + u32::from(leap),
        4 | 6 | 9 | 11 => 30,
        1..=12 => 31,
        _ => return None,
    };
    if day == 0 || day > month_days {
        return None;
    }
    let ordinal = BEFORE[month as usize - 1] + day + u32::from(leap && month > 2);
    #[allow(clippy::cast_possible_wrap)]
    let date = NaiveDate::from_yo_opt(year as i32, ordinal)?;
    let time = NaiveTime::from_hms_nano_opt(hour, minute, second, nanos)?;
    Some(NaiveDateTime::new(date, time).and_utc())
}

/// The units an epoch count is read in, by the size of its whole part: each is taken for the
/// counts that put the time between 1973-03-03 09:46:40 and 5138-11-16 09:46:40 UTC (10^8 to
/// 10^11 seconds), so exactly one fits a count, and a count none fits (below 10^8: an id, a
/// duration or a placeholder such as 0; 10^20 and above) is refused. The nanoseconds a unit is.
const EPOCH_UNITS: [(u128, u128, i128, &str); 4] = [
    (100_000_000, 100_000_000_000, 1_000_000_000, "seconds"),
    (100_000_000_000, 100_000_000_000_000, 1_000_000, "milliseconds"),
    (100_000_000_000_000, 100_000_000_000_000_000, 1_000, "microseconds"),
    (100_000_000_000_000_000, 100_000_000_000_000_000_000, 1, "nanoseconds"),
];

/// An epoch count of digits with at most one `.`: seconds, milliseconds, microseconds or
/// nanoseconds by its size (`EPOCH_UNITS`), kept to the nanosecond (a fraction is allowed).
fn epoch(text: &str) -> Result<Stamp, String> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if whole.is_empty() {
        return Err(format!("not a number: '{text}'"));
    }
    let significant = whole.trim_start_matches('0');
    let too_large = || {
        format!(
            "epoch value '{text}' is too large: expected seconds, milliseconds, microseconds or nanoseconds since 1970"
        )
    };
    // 10^20 and above has more than 20 digits or is refused below: no overflow in 128 bits.
    if significant.len() > 21 {
        return Err(too_large());
    }
    let value: u128 = if significant.is_empty() { 0 } else { significant.parse().map_err(|_| too_large())? };
    let Some(&(_, _, unit, _)) = EPOCH_UNITS.iter().find(|(from, to, _, _)| (*from..*to).contains(&value)) else {
        if value >= EPOCH_UNITS[3].1 {
            return Err(too_large());
        }
        return Err(format!(
            "epoch value '{text}' is too small to be a time: as seconds it is before 1973-03-03 (below 100000000); expected seconds (10 digits), milliseconds (13), microseconds (16) or nanoseconds (19) since 1970"
        ));
    };
    // The fraction of one unit, to the nanosecond (further digits are dropped).
    let mut fraction_nanos = 0i128;
    let mut scale = unit;
    for digit in fraction.bytes() {
        scale /= 10;
        fraction_nanos += i128::from(digit - b'0') * scale;
    }
    #[allow(clippy::cast_possible_wrap)]
    let nanos = value as i128 * unit + fraction_nanos;
    let seconds = i64::try_from(nanos.div_euclid(1_000_000_000)).map_err(|_| too_large())?;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let subsecond = nanos.rem_euclid(1_000_000_000) as u32;
    DateTime::from_timestamp(seconds, subsecond).map(Stamp::Absolute).ok_or_else(too_large)
}

pub fn looks_like_date(b: &[u8]) -> bool {
    b.len() >= 5 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-'
}

fn digits(b: &[u8], at: usize, n: usize) -> Option<u32> {
    let slice = b.get(at..at + n)?;
    slice.iter().try_fold(0u32, |acc, &d| d.is_ascii_digit().then(|| acc * 10 + u32::from(d - b'0')))
}

/// `YYYY-MM-DD[T ]HH:MM:SS[.frac][Z|±HH:MM|±HHMM|±HH]`; returns the stamp and bytes used.
fn parse_datetime(b: &[u8]) -> Result<(Stamp, usize), String> {
    // The quoted text is only built when there is an error to report: this runs on every line.
    let bad = |what: &str| {
        let shown = String::from_utf8_lossy(&b[..b.len().min(32)]);
        format!("malformed timestamp '{shown}': {what}; expected YYYY-MM-DD HH:MM:SS[.fff][Z|±HH:MM]")
    };
    let (Some(year), Some(month), Some(day)) = (digits(b, 0, 4), digits(b, 5, 2), digits(b, 8, 2)) else {
        return Err(bad("date is not YYYY-MM-DD"));
    };
    if b.get(7) != Some(&b'-') {
        return Err(bad("date is not YYYY-MM-DD"));
    }
    #[allow(clippy::cast_possible_wrap)]
    let date = NaiveDate::from_ymd_opt(year as i32, month, day).ok_or_else(|| bad("no such date"))?;
    if !matches!(b.get(10), Some(b'T' | b't' | b' ')) {
        return Err(bad("date is not followed by a time"));
    }
    let (Some(hour), Some(minute), Some(second)) = (digits(b, 11, 2), digits(b, 14, 2), digits(b, 17, 2)) else {
        return Err(bad("time is not HH:MM:SS"));
    };
    if b.get(13) != Some(&b':') || b.get(16) != Some(&b':') {
        return Err(bad("time is not HH:MM:SS"));
    }
    let mut at = 19;
    let mut nanos = 0u32;
    if matches!(b.get(at), Some(b'.' | b',')) && b.get(at + 1).is_some_and(u8::is_ascii_digit) {
        at += 1;
        let mut scale = 100_000_000u32;
        while let Some(d) = b.get(at).filter(|d| d.is_ascii_digit()) {
            nanos += u32::from(d - b'0') * scale;
            scale /= 10;
            at += 1;
        }
    }
    let time = NaiveTime::from_hms_nano_opt(hour, minute, second, nanos).ok_or_else(|| bad("no such time of day"))?;
    let naive = NaiveDateTime::new(date, time);
    let offset_seconds = match b.get(at) {
        Some(b'Z' | b'z') => {
            at += 1;
            Some(0)
        }
        Some(&sign @ (b'+' | b'-')) => {
            let hours = digits(b, at + 1, 2).ok_or_else(|| bad("offset is not ±HH:MM"))?;
            let (minutes, used) = match (b.get(at + 3), digits(b, at + 4, 2), digits(b, at + 3, 2)) {
                (Some(b':'), Some(m), _) => (m, 6),
                (_, _, Some(m)) => (m, 5),
                _ => (0, 3),
            };
            // `+08:27:52`: psql writes the seconds of a local mean time offset (dates before
            // a zone's standard time, e.g. 1900 in Asia/Seoul).
            let seconds_of_offset = match (used, b.get(at + 6), digits(b, at + 7, 2)) {
                (6, Some(b':'), Some(s)) => {
                    at += 3;
                    s
                }
                _ => 0,
            };
            at += used;
            #[allow(clippy::cast_possible_wrap)]
            let seconds = (hours * 3600 + minutes * 60 + seconds_of_offset) as i32;
            Some(if sign == b'-' { -seconds } else { seconds })
        }
        _ => None,
    };
    let stamp = match offset_seconds {
        None => Stamp::Local(naive),
        // UTC needs no offset arithmetic (most exports: this runs for every ledger row).
        Some(0) => Stamp::Absolute(naive.and_utc()),
        Some(seconds) => {
            let offset = FixedOffset::east_opt(seconds).ok_or_else(|| bad("offset out of range"))?;
            let at = offset.from_local_datetime(&naive).single().ok_or_else(|| bad("offset out of range"))?;
            Stamp::Absolute(at.with_timezone(&Utc))
        }
    };
    Ok((stamp, at))
}

/// Parses the wall-clock time that `Intl.DateTimeFormat` writes for the en-US locale with
/// numeric year, 2-digit month and day, and hour, minute and second: `10/07/2026, 9:33:00 AM`
/// (NestJS's ConsoleLogger; older versions used `toLocaleString()`, which writes `10/7/2026`).
/// Month/day/year, a 12-hour clock with an upper-case `AM`/`PM`, whole seconds, no offset: the
/// result is always `Stamp::Local`. Before the day period ICU 72 and later may write U+202F
/// (narrow no-break space) instead of a space; both are taken, and U+00A0 too. Returns the stamp
/// and the bytes used. Other locales (`07.10.2026, 09:33:00`, en-GB's `07/10/2026, 09:33:00`)
/// are refused rather than guessed: without the day period a day-first date cannot be told apart.
pub fn parse_en_us_datetime(text: &str) -> Result<(Stamp, usize), String> {
    let b = text.as_bytes();
    // The date and time, not the log line after them (NestJS pads the level with spaces).
    let shown: String = text.split("  ").next().unwrap_or_default().chars().take(26).collect();
    let bad =
        |what: &str| format!("malformed timestamp '{shown}': {what}; expected the en-US form MM/DD/YYYY, h:mm:ss AM");
    // 1 or 2 digits, then `sep`; returns the value and the position after `sep`.
    let number = |at: usize, sep: u8| -> Option<(u32, usize)> {
        let len = b[at..].iter().take_while(|d| d.is_ascii_digit()).count();
        if !(1..=2).contains(&len) || b.get(at + len) != Some(&sep) {
            return None;
        }
        Some((digits(b, at, len)?, at + len + 1))
    };
    let (month, at) = number(0, b'/').ok_or_else(|| bad("date is not MM/DD/YYYY"))?;
    let (day, at) = number(at, b'/').ok_or_else(|| bad("date is not MM/DD/YYYY"))?;
    let year = digits(b, at, 4)
        .filter(|_| !b.get(at + 4).is_some_and(u8::is_ascii_digit))
        .ok_or_else(|| bad("date is not MM/DD/YYYY"))?;
    if b.get(at + 4..at + 6) != Some(b", ") {
        return Err(bad("date is not followed by ', ' and a time"));
    }
    let (hour, at) = number(at + 6, b':').ok_or_else(|| bad("time is not h:mm:ss"))?;
    let (Some(minute), Some(second)) = (digits(b, at, 2), digits(b, at + 3, 2)) else {
        return Err(bad("time is not h:mm:ss"));
    };
    if b.get(at + 2) != Some(&b':') {
        return Err(bad("time is not h:mm:ss"));
    }
    let at = at + 5;
    let space = ['\u{20}', '\u{202f}', '\u{a0}']
        .into_iter()
        .find(|c| text[at..].starts_with(*c))
        .ok_or_else(|| bad("no AM/PM after the time"))?;
    let at = at + space.len_utf8();
    let afternoon = match b.get(at..at + 2) {
        Some(b"AM") => false,
        Some(b"PM") => true,
        _ => return Err(bad("no AM/PM after the time")),
    };
    if !(1..=12).contains(&hour) {
        return Err(bad("hour is not 1-12"));
    }
    let hour = hour % 12 + if afternoon { 12 } else { 0 };
    #[allow(clippy::cast_possible_wrap)]
    let date = NaiveDate::from_ymd_opt(year as i32, month, day).ok_or_else(|| bad("no such date"))?;
    let time = NaiveTime::from_hms_opt(hour, minute, second).ok_or_else(|| bad("no such time of day"))?;
    Ok((Stamp::Local(NaiveDateTime::new(date, time)), at + 2))
}

/// A time for people: `2026-10-07 09:54:05.70` in `tz`; milliseconds only when present, trimmed
/// of trailing zeros down to hundredths.
pub fn format_datetime(at: DateTime<Utc>, tz: Tz) -> String {
    let mut text = String::with_capacity(23);
    write_datetime(&mut text, at, tz);
    text
}

/// `format_datetime`, appended to `out`: a timeline of millions of rows writes its times into
/// one reused buffer. By hand, not with a `strftime` pattern, which is parsed again on every call.
pub fn write_datetime(out: &mut String, at: DateTime<Utc>, tz: Tz) {
    use chrono::{Datelike, Timelike};
    use std::fmt::Write;
    let local = at.with_timezone(&tz);
    // Times are within 1677-2262 (`Moment`): the year has four digits.
    let _ = write!(
        out,
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        local.year(),
        local.month(),
        local.day(),
        local.hour(),
        local.minute(),
        local.second()
    );
    let millis = at.timestamp_subsec_millis();
    if millis != 0 {
        if millis.is_multiple_of(10) {
            let _ = write!(out, ".{:02}", millis / 10);
        } else {
            let _ = write!(out, ".{millis:03}");
        }
    }
}

/// A clock time for summaries: `09:54:05.70`.
pub fn format_clock(at: DateTime<Utc>, tz: Tz) -> String {
    let local = at.with_timezone(&tz);
    format!("{}{}", local.format("%H:%M:%S"), fraction(at))
}

fn fraction(at: DateTime<Utc>) -> String {
    let millis = at.timestamp_subsec_millis();
    if millis == 0 {
        String::new()
    } else if millis.is_multiple_of(10) {
        format!(".{:02}", millis / 10)
    } else {
        format!(".{millis:03}")
    }
}

/// RFC 3339 in UTC with milliseconds: the wire format of the JSON report.
pub fn format_rfc3339(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// A duration for people: `15 min 34 s`, `0.66 s`, `1 h 2 min 3 s`.
pub fn format_duration(seconds: f64) -> String {
    let sign = if seconds < 0.0 { "-" } else { "" };
    let seconds = seconds.abs();
    if seconds < 60.0 {
        // Hundredths are what people compare (0.66 s); below a second milliseconds still count.
        let text = if seconds < 1.0 { format!("{seconds:.3}") } else { format!("{seconds:.2}") };
        let text = text.trim_end_matches('0').trim_end_matches('.');
        // A negative duration too small to show is none: "0 s", never "-0 s" (found by fuzzing).
        let sign = if text == "0" { "" } else { sign };
        return format!("{sign}{text} s");
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let whole = seconds.round() as u64;
    let (h, m, s) = (whole / 3600, whole / 60 % 60, whole % 60);
    let mut parts = Vec::new();
    if h > 0 {
        parts.push(format!("{h} h"));
    }
    if m > 0 || (h > 0 && s > 0) {
        parts.push(format!("{m} min"));
    }
    if s > 0 {
        parts.push(format!("{s} s"));
    }
    format!("{sign}{}", parts.join(" "))
}

/// Seconds between two instants, with millisecond precision.
#[allow(clippy::cast_precision_loss)]
pub fn seconds_between(from: DateTime<Utc>, to: DateTime<Utc>) -> f64 {
    (to - from).num_milliseconds() as f64 / 1000.0
}

/// Milliseconds as seconds, to the millisecond, trailing zeros cut: `12500` → `12.5`.
#[allow(clippy::cast_precision_loss)]
pub fn seconds_text(millis: i64) -> String {
    let text = format!("{:.3}", millis as f64 / 1000.0);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// An instant shifted by a number of milliseconds.
pub fn plus_millis(at: DateTime<Utc>, millis: i64) -> DateTime<Utc> {
    at + chrono::Duration::milliseconds(millis)
}

/// A time a user gives on the command line to bound what a report shows (`--since`, `--until`),
/// before it is placed: an instant or a local date and time (`parse_field`'s forms, seconds
/// optional), or a clock time alone, which names a time on the case's date (`Bound::on_date`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    /// A date and time, with or without an offset.
    At(Stamp),
    /// `HH:MM[:SS[.fff]]`: a time of day, on a date still to be found.
    Clock(NaiveTime),
}

/// Reads a bound: RFC 3339 / ISO 8601 with or without an offset (`2026-10-07T09:50:00+09:00`,
/// `2026-10-07 09:50`), an epoch count, or a clock time (`09:50`, `09:50:30.5`).
pub fn parse_bound(text: &str) -> Result<Bound, String> {
    let trimmed = text.trim();
    let expected = "expected a time such as 2026-10-07T09:50:00+09:00, 2026-10-07 09:50 (read in the display zone) or 09:50 (on the case's date, in the display zone)";
    if let Some(clock) = parse_clock(trimmed) {
        return Ok(Bound::Clock(clock));
    }
    // Minutes without seconds (`2026-10-07 09:50`, `2026-10-07T09:50+09:00`) as people write them.
    let b = trimmed.as_bytes();
    let padded;
    // The minutes are two ASCII digits, so that byte 16 starts a character (found by fuzzing: a
    // no-break space there split a character and panicked).
    let full = if b.len() >= 16
        && looks_like_date(b)
        && b[13] == b':'
        && b[14..16].iter().all(u8::is_ascii_digit)
        && b.get(16) != Some(&b':')
    {
        padded = format!("{}:00{}", &trimmed[..16], &trimmed[16..]);
        padded.as_str()
    } else {
        trimmed
    };
    parse_field(full).map(Bound::At).map_err(|reason| {
        if looks_like_date(b) { format!("'{text}': {reason}") } else { format!("'{text}' is not a time: {expected}") }
    })
}

/// `HH:MM`, `HH:MM:SS` or `HH:MM:SS.fff` alone.
fn parse_clock(text: &str) -> Option<NaiveTime> {
    let b = text.as_bytes();
    if b.len() < 5 || b[2] != b':' {
        return None;
    }
    let (hour, minute) = (digits(b, 0, 2)?, digits(b, 3, 2)?);
    let (second, nanos) = match &b[5..] {
        [] => (0, 0),
        [b':', rest @ ..] => {
            let second = digits(rest, 0, 2)?;
            let nanos = match &rest[2..] {
                [] => 0,
                [b'.', fraction @ ..] if (1..=9).contains(&fraction.len()) => {
                    digits(fraction, 0, fraction.len())? * 10u32.pow(9 - u32::try_from(fraction.len()).ok()?)
                }
                _ => return None,
            };
            (second, nanos)
        }
        _ => return None,
    };
    NaiveTime::from_hms_nano_opt(hour, minute, second, nanos)
}

impl Bound {
    /// The instant: a local time read in `zone` (the display zone, when one was declared), a clock
    /// time on `date` in it. A local time that happens twice or never in the zone is refused.
    pub fn place(self, zone: Option<Tz>, date: Option<NaiveDate>) -> Result<DateTime<Utc>, ZoneProblem> {
        match self {
            Bound::At(stamp) => stamp.to_utc(zone),
            Bound::Clock(clock) => match date {
                Some(date) => Stamp::Local(NaiveDateTime::new(date, clock)).to_utc(zone),
                None => Err(ZoneProblem::Undeclared),
            },
        }
    }
}

/// Zones people mean, by offset, to name in suggestions before any other zone with that offset.
const WELL_KNOWN: &[&str] = &[
    "UTC",
    "Asia/Seoul",
    "Asia/Tokyo",
    "Asia/Shanghai",
    "Asia/Singapore",
    "Asia/Kolkata",
    "Asia/Dubai",
    "Europe/London",
    "Europe/Berlin",
    "Europe/Paris",
    "Europe/Helsinki",
    "Europe/Moscow",
    "America/New_York",
    "America/Chicago",
    "America/Denver",
    "America/Los_Angeles",
    "America/Anchorage",
    "Pacific/Honolulu",
    "America/Sao_Paulo",
    "Australia/Sydney",
    "Australia/Perth",
    "Pacific/Auckland",
];

/// IANA zones at `offset` seconds east of UTC at `at`: well-known ones first, at most four.
pub fn zones_with_offset(at: DateTime<Utc>, offset: i32) -> Vec<String> {
    let matches = |tz: &Tz| {
        use chrono::{Offset, TimeZone};
        tz.offset_from_utc_datetime(&at.naive_utc()).fix().local_minus_utc() == offset
    };
    let mut names: Vec<String> = WELL_KNOWN
        .iter()
        .filter_map(|n| n.parse::<Tz>().ok())
        .filter(matches)
        .map(|tz| tz.name().to_string())
        .collect();
    if names.is_empty() {
        names.extend(
            chrono_tz::TZ_VARIANTS
                .iter()
                .filter(|tz| tz.name().contains('/') && !tz.name().starts_with("Etc/") && matches(tz))
                .take(3)
                .map(|tz| tz.name().to_string()),
        );
    }
    names.truncate(4);
    names
}

#[cfg(test)]
mod bound_tests {
    use super::*;

    fn utc(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn bounds_are_instants_local_times_or_clock_times() {
        let seoul = Some(chrono_tz::Asia::Seoul);
        let date = NaiveDate::from_ymd_opt(2026, 10, 7);
        let place = |text: &str| parse_bound(text).unwrap().place(seoul, date).unwrap();
        assert_eq!(place("2026-10-07T09:50:00+09:00"), utc("2026-10-07T00:50:00Z"));
        assert_eq!(place("2026-10-07T00:50:00Z"), utc("2026-10-07T00:50:00Z"));
        assert_eq!(place("2026-10-07 09:50"), utc("2026-10-07T00:50:00Z"), "local, read in the zone");
        assert_eq!(place("2026-10-07T09:50+09:00"), utc("2026-10-07T00:50:00Z"), "minutes with an offset");
        assert_eq!(place("09:50"), utc("2026-10-07T00:50:00Z"), "on the date given");
        assert_eq!(place("09:54:05.7"), utc("2026-10-07T00:54:05.700Z"));
        assert_eq!(place("1791334445700"), utc("2026-10-07T00:54:05.700Z"), "epoch milliseconds");
    }

    #[test]
    fn a_local_bound_without_a_zone_or_a_date_is_refused_and_so_is_a_repeated_hour() {
        assert_eq!(parse_bound("2026-10-07 09:50").unwrap().place(None, None), Err(ZoneProblem::Undeclared));
        assert_eq!(
            parse_bound("09:50").unwrap().place(Some(chrono_tz::UTC), None),
            Err(ZoneProblem::Undeclared),
            "a clock time needs a date"
        );
        let berlin = chrono_tz::Europe::Berlin;
        assert_eq!(
            parse_bound("2026-10-25 02:30").unwrap().place(Some(berlin), None),
            Err(ZoneProblem::Ambiguous(berlin)),
            "the fall-back's repeated hour"
        );
        assert_eq!(
            parse_bound("2026-10-25 02:30+01:00").unwrap().place(Some(berlin), None),
            Ok(utc("2026-10-25T01:30:00Z")),
            "an offset settles it"
        );
    }

    #[test]
    fn a_bound_that_is_no_time_says_the_forms_taken() {
        for text in ["tomorrow", "9:50", "25:00", "09:50:61"] {
            let error = parse_bound(text).unwrap_err();
            assert!(error.contains("is not a time: expected a time such as"), "{text}: {error}");
        }
        for text in ["2026-10-07", "2026-13-01 00:00"] {
            let error = parse_bound(text).unwrap_err();
            assert!(error.contains("expected YYYY-MM-DD HH:MM:SS"), "{text}: {error}");
        }
    }

    #[test]
    fn a_bound_with_a_multibyte_character_in_its_minutes_is_refused_not_a_panic() {
        for text in ["2026-10-03 09:5\u{a0}3:00.123", "2026-10-03 09:\u{e9}3", "2026-10-03 09:5\u{1f600}"] {
            let error = parse_bound(text).unwrap_err();
            assert!(error.contains(text), "{text}: {error}");
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn datetimes_written_by_hand_are_the_strftime_ones() {
        let zones = [chrono_tz::UTC, chrono_tz::Asia::Seoul, chrono_tz::Europe::Berlin, chrono_tz::Asia::Kolkata];
        // Both ends of the range a `Moment` holds, DST changes, fractions of every kind.
        let mut nanos: Vec<i64> = vec![i64::MIN, i64::MAX, 0, -1, 1_711_846_799_999_000_000, 1_729_990_800_000_000_000];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            nanos.push(x.cast_signed());
        }
        for n in nanos {
            let at = DateTime::from_timestamp_nanos(n);
            for tz in zones {
                let local = at.with_timezone(&tz);
                let expected = format!("{}{}", local.format("%Y-%m-%d %H:%M:%S"), fraction(at));
                assert_eq!(format_datetime(at, tz), expected, "{n} in {tz}");
            }
        }
    }

    use super::*;

    #[test]
    fn seconds_text_cuts_trailing_zeros() {
        assert_eq!(
            [seconds_text(12_500), seconds_text(12_000), seconds_text(-1), seconds_text(0)],
            ["12.5", "12", "-0.001", "0"]
        );
    }

    fn utc(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn kst_line_without_offset_takes_the_declared_zone() {
        let Leading::Found(stamp, rest) = leading_stamp("2026-10-07 09:33:00.012 INFO job active") else {
            panic!("no stamp");
        };
        assert_eq!(rest, 23);
        let seoul = parse_zone("Asia/Seoul").unwrap();
        assert_eq!(stamp.to_utc(Some(seoul)).unwrap(), utc("2026-10-07T00:33:00.012Z"));
        assert_eq!(stamp.to_utc(None), Err(ZoneProblem::Undeclared));
    }

    #[test]
    fn offsets_on_the_line_win_over_the_declared_zone() {
        for (line, expected) in [
            ("2026-10-07T00:33:00Z x", "2026-10-07T00:33:00Z"),
            ("[2026-10-07T09:33:00.5+09:00] x", "2026-10-07T00:33:00.5Z"),
            ("2026-10-07 09:33:00+0900 x", "2026-10-07T00:33:00Z"),
            ("2026-10-06 19:33:00-05 x", "2026-10-07T00:33:00Z"),
        ] {
            let Leading::Found(stamp, _) = leading_stamp(line) else { panic!("{line}") };
            assert_eq!(stamp.to_utc(Some(Tz::Asia__Seoul)).unwrap(), utc(expected), "{line}");
        }
    }

    #[test]
    fn date_like_garbage_is_malformed_and_other_lines_are_absent() {
        assert!(matches!(leading_stamp("2026-13-07 09:33:00 x"), Leading::Malformed(_)));
        assert!(matches!(leading_stamp("2026-10-07 9:33:00 x"), Leading::Malformed(_)));
        assert!(matches!(leading_stamp("2026-10-07 09:33:00x"), Leading::Malformed(_)));
        assert_eq!(leading_stamp("    at Worker.run (worker.js:10:3)"), Leading::Absent);
        assert_eq!(leading_stamp(""), Leading::Absent);
    }

    #[test]
    fn the_cheap_shape_check_agrees_with_the_parser_on_shape() {
        for (line, shape) in [
            ("2026-10-07 09:33:00.012 INFO x", Shape::Stamped(false)),
            ("[2026-10-07T09:33:00.5+09:00] x", Shape::Stamped(true)),
            ("2026-10-07T00:33:00Z x", Shape::Stamped(true)),
            ("2026-10-07 09:33:00+0900 x", Shape::Stamped(true)),
            ("2026-10-07 09:33:00", Shape::Stamped(false)),
            ("2026-10-07 9:33:00 x", Shape::Malformed),
            ("2026-10-07 09:33:00x", Shape::Malformed),
            ("[2026-10-07 09:33:00 x", Shape::Malformed),
            ("    at Worker.run (worker.js:10:3)", Shape::Absent),
            ("GET /healthz", Shape::Absent),
            ("", Shape::Blank),
            ("  \t", Shape::Blank),
        ] {
            assert_eq!(stamp_shape(line.as_bytes()), shape, "{line:?}");
            let parsed = leading_stamp(line);
            match shape {
                Shape::Stamped(_) => assert!(matches!(parsed, Leading::Found(..)), "{line:?}"),
                Shape::Malformed => assert!(matches!(parsed, Leading::Malformed(_)), "{line:?}"),
                Shape::Absent | Shape::Blank => assert_eq!(parsed, Leading::Absent, "{line:?}"),
            }
        }
        // Impossible values with the right shape are left to the full parse of the lines that matter.
        assert_eq!(stamp_shape(b"2026-13-07 09:33:00 x"), Shape::Stamped(false));
    }

    #[test]
    fn ledger_fields_accept_rfc3339_naive_and_epoch() {
        assert_eq!(parse_field("2026-10-07T00:33:03.120Z").unwrap(), Stamp::Absolute(utc("2026-10-07T00:33:03.120Z")));
        assert_eq!(parse_field("1791333183").unwrap(), Stamp::Absolute(utc("2026-10-07T00:33:03Z")));
        assert_eq!(parse_field("1791333183120").unwrap(), Stamp::Absolute(utc("2026-10-07T00:33:03.120Z")));
        assert!(matches!(parse_field("2026-10-07 00:33:03").unwrap(), Stamp::Local(_)));
        assert!(parse_field("yesterday").is_err());
        assert!(parse_field("").is_err());
    }

    #[test]
    fn timestamps_as_databases_export_them() {
        for (text, expected) in [
            // psql, timestamptz under SET timezone = 'UTC' and 'Asia/Seoul': hour-only offsets,
            // microseconds.
            ("2026-12-01 19:48:40.036865+00", "2026-12-01T19:48:40.036865Z"),
            ("2026-12-02 04:48:40.036865+09", "2026-12-01T19:48:40.036865Z"),
            ("2026-12-01 19:48:40+00", "2026-12-01T19:48:40Z"),
            // Asia/Kolkata, and a local mean time offset of a date before standard time.
            ("2026-12-02 01:18:40.036865+05:30", "2026-12-01T19:48:40.036865Z"),
            ("1900-01-01 00:00:00+08:27:52", "1899-12-31T15:32:08Z"),
            ("2026-12-01 11:48:40.5-08", "2026-12-01T19:48:40.5Z"),
            ("2026-12-01T19:48:40.036865Z", "2026-12-01T19:48:40.036865Z"),
            ("2026-12-01T19:48:40.036865123Z", "2026-12-01T19:48:40.036865123Z"),
        ] {
            assert_eq!(parse_field(text), Ok(Stamp::Absolute(utc(expected))), "{text}");
        }
        // MySQL DATETIME(6) and psql timestamp without time zone: naive, the declared zone decides.
        let naive = parse_field("2026-12-01 19:48:40.036865").unwrap();
        assert_eq!(naive.to_utc(None), Err(ZoneProblem::Undeclared));
        assert_eq!(naive.to_utc(Some(Tz::UTC)).unwrap(), utc("2026-12-01T19:48:40.036865Z"));
        assert_eq!(naive.to_utc(Some(Tz::Asia__Seoul)).unwrap(), utc("2026-12-01T10:48:40.036865Z"));
        for text in ["infinity", "2026-12-01 19:48:40.036865 +00", "2026-12-01 19:48:40+0"] {
            assert!(parse_field(text).is_err(), "{text}");
        }
    }

    #[test]
    fn epoch_counts_are_told_apart_by_their_size() {
        for (text, expected) in [
            ("1796154520", "2026-12-01T19:48:40Z"),
            ("1796154520.036865", "2026-12-01T19:48:40.036865Z"),
            ("1796154520036", "2026-12-01T19:48:40.036Z"),
            ("1796154520036.5", "2026-12-01T19:48:40.0365Z"),
            ("1796154520036865", "2026-12-01T19:48:40.036865Z"),
            ("1796154520036865123", "2026-12-01T19:48:40.036865123Z"),
            // The ends of each unit's range: 10^8 seconds is 1973-03-03 09:46:40.
            ("100000000", "1973-03-03T09:46:40Z"),
            ("99999999999", "5138-11-16T09:46:39Z"),
            ("100000000000", "1973-03-03T09:46:40Z"),
            ("100000000000000", "1973-03-03T09:46:40Z"),
            ("100000000000000000", "1973-03-03T09:46:40Z"),
            ("0001796154520", "2026-12-01T19:48:40Z"),
        ] {
            assert_eq!(parse_field(text), Ok(Stamp::Absolute(utc(expected))), "{text}");
        }
        // Counts no unit fits: an id, a duration, a placeholder; and too many digits.
        for text in ["0", "1", "42", "99999999", "86400.5"] {
            let error = parse_field(text).unwrap_err();
            assert!(error.contains("too small to be a time"), "{text}: {error}");
        }
        for text in ["100000000000000000000", "17961545200368651234567"] {
            let error = parse_field(text).unwrap_err();
            assert!(error.contains("too large"), "{text}: {error}");
        }
        // Counts up to 5138 are read; the timeline refuses what it cannot hold (after 2262).
        for text in ["9999999999999999999", "99999999999"] {
            assert_eq!(parse_field(text).unwrap().to_moment(None), Err(ZoneProblem::OutOfRange), "{text}");
        }
    }

    #[test]
    fn a_time_that_happens_twice_is_taken_as_the_choice_says() {
        let la = chrono_tz::America::Los_Angeles;
        let stamp = parse_field("2026-11-01 01:30:00.250").unwrap();
        assert_eq!(stamp.to_utc(Some(la)), Err(ZoneProblem::Ambiguous(la)));
        assert_eq!(stamp.to_utc_as(Some(la), Ambiguous::Order), Err(ZoneProblem::Ambiguous(la)));
        assert_eq!(stamp.place(Some(la), Ambiguous::Earlier), Ok((utc("2026-11-01T08:30:00.250Z"), true)));
        assert_eq!(stamp.place(Some(la), Ambiguous::Later), Ok((utc("2026-11-01T09:30:00.250Z"), true)));
        let once = parse_field("2026-11-01 02:30:00").unwrap();
        assert_eq!(once.place(Some(la), Ambiguous::Later), Ok((utc("2026-11-01T10:30:00Z"), false)));
        let never = parse_field("2026-03-08 02:30:00").unwrap();
        assert_eq!(never.to_utc_as(Some(la), Ambiguous::Earlier), Err(ZoneProblem::Skipped(la)));
    }

    #[test]
    fn the_utc_shortcut_reads_what_the_general_parser_reads() {
        // `parse_field` as it was before the shortcut.
        let general = |text: &str| -> Result<Stamp, String> {
            let text = text.trim();
            if text.is_empty() {
                return Err("empty timestamp".into());
            }
            if text.bytes().all(|b| b.is_ascii_digit() || b == b'.') && text.bytes().filter(|&b| b == b'.').count() <= 1
            {
                return epoch(text);
            }
            let (stamp, len) = parse_datetime(text.as_bytes())?;
            if len != text.len() {
                return Err(format!("unexpected text after the timestamp in '{text}'"));
            }
            Ok(stamp)
        };
        let mut texts = Vec::new();
        for date in [
            "2026-10-07",
            "0000-01-01",
            "0001-12-31",
            "1969-12-31",
            "1970-01-01",
            "1999-12-31",
            "2000-02-29",
            "2024-02-29",
            "2100-02-29",
            "1900-02-28",
            "2026-02-29",
            "2026-02-30",
            "2026-04-31",
            "2026-06-30",
            "2026-13-01",
            "2026-00-10",
            "2026-10-00",
            "2026-10-32",
            "9999-12-31",
            "2026-1-07",
            "2026/10/07",
        ] {
            for time in ["00:00:00", "23:59:59", "24:00:00", "25:00:00", "12:60:00", "12:00:60", "09:33:03", "9:33:03"]
            {
                for fraction in ["", ".", ".1", ".12", ".120", ".123456789", ".1234567891", ".5x", ",5"] {
                    for (separator, zone) in
                        [("T", "Z"), ("T", "z"), (" ", "Z"), ("t", "Z"), ("T", ""), ("T", "+00:00")]
                    {
                        texts.push(format!("{date}{separator}{time}{fraction}{zone}"));
                    }
                }
            }
        }
        texts.extend(
            [
                "Z",
                "",
                "2026-10-07TZ",
                "2026-10-07T00:33:03ZZ",
                "2026-10-07T00:33:03.Z",
                " 2026-10-07T00:33:03Z",
                "2026-10-07T00:33:03Z\t",
            ]
            .map(String::from),
        );
        let mut shortcuts = 0;
        for text in &texts {
            if let Some(at) = utc_rfc3339(text.as_bytes()) {
                shortcuts += 1;
                assert_eq!(general(text), Ok(Stamp::Absolute(at)), "{text}");
            }
            assert_eq!(parse_field(text), general(text), "{text}");
        }
        assert!(shortcuts > 100, "{shortcuts}");
        assert_eq!(
            parse_field("2026-10-07T25:00:00Z").unwrap_err(),
            "malformed timestamp '2026-10-07T25:00:00Z': no such time of day; expected YYYY-MM-DD HH:MM:SS[.fff][Z|±HH:MM]"
        );
    }

    #[test]
    fn the_timeline_holds_the_years_1677_to_2262_and_refuses_the_rest() {
        let last = utc("2262-04-11T23:47:16.854775807Z");
        assert_eq!(moment(last).map(Moment::utc), Ok(last));
        let first = utc("1677-09-21T00:12:43.145224192Z");
        assert_eq!(moment(first).map(Moment::utc), Ok(first));
        for outside in ["2262-04-11T23:47:16.854775808Z", "1677-09-21T00:12:43.145224191Z", "9999-12-31T00:00:00Z"] {
            assert_eq!(moment(utc(outside)), Err(ZoneProblem::OutOfRange), "{outside}");
        }
        let stamp = parse_field("0001-01-01T00:00:00").unwrap();
        assert_eq!(stamp.to_moment(Some(Tz::UTC)), Err(ZoneProblem::OutOfRange));
        assert!(ZoneProblem::OutOfRange.explain("--ledger-tz").contains("1677-2262"));
        // Nanoseconds survive the round trip.
        let precise = utc("2026-10-07T00:54:05.700000001Z");
        assert_eq!(moment(precise).unwrap().utc(), precise);
    }

    #[test]
    fn dst_fold_is_refused_not_guessed() {
        let berlin = parse_zone("Europe/Berlin").unwrap();
        let Leading::Found(stamp, _) = leading_stamp("2026-10-25 02:30:00 x") else { panic!() };
        assert_eq!(stamp.to_utc(Some(berlin)), Err(ZoneProblem::Ambiguous(berlin)));
        let Leading::Found(stamp, _) = leading_stamp("2026-03-29 02:30:00 x") else { panic!() };
        assert_eq!(stamp.to_utc(Some(berlin)), Err(ZoneProblem::Skipped(berlin)));
    }

    #[test]
    fn en_us_dates_as_nestjs_writes_them_take_the_declared_zone() {
        // NestJS 12.5.1 ConsoleLogger under TZ=Asia/Seoul, Node 20.20 (ICU 78): a plain space.
        let line = "10/07/2026, 9:33:00 AM     LOG [BullWorker] job active";
        let (stamp, used) = parse_en_us_datetime(line).unwrap();
        assert_eq!(&line[used..used + 4], "    ");
        assert_eq!(stamp.to_utc(None), Err(ZoneProblem::Undeclared));
        assert_eq!(stamp.to_utc(Some(Tz::Asia__Seoul)).unwrap(), utc("2026-10-07T00:33:00Z"));
        for (text, expected) in [
            // ICU 72-era Node (18.13+) writes U+202F before the day period.
            ("10/07/2026, 9:33:00\u{202f}PM", "2026-10-07T12:33:00Z"),
            ("10/07/2026, 12:05:09 AM", "2026-10-06T15:05:09Z"),
            ("10/07/2026, 12:05:09 PM", "2026-10-07T03:05:09Z"),
            // toLocaleString() in NestJS 8 and earlier: no leading zeros.
            ("10/7/2026, 11:59:59 PM", "2026-10-07T14:59:59Z"),
        ] {
            let (stamp, used) = parse_en_us_datetime(text).unwrap();
            assert_eq!(used, text.len(), "{text}");
            assert_eq!(stamp.to_utc(Some(Tz::Asia__Seoul)).unwrap(), utc(expected), "{text}");
        }
    }

    #[test]
    fn other_locales_are_refused_not_guessed() {
        for text in [
            "07.10.2026, 09:33:00",     // de-DE
            "07/10/2026, 09:33:00",     // en-GB: day first, 24-hour
            "07/10/2026, 9:33:00 am",   // en-AU / en-IN: day first, lower-case day period
            "2026. 10. 07. AM 9:33:00", // ko-KR
            "2026-10-07, 9:33:00 a.m.", // en-CA
            "13/07/2026, 9:33:00 AM",
            "10/07/2026, 13:33:00 PM",
            "10/07/2026 9:33:00 AM",
        ] {
            let error = parse_en_us_datetime(text).unwrap_err();
            assert!(error.contains("expected the en-US form"), "{text}: {error}");
        }
    }

    #[test]
    fn abbreviations_are_refused() {
        assert!(parse_zone("KST").is_err());
        assert!(parse_zone("EST").is_err());
        assert!(parse_zone("CET").is_err());
        assert_eq!(parse_zone("asia/seoul"), Ok(Tz::Asia__Seoul));
        assert_eq!(parse_zone("utc"), Ok(Tz::UTC));
    }

    #[test]
    fn durations_read_like_a_postmortem() {
        assert_eq!(format_duration(934.0), "15 min 34 s");
        assert_eq!(format_duration(0.66), "0.66 s");
        assert_eq!(format_duration(0.004), "0.004 s");
        assert_eq!(format_duration(1.354), "1.35 s");
        assert_eq!(format_duration(266.0), "4 min 26 s");
        assert_eq!(format_duration(3723.0), "1 h 2 min 3 s");
        assert_eq!(format_duration(30.0), "30 s");
        assert_eq!(format_duration(32_400.0), "9 h");
        assert_eq!(format_duration(600.0), "10 min");
    }

    #[test]
    fn format_duration_of_a_negative_too_small_to_show_has_no_sign() {
        assert_eq!(format_duration(-0.0001), "0 s");
        assert_eq!(format_duration(-7.7e-95), "0 s");
        assert_eq!(format_duration(-0.0), "0 s");
        assert_eq!(format_duration(-0.004), "-0.004 s");
    }

    #[test]
    fn clock_times_keep_hundredths() {
        let seoul = Tz::Asia__Seoul;
        assert_eq!(format_clock(utc("2026-10-07T00:54:05.700Z"), seoul), "09:54:05.70");
        assert_eq!(format_clock(utc("2026-10-07T00:52:38Z"), seoul), "09:52:38");
        assert_eq!(format_clock(utc("2026-10-07T00:52:38.012Z"), seoul), "09:52:38.012");
    }
}
