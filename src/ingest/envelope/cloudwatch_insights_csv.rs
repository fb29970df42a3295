//! A CloudWatch Logs Insights result table exported as CSV (the console's "Export results →
//! Download table (CSV)"), from a query that keeps the events' messages:
//! `fields @timestamp, @message, @logStream, @log | sort @timestamp desc`.
//!
//! The header is the query's fields; `@timestamp` and `@message` must be among them, and
//! `@logStream` (the instance label `log_stream`) and `@log` (`account:log-group`, the label
//! `log_group`) are kept when present. Rows are usually newest first (the console's default sort).
//!
//! `@timestamp` is written as `2026-10-06 23:50:00.004`, with no zone. Logs Insights returns it
//! in UTC, but the console can be set to show times in the browser's zone, and no AWS document
//! says which of the two the downloaded table holds: a wall-clock time whose zone the file does
//! not say is no evidence of the instant, so `cloudwatch-insights-csv` leaves `at` empty and the
//! time of the application's own line (in the source's declared zone) is the event's.
//! `cloudwatch-insights-csv-utc` is for a responder who knows the table is in UTC (the console's
//! time zone setting was UTC when it was downloaded): it says so by its name and is never sniffed.
//! A time with an offset (`...Z`, `+09:00`) is read as written by both.

use std::io::BufRead;

use chrono::{DateTime, NaiveDateTime, Utc};

use crate::error::Result;

use super::export_csv::{self, CsvExport};
use super::{Context, Envelope, Piece};

/// `utc`: whether a time with no zone is read as UTC (`cloudwatch-insights-csv-utc`).
pub struct InsightsCsv {
    pub utc: bool,
}

pub static INSIGHTS_CSV: InsightsCsv = InsightsCsv { utc: false };
pub static INSIGHTS_CSV_UTC: InsightsCsv = InsightsCsv { utc: true };

const EXAMPLE: &str = "@timestamp,@message,@logStream,@log\n\
    2026-10-07 00:33:00.004,2026-10-07 09:33:00.000 INFO  [BullWorker] job active,ecs/api/4f1c9e2a7b30,123456789012:/ecs/pr-review-api";

impl Envelope for InsightsCsv {
    fn name(&self) -> &'static str {
        if self.utc { "cloudwatch-insights-csv-utc" } else { "cloudwatch-insights-csv" }
    }

    /// A header that names `@timestamp` and `@message`: Logs Insights' own field names.
    fn sniff(&self, head: &str) -> bool {
        !self.utc && export_csv::sniff_header(head, &["@timestamp", "@message"], &[])
    }

    fn example(&self) -> &'static str {
        EXAMPLE
    }

    fn pieces<'a>(
        &'a self,
        input: Box<dyn BufRead + Send>,
        context: Context<'a>,
    ) -> Box<dyn Iterator<Item = Result<Piece>> + Send + 'a> {
        export_csv::pieces(self, input, context)
    }
}

