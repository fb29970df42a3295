//! Classifying a log message into a typed event.
//!
//! User rules (from the manifest) are tried first, in order, then the built-in rules. All rules
//! are combined into one candidate regex (`RuleSet::candidates`), searched over whole blocks of a
//! log at once: its literal prefilter and lazy DFA keep the per-rule regexes off the noise, so a
//! line is examined once, and only the lines it finds are classified rule by rule with captures.
//! Fields come from the rule's named captures and from `key=value` pairs on the line (see
//! `FIELD_KEYS`).

use regex::Regex;
use regex_syntax::hir::{Hir, HirKind, Look};

use crate::error::{Error, Result};
use crate::model::{EventKind, Text};

use super::RuleSpec;

/// How a rule decides the event kind.
#[derive(Debug, Clone, Copy)]
enum Yields {
    Kind(EventKind),
    /// The `verb` capture says which job event it is (active, completed, failed, stalled).
    JobVerb,
}

/// A built-in rule, documented in docs/inputs.md.
pub struct BuiltinRule {
    pub name: &'static str,
    pub pattern: &'static str,
    pub example: &'static str,
    yields: Yields,
}

// Words are matched in lower case, Capitalized or UPPER case, with ASCII word boundaries
// (`(?-u:\b)`), separated by spaces or tabs: full case folding (`(?i)`) and Unicode word
// boundaries turn the regex engine's literal prefilter off, which made the scan of a gigabyte of
// log four times slower, and Unicode whitespace between words cost another quarter.
// A verb must end a word and not start a `key=value` pair (`active=3` is a metric, not an event).
pub fn builtin_rules() -> Vec<BuiltinRule> {
    vec![
        // BullMQ's own errors when a late worker tries to finish a job whose lock it lost
        // (`finishedErrors` in BullMQ's src/classes/finished-errors.ts, scripts.ts before v6).
        BuiltinRule {
            name: "bullmq-lock-refused",
            pattern: r"(?-u:\b)(?:Missing lock for job (?P<job_id>[^\s.]+(?:\.[^\s.]+)*)\. (?P<detail>\S+)|Lock mismatch for job (?P<job_id2>[^\s.]+(?:\.[^\s.]+)*)\. Cmd (?P<detail2>\S+) from \S+)",
            example: "Error: Missing lock for job 42. moveToFinished",
            yields: Yields::Kind(EventKind::LockRefused),
        },
        // BullMQ ≥ 5.33: the worker's `error` event when a renewal finds the lock gone.
        BuiltinRule {
            name: "bullmq-renewal-failed",
            pattern: r"(?-u:\b)could not renew lock for job (?P<job_id>\S+)",
            example: "ERROR [BullWorker] could not renew lock for job 42",
            yields: Yields::Kind(EventKind::Error),
        },
        BuiltinRule {
            name: "job-verb",
            pattern: r"(?-u:\b)(?:job|Job|JOB)(?-u:\b)(?:[ \t]+(?P<token>[^\s=]+))?[ \t]+(?P<verb>active|completed|failed|stalled|Active|Completed|Failed|Stalled|ACTIVE|COMPLETED|FAILED|STALLED)(?:$|[\s.:,;!)\]])",
            example: "job active queue=pr-review name=pr-review-sweep id=repeat:pr-review-sweep:1791333180000",
            yields: Yields::JobVerb,
        },
        BuiltinRule {
            name: "verb-job",
            pattern: r"(?-u:\b)(?P<verb>stalled|failed|completed|Stalled|Failed|Completed|STALLED|FAILED|COMPLETED)[ \t]+(?:job|Job|JOB)(?-u:\b)(?:[ \t]+(?P<token>[^\s=]+)(?:$|[\s.:,;!)\]]))?",
            example: "stalled job repeat:pr-review-sweep:1791333180000 queue=pr-review",
            yields: Yields::JobVerb,
        },
        BuiltinRule {
            name: "process-start",
            pattern: r"(?-u:\b)(?:server|application|app|service|process|Server|Application|App|Service|Process|SERVER|APPLICATION|APP|SERVICE|PROCESS)[ \t]+(?:(?:is|Is|IS)[ \t]+)?(?:started|starting|listening|booting|booted|Started|Starting|Listening|Booting|Booted|STARTED|STARTING|LISTENING|BOOTING|BOOTED)(?-u:\b)|(?-u:\b)(?:listening|Listening|LISTENING) (?:on|On|ON)(?-u:\b)|(?-u:\b)Nest application successfully started(?-u:\b)",
            example: "server starting pid=52117 version=3.18.2",
            yields: Yields::Kind(EventKind::ProcessStart),
        },
        BuiltinRule {
            name: "error-level",
            pattern: r"(?-u:\b)(?:ERROR|FATAL)(?-u:\b)|(?-u:\b)level=(?:error|fatal)(?-u:\b)",
            example: "ERROR [ReviewClient] POST /reviews failed status=502",
            yields: Yields::Kind(EventKind::Error),
        },
    ]
}

