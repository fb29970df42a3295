//! pino logs: one JSON object per line, as Node's pino logger writes them.
//!
//! pino's default line (pino 10.4, `lib/time.js` `epochTime`, `pino.js` `messageKey: 'msg'`):
//! `{"level":30,"time":1791333180004,"pid":41877,"hostname":"api-1","jobId":"7","msg":"job active"}`.
//! `time` is epoch milliseconds (`stdTimeFunctions.unixTime`: seconds) or, with
//! `timestamp: pino.stdTimeFunctions.isoTime`, an ISO string in UTC (`"2026-10-07T00:33:00.000Z"`):
//! neither needs a zone; a custom time function that writes a local time needs the declared one.
//! `level` is a number (10 trace ... 60 fatal) or, with `formatters.level`, its label. Errors are
//! serialized as `"err":{"type":"Error","message":"...","stack":"..."}` on the same line.
//!
//! The message (`msg`) is classified by the log rules like a text log line; event fields come from
//! the line's keys first (the names in `rules::FIELD_KEYS`, case-insensitive, dotted paths
//! such as `job.id` walk nested objects, an object value gives its `message`) and then from
//! `key=value` pairs in the message. A line at level error or fatal that no rule classifies is an
//! `error` event. A line that is not a JSON object is an error naming the line; a line without
//! `time` cannot be placed on the timeline and is rejected.
//!
//! The part shared by the structured log formats lives here too: `JsonDialect` and
//! `read_json_lines` (used by winston.rs) and `Entry` and `emit` (used by nestjs.rs).

use std::io::BufRead;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::model::{Channel, Event, EventKind, InputSummary, Origin};
use crate::time::fold::{LineOrder, Placed};
use crate::time::{self, Stamp};

use crate::ingest::io::lines::Lines;
use crate::ingest::log::rules::{Classified, FIELD_KEYS, RuleSet};
use crate::ingest::log::worker_settings::{Settled, settle};
use crate::ingest::{EventFormat, SourceKind, SourceSpec};

pub struct Pino;

/// How pino names things.
pub const PINO: JsonDialect = JsonDialect {
    format: "pino",
    time_key: "time",
    message_key: "msg",
    severe: pino_severe,
    example: r#"{"level":30,"time":1791333180000,"pid":41877,"hostname":"api-1","msg":"job active","jobId":"7"}"#,
};

impl EventFormat for Pino {
    fn name(&self) -> &'static str {
        "pino"
    }

    fn kind(&self) -> SourceKind {
        SourceKind::Log
    }

    /// None: `.log` belongs to the text format; pino lines are recognised by their content.
    fn extensions(&self) -> &'static [&'static str] {
        &[]
    }

    fn sniff(&self, first_line: &str) -> bool {
        sniff_json(first_line, &["level", "time", "msg"], "time")
    }

    fn read(
        &self,
        spec: &SourceSpec,
        source: u16,
        input: Box<dyn BufRead + Send>,
        events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<()> {
        read_json_lines(&PINO, spec, source, input, events, summary)
    }
}

/// Numeric levels 50 (error) and 60 (fatal) and above, or the labels `error` and `fatal`.
fn pino_severe(level: Option<&Value>) -> bool {
    match level {
        Some(Value::Number(number)) => number.as_f64().is_some_and(|n| n >= 50.0),
        Some(Value::String(label)) => label.eq_ignore_ascii_case("error") || label.eq_ignore_ascii_case("fatal"),
        _ => false,
    }
}

// ---- Shared by the structured log formats ------------------------------------------------------

/// What differs between JSON log libraries: key names and what counts as an error level.
pub struct JsonDialect {
    /// The format name, for messages.
    pub format: &'static str,
    pub time_key: &'static str,
    pub message_key: &'static str,
    /// Whether the `level` value is error or worse.
    pub severe: fn(Option<&Value>) -> bool,
    /// A line of this format, for error messages.
    pub example: &'static str,
}

/// Whether a first line is a JSON object with all of `keys` and a number or string at `time_key`.
/// A first line cut short by the sniffing buffer (64 KiB) is judged by whether it shows `level`
/// and `time_key`.
pub fn sniff_json(first_line: &str, keys: &[&str], time_key: &str) -> bool {
    if !first_line.starts_with('{') {
        return false;
    }
    match serde_json::from_str::<Map<String, Value>>(first_line) {
        Ok(object) => {
            keys.iter().all(|key| object.contains_key(*key))
                && matches!(object.get(time_key), Some(Value::Number(_) | Value::String(_)))
        }
        Err(error) if error.is_eof() => {
            ["level", time_key].iter().all(|key| first_line.contains(&format!("\"{key}\":")))
        }
        Err(_) => false,
    }
}

