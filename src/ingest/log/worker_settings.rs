//! Worker settings that applications log, read as evidence of the lock parameters in force.
//!
//! Apps write their BullMQ worker options at boot in their own words:
//! `worker ready lockDuration=12000ms stalledInterval=5000ms maxStalledCount=1`,
//! `worker started {"lockDuration":12000,"stalledInterval":5000}`, `lockDuration: 12000` (YAML,
//! `util.inspect`), `lock_duration_ms=12000`, or, in pino and winston, the options as keys of the
//! line or nested in one (`"opts":{"lockDuration":12000}`). Nothing here depends on a particular
//! app: a setting is any of BullMQ's four lock option names followed by a value.
//!
//! - **Keys** are BullMQ's names matched without regard to case, `_` or `-`: `lockDuration`,
//!   `lock_duration`, `LOCK_DURATION`, `lock-duration`, `lockDurationMs`, `lock_duration_ms`,
//!   `stalledInterval`, `lockRenewTime`, `maxStalledCount`. A key must be a whole word: `opts.lockDuration`
//!   is read (the dot ends a word), `jobLockDuration` and `MY_LOCK_DURATION` are not (another
//!   option of another lock, as far as anyone can tell). A key suffix `ms`/`millis`/`milliseconds`
//!   or `s`/`sec`/`secs`/`seconds` gives the unit.
//! - **Values** follow `=`, `:`, `=>` or a space, optionally quoted: `12000` (milliseconds unless
//!   the key says seconds), `12000ms`, `12000 ms`, `12s`, `12.5s`, `"12s"`. `maxStalledCount` is a
//!   count without a unit. A key followed by `=` or `:` and something else (`undefined`, `5m`, an
//!   object) is a line that cannot be used, and is rejected with the reason; a key followed by a
//!   space and a word is prose (`increase lockDuration to ...`) and gives nothing.
//! - One line gives at most one value per parameter: two different ones (two workers' options on
//!   one line) are ambiguous and the line is rejected.
//!
//! In text logs the candidate search (`CANDIDATE`) finds the keys with each word in lower case,
//! Capitalized or UPPER case, as the built-in rules match words (rules.rs): full case folding
//! would turn the search's literal prefilter off.

use serde_json::{Map, Value};

use crate::model::{Event, EventKind, Moment, Origin, Param, Scope, Text, WorkerSettings};

use crate::ingest::log::fields::Classified;

/// The candidate search of text logs: a key as `parse_text` reads it, in the usual casings.
/// `maxStalledCount` is found by its `StalledCount`: a `max` alternative would add twelve literal
/// prefixes to the search of every log line, and past 32 the search is a fifth slower (a test in
/// rules.rs keeps count).
pub const CANDIDATE: &str = r"(?-u:\b)(?:lock|Lock|LOCK)[_-]?(?:duration|Duration|DURATION|renew|Renew|RENEW)|(?:stalled|Stalled|STALLED)[_-]?(?:interval|Interval|INTERVAL|count|Count|COUNT)";

/// What a line says about the worker's settings: the values it gives (possibly none), or why they
/// cannot be used.
pub type Found = Result<WorkerSettings, String>;

/// The unit a key or a value names.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Unit {
    Millis,
    Seconds,
}

/// The parameter and unit a key names, from its normalized form (lower case, no `_` or `-`).
fn key_of(normalized: &str) -> Option<(Param, Option<Unit>)> {
    let bases = [
        ("lockduration", Param::LockDuration),
        ("lockrenewtime", Param::LockRenewTime),
        ("stalledinterval", Param::StalledInterval),
        ("maxstalledcount", Param::MaxStalledCount),
    ];
    let (base, param) = bases.iter().find(|(base, _)| normalized.starts_with(base))?;
    let unit = match &normalized[base.len()..] {
        "" => None,
        "ms" | "millis" | "milliseconds" | "msec" | "msecs" => Some(Unit::Millis),
        "s" | "sec" | "secs" | "seconds" => Some(Unit::Seconds),
        _ => return None,
    };
    if *param == Param::MaxStalledCount && unit.is_some() {
        return None;
    }
    Some((*param, unit))
}

fn normalize(key: &str) -> String {
    key.chars().filter(|c| *c != '_' && *c != '-').map(|c| c.to_ascii_lowercase()).collect()
}

