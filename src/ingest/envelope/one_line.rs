//! An export whose records are each one line of it (`Envelope::one_line`: kubectl's, docker's),
//! read in blocks of whole lines (`io::chunks`) with each record's message read where it lies.
//!
//! The general walk (`runtime::pieces`) reads a line at a time into a string of its own and gives
//! each record an owned message, labels and a place in a queue; for a kubectl export that was most
//! of the cost of reading it, three times the log reader's own (callgrind, the smoke case's
//! kubectl envelope). Here a block is checked for UTF-8 and NUL bytes once, and a record's message
//! is copied once, into the log reader's batch. What is read is what `pieces` gives, line for
//! line: the same splits of the same lines (`OneLine::split`), a line past the cap rejected in
//! its place, a NUL byte or text that is not UTF-8 an error naming its line.

use std::path::Path;

use super::{Context, OneLine, Piece, Split};
use crate::error::Result;
use crate::ingest::io::chunks::{Chunks, Region};
use crate::ingest::io::lines;

pub struct Reader<'a> {
    chunks: Chunks,
    envelope: &'a dyn OneLine,
    path: &'a Path,
    cap: usize,
    /// Lines handed out so far.
    line: u64,
    /// Where the next line starts in the current region (`Chunks::current`); at its end, the
    /// next region is read.
    at: usize,
    done: bool,
}

impl<'a> Reader<'a> {
    pub fn new(input: Box<dyn std::io::BufRead + Send>, context: Context<'a>, envelope: &'a dyn OneLine) -> Self {
        Reader {
            chunks: Chunks::new(input, context.max_line_bytes),
            envelope,
            path: context.path,
            cap: context.max_line_bytes,
            line: 0,
            at: 0,
            done: false,
        }
    }

