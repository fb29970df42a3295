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
    /// Seconds since 1970-01-01 UTC, and the nanoseconds past them (1e9 and more in a leap
    /// second, as chrono keeps one).
    seconds: i64,
    nanos: u32,
    pub digits: usize,
}

impl Stamp {
    /// The instant, as chrono has it.
    pub fn at(&self) -> DateTime<Utc> {
        DateTime::from_timestamp(self.seconds, self.nanos).unwrap_or_default()
    }
}

/// `text`, whole, as a runtime's RFC 3339 time with up to nanoseconds and `Z` or a `±HH:MM`
/// offset (CRI-O writes the node's offset), or `None`.
pub fn stamp(text: &str) -> Option<Stamp> {
    leading(text).filter(|&(_, end)| end == text.len()).map(|(stamp, _)| stamp)
}

/// What eight bytes of a time's `YYYY-MM-DDTHH:MM:SS` must be: digits where the layout has a
/// `0`, its other bytes as they are.
#[derive(Clone, Copy)]
struct Word {
    digits: u64,
    fixed: u64,
    values: u64,
}

impl Word {
    const fn of(layout: &[u8; 19], from: usize) -> Word {
        let mut word = Word { digits: 0, fixed: 0, values: 0 };
        let mut i = 0;
        while i < 8 {
            let byte = layout[from + i];
            if byte == b'0' {
                word.digits |= 0xff << (8 * i);
            } else {
                word.fixed |= 0xff << (8 * i);
                word.values |= (byte as u64) << (8 * i);
            }
            i += 1;
        }
        word
    }

    /// Whether `word` (eight bytes, the first lowest) is this part of the layout. A byte is a
    /// digit when its high half is 3 and so it stays with 6 added (0x30..=0x39); no byte that
    /// passes the first test carries into the next on the add.
    fn fits(self, word: u64) -> bool {
        const HIGH: u64 = 0xf0f0_f0f0_f0f0_f0f0;
        const THREES: u64 = 0x3030_3030_3030_3030;
        const SIXES: u64 = 0x0606_0606_0606_0606;
        let digits = word & self.digits;
        word & self.fixed == self.values
            && digits & HIGH == THREES & self.digits
            && (digits + (SIXES & self.digits)) & HIGH == THREES & self.digits
    }
}

const LAYOUT: &[u8; 19] = b"0000-00-00T00:00:00";
const WORDS: [Word; 3] = [Word::of(LAYOUT, 0), Word::of(LAYOUT, 8), Word::of(LAYOUT, 11)];

/// The runtime's time `text` starts with, and where it ends, or `None`.
fn leading(text: &str) -> Option<(Stamp, usize)> {
    let bytes = text.as_bytes();
    let head = bytes.first_chunk::<19>()?;
    // Eight bytes at a time: this runs on every line of a runtime's export.
    let word = |from: usize| u64::from_le_bytes(*head[from..].first_chunk::<8>().unwrap_or(&[0; 8]));
    if !(WORDS[0].fits(word(0)) && WORDS[1].fits(word(8)) && WORDS[2].fits(word(11))) {
        return None;
    }
    let mut at = 19;
    let mut digits = 0;
    if bytes.get(at) == Some(&b'.') {
        at += 1;
        while bytes.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
            digits += 1;
        }
        if !(1..=9).contains(&digits) {
            return None;
        }
    }
    let fraction = &bytes[20.min(at)..at];
    let zone = match bytes.get(at..at + 6) {
        Some(zone @ [b'+' | b'-', h1, h0, b':', m1, m0]) if [h1, h0, m1, m0].iter().all(|d| d.is_ascii_digit()) => zone,
        _ if bytes.get(at) == Some(&b'Z') => &bytes[at..=at],
        _ => return None,
    };
    let end = at + zone.len();
    let (seconds, nanos) = if head[17..19] == *b"60" {
        // A leap second as chrono reads it: rare enough to leave to its parser.
        let at = DateTime::parse_from_rfc3339(&text[..end]).ok()?;
        (at.timestamp(), at.timestamp_subsec_nanos())
    } else {
        computed(head, fraction, zone)?
    };
    Some((Stamp { seconds, nanos, digits }, end))
}

/// A fraction's digits (at most 9) as nanoseconds.
fn fraction_nanos(fraction: &[u8]) -> u32 {
    let mut nanos = 0u32;
    for byte in fraction {
        nanos = nanos * 10 + u32::from(byte.wrapping_sub(b'0'));
    }
    nanos
        * [1_000_000_000, 100_000_000, 10_000_000, 1_000_000, 100_000, 10_000, 1000, 100, 10, 1]
            .get(fraction.len())
            .copied()
            .unwrap_or(1)
}

/// The instant of a time `stamp` has checked the shape of (seconds below 60), computed from its
/// digits: what chrono's RFC 3339 parser gives for it (`None` for a day, hour or offset that does
/// not exist), without its general scanner and calendar types, which were the most of reading a
/// kubectl line (callgrind, the smoke case's kubectl envelope).
fn computed(head: &[u8; 19], fraction: &[u8], zone: &[u8]) -> Option<(i64, u32)> {
    let digit = |at: usize| u32::from(head[at].wrapping_sub(b'0'));
    let pair = |at: usize| digit(at) * 10 + digit(at + 1);
    let (year, month, day) = (i64::from(pair(0) * 100 + pair(2)), pair(5), pair(8));
    let (hour, minute, second) = (pair(11), pair(14), pair(17));
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        1..=12 => 31,
        _ => return None,
    };
    if day == 0 || day > month_days || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let nanos = fraction_nanos(fraction);
    let offset = match *zone {
        [sign, h1, h0, _, m1, m0] => {
            let (hours, minutes) = (
                i64::from(h1.wrapping_sub(b'0')) * 10 + i64::from(h0.wrapping_sub(b'0')),
                i64::from(m1.wrapping_sub(b'0')) * 10 + i64::from(m0.wrapping_sub(b'0')),
            );
            // What chrono's `FixedOffset` takes: under a day, minutes under 60.
            if minutes > 59 || hours * 3600 + minutes * 60 >= 86_400 {
                return None;
            }
            (hours * 3600 + minutes * 60) * if sign == b'-' { -1 } else { 1 }
        }
        _ => 0,
    };
    let (month, day) = (i64::from(month), i64::from(day));
    // Days from 1970-01-01 to the date (Howard Hinnant's `days_from_civil`).
    let shifted = if month <= 2 { year - 1 } else { year };
    let era = shifted.div_euclid(400);
    let year_of_era = shifted - era * 400;
    let day_of_year = (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    let days = era * 146_097 + day_of_era - 719_468;
    let seconds = days * 86_400 + i64::from(hour * 3600 + minute * 60 + second) - offset;
    Some((seconds, nanos))
}

