//! How findings cause one another: the links detectors state, the chains the report arranges, and
//! the headline every human format opens with (docs/json.md, "chain"; each finding's doc, section
//! "Follows from").

#[allow(unused_imports)]
use super::*;

fn analyze_json(case: &str) -> Value {
    let run = leasetrace(&["analyze", case, "--format", "json"]).run();
    assert_eq!(run.code, 0, "{case}: {}", run.stderr);
    run.json()
}

/// The finding with `id`.
fn by_id(report: &Value, id: &Value) -> Value {
    report["findings"].as_array().unwrap().iter().find(|f| &f["id"] == id).cloned().unwrap_or_else(|| {
        panic!("no finding with id {id}");
    })
}

/// The codes along a chain's path, from its effect back to its first cause.
fn path_codes(report: &Value, chain: &Value) -> Vec<String> {
    chain["path"].as_array().unwrap().iter().map(|id| by_id(report, id)["kind"].as_str().unwrap().to_string()).collect()
}

fn id_of(id: &Value) -> usize {
    usize::try_from(id.as_u64().unwrap()).unwrap()
}

fn also_codes(report: &Value, chain: &Value) -> Vec<String> {
    chain["also"].as_array().unwrap().iter().map(|id| by_id(report, id)["kind"].as_str().unwrap().to_string()).collect()
}

#[test]
fn incident_2026_10_07_is_one_chain_from_the_duplicate_back_to_the_restart() {
    let report = analyze_json(INCIDENT);
    let chains = report["chains"].as_array().unwrap();
    let first = &chains[0];
    assert_eq!(first["severity"], "error");
    assert_eq!(path_codes(&report, first), ["duplicate-selection", "sweep-overlap", "stalled-rerun"]);
    assert_eq!(also_codes(&report, first), ["unlogged-stall"]);
    let root = first["root_cause"].as_str().unwrap();
    assert!(
        root.starts_with("its process restarted at 09:37:26, 4 min 26 s after the job's activation at 09:33:00 and before its first lock renewal (09:37:54.50–09:42:49), so the lock expired at 09:52:38"),
        "{root}"
    );
    // The key numbers are in the lines the headline shows.
    let rerun = finding(&report, "stalled-rerun");
    assert!(
        rerun["headline"]
            .as_str()
            .unwrap()
            .ends_with("re-run from the start at 09:53:00, 15 min 34 s after its process restarted"),
        "{rerun}"
    );
    let duplicate = finding(&report, "duplicate-selection");
    assert!(
        duplicate["headline"]
            .as_str()
            .unwrap()
            .contains("at 09:54:05.70 and again by round run-0954-a at 09:54:06.36, 0.66 s apart")
    );
    // Each link, by id.
    let overlap = finding(&report, "sweep-overlap");
    assert_eq!(duplicate["caused_by"], serde_json::json!([overlap["id"]]));
    assert_eq!(overlap["caused_by"], serde_json::json!([rerun["id"]]));
    assert_eq!(finding(&report, "unlogged-stall")["caused_by"], serde_json::json!([rerun["id"]]));
    assert_eq!(rerun["caused_by"], serde_json::json!([]));
    // The unlinked info finding is a chain of its own, after the incident.
    assert_eq!(path_codes(&report, &chains[1]), ["lock-headroom"]);
    assert_eq!(chains.len(), 2);
}

#[test]
fn findings_are_ordered_by_chain_with_causes_before_effects() {
    let report = analyze_json(INCIDENT);
    assert_eq!(
        kinds(&report),
        ["stalled-rerun", "unlogged-stall", "sweep-overlap", "duplicate-selection", "lock-headroom"]
    );
    for (position, finding) in report["findings"].as_array().unwrap().iter().enumerate() {
        assert_eq!(finding["id"], position + 1, "ids are positions");
    }
}

#[test]
fn the_table_says_what_happened_before_the_inputs_and_the_findings() {
    let table = leasetrace(&["analyze", INCIDENT]).run().stdout;
    let headline = table.find("What happened").expect("a headline");
    assert!(headline < table.find("│ input").unwrap(), "before the inputs table");
    assert!(headline < table.find("Findings:").unwrap());
    // The warnings that qualify the numbers still come first.
    assert!(table.find("WARNING: lockRenewTime").unwrap() < headline, "{table}");
    let lines: Vec<&str> = table[headline..].lines().take(7).collect();
    assert!(lines[1].starts_with("  ERROR [4] duplicate-selection: PR-4412 was selected"), "{lines:#?}");
    assert!(lines[2].starts_with("    ← caused by WARNING [3] sweep-overlap: "), "{lines:#?}");
    assert!(
        lines[3].starts_with("      ← caused by WARNING [1] stalled-rerun: ") && lines[3].contains("15 min 34 s"),
        "{lines:#?}"
    );
    assert!(lines[4].starts_with("        ← because its process restarted at 09:37:26"), "{lines:#?}");
    assert!(lines[5].starts_with("    also WARNING [2] unlogged-stall: "), "{lines:#?}");
    assert_eq!(lines[6], "  1 info finding: lock-headroom [5]");
    // The numbers in the headline are the findings' numbers below.
    assert!(table.contains("[4] ERROR duplicate-selection at 2026-10-07 09:54:06.36"));
    assert!(table.contains("[1] WARNING stalled-rerun at 2026-10-07 09:53:00"));
    assert!(table.contains("    follows from: [3] sweep-overlap\n"));
}