    /// Hands each line of the export, in order, with its number, to `each` until it says to
    /// stop (`false`) or the export ends; a later call goes on from the next line. A record's
    /// message is borrowed from the block (`Split::into_piece` copies it, for a record kept).
    pub fn visit(&mut self, mut each: impl FnMut(u64, Split<'_>) -> Result<bool>) -> Result<()> {
        loop {
            if self.at >= self.chunks.current().len() {
                if self.done {
                    return Ok(());
                }
                self.at = 0;
                match self.chunks.next_region(self.path, self.line)? {
                    None => {
                        self.done = true;
                        return Ok(());
                    }
                    Some(Region::TooLong(_)) => {
                        self.line += 1;
                        let reason = lines::too_long(self.cap);
                        if !each(self.line, Split::Other(Piece::Rejected { line: self.line, lines: 1, reason }))? {
                            return Ok(());
                        }
                        continue;
                    }
                    Some(Region::Lines(_)) => {}
                }
            }
            if !self.lines_of_region(&mut each)? {
                return Ok(());
            }
        }
    }

    /// The lines of the current region from `at`, until `each` says to stop (`false`).
    fn lines_of_region(&mut self, each: &mut impl FnMut(u64, Split<'_>) -> Result<bool>) -> Result<bool> {
        let region = &self.chunks.current()[self.at..];
        let (path, cap, envelope) = (self.path, self.cap, self.envelope);
        // One check of the block; a block with a NUL byte or text that is not UTF-8 is read a
        // line at a time, to name the line.
        let whole = std::str::from_utf8(region).ok().filter(|_| memchr::memchr(0, region).is_none());
        let mut start = 0;
        let mut ends = memchr::memchr_iter(b'\n', region);
        while start < region.len() {
            let end = ends.next().unwrap_or(region.len());
            let next = end + 1;
            self.line += 1;
            let line = self.line;
            let mut bytes = &region[start..end];
            while let [rest @ .., b'\r'] = bytes {
                bytes = rest;
            }
            let split = if bytes.len() > cap {
                Split::Other(Piece::Rejected { line, lines: 1, reason: lines::too_long(cap) })
            } else {
                let text = match whole {
                    // A slice at line ends, which are ASCII: always whole characters.
                    Some(whole) => &whole[start..start + bytes.len()],
                    None if memchr::memchr(0, bytes).is_some() => return Err(lines::binary(path, line)),
                    None => std::str::from_utf8(bytes).map_err(|_| lines::binary(path, line))?,
                };
                envelope.split(line, text)
            };
            start = next;
            if !each(line, split)? {
                self.at += start.min(region.len());
                return Ok(false);
            }
        }
        self.at += region.len();
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::envelope::{Envelope, kubectl::Kubectl};

    /// What the reader hands out, as pieces, read `step` bytes at a time.
    fn read(text: &[u8], cap: usize, step: usize) -> Result<Vec<Piece>> {
        let input = std::io::BufReader::new(crate::ingest::io::chunks::tests::Trickle::new(text.to_vec(), step));
        let context = Context { path: Path::new("pods.log"), max_line_bytes: cap };
        let mut reader = Reader::new(Box::new(input), context, &Kubectl);
        let mut pieces = Vec::new();
        // Stopped and taken up again, as the first records are read before the rest.
        reader.visit(|line, split| {
            pieces.push(split.into_piece(line));
            Ok(pieces.len() < 3)
        })?;
        reader.visit(|line, split| {
            pieces.push(split.into_piece(line));
            Ok(true)
        })?;
        Ok(pieces)
    }

    fn general(text: &[u8], cap: usize) -> Result<Vec<Piece>> {
        let context = Context { path: Path::new("pods.log"), max_line_bytes: cap };
        Kubectl.pieces(Box::new(std::io::Cursor::new(text.to_vec())), context).collect()
    }

    /// Every sort of line kubectl's export can hold, and some it cannot, in every order and cut
    /// into every size of read: the pieces are the general walk's, one for one.
    #[test]
    fn an_export_read_in_blocks_gives_the_pieces_of_the_line_by_line_walk() {
        let kinds: [&[u8]; 9] = [
            b"2026-10-06T23:50:00.001734812Z 2026-10-07 08:50:00.000 INFO  [main] job 7 active\n",
            b"2026-10-06T23:50:01.000000000Z \n",
            b"\n",
            b"   \r\n",
            b"error: container \"app\" in pod \"web-1\" is waiting to start\n",
            b"not a line of it\n",
            b"2026-10-06T23:50:02.5+09:00 caf\xc3\xa9 \x1b[33mwarn\x1b[0m a\rb\r\r\n",
            b"9999-10-06T23:50:00.000000001Z out of range\n",
            b"2026-10-06T23:50:03.000000000Z xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n",
        ];
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        for round in 0..200 {
            let mut text = Vec::new();
            for _ in 0..(seed % 40) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                text.extend_from_slice(kinds[usize::try_from(seed % kinds.len() as u64).unwrap_or(0)]);
            }
            if round % 3 == 0 {
                // The last line without its end.
                text.pop();
            }
            for (cap, step) in [(1 << 20, 1 << 20), (64, 7), (100, 1)] {
                assert_eq!(
                    read(&text, cap, step).unwrap(),
                    general(&text, cap).unwrap(),
                    "{}",
                    String::from_utf8_lossy(&text)
                );
            }
        }
    }

    #[test]
    fn a_line_past_a_block_is_rejected_in_its_place_and_binary_is_an_error_naming_its_line() {
        let long = format!("2026-10-06T23:50:00.000000001Z {}\n", "x".repeat(3 << 20));
        let text = format!("2026-10-06T23:50:00.000000001Z a\n{long}2026-10-06T23:50:00.000000002Z b\n");
        let pieces = read(text.as_bytes(), 1 << 20, 1 << 16).unwrap();
        assert_eq!(pieces, general(text.as_bytes(), 1 << 20).unwrap());
        assert!(matches!(&pieces[1], Piece::Rejected { line: 2, reason, .. } if reason.contains("--max-line-bytes")));
        for bad in [&b"2026-10-06T23:50:00.000000001Z a\x00\n"[..], b"2026-10-06T23:50:00.000000001Z \xff\n"] {
            let text = [&b"2026-10-06T23:50:00.000000001Z a\n"[..], bad].concat();
            let error = read(&text, 1 << 20, 1 << 20).unwrap_err().to_string();
            assert_eq!(error, general(&text, 1 << 20).unwrap_err().to_string());
            assert!(error.contains(":2:") || error.contains("line 2"), "{error}");
        }
    }
}
