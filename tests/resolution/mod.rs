//! Evidence known to a whole second: a NestJS log writes no fraction. The real export of
//! `REAL_LIMIT_LOGGED` (a log in milliseconds) is rewritten here, in a temporary folder, into the
//! whole seconds NestJS would have written, and the findings of the two are held against each
//! other: what the coarse log gives must be a span that holds what the fine one shows.

#[allow(unused_imports)]
use super::*;

/// `line` with the fraction of its leading `YYYY-MM-DD HH:MM:SS.fff` timestamp dropped (NestJS
/// truncates to the second); other lines (a multi-line message's continuation) as they are.
fn to_whole_seconds(line: &str) -> String {
    let stamped = line.len() > 20
        && line.as_bytes()[10] == b' '
        && line.as_bytes()[19] == b'.'
        && chrono::NaiveDateTime::parse_from_str(&line[..19], "%Y-%m-%d %H:%M:%S").is_ok();
    if !stamped {
        return line.to_string();
    }
    let digits = line[20..].bytes().take_while(u8::is_ascii_digit).count();
    format!("{}{}", &line[..19], &line[20 + digits..])
}

/// A copy of the real fixture, its server.log in whole seconds when `whole_seconds`, and its
/// events stream without BullMQ's `stalled` entries when not `stalled_entries` (a stream read
/// with those left out: the stall is then known from the log line only).
fn case_from_fixture(whole_seconds: bool, stalled_entries: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join(REAL_LIMIT_LOGGED);
    for entry in std::fs::read_dir(&fixture).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.path().join(path.file_name().unwrap())).unwrap();
    }
    if whole_seconds {
        let log = std::fs::read_to_string(fixture.join("server.log")).unwrap();
        let coarse: Vec<String> = log.lines().map(to_whole_seconds).collect();
        assert_ne!(coarse.join("\n"), log.trim_end(), "the fixture's log has fractions to drop");
        std::fs::write(dir.path().join("server.log"), coarse.join("\n") + "\n").unwrap();
    }
    if !stalled_entries {
        let events: Value =
            serde_json::from_str(&std::fs::read_to_string(fixture.join("events.json")).unwrap()).unwrap();
        let all = events.as_array().unwrap();
        let kept: Vec<&Value> = all.iter().filter(|e| e["fields"]["event"] != "stalled").collect();
        assert!(kept.len() < all.len(), "the fixture's stream has stalled entries");
        std::fs::write(dir.path().join("events.json"), serde_json::to_string_pretty(&kept).unwrap()).unwrap();
    }
    dir
}

/// The times (ms) of the fixture's stream `stalled` entries, from their stream ids.
fn stalled_entries_ms() -> Vec<i64> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(REAL_LIMIT_LOGGED).join("events.json");
    let events: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    events
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["fields"]["event"] == "stalled")
        .map(|e| e["id"].as_str().unwrap().split('-').next().unwrap().parse().unwrap())
        .collect()
}

fn analyze(case: &str, extra: &[&str]) -> Value {
    let mut args = vec!["analyze", case, "--format", "json", "-q"];
    args.extend(extra);
    let run = leasetrace(&args).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()
}

fn ms(value: &Value) -> i64 {
    chrono::DateTime::parse_from_rfc3339(value.as_str().unwrap()).unwrap().timestamp_millis()
}

fn secs_ms(value: &Value) -> i64 {
    #[allow(clippy::cast_possible_truncation)]
    let ms = (value.as_f64().unwrap() * 1000.0).round() as i64;
    ms
}

