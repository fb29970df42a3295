//! Jaeger's JSON: what its query API answers (`GET /api/traces/<id>`, a search `GET
//! /api/traces?service=…`) and its UI's "Download JSON": `{"data": [trace, ...]}`, each trace
//! `{"traceID", "spans": [...], "processes": {"p1": {"serviceName", "tags"}}}` (`uimodel.Trace` in
//! Jaeger's internal/uimodel/model.go), or one such trace alone.
//!
//! Jaeger stores OpenTelemetry spans in its own model, by the Collector's translator
//! (`ProtoFromTraces` in opentelemetry-collector-contrib's pkg/translator/jaeger/
//! traces_to_jaegerproto.go, which Jaeger's `V1BatchesFromTraces` calls): attributes become `tags`
//! (`attributeToJaegerProtoTag`), the resource the span's process (`resourceToJaegerProtoProcess`),
//! each span event a log whose `event` field holds the event's name and the other fields its
//! attributes (`spanEventsToJaegerProtoLogs`), an ERROR status the tags `otel.status_code` "ERROR",
//! `error` true and `otel.status_description` (`getTagFromStatusCode`, `getErrorTagFromStatusCode`,
//! `getTagFromStatusMsg`). This reader turns each span back into the OTLP span it was and hands it
//! to the OTLP reader's rules (`otlp::span_events`): a span gives the same events in either
//! encoding, and what is learned of BullMQ's spans is written once.
//!
//! Jaeger keeps times in microseconds (`TimeAsEpochMicroseconds` truncates): a span read from
//! Jaeger is exact to the microsecond, where OTLP's are to the nanosecond. A span's end is its
//! `startTime` plus its `duration`.

use std::io::BufRead;

use serde_json::{Map, Value};

use super::json::{Reading, read_values};
use super::otlp::{NO_JOB_SPANS, cut, has_key, span_events};
use crate::error::Result;
use crate::ingest::log::rules::RuleSet;
use crate::ingest::{EventFormat, SourceKind, SourceSpec};
use crate::model::{Event, InputSummary, Origin, Text};

const EXPECTED: &str = "Jaeger JSON, {\"data\": [{\"traceID\": …, \"spans\": [...], \"processes\": {...}}]}";

pub struct JaegerJson;

impl EventFormat for JaegerJson {
    fn name(&self) -> &'static str {
        "jaeger-json"
    }

    fn kind(&self) -> SourceKind {
        SourceKind::Trace
    }

    /// None: a `.json` file is chosen by its content (`sniff_head`), before OTLP takes the ending.
    fn extensions(&self) -> &'static [&'static str] {
        &[]
    }

    fn sniff(&self, first_line: &str) -> bool {
        first_line.starts_with('{') && is_jaeger(first_line)
    }

    fn sniff_head(&self, head: &str) -> bool {
        let first = head.split(['\n', '\r']).map(str::trim).find(|line| !line.is_empty()).unwrap_or_default();
        if first == "{" { is_jaeger(head) } else { self.sniff(first) }
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
        read_values(spec, source, input, events, summary, &reading, |value, origin| {
            export_events(value, origin, &rules)
        })
    }
}

/// A Jaeger span's keys, spelled as Jaeger spells them (`traceID`, `spanID`, `operationName`):
/// none of them is an OTLP key.
fn is_jaeger(text: &str) -> bool {
    has_key(text, "traceID") && (has_key(text, "spanID") || has_key(text, "operationName") || has_key(text, "spans"))
}

