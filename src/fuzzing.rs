//! What the fuzz targets (`fuzz/`, `cargo +nightly fuzz run TARGET`) run, and what the stable
//! regression test (`tests/hostile/fuzz_regressions.rs`) replays: one function per target, taking
//! the fuzzer's bytes, reading them as the tool reads its inputs and panicking when an invariant
//! fails. Written once here so that an input that once failed under the fuzzer is checked by the
//! same code on every `cargo test` (docs/fuzzing.md).
//!
//! Not an API: hidden from the docs, and free to change with the targets. The inputs are split
//! by hand (`Parts`), not by `arbitrary`, so that a seed is a fixture file behind a short,
//! readable header (fuzz/seed.sh writes them) and a reproducer stays readable too.

use std::collections::BTreeMap;
use std::io::{BufRead, Cursor};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Datelike, Utc};
use chrono_tz::Tz;

use crate::error::Error;
use crate::ingest::{self, RuleSpec, SourceKind, SourceSpec};
use crate::model::{Event, InputSummary};

/// A fuzz target: panics when an invariant fails on the input.
pub type Target = fn(&[u8]);

/// Every target by name, as under fuzz/fuzz_targets/ and fuzz/regressions/.
pub const TARGETS: &[(&str, Target)] = &[
    ("ledger", ledger),
    ("server_log", server_log),
    ("bullmq_records", bullmq_records),
    ("bullmq_params", bullmq_params),
    ("traces", traces),
    ("redis_monitor", redis_monitor),
    ("postgres_tables", postgres_tables),
    ("time", time),
    ("rules", rules),
    ("lock_plan", lock_plan),
    ("case", case),
    ("capture_reply", capture_reply),
    ("capture_pg_reply", capture_pg_reply),
    ("init", init),
];

/// The zones a fuzzed source is read in: none declared, UTC, and zones with what makes local time
/// hard (half-hour and 45-minute offsets, a 30-minute DST shift, a date-line jump, DST that
/// moved over the years).
const ZONES: &[Option<Tz>] = &[
    None,
    Some(chrono_tz::UTC),
    Some(chrono_tz::Asia::Seoul),
    Some(chrono_tz::America::New_York),
    Some(chrono_tz::Europe::London),
    Some(chrono_tz::Australia::Lord_Howe),
    Some(chrono_tz::America::St_Johns),
    Some(chrono_tz::Asia::Kathmandu),
    Some(chrono_tz::Pacific::Apia),
    Some(chrono_tz::America::Sao_Paulo),
];

/// A fuzz input for one source: three selector bytes, settings lines up to the first NUL, then
/// the file's bytes. Missing parts are empty.
struct Parts<'a> {
    select: [u8; 3],
    settings: String,
    body: &'a [u8],
}

impl<'a> Parts<'a> {
    fn split(data: &'a [u8]) -> Parts<'a> {
        let mut select = [0u8; 3];
        for (slot, byte) in select.iter_mut().zip(data) {
            *slot = *byte;
        }
        let rest = data.get(3..).unwrap_or_default();
        let (settings, body) = match memchr::memchr(0, rest) {
            Some(nul) => (&rest[..nul], &rest[nul + 1..]),
            None => (&[][..], rest),
        };
        Parts { select, settings: String::from_utf8_lossy(settings).into_owned(), body }
    }

    fn zone(&self) -> Option<Tz> {
        ZONES[usize::from(self.select[1]) % ZONES.len()]
    }

    fn ambiguous(&self) -> crate::time::Ambiguous {
        use crate::time::Ambiguous;
        [Ambiguous::Order, Ambiguous::Earlier, Ambiguous::Later, Ambiguous::Error][usize::from(self.select[2] & 3)]
    }

    /// `key value` settings lines: `c FIELD=COLUMN` (ledger columns), `e VALUE=KIND` (ledger
    /// event values), `r EVENT=PATTERN` (log rules), `q QUEUE` (BullMQ queue).
    fn settings(&self, key: &str) -> impl Iterator<Item = &str> {
        self.settings.lines().filter_map(move |line| line.strip_prefix(key)?.strip_prefix(' '))
    }

    fn pairs(&self, key: &str) -> BTreeMap<String, String> {
        self.settings(key)
            .filter_map(|pair| pair.split_once('='))
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect()
    }
}

/// The formats of `kind`, then `None` (chosen from the content), then the log envelopes: the
/// seeds' selector bytes of the formats before the envelopes keep their meaning as envelopes are
/// added.
///
/// The PostgreSQL backend's tables have a target of their own (`postgres_tables`): left out here,
/// so that the selector bytes of the Redis records' seeds keep their meaning.
fn format_of(kind: SourceKind, select: u8) -> Option<&'static str> {
    let names: Vec<Option<&'static str>> = ingest::plain_formats()
        .filter(|format| {
            format.kind() == kind && !ingest::bullmq::postgres::FORMATS.iter().any(|pg| pg.name() == format.name())
        })
        .map(|format| Some(format.name()))
        .chain([None])
        .chain(ingest::formats().filter(|f| f.is_envelope() && f.kind() == kind).map(|f| Some(f.name())))
        .collect();
    names[usize::from(select) % names.len()]
}

/// The spec of a fuzzed source of `kind`: its format, zone, ambiguity choice and settings.
fn spec_of(kind: SourceKind, parts: &Parts) -> SourceSpec {
    let mut spec = SourceSpec::new(kind, PathBuf::from("fuzz-input"), parts.zone(), "tz = \"...\"".into());
    spec.format = format_of(kind, parts.select[0]).map(str::to_string);
    spec.tz_defaulted = spec.tz.is_none() && kind == SourceKind::Ledger;
    let choice = parts.ambiguous();
    // A ledger has no `order` (config.rs refuses it there).
    if kind == SourceKind::Log || choice != crate::time::Ambiguous::Order {
        spec.ambiguous = choice;
    }
    spec.columns = parts.pairs("c");
    spec.event_values = parts.pairs("e");
    spec.rules = parts.pairs_in_order("r");
    spec.builtin_rules = parts.select[2] & 4 == 0;
    spec.queue = parts.settings("q").next().map(str::to_string);
    // The line cap: mostly the default, sometimes small enough for the fuzzer to pass it.
    spec.max_line_bytes = match parts.select[2] >> 3 & 3 {
        1 => 64,
        2 => 1024,
        _ => spec.max_line_bytes,
    };
    spec
}

impl Parts<'_> {
    fn pairs_in_order(&self, key: &str) -> Vec<RuleSpec> {
        self.settings(key)
            .filter_map(|pair| pair.split_once('='))
            .map(|(event, pattern)| RuleSpec { event: event.to_string(), pattern: pattern.to_string() })
            .collect()
    }
}

