//! Progress bars for long inputs: one per source, on stderr, only for a person at a terminal.
//!
//! The report on stdout never depends on this module: bars are drawn to stderr alone, and nowhere
//! when stderr is not a terminal (a pipe, a file, CI) or `--quiet` is given, so a script sees no
//! bar and stdout is the same bytes whether bars are drawn or not.

use std::io::{IsTerminal, Read};
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Bytes read between two updates of a bar. Sources are read at GB/s in reads as small as 64 KiB;
/// one update (an atomic add and a clock read) per MiB keeps that cost off the reading path, and
/// the bar still moves smoothly.
const REPORT_EVERY: u64 = 1 << 20;

/// Whether, and where, sources show their progress. The default shows nothing, so library callers
/// and tests get no bars unless they ask.
#[derive(Debug, Clone, Default)]
pub struct Progress {
    multi: Option<MultiProgress>,
}

impl Progress {
    /// No bars at all.
    pub fn hidden() -> Self {
        Progress::default()
    }

    /// Bars that count but draw nowhere, whatever stderr is: for tests of what is counted.
    #[cfg(test)]
    pub(crate) fn counting() -> Self {
        Progress { multi: Some(MultiProgress::with_draw_target(ProgressDrawTarget::hidden())) }
    }

    /// Bars on stderr when it is a terminal and the user did not ask for quiet.
    pub fn on_stderr(quiet: bool) -> Self {
        if quiet || !std::io::stderr().is_terminal() {
            return Progress::hidden();
        }
        Progress { multi: Some(MultiProgress::with_draw_target(ProgressDrawTarget::stderr())) }
    }

    /// A bar for one source of `size` bytes (`None`: unknown, as for stdin or a pipe, which gets a
    /// spinner with the count instead), or `None` when progress is hidden, so that a quiet run
    /// does not even count.
    pub fn source(&self, name: &str, size: Option<u64>) -> Option<SourceBar> {
        let multi = self.multi.as_ref()?;
        let bar = match size {
            Some(total) => ProgressBar::new(total).with_style(
                ProgressStyle::with_template(
                    "{msg:>32!} {bar:30} {binary_bytes:>10} / {binary_total_bytes:<10} {binary_bytes_per_sec:>12}",
                )
                .expect("the template is valid"),
            ),
            None => ProgressBar::no_length().with_style(
                ProgressStyle::with_template("{msg:>32!} {spinner} {binary_bytes:>10} {binary_bytes_per_sec:>12}")
                    .expect("the template is valid"),
            ),
        };
        let bar = multi.add(bar.with_message(crate::terminal::visible(name).into_owned()));
        if size.is_none() {
            // A slow pipe may deliver less than REPORT_EVERY for a long time; the spinner shows
            // that leasetrace is still waiting rather than stuck.
            bar.enable_steady_tick(Duration::from_millis(120));
        }
        Some(SourceBar(bar))
    }

    /// A bar counting `what` (stream entries, keys) for a step of `leasetrace capture`, with its
    /// `total` when known (a spinner otherwise), or `None` when progress is hidden.
    pub fn items(&self, name: &str, what: &'static str, total: Option<u64>) -> Option<ItemBar> {
        let multi = self.multi.as_ref()?;
        let bar = match total {
            Some(total) => ProgressBar::new(total).with_style(
                ProgressStyle::with_template(&format!(
                    "{{msg:>32!}} {{bar:30}} {{human_pos:>10}} / {{human_len:<10}} {what}"
                ))
                .expect("the template is valid"),
            ),
            None => ProgressBar::no_length().with_style(
                ProgressStyle::with_template(&format!("{{msg:>32!}} {{spinner}} {{human_pos:>10}} {what}"))
                    .expect("the template is valid"),
            ),
        };
        let bar = multi.add(bar.with_message(crate::terminal::visible(name).into_owned()));
        bar.enable_steady_tick(Duration::from_millis(120));
        Some(ItemBar(bar))
    }
}

/// A bar of items (not bytes), cleared when dropped like `SourceBar`.
#[derive(Debug)]
pub struct ItemBar(ProgressBar);

impl ItemBar {
    pub fn add(&self, items: u64) {
        self.0.inc(items);
    }
}

impl Drop for ItemBar {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

/// One source's bar. It is cleared when dropped, on success, error or panic alike, so that no
/// half-drawn line is left above the report or an error message.
#[derive(Debug)]
pub struct SourceBar(ProgressBar);

impl SourceBar {
    /// The bytes counted so far.
    #[cfg(test)]
    pub(crate) fn position(&self) -> u64 {
        self.0.position()
    }

