//! BullMQ job hashes (`HGETALL <prefix>:<queue>:<id>`), in the shapes clients export them.
//!
//! Two formats, each of which tells the shapes it reads apart by their content:
//! - `hgetall-json` (`json.rs`): `{key, fields}` and `{key, id, state, hash}` records (a JSON
//!   array, JSON Lines, or objects one after another), one object keyed by Redis key, and BullMQ's
//!   own job JSON (what `JSON.stringify(await queue.getJobs())` writes);
//! - `hgetall-text` (`text.rs`): what `redis-cli HGETALL` prints, in each of its forms, for many
//!   keys at once (each reply after its key, as a shell loop or an interactive session shows it).
//!
//! Both read a dump into `Record`s, one at a time; this file decides what each record is (a job,
//! or one of BullMQ's other keys, ignored with its reason), which job it is (`job_key`: the id and
//! queue, from the key unless the record gives them), and which events its time fields are.
//!
//! A hash keeps only the latest value of each field: `processedOn` is overwritten on every
//! activation, so a hash shows the last activation only, and detectors take activations from it
//! only when no other channel saw the job. Field names follow BullMQ v5 (`atm`, `ats`, `stc`,
//! `defa`, `pb`); the older `attemptsMade` and `stalledCounter`, and the job JSON's
//! `attemptsStarted`, `processedBy` and `deferredFailure`, are read as well.
//!
//! Legacy Bull (3.x/4.x) keeps its jobs under the same keys (`bull:<queue>:<id>`) with the older
//! names, so its dumps are read here too; what is Bull's alone is `retriedOn` and a
//! `failedReason` that a late worker's refused finish wrote (`missing_lock_note`).

mod json;
mod text;

use std::collections::HashMap;
use std::fmt::Write as _;

use chrono::{DateTime, Utc};

use crate::error::{Error, Result};
use crate::model::{Channel, Event, EventKind, InputSummary, Moment, Origin, Text};
use crate::time;

use crate::ingest::SourceSpec;

pub use json::HgetallJson;
pub use text::HgetallText;

/// The largest record read (one JSON value, or one line of redis-cli text): a job hash larger than
/// this is an error naming its line, never an unbounded read into memory. Job hashes are a few
/// kilobytes unless their `data` or `returnvalue` is large; 64 MiB leaves room for those.
pub const MAX_RECORD_BYTES: usize = 64 << 20;

/// The evidence text kept for a record is cut at this many bytes (a job's `data` can be large, and
/// a report shows the text of every event it cites).
const MAX_EVIDENCE_BYTES: usize = 4096;

/// A size for a message: `64 MiB`, `400 bytes`.
fn size(bytes: usize) -> String {
    if bytes >= 1 << 20 { format!("{} MiB", bytes >> 20) } else { format!("{bytes} bytes") }
}

/// The slot a scheduled round's job id carries: `repeat:<scheduler or hash>:<slot millis>`.
pub fn repeat_slot(job_id: &str) -> Option<DateTime<Utc>> {
    let rest = job_id.strip_prefix("repeat:")?;
    let (_, millis) = rest.rsplit_once(':')?;
    if millis.len() < 12 || !millis.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    DateTime::from_timestamp_millis(millis.parse().ok()?)
}

/// One record of a dump, whatever shape it was read from.
struct Record {
    /// The lines of the file the record spans (the first is the line its events cite).
    start: u64,
    end: u64,
    /// The Redis key, when the dump gives it.
    key: Option<String>,
    /// The job id, when the dump gives it apart from the key.
    id: Option<String>,
    /// The job's state (`completed`, `failed`, `active`, ...), when the dump gives it.
    state: Option<String>,
    /// `<prefix>:<queue>`, when the dump gives it apart from the key (the job JSON's
    /// `queueQualifiedName`).
    qualified: Option<String>,
    reply: Reply,
    /// The evidence text of the record's events.
    raw: String,
}

/// What the dump holds for the key.
enum Reply {
    /// The hash's fields and values (none: an empty reply, the key did not exist).
    Hash(Vec<(String, String)>),
    /// redis-cli's error for the key (`WRONGTYPE ...`: the key holds a list, a stream, ...).
    NotAHash(String),
    /// No reply after the key's line (a list of keys, or a reply cut off).
    Missing,
}

/// `text` cut to `MAX_EVIDENCE_BYTES` at a character boundary.
fn evidence(mut text: String) -> String {
    if text.len() > MAX_EVIDENCE_BYTES {
        let more = text.len() - MAX_EVIDENCE_BYTES;
        let mut cut = MAX_EVIDENCE_BYTES;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        let _ = write!(text, "… ({more} bytes more)");
    }
    text
}

/// The value of the first of `names` the hash has, when not empty.
fn field<'a>(fields: &'a [(String, String)], names: &[&str]) -> Option<&'a str> {
    names
        .iter()
        .find_map(|name| fields.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str()).filter(|v| !v.is_empty()))
}

/// Whether a hash is a job's: BullMQ writes `name` and `timestamp` into every job hash it adds
/// (a job scheduler's hash has a name but no timestamp; the queue's `meta` hash has neither).
fn is_job_hash(fields: &[(String, String)]) -> bool {
    fields.iter().any(|(k, _)| k == "name") && field(fields, &["timestamp"]).is_some()
}