/// Reads JSON log lines: every line is used, ignored (blank, noise) or rejected (no timestamp).
pub fn read_json_lines(
    dialect: &JsonDialect,
    spec: &SourceSpec,
    source: u16,
    input: Box<dyn BufRead + Send>,
    events: &mut Vec<Event>,
    summary: &mut InputSummary,
) -> Result<()> {
    let rules = RuleSet::new(&spec.rules, spec.builtin_rules, &spec.display_path())?;
    let JsonDialect { format, time_key, message_key, example, .. } = dialect;
    let mut lines = Lines::new(input, spec.max_line_bytes);
    let mut stamped = 0u64;
    let mut order = spec.line_order();
    while let Some((line, text)) = lines.next_line(&spec.path, summary)? {
        summary.lines += 1;
        if text.trim().is_empty() {
            summary.ignore("blank");
            continue;
        }
        let object = crate::ingest::io::lines::json_object(
            &spec.path,
            line,
            text,
            &format!("one {format} record per line, like {example}"),
        )?;
        let Some(value) = object.get(*time_key) else {
            summary.reject(
                line,
                format!("no '{time_key}' key: a {format} line without its timestamp cannot be placed on the timeline"),
            );
            continue;
        };
        let stamp = json_stamp(value)
            .map_err(|reason| Error::input(&spec.path, Some(line), format!("key '{time_key}': {reason}")))?;
        stamped += 1;
        let message = match object.get(*message_key) {
            Some(Value::String(text)) => text.clone(),
            Some(Value::Number(number)) => number.to_string(),
            _ => String::new(),
        };
        let entry = Entry {
            line,
            raw: text,
            stamp,
            severe: (dialect.severe)(object.get("level")),
            rules_text: &message,
            message: &message,
            fields: json_fields(&object),
            settings: crate::ingest::log::worker_settings::parse_json_object(&object),
        };
        emit(spec, source, &rules, entry, order.as_mut(), events, summary)?;
    }
    spec.finish_order(order, events, summary)?;
    if stamped == 0 && summary.rejected > 0 {
        return Err(Error::input(
            &spec.path,
            Some(1),
            format!(
                "no line has a '{time_key}' key: expected {format} lines like {example}; is the timestamp turned off or renamed in the logger's options?"
            ),
        ));
    }
    Ok(())
}

/// A JSON timestamp: epoch seconds or milliseconds (number or digits), or ISO 8601 text.
fn json_stamp(value: &Value) -> std::result::Result<Stamp, String> {
    match value {
        Value::Number(number) => time::parse_field(&number.to_string()),
        Value::String(text) => time::parse_field(text),
        other => Err(format!("expected epoch milliseconds or an ISO 8601 string, found {other}")),
    }
}

/// Keys that mean other things too (pino's `name` is the logger's name, `id` is often a request
/// id): taken only when no specific key (`jobName`, `jobId`, ...) is on the line.
const GENERIC_KEYS: &[&str] = &["id", "name"];

/// Event fields from the keys of a structured line (see the module comment).
pub fn json_fields(object: &Map<String, Value>) -> Classified {
    let mut fields = Classified::default();
    for (field, keys) in FIELD_KEYS {
        let specific = keys.iter().filter(|key| !GENERIC_KEYS.contains(key));
        let generic = keys.iter().filter(|key| GENERIC_KEYS.contains(key));
        let value = specific.chain(generic).find_map(|key| lookup(object, key).and_then(field_text));
        *slot(&mut fields, field) = value;
    }
    fields
}

fn lookup<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    let find = |object: &'a Map<String, Value>, key: &str| {
        object.iter().find(|(name, _)| name.eq_ignore_ascii_case(key)).map(|(_, value)| value)
    };
    if let Some(value) = find(object, key) {
        return Some(value);
    }
    let (head, rest) = key.split_once('.')?;
    match find(object, head)? {
        Value::Object(inner) => lookup(inner, rest),
        _ => None,
    }
}

fn field_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) if !text.trim().is_empty() => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Object(inner) => match inner.get("message") {
            Some(Value::String(text)) if !text.trim().is_empty() => Some(text.clone()),
            _ => None,
        },
        _ => None,
    }
}