    /// Counts the bytes read through `inner` on this bar.
    pub fn count<R: Read>(&self, inner: R) -> CountingReader<R> {
        CountingReader { inner, bar: self.0.clone(), unreported: 0 }
    }
}

impl Drop for SourceBar {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

/// A reader that adds the bytes it passes on to a bar, in batches of `REPORT_EVERY`.
pub struct CountingReader<R> {
    inner: R,
    bar: ProgressBar,
    unreported: u64,
}

impl<R> CountingReader<R> {
    fn report(&mut self) {
        if self.unreported > 0 {
            // Readers of one file may overlap (a ledger read in two parts: the first reads a
            // little past where the second started), so a bar with a length stops at it.
            let room = self.bar.length().map_or(u64::MAX, |length| length.saturating_sub(self.bar.position()));
            self.bar.inc(self.unreported.min(room));
            self.unreported = 0;
        }
    }
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let read = self.inner.read(buf)?;
        self.unreported += read as u64;
        // At the end of the input the last partial batch is reported too, so the bar reaches its
        // total before it is cleared.
        if read == 0 || self.unreported >= REPORT_EVERY {
            self.report();
        }
        Ok(read)
    }
}

impl<R> Drop for CountingReader<R> {
    fn drop(&mut self) {
        // A parser that stops early (on an error) leaves its last partial batch unreported.
        self.report();
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Cursor, Write};

    use super::*;

    fn counting() -> Progress {
        Progress::counting()
    }

    fn counting_bar() -> SourceBar {
        counting().source("sample", Some(u64::MAX)).unwrap()
    }

    fn sample(len: usize) -> Vec<u8> {
        (0..len).map(|i| b"leasetrace\n"[i % 11]).collect()
    }

    #[test]
    fn counts_every_byte_read_including_the_last_partial_batch() {
        // Not a multiple of REPORT_EVERY or of the read size, so both the batching and the final
        // report are exercised.
        let data = sample(3 * (1 << 20) + 12_345);
        let bar = counting_bar();
        let mut reader = bar.count(Cursor::new(data.clone()));
        let mut out = Vec::new();
        let mut chunk = [0u8; 7_000];
        loop {
            let read = reader.read(&mut chunk).unwrap();
            if read == 0 {
                break;
            }
            out.extend_from_slice(&chunk[..read]);
        }
        assert_eq!(out, data);
        assert_eq!(bar.0.position(), data.len() as u64);
    }

    #[test]
    fn a_reader_dropped_before_the_end_reports_what_it_read() {
        let data = sample(2 * (1 << 20));
        let bar = counting_bar();
        let mut reader = bar.count(Cursor::new(data));
        let mut head = vec![0u8; 1000];
        reader.read_exact(&mut head).unwrap();
        assert_eq!(bar.0.position(), 0, "batched: nothing reported yet");
        drop(reader);
        assert_eq!(bar.0.position(), 1000);
    }

    #[test]
    fn readers_that_overlap_stop_the_bar_at_the_file_size() {
        let data = sample(3 * (1 << 20));
        let bar = counting().source("sample", Some(data.len() as u64)).unwrap();
        // The second half, and the first half read a block past the middle.
        let mut later = bar.count(Cursor::new(data[data.len() / 2..].to_vec()));
        std::io::copy(&mut later, &mut std::io::sink()).unwrap();
        let mut earlier = bar.count(Cursor::new(data[..data.len() / 2 + (1 << 20)].to_vec()));
        std::io::copy(&mut earlier, &mut std::io::sink()).unwrap();
        drop((later, earlier));
        assert_eq!(bar.0.position(), data.len() as u64);
    }

    #[test]
    fn through_gzip_the_count_is_the_compressed_size() {
        let data = sample(5 * (1 << 20) + 777);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("server.log.gz");
        let mut encoder =
            flate2::write::GzEncoder::new(std::fs::File::create(&path).unwrap(), flate2::Compression::fast());
        encoder.write_all(&data).unwrap();
        encoder.finish().unwrap();
        let compressed = std::fs::metadata(&path).unwrap().len();
        assert!(compressed < data.len() as u64);

        let (mut input, bar) = crate::ingest::open_counted(&path, &counting()).unwrap();
        let bar = bar.expect("progress is on");
        assert_eq!(bar.0.length(), Some(compressed), "the total is the file's size");
        let mut out = Vec::new();
        input.read_to_end(&mut out).unwrap();
        drop(input);
        assert_eq!(out, data, "decompressed as before");
        assert_eq!(bar.0.position(), compressed, "compressed bytes are counted, so the bar ends at its total");
    }

    #[test]
    fn hidden_progress_makes_no_bars() {
        assert!(Progress::hidden().source("server.log", Some(10)).is_none());
        assert!(Progress::on_stderr(true).source("server.log", None).is_none());
    }
}
