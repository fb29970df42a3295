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
