//! OpenTelemetry traces as OTLP JSON: one `{"resourceSpans": [...]}` object a line, as the
//! Collector's file exporter writes them, or an OTLP/HTTP `POST /v1/traces` body saved to a file.
//!
//! The spans read are those BullMQ itself opens when a `telemetry` (`bullmq-otel`) is given to
//! its `Queue` and `Worker` (`trace(...)` in `queue-base.ts`; the names in `telemetry-attributes.ts`):
//! `process <queue>` is one attempt of a job, from the worker's call of the processor to its
//! finishing call; `moveStalledJobsToWait <queue>` carries a `job stalled` event per job the
//! stalled check moved; `add <queue>.<name>` is a producer adding a job. Every other span says
//! nothing about a job's lease and its line is ignored with a reason.
//!
//! Times are UTC nanoseconds since 1970: nothing here needs a zone. A line is evidence whole or not
//! at all: a BullMQ span in it that lacks what it must say (a job id, a time) rejects the line, with
//! the span and what was expected, rather than leaving half an attempt on the timeline.
//!
//! A span is what the worker process saw, as its log is, so its events are on the log's channel
//! (`Channel::Log`): where the events stream recorded the same activation, the two are one event
//! (`rounds::merge`), and where it did not (no stream, or a trimmed one), the span speaks for it.

use std::io::BufRead;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::ingest::io::lines::{Lines, json_problem};
use crate::ingest::log::rules::RuleSet;
use crate::ingest::{EventFormat, SourceKind, SourceSpec};
use crate::model::{Channel, Event, EventKind, InputSummary, Moment, Origin, Scope, Text};

/// Why a line with no span of a BullMQ job is ignored (BullMQ's other spans: `getNextJob`,
/// `extendLocks`, a stalled check that found nothing, `close`, ..., and other libraries' spans).
pub const NO_JOB_SPANS: &str = "no BullMQ job span (process, add, or a stalled check that moved a job)";

/// What one line should be, for the messages of the lines that are not.
const EXPECTED: &str = "one OTLP JSON object a line, {\"resourceSpans\": [{\"scopeSpans\": [{\"spans\": [...]}]}]}";

pub struct OtlpJson;

impl EventFormat for OtlpJson {
    fn name(&self) -> &'static str {
        "otlp-json"
    }

    fn kind(&self) -> SourceKind {
        SourceKind::Trace
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["json", "jsonl", "ndjson"]
    }

    fn sniff(&self, first_line: &str) -> bool {
        first_line.starts_with('{') && first_line.contains("\"resourceSpans\"")
    }

    fn read(
        &self,
        spec: &SourceSpec,
        source: u16,
        input: Box<dyn BufRead + Send>,
        events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<()> {
        let rules = RuleSet::shared(&[], true, &spec.display_path())?;
        let mut lines = Lines::new(input, spec.max_line_bytes);
        let mut first = true;
        while let Some((line, text)) = lines.next_line(&spec.path, summary)? {
            summary.lines += 1;
            if text.trim().is_empty() {
                summary.ignore("blank");
                continue;
            }
            let value: Value = match serde_json::from_str(text) {
                Ok(value) => value,
                // A pretty-printed body: every line after this one would be rejected in turn.
                Err(error) if first && error.is_eof() => {
                    return Err(Error::input(
                        &spec.path,
                        Some(line),
                        format!(
                            "an OTLP JSON object spread over several lines: write it one object a line (jq -c . FILE); expected {EXPECTED}"
                        ),
                    ));
                }
                Err(error) => {
                    first = false;
                    summary.reject(line, format!("not JSON: {}; expected {EXPECTED}", json_problem(&error, text)));
                    continue;
                }
            };
            first = false;
            let origin = Origin { channel: Channel::Log, source, line: crate::ingest::line_of(spec, line)? };
            match line_events(&value, origin, &rules) {
                Ok(found) if found.is_empty() => summary.ignore(NO_JOB_SPANS),
                Ok(found) => {
                    summary.used();
                    summary.texts.keep(origin.line, text);
                    events.extend(found);
                }
                Err(reason) => summary.reject(line, reason),
            }
        }
        Ok(())
    }
}