fn slot<'a>(fields: &'a mut Classified, field: &str) -> &'a mut Option<String> {
    match field {
        "job_id" => &mut fields.job_id,
        "job_name" => &mut fields.job_name,
        "queue" => &mut fields.queue,
        "run_id" => &mut fields.run_id,
        "item" => &mut fields.item,
        "worker" => &mut fields.worker,
        _ => &mut fields.detail,
    }
}

/// One structured log line, before classification.
pub struct Entry<'a> {
    pub line: u64,
    /// The line as written (ANSI colours removed), kept as evidence.
    pub raw: &'a str,
    pub stamp: Stamp,
    /// Logged at error level or worse.
    pub severe: bool,
    /// What the rules classify: the message (pino, winston) or, like a text log line after its
    /// timestamp, level, context and message (NestJS).
    pub rules_text: &'a str,
    /// The message alone: the detail of an error event.
    pub message: &'a str,
    /// Fields the line carries outside its message; they win over `key=value` in the message.
    pub fields: Classified,
    /// The worker settings the line gives, anywhere in it (worker_settings.rs).
    pub settings: crate::ingest::log::worker_settings::Found,
}

/// Classifies one entry and pushes its events (its event, and its worker settings when it gives
/// any), or accounts for it as noise or a rejection. A wall-clock stamp in a source without a
/// declared zone is an error on every line, as in text logs. Returns where the order placed the
/// entry, for the continuation lines after it (see nestjs.rs).
pub fn emit(
    spec: &SourceSpec,
    source: u16,
    rules: &RuleSet,
    entry: Entry<'_>,
    order: Option<&mut LineOrder>,
    events: &mut Vec<Event>,
    summary: &mut InputSummary,
) -> Result<Placed> {
    let line = entry.line;
    if matches!(entry.stamp, Stamp::Local(_)) && spec.tz.is_none() {
        return Err(Error::input(&spec.path, Some(line), time::ZoneProblem::Undeclared.explain(&spec.tz_fix)));
    }
    // Every entry with a local time counts for the order, noise included (see `time::fold`).
    let (placed, order) = match (entry.stamp, order) {
        (Stamp::Local(local), Some(order)) => (order.local(line, local), Some(order)),
        (_, order) => (Placed::Outside, order),
    };
    let mut found = rules.classify(entry.rules_text);
    if found.detail.as_deref() == Some(entry.rules_text.trim()) {
        // The rules' detail of an error is the whole text; the message alone is set below.
        found.detail = None;
    }
    let kind = match found.kind {
        Some(kind) => Some(kind),
        None if entry.severe => Some(EventKind::Error),
        None => None,
    };
    let settings = match settle(entry.settings, kind.is_none()) {
        Settled::Nothing => None,
        Settled::Event(settings) => Some(settings),
        Settled::Reject(reason) => {
            summary.reject(line, reason);
            return Ok(placed);
        }
    };
    if kind.is_none() && settings.is_none() {
        summary.ignore("noise");
        return Ok(placed);
    }
    let Some(at) = placed_at(spec, line, placed, entry.stamp, summary)? else { return Ok(placed) };
    let mut fields = entry.fields;
    for (field, _) in FIELD_KEYS {
        let from_message = match *field {
            "job_id" => &found.job_id,
            "job_name" => &found.job_name,
            "queue" => &found.queue,
            "run_id" => &found.run_id,
            "item" => &found.item,
            "worker" => &found.worker,
            _ => &found.detail,
        };
        let slot = slot(&mut fields, field);
        if slot.is_none() {
            slot.clone_from(from_message);
        }
    }
    let origin = Origin { channel: Channel::Log, source, line: crate::ingest::line_of(spec, line)? };
    let pushed_before = events.len();
    if let Some(settings) = settings {
        events.push(crate::ingest::log::worker_settings::event(at, origin, settings, &fields));
    }
    match kind {
        // A job line without its job is rejected, unless its settings are evidence.
        Some(kind) if kind.name().starts_with("job-") && fields.job_id.is_none() && settings.is_none() => {
            summary.reject(
                line,
                format!(
                    "{} line without a job id (expected a jobId key, id=<job id> in the message or 'job <id> ...')",
                    kind.name()
                ),
            );
            return Ok(placed);
        }
        Some(kind) if kind.name().starts_with("job-") && fields.job_id.is_none() => {}
        Some(kind) => {
            if kind == EventKind::Error && fields.detail.is_none() && !entry.message.trim().is_empty() {
                fields.detail = Some(entry.message.trim().to_string());
            }
            let mut event = Event::new(at, kind, origin);
            fields.fill(&mut event);
            events.push(event);
        }
        None => {}
    }
    summary.used();
    summary.texts.keep(origin.line, entry.raw);
    if let (Placed::In { pending: true, .. }, Some(order)) = (placed, order) {
        for index in pushed_before..events.len() {
            order.hold(index);
        }
    }
    Ok(placed)
}

