//! Real BullMQ, end to end: `tests/e2e/harness.mjs` stages each incident with a real Redis and real
//! BullMQ worker processes (SIGKILLed where the scenario says), exports the evidence (ledger,
//! KST server log, the events stream, job hashes, lock parameters) and what it observed itself
//! (`observed.json`, epoch ms and ids). The tests run the real binary on that folder and compare
//! its figures with the observations, never with constants: the timings differ on every run.
//!
//! Each scenario runs on the pinned BullMQ 5.x; the stalled ones also on the pinned 6.x (both in
//! `tests/e2e/package.json`). One runs with the app's ledger in a real PostgreSQL table, exported
//! with psql's `\copy` in two session zones, and its lock settings in its own nested config file.
//!
//! Needs bash, Node 18+ and npm; `tests/e2e/setup.sh` installs redis-server and PostgreSQL
//! (apt-get) and the npm packages when missing. When it cannot (no root and no password-less sudo,
//! no apt-get, no network: its exit status 3), each scenario says on the terminal that it was
//! SKIPPED and why, and passes, so that `cargo test` works for a contributor without root; with
//! `CI` set (as CI services set it) nothing is skipped: the scenario fails with the reason. Any
//! other setup failure fails the test everywhere. The scenarios run one at a time (they depend on
//! timing), about 8–20 s each. `LEASETRACE_E2E_KEEP=1` keeps the staged folders (their paths are
//! printed).
//!
//! `fleet.rs` runs a whole seeded fleet instead (tests/e2e/fleet.mjs: several pods, two queues,
//! seeded faults, a few minutes) and scores the binary against the harness's ground truth with
//! tests/e2e/fleet-score.mjs (docs/fleet.md). `otel.rs` runs BullMQ 6 with `bullmq-otel`
//! (tests/e2e/otel-stalled.mjs) and reads the OpenTelemetry trace it exported, alone. `bull.rs`
//! runs legacy Bull 4.16.5 (tests/e2e/bull-stalled.mjs): three incidents read with Bull's models.
//! `pg.rs` runs BullMQ 6 on its PostgreSQL backend (tests/e2e/pg-stalled.mjs) and reads the
//! backend's tables as psql exports them.

use std::ffi::OsStr;
use std::sync::{Mutex, OnceLock, PoisonError};

use chrono::{DateTime, Utc};

use super::*;

mod bull;
mod capture;
mod envelopes;
mod fleet;
mod otel;
mod pg;

/// The scenarios share the machine's two cores and depend on timing: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// A staged incident: the case folder and the harness's own observations.
struct Staged {
    dir: tempfile::TempDir,
    observed: Value,
}

impl Staged {
    fn path(&self) -> &str {
        self.dir.path().to_str().expect("a UTF-8 temp path")
    }

    /// An epoch-ms observation.
    fn ms(&self, key: &str) -> i64 {
        self.observed[key]
            .as_i64()
            .unwrap_or_else(|| panic!("observed.json has no integer '{key}':\n{:#}", self.observed))
    }

    fn text(&self, key: &str) -> &str {
        self.observed[key]
            .as_str()
            .unwrap_or_else(|| panic!("observed.json has no string '{key}':\n{:#}", self.observed))
    }

    fn param(&self, key: &str) -> i64 {
        self.observed["params"][key]
            .as_i64()
            .unwrap_or_else(|| panic!("observed.json has no params.{key}:\n{:#}", self.observed))
    }

    /// `analyze --format json` on the staged case; exit 0 expected.
    fn analyze(&self) -> Value {
        self.analyze_manifest("leasetrace.toml")
    }

    /// `analyze --format json` on one of the staged case's manifests; exit 0 expected.
    fn analyze_manifest(&self, manifest: &str) -> Value {
        let path = self.dir.path().join(manifest);
        let path = path.to_str().expect("a UTF-8 temp path");
        let run = leasetrace(&["analyze", path, "--format", "json"]).run();
        assert_eq!(run.code, 0, "analyze failed on the staged case {path}:\n{}", run.stderr);
        run.json()
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if std::env::var_os("LEASETRACE_E2E_KEEP").is_some() {
            let dir = std::mem::replace(&mut self.dir, tempfile::tempdir().expect("a temp dir"));
            eprintln!("e2e: kept {}", dir.keep().display());
        }
    }
}

