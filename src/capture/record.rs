//! What the report takes from a capture record (`capture.json`, declared by the manifest's
//! `capture` key, which `leasetrace capture` writes): the facts about the evidence that no source
//! file holds. They become assumptions of the report, said in the record's own terms: how far back
//! the stream reached when it was captured and how much of it Redis had already trimmed, which
//! job hashes the capture's bounds left out, which locks were still held, what could not be read.

use std::path::Path;

use chrono::DateTime;
use serde_json::Value;

use crate::error::{Error, Result};

/// Locks named one by one in the report, at most (the record has them all).
const LOCKS_SHOWN: usize = 10;
/// A record lists each held lock and each command kind: a queue's 100 000 held locks make about
/// 20 MB. Four times that is not a record.
pub const RECORD_MAX_BYTES: u64 = 80 << 20;

fn stream_time(id: &str) -> Option<String> {
    let millis = id.split_once('-')?.0.parse().ok()?;
    DateTime::from_timestamp_millis(millis).map(crate::time::format_rfc3339)
}

/// The report's notes from the record at `path`.
pub fn notes(path: &Path) -> Result<Vec<String>> {
    let text = crate::ingest::io::lines::read_small_text(
        path,
        RECORD_MAX_BYTES,
        "a capture record written by `leasetrace capture` (`leasetrace docs capture`)",
    )?;
    let record: Value = serde_json::from_str(&text)
        .map_err(|e| Error::input(path, Some(e.line() as u64), format!("not a capture record: {e}")))?;
    if record["schema"] != super::RECORD_SCHEMA {
        return Err(Error::input(
            path,
            None,
            format!(
                "not a capture record: its schema is {}, expected \"{}\" (what `leasetrace capture` writes)",
                record["schema"],
                super::RECORD_SCHEMA
            ),
        ));
    }
    if record["backend"] == "postgres" {
        return Ok(postgres_notes(path, &record));
    }
    let shown = path.display();
    let str_of = |value: &Value| value.as_str().unwrap_or("?").to_string();
    let mut notes = vec![format!(
        "{shown}: captured from {} (Redis {}) from {} to {} on Redis' clock, queue '{}' under the prefix '{}'",
        str_of(&record["target"]["server"]),
        str_of(&record["start"]["redis_version"]),
        str_of(&record["start"]["redis_time"]),
        str_of(&record["end"]["redis_time"]),
        str_of(&record["queue"]),
        str_of(&record["prefix"]),
    )];

    let stream = &record["stream"];
    if let Some(why) = stream["library"].as_str() {
        notes.push(format!(
            "{shown}: the queue is {} ({why}): its job hashes, locks and stalled set are its record",
            str_of(&record["library"])
        ));
    } else if stream["exists"] == false {
        notes.push(format!("{shown}: there was no events stream {} when captured", str_of(&stream["key"])));
    } else if let Some(first) = stream["first_id"].as_str() {
        let first_at = stream_time(first).unwrap_or_else(|| first.to_string());
        let removed = stream["entries_removed"].as_u64().unwrap_or(0);
        if removed > 0 {
            let max_len = stream["max_len_events"].as_str().map_or(String::new(), |n| format!(", maxLenEvents {n}"));
            notes.push(format!(
                "{shown}: when captured, the events stream {} held {} entries, the first at {first_at} ({first}); {removed} earlier entries had already been trimmed (or deleted){max_len}: the stream says nothing about times before {first_at}, and a missing stream event before it is not evidence",
                str_of(&stream["key"]),
                stream["length"].as_u64().unwrap_or(0),
            ));
        }
        if let (Some(captured), Some(length)) = (stream["captured"].as_u64(), stream["length"].as_u64())
            && captured < length
        {
            notes.push(format!(
                "{shown}: {} of the stream's {length} entries were captured (from {}, --since {}): earlier entries are not in {}",
                captured,
                stream["captured_first_id"].as_str().and_then(stream_time).unwrap_or_else(|| "-".into()),
                str_of(&record["bounds"]["since"]),
                str_of(&stream["file"]),
            ));
        }
    }

    let bounds = &record["bounds"];
    for (field, flag) in [("jobs_before_since", "--since"), ("jobs_beyond_max_jobs", "--max-jobs")] {
        if let Some(left) = bounds[field].as_u64().filter(|n| *n > 0) {
            let value = if flag == "--since" { str_of(&bounds["since"]) } else { bounds["max_jobs"].to_string() };
            notes.push(format!(
                "{shown}: {left} job hash(es) of the queue were not captured ({flag} {value}): {} does not hold every job",
                str_of(&record["jobs"]["file"])
            ));
        }
    }

    let locks = record["locks"].as_array().map_or(&[][..], Vec::as_slice);
    let held: Vec<&Value> = locks.iter().filter(|l| l["pttl_ms"].as_i64().is_some_and(|ms| ms > 0)).collect();
    for lock in held.iter().take(LOCKS_SHOWN) {
        let read_at = lock["read_at_redis_time_us"]
            .as_i64()
            .and_then(DateTime::from_timestamp_micros)
            .map_or_else(|| "?".into(), crate::time::format_rfc3339);
        notes.push(format!(
            "{shown}: at {read_at} the lock of job {} ({}) was held by {} with {} ms left, to expire at {}",
            str_of(&lock["job_id"]),
            str_of(&lock["job_state"]),
            str_of(&lock["token"]),
            lock["pttl_ms"],
            str_of(&lock["expires_at"]),
        ));
    }
    if held.len() > LOCKS_SHOWN {
        notes.push(format!("{shown}: {} more locks were held (listed in the record)", held.len() - LOCKS_SHOWN));
    }
    if let Some(not_read) = record["not_read"].as_array().filter(|n| !n.is_empty()) {
        let keys: Vec<String> =
            not_read.iter().take(5).map(|n| format!("{} ({})", str_of(&n["key"]), str_of(&n["why"]))).collect();
        notes.push(format!(
            "{shown}: {} key(s) could not be read faithfully: {}{}",
            not_read.len(),
            keys.join("; "),
            if not_read.len() > 5 { "; ..." } else { "" }
        ));
    }
    Ok(notes)
}