/// The events of one OTLP object, or why the line is not evidence.
fn line_events(value: &Value, origin: Origin, rules: &RuleSet) -> std::result::Result<Vec<Event>, String> {
    let object = value.as_object().ok_or_else(|| format!("not a JSON object; expected {EXPECTED}"))?;
    let resources =
        list(object, "resourceSpans").ok_or_else(|| format!("no 'resourceSpans' list; expected {EXPECTED}"))?;
    let mut events = Vec::new();
    for (r, resource_spans) in resources.iter().enumerate() {
        let resource_spans =
            resource_spans.as_object().ok_or_else(|| format!("resourceSpans[{r}] is not an object"))?;
        let resource = match resource_spans.get("resource") {
            None | Some(Value::Null) => Attributes::default(),
            Some(Value::Object(resource)) => {
                Attributes::of(resource).map_err(|why| format!("resourceSpans[{r}].resource: {why}"))?
            }
            Some(_) => return Err(format!("resourceSpans[{r}].resource is not an object")),
        };
        let instance = resource.text("service.instance.id").or_else(|| resource.text("host.name"));
        for (s, scope_spans) in optional_list(resource_spans, "scopeSpans", r)?.iter().enumerate() {
            let place = format!("resourceSpans[{r}].scopeSpans[{s}]");
            let scope_spans = scope_spans.as_object().ok_or_else(|| format!("{place} is not an object"))?;
            for (n, span) in optional_list(scope_spans, "spans", r)?.iter().enumerate() {
                let span = span.as_object().ok_or_else(|| format!("{place}.spans[{n}] is not an object"))?;
                span_events(span, instance, origin, rules, &mut events)
                    .map_err(|why| format!("{place}.spans[{n}] ({}): {why}", span_name(span)))?;
            }
        }
    }
    Ok(events)
}

fn span_name(span: &Map<String, Value>) -> &str {
    span.get("name").and_then(Value::as_str).unwrap_or("no name")
}

/// What a BullMQ span says of its job, pushed as events; nothing for any other span.
fn span_events(
    span: &Map<String, Value>,
    instance: Option<Text>,
    origin: Origin,
    rules: &RuleSet,
    events: &mut Vec<Event>,
) -> std::result::Result<(), String> {
    let name = span.get("name").map_or(Ok(""), |name| name.as_str().ok_or("'name' is not a string"))?;
    let attributes = Attributes::of(span)?;
    // BullMQ names a span `<operation> <destination>` and says both as attributes; the name is
    // the fallback for a pipeline that dropped attributes.
    let (operation_in_name, destination) = name.split_once(' ').unwrap_or((name, ""));
    let operation = attributes.text("bullmq.queue.operation").map_or(operation_in_name, |op| op.as_str());
    let queue = attributes.text("bullmq.queue.name").or_else(|| match operation {
        "add" => destination.rsplit_once('.').map(|(queue, _)| Text::from(queue)),
        _ => (!destination.is_empty()).then(|| Text::from(destination)),
    });
    let worker = attributes.text("bullmq.worker.name").or_else(|| attributes.text("bullmq.worker.id"));
    let scope = |job_id: Text| Scope {
        job_id: Some(job_id),
        job_name: attributes.text("bullmq.job.name"),
        queue,
        worker,
        instance,
        ..Scope::default()
    };
    match operation {
        "process" => {
            let job_id = attributes.text("bullmq.job.id").ok_or("a process span without 'bullmq.job.id'")?;
            let attempt = attributes.count("bullmq.job.attempts.made")?;
            let scope = scope(job_id).interned();
            let event = |at: Moment, kind: EventKind, detail: Option<Text>| {
                let mut event = Event::new(at, kind, origin);
                event.set_scope(scope);
                event.set_detail(detail);
                event.lease_mut().attempt = attempt;
                event
            };
            events.push(event(time(span, "startTimeUnixNano")?, EventKind::JobActive, None));
            let mut ended = false;
            for span_event in span_events_list(span)? {
                let at = time(span_event.fields, "timeUnixNano")?;
                match span_event.name {
                    // Added once BullMQ's finishing call has returned: the attempt's end as the
                    // queue recorded it.
                    "job completed" => {
                        ended = true;
                        events.push(event(at, EventKind::JobCompleted, None));
                    }
                    "job failed" => {
                        ended = true;
                        let reason = span_event.attributes.text("bullmq.job.failed.reason");
                        events.push(event(at, EventKind::JobFailed, reason));
                    }
                    "exception" => {
                        if let Some(refused) = lock_refusal(&span_event.attributes, rules) {
                            events.push(event(at, EventKind::LockRefused, Some(refused)));
                        }
                    }
                    _ => {}
                }
            }
            // A span whose attempt ended in neither event says how it ended only by its status:
            // ERROR is a failure; an unset or OK status with no `job completed` is not a
            // completion (a refused finishing call ends the span too).
            if !ended && status_is_error(span)? {
                let detail = status_message(span).or_else(|| first_exception(span));
                events.push(event(time(span, "endTimeUnixNano")?, EventKind::JobFailed, detail));
            }
        }
        "moveStalledJobsToWait" => {
            for span_event in span_events_list(span)? {
                if span_event.name != "job stalled" {
                    continue;
                }
                let job_id = span_event
                    .attributes
                    .text("bullmq.job.id")
                    .ok_or("a 'job stalled' event without 'bullmq.job.id'")?;
                let mut event = Event::new(time(span_event.fields, "timeUnixNano")?, EventKind::JobStalled, origin);
                event.set_scope(scope(job_id).interned());
                events.push(event);
            }
        }
        "add" => {
            // The id is set once the job is in the queue: an `add` that failed has none.
            if let Some(job_id) = attributes.text("bullmq.job.id") {
                let mut event = Event::new(time(span, "startTimeUnixNano")?, EventKind::JobAdded, origin);
                event.set_scope(Scope { worker: None, ..scope(job_id) }.interned());
                events.push(event);
            }
        }
        _ => {}
    }
    Ok(())
}

