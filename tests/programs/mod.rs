//! The formats and filters for programs: `--format jsonl`, `--format timesketch`, and
//! `--since`/`--until`/`--job`/`--run`/`--item` (docs/outputs/). Run on the real binary; the
//! incident's events and findings are checked to the line against the unfiltered report, so a
//! filter that drops or adds an event cannot pass.

use super::*;

/// `(file name, line)` of each event of a JSON report's `timeline`.
fn lines_of(events: &Value) -> Vec<(String, u64)> {
    events
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let path = e["source"]["path"].as_str().unwrap();
            (path.rsplit('/').next().unwrap().to_string(), e["source"]["line"].as_u64().unwrap())
        })
        .collect()
}

fn json_of(args: &[&str]) -> Value {
    let run = leasetrace(args).run();
    assert!(run.code == 0 || run.code == 1, "{args:?}: {}", run.stderr);
    run.json()
}

fn line(file: &str, line: u64) -> (String, u64) {
    (file.to_string(), line)
}

// ---------------------------------------------------------------- filters

#[test]
fn incident_2026_10_07_timeline_from_09_50_to_09_55_kst_shows_exactly_those_events() {
    let report = json_of(&[
        "timeline",
        INCIDENT,
        "--since",
        "09:50",
        "--until",
        "09:55",
        "--tz",
        "Asia/Seoul",
        "--format",
        "json",
    ]);
    // 09:53:00 (the rerun's activation) to 09:54:29.87 (the first review of the rerun): the next
    // event is at 09:55:12.433, after the bound.
    assert_eq!(
        lines_of(&report["timeline"]),
        [
            line("server.log", 491),
            line("ledger.csv", 15),
            line("ledger.csv", 16),
            line("server.log", 501),
            line("ledger.csv", 17),
            line("ledger.csv", 18),
            line("ledger.csv", 19),
            line("ledger.csv", 20),
        ]
    );
    // The same as the unfiltered timeline cut by time: nothing else dropped or added.
    let all = json_of(&["timeline", INCIDENT, "--format", "json"]);
    let inside: Vec<Value> = all["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            let at = e["at"].as_str().unwrap();
            ("2026-10-07T00:50:00.000Z"..="2026-10-07T00:55:00.000Z").contains(&at)
        })
        .cloned()
        .collect();
    assert_eq!(report["timeline"], Value::Array(inside));
    assert_eq!(report["filter"]["since"], "2026-10-07T00:50:00.000Z");
    assert_eq!(report["filter"]["until"], "2026-10-07T00:55:00.000Z");
    assert_eq!(report["filter"]["events_read"], 46);
    let assumptions = report["assumptions"].to_string();
    assert!(assumptions.contains("--since 09:50 read as 2026-10-07 09:50:00 Asia/Seoul"), "{assumptions}");
    assert!(assumptions.contains("8 of the timeline's 46 events"), "{assumptions}");
}

#[test]
fn an_until_is_inclusive_to_the_millisecond_and_an_offset_needs_no_zone() {
    // ledger.csv:18 is at 00:54:05.700Z: an until at that instant keeps it, a millisecond before drops it.
    let at = |since: &str, until: &str| {
        // An empty window is what two of these ask for.
        let args =
            ["timeline", INCIDENT, "--since", since, "--until", until, "--allow-empty-filter", "--format", "json"];
        lines_of(&json_of(&args)["timeline"])
    };
    assert_eq!(at("2026-10-07T00:54:05.700Z", "2026-10-07T09:54:05.700+09:00"), [line("ledger.csv", 18)]);
    assert_eq!(at("2026-10-07T00:54:04Z", "2026-10-07T00:54:05.699Z"), [], "a millisecond before: nothing");
    assert_eq!(at("2026-10-07T00:54:05.701Z", "2026-10-07T00:54:06Z"), [], "a millisecond after: nothing");
}

/// A finding without its position (`id`, `caused_by`: renumbered among the shown findings), and
/// the kinds of the findings it follows from instead.
fn unnumbered(report: &Value, finding: &Value) -> Value {
    let mut finding = finding.clone();
    let object = finding.as_object_mut().unwrap();
    object.remove("id");
    let causes: Vec<Value> = object
        .remove("caused_by")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|id| report["findings"][usize::try_from(id.as_u64().unwrap() - 1).unwrap()]["kind"].clone())
        .collect();
    object.insert("caused_by_kinds".into(), Value::Array(causes));
    finding
}