// ---------------------------------------------------------------- keys

/// The parts of a key between `:`, a `{...}` hash tag counting as one part whatever it holds
/// (Redis Cluster hashes only the tag: `{bull}:pr-review:42`, `{app:bull}:pr-review:42`).
fn segments(key: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut from, mut at) = (0, 0);
    let bytes = key.as_bytes();
    while at < bytes.len() {
        match bytes[at] {
            b'{' => {
                // A tag runs to the next `}`; a `{` that no `}` closes is an ordinary character.
                if let Some(close) = key[at + 1..].find('}') {
                    at += close + 1;
                }
            }
            b':' => {
                parts.push(&key[from..at]);
                from = at + 1;
            }
            _ => {}
        }
        at += 1;
    }
    parts.push(&key[from..]);
    parts
}

/// Whether BullMQ could have given a job this id: its own ids are numbers; a custom id has no `:`,
/// or exactly two (BullMQ 5.81.5 refuses others: `Custom Id cannot contain :` in
/// `src/classes/job.ts`); a scheduled job's is `repeat:<scheduler id>:<millis>`, and scheduler ids
/// may hold `:` themselves.
fn bullmq_id(id: &str) -> bool {
    if id.is_empty() {
        return false;
    }
    let repeat =
        id.strip_prefix("repeat:").and_then(|rest| rest.rsplit_once(':')).is_some_and(|(scheduler, millis)| {
            !scheduler.is_empty() && !millis.is_empty() && millis.bytes().all(|b| b.is_ascii_digit())
        });
    repeat || !id.contains(':') || id.split(':').count() == 3
}

/// Which job a record is.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct JobKey {
    pub(crate) id: String,
    /// `None` when the dump gives an id but neither a key nor a queue.
    pub(crate) queue: Option<String>,
    /// Whether another split of the key was possible too (see `job_key`).
    pub(crate) ambiguous: bool,
}

/// The job a record is, or why it cannot be told. BullMQ's job keys are `<prefix>:<queue>:<id>`;
/// BullMQ refuses `:` in queue names (`Queue name cannot contain :` in
/// `src/classes/queue-base.ts`), but a prefix may hold any number (`myapp:bull`), so:
/// - an `id` given by the record is the id, and the queue is the part of the key before it;
/// - else a declared queue (`queue = "..."`, `--queue`) marks where the id begins;
/// - else the shortest prefix that leaves an id BullMQ could have given (`bullmq_id`) is taken:
///   `bull:pr-review:42` → `bull` / `pr-review` / `42`, `myapp:bull:mail:7` → `myapp:bull` /
///   `mail` / `7` (`mail:7` is no BullMQ id). Only a custom id of three parts leaves two splits
///   (`bull:q:a:b:c` is job `a:b:c` of `q`, or job `c` of `b` under the prefix `bull:q:a`): the
///   first is taken and the key counted as ambiguous, for the report to say.
fn job_key(
    key: Option<&str>,
    id: Option<&str>,
    qualified: Option<&str>,
    declared: Option<&str>,
) -> std::result::Result<JobKey, String> {
    let queue_of = |head: &str| -> Option<String> {
        if let Some(declared) = declared
            && (head == declared || head.ends_with(&format!(":{declared}")))
        {
            return Some(declared.to_string());
        }
        segments(head).last().filter(|q| !q.is_empty()).map(|q| (*q).to_string())
    };
    if let Some(id) = id {
        if id.is_empty() {
            return Err("the job id is empty".into());
        }
        let head = match key {
            Some(key) => Some(key.strip_suffix(id).and_then(|h| h.strip_suffix(':')).ok_or_else(|| {
                format!("key '{key}' does not end with the job id '{id}' the record gives: which is it?")
            })?),
            None => qualified,
        };
        return Ok(JobKey {
            id: id.to_string(),
            queue: head.and_then(queue_of).or(declared.map(str::to_string)),
            ambiguous: false,
        });
    }
    let Some(key) = key else {
        return Err("a job hash without its key or id: cannot tell which job it is (echo each key before its HGETALL, or export {\"key\": ..., \"fields\": ...})".into());
    };
    let parts = segments(key);
    let expected = "expected <prefix>:<queue>:<job id>";
    if parts.len() < 3 {
        return Err(format!("key '{key}' is not a job key: {expected}"));
    }
    let id_from = |queue_at: usize| parts[queue_at + 1..].join(":");
    if let Some(declared) = declared {
        let at = (1..parts.len() - 1).find(|&i| parts[i] == declared).ok_or_else(|| {
            format!("key '{key}' is not of queue '{declared}' (the queue declared for this source): {expected}")
        })?;
        let id = id_from(at);
        if id.is_empty() {
            return Err(format!("key '{key}' has no job id: {expected}"));
        }
        return Ok(JobKey { id, queue: Some(declared.to_string()), ambiguous: false });
    }
    if parts.last().is_some_and(|id| id.is_empty()) {
        return Err(format!("key '{key}' has no job id: {expected}"));
    }
    // The last part alone is always an id BullMQ could have given: a split is always found.
    let at = (1..parts.len() - 1).find(|&i| bullmq_id(&id_from(i))).unwrap_or(parts.len() - 2);
    let id = id_from(at);
    let ambiguous = !id.starts_with("repeat:") && id.contains(':');
    Ok(JobKey { id, queue: Some(parts[at].to_string()), ambiguous })
}