/// The lock error an `exception` event records (`Missing lock for job …`, `Lock mismatch …`: the
/// log reader's rules tell them), or `None` for any other exception.
fn lock_refusal(attributes: &Attributes, rules: &RuleSet) -> Option<Text> {
    let message = attributes.text("exception.message")?;
    let found = rules.classify(&message);
    (found.kind == Some(EventKind::LockRefused)).then_some(message)
}

/// A span's status is ERROR: code 2, or its name in the protobuf enum's JSON form.
fn status_is_error(span: &Map<String, Value>) -> std::result::Result<bool, String> {
    let Some(status) = span.get("status").filter(|status| !status.is_null()) else { return Ok(false) };
    let status = status.as_object().ok_or("'status' is not an object")?;
    Ok(match status.get("code") {
        None | Some(Value::Null) => false,
        Some(Value::Number(code)) => code.as_u64() == Some(2),
        Some(Value::String(code)) => code == "STATUS_CODE_ERROR" || code == "2",
        Some(_) => return Err("'status.code' is neither a number nor a name".into()),
    })
}

fn status_message(span: &Map<String, Value>) -> Option<Text> {
    let message = span.get("status")?.get("message")?.as_str()?;
    (!message.is_empty()).then(|| Text::from(message))
}

fn first_exception(span: &Map<String, Value>) -> Option<Text> {
    span_events_list(span).ok()?.into_iter().find(|e| e.name == "exception")?.attributes.text("exception.message")
}

/// One of a span's events: its name, attributes and the object (for its time).
struct SpanEvent<'a> {
    name: &'a str,
    attributes: Attributes<'a>,
    fields: &'a Map<String, Value>,
}

fn span_events_list(span: &Map<String, Value>) -> std::result::Result<Vec<SpanEvent<'_>>, String> {
    let Some(listed) = span.get("events").filter(|events| !events.is_null()) else { return Ok(Vec::new()) };
    let listed = listed.as_array().ok_or("'events' is not a list")?;
    listed
        .iter()
        .enumerate()
        .map(|(n, event)| {
            let fields = event.as_object().ok_or_else(|| format!("events[{n}] is not an object"))?;
            let name = fields.get("name").and_then(Value::as_str).ok_or_else(|| format!("events[{n}] has no name"))?;
            let attributes = Attributes::of(fields).map_err(|why| format!("events[{n}] ({name}): {why}"))?;
            Ok(SpanEvent { name, attributes, fields })
        })
        .collect()
}

