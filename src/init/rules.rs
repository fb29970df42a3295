//! Proposing log rules for the lines an app writes in its own words when a job becomes active,
//! stalls or fails.
//!
//! BullMQ's events stream (or a job hash, or a ledger's round-started row) says when each job
//! became active, stalled or failed. A log line that names the same job at the same moment (its
//! time placed with the measured zone) records that event in the app's words. Those lines are
//! turned into one pattern: the words before the job id kept (a word with digits becomes `\S+`),
//! the id captured as `job_id`, a few words after it kept. The template that covers the most
//! moments wins. If the built-in rules already read those lines as the event, no rule is needed;
//! otherwise the rule is checked on every sampled line: it is proposed as decided only when every
//! line it matches is one of those moments and no line of another event.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};

use crate::ingest::RuleSpec;
use crate::ingest::log::rules::RuleSet;
use crate::model::EventKind;

use super::What;
use super::ids::line_ids;
use super::logs::LogLine;
use super::zone::Reference;

/// How close a log line must be to the moment it records: BullMQ's listeners write within
/// milliseconds of the stream entry; a log of whole seconds adds up to one second; a ledger row
/// is written by the app some seconds after the activation it records.
const STREAM_TOLERANCE_MS: i64 = 1500;
const LEDGER_TOLERANCE_MS: i64 = 5000;

/// Which reference channel the moments come from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Channel {
    Stream,
    JobHash,
    Ledger,
}

#[derive(Debug)]
pub enum Outcome {
    /// The built-in rules already read these lines as the event.
    Builtin { lines: usize },
    /// A rule to add.
    Rule { pattern: String, decided: bool, also: usize, conflicts: usize, enough: bool },
    /// No line records these moments.
    NoLine,
}

#[derive(Debug)]
pub struct Proposal {
    pub event: EventKind,
    pub what: &'static str,
    pub channel: Channel,
    /// Moments of this event (with a job id) in the reference.
    pub moments: usize,
    /// Moments a line of the proposed rule records.
    pub covered: usize,
    /// Moments the built-in rules read a line of already.
    pub builtin: usize,
    /// A line that decided it, with the reference it matched: (log line, message, ref file, ref line).
    pub example: Option<(u64, String, usize, u64)>,
    pub outcome: Outcome,
}

const KINDS: &[(What, EventKind, &str)] = &[
    (What::Active, EventKind::JobActive, "active"),
    (What::Stalled, EventKind::JobStalled, "stalled"),
    (What::Failed, EventKind::JobFailed, "failed"),
];