/// The queue and job id of a job key, split as the readers split it (`job_key`, no queue declared):
/// for callers that propose a source's `queue` from a sample key.
pub fn queue_and_id(key: &str) -> Option<(String, String)> {
    let job = job_key(Some(key), None, None, None).ok()?;
    Some((job.queue?, job.id))
}

/// BullMQ's keys of a queue that are not jobs (`QueueKeys.getKeys` in `src/classes/queue-keys.ts`).
const QUEUE_KEYS: &[&str] = &[
    "active",
    "wait",
    "waiting-children",
    "paused",
    "id",
    "delayed",
    "prioritized",
    "stalled-check",
    "completed",
    "failed",
    "stalled",
    "repeat",
    "limiter",
    "meta",
    "events",
    "pc",
    "marker",
    "de",
    "metrics",
];

/// Legacy Bull's keys of a queue that BullMQ does not have (bull 4.16.5 lib/queue.js `keys`).
const BULL_QUEUE_KEYS: &[&str] = &["meta-paused", "priority"];

/// BullMQ's keys beside a job's hash (`<job key>:lock`, ...), written by its Lua scripts.
const JOB_KEYS: &[&str] = &["lock", "logs", "dependencies", "processed", "failed", "unsuccessful"];

/// Which of BullMQ's keys that are not job hashes `key` is, as the reason it is ignored (a reason
/// is counted, so it names the kind of key, not the key).
fn other_key(key: &str) -> Option<String> {
    let parts = segments(key);
    let n = parts.len();
    if n < 3 {
        return None;
    }
    if n >= 4 && parts[n - 2] == "metrics" || n >= 5 && parts[n - 3] == "metrics" {
        return Some("BullMQ's ':metrics:*' key, not a job".into());
    }
    if n >= 4 && parts[n - 2] == "de" {
        return Some("BullMQ's ':de:<id>' deduplication key, not a job".into());
    }
    // `<prefix>:<queue>:repeat:<scheduler id>`: a job scheduler (its id may hold `:`), whereas a
    // scheduled job's key ends in its slot's milliseconds.
    if let Some(at) = (2..n - 1).find(|&i| parts[i] == "repeat")
        && repeat_slot(&parts[at..].join(":")).is_none()
    {
        return Some("job scheduler hash (':repeat:<scheduler id>'), not a job".into());
    }
    let last = parts[n - 1];
    if BULL_QUEUE_KEYS.contains(&last) {
        return Some(format!("Bull's ':{last}' key, not a job"));
    }
    (QUEUE_KEYS.contains(&last) || JOB_KEYS.contains(&last)).then(|| format!("BullMQ's ':{last}' key, not a job"))
}

/// Why a record that is not a job hash is ignored.
fn not_a_job(record: &Record) -> String {
    if let Some(kind) = record.key.as_deref().and_then(other_key) {
        return kind;
    }
    match &record.reply {
        Reply::NotAHash(_) => "not a hash (redis-cli answered WRONGTYPE)".into(),
        Reply::Missing => "a key without a HGETALL reply after it".into(),
        Reply::Hash(fields) if fields.is_empty() => "empty reply: no such key (removed before HGETALL?)".into(),
        Reply::Hash(_) => "not a job hash (no 'name' and 'timestamp' fields)".into(),
    }
}

// ---------------------------------------------------------------- accounting

/// What became of a record's lines. The order is the precedence when records share a line (a
/// JSON document written on one line): a rejection is never hidden, a used line is not noise.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Ignored(String),
    Used,
    /// The reason, and whether it is listed at this line (the record's first).
    Rejected(String, bool),
}

impl Outcome {
    fn rank(&self) -> u8 {
        match self {
            Outcome::Ignored(_) => 0,
            Outcome::Used => 1,
            Outcome::Rejected(..) => 2,
        }
    }
}

/// Counts every line of a dump exactly once: a record's lines by its outcome, the lines between
/// records (blank, JSON brackets, ...) with their own reason. The last line counted is held
/// until the next record: it may start there too.
#[derive(Default)]
struct LineAccount {
    /// Lines counted, the held one included.
    through: u64,
    held: Option<(u64, Outcome)>,
}

impl LineAccount {
    fn count(summary: &mut InputSummary, line: u64, outcome: Outcome) {
        summary.lines += 1;
        match outcome {
            Outcome::Used => summary.used(),
            Outcome::Ignored(reason) => summary.ignore(&reason),
            Outcome::Rejected(reason, true) => summary.reject(line, reason),
            Outcome::Rejected(_, false) => summary.rejected += 1,
        }
    }

    fn flush(&mut self, summary: &mut InputSummary) {
        if let Some((line, outcome)) = self.held.take() {
            Self::count(summary, line, outcome);
        }
    }

    /// Lines up to `line` not in a record, ignored for `reason`.
    fn gap(&mut self, summary: &mut InputSummary, line: u64, reason: &str) {
        if line > self.through {
            self.flush(summary);
            for _ in self.through + 1..=line {
                summary.lines += 1;
                summary.ignore(reason);
            }
            self.through = line;
        }
    }