fn output_text(output: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The exact BullMQ version `tests/e2e/package.json` pins for `major`: the `bullmq` dependency or an
/// npm alias of it (`"bullmq6": "npm:bullmq@6.7.0"`), as the harness chooses it.
fn pinned_bullmq(major: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/package.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let package: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
    let dependencies = package["dependencies"].as_object().expect("package.json has dependencies");
    let pins: Vec<&str> = dependencies
        .iter()
        .filter_map(|(name, spec)| {
            let spec = spec.as_str()?;
            if name == "bullmq" { Some(spec) } else { spec.strip_prefix("npm:bullmq@") }
        })
        .filter(|version| version.split('.').next() == Some(major))
        .collect();
    assert_eq!(pins.len(), 1, "tests/e2e/package.json must pin exactly one bullmq {major}.x: {pins:?}");
    pins[0].to_string()
}

/// What `tests/e2e/setup.sh` left: a machine ready for the scenarios, or the reason it is not and
/// whether that skips them or fails them.
#[derive(Debug, Clone, PartialEq)]
enum Setup {
    Ready,
    Skip(String),
    Fail(String),
}

/// setup.sh's exit status for "cannot be made ready on this machine" (see its header).
const UNAVAILABLE: i32 = 3;

/// Whether `CI` (its value) asks for every test to run: set and not empty, `0` or `false`, as CI
/// services set it (`CI=true` on GitHub Actions, GitLab, CircleCI, Travis, Buildkite).
pub(super) fn in_ci(value: Option<&OsStr>) -> bool {
    value.map(OsStr::to_string_lossy).is_some_and(|v| !(v.is_empty() || v == "0" || v.eq_ignore_ascii_case("false")))
}

/// The decision, from setup.sh's exit status (`None`: killed by a signal) and its output.
fn setup_outcome(status: Option<i32>, output: &str, ci: bool) -> Setup {
    let said = output.trim();
    match status {
        Some(0) => Setup::Ready,
        Some(UNAVAILABLE) if !ci => {
            Setup::Skip(format!("its services cannot be installed here: {said} (set CI=1 to make this a failure)"))
        }
        Some(UNAVAILABLE) => Setup::Fail(format!(
            "e2e setup: the real-BullMQ tests cannot run and CI is set, so they are not skipped: {said}"
        )),
        _ => Setup::Fail(format!(
            "e2e setup failed: `bash tests/e2e/setup.sh` exited with {}; the real-BullMQ tests need \
             redis-server, PostgreSQL, Node and npm (see tests/e2e/setup.sh)\n{said}",
            status.map_or("a signal".into(), |code| format!("status {code}"))
        )),
    }
}

/// Runs setup.sh as `command` says (the environment of the tests, or one of a test's own).
fn run_setup(mut command: Command, ci: bool) -> Setup {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/setup.sh");
    match command.arg(&script).stdin(Stdio::null()).output() {
        Ok(output) => {
            // What the script said (its reasons are on stderr), without empty sections.
            let said: Vec<String> = [&output.stdout, &output.stderr]
                .iter()
                .map(|bytes| String::from_utf8_lossy(bytes).trim().to_string())
                .filter(|text| !text.is_empty())
                .collect();
            setup_outcome(output.status.code(), &said.join("\n"), ci)
        }
        Err(error) => setup_outcome(Some(UNAVAILABLE), &format!("cannot run `bash {}`: {error}", script.display()), ci),
    }
}

/// setup.sh, once per test process: a machine that cannot install the services would otherwise
/// try apt-get once per scenario.
fn setup() -> &'static Setup {
    static SETUP: OnceLock<Setup> = OnceLock::new();
    SETUP.get_or_init(|| run_setup(Command::new("bash"), in_ci(std::env::var_os("CI").as_deref())))
}

/// Whether setup.sh left the machine ready; `false`: skipped (outside CI, the services cannot be
/// installed here), said on the terminal. Panics when the setup failed.
fn services_ready() -> bool {
    match setup() {
        Setup::Ready => true,
        Setup::Skip(reason) => {
            // Straight to stderr, not `eprintln!`: the test harness would keep that from the
            // terminal for a test that passes, and a skip must be seen.
            let test = std::thread::current().name().unwrap_or("an e2e test").to_string();
            // One write, so that the line is not cut by the harness's own.
            let line = format!("SKIPPED {test} (real BullMQ): {reason}\n");
            let _ = std::io::stderr().write_all(line.as_bytes());
            false
        }
        Setup::Fail(reason) => panic!("{reason}"),
    }
}

/// Runs `tests/e2e/setup.sh`, then the harness for `scenario` on the pinned BullMQ 5.x with a CSV
/// ledger; panics with the reason if either fails. `None`: skipped (outside CI, the services
/// cannot be installed here), said on the terminal.
fn stage(scenario: &str) -> Option<Staged> {
    stage_with(scenario, &[])
}

