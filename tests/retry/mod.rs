//! Effect, retry and stuck-job findings: fixtures under fixtures/near-miss/* and fixtures/lease-*.
//!
//! Each finding has a positive fixture (`fixtures/<code>`) whose figures are asserted to the second,
//! and a near miss (`fixtures/near-miss/<code>`) that stays just inside its rule and must give none
//! of these findings. The seed's own scenario (`fixtures/lease-logical-clock`, written for the
//! lease findings) must give its table: one job given up, one effect twice without a key, one
//! deduplicated with a key. The incident, the clean day and the real BullMQ runs must gain nothing.

#[allow(unused_imports)]
use super::*;

const CODES: [&str; 4] = ["duplicate-effect", "retry-exhausted", "retry-storm", "stuck-running"];
const SEED_LEASES: &str = "fixtures/lease-logical-clock";

fn analyze(case: &str) -> Value {
    let run = leasetrace(&["analyze", case, "--format", "json"]).run();
    assert_eq!(run.code, 0, "{case}: {}", run.stderr);
    let report = run.json();
    for input in report["inputs"].as_array().unwrap() {
        assert_eq!(input["rejected"], 0, "{case}: every line is read: {input}");
    }
    report
}

/// The findings of `code`, by the value of their metric `key`.
fn by<'a>(report: &'a Value, code: &str, key: &str) -> BTreeMap<String, &'a Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == code)
        .map(|f| (f["metrics"][key].as_str().unwrap_or_default().to_string(), f))
        .collect()
}

/// Runs `check` and returns its exit code and how many findings failed it.
fn check(case: &str, fail_on: &str) -> (i32, u64) {
    let run = leasetrace(&["check", case, "--fail-on", fail_on, "--format", "json"]).run();
    assert_ne!(run.code, 2, "{case}: {}", run.stderr);
    (run.code, run.json()["check"]["failing"].as_u64().unwrap())
}

use std::collections::BTreeMap;

// ---------------------------------------------------------------- duplicate-effect

#[test]
fn duplicate_effect_tells_the_key_policies_apart() {
    let report = analyze("fixtures/duplicate-effect");
    assert_eq!(kinds(&report), ["duplicate-effect"; 4], "nothing else");
    let found = by(&report, "duplicate-effect", "job_id");
    let expect = [
        ("notify-501", "none", "error", 2, 0, 1, 9.7),
        ("notify-502", "new-key-per-retry", "error", 2, 2, 1, 9.3),
        ("notify-503", "same-key", "info", 1, 1, 1, 9.3),
        ("notify-504", "same-key-different-payload", "error", 1, 1, 2, 10.4),
    ];
    for (job, policy, severity, accepted, keys, hashes, gap) in expect {
        let f = found[job];
        let m = &f["metrics"];
        assert_eq!((m["key_policy"].as_str(), f["severity"].as_str()), (Some(policy), Some(severity)), "{job}");
        assert_eq!(m["deliveries"], 2, "{job}");
        assert_eq!(m["accepted_by_receiver"], accepted, "{job}");
        assert_eq!(m["distinct_keys"], keys, "{job}");
        assert_eq!(m["payload_hashes"], hashes, "{job}");
        assert_eq!(m["gap_s"], gap, "{job}");
    }
    let no_key = &found["notify-501"]["metrics"];
    assert_eq!(no_key["item"], "user-77");
    assert_eq!(no_key["first_at"], "2026-12-02T01:00:03.200Z");
    assert_eq!(no_key["second_at"], "2026-12-02T01:00:12.900Z");
    assert_eq!(no_key["workers"], "worker-a, worker-b");
    assert_eq!(found["notify-503"]["metrics"]["receiver_deduplicated"], 1);
    assert_eq!(found["notify-504"]["metrics"]["different_payload_rejected"], true);
    assert!(found["notify-504"]["summary"].as_str().unwrap().contains("the receiver refused the different payload"));
    // Each finding cites exactly its two deliveries.
    for f in found.values() {
        let kinds: Vec<&str> = f["evidence"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["effect-posted", "effect-posted"]);
    }
}

#[test]
fn duplicate_effect_check_fails_per_severity() {
    let case = "fixtures/duplicate-effect";
    assert_eq!(check(case, "error"), (1, 3), "no key, new key per retry, different payload");
    assert_eq!(check(case, "warning"), (1, 3));
    assert_eq!(check(case, "info"), (1, 4), "the deduplicated one is info");
}

#[test]
fn duplicate_effect_near_miss_is_clean() {
    let case = "fixtures/near-miss/duplicate-effect";
    let report = analyze(case);
    assert!(kinds(&report).is_empty(), "{:?}", kinds(&report));
    assert_eq!(check(case, "info"), (0, 0));
}