/// The events of one export (the query API's answer, or one trace), or why it is not evidence.
fn export_events(value: &Value, origin: Origin, rules: &RuleSet) -> std::result::Result<Vec<Event>, String> {
    let object = value.as_object().ok_or_else(|| format!("not a JSON object; expected {EXPECTED}"))?;
    let mut events = Vec::new();
    if object.contains_key("spans") {
        trace_events(object, "", origin, rules, &mut events)?;
        return Ok(events);
    }
    let traces = match object.get("data") {
        Some(Value::Array(traces)) => traces.as_slice(),
        // The query API's answer to a trace it does not have: `{"data": null, "errors": [...]}`.
        None | Some(Value::Null) => {
            let error = object.get("errors").and_then(Value::as_array).and_then(|errors| errors.first());
            return Err(match error.and_then(|error| error.get("msg")).and_then(Value::as_str) {
                Some(message) => format!("the query API answered with an error: {}", cut(message)),
                None => format!("no 'data' list of traces; expected {EXPECTED}"),
            });
        }
        Some(_) => return Err(format!("'data' is not a list; expected {EXPECTED}")),
    };
    for (t, trace) in traces.iter().enumerate() {
        let trace = trace.as_object().ok_or_else(|| format!("data[{t}] is not an object"))?;
        trace_events(trace, &format!("data[{t}]."), origin, rules, &mut events)?;
    }
    Ok(events)
}

fn trace_events(
    trace: &Map<String, Value>,
    place: &str,
    origin: Origin,
    rules: &RuleSet,
    events: &mut Vec<Event>,
) -> std::result::Result<(), String> {
    let processes = match trace.get("processes") {
        None | Some(Value::Null) => None,
        Some(Value::Object(processes)) => Some(processes),
        Some(_) => return Err(format!("{place}processes is not an object")),
    };
    let spans = match trace.get("spans") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(spans)) => spans.as_slice(),
        Some(_) => return Err(format!("{place}spans is not a list")),
    };
    for (n, span) in spans.iter().enumerate() {
        let span = span.as_object().ok_or_else(|| format!("{place}spans[{n}] is not an object"))?;
        let name = span.get("operationName").and_then(Value::as_str).unwrap_or("no name");
        let otlp = otlp_span(span, processes).map_err(|why| format!("{place}spans[{n}] ({}): {why}", cut(name)))?;
        span_events(&otlp.span, otlp.instance, origin, rules, events)
            .map_err(|why| format!("{place}spans[{n}] ({}): {why}", cut(name)))?;
    }
    Ok(())
}

/// A Jaeger span as the OTLP span it was made from, and the instance its process names.
struct OtlpSpan {
    span: Map<String, Value>,
    instance: Option<Text>,
}

