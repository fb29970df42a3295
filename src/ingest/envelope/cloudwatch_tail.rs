//! `aws logs tail` (AWS CLI v2) text output: one CloudWatch Logs event per record.
//!
//! The CLI writes (awscli/customizations/logs/tail.py, `DetailedLogEventsFormatter` and
//! `ShortLogEventsFormatter`), with the event's time turned from epoch milliseconds into a UTC
//! `datetime` (`datetime.fromtimestamp(ms / 1000.0, tz.tzutc())`):
//! - `--format detailed` (the default): `isoformat(timespec='microseconds')`, the log stream's
//!   name and the message: `2026-10-06T23:50:00.004000+00:00 web/app/4f1c 2026-10-07 08:50:00.000 INFO ...`;
//! - `--format short`: `strftime('%Y-%m-%dT%H:%M:%S')` (whole seconds, UTC though no offset is
//!   written) and the message;
//! - each event is `rstrip()`ped and ended with one `\n`, so a message that holds line ends (a
//!   stack trace kept in one event) goes on over the next lines, which do not start with a time.
//!
//! The short form looks like any log whose lines start with a naive ISO time, so it is never
//! sniffed: it is read only when named (`format = "aws-logs-tail-short"`), and then its times are
//! UTC because the CLI's are. `--format json` pretty-prints JSON messages over several lines, so
//! the message is no longer the line the application wrote: it is not read as such.

use std::collections::VecDeque;
use std::io::BufRead;

use chrono::{DateTime, NaiveDateTime, Utc};

use crate::error::Result;
use crate::ingest::io::lines;
use crate::model::Moment;

use super::export_lines::{ExportLines, Line};
use super::{Context, Envelope, Labels, Piece, Record};

/// `aws logs tail`, `--format detailed` (`short: false`) or `--format short`.
pub struct AwsLogsTail {
    pub short: bool,
}

pub static DETAILED: AwsLogsTail = AwsLogsTail { short: false };
pub static SHORT: AwsLogsTail = AwsLogsTail { short: true };

/// What colorama writes around the time and the stream name with `--color on`.
const GREEN: &str = "\x1b[32m";
const CYAN: &str = "\x1b[36m";
const RESET: &str = "\x1b[0m";

impl Envelope for AwsLogsTail {
    fn name(&self) -> &'static str {
        if self.short { "aws-logs-tail-short" } else { "aws-logs-tail" }
    }

    fn sniff(&self, head: &str) -> bool {
        !self.short && sniff_detailed(head)
    }

    fn example(&self) -> &'static str {
        if self.short {
            "2026-10-06T23:50:00 2026-10-07 08:50:00.000 INFO  [main] log rotated"
        } else {
            "2026-10-06T23:50:00.004000+00:00 web/app/4f1c 2026-10-07 08:50:00.000 INFO  [main] log rotated"
        }
    }

    fn pieces<'a>(
        &'a self,
        input: Box<dyn BufRead + Send>,
        context: Context<'a>,
    ) -> Box<dyn Iterator<Item = Result<Piece>> + Send + 'a> {
        Box::new(TailPieces {
            envelope: self,
            lines: ExportLines::new(input, context),
            cap: context.max_line_bytes,
            pending: None,
            queued: VecDeque::new(),
            done: false,
        })
    }
}

/// The start of an event's first line: its time, stream name (detailed) and message.
struct Start<'l> {
    at: DateTime<Utc>,
    stream: Option<&'l str>,
    message: &'l str,
}

