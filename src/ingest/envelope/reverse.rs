//! A newest-first export handed to its log reader from its last record to its first without
//! being held in memory: each record, as the reader needs it (its export line and span, its
//! envelope time, its instance, its message), is written to an anonymous temporary file (in
//! `TMPDIR`) in blocks of about 1 MiB as the export is read, and the blocks are read back from the
//! last, each one's records handed out last first. Memory is one block, whatever the export's size;
//! the export itself is read once, from its start, as any other (a file, gzip or a pipe), so its
//! envelope's reader keeps what it carries from line to line (logcli's common labels, a CRI
//! partial line, a record over several lines).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};

use crate::model::Moment;

/// What the log reader needs of a record (`unwrap::feed`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taken {
    pub line: u64,
    pub lines: u64,
    pub at: Option<Moment>,
    pub instance: Option<String>,
    pub message: String,
}

/// About how many bytes of records a block holds.
const BLOCK: usize = 1 << 20;

/// The records written so far, by block.
pub struct Spill {
    file: File,
    block: Vec<u8>,
    /// Where each block written starts in the file, and its length.
    blocks: Vec<(u64, usize)>,
    written: u64,
    /// The records of the block being handed out, last first (`pop`).
    current: Vec<Taken>,
}

impl Spill {
    /// An empty spill in the system's temporary folder (removed when it is dropped).
    pub fn new() -> std::io::Result<Spill> {
        Ok(Spill {
            file: tempfile::tempfile_in(std::env::temp_dir())?,
            block: Vec::with_capacity(BLOCK + (64 << 10)),
            blocks: Vec::new(),
            written: 0,
            current: Vec::new(),
        })
    }

    pub fn push(&mut self, taken: &Taken) -> std::io::Result<()> {
        let block = &mut self.block;
        block.extend_from_slice(&taken.line.to_le_bytes());
        block.extend_from_slice(&taken.lines.to_le_bytes());
        match taken.at {
            Some(at) => {
                block.push(1);
                block.extend_from_slice(&at.nanos().to_le_bytes());
            }
            None => block.push(0),
        }
        match &taken.instance {
            Some(instance) => {
                block.push(1);
                put_text(block, instance);
            }
            None => block.push(0),
        }
        put_text(block, &taken.message);
        if self.block.len() >= BLOCK {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.block.is_empty() {
            return Ok(());
        }
        self.file.seek(SeekFrom::Start(self.written))?;
        self.file.write_all(&self.block)?;
        self.blocks.push((self.written, self.block.len()));
        self.written += self.block.len() as u64;
        self.block.clear();
        Ok(())
    }

    /// The next record from the end: the last pushed first. `None` when all were handed out.
    pub fn pop(&mut self) -> std::io::Result<Option<Taken>> {
        if self.current.is_empty() {
            self.flush()?;
            let Some((start, length)) = self.blocks.pop() else { return Ok(None) };
            let mut bytes = std::mem::take(&mut self.block);
            bytes.resize(length, 0);
            self.file.seek(SeekFrom::Start(start))?;
            self.file.read_exact(&mut bytes)?;
            self.current = decode(&bytes)?;
            bytes.clear();
            self.block = bytes;
        }
        Ok(self.current.pop())
    }
}

fn put_text(block: &mut Vec<u8>, text: &str) {
    // A message is at most `--max-line-bytes` (1 GiB at most): its length fits 32 bits.
    let length = u32::try_from(text.len()).unwrap_or(u32::MAX);
    block.extend_from_slice(&length.to_le_bytes());
    block.extend_from_slice(&text.as_bytes()[..length as usize]);
}

/// The records of one block, in the order they were pushed.
fn decode(mut bytes: &[u8]) -> std::io::Result<Vec<Taken>> {
    let broken = || std::io::Error::new(std::io::ErrorKind::InvalidData, "the temporary file of records is damaged");
    let take = |count: usize, bytes: &mut &[u8]| -> std::io::Result<Vec<u8>> {
        if bytes.len() < count {
            return Err(broken());
        }
        let (head, rest) = bytes.split_at(count);
        *bytes = rest;
        Ok(head.to_vec())
    };
    let number = |raw: Vec<u8>| u64::from_le_bytes(raw.try_into().unwrap_or([0; 8]));
    let mut records = Vec::new();
    while !bytes.is_empty() {
        let line = number(take(8, &mut bytes)?);
        let lines = number(take(8, &mut bytes)?);
        let at = match take(1, &mut bytes)?[0] {
            0 => None,
            _ => Some(Moment::from_nanos(number(take(8, &mut bytes)?).cast_signed())),
        };
        let text = |bytes: &mut &[u8]| -> std::io::Result<String> {
            let length = u32::from_le_bytes(take(4, bytes)?.try_into().unwrap_or([0; 4]));
            String::from_utf8(take(length as usize, bytes)?).map_err(|_| broken())
        };
        let instance = match take(1, &mut bytes)?[0] {
            0 => None,
            _ => Some(text(&mut bytes)?),
        };
        let message = text(&mut bytes)?;
        records.push(Taken { line, lines, at, instance, message });
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_come_back_last_first_across_blocks() {
        let mut spill = Spill::new().unwrap();
        let record = |n: u64| Taken {
            line: n + 1,
            lines: 1 + n % 3,
            at: (!n.is_multiple_of(5)).then(|| Moment::from_nanos(i64::try_from(n).unwrap() * 1_000_000 - 7)),
            instance: n.is_multiple_of(2).then(|| format!("pod=web-{n}")),
            message: format!(
                "2026-10-07 09:33:00.{:03} INFO job active id={n} {}",
                n % 1000,
                "é".repeat((n % 17) as usize)
            ),
        };
        // Enough for a few blocks.
        let count = 40_000;
        for n in 0..count {
            spill.push(&record(n)).unwrap();
        }
        assert!(spill.blocks.len() >= 2, "{} blocks", spill.blocks.len());
        for n in (0..count).rev() {
            assert_eq!(spill.pop().unwrap(), Some(record(n)));
        }
        assert_eq!(spill.pop().unwrap(), None);
    }
}