impl CsvExport for InsightsCsv {
    fn what(&self) -> &'static str {
        "a CloudWatch Logs Insights CSV export"
    }

    fn example(&self) -> &'static str {
        EXAMPLE
    }

    fn time_column(&self) -> &'static str {
        "@timestamp"
    }

    fn message_column(&self) -> &'static str {
        "@message"
    }

    fn label_columns(&self) -> &'static [(&'static str, &'static str)] {
        &[("@logStream", "log_stream"), ("@log", "log_group")]
    }

    fn time(&self, cell: &str) -> std::result::Result<Option<DateTime<Utc>>, String> {
        if cell.is_empty() {
            return Ok(None);
        }
        if let Some(at) = export_csv::time_with_offset(cell) {
            return Ok(Some(at));
        }
        match NaiveDateTime::parse_from_str(cell, "%Y-%m-%d %H:%M:%S%.f") {
            Ok(naive) if self.utc => Ok(Some(naive.and_utc())),
            Ok(_) => Ok(None),
            Err(_) => Err(format!(
                "expected an @timestamp like `2026-10-07 00:33:00.004`, found `{}`",
                export_csv::quote(cell)
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn pieces(envelope: &InsightsCsv, text: &str) -> Result<Vec<Piece>> {
        let context = Context { path: Path::new("insights.csv"), max_line_bytes: 1 << 20 };
        envelope.pieces(Box::new(std::io::Cursor::new(text.to_string())), context).collect()
    }

    fn record(piece: &Piece) -> &super::super::Record {
        match piece {
            Piece::Record(record) => record,
            other => panic!("expected a record, got {other:?}"),
        }
    }

    const SAMPLE: &str = "@timestamp,@message,@logStream,@log\n\
        2026-10-07 00:33:00.123,\"2026-10-07 09:33:00.118 ERROR [Job] failed \"\"x\"\"\n    at run (job.js:1)\",ecs/api/4f1c,123456789012:/ecs/api\n\
        2026-10-07 00:32:59.004,2026-10-07 09:32:59.000 INFO  [HTTP] GET /healthz 200,ecs/api/4f1c,123456789012:/ecs/api\n";

    #[test]
    fn rows_give_the_message_as_written_the_stream_and_no_time_without_a_zone() {
        let got = pieces(&INSIGHTS_CSV, SAMPLE).unwrap();
        assert_eq!(got[0], Piece::Ignored { line: 1, lines: 1, reason: "the header" });
        let first = record(&got[1]);
        assert_eq!((first.line, first.lines), (2, 2));
        assert_eq!(first.message, "2026-10-07 09:33:00.118 ERROR [Job] failed \"x\"\n    at run (job.js:1)");
        assert_eq!(first.labels.get("log_stream"), Some("ecs/api/4f1c"));
        assert_eq!(first.labels.get("log_group"), Some("123456789012:/ecs/api"));
        assert_eq!(first.labels.instance().as_deref(), Some("log_stream=ecs/api/4f1c"));
        assert_eq!(first.at, None, "a time with no zone is not taken for UTC");
        assert_eq!(record(&got[2]).line, 4);
    }

    #[test]
    fn the_utc_variant_reads_the_time_as_utc_to_the_millisecond() {
        let got = pieces(&INSIGHTS_CSV_UTC, SAMPLE).unwrap();
        let at = record(&got[1]).at.unwrap();
        assert_eq!(at.utc().to_rfc3339(), "2026-10-07T00:33:00.123+00:00");
        assert!(!INSIGHTS_CSV_UTC.sniff(SAMPLE));
    }

    #[test]
    fn a_time_with_an_offset_is_read_by_both() {
        let text = "@timestamp,@message\n2026-10-07T09:33:00.5+09:00,m\n";
        for envelope in [&INSIGHTS_CSV, &INSIGHTS_CSV_UTC] {
            let got = pieces(envelope, text).unwrap();
            assert_eq!(record(&got[1]).at.unwrap().utc().to_rfc3339(), "2026-10-07T00:33:00.500+00:00");
        }
    }

    #[test]
    fn bad_rows_are_rejected_with_what_was_expected_and_every_line_is_counted() {
        let text = "@timestamp,@message\nyesterday,m\n2026-10-07 00:33:00.000,m,extra\n\n2026-10-07 00:33:00.000,\n";
        let got = pieces(&INSIGHTS_CSV, text).unwrap();
        assert!(
            matches!(&got[1], Piece::Rejected { line: 2, reason, .. } if reason.contains("expected an @timestamp like"))
        );
        assert!(matches!(&got[2], Piece::Rejected { line: 3, reason, .. } if reason.contains("expected 2 cells")));
        assert_eq!(got[3], Piece::Ignored { line: 4, lines: 1, reason: "blank" });
        assert_eq!(got[4], Piece::Ignored { line: 5, lines: 1, reason: "a row with an empty message" });
        let lines: u64 = got
            .iter()
            .map(|p| match p {
                Piece::Record(r) => r.lines,
                Piece::Ignored { lines, .. } | Piece::Rejected { lines, .. } => *lines,
            })
            .sum();
        assert_eq!(lines, 5);
    }

    #[test]
    fn a_header_without_the_columns_is_an_error_naming_the_fix() {
        let error = pieces(&INSIGHTS_CSV, "time,msg\n1,2\n").unwrap_err().to_string();
        assert!(error.contains("insights.csv:1") && error.contains("`@timestamp` and `@message`"), "{error}");
    }

    #[test]
    fn the_fixture_is_read_whole_newest_first() {
        let text = std::fs::read_to_string("fixtures/envelopes/cloudwatch-insights.csv").unwrap();
        assert!(INSIGHTS_CSV.sniff(&text));
        let got = pieces(&INSIGHTS_CSV_UTC, &text).unwrap();
        assert_eq!(got.len(), text.lines().count());
        let times: Vec<_> = got[1..].iter().map(|p| record(p).at.unwrap()).collect();
        assert!(times.windows(2).all(|w| w[0] >= w[1]), "newest first");
        // The envelope's UTC time is the KST line's time less 9 hours, plus the agent's lag.
        let last = record(got.last().unwrap());
        let inner = NaiveDateTime::parse_from_str(&last.message[..23], "%Y-%m-%d %H:%M:%S%.3f").unwrap();
        let lag = last.at.unwrap().utc().naive_utc() - (inner - chrono::Duration::hours(9));
        assert!(lag >= chrono::Duration::zero() && lag < chrono::Duration::seconds(1), "{lag}");
    }

    #[test]
    fn sniffing_is_specific() {
        assert!(INSIGHTS_CSV.sniff("\u{feff}\"@timestamp\",\"@message\"\n"));
        assert!(!INSIGHTS_CSV.sniff("\"@timestamp\",message,\"host.name\"\n"), "Kibana's");
        assert!(!INSIGHTS_CSV.sniff("run_id,event,at\n"));
        assert!(!INSIGHTS_CSV.sniff("2026-10-06T23:50:00.004000+00:00 s @timestamp,@message\n"));
        for dir in ["fixtures/formats", "fixtures/incident-2026-10-07"] {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if let Ok(head) = std::fs::read_to_string(&path) {
                    assert!(!INSIGHTS_CSV.sniff(&head), "{} sniffed as Logs Insights CSV", path.display());
                }
            }
        }
    }

    #[test]
    fn hostile_bytes_do_not_panic() {
        for text in [
            "@timestamp,@message\n\"",
            "@timestamp,@message\n,,,,\n\"\"\"",
            "@timestamp,@message\n9999-99-99 99:99:99.9,x\n",
            "\u{feff}",
        ] {
            let _ = pieces(&INSIGHTS_CSV_UTC, text);
            let _ = INSIGHTS_CSV.sniff(text);
        }
    }
}
