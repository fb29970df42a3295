//! `redis-cli MONITOR` output: every command the server ran, with its time, as people record it
//! during an incident and paste it into bug reports.
//!
//! ```text
//! 1796549993.412450 [0 127.0.0.1:52584] "evalsha" "a4a7…" "7" "bull:review:stalled" … "1000"
//! 1796549993.412623 [0 lua] "SMEMBERS" "bull:review:stalled"
//! ```
//!
//! The time is the server's, in epoch seconds with microseconds (UTC: no zone to guess); the
//! client is `<db> <address>`, or `<db> lua` for a command a script ran. Bull calls its Lua
//! scripts by `EVALSHA` (by `EVAL` with the whole source the first time a connection calls one),
//! so a script is told by the keys it is given, which Bull's `lib/scripts.js` fixes for each, and
//! what it did by the commands it ran after it (`[0 lua]`, printed right after the call):
//!
//! - `moveToActive` (8 keys: `wait`, `active`, `priority`, `active@<token>`, …): its
//!   `SET <job>:lock <token> PX <ms>` is an activation (`job-active`);
//! - `moveStalledJobsToWait` (7 keys: `stalled`, `wait`, `active`, `failed`, `stalled-check`, …):
//!   a job it `RPUSH`es back to wait is a stall (`job-stalled`); one it fails over the limit
//!   (`HMSET … failedReason "job stalled more than allowable limit"` in Bull 4, `HSET` of the
//!   same field in Bull 3) is `job-failed`;
//! - `moveToFinished` (9 keys: `active`, `completed`/`failed`, the job, …): a `ZADD` to the target
//!   set is the job's completion or failure; none (the lock check failed) is a refused finish,
//!   an `error` that says so;
//! - `extendLock` (2 keys: `<job>:lock`, `stalled`): a renewal. One whose lock check failed (a
//!   `GET` and no `SET`) is an `error` (Bull's renewal timer stops there without a word, so this
//!   is the only record of it); one that renewed is counted, with no event.
//!
//! Every other command and script is noise to leasetrace, ignored and counted by its name. The
//! events are Redis's own record, on Redis's clock: they are on the events stream's channel, which
//! a Bull queue does not otherwise have. BullMQ's scripts (other keys) are not read.

use std::fmt::Write as _;
use std::io::BufRead;

use chrono::DateTime;

use crate::error::Result;
use crate::ingest::io::lines::Lines;
use crate::ingest::{EventFormat, SourceKind, SourceSpec};
use crate::model::{Channel, Event, EventKind, InputSummary, Origin, Scope, Text};

/// Why a command of no lock script is ignored.
const NOISE: &str = "a command of no Bull lock script (noise)";
/// What a line should be, for the messages of lines that are not.
const EXPECTED: &str = "redis-cli MONITOR's `<epoch seconds>.<micros> [<db> <client>] \"command\" \"arg\" …`";
/// The most words a command line is split into: a MONITOR line of a script call has its keys and
/// arguments (Bull's take at most 9 keys and 14 arguments); more is no call leasetrace reads.
const MAX_WORDS: usize = 4096;
/// The evidence kept of a script call: the call with its source, if any, cut.
const MAX_EVIDENCE: usize = 600;

pub struct RedisMonitor;

