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

use super::json::{Places, Reading, read_values};
use super::otlp::{NO_JOB_SPANS, cut, has_key, span_events};
use crate::error::Result;
use crate::ingest::log::rules::RuleSet;
use crate::ingest::{EventFormat, SourceKind, SourceSpec};
use crate::model::{Event, InputSummary, Text};

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
        read_values(spec, source, input, events, summary, &reading, |value, places| {
            export_events(value, places, &rules)
        })
    }
}

/// A Jaeger span's keys, spelled as Jaeger spells them (`traceID`, `spanID`, `operationName`):
/// none of them is an OTLP key. Or the query API's envelope without a trace in it (`{"data":
/// null, "total": 0, "limit": 0, "offset": 0, "errors": [...]}`), read to say Jaeger's error.
fn is_jaeger(text: &str) -> bool {
    (has_key(text, "traceID") && (has_key(text, "spanID") || has_key(text, "operationName") || has_key(text, "spans")))
        || ["data", "total", "limit", "offset", "errors", "code", "msg"].iter().all(|key| has_key(text, key))
}

/// The events of one export (the query API's answer, or one trace), or why it is not evidence.
fn export_events(value: &Value, places: &Places, rules: &RuleSet) -> std::result::Result<Vec<Event>, String> {
    let object = value.as_object().ok_or_else(|| format!("not a JSON object; expected {EXPECTED}"))?;
    let mut events = Vec::new();
    let mut counted = 0;
    if object.contains_key("spans") {
        trace_events(object, "", places, &mut counted, rules, &mut events)?;
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
        trace_events(trace, &format!("data[{t}]."), places, &mut counted, rules, &mut events)?;
    }
    Ok(events)
}

