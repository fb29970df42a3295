//! Lease-ledger findings (fencing, takeovers): fixtures under fixtures/lease-* and fixtures/near-miss/*.
//!
//! The seed's logical clock: second t is 2026-10-01T00:00:00Z + t s, leases are 10 s.

#[allow(unused_imports)]
use super::*;

const LOGICAL: &str = "fixtures/lease-logical-clock";
const LATE_ACCEPTED: &str = "fixtures/lease-late-write-accepted";
const LEASE_CODES: [&str; 3] = ["stale-completion", "stale-heartbeat", "early-takeover"];

fn analyze(case: &str) -> Value {
    let run = leasetrace(&["analyze", case, "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()
}

fn of_kind<'a>(report: &'a Value, kind: &str) -> Vec<&'a Value> {
    report["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == kind).collect()
}

/// The one finding of `kind` about `job`.
fn about<'a>(report: &'a Value, kind: &str, job: &str) -> &'a Value {
    let matching: Vec<&Value> = of_kind(report, kind).into_iter().filter(|f| f["metrics"]["job_id"] == job).collect();
    assert_eq!(matching.len(), 1, "expected one {kind} finding for {job}, got {}", matching.len());
    matching[0]
}

fn evidence_lines(finding: &Value) -> Vec<u64> {
    finding["evidence"].as_array().unwrap().iter().map(|e| e["source"]["line"].as_u64().unwrap()).collect()
}

// ---------------------------------------------------------------- the seed's table, row by row

