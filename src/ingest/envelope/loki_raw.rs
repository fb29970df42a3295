//! Grafana Loki's `logcli query --output=raw`: each entry's line alone, as grafana/loki
//! pkg/logcli/output/raw.go prints it. No time, no labels: every line is a record with
//! `at: None`, and its order (newest first unless `--forward`) cannot be seen in it. Nothing marks
//! it: it is read only when `format = "loki-raw"` says so, and never sniffed. An entry whose own
//! line held a line end is read as two records (raw output cannot tell them apart).

use std::io::BufRead;

use crate::error::Result;

use super::by_line::{ByLine, Line};
use super::{Context, Envelope, Labels, Piece, Record};

pub struct LokiRaw;

impl Envelope for LokiRaw {
    fn name(&self) -> &'static str {
        "loki-raw"
    }

    /// Never: a raw export is the application's lines, a plain log.
    fn sniff(&self, _head: &str) -> bool {
        false
    }

    fn example(&self) -> &'static str {
        "2026-10-07 08:50:00.000 INFO  [main] log rotated"
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
            Some(match lines.next_line() {
                Ok(Some(Line::Text(line, text))) if text.trim().is_empty() => {
                    Ok(Piece::Ignored { line, lines: 1, reason: "blank line" })
                }
                Ok(Some(Line::Text(line, message))) => {
                    Ok(Piece::Record(Record { line, lines: 1, at: None, labels: Labels::default(), message }))
                }
                Ok(Some(long)) => return long.rejected().map(Ok),
                Ok(None) => return None,
                Err(error) => {
                    failed = true;
                    Err(error)
                }
            })
        }))
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn every_line_is_a_record_without_time_or_labels() {
        let context = Context { path: Path::new("raw.txt"), max_line_bytes: 12 };
        let text = "a line\n\n{\"json\":1}\nmuch too long for the cap\n";
        let got: Vec<Piece> = LokiRaw
            .pieces(Box::new(std::io::Cursor::new(text.as_bytes().to_vec())), context)
            .collect::<Result<_>>()
            .unwrap();
        assert_eq!(
            got[0],
            Piece::Record(Record { line: 1, lines: 1, at: None, labels: Labels::default(), message: "a line".into() })
        );
        assert!(matches!(got[1], Piece::Ignored { line: 2, reason: "blank line", .. }));
        assert!(matches!(&got[2], Piece::Record(r) if r.message == "{\"json\":1}"));
        assert!(
            matches!(&got[3], Piece::Rejected { line: 4, reason, .. } if reason.starts_with("line longer than 12 bytes"))
        );
        assert_eq!(got.len(), 4);
        assert!(!LokiRaw.sniff(text));
    }

    #[test]
    fn bytes_that_are_not_text_stop_the_reading_naming_the_line() {
        let context = Context { path: Path::new("raw.txt"), max_line_bytes: 1 << 20 };
        let got: Vec<Result<Piece>> =
            LokiRaw.pieces(Box::new(std::io::Cursor::new(b"ok\n\xff\xfe\nafter\n".to_vec())), context).collect();
        assert_eq!(got.len(), 2);
        let error = got[1].as_ref().unwrap_err().to_string();
        assert!(error.contains("raw.txt") && error.contains('2'), "{error}");
    }
}