/// Reads `body` as the source `spec`, as `ingest::read_sources` reads a file: its byte-order mark
/// skipped, decompressed when it is gzip, each line kept with its event (no file to read back).
pub fn read_in_memory(spec: &SourceSpec, body: &[u8]) -> crate::error::Result<(Vec<Event>, InputSummary)> {
    let raw = Cursor::new(body.to_vec());
    let input: Box<dyn BufRead + Send> = if body.starts_with(&ingest::io::gzip::MAGIC) {
        Box::new(ingest::io::lines::Text::new(std::io::BufReader::new(ingest::io::gzip::Members::new(raw))))
    } else {
        Box::new(ingest::io::lines::Text::new(raw))
    };
    ingest::read_opened(0, spec, input, None)
}

/// Lines as the readers count them: a line ends at LF, CRLF or a lone CR, and a last line
/// without an end counts.
pub fn physical_lines(body: &[u8]) -> u64 {
    let body = body.strip_prefix(ingest::io::lines::BOM).unwrap_or(body);
    let ends = ingest::line_ends(body, &mut false);
    let unterminated = body.last().is_some_and(|&last| last != b'\n' && last != b'\r');
    ends + u64::from(unterminated)
}

/// The years a text could name a time in: each run of exactly four digits, and each run of 9 to
/// 19 digits read as seconds, milliseconds, microseconds or nanoseconds since 1970 (epoch
/// cells, stream ids, job timestamps). An event's time must lie within them (a year either way,
/// for zones and durations added to them).
fn years_written(text: &[u8]) -> Vec<i32> {
    let mut years = Vec::new();
    let mut at = 0;
    while at < text.len() {
        if !text[at].is_ascii_digit() {
            at += 1;
            continue;
        }
        let start = at;
        while at < text.len() && text[at].is_ascii_digit() {
            at += 1;
        }
        let digits = &text[start..at];
        let Ok(number) = std::str::from_utf8(digits).unwrap_or_default().parse::<i64>() else { continue };
        if digits.len() == 4 {
            years.extend(i32::try_from(number).ok());
        } else if digits.len() >= 9 {
            for scale in [1, 1_000, 1_000_000, 1_000_000_000] {
                let seconds = number / scale;
                years.extend(DateTime::from_timestamp(seconds, 0).map(|at| at.year()));
            }
        }
    }
    years
}

/// The invariants of one source read: every line accounted once, every event and rejection on
/// a line of the file, the span right, every time one the input could mean. An error must name
/// the input and, when it names a line, one of the file's (or the one after its last).
pub fn check_source(
    spec: &SourceSpec,
    body: &[u8],
    result: &crate::error::Result<(Vec<Event>, InputSummary)>,
) -> Option<()> {
    let compressed = body.starts_with(&ingest::io::gzip::MAGIC);
    let lines = physical_lines(body);
    match result {
        Err(error) => {
            check_error(error, &spec.path, (!compressed).then_some(lines));
            None
        }
        Ok((events, summary)) => {
            check_account(summary);
            assert_eq!(summary.events, events.len() as u64, "events counted");
            if !compressed {
                assert!(summary.lines <= lines, "{} lines read from a text of {lines}", summary.lines);
            }
            for rejection in &summary.rejections {
                assert!(
                    (1..=summary.lines.max(lines)).contains(&rejection.line),
                    "rejection on line {}",
                    rejection.line
                );
            }
            let years = if compressed { None } else { Some(years_written(body)) };
            for event in events {
                let origin = event.origin();
                assert_eq!(origin.source, 0, "event of another source");
                let line = u64::from(origin.line);
                assert!(line >= 1, "event on line 0");
                if !compressed {
                    assert!(line <= lines, "event on line {line} of a text of {lines} lines");
                }
                if let Some(years) = &years {
                    let year = event.at().year();
                    assert!(
                        years.iter().any(|written| (written - 1..=written + 1).contains(&year)),
                        "an event in {year}, a year no time of the input names ({:?})",
                        event.at()
                    );
                }
            }
            let first = events.iter().map(Event::at).min();
            let last = events.iter().map(Event::at).max();
            assert_eq!((summary.first_at, summary.last_at), (first, last), "the span is the events'");
            Some(())
        }
    }
}

/// `lines = used + ignored + rejected`, and the reasons add up.
pub fn check_account(summary: &InputSummary) {
    assert_eq!(
        summary.lines,
        summary.used + summary.ignored + summary.rejected,
        "{}: every line used, ignored or rejected once (lines {}, used {}, ignored {}, rejected {})",
        summary.path,
        summary.lines,
        summary.used,
        summary.ignored,
        summary.rejected
    );
    assert!(summary.ignored_by_reason.values().sum::<u64>() <= summary.ignored, "ignored reasons add up");
    assert!(summary.rejections.len() as u64 <= summary.rejected, "rejections listed are counted");
}

/// An error names its file (or is a usage error) and, with a line, one within the text.
fn check_error(error: &Error, path: &Path, lines: Option<u64>) {
    let text = error.to_string();
    assert!(!text.is_empty(), "an empty message");
    assert!(text.len() < 4096, "a message of {} bytes: it quotes too much", text.len());
    if let Error::Input { path: named, line, .. } = error {
        assert_eq!(named, path, "the error names its file");
        if let (Some(line), Some(lines)) = (line, lines) {
            assert!((1..=lines + 1).contains(line), "an error on line {line} of a text of {lines} lines: {text}");
        }
    }
}

fn source_target(kind: SourceKind, data: &[u8]) {
    let parts = Parts::split(data);
    let spec = spec_of(kind, &parts);
    let result = read_in_memory(&spec, parts.body);
    check_source(&spec, parts.body, &result);
}

/// Ledgers (CSV, JSON Lines) with fuzzed columns, event values and zone.
pub fn ledger(data: &[u8]) {
    source_target(SourceKind::Ledger, data);
}

