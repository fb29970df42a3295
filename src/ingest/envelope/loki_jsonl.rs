//! Grafana Loki's `logcli query --output=jsonl`: one JSON object a line, as Go's `json.Marshal`
//! writes the map of grafana/loki pkg/logcli/output/jsonl.go: `labels` (left out with
//! `--no-labels`), `line` and `timestamp`, keys sorted. The time is RFC 3339 with up to
//! nanoseconds in `--timezone` (`Local` by default, or `UTC`), its offset written: absolute.
//! The labels are the stream's, less the labels common to every stream of the answer, which
//! logcli prints once on its standard error (`loki::by_line` gives them back when the export
//! holds that line). logcli prints the newest entry first unless `--forward`: the pieces come
//! in the file's order.

use std::io::BufRead;

use chrono::DateTime;
use serde_json::{Map, Value};

use crate::error::Result;
use crate::model::Moment;

use super::loki::{add_labels, by_line, stderr_line, with_common};
use super::{Context, Envelope, Labels, Piece, Record};

pub struct LokiJsonl;

/// A line of `logcli query --output=jsonl --timezone=UTC` (the shape of jsonl_test.go).
const EXAMPLE: &str = r#"{"labels":{"pod":"review-api-7d9f8b6c4-x2k9p"},"line":"2026-10-07 08:50:00.000 INFO  [main] log rotated","timestamp":"2026-10-06T23:50:00.008919333Z"}"#;

/// The keys logcli writes.
const KEYS: &[&str] = &["labels", "line", "timestamp"];

impl Envelope for LokiJsonl {
    fn name(&self) -> &'static str {
        "loki-jsonl"
    }

    /// The first entry line is an object of only logcli's keys, with a `line` and a `timestamp`
    /// in RFC 3339.
    fn sniff(&self, head: &str) -> bool {
        let Some(first) = head.lines().find(|line| !line.trim().is_empty() && stderr_line(line).is_none()) else {
            return false;
        };
        serde_json::from_str::<Map<String, Value>>(first).is_ok_and(|entry| {
            entry.keys().all(|key| KEYS.contains(&key.as_str()))
                && entry.get("line").is_some_and(Value::is_string)
                && entry
                    .get("timestamp")
                    .and_then(Value::as_str)
                    .is_some_and(|t| DateTime::parse_from_rfc3339(t).is_ok())
        })
    }

    fn example(&self) -> &'static str {
        EXAMPLE
    }

    fn pieces<'a>(
        &'a self,
        input: Box<dyn BufRead + Send>,
        context: Context<'a>,
    ) -> Box<dyn Iterator<Item = Result<Piece>> + Send + 'a> {
        by_line(input, context, entry)
    }
}

fn rejected(line: u64, why: impl std::fmt::Display) -> Piece {
    Piece::Rejected {
        line,
        lines: 1,
        reason: format!("{why}: expected a logcli query --output=jsonl line like {EXAMPLE}"),
    }
}

