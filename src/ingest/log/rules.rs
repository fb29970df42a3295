//! Classifying a log message into a typed event.
//!
//! User rules (from the manifest) are tried first, in order, then the built-in rules. All rules
//! are searched for at once over whole blocks of a log (`RuleSet::candidates`): one candidate
//! regex of them all, whose literal prefilter and lazy DFA keep the per-rule regexes off the
//! noise, except the two built-in job rules, which a byte search finds (`JobWord`). A line is
//! examined once, and only the lines found are classified rule by rule with captures.
//! Fields come from the rule's named captures and from `key=value` pairs on the line (see
//! `fields::FIELD_KEYS`).

use regex::Regex;
use regex_syntax::hir::{Hir, HirKind, Look};

use crate::error::{Error, Result};
use crate::model::EventKind;

use super::fields::{CAPTURES, Classified, FIELD_KEYS};
use crate::ingest::RuleSpec;

/// How a rule decides the event kind.
#[derive(Debug, Clone, Copy)]
enum Yields {
    Kind(EventKind),
    /// The `verb` capture says which job event it is (active, completed, failed, stalled).
    JobVerb,
}

/// A built-in rule, documented in docs/inputs/log.md.
pub struct BuiltinRule {
    pub name: &'static str,
    pub pattern: &'static str,
    pub example: &'static str,
    yields: Yields,
    /// Found in a block by `JobWord` instead of the candidate regex.
    found_by_job_word: bool,
}

// Words are matched in lower case, Capitalized or UPPER case, with ASCII word boundaries
// (`(?-u:\b)`), separated by spaces or tabs: full case folding (`(?i)`) and Unicode word
// boundaries turn the regex engine's literal prefilter off, which made the scan of a gigabyte of
// log four times slower, and Unicode whitespace between words cost another quarter.
// A verb must end a word and not start a `key=value` pair (`active=3` is a metric, not an event).
pub fn builtin_rules() -> Vec<BuiltinRule> {
    vec![
        // BullMQ's own errors when a late worker tries to finish a job whose lock it lost
        // (`finishedErrors` in BullMQ's src/classes/finished-errors.ts, scripts.ts before v6). On
        // the PostgreSQL backend a job swept back to wait (or finished) gives `is not in the
        // active state` (`move_to_completed`'s `not active`, code -3) instead of `Missing lock`.
        BuiltinRule {
            name: "bullmq-lock-refused",
            pattern: r"(?-u:\b)(?:Missing lock for job (?P<job_id>[^\s.]+(?:\.[^\s.]+)*)\. (?P<detail>\S+)|Lock mismatch for job (?P<job_id2>[^\s.]+(?:\.[^\s.]+)*)\. Cmd (?P<detail2>\S+) from \S+|Job (?P<job_id3>[^\s.]+(?:\.[^\s.]+)*) is not in the active state\. (?P<detail3>\S+))",
            example: "Error: Missing lock for job 42. moveToFinished",
            yields: Yields::Kind(EventKind::LockRefused),
            found_by_job_word: false,
        },
        // Legacy Bull's wording of the same refusal (bull 4.16.5 lib/scripts.js `finishedErrors`,
        // code -2): no `.` after the id, and Bull's own command names. `Lock mismatch` is worded
        // as BullMQ's and found by the rule above.
        BuiltinRule {
            name: "bull-lock-refused",
            pattern: r"(?-u:\b)Missing lock for job (?P<job_id>\S+) (?P<detail>finished|failed|delayed|retry|updateData|updateProgress|addLog)(?:$|[\s.:,;!)\]])",
            example: "Error: Missing lock for job 1 finished",
            yields: Yields::Kind(EventKind::LockRefused),
            found_by_job_word: false,
        },
        // BullMQ ≥ 5.33: the worker's `error` event when a renewal finds the lock gone.
        BuiltinRule {
            name: "bullmq-renewal-failed",
            pattern: r"(?-u:\b)could not renew lock for job (?P<job_id>\S+)",
            example: "ERROR [BullWorker] could not renew lock for job 42",
            yields: Yields::Kind(EventKind::Error),
            found_by_job_word: false,
        },
        BuiltinRule {
            name: "job-verb",
            pattern: r"(?-u:\b)(?:job|Job|JOB)(?-u:\b)(?:[ \t]+(?P<token>[^\s=]+))?[ \t]+(?P<verb>active|completed|failed|stalled|Active|Completed|Failed|Stalled|ACTIVE|COMPLETED|FAILED|STALLED)(?:$|[\s.:,;!)\]])",
            example: "job active queue=pr-review name=pr-review-sweep id=repeat:pr-review-sweep:1791333180000",
            yields: Yields::JobVerb,
            found_by_job_word: true,
        },
        BuiltinRule {
            name: "verb-job",
            pattern: r"(?-u:\b)(?P<verb>stalled|failed|completed|Stalled|Failed|Completed|STALLED|FAILED|COMPLETED)[ \t]+(?:job|Job|JOB)(?-u:\b)(?:[ \t]+(?P<token>[^\s=]+)(?:$|[\s.:,;!)\]]))?",
            example: "stalled job repeat:pr-review-sweep:1791333180000 queue=pr-review",
            yields: Yields::JobVerb,
            found_by_job_word: true,
        },
        BuiltinRule {
            name: "process-start",
            pattern: r"(?-u:\b)(?:server|application|app|service|process|Server|Application|App|Service|Process|SERVER|APPLICATION|APP|SERVICE|PROCESS)[ \t]+(?:(?:is|Is|IS)[ \t]+)?(?:started|starting|listening|booting|booted|Started|Starting|Listening|Booting|Booted|STARTED|STARTING|LISTENING|BOOTING|BOOTED)(?-u:\b)|(?-u:\b)(?:listening|Listening|LISTENING) (?:on|On|ON)(?-u:\b)|(?-u:\b)Nest application successfully started(?-u:\b)",
            example: "server starting pid=52117 version=3.18.2",
            yields: Yields::Kind(EventKind::ProcessStart),
            found_by_job_word: false,
        },
        BuiltinRule {
            name: "error-level",
            pattern: r"(?-u:\b)(?:ERROR|FATAL)(?-u:\b)|(?-u:\b)level=(?:error|fatal)(?-u:\b)",
            example: "ERROR [ReviewClient] POST /reviews failed status=502",
            yields: Yields::Kind(EventKind::Error),
            found_by_job_word: false,
        },
    ]
}

