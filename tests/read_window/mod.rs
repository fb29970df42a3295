//! `--since`/`--until` read only the window asked about, widened by `--read-margin`
//! (docs/outputs/filters.md), and a source read once (standard input) is copied while it is read
//! and read back as a file (docs/inputs.md). Run on the real binary.

use super::*;

/// `analyze --format json` of the incident's case with extra flags.
fn analyze(extra: &[&str]) -> Value {
    let run = leasetrace(&[&["analyze", INCIDENT, "--format", "json"], extra].concat()).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()
}

fn warning_kinds(report: &Value) -> Vec<String> {
    report["warnings"].as_array().unwrap().iter().map(|w| w["kind"].as_str().unwrap().to_string()).collect()
}

fn assumptions(report: &Value) -> String {
    report["assumptions"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect::<Vec<_>>().join("\n")
}

fn outside(input: &Value) -> u64 {
    input["ignored_by_reason"].get("outside the read window").map_or(0, |n| n.as_u64().unwrap())
}

/// The ledger rows of the incident whose time (UTC, the first column) is outside `from ..= to`,
/// counted from the file itself.
fn ledger_rows_outside(from: &str, to: &str) -> u64 {
    let csv = std::fs::read_to_string(format!("{}/{INCIDENT}/ledger.csv", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let at = |text: &str| chrono::DateTime::parse_from_rfc3339(text).unwrap();
    let (from, to) = (at(from), at(to));
    csv.lines()
        .skip(1)
        .filter(|row| {
            let time = at(row.split(',').next().unwrap());
            time < from || time > to
        })
        .count() as u64
}

#[test]
fn with_the_default_margin_the_window_gives_the_findings_of_reading_everything() {
    let window = ["--since", "2026-10-07 09:50", "--until", "2026-10-07 09:56"];
    let windowed = analyze(&window);
    let everything = analyze(&[&window[..], &["--read-margin", "all"]].concat());
    assert_eq!(windowed["findings"], everything["findings"]);
    assert!(!warning_kinds(&windowed).contains(&"read-window-cut".to_string()), "{:#}", windowed["warnings"]);
    // 08:50 to 10:56 KST holds the whole incident (08:54 to 10:15): nothing was left out.
    assert!(
        assumptions(&windowed).contains(
            "ledgers and logs read from 2026-10-07 08:50:00 to 2026-10-07 10:56:00 (Asia/Seoul): --since/--until widened by 3600 s on each side (--read-margin); nothing was outside it"
        ),
        "{}",
        assumptions(&windowed)
    );
    assert!(!assumptions(&everything).contains("ledgers and logs read from"), "{}", assumptions(&everything));
}

#[test]
fn rows_and_lines_outside_the_window_are_counted_not_kept_and_a_cut_story_is_warned_about() {
    // 09:49 to 09:57 KST: the 09:33 activation, the restart and the first round are left out.
    let report = analyze(&["--since", "2026-10-07 09:50", "--until", "2026-10-07 09:56", "--read-margin", "60"]);
    let (ledger, log) = (&report["inputs"][0], &report["inputs"][1]);
    assert_eq!(outside(ledger), ledger_rows_outside("2026-10-07T00:49:00Z", "2026-10-07T00:57:00Z"));
    assert!(outside(log) > 0, "{log:#}");
    for input in [ledger, log] {
        let (lines, used, ignored, rejected) =
            (input["lines"].as_u64(), input["used"].as_u64(), input["ignored"].as_u64(), input["rejected"].as_u64());
        assert_eq!(lines.unwrap(), used.unwrap() + ignored.unwrap() + rejected.unwrap(), "{input:#}");
        // What was kept is inside the window read.
        for bound in ["first_at", "last_at"] {
            let at = input[bound].as_str().unwrap();
            assert!(("2026-10-07T00:49:00.000Z"..="2026-10-07T00:57:00.000Z").contains(&at), "{bound} {at}");
        }
    }
    let total = outside(ledger) + outside(log);
    assert!(
        assumptions(&report).contains(&format!(
            "ledgers and logs read from 2026-10-07 09:49:00 to 2026-10-07 09:57:00 (Asia/Seoul): --since/--until widened by 60 s on each side (--read-margin); {total} ledger rows and log lines outside it were counted, not kept"
        )),
        "{}",
        assumptions(&report)
    );
    // The stall that made run-0933-b a rerun is outside: the warning names the job whose story
    // is cut, first, since the sweep-overlap below now reads the rerun as a regular round.
    let cut = report["warnings"].as_array().unwrap().iter().find(|w| w["kind"] == "read-window-cut").unwrap();
    assert!(
        cut["message"]
            .as_str()
            .unwrap()
            .starts_with("job repeat:pr-review-sweep:1791333180000 also has rows or lines outside the read window"),
        "{cut:#}"
    );
    assert!(report["findings"].as_array().unwrap().iter().all(|f| f["kind"] != "stalled-rerun"));
}

#[test]
fn a_clock_time_reads_everything_and_says_how_to_read_only_the_window() {
    let report = analyze(&["--since", "09:50", "--until", "09:56"]);
    let ledger = &report["inputs"][0];
    assert_eq!(outside(ledger), 0);
    assert!(
        assumptions(&report).contains("--since 09:50 is a clock time, on the date the events give: every line was read, then the window shown; give the date too (--since '2026-10-07 09:50') to read only the window"),
        "{}",
        assumptions(&report)
    );
    // The same findings as the dated window with the default margin.
    assert_eq!(
        report["findings"],
        analyze(&["--since", "2026-10-07 09:50", "--until", "2026-10-07 09:56"])["findings"]
    );
}

#[test]
fn a_read_margin_that_is_not_seconds_is_refused_naming_the_forms() {
    let run = leasetrace(&["analyze", INCIDENT, "--since", "2026-10-07 09:50", "--read-margin", "1h"]).run();
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("--read-margin '1h': expected a whole number of seconds (3600 is an hour) or all"),
        "{}",
        run.stderr
    );
}

/// A ledger whose cited rows have a quoted cell: read back as written, from stdin as from a file.
fn quoted_ledger() -> String {
    let csv = std::fs::read_to_string(format!("{}/{INCIDENT}/ledger.csv", env!("CARGO_MANIFEST_DIR"))).unwrap();
    csv.lines().map(|row| row.replacen(",PR-4412,", ",\"PR-4412\",", 1) + "\n").collect()
}

/// The raw lines of the ledger's cited rows, by line.
fn ledger_raws(run: &Run) -> Vec<(u64, String)> {
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    report["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["channel"] == "ledger")
        .map(|e| (e["source"]["line"].as_u64().unwrap(), e["raw"].as_str().unwrap().to_string()))
        .collect()
}

/// A temporary folder holding `quoted_ledger()` as `ledger.csv` and an empty `tmp` folder for
/// copies; the folder, the ledger's path, `tmp`, and the ledger's cited rows read from the file.
fn quoted_ledger_case() -> (tempfile::TempDir, PathBuf, PathBuf, Vec<(u64, String)>) {
    let dir = tempfile::tempdir().unwrap();
    let (ledger, tmp) = (dir.path().join("ledger.csv"), dir.path().join("tmp"));
    std::fs::create_dir(&tmp).unwrap();
    std::fs::write(&ledger, quoted_ledger()).unwrap();
    let from_file = ledger_raws(&analyze_incident_by_flags(ledger.to_str().unwrap(), &incident_log(), &[]).run());
    (dir, ledger, tmp, from_file)
}

fn incident_log() -> String {
    format!("{INCIDENT}/server.log")
}

#[test]
fn standard_input_is_read_back_from_its_copy_as_written_and_the_copy_is_removed() {
    let (_dir, _, tmp, from_file) = quoted_ledger_case();
    let from_stdin = ledger_raws(
        &analyze_incident_by_flags("-", &incident_log(), &[])
            .env("TMPDIR", tmp.to_str().unwrap())
            .stdin(quoted_ledger().as_bytes())
            .run(),
    );
    assert!(from_file.iter().any(|(_, raw)| raw.contains(",\"PR-4412\",")), "{from_file:?}");
    assert_eq!(from_stdin, from_file);
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0, "the copy of stdin outlived the run");
}

#[test]
fn standard_input_without_a_folder_for_its_copy_is_an_error_naming_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-folder");
    let run = analyze_incident_by_flags("-", &incident_log(), &[])
        .env("TMPDIR", missing.to_str().unwrap())
        .stdin(quoted_ledger().as_bytes())
        .run();
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!("-: cannot make a temporary copy in {}", missing.display())),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("set TMPDIR to a writable folder"), "{}", run.stderr);
}

