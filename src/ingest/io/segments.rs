//! A text stream (standard input, a FIFO) cut into segments of whole lines as it is read, so that
//! two threads can parse it at once without a copy of it on disk (`log::text::read_streamed`).
//! The lines come through `Chunks`, as a file's do: a line past the cap is passed over, never
//! held. A segment ends before a line that starts like a timestamp (an entry) when one comes
//! within a segment's length after the size is reached, so that a continuation line is in its
//! entry's segment, as a file's second part starts at an entry (`log::text::second_part_start`).

use std::io::{BufRead, Seek, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::ingest::io::chunks::{Chunks, Region};

/// What a segment holds, in stream order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece {
    /// Whole lines: the segment's bytes from the end of the piece before to this end.
    Lines(usize),
    /// A line past the cap, passed over: its length, its line end included.
    TooLong(u64),
}

/// Consecutive lines of a stream, handed to a parsing thread.
#[derive(Debug)]
pub struct Segment {
    /// Its place in the stream: 0 for the first.
    pub index: usize,
    /// The stream's byte its first line starts at.
    pub start: u64,
    pub bytes: Vec<u8>,
    pub pieces: Vec<Piece>,
    /// The error the stream ended with after these lines (its line counted from the segment's
    /// first line).
    pub error: Option<Error>,
    /// The stream ends with it.
    pub last: bool,
    /// Where the copy of the stream starts, when this segment's lines were written to it too
    /// (`Copy`): the lines' offsets for the report's read-back count from there.
    pub copied_from: Option<u64>,
}

impl Segment {
    fn new(index: usize, start: u64, bytes: Vec<u8>) -> Segment {
        Segment { index, start, bytes, pieces: Vec::new(), error: None, last: false, copied_from: None }
    }

    /// The stream's bytes it covers (lines passed over included).
    pub fn len(&self) -> u64 {
        self.bytes.len() as u64
            + self.pieces.iter().map(|piece| if let Piece::TooLong(bytes) = piece { *bytes } else { 0 }).sum::<u64>()
    }

    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    fn push_lines(&mut self, lines: &[u8]) {
        if !lines.is_empty() {
            self.bytes.extend_from_slice(lines);
            self.pieces.push(Piece::Lines(self.bytes.len()));
        }
    }

    /// The regions of its pieces, in order.
    pub fn regions(&self) -> impl Iterator<Item = Region<'_>> {
        let mut from = 0;
        self.pieces.iter().map(move |piece| match *piece {
            Piece::Lines(end) => {
                let lines = &self.bytes[from..end];
                from = end;
                Region::Lines(lines)
            }
            Piece::TooLong(bytes) => Region::TooLong(bytes),
        })
    }

    /// Lines in its pieces so far: where an error of the stream after them is.
    fn lines(&self) -> u64 {
        self.regions()
            .map(|region| match region {
                Region::Lines(lines) => memchr::memchr_iter(b'\n', lines).count() as u64,
                Region::TooLong(_) => 1,
            })
            .sum()
    }
}

/// Reads `input` to its end (or error) in segments of about `size` bytes, each handed to `send`
/// (which says `false` when no more are wanted); `recycled` gives back a spent segment's buffer.
pub fn cut(
    input: Box<dyn BufRead + Send>,
    path: &Path,
    cap: usize,
    size: usize,
    mut send: impl FnMut(Segment) -> bool,
    mut recycled: impl FnMut() -> Option<Vec<u8>>,
) {
    let mut chunks = Chunks::new(input, cap);
    let mut buffer = || {
        let mut bytes = recycled().unwrap_or_else(|| Vec::with_capacity(size + crate::ingest::io::chunks::CHUNK));
        bytes.clear();
        bytes
    };
    let mut segment = Segment::new(0, 0, buffer());
    loop {
        let region = match chunks.next_region(path, 0) {
            Ok(Some(region)) => region,
            Ok(None) => break,
            Err(error) => {
                segment.error = Some(crate::ingest::shifted(error, segment.lines()));
                break;
            }
        };
        let mut lines = match region {
            Region::TooLong(bytes) => {
                segment.pieces.push(Piece::TooLong(bytes));
                continue;
            }
            Region::Lines(lines) => lines,
        };
        // A region is a block of lines (a MiB): a segment may end more than once in it.
        while segment.bytes.len() + lines.len() >= size {
            let held = segment.bytes.len();
            let from = size.saturating_sub(held).min(lines.len());
            // An entry within a segment's length after the size is reached, not further.
            let Some(at) = entry_at_or_after(&lines[..(from + size).min(lines.len())], from)
                // No entry in sight: cut at a line end all the same, not to hold the stream.
                .or_else(|| {
                    (held + lines.len() >= 2 * size)
                        .then(|| line_end_at_or_after(lines, (2 * size).saturating_sub(held)))
                })
            else {
                break;
            };
            segment.push_lines(&lines[..at]);
            lines = &lines[at..];
            let start = segment.start + segment.len();
            let next = Segment::new(segment.index + 1, start, buffer());
            if !send(std::mem::replace(&mut segment, next)) {
                return;
            }
        }
        segment.push_lines(lines);
    }
    segment.last = true;
    send(segment);
}

