//! Server logs as plain text: each entry starts with a timestamp, the rest is the message.
//!
//! Lines without a leading timestamp continue the previous entry (stack traces, multi-line
//! payloads) and are counted as ignored continuations. A line that starts like a date but is not a
//! valid one is an error: a silently skipped line could be the one that matters.

use std::io::BufRead;

use crate::error::{Error, Result};
use crate::model::{Event, InputSummary, Moment, Origin};
use crate::time::fold::{LineOrder, Placed};
use crate::time::{self, Leading, Shape};

use crate::ingest::io::chunks::{Chunks, Region};
use crate::ingest::io::seek;
use crate::ingest::io::segments::{self, Segment};
use crate::ingest::log::rules::{RuleSet, key_value_fields};
use crate::ingest::log::worker_settings::{Settled, parse_text, settle};
use crate::ingest::{EventFormat, Reopen, SourceKind, SourceSpec};

pub struct ServerLog;

impl EventFormat for ServerLog {
    fn name(&self) -> &'static str {
        "text"
    }

    fn kind(&self) -> SourceKind {
        SourceKind::Log
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["log", "txt"]
    }

    fn sniff(&self, first_line: &str) -> bool {
        matches!(time::leading_stamp(first_line), Leading::Found(..))
    }

    fn read(
        &self,
        spec: &SourceSpec,
        source: u16,
        input: Box<dyn BufRead + Send>,
        events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<()> {
        let rules = RuleSet::shared(&spec.rules, spec.builtin_rules, &spec.display_path())?;
        let part = Part { spec, source, rules: &rules, start: spec.text_start, later: false };
        let scan = part.scan(input, None, events, summary)?;
        scan.finish(events, summary)
    }

    /// A log of `ingest::SPLIT_AT_LEAST` bytes or more is read in two parts on two threads, split
    /// at the first line that starts after its middle; the second part counts its lines from 1
    /// and they are renumbered when it is done. The events and the account are those of `read`: a
    /// line's classification depends on that line alone, and the one check that depends on where
    /// a line is (the first timestamp of the log is parsed in full, see `Scan::check_stamp`) is
    /// kept by the second part for the case that the first part has no timestamp at all. The
    /// pass of a line in a repeated hour depends on the lines before it (`time::fold`), but only
    /// through the last line before the hour or a step back within it: when the second part starts
    /// inside a repeated hour, or the first part ends inside one the log started in, the second
    /// part is dropped and the first reads on from the middle, as one read would.
    fn read_file(
        &self,
        spec: &SourceSpec,
        source: u16,
        input: Box<dyn BufRead + Send>,
        reopen: &Reopen,
        events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<()> {
        // A pipe's copy is still growing while it is read: it is read through, never sought.
        if let Some(window) = spec.window
            && (window.from.is_some() || window.to.is_some())
            && reopen.growth().is_none()
            && std::fs::metadata(reopen.path()).is_ok_and(|m| m.len() >= seek::SEEK_AT_LEAST)
        {
            return read_sought(spec, source, input, reopen, window, events, summary);
        }
        read_in_parts(spec, source, input, reopen, crate::ingest::SPLIT_AT_LEAST, events, summary)
    }
}

/// The earliest and latest instants of a line's leading time, read as the reader reads it
/// (`time::leading_stamp`, the source's zone): two when its local time happens twice, none for a
/// line without a time or one the zone skips (`seek::LineTime`).
fn line_time(spec: &SourceSpec, line: &[u8]) -> Option<(Moment, Moment)> {
    use chrono::TimeZone;
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if !time::looks_like_date(line.strip_prefix(b"[").unwrap_or(line)) {
        return None;
    }
    let Leading::Found(stamp, _) = time::leading_stamp(std::str::from_utf8(line).ok()?) else { return None };
    let moment = |at: chrono::DateTime<chrono::Utc>| Moment::new(at).ok();
    match stamp {
        time::Stamp::Absolute(at) => moment(at).map(|at| (at, at)),
        time::Stamp::Local(naive) => match spec.tz?.from_local_datetime(&naive) {
            chrono::LocalResult::Single(at) => moment(at.with_timezone(&chrono::Utc)).map(|at| (at, at)),
            chrono::LocalResult::Ambiguous(first, second) => {
                Some((moment(first.with_timezone(&chrono::Utc))?, moment(second.with_timezone(&chrono::Utc))?))
            }
            chrono::LocalResult::None => None,
        },
    }
}

/// A log read for a read window: only the part the window needs, found by time
/// (`io::seek`), when the file is in order; else the whole file, and the report says why.
fn read_sought(
    spec: &SourceSpec,
    source: u16,
    input: Box<dyn BufRead + Send>,
    reopen: &Reopen,
    window: crate::model::filter::ReadWindow,
    events: &mut Vec<Event>,
    summary: &mut InputSummary,
) -> Result<()> {
    let io = |source| Error::Io { path: spec.path.clone(), source };
    let whole = |why: String, input: Box<dyn BufRead + Send>, events: &mut Vec<Event>, summary: &mut InputSummary| {
        read_in_parts(spec, source, input, reopen, crate::ingest::SPLIT_AT_LEAST, events, summary)?;
        summary.notes.push(format!("read whole, not by time for the read window: {why}"));
        Ok(())
    };
    let plan = seek::plan(reopen.path(), spec.text_start, window.from, window.to, &|line| line_time(spec, line))
        .map_err(io)?;
    let sought = match plan {
        seek::Plan::Whole(why) => return whole(why, input, events, summary),
        seek::Plan::Part(sought) if sought.from <= spec.text_start && sought.to >= sought.size => {
            return read_in_parts(spec, source, input, reopen, crate::ingest::SPLIT_AT_LEAST, events, summary);
        }
        seek::Plan::Part(sought) => sought,
    };
    let head = std::fs::metadata(reopen.path()).map_or(0, |m| m.len()).min(1 << 16);
    drop(input);
    let rules = RuleSet::shared(&spec.rules, spec.builtin_rules, &spec.display_path())?;
    let part = Part { spec, source, rules: &rules, start: sought.from, later: false };
    let mut read = Vec::new();
    let mut account = InputSummary::new(&summary.path, summary.kind, summary.format, spec.tz);
    let part_input: Box<dyn BufRead + Send> =
        Box::new(std::io::Read::take(reopen.at(sought.from)?, sought.to - sought.from));
    // An error names its line as the report cites the part's lines: from the byte read from.
    let cited = |error: Error| match error {
        Error::Input { path, line: Some(line), message } => Error::Input {
            path: std::path::PathBuf::from(crate::analysis::seek_label(&path.display().to_string(), sought.from)),
            line: Some(line),
            message,
        },
        other => other,
    };
    let scan = part.scan(part_input, None, &mut read, &mut account).map_err(cited)?;
    scan.finish(&mut read, &mut account).map_err(cited)?;
    // Events in the order of their lines: each of them within the tolerance of those above it.
    let mut by_line: Vec<(u32, Moment)> = read.iter().map(|event| (event.origin().line, event.moment())).collect();
    by_line.sort_by_key(|&(line, _)| line);
    if let Err(why) = seek::check_order(by_line.into_iter().map(|(_, at)| at)) {
        let why = format!("{why} (in bytes {}-{})", sought.from, sought.to);
        return whole(why, reopen.at(0)?, events, summary);
    }
    *events = read;
    *summary = account;
    summary.notes.push(seek::note(&sought, head));
    summary.window_read = Some(crate::model::input::WindowRead {
        from_start: sought.from <= spec.text_start,
        from_byte: sought.from,
        to_byte: sought.to,
        size: sought.size,
        bytes_read: seek::bytes_read(&sought, head),
    });
    Ok(())
}

/// `ServerLog::read_file`, splitting a file of `split_at_least` bytes or more.
fn read_in_parts(
    spec: &SourceSpec,
    source: u16,
    input: Box<dyn BufRead + Send>,
    reopen: &Reopen,
    split_at_least: u64,
    events: &mut Vec<Event>,
    summary: &mut InputSummary,
) -> Result<()> {
    if let Some(growth) = reopen.growth() {
        return read_growing_in_parts(spec, source, input, reopen, growth, split_at_least, events, summary);
    }
    let size = std::fs::metadata(reopen.path()).map_or(0, |m| m.len());
    let middle = if size >= split_at_least { second_part_start(reopen, size / 2, size)? } else { None };
    let Some(middle) = middle else { return ServerLog.read(spec, source, input, events, summary) };
    let rules = RuleSet::shared(&spec.rules, spec.builtin_rules, &spec.display_path())?;
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (first, later) = std::thread::scope(|scope| {
        let later = scope.spawn(|| read_later_part(spec, source, &rules, reopen, middle, &stop));
        // The input skips a byte-order mark: the first part's text starts after it.
        let part = Part { spec, source, rules: &rules, start: spec.text_start, later: false };
        let first = part.scan(Box::new(std::io::Read::take(input, middle - spec.text_start)), None, events, summary);
        if first.is_err() {
            // The first part's error is the one to report: the second part need not finish.
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        (first, later.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    });
    join_parts(spec, reopen, middle, first?, later, events, summary)
}

/// `read_in_parts` for a source read once, read from its copy as the copy grows (`spool::Growth`):
/// the first part from the start, on this thread, as the bytes come; once the source has ended,
/// a second part from the middle of what the first has not reached, on another thread, where it
/// is at least `split_at_least` bytes. A source that comes slower than one thread parses is read
/// in one part, at the pace it comes; one that comes as fast as a file (`cat`) is read in two, as
/// the file would be. The events and the account are those of one read, as for a file.
#[allow(clippy::too_many_arguments)]
fn read_growing_in_parts(
    spec: &SourceSpec,
    source: u16,
    input: Box<dyn BufRead + Send>,
    reopen: &Reopen,
    growth: &crate::ingest::io::spool::Growth,
    split_at_least: u64,
    events: &mut Vec<Event>,
    summary: &mut InputSummary,
) -> Result<()> {
    let rules = RuleSet::shared(&spec.rules, spec.builtin_rules, &spec.display_path())?;
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (first, later) = std::thread::scope(|scope| {
        let later = scope.spawn(|| {
            // The first part's reader ends at the middle once it is decided.
            let choose = |from| second_part_start(reopen, from, u64::MAX);
            let Some(middle) = growth.split(split_at_least, true, choose)? else { return Ok(None) };
            read_later_part(spec, source, &rules, reopen, middle, &stop).map(|later| Some((middle, later)))
        });
        let part = Part { spec, source, rules: &rules, start: spec.text_start, later: false };
        // Its reader is dropped when it returns, which ends a wait for a second part.
        let first = part.scan(input, None, events, summary);
        if first.is_err() {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        (first, later.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    });
    let first = first?;
    match later {
        Ok(Some((middle, later))) => join_parts(spec, reopen, middle, first, Ok(later), events, summary),
        Ok(None) => first.finish(events, summary),
        // Only the part after the first's lines can fail here: its lines are counted after them.
        Err(error) => Err(crate::ingest::shifted(error, first.line)),
    }
}

/// Where a second part of a log may start, for a middle at byte `from`: the first line that starts
/// after it (none: a file of one long line there, or nothing after it before `size`), at an entry
/// (a line that starts like a timestamp) when one is in the MiB after it: a continuation then
/// always has its entry in its own part.
fn second_part_start(reopen: &Reopen, from: u64, size: u64) -> Result<Option<u64>> {
    Ok(reopen
        .line_end_after(from)?
        .map(|(newline, block)| {
            let entry = memchr::memchr_iter(b'\n', &block).find(|&at| {
                let next = &block[at + 1..];
                time::looks_like_date(next.strip_prefix(b"[").unwrap_or(next))
            });
            newline + entry.unwrap_or(0) as u64 + 1
        })
        .filter(|&start| start < size))
}

/// The second part of a log, from byte `middle` (a line start) to its end, its lines counted from
/// 1 there. `stop`, once set, ends it early.
fn read_later_part<'a>(
    spec: &'a SourceSpec,
    source: u16,
    rules: &'a RuleSet,
    reopen: &Reopen,
    middle: u64,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<(Scan<'a>, Vec<Event>, InputSummary)> {
    let part = Part { spec, source, rules, start: middle, later: true };
    let mut events = Vec::new();
    let mut summary = InputSummary::new(&spec.display_path(), spec.kind.name(), ServerLog.name(), spec.tz);
    let scan = part.scan(reopen.at(middle)?, Some(stop), &mut events, &mut summary)?;
    Ok((scan, events, summary))
}

/// The end of a log read in two parts, the second from byte `middle`: the second part's lines,
/// events and account after the first's, or the first part read on from the middle where the
/// passes of the lines after it depend on those before it (a repeated hour).
fn join_parts(
    spec: &SourceSpec,
    reopen: &Reopen,
    middle: u64,
    mut first: Scan<'_>,
    later: Result<(Scan<'_>, Vec<Event>, InputSummary)>,
    events: &mut Vec<Event>,
    summary: &mut InputSummary,
) -> Result<()> {
    let in_fold = |scan: &Scan<'_>, at_start: bool| {
        scan.order.as_ref().is_some_and(|order| if at_start { order.began_in_fold() } else { order.pending() })
    };
    if in_fold(&first, false)
        || later.as_ref().is_ok_and(|(later, ..)| in_fold(later, true) || later.entry_before == EntryBefore::Needed)
    {
        // The passes of the lines after the middle depend on those before it.
        first.run(reopen.at(middle)?, None, events, summary)?;
        return first.finish(events, summary);
    }
    // The second part counted its lines from 1 at the middle.
    let before = first.line;
    let (mut later, mut more, mut account) = later.map_err(|error| crate::ingest::shifted(error, before))?;
    if !first.first_stamp_checked
        && let Some(problem) = later.first_stamp_problem
    {
        return Err(crate::ingest::shifted(problem, before));
    }
    spec.finish_order(later.order.take(), &mut more, &mut account)
        .map_err(|error| crate::ingest::shifted(error, before))?;
    spec.finish_order(first.order.take(), events, summary)?;
    crate::ingest::join_later_part(spec, before, Ok((more, account)), events, summary)?;
    first.add(&later);
    first.account(spec, summary)
}

/// The bytes of a segment of a log read from a stream (`read_streamed`): the segments in flight
/// (two queued, two being parsed, two parsed and waiting, one being read) are a few MiB. At 4 MiB
/// they were 1.45 × the smoke case's peak (100 MB of log); at 1 MiB, 1.05 ×.
pub(crate) const SEGMENT_BYTES: usize = 1 << 20;

/// A plain-text log read from a stream (standard input through a pipe, a FIFO) as it comes, with
/// no copy of it on disk: cut into segments at entries on a thread of its own (`io::segments`),
/// each segment parsed on one of two threads as a file's second part is (its lines counted from
/// 1), and the segments joined in order here, as a file's two parts are (`join_parts`). Where a
/// segment starts inside a repeated hour, or the lines before it end inside one the log started
/// in, it is read again on from the lines before it. The texts of the lines with events are kept
/// as they are read while they take `SourceSpec::max_kept_bytes` or less; past that, the rest of
/// the stream is also written to `copy` (the source's spool file) from the next segment read, and
/// the report reads those lines back from there. The events and the account are those of one
/// read of the same bytes from a file.
pub(crate) fn read_streamed(
    spec: &SourceSpec,
    source: u16,
    input: Box<dyn BufRead + Send>,
    copy: &std::path::Path,
    segment_bytes: usize,
    events: &mut Vec<Event>,
    summary: &mut InputSummary,
) -> Result<()> {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::mpsc::{RecvTimeoutError, sync_channel};

    let rules = RuleSet::shared(&spec.rules, spec.builtin_rules, &spec.display_path())?;
    let kept = SourceSpec { reread: crate::ingest::Reread::No, text_start: 0, ..spec.clone() };
    let copied = SourceSpec { reread: crate::ingest::Reread::Seek, text_start: 0, ..spec.clone() };
    // Set once the kept texts pass the most: the stream is copied from the next segment read on.
    let copy_on = std::sync::Arc::new(AtomicBool::new(false));
    let (jobs, job_rx) = sync_channel::<Segment>(2);
    let (spent, spent_rx) = sync_channel::<Vec<u8>>(4);
    {
        let (path, cap, copy_on, copy) = (spec.path.clone(), spec.max_line_bytes, copy_on.clone(), copy.to_path_buf());
        // Not joined: it ends at the end of the stream, or at its next hand-over once nothing is
        // wanted (a stream without end, `tail -f`, is not waited for).
        std::thread::spawn(move || {
            let mut writer: Option<segments::Copy> = None;
            let send = |mut segment: Segment| {
                if writer.is_none() && copy_on.load(Ordering::Relaxed) {
                    match segments::Copy::open(&copy, segment.start) {
                        Ok(opened) => writer = Some(opened),
                        Err(source) => {
                            segment.error = Some(Error::Io { path: copy.clone(), source });
                            segment.last = true;
                        }
                    }
                }
                if let Some(writer) = &mut writer {
                    segment.copied_from = Some(writer.from);
                    if let Err(error) = writer.write(&segment) {
                        segment.error = Some(error);
                        segment.last = true;
                    }
                }
                let last = segment.last;
                jobs.send(segment).is_ok() && !last
            };
            segments::cut(input, &path, cap, segment_bytes, send, || spent_rx.try_recv().ok());
        });
    }
    let job_rx = std::sync::Mutex::new(job_rx);
    let stop = AtomicBool::new(false);
    let (done, done_rx) = sync_channel::<Parsed<'_>>(2);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            let (done, job_rx, stop, rules, kept, copied) = (done.clone(), &job_rx, &stop, &*rules, &kept, &copied);
            scope.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let job = job_rx.lock().unwrap_or_else(std::sync::PoisonError::into_inner).recv_timeout(
                        // The stream's thread may wait on its input for ever: the stop is looked at.
                        std::time::Duration::from_millis(50),
                    );
                    let segment = match job {
                        Ok(segment) => segment,
                        Err(RecvTimeoutError::Timeout) => continue,
                        Err(RecvTimeoutError::Disconnected) => return,
                    };
                    let spec = if segment.copied_from.is_some() { copied } else { kept };
                    let start = segment.start - segment.copied_from.unwrap_or(0);
                    let part = Part { spec, source, rules, start, later: segment.index > 0 };
                    let mut scan = part.start();
                    let mut events = Vec::new();
                    let mut summary =
                        InputSummary::new(&spec.display_path(), spec.kind.name(), ServerLog.name(), spec.tz);
                    let parsed = scan.run_segment(&segment, Some(stop), &mut events, &mut summary);
                    if done.send((segment, parsed.map(|()| (scan, events, summary)))).is_err() {
                        return;
                    }
                }
            });
        }
        drop(done);
        let joined = join_streamed(spec, &done_rx, &spent, &copy_on, events, summary);
        stop.store(true, Ordering::Relaxed);
        // Parts parsed after an error are not wanted: the parsing threads are not left waiting.
        drop(done_rx);
        joined
    })
}