/// The line's leading runtime time and what follows its one space, or `None` when the line does
/// not start with one.
pub fn split_stamp(line: &str) -> Option<(Stamp, &str)> {
    // The time is read from the start and the space looked for where it ends: no search of the
    // line for its first space, which was a twentieth of reading a kubectl line. A time holds no
    // space, so a first space elsewhere leaves no time before it, as a split there would.
    let (stamp, end) = leading(line)?;
    (line.as_bytes().get(end) == Some(&b' ')).then(|| (stamp, &line[end + 1..]))
}

/// `at` as the timeline holds it, or the reason it cannot be (a year outside 1677–2262).
pub fn moment(stamp: Stamp) -> std::result::Result<Moment, String> {
    // As `Moment::new` computes it, without the calendar.
    stamp
        .seconds
        .checked_mul(1_000_000_000)
        .and_then(|nanos| nanos.checked_add(i64::from(stamp.nanos)))
        .map(Moment::from_nanos)
        .ok_or_else(|| format!("time {} is outside the years 1677-2262 a timeline holds", stamp.at().to_rfc3339()))
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

    /// The times computed from their digits are chrono's, to the nanosecond, for every field at
    /// and past its edges: days that do not exist, hour 24, minute 60, a leap second, offsets
    /// of a day and of 60 minutes, years at both ends.
    #[test]
    #[allow(clippy::cast_possible_truncation)] // picks below 100
    fn a_computed_time_is_what_chronos_parser_gives() {
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |below: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % below
        };
        let mut compared = 0;
        let mut valid = 0;
        for _ in 0..200_000 {
            let year = [0, 1, 1677, 1970, 2000, 2024, 2026, 2100, 2262, 9999][next(10) as usize] + next(2);
            let (month, day) = (next(14), next(33));
            let (hour, minute, second) = (next(26), next(62), [0, 1, 30, 59, 60, 61][next(6) as usize]);
            let digits = next(10) as usize;
            let fraction: String = (0..digits).map(|_| char::from(b'0' + next(10) as u8)).collect();
            let fraction = if digits == 0 { String::new() } else { format!(".{fraction}") };
            let zone = match next(4) {
                0 => "Z".to_string(),
                _ => format!(
                    "{}{:02}:{:02}",
                    ['+', '-'][next(2) as usize],
                    next(26),
                    [0, 30, 45, 59, 60, 99][next(6) as usize]
                ),
            };
            let text = format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}{fraction}{zone}");
            let expected = DateTime::parse_from_rfc3339(&text).ok().map(|at| at.to_utc());
            assert_eq!(stamp(&text).map(|stamp| stamp.at()), expected, "{text}");
            if let (Some(stamp), Some(at)) = (stamp(&text), expected) {
                assert_eq!(moment(stamp).map_err(|_| ()), Moment::new(at).map_err(|_| ()), "{text}");
            }
            // Read at the start of a line: what a split at its first space gives.
            for line in [format!("{text} message"), format!("{text}x message"), text.clone(), format!("{text}  a b")] {
                let split = line.split_once(' ').and_then(|(first, rest)| Some((stamp(first)?, rest)));
                assert_eq!(split_stamp(&line), split, "{line}");
            }
            compared += 1;
            valid += usize::from(expected.is_some());
        }
        assert!(valid > compared / 4 && valid < compared, "{valid} of {compared} valid: both kinds are compared");
        // Times of one hour after another, as a runtime writes them, with minutes and seconds
        // that do not exist among them.
        for base in ["2026-10-07T09", "2024-02-29T23", "2026-10-07T00"] {
            for zone in ["Z", "+09:00", "-03:30"] {
                for (minute, second) in [(0, 0), (33, 0), (59, 59), (60, 0), (0, 60), (61, 5), (99, 99), (12, 34)] {
                    let text = format!("{base}:{minute:02}:{second:02}.5{zone}");
                    let expected = DateTime::parse_from_rfc3339(&text).ok().map(|at| at.to_utc());
                    assert_eq!(stamp(&text).map(|stamp| stamp.at()), expected, "{text}");
                }
            }
        }
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
        assert_eq!(fixed.at().timestamp_subsec_nanos(), 1_234_567);
        let trimmed = stamp("2026-10-06T23:50:00.0012Z").expect("stamp");
        assert_eq!((trimmed.digits, trimmed.at().timestamp_subsec_nanos()), (4, 1_200_000));
        assert_eq!(stamp("2026-10-06T23:50:00Z").map(|s| s.digits), Some(0));
        let offset = stamp("2026-10-07T08:50:00.000000001+09:00").expect("stamp");
        assert_eq!(offset.at().to_rfc3339(), "2026-10-06T23:50:00.000000001+00:00");
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
