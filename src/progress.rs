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
    /// The width of the terminal the bars are drawn on: each bar's line is laid out to fit it
    /// (`Line::fit`), as a line longer than the terminal is wrapped by it and every redraw then
    /// leaves a line behind.
    width: u16,
}

impl Progress {
    /// No bars at all.
    pub fn hidden() -> Self {
        Progress::default()
    }

    /// Bars that count but draw nowhere, whatever stderr is: for tests of what is counted.
    #[cfg(test)]
    pub(crate) fn counting() -> Self {
        Progress { multi: Some(MultiProgress::with_draw_target(ProgressDrawTarget::hidden())), width: 120 }
    }

    /// Bars on stderr when it is a terminal and the user did not ask for quiet.
    pub fn on_stderr(quiet: bool) -> Self {
        if quiet || !std::io::stderr().is_terminal() {
            return Progress::hidden();
        }
        Progress {
            multi: Some(MultiProgress::with_draw_target(ProgressDrawTarget::stderr())),
            width: crate::terminal::stderr_width(),
        }
    }

    /// A bar for one source of `size` bytes (`None`: unknown, as for stdin or a pipe, which gets a
    /// spinner with the count instead), or `None` when progress is hidden, so that a quiet run
    /// does not even count.
    pub fn source(&self, name: &str, size: Option<u64>) -> Option<SourceBar> {
        let multi = self.multi.as_ref()?;
        let (bar, line) = match size {
            Some(total) => (
                ProgressBar::new(total),
                Line::fit(
                    self.width,
                    name,
                    true,
                    &[
                        (" {binary_bytes:>10} / {binary_total_bytes:<10} {binary_bytes_per_sec:>12}", 40),
                        (" {binary_bytes:>10} / {binary_total_bytes:<10}", 26),
                        (" {percent:>3}%", 5),
                    ],
                ),
            ),
            None => (
                ProgressBar::no_length(),
                Line::fit(
                    self.width,
                    name,
                    false,
                    &[
                        (" {spinner} {binary_bytes:>10} {binary_bytes_per_sec:>12}", 28),
                        (" {spinner} {binary_bytes:>10}", 14),
                        (" {spinner}", 2),
                    ],
                ),
            ),
        };
        let bar = multi.add(line.apply(bar, name));
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
        let counted = format!(" {{human_pos:>10}} / {{human_len:<10}} {what}");
        let spun = format!(" {{spinner}} {{human_pos:>10}} {what}");
        // A count may pass its padding (`1,234,567,890`): room for 13 columns each.
        let said = crate::render::layout::width(what) + 1;
        let (bar, line) = match total {
            Some(total) => (
                ProgressBar::new(total),
                Line::fit(self.width, name, true, &[(&counted, 31 + said), (" {percent:>3}%", 5)]),
            ),
            None => {
                (ProgressBar::no_length(), Line::fit(self.width, name, false, &[(&spun, 17 + said), (" {spinner}", 2)]))
            }
        };
        let bar = multi.add(line.apply(bar, name));
        bar.enable_steady_tick(Duration::from_millis(120));
        Some(ItemBar(bar))
    }
}

/// A bar's line for a terminal of a given width: the source's name, right-aligned in at most 32
/// columns, a bar of 10 to 30 (when there is a length) in what the name leaves, then the richest
/// of the tails offered that leaves the name room for its file name (at least 12 columns, at most
/// 32): a file name cut short names nothing, the speed can go. Below that, the name and the
/// poorest tail share the width. One column is left free: a line that fills the last column makes
/// some terminals wrap.
#[derive(Debug, PartialEq, Eq)]
struct Line {
    template: String,
    name: usize,
}

impl Line {
    const NAME: usize = 32;
    const NAME_AT_LEAST: usize = 12;
    const BAR: usize = 30;
    const BAR_AT_LEAST: usize = 10;

    /// `tails`: each a template piece and the most columns it takes, richest first.
    fn fit(width: u16, name: &str, bar: bool, tails: &[(&str, usize)]) -> Line {
        let room = usize::from(width).saturating_sub(1);
        let least_bar = if bar { Self::BAR_AT_LEAST + 1 } else { 0 };
        let file_name = crate::render::layout::shorten_path(&crate::terminal::visible(name), 0).chars().count();
        let wanted = file_name.clamp(Self::NAME_AT_LEAST, Self::NAME);
        let chosen = tails
            .iter()
            .find(|(_, taken)| room.saturating_sub(taken + least_bar) >= wanted)
            .or(tails.last())
            .copied()
            .unwrap_or(("", 0));
        let (tail, taken) = chosen;
        let left = room.saturating_sub(taken);
        let (name, bar_width) = if bar && left >= least_bar + Self::NAME_AT_LEAST {
            // The name first (a file name cut short names nothing), the bar what is left.
            let bar_width = (left - 1).saturating_sub(Self::NAME).clamp(Self::BAR_AT_LEAST, Self::BAR);
            ((left - 1 - bar_width).min(Self::NAME), bar_width)
        } else {
            (left.min(Self::NAME), 0)
        };
        let name = name.max(1);
        let bar = if bar_width > 0 { format!(" {{bar:{bar_width}}}") } else { String::new() };
        Line { template: format!("{{msg:>{name}!}}{bar}{tail}"), name }
    }

