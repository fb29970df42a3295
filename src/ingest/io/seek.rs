//! A read window that costs the window: the part of a plain, time-ordered file that
//! `--since`/`--until` (widened by the read margin) needs, found by time instead of read to.
//!
//! A binary search over byte offsets: each probe resyncs to the next line start and reads the
//! time of the first line there that has one, with the time parsing of the source's own reader
//! (`LineTime`: its format, its zone). Lines without a time (a stack trace, a continuation) are
//! passed over; a probe that finds none before the search's upper bound narrows the search.
//!
//! Nothing here trusts the order it is told about. A local time that a fall-back makes happen
//! twice has two instants (`earliest`, `latest`): the start is a line whose *latest* instant is
//! before the window, the end a line whose *earliest* one is after it, so a repeated hour can only
//! make more be read. Lines may be out of order by up to `TOLERANCE_S` (threads sharing a log, a
//! logger's buffer): the start is sought that much before the window and the end that much after
//! it. Every probe's lines (a block of them) are checked for order, against each other and against
//! the other probes', and the reader checks every event it reads (`check_order`); a file found
//! out of order by more than the tolerance is read whole, and the report says so. A file out of
//! order only inside the bytes never read cannot be told: the report says which bytes those are
//! and how the order was checked.
//!
//! Formats whose records cannot be resynced from a byte offset (a CSV ledger, whose quoted cells
//! may hold line ends), compressed files and pipes are read through (`not_sought`).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use crate::model::Moment;

/// How far out of order (seconds) lines may be and still be found by the seek: the start is
/// sought this much before the read window and the end this much after it.
pub const TOLERANCE_S: i64 = 300;

const TOLERANCE_NS: i64 = TOLERANCE_S * 1_000_000_000;

/// Files smaller than this are read whole: the search would save less than it costs.
pub const SEEK_AT_LEAST: u64 = 1 << 20;

/// What a probe reads at once, and the narrowest range the search splits.
const BLOCK: usize = 64 << 10;

/// What a probe reads at a time.
const PROBE_READ: usize = 8 << 10;

/// How far past its offset a probe looks for a line with a time before it gives up.
const PROBE_REACH: u64 = 4 << 20;

/// The evenly spaced places the whole file's order is checked at, besides the search's probes.
const SURVEY: u64 = 32;

/// The earliest and latest instants a line's time can be (equal unless its local time happens
/// twice), or `None` for a line without one.
pub type LineTime<'a> = &'a dyn Fn(&[u8]) -> Option<(Moment, Moment)>;

/// The part of the file to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sought {
    /// The first byte read: a line start with a time before the window (or the text's start).
    pub from: u64,
    /// The byte after the last read: the start of a line after the window, or the file's end.
    pub to: u64,
    pub size: u64,
    /// Bytes the search read (its probes).
    pub probed_bytes: u64,
    /// Lines whose times the probes compared, and at how many places.
    pub lines_checked: u64,
    pub probes: u64,
}

/// What the search found: a part to read, or why the whole file must be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    Part(Sought),
    Whole(String),
}

/// A probe's first line with a time: where it starts, and its instants in nanoseconds.
#[derive(Debug, Clone, Copy)]
struct Probe {
    offset: u64,
    earliest: i64,
    latest: i64,
}

struct Prober<'a> {
    file: File,
    size: u64,
    text_start: u64,
    line_time: LineTime<'a>,
    bytes: u64,
    probes: u64,
    /// Every line with a time the probes read: (offset, earliest, latest).
    seen: Vec<(u64, i64, i64)>,
}

