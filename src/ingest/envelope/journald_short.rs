//! journald's entries as `journalctl -o short-iso` and `-o short-iso-precise` print them:
//! `<time> <host> <identifier>[<pid>]: <message>`, laid out by systemd's `output_short`
//! (src/shared/logs-show.c). The time is journalctl's own zone's (its `TZ`), with the offset
//! written: `+0900` up to systemd 25x's `%z`, `+09:00` in later ones; to the second in
//! short-iso, with six digits of microseconds in short-iso-precise. So it is absolute, like
//! the JSON form, but coarser. The host is left out with `--no-hostname`; the identifier is
//! `SYSLOG_IDENTIFIER`, else `_COMM`, else `unknown`; `[pid]` is there when the entry has one.
//! A message of several lines goes on in lines indented to the message's column. journalctl
//! marks boots (`-- Boot <id> --`, `-- Reboot --` before systemd 246), an empty result
//! (`-- No entries --`), the old header (`-- Logs begin at ... --`, `-- Journal begins at ...
//! --`) and `--show-cursor`'s last line (`-- cursor: ...`): none holds an entry.
//! Unlike `-o json`, the text modes change the message: colour escapes are removed, a tab is
//! spaces, and a message that is not printable UTF-8 is printed as `[66B blob data]`.
//! One reader takes both modes; each has its own name, and sniffs its own.

use std::collections::VecDeque;
use std::io::BufRead;

use chrono::{DateTime, FixedOffset, NaiveDateTime};

use crate::error::Result;
use crate::model::Moment;

use super::by_line::{ByLine, Line};
use super::{Context, Envelope, Labels, Piece, Record};

pub struct JournaldShortIso {
    name: &'static str,
    /// Whether this is the `-precise` mode: what `sniff` looks for (either is read).
    precise: bool,
    example: &'static str,
}

pub static SHORT_ISO: JournaldShortIso = JournaldShortIso {
    name: "journald-short-iso",
    precise: false,
    example: "2026-10-07T08:50:00+0900 api-1 review-api[41877]: 2026-10-07 08:50:00.000 INFO  [main] log rotated",
};

pub static SHORT_ISO_PRECISE: JournaldShortIso = JournaldShortIso {
    name: "journald-short-iso-precise",
    precise: true,
    example: "2026-10-07T08:50:00.003473+0900 api-1 review-api[41877]: 2026-10-07 08:50:00.000 INFO  [main] log rotated",
};

impl Envelope for JournaldShortIso {
    fn name(&self) -> &'static str {
        self.name
    }

    /// The first entry lines (up to 5, past journalctl's markers and continuation lines) are all
    /// this mode's header with at most a host and an identifier before the colon, and journalctl's
    /// own marks are there: a `[pid]` or a marker line. A plain log with RFC 3339 times in UTC
    /// (`Z`) or a level and a logger before a colon is not.
    fn sniff(&self, head: &str) -> bool {
        let mut lines: Vec<&str> = head.lines().collect();
        if lines.len() > 1 && !head.ends_with('\n') {
            lines.pop(); // cut by the head's end
        }
        let mut entries = 0;
        let mut marks = false;
        for line in lines {
            if let Some(reason) = marker(line) {
                marks |= reason != NOT_A_MARKER;
                continue;
            }
            if line.starts_with(' ') || line.is_empty() {
                continue;
            }
            let Some(header) = header(line) else { return false };
            if header.precise != self.precise || header.tokens > 2 {
                return false;
            }
            marks |= header.pid.is_some();
            entries += 1;
            if entries == 5 {
                break;
            }
        }
        entries > 0 && marks
    }

    fn example(&self) -> &'static str {
        self.example
    }

    fn pieces<'a>(
        &'a self,
        input: Box<dyn BufRead + Send>,
        context: Context<'a>,
    ) -> Box<dyn Iterator<Item = Result<Piece>> + Send + 'a> {
        Box::new(Reader {
            lines: ByLine::new(input, context),
            example: self.example,
            open: None,
            ready: VecDeque::new(),
            done: false,
        })
    }
}

const NOT_A_MARKER: &str = "";

