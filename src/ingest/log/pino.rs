//! pino logs: one JSON object per line, as Node's pino logger writes them.
//!
//! pino's default line (pino 10.4, `lib/time.js` `epochTime`, `pino.js` `messageKey: 'msg'`):
//! `{"level":30,"time":1791333180004,"pid":41877,"hostname":"api-1","jobId":"7","msg":"job active"}`.
//! `time` is epoch milliseconds (`stdTimeFunctions.unixTime`: seconds) or, with
//! `timestamp: pino.stdTimeFunctions.isoTime`, an ISO string in UTC (`"2026-10-07T00:33:00.000Z"`):
//! neither needs a zone; a custom time function that writes a local time needs the declared one.
//! `level` is a number (10 trace ... 60 fatal) or, with `formatters.level`, its label. Errors are
//! serialized as `"err":{"type":"Error","message":"...","stack":"..."}` on the same line.
//!
//! The message is `msg`. What every structured log format shares (the line loop, event fields from
//! the line's keys, classification) is in structured.rs; this file keeps pino's names and levels.

use std::io::BufRead;

use serde_json::Value;

use crate::error::Result;
use crate::model::{Event, InputSummary};

use super::structured::{JsonDialect, read_json_lines, sniff_json};
use crate::ingest::{EventFormat, SourceKind, SourceSpec};

pub struct Pino;

/// How pino names things.
pub const PINO: JsonDialect = JsonDialect {
    format: "pino",
    time_key: "time",
    message_key: "msg",
    severe: pino_severe,
    example: r#"{"level":30,"time":1791333180000,"pid":41877,"hostname":"api-1","msg":"job active","jobId":"7"}"#,
};

impl EventFormat for Pino {
    fn name(&self) -> &'static str {
        "pino"
    }

    fn kind(&self) -> SourceKind {
        SourceKind::Log
    }

    /// None: `.log` belongs to the text format; pino lines are recognised by their content.
    fn extensions(&self) -> &'static [&'static str] {
        &[]
    }

    fn sniff(&self, first_line: &str) -> bool {
        sniff_json(first_line, &["level", "time", "msg"], "time")
    }

    fn read(
        &self,
        spec: &SourceSpec,
        source: u16,
        input: Box<dyn BufRead + Send>,
        events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<()> {
        read_json_lines(&PINO, spec, source, input, events, summary)
    }
}