/// `references` are taken channel by channel: the stream's if it has moments of the event, else
/// the job hashes', else the ledger's. `utc` places each line on the timeline, in the order of `lines` (`None`: unknown).
pub fn propose(
    lines: &[LogLine],
    utc: &[Option<DateTime<Utc>>],
    references: &[(Channel, Reference)],
    whole_seconds: bool,
) -> Vec<Proposal> {
    let known: HashSet<&str> = references.iter().map(|(_, r)| r.id.as_str()).collect();
    let placed: Vec<(Option<DateTime<Utc>>, Vec<String>)> =
        lines.iter().zip(utc).map(|(line, at)| (*at, line_ids(line, &known))).collect();
    // Lines and references by the ids they name: each moment is compared with its job's lines only.
    let mut lines_of: HashMap<&str, Vec<usize>> = HashMap::new();
    for (l, (_, ids)) in placed.iter().enumerate() {
        for id in ids {
            lines_of.entry(id.as_str()).or_default().push(l);
        }
    }
    let mut references_of: HashMap<&str, Vec<&Reference>> = HashMap::new();
    for (_, reference) in references {
        references_of.entry(reference.id.as_str()).or_default().push(reference);
    }
    let builtin = RuleSet::new(&[], true, "init").ok();
    // Per event: the channel its moments come from, and every (moment, line, template) in reach.
    let mut kinds: Vec<Kind> = Vec::new();
    for &(what, event, name) in KINDS {
        let Some(channel) = [Channel::Stream, Channel::JobHash, Channel::Ledger]
            .into_iter()
            .find(|c| references.iter().any(|(ch, r)| ch == c && r.what == what))
        else {
            continue;
        };
        let moments: Vec<&Reference> =
            references.iter().filter(|(ch, r)| *ch == channel && r.what == what).map(|(_, r)| r).collect();
        let tolerance = match channel {
            Channel::Ledger => LEDGER_TOLERANCE_MS,
            _ => STREAM_TOLERANCE_MS,
        } + if whole_seconds { 1000 } else { 0 };
        let mut hits: Vec<(usize, usize, String, i64)> = Vec::new();
        let mut read: Vec<(usize, usize)> = Vec::new();
        for (m, moment) in moments.iter().enumerate() {
            let near: Vec<(usize, i64)> = lines_of
                .get(moment.id.as_str())
                .into_iter()
                .flatten()
                .filter_map(|&l| placed[l].0.map(|at| (l, (at - moment.at).num_milliseconds().abs())))
                .filter(|(_, apart)| *apart <= tolerance)
                .collect();
            let classified = |l: usize| {
                let found = builtin.as_ref().map(|rules| lines[l].classify(rules)).unwrap_or_default();
                let id = found.job_id.or_else(|| lines[l].fields.job_id.clone());
                (found.kind, id)
            };
            // A moment the built-in rules read a line of already needs no rule.
            if let Some(&(l, _)) = near.iter().find(|(l, _)| {
                let (kind, id) = classified(*l);
                kind == Some(event) && id.as_deref() == Some(moment.id.as_str())
            }) {
                read.push((m, l));
                continue;
            }
            for (l, apart) in near {
                // A line the built-in rules read as another event records that one: a job's other
                // step, or a lock error ('could not renew lock for job X' comes as the job is
                // taken again elsewhere, at the moment of its next activation).
                if classified(l).0.is_some_and(|kind| kind != event) {
                    continue;
                }
                if let Some(template) = template(&lines[l], &moment.id) {
                    hits.push((m, l, template, apart));
                }
            }
        }
        kinds.push(Kind { what, event, name, channel, moments, tolerance, hits, read });
    }
    let mut out = Vec::new();
    for kind in &kinds {
        let Kind { what, event, name, channel, ref moments, tolerance, ref hits, ref read } = *kind;
        let mut proposal = Proposal {
            event,
            what: name,
            channel,
            moments: moments.len(),
            covered: 0,
            builtin: read.len(),
            example: None,
            outcome: Outcome::NoLine,
        };
        let example = |m: usize, l: usize| (lines[l].line, lines[l].shown(), moments[m].file, moments[m].line);
        if let Some(&(m, l)) = read.first() {
            proposal.example = Some(example(m, l));
            let mut distinct: Vec<usize> = read.iter().map(|(_, l)| *l).collect();
            distinct.sort_unstable();
            distinct.dedup();
            proposal.outcome = Outcome::Builtin { lines: distinct.len() };
        }
        // A template records this event if it covers as large a share of its moments as of any
        // other event's (BullMQ re-activates a stalled job within milliseconds, so a stall line
        // is also at an activation, but at one of many); of those, the one that covers the most
        // (ties: the one with a word of the event, then the one closest to the moments).
        let mut templates: Vec<&str> = hits.iter().map(|(_, _, t, _)| t.as_str()).collect();
        templates.sort_unstable();
        templates.dedup();
        let share = |k: &Kind, t: &str| (k.coverage(t), k.moments.len().max(1));
        let specific = |t: &str| {
            let (c, n) = share(kind, t);
            kinds.iter().filter(|o| o.what != what).all(|o| {
                let (oc, on) = share(o, t);
                c * on >= oc * n
            })
        };
        let worded = |t: &str| {
            let lower = t.to_lowercase();
            WORDS.iter().find(|(w, _)| *w == what).is_some_and(|(_, words)| words.iter().any(|w| lower.contains(w)))
        };
        let apart = |t: &str| {
            let of: Vec<i64> = hits.iter().filter(|(_, _, x, _)| x == t).map(|(_, _, _, a)| *a).collect();
            of.iter().sum::<i64>() / i64::try_from(of.len().max(1)).unwrap_or(1)
        };
        let Some(best) = templates
            .iter()
            .copied()
            .filter(|t| specific(t))
            .max_by_key(|t| (kind.coverage(t), worded(t), std::cmp::Reverse(apart(t))))
        else {
            out.push(proposal);
            continue;
        };
        let best = best.to_string();
        let evidence: Vec<(usize, usize)> =
            hits.iter().filter(|(_, _, t, _)| *t == best).map(|(m, l, _, _)| (*m, *l)).collect();
        proposal.covered = kind.coverage(&best);
        if let Some(&(m, l)) = evidence.first() {
            proposal.example = Some(example(m, l));
        }
        let spec = RuleSpec { event: event.name().to_string(), pattern: best.clone() };
        let Ok(rule) = RuleSet::new(std::slice::from_ref(&spec), false, "init") else {
            out.push(proposal);
            continue;
        };
        // Every sampled line the rule matches: one of the moments, another event's, or neither.
        let evidence_lines: HashSet<usize> = evidence.iter().map(|(_, l)| *l).collect();
        let (mut also, mut conflicts) = (0, 0);
        for (l, line) in lines.iter().enumerate() {
            if line.classify(&rule).kind != Some(event) || evidence_lines.contains(&l) {
                continue;
            }
            let (at, ids) = &placed[l];
            let other = at.is_some_and(|at| {
                ids.iter().flat_map(|id| references_of.get(id.as_str()).into_iter().flatten()).any(|r| {
                    r.what != what
                        && matches!(r.what, What::Active | What::Stalled | What::Failed | What::Completed)
                        && (at - r.at).num_milliseconds().abs() <= tolerance
                })
            });
            if other {
                conflicts += 1;
            } else {
                also += 1;
            }
        }
        // One moment of many is not enough to put the app's words to an event.
        let enough = proposal.covered >= 2 || proposal.covered + read.len() == moments.len();
        let decided = conflicts == 0 && also == 0 && enough;
        proposal.outcome = Outcome::Rule { pattern: best, decided, also, conflicts, enough };
        out.push(proposal);
    }
    out
}