/// Why a line of journalctl's own is ignored, or `None` for a line that is not one. A line
/// shaped `-- ... --` that is none of the known markers gives `NOT_A_MARKER`.
fn marker(line: &str) -> Option<&'static str> {
    let line = line.trim_end();
    if line.starts_with("-- cursor: ") {
        return Some("journalctl --show-cursor's cursor line");
    }
    let inner = line.strip_prefix("-- ")?.strip_suffix(" --")?;
    Some(if inner == "No entries" {
        "journalctl found no entries"
    } else if inner == "Reboot"
        || inner.strip_prefix("Boot ").is_some_and(|id| id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()))
    {
        "journalctl's boot marker"
    } else if inner.starts_with("Logs begin at ") || inner.starts_with("Journal begins at ") {
        "journalctl's header (the journal's first and last times)"
    } else {
        NOT_A_MARKER
    })
}

#[derive(Debug)]
struct Header<'l> {
    at: DateTime<FixedOffset>,
    precise: bool,
    host: Option<&'l str>,
    identifier: &'l str,
    pid: Option<&'l str>,
    /// How many space-separated words come before the colon (host and identifier: 2).
    tokens: usize,
    /// The byte the message starts at: a continuation line is indented by as much.
    column: usize,
}

/// The header of an entry line, or `None` when the line does not start with one.
fn header(line: &str) -> Option<Header<'_>> {
    let (stamp, rest) = line.split_once(' ')?;
    let (at, precise) = time(stamp)?;
    let (before, _) = rest.split_once(": ")?;
    let column = stamp.len() + 1 + before.len() + 2;
    let words: Vec<&str> = before.split(' ').collect();
    if words.iter().any(|w| w.is_empty()) {
        return None;
    }
    let (host, named) = match words.len() {
        1 => (None, before),
        _ => (Some(words[0]), &before[words[0].len() + 1..]),
    };
    let (identifier, pid) = match named.strip_suffix(']').and_then(|n| n.rsplit_once('[')) {
        Some((identifier, pid)) if !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()) => {
            (identifier, Some(pid))
        }
        _ => (named, None),
    };
    Some(Header { at, precise, host, identifier, pid, tokens: words.len(), column })
}

/// `2026-10-07T09:33:00+0900`, `2026-10-07T09:33:00.123456+09:00`: the time and whether it has
/// the microseconds.
fn time(stamp: &str) -> Option<(DateTime<FixedOffset>, bool)> {
    let civil = NaiveDateTime::parse_from_str(stamp.get(..19)?, "%Y-%m-%dT%H:%M:%S").ok()?;
    let mut rest = &stamp[19..];
    let mut micros = 0;
    let precise = rest.starts_with('.');
    if precise {
        let digits = rest.get(1..7)?;
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        micros = digits.parse::<i64>().ok()?;
        rest = &rest[7..];
    }
    let sign = match rest.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let offset = rest[1..].replacen(':', "", usize::from(rest.len() == 6));
    if offset.len() != 4 || !offset.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let seconds = offset[..2].parse::<i32>().ok()? * 3600 + offset[2..].parse::<i32>().ok()? * 60;
    let zone = FixedOffset::east_opt(sign * seconds)?;
    let at = civil.and_local_timezone(zone).single()? + chrono::Duration::microseconds(micros);
    Some((at, precise))
}

struct Reader {
    lines: ByLine,
    example: &'static str,
    /// The entry read so far, and its message's column: the lines after it may go on with it.
    open: Option<(Record, usize)>,
    ready: VecDeque<Result<Piece>>,
    done: bool,
}

impl Reader {
    fn close(&mut self) {
        if let Some((record, _)) = self.open.take() {
            self.ready.push_back(Ok(Piece::Record(record)));
        }
    }

