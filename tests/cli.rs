//! The one integration-test binary: runs the real `leasetrace` executable and asserts stdout,
//! stderr and exit status together.
//!
//! Sections: the 2026-10-07 incident reproduced to the second; the clean day; the exit-code
//! contract; bad input; sources given by flags, stdin and gzip; golden outputs per fixture and
//! format; the docs staying in step with the registries.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

mod browser;
mod bull;
mod chains;
mod ci_formats;
mod e2e;
mod hostile;
mod html;
mod init;
mod layout;
mod lease;
mod markdown;
mod merge;
mod messages;
mod params;
mod pictures;
mod postgres;
mod programs;
mod read_window;
mod resolution;
mod retry;
mod shell;
mod traces;
mod worker_settings;
mod writes;

const INCIDENT: &str = "fixtures/incident-2026-10-07";
const CLEAN: &str = "fixtures/clean-sweeps";
/// Exports of real BullMQ runs, written by tests/e2e/harness.mjs and kept as fixtures.
const REAL_STALLED: &str = "fixtures/bullmq-5.81.5-stalled";
const REAL_LIMIT: &str = "fixtures/bullmq-5.81.5-stalled-limit";
const REAL_REPLICA_DIED: &str = "fixtures/bullmq-5.81.5-replica-died";
const REAL_LIMIT_LOGGED: &str = "fixtures/bullmq-5.81.5-stalled-limit-logged";

/// A finished run of the binary.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }
}

/// A small builder around the binary: arguments, optional stdin, then `run`.
struct Leasetrace {
    command: Command,
    stdin: Option<Vec<u8>>,
    /// A file given as standard input itself (`< file`), not through a pipe.
    stdin_file: Option<std::fs::File>,
}

fn leasetrace(args: &[&str]) -> Leasetrace {
    let mut command = Command::new(env!("CARGO_BIN_EXE_leasetrace"));
    command.current_dir(env!("CARGO_MANIFEST_DIR")).args(args);
    // The user's colour settings would change the bytes of a table (CLICOLOR_FORCE colours pipes).
    for name in ["NO_COLOR", "CLICOLOR_FORCE", "CLICOLOR", "FORCE_COLOR"] {
        command.env_remove(name);
    }
    Leasetrace { command, stdin: None, stdin_file: None }
}

impl Leasetrace {
    fn stdin(mut self, bytes: &[u8]) -> Self {
        self.stdin = Some(bytes.to_vec());
        self
    }

    fn stdin_file(mut self, file: std::fs::File) -> Self {
        self.stdin_file = Some(file);
        self
    }

    fn env(mut self, name: &str, value: &str) -> Self {
        self.command.env(name, value);
        self
    }

    fn env_remove(mut self, name: &str) -> Self {
        self.command.env_remove(name);
        self
    }

    fn run(mut self) -> Run {
        match self.stdin_file.take() {
            Some(file) => self.command.stdin(Stdio::from(file)),
            None => self.command.stdin(if self.stdin.is_some() { Stdio::piped() } else { Stdio::null() }),
        };
        self.command.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = self.command.spawn().expect("the binary runs");
        if let Some(bytes) = self.stdin.take() {
            // A binary that stops before reading its input (a usage error) closes the pipe first.
            if let Err(error) = child.stdin.take().unwrap().write_all(&bytes) {
                assert_eq!(error.kind(), std::io::ErrorKind::BrokenPipe, "writing stdin: {error}");
            }
        }
        let Output { status, stdout, stderr } = child.wait_with_output().unwrap();
        Run {
            code: status.code().expect("exited normally"),
            stdout: String::from_utf8(stdout).unwrap(),
            stderr: String::from_utf8(stderr).unwrap(),
        }
    }
}

fn finding<'a>(report: &'a Value, kind: &str) -> &'a Value {
    let all = report["findings"].as_array().unwrap();
    let matching: Vec<&Value> = all.iter().filter(|f| f["kind"] == kind).collect();
    assert_eq!(matching.len(), 1, "expected one {kind} finding, got {}", matching.len());
    matching[0]
}

fn kinds(report: &Value) -> Vec<String> {
    report["findings"].as_array().unwrap().iter().map(|f| f["kind"].as_str().unwrap().to_string()).collect()
}

// ---------------------------------------------------------------- the 2026-10-07 incident

