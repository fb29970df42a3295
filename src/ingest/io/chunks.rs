//! A text input read in large blocks and handed out as regions of whole lines, so that a reader
//! searches a block at a time instead of a line at a time (the text log reader's candidate search,
//! a one-line envelope's records). A line longer than the cap is passed over a block at a time,
//! never held.

use std::io::BufRead;

use crate::error::{Error, Result};

/// Reads the input in large blocks and hands out regions that end at a line boundary, so that a
/// whole block can be searched at once instead of line by line.
pub struct Chunks {
    input: Box<dyn BufRead + Send>,
    /// Zeroed once and reused: `filled` bytes of it are read input.
    buffer: Vec<u8>,
    filled: usize,
    /// Bytes of `buffer` that belong to the region handed out last (consumed on the next call).
    handed: usize,
    done: bool,
    /// The longest line held (`SourceSpec::max_line_bytes`): the buffer grows to it and a block
    /// more, never with a line that has no end.
    cap: usize,
}

/// What `Chunks` hands out: whole lines, or the length of a line longer than the cap, passed over.
#[derive(Debug, Clone, Copy)]
pub enum Region<'a> {
    Lines(&'a [u8]),
    /// A line past the cap: its bytes, with its line end.
    TooLong(u64),
}

pub const CHUNK: usize = 1 << 20;

impl Chunks {
    pub fn new(input: Box<dyn BufRead + Send>, cap: usize) -> Self {
        Chunks { input, buffer: vec![0; 2 * CHUNK], filled: 0, handed: 0, done: false, cap }
    }

    /// The region handed out last (empty before the first, and after a line passed over).
    pub fn current(&self) -> &[u8] {
        &self.buffer[..self.handed.min(self.filled)]
    }

