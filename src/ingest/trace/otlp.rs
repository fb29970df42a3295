//! OpenTelemetry traces as OTLP JSON: one `{"resourceSpans": [...]}` object a line, as the
//! Collector's file exporter writes them, or an OTLP/HTTP `POST /v1/traces` body saved to a file;
//! Grafana Tempo's query API answers with the same resources under `batches` or
//! `trace.resourceSpans`. A pretty-printed body is read whole (`json::read_values`).
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

use super::json::{Places, Reading, read_values};
use crate::error::Result;
use crate::ingest::log::rules::RuleSet;
use crate::ingest::{EventFormat, SourceKind, SourceSpec};
use crate::model::{Event, EventKind, InputSummary, Moment, Origin, Scope, Text};

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

    /// An object with a `resourceSpans` key (OTLP, Tempo's `/api/v2/traces`), or Tempo's
    /// `batches` of resources (`/api/traces`): the name followed by a colon, not a value that
    /// mentions it (a log message about traces).
    fn sniff(&self, first_line: &str) -> bool {
        first_line.starts_with('{') && is_otlp(first_line)
    }

    /// A pretty-printed body: `{` alone on its first line, the keys on the lines after.
    fn sniff_head(&self, head: &str) -> bool {
        let first = head.split(['\n', '\r']).map(str::trim).find(|line| !line.is_empty()).unwrap_or_default();
        if first == "{" { is_otlp(head) } else { self.sniff(first) }
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
        let reading = Reading { expected: EXPECTED, ignored: NO_JOB_SPANS };
        read_values(spec, source, input, events, summary, &reading, |value, places| line_events(value, places, &rules))
    }
}

/// Whether `text` has the keys of OTLP JSON, or of Tempo's older container.
fn is_otlp(text: &str) -> bool {
    has_key(text, "resourceSpans")
        || (has_key(text, "batches") && (has_key(text, "scopeSpans") || has_key(text, "instrumentationLibrarySpans")))
}

/// Whether `key` is a key of an object in `text`: its quoted name followed by a colon, not escaped
/// inside a string.
pub(super) fn has_key(text: &str, key: &str) -> bool {
    let quoted = format!("\"{key}\"");
    text.match_indices(&quoted)
        .any(|(at, found)| !text[..at].ends_with('\\') && text[at + found.len()..].trim_start().starts_with(':'))
}

/// The events of one OTLP object, or why the line is not evidence.
fn line_events(value: &Value, places: &Places, rules: &RuleSet) -> std::result::Result<Vec<Event>, String> {
    let object = value.as_object().ok_or_else(|| format!("not a JSON object; expected {EXPECTED}"))?;
    // Tempo's query API writes the same resources under other keys: `batches` (`/api/traces/<id>`,
    // `MarshalToJSONV1` in Tempo's pkg/tempopb/trace_utils.go) and `trace.resourceSpans`
    // (`/api/v2/traces/<id>`, a `TraceByIDResponse`).
    let (container, resources) = match (object.get("resourceSpans"), object.get("batches"), object.get("trace")) {
        (Some(Value::Array(resources)), _, _) => ("resourceSpans", resources),
        (None, Some(Value::Array(resources)), _) => ("batches", resources),
        (None, None, Some(Value::Object(trace))) => match trace.get("resourceSpans") {
            Some(Value::Array(resources)) => ("trace.resourceSpans", resources),
            // A trace Tempo found nothing of (`{"trace": {}}`): no resources.
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(_) => return Err(format!("'trace.resourceSpans' is not a list; expected {EXPECTED}")),
        },
        _ => return Err(format!("no 'resourceSpans' list; expected {EXPECTED}")),
    };
    let mut events = Vec::new();
    let mut counted = 0;
    for (r, resource_spans) in resources.iter().enumerate() {
        let resource_spans = resource_spans.as_object().ok_or_else(|| format!("{container}[{r}] is not an object"))?;
        let resource = match resource_spans.get("resource") {
            None | Some(Value::Null) => Attributes::default(),
            Some(Value::Object(resource)) => {
                Attributes::of(resource).map_err(|why| format!("{container}[{r}].resource: {why}"))?
            }
            Some(_) => return Err(format!("{container}[{r}].resource is not an object")),
        };
        let instance = resource.text("service.instance.id").or_else(|| resource.text("host.name"));
        // Before OTLP 0.15 a scope was an "instrumentation library"; older Tempo versions and
        // Collectors still write that name.
        let scopes_key =
            if resource_spans.contains_key("scopeSpans") { "scopeSpans" } else { "instrumentationLibrarySpans" };
        let resource_place = format!("{container}[{r}]");
        for (s, scope_spans) in optional_list(resource_spans, scopes_key, &resource_place)?.iter().enumerate() {
            let place = format!("{resource_place}.{scopes_key}[{s}]");
            let scope_spans = scope_spans.as_object().ok_or_else(|| format!("{place} is not an object"))?;
            for (n, span) in optional_list(scope_spans, "spans", &resource_place)?.iter().enumerate() {
                let span = span.as_object().ok_or_else(|| format!("{place}.spans[{n}] is not an object"))?;
                span_events(span, instance, places.span(counted), rules, &mut events)
                    .map_err(|why| format!("{place}.spans[{n}] ({}): {why}", span_name(span)))?;
                counted += 1;
            }
        }
    }
    Ok(events)
}