/// `key=value` keys (lower-cased) that fill event fields.
pub const FIELD_KEYS: &[(&str, &[&str])] = &[
    ("job_id", &["id", "jobid", "job_id", "job.id"]),
    ("job_name", &["name", "jobname", "job_name", "job.name"]),
    ("queue", &["queue", "queuename", "queue_name"]),
    ("run_id", &["run", "run_id", "runid"]),
    ("item", &["item", "pr"]),
    ("worker", &["worker", "pid", "host", "hostname", "instance"]),
    ("detail", &["reason", "failedreason", "err", "error"]),
];

/// Capture names a user rule may use.
pub const CAPTURES: &[&str] = &["job_id", "job_name", "queue", "run_id", "item", "worker", "detail"];

/// What a rule found on a line.
#[derive(Debug, Default, PartialEq)]
pub struct Classified {
    pub kind: Option<EventKind>,
    pub job_id: Option<String>,
    pub job_name: Option<String>,
    pub queue: Option<String>,
    pub run_id: Option<String>,
    pub item: Option<String>,
    pub worker: Option<String>,
    pub detail: Option<String>,
}

impl Classified {
    /// Moves the ids and detail found on a line into its event.
    pub fn fill(self, event: &mut crate::model::Event) {
        event.job_id = self.job_id.as_deref().map(Text::from);
        event.job_name = self.job_name.as_deref().map(Text::from);
        event.queue = self.queue.as_deref().map(Text::from);
        event.run_id = self.run_id.as_deref().map(Text::from);
        event.item = self.item.as_deref().map(Text::from);
        event.worker = self.worker.as_deref().map(Text::from);
        event.detail = self.detail.as_deref().map(Text::from);
    }

    fn set(&mut self, field: &str, value: String) {
        let slot = match field {
            "job_id" => &mut self.job_id,
            "job_name" => &mut self.job_name,
            "queue" => &mut self.queue,
            "run_id" => &mut self.run_id,
            "item" => &mut self.item,
            "worker" => &mut self.worker,
            "detail" => &mut self.detail,
            _ => return,
        };
        if slot.is_none() && !value.is_empty() {
            *slot = Some(value);
        }
    }
}

struct Rule {
    regex: Regex,
    yields: Yields,
}

pub struct RuleSet {
    rules: Vec<Rule>,
    /// Every rule at once, without captures and without `^`/`$` anchors (rules anchor to the
    /// message, which starts after the timestamp): matches wherever some rule could match, so a
    /// line it does not touch is noise whatever else it says.
    candidates: regex::bytes::Regex,
    pairs: Regex,
}

