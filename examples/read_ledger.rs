//! Reads one ledger file and prints how long that took: ingest alone, without the detectors that
//! `analyze` runs afterwards (docs/performance.md).
//!
//! `cargo run --release --example read_ledger -- /tmp/ledgeronly/ledger.csv`

use leasetrace::ingest::{SourceKind, SourceSpec, read_sources};
use leasetrace::progress::Progress;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: read_ledger LEDGER")?;
    let size = std::fs::metadata(&path)?.len();
    let spec = SourceSpec::new(SourceKind::Ledger, path.into(), Some(chrono_tz::UTC), "--ledger-tz".into());
    let started = std::time::Instant::now();
    let (events, summaries) = read_sources(&[spec], &Progress::hidden())?;
    let seconds = started.elapsed().as_secs_f64();
    #[allow(clippy::cast_precision_loss)]
    let megabytes = size as f64 / 1e6;
    println!(
        "{} events from {} lines, {megabytes:.0} MB in {seconds:.3} s: {:.0} MB/s",
        events.len(),
        summaries[0].lines,
        megabytes / seconds
    );
    Ok(())
}