    /// A record on lines `start..=end`; lines before it not yet counted are ignored for `between`.
    fn record(&mut self, summary: &mut InputSummary, start: u64, end: u64, outcome: Outcome, between: &str) {
        let first = match outcome {
            Outcome::Rejected(ref reason, _) => Outcome::Rejected(reason.clone(), true),
            ref other => other.clone(),
        };
        let rest = match outcome {
            Outcome::Rejected(reason, _) => Outcome::Rejected(reason, false),
            other => other,
        };
        match &mut self.held {
            Some((line, held)) if *line == start => {
                if first.rank() > held.rank() {
                    *held = first;
                }
            }
            _ => {
                self.gap(summary, start.saturating_sub(1), between);
                self.flush(summary);
                self.held = Some((start, first));
            }
        }
        if end > start {
            self.flush(summary);
            for line in start + 1..end {
                Self::count(summary, line, rest.clone());
            }
            self.held = Some((end, rest));
        }
        self.through = self.through.max(end);
    }

    /// The end of a dump of `lines` lines.
    fn finish(&mut self, summary: &mut InputSummary, lines: u64, between: &str) {
        self.gap(summary, lines, between);
        self.flush(summary);
    }
}

// ---------------------------------------------------------------- records → events

/// Takes a dump's records one at a time: decides what each is, makes its events, counts its lines.
struct Jobs<'a> {
    spec: &'a SourceSpec,
    source: u16,
    events: &'a mut Vec<Event>,
    summary: &'a mut InputSummary,
    account: LineAccount,
    /// Each job read, by queue and id, with the line it was read at: a job twice is refused.
    seen: HashMap<(Option<String>, String), u64>,
    /// Ids seen in more than one queue: leasetrace tells jobs apart by id.
    queues_by_id: HashMap<String, Option<String>>,
    shared_ids: u64,
    /// Keys split by the first of two possible readings (`job_key`), and the first of them.
    ambiguous: (u64, Option<String>),
    /// Hashes with a `failedReason` and no `finishedOn` (legacy Bull 3's stall limit, a refused
    /// finish saved into a running job's hash), and the first of them: a failure with no time.
    untimed_failures: (u64, Option<(String, String)>),
    /// The evidence of the line last given events: the texts of records that share it.
    held_text: Option<(u64, Vec<String>)>,
}

impl<'a> Jobs<'a> {
    fn new(spec: &'a SourceSpec, source: u16, events: &'a mut Vec<Event>, summary: &'a mut InputSummary) -> Self {
        Jobs {
            spec,
            source,
            events,
            summary,
            account: LineAccount::default(),
            seen: HashMap::new(),
            queues_by_id: HashMap::new(),
            shared_ids: 0,
            ambiguous: (0, None),
            untimed_failures: (0, None),
            held_text: None,
        }
    }

    /// Lines up to `line` that are no record, ignored for `reason`.
    fn gap(&mut self, line: u64, reason: &str) {
        self.account.gap(self.summary, line, reason);
    }

    fn take(&mut self, record: &Record, between: &str) -> Result<()> {
        let outcome = self.outcome(record)?;
        self.account.record(self.summary, record.start, record.end, outcome, between);
        Ok(())
    }

    fn outcome(&mut self, record: &Record) -> Result<Outcome> {
        // The queue's meta hash: no job, but it names the BullMQ of the Queue that wrote it.
        if let (Some(key), Reply::Hash(fields)) = (record.key.as_deref(), &record.reply)
            && segments(key).last() == Some(&"meta")
            && let Some(version) = field(fields, &["version"]).and_then(|v| v.strip_prefix("bullmq:"))
            && crate::model::params::parse_version(version).is_some()
        {
            self.summary.meta_versions.push((version.to_string(), record.start));
        }
        let fields = match &record.reply {
            Reply::Hash(fields) if is_job_hash(fields) => fields,
            // Only WRONGTYPE says the key is no hash: after any other error (MOVED on a cluster,
            // NOAUTH, LOADING, ...) the key may well be a job's, unread.
            Reply::NotAHash(message) if !message.starts_with("WRONGTYPE") => {
                let whose = record.key.as_deref().map_or_else(String::new, |key| format!(" for '{key}'"));
                return Ok(Outcome::Rejected(
                    format!("redis-cli answered '{message}'{whose}: the hash was not read"),
                    true,
                ));
            }
            _ => return Ok(Outcome::Ignored(not_a_job(record))),
        };
        let job = match job_key(
            record.key.as_deref(),
            record.id.as_deref(),
            record.qualified.as_deref(),
            self.spec.queue.as_deref(),
        ) {
            Ok(job) => job,
            Err(reason) => return Ok(Outcome::Rejected(reason, true)),
        };
        let finished = match record.state.as_deref() {
            None => None,
            Some(state) => match STATES.iter().find(|(name, _)| *name == state) {
                Some((_, finished)) => *finished,
                None => {
                    return Ok(Outcome::Rejected(
                        format!(
                            "job {}: state '{state}' is not a BullMQ job state (one of {})",
                            job.id,
                            STATES.iter().map(|(name, _)| *name).collect::<Vec<_>>().join(", ")
                        ),
                        true,
                    ));
                }
            },
        };
        let identity = (job.queue.clone(), job.id.clone());
        if let Some(&line) = self.seen.get(&identity) {
            return Ok(Outcome::Rejected(
                format!("job {} was read already, at line {line}: one record per job (two dumps in one file?)", job.id),
                true,
            ));
        }
        let made = job_events(self.spec, self.source, record.start, &job, fields, finished)?;
        // A job the dump says is waiting, delayed or active keeps its last failed attempt's reason
        // on a retry: that is no failure of the job.
        if let Some(reason) = field(fields, &["failedReason"])
            && field(fields, &["finishedOn"]).is_none()
            && (record.state.is_none() || finished == Some(EventKind::JobFailed))
        {
            self.untimed_failures.0 += 1;
            if self.untimed_failures.1.is_none() {
                let reason: String = reason.chars().take(200).collect();
                self.untimed_failures.1 = Some((job.id.clone(), reason));
            }
        }
        if made.is_empty() {
            return Ok(Outcome::Ignored("job hash without times".into()));
        }
        self.seen.insert(identity, record.start);
        match self.queues_by_id.get(&job.id) {
            Some(queue) if *queue != job.queue => self.shared_ids += 1,
            Some(_) => {}
            None => {
                self.queues_by_id.insert(job.id.clone(), job.queue.clone());
            }
        }
        if job.ambiguous {
            self.ambiguous.0 += 1;
            if self.ambiguous.1.is_none() {
                self.ambiguous.1.clone_from(&record.key);
            }
        }
        self.keep_text(record.start, &record.raw)?;
        self.events.extend(made);
        Ok(Outcome::Used)
    }

