//! What the container-runtime envelopes share (`kubectl`, `kubectl-prefix`, `cri`): the RFC 3339
//! time the runtime puts before each line, and the line-by-line walk that accounts for every line
//! of the export.
//!
//! The time is read strictly, byte by byte, before chrono computes it: a runtime writes exactly
//! `YYYY-MM-DDTHH:MM:SS[.fraction]Z|±HH:MM` (Go's `time.RFC3339Nano` trims the fraction's zeros,
//! `RFC3339NanoFixed` keeps 9 digits), and chrono's own RFC 3339 parser also takes a space or a
//! lowercase `t`, which would let a plain log's `2026-10-07 08:50:00Z` pass for an envelope.

use std::collections::VecDeque;

use chrono::{DateTime, Utc};

use super::{Context, Piece};
use crate::error::Result;
use crate::ingest::io::lines::{self, Lines};
use crate::model::{InputSummary, Moment};

/// A runtime's time before a line: the instant and how many fraction digits it was written with
/// (9 for kubectl and docker, which pad; 0 to 9 for containerd, which trims).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub at: DateTime<Utc>,
    pub digits: usize,
}

/// `text`, whole, as a runtime's RFC 3339 time with up to nanoseconds and `Z` or a `±HH:MM`
/// offset (CRI-O writes the node's offset), or `None`.
pub fn stamp(text: &str) -> Option<Stamp> {
    let bytes = text.as_bytes();
    let digit = |at: usize| bytes.get(at).is_some_and(u8::is_ascii_digit);
    let is = |at: usize, want: u8| bytes.get(at) == Some(&want);
    let date_time = (0..4).all(digit)
        && is(4, b'-')
        && (5..7).all(digit)
        && is(7, b'-')
        && (8..10).all(digit)
        && is(10, b'T')
        && (11..13).all(digit)
        && is(13, b':')
        && (14..16).all(digit)
        && is(16, b':')
        && (17..19).all(digit);
    if !date_time {
        return None;
    }
    let mut at = 19;
    let mut digits = 0;
    if is(at, b'.') {
        at += 1;
        while digit(at) {
            at += 1;
            digits += 1;
        }
        if !(1..=9).contains(&digits) {
            return None;
        }
    }
    let zone = &bytes[at..];
    let zoned = zone == b"Z"
        || (zone.len() == 6
            && matches!(zone[0], b'+' | b'-')
            && zone[1..3].iter().all(u8::is_ascii_digit)
            && zone[3] == b':'
            && zone[4..6].iter().all(u8::is_ascii_digit));
    if !zoned {
        return None;
    }
    DateTime::parse_from_rfc3339(text).ok().map(|at| Stamp { at: at.with_timezone(&Utc), digits })
}

/// The line's leading runtime time and what follows its one space, or `None` when the line does
/// not start with one.
pub fn split_stamp(line: &str) -> Option<(Stamp, &str)> {
    let (first, rest) = line.split_once(' ')?;
    Some((stamp(first)?, rest))
}

/// `at` as the timeline holds it, or the reason it cannot be (a year outside 1677–2262).
pub fn moment(at: DateTime<Utc>) -> std::result::Result<Moment, String> {
    Moment::new(at).map_err(|_| format!("time {} is outside the years 1677-2262 a timeline holds", at.to_rfc3339()))
}

/// The lines of a sniffed head that sniffing judges: complete lines (the head's last line may be
/// cut at 64 KiB), not blank, at most 20. A head with no line end is judged as one line.
pub fn head_lines(head: &str) -> impl Iterator<Item = &str> {
    let complete = match head.rfind('\n') {
        Some(end) => &head[..end],
        None => head,
    };
    complete.lines().map(|line| line.trim_end_matches('\r')).filter(|line| !line.trim().is_empty()).take(20)
}

/// What kubectl writes into its output when it could not read one pod's stream (with
/// `--ignore-errors`, or when following several): `error: ...`, with no prefix or time.
pub fn is_kubectl_error(line: &str) -> bool {
    line.starts_with("error: ")
}

/// Why a kubectl `error:` line is rejected: it is no line of the application, and it says the
/// export lacks a stream's lines from there on.
pub const KUBECTL_ERROR: &str =
    "kubectl could not read a container's log here (its `error:` line): the export lacks that stream from here on";