#[test]
fn analyze_shows_the_findings_citing_a_shown_event_whole_and_says_what_it_hid() {
    let all = json_of(&["analyze", INCIDENT, "--format", "json"]);
    let report = json_of(&["analyze", INCIDENT, "--run", "run-0933-b", "--format", "json"]);
    // Each shown finding is the unfiltered one, evidence and all; each hidden one cites no event of
    // the run (and no shown finding follows from it).
    let cites_run = |f: &Value| f["evidence"].as_array().unwrap().iter().any(|e| e["run_id"] == "run-0933-b");
    let expected: Vec<Value> =
        all["findings"].as_array().unwrap().iter().filter(|f| cites_run(f)).map(|f| unnumbered(&all, f)).collect();
    let shown: Vec<Value> = report["findings"].as_array().unwrap().iter().map(|f| unnumbered(&report, f)).collect();
    assert_eq!(shown, expected);
    assert_eq!(kinds(&report), ["stalled-rerun", "sweep-overlap", "duplicate-selection"]);
    // The ids are the positions among the shown findings, and the chain is renumbered with them.
    assert_eq!(report["chains"][0]["path"], serde_json::json!([3, 2, 1]));
    // The shown events are the cited ones of the run only.
    assert!(report["timeline"].as_array().unwrap().iter().all(|e| e["run_id"] == "run-0933-b"));
    assert_eq!(
        lines_of(&report["timeline"]),
        [line("ledger.csv", 15), line("ledger.csv", 18), line("ledger.csv", 21), line("ledger.csv", 23)]
    );
    // Said where a reader sees it first, and in the assumptions.
    let warning = report["warnings"].as_array().unwrap().iter().find(|w| w["kind"] == "findings-filtered-out");
    let message = warning.expect("a header warning for the hidden findings")["message"].as_str().unwrap();
    assert!(message.starts_with("2 of 5 findings are not shown (1 warning, 1 info)"), "{message}");
    assert_eq!(report["filter"]["findings_found"], 5);
    assert_eq!(report["filter"]["run_id"], serde_json::json!(["run-0933-b"]));
    assert!(report["assumptions"].to_string().contains("3 of 5; the analysis read all 46 events"));
    // The raw lines of every cited event were read back, shown in the timeline or not.
    let stalled = finding(&report, "stalled-rerun");
    assert!(stalled["evidence"].as_array().unwrap().iter().all(|e| !e["raw"].as_str().unwrap().is_empty()));
}

#[test]
fn a_shown_finding_brings_the_findings_it_follows_from_so_its_chain_stays_whole() {
    let all = json_of(&["analyze", INCIDENT, "--format", "json"]);
    let report = json_of(&["analyze", INCIDENT, "--item", "PR-4412", "--format", "json"]);
    // Only the duplicate selection cites PR-4412; it follows from the overlap, which follows from
    // the stalled rerun: the chain from the restart to the duplicate, whole.
    let cites_item = |f: &Value| f["evidence"].as_array().unwrap().iter().any(|e| e["item"] == "PR-4412");
    let citing: Vec<&Value> = all["findings"].as_array().unwrap().iter().filter(|f| cites_item(f)).collect();
    assert_eq!(citing.iter().map(|f| f["kind"].as_str().unwrap()).collect::<Vec<_>>(), ["duplicate-selection"]);
    assert_eq!(kinds(&report), ["stalled-rerun", "sweep-overlap", "duplicate-selection"]);
    let chain = &report["chains"][0];
    assert_eq!(chain["path"], serde_json::json!([3, 2, 1]));
    assert!(chain["root_cause"].as_str().unwrap().starts_with("its process restarted at 09:37:26"), "{chain}");
    // unlogged-stall follows from the stalled rerun too, but nothing shown follows from it.
    assert!(!kinds(&report).contains(&"unlogged-stall".to_string()));
    // An effect is not brought by its cause: before 09:50, the rerun's chain stops at the rerun.
    let early = json_of(&["analyze", INCIDENT, "--until", "09:50", "--format", "json"]);
    assert!(!kinds(&early).contains(&"duplicate-selection".to_string()));
    assert!(!kinds(&early).contains(&"sweep-overlap".to_string()));
}