    /// Keeps the evidence of a line; records that share a line (a JSON document on one line) share
    /// its evidence, which then names them all rather than showing one record as the others'.
    fn keep_text(&mut self, line: u64, raw: &str) -> Result<()> {
        match &mut self.held_text {
            Some((held, texts)) if *held == line => texts.push(raw.to_string()),
            _ => {
                self.flush_text()?;
                self.held_text = Some((line, vec![raw.to_string()]));
            }
        }
        Ok(())
    }

    fn flush_text(&mut self) -> Result<()> {
        let Some((line, texts)) = self.held_text.take() else { return Ok(()) };
        let line = crate::ingest::line_of(self.spec, line)?;
        if let [one] = texts.as_slice() {
            self.summary.texts.keep(line, one);
        } else {
            let text = format!("{} job records start on this line: {}", texts.len(), texts.join(" "));
            self.summary.texts.keep(line, &evidence(text));
        }
        Ok(())
    }

    /// The end of a dump of `lines` lines: the lines after the last record, and what the report
    /// must say about the dump.
    fn finish(mut self, lines: u64, between: &str) -> Result<()> {
        self.account.finish(self.summary, lines, between);
        self.flush_text()?;
        if let (count, Some(example)) = &self.ambiguous {
            self.summary.notes.push(format!(
                "{count} job key(s) could be split two ways (e.g. '{example}'): read as <prefix>:<queue>:<custom id of three parts>; declare queue = \"...\" for the source if the queue is another"
            ));
        }
        if self.shared_ids > 0 {
            self.summary.notes.push(format!(
                "{} job id(s) appear in more than one queue: leasetrace tells jobs apart by id alone, so each such id is taken for one job; export one queue at a time",
                self.shared_ids
            ));
        }
        if let (count, Some((job, reason))) = &self.untimed_failures {
            let stall_limit = reason == crate::detect::stalled_limit_exceeded::STALLED_LIMIT_REASON;
            self.summary.notes.push(format!(
                "{count} job hash(es) hold a failedReason but no finishedOn, so the hash gives that failure no time and it is not on the timeline (e.g. job {job}: \"{reason}\"){}",
                if stall_limit {
                    ": legacy Bull 3's stalled check writes the stall limit's reason alone; the listeners' log or a redis-cli MONITOR recording gives its time"
                } else {
                    ": the reason of a failed attempt whose job was retried (no state in the dump to tell), a failure whose finishedOn was not written, or a late worker's refused finish saved into the hash (Bull's saveStacktrace)"
                }
            ));
        }
        if self.seen.is_empty() && self.summary.rejected == 0 {
            let reasons: Vec<String> =
                self.summary.ignored_by_reason.iter().map(|(reason, n)| format!("{n} {reason}")).collect();
            self.summary.notes.push(format!(
                "no job hash in this file (lines ignored: {}): it contributes nothing",
                if reasons.is_empty() { "none".to_string() } else { reasons.join("; ") }
            ));
        }
        Ok(())
    }
}

/// BullMQ's job states (`Job.getState()`), and the event `finishedOn` is for in each: `None` where
/// the state does not say (the hash's fields decide, see `job_events`).
const STATES: &[(&str, Option<EventKind>)] = &[
    ("completed", Some(EventKind::JobCompleted)),
    ("failed", Some(EventKind::JobFailed)),
    ("active", None),
    ("waiting", None),
    ("wait", None),
    ("delayed", None),
    ("prioritized", None),
    ("waiting-children", None),
    ("paused", None),
    ("unknown", None),
];

/// 2001-09-09T01:46:40Z, the first epoch millisecond with 13 digits: every `Date.now()` BullMQ
/// (2019) or Bull (2013) ever wrote is later.
const EARLIEST_BULLMQ_MILLIS: i64 = 1_000_000_000_000;