// ---------------------------------------------------------------- retry-exhausted

#[test]
fn retry_exhausted_lists_the_cause_of_every_attempt() {
    let report = analyze("fixtures/retry-exhausted");
    assert_eq!(kinds(&report), ["retry-exhausted"; 3], "nothing else: the backoff grows, every job ended");
    let found = by(&report, "retry-exhausted", "job_id");

    let sync = found["sync-301"];
    let m = &sync["metrics"];
    assert_eq!(sync["severity"], "error", "the last cause is transient");
    assert_eq!(m["attempts"], 3, "the refused fourth claim is not an attempt");
    assert_eq!(
        m["causes"],
        "1: ETIMEDOUT connecting to billing-api (worker-a); 2: lease expired (worker-b); 3: 503 Service Unavailable (worker-c)"
    );
    assert_eq!(m["last_cause"], "503 Service Unavailable");
    assert_eq!(m["last_cause_class"], "transient");
    assert_eq!((m["transient_causes"].as_u64(), m["lost_owner_causes"].as_u64()), (Some(2), Some(1)));
    assert_eq!(m["first_attempt_at"], "2026-12-03T02:00:00.000Z");
    assert_eq!(m["dead_at"], "2026-12-03T02:02:29.000Z");
    assert_eq!(m["dead_after_s"], 149.0);
    assert!(m.get("attempts_made").is_none(), "a lease table has no attemptsMade");

    let report12 = found["report-12"];
    assert_eq!(report12["severity"], "warning");
    assert_eq!(report12["metrics"]["last_cause_class"], "lost-owner");
    assert_eq!(report12["metrics"]["lost_owner_causes"], 3);
    assert_eq!(report12["metrics"]["dead_after_s"], 93.0);

    let bullmq = found["9001"];
    let m = &bullmq["metrics"];
    assert_eq!(bullmq["severity"], "error");
    assert_eq!((m["job_name"].as_str(), m["queue"].as_str()), (Some("deliver-webhook"), Some("webhooks")));
    assert_eq!(m["attempts"], 3);
    assert_eq!(m["attempts_made"], 3);
    assert_eq!(m["causes"], "1: ECONNRESET; 2: ECONNRESET; 3: socket hang up");
    assert_eq!(m["dead_at"], "2026-12-03T02:10:10.521Z");
    assert_eq!(m["dead_after_s"], 10.519);
}

#[test]
fn retry_exhausted_check_fails_per_severity() {
    let case = "fixtures/retry-exhausted";
    assert_eq!(check(case, "error"), (1, 2), "the two transient ones");
    assert_eq!(check(case, "warning"), (1, 3));
}

#[test]
fn retry_exhausted_near_miss_is_clean() {
    let case = "fixtures/near-miss/retry-exhausted";
    let report = analyze(case);
    assert!(kinds(&report).is_empty(), "{:?}", kinds(&report));
    assert_eq!(check(case, "info"), (0, 0));
}

#[test]
fn a_job_failed_over_the_stall_limit_is_left_to_stalled_limit_exceeded() {
    // The real BullMQ run ends with `retries-exhausted` after "job stalled more than allowable limit".
    let report = analyze(REAL_LIMIT);
    assert!(!kinds(&report).contains(&"retry-exhausted".to_string()), "{:?}", kinds(&report));
    assert_eq!(finding(&report, "stalled-limit-exceeded")["metrics"]["job_id"], "1");
}

// ---------------------------------------------------------------- retry-storm

#[test]
fn retry_storm_finds_each_pattern_with_its_figures() {
    let report = analyze("fixtures/retry-storm");
    assert_eq!(kinds(&report), ["retry-storm"; 3], "nothing else");
    let found = by(&report, "retry-storm", "pattern");
    for f in found.values() {
        assert_eq!(f["severity"], "warning");
    }

    let m = &found["no-backoff"]["metrics"];
    assert_eq!(m["job_id"], "push-71");
    assert_eq!(m["attempts"], 5);
    assert_eq!(m["retry_delays"], "2 s, 2 s, 2 s, 2 s");
    assert_eq!(m["max_delay_s"], 2.0);
    assert_eq!(m["first_attempt_at"], "2026-12-04T03:00:00.000Z");
    assert_eq!(m["last_attempt_at"], "2026-12-04T03:00:12.000Z");
    assert_eq!(m["causes"], "ECONNRESET from push gateway");

    let m = &found["herd"]["metrics"];
    assert_eq!(m["retrying_workers"], 3);
    assert_eq!(m["retries"], 3);
    assert_eq!(m["worker_names"], "worker-a, worker-b, worker-c");
    assert_eq!(m["jobs"], "push-81, push-82, push-83");
    assert_eq!(m["first_at"], "2026-12-04T03:04:59.000Z");
    assert_eq!(m["spread_s"], 0.09);

    let m = &found["invalid-input-retried"]["metrics"];
    assert_eq!(m["job_id"], "import-91");
    assert_eq!(m["cause"], "400 Bad Request: invalid payload: field 'amount' must be a number");
    assert_eq!(m["failed_at"], "2026-12-04T03:10:00.500Z");
    assert_eq!(m["retried_at"], "2026-12-04T03:10:30.000Z");
    assert_eq!(m["retries_after_invalid"], 2);
    assert_eq!(m["invalid_failures_after"], 2);
}

