//! NestJS logs as the default ConsoleLogger writes them.
//!
//! `packages/common/services/console-logger.service.ts` (NestJS 12.5.1; 9 to 11 write the same line
//! minus the params) builds each line as
//! `[Nest] <pid>  - <date> <LEVEL padded to 7> [<Context>] <message>[ <params>][ +<n>ms]`:
//! `[Nest] 41877  - 10/07/2026, 9:33:00 AM     LOG [BullWorker] job active queue=pr-review id=7`.
//! The date comes from `Intl.DateTimeFormat(undefined, {...})`: the process's default locale and
//! time zone, whole seconds, no offset. Only the en-US form is read (the default when LANG is
//! unset or C, as in the official Node images); any other locale is an error naming the line,
//! and the source's declared zone places the time. Levels: LOG, ERROR, WARN, DEBUG, VERBOSE,
//! FATAL. The `[Context] ` part is absent when no context was given, ` +12ms` follows when the
//! logger has `timestamp: true`, and NestJS 12 prints plain-object arguments after the message
//! as `util.inspect` output (`{ jobId: '7' }`), whose top-level keys fill event fields like JSON
//! keys do. Colours are on unless NO_COLOR is set, even when the output goes to a file, so ANSI
//! colour codes are removed first.
//!
//! Stack traces (`error(message, stack)` writes the stack on the following lines) and objects
//! printed across several lines do not start with `[Nest]`: they are continuations. The message
//! after the context is what the log rules classify; the pid is the worker.

use std::borrow::Cow;
use std::io::BufRead;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::model::{Channel, Event, InputSummary, Origin};
use crate::time::fold::{LineOrder, Placed};
use crate::time::{self, Stamp};

use crate::ingest::io::lines::Lines;
use crate::ingest::log::fields::Classified;
use crate::ingest::log::rules::RuleSet;
use crate::ingest::log::structured::{Entry, emit, error_text, json_fields, placed_at};
use crate::ingest::log::worker_settings::{Settled, parse_text, settle};
use crate::ingest::{EventFormat, SourceKind, SourceSpec};

pub struct NestJs;

const PREFIX: &str = "[Nest] ";
const LEVELS: &[&str] = &["LOG", "ERROR", "WARN", "DEBUG", "VERBOSE", "FATAL"];

impl EventFormat for NestJs {
    fn name(&self) -> &'static str {
        "nestjs"
    }

    fn kind(&self) -> SourceKind {
        SourceKind::Log
    }

    /// None: `.log` belongs to the text format; NestJS lines are recognised by their content.
    fn extensions(&self) -> &'static [&'static str] {
        &[]
    }

    fn sniff(&self, first_line: &str) -> bool {
        strip_ansi(first_line).starts_with(PREFIX)
    }

    fn read(
        &self,
        spec: &SourceSpec,
        source: u16,
        input: Box<dyn BufRead + Send>,
        events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<()> {
        let rules = RuleSet::shared(&spec.rules, spec.builtin_rules, &spec.display_path())?;
        let mut lines = Lines::new(input, spec.max_line_bytes);
        let mut stamped = 0u64;
        let mut order = spec.line_order();
        // The time, pid and placement of the last `[Nest]` line: a continuation belongs to it.
        let mut last_entry: Option<(Stamp, Option<u32>, Placed)> = None;
        while let Some((line, text)) = lines.next_line(&spec.path, summary)? {
            summary.lines += 1;
            if text.trim().is_empty() {
                summary.ignore("blank");
                continue;
            }
            let clean = strip_ansi(text);
            let Some(rest) = clean.strip_prefix(PREFIX) else {
                continuation(spec, source, (line, &clean), last_entry, order.as_mut(), events, summary)?;
                continue;
            };
            let header = parse_line(rest).map_err(|reason| Error::input(&spec.path, Some(line), reason))?;
            stamped += 1;
            let mut fields = json_fields(&header.params);
            if fields.worker.is_none() {
                fields.worker = Some(header.pid.to_string());
            }
            let entry = Entry {
                line,
                raw: &clean,
                stamp: header.stamp,
                severe: matches!(header.level, "ERROR" | "FATAL"),
                rules_text: header.rules_text,
                message: header.message,
                fields,
                // The whole line: the settings may be in the message or in its params object.
                settings: crate::ingest::log::worker_settings::parse_text(&clean),
                error: error_text(&header.params),
            };
            let placed = emit(spec, source, &rules, entry, order.as_mut(), events, summary)?;
            last_entry = Some((header.stamp, header.pid.parse().ok(), placed));
        }
        spec.finish_order(order, events, summary)?;
        if summary.lines > 0 && stamped == 0 {
            return Err(Error::input(
                &spec.path,
                Some(1),
                "no line starts with '[Nest] ': expected NestJS ConsoleLogger lines like '[Nest] 41877  - 10/07/2026, 9:33:00 AM     LOG [BullWorker] job active'",
            ));
        }
        Ok(())
    }
}