/// The first line start at or after `from` in `lines` (whole lines) that starts like a timestamp,
/// not at their end.
fn entry_at_or_after(lines: &[u8], from: usize) -> Option<usize> {
    let entry = |at: usize| {
        let next = &lines[at..];
        crate::time::looks_like_date(next.strip_prefix(b"[").unwrap_or(next))
    };
    if from == 0 && !lines.is_empty() && entry(0) {
        return Some(0);
    }
    let search = from.saturating_sub(1);
    memchr::memchr_iter(b'\n', &lines[search..]).map(|at| search + at + 1).find(|&at| at < lines.len() && entry(at))
}

/// The first line start at or after `from` in `lines` (whole lines), or their end.
fn line_end_at_or_after(lines: &[u8], from: usize) -> usize {
    let search = from.saturating_sub(1).min(lines.len());
    memchr::memchr(b'\n', &lines[search..]).map_or(lines.len(), |at| search + at + 1)
}

/// The copy of the rest of a stream, from a segment on, for the lines a report reads back once
/// their texts are no longer kept: the lines passed over are holes of their length (no event is
/// on them), so that every line is where the stream had it, counted from the copy's start.
pub struct Copy {
    file: std::fs::File,
    path: PathBuf,
    /// The stream's byte the copy starts at.
    pub from: u64,
}

impl Copy {
    pub fn open(path: &Path, from: u64) -> std::io::Result<Copy> {
        let file = std::fs::OpenOptions::new().write(true).truncate(true).open(path)?;
        Ok(Copy { file, path: path.to_path_buf(), from })
    }