#[test]
fn check_passes_or_fails_on_the_shown_findings_only() {
    let full = leasetrace(&["check", INCIDENT, "--fail-on", "error", "--format", "json"]).run();
    assert_eq!(full.code, 1, "the incident fails on its duplicate selection");
    // Before 09:50 KST: the stall's first activation, not the duplicate picks.
    let early = leasetrace(&["check", INCIDENT, "--fail-on", "error", "--until", "09:50", "--format", "json"]).run();
    assert_eq!(early.code, 0, "{}", early.stderr);
    let report = early.json();
    assert_eq!(report["check"]["failing"], 0);
    let warning = report["warnings"].as_array().unwrap().iter().find(|w| w["kind"] == "findings-filtered-out").unwrap();
    assert!(warning["message"].as_str().unwrap().contains("1 error"), "{warning}");
    assert!(warning["message"].as_str().unwrap().ends_with("the check does not count them"), "{warning}");
    let table = leasetrace(&["check", INCIDENT, "--fail-on", "error", "--until", "09:50"]).run();
    assert_eq!(table.code, 0);
    assert!(table.stdout.contains("WARNING: 2 of 5 findings are not shown (1 error, 1 warning)"), "{}", table.stdout);
    let item = leasetrace(&["check", INCIDENT, "--fail-on", "error", "--item", "PR-4412"]).run();
    assert_eq!(item.code, 1, "the duplicate selection of PR-4412 is shown");
}

#[test]
fn filter_times_that_cannot_be_placed_are_usage_errors_naming_the_fix() {
    let error = |args: &[&str]| {
        let run = leasetrace(args).run();
        assert_eq!(run.code, 2, "{args:?}: {}", run.stdout);
        run.stderr
    };
    // 23:54 UTC on the 6th to 01:15 on the 7th: two dates in UTC.
    let e = error(&["timeline", INCIDENT, "--tz", "UTC", "--since", "00:50"]);
    assert!(e.contains("run from 2026-10-06 to 2026-10-07 in UTC") && e.contains("'2026-10-06 00:50'"), "{e}");
    // Sources by flags: no display zone declared, so a local time is not read as UTC.
    let ledger = "fixtures/incident-2026-10-07/ledger.csv";
    let e = error(&["timeline", "--ledger", ledger, "--since", "2026-10-07 00:50"]);
    assert!(e.contains("--since '2026-10-07 00:50': timestamp has no UTC offset") && e.contains("--tz ZONE"), "{e}");
    let e = error(&["timeline", "--ledger", ledger, "--until", "00:50"]);
    assert!(e.contains("none is declared; give --tz ZONE"), "{e}");
    // Found by fuzzing: a no-break space inside the minutes split a character and panicked.
    let e = error(&["timeline", INCIDENT, "--since", "2026-10-07 09:5\u{a0}3"]);
    assert!(e.contains("--since '2026-10-07 09:5\u{a0}3'"), "{e}");
    let e = error(&["timeline", INCIDENT, "--since", "soon"]);
    assert!(e.contains("--since 'soon' is not a time: expected a time such as"), "{e}");
    let e = error(&["timeline", INCIDENT, "--since", "09:55", "--until", "09:50"]);
    assert!(e.contains("is after --until"), "{e}");
    let e = error(&["lock", "--activated-at", "2026-10-07T00:33:00Z", "--since", "09:50"]);
    assert!(e.contains("choose what timeline, analyze and check show"), "{e}");
    let e = error(&["lock", "--activated-at", "2026-10-07T00:33:00Z", "--format", "jsonl"]);
    assert!(e.contains("lock writes --format table or json, not jsonl"), "{e}");
}