fn reruns(report: &Value) -> Vec<&Value> {
    let mut reruns: Vec<&Value> =
        report["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == "stalled-rerun").collect();
    reruns.sort_by_key(|f| ms(&f["metrics"]["rerun_at"]));
    reruns
}

#[test]
fn whole_second_restarts_are_spans_in_the_metrics_that_hold_the_millisecond_truth() {
    let fine = analyze(REAL_LIMIT_LOGGED, &[]);
    let dir = case_from_fixture(true, true);
    let coarse = analyze(dir.path().to_str().unwrap(), &[]);
    let (fine, coarse) = (reruns(&fine), reruns(&coarse));
    assert_eq!(fine.len(), 2);
    assert_eq!(coarse.len(), fine.len());
    for (fine, coarse) in fine.iter().zip(&coarse) {
        let (f, c) = (&fine["metrics"], &coarse["metrics"]);
        // The millisecond log's restart is exact: no span there.
        assert!(f.get("restart_latest_at").is_none() && f.get("restart_resolution_s").is_none(), "{f}");
        let truth = ms(&f["restart_at"]);
        assert_eq!(ms(&c["restart_at"]), truth - truth.rem_euclid(1000), "the line's own second");
        assert_eq!(secs_ms(&c["restart_resolution_s"]), 1000);
        assert_eq!(ms(&c["restart_latest_at"]), ms(&c["restart_at"]) + 1000);
        assert!(ms(&c["restart_at"]) <= truth && truth <= ms(&c["restart_latest_at"]));
        let true_to_rerun = secs_ms(&f["restart_to_rerun_s"]);
        assert!(
            secs_ms(&c["restart_to_rerun_min_s"]) <= true_to_rerun
                && true_to_rerun <= secs_ms(&c["restart_to_rerun_s"]),
            "{c}"
        );
        let true_after = secs_ms(&f["activation_to_restart_s"]);
        assert!(
            secs_ms(&c["activation_to_restart_s"]) <= true_after
                && true_after <= secs_ms(&c["activation_to_restart_max_s"]),
            "{c}"
        );
        // Each end is named in the arithmetic.
        let formula = |name: &str| {
            coarse["arithmetic"].as_array().unwrap().iter().find(|s| s["result"] == name).unwrap()["formula"]
                .as_str()
                .unwrap()
                .to_string()
        };
        assert!(formula("restart_to_rerun_s").contains("the most (the restart at its earliest"));
        assert!(formula("restart_to_rerun_min_s").contains("the least (the restart at its latest)"));
        assert!(formula("died_before_first_renewal").contains("restart_latest_at"));
    }
}

/// Parameters the fixture's stalls contradict (its workers ran with a 3 s lock and 0.5 s checks).
const CONTRADICTED: &[&str] = &["--lock-duration", "30000", "--stalled-interval", "30000"];

fn lock_duration_contradicted(report: &Value) -> &Value {
    let found: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "lock-params-contradicted" && f["metrics"]["parameter"] == "lockDuration")
        .collect();
    assert_eq!(found.len(), 1, "{report}");
    found[0]
}

fn assert_bound_is_gap_and_allowance(finding: &Value) {
    let m = &finding["metrics"];
    assert_eq!(m["evidence_kind"], "early-stall");
    assert_eq!(secs_ms(&m["activation_to_recovery_s"]), ms(&m["recovered_at"]) - ms(&m["activated_at"]));
    assert_eq!(secs_ms(&m["bound_s"]), secs_ms(&m["activation_to_recovery_s"]) + secs_ms(&m["allowance_s"]));
}

#[test]
fn an_early_stall_is_bounded_from_the_stream_entry_not_a_whole_second_line_of_it() {
    let dir = case_from_fixture(true, true);
    let report = analyze(dir.path().to_str().unwrap(), CONTRADICTED);
    let finding = lock_duration_contradicted(&report);
    assert_bound_is_gap_and_allowance(finding);
    let m = &finding["metrics"];
    // The first stall's own entry (06:08:12.786 KST), not the NestJS line of it (06:08:12).
    assert_eq!(ms(&m["recovered_at"]), stalled_entries_ms()[0], "{m}");
    let cited: Vec<&Value> = finding["evidence"].as_array().unwrap().iter().map(|e| &e["source"]["path"]).collect();
    assert!(cited.iter().all(|p| p.as_str().unwrap().ends_with("events.json")), "{cited:?}");
    // Both records from the stream: nothing to allow for, and the bound is the stall's own gap.
    assert_eq!(secs_ms(&m["allowance_s"]), 0, "{m}");
}

#[test]
fn an_early_stall_known_only_from_a_whole_second_line_is_widened_by_its_second() {
    let dir = case_from_fixture(true, false);
    let coarse = analyze(dir.path().to_str().unwrap(), CONTRADICTED);
    let coarse = lock_duration_contradicted(&coarse);
    assert_bound_is_gap_and_allowance(coarse);
    let fine_dir = case_from_fixture(false, false);
    let fine = analyze(fine_dir.path().to_str().unwrap(), CONTRADICTED);
    let fine = lock_duration_contradicted(&fine);
    assert_bound_is_gap_and_allowance(fine);
    let (c, f) = (&coarse["metrics"], &fine["metrics"]);
    // The same line, its second only, and the same activation (the stream's).
    assert_eq!(ms(&c["activated_at"]), ms(&f["activated_at"]));
    assert_eq!(ms(&c["recovered_at"]), ms(&f["recovered_at"]) - ms(&f["recovered_at"]).rem_euclid(1000));
    assert_eq!(secs_ms(&c["allowance_s"]), secs_ms(&f["allowance_s"]) + 1000, "widened by the log's second");
    let formula = coarse["arithmetic"].as_array().unwrap().iter().find(|s| s["result"] == "allowance_s").unwrap();
    assert!(formula["formula"].as_str().unwrap().contains("1 s for timestamps in whole seconds"), "{formula}");
    // Still a bound: the true gap, to the stream's entry, is within it.
    let truth = stalled_entries_ms()[0] - ms(&f["activated_at"]);
    assert!(truth <= secs_ms(&c["bound_s"]), "{c}");
}