#[test]
fn standard_input_that_is_a_file_is_read_in_place_without_a_copy() {
    let (dir, ledger, _, from_file) = quoted_ledger_case();
    // No folder for a copy: only a source read in place gets through.
    let missing = dir.path().join("no-such-folder");
    let in_place = analyze_incident_by_flags("-", &incident_log(), &[])
        .env("TMPDIR", missing.to_str().unwrap())
        .stdin_file(std::fs::File::open(&ledger).unwrap())
        .run();
    assert_eq!(ledger_raws(&in_place), from_file);
    assert!(!from_file.is_empty());
}

#[test]
fn standard_input_that_is_a_file_read_from_already_is_copied_from_where_it_is() {
    use std::io::{Seek, SeekFrom};
    let (dir, _, tmp, from_file) = quoted_ledger_case();
    // The file with a line before the ledger, which the reader of stdin has passed already (as
    // `(head -1; leasetrace --ledger -) < file` leaves it): read again from the file's start, that
    // line would be taken for the header.
    let junk = "a line someone else read,,,\n";
    let shifted = dir.path().join("shifted.csv");
    std::fs::write(&shifted, format!("{junk}{}", quoted_ledger())).unwrap();
    let mut stdin = std::fs::File::open(&shifted).unwrap();
    stdin.seek(SeekFrom::Start(junk.len() as u64)).unwrap();
    let copied = analyze_incident_by_flags("-", &incident_log(), &[])
        .env("TMPDIR", tmp.to_str().unwrap())
        .stdin_file(stdin)
        .run();
    assert_eq!(ledger_raws(&copied), from_file);
}

