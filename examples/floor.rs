//! The floor of the benchmark's job: the least any tool answering its question must do, and
//! nothing more (docs/performance.md; `bench/run.py --floor` runs it beside leasetrace).
//!
//! ```sh
//! cargo run --release --example floor -- target/bench/CASE/server.log target/bench/CASE/ledger.csv
//! ```
//!
//! Reads the log in blocks of whole lines and finds its line ends (memchr), runs leasetrace's own
//! literal prefilter over it (the built-in rules' candidate search, `RuleSet::candidates`: the
//! candidate regex's literal prefixes and the byte search for the job words) and counts the lines
//! it touches; reads
//! the ledger in blocks and splits every CSV row into cells (csv_core), counting rows and cells. No
//! timestamp is parsed, no line classified, no event kept: a candidate line is counted, not
//! checked against the rules, so its count may exceed the relevant lines (never fall short).
//!
//! Prints one JSON object with the counts; `bench/run.py` checks the line and row counts.

use std::io::Read;

use leasetrace::ingest::log::rules::RuleSet;

const USAGE: &str = "usage: floor SERVER_LOG LEDGER_CSV";

/// The block size of the reads: big enough that a read call costs nothing beside the search.
const BLOCK: usize = 1 << 20;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(log), Some(ledger)) = (args.next(), args.next()) else { return Err(USAGE.into()) };
    let rules = RuleSet::new(&[], true, &log)?;
    let (lines, candidate_lines) = scan_log(&mut std::fs::File::open(&log)?, &rules)?;
    let (records, cells) = split_ledger(&mut std::fs::File::open(&ledger)?)?;
    println!(
        "{{\"log_lines\": {lines}, \"candidate_lines\": {candidate_lines}, \"ledger_records\": {records}, \"ledger_cells\": {cells}}}"
    );
    Ok(())
}

/// The log in blocks of whole lines (a line longer than a block grows the buffer): its lines and
/// the lines the rules' prefilter touches.
fn scan_log(file: &mut impl Read, rules: &RuleSet) -> std::io::Result<(usize, usize)> {
    let mut buffer = vec![0u8; BLOCK];
    let (mut kept, mut lines, mut candidates) = (0usize, 0usize, 0usize);
    loop {
        if kept == buffer.len() {
            buffer.resize(buffer.len() * 2, 0);
        }
        let read = file.read(&mut buffer[kept..])?;
        let filled = kept + read;
        // At the end of the file, the rest is the last line (without a line break).
        let end = if read == 0 {
            filled
        } else {
            let Some(last) = memchr::memrchr(b'\n', &buffer[..filled]) else {
                kept = filled;
                continue;
            };
            last + 1
        };
        let block = &buffer[..end];
        lines +=
            memchr::memchr_iter(b'\n', block).count() + usize::from(read == 0 && end > 0 && block[end - 1] != b'\n');
        let mut search = rules.candidates(block);
        let mut at = 0;
        while let Some(hit) = search.find_at(at) {
            // The line the hit starts on is a candidate; the search goes on from the next line.
            candidates += 1;
            match memchr::memchr(b'\n', &block[hit..]) {
                Some(line_end) if hit + line_end + 1 < block.len() => at = hit + line_end + 1,
                _ => break,
            }
        }
        if read == 0 {
            return Ok((lines, candidates));
        }
        buffer.copy_within(end..filled, 0);
        kept = filled - end;
    }
}

/// The ledger's records and cells, split by csv_core as the file is read.
fn split_ledger(file: &mut impl Read) -> std::io::Result<(usize, usize)> {
    let mut reader = csv_core::Reader::new();
    let (mut buffer, mut cell) = (vec![0u8; BLOCK], [0u8; 4096]);
    let (mut records, mut cells) = (0usize, 0usize);
    loop {
        let read = file.read(&mut buffer)?;
        let mut input = &buffer[..read];
        // An empty input tells csv_core the file ended: it is given one only at the end.
        while !input.is_empty() || read == 0 {
            let (result, used, _) = reader.read_field(input, &mut cell);
            input = &input[used..];
            match result {
                csv_core::ReadFieldResult::InputEmpty => break,
                // A cell longer than `cell` goes on in the next call: its bytes are not needed.
                csv_core::ReadFieldResult::OutputFull => {}
                csv_core::ReadFieldResult::Field { record_end } => {
                    cells += 1;
                    records += usize::from(record_end);
                }
                csv_core::ReadFieldResult::End => return Ok((records, cells)),
            }
        }
    }
}