impl RuleSet {
    /// Compiles user rules (validated: known event names, known capture names) and, unless
    /// disabled, the built-in rules after them.
    pub fn new(user: &[RuleSpec], builtin: bool, source: &str) -> Result<RuleSet> {
        let mut rules = Vec::new();
        let mut shapes = Vec::new();
        for (index, spec) in user.iter().enumerate() {
            let place = format!("{source}: log rule {} ('{}')", index + 1, spec.pattern);
            let kind = EventKind::from_name(&spec.event).ok_or_else(|| {
                let names: Vec<&str> = EventKind::ALL.iter().map(|k| k.name()).collect();
                Error::usage(format!("{place}: unknown event '{}': expected one of {}", spec.event, names.join(", ")))
            })?;
            let regex = Regex::new(&spec.pattern).map_err(|e| Error::usage(format!("{place}: invalid regex: {e}")))?;
            if let Some(bad) = regex.capture_names().flatten().find(|name| !CAPTURES.contains(name)) {
                return Err(Error::usage(format!(
                    "{place}: unknown capture name '{bad}': expected one of {}",
                    CAPTURES.join(", ")
                )));
            }
            let hir = regex_syntax::parse(&spec.pattern).map_err(|e| Error::usage(format!("{place}: {e}")))?;
            shapes.push(unanchored(&hir));
            rules.push(Rule { regex, yields: Yields::Kind(kind) });
        }
        if builtin {
            for rule in builtin_rules() {
                let regex = Regex::new(rule.pattern).expect("built-in rules are valid regexes");
                shapes.push(unanchored(&regex_syntax::parse(rule.pattern).expect("built-in rules parse")));
                rules.push(Rule { regex, yields: rule.yields });
            }
        }
        // No rule at all (built-ins off, none given) matches nothing.
        let candidates = if shapes.is_empty() { Hir::fail() } else { Hir::alternation(shapes) };
        let candidates = regex::bytes::RegexBuilder::new(&candidates.to_string())
            .size_limit(64 << 20)
            .build()
            .map_err(|e| Error::usage(format!("{source}: the log rules together are too large to combine: {e}")))?;
        let pairs = Regex::new(
            r#"(?:^|[\s,;(\[{])(?P<key>[A-Za-z_][A-Za-z0-9_.]*)=(?P<value>"(?:[^"\\]|\\.)*"|'[^']*'|[^\s,;)\]}]+)"#,
        )
        .expect("key=value regex is valid");
        Ok(RuleSet { rules, candidates, pairs })
    }

    /// The one regex of all rules, to search whole blocks of log text: a line with no match is
    /// noise. A match may run past the end of its line (`\s` matches a line break); the line it
    /// starts on is classified, and the search goes on from the next line.
    pub fn candidates(&self) -> &regex::bytes::Regex {
        &self.candidates
    }

    /// Classifies one message (the line after its timestamp and the blanks that follow it, so
    /// that user rules can anchor with `^`). `kind` is `None` for noise.
    pub fn classify(&self, message: &str) -> Classified {
        if !self.candidates.is_match(message.as_bytes()) {
            return Classified::default();
        }
        self.classify_candidate(message)
    }

    /// `classify` for a line the candidate regex already found: the rules in order, with captures.
    pub fn classify_candidate(&self, message: &str) -> Classified {
        let message = message.trim_start();
        let mut found = Classified::default();
        // `is_match` first: it needs no capture slots and stops at the first match, so the rules
        // before the one that matches cost little.
        let Some(rule) = self.rules.iter().find(|rule| rule.regex.is_match(message)) else {
            return found;
        };
        let Some(captures) = rule.regex.captures(message) else {
            return found;
        };
        found.kind = match rule.yields {
            Yields::Kind(kind) => Some(kind),
            Yields::JobVerb => captures.name("verb").map(|verb| match verb.as_str().to_ascii_lowercase().as_str() {
                "active" => EventKind::JobActive,
                "completed" => EventKind::JobCompleted,
                "failed" => EventKind::JobFailed,
                _ => EventKind::JobStalled,
            }),
        };
        for name in CAPTURES {
            if let Some(value) = captures.name(name) {
                found.set(name, value.as_str().to_string());
            }
        }
        // Built-in alternatives capture the same field under a numbered name.
        for (alias, name) in [("job_id2", "job_id"), ("detail2", "detail")] {
            if let Some(value) = captures.name(alias) {
                found.set(name, value.as_str().to_string());
            }
        }
        for pair in self.pairs.captures_iter(message) {
            let key = pair["key"].to_ascii_lowercase();
            let value = unquote(&pair["value"]);
            if let Some((field, _)) = FIELD_KEYS.iter().find(|(_, keys)| keys.contains(&key.as_str())) {
                found.set(field, value);
            }
        }
        if let Some(token) = captures.name("token") {
            found.set("job_id", token.as_str().trim_end_matches([':', ',']).to_string());
        }
        if found.kind == Some(EventKind::JobFailed) && found.detail.is_none() {
            let after = captures.get(0).map_or("", |m| &message[m.end()..]);
            let after = after.trim_start_matches([':', ' ', '-']).trim();
            if !after.is_empty() {
                found.detail = Some(after.to_string());
            }
        }
        if found.kind == Some(EventKind::Error) && found.detail.is_none() {
            found.detail = Some(message.trim().to_string());
        }
        found
    }
}