struct Rule {
    regex: Regex,
    yields: Yields,
    /// The rule's capture groups that fill fields, by group index, in the order they are read
    /// (`CAPTURES`, then the built-ins' numbered alternatives): looked up by name once, here, not
    /// on each of the hundred thousand lines a gigabyte of log classifies.
    fields: Vec<(usize, &'static str)>,
    token: Option<usize>,
    verb: Option<usize>,
}

impl Rule {
    fn new(regex: Regex, yields: Yields) -> Rule {
        let index = |name: &str| regex.capture_names().position(|group| group == Some(name));
        let fields = CAPTURES
            .iter()
            .map(|&name| (name, name))
            .chain([("job_id2", "job_id"), ("detail2", "detail"), ("job_id3", "job_id"), ("detail3", "detail")])
            .filter_map(|(group, field)| index(group).map(|at| (at, field)))
            .collect();
        let (token, verb) = (index("token"), index("verb"));
        Rule { regex, yields, fields, token, verb }
    }
}

pub struct RuleSet {
    rules: Vec<Rule>,
    /// Every rule at once (but the two job rules, see `JobWord`), without captures and without
    /// `^`/`$` anchors (rules anchor to the message, which starts after the timestamp): matches
    /// wherever some rule could match, so a line it does not touch is noise whatever else it says.
    candidates: regex::bytes::Regex,
    /// Whether the built-in job rules are on: they have their own candidate search.
    job_word: bool,
}

/// The candidate search of the two built-in job rules, `job-verb` ("job 42 active") and
/// `verb-job` ("failed job 42"): each occurrence of the word `job`, checked for a verb after it or
/// before it. In the candidate regex, these rules cost three quarters of the scan of a gigabyte of
/// log: `job` and the verbs are common words (`job metrics: active=2 failed=0`,
/// `"action":"completed"`), and the regex engine restarted at each of them. The checks here may
/// accept more than the rules (the rules decide when the line is classified), never less: a test
/// compares them with the rules' regexes on generated lines.
struct JobWord;

impl JobWord {
    /// `job-verb`'s verbs, in the rules' three casings.
    const AFTER: [&'static [u8]; 12] = [
        b"active",
        b"completed",
        b"failed",
        b"stalled",
        b"Active",
        b"Completed",
        b"Failed",
        b"Stalled",
        b"ACTIVE",
        b"COMPLETED",
        b"FAILED",
        b"STALLED",
    ];
    /// `verb-job`'s verbs.
    const BEFORE: [&'static [u8]; 9] =
        [b"stalled", b"failed", b"completed", b"Stalled", b"Failed", b"Completed", b"STALLED", b"FAILED", b"COMPLETED"];

    /// Where, at or after `at`, the next `job` that one of the rules could match starts. A `j`
    /// is about as rare in a log as the word: `memchr2` finds them faster than a search for the
    /// three words.
    fn find_at(haystack: &[u8], at: usize) -> Option<usize> {
        memchr::memchr2_iter(b'j', b'J', &haystack[at..]).map(|offset| at + offset).find(|&start| {
            let word = &haystack[start..haystack.len().min(start + 3)];
            let end = start + 3;
            matches!(word, b"job" | b"Job" | b"JOB")
                && haystack.get(end).is_none_or(|&byte| !is_word(byte))
                && (Self::verb_after(haystack, start, end) || Self::verb_before(haystack, start))
        })
    }

    /// `job-verb` from `job`: `(?-u:\b)job(?:[ \t]+TOKEN)?[ \t]+VERB(?:$|[\s.:,;!)\]])`.
    fn verb_after(haystack: &[u8], start: usize, end: usize) -> bool {
        if start > 0 && is_word(haystack[start - 1]) {
            return false;
        }
        let Some(next) = skip_blanks(haystack, end) else {
            return false;
        };
        if Self::verb_at(haystack, next) {
            return true;
        }
        // A token (`[^\s=]+`) then blanks then the verb. A byte of a non-ASCII space counts as
        // token here: that accepts more, never less.
        let token = haystack[next..].iter().take_while(|&&byte| !is_space(byte) && byte != b'=').count();
        token > 0 && skip_blanks(haystack, next + token).is_some_and(|verb| Self::verb_at(haystack, verb))
    }

    /// One of `AFTER` at `at`, ending the text or followed by whitespace or `.:,;!)]` (any
    /// non-ASCII byte counts as the start of Unicode whitespace).
    fn verb_at(haystack: &[u8], at: usize) -> bool {
        let rest = &haystack[at..];
        Self::AFTER.iter().any(|verb| {
            rest.starts_with(verb)
                && rest
                    .get(verb.len())
                    .is_none_or(|&byte| is_space(byte) || b".:,;!)]".contains(&byte) || !byte.is_ascii())
        })
    }

    /// `verb-job` up to `job`: `(?-u:\b)VERB[ \t]+job`.
    fn verb_before(haystack: &[u8], start: usize) -> bool {
        let before = &haystack[..start];
        let blanks = before.iter().rev().take_while(|&&byte| byte == b' ' || byte == b'\t').count();
        if blanks == 0 {
            return false;
        }
        let before = &before[..before.len() - blanks];
        Self::BEFORE.iter().any(|verb| {
            before.ends_with(verb) && before.len().checked_sub(verb.len() + 1).is_none_or(|i| !is_word(before[i]))
        })
    }
}

/// An ASCII byte of the rules' `\s`: `[\t\n\v\f\r ]`. Not `u8::is_ascii_whitespace`, which
/// leaves out the vertical tab (found by fuzzing: "job 7 active\v" matched its rule and was
/// missed by this search, so the line was counted as noise).
fn is_space(byte: u8) -> bool {
    byte.is_ascii_whitespace() || byte == 0x0b
}

/// An ASCII word byte, as `(?-u:\b)` sees it.
fn is_word(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// The position after one or more spaces or tabs at `at`; `None` when there is none.
fn skip_blanks(haystack: &[u8], at: usize) -> Option<usize> {
    let blanks = haystack.get(at..)?.iter().take_while(|&&byte| byte == b' ' || byte == b'\t').count();
    (blanks > 0).then_some(at + blanks)
}

/// The search for candidate lines in one block of log: the candidate regex and the job rules'
/// search, each remembering its next hit, so that neither searches the same bytes twice.
pub struct CandidateSearch<'a> {
    rules: &'a RuleSet,
    haystack: &'a [u8],
    /// The next hit of the candidate regex and of `JobWord` found so far.
    regex_hit: Hit,
    job_hit: Hit,
}

/// What one search of `CandidateSearch` found so far.
#[derive(Clone, Copy)]
enum Hit {
    NotSearched,
    At(usize),
    NoneToTheEnd,
}

impl CandidateSearch<'_> {
    /// Where the first candidate at or after `at` starts. `at` never goes back.
    pub fn find_at(&mut self, at: usize) -> Option<usize> {
        let (rules, haystack) = (self.rules, self.haystack);
        let regex = Self::next(&mut self.regex_hit, at, || rules.candidates.find_at(haystack, at).map(|m| m.start()));
        let job =
            if rules.job_word { Self::next(&mut self.job_hit, at, || JobWord::find_at(haystack, at)) } else { None };
        match (regex, job) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// A remembered hit while it is at or after `at`, else a new search from `at`: a leftmost
    /// hit from an earlier position is still the leftmost from any position up to it.
    fn next(hit: &mut Hit, at: usize, search: impl FnOnce() -> Option<usize>) -> Option<usize> {
        match *hit {
            Hit::At(found) if found >= at => Some(found),
            Hit::NoneToTheEnd => None,
            _ => {
                let found = search();
                *hit = found.map_or(Hit::NoneToTheEnd, Hit::At);
                found
            }
        }
    }
}

/// The longest pattern a user rule may have (64 KiB). A rule names a few words of a log line; a
/// longer pattern is a mistake or a hostile manifest, and refusing it before it is parsed keeps
/// memory and time small (a 20 MB pattern took 2 GB and 7 s to be refused by the compiler).
pub const MAX_PATTERN_BYTES: usize = 64 * 1024;
/// The most memory one user rule's compiled regex (and each of its lazy DFA caches) may take
/// (16 MiB): `\w{1000}{1000}` is a short pattern that compiles to gigabytes.
pub const MAX_COMPILED_BYTES: usize = 16 << 20;

/// A pattern as messages quote it: whole when short, else its first 80 characters and its length,
/// so that an error about a huge pattern stays readable.
pub fn quote_pattern(pattern: &str) -> String {
    const SHOWN: usize = 80;
    match pattern.char_indices().nth(SHOWN) {
        None => pattern.to_string(),
        Some((end, _)) => format!("{}… ({} bytes)", &pattern[..end], pattern.len()),
    }
}

/// Refuses a pattern longer than `MAX_PATTERN_BYTES`, before anything compiles it.
pub fn check_pattern_length(pattern: &str) -> std::result::Result<(), String> {
    if pattern.len() > MAX_PATTERN_BYTES {
        return Err(format!(
            "the pattern is {} bytes, more than the {MAX_PATTERN_BYTES} bytes a rule may have (`leasetrace docs inputs/log`, user rules): match a few words of the line, not the whole line",
            pattern.len()
        ));
    }
    Ok(())
}

/// Rule sets compiled in this process, by their rules: at most `SHARED_KEPT`.
type SharedRuleSets = Vec<((Vec<(String, String)>, bool), std::sync::Arc<RuleSet>)>;

/// How many compiled rule sets `RuleSet::shared` keeps (a case's logs name a few at most).
const SHARED_KEPT: usize = 8;

impl RuleSet {
    /// `RuleSet::new`, compiled once per process for the same rules: the logs of a case mostly
    /// share them (the built-in rules alone), and compiling the candidate search of every rule at
    /// once is the costly part of reading a small log (the fuzz targets read thousands a second,
    /// docs/fuzzing.md). An error is not kept: it names its source.
    pub fn shared(user: &[RuleSpec], builtin: bool, source: &str) -> Result<std::sync::Arc<RuleSet>> {
        static SHARED: std::sync::Mutex<SharedRuleSets> = std::sync::Mutex::new(Vec::new());
        let key = (user.iter().map(|rule| (rule.event.clone(), rule.pattern.clone())).collect::<Vec<_>>(), builtin);
        let lookup =
            |kept: &SharedRuleSets| kept.iter().find(|(known, _)| *known == key).map(|(_, rules)| rules.clone());
        if let Some(rules) = lookup(&SHARED.lock().unwrap_or_else(std::sync::PoisonError::into_inner)) {
            return Ok(rules);
        }
        // Compiled without the lock held: two threads may compile the same set once each.
        let rules = std::sync::Arc::new(RuleSet::new(user, builtin, source)?);
        let mut kept = SHARED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if kept.len() >= SHARED_KEPT {
            kept.remove(0);
        }
        kept.push((key, rules.clone()));
        Ok(rules)
    }

