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
pub mod record;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, Utc};
use redis::Value;
use serde_json::{Map, Value as Json, json};

use crate::error::{Error, Result};
use crate::progress::Progress;

use client::{Reader, int, items, pairs, text};

/// The capture record's schema: `capture.json` is read by people and programs alike.
pub const RECORD_SCHEMA: &str = "leasetrace.capture/v1";

/// Stream entries per `XRANGE` page, and keys per `SCAN` call and per pipelined batch: large
/// enough to keep round trips few, small enough that no reply holds up a busy server.
const PAGE: usize = 1000;

/// Members read per `LRANGE`/`ZRANGE` call of a state list or set.
const RANGE_PAGE: i64 = 10_000;

/// Keys named in the record when they are of no kind capture reads, at most.
const OTHER_KEYS_SHOWN: usize = 200;

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

/// What the user asked for, validated.
#[derive(Debug, Clone)]
pub struct Options {
    pub url: String,
    pub queue: String,
    pub prefix: String,
    pub out: PathBuf,
    pub max_jobs: Option<u64>,
    pub since: Option<DateTime<Utc>>,
    pub timeout: Duration,
}

impl Options {
    /// The command line's values, checked before anything is sent to the server.
    pub fn build(
        out: &Path,
        url: &str,
        queue: &str,
        prefix: &str,
        max_jobs: Option<u64>,
        since: Option<&str>,
        timeout: f64,
    ) -> Result<Options> {
        if queue.is_empty() || queue.contains(':') {
            return Err(Error::usage(format!(
                "--queue '{queue}': a BullMQ queue name is not empty and has no ':' (BullMQ refuses it: 'Queue name cannot contain :')"
            )));
        }
        if prefix.is_empty() {
            return Err(Error::usage("--prefix: empty (BullMQ's default is 'bull')"));
        }
        if !(timeout.is_finite() && timeout > 0.0 && timeout <= 3600.0) {
            return Err(Error::usage(format!("--timeout {timeout}: expected seconds, more than 0 and at most 3600")));
        }
        let since = since
            .map(|text| {
                crate::time::parse_bound(text)
                    .map_err(|why| Error::usage(format!("--since: {why}")))?
                    .place(Some(chrono_tz::UTC), None)
                    .map_err(|_| {
                        Error::usage(format!("--since '{text}': give a date and time (2026-10-07T09:50:00+09:00)"))
                    })
            })
            .transpose()?;
        Ok(Options {
            url: url.to_string(),
            queue: queue.to_string(),
            prefix: prefix.to_string(),
            out: out.to_path_buf(),
            max_jobs,
            since,
            timeout: Duration::from_secs_f64(timeout),
        })
    }
}