/// The rule without captures (names would clash between rules), its start anchors dropped and its
/// end anchors made line ends: a superset of what it matches on a message, searchable over many
/// lines at once.
fn unanchored(hir: &Hir) -> Hir {
    match hir.kind() {
        // A message starts after the timestamp, so its start is nowhere in particular in a
        // block; its end is the end of its line.
        HirKind::Look(Look::Start | Look::StartLF | Look::StartCRLF) => Hir::empty(),
        HirKind::Look(Look::End | Look::EndLF | Look::EndCRLF) => Hir::look(Look::EndCRLF),
        HirKind::Capture(capture) => unanchored(&capture.sub),
        HirKind::Repetition(repetition) => Hir::repetition(regex_syntax::hir::Repetition {
            sub: Box::new(unanchored(&repetition.sub)),
            ..repetition.clone()
        }),
        HirKind::Concat(parts) => Hir::concat(parts.iter().map(unanchored).collect()),
        HirKind::Alternation(parts) => Hir::alternation(parts.iter().map(unanchored).collect()),
        HirKind::Empty | HirKind::Literal(_) | HirKind::Class(_) | HirKind::Look(_) => hir.clone(),
    }
}

fn unquote(value: &str) -> String {
    let inner = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')));
    inner.map_or_else(|| value.to_string(), |v| v.replace("\\\"", "\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builtin() -> RuleSet {
        RuleSet::new(&[], true, "server.log").unwrap()
    }

    #[test]
    fn job_lines_yield_kind_and_ids() {
        let found = builtin().classify(
            "INFO [worker] job active queue=pr-review name=pr-review-sweep id=repeat:pr-review-sweep:1791333180000 pid=41877",
        );
        assert_eq!(found.kind, Some(EventKind::JobActive));
        assert_eq!(found.job_id.as_deref(), Some("repeat:pr-review-sweep:1791333180000"));
        assert_eq!(found.queue.as_deref(), Some("pr-review"));
        assert_eq!(found.job_name.as_deref(), Some("pr-review-sweep"));
        assert_eq!(found.worker.as_deref(), Some("41877"));

        let found = builtin().classify("WARN Job 42 failed: connect ECONNREFUSED");
        assert_eq!(found.kind, Some(EventKind::JobFailed));
        assert_eq!(found.job_id.as_deref(), Some("42"));
        assert_eq!(found.detail.as_deref(), Some("connect ECONNREFUSED"));

        let found = builtin().classify("WARN stalled job 42 queue=pr-review");
        assert_eq!(found.kind, Some(EventKind::JobStalled));
        assert_eq!(found.job_id.as_deref(), Some("42"));
    }

    #[test]
    fn bullmq_lock_errors_are_recognised_with_their_job() {
        let found =
            builtin().classify("ERROR [BullWorker] Error: Missing lock for job repeat:s:1791333180000. moveToFinished");
        assert_eq!(found.kind, Some(EventKind::LockRefused));
        assert_eq!(found.job_id.as_deref(), Some("repeat:s:1791333180000"));
        assert_eq!(found.detail.as_deref(), Some("moveToFinished"));
        let found = builtin().classify("WARN Lock mismatch for job 42. Cmd moveToFinished from active");
        assert_eq!(found.kind, Some(EventKind::LockRefused));
        assert_eq!(found.job_id.as_deref(), Some("42"));
        let found = builtin().classify("ERROR [BullWorker] could not renew lock for job 42");
        assert_eq!(found.kind, Some(EventKind::Error));
        assert_eq!(found.job_id.as_deref(), Some("42"));
    }

    #[test]
    fn every_built_in_example_is_a_candidate_and_classified() {
        let rules = builtin();
        for rule in builtin_rules() {
            assert!(Regex::new(rule.pattern).unwrap().is_match(rule.example), "{}: example does not match", rule.name);
            assert!(rules.candidates().is_match(rule.example.as_bytes()), "{}: not a candidate", rule.name);
        }
        // No rule matches: noise before any rule's own regex runs.
        assert!(!rules.candidates().is_match(b"INFO GET /healthz 200 1ms"));
        assert_eq!(rules.classify("INFO GET /healthz 200 1ms").kind, None);
        // The three casings are words; a mixed one is not.
        assert_eq!(rules.classify("WARN JOB 42 FAILED").kind, Some(EventKind::JobFailed));
        assert_eq!(rules.classify("WARN Job 42 Failed").kind, Some(EventKind::JobFailed));
        assert_eq!(rules.classify("WARN jOb 42 fAiLeD").kind, None);
        // Words are separated by spaces or tabs.
        assert_eq!(rules.classify("WARN job\t42\tfailed").kind, Some(EventKind::JobFailed));
        assert_eq!(rules.classify("WARN job\u{a0}42\u{a0}failed").kind, None);
    }

    #[test]
    fn anchored_user_rules_are_found_in_a_block_of_lines() {
        // `^` anchors to the message; in a block of whole lines the candidate regex still finds it.
        let user = vec![RuleSpec { event: "job-active".into(), pattern: r"^took (?P<job_id>\d+)$".into() }];
        let rules = RuleSet::new(&user, true, "x").unwrap();
        assert_eq!(rules.classify("took 42").kind, Some(EventKind::JobActive));
        assert_eq!(rules.classify("took 42").job_id.as_deref(), Some("42"));
        let block = b"2026-10-07 09:33:00 took 41 ms\n2026-10-07 09:33:01 took 42\n";
        let found = rules.candidates().find(block).unwrap();
        assert!(found.start() > 0 && found.start() < block.len());
        // Without rules nothing is a candidate.
        assert!(!RuleSet::new(&[], false, "x").unwrap().candidates().is_match(b"job 1 active"));
    }

    #[test]
    fn decoys_stay_noise() {
        for line in [
            "INFO GET /api/jobs/active 200 3ms",
            "DEBUG job metrics: active=3 failed=0 completed=12",
            "WARN [ReviewClient] request failed status=429 retry_in=2s",
            "INFO sweep picked candidates active=4",
        ] {
            assert_eq!(builtin().classify(line).kind, None, "{line}");
        }
    }

    #[test]
    fn process_start_and_errors() {
        assert_eq!(builtin().classify("INFO [main] server starting pid=52117").kind, Some(EventKind::ProcessStart));
        assert_eq!(builtin().classify("ERROR [ReviewClient] POST failed status=502").kind, Some(EventKind::Error));
    }

    #[test]
    fn user_rules_come_first_and_are_validated() {
        let user = vec![RuleSpec {
            event: "job-stalled".into(),
            pattern: r"Recovered (?P<job_id>\S+) from (?P<queue>\S+)".into(),
        }];
        let rules = RuleSet::new(&user, true, "app.log").unwrap();
        let found = rules.classify("WARN Recovered 42 from pr-review");
        assert_eq!(found.kind, Some(EventKind::JobStalled));
        assert_eq!(found.queue.as_deref(), Some("pr-review"));

        let bad = vec![RuleSpec { event: "job-stalled".into(), pattern: r"(?P<jobid>\S+)".into() }];
        let error = RuleSet::new(&bad, true, "app.log").err().unwrap().to_string();
        assert!(error.contains("unknown capture name 'jobid'"), "{error}");
        let bad = vec![RuleSpec { event: "stall".into(), pattern: "x".into() }];
        assert!(RuleSet::new(&bad, true, "app.log").err().unwrap().to_string().contains("unknown event 'stall'"));
    }
}