impl EventFormat for RedisMonitor {
    fn name(&self) -> &'static str {
        "redis-monitor"
    }

    fn kind(&self) -> SourceKind {
        SourceKind::RedisMonitor
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["txt", "log", "monitor"]
    }

    /// `OK` (redis-cli's reply to MONITOR) or a MONITOR line.
    fn sniff(&self, first_line: &str) -> bool {
        first_line == "OK" || parse(first_line).is_ok()
    }

    fn read(
        &self,
        spec: &SourceSpec,
        source: u16,
        input: Box<dyn BufRead + Send>,
        events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<()> {
        let mut lines = Lines::new(input, spec.max_line_bytes);
        let mut call: Option<Call> = None;
        while let Some((line, text)) = lines.next_line(&spec.path, summary)? {
            if text.trim().is_empty() {
                summary.lines += 1;
                summary.ignore("blank");
                continue;
            }
            if line == 1 && text.trim() == "OK" {
                summary.lines += 1;
                summary.ignore("redis-cli's OK to MONITOR");
                continue;
            }
            let parsed = match parse(text) {
                Ok(parsed) => parsed,
                Err(reason) => {
                    summary.lines += 1;
                    summary.reject(line, format!("{reason}; expected {EXPECTED}"));
                    continue;
                }
            };
            if parsed.client == "lua" {
                if let Some(open) = &mut call {
                    open.lua_lines += 1;
                    if let Some(kept) = kept_lua(&parsed.words)
                        && open.lua.len() < MAX_LUA_KEPT
                    {
                        open.lua.push((line, kept));
                    }
                } else {
                    summary.lines += 1;
                    summary.ignore("a script's command without its call (the recording began inside it)");
                }
                continue;
            }
            if let Some(done) = call.take() {
                done.finish(spec, source, events, summary)?;
            }
            let script = Script::of(&parsed.words);
            // Only the script's keys and first arguments are read: an EVAL's source and a job's
            // data are kilobytes.
            let words: Vec<String> = parsed.words.iter().take(32).map(|w| cut_word(w)).collect();
            call = Some(Call {
                line,
                at: parsed.at,
                client: parsed.client.to_string(),
                words,
                script,
                lua: Vec::new(),
                lua_lines: 0,
                text: evidence(text),
            });
        }
        if let Some(done) = call.take() {
            done.finish(spec, source, events, summary)?;
        }
        Ok(())
    }
}

/// One line of MONITOR output.
#[derive(Debug, PartialEq)]
pub struct Parsed<'a> {
    pub at: DateTime<chrono::Utc>,
    pub client: &'a str,
    pub words: Vec<String>,
}

/// `1796549993.412450 [0 127.0.0.1:52584] "evalsha" "…"`: the time, the client, the words.
pub fn parse(text: &str) -> std::result::Result<Parsed<'_>, String> {
    let (stamp, rest) = text.split_once(' ').ok_or("no space after the time")?;
    let (seconds, micros) =
        stamp.split_once('.').ok_or_else(|| format!("time {:?} has no microseconds", cut(stamp)))?;
    if seconds.is_empty()
        || seconds.len() > 11
        || micros.len() != 6
        || !(seconds.bytes().chain(micros.bytes()).all(|b| b.is_ascii_digit()))
    {
        return Err(format!("time {:?} is not epoch seconds with 6 decimals", cut(stamp)));
    }
    let seconds: i64 = seconds.parse().map_err(|_| "time out of range")?;
    let micros: i64 = micros.parse().map_err(|_| "time out of range")?;
    let at = seconds
        .checked_mul(1_000_000)
        .and_then(|s| s.checked_add(micros))
        .and_then(DateTime::from_timestamp_micros)
        .filter(|at| crate::time::moment(*at).is_ok())
        .ok_or_else(|| format!("time {:?} is outside the years a timeline holds", cut(stamp)))?;
    let rest = rest.strip_prefix('[').ok_or("no `[<db> <client>]` after the time")?;
    let (client, rest) = rest.split_once("] ").ok_or("no `]` closing `[<db> <client>]`")?;
    let (db, client) = client.split_once(' ').ok_or("no client after the database number")?;
    if db.is_empty() || !db.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("database {:?} is not a number", cut(db)));
    }
    Ok(Parsed { at, client, words: words(rest)? })
}