/// A line that does not start with `[Nest]`: a continuation of the entry before it, unless it
/// gives worker settings (`logger.log(options)` prints the object over several lines), which then
/// become an event at the entry's time.
fn continuation(
    spec: &SourceSpec,
    source: u16,
    (line, text): (u64, &str),
    entry: Option<(Stamp, Option<u32>, Placed)>,
    order: Option<&mut LineOrder>,
    events: &mut Vec<Event>,
    summary: &mut InputSummary,
) -> Result<()> {
    let settings = match settle(parse_text(text), true) {
        Settled::Nothing => {
            summary.ignore("continuation");
            return Ok(());
        }
        Settled::Reject(reason) => {
            summary.reject(line, reason);
            return Ok(());
        }
        Settled::Event(settings) => settings,
    };
    let Some((stamp, pid, placed)) = entry else {
        summary.reject(
            line,
            "worker settings on a continuation line with no [Nest] line before it: log the settings on the entry's own line",
        );
        return Ok(());
    };
    if matches!(stamp, Stamp::Local(_)) && spec.tz.is_none() {
        return Err(Error::input(&spec.path, Some(line), time::ZoneProblem::Undeclared.explain(&spec.tz_fix)));
    }
    let Some(at) = placed_at(spec, line, placed, stamp, summary)? else { return Ok(()) };
    let origin = Origin { channel: Channel::Log, source, line: crate::ingest::line_of(spec, line)? };
    let fields = Classified { worker: pid.map(|pid| pid.to_string()), ..Classified::default() };
    events.push(crate::ingest::log::worker_settings::event(at, origin, settings, &fields));
    // Its entry's time: moved with the entry's events if the entry's pass turns out the second.
    if let (Placed::In { pending: true, .. }, Some(order)) = (placed, order) {
        order.hold(events.len() - 1);
    }
    summary.used();
    summary.texts.keep(origin.line, text);
    Ok(())
}

/// A `[Nest]` line as this reader reads it (for `init`, which proposes rules on what the rules
/// will see): its time, the text the rules classify (level, context and message, without the
/// params and the elapsed time), the ids and names of its params, and the error they carry.
pub fn read_line(text: &str) -> Option<(Stamp, String, Classified, Option<String>)> {
    let clean = strip_ansi(text);
    let header = parse_line(clean.strip_prefix(PREFIX)?).ok()?;
    let mut fields = json_fields(&header.params);
    if fields.worker.is_none() {
        fields.worker = Some(header.pid.to_string());
    }
    Some((header.stamp, header.rules_text.to_string(), fields, error_text(&header.params)))
}

/// A `[Nest]` line after its prefix.
struct Line<'a> {
    pid: &'a str,
    stamp: Stamp,
    level: &'a str,
    /// Level, context and message, as the rules see a text log line after its timestamp.
    rules_text: &'a str,
    /// The message after the context.
    message: &'a str,
    /// Top-level keys of a trailing `util.inspect` object (NestJS 12 params).
    params: Map<String, Value>,
}

