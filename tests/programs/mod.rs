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
        let report = json_of(&["timeline", INCIDENT, "--since", since, "--until", until, "--format", "json"]);
        lines_of(&report["timeline"])
    };
    assert_eq!(at("2026-10-07T00:54:05.700Z", "2026-10-07T09:54:05.700+09:00"), [line("ledger.csv", 18)]);
    assert_eq!(at("2026-10-07T00:54:04Z", "2026-10-07T00:54:05.699Z"), [], "a millisecond before: nothing");
    assert_eq!(at("2026-10-07T00:54:05.701Z", "2026-10-07T00:54:06Z"), [], "a millisecond after: nothing");
}

#[test]
fn analyze_shows_the_findings_citing_a_shown_event_whole_and_says_what_it_hid() {
    let all = json_of(&["analyze", INCIDENT, "--format", "json"]);
    let report = json_of(&["analyze", INCIDENT, "--run", "run-0933-b", "--format", "json"]);
    // Each shown finding is the unfiltered one, evidence and all; each hidden one cites no event of the run.
    let cites_run = |f: &Value| f["evidence"].as_array().unwrap().iter().any(|e| e["run_id"] == "run-0933-b");
    let expected: Vec<&Value> = all["findings"].as_array().unwrap().iter().filter(|f| cites_run(f)).collect();
    let shown: Vec<&Value> = report["findings"].as_array().unwrap().iter().collect();
    assert_eq!(shown, expected);
    assert_eq!(kinds(&report), ["stalled-rerun", "sweep-overlap", "duplicate-selection"]);
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
    let e = error(&["timeline", INCIDENT, "--since", "soon"]);
    assert!(e.contains("--since 'soon' is not a time: expected a time such as"), "{e}");
    let e = error(&["timeline", INCIDENT, "--since", "09:55", "--until", "09:50"]);
    assert!(e.contains("is after --until"), "{e}");
    let e = error(&["lock", "--activated-at", "2026-10-07T00:33:00Z", "--since", "09:50"]);
    assert!(e.contains("choose what timeline, analyze and check show"), "{e}");
}