/// `stage` with harness options: `--bullmq MAJOR`, `--ledger postgres`.
fn stage_with(scenario: &str, options: &[&str]) -> Option<Staged> {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    if !services_ready() {
        return None;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));

    let dir = tempfile::tempdir().expect("a temp dir");
    let harness = Command::new("node")
        .arg(root.join("tests/e2e/harness.mjs"))
        .arg(scenario)
        .arg(dir.path())
        .args(options)
        .current_dir(root)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("e2e: cannot run `node tests/e2e/harness.mjs` (is Node installed?): {e}"));
    if !harness.status.success() {
        let kept = dir.keep();
        panic!(
            "e2e: the '{scenario}' harness {options:?} failed ({}); its files (worker output under harness/) are kept in {}\n{}",
            harness.status,
            kept.display(),
            output_text(&harness)
        );
    }
    let text = std::fs::read_to_string(dir.path().join("observed.json"))
        .unwrap_or_else(|e| panic!("e2e: the '{scenario}' harness wrote no observed.json: {e}"));
    let observed: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("observed.json is not JSON ({e}):\n{text}"));
    assert_eq!(observed["scenario"], scenario, "observed.json is from another scenario");
    let major = options.iter().position(|o| *o == "--bullmq").map_or("5", |i| options[i + 1]);
    assert_eq!(observed["bullmq_version"], pinned_bullmq(major), "the harness ran another BullMQ");
    Some(Staged { dir, observed })
}

fn time(value: &Value, what: &str) -> DateTime<Utc> {
    value
        .as_str()
        .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
        .map_or_else(|| panic!("{what} is not an RFC 3339 time: {value}"), |t| t.with_timezone(&Utc))
}

fn epoch(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).expect("an epoch-ms time in range")
}

/// `metrics[name]` is a time within `tolerance_ms` of the observed epoch-ms `expected`.
fn assert_near(finding: &Value, name: &str, expected: i64, tolerance_ms: i64, observed_as: &str) {
    let actual = time(&finding["metrics"][name], &format!("metrics.{name}"));
    let off = (actual - epoch(expected)).num_milliseconds();
    assert!(
        off.abs() <= tolerance_ms,
        "metrics.{name} = {actual} is {off} ms from the observed {observed_as} ({}); tolerance {tolerance_ms} ms\n{finding:#}",
        epoch(expected)
    );
}

/// The one finding of `kind` whose `metrics[key]` is `value`.
fn finding_where<'a>(report: &'a Value, kind: &str, key: &str, value: &str) -> &'a Value {
    let matching: Vec<&Value> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["kind"] == kind && f["metrics"][key] == value)
        .collect();
    assert_eq!(
        matching.len(),
        1,
        "expected one {kind} finding with {key} = {value}, found {}; findings: {:?}\n{:#}",
        matching.len(),
        kinds(report),
        report["findings"]
    );
    matching[0]
}

fn seconds(ms: i64) -> f64 {
    f64::from(i32::try_from(ms).expect("a duration of less than 24 days")) / 1000.0
}

/// Every source of the staged case was read, BullMQ's own records included, and nothing rejected.
fn assert_all_sources_read(staged: &Staged, report: &Value) {
    let inputs = report["inputs"].as_array().expect("inputs");
    for kind in ["ledger", "log", "bullmq-events", "bullmq-jobs", "bullmq-params"] {
        let input = inputs
            .iter()
            .find(|i| i["kind"] == kind)
            .unwrap_or_else(|| panic!("the report of {} has no {kind} input:\n{inputs:#?}", staged.path()));
        assert!(input["events"].as_u64().unwrap_or(0) > 0, "nothing read from the {kind} source:\n{input:#}");
        assert_eq!(input["rejected"], 0, "the {kind} source had rejected lines:\n{input:#}");
    }
}

// ---------------------------------------------------------------- scenarios

#[test]
fn e2e_stalled_sweep_rerun_overlaps_the_next_round() {
    // With `leasetrace capture` run by the harness on its Redis, while the killed worker's lock
    // is held and at the export: capture.rs checks both against the harness's own exports.
    let Some(staged) = stage_with("stalled", &["--capture", env!("CARGO_BIN_EXE_leasetrace")]) else { return };
    let report = staged.analyze();
    assert_stalled_sweep(&staged, &report);
    capture::assert_captured_the_stalled_sweep(&staged, &report);
    envelopes::assert_enveloped_logs_give_the_same_findings(&staged, &report);
    let check = leasetrace(&["check", staged.path()]).run();
    assert_eq!(check.code, 1, "check must fail on the staged incident:\n{}{}", check.stdout, check.stderr);
}

