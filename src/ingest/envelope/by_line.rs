//! The lines of a line-based export, for its envelope: `lines::Lines` underneath (UTF-8, no NUL,
//! `\r\n` tolerated, bounded memory), with a line past the cap handed to the envelope as a line
//! of its own to account for, rather than counted in a summary the envelope does not own: every
//! physical line of the export then lands in exactly one `Piece`.

use std::collections::VecDeque;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::ingest::io::lines::Lines;
use crate::model::InputSummary;

use super::{Context, Piece};

/// One physical line of the export.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// The line's 1-based number and text, without its line end.
    Text(u64, String),
    /// A line longer than the cap, passed over unread: its number and why (`lines::too_long`).
    TooLong(u64, String),
}

impl Line {
    /// The rejection of a line past the cap, or `None` for a line of text.
    pub fn rejected(&self) -> Option<Piece> {
        match self {
            Line::TooLong(line, reason) => Some(Piece::Rejected { line: *line, lines: 1, reason: reason.clone() }),
            Line::Text(..) => None,
        }
    }
}

pub struct ByLine {
    lines: Lines,
    path: PathBuf,
    /// Where `Lines` counts the lines it passes over (too long); drained after each call.
    passed: InputSummary,
    queued: VecDeque<Line>,
}

impl ByLine {
    pub fn new(input: Box<dyn BufRead + Send>, context: Context<'_>) -> Self {
        ByLine {
            lines: Lines::new(input, context.max_line_bytes),
            path: context.path.to_path_buf(),
            passed: InputSummary::new("", "log", "envelope", None),
            queued: VecDeque::new(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The next line, or `None` at the end. Text that is not UTF-8 or holds a NUL is an error
    /// naming the line (`Lines::next_line`).
    pub fn next_line(&mut self) -> Result<Option<Line>> {
        if let Some(line) = self.queued.pop_front() {
            return Ok(Some(line));
        }
        let text = self.lines.next_line(&self.path, &mut self.passed)?.map(|(n, text)| Line::Text(n, text.to_string()));
        // The lines passed over come before the one returned.
        for rejection in self.passed.rejections.drain(..) {
            self.queued.push_back(Line::TooLong(rejection.line, rejection.reason));
        }
        self.queued.extend(text);
        Ok(self.queued.pop_front())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_past_the_cap_comes_in_its_place_among_the_others() {
        let input = format!("short\n{}\nafter\n", "x".repeat(100));
        let context = Context { path: Path::new("t.log"), max_line_bytes: 10 };
        let mut lines = ByLine::new(Box::new(std::io::Cursor::new(input.into_bytes())), context);
        assert_eq!(lines.next_line().unwrap(), Some(Line::Text(1, "short".into())));
        let long = lines.next_line().unwrap().unwrap();
        assert!(matches!(&long, Line::TooLong(2, reason) if reason.starts_with("line longer than 10 bytes")));
        assert!(long.rejected().is_some());
        assert_eq!(lines.next_line().unwrap(), Some(Line::Text(3, "after".into())));
        assert_eq!(lines.next_line().unwrap(), None);
    }

    /// Hostile bytes through every journald and Loki envelope: pieces or an error, never a panic,
    /// and every line that was read accounted for once.
    #[test]
    fn hostile_bytes_give_pieces_or_an_error_never_a_panic() {
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let alphabet = b"{}[]\":,\\ \t\r\n-+.:0123456789TZabe\x1e\xc3\xa9\xff";
        let names = [
            "journald-json",
            "journald-short-iso",
            "journald-short-iso-precise",
            "loki-jsonl",
            "loki-default",
            "loki-raw",
        ];
        let mut read_through = 0;
        for envelope in super::super::ENVELOPES.iter().map(|u| u.0).filter(|e| names.contains(&e.name())) {
            for _ in 0..300 {
                let mut bytes = Vec::new();
                for _ in 0..(seed % 200) {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    bytes.push(alphabet[usize::try_from(seed % alphabet.len() as u64).unwrap_or(0)]);
                }
                let text = String::from_utf8_lossy(&bytes).into_owned();
                let _ = envelope.sniff(&text);
                let context = Context { path: Path::new("x"), max_line_bytes: 64 };
                let mut counted = 0;
                let mut failed = false;
                for piece in envelope.pieces(Box::new(std::io::Cursor::new(bytes.clone())), context) {
                    match piece {
                        Ok(Piece::Record(record)) => counted += record.lines,
                        Ok(Piece::Ignored { lines, .. } | Piece::Rejected { lines, .. }) => counted += lines,
                        Err(_) => failed = true,
                    }
                }
                if !failed {
                    read_through += 1;
                    let lines = bytes.split(|b| *b == b'\n').count() as u64
                        - u64::from(bytes.ends_with(b"\n") || bytes.is_empty());
                    assert_eq!(counted, lines, "{}: {bytes:?}", envelope.name());
                }
            }
        }
        assert!(read_through > 300, "most inputs should be text: {read_through} of 1800 were");
    }
}

/// For the envelopes' tests: an export read whole, as a log source would read it.
#[cfg(test)]
pub mod testing {
    use std::path::{Path, PathBuf};

    use chrono::{DateTime, Utc};

    use crate::ingest::envelope::Envelope;
    use crate::ingest::envelope::unwrap::Unwrap;
    use crate::ingest::{EventFormat, SourceKind, SourceSpec, log::text::ServerLog};
    use crate::model::{Event, EventKind, InputSummary};

    pub fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name)
    }

    fn read(format: &dyn EventFormat, name: &str) -> (Vec<Event>, InputSummary) {
        let path = fixture(name);
        let tz = Some(chrono_tz::Asia::Seoul);
        let spec = SourceSpec::new(SourceKind::Log, path.clone(), tz, "--log-tz".into());
        let mut events = Vec::new();
        let mut summary = InputSummary::new(name, "log", format.name(), tz);
        let text = std::fs::read(&path).unwrap();
        format.read(&spec, 0, Box::new(std::io::Cursor::new(text)), &mut events, &mut summary).unwrap();
        events.sort_by_key(|e| (e.moment(), e.origin().line));
        (events, summary)
    }

    /// The events of the reference log (fixtures/incident-2026-10-07/server.log, Asia/Seoul).
    pub fn reference() -> Vec<(EventKind, DateTime<Utc>)> {
        read(&ServerLog, "incident-2026-10-07/server.log").0.iter().map(|e| (e.kind, e.at())).collect()
    }

    /// An export read through `unwrap` in Asia/Seoul: its events, each with its instance, and its
    /// account (every line used, ignored or rejected).
    pub fn unwrapped(envelope: &'static dyn Envelope, name: &str) -> (Vec<Event>, InputSummary) {
        let (events, summary) = read(&Unwrap(envelope), name);
        let lines = std::fs::read_to_string(fixture(name)).unwrap().lines().count() as u64;
        assert_eq!(summary.lines, lines, "{name}");
        assert_eq!(summary.used + summary.ignored + summary.rejected, lines, "{name}");
        (events, summary)
    }
}