#[test]
fn retry_storm_check_fails_on_warning_not_on_error() {
    let case = "fixtures/retry-storm";
    assert_eq!(check(case, "warning"), (1, 3));
    assert_eq!(check(case, "error"), (0, 0));
}

#[test]
fn retry_storm_near_miss_is_clean() {
    // Backoff at exactly 1.5 ×, delays of exactly 10 s, a herd spread over 101 ms, a 400 that is a
    // timeout, a 422 not retried.
    let case = "fixtures/near-miss/retry-storm";
    let report = analyze(case);
    assert!(kinds(&report).is_empty(), "{:?}", kinds(&report));
    assert_eq!(check(case, "info"), (0, 0));
}

// ---------------------------------------------------------------- stuck-running

#[test]
fn stuck_running_carries_the_two_numbers_to_watch() {
    let report = analyze("fixtures/stuck-running");
    let stuck = finding(&report, "stuck-running");
    assert_eq!(kinds(&report), ["stuck-running"], "nothing else");
    assert_eq!(stuck["severity"], "warning");
    let m = &stuck["metrics"];
    assert_eq!(m["evidence_end_at"], "2026-12-05T04:10:00.000Z");
    assert_eq!(m["expired_leases"], 3);
    assert_eq!(m["running_jobs"], 4, "report-33's lease is still valid");
    assert_eq!(m["oldest_job"], "report-31");
    assert_eq!(m["oldest_since_at"], "2026-12-05T04:00:00.000Z");
    assert_eq!(m["oldest_age_s"], 600.0);
    assert_eq!(m["oldest_expired_at"], "2026-12-05T04:00:50.000Z", "the heartbeat's lease_until");
    assert_eq!(m["oldest_expired_for_s"], 550.0);
    assert_eq!(
        m["stuck"],
        "report-31 (lease, owner worker-a): running 10 min, lease expired 9 min 10 s before the end; \
         run-0401-a (round, owner api-1/3101): running 9 min, lock expired 7 min 25 s before the end; \
         mail-7 (queue job, owner 3101): running 8 min, lock expired 7 min 30 s before the end"
    );
    let summary = stuck["summary"].as_str().unwrap();
    assert!(summary.starts_with("3 job(s) were still marked running"), "{summary}");
    assert!(summary.contains("the oldest, report-31, has been running for 10 min"), "{summary}");

    let table = leasetrace(&["analyze", "fixtures/stuck-running"]).run();
    for expected in [
        "at the end of the evidence (13:10:00)",
        "(since 13:00:00), expired for 9 min 10 s",
        "oldest_age_s = evidence_end_at − oldest_since_at = 10 min",
        "oldest_expired_at = lease_until = 13:00:50",
        "fixtures/stuck-running/server.log:3",
    ] {
        assert!(table.stdout.contains(expected), "missing {expected:?} in:\n{}", table.stdout);
    }
}

#[test]
fn stuck_running_check_fails_on_warning_not_on_error() {
    let case = "fixtures/stuck-running";
    assert_eq!(check(case, "warning"), (1, 1));
    assert_eq!(check(case, "error"), (0, 0));
}

#[test]
fn stuck_running_near_miss_is_clean() {
    // A lease ending exactly at the last event, a lock expiring 10 s after it, a round with no
    // restart after it, a job taken over and completed.
    let case = "fixtures/near-miss/stuck-running";
    let report = analyze(case);
    assert!(kinds(&report).is_empty(), "{:?}", kinds(&report));
    assert_eq!(check(case, "info"), (0, 0));
}

// ---------------------------------------------------------------- the seed's own scenario