    /// Compiles user rules (validated: known event names, known capture names) and, unless
    /// disabled, the built-in rules after them.
    pub fn new(user: &[RuleSpec], builtin: bool, source: &str) -> Result<RuleSet> {
        let mut rules = Vec::new();
        let mut shapes = Vec::new();
        for (index, spec) in user.iter().enumerate() {
            let place = format!("{source}: log rule {} ('{}')", index + 1, quote_pattern(&spec.pattern));
            check_pattern_length(&spec.pattern).map_err(|why| Error::usage(format!("{place}: {why}")))?;
            let kind = EventKind::from_name(&spec.event).filter(|&kind| kind != EventKind::WorkerSettings).ok_or_else(|| {
                if spec.event == EventKind::WorkerSettings.name() {
                    return Error::usage(format!(
                        "{place}: a rule cannot yield worker-settings: worker settings are read from any line that names BullMQ's options with their values (lockDuration=12000ms, see `leasetrace docs inputs/log`, worker settings in logs)"
                    ));
                }
                let names: Vec<&str> =
                    EventKind::ALL.iter().filter(|&&k| k != EventKind::WorkerSettings).map(|k| k.name()).collect();
                Error::usage(format!("{place}: unknown event '{}': expected one of {}", spec.event, names.join(", ")))
            })?;
            let regex = regex::RegexBuilder::new(&spec.pattern)
                .size_limit(MAX_COMPILED_BYTES)
                .dfa_size_limit(MAX_COMPILED_BYTES)
                .build()
                .map_err(|e| match e {
                    regex::Error::CompiledTooBig(limit) => Error::usage(format!(
                        "{place}: the regex compiles to more than {limit} bytes, the limit for a rule (`leasetrace docs inputs/log`, user rules): a large repetition such as {{1000}} of a class such as \\w makes it so; use a smaller count or a narrower pattern"
                    )),
                    // A syntax error quotes the pattern whole: for a long one, only its reason.
                    e if spec.pattern.len() > 80 => {
                        let text = e.to_string();
                        let reason = text.lines().find(|l| l.starts_with("error:")).unwrap_or("a syntax error");
                        Error::usage(format!("{place}: invalid regex: {reason}"))
                    }
                    e => Error::usage(format!("{place}: invalid regex: {e}")),
                })?;
            if let Some(bad) = regex.capture_names().flatten().find(|name| !CAPTURES.contains(name)) {
                return Err(Error::usage(format!(
                    "{place}: unknown capture name '{bad}': expected one of {}",
                    CAPTURES.join(", ")
                )));
            }
            let hir = regex_syntax::parse(&spec.pattern).map_err(|e| Error::usage(format!("{place}: {e}")))?;
            shapes.push(unanchored(&hir));
            rules.push(Rule::new(regex, Yields::Kind(kind)));
        }
        let mut job_word = false;
        if builtin {
            for rule in builtin_rules() {
                let regex = Regex::new(rule.pattern).expect("built-in rules are valid regexes");
                if rule.found_by_job_word {
                    job_word = true;
                } else {
                    shapes.push(unanchored(&regex_syntax::parse(rule.pattern).expect("built-in rules parse")));
                }
                rules.push(Rule::new(regex, rule.yields));
            }
        }
        // Worker settings are evidence whatever the rules say (worker_settings.rs): their keys are
        // candidates too.
        shapes.push(unanchored(
            &regex_syntax::parse(crate::ingest::log::worker_settings::CANDIDATE).expect("the settings search parses"),
        ));
        let candidates = Hir::alternation(shapes);
        let candidates = regex::bytes::RegexBuilder::new(&candidates.to_string())
            .size_limit(64 << 20)
            .build()
            .map_err(|e| Error::usage(format!("{source}: the log rules together are too large to combine: {e}")))?;
        Ok(RuleSet { rules, candidates, job_word })
    }