/// A quick look for `lock` or `stalled` in any case: a text without either names no setting, and
/// most lines a reader hands over are that.
fn may_name_a_setting(text: &str) -> bool {
    let bytes = text.as_bytes();
    let at = |word: &[u8], start: usize| {
        bytes.get(start..start + word.len()).is_some_and(|found| found.eq_ignore_ascii_case(word))
    };
    memchr::memchr2_iter(b'l', b'L', bytes).any(|start| at(b"lock", start))
        || memchr::memchr2_iter(b's', b'S', bytes).any(|start| at(b"stalled", start))
}

/// The settings a text names (a log message, a line, a string in a JSON line).
pub fn parse_text(text: &str) -> Found {
    let mut found = WorkerSettings::default();
    if !may_name_a_setting(text) {
        return Ok(found);
    }
    let bytes = text.as_bytes();
    let is_key_byte = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
    let mut at = 0;
    while at < bytes.len() {
        // A key starts a word: at the start, or after a byte that is not a word byte.
        let starts_word = bytes[at].is_ascii_alphabetic() && (at == 0 || !is_word(bytes[at - 1]));
        if !starts_word {
            at += 1;
            continue;
        }
        let end = at + bytes[at..].iter().take_while(|&&b| is_key_byte(b)).count();
        let key = &text[at..end];
        at = end;
        let Some((param, key_unit)) = key_of(&normalize(key)) else { continue };
        match value_after(text, end) {
            Some(Ok(written)) => {
                let value =
                    to_value(param, key_unit, &written).map_err(|why| format!("{key}{}: {why}", written.text))?;
                if let Some(value) = value {
                    merge(&mut found, param, value, key)?;
                }
            }
            Some(Err(text_after)) => {
                return Err(format!(
                    "{key}{text_after}: expected {} {}",
                    if param.is_duration() { "a duration such as" } else { "a count such as" },
                    if param.is_duration() { "12000, 12000ms or 12s" } else { "1" }
                ));
            }
            None => {}
        }
    }
    Ok(found)
}

