//! BullMQ 6 on PostgreSQL, end to end: `tests/e2e/pg-stalled.mjs` runs BullMQ 6.7.0 with
//! `createPostgresBackend` on a PostgreSQL of its own: a worker frozen past its lock whose job a
//! second worker's stalled check moves and reruns, and whose late completion BullMQ refuses with
//! `Lock mismatch`; and a job whose two workers are killed in turn, failed over the stall limit.
//! It exports the backend's tables with psql (`\copy … CSV HEADER`, `row_to_json` lines,
//! `json_agg`), and writes what it observed (`truth.json`: what each process printed, and the
//! event rows as it read them itself, epoch ms). The real binary reads the exports; its figures
//! are compared with the observations: to the millisecond with the rows the harness read itself,
//! within 200 ms with what the worker processes printed.

use super::*;

/// The epoch ms at which `worker` printed `what` (its first such line), with the printed value.
fn seen<'a>(truth: &'a Value, worker: &str, what: &str) -> (i64, &'a Value) {
    truth["seen"]
        .as_array()
        .and_then(|seen| seen.iter().find(|s| s["worker"] == worker && s.get(what).is_some()))
        .map_or_else(
            || panic!("truth.json has no '{what}' of {worker}:\n{truth:#}"),
            |s| (s["at"].as_i64().unwrap(), &s[what]),
        )
}

/// The epoch ms of the `nth` (0-based) row of `event` for `job` that the harness read itself.
fn recorded(truth: &Value, job: &str, event: &str, nth: usize) -> i64 {
    truth["recorded"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|row| row["jobId"] == job && row["event"] == event)
        .nth(nth)
        .and_then(|row| row["at"].as_i64())
        .unwrap_or_else(|| panic!("the harness recorded no {event} #{nth} of {job}:\n{truth:#}"))
}

fn findings<'a>(report: &'a Value, kind: &str, job: &str) -> Vec<&'a Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == kind && f["metrics"]["job_id"] == job)
        .collect()
}

fn exact(finding: &Value, name: &str, expected: i64, observed_as: &str) {
    assert_near(finding, name, expected, 0, observed_as);
}