fn parse_line(rest: &str) -> std::result::Result<Line<'_>, String> {
    let pid_len = rest.bytes().take_while(u8::is_ascii_digit).count();
    let pid = &rest[..pid_len];
    let after_pid = rest[pid_len..].trim_start_matches(' ');
    let date = after_pid.strip_prefix("- ").filter(|_| pid_len > 0).ok_or_else(|| {
        format!(
            "expected '[Nest] <pid>  - <date>' at the start of the line, found '[Nest] {}'",
            rest.chars().take(24).collect::<String>()
        )
    })?;
    let (stamp, used) = time::parse_en_us_datetime(date).map_err(|reason| {
        format!(
            "{reason}. NestJS writes the date in the process's default locale and only the en-US default is read; run the app with LANG unset or en_US.UTF-8, or switch the logger to json: true"
        )
    })?;
    let after_date = date[used..].trim_start_matches(' ');
    let (rules_text, params) = split_params(strip_elapsed(after_date));
    let level_len = rules_text.bytes().take_while(u8::is_ascii_uppercase).count();
    let level = &rules_text[..level_len];
    if !LEVELS.contains(&level) {
        return Err(format!(
            "unknown NestJS log level '{}': expected one of {}",
            rules_text.split(' ').next().unwrap_or_default(),
            LEVELS.join(", ")
        ));
    }
    let mut message = rules_text[level_len..].strip_prefix(' ').unwrap_or(&rules_text[level_len..]);
    if message.starts_with('[')
        && let Some(end) = message.find("] ")
    {
        message = &message[end + 2..];
    } else if message.starts_with('[') && message.ends_with(']') {
        message = "";
    }
    Ok(Line { pid, stamp, level, rules_text, message, params })
}

/// Removes the ` +12ms` that loggers with `timestamp: true` append.
fn strip_elapsed(message: &str) -> &str {
    let Some(head) = message.strip_suffix("ms") else {
        return message;
    };
    let digits = head.bytes().rev().take_while(u8::is_ascii_digit).count();
    let head = &head[..head.len() - digits];
    match head.strip_suffix(" +") {
        Some(message) if digits > 0 => message,
        _ if digits > 0 && head == "+" => "",
        _ => message,
    }
}

/// Splits a trailing `util.inspect` object (`job completed { durationMs: 72496, jobId: '7' }`)
/// from the message and returns its top-level scalar values by key.
fn split_params(message: &str) -> (&str, Map<String, Value>) {
    if !message.ends_with(" }") {
        return (message, Map::new());
    }
    for (start, _) in message.match_indices(" { ") {
        if let Some(params) = inspect_object(&message[start + 1..]).filter(|p| !p.is_empty()) {
            return (&message[..start], params);
        }
    }
    (message, Map::new())
}

/// Parses `{ key: value, ... }` as `util.inspect` prints it on one line; `None` unless the
/// braces balance exactly at the end. Nested objects and arrays are skipped.
fn inspect_object(text: &str) -> Option<Map<String, Value>> {
    let mut params = Map::new();
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut segment_start = 1;
    let mut segments = Vec::new();
    for (at, c) in text.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' | '`' => quote = Some(c),
            '{' | '[' => depth += 1,
            '}' | ']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    if at + 1 != text.len() || c != '}' {
                        return None;
                    }
                    segments.push(&text[segment_start..at]);
                }
            }
            ',' if depth == 1 => {
                segments.push(&text[segment_start..at]);
                segment_start = at + 1;
            }
            _ => {}
        }
    }
    if depth != 0 || quote.is_some() {
        return None;
    }
    for segment in segments {
        let Some((key, value)) = segment.split_once(": ") else {
            continue;
        };
        let key = unquote(key.trim());
        let value = value.trim();
        let value = if value.starts_with(['\'', '"', '`']) {
            Value::String(unquote(value))
        } else if value.starts_with(['{', '[']) {
            continue;
        } else {
            Value::String(value.to_string())
        };
        params.insert(key, value);
    }
    Some(params)
}