#[test]
fn a_filter_that_matches_no_event_is_an_error_that_shows_what_the_evidence_holds() {
    // A typo in a CI filter, or a window on another day, must not be a green build.
    let run = leasetrace(&["check", INCIDENT, "--job", "nope"]).run();
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(run.stdout.is_empty(), "no report: {}", run.stdout);
    let e = &run.stderr;
    assert!(e.contains("the filter matches no event") && e.contains("events with job nope"), "{e}");
    assert!(
        e.contains("the evidence runs from 2026-10-07 08:54:00.011 to 2026-10-07 10:15:30.095 (Asia/Seoul)"),
        "{e}"
    );
    assert!(e.contains("--job: the jobs read are 8815, 8816, repeat:pr-review-sweep:"), "{e}");
    assert!(e.contains("--allow-empty-filter"), "{e}");
    // PR-441 is a prefix of PR-4412, not an id of the case: the nearest ids lead the list.
    let e = leasetrace(&["timeline", INCIDENT, "--item", "PR-441"]).run();
    assert_eq!(e.code, 2, "{}", e.stdout);
    assert!(e.stderr.contains("--item: the items read are PR-4412, "), "{}", e.stderr);
    // A window on another day: nothing of it was read, and the span is the whole case's.
    let e = leasetrace(&["check", INCIDENT, "--since", "2030-01-01T00:00:00Z"]).run();
    assert_eq!(e.code, 2, "{}", e.stdout);
    assert!(e.stderr.contains("events from 2030-01-01 09:00:00 (Asia/Seoul) on"), "{}", e.stderr);
    assert!(
        e.stderr.contains("the evidence runs from 2026-10-07 08:54:00.011 to 2026-10-07 10:15:30.095"),
        "{}",
        e.stderr
    );
    assert!(e.stderr.contains("46 rows and lines outside the read window"), "{}", e.stderr);
    for format in ["json", "sarif"] {
        let e = leasetrace(&["check", INCIDENT, "--run", "run-0933-x", "--format", format]).run();
        assert_eq!(e.code, 2, "{format}: {}", e.stdout);
        assert!(e.stdout.is_empty(), "{format}: {}", e.stdout);
    }
    // Asked for: the report says it first, and the check passes on nothing.
    let run = leasetrace(&["check", INCIDENT, "--item", "PR-441", "--allow-empty-filter"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .lines()
            .any(|l| l.starts_with("WARNING: no event of the case's 46 is among the events with item PR-441")),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("check passed: no shown finding at or above warning; the filter hides 5 findings (1 error, 3 warning, 1 info), not counted"), "{}", run.stdout);
    let report = json_of(&["analyze", INCIDENT, "--item", "PR-4412", "--format", "json"]);
    assert!(report["warnings"].as_array().unwrap().iter().all(|w| w["kind"] != "filter-matches-nothing"));
}

// ---------------------------------------------------------------- jsonl

#[test]
fn jsonl_lines_are_the_json_reports_objects_with_their_type() {
    for args in [&["analyze", INCIDENT][..], &["timeline", INCIDENT], &["check", INCIDENT, "--run", "run-0933-b"]] {
        let json = json_of(&[args, &["--format", "json"][..]].concat());
        let run = leasetrace(&[args, &["--format", "jsonl"][..]].concat()).run();
        assert_eq!(run.code, i32::from(args[0] == "check"), "{}", run.stderr);
        let lines: Vec<Value> = run.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let of = |kind: &str| -> Vec<Value> {
            lines
                .iter()
                .filter(|l| l["type"] == kind)
                .map(|l| {
                    let mut object = l.clone();
                    object.as_object_mut().unwrap().remove("type");
                    object
                })
                .collect()
        };
        // begin first, summary last, the rest in the JSON report's order.
        let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
        assert_eq!(types.first(), Some(&"begin"));
        assert_eq!(types.last(), Some(&"summary"));
        let order = ["begin", "input", "event", "finding", "summary"];
        let ranks: Vec<usize> = types.iter().map(|t| order.iter().position(|o| o == t).unwrap()).collect();
        assert!(ranks.is_sorted(), "{types:?}");
        assert_eq!(Value::Array(of("input")), json["inputs"]);
        assert_eq!(Value::Array(of("event")), json["timeline"]);
        assert_eq!(Value::Array(of("finding")), json["findings"]);
        let (begin, summary) = (&lines[0], lines.last().unwrap());
        assert_eq!(begin["schema"], "leasetrace.jsonl/v1");
        assert_eq!(begin["report_schema"], json["schema"]);
        assert_eq!(begin["warnings"], json["warnings"], "the warnings come first");
        for field in ["command", "display_tz", "warnings", "params", "assumptions", "chains"] {
            assert_eq!(summary[field], json[field], "{field}");
        }
        assert_eq!(summary.get("check"), json.get("check"));
        assert_eq!(summary.get("filter"), json.get("filter"));
        assert_eq!(summary["counts"]["events"], json["timeline"].as_array().unwrap().len());
        assert_eq!(summary["counts"]["findings"], json["findings"].as_array().unwrap().len());
        assert_eq!(summary["counts"]["events_read"], 46);
    }
}

/// The peak resident memory of `command`'s run in bytes, the bytes and lines it wrote, and the
/// first and last lines: its stdout is read as it comes, its memory taken from the kernel's
/// account of that one child (`wait4`).
// Reaped by `wait4`, which `Child::wait` would not let us give a `rusage` to.
#[allow(clippy::zombie_processes)]
fn run_measured(mut command: Command) -> (u64, u64, u64, String, String) {
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        use std::io::Read;
        let (mut bytes, mut lines, mut first, mut last) = (0u64, 0u64, Vec::new(), Vec::new());
        let mut buffer = vec![0; 1 << 20];
        let mut current = Vec::new();
        loop {
            let n = stdout.read(&mut buffer).unwrap();
            if n == 0 {
                break;
            }
            bytes += n as u64;
            for &b in &buffer[..n] {
                if b == b'\n' {
                    lines += 1;
                    if lines == 1 {
                        first = std::mem::take(&mut current);
                    } else {
                        last = std::mem::take(&mut current);
                    }
                    current.clear();
                } else if current.len() < 1 << 16 {
                    current.push(b);
                }
            }
        }
        (bytes, lines, String::from_utf8(first).unwrap(), String::from_utf8(last).unwrap())
    });
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    let mut status = 0;
    // SAFETY: `rusage` is plain data, zeroed is a valid value; wait4 writes into the two
    // locals it is given and reaps our own child, which `child` is not waited on after.
    #[allow(unsafe_code)]
    let (waited, usage) = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        (libc::wait4(pid, &raw mut status, 0, &raw mut usage), usage)
    };
    assert_eq!(waited, pid);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "exit status {status}");
    let (bytes, lines, first, last) = reader.join().unwrap();
    // ru_maxrss is in kilobytes on Linux.
    (u64::try_from(usage.ru_maxrss).unwrap() * 1024, bytes, lines, first, last)
}