/// The quoted words of a command, with redis's escapes (`\"`, `\\`, `\n`, `\r`, `\t`, `\a`,
/// `\b`, `\xHH`) undone. Bytes that are no UTF-8 are shown as U+FFFD.
fn words(mut rest: &str) -> std::result::Result<Vec<String>, String> {
    let mut out = Vec::new();
    loop {
        rest = rest.trim_start_matches(' ');
        if rest.is_empty() {
            break;
        }
        if out.len() == MAX_WORDS {
            return Err(format!("more than {MAX_WORDS} words"));
        }
        let body = rest.strip_prefix('"').ok_or_else(|| format!("word {} does not start with `\"`", out.len() + 1))?;
        let mut bytes = Vec::new();
        let mut chars = body.char_indices();
        let end = loop {
            let Some((at, c)) = chars.next() else {
                return Err(format!("word {} has no closing `\"`", out.len() + 1));
            };
            match c {
                '"' => break at,
                '\\' => {
                    let escaped = match chars.next().map(|(_, c)| c) {
                        Some('n') => b'\n',
                        Some('r') => b'\r',
                        Some('t') => b'\t',
                        Some('a') => 7,
                        Some('b') => 8,
                        Some('"') => b'"',
                        Some('\\') => b'\\',
                        Some('x') => {
                            let hex: String = (0..2).filter_map(|_| chars.next().map(|(_, c)| c)).collect();
                            u8::from_str_radix(&hex, 16).ok().filter(|_| hex.len() == 2).ok_or_else(|| {
                                format!("word {}: `\\x` not followed by two hex digits", out.len() + 1)
                            })?
                        }
                        other => {
                            return Err(format!(
                                "word {}: unknown escape `\\{}`",
                                out.len() + 1,
                                other.map(String::from).unwrap_or_default()
                            ));
                        }
                    };
                    bytes.push(escaped);
                }
                c => bytes.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
            }
        };
        out.push(String::from_utf8_lossy(&bytes).into_owned());
        rest = &body[end + 1..];
        if !rest.is_empty() && !rest.starts_with(' ') {
            return Err(format!("word {} is followed by {:?}, not a space", out.len(), cut(rest)));
        }
    }
    if out.is_empty() {
        return Err("no command".into());
    }
    Ok(out)
}

fn cut(text: &str) -> String {
    text.chars().take(40).collect()
}

/// A line's evidence: an `EVAL`'s script source (kilobytes) shown by its size.
fn evidence(text: &str) -> String {
    let mut kept: String = text.chars().take(MAX_EVIDENCE).collect();
    if kept.len() < text.len() {
        let more = text.len() - kept.len();
        let _ = write!(kept, "… ({more} bytes more)");
    }
    kept
}

/// Which of Bull's lock scripts a call is, by its keys (bull 4.16.5 `lib/scripts.js`).
#[derive(Debug, Clone, PartialEq)]
enum Script {
    MoveToActive,
    MoveStalledJobsToWait,
    /// The target set (`<prefix>:<queue>:completed` or `:failed`) and the job's key.
    MoveToFinished {
        target: String,
        job: String,
    },
    ExtendLock {
        lock: String,
    },
    /// Any other script, by its name in the source's first line when `EVAL` gives it.
    Other,
    /// Not a script call.
    Command(String),
}

impl Script {
    fn of(words: &[String]) -> Script {
        let command = words[0].to_ascii_lowercase();
        if command != "eval" && command != "evalsha" {
            return Script::Command(command);
        }
        let Some(count) = words.get(2).and_then(|n| n.parse::<usize>().ok()) else { return Script::Other };
        let Some(keys) = words.get(3..3 + count) else { return Script::Other };
        let ends = |i: usize, suffix: &str| keys.get(i).is_some_and(|k| k.ends_with(suffix));
        match count {
            8 if ends(0, ":wait") && ends(1, ":active") && ends(2, ":priority") && keys[3].contains(":active@") => {
                Script::MoveToActive
            }
            7 if ends(0, ":stalled") && ends(1, ":wait") && ends(2, ":active") && ends(4, ":stalled-check") => {
                Script::MoveStalledJobsToWait
            }
            9 if ends(0, ":active")
                && (ends(1, ":completed") || ends(1, ":failed"))
                && keys[5].contains(":active@") =>
            {
                Script::MoveToFinished { target: keys[1].clone(), job: keys[2].clone() }
            }
            2 if ends(0, ":lock") && ends(1, ":stalled") => Script::ExtendLock { lock: keys[0].clone() },
            _ => Script::Other,
        }
    }
}

