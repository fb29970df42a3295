//! Lock parameters files as teams keep them: nested in a larger config, JSON or YAML, with the
//! worker options of several queues. Samples in fixtures/params/ were written by the real NestJS
//! config module, js-yaml and BullMQ (see its README).
//!
//! The case is one job that became active at 00:33:00 on a worker whose process restarted at
//! 00:33:02, before the first renewal could happen, and ran again at 00:33:20: its lock expired
//! `lockDuration` after activation. With the sweep worker's 12 s lock that is 00:33:12; with
//! BullMQ's 30 s default it would be 00:33:30, after the rerun.

use super::*;

const CONFIG_YAML: &str = "fixtures/params/nestjs-config.yaml";
const CONFIG_JSON: &str = "fixtures/params/nestjs-config.json";
const WORKER_OPTIONS: &str = "fixtures/params/worker-options.json";

const LOG: &[u8] =
    b"2026-10-07 00:33:00.000 INFO  [BullWorker] job active queue=pr-review name=pr-review-sweep id=42 pid=100\n\
2026-10-07 00:33:02.000 INFO  [main] server starting pid=200\n\
2026-10-07 00:33:20.000 INFO  [BullWorker] job active queue=pr-review name=pr-review-sweep id=42 pid=200\n";

/// A case folder with the log, the parameters file `params` copied in as `name`, and a manifest
/// whose bullmq-params source carries `extra` lines.
fn case(params: &str, name: &str, extra: &str) -> tempfile::TempDir {
    let text = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(params)).unwrap();
    let manifest = format!(
        "[[sources]]\nkind = \"log\"\npath = \"server.log\"\ntz = \"UTC\"\n\n[[sources]]\nkind = \"bullmq-params\"\npath = \"{name}\"\n{extra}"
    );
    case_with(&[("server.log", LOG), (name, &text)], &manifest)
}

fn analyze(dir: &tempfile::TempDir, extra: &[&str]) -> Run {
    let mut args = vec!["analyze", dir.path().to_str().unwrap(), "--format", "json"];
    args.extend_from_slice(extra);
    leasetrace(&args).run()
}

fn params_input(report: &Value) -> &Value {
    report["inputs"].as_array().unwrap().iter().find(|i| i["kind"] == "bullmq-params").unwrap()
}