#[test]
fn timeline_jsonl_streams_half_a_million_events_in_the_memory_of_the_timeline_not_of_the_output() {
    // Half a million ledger rows of 4 kinds with a 260-byte detail (interned: one copy in
    // memory): about 175 MB of input and 460 MB of JSON Lines. A renderer that held the wire
    // events, or only the raw lines, before writing would grow by the input's size on top of the
    // timeline; streamed, the growth over a tiny case is the timeline's (about 150 bytes an
    // event: 75 MB here). Half a million rather than millions: a debug build reads them in tens
    // of seconds, and the bound is a ratio, the same at any size.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.csv");
    let detail = "review posted after re-reading the pull request and its diff and its earlier reviews ".repeat(3);
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(file, "at,run_id,job_id,slot,sweep,event,item,worker,status,detail").unwrap();
    let rows = 500_000u64;
    let steps = [
        ("round_started", false, "RUNNING"),
        ("item_selected", true, ""),
        ("effect_posted", true, ""),
        ("round_finished", false, "DONE"),
    ];
    for row in 0..rows {
        // A round a minute from 2026-10-07T00:00Z, its rows 5 s apart; epoch seconds, which a
        // ledger's time column takes as well (written by hand: this runs half a million times).
        let (round, step) = (row / 4, row % 4);
        let slot = 1_791_331_200 + round * 60;
        let (event, has_item, status) = steps[usize::try_from(step).unwrap()];
        let item = if has_item { format!("PR-{round}") } else { String::new() };
        writeln!(
            file,
            "{},run-{round},repeat:sweep:{round},{slot},sweep,{event},{item},api-1/41877,{status},{detail}",
            slot + 2 + step * 5
        )
        .unwrap();
    }
    file.flush().unwrap();
    drop(file);
    let input = std::fs::metadata(&path).unwrap().len();

    let command = |ledger: &Path| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_leasetrace"));
        command.args(["timeline", "--quiet", "--format", "jsonl", "--ledger"]).arg(ledger);
        command
    };
    let tiny = Path::new(env!("CARGO_MANIFEST_DIR")).join(INCIDENT).join("ledger.csv");
    let (baseline, ..) = run_measured(command(&tiny));
    let (peak, output, lines, first, last) = run_measured(command(&path));
    assert_eq!(lines, rows + 3, "begin, the input, every event, summary");
    assert!(first.starts_with(r#"{"type":"begin","#), "{first}");
    let summary: Value = serde_json::from_str(&last).unwrap();
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["counts"]["events"], rows);
    let grown = peak.saturating_sub(baseline);
    let mb = |bytes: u64| bytes / 1_000_000;
    assert!(output > 2 * input, "the output ({} MB) is larger than the input ({} MB)", mb(output), mb(input));
    assert!(
        grown < input / 4 * 3 && grown < output / 3,
        "peak memory grew by {} MB (peak {} MB, a tiny case {} MB) for {} MB of input and {} MB of output",
        mb(grown),
        mb(peak),
        mb(baseline),
        mb(input),
        mb(output)
    );
}

