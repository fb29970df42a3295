//! journald's entries as `journalctl -o json` prints them: one JSON object per line (also
//! `-o json-seq`, the same objects each after an ASCII RS). The shape is systemd's
//! `output_json` (src/shared/logs-show.c): every field of the entry under its name, its value a
//! string when it is printable UTF-8, an array of byte values when it is not (a colour escape, a
//! byte that is not UTF-8), `null` when the field is 4096 bytes or more and `--all` was not
//! given, and an array of those when the entry holds the field more than once.
//! `__REALTIME_TIMESTAMP` is when journald received the line, in microseconds since the epoch
//! as a decimal string; `_SOURCE_REALTIME_TIMESTAMP`, when the client sent its own, is preferred
//! the way journalctl's text modes prefer it (`get_display_timestamp`).

use std::io::BufRead;

use chrono::DateTime;
use serde_json::{Map, Value};

use crate::error::Result;
use crate::model::Moment;

use super::by_line::{ByLine, Line};
use super::{Context, Envelope, Labels, Piece, Record};

pub struct JournaldJson;

/// A line of `journalctl -o json` (systemd 252, the fixture's), cut to the fields read.
const EXAMPLE: &str = r#"{"__REALTIME_TIMESTAMP":"1791330600003473","_HOSTNAME":"api-1","_SYSTEMD_UNIT":"review-api.service","SYSLOG_IDENTIFIER":"review-api","_PID":"41877","MESSAGE":"2026-10-07 08:50:00.000 INFO  [main] log rotated"}"#;

impl Envelope for JournaldJson {
    fn name(&self) -> &'static str {
        "journald-json"
    }

    fn sniff(&self, head: &str) -> bool {
        let Some(first) = head.lines().map(|line| line.trim_start_matches('\u{1e}')).find(|l| !l.trim().is_empty())
        else {
            return false;
        };
        match serde_json::from_str::<Map<String, Value>>(first) {
            Ok(entry) => entry.get("__REALTIME_TIMESTAMP").and_then(Value::as_str).is_some_and(is_decimal),
            // A first line longer than the head: journalctl's own marks, in its first bytes.
            Err(_) => {
                first.starts_with('{')
                    && first.len() >= head.len().saturating_sub(1)
                    && first.contains("\"__REALTIME_TIMESTAMP\":\"")
                    && first.contains("\"__CURSOR\":\"s=")
            }
        }
    }

    fn example(&self) -> &'static str {
        EXAMPLE
    }

    fn pieces<'a>(
        &'a self,
        input: Box<dyn BufRead + Send>,
        context: Context<'a>,
    ) -> Box<dyn Iterator<Item = Result<Piece>> + Send + 'a> {
        let mut lines = ByLine::new(input, context);
        let mut failed = false;
        Box::new(std::iter::from_fn(move || {
            if failed {
                return None;
            }
            match lines.next_line() {
                Ok(Some(Line::Text(number, text))) => Some(Ok(entry(number, &text))),
                Ok(Some(long)) => long.rejected().map(Ok),
                Ok(None) => None,
                Err(error) => {
                    failed = true;
                    Some(Err(error))
                }
            }
        }))
    }
}

fn is_decimal(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// A field's value as journalctl printed it.
#[derive(Debug, PartialEq)]
enum Field {
    Missing,
    /// Left out: 4096 bytes or more, without `--all`.
    Null,
    One(String),
    /// The field given more than once in the entry (`None`: a value left out).
    Many(Vec<Option<String>>),
    /// Not a shape journalctl writes (a number, an object).
    Odd,
}

fn field(entry: &Map<String, Value>, name: &str) -> Field {
    match entry.get(name) {
        None => Field::Missing,
        Some(Value::Null) => Field::Null,
        Some(Value::Array(items)) if !items.iter().all(Value::is_number) => {
            let values: Option<Vec<Option<String>>> = items
                .iter()
                .map(|item| match item {
                    Value::Null => Some(None),
                    other => one(other).map(Some),
                })
                .collect();
            values.map_or(Field::Odd, Field::Many)
        }
        Some(value) => one(value).map_or(Field::Odd, Field::One),
    }
}

/// One value: a string, or an array of bytes (decoded as UTF-8, a byte that is not UTF-8 read as
/// U+FFFD: a `String` cannot hold it).
fn one(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Array(items) => {
            let bytes: Option<Vec<u8>> =
                items.iter().map(|item| item.as_u64().and_then(|byte| u8::try_from(byte).ok())).collect();
            bytes.map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        }
        _ => None,
    }
}

/// A label's value: a field given more than once is all its values, joined by commas.
fn label(entry: &Map<String, Value>, names: &[&str]) -> Option<String> {
    names.iter().find_map(|name| match field(entry, name) {
        Field::One(value) => Some(value),
        Field::Many(values) => Some(values.into_iter().flatten().collect::<Vec<_>>().join(",")),
        _ => None,
    })
}