fn entry(line: u64, text: &str, common: &Labels) -> Piece {
    let entry = match serde_json::from_str::<Map<String, Value>>(text) {
        Ok(entry) => entry,
        Err(error) => {
            return rejected(
                line,
                format_args!("not a JSON object ({})", crate::ingest::io::lines::json_problem(&error, text)),
            );
        }
    };
    let Some(message) = entry.get("line").and_then(Value::as_str) else {
        return rejected(line, "no \"line\" string");
    };
    let Some(stamp) = entry.get("timestamp").and_then(Value::as_str) else {
        return rejected(line, "no \"timestamp\" string");
    };
    let Some(at) = DateTime::parse_from_rfc3339(stamp).ok().and_then(|at| Moment::new(at.to_utc()).ok()) else {
        return rejected(line, format_args!("timestamp {stamp:?} is not an RFC 3339 time in the years 1677-2262"));
    };
    let mut own = Labels::default();
    match entry.get("labels") {
        None => {}
        Some(Value::Object(labels)) => {
            let Some(pairs) =
                labels.iter().map(|(n, v)| v.as_str().map(|v| (n.as_str(), v))).collect::<Option<Vec<_>>>()
            else {
                return rejected(line, "a label's value is not a string");
            };
            add_labels(&mut own, pairs);
        }
        Some(_) => return rejected(line, "\"labels\" is not an object"),
    }
    let labels = with_common(own, common);
    Piece::Record(Record { line, lines: 1, at: Some(at), labels, message: message.to_string() })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::ingest::envelope::testing::lines;

    fn pieces(text: &str) -> Vec<Piece> {
        let context = Context { path: Path::new("loki.jsonl"), max_line_bytes: 1 << 20 };
        LokiJsonl
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

    fn utc(text: &str) -> Moment {
        Moment::new(DateTime::parse_from_rfc3339(text).unwrap().to_utc()).unwrap()
    }

    #[test]
    fn an_entry_gives_its_line_nanosecond_time_and_labels() {
        let got = pieces(EXAMPLE);
        let record = record(&got[0]);
        assert_eq!(record.message, "2026-10-07 08:50:00.000 INFO  [main] log rotated");
        assert_eq!(record.at, Some(utc("2026-10-06T23:50:00.008919333Z")));
        assert_eq!(record.at.unwrap().subsec_nanos(), 8_919_333);
        assert_eq!(record.labels.instance().as_deref(), Some("pod=review-api-7d9f8b6c4-x2k9p"));
    }

    #[test]
    fn a_local_timezone_and_no_labels_are_read_too_and_go_escapes_undone() {
        // jsonl_test.go's "timezone option set to a Local one" and "labels output disabled".
        let got = pieces(concat!(
            r#"{"labels":{"type":"test"},"line":"Hello","timestamp":"2006-01-02T10:04:05+02:00"}"#,
            "\n",
            r#"{"line":"a \u003cb\u003e \u0026 c","timestamp":"2006-01-02T08:04:05Z"}"#,
            "\n"
        ));
        assert_eq!(record(&got[0]).at, record(&got[1]).at);
        assert_eq!(record(&got[0]).labels, Labels::default());
        assert_eq!(record(&got[1]).message, "a <b> & c");
    }

    #[test]
    fn common_labels_from_logcli_stderr_go_to_the_lines_after_them() {
        let text = concat!(
            "2026/10/07 09:40:00 http://localhost:3100/loki/api/v1/query_range?direction=BACKWARD&limit=30\n",
            "2026/10/07 09:40:00 Common labels: {app=\"review-api\", namespace=\"prod\", pod=\"p-0\"}\n",
            r#"{"labels":{"pod":"p-1"},"line":"x","timestamp":"2026-10-07T00:33:00Z"}"#,
            "\n",
        );
        let got = pieces(text);
        assert_eq!(lines(&got), 3);
        assert!(matches!(&got[0], Piece::Ignored { reason, .. } if reason.contains("logcli's own message")));
        assert!(matches!(&got[1], Piece::Ignored { reason, .. } if reason.contains("common labels")));
        let labels = &record(&got[2]).labels;
        assert_eq!(labels.instance().as_deref(), Some("namespace=prod pod=p-1"));
        assert_eq!(labels.get("app"), Some("review-api"));
    }

    #[test]
    fn every_line_is_accounted_for_and_hostile_lines_are_rejected_with_reasons() {
        let text = concat!(
            "\n",
            "not json\n",
            r#"{"line":"x"}"#,
            "\n",
            r#"{"timestamp":"2026-10-07T00:33:00Z"}"#,
            "\n",
            r#"{"line":"x","timestamp":"2026-10-07 00:33:00"}"#,
            "\n",
            r#"{"line":"x","timestamp":"9999-10-07T00:33:00Z"}"#,
            "\n",
            r#"{"labels":{"pod":1},"line":"x","timestamp":"2026-10-07T00:33:00Z"}"#,
            "\n",
            r#"{"labels":[],"line":"x","timestamp":"2026-10-07T00:33:00Z"}"#,
            "\n",
            "{\"line\":\"\u{fffd}",
            "\n",
        );
        let got = pieces(text);
        assert_eq!(lines(&got), text.lines().count() as u64);
        assert!(matches!(&got[0], Piece::Ignored { reason: "blank line", .. }));
        assert!(got[1..].iter().all(|p| matches!(p, Piece::Rejected { reason, .. } if reason.contains("expected a logcli query --output=jsonl line"))));
        assert!(matches!(&got[4], Piece::Rejected { reason, .. } if reason.contains("2026-10-07 00:33:00")));
    }

    #[test]
    fn the_fixture_holds_the_reference_log_newest_first_one_pod_across_the_restart() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let text = std::fs::read_to_string(root.join("envelopes/loki-backward-utc.jsonl")).unwrap();
        let server = std::fs::read_to_string(root.join("incident-2026-10-07/server.log")).unwrap();
        assert!(LokiJsonl.sniff(&text));
        let got = pieces(&text);
        assert_eq!(lines(&got), text.lines().count() as u64);
        let mut records: Vec<&Record> = got.iter().map(record).collect();
        assert!(records.windows(2).all(|w| w[0].at > w[1].at), "newest first");
        records.reverse();
        assert_eq!(records.iter().map(|r| r.message.as_str()).collect::<Vec<_>>(), server.lines().collect::<Vec<_>>());
        let restart = records.iter().position(|r| r.message.contains("server starting")).unwrap();
        assert_eq!(records[restart - 1].labels.get("pod"), records[restart].labels.get("pod"));
        assert_eq!(records[restart].labels.get("pod"), Some("review-api-7d9f8b6c4-x2k9p"));
    }

    #[test]
    fn sniffs_logcli_jsonl_and_nothing_else() {
        assert!(LokiJsonl.sniff(EXAMPLE));
        assert!(LokiJsonl.sniff(&format!("2026/10/07 09:40:00 Common labels: {{}}\n{EXAMPLE}\n")));
        for other in [
            r#"{"level":30,"time":1791330600000,"msg":"hi"}"#,
            r#"{"line":"x","timestamp":"2026-10-07T00:33:00Z","level":"info"}"#,
            r#"{"__REALTIME_TIMESTAMP":"1791330600003473","MESSAGE":"m"}"#,
            "2026-10-07T00:33:00Z INFO started\n",
        ] {
            assert!(!LokiJsonl.sniff(other), "{other}");
        }
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        for folder in ["formats", "incident-2026-10-07", "envelopes"] {
            for file in std::fs::read_dir(root.join(folder)).unwrap() {
                let path = file.unwrap().path();
                let loki = path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("loki-"));
                if path.extension().is_some_and(|e| e == "log" || e == "jsonl" || e == "json") && !loki {
                    let text = std::fs::read_to_string(&path).unwrap();
                    assert!(!LokiJsonl.sniff(&text), "{}", path.display());
                }
            }
        }
    }

    #[test]
    fn unwrapped_each_logcli_output_gives_the_reference_logs_events() {
        use super::super::by_line::testing::{reference, unwrapped};
        use crate::model::EventKind;
        for (envelope, name) in [
            (&LokiJsonl as &'static dyn Envelope, "envelopes/loki-backward-utc.jsonl"),
            (&super::super::loki_default::LokiDefault, "envelopes/loki-forward-seoul.default"),
            (&super::super::loki_raw::LokiRaw, "envelopes/loki-forward.raw"),
        ] {
            let (events, _) = unwrapped(envelope, name);
            assert_eq!(events.iter().map(|e| (e.kind, e.at())).collect::<Vec<_>>(), reference(), "{name}");
            let start = events.iter().find(|e| e.kind == EventKind::ProcessStart).expect("the restart");
            // A container's restart in its pod is that pod's own (raw output has no labels).
            let pod = (name != "envelopes/loki-forward.raw").then_some("pod=review-api-7d9f8b6c4-x2k9p");
            assert_eq!(start.instance.as_deref(), pod, "{name}");
        }
    }
}