/// One event's moments and the lines in reach of them.
struct Kind<'r> {
    what: What,
    event: EventKind,
    name: &'static str,
    channel: Channel,
    moments: Vec<&'r Reference>,
    tolerance: i64,
    /// (moment, line, template, ms apart)
    hits: Vec<(usize, usize, String, i64)>,
    /// (moment, line) the built-in rules read already.
    read: Vec<(usize, usize)>,
}

impl Kind<'_> {
    /// How many of the moments a line of template `t` records.
    fn coverage(&self, t: &str) -> usize {
        let mut covered: Vec<usize> = self.hits.iter().filter(|(_, _, x, _)| x == t).map(|(m, _, _, _)| *m).collect();
        covered.sort_unstable();
        covered.dedup();
        covered.len()
    }
}

/// Words an app uses for each event (lower case, as parts of words).
const WORDS: &[(What, &[&str])] = &[
    (What::Active, &["active", "start", "pick", "process", "begin", "handl", "running"]),
    (What::Stalled, &["stall", "recover", "lost", "dead", "orphan", "expire", "abandon"]),
    (What::Failed, &["fail", "error", "exception", "crash", "abort"]),
];

/// Level words: they say how a line was logged, not what it records.
const LEVELS: &[&str] = &["INFO", "WARN", "WARNING", "ERROR", "DEBUG", "TRACE", "FATAL", "LOG", "VERBOSE", "NOTICE"];

