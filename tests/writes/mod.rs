//! Output that cannot be written: every command's stdout set to /dev/full (a write fails with
//! "No space left on device") must exit 2 and say so, never exit 0 with nothing written; a pipe
//! the reader closed early stays exit 0.

use std::io::Read;

#[allow(unused_imports)]
use super::*;

/// The binary with `args`, its stdout the device that refuses every write.
fn to_dev_full(args: &[&str]) -> Output {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full opens");
    Command::new(env!("CARGO_BIN_EXE_leasetrace"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .expect("the binary runs")
}

fn assert_write_error(args: &[&str]) {
    let output = to_dev_full(args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{args:?} to /dev/full: {stderr}");
    assert!(stderr.contains("cannot write the output: No space left on device"), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
}

#[test]
fn a_write_error_in_lock_is_exit_2() {
    assert_write_error(&[
        "lock",
        INCIDENT,
        "--activated-at",
        "2026-10-07 09:33:00",
        "--died-at",
        "2026-10-07 09:37:26",
    ]);
}

#[test]
fn a_write_error_in_explain_is_exit_2() {
    assert_write_error(&["explain"]);
    assert_write_error(&["explain", "stalled-rerun"]);
}

#[test]
fn a_write_error_in_init_is_exit_2() {
    let case = tempfile::tempdir().unwrap();
    for file in ["ledger.csv", "server.log", "bullmq.json"] {
        std::fs::copy(Path::new(INCIDENT).join(file), case.path().join(file)).unwrap();
    }
    assert_write_error(&["init", case.path().to_str().unwrap()]);
}

#[test]
fn a_write_error_in_completions_is_exit_2() {
    // clap_complete panics on a failed write: the script must be written by leasetrace itself.
    assert_write_error(&["completions", "bash"]);
}

#[test]
fn a_write_error_in_man_is_exit_2() {
    assert_write_error(&["man"]);
    let dir = tempfile::tempdir().unwrap();
    assert_write_error(&["man", "--dir", dir.path().to_str().unwrap()]);
}

#[test]
fn a_write_error_in_help_and_version_is_exit_2() {
    assert_write_error(&["--help"]);
    assert_write_error(&["--version"]);
}

#[test]
fn a_write_error_in_a_report_is_exit_2() {
    assert_write_error(&["timeline", INCIDENT]);
    assert_write_error(&["analyze", INCIDENT, "--format", "json"]);
    assert_write_error(&["check", INCIDENT]);
}

/// The reader takes the first bytes and closes the pipe, as `| head -c 16` does.
fn read_a_little_then_close(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_leasetrace"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    stdout.read_exact(&mut first).expect("the command writes at least 16 bytes");
    drop(stdout);
    child.wait_with_output().unwrap()
}

#[test]
fn a_pipe_closed_after_a_few_bytes_is_not_an_error_in_any_command() {
    let dir = tempfile::tempdir().unwrap();
    let man_dir = dir.path().to_str().unwrap();
    let commands: &[&[&str]] = &[
        &["explain"],
        &["completions", "bash"],
        &["man"],
        &["man", "--dir", man_dir],
        &["--help"],
        &["lock", INCIDENT, "--activated-at", "2026-10-07 09:33:00", "--died-at", "2026-10-07 09:37:26"],
        &["timeline", INCIDENT],
    ];
    for args in commands {
        let output = read_a_little_then_close(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?} said something on a closed pipe: {stderr}");
    }
}

#[test]
fn a_manifest_init_cannot_write_says_cannot_write_not_cannot_read() {
    let case = tempfile::tempdir().unwrap();
    for file in ["ledger.csv", "server.log", "bullmq.json"] {
        std::fs::copy(Path::new(INCIDENT).join(file), case.path().join(file)).unwrap();
    }
    // A folder where the manifest goes: the write fails whoever runs the test (root included).
    std::fs::create_dir(case.path().join("leasetrace.toml")).unwrap();
    let run = leasetrace(&["init", case.path().to_str().unwrap(), "--force"]).run();
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("leasetrace.toml: cannot write:"), "{}", run.stderr);
    assert!(!run.stderr.contains("cannot read"), "{}", run.stderr);
}

#[test]
fn an_empty_stdin_says_standard_input_is_empty_not_cannot_tell_the_format() {
    let ledger = format!("{INCIDENT}/ledger.csv");
    for args in
        [vec!["timeline", "--ledger", "-"], vec!["timeline", "--ledger", &ledger, "--log", "-", "--log-tz", "UTC"]]
    {
        let run = leasetrace(&args).stdin(b"").run();
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains("standard input is empty: expected a"), "{args:?}: {}", run.stderr);
        assert!(!run.stderr.contains("cannot tell the format"), "{args:?}: {}", run.stderr);
    }
}

/// The incident's log gzipped, as bytes.
fn gzipped_log() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::read(gzipped_incident_log(dir.path())).unwrap()
}

fn timeline_of_log(dir: &Path, log: &[u8]) -> Run {
    let path = dir.join("server.log.gz");
    std::fs::write(&path, log).unwrap();
    let ledger = format!("{INCIDENT}/ledger.csv");
    leasetrace(&["timeline", "--ledger", &ledger, "--log", path.to_str().unwrap(), "--log-tz", "Asia/Seoul"]).run()
}

#[test]
fn a_truncated_gzip_log_says_truncated_and_after_which_line() {
    let whole = gzipped_log();
    let cut = &whole[..whole.len() / 2];
    // The whole lines a plain decoder gets out of the half before it fails.
    let mut inflated = Vec::new();
    let failed = flate2::read::GzDecoder::new(cut).read_to_end(&mut inflated);
    assert!(failed.is_err(), "half a gzip file is not a whole one");
    let whole_lines = inflated.split(|&b| b == b'\n').count() - 1;
    assert!(whole_lines > 0);
    let dir = tempfile::tempdir().unwrap();
    let run = timeline_of_log(dir.path(), cut);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let expected = format!("server.log.gz: truncated (unexpected end of the gzip stream) after line {whole_lines}");
    assert!(run.stderr.contains(&expected), "expected {expected:?} in {}", run.stderr);
}

#[test]
fn trailing_garbage_after_a_gzip_member_says_data_after_the_end_at_its_byte() {
    let mut bytes = gzipped_log();
    let end = bytes.len();
    bytes.extend_from_slice(b"not gzip at all\n");
    let dir = tempfile::tempdir().unwrap();
    let run = timeline_of_log(dir.path(), &bytes);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let expected = format!("data after the end of the gzip stream at byte {end}");
    assert!(run.stderr.contains(&expected), "expected {expected:?} in {}", run.stderr);
    assert!(!run.stderr.contains("unexpected end of file"), "{}", run.stderr);
    // Two whole members, one after the other, are one valid gzip file, not trailing data.
    let mut two = gzipped_log();
    two.extend(gzipped_log());
    assert_eq!(timeline_of_log(dir.path(), &two).code, 0);
}

/// docs/inputs/log.md: a log's timestamps are checked on its first stamped line and on the lines
/// the rules' search touches; any other line that starts like a date is counted as noise.
#[test]
fn a_malformed_timestamp_is_an_error_only_where_the_docs_say_it_is_checked() {
    let good = "2026-10-07 09:33:00.000 INFO job active id=7\n";
    let bad_first = "2026-10-07 9:33:00 INFO server up\n";
    let bad_rule_line = "2026-10-07 9:34:00 INFO job completed id=7\n";
    let bad_noise = "2026-10-07 9:35:00 DEBUG ping ok\n";
    let analyze = |log: String| {
        let dir = case_with(&[("ledger.csv", GOOD_LEDGER), ("server.log", log.as_bytes())], LEDGER_AND_LOG);
        let run = leasetrace(&["analyze", dir.path().to_str().unwrap(), "--format", "json"]).run();
        (run, dir)
    };
    for (log, line) in [(format!("{bad_first}{good}"), 1), (format!("{good}{bad_rule_line}"), 2)] {
        let (run, _dir) = analyze(log);
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert!(run.stderr.contains(&format!("server.log:{line}: malformed timestamp")), "{}", run.stderr);
    }
    let (run, _dir) = analyze(format!("{good}{bad_noise}"));
    assert_eq!(run.code, 0, "a line no rule can match is not parsed: {}", run.stderr);
    let log = &run.json()["inputs"].as_array().unwrap().iter().find(|i| i["kind"] == "log").unwrap().clone();
    assert_eq!(log["ignored_by_reason"]["noise"], 1, "{log}");
}

#[test]
fn an_error_with_stderr_refusing_writes_is_exit_2_not_a_panic() {
    // Both streams on the full device: the error cannot be printed, and the exit code is all that
    // tells the caller; it must be the input error's 2, not the 101 of a panic while printing.
    let full = || std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full opens");
    let status = Command::new(env!("CARGO_BIN_EXE_leasetrace"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["analyze", "no/such/case"])
        .stdin(Stdio::null())
        .stdout(full())
        .stderr(full())
        .status()
        .expect("the binary runs");
    assert_eq!(status.code(), Some(2));
}
