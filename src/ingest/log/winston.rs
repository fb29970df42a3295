//! winston logs in its JSON format: `format.combine(format.timestamp(), format.json())`.
//!
//! winston 3.19 (logform's `json` and `timestamp` formats) writes one object per line with the
//! keys sorted by name: `{"jobId":"7","level":"info","message":"job active","timestamp":"2026-10-07T00:33:00.000Z"}`.
//! `timestamp()` writes `new Date().toISOString()` (UTC, no zone needed); with a `format` option
//! (fecha) it writes what that pattern says, usually the process's local time without an offset
//! (`'YYYY-MM-DD HH:mm:ss'` → `"2026-10-07 09:33:00"`), which takes the source's declared zone.
//! Levels are npm's (`error`, `warn`, `info`, `http`, `verbose`, `debug`, `silly`) or syslog's;
//! `error` and worse (`crit`, `alert`, `emerg`, and `fatal` where apps define it) are severe.
//! With `format.errors({ stack: true })` an error's message is the `message` and its stack a
//! `stack` key; without it an `Error` passed as metadata serializes as `{}`.
//!
//! NestJS's ConsoleLogger with `json: true` writes the same three keys
//! (`{"level":"log","pid":41877,"timestamp":1791333180004,"message":"job active","context":"BullWorker"}`)
//! and is read by this format too. Fields and classification are the structured formats' (structured.rs).

use std::io::BufRead;

use serde_json::Value;

use crate::error::Result;
use crate::model::{Event, InputSummary};

use crate::ingest::log::nestjs::strip_ansi;
use crate::ingest::log::structured::{JsonDialect, read_json_lines, sniff_json};
use crate::ingest::{EventFormat, SourceKind, SourceSpec};

pub struct Winston;

/// How winston names things.
pub const WINSTON: JsonDialect = JsonDialect {
    format: "winston",
    time_key: "timestamp",
    message_key: "message",
    severe: winston_severe,
    example: r#"{"level":"info","message":"job active","timestamp":"2026-10-07T00:33:00.000Z","jobId":"7"}"#,
};

impl EventFormat for Winston {
    fn name(&self) -> &'static str {
        "winston"
    }

    fn kind(&self) -> SourceKind {
        SourceKind::Log
    }

    /// None: `.log` belongs to the text format; winston lines are recognised by their content.
    fn extensions(&self) -> &'static [&'static str] {
        &[]
    }

    fn sniff(&self, first_line: &str) -> bool {
        sniff_json(first_line, &["level", "message", "timestamp"], "timestamp")
    }

    fn read(
        &self,
        spec: &SourceSpec,
        source: u16,
        input: Box<dyn BufRead + Send>,
        events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<()> {
        read_json_lines(&WINSTON, spec, source, input, events, summary)
    }
}