/// Server logs (text with rules, pino, winston, NestJS) with fuzzed rules and zone. A plain-text
/// log is also read as a pipe's is (`log::text::read_streamed`), in segments of a fuzzed size:
/// the same events and account, or the same error, as the one read.
pub fn server_log(data: &[u8]) {
    use crate::ingest::EventFormat as _;
    let parts = Parts::split(data);
    let spec = spec_of(SourceKind::Log, &parts);
    let result = read_in_memory(&spec, parts.body);
    check_source(&spec, parts.body, &result);
    // Only a plain-text log is read in segments; any other reads as it did.
    let body = parts.body.strip_prefix(ingest::io::lines::BOM).unwrap_or(parts.body);
    let head = String::from_utf8_lossy(&body[..body.len().min(1 << 16)]);
    let plain_text =
        ingest::choose_format(&spec, &head).is_ok_and(|format| format.name() == ingest::log::text::ServerLog.name());
    if !plain_text || parts.body.starts_with(&ingest::io::gzip::MAGIC) {
        return;
    }
    let segment = 16 + usize::from(parts.select[1]) * 8;
    let streamed = read_streamed_in_memory(&spec, parts.body, segment);
    match (&result, &streamed) {
        (Ok((events, summary)), Ok((streamed_events, streamed_summary))) => {
            assert!(events == streamed_events, "a stream in segments of {segment} gave other events");
            let mut account = streamed_summary.clone();
            account.texts = summary.texts.clone();
            assert_eq!(&account, summary, "a stream in segments of {segment} gave another account");
        }
        // The same line is the error. Its reason may differ where one line has two problems
        // (not UTF-8, and the log's first timestamp malformed): which is met first depends on
        // whether the rules' search touches the line in its region (docs/fuzzing.md).
        (
            Err(crate::error::Error::Input { line: one, .. }),
            Err(crate::error::Error::Input { line: streamed_line, .. }),
        ) => {
            assert_eq!(one, streamed_line, "a stream in segments of {segment}: {:?}", streamed.as_ref().err());
        }
        (Err(one), Err(streamed)) => {
            assert_eq!(one.to_string(), streamed.to_string(), "a stream in segments of {segment}");
        }
        (one, streamed) => panic!(
            "read whole: {:?}; as a stream in segments of {segment}: {:?}",
            one.as_ref().map(|(events, _)| events.len()),
            streamed.as_ref().map(|(events, _)| events.len())
        ),
    }
}

/// `body` read as a plain-text log from a pipe is, in segments of `segment` bytes, its texts kept.
fn read_streamed_in_memory(
    spec: &SourceSpec,
    body: &[u8],
    segment: usize,
) -> crate::error::Result<(Vec<Event>, InputSummary)> {
    let spec = SourceSpec { max_kept_bytes: usize::MAX, ..spec.clone() };
    let input = Box::new(ingest::io::lines::Text::new(Cursor::new(body.to_vec())));
    // Never written to: the texts are all kept.
    let copy = scratch("stream").join("copy");
    ingest::read_opened_streamed(0, &spec, input, &copy, segment)
}

/// BullMQ's events stream (XRANGE) and job hashes (HGETALL), JSON and redis-cli text.
pub fn bullmq_records(data: &[u8]) {
    let kind =
        if data.first().is_some_and(|b| b & 0x80 != 0) { SourceKind::BullmqJobs } else { SourceKind::BullmqEvents };
    source_target(kind, data);
}

/// The tables of BullMQ's PostgreSQL backend as psql exports them (CSV with a header, JSON rows a
/// line, `json_agg`): the first selector byte picks the table's reader (event, job, meta), `q
/// QUEUE` the queue whose rows are read.
pub fn postgres_tables(data: &[u8]) {
    let parts = Parts::split(data);
    let tables = ingest::bullmq::postgres::FORMATS;
    let format = tables[usize::from(parts.select[0]) % tables.len()];
    let mut spec = spec_of(format.kind(), &parts);
    spec.format = Some(format.name().to_string());
    let result = read_in_memory(&spec, parts.body);
    check_source(&spec, parts.body, &result);
}

/// OpenTelemetry traces (OTLP JSON and Tempo's answers, Jaeger JSON; a line at a time or a pretty-printed document).
pub fn traces(data: &[u8]) {
    source_target(SourceKind::Trace, data);
}

/// `redis-cli MONITOR` output (legacy Bull's lock scripts, or chosen by content).
pub fn redis_monitor(data: &[u8]) {
    source_target(SourceKind::RedisMonitor, data);
}

/// A per-process folder for the targets that read files by path: one input at a time per
/// process, as libFuzzer runs them (the stable test replays them in one test for that reason).
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("leasetrace-fuzz-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch folder for the fuzz input");
    dir
}

/// BullMQ parameters files (JSON or YAML, flat or nested) with a fuzzed `params_at`.
pub fn bullmq_params(data: &[u8]) {
    let parts = Parts::split(data);
    let name = ["params.json", "params.yaml", "params"][usize::from(parts.select[0]) % 3];
    let path = scratch("params").join(name);
    std::fs::write(&path, parts.body).expect("the fuzz input written");
    let at = parts.settings("p").next();
    let selection = ingest::bullmq::params::Selection { at, version_given: parts.select[2] & 1 != 0 };
    let lines = (!parts.body.starts_with(&ingest::io::gzip::MAGIC)).then(|| physical_lines(parts.body));
    match ingest::bullmq::params::read_selected(&path, selection) {
        Err(error) => check_error(&error, &path, lines),
        Ok(file) => {
            let given = &file.overrides;
            for value in [given.lock_duration, given.lock_renew_time, given.stalled_interval, given.max_stalled_count]
                .into_iter()
                .flatten()
            {
                assert!(value <= crate::model::params::MAX_PARAM_VALUE, "a parameter of {value} accepted");
            }
            if let Some(lines) = lines {
                assert!(file.summary.lines <= lines, "{} lines in a text of {lines}", file.summary.lines);
            }
            // What the report makes of them: resolved, with every bound checked.
            let params = crate::model::LockParams::resolve(given, &crate::model::params::ParamOverrides::default());
            assert!(params.lock_duration > 0 && params.lock_renew_time > 0, "resolved to zero: {params:?}");
        }
    }
}

/// The time parsers and formatters: no panic on any text, and what is formatted parses back to
/// the same instant (to the millisecond).
pub fn time(data: &[u8]) {
    use crate::time::{self as t, Stamp};
    let Ok(text) = std::str::from_utf8(data) else { return };
    let zone = ZONES[data.len() % ZONES.len()];
    let _ = t::leading_stamp(text);
    let _ = t::stamp_shape(text.as_bytes());
    let _ = t::looks_like_date(text.as_bytes());
    let _ = t::parse_zone(text);
    if let Ok((_, used)) = t::parse_en_us_datetime(text) {
        assert!(used <= text.len() && text.is_char_boundary(used), "en-US stamp ends at {used} of {}", text.len());
    }
    if let Ok(bound) = t::parse_bound(text) {
        let _ = bound.place(zone, chrono::NaiveDate::from_ymd_opt(2026, 10, 7));
    }
    if let Ok(stamp) = t::parse_field(text) {
        for choice in [t::Ambiguous::Earlier, t::Ambiguous::Later, t::Ambiguous::Error] {
            if let Ok(at) = stamp.to_utc_as(zone, choice) {
                round_trip(at, zone.unwrap_or(chrono_tz::UTC));
            }
        }
        if let Stamp::Absolute(at) = stamp {
            assert_eq!(stamp.to_utc(None).ok(), Some(at), "an instant needs no zone");
        }
    }
    // The duration formatter on the bytes as a number.
    if data.len() >= 8 {
        let seconds = f64::from_le_bytes(data[..8].try_into().unwrap_or_default());
        let text = t::format_duration(seconds);
        if seconds.is_finite() {
            // A sign only on what shows as more than nothing.
            assert_ne!(text, "-0 s", "a negative zero for {seconds}");
            assert_eq!(text.starts_with('-'), seconds < 0.0 && text != "0 s", "sign of {seconds}: {text}");
        }
    }
}