impl Prober<'_> {
    /// The first line with a time that starts at or after `at` (at a line start: after the first
    /// `\n` at or after `at - 1`) and before `limit`, recording the times of the lines in the
    /// block read there for the order check. `Err`: a line end this module cannot follow.
    fn probe(&mut self, at: u64, limit: u64) -> std::io::Result<Result<Option<Probe>, String>> {
        self.probes += 1;
        let start = if at <= self.text_start { self.text_start } else { at - 1 };
        self.file.seek(SeekFrom::Start(start))?;
        let mut buffer = Vec::with_capacity(PROBE_READ);
        let mut position = start;
        let mut synced = at <= self.text_start;
        let mut first: Option<Probe> = None;
        let mut lines_after_first = 0;
        loop {
            let before = buffer.len();
            buffer.resize(before + PROBE_READ, 0);
            let read = (&mut self.file).take(PROBE_READ as u64).read(&mut buffer[before..])?;
            buffer.truncate(before + read);
            self.bytes += read as u64;
            let at_end = read == 0;
            let mut used = 0;
            while let Some(newline) = memchr::memchr(b'\n', &buffer[used..]) {
                let line = &buffer[used..used + newline];
                let line_start = position + used as u64;
                used += newline + 1;
                if !synced {
                    synced = true;
                    continue;
                }
                if line_start >= limit && first.is_none() {
                    return Ok(Ok(None));
                }
                if let Some(lone) = lone_cr(line) {
                    return Ok(Err(format!("a lone carriage return ends a line at byte {}", line_start + lone as u64)));
                }
                if let Some((earliest, latest)) = (self.line_time)(line) {
                    let (earliest, latest) = (earliest.nanos(), latest.nanos());
                    self.seen.push((line_start, earliest, latest));
                    if first.is_none() {
                        first = Some(Probe { offset: line_start, earliest, latest });
                    } else {
                        lines_after_first += 1;
                    }
                }
            }
            if first.is_some() && (lines_after_first >= 16 || at_end) {
                return Ok(Ok(first));
            }
            if at_end {
                // The last line, without a line end.
                let line = &buffer[used..];
                let line_start = position + used as u64;
                if synced
                    && !line.is_empty()
                    && line_start < limit
                    && let Some((earliest, latest)) = (self.line_time)(line)
                {
                    let (earliest, latest) = (earliest.nanos(), latest.nanos());
                    self.seen.push((line_start, earliest, latest));
                    return Ok(Ok(Some(Probe { offset: line_start, earliest, latest })));
                }
                return Ok(Ok(None));
            }
            buffer.drain(..used);
            position += used as u64;
            if position >= limit || position - start > PROBE_REACH {
                return Ok(Ok(None));
            }
        }
    }
}

/// Where a lone `\r` (not before a `\n`) is in `line`, which has no `\n`.
fn lone_cr(line: &[u8]) -> Option<usize> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    memchr::memchr(b'\r', line)
}

/// Seeks the part of the file at `path` that the window `from ..= to` (instants in nanoseconds,
/// `None`: open on that side) needs, allowing `TOLERANCE_S` out of order.
pub fn plan(
    path: &Path,
    text_start: u64,
    from: Option<Moment>,
    to: Option<Moment>,
    line_time: LineTime<'_>,
) -> std::io::Result<Plan> {
    let file = File::open(path)?;
    let size = file.metadata()?.len();
    let mut prober = Prober { file, size, text_start, line_time, bytes: 0, probes: 0, seen: Vec::new() };
    // A survey of the whole file first: two logs appended one after the other go back in time
    // where the search may never look.
    for place in 0..SURVEY {
        let at = text_start + (size - text_start.min(size)) / SURVEY * place;
        if let Err(why) = prober.probe(at, size)? {
            return Ok(Plan::Whole(why));
        }
    }
    if let Some(why) = out_of_order(&mut prober.seen) {
        return Ok(Plan::Whole(why));
    }
    let mut start = text_start;
    if let Some(from) = from {
        let mut target = from.nanos().saturating_sub(TOLERANCE_NS);
        // A start inside a repeated hour would leave the reader unable to tell its lines' pass
        // from the lines before them: sought again before the hour, at most twice.
        let mut tries = 0;
        loop {
            start = match search_start(&mut prober, target)? {
                Ok(start) => start,
                Err(why) => return Ok(Plan::Whole(why)),
            };
            if start <= text_start {
                break;
            }
            let probe = match prober.probe(start, size)? {
                Ok(Some(probe)) => probe,
                Ok(None) => break,
                Err(why) => return Ok(Plan::Whole(why)),
            };
            if probe.earliest == probe.latest {
                break;
            }
            tries += 1;
            if tries > 2 {
                return Ok(Plan::Whole(
                    "the window starts among repeated hours (clock changes) too close together".into(),
                ));
            }
            target = probe.earliest.saturating_sub(3600 * 1_000_000_000 + TOLERANCE_NS);
        }
    }
    let end = match to {
        None => size,
        Some(to) => match search_end(&mut prober, start, to.nanos().saturating_add(TOLERANCE_NS))? {
            Ok(end) => end,
            Err(why) => return Ok(Plan::Whole(why)),
        },
    };
    if let Some(why) = out_of_order(&mut prober.seen) {
        return Ok(Plan::Whole(why));
    }
    Ok(Plan::Part(Sought {
        from: start,
        to: end.max(start),
        size,
        probed_bytes: prober.bytes,
        lines_checked: prober.seen.len() as u64,
        probes: prober.probes,
    }))
}

