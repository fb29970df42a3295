//! A case folder from someone else: its manifest may name only regular files inside the folder.
//! A path out of it (`../`, absolute, a link) is refused unless `--allow-outside-case`, and then
//! said first in the report; a FIFO or a device named by a manifest is refused; one given by flag
//! is the user's choice, and is read once, like standard input.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::INCIDENT;

/// A line the incident's log could hold (a restart: an event, so `timeline` prints it), marked
/// so that any sight of it in an output shows the file outside the folder was read.
const SECRET: &str = "2026-10-07 09:40:00.000 INFO  [main] server starting SECRET-OUTSIDE-THE-CASE\n";
const MARK: &str = "SECRET-OUTSIDE-THE-CASE";

/// A folder holding `case/` (a copy of the incident, its manifest with `extra` appended) and,
/// beside it, outside the case, `secret.log`.
struct Setup {
    outer: tempfile::TempDir,
}

impl Setup {
    fn new(extra: &str) -> Setup {
        let outer = tempfile::tempdir().unwrap();
        let case = outer.path().join("case");
        std::fs::create_dir(&case).unwrap();
        let from = Path::new(env!("CARGO_MANIFEST_DIR")).join(INCIDENT);
        for name in ["ledger.csv", "server.log", "bullmq.json", "leasetrace.toml"] {
            std::fs::copy(from.join(name), case.join(name)).unwrap();
        }
        std::fs::write(outer.path().join("secret.log"), SECRET).unwrap();
        let setup = Setup { outer };
        setup.append(extra);
        setup
    }

    fn append(&self, extra: &str) {
        let manifest = self.case().join("leasetrace.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        std::fs::write(&manifest, format!("{text}\n{extra}")).unwrap();
    }

    fn case(&self) -> PathBuf {
        self.outer.path().join("case")
    }

    fn resolved(&self, path: &str) -> String {
        std::fs::canonicalize(self.outer.path().join(path)).unwrap().display().to_string()
    }
}

/// A log source for the manifest, at `path`.
fn log_source(path: &str) -> String {
    format!("[[sources]]\nkind = \"log\"\npath = \"{path}\"\ntz = \"Asia/Seoul\"\n")
}

struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
}