/// `at` formatted for the wire and for people, then parsed back.
fn round_trip(at: DateTime<Utc>, zone: Tz) {
    use crate::time::{self as t, Stamp};
    if crate::model::Moment::new(at).is_err() {
        return;
    }
    let millis = at.timestamp_millis();
    let wire = t::format_rfc3339(at);
    let back = t::parse_field(&wire).unwrap_or_else(|e| panic!("{wire} does not parse back: {e}"));
    assert_eq!(back.to_utc(None).map(|b| b.timestamp_millis()), Ok(millis), "{wire} parses back to another instant");
    let shown = t::format_datetime(at, zone);
    match t::parse_field(&shown) {
        Ok(Stamp::Local(_)) => {
            let stamp = t::parse_field(&shown).unwrap_or_else(|_| unreachable!());
            let placed: Vec<i64> = [t::Ambiguous::Earlier, t::Ambiguous::Later]
                .into_iter()
                .filter_map(|choice| stamp.to_utc_as(Some(zone), choice).ok())
                .map(|b| b.timestamp_millis())
                .collect();
            assert!(placed.contains(&millis), "{shown} in {zone} does not place back at {wire}: {placed:?}");
        }
        other => panic!("{shown} (format_datetime) does not parse as a local time: {other:?}"),
    }
}

/// The rule set every input of the `rules` target is classified by: the built-in rules after
/// the reference incident's user rule, compiled once per process.
fn fixed_rules() -> &'static crate::ingest::log::rules::RuleSet {
    static RULES: std::sync::OnceLock<crate::ingest::log::rules::RuleSet> = std::sync::OnceLock::new();
    RULES.get_or_init(|| {
        let user = [RuleSpec { event: "job-stalled".into(), pattern: r"moved (?P<job_id>\S+) back to wait".into() }];
        crate::ingest::log::rules::RuleSet::new(&user, true, "fuzz").expect("the fixed rules compile")
    })
}

/// The rule compiler and classifier: each line classified by the fixed rule set (the candidate
/// search finds every line a rule matches; classifying a candidate is classifying the line), and
/// when the first byte says so, the first line compiled as a user rule (an error, never a
/// panic, with a short message) and the rest classified by it.
pub fn rules(data: &[u8]) {
    let text = String::from_utf8_lossy(data.get(1..).unwrap_or_default());
    let fixed = fixed_rules();
    for line in text.lines() {
        check_classified(fixed, line);
    }
    let Some(&select) = data.first() else { return };
    if select & 1 == 0 {
        return;
    }
    let mut lines = text.lines();
    let Some(pattern) = lines.next() else { return };
    let events = ["job-stalled", "job-active", "server-start", "error", "round-started", "no-such-event"];
    let spec = RuleSpec { event: events[usize::from(select >> 1) % events.len()].into(), pattern: pattern.into() };
    match crate::ingest::log::rules::RuleSet::new(std::slice::from_ref(&spec), false, "fuzz") {
        Err(error) => {
            let message = error.to_string();
            assert!(message.len() < 2048, "a rule error of {} bytes", message.len());
        }
        Ok(rules) => {
            for line in lines {
                check_classified(&rules, line);
            }
        }
    }
}

fn check_classified(rules: &crate::ingest::log::rules::RuleSet, line: &str) {
    let found = rules.classify_candidate(line);
    if found.kind.is_some() {
        assert!(rules.is_candidate(line.as_bytes()), "a rule matches {line:?} but the candidate search misses it");
    }
    let classified = rules.classify(line);
    if rules.is_candidate(line.as_bytes()) {
        assert_eq!(classified, found, "classify and classify_candidate differ on {line:?}");
    } else {
        assert_eq!(
            classified,
            crate::ingest::log::fields::Classified::default(),
            "a line that is no candidate classified: {line:?}"
        );
    }
}

/// Reads a little-endian u64 from `data` at `at` (zeros past the end).
fn u64_at(data: &[u8], at: usize) -> u64 {
    let mut bytes = [0u8; 8];
    for (slot, byte) in bytes.iter_mut().zip(data.iter().skip(at)) {
        *slot = *byte;
    }
    u64::from_le_bytes(bytes)
}

