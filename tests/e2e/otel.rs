//! BullMQ 6 with `bullmq-otel`, end to end: `tests/e2e/otel-stalled.mjs` freezes the worker of a
//! job past its lock, lets a second worker's stalled check move it and rerun it, thaws the first
//! (whose completion BullMQ refuses), and writes what the OpenTelemetry SDK exported as OTLP JSON
//! lines with what it observed itself (`truth.json`, epoch ms). The trace alone, read by the real
//! binary, must give the rerun and the refusal at the times the worker processes printed.

use super::*;

/// The epoch ms at which `worker` printed `what` for the job (its first such line).
fn seen(truth: &Value, worker: &str, what: &str) -> i64 {
    truth["seen"]
        .as_array()
        .and_then(|seen| seen.iter().find(|s| s["worker"] == worker && s.get(what).is_some()))
        .and_then(|s| s["at"].as_i64())
        .unwrap_or_else(|| panic!("truth.json has no '{what}' of {worker}:\n{truth:#}"))
}

#[test]
fn e2e_bullmq6_otel_stalled_rerun_from_the_trace_alone() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    if !services_ready() {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().expect("a temp dir");
    let harness = Command::new("node")
        .arg(root.join("tests/e2e/otel-stalled.mjs"))
        .arg(dir.path())
        .current_dir(root.join("tests/e2e"))
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("e2e: cannot run `node tests/e2e/otel-stalled.mjs`: {e}"));
    if !harness.status.success() {
        let kept = dir.keep();
        panic!(
            "e2e: otel-stalled.mjs failed ({}); its files are kept in {}\n{}",
            harness.status,
            kept.display(),
            output_text(&harness)
        );
    }
    let truth: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("truth.json")).unwrap()).unwrap();
    std::fs::write(
        dir.path().join("leasetrace.toml"),
        "[[sources]]\nkind = \"trace\"\npath = \"traces.jsonl\"\n\n[[sources]]\nkind = \"bullmq-params\"\npath = \"bullmq.json\"\n",
    )
    .unwrap();
    let run = leasetrace(&["analyze", dir.path().to_str().unwrap(), "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    let rerun = finding_where(&report, "stalled-rerun", "job_id", truth["job"].as_str().unwrap());
    // A processor prints its line a few ms after BullMQ opened the attempt's span.
    assert_near(rerun, "activated_at", seen(&truth, "worker-a", "active"), 50, "worker-a's activation");
    assert_near(rerun, "rerun_at", seen(&truth, "worker-b", "active"), 50, "worker-b's activation");
    assert_eq!(rerun["metrics"]["lost_lock_cause"], "lived-on-without-renewing", "{rerun:#}");
    let refused = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "stale-completion")
        .unwrap_or_else(|| panic!("no stale-completion:\n{report:#}"));
    let refused_at = time(&refused["at"], "the refusal");
    let printed = truth["seen"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["worker"] == "worker-a" && s["error"].as_str().is_some_and(|e| e.starts_with("Missing lock")))
        .and_then(|s| s["at"].as_i64())
        .expect("worker-a printed its refusal");
    let off = (refused_at - epoch(printed)).num_milliseconds();
    assert!((-50..=50).contains(&off), "the refusal at {refused_at} is {off} ms from the printed one");
    let input = &report["inputs"][0];
    let count = |key: &str| input[key].as_u64().unwrap();
    assert_eq!(count("lines"), count("used") + count("ignored") + count("rejected"));
    assert_eq!(count("rejected"), 0, "{input:#}");

    // The same run's spans as Jaeger answers for them (tests/e2e/otlp-to-jaeger-tempo.mjs, the
    // translation the fixtures' exports were made with): the same rerun, to the millisecond.
    let translated = Command::new("node")
        .arg(root.join("tests/e2e/otlp-to-jaeger-tempo.mjs"))
        .arg(dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("e2e: cannot run `node tests/e2e/otlp-to-jaeger-tempo.mjs`: {e}"));
    assert!(translated.status.success(), "{}", output_text(&translated));
    let jaeger = dir.path().join("exports/jaeger.json");
    let params = dir.path().join("bullmq.json");
    let run = leasetrace(&[
        "analyze",
        "--trace",
        jaeger.to_str().unwrap(),
        "--params",
        params.to_str().unwrap(),
        "--format",
        "json",
    ])
    .run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    assert_eq!(report["inputs"][0]["format"], "jaeger-json");
    let from_jaeger = finding_where(&report, "stalled-rerun", "job_id", truth["job"].as_str().unwrap());
    for key in ["activated_at", "rerun_at", "old_worker_last_seen_at"] {
        assert_eq!(from_jaeger["metrics"][key], rerun["metrics"][key], "{key}");
    }
}