/// The incident's case in a new folder, its log between a day of noise before it and a day after
/// it (about 1.3 MB each): large enough to be read by time.
fn padded_case() -> tempfile::TempDir {
    use std::fmt::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join(INCIDENT);
    for name in ["ledger.csv", "bullmq.json", "leasetrace.toml"] {
        std::fs::copy(fixture.join(name), dir.path().join(name)).unwrap();
    }
    let mut log = String::new();
    for (day, hours) in [("2026-10-06", 0..24), ("2026-10-07", 0..8)] {
        for second in (hours.start * 3600..hours.end * 3600).step_by(4) {
            let (h, m, s) = (second / 3600, second / 60 % 60, second % 60);
            writeln!(log, "{day} {h:02}:{m:02}:{s:02}.000 DEBUG [Redis] ping ok latency=0.30ms").unwrap();
        }
    }
    log += &std::fs::read_to_string(fixture.join("server.log")).unwrap();
    for (day, hours) in [("2026-10-07", 11..24), ("2026-10-08", 0..24)] {
        for second in (hours.start * 3600..hours.end * 3600).step_by(4) {
            let (h, m, s) = (second / 3600, second / 60 % 60, second % 60);
            writeln!(log, "{day} {h:02}:{m:02}:{s:02}.000 DEBUG [Redis] ping ok latency=0.30ms").unwrap();
        }
    }
    std::fs::write(dir.path().join("server.log"), log).unwrap();
    dir
}

#[test]
fn a_large_log_is_read_by_time_with_the_findings_of_reading_everything() {
    let case = padded_case();
    let path = case.path().to_str().unwrap();
    let window = ["--since", "2026-10-07 09:50", "--until", "2026-10-07 09:56"];
    let run = |extra: &[&str]| {
        let run = leasetrace(&[&["analyze", path, "--format", "json"], &window[..], extra].concat()).run();
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.json()
    };
    let (mut sought, everything) = (run(&[]), run(&["--read-margin", "all"]));
    let log = &sought["inputs"][1];
    let read = &log["window_read"];
    let (from, bytes_read, size) =
        (read["from_byte"].as_u64().unwrap(), read["bytes_read"].as_u64().unwrap(), read["size"].as_u64().unwrap());
    // The window and its margin, of two and a half days: the bytes before and after it are not read.
    assert!(from > 0 && bytes_read * 4 < size, "{read:#}");
    assert!(everything["inputs"][1].get("window_read").is_none());
    assert!(
        assumptions(&sought)
            .contains(&format!("server.log (from byte {from}): read by time for the read window: bytes {from}-")),
        "{}",
        assumptions(&sought)
    );
    // Its lines count from the byte it was read from: mapped back, the evidence is the whole read's.
    let text = std::fs::read(case.path().join("server.log")).unwrap();
    let before = memchr::memchr_iter(b'\n', &text[..usize::try_from(from).unwrap()]).count() as u64;
    let label = format!(" (from byte {from})");
    for finding in sought["findings"].as_array_mut().unwrap() {
        for event in finding["evidence"].as_array_mut().unwrap() {
            if let Some(file) = event["source"]["path"].as_str().unwrap().strip_suffix(&label) {
                event["source"]["path"] = Value::from(file);
                event["source"]["line"] = Value::from(event["source"]["line"].as_u64().unwrap() + before);
            }
        }
    }
    assert!(sought["findings"].as_array().unwrap().len() >= 4);
    assert_eq!(sought["findings"], everything["findings"]);
}

#[test]
fn a_large_log_out_of_order_is_read_whole_and_says_so() {
    let case = padded_case();
    // The day after moved before the rest: a log put back together in the wrong order.
    let log = std::fs::read_to_string(case.path().join("server.log")).unwrap();
    let cut = log.find("2026-10-08 00:00:00").unwrap();
    std::fs::write(case.path().join("server.log"), format!("{}{}", &log[cut..], &log[..cut])).unwrap();
    let path = case.path().to_str().unwrap();
    let run = leasetrace(&[
        "analyze",
        path,
        "--format",
        "json",
        "--since",
        "2026-10-07 09:50",
        "--until",
        "2026-10-07 09:56",
    ])
    .run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    assert!(report["inputs"][1].get("window_read").is_none());
    assert!(
        assumptions(&report).contains("server.log: read whole, not by time for the read window: ")
            && assumptions(&report).contains("out of order"),
        "{}",
        assumptions(&report)
    );
    assert!(report["findings"].as_array().unwrap().len() >= 4);
}
