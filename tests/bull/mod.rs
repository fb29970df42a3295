//! Legacy Bull as evidence: the real Bull 4.16.5 fixture (tests/e2e/bull-stalled.mjs) analyzed
//! with Bull's models, its figures checked against what the workers printed (`observed.json`).

use serde_json::Value;

use super::leasetrace;

const CASE: &str = "fixtures/bull-4.16.5-stalled";

fn observed() -> Value {
    let text = std::fs::read_to_string(format!("{}/{CASE}/observed.json", env!("CARGO_MANIFEST_DIR"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The time `worker` printed `what` = `value` as the JSON report writes times (the n-th such).
fn printed(observed: &Value, worker: &str, what: &str, value: Option<&str>, nth: usize) -> String {
    let at = observed["seen"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["worker"] == worker && s.get(what).is_some_and(|v| value.is_none_or(|value| v == value)))
        .nth(nth)
        .and_then(|s| s["at"].as_i64())
        .unwrap_or_else(|| panic!("observed.json has no {what} {value:?} #{nth} of {worker}"));
    chrono::DateTime::from_timestamp_millis(at).unwrap().format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

fn finding<'a>(report: &'a Value, kind: &str, job: &str) -> &'a Value {
    let found: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == kind && f["metrics"]["job_id"] == job)
        .collect();
    assert_eq!(found.len(), 1, "{kind} of {job}: {report:#}");
    found[0]
}

#[test]
fn bull_fixture_is_read_with_bulls_models_at_the_times_the_workers_printed() {
    let run = leasetrace(&["analyze", CASE, "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    let seen = observed();
    let assumptions = report["assumptions"].to_string();
    assert!(
        assumptions.contains("Bull 4.16.5 (from `dependencies.bull`, line 3) selects legacy Bull"),
        "{assumptions}"
    );
    assert!(assumptions.contains("Bull 4.16.5: lock renewal model: Bull lock extender"), "{assumptions}");

    let rerun = finding(&report, "stalled-rerun", "pr-101");
    assert_eq!(
        rerun["metrics"]["activated_at"].as_str().unwrap(),
        printed(&seen, "worker-a", "active", Some("pr-101"), 0)
    );
    assert_eq!(rerun["metrics"]["rerun_at"].as_str().unwrap(), printed(&seen, "worker-b", "active", Some("pr-101"), 0));
    // Bull renews each job on a timer of its own: exactly lockRenewTime (1 s) after activation.
    assert_eq!(rerun["metrics"]["first_renewal_due_at"], "2026-12-06T09:39:51.166Z");
    assert_eq!(rerun["metrics"]["first_renewal_earliest_at"], rerun["metrics"]["first_renewal_due_at"]);

    let limit = finding(&report, "stalled-limit-exceeded", "pr-202");
    // The hash's finishedOn, the checker's clock reading before its listener's line (4 ms later).
    assert_eq!(limit["metrics"]["failed_at"], "2026-12-06T09:39:56.506Z");
    assert_eq!(printed(&seen, "worker-e", "failed", Some("pr-202"), 0), "2026-12-06T09:39:56.510Z");
    assert_eq!(
        limit["metrics"]["last_activated_at"].as_str().unwrap(),
        printed(&seen, "worker-d", "active", Some("pr-202"), 0)
    );
    assert_eq!(finding(&report, "stalled-rerun", "pr-202")["metrics"]["processor_reran"], true);

    let refused = finding(&report, "stale-completion", "pr-101");
    assert_eq!((refused["severity"].as_str(), refused["metrics"]["command"].as_str()), (Some("info"), Some("failed")));
    assert_eq!(refused["metrics"]["written_at"].as_str().unwrap(), printed(&seen, "worker-a", "error", None, 0));

    let shared = finding(&report, "stale-completion", "pr-303");
    assert_eq!(
        (shared["severity"].as_str(), shared["metrics"]["shared_token"].as_bool()),
        (Some("warning"), Some(true))
    );
    assert_eq!(
        shared["metrics"]["accepted_completion_at"].as_str().unwrap(),
        printed(&seen, "worker-p", "completed", Some("pr-303"), 0)
    );
    assert_eq!(
        finding(&report, "stalled-rerun", "pr-303")["metrics"]["rerun_at"].as_str().unwrap(),
        printed(&seen, "worker-p", "active", Some("pr-303"), 1)
    );
}

#[test]
fn bulls_own_job_json_is_read_and_its_refused_finish_said() {
    let run = leasetrace(&["timeline", "--jobs", &format!("{CASE}/jobs-review.json"), "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    let events = report["timeline"].as_array().unwrap();
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["job-added", "job-active", "job-completed"]);
    assert_eq!(events[2]["at"], "2026-12-06T09:39:54.933Z");
    assert!(events[2]["detail"].as_str().unwrap().contains("Missing lock for job pr-101 finished"), "{:#}", events[2]);
}

/// Milliseconds between two RFC 3339 times.
fn ms_between(a: &str, b: &str) -> i64 {
    let t = |s: &str| chrono::DateTime::parse_from_rfc3339(s).unwrap().timestamp_millis();
    t(b) - t(a)
}

#[test]
fn redis_monitor_alone_gives_bulls_reruns_and_stall_limit_at_redis_times() {
    let monitor = format!("{CASE}/monitor.txt");
    let run = leasetrace(&[
        "analyze",
        "--monitor",
        &monitor,
        "--bull-version",
        "4.16.5",
        "--lock-duration",
        "2000",
        "--stalled-interval",
        "1000",
        "--format",
        "json",
    ])
    .run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    let input = &report["inputs"][0];
    assert_eq!((input["kind"].as_str(), input["format"].as_str()), (Some("redis-monitor"), Some("redis-monitor")));
    assert_eq!(
        (input["lines"].as_u64(), input["events"].as_u64(), input["rejected"].as_u64()),
        (Some(393), Some(18), Some(0))
    );
    assert_eq!(input["lines"].as_u64(), Some(input["used"].as_u64().unwrap() + input["ignored"].as_u64().unwrap()));
    let seen = observed();
    // Redis's times of the moveToActive calls (lines 67 and 152), a few ms before each worker's
    // listener printed the activation on its own clock.
    let rerun = finding(&report, "stalled-rerun", "pr-101");
    assert_eq!(rerun["metrics"]["activated_at"], "2026-12-06T09:39:50.163Z");
    assert_eq!(rerun["metrics"]["rerun_at"], "2026-12-06T09:39:53.422Z");
    let lag = ms_between(
        rerun["metrics"]["activated_at"].as_str().unwrap(),
        &printed(&seen, "worker-a", "active", Some("pr-101"), 0),
    );
    assert!((0..=10).contains(&lag), "worker-a printed its activation {lag} ms after Redis ran it");
    let lag = ms_between(
        rerun["metrics"]["rerun_at"].as_str().unwrap(),
        &printed(&seen, "worker-b", "active", Some("pr-101"), 0),
    );
    assert!((0..=10).contains(&lag), "worker-b printed its activation {lag} ms after Redis ran it");
    assert!(rerun["evidence"].to_string().contains("monitor.txt"), "{rerun:#}");
    // The stalled check that failed pr-202 (line 309), 4 ms before worker-e's listener logged it.
    let limit = finding(&report, "stalled-limit-exceeded", "pr-202");
    assert_eq!(limit["metrics"]["failed_at"], "2026-12-06T09:39:56.507Z");
    assert_eq!(finding(&report, "stalled-rerun", "pr-303")["metrics"]["rerun_at"], "2026-12-06T09:39:53.743Z");
}

#[test]
fn init_recognises_a_monitor_recording_beside_bulls_other_exports_and_the_case_reads() {
    let dir = tempfile::tempdir().unwrap();
    for file in ["listener.log", "jobs.txt", "bull.json", "monitor.txt"] {
        std::fs::copy(format!("{}/{CASE}/{file}", env!("CARGO_MANIFEST_DIR")), dir.path().join(file)).unwrap();
    }
    let path = dir.path().to_str().unwrap();
    let run = leasetrace(&["init", path]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let manifest = std::fs::read_to_string(dir.path().join("leasetrace.toml")).unwrap();
    assert!(manifest.contains("kind = \"redis-monitor\"\npath = \"monitor.txt\""), "{manifest}");
    assert!(
        manifest.contains("redis-cli MONITOR output, 129 of 393 lines from Bull's lock scripts, 18 events"),
        "{manifest}"
    );
    let run = leasetrace(&["analyze", path, "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    // With MONITOR, the activations are Redis's (line 67 of monitor.txt), the shared token still seen.
    assert_eq!(finding(&report, "stalled-rerun", "pr-101")["metrics"]["activated_at"], "2026-12-06T09:39:50.163Z");
    assert_eq!(finding(&report, "stale-completion", "pr-303")["metrics"]["shared_token"], true);
    assert!(report["inputs"].as_array().unwrap().iter().all(|i| i["rejected"] == 0), "{:#}", report["inputs"]);
}

#[test]
fn a_line_that_is_no_monitor_output_is_rejected_with_its_line_and_what_was_expected() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("monitor.txt");
    std::fs::write(
        &path,
        "OK\n1796549993.412538 [0 lua] \"EXISTS\" \"bull:review:stalled-check\"\n1796549993.41 [0 127.0.0.1:1] \"GET\" \"x\"\n1796549993.412538 [0 127.0.0.1:1] \"GET \"x\"\nhello world\n",
    )
    .unwrap();
    let run = leasetrace(&["timeline", "--monitor", path.to_str().unwrap(), "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let input = &run.json()["inputs"][0];
    assert_eq!(
        (input["lines"].as_u64(), input["ignored"].as_u64(), input["rejected"].as_u64()),
        (Some(5), Some(2), Some(3))
    );
    assert_eq!(input["ignored_by_reason"]["a script's command without its call (the recording began inside it)"], 1);
    let rejections = input["rejections"].as_array().unwrap();
    let expected = "expected redis-cli MONITOR's `<epoch seconds>.<micros> [<db> <client>] \"command\" \"arg\" …`";
    for (rejection, (line, says)) in rejections.iter().zip([
        (3, "time \"1796549993.41\" is not epoch seconds with 6 decimals"),
        (4, "word 1 is followed by"),
        (5, "time \"hello\" has no microseconds"),
    ]) {
        assert_eq!(rejection["line"], line);
        let reason = rejection["reason"].as_str().unwrap();
        assert!(reason.starts_with(says) && reason.ends_with(expected), "{reason}");
    }
}

#[test]
fn lock_with_a_bull_version_plans_bulls_timer_per_job() {
    let run = leasetrace(&[
        "lock",
        "--bull-version",
        "4.16.5",
        "--lock-duration",
        "2000",
        "--stalled-interval",
        "1000",
        "--activated-at",
        "2026-12-06T09:39:50.166Z",
        "--format",
        "json",
    ])
    .run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let plan = run.json();
    assert_eq!(plan["renewal_model"], "per-job-timer (Bull)");
    // Bull's lock extender: exactly lockRenewTime (lockDuration / 2) after processing began.
    assert_eq!(plan["first_renewal_earliest_at"], "2026-12-06T09:39:51.166Z");
    assert_eq!(plan["first_renewal_due_at"], "2026-12-06T09:39:51.166Z");
    assert!(plan["notes"][0].as_str().unwrap().starts_with("Bull lock extender"), "{plan:#}");
    // The two libraries exclude each other.
    let both = leasetrace(&[
        "lock",
        "--bull-version",
        "4.16.5",
        "--bullmq-version",
        "5.81.5",
        "--activated-at",
        "2026-12-06T09:39:50Z",
    ])
    .run();
    assert_eq!(both.code, 2, "{}", both.stderr);
    assert!(both.stderr.contains("--bull-version") && both.stderr.contains("--bullmq-version"), "{}", both.stderr);
}
