//! Grafana Loki's `logcli query` default output (`--output=default`), as grafana/loki
//! pkg/logcli/output/default.go writes it: `<time> <labels> <line>`. The time is Go's
//! `time.RFC3339`, to the second, in `--timezone` (`Local` by default: `+09:00`; `UTC`: `Z`),
//! so it is absolute but coarse. The labels are Go's `LabelSet.String()` (`{pod="web-1"}`, `{}`
//! when none is left), padded with spaces to the longest of the answer's, and are the stream's
//! less those common to every stream (printed once on standard error, given back by
//! `loki::by_line` when the export holds that line). With `--no-labels` there are none:
//! `<time> <line>`. logcli trims the line's own leading and trailing spaces.

use std::io::BufRead;

use chrono::DateTime;

use crate::error::Result;
use crate::model::Moment;

use super::loki::{add_labels, by_line, label_set, stderr_line, with_common};
use super::{Context, Envelope, Labels, Piece, Record};

pub struct LokiDefault;

/// A line of `logcli query --forward` in Seoul (default_test.go's shape).
const EXAMPLE: &str =
    r#"2026-10-07T08:50:00+09:00 {pod="review-api-7d9f8b6c4-x2k9p"}  2026-10-07 08:50:00.000 INFO  [main] log rotated"#;

