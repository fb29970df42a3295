//! Lock parameters as evidence: worker settings the logs give, values that disagree, defaults said
//! at the top of the report, and `lock-params-contradicted` when the evidence rules them out.
//! (Parameters files themselves are tests/params.)
//!
//! The cases are written here, small: a server log in Asia/Seoul time, without an offset, as the
//! fixtures' logs are (one worker, pr-review-sweep every few minutes).

#[allow(unused_imports)]
use super::*;

/// A worker that logs its options at boot, is killed 2.9 s after taking a job, and a new process
/// that takes the job again 12.5 s after its first activation: possible with a 12 s lock, not with
/// BullMQ's default 30 s.
const LOG_WITH_SETTINGS: &str = "\
2026-10-07 09:29:58.104 INFO  [main] server starting pid=41877 node=v20.20.2 version=3.18.2
2026-10-07 09:29:58.311 INFO  [BullWorker] worker ready queue=pr-review concurrency=2 pid=41877 lockDuration=12000ms, stalledInterval=5000ms, maxStalledCount=1
2026-10-07 09:31:47.160 INFO  [HTTP] GET /api/jobs/active 200 8ms pid=41877
2026-10-07 09:33:00.004 INFO  [BullWorker] job active queue=pr-review name=pr-review-sweep id=repeat:pr-review-sweep:1791333180000 pid=41877
2026-10-07 09:33:02.871 INFO  [main] server starting pid=52117 node=v20.20.2 version=3.18.2
2026-10-07 09:33:03.090 INFO  [BullWorker] worker ready queue=pr-review concurrency=2 pid=52117 lockDuration=12000ms, stalledInterval=5000ms, maxStalledCount=1
2026-10-07 09:33:12.512 INFO  [BullWorker] job active queue=pr-review name=pr-review-sweep id=repeat:pr-review-sweep:1791333180000 pid=52117
2026-10-07 09:33:40.377 INFO  [BullWorker] job completed queue=pr-review name=pr-review-sweep id=repeat:pr-review-sweep:1791333180000 pid=52117
";

/// The same log without the settings on the `worker ready` lines.
fn log_without_settings() -> String {
    LOG_WITH_SETTINGS.replace(" lockDuration=12000ms, stalledInterval=5000ms, maxStalledCount=1", "")
}

fn case(log: &str, params: Option<&str>) -> tempfile::TempDir {
    let mut manifest = String::from(
        "display_tz = \"Asia/Seoul\"\n\n[[sources]]\nkind = \"log\"\npath = \"server.log\"\ntz = \"Asia/Seoul\"\n",
    );
    let mut files: Vec<(&str, &[u8])> = vec![("server.log", log.as_bytes())];
    if let Some(params) = params {
        manifest.push_str("\n[[sources]]\nkind = \"bullmq-params\"\npath = \"bullmq.json\"\n");
        files.push(("bullmq.json", params.as_bytes()));
    }
    case_with(&files, &manifest)
}

fn analyze(dir: &tempfile::TempDir, format: &str) -> Run {
    let run = leasetrace(&["analyze", dir.path().to_str().unwrap(), "--format", format]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    run
}

fn warnings(report: &Value) -> Vec<(String, String)> {
    report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (w["kind"].as_str().unwrap().to_string(), w["message"].as_str().unwrap().to_string()))
        .collect()
}

#[test]
fn a_boot_line_gives_the_parameters_when_no_file_does_and_the_report_says_so() {
    let dir = case(LOG_WITH_SETTINGS, None);
    let report = analyze(&dir, "json").json();
    let params = &report["params"];
    assert_eq!((params["lockDuration"].as_u64(), params["stalledInterval"].as_u64()), (Some(12_000), Some(5_000)));
    assert_eq!(params["lockRenewTime"], 6_000, "half of the logged lockDuration");
    assert_eq!(params["origins"]["lockDuration"], "log");
    assert_eq!(params["origins"]["maxStalledCount"], "log");
    assert_eq!(params["origins"]["lockRenewTime"], "half-of-lock-duration");
    let given = &params["given"]["lockDuration"][0];
    assert_eq!(given["origin"], "log");
    assert_eq!(given["place"].as_str().unwrap(), format!("{}:2", dir.path().join("server.log").display()));
    assert_eq!(given["lines"], 2, "both boots logged it");
    assert_eq!(given["in_force"], true);
    // Only lockRenewTime is assumed: it is said at the top, the others are not defaults.
    let said = warnings(&report);
    assert_eq!(said.len(), 1, "{said:?}");
    assert_eq!(said[0].0, "lock-params-default");
    assert!(
        said[0].1.starts_with("lockRenewTime 6000 ms (lockDuration / 2) is the BullMQ v2–v6 default"),
        "{}",
        said[0].1
    );
    // The rerun 12.5 s after activation is what a 12 s lock allows.
    assert!(!kinds(&report).contains(&"lock-params-contradicted".to_string()), "{:?}", kinds(&report));
    let rerun = finding(&report, "stalled-rerun");
    assert_eq!(rerun["metrics"]["lock_expired_at"], "2026-10-07T00:33:12.004Z");
    let table = analyze(&dir, "table").stdout;
    assert!(table.contains("Lock parameters: lockDuration 12000 ms (logged by the worker at "), "{table}");
    assert!(table.contains("server.log:2)"), "{table}");
    assert!(table.contains("lockDuration = 12000 ms: logged by the worker at "), "an assumption too: {table}");
}