/// A script call with the commands it ran, until the next call.
struct Call {
    line: u64,
    at: DateTime<chrono::Utc>,
    client: String,
    words: Vec<String>,
    script: Script,
    /// The commands the script ran that tell what it did (`kept_lua`), at most `MAX_LUA_KEPT`.
    lua: Vec<(u64, Vec<String>)>,
    /// Every `[0 lua]` line after the call, kept or not, for the account.
    lua_lines: u64,
    text: String,
}

/// The script commands a call is judged by, the rest dropped: a stalled check over thousands of
/// active jobs runs thousands of commands, and a hostile recording any number.
const MAX_LUA_KEPT: usize = 65_536;
/// The longest word kept of a script's command (a stack trace in an `HMSET`).
const MAX_WORD_KEPT: usize = 512;

/// What is kept of a script's command: the commands `Call::finish` reads, each with its first
/// words cut short; an `HMSET` (Bull 4) or `HSET` (Bull 3) keeps its key and whether it wrote the
/// stall limit's reason, as an `HMSET`.
fn kept_lua(words: &[String]) -> Option<Vec<String>> {
    let mut command = words[0].to_ascii_uppercase();
    if !["SET", "HINCRBY", "HMSET", "HSET", "ZADD", "GET", "DEL"].contains(&command.as_str()) {
        return None;
    }
    if command == "HSET" {
        command = "HMSET".into();
    }
    if command == "HMSET" {
        let reason = crate::detect::stalled_limit_exceeded::STALLED_LIMIT_REASON;
        let over_limit = words.iter().any(|w| w == reason);
        let key = words.get(1).map(|k| cut_word(k)).unwrap_or_default();
        return Some(vec![command, key, if over_limit { reason.to_string() } else { String::new() }]);
    }
    Some(std::iter::once(command).chain(words.iter().skip(1).take(4).map(|w| cut_word(w))).collect())
}

fn cut_word(word: &str) -> String {
    let mut end = word.len().min(MAX_WORD_KEPT);
    while !word.is_char_boundary(end) {
        end -= 1;
    }
    word[..end].to_string()
}

/// `(queue, id)` of a job key (`bull:<queue>:<id>`), split as the job-hash reader splits it.
fn job_of(key: &str) -> Option<(String, String)> {
    crate::ingest::bullmq::jobs::queue_and_id(key)
}