/// The events of one job hash: `timestamp` → added, `processedOn` → its last activation,
/// `finishedOn` → completed or failed (`finished`, from the dump's state, else the hash's fields).
/// The PostgreSQL backend's job rows are read by it too, their columns named as the hash's fields
/// (`bullmq::postgres::jobs`).
pub(crate) fn job_events(
    spec: &SourceSpec,
    source: u16,
    line: u64,
    job: &JobKey,
    fields: &[(String, String)],
    finished: Option<EventKind>,
) -> Result<Vec<Event>> {
    let job_id = job.id.as_str();
    let millis = |name: &str| -> Result<Option<Moment>> {
        let Some(text) = field(fields, &[name]) else { return Ok(None) };
        let value: i64 = text.parse().map_err(|_| {
            Error::input(
                &spec.path,
                Some(line),
                format!("job {job_id}: '{name}' is '{text}', expected epoch milliseconds"),
            )
        })?;
        // BullMQ writes `Date.now()`, 13 digits since 2001: a smaller number is no time it wrote
        // but seconds, a number cut short or a sign (found by fuzzing: `finishedOn`
        // "-796159462886" gave a job finished in 1944, `timestamp` 1796159 one added in 1970).
        if value < EARLIEST_BULLMQ_MILLIS {
            return Err(Error::input(
                &spec.path,
                Some(line),
                format!(
                    "job {job_id}: '{name}' is '{text}', before 2001-09-09 as epoch milliseconds: BullMQ writes Date.now() (13 digits); is the value in seconds, or cut short?"
                ),
            ));
        }
        DateTime::from_timestamp_millis(value).and_then(|at| time::moment(at).ok()).map(Some).ok_or_else(|| {
            Error::input(
                &spec.path,
                Some(line),
                format!("job {job_id}: '{name}' is '{text}', outside the years 1677-2262 that a timeline holds"),
            )
        })
    };
    let counters: Vec<String> = [
        ("ats", &["ats", "attemptsStarted"][..]),
        ("atm", &["atm", "attemptsMade"]),
        ("stc", &["stc", "stalledCounter"]),
    ]
    .iter()
    // A counter at 0 is a counter BullMQ has not written yet (its job JSON says 0 for those).
    .filter_map(|(label, names)| field(fields, names).filter(|v| *v != "0").map(|v| format!("{label}={v}")))
    .collect();
    // One hash, one line: its events share their origin.
    let origin = Origin { channel: Channel::JobHash, source, line: crate::ingest::line_of(spec, line)? };
    let scope = crate::model::Scope {
        job_id: Some(job_id.into()),
        job_name: field(fields, &["name"]).map(Text::from),
        queue: job.queue.as_deref().map(Text::from),
        run_id: None,
        slot: repeat_slot(job_id),
        worker: field(fields, &["pb", "processedBy"]).map(Text::from),
        instance: None,
    }
    .interned();
    let make = |at: Moment, kind: EventKind, detail: Option<String>| {
        let mut event = Event::new(at, kind, origin);
        event.set_scope(scope);
        event.set_detail(detail.as_deref().map(Text::from));
        event
    };
    let mut out = Vec::new();
    if let Some(at) = millis("timestamp")? {
        out.push(make(at, EventKind::JobAdded, retry_options(field(fields, &["opts"]))));
    }
    if let Some(at) = millis("processedOn")? {
        let mut detail = String::from("last activation (processedOn)");
        if !counters.is_empty() {
            detail = format!("{detail}; {}", counters.join(" "));
        }
        out.push(make(at, EventKind::JobActive, Some(detail)));
    }
    if let Some(at) = millis("finishedOn")? {
        // A hash does not say which set the job ended in: a return value means completed,
        // otherwise a failure reason means failed (a state in the dump says it outright).
        let reason = field(fields, &["failedReason"]);
        let kind = finished.unwrap_or(if field(fields, &["returnvalue"]).is_none() && reason.is_some() {
            EventKind::JobFailed
        } else {
            EventKind::JobCompleted
        });
        let detail = match (kind, reason) {
            (_, Some(reason)) if reason.starts_with(crate::model::bull::MISSING_LOCK_PREFIX) => {
                Some(missing_lock_note(reason, kind))
            }
            (EventKind::JobFailed, reason) => reason.map(str::to_string),
            _ => None,
        };
        out.push(make(at, kind, detail));
    }
    // Legacy Bull: `job.retry()` clears processedOn and finishedOn and writes retriedOn (bull
    // 4.16.5 lib/job.js `retry`): the job went back to wait then.
    if let Some(at) = millis("retriedOn")? {
        out.push(make(at, EventKind::JobWaiting, Some("retried (retriedOn)".into())));
    }
    if let Some(reason) = field(fields, &["defa", "deferredFailure"])
        && let Some(last) = out.last_mut()
        && last.kind != EventKind::JobFailed
    {
        let note = format!("deferred failure pending: {reason}");
        last.set_detail(Some(
            last.detail().map_or_else(|| Text::from(note.as_str()), |d| Text::from(format!("{d}; {note}").as_str())),
        ));
    }
    Ok(out)
}

