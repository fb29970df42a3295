//! What every structured log format shares: pino and winston write one JSON object a line and
//! differ only in their key names and levels (`JsonDialect`); NestJS writes text but, once its
//! prefix is read, hands over the same `Entry`. One line loop (`read_json_lines`), one way of
//! taking event fields from a line's keys (`json_fields`), and one classification of an entry
//! into events (`emit`), so each format keeps only its field rules.
//!
//! The message is classified by the log rules like a text log line; event fields come from the
//! line's keys first (the names in `fields::FIELD_KEYS`, case-insensitive, dotted paths such as
//! `job.id` walk nested objects, an object value gives its `message`) and then from `key=value`
//! pairs in the message. A line at level error or worse that no rule classifies is an `error`
//! event. A line that is not a JSON object is an error naming the line; a line without its
//! timestamp cannot be placed on the timeline and is rejected.

use std::io::BufRead;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::model::{Channel, Event, EventKind, InputSummary, Origin};
use crate::time::fold::{LineOrder, Placed};
use crate::time::{self, Stamp};

use super::fields::{Classified, FIELD_KEYS};
use super::rules::RuleSet;
use super::worker_settings::{Settled, settle};
use crate::ingest::SourceSpec;
use crate::ingest::io::lines::Lines;

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
            error: error_text(&object),
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
    // A process is its host and its pid, as the ledgers write a worker (`api-1/41877`): a pod
    // restarted keeps its hostname and gets a new pid, and two replicas on one host share the
    // hostname. Without a `worker` key, pino's `hostname` and `pid` are the worker together.
    if lookup(object, "worker").is_none() {
        let text = |key: &str| lookup(object, key).and_then(field_text);
        if let (Some(host), Some(pid)) = (text("hostname").or_else(|| text("host")), text("pid")) {
            fields.worker = Some(format!("{host}/{pid}"));
        }
    }
    fields
}

/// The message of the Error a structured line carries, as the loggers serialize one: pino's
/// `err` (`{"type","message","stack"}`), winston's and NestJS's `error`, or a bare string under
/// either key; else the first line of its `stack` (`Error: Lock mismatch for job 7. ...`).
pub fn error_text(object: &Map<String, Value>) -> Option<String> {
    ["err", "error"].iter().find_map(|key| match lookup(object, key)? {
        Value::String(text) if !text.trim().is_empty() => Some(text.clone()),
        Value::Object(inner) => {
            let text = |key: &str| match inner.get(key) {
                Some(Value::String(text)) if !text.trim().is_empty() => Some(text.as_str()),
                _ => None,
            };
            text("message").or_else(|| text("stack").and_then(|stack| stack.lines().next())).map(str::to_string)
        }
        _ => None,
    })
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
    /// The message of an Error object the line carries (`err`, `error`; see `error_text`),
    /// classified when the message itself is not.
    pub error: Option<String>,
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
    // A logged Error's own words are in its object (`{"err":{"message":...},"msg":"worker error"}`,
    // pino's idiom): BullMQ's "Lock mismatch for job ..." is there, not in the message.
    let mut from_error = false;
    if found.kind.is_none()
        && let Some(error) = entry.error.as_deref()
    {
        let in_error = rules.classify(error);
        if in_error.kind.is_some() {
            from_error = in_error.detail.is_some();
            found = in_error;
        }
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
    if from_error {
        // The rule read the error's words: its detail (the refused command) is the line's, not
        // the whole error text the `err` key gives.
        fields.detail = None;
    }
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