    /// Writes `segment`'s lines at their place.
    pub fn write(&mut self, segment: &Segment) -> Result<()> {
        let io = |source: std::io::Error| {
            Error::input(
                &self.path,
                None,
                format!(
                    "writing the temporary copy ({source}): a log read once is copied there from where its kept lines reach {} MiB, so that the lines a report cites can be read back; set TMPDIR to a folder with room for it",
                    crate::ingest::log::text::KEPT_WITHIN >> 20
                ),
            )
        };
        for region in segment.regions() {
            match region {
                Region::Lines(lines) => self.file.write_all(lines).map_err(io)?,
                Region::TooLong(bytes) => {
                    let skip = i64::try_from(bytes.saturating_sub(1)).unwrap_or(i64::MAX);
                    self.file.seek(std::io::SeekFrom::Current(skip)).map_err(io)?;
                    self.file.write_all(b"\n").map_err(io)?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::io::chunks::tests::Trickle;

    fn segments_of(text: &[u8], cap: usize, size: usize, step: usize) -> Vec<Segment> {
        let mut all = Vec::new();
        cut(
            Box::new(std::io::BufReader::new(Trickle::new(text.to_vec(), step))),
            Path::new("s.log"),
            cap,
            size,
            |segment| {
                all.push(segment);
                true
            },
            || None,
        );
        all
    }

    #[test]
    fn segments_hold_every_line_once_in_order_and_start_at_entries() {
        let mut text = Vec::new();
        for n in 0..5_000 {
            text.extend(format!("2026-10-07 09:33:{:02}.000 INFO line {n}\n", n % 60).as_bytes());
            if n % 7 == 0 {
                text.extend(b"  at a continuation\n");
            }
            if n % 501 == 0 {
                // Past the cap: passed over.
                text.extend(vec![b'x'; 300]);
                text.push(b'\n');
            }
        }
        text.extend(b"2026-10-07 09:34:00.000 INFO last line without an end");
        for (size, step) in [(1_000, 7), (4_096, 64), (1 << 20, 1 << 16)] {
            let segments = segments_of(&text, 200, size, step);
            assert!(segments.last().unwrap().last);
            let mut start = 0;
            let mut rebuilt = Vec::new();
            for (index, segment) in segments.iter().enumerate() {
                assert_eq!((segment.index, segment.start), (index, start));
                assert!(segment.error.is_none());
                if index > 0 {
                    assert!(segment.bytes.starts_with(b"2026-"), "segment {index} starts at an entry");
                }
                for region in segment.regions() {
                    match region {
                        Region::Lines(lines) => rebuilt.extend(lines),
                        Region::TooLong(bytes) => {
                            let passed = usize::try_from(bytes).unwrap();
                            rebuilt.extend(vec![b'x'; passed - 1].into_iter().chain([b'\n']));
                        }
                    }
                }
                start += segment.len();
            }
            assert_eq!(rebuilt, text, "size {size}");
            if size < 10_000 {
                assert!(segments.len() > 10, "{} segments of {size}", segments.len());
            }
        }
    }

    #[test]
    fn a_stream_of_continuations_is_cut_at_line_ends_all_the_same() {
        let text = b"  a continuation\n".repeat(1_000);
        let segments = segments_of(&text, 1 << 20, 1_000, 4096);
        assert!(segments.len() > 5);
        assert!(segments.iter().all(|segment| segment.bytes.len() <= 2 * 1_000 + 4096));
        assert_eq!(segments.iter().map(|segment| segment.bytes.len()).sum::<usize>(), text.len());
    }

    #[test]
    fn a_binary_line_past_the_cap_is_an_error_naming_its_line_in_the_segment() {
        // Past the first block read, so that the line is being passed over when the NUL comes.
        let mut text = b"2026-10-07 09:33:00.000 INFO one\n".repeat(40);
        text.extend(vec![b'x'; 3 << 20]);
        text.push(0);
        text.extend(vec![b'x'; 5_000]);
        let segments = segments_of(&text, 200, 1_000, 1 << 16);
        let failed = segments.last().unwrap();
        let lines_before: u64 = segments[..segments.len() - 1].iter().map(Segment::lines).sum();
        let Some(Error::Input { line: Some(line), .. }) = &failed.error else { panic!("{:?}", failed.error) };
        assert_eq!(lines_before + line, 41);
    }

    #[test]
    fn the_copy_puts_every_line_where_the_stream_had_it() {
        let mut text = b"2026-10-07 09:33:00.000 INFO one\n".repeat(100);
        text.extend(vec![b'x'; 999]);
        text.push(b'\n');
        text.extend(b"2026-10-07 09:33:01.000 INFO after\n".repeat(100));
        let segments = segments_of(&text, 200, 1_000, 64);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("copy");
        std::fs::write(&path, b"").unwrap();
        let from = segments[1].start;
        let mut copy = Copy::open(&path, from).unwrap();
        for segment in &segments[1..] {
            copy.write(segment).unwrap();
        }
        drop(copy);
        let written = std::fs::read(&path).unwrap();
        assert_eq!(written.len() as u64, text.len() as u64 - from);
        let lines: Vec<&[u8]> = written.split(|&b| b == b'\n').collect();
        let expected: Vec<&[u8]> = text[usize::try_from(from).unwrap()..].split(|&b| b == b'\n').collect();
        assert_eq!(lines.len(), expected.len());
        for (got, want) in lines.iter().zip(&expected) {
            if !want.starts_with(b"x") {
                assert_eq!(got, want);
            }
        }
    }
}