/// Redis' clock and version at one moment of the capture.
fn moment(reader: &mut Reader) -> Result<Json> {
    let time = reader.query("TIME", &[])?;
    let parts: Vec<i64> = items(&time).iter().filter_map(int).collect();
    let micros = match parts.as_slice() {
        [seconds, micros] => seconds * 1_000_000 + micros,
        _ => {
            return Err(Error::Remote {
                target: reader.target().into(),
                command: "TIME".into(),
                message: format!("unexpected reply {time:?}"),
            });
        }
    };
    let info = reader.query("INFO", &["server"])?;
    let mut lossy = false;
    let info = text(&info, &mut lossy).unwrap_or_default();
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

fn key_type(reader: &mut Reader, key: &str) -> Result<String> {
    let mut lossy = false;
    Ok(text(&reader.query("TYPE", &[key])?, &mut lossy).unwrap_or_else(|| "none".into()))
}

/// The members of a list or sorted set in pages (`LRANGE`/`ZRANGE ... WITHSCORES`), or a set's.
fn members(reader: &mut Reader, key: &str, kind: &str) -> Result<Vec<(String, Option<i64>)>> {
    let mut out = Vec::new();
    let mut lossy = false;
    match kind {
        "set" => {
            for member in items(&reader.query("SMEMBERS", &[key])?) {
                out.extend(text(member, &mut lossy).map(|m| (m, None)));
            }
        }
        "list" | "zset" => {
            let mut from = 0i64;
            loop {
                let to = (from + RANGE_PAGE - 1).to_string();
                let start = from.to_string();
                let page = if kind == "list" {
                    reader.query("LRANGE", &[key, &start, &to])?
                } else {
                    reader.query("ZRANGE", &[key, &start, &to, "WITHSCORES"])?
                };
                let page = items(&page);
                let before = out.len();
                if kind == "list" {
                    out.extend(page.iter().filter_map(|m| text(m, &mut lossy)).map(|m| (m, None)));
                } else {
                    for pair in page.chunks(2) {
                        if let [member, score] = pair {
                            // BullMQ's scores are epoch ms (or ms × 0x1000 + a counter for `delayed`): integers.
                            let score = text(score, &mut lossy).and_then(|s| s.parse().ok());
                            out.extend(text(member, &mut lossy).map(|m| (m, score)));
                        }
                    }
                }
                let read = out.len() - before;
                if i64::try_from(read).unwrap_or(i64::MAX) < RANGE_PAGE {
                    break;
                }
                from += RANGE_PAGE;
            }
        }
        _ => {}
    }
    Ok(out)
}

/// The stream id just after `id` (`<ms>-<seq+1>`): the next page of XRANGE starts there, which
/// every Redis with streams accepts (the exclusive `(` form needs 6.2).
fn next_id(id: &str) -> Option<String> {
    let (ms, seq) = id.split_once('-')?;
    let seq: u64 = seq.parse().ok()?;
    Some(match seq.checked_add(1) {
        Some(next) => format!("{ms}-{next}"),
        None => format!("{}-0", ms.parse::<u64>().ok()?.checked_add(1)?),
    })
}

fn create(path: &Path) -> Result<BufWriter<File>> {
    File::create(path).map(BufWriter::new).map_err(|source| Error::Write { path: path.to_path_buf(), source })
}

fn write_line(out: &mut BufWriter<File>, path: &Path, value: &Json) -> Result<()> {
    serde_json::to_writer(&mut *out, value)
        .map_err(std::io::Error::from)
        .and_then(|()| out.write_all(b"\n"))
        .map_err(|source| Error::Write { path: path.to_path_buf(), source })
}

fn finish(mut out: BufWriter<File>, path: &Path) -> Result<()> {
    out.flush().map_err(|source| Error::Write { path: path.to_path_buf(), source })
}

/// The folder must be new or empty: a capture never mixes with, or overwrites, other evidence.
fn prepare_folder(out: &Path) -> Result<()> {
    if out.exists() {
        let empty =
            std::fs::read_dir(out).map_err(|source| Error::Io { path: out.to_path_buf(), source })?.next().is_none();
        if !empty {
            return Err(Error::usage(format!(
                "{}: the folder is not empty: capture writes into a new or empty folder (it never overwrites evidence)",
                out.display()
            )));
        }
        return Ok(());
    }
    std::fs::create_dir_all(out).map_err(|source| Error::Write { path: out.to_path_buf(), source })
}

/// What the capture found, for the summary printed on stdout.
pub struct Outcome {
    pub summary: String,
}

/// The queues under `prefix` that have a meta hash, for the message of a wrong queue name: one
/// pass of SCAN over at most `budget` calls (a big keyspace is not walked whole for a message).
fn queues_under(reader: &mut Reader, prefix: &str, budget: usize) -> Result<(Vec<String>, bool)> {
    let pattern = format!("{}:*:meta", glob_escape(prefix));
    let mut cursor = "0".to_string();
    let mut found = std::collections::BTreeSet::new();
    let mut lossy = false;
    for _ in 0..budget {
        let reply = reader.query("SCAN", &[&cursor, "MATCH", &pattern, "COUNT", "1000"])?;
        let parts = items(&reply);
        cursor = parts.first().and_then(|c| text(c, &mut lossy)).unwrap_or_else(|| "0".into());
        for key in parts.get(1).map(items).unwrap_or_default() {
            if let Some(key) = text(key, &mut lossy)
                && let Some(queue) = key.strip_prefix(&format!("{prefix}:")).and_then(|k| k.strip_suffix(":meta"))
            {
                found.insert(queue.to_string());
            }
        }
        if cursor == "0" {
            return Ok((found.into_iter().collect(), true));
        }
    }
    Ok((found.into_iter().collect(), false))
}

pub fn run(options: &Options, progress: &Progress) -> Result<Outcome> {
    let (mut reader, auth) = client::Reader::connect(&options.url, options.timeout)?;
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
            format!("queues under the prefix '{}'{searched}: {}", options.prefix, queues.join(", "))
        };
        return Err(Error::Remote {
            target: reader.target().into(),
            command: format!("TYPE {meta_key}"),
            message: format!(
                "no BullMQ queue '{}' here: none of its keys ({meta_key}, {events_key}, {base}:wait, ...) exists; {found}",
                options.queue
            ),
        });
    }
    if events_type != "none" && events_type != "stream" {
        return Err(Error::Remote {
            target: reader.target().into(),
            command: format!("TYPE {events_key}"),
            message: format!(
                "{events_key} is a {events_type}, not a stream: not a BullMQ queue's events (another --prefix?)"
            ),
        });
    }

    let mut not_read: Vec<Json> = Vec::new();
    let mut lossy_keys: Vec<String> = Vec::new();

    // The meta hash: BullMQ's version as last written, maxLenEvents, concurrency settings.
    let mut meta = Map::new();
    if meta_type == "hash" {
        let mut lossy = false;
        for (field, value) in pairs(&reader.query("HGETALL", &[&meta_key])?, &mut lossy) {
            meta.insert(field, Json::String(value));
        }
    } else if meta_type != "none" {
        not_read.push(json!({"key": meta_key, "why": format!("a {meta_type}, not BullMQ's meta hash")}));
    }

    // The state lists and sets: each job's state, and the counts for the record.
    let mut state_of: HashMap<String, &'static str> = HashMap::new();
    let mut states = Map::new();
    for &(name, state) in STATES {
        let kind = state_types.iter().find(|(n, _)| *n == name).map_or("none", |(_, t)| t.as_str());
        let key = key(name);
        if !matches!(kind, "list" | "zset" | "set" | "none") {
            not_read.push(json!({"key": key, "why": format!("a {kind}, not a list or sorted set")}));
            continue;
        }
        let list = members(&mut reader, &key, kind)?;
        for (id, _) in &list {
            // A job in two places (it moves while we read) keeps the first, the earlier state.
            state_of.entry(id.clone()).or_insert(state);
        }
        states.insert(name.to_string(), json!({"key": key, "type": kind, "count": list.len()}));
    }
    if state_of.is_empty() && events_type == "none" {
        return Err(Error::Remote {
            target: reader.target().into(),
            command: format!("TYPE {events_key}"),
            message: format!(
                "queue '{}' holds nothing to capture: no events stream and no job in any state list ({})",
                options.queue,
                if meta.is_empty() {
                    "and no meta hash".to_string()
                } else {
                    format!("meta hash: {}", Json::Object(meta.clone()))
                }
            ),
        });
    }

    prepare_folder(&options.out)?;

    // The stalled-check bookkeeping: the `stalled` set, the `stalled-check` key and its expiry.
    let stalled_kind =
        state_types.iter().find(|(n, _)| *n == "stalled").map_or("none", |(_, t)| t.as_str()).to_string();
    let stalled: Vec<String> =
        members(&mut reader, &key("stalled"), &stalled_kind)?.into_iter().map(|(m, _)| m).collect();
    let check_key = key("stalled-check");
    let check =
        reader.pipeline(&[("GET", vec![check_key.clone()]), ("PTTL", vec![check_key.clone()]), ("TIME", vec![])])?;
    let mut lossy = false;
    let stalled_check = json!({
        "key": check_key,
        "value": check.first().and_then(|r| r.as_ref().ok()).and_then(|v| text(v, &mut lossy)),
        "pttl_ms": check.get(1).and_then(|r| r.as_ref().ok()).and_then(int),
    });

    // Job schedulers and repeatable jobs: the `repeat` sorted set (id → next run, epoch ms).
    let repeat_kind = state_types.iter().find(|(n, _)| *n == "repeat").map_or("none", |(_, t)| t.as_str()).to_string();
    let repeat: Vec<(String, Option<i64>)> = members(&mut reader, &key("repeat"), &repeat_kind)?;

    // The events stream, page by page, written as read.
    let events_path = options.out.join("events.jsonl");
    let mut events_out = create(&events_path)?;
    let mut stream = json!({"key": events_key, "file": "events.jsonl", "exists": events_type == "stream"});
    let mut captured = 0u64;
    if events_type == "stream" {
        let info = reader.query("XINFO", &["STREAM", &events_key])?;
        let mut info_map = Map::new();
        let mut lossy = false;
        for pair in items(&info).chunks(2) {
            if let [name, value] = pair
                && let Some(name) = text(name, &mut lossy)
            {
                let shown = match value {
                    Value::Array(entry) if !entry.is_empty() => {
                        entry.first().and_then(|id| text(id, &mut lossy)).map_or(Json::Null, Json::String)
                    }
                    Value::Nil => Json::Null,
                    other => {
                        int(other).map_or_else(|| text(other, &mut lossy).map_or(Json::Null, Json::String), Json::from)
                    }
                };
                info_map.insert(name, shown);
            }
        }
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
        let bar = progress.items("events stream", "entries", length);
        let mut from = options.since.map_or_else(|| "-".to_string(), |t| format!("{}-0", t.timestamp_millis()));
        // Up to the last entry when the capture began: a busy stream has a defined end.
        let to = last.unwrap_or_else(|| "+".into());
        let count = PAGE.to_string();
        let (mut first_read, mut last_read) = (None::<String>, None::<String>);
        loop {
            let page = reader.query("XRANGE", &[&events_key, &from, &to, "COUNT", &count])?;
            let entries = items(&page);
            for entry in entries {
                let parts = items(entry);
                let Some(id) = parts.first().and_then(|id| text(id, &mut lossy)) else { continue };
                let mut entry_lossy = false;
                let mut fields = Map::new();
                for (field, value) in pairs(parts.get(1).unwrap_or(&Value::Nil), &mut entry_lossy) {
                    fields.insert(field, Json::String(value));
                }
                if entry_lossy {
                    lossy_keys.push(format!("{events_key} {id}"));
                }
                write_line(&mut events_out, &events_path, &json!({"id": id, "fields": fields}))?;
                first_read.get_or_insert_with(|| id.clone());
                last_read = Some(id);
                captured += 1;
            }
            if let Some(bar) = &bar {
                bar.add(entries.len() as u64);
            }
            match (&last_read, entries.len()) {
                (Some(last), n) if n == PAGE => from = next_id(last).unwrap_or_else(|| "+".into()),
                _ => break,
            }
            if from == "+" {
                break;
            }
        }
        stream["captured"] = captured.into();
        stream["captured_first_id"] = first_read.into();
        stream["captured_last_id"] = last_read.into();
    } else {
        stream["captured"] = 0.into();
    }
    finish(events_out, &events_path)?;
    stream["max_len_events"] = meta.get("opts.maxLenEvents").cloned().unwrap_or(Json::Null);

    // Every key of the queue: SCAN, TYPE in batches, then each kind read in batches.
    let jobs_path = options.out.join("jobs.jsonl");
    let logs_path = options.out.join("job-logs.jsonl");
    let mut jobs_out = create(&jobs_path)?;
    let mut logs_out = create(&logs_path)?;
    let mut seen: HashSet<String> = HashSet::new();
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
        let reply = reader.query("SCAN", &[&cursor, "MATCH", &pattern, "COUNT", &PAGE.to_string()])?;
        let parts = items(&reply);
        let mut lossy = false;
        cursor = parts.first().and_then(|c| text(c, &mut lossy)).unwrap_or_else(|| "0".into());
        let batch: Vec<String> = parts
            .get(1)
            .map(items)
            .unwrap_or_default()
            .iter()
            .filter_map(|k| text(k, &mut lossy))
            .filter(|k| seen.insert(k.clone()))
            .collect();
        if let Some(bar) = &bar {
            bar.add(batch.len() as u64);
        }
        let types = reader.pipeline(&batch.iter().map(|k| ("TYPE", vec![k.clone()])).collect::<Vec<_>>())?;
        let mut hashes = Vec::new();
        let mut lock_keys = Vec::new();
        let mut log_keys = Vec::new();
        for (key, kind) in batch.iter().zip(types) {
            let kind = kind.ok().and_then(|v| text(&v, &mut lossy)).unwrap_or_else(|| "unknown".into());
            *by_type.entry(kind.clone()).or_default() += 1;
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
        let replies = reader.pipeline(&hashes.iter().map(|k| ("HGETALL", vec![k.clone()])).collect::<Vec<_>>())?;
        for (key, reply) in hashes.iter().zip(replies) {
            let reply = match reply {
                Ok(reply) => reply,
                Err(why) => {
                    not_read.push(json!({"key": key, "why": why}));
                    continue;
                }
            };
            let mut key_lossy = false;
            let fields = pairs(&reply, &mut key_lossy);
            if key_lossy {
                lossy_keys.push(key.clone());
            }
            let rest = &key[prefix_len.min(key.len())..];
            let has = |name: &str| fields.iter().any(|(k, v)| k == name && !v.is_empty());
            if fields.is_empty() {
                continue; // removed between TYPE and HGETALL
            }
            // BullMQ writes `name` and `timestamp` into every job hash (as the jobs reader decides).
            if !fields.iter().any(|(k, _)| k == "name") || !has("timestamp") {
                if let Some(id) = rest.strip_prefix("repeat:") {
                    let next = repeat.iter().find(|(m, _)| m == id).and_then(|(_, s)| *s);
                    schedulers.push(json!({"key": key, "id": id, "next_ms": next, "hash": to_object(&fields)}));
                } else {
                    other_count += 1;
                    if other_keys.len() < OTHER_KEYS_SHOWN {
                        other_keys.push(format!("{key} (hash)"));
                    }
                }
                continue;
            }
            if let Some(since) = options.since {
                let latest = ["finishedOn", "processedOn", "timestamp"]
                    .iter()
                    .filter_map(|f| fields.iter().find(|(k, _)| k == f)?.1.parse::<i64>().ok())
                    .max()
                    .unwrap_or(i64::MIN);
                if latest < since.timestamp_millis() {
                    before_since += 1;
                    continue;
                }
            }
            if options.max_jobs.is_some_and(|max| jobs_written >= max) {
                beyond_max += 1;
                continue;
            }
            let state = state_of.get(rest).copied().unwrap_or("unknown");
            *by_state.entry(state).or_default() += 1;
            write_line(
                &mut jobs_out,
                &jobs_path,
                &json!({"key": key, "id": rest, "state": state, "hash": to_object(&fields)}),
            )?;
            jobs_written += 1;
        }
        // Locks: holder token and remaining time, read with Redis' clock in the same round trip.
        let mut lock_cmds: Vec<(&str, Vec<String>)> = vec![("TIME", vec![])];
        for key in &lock_keys {
            lock_cmds.push(("GET", vec![key.clone()]));
            lock_cmds.push(("PTTL", vec![key.clone()]));
        }
        if !lock_keys.is_empty() {
            let replies = reader.pipeline(&lock_cmds)?;
            let now_us = replies
                .first()
                .and_then(|r| r.as_ref().ok())
                .map(|t| items(t).iter().filter_map(int).collect::<Vec<_>>())
                .and_then(|p| (p.len() == 2).then(|| p[0] * 1_000_000 + p[1]));
            for (i, key) in lock_keys.iter().enumerate() {
                let token = replies.get(1 + 2 * i).and_then(|r| r.as_ref().ok()).and_then(|v| text(v, &mut lossy));
                let pttl = replies.get(2 + 2 * i).and_then(|r| r.as_ref().ok()).and_then(int);
                let job_id = key[prefix_len.min(key.len())..].strip_suffix(":lock").unwrap_or_default();
                let expires = match (now_us, pttl) {
                    (Some(now), Some(ms)) if ms >= 0 => DateTime::from_timestamp_micros(now + ms * 1000)
                        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
                    _ => None,
                };
                locks.push(json!({
                    "key": key,
                    "job_id": job_id,
                    "token": token,
                    "pttl_ms": pttl,
                    "read_at_redis_time_us": now_us,
                    "expires_at": expires,
                    "job_state": state_of.get(job_id).copied().unwrap_or("unknown"),
                }));
            }
        }
        // Job logs (`Job.log`), each list whole.
        let replies = reader.pipeline(
            &log_keys.iter().map(|k| ("LRANGE", vec![k.clone(), "0".into(), "-1".into()])).collect::<Vec<_>>(),
        )?;
        for (key, reply) in log_keys.iter().zip(replies) {
            match reply {
                Ok(reply) => {
                    let lines: Vec<String> = items(&reply).iter().filter_map(|l| text(l, &mut lossy)).collect();
                    let job_id = key[prefix_len.min(key.len())..].strip_suffix(":logs").unwrap_or_default();
                    log_jobs += 1;
                    log_lines += lines.len() as u64;
                    write_line(&mut logs_out, &logs_path, &json!({"key": key, "job_id": job_id, "lines": lines}))?;
                }
                Err(why) => not_read.push(json!({"key": key, "why": why})),
            }
        }
        if cursor == "0" {
            break;
        }
    }
    drop(bar);
    finish(jobs_out, &jobs_path)?;
    finish(logs_out, &logs_path)?;
    let end = moment(&mut reader)?;
    for key in &lossy_keys {
        not_read.push(json!({"key": key, "why": "holds bytes that are not UTF-8: written with U+FFFD in their place"}));
    }

    let elapsed_ms = (micros_of(&end) - micros_of(&start)) / 1000;
    let record = json!({
        "schema": RECORD_SCHEMA,
        "tool": format!("leasetrace {}", env!("CARGO_PKG_VERSION")),
        "target": {"server": reader.target(), "auth": auth},
        "queue": options.queue,
        "prefix": options.prefix,
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
        "schedulers": {"key": key("repeat"), "members": repeat.iter().map(|(m, s)| json!({"id": m, "next_ms": s})).collect::<Vec<_>>(), "hashes": schedulers},
        "logs": {"file": "job-logs.jsonl", "jobs": log_jobs, "lines": log_lines},
        "keys_by_type": by_type,
        "other_keys": {"count": other_count, "shown": other_keys},
        "commands": reader.commands,
        "not_read": not_read,
        "worker_options": "BullMQ keeps the workers' options (lockDuration, lockRenewTime, stalledInterval, maxStalledCount) in the worker processes only: Redis does not store them, so this capture cannot hold them. Put the workers' options file in this folder and uncomment the bullmq-params source in leasetrace.toml (or give --params FILE).",
    });
    let record_path = options.out.join("capture.json");
    let mut out = create(&record_path)?;
    serde_json::to_writer_pretty(&mut out, &record)
        .map_err(std::io::Error::from)
        .and_then(|()| out.write_all(b"\n"))
        .map_err(|source| Error::Write { path: record_path.clone(), source })?;
    finish(out, &record_path)?;
    let manifest_path = options.out.join("leasetrace.toml");
    std::fs::write(&manifest_path, manifest(options, reader.target(), &start))
        .map_err(|source| Error::Write { path: manifest_path.clone(), source })?;

    let held = locks.iter().filter(|l| l["pttl_ms"].as_i64().is_some_and(|ms| ms > 0)).count();
    let summary = format!(
        "captured queue '{}' from {} into {} in {}\n  events stream: {captured} entries{}\n  job hashes: {jobs_written}{}\n  locks held: {held}; job logs: {log_jobs} jobs, {log_lines} lines\n  record: capture.json; manifest: leasetrace.toml (add the workers' options file: Redis does not store them)\n",
        options.queue,
        reader.target(),
        options.out.display(),
        crate::time::format_duration(f64::from(u32::try_from(elapsed_ms).unwrap_or(u32::MAX)) / 1000.0),
        stream["length"].as_u64().map_or(String::new(), |n| format!(" of {n} in the stream")),
        if beyond_max > 0 { format!(" ({beyond_max} more not written: --max-jobs)") } else { String::new() },
    );
    Ok(Outcome { summary })
}

