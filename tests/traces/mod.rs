//! OpenTelemetry traces as evidence: the real bullmq-otel fixture (tests/e2e/otel-stalled.mjs)
//! analyzed from its spans alone, its figures checked against the spans read from the file here.

use serde_json::Value;

use super::leasetrace;

const CASE: &str = "fixtures/bullmq-6.7.0-otel-stalled";

/// A span or span event time (nanoseconds since 1970, as OTLP JSON writes them) as the JSON
/// report writes a time: RFC 3339 UTC to the millisecond.
fn millis(nanos: &Value) -> String {
    let nanos: i64 = nanos.as_str().unwrap().parse().unwrap();
    chrono::DateTime::from_timestamp_nanos(nanos).format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

fn attribute<'a>(attributes: &'a Value, key: &str) -> Option<&'a str> {
    attributes.as_array()?.iter().find(|a| a["key"] == key)?["value"]["stringValue"].as_str()
}

/// What the fixture's spans say of job pr-4412: each `process` span's (instance, start, the
/// times of its `exception` events), in start order, and the `job stalled` event's time.
struct Spans {
    attempts: Vec<(String, Value, Vec<Value>)>,
    stalled: Vec<Value>,
}

fn spans() -> Spans {
    let text = std::fs::read_to_string(format!("{}/{CASE}/traces.jsonl", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let mut found = Spans { attempts: Vec::new(), stalled: Vec::new() };
    for line in text.lines() {
        let body: Value = serde_json::from_str(line).unwrap();
        for resource in body["resourceSpans"].as_array().unwrap() {
            let instance = attribute(&resource["resource"]["attributes"], "service.instance.id").unwrap().to_string();
            for scope in resource["scopeSpans"].as_array().unwrap() {
                for span in scope["spans"].as_array().unwrap() {
                    let name = span["name"].as_str().unwrap();
                    let events = span["events"].as_array().unwrap();
                    if name == "process pr-review" && attribute(&span["attributes"], "bullmq.job.id") == Some("pr-4412")
                    {
                        let exceptions =
                            events.iter().filter(|e| e["name"] == "exception").map(|e| e["timeUnixNano"].clone());
                        found.attempts.push((
                            instance.clone(),
                            span["startTimeUnixNano"].clone(),
                            exceptions.collect(),
                        ));
                    }
                    for event in events.iter().filter(|e| e["name"] == "job stalled") {
                        assert_eq!(attribute(&event["attributes"], "bullmq.job.id"), Some("pr-4412"));
                        found.stalled.push(event["timeUnixNano"].clone());
                    }
                }
            }
        }
    }
    found.attempts.sort_by_key(|(_, start, _)| start.as_str().unwrap().parse::<u64>().unwrap());
    found
}

#[test]
fn a_stalled_rerun_is_found_from_the_spans_alone_to_the_millisecond() {
    let spans = spans();
    assert_eq!(spans.attempts.len(), 2, "two process spans of the job");
    assert_eq!(spans.stalled.len(), 1, "one job stalled event");
    let (first, rerun) = (&spans.attempts[0], &spans.attempts[1]);
    assert_eq!((first.0.as_str(), rerun.0.as_str()), ("worker-a", "worker-b"));

    let run = leasetrace(&["analyze", CASE, "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    let findings = report["findings"].as_array().unwrap();
    let rerun_finding = findings.iter().find(|f| f["kind"] == "stalled-rerun").expect("a stalled-rerun finding");
    let metrics = &rerun_finding["metrics"];
    assert_eq!(metrics["job_id"], "pr-4412");
    assert_eq!(metrics["queue"], "pr-review");
    assert_eq!(metrics["activated_at"], millis(&first.1).as_str());
    assert_eq!(metrics["rerun_at"], millis(&rerun.1).as_str());
    assert_eq!(rerun_finding["at"], millis(&rerun.1).as_str());
    // The lost attempt's worker was refused after the rerun: its last refusal is the last it wrote.
    assert_eq!(metrics["old_worker_last_seen_at"], millis(first.2.last().unwrap()).as_str());
    assert_eq!(metrics["stalled_logged"], true, "the job stalled event is the stall's own record");
    let evidence = rerun_finding["evidence"].as_array().unwrap();
    let stalled = evidence.iter().find(|e| e["kind"] == "job-stalled").expect("the job stalled event as evidence");
    assert_eq!(stalled["at"], millis(&spans.stalled[0]).as_str());
    for event in evidence {
        assert_eq!(event["source"]["path"], format!("{CASE}/traces.jsonl"));
        assert!(event["source"]["line"].as_u64().is_some_and(|line| line >= 1));
    }

    // The late worker's refusals are the stale completion BullMQ fenced off, at the exceptions' times.
    let stale = findings.iter().find(|f| f["kind"] == "stale-completion").expect("a stale-completion finding");
    assert_eq!(stale["at"], millis(&first.2[0]).as_str());
    assert_eq!(stale["evidence"][0]["worker"], "worker-a");
    assert_eq!(stale["evidence"][0]["source"]["instance"], "worker-a");
}

#[test]
fn every_line_of_a_trace_is_used_ignored_or_rejected() {
    let path = format!("{CASE}/traces.jsonl");
    let lines = std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap().lines().count();
    let run = leasetrace(&["timeline", "--trace", &path, "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let input = &run.json()["inputs"][0];
    assert_eq!((input["kind"].as_str(), input["format"].as_str()), (Some("trace"), Some("otlp-json")));
    let count = |key: &str| input[key].as_u64().unwrap();
    assert_eq!(count("lines"), lines as u64);
    assert_eq!(count("lines"), count("used") + count("ignored") + count("rejected"));
    assert_eq!(count("rejected"), 0);
    assert_eq!(count("used"), 4, "the add, the stalled check that moved the job, and the two process spans' lines");
    assert_eq!(count("events"), 7);
}

#[test]
fn a_trace_is_read_from_standard_input_and_a_broken_line_is_rejected_with_its_number() {
    let path = format!("{}/{CASE}/traces.jsonl", env!("CARGO_MANIFEST_DIR"));
    let mut text = std::fs::read(path).unwrap();
    let lines = std::str::from_utf8(&text).unwrap().lines().count() as u64;
    text.extend_from_slice(b"{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{\"name\":\"process pr-review\",\"startTimeUnixNano\":\"1\"}]}]}]}\n");
    let run = leasetrace(&["timeline", "--trace", "-", "--format", "json"]).stdin(&text).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let input = &run.json()["inputs"][0];
    assert_eq!(input["rejected"], 1);
    assert_eq!(input["rejections"][0]["line"], lines + 1);
    let reason = input["rejections"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("process pr-review") && reason.contains("bullmq.job.id"), "{reason}");
}

/// The events stream of the same run beside the trace: each activation is one, the stream's (on
/// Redis's clock, to the millisecond), within a few milliseconds of its span's start; the rerun is
/// found once, its stall now in the stream too.
#[test]
fn a_trace_and_the_stream_of_the_same_run_give_one_rerun() {
    let spans = spans();
    let run = leasetrace(&[
        "analyze",
        "--trace",
        &format!("{CASE}/traces.jsonl"),
        "--events",
        &format!("{CASE}/events.jsonl"),
        "--queue",
        "pr-review",
        "--params",
        &format!("{CASE}/bullmq.json"),
        "--format",
        "json",
    ])
    .run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    let reruns: Vec<&Value> =
        report["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == "stalled-rerun").collect();
    assert_eq!(reruns.len(), 1, "one rerun, not one per channel");
    let metrics = &reruns[0]["metrics"];
    assert_eq!(metrics["stalled_in_stream"], true);
    let nanos = |at: &Value| chrono::DateTime::parse_from_rfc3339(at.as_str().unwrap()).unwrap().timestamp_nanos_opt();
    for (key, span) in [("activated_at", &spans.attempts[0]), ("rerun_at", &spans.attempts[1])] {
        let span_start: i64 = span.1.as_str().unwrap().parse().unwrap();
        let apart_ms = (nanos(&metrics[key]).unwrap() - span_start).abs() / 1_000_000;
        assert!(apart_ms <= 5, "{key} {} is {apart_ms} ms from its span's start", metrics[key]);
    }
}

/// `init` knows a trace by its content, whatever its name, and drafts a manifest that reads it;
/// given where a case is expected, the trace is named with the flag that reads it.
#[test]
fn init_drafts_a_trace_source_and_a_trace_given_as_the_case_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let root = env!("CARGO_MANIFEST_DIR");
    std::fs::copy(format!("{root}/{CASE}/traces.jsonl"), dir.path().join("otel-export.json")).unwrap();
    std::fs::copy(format!("{root}/{CASE}/bullmq.json"), dir.path().join("bullmq.json")).unwrap();
    let folder = dir.path().to_str().unwrap();
    let run = leasetrace(&["init", folder]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let manifest = std::fs::read_to_string(dir.path().join("leasetrace.toml")).unwrap();
    assert!(manifest.contains("[[sources]]\nkind = \"trace\"\npath = \"otel-export.json\"\n"), "{manifest}");
    let run = leasetrace(&["analyze", folder, "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.json()["findings"].as_array().unwrap().iter().any(|f| f["kind"] == "stalled-rerun"));

    let trace = format!("{CASE}/traces.jsonl");
    let run = leasetrace(&["analyze", &trace]).run();
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("this looks like OpenTelemetry traces (OTLP JSON), not a case"), "{}", run.stderr);
    assert!(run.stderr.contains(&format!("`leasetrace analyze --trace {trace}`")), "{}", run.stderr);
}