/// Numeric levels 50 (error) and 60 (fatal) and above, or the labels `error` and `fatal`.
fn pino_severe(level: Option<&Value>) -> bool {
    match level {
        Some(Value::Number(number)) => number.as_f64().is_some_and(|n| n >= 50.0),
        Some(Value::String(label)) => label.eq_ignore_ascii_case("error") || label.eq_ignore_ascii_case("fatal"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Channel, EventKind};
    use std::path::PathBuf;

    fn read(text: &str, tz: Option<chrono_tz::Tz>) -> Result<(Vec<Event>, InputSummary)> {
        let spec = SourceSpec::new(SourceKind::Log, PathBuf::from("api.log"), tz, "tz in [[log]]".into());
        let mut events = Vec::new();
        let mut summary = InputSummary::new("api.log", "log", "pino", tz);
        Pino.read(&spec, 0, Box::new(std::io::Cursor::new(text.to_string())), &mut events, &mut summary)?;
        Ok((events, summary))
    }

    fn counts(summary: &InputSummary) -> (u64, u64, u64, u64) {
        (summary.lines, summary.used, summary.ignored, summary.rejected)
    }

    // Lines written by pino 10.4.0 (`pino({ level: 'debug', base: { pid, hostname: 'api-1' } })`,
    // child loggers with `module`), as in fixtures/formats/pino.log.
    const ACTIVE: &str = r#"{"level":30,"time":1791333180004,"pid":41877,"hostname":"api-1","module":"BullWorker","jobId":"repeat:pr-review-sweep:1791333180000","queue":"pr-review","jobName":"pr-review-sweep","msg":"job active"}"#;
    const DECOY: &str = r#"{"level":30,"time":1791333107160,"pid":41877,"hostname":"api-1","module":"http","req":{"method":"GET","url":"/api/jobs/active"},"res":{"statusCode":200},"responseTime":8,"msg":"request completed"}"#;
    const METRICS: &str = r#"{"level":20,"time":1791333012006,"pid":41877,"hostname":"api-1","active":0,"waiting":0,"failed":0,"completed":0,"msg":"job metrics: active=0 waiting=0 failed=0 completed=0"}"#;
    const ERROR: &str = r#"{"level":50,"time":1791333189552,"pid":41877,"hostname":"api-1","module":"ReviewClient","err":{"type":"Error","message":"Request failed with status code 502","stack":"Error: Request failed with status code 502\n    at ReviewClient.post (/app/dist/review-client.js:41:13)"},"pr":"PR-4412","status":502,"msg":"POST /reviews failed"}"#;
    const FAILED: &str = r#"{"level":40,"time":1791333302900,"pid":41877,"hostname":"api-1","module":"BullWorker","jobId":"repeat:pr-review-sweep:1791333300000","queue":"pr-review","err":{"type":"Error","message":"connect ECONNREFUSED 10.0.3.7:443","stack":"Error: connect ECONNREFUSED 10.0.3.7:443"},"msg":"job failed"}"#;

    #[test]
    fn bullmq_errors_logged_as_pino_error_objects_are_classified_by_their_message() {
        // pino 10.4: `logger.error({ err }, 'worker error')` from a BullMQ worker's `error` event
        // (BullMQ 6.7's finishedErrors text), and the same with only the stack kept.
        let mismatch = r#"{"level":50,"time":1791333302900,"pid":7,"hostname":"pod-b","err":{"type":"Error","message":"Lock mismatch for job 42. Cmd moveToFinished from active","stack":"Error: Lock mismatch for job 42. Cmd moveToFinished from active\n    at Scripts.finishedErrors"},"msg":"worker error"}"#;
        let stack_only = r#"{"level":50,"time":1791333302950,"pid":7,"hostname":"pod-b","err":{"type":"Error","stack":"Error: Missing lock for job 43. moveToFinished\n    at x"},"msg":"worker error"}"#;
        let (events, summary) = read(&format!("{mismatch}\n{stack_only}\n"), None).unwrap();
        assert_eq!(summary.used, 2);
        assert_eq!(events[0].kind, EventKind::LockRefused);
        assert_eq!(events[0].job_id.as_deref(), Some("42"));
        assert_eq!(events[0].detail_str(), Some("moveToFinished"));
        assert_eq!(events[1].kind, EventKind::LockRefused);
        assert_eq!(events[1].job_id.as_deref(), Some("43"));
    }

    #[test]
    fn job_lines_take_ids_from_keys_and_epoch_millis_need_no_zone() {
        let (events, summary) = read(&format!("{ACTIVE}\n{FAILED}\n"), None).unwrap();
        let active = &events[0];
        assert_eq!(active.kind, EventKind::JobActive);
        assert_eq!(active.at().to_rfc3339(), "2026-10-07T00:33:00.004+00:00");
        assert_eq!(active.job_id.as_deref(), Some("repeat:pr-review-sweep:1791333180000"));
        assert_eq!(active.queue.as_deref(), Some("pr-review"));
        assert_eq!(active.job_name.as_deref(), Some("pr-review-sweep"));
        assert_eq!(active.worker.as_deref(), Some("api-1/41877"));
        assert_eq!(active.origin().channel, Channel::Log);
        assert_eq!(summary.texts.kept(active.origin().line), Some(ACTIVE));
        assert_eq!(events[1].kind, EventKind::JobFailed);
        assert_eq!(events[1].detail_str(), Some("connect ECONNREFUSED 10.0.3.7:443"));
    }

    #[test]
    fn iso_time_label_levels_and_ids_in_the_message() {
        // pino 10.4.0 with `timestamp: pino.stdTimeFunctions.isoTime` (lib/time.js):
        let iso = r#"{"level":30,"time":"2026-10-07T00:33:00.000Z","pid":41877,"hostname":"vm","jobId":"7","queue":"pr-review","name":"pr-review-sweep","msg":"job active"}"#;
        // ... with `formatters: { level: (label) => ({ level: label }) }`, ids only in the message:
        let label = r#"{"level":"warn","time":1791333180000,"pid":41877,"hostname":"vm","msg":"stalled job 8 queue=pr-review"}"#;
        let (events, summary) = read(&format!("{iso}\n{label}\n"), None).unwrap();
        assert_eq!(counts(&summary), (2, 2, 0, 0));
        assert_eq!(events[0].at().to_rfc3339(), "2026-10-07T00:33:00+00:00");
        assert_eq!(events[0].job_id.as_deref(), Some("7"));
        assert_eq!(events[0].job_name.as_deref(), Some("pr-review-sweep"));
        assert_eq!(events[1].kind, EventKind::JobStalled);
        assert_eq!(events[1].job_id.as_deref(), Some("8"));
        assert_eq!(events[1].queue.as_deref(), Some("pr-review"));
    }

    #[test]
    fn decoys_are_noise_and_unclassified_errors_are_error_events() {
        let (events, summary) = read(&format!("{DECOY}\n{METRICS}\n{ERROR}\n"), None).unwrap();
        assert_eq!(counts(&summary), (3, 1, 2, 0));
        assert_eq!(summary.ignored_by_reason["noise"], 2);
        assert_eq!(events[0].kind, EventKind::Error);
        assert_eq!(events[0].detail_str(), Some("Request failed with status code 502"));
        assert_eq!(events[0].item.as_deref(), Some("PR-4412"));
        // pino 10.4.0 `logger.fatal(new Error('boom'))`: msg is the error's message.
        let fatal = r#"{"level":60,"time":1791333180000,"pid":41877,"hostname":"vm","name":"pr-review-worker","err":{"type":"Error","message":"boom","stack":"Error: boom"},"msg":"boom"}"#;
        let (events, _) = read(fatal, None).unwrap();
        assert_eq!(events[0].kind, EventKind::Error);
        assert_eq!(events[0].detail_str(), Some("boom"));
    }

    #[test]
    fn every_line_is_accounted_for() {
        // pino 10.4.0 `logger.info({ jobId: '7' })` writes no msg; `timestamp: false` writes no time.
        let no_msg = r#"{"level":30,"time":1791333180000,"pid":41877,"hostname":"vm","jobId":"7"}"#;
        let no_time = r#"{"level":30,"pid":41877,"hostname":"vm","msg":"job active","jobId":"9"}"#;
        let no_id = r#"{"level":30,"time":1791333180000,"pid":41877,"msg":"job active"}"#;
        let text = format!("{ACTIVE}\n\n{DECOY}\n{no_msg}\n{no_time}\n{no_id}\n{ERROR}\n");
        let (events, summary) = read(&text, None).unwrap();
        assert_eq!(counts(&summary), (7, 2, 3, 2));
        assert_eq!(summary.lines, summary.used + summary.ignored + summary.rejected);
        assert_eq!(events.len(), 2);
        assert_eq!(summary.ignored_by_reason["blank"], 1);
        assert_eq!(summary.rejections[0].line, 5);
        assert!(summary.rejections[0].reason.starts_with("no 'time' key"), "{}", summary.rejections[0].reason);
        assert_eq!(summary.rejections[1].line, 6);
    }

    #[test]
    fn local_times_need_the_declared_zone() {
        // pino with a custom `timestamp: () => `,"time":"${...}"`` writing local time.
        let local = r#"{"level":30,"time":"2026-10-07 09:33:00.004","pid":41877,"msg":"job active","jobId":"7"}"#;
        let error = read(local, None).unwrap_err().to_string();
        assert!(error.starts_with("api.log:1: timestamp has no UTC offset"), "{error}");
        assert!(error.contains("tz in [[log]]"), "{error}");
        let (events, _) = read(local, Some(chrono_tz::Asia::Seoul)).unwrap();
        assert_eq!(events[0].at().to_rfc3339(), "2026-10-07T00:33:00.004+00:00");
    }

    #[test]
    fn malformed_lines_are_errors_with_their_line() {
        let error = read(&format!("{ACTIVE}\n{{\"level\":30,\"time\":17913\n"), None).unwrap_err().to_string();
        assert!(error.starts_with("api.log:2: not a JSON object"), "{error}");
        assert!(error.contains("expected one pino record per line"), "{error}");
        let error = read(&format!("{ACTIVE}\n{}\n", ACTIVE.replace("1791333180004", "\"soon\"")), None)
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("api.log:2: key 'time': malformed timestamp"), "{error}");
        let error = read(r#"{"level":30,"msg":"job active"}"#, None).unwrap_err().to_string();
        assert!(error.starts_with("api.log:1: no line has a 'time' key"), "{error}");
    }

    #[test]
    fn worker_settings_as_keys_nested_keys_or_message_text() {
        // pino 10.4.0: `logger.info({ queue, opts }, 'worker started')`, `logger.info({ queue,
        // ...opts }, 'worker ready')` and the options in the message, with the incident's clock.
        let nested = r#"{"level":30,"time":1791332998104,"pid":41877,"hostname":"api-1","queue":"pr-review","opts":{"concurrency":2,"lockDuration":12000,"stalledInterval":5000,"maxStalledCount":1},"msg":"worker started"}"#;
        let flat = r#"{"level":30,"time":1791332998105,"pid":41877,"hostname":"api-1","queue":"pr-review","concurrency":2,"lockDuration":12000,"stalledInterval":5000,"maxStalledCount":1,"msg":"worker ready"}"#;
        let text = r#"{"level":30,"time":1791332998106,"pid":41877,"hostname":"api-1","msg":"worker ready lockDuration=12000ms, stalledInterval=5000ms, maxStalledCount=1"}"#;
        let unset = r#"{"level":30,"time":1791332998107,"pid":41877,"hostname":"api-1","opts":{"lockDuration":null},"msg":"worker started"}"#;
        let (events, summary) = read(&format!("{nested}\n{flat}\n{text}\n{unset}\n{DECOY}\n"), None).unwrap();
        assert_eq!(counts(&summary), (5, 3, 1, 1));
        assert!(summary.rejections[0].reason.contains("lockDuration: null"), "{:?}", summary.rejections);
        for event in &events {
            assert_eq!(event.kind, EventKind::WorkerSettings);
            let settings = event.settings().unwrap();
            assert_eq!(
                (settings.lock_duration, settings.stalled_interval, settings.max_stalled_count),
                (Some(12_000), Some(5_000), Some(1))
            );
            assert_eq!(event.worker.as_deref(), Some("api-1/41877"));
        }
        assert_eq!(events[0].queue.as_deref(), Some("pr-review"));
    }

    #[test]
    fn content_comes_before_the_log_ending() {
        let spec = SourceSpec::new(SourceKind::Log, PathBuf::from("api.log"), None, String::new());
        let chosen = |first: &str| crate::ingest::choose_format(&spec, first).unwrap().name();
        assert_eq!(chosen(ACTIVE), "pino");
        assert_eq!(
            chosen(r#"{"level":"info","message":"job active","timestamp":"2026-10-07T00:33:00.000Z"}"#),
            "winston"
        );
        assert_eq!(chosen("[Nest] 41877  - 10/07/2026, 9:33:00 AM     LOG [BullWorker] job active id=7"), "nestjs");
        assert_eq!(chosen("2026-10-07 09:33:00.004 INFO [worker] job active id=7"), "text");
        assert_eq!(chosen("> app@1.0.0 start"), "text");
    }

    #[test]
    fn sniffing_needs_level_time_and_msg() {
        assert!(Pino.sniff(ACTIVE));
        assert!(Pino.sniff(&ACTIVE[..60]));
        assert!(!Pino.sniff(r#"{"level":"info","message":"job active","timestamp":"2026-10-07T00:33:00.000Z"}"#));
        assert!(!Pino.sniff("2026-10-07 09:33:00 INFO job active"));
        assert!(!Pino.sniff(r#"{"ts":1791333183120,"event":"round_started"}"#));
    }
}