fn rejected(line: u64, why: impl std::fmt::Display) -> Piece {
    Piece::Rejected {
        line,
        lines: 1,
        reason: format!("{why}: expected a journalctl -o json entry, one object a line, like {EXAMPLE}"),
    }
}

fn entry(line: u64, text: &str) -> Piece {
    let text = text.strip_prefix('\u{1e}').unwrap_or(text);
    if text.trim().is_empty() {
        return Piece::Ignored { line, lines: 1, reason: "blank line" };
    }
    let entry = match serde_json::from_str::<Map<String, Value>>(text) {
        Ok(entry) => entry,
        Err(error) => {
            return rejected(
                line,
                format_args!("not a JSON object ({})", crate::ingest::io::lines::json_problem(&error, text)),
            );
        }
    };
    let at = match time(&entry) {
        Ok(at) => at,
        Err(why) => return rejected(line, why),
    };
    let message = match field(&entry, "MESSAGE") {
        Field::One(message) => message,
        Field::Missing => {
            return Piece::Ignored {
                line,
                lines: 1,
                reason: "journald entry without MESSAGE (fields only; journalctl's text modes skip it too)",
            };
        }
        Field::Null => {
            return Piece::Rejected {
                line,
                lines: 1,
                reason: "MESSAGE is null: journalctl leaves out a field of 4096 bytes or more unless given --all \
                         (export again with journalctl -o json --all)"
                    .into(),
            };
        }
        Field::Many(values) => {
            return rejected(line, format_args!("MESSAGE is given {} times in one entry", values.len()));
        }
        Field::Odd => return rejected(line, "MESSAGE is neither a string nor an array of bytes"),
    };
    let mut labels = Labels::default();
    let names: [(&'static str, &[&str]); 4] = [
        ("host", &["_HOSTNAME"]),
        ("unit", &["_SYSTEMD_UNIT", "_SYSTEMD_USER_UNIT"]),
        ("identifier", &["SYSLOG_IDENTIFIER", "_COMM"]),
        ("pid", &["_PID", "SYSLOG_PID"]),
    ];
    for (name, fields) in names {
        if let Some(value) = label(&entry, fields) {
            labels.push(name, value);
        }
    }
    Piece::Record(Record { line, lines: 1, at: Some(at), labels, message })
}

/// The entry's time: the client's own (`_SOURCE_REALTIME_TIMESTAMP`) when it sent one, else
/// journald's (`__REALTIME_TIMESTAMP`), as journalctl's text modes choose.
fn time(entry: &Map<String, Value>) -> std::result::Result<Moment, String> {
    if let Field::One(source) = field(entry, "_SOURCE_REALTIME_TIMESTAMP")
        && let Some(at) = micros(&source)
    {
        return Ok(at);
    }
    match field(entry, "__REALTIME_TIMESTAMP") {
        Field::One(text) => micros(&text).ok_or_else(|| {
            format!("__REALTIME_TIMESTAMP {text:?} is not microseconds since 1970 in the years 1677-2262")
        }),
        Field::Missing => Err("no __REALTIME_TIMESTAMP".into()),
        _ => Err("__REALTIME_TIMESTAMP is not one string".into()),
    }
}

fn micros(text: &str) -> Option<Moment> {
    if !is_decimal(text) {
        return None;
    }
    let micros: i64 = text.parse().ok()?;
    Moment::new(DateTime::from_timestamp_micros(micros)?).ok()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use chrono::{TimeZone, Utc};

    use super::*;
    use crate::ingest::envelope::testing::lines;

    fn pieces(text: &str) -> Vec<Piece> {
        let context = Context { path: Path::new("journal.json"), max_line_bytes: 1 << 20 };
        JournaldJson
            .pieces(Box::new(std::io::Cursor::new(text.as_bytes().to_vec())), context)
            .collect::<Result<Vec<_>>>()
            .unwrap()
    }

    fn record(piece: &Piece) -> &Record {
        match piece {
            Piece::Record(record) => record,
            other => panic!("not a record: {other:?}"),
        }
    }

    #[test]
    fn an_entry_gives_its_message_microsecond_time_and_labels() {
        let got = pieces(EXAMPLE);
        let record = record(&got[0]);
        assert_eq!(record.message, "2026-10-07 08:50:00.000 INFO  [main] log rotated");
        let at = Utc.with_ymd_and_hms(2026, 10, 6, 23, 50, 0).unwrap() + chrono::Duration::microseconds(3473);
        assert_eq!(record.at, Some(Moment::new(at).unwrap()));
        assert_eq!(
            record.labels.instance().as_deref(),
            Some("host=api-1 unit=review-api.service identifier=review-api"),
            "the PID is a label, not the instance"
        );
        assert_eq!(record.labels.get("pid"), Some("41877"));
        assert_eq!(record.labels.get("unit"), Some("review-api.service"));
        assert_eq!(record.labels.get("identifier"), Some("review-api"));
    }

    #[test]
    fn a_message_of_bytes_is_decoded_and_a_byte_not_utf8_is_a_replacement_character() {
        // "\x1b[1mhi" and "caf\xe9", as journalctl prints them.
        let got = pieces(concat!(
            r#"{"__REALTIME_TIMESTAMP":"1","MESSAGE":[27,91,49,109,104,105]}"#,
            "\n",
            r#"{"__REALTIME_TIMESTAMP":"2","MESSAGE":[99,97,102,233]}"#,
            "\n"
        ));
        assert_eq!(record(&got[0]).message, "\u{1b}[1mhi");
        assert_eq!(record(&got[1]).message, "caf\u{fffd}");
    }

    #[test]
    fn a_repeated_field_is_an_array_and_joins_in_a_label_but_a_repeated_message_is_rejected() {
        let got = pieces(concat!(
            r#"{"__REALTIME_TIMESTAMP":"1","MESSAGE":"m","_PID":["7","8"]}"#,
            "\n",
            r#"{"__REALTIME_TIMESTAMP":"1","MESSAGE":["a",[98]]}"#,
            "\n"
        ));
        assert_eq!(record(&got[0]).labels.get("pid"), Some("7,8"));
        assert!(matches!(&got[1], Piece::Rejected { reason, .. } if reason.starts_with("MESSAGE is given 2 times")));
    }

    #[test]
    fn the_client_time_is_preferred_like_journalctl_does() {
        let got = pieces(r#"{"__REALTIME_TIMESTAMP":"2000000","_SOURCE_REALTIME_TIMESTAMP":"1000000","MESSAGE":"m"}"#);
        let at = Moment::new(Utc.timestamp_opt(1, 0).unwrap()).unwrap();
        assert_eq!(record(&got[0]).at, Some(at));
    }

    #[test]
    fn every_line_is_accounted_for_with_a_reason() {
        let text = concat!(
            r#"{"__REALTIME_TIMESTAMP":"1","MESSAGE":"ok"}"#,
            "\n\n",
            r#"{"__REALTIME_TIMESTAMP":"1","MESSAGE":null}"#,
            "\n",
            r#"{"__REALTIME_TIMESTAMP":"1","COREDUMP":"x"}"#,
            "\n",
            r#"{"MESSAGE":"no time"}"#,
            "\n",
            r#"{"__REALTIME_TIMESTAMP":"soon","MESSAGE":"m"}"#,
            "\n",
            "not json\n",
            "\u{1e}",
            r#"{"__REALTIME_TIMESTAMP":"1","MESSAGE":"seq"}"#,
            "\n"
        );
        let got = pieces(text);
        assert_eq!(lines(&got), text.lines().count() as u64);
        assert!(matches!(&got[1], Piece::Ignored { reason: "blank line", .. }));
        assert!(matches!(&got[2], Piece::Rejected { reason, .. } if reason.contains("--all")));
        assert!(matches!(&got[3], Piece::Ignored { reason, .. } if reason.contains("without MESSAGE")));
        assert!(matches!(&got[4], Piece::Rejected { reason, .. } if reason.starts_with("no __REALTIME_TIMESTAMP")));
        assert!(matches!(&got[5], Piece::Rejected { reason, .. } if reason.contains("\"soon\"")));
        assert!(
            matches!(&got[6], Piece::Rejected { reason, .. } if reason.contains("expected a journalctl -o json entry"))
        );
        assert_eq!(record(&got[7]).message, "seq");
    }

    #[test]
    fn hostile_values_are_rejected_not_panicked_on() {
        for text in [
            r#"{"__REALTIME_TIMESTAMP":"99999999999999999999999","MESSAGE":"m"}"#,
            r#"{"__REALTIME_TIMESTAMP":"1","MESSAGE":[256,-1]}"#,
            r#"{"__REALTIME_TIMESTAMP":"1","MESSAGE":{"a":1}}"#,
            r#"{"__REALTIME_TIMESTAMP":1,"MESSAGE":"m"}"#,
            "[1,2,3]",
            "{\"__REALTIME_TIMESTAMP\":\"1\",\"MESSAGE\":\"\u{fffd}",
        ] {
            let got = pieces(text);
            assert!(matches!(&got[..], [Piece::Rejected { .. }]), "{text}: {got:?}");
        }
    }

    #[test]
    fn sniffs_journalctl_json_and_nothing_else() {
        assert!(JournaldJson.sniff(&format!("{EXAMPLE}\n")));
        assert!(JournaldJson.sniff(&format!("\u{1e}{EXAMPLE}\n")));
        for other in [
            "2026-10-07T00:33:00Z INFO started\n",
            r#"{"level":30,"time":1791330600000,"msg":"hi"}"#,
            r#"{"labels":{"pod":"web-1"},"line":"x","timestamp":"2026-10-07T00:33:00Z"}"#,
            r#"{"__REALTIME_TIMESTAMP":1791330600003473,"MESSAGE":"number, not string"}"#,
        ] {
            assert!(!JournaldJson.sniff(other), "{other}");
        }
    }

    fn fixture(name: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
    }

    #[test]
    fn the_generated_journal_holds_the_reference_log_line_for_line_with_the_restart_as_a_new_pid() {
        let text = fixture("envelopes/journald.json");
        assert!(JournaldJson.sniff(&text));
        let server = fixture("incident-2026-10-07/server.log");
        let got = pieces(&text);
        assert_eq!(lines(&got), text.lines().count() as u64);
        let records: Vec<&Record> = got.iter().map(record).collect();
        let messages: Vec<&str> = records.iter().map(|r| r.message.as_str()).collect();
        assert_eq!(messages, server.lines().collect::<Vec<_>>());
        let restart = messages.iter().position(|m| m.contains("server starting")).unwrap();
        assert!(records[..restart].iter().all(|r| r.labels.get("pid") == Some("41877")));
        assert!(records[restart..].iter().all(|r| r.labels.get("pid") == Some("52117")));
        // The envelope's time is the line's KST time less 9 h, plus journald's few ms of lag.
        let first = chrono::NaiveDateTime::parse_from_str(&messages[0][..23], "%Y-%m-%d %H:%M:%S%.3f").unwrap();
        let utc = Moment::new(first.and_utc() - chrono::Duration::hours(9)).unwrap();
        let lag = (records[0].at.unwrap().utc() - utc.utc()).num_microseconds().unwrap();
        assert!((1_000..10_000).contains(&lag), "{lag} µs");
    }

    #[test]
    fn the_generated_odd_entries_are_read_as_journalctl_wrote_them() {
        let text = fixture("envelopes/journald-bytes.json");
        let got = pieces(&text);
        assert_eq!(lines(&got), text.lines().count() as u64);
        let messages: Vec<&str> = got.iter().map(|p| record(p).message.as_str()).collect();
        assert!(messages[1].starts_with("\u{1b}[33m2026-10-07 09:30:02.000 WARN"));
        assert!(messages[2].contains("/caf\u{fffd} 404"));
        assert!(messages[3].ends_with("id=42\n    at Worker.run (worker.js:10:5)"));
        assert_eq!(record(&got[5]).labels.get("pid"), Some("777"));
    }

    #[test]
    fn no_plain_log_of_the_fixtures_sniffs_as_journalctl_json() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        for folder in ["formats", "incident-2026-10-07", "envelopes"] {
            for file in std::fs::read_dir(root.join(folder)).unwrap() {
                let path = file.unwrap().path();
                let journald = path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("journald"));
                let ours = journald && path.extension().is_some_and(|e| e == "json");
                if !ours && path.extension().is_some_and(|e| e != "sh" && e != "md") && path.is_file() {
                    let text = std::fs::read_to_string(&path).unwrap();
                    assert!(!JournaldJson.sniff(&text), "{}", path.display());
                }
            }
        }
    }

    #[test]
    fn unwrapped_the_journal_gives_the_reference_logs_events_and_the_restart_is_the_services_own() {
        use super::super::by_line::testing::{reference, unwrapped};
        use crate::model::EventKind;
        for (envelope, name) in [
            (&JournaldJson as &'static dyn Envelope, "envelopes/journald.json"),
            (&super::super::journald_short::SHORT_ISO, "envelopes/journald-seoul.short-iso"),
            (&super::super::journald_short::SHORT_ISO, "envelopes/journald-utc.short-iso"),
            (&super::super::journald_short::SHORT_ISO_PRECISE, "envelopes/journald-seoul.short-iso-precise"),
        ] {
            let (events, _) = unwrapped(envelope, name);
            assert_eq!(events.iter().map(|e| (e.kind, e.at())).collect::<Vec<_>>(), reference(), "{name}");
            let start = events.iter().find(|e| e.kind == EventKind::ProcessStart).expect("the restart");
            // The restart (a new PID) is the restart of the service that held the jobs before it.
            let active = events.iter().find(|e| e.kind == EventKind::JobActive).expect("an activation");
            assert!(start.instance.is_some() && start.instance == active.instance, "{name}: {:?}", start.instance);
        }
    }
}
