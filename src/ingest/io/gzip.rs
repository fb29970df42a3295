//! A gzip-compressed source, member after member (`cat a.gz b.gz` is one valid gzip file), with
//! errors that say what is wrong with the file: a file cut short is "truncated", not flate2's
//! "unexpected end of file" or "incomplete deflate stream"; bytes after the last member that are
//! not another member are "data after the end of the gzip stream at byte N", not a truncation.

use std::io::{self, BufRead, Read};

use flate2::bufread::GzDecoder;

/// The first bytes of a gzip member.
pub(crate) const MAGIC: [u8; 2] = [0x1f, 0x8b];

/// What is wrong with a gzip stream, carried inside the `io::Error` a read returns, so that a
/// line reader can add after which line it happened (`GzipProblem::of`).
#[derive(Debug)]
pub enum GzipProblem {
    /// The file ends inside a member: cut short by a copy or a download.
    Truncated,
    /// Bytes after a complete member that do not start another one, at this offset in the file.
    TrailingData { at: u64 },
}

impl GzipProblem {
    /// The problem, `after` (e.g. "after line 16", "" when not known) placed where it reads.
    pub fn describe(&self, after: &str) -> String {
        let after = if after.is_empty() { String::new() } else { format!(" {after}") };
        match self {
            GzipProblem::Truncated => {
                format!("truncated (unexpected end of the gzip stream){after}: is the copy complete?")
            }
            GzipProblem::TrailingData { at } => format!(
                "data after the end of the gzip stream at byte {at}{after}: not another gzip member (a file appended to the archive?)"
            ),
        }
    }
}

impl std::fmt::Display for GzipProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe(""))
    }
}

impl std::error::Error for GzipProblem {}

impl GzipProblem {
    /// The gzip problem an `io::Error` from a `Members` reader carries, if it is one.
    pub fn of(error: &io::Error) -> Option<&GzipProblem> {
        error.get_ref().and_then(|inner| inner.downcast_ref::<GzipProblem>())
    }

    fn into_io(self) -> io::Error {
        let kind = match self {
            GzipProblem::Truncated => io::ErrorKind::UnexpectedEof,
            GzipProblem::TrailingData { .. } => io::ErrorKind::InvalidData,
        };
        io::Error::new(kind, self)
    }
}

/// Counts the bytes taken from the compressed input, for the offset of trailing data.
struct Counted<R> {
    inner: R,
    consumed: u64,
}

impl<R: BufRead> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let len = available.len().min(buf.len());
        buf[..len].copy_from_slice(&available[..len]);
        self.consume(len);
        Ok(len)
    }
}

impl<R: BufRead> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.consumed += amt as u64;
        self.inner.consume(amt);
    }
}

/// The decompressed bytes of every member of a gzip stream, in order.
pub struct Members<R: BufRead> {
    /// `None` once the stream has ended (or failed).
    decoder: Option<GzDecoder<Counted<R>>>,
}

impl<R: BufRead> Members<R> {
    pub fn new(input: R) -> Self {
        Members { decoder: Some(GzDecoder::new(Counted { inner: input, consumed: 0 })) }
    }
}

impl<R: BufRead> Read for Members<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let Some(decoder) = &mut self.decoder else { return Ok(0) };
            match decoder.read(buf) {
                Ok(0) if !buf.is_empty() => {}
                Ok(read) => return Ok(read),
                // flate2 says a stream cut short as "unexpected end of file" (in a header or the
                // trailer) or "incomplete deflate stream" (in the data): both are a truncation.
                Err(error)
                    if error.kind() == io::ErrorKind::UnexpectedEof
                        || error.to_string().contains("incomplete deflate stream") =>
                {
                    self.decoder = None;
                    return Err(GzipProblem::Truncated.into_io());
                }
                Err(error) => return Err(error),
            }
            // The member has ended: the end of the file, another member, or something else.
            let mut input = self.decoder.take().map(GzDecoder::into_inner).expect("a decoder was there");
            let rest = input.fill_buf()?;
            if rest.is_empty() {
                return Ok(0);
            }
            if !(rest.starts_with(&MAGIC) || rest == &MAGIC[..1]) {
                return Err(GzipProblem::TrailingData { at: input.consumed }.into_io());
            }
            self.decoder = Some(GzDecoder::new(input));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::*;

    fn gzip(text: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(text).unwrap();
        encoder.finish().unwrap()
    }

    fn inflate(bytes: &[u8]) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        Members::new(bytes).read_to_end(&mut out).map(|_| out)
    }

    #[test]
    fn members_one_after_another_are_one_stream() {
        let mut both = gzip(b"one\n");
        both.extend(gzip(b"two\n"));
        assert_eq!(inflate(&both).unwrap(), b"one\ntwo\n");
    }

    #[test]
    fn a_stream_cut_anywhere_is_truncated() {
        let whole = gzip(&b"a line of a server log\n".repeat(200));
        for cut in [1, 5, 12, whole.len() / 2, whole.len() - 4, whole.len() - 1] {
            let error = inflate(&whole[..cut]).unwrap_err();
            assert!(matches!(GzipProblem::of(&error), Some(GzipProblem::Truncated)), "cut at {cut}: {error}");
        }
    }

    #[test]
    fn bytes_after_the_last_member_are_trailing_data_at_their_offset() {
        let member = gzip(b"one\n");
        let mut bytes = member.clone();
        bytes.extend(b"garbage\n");
        let error = inflate(&bytes).unwrap_err();
        match GzipProblem::of(&error) {
            Some(GzipProblem::TrailingData { at }) => assert_eq!(*at, member.len() as u64),
            other => panic!("{other:?}: {error}"),
        }
    }
}