/// A segment of a stream, and what a parsing thread read from it (`read_streamed`).
type Parsed<'a> = (Segment, Result<(Scan<'a>, Vec<Event>, InputSummary)>);

/// The lines of a stream read in segments (`read_streamed`) not yet joined: a segment's, or
/// several read on one scan through a repeated hour.
struct Tail<'a> {
    scan: Scan<'a>,
    events: Vec<Event>,
    summary: InputSummary,
}

/// `read_streamed`'s joining: the segments parsed (`done`), in stream order.
fn join_streamed<'a>(
    spec: &SourceSpec,
    done: &std::sync::mpsc::Receiver<Parsed<'a>>,
    spent: &std::sync::mpsc::SyncSender<Vec<u8>>,
    copy_on: &std::sync::atomic::AtomicBool,
    events: &mut Vec<Event>,
    summary: &mut InputSummary,
) -> Result<()> {
    let mut joined: Option<Scan<'a>> = None;
    let mut tail: Option<Tail<'a>> = None;
    let mut waiting = std::collections::BTreeMap::new();
    let mut next = 0;
    let mut kept_bytes = 0;
    loop {
        let Ok((segment, parsed)) = done.recv() else {
            return Err(Error::input(&spec.path, None, "internal: the log's reading threads stopped before its end"));
        };
        waiting.insert(segment.index, (segment, parsed));
        while let Some((mut segment, parsed)) = waiting.remove(&next) {
            next += 1;
            let before_segment = joined.as_ref().map_or(0, |scan| scan.line) + tail.as_ref().map_or(0, |t| t.scan.line);
            if let Ok((_, _, parsed_summary)) = &parsed {
                kept_bytes += parsed_summary.texts.kept_bytes();
                if kept_bytes > spec.max_kept_bytes {
                    copy_on.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            }
            match &mut tail {
                None => {
                    let (scan, events, summary) = parsed?;
                    tail = Some(Tail { scan, events, summary });
                }
                Some(t) => {
                    let in_fold = t.scan.order.as_ref().is_some_and(LineOrder::pending)
                        || parsed.as_ref().is_ok_and(|(scan, ..)| {
                            scan.order.as_ref().is_some_and(LineOrder::began_in_fold)
                                || scan.entry_before == EntryBefore::Needed
                        });
                    if in_fold {
                        // The passes of its lines, or the entry of its first settings, depend on
                        // the lines before it: read on from them.
                        let before = joined.as_ref().map_or(0, |scan| scan.line);
                        if let Err(error) = t.scan.run_segment(&segment, None, &mut t.events, &mut t.summary) {
                            first_stamp_problem(joined.as_ref(), &mut t.scan)?;
                            return Err(crate::ingest::shifted(error, before));
                        }
                    } else {
                        let (scan, more, account) = match parsed {
                            Ok(parsed) => parsed,
                            Err(error) => {
                                // A problem of the lines before it, kept until now, is the first.
                                first_stamp_problem(joined.as_ref(), &mut t.scan)?;
                                return Err(crate::ingest::shifted(error, before_segment));
                            }
                        };
                        let mut scan = scan;
                        if scan.entry_before == EntryBefore::Unknown {
                            // No entry of its own: a continuation read on into it later (a
                            // segment that needs the lines before it) takes the last one before.
                            scan.last_entry.clone_from(&t.scan.last_entry);
                            scan.last_placed = t.scan.last_placed;
                        }
                        let done = std::mem::replace(t, Tail { scan, events: more, summary: account });
                        join_tail(spec, &mut joined, done, events, summary)?;
                    }
                }
            }
            if let Some(error) = segment.error.take() {
                if let Some(t) = &mut tail {
                    first_stamp_problem(joined.as_ref(), &mut t.scan)?;
                }
                return Err(crate::ingest::shifted(error, before_segment));
            }
            if segment.last {
                if let Some(t) = tail.take() {
                    join_tail(spec, &mut joined, t, events, summary)?;
                }
                return joined.map_or(Ok(()), |scan| scan.account(spec, summary));
            }
            let _ = spent.try_send(std::mem::take(&mut segment.bytes));
        }
    }
}

/// The problem of `tail`'s first timestamp, checked in full, when it is the log's first (none
/// before it was checked): the log's error, at its line.
fn first_stamp_problem(joined: Option<&Scan<'_>>, tail: &mut Scan<'_>) -> Result<()> {
    match (joined, tail.first_stamp_problem.take()) {
        (Some(first), Some(problem)) if !first.first_stamp_checked => Err(crate::ingest::shifted(problem, first.line)),
        _ => Ok(()),
    }
}

/// `tail`'s lines, events and account after those joined before it, its order through the
/// repeated hours finished (it ends outside one, or the stream ends with it).
fn join_tail<'a>(
    spec: &SourceSpec,
    joined: &mut Option<Scan<'a>>,
    tail: Tail<'a>,
    events: &mut Vec<Event>,
    summary: &mut InputSummary,
) -> Result<()> {
    let Tail { mut scan, events: mut more, summary: mut account } = tail;
    let Some(first) = joined else {
        spec.finish_order(scan.order.take(), &mut more, &mut account)?;
        *events = more;
        *summary = account;
        *joined = Some(scan);
        return Ok(());
    };
    let before = first.line;
    first_stamp_problem(Some(&*first), &mut scan)?;
    spec.finish_order(scan.order.take(), &mut more, &mut account)
        .map_err(|error| crate::ingest::shifted(error, before))?;
    crate::ingest::join_later_part(spec, before, Ok((more, account)), events, summary)?;
    first.first_stamp_checked |= scan.first_stamp_checked;
    first.add(&scan);
    Ok(())
}

