//! Legacy Bull 4.16.5 and 3.23.3, end to end: `tests/e2e/bull-stalled.mjs` stages three incidents at once on
//! a Redis of its own (a frozen worker's job rerun by another, a job failed by the stall limit
//! inside the stalled check, and a frozen worker whose own second slot takes its job again under
//! the same lock token) and writes the listener log, the job hashes as a `redis-cli HGETALL` loop
//! dumps them, Bull's settings beside a `bull` dependency, and what each worker printed
//! (`truth.json`, epoch ms). The real binary, told nothing but those files, must find each incident
//! with Bull's models at the times the workers printed.

use super::*;

/// The epoch ms at which `worker` printed `what` (with `value`, when given) first: the clock
/// reading of its listener's log line, so a time read from that line is within 1 ms of it.
fn seen(truth: &Value, worker: &str, what: &str, value: Option<&str>) -> i64 {
    truth["seen"]
        .as_array()
        .and_then(|seen| {
            seen.iter().find(|s| {
                s["worker"] == worker
                    && s.get(what).is_some_and(|v| value.is_none_or(|value| v.as_str() == Some(value)))
            })
        })
        .and_then(|s| s["at"].as_i64())
        .unwrap_or_else(|| panic!("truth.json has no '{what}' {value:?} of {worker}:\n{truth:#}"))
}

/// The staged folder (removed when dropped, unless `LEASETRACE_E2E_KEEP` is set), its path and its
/// truth, or `None` when the services are not there (skipped).
fn staged(package: &str) -> Option<(Option<tempfile::TempDir>, std::path::PathBuf, Value)> {
    if !services_ready() {
        return None;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().expect("a temp dir");
    let harness = Command::new("node")
        .arg(root.join("tests/e2e/bull-stalled.mjs"))
        .arg(dir.path())
        .env("LEASETRACE_BIN", env!("CARGO_BIN_EXE_leasetrace"))
        .env("LEASETRACE_E2E_BULL", package)
        .current_dir(root.join("tests/e2e"))
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("e2e: cannot run `node tests/e2e/bull-stalled.mjs`: {e}"));
    if !harness.status.success() {
        let kept = dir.keep();
        panic!(
            "e2e: bull-stalled.mjs failed ({}); its files are kept in {}\n{}",
            harness.status,
            kept.display(),
            output_text(&harness)
        );
    }
    let truth: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("truth.json")).unwrap()).unwrap();
    std::fs::write(dir.path().join("leasetrace.toml"), MANIFEST).unwrap();
    if std::env::var_os("LEASETRACE_E2E_KEEP").is_some() {
        eprintln!("e2e: bull-stalled staged in {} (kept)", dir.path().display());
        return Some((None, dir.keep(), truth));
    }
    let path = dir.path().to_path_buf();
    Some((Some(dir), path, truth))
}

/// The sources a user of Bull has: no events stream (Bull's events are pub/sub only).
const MANIFEST: &str = "[[sources]]\nkind = \"log\"\npath = \"listener.log\"\ntz = \"UTC\"\n\n[[sources]]\nkind = \"bullmq-jobs\"\npath = \"jobs.txt\"\n\n[[sources]]\nkind = \"bullmq-params\"\npath = \"bull.json\"\n";

#[test]
fn e2e_bull4_stalled_rerun_stall_limit_and_shared_token_completion() {
    three_incidents("bull");
}

/// Bull 3 (3.23.3, the last 3.x) runs the same scripts under the same keys: the same three
/// incidents, read with the same model, give the same findings.
#[test]
fn e2e_bull3_stalled_rerun_stall_limit_and_shared_token_completion() {
    three_incidents("bull3");
}