/// The words for a Bull job hash whose `failedReason` is a refused finish (`Missing lock for job 1
/// finished`): Bull's failure handler saves the attempt (`saveStacktrace`: `failedReason`,
/// `stacktrace`, `attemptsMade`) before the lock-checked move, and with no lock check of its own,
/// so a late worker's refused finish is written into the hash of a job another worker owns, with
/// no time, over whatever reason was there.
fn missing_lock_note(reason: &str, kind: EventKind) -> String {
    let reason: String = reason.chars().take(200).collect();
    let over = if kind == EventKind::JobFailed { ", over the reason the job failed with" } else { "" };
    format!(
        "failedReason \"{reason}\": a late worker's refused finish, saved into the hash by Bull's saveStacktrace (no lock check, no time){over}"
    )
}

/// What a job's options (`opts`, the JSON BullMQ keeps in the hash) say of its retries, as the
/// job-added event's detail: `attempts=3 backoff=exponential:1000ms`. A retry delayed by the
/// job's own backoff is not a retry without backoff (`retry-storm`), however the delays came out.
/// `None` when the options say nothing of retries, or are not JSON.
fn retry_options(opts: Option<&str>) -> Option<String> {
    let opts: serde_json::Value = serde_json::from_str(opts?).ok()?;
    let mut said = Vec::new();
    // One attempt (or BullMQ's 0, the default) is no retry at all.
    if let Some(attempts) = opts.get("attempts").and_then(serde_json::Value::as_u64).filter(|&n| n > 1) {
        said.push(format!("attempts={attempts}"));
    }
    // `backoff` is a number (a fixed delay in ms) or `{type, delay}`.
    match opts.get("backoff") {
        Some(serde_json::Value::Number(delay)) => said.push(format!("backoff=fixed:{delay}ms")),
        Some(serde_json::Value::Object(backoff)) => {
            let kind = backoff.get("type").and_then(serde_json::Value::as_str).unwrap_or("fixed");
            // A name a server chose: only what a backoff type is written with.
            let kind: String = kind.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-').take(32).collect();
            let delay = backoff.get("delay").and_then(serde_json::Value::as_u64).unwrap_or(0);
            said.push(format!("backoff={kind}:{delay}ms"));
        }
        _ => {}
    }
    (!said.is_empty()).then(|| said.join(" "))
}