/// The moment of an entry the order placed at `placed`; `None` when the zone never shows its time
/// (the line is rejected, as in text logs: the others can be placed).
pub fn placed_at(
    spec: &SourceSpec,
    line: u64,
    placed: Placed,
    stamp: Stamp,
    summary: &mut InputSummary,
) -> Result<Option<crate::model::Moment>> {
    let at = match placed {
        Placed::In { at, .. } => time::moment(at),
        Placed::Outside => stamp.to_moment_as(spec.tz, spec.ambiguous),
    };
    match at {
        Ok(at) => Ok(Some(at)),
        Err(problem @ time::ZoneProblem::Skipped(_)) => {
            summary.reject(line, spec.zone_problem(&problem));
            Ok(None)
        }
        Err(problem) => Err(Error::input(&spec.path, Some(line), spec.zone_problem(&problem))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn read(text: &str, tz: Option<chrono_tz::Tz>) -> Result<(Vec<Event>, InputSummary)> {
        let spec = SourceSpec::new(SourceKind::Log, PathBuf::from("api.log"), tz, "tz in [[log]]".into());
        let mut events = Vec::new();
        let mut summary = InputSummary::new("api.log", "log", "pino", tz);
        Pino.read(&spec, 0, Box::new(std::io::Cursor::new(text.to_string())), &mut events, &mut summary)?;
        Ok((events, summary))
    }

    fn counts(summary: &InputSummary) -> (u64, u64, u64, u64) {
        (summary.lines, summary.used, summary.ignored, summary.rejected)
    }

    // Lines written by pino 10.4.0 (`pino({ level: 'debug', base: { pid, hostname: 'api-1' } })`,
    // child loggers with `module`), as in fixtures/formats/pino.log.
    const ACTIVE: &str = r#"{"level":30,"time":1791333180004,"pid":41877,"hostname":"api-1","module":"BullWorker","jobId":"repeat:pr-review-sweep:1791333180000","queue":"pr-review","jobName":"pr-review-sweep","msg":"job active"}"#;
    const DECOY: &str = r#"{"level":30,"time":1791333107160,"pid":41877,"hostname":"api-1","module":"http","req":{"method":"GET","url":"/api/jobs/active"},"res":{"statusCode":200},"responseTime":8,"msg":"request completed"}"#;
    const METRICS: &str = r#"{"level":20,"time":1791333012006,"pid":41877,"hostname":"api-1","active":0,"waiting":0,"failed":0,"completed":0,"msg":"job metrics: active=0 waiting=0 failed=0 completed=0"}"#;
    const ERROR: &str = r#"{"level":50,"time":1791333189552,"pid":41877,"hostname":"api-1","module":"ReviewClient","err":{"type":"Error","message":"Request failed with status code 502","stack":"Error: Request failed with status code 502\n    at ReviewClient.post (/app/dist/review-client.js:41:13)"},"pr":"PR-4412","status":502,"msg":"POST /reviews failed"}"#;
    const FAILED: &str = r#"{"level":40,"time":1791333302900,"pid":41877,"hostname":"api-1","module":"BullWorker","jobId":"repeat:pr-review-sweep:1791333300000","queue":"pr-review","err":{"type":"Error","message":"connect ECONNREFUSED 10.0.3.7:443","stack":"Error: connect ECONNREFUSED 10.0.3.7:443"},"msg":"job failed"}"#;

    #[test]
    fn job_lines_take_ids_from_keys_and_epoch_millis_need_no_zone() {
        let (events, summary) = read(&format!("{ACTIVE}\n{FAILED}\n"), None).unwrap();
        let active = &events[0];
        assert_eq!(active.kind, EventKind::JobActive);
        assert_eq!(active.at().to_rfc3339(), "2026-10-07T00:33:00.004+00:00");
        assert_eq!(active.job_id.as_deref(), Some("repeat:pr-review-sweep:1791333180000"));
        assert_eq!(active.queue.as_deref(), Some("pr-review"));
        assert_eq!(active.job_name.as_deref(), Some("pr-review-sweep"));
        assert_eq!(active.worker.as_deref(), Some("41877"));
        assert_eq!(active.origin().channel, Channel::Log);
        assert_eq!(summary.texts.kept(active.origin().line), Some(ACTIVE));
        assert_eq!(events[1].kind, EventKind::JobFailed);
        assert_eq!(events[1].detail_str(), Some("connect ECONNREFUSED 10.0.3.7:443"));
    }

    #[test]
    fn iso_time_label_levels_and_ids_in_the_message() {
        // pino 10.4.0 with `timestamp: pino.stdTimeFunctions.isoTime` (lib/time.js):
        let iso = r#"{"level":30,"time":"2026-10-07T00:33:00.000Z","pid":41877,"hostname":"vm","jobId":"7","queue":"pr-review","name":"pr-review-sweep","msg":"job active"}"#;
        // ... with `formatters: { level: (label) => ({ level: label }) }`, ids only in the message:
        let label = r#"{"level":"warn","time":1791333180000,"pid":41877,"hostname":"vm","msg":"stalled job 8 queue=pr-review"}"#;
        let (events, summary) = read(&format!("{iso}\n{label}\n"), None).unwrap();
        assert_eq!(counts(&summary), (2, 2, 0, 0));
        assert_eq!(events[0].at().to_rfc3339(), "2026-10-07T00:33:00+00:00");
        assert_eq!(events[0].job_id.as_deref(), Some("7"));
        assert_eq!(events[0].job_name.as_deref(), Some("pr-review-sweep"));
        assert_eq!(events[1].kind, EventKind::JobStalled);
        assert_eq!(events[1].job_id.as_deref(), Some("8"));
        assert_eq!(events[1].queue.as_deref(), Some("pr-review"));
    }

    #[test]
    fn decoys_are_noise_and_unclassified_errors_are_error_events() {
        let (events, summary) = read(&format!("{DECOY}\n{METRICS}\n{ERROR}\n"), None).unwrap();
        assert_eq!(counts(&summary), (3, 1, 2, 0));
        assert_eq!(summary.ignored_by_reason["noise"], 2);
        assert_eq!(events[0].kind, EventKind::Error);
        assert_eq!(events[0].detail_str(), Some("Request failed with status code 502"));
        assert_eq!(events[0].item.as_deref(), Some("PR-4412"));
        // pino 10.4.0 `logger.fatal(new Error('boom'))`: msg is the error's message.
        let fatal = r#"{"level":60,"time":1791333180000,"pid":41877,"hostname":"vm","name":"pr-review-worker","err":{"type":"Error","message":"boom","stack":"Error: boom"},"msg":"boom"}"#;
        let (events, _) = read(fatal, None).unwrap();
        assert_eq!(events[0].kind, EventKind::Error);
        assert_eq!(events[0].detail_str(), Some("boom"));
    }

    #[test]
    fn every_line_is_accounted_for() {
        // pino 10.4.0 `logger.info({ jobId: '7' })` writes no msg; `timestamp: false` writes no time.
        let no_msg = r#"{"level":30,"time":1791333180000,"pid":41877,"hostname":"vm","jobId":"7"}"#;
        let no_time = r#"{"level":30,"pid":41877,"hostname":"vm","msg":"job active","jobId":"9"}"#;
        let no_id = r#"{"level":30,"time":1791333180000,"pid":41877,"msg":"job active"}"#;
        let text = format!("{ACTIVE}\n\n{DECOY}\n{no_msg}\n{no_time}\n{no_id}\n{ERROR}\n");
        let (events, summary) = read(&text, None).unwrap();
        assert_eq!(counts(&summary), (7, 2, 3, 2));
        assert_eq!(summary.lines, summary.used + summary.ignored + summary.rejected);
        assert_eq!(events.len(), 2);
        assert_eq!(summary.ignored_by_reason["blank"], 1);
        assert_eq!(summary.rejections[0].line, 5);
        assert!(summary.rejections[0].reason.starts_with("no 'time' key"), "{}", summary.rejections[0].reason);
        assert_eq!(summary.rejections[1].line, 6);
    }

    #[test]
    fn local_times_need_the_declared_zone() {
        // pino with a custom `timestamp: () => `,"time":"${...}"`` writing local time.
        let local = r#"{"level":30,"time":"2026-10-07 09:33:00.004","pid":41877,"msg":"job active","jobId":"7"}"#;
        let error = read(local, None).unwrap_err().to_string();
        assert!(error.starts_with("api.log:1: timestamp has no UTC offset"), "{error}");
        assert!(error.contains("tz in [[log]]"), "{error}");
        let (events, _) = read(local, Some(chrono_tz::Asia::Seoul)).unwrap();
        assert_eq!(events[0].at().to_rfc3339(), "2026-10-07T00:33:00.004+00:00");
    }

    #[test]
    fn malformed_lines_are_errors_with_their_line() {
        let error = read(&format!("{ACTIVE}\n{{\"level\":30,\"time\":17913\n"), None).unwrap_err().to_string();
        assert!(error.starts_with("api.log:2: not a JSON object"), "{error}");
        assert!(error.contains("expected one pino record per line"), "{error}");
        let error = read(&format!("{ACTIVE}\n{}\n", ACTIVE.replace("1791333180004", "\"soon\"")), None)
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("api.log:2: key 'time': malformed timestamp"), "{error}");
        let error = read(r#"{"level":30,"msg":"job active"}"#, None).unwrap_err().to_string();
        assert!(error.starts_with("api.log:1: no line has a 'time' key"), "{error}");
    }

    #[test]
    fn worker_settings_as_keys_nested_keys_or_message_text() {
        // pino 10.4.0: `logger.info({ queue, opts }, 'worker started')`, `logger.info({ queue,
        // ...opts }, 'worker ready')` and the options in the message, with the incident's clock.
        let nested = r#"{"level":30,"time":1791332998104,"pid":41877,"hostname":"api-1","queue":"pr-review","opts":{"concurrency":2,"lockDuration":12000,"stalledInterval":5000,"maxStalledCount":1},"msg":"worker started"}"#;
        let flat = r#"{"level":30,"time":1791332998105,"pid":41877,"hostname":"api-1","queue":"pr-review","concurrency":2,"lockDuration":12000,"stalledInterval":5000,"maxStalledCount":1,"msg":"worker ready"}"#;
        let text = r#"{"level":30,"time":1791332998106,"pid":41877,"hostname":"api-1","msg":"worker ready lockDuration=12000ms, stalledInterval=5000ms, maxStalledCount=1"}"#;
        let unset = r#"{"level":30,"time":1791332998107,"pid":41877,"hostname":"api-1","opts":{"lockDuration":null},"msg":"worker started"}"#;
        let (events, summary) = read(&format!("{nested}\n{flat}\n{text}\n{unset}\n{DECOY}\n"), None).unwrap();
        assert_eq!(counts(&summary), (5, 3, 1, 1));
        assert!(summary.rejections[0].reason.contains("lockDuration: null"), "{:?}", summary.rejections);
        for event in &events {
            assert_eq!(event.kind, EventKind::WorkerSettings);
            let settings = event.settings().unwrap();
            assert_eq!(
                (settings.lock_duration, settings.stalled_interval, settings.max_stalled_count),
                (Some(12_000), Some(5_000), Some(1))
            );
            assert_eq!(event.worker.as_deref(), Some("41877"));
        }
        assert_eq!(events[0].queue.as_deref(), Some("pr-review"));
    }

    #[test]
    fn content_comes_before_the_log_ending() {
        let spec = SourceSpec::new(SourceKind::Log, PathBuf::from("api.log"), None, String::new());
        let chosen = |first: &str| crate::ingest::choose_format(&spec, first).unwrap().name();
        assert_eq!(chosen(ACTIVE), "pino");
        assert_eq!(
            chosen(r#"{"level":"info","message":"job active","timestamp":"2026-10-07T00:33:00.000Z"}"#),
            "winston"
        );
        assert_eq!(chosen("[Nest] 41877  - 10/07/2026, 9:33:00 AM     LOG [BullWorker] job active id=7"), "nestjs");
        assert_eq!(chosen("2026-10-07 09:33:00.004 INFO [worker] job active id=7"), "text");
        assert_eq!(chosen("> app@1.0.0 start"), "text");
    }

    #[test]
    fn sniffing_needs_level_time_and_msg() {
        assert!(Pino.sniff(ACTIVE));
        assert!(Pino.sniff(&ACTIVE[..60]));
        assert!(!Pino.sniff(r#"{"level":"info","message":"job active","timestamp":"2026-10-07T00:33:00.000Z"}"#));
        assert!(!Pino.sniff("2026-10-07 09:33:00 INFO job active"));
        assert!(!Pino.sniff(r#"{"ts":1791333183120,"event":"round_started"}"#));
    }
}