/// The lock plan from fuzzed parameters (each within what validation accepts), times and
/// what-if values: every bound in order, no negative or non-finite duration, no panic, the JSON
/// parses.
pub fn lock_plan(data: &[u8]) {
    use crate::model::params::{MAX_PARAM_VALUE, ParamOverrides};
    let param = |at: usize| {
        let raw = u64_at(data, at);
        // Some small, some anywhere up to the ceiling.
        (raw & 1 == 0).then_some(if raw & 2 == 0 { (raw >> 2) % 600_000 + 1 } else { (raw >> 2) % MAX_PARAM_VALUE + 1 })
    };
    let versions = [None, Some("1.1.0"), Some("3.9.0"), Some("3.10.0"), Some("5.58.0"), Some("5.81.5"), Some("4.16.5")];
    let pick = usize::from(data.get(32).copied().unwrap_or(0)) % versions.len();
    // The last is legacy Bull's: its models, not a BullMQ 4.x.
    let bull = pick == versions.len() - 1;
    let flags = ParamOverrides {
        lock_duration: param(0),
        lock_renew_time: param(8),
        stalled_interval: param(16),
        max_stalled_count: param(24).map(|n| n % 10),
        version: versions[pick].filter(|_| !bull).map(str::to_string),
        version_at_least: None,
        bull_version: versions[pick].filter(|_| bull).map(str::to_string),
    };
    let params = crate::model::LockParams::resolve(&ParamOverrides::default(), &flags);
    // Times `lock` accepts: those a timeline holds (1677-2262, `Moment`; `commands::lock::report` refuses
    // the rest).
    let (first, last) = (-9_223_372_036_854_i64, 9_223_372_036_854_i64);
    let instant = |at: usize| {
        let raw = u64_at(data, at);
        #[allow(clippy::cast_possible_wrap)]
        let millis = (raw >> 1) as i64 % (last - first) + first;
        DateTime::from_timestamp_millis(millis).filter(|at| crate::model::Moment::new(*at).is_ok())
    };
    let Some(activated_at) = instant(33) else { return };
    let died_at = if u64_at(data, 41) & 1 == 0 {
        // Mostly near the activation, where the windows are.
        let offset = i64::try_from(u64_at(data, 41) >> 1).unwrap_or(0) % (4 * 3_600_000) - 600_000;
        activated_at
            .checked_add_signed(chrono::TimeDelta::milliseconds(offset))
            .filter(|at| crate::model::Moment::new(*at).is_ok())
    } else {
        instant(41)
    };
    let what_if: Vec<u64> = (0..data.len().saturating_sub(49) / 8)
        .take(8)
        .map(|i| u64_at(data, 49 + 8 * i) % (MAX_PARAM_VALUE + 1))
        .collect();
    let question = crate::commands::lock::plan::Question {
        activated_at,
        died_at,
        params: params.clone(),
        what_if,
        runs: vec![1.0, 30.0],
    };
    let plan = crate::commands::lock::plan::plan(&question);
    let at =
        |text: &str| DateTime::parse_from_rfc3339(text).unwrap_or_else(|e| panic!("{text}: {e}")).with_timezone(&Utc);
    let opt = |text: &Option<String>| text.as_deref().map(at);
    let activated = at(&plan.activated_at);
    let (early, due) = (at(&plan.first_renewal_earliest_at), at(&plan.first_renewal_due_at));
    assert!(activated <= early && early <= due, "first renewal window out of order: {plan:?}");
    assert!(plan.renewal_period_s.is_finite() && plan.renewal_period_s >= 0.0, "period {}", plan.renewal_period_s);
    if let (Some(earliest), Some(latest)) = (opt(&plan.lock_expired_earliest_at), opt(&plan.lock_expired_latest_at)) {
        assert!(earliest <= latest, "lock expiry window out of order: {plan:?}");
    }
    if let (Some(earliest), Some(latest)) = (opt(&plan.stalled_check_earliest_at), opt(&plan.stalled_check_latest_at)) {
        assert!(earliest <= latest, "stalled check window out of order: {plan:?}");
        let expired = opt(&plan.lock_expired_latest_at).or(opt(&plan.lock_expired_at));
        if let Some(expired) = expired {
            assert!(expired <= latest, "the stalled check ends before the lock expires: {plan:?}");
        }
    }
    for row in &plan.what_if {
        for value in [row.recovery_min_s, row.recovery_max_s, row.blocking_limit_s] {
            assert!(value.is_finite() && value >= 0.0, "what-if value {value}: {row:?}");
        }
        assert!(row.recovery_min_s <= row.recovery_max_s, "what-if recovery out of order: {row:?}");
        assert!(row.lock_renew_time_ms <= MAX_PARAM_VALUE, "what-if renew time past the ceiling: {row:?}");
    }
    let json = crate::commands::lock::plan::render_json(&plan);
    serde_json::from_str::<serde_json::Value>(&json).expect("the lock plan's JSON parses");
    let _ = crate::commands::lock::plan::render_table(&plan, &params, chrono_tz::Asia::Seoul, question.runs.len());
}

/// A whole case: a manifest and files, through `build_report` and every renderer. The input is
/// a view byte, the manifest up to the first NUL, then files each as `name\nbytes` up to the next
/// NUL. A manifest may name only the files given (nothing else on the machine is read).
pub fn case(data: &[u8]) {
    let Some((&select, rest)) = data.split_first() else { return };
    let mut pieces = rest.split(|&b| b == 0);
    let manifest = pieces.next().unwrap_or_default();
    let mut files: Vec<(String, &[u8])> = Vec::new();
    for piece in pieces.take(8) {
        let (name, body) = match memchr::memchr(b'\n', piece) {
            Some(newline) => (&piece[..newline], &piece[newline + 1..]),
            None => (piece, &[][..]),
        };
        let name = String::from_utf8_lossy(name).into_owned();
        let plain = !name.is_empty()
            && name.len() <= 64
            && !name.starts_with('.')
            && name != crate::config::MANIFEST
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
        if plain && files.iter().all(|(known, _)| *known != name) {
            files.push((name, body));
        }
    }
    let Ok(manifest_text) = std::str::from_utf8(manifest) else { return };
    if !names_only(manifest_text, &files) {
        return;
    }
    let dir = scratch("case");
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let _ = std::fs::remove_file(entry.path());
    }
    std::fs::write(dir.join(crate::config::MANIFEST), manifest).expect("the manifest written");
    for (name, body) in &files {
        std::fs::write(dir.join(name), body).expect("a case file written");
    }
    let view = match select % 3 {
        0 => crate::model::report::View::Timeline,
        1 => crate::model::report::View::Analyze,
        _ => crate::model::report::View::Check(crate::model::Severity::Warning),
    };
    let args = crate::cli::CaseArgs {
        case: Some(dir.clone()),
        formats: vec![crate::cli::Output::stdout("json")],
        ..Default::default()
    };
    let config = match crate::config::Config::build(&args) {
        Ok(config) => config,
        Err(error) => {
            check_error(&error, &dir.join(crate::config::MANIFEST), None);
            return;
        }
    };
    let report = match crate::build_report(&config, view) {
        Ok(report) => report,
        Err(error) => {
            assert!(!error.to_string().is_empty(), "an empty message");
            return;
        }
    };
    check_report(&report);
    for renderer in crate::render::RENDERERS {
        if renderer.refuses(view).is_some() {
            continue;
        }
        let mut out = Vec::new();
        renderer.render(&report, &mut out).unwrap_or_else(|e| panic!("{} cannot write: {e}", renderer.name()));
        let text = String::from_utf8(out).unwrap_or_else(|_| panic!("{} wrote invalid UTF-8", renderer.name()));
        check_rendered(renderer.name(), &text);
    }
}