/// A time in nanoseconds since 1970 (UTC): a string of digits, as the OTLP JSON encoding writes a
/// 64-bit number, or a JSON number, as some exporters do.
fn time(fields: &Map<String, Value>, key: &str) -> std::result::Result<Moment, String> {
    let nanos = match fields.get(key) {
        Some(Value::String(digits)) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
            digits.parse::<u64>().ok()
        }
        Some(Value::Number(number)) => number.as_u64(),
        None | Some(Value::Null) => return Err(format!("no '{key}': expected nanoseconds since 1970 as a string")),
        Some(other) => return Err(format!("'{key}' is {other}: expected nanoseconds since 1970 as a string")),
    };
    let nanos = nanos.and_then(|nanos| i64::try_from(nanos).ok()).ok_or_else(|| {
        format!("'{key}' is past the year 2262 that a timeline holds (nanoseconds since 1970 in 64 bits)")
    })?;
    // 0 is the protobuf default: the exporter did not say.
    if nanos == 0 {
        return Err(format!("'{key}' is 0 (not set): expected nanoseconds since 1970"));
    }
    Ok(Moment::from_nanos(nanos))
}

/// The `attributes` list of a resource, span or span event: `[{"key": …, "value": {"stringValue": …}}]`.
#[derive(Default)]
struct Attributes<'a>(Vec<(&'a str, &'a Map<String, Value>)>);

impl<'a> Attributes<'a> {
    fn of(fields: &'a Map<String, Value>) -> std::result::Result<Self, String> {
        let Some(listed) = fields.get("attributes").filter(|a| !a.is_null()) else { return Ok(Attributes::default()) };
        let listed = listed.as_array().ok_or("'attributes' is not a list")?;
        let mut found = Vec::with_capacity(listed.len());
        for (n, attribute) in listed.iter().enumerate() {
            let key = attribute.get("key").and_then(Value::as_str);
            let value = attribute.get("value").and_then(Value::as_object);
            match (key, value) {
                (Some(key), Some(value)) => found.push((key, value)),
                // An attribute whose value was left out is the protobuf default: no value.
                (Some(_), None) if attribute.get("value").is_none_or(Value::is_null) => {}
                _ => return Err(format!("attributes[{n}] is not {{\"key\": \"…\", \"value\": {{…}}}}")),
            }
        }
        Ok(Attributes(found))
    }

    fn value(&self, key: &str) -> Option<&'a Map<String, Value>> {
        self.0.iter().find(|(found, _)| *found == key).map(|(_, value)| *value)
    }

    /// A text attribute; an integer one (a job id BullMQ was given as a number) as its digits.
    fn text(&self, key: &str) -> Option<Text> {
        let value = self.value(key)?;
        match (value.get("stringValue"), value.get("intValue")) {
            (Some(Value::String(text)), _) if !text.is_empty() => Some(Text::from(text.as_str())),
            (_, Some(Value::String(digits))) if integer(digits).is_some() => Some(Text::from(digits.as_str())),
            (_, Some(Value::Number(number))) if number.is_i64() || number.is_u64() => {
                Some(Text::from(number.to_string().as_str()))
            }
            _ => None,
        }
    }

    /// A count: an `intValue` (a string of digits or a JSON number), or `None` when absent.
    fn count(&self, key: &str) -> std::result::Result<Option<u64>, String> {
        let Some(value) = self.value(key) else { return Ok(None) };
        let count = match value.get("intValue") {
            Some(Value::String(digits)) => integer(digits),
            Some(Value::Number(number)) => number.as_u64(),
            _ => None,
        };
        count.map(Some).ok_or_else(|| format!("'{key}' is not a count (an intValue of at most 20 digits)"))
    }
}

fn integer(digits: &str) -> Option<u64> {
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then(|| digits.parse().ok()).flatten()
}

fn list<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a Vec<Value>> {
    object.get(key).and_then(Value::as_array)
}

/// A list that may be absent (the protobuf default: empty), but not of another type.
fn optional_list<'a>(
    object: &'a Map<String, Value>,
    key: &str,
    resource: usize,
) -> std::result::Result<&'a [Value], String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(_) => Err(format!("'{key}' of resourceSpans[{resource}] is not a list")),
    }
}