/// The events of one trace's spans; `counted` is how many spans of the export came before them.
fn trace_events(
    trace: &Map<String, Value>,
    place: &str,
    places: &Places,
    counted: &mut usize,
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
        span_events(&otlp.span, otlp.instance, places.span(*counted), rules, events)
            .map_err(|why| format!("{place}spans[{n}] ({}): {why}", cut(name)))?;
        *counted += 1;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::trace::otlp::OtlpJson;
    use crate::model::EventKind;
    use std::path::PathBuf;

    fn read_as(format: &dyn EventFormat, text: &str) -> (Vec<Event>, InputSummary) {
        let spec = SourceSpec::new(SourceKind::Trace, PathBuf::from("jaeger.json"), None, String::new());
        let mut events = Vec::new();
        let mut summary = InputSummary::new("jaeger.json", "trace", format.name(), None);
        format.read(&spec, 0, Box::new(std::io::Cursor::new(text.to_string())), &mut events, &mut summary).unwrap();
        assert_eq!(summary.lines, summary.used + summary.ignored + summary.rejected, "every line accounted");
        (events, summary)
    }

    fn read(text: &str) -> (Vec<Event>, InputSummary) {
        read_as(&JaegerJson, text)
    }

    /// What an event says, its time to the microsecond Jaeger keeps.
    fn said(events: &[Event]) -> Vec<String> {
        let mut said: Vec<String> = events
            .iter()
            .map(|e| {
                format!(
                    "{:?} {} job={:?} queue={:?} worker={:?} instance={:?} attempt={:?} detail={:?}",
                    e.kind,
                    e.moment().nanos() / 1000,
                    e.job_id.as_deref(),
                    e.queue.as_deref(),
                    e.worker.as_deref(),
                    e.instance.as_deref(),
                    e.lease().attempt,
                    e.detail_str()
                )
            })
            .collect();
        said.sort();
        said
    }

    fn fixture(name: &str) -> String {
        std::fs::read_to_string(format!("{}/fixtures/bullmq-6.7.0-otel-stalled/{name}", env!("CARGO_MANIFEST_DIR")))
            .unwrap()
    }

    /// The real run's spans, exported by the SDK as OTLP and translated as Jaeger stores them:
    /// the same events, at the same microsecond.
    #[test]
    fn the_jaeger_export_of_a_run_gives_the_events_of_its_otlp_spans() {
        let (otlp, _) = read_as(&OtlpJson, &fixture("traces.jsonl"));
        let (jaeger, summary) = read(&fixture("exports/jaeger.json"));
        assert_eq!(jaeger.len(), 7);
        assert_eq!(said(&jaeger), said(&otlp));
        assert_eq!((summary.lines, summary.used), (1, 1));
        // Jaeger truncates to the microsecond: never later than the span's own nanosecond.
        let start = jaeger.iter().find(|e| e.kind == EventKind::LockRefused).unwrap().moment().nanos();
        assert_eq!(start % 1000, 0);
    }

    const PROCESSES: &str = r#"{"p1":{"serviceName":"review-worker","tags":[{"key":"service.instance.id","type":"string","value":"worker-a"}]},"p2":{"serviceName":"review-worker","tags":[{"key":"hostname","type":"string","value":"node-b"}]}}"#;

    fn span(tags: &str, logs: &str, process: &str) -> String {
        format!(
            r#"{{"traceID":"1b34","spanID":"3c01","operationName":"process pr-review","references":[],"startTime":1796547659117000,"duration":203656,"tags":[{{"key":"bullmq.queue.name","type":"string","value":"pr-review"}},{{"key":"bullmq.queue.operation","type":"string","value":"process"}},{{"key":"bullmq.job.id","type":"string","value":"pr-4412"}}{tags}],"logs":[{logs}],"processID":"{process}","warnings":null}}"#
        )
    }

    fn export(spans: &[&str]) -> String {
        format!(
            r#"{{"data":[{{"traceID":"1b34","spans":[{}],"processes":{PROCESSES}}}],"total":0,"errors":null}}"#,
            spans.join(",")
        )
    }

    #[test]
    fn tags_logs_status_and_process_say_what_the_otlp_span_said() {
        let attempts = r#",{"key":"bullmq.job.attempts.made","type":"int64","value":1},{"key":"bullmq.worker.name","type":"string","value":"worker-b"}"#;
        let completed = r#"{"timestamp":1796547659320488,"fields":[{"key":"event","type":"string","value":"job completed"},{"key":"bullmq.job.result","type":"string","value":"{}"}]}"#;
        let errored = r#",{"key":"otel.status_code","type":"string","value":"ERROR"},{"key":"error","type":"bool","value":true},{"key":"otel.status_description","type":"string","value":"boom"}"#;
        let refused = r#"{"timestamp":1796547659340000,"fields":[{"key":"event","type":"string","value":"exception"},{"key":"exception.message","type":"string","value":"Missing lock for job pr-4412. moveToFinished"}]}"#;
        let client_error = r#",{"key":"error","type":"bool","value":true}"#;
        let text = [
            export(&[&span(attempts, completed, "p2")]),
            export(&[&span(errored, refused, "p1")]),
            export(&[&span(client_error, "", "p1")]),
        ]
        .join("\n");
        let (events, summary) = read(&text);
        let seen: Vec<(EventKind, i64, Option<&str>)> =
            events.iter().map(|e| (e.kind, e.moment().nanos(), e.instance.as_deref())).collect();
        assert_eq!(
            seen,
            [
                (EventKind::JobActive, 1_796_547_659_117_000_000, Some("node-b")),
                (EventKind::JobCompleted, 1_796_547_659_320_488_000, Some("node-b")),
                (EventKind::JobActive, 1_796_547_659_117_000_000, Some("worker-a")),
                (EventKind::LockRefused, 1_796_547_659_340_000_000, Some("worker-a")),
                (EventKind::JobFailed, 1_796_547_659_320_656_000, Some("worker-a")),
                (EventKind::JobActive, 1_796_547_659_117_000_000, Some("worker-a")),
                (EventKind::JobFailed, 1_796_547_659_320_656_000, Some("worker-a")),
            ]
        );
        assert_eq!(events[0].lease().attempt, Some(1));
        assert_eq!(events[0].worker.as_deref(), Some("worker-b"));
        assert_eq!(events[4].detail_str(), Some("boom"), "the status description");
        assert_eq!((summary.lines, summary.used), (3, 3));
    }

    #[test]
    fn a_lone_trace_an_embedded_process_and_an_answer_without_data() {
        let embedded = span("", "", "").replace(
            r#""processID":"""#,
            r#""process":{"serviceName":"w","tags":[{"key":"host.name","type":"string","value":"node-c"}]}"#,
        );
        let lone = format!(r#"{{"traceID":"1b34","spans":[{embedded}]}}"#);
        let stall = r#"{"traceID":"dc3c","spanID":"1","operationName":"moveStalledJobsToWait pr-review","startTime":1796547659116000,"duration":5,"tags":[],"logs":[{"timestamp":1796547659116821,"fields":[{"key":"event","type":"string","value":"job stalled"},{"key":"bullmq.job.id","type":"string","value":"pr-4412"}]}],"processID":"p2"}"#;
        let text = format!(
            "{lone}\n{}\n{}\n{}\n",
            export(&[stall]),
            r#"{"data":null,"total":0,"limit":0,"offset":0,"errors":[{"code":404,"msg":"trace not found"}]}"#,
            r#"{"data":[{"traceID":"9","spans":[{"traceID":"9","spanID":"1","operationName":"GET /","startTime":1,"duration":1,"processID":"p1"}],"processes":{"p1":{"serviceName":"web"}}}]}"#
        );
        let (events, summary) = read(&text);
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].instance.as_deref(), Some("node-c"));
        assert_eq!((events[1].kind, events[1].moment().nanos()), (EventKind::JobStalled, 1_796_547_659_116_821_000));
        assert_eq!(events[1].instance.as_deref(), Some("node-b"), "a Jaeger client's hostname tag");
        assert_eq!(summary.rejections[0].line, 3);
        assert!(summary.rejections[0].reason.contains("answered with an error: trace not found"));
        assert_eq!(summary.ignored_by_reason[NO_JOB_SPANS], 1);
    }

    #[test]
    fn a_pretty_printed_download_is_read_whole() {
        let compact = export(&[&span("", "", "p1")]);
        let pretty = serde_json::to_string_pretty(&serde_json::from_str::<Value>(&compact).unwrap()).unwrap();
        assert!(JaegerJson.sniff_head(&pretty) && !OtlpJson.sniff_head(&pretty));
        let (events, summary) = read(&pretty);
        assert_eq!((events.len(), summary.used, summary.lines), (1, pretty.lines().count() as u64, summary.used));
    }

    #[test]
    fn hostile_exports_are_rejected_with_their_line_and_what_was_expected() {
        let good = export(&[&span("", "", "p1")]);
        let with = |from: &str, to: &str| export(&[&span("", "", "p1").replacen(from, to, 1)]);
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let huge_name = "process ".to_string() + &"q".repeat(1 << 20);
        let cases: Vec<(String, &str)> = vec![
            ("not json".into(), "not JSON"),
            ("[1]".into(), "not a JSON object"),
            (r#"{"data":{}}"#.into(), "'data' is not a list"),
            (r#"{"total":0}"#.into(), "no 'data' list of traces"),
            (r#"{"data":[7]}"#.into(), "data[0] is not an object"),
            (r#"{"data":[{"spans":{}}]}"#.into(), "data[0].spans is not a list"),
            (r#"{"data":[{"spans":[],"processes":[]}]}"#.into(), "data[0].processes is not an object"),
            (
                with(r#""startTime":1796547659117000"#, r#""startTime":"soon""#),
                "'startTime' is not a whole number of microseconds",
            ),
            (with(r#""startTime":1796547659117000"#, r#""startTime":1e300"#), "to the year 2262"),
            (with(r#""startTime":1796547659117000"#, r#""startTime":99999999999999999999"#), "to the year 2262"),
            (with(r#""startTime":1796547659117000"#, r#""startTime":-1"#), "not a whole number of microseconds"),
            (with(r#""startTime":1796547659117000"#, r#""startTime":0"#), "is 0 (not set)"),
            (with(r#""startTime":1796547659117000,"#, ""), "no 'startTime'"),
            (with(r#""duration":203656"#, r#""duration":9223372036854775"#), "plus 'duration' is past the year 2262"),
            (with(r#""tags":["#, r#""tags":{"a":1},"x":["#), "'tags' is not a list"),
            (
                with(r#""type":"string","value":"pr-4412""#, r#""type":"int64","value":"pr-4412""#),
                "(bullmq.job.id): a value that is not of its type int64",
            ),
            (
                with(r#""type":"string","value":"pr-4412""#, r#""type":"uuid","value":"pr-4412""#),
                "type 'uuid' is none of",
            ),
            (
                with(
                    r#"{"key":"bullmq.job.id","type":"string","value":"pr-4412"}"#,
                    r#"{"key":"bullmq.job.id","type":"string","value":null}"#,
                ),
                "not of its type string",
            ),
            (
                with(r#"{"key":"bullmq.job.id","type":"string","value":"pr-4412"}"#, r#"{"k":1}"#),
                "tags[2] is not {\"key\"",
            ),
            (with(r#""logs":[]"#, r#""logs":[{"fields":[]}]"#), "logs[0]: no 'timestamp'"),
            (
                with(
                    r#""logs":[]"#,
                    r#""logs":[{"timestamp":5,"fields":[{"key":"event","type":"bool","value":true}]}]"#,
                ),
                "the 'event' field is not a string",
            ),
            (with(r#""logs":[]"#, r#""logs":7"#), "'logs' is not a list"),
            (with(r#""processID":"p1""#, r#""processID":"p9""#), "'processID' p9 is not among the trace's processes"),
            (with(r#""processID":"p1""#, r#""processID":1"#), "'processID' is not a string"),
            (with(r#""operationName":"process pr-review""#, r#""operationName":7"#), "'operationName' is not a string"),
            (
                with(
                    r#"{"key":"bullmq.job.id","type":"string","value":"pr-4412"}"#,
                    r#"{"key":"other","type":"string","value":"x"}"#,
                ),
                "without 'bullmq.job.id'",
            ),
            (
                export(&[&span("", "", "p1").replacen("process pr-review", &huge_name, 1).replacen(
                    r#"{"key":"bullmq.job.id","type":"string","value":"pr-4412"}"#,
                    r#"{"key":"x","type":"string","value":"y"}"#,
                    1,
                )]),
                "process qqqq",
            ),
            (deep, "not JSON"),
        ];
        // In tens: a summary lists its first 20 rejections.
        for (chunk, cases) in cases.chunks(10).enumerate() {
            let text = cases.iter().map(|(line, _)| format!("{line}\n{good}\n")).collect::<Vec<_>>().concat();
            let (events, summary) = read(&text);
            assert_eq!(summary.rejected, cases.len() as u64);
            assert_eq!(events.len(), cases.len(), "the good exports between are read");
            for (number, (_, expected)) in cases.iter().enumerate() {
                let rejection = &summary.rejections[number];
                assert_eq!(rejection.line, 2 * number as u64 + 1);
                let case = chunk * 10 + number;
                assert!(rejection.reason.contains(expected), "case {case}: {} lacks {expected}", rejection.reason);
                assert!(rejection.reason.len() < 600, "case {case}: a reason of {} bytes", rejection.reason.len());
                if (7..=13).contains(&case) {
                    assert!(
                        rejection.reason.starts_with("data[0].spans[0] (process pr-review): "),
                        "{}",
                        rejection.reason
                    );
                }
            }
        }
    }

    #[test]
    fn the_format_is_told_by_its_keys() {
        let export = export(&[&span("", "", "p1")]);
        assert!(JaegerJson.sniff(&export));
        assert!(!OtlpJson.sniff(&export));
        assert!(!JaegerJson.sniff(r#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"1","spanId":"2"}]}]}]}"#));
        assert!(!JaegerJson.sniff(r#"{"level":30,"msg":"\"traceID\": 1 \"spans\": 2"}"#));
        assert!(
            JaegerJson.sniff(
                r#"{"data":null,"total":0,"limit":0,"offset":0,"errors":[{"code":404,"msg":"trace not found"}]}"#
            )
        );
    }
}