#[test]
fn lease_logical_clock_refused_early_claim_and_takeover_with_generation_2_attempt_2() {
    let report = leasetrace(&["timeline", LOGICAL, "--format", "json"]).run().json();
    let claims: Vec<&Value> = report["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "lease-claimed" && e["job_id"] == "job-1")
        .collect();
    assert_eq!(claims.len(), 3);
    // 5 s: worker-b's claim while worker-a's lease (until 10 s) runs is refused, with no generation.
    assert_eq!(claims[1]["at"], "2026-10-01T00:00:05.000Z");
    assert_eq!(claims[1]["worker"], "worker-b");
    assert_eq!(claims[1]["accepted"], false);
    assert!(claims[1].get("generation").is_none());
    // 11 s: the takeover after expiry, as generation 2, attempt 2.
    assert_eq!(claims[2]["at"], "2026-10-01T00:00:11.000Z");
    assert_eq!(claims[2]["accepted"], true);
    assert_eq!(claims[2]["generation"], 2);
    assert_eq!(claims[2]["attempt"], 2);
    assert_eq!(claims[2]["lease_until"], "2026-10-01T00:00:21.000Z");

    let findings = analyze(LOGICAL);
    assert!(of_kind(&findings, "early-takeover").is_empty(), "a refused early claim is the fence working");
}

#[test]
fn lease_logical_clock_late_completion_is_refused_and_reported_as_info() {
    let report = analyze(LOGICAL);
    let late = about(&report, "stale-completion", "job-1");
    assert_eq!(late["severity"], "info");
    assert_eq!(late["at"], "2026-10-01T00:00:12.000Z");
    let m = &late["metrics"];
    assert_eq!(m["owner"], "worker-a");
    assert_eq!(m["generation"], 1);
    assert_eq!(m["current_generation"], 2);
    assert_eq!(m["current_owner"], "worker-b");
    assert_eq!(m["lease_until"], "2026-10-01T00:00:10.000Z");
    assert_eq!(m["written_at"], "2026-10-01T00:00:12.000Z");
    assert_eq!(m["late_by_s"], 2.0);
    assert_eq!(m["accepted"], false);
    assert_eq!(m["rejected_count"], 1);
    assert_eq!(m["stale_because"], "lease expired; generation superseded");
    // A's claim, B's takeover, A's refused write.
    assert_eq!(evidence_lines(late), [2, 4, 5]);
    assert_eq!(late["arithmetic"][0]["formula"], "written_at − lease_until");
}

#[test]
fn lease_logical_clock_b_result_stands_and_nobody_current_is_flagged() {
    let report = analyze(LOGICAL);
    let mut owners: Vec<(String, String)> = LEASE_CODES
        .iter()
        .flat_map(|code| of_kind(&report, code))
        .map(|f| (f["kind"].as_str().unwrap().to_string(), f["metrics"]["owner"].as_str().unwrap().to_string()))
        .collect();
    owners.sort();
    assert_eq!(
        owners,
        [
            ("stale-completion".to_string(), "worker-a".to_string()),
            ("stale-completion".to_string(), "worker-e".to_string()),
            ("stale-heartbeat".to_string(), "worker-a".to_string()),
        ],
        "worker-b's result at 13 s, worker-c's heartbeat and completion, worker-f's takeover are all in time"
    );
    // The store's record agrees: B's completion was the accepted one.
    let timeline = leasetrace(&["timeline", LOGICAL, "--format", "json"]).run().json();
    let accepted: Vec<&Value> = timeline["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "lease-completed" && e["job_id"] == "job-1" && e["accepted"] == true)
        .collect();
    assert_eq!(accepted.len(), 1);
    assert_eq!(accepted[0]["worker"], "worker-b");
}

#[test]
fn lease_logical_clock_old_generation_heartbeat_is_refused() {
    let report = analyze(LOGICAL);
    let findings = of_kind(&report, "stale-heartbeat");
    assert_eq!(findings.len(), 1, "worker-c's heartbeat at 27 s is the current generation's, in time");
    let heartbeat = findings[0];
    assert_eq!(heartbeat["severity"], "info");
    let m = &heartbeat["metrics"];
    assert_eq!(m["job_id"], "job-1");
    assert_eq!(m["owner"], "worker-a");
    assert_eq!(m["generation"], 1);
    assert_eq!(m["current_generation"], 2);
    assert_eq!(m["written_at"], "2026-10-01T00:00:14.000Z");
    assert_eq!(m["late_by_s"], 4.0);
    assert_eq!(m["accepted"], false);
    assert!(m.get("extended_to").is_none(), "a refused heartbeat extends nothing");
    assert_eq!(evidence_lines(heartbeat), [2, 4, 7]);
}

#[test]
fn lease_logical_clock_completion_at_the_lease_boundary_is_stale() {
    let report = analyze(LOGICAL);
    let boundary = about(&report, "stale-completion", "job-3");
    assert_eq!(boundary["severity"], "info");
    let m = &boundary["metrics"];
    assert_eq!(m["owner"], "worker-e");
    assert_eq!(m["lease_until"], "2026-10-01T00:00:50.000Z");
    assert_eq!(m["written_at"], "2026-10-01T00:00:50.000Z");
    assert_eq!(m["late_by_s"], 0.0);
    assert_eq!(m["current_generation"], 1, "nobody had taken over yet");
    assert!(m.get("current_owner").is_none());
    assert_eq!(m["stale_because"], "lease expired");
    assert!(boundary["notes"].to_string().contains("the boundary is closed"));
}

#[test]
fn lease_logical_clock_summaries_in_words() {
    let run = leasetrace(&["analyze", LOGICAL]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    for expected in [
        "INFO stale-completion at 2026-10-01 00:00:12",
        "The store refused the result worker-a sent for job job-1 with generation 1 at 00:00:12, 2 s after its lease ended at 00:00:10 and after generation 2 (worker-b) had taken the job over: the fence held (1 refused).",
        "The store refused the result worker-e sent for job job-3 with generation 1 at 00:00:50, at the very instant its lease ended (00:00:50)",
        "The store refused the lease extension worker-a sent for job job-1 with generation 1 at 00:00:14, 4 s after its lease ended",
    ] {
        assert!(run.stdout.contains(expected), "missing {expected:?} in:\n{}", run.stdout);
    }
}

#[test]
fn lease_logical_clock_check_thresholds() {
    // Every lease finding of the fenced store is info: none fails a warning threshold.
    let run = leasetrace(&["check", LOGICAL, "--fail-on", "warning", "--format", "json"]).run();
    let report = run.json();
    let lease: Vec<&Value> = LEASE_CODES.iter().flat_map(|code| of_kind(&report, code)).collect();
    assert_eq!(lease.len(), 3);
    assert!(lease.iter().all(|f| f["severity"] == "info"), "{lease:?}");
    let failing = report["findings"].as_array().unwrap().iter().filter(|f| f["severity"] != "info").count();
    assert_eq!(report["check"]["failing"], failing, "only the other findings (effects, retries) can fail it");
    assert_eq!(run.code, i32::from(failing > 0));
    // At info, the three refused stale writes alone fail the check.
    let run = leasetrace(&["check", LOGICAL, "--fail-on", "info", "--format", "json"]).run();
    assert_eq!(run.code, 1);
    assert!(run.json()["check"]["failing"].as_u64().unwrap() >= 3);
}

// ---------------------------------------------------------------- the store that did not fence

#[test]
fn lease_late_write_accepted_is_a_stale_completion_error() {
    let report = analyze(LATE_ACCEPTED);
    let late = about(&report, "stale-completion", "job-1");
    assert_eq!(late["severity"], "error");
    let m = &late["metrics"];
    assert_eq!(m["owner"], "worker-a");
    assert_eq!(m["generation"], 1);
    assert_eq!(m["current_generation"], 2);
    assert_eq!(m["current_owner"], "worker-b");
    assert_eq!(m["lease_until"], "2026-10-01T00:00:10.000Z");
    assert_eq!(m["written_at"], "2026-10-01T00:00:12.000Z");
    assert_eq!(m["late_by_s"], 2.0);
    assert_eq!(m["accepted"], true);
    assert!(m.get("rejected_count").is_none(), "an accepted write is not counted as refused");
    assert!(late["summary"].as_str().unwrap().contains("yet the store accepted it"), "{}", late["summary"]);
    let notes = late["notes"].to_string();
    assert!(notes.contains("the current owner wrote its result 1.000 s later"), "{notes}");
    assert!(notes.contains("lease_until > :store_now"), "{notes}");
    // worker-b's own completion is cited beside the stale one, and is no finding itself.
    assert_eq!(evidence_lines(late), [2, 4, 5, 6]);
    assert_eq!(of_kind(&report, "stale-completion").len(), 2, "the stale write and the boundary write");
    assert_eq!(about(&report, "stale-completion", "job-3")["severity"], "info");
    assert!(of_kind(&report, "early-takeover").is_empty());
}

#[test]
fn lease_late_write_accepted_fails_the_check_at_error() {
    let run = leasetrace(&["check", LATE_ACCEPTED, "--fail-on", "error", "--format", "json"]).run();
    assert_eq!(run.code, 1, "{}", run.stdout);
    let report = run.json();
    assert_eq!(report["check"]["passed"], false);
    let errors: Vec<&Value> =
        report["findings"].as_array().unwrap().iter().filter(|f| f["severity"] == "error").collect();
    assert!(errors.iter().any(|f| f["kind"] == "stale-completion"), "{errors:?}");
    assert_eq!(leasetrace(&["check", LATE_ACCEPTED, "--fail-on", "warning"]).run().code, 1);
}

// ---------------------------------------------------------------- near misses

#[test]
fn lease_near_misses_give_no_finding_of_their_code() {
    for code in LEASE_CODES {
        let case = format!("fixtures/near-miss/{code}");
        let report = analyze(&case);
        assert!(of_kind(&report, code).is_empty(), "{case}: {}", report["findings"]);
        // Nothing else in them is wrong either: the check passes at the lowest threshold.
        let run = leasetrace(&["check", &case, "--fail-on", "info", "--format", "json"]).run();
        assert_eq!(run.code, 0, "{case}: {}", run.stdout);
        assert_eq!(run.json()["findings"].as_array().unwrap().len(), 0, "{case}");
    }
}

#[test]
fn lease_near_misses_stage_what_they_claim() {
    let events = |case: &str| -> Vec<Value> {
        let report = leasetrace(&["timeline", case, "--format", "json"]).run().json();
        report["timeline"].as_array().unwrap().clone()
    };
    // A completion 1 ms before lease_until by the current generation.
    let completion = events("fixtures/near-miss/stale-completion");
    assert!(completion.iter().any(|e| e["kind"] == "lease-completed"
        && e["at"] == "2026-10-01T00:00:09.999Z"
        && e["generation"] == 1
        && e["accepted"] == true));
    // Heartbeats by the current generation, 1 ms before the end.
    let heartbeat = events("fixtures/near-miss/stale-heartbeat");
    assert!(heartbeat.iter().any(|e| e["kind"] == "lease-extended"
        && e["at"] == "2026-10-01T00:00:09.999Z"
        && e["lease_until"] == "2026-10-01T00:00:19.999Z"));
    // A claim granted exactly at the (heartbeat-extended) lease_until, after a refused one.
    let takeover = events("fixtures/near-miss/early-takeover");
    let claims: Vec<(&str, bool)> = takeover
        .iter()
        .filter(|e| e["kind"] == "lease-claimed" && e["job_id"] == "job-1")
        .map(|e| (e["at"].as_str().unwrap(), e["accepted"].as_bool().unwrap()))
        .collect();
    assert_eq!(
        claims,
        [("2026-10-01T00:00:00.000Z", true), ("2026-10-01T00:00:12.000Z", false), ("2026-10-01T00:00:17.000Z", true)]
    );
}

// ---------------------------------------------------------------- BullMQ: why the lock was lost

#[test]
fn incident_2026_10_07_lock_was_lost_because_the_process_died() {
    let report = analyze(INCIDENT);
    let rerun = finding(&report, "stalled-rerun");
    // pid 41877 logs nothing after 09:37:19; pid 52117 starts at 09:37:26.
    assert_eq!(rerun["metrics"]["lost_lock_cause"], "process-died");
    assert!(rerun["metrics"].get("old_worker_last_seen_at").is_none());
    let summary = rerun["summary"].as_str().unwrap();
    assert!(summary.contains("The lock was lost because the process died"), "{summary}");
    let notes = rerun["notes"].to_string();
    assert!(notes.contains("lost_lock_cause process-died: remedy: shut down gracefully"), "{notes}");
}

const LIVED_ON_LOG: &[u8] = b"\
2026-10-07 00:00:00.000 INFO  [BullWorker] job active queue=q name=sweep id=7 pid=100
2026-10-07 00:00:45.000 ERROR [BullWorker] could not renew lock for job 7 pid=100
2026-10-07 00:01:00.000 INFO  [BullWorker] job active queue=q name=sweep id=7 pid=200
2026-10-07 00:01:20.000 ERROR [BullWorker] Error: Missing lock for job 7. moveToFinished pid=100
2026-10-07 00:01:25.000 INFO  [BullWorker] job completed queue=q name=sweep id=7 pid=200
";
const LIVED_ON_MANIFEST: &str = "display_tz = \"UTC\"\n\n[[sources]]\nkind = \"log\"\npath = \"server.log\"\ntz = \"UTC\"\n\n[[sources]]\nkind = \"bullmq-params\"\npath = \"bullmq.json\"\n";

#[test]
fn a_worker_that_lived_on_without_renewing_is_told_from_a_dead_one() {
    let dir = case_with(
        &[("server.log", LIVED_ON_LOG), ("bullmq.json", br#"{"lockDuration": 30000, "stalledInterval": 30000}"#)],
        LIVED_ON_MANIFEST,
    );
    let report = analyze(dir.path().to_str().unwrap());
    let rerun = finding(&report, "stalled-rerun");
    let m = &rerun["metrics"];
    assert_eq!(m["lost_lock_cause"], "lived-on-without-renewing");
    assert_eq!(m["old_worker_last_seen_at"], "2026-10-07T00:01:20.000Z");
    assert!(m.get("restart_at").is_none());
    assert_eq!(evidence_lines(rerun), [1, 2, 3, 4], "the old worker's lock errors are cited");
    assert!(rerun["notes"].to_string().contains("move blocking or CPU-bound work off the event loop"));

    // The same two lines are BullMQ's fence refusing the late worker: info, not errors.
    let completion = finding(&report, "stale-completion");
    assert_eq!(completion["severity"], "info");
    assert_eq!(completion["metrics"]["job_id"], "7");
    assert_eq!(completion["metrics"]["owner"], "100");
    assert_eq!(completion["metrics"]["command"], "moveToFinished");
    assert_eq!(completion["metrics"]["written_at"], "2026-10-07T00:01:20.000Z");
    assert_eq!(completion["metrics"]["accepted"], false);
    assert_eq!(completion["metrics"]["rejected_count"], 1);
    let heartbeat = finding(&report, "stale-heartbeat");
    assert_eq!(heartbeat["metrics"]["command"], "extendLock");
    assert_eq!(heartbeat["metrics"]["written_at"], "2026-10-07T00:00:45.000Z");
    assert_eq!(heartbeat["severity"], "info");
}

#[test]
fn every_metric_a_lease_finding_emits_is_documented() {
    let dir = case_with(
        &[("server.log", LIVED_ON_LOG), ("bullmq.json", br#"{"lockDuration": 30000, "stalledInterval": 30000}"#)],
        LIVED_ON_MANIFEST,
    );
    let reports = [analyze(LOGICAL), analyze(LATE_ACCEPTED), analyze(dir.path().to_str().unwrap())];
    for report in &reports {
        for finding in report["findings"].as_array().unwrap() {
            let code = finding["kind"].as_str().unwrap();
            if !LEASE_CODES.contains(&code) && code != "stalled-rerun" {
                continue;
            }
            let doc =
                std::fs::read_to_string(format!("{}/docs/findings/{code}.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
            for metric in finding["metrics"].as_object().unwrap().keys() {
                assert!(doc.contains(&format!("`{metric}`")), "docs/findings/{code}.md does not document `{metric}`");
            }
        }
    }
}