/// The timestamps in `message` (a stamped line after its own timestamp) laid out as the line's
/// own: `YYYY-MM-DD`, then `separator` (the own one's `T` or space), then `HH:MM:SS`, not right
/// after a digit. Looked for at each `-` (a date's first), so a line without dates costs one
/// `memchr` pass.
fn stamps_in(message: &[u8], separator: u8) -> u64 {
    let mut count = 0;
    for dash in memchr::memchr_iter(b'-', message) {
        let Some(start) = dash.checked_sub(4) else { continue };
        let candidate = &message[start..];
        if candidate.get(10) == Some(&separator)
            && (start == 0 || !message[start - 1].is_ascii_digit())
            && matches!(time::stamp_shape(candidate), Shape::Stamped(_))
        {
            count += 1;
        }
    }
    count
}

/// Where the texts of a log's lines with events stay for the report (`LineTexts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Texts {
    /// In the file, read again from the marks the scan leaves about every MiB (a plain file, a
    /// pipe's copy).
    InFile,
    /// Kept as they are read (a source that is not read again).
    Kept,
    /// A gzip-compressed file, which can be read again only by decompressing it from its start:
    /// marked and kept while the kept texts (`bytes` so far) fit in `SourceSpec::max_kept_bytes`
    /// (`KEPT_WITHIN`), in the file past that.
    KeptWithin { bytes: usize },
}

/// The most memory a compressed log's kept texts take (with their places in `LineTexts`) before
/// they are dropped and the report decompresses the file again for its lines instead. The lines
/// with events are about 1 % of an application's log: the main benchmark case's gigabyte keeps
/// 106 k lines in about 18 MB, and its report no longer decompresses 60 % of the log again after
/// the analysis (docs/performance/ways-in.md). A log that is mostly events goes past it and is
/// read again, in bounded memory.
pub(crate) const KEPT_WITHIN: usize = 64 << 20;

/// One part of a log: all of it, or the part from byte `start` to its end (`later`), whose lines
/// are counted from 1.
struct Part<'a> {
    spec: &'a SourceSpec,
    source: u16,
    rules: &'a RuleSet,
    start: u64,
    later: bool,
}

impl<'a> Part<'a> {
    /// Reads the part's lines into `events` and `summary` (used lines, rejections); the counts of
    /// the others are in the scan returned. `stop`, once set, ends the scan early.
    fn scan(
        &self,
        input: Box<dyn BufRead + Send>,
        stop: Option<&std::sync::atomic::AtomicBool>,
        events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<Scan<'a>> {
        let mut scan = self.start();
        scan.run(input, stop, events, summary)?;
        Ok(scan)
    }

    /// The part's scan, before its first line.
    fn start(&self) -> Scan<'a> {
        Scan {
            spec: self.spec,
            source: self.source,
            rules: self.rules,
            line: 0,
            stamped: 0,
            blank: 0,
            continuation: 0,
            noise: 0,
            first_stamp_checked: false,
            keep_first_stamp_problem: self.later,
            entry_before: if self.later { EntryBefore::Unknown } else { EntryBefore::Known },
            first_stamp_problem: None,
            region_offset: self.start,
            texts: match self.spec.reread {
                crate::ingest::Reread::Seek => Texts::InFile,
                crate::ingest::Reread::No => Texts::Kept,
                crate::ingest::Reread::Decompress => Texts::KeptWithin { bytes: 0 },
            },
            last_entry: None,
            last_placed: Placed::Outside,
            order: self.spec.line_order(),
        }
    }
}

/// What a part of a log knows of the entry (the last line that starts with a timestamp) its first
/// continuation lines belong to (`Scan::continued_settings`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EntryBefore {
    /// The first part's (there is none before it), or a later part's once it has met an entry, or
    /// a line passed over, which no continuation takes its time from.
    Known,
    /// A later part's before either: the entry may be in the part before it.
    Unknown,
    /// A later part met worker settings on a continuation line while `Unknown`: its entry is in
    /// the part before, so the part is read on from there instead (`join_parts`, `read_streamed`).
    Needed,
}

impl EntryBefore {
    fn learned(&mut self) {
        if *self == EntryBefore::Unknown {
            *self = EntryBefore::Known;
        }
    }
}

/// The state of one log's scan: counts, and what the lines that matter need.
struct Scan<'a> {
    spec: &'a SourceSpec,
    source: u16,
    rules: &'a RuleSet,
    line: u64,
    stamped: u64,
    blank: u64,
    continuation: u64,
    noise: u64,
    /// Whether a line that starts like a timestamp has had the full check (shape and zone).
    first_stamp_checked: bool,
    /// In the second part of a log read in two: the full check's error is kept, not returned (it
    /// is the log's error only if the first part had no timestamp).
    keep_first_stamp_problem: bool,
    /// What the part knows of the entry its first continuation lines belong to.
    entry_before: EntryBefore,
    first_stamp_problem: Option<Error>,
    /// Byte offset of the current region in the input.
    region_offset: u64,
    /// Where the texts of the lines with events stay for the report.
    texts: Texts,
    /// The last line of the regions before this one that starts with a timestamp (see
    /// `continued_settings`).
    last_entry: Option<String>,
    /// Where the order placed the last line that starts with a timestamp: a continuation's
    /// settings take their entry's time (see `continued_settings`).
    last_placed: Placed,
    /// The order of the lines through the repeated hours of the log's zone (none: no zone, or
    /// `ambiguous = "error"`).
    order: Option<LineOrder>,
}