impl Call {
    /// The events of the call, its lines counted.
    fn finish(self, spec: &SourceSpec, source: u16, events: &mut Vec<Event>, summary: &mut InputSummary) -> Result<()> {
        let lua =
            |name: &'static str| self.lua.iter().filter(move |(_, w)| w[0].eq_ignore_ascii_case(name)).map(|(_, w)| w);
        // (kind, key of the job, detail)
        let mut found: Vec<(EventKind, String, String)> = Vec::new();
        let mut ignored: Option<String> = None;
        match &self.script {
            Script::MoveToActive => {
                for words in lua("SET").filter(|w| w.len() >= 5 && w[1].ends_with(":lock")) {
                    let job = words[1].trim_end_matches(":lock").to_string();
                    found.push((
                        EventKind::JobActive,
                        job,
                        format!("moveToActive: lock taken for {} ms (token {})", words[4], short(&words[2])),
                    ));
                }
                if found.is_empty() {
                    ignored = Some("moveToActive that took no job".into());
                }
            }
            Script::MoveStalledJobsToWait => {
                let stalled_keys: Vec<&String> =
                    lua("HINCRBY").filter(|w| w.get(2).is_some_and(|f| f == "stalledCounter")).map(|w| &w[1]).collect();
                for key in stalled_keys {
                    let failed = lua("HMSET").any(|w| {
                        &w[1] == key
                            && w.iter().any(|v| v == crate::detect::stalled_limit_exceeded::STALLED_LIMIT_REASON)
                    });
                    if failed {
                        found.push((
                            EventKind::JobFailed,
                            key.clone(),
                            crate::detect::stalled_limit_exceeded::STALLED_LIMIT_REASON.to_string(),
                        ));
                    } else {
                        found.push((
                            EventKind::JobStalled,
                            key.clone(),
                            "moveStalledJobsToWait: lock gone, moved back to wait".into(),
                        ));
                    }
                }
                if found.is_empty() {
                    ignored = Some(if lua("SET").next().is_none() {
                        "stalled check skipped (the stalled-check key was still set)".into()
                    } else {
                        "stalled check that moved no job".into()
                    });
                }
            }
            Script::MoveToFinished { target, job } => {
                let completed = target.ends_with(":completed");
                if lua("ZADD").any(|w| w.get(1) == Some(target)) {
                    let detail =
                        if completed { String::new() } else { self.words.get(3 + 9 + 3).cloned().unwrap_or_default() };
                    found.push((
                        if completed { EventKind::JobCompleted } else { EventKind::JobFailed },
                        job.clone(),
                        detail,
                    ));
                } else if lua("GET").next().is_some() && lua("DEL").next().is_none() {
                    let to = if completed { "completed" } else { "failed" };
                    found.push((
                        EventKind::Error,
                        job.clone(),
                        format!(
                            "moveToFinished ({to}) refused by Bull's lock check: the lock was gone or another token's"
                        ),
                    ));
                } else {
                    ignored = Some("moveToFinished of a job no longer there".into());
                }
            }
            Script::ExtendLock { lock } => {
                if lua("SET").next().is_some() {
                    ignored = Some("lock renewed (extendLock): counted, no event".into());
                } else {
                    let job = lock.trim_end_matches(":lock").to_string();
                    found.push((EventKind::Error, job, "extendLock refused by Bull's lock check: the lock was gone or another token's; Bull's renewal timer stops here".into()));
                }
            }
            Script::Other => ignored = Some("a script that is none of Bull's lock scripts (noise)".into()),
            Script::Command(_) => ignored = Some(NOISE.into()),
        }
        let lines = 1 + self.lua_lines;
        if found.is_empty() {
            summary.lines += lines;
            for _ in 0..lines {
                summary.ignore(ignored.as_deref().unwrap_or(NOISE));
            }
            return Ok(());
        }
        let moment = crate::time::moment(self.at).expect("parse keeps times a timeline holds");
        let origin = Origin { channel: Channel::EventsStream, source, line: crate::ingest::line_of(spec, self.line)? };
        let mut made = Vec::new();
        for (kind, key, detail) in found {
            let Some((queue, id)) = job_of(&key) else {
                // The call and its script's commands are rejected together, the reason at the call.
                summary.lines += lines;
                summary.reject(self.line, format!("key {:?} is no job key (<prefix>:<queue>:<id>)", cut(&key)));
                summary.rejected += lines - 1;
                return Ok(());
            };
            let mut event = Event::new(moment, kind, origin);
            let scope = Scope {
                job_id: Some(id.as_str().into()),
                job_name: None,
                queue: Some(Text::from(queue.as_str())),
                run_id: None,
                slot: crate::ingest::bullmq::jobs::repeat_slot(&id),
                worker: None,
                instance: None,
            };
            event.set_scope(scope.interned());
            let detail = if detail.is_empty() {
                format!("from {}", self.client)
            } else {
                format!("{detail}; from {}", self.client)
            };
            event.set_detail(Some(Text::from(detail.as_str())));
            made.push(event);
        }
        summary.lines += lines;
        for _ in 0..lines {
            summary.used();
        }
        summary.texts.keep(origin.line, &self.text);
        events.extend(made);
        Ok(())
    }
}