fn three_incidents(package: &str) {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let Some((_dir, path, truth)) = staged(package) else { return };
    let path = path.to_str().unwrap();
    let version = truth["bull"].as_str().unwrap().to_string();
    let run = leasetrace(&["analyze", path, "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();

    // The staging did what it says: the shared-token completion passed, the rerun's finish did not.
    let p_completed = seen(&truth, "worker-p", "completed", Some("pr-303"));
    let p_refused = seen(&truth, "worker-p", "error", None);
    assert!(p_completed < p_refused, "worker-p's late completion came first and passed:\n{truth:#}");

    // Bull's models, named under Assumptions, from the `bull` dependency beside the settings.
    let assumptions = report["assumptions"].to_string();
    assert!(assumptions.contains(&format!("Bull {version}: lock renewal model: Bull lock extender")), "{assumptions}");
    assert!(
        assumptions
            .contains(&format!("Bull {version}: stall-limit model: Bull: the stalled check itself failed the job")),
        "{assumptions}"
    );
    assert!(report["params"].get("version").is_none(), "Bull's version is no BullMQ version: {:#}", report["params"]);
    assert_eq!(report["params"]["lockDuration"], truth["lockDuration"]);

    // pr-101: worker-a frozen, worker-b's check moved it and worker-b ran it again.
    let rerun = finding_where(&report, "stalled-rerun", "job_id", "pr-101");
    assert_near(rerun, "activated_at", seen(&truth, "worker-a", "active", Some("pr-101")), 1, "worker-a's activation");
    assert_near(rerun, "rerun_at", seen(&truth, "worker-b", "active", Some("pr-101")), 1, "worker-b's activation");
    // Bull's timer per job: the first renewal is due exactly lockRenewTime after activation.
    let activated = time(&rerun["metrics"]["activated_at"], "activated_at");
    let due = time(&rerun["metrics"]["first_renewal_due_at"], "first_renewal_due_at");
    assert_eq!((due - activated).num_milliseconds(), truth["lockDuration"].as_i64().unwrap() / 2);
    assert_eq!(rerun["metrics"]["first_renewal_earliest_at"], rerun["metrics"]["first_renewal_due_at"]);
    assert_eq!(rerun["metrics"]["processor_reran"], true);
    // worker-a's late finish, refused: another Queue's token held the job.
    let refused = finding_where(&report, "stale-completion", "job_id", "pr-101");
    assert_eq!((refused["severity"].as_str(), refused["metrics"]["accepted"].as_bool()), (Some("info"), Some(false)));
    assert_near(refused, "written_at", seen(&truth, "worker-a", "error", None), 1, "worker-a's refusal");

    // pr-202: run twice, both lost their lock; the second stall failed it inside the check.
    let limit = finding_where(&report, "stalled-limit-exceeded", "job_id", "pr-202");
    assert_near(limit, "failed_at", seen(&truth, "worker-e", "failed", Some("pr-202")), 50, "worker-e's failed event");
    assert_near(
        limit,
        "last_activated_at",
        seen(&truth, "worker-d", "active", Some("pr-202")),
        1,
        "worker-d's activation",
    );
    assert!(limit["summary"].as_str().unwrap().starts_with("Bull's stalled check failed job pr-202"), "{limit:#}");
    let stalled = finding_where(&report, "stalled-rerun", "job_id", "pr-202");
    assert_eq!(stalled["metrics"]["processor_reran"], true, "worker-d ran it before it was killed: {stalled:#}");

    // pr-303: one Queue ran it twice; its first slot's late completion was accepted.
    let shared = finding_where(&report, "stale-completion", "job_id", "pr-303");
    assert_eq!(shared["severity"], "warning", "{shared:#}");
    assert_eq!(shared["metrics"]["shared_token"], true, "{shared:#}");
    assert_near(shared, "accepted_completion_at", p_completed, 1, "worker-p's accepted completion");
    assert_near(shared, "written_at", p_refused, 1, "worker-p's refused finish");
    let rerun = finding_where(&report, "stalled-rerun", "job_id", "pr-303");
    let second = truth["seen"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["worker"] == "worker-p" && s["active"] == "pr-303")
        .nth(1)
        .and_then(|s| s["at"].as_i64())
        .expect("worker-p took pr-303 twice");
    assert_near(rerun, "rerun_at", second, 1, "worker-p's second activation");

    // `redis-cli MONITOR`, recorded during the run, read alone: Redis ran each activation and the
    // failing check a few ms before the worker's listener printed it.
    let monitor = format!("{path}/monitor.txt");
    let run = leasetrace(&[
        "analyze",
        "--monitor",
        &monitor,
        "--bull-version",
        &version,
        "--lock-duration",
        "2000",
        "--stalled-interval",
        "1000",
        "--format",
        "json",
    ])
    .run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let alone = run.json();
    // Measured 3–6 ms on an idle machine (the listener runs after the script's reply and a
    // job fetch); 100 ms leaves room for a loaded CI runner without admitting another event.
    let before = |finding: &Value, metric: &str, printed: i64, what: &str| {
        let at = time(&finding["metrics"][metric], metric);
        let lag = (epoch(printed) - at).num_milliseconds();
        assert!((0..=100).contains(&lag), "MONITOR's {metric} is {lag} ms before {what}\n{finding:#}");
    };
    let rerun = finding_where(&alone, "stalled-rerun", "job_id", "pr-101");
    before(rerun, "activated_at", seen(&truth, "worker-a", "active", Some("pr-101")), "worker-a's activation");
    before(rerun, "rerun_at", seen(&truth, "worker-b", "active", Some("pr-101")), "worker-b's activation");
    let limit = finding_where(&alone, "stalled-limit-exceeded", "job_id", "pr-202");
    before(limit, "failed_at", seen(&truth, "worker-e", "failed", Some("pr-202")), "worker-e's failed event");
    let input = &alone["inputs"][0];
    assert_eq!(input["format"], "redis-monitor");
    assert_eq!(input["rejected"], 0, "{input:#}");

    captured_with_bull(Path::new(path), &truth, &version);

    // Every line of the log and the dump accounted for (a parameters file counts keys); nothing
    // rejected.
    for input in report["inputs"].as_array().unwrap() {
        let count = |key: &str| input[key].as_u64().unwrap();
        if input["kind"] != "bullmq-params" {
            assert_eq!(count("lines"), count("used") + count("ignored") + count("rejected"), "{input:#}");
        }
        assert_eq!(count("rejected"), 0, "{input:#}");
    }
}

/// `leasetrace capture --bull VERSION` of each queue, run by the harness on the live Redis after
/// the incidents: each captured case, with the settings file beside it, is read with Bull's rules
/// and gives each finding the user's own `HGETALL` dump gives for that queue's job, to the
/// millisecond; without `--bull` the capture is refused, naming it.
fn captured_with_bull(dir: &Path, truth: &Value, version: &str) {
    let without = truth["capture"]["withoutBull"].as_str().unwrap();
    assert!(without.contains("no meta hash and no events stream") && without.contains("--bull VERSION"), "{without}");
    assert!(!dir.join("captured-without-bull").exists());
    let params = dir.join("bull.json");
    let dump = leasetrace(&[
        "analyze",
        "--jobs",
        dir.join("jobs.txt").to_str().unwrap(),
        "--params",
        params.to_str().unwrap(),
        "--format",
        "json",
    ])
    .run();
    assert_eq!(dump.code, 0, "{}", dump.stderr);
    let dump = dump.json();
    let key = |f: &Value| {
        (f["kind"].to_string(), f["at"].to_string(), f["metrics"]["job_id"].to_string(), f["metrics"].to_string())
    };
    for (queue, job) in [("review", "pr-101"), ("notify", "pr-202"), ("digest", "pr-303")] {
        let case = dir.join(format!("captured-{queue}"));
        let manifest = std::fs::read_to_string(case.join("leasetrace.toml")).unwrap();
        assert!(
            manifest.contains(&format!("bull_version = \"{version}\"")) && !manifest.contains("events.jsonl"),
            "{manifest}"
        );
        assert!(!case.join("events.jsonl").exists(), "no file for a stream Bull does not keep");
        let run =
            leasetrace(&["analyze", case.to_str().unwrap(), "--params", params.to_str().unwrap(), "--format", "json"])
                .run();
        assert_eq!(run.code, 0, "{queue}: {}", run.stderr);
        let report = run.json();
        let assumptions = report["assumptions"].to_string();
        assert!(
            assumptions.contains(&format!("Bull {version}: lock renewal model: Bull lock extender")),
            "{assumptions}"
        );
        assert!(assumptions.contains("legacy Bull keeps no events stream"), "{assumptions}");
        let found: Vec<_> =
            report["findings"].as_array().unwrap().iter().filter(|f| f["metrics"]["job_id"] == job).map(key).collect();
        let expected: Vec<_> =
            dump["findings"].as_array().unwrap().iter().filter(|f| f["metrics"]["job_id"] == job).map(key).collect();
        // The hashes alone show the stall limit (Bull's failedReason); the rerun and the shared
        // token need the listeners' log or MONITOR, which a capture of Redis cannot hold.
        // Bull 3 writes the reason alone, no finishedOn: the failure has no time in the hash, and
        // the report says so, naming the job.
        if queue == "notify" && version.starts_with('4') {
            assert!(found.iter().any(|f| f.0 == "\"stalled-limit-exceeded\""), "{queue}: {found:#?}");
        } else if queue == "notify" {
            assert!(
                assumptions.contains("1 job hash(es) hold a failedReason but no finishedOn")
                    && assumptions.contains("e.g. job pr-202: \\\"job stalled more than allowable limit\\\""),
                "{assumptions}"
            );
        }
        assert_eq!(found, expected, "{queue}: the capture and the user's dump give {job} the same findings");
        for input in report["inputs"].as_array().unwrap() {
            assert_eq!(input["rejected"], 0, "{input:#}");
        }
    }
    let limit = truth["capture"]["notify"].as_str().unwrap();
    assert!(limit.contains("captured queue 'notify'"), "{limit}");
}