impl AwsLogsTail {
    fn start<'l>(&self, line: &'l str) -> Option<Start<'l>> {
        let colored = line.starts_with(GREEN);
        let line = line.strip_prefix(GREEN).unwrap_or(line);
        let (stamp, rest) = if colored { line.split_once(RESET)? } else { line.split_once(' ').unwrap_or((line, "")) };
        let rest = if colored { rest.strip_prefix(' ').unwrap_or(rest) } else { rest };
        if self.short {
            // `%Y-%m-%dT%H:%M:%S` exactly: 19 characters.
            if stamp.len() != 19 {
                return None;
            }
            let at = NaiveDateTime::parse_from_str(stamp, "%Y-%m-%dT%H:%M:%S").ok()?.and_utc();
            return Some(Start { at, stream: None, message: rest });
        }
        // `isoformat()` always writes the offset, `+00:00` for the CLI's UTC times.
        if stamp.as_bytes().get(10) != Some(&b'T') || !has_offset(stamp) {
            return None;
        }
        let at = DateTime::parse_from_rfc3339(stamp).ok()?.with_timezone(&Utc);
        let (stream, message) = if colored {
            let rest = rest.strip_prefix(CYAN)?;
            let (stream, message) = rest.split_once(RESET)?;
            (stream, message.strip_prefix(' ').unwrap_or(message))
        } else {
            rest.split_once(' ').unwrap_or((rest, ""))
        };
        if stream.is_empty() {
            return None;
        }
        Some(Start { at, stream: Some(stream), message })
    }
}

/// Whether an ISO time ends in `+hh:mm` or `-hh:mm`.
fn has_offset(stamp: &str) -> bool {
    let bytes = stamp.as_bytes();
    bytes.len() > 6 && matches!(bytes[bytes.len() - 6], b'+' | b'-') && bytes[bytes.len() - 3] == b':'
}

/// The detailed form's own marks, on every line of the head that starts with a date: a time of
/// `isoformat(timespec='microseconds')` in UTC, whose microseconds end in `000` (CloudWatch keeps
/// milliseconds), then a stream name that is not a log level or a bracketed logger, and no
/// syslog `ident[pid]:` after it (`journalctl -o short-iso-precise` on a UTC host). An app log
/// that writes Python's `isoformat()` itself has microseconds of its own.
fn sniff_detailed(head: &str) -> bool {
    let head = head.trim_start_matches('\u{feff}');
    let mut matched = 0;
    for line in head.lines().take(200) {
        let starts_with_date =
            line.len() > 10 && line.as_bytes()[..4].iter().all(u8::is_ascii_digit) && line.as_bytes()[4] == b'-';
        if !starts_with_date {
            continue;
        }
        let mut tokens = line.split(' ');
        let stamp = tokens.next().unwrap_or("");
        let stream = tokens.next().unwrap_or("");
        let third = tokens.next().unwrap_or("");
        let time_ok = stamp.len() >= 25
            && stamp.ends_with("+00:00")
            && DateTime::parse_from_rfc3339(stamp).is_ok()
            && match stamp.split_once('.') {
                Some((_, fraction)) => {
                    let digits = &fraction[..fraction.len().saturating_sub(6)];
                    digits.len() == 6 && digits.ends_with("000")
                }
                None => true,
            };
        let stream_ok = !stream.is_empty()
            && !stream.starts_with(['[', '{', '('])
            && !LEVELS.iter().any(|level| stream.trim_end_matches(':').eq_ignore_ascii_case(level));
        let syslog = third.ends_with(':') && third.contains('[');
        if !(time_ok && stream_ok) || syslog {
            return false;
        }
        matched += 1;
    }
    matched > 0
}

/// Words an application's own log puts after its time.
const LEVELS: &[&str] = &[
    "trace", "debug", "info", "notice", "warn", "warning", "error", "err", "crit", "critical", "fatal", "alert",
    "emerg", "verbose", "silly", "log",
];

/// The record being read: its first line and the lines that go on from it.
struct Pending {
    line: u64,
    lines: u64,
    at: std::result::Result<Moment, String>,
    labels: Labels,
    /// `None` once the record grew past the cap.
    message: Option<String>,
    /// Blank lines after the last text: part of the message only if text follows (the CLI strips
    /// a message's trailing blanks).
    blanks: u64,
}

struct TailPieces<'a> {
    envelope: &'a AwsLogsTail,
    lines: ExportLines<'a>,
    cap: usize,
    pending: Option<Pending>,
    queued: VecDeque<Piece>,
    done: bool,
}