/// `error` and the syslog levels above it; `format.colorize()` colours are ignored.
fn winston_severe(level: Option<&Value>) -> bool {
    let Some(Value::String(level)) = level else {
        return false;
    };
    let level = strip_ansi(level);
    ["error", "crit", "alert", "emerg", "fatal"].iter().any(|severe| level.eq_ignore_ascii_case(severe))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EventKind;
    use std::path::PathBuf;

    fn read(text: &str, tz: Option<chrono_tz::Tz>) -> Result<(Vec<Event>, InputSummary)> {
        let spec = SourceSpec::new(SourceKind::Log, PathBuf::from("app.log"), tz, "--log-tz".into());
        let mut events = Vec::new();
        let mut summary = InputSummary::new("app.log", "log", "winston", tz);
        Winston.read(&spec, 0, Box::new(std::io::Cursor::new(text.to_string())), &mut events, &mut summary)?;
        Ok((events, summary))
    }

    // Lines written by winston 3.19.0 with `format.combine(format.errors({ stack: true }),
    // format.timestamp(), format.json())` and `defaultMeta: { service, pid }`, as in
    // fixtures/formats/winston.log.
    const ACTIVE: &str = r#"{"context":"BullWorker","jobId":"repeat:pr-review-sweep:1791333180000","jobName":"pr-review-sweep","level":"info","message":"job active","pid":41877,"queue":"pr-review","service":"pr-review","timestamp":"2026-10-07T00:33:00.004Z"}"#;
    const DECOY: &str = r#"{"context":"HTTP","level":"http","message":"GET /api/jobs/active 200 8ms","pid":41877,"service":"pr-review","timestamp":"2026-10-07T00:31:47.160Z"}"#;
    const ERROR: &str = r#"{"context":"ReviewClient","level":"error","message":"Request failed with status code 502","pid":41877,"pr":"PR-4412","service":"pr-review","stack":"Error: Request failed with status code 502\n    at ReviewClient.post (/app/dist/review-client.js:41:13)","status":502,"timestamp":"2026-10-07T00:33:09.552Z"}"#;
    const FAILED: &str = r#"{"context":"BullWorker","failedReason":"connect ECONNREFUSED 10.0.3.7:443","jobId":"repeat:pr-review-sweep:1791333300000","level":"warn","message":"job failed","pid":41877,"queue":"pr-review","service":"pr-review","timestamp":"2026-10-07T00:35:02.900Z"}"#;
    // winston 3.19.0, `format.timestamp({ format: 'YYYY-MM-DD HH:mm:ss' })`, run with TZ=Asia/Seoul.
    const LOCAL: &str =
        r#"{"jobId":"7","level":"info","message":"job active","queue":"pr-review","timestamp":"2026-10-07 09:33:00"}"#;

    #[test]
    fn local_timestamps_across_the_fall_back_are_placed_by_their_order() {
        // winston 3.19.0, timestamp({ format: 'YYYY-MM-DD HH:mm:ss.SSS' }), TZ=America/Los_Angeles
        // (fixtures/formats/winston-dst.log): "01:30:00.004" twice, an hour apart.
        let text = include_str!("../../../fixtures/formats/winston-dst.log");
        let (events, summary) = read(text, Some(chrono_tz::America::Los_Angeles)).unwrap();
        let times: Vec<String> = events.iter().map(|e| crate::time::format_rfc3339(e.at())).collect();
        assert_eq!(
            times,
            [
                "2026-11-01T08:30:00.004Z",
                "2026-11-01T08:31:12.500Z",
                "2026-11-01T09:30:00.004Z",
                "2026-11-01T09:30:03.900Z"
            ]
        );
        assert_eq!((summary.folds[0].first.count, summary.folds[0].second.count), (3, 3));
        assert_eq!((summary.lines, summary.used, summary.ignored), (8, 4, 4));
    }

    #[test]
    fn job_lines_take_ids_from_keys_and_iso_needs_no_zone() {
        let (events, summary) = read(&format!("{ACTIVE}\n{DECOY}\n{FAILED}\n"), None).unwrap();
        assert_eq!((summary.lines, summary.used, summary.ignored), (3, 2, 1));
        assert_eq!(events[0].kind, EventKind::JobActive);
        assert_eq!(events[0].at().to_rfc3339(), "2026-10-07T00:33:00.004+00:00");
        assert_eq!(events[0].job_id.as_deref(), Some("repeat:pr-review-sweep:1791333180000"));
        assert_eq!(events[0].job_name.as_deref(), Some("pr-review-sweep"));
        assert_eq!(events[0].queue.as_deref(), Some("pr-review"));
        assert_eq!(events[0].worker.as_deref(), Some("41877"));
        assert_eq!(events[1].kind, EventKind::JobFailed);
        assert_eq!(events[1].detail_str(), Some("connect ECONNREFUSED 10.0.3.7:443"));
    }

    #[test]
    fn worker_settings_nested_or_as_json_in_the_message() {
        // winston 3.19.0, `format.combine(format.timestamp(), format.json())`:
        // `logger.info('worker started', { queue, workerOptions })` and the options stringified
        // into the message.
        let nested = r#"{"level":"info","message":"worker started","pid":41877,"queue":"pr-review","timestamp":"2026-10-07T00:29:58.104Z","workerOptions":{"concurrency":2,"lockDuration":12000,"maxStalledCount":1,"stalledInterval":5000}}"#;
        let text = r#"{"level":"info","message":"worker started {\"concurrency\":2,\"lockDuration\":12000,\"stalledInterval\":5000,\"maxStalledCount\":1}","pid":41877,"timestamp":"2026-10-07T00:29:58.105Z"}"#;
        let (events, summary) = read(&format!("{nested}\n{text}\n"), None).unwrap();
        assert_eq!((summary.lines, summary.used), (2, 2));
        for event in &events {
            assert_eq!(event.kind, EventKind::WorkerSettings);
            let settings = event.settings().unwrap();
            assert_eq!((settings.lock_duration, settings.stalled_interval), (Some(12_000), Some(5_000)));
        }
    }

    #[test]
    fn error_levels_are_error_events() {
        // winston 3.19.0 without `format.errors()`: `logger.error(new Error('bare error'))`
        // keeps no message at all.
        let bare = r#"{"level":"error","timestamp":"2026-10-07T00:33:00.000Z"}"#;
        let (events, summary) = read(&format!("{ERROR}\n{bare}\n"), None).unwrap();
        assert_eq!(summary.used, 2);
        assert_eq!(events[0].kind, EventKind::Error);
        assert_eq!(events[0].detail_str(), Some("Request failed with status code 502"));
        assert_eq!(events[0].item.as_deref(), Some("PR-4412"));
        assert_eq!(events[1].kind, EventKind::Error);
        assert_eq!(events[1].detail(), None);
    }

    #[test]
    fn local_timestamps_need_the_declared_zone() {
        let error = read(LOCAL, None).unwrap_err().to_string();
        assert!(error.starts_with("app.log:1: timestamp has no UTC offset"), "{error}");
        assert!(error.contains("--log-tz"), "{error}");
        let (events, _) = read(LOCAL, Some(chrono_tz::Asia::Seoul)).unwrap();
        assert_eq!(events[0].at().to_rfc3339(), "2026-10-07T00:33:00+00:00");
    }

    #[test]
    fn nestjs_json_mode_reads_as_winston() {
        // NestJS 12.5.1 `new ConsoleLogger('BullWorker', { json: true })`: epoch-ms timestamp.
        let nest = r#"{"level":"error","pid":41877,"timestamp":1791333180004,"message":"boom","context":"BullWorker","error":{"name":"Error","message":"boom","stack":"Error: boom\n    at [eval]:2:225"}}"#;
        assert!(Winston.sniff(nest));
        let (events, _) = read(nest, None).unwrap();
        assert_eq!(events[0].kind, EventKind::Error);
        assert_eq!(events[0].at().to_rfc3339(), "2026-10-07T00:33:00.004+00:00");
    }

    #[test]
    fn every_line_is_accounted_for_and_bad_lines_name_their_line() {
        // winston 3.19.0 `format.json()` without `format.timestamp()`: no timestamp key.
        let no_time = r#"{"jobId":"9","level":"info","message":"job active"}"#;
        let text = format!("{ACTIVE}\n{no_time}\n\n{DECOY}\n{ERROR}\n");
        let (_, summary) = read(&text, None).unwrap();
        assert_eq!((summary.lines, summary.used, summary.ignored, summary.rejected), (5, 2, 2, 1));
        assert_eq!(summary.rejections[0].line, 2);
        assert!(summary.rejections[0].reason.starts_with("no 'timestamp' key"));
        let error = read(&format!("{ACTIVE}\ninfo: job active\n"), None).unwrap_err().to_string();
        assert!(error.starts_with("app.log:2: not a JSON object"), "{error}");
        assert!(error.contains("one winston record per line"), "{error}");
    }

    #[test]
    fn sniffing_needs_level_message_and_timestamp_in_any_order() {
        assert!(Winston.sniff(ACTIVE));
        assert!(Winston.sniff(LOCAL));
        assert!(!Winston.sniff(r#"{"level":30,"time":1791333180000,"msg":"job active"}"#));
        assert!(!Winston.sniff(r#"{"jobId":"9","level":"info","message":"job active"}"#));
    }
}
