//! Reads one source and prints how long that took: ingest alone, without sorting, the detectors or
//! a report (docs/performance.md; `bench/run.py --split` runs it for the issue's ingest targets).
//!
//! ```sh
//! cargo run --release --example read_source -- ledger target/bench/CASE/ledger.csv
//! cargo run --release --example read_source -- log target/bench/CASE/server.log Asia/Seoul
//! ```
//!
//! Prints one JSON object: the kind, events, lines, bytes, seconds and MB/s.

use leasetrace::ingest::{SourceKind, SourceSpec, read_sources};
use leasetrace::progress::Progress;

const USAGE: &str = "usage: read_source KIND PATH [ZONE]  (KIND: ledger, log, bullmq-events, bullmq-jobs; ZONE: the IANA zone of times written without an offset, UTC unless given)";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(kind), Some(path)) = (args.next(), args.next()) else { return Err(USAGE.into()) };
    let kind = SourceKind::from_name(&kind).ok_or(USAGE)?;
    let zone: chrono_tz::Tz = args.next().map_or(Ok(chrono_tz::UTC), |zone| zone.parse()).map_err(|_| USAGE)?;
    let size = std::fs::metadata(&path)?.len();
    let spec = SourceSpec::new(kind, path.into(), Some(zone), "ZONE (the third argument)".into());
    let started = std::time::Instant::now();
    let (events, summaries) = read_sources(&[spec], &Progress::hidden())?;
    let seconds = started.elapsed().as_secs_f64();
    #[allow(clippy::cast_precision_loss)]
    let megabytes = size as f64 / 1e6;
    println!(
        "{{\"kind\": \"{}\", \"events\": {}, \"lines\": {}, \"bytes\": {size}, \"seconds\": {seconds:.3}, \"mb_s\": {:.0}}}",
        kind.name(),
        events.len(),
        summaries[0].lines,
        megabytes / seconds
    );
    Ok(())
}