/// ASCII word bytes, as `(?-u:\b)` sees them.
fn is_word(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// A value as written after its key.
struct Written {
    /// The number.
    number: String,
    unit: Option<Unit>,
    /// From the end of the key to the end of the value, for messages (`=12000ms`).
    text: String,
}

/// The value after a key that ends at `end`: `None` when the key is not followed by one (prose),
/// `Err` with what follows when a separator promises a value that is not there.
fn value_after(text: &str, end: usize) -> Option<Result<Written, String>> {
    let rest = &text[end..];
    // A closing quote of the key: `"lockDuration":`, `'lockDuration':`, `\"lockDuration\":`.
    let after_quote = rest.strip_prefix("\\\"").or_else(|| rest.strip_prefix(['"', '\''])).unwrap_or(rest);
    let after_blank = after_quote.trim_start_matches([' ', '\t']);
    let (separated, value) = if let Some(v) = after_blank.strip_prefix("=>") {
        (true, v)
    } else if let Some(v) = after_blank.strip_prefix(['=', ':']) {
        (true, v)
    } else if after_blank.len() < after_quote.len() {
        (false, after_blank)
    } else {
        return None;
    };
    let value = value.trim_start_matches([' ', '\t']);
    let opened = value.strip_prefix("\\\"").or_else(|| value.strip_prefix(['"', '\''])).unwrap_or(value);
    let digits = opened.bytes().take_while(u8::is_ascii_digit).count();
    let fraction = match opened[digits..].strip_prefix('.') {
        Some(after) if digits > 0 => {
            let n = after.bytes().take_while(u8::is_ascii_digit).count();
            if n > 0 { n + 1 } else { 0 }
        }
        _ => 0,
    };
    let shown_end = |len: usize| {
        let consumed = text.len() - opened.len() + len;
        text[end..consumed.min(text.len())].to_string()
    };
    let complaint = || {
        let shown: String = value
            .chars()
            .take_while(|c| !c.is_whitespace() && !matches!(c, ',' | ';' | ')' | '}' | ']'))
            .take(24)
            .collect();
        format!("{}{shown}", &text[end..text.len() - value.len()])
    };
    if digits == 0 {
        return separated.then(|| Err(complaint()));
    }
    let number = &opened[..digits + fraction];
    let after_number = &opened[digits + fraction..];
    // A unit, right after the number or after one space.
    let spaced = after_number.strip_prefix(' ').unwrap_or(after_number);
    let letters = spaced.bytes().take_while(u8::is_ascii_alphabetic).count();
    let (unit, used) = match &spaced[..letters] {
        "" => (None, 0),
        "ms" | "msec" | "msecs" | "millis" | "milliseconds" => {
            (Some(Unit::Millis), after_number.len() - spaced.len() + letters)
        }
        "s" | "sec" | "secs" | "second" | "seconds" => {
            (Some(Unit::Seconds), after_number.len() - spaced.len() + letters)
        }
        // A word after a space is the next word of the line (`12000 exceeded`); glued to the
        // number it is a unit not understood.
        _ if spaced.len() < after_number.len() => (None, 0),
        _ => return Some(Err(complaint())),
    };
    let tail = &after_number[used..];
    let tail = tail.strip_prefix("\\\"").or_else(|| tail.strip_prefix(['"', '\''])).unwrap_or(tail);
    // The value ends a word: `12000abc`, `12000_000` are not values.
    if tail.bytes().next().is_some_and(|b| is_word(b) || b == b'.') {
        return Some(Err(complaint()));
    }
    Some(Ok(Written { number: number.to_string(), unit, text: shown_end(digits + fraction + used) }))
}

/// The value in BullMQ's units: milliseconds, or a count. `None` for a value that says "not set"
/// (`lockRenewTime: 0`: BullMQ then uses lockDuration / 2).
fn to_value(param: Param, key_unit: Option<Unit>, written: &Written) -> Result<Option<u64>, String> {
    if !param.is_duration() {
        if written.unit.is_some() {
            return Err("maxStalledCount is a count, without a unit".into());
        }
        let count = whole(&written.number, 1).ok_or("expected a whole number of stalls")?;
        return if count > crate::model::params::MAX_PARAM_VALUE { Err(too_large(count)) } else { Ok(Some(count)) };
    }
    let unit = match (key_unit, written.unit) {
        (Some(key), Some(value)) if key != value => {
            return Err("the value's unit is not the one the key names".into());
        }
        (key, value) => value.or(key).unwrap_or(Unit::Millis),
    };
    let scale = if unit == Unit::Seconds { 1000 } else { 1 };
    let millis = whole(&written.number, scale).ok_or("not a whole number of milliseconds")?;
    if millis > crate::model::params::MAX_PARAM_VALUE {
        return Err(too_large(millis));
    }
    match (millis, param) {
        (0, Param::LockRenewTime) => Ok(None),
        (0, _) => Err(format!("{} must be greater than 0", param.name())),
        (millis, _) => Ok(Some(millis)),
    }
}

/// The complaint for a value above `MAX_PARAM_VALUE` (the detectors' arithmetic on it would overflow).
fn too_large(value: u64) -> String {
    format!(
        "{value} is more than {} (about 31 years of milliseconds): not a setting the timeline can weigh",
        crate::model::params::MAX_PARAM_VALUE
    )
}

/// `number × scale` when it is a whole number that fits (`12.5` × 1000 → 12500).
fn whole(number: &str, scale: u64) -> Option<u64> {
    let (int, fraction) = number.split_once('.').unwrap_or((number, ""));
    let fraction = fraction.trim_end_matches('0');
    let places = u32::try_from(fraction.len()).ok()?;
    let divisor = 10u64.checked_pow(places)?;
    if !scale.is_multiple_of(divisor) {
        return None;
    }
    let int: u64 = int.parse().ok()?;
    let fraction: u64 = if fraction.is_empty() { 0 } else { fraction.parse().ok()? };
    int.checked_mul(scale)?.checked_add(fraction * (scale / divisor))
}

fn merge(found: &mut WorkerSettings, param: Param, value: u64, key: &str) -> Result<(), String> {
    let slot = found.slot(param);
    match *slot {
        Some(known) if known != value => Err(format!(
            "two values for {} on one line ({} and {}, the second from '{key}'): which worker's? log each worker's settings on a line of its own",
            param.name(),
            param.show(known),
            param.show(value)
        )),
        _ => {
            *slot = Some(value);
            Ok(())
        }
    }
}

/// The settings a structured log line gives: its keys at any depth (a key named after a
/// parameter with a number or a string value) and whatever its string values say as text (the
/// message, a JSON document logged as a string).
pub fn parse_json(value: &Value) -> Found {
    let mut found = WorkerSettings::default();
    walk(value, 0, &mut found)?;
    Ok(found)
}

/// `parse_json` of a line's object.
pub fn parse_json_object(object: &Map<String, Value>) -> Found {
    let mut found = WorkerSettings::default();
    walk_object(object, 0, &mut found)?;
    Ok(found)
}

/// The `worker-settings` event of a line: its settings, and of the line's fields only the worker
/// and queue (the settings are the worker's, not a job's).
pub fn event(at: Moment, origin: Origin, settings: WorkerSettings, fields: &Classified) -> Event {
    let mut event = Event::new(at, EventKind::WorkerSettings, origin);
    event.set_scope(
        Scope {
            worker: fields.worker.as_deref().map(Text::from),
            queue: fields.queue.as_deref().map(Text::from),
            ..Scope::default()
        }
        .interned(),
    );
    event.set_settings(Some(settings));
    event
}

/// What a reader does with what a line said about settings: the settings to add as an event,
/// or, for a line that is nothing else (`alone`), the reason to reject it. An unreadable setting
/// on a line that is also another event leaves that event alone.
pub fn settle(found: Found, alone: bool) -> Settled {
    match found {
        Ok(settings) if settings.is_empty() => Settled::Nothing,
        Ok(settings) => Settled::Event(settings),
        Err(reason) if alone => Settled::Reject(format!("worker settings: {reason}")),
        Err(_) => Settled::Nothing,
    }
}

/// See `settle`.
#[derive(Debug, PartialEq)]
pub enum Settled {
    Nothing,
    Event(WorkerSettings),
    Reject(String),
}

/// Deeper than this, a line is data, not options.
const MAX_DEPTH: usize = 16;

fn walk(value: &Value, depth: usize, found: &mut WorkerSettings) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    match value {
        Value::Object(object) => walk_object(object, depth, found)?,
        Value::Array(items) => {
            for item in items {
                walk(item, depth + 1, found)?;
            }
        }
        Value::String(text) => {
            for (param, value) in parse_text(text)?.entries() {
                merge(found, param, value, param.name())?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn walk_object(object: &Map<String, Value>, depth: usize, found: &mut WorkerSettings) -> Result<(), String> {
    for (key, inner) in object {
        let setting = may_name_a_setting(key).then(|| key_of(&normalize(key))).flatten();
        match setting {
            Some((param, key_unit)) => {
                let written = match inner {
                    Value::Number(number) => {
                        Written { number: number.to_string(), unit: None, text: format!("={number}") }
                    }
                    Value::String(text) => match value_after(&format!("={text}"), 0) {
                        Some(Ok(written)) if written.text.len() == text.len() + 1 => written,
                        _ => {
                            return Err(format!(
                                "{key}: {inner}: expected a duration such as 12000, \"12000ms\" or \"12s\""
                            ));
                        }
                    },
                    other => {
                        return Err(format!(
                            "{key}: {other}: expected {}",
                            if param.is_duration() { "a number of milliseconds" } else { "a number of stalls" }
                        ));
                    }
                };
                if let Some(value) =
                    to_value(param, key_unit, &written).map_err(|why| format!("{key}: {inner}: {why}"))?
                {
                    merge(found, param, value, key)?;
                }
            }
            None => walk(inner, depth + 1, found)?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(lock: Option<u64>, stalled: Option<u64>, count: Option<u64>) -> WorkerSettings {
        WorkerSettings {
            lock_duration: lock,
            stalled_interval: stalled,
            max_stalled_count: count,
            ..WorkerSettings::default()
        }
    }

    #[test]
    fn values_too_large_for_the_arithmetic_are_refused_not_overflowed() {
        // u64::MAX ms once made stalled-rerun's `activated_at + lockDuration` panic.
        for line in [
            "lockDuration=18446744073709551615",
            "stalledInterval=18446744073709551615",
            "lockDuration=1000000000001",
            "lockDuration=1000000001s",
            "maxStalledCount=18446744073709551615",
            r#"{"lockDuration": 18446744073709551615}"#,
        ] {
            let found =
                if line.starts_with('{') { parse_json(&serde_json::from_str(line).unwrap()) } else { parse_text(line) };
            let error = found.unwrap_err();
            assert!(error.contains("more than 1000000000000"), "{line}: {error}");
        }
        assert_eq!(parse_text("lockDuration=1000000000000").unwrap().lock_duration, Some(1_000_000_000_000));
    }

    #[test]
    fn the_shapes_apps_write() {
        for (line, expected) in [
            (
                "INFO [BullWorker] worker ready queue=pr-review lockDuration=12000ms, stalledInterval=5000ms, maxStalledCount=1",
                settings(Some(12_000), Some(5_000), Some(1)),
            ),
            (
                r#"worker started {"lockDuration":12000,"stalledInterval":5000,"concurrency":2}"#,
                settings(Some(12_000), Some(5_000), None),
            ),
            ("lockDuration: 12000", settings(Some(12_000), None, None)),
            (
                "worker options { lockDuration: 12000, stalledInterval: 5000, maxStalledCount: 2 }",
                settings(Some(12_000), Some(5_000), Some(2)),
            ),
            ("lock_duration_ms=12000 stalled_interval_ms=5000", settings(Some(12_000), Some(5_000), None)),
            ("LOCK_DURATION=12s STALLED_INTERVAL=5s", settings(Some(12_000), Some(5_000), None)),
            ("lock-duration 12.5 s, stalled-interval 500 ms", settings(Some(12_500), Some(500), None)),
            ("opts.lockDuration='12000' opts.stalledIntervalSec=5", settings(Some(12_000), Some(5_000), None)),
            (r#"config={\"lockDuration\":12000}"#, settings(Some(12_000), None, None)),
            ("Worker ready (lockDuration 12000 ms)", settings(Some(12_000), None, None)),
            ("'lockDuration' => 12000", settings(Some(12_000), None, None)),
        ] {
            assert_eq!(parse_text(line), Ok(expected), "{line}");
        }
        let renew = parse_text("lockRenewTime=6000").unwrap();
        assert_eq!(renew.lock_renew_time, Some(6_000));
    }

    #[test]
    fn near_misses_give_nothing() {
        for line in [
            "increase lockDuration to avoid stalls",
            "could not renew lock for job 42",
            "jobLockDuration=12000 MY_LOCK_DURATION=12000 lockDurationMax=9",
            "job 42 stalled, interval ok",
            "lockRenewTime=0",
            "GET /api/locks 200 3ms",
            "",
        ] {
            assert_eq!(parse_text(line), Ok(WorkerSettings::default()), "{line}");
        }
    }

    #[test]
    fn unreadable_values_are_reasons() {
        for (line, reason) in [
            ("lockDuration=undefined", "lockDuration=undefined: expected a duration"),
            ("lockDuration=5m", "lockDuration=5m: expected a duration"),
            ("lockDuration=0", "lockDuration=0: lockDuration must be greater than 0"),
            ("lockDurationMs=12s", "the value's unit is not the one the key names"),
            ("lockDuration=12.0005s", "not a whole number of milliseconds"),
            ("maxStalledCount=1s", "maxStalledCount is a count"),
            (
                "lockDuration=12000 then lockDuration=30000",
                "two values for lockDuration on one line (12000 ms and 30000 ms",
            ),
        ] {
            let error = parse_text(line).unwrap_err();
            assert!(error.contains(reason), "{line}: {error}");
        }
        // The same value twice is one value.
        assert_eq!(parse_text("lockDuration=12000 lock_duration_ms=12000").unwrap().lock_duration, Some(12_000));
    }

    #[test]
    fn structured_lines_give_keys_at_any_depth_and_text_in_strings() {
        let line: Value = serde_json::from_str(
            r#"{"level":30,"time":1791333180000,"msg":"worker started","opts":{"connection":{"host":"redis"},"lockDuration":12000,"stalled_interval":"5s"}}"#,
        )
        .unwrap();
        assert_eq!(parse_json(&line), Ok(settings(Some(12_000), Some(5_000), None)));
        let line: Value =
            serde_json::from_str(r#"{"level":"info","message":"worker ready lockDuration=12000ms maxStalledCount=1","timestamp":"2026-10-07T00:33:00.000Z"}"#)
                .unwrap();
        assert_eq!(parse_json(&line), Ok(settings(Some(12_000), None, Some(1))));
        let line: Value = serde_json::from_str(r#"{"msg":"worker","lockDuration":null}"#).unwrap();
        assert!(parse_json(&line).unwrap_err().contains("lockDuration: null"));
        let line: Value = serde_json::from_str(r#"{"msg":"request","lock":{"id":7},"stalled":false}"#).unwrap();
        assert_eq!(parse_json(&line), Ok(WorkerSettings::default()));
    }

    #[test]
    fn the_candidate_search_finds_what_the_parser_reads_in_the_usual_casings() {
        let candidate = regex::Regex::new(CANDIDATE).unwrap();
        for line in [
            "lockDuration=1",
            "lock_duration_ms=1",
            "LOCK_DURATION=1",
            "Lock-Duration: 1",
            "stalledInterval=1",
            "maxStalledCount=1",
            "lockRenewTime=1",
        ] {
            assert!(candidate.is_match(line), "{line}");
            assert!(!parse_text(line).unwrap().is_empty(), "{line}");
        }
        for line in ["could not renew lock for job 42", "job 42 stalled", "GET /locks"] {
            assert!(!candidate.is_match(line), "{line}");
        }
    }
}