#[test]
fn e2e_parameters_the_evidence_rules_out_get_bounds_the_real_ones_satisfy() {
    // The staged incident declared with the wrong parameters file (BullMQ's defaults, as a
    // responder who copied the wrong one would): the real stall, moved by BullMQ's check a few
    // seconds after activation, rules the 30 s out, and the bounds it gives hold for the real
    // options the workers ran with.
    let Some(staged) = stage("stalled") else { return };
    assert!(!kinds(&staged.analyze()).contains(&"lock-params-contradicted".to_string()), "the right file");
    std::fs::write(staged.dir.path().join("wrong.json"), r#"{"lockDuration": 30000, "stalledInterval": 30000}"#)
        .unwrap();
    let manifest = std::fs::read_to_string(staged.dir.path().join("leasetrace.toml")).unwrap();
    assert!(manifest.contains("path = \"bullmq.json\""), "{manifest}");
    let wrong = manifest.replace("path = \"bullmq.json\"", "path = \"wrong.json\"");
    std::fs::write(staged.dir.path().join("leasetrace-wrong.toml"), wrong).unwrap();
    let report = staged.analyze_manifest("leasetrace-wrong.toml");
    let (lock_duration, stalled_interval) = (staged.param("lockDuration"), staged.param("stalledInterval"));
    // Both ends on Redis' clock (stream entries): `activated_at` is the worker's `processedOn`, which
    // a loaded machine can put milliseconds away from the stream's `active` entry.
    let moved_after = staged.ms("stalled_event_at") - staged.ms("activated_event_at");
    for (parameter, real) in [("lockDuration", lock_duration), ("stalledInterval", stalled_interval)] {
        let finding = finding_where(&report, "lock-params-contradicted", "parameter", parameter);
        let metrics = &finding["metrics"];
        assert_eq!(metrics["in_force_s"], 30.0);
        assert_eq!(metrics["evidence_kind"], "early-stall", "{finding:#}");
        let bound = metrics["bound_s"].as_f64().unwrap();
        assert!(bound >= seconds(real), "{parameter} ≤ {bound} s, but the workers ran with {real} ms\n{finding:#}");
        // The stream's active and stalled entries: one clock, no allowance; the stall's own gap.
        assert_eq!(metrics["allowance_s"], 0.0, "{finding:#}");
        assert!(
            (bound - seconds(moved_after)).abs() < 0.002,
            "bound {bound} s, observed move {moved_after} ms after activation"
        );
        assert_near(finding, "recovered_at", staged.ms("stalled_event_at"), 2, "the stream's stalled entry");
    }
    let said: Vec<&str> = report["warnings"].as_array().unwrap().iter().map(|w| w["kind"].as_str().unwrap()).collect();
    assert!(said.contains(&"lock-params-contradicted"), "{said:?}");
}

#[test]
fn e2e_bullmq6_stalled_sweep_rerun_overlaps_the_next_round() {
    let Some(staged) = stage_with("stalled", &["--bullmq", "6"]) else { return };
    assert_stalled_sweep(&staged, &staged.analyze());
}

#[test]
fn e2e_postgres_ledger_exported_with_psql() {
    let Some(staged) = stage_with("stalled", &["--ledger", "postgres"]) else { return };
    let ledger = &staged.observed["ledger"];
    assert_eq!(ledger["store"], "postgres", "{ledger:#}");
    let rows = ledger["row_list"].as_array().expect("observed ledger.row_list");
    let exports = ledger["exports"].as_array().expect("observed ledger.exports");
    // psql wrote timestamptz in its session zone (PGTZ), with microseconds and an hour-only offset.
    for export in exports {
        let offset = match export["pgtz"].as_str() {
            Some("Asia/Seoul") => "+09", // no daylight saving since 1988
            Some("UTC") => "+00",
            other => panic!("an export in an unexpected session zone {other:?}"),
        };
        let file = export["file"].as_str().expect("export file");
        assert_psql_timestamps(&staged.dir.path().join(file), offset, rows.len());
    }

    let report = staged.analyze();
    assert_all_sources_read(&staged, &report);
    let input =
        report["inputs"].as_array().expect("inputs").iter().find(|i| i["kind"] == "ledger").expect("a ledger input");
    assert_eq!(input["events"], ledger["rows"], "every row of the table is an event\n{input:#}");
    assert_stalled_sweep(&staged, &report);
    // The parameters the workers ran with, found where the app keeps them in its nested config
    // (no `params_at` in the manifest), and said so: none is a BullMQ default.
    let config = &staged.observed["worker_config"];
    let file = config["file"].as_str().expect("observed worker_config.file");
    let params_input = report["inputs"].as_array().expect("inputs").iter().find(|i| i["kind"] == "bullmq-params");
    assert!(
        params_input.and_then(|i| i["path"].as_str()).is_some_and(|p| p.ends_with(file)),
        "the manifest declares the app's {file}: {params_input:#?}"
    );
    for key in ["lockDuration", "stalledInterval", "maxStalledCount"] {
        assert_eq!(report["params"][key], staged.observed["params"][key], "{key}\n{:#}", report["params"]);
        assert_eq!(report["params"]["origins"][key], "file", "{key}\n{:#}", report["params"]);
    }
    let found_at = format!("read from {}", config["params_at"].as_str().expect("observed worker_config.params_at"));
    let assumptions = report["assumptions"].as_array().expect("assumptions");
    assert!(
        assumptions.iter().filter_map(Value::as_str).any(|a| a.contains(file) && a.contains(&found_at)),
        "no assumption says the parameters were {found_at} of {file}: {assumptions:#?}"
    );

    // Every row at the database's own time (microseconds; reported to the millisecond), with its
    // run, job, item, slot and the kind the manifest's `events` gives its step.
    let timeline = leasetrace(&["timeline", staged.path(), "--format", "json"]).run();
    assert_eq!(timeline.code, 0, "{}", timeline.stderr);
    let timeline = timeline.json();
    let events: Vec<&Value> = timeline["timeline"]
        .as_array()
        .expect("timeline")
        .iter()
        .filter(|e| e["source"]["path"].as_str().is_some_and(|p| p.ends_with("/ledger.csv")))
        .collect();
    assert_eq!(events.len(), rows.len(), "one event per row");
    let steps = &ledger["steps"];
    // The export is ordered by id: row i is on line i + 2, under the header.
    for (line, row) in (2..).zip(rows) {
        let event = events
            .iter()
            .find(|e| e["source"]["line"] == line)
            .unwrap_or_else(|| panic!("no timeline event from ledger.csv:{line} (row {row})"));
        let context = format!("row {row}\nevent {event:#}");
        let micros = |key: &str| row[key].as_i64().unwrap_or_else(|| panic!("{key} of {row}"));
        for (at, micros) in [("at", micros("at_us")), ("slot", micros("due_us"))] {
            let off =
                (time(&event[at], at) - DateTime::from_timestamp_micros(micros).expect("in range")).num_microseconds();
            assert!(off.is_some_and(|off| off.abs() < 1000), "{at} is {off:?} µs from the database's value\n{context}");
        }
        assert_eq!(event["run_id"], row["run_id"], "{context}");
        assert_eq!(event["job_id"], row["job_id"], "{context}");
        assert_eq!(event["kind"], steps[row["step"].as_str().expect("step")], "{context}");
        if !row["item"].is_null() {
            assert_eq!(event["item"], row["item"], "{context}");
        }
    }

    // The same table exported in UTC gives the same findings.
    let utc = staged.analyze_manifest("leasetrace-utc.toml");
    let summary = |report: &Value| -> Vec<(Value, Value)> {
        report["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .map(|f| (f["kind"].clone(), f["metrics"].clone()))
            .collect()
    };
    assert_eq!(summary(&utc), summary(&report), "the +00 export and the +09 export disagree");
}

/// Every `ts_utc` and `due_at` cell of a psql CSV export is `YYYY-MM-DD HH:MM:SS[.ffffff]<offset>`
/// and at least one has a microsecond fraction: the shapes the test means to give leasetrace.
fn assert_psql_timestamps(path: &Path, offset: &str, rows: usize) {
    let mut reader = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let header = reader.headers().expect("a header").clone();
    let column =
        |name: &str| header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no {name} in {header:?}"));
    let (ts, due) = (column("ts_utc"), column("due_at"));
    let mut micro = 0;
    let mut count = 0;
    for record in reader.records() {
        let record = record.expect("a CSV record");
        count += 1;
        for cell in [&record[ts], &record[due]] {
            let body = cell
                .strip_suffix(offset)
                .unwrap_or_else(|| panic!("{}: {cell} does not end in {offset}", path.display()));
            let (stamp, fraction) = body.split_once('.').unwrap_or((body, ""));
            assert!(
                stamp.len() == 19
                    && stamp.as_bytes()[10] == b' '
                    && fraction.len() <= 6
                    && fraction.bytes().all(|b| b.is_ascii_digit()),
                "{}: {cell} is not a psql timestamptz",
                path.display()
            );
            if fraction.len() == 6 {
                micro += 1;
            }
        }
    }
    assert_eq!(count, rows, "{}: one record per row of the table", path.display());
    assert!(micro > 0, "{}: no timestamp with microseconds", path.display());
}

/// The stalled scenario's figures (whatever the BullMQ version or the ledger's store): the killed
/// round's stalled rerun, its overlap with the next round and their duplicate selection, against
/// what the harness observed.
fn assert_stalled_sweep(staged: &Staged, report: &Value) {
    // The version the workers ran, read from the parameters file, selects the lock model.
    assert_eq!(report["params"]["version"], staged.observed["bullmq_version"], "{:#}", report["params"]);
    let job_id = staged.text("job_id");
    let lock_duration = staged.param("lockDuration");

    assert_all_sources_read(staged, report);
    let stalled = finding_where(report, "stalled-rerun", "job_id", job_id);
    // BullMQ's own activation time (processedOn, read from the job hash right after activation).
    assert_near(stalled, "activated_at", staged.ms("activated_at"), 100, "processedOn of the first activation");
    // The new worker process, started right after the SIGKILL.
    assert_near(stalled, "restart_at", staged.ms("restart_at"), 100, "start of the new worker");
    let killed_after = staged.ms("killed_at") - staged.ms("activated_at");
    assert_eq!(
        stalled["metrics"]["died_before_first_renewal"], true,
        "killed {killed_after} ms after activation\n{stalled:#}"
    );
    let activated = time(&stalled["metrics"]["activated_at"], "activated_at");
    let expired = time(&stalled["metrics"]["lock_expired_at"], "lock_expired_at");
    assert_eq!(
        (expired - activated).num_milliseconds(),
        lock_duration,
        "lock_expired_at = activated_at + lockDuration\n{stalled:#}"
    );
    assert_near(
        stalled,
        "lock_expired_at",
        staged.ms("activated_at") + lock_duration,
        100,
        "processedOn + lockDuration",
    );
    // Redis's own view: PTTL of the lock key read right after the kill.
    assert_near(stalled, "lock_expired_at", staged.ms("lock_expires_at"), 100, "lock expiry from PTTL");
    // BullMQ's stalled check moved the job; worker 2 activated it again.
    assert_near(stalled, "rerun_at", staged.ms("rerun_at"), 100, "second `active` in the events stream");
    let expiry = staged.ms("lock_expires_at");
    let checks: Vec<String> = staged.observed["stalled_checks_at"]
        .as_array()
        .map(|all| {
            all.iter()
                .filter_map(Value::as_i64)
                .filter(|at| (expiry - 3000..=staged.ms("rerun_at")).contains(at))
                .map(|at| format!("{:+}", at - expiry))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        stalled["metrics"]["rerun_in_stalled_window"],
        true,
        "BullMQ moved the job {} ms after the lock expired (stalledInterval {} ms); its effective stalled checks, \
         in ms from the expiry: {checks:?}\n{stalled:#}",
        staged.ms("stalled_event_at") - expiry,
        staged.param("stalledInterval")
    );
    assert_eq!(stalled["metrics"]["run_id"], staged.text("run_id"), "{stalled:#}");
    assert_eq!(stalled["metrics"]["rerun_run_id"], staged.text("rerun_run_id"), "{stalled:#}");

    // The re-run round started before the next regular round, which started while it ran.
    let overlap = finding_where(report, "sweep-overlap", "run_a", staged.text("rerun_run_id"));
    assert_eq!(overlap["metrics"]["run_b"], staged.text("next_run_id"), "{overlap:#}");
    assert_eq!(overlap["metrics"]["a_is_rerun"], true, "{overlap:#}");

    let item = staged.text("duplicate_item");
    let duplicate = finding_where(report, "duplicate-selection", "item", item);
    let metrics = &duplicate["metrics"];
    assert_eq!(
        (metrics["run_a"].as_str(), metrics["run_b"].as_str()),
        (Some(staged.text("duplicate_run_a")), Some(staged.text("duplicate_run_b"))),
        "{duplicate:#}"
    );
    let delta = metrics["delta_s"].as_f64().unwrap_or_else(|| panic!("delta_s is not a number\n{duplicate:#}"));
    let expected = seconds(staged.ms("duplicate_delta_ms"));
    assert!((delta - expected).abs() <= 0.05, "delta_s {delta} vs observed {expected} s\n{duplicate:#}");
    assert_eq!(metrics["effects_posted"], staged.observed["duplicate_effects_posted"], "{duplicate:#}");
    assert_eq!(duplicate["severity"], "error", "both rounds posted the review\n{duplicate:#}");
}

#[test]
fn e2e_stalled_limit_fails_the_job_without_running_the_processor() {
    let Some(staged) = stage("stalled-limit") else { return };
    assert_stalled_limit(&staged);
}

#[test]
fn e2e_bullmq6_stalled_limit_fails_the_job_without_running_the_processor() {
    let Some(staged) = stage_with("stalled-limit", &["--bullmq", "6"]) else { return };
    assert_stalled_limit(&staged);
}

/// The stall-limit scenario: two stalls, then the deferred failure without a processor call.
fn assert_stalled_limit(staged: &Staged) {
    assert_eq!(
        staged.observed["failed_reason"], "job stalled more than allowable limit",
        "BullMQ failed the job for another reason:\n{:#}",
        staged.observed
    );
    let report = staged.analyze();
    assert_eq!(report["params"]["version"], staged.observed["bullmq_version"], "{:#}", report["params"]);
    let job_id = staged.text("job_id");
    assert_all_sources_read(staged, &report);
    let exceeded = finding_where(&report, "stalled-limit-exceeded", "job_id", job_id);
    assert_near(exceeded, "failed_at", staged.ms("failed_at"), 100, "finishedOn of the job hash");
    assert_eq!(exceeded["metrics"]["logged"], false, "the app has no `failed` listener\n{exceeded:#}");
    assert_eq!(exceeded["metrics"]["stalls_seen"], staged.observed["stalled_counter"], "{exceeded:#}");
    assert_eq!(exceeded["severity"], "error", "{exceeded:#}");

    // Two stalls, two reruns by activation; only the first reran the processor.
    let reruns: Vec<&Value> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["kind"] == "stalled-rerun" && f["metrics"]["job_id"] == job_id)
        .collect();
    for (observed_as, rerun_key, processor_ran) in
        [("second activation", "second_activated_at", true), ("third activation", "third_activated_at", false)]
    {
        let expected = epoch(staged.ms(rerun_key));
        let rerun = reruns
            .iter()
            .find(|f| (time(&f["metrics"]["rerun_at"], "rerun_at") - expected).num_milliseconds().abs() <= 100)
            .unwrap_or_else(|| {
                panic!("no stalled-rerun of job {job_id} with rerun_at at the {observed_as} ({expected}):\n{reruns:#?}")
            });
        assert_eq!(
            rerun["metrics"]["processor_reran"],
            processor_ran,
            "the {observed_as}: the harness saw the processor called {} times (worker 3: never)\n{rerun:#}",
            staged.observed["processor_calls"].as_array().map_or(0, Vec::len)
        );
    }

    let check = leasetrace(&["check", staged.path(), "--fail-on", "error"]).run();
    assert_eq!(check.code, 1, "check --fail-on error must fail:\n{}{}", check.stdout, check.stderr);
}

#[test]
fn e2e_clean_sweeps_give_no_finding() {
    let Some(staged) = stage("clean") else { return };
    let run = leasetrace(&["check", staged.path(), "--fail-on", "info", "--format", "json"]).run();
    assert_ne!(run.code, 2, "check could not read the staged case {}:\n{}", staged.path(), run.stderr);
    let report = run.json();
    assert_all_sources_read(&staged, &report);
    assert_eq!(
        report["findings"].as_array().map(Vec::len),
        Some(0),
        "a clean day has no finding: {:?}\n{:#}",
        kinds(&report),
        report["findings"]
    );
    assert_eq!(run.code, 0, "check --fail-on info passes on clean rounds:\n{}", run.stderr);
}

#[test]
fn e2e_a_replica_that_died_leaves_its_round_running_and_is_replaced() {
    let Some(staged) = stage("replica-died") else { return };
    let report = staged.analyze();
    assert_all_sources_read(&staged, &report);
    let run_id = staged.text("dead_run_id");
    let orphan = finding_where(&report, "orphaned-round", "run_id", run_id);
    let metrics = &orphan["metrics"];
    assert_eq!(metrics["job_id"], staged.text("job_id"), "{orphan:#}");
    let owner = metrics["owner"].as_str().unwrap_or_default();
    assert!(owner.ends_with(&format!("/{}", staged.observed["killed_pid"])), "owner {owner}\n{orphan:#}");
    assert_eq!(metrics["rows"], staged.observed["dead_run_rows"], "{orphan:#}");
    // Its last row is the selection the harness saw just before the kill.
    assert_near(orphan, "owner_last_seen_at", staged.ms("dead_selected_at"), 5, "the dead run's selection");
    assert!(
        time(&metrics["owner_last_seen_at"], "owner_last_seen_at") <= epoch(staged.ms("killed_at")),
        "seen alive after the kill\n{orphan:#}"
    );
    assert_near(orphan, "stalled_at", staged.ms("stalled_event_at"), 0, "the stream's `stalled` entry");
    assert_near(orphan, "replaced_at", staged.ms("rerun_at"), 0, "the second `active` in the stream");
    assert_eq!(metrics["replaced_by_run_id"], staged.text("rerun_run_id"), "{orphan:#}");
    let by = metrics["replacement_owner"].as_str().unwrap_or_default();
    assert!(by.ends_with(&format!("/{}", staged.observed["rerun_pid"])), "replaced by {by}\n{orphan:#}");
    assert_eq!(metrics["replacement_status"], "finished", "{orphan:#}");
    // The job moved on: the queue is not stuck.
    assert!(!kinds(&report).contains(&"stuck-running".to_string()), "{:?}", kinds(&report));
}

#[test]
fn e2e_each_logged_stall_line_is_matched_to_its_own_stall() {
    let Some(staged) = stage("stalled-limit-logged") else { return };
    let report = staged.analyze();
    assert_all_sources_read(&staged, &report);
    let job_id = staged.text("job_id");
    let lines_at: Vec<i64> = staged.observed["stalled_lines_at"]
        .as_array()
        .map(|all| all.iter().filter_map(Value::as_i64).collect())
        .unwrap_or_default();
    assert_eq!(lines_at.len(), 2, "the app logged both stalls:\n{:#}", staged.observed);
    let mut reruns: Vec<&Value> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["kind"] == "stalled-rerun" && f["metrics"]["job_id"] == job_id)
        .collect();
    reruns.sort_by_key(|f| time(&f["metrics"]["rerun_at"], "rerun_at"));
    assert_eq!(reruns.len(), 2, "two stalls, two reruns: {:?}", kinds(&report));
    for (rerun, &line_at) in reruns.iter().zip(&lines_at) {
        assert_eq!(rerun["metrics"]["stalled_logged"], true, "its stall was logged at {}\n{rerun:#}", epoch(line_at));
        let cited: Vec<DateTime<Utc>> = rerun["evidence"]
            .as_array()
            .expect("evidence")
            .iter()
            .filter(|e| e["kind"] == "job-stalled" && e["channel"] == "log")
            .map(|e| time(&e["at"], "evidence at"))
            .collect();
        assert_eq!(cited, [epoch(line_at)], "each rerun cites its own stall's line only\n{rerun:#}");
    }
    assert!(!kinds(&report).contains(&"unlogged-stall".to_string()), "every stall was logged: {:?}", kinds(&report));
}

// ---------------------------------------------------------------- when the services cannot be installed

#[test]
fn setup_that_cannot_install_skips_outside_ci_and_fails_in_it() {
    let said = "tests/e2e/setup.sh: redis-server not installed and apt-get is not available: install them yourself";
    match setup_outcome(Some(UNAVAILABLE), said, false) {
        Setup::Skip(reason) => {
            assert!(reason.contains("redis-server not installed"), "the reason is passed on: {reason}");
            assert!(reason.contains("set CI=1"), "{reason}");
        }
        other => panic!("outside CI, a machine that cannot install the services skips: {other:?}"),
    }
    match setup_outcome(Some(UNAVAILABLE), said, true) {
        Setup::Fail(reason) => assert!(reason.contains("CI is set") && reason.contains("apt-get"), "{reason}"),
        other => panic!("in CI nothing is skipped: {other:?}"),
    }
    // A broken setup is a failure everywhere, and so is a killed one.
    for ci in [false, true] {
        assert!(matches!(setup_outcome(Some(1), "still not found", ci), Setup::Fail(_)));
        assert!(matches!(setup_outcome(None, "", ci), Setup::Fail(_)));
        assert_eq!(setup_outcome(Some(0), "", ci), Setup::Ready);
    }
}

#[test]
fn ci_is_set_when_it_says_so() {
    for set in ["true", "1", "yes", "TRUE"] {
        assert!(in_ci(Some(OsStr::new(set))), "CI={set}");
    }
    for unset in ["", "0", "false", "False"] {
        assert!(!in_ci(Some(OsStr::new(unset))), "CI={unset:?}");
    }
    assert!(!in_ci(None));
}

/// The real setup.sh on a machine without redis-server and apt-get, made by a PATH that holds only
/// the tools the script needs before it looks for them (bash, dirname, id and, where installed,
/// node). PostgreSQL is found by its own folder, so redis-server is what is missing.
#[cfg(unix)]
#[test]
fn setup_without_redis_or_apt_get_says_it_cannot_install_them() {
    let bin = tempfile::tempdir().unwrap();
    let on_path = |tool: &str| {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|dir| dir.join(tool))
            .find(|path| path.is_file())
    };
    for tool in ["bash", "dirname", "id", "node"] {
        if let Some(path) = on_path(tool) {
            std::os::unix::fs::symlink(path, bin.path().join(tool)).unwrap();
        }
    }
    let node = on_path("node").is_some();
    let bash = on_path("bash").expect("bash");
    let setup_command = || {
        let mut command = Command::new(&bash);
        command.env("PATH", bin.path()).env_remove("LEASETRACE_E2E_PG_BINDIR");
        command
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/setup.sh");
    let output = setup_command().arg(&script).stdin(Stdio::null()).output().unwrap();
    let said = output_text(&output);
    assert_eq!(output.status.code(), Some(UNAVAILABLE), "{said}");
    // Everything missing is named in one list (redis-server, and openssl for the TLS test, here).
    let missing = if node { "not installed and apt-get is not available" } else { "node is not installed" };
    assert!(said.contains(missing), "setup.sh names what is missing ({missing}):\n{said}");
    if node {
        assert!(said.contains("redis-server") && said.contains("openssl"), "both missing tools named:\n{said}");
    }

    // And what the scenarios make of it.
    match run_setup(setup_command(), false) {
        Setup::Skip(reason) => assert!(reason.contains(missing), "{reason}"),
        other => panic!("outside CI: skipped, got {other:?}"),
    }
    assert!(matches!(run_setup(setup_command(), true), Setup::Fail(reason) if reason.contains(missing)));
}