#[test]
fn e2e_bullmq6_postgres_stalls_from_the_backends_tables() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    if !services_ready() {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().expect("a temp dir");
    let harness = Command::new("node")
        .arg(root.join("tests/e2e/pg-stalled.mjs"))
        .arg(dir.path())
        .env("LEASETRACE_BIN", env!("CARGO_BIN_EXE_leasetrace"))
        .current_dir(root.join("tests/e2e"))
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("e2e: cannot run `node tests/e2e/pg-stalled.mjs`: {e}"));
    if !harness.status.success() {
        let kept = dir.keep();
        panic!(
            "e2e: pg-stalled.mjs failed ({}); its files are kept in {}\n{}",
            harness.status,
            kept.display(),
            output_text(&harness)
        );
    }
    let truth: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("truth.json")).unwrap()).unwrap();
    let (lock_ms, interval_ms) = (truth["lockDuration"].as_i64().unwrap(), truth["stalledInterval"].as_i64().unwrap());
    let run = leasetrace(&["analyze", dir.path().to_str().unwrap(), "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();

    // The stalled rerun: both activations and the stall at the database's milliseconds, each
    // within 50 ms of what the worker printed; the lock's true expiry (worker-a was frozen before
    // its first renewal, 500 ms after the activation at the earliest) inside the window the
    // binary gives, and the move inside the PostgreSQL model's stalled-check window.
    let review = truth["reviewJob"].as_str().unwrap();
    let reruns = findings(&report, "stalled-rerun", review);
    assert_eq!(reruns.len(), 1, "{report:#}");
    let rerun = reruns[0];
    let activated = recorded(&truth, review, "active", 0);
    exact(rerun, "activated_at", activated, "worker-a's active row");
    exact(rerun, "rerun_at", recorded(&truth, review, "active", 1), "worker-b's active row");
    // A processor prints its line once BullMQ's call has returned: a few ms later (200 allowed
    // for a busy machine).
    assert_near(rerun, "activated_at", seen(&truth, "worker-a", "active").0, 200, "worker-a's activation");
    assert_near(rerun, "rerun_at", seen(&truth, "worker-b", "active").0, 200, "worker-b's activation");
    let frozen = truth["stoppedAt"].as_i64().unwrap();
    let metric = |f: &Value, name: &str| time(&f["metrics"][name], name);
    // Frozen before its first renewal could come (lockRenewTime / 2 = lockDuration / 4 after the
    // activation): the lock ran out at the activation + lockDuration, which the window must hold.
    assert!(
        frozen < activated + lock_ms / 4,
        "worker-a was frozen only {} ms after its activation",
        frozen - activated
    );
    let expiry = epoch(activated + lock_ms);
    assert!(
        metric(rerun, "lock_expired_earliest_at") <= expiry && expiry <= metric(rerun, "lock_expired_latest_at"),
        "{rerun:#}"
    );
    let moved = epoch(recorded(&truth, review, "stalled", 0));
    assert!(
        metric(rerun, "stalled_check_window_start_at") <= moved
            && moved <= metric(rerun, "stalled_check_window_end_at"),
        "{rerun:#}"
    );
    assert_eq!(rerun["metrics"]["rerun_in_stalled_window"], true, "{rerun:#}");
    assert_eq!(rerun["metrics"]["stalled_in_stream"], true, "the event table's 'stalled' row:\n{rerun:#}");
    // 2 × stalledInterval ≤ lockDuration: the window ends 2 × stalledInterval after the latest expiry.
    let end = metric(rerun, "lock_expired_latest_at") + chrono::TimeDelta::milliseconds(2 * interval_ms);
    assert_eq!(metric(rerun, "stalled_check_window_end_at"), end, "{rerun:#}");

    // The stale completion: worker-a's finishing call refused with `Lock mismatch`, at the
    // millisecond its log line (written when it printed the error) says.
    let (refused_at, message) = seen(&truth, "worker-a", "error");
    let refused = truth["seen"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["worker"] == "worker-a" && s["error"].as_str().is_some_and(|e| e.starts_with("Lock mismatch")))
        .and_then(|s| s["at"].as_i64())
        .unwrap_or_else(|| panic!("worker-a printed no Lock mismatch (first error: {message} at {refused_at})"));
    let stale = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "stale-completion")
        .expect("a stale-completion");
    assert_eq!(time(&stale["at"], "stale-completion"), epoch(refused), "{stale:#}");
    assert_eq!(stale["severity"], "info", "refused, so the fence held:\n{stale:#}");

    // The stall limit: two stalls of sweep-1 on the database's clock, then the failure on
    // worker-e's taking the job, the processor not called.
    let sweep = truth["sweepJob"].as_str().unwrap();
    let limit = finding_where(&report, "stalled-limit-exceeded", "job_id", sweep);
    assert_eq!(limit["metrics"]["stalls_seen"], 2, "{limit:#}");
    assert_eq!(limit["metrics"]["max_stalled_count"], truth["maxStalledCount"], "{limit:#}");
    assert_eq!(limit["metrics"]["reason"], "job stalled more than allowable limit", "{limit:#}");
    exact(limit, "failed_at", recorded(&truth, sweep, "failed", 0), "the failed row");
    exact(limit, "last_activated_at", recorded(&truth, sweep, "active", 2), "worker-e's active row");
    assert_near(limit, "failed_at", seen(&truth, "worker-e", "failed").0, 200, "worker-e's failed event");
    assert!(
        !truth["seen"].as_array().unwrap().iter().any(|s| s["worker"] == "worker-e" && s["active"] == sweep),
        "worker-e's processor ran"
    );
    let sweeps = findings(&report, "stalled-rerun", sweep);
    assert_eq!(sweeps.len(), 2, "{report:#}");
    for (nth, rerun) in sweeps.iter().enumerate() {
        let moved = epoch(recorded(&truth, sweep, "stalled", nth));
        assert!(
            metric(rerun, "stalled_check_window_start_at") <= moved
                && moved <= metric(rerun, "stalled_check_window_end_at"),
            "{rerun:#}"
        );
    }

    // The model is said, every line is accounted for, and the JSON exports give the same findings.
    let assumptions = report["assumptions"].as_array().unwrap();
    assert!(
        assumptions.iter().any(|a| a.as_str().is_some_and(|a| a.starts_with("BullMQ on PostgreSQL"))),
        "{assumptions:#?}"
    );
    for input in report["inputs"].as_array().unwrap().iter().filter(|input| input["kind"] != "bullmq-params") {
        let count = |key: &str| input[key].as_u64().unwrap();
        assert_eq!(count("lines"), count("used") + count("ignored") + count("rejected"), "{input:#}");
        assert_eq!(count("rejected"), 0, "{input:#}");
    }
    let kinds_at = |report: &Value| -> Vec<(String, String)> {
        let mut found: Vec<(String, String)> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f["kind"].as_str().unwrap().to_string(), f["at"].as_str().unwrap().to_string()))
            .collect();
        found.sort();
        found
    };
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    for (events, jobs) in [("event.jsonl", "job.jsonl"), ("events.json", "job.jsonl")] {
        let json = leasetrace(&[
            "analyze",
            "--events",
            &path(events),
            "--jobs",
            &path(jobs),
            "--jobs",
            &path("meta.jsonl"),
            "--log",
            &path("workers.log"),
            "--log-tz",
            "UTC",
            "--params",
            &path("bullmq.json"),
            "--format",
            "json",
        ])
        .run();
        assert_eq!(json.code, 0, "{}", json.stderr);
        assert_eq!(kinds_at(&json.json()), kinds_at(&report), "{events} and {jobs} read as the CSV exports");
    }
    captured_from_the_live_database(dir.path(), &truth, &report);
}