/// A pattern for lines worded like this one, with `id` captured (when the message holds it, or
/// else the error the line carries). A pattern generalises: words with digits (times, pids,
/// counts, other ids) become `\S+`, the characters around the id in its word are kept only up
/// to a digit, and a JSON record read as text gets none (its keys and values are not wording:
/// its format is to be declared).
pub fn template(line: &LogLine, id: &str) -> Option<String> {
    if line.message.trim_start().starts_with('{')
        && serde_json::from_str::<serde_json::Value>(&line.message).is_ok_and(|v| v.is_object())
    {
        return None;
    }
    let in_message = line.message.split_whitespace().any(|t| holds(t, id));
    let text = match line.error.as_deref() {
        Some(error) if !in_message && error.split_whitespace().any(|t| holds(t, id)) => error,
        _ => line.message.as_str(),
    };
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let at = tokens.iter().position(|t| holds(t, id));
    if at.is_none() && line.fields.job_id.as_deref() != Some(id) {
        return None;
    }
    let before_end = at.unwrap_or(tokens.len());
    let start = before_end.saturating_sub(6);
    let mut pieces: Vec<String> = tokens[start..before_end].iter().map(|t| piece(t)).collect();
    let mut suffixed = false;
    if let Some(at) = at {
        let token = tokens[at];
        let from = token.find(id).unwrap_or(0);
        let (prefix, suffix) = (around(&token[..from], true), around(&token[from + id.len()..], false));
        // Greedy, then the suffix: the capture ends at the suffix's last place in the word.
        pieces.push(format!("{prefix}(?P<job_id>\\S+){suffix}"));
        suffixed = !suffix.is_empty();
        for token in tokens.iter().skip(at + 1).take(4) {
            if token.contains('=') {
                break;
            }
            pieces.push(piece(token));
        }
    }
    while pieces.last().is_some_and(|p| p == r"\S+") {
        pieces.pop();
    }
    // A suffix at the end must end the word (after it, `\s+` of the next piece does).
    if let Some(last) = pieces.last_mut().filter(|p| suffixed && p.contains("(?P<job_id>")) {
        last.push_str(r"(?:\s|$)");
    }
    let wordy = |p: &String| {
        let letters = p.chars().filter(char::is_ascii_alphabetic).count();
        letters >= 3 && !p.contains("\\S") && !LEVELS.contains(&p.as_str()) && !p.starts_with("\\[")
    };
    if !pieces.iter().any(wordy) {
        return None;
    }
    let anchor = if start == 0 { "^" } else { "" };
    Some(format!("{anchor}{}", pieces.join(r"\s+")))
}