    /// `lines_before`: the lines of the regions handed out so far, for an error's line.
    pub fn next_region(&mut self, path: &std::path::Path, lines_before: u64) -> Result<Option<Region<'_>>> {
        // The start of a line the last region did not reach moves to the front.
        self.buffer.copy_within(self.handed..self.filled, 0);
        self.filled -= self.handed;
        self.handed = 0;
        // The bytes before it hold no line end.
        let mut searched = 0;
        loop {
            // Searched only once a block is in (a pipe gives 64 KiB a read), and only the bytes
            // not searched before (a line longer than a block is read a block at a time).
            if self.filled >= CHUNK || self.done {
                if let Some(last) = memchr::memrchr(b'\n', &self.buffer[searched..self.filled]) {
                    self.handed = searched + last + 1;
                    return Ok(Some(Region::Lines(&self.buffer[..self.handed])));
                }
                searched = self.filled;
                if self.filled > self.cap {
                    if memchr::memchr(0, &self.buffer[..self.filled]).is_some() {
                        // Binary data (`/dev/zero`): handed out whole, for the region's check to
                        // refuse, rather than passed over for ever.
                        self.handed = self.filled;
                        return Ok(Some(Region::Lines(&self.buffer[..self.handed])));
                    }
                    // One line past the cap so far, with no end in sight: passed over.
                    return self.pass_line(path, lines_before).map(|bytes| Some(Region::TooLong(bytes)));
                }
            }
            if self.done {
                if self.filled == 0 {
                    return Ok(None);
                }
                // The last line has no line ending.
                self.handed = self.filled;
                return Ok(Some(Region::Lines(&self.buffer[..self.handed])));
            }
            if self.buffer.len() - self.filled < CHUNK {
                // A line longer than a block so far: room for a block more.
                self.buffer.resize(self.filled + CHUNK, 0);
            }
            let read = self.read(self.filled, path, lines_before)?;
            self.filled += read;
            if read == 0 {
                self.done = true;
            }
        }
    }

    /// Drops the line in the buffer (all of it, no line end in it) and reads on to its end a
    /// block at a time, keeping what follows the end. Returns the line's bytes, its end included.
    fn pass_line(&mut self, path: &std::path::Path, lines_before: u64) -> Result<u64> {
        let mut bytes = self.filled as u64;
        self.filled = 0;
        while !self.done {
            let read = self.read(0, path, lines_before)?;
            if memchr::memchr(0, &self.buffer[..read]).is_some() {
                return Err(crate::ingest::io::lines::binary(path, lines_before + 1));
            }
            if read == 0 {
                self.done = true;
            } else if let Some(end) = memchr::memchr(b'\n', &self.buffer[..read]) {
                self.buffer.copy_within(end + 1..read, 0);
                self.filled = read - end - 1;
                return Ok(bytes + end as u64 + 1);
            }
            bytes += read as u64;
        }
        Ok(bytes)
    }

    /// Reads into the buffer from `at` (at most a block); 0 at the end of the input.
    fn read(&mut self, at: usize, path: &std::path::Path, lines_before: u64) -> Result<usize> {
        let end = (at + CHUNK).min(self.buffer.len());
        self.input.read(&mut self.buffer[at..end]).map_err(|source| {
            let Some(problem) = crate::ingest::io::gzip::GzipProblem::of(&source) else {
                return Error::Io { path: path.to_path_buf(), source };
            };
            // The whole lines read so far are intact: say after which one the file stops.
            let whole = lines_before + memchr::memchr_iter(b'\n', &self.buffer[..at]).count() as u64;
            let after = if whole == 0 { "before its first line".to_string() } else { format!("after line {whole}") };
            Error::input(path, None, problem.describe(&after))
        })
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// Gives `text` `step` bytes at a time, as a pipe may, then `error` if any. The readers'
    /// tests share it (`read_ahead`, `spool`, the text log, one-line envelopes).
    pub struct Trickle {
        pub text: Vec<u8>,
        pub at: usize,
        pub step: usize,
        pub error: Option<std::io::ErrorKind>,
    }

    impl Trickle {
        pub fn new(text: Vec<u8>, step: usize) -> Trickle {
            Trickle { text, at: 0, step, error: None }
        }
    }

    impl std::io::Read for Trickle {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            if self.at == self.text.len() {
                return self.error.take().map_or(Ok(0), |kind| Err(kind.into()));
            }
            let count = self.step.min(out.len()).min(self.text.len() - self.at);
            out[..count].copy_from_slice(&self.text[self.at..self.at + count]);
            self.at += count;
            Ok(count)
        }
    }

    #[test]
    fn regions_are_the_input_cut_at_line_ends_whatever_the_reads_and_line_lengths() {
        // Short lines, a line longer than two blocks, lines again, a last line without its end.
        let mut input = Vec::new();
        for n in 0..30_000 {
            input.extend_from_slice(format!("2026-10-07 09:33:00.{:03} line {n}\n", n % 1000).as_bytes());
        }
        input.extend(std::iter::repeat_n(b'x', 2 * CHUNK + 12_345));
        input.push(b'\n');
        for n in 0..30_000 {
            input.extend_from_slice(format!("line {n}\n").as_bytes());
        }
        input.extend_from_slice(b"the last line");
        for step in [1_000, 65_536, 3 * CHUNK] {
            let reader = std::io::BufReader::new(Trickle::new(input.clone(), step));
            let mut chunks = Chunks::new(Box::new(reader), crate::ingest::io::lines::MAX_LINE_BYTES);
            let (mut joined, mut regions) = (Vec::new(), 0);
            while let Some(region) = chunks.next_region(std::path::Path::new("server.log"), 0).unwrap() {
                let Region::Lines(region) = region else { panic!("no line is past the cap") };
                joined.extend_from_slice(region);
                regions += 1;
                assert!(region.ends_with(b"\n") || joined.len() == input.len(), "a region ends at a line end");
            }
            assert_eq!(joined, input, "reads of {step} bytes");
            assert!(regions >= 3, "{regions} regions");
        }
    }
}