fn otlp_span(
    span: &Map<String, Value>,
    processes: Option<&Map<String, Value>>,
) -> std::result::Result<OtlpSpan, String> {
    let name = match span.get("operationName") {
        None | Some(Value::Null) => "",
        Some(Value::String(name)) => name.as_str(),
        Some(_) => return Err("'operationName' is not a string".into()),
    };
    let start = micros(span, "startTime")?;
    let duration = match span.get("duration") {
        None | Some(Value::Null) => 0,
        Some(_) => micros_of(span, "duration")?,
    };
    let end = start
        .checked_add(duration)
        .filter(|end| nanos_fit(*end))
        .ok_or("'startTime' plus 'duration' is past the year 2262 that a timeline holds: expected microseconds")?;
    let tags = key_values(span.get("tags"), "tags")?;
    let status_code = tags.iter().find(|(key, _)| key == "otel.status_code").map(|(_, value)| value);
    let error_tag = tags.iter().find(|(key, _)| key == "error").map(|(_, value)| value);
    // ERROR as Jaeger's translator writes it; a span from a Jaeger client says only `error`.
    let is_error = match status_code {
        Some(code) => code.get("stringValue").and_then(Value::as_str) == Some("ERROR"),
        None => error_tag.is_some_and(|value| {
            value.get("boolValue") == Some(&Value::Bool(true))
                || value.get("stringValue").and_then(Value::as_str) == Some("true")
        }),
    };
    let message = tags
        .iter()
        .find(|(key, _)| key == "otel.status_description")
        .and_then(|(_, value)| value.get("stringValue").cloned());
    let mut status = Map::new();
    status.insert("code".into(), Value::from(if is_error { 2 } else { 0 }));
    if let Some(message) = message {
        status.insert("message".into(), message);
    }

    let mut logs = Vec::new();
    match span.get("logs") {
        None | Some(Value::Null) => {}
        Some(Value::Array(listed)) => {
            for (n, log) in listed.iter().enumerate() {
                let log = log.as_object().ok_or_else(|| format!("logs[{n}] is not an object"))?;
                let at = micros(log, "timestamp").map_err(|why| format!("logs[{n}]: {why}"))?;
                let mut fields = key_values(log.get("fields"), "fields").map_err(|why| format!("logs[{n}]: {why}"))?;
                // The event's name is the `event` field the translator put first; a log without one
                // (a Jaeger client's own log) has no name.
                let name = match fields.iter().position(|(key, _)| key == "event") {
                    Some(at) => match fields.remove(at).1.remove("stringValue") {
                        Some(Value::String(name)) => name,
                        _ => return Err(format!("logs[{n}]: the 'event' field is not a string")),
                    },
                    None => String::new(),
                };
                let mut event = Map::new();
                event.insert("name".into(), Value::String(name));
                event.insert("timeUnixNano".into(), nanos_text(at));
                event.insert("attributes".into(), attributes(fields));
                logs.push(Value::Object(event));
            }
        }
        Some(_) => return Err("'logs' is not a list".into()),
    }

    let instance = process_instance(span, processes)?;
    let mut otlp = Map::new();
    otlp.insert("name".into(), Value::String(name.to_string()));
    otlp.insert("startTimeUnixNano".into(), nanos_text(start));
    otlp.insert("endTimeUnixNano".into(), nanos_text(end));
    otlp.insert("attributes".into(), attributes(tags));
    otlp.insert("events".into(), Value::Array(logs));
    otlp.insert("status".into(), Value::Object(status));
    Ok(OtlpSpan { span: otlp, instance })
}

/// The worker's identity from the span's process: the resource's `service.instance.id` or
/// `host.name`, or the `hostname` tag a Jaeger client writes. The process is the trace's entry
/// named by `processID`, or the span's own `process` (the API's embedded form).
fn process_instance(
    span: &Map<String, Value>,
    processes: Option<&Map<String, Value>>,
) -> std::result::Result<Option<Text>, String> {
    let process = match (span.get("process"), span.get("processID")) {
        (Some(Value::Object(process)), _) => Some(process),
        (_, None | Some(Value::Null)) => None,
        (_, Some(Value::String(id))) => match processes.and_then(|processes| processes.get(id)) {
            Some(Value::Object(process)) => Some(process),
            Some(_) => return Err(format!("process '{}' is not an object", cut(id))),
            None => return Err(format!("'processID' {} is not among the trace's processes", cut(id))),
        },
        (_, Some(_)) => return Err("'processID' is not a string".into()),
    };
    let Some(process) = process else { return Ok(None) };
    let tags = key_values(process.get("tags"), "process tags")?;
    let text = |key: &str| {
        tags.iter()
            .find(|(found, _)| found == key)
            .and_then(|(_, value)| value.get("stringValue")?.as_str().filter(|text| !text.is_empty()).map(Text::from))
    };
    Ok(text("service.instance.id").or_else(|| text("host.name")).or_else(|| text("hostname")))
}

/// A tag or field: its key and its value as an OTLP value (`{"stringValue": …}`).
type KeyValue = (String, Map<String, Value>);

/// A list of Jaeger key-values (`[{"key", "type", "value"}]`) as OTLP attribute values.
fn key_values(listed: Option<&Value>, what: &str) -> std::result::Result<Vec<KeyValue>, String> {
    let listed = match listed {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(listed)) => listed,
        Some(_) => return Err(format!("'{what}' is not a list")),
    };
    let mut found = Vec::with_capacity(listed.len());
    for (n, key_value) in listed.iter().enumerate() {
        let key = key_value
            .get("key")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("{what}[{n}] is not {{\"key\": \"…\", \"type\": \"string\", \"value\": …}}"))?;
        let value = otlp_value(key_value).map_err(|why| format!("{what}[{n}] ({}): {why}", cut(key)))?;
        found.push((key.to_string(), value));
    }
    Ok(found)
}

