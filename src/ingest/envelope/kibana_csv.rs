//! A CSV export of a Kibana Discover search (Share → CSV reports; Elastic's reporting plugin,
//! `kbn-generate-csv`) or of an OpenSearch Dashboards saved search (its Reporting plugin's CSV).
//!
//! The header is the search's selected columns, the time field first: `"@timestamp",message,...`
//! (Kibana quotes any value with a character other than a letter or digit, `"` doubled, per
//! `csv:quoteValues`; its `csv:separator` may make `;` the delimiter). Rows are sorted as the
//! search was, newest first by default. ECS columns that name the process are kept as labels:
//! `host.name`, `kubernetes.namespace`, `kubernetes.pod.name`, `kubernetes.container.name`,
//! `container.name`, `process.pid`, and `stream` (`log.file.path` is not an instance).
//!
//! The time is written with Kibana's `dateFormat` (`MMM D, YYYY @ HH:mm:ss.SSS`, nanoseconds for
//! `date_nanos` fields) in the zone of the job: the browser's (Discover sends
//! `browserTimezone`), else `dateFormat:tz`, UTC when that is `Browser` and no browser zone came
//! with the job (`get_export_settings.ts`). OpenSearch Dashboards formats it the same way in
//! the report's zone. No zone is written: the same export made from Seoul and from Phoenix gives
//! different wall-clock times for the same instants (Kibana's own test fixtures show it). So
//! `kibana-csv` leaves `at` empty for such a time, and the application's own line (in the
//! source's declared zone) gives the event's time; a time with an offset (a `dateFormat` such as
//! `YYYY-MM-DDTHH:mm:ss.SSSZ`) is read as written. `kibana-csv-utc` is for a responder who knows
//! the export's zone was UTC (`dateFormat:tz` set to UTC): it says so by its name, reads
//! Kibana's default layout and naive ISO times as UTC, and is never sniffed.

use std::io::BufRead;

use chrono::{DateTime, NaiveDateTime, Utc};

use crate::error::Result;

use super::export_csv::{self, CsvExport};
use super::{Context, Envelope, Piece};

/// `utc`: whether a time with no zone is read as UTC (`kibana-csv-utc`).
pub struct KibanaCsv {
    pub utc: bool,
}

pub static KIBANA_CSV: KibanaCsv = KibanaCsv { utc: false };
pub static KIBANA_CSV_UTC: KibanaCsv = KibanaCsv { utc: true };

const EXAMPLE: &str = "\"@timestamp\",message,\"host.name\"\n\
    \"Oct 7, 2026 @ 09:33:00.004\",\"2026-10-07 09:33:00.000 INFO  [BullWorker] job active\",\"pr-review-api-1\"";

/// The layouts with no zone that `kibana-csv-utc` reads: Kibana's default `dateFormat` (and
/// `dateFormat:nanos`), and ISO with a `T` or a space.
const NAIVE_LAYOUTS: &[&str] = &["%b %d, %Y @ %H:%M:%S%.f", "%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f"];

