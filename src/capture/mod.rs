//! `leasetrace capture`: a read-only snapshot of what BullMQ keeps about one queue in Redis,
//! written as a case folder `leasetrace analyze` reads as it is.
//!
//! Redis holds evidence that disappears on its own: the events stream is trimmed to
//! `maxLenEvents`, a job hash's `processedOn` is overwritten on every activation, finished jobs are
//! removed, lock keys expire. `capture` reads it while it is there, in the shapes the readers
//! already know (`events.jsonl`: XRANGE entries, `xrange-json`; `jobs.jsonl`: `{key, id, state,
//! hash}` records, `hgetall-json`), and keeps what no reader takes (locks, stalled bookkeeping,
//! the meta hash, job schedulers, job logs, the server's clock and version) in `capture.json`,
//! the capture record. docs/capture.md lists every command and the shape of every file.
//!
//! Safe on a big, busy server: only the read commands of `client::READ_COMMANDS`; `SCAN` (never
//! `KEYS`); `XRANGE` in pages written as they are read (memory does not grow with the stream);
//! replies of many keys fetched in pipelined batches. What grows with the queue is the job ids
//! of the state lists and sets (to give each job its state) and the set of keys already written
//! (`SCAN` may return a key twice).

pub mod client;
pub mod escape;
pub mod out;
pub mod postgres;
pub mod record;
pub mod resp;
pub mod shape;
pub mod target;
pub mod transport;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value as Json, json};

use crate::error::{Error, Result};
use crate::progress::Progress;

use client::{Limits, Reader};
use out::{Jsonl, Staging};
use target::Target;

/// The capture record's schema: `capture.json` is read by people and programs alike.
pub const RECORD_SCHEMA: &str = "leasetrace.capture/v1";

/// Stream entries per `XRANGE` page, and keys per `SCAN` call and per pipelined batch: large
/// enough to keep round trips few, small enough that no reply holds up a busy server.
const PAGE: usize = 1000;

/// Members read per `LRANGE`/`ZRANGE` call of a state list or set.
const RANGE_PAGE: i64 = 10_000;

/// Keys named in the record when they are of no kind capture reads, at most.
const OTHER_KEYS_SHOWN: usize = 200;

/// Job ids of the state lists, and keys of the queue, that capture holds at most (each as a
/// 16-byte fingerprint: about 40 bytes a job id with its state and 20 a key, with their tables;
/// some 300 MB for both at the ceiling). A queue that has more is refused rather than read until
/// the machine runs out of memory; so is a server that keeps sending them.
pub const MAX_HELD: usize = 5_000_000;

/// Default of `--max-reply-bytes`: what one reply may make capture hold.
pub const MAX_REPLY_BYTES: u64 = 64 << 20;

/// Default of `--max-record-bytes`: the longest line capture writes, analyze's default
/// `--max-line-bytes`, so that every line of a capture is one analyze reads as it is.
pub const MAX_RECORD_BYTES: u64 = crate::ingest::io::lines::MAX_LINE_BYTES as u64;

/// The most `--max-reply-bytes` and `--max-record-bytes` may be.
pub const MAX_BYTES_CEILING: u64 = 1 << 30;

/// BullMQ's state lists and sorted sets, with the state `Job.getState()` calls a job in each.
const STATES: &[(&str, &str)] = &[
    ("active", "active"),
    ("wait", "waiting"),
    ("paused", "paused"),
    ("prioritized", "prioritized"),
    ("delayed", "delayed"),
    ("waiting-children", "waiting-children"),
    ("completed", "completed"),
    ("failed", "failed"),
];

/// `n` bytes for a message: `64 MiB`, `16 KiB`, or `1000 bytes`.
pub fn size(n: u64) -> String {
    crate::ingest::io::lines::size(usize::try_from(n).unwrap_or(usize::MAX))
}

/// What the command line gave, before it is checked.
pub struct Asked<'a> {
    pub out: &'a Path,
    pub redis: Option<&'a str>,
    pub postgres: Option<&'a str>,
    pub queue: &'a str,
    pub prefix: Option<&'a str>,
    pub schema: Option<&'a str>,
    pub max_jobs: Option<u64>,
    pub since: Option<&'a str>,
    pub until: Option<&'a str>,
    pub ledger_query: Option<&'a str>,
    pub ledger_time_column: Option<&'a str>,
    pub ledger_tz: Option<&'a str>,
    pub bull: Option<&'a str>,
    pub timeout: f64,
    pub deadline: f64,
    pub max_reply_bytes: u64,
    pub max_record_bytes: u64,
}

/// Which store a capture reads, with what it was asked for, validated.
#[derive(Debug, Clone)]
pub enum Plan {
    Redis(Options),
    Postgres(postgres::PgOptions),
}

/// The environment variables that name a server when no flag does.
const REDIS_URL_VAR: &str = "LEASETRACE_REDIS_URL";
const POSTGRES_URL_VAR: &str = "LEASETRACE_POSTGRES_URL";