#[test]
fn a_real_bullmq_stall_gives_the_same_chain() {
    let report = analyze_json(REAL_STALLED);
    let first = &report["chains"][0];
    assert_eq!(path_codes(&report, first), ["duplicate-selection", "sweep-overlap", "stalled-rerun"]);
    assert!(first["root_cause"].as_str().unwrap().contains("before its first lock renewal"), "{first}");
}

#[test]
fn a_replaced_round_follows_from_the_rerun_whose_cause_is_not_known() {
    let report = analyze_json(REAL_REPLICA_DIED);
    let first = &report["chains"][0];
    assert_eq!(path_codes(&report, first), ["orphaned-round", "stalled-rerun"]);
    assert_eq!(also_codes(&report, first), ["unlogged-stall"], "the stall entry came before the rerun: still linked");
    assert!(first["root_cause"].as_str().unwrap().starts_with("why the lock was lost is not in the evidence"));
}

#[test]
fn a_stall_limit_failure_follows_from_the_stalls_it_counted() {
    let report = analyze_json(REAL_LIMIT);
    let limit = finding(&report, "stalled-limit-exceeded");
    let reruns: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "stalled-rerun")
        .map(|f| &f["id"])
        .collect();
    assert_eq!(reruns.len(), 2);
    let causes: Vec<&Value> = limit["caused_by"].as_array().unwrap().iter().collect();
    assert_eq!(causes, reruns);
    assert_eq!(report["chains"][0]["severity"], "error");
}

#[test]
fn a_mild_effect_of_a_severe_cause_is_a_severe_chain() {
    let report = analyze_json("fixtures/early-takeover");
    let first = &report["chains"][0];
    assert_eq!(first["severity"], "error", "the early takeover is an error even though the fence held");
    assert_eq!(path_codes(&report, first), ["stale-completion", "early-takeover"]);
}

#[test]
fn rounds_the_ledger_does_not_name_for_the_rerun_are_not_linked_by_time() {
    // The log read as UTC: the rerun lands 9 h away from the rounds it started, so the ledger
    // cannot name its rerun round, and the overlap must not be pinned on it.
    let report = analyze_json("fixtures/clock-offset-suspected");
    let overlap = finding(&report, "sweep-overlap");
    assert_eq!(overlap["caused_by"], serde_json::json!([]), "{overlap}");
    assert_eq!(finding(&report, "duplicate-selection")["caused_by"], serde_json::json!([overlap["id"]]));
}

#[test]
fn every_finding_is_in_exactly_one_chain_and_links_name_real_findings() {
    let root = env!("CARGO_MANIFEST_DIR");
    for entry in std::fs::read_dir(format!("{root}/fixtures")).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.join("leasetrace.toml").exists() {
            continue;
        }
        let report = analyze_json(dir.to_str().unwrap());
        let count = report["findings"].as_array().unwrap().len();
        let mut seen = vec![0; count];
        for chain in report["chains"].as_array().unwrap() {
            for id in chain["path"].as_array().unwrap().iter().chain(chain["also"].as_array().unwrap()) {
                seen[id_of(id) - 1] += 1;
            }
        }
        assert!(seen.iter().all(|&n| n == 1), "{}: {seen:?}", dir.display());
        for finding in report["findings"].as_array().unwrap() {
            for cause in finding["caused_by"].as_array().unwrap() {
                let (cause, own) = (id_of(cause), id_of(&finding["id"]));
                assert!((1..=count).contains(&cause) && cause != own);
                // A cause is told before its effect.
                assert!(cause < own, "{}: {finding}", dir.display());
            }
        }
    }
}

#[test]
fn a_timeline_has_no_chains() {
    let report = leasetrace(&["timeline", INCIDENT, "--format", "json"]).run().json();
    assert_eq!(report["chains"], serde_json::json!([]));
}

#[test]
fn a_clean_case_says_at_the_top_that_nothing_happened() {
    let table = leasetrace(&["analyze", CLEAN]).run().stdout;
    let said = table.find("What happened: no finding (nothing in the inputs matches a known pattern)").expect("said");
    assert!(said < table.find("│ input").unwrap(), "{table}");
}
