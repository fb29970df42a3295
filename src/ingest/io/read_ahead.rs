//! A compressed source decompressed on a thread of its own while its reader parses: the source
//! is read at the pace of the slower of the two, not of both one after the other.

use std::io::{BufRead, Read};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, sync_channel};

/// Bytes the decompressing thread reads into a block before handing it over.
const BLOCK: usize = 1 << 20;
/// Blocks handed over and not yet read: how far decompression may run ahead.
const AHEAD: usize = 4;

/// What the decompressing thread hands over: a block and how many of its bytes are the input's
/// (0: the input has ended), or the input's error.
type Filled = std::io::Result<(Vec<u8>, usize)>;

/// The input of `ReadAhead::new`, read on its own thread, a block at a time.
pub struct ReadAhead {
    filled: Receiver<Filled>,
    /// Blocks read, sent back to be filled again (no allocation, no zeroing per block).
    empty: SyncSender<Vec<u8>>,
    block: Vec<u8>,
    len: usize,
    at: usize,
    ended: bool,
}

impl ReadAhead {
    pub fn new(mut input: impl Read + Send + 'static) -> ReadAhead {
        let (filled_tx, filled) = sync_channel::<Filled>(AHEAD);
        let (empty, empty_rx) = sync_channel::<Vec<u8>>(AHEAD + 2);
        // Not joined: it ends at the end of the input, or as soon as the reader is dropped (its
        // next hand-over fails).
        std::thread::spawn(move || {
            loop {
                let mut block = match empty_rx.try_recv() {
                    Ok(block) if block.len() == BLOCK => block,
                    Ok(_) | Err(TryRecvError::Empty | TryRecvError::Disconnected) => vec![0; BLOCK],
                };
                let (len, error) = fill(&mut input, &mut block);
                // The bytes read before an error come first, as they would from the input itself.
                if len > 0 && filled_tx.send(Ok((block, len))).is_err() {
                    return;
                }
                if len == 0 || error.is_some() {
                    let _ = filled_tx.send(error.map_or(Ok((Vec::new(), 0)), Err));
                    return;
                }
            }
        });
        ReadAhead { filled, empty, block: Vec::new(), len: 0, at: 0, ended: false }
    }
}

/// Reads until `block` is full or the input ends or fails: how many bytes were read, and the
/// error that stopped it.
pub(crate) fn fill(input: &mut impl Read, block: &mut [u8]) -> (usize, Option<std::io::Error>) {
    let mut len = 0;
    while len < block.len() {
        match input.read(&mut block[len..]) {
            Ok(0) => break,
            Ok(read) => len += read,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return (len, Some(error)),
        }
    }
    (len, None)
}

impl Read for ReadAhead {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        crate::ingest::io::lines::read_through_buffer(self, out)
    }
}

impl BufRead for ReadAhead {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        while self.at == self.len && !self.ended {
            match self.filled.recv() {
                Ok(Ok((_, 0))) => self.ended = true,
                Ok(Ok((block, len))) => {
                    let read = std::mem::replace(&mut self.block, block);
                    if !read.is_empty() {
                        // Full when the thread has ended or has blocks enough: then dropped.
                        let _ = self.empty.try_send(read);
                    }
                    (self.len, self.at) = (len, 0);
                }
                Ok(Err(error)) => {
                    self.ended = true;
                    return Err(error);
                }
                // The thread ended without saying the input had (it panicked).
                Err(_) => {
                    self.ended = true;
                    return Err(std::io::Error::other("the decompressing thread stopped before the end of the input"));
                }
            }
        }
        Ok(&self.block[self.at..self.len])
    }

    fn consume(&mut self, count: usize) {
        self.at = (self.at + count).min(self.len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::ingest::io::chunks::tests::Trickle;

    fn text(len: usize) -> Vec<u8> {
        (0..len).map(|i| u8::try_from(i * 7 % 251).unwrap()).collect()
    }

    #[test]
    fn the_input_comes_through_whole_and_in_order_across_many_blocks() {
        for (len, step) in [(0, 1), (1, 1), (BLOCK, 4096), (BLOCK * 9 + 17, 65_536), (BLOCK * 2 + 1, BLOCK * 3)] {
            let mut read = Vec::new();
            ReadAhead::new(Trickle { text: text(len), at: 0, step, error: None }).read_to_end(&mut read).unwrap();
            assert!(read == text(len), "{len} bytes, read {step} at a time");
        }
        // Read a line at a time, through `BufRead`.
        let lines: Vec<u8> = (0..300_000).flat_map(|i| format!("line {i}\n").into_bytes()).collect();
        let reader = ReadAhead::new(Trickle { text: lines.clone(), at: 0, step: 10_000, error: None });
        let read: Vec<String> = reader.lines().map(Result::unwrap).collect();
        assert_eq!(read.len(), 300_000);
        assert_eq!(read[299_999], "line 299999");
    }

    #[test]
    fn an_error_of_the_input_reaches_the_reader_after_the_bytes_before_it() {
        let len = BLOCK * 2 + 5;
        let input = Trickle { text: text(len), at: 0, step: 100_000, error: Some(std::io::ErrorKind::InvalidData) };
        let mut reader = ReadAhead::new(input);
        let mut read = Vec::new();
        let error = reader.read_to_end(&mut read).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidData);
        assert!(read == text(len), "every byte before the error, in order");
    }

    #[test]
    fn dropping_the_reader_early_ends_the_thread() {
        // An endless input: the thread can only end because the reader is gone.
        struct Endless(std::sync::Arc<std::sync::atomic::AtomicBool>);
        impl Read for Endless {
            fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
                out.fill(b'x');
                Ok(out.len())
            }
        }
        impl Drop for Endless {
            fn drop(&mut self) {
                self.0.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let dropped = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut reader = ReadAhead::new(Endless(dropped.clone()));
        assert_eq!(reader.fill_buf().unwrap()[0], b'x');
        drop(reader);
        let start = std::time::Instant::now();
        while !dropped.load(std::sync::atomic::Ordering::SeqCst) {
            assert!(start.elapsed().as_secs() < 10, "the thread is still reading");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}