/// A lock token's first 8 characters: enough to tell Queue instances apart in a report.
fn short(token: &str) -> String {
    token.chars().take(8).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_its_time_client_and_unescaped_words() {
        let line = r#"1796549993.412450 [0 127.0.0.1:52584] "HMSET" "bull:q:1" "stacktrace" "[\"Error: x\\n at\"]" "\x41\xe2\x9c\x93""#;
        let parsed = parse(line).unwrap();
        assert_eq!(parsed.at.timestamp_micros(), 1_796_549_993_412_450);
        assert_eq!(parsed.client, "127.0.0.1:52584");
        assert_eq!(parsed.words, ["HMSET", "bull:q:1", "stacktrace", "[\"Error: x\\n at\"]", "A✓"]);
        assert_eq!(parse(r#"1796549993.412538 [0 lua] "EXISTS" "bull:q:stalled-check""#).unwrap().client, "lua");
    }

    #[test]
    fn a_line_that_is_not_monitor_output_says_what_is_wrong() {
        for (line, says) in [
            ("1796549993 [0 lua] \"GET\"", "has no microseconds"),
            ("1796549993.4124 [0 lua] \"GET\"", "6 decimals"),
            ("1796549993.412450 0 lua] \"GET\"", "no `[<db> <client>]`"),
            ("1796549993.412450 [x lua] \"GET\"", "is not a number"),
            ("1796549993.412450 [0 lua] GET", "does not start with"),
            ("1796549993.412450 [0 lua] \"GET", "no closing"),
            ("1796549993.412450 [0 lua] \"G\\q\"", "unknown escape"),
            ("1796549993.412450 [0 lua] \"G\\x4\"", "two hex digits"),
            ("1796549993.412450 [0 lua] \"G\"x", "not a space"),
            ("99999999999.000000 [0 lua] \"GET\"", "outside the years"),
        ] {
            let error = parse(line).unwrap_err();
            assert!(error.contains(says), "{line}: {error}");
        }
    }

    /// A piece of the fixture's recording: a stalled check, an activation and a refused finish.
    const PIECE: &str = include_str!("../../../fixtures/bull-4.16.5-stalled/monitor.txt");

    #[test]
    fn every_cut_and_flipped_byte_of_a_real_recording_keeps_the_source_invariants() {
        let piece: Vec<u8> = PIECE.lines().skip(126).take(34).collect::<Vec<_>>().join("\n").into_bytes();
        let framed = |body: &[u8]| [&[0u8, 0, 0, 0][..], body].concat();
        // Cuts, and every 31st byte flipped to a quote, a backslash, a bracket or a line end.
        for end in (0..piece.len()).step_by(97) {
            crate::fuzzing::redis_monitor(&framed(&piece[..end]));
        }
        for at in (0..piece.len()).step_by(31) {
            for byte in [b'"', b'\\', b']', b'\n', b'x', 0xff] {
                let mut bent = piece.clone();
                bent[at] = byte;
                crate::fuzzing::redis_monitor(&framed(&bent));
            }
        }
    }

    #[test]
    fn a_script_whose_lock_key_is_no_jobs_is_rejected_with_its_commands_counted_once() {
        // Found by the test above: the call was rejected once and its script's commands not at all.
        let input = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fuzz/regressions/redis_monitor/activation-of-a-key-that-is-no-job-key-counted-once.txt"
        ))
        .unwrap();
        crate::fuzzing::redis_monitor(&input);
    }

    #[test]
    fn bulls_scripts_are_told_by_their_keys() {
        let call = |line: &str| Script::of(&parse(line).unwrap().words);
        // Cut from fixtures/bull-4.16.5-stalled/monitor.txt.
        assert_eq!(
            call(
                r#"1796549993.412450 [0 127.0.0.1:52584] "evalsha" "a4a736ae46aac1a806e0285ae7a256d67406dca9" "7" "bull:review:stalled" "bull:review:wait" "bull:review:active" "bull:review:failed" "bull:review:stalled-check" "bull:review:meta-paused" "bull:review:paused" "1" "bull:review:" "1796549993411" "1000""#
            ),
            Script::MoveStalledJobsToWait
        );
        assert_eq!(
            call(
                r#"1796549993.743173 [0 127.0.0.1:52470] "evalsha" "5bf9083c794d9aca062606b3c5431e4050262cf1" "8" "bull:digest:wait" "bull:digest:active" "bull:digest:priority" "bull:digest:active@72e2a7b6" "bull:digest:stalled" "bull:digest:limiter" "bull:digest:delayed" "bull:digest:drained" "bull:digest:" "72e2a7b6" "2000" "1796549993742" "pr-303""#
            ),
            Script::MoveToActive
        );
        assert_eq!(
            call(
                r#"1796549996.171157 [0 127.0.0.1:52528] "evalsha" "b621e0d9" "9" "bull:review:active" "bull:review:failed" "bull:review:pr-101" "bull:review:wait" "bull:review:priority" "bull:review:active@f5c25145" "bull:review:delayed" "bull:review:stalled" "bull:review:metrics:failed" "pr-101" "1796549996168" "failedReason" "Missing lock for job pr-101 finished""#
            ),
            Script::MoveToFinished { target: "bull:review:failed".into(), job: "bull:review:pr-101".into() }
        );
        assert_eq!(
            call(
                r#"1796549994.429087 [0 127.0.0.1:52584] "evalsha" "x" "2" "bull:review:pr-101:lock" "bull:review:stalled" "c71b2908" "2000" "pr-101""#
            ),
            Script::ExtendLock { lock: "bull:review:pr-101:lock".into() }
        );
        assert_eq!(
            call(r#"1796549990.103499 [0 127.0.0.1:52456] "eval" "--[[ Adds a job ]]" "6" "a" "b" "c" "d" "e" "f""#),
            Script::Other
        );
        assert_eq!(
            call(r#"1796549990.103499 [0 127.0.0.1:52456] "brpoplpush" "bull:q:wait" "bull:q:active" "5""#),
            Script::Command("brpoplpush".into())
        );
        assert_eq!(call(r#"1796549990.103499 [0 127.0.0.1:52456] "evalsha" "x" "99999""#), Script::Other);
    }
    #[test]
    fn bull_3s_stall_limit_written_by_hset_is_the_failure() {
        // Bull 3.23.3's moveStalledJobsToWait writes the reason with HSET (Bull 4: HMSET with
        // finishedOn); recorded by tests/e2e/bull-stalled.mjs with LEASETRACE_E2E_BULL=bull3.
        let text = r#"1796562977.046823 [0 127.0.0.1:47874] "evalsha" "ff9c18634832b0b4115a19b4de5f4788a7cfbd4e" "7" "bull:notify:stalled" "bull:notify:wait" "bull:notify:active" "bull:notify:failed" "bull:notify:stalled-check" "bull:notify:meta-paused" "bull:notify:paused" "1" "bull:notify:" "1796562977046" "1000"
1796562977.046898 [0 lua] "EXISTS" "bull:notify:stalled-check"
1796562977.046915 [0 lua] "SET" "bull:notify:stalled-check" "1796562977046" "PX" "1000"
1796562977.046931 [0 lua] "SMEMBERS" "bull:notify:stalled"
1796562977.046940 [0 lua] "EXISTS" "bull:notify:meta-paused"
1796562977.046947 [0 lua] "DEL" "bull:notify:stalled"
1796562977.046958 [0 lua] "EXISTS" "bull:notify:pr-202:lock"
1796562977.046975 [0 lua] "LREM" "bull:notify:active" "1" "pr-202"
1796562977.046986 [0 lua] "HINCRBY" "bull:notify:pr-202" "stalledCounter" "1"
1796562977.047002 [0 lua] "ZADD" "bull:notify:failed" "1796562977046" "pr-202"
1796562977.047011 [0 lua] "HSET" "bull:notify:pr-202" "failedReason" "job stalled more than allowable limit"
1796562977.047025 [0 lua] "PUBLISH" "bull:notify:failed" "{\"jobId\":\"pr-202\", \"val\": \"job stalled more than maxStalledCount\"}"
1796562977.047042 [0 lua] "LRANGE" "bull:notify:active" "0" "-1""#;
        let spec = SourceSpec::new(SourceKind::RedisMonitor, "monitor.txt".into(), None, String::new());
        let (mut events, mut summary) = (Vec::new(), InputSummary::new("t", "redis-monitor", "redis-monitor", None));
        RedisMonitor
            .read(&spec, 0, Box::new(std::io::Cursor::new(text.to_string())), &mut events, &mut summary)
            .unwrap();
        assert_eq!(events.len(), 1, "{events:#?}");
        assert_eq!(events[0].kind, EventKind::JobFailed);
        assert_eq!(events[0].job_id.as_deref(), Some("pr-202"));
        assert_eq!(summary.lines, summary.used + summary.ignored + summary.rejected);
    }
}