#[test]
fn the_seed_lease_model_gives_the_seed_table() {
    let report = analyze(SEED_LEASES);
    let dead = finding(&report, "retry-exhausted");
    let m = &dead["metrics"];
    assert_eq!(m["job_id"], "job-4");
    assert_eq!(m["attempts"], 3, "3회 시도 소진 후 재확보 → dead");
    assert_eq!(
        m["causes"],
        "1: ETIMEDOUT connecting to ledger-api (worker-a); 2: HTTP 503 from ledger-api (worker-b); 3: HTTP 503 from ledger-api (worker-a)"
    );
    assert_eq!(m["dead_at"], "2026-10-01T00:01:17.000Z");
    assert_eq!(m["dead_after_s"], 17.0);
    assert_eq!(dead["severity"], "error", "an outage used up the budget");

    let effects = by(&report, "duplicate-effect", "job_id");
    assert_eq!(effects.len(), 2);
    let without_key = effects["job-5"];
    assert_eq!(without_key["severity"], "error", "effectsWithoutKey: 2");
    assert_eq!(without_key["metrics"]["key_policy"], "none");
    assert_eq!(without_key["metrics"]["accepted_by_receiver"], 2);
    assert_eq!(without_key["metrics"]["item"], "notify:order-7");
    let with_key = effects["job-6"];
    assert_eq!(with_key["severity"], "info", "effectsWithKey: 1");
    assert_eq!(with_key["metrics"]["key_policy"], "same-key");
    assert_eq!(with_key["metrics"]["accepted_by_receiver"], 1);
    assert_eq!(with_key["metrics"]["receiver_deduplicated"], 1);

    let found = kinds(&report);
    assert!(!found.contains(&"retry-storm".to_string()), "the backoff doubles: {found:?}");
    assert!(!found.contains(&"stuck-running".to_string()), "every job ended: {found:?}");
}

// ---------------------------------------------------------------- nothing spurious

#[test]
fn the_incident_the_clean_day_and_the_real_runs_gain_none_of_these() {
    for case in [INCIDENT, CLEAN, REAL_STALLED, REAL_LIMIT] {
        let report = analyze(case);
        let found = kinds(&report);
        for code in CODES {
            assert!(!found.iter().any(|k| k == code), "{case} gained {code}: {found:?}");
        }
    }
    // On 2026-10-07 two different jobs posted a review of PR-4412: duplicate-selection's, not ours.
    let report = analyze(INCIDENT);
    assert_eq!(finding(&report, "duplicate-selection")["metrics"]["effects_posted"], 2);
}

#[test]
fn every_metric_these_findings_emit_is_documented() {
    for case in [
        "fixtures/duplicate-effect",
        "fixtures/retry-exhausted",
        "fixtures/retry-storm",
        "fixtures/stuck-running",
        SEED_LEASES,
    ] {
        let report = analyze(case);
        for f in report["findings"].as_array().unwrap() {
            let code = f["kind"].as_str().unwrap();
            if !CODES.contains(&code) {
                continue;
            }
            let doc =
                std::fs::read_to_string(format!("{}/docs/findings/{code}.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
            for metric in f["metrics"].as_object().unwrap().keys() {
                assert!(doc.contains(&format!("`{metric}`")), "docs/findings/{code}.md does not document `{metric}`");
            }
            assert!(!f["summary"].as_str().unwrap().contains('{'), "unfilled placeholder: {}", f["summary"]);
        }
    }
}

#[test]
fn reversed_ledgers_give_the_same_findings() {
    // Exports are not sorted: the findings rest on times and ids, not on the order of rows.
    let root = env!("CARGO_MANIFEST_DIR");
    for case in
        ["fixtures/duplicate-effect", "fixtures/retry-exhausted", "fixtures/retry-storm", "fixtures/stuck-running"]
    {
        let dir = tempfile::tempdir().unwrap();
        for entry in std::fs::read_dir(format!("{root}/{case}")).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_owned();
            if path.extension().is_some_and(|e| e == "csv") {
                let text = std::fs::read_to_string(&path).unwrap();
                let mut rows: Vec<&str> = text.lines().collect();
                rows[1..].reverse();
                std::fs::write(dir.path().join(name), rows.join("\n") + "\n").unwrap();
            } else {
                std::fs::copy(&path, dir.path().join(name)).unwrap();
            }
        }
        let strip = |report: &Value| -> Vec<(Value, Value, Value)> {
            report["findings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| (f["kind"].clone(), f["metrics"].clone(), f["summary"].clone()))
                .collect()
        };
        let sorted = analyze(case);
        let reversed = analyze(dir.path().to_str().unwrap());
        assert_eq!(strip(&reversed), strip(&sorted), "{case}");
    }
}