/// The binary run with `args`, killed and failed if it takes more than a minute: a FIFO nobody
/// writes to would otherwise hang the test rather than fail it.
fn run(args: &[&str]) -> Ran {
    let mut child = Command::new(env!("CARGO_BIN_EXE_leasetrace"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("CLICOLOR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let drain = |mut stream: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            stream.read_to_string(&mut text).unwrap();
            text
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("leasetrace {args:?} hung for a minute");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Ran { code: status.code().unwrap(), stdout: stdout.join().unwrap(), stderr: stderr.join().unwrap() }
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// Refused with exit 2 and a message that contains each of `says`; nothing of the file outside
/// printed.
fn assert_refused(ran: &Ran, says: &[&str]) {
    assert_eq!(ran.code, 2, "stdout: {}\nstderr: {}", ran.stdout, ran.stderr);
    for part in says {
        assert!(ran.stderr.contains(part), "the message says {part:?}: {}", ran.stderr);
    }
    assert!(!ran.stdout.contains(MARK) && !ran.stderr.contains(MARK), "nothing of the file is printed");
    assert!(ran.stdout.is_empty(), "no report: {}", ran.stdout);
}

#[test]
fn a_manifest_source_outside_the_case_folder_is_refused() {
    let setup = Setup::new(&log_source("../secret.log"));
    let case = setup.case();
    let root = std::fs::canonicalize(&case).unwrap().display().to_string();
    let outside = setup.resolved("secret.log");
    for command in ["timeline", "analyze"] {
        let ran = run(&[command, case.to_str().unwrap()]);
        let source =
            format!("leasetrace.toml: source 4 (../secret.log): resolves to {outside}, outside the case folder {root}");
        assert_refused(&ran, &[&source, "copy the file into the folder", "--allow-outside-case"]);
    }
}

#[test]
fn an_absolute_path_in_a_manifest_is_refused() {
    let setup = Setup::new("");
    let outside = setup.resolved("secret.log");
    setup.append(&log_source(&outside));
    let ran = run(&["timeline", setup.case().to_str().unwrap()]);
    assert_refused(&ran, &[&format!("source 4 ({outside}): resolves to {outside}, outside the case folder")]);
}

#[test]
fn a_symlink_out_of_the_case_folder_is_refused() {
    let setup = Setup::new(&log_source("notes.log"));
    std::os::unix::fs::symlink("../secret.log", setup.case().join("notes.log")).unwrap();
    let ran = run(&["timeline", setup.case().to_str().unwrap()]);
    let outside = setup.resolved("secret.log");
    assert_refused(&ran, &[&format!("source 4 (notes.log): resolves to {outside}, outside the case folder")]);
}

#[test]
fn a_symlink_inside_the_case_folder_is_read() {
    // A link that stays in the folder is a file of the case like any other.
    let setup = Setup::new("");
    let case = setup.case();
    std::fs::create_dir(case.join("logs")).unwrap();
    std::fs::rename(case.join("server.log"), case.join("logs/server.log")).unwrap();
    std::os::unix::fs::symlink("logs/server.log", case.join("server.log")).unwrap();
    let ran = run(&["analyze", case.to_str().unwrap(), "--format", "json"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let report: Value = serde_json::from_str(&ran.stdout).unwrap();
    assert!(report["warnings"].as_array().unwrap().iter().all(|w| w["kind"] != "source-outside-case"));
}

#[test]
fn a_parameters_file_outside_the_case_folder_is_refused() {
    let setup = Setup::new("");
    let case = setup.case();
    std::fs::rename(case.join("bullmq.json"), setup.outer.path().join("bullmq.json")).unwrap();
    let manifest = std::fs::read_to_string(case.join("leasetrace.toml")).unwrap();
    std::fs::write(case.join("leasetrace.toml"), manifest.replace("\"bullmq.json\"", "\"../bullmq.json\"")).unwrap();
    let ran = run(&["analyze", case.to_str().unwrap()]);
    let outside = setup.resolved("bullmq.json");
    assert_refused(&ran, &[&format!("source 3 (../bullmq.json): resolves to {outside}, outside the case folder")]);
    // The same file given by flag is the user's choice.
    let params = setup.outer.path().join("bullmq.json");
    let ran = run(&["analyze", case.to_str().unwrap(), "--params", params.to_str().unwrap()]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
}

#[test]
fn allow_outside_case_reads_it_and_the_report_says_so_first() {
    let setup = Setup::new(&log_source("../secret.log"));
    let case = setup.case();
    let outside = setup.resolved("secret.log");
    let ran = run(&["timeline", case.to_str().unwrap(), "--allow-outside-case", "--format", "json"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert!(ran.stdout.contains(MARK), "the file outside was read");
    let report: Value = serde_json::from_str(&ran.stdout).unwrap();
    let first = &report["warnings"][0];
    assert_eq!(first["kind"], "source-outside-case", "{first}");
    let message = first["message"].as_str().unwrap();
    assert!(message.contains(&format!("source 4 (../secret.log) was read from {outside}, outside the case folder")));
    // The table says it before anything else it says.
    let ran = run(&["analyze", case.to_str().unwrap(), "--allow-outside-case"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let first_warning = ran.stdout.lines().find(|line| line.starts_with("WARNING")).unwrap();
    assert!(first_warning.contains(&format!("was read from {outside}, outside the case folder")), "{first_warning}");
    // And a source inside the folder gives no such warning.
    let ran = run(&["analyze", INCIDENT, "--allow-outside-case", "--format", "json"]);
    assert!(!ran.stdout.contains("source-outside-case"));
}

#[test]
fn allow_outside_case_is_said_by_lock_too() {
    let setup = Setup::new(&log_source("../secret.log"));
    let case = setup.case();
    let args = ["lock", case.to_str().unwrap(), "--activated-at", "2026-10-07T00:33:00Z", "--format", "json"];
    assert_refused(&run(&args), &["outside the case folder"]);
    let ran = run(&[&args[..], &["--allow-outside-case"]].concat());
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let plan: Value = serde_json::from_str(&ran.stdout).unwrap();
    assert_eq!(plan["warnings"][0]["kind"], "source-outside-case", "{}", plan["warnings"]);
}

#[test]
fn a_fifo_named_by_a_manifest_is_refused() {
    // Nobody writes to the FIFO: opening it would wait for ever.
    let setup = Setup::new(&log_source("events.fifo"));
    mkfifo(&setup.case().join("events.fifo"));
    let ran = run(&["analyze", setup.case().to_str().unwrap()]);
    assert_refused(&ran, &["source 4 (events.fifo): a named pipe (FIFO), not a regular file", "--log "]);
}

#[test]
fn a_fifo_as_the_manifest_of_a_case_folder_is_refused() {
    let setup = Setup::new("");
    let manifest = setup.case().join("leasetrace.toml");
    std::fs::remove_file(&manifest).unwrap();
    mkfifo(&manifest);
    let ran = run(&["analyze", setup.case().to_str().unwrap()]);
    assert_refused(&ran, &["leasetrace.toml: a named pipe (FIFO), not a regular file"]);
}

#[test]
fn a_device_named_by_a_manifest_is_refused() {
    // /dev/zero would read without end; outside the folder, and a device even when that is allowed.
    let setup = Setup::new(&log_source("/dev/zero"));
    let case = setup.case();
    assert_refused(
        &run(&["analyze", case.to_str().unwrap()]),
        &["source 4 (/dev/zero): resolves to /dev/zero, outside"],
    );
    let ran = run(&["analyze", case.to_str().unwrap(), "--allow-outside-case"]);
    assert_refused(&ran, &["source 4 (/dev/zero): a character device, not a regular file"]);
}

#[test]
fn a_folder_named_by_a_manifest_is_refused() {
    let setup = Setup::new(&log_source("logs"));
    std::fs::create_dir(setup.case().join("logs")).unwrap();
    let ran = run(&["analyze", setup.case().to_str().unwrap()]);
    assert_refused(&ran, &["source 4 (logs): a folder, not a regular file: name a file in it"]);
}

/// Writes `bytes` into the FIFO at `path` on a thread of its own, and closes it: the writer is
/// gone by the time the reader is done, as with `cat server.log > fifo`.
fn feed(path: &Path, bytes: Vec<u8>) -> std::thread::JoinHandle<()> {
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        let mut fifo = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        fifo.write_all(&bytes).unwrap();
    })
}

#[test]
fn a_fifo_given_by_flag_is_read_like_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let incident = Path::new(env!("CARGO_MANIFEST_DIR")).join(INCIDENT);
    let log = std::fs::read(incident.join("server.log")).unwrap();
    let (log_fifo, params_fifo) = (dir.path().join("log.fifo"), dir.path().join("params.fifo"));
    mkfifo(&log_fifo);
    mkfifo(&params_fifo);
    let writers =
        [feed(&log_fifo, log.clone()), feed(&params_fifo, std::fs::read(incident.join("bullmq.json")).unwrap())];
    let ledger = incident.join("ledger.csv");
    let [ledger, log_path, params] = [&ledger, &log_fifo, &params_fifo].map(|p| p.to_str().unwrap().to_string());
    let args = ["analyze", "--ledger", &ledger, "--log-tz", "Asia/Seoul", "--format", "json"];
    let ran = run(&[&args[..], &["--log", &log_path, "--params", &params]].concat());
    for writer in writers {
        writer.join().unwrap();
    }
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let report: Value = serde_json::from_str(&ran.stdout).unwrap();
    // The same report as from standard input and the parameters file, but for the paths.
    let from_stdin =
        crate::leasetrace(&[&args[..], &["--log", "-", "--params", &format!("{INCIDENT}/bullmq.json")]].concat())
            .stdin(&log)
            .run();
    assert_eq!(from_stdin.code, 0, "{}", from_stdin.stderr);
    let from_stdin = from_stdin.json();
    let without_paths = |report: &Value, log_path: &str, params: &str| {
        let text = report["findings"].to_string();
        text.replace(&format!("\"{log_path}\""), "\"LOG\"").replace(&format!("\"{params}\""), "\"PARAMS\"")
    };
    assert!(!report["findings"].as_array().unwrap().is_empty(), "the incident has findings to compare");
    assert_eq!(
        without_paths(&report, &log_path, &params),
        without_paths(&from_stdin, "-", &format!("{INCIDENT}/bullmq.json")),
    );
    // The log's cited lines are quoted from what was read, not read back from the FIFO.
    let lines: Vec<&str> = std::str::from_utf8(&log).unwrap().lines().collect();
    let cited: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["evidence"].as_array().unwrap())
        .filter(|e| e["source"]["path"] == log_path.as_str())
        .collect();
    assert!(!cited.is_empty(), "the log is cited");
    for evidence in cited {
        let line = usize::try_from(evidence["source"]["line"].as_u64().unwrap()).unwrap();
        assert_eq!(evidence["raw"], lines[line - 1], "line {line}");
    }
    let input = report["inputs"].as_array().unwrap().iter().find(|i| i["path"] == log_path.as_str()).unwrap();
    assert_eq!(input["lines"], lines.len());
}

#[test]
fn a_fifo_whose_writer_has_finished_is_not_opened_again() {
    // A few lines are written and the FIFO closed at once: opened a second time (to see whether
    // its lines can be read back), it would wait for a writer that never comes.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("short.fifo");
    mkfifo(&fifo);
    let lines =
        "2026-10-07 09:37:26.000 INFO  [main] server starting\n2026-10-07 09:37:27.000 INFO  [main] listening\n";
    let writer = feed(&fifo, lines.as_bytes().to_vec());
    let ran = run(&["timeline", "--log", fifo.to_str().unwrap(), "--log-tz", "UTC", "--format", "json"]);
    writer.join().unwrap();
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let report: Value = serde_json::from_str(&ran.stdout).unwrap();
    assert_eq!(report["inputs"][0]["lines"], 2);
    let restart = &report["timeline"].as_array().unwrap()[0];
    assert_eq!(restart["raw"], "2026-10-07 09:37:26.000 INFO  [main] server starting", "{restart}");
}

#[test]
fn init_leaves_out_a_link_out_of_the_folder_and_a_fifo_and_its_manifest_passes_the_check() {
    let setup = Setup::new("");
    let case = setup.case();
    std::fs::remove_file(case.join("leasetrace.toml")).unwrap();
    std::os::unix::fs::symlink("../secret.log", case.join("notes.log")).unwrap();
    mkfifo(&case.join("events.fifo"));
    let ran = run(&["init", case.to_str().unwrap(), "-q"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let outside = setup.resolved("secret.log");
    let said = |name: &str, why: &str| {
        ran.stdout.lines().any(|line| line.trim_start().starts_with(name) && line.contains(&format!("left out: {why}")))
    };
    assert!(said("notes.log", &format!("a link to {outside}, outside the case folder")), "{}", ran.stdout);
    assert!(said("events.fifo", "a named pipe (FIFO), not a regular file"), "{}", ran.stdout);
    let manifest = std::fs::read_to_string(case.join("leasetrace.toml")).unwrap();
    for name in ["notes.log", "events.fifo"] {
        assert!(!manifest.contains(&format!("path = \"{name}\"")), "{name} is not a source:\n{manifest}");
    }
    assert!(!manifest.contains(MARK), "the link out was not read");
    // The zone init could not decide is given by flag: the rest of its manifest is read as written.
    let ran = run(&["analyze", case.to_str().unwrap(), "--log-tz", "Asia/Seoul", "--format", "json"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert!(!ran.stdout.contains(MARK));
}