impl Plan {
    /// The command line's values, checked before anything is sent to a server: the store from
    /// `--redis` or `--postgres` (else from the one of LEASETRACE_REDIS_URL and
    /// LEASETRACE_POSTGRES_URL that is set), and each flag only where it means something.
    pub fn build(asked: &Asked) -> Result<Plan> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let (redis, postgres) = match (asked.redis, asked.postgres) {
            (None, None) => match (var(REDIS_URL_VAR), var(POSTGRES_URL_VAR)) {
                (Some(_), Some(_)) => {
                    return Err(Error::usage(format!(
                        "both {REDIS_URL_VAR} and {POSTGRES_URL_VAR} are set: say which store to read with --redis URL or --postgres URL"
                    )));
                }
                (None, None) => {
                    return Err(Error::usage(format!(
                        "capture reads a live store: give --redis URL or --postgres URL (or set {REDIS_URL_VAR} or {POSTGRES_URL_VAR}) (leasetrace docs capture)"
                    )));
                }
                pair => pair,
            },
            (redis, postgres) => (redis.map(str::to_string), postgres.map(str::to_string)),
        };
        let only = |flag: &str, given: bool, store: &str| -> Result<()> {
            if given {
                return Err(Error::usage(format!(
                    "{flag} is for a capture from {store} only (leasetrace docs capture)"
                )));
            }
            Ok(())
        };
        if let Some(url) = redis {
            only("--schema", asked.schema.is_some(), "PostgreSQL")?;
            only("--ledger-query", asked.ledger_query.is_some(), "PostgreSQL")?;
            if asked.until.is_some() {
                return Err(Error::usage(
                    "--until: a Redis capture reads to the present (Redis trims its stream from the start, never the end; analyze --until narrows the report)",
                ));
            }
            return Options::build(asked, &url).map(Plan::Redis);
        }
        let url = postgres.unwrap_or_default();
        only("--prefix", asked.prefix.is_some(), "Redis")?;
        only("--bull", asked.bull.is_some(), "Redis (legacy Bull keeps its queues in Redis only)")?;
        common(asked)?;
        let target = postgres::target::PgTarget::parse(&url, &postgres::target::Environment::of_process()).map_err(|why| {
            Error::usage(format!(
                "--postgres {}: not a PostgreSQL URL ({}): expected postgres://[user[:password]@][host][:port][/dbname][?sslmode=...] (leasetrace docs capture)",
                escape::visible(&target::redact(&url)),
                escape::visible(&why)
            ))
        })?;
        let schema = asked.schema.unwrap_or(postgres::DEFAULT_SCHEMA);
        if schema.is_empty() || schema.contains('\0') {
            return Err(Error::usage("--schema: empty, or with a NUL character (BullMQ's default is 'bullmq')"));
        }
        let since = time_flag("--since", asked.since)?;
        let until = time_flag("--until", asked.until)?;
        if let (Some(since), Some(until)) = (since, until)
            && until <= since
        {
            return Err(Error::usage(format!(
                "--until {} is not after --since {}: the window is empty",
                crate::time::format_rfc3339(until),
                crate::time::format_rfc3339(since)
            )));
        }
        let ledger = match (asked.ledger_query, asked.ledger_time_column) {
            (Some(query), Some(column)) => {
                if query.trim().is_empty() || column.is_empty() {
                    return Err(Error::usage("--ledger-query and --ledger-time-column: neither may be empty"));
                }
                let zone = asked
                    .ledger_tz
                    .map(|name| crate::time::parse_zone(name).map_err(|why| Error::usage(format!("--ledger-tz {why}"))))
                    .transpose()?;
                Some(postgres::LedgerQuery { query: query.to_string(), time_column: column.to_string(), zone })
            }
            _ => None,
        };
        Ok(Plan::Postgres(postgres::PgOptions {
            target,
            schema: schema.to_string(),
            queue: asked.queue.to_string(),
            out: asked.out.to_path_buf(),
            window: postgres::sql::Window { since, until },
            max_jobs: asked.max_jobs,
            limits: Limits {
                timeout: Duration::from_secs_f64(asked.timeout),
                deadline: Duration::from_secs_f64(asked.deadline),
                max_reply_bytes: asked.max_reply_bytes,
            },
            max_record_bytes: asked.max_record_bytes,
            ledger,
        }))
    }
}

/// The checks every capture shares: the queue's name, the time limits, the byte limits.
fn common(asked: &Asked) -> Result<()> {
    let Asked { queue, timeout, deadline, .. } = *asked;
    if queue.is_empty() || queue.contains(':') || queue.contains('\0') {
        return Err(Error::usage(format!(
            "--queue '{}': a BullMQ queue name is not empty and has no ':' (BullMQ refuses it: 'Queue name cannot contain :')",
            escape::visible(queue)
        )));
    }
    if !(timeout.is_finite() && timeout > 0.0 && timeout <= 3600.0) {
        return Err(Error::usage(format!("--timeout {timeout}: expected seconds, more than 0 and at most 3600")));
    }
    if !(deadline.is_finite() && deadline > 0.0 && deadline <= 604_800.0) {
        return Err(Error::usage(format!(
            "--deadline {deadline}: expected seconds, more than 0 and at most 604800 (a week)"
        )));
    }
    for (flag, bytes) in [("--max-reply-bytes", asked.max_reply_bytes), ("--max-record-bytes", asked.max_record_bytes)]
    {
        if !(1024..=MAX_BYTES_CEILING).contains(&bytes) {
            return Err(Error::usage(format!("{flag} {bytes}: expected bytes, from 1024 to {MAX_BYTES_CEILING}")));
        }
    }
    Ok(())
}

/// `--since` or `--until`: the parser of every time flag; a time without an offset is read in
/// UTC (capture has no display zone), and a clock time alone has no case to take its date from.
fn time_flag(flag: &str, text: Option<&str>) -> Result<Option<DateTime<Utc>>> {
    text.map(|text| {
        let bound = crate::time::parse_bound(text).map_err(|why| Error::usage(format!("{flag} {why}")))?;
        if let crate::time::Bound::Clock(_) = bound {
            return Err(Error::usage(format!(
                "{flag} '{text}': a clock time alone is on the case's date, and capture reads a live server, not a case: give the date too, e.g. '2026-10-07 {text}' (read in UTC) or 2026-10-07T{text}+09:00 (leasetrace docs capture)"
            )));
        }
        bound.place(Some(chrono_tz::UTC), None).map_err(|problem| {
            Error::usage(format!("{flag} '{text}': {}", problem.explain("an offset (2026-10-07T09:50:00+09:00)")))
        })
    })
    .transpose()
}

/// What the user asked for, validated.
#[derive(Debug, Clone)]
pub struct Options {
    pub target: Target,
    pub queue: String,
    pub prefix: String,
    pub out: PathBuf,
    pub max_jobs: Option<u64>,
    pub since: Option<DateTime<Utc>>,
    pub limits: Limits,
    pub max_record_bytes: u64,
    /// Legacy Bull's version (`--bull`): the queue is Bull's, which keeps no events stream.
    pub bull: Option<String>,
}

impl Options {
    /// The command line's values for a Redis capture from `url`, checked before anything is
    /// sent to the server.
    pub fn build(asked: &Asked, url: &str) -> Result<Options> {
        let Asked { out, queue, max_jobs, since, .. } = *asked;
        common(asked)?;
        let prefix = asked.prefix.unwrap_or("bull");
        if prefix.is_empty() {
            return Err(Error::usage("--prefix: empty (BullMQ's default is 'bull')"));
        }
        let target = Target::parse(url).map_err(|why| {
            Error::usage(format!(
                "--redis {}: not a Redis URL ({}): expected redis://[user:password@]host[:port][/db] or rediss://... for TLS",
                escape::visible(&target::redact(url)),
                escape::visible(&why)
            ))
        })?;
        let since = time_flag("--since", since)?;
        let bull = asked
            .bull
            .map(|version| {
                let bare = version.trim_start_matches(['^', '~', 'v']);
                let numeric = !bare.is_empty()
                    && bare.split('.').count() <= 3
                    && bare.split('.').all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()));
                if !numeric || !matches!(bare.split('.').next(), Some("3" | "4")) {
                    return Err(Error::usage(format!(
                        "--bull {}: expected legacy Bull's version, 3.x or 4.x, as package-lock.json or `npm ls bull` gives it (4.16.5)",
                        escape::visible(version)
                    )));
                }
                Ok(bare.to_string())
            })
            .transpose()?;
        Ok(Options {
            bull,
            target,
            queue: queue.to_string(),
            prefix: prefix.to_string(),
            out: out.to_path_buf(),
            max_jobs,
            since,
            limits: Limits {
                timeout: Duration::from_secs_f64(asked.timeout),
                deadline: Duration::from_secs_f64(asked.deadline),
                max_reply_bytes: asked.max_reply_bytes,
            },
            max_record_bytes: asked.max_record_bytes,
        })
    }
}