#[test]
fn a_nested_yaml_config_gives_the_workers_12_s_lock_not_the_default() {
    let dir = case(CONFIG_YAML, "config.yaml", "params_at = \"/queues/sweep/worker\"\n");
    let run = analyze(&dir, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    assert_eq!(report["params"]["lockDuration"], 12_000);
    assert_eq!(report["params"]["stalledInterval"], 5_000);
    assert_eq!(report["params"]["origins"]["lockDuration"], "file");
    assert_eq!(report["params"]["version"], "5.81.5", "bullmq.version in the same file");
    let rerun = finding(&report, "stalled-rerun");
    assert_eq!(rerun["metrics"]["died_before_first_renewal"], true);
    assert_eq!(rerun["metrics"]["lock_expired_at"], "2026-10-07T00:33:12.000Z");
    let input = params_input(&report);
    assert_eq!((input["format"].as_str(), input["events"].as_u64()), (Some("yaml"), Some(4)));
    let assumptions = report["assumptions"].to_string();
    assert!(
        assumptions.contains("config.yaml: lock parameters (lockDuration, stalledInterval, maxStalledCount) read from /queues/sweep/worker (line 16)"),
        "{assumptions}"
    );
    assert!(assumptions.contains("BullMQ 5.81.5 (from `bullmq.version` at /bullmq, line 36)"), "{assumptions}");
}

#[test]
fn the_same_config_as_json_with_the_flag_gives_the_same_findings() {
    let yaml = analyze(&case(CONFIG_YAML, "config.yaml", "params_at = \"/queues/sweep/worker\"\n"), &[]).json();
    let dir = case(CONFIG_JSON, "config.json", "");
    let run = analyze(&dir, &["--params-at", "/queues/sweep/worker"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json = run.json();
    // The same findings, to the figure (the case folders differ, so their evidence paths do too).
    let figures = |report: &Value| -> Vec<(Value, Value)> {
        report["findings"].as_array().unwrap().iter().map(|f| (f["summary"].clone(), f["metrics"].clone())).collect()
    };
    assert_eq!(figures(&json), figures(&yaml));
    assert_eq!(figures(&json).len(), 2);
    // The same parameters; `given` names each file by its own path.
    let values = |report: &Value| {
        let mut params = report["params"].clone();
        let given = params.as_object_mut().unwrap().remove("given").unwrap();
        let given: Vec<(String, Value, Value)> = given
            .as_object()
            .unwrap()
            .iter()
            .flat_map(|(name, values)| {
                values.as_array().unwrap().iter().map(|g| (name.clone(), g["value"].clone(), g["origin"].clone()))
            })
            .collect();
        (params, given)
    };
    assert_eq!(values(&json), values(&yaml));
    assert_eq!(params_input(&json)["format"], "json");
}

#[test]
fn two_workers_in_one_config_are_an_error_naming_both_and_the_fix() {
    // The notify worker gives no lock parameter: it runs on BullMQ's defaults, the sweep worker
    // on 12 s. Which one the case is about is the user's to say.
    let dir = case(CONFIG_YAML, "config.yaml", "");
    let run = analyze(&dir, &[]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(run.stdout.is_empty(), "no half report on error");
    // The line of the worker that runs on defaults: the one a reader would not expect.
    let place = format!("{}:31: ", dir.path().join("config.yaml").display());
    assert!(run.stderr.contains(&place), "{}", run.stderr);
    for needle in [
        "/queues/notify/worker sits where /queues/sweep/worker does but gives no lock parameter",
        "lockDuration 12000 (line 16) at /queues/sweep/worker but 30000 (not given: BullMQ's default) at /queues/notify/worker",
        "params_at = \"/queues/sweep/worker\" (or \"/queues/notify/worker\") on the bullmq-params source in the manifest, or --params-at \"/queues/sweep/worker\"",
    ] {
        assert!(run.stderr.contains(needle), "expected {needle:?} in {}", run.stderr);
    }
}

#[test]
fn bullmq_s_own_worker_options_dump_is_read_without_a_selector() {
    let dir = case(WORKER_OPTIONS, "worker-options.json", "");
    let run = analyze(&dir, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    assert_eq!(report["params"]["lockDuration"], 12_000);
    assert_eq!(report["params"]["lockRenewTime"], 6_000);
    assert_eq!(report["params"]["origins"]["lockRenewTime"], "file", "BullMQ wrote the computed value");
    assert_eq!(report["params"]["version"], "5.81.5");
    assert_eq!(finding(&report, "stalled-rerun")["metrics"]["lock_expired_at"], "2026-10-07T00:33:12.000Z");
    let input = params_input(&report);
    let by_reason: u64 = input["ignored_by_reason"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(by_reason, input["ignored"].as_u64().unwrap(), "every key is accounted for: {input}");
    assert_eq!(input["ignored_by_reason"]["unused key 'drainDelay'"], 1);
}

#[test]
fn the_lock_verb_reads_a_nested_file_too() {
    let run = leasetrace(&[
        "lock",
        "--params",
        CONFIG_YAML,
        "--params-at",
        "/queues/sweep/worker",
        "--activated-at",
        "2026-10-07T00:33:00Z",
        "--died-at",
        "2026-10-07T00:33:02Z",
        "--format",
        "json",
    ])
    .run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let plan = run.json();
    assert_eq!(plan["lock_expired_at"], "2026-10-07T00:33:12.000Z");
    assert!(
        plan["notes"][0].as_str().unwrap().ends_with("read from /queues/sweep/worker (line 16)"),
        "where the parameters came from comes first: {}",
        plan["notes"]
    );
}

#[test]
fn lock_refuses_a_0_ms_lock_flag_as_analyze_does() {
    for flag in ["--lock-duration", "--lock-renew-time", "--stalled-interval"] {
        let message = format!("{flag} must be greater than 0 ms");
        // Without a case (only the flags), with one, and as analyze says it.
        for args in [
            vec!["lock", "--activated-at", "2026-10-07T00:33:00Z", flag, "0"],
            vec!["lock", crate::INCIDENT, "--activated-at", "2026-10-07T09:33:00+09:00", flag, "0"],
            vec!["analyze", crate::INCIDENT, flag, "0"],
        ] {
            let run = leasetrace(&args).run();
            assert_eq!(run.code, 2, "{args:?}: {}", run.stdout);
            assert_eq!(run.stderr, format!("leasetrace: error: {message}\n"), "{args:?}");
        }
    }
    // A file that gives 0 is refused the same way.
    let dir = tempfile::tempdir().unwrap();
    let params = dir.path().join("bullmq.json");
    std::fs::write(&params, r#"{"lockDuration": 0}"#).unwrap();
    let run =
        leasetrace(&["lock", "--params", params.to_str().unwrap(), "--activated-at", "2026-10-07T00:33:00Z"]).run();
    assert_eq!(run.code, 2);
    assert!(run.stderr.ends_with("bullmq.json:1: 'lockDuration' must be greater than 0\n"), "{}", run.stderr);
}

#[test]
fn a_parameters_file_that_gives_none_is_an_error_not_defaults() {
    let dir = case_with(
        &[("server.log", LOG), ("config.yaml", b"app:\n  version: 1.4.2\nworker:\n  lock_duration: 12000\n")],
        "[[sources]]\nkind = \"log\"\npath = \"server.log\"\ntz = \"UTC\"\n\n[[sources]]\nkind = \"bullmq-params\"\npath = \"config.yaml\"\n",
    );
    expect_input_error(&dir, "config.yaml", None, "no BullMQ lock parameter in this YAML document");
    let run = analyze(&dir, &[]);
    assert!(run.stderr.contains("lockDuration, lockRenewTime, stalledInterval, maxStalledCount"), "{}", run.stderr);
    assert!(run.stderr.contains("found 'lock_duration' at line 4"), "{}", run.stderr);
}

#[test]
fn params_at_belongs_to_a_parameters_file() {
    let dir = case_with(
        &[("server.log", LOG)],
        "[[sources]]\nkind = \"log\"\npath = \"server.log\"\ntz = \"UTC\"\nparams_at = \"/a\"\n",
    );
    let run = analyze(&dir, &[]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("params_at is for a bullmq-params source"), "{}", run.stderr);
    let run = leasetrace(&["analyze", "--log", "-", "--log-tz", "UTC", "--params-at", "/a"]).stdin(LOG).run();
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("--params-at says where the lock parameters are in a parameters file"),
        "{}",
        run.stderr
    );
    // A pointer that leads nowhere says what is there.
    let dir = case(CONFIG_YAML, "config.yaml", "params_at = \"/queues/sweeps/worker\"\n");
    let run = analyze(&dir, &[]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("no key 'sweeps' at /queues (line 11); the keys there are 'prefix', 'sweep', 'notify'"),
        "{}",
        run.stderr
    );
}

/// The real BullMQ 5.81.5 stall-limit case (two stalls, then the deferred failure) with its
/// parameters file replaced by `params` and `analysis` added to its manifest.
fn stall_limit_case(params: &str, analysis: &str) -> tempfile::TempDir {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bullmq-5.81.5-stalled-limit");
    let read = |name: &str| std::fs::read(from.join(name)).unwrap();
    let manifest = format!("{}\n{analysis}", String::from_utf8(read("leasetrace.toml")).unwrap());
    let files: Vec<(&str, Vec<u8>)> = ["ledger.csv", "server.log", "events.json", "jobs.jsonl"]
        .into_iter()
        .map(|name| (name, read(name)))
        .chain([("bullmq.json", params.as_bytes().to_vec())])
        .collect();
    let files: Vec<(&str, &[u8])> = files.iter().map(|(n, b)| (*n, b.as_slice())).collect();
    case_with(&files, &manifest)
}

fn warning_kinds(report: &Value) -> Vec<String> {
    report["warnings"].as_array().unwrap().iter().map(|w| w["kind"].as_str().unwrap().to_string()).collect()
}

fn stall_limit_notes(report: &Value) -> String {
    let finding = report["findings"].as_array().unwrap().iter().find(|f| f["kind"] == "stalled-limit-exceeded");
    finding.unwrap_or_else(|| panic!("no stalled-limit-exceeded: {}", report["findings"]))["notes"].to_string()
}

const STALL_PARAMS: &str = r#""lockDuration": 3000, "stalledInterval": 500, "maxStalledCount": 1"#;

#[test]
fn no_bullmq_version_puts_the_assumed_stall_limit_model_in_the_header() {
    let dir = stall_limit_case(&format!("{{{STALL_PARAMS}}}"), "");
    let report = analyze(&dir, &[]).json();
    let warning = report["warnings"].as_array().unwrap().iter().find(|w| w["kind"] == "bullmq-version-assumed");
    let message = warning.unwrap_or_else(|| panic!("{}", report["warnings"]))["message"].as_str().unwrap();
    assert!(
        message.contains(
            "1 stalled-limit-exceeded finding (stall-limit model: BullMQ version not given: assumed ≥ 5.53.2"
        ),
        "{message}"
    );
    // The flag settles it: no warning.
    let flagged = analyze(&dir, &["--bullmq-version", "5.81.5"]).json();
    assert!(!warning_kinds(&flagged).contains(&"bullmq-version-assumed".to_string()), "{:?}", warning_kinds(&flagged));
}

#[test]
fn the_manifest_declares_the_bullmq_version_and_the_flag_wins() {
    let dir = stall_limit_case(&format!("{{{STALL_PARAMS}}}"), "[analysis]\nbullmq_version = \"5.81.5\"\n");
    let report = analyze(&dir, &[]).json();
    assert_eq!(report["params"]["version"], "5.81.5", "{}", report["params"]);
    assert!(!warning_kinds(&report).contains(&"bullmq-version-assumed".to_string()), "{:?}", warning_kinds(&report));
    assert!(stall_limit_notes(&report).contains("BullMQ ≥ 5.53.2: the stalled check marked the job"));
    let flagged = analyze(&dir, &["--bullmq-version", "5.40.0"]).json();
    assert_eq!(flagged["params"]["version"], "5.40.0");
    let range = stall_limit_case(&format!("{{{STALL_PARAMS}}}"), "[analysis]\nbullmq_version = \"^5.81.5\"\n");
    let run = analyze(&range, &[]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(run.stderr.contains("[analysis] bullmq_version must be the BullMQ version in use, such as \"5.81.5\" (not a range), found \"^5.81.5\""), "{}", run.stderr);
}

#[test]
fn a_package_manifest_dependency_gives_the_version_or_a_lower_bound() {
    // Exact: the version.
    let exact = stall_limit_case(&format!(r#"{{{STALL_PARAMS}, "dependencies": {{"bullmq": "5.81.5"}}}}"#), "");
    let report = analyze(&exact, &[]).json();
    assert_eq!(report["params"]["version"], "5.81.5");
    assert!(!warning_kinds(&report).contains(&"bullmq-version-assumed".to_string()));
    // A range from 5.58.0: every version it allows defers the failure; said as a lower bound.
    let caret = stall_limit_case(&format!(r#"{{{STALL_PARAMS}, "dependencies": {{"bullmq": "^5.58.0"}}}}"#), "");
    let report = analyze(&caret, &[]).json();
    assert_eq!(report["params"].get("version"), None, "{}", report["params"]);
    assert_eq!(report["params"]["versionAtLeast"], "5.58.0");
    assert!(!warning_kinds(&report).contains(&"bullmq-version-assumed".to_string()), "{:?}", warning_kinds(&report));
    assert!(stall_limit_notes(&report).contains("a dependency range says at least 5.58.0"));
    assert!(
        report.to_string().contains("range ^5.58.0: the installed version is at least 5.58.0"),
        "{}",
        report["assumptions"]
    );
    // A range from before 5.53.2 decides nothing: the header says so.
    let old = stall_limit_case(&format!(r#"{{{STALL_PARAMS}, "devDependencies": {{"bullmq": "~5.40.0"}}}}"#), "");
    let report = analyze(&old, &[]).json();
    assert!(warning_kinds(&report).contains(&"bullmq-version-assumed".to_string()), "{:?}", warning_kinds(&report));
}

#[test]
fn the_queue_meta_hash_version_is_evidence_said_against_the_version_in_force() {
    let dir = stall_limit_case(&format!("{{{STALL_PARAMS}, \"version\": \"5.81.5\"}}"), "");
    // As BullMQ's Queue constructor writes it (`metaValues`), dumped beside the job hashes.
    let jobs = dir.path().join("jobs.jsonl");
    let mut text = std::fs::read_to_string(&jobs).unwrap();
    text.push_str("{\"key\":\"bull:pr-review:meta\",\"fields\":{\"opts.maxLenEvents\":\"10000\",\"version\":\"bullmq:5.40.0\"}}\n");
    std::fs::write(&jobs, text).unwrap();
    let report = analyze(&dir, &[]).json();
    let warning = report["warnings"].as_array().unwrap().iter().find(|w| w["kind"] == "bullmq-version-disagree");
    let message = warning.unwrap_or_else(|| panic!("{}", report["warnings"]))["message"].as_str().unwrap();
    assert!(
        message.contains("jobs.jsonl:") && message.contains("says BullMQ 5.40.0, but the version in force is 5.81.5"),
        "{message}"
    );
    // The same version: nothing to say.
    let same = analyze(&dir, &["--bullmq-version", "5.40.0"]).json();
    assert!(!warning_kinds(&same).contains(&"bullmq-version-disagree".to_string()), "{:?}", warning_kinds(&same));
    // No version in force: an assumption naming it, not taken as the workers' version.
    let unversioned = stall_limit_case(&format!("{{{STALL_PARAMS}}}"), "");
    std::fs::copy(&jobs, unversioned.path().join("jobs.jsonl")).unwrap();
    let report = analyze(&unversioned, &[]).json();
    assert_eq!(report["params"].get("version"), None);
    let assumptions = report["assumptions"].to_string();
    assert!(
        assumptions.contains("the queue's meta hash says BullMQ 5.40.0")
            && assumptions.contains("not taken as the workers' version"),
        "{assumptions}"
    );
}

/// The fleet fixture (two queues on one pod each) with its `notify` workers' logged
/// `lockDuration` rewritten to 30 s and no parameters file: each queue's jobs are analysed with
/// their own workers' value, and the notify value, which the run did not have, is contradicted by
/// the notify job that stalled 4.76 s after its activation.
#[test]
fn workers_of_each_queue_lend_their_own_logged_settings_to_their_jobs() {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fleet-bullmq-6.7.0-shared-ledger");
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(&from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        let mut text = std::fs::read_to_string(entry.path()).unwrap();
        if Path::new(&name).extension().is_some_and(|extension| extension == "log") {
            text = text
                .lines()
                .map(|line| {
                    if line.contains(r#""queue":"notify","opts""#) {
                        line.replace(r#""lockDuration":4000"#, r#""lockDuration":30000"#)
                    } else {
                        line.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join("\n");
        }
        if name == "leasetrace.toml" {
            // No parameters file: the logged settings decide.
            let start = text.find("[[sources]]\nkind = \"bullmq-params\"").unwrap();
            let end = start + text[start + 1..].find("[[sources]]").unwrap() + 1;
            text.replace_range(start..end, "");
        }
        std::fs::write(dir.path().join(&name), text).unwrap();
    }
    let run = leasetrace(&["analyze", dir.path().to_str().unwrap(), "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let by_queue = &report["params"]["by_queue"];
    let lock_of = |queue: &str| {
        by_queue[queue]["lockDuration"].as_u64().unwrap_or_else(|| report["params"]["lockDuration"].as_u64().unwrap())
    };
    assert_eq!((lock_of("review"), lock_of("notify")), (4_000, 30_000), "{by_queue}");
    let ms = |text: &Value| chrono::DateTime::parse_from_rfc3339(text.as_str().unwrap()).unwrap().timestamp_millis();
    let mut queues_seen = Vec::new();
    for finding in report["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == "stalled-rerun") {
        let m = &finding["metrics"];
        let queue = m["queue"].as_str().unwrap().to_string();
        let (activated, expired) = match (&m["lock_expired_at"], &m["activated_earliest_at"]) {
            (Value::String(_), _) => (ms(&m["activated_at"]), ms(&m["lock_expired_at"])),
            (_, Value::String(_)) => (ms(&m["activated_earliest_at"]), ms(&m["lock_expired_earliest_at"])),
            _ => (ms(&m["activated_at"]), ms(&m["lock_expired_earliest_at"])),
        };
        assert_eq!(expired - activated, i64::try_from(lock_of(&queue)).unwrap(), "{queue} {}", m["job_id"]);
        queues_seen.push(queue);
    }
    assert!(queues_seen.iter().any(|q| q == "review") && queues_seen.iter().any(|q| q == "notify"), "{queues_seen:?}");
    // The value the notify workers never had is caught on a notify job, and only there.
    let contradicted: Vec<&Value> =
        report["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == "lock-params-contradicted").collect();
    assert_eq!(contradicted.len(), 1, "{contradicted:?}");
    assert_eq!(contradicted[0]["metrics"]["job_id"], "gh-1013");
    assert_eq!(contradicted[0]["metrics"]["in_force_s"], 30.0);
    let said = report["warnings"].as_array().unwrap().iter().find(|w| w["kind"] == "lock-params-changed").unwrap();
    assert!(
        said["message"].as_str().unwrap().contains("the workers of different queues log different values"),
        "{said}"
    );
}