    /// The search of all rules at once over a block of log text: a line with no candidate is
    /// noise. A candidate match may run past the end of its line (`\s` matches a line break);
    /// the line it starts on is classified, and the search goes on from the next line.
    pub fn candidates<'a>(&'a self, block: &'a [u8]) -> CandidateSearch<'a> {
        CandidateSearch { rules: self, haystack: block, regex_hit: Hit::NotSearched, job_hit: Hit::NotSearched }
    }

    /// Whether some rule could match somewhere in `text`.
    pub fn is_candidate(&self, text: &[u8]) -> bool {
        self.candidates(text).find_at(0).is_some()
    }

    /// Classifies one message (the line after its timestamp and the blanks that follow it, so
    /// that user rules can anchor with `^`). `kind` is `None` for noise.
    pub fn classify(&self, message: &str) -> Classified {
        if !self.is_candidate(message.as_bytes()) {
            return Classified::default();
        }
        self.classify_candidate(message)
    }

    /// `classify` for a line the candidate search already found: the rules in order, with captures.
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
            Yields::JobVerb => rule.verb.and_then(|at| captures.get(at)).map(|verb| {
                match verb.as_str().to_ascii_lowercase().as_str() {
                    "active" => EventKind::JobActive,
                    "completed" => EventKind::JobCompleted,
                    "failed" => EventKind::JobFailed,
                    _ => EventKind::JobStalled,
                }
            }),
        };
        // Built-in alternatives capture the same field under a numbered name (`Rule::fields`).
        for &(at, field) in &rule.fields {
            if let Some(value) = captures.get(at) {
                found.set(field, value.as_str().to_string());
            }
        }
        for (key, value) in KeyValues::new(message) {
            if let Some((field, _)) =
                FIELD_KEYS.iter().find(|(_, keys)| keys.iter().any(|known| known.eq_ignore_ascii_case(key)))
            {
                found.set(field, unquote(value));
            }
        }
        if let Some(token) = rule.token.and_then(|at| captures.get(at)) {
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

/// The fields (`FIELD_KEYS`) that `key=value` pairs of a message give, for a line no rule matched
/// (a worker-settings line's pid and queue).
pub fn key_value_fields(message: &str) -> Classified {
    let mut found = Classified::default();
    for (key, value) in KeyValues::new(message) {
        if let Some((field, _)) =
            FIELD_KEYS.iter().find(|(_, keys)| keys.iter().any(|known| known.eq_ignore_ascii_case(key)))
        {
            found.set(field, unquote(value));
        }
    }
    found
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

/// The `key=value` pairs of a message, one after another, exactly as the regex
/// `(?:^|[\s,;(\[{])(?P<key>[A-Za-z_][A-Za-z0-9_.]*)=(?P<value>"(?:[^"\\]|\\.)*"|'[^']*'|[^\s,;)\]}]+)`
/// finds them with `captures_iter`: a pair starts the message or follows a space or one of `,;([{`;
/// a value is double-quoted (with escapes), single-quoted, or runs to the next space or `,;)]}`.
/// Written out by hand because the regex engine's search with captures cost about 1 µs on each of
/// the hundred thousand lines a gigabyte of log classifies (docs/performance.md); a test checks it
/// against that regex on generated messages.
struct KeyValues<'a> {
    text: &'a str,
    /// Where the next search starts; past the end when done.
    from: usize,
}

impl<'a> KeyValues<'a> {
    fn new(text: &'a str) -> Self {
        KeyValues { text, from: 0 }
    }

    /// The pair whose key starts at byte `at`, and where it ends.
    fn pair_at(&self, at: usize) -> Option<(&'a str, &'a str, usize)> {
        let bytes = self.text.as_bytes();
        if !bytes.get(at).is_some_and(|&b| b.is_ascii_alphabetic() || b == b'_') {
            return None;
        }
        let equals = at + bytes[at..].iter().position(|&b| !(b.is_ascii_alphanumeric() || b == b'_' || b == b'.'))?;
        if bytes[equals] != b'=' {
            return None;
        }
        let value = equals + 1;
        let end = self.quoted_end(value).or_else(|| self.bare_end(value))?;
        Some((&self.text[at..equals], &self.text[value..end], end))
    }

    /// The end of a quoted value starting at `at` (`None`: not quoted, or not closed).
    fn quoted_end(&self, at: usize) -> Option<usize> {
        let bytes = self.text.as_bytes();
        match bytes.get(at)? {
            b'"' => {
                let mut next = at + 1;
                loop {
                    // Only ASCII bytes are looked for: the bytes of other characters never equal them.
                    match *bytes.get(next)? {
                        b'"' => return Some(next + 1),
                        // An escape takes any character but a line break.
                        b'\\' if bytes.get(next + 1).is_some_and(|&b| b != b'\n') => next += 2,
                        b'\\' => return None,
                        _ => next += 1,
                    }
                }
            }
            b'\'' => memchr::memchr(b'\'', &bytes[at + 1..]).map(|close| at + 1 + close + 1),
            _ => None,
        }
    }

    /// The end of an unquoted value starting at `at`: the next space or one of `,;)]}`.
    fn bare_end(&self, at: usize) -> Option<usize> {
        let rest = &self.text[at..];
        let len =
            rest.find(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ')' | ']' | '}')).unwrap_or(rest.len());
        (len > 0).then_some(at + len)
    }
}

impl<'a> Iterator for KeyValues<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        let text = self.text;
        let mut start = self.from;
        while start <= text.len() {
            // At the very start of the message, the key may begin there; anywhere, a pair may
            // begin with a delimiter, its key right after it. The leftmost start wins.
            let found = if start == 0 { self.pair_at(0) } else { None };
            let found = found.or_else(|| {
                let delimiter = text[start..].chars().next()?;
                (delimiter.is_whitespace() || matches!(delimiter, ',' | ';' | '(' | '[' | '{'))
                    .then(|| self.pair_at(start + delimiter.len_utf8()))
                    .flatten()
            });
            if let Some((key, value, end)) = found {
                self.from = end;
                return Some((key, value));
            }
            // The next character.
            start += text[start..].chars().next().map_or(1, char::len_utf8);
        }
        self.from = start;
        None
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
    fn shared_rule_sets_are_compiled_once_per_rules_and_errors_are_not_kept() {
        let rule = |pattern: &str| RuleSpec { event: "job-stalled".into(), pattern: pattern.into() };
        let first = RuleSet::shared(&[rule(r"moved (?P<job_id>\S+) back")], true, "a.log").unwrap();
        let again = RuleSet::shared(&[rule(r"moved (?P<job_id>\S+) back")], true, "b.log").unwrap();
        assert!(std::sync::Arc::ptr_eq(&first, &again), "the same rules: one compiled set");
        let other = RuleSet::shared(&[rule(r"moved (?P<job_id>\S+) back")], false, "a.log").unwrap();
        assert!(!std::sync::Arc::ptr_eq(&first, &other), "built-in rules off: another set");
        assert_eq!(again.classify("moved 42 back").job_id.as_deref(), Some("42"));
        // Each error names the source it was asked for.
        for source in ["x.log", "y.log"] {
            let Err(error) = RuleSet::shared(&[rule("(")], true, source) else { panic!("an invalid regex compiled") };
            assert!(error.to_string().starts_with(source), "{error}");
        }
    }

