//! What a newcomer is told when a first command goes wrong (issue 35): a file where a case folder
//! is expected and the reverse, a gzip file as a case, a path that does not exist, a misspelt
//! zone, a zone abbreviation or an offset, a clock time given to any time flag; and the
//! report's Assumptions saying each thing once. Each test asserts the exit code and the words
//! that name the fix.

use super::*;

/// The first phrase of four words that `text` says twice, if any.
fn repeated_phrase(text: &str) -> Option<String> {
    let words: Vec<&str> = text
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| ",;:()".contains(c)))
        .filter(|w| !w.is_empty())
        .collect();
    let phrases: Vec<String> = words.windows(4).map(|w| w.join(" ")).collect();
    phrases.iter().enumerate().find(|(at, phrase)| phrases[at + 1..].contains(phrase)).map(|(_, p)| p.clone())
}

#[test]
fn no_assumption_says_a_phrase_twice() {
    let mut checked = 0;
    for fixture in [INCIDENT, CLEAN, REAL_STALLED, REAL_LIMIT, REAL_REPLICA_DIED, REAL_LIMIT_LOGGED] {
        let run = leasetrace(&["analyze", fixture, "--format", "json"]).run();
        assert_eq!(run.code, 0, "{fixture}: {}", run.stderr);
        for line in run.json()["assumptions"].as_array().unwrap() {
            let line = line.as_str().unwrap();
            assert_eq!(repeated_phrase(line), None, "{fixture}: {line}");
            checked += 1;
        }
    }
    assert!(checked > 10, "{checked} assumptions");
    assert_eq!(
        repeated_phrase("BullMQ version not given: stall-limit model: BullMQ version not given: assumed"),
        Some("BullMQ version not given".into()),
        "the line of issue 35"
    );
}

/// A usage error (exit 2, nothing on stdout) whose message holds every one of `needles`.
fn refused(args: &[&str], needles: &[&str]) -> String {
    let run = leasetrace(args).run();
    assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
    assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
    for needle in needles {
        assert!(run.stderr.contains(needle), "{args:?}: no '{needle}' in {}", run.stderr);
    }
    run.stderr
}

const INCIDENT_LOG: &str = "fixtures/incident-2026-10-07/server.log";

#[test]
fn a_misspelt_zone_gets_a_did_you_mean() {
    refused(
        &["analyze", "--log", INCIDENT_LOG, "--log-tz", "Asia/Seol"],
        &["--log-tz: unknown time zone 'Asia/Seol': did you mean Asia/Seoul?"],
    );
    refused(&["analyze", INCIDENT, "--tz", "europe/berln"], &["did you mean Europe/Berlin?"]);
    refused(&["analyze", INCIDENT, "--tz", "Seoul"], &["did you mean Asia/Seoul?"]);
}

#[test]
fn a_zone_abbreviation_names_the_iana_zones_it_may_mean_and_never_picks_one() {
    refused(&["analyze", INCIDENT, "--tz", "KST"], &["'KST' is an abbreviation", "Asia/Seoul (+09:00)"]);
    refused(&["analyze", "--log", INCIDENT_LOG, "--log-tz", "JST"], &["--log-tz: 'JST'", "Asia/Tokyo"]);
    let ist = refused(
        &["analyze", INCIDENT, "--tz", "IST"],
        &["several zones", "Asia/Kolkata (+05:30)", "Europe/Dublin", "Asia/Jerusalem", "yours to say"],
    );
    assert!(!ist.contains("read as"), "{ist}");
    refused(&["analyze", INCIDENT, "--tz", "PDT"], &["America/Los_Angeles (-08:00, -07:00 in daylight saving)"]);
    refused(&["analyze", INCIDENT, "--tz", "CET"], &["Europe/Berlin (+01:00, +02:00 in daylight saving)"]);
    refused(&["analyze", INCIDENT, "--tz", "Z"], &["UTC"]);
}

#[test]
fn an_offset_is_refused_naming_the_zones_at_it_and_the_fixed_offset_zone() {
    for offset in ["+09:00", "UTC+9", "+0900"] {
        refused(
            &["analyze", "--log", INCIDENT_LOG, "--log-tz", offset],
            &["is an offset, not a zone", "daylight saving", "Asia/Seoul (+09:00)", "Asia/Tokyo", "Etc/GMT-9"],
        );
    }
    refused(
        &["analyze", INCIDENT, "--tz=-0800"],
        &["America/Los_Angeles (-08:00, -07:00 in daylight saving)", "Etc/GMT+8"],
    );
    // The fixed-offset zone the refusal names is taken.
    let run = leasetrace(&["analyze", INCIDENT, "--tz", "Etc/GMT-9", "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json()["display_tz"], "Etc/GMT-9");
}
