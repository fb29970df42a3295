//! The floor of the benchmark's job: the least any tool answering its question must do, and
//! nothing more (docs/performance.md; `bench/run.py --floor` runs it beside leasetrace).
//!
//! ```sh
//! cargo run --release --example floor -- target/bench/CASE/server.log target/bench/CASE/ledger.csv
//! ```
//!
//! Reads the log whole and finds its line ends (memchr), runs leasetrace's own literal prefilter
//! over it (the built-in rules' candidate search, `RuleSet::candidates`: the candidate regex's
//! literal prefixes and the byte search for the job words) and counts the lines it touches; reads
//! the ledger whole and splits every CSV row into cells (csv_core), counting rows and cells. No
//! timestamp is parsed, no line classified, no event kept: a candidate line is counted, not
//! checked against the rules, so its count may exceed the relevant lines (never fall short).
//!
//! Prints one JSON object with the counts; `bench/run.py` checks the line and row counts.

use leasetrace::ingest::log_rules::RuleSet;

const USAGE: &str = "usage: floor SERVER_LOG LEDGER_CSV";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(log), Some(ledger)) = (args.next(), args.next()) else { return Err(USAGE.into()) };

    let text = std::fs::read(&log)?;
    let lines = memchr::memchr_iter(b'\n', &text).count() + usize::from(!text.is_empty() && !text.ends_with(b"\n"));
    let rules = RuleSet::new(&[], true, &log)?;
    let mut search = rules.candidates(&text);
    let (mut candidate_lines, mut at) = (0usize, 0usize);
    while let Some(hit) = search.find_at(at) {
        // The line the hit starts on is a candidate; the search goes on from the next line.
        candidate_lines += 1;
        match memchr::memchr(b'\n', &text[hit..]) {
            Some(end) => at = hit + end + 1,
            None => break,
        }
        if at >= text.len() {
            break;
        }
    }
    drop(text);

    let csv = std::fs::read(&ledger)?;
    let mut reader = csv_core::Reader::new();
    let mut cell = [0u8; 4096];
    let (mut records, mut cells, mut input) = (0usize, 0usize, &csv[..]);
    loop {
        let (result, read, _) = reader.read_field(input, &mut cell);
        input = &input[read..];
        match result {
            csv_core::ReadFieldResult::InputEmpty if input.is_empty() => {
                // Ends the last record when the file does not end with a line break.
                let (result, _, _) = reader.read_field(&[], &mut cell);
                match result {
                    csv_core::ReadFieldResult::Field { record_end } => {
                        cells += 1;
                        records += usize::from(record_end);
                    }
                    csv_core::ReadFieldResult::End => break,
                    _ => {}
                }
            }
            csv_core::ReadFieldResult::InputEmpty => {}
            csv_core::ReadFieldResult::OutputFull => {
                return Err(format!("{ledger}: a cell over {} bytes", cell.len()).into());
            }
            csv_core::ReadFieldResult::Field { record_end } => {
                cells += 1;
                records += usize::from(record_end);
            }
            csv_core::ReadFieldResult::End => break,
        }
    }
    println!(
        "{{\"log_lines\": {lines}, \"candidate_lines\": {candidate_lines}, \"ledger_records\": {records}, \"ledger_cells\": {cells}}}"
    );
    Ok(())
}