/// `leasetrace init` on a folder of fuzzed files: up to 8 files, each `NAME\nBYTES`, NUL-separated.
/// A name is any bytes but `/` (which becomes `_`), raw or written `\n`, `\r`, `\t`, `\xNN` or
/// `\\` (`fuzz_name`): a line break, an escape sequence, a bidi override, bytes that are not
/// UTF-8, in a seed that stays readable. No panic; when init writes a manifest, it parses as TOML
/// (also with any proposed `tz` line uncommented), names no capture record, and every source it
/// names is one of the files written, directly in the folder; neither the manifest nor init's
/// report hands a terminal a control or invisible character (`terminal::is_hidden`).
pub fn init(data: &[u8]) {
    use std::os::unix::ffi::OsStrExt as _;
    let mut names: Vec<Vec<u8>> = Vec::new();
    let dir = scratch("init");
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let _ = std::fs::remove_file(entry.path());
    }
    for piece in data.split(|&b| b == 0).take(8) {
        let (name, body) = match memchr::memchr(b'\n', piece) {
            Some(newline) => (&piece[..newline], &piece[newline + 1..]),
            None => (piece, &[][..]),
        };
        let name = fuzz_name(name);
        if name.is_empty() || name == b"." || name == b".." || names.contains(&name) {
            continue;
        }
        std::fs::write(dir.join(std::ffi::OsStr::from_bytes(&name)), body).expect("a fuzzed file written");
        names.push(name);
    }
    let hidden = |text: &str| text.chars().find(|&c| c != '\n' && crate::terminal::is_hidden(c));
    let report = match crate::init::run(&dir, true, &crate::init::Choices::default()) {
        Ok(report) => report,
        Err(error) => {
            let message = error.to_string();
            assert!(!message.is_empty(), "an empty message");
            assert_eq!(hidden(&crate::terminal::visible_lines(&message)), None, "an error printed raw");
            return;
        }
    };
    assert_eq!(hidden(&report), None, "init's report would control the terminal:\n{report}");
    let manifest =
        std::fs::read_to_string(dir.join(crate::config::MANIFEST)).expect("init wrote its manifest, as UTF-8");
    assert_eq!(hidden(&manifest), None, "the manifest holds a raw control character:\n{manifest}");
    let table: toml::Table = manifest.parse().unwrap_or_else(|e| panic!("init wrote invalid TOML ({e}):\n{manifest}"));
    assert!(!table.contains_key("capture"), "init named a capture record");
    let sources = table.get("sources").and_then(toml::Value::as_array).cloned().unwrap_or_default();
    for source in &sources {
        let path = source.get("path").and_then(toml::Value::as_str);
        let path = path.unwrap_or_else(|| panic!("a source without a path:\n{manifest}"));
        assert!(
            names.iter().any(|name| name == path.as_bytes()),
            "the manifest names {path:?}, which is not a file of the folder:\n{manifest}"
        );
        let parts: Vec<_> = Path::new(path).components().collect();
        assert!(
            matches!(parts.as_slice(), [std::path::Component::Normal(_)]) && dir.join(path).is_file(),
            "{path:?} is not a file directly in the folder"
        );
    }
    // Each proposed zone, uncommented, keeps the manifest valid.
    for line in manifest.lines().filter(|l| l.starts_with("# tz = \"") && !l.contains("...")) {
        let one = manifest.replacen(line, &line[2..], 1);
        assert!(one.parse::<toml::Table>().is_ok(), "uncommenting {line:?} breaks the manifest");
    }
}

/// A fuzzed file name (`init`): `\n`, `\r`, `\t`, `\xNN` and `\\` decoded, then made one the file
/// system takes (no `/` or NUL: `_`; at most 200 bytes).
fn fuzz_name(raw: &[u8]) -> Vec<u8> {
    let mut name = Vec::with_capacity(raw.len());
    let mut at = 0;
    while at < raw.len() {
        let (byte, used) = match (raw[at], raw.get(at + 1)) {
            (b'\\', Some(b'n')) => (b'\n', 2),
            (b'\\', Some(b'r')) => (b'\r', 2),
            (b'\\', Some(b't')) => (b'\t', 2),
            (b'\\', Some(b'\\')) => (b'\\', 2),
            (b'\\', Some(b'x')) => match raw.get(at + 2..at + 4).and_then(|hex| std::str::from_utf8(hex).ok()) {
                Some(hex) => u8::from_str_radix(hex, 16).map_or((b'\\', 1), |byte| (byte, 4)),
                None => (b'\\', 1),
            },
            (byte, _) => (byte, 1),
        };
        name.push(if byte == b'/' || byte == 0 { b'_' } else { byte });
        at += used;
    }
    name.truncate(200);
    name
}

/// Whether every path of the manifest (its sources' and its capture record's) is one of `files`
/// (a manifest that fails to parse passes: `Config::build` refuses it before reading anything).
/// `Config::build` holds them to the case folder too; this keeps the fuzzer from even trying.
fn names_only(manifest: &str, files: &[(String, &[u8])]) -> bool {
    let Ok(table) = manifest.parse::<toml::Table>() else { return true };
    let given = |path: &str| files.iter().any(|(name, _)| name == path);
    if let Some(toml::Value::String(capture)) = table.get("capture")
        && !given(capture)
    {
        return false;
    }
    let Some(sources) = table.get("sources") else { return true };
    let Some(sources) = sources.as_array() else { return true };
    sources.iter().all(|source| match source.get("path") {
        Some(toml::Value::String(path)) => given(path),
        _ => true,
    })
}

/// The report's own invariants: every input accounted, every event on a line of its input.
pub fn check_report(report: &crate::model::Report) {
    for input in &report.inputs {
        if input.kind != "bullmq-params" {
            check_account(input);
        }
    }
    for (_, event) in report.timeline.ids() {
        let origin = event.origin();
        let input = &report.inputs[usize::from(origin.source)];
        assert!(
            (1..=input.lines).contains(&u64::from(origin.line)),
            "an event on line {} of {} ({} lines)",
            origin.line,
            input.path,
            input.lines
        );
    }
}

