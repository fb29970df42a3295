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
    // The refused call as a log line names it, not the exception's whole message twice over.
    assert_eq!(stale["metrics"]["command"], "moveToFinished");
    let summary = stale["summary"].as_str().unwrap();
    assert!(summary.starts_with("BullMQ refused moveToFinished for job pr-4412 at "), "{summary}");
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

/// The same run's spans as Jaeger and Tempo answer for them (translated from `traces.jsonl` by
/// tests/e2e/otlp-to-jaeger-tempo.mjs; the exports' NOTES.md).
const EXPORTS: &str = "fixtures/bullmq-6.7.0-otel-stalled/exports";
/// The job's trace (its `add` and both `process` spans) and the stalled check's own trace.
const JOB_TRACE: &str = "1b34d62b4e43943c9b5a719c8d76e8b0";
const STALL_TRACE: &str = "dc3ce0eddce334cc9d5ad33beafb9f56";

/// The findings of `analyze` over these traces and the run's parameters, each evidence event
/// without its source's place (the file and line differ from one export to another).
fn findings_of(traces: &[String]) -> (Vec<Value>, Value) {
    findings_with(traces, &[])
}

fn findings_with(traces: &[String], more: &[&str]) -> (Vec<Value>, Value) {
    let mut args = vec!["analyze".to_string()];
    for trace in traces {
        args.extend(["--trace".to_string(), trace.clone()]);
    }
    args.extend(more.iter().map(ToString::to_string));
    args.extend(["--params", &format!("{CASE}/bullmq.json"), "--format", "json"].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = leasetrace(&args).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    let mut findings = report["findings"].as_array().unwrap().clone();
    for finding in &mut findings {
        for event in finding["evidence"].as_array_mut().unwrap() {
            let source = event["source"].as_object_mut().unwrap();
            source.remove("path");
            source.remove("line");
            event.as_object_mut().unwrap().remove("raw");
        }
    }
    (findings, report["inputs"].clone())
}

/// Jaeger keeps microseconds and a report writes milliseconds: every finding, figure and piece of
/// evidence of the OTLP spans is found again from each export of them.
#[test]
fn jaeger_and_tempo_exports_of_the_run_give_the_findings_and_figures_of_its_otlp_spans() {
    let (otlp, _) = findings_of(&[format!("{CASE}/traces.jsonl")]);
    let kinds: Vec<&str> = otlp.iter().map(|f| f["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["stalled-rerun", "stale-completion", "lock-headroom"]);
    assert_eq!(otlp[0]["metrics"]["stalled_logged"], true);
    let tempo = |version: &str| {
        [JOB_TRACE, STALL_TRACE].map(|trace| format!("{EXPORTS}/tempo-{version}-{trace}.json")).to_vec()
    };
    for (export, traces, format) in [
        ("jaeger", vec![format!("{EXPORTS}/jaeger.json")], "jaeger-json"),
        ("tempo v1", tempo("v1"), "otlp-json"),
        ("tempo v2", tempo("v2"), "otlp-json"),
    ] {
        let (findings, inputs) = findings_of(&traces);
        assert_eq!(findings, otlp, "{export}");
        for input in inputs.as_array().unwrap().iter().filter(|input| input["kind"] == "trace") {
            assert_eq!(input["format"], format, "{export}");
            assert_eq!((input["lines"].as_u64(), input["used"].as_u64()), (Some(1), Some(1)), "{export}");
        }
    }
    // The job's trace alone (what `GET /api/traces/<id>` of the job gives): the rerun from its two
    // process spans, with no record of the stall.
    let (findings, _) = findings_of(&[format!("{EXPORTS}/tempo-v1-{JOB_TRACE}.json")]);
    assert_eq!(findings[0]["kind"], "stalled-rerun");
    assert_eq!(findings[0]["metrics"]["rerun_at"], otlp[0]["metrics"]["rerun_at"]);
    assert_eq!(findings[0]["metrics"]["stalled_logged"], false);
}

/// What `curl … | jq .` and Grafana's download save: the export pretty-printed over many lines,
/// read whole, from a file or standard input, each of its lines accounted for.
#[test]
fn a_pretty_printed_export_is_read_whole_and_every_line_accounted_for() {
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = tempfile::tempdir().unwrap();
    let mut pretty = Vec::new();
    for (name, format) in [("jaeger.json", "jaeger-json"), (&*format!("tempo-v1-{JOB_TRACE}.json"), "otlp-json")] {
        let text = std::fs::read_to_string(format!("{root}/{EXPORTS}/{name}")).unwrap();
        let value: Value = serde_json::from_str(&text).unwrap();
        let text = serde_json::to_string_pretty(&value).unwrap() + "\n";
        let path = dir.path().join(name);
        std::fs::write(&path, &text).unwrap();
        pretty.push(path.to_str().unwrap().to_string());
        for from_stdin in [false, true] {
            let path = path.to_str().unwrap();
            let run = if from_stdin {
                leasetrace(&["timeline", "--trace", "-", "--format", "json"]).stdin(text.as_bytes()).run()
            } else {
                leasetrace(&["timeline", "--trace", path, "--format", "json"]).run()
            };
            assert_eq!(run.code, 0, "{}", run.stderr);
            let input = &run.json()["inputs"][0];
            assert_eq!(input["format"], format, "{name}");
            assert_eq!(input["lines"].as_u64(), Some(text.lines().count() as u64), "{name}");
            assert_eq!(input["used"], input["lines"], "{name}");
            assert_eq!(input["events"], if format == "jaeger-json" { 7 } else { 6 }, "{name}");
        }
    }
    let (findings, _) = findings_of(&pretty);
    assert_eq!(findings.len(), 3);

    // Each event is at its own span's line, with that span's JSON as its text.
    let run =
        leasetrace(&["analyze", "--trace", &pretty[0], "--params", &format!("{CASE}/bullmq.json"), "--format", "json"])
            .run();
    let report = run.json();
    let text = std::fs::read_to_string(&pretty[0]).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let rerun = report["findings"].as_array().unwrap().iter().find(|f| f["kind"] == "stalled-rerun").unwrap();
    let evidence = rerun["evidence"].as_array().unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for event in evidence {
        let line = usize::try_from(event["source"]["line"].as_u64().unwrap()).unwrap();
        seen.insert(line);
        assert_eq!(lines[line - 1].trim(), "{", "line {line} opens the span");
        assert!(lines[line].trim_start().starts_with("\"traceID\""), "line {line}: {}", lines[line]);
        let raw = event["raw"].as_str().unwrap();
        assert!(raw.len() < 10_000 && raw.contains("\"operationName\""), "the span's JSON, not the document: {raw}");
    }
    assert!(seen.len() >= 3, "the stall and the two attempts at their own lines: {seen:?}");

    // Past --max-line-bytes, the read stops with the fix rather than holding the document.
    let run = leasetrace(&["timeline", "--trace", &pretty[0], "--max-line-bytes", "4096"]).run();
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("a JSON document of more than 4 KiB from line 1"), "{}", run.stderr);
    assert!(run.stderr.contains("jaeger.json:"), "{}", run.stderr);
}

/// `init` knows a Jaeger and a Tempo export by their content and drafts a trace source of each;
/// two exports of the same spans are one source, not two.
#[test]
fn init_drafts_trace_sources_for_jaeger_and_tempo_exports() {
    let root = env!("CARGO_MANIFEST_DIR");
    let draft = |files: &[(String, &str)]| {
        let dir = tempfile::tempdir().unwrap();
        for (from, name) in files {
            std::fs::copy(format!("{root}/{from}"), dir.path().join(name)).unwrap();
        }
        std::fs::copy(format!("{root}/{CASE}/bullmq.json"), dir.path().join("bullmq.json")).unwrap();
        let run = leasetrace(&["init", dir.path().to_str().unwrap()]).run();
        assert_eq!(run.code, 0, "{}", run.stderr);
        let manifest = std::fs::read_to_string(dir.path().join("leasetrace.toml")).unwrap();
        let run = leasetrace(&["analyze", dir.path().to_str().unwrap(), "--format", "json"]).run();
        assert_eq!(run.code, 0, "{}", run.stderr);
        (manifest, run.json())
    };
    let source = |name: &str| format!("[[sources]]\nkind = \"trace\"\npath = \"{name}\"\n");

    let (manifest, report) = draft(&[(format!("{EXPORTS}/jaeger.json"), "download.json")]);
    assert!(manifest.contains(&source("download.json")), "{manifest}");
    assert!(manifest.contains("OpenTelemetry traces: Jaeger JSON"), "{manifest}");
    assert_eq!(report["inputs"][0]["format"], "jaeger-json");
    assert!(report["findings"].as_array().unwrap().iter().any(|f| f["kind"] == "stalled-rerun"));

    let tempo = [
        (format!("{EXPORTS}/tempo-v1-{JOB_TRACE}.json"), "job-trace.json"),
        (format!("{EXPORTS}/tempo-v2-{STALL_TRACE}.json"), "stall-trace.json"),
    ];
    let (manifest, report) = draft(&tempo);
    for name in ["job-trace.json", "stall-trace.json"] {
        assert!(manifest.contains(&source(name)), "{manifest}");
    }
    let rerun = report["findings"].as_array().unwrap().iter().find(|f| f["kind"] == "stalled-rerun").cloned();
    assert_eq!(rerun.expect("a stalled-rerun")["metrics"]["stalled_logged"], true);

    let (manifest, _) =
        draft(&[(format!("{EXPORTS}/jaeger.json"), "a-jaeger.json"), (format!("{CASE}/traces.jsonl"), "b-otlp.jsonl")]);
    assert!(manifest.contains(&source("a-jaeger.json")), "{manifest}");
    assert!(manifest.contains("b-otlp.jsonl: the same job moments as a-jaeger.json"), "{manifest}");
}

/// The shape as Jaeger's own repository holds it (fixtures/trace-exports-upstream): read by the
/// format it is, pretty-printed, every line ignored with its reason, none rejected. (Tempo's own
/// sample is AGPL-3.0 test data and is not copied; its shape is the one exports/tempo-v1-*.json
/// follow, from `MarshalToJSONV1`.)
#[test]
fn the_upstream_sample_of_jaegers_shape_is_read_and_every_line_accounted_for() {
    let run = leasetrace(&[
        "timeline",
        "--trace",
        "fixtures/trace-exports-upstream/jaeger-uimodel-ui_01.json",
        "--format",
        "json",
    ])
    .run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let input = &run.json()["inputs"][0];
    assert_eq!(input["format"], "jaeger-json");
    assert_eq!((input["lines"].as_u64(), input["ignored"].as_u64()), (Some(162), Some(162)));
    assert_eq!(input["rejected"], 0);
}

/// `curl` saves Jaeger's answer for a trace it does not have as readily as a trace: the file is
/// known by its envelope and its line rejected with Jaeger's own words.
#[test]
fn a_saved_trace_not_found_answer_is_rejected_with_jaegers_message() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.json");
    std::fs::write(
        &path,
        "{\"data\":null,\"total\":0,\"limit\":0,\"offset\":0,\"errors\":[{\"code\":404,\"msg\":\"trace not found\"}]}\n",
    )
    .unwrap();
    let run = leasetrace(&["timeline", "--trace", path.to_str().unwrap(), "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let input = &run.json()["inputs"][0];
    assert_eq!(input["format"], "jaeger-json");
    assert_eq!(input["rejections"][0]["line"], 1);
    assert_eq!(input["rejections"][0]["reason"], "the query API answered with an error: trace not found");
}

/// A Jaeger export beside the events stream of the same run: each activation is one event (the
/// stream's), as with the OTLP spans; the findings are those of the OTLP spans with the stream.
#[test]
fn a_jaeger_export_and_the_stream_of_the_same_run_reconcile_as_the_otlp_spans_do() {
    let events = format!("{CASE}/events.jsonl");
    let stream = ["--events", events.as_str(), "--queue", "pr-review"];
    let (otlp, _) = findings_with(&[format!("{CASE}/traces.jsonl")], &stream);
    let (jaeger, _) = findings_with(&[format!("{EXPORTS}/jaeger.json")], &stream);
    assert_eq!(jaeger, otlp);
    let reruns: Vec<&Value> = jaeger.iter().filter(|f| f["kind"] == "stalled-rerun").collect();
    assert_eq!(reruns.len(), 1, "one rerun, not one per channel");
    assert_eq!(reruns[0]["metrics"]["stalled_in_stream"], true);
}