// ---------------------------------------------------------------- timesketch

/// The rows of a `--format timesketch` run, each checked against Timesketch's JSONL import rules
/// (docs/outputs/timesketch.md): `message`, `datetime` (ISO 8601) and `timestamp_desc` present
/// and non-empty, `timestamp` the same instant in microseconds, flat attributes, none starting
/// with `_` (the importer client drops those).
fn timesketch_rows(args: &[&str]) -> Vec<Value> {
    let run = leasetrace(&[args, &["--format", "timesketch"][..]].concat()).run();
    assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
    let rows: Vec<Value> = run.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    for row in &rows {
        let object = row.as_object().unwrap();
        for field in ["message", "datetime", "timestamp_desc"] {
            assert!(row[field].as_str().is_some_and(|v| !v.is_empty()), "{field} in {row}");
        }
        let datetime = chrono::DateTime::parse_from_rfc3339(row["datetime"].as_str().unwrap()).unwrap();
        assert_eq!(row["timestamp"], datetime.timestamp_micros(), "{row}");
        assert!(object.keys().all(|k| !k.starts_with('_')), "{row}");
        assert!(object.iter().all(|(k, v)| !v.is_object() && (k == "tag" || !v.is_array())), "flat: {row}");
    }
    rows
}

#[test]
fn timesketch_rows_are_the_reports_events_and_findings_in_timesketchs_shape() {
    let json = json_of(&["analyze", INCIDENT, "--format", "json"]);
    let rows = timesketch_rows(&["analyze", INCIDENT]);
    let of = |data_type: &str| rows.iter().filter(|r| r["data_type"].as_str().unwrap() == data_type).count();
    let events: Vec<&Value> = rows
        .iter()
        .filter(|r| {
            r["data_type"].as_str().unwrap().starts_with("leasetrace:ledger")
                || r["data_type"].as_str().unwrap().starts_with("leasetrace:log")
        })
        .collect();
    // Every cited event once, at its own instant and line; every finding; the header warnings.
    assert_eq!(events.len(), json["timeline"].as_array().unwrap().len());
    for (row, event) in events.iter().zip(json["timeline"].as_array().unwrap()) {
        let at = chrono::DateTime::parse_from_rfc3339(event["at"].as_str().unwrap()).unwrap();
        assert_eq!(row["timestamp"], at.timestamp_micros());
        assert_eq!(row["source_line"], event["source"]["line"]);
        assert_eq!(row["source_file"], event["source"]["path"]);
        assert_eq!(row["raw"], event["raw"]);
        assert_eq!(row["kind"], event["kind"]);
        // Tagged with the codes of the findings citing it.
        let citing: Vec<&Value> = json["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["evidence"].as_array().unwrap().iter().any(|e| e["source"] == event["source"]))
            .map(|f| &f["kind"])
            .collect();
        assert_eq!(row["tag"].as_array().unwrap().iter().collect::<Vec<_>>(), citing, "{row}");
    }
    assert_eq!(of("leasetrace:finding"), json["findings"].as_array().unwrap().len());
    assert_eq!(of("leasetrace:warning"), json["warnings"].as_array().unwrap().len());
    let duplicate = rows.iter().find(|r| r["finding"] == "duplicate-selection").unwrap();
    assert_eq!(duplicate["timestamp_desc"], "Finding time (when the pattern became visible)");
    assert_eq!(
        duplicate["evidence"],
        "fixtures/incident-2026-10-07/ledger.csv:18, fixtures/incident-2026-10-07/ledger.csv:19, fixtures/incident-2026-10-07/ledger.csv:21, fixtures/incident-2026-10-07/ledger.csv:22"
    );
    assert!(duplicate["message"].as_str().unwrap().ends_with("(times in Asia/Seoul)"));
    // Its number and causes are the JSON report's `id` and `caused_by`.
    let in_json = finding(&json, "duplicate-selection");
    assert_eq!(duplicate["finding_id"], in_json["id"]);
    let causes: Vec<String> = in_json["caused_by"].as_array().unwrap().iter().map(ToString::to_string).collect();
    assert_eq!(duplicate["caused_by"], causes.join(", "));
    let stalled = rows.iter().find(|r| r["finding"] == "stalled-rerun").unwrap();
    assert_eq!(stalled["root_cause"], finding(&json, "stalled-rerun")["root_cause"]);
    // The warnings are placed at the earliest row, so a time-sorted view opens with them.
    let first = rows.iter().map(|r| r["timestamp"].as_i64().unwrap()).min().unwrap();
    assert!(rows.iter().filter(|r| r["data_type"] == "leasetrace:warning").all(|r| r["timestamp"] == first));
}

#[test]
fn timesketch_timeline_has_every_event_and_says_what_each_time_is() {
    let json = json_of(&["timeline", REAL_STALLED, "--format", "json"]);
    let rows = timesketch_rows(&["timeline", REAL_STALLED]);
    let events: Vec<&Value> = rows.iter().filter(|r| r.get("kind").is_some()).collect();
    assert_eq!(events.len(), json["timeline"].as_array().unwrap().len());
    let desc = |channel: &str| -> Vec<String> {
        let mut found: Vec<String> = events
            .iter()
            .filter(|r| r["channel"] == channel)
            .map(|r| r["timestamp_desc"].as_str().unwrap().to_string())
            .collect();
        found.sort();
        found.dedup();
        found
    };
    assert_eq!(desc("ledger"), ["Ledger row time"]);
    assert_eq!(desc("log"), ["Log line time"]);
    assert_eq!(desc("events-stream"), ["Stream entry time (Redis clock)"]);
    assert_eq!(
        desc("job-hash"),
        ["Job hash finishedOn", "Job hash processedOn (last activation)", "Job hash timestamp (added)"]
    );
}

// ---------------------------------------------------------------- docs

/// The last fenced block of a docs page.
fn last_block(page: &str) -> String {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(page)).unwrap();
    let blocks: Vec<&str> = text.split("```").collect();
    blocks[blocks.len() - 2].trim_start_matches('\n').to_string()
}

#[test]
fn the_docs_samples_are_cut_from_what_the_binary_writes() {
    let args = ["analyze", INCIDENT, "--item", "PR-4412", "--format"];
    // The Timesketch sample is the whole output.
    let timesketch = leasetrace(&[&args[..], &["timesketch"]].concat()).run();
    assert_eq!(last_block("docs/outputs/timesketch.md"), timesketch.stdout);
    // The JSON Lines sample is cut: each line it gives whole is a line of the output.
    let jsonl = leasetrace(&[&args[..], &["jsonl"]].concat()).run();
    let sample = last_block("docs/outputs/jsonl.md");
    let whole: Vec<&str> = sample.lines().filter(|l| !l.contains('…')).collect();
    assert!(whole.len() >= 3, "{sample}");
    for line in whole {
        assert!(jsonl.stdout.lines().any(|l| l == line), "not in the output: {line}");
    }
}
