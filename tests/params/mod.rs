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