/// The last line start found whose latest instant is before `target` (the text's start if none).
fn search_start(prober: &mut Prober<'_>, target: i64) -> std::io::Result<Result<u64, String>> {
    let (mut low, mut high) = (prober.text_start, prober.size);
    while high - low > BLOCK as u64 {
        let middle = low + (high - low) / 2;
        match prober.probe(middle, high)? {
            Err(why) => return Ok(Err(why)),
            Ok(Some(probe)) if probe.offset < high && probe.latest < target => low = probe.offset,
            Ok(_) => high = middle,
        }
    }
    Ok(Ok(low))
}

/// The first line start found after `start` whose earliest instant is after `target` (the file's
/// end if none).
fn search_end(prober: &mut Prober<'_>, start: u64, target: i64) -> std::io::Result<Result<u64, String>> {
    let (mut low, mut high, mut end) = (start, prober.size, prober.size);
    while high - low > BLOCK as u64 {
        let middle = low + (high - low) / 2;
        match prober.probe(middle, high)? {
            Err(why) => return Ok(Err(why)),
            Ok(Some(probe)) if probe.offset < high => {
                if probe.earliest > target {
                    end = probe.offset;
                    high = middle;
                } else {
                    low = probe.offset + 1;
                }
            }
            Ok(_) => high = middle,
        }
    }
    Ok(Ok(end))
}

/// Why the lines the probes read are out of order by more than the tolerance, if they are: a
/// line's latest instant before the earliest of a line above it, less the tolerance.
fn out_of_order(seen: &mut [(u64, i64, i64)]) -> Option<String> {
    seen.sort_unstable_by_key(|&(offset, ..)| offset);
    let mut highest: Option<(u64, i64)> = None;
    for &(offset, earliest, latest) in seen.iter() {
        if let Some((at, before)) = highest
            && latest < before.saturating_sub(TOLERANCE_NS)
        {
            return Some(format!(
                "the line at byte {offset} is {} s before the line at byte {at}, more than the {TOLERANCE_S} s out of order a seek allows",
                (before - latest) / 1_000_000_000
            ));
        }
        if highest.is_none_or(|(_, before)| earliest > before) {
            highest = Some((offset, earliest));
        }
    }
    None
}

/// Checks the moments of the events read from a sought part, in the order of their lines (each
/// with its line's moment), against each other and the part's bounds: `Err` with why when one is
/// out of order by more than the tolerance.
pub fn check_order(moments: impl Iterator<Item = Moment>) -> Result<(), String> {
    let mut highest: Option<i64> = None;
    for moment in moments {
        let at = moment.nanos();
        if let Some(before) = highest
            && at < before.saturating_sub(TOLERANCE_NS)
        {
            return Err(format!(
                "an event read is {} s before one read above it, more than the {TOLERANCE_S} s out of order a seek allows",
                (before - at) / 1_000_000_000
            ));
        }
        highest = Some(highest.map_or(at, |before| before.max(at)));
    }
    Ok(())
}

/// What the report says of a sought part (`InputSummary::notes`, after the source's path).
#[allow(clippy::cast_precision_loss)] // a share in percent, to two places
pub fn note(sought: &Sought, head_bytes: u64) -> String {
    let read = bytes_read(sought, head_bytes);
    format!(
        "read by time for the read window: bytes {}-{} of {} ({read} bytes read with the search's, {:.2} % of the file); the {} bytes before and the {} after were not read, their lines being more than {TOLERANCE_S} s outside the window (lines out of order by more than that in them would not be seen); the order was checked on {} lines at {} places (32 evenly spaced over the file, the others the search's) and on every event read; its lines are numbered from byte {} (its line 1), and cited as '(from byte {}):N'; of the bytes not read, no line is counted in its account, no job or run is checked for a story cut by the window (read-window-cut), and no worker settings are read (--read-margin all reads everything)",
        sought.from,
        sought.to,
        sought.size,
        100.0 * read as f64 / sought.size.max(1) as f64,
        sought.from,
        sought.size - sought.to,
        sought.lines_checked,
        sought.probes,
        sought.from,
        sought.from,
    )
}