impl Envelope for KibanaCsv {
    fn name(&self) -> &'static str {
        if self.utc { "kibana-csv-utc" } else { "kibana-csv" }
    }

    /// A header that names `@timestamp` and `message` but not `@message` (Logs Insights').
    fn sniff(&self, head: &str) -> bool {
        !self.utc && export_csv::sniff_header(head, &["@timestamp", "message"], &["@message"])
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

impl CsvExport for KibanaCsv {
    fn what(&self) -> &'static str {
        "a Kibana or OpenSearch Dashboards CSV export"
    }

    fn example(&self) -> &'static str {
        EXAMPLE
    }

    fn time_column(&self) -> &'static str {
        "@timestamp"
    }

    fn message_column(&self) -> &'static str {
        "message"
    }

    fn label_columns(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("host.name", "host"),
            ("host.hostname", "host"),
            ("kubernetes.namespace", "namespace"),
            ("kubernetes.pod.name", "pod"),
            ("kubernetes.container.name", "container"),
            ("container.name", "container"),
            ("process.pid", "pid"),
            ("stream", "stream"),
        ]
    }

    fn time(&self, cell: &str) -> std::result::Result<Option<DateTime<Utc>>, String> {
        if cell.is_empty() {
            return Ok(None);
        }
        if let Some(at) = export_csv::time_with_offset(cell) {
            return Ok(Some(at));
        }
        if !self.utc {
            // Any `dateFormat` the export was made with: with no zone, the time is not used.
            return Ok(None);
        }
        NAIVE_LAYOUTS
            .iter()
            .find_map(|layout| NaiveDateTime::parse_from_str(cell, layout).ok())
            .map(|naive| Some(naive.and_utc()))
            .ok_or_else(|| {
                format!(
                    "expected an @timestamp like `Oct 7, 2026 @ 00:33:00.123` (Kibana's default dateFormat) or `2026-10-07T00:33:00.123`, found `{}`",
                    export_csv::quote(cell)
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn pieces(envelope: &KibanaCsv, text: &str) -> Result<Vec<Piece>> {
        let context = Context { path: Path::new("kibana.csv"), max_line_bytes: 1 << 20 };
        envelope.pieces(Box::new(std::io::Cursor::new(text.to_string())), context).collect()
    }

    fn record(piece: &Piece) -> &super::super::Record {
        match piece {
            Piece::Record(record) => record,
            other => panic!("expected a record, got {other:?}"),
        }
    }

    fn lines_of(pieces: &[Piece]) -> u64 {
        pieces
            .iter()
            .map(|p| match p {
                Piece::Record(r) => r.lines,
                Piece::Ignored { lines, .. } | Piece::Rejected { lines, .. } => *lines,
            })
            .sum()
    }

    const SAMPLE: &str = "\"@timestamp\",message,\"kubernetes.pod.name\",\"host.name\",stream\n\
        \"Oct 7, 2026 @ 09:33:00.123\",\"2026-10-07 09:33:00.118 ERROR [Job] failed {\"\"pr\"\":\"\"PR-1\"\"}\n    at run (job.js:1)\",\"api-7d9f\",\"node-1\",stdout\n\
        \"Oct 7, 2026 @ 09:32:59.004\",\"2026-10-07 09:32:59.000 INFO  [HTTP] GET /healthz 200\",\"api-7d9f\",\"node-1\",stdout\n";

    #[test]
    fn rows_give_the_message_as_written_the_labels_and_no_time_without_a_zone() {
        let got = pieces(&KIBANA_CSV, SAMPLE).unwrap();
        assert_eq!(got[0], Piece::Ignored { line: 1, lines: 1, reason: "the header" });
        let first = record(&got[1]);
        assert_eq!((first.line, first.lines), (2, 2));
        assert_eq!(
            first.message,
            "2026-10-07 09:33:00.118 ERROR [Job] failed {\"pr\":\"PR-1\"}\n    at run (job.js:1)"
        );
        assert_eq!(first.at, None, "Kibana's wall-clock time names no zone");
        assert_eq!(first.labels.instance().as_deref(), Some("host=node-1 pod=api-7d9f"));
        assert_eq!(first.labels.get("stream"), Some("stdout"));
        assert_eq!(record(&got[2]).line, 4);
        assert_eq!(lines_of(&got), 4);
    }

    #[test]
    fn the_utc_variant_reads_kibanas_layout_to_the_nanosecond() {
        let got = pieces(&KIBANA_CSV_UTC, SAMPLE).unwrap();
        assert_eq!(record(&got[1]).at.unwrap().utc().to_rfc3339(), "2026-10-07T09:33:00.123+00:00");
        // `date_nanos` fields: Kibana's `dateFormat:nanos` (its own test fixture's row).
        let nanos = pieces(
            &KIBANA_CSV_UTC,
            "date,@timestamp,message,\"_id\"\nx,\"Jan 1, 2015 @ 12:10:30.123456789\",\"Hello 2\",\n",
        )
        .unwrap();
        assert_eq!(record(&nanos[1]).at.unwrap().subsec_nanos(), 123_456_789);
        let bad = pieces(&KIBANA_CSV_UTC, "\"@timestamp\",message\n\"07/10/2026 09:33\",m\n").unwrap();
        assert!(
            matches!(&bad[1], Piece::Rejected { line: 2, reason, .. } if reason.contains("Kibana's default dateFormat"))
        );
        assert!(!KIBANA_CSV_UTC.sniff(SAMPLE));
    }

    #[test]
    fn a_time_with_an_offset_is_an_instant_and_a_custom_layout_without_one_is_not_used() {
        let text = "\"@timestamp\";message\n\"2026-10-07T09:33:00.123+09:00\";m\n\"07/10/2026 09:33\";m\n";
        let got = pieces(&KIBANA_CSV, text).unwrap();
        assert_eq!(record(&got[1]).at.unwrap().utc().to_rfc3339(), "2026-10-07T00:33:00.123+00:00");
        assert_eq!(record(&got[2]).at, None);
        assert_eq!(record(&got[2]).message, "m");
    }

    #[test]
    fn a_header_without_the_columns_is_an_error_naming_the_fix() {
        let error = pieces(
            &KIBANA_CSV,
            "\"@timestamp\",clientip,extension\n\"Sep 20, 2015 @ 10:26:48.725\",\"74.214.76.90\",jpg\n",
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("kibana.csv:1") && error.contains("`@timestamp` and `message`"), "{error}");
    }

    #[test]
    fn the_fixture_is_read_whole_and_its_times_are_not_taken_for_utc() {
        let text = std::fs::read_to_string("fixtures/envelopes/kibana.csv").unwrap();
        assert!(KIBANA_CSV.sniff(&text));
        let got = pieces(&KIBANA_CSV, &text).unwrap();
        assert_eq!(lines_of(&got), text.lines().count() as u64);
        assert!(
            got[1..].iter().all(|p| record(p).at.is_none() && record(p).labels.get("host") == Some("pr-review-api-1"))
        );
    }

    #[test]
    fn sniffing_is_specific() {
        assert!(KIBANA_CSV.sniff("\u{feff}\"@timestamp\";message;\"host.name\"\n"));
        assert!(!KIBANA_CSV.sniff("@timestamp,@message,@logStream\n"), "Logs Insights'");
        assert!(!KIBANA_CSV.sniff("\"@timestamp\",clientip\n"));
        assert!(!KIBANA_CSV.sniff("2026-10-07 08:50:00.000 INFO @timestamp,message\n"));
        for dir in ["fixtures/formats", "fixtures/incident-2026-10-07", "fixtures/envelopes"] {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.ends_with("kibana.csv") {
                    continue;
                }
                if let Ok(head) = std::fs::read_to_string(&path) {
                    assert!(!KIBANA_CSV.sniff(&head), "{} sniffed as a Kibana CSV", path.display());
                }
            }
        }
    }

    #[test]
    fn hostile_bytes_do_not_panic() {
        for text in [
            "\"@timestamp\",message\n\"",
            "\"@timestamp\",message\n,,,,\n\"\"\"",
            "@timestamp,message\n\"Feb 30, 2026 @ 99:00:00.000\",x\n",
            "\u{feff}",
        ] {
            let _ = pieces(&KIBANA_CSV_UTC, text);
            let _ = pieces(&KIBANA_CSV, text);
            let _ = KIBANA_CSV.sniff(text);
        }
    }
}
