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

/// How a column's values are built: a job type, a separator, then the step (`sweep.begin`).
#[derive(Debug, Clone, PartialEq)]
pub struct Prefixed {
    pub separator: char,
    /// The distinct job types before the last separator, most rows first.
    pub prefixes: Vec<String>,
}

/// The separators a job type and its step are written with.
const SEPARATORS: [char; 3] = ['.', ':', '/'];

/// Whether the values of a column (each with its row count) are `<type><sep><step>`: every value
/// has the separator, every step is a word (letters, `_`, `-`: a `host/27806` is not a step) of
/// which at least two are distinct, and every type is a name (not an id with digits). One type
/// is enough (`sweep.begin`, `sweep.end`): its words are not the step's either.
pub fn prefixed(values: &[(&str, usize)]) -> Option<Prefixed> {
    SEPARATORS.into_iter().find_map(|separator| {
        let mut steps: Vec<&str> = Vec::new();
        let mut prefixes: Vec<(&str, usize)> = Vec::new();
        for &(value, rows) in values {
            let (prefix, step) = value.rsplit_once(separator)?;
            let word = |text: &str, digits: bool| {
                text.chars().next().is_some_and(char::is_alphabetic)
                    && text.chars().all(|c| c.is_alphabetic() || c == '_' || c == '-' || (digits && c.is_ascii_digit()))
            };
            if !word(step, false) || !prefix.split(separator).all(|p| word(p, true) && !id_like(p)) {
                return None;
            }
            if !steps.contains(&step) {
                steps.push(step);
            }
            match prefixes.iter_mut().find(|(p, _)| *p == prefix) {
                Some((_, n)) => *n += rows,
                None => prefixes.push((prefix, rows)),
            }
        }
        if steps.len() < 2 {
            return None;
        }
        prefixes.sort_by_key(|(_, rows)| std::cmp::Reverse(*rows));
        Some(Prefixed { separator, prefixes: prefixes.into_iter().map(|(p, _)| p.to_string()).collect() })
    })
}

/// Whether a word is an id rather than a name: a run of three digits (`27806`, `v2026`), or a
/// part that mixes letters and digits over five characters or more (`7d9f8c6b5`, `8nbbd9`).
pub fn id_like(text: &str) -> bool {
    let mut run = 0;
    for c in text.chars() {
        run = if c.is_ascii_digit() { run + 1 } else { 0 };
        if run >= 3 {
            return true;
        }
    }
    text.split(|c: char| !c.is_alphanumeric()).any(|part| {
        part.chars().count() >= 5 && part.chars().any(|c| c.is_ascii_digit()) && part.chars().any(char::is_alphabetic)
    })
}

/// The kind proposed for a value of a column, by its last segment when the column's values are
/// prefixed with a job type (`review.begin` → `begin`).
pub fn propose_in(value: &str, prefixed: Option<&Prefixed>) -> Proposal {
    let Some((prefix, step)) = prefixed.and_then(|p| value.rsplit_once(p.separator)) else {
        return propose(value);
    };
    let inner = propose(step);
    let why = match inner.kind {
        Some(_) if inner.why.starts_with("a value") => format!("its step '{step}' is a value the ledger reader knows"),
        Some(_) => format!("{} of its step ('{prefix}' before it is the job type)", inner.why),
        None => format!("{} in its step '{step}'", inner.why),
    };
    Proposal { kind: inner.kind, why }
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
    fn values_with_a_job_type_before_the_step_are_read_by_the_step() {
        let values = [
            ("review.begin", 40),
            ("review.pick", 30),
            ("review.send", 28),
            ("review.end", 38),
            ("notify.send", 20),
            ("notify.reaped", 2),
            ("sweep.begin", 12),
        ];
        let found = prefixed(&values).unwrap();
        assert_eq!(found.separator, '.');
        assert_eq!(found.prefixes, ["review", "notify", "sweep"]);
        // Read whole, 'review' and 'notify' are words of a posted effect.
        assert_eq!(kind("review.begin"), None);
        let kinds: Vec<Option<EventKind>> = values.iter().map(|(v, _)| propose_in(v, Some(&found)).kind).collect();
        assert_eq!(
            kinds,
            [
                Some(EventKind::RoundStarted),
                Some(EventKind::ItemSelected),
                Some(EventKind::EffectPosted),
                Some(EventKind::RoundFinished),
                Some(EventKind::EffectPosted),
                Some(EventKind::RoundFailed),
                Some(EventKind::RoundStarted),
            ]
        );
        assert_eq!(
            propose_in("review.begin", Some(&found)).why,
            "the word 'begin' of its step ('review' before it is the job type)"
        );
        assert_eq!(propose_in("sweep.done", Some(&found)).why, "its step 'done' is a value the ledger reader knows");
        // Other separators, and job types of several words.
        let colons = prefixed(&[("billing:invoice:Started", 3), ("billing:invoice:Finished", 3)]).unwrap();
        assert_eq!((colons.separator, colons.prefixes.as_slice()), (':', ["billing:invoice".to_string()].as_slice()));
    }

    #[test]
    fn hosts_ids_and_plain_words_are_not_prefixed_values() {
        assert_eq!(prefixed(&[("review-bot-7d9f8c6b5-8nbbd/27806", 9), ("review-bot-7d9f8c6b5-hv6gs/27805", 4)]), None);
        assert_eq!(prefixed(&[("begin", 3), ("end", 3)]), None, "no separator");
        assert_eq!(prefixed(&[("sweep.begin", 3), ("sweep.begin", 3)]), None, "one step is not a lifecycle");
        assert_eq!(prefixed(&[("pod-7d9f8c6b5.begin", 3), ("pod-7d9f8c6b5.end", 3)]), None, "an id before the step");
        assert_eq!(prefixed(&[("v2.begin", 3), ("v2.end", 3)]).map(|p| p.prefixes), Some(vec!["v2".to_string()]));
        assert!(id_like("review-bot-7d9f8c6b5-8nbbd") && id_like("27806") && id_like("gh-1001"));
        assert!(!id_like("review") && !id_like("S1") && !id_like("api-1") && !id_like("pr_picked"));
    }

    #[test]
    fn words_split_at_separators_and_humps() {
        assert_eq!(words("prPicked-2nd STEP"), ["pr", "picked", "2nd", "step"]);
        assert_eq!(words("ÉTAPE_finie"), ["étape", "finie"]);
    }
}