#[test]
fn incident_2026_10_07_stalled_rerun_figures_to_the_second() {
    let run = leasetrace(&["analyze", INCIDENT, "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    let metrics = &finding(&report, "stalled-rerun")["metrics"];
    assert_eq!(metrics["job_id"], "repeat:pr-review-sweep:1791333180000");
    // 09:33:00 KST activation, 09:37:26 restart (+266 s), first renewal between L/4 and L/2.
    assert_eq!(metrics["activated_at"], "2026-10-07T00:33:00.000Z");
    assert_eq!(metrics["restart_at"], "2026-10-07T00:37:26.000Z");
    assert_eq!(metrics["activation_to_restart_s"], 266.0);
    assert_eq!(metrics["first_renewal_earliest_at"], "2026-10-07T00:37:54.500Z");
    assert_eq!(metrics["first_renewal_due_at"], "2026-10-07T00:42:49.000Z");
    assert_eq!(metrics["died_before_first_renewal"], true);
    // Lock expiry exact: activation + 1,178 s = 09:52:38; rerun at 09:53:00 inside the check window.
    assert_eq!(metrics["lock_expired_at"], "2026-10-07T00:52:38.000Z");
    assert!(metrics.get("lock_expired_earliest_at").is_none(), "an exact expiry is not a window");
    assert_eq!(metrics["stalled_check_window_start_at"], "2026-10-07T00:52:38.000Z");
    assert_eq!(metrics["stalled_check_window_end_at"], "2026-10-07T00:53:38.000Z");
    assert_eq!(metrics["rerun_at"], "2026-10-07T00:53:00.000Z");
    assert_eq!(metrics["restart_to_rerun_s"], 934.0);
    assert_eq!(metrics["rerun_in_stalled_window"], true);
    assert_eq!(metrics["stalled_logged"], false, "the log of that day has no stalled line");
    assert_eq!(metrics["run_id"], "run-0933-a");
    assert_eq!(metrics["rerun_run_id"], "run-0933-b");
}

#[test]
fn incident_2026_10_07_overlap_and_duplicate_selection() {
    let report = leasetrace(&["analyze", INCIDENT, "--format", "json"]).run().json();
    let mut found = kinds(&report);
    found.sort();
    assert_eq!(
        found,
        ["duplicate-selection", "lock-headroom", "stalled-rerun", "sweep-overlap", "unlogged-stall"],
        "nothing else"
    );

    let overlap = &finding(&report, "sweep-overlap")["metrics"];
    assert_eq!((overlap["run_a"].as_str(), overlap["run_b"].as_str()), (Some("run-0933-b"), Some("run-0954-a")));
    assert_eq!(overlap["a_is_rerun"], true);
    assert_eq!(overlap["overlap_s"], 96.89);

    let duplicate = finding(&report, "duplicate-selection");
    let metrics = &duplicate["metrics"];
    assert_eq!(metrics["item"], "PR-4412");
    assert_eq!(metrics["run_a"], "run-0933-b");
    assert_eq!(metrics["run_b"], "run-0954-a");
    assert_eq!(metrics["selected_a_at"], "2026-10-07T00:54:05.700Z");
    assert_eq!(metrics["selected_b_at"], "2026-10-07T00:54:06.360Z");
    assert_eq!(metrics["delta_s"], 0.66);
    assert_eq!(metrics["effects_posted"], 2);
    assert_eq!(duplicate["severity"], "error", "the same review was posted twice");
}

#[test]
fn incident_2026_10_07_lock_headroom_and_the_missing_stalled_listener() {
    let report = leasetrace(&["analyze", INCIDENT, "--format", "json"]).run().json();
    let headroom = finding(&report, "lock-headroom");
    assert_eq!(headroom["severity"], "info");
    let metrics = &headroom["metrics"];
    assert_eq!(metrics["job_name"], "pr-review-sweep");
    // The 09:12 round: job active 09:12:00.008, job completed 09:24:37.095.
    assert_eq!(metrics["max_s"], 757.087);
    assert_eq!(metrics["longest_job_id"], "repeat:pr-review-sweep:1791331920000");
    let ratio = metrics["max_ratio"].as_f64().unwrap();
    assert!((0.64..0.65).contains(&ratio), "the seed's 64%: {ratio}");
    assert_eq!(metrics["samples"], 5, "the killed run has no end and is left out");
    assert_eq!(metrics["could_outlive_lock"], false);

    let unlogged = &finding(&report, "unlogged-stall")["metrics"];
    assert_eq!(unlogged["job_id"], "repeat:pr-review-sweep:1791333180000");
    assert_eq!(unlogged["proven_by"], "timing");
    assert_eq!(unlogged["recovered_at"], "2026-10-07T00:53:00.000Z");
    assert_eq!(unlogged["gap_s"], 1200.0);
}

#[test]
fn incident_2026_10_07_table_in_kst_reads_like_the_postmortem() {
    let run = leasetrace(&["analyze", INCIDENT, "--tz", "Asia/Seoul"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    for expected in [
        "times in Asia/Seoul",
        "its process restarted at 09:37:26, 4 min 26 s after activation at 09:33:00",
        "before the first lock renewal (09:37:54.50–09:42:49)",
        "the lock expired at 09:52:38",
        "re-run from the start at 09:53:00",
        "15 min 34 s passed from restart to rerun",
        "no stalled line or event was logged",
        "PR-4412 was selected by round run-0933-b at 09:54:05.70 and again by round run-0954-a at 09:54:06.36, 0.66 s apart",
        "Round run-0954-a (slot 09:54:00) started at 09:54:03.31 while round run-0933-b (slot 09:33:00), a re-run, was still running",
        "lock_expired_at = activated_at + lockDuration (1178 s)",
        "fixtures/incident-2026-10-07/server.log:348",
    ] {
        assert!(run.stdout.contains(expected), "missing {expected:?} in:\n{}", run.stdout);
    }
}

#[test]
fn incident_2026_10_07_evidence_points_at_the_lines_used() {
    let report = leasetrace(&["analyze", INCIDENT, "--format", "json"]).run().json();
    let evidence = finding(&report, "stalled-rerun")["evidence"].as_array().unwrap().clone();
    let cited: Vec<(String, u64, String)> = evidence
        .iter()
        .map(|e| {
            (
                e["source"]["path"].as_str().unwrap().to_string(),
                e["source"]["line"].as_u64().unwrap(),
                e["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for (path, line, kind) in &cited {
        let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap();
        let raw = text.lines().nth(usize::try_from(*line).unwrap() - 1).unwrap();
        let event =
            evidence.iter().find(|e| e["source"]["line"] == *line && e["source"]["path"] == path.as_str()).unwrap();
        assert_eq!(event["raw"], raw, "{path}:{line} ({kind}) is the line the event came from");
    }
    let kinds: Vec<&str> = cited.iter().map(|(_, _, k)| k.as_str()).collect();
    assert_eq!(kinds, ["job-active", "round-started", "process-start", "round-failed", "job-active", "round-started"]);
}

#[test]
fn every_input_line_is_accounted_for() {
    for case in [INCIDENT, CLEAN] {
        let report = leasetrace(&["timeline", case, "--format", "json"]).run().json();
        let mut events = 0;
        for input in report["inputs"].as_array().unwrap() {
            if input["kind"] == "bullmq-params" {
                continue;
            }
            let n = |k: &str| input[k].as_u64().unwrap();
            assert_eq!(n("lines"), n("used") + n("ignored") + n("rejected"), "{input}");
            let by_reason: u64 =
                input["ignored_by_reason"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
            assert_eq!(by_reason, n("ignored"));
            events += n("events");
        }
        assert_eq!(report["timeline"].as_array().unwrap().len() as u64, events, "timeline shows every event");
    }
}

#[test]
fn the_report_prints_what_it_assumed() {
    let report = leasetrace(&["analyze", INCIDENT, "--format", "json"]).run().json();
    assert_eq!(report["params"]["lockDuration"], 1_178_000);
    assert_eq!(report["params"]["lockRenewTime"], 589_000);
    assert_eq!(report["params"]["origins"]["lockRenewTime"], "half-of-lock-duration");
    assert_eq!(report["params"]["origins"]["lockDuration"], "file");
    let assumptions = report["assumptions"].to_string();
    assert!(assumptions.contains("lockRenewTime = 589000 ms"), "{assumptions}");
}

#[test]
fn incident_2026_10_07_read_with_the_log_as_utc_is_caught() {
    // The responder's first mistake: the KST log declared UTC. The log and the ledger saw the same
    // activations 9 hours apart.
    let run = leasetrace(&["analyze", INCIDENT, "--log-tz", "UTC", "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    let metrics = &finding(&report, "clock-offset-suspected")["metrics"];
    assert_eq!(metrics["source_a"], format!("{INCIDENT}/ledger.csv"));
    assert_eq!(metrics["source_b"], format!("{INCIDENT}/server.log"));
    assert_eq!(metrics["offset_hours"], "+9:00");
    assert_eq!(metrics["zone_for_b"], "Asia/Seoul");
    assert_eq!(metrics["matched_pairs"], 6);
    let offset = metrics["offset_s"].as_f64().unwrap();
    assert!((32_390.0..32_400.0).contains(&offset), "ledger rows follow activations by seconds: {offset}");
    // With the right zone there is no such finding.
    let right = leasetrace(&["analyze", INCIDENT, "--format", "json"]).run().json();
    assert!(!kinds(&right).contains(&"clock-offset-suspected".to_string()));
}

// ---------------------------------------------------------------- the clean day

#[test]
fn clean_sweeps_have_no_finding_and_check_passes() {
    let run = leasetrace(&["check", CLEAN, "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stdout);
    let report = run.json();
    assert_eq!(report["findings"].as_array().unwrap().len(), 0);
    assert_eq!(report["check"]["passed"], true);
    let run = leasetrace(&["check", CLEAN, "--fail-on", "info"]).run();
    assert_eq!(run.code, 0);
    assert!(run.stdout.contains("check passed: no finding at or above info"));
}

#[test]
fn clean_sweeps_contain_the_near_misses_they_claim() {
    let report = leasetrace(&["timeline", CLEAN, "--format", "json"]).run().json();
    let events = report["timeline"].as_array().unwrap();
    let count = |kind: &str| events.iter().filter(|e| e["kind"] == kind).count();
    assert_eq!(count("process-start"), 1, "a deploy between rounds");
    assert_eq!(count("round-started"), 7);
    let pr4421 = events.iter().filter(|e| e["kind"] == "item-selected" && e["item"] == "PR-4421").count();
    assert_eq!(pr4421, 2, "PR-4421 is selected by two consecutive rounds that do not overlap");
}

// ---------------------------------------------------------------- exit codes

#[test]
fn check_exit_codes_follow_the_threshold() {
    assert_eq!(leasetrace(&["check", INCIDENT]).run().code, 1);
    assert_eq!(leasetrace(&["check", INCIDENT, "--fail-on", "error"]).run().code, 1, "duplicate-selection is an error");
    assert_eq!(leasetrace(&["check", INCIDENT, "--fail-on", "info"]).run().code, 1);
    let run = leasetrace(&["check", INCIDENT, "--format", "json"]).run();
    // stalled-rerun, unlogged-stall, sweep-overlap, duplicate-selection; lock-headroom is info.
    assert_eq!(run.json()["check"]["failing"], 4);
    assert_eq!(leasetrace(&["analyze", INCIDENT]).run().code, 0, "analyze reports, it does not judge");
}

#[test]
fn check_with_a_fixed_window_that_excludes_the_duplicate() {
    // 0.5 s is narrower than the 0.66 s between the selections: only warnings remain.
    let run =
        leasetrace(&["check", INCIDENT, "--duplicate-window", "0.5", "--fail-on", "error", "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(!kinds(&run.json()).contains(&"duplicate-selection".to_string()));
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_leasetrace"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["timeline", INCIDENT])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
}

#[test]
fn the_same_input_gives_byte_identical_reports() {
    let first = leasetrace(&["analyze", INCIDENT, "--format", "json"]).run().stdout;
    let second = leasetrace(&["analyze", INCIDENT, "--format", "json"]).run().stdout;
    assert_eq!(first, second);
}

#[test]
fn no_progress_output_when_stderr_is_not_a_terminal_or_with_quiet() {
    // Under `cargo test` stderr is a pipe: no bar, with or without --quiet, and the report is
    // the same bytes in every case, whether -q comes before or after the subcommand.
    let plain = leasetrace(&["analyze", INCIDENT]).run();
    let quiet = leasetrace(&["analyze", INCIDENT, "--quiet"]).run();
    let short_first = leasetrace(&["-q", "analyze", INCIDENT]).run();
    for run in [&plain, &quiet, &short_first] {
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(run.stderr, "", "stderr carries no progress output");
    }
    assert_eq!(quiet.stdout, plain.stdout);
    assert_eq!(short_first.stdout, plain.stdout);
    // A gzip source and stdin (the spinner's case) are just as silent.
    let dir = tempfile::tempdir().unwrap();
    let gz = gzipped_incident_log(dir.path());
    let ledger = std::fs::read(format!("{}/{INCIDENT}/ledger.csv", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let args = ["timeline", "--ledger", "-", "--log", gz.to_str().unwrap(), "--log-tz", "Asia/Seoul"];
    let piped = leasetrace(&args).stdin(&ledger).run();
    let piped_quiet = leasetrace(&[&args[..], &["--quiet"]].concat()).stdin(&ledger).run();
    for run in [&piped, &piped_quiet] {
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(run.stderr, "");
    }
    assert_eq!(piped_quiet.stdout, piped.stdout);
}

#[test]
fn phases_variable_writes_each_phase_to_stderr_and_leaves_the_report_alone() {
    let plain = leasetrace(&["analyze", INCIDENT, "--format", "json"]).run();
    let timed = leasetrace(&["analyze", INCIDENT, "--format", "json"]).env("LEASETRACE_PHASES", "1").run();
    assert_eq!(timed.code, 0, "{}", timed.stderr);
    assert_eq!(timed.stdout, plain.stdout);
    let phases: Vec<&str> = timed.stderr.lines().map(|line| line.split_whitespace().nth(2).unwrap_or("")).collect();
    assert_eq!(phases, ["read", "sorted", "context", "detectors", "report"], "{}", timed.stderr);
    for line in timed.stderr.lines() {
        // "leasetrace phase read 0.004 s  rss 9.1 MB  peak 9.3 MB": on Linux, both memory figures.
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            (words[0], words[1], words[4], words[5], words[8]),
            ("leasetrace", "phase", "s", "rss", "peak"),
            "{line}"
        );
        let figures = if cfg!(target_os = "linux") { vec![words[3], words[6], words[9]] } else { vec![words[3]] };
        for figure in figures {
            assert!(figure.parse::<f64>().is_ok_and(|value| value >= 0.0), "{line}");
        }
    }
    // A timeline reads and sorts, then writes: no detectors' phases.
    let timeline = leasetrace(&["timeline", INCIDENT]).env("LEASETRACE_PHASES", "1").run();
    let phases: Vec<&str> = timeline.stderr.lines().map(|line| line.split_whitespace().nth(2).unwrap_or("")).collect();
    assert_eq!(phases, ["read", "sorted", "report"], "{}", timeline.stderr);
}

#[test]
fn ledger_utc_default_assumption_only_when_a_timestamp_had_no_offset() {
    let assumptions_of = |ledger: &str| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.csv");
        std::fs::write(&path, ledger).unwrap();
        let run = leasetrace(&["timeline", "--ledger", path.to_str().unwrap(), "--format", "json"]).run();
        assert_eq!(run.code, 0, "{}", run.stderr);
        let report = run.json();
        let notes: Vec<String> =
            report["assumptions"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().to_string()).collect();
        (path.display().to_string(), notes)
    };
    // psql's `\copy` of timestamptz columns: every cell carries its offset, no default is used.
    let (_, psql) = assumptions_of(
        "at,run_id,event\n2026-12-01 19:48:40.036865+00,r1,round_started\n2026-12-02 04:48:41.5+09,r1,round_failed\n",
    );
    assert!(!psql.iter().any(|a| a.contains("read as UTC")), "{psql:?}");
    // Two of three cells without an offset: said, with the count.
    let (path, mixed) = assumptions_of(
        "at,run_id,event\n2026-12-01 19:48:40.036,r1,round_started\n2026-12-01T19:48:41Z,r1,item_selected\n2026-12-01 19:48:42,r1,round_failed\n",
    );
    let said = format!(
        "{path}: 2 timestamps without an offset read as UTC (the ledger default; set tz or --ledger-tz otherwise)"
    );
    assert!(mixed.contains(&said), "{mixed:?}");
    // A declared zone is no default.
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.csv");
    std::fs::write(&ledger, "at,run_id,event\n2026-12-01 19:48:40,r1,round_started\n").unwrap();
    let run =
        leasetrace(&["timeline", "--ledger", ledger.to_str().unwrap(), "--ledger-tz", "UTC", "--format", "json"]).run();
    assert!(!run.json()["assumptions"].to_string().contains("read as UTC"), "{}", run.stdout);
}

#[test]
fn zone_mixup_is_warned_at_the_top_of_the_report_not_only_as_a_finding() {
    // The Seoul log declared UTC: every restart and activation of the log is 9 h off the ledger.
    let dir = format!("{}/{INCIDENT}", env!("CARGO_MANIFEST_DIR"));
    let run = leasetrace(&["analyze", &dir, "--log-tz", "UTC", "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    let warning = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "zone-mixup-suspected")
        .unwrap_or_else(|| panic!("{}", report["warnings"]));
    let message = warning["message"].as_str().unwrap();
    assert!(message.contains("server.log against ") && message.contains("ledger.csv +9:00"), "{message}");
    let table = leasetrace(&["analyze", &dir, "--log-tz", "UTC"]).run();
    let header: Vec<&str> = table.stdout.lines().take_while(|l| !l.starts_with('┌')).collect();
    assert!(header.iter().any(|l| l.starts_with("WARNING: sources disagree by whole hours")), "{}", table.stdout);
    // Declared right: no such warning.
    let right = leasetrace(&["analyze", &dir, "--format", "json"]).run();
    assert!(!right.stdout.contains("zone-mixup-suspected"), "{}", right.stdout);
}

// ---------------------------------------------------------------- bad input

fn case_with(files: &[(&str, &[u8])], manifest: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in files {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    std::fs::write(dir.path().join("leasetrace.toml"), manifest).unwrap();
    dir
}

const LEDGER_AND_LOG: &str = "[[sources]]\nkind = \"ledger\"\npath = \"ledger.csv\"\n\n[[sources]]\nkind = \"log\"\npath = \"server.log\"\ntz = \"Asia/Seoul\"\n";
const GOOD_LEDGER: &[u8] = b"at,run_id,event\n2026-10-07T00:33:03Z,r1,round_started\n";
const GOOD_LOG: &[u8] = b"2026-10-07 09:33:00.000 INFO job active id=7\n";

fn expect_input_error(dir: &tempfile::TempDir, file: &str, line: Option<u32>, needle: &str) {
    let run = leasetrace(&["analyze", dir.path().to_str().unwrap()]).run();
    assert_eq!(run.code, 2, "stdout: {}\nstderr: {}", run.stdout, run.stderr);
    let place = match line {
        Some(n) => format!("{}:{n}: ", dir.path().join(file).display()),
        None => format!("{}: ", dir.path().join(file).display()),
    };
    assert!(run.stderr.contains(&place), "expected {place:?} in {}", run.stderr);
    assert!(run.stderr.contains(needle), "expected {needle:?} in {}", run.stderr);
    assert!(run.stdout.is_empty(), "no half report on error");
}

#[test]
fn malformed_timestamp_names_file_and_line() {
    let log = b"2026-10-07 09:33:00.000 INFO job active id=7\n2026-10-07 9:34:00 INFO job completed id=7\n";
    let dir = case_with(&[("ledger.csv", GOOD_LEDGER), ("server.log", log)], LEDGER_AND_LOG);
    expect_input_error(&dir, "server.log", Some(2), "malformed timestamp");
}

#[test]
fn a_time_the_timeline_cannot_hold_names_file_line_and_range() {
    // Placeholder dates outside 1677-2262 (nanoseconds since 1970 in 64 bits) are refused, not
    // moved: in the ledger, in a log, and in a slot column (kept as written: no refusal there).
    let ledger = b"at,run_id,event\n2026-10-07T00:33:03Z,r1,round_started\n9999-12-31T00:00:00Z,r1,round_finished\n";
    let dir = case_with(&[("ledger.csv", ledger), ("server.log", GOOD_LOG)], LEDGER_AND_LOG);
    expect_input_error(&dir, "ledger.csv", Some(3), "outside the years 1677-2262");
    let log = b"2026-10-07 09:33:00.000 INFO job active id=7\n1600-01-01 00:00:00.000 INFO job completed id=7\n";
    let dir = case_with(&[("ledger.csv", GOOD_LEDGER), ("server.log", log)], LEDGER_AND_LOG);
    expect_input_error(&dir, "server.log", Some(2), "outside the years 1677-2262");
    let ledger = b"at,run_id,slot,event\n2262-04-11T23:47:16.854Z,r1,9999-12-31T00:00:00Z,round_started\n";
    let dir = case_with(&[("ledger.csv", ledger), ("server.log", GOOD_LOG)], LEDGER_AND_LOG);
    let run = leasetrace(&["analyze", dir.path().to_str().unwrap(), "--format", "json"]).run();
    assert_eq!(run.code, 0, "the last millisecond a timeline holds: {}", run.stderr);
}

#[test]
fn a_job_hash_time_that_is_no_date_now_is_refused_not_placed_in_1944_or_1970() {
    // Found by fuzzing: a negative `finishedOn` read as epoch ms gave a job that finished in 1944,
    // a 7-digit `timestamp` one added in 1970; times in seconds would have put a whole dump there.
    let dir = tempfile::tempdir().unwrap();
    let jobs = dir.path().join("jobs.jsonl");
    let run_on = |line: &str| {
        std::fs::write(&jobs, format!("{line}\n")).unwrap();
        leasetrace(&["timeline", "--jobs", jobs.to_str().unwrap()]).run()
    };
    let run =
        run_on(r#"{"key":"bull:q:1","hash":{"name":"n","timestamp":"1791333180000","finishedOn":"-796159462886"}}"#);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let said = "jobs.jsonl:1: job 1: 'finishedOn' is '-796159462886', before 2001-09-09 as epoch milliseconds";
    assert!(run.stderr.contains(said), "{}", run.stderr);
    let run = run_on(r#"{"key":"bull:q:2","hash":{"name":"n","timestamp":"1796159462"}}"#);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("'timestamp' is '1796159462', before 2001-09-09"), "{}", run.stderr);
    assert!(run.stderr.contains("in seconds"), "names the likely cause: {}", run.stderr);
    let run = run_on(r#"{"key":"bull:q:3","hash":{"name":"n","timestamp":"1000000000000"}}"#);
    assert_eq!(run.code, 0, "the first 13-digit millisecond is a time: {}", run.stderr);
}

#[test]
fn missing_column_names_the_field_and_the_flag() {
    let ledger = b"when,run_id,event\n2026-10-07T00:33:03Z,r1,round_started\n";
    let dir = case_with(&[("ledger.csv", ledger), ("server.log", GOOD_LOG)], LEDGER_AND_LOG);
    expect_input_error(&dir, "ledger.csv", Some(1), "missing column for the ledger field 'time'");
    let run = leasetrace(&["analyze", dir.path().to_str().unwrap(), "--column", "time=when"]).run();
    assert_eq!(run.code, 0, "mapping the column fixes it: {}", run.stderr);
}

#[test]
fn empty_file_is_an_error() {
    let dir = case_with(&[("ledger.csv", GOOD_LEDGER), ("server.log", b"")], LEDGER_AND_LOG);
    expect_input_error(&dir, "server.log", None, "file is empty");
}

#[test]
fn an_events_export_of_an_empty_stream_holds_no_entries_and_is_not_an_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("events.json");
    std::fs::write(&events, "[]\n").unwrap();
    let run = leasetrace(&["timeline", "--events", events.to_str().unwrap(), "--queue", "q", "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    assert_eq!(report["inputs"][0]["lines"], 1);
    let warning = report["warnings"][0]["message"].as_str().unwrap();
    assert!(warning.contains("events.json contributed nothing: it holds no entries (an empty JSON array"), "{warning}");
    std::fs::write(&events, "").unwrap();
    let run = leasetrace(&["timeline", "--events", events.to_str().unwrap(), "--queue", "q"]).run();
    assert_eq!(run.code, 2);
    assert!(run.stderr.ends_with("events.json: file is empty: expected a bullmq-events with at least one line\n"));
}

#[test]
fn a_pino_line_with_a_lone_surrogate_escape_names_it_its_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("app.log");
    let good = r#"{"level":30,"time":1791333180000,"msg":"job active","jobId":"7"}"#;
    std::fs::write(&log, format!("{good}\n{}\n", r#"{"level":30,"time":1791333180000,"msg":"job \ud800 active"}"#))
        .unwrap();
    let run = leasetrace(&["timeline", "--log", log.to_str().unwrap()]).run();
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains(
            "app.log:2: not a JSON object: an invalid escape at column 45: '\\ud800' is a lone UTF-16 surrogate"
        ),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("end of hex escape"), "{}", run.stderr);
}

#[test]
fn binary_garbage_is_an_error_with_a_line() {
    let garbage: Vec<u8> = (0u8..=255).cycle().take(4096).collect();
    let dir = case_with(&[("ledger.csv", GOOD_LEDGER), ("server.log", &garbage)], LEDGER_AND_LOG);
    expect_input_error(&dir, "server.log", Some(1), "binary data");
    let dir = case_with(&[("ledger.csv", &garbage), ("server.log", GOOD_LOG)], LEDGER_AND_LOG);
    let run = leasetrace(&["analyze", dir.path().to_str().unwrap()]).run();
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("ledger.csv:1: "), "{}", run.stderr);
}

#[test]
fn unknown_zone_is_a_usage_error() {
    let run = leasetrace(&["analyze", INCIDENT, "--tz", "KST"]).run();
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("--tz: 'KST' is an abbreviation, not an IANA zone name: it is used for Asia/Seoul (+09:00)"),
        "{}",
        run.stderr
    );
    let manifest = LEDGER_AND_LOG.replace("Asia/Seoul", "Asia/Seul");
    let dir = case_with(&[("ledger.csv", GOOD_LEDGER), ("server.log", GOOD_LOG)], &manifest);
    let run = leasetrace(&["analyze", dir.path().to_str().unwrap()]).run();
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("unknown time zone 'Asia/Seul': did you mean Asia/Seoul?"), "{}", run.stderr);
}

#[test]
fn a_log_without_a_declared_zone_says_which_flag_to_pass() {
    let run = leasetrace(&[
        "analyze",
        "--ledger",
        &format!("{INCIDENT}/ledger.csv"),
        "--log",
        &format!("{INCIDENT}/server.log"),
    ])
    .run();
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains(&format!("{INCIDENT}/server.log:1: timestamp has no UTC offset")), "{}", run.stderr);
    assert!(run.stderr.contains("--log-tz"), "{}", run.stderr);
}

#[test]
fn an_unknown_manifest_key_is_reported_with_its_line() {
    let dir = case_with(&[], "display_tz = \"UTC\"\n\n[[sources]]\nkind = \"ledger\"\npaht = \"ledger.csv\"\n");
    let run = leasetrace(&["analyze", dir.path().to_str().unwrap()]).run();
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("leasetrace.toml:"), "{}", run.stderr);
    assert!(run.stderr.contains("paht"), "{}", run.stderr);
}

#[test]
fn nothing_to_read_is_a_usage_error() {
    let run = leasetrace(&["analyze"]).run();
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("nothing to read"), "{}", run.stderr);
}

// ---------------------------------------------------------------- sources by flag, stdin, gzip

fn findings_without_inputs(report: &Value) -> Value {
    report["findings"].clone()
}

/// `analyze --format json` of the incident given by flags, with `ledger` and `log` for its ledger
/// and log (KST) and `extra` flags.
fn analyze_incident_by_flags(ledger: &str, log: &str, extra: &[&str]) -> Leasetrace {
    let params = format!("{INCIDENT}/bullmq.json");
    let mut args = vec![
        "analyze",
        "--ledger",
        ledger,
        "--log",
        log,
        "--log-tz",
        "Asia/Seoul",
        "--params",
        &params,
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    leasetrace(&args)
}

#[test]
fn flags_without_a_manifest_give_the_same_findings() {
    let manifest = leasetrace(&["analyze", INCIDENT, "--format", "json"]).run().json();
    let (ledger, log) = (format!("{INCIDENT}/ledger.csv"), format!("{INCIDENT}/server.log"));
    let flags = analyze_incident_by_flags(&ledger, &log, &["--tz", "Asia/Seoul"]).run();
    assert_eq!(flags.code, 0, "{}", flags.stderr);
    assert_eq!(findings_without_inputs(&flags.json()), findings_without_inputs(&manifest));
}

/// The reference log as journalctl and logcli print it (fixtures/envelopes, made by
/// journald.sh with systemd's own tools and by loki.sh in logcli's shapes): each is recognised
/// from its content, every line is accounted for, and the findings are the plain log's. The
/// restart (a new PID in the journal, the container's restart in its pod in Loki) is the
/// restart of the instance that held the job.
#[test]
fn the_reference_log_in_journald_and_loki_envelopes_gives_the_plain_logs_findings() {
    let essence = |report: &Value| -> Vec<Value> {
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| serde_json::json!([f["kind"], f["at"], f["summary"], f["metrics"]]))
            .collect()
    };
    let ledger = format!("{INCIDENT}/ledger.csv");
    let plain = analyze_incident_by_flags(&ledger, &format!("{INCIDENT}/server.log"), &["--tz", "Asia/Seoul"]).run();
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    let plain = essence(&plain.json());
    assert!(plain.iter().any(|f| f[0] == "stalled-rerun"));
    for (file, format, instance) in [
        ("journald.json", "journald-json", Some("host=api-1 unit=review-api.service identifier=review-api")),
        ("journald-seoul.short-iso", "journald-short-iso", Some("host=api-1 identifier=review-api")),
        ("journald-utc.short-iso", "journald-short-iso", Some("host=api-1 identifier=review-api")),
        ("journald-seoul.short-iso-precise", "journald-short-iso-precise", Some("host=api-1 identifier=review-api")),
        ("loki-backward-utc.jsonl", "loki-jsonl", Some("pod=review-api-7d9f8b6c4-x2k9p")),
        ("loki-forward-seoul.default", "loki-default", Some("pod=review-api-7d9f8b6c4-x2k9p")),
        ("loki-forward.raw", "text", None),
    ] {
        let log = format!("fixtures/envelopes/{file}");
        let run = analyze_incident_by_flags(&ledger, &log, &["--tz", "Asia/Seoul"]).run();
        assert_eq!(run.code, 0, "{file}: {}", run.stderr);
        let report = run.json();
        let input = report["inputs"].as_array().unwrap().iter().find(|i| i["kind"] == "log").unwrap().clone();
        assert_eq!(input["format"], format, "{file}");
        let count = |key: &str| input[key].as_u64().unwrap();
        assert_eq!((count("lines"), count("used") + count("ignored") + count("rejected")), (684, 684), "{file}");
        assert_eq!(count("rejected"), 0, "{file}");
        assert_eq!(essence(&report), plain, "{file}");
        let stalled = finding(&report, "stalled-rerun");
        let cited = stalled["evidence"].as_array().unwrap().iter().find(|e| e["kind"] == "job-active").unwrap();
        assert_eq!(cited["source"]["instance"].as_str(), instance, "{file}");
    }
}

/// The reference log as the log stores export it (fixtures/envelopes: the real aws CLI's
/// filter-log-events, a `_search?pretty` response and gcloud's JSON, the last two newest first):
/// each is recognised from its content, every line of the document is accounted for, and the
/// findings are the plain log's, their evidence naming the instance the store labelled.
#[test]
fn the_reference_log_in_log_store_json_exports_gives_the_plain_logs_findings() {
    let essence = |report: &Value| -> Vec<Value> {
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| serde_json::json!([f["kind"], f["at"], f["summary"], f["metrics"]]))
            .collect()
    };
    let ledger = format!("{INCIDENT}/ledger.csv");
    let plain = analyze_incident_by_flags(&ledger, &format!("{INCIDENT}/server.log"), &["--tz", "Asia/Seoul"]).run();
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    let plain = essence(&plain.json());
    assert!(plain.iter().any(|f| f[0] == "stalled-rerun"));
    for (file, format, instance) in [
        ("cloudwatch-filter-log-events.json", "cloudwatch-json", "log_stream=i-0a1b2c3d4e5f60718"),
        ("elasticsearch-search.json", "elasticsearch-json", "host=review-server-1"),
        (
            "gcloud-logging-read.json",
            "gcloud-json",
            "host=gke-prod-pool-1-3f2a9c1e-k8vd namespace=review pod=review-server-7c9d5b8f4-x2x4q container=review-server",
        ),
    ] {
        let log = format!("fixtures/envelopes/{file}");
        let lines = std::fs::read_to_string(format!("{}/{log}", env!("CARGO_MANIFEST_DIR"))).unwrap().lines().count();
        let run = analyze_incident_by_flags(&ledger, &log, &["--tz", "Asia/Seoul"]).run();
        assert_eq!(run.code, 0, "{file}: {}", run.stderr);
        let report = run.json();
        let input = report["inputs"].as_array().unwrap().iter().find(|i| i["kind"] == "log").unwrap().clone();
        assert_eq!(input["format"], format, "{file}");
        let count = |key: &str| input[key].as_u64().unwrap();
        assert_eq!(count("lines"), lines as u64, "{file}");
        assert_eq!(count("used") + count("ignored") + count("rejected"), lines as u64, "{file}");
        assert_eq!(count("rejected"), 0, "{file}");
        assert_eq!(essence(&report), plain, "{file}");
        let stalled = finding(&report, "stalled-rerun");
        let cited = stalled["evidence"].as_array().unwrap().iter().find(|e| e["kind"] == "job-active").unwrap();
        assert_eq!(cited["source"]["instance"].as_str(), Some(instance), "{file}");
    }
}

/// The reference log as the container runtimes wrap it (fixtures/envelopes: `kubectl logs
/// --timestamps`, `docker logs -t`, `kubectl logs -f --prefix --timestamps` of two pods, and
/// containerd's CRI file with the restart's line split into `P` and `F`): each is recognised from
/// its content, every line is accounted for, and the findings are the plain log's. In the
/// two-pod export the job is the server pod's, and the other pod adds nothing.
#[test]
fn the_reference_log_in_container_runtime_envelopes_gives_the_plain_logs_findings() {
    let essence = |report: &Value| -> Vec<Value> {
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| serde_json::json!([f["kind"], f["at"], f["summary"], f["metrics"]]))
            .collect()
    };
    let ledger = format!("{INCIDENT}/ledger.csv");
    let plain = analyze_incident_by_flags(&ledger, &format!("{INCIDENT}/server.log"), &["--tz", "Asia/Seoul"]).run();
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    let plain = essence(&plain.json());
    assert!(plain.iter().any(|f| f[0] == "stalled-rerun"));
    for (file, format, lines, instance) in [
        ("kubectl.log", "kubectl", 684, None),
        ("docker.log", "kubectl", 684, None),
        ("kubectl-prefix.log", "kubectl-prefix", 1093, Some("pod=web-7d9f8c6b5-x2k4p container=api")),
        ("cri.log", "cri", 685, None),
    ] {
        let log = format!("fixtures/envelopes/{file}");
        let run = analyze_incident_by_flags(&ledger, &log, &["--tz", "Asia/Seoul"]).run();
        assert_eq!(run.code, 0, "{file}: {}", run.stderr);
        let report = run.json();
        let input = report["inputs"].as_array().unwrap().iter().find(|i| i["kind"] == "log").unwrap().clone();
        assert_eq!(input["format"], format, "{file}");
        let count = |key: &str| input[key].as_u64().unwrap();
        assert_eq!((count("lines"), count("used") + count("ignored") + count("rejected")), (lines, lines), "{file}");
        assert_eq!(count("rejected"), 0, "{file}");
        assert_eq!(essence(&report), plain, "{file}");
        let stalled = finding(&report, "stalled-rerun");
        let cited = stalled["evidence"].as_array().unwrap().iter().find(|e| e["kind"] == "job-active").unwrap();
        assert_eq!(cited["source"]["instance"].as_str(), instance, "{file}");
    }
}

#[test]
fn lock_flags_override_the_parameters_file() {
    // With a 30 s lock the restart at +266 s comes long after the first renewal could happen:
    // the expiry is no longer exact.
    let report = leasetrace(&["analyze", INCIDENT, "--lock-duration", "30000", "--format", "json"]).run().json();
    let metrics = &finding(&report, "stalled-rerun")["metrics"];
    assert!(metrics.get("lock_expired_at").is_none());
    assert_eq!(metrics["died_before_first_renewal"], false);
    assert_eq!(report["params"]["origins"]["lockDuration"], "flag");
}

/// The incident's log, gzipped into `dir`.
fn gzipped_incident_log(dir: &Path) -> PathBuf {
    let log = std::fs::read(format!("{}/{INCIDENT}/server.log", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let gz = dir.join("server.log.gz");
    let mut encoder = flate2::write::GzEncoder::new(std::fs::File::create(&gz).unwrap(), flate2::Compression::fast());
    encoder.write_all(&log).unwrap();
    encoder.finish().unwrap();
    gz
}

/// `analyze --format json` of the incident with its ledger on stdin and its log gzipped (input
/// that cannot be read twice, so events keep their text).
fn analyze_incident_from_stdin_and_gzip() -> Run {
    let ledger = std::fs::read(format!("{}/{INCIDENT}/ledger.csv", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let gz = gzipped_incident_log(dir.path());
    analyze_incident_by_flags("-", gz.to_str().unwrap(), &[]).stdin(&ledger).run()
}

#[test]
fn stdin_and_gzip_sources() {
    let run = analyze_incident_from_stdin_and_gzip();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    assert_eq!(finding(&report, "stalled-rerun")["metrics"]["restart_to_rerun_s"], 934.0);
    assert_eq!(finding(&report, "duplicate-selection")["metrics"]["delta_s"], 0.66);
    assert_eq!(report["inputs"][0]["path"], "-");
}

/// Lines of plain files are read back from the file when the report is written (docs/json.md):
/// they must be the very lines that stdin and gzip sources, which keep their text, give.
#[test]
fn evidence_read_back_from_files_is_the_text_kept_from_stdin_and_gzip() {
    let kept = analyze_incident_from_stdin_and_gzip();
    let (ledger, log) = (format!("{INCIDENT}/ledger.csv"), format!("{INCIDENT}/server.log"));
    let read_back = analyze_incident_by_flags(&ledger, &log, &[]).run();
    let evidence = |report: &Value| -> Vec<(u64, String)> {
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|f| f["evidence"].as_array().unwrap().iter())
            .map(|e| (e["source"]["line"].as_u64().unwrap(), e["raw"].as_str().unwrap().to_string()))
            .collect()
    };
    let (kept, read_back) = (evidence(&kept.json()), evidence(&read_back.json()));
    assert!(kept.len() >= 10, "the incident cites ledger rows and log lines: {kept:?}");
    assert_eq!(kept, read_back);
    // And they are the lines of the files, numbered from 1.
    let log = std::fs::read_to_string(format!("{}/{INCIDENT}/server.log", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let ledger = std::fs::read_to_string(format!("{}/{INCIDENT}/ledger.csv", env!("CARGO_MANIFEST_DIR"))).unwrap();
    for (line, raw) in &read_back {
        let index = usize::try_from(*line).unwrap() - 1;
        let in_file = [log.lines().nth(index), ledger.lines().nth(index)];
        assert!(in_file.contains(&Some(raw.as_str())), "line {line}: {raw}");
    }
}

/// A log past the size that is read in two parts (16 MiB): eight hours of health checks before
/// the incident's own lines, which are then all after the middle.
fn large_incident_log() -> String {
    use std::fmt::Write as _;
    let mut log = String::with_capacity(20 << 20);
    for i in 0..260_000u32 {
        let at = 3_600_000 + i * 100;
        let (h, m, s, ms) = (at / 3_600_000, at / 60_000 % 60, at / 1000 % 60, at % 1000);
        writeln!(log, "2026-10-07 {h:02}:{m:02}:{s:02}.{ms:03} INFO  [HTTP] GET /healthz 200 1.{}ms pid=41877", i % 10)
            .unwrap();
    }
    log.push_str(&std::fs::read_to_string(format!("{}/{INCIDENT}/server.log", env!("CARGO_MANIFEST_DIR"))).unwrap());
    assert!(log.len() > 16 << 20);
    log
}

/// A large log piped is read in two parts as the file is (the second from the copy made while
/// it is read): the same report byte for byte but for the path, every line counted once, the
/// cited lines after the middle numbered and quoted as in the file.
#[test]
fn a_large_piped_log_gives_the_report_of_the_file_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let log = large_incident_log();
    let path = dir.path().join("server.log");
    std::fs::write(&path, &log).unwrap();
    let ledger = format!("{INCIDENT}/ledger.csv");
    let from_file = analyze_incident_by_flags(&ledger, path.to_str().unwrap(), &[]).run();
    assert_eq!(from_file.code, 0, "{}", from_file.stderr);
    let piped = analyze_incident_by_flags(&ledger, "-", &[]).stdin(log.as_bytes()).run();
    assert_eq!(piped.code, 0, "{}", piped.stderr);
    let quoted = serde_json::to_string(path.to_str().unwrap()).unwrap();
    assert_eq!(piped.stdout.replace("\"path\": \"-\"", &format!("\"path\": {quoted}")), from_file.stdout);
    let report = from_file.json();
    let input = report["inputs"].as_array().unwrap().iter().find(|i| i["kind"] == "log").unwrap();
    assert_eq!(input["lines"], log.lines().count());
    let lines: Vec<&str> = log.lines().collect();
    let cited: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["evidence"].as_array().unwrap())
        .filter(|e| e["source"]["path"] == path.to_str().unwrap())
        .collect();
    assert!(!cited.is_empty(), "the log is cited");
    for evidence in cited {
        let line = usize::try_from(evidence["source"]["line"].as_u64().unwrap()).unwrap();
        assert!(line > 260_000, "line {line}: the incident's lines are after the health checks");
        assert_eq!(evidence["raw"], lines[line - 1], "line {line}");
    }
}

/// The incident's log as a run of gzip members cut mid-line (what `cat a.gz b.gz` gives), as a
/// `.gz` file and piped on standard input, and the plain log piped: each the plain file's report,
/// byte for byte but for the log's path.
#[test]
fn a_log_in_gzip_members_cut_mid_line_from_a_file_or_a_pipe_gives_the_plain_files_report() {
    let log = std::fs::read(format!("{}/{INCIDENT}/server.log", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("server.log.gz");
    let mut members = Vec::new();
    let pieces: Vec<&[u8]> = log.chunks(log.len() / 3 + 7).collect();
    assert!(pieces.len() == 3 && pieces[..2].iter().all(|piece| !piece.ends_with(b"\n")), "cut mid-line");
    for piece in pieces {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(piece).unwrap();
        members.extend(encoder.finish().unwrap());
    }
    std::fs::write(&gz, &members).unwrap();
    let plain = format!("{INCIDENT}/server.log");
    let ledger = format!("{INCIDENT}/ledger.csv");
    let from_file = analyze_incident_by_flags(&ledger, &plain, &[]).run();
    assert_eq!(from_file.code, 0, "{}", from_file.stderr);
    assert!(!from_file.json()["findings"].as_array().unwrap().is_empty());
    let gz_path = gz.to_str().unwrap();
    for (way, run) in [
        (gz_path, analyze_incident_by_flags(&ledger, gz_path, &[]).run()),
        ("-", analyze_incident_by_flags(&ledger, "-", &[]).stdin(&members).run()),
        ("-", analyze_incident_by_flags(&ledger, "-", &[]).stdin(&log).run()),
    ] {
        assert_eq!(run.code, 0, "{way}: {}", run.stderr);
        let quoted = |path: &str| format!("\"path\": {}", serde_json::to_string(path).unwrap());
        assert_eq!(run.stdout.replace(&quoted(way), &quoted(&plain)), from_file.stdout, "{way}");
    }
}

#[test]
fn a_jsonl_ledger_reads_like_the_csv_one() {
    let csv = std::fs::read_to_string(format!("{}/{INCIDENT}/ledger.csv", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let mut rows = csv.lines();
    let header: Vec<&str> = rows.next().unwrap().split(',').collect();
    let mut jsonl = String::new();
    for row in rows {
        // JSON Lines exporters omit empty values: records have different keys.
        let object: serde_json::Map<String, Value> = header
            .iter()
            .zip(row.split(','))
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| ((*k).to_string(), Value::from(v)))
            .collect();
        jsonl.push_str(&Value::Object(object).to_string());
        jsonl.push('\n');
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.jsonl");
    std::fs::write(&path, jsonl).unwrap();
    let run = analyze_incident_by_flags(path.to_str().unwrap(), &format!("{INCIDENT}/server.log"), &[]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut found = kinds(&run.json());
    found.sort();
    assert_eq!(found, ["duplicate-selection", "lock-headroom", "stalled-rerun", "sweep-overlap", "unlogged-stall"]);
}

// ---------------------------------------------------------------- daylight saving, database timestamps

/// A log of America/Los_Angeles across the fall-back of 2026-11-01 (02:00 PDT became 01:00 PST),
/// written in time order: two sweeps activated at 01:30:00.004 local, an hour apart.
const FALL_BACK_LOG: &str = "\
2026-11-01 00:59:58.250 INFO  [main] server starting pid=7001
2026-11-01 01:30:00.004 INFO  [BullWorker] job active queue=pr-review name=sweep id=repeat:sweep:1793521800000 pid=7001
2026-11-01 01:31:12.500 INFO  [BullWorker] job completed queue=pr-review name=sweep id=repeat:sweep:1793521800000 pid=7001
2026-11-01 01:59:59.912 INFO  GET /healthz 200 1ms
2026-11-01 01:59:59.907 INFO  GET /metrics 200 3ms
2026-11-01 01:00:00.118 INFO  GET /healthz 200 1ms
2026-11-01 01:30:00.004 INFO  [BullWorker] job active queue=pr-review name=sweep id=repeat:sweep:1793525400000 pid=7001
2026-11-01 01:30:03.900 WARN  [BullWorker] job failed queue=pr-review id=repeat:sweep:1793525400000 reason=\"socket hang up\" pid=7001
2026-11-01 02:00:01.000 INFO  GET /healthz 200 1ms
";

/// `timeline --format json` of `log` as the case folder `dir` declares it (`source` holds the
/// manifest's extra keys for the log), with `extra` flags.
fn timeline_of_log(dir: &Path, log: &str, source: &str, extra: &[&str]) -> Run {
    std::fs::write(dir.join("server.log"), log).unwrap();
    let manifest =
        format!("[[sources]]\nkind = \"log\"\npath = \"server.log\"\ntz = \"America/Los_Angeles\"\n{source}\n");
    std::fs::write(dir.join("leasetrace.toml"), manifest).unwrap();
    let mut args = vec!["timeline", dir.to_str().unwrap(), "--format", "json"];
    args.extend_from_slice(extra);
    leasetrace(&args).run()
}

fn event_times(report: &Value) -> Vec<(u64, String)> {
    report["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["source"]["line"].as_u64().unwrap(), e["at"].as_str().unwrap().to_string()))
        .collect()
}

#[test]
fn a_log_across_the_fall_back_is_placed_by_its_line_order_and_the_report_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let run = timeline_of_log(dir.path(), FALL_BACK_LOG, "", &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    assert_eq!(
        event_times(&report),
        [
            (1, "2026-11-01T07:59:58.250Z".to_string()),
            (2, "2026-11-01T08:30:00.004Z".to_string()),
            (3, "2026-11-01T08:31:12.500Z".to_string()),
            (7, "2026-11-01T09:30:00.004Z".to_string()),
            (8, "2026-11-01T09:30:03.900Z".to_string()),
        ]
    );
    let path = dir.path().join("server.log").display().to_string();
    let assumptions: Vec<&str> =
        report["assumptions"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    assert!(
        assumptions.contains(&format!("{path}: 7 lines in the repeated hour 01:00–02:00 PDT/PST on 2026-11-01 (America/Los_Angeles) resolved by line order: 4 as PDT (first pass, lines 2–5), 3 as PST (second pass, lines 6–8)").as_str()),
        "{assumptions:#?}"
    );
    // The table says it under Assumptions too.
    let table = leasetrace(&["timeline", dir.path().to_str().unwrap()]).run();
    assert!(table.stdout.contains("resolved by line order: 4 as PDT (first pass, lines 2–5)"), "{}", table.stdout);
}

#[test]
fn ambiguous_later_in_the_manifest_or_by_flag_places_every_repeated_time_in_the_second_pass() {
    let dir = tempfile::tempdir().unwrap();
    // In time order: the first sweep's lines now come after the second's activation.
    let later = [
        (1, "2026-11-01T07:59:58.250Z".to_string()),
        (2, "2026-11-01T09:30:00.004Z".to_string()),
        (7, "2026-11-01T09:30:00.004Z".to_string()),
        (8, "2026-11-01T09:30:03.900Z".to_string()),
        (3, "2026-11-01T09:31:12.500Z".to_string()),
    ];
    let by_manifest = timeline_of_log(dir.path(), FALL_BACK_LOG, "ambiguous = \"later\"", &[]);
    assert_eq!(by_manifest.code, 0, "{}", by_manifest.stderr);
    let report = by_manifest.json();
    assert_eq!(event_times(&report), later);
    assert!(
        report["assumptions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a.as_str().unwrap().ends_with(
                "read as the second pass, as ambiguous = \"later\" says: 7 as PST (second pass, lines 2–8)"
            )),
        "{:#?}",
        report["assumptions"]
    );
    // The flag wins over the manifest.
    let by_flag =
        timeline_of_log(dir.path(), FALL_BACK_LOG, "ambiguous = \"earlier\"", &["--log-ambiguous", "later"]).json();
    assert_eq!(event_times(&by_flag), later);
    // `error`: the first repeated time that matters stops the run, naming the setting.
    let refused = timeline_of_log(dir.path(), FALL_BACK_LOG, "ambiguous = \"error\"", &[]);
    assert_eq!(refused.code, 2);
    assert!(
        refused.stderr.contains("server.log:2: local time occurs twice in America/Los_Angeles"),
        "{}",
        refused.stderr
    );
    assert!(
        refused
            .stderr
            .contains("say which time it is with ambiguous = \"earlier\" or ambiguous = \"later\" for this source in"),
        "{}",
        refused.stderr
    );
    // Unknown choices, and order for a ledger, are refused before anything is read.
    let unknown = timeline_of_log(dir.path(), FALL_BACK_LOG, "ambiguous = \"first\"", &[]);
    assert_eq!(unknown.code, 2);
    assert!(
        unknown.stderr.contains("ambiguous = 'first': expected one of order, earlier, later, error"),
        "{}",
        unknown.stderr
    );
}

#[test]
fn a_log_all_inside_the_repeated_hour_is_an_error_naming_the_setting() {
    let dir = tempfile::tempdir().unwrap();
    let log = "2026-11-01 01:30:00.004 INFO [BullWorker] job active queue=q id=7\n\
               2026-11-01 01:31:12.500 INFO [BullWorker] job completed queue=q id=7\n";
    let run = timeline_of_log(dir.path(), log, "", &[]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        run.stderr.contains("server.log:1: every timestamped line of the log (2 lines, 1–2) is in the repeated hour 01:00–02:00 PDT/PST on 2026-11-01 (America/Los_Angeles), and none steps back in time: line order cannot tell whether they are PDT (the first pass) or PST (the second); say which with ambiguous = \"earlier\" or ambiguous = \"later\" for this source in"),
        "{}",
        run.stderr
    );
    // By flag, the flag is named; and saying which reads it.
    let path = dir.path().join("server.log");
    let by_flag = leasetrace(&[
        "timeline",
        "--log",
        path.to_str().unwrap(),
        "--log-tz",
        "America/Los_Angeles",
        "--format",
        "json",
    ])
    .run();
    assert_eq!(by_flag.code, 2);
    assert!(
        by_flag.stderr.contains("say which with --log-ambiguous earlier or --log-ambiguous later"),
        "{}",
        by_flag.stderr
    );
    let said = timeline_of_log(dir.path(), log, "", &["--log-ambiguous", "earlier"]);
    assert_eq!(event_times(&said.json())[0].1, "2026-11-01T08:30:00.004Z");
}

#[test]
fn a_time_in_the_spring_forward_gap_is_rejected_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let log = "2026-03-08 01:59:59.000 INFO [BullWorker] job active queue=q id=7\n\
               2026-03-08 02:30:00.000 INFO [BullWorker] job completed queue=q id=7\n\
               2026-03-08 03:00:01.000 INFO [BullWorker] job active queue=q id=8\n";
    let run = timeline_of_log(dir.path(), log, "", &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    assert_eq!(
        event_times(&report),
        [(1, "2026-03-08T09:59:59.000Z".to_string()), (3, "2026-03-08T10:00:01.000Z".to_string())]
    );
    let input = &report["inputs"][0];
    assert_eq!(
        (input["lines"].as_u64(), input["used"].as_u64(), input["rejected"].as_u64()),
        (Some(3), Some(2), Some(1))
    );
    assert_eq!(input["rejections"][0]["line"], 2);
    assert_eq!(
        input["rejections"][0]["reason"],
        "local time does not exist in America/Los_Angeles (daylight-saving gap); is the declared zone right?"
    );
}

#[test]
fn a_ledger_has_no_order_choice_and_its_repeated_times_stop_the_run_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("runs.csv");
    std::fs::copy(format!("{}/fixtures/formats/psql-la-fall-back.csv", env!("CARGO_MANIFEST_DIR")), &ledger).unwrap();
    let ledger = ledger.to_str().unwrap();
    let base = ["timeline", "--ledger", ledger, "--column", "time=at_local", "--ledger-tz", "America/Los_Angeles"];
    let run = leasetrace(&base).run();
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("runs.csv:3: column 'at_local': local time occurs twice in America/Los_Angeles"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("--ledger-ambiguous earlier or --ledger-ambiguous later"), "{}", run.stderr);
    let order = leasetrace(&[&base[..], &["--ledger-ambiguous", "order"]].concat()).run();
    assert_eq!(order.code, 2);
    assert!(order.stderr.contains("'order'"), "{}", order.stderr);
    let manifest = "[[sources]]\nkind = \"ledger\"\npath = \"runs.csv\"\nambiguous = \"order\"\n";
    std::fs::write(dir.path().join("leasetrace.toml"), manifest).unwrap();
    let order = leasetrace(&["timeline", dir.path().to_str().unwrap()]).run();
    assert_eq!(order.code, 2);
    assert!(
        order
            .stderr
            .contains("ambiguous = 'order' is for logs, which are written in time order; a ledger is not necessarily"),
        "{}",
        order.stderr
    );
}

#[test]
fn psql_exports_read_to_the_same_instants_in_every_session_zone() {
    let root = env!("CARGO_MANIFEST_DIR");
    let times = |file: &str, extra: &[&str]| -> Vec<String> {
        let path = format!("{root}/fixtures/formats/{file}");
        let run = leasetrace(&[&["timeline", "--ledger", path.as_str(), "--format", "json"][..], extra].concat()).run();
        assert_eq!(run.code, 0, "{file}: {}", run.stderr);
        run.json()["timeline"].as_array().unwrap().iter().map(|e| format!("{} {}", e["at"], e["slot"])).collect()
    };
    let utc = times("psql-utc.csv", &[]);
    assert_eq!(utc[1], "\"2026-12-01T19:48:40.036Z\" \"2026-12-01T19:48:00.000Z\"");
    assert_eq!(times("psql-seoul.csv", &[]), utc);
    assert_eq!(times("psql-kolkata.csv", &[]), utc);
    assert_eq!(times("psql-seoul.csv", &["--column", "time=at_local", "--ledger-tz", "Asia/Seoul"]), utc);
    let at = |strings: Vec<String>| {
        strings.into_iter().map(|s| s.split(' ').next().unwrap().to_string()).collect::<Vec<_>>()
    };
    for column in ["time=at_s", "time=at_ms", "time=at_us"] {
        assert_eq!(at(times("psql-epoch.csv", &["--column", column])), at(utc.clone()), "{column}");
    }
}

// ---------------------------------------------------------------- golden outputs

/// Compares with tests/golden/<name>; `LEASETRACE_BLESS=1 cargo test` rewrites the files after a
/// reviewed change.
fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(name);
    if std::env::var_os("LEASETRACE_BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("missing {}; run with LEASETRACE_BLESS=1", path.display()));
    assert!(expected == actual, "{} differs from the output:\n{actual}", path.display());
}

#[test]
fn golden_outputs_per_fixture_and_format() {
    for (case, label) in [
        (INCIDENT, "incident-2026-10-07"),
        (CLEAN, "clean-sweeps"),
        (REAL_STALLED, "bullmq-5.81.5-stalled"),
        (REAL_LIMIT, "bullmq-5.81.5-stalled-limit"),
    ] {
        for format in ["table", "json", "jsonl", "timesketch", "mermaid", "svg", "markdown", "html"] {
            let run = leasetrace(&["analyze", case, "--format", format]).run();
            assert_eq!(run.code, 0, "{}", run.stderr);
            let extension = if format == "markdown" { "md" } else { format };
            golden(&format!("{label}.analyze.{extension}"), &run.stdout);
        }
        // The CI formats, under the command CI runs: exit 1 when a finding reaches --fail-on.
        for format in ["sarif", "github"] {
            let run = leasetrace(&["check", case, "--format", format]).run();
            assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
            golden(&format!("{label}.check.{format}"), &run.stdout);
        }
    }
}

// ---------------------------------------------------------------- docs and registries

#[test]
fn explain_prints_each_findings_documentation() {
    let list = leasetrace(&["explain"]).run();
    assert_eq!(list.code, 0);
    // The codes come from the binary's own registry, so a new finding cannot skip its docs.
    let codes: Vec<String> =
        list.stdout.lines().filter_map(|l| l.split_whitespace().next()).map(str::to_string).collect();
    assert!(codes.len() >= 3, "{}", list.stdout);
    for code in codes.iter().map(String::as_str) {
        assert!(list.stdout.contains(code), "{}", list.stdout);
        let doc = leasetrace(&["explain", code]).run();
        assert_eq!(doc.code, 0);
        let file = std::fs::read_to_string(format!("{}/docs/findings/{code}.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
        assert_eq!(doc.stdout, file);
        for section in [
            "## What it means",
            "## How it is computed",
            "## Follows from",
            "## Metrics",
            "## Evidence it needs",
            "## Example",
            "## What to change in the system",
        ] {
            assert!(file.contains(section), "docs/findings/{code}.md lacks {section}");
        }
        let catalog = std::fs::read_to_string(format!("{}/docs/findings.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
        assert!(catalog.contains(&format!("findings/{code}.md")), "docs/findings.md does not list {code}");
    }
    let unknown = leasetrace(&["explain", "nope"]).run();
    assert_eq!(unknown.code, 2);
    assert!(unknown.stderr.contains("unknown finding 'nope'"));
}

#[test]
fn every_metric_a_finding_emits_is_documented() {
    let report = leasetrace(&["analyze", INCIDENT, "--format", "json"]).run().json();
    for finding in report["findings"].as_array().unwrap() {
        let code = finding["kind"].as_str().unwrap();
        let doc = std::fs::read_to_string(format!("{}/docs/findings/{code}.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
        for metric in finding["metrics"].as_object().unwrap().keys() {
            assert!(doc.contains(&format!("`{metric}`")), "docs/findings/{code}.md does not document `{metric}`");
        }
    }
}

#[test]
fn every_output_format_is_documented_in_the_index() {
    // The format names come from the binary's own `--format` values (the renderer registry).
    let help = leasetrace(&["analyze", "--help"]).run().stdout;
    let values = help.split("--format <NAME[=PATH]>").nth(1).unwrap();
    let values = values.split("[possible values: ").nth(1).unwrap().split(']').next().unwrap();
    let formats: Vec<&str> = values.split(", ").map(str::trim).collect();
    assert!(formats.len() >= 12, "{formats:?}");
    let index = std::fs::read_to_string(format!("{}/docs/outputs.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
    for format in formats {
        assert!(index.contains(&format!("| `{format}`")), "docs/outputs.md has no row for `{format}`");
    }
    for page in index.split("](").skip(1).map(|rest| rest.split(')').next().unwrap()) {
        let path = format!("{}/docs/{}", env!("CARGO_MANIFEST_DIR"), page.split('#').next().unwrap());
        assert!(Path::new(&path).exists(), "docs/outputs.md links {page}, which does not exist");
    }
}

#[test]
fn the_json_schema_version_is_documented() {
    let report = leasetrace(&["analyze", INCIDENT, "--format", "json"]).run().json();
    let schema = report["schema"].as_str().unwrap();
    assert_eq!(schema, "leasetrace.report/v5");
    let doc = std::fs::read_to_string(format!("{}/docs/json.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
    assert!(doc.contains(schema));
}

// ---------------------------------------------------------------- line order carries no meaning

#[test]
fn shuffled_sources_give_the_same_findings() {
    // Listeners log asynchronously and exports are not sorted: reversing every line of both
    // sources (headers kept first) must not change a single finding.
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = tempfile::tempdir().unwrap();
    let log = std::fs::read_to_string(format!("{root}/{INCIDENT}/server.log")).unwrap();
    let reversed_log: Vec<&str> = log.lines().rev().collect();
    std::fs::write(dir.path().join("server.log"), reversed_log.join("\n") + "\n").unwrap();
    let ledger = std::fs::read_to_string(format!("{root}/{INCIDENT}/ledger.csv")).unwrap();
    let mut rows: Vec<&str> = ledger.lines().collect();
    rows[1..].reverse();
    std::fs::write(dir.path().join("ledger.csv"), rows.join("\n") + "\n").unwrap();
    std::fs::copy(format!("{root}/{INCIDENT}/bullmq.json"), dir.path().join("bullmq.json")).unwrap();
    std::fs::copy(format!("{root}/{INCIDENT}/leasetrace.toml"), dir.path().join("leasetrace.toml")).unwrap();

    let sorted = leasetrace(&["analyze", INCIDENT, "--format", "json"]).run().json();
    let shuffled = leasetrace(&["analyze", dir.path().to_str().unwrap(), "--format", "json"]).run().json();
    let strip = |report: &Value| -> Vec<(Value, Value, Value)> {
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f["kind"].clone(), f["metrics"].clone(), f["summary"].clone()))
            .collect()
    };
    assert_eq!(strip(&shuffled), strip(&sorted));
}

// ---------------------------------------------------------------- init

#[test]
fn init_writes_a_manifest_that_leaves_the_log_zone_to_the_user() {
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = tempfile::tempdir().unwrap();
    for file in ["ledger.csv", "server.log", "bullmq.json"] {
        std::fs::copy(format!("{root}/{INCIDENT}/{file}"), dir.path().join(file)).unwrap();
    }
    std::fs::write(dir.path().join("notes.bin"), [0u8, 1, 2, 3]).unwrap();
    let case = dir.path().to_str().unwrap();
    let run = leasetrace(&["init", case]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("ZONE UNDECIDED"), "{}", run.stdout);
    assert!(run.stdout.contains("notes.bin"), "left-out files are listed: {}", run.stdout);

    // Until the zone is declared, analysis stops and says where to declare it.
    let analyze = leasetrace(&["analyze", case]).run();
    assert_eq!(analyze.code, 2);
    assert!(analyze.stderr.contains("tz = \"...\" for this source in"), "{}", analyze.stderr);

    // Declared on the command line, the written manifest reproduces the incident.
    let report = leasetrace(&["analyze", case, "--log-tz", "Asia/Seoul", "--format", "json"]).run().json();
    let manifest_report = leasetrace(&["analyze", INCIDENT, "--format", "json"]).run().json();
    assert_eq!(kinds(&report), kinds(&manifest_report));

    let again = leasetrace(&["init", case]).run();
    assert_eq!(again.code, 2, "an existing manifest is not replaced without --force");
    assert_eq!(leasetrace(&["init", case, "--force"]).run().code, 0);
}

// ---------------------------------------------------------------- exports of real BullMQ runs

#[test]
fn redis_cli_text_and_json_exports_of_the_same_stream_read_the_same() {
    for case in [REAL_STALLED, REAL_LIMIT, REAL_REPLICA_DIED, REAL_LIMIT_LOGGED] {
        let events = |file: &str| -> Vec<(Value, Value, Value, Value)> {
            let path = format!("{case}/{file}");
            let run = leasetrace(&["timeline", "--events", &path, "--queue", "pr-review", "--format", "json"]).run();
            assert_eq!(run.code, 0, "{}", run.stderr);
            let report = run.json();
            let input = &report["inputs"][0];
            assert_eq!(input["rejected"], 0, "{path}");
            report["timeline"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| (e["at"].clone(), e["kind"].clone(), e["job_id"].clone(), e["detail"].clone()))
                .collect()
        };
        let from_json = events("events.json");
        assert!(from_json.len() > 10, "{case}: the stream has the run's events");
        assert_eq!(events("events.txt"), from_json, "{case}");
    }
}

#[test]
fn a_real_replica_that_died_leaves_its_round_running_for_good() {
    let report = leasetrace(&["analyze", REAL_REPLICA_DIED, "--format", "json"]).run().json();
    let observed: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{}/{REAL_REPLICA_DIED}/observed.json", env!("CARGO_MANIFEST_DIR"))).unwrap(),
    )
    .unwrap();
    let at_ms =
        |metric: &Value| chrono::DateTime::parse_from_rfc3339(metric.as_str().unwrap()).unwrap().timestamp_millis();
    let orphan = finding(&report, "orphaned-round");
    let metrics = &orphan["metrics"];
    assert_eq!(metrics["run_id"], observed["dead_run_id"]);
    assert_eq!(metrics["job_id"], observed["job_id"]);
    let owner = metrics["owner"].as_str().unwrap();
    assert!(owner.ends_with(&format!("/{}", observed["killed_pid"])), "{owner}");
    assert_eq!(metrics["rows"], observed["dead_run_rows"]);
    // Last seen at its selection row, before the kill; moved back by the stalled check; replaced
    // by the other replica's run, which finished.
    assert_eq!(at_ms(&metrics["owner_last_seen_at"]), observed["dead_selected_at"].as_i64().unwrap());
    assert!(at_ms(&metrics["owner_last_seen_at"]) <= observed["killed_at"].as_i64().unwrap());
    assert_eq!(at_ms(&metrics["stalled_at"]), observed["stalled_event_at"].as_i64().unwrap());
    assert_eq!(at_ms(&metrics["replaced_at"]), observed["rerun_at"].as_i64().unwrap());
    assert_eq!(metrics["replaced_by_run_id"], observed["rerun_run_id"]);
    assert!(metrics["replacement_owner"].as_str().unwrap().ends_with(&format!("/{}", observed["rerun_pid"])));
    assert_eq!(metrics["replacement_status"], "finished");
    assert!(metrics.get("restart_at").is_none(), "no process started after the kill");
    // The dead round's rows are cited by file and line.
    let cited: Vec<(String, u64)> = orphan["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["run_id"] == observed["dead_run_id"])
        .map(|e| (e["source"]["path"].as_str().unwrap().to_string(), e["source"]["line"].as_u64().unwrap()))
        .collect();
    assert_eq!(cited.len(), 2, "{cited:?}");
    assert!(cited.iter().all(|(path, _)| path.ends_with("ledger.csv")));
    let mut found = kinds(&report);
    found.sort();
    assert_eq!(found, ["lock-headroom", "orphaned-round", "stalled-rerun", "unlogged-stall"]);
}

#[test]
fn each_real_stall_cites_its_own_logged_line_and_none_is_unlogged() {
    let report = leasetrace(&["analyze", REAL_LIMIT_LOGGED, "--format", "json"]).run().json();
    let observed: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{}/{REAL_LIMIT_LOGGED}/observed.json", env!("CARGO_MANIFEST_DIR"))).unwrap(),
    )
    .unwrap();
    let lines_at: Vec<i64> =
        observed["stalled_lines_at"].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect();
    assert_eq!(lines_at.len(), 2, "the harness saw two stalled lines");
    let at_ms = |text: &Value| chrono::DateTime::parse_from_rfc3339(text.as_str().unwrap()).unwrap().timestamp_millis();
    let mut reruns: Vec<&Value> =
        report["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == "stalled-rerun").collect();
    reruns.sort_by_key(|f| at_ms(&f["metrics"]["rerun_at"]));
    assert_eq!(reruns.len(), 2);
    for (rerun, line_at) in reruns.iter().zip(&lines_at) {
        assert_eq!(rerun["metrics"]["stalled_logged"], true, "{rerun:#}");
        let logged: Vec<i64> = rerun["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["kind"] == "job-stalled" && e["channel"] == "log")
            .map(|e| at_ms(&e["at"]))
            .collect();
        assert_eq!(logged, [*line_at], "each rerun cites the line of its own stall only\n{rerun:#}");
    }
    assert!(!kinds(&report).contains(&"unlogged-stall".to_string()), "{:?}", kinds(&report));
}

/// The report's assumptions that say an events stream was trimmed.
fn trimmed_stream_assumptions(report: &Value) -> Vec<String> {
    report["assumptions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|a| a.contains("the events stream starts at"))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_whole_real_stream_read_with_its_job_hashes_is_not_taken_for_trimmed() {
    // Each job hash's `timestamp` is the client's clock, a millisecond before the stream's `added`
    // entry for it; the log begins with the server's start, before any job.
    for case in [REAL_STALLED, REAL_LIMIT, REAL_REPLICA_DIED, REAL_LIMIT_LOGGED] {
        let report = leasetrace(&["analyze", case, "--format", "json"]).run().json();
        assert_eq!(trimmed_stream_assumptions(&report), Vec::<String>::new(), "{case}");
    }
}

#[test]
fn a_real_stream_cut_of_its_first_entries_is_said_to_be_trimmed() {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(REAL_STALLED);
    for file in ["leasetrace.toml", "ledger.csv", "server.log", "jobs.jsonl", "bullmq.json"] {
        std::fs::copy(root.join(file), dir.path().join(file)).unwrap();
    }
    // As BullMQ's MAXLEN trimming would leave it: the first round's six entries are gone.
    let entries: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(root.join("events.json")).unwrap()).unwrap();
    let kept = &entries[6..];
    std::fs::write(dir.path().join("events.json"), serde_json::to_string_pretty(kept).unwrap()).unwrap();
    let first_ms: i64 = kept[0]["id"].as_str().unwrap().split('-').next().unwrap().parse().unwrap();
    let first_at = chrono::DateTime::from_timestamp_millis(first_ms).unwrap();

    let run = leasetrace(&["analyze", dir.path().to_str().unwrap(), "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let found = trimmed_stream_assumptions(&run.json());
    assert_eq!(found.len(), 1, "{found:?}");
    let starts = first_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    assert!(found[0].contains(&format!("the events stream starts at {starts}")), "{}", found[0]);
    // The earliest record of something the stream would have had: the first job's creation,
    // in its hash (the first round was added at 08:46:24.203).
    assert!(
        found[0].contains("jobs.jsonl:1 records job-added of job repeat:pr-review-sweep:1796028384203"),
        "{}",
        found[0]
    );
}

#[test]
fn a_real_stall_is_in_the_stream_but_not_in_the_log() {
    let report = leasetrace(&["analyze", REAL_STALLED, "--format", "json"]).run().json();
    let observed: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{}/{REAL_STALLED}/observed.json", env!("CARGO_MANIFEST_DIR"))).unwrap(),
    )
    .unwrap();
    let metrics = &finding(&report, "stalled-rerun")["metrics"];
    assert_eq!(metrics["job_id"], observed["job_id"]);
    assert_eq!(metrics["stalled_in_stream"], true);
    assert_eq!(metrics["stalled_logged"], false);
    assert_eq!(metrics["rerun_in_stalled_window"], true);
    let unlogged = &finding(&report, "unlogged-stall")["metrics"];
    assert_eq!(unlogged["proven_by"], "events-stream");
    assert_eq!(unlogged["recovered_at"].as_str().map(|t| t[..19].to_string()), observed_stall_second(&observed));
    let mut found = kinds(&report);
    found.sort();
    assert_eq!(found, ["duplicate-selection", "lock-headroom", "stalled-rerun", "sweep-overlap", "unlogged-stall"]);
}

/// The observed `stalled` event time as `YYYY-MM-DDTHH:MM:SS` (UTC).
fn observed_stall_second(observed: &Value) -> Option<String> {
    let millis = observed["stalled_event_at"].as_i64()?;
    chrono::DateTime::from_timestamp_millis(millis).map(|t| t.format("%Y-%m-%dT%H:%M:%S").to_string())
}

// ---------------------------------------------------------------- lock

#[test]
fn lock_replays_the_incident_forwards_and_weighs_other_lock_durations() {
    let run = leasetrace(&[
        "lock",
        INCIDENT,
        "--activated-at",
        "2026-10-07 09:33:00",
        "--died-at",
        "2026-10-07T00:37:26Z",
        "--what-if",
        "300000,1178000",
        "--format",
        "json",
    ])
    .run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let plan = run.json();
    assert_eq!(plan["first_renewal_earliest_at"], "2026-10-07T00:37:54.500Z");
    assert_eq!(plan["first_renewal_due_at"], "2026-10-07T00:42:49.000Z");
    assert_eq!(plan["lock_expired_at"], "2026-10-07T00:52:38.000Z");
    assert_eq!(plan["stalled_check_earliest_at"], "2026-10-07T00:52:38.000Z");
    assert_eq!(plan["stalled_check_latest_at"], "2026-10-07T00:53:38.000Z");
    let rows = plan["what_if"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    // A 300 s lock renewed every 75 s: a crash is recovered 225–360 s later, but the 09:12 round
    // (757 s) would outlive it if it blocked the event loop.
    assert_eq!(rows[0]["lock_duration_ms"], 300_000);
    assert_eq!(rows[0]["recovery_min_s"], 225.0);
    assert_eq!(rows[0]["recovery_max_s"], 360.0);
    assert!(rows[0]["runs_over_limit"].as_f64().unwrap() > 0.0);
    assert_eq!(rows[1]["blocking_limit_s"], 883.5);
    assert_eq!(rows[1]["runs_over_limit"], 0.0);

    let table =
        leasetrace(&["lock", INCIDENT, "--activated-at", "2026-10-07 09:33:00", "--died-at", "2026-10-07 09:37:26"])
            .run();
    assert!(table.stdout.contains("lock_expired_at             2026-10-07 09:52:38"), "{}", table.stdout);
    assert!(table.stdout.contains("1178000 ms (now)"), "{}", table.stdout);
}

/// Each lock parameter at its ceiling (10^12 ms), alone and all together: the report still
/// comes out (exit 0 or 2, never a panic) and every lock time is in order: no overflow, no wrap.
#[test]
fn lock_parameters_at_the_ceiling_give_ordered_bounds() {
    const CEILING: &str = "1000000000000";
    let cases: [&[&str]; 4] = [
        &["--lock-duration", CEILING],
        &["--lock-renew-time", CEILING],
        &["--stalled-interval", CEILING],
        &["--lock-duration", CEILING, "--lock-renew-time", CEILING, "--stalled-interval", CEILING],
    ];
    let time = |m: &Value, key: &str| {
        chrono::DateTime::parse_from_rfc3339(m[key].as_str().unwrap_or_else(|| panic!("{key}: {m}"))).unwrap()
    };
    for flags in cases {
        let mut args = vec!["analyze", INCIDENT, "--format", "json"];
        args.extend_from_slice(flags);
        let run = leasetrace(&args).run();
        assert!(run.code == 0 || run.code == 2, "{flags:?}: exit {} {}", run.code, run.stderr);
        let report = run.json();
        let m = &finding(&report, "stalled-rerun")["metrics"];
        let activated = time(m, "activated_at");
        assert!(activated <= time(m, "first_renewal_earliest_at"), "{flags:?}: {m}");
        assert!(time(m, "first_renewal_earliest_at") <= time(m, "first_renewal_due_at"), "{flags:?}: {m}");
        assert!(activated < time(m, "lock_expired_at"), "{flags:?}: {m}");
        assert!(time(m, "lock_expired_at") <= time(m, "stalled_check_window_start_at"), "{flags:?}: {m}");
        assert!(time(m, "stalled_check_window_start_at") < time(m, "stalled_check_window_end_at"), "{flags:?}: {m}");

        let mut args = vec![
            "lock",
            INCIDENT,
            "--activated-at",
            "2026-10-07 09:33:00",
            "--died-at",
            "2026-10-07 09:37:26",
            "--what-if",
            CEILING,
            "--format",
            "json",
        ];
        args.extend_from_slice(flags);
        let run = leasetrace(&args).run();
        assert_eq!(run.code, 0, "{flags:?}: {}", run.stderr);
        let plan = run.json();
        assert!(time(&plan, "stalled_check_earliest_at") < time(&plan, "stalled_check_latest_at"), "{plan}");
        assert!(time(&plan, "activated_at") < time(&plan, "stalled_check_earliest_at"), "{plan}");
        let row = &plan["what_if"][0];
        assert_eq!(row["lock_duration_ms"], 1_000_000_000_000u64, "{row}");
        let (min, max) = (row["recovery_min_s"].as_f64().unwrap(), row["recovery_max_s"].as_f64().unwrap());
        assert!(0.0 <= min && min <= max, "{flags:?}: {row}");
        assert!(row["blocking_limit_s"].as_f64().unwrap() >= 0.0, "{row}");
    }
}

/// Every detector's lock arithmetic (stalls, stuck runs, orphaned rounds, ...) on every fixture
/// case, with all three durations at the ceiling: a report or a clear error, never a panic.
#[test]
fn lock_parameters_at_the_ceiling_never_panic_on_any_fixture() {
    const CEILING: &str = "1000000000000";
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut cases = 0;
    for entry in std::fs::read_dir(&fixtures).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.join("leasetrace.toml").is_file() {
            continue;
        }
        cases += 1;
        let path = dir.to_str().unwrap();
        let run = leasetrace(&[
            "analyze",
            path,
            "--format",
            "json",
            "--lock-duration",
            CEILING,
            "--lock-renew-time",
            CEILING,
            "--stalled-interval",
            CEILING,
        ])
        .run();
        assert!(run.code == 0 || run.code == 2, "{path}: exit {} {}", run.code, run.stderr);
        assert!(!run.stderr.contains("panicked"), "{path}: {}", run.stderr);
    }
    assert!(cases > 5, "only {cases} fixture cases found");
}

/// `lock --what-if` at the ceiling with a renew time far past the lock: the recovery bound is
/// never negative (it was about -4.6e15 s) and the candidate renew time stays a parameter value.
#[test]
fn lock_what_if_with_a_huge_value_prints_no_negative_recovery_bound() {
    let args = [
        "lock",
        INCIDENT,
        "--activated-at",
        "2026-10-07 09:33:00",
        "--lock-duration",
        "1",
        "--lock-renew-time",
        "1000000000000",
        "--what-if",
        "1000,1000000000000",
    ];
    let mut json = args.to_vec();
    json.extend(["--format", "json"]);
    let run = leasetrace(&json).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    for row in run.json()["what_if"].as_array().unwrap() {
        assert!(row["recovery_min_s"].as_f64().unwrap() >= 0.0, "{row}");
        assert!(row["blocking_limit_s"].as_f64().unwrap() >= 0.0, "{row}");
        assert!(row["lock_renew_time_ms"].as_u64().unwrap() <= 1_000_000_000_000, "{row}");
    }
    let table = leasetrace(&args).run();
    assert_eq!(table.code, 0, "{}", table.stderr);
    assert!(!table.stdout.contains("│ -") && !table.stdout.contains("– -"), "{}", table.stdout);
}

/// `lockRenewTime` ≥ `lockDuration` is legal but the lock expires before its first renewal: a
/// header warning in the report and in `lock`, with its kind in JSON.
#[test]
fn lock_renew_time_at_or_after_lock_duration_is_warned() {
    let run = leasetrace(&["analyze", INCIDENT, "--lock-renew-time", "1178000", "--format", "json"]).run();
    let report = run.json();
    let warnings = report["warnings"].as_array().unwrap();
    let warning =
        warnings.iter().find(|w| w["kind"] == "lock-renew-after-expiry").unwrap_or_else(|| panic!("{warnings:?}"));
    assert!(warning["message"].as_str().unwrap().contains("expires before its first renewal"), "{warning}");
    let table = leasetrace(&["analyze", INCIDENT, "--lock-renew-time", "1178000"]).run();
    assert!(table.stdout.contains("expires before its first renewal"), "{}", table.stdout);
    let lock =
        leasetrace(&["lock", INCIDENT, "--activated-at", "2026-10-07 09:33:00", "--lock-renew-time", "2000000"]).run();
    assert_eq!(lock.code, 0, "{}", lock.stderr);
    assert!(lock.stdout.contains("WARNING: lockRenewTime 2000000 ms"), "{}", lock.stdout);
    // Half the lock, as BullMQ's default: no such warning.
    let plain = leasetrace(&["analyze", INCIDENT, "--format", "json"]).run().json();
    assert!(plain["warnings"].as_array().unwrap().iter().all(|w| w["kind"] != "lock-renew-after-expiry"));
}

/// Found by fuzzing the parameters file: lockDuration 1 gave the default lockRenewTime
/// `1 / 2 = 0` ms, a value no flag or file may give. It is at least 1 ms.
#[test]
fn lock_duration_of_1_ms_gives_a_renew_time_of_1_ms_not_0() {
    let run =
        leasetrace(&["lock", "--activated-at", "2026-10-07T00:33:00Z", "--lock-duration", "1", "--format", "json"])
            .run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let plan = run.json();
    assert_eq!(plan["first_renewal_due_at"], "2026-10-07T00:33:00.001Z", "renewed after 1 ms");
    assert!(plan["warnings"].to_string().contains("lockRenewTime 1 ms"), "{}", plan["warnings"]);
}

/// Found by fuzzing the lock plan: a time near year 9999 plus a lock at the ceiling printed
/// `+10031-…` in the JSON plan, which is not RFC 3339. `lock` now takes the times a timeline
/// holds, as every source's times are.
#[test]
fn lock_activated_outside_the_years_a_timeline_holds_is_refused() {
    let run = leasetrace(&[
        "lock",
        "--activated-at",
        "9999-12-31T00:00:00Z",
        "--lock-duration",
        "1000000000000",
        "--format",
        "json",
    ])
    .run();
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        run.stderr.contains("--activated-at '9999-12-31T00:00:00Z'") && run.stderr.contains("1677-2262"),
        "{}",
        run.stderr
    );
    let died =
        leasetrace(&["lock", "--activated-at", "2026-10-07T00:33:00Z", "--died-at", "1600-01-01T00:00:00Z"]).run();
    assert_eq!(died.code, 2, "{}", died.stdout);
    assert!(died.stderr.contains("--died-at"), "{}", died.stderr);
}

#[test]
fn lock_without_a_zone_for_a_local_time_says_which_flag_to_pass() {
    let run = leasetrace(&["lock", "--activated-at", "2026-10-07 09:33:00"]).run();
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("--tz"), "{}", run.stderr);
    let run =
        leasetrace(&["lock", "--activated-at", "2026-10-07 09:33:00", "--tz", "Asia/Seoul", "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.json()["first_renewal_due_at"],
        "2026-10-07T00:33:15.000Z",
        "BullMQ v5 defaults: 30 s lock, renewal due at +15 s"
    );
}

#[test]
fn default_origin_label_names_the_bullmq_version_in_force_not_v5() {
    let args = |version: &'static str| {
        [
            "lock",
            "--activated-at",
            "2026-10-07 09:33:00",
            "--tz",
            "UTC",
            "--lock-duration",
            "12000",
            "--bullmq-version",
            version,
        ]
    };
    let six = leasetrace(&args("6.7.0")).run();
    assert_eq!(six.code, 0, "{}", six.stderr);
    assert!(!six.stdout.contains("v5"), "{}", six.stdout);
    let first = six.stdout.lines().nth(1).unwrap();
    assert!(first.starts_with("WARNING: ") && first.contains("are BullMQ 6.7.0 defaults"), "{}", six.stdout);
    assert!(six.stdout.contains("stalledInterval 30000 ms (BullMQ 6.7.0 default)"), "{}", six.stdout);
    // A version whose defaults were not checked is not vouched for.
    let seven = leasetrace(&args("7.1.0")).run();
    assert!(seven.stdout.contains("are BullMQ v2–v6 defaults (7.1.0 not checked)"), "{}", seven.stdout);
    // No version: the range the defaults were checked over.
    let none = leasetrace(&["lock", "--activated-at", "2026-10-07 09:33:00", "--tz", "UTC"]).run();
    assert!(none.stdout.contains("lock parameters are BullMQ v2–v6 defaults ("), "{}", none.stdout);
}

// ---------------------------------------------------------------- near misses of the BullMQ findings

#[test]
fn a_logged_stall_is_not_an_unlogged_stall() {
    let report = leasetrace(&["analyze", "fixtures/near-miss/unlogged-stall", "--format", "json"]).run().json();
    let mut found = kinds(&report);
    found.sort();
    assert_eq!(found, ["duplicate-selection", "lock-headroom", "stalled-rerun", "sweep-overlap"]);
    assert_eq!(finding(&report, "stalled-rerun")["metrics"]["stalled_logged"], true);
}

#[test]
fn one_stall_within_the_limit_and_an_ordinary_failure_are_not_stalled_limit_exceeded() {
    let report = leasetrace(&["analyze", "fixtures/near-miss/stalled-limit-exceeded", "--format", "json"]).run().json();
    assert!(!kinds(&report).contains(&"stalled-limit-exceeded".to_string()), "{:?}", kinds(&report));
    let rerun = &finding(&report, "stalled-rerun")["metrics"];
    assert_eq!(rerun["job_id"], "7");
    assert_eq!(rerun["stalled_in_stream"], true);
    assert_eq!(rerun["processor_reran"], true);
}

#[test]
fn the_clock_offset_fixture_names_the_zone_that_fixes_it() {
    let report = leasetrace(&["analyze", "fixtures/clock-offset-suspected", "--format", "json"]).run().json();
    let metrics = &finding(&report, "clock-offset-suspected")["metrics"];
    assert_eq!(metrics["offset_hours"], "+9:00");
    assert_eq!(metrics["zone_for_b"], "Asia/Seoul");
    assert_eq!(metrics["matched_pairs"], 6);
}

#[test]
fn an_early_takeover_is_an_error_with_how_early() {
    let run = leasetrace(&["check", "fixtures/early-takeover", "--fail-on", "error", "--format", "json"]).run();
    assert_eq!(run.code, 1);
    let report = run.json();
    let metrics = &finding(&report, "early-takeover")["metrics"];
    assert_eq!(metrics["previous_owner"], "worker-a");
    assert_eq!(metrics["new_owner"], "worker-b");
    assert_eq!(metrics["previous_lease_until"], "2026-10-01T00:00:17.000Z");
    assert_eq!(metrics["claimed_at"], "2026-10-01T00:00:12.000Z");
    assert_eq!(metrics["early_by_s"], 5.0);
    assert_eq!(finding(&report, "early-takeover")["severity"], "error");
    assert_eq!(finding(&report, "stale-completion")["metrics"]["accepted"], false);
}

// ---------------------------------------------------------------- job-hash exports, every shape

/// One real BullMQ run's job hashes, exported in every shape `bullmq-jobs` reads
/// (fixtures/formats/README.md says how each file was written).
const JOB_SHAPES: &str = "fixtures/formats";

/// The events `timeline` reads from one export, after checking its account: the format chosen,
/// every line counted once, nothing rejected.
fn job_hash_events(file: &str, format: &str) -> Vec<Value> {
    let path = format!("{JOB_SHAPES}/{file}");
    let run = leasetrace(&["timeline", "--jobs", &path, "--format", "json"]).run();
    assert_eq!(run.code, 0, "{path}: {}", run.stderr);
    let report = run.json();
    let input = &report["inputs"][0];
    assert_eq!(input["format"], format, "{path}");
    assert_eq!(input["rejected"], 0, "{path}: {input}");
    let n = |k: &str| input[k].as_u64().unwrap();
    assert_eq!(n("lines"), n("used") + n("ignored") + n("rejected"), "{path}: {input}");
    let lines = std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap().lines().count();
    assert_eq!(n("lines"), lines as u64, "{path}: every line of the file is counted");
    report["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let keep = ["at", "kind", "job_id", "job_name", "queue", "slot", "worker", "detail"];
            Value::Object(keep.iter().map(|k| (k.to_string(), e[*k].clone())).collect())
        })
        .collect()
}

/// `file` read as `format` gives the events of the `{key, fields}` JSON Lines export of the same jobs.
fn reads_like_the_json_lines_export(file: &str, format: &str) {
    let expected = job_hash_events("jobs.jsonl", "hgetall-json");
    let kinds: Vec<&str> = expected.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    for kind in ["job-added", "job-active", "job-completed", "job-failed"] {
        assert!(kinds.contains(&kind), "the export has a {kind} event: {kinds:?}");
    }
    assert_eq!(job_hash_events(file, format), expected, "{file}");
}

#[test]
fn job_hashes_as_a_json_array_of_key_and_fields_records() {
    reads_like_the_json_lines_export("jobs-fields.json", "hgetall-json");
}

#[test]
fn job_hashes_as_key_id_state_hash_records() {
    reads_like_the_json_lines_export("jobs-state.jsonl", "hgetall-json");
}

#[test]
fn job_hashes_as_one_object_keyed_by_redis_key() {
    reads_like_the_json_lines_export("jobs-keyed.json", "hgetall-json");
}

#[test]
fn job_hashes_as_bullmqs_own_job_json() {
    reads_like_the_json_lines_export("jobs-getjobs.json", "hgetall-json");
}

#[test]
fn job_hashes_as_redis_cli_raw_output() {
    reads_like_the_json_lines_export("jobs-redis-cli.txt", "hgetall-text");
}

#[test]
fn job_hashes_as_redis_cli_numbered_output() {
    reads_like_the_json_lines_export("jobs-redis-cli-no-raw.txt", "hgetall-text");
}

#[test]
fn job_hashes_as_redis_cli_resp3_output() {
    reads_like_the_json_lines_export("jobs-redis-cli-resp3.txt", "hgetall-text");
}

#[test]
fn job_hashes_as_redis_cli_json_output() {
    reads_like_the_json_lines_export("jobs-redis-cli-json.txt", "hgetall-text");
}

#[test]
fn job_hashes_as_redis_cli_csv_output() {
    reads_like_the_json_lines_export("jobs-redis-cli-csv.txt", "hgetall-text");
}

#[test]
fn job_hashes_copied_from_an_interactive_redis_cli_session() {
    // The session asked for three of the jobs (and a lock, and a key that does not exist).
    let expected: Vec<Value> = job_hash_events("jobs.jsonl", "hgetall-json")
        .into_iter()
        .filter(|e| !e["job_id"].as_str().unwrap().starts_with("repeat:"))
        .collect();
    assert_eq!(job_hash_events("jobs-redis-cli-session.txt", "hgetall-text"), expected);
}

#[test]
fn job_keys_with_other_prefixes_name_their_queue_and_shared_ids_are_said() {
    let run = leasetrace(&["timeline", "--jobs", &format!("{JOB_SHAPES}/jobs-prefixes.txt"), "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    let jobs: Vec<(&str, &str)> = report["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "job-added")
        .map(|e| (e["queue"].as_str().unwrap(), e["job_id"].as_str().unwrap()))
        .collect();
    // `{bull}:notify:1` and `myapp:bull:mail:1`.
    assert_eq!(jobs, [("notify", "1"), ("mail", "1")]);
    let assumptions = report["assumptions"].to_string();
    assert!(assumptions.contains("jobs-prefixes.txt: 1 job id(s) appear in more than one queue"), "{assumptions}");
}

#[test]
fn a_declared_format_reads_job_hashes_whatever_the_file_is_called() {
    let text = std::fs::read(format!("{}/{JOB_SHAPES}/jobs-redis-cli-no-raw.txt", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let manifest = "[[sources]]\nkind = \"bullmq-jobs\"\npath = \"dump.json\"\nformat = \"hgetall-text\"\n";
    let dir = case_with(&[("dump.json", &text)], manifest);
    let run = leasetrace(&["timeline", dir.path().to_str().unwrap(), "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json()["inputs"][0]["format"], "hgetall-text");
    // Without the declaration, the name says JSON, and the error says what to declare.
    let dir = case_with(&[("dump.json", &text)], "[[sources]]\nkind = \"bullmq-jobs\"\npath = \"dump.json\"\n");
    expect_input_error(&dir, "dump.json", Some(1), "format = \"hgetall-text\"");
}

#[test]
fn malformed_redis_cli_job_hashes_name_file_and_line() {
    let manifest = "[[sources]]\nkind = \"bullmq-jobs\"\npath = \"jobs.txt\"\n";
    let cut_off = b"bull:q:1\n1) \"name\"\n2) \"review\"\n3) \"timestamp\"\n";
    expect_input_error(&case_with(&[("jobs.txt", cut_off)], manifest), "jobs.txt", Some(1), "odd number");
    let skipped = b"bull:q:1\n1) \"name\"\n2) \"review\"\n5) \"timestamp\"\n";
    expect_input_error(&case_with(&[("jobs.txt", skipped)], manifest), "jobs.txt", Some(4), "out of sequence");
    let keyless = b"1) \"name\"\n2) \"review\"\n3) \"timestamp\"\n4) \"1791333180000\"\n";
    let run = leasetrace(&[
        "timeline",
        case_with(&[("jobs.txt", keyless)], manifest).path().to_str().unwrap(),
        "--format",
        "json",
    ])
    .run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let input = &run.json()["inputs"][0];
    assert_eq!((input["rejected"].as_u64(), input["events"].as_u64()), (Some(4), Some(0)));
    assert!(input["rejections"][0]["reason"].as_str().unwrap().contains("without its key or id"), "{input}");
}

#[test]
fn every_input_format_is_documented() {
    // The binary names the formats of each kind when asked for one it does not know.
    // docs/inputs.md is the index; each source family has its page in docs/inputs/.
    let docs = format!("{}/docs", env!("CARGO_MANIFEST_DIR"));
    let mut inputs = std::fs::read_to_string(format!("{docs}/inputs.md")).unwrap();
    let mut pages: Vec<_> = std::fs::read_dir(format!("{docs}/inputs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    pages.sort();
    assert!(!pages.is_empty(), "no page in docs/inputs/");
    for page in pages {
        inputs.push_str(&std::fs::read_to_string(page).unwrap());
    }
    let json = std::fs::read_to_string(format!("{}/docs/json.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
    for (kind, file) in [
        ("ledger", "x.csv"),
        ("log", "x.log"),
        ("bullmq-events", "x.json"),
        ("bullmq-jobs", "x.json"),
        ("trace", "x.jsonl"),
        ("redis-monitor", "x.txt"),
    ] {
        let manifest = format!("[[sources]]\nkind = \"{kind}\"\npath = \"{file}\"\nformat = \"nope\"\n");
        let dir = case_with(&[(file, b"{}\n")], &manifest);
        let run = leasetrace(&["timeline", dir.path().to_str().unwrap()]).run();
        let (_, names) = run.stderr.split_once("expected one of ").unwrap_or_else(|| panic!("{kind}: {}", run.stderr));
        let names: Vec<&str> = names.trim().split(", ").collect();
        assert!(!names.is_empty(), "{kind}");
        for name in names {
            assert!(
                inputs.contains(&format!("`{name}`")),
                "docs/inputs.md and docs/inputs/*.md do not name the {kind} format `{name}`"
            );
            assert!(json.contains(&format!("`{name}`")), "docs/json.md does not list the {kind} format `{name}`");
        }
    }
}

// ---------------------------------------------------------------- huge rule patterns

fn case_with_rule(pattern: &str) -> tempfile::TempDir {
    let manifest = format!(
        "[[sources]]\nkind = \"log\"\npath = \"server.log\"\ntz = \"Asia/Seoul\"\n\n[[sources.rules]]\nevent = \"job-stalled\"\npattern = '''{pattern}'''\n"
    );
    case_with(&[("server.log", GOOD_LOG)], &manifest)
}

/// A 20 MB rule pattern is refused before it is compiled (it took 2 GB and 7 s), in a short message
/// that names the manifest and the rule and quotes only the pattern's start. Since a manifest is
/// read at most 1 MiB, the pattern here is 900 KiB: past the 64 KiB a pattern may have, within
/// what a manifest may hold.
#[test]
fn a_huge_regex_in_a_manifest_rule_is_refused_with_a_short_message() {
    let pattern = "a".repeat(900 << 10);
    let dir = case_with_rule(&pattern);
    let run = leasetrace(&["analyze", dir.path().to_str().unwrap()]).run();
    assert_eq!(run.code, 2, "{}", &run.stderr[..run.stderr.len().min(500)]);
    assert!(run.stderr.len() < 1_000, "stderr is {} bytes", run.stderr.len());
    assert!(run.stderr.contains("leasetrace.toml: source 1"), "{}", run.stderr);
    assert!(run.stderr.contains("log rule 1"), "{}", run.stderr);
    assert!(run.stderr.contains(&format!("{}… ({} bytes)", "a".repeat(80), 900 << 10)), "{}", run.stderr);
    assert!(run.stderr.contains("65536 bytes"), "{}", run.stderr);
    assert!(run.stdout.is_empty());
}

/// A short pattern that compiles to gigabytes is refused by the compiled-size limit, with that
/// reason, not after taking the memory.
#[test]
fn a_regex_that_compiles_too_big_is_refused_with_the_size_limit_reason() {
    let dir = case_with_rule(r"job (?<job_id>\w{1000}{1000}) stalled");
    let run = leasetrace(&["analyze", dir.path().to_str().unwrap()]).run();
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("log rule 1"), "{}", run.stderr);
    assert!(run.stderr.contains("compiles to more than 16777216 bytes"), "{}", run.stderr);
    assert!(run.stdout.is_empty());
}

/// The findings of a case, as (kind, severity, time): what a log's envelope must not change.
fn findings_of(dir: &std::path::Path) -> Vec<(String, String, String)> {
    let run = leasetrace(&["analyze", dir.to_str().unwrap(), "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut findings: Vec<_> = run.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["kind"].to_string(), f["severity"].to_string(), f["at"].to_string()))
        .collect();
    findings.sort();
    findings
}

#[test]
fn the_reference_log_from_cloudwatch_and_kibana_exports_gives_the_same_findings() {
    let reference = format!("{}/fixtures/incident-2026-10-07", env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(format!("{reference}/leasetrace.toml")).unwrap();
    let ledger = std::fs::read(format!("{reference}/ledger.csv")).unwrap();
    let params = std::fs::read(format!("{reference}/bullmq.json")).unwrap();
    let log = std::fs::read(format!("{reference}/server.log")).unwrap();
    let plain = case_with(&[("ledger.csv", &ledger), ("bullmq.json", &params), ("server.log", &log)], &manifest);
    let expected = findings_of(plain.path());
    assert!(expected.iter().any(|(kind, ..)| kind == "\"stalled-rerun\""), "{expected:?}");
    // (fixture, format named in the manifest: `None` when sniffing must find it)
    for (fixture, format) in [
        ("aws-logs-tail.txt", None),
        ("aws-logs-tail-short.txt", Some("aws-logs-tail-short")),
        ("cloudwatch-insights.csv", None),
        ("cloudwatch-insights.csv", Some("cloudwatch-insights-csv-utc")),
        ("kibana.csv", None),
    ] {
        let export = std::fs::read(format!("{}/fixtures/envelopes/{fixture}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let manifest = match format {
            Some(format) => {
                manifest.replace("path = \"server.log\"", &format!("path = \"server.log\"\nformat = \"{format}\""))
            }
            None => manifest.clone(),
        };
        let dir = case_with(&[("ledger.csv", &ledger), ("bullmq.json", &params), ("server.log", &export)], &manifest);
        assert_eq!(findings_of(dir.path()), expected, "{fixture} as {format:?}");
        let run = leasetrace(&["analyze", dir.path().to_str().unwrap(), "--format", "json"]).run();
        let report = run.json();
        let input = report["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["path"].as_str().unwrap().ends_with("server.log"))
            .unwrap()
            .clone();
        let name = format.unwrap_or(match fixture {
            "aws-logs-tail.txt" => "aws-logs-tail",
            "cloudwatch-insights.csv" => "cloudwatch-insights-csv",
            _ => "kibana-csv",
        });
        assert_eq!(input["format"], name, "{fixture}");
        let lines = String::from_utf8_lossy(&export).lines().count() as u64;
        assert_eq!(input["lines"].as_u64(), Some(lines), "{fixture}: every line counted");
        assert_eq!(input["rejected"].as_u64(), Some(0), "{fixture}");
        // Only a time that says its zone is the envelope's evidence: Kibana's and (unless named
        // -utc) Logs Insights' wall-clock times give no lag.
        let assumptions = report["assumptions"].to_string();
        let measured = assumptions.contains("the envelope's times are");
        assert_eq!(
            measured,
            !matches!((fixture, format), ("kibana.csv" | "cloudwatch-insights.csv", None)),
            "{fixture}: {assumptions}"
        );
    }
}

#[test]
fn a_kst_log_in_kubectls_envelope_declared_utc_is_caught_by_its_own_envelope() {
    let run = leasetrace(&[
        "analyze",
        "--log",
        "fixtures/envelopes/kubectl.log",
        "--log-tz",
        "UTC",
        "--params",
        "fixtures/incident-2026-10-07/bullmq.json",
        "--format",
        "json",
    ])
    .run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    let offsets: Vec<&Value> =
        report["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == "clock-offset-suspected").collect();
    assert_eq!(offsets.len(), 1, "{:#}", report["findings"]);
    let metrics = &offsets[0]["metrics"];
    assert_eq!(metrics["source_b"], "fixtures/envelopes/kubectl.log (envelope, UTC)");
    assert_eq!(metrics["offset_hours"], "-9:00");
    assert_eq!(metrics["zone_for_a"], "Asia/Seoul");
    let warnings: Vec<&str> =
        report["warnings"].as_array().unwrap().iter().filter_map(|w| w["kind"].as_str()).collect();
    assert!(warnings.contains(&"zone-mixup-suspected"), "{warnings:?}");
}

#[test]
fn an_envelope_names_the_log_format_inside_it_after_a_plus() {
    let dir = tempfile::tempdir().unwrap();
    // pino inside kubectl's envelope: recognised, or named.
    let line = r#"2026-10-07T00:33:00.009000000Z {"level":30,"time":1791333180004,"pid":41877,"hostname":"api-1","jobId":"7","msg":"job active"}"#;
    std::fs::write(dir.path().join("p.log"), format!("{line}\n")).unwrap();
    for (format, expected) in
        [(None, 0), (Some("kubectl+pino"), 0), (Some("kubectl+nosuch"), 2), (Some("text+pino"), 2)]
    {
        let declared = format.map_or(String::new(), |f| format!("format = \"{f}\"\n"));
        std::fs::write(
            dir.path().join("leasetrace.toml"),
            format!("[[sources]]\nkind = \"log\"\npath = \"p.log\"\n{declared}"),
        )
        .unwrap();
        let run = leasetrace(&["timeline", dir.path().to_str().unwrap(), "--format", "json"]).run();
        assert_eq!(run.code, expected, "{format:?}: {}", run.stderr);
        if expected == 0 {
            let report = run.json();
            assert_eq!(report["inputs"][0]["format"], "kubectl");
            let event = &report["timeline"][0];
            assert_eq!(
                (event["kind"].as_str(), event["at"].as_str()),
                (Some("job-active"), Some("2026-10-07T00:33:00.004Z"))
            );
        } else if format == Some("kubectl+nosuch") {
            assert!(
                run.stderr.contains("unknown log format 'nosuch' inside kubectl: expected one of text, pino"),
                "{}",
                run.stderr
            );
        } else {
            assert!(run.stderr.contains("only a log envelope"), "{}", run.stderr);
        }
    }
}