/// The backoff a job-added detail (`retry_options`) declares: its type and delay in ms.
pub fn declared_backoff(detail: &str) -> Option<(&str, u64)> {
    let rest = detail.split(' ').find_map(|part| part.strip_prefix("backoff="))?;
    let (kind, delay) = rest.split_once(':')?;
    Some((kind, delay.strip_suffix("ms")?.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jobs_retry_options_are_read_from_its_opts() {
        // bullmq 6.7.0's job JSON, as HGETALL gives it.
        let opts = r#"{"attempts":3,"backoff":{"type":"exponential","delay":1000},"jobId":"gh-1004"}"#;
        let detail = retry_options(Some(opts)).unwrap();
        assert_eq!(detail, "attempts=3 backoff=exponential:1000ms");
        assert_eq!(declared_backoff(&detail), Some(("exponential", 1000)));
        assert_eq!(
            retry_options(Some(r#"{"attempts":4,"backoff":800}"#)).as_deref(),
            Some("attempts=4 backoff=fixed:800ms")
        );
        assert_eq!(retry_options(Some(r#"{"jobId":"7"}"#)), None);
        assert_eq!(retry_options(Some(r#"{"attempts":0}"#)), None, "no retries");
        assert_eq!(retry_options(Some("not json")), None);
        assert_eq!(declared_backoff("attempts=3"), None);
    }

    #[test]
    fn repeat_job_ids_carry_their_slot() {
        assert_eq!(
            repeat_slot("repeat:pr-review-sweep:1791333180000").map(|s| s.to_rfc3339()).as_deref(),
            Some("2026-10-07T00:33:00+00:00")
        );
        assert_eq!(repeat_slot("repeat:8f3a:1791333180000").map(|s| s.timestamp()), Some(1_791_333_180));
        assert_eq!(repeat_slot("42"), None);
    }

    fn key(key: &str, declared: Option<&str>) -> Split {
        job_key(Some(key), None, None, declared).map(|j| (j.id, j.queue, j.ambiguous))
    }

    type Split = std::result::Result<(String, Option<String>, bool), String>;

    fn ok(id: &str, queue: &str, ambiguous: bool) -> (String, Option<String>, bool) {
        (id.to_string(), Some(queue.to_string()), ambiguous)
    }

    #[test]
    fn keys_are_split_by_what_bullmq_allows_in_ids_and_queue_names() {
        assert_eq!(key("bull:pr-review:42", None), Ok(ok("42", "pr-review", false)));
        assert_eq!(
            key("bull:pr-review:repeat:pr-review-sweep:1791333180000", None),
            Ok(ok("repeat:pr-review-sweep:1791333180000", "pr-review", false))
        );
        // A scheduler id may hold `:`.
        assert_eq!(key("bull:q:repeat:team:a:1791333180000", None), Ok(ok("repeat:team:a:1791333180000", "q", false)));
        // A prefix with `:`: `mail:7` is no id BullMQ gives, so the prefix is `myapp:bull`.
        assert_eq!(key("myapp:bull:mail:7", None), Ok(ok("7", "mail", false)));
        assert_eq!(
            key("myapp:bull:mail:repeat:s:1791333180000", None),
            Ok(ok("repeat:s:1791333180000", "mail", false))
        );
        // Hash tags are one part, whatever they hold.
        assert_eq!(key("{bull}:notify:1", None), Ok(ok("1", "notify", false)));
        assert_eq!(key("{app:bull}:notify:1", None), Ok(ok("1", "notify", false)));
        assert_eq!(key("bull:{pr-review}:3", None), Ok(ok("3", "{pr-review}", false)));
        // Two readings: the custom id of three parts is taken, and said to be a choice.
        assert_eq!(key("bull:q:a:b:c", None), Ok(ok("a:b:c", "q", true)));
        // A declared queue decides.
        assert_eq!(key("bull:q:a:b:c", Some("b")), Ok(ok("c", "b", false)));
        assert_eq!(key("app:bull:q:7", Some("q")), Ok(ok("7", "q", false)));
        assert!(key("bull:other:7", Some("q")).unwrap_err().contains("is not of queue 'q'"));
        assert_eq!(queue_and_id("myapp:bull:mail:7"), Some(("mail".into(), "7".into())));
        assert_eq!(queue_and_id("bull:q"), None);
    }

    #[test]
    fn keys_without_an_id_are_refused_with_the_reason() {
        assert!(key("bull:q:", None).unwrap_err().contains("has no job id"));
        assert!(key("bull:q", None).unwrap_err().contains("is not a job key"));
        assert!(key("q", None).unwrap_err().contains("expected <prefix>:<queue>:<job id>"));
        assert!(job_key(None, None, None, None).unwrap_err().contains("without its key or id"));
    }

    #[test]
    fn an_id_given_with_the_key_decides_and_must_agree_with_it() {
        let job = job_key(Some("myapp:bull:q:a:b:c"), Some("a:b:c"), None, None).unwrap();
        assert_eq!((job.id.as_str(), job.queue.as_deref(), job.ambiguous), ("a:b:c", Some("q"), false));
        let job = job_key(Some("myapp:bull:q:a:b:c"), Some("c"), None, None).unwrap();
        assert_eq!((job.id.as_str(), job.queue.as_deref()), ("c", Some("b")));
        assert!(
            job_key(Some("bull:q:7"), Some("8"), None, None).unwrap_err().contains("does not end with the job id '8'")
        );
        let job = job_key(None, Some("7"), Some("{bull}:notify"), None).unwrap();
        assert_eq!(job.queue.as_deref(), Some("notify"));
        assert_eq!(job_key(None, Some("7"), None, None).unwrap().queue, None);
        assert_eq!(job_key(None, Some("7"), None, Some("q")).unwrap().queue.as_deref(), Some("q"));
    }

    #[test]
    fn bullmqs_other_keys_are_named_by_their_kind() {
        let kind = |k: &str| other_key(k);
        assert_eq!(kind("bull:q:meta").as_deref(), Some("BullMQ's ':meta' key, not a job"));
        assert_eq!(kind("bull:q:events").as_deref(), Some("BullMQ's ':events' key, not a job"));
        assert_eq!(kind("bull:q:stalled-check").as_deref(), Some("BullMQ's ':stalled-check' key, not a job"));
        assert_eq!(kind("bull:q:42:lock").as_deref(), Some("BullMQ's ':lock' key, not a job"));
        assert_eq!(kind("bull:q:42:logs").as_deref(), Some("BullMQ's ':logs' key, not a job"));
        assert_eq!(
            kind("bull:q:repeat:pr-review-sweep").as_deref(),
            Some("job scheduler hash (':repeat:<scheduler id>'), not a job")
        );
        assert_eq!(
            kind("bull:q:repeat:a:b").as_deref(),
            Some("job scheduler hash (':repeat:<scheduler id>'), not a job")
        );
        assert_eq!(kind("bull:q:metrics:completed:data").as_deref(), Some("BullMQ's ':metrics:*' key, not a job"));
        assert_eq!(kind("bull:q:de:abc").as_deref(), Some("BullMQ's ':de:<id>' deduplication key, not a job"));
        assert_eq!(kind("bull:q:repeat:s:1791333180000"), None);
        assert_eq!(kind("bull:q:42"), None);
    }

    #[test]
    fn lines_shared_by_records_are_counted_once_and_a_rejection_is_never_hidden() {
        let mut summary = InputSummary::new("j", "bullmq-jobs", "hgetall-json", None);
        let mut account = LineAccount::default();
        // Line 1 `[`; records on 2-4 (used), 4-4 (ignored, shares line 4), 4-6 (rejected); `]` on 7.
        account.record(&mut summary, 2, 4, Outcome::Used, "punctuation");
        account.record(&mut summary, 4, 4, Outcome::Ignored("meta".into()), "punctuation");
        account.record(&mut summary, 4, 6, Outcome::Rejected("bad key".into(), true), "punctuation");
        account.finish(&mut summary, 7, "punctuation");
        assert_eq!(summary.lines, 7);
        assert_eq!((summary.used, summary.ignored, summary.rejected), (2, 2, 3));
        assert_eq!(summary.ignored_by_reason["punctuation"], 2);
        assert_eq!(summary.rejections.len(), 1);
        assert_eq!((summary.rejections[0].line, summary.rejections[0].reason.as_str()), (4, "bad key"));
    }
}