/// Redis' clock and version at one moment of the capture.
fn moment(reader: &mut Reader) -> Result<Json> {
    let micros = reader.ask("TIME", &[], shape::time)?;
    let mut lossy = false;
    let info = reader.ask("INFO", &["server"], |r| shape::text(r, "INFO's text", &mut lossy))?;
    let field =
        |name: &str| info.lines().find_map(|l| l.strip_prefix(&format!("{name}:"))).map(|v| v.trim().to_string());
    Ok(json!({
        "redis_time": DateTime::from_timestamp_micros(micros).map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)),
        "redis_time_us": micros,
        "redis_version": field("redis_version"),
        "redis_mode": field("redis_mode"),
    }))
}

fn micros_of(moment: &Json) -> i64 {
    moment["redis_time_us"].as_i64().unwrap_or_default()
}

/// A glob that matches `text` literally (SCAN's MATCH treats `*?[]\` specially).
fn glob_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A key or job id as capture holds it to know it again: 16 bytes, whatever its length (two
/// SipHash passes with different seeds: no two of a queue's keys meet by chance).
fn fingerprint(text: &str) -> u128 {
    let half = |seed: u8| {
        let mut hasher = std::hash::DefaultHasher::new();
        seed.hash(&mut hasher);
        text.hash(&mut hasher);
        hasher.finish()
    };
    (u128::from(half(1)) << 64) | u128::from(half(2))
}

/// What capture holds by count, each within `MAX_HELD`.
fn held(reader: &Reader, command: &str, what: &str, count: usize) -> Result<()> {
    if count > MAX_HELD {
        return Err(reader.error(
            command,
            &format!(
                "more than {MAX_HELD} {what}: capture holds at most that many (`leasetrace docs capture`, Memory); a queue this large, or a server that sends more than it holds"
            ),
        ));
    }
    Ok(())
}

/// What goes into `capture.json` besides its fixed fields, counted as each part comes (a member,
/// a lock, a scheduler's hash, a key not read), so that the record stays within what `analyze`
/// reads of one (80 MiB), and memory with it. Past it, the reply that brought the part is refused.
struct RecordSize(u64);

impl RecordSize {
    fn add(&mut self, value: &Json) -> shape::Shaped<()> {
        self.0 += json_size(value);
        if self.0 > record::RECORD_MAX_BYTES {
            return Err(shape::Wrong(format!(
                "the capture record (capture.json) would be larger than {}, the most analyze reads of one: too many locks, schedulers, stalled jobs or keys that could not be read",
                size(record::RECORD_MAX_BYTES)
            )));
        }
        Ok(())
    }
}

/// About the bytes `value` takes as JSON (its texts, and a little for each value's punctuation).
fn json_size(value: &Json) -> u64 {
    match value {
        Json::String(text) => text.len() as u64 + 2,
        Json::Array(items) => items.iter().map(json_size).sum::<u64>() + 2,
        Json::Object(map) => map.iter().map(|(k, v)| k.len() as u64 + 4 + json_size(v)).sum::<u64>() + 2,
        _ => 8,
    }
}

fn key_type(reader: &mut Reader, key: &str) -> Result<String> {
    reader.ask("TYPE", &[key], shape::type_name)
}

/// The members of a list or sorted set in pages (`LRANGE`/`ZRANGE ... WITHSCORES`), or a set's,
/// each handed to `each` (with its score); at most `MAX_HELD` of them.
fn members(
    reader: &mut Reader,
    key: &str,
    kind: &str,
    mut each: impl FnMut(String, Option<i64>) -> shape::Shaped<()>,
) -> Result<usize> {
    let mut lossy = false;
    let mut count = 0usize;
    match kind {
        "set" => {
            for member in reader.ask("SMEMBERS", &[key], |r| shape::texts(r, "an array of members", &mut lossy))? {
                each(member, None).map_err(|wrong| reader.wrong(&format!("SMEMBERS {key}"), &wrong))?;
                count += 1;
            }
        }
        "list" | "zset" => {
            let mut from = 0i64;
            loop {
                let to = (from + RANGE_PAGE - 1).to_string();
                let start = from.to_string();
                let page = if kind == "list" {
                    reader
                        .ask("LRANGE", &[key, &start, &to], |r| shape::texts(r, "an array of job ids", &mut lossy))?
                        .into_iter()
                        .map(|m| (m, None))
                        .collect()
                } else {
                    reader.ask("ZRANGE", &[key, &start, &to, "WITHSCORES"], |r| shape::scored(r, &mut lossy))?
                };
                let read = page.len();
                let shown = format!("{} {key} {start} {to}", if kind == "list" { "LRANGE" } else { "ZRANGE" });
                for (member, score) in page {
                    each(member, score).map_err(|wrong| reader.wrong(&shown, &wrong))?;
                }
                count += read;
                held(reader, &shown, "members", count)?;
                if i64::try_from(read).unwrap_or(i64::MAX) < RANGE_PAGE {
                    break;
                }
                from += RANGE_PAGE;
            }
        }
        _ => {}
    }
    Ok(count)
}

/// The stream id just after `id` (`<ms>-<seq+1>`): the next page of XRANGE starts there, which
/// every Redis with streams accepts (the exclusive `(` form needs 6.2).
pub(crate) fn next_id(id: &str) -> Option<String> {
    let (ms, seq) = id.split_once('-')?;
    let seq: u64 = seq.parse().ok()?;
    Some(match seq.checked_add(1) {
        Some(next) => format!("{ms}-{next}"),
        None => format!("{}-0", ms.parse::<u64>().ok()?.checked_add(1)?),
    })
}

/// A stream id as a pair of numbers, to check that XRANGE's pages move forward.
pub(crate) fn id_order(id: &str) -> Option<(u64, u64)> {
    let (ms, seq) = id.split_once('-')?;
    Some((ms.parse().ok()?, seq.parse().ok()?))
}

/// What the capture found, for the summary printed on stdout.
pub struct Outcome {
    pub summary: String,
}

/// Names of queues shown in the message of a wrong queue name, at most.
const QUEUES_SHOWN: usize = 50;

/// The queues under `prefix` that have a meta hash, for the message of a wrong queue name: one
/// pass of SCAN over at most `budget` calls (a big keyspace is not walked whole for a message).
fn queues_under(reader: &mut Reader, prefix: &str, budget: usize) -> Result<(Vec<String>, bool)> {
    let pattern = format!("{}:*:meta", glob_escape(prefix));
    let mut cursor = "0".to_string();
    let mut found = BTreeSet::new();
    let mut lossy = false;
    for _ in 0..budget {
        let (next, keys) =
            reader.ask("SCAN", &[&cursor, "MATCH", &pattern, "COUNT", "1000"], |r| shape::scan(r, &mut lossy))?;
        cursor = next;
        for key in keys {
            if let Some(queue) = key.strip_prefix(&format!("{prefix}:")).and_then(|k| k.strip_suffix(":meta"))
                && found.len() < QUEUES_SHOWN
            {
                found.insert(escape::clip(queue, 100));
            }
        }
        if cursor == "0" {
            return Ok((found.into_iter().collect(), true));
        }
    }
    Ok((found.into_iter().collect(), false))
}

pub fn run(options: &Options, progress: &Progress) -> Result<Outcome> {
    // Before connecting: a capture that cannot be written is not taken.
    out::check(&options.out)?;
    let mut reader = Reader::connect(&options.target, options.limits)?;
    let base = format!("{}:{}", options.prefix, options.queue);
    let key = |name: &str| format!("{base}:{name}");
    let start = moment(&mut reader)?;

    // Is this a BullMQ queue at all? Its meta hash, its events stream, its state keys.
    let meta_key = key("meta");
    let events_key = key("events");
    let meta_type = key_type(&mut reader, &meta_key)?;
    let events_type = key_type(&mut reader, &events_key)?;
    let mut state_types = Vec::new();
    for (name, _) in STATES.iter().chain(&[("stalled", ""), ("repeat", ""), ("id", "")]) {
        state_types.push((*name, key_type(&mut reader, &key(name))?));
    }
    if meta_type == "none" && events_type == "none" && state_types.iter().all(|(_, t)| t == "none") {
        let (queues, whole) = queues_under(&mut reader, &options.prefix, 200)?;
        let searched = if whole { "" } else { " (among the first 200,000 keys scanned)" };
        let found = if queues.is_empty() {
            format!(
                "no BullMQ queue has a meta hash under the prefix '{}'{searched}: a wrong --prefix, another database number in the URL, or not BullMQ's Redis",
                options.prefix
            )
        } else {
            let more = if queues.len() >= QUEUES_SHOWN { ", ..." } else { "" };
            format!("queues under the prefix '{}'{searched}: {}{more}", options.prefix, queues.join(", "))
        };
        return Err(reader.error(
            &format!("TYPE {meta_key}"),
            &format!(
                "no BullMQ queue '{}' here: none of its keys ({meta_key}, {events_key}, {base}:wait, ...) exists; {found}",
                options.queue
            ),
        ));
    }
    if events_type != "none" && events_type != "stream" {
        return Err(reader.error(
            &format!("TYPE {events_key}"),
            &format!("{events_key} is a {events_type}, not a stream: not a BullMQ queue's events (another --prefix?)"),
        ));
    }

    let mut not_read: Vec<Json> = Vec::new();
    let mut lossy_keys: Vec<String> = Vec::new();
    let mut record_size = RecordSize(0);

    // The meta hash: BullMQ's version as last written, maxLenEvents, concurrency settings.
    let mut meta = Map::new();
    if meta_type == "hash" {
        let mut lossy = false;
        let fields = reader
            .ask("HGETALL", &[&meta_key], |r| shape::pairs(r, "the meta hash's fields and values", &mut lossy))?;
        for (field, value) in fields {
            meta.insert(field, Json::String(value));
        }
        record_size.add(&Json::Object(meta.clone())).map_err(|w| reader.wrong(&format!("HGETALL {meta_key}"), &w))?;
    } else if meta_type != "none" {
        not_read.push(json!({"key": meta_key, "why": format!("a {meta_type}, not BullMQ's meta hash")}));
    }

    // Legacy Bull or BullMQ: never guessed. A BullMQ queue always has its meta hash (written
    // when a Queue or Worker opens it) and its events stream; Bull has neither.
    let bullmq_version = meta.get("version").and_then(Json::as_str).map(str::to_string);
    match (&options.bull, events_type == "stream" || bullmq_version.is_some()) {
        (Some(version), true) => {
            return Err(reader.error(
                &format!("TYPE {events_key}"),
                &format!(
                    "--bull {version}, but queue '{}' is BullMQ's: it has {} (legacy Bull keeps neither): leave out --bull",
                    options.queue,
                    match &bullmq_version {
                        Some(v) => format!("a meta hash written by {v}"),
                        None => format!("an events stream {events_key}"),
                    }
                ),
            ));
        }
        (None, false) if meta_type == "none" => {
            return Err(reader.error(
                &format!("TYPE {meta_key}"),
                &format!(
                    "queue '{}' has job keys but no meta hash and no events stream, as legacy Bull (npm `bull`) keeps a queue, never BullMQ: give --bull VERSION (the bull version in package-lock.json, e.g. 4.16.5), so that the case is read with Bull's lock rules",
                    options.queue
                ),
            ));
        }
        _ => {}
    }
    // The state lists and sets: each job's state (by its id's fingerprint), and the counts.
    let mut state_of: HashMap<u128, &'static str> = HashMap::new();
    let mut states = Map::new();
    for &(name, state) in STATES {
        let kind = state_types.iter().find(|(n, _)| *n == name).map_or("none", |(_, t)| t.as_str());
        let key = key(name);
        if !matches!(kind, "list" | "zset" | "set" | "none") {
            not_read.push(json!({"key": key, "why": format!("a {kind}, not a list or sorted set")}));
            continue;
        }
        let count = members(&mut reader, &key, kind, |id, _| {
            // A job in two places (it moves while we read) keeps the first, the earlier state.
            state_of.entry(fingerprint(&id)).or_insert(state);
            Ok(())
        })?;
        held(&reader, &format!("LRANGE/ZRANGE {key}"), "job ids in the state lists", state_of.len())?;
        states.insert(name.to_string(), json!({"key": key, "type": kind, "count": count}));
    }
    if state_of.is_empty() && events_type == "none" {
        return Err(reader.error(
            &format!("TYPE {events_key}"),
            &format!(
                "queue '{}' holds nothing to capture: no events stream and no job in any state list ({})",
                options.queue,
                if meta.is_empty() {
                    "and no meta hash".to_string()
                } else {
                    format!("meta hash: {}", escape::clip(&Json::Object(meta.clone()).to_string(), 500))
                }
            ),
        ));
    }

    let mut staging = Staging::begin(&options.out)?;

    // The stalled-check bookkeeping: the `stalled` set, the `stalled-check` key and its expiry.
    let stalled_kind =
        state_types.iter().find(|(n, _)| *n == "stalled").map_or("none", |(_, t)| t.as_str()).to_string();
    let mut stalled: Vec<Json> = Vec::new();
    members(&mut reader, &key("stalled"), &stalled_kind, |m, _| {
        let member = Json::String(m);
        record_size.add(&member)?;
        stalled.push(member);
        Ok(())
    })?;
    let check_key = key("stalled-check");
    let mut check = (None, None);
    let mut lossy = false;
    reader.pipeline(
        &[("GET", vec![check_key.clone()]), ("PTTL", vec![check_key.clone()]), ("TIME", vec![])],
        |i, reply| {
            let Ok(reply) = reply else { return Ok(()) };
            match i {
                0 => check.0 = shape::optional_text(reply, "a text or nil", &mut lossy)?,
                1 => check.1 = Some(shape::int(&reply, "an integer (milliseconds)")?),
                _ => {
                    shape::time(reply)?;
                }
            }
            Ok(())
        },
    )?;
    let stalled_check = json!({"key": check_key, "value": check.0, "pttl_ms": check.1});
    record_size.add(&stalled_check).map_err(|w| reader.wrong(&format!("GET {check_key}"), &w))?;

    // Job schedulers and repeatable jobs: the `repeat` sorted set (id → next run, epoch ms).
    let repeat_kind = state_types.iter().find(|(n, _)| *n == "repeat").map_or("none", |(_, t)| t.as_str()).to_string();
    let mut repeat: Vec<(String, Option<i64>)> = Vec::new();
    members(&mut reader, &key("repeat"), &repeat_kind, |m, s| {
        // Each member is in the record twice: in `members`, and with its hash in `hashes`.
        record_size.add(&json!({"id": m, "next_ms": s}))?;
        repeat.push((m, s));
        Ok(())
    })?;
    let repeat_members: Vec<Json> = repeat.iter().map(|(m, s)| json!({"id": m, "next_ms": s})).collect();

    // The events stream, page by page, written as read.
    // Bull keeps no events stream: no file stands for it.
    let mut events_out = match options.bull {
        None => Some(Jsonl::create(&mut staging, "events.jsonl", options.max_record_bytes)?),
        Some(_) => None,
    };
    let mut stream = json!({"key": events_key, "file": "events.jsonl", "exists": events_type == "stream"});
    if options.bull.is_some() {
        stream = json!({"key": Json::Null, "exists": false, "library": "legacy Bull keeps no events stream: its events are published (pub/sub), never stored"});
    }
    let mut captured = 0u64;
    if events_type == "stream" {
        let info_map = reader.ask("XINFO", &["STREAM", &events_key], shape::stream_info)?;
        let length = info_map.get("length").and_then(Json::as_u64);
        let last = info_map.get("last-entry").and_then(Json::as_str).map(str::to_string);
        stream["length"] = length.into();
        stream["first_id"] = info_map.get("first-entry").cloned().unwrap_or(Json::Null);
        stream["last_id"] = last.clone().into();
        stream["last_generated_id"] = info_map.get("last-generated-id").cloned().unwrap_or(Json::Null);
        stream["max_deleted_entry_id"] = info_map.get("max-deleted-entry-id").cloned().unwrap_or(Json::Null);
        stream["entries_added"] = info_map.get("entries-added").cloned().unwrap_or(Json::Null);
        // Redis 7 counts every entry ever added: those no longer there were trimmed (BullMQ's
        // `MAXLEN ~ maxLenEvents`) or deleted. (`max-deleted-entry-id` moves on XDEL, not on a trim.)
        stream["entries_removed"] = match (info_map.get("entries-added").and_then(Json::as_u64), length) {
            (Some(added), Some(length)) => added.saturating_sub(length).into(),
            _ => Json::Null,
        };
        record_size.add(&stream).map_err(|w| reader.wrong(&format!("XINFO STREAM {events_key}"), &w))?;
        let bar = progress.items("events stream", "entries", length);
        let mut from = options.since.map_or_else(|| "-".to_string(), |t| format!("{}-0", t.timestamp_millis()));
        // Up to the last entry when the capture began: a busy stream has a defined end.
        let to = last.unwrap_or_else(|| "+".into());
        let count = PAGE.to_string();
        let (mut first_read, mut last_read) = (None::<String>, None::<String>);
        let mut lossy_entries = 0u64;
        loop {
            let args = [events_key.as_str(), &from, &to, "COUNT", &count];
            let shown = format!("XRANGE {events_key} {from} {to} COUNT {count}");
            let entries = reader.ask("XRANGE", &args, shape::stream_page)?;
            let read = entries.len();
            if read > PAGE {
                return Err(
                    reader.error(&shown, &format!("{read} entries in a page of at most {PAGE}: not Redis' XRANGE"))
                );
            }
            for entry in entries {
                // Each page moves forward, within the range asked, and never past the length
                // XINFO gave: a server that repeats itself does not make capture loop for ever.
                let order = id_order(&entry.id);
                let after_last = last_read.as_deref().and_then(id_order);
                if after_last.is_some_and(|last| order <= Some(last)) {
                    return Err(reader.error(
                        &shown,
                        &format!(
                            "entry {} after {}: XRANGE's entries are in order of their ids",
                            entry.id,
                            last_read.as_deref().unwrap_or_default()
                        ),
                    ));
                }
                captured += 1;
                if length.is_some_and(|length| captured > length) {
                    return Err(reader.error(
                        &shown,
                        &format!(
                            "more entries than the {} XINFO STREAM gave as the stream's length",
                            length.unwrap_or_default()
                        ),
                    ));
                }
                if entry.lossy {
                    lossy_entries += 1;
                    if lossy_keys.len() < OTHER_KEYS_SHOWN {
                        lossy_keys.push(format!("{events_key} {}", entry.id));
                    }
                }
                let id = entry.id.clone();
                if let Some(out) = events_out.as_mut() {
                    out.write(&entry.into_record())
                        .map_err(|stop| reader.stopped(&format!("XRANGE {events_key} (entry {id})"), stop))?;
                }
                first_read.get_or_insert_with(|| id.clone());
                last_read = Some(id);
            }
            if let Some(bar) = &bar {
                bar.add(read as u64);
            }
            match (&last_read, read) {
                (Some(last), n) if n == PAGE => from = next_id(last).unwrap_or_else(|| "+".into()),
                _ => break,
            }
            if from == "+" {
                break;
            }
        }
        if lossy_entries > lossy_keys.len() as u64 {
            lossy_keys.push(format!("{events_key}: {lossy_entries} entries in all"));
        }
        stream["captured"] = captured.into();
        stream["captured_first_id"] = first_read.into();
        stream["captured_last_id"] = last_read.into();
    } else {
        stream["captured"] = 0.into();
    }
    if let Some(out) = events_out {
        out.finish()?;
    }
    stream["max_len_events"] = meta.get("opts.maxLenEvents").cloned().unwrap_or(Json::Null);

    // Every key of the queue: SCAN, TYPE in batches, then each kind read in batches.
    let mut jobs_out = Jsonl::create(&mut staging, "jobs.jsonl", options.max_record_bytes)?;
    let mut logs_out = Jsonl::create(&mut staging, "job-logs.jsonl", options.max_record_bytes)?;
    let mut seen: HashSet<u128> = HashSet::new();
    let mut by_type: BTreeMap<String, u64> = BTreeMap::new();
    let mut by_state: BTreeMap<&str, u64> = BTreeMap::new();
    let mut locks: Vec<Json> = Vec::new();
    let mut schedulers: Vec<Json> = Vec::new();
    let mut other_keys: Vec<String> = Vec::new();
    let mut other_count = 0u64;
    let (mut jobs_written, mut before_since, mut beyond_max, mut log_jobs, mut log_lines) =
        (0u64, 0u64, 0u64, 0u64, 0u64);
    let pattern = format!("{}:*", glob_escape(&base));
    let prefix_len = base.len() + 1;
    let bar = progress.items("keys of the queue", "keys", None);
    let mut cursor = "0".to_string();
    loop {
        let mut lossy = false;
        let scan_args = [cursor.as_str(), "MATCH", &pattern, "COUNT", &PAGE.to_string()];
        let (next, keys) = reader.ask("SCAN", &scan_args, |r| shape::scan(r, &mut lossy))?;
        let scan_shown = format!("SCAN {cursor} MATCH {pattern}");
        cursor = next;
        let batch: Vec<String> = keys.into_iter().filter(|k| seen.insert(fingerprint(k))).collect();
        held(&reader, &scan_shown, "keys of the queue", seen.len())?;
        if let Some(bar) = &bar {
            bar.add(batch.len() as u64);
        }
        let mut kinds = Vec::with_capacity(batch.len());
        reader.pipeline(&batch.iter().map(|k| ("TYPE", vec![k.clone()])).collect::<Vec<_>>(), |_, reply| {
            kinds.push(match reply {
                Ok(reply) => shape::type_name(reply)?,
                Err(_) => "unknown".to_string(),
            });
            Ok(())
        })?;
        let mut hashes = Vec::new();
        let mut lock_keys = Vec::new();
        let mut log_keys = Vec::new();
        for (key, kind) in batch.iter().zip(kinds) {
            // Type names are the server's: a module's, or nonsense from a server that is not Redis.
            if by_type.len() < 64 || by_type.contains_key(&kind) {
                *by_type.entry(kind.clone()).or_default() += 1;
            } else {
                *by_type.entry("(other types)".into()).or_default() += 1;
            }
            let rest = &key[prefix_len.min(key.len())..];
            match kind.as_str() {
                "hash" if rest != "meta" => hashes.push(key.clone()),
                "string" if rest.ends_with(":lock") => lock_keys.push(key.clone()),
                "list" if rest.ends_with(":logs") => log_keys.push(key.clone()),
                "none" => {} // removed between SCAN and TYPE
                _ => {
                    let known = STATES.iter().any(|(n, _)| *n == rest)
                        || matches!(rest, "events" | "meta" | "stalled" | "stalled-check" | "repeat" | "id");
                    if !known {
                        other_count += 1;
                        if other_keys.len() < OTHER_KEYS_SHOWN {
                            other_keys.push(format!("{key} ({kind})"));
                        }
                    }
                }
            }
        }
        reader.pipeline(&hashes.iter().map(|k| ("HGETALL", vec![k.clone()])).collect::<Vec<_>>(), |i, reply| {
            let key = &hashes[i];
            let reply = match reply {
                Ok(reply) => reply,
                Err(why) => {
                    let entry = json!({"key": key, "why": why});
                    record_size.add(&entry)?;
                    not_read.push(entry);
                    return Ok(());
                }
            };
            let mut key_lossy = false;
            let fields = shape::pairs(reply, "a hash's fields and values", &mut key_lossy)?;
            if key_lossy && lossy_keys.len() < OTHER_KEYS_SHOWN {
                lossy_keys.push(key.clone());
            }
            let rest = &key[prefix_len.min(key.len())..];
            let has = |name: &str| fields.iter().any(|(k, v)| k == name && !v.is_empty());
            if fields.is_empty() {
                return Ok(()); // removed between TYPE and HGETALL
            }
            // BullMQ writes `name` and `timestamp` into every job hash (as the jobs reader decides).
            if !fields.iter().any(|(k, _)| k == "name") || !has("timestamp") {
                if let Some(id) = rest.strip_prefix("repeat:") {
                    let next = repeat.iter().find(|(m, _)| m == id).and_then(|(_, s)| *s);
                    let scheduler = json!({"key": key, "id": id, "next_ms": next, "hash": to_object(&fields)});
                    record_size.add(&scheduler)?;
                    schedulers.push(scheduler);
                } else {
                    other_count += 1;
                    if other_keys.len() < OTHER_KEYS_SHOWN {
                        other_keys.push(format!("{key} (hash)"));
                    }
                }
                return Ok(());
            }
            if let Some(since) = options.since {
                let latest = ["finishedOn", "processedOn", "timestamp"]
                    .iter()
                    .filter_map(|f| fields.iter().find(|(k, _)| k == f)?.1.parse::<i64>().ok())
                    .max()
                    .unwrap_or(i64::MIN);
                if latest < since.timestamp_millis() {
                    before_since += 1;
                    return Ok(());
                }
            }
            if options.max_jobs.is_some_and(|max| jobs_written >= max) {
                beyond_max += 1;
                return Ok(());
            }
            let state = state_of.get(&fingerprint(rest)).copied().unwrap_or("unknown");
            *by_state.entry(state).or_default() += 1;
            let record = job_record(key, rest, state, fields);
            jobs_out.write(&record)?;
            jobs_written += 1;
            Ok(())
        })?;
        // Locks: holder token and remaining time, read with Redis' clock in the same round trip.
        if !lock_keys.is_empty() {
            let mut lock_cmds: Vec<(&str, Vec<String>)> = vec![("TIME", vec![])];
            for key in &lock_keys {
                lock_cmds.push(("GET", vec![key.clone()]));
                lock_cmds.push(("PTTL", vec![key.clone()]));
            }
            let mut now_us = None;
            let mut tokens: Vec<Option<String>> = Vec::with_capacity(lock_keys.len());
            let mut pttls: Vec<Option<i64>> = Vec::with_capacity(lock_keys.len());
            let mut lossy = false;
            reader.pipeline(&lock_cmds, |i, reply| {
                let reply = reply.ok();
                match (i, reply) {
                    (0, Some(reply)) => now_us = Some(shape::time(reply)?),
                    (0, None) => {}
                    (i, reply) if i % 2 == 1 => {
                        let token = match reply {
                            Some(reply) => shape::optional_text(reply, "the lock's token (a text) or nil", &mut lossy)?,
                            None => None,
                        };
                        // Counted as it comes: a batch of tokens is not held before it is weighed.
                        record_size.add(&json!(token))?;
                        tokens.push(token);
                    }
                    (_, reply) => pttls.push(match reply {
                        Some(reply) => Some(shape::int(&reply, "an integer (milliseconds)")?),
                        None => None,
                    }),
                }
                Ok(())
            })?;
            for ((key, token), pttl) in lock_keys.iter().zip(tokens).zip(pttls) {
                let job_id = key[prefix_len.min(key.len())..].strip_suffix(":lock").unwrap_or_default();
                let expires = match (now_us, pttl) {
                    (Some(now), Some(ms)) if ms >= 0 => ms
                        .checked_mul(1000)
                        .and_then(|us| now.checked_add(us))
                        .and_then(DateTime::from_timestamp_micros)
                        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
                    _ => None,
                };
                let lock = json!({
                    "key": key,
                    "job_id": job_id,
                    "token": token,
                    "pttl_ms": pttl,
                    "read_at_redis_time_us": now_us,
                    "expires_at": expires,
                    "job_state": state_of.get(&fingerprint(job_id)).copied().unwrap_or("unknown"),
                });
                record_size.add(&lock).map_err(|w| reader.wrong(&format!("GET {key}"), &w))?;
                locks.push(lock);
            }
        }
        // Job logs (`Job.log`), each list whole.
        let log_cmds: Vec<(&str, Vec<String>)> =
            log_keys.iter().map(|k| ("LRANGE", vec![k.clone(), "0".into(), "-1".into()])).collect();
        reader.pipeline(&log_cmds, |i, reply| {
            let key = &log_keys[i];
            match reply {
                Ok(reply) => {
                    let mut lossy = false;
                    let lines = shape::texts(reply, "an array of log lines", &mut lossy)?;
                    let job_id = key[prefix_len.min(key.len())..].strip_suffix(":logs").unwrap_or_default();
                    log_jobs += 1;
                    log_lines += lines.len() as u64;
                    let record = json!({"key": key, "job_id": job_id, "lines": lines});
                    logs_out.write(&record)?;
                }
                Err(why) => {
                    let entry = json!({"key": key, "why": why});
                    record_size.add(&entry)?;
                    not_read.push(entry);
                }
            }
            Ok(())
        })?;
        if cursor == "0" {
            break;
        }
    }
    drop(bar);
    jobs_out.finish()?;
    logs_out.finish()?;
    let end = moment(&mut reader)?;
    for key in &lossy_keys {
        not_read.push(json!({"key": key, "why": "holds bytes that are not UTF-8: written with U+FFFD in their place"}));
    }

    let elapsed_ms = (micros_of(&end) - micros_of(&start)) / 1000;
    let record = json!({
        "schema": RECORD_SCHEMA,
        "tool": format!("leasetrace {}", env!("CARGO_PKG_VERSION")),
        "target": {"server": reader.target(), "auth": options.target.auth_kind()},
        "queue": options.queue,
        "prefix": options.prefix,
        "library": match &options.bull { Some(version) => format!("bull {version}"), None => "bullmq".to_string() },
        "start": start,
        "end": end,
        "bounds": {
            "max_jobs": options.max_jobs,
            "since": options.since.map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
            "jobs_before_since": before_since,
            "jobs_beyond_max_jobs": beyond_max,
        },
        "meta": {"key": meta_key, "fields": meta},
        "stream": stream,
        "jobs": {"file": "jobs.jsonl", "written": jobs_written, "by_state": by_state},
        "states": states,
        "locks": locks,
        "stalled": {"key": key("stalled"), "members": stalled, "stalled_check": stalled_check},
        "schedulers": {"key": key("repeat"), "members": repeat_members, "hashes": schedulers},
        "logs": {"file": "job-logs.jsonl", "jobs": log_jobs, "lines": log_lines},
        "keys_by_type": by_type,
        "other_keys": {"count": other_count, "shown": other_keys},
        "commands": reader.commands,
        "not_read": not_read,
        "worker_options": "BullMQ keeps the workers' options (lockDuration, lockRenewTime, stalledInterval, maxStalledCount) in the worker processes only: Redis does not store them, so this capture cannot hold them. Put the workers' options file in this folder and uncomment the bullmq-params source in leasetrace.toml (or give --params FILE).",
    });
    let record_path = staging.file("capture.json");
    let mut text = serde_json::to_string_pretty(&record)
        .map_err(|e| Error::Write { path: record_path.clone(), source: e.into() })?;
    text.push('\n');
    write_synced(&record_path, text.as_bytes())?;
    let manifest_path = staging.file("leasetrace.toml");
    let manifest = manifest(
        &options.queue,
        &options.prefix,
        reader.target(),
        start["redis_time"].as_str().unwrap_or("?"),
        options.bull.as_deref(),
    );
    write_synced(&manifest_path, manifest.as_bytes())?;
    staging.commit()?;

    let held = locks.iter().filter(|l| l["pttl_ms"].as_i64().is_some_and(|ms| ms > 0)).count();
    let summary = format!(
        "captured queue '{}' from {} into {} in {}\n  events stream: {captured} entries{}\n  job hashes: {jobs_written}{}\n  locks held: {held}; job logs: {log_jobs} jobs, {log_lines} lines\n  record: capture.json; manifest: leasetrace.toml (add the workers' options file: Redis does not store them)\n",
        escape::visible(&options.queue),
        reader.target(),
        escape::visible(&options.out.display().to_string()),
        crate::time::format_duration(f64::from(u32::try_from(elapsed_ms).unwrap_or(u32::MAX)) / 1000.0),
        stream["length"].as_u64().map_or(String::new(), |n| format!(" of {n} in the stream")),
        if beyond_max > 0 { format!(" ({beyond_max} more not written: --max-jobs)") } else { String::new() },
    );
    Ok(Outcome { summary })
}

/// A file written whole and synced, before the folder is put in place.
pub(crate) fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    std::fs::File::create(path)
        .and_then(|mut file| file.write_all(bytes).and_then(|()| file.sync_all()))
        .map_err(|source| Error::Write { path: path.to_path_buf(), source })
}