/// The notes of a capture from BullMQ's PostgreSQL backend (`capture::postgres`): the snapshot,
/// the window and what it left out of each table, how far back the event table reached, the
/// locks held, and the ledger's query.
fn postgres_notes(path: &Path, record: &Value) -> Vec<String> {
    let shown = path.display();
    let str_of = |value: &Value| value.as_str().unwrap_or("?").to_string();
    let mut notes = vec![format!(
        "{shown}: captured from {} (PostgreSQL {}) from {} to {} on the database's clock, queue '{}' in schema '{}', in one REPEATABLE READ READ ONLY transaction (every table as of one moment)",
        str_of(&record["target"]["server"]),
        str_of(&record["start"]["server_version"]),
        str_of(&record["start"]["server_time"]),
        str_of(&record["end"]["server_time"]),
        str_of(&record["queue"]),
        str_of(&record["schema_name"]),
    )];
    let bounds = &record["bounds"];
    let window = match (bounds["since"].as_str(), bounds["until"].as_str()) {
        (None, None) => None,
        (since, until) => Some(format!("from {} to {}", since.unwrap_or("the start"), until.unwrap_or("the capture"))),
    };
    if let Some(window) = &window {
        let events = bounds["events_outside_window"].as_u64().unwrap_or(0);
        let jobs = bounds["jobs_outside_window"].as_u64().unwrap_or(0);
        notes.push(format!(
            "{shown}: only the window {window} was captured (--since/--until, pushed into the queries): {events} event row(s) and {jobs} job row(s) of the queue outside it are not in {} and {}; evidence outside the window is not evidence of absence",
            str_of(&record["event_table"]["file"]),
            str_of(&record["job_table"]["file"]),
        ));
    }
    if let Some(left) = bounds["jobs_beyond_max_jobs"].as_u64().filter(|n| *n > 0) {
        notes.push(format!(
            "{shown}: {left} job row(s) of the window were not captured (--max-jobs {}): {} does not hold every job",
            bounds["max_jobs"],
            str_of(&record["job_table"]["file"])
        ));
    }
    let events = &record["event_table"];
    if let (Some(rows), Some(max)) =
        (events["rows_of_queue"].as_u64(), events["max_len_events"].as_str().and_then(|m| m.parse::<u64>().ok()))
        && rows >= max
    {
        notes.push(format!(
            "{shown}: the event table held {rows} rows of the queue, at least its maxLenEvents {max}: it has been trimmed, and says nothing about times before its first row at {}; a missing event before it is not evidence",
            str_of(&events["first_at"]),
        ));
    }
    let locks = record["locks"].as_array().map_or(&[][..], Vec::as_slice);
    let held: Vec<&Value> = locks.iter().filter(|l| l["ms_left_at_start"].as_i64().is_some_and(|ms| ms > 0)).collect();
    for lock in held.iter().take(LOCKS_SHOWN) {
        notes.push(format!(
            "{shown}: at {} the lock of job {} ({}) was held by {} until {} ({} ms later; locked_until_ms is the renewing worker's clock, compared with the database's)",
            str_of(&record["start"]["server_time"]),
            str_of(&lock["job_id"]),
            str_of(&lock["job_state"]),
            str_of(&lock["token"]),
            str_of(&lock["expires_at"]),
            lock["ms_left_at_start"],
        ));
    }
    if held.len() > LOCKS_SHOWN {
        notes.push(format!("{shown}: {} more locks were held (listed in the record)", held.len() - LOCKS_SHOWN));
    }
    let ledger = &record["ledger"];
    if ledger.is_object() {
        notes.push(format!(
            "{shown}: {} holds the rows of the query `{}` {}, by its {} column {}{}",
            str_of(&ledger["file"]),
            crate::capture::escape::clip(&str_of(&ledger["query"]), 200),
            window.as_deref().map_or_else(|| "(no window: every row)".to_string(), |w| format!("inside the window {w}")),
            str_of(&ledger["column_type"]),
            str_of(&ledger["time_column"]),
            ledger["zone"].as_str().map_or(String::new(), |zone| format!(
                " read as wall times of {zone} (the bounds widened by the zone's offset changes: a few rows beyond the window may be in the file)"
            )),
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notes_of(record: &Value) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("capture.json");
        std::fs::write(&path, record.to_string()).unwrap();
        notes(&path).unwrap()
    }

    fn record() -> Value {
        serde_json::json!({
            "schema": super::super::RECORD_SCHEMA,
            "target": {"server": "redis://h:1/0"},
            "queue": "q", "prefix": "bull",
            "start": {"redis_time": "2026-12-02T00:00:00Z", "redis_version": "7.0.15"},
            "end": {"redis_time": "2026-12-02T00:00:01Z"},
            "bounds": {"since": null, "max_jobs": 2, "jobs_before_since": 0, "jobs_beyond_max_jobs": 3},
            "stream": {"key": "bull:q:events", "exists": true, "file": "events.jsonl", "length": 5, "captured": 5,
                       "first_id": "1796176591292-0", "entries_removed": 25, "max_len_events": "5"},
            "jobs": {"file": "jobs.jsonl"},
            "locks": [{"job_id": "8", "job_state": "active", "token": "w:0", "pttl_ms": 1200,
                       "read_at_redis_time_us": 1_796_176_591_361_098_i64, "expires_at": "2026-12-02T01:56:32.561Z"},
                      {"job_id": "9", "pttl_ms": -2}],
            "not_read": [],
        })
    }

    #[test]
    fn a_trimmed_stream_the_bounds_and_the_held_locks_are_said() {
        let notes = notes_of(&record());
        assert!(notes[0].contains("redis://h:1/0 (Redis 7.0.15)"), "{notes:#?}");
        assert!(
            notes.iter().any(|n| n.contains("first at 2026-12-02T01:56:31.292Z")
                && n.contains("25 earlier entries had already been trimmed")
                && n.contains("maxLenEvents 5")),
            "{notes:#?}"
        );
        assert!(notes.iter().any(|n| n.contains("3 job hash(es)") && n.contains("--max-jobs 2")), "{notes:#?}");
        assert!(
            notes.iter().any(|n| n.contains("lock of job 8 (active) was held by w:0 with 1200 ms left")),
            "{notes:#?}"
        );
        assert!(!notes.iter().any(|n| n.contains("job 9")), "a lock that is gone is not held: {notes:#?}");
    }

    #[test]
    fn a_postgres_capture_says_its_snapshot_window_trimmed_table_and_held_locks() {
        let record = serde_json::json!({
            "schema": super::super::RECORD_SCHEMA,
            "backend": "postgres",
            "target": {"server": "postgres://db:5432/app"},
            "queue": "pr-review", "schema_name": "bullmq",
            "start": {"server_time": "2026-10-07T00:53:10Z", "server_version": "16.4"},
            "end": {"server_time": "2026-10-07T00:53:11Z"},
            "bounds": {"since": "2026-10-07T00:30:00.000Z", "until": null, "max_jobs": null,
                       "events_outside_window": 40, "jobs_outside_window": 3, "jobs_beyond_max_jobs": 0},
            "event_table": {"file": "event.csv", "rows_of_queue": 10_100, "first_at": "2026-10-06T22:00:00.000Z", "max_len_events": "10000"},
            "job_table": {"file": "job.csv"},
            "locks": [{"job_id": "7", "job_state": "active", "token": "t-1", "expires_at": "2026-10-07T00:53:40.000Z", "ms_left_at_start": 30_000},
                      {"job_id": "8", "ms_left_at_start": -5}],
            "ledger": {"file": "ledger.csv", "query": "SELECT * FROM runs", "time_column": "ts", "column_type": "timestamptz", "zone": null},
        });
        let notes = notes_of(&record);
        assert!(
            notes[0].contains("postgres://db:5432/app (PostgreSQL 16.4)") && notes[0].contains("REPEATABLE READ"),
            "{notes:#?}"
        );
        assert!(
            notes.iter().any(|n| n.contains("from 2026-10-07T00:30:00.000Z to the capture")
                && n.contains("40 event row(s) and 3 job row(s)")),
            "{notes:#?}"
        );
        assert!(
            notes.iter().any(|n| n.contains("has been trimmed") && n.contains("2026-10-06T22:00:00.000Z")),
            "{notes:#?}"
        );
        assert!(notes.iter().any(|n| n.contains("lock of job 7 (active) was held by t-1")), "{notes:#?}");
        assert!(!notes.iter().any(|n| n.contains("job 8")), "{notes:#?}");
        assert!(
            notes.iter().any(|n| n.contains("`SELECT * FROM runs`") && n.contains("timestamptz column ts")),
            "{notes:#?}"
        );
        assert!(!notes.iter().any(|n| n.contains("Redis")), "{notes:#?}");
    }

    #[test]
    fn an_untrimmed_stream_is_not_called_trimmed_and_another_file_is_refused() {
        let mut untrimmed = record();
        untrimmed["stream"]["entries_removed"] = 0.into();
        assert!(!notes_of(&untrimmed).iter().any(|n| n.contains("trimmed")));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("capture.json");
        std::fs::write(&path, r#"{"schema": "leasetrace.report/v4"}"#).unwrap();
        let error = notes(&path).unwrap_err().to_string();
        assert!(error.contains("not a capture record") && error.contains("leasetrace.capture/v1"), "{error}");
    }
}
