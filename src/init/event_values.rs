//! Proposing the ledger event kind of an event-column value from its words.
//!
//! A ledger's event column holds the app's own words (`begin`, `pr_picked`, `review_created`,
//! `Finished`). A value the ledger reader already knows is kept as it is; any other is split into
//! words, each reduced to a stem (`picked` → `pick`), and matched to the kinds below. A value
//! whose words point at one kind gets it; one whose words point at two (`post_failed`: a post,
//! or a failure?) or at none gets no proposal, and the user decides.

use std::collections::BTreeMap;

use crate::ingest::ledger;
use crate::model::EventKind;

/// Stems that suggest each ledger event kind.
const WORDS: &[(EventKind, &[&str])] = &[
    (EventKind::RoundStarted, &["start", "begin", "beginn", "began", "begun", "kickoff", "launch"]),
    (EventKind::ItemSelected, &["select", "pick", "choos", "chose", "chosen", "found"]),
    (
        EventKind::EffectPosted,
        &[
            "post", "review", "comment", "publish", "send", "sent", "deliver", "effect", "notify", "notifi", "emit",
            "emitt", "submit", "submitt", "reply", "repli",
        ],
    ),
    (EventKind::RoundFinished, &["done", "finish", "complet", "end", "success", "succeed", "ok", "clos"]),
    (
        EventKind::RoundFailed,
        &[
            "fail",
            "failur",
            "error",
            "err",
            "abort",
            "crash",
            "exception",
            "timeout",
            "kill",
            "panic",
            "cancel",
            "cancell",
            "reap",
            "abandon",
        ],
    ),
    (EventKind::LeaseClaimed, &["claim", "acquir", "lock", "grab"]),
    (EventKind::LeaseExtended, &["heartbeat", "beat", "extend", "renew", "keepaliv", "refresh"]),
    (EventKind::LeaseCompleted, &["commit"]),
    (EventKind::JobDead, &["dead", "quarantin", "dlq", "poison", "exhaust", "giveup", "buri", "bury"]),
];

#[derive(Debug, PartialEq)]
pub struct Proposal {
    pub kind: Option<EventKind>,
    /// Why, for the comment beside the value.
    pub why: String,
}

pub fn propose(value: &str) -> Proposal {
    if let Some(kind) = ledger::event_kind(value, &BTreeMap::new()) {
        return Proposal { kind: Some(kind), why: "a value the ledger reader knows".into() };
    }
    let mut hits: Vec<(EventKind, String)> = Vec::new();
    for word in words(value) {
        let stem = stem(&word);
        for (kind, stems) in WORDS {
            if stems.iter().any(|s| stem == *s || word == *s) && !hits.iter().any(|(k, _)| k == kind) {
                hits.push((*kind, word.clone()));
            }
        }
    }
    match hits.as_slice() {
        [] => Proposal { kind: None, why: "no proposal: no word of a known event".into() },
        [(kind, word)] => Proposal { kind: Some(*kind), why: format!("the word '{word}'") },
        many => {
            let said: Vec<String> = many.iter().map(|(kind, word)| format!("'{word}' {}", kind.name())).collect();
            Proposal { kind: None, why: format!("no proposal: the words suggest {}", said.join(" and ")) }
        }
    }
}

/// Lower-case words: split at non-alphanumerics and at camelCase humps (`prPicked` → pr, picked).
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in text.chars() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// A rough English stem: `picked` → `pick`, `selecting` → `select`, `posts` → `post`, `done` stays.
fn stem(word: &str) -> &str {
    for suffix in ["ing", "ed", "es", "s", "e", "d"] {
        if let Some(stem) = word.strip_suffix(suffix)
            && stem.chars().count() >= 3
        {
            return stem;
        }
    }
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(value: &str) -> Option<EventKind> {
        propose(value).kind
    }

    #[test]
    fn known_values_keep_the_readers_meaning() {
        assert_eq!(
            propose("round_started"),
            Proposal { kind: Some(EventKind::RoundStarted), why: "a value the ledger reader knows".into() }
        );
        assert_eq!(kind("complete"), Some(EventKind::LeaseCompleted), "the reader's meaning wins over 'complet'");
    }

    #[test]
    fn the_apps_own_words_get_a_kind() {
        assert_eq!(kind("begin"), Some(EventKind::RoundStarted));
        assert_eq!(kind("sweep.began"), Some(EventKind::RoundStarted));
        assert_eq!(kind("prPicked"), Some(EventKind::ItemSelected));
        assert_eq!(kind("REVIEW_CREATED"), Some(EventKind::EffectPosted));
        assert_eq!(kind("run ended"), Some(EventKind::RoundFinished));
        assert_eq!(kind("crashed"), Some(EventKind::RoundFailed));
        assert_eq!(kind("reaped"), Some(EventKind::RoundFailed), "marked failed by a reaper");
        assert_eq!(kind("lease_renewed"), Some(EventKind::LeaseExtended));
        assert_eq!(propose("begin").why, "the word 'begin'");
    }

    #[test]
    fn mixed_or_unknown_words_get_no_proposal() {
        let mixed = propose("post_failed");
        assert_eq!(mixed.kind, None);
        assert_eq!(mixed.why, "no proposal: the words suggest 'post' effect-posted and 'failed' round-failed");
        assert_eq!(propose("S7").why, "no proposal: no word of a known event");
        assert_eq!(kind("running"), None);
    }

    #[test]
    fn words_split_at_separators_and_humps() {
        assert_eq!(words("prPicked-2nd STEP"), ["pr", "picked", "2nd", "step"]);
        assert_eq!(words("ÉTAPE_finie"), ["étape", "finie"]);
    }
}