    fn take(&mut self, number: u64, text: &str) {
        if let Some((record, column)) = &mut self.open {
            let indent = text.len() - text.trim_start_matches(' ').len();
            if indent >= *column || (indent == text.len() && !text.is_empty()) {
                record.message.push('\n');
                record.message.push_str(text.get(*column..).unwrap_or(""));
                record.lines += 1;
                return;
            }
        }
        self.close();
        if let Some(reason) = marker(text).filter(|r| *r != NOT_A_MARKER) {
            self.ready.push_back(Ok(Piece::Ignored { line: number, lines: 1, reason }));
            return;
        }
        if text.trim().is_empty() {
            self.ready.push_back(Ok(Piece::Ignored { line: number, lines: 1, reason: "blank line" }));
            return;
        }
        let Some(header) = header(text) else {
            let reason = format!(
                "not a journalctl -o short-iso entry: expected `<time with offset> <host> <identifier>[<pid>]: <message>` like {}",
                self.example
            );
            self.ready.push_back(Ok(Piece::Rejected { line: number, lines: 1, reason }));
            return;
        };
        let message = &text[header.column..];
        if message.starts_with('[') && message.ends_with(" blob data]") {
            let reason = format!(
                "journalctl printed {message} in place of a message that is not printable text (bytes that are not \
                 UTF-8, or control characters): export with journalctl -o json to keep it"
            );
            self.ready.push_back(Ok(Piece::Rejected { line: number, lines: 1, reason }));
            return;
        }
        let Ok(at) = Moment::new(header.at.to_utc()) else {
            let reason = format!("{} is outside the years 1677-2262", header.at);
            self.ready.push_back(Ok(Piece::Rejected { line: number, lines: 1, reason }));
            return;
        };
        let mut labels = Labels::default();
        if let Some(host) = header.host {
            labels.push("host", host);
        }
        if header.identifier != "unknown" {
            labels.push("identifier", header.identifier);
        }
        if let Some(pid) = header.pid {
            labels.push("pid", pid);
        }
        let record = Record { line: number, lines: 1, at: Some(at), labels, message: message.to_string() };
        self.open = Some((record, header.column));
    }
}

impl Iterator for Reader {
    type Item = Result<Piece>;