/// The rows of a CSV export (header first), as records of text.
fn csv_rows(path: &Path) -> Vec<Vec<String>> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_path(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    reader.records().map(|r| r.unwrap().iter().map(str::to_string).collect()).collect()
}

/// `leasetrace capture --postgres`, run by the harness on the live database while it was up (a
/// role with a SCRAM password, every statement of the server logged): what it wrote is what the
/// window holds, the statement log proves that only reads reached the server, and the captured
/// case gives the findings and figures the psql exports give.
fn captured_from_the_live_database(dir: &Path, truth: &Value, report: &Value) {
    let captured = dir.join("captured");
    let window = &truth["capture"];
    let (since, until) = (window["since"].as_i64().unwrap(), window["until"].as_i64().unwrap());
    let record: Value = serde_json::from_str(&std::fs::read_to_string(captured.join("capture.json")).unwrap()).unwrap();

    // 1. No write reached the server: every statement the server logged for capture's sessions
    // (application_name 'leasetrace capture') is a read, and they are exactly the ones the record
    // lists, in order; the harness's own writes (CREATE ROLE, INSERT) are in the same log, so the
    // log is one that would show a write.
    let log = std::fs::read_to_string(dir.join("postgres.log")).unwrap();
    let statement_of = |line: &str| line.split_once("LOG:  statement: ").map(|(_, s)| s.to_string());
    let by_capture: Vec<String> =
        log.lines().filter(|l| l.contains("app=leasetrace capture ")).filter_map(statement_of).collect();
    let others: Vec<String> =
        log.lines().filter(|l| !l.contains("app=leasetrace capture ")).filter_map(statement_of).collect();
    assert!(others.iter().any(|s| s.starts_with("INSERT INTO app.runs")), "the log shows writes: {others:#?}");
    // Every capture's statements (each record lists them), and the 6 of the one of a misspelt
    // queue, which stops at the queue check.
    let recorded_statements: usize = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter_map(|entry| std::fs::read_to_string(entry.path().join("capture.json")).ok())
        .map(|text| serde_json::from_str::<Value>(&text).unwrap()["statements"].as_array().unwrap().len())
        .sum();
    assert_eq!(by_capture.len(), recorded_statements + 6, "every capture's statements");
    let typo = window["typo"].as_str().unwrap();
    assert!(
        typo.contains("no queue 'pr-reveiw' in the job, meta or event table: queues in bullmq: nightly-sweep, pr-review; did you mean 'pr-review'?"),
        "{typo}"
    );
    assert!(!dir.join("captured-typo").exists());

    // TLS, with a certificate for db.example of the harness's own CA, reached as 127.0.0.1.
    let tls = &window["tls"];
    if let Some(why) = tls["skipped"].as_str() {
        assert!(!in_ci(std::env::var_os("CI").as_deref()), "the TLS capture was not run in CI: {why}");
        let _ = std::io::stderr().write_all(format!("SKIPPED the PostgreSQL TLS capture: {why}\n").as_bytes());
    } else {
        let said =
            |mode: &str| tls[mode]["tls"].as_str().unwrap_or_else(|| panic!("{mode}: {:#}", tls[mode])).to_string();
        assert!(said("require").starts_with("TLS, the server's certificate not checked"), "{tls:#}");
        assert!(said("verify-ca").starts_with("TLS, certificate checked, host name not"), "{tls:#}");
        let refused = |mode: &str| {
            tls[mode]["error"].as_str().unwrap_or_else(|| panic!("{mode} connected: {:#}", tls[mode])).to_string()
        };
        let name = refused("verify-full");
        assert!(name.contains(": connect: ") && name.contains("certificate") && name.contains("sslrootcert"), "{name}");
        let issuer = refused("verify-full-system-cas");
        assert!(issuer.contains("certificate") && issuer.contains("UnknownIssuer"), "{issuer}");
        assert!(!dir.join("captured-tls-verify-full").exists() && dir.join("captured-tls-require").exists());
    }
    let reading = ["BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", "SELECT ", "COPY (SELECT ", "ROLLBACK"];
    for statement in &by_capture {
        assert!(reading.iter().any(|r| statement.starts_with(r)), "a statement that is not a read: {statement}");
        if statement.starts_with("COPY") {
            assert!(statement.ends_with("TO STDOUT WITH (FORMAT csv, HEADER)"), "{statement}");
        }
    }
    let first_session: Vec<&str> =
        record["statements"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
    assert_eq!(by_capture[..first_session.len()].iter().map(String::as_str).collect::<Vec<_>>(), first_session);
    assert_eq!(record["target"]["auth"], "password (uri)", "{record:#}");

    // 2. The window, pushed down: the event rows of pr-review inside it, byte for byte the rows
    // psql's export has; the ledger rows inside it and none of the 10,000 outside.
    let exported = csv_rows(&dir.join("event.csv"));
    let at_of = |row: &Vec<String>| row[4].parse::<i64>().unwrap();
    let expected: Vec<Vec<String>> = std::iter::once(exported[0].clone())
        .chain(exported[1..].iter().filter(|r| r[0] == "pr-review" && (since..until).contains(&at_of(r))).cloned())
        .collect();
    assert_eq!(csv_rows(&captured.join("event.csv")), expected);
    let outside = exported[1..].iter().filter(|r| r[0] == "pr-review" && !(since..until).contains(&at_of(r))).count();
    assert!(outside >= 2, "the window leaves pr-review's added and waiting rows out: {outside}");
    assert_eq!(record["bounds"]["events_outside_window"], outside, "{record:#}");
    let ledger = csv_rows(&captured.join("ledger.csv"));
    assert_eq!(ledger.len() as u64 - 1, window["ledgerInWindow"].as_u64().unwrap(), "{ledger:#?}");
    assert!(ledger[1..].iter().all(|row| !row[3].starts_with("old-")), "{ledger:#?}");
    let local = csv_rows(&dir.join("captured-local").join("ledger.csv"));
    assert_eq!(
        local[1..].iter().map(|r| r[2].clone()).collect::<Vec<_>>(),
        ledger[1..].iter().map(|r| r[3].clone()).collect::<Vec<_>>(),
        "the Seoul wall-clock column gives the same rows"
    );

    // 3. The captured case, with the workers' options beside it, gives pr-4412's rerun at the
    // event table's milliseconds, and the capture's notes under Assumptions.
    std::fs::copy(dir.join("bullmq.json"), captured.join("bullmq.json")).unwrap();
    let params = captured.join("bullmq.json");
    let run =
        leasetrace(&["analyze", captured.to_str().unwrap(), "--params", params.to_str().unwrap(), "--format", "json"])
            .run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let from_capture = run.json();
    let review = truth["reviewJob"].as_str().unwrap();
    let reruns = findings(&from_capture, "stalled-rerun", review);
    assert_eq!(reruns.len(), 1, "{from_capture:#}");
    exact(reruns[0], "activated_at", recorded(truth, review, "active", 0), "worker-a's active row");
    exact(reruns[0], "rerun_at", recorded(truth, review, "active", 1), "worker-b's active row");
    let original = findings(report, "stalled-rerun", review)[0];
    for metric in [
        "lock_expired_earliest_at",
        "lock_expired_latest_at",
        "stalled_check_window_start_at",
        "stalled_check_window_end_at",
    ] {
        assert_eq!(reruns[0]["metrics"][metric], original["metrics"][metric], "{metric}");
    }
    let assumptions = from_capture["assumptions"].as_array().unwrap();
    assert!(
        assumptions
            .iter()
            .any(|a| a.as_str().is_some_and(|a| a.contains("REPEATABLE READ READ ONLY") && a.contains("PostgreSQL"))),
        "{assumptions:#?}"
    );
    for input in from_capture["inputs"].as_array().unwrap() {
        assert_eq!(input["rejected"], 0, "{input:#}");
    }

    // 4. Without a window, the other queue's capture gives the stall limit the exports give.
    let sweep_case = dir.join("captured-sweep");
    let run = leasetrace(&[
        "analyze",
        sweep_case.to_str().unwrap(),
        "--params",
        params.to_str().unwrap(),
        "--format",
        "json",
    ])
    .run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let sweep = truth["sweepJob"].as_str().unwrap();
    let limit = finding_where(&run.json(), "stalled-limit-exceeded", "job_id", sweep).clone();
    let expected = finding_where(report, "stalled-limit-exceeded", "job_id", sweep);
    assert_eq!(limit["metrics"], expected["metrics"], "{limit:#}");
}