impl TailPieces<'_> {
    fn flush(&mut self) {
        let Some(pending) = self.pending.take() else { return };
        let piece = match (pending.message, pending.at) {
            (None, _) => {
                Piece::Rejected { line: pending.line, lines: pending.lines, reason: lines::too_long(self.cap) }
            }
            (Some(_), Err(reason)) => Piece::Rejected { line: pending.line, lines: pending.lines, reason },
            (Some(message), Ok(at)) => Piece::Record(Record {
                line: pending.line,
                lines: pending.lines,
                at: Some(at),
                labels: pending.labels,
                message,
            }),
        };
        self.queued.push_back(piece);
        if pending.blanks > 0 {
            let line = pending.line + pending.lines;
            self.queued.push_back(Piece::Ignored { line, lines: pending.blanks, reason: "blank" });
        }
    }

    fn take(&mut self, line: Line) {
        match line {
            Line::TooLong(number) => {
                // Whether it went on from the record before or started one is unknown.
                self.flush();
                self.queued.push_back(Piece::Rejected { line: number, lines: 1, reason: lines::too_long(self.cap) });
            }
            Line::Text(number, text) => {
                if let Some(start) = self.envelope.start(&text) {
                    self.flush();
                    let mut labels = Labels::default();
                    if let Some(stream) = start.stream {
                        labels.push("log_stream", stream);
                    }
                    let at = Moment::new(start.at).map_err(|_| {
                        format!("time {} is outside the years 1677-2262 a timeline holds", start.at.to_rfc3339())
                    });
                    let message = (start.message.len() <= self.cap).then(|| start.message.to_string());
                    self.pending = Some(Pending { line: number, lines: 1, at, labels, message, blanks: 0 });
                } else if let Some(pending) = &mut self.pending {
                    if text.trim().is_empty() {
                        pending.blanks += 1;
                        return;
                    }
                    // The event's message goes on: the lines of a stack trace kept in one event.
                    pending.lines += pending.blanks + 1;
                    let blanks = usize::try_from(pending.blanks).unwrap_or(usize::MAX);
                    pending.blanks = 0;
                    let cap = self.cap;
                    pending.message =
                        pending.message.take().filter(|held| held.len() + blanks + 1 + text.len() <= cap).map(
                            |mut held| {
                                held.extend(std::iter::repeat_n('\n', blanks + 1));
                                held.push_str(&text);
                                held
                            },
                        );
                } else if text.trim().is_empty() {
                    self.queued.push_back(Piece::Ignored { line: number, lines: 1, reason: "blank" });
                } else {
                    self.queued.push_back(Piece::Rejected {
                        line: number,
                        lines: 1,
                        reason: format!("expected an `aws logs tail` line, like `{}`", self.envelope.example()),
                    });
                }
            }
        }
    }
}