fn to_object(fields: &[(String, String)]) -> Json {
    Json::Object(fields.iter().map(|(k, v)| (k.clone(), Json::String(v.clone()))).collect())
}

/// The case manifest: the two sources capture wrote, and the place of the parameters file.
fn manifest(options: &Options, target: &str, start: &Json) -> String {
    let queue = toml_string(&options.queue);
    format!(
        "# Written by `leasetrace capture` from {target}, queue {queue} (prefix {}), at {} (Redis' clock).\n\
         # capture.json records what was read, with which commands, and what could not be; the report\n\
         # takes its notes from it (how far back the stream reached, locks still held, what was left out).\n\
         display_tz = \"UTC\"\n\
         capture = \"capture.json\"\n\
         \n\
         [[sources]]\n\
         kind = \"bullmq-events\"   # XRANGE of {}:events, one entry per line\n\
         path = \"events.jsonl\"\n\
         queue = {queue}\n\
         \n\
         [[sources]]\n\
         kind = \"bullmq-jobs\"     # HGETALL of every job hash, with its state\n\
         path = \"jobs.jsonl\"\n\
         queue = {queue}\n\
         \n\
         # BullMQ's worker options are not stored in Redis: put the workers' options file here\n\
         # (lockDuration, stalledInterval, maxStalledCount) and uncomment this source; without it,\n\
         # leasetrace assumes BullMQ's defaults and says so.\n\
         # [[sources]]\n\
         # kind = \"bullmq-params\"\n\
         # path = \"bullmq.json\"\n\
         \n\
         # Add the app's run ledger and server logs as further sources (see docs/inputs.md).\n",
        toml_string(&options.prefix),
        start["redis_time"].as_str().unwrap_or("?"),
        toml_comment(&format!("{}:{}", options.prefix, options.queue)),
    )
}

fn toml_string(text: &str) -> String {
    // A JSON string is a valid TOML basic string for every character BullMQ allows in a name.
    serde_json::to_string(text).unwrap_or_default()
}

fn toml_comment(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
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
        let options = Options {
            url: String::new(),
            queue: "pr-\"review".into(),
            prefix: "bull".into(),
            out: PathBuf::new(),
            max_jobs: None,
            since: None,
            timeout: Duration::from_secs(1),
        };
        let text = manifest(&options, "redis://h:1/0", &json!({"redis_time": "2026-12-02T00:00:00Z"}));
        let parsed: toml::Value = toml::from_str(&text).unwrap();
        assert_eq!(parsed["capture"].as_str(), Some("capture.json"), "the record, for the report");
        let sources = parsed["sources"].as_array().unwrap();
        assert_eq!(sources.len(), 2);
        assert_eq!(sources[0]["queue"].as_str(), Some("pr-\"review"));
        assert_eq!(sources[1]["path"].as_str(), Some("jobs.jsonl"));
    }
}