fn unquote(text: &str) -> String {
    let mut chars = text.chars();
    match (chars.next(), chars.next_back()) {
        (Some(open @ ('\'' | '"' | '`')), Some(close)) if open == close && text.len() >= 2 => {
            chars.as_str().replace(&format!("\\{open}"), &open.to_string())
        }
        _ => text.to_string(),
    }
}

/// Removes ANSI escape sequences (`ESC [ ... final byte`), as colouring loggers write them.
pub fn strip_ansi(text: &str) -> Cow<'_, str> {
    if memchr::memchr(0x1b, text.as_bytes()).is_none() {
        return Cow::Borrowed(text);
    }
    let mut clean = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if ('\u{40}'..='\u{7e}').contains(&c) {
                    break;
                }
            }
        } else {
            clean.push(c);
        }
    }
    Cow::Owned(clean)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EventKind;
    use std::path::PathBuf;

    fn read(text: &str, tz: Option<chrono_tz::Tz>) -> Result<(Vec<Event>, InputSummary)> {
        let spec = SourceSpec::new(SourceKind::Log, PathBuf::from("nest.log"), tz, "--log-tz".into());
        let mut events = Vec::new();
        let mut summary = InputSummary::new("nest.log", "log", "nestjs", tz);
        NestJs.read(&spec, 0, Box::new(std::io::Cursor::new(text.to_string())), &mut events, &mut summary)?;
        Ok((events, summary))
    }

    const SEOUL: Option<chrono_tz::Tz> = Some(chrono_tz::Asia::Seoul);

    // Written by NestJS 12.5.1 (Node 20.20.2, TZ=Asia/Seoul, NO_COLOR=1, stdout and stderr to one
    // file), as in fixtures/formats/nestjs.log.
    const LOG: &str = "\
[Nest] 41877  - 10/07/2026, 9:29:57 AM     LOG [NestFactory] Starting Nest application...
[Nest] 41877  - 10/07/2026, 9:29:58 AM     LOG [NestApplication] Nest application successfully started +207ms
[Nest] 41877  - 10/07/2026, 9:31:47 AM     LOG [HTTP] GET /api/jobs/active 200 8ms
[Nest] 41877  - 10/07/2026, 9:33:00 AM     LOG [BullWorker] job active queue=pr-review name=pr-review-sweep id=repeat:pr-review-sweep:1791333180000
[Nest] 41877  - 10/07/2026, 9:33:00 AM     LOG [BullWorker] sweep picked candidates active=4
[Nest] 41877  - 10/07/2026, 9:33:09 AM   ERROR [ReviewClient] POST /reviews failed status=502 pr=PR-4412
Error: Request failed with status code 502
    at ReviewClient.post (/app/dist/review-client.js:41:13)
    at async SweepProcessor.process (/app/dist/sweep.processor.js:88:7)