/// What a renderer wrote is what its format promises: JSON and SARIF parse (SARIF 2.1.0 with
/// runs), JSON Lines parse line by line, Markdown tables have as many cells in every row, and no
/// human format hands a terminal a control or invisible character (`terminal::is_hidden`) from
/// the case: only its own line ends.
pub fn check_rendered(format: &str, text: &str) {
    if matches!(format, "table" | "markdown" | "github" | "mermaid" | "svg" | "html" | "concise" | "junit") {
        let hidden = text.chars().find(|&c| c != '\n' && crate::terminal::is_hidden(c));
        assert!(hidden.is_none(), "{format} wrote {hidden:?}, which would control a terminal");
    }
    match format {
        "json" => {
            let value: serde_json::Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("json: {e}"));
            for input in value["inputs"].as_array().into_iter().flatten() {
                if input["kind"] == "bullmq-params" {
                    continue;
                }
                let count = |key: &str| input[key].as_u64().unwrap_or(0);
                assert_eq!(count("lines"), count("used") + count("ignored") + count("rejected"), "json input account");
            }
        }
        "sarif" => {
            let value: serde_json::Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("sarif: {e}"));
            assert_eq!(value["version"], "2.1.0", "sarif version");
            assert!(value["runs"].is_array(), "sarif runs");
            for result in value["runs"][0]["results"].as_array().into_iter().flatten() {
                for location in result["locations"].as_array().into_iter().flatten() {
                    let line = &location["physicalLocation"]["region"]["startLine"];
                    assert!(line.is_null() || line.as_u64().is_some_and(|l| l >= 1), "sarif startLine {line}");
                }
            }
        }
        "html" => {
            // The page's own script is its only one: no text of the case opened or closed another.
            assert_eq!(text.matches("<script").count(), 1, "html: a script element made of the input");
            assert_eq!(text.matches("</script").count(), 1, "html: a script ended by the input");
        }
        "jsonl" | "timesketch" => {
            for line in text.lines().filter(|line| !line.is_empty()) {
                serde_json::from_str::<serde_json::Value>(line).unwrap_or_else(|e| panic!("{format}: {e}: {line}"));
            }
        }
        "gitlab" => {
            let value: serde_json::Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("gitlab: {e}"));
            for issue in value.as_array().expect("gitlab: an array of issues") {
                assert!(issue["location"]["lines"]["begin"].as_u64().is_some_and(|l| l >= 1), "gitlab line {issue}");
                assert!(issue["fingerprint"].is_string() && issue["check_name"].is_string(), "gitlab fields {issue}");
            }
        }
        "junit" => {
            // One element per finding, opened and closed by the renderer alone: no text of the
            // case made one.
            assert_eq!(
                text.matches("<testcase ").count(),
                text.matches("</testcase>").count() + text.matches(r#"name="no finding"/>"#).count(),
                "junit: a test case made of the input"
            );
            assert_eq!(text.matches("<testsuite ").count(), 1, "junit: a suite made of the input");
        }
        "concise" => {
            // One line per warning and finding and the last line: a line break in the input adds none.
            assert!(text.lines().all(|line| !line.is_empty()), "concise: an empty line");
        }
        "markdown" => check_markdown_tables(text),
        "svg" => assert!(text.trim_end().ends_with("</svg>"), "svg ends with </svg>"),
        _ => {}
    }
}

/// Every GitHub-flavoured table in `text` (a run of lines starting with `|`, outside fenced
/// code) has the same number of cells in each row: an unescaped `|` in a cell would add one.
pub fn check_markdown_tables(text: &str) {
    let mut fenced = false;
    let mut table: Option<(usize, &str)> = None;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            table = None;
            continue;
        }
        if fenced || !line.starts_with('|') {
            table = None;
            continue;
        }
        let cells = cell_separators(line);
        match table {
            None => table = Some((cells, line)),
            Some((expected, first)) => {
                assert_eq!(cells, expected, "a Markdown row with another number of cells:\n{first}\n{line}");
            }
        }
    }
}

/// The `|` that separate cells: those not escaped by a backslash.
fn cell_separators(line: &str) -> usize {
    let mut count = 0;
    let mut escaped = false;
    for c in line.chars() {
        match c {
            '\\' if !escaped => escaped = true,
            '|' if !escaped => count += 1,
            _ => escaped = false,
        }
        if c != '\\' {
            escaped = false;
        }
    }
    count
}

/// What one fuzzed reply may hold, by the selector's top bits: capture's ceilings made small, so
/// that the fuzzer reaches them.
const REPLY_CEILINGS: [u64; 4] = [64 << 10, 1 << 10, 100, 4 << 10];
/// The buffer the replies are read through, by the selector's middle bits: a line or a bulk
/// string split over many reads, as a slow socket splits them.
const READ_BUFFERS: [usize; 4] = [1 << 16, 1, 3, 64];
/// The longest record written, in the target.
const RECORD_CEILING: u64 = 2 << 10;

/// Redis replies as `capture` reads them: one selector byte (the command whose reply it is, in
/// its low 4 bits; a read buffer and a ceiling in the others), then the server's bytes. Up to 4
/// replies are read (`capture::resp`), each within its ceiling, each shaped as the command's
/// reply (`capture::shape`), and the records made of them written within `RECORD_CEILING`
/// (`capture::out::write_record`). No panic; what a reply holds is within its ceiling; every
/// error a message of one line and less than 4 KiB once made visible; every record written is one
/// line of JSON that reads back as the record, and one too long is refused with its size; a
/// name that came in a reply is a manifest that TOML reads back.
pub fn capture_reply(data: &[u8]) {
    use crate::capture::resp;
    let (&select, body) = data.split_first().unwrap_or((&0, &[]));
    let ceiling = REPLY_CEILINGS[usize::from(select >> 6)];
    let mut input = std::io::BufReader::with_capacity(READ_BUFFERS[usize::from(select >> 4 & 3)], body);
    for _ in 0..4 {
        let reply = match resp::read(&mut input, ceiling) {
            Ok(reply) => reply,
            Err(error) => {
                check_capture_message(&error.to_string());
                return;
            }
        };
        assert!(reply.held() <= ceiling, "a reply holding {} bytes read within {ceiling}", reply.held());
        if let Err(wrong) = capture_shape(select & 0x0f, reply) {
            check_capture_message(&wrong.0);
        }
        if input.fill_buf().map_or(true, <[u8]>::is_empty) {
            return;
        }
    }
}

/// `capture --postgres`'s reading of a hostile server: a selector byte (a message ceiling of
/// 64 KiB, 1 KiB, 100 bytes or 4 KiB; a read buffer of 64 KiB, 1, 3 or 64 bytes), then the
/// server's bytes, read as up to 8 messages as `capture::postgres::wire` reads them (the length
/// checked before the body, `postgres-protocol`'s parse), each taken apart as capture takes it
/// (rows, columns, errors, parameters, SASL mechanisms).
pub fn capture_pg_reply(data: &[u8]) {
    let (&select, body) = data.split_first().unwrap_or((&0, &[]));
    let ceiling = REPLY_CEILINGS[usize::from(select >> 6)];
    let mut input = std::io::BufReader::with_capacity(READ_BUFFERS[usize::from(select >> 4 & 3)], body);
    for _ in 0..8 {
        match crate::capture::postgres::wire::digest(&mut input, ceiling) {
            // What a message holds was read within the ceiling: its text cannot be larger.
            Ok(text) => assert!(text.len() as u64 <= 8 * ceiling + 4096, "{} bytes from one message", text.len()),
            Err(error) => {
                check_capture_message(&error);
                return;
            }
        }
        if input.fill_buf().map_or(true, <[u8]>::is_empty) {
            return;
        }
    }
}