    /// `bar` drawn this way, named `name` (a path loses its leading folders first).
    fn apply(&self, bar: ProgressBar, name: &str) -> ProgressBar {
        let shown = crate::terminal::visible(name);
        let shown = crate::render::layout::shorten_path(&shown, self.name).into_owned();
        bar.with_style(ProgressStyle::with_template(&self.template).expect("the template is valid")).with_message(shown)
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

impl<R> CountingReader<R> {
    /// Counts bytes that were read without passing through this reader (moved from a pipe into a
    /// file by the kernel, `splice`).
    pub fn tally(&mut self, bytes: u64) {
        self.unreported += bytes;
        if self.unreported >= REPORT_EVERY {
            self.report();
        }
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

    /// A terminal of `width` columns that keeps every line drawn on it.
    #[derive(Debug)]
    struct Recorder {
        width: u16,
        lines: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    }

    impl indicatif::TermLike for Recorder {
        fn width(&self) -> u16 {
            self.width
        }
        fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> std::io::Result<()> {
            self.write_str(s)
        }
        fn write_str(&self, s: &str) -> std::io::Result<()> {
            if !s.is_empty() {
                self.lines.lock().unwrap().push(s.to_string());
            }
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            Ok(())
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// What the bars of a source and of a capture step draw on a terminal of `width` columns.
    fn drawn(width: u16, name: &str) -> Vec<String> {
        let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let term = Recorder { width, lines: lines.clone() };
        let progress = Progress {
            multi: Some(MultiProgress::with_draw_target(ProgressDrawTarget::term_like(Box::new(term)))),
            width,
        };
        for size in [Some(5 * (1 << 30)), None] {
            let bar = progress.source(name, size).unwrap();
            bar.0.inc(1_234_567_890);
            bar.0.set_length(size.unwrap_or(1_234_567_890).max(1_234_567_890));
            bar.0.force_draw();
            drop(bar);
        }
        for total in [Some(2_000_000_000), None] {
            let bar = progress.items(name, "stream entries", total).unwrap();
            bar.add(1_999_999_999);
            bar.0.force_draw();
        }
        let drawn = lines.lock().unwrap().clone();
        drawn.iter().flat_map(|text| text.lines().map(str::to_string)).collect()
    }

    #[test]
    fn a_bar_fits_the_terminal_it_is_drawn_on() {
        let name = "/var/incidents/2026-10-07/exports/pr-review/server-api-1.log";
        for width in [200, 120, 100, 80, 60, 40, 30, 20, 12] {
            let lines = drawn(width, name);
            assert!(!lines.is_empty(), "nothing drawn at {width}");
            for line in &lines {
                let columns = crate::render::layout::width(line);
                assert!(columns < usize::from(width), "{columns} columns at {width}: {line:?}");
            }
            if width >= 40 {
                // Lines of spaces are indicatif's own, blanking what a bar drew before.
                let bars = lines.iter().filter(|line| !line.trim().is_empty());
                assert!(bars.clone().all(|line| line.contains("server-api-1.log")), "the file name: {lines:?}");
            }
            if width >= 80 {
                assert!(lines.iter().any(|line| line.contains("GiB / ")), "the counts at {width}: {lines:?}");
            }
        }
        // A long file name keeps its room: the speed goes first.
        for width in [120, 80, 50] {
            let lines = drawn(width, "/var/log/pods/review-bot-7d9f8c6b5-8nbbd.log");
            let bars = lines.iter().filter(|line| !line.trim().is_empty());
            assert!(bars.clone().all(|line| line.contains("…/review-bot-7d9f8c6b5-8nbbd.log")), "{width}: {lines:?}");
            assert!(lines.iter().all(|line| crate::render::layout::width(line) < usize::from(width)), "{lines:?}");
        }
    }

    #[test]
    fn hidden_progress_makes_no_bars() {
        assert!(Progress::hidden().source("server.log", Some(10)).is_none());
        assert!(Progress::on_stderr(true).source("server.log", None).is_none());
    }
}