impl Iterator for TailPieces<'_> {
    type Item = Result<Piece>;

    fn next(&mut self) -> Option<Result<Piece>> {
        loop {
            if let Some(piece) = self.queued.pop_front() {
                return Some(Ok(piece));
            }
            if self.done {
                return None;
            }
            match self.lines.next_line() {
                Err(error) => {
                    self.done = true;
                    return Some(Err(error));
                }
                Ok(None) => {
                    self.done = true;
                    self.flush();
                }
                Ok(Some(line)) => self.take(line),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn pieces(envelope: &AwsLogsTail, text: &str, cap: usize) -> Vec<Piece> {
        let context = Context { path: Path::new("tail.txt"), max_line_bytes: cap };
        envelope.pieces(Box::new(std::io::Cursor::new(text.to_string())), context).map(|p| p.unwrap()).collect()
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

    fn record(piece: &Piece) -> &Record {
        match piece {
            Piece::Record(record) => record,
            other => panic!("expected a record, got {other:?}"),
        }
    }

    const DETAILED_SAMPLE: &str = "\
2026-10-06T23:50:00.004000+00:00 web/app/4f1c 2026-10-07 08:50:00.000 INFO  [main] log rotated pid=41877
2026-10-06T23:50:02.338000+00:00 web/app/4f1c 2026-10-07 08:50:02.334 DEBUG [Redis] ping ok
";

    #[test]
    fn detailed_lines_give_the_utc_time_the_stream_and_the_message_as_written() {
        let got = pieces(&DETAILED, DETAILED_SAMPLE, 1 << 20);
        assert_eq!(got.len(), 2);
        let first = record(&got[0]);
        assert_eq!(first.line, 1);
        assert_eq!(first.at.unwrap().utc().to_rfc3339(), "2026-10-06T23:50:00.004+00:00");
        assert_eq!(first.labels.get("log_stream"), Some("web/app/4f1c"));
        assert_eq!(first.message, "2026-10-07 08:50:00.000 INFO  [main] log rotated pid=41877");
        assert_eq!(record(&got[1]).at.unwrap().subsec_nanos(), 338_000_000);
        assert_eq!(lines_of(&got), 2);
    }

    #[test]
    fn a_message_over_several_lines_is_one_record_and_trailing_blanks_are_ignored() {
        let text = "2026-10-06T23:50:00.004000+00:00 s 2026-10-07 08:50:00.000 ERROR boom\n    at f (a.js:1)\n\n    at g (b.js:2)\n\n\n2026-10-06T23:50:01.000000+00:00 s next\n";
        let got = pieces(&DETAILED, text, 1 << 20);
        let first = record(&got[0]);
        assert_eq!((first.line, first.lines), (1, 4));
        assert_eq!(first.message, "2026-10-07 08:50:00.000 ERROR boom\n    at f (a.js:1)\n\n    at g (b.js:2)");
        assert_eq!(got[1], Piece::Ignored { line: 5, lines: 2, reason: "blank" });
        assert_eq!(record(&got[2]).line, 7);
        assert_eq!(lines_of(&got), 7);
    }

    #[test]
    fn colored_output_is_read_too() {
        let text = "\x1b[32m2026-10-06T23:50:00.004000+00:00\x1b[0m \x1b[36mweb/app/4f1c\x1b[0m hello world\n";
        let got = pieces(&DETAILED, text, 1 << 20);
        let first = record(&got[0]);
        assert_eq!(first.labels.get("log_stream"), Some("web/app/4f1c"));
        assert_eq!(first.message, "hello world");
    }

    #[test]
    fn short_lines_are_whole_seconds_utc_with_no_stream() {
        let text = "2026-10-06T23:50:00 2026-10-07 08:50:00.000 INFO  [main] log rotated\n";
        let got = pieces(&SHORT, text, 1 << 20);
        let first = record(&got[0]);
        assert_eq!(first.at.unwrap().utc().to_rfc3339(), "2026-10-06T23:50:00+00:00");
        assert_eq!(first.labels, Labels::default());
        assert_eq!(first.message, "2026-10-07 08:50:00.000 INFO  [main] log rotated");
    }

    #[test]
    fn a_first_line_that_is_not_an_event_is_rejected_with_the_shape_expected() {
        let got = pieces(&DETAILED, "hello\n\n2026-10-06T23:50:00.004000+00:00 s m\n", 1 << 20);
        match &got[0] {
            Piece::Rejected { line: 1, lines: 1, reason } => assert!(reason.contains("aws logs tail"), "{reason}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(got[1], Piece::Ignored { line: 2, lines: 1, reason: "blank" });
        assert_eq!(lines_of(&got), 3);
    }

    #[test]
    fn a_record_past_the_cap_is_rejected_with_all_its_lines() {
        let (b, c) = ("b".repeat(30), "c".repeat(30));
        let text =
            format!("2026-10-06T23:50:00.004000+00:00 s aaaa\n{b}\n{c}\n2026-10-06T23:50:01.000000+00:00 s ok\n");
        let got = pieces(&DETAILED, &text, 45);
        assert!(matches!(&got[0], Piece::Rejected { line: 1, lines: 3, reason } if reason.contains("longer than")));
        assert_eq!(record(&got[1]).message, "ok");
        let got = pieces(
            &DETAILED,
            "2026-10-06T23:50:00.004000+00:00 s ok\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n",
            40,
        );
        assert_eq!(record(&got[0]).lines, 1);
        assert!(matches!(&got[1], Piece::Rejected { line: 2, lines: 1, .. }));
    }

    #[test]
    fn the_fixtures_are_read_whole() {
        for (envelope, path) in [
            (&DETAILED, "fixtures/envelopes/aws-logs-tail.txt"),
            (&SHORT, "fixtures/envelopes/aws-logs-tail-short.txt"),
        ] {
            let text = std::fs::read_to_string(path).unwrap();
            let got = pieces(envelope, &text, 1 << 20);
            assert_eq!(lines_of(&got), text.lines().count() as u64, "{path}");
            assert!(got.iter().all(|p| matches!(p, Piece::Record(_))), "{path}");
            assert_eq!(envelope.sniff(&text), !envelope.short, "{path}");
            // The envelope's UTC time is the KST line's time less 9 hours, plus the agent's lag.
            let first = record(&got[0]);
            let inner = chrono::NaiveDateTime::parse_from_str(&first.message[..23], "%Y-%m-%d %H:%M:%S%.3f").unwrap();
            let lag = first.at.unwrap().utc().naive_utc() - (inner - chrono::Duration::hours(9));
            assert!(lag >= chrono::Duration::zero() && lag < chrono::Duration::seconds(1), "{path}: {lag}");
        }
        let restarted =
            pieces(&DETAILED, &std::fs::read_to_string("fixtures/envelopes/aws-logs-tail.txt").unwrap(), 1 << 20);
        let streams: std::collections::BTreeSet<_> =
            restarted.iter().map(|p| record(p).labels.get("log_stream").unwrap().to_string()).collect();
        assert_eq!(streams.len(), 2, "one stream per process: {streams:?}");
    }

    #[test]
    fn hostile_bytes_do_not_panic() {
        for text in [
            "\x1b[32m",
            "\x1b[32m2026\x1b[0m",
            "2026-10-06T23:50:00.004000+00:00",
            "9999-99-99T99:99:99.999999+99:99 x y",
            "\u{feff}é\r\n",
        ] {
            let context = Context { path: Path::new("t"), max_line_bytes: 64 };
            for envelope in [&DETAILED, &SHORT] {
                let _ = envelope.pieces(Box::new(std::io::Cursor::new(text.to_string())), context).count();
                let _ = envelope.sniff(text);
            }
        }
    }

    #[test]
    fn sniffs_the_detailed_form_only() {
        assert!(DETAILED.sniff(DETAILED_SAMPLE));
        assert!(!SHORT.sniff(DETAILED_SAMPLE));
        // Python's own isoformat() with microseconds, a level after it: an app log.
        assert!(!DETAILED.sniff("2026-10-06T23:50:00.123456+00:00 INFO started\n"));
        assert!(!DETAILED.sniff("2026-10-06T23:50:00.123000+00:00 [main] started\n"));
        // RFC 3339 UTC with Z (kubectl, docker), journald short-iso-precise, a naive ISO log.
        assert!(!DETAILED.sniff("2026-10-06T23:50:00.123456789Z 2026-10-07 08:50:00.000 INFO x\n"));
        assert!(!DETAILED.sniff("2026-10-06T23:50:00.123000+00:00 host app[4242]: started\n"));
        assert!(!DETAILED.sniff("2026-10-07T08:50:00 web started\n"));
        assert!(!DETAILED.sniff("2026-10-06T23:50:00.004000+00:00 s ok\n2026-10-06T23:50:00.123456+00:00 s ok\n"));
        let dirs = ["fixtures/formats", "fixtures/incident-2026-10-07", "fixtures/envelopes"];
        for fixture in dirs.iter().flat_map(|dir| std::fs::read_dir(dir).unwrap()) {
            let path = fixture.unwrap().path();
            if !path.ends_with("aws-logs-tail.txt") {
                let Ok(head) = std::fs::read_to_string(&path) else { continue };
                assert!(!DETAILED.sniff(&head), "{} sniffed as aws logs tail", path.display());
            }
        }
    }
}