impl Scan<'_> {
    /// Reads `input` on from where the scan is (its start, or the middle of the file after the
    /// first part). `stop`, once set, ends it early; so does a second part's start inside a
    /// repeated hour, which makes it of no use (see `read_in_parts`).
    fn run(
        &mut self,
        input: Box<dyn BufRead + Send>,
        stop: Option<&std::sync::atomic::AtomicBool>,
        events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<()> {
        let mut chunks = Chunks::new(input, self.spec.max_line_bytes);
        while let Some(region) = chunks.next_region(&self.spec.path, self.line)? {
            if stop.is_some_and(|stop| stop.load(std::sync::atomic::Ordering::Relaxed)) {
                break;
            }
            if !self.piece(region, events, summary)? {
                break;
            }
        }
        Ok(())
    }

    /// `run` over a segment of a stream (`io::segments`), its lines held in memory.
    fn run_segment(
        &mut self,
        segment: &Segment,
        stop: Option<&std::sync::atomic::AtomicBool>,
        events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<()> {
        for region in segment.regions() {
            if stop.is_some_and(|stop| stop.load(std::sync::atomic::Ordering::Relaxed)) {
                break;
            }
            if !self.piece(region, events, summary)? {
                break;
            }
        }
        Ok(())
    }

    /// One region of whole lines, or a line passed over. `false`: the scan is of no more use (a
    /// second part that starts inside a repeated hour, see `read_in_parts`).
    fn piece(&mut self, region: Region<'_>, events: &mut Vec<Event>, summary: &mut InputSummary) -> Result<bool> {
        let region = match region {
            Region::Lines(region) => region,
            Region::TooLong(bytes) => {
                // Not an entry a continuation after it can take its time from.
                self.last_entry = None;
                self.entry_before.learned();
                self.line += 1;
                summary.reject(self.line, crate::ingest::io::lines::too_long(self.spec.max_line_bytes));
                self.region_offset += bytes;
                return Ok(true);
            }
        };
        self.region(region, events, summary)?;
        self.region_offset += region.len() as u64;
        Ok(!(self.keep_first_stamp_problem && self.order.as_ref().is_some_and(LineOrder::began_in_fold)))
    }

    /// The end of the log read in one: the events of second passes moved, the lines accounted.
    fn finish(mut self, events: &mut [Event], summary: &mut InputSummary) -> Result<()> {
        self.spec.finish_order(self.order.take(), events, summary)?;
        self.account(self.spec, summary)
    }

    /// The counts of `later`, the part after this one.
    fn add(&mut self, later: &Scan<'_>) {
        self.texts = match (self.texts, later.texts) {
            (Texts::KeptWithin { bytes }, Texts::KeptWithin { bytes: more })
                if bytes + more <= self.spec.max_kept_bytes =>
            {
                Texts::KeptWithin { bytes: bytes + more }
            }
            (Texts::KeptWithin { .. }, _) | (_, Texts::KeptWithin { .. }) => Texts::InFile,
            (texts, _) => texts,
        };
        self.line += later.line;
        self.stamped += later.stamped;
        self.blank += later.blank;
        self.continuation += later.continuation;
        self.noise += later.noise;
    }

    /// The lines that are not events, into the summary; an error if no line had a timestamp.
    fn account(&self, spec: &SourceSpec, summary: &mut InputSummary) -> Result<()> {
        // A compressed log's texts stay where they fitted: all kept, or all read again.
        match self.texts {
            Texts::KeptWithin { .. } => summary.texts.forget_marks(),
            Texts::InFile if spec.reread == crate::ingest::Reread::Decompress => summary.texts.forget_kept(),
            Texts::InFile | Texts::Kept => {}
        }
        summary.lines = self.line;
        for (reason, count) in [("blank", self.blank), ("continuation", self.continuation), ("noise", self.noise)] {
            if count > 0 {
                summary.ignored += count;
                *summary.ignored_by_reason.entry(reason.to_string()).or_default() += count;
            }
        }
        if self.line > 0 && self.stamped == 0 {
            return Err(Error::input(
                &spec.path,
                Some(1),
                "no line starts with a timestamp: expected lines like '2026-10-07 09:33:00.012 INFO ...' (YYYY-MM-DD HH:MM:SS, optionally with fraction and offset)",
            ));
        }
        Ok(())
    }

    /// One region of whole lines. The rules' candidate search runs over the whole region;
    /// the lines it does not touch only get counted (a look at their first bytes says blank,
    /// continuation or noise), and each line it touches is parsed and classified in full.
    fn region(&mut self, region: &[u8], events: &mut Vec<Event>, summary: &mut InputSummary) -> Result<()> {
        if let Some(at) = memchr::memchr(0, region) {
            // The lines before the NUL's are read first: the first bad line is the error, wherever
            // the region starts (a file's parts and a stream's segments start elsewhere).
            let line_start = memchr::memrchr(b'\n', &region[..at]).map_or(0, |end| end + 1);
            self.lines_of(&region[..line_start], events, summary)?;
            return Err(binary(self.spec, self.line + 1));
        }
        if self.texts != Texts::Kept {
            summary.texts.mark(self.line + 1, self.region_offset);
        }
        self.lines_of(region, events, summary)?;
        // A settings continuation at the start of the next region finds its entry here.
        if let Some(entry) = last_entry(region) {
            self.last_entry = Some(entry.to_string());
            self.entry_before.learned();
        }
        Ok(())
    }

    /// The lines of `region`: see `region`.
    fn lines_of(&mut self, region: &[u8], events: &mut Vec<Event>, summary: &mut InputSummary) -> Result<()> {
        let mut position = 0;
        let mut candidates = self.rules.candidates(region);
        while position < region.len() {
            let Some(hit) = candidates.find_at(position) else {
                return self.count_lines(&region[position..], summary);
            };
            let start = memchr::memrchr(b'\n', &region[position..hit]).map_or(position, |i| position + i + 1);
            self.count_lines(&region[position..start], summary)?;
            let end = memchr::memchr(b'\n', &region[start..]).map_or(region.len(), |i| start + i);
            self.line += 1;
            if self.too_long(&region[start..end], summary) {
                position = end + 1;
                continue;
            }
            self.candidate_line(&region[start..end], &region[..start], events, summary)?;
            position = end + 1;
        }
        Ok(())
    }

    /// Lines no rule can match: counted as blank, continuation (no leading timestamp) or noise.
    /// Only the first line that starts like a timestamp is checked in full, for its shape and
    /// its zone: a log whose zone is undeclared fails on its first entry, matched or not.
    fn count_lines(&mut self, lines: &[u8], summary: &mut InputSummary) -> Result<()> {
        let mut start = 0;
        // One iterator over the line ends: a search per line costs a call and a setup per line.
        let mut ends = memchr::memchr_iter(b'\n', lines);
        while start < lines.len() {
            let end = ends.next().unwrap_or(lines.len());
            let text = &lines[start..end];
            start = end + 1;
            self.line += 1;
            if self.too_long(text, summary) {
                continue;
            }
            match text.first() {
                None | Some(b'\r') if text.len() <= 1 => self.blank += 1,
                Some(first) if first.is_ascii_whitespace() => {
                    if text.iter().all(u8::is_ascii_whitespace) {
                        self.blank += 1;
                    } else {
                        self.continuation += 1;
                    }
                }
                Some(b'0'..=b'9' | b'[') if time::looks_like_date(text.strip_prefix(b"[").unwrap_or(text)) => {
                    if let Some(order) = &mut self.order {
                        self.last_placed = order.line_text(self.line, text);
                    }
                    if !self.first_stamp_checked {
                        match self.check_stamp(text) {
                            Err(problem) if self.keep_first_stamp_problem => {
                                self.first_stamp_problem = Some(problem);
                                self.first_stamp_checked = true;
                            }
                            checked => checked?,
                        }
                    }
                    self.stamped += 1;
                    self.noise += 1;
                }
                _ => self.continuation += 1,
            }
        }
        Ok(())
    }

    /// Whether the current line, `text`, is past the cap (then rejected). A line in a region is
    /// held already (`Chunks` passes over the ones that would grow it), but is past the cap all
    /// the same when the cap is below a region's size: it is rejected as a longer line would be.
    fn too_long(&self, text: &[u8], summary: &mut InputSummary) -> bool {
        let cap = self.spec.max_line_bytes;
        let past = text.len() > cap && text.strip_suffix(b"\r").unwrap_or(text).len() > cap;
        if past {
            summary.reject(self.line, crate::ingest::io::lines::too_long(cap));
        }
        past
    }

    /// The checks every entry of a line that matters gets, and the first entry of the log: its
    /// timestamp's shape (a malformed one is an error, never skipped) and a declared zone when it
    /// has no offset. The first such check also parses the timestamp in full.
    fn check_stamp(&mut self, text: &[u8]) -> Result<()> {
        match time::stamp_shape(text.strip_suffix(b"\r").unwrap_or(text)) {
            Shape::Malformed => {
                let reason = match time::leading_stamp(&String::from_utf8_lossy(text)) {
                    Leading::Malformed(reason) => reason,
                    _ => "malformed timestamp".to_string(),
                };
                Err(Error::input(&self.spec.path, Some(self.line), reason))
            }
            Shape::Stamped(has_offset) => {
                if !has_offset && self.spec.tz.is_none() {
                    let problem = time::ZoneProblem::Undeclared.explain(&self.spec.tz_fix);
                    return Err(Error::input(&self.spec.path, Some(self.line), problem));
                }
                if !self.first_stamp_checked
                    && let Leading::Malformed(reason) = time::leading_stamp(&String::from_utf8_lossy(text))
                {
                    return Err(Error::input(&self.spec.path, Some(self.line), reason));
                }
                self.first_stamp_checked = true;
                Ok(())
            }
            Shape::Blank | Shape::Absent => Ok(()),
        }
    }

    /// A line the candidate search touched: a line that matters unless it is not an entry or no
    /// rule matches its message after all. `before` is the region up to the line: a continuation
    /// that gives worker settings (a pretty-printed options dump) takes its entry's time from there.
    fn candidate_line(
        &mut self,
        text: &[u8],
        before: &[u8],
        events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<()> {
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        match time::stamp_shape(text) {
            Shape::Blank => self.blank += 1,
            Shape::Absent => {
                if !self.continued_settings(text, before, events, summary)? {
                    self.continuation += 1;
                }
            }
            Shape::Malformed | Shape::Stamped(_) => {
                self.check_stamp(text)?;
                self.stamped += 1;
                if !self.line_that_matters(text, events, summary)? {
                    self.noise += 1;
                }
            }
        }
        Ok(())
    }

    /// Parses and classifies a stamped line; `false` when it is noise after all.
    fn line_that_matters(&mut self, bytes: &[u8], events: &mut Vec<Event>, summary: &mut InputSummary) -> Result<bool> {
        let (spec, line) = (self.spec, self.line);
        let text = std::str::from_utf8(bytes).map_err(|_| binary(spec, line))?;
        let (stamp, rest) = match time::leading_stamp(text) {
            Leading::Found(stamp, rest) => (stamp, rest),
            Leading::Malformed(reason) => return Err(Error::input(&spec.path, Some(line), reason)),
            Leading::Absent => return Ok(false),
        };
        // Only here, on the lines the rules' search touched (a line whose ends were lost holds
        // many entries, so a rule's word is likely in it): no second pass over every line.
        let separator = bytes.get(usize::from(bytes.first() == Some(&b'[')) + 10).copied().unwrap_or(b' ');
        let stamps = 1 + stamps_in(&bytes[rest..], separator);
        if stamps >= crate::model::input::CROWDED_STAMPS {
            crate::model::input::Crowded::add(&mut summary.crowded, line, stamps);
        }
        // Every timestamped line counts for the order, whatever it is (as in `count_lines`).
        let placed = self.order.as_mut().map_or(Placed::Outside, |order| order.line_text(line, bytes));
        self.last_placed = placed;
        let message = &text[rest..];
        let found = self.rules.classify_candidate(message);
        let settings = match settle(parse_text(message), found.kind.is_none()) {
            Settled::Nothing => None,
            Settled::Event(settings) => Some(settings),
            Settled::Reject(reason) => {
                summary.reject(line, reason);
                return Ok(true);
            }
        };
        if found.kind.is_none() && settings.is_none() {
            return Ok(false);
        }
        let Some(at) = self.placed_at(placed, stamp, summary)? else { return Ok(true) };
        let origin = Origin {
            channel: crate::model::Channel::Log,
            source: self.source,
            line: crate::ingest::line_of(spec, line)?,
        };
        let pushed_before = events.len();
        if let Some(settings) = settings {
            let fields = if found.kind.is_some() { found.clone() } else { key_value_fields(message) };
            events.push(crate::ingest::log::worker_settings::event(at, origin, settings, &fields));
        }
        match found.kind {
            // A job line without its job is rejected, unless its settings are evidence.
            Some(kind) if kind.name().starts_with("job-") && found.job_id.is_none() && settings.is_none() => {
                summary.reject(
                    line,
                    format!("{} line without a job id (expected id=<job id> or 'job <id> ...')", kind.name()),
                );
                return Ok(true);
            }
            Some(kind) if kind.name().starts_with("job-") && found.job_id.is_none() => {}
            Some(kind) => {
                let mut event = Event::new(at, kind, origin);
                found.fill(&mut event);
                events.push(event);
            }
            None => {}
        }
        self.hold_if_pending(placed, pushed_before..events.len());
        summary.used();
        self.keep_text(origin.line, text, summary);
        Ok(true)
    }

    /// Keeps `text` as the text of `line` where the texts are kept (`Texts`).
    fn keep_text(&mut self, line: u32, text: &str, summary: &mut InputSummary) {
        match &mut self.texts {
            Texts::InFile => {}
            Texts::Kept => summary.texts.keep(line, text),
            Texts::KeptWithin { bytes } => {
                *bytes += text.len() + std::mem::size_of::<(u32, Box<str>)>();
                if *bytes <= self.spec.max_kept_bytes {
                    summary.texts.keep(line, text);
                } else {
                    summary.texts.forget_kept();
                    self.texts = Texts::InFile;
                }
            }
        }
    }

    /// The moment of the current line, placed at `placed` by the order (see `structured::placed_at`).
    fn placed_at(&self, placed: Placed, stamp: time::Stamp, summary: &mut InputSummary) -> Result<Option<Moment>> {
        crate::ingest::log::structured::placed_at(self.spec, self.line, placed, stamp, summary)
    }

    /// Gives the events just pushed for a line placed as pending to the order (`LineOrder::hold`).
    fn hold_if_pending(&mut self, placed: Placed, pushed: std::ops::Range<usize>) {
        if let (Placed::In { pending: true, .. }, Some(order)) = (placed, &mut self.order) {
            for index in pushed {
                order.hold(index);
            }
        }
    }

    /// A continuation line that gives worker settings (the options of a multi-line dump) becomes
    /// their event, at the time of its entry: the last line before it that starts with a
    /// timestamp. `false`: the line gives none, and is a plain continuation.
    fn continued_settings(
        &mut self,
        bytes: &[u8],
        before: &[u8],
        events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<bool> {
        let (spec, line) = (self.spec, self.line);
        let Ok(text) = std::str::from_utf8(bytes) else { return Ok(false) };
        let settings = match settle(parse_text(text), true) {
            Settled::Nothing => return Ok(false),
            Settled::Event(settings) => settings,
            Settled::Reject(reason) => {
                summary.reject(line, reason);
                return Ok(true);
            }
        };
        let entry = last_entry(before).or(self.last_entry.as_deref());
        let stamped = entry.and_then(|entry| match time::leading_stamp(entry) {
            Leading::Found(stamp, rest) => Some((stamp, &entry[rest..])),
            _ => None,
        });
        let Some((stamp, entry_message)) = stamped else {
            if entry.is_none() && self.entry_before == EntryBefore::Unknown {
                self.entry_before = EntryBefore::Needed;
            }
            summary.reject(
                line,
                "worker settings on a continuation line with no entry before it (no earlier line starts with a timestamp): log the settings on the entry's own line",
            );
            return Ok(true);
        };
        // The entry was the last timestamped line the order placed.
        let placed = self.last_placed;
        let Some(at) = self.placed_at(placed, stamp, summary)? else { return Ok(true) };
        let origin = Origin {
            channel: crate::model::Channel::Log,
            source: self.source,
            line: crate::ingest::line_of(spec, line)?,
        };
        let mut fields = key_value_fields(entry_message);
        let own = key_value_fields(text);
        fields.worker = fields.worker.or(own.worker);
        fields.queue = fields.queue.or(own.queue);
        events.push(crate::ingest::log::worker_settings::event(at, origin, settings, &fields));
        self.hold_if_pending(placed, events.len() - 1..events.len());
        summary.used();
        self.keep_text(origin.line, text, summary);
        Ok(true)
    }
}

/// The last line of `lines` that starts with a well-formed timestamp: the entry a continuation
/// after them belongs to.
fn last_entry(lines: &[u8]) -> Option<&str> {
    lines
        .strip_suffix(b"\n")
        .unwrap_or(lines)
        .rsplit(|&b| b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
        .find(|line| matches!(time::stamp_shape(line), Shape::Stamped(_)))
        .and_then(|line| std::str::from_utf8(line).ok())
}

fn binary(spec: &SourceSpec, line: u64) -> Error {
    crate::ingest::io::lines::binary(&spec.path, line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EventKind;
    use std::path::PathBuf;

    use crate::ingest::io::chunks::CHUNK;
    use crate::ingest::io::chunks::tests::Trickle;

    #[test]
    fn timestamps_in_the_lines_own_layout_are_counted_and_others_not() {
        let counted = |message: &str, separator: u8| stamps_in(message.as_bytes(), separator);
        assert_eq!(counted(" INFO a2026-10-07 09:33:01 INFO b\u{1e}2026-10-07 09:33:02.5 c", b' '), 2);
        // Another layout (`T`), a date alone, inside a longer number, ids with dashes: none.
        assert_eq!(counted(" deadline 2026-10-07T09:33:01Z", b' '), 0);
        assert_eq!(counted(" day 2026-10-07 run-0854-a job 12026-10-07 09:33:01", b' '), 0);
        assert_eq!(counted(" 2026-10-07T09:33:01Z 2026-10-07T09:33:02Z", b'T'), 2);
        // Read: a line with three is counted, with its count; a line with two is not.
        let text = "2026-10-07 09:33:00 server starting 2026-10-07 09:33:01 x 2026-10-07 09:33:02 y\n\
                    2026-10-07 09:34:00 server starting at 2026-10-07 09:33:59\n\
                    2026-10-07 09:35:00 server starting 2026-10-07 09:35:01 2026-10-07 09:35:02 2026-10-07 09:35:03\n";
        let (_, summary) = read(text, Some(chrono_tz::UTC)).unwrap();
        assert_eq!(summary.crowded, Some(crate::model::input::Crowded { lines: 2, first_line: 1, first_stamps: 3 }));
    }

    #[test]
    fn a_line_past_the_cap_is_passed_over_and_its_length_counted() {
        // Lines past the cap of 3 MiB: one longer than the buffer grows (passed over a block at a
        // time), one ending the input; lines under it, however long, come through whole.
        let long = |len: usize| std::iter::repeat_n(b'x', len).collect::<Vec<u8>>();
        let input =
            [b"a\n".to_vec(), long(7 * CHUNK + 5), b"\nb\n".to_vec(), long(2 * CHUNK), b"\n".to_vec(), long(4 * CHUNK)]
                .concat();
        for step in [1_000, 65_536, 3 * CHUNK] {
            let reader = std::io::BufReader::new(Trickle::new(input.clone(), step));
            let mut chunks = Chunks::new(Box::new(reader), 3 * CHUNK);
            let mut seen = Vec::new();
            while let Some(region) = chunks.next_region(std::path::Path::new("server.log"), 0).unwrap() {
                match region {
                    Region::Lines(lines) => seen.push(format!("{} bytes", lines.len())),
                    Region::TooLong(bytes) => seen.push(format!("passed {bytes}")),
                }
            }
            let whole = format!("{} bytes", 2 + 2 + 2 * CHUNK + 1);
            let expected =
                ["2 bytes".to_string(), format!("passed {}", 7 * CHUNK + 6), whole, format!("passed {}", 4 * CHUNK)];
            // However the lines under the cap come in regions, they are all there, in order.
            assert_eq!(seen.first(), Some(&expected[0]), "reads of {step} bytes");
            assert!(seen.contains(&expected[1]) && seen.last() == Some(&expected[3]), "reads of {step}: {seen:?}");
        }
        // Through a whole read: each rejected with its line, every line counted.
        let text =
            format!("2026-10-07 09:33:00 server starting\n{}\n2026-10-07 09:33:01 server starting\n", "y".repeat(5000));
        let spec = SourceSpec {
            max_line_bytes: 4096,
            ..SourceSpec::new(SourceKind::Log, PathBuf::from("server.log"), Some(chrono_tz::UTC), "--log-tz".into())
        };
        let mut events = Vec::new();
        let mut summary = InputSummary::new("server.log", "log", "text", spec.tz);
        ServerLog.read(&spec, 0, Box::new(std::io::Cursor::new(text.into_bytes())), &mut events, &mut summary).unwrap();
        assert_eq!((summary.lines, summary.used, summary.ignored, summary.rejected), (3, 2, 0, 1));
        assert_eq!(summary.rejections[0].line, 2);
        assert!(
            summary.rejections[0].reason.starts_with("line longer than 4 KiB (the limit;"),
            "{}",
            summary.rejections[0].reason
        );
    }

    fn read(text: &str, tz: Option<chrono_tz::Tz>) -> Result<(Vec<Event>, InputSummary)> {
        let spec = SourceSpec::new(SourceKind::Log, PathBuf::from("server.log"), tz, "--log-tz".into());
        let mut events = Vec::new();
        let mut summary = InputSummary::new("server.log", "log", "text", tz);
        ServerLog.read(&spec, 0, Box::new(std::io::Cursor::new(text.to_string())), &mut events, &mut summary)?;
        Ok((events, summary))
    }

    /// `text` read as a plain file, in two parts when `split_at_least` allows, or in one.
    fn read_file(text: &str, tz: Option<chrono_tz::Tz>, split_at_least: u64) -> Result<(Vec<Event>, InputSummary)> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("server.log");
        std::fs::write(&path, text).unwrap();
        let spec = SourceSpec {
            reread: crate::ingest::Reread::Seek,
            ..SourceSpec::new(SourceKind::Log, path.clone(), tz, "--log-tz".into())
        };
        let mut events = Vec::new();
        let mut summary = InputSummary::new("server.log", "log", "text", tz);
        let reopen = Reopen { path: &path, bar: None, lone_cr: true, growth: None };
        read_in_parts(&spec, 0, reopen.at(0)?, &reopen, split_at_least, &mut events, &mut summary)?;
        // Every event's line is found again in the file by the marks the read left.
        let lines: Vec<&str> = text.split('\n').collect();
        let texts = std::mem::take(&mut summary.texts);
        assert!(texts.is_in_file() || events.is_empty());
        for (line, read) in crate::ingest::io::read_back::every_event_read_back(&spec, &events, texts)? {
            assert_eq!(read, lines[line as usize - 1].trim_end_matches('\r'), "line {line}");
        }
        Ok((events, summary))
    }

    /// `text` read as standard input is: copied while it is read, the copy read in two parts as
    /// it grows when `split_at_least` allows (`spool::Growth`). `settled`: the copy is whole
    /// before the first part starts, so a second part starts where a file's would. Also says
    /// whether a second part was read.
    fn read_piped(
        text: &str,
        tz: Option<chrono_tz::Tz>,
        split_at_least: u64,
        settled: bool,
    ) -> Result<((Vec<Event>, InputSummary), bool)> {
        use crate::ingest::io::spool::{Growth, Spool};
        let dir = tempfile::tempdir().unwrap();
        let spool = std::sync::Arc::new(Spool::copy_in(std::path::Path::new("-"), dir.path().to_path_buf()).unwrap());
        let spec = SourceSpec {
            reread: crate::ingest::Reread::Seek,
            spool: Some(std::sync::Arc::clone(&spool)),
            ..SourceSpec::new(SourceKind::Log, PathBuf::from("server.log"), tz, "--log-tz".into())
        };
        let source = std::io::Cursor::new(text.as_bytes().to_vec());
        let (growth, copy) = Growth::start(Box::new(source), &spool).unwrap();
        if settled {
            growth.wait_ended();
        }
        let mut events = Vec::new();
        let mut summary = InputSummary::new("server.log", "log", "text", tz);
        let reopen = Reopen { path: spool.path(), bar: None, lone_cr: true, growth: Some(&growth) };
        let input = Box::new(crate::ingest::io::lines::LineEnds::new(std::io::BufReader::new(copy)));
        read_in_parts(&spec, 0, input, &reopen, split_at_least, &mut events, &mut summary)?;
        every_text_is_its_line(&spec, &events, std::mem::take(&mut summary.texts), text)?;
        Ok(((events, summary), growth.middle() != u64::MAX))
    }

    /// `text` read as a stream with no copy is (`read_streamed`), through reads of a few KiB, cut in
    /// segments of `segment` bytes, the texts kept while they take at most `most` bytes. Every
    /// event's text, kept or read back from the copy, is its line. Also says whether a copy was
    /// started.
    fn read_streamed_text(
        text: &str,
        tz: Option<chrono_tz::Tz>,
        segment: usize,
        most: usize,
    ) -> Result<((Vec<Event>, InputSummary), bool)> {
        use crate::ingest::io::spool::Spool;
        let dir = tempfile::tempdir().unwrap();
        let spool = std::sync::Arc::new(Spool::copy_in(std::path::Path::new("-"), dir.path().to_path_buf()).unwrap());
        let spec = SourceSpec {
            reread: crate::ingest::Reread::No,
            spool: Some(std::sync::Arc::clone(&spool)),
            max_kept_bytes: most,
            ..SourceSpec::new(SourceKind::Log, PathBuf::from("server.log"), tz, "--log-tz".into())
        };
        let trickle = crate::ingest::io::chunks::tests::Trickle::new(text.as_bytes().to_vec(), 4099);
        let input = Box::new(crate::ingest::io::lines::LineEnds::new(std::io::BufReader::new(trickle)));
        let mut events = Vec::new();
        let mut summary = InputSummary::new("server.log", "log", "text", tz);
        read_streamed(&spec, 0, input, spool.path(), segment, &mut events, &mut summary)?;
        let texts = std::mem::take(&mut summary.texts);
        let copied = texts.is_in_file();
        every_text_is_its_line(&spec, &events, texts, text)?;
        Ok(((events, summary), copied))
    }

    /// Asserts that every event's text, as the report gives it (kept, or read back), is its line
    /// of `text`.
    fn every_text_is_its_line(
        spec: &SourceSpec,
        events: &[Event],
        texts: crate::model::LineTexts,
        text: &str,
    ) -> Result<()> {
        let lines: Vec<&str> = text.split('\n').collect();
        for (line, read) in crate::ingest::io::read_back::every_event_read_back(spec, events, texts)? {
            assert_eq!(read, lines[line as usize - 1].trim_end_matches('\r'), "line {line}");
        }
        Ok(())
    }

    /// An error from the file `read_file` wrote, from its name on (the folder is a new one each time).
    fn in_file(error: &Error) -> String {
        let error = error.to_string();
        error[error.find("server.log").unwrap()..].to_string()
    }

    /// A log of every kind of line: entries that matter, rejected ones (no job id), noise, blank
    /// lines and stack traces, `n` entries long.
    fn mixed_log(n: usize) -> String {
        use std::fmt::Write;
        let mut text = String::new();
        for i in 0..n {
            let at = format!("2026-10-07 09:{:02}:{:02}.{:03}", i / 60 % 60, i % 60, i % 1000);
            match i % 7 {
                0 => writeln!(text, "{at} INFO [worker] job active queue=q name=sweep id={i} pid=41877"),
                // Rejected (no job id) a few times, in the second half only.
                1 if i > n / 2 && i % 49 == 1 => writeln!(text, "{at} INFO [worker] job completed queue=q name=sweep"),
                1 => writeln!(text, "{at} INFO [worker] job completed queue=q name=sweep id={i}"),
                2 => writeln!(text, "{at} ERROR [api] request failed\n    at Object.<anonymous> (/app/main.js:{i}:1)"),
                3 => writeln!(text, "\n{at} DEBUG cache hit key=k{i}"),
                _ => writeln!(text, "{at} INFO GET /api/jobs/active 200 {i}ms"),
            }
            .unwrap();
        }
        text
    }

    #[test]
    fn a_log_read_in_two_parts_gives_the_events_and_account_of_one_read() {
        // A first line of growing length moves the middle over every byte of a few lines (an
        // entry, a stack trace, a blank line): the part after it counts its lines from 1.
        for pad in (0..240).step_by(2) {
            let text = format!("2026-10-07 09:00:00.000 INFO {}\n{}", "x".repeat(pad), mixed_log(600));
            let whole = read_file(&text, Some(chrono_tz::Asia::Seoul), u64::MAX).unwrap();
            let parts = read_file(&text, Some(chrono_tz::Asia::Seoul), 1).unwrap();
            assert!(parts.0 == whole.0, "first line padded by {pad}");
            assert_eq!(parts.1, whole.1);
            assert!(
                whole.0.len() > 200 && whole.1.rejected > 5 && whole.1.ignored_by_reason.len() == 3,
                "{:?}",
                whole.1
            );
        }
    }

    #[test]
    fn a_piped_log_is_read_in_two_parts_as_it_comes_with_the_events_and_account_of_one_read() {
        // The first part takes a MiB at a time: a few MiB leave a second part something to read.
        // Its lines span the ends of the copy's blocks (128 KiB) and of the parts' (1 MiB).
        let text = mixed_log(60_000);
        assert!(text.len() > 3 << 20, "{}", text.len());
        let whole = read_file(&text, Some(chrono_tz::Asia::Seoul), u64::MAX).unwrap();
        for settled in [true, false] {
            let (piped, split) = read_piped(&text, Some(chrono_tz::Asia::Seoul), 1, settled).unwrap();
            assert!(piped.0 == whole.0, "settled: {settled}");
            assert_eq!(piped.1, whole.1);
            assert!(split || !settled, "a pipe's whole copy is read in two parts");
        }
        let (one, split) = read_piped(&text, Some(chrono_tz::Asia::Seoul), u64::MAX, true).unwrap();
        assert!(!split && one.0 == whole.0);
        assert_eq!(one.1, whole.1);
    }

    #[test]
    fn a_log_read_as_a_stream_in_segments_gives_the_events_and_account_of_one_read() {
        // Segments from a few lines to more than the log, each parsed on its own: their lines
        // counted from 1 and renumbered, blank lines, stack traces and rejections across their
        // ends; the texts kept, or past the most read back from the copy from a segment on.
        let text = mixed_log(6_000);
        let whole = read_file(&text, Some(chrono_tz::Asia::Seoul), u64::MAX).unwrap();
        for (segment, most, copied) in [
            (700, usize::MAX, false),
            (4_096, usize::MAX, false),
            (65_536, usize::MAX, false),
            (1 << 22, usize::MAX, false),
            (4_096, 2_000, true),
            (16_384, 30_000, true),
            (4_096, 0, true),
        ] {
            let (streamed, copy) = read_streamed_text(&text, Some(chrono_tz::Asia::Seoul), segment, most).unwrap();
            assert!(streamed.0 == whole.0, "segments of {segment}, {most} kept");
            assert_eq!(streamed.1.lines, whole.1.lines);
            let mut account = streamed.1.clone();
            account.texts = whole.1.texts.clone();
            assert_eq!(account, whole.1, "segments of {segment}");
            assert_eq!(copy, copied, "segments of {segment}, {most} kept");
        }
    }

    #[test]
    fn worker_settings_on_a_continuation_find_their_entry_in_the_part_or_segment_before() {
        // One entry, then a long dump of continuation lines with settings in it far after the
        // middle: a second part or a later segment starts among them, with no entry of its own.
        use std::fmt::Write;
        let mut text = "2026-10-07 09:29:58.300 DEBUG [Config] worker options: queue=pr-review\n".to_string();
        for n in 0..3_000 {
            writeln!(text, "  \"option{n}\": {n},").unwrap();
        }
        text += "  lockDuration=30000\n";
        text += &"  \"more\": 1,\n".repeat(200);
        let whole = read_file(&text, Some(chrono_tz::Asia::Seoul), u64::MAX).unwrap();
        let settings: Vec<u32> =
            whole.0.iter().filter(|e| e.kind == EventKind::WorkerSettings).map(|e| e.origin().line).collect();
        assert_eq!(settings, [3_002], "{:?}", whole.1.rejections);
        let parts = read_file(&text, Some(chrono_tz::Asia::Seoul), 1).unwrap();
        assert!(parts.0 == whole.0);
        assert_eq!(parts.1, whole.1);
        for segment in [500, 4_096, 30_000] {
            let (streamed, _) = read_streamed_text(&text, Some(chrono_tz::Asia::Seoul), segment, usize::MAX).unwrap();
            assert!(streamed.0 == whole.0, "segments of {segment}");
            assert_eq!(streamed.1, whole.1, "segments of {segment}");
        }
    }

    #[test]
    fn an_error_in_a_later_segment_of_a_stream_names_its_line() {
        let mut text = mixed_log(3_000);
        let line = text[..text.len() * 3 / 4].matches('\n').count() + 1;
        let at = text.match_indices('\n').nth(line - 2).unwrap().0 + 1;
        text.insert_str(at, "2026-10-07 09:61:00 INFO job active id=7\n");
        let whole = in_file(&read_file(&text, Some(chrono_tz::Asia::Seoul), u64::MAX).unwrap_err());
        assert!(whole.starts_with(&format!("server.log:{line}: malformed timestamp")), "{whole}");
        for segment in [1_000, 30_000] {
            let streamed = read_streamed_text(&text, Some(chrono_tz::Asia::Seoul), segment, usize::MAX).unwrap_err();
            assert_eq!(streamed.to_string(), whole, "segments of {segment}");
        }
        // A NUL byte far in: the line it is on.
        let mut binary = mixed_log(3_000);
        let line = binary[..binary.len() * 2 / 3].matches('\n').count() + 1;
        let at = binary.match_indices('\n').nth(line - 2).unwrap().0 + 1;
        binary.insert(at + 5, '\0');
        let whole = in_file(&read_file(&binary, Some(chrono_tz::Asia::Seoul), u64::MAX).unwrap_err());
        let streamed = read_streamed_text(&binary, Some(chrono_tz::Asia::Seoul), 2_000, usize::MAX).unwrap_err();
        assert!(whole.starts_with(&format!("server.log:{line}:")), "{whole}");
        assert_eq!(streamed.to_string(), whole);
        // No timestamp in the first segments: the first one after them is checked in full.
        let mut undeclared = "    at Object.<anonymous> (/app/main.js:1:1)\n".repeat(2_000);
        undeclared += &"2026-10-07 09:33:00.100 INFO GET /healthz 200 1ms\n".repeat(2_000);
        let whole = in_file(&read_file(&undeclared, None, u64::MAX).unwrap_err());
        let streamed = read_streamed_text(&undeclared, None, 3_000, usize::MAX).unwrap_err();
        assert!(whole.starts_with("server.log:2001: timestamp has no UTC offset"), "{whole}");
        assert_eq!(streamed.to_string(), whole);
    }

    #[test]
    fn a_stream_across_the_fall_back_is_placed_by_line_order_whichever_segment_a_line_is_in() {
        // Every segment size from a line to the whole log: segments that start inside the
        // repeated hour, or after lines that end inside one the log began in, are read on from
        // the lines before them.
        use std::fmt::Write;
        let mut text = String::new();
        for minute in 0..60 {
            writeln!(text, "2026-11-01 00:{minute:02}:00.000 INFO [worker] job active queue=q id=b{minute}").unwrap();
        }
        for pass in 0..2 {
            for minute in (0..60).step_by(3) {
                writeln!(
                    text,
                    "2026-11-01 01:{minute:02}:00.000 INFO [worker] job completed queue=q id=f{pass}{minute}"
                )
                .unwrap();
                text += "    at a stack frame\n";
            }
        }
        text += AFTER;
        text += "\n";
        // A log that starts inside the hour, and one that ends inside it.
        let starts_inside = text[text.find("2026-11-01 01:").unwrap()..].to_string();
        let ends_inside = text[..text.rfind("2026-11-01 01:30").unwrap()].to_string();
        for log in [&text, &starts_inside, &ends_inside] {
            let whole = read_file(log, Some(LA), u64::MAX).unwrap();
            for segment in (60..log.len() + 200).step_by(97) {
                let (streamed, _) = read_streamed_text(log, Some(LA), segment, usize::MAX).unwrap();
                assert!(streamed.0 == whole.0, "segments of {segment}");
                assert_eq!(streamed.1, whole.1, "segments of {segment}");
            }
            assert!(whole.1.folds.len() == 1, "{:?}", whole.1.folds);
        }
    }

    #[test]
    fn an_error_in_the_second_part_of_a_piped_log_names_its_line() {
        let mut text = mixed_log(2_000);
        let line = text[..text.len() * 3 / 4].matches('\n').count() + 1;
        let at = text.match_indices('\n').nth(line - 2).unwrap().0 + 1;
        text.insert_str(at, "2026-10-07 09:61:00 INFO job active id=7\n");
        let whole = in_file(&read_file(&text, Some(chrono_tz::Asia::Seoul), u64::MAX).unwrap_err());
        // Long enough for a second part (the first takes a MiB at a time), the error in it.
        let tail = mixed_log(40_000).replace("09:61", "09:59");
        text.push_str(&tail);
        let piped = in_file(&read_piped(&text, Some(chrono_tz::Asia::Seoul), 1, true).unwrap_err());
        assert!(whole.starts_with(&format!("server.log:{line}: malformed timestamp")), "{whole}");
        assert_eq!(piped, whole);
    }

    #[test]
    fn an_error_in_the_second_part_names_its_line_in_the_file() {
        let mut text = mixed_log(2_000);
        let line = text[..text.len() * 3 / 4].matches('\n').count() + 1;
        let at = text.match_indices('\n').nth(line - 2).unwrap().0 + 1;
        text.insert_str(at, "2026-10-07 09:61:00 INFO job active id=7\n");
        let whole = in_file(&read_file(&text, Some(chrono_tz::Asia::Seoul), u64::MAX).unwrap_err());
        let parts = in_file(&read_file(&text, Some(chrono_tz::Asia::Seoul), 1).unwrap_err());
        assert!(whole.starts_with(&format!("server.log:{line}: malformed timestamp")), "{whole}");
        assert_eq!(parts, whole);
    }

    #[test]
    fn the_first_timestamp_is_checked_in_full_once_even_in_the_second_part() {
        // The first part has no timestamp: the second part's first one is the log's first, and
        // its missing zone is the log's error, at its line.
        let mut text = "    at Object.<anonymous> (/app/main.js:1:1)\n".repeat(2_000);
        let first_line = 2_001;
        text += &"2026-10-07 09:33:00.100 INFO GET /healthz 200 1ms\n".repeat(2_000);
        let whole = in_file(&read_file(&text, None, u64::MAX).unwrap_err());
        let parts = in_file(&read_file(&text, None, 1).unwrap_err());
        assert!(whole.starts_with(&format!("server.log:{first_line}: timestamp has no UTC offset")), "{whole}");
        assert_eq!(parts, whole);
        // The first part has one: the second part's first noise line is not checked again (a
        // malformed time there is noise, as in one read). It is put where the second part starts.
        let malformed = "2026-13-45 99:99:99 INFO GET /healthz 200 1ms\n";
        let base = mixed_log(2_000);
        let text = base
            .match_indices('\n')
            .map(|(at, _)| {
                let mut text = base.clone();
                text.insert_str(at + 1, malformed);
                (at + 1, text)
            })
            .find(|(at, text)| {
                let middle = text.len() / 2;
                middle < *at && text[middle..*at].find('\n') == Some(*at - 1 - middle)
            })
            .map(|(_, text)| text)
            .unwrap();
        let whole = read_file(&text, Some(chrono_tz::Asia::Seoul), u64::MAX).unwrap();
        let parts = read_file(&text, Some(chrono_tz::Asia::Seoul), 1).unwrap();
        assert!(parts.0 == whole.0);
        assert_eq!(parts.1, whole.1);
    }

    const LA: chrono_tz::Tz = chrono_tz::America::Los_Angeles;

    /// Reads `text` whole and in two parts split at the first line after every place a padded first
    /// line `first` moves the middle to (over all of `text` and back), and asserts both give the
    /// same events, account and notes. Returns the whole read, and whether a split fell inside the
    /// repeated hour and outside it.
    fn same_in_two_parts(first: &str, text: &str, tail: &str) -> ((Vec<Event>, InputSummary), (bool, bool)) {
        let whole = read_file(&format!("{first}\n{text}"), Some(LA), u64::MAX).unwrap();
        let fold = crate::time::fold::Fold::meeting(LA, chrono::NaiveDate::from_ymd_opt(2026, 11, 1).unwrap()).unwrap();
        let (mut inside, mut outside) = (false, false);
        // Text after the middle: the middle moves back over every line as the first line grows.
        let tail = format!("{tail}\n").repeat((first.len() + text.len()) / tail.len() + 1);
        // Lines are 40 bytes or more: steps of 8 bytes of the middle meet each.
        for pad in (0..2 * (first.len() + text.len() + 2)).step_by(16) {
            let padded = format!("{first} {}\n{text}{tail}", "x".repeat(pad));
            let one = read_file(&padded, Some(LA), u64::MAX).unwrap();
            let parts = read_file(&padded, Some(LA), 1).unwrap();
            assert!(parts.0 == one.0, "padded by {pad}");
            assert_eq!(parts.1, one.1, "padded by {pad}");
            let newline = padded[padded.len() / 2..].find('\n').unwrap() + padded.len() / 2;
            let at = chrono::NaiveDateTime::parse_from_str(&padded[newline + 1..newline + 24], "%Y-%m-%d %H:%M:%S%.3f");
            if at.is_ok_and(|at| fold.contains(at)) {
                inside = true;
            } else {
                outside = true;
            }
        }
        (whole, (inside, outside))
    }

    /// A line after the repeated hour.
    const AFTER: &str = "2026-11-01 03:00:00.000 INFO GET /healthz 200 1ms";

    fn times(events: &[Event]) -> Vec<String> {
        events.iter().map(|e| crate::time::format_rfc3339(e.at())).collect()
    }

    #[test]
    fn a_log_across_the_fall_back_is_placed_by_line_order_whichever_part_a_line_is_in() {
        let text = "2026-11-01 00:59:59.500 INFO [worker] job active queue=q id=a1\n\
                    2026-11-01 01:00:00.250 INFO GET /healthz 200 1ms\n\
                    2026-11-01 01:30:00.000 INFO [worker] job completed queue=q id=a1\n\
                    2026-11-01 01:59:59.900 INFO [worker] job active queue=q id=a2\n\
                    2026-11-01 01:59:59.890 INFO GET /healthz 200 1ms\n\
                    2026-11-01 01:00:00.100 INFO [worker] job completed queue=q id=a2\n\
                    2026-11-01 01:00:00.200 INFO GET /healthz 200 1ms\n\
                    2026-11-01 01:30:00.300 INFO [worker] job active queue=q id=a3\n\
                    \x20   at Object.<anonymous> (/app/main.js:1:1)\n\
                    2026-11-01 01:59:59.999 INFO GET /healthz 200 1ms\n\
                    2026-11-01 02:00:00.100 INFO [worker] job completed queue=q id=a3\n";
        let ((events, summary), (inside, outside)) = same_in_two_parts("2026-11-01 00:10:00.000 INFO", text, AFTER);
        assert!(inside && outside, "splits inside and outside the hour");
        assert_eq!(
            times(&events),
            [
                "2026-11-01T07:59:59.500Z",
                "2026-11-01T08:30:00.000Z",
                "2026-11-01T08:59:59.900Z",
                "2026-11-01T09:00:00.100Z",
                "2026-11-01T09:30:00.300Z",
                "2026-11-01T10:00:00.100Z",
            ]
        );
        assert_eq!(
            crate::time::fold::notes("server.log", crate::time::Ambiguous::Order, &summary.folds),
            [
                "server.log: 8 lines in the repeated hour 01:00–02:00 PDT/PST on 2026-11-01 (America/Los_Angeles) resolved by line order: 4 as PDT (first pass, lines 3–6), 4 as PST (second pass, lines 7–11)"
            ]
        );
    }

    #[test]
    fn a_log_that_ends_inside_the_hour_is_placed_the_same_in_two_parts() {
        // The first pass, to the end: a second part that starts in it cannot tell on its own.
        let text = "2026-11-01 01:10:00.000 INFO [worker] job active queue=q id=d1\n\
                    2026-11-01 01:20:00.000 INFO GET /healthz 200 1ms\n\
                    2026-11-01 01:30:00.000 INFO [worker] job completed queue=q id=d1\n";
        let tail = "2026-11-01 01:40:00.000 INFO [worker] job active queue=q id=d2";
        let ((events, summary), (inside, _)) = same_in_two_parts("2026-11-01 00:50:00.000 INFO", text, tail);
        assert!(inside);
        assert_eq!(times(&events), ["2026-11-01T08:10:00.000Z", "2026-11-01T08:30:00.000Z"]);
        assert_eq!(summary.folds[0].second.count, 0);
    }

    #[test]
    fn a_log_that_starts_inside_the_hour_is_placed_the_same_in_two_parts() {
        // A step back: the lines before it were the first pass (the middle falls in them too).
        let text = "2026-11-01 01:20:00.000 INFO [worker] job active queue=q id=b1\n\
                    2026-11-01 01:40:00.000 INFO GET /healthz 200 1ms\n\
                    2026-11-01 01:59:00.000 INFO [worker] job completed queue=q id=b1\n\
                    2026-11-01 01:05:00.000 INFO [worker] job active queue=q id=b2\n\
                    2026-11-01 01:50:00.000 INFO [worker] job completed queue=q id=b2\n\
                    2026-11-01 02:10:00.000 INFO GET /healthz 200 1ms\n";
        let ((events, _), (inside, outside)) = same_in_two_parts("2026-11-01 01:10:00.000 INFO", text, AFTER);
        assert!(inside && outside);
        assert_eq!(
            times(&events),
            [
                "2026-11-01T08:20:00.000Z",
                "2026-11-01T08:59:00.000Z",
                "2026-11-01T09:05:00.000Z",
                "2026-11-01T09:50:00.000Z"
            ]
        );
        // No step back before the hour ends: the second pass.
        let text = "2026-11-01 01:20:00.000 INFO [worker] job active queue=q id=c1\n\
                    2026-11-01 01:40:00.000 INFO [worker] job completed queue=q id=c1\n\
                    2026-11-01 02:10:00.000 INFO GET /healthz 200 1ms\n\
                    2026-11-01 02:20:00.000 INFO [worker] job active queue=q id=c2\n";
        let ((events, summary), _) = same_in_two_parts("2026-11-01 01:10:00.000 INFO", text, AFTER);
        assert_eq!(
            times(&events),
            ["2026-11-01T09:20:00.000Z", "2026-11-01T09:40:00.000Z", "2026-11-01T10:20:00.000Z"]
        );
        assert_eq!((summary.folds[0].first.count, summary.folds[0].second.count), (0, 3));
    }

    #[test]
    fn a_log_all_inside_the_hour_is_an_error_naming_the_setting_in_one_part_or_two() {
        use std::fmt::Write;
        let mut text = String::new();
        for i in 0..50 {
            let minute = i + 5;
            writeln!(text, "2026-11-01 01:{minute:02}:00.000 INFO [worker] job active queue=q id={i}").unwrap();
            writeln!(text, "2026-11-01 01:{minute:02}:30.000 INFO GET /healthz 200 1ms").unwrap();
        }
        let whole = in_file(&read_file(&text, Some(LA), u64::MAX).unwrap_err());
        let parts = in_file(&read_file(&text, Some(LA), 1).unwrap_err());
        assert_eq!(parts, whole);
        assert!(whole.starts_with("server.log:1: every timestamped line of the log (100 lines, 1–100) is in the repeated hour 01:00–02:00 PDT/PST on 2026-11-01 (America/Los_Angeles)"), "{whole}");
        assert!(whole.ends_with("say which with --log-ambiguous earlier or --log-ambiguous later"), "{whole}");
    }

    #[test]
    fn ambiguous_times_take_the_choice_of_the_source() {
        let text = "2026-11-01 01:30:00.000 INFO [worker] job active queue=q id=7\n";
        let read_as = |choice| {
            let spec = SourceSpec {
                ambiguous: choice,
                ..SourceSpec::new(SourceKind::Log, PathBuf::from("server.log"), Some(LA), "--log-tz".into())
            };
            let mut events = Vec::new();
            let mut summary = InputSummary::new("server.log", "log", "text", Some(LA));
            ServerLog.read(&spec, 0, Box::new(std::io::Cursor::new(text)), &mut events, &mut summary).map(|()| events)
        };
        assert_eq!(times(&read_as(crate::time::Ambiguous::Earlier).unwrap()), ["2026-11-01T08:30:00.000Z"]);
        assert_eq!(times(&read_as(crate::time::Ambiguous::Later).unwrap()), ["2026-11-01T09:30:00.000Z"]);
        let error = read_as(crate::time::Ambiguous::Error).unwrap_err().to_string();
        assert!(error.starts_with("server.log:1: local time occurs twice in America/Los_Angeles"), "{error}");
        assert!(
            error.ends_with("say which time it is with --log-ambiguous earlier or --log-ambiguous later"),
            "{error}"
        );
    }

    #[test]
    fn a_time_in_the_spring_forward_gap_is_rejected_with_its_reason() {
        let (events, summary) = read(
            "2026-03-08 01:59:59.000 INFO [worker] job active queue=q id=7\n\
             2026-03-08 02:30:00.000 INFO [worker] job completed queue=q id=7\n\
             2026-03-08 02:30:00.000 INFO GET /healthz 200 1ms\n\
             2026-03-08 03:00:01.000 INFO [worker] job active queue=q id=8\n",
            Some(LA),
        )
        .unwrap();
        assert_eq!(times(&events), ["2026-03-08T09:59:59.000Z", "2026-03-08T10:00:01.000Z"]);
        assert_eq!((summary.lines, summary.used, summary.ignored, summary.rejected), (4, 2, 1, 1));
        assert_eq!(summary.rejections[0].line, 2);
        assert_eq!(
            summary.rejections[0].reason,
            "local time does not exist in America/Los_Angeles (daylight-saving gap); is the declared zone right?"
        );
    }

    #[test]
    fn every_line_is_accounted_for() {
        let (events, summary) = read(
            "2026-10-07 09:33:00.004 INFO [worker] job active queue=q name=sweep id=7 pid=41877\n\
             2026-10-07 09:33:00.100 INFO GET /healthz 200 1ms\n\
             \n    at Object.<anonymous> (/app/main.js:1:1)\n\
             2026-10-07 09:33:01.000 INFO [worker] job active queue=q name=sweep\n",
            Some(chrono_tz::Asia::Seoul),
        )
        .unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].kind, EventKind::JobActive);
        assert_eq!(events[0].at().to_rfc3339(), "2026-10-07T00:33:00.004+00:00");
        assert_eq!((summary.lines, summary.used, summary.ignored, summary.rejected), (5, 1, 3, 1));
        assert_eq!(summary.ignored_by_reason["noise"], 1);
        assert_eq!(summary.ignored_by_reason["continuation"], 1);
        assert_eq!(summary.rejections[0].line, 5);
    }

    #[test]
    fn undeclared_zone_names_the_flag() {
        let error = read("2026-10-07 09:33:00 INFO job active id=7\n", None).unwrap_err().to_string();
        assert!(error.starts_with("server.log:1: timestamp has no UTC offset"), "{error}");
        assert!(error.contains("--log-tz"), "{error}");
    }

    #[test]
    fn lines_with_offsets_need_no_declared_zone() {
        let (events, _) = read("2026-10-07T00:33:00Z INFO job active id=7\n", None).unwrap();
        assert_eq!(events[0].at().to_rfc3339(), "2026-10-07T00:33:00+00:00");
    }

    #[test]
    fn the_zone_is_checked_on_the_first_entry_even_when_it_is_noise() {
        let error = read("2026-10-07 09:33:00 INFO GET /healthz 200\n", None).unwrap_err().to_string();
        assert!(error.starts_with("server.log:1: timestamp has no UTC offset"), "{error}");
        let error = read("2026-13-45 09:33:00 INFO GET /healthz 200\n", Some(chrono_tz::UTC)).unwrap_err().to_string();
        assert!(error.starts_with("server.log:1:"), "{error}");
    }

    #[test]
    fn a_candidate_running_past_its_line_does_not_hide_the_next_line() {
        // `job\s+<token>\s+<verb>` could run from "job" at the end of line 1 into line 2: line 1
        // is classified (noise), and line 2 is still found and classified on its own.
        let (events, summary) = read(
            "2026-10-07 09:33:00.000 INFO next job\n2026-10-07 09:33:01.000 INFO job 7 active queue=q\n",
            Some(chrono_tz::UTC),
        )
        .unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].origin().line, 2);
        assert_eq!(events[0].job_id.as_deref(), Some("7"));
        assert_eq!((summary.lines, summary.used, summary.ignored_by_reason["noise"]), (2, 1, 1));
    }

    #[test]
    fn worker_settings_are_read_from_entries_and_from_an_options_dump_after_one() {
        let (events, summary) = read(
            "2026-10-07 09:29:58.104 INFO  [BullWorker] worker ready queue=pr-review pid=41877 lockDuration=12000ms, stalledInterval=5000ms, maxStalledCount=1\n\
             2026-10-07 09:29:58.200 INFO  [main] server starting pid=41877 lock_duration_ms=12000\n\
             2026-10-07 09:29:58.300 DEBUG [Config] worker options:\n\
             {\n  \"concurrency\": 2,\n  \"lockDuration\": 12000,\n  \"stalledInterval\": 5000\n}\n\
             2026-10-07 09:29:58.400 WARN  [Config] lockDuration=undefined\n\
             2026-10-07 09:29:58.500 INFO  [Docs] increase lockDuration to avoid stalls\n",
            Some(chrono_tz::Asia::Seoul),
        )
        .unwrap();
        let settings: Vec<(u32, crate::model::WorkerSettings)> = events
            .iter()
            .filter(|e| e.kind == EventKind::WorkerSettings)
            .map(|e| (e.origin().line, e.settings().unwrap()))
            .collect();
        assert_eq!(settings.len(), 4, "{settings:?}");
        assert_eq!(settings[0].0, 1);
        assert_eq!(
            (settings[0].1.lock_duration, settings[0].1.stalled_interval, settings[0].1.max_stalled_count),
            (Some(12_000), Some(5_000), Some(1))
        );
        let first = events.iter().find(|e| e.kind == EventKind::WorkerSettings).unwrap();
        assert_eq!((first.worker.as_deref(), first.queue.as_deref()), (Some("41877"), Some("pr-review")));
        assert_eq!(first.at().to_rfc3339(), "2026-10-07T00:29:58.104+00:00");
        // A process start that names a setting is both events, from one used line.
        let line_2: Vec<EventKind> = events.iter().filter(|e| e.origin().line == 2).map(|e| e.kind).collect();
        assert_eq!(line_2.len(), 2);
        assert!(line_2.contains(&EventKind::ProcessStart) && line_2.contains(&EventKind::WorkerSettings));
        // The dump's lines are continuations of the 09:29:58.300 entry.
        let dumped: Vec<&Event> = events.iter().filter(|e| [6, 7].contains(&e.origin().line)).collect();
        assert_eq!(dumped.len(), 2);
        assert!(dumped.iter().all(|e| e.at().to_rfc3339() == "2026-10-07T00:29:58.300+00:00"));
        // An unreadable value is a rejection with its reason; prose is noise.
        assert_eq!(summary.rejections.len(), 1);
        assert_eq!(summary.rejections[0].line, 9);
        assert!(summary.rejections[0].reason.contains("lockDuration=undefined"), "{:?}", summary.rejections);
        assert_eq!(summary.lines, summary.used + summary.ignored + summary.rejected);
        assert_eq!((summary.used, summary.ignored_by_reason["continuation"]), (4, 3));
    }

    #[test]
    fn a_settings_continuation_finds_its_entry_in_an_earlier_region_and_reads_the_same_in_two_parts() {
        // The dump's entry is far before it (a region is 1 MiB): read whole and in two parts, the
        // settings line has the entry's time.
        use std::fmt::Write;
        let mut text = String::from("2026-10-07 09:29:58.300 DEBUG [Config] worker options:\n");
        for n in 0..40_000 {
            writeln!(text, "    \"padding{n}\": \"xxxxxxxxxxxxxxxxxx\",").unwrap();
        }
        text.push_str("    \"lockDuration\": 12000\n");
        text.push_str(&mixed_log(2_000));
        let whole = read_file(&text, Some(chrono_tz::Asia::Seoul), u64::MAX).unwrap();
        let parts = read_file(&text, Some(chrono_tz::Asia::Seoul), 1).unwrap();
        assert!(parts.0 == whole.0);
        assert_eq!(parts.1, whole.1);
        let settings = whole.0.iter().find(|e| e.kind == EventKind::WorkerSettings).unwrap();
        assert_eq!(settings.origin().line, 40_002);
        assert_eq!(settings.at().to_rfc3339(), "2026-10-07T00:29:58.300+00:00");
    }

    #[test]
    fn worker_settings_in_a_repeated_hour_take_their_pass_even_on_a_continuation() {
        // America/Los_Angeles falls back on 2026-11-01 (01:00–02:00 twice, PDT then PST). A log
        // that starts inside the hour and goes on to 02:10 without stepping back was in its
        // second pass (PST): known only at 02:10, so the events before are moved then, the
        // settings on a continuation line with them.
        let text = "2026-11-01 01:10:00.000 INFO  [BullWorker] worker ready pid=1 lockDuration=12000ms\n\
                    2026-11-01 01:20:00.000 DEBUG [Config] worker options:\n\
                    \x20   \"stalledInterval\": 5000\n\
                    2026-11-01 02:10:00.000 INFO  [HTTP] GET /healthz 200 1ms\n";
        let (events, _) = read(text, Some(chrono_tz::America::Los_Angeles)).unwrap();
        let placed: Vec<(u32, String)> = events.iter().map(|e| (e.origin().line, e.at().to_rfc3339())).collect();
        assert_eq!(
            placed,
            [(1, "2026-11-01T09:10:00+00:00".to_string()), (3, "2026-11-01T09:20:00+00:00".to_string())]
        );
        // Stepping back to 01:05 after them shows they were the first pass (PDT) instead.
        let (events, _) = read(
            &text.replace("2026-11-01 02:10:00.000", "2026-11-01 01:05:00.000"),
            Some(chrono_tz::America::Los_Angeles),
        )
        .unwrap();
        let placed: Vec<(u32, String)> = events.iter().map(|e| (e.origin().line, e.at().to_rfc3339())).collect();
        assert_eq!(
            placed,
            [(1, "2026-11-01T08:10:00+00:00".to_string()), (3, "2026-11-01T08:20:00+00:00".to_string())]
        );
    }

    #[test]
    fn a_file_without_timestamps_is_not_a_log() {
        let error = read("hello\nworld\n", Some(chrono_tz::UTC)).unwrap_err().to_string();
        assert!(error.starts_with("server.log:1: no line starts with a timestamp"), "{error}");
    }

    /// A log of an entry every `step_ms` from `start` (UTC) for `count` entries, written in
    /// `tz`'s wall-clock time without an offset: every fifth a job activation, a stack trace after
    /// every seventh, the rest noise.
    fn timed_log(start: &str, step_ms: i64, count: i64, tz: chrono_tz::Tz) -> String {
        use std::fmt::Write;
        let start = chrono::DateTime::parse_from_rfc3339(start).unwrap().with_timezone(&chrono::Utc);
        let mut text = String::new();
        for n in 0..count {
            let at = (start + chrono::TimeDelta::milliseconds(n * step_ms)).with_timezone(&tz);
            let stamp = at.format("%Y-%m-%d %H:%M:%S%.3f");
            match n % 5 {
                0 => writeln!(text, "{stamp} INFO [worker] job active queue=q name=sweep id={n} pid=41877"),
                _ => writeln!(text, "{stamp} INFO GET /api/jobs/active 200 {n}ms"),
            }
            .unwrap();
            if n % 7 == 0 {
                text.push_str("    at Object.<anonymous> (/app/main.js:1:1)\n");
            }
        }
        text
    }

    fn moment(at: &str) -> Moment {
        Moment::new(chrono::DateTime::parse_from_rfc3339(at).unwrap().with_timezone(&chrono::Utc)).unwrap()
    }

    /// An event as the window tests compare it: its moment, its line in the file, its job.
    type Seen = (Moment, u64, Option<String>);

    /// `text` read as a file for the window `from ..= to` (UTC), by time when it can be, and read
    /// whole: the events of the first (their lines counted in the file, read back from it through
    /// the marks the read left), its account, and the events of the whole read inside the window.
    fn read_window(
        text: &str,
        tz: chrono_tz::Tz,
        from: &str,
        to: &str,
    ) -> Result<(Vec<Seen>, InputSummary, Vec<Seen>)> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("server.log");
        std::fs::write(&path, text).unwrap();
        let window = crate::model::filter::ReadWindow { from: Some(moment(from)), to: Some(moment(to)) };
        let spec = SourceSpec {
            reread: crate::ingest::Reread::Seek,
            window: Some(window),
            ..SourceSpec::new(SourceKind::Log, path.clone(), Some(tz), "--log-tz".into())
        };
        let reopen = Reopen { path: &path, bar: None, lone_cr: true, growth: None };
        let (mut events, mut summary) = (Vec::new(), InputSummary::new("server.log", "log", "text", Some(tz)));
        ServerLog.read_file(&spec, 0, reopen.at(0)?, &reopen, &mut events, &mut summary)?;
        let (mut whole, mut whole_summary) = (Vec::new(), InputSummary::new("server.log", "log", "text", Some(tz)));
        read_in_parts(&spec, 0, reopen.at(0)?, &reopen, u64::MAX, &mut whole, &mut whole_summary)?;
        // Line 1 of a part read by time is the line at its first byte.
        let before = summary
            .window_read
            .map_or(0, |read| text[..usize::try_from(read.from_byte).unwrap()].matches('\n').count() as u64);
        let lines: Vec<&str> = text.split('\n').collect();
        let texts = std::mem::take(&mut summary.texts);
        for (line, read) in crate::ingest::io::read_back::every_event_read_back(&spec, &events, texts)? {
            assert_eq!(
                read,
                lines[usize::try_from(u64::from(line) + before).unwrap() - 1],
                "line {line} after {before}"
            );
        }
        let key = |event: &Event, before: u64| {
            (event.moment(), u64::from(event.origin().line) + before, event.job_id.as_deref().map(str::to_string))
        };
        let mut sought: Vec<_> =
            events.iter().filter(|event| window.holds(event.moment())).map(|event| key(event, before)).collect();
        let mut whole: Vec<_> =
            whole.iter().filter(|event| window.holds(event.moment())).map(|event| key(event, 0)).collect();
        sought.sort();
        whole.sort();
        Ok((sought, summary, whole))
    }

    #[test]
    fn a_window_is_read_by_time_with_the_events_of_a_whole_read_and_a_fraction_of_its_bytes() {
        // 14 hours, an entry every 500 ms: 6 MB.
        let text = timed_log("2026-10-07T00:00:00Z", 500, 100_800, chrono_tz::Asia::Seoul);
        let (sought, summary, whole) =
            read_window(&text, chrono_tz::Asia::Seoul, "2026-10-07T07:00:00Z", "2026-10-07T07:10:00Z").unwrap();
        assert_eq!(sought, whole);
        assert_eq!(sought.len(), 241, "one activation every 2.5 s, both ends included");
        let read = summary.window_read.expect("read by time");
        // Ten minutes and the tolerance on each side of 14 hours (2.4 %), the search and the head.
        assert!(read.bytes_read * 100 < read.size * 10, "{read:?}");
        assert!(
            summary.notes.iter().any(|note| note.starts_with("read by time for the read window: bytes ")),
            "{:?}",
            summary.notes
        );
        // The account is of the lines read: a fraction of the file's.
        assert!(summary.lines * 10 < text.matches('\n').count() as u64);
    }

    #[test]
    fn a_window_before_or_after_the_log_reads_next_to_nothing_and_finds_nothing() {
        let text = timed_log("2026-10-07T00:00:00Z", 500, 40_000, chrono_tz::Asia::Seoul);
        for (from, to) in
            [("2026-10-06T00:00:00Z", "2026-10-06T01:00:00Z"), ("2026-10-08T00:00:00Z", "2026-10-08T01:00:00Z")]
        {
            let (sought, summary, whole) = read_window(&text, chrono_tz::Asia::Seoul, from, to).unwrap();
            assert!(sought.is_empty() && whole.is_empty());
            let read = summary.window_read.expect("read by time");
            assert!(read.bytes_read * 5 < read.size, "{from}: {read:?}");
        }
    }

    #[test]
    fn a_window_around_the_fall_back_is_placed_as_a_whole_read_places_it() {
        // America/Los_Angeles goes back from 02:00 PDT to 01:00 PST on 2026-11-01 (09:00 UTC):
        // 01:00-02:00 is written twice. Twelve hours around it, an entry every 500 ms: 6.5 MB. A
        // window near the hour is read from before it to after it (about three hours): a
        // repeated local time can only make more be read.
        let la = chrono_tz::America::Los_Angeles;
        let text = timed_log("2026-11-01T03:00:00Z", 500, 86_400, la);
        for (from, to) in [
            ("2026-11-01T08:10:00Z", "2026-11-01T08:20:00Z"), // 01:10 PDT, the first pass
            ("2026-11-01T09:10:00Z", "2026-11-01T09:20:00Z"), // 01:10 PST, the second pass
            ("2026-11-01T08:55:00Z", "2026-11-01T09:05:00Z"), // across the step back
            ("2026-11-01T10:02:00Z", "2026-11-01T10:12:00Z"), // just after the hour
        ] {
            let (sought, summary, whole) = read_window(&text, la, from, to).unwrap();
            assert_eq!(sought.len(), whole.len(), "{from}");
            assert!(sought == whole, "{from}: the same events at the same instants");
            assert!(!sought.is_empty());
            assert!(
                summary.window_read.is_some_and(|read| read.bytes_read * 10 < read.size * 4),
                "{from}: {summary:?}"
            );
        }
    }

    #[test]
    fn an_error_in_a_part_read_by_time_names_its_line_from_the_byte_read_from() {
        let tz = chrono_tz::Asia::Seoul;
        let mut text = timed_log("2026-10-07T00:00:00Z", 500, 40_000, tz);
        let at = text.find("2026-10-07 12:00:00.000").unwrap();
        text.insert_str(at, "2026-10-07 11:61:00 INFO job active id=7\n");
        let error = read_window(&text, tz, "2026-10-07T02:55:00Z", "2026-10-07T03:05:00Z").unwrap_err().to_string();
        let from = error.split(" (from byte ").nth(1).and_then(|rest| rest.split(')').next()).unwrap();
        let (before, rest) = error.split_once("):").unwrap();
        let line: usize = rest.split(':').next().unwrap().parse().unwrap();
        assert!(before.ends_with(&format!("server.log (from byte {from}")), "{error}");
        let from: usize = from.parse().unwrap();
        assert!(text[from..].lines().nth(line - 1).unwrap().starts_with("2026-10-07 11:61:00"), "{error}");
    }

    #[test]
    fn a_log_out_of_order_is_read_whole_and_says_so() {
        // Yesterday's log appended after today's.
        let tz = chrono_tz::Asia::Seoul;
        let text =
            timed_log("2026-10-07T00:00:00Z", 500, 40_000, tz) + &timed_log("2026-10-06T00:00:00Z", 500, 40_000, tz);
        let (sought, summary, whole) = read_window(&text, tz, "2026-10-06T02:00:00Z", "2026-10-06T02:10:00Z").unwrap();
        assert_eq!(sought, whole);
        assert!(!sought.is_empty());
        assert!(summary.window_read.is_none());
        assert!(
            summary.notes.iter().any(|note| note.starts_with("read whole, not by time for the read window: ")
                && note.contains("out of order")),
            "{:?}",
            summary.notes
        );
    }
}