/// One runtime format, line by line: each line of the export goes in, pieces come out (a line may
/// complete a record begun earlier, as a CRI `P` line is completed by its `F`).
pub trait Shape: Send {
    fn line(&mut self, number: u64, text: &str, out: &mut VecDeque<Piece>);
    /// The end of the export: records still open are given.
    fn end(&mut self, _out: &mut VecDeque<Piece>) {}
}

/// The pieces of a line-based export read by `shape`: every line of it is in exactly one piece;
/// a line past `max_line_bytes` is a `Piece::Rejected` (`lines::too_long`), passed over unheld.
pub fn pieces<'a, S: Shape + 'a>(
    input: Box<dyn std::io::BufRead + Send>,
    context: Context<'a>,
    mut shape: S,
) -> Box<dyn Iterator<Item = Result<Piece>> + Send + 'a> {
    let mut reader = Lines::new(input, context.max_line_bytes);
    // `Lines` counts a line past the cap in a summary and passes over it: the count's growth says
    // how many lines before the one returned (or before the end) were passed over.
    let mut summary = InputSummary::new("", "log", "envelope", None);
    let mut last = 0u64;
    let mut out = VecDeque::new();
    let mut done = false;
    Box::new(std::iter::from_fn(move || {
        loop {
            if let Some(piece) = out.pop_front() {
                return Some(Ok(piece));
            }
            if done {
                return None;
            }
            let before = summary.rejected;
            match reader.next_line(context.path, &mut summary) {
                Err(error) => {
                    done = true;
                    return Some(Err(error));
                }
                Ok(next) => {
                    let passed = summary.rejected - before;
                    for number in last + 1..=last + passed {
                        out.push_back(Piece::Rejected {
                            line: number,
                            lines: 1,
                            reason: lines::too_long(context.max_line_bytes),
                        });
                    }
                    last += passed;
                    if let Some((number, text)) = next {
                        last = number;
                        shape.line(number, text, &mut out);
                    } else {
                        done = true;
                        shape.end(&mut out);
                    }
                }
            }
        }
    }))
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use crate::ingest::envelope::Envelope;
    use std::path::Path;

    /// The pieces `envelope` makes of `text` read from `path`, with the line cap `cap`.
    pub fn read_at(envelope: &dyn Envelope, path: &str, text: &str, cap: usize) -> Vec<Piece> {
        let input: Box<dyn std::io::BufRead + Send> = Box::new(std::io::Cursor::new(text.as_bytes().to_vec()));
        let context = Context { path: Path::new(path), max_line_bytes: cap };
        envelope.pieces(input, context).collect::<Result<Vec<_>>>().expect("readable")
    }

    pub fn read(envelope: &dyn Envelope, text: &str) -> Vec<Piece> {
        read_at(envelope, "export.log", text, 1 << 20)
    }

    /// The lines the pieces account for, in total.
    pub fn accounted(pieces: &[Piece]) -> u64 {
        pieces
            .iter()
            .map(|piece| match piece {
                Piece::Record(record) => record.lines,
                Piece::Ignored { lines, .. } | Piece::Rejected { lines, .. } => *lines,
            })
            .sum()
    }

    /// Every existing log fixture of the repository (plain text, pino, winston, NestJS) and the
    /// other envelopes' fixtures, with their contents: none may sniff as a runtime envelope it is
    /// not.
    pub fn other_logs() -> Vec<(String, String)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let mut found = Vec::new();
        let mut folders = vec![root];
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(&folder).expect("fixtures").flatten() {
                let path = entry.path();
                if path.is_dir() {
                    folders.push(path);
                } else if let (Some("log" | "jsonl" | "json" | "csv" | "txt"), Ok(text)) =
                    (path.extension().and_then(|e| e.to_str()), std::fs::read_to_string(&path))
                {
                    let head: String = text.chars().take(64 << 10).collect();
                    found.push((path.display().to_string(), head));
                }
            }
        }
        assert!(found.len() > 20, "the fixtures are found");
        found
    }

    pub fn fixture(name: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/envelopes").join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("{} is readable", path.display()))
    }

    /// The events a log format makes of a fixture, with the declared zone Asia/Seoul: what happened,
    /// when, to which job, and in which instance.
    fn events_of(
        format: &dyn crate::ingest::EventFormat,
        path: &str,
    ) -> Vec<(String, String, Option<String>, Option<String>)> {
        use crate::ingest::{SourceKind, SourceSpec};
        let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
        let tz = Some(chrono_tz::Asia::Seoul);
        let spec = SourceSpec::new(SourceKind::Log, full.clone(), tz, "--log-tz".into());
        let mut events = Vec::new();
        let mut summary = InputSummary::new(path, "log", format.name(), tz);
        let input = crate::ingest::open(&full).expect("opens");
        format.read(&spec, 0, input, &mut events, &mut summary).expect("reads");
        assert_eq!(
            summary.lines,
            summary.used + summary.ignored + summary.rejected,
            "{path}: every line accounted for"
        );
        assert_eq!(summary.rejected, 0, "{path}: {:?}", summary.rejections);
        let mut events: Vec<_> = events
            .iter()
            .map(|e| {
                (
                    format!("{:?}", e.kind),
                    e.at().to_rfc3339(),
                    e.job_id.as_ref().map(ToString::to_string),
                    e.instance.as_ref().map(ToString::to_string),
                )
            })
            .collect();
        events.sort();
        events
    }

    /// The reference incident's log, wrapped in each runtime envelope, gives the events the plain
    /// log gives, at the lines' own times in the declared zone (the CRI file's split restart line
    /// included); in the prefixed export every one of them is the first pod's.
    #[test]
    fn the_incident_wrapped_in_each_envelope_gives_the_plain_logs_events() {
        use super::super::{cri::Cri, kubectl::Kubectl, kubectl_prefix::KubectlPrefix, unwrap::Unwrap};
        let plain = events_of(&crate::ingest::log::text::ServerLog, "fixtures/incident-2026-10-07/server.log");
        assert!(plain.len() >= 10, "the incident's events are read: {}", plain.len());
        let bare = |events: Vec<(String, String, Option<String>, Option<String>)>| {
            events.into_iter().map(|(kind, at, job, _)| (kind, at, job, None)).collect::<Vec<_>>()
        };
        for (envelope, path) in [
            (&Unwrap(&Kubectl), "fixtures/envelopes/kubectl.log"),
            (&Unwrap(&Kubectl), "fixtures/envelopes/docker.log"),
            (&Unwrap(&Cri), "fixtures/envelopes/cri.log"),
        ] {
            assert_eq!(bare(events_of(envelope, path)), plain, "{path}");
        }
        let prefixed = events_of(&Unwrap(&KubectlPrefix), "fixtures/envelopes/kubectl-prefix.log");
        let (server, replica): (Vec<_>, Vec<_>) =
            prefixed.into_iter().partition(|e| e.3.as_deref() == Some("pod=web-7d9f8c6b5-x2k4p container=api"));
        assert_eq!(bare(server), plain);
        // The replica serves GET requests and pings Redis: noise, no event of its own.
        assert!(replica.is_empty(), "{replica:?}");
    }

    #[test]
    fn stamps_are_read_strictly_with_up_to_nine_digits_and_an_offset() {
        let fixed = stamp("2026-10-06T23:50:00.001234567Z").expect("stamp");
        assert_eq!(fixed.digits, 9);
        assert_eq!(fixed.at.timestamp_subsec_nanos(), 1_234_567);
        let trimmed = stamp("2026-10-06T23:50:00.0012Z").expect("stamp");
        assert_eq!((trimmed.digits, trimmed.at.timestamp_subsec_nanos()), (4, 1_200_000));
        assert_eq!(stamp("2026-10-06T23:50:00Z").map(|s| s.digits), Some(0));
        let offset = stamp("2026-10-07T08:50:00.000000001+09:00").expect("stamp");
        assert_eq!(offset.at.to_rfc3339(), "2026-10-06T23:50:00.000000001+00:00");
        for wrong in [
            "2026-10-06 23:50:00.001Z",
            "2026-10-06t23:50:00.001Z",
            "2026-10-06T23:50:00.001",
            "2026-10-06T23:50:00.0012345678Z",
            "2026-10-06T23:50:00.Z",
            "2026-10-06T23:50:00.001+0900",
            "2026-13-06T23:50:00.001Z",
            "2026-10-06T23:50:00.001z",
            "",
        ] {
            assert_eq!(stamp(wrong), None, "{wrong}");
        }
    }

    #[test]
    fn head_lines_leave_out_a_cut_last_line_and_blanks() {
        let head = "a\n\n  \nb\r\nc-cut";
        assert_eq!(head_lines(head).collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(head_lines("only").collect::<Vec<_>>(), ["only"]);
    }
}