/// The bytes a sought read took: the part, the search's probes, and the head read to tell the
/// format.
pub fn bytes_read(sought: &Sought, head_bytes: u64) -> u64 {
    (sought.to - sought.from) + sought.probed_bytes + head_bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moment(seconds: i64) -> Moment {
        Moment::from_nanos(seconds * 1_000_000_000)
    }

    /// Lines `T<seconds> ...`, a continuation line after every third.
    fn time_of(line: &[u8]) -> Option<(Moment, Moment)> {
        let text = std::str::from_utf8(line.strip_prefix(b"T")?).ok()?;
        let seconds: i64 = text.split(' ').next()?.parse().ok()?;
        Some((moment(seconds), moment(seconds)))
    }

    fn file(times: impl Iterator<Item = i64>) -> (tempfile::TempDir, std::path::PathBuf, Vec<u64>) {
        use std::fmt::Write;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.log");
        let mut text = String::new();
        let mut offsets = Vec::new();
        for (n, seconds) in times.enumerate() {
            offsets.push(text.len() as u64);
            writeln!(text, "T{seconds} a line of some length to fill the file with bytes").unwrap();
            if n % 3 == 0 {
                text.push_str("    at a continuation line without a time\n");
            }
        }
        std::fs::write(&path, text).unwrap();
        (dir, path, offsets)
    }

    #[test]
    fn the_part_holds_every_line_of_the_window_and_little_else() {
        let (_dir, path, offsets) = file(0..200_000);
        let Plan::Part(sought) = plan(&path, 0, Some(moment(100_000)), Some(moment(100_600)), &time_of).unwrap() else {
            panic!("sought")
        };
        // The tolerance's lines on each side, and at most a block more.
        let tolerance = usize::try_from(TOLERANCE_S).unwrap();
        let first = offsets[100_000 - tolerance];
        let last = offsets[100_600 + tolerance + 1];
        assert!(sought.from <= first && first - sought.from <= 2 * BLOCK as u64, "{sought:?} {first}");
        assert!(sought.to > last && sought.to - last <= 2 * BLOCK as u64, "{sought:?} {last}");
        assert!(offsets.contains(&sought.from) && offsets.contains(&sought.to));
        assert!(sought.probed_bytes < 4 << 20, "{sought:?}");
    }

    #[test]
    fn a_window_before_or_after_the_file_reads_almost_nothing() {
        let (_dir, path, offsets) = file(1000..200_000);
        let Plan::Part(before) = plan(&path, 0, Some(moment(0)), Some(moment(10)), &time_of).unwrap() else { panic!() };
        assert_eq!(before.from, 0);
        assert!(before.to <= offsets[1000], "{before:?}");
        let Plan::Part(after) = plan(&path, 0, Some(moment(500_000)), None, &time_of).unwrap() else { panic!() };
        assert_eq!(after.to, after.size);
        assert!(after.size - after.from <= 2 * BLOCK as u64, "{after:?}");
    }

    #[test]
    fn a_file_out_of_order_is_read_whole() {
        // Two logs appended one after the other: the second starts back at 0.
        let (_dir, path, _) = file((0..100_000).chain(0..100_000));
        let plan = plan(&path, 0, Some(moment(50_000)), Some(moment(50_100)), &time_of).unwrap();
        assert!(matches!(&plan, Plan::Whole(why) if why.contains("out of order")), "{plan:?}");
    }

    #[test]
    fn lines_out_of_order_within_the_tolerance_are_found() {
        // Every other line 200 s late.
        let (_dir, path, _) = file((0..200_000).map(|n| if n % 2 == 1 { n - 200 } else { n }));
        let Plan::Part(sought) = plan(&path, 0, Some(moment(100_000)), Some(moment(100_010)), &time_of).unwrap() else {
            panic!()
        };
        let text = std::fs::read(&path).unwrap();
        let part = &text[usize::try_from(sought.from).unwrap()..usize::try_from(sought.to).unwrap()];
        let late = |n: i64| if n % 2 == 1 { n - 200 } else { n };
        let inside: Vec<i64> = (99_000..101_000).map(late).filter(|t| (100_000..=100_010).contains(t)).collect();
        assert_eq!(inside.len(), 11, "six lines of the window in place, five written 200 s late");
        for t in inside {
            assert!(memchr::memmem::find(part, format!("\nT{t} ").as_bytes()).is_some(), "T{t}");
        }
    }

    #[test]
    fn events_out_of_order_by_more_than_the_tolerance_are_refused() {
        assert!(check_order([0, 10, 5, 400].into_iter().map(moment)).is_ok());
        assert!(check_order([0, 1000, 10].into_iter().map(moment)).is_err());
    }
}