    fn next(&mut self) -> Option<Result<Piece>> {
        loop {
            if let Some(piece) = self.ready.pop_front() {
                return Some(piece);
            }
            if self.done {
                return None;
            }
            match self.lines.next_line() {
                Ok(Some(Line::Text(number, text))) => self.take(number, &text),
                Ok(Some(long)) => {
                    self.close();
                    self.ready.extend(long.rejected().map(Ok));
                }
                Ok(None) => {
                    self.close();
                    self.done = true;
                }
                Err(error) => {
                    self.close();
                    self.ready.push_back(Err(error));
                    self.done = true;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use chrono::{TimeZone, Utc};

    use super::*;
    use crate::ingest::envelope::testing::lines;

    fn pieces(text: &str) -> Vec<Piece> {
        let context = Context { path: Path::new("journal.txt"), max_line_bytes: 1 << 20 };
        SHORT_ISO
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
    fn both_offset_layouts_and_both_precisions_give_the_same_absolute_time() {
        let got = pieces(concat!(
            "2026-10-07T09:33:00+0900 api-1 app[7]: a\n",
            "2026-10-07T09:33:00+09:00 api-1 app[7]: b\n",
            "2026-10-07T00:33:00.123456+0000 api-1 app[7]: c\n",
            "2026-10-06T20:03:00.000001-04:30 api-1 app[7]: d\n",
        ));
        assert_eq!(record(&got[0]).at, Some(utc("2026-10-07T00:33:00Z")));
        assert_eq!(record(&got[1]).at, Some(utc("2026-10-07T00:33:00Z")));
        assert_eq!(record(&got[2]).at, Some(utc("2026-10-07T00:33:00.123456Z")));
        assert_eq!(record(&got[3]).at, Some(utc("2026-10-07T00:33:00.000001Z")));
        assert_eq!(record(&got[0]).at.unwrap().utc(), Utc.with_ymd_and_hms(2026, 10, 7, 0, 33, 0).unwrap());
    }

    #[test]
    fn the_header_gives_host_identifier_and_pid_and_the_message_is_the_rest() {
        let got = pieces(concat!(
            "2026-10-07T09:33:00+0900 api-1 review-api[41877]: 2026-10-07 09:33:00.000 INFO  [x] a: b\n",
            "2026-10-07T09:33:00+0900 review-api: no host, no pid\n",
            "2026-10-07T09:33:00+0900 h unknown: x\n",
        ));
        let first = record(&got[0]);
        assert_eq!(first.message, "2026-10-07 09:33:00.000 INFO  [x] a: b");
        assert_eq!(first.labels.instance().as_deref(), Some("host=api-1 identifier=review-api"));
        assert_eq!(first.labels.get("pid"), Some("41877"));
        assert_eq!(first.labels.get("identifier"), Some("review-api"));
        let second = record(&got[1]);
        assert_eq!((second.labels.get("host"), second.labels.get("identifier")), (None, Some("review-api")));
        assert_eq!(record(&got[2]).labels.get("identifier"), None);
    }

    #[test]
    fn continuation_lines_join_their_entry_keeping_their_own_indent() {
        let text = concat!(
            "2026-10-07T09:30:04.000567+0900 api-2 review-api[41877]: boom\n",
            "                                                             at Worker.run\n",
            "                                                         \n",
            "2026-10-07T09:30:05.000678+0900 api-2 review-api[41877]: next\n",
        );
        let got = pieces(text);
        assert_eq!(lines(&got), 4);
        assert_eq!(record(&got[0]).message, "boom\n    at Worker.run\n");
        assert_eq!(record(&got[0]).lines, 3);
        assert_eq!(record(&got[1]).line, 4);
    }

    #[test]
    fn markers_blobs_and_strangers_are_accounted_for_with_reasons() {
        let text = concat!(
            "-- Journal begins at Wed 2026-10-07 08:50:00 KST, ends at Wed 2026-10-07 10:00:00 KST. --\n",
            "2026-10-07T09:30:03.000456+0900 api-2 review-api[41877]: [66B blob data]\n",
            "-- Boot 1b7e2d3c4f5a6b7c8d9eafb0c1d2e3f4 --\n",
            "-- Reboot --\n",
            "-- No entries --\n",
            "-- cursor: s=34cf;i=6\n",
            "\n",
            "Oct 07 09:30:03 api-2 review-api[41877]: the short mode has no year\n",
            "2026-10-07T09:33:00Z api-1 app[7]: no offset\n",
        );
        let got = pieces(text);
        assert_eq!(lines(&got), text.lines().count() as u64);
        let reasons: Vec<&str> = got
            .iter()
            .map(|p| match p {
                Piece::Ignored { reason, .. } => *reason,
                Piece::Rejected { reason, .. } => reason.as_str(),
                Piece::Record(_) => "record",
            })
            .collect();
        assert!(reasons[0].starts_with("journalctl's header"));
        assert!(reasons[1].starts_with("journalctl printed [66B blob data]"));
        assert_eq!(reasons[2], "journalctl's boot marker");
        assert_eq!(reasons[3], "journalctl's boot marker");
        assert_eq!(reasons[4], "journalctl found no entries");
        assert!(reasons[5].contains("cursor"));
        assert_eq!(reasons[6], "blank line");
        assert!(reasons[7].starts_with("not a journalctl -o short-iso entry"));
        assert!(reasons[8].starts_with("not a journalctl -o short-iso entry"));
    }

    #[test]
    fn hostile_lines_do_not_panic() {
        for text in [
            "2026-10-07T09:33:00.12345é+0900 h a: x\n",
            "2026-10-07T09:33:00+09é0 h a: x\n",
            "2026-13-07T09:33:00+0900 h a: x\n",
            "2026-10-07T09:33:00+9900 h a: x\n",
            "2026-10-07T09:33:00+0900  a: x\n",
            "é\n   \n-- --\n",
        ] {
            let got = pieces(text);
            assert_eq!(lines(&got), text.lines().count() as u64, "{text}");
            assert!(!got.iter().any(|p| matches!(p, Piece::Record(_))), "{text}: {got:?}");
        }
    }

    fn fixture(name: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
    }

    #[test]
    fn the_generated_exports_hold_the_reference_log_in_seoul_and_in_utc_at_the_same_instants() {
        let server = fixture("incident-2026-10-07/server.log");
        let seoul = fixture("envelopes/journald-seoul.short-iso");
        let utc = fixture("envelopes/journald-utc.short-iso");
        let precise = fixture("envelopes/journald-seoul.short-iso-precise");
        assert!(SHORT_ISO.sniff(&seoul) && SHORT_ISO.sniff(&utc) && !SHORT_ISO.sniff(&precise));
        assert!(SHORT_ISO_PRECISE.sniff(&precise) && !SHORT_ISO_PRECISE.sniff(&seoul));
        let json = fixture("envelopes/journald.json");
        assert!(!SHORT_ISO.sniff(&json) && !SHORT_ISO_PRECISE.sniff(&json));
        assert!(!super::super::journald_json::JournaldJson.sniff(&seoul));
        let [seoul, utc, precise] = [&seoul, &utc, &precise].map(|text| {
            let got = pieces(text);
            assert_eq!(lines(&got), text.lines().count() as u64);
            got.iter().map(|p| record(p).clone()).collect::<Vec<_>>()
        });
        let messages: Vec<&str> = seoul.iter().map(|r| r.message.as_str()).collect();
        assert_eq!(messages, server.lines().collect::<Vec<_>>());
        for ((s, u), p) in seoul.iter().zip(&utc).zip(&precise) {
            assert_eq!(s.at, u.at);
            assert_eq!(s.at.unwrap().utc().timestamp(), p.at.unwrap().utc().timestamp());
            assert_eq!(s.labels, u.labels);
        }
        assert!(precise.iter().any(|r| r.at.unwrap().subsec_nanos() % 1000 == 0 && r.at.unwrap().subsec_nanos() > 0));
        let restart = messages.iter().position(|m| m.contains("server starting")).unwrap();
        assert_eq!(seoul[restart - 1].labels.get("pid"), Some("41877"));
        assert_eq!(seoul[restart].labels.get("pid"), Some("52117"));
    }

    #[test]
    fn the_generated_odd_entries_give_the_boot_marker_the_blob_and_the_two_line_message() {
        let text = fixture("envelopes/journald-bytes.short-iso-precise");
        let got = pieces(&text);
        assert_eq!(lines(&got), text.lines().count() as u64);
        assert!(matches!(&got[2], Piece::Rejected { reason, .. } if reason.contains("blob data")));
        assert_eq!(
            record(&got[3]).message,
            "2026-10-07 09:30:04.000 ERROR [BullWorker] job failed id=42\n    at Worker.run (worker.js:10:5)"
        );
        assert!(matches!(&got[5], Piece::Ignored { reason: "journalctl's boot marker", .. }));
        // journalctl's text modes drop the colour escapes that -o json keeps.
        assert!(record(&got[1]).message.starts_with("2026-10-07 09:30:02.000 WARN"));
    }

    #[test]
    fn no_plain_log_of_the_fixtures_sniffs_as_journalctl_text() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        for folder in ["formats", "incident-2026-10-07", "envelopes"] {
            for file in std::fs::read_dir(root.join(folder)).unwrap() {
                let path = file.unwrap().path();
                let journald = path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("journald"));
                let ours = journald && path.extension().is_some_and(|e| e.to_string_lossy().starts_with("short-iso"));
                if !ours && path.extension().is_some_and(|e| e != "sh" && e != "md") && path.is_file() {
                    let text = std::fs::read_to_string(&path).unwrap();
                    assert!(!SHORT_ISO.sniff(&text) && !SHORT_ISO_PRECISE.sniff(&text), "{}", path.display());
                }
            }
        }
        for other in [
            "2026-10-07T00:33:00Z INFO [main] started: ok\n",
            "2026-10-07T09:33:00.123+09:00 INFO [main] server: started\n",
            "2026-10-07T00:33:00.123456789Z api started\n",
            "2026-10-07T09:33:00+09:00 host app: no pid and no marker\n",
        ] {
            assert!(!SHORT_ISO.sniff(other) && !SHORT_ISO_PRECISE.sniff(other), "{other}");
        }
        assert!(
            SHORT_ISO.sniff("-- Boot 1b7e2d3c4f5a6b7c8d9eafb0c1d2e3f4 --\n2026-10-07T09:33:00+09:00 host app: x\n")
        );
    }
}