/// Whether `token` holds `id` as a whole (not inside a longer word).
fn holds(token: &str, id: &str) -> bool {
    token.match_indices(id).any(|(at, _)| {
        let before = token[..at].chars().next_back();
        let after = token[at + id.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// The most characters kept of the id's word on either side of it.
const AROUND: usize = 16;

/// The characters of the id's word before it (`before`) or after it, as a pattern: those next to
/// the id up to a digit and at most `AROUND` of them (`job#`, `(`, `):`), the rest, if any, any
/// characters (`\S*`): `id=` stays, `{"time":1796524973839,...,"jobId":"` does not.
fn around(text: &str, before: bool) -> String {
    let chars: Vec<char> = text.chars().collect();
    let kept: Vec<char> = if before {
        let mut kept: Vec<char> =
            chars.iter().rev().take_while(|c| !c.is_ascii_digit()).take(AROUND).copied().collect();
        kept.reverse();
        kept
    } else {
        chars.iter().take_while(|c| !c.is_ascii_digit()).take(AROUND).copied().collect()
    };
    let kept: String = kept.into_iter().collect();
    let cut = kept.chars().count() < chars.len();
    match (cut, before) {
        (false, _) => regex::escape(&kept),
        (true, true) => format!("\\S*{}", regex::escape(&kept)),
        (true, false) => format!("{}\\S*", regex::escape(&kept)),
    }
}

/// A word as written, unless it holds digits (counts, durations, other ids): then any word.
fn piece(token: &str) -> String {
    if let Some((key, value)) = token.split_once('=')
        && !key.is_empty()
    {
        return if value.bytes().any(|b| b.is_ascii_digit()) {
            format!("{}=\\S+", regex::escape(key))
        } else {
            regex::escape(token)
        };
    }
    if token.bytes().any(|b| b.is_ascii_digit()) { r"\S+".to_string() } else { regex::escape(token) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::log::fields::Classified;
    use crate::time::Stamp;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    fn line(n: u64, utc: &str, message: &str) -> LogLine {
        LogLine {
            line: n,
            stamp: Stamp::Absolute(at(utc)),
            message: message.into(),
            fields: Classified::default(),
            error: None,
        }
    }

    fn stream(id: &str, utc: &str, what: What) -> (Channel, Reference) {
        (Channel::Stream, Reference { id: id.into(), at: at(utc), what, file: 1, line: 9 })
    }

    fn placed(lines: &[LogLine]) -> Vec<Option<DateTime<Utc>>> {
        lines
            .iter()
            .map(|line| match line.stamp {
                Stamp::Absolute(at) => Some(at),
                Stamp::Local(_) => None,
            })
            .collect()
    }

    #[test]
    fn the_apps_own_stall_line_becomes_a_rule_and_the_builtin_activation_needs_none() {
        let lines = [
            line(
                1,
                "2026-11-30T08:46:24.208Z",
                "INFO  [BullWorker] job active queue=pr-review id=repeat:s:1796028384203 pid=1",
            ),
            line(
                2,
                "2026-11-30T08:46:31.300Z",
                "WARN  [Sweeper] Recovered repeat:s:1796028384203 from a dead worker (2 of 2)",
            ),
            line(3, "2026-11-30T08:46:31.500Z", "INFO  [HTTP] GET /healthz 200 3.4ms"),
            line(
                4,
                "2026-11-30T08:47:40.010Z",
                "WARN  [Sweeper] Recovered repeat:s:1796028391203 from a dead worker (1 of 2)",
            ),
        ];
        let references = [
            stream("repeat:s:1796028384203", "2026-11-30T08:46:24.205Z", What::Active),
            stream("repeat:s:1796028384203", "2026-11-30T08:46:31.290Z", What::Stalled),
            stream("repeat:s:1796028391203", "2026-11-30T08:47:40.000Z", What::Stalled),
        ];
        let proposals = propose(&lines, &placed(&lines), &references, false);
        assert_eq!(proposals.len(), 2, "no failed moment, no failed proposal");
        assert!(matches!(proposals[0].outcome, Outcome::Builtin { lines: 1 }), "{:?}", proposals[0]);
        let stalled = &proposals[1];
        assert_eq!((stalled.event, stalled.moments, stalled.covered), (EventKind::JobStalled, 2, 2));
        let Outcome::Rule { pattern, decided, also, conflicts, .. } = &stalled.outcome else { panic!("{stalled:?}") };
        assert_eq!(pattern, r"^WARN\s+\[Sweeper\]\s+Recovered\s+(?P<job_id>\S+)\s+from\s+a\s+dead\s+worker");
        assert_eq!((*decided, *also, *conflicts), (true, 0, 0));
        assert_eq!(stalled.example.as_ref().map(|e| (e.0, e.2, e.3)), Some((2, 1, 9)));
        // The rule reads the lines as the reader would.
        let rules =
            RuleSet::new(&[RuleSpec { event: "job-stalled".into(), pattern: pattern.clone() }], true, "t").unwrap();
        let found = rules.classify(&lines[1].message);
        assert_eq!(
            (found.kind, found.job_id.as_deref()),
            (Some(EventKind::JobStalled), Some("repeat:s:1796028384203"))
        );
    }

    #[test]
    fn a_rule_that_matches_another_events_line_is_not_decided() {
        let lines = [
            line(1, "2026-11-30T08:00:00.000Z", "WARN worker picked repeat:s:1796028384203"),
            line(2, "2026-11-30T08:01:00.000Z", "WARN worker picked repeat:s:1796028384203"),
        ];
        let references = [
            stream("repeat:s:1796028384203", "2026-11-30T08:00:00.000Z", What::Stalled),
            stream("repeat:s:1796028384203", "2026-11-30T08:01:00.000Z", What::Active),
        ];
        let proposals = propose(&lines, &placed(&lines), &references, false);
        let stalled = proposals.iter().find(|p| p.event == EventKind::JobStalled).unwrap();
        let Outcome::Rule { decided, conflicts, .. } = stalled.outcome else { panic!("{stalled:?}") };
        assert_eq!((decided, conflicts), (false, 1));
    }

    #[test]
    fn a_moment_the_builtin_rules_read_gets_no_rule_from_the_lines_around_it() {
        let keyed = |n, utc, message: &str| LogLine {
            fields: Classified { job_id: Some("repeat:s:1791333180000".into()), ..Classified::default() },
            ..line(n, utc, message)
        };
        // pino: `job active` with a jobId key, then the processor's own lines 0.3 s and 1 s later.
        let lines = [
            keyed(1, "2026-10-07T00:33:00.004Z", "job active"),
            keyed(2, "2026-10-07T00:33:00.310Z", "sweep picked candidates active=4"),
            keyed(3, "2026-10-07T00:33:01.020Z", "reviewing PR-4412"),
        ];
        let ledger = |utc: &str| {
            (
                Channel::Ledger,
                Reference { id: "repeat:s:1791333180000".into(), at: at(utc), what: What::Active, file: 0, line: 2 },
            )
        };
        let proposals = propose(&lines, &placed(&lines), &[ledger("2026-10-07T00:33:03.118Z")], false);
        assert!(matches!(proposals[0].outcome, Outcome::Builtin { lines: 1 }), "{:?}", proposals[0]);
        assert_eq!(proposals[0].example.as_ref().map(|e| e.0), Some(1));
    }

    #[test]
    fn a_lock_error_at_the_moment_of_an_activation_is_no_activation_line() {
        // BullMQ's worker logs 'could not renew lock for job X' when the lock it lost is taken by
        // another worker, as the stream records X active again: the line is the lock error the
        // built-in rules read, not the app's record of the activation.
        let renewal_failed = |n, utc| {
            let mut l = line(n, utc, "worker error");
            l.error = Some("could not renew lock for job gh-1020".into());
            l
        };
        let lines = [renewal_failed(1, "2026-12-06T06:20:39.897Z"), renewal_failed(2, "2026-12-06T06:21:10.002Z")];
        let references = [
            stream("gh-1020", "2026-12-06T06:20:39.890Z", What::Active),
            stream("gh-1020", "2026-12-06T06:21:10.000Z", What::Active),
        ];
        let builtin = RuleSet::new(&[], true, "t").unwrap();
        assert!(lines[0].classify(&builtin).kind.is_some(), "the built-in rules read the lock error");
        let proposals = propose(&lines, &placed(&lines), &references, false);
        let active = proposals.iter().find(|p| p.event == EventKind::JobActive).unwrap();
        assert!(!matches!(active.outcome, Outcome::Rule { .. }), "{active:?}");
    }

    #[test]
    fn one_moment_of_many_is_not_enough_to_decide_a_rule() {
        let lines = [line(1, "2026-11-30T08:00:00.000Z", "WARN lost repeat:s:1796028384203 to a dead worker")];
        let references = [
            stream("repeat:s:1796028384203", "2026-11-30T08:00:00.000Z", What::Stalled),
            stream("repeat:s:1796028391203", "2026-11-30T08:05:00.000Z", What::Stalled),
            stream("repeat:s:1796028398203", "2026-11-30T08:09:00.000Z", What::Stalled),
        ];
        let proposals = propose(&lines, &placed(&lines), &references, false);
        let Outcome::Rule { decided, enough, .. } = proposals[0].outcome else { panic!("{:?}", proposals[0]) };
        assert_eq!((decided, enough, proposals[0].covered), (false, false, 1));
    }

    #[test]
    fn a_template_generalises_the_word_around_the_id_and_a_json_record_gets_none() {
        // A pino record read as a text log: its time, pid and host are no wording.
        let json = line(
            1,
            "2026-12-06T02:42:53.842Z",
            r#"{"level":30,"time":1796524973839,"pid":27806,"hostname":"review-bot-7d9f8c6b5-8nbbd","jobId":"gh-1001","msg":"job active"}"#,
        );
        assert_eq!(template(&json, "gh-1001"), None);
        // Around the id, the characters next to it up to a digit are kept, the rest any.
        let glued = line(1, "2026-12-06T02:42:53Z", "picked up t=1796524973839/job:gh-1001/attempt2 now");
        let pattern = template(&glued, "gh-1001").unwrap();
        assert_eq!(pattern, r"^picked\s+up\s+\S*/job:(?P<job_id>\S+)/attempt\S*\s+now");
        let rules =
            RuleSet::new(&[RuleSpec { event: "job-active".into(), pattern: pattern.clone() }], false, "t").unwrap();
        let other = rules.classify("picked up t=1796524999000/job:gh-1002/attempt3 now");
        assert_eq!(other.job_id.as_deref(), Some("gh-1002"), "{pattern}");
    }

    #[test]
    fn a_line_whose_error_names_the_job_gets_a_rule_from_the_errors_words() {
        let mut l = line(1, "2026-11-30T08:00:00Z", "worker error");
        l.error = Some("Job repeat:s:1796028384203 was reclaimed after its lock expired".into());
        assert_eq!(
            template(&l, "repeat:s:1796028384203").unwrap(),
            r"^Job\s+(?P<job_id>\S+)\s+was\s+reclaimed\s+after\s+its"
        );
        // The built-in rules read an error's words when the message says nothing they know.
        let mut failed = line(1, "2026-11-30T08:00:00Z", "worker error");
        failed.error = Some("job 42 failed: boom".into());
        let builtin = RuleSet::new(&[], true, "t").unwrap();
        assert_eq!(failed.classify(&builtin).kind, Some(EventKind::JobFailed));
    }

    #[test]
    fn templates_keep_words_and_generalise_numbers() {
        let l = line(1, "2026-11-30T08:00:00Z", "ERROR [Q] job #42: failed after 3 tries attempt=3 reason=boom");
        assert_eq!(
            template(&l, "42").unwrap(),
            r"^ERROR\s+\[Q\]\s+job\s+\#(?P<job_id>\S+):\s+failed\s+after\s+\S+\s+tries"
        );
        let last = line(1, "2026-11-30T08:00:00Z", "lost job (repeat:a:1)");
        assert_eq!(template(&last, "repeat:a:1").unwrap(), r"^lost\s+job\s+\((?P<job_id>\S+)\)(?:\s|$)");
        let keyed = LogLine {
            fields: Classified { job_id: Some("7".into()), ..Classified::default() },
            ..line(1, "2026-11-30T08:00:00Z", "stall recovered")
        };
        assert_eq!(template(&keyed, "7").unwrap(), r"^stall\s+recovered");
        assert_eq!(template(&line(1, "2026-11-30T08:00:00Z", "INFO 7"), "7"), None, "no word to tell the line by");
        assert_eq!(template(&line(1, "2026-11-30T08:00:00Z", "job 17 done"), "7"), None, "7 is inside 17");
    }
}