/// A Jaeger value as the OTLP value it was (`attributeToJaegerProtoTag` in reverse): its `type`
/// says which (`string`, `bool`, `int64`, `float64`, `binary`; Jaeger writes an int64 past 2^53 as
/// a string of digits); without a type, the JSON value's own.
fn otlp_value(key_value: &Value) -> std::result::Result<Map<String, Value>, String> {
    let value = key_value.get("value").unwrap_or(&Value::Null);
    let kind = match key_value.get("type") {
        None | Some(Value::Null) => None,
        Some(Value::String(kind)) => Some(kind.as_str()),
        Some(_) => return Err("'type' is not a string".into()),
    };
    let (otlp_key, fits) = match kind {
        Some("string") => ("stringValue", value.is_string()),
        Some("bool") => ("boolValue", value.is_boolean()),
        Some("int64") => (
            "intValue",
            value.is_i64()
                || value.is_u64()
                || value.as_str().is_some_and(|digits| {
                    let digits = digits.strip_prefix('-').unwrap_or(digits);
                    !digits.is_empty() && digits.len() <= 20 && digits.bytes().all(|b| b.is_ascii_digit())
                }),
        ),
        Some("float64") => ("doubleValue", value.is_number()),
        Some("binary") => ("bytesValue", value.is_string()),
        Some(other) => {
            return Err(format!("type '{}' is none of string, bool, int64, float64, binary", cut(other)));
        }
        None => match value {
            Value::String(_) => ("stringValue", true),
            Value::Bool(_) => ("boolValue", true),
            Value::Number(number) if number.is_i64() || number.is_u64() => ("intValue", true),
            Value::Number(_) => ("doubleValue", true),
            _ => ("stringValue", false),
        },
    };
    if !fits {
        return Err(format!(
            "a value that is not of its type {}",
            kind.unwrap_or("(none: a string, number or boolean)")
        ));
    }
    let mut otlp = Map::new();
    otlp.insert(otlp_key.into(), value.clone());
    Ok(otlp)
}

fn attributes(key_values: Vec<KeyValue>) -> Value {
    Value::Array(
        key_values
            .into_iter()
            .map(|(key, value)| {
                let mut attribute = Map::new();
                attribute.insert("key".into(), Value::String(key));
                attribute.insert("value".into(), Value::Object(value));
                Value::Object(attribute)
            })
            .collect(),
    )
}

/// A time in microseconds since 1970 (UTC), required and not 0.
fn micros(fields: &Map<String, Value>, key: &str) -> std::result::Result<u64, String> {
    match fields.get(key) {
        None | Some(Value::Null) => Err(format!("no '{key}': expected microseconds since 1970")),
        Some(_) => {
            let micros = micros_of(fields, key)?;
            if micros == 0 {
                return Err(format!("'{key}' is 0 (not set): expected microseconds since 1970"));
            }
            Ok(micros)
        }
    }
}

/// A count of microseconds: a JSON number (as Jaeger writes it) or a string of digits, that a
/// timeline holds in nanoseconds.
fn micros_of(fields: &Map<String, Value>, key: &str) -> std::result::Result<u64, String> {
    let micros = match fields.get(key) {
        Some(Value::Number(number)) => number.as_u64(),
        Some(Value::String(digits)) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
            digits.parse().ok()
        }
        _ => None,
    };
    micros.filter(|micros| nanos_fit(*micros)).ok_or_else(|| {
        format!("'{key}' is not a whole number of microseconds from 1970 to the year 2262 that a timeline holds")
    })
}

fn nanos_fit(micros: u64) -> bool {
    micros.checked_mul(1000).is_some_and(|nanos| i64::try_from(nanos).is_ok())
}

/// Microseconds as OTLP writes a time: nanoseconds as a string of digits.
fn nanos_text(micros: u64) -> Value {
    Value::String((micros * 1000).to_string())
}