impl Envelope for LokiDefault {
    fn name(&self) -> &'static str {
        "loki-default"
    }

    /// The first entry lines (up to 5) are all a time to the second and a label set. Without
    /// labels (`--no-labels`) the output is a plain log with RFC 3339 times: it is read only when
    /// `format = "loki-default"` says so.
    fn sniff(&self, head: &str) -> bool {
        let mut lines: Vec<&str> = head.lines().collect();
        if lines.len() > 1 && !head.ends_with('\n') {
            lines.pop();
        }
        let entries: Vec<&str> =
            lines.into_iter().filter(|l| !l.trim().is_empty() && stderr_line(l).is_none()).take(5).collect();
        !entries.is_empty()
            && entries.iter().all(|line| {
                line.split_once(' ').is_some_and(|(stamp, rest)| {
                    !stamp.contains('.') && DateTime::parse_from_rfc3339(stamp).is_ok() && labels_at(rest).is_some()
                })
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

/// The label set at the start of `rest` when one is there, ended by a space or the line's end,
/// and the bytes it takes.
fn labels_at(rest: &str) -> Option<(Vec<(String, String)>, usize)> {
    label_set(rest).filter(|(_, used)| rest[*used..].is_empty() || rest[*used..].starts_with(' '))
}

fn entry(line: u64, text: &str, common: &Labels) -> Piece {
    let (stamp, rest) = text.split_once(' ').unwrap_or((text, ""));
    let Some(at) = DateTime::parse_from_rfc3339(stamp).ok().and_then(|at| Moment::new(at.to_utc()).ok()) else {
        return Piece::Rejected {
            line,
            lines: 1,
            reason: format!(
                "{stamp:?} is not an RFC 3339 time in the years 1677-2262: expected a logcli query line \
                 `<time> <labels> <line>` like {EXAMPLE}"
            ),
        };
    };
    let mut own = Labels::default();
    let message = match labels_at(rest) {
        Some((pairs, used)) => {
            add_labels(&mut own, pairs.iter().map(|(n, v)| (n.as_str(), v.as_str())));
            // The padding, then the one space before the line (logcli trimmed the line's own).
            rest[used..].trim_start_matches(' ')
        }
        None => rest,
    };
    Piece::Record(Record {
        line,
        lines: 1,
        at: Some(at),
        labels: with_common(own, common),
        message: message.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn pieces(text: &str) -> Vec<Piece> {
        let context = Context { path: Path::new("loki.txt"), max_line_bytes: 1 << 20 };
        LokiDefault
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
    fn the_shapes_of_default_test_go_are_read() {
        let got = pieces(concat!(
            "2006-01-02T08:04:05Z {} \n",
            "2006-01-02T08:04:05Z {type=\"test\"} Hello\n",
            "2006-01-02T08:04:05Z {type=\"test\"}        Hello\n",
            "2006-01-02T10:04:05+02:00 {type=\"test\"} Hello\n",
            "2006-01-02T08:04:05Z Hello\n",
            "2006-01-02T08:04:05Z {\"level\":30,\"msg\":\"a pino line, no labels\"}\n",
        ));
        let messages: Vec<&str> = got.iter().map(|p| record(p).message.as_str()).collect();
        assert_eq!(
            messages,
            ["", "Hello", "Hello", "Hello", "Hello", "{\"level\":30,\"msg\":\"a pino line, no labels\"}"]
        );
        assert!(got.iter().all(|p| record(p).at == Some(utc("2006-01-02T08:04:05Z"))));
    }

    #[test]
    fn labels_are_mapped_and_common_ones_given_back() {
        let got = pieces(concat!(
            "2026/10/07 09:40:00 Common labels: {container=\"api\", namespace=\"prod\"}\n",
            "2026-10-07T09:33:00+09:00 {pod=\"web-1\", stream=\"stderr\"} boom\n",
        ));
        let labels = &record(&got[1]).labels;
        assert_eq!(labels.instance().as_deref(), Some("namespace=prod pod=web-1 container=api"));
        assert_eq!(labels.get("stream"), Some("stderr"));
        assert_eq!(record(&got[1]).at, Some(utc("2026-10-07T00:33:00Z")));
    }

    #[test]
    fn a_line_without_a_time_is_rejected_with_the_expected_shape() {
        for text in ["hello world\n", "2026-10-07 09:33:00 {} x\n", "é\n", "{} 2026-10-07T00:33:00Z\n"] {
            let got = pieces(text);
            assert!(
                matches!(&got[..], [Piece::Rejected { reason, .. }] if reason.contains("expected a logcli query line")),
                "{text}: {got:?}"
            );
        }
    }

    #[test]
    fn the_fixture_holds_the_reference_log_in_order_one_pod_across_the_restart() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let text = std::fs::read_to_string(root.join("envelopes/loki-forward-seoul.default")).unwrap();
        let server = std::fs::read_to_string(root.join("incident-2026-10-07/server.log")).unwrap();
        assert!(LokiDefault.sniff(&text));
        let got = pieces(&text);
        assert_eq!(got.len(), text.lines().count());
        let records: Vec<&Record> = got.iter().map(record).collect();
        assert_eq!(records.iter().map(|r| r.message.as_str()).collect::<Vec<_>>(), server.lines().collect::<Vec<_>>());
        assert!(records.iter().all(|r| r.at.unwrap().subsec_nanos() == 0), "to the second");
        let restart = records.iter().position(|r| r.message.contains("server starting")).unwrap();
        assert_eq!(records[restart - 1].labels.get("pod"), Some("review-api-7d9f8b6c4-x2k9p"));
        assert_eq!(records[restart].labels.get("pod"), Some("review-api-7d9f8b6c4-x2k9p"));
    }

    #[test]
    fn sniffs_logcli_default_output_with_labels_and_nothing_else() {
        assert!(LokiDefault.sniff(EXAMPLE));
        for other in [
            "2026-10-07T00:33:00Z INFO started\n",
            "2026-10-07T00:33:00.123456789Z {} a kubectl line\n",
            "2026-10-07T00:33:00Z {\"level\":30}\n",
            "2026-10-07T09:33:00+0900 api-1 app[7]: x\n",
        ] {
            assert!(!LokiDefault.sniff(other), "{other}");
        }
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        for folder in ["formats", "incident-2026-10-07", "envelopes"] {
            for file in std::fs::read_dir(root.join(folder)).unwrap() {
                let path = file.unwrap().path();
                let ours = path.extension().is_some_and(|e| e == "default");
                if !ours && path.extension().is_some_and(|e| e != "sh" && e != "md") && path.is_file() {
                    let text = std::fs::read_to_string(&path).unwrap();
                    assert!(!LokiDefault.sniff(&text), "{}", path.display());
                }
            }
        }
    }
}