/// The span's name for a message.
fn span_name(span: &Map<String, Value>) -> String {
    cut(span.get("name").and_then(Value::as_str).unwrap_or("no name"))
}

/// A name for a message: its first 80 characters (a hostile name may be a megabyte).
pub(super) fn cut(name: &str) -> String {
    match name.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &name[..cut]),
        None => name.to_string(),
    }
}

/// What a BullMQ span says of its job, pushed as events; nothing for any other span.
pub(super) fn span_events(
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
    // The refused call (`moveToFinished`), as a log line of the same error gives it: a finding
    // says "refused moveToFinished", and the whole message stays in the evidence's raw text.
    (found.kind == Some(EventKind::LockRefused)).then(|| found.detail.map_or(message, |call| Text::from(call.as_str())))
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
        Some(other) => {
            return Err(format!(
                "'{key}' is {}: expected nanoseconds since 1970 as a string of digits",
                described(other)
            ));
        }
    };
    let nanos = nanos.and_then(|nanos| i64::try_from(nanos).ok()).ok_or_else(|| {
        format!(
            "'{key}' is not a whole number of nanoseconds from 1970 to the year 2262 that a timeline holds (64 bits)"
        )
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

/// A JSON value in a few words, for a message: never the value itself, which may be a megabyte.
fn described(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string that is not all digits",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn integer(digits: &str) -> Option<u64> {
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then(|| digits.parse().ok()).flatten()
}

/// A list that may be absent (the protobuf default: empty), but not of another type.
fn optional_list<'a>(
    object: &'a Map<String, Value>,
    key: &str,
    resource: &str,
) -> std::result::Result<&'a [Value], String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(_) => Err(format!("'{key}' of {resource} is not a list")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Channel;
    use std::path::PathBuf;

    fn read_with(text: &str, max_line_bytes: usize) -> Result<(Vec<Event>, InputSummary)> {
        let mut spec = SourceSpec::new(SourceKind::Trace, PathBuf::from("traces.jsonl"), None, String::new());
        spec.max_line_bytes = max_line_bytes;
        let mut events = Vec::new();
        let mut summary = InputSummary::new("traces.jsonl", "trace", "otlp-json", None);
        OtlpJson.read(&spec, 0, Box::new(std::io::Cursor::new(text.to_string())), &mut events, &mut summary)?;
        assert_eq!(summary.lines, summary.used + summary.ignored + summary.rejected, "every line accounted");
        Ok((events, summary))
    }

    fn read(text: &str) -> (Vec<Event>, InputSummary) {
        read_with(text, crate::ingest::io::lines::MAX_LINE_BYTES).unwrap()
    }

    /// One export body: the resources, each `(resource attributes, spans)`.
    fn body(resources: &[(&str, &[&str])]) -> String {
        let resources: Vec<String> = resources
            .iter()
            .map(|(attributes, spans)| {
                format!(
                    r#"{{"resource":{{"attributes":[{attributes}]}},"scopeSpans":[{{"scope":{{"name":"bullmq"}},"spans":[{}]}}]}}"#,
                    spans.join(",")
                )
            })
            .collect();
        format!(r#"{{"resourceSpans":[{}]}}"#, resources.join(","))
    }

    const INSTANCE_A: &str = r#"{"key":"service.instance.id","value":{"stringValue":"worker-a"}}"#;
    const HOST_B: &str = r#"{"key":"host.name","value":{"stringValue":"node-b"}}"#;

    /// A `process pr-review` span with these extra attributes and events.
    fn process(start: &str, end: &str, attributes: &str, events: &str, status: &str) -> String {
        format!(
            r#"{{"traceId":"92acbad1e0","spanId":"0a1b","name":"process pr-review","kind":5,"startTimeUnixNano":{start},"endTimeUnixNano":{end},"attributes":[{{"key":"bullmq.queue.name","value":{{"stringValue":"pr-review"}}}},{{"key":"bullmq.queue.operation","value":{{"stringValue":"process"}}}}{attributes}],"events":[{events}],"status":{status}}}"#
        )
    }

    const JOB_42: &str = r#",{"key":"bullmq.job.id","value":{"stringValue":"42"}},{"key":"bullmq.worker.name","value":{"stringValue":"w-a"}}"#;

    #[test]
    fn a_value_that_starts_on_the_line_another_ends_on_is_counted_on_it_once() {
        // Found by fuzzing a pretty-printed export: `}{` put one line in two values' counts.
        let (_, summary) = read("{\n  \"resourceSpans\": []\n}{ \"resourceSpans\": 5 }\n");
        assert_eq!((summary.lines, summary.ignored, summary.rejected), (3, 2, 1));
        let (_, summary) = read("{\n  \"resourceSpans\": []\n}{ \"resourceSpans\": [\n");
        assert_eq!((summary.lines, summary.ignored, summary.rejected), (3, 2, 1), "a broken value after it");
    }

    #[test]
    fn a_process_span_is_an_activation_and_its_completion_at_the_nanosecond() {
        let attempts = r#",{"key":"bullmq.job.attempts.made","value":{"intValue":"2"}}"#;
        let completed = r#"{"timeUnixNano":"1796547206661987654","name":"job completed","attributes":[]}"#;
        let span = process(
            r#""1796547206458123456""#,
            r#""1796547206662000001""#,
            &format!("{JOB_42}{attempts}"),
            completed,
            r#"{"code":0}"#,
        );
        let (events, summary) = read(&body(&[(INSTANCE_A, &[&span])]));
        assert_eq!(events.iter().map(|e| e.kind).collect::<Vec<_>>(), [EventKind::JobActive, EventKind::JobCompleted]);
        assert_eq!(events[0].moment().nanos(), 1_796_547_206_458_123_456);
        assert_eq!(events[1].moment().nanos(), 1_796_547_206_661_987_654, "the event's time, not the span's end");
        for event in &events {
            assert_eq!(event.job_id.as_deref(), Some("42"));
            assert_eq!(event.queue.as_deref(), Some("pr-review"));
            assert_eq!(event.worker.as_deref(), Some("w-a"));
            assert_eq!(event.instance.as_deref(), Some("worker-a"));
            assert_eq!(event.lease().attempt, Some(2));
            assert_eq!(event.origin(), Origin { channel: Channel::Log, source: 0, line: 1 });
        }
        assert_eq!((summary.lines, summary.used), (1, 1));
    }

    #[test]
    fn attribute_values_of_every_kind_bullmq_and_exporters_write() {
        // A job id given as a number (an intValue, as a string or a JSON number), the worker's id
        // when it has no name, the host when the resource has no instance id, times as numbers.
        for (job, number) in [(r#"{"intValue":"7"}"#, "7"), (r#"{"intValue":7}"#, "7")] {
            let attributes = format!(
                r#",{{"key":"bullmq.job.id","value":{job}}},{{"key":"bullmq.worker.id","value":{{"stringValue":"uuid-1"}}}},{{"key":"bullmq.job.attempts.made","value":{{"intValue":1}}}}"#
            );
            let span = process("1796547206458000000", "1796547206500000000", &attributes, "", "null");
            let (events, _) = read(&body(&[(HOST_B, &[&span])]));
            assert_eq!(events.len(), 1, "an unset status and no `job completed`: only the activation");
            assert_eq!(events[0].job_id.as_deref(), Some(number));
            assert_eq!(events[0].worker.as_deref(), Some("uuid-1"));
            assert_eq!(events[0].instance.as_deref(), Some("node-b"));
            assert_eq!(events[0].lease().attempt, Some(1));
        }
        // Other value kinds of an attribute read as text say nothing (no job id): rejected.
        let odd = r#",{"key":"bullmq.job.id","value":{"boolValue":true}},{"key":"other","value":{"arrayValue":{"values":[{"doubleValue":1.5}]}}}"#;
        let span = process(r#""1796547206458000000""#, r#""1796547206500000000""#, odd, "", "{}");
        let (events, summary) = read(&body(&[(INSTANCE_A, &[&span])]));
        assert!(events.is_empty());
        assert!(summary.rejections[0].reason.contains("without 'bullmq.job.id'"), "{:?}", summary.rejections);
    }

    #[test]
    fn a_body_with_several_resources_gives_each_span_its_own_instance() {
        let start = r#""1796547203046000000""#;
        let first = process(start, start, JOB_42, "", "{}");
        let stall_check = r#"{"name":"moveStalledJobsToWait pr-review","startTimeUnixNano":"1796547206450000000","endTimeUnixNano":"1796547206460000000","attributes":[{"key":"bullmq.queue.name","value":{"stringValue":"pr-review"}},{"key":"bullmq.queue.operation","value":{"stringValue":"moveStalledJobsToWait"}},{"key":"bullmq.worker.name","value":{"stringValue":"w-b"}}],"events":[{"timeUnixNano":"1796547206457250000","name":"job stalled","attributes":[{"key":"bullmq.job.id","value":{"stringValue":"42"}}]}]}"#;
        let rerun = process(r#""1796547206458000000""#, r#""1796547206662000000""#, JOB_42, "", "{}");
        let text = body(&[(INSTANCE_A, &[&first]), (HOST_B, &[stall_check, &rerun])]);
        let (events, _) = read(&text);
        let seen: Vec<(EventKind, Option<&str>, i64)> =
            events.iter().map(|e| (e.kind, e.instance.as_deref(), e.moment().nanos())).collect();
        assert_eq!(
            seen,
            [
                (EventKind::JobActive, Some("worker-a"), 1_796_547_203_046_000_000),
                (EventKind::JobStalled, Some("node-b"), 1_796_547_206_457_250_000),
                (EventKind::JobActive, Some("node-b"), 1_796_547_206_458_000_000),
            ]
        );
        assert_eq!(events[1].worker.as_deref(), Some("w-b"));
    }

    #[test]
    fn failures_lock_refusals_and_additions() {
        let failed = r#"{"timeUnixNano":"1796547206600000000","name":"job failed","attributes":[{"key":"bullmq.job.failed.reason","value":{"stringValue":"boom"}}]}"#;
        let by_event = process(r#""1796547206458000000""#, r#""1796547206662000000""#, JOB_42, failed, "{}");
        let by_status = process(
            r#""1796547206458000000""#,
            r#""1796547206662000000""#,
            JOB_42,
            r#"{"timeUnixNano":"1796547206500000000","name":"exception","attributes":[{"key":"exception.message","value":{"stringValue":"ECONNRESET"}}]}"#,
            r#"{"code":"STATUS_CODE_ERROR"}"#,
        );
        let refused = process(
            r#""1796547206458000000""#,
            r#""1796547206662000000""#,
            JOB_42,
            r#"{"timeUnixNano":"1796547206643550285","name":"exception","attributes":[{"key":"exception.message","value":{"stringValue":"Missing lock for job 42. moveToFinished"}}]},{"timeUnixNano":"1796547206644000000","name":"exception","attributes":[{"key":"exception.message","value":{"stringValue":"Lock mismatch for job 42. Cmd moveToFinished from active"}}]}"#,
            "{}",
        );
        let add = r#"{"name":"add pr-review.review","kind":4,"startTimeUnixNano":"1796547203040000000","endTimeUnixNano":"1796547203044000000","attributes":[{"key":"bullmq.queue.operation","value":{"stringValue":"add"}},{"key":"bullmq.job.id","value":{"stringValue":"42"}}]}"#;
        let text = [&by_event, &by_status, &refused, add].map(|span| body(&[(INSTANCE_A, &[span])])).join("\n");
        let (events, summary) = read(&text);
        let kinds = |line: u32| -> Vec<EventKind> {
            events.iter().filter(|e| e.origin().line == line).map(|e| e.kind).collect()
        };
        assert_eq!(kinds(1), [EventKind::JobActive, EventKind::JobFailed]);
        assert_eq!(events[1].detail_str(), Some("boom"));
        assert_eq!(kinds(2), [EventKind::JobActive, EventKind::JobFailed], "an ERROR status is a failure at the end");
        assert_eq!(events[3].detail_str(), Some("ECONNRESET"));
        assert_eq!(events[3].moment().nanos(), 1_796_547_206_662_000_000);
        assert_eq!(kinds(3), [EventKind::JobActive, EventKind::LockRefused, EventKind::LockRefused]);
        assert_eq!(events[5].detail_str(), Some("moveToFinished"), "the refused call, as a log line gives it");
        assert_eq!(kinds(4), [EventKind::JobAdded]);
        assert_eq!(events[7].queue.as_deref(), Some("pr-review"), "the queue from the span's name");
        assert_eq!((summary.lines, summary.used), (4, 4));
    }

    #[test]
    fn lines_without_a_job_span_are_ignored_with_a_reason() {
        let timer = r#"{"name":"startStalledCheckTimer pr-review","startTimeUnixNano":"1","endTimeUnixNano":"2","attributes":[]}"#;
        let empty_check =
            r#"{"name":"moveStalledJobsToWait pr-review","startTimeUnixNano":"1796547206450000000","events":[]}"#;
        let text = format!(
            "{}\n\n{}\n{{\"resourceSpans\":[]}}\n",
            body(&[(INSTANCE_A, &[timer, empty_check])]),
            body(&[("", &[])])
        );
        let (events, summary) = read(&text);
        assert!(events.is_empty());
        assert_eq!((summary.lines, summary.ignored), (4, 4));
        assert_eq!(summary.ignored_by_reason[NO_JOB_SPANS], 3);
        assert_eq!(summary.ignored_by_reason["blank"], 1);
    }

    #[test]
    fn hostile_lines_are_rejected_with_their_line_and_what_was_expected() {
        let span = |start: &str| process(start, r#""1796547206662000000""#, JOB_42, "", "{}");
        let good = body(&[(INSTANCE_A, &[&span(r#""1796547206458000000""#)])]);
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let cases: Vec<(String, &str)> = vec![
            ("not json at all".into(), "not JSON"),
            ("[1,2]".into(), "not a JSON object"),
            (r#"{"resourceSpans":{}}"#.into(), "no 'resourceSpans' list"),
            (r#"{"resourceSpans":[7]}"#.into(), "resourceSpans[0] is not an object"),
            (r#"{"resourceSpans":[{"resource":"x"}]}"#.into(), "resource is not an object"),
            (
                r#"{"resourceSpans":[{"scopeSpans":[{"spans":"x"}]}]}"#.into(),
                "'spans' of resourceSpans[0] is not a list",
            ),
            (
                r#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"process q","attributes":{}}]}]}]}"#.into(),
                "'attributes' is not a list",
            ),
            (r#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":7}]}]}]}"#.into(), "'name' is not a string"),
            (body(&[(INSTANCE_A, &[&span("true")])]), "'startTimeUnixNano' is a boolean"),
            (body(&[(INSTANCE_A, &[&span(r#""99999999999999999999999""#)])]), "to the year 2262"),
            (body(&[(INSTANCE_A, &[&span(r#""18446744073709551615""#)])]), "to the year 2262"),
            (body(&[(INSTANCE_A, &[&span("1e30")])]), "to the year 2262"),
            (body(&[(INSTANCE_A, &[&span("-5")])]), "not a whole number of nanoseconds"),
            (body(&[(INSTANCE_A, &[&span("1796547206458000000.5")])]), "not a whole number of nanoseconds"),
            (body(&[(INSTANCE_A, &[&span(r#""-5""#)])]), "'startTimeUnixNano' is a string that is not all digits"),
            (body(&[(INSTANCE_A, &[&span(r#""0""#)])]), "is 0 (not set)"),
            (body(&[(INSTANCE_A, &[&process(r#""1""#, r#""2""#, "", "", "{}")])]), "without 'bullmq.job.id'"),
            (
                body(&[(
                    INSTANCE_A,
                    &[&process(
                        r#""1""#,
                        r#""2""#,
                        &format!(
                            "{JOB_42},{{\"key\":\"bullmq.job.attempts.made\",\"value\":{{\"intValue\":\"99999999999999999999999\"}}}}"
                        ),
                        "",
                        "{}",
                    )],
                )]),
                "is not a count",
            ),
            (
                body(&[(INSTANCE_A, &[&process(r#""1""#, r#""2""#, JOB_42, r#"{"name":"job completed"}"#, "{}")])]),
                "no 'timeUnixNano'",
            ),
            (body(&[(INSTANCE_A, &[&process(r#""1""#, r#""2""#, JOB_42, "", "[]")])]), "'status' is not an object"),
            (deep, "not JSON"),
        ];
        let text = cases.iter().map(|(line, _)| format!("{line}\n{good}\n")).collect::<Vec<_>>().concat();
        let (events, summary) = read(&text);
        assert_eq!(summary.rejected, cases.len() as u64);
        assert_eq!(summary.used, cases.len() as u64, "the good lines between are read");
        assert_eq!(events.len(), cases.len());
        for (number, (_, expected)) in cases.iter().enumerate().take(crate::model::input::MAX_LISTED_REJECTIONS) {
            let rejection = &summary.rejections[number];
            assert_eq!(rejection.line, 2 * number as u64 + 1);
            assert!(
                rejection.reason.contains(expected),
                "line {}: {} lacks {expected}",
                rejection.line,
                rejection.reason
            );
        }
        assert!(
            summary.rejections[8].reason.contains("spans[0] (process pr-review)"),
            "{}",
            summary.rejections[8].reason
        );
    }

    #[test]
    fn a_line_past_the_cap_is_rejected_without_being_held() {
        let good = body(&[(INSTANCE_A, &[&process(r#""1""#, r#""2""#, JOB_42, "", "{}")])]);
        let huge = format!("{{\"resourceSpans\":[{{\"x\":\"{}\"}}]}}", "a".repeat(100_000));
        let (events, summary) = read_with(&format!("{huge}\n{good}\n"), 4096).unwrap();
        assert_eq!((summary.lines, summary.rejected, summary.used, events.len()), (2, 1, 1, 1));
        assert_eq!(summary.rejections[0].line, 1);
    }

    #[test]
    fn a_pretty_printed_body_is_read_whole_and_each_of_its_lines_accounted_for() {
        let span = process(r#""1796547206458000000""#, r#""1796547206662000000""#, JOB_42, "", "{}");
        let compact: Value = serde_json::from_str(&body(&[(INSTANCE_A, &[&span])])).unwrap();
        let pretty = serde_json::to_string_pretty(&compact).unwrap();
        let lines = pretty.lines().count() as u64;
        let text = format!("\n{pretty}\n\n{pretty}\n");
        let (events, summary) = read(&text);
        assert_eq!(events.len(), 2, "one activation from each of the two documents");
        // At the line where its span starts: a `{` alone, then the span's first key.
        let pretty_lines: Vec<&str> = pretty.lines().collect();
        let span_line = 1 + pretty_lines
            .windows(2)
            .position(|pair| pair[0].trim() == "{" && pair[1].trim_start().starts_with("\"traceId\""))
            .map(|at| u32::try_from(at).unwrap())
            .unwrap();
        assert_eq!(events[0].origin().line, 1 + span_line, "after the blank first line");
        assert_eq!(u64::from(events[1].origin().line), lines + 2 + u64::from(span_line));
        assert!(summary.texts.kept(events[0].origin().line).is_some_and(|text| text.starts_with('{')
            && text.contains("process pr-review")
            && !text.contains("resourceSpans")));
        assert_eq!((summary.lines, summary.used, summary.ignored_by_reason["blank"]), (2 * lines + 2, 2 * lines, 2));

        // A document broken part way: rejected once, at its first line, with the line of the fault.
        let broken = pretty.replacen("\"spans\"", "\"spans\" 7", 1);
        let fault = 1 + broken.lines().position(|line| line.contains("\"spans\" 7")).unwrap() as u64;
        let (events, summary) = read(&format!("{pretty}\n{broken}\n"));
        assert_eq!((events.len(), summary.rejected), (1, 1));
        assert_eq!(summary.rejections[0].line, lines + 1);
        assert!(
            summary.rejections[0].reason.contains(&format!("not JSON (at line {})", lines + fault)),
            "{}",
            summary.rejections[0].reason
        );
        assert_eq!(summary.ignored_by_reason[super::super::json::IN_REJECTED_DOCUMENT], lines - 1);

        // Past the bound, the read stops with the fix rather than holding more.
        let error = read_with(&pretty, 256).unwrap_err().to_string();
        assert!(error.contains("a JSON document of more than 256 bytes from line 1"), "{error}");
        assert!(error.contains("--max-line-bytes") && error.contains("jq -c ."), "{error}");
        // A line of it past the cap on its own, passed over by the line reader, is past the bound too.
        let long = format!("{{\n  \"resourceSpans\": [],\n  \"x\": \"{}\"\n}}\n", "a".repeat(100));
        let error = read_with(&long, 64).unwrap_err().to_string();
        assert!(error.starts_with("traces.jsonl:4: a JSON document of more than 64 bytes from line 1"), "{error}");
        let error = read_with(long.trim_end().trim_end_matches('}'), 64).unwrap_err().to_string();
        assert!(error.starts_with("traces.jsonl:3: a JSON document of more than 64 bytes"), "{error}");
        // A compact line cut short (a file still being written) is one rejected line.
        let (_, summary) = read("{\"resourceSpans\":[{\"scopeSpans\":[{\"spa");
        assert_eq!((summary.lines, summary.rejected), (1, 1));
    }

    /// Tempo's query API: `/api/traces/<id>` writes the resources as `batches`, older versions
    /// their scopes as `instrumentationLibrarySpans` and ids in base64 (not read); `/api/v2` wraps
    /// them in `trace`.
    #[test]
    fn tempo_containers_give_the_events_of_the_same_spans() {
        let span = process(
            r#""1796547206458000000""#,
            r#""1796547206662000000""#,
            JOB_42,
            "",
            r#"{"code":"STATUS_CODE_ERROR"}"#,
        );
        let otlp = body(&[(INSTANCE_A, &[&span])]);
        let v1 = otlp.replacen("\"resourceSpans\"", "\"batches\"", 1);
        let old = v1.replacen("\"scopeSpans\"", "\"instrumentationLibrarySpans\"", 1);
        let v2 = format!(r#"{{"trace":{otlp}, "status":"complete"}}"#);
        let seen = |text: &str| {
            let (events, summary) = read(text);
            assert_eq!(summary.used, 1, "{text}");
            events
                .iter()
                .map(|e| (e.kind, e.moment().nanos(), e.instance.as_deref().map(str::to_string)))
                .collect::<Vec<_>>()
        };
        let expected = seen(&otlp);
        assert_eq!(expected.len(), 2);
        for text in [&v1, &old, &v2] {
            assert_eq!(seen(text), expected, "{text}");
            assert!(OtlpJson.sniff(text), "{text}");
        }
        let (_, summary) = read(r#"{"trace":{}}"#);
        assert_eq!(summary.ignored, 1, "a trace Tempo found nothing of");
        let (_, summary) = read(r#"{"batches":[7]}"#);
        assert!(summary.rejections[0].reason.contains("batches[0] is not an object"), "{:?}", summary.rejections);
        assert!(!OtlpJson.sniff(r#"{"batches":[{"id":1}]}"#), "another program's batches");
        assert!(OtlpJson.sniff_head("{\n  \"batches\": [\n    {\n      \"scopeSpans\": []}]}"));
    }

    #[test]
    fn a_huge_span_name_is_cut_in_the_rejection() {
        let name = "process ".to_string() + &"q".repeat(100_000);
        let line = format!(r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{{"name":"{name}"}}]}}]}}]}}"#);
        let (_, summary) = read(&line);
        assert!(summary.rejections[0].reason.len() < 400, "{}", summary.rejections[0].reason.len());
    }

    #[test]
    fn the_format_is_told_by_its_first_line() {
        assert!(OtlpJson.sniff(r#"{"resourceSpans":[]}"#));
        assert!(OtlpJson.sniff(r#"{ "resourceSpans" : [] }"#));
        assert!(!OtlpJson.sniff(r#"{"id":"1791333180000-0","fields":{}}"#));
        assert!(!OtlpJson.sniff(r#"{"level":30,"msg":"resourceSpans"}"#));
        assert!(!OtlpJson.sniff(r#"{"level":30,"msg":"body {\"resourceSpans\":[]}"}"#));
    }
}