#[test]
fn a_file_and_a_log_that_disagree_are_reported_first_and_the_file_wins() {
    let dir = case(LOG_WITH_SETTINGS, Some(r#"{"lockDuration": 30000, "stalledInterval": 5000}"#));
    let report = analyze(&dir, "json").json();
    assert_eq!(report["params"]["lockDuration"], 30_000);
    assert_eq!(report["params"]["origins"]["lockDuration"], "file");
    let said = warnings(&report);
    let disagree: Vec<&(String, String)> = said.iter().filter(|(kind, _)| kind == "lock-params-disagree").collect();
    assert_eq!(disagree.len(), 1, "{said:?}");
    let message = &disagree[0].1;
    assert!(message.starts_with("lockDuration: the sources disagree: 30000 ms (parameters file "), "{message}");
    assert!(
        message.contains("12000 ms (logged at ")
            && message.contains("server.log:2 2026-10-07 09:29:58.311 by worker 41877, 2 lines)"),
        "{message}"
    );
    assert!(message.contains("in force: 30000 ms (parameters file"), "{message}");
    // stalledInterval agrees (5000 ms both): no warning for it.
    assert!(!said.iter().any(|(_, m)| m.starts_with("stalledInterval")), "{said:?}");
    // And the evidence sides with the log: the 30 s in force is contradicted.
    let contradicted = finding(&report, "lock-params-contradicted");
    assert!(
        contradicted["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("lockDuration 12000 ms (logged by the worker")
            && n.as_str().unwrap().ends_with("agrees with the evidence")),
        "{contradicted:#}"
    );
    let table = analyze(&dir, "table").stdout;
    let first_lines: Vec<&str> = table.lines().take(6).collect();
    assert!(first_lines.iter().any(|l| l.starts_with("WARNING: lockDuration: the sources disagree")), "{table}");
}

#[test]
fn defaults_in_force_are_said_at_the_top_of_the_table_and_in_json() {
    let dir = case(&log_without_settings(), None);
    let report = analyze(&dir, "json").json();
    assert_eq!(report["params"]["origins"]["lockDuration"], "default");
    assert!(report["params"].get("given").unwrap().as_object().unwrap().is_empty());
    let said = warnings(&report);
    assert!(said.iter().any(|(kind, message)| kind == "lock-params-default"
        && message.starts_with("lock parameters are BullMQ v2–v6 defaults (lockDuration 30000 ms, lockRenewTime 15000 ms (lockDuration / 2), stalledInterval 30000 ms, maxStalledCount 1): no parameters file, flag or log line gave them")), "{said:?}");
    let table = analyze(&dir, "table").stdout;
    let mut lines = table.lines();
    assert_eq!(lines.next(), Some("leasetrace analyze · times in Asia/Seoul"));
    assert_eq!(lines.next(), Some(""));
    assert!(lines.next().unwrap().starts_with("WARNING: lock parameters are BullMQ v2–v6 defaults"), "{table}");
    // Before the findings, not only under Assumptions.
    let warning_at = table.find("WARNING: lock parameters are BullMQ v2–v6 defaults").unwrap();
    assert!(warning_at < table.find("Findings:").unwrap());
}

#[test]
fn a_rerun_before_the_lock_could_expire_is_a_finding_with_the_bounds() {
    // Defaults in force (30 s), the job taken again by a new process 12.508 s after activation.
    let dir = case(&log_without_settings(), None);
    let report = analyze(&dir, "json").json();
    let findings: Vec<&Value> =
        report["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == "lock-params-contradicted").collect();
    assert_eq!(findings.len(), 2, "one per parameter: {findings:#?}");
    let lock = findings.iter().find(|f| f["metrics"]["parameter"] == "lockDuration").unwrap();
    let metrics = &lock["metrics"];
    assert_eq!(lock["severity"], "warning");
    assert_eq!(metrics["evidence_kind"], "early-rerun");
    assert_eq!(metrics["in_force_s"], 30.0);
    assert_eq!(metrics["activated_at"], "2026-10-07T00:33:00.004Z");
    assert_eq!(metrics["restart_at"], "2026-10-07T00:33:02.871Z");
    assert_eq!(metrics["recovered_at"], "2026-10-07T00:33:12.512Z");
    assert_eq!(metrics["activation_to_recovery_s"], 12.508);
    // One log file in milliseconds: the activation line's 1 s is the whole allowance.
    assert_eq!(metrics["allowance_s"], 1.0);
    assert_eq!(metrics["bound_s"], 13.508);
    let arithmetic: Vec<(&str, &str)> = lock["arithmetic"]
        .as_array()
        .unwrap()
        .iter()
        .map(|step| (step["result"].as_str().unwrap(), step["formula"].as_str().unwrap()))
        .collect();
    assert!(arithmetic.contains(&("activation_to_recovery_s", "recovered_at − activated_at")), "{arithmetic:?}");
    assert!(
        arithmetic
            .iter()
            .any(|(result, formula)| *result == "bound_s"
                && formula.starts_with("activation_to_recovery_s + allowance_s"))
    );
    let lines: Vec<u64> =
        lock["evidence"].as_array().unwrap().iter().map(|e| e["source"]["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, [4, 5, 7], "activation, restart, rerun");
    let interval = findings.iter().find(|f| f["metrics"]["parameter"] == "stalledInterval").unwrap();
    assert_eq!(interval["metrics"]["bound_s"], 13.508);
    // The header says the parameters in force are contradicted; stalled-rerun only points here.
    assert!(
        warnings(&report).iter().any(|(kind, message)| kind == "lock-params-contradicted"
            && message.starts_with("the evidence contradicts the lockDuration and stalledInterval in force")),
        "{:?}",
        warnings(&report)
    );
    let rerun = finding(&report, "stalled-rerun");
    let notes: Vec<&str> = rerun["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert!(notes.iter().any(|n| n.contains("lock-params-contradicted gives the bounds")), "{notes:?}");
    assert!(rerun["metrics"].get("bound_s").is_none());
    let table = analyze(&dir, "table").stdout;
    assert!(table.contains(": lockDuration ≤ 13.51 s."), "{table}");
}

#[test]
fn a_log_that_gives_nothing_is_said_at_the_top() {
    let noise = "2026-10-07 09:31:47.160 INFO  [HTTP] GET /api/jobs/active 200 8ms pid=41877\n\
                 2026-10-07 09:31:48.002 DEBUG [Redis] ping ok latency=0.30ms\n";
    let dir = case_with(
        &[("server.log", noise.as_bytes()), ("other.log", LOG_WITH_SETTINGS.as_bytes())],
        "[[sources]]\nkind = \"log\"\npath = \"server.log\"\ntz = \"Asia/Seoul\"\n\n[[sources]]\nkind = \"log\"\npath = \"other.log\"\ntz = \"Asia/Seoul\"\n",
    );
    let report = analyze(&dir, "json").json();
    let said = warnings(&report);
    let nothing: Vec<&(String, String)> = said.iter().filter(|(kind, _)| kind == "input-contributed-nothing").collect();
    assert_eq!(nothing.len(), 1, "{said:?}");
    assert!(
        nothing[0].1.contains("server.log contributed nothing: none of its 2 lines became an event (2 noise)"),
        "{}",
        nothing[0].1
    );
}

#[test]
fn the_shipped_cases_contradict_no_parameter() {
    // Every case in fixtures/ (the clean day, the near misses, the real BullMQ runs): their
    // parameters are the ones their runs used, and none of them may be ruled out.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cases = Vec::new();
    for folder in ["fixtures", "fixtures/near-miss"] {
        for entry in std::fs::read_dir(root.join(folder)).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().to_string();
            if root.join(folder).join(&name).join("leasetrace.toml").exists() {
                cases.push(format!("{folder}/{name}"));
            }
        }
    }
    assert!(cases.contains(&CLEAN.to_string()) && cases.iter().filter(|c| c.contains("near-miss")).count() >= 8);
    for case in cases {
        let report = leasetrace(&["analyze", &case, "--format", "json"]).run().json();
        assert!(!kinds(&report).contains(&"lock-params-contradicted".to_string()), "{case}: {:?}", kinds(&report));
        assert!(!warnings(&report).iter().any(|(kind, _)| kind == "lock-params-contradicted"), "{case}");
    }
}

#[test]
fn settings_in_structured_logs_are_read_too() {
    // pino 10.4.0 writes the options nested under the key the app chose.
    let pino = r#"{"level":30,"time":1791332998104,"pid":41877,"hostname":"api-1","queue":"pr-review","opts":{"concurrency":2,"lockDuration":12000,"stalledInterval":5000,"maxStalledCount":1},"msg":"worker started"}
{"level":30,"time":1791333180004,"pid":41877,"hostname":"api-1","jobId":"7","queue":"pr-review","msg":"job active"}
"#;
    let dir = case_with(&[("api.log", pino.as_bytes())], "[[sources]]\nkind = \"log\"\npath = \"api.log\"\n");
    let report = analyze(&dir, "json").json();
    assert_eq!(report["params"]["lockDuration"], 12_000);
    assert_eq!(report["params"]["origins"]["stalledInterval"], "log");
    let timeline = leasetrace(&["timeline", dir.path().to_str().unwrap(), "--format", "json"]).run().json();
    let settings = &timeline["timeline"][0];
    assert_eq!(settings["kind"], "worker-settings");
    assert_eq!(settings["settings"]["lockDuration"], 12_000);
    assert_eq!(settings["worker"], "api-1/41877", "a process is its host and pid");
}

#[test]
fn settings_that_change_between_boots_are_said_and_each_job_is_judged_by_its_own() {
    // Boot 1 (pid 41877) logs a 12 s lock, boot 2 (pid 52117) a 30 s one: the job activated under
    // boot 1 and taken again 12.5 s later by boot 2 contradicts neither.
    let log = LOG_WITH_SETTINGS.replacen(
        "pid=52117 lockDuration=12000ms, stalledInterval=5000ms",
        "pid=52117 lockDuration=30000ms, stalledInterval=5000ms",
        1,
    );
    assert_ne!(log, LOG_WITH_SETTINGS);
    let dir = case(&log, None);
    let report = analyze(&dir, "json").json();
    let said = warnings(&report);
    let changed: Vec<&(String, String)> = said.iter().filter(|(kind, _)| kind == "lock-params-changed").collect();
    assert_eq!(changed.len(), 1, "{said:?}");
    let message = &changed[0].1;
    assert!(message.starts_with("lockDuration: the log gives 2 values: 12000 ms (logged at "), "{message}");
    assert!(
        message.contains("server.log:2 2026-10-07 09:29:58.311 by worker 41877, 1 job activation(s) after it)"),
        "{message}"
    );
    assert!(
        message.contains("30000 ms (logged at ")
            && message.contains("server.log:6 2026-10-07 09:33:03.09 by worker 52117"),
        "{message}"
    );
    assert!(
        message.contains("each job ran under the value of the last settings line before its activation"),
        "{message}"
    );
    // A tie (one activation each) goes to the value logged last.
    assert_eq!(report["params"]["lockDuration"], 30_000);
    let given = report["params"]["given"]["lockDuration"].as_array().unwrap();
    assert_eq!(
        given
            .iter()
            .map(|g| (
                g["value"].as_u64().unwrap(),
                g["activations"].as_u64().unwrap(),
                g["in_force"].as_bool().unwrap()
            ))
            .collect::<Vec<_>>(),
        [(12_000, 1, false), (30_000, 1, true)]
    );
    // The first job ran under boot 1's 12 s lock: its rerun 12.5 s later is no contradiction.
    assert!(!kinds(&report).contains(&"lock-params-contradicted".to_string()), "{:?}", kinds(&report));
}

#[test]
fn the_lock_command_says_what_it_assumes_first() {
    let run = leasetrace(&["lock", "--activated-at", "2026-10-07T00:33:00Z"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let second = run.stdout.lines().nth(1).unwrap();
    assert!(second.starts_with("WARNING: lock parameters are BullMQ v2–v6 defaults"), "{}", run.stdout);
    let json = leasetrace(&["lock", "--activated-at", "2026-10-07T00:33:00Z", "--format", "json"]).run().json();
    assert_eq!(json["warnings"][0]["kind"], "lock-params-default");
    let given = leasetrace(&[
        "lock",
        "--activated-at",
        "2026-10-07T00:33:00Z",
        "--lock-duration",
        "12000",
        "--lock-renew-time",
        "6000",
        "--stalled-interval",
        "5000",
        "--max-stalled-count",
        "1",
        "--format",
        "json",
    ])
    .run()
    .json();
    assert!(given["warnings"].as_array().unwrap().is_empty(), "{given:#}");
}