/// The line of `jobs.jsonl` for one job hash: the `hgetall-json` record the jobs reader takes.
pub fn job_record(key: &str, id: &str, state: &str, fields: Vec<(String, String)>) -> Json {
    let hash: Map<String, Json> = fields.into_iter().map(|(k, v)| (k, Json::String(v))).collect();
    json!({"key": key, "id": id, "state": state, "hash": hash})
}

fn to_object(fields: &[(String, String)]) -> Json {
    Json::Object(fields.iter().map(|(k, v)| (k.clone(), Json::String(v.clone()))).collect())
}

/// The case manifest: the two sources capture wrote, and the place of the parameters file. The
/// names in it are the user's and the server's: in values, TOML strings with every control and
/// hidden character escaped (`toml_string`); in comments, made visible (`escape::visible`), as a
/// TOML comment may hold no control character (issue 34: a DEL in a queue name made the manifest
/// one analyze refused).
pub fn manifest(queue: &str, prefix: &str, target: &str, redis_time: &str, bull: Option<&str>) -> String {
    use std::fmt::Write;
    let comment = escape::visible;
    let mut text = format!(
        "# Written by `leasetrace capture` from {}, queue {} (prefix {}), at {} (Redis' clock).\n\
         # capture.json records what was read, with which commands, and what could not be; the report\n\
         # takes its notes from it (how far back the stream reached, locks still held, what was left out).\n\
         display_tz = \"UTC\"\n\
         capture = \"capture.json\"\n",
        comment(target),
        comment(&toml_string(queue)),
        comment(&toml_string(prefix)),
        comment(redis_time),
    );
    match bull {
        None => {
            let _ = write!(
                text,
                "\n[[sources]]\n\
                 kind = \"bullmq-events\"   # XRANGE of {}:{}:events, one entry per line\n\
                 path = \"events.jsonl\"\n\
                 queue = {}\n",
                comment(prefix),
                comment(queue),
                toml_string(queue),
            );
        }
        Some(version) => {
            let _ = write!(
                text,
                "\n# Legacy Bull {}: its lock rules (renewal, stalled check, limit) are Bull's; it keeps no\n\
                 # events stream (pub/sub only): the job hashes, locks and the stalled set are its record.\n\
                 [analysis]\n\
                 bull_version = {}\n",
                comment(version),
                toml_string(version),
            );
        }
    }
    let library = if bull.is_some() { "Bull's queue settings" } else { "BullMQ's worker options" };
    let _ = write!(
        text,
        "\n[[sources]]\n\
         kind = \"bullmq-jobs\"     # HGETALL of every job hash, with its state\n\
         path = \"jobs.jsonl\"\n\
         queue = {}\n\
         \n\
         # {library} are not stored in Redis: put the workers' options file here\n\
         # (lockDuration, stalledInterval, maxStalledCount) and uncomment this source; without it,\n\
         # leasetrace assumes the library's defaults and says so.\n\
         # [[sources]]\n\
         # kind = \"bullmq-params\"\n\
         # path = \"{}.json\"\n\
         \n\
         # Add the app's run ledger and server logs as further sources (see `leasetrace docs inputs`).\n",
        toml_string(queue),
        if bull.is_some() { "bull" } else { "bullmq" },
    );
    text
}