    #[test]
    fn key_value_pairs_are_found_as_the_regex_finds_them() {
        let regex = Regex::new(
            r#"(?:^|[\s,;(\[{])(?P<key>[A-Za-z_][A-Za-z0-9_.]*)=(?P<value>"(?:[^"\\]|\\.)*"|'[^']*'|[^\s,;)\]}]+)"#,
        )
        .unwrap();
        let by_regex = |text: &str| -> Vec<(String, String)> {
            regex.captures_iter(text).map(|c| (c["key"].to_string(), c["value"].to_string())).collect()
        };
        let by_hand = |text: &str| -> Vec<(String, String)> {
            KeyValues::new(text).map(|(k, v)| (k.to_string(), v.to_string())).collect()
        };
        let written = [
            "job active queue=pr-review name=pr-review-sweep id=repeat:pr-review-sweep:1789833240000 pid=49132",
            "a=1,b=2;c=3 (d=4) [e=5] {f=6}",
            r#"msg="quoted, with \"escapes\" inside" err='single quoted' tail=x"#,
            r#"open="never closed and=still x='also open"#,
            "x.y_z=1 9a=2 _k=v k==v k= v =v a-b=1 url=http://h/p?q=1&r=2",
            "id=\u{a0}nbsp\u{a0}k=v\u{3000}w=é,ü=1",
            "esc=\"a\\\nb\" n=\"x\\",
            "",
            "=",
            "k=",
        ];
        for text in written {
            assert_eq!(by_hand(text), by_regex(text), "{text:?}");
        }
        // Messages made of the characters that matter, in every order a small generator gives.
        let alphabet: Vec<char> = "aZ_.9=\"'\\ \t,;()[]{}é\u{a0}\u{3000}\n-".chars().collect();
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..200_000 {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let len = (seed >> 59) as usize;
            let mut state = seed;
            let text: String = (0..len)
                .map(|_| {
                    state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                    alphabet[(state >> 33) as usize % alphabet.len()]
                })
                .collect();
            assert_eq!(by_hand(&text), by_regex(&text), "{text:?}");
        }
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
        // Legacy Bull's wording: no `.` after the id (bull 4.16.5 `finishedErrors`).
        let found = builtin().classify("Error: Missing lock for job 1 finished");
        assert_eq!(found.kind, Some(EventKind::LockRefused));
        assert_eq!((found.job_id.as_deref(), found.detail.as_deref()), (Some("1"), Some("finished")));
        let found = builtin().classify("worker error: Missing lock for job gh-7 failed.");
        assert_eq!((found.kind, found.job_id.as_deref()), (Some(EventKind::LockRefused), Some("gh-7")));
        // Other words after the id are no Bull command: not a refusal of Bull's.
        assert_eq!(builtin().classify("Missing lock for job 1 somewhere").kind, None);
        // BullMQ on PostgreSQL, the job swept back to wait before the late worker finished.
        let found = builtin().classify("ERROR worker error: Job pr-4412 is not in the active state. moveToFinished");
        assert_eq!(found.kind, Some(EventKind::LockRefused));
        assert_eq!(found.job_id.as_deref(), Some("pr-4412"));
        assert_eq!(found.detail.as_deref(), Some("moveToFinished"));
        let found = builtin().classify("ERROR [BullWorker] could not renew lock for job 42");
        assert_eq!(found.kind, Some(EventKind::Error));
        assert_eq!(found.job_id.as_deref(), Some("42"));
    }