/// Shapes `reply` as the reply of the command `which` chooses, and writes what capture would.
fn capture_shape(which: u8, reply: crate::capture::resp::Reply) -> crate::capture::shape::Shaped<()> {
    use crate::capture::shape;
    let mut lossy = false;
    match which {
        0 => {
            shape::time(reply)?;
        }
        1 => check_manifest(&shape::type_name(reply)?),
        2 => {
            let (cursor, keys) = shape::scan(reply, &mut lossy)?;
            assert!(cursor.bytes().all(|b| b.is_ascii_digit()) && !cursor.is_empty(), "cursor {cursor:?}");
            for key in keys {
                check_visible(&key);
            }
        }
        3 => {
            for line in shape::texts(reply, "an array of log lines", &mut lossy)? {
                check_record(&serde_json::json!({"key": "bull:q:1:logs", "job_id": "1", "lines": [line]}));
            }
        }
        4 => {
            shape::scored(reply, &mut lossy)?;
        }
        5 => {
            let fields = shape::pairs(reply, "a hash's fields and values", &mut lossy)?;
            if let Some((name, _)) = fields.first() {
                check_manifest(name);
            }
            check_record(&crate::capture::job_record("bull:q:1", "1", "waiting", fields));
        }
        6 => {
            for entry in shape::stream_page(reply)? {
                assert!(crate::capture::id_order(&entry.id).is_some(), "an id that is no stream id: {:?}", entry.id);
                check_record(&entry.into_record());
            }
        }
        7 => {
            shape::stream_info(reply)?;
        }
        8 => {
            if let Some(text) = shape::optional_text(reply, "a text or nil", &mut lossy)? {
                check_manifest(&text);
            }
        }
        _ => {
            shape::int(&reply, "an integer")?;
        }
    }
    Ok(())
}

/// A record within the ceiling is one line of JSON that reads back as it; a longer one is
/// refused with its whole size, and no more than the ceiling is written.
fn check_record(record: &serde_json::Value) {
    let mut out = Vec::new();
    match crate::capture::out::write_record(&mut out, record, RECORD_CEILING) {
        Ok(()) => {
            assert!(out.len() as u64 <= RECORD_CEILING, "a record of {} bytes written", out.len());
            assert_eq!(memchr::memchr(b'\n', &out), Some(out.len() - 1), "one line, ended");
            let back: serde_json::Value = serde_json::from_slice(&out).expect("a record that is JSON");
            assert_eq!(&back, record, "the record reads back as it was");
        }
        Err(crate::capture::out::RecordError::TooLong(size)) => {
            assert!(size > RECORD_CEILING, "refused at {size} bytes");
            assert_eq!(out.len() as u64, RECORD_CEILING, "no more than the ceiling written");
            assert_eq!(size, serde_json::to_vec(record).unwrap().len() as u64 + 1, "its whole size said");
        }
        Err(crate::capture::out::RecordError::Io(error)) => panic!("writing to memory failed: {error}"),
    }
}

/// A name from the server, as a queue's in the manifest: TOML reads it back, and no control
/// or hidden character is written, in a value or a comment.
fn check_manifest(name: &str) {
    use crate::capture::escape;
    let text = crate::capture::manifest(name, name, "redis://h:1/0", "2026-12-02T00:00:00Z", None);
    let parsed: toml::Value = toml::from_str(&text).unwrap_or_else(|e| panic!("{name:?}: {e}\n{text}"));
    assert_eq!(parsed["sources"][0]["queue"].as_str(), Some(name), "{text}");
    assert!(!text.chars().any(|c| (c.is_control() && c != '\n') || escape::hidden(c)), "{text}");
}

/// A message as capture prints it: one line, short, nothing a terminal acts on.
fn check_capture_message(message: &str) {
    let shown = check_visible(message);
    assert!(shown.len() < 4096, "a message of {} bytes: it quotes too much", shown.len());
}

/// A server's text made visible holds nothing a terminal acts on, and no line end.
fn check_visible(text: &str) -> String {
    use crate::capture::escape;
    let shown = escape::visible(text);
    assert!(!shown.chars().any(|c| c.is_control() || escape::hidden(c)), "{shown:?}");
    shown
}

#[cfg(test)]
mod tests {
    #[test]
    fn markdown_tables_with_an_unescaped_bar_in_a_cell_are_unbalanced() {
        super::check_markdown_tables("| a | b |\n|---|---|\n| 1 \\| 2 | 3 |\n");
        let unbalanced = std::panic::catch_unwind(|| super::check_markdown_tables("| a | b |\n| 1 | 2 | 3 |\n"));
        assert!(unbalanced.is_err());
    }

    #[test]
    fn physical_lines_count_every_line_end_and_an_unterminated_last_line() {
        assert_eq!(super::physical_lines(b""), 0);
        assert_eq!(super::physical_lines(b"a\r\nb\rc\nd"), 4);
        assert_eq!(super::physical_lines(b"\xef\xbb\xbfa\n"), 1);
    }

    #[test]
    fn years_written_reads_four_digit_years_and_epoch_numbers() {
        let years = super::years_written(b"2026-10-07 x 1759796580000 12345");
        assert!(years.contains(&2026));
        assert_eq!(years.iter().filter(|&&y| y == 2025).count(), 1, "{years:?}");
    }

    #[test]
    fn the_capture_reply_seeds_are_the_replies_they_are_named_after() {
        use crate::capture::{resp, shape};
        let seed = |name: &str| {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/capture_reply").join(name);
            let data = std::fs::read(&path).unwrap();
            resp::read(&mut &data[1..], 64 << 10).unwrap_or_else(|e| panic!("{name}: {e}"))
        };
        let page = shape::stream_page(seed("xrange-page")).unwrap();
        assert_eq!(page.len(), 4);
        assert_eq!(page[2].fields[2].1, "{\"runId\":\"run-174624-a\",\"item\":\"PR-4401\"}");
        let mut lossy = false;
        let hash = shape::pairs(seed("job-hash"), "a hash", &mut lossy).unwrap();
        assert!(hash.iter().any(|(k, v)| k == "timestamp" && v == "1796028384203"), "{hash:?}");
        assert!(shape::stream_info(seed("xinfo-stream")).unwrap()["length"] == 4);
        assert_eq!(shape::time(seed("time")).unwrap(), 1_796_028_391_000_123);
    }
}