[Nest] 41877  - 10/07/2026, 9:34:12 AM     LOG [BullWorker] job completed queue=pr-review name=pr-review-sweep id=repeat:pr-review-sweep:1791333180000 { durationMs: 72496 }
[Nest] 41877  - 10/07/2026, 9:35:30 AM VERBOSE [BullWorker] lock renewed key=bull:pr-review:stalled-check
";

    #[test]
    fn every_line_is_accounted_for() {
        let (events, summary) = read(LOG, SEOUL).unwrap();
        let kinds: Vec<EventKind> = events.iter().map(|e| e.kind).collect();
        assert_eq!(kinds, [EventKind::ProcessStart, EventKind::JobActive, EventKind::Error, EventKind::JobCompleted]);
        assert_eq!((summary.lines, summary.used, summary.ignored, summary.rejected), (12, 4, 8, 0));
        assert_eq!(summary.ignored_by_reason["continuation"], 3);
        assert_eq!(summary.ignored_by_reason["noise"], 4);
        assert_eq!(summary.ignored_by_reason["blank"], 1);
        let active = &events[1];
        assert_eq!(active.at().to_rfc3339(), "2026-10-07T00:33:00+00:00");
        assert_eq!(active.job_id.as_deref(), Some("repeat:pr-review-sweep:1791333180000"));
        assert_eq!(active.queue.as_deref(), Some("pr-review"));
        assert_eq!(active.job_name.as_deref(), Some("pr-review-sweep"));
        assert_eq!(active.worker.as_deref(), Some("41877"));
        assert_eq!(active.origin().line, 4);
        assert_eq!(events[2].detail_str(), Some("POST /reviews failed status=502 pr=PR-4412"));
        assert_eq!(events[2].item.as_deref(), Some("PR-4412"));
        assert_eq!(events[0].at().to_rfc3339(), "2026-10-07T00:29:58+00:00");
    }

    #[test]
    fn worker_settings_in_the_message_in_params_and_in_an_object_printed_over_lines() {
        // NestJS 12.5.1 ConsoleLogger (TZ=Asia/Seoul, NO_COLOR=1): `log('worker started', { queue,
        // ...opts })`, the options in the message, and `log(opts)`, printed over several lines.
        let text = "\
[Nest] 41877  - 10/07/2026, 9:29:58 AM     LOG [BullWorker] worker started { queue: 'pr-review', concurrency: 2, lockDuration: 12000, stalledInterval: 5000, maxStalledCount: 1 }
[Nest] 41877  - 10/07/2026, 9:29:58 AM     LOG [BullWorker] worker started lockDuration=12000ms stalledInterval=5000ms
[Nest] 41877  - 10/07/2026, 9:29:58 AM     LOG [BullWorker] Object(4) {
  concurrency: 2,
  lockDuration: 12000,
  stalledInterval: 5000,
  maxStalledCount: 1
}
";
        let (events, summary) = read(text, SEOUL).unwrap();
        assert!(events.iter().all(|e| e.kind == EventKind::WorkerSettings));
        assert!(events.iter().all(|e| e.worker.as_deref() == Some("41877")));
        assert!(events.iter().all(|e| e.at().to_rfc3339() == "2026-10-07T00:29:58+00:00"));
        let lines: Vec<u32> = events.iter().map(|e| e.origin().line).collect();
        assert_eq!(lines, [1, 2, 5, 6, 7]);
        assert_eq!(events[0].settings().unwrap().max_stalled_count, Some(1));
        assert_eq!(events[1].settings().unwrap().stalled_interval, Some(5_000));
        assert_eq!((summary.lines, summary.used, summary.ignored), (8, 5, 3));
        assert_eq!(summary.ignored_by_reason["noise"], 1);
        assert_eq!(summary.ignored_by_reason["continuation"], 2);
    }

    #[test]
    fn a_log_across_the_fall_back_is_placed_by_its_order_to_the_second() {
        // NestJS 12.5.1 under TZ=America/Los_Angeles (fixtures/formats/nestjs-dst.log): two sweeps
        // activated at "1:30:00 AM", one in PDT and one in PST.
        let text = include_str!("../../../fixtures/formats/nestjs-dst.log");
        let (events, summary) = read(text, Some(chrono_tz::America::Los_Angeles)).unwrap();
        let placed: Vec<(EventKind, String)> =
            events.iter().map(|e| (e.kind, crate::time::format_rfc3339(e.at()))).collect();
        assert_eq!(
            placed,
            [
                (EventKind::JobActive, "2026-11-01T08:30:00.000Z".to_string()),
                (EventKind::JobCompleted, "2026-11-01T08:31:12.000Z".to_string()),
                (EventKind::JobActive, "2026-11-01T09:30:00.000Z".to_string()),
                (EventKind::JobFailed, "2026-11-01T09:30:03.000Z".to_string()),
            ]
        );
        assert_eq!(
            crate::time::fold::notes("nest.log", crate::time::Ambiguous::Order, &summary.folds),
            [
                "nest.log: 6 lines in the repeated hour 01:00–02:00 PDT/PST on 2026-11-01 (America/Los_Angeles) resolved by line order: 3 as PDT (first pass, lines 4–6), 3 as PST (second pass, lines 7–9)"
            ]
        );
    }

    #[test]
    fn colours_params_and_missing_context() {
        // NestJS 12.5.1 without NO_COLOR, written to a file: colour codes stay in.
        // `new Logger('BullWorker').log('job active', { jobId, queue, attempt: 1, opts: { lifo: false } })`:
        let coloured = "\u{1b}[32m[Nest] 41877  - \u{1b}[39m10/07/2026, 9:33:00 AM \u{1b}[32m    LOG\u{1b}[39m \u{1b}[38;5;3m[BullWorker] \u{1b}[39m\u{1b}[32mjob active\u{1b}[39m { jobId: \u{1b}[32m'repeat:pr-review-sweep:1791333180000'\u{1b}[39m, queue: \u{1b}[32m'pr-review'\u{1b}[39m, attempt: \u{1b}[33m1\u{1b}[39m, opts: { lifo: \u{1b}[33mfalse\u{1b}[39m } }";
        assert!(NestJs.sniff(coloured));
        // `Logger.fatal('Redis connection lost: ECONNRESET')`: no context.
        let no_context = "\u{1b}[1m[Nest] 41877  - \u{1b}[0m10/07/2026, 9:33:00 AM \u{1b}[1m  FATAL\u{1b}[0m \u{1b}[1mRedis connection lost: ECONNRESET\u{1b}[0m";
        let (events, summary) = read(&format!("{coloured}\n{no_context}\n"), SEOUL).unwrap();
        assert_eq!(events[0].kind, EventKind::JobActive);
        assert_eq!(events[0].job_id.as_deref(), Some("repeat:pr-review-sweep:1791333180000"));
        assert_eq!(events[0].queue.as_deref(), Some("pr-review"));
        let Some(raw) = summary.texts.kept(events[0].origin().line) else { panic!("raw text is kept") };
        assert!(!raw.contains('\u{1b}'));
        assert_eq!(events[1].kind, EventKind::Error);
        assert_eq!(events[1].detail_str(), Some("Redis connection lost: ECONNRESET"));
    }

    #[test]
    fn the_date_needs_the_declared_zone() {
        let error = read(LOG, None).unwrap_err().to_string();
        assert!(error.starts_with("nest.log:1: timestamp has no UTC offset"), "{error}");
        assert!(error.contains("--log-tz"), "{error}");
    }

    #[test]
    fn other_locales_and_levels_are_errors_naming_the_line() {
        // NestJS 12.5.1 run with LANG=de_DE.UTF-8.
        let german = "[Nest] 41877  - 07.10.2026, 09:33:00     LOG [BullWorker] job active id=7";
        let error = read(&format!("{}\n{german}\n", LOG.lines().next().unwrap()), SEOUL).unwrap_err().to_string();
        assert!(error.starts_with("nest.log:2: malformed timestamp '07.10.2026, 09:33:00"), "{error}");
        assert!(error.contains("only the en-US default is read"), "{error}");
        let error = read("[Nest] 41877  - 10/07/2026, 9:33:00 AM    INFO [BullWorker] job active id=7", SEOUL)
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("nest.log:1: unknown NestJS log level 'INFO'"), "{error}");
        let error = read("Error: boom\n    at x (/a.js:1:1)\n", SEOUL).unwrap_err().to_string();
        assert!(error.starts_with("nest.log:1: no line starts with '[Nest] '"), "{error}");
    }

    #[test]
    fn inspect_params_and_elapsed_suffixes() {
        assert_eq!(strip_elapsed("ready +207ms"), "ready");
        assert_eq!(strip_elapsed("GET /healthz 200 8ms"), "GET /healthz 200 8ms");
        let (message, params) = split_params("job done { jobId: '7', note: 'it\\'s, ok', n: 3, nested: { id: 9 } }");
        assert_eq!(message, "job done");
        assert_eq!(params["jobId"], "7");
        assert_eq!(params["note"], "it's, ok");
        assert_eq!(params["n"], "3");
        assert!(!params.contains_key("nested"));
        let (message, params) = split_params("set { a } to { b }");
        assert_eq!(message, "set { a } to { b }");
        assert!(params.is_empty());
    }
}