    #[test]
    fn every_built_in_example_is_a_candidate_and_classified() {
        let rules = builtin();
        for rule in builtin_rules() {
            assert!(Regex::new(rule.pattern).unwrap().is_match(rule.example), "{}: example does not match", rule.name);
            assert!(rules.is_candidate(rule.example.as_bytes()), "{}: not a candidate", rule.name);
        }
        // No rule matches: noise before any rule's own regex runs.
        assert!(!rules.is_candidate(b"INFO GET /healthz 200 1ms"));
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
        let found = rules.candidates(block).find_at(0).unwrap();
        assert!(found > 0 && found < block.len());
        // Without rules nothing is a candidate.
        assert!(!RuleSet::new(&[], false, "x").unwrap().is_candidate(b"job 1 active"));
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
    fn the_job_word_search_finds_every_line_the_job_rules_match() {
        // Lines made of the pieces the two rules care about, in every order a small generator
        // reaches: the search may find more lines than the rules (they decide later), never fewer.
        let pieces = [
            "job",
            "Job",
            "JOB",
            "jobs",
            "job_",
            "xjob",
            "active",
            "Failed",
            "COMPLETED",
            "stalled",
            "STALLED",
            "completed",
            "activex",
            " ",
            "  ",
            "\t",
            "=",
            "42",
            "repeat:s:1",
            ".",
            ":",
            ")",
            "]",
            "(",
            "é",
            "\u{a0}",
            "\r",
            "\u{b}",
            "\u{c}",
            "_",
            "x",
            "failed",
        ];
        let rules: Vec<Regex> = builtin_rules()
            .into_iter()
            .filter(|rule| rule.found_by_job_word)
            .map(|rule| Regex::new(rule.pattern).unwrap())
            .collect();
        assert_eq!(rules.len(), 2);
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = |bound: usize| {
            // xorshift64: deterministic, no dependency.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            usize::try_from(state % bound as u64).unwrap()
        };
        let (mut matched, mut extra) = (0, 0);
        for _ in 0..200_000 {
            let line: String = (0..=next(7)).map(|_| pieces[next(pieces.len())]).collect();
            let by_rules = rules.iter().any(|rule| rule.is_match(&line));
            let by_search = JobWord::find_at(line.as_bytes(), 0).is_some();
            assert!(by_search || !by_rules, "a job rule matches {line:?} but the search missed it");
            matched += usize::from(by_rules);
            extra += usize::from(by_search && !by_rules);
        }
        // The generator reaches both rules often, and the search stays close to them.
        assert!(matched > 500, "{matched}");
        assert!(extra * 10 < matched, "{extra} extra lines for {matched}");
        // Each ASCII byte of `\s` ends a verb, the vertical tab too (fuzzing found it missed).
        for end in ["\t", "\n", "\u{b}", "\u{c}", "\r", " "] {
            let line = format!("job 7 active{end}");
            assert!(rules.iter().any(|rule| rule.is_match(&line)), "{line:?} matches a rule");
            assert_eq!(JobWord::find_at(line.as_bytes(), 0), Some(0), "{line:?}");
        }
        for decoy in ["job metrics: active=3 failed=0", "GET /api/jobs/active", "checked stalled jobs moved=0"] {
            assert_eq!(JobWord::find_at(decoy.as_bytes(), 0), None, "{decoy}");
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
        let error = RuleSet::new(&bad, true, "app.log").err().unwrap().to_string();
        assert!(error.contains("unknown event 'stall'") && !error.contains("worker-settings"), "{error}");
        // Worker settings are read from any line, not by a rule.
        let bad = vec![RuleSpec { event: "worker-settings".into(), pattern: "opts".into() }];
        let error = RuleSet::new(&bad, true, "app.log").err().unwrap().to_string();
        assert!(error.contains("a rule cannot yield worker-settings"), "{error}");
    }

    #[test]
    fn the_built_in_candidate_search_keeps_a_small_literal_prefilter() {
        // The candidate regex is found through its literal prefixes (aho-corasick's Teddy): above
        // 32 of them Teddy turns "fat" and the scan of a log costs a fifth more. The prefixes as
        // the regex engine extracts them (4 bytes each): the built-in rules' and the worker settings'.
        use regex_syntax::hir::literal::{ExtractKind, Extractor};
        let rules = builtin();
        assert!(rules.is_candidate(b"lockDuration=1") && rules.is_candidate(b"maxStalledCount=1"));
        let mut shapes: Vec<Hir> = builtin_rules()
            .iter()
            .filter(|rule| !rule.found_by_job_word)
            .map(|rule| unanchored(&regex_syntax::parse(rule.pattern).unwrap()))
            .collect();
        shapes.push(unanchored(&regex_syntax::parse(crate::ingest::log::worker_settings::CANDIDATE).unwrap()));
        let mut prefixes = Extractor::new().kind(ExtractKind::Prefix).extract(&Hir::alternation(shapes));
        prefixes.optimize_for_prefix_by_preference();
        let count = prefixes.len().expect("a finite set of prefixes");
        assert!(count <= 32, "{count} literal prefixes: {prefixes:?}");
    }

    #[test]
    fn a_huge_regex_is_refused_by_length_and_quoted_by_its_start() {
        let long = "x".repeat(MAX_PATTERN_BYTES + 1);
        let spec = RuleSpec { event: "job-stalled".into(), pattern: long.clone() };
        let Err(error) = RuleSet::new(&[spec], false, "app.log") else { panic!("a pattern over the limit compiled") };
        let text = error.to_string();
        assert!(text.len() < 500, "{text}");
        assert!(text.contains(&format!("({} bytes)", long.len())), "{text}");
        assert!(check_pattern_length(&"x".repeat(MAX_PATTERN_BYTES)).is_ok());
        assert_eq!(quote_pattern("job (\\d+)"), "job (\\d+)");
        // Characters, not bytes, are counted: a quote never splits one.
        let quoted = quote_pattern(&"é".repeat(100));
        assert!(quoted.starts_with(&"é".repeat(80)) && quoted.ends_with("… (200 bytes)"), "{quoted}");
    }

    #[test]
    fn a_regex_that_compiles_too_big_is_refused_with_the_size_limit_reason() {
        let spec = RuleSpec { event: "job-stalled".into(), pattern: r"\w{1000}{1000}".into() };
        let Err(error) = RuleSet::new(&[spec], false, "app.log") else { panic!("compiled") };
        assert!(error.to_string().contains("compiles to more than"), "{error}");
        // A long pattern with a syntax error is quoted by its start and its reason alone.
        let spec = RuleSpec { event: "job-stalled".into(), pattern: format!("({}", "y".repeat(1_000)) };
        let Err(error) = RuleSet::new(&[spec], false, "app.log") else { panic!("compiled") };
        let text = error.to_string();
        assert!(text.len() < 400 && text.contains("unclosed group"), "{text}");
    }
}