/// A TOML basic string that reads back as `text`, on one line, with no character that a
/// terminal or an editor would act on: quotes and backslashes escaped, control characters and
/// the characters `escape` hides as `\uXXXX`.
pub fn toml_string(text: &str) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() || escape::hidden(c) => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_page_starts_just_after_the_last_id() {
        assert_eq!(next_id("1791333180000-0").as_deref(), Some("1791333180000-1"));
        assert_eq!(next_id(&format!("5-{}", u64::MAX)).as_deref(), Some("6-0"));
        assert_eq!(next_id("nonsense"), None);
    }

    #[test]
    fn scan_patterns_match_the_names_literally() {
        assert_eq!(glob_escape("bull:pr-review"), "bull:pr-review");
        assert_eq!(glob_escape("{bull}:q*[1]?"), "{bull}:q\\*\\[1\\]\\?");
    }

    #[test]
    fn the_manifest_is_valid_toml_with_both_sources() {
        let text = manifest("pr-\"review", "bull", "redis://h:1/0", "2026-12-02T00:00:00Z", None);
        let parsed: toml::Value = toml::from_str(&text).unwrap();
        assert_eq!(parsed["capture"].as_str(), Some("capture.json"), "the record, for the report");
        let sources = parsed["sources"].as_array().unwrap();
        assert_eq!(sources.len(), 2);
        assert_eq!(sources[0]["queue"].as_str(), Some("pr-\"review"));
        assert_eq!(sources[1]["path"].as_str(), Some("jobs.jsonl"));
    }

    #[test]
    fn names_with_control_and_hidden_characters_are_escaped_in_values_and_comments() {
        // A DEL made the manifest one analyze refused ("invalid comment character").
        for queue in ["pr-\u{7f}review", "q\u{1b}]0;owned\u{7}", "job-\u{202e}gpj", "a\\b\"c\r\nd\t", "ü日本🙂"] {
            for prefix in ["bull", "{bull\u{7f}}"] {
                let text = manifest(queue, prefix, "redis://h:1/0", "2026-12-02T00:00:00Z", None);
                let parsed: toml::Value = toml::from_str(&text).unwrap_or_else(|e| panic!("{queue:?}: {e}\n{text}"));
                assert_eq!(parsed["sources"][0]["queue"].as_str(), Some(queue), "{text}");
                assert!(
                    !text.chars().any(|c| (c.is_control() && c != '\n') || escape::hidden(c)),
                    "no control or hidden character, in values or comments:\n{text}"
                );
            }
        }
        assert_eq!(toml_string("pr-\u{7f}\u{202e}"), "\"pr-\\u007F\\u202E\"");
    }

    #[test]
    fn sizes_are_shown_in_the_largest_unit_that_divides_them() {
        assert_eq!(size(64 << 20), "64 MiB");
        assert_eq!(size(1536), "1536 bytes");
        assert_eq!(size(2048), "2 KiB");
    }

    #[test]
    fn the_record_refuses_a_part_that_takes_it_past_what_analyze_reads() {
        let mut record = RecordSize(0);
        let member = Json::String("x".repeat(1 << 20));
        for _ in 0..79 {
            record.add(&member).unwrap();
        }
        let refused = record.add(&member).unwrap_err().0;
        assert!(refused.starts_with("the capture record (capture.json) would be larger than 80 MiB"), "{refused}");
    }
}
