//! An envelope's export read as a log: the records' messages are handed to a log reader (text
//! with rules, pino, winston, NestJS) as the lines of a log, and its events get back what the
//! envelope knew: the export's line, the labels of the instance that wrote the line, and the
//! envelope's UTC time as evidence about the line's own.
//!
//! The envelope is read on a thread of its own and its messages reach the log reader through a
//! bounded channel, so an export is never held whole (one sorted newest first is kept aside on
//! disk, below) and
//! its JSON is parsed while the lines of the last chunk are classified.
//!
//! - **Which time.** When the application's lines carry their own time (a leading timestamp, a
//!   pino `time`), the events keep it: it is what the application saw, and a zone declared for it
//!   is checked against the envelope (`clock-offset-suspected`, from `InputSummary::envelope_times`).
//!   When they carry none (an app that leaves the time to the platform), the envelope's UTC time
//!   is each line's time, written before the message for the text reader. Which one was used is a
//!   note in the report.
//! - **Repeated hours.** A local time that a DST fall-back repeats is placed in the pass whose UTC
//!   time is nearest the envelope's, not by line order: an export of several instances, or one
//!   sorted newest first, has no line order to go by.
//! - **Order.** Log stores export newest first by default (`logcli`, the CloudWatch and Kibana
//!   consoles). The first records tell: an export whose envelope times mostly go down is read
//!   from its last record to its first (its records kept aside in a temporary file to do so, not
//!   in memory: `reverse`), so that continuations follow their entry; the evidence still cites the
//!   export's own lines.

use std::io::{BufRead, Read};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use chrono::{DateTime, TimeZone, Utc};
use chrono_tz::Tz;

use crate::error::{Error, Result};
use crate::model::{Event, InputSummary, Moment, Text};
use crate::time::{self, Leading};

use super::reverse::{self, Taken};
use super::rows::{Row, Rows};
use super::{Context, Envelope, Piece, Record, Split, one_line};
use crate::ingest::{EventFormat, SourceKind, SourceSpec};

/// An envelope as one of the formats a log source is read in (`ingest::formats`).
pub struct Unwrap(pub &'static dyn Envelope);

/// Records looked at before reading: what the application's lines are, and the export's order.
const HEAD_RECORDS: usize = 256;

/// Bytes of messages sent to the log reader at a time.
/// A MiB: the two threads then meet about once a MiB (at 64 KiB, waking each other was a tenth of
/// a kubectl export's reading, perf).
const BATCH_BYTES: usize = 1 << 20;

/// Where the events' times come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stamps {
    /// The application's lines carry their own.
    Line,
    /// The lines carry none: the envelope's time is written before each.
    Envelope,
}

/// What the envelope's thread accounted for besides the rows: the export's lines that gave the
/// log reader nothing, and the lines past the first of each record.
#[derive(Default)]
struct Account {
    lines: u64,
    extra_lines: u64,
    ignored: Vec<(&'static str, u64)>,
    rejected: Vec<(u64, u64, String)>,
    /// Records whose envelope time goes against the order the export was read in.
    out_of_order: u64,
    /// Records with an envelope time.
    timed: u64,
    /// The rows (places in the rows) of records that share their line with the record before
    /// (JSON records on one line): the log reader counts each as a line.
    shared: Vec<usize>,
}

impl Account {
    fn ignore(&mut self, reason: &'static str, lines: u64) {
        self.lines += lines;
        match self.ignored.iter_mut().find(|(known, _)| *known == reason) {
            Some((_, count)) => *count += lines,
            None => self.ignored.push((reason, lines)),
        }
    }

    /// A rejected piece of no line of its own (a JSON element sharing its line with the piece
    /// before) is listed but not counted: its line is the other piece's.
    fn reject(&mut self, line: u64, lines: u64, reason: String) {
        self.lines += lines;
        self.rejected.push((line, lines, reason));
    }
}

impl EventFormat for Unwrap {
    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn kind(&self) -> SourceKind {
        SourceKind::Log
    }

    fn extensions(&self) -> &'static [&'static str] {
        self.0.extensions()
    }

    fn sniff(&self, first_line: &str) -> bool {
        self.0.sniff(first_line)
    }

    fn sniff_head(&self, head: &str) -> bool {
        self.0.sniff(head)
    }

    fn is_envelope(&self) -> bool {
        true
    }

    fn read(
        &self,
        spec: &SourceSpec,
        source: u16,
        input: Box<dyn BufRead + Send>,
        events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<()> {
        let context = Context { path: &spec.path, max_line_bytes: spec.max_line_bytes };
        let mut from = match self.0.one_line() {
            Some(envelope) => Source::Blocks(one_line::Reader::new(input, context, envelope)),
            None => Source::Pieces(self.0.pieces(input, context)),
        };
        let mut head = Vec::new();
        let mut records = 0;
        match &mut from {
            Source::Pieces(pieces) => {
                while records < HEAD_RECORDS {
                    let Some(piece) = pieces.next() else { break };
                    let piece = piece?;
                    records += usize::from(matches!(piece, Piece::Record(_)));
                    head.push(piece);
                }
            }
            Source::Blocks(reader) => reader.visit(|line, split| {
                records += usize::from(matches!(split, Split::Record { .. }));
                head.push(split.into_piece(line));
                Ok(records < HEAD_RECORDS)
            })?,
        }
        let newest_first = newest_first(&head);
        let head_offsets = offsets(&head);
        let (inner, stamps) = self.inner_format(spec, &head)?;
        if stamps == Stamps::Envelope && !head.iter().any(|p| matches!(p, Piece::Record(r) if r.at.is_some())) {
            return Err(Error::input(
                &spec.path,
                None,
                format!(
                    "the lines carry no time of their own and this export ({}) gives none: export with the times (expected a record like {})",
                    self.0.name(),
                    self.0.example()
                ),
            ));
        }
        // Placed by the envelope when it has times: see the module's notes on repeated hours.
        let by_envelope = stamps == Stamps::Line && spec.tz.is_some();
        let inner_spec = SourceSpec {
            reread: crate::ingest::Reread::No,
            text_start: 0,
            ambiguous: if by_envelope { crate::time::Ambiguous::Earlier } else { spec.ambiguous },
            ..spec.clone()
        };
        let mut inner_summary = InputSummary::new(&spec.display_path(), SourceKind::Log.name(), inner.name(), spec.tz);
        let mut inner_events = Vec::new();
        let (sender, receiver) = sync_channel::<Vec<u8>>(2);
        // Batches the log reader is done with go back to be filled again: a new one for each
        // was page faults and the allocator's returns to the system (perf).
        let (spent, recycled) = sync_channel::<Vec<u8>>(4);
        let (fed, inner_result) = std::thread::scope(|scope| {
            let limit = Held { path: &spec.path, most: spec.max_held_bytes };
            let feeder = scope.spawn(move || feed(head, from, newest_first, stamps, limit, (&sender, &recycled)));
            let channel: Box<dyn BufRead + Send> = Box::new(Channel { receiver, spent, chunk: Vec::new(), at: 0 });
            let result = inner.read(&inner_spec, source, channel, &mut inner_events, &mut inner_summary);
            (feeder.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)), result)
        });
        // The envelope's own error is the first: the log reader saw the messages end there.
        let (rows, account) = fed?;
        let line_of = |inner: u64| -> u64 {
            usize::try_from(inner)
                .ok()
                .and_then(|i| i.checked_sub(1))
                .and_then(|i| rows.get(i))
                .map_or(inner, |r| r.line)
        };
        let hint = if spec.tz.is_none() { zone_hint(&head_offsets) } else { String::new() };
        inner_result.map_err(|error| match error {
            Error::Input { path, line: Some(line), message } => {
                let message =
                    if message.contains("no time zone is declared") { format!("{message}{hint}") } else { message };
                Error::Input { path, line: Some(line_of(line)), message }
            }
            other => other,
        })?;

        if !account.shared.is_empty() {
            one_count_per_line(&account.shared, &inner_events, &mut inner_summary);
        }
        let mut envelope_times = Vec::new();
        let mut lags = Vec::new();
        let mut replaced = 0u64;
        for mut event in inner_events {
            let inner_line = u64::from(event.origin().line);
            let Some(row) = usize::try_from(inner_line).ok().and_then(|i| i.checked_sub(1)).and_then(|i| rows.get(i))
            else {
                events.push(event);
                continue;
            };
            let line = crate::ingest::line_of(spec, row.line)?;
            event.set_origin(crate::model::Origin { line, ..event.origin() });
            if row.instance.is_some() {
                event.edit().instance = row.instance;
            }
            if let (Some(at), Stamps::Line) = (row.at, stamps) {
                if by_envelope && let Some(tz) = spec.tz {
                    replaced += u64::from(place_in_fold(&mut event, at, tz));
                }
                lags.push(event.moment().seconds_to(at));
                envelope_times.push((line, at));
            }
            events.push(event);
        }

        summary.lines = inner_summary.lines + account.extra_lines + account.lines;
        summary.used = inner_summary.used;
        summary.ignored = inner_summary.ignored + account.extra_lines;
        summary.rejected = inner_summary.rejected;
        summary.ignored_by_reason = inner_summary.ignored_by_reason;
        if account.extra_lines > 0 {
            *summary.ignored_by_reason.entry("record's other lines".to_string()).or_default() += account.extra_lines;
        }
        for (reason, lines) in &account.ignored {
            summary.ignored += lines;
            *summary.ignored_by_reason.entry((*reason).to_string()).or_default() += lines;
        }
        let mut rejections: Vec<(u64, String)> = std::mem::take(&mut inner_summary.rejections)
            .into_iter()
            .map(|rejection| (line_of(rejection.line), rejection.reason))
            .collect();
        let mut sharing: Option<(u64, String)> = None;
        let mut sharing_count = 0u64;
        for (line, lines, reason) in account.rejected {
            if lines == 0 {
                // Its line is counted with the piece it shares it with: said, not listed.
                sharing_count += 1;
                sharing.get_or_insert((line, reason));
                continue;
            }
            summary.rejected += 1;
            // A rejected record counts as one line, rejected; its other lines as ignored.
            let other = lines.saturating_sub(1);
            summary.ignored += other;
            if other > 0 {
                *summary.ignored_by_reason.entry("record's other lines".to_string()).or_default() += other;
            }
            rejections.push((line, reason));
        }
        rejections.sort_by_key(|(line, _)| *line);
        summary.rejections = rejections
            .into_iter()
            .take(crate::model::input::MAX_LISTED_REJECTIONS)
            .map(|(line, reason)| crate::model::input::Rejection { line, reason })
            .collect();
        summary.texts = renumbered(std::mem::take(&mut inner_summary.texts), &rows, stamps);
        summary.naive_times = inner_summary.naive_times;
        summary.crowded = inner_summary
            .crowded
            .map(|crowded| crate::model::input::Crowded { first_line: line_of(crowded.first_line), ..crowded });
        if !by_envelope && rows.in_place() {
            // The lines are the export's own, one to one: the folds' line numbers stand.
            summary.folds = inner_summary.folds;
        }
        summary.notes.append(&mut inner_summary.notes);
        summary.meta_versions.append(&mut inner_summary.meta_versions);
        summary.notes.push(match stamps {
            Stamps::Line => format!(
                "read as {} inside {} records: the events keep the lines' own times{}",
                inner.name(),
                self.0.name(),
                lag_note(&lags)
            ),
            Stamps::Envelope => format!(
                "read as text inside {} records: the lines carry no time, so each event's time is its record's ({}, UTC)",
                self.0.name(),
                self.0.name()
            ),
        });
        if let Some((line, reason)) = sharing {
            summary.notes.push(format!(
                "{sharing_count} element(s) on lines that hold a record too could not be read, the first at line {line}: {reason}"
            ));
        }
        if account.timed == 0 && !rows.is_empty() {
            summary.notes.push(format!(
                "the {} records give no time leasetrace can place (none, or one without a zone): the lines' own times only, nothing checks the declared zone, and the export is read in its own order",
                self.0.name()
            ));
        }
        if newest_first {
            summary.notes.push(format!(
                "the export is sorted newest first (its first {} records' times go down): read from its last record to its first",
                records.min(HEAD_RECORDS)
            ));
        }
        if account.out_of_order > 0 {
            summary.notes.push(format!(
                "{} record(s) are out of time order in the export (several instances interleaved, or a merge): events are placed by their own times",
                account.out_of_order
            ));
        }
        if replaced > 0 {
            summary.notes.push(format!(
                "{replaced} time(s) in a repeated hour (a DST fall-back) placed in the pass nearest their record's UTC time"
            ));
        }
        summary.envelope_times = envelope_times;
        summary.envelope_times.sort_unstable();
        summary.envelope_times.dedup_by_key(|(line, _)| *line);
        Ok(())
    }
}

impl Unwrap {
    /// The log format of the records' messages, and where the events' times come from: the
    /// declared one (`format = "kubectl+pino"`), else the first of the structured formats that
    /// knows the first message, else text (whose lines carry their own times when one of the
    /// first messages starts with a timestamp).
    fn inner_format(&self, spec: &SourceSpec, head: &[Piece]) -> Result<(&'static dyn EventFormat, Stamps)> {
        let logs = || crate::ingest::plain_formats().filter(|f| f.kind() == SourceKind::Log && !f.is_envelope());
        let lines: Vec<String> = head
            .iter()
            .filter_map(|piece| match piece {
                Piece::Record(record) => Some(shown_line(&record.message).into_owned()),
                _ => None,
            })
            .collect();
        let messages = || lines.iter().map(String::as_str);
        let stamped = || messages().any(|m| matches!(time::leading_stamp(m), Leading::Found(..)));
        if let Some(name) = spec.format.as_deref().and_then(|f| f.split_once('+')).map(|(_, inner)| inner) {
            let format = logs().find(|f| f.name() == name).ok_or_else(|| {
                let names: Vec<&str> = logs().map(EventFormat::name).collect();
                Error::input(
                    &spec.path,
                    None,
                    format!(
                        "unknown log format '{name}' inside {}: expected one of {}",
                        self.0.name(),
                        names.join(", ")
                    ),
                )
            })?;
            let stamps = if format.name() == "text" && !stamped() { Stamps::Envelope } else { Stamps::Line };
            return Ok((format, stamps));
        }
        let first = messages().find(|m| !m.trim().is_empty()).unwrap_or_default();
        if let Some(format) = logs().find(|f| f.extensions().is_empty() && f.sniff(first)) {
            return Ok((format, Stamps::Line));
        }
        let text = logs().find(|f| f.name() == "text").expect("the text log format is registered");
        Ok((text, if stamped() { Stamps::Line } else { Stamps::Envelope }))
    }
}

/// A message's first line: the rest of a record's message (a stack trace) is what a log file
/// would have on its continuation lines, which no event comes from.
fn first_line(message: &str) -> &str {
    // memchr2, not `split([..])`: a per-character search over every message was a tenth of an
    // enveloped log's reading (perf, the smoke case's kubectl envelope).
    match memchr::memchr2(b'\n', b'\r', message.as_bytes()) {
        Some(end) => &message[..end],
        None => message,
    }
}

/// Counts the records on one line of the export as that line, once: the log reader counted each
/// record as a line. The line is used when one of its records is, else rejected when one is,
/// else ignored; the other records' counts are taken back (`shared`: the places of the records
/// that share the line of the record before them; a rejection past the listed ones is taken for
/// an ignored line).
fn one_count_per_line(shared: &[usize], events: &[Event], summary: &mut InputSummary) {
    let used: std::collections::HashSet<u64> = events.iter().map(|e| u64::from(e.origin().line)).collect();
    let rejected: std::collections::HashSet<u64> = summary.rejections.iter().map(|r| r.line).collect();
    // 2 used, 1 rejected, 0 ignored, for the record at `place` (its line there is place + 1).
    let status = |place: usize| {
        let line = place as u64 + 1;
        if used.contains(&line) { 2 } else { usize::from(rejected.contains(&line)) }
    };
    let mut taken = [0u64; 3];
    let mut index = 0;
    while index < shared.len() {
        // A group: the host record before the first shared one, and the shared ones after it.
        let host = shared[index] - 1;
        let mut end = index;
        while end + 1 < shared.len() && shared[end + 1] == shared[end] + 1 {
            end += 1;
        }
        let mut counts = [0u64; 3];
        for place in std::iter::once(host).chain(shared[index..=end].iter().copied()) {
            counts[status(place)] += 1;
        }
        // The best status any of them has.
        let kept = (0..3).rev().find(|&bucket| counts[bucket] > 0).unwrap_or(0);
        for bucket in 0..3 {
            taken[bucket] += if bucket == kept { counts[bucket] - 1 } else { counts[bucket] };
        }
        index = end + 1;
    }
    summary.lines = summary.lines.saturating_sub(taken.iter().sum::<u64>());
    summary.used = summary.used.saturating_sub(taken[2]);
    summary.rejected = summary.rejected.saturating_sub(taken[1]);
    summary.ignored = summary.ignored.saturating_sub(taken[0]);
    // The reasons follow: taken from the most common.
    let mut left = taken[0];
    while left > 0 {
        let Some((_, count)) = summary.ignored_by_reason.iter_mut().filter(|(_, c)| **c > 0).max_by_key(|(_, c)| **c)
        else {
            break;
        };
        let step = left.min(*count);
        *count -= step;
        left -= step;
    }
    summary.ignored_by_reason.retain(|_, count| *count > 0);
}

/// A message's first line as the log reader gets it: without the colour codes a runtime or a
/// JSON store kept (`\u001b[33m`), which would hide its leading timestamp, and which a terminal
/// would not show either.
fn shown_line(message: &str) -> std::borrow::Cow<'_, str> {
    crate::ingest::log::nestjs::strip_ansi(first_line(message))
}

/// Whether the head's records are sorted newest first: more of their envelope times go down than
/// up.
fn newest_first(head: &[Piece]) -> bool {
    let times: Vec<Moment> = head
        .iter()
        .filter_map(|piece| match piece {
            Piece::Record(record) => record.at,
            _ => None,
        })
        .collect();
    let down = times.windows(2).filter(|pair| pair[1] < pair[0]).count();
    let up = times.windows(2).filter(|pair| pair[1] > pair[0]).count();
    down > up
}

/// For the head's records whose line starts with a time without an offset: that time read as
/// UTC minus the envelope's UTC time, in seconds (the zone's offset, plus lag).
fn offsets(head: &[Piece]) -> Vec<(i64, DateTime<Utc>)> {
    head.iter()
        .filter_map(|piece| {
            let Piece::Record(record) = piece else { return None };
            let at = record.at?.utc();
            match time::leading_stamp(&shown_line(&record.message)) {
                Leading::Found(time::Stamp::Local(naive), _) => Some(((naive.and_utc() - at).num_seconds(), at)),
                _ => None,
            }
        })
        .collect()
}

/// What the envelope says of the zone of lines whose times have no offset, for the error that
/// asks for one: the offset most of the head's records agree on, to the quarter hour, and the
/// zones that have it.
fn zone_hint(offsets: &[(i64, DateTime<Utc>)]) -> String {
    let quarter = |seconds: i64| (seconds + 450).div_euclid(900) * 900;
    let mut counts: std::collections::BTreeMap<i64, usize> = std::collections::BTreeMap::new();
    for &(seconds, _) in offsets {
        if (seconds - quarter(seconds)).abs() <= 120 {
            *counts.entry(quarter(seconds)).or_default() += 1;
        }
    }
    let Some((&offset, &count)) = counts.iter().max_by_key(|(_, count)| **count) else { return String::new() };
    if count * 2 <= offsets.len() {
        return String::new();
    }
    let Ok(offset) = i32::try_from(offset) else { return String::new() };
    let zones = time::zones_with_offset(offsets[0].1, offset);
    let sign = if offset < 0 { '-' } else { '+' };
    format!(
        "; the envelope's UTC times of {count} of the first records say the lines were written at UTC{sign}{:02}:{:02}{}",
        offset.abs() / 3600,
        offset.abs() % 3600 / 60,
        if zones.is_empty() { String::new() } else { format!(" ({})", zones.join(", ")) }
    )
}

/// Where the envelope's thread takes the records from: the envelope's pieces, or the blocks of an
/// export whose records are each one line (`one_line`).
enum Source<'a> {
    Pieces(Box<dyn Iterator<Item = Result<Piece>> + Send + 'a>),
    Blocks(one_line::Reader<'a>),
}

/// The envelope's thread: sends the records' messages as lines, in reading order, and returns
/// what each line came from and the account of the rest. The log reader stopping early (an
/// error of its own) ends it quietly: the receiver is gone.
fn feed(
    head: Vec<Piece>,
    rest: Source<'_>,
    newest_first: bool,
    stamps: Stamps,
    limit: Held<'_>,
    (sender, recycled): (&SyncSender<Vec<u8>>, &Receiver<Vec<u8>>),
) -> Result<(Rows, Account)> {
    let mut feeder = Feeder::new(stamps, sender, recycled);
    feeder.no_nul = matches!(rest, Source::Blocks(_));
    if newest_first {
        // A newest-first export's records are kept aside in a temporary file, not in memory, and
        // handed out from the last (`reverse`).
        let mut spill = reverse::Spill::new().map_err(|e| limit.spill_failed(&e))?;
        let mut held_bytes = 0usize;
        let mut keep = |piece: Piece, feeder: &mut Feeder<'_>| -> Result<()> {
            match piece {
                Piece::Record(record) => {
                    held_bytes = held_bytes.saturating_add(Held::size_of(&record));
                    if held_bytes > limit.most {
                        return Err(limit.exceeded(record.line));
                    }
                    spill.push(&taken(record)).map_err(|e| limit.spill_failed(&e))
                }
                other => {
                    feeder.other(other);
                    Ok(())
                }
            }
        };
        for piece in head {
            keep(piece, &mut feeder)?;
        }
        match rest {
            Source::Pieces(pieces) => {
                for piece in pieces {
                    keep(piece?, &mut feeder)?;
                }
            }
            Source::Blocks(mut reader) => {
                reader.visit(|line, split| keep(split.into_piece(line), &mut feeder).map(|()| true))?;
            }
        }
        while let Some(record) = spill.pop().map_err(|e| limit.spill_failed(&e))? {
            feeder.take(record.line, record.lines, record.at, record.instance.as_deref(), &record.message);
            if !feeder.send_when_full() {
                return Ok(feeder.done());
            }
        }
        feeder.send_rest();
        return Ok(feeder.done());
    }
    for piece in head {
        if !feeder.piece(piece) {
            return Ok(feeder.done());
        }
    }
    match rest {
        Source::Pieces(pieces) => {
            for piece in pieces {
                if !feeder.piece(piece?) {
                    return Ok(feeder.done());
                }
            }
        }
        Source::Blocks(mut reader) => reader.visit(|line, split| {
            Ok(match split {
                Split::Record { at, message } => {
                    feeder.take(line, 1, at, None, message);
                    feeder.send_when_full()
                }
                Split::Other(piece) => feeder.piece(piece),
            })
        })?,
    }
    feeder.send_rest();
    Ok(feeder.done())
}

/// The envelope thread's state: the batch of messages being filled for the log reader, the rows
/// its lines came from, and the account of the rest.
struct Feeder<'s> {
    stamps: Stamps,
    sender: &'s SyncSender<Vec<u8>>,
    recycled: &'s Receiver<Vec<u8>>,
    batch: Vec<u8>,
    rows: Rows,
    account: Account,
    last_at: Option<Moment>,
    /// The instance of the last record: an export's records mostly come from one process after
    /// another, and interning its name anew for each line cost more than reading the line
    /// (measured on the smoke case's kubectl envelope).
    last_instance: Option<(String, Text)>,
    /// Whether the log reader has stopped (its receiver is gone).
    gone: bool,
    /// Whether the messages are known to hold no NUL byte (a one-line export's blocks are
    /// refused with one: `one_line::Reader`).
    no_nul: bool,
}

impl<'s> Feeder<'s> {
    fn new(stamps: Stamps, sender: &'s SyncSender<Vec<u8>>, recycled: &'s Receiver<Vec<u8>>) -> Self {
        Feeder {
            stamps,
            sender,
            recycled,
            batch: Vec::with_capacity(BATCH_BYTES + 1024),
            rows: Rows::new(),
            account: Account::default(),
            last_at: None,
            last_instance: None,
            gone: false,
            no_nul: false,
        }
    }

    /// A piece in reading order; `false` once the log reader has stopped.
    fn piece(&mut self, piece: Piece) -> bool {
        match piece {
            Piece::Record(record) => {
                let instance = record.labels.instance();
                self.take(record.line, record.lines, record.at, instance.as_deref(), &record.message);
                self.send_when_full()
            }
            other => {
                self.other(other);
                true
            }
        }
    }

    /// A piece that is no record, into the account.
    fn other(&mut self, piece: Piece) {
        match piece {
            Piece::Ignored { lines, reason, .. } => self.account.ignore(reason, lines),
            Piece::Rejected { line, lines, reason } => self.account.reject(line, lines, reason),
            Piece::Record(_) => {}
        }
    }

    /// A record's message as the log reader's next line, and the row it came from.
    fn take(&mut self, line: u64, lines: u64, at: Option<Moment>, instance: Option<&str>, message: &str) {
        let (batch, rows, account) = (&mut self.batch, &mut self.rows, &mut self.account);
        // Most messages are one line without colour codes: one search says so.
        let message = if memchr::memchr3(b'\n', b'\r', 0x1b, message.as_bytes()).is_none() {
            std::borrow::Cow::Borrowed(message)
        } else {
            shown_line(message)
        };
        let message = message.as_ref();
        if !self.no_nul && memchr::memchr(0, message.as_bytes()).is_some() {
            account.reject(line, lines, "the record's message holds a NUL byte: not a log line".into());
            return;
        }
        if self.stamps == Stamps::Envelope {
            let Some(at) = at else {
                account.reject(line, lines, "the record has no time, and its line none of its own".into());
                return;
            };
            batch.extend_from_slice(at.utc().to_rfc3339_opts(chrono::SecondsFormat::Nanos, true).as_bytes());
            batch.push(b' ');
        }
        // In the order the log reader gets them: a newest-first export's records come reversed.
        if let (Some(at), Some(last)) = (at, self.last_at)
            && at < last
        {
            account.out_of_order += 1;
        }
        account.timed += u64::from(at.is_some());
        self.last_at = at.or(self.last_at);
        batch.extend_from_slice(message.as_bytes());
        batch.push(b'\n');
        account.extra_lines += lines.saturating_sub(1);
        let instance = match (instance, &self.last_instance) {
            (None, _) => None,
            (Some(name), Some((last, text))) if name == last => Some(*text),
            (Some(name), _) => {
                let text = Text::from(name);
                self.last_instance = Some((name.to_string(), text));
                Some(text)
            }
        };
        if lines == 0 && !rows.is_empty() {
            account.shared.push(rows.len());
        }
        rows.push(Row { line, at, instance });
    }

    /// Sends the batch once it is full; `false` once the log reader has stopped.
    fn send_when_full(&mut self) -> bool {
        if self.batch.len() >= BATCH_BYTES {
            let next = match self.recycled.try_recv() {
                Ok(mut spent) => {
                    spent.clear();
                    spent
                }
                Err(_) => Vec::with_capacity(BATCH_BYTES + 1024),
            };
            self.gone |= self.sender.send(std::mem::replace(&mut self.batch, next)).is_err();
        }
        !self.gone
    }

    fn send_rest(&mut self) {
        if !self.gone && !self.batch.is_empty() {
            let _ = self.sender.send(std::mem::take(&mut self.batch));
        }
    }

    fn done(self) -> (Rows, Account) {
        (self.rows, self.account)
    }
}

/// What the log reader needs of a record.
fn taken(record: Record) -> Taken {
    Taken {
        line: record.line,
        lines: record.lines,
        at: record.at,
        instance: record.labels.instance(),
        message: record.message,
    }
}

/// How much of a newest-first export may be held to read it from its end
/// (`SourceSpec::max_held_bytes`), and whose it is.
#[derive(Clone, Copy)]
struct Held<'a> {
    path: &'a std::path::Path,
    most: usize,
}

impl Held<'_> {
    /// What a record costs held: its message, its labels, and the record itself.
    fn size_of(record: &Record) -> usize {
        let labels: usize =
            record.labels.0.iter().map(|(_, value)| value.len() + std::mem::size_of::<(&str, String)>()).sum();
        std::mem::size_of::<Record>() + record.message.len() + labels
    }

    fn exceeded(self, line: u64) -> Error {
        Error::input(
            self.path,
            Some(line),
            format!(
                "the export is sorted newest first, so its records are kept aside (in a temporary file in TMPDIR) to be read from its last record, and they pass {} bytes here (--max-held-bytes, [analysis] max_held_bytes); export it oldest first (logcli query --forward, aws logs tail, a Kibana or CloudWatch sort by time ascending), split it by time, or raise the limit",
                self.most
            ),
        )
    }

    /// The temporary file a newest-first export's records are kept in could not be written or
    /// read back.
    fn spill_failed(self, error: &std::io::Error) -> Error {
        Error::input(
            self.path,
            None,
            format!(
                "the export is sorted newest first, so its records are kept aside in a temporary file in {} to be read from its last record, and that failed ({error}): set TMPDIR to a writable folder with room for them, or export it oldest first (logcli query --forward)",
                std::env::temp_dir().display()
            ),
        )
    }
}

/// The log reader's side of the channel: the messages as one stream of lines.
struct Channel {
    receiver: Receiver<Vec<u8>>,
    /// Where a batch read to its end goes back to the envelope's thread.
    spent: SyncSender<Vec<u8>>,
    chunk: Vec<u8>,
    at: usize,
}

impl Read for Channel {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let available = self.fill_buf()?;
        let n = out.len().min(available.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

/// Buffered already: a batch is read from where it lies, not copied into a buffer first.
impl BufRead for Channel {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        while self.at == self.chunk.len() {
            match self.receiver.recv() {
                Ok(chunk) => {
                    let _ = self.spent.try_send(std::mem::replace(&mut self.chunk, chunk));
                    self.at = 0;
                }
                Err(_) => return Ok(&[]),
            }
        }
        Ok(&self.chunk[self.at..])
    }

    fn consume(&mut self, amount: usize) {
        self.at = (self.at + amount).min(self.chunk.len());
    }
}

/// Moves `event` into the other pass of a repeated hour when that pass's UTC time is nearer its
/// record's `envelope` time. Returns whether it moved.
fn place_in_fold(event: &mut Event, envelope: Moment, tz: Tz) -> bool {
    let at = event.at();
    let local = at.with_timezone(&tz).naive_local();
    let chrono::LocalResult::Ambiguous(earlier, later) = tz.from_local_datetime(&local) else { return false };
    let (earlier, later): (DateTime<Utc>, DateTime<Utc>) = (earlier.with_timezone(&Utc), later.with_timezone(&Utc));
    let envelope = envelope.utc();
    let distance = |candidate: DateTime<Utc>| (candidate - envelope).num_milliseconds().abs();
    let nearest = if distance(later) < distance(earlier) { later } else { earlier };
    if nearest == at {
        return false;
    }
    match Moment::new(nearest) {
        Ok(moment) => {
            event.set_at(moment);
            true
        }
        Err(_) => false,
    }
}

/// The kept texts of the log reader's lines, by the export's lines; the envelope's time written
/// before a message for the text reader is not the line's, and is left out.
fn renumbered(texts: crate::model::LineTexts, rows: &Rows, stamps: Stamps) -> crate::model::LineTexts {
    let mut out = crate::model::LineTexts::default();
    let mut kept: Vec<(u32, String)> = texts
        .into_kept()
        .into_iter()
        .filter_map(|(inner, text)| {
            let row = rows.get(usize::try_from(inner).ok()?.checked_sub(1)?)?;
            let line = u32::try_from(row.line).ok()?;
            let text = match stamps {
                Stamps::Envelope => text.split_once(' ').map_or(&*text, |(_, message)| message).to_string(),
                Stamps::Line => text.into_string(),
            };
            Some((line, text))
        })
        .collect();
    kept.sort_by_key(|(line, _)| *line);
    for (line, text) in kept {
        out.keep(line, &text);
    }
    out
}

/// How much later the envelopes' times are than the lines' own, for the report's notes.
fn lag_note(lags: &[f64]) -> String {
    if lags.is_empty() {
        return String::new();
    }
    let mut sorted = lags.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    format!(
        "; the envelope's times are {} to {} after them (median {}, {} events)",
        time::format_duration(sorted[0]),
        time::format_duration(sorted[sorted.len() - 1]),
        time::format_duration(median),
        sorted.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EventKind;
    use std::path::PathBuf;

    /// An envelope for these tests: `<RFC 3339 UTC>\t<pod>\t<message>` a line, blank lines between.
    struct Tabbed;

    impl Envelope for Tabbed {
        fn name(&self) -> &'static str {
            "tabbed"
        }

        fn sniff(&self, head: &str) -> bool {
            head.contains('\t')
        }

        fn example(&self) -> &'static str {
            "2026-10-07T00:33:00.004Z\tweb-1\tjob 7 active"
        }

        fn pieces<'a>(
            &'a self,
            input: Box<dyn BufRead + Send>,
            _context: Context<'a>,
        ) -> Box<dyn Iterator<Item = Result<Piece>> + Send + 'a> {
            Box::new(input.lines().enumerate().map(|(at, line)| {
                let line_number = at as u64 + 1;
                let text = line.expect("test input");
                if text.is_empty() {
                    return Ok(Piece::Ignored { line: line_number, lines: 1, reason: "blank" });
                }
                let mut cells = text.splitn(3, '\t');
                let (Some(time), Some(pod), Some(message)) = (cells.next(), cells.next(), cells.next()) else {
                    return Ok(Piece::Rejected { line: line_number, lines: 1, reason: "expected three cells".into() });
                };
                let at = DateTime::parse_from_rfc3339(time).ok().and_then(|t| Moment::new(t.with_timezone(&Utc)).ok());
                let mut labels = super::super::Labels::default();
                labels.push("pod", pod);
                Ok(Piece::Record(Record {
                    line: line_number,
                    lines: 1,
                    at,
                    labels,
                    message: message.replace("\\n", "\n"),
                }))
            }))
        }
    }

    /// kubectl's envelope read record by record (`Envelope::pieces`), not in blocks.
    struct Walked;

    impl Envelope for Walked {
        fn name(&self) -> &'static str {
            "kubectl"
        }

        fn sniff(&self, head: &str) -> bool {
            super::super::kubectl::Kubectl.sniff(head)
        }

        fn example(&self) -> &'static str {
            super::super::kubectl::Kubectl.example()
        }

        fn pieces<'a>(
            &'a self,
            input: Box<dyn BufRead + Send>,
            context: Context<'a>,
        ) -> Box<dyn Iterator<Item = Result<Piece>> + Send + 'a> {
            super::super::kubectl::Kubectl.pieces(input, context)
        }
    }

    /// Whatever a kubectl export holds, read in blocks (`one_line`) it gives what it gives read
    /// record by record: the same events, account, rejections, notes and envelope times, or the
    /// same error. The fixtures, and generated exports of every kind of line, in three zones
    /// (one with a DST fall-back), cut at a small line cap.
    #[test]
    fn a_kubectl_export_read_in_blocks_is_read_as_record_by_record() {
        let kinds: [&str; 12] = [
            "2026-11-01T08:30:00.001734812Z 2026-11-01 01:30:00.000 INFO  [BullWorker] job active queue=q id=7 pid=41877\n",
            "2026-11-01T09:30:00.002000000Z 2026-11-01 01:30:00.500 INFO  [BullWorker] job completed queue=q id=7 pid=41877\n",
            "2026-11-01T08:31:00.000000000Z 2026-11-01 01:31:00.000 INFO  [main] server starting pid=52117\n",
            "2026-11-01T08:32:00.000000000Z     at ReviewClient.post (/app/dist/review-client.js:41:13)\n",
            "2026-11-01T08:33:00.000000000Z \n",
            "\n",
            "error: container \"app\" in pod \"web-1\" is waiting to start\n",
            "not a kubectl line\n",
            "2026-11-01T08:34:00.5+09:00 \u{1b}[33m2026-11-01 01:34:00.000 WARN\u{1b}[0m [BullWorker] job stalled queue=q id=9\r\n",
            "2026-11-01T08:35:00.000000000Z 2026-11-01 01:35:00.000 INFO  [BullWorker] job active queue=q id=9 pid=1 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n",
            "2026-11-01T08:36:00.000000000Z 2026-11-01 01:36:00.000 INFO  [Worker] worker options lockDuration=30000 stalledInterval=30000\n",
            "2026-11-01T08:29:00.000000000Z 2026-11-01 01:29:00.000 ERROR [ReviewClient] POST /reviews failed status=502\n",
        ];
        let mut exports: Vec<(String, String)> = ["kubectl.log", "docker.log", "docker-real.log"]
            .iter()
            .map(|name| (name.to_string(), super::super::runtime::tests::fixture(name)))
            .collect();
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        for round in 0..60 {
            let mut text = String::new();
            for _ in 0..(20 + seed % 60) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                text.push_str(kinds[usize::try_from(seed % kinds.len() as u64).unwrap_or(0)]);
            }
            if round % 4 == 0 {
                text.pop();
            }
            exports.push((format!("generated {round}"), text));
        }
        let zones = [Some(chrono_tz::America::Los_Angeles), SEOUL, None];
        let mut compared = 0;
        for (name, text) in &exports {
            for tz in zones {
                let read_with = |envelope: &'static dyn Envelope| {
                    let spec = SourceSpec {
                        max_line_bytes: 200,
                        ..SourceSpec::new(SourceKind::Log, PathBuf::from("pods.log"), tz, "--log-tz".into())
                    };
                    let mut events = Vec::new();
                    let mut summary = InputSummary::new("pods.log", "log", "kubectl", tz);
                    let result = Unwrap(envelope).read(
                        &spec,
                        0,
                        Box::new(std::io::Cursor::new(text.clone().into_bytes())),
                        &mut events,
                        &mut summary,
                    );
                    match result {
                        Ok(()) => format!("{events:?}\n{summary:?}"),
                        Err(error) => format!("error: {error}"),
                    }
                };
                let kubectl: &'static dyn Envelope = &super::super::kubectl::Kubectl;
                assert!(kubectl.one_line().is_some() && Walked.one_line().is_none());
                assert_eq!(read_with(kubectl), read_with(&Walked), "{name} in {tz:?}");
                compared += 1;
            }
        }
        assert_eq!(compared, exports.len() * zones.len());
    }

    fn read(text: &str, tz: Option<Tz>) -> Result<(Vec<Event>, InputSummary)> {
        let spec = SourceSpec::new(SourceKind::Log, PathBuf::from("export.tsv"), tz, "--log-tz".into());
        let mut events = Vec::new();
        let mut summary = InputSummary::new("export.tsv", "log", "tabbed", tz);
        Unwrap(&Tabbed).read(&spec, 0, Box::new(std::io::Cursor::new(text.to_string())), &mut events, &mut summary)?;
        events.sort_by_key(|e| (e.moment(), e.origin().line));
        Ok((events, summary))
    }

    const SEOUL: Option<Tz> = Some(chrono_tz::Asia::Seoul);

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn events_cite_the_exports_lines_and_instances_and_keep_the_lines_own_times() {
        let export = "\
2026-10-07T00:33:00.010Z\tweb-1\t2026-10-07 09:33:00.004 INFO  [BullWorker] job active queue=q id=7 pid=41877

2026-10-07T00:37:26.020Z\tweb-2\t2026-10-07 09:37:26.000 INFO  [main] server starting pid=52117
";
        let (events, summary) = read(export, SEOUL).unwrap();
        let active = events.iter().find(|e| e.kind == EventKind::JobActive).expect("the activation");
        assert_eq!(active.at(), at("2026-10-07T00:33:00.004Z"), "the line's own time, in the declared zone");
        assert_eq!(active.origin().line, 1);
        assert_eq!(active.instance.as_deref(), Some("pod=web-1"));
        let start = events.iter().find(|e| e.kind == EventKind::ProcessStart).expect("the restart");
        assert_eq!(start.origin().line, 3, "the export's line, past its blank one");
        assert_eq!(start.instance.as_deref(), Some("pod=web-2"));
        assert_eq!((summary.lines, summary.used + summary.ignored + summary.rejected), (3, 3));
        assert_eq!(summary.ignored_by_reason.get("blank"), Some(&1));
        assert_eq!(summary.texts.kept(3), Some("2026-10-07 09:37:26.000 INFO  [main] server starting pid=52117"));
        assert_eq!(summary.envelope_times.len(), 2);
        assert_eq!(summary.envelope_times[0], (1, Moment::new(at("2026-10-07T00:33:00.010Z")).unwrap()));
        assert!(summary.notes[0].contains("keep the lines' own times"), "{:?}", summary.notes);
        assert!(summary.notes[0].contains("0.006 s to 0.02 s after them"), "{:?}", summary.notes);
    }

    #[test]
    fn lines_without_a_time_of_their_own_take_their_records_time() {
        let export = "\
2026-10-07T00:33:00.004Z\tweb-1\tjob active queue=q id=7
2026-10-07T00:37:26.000123456Z\tweb-1\tserver starting pid=52117
";
        let (events, summary) = read(export, None).unwrap();
        let times: Vec<_> = events.iter().map(|e| (e.kind, e.at(), e.origin().line)).collect();
        assert_eq!(
            times,
            [
                (EventKind::JobActive, at("2026-10-07T00:33:00.004Z"), 1),
                (EventKind::ProcessStart, at("2026-10-07T00:37:26.000123456Z"), 2)
            ]
        );
        assert_eq!(
            summary.texts.kept(2),
            Some("server starting pid=52117"),
            "the time written for the reader is not shown"
        );
        assert!(summary.notes[0].contains("the lines carry no time"), "{:?}", summary.notes);
        assert!(summary.envelope_times.is_empty(), "no line time to check");
    }

    #[test]
    fn an_export_sorted_newest_first_is_read_from_its_end_so_continuations_follow_their_entry() {
        // Read top-down, the stack trace line would continue the entry before it in the file.
        let export = "\
2026-10-07T00:37:26.000Z\tweb-1\t2026-10-07 09:37:26.000 INFO  [main] server starting pid=52117
2026-10-07T00:33:09.001Z\tweb-1\t    at ReviewClient.post (/app/dist/review-client.js:41:13)
2026-10-07T00:33:09.000Z\tweb-1\t2026-10-07 09:33:09.000 ERROR [ReviewClient] POST /reviews failed status=502
2026-10-07T00:33:00.004Z\tweb-1\t2026-10-07 09:33:00.004 INFO  [BullWorker] job active queue=q id=7
";
        let (events, summary) = read(export, SEOUL).unwrap();
        let lines: Vec<_> = events.iter().map(|e| (e.kind, e.origin().line)).collect();
        assert_eq!(lines, [(EventKind::JobActive, 4), (EventKind::Error, 3), (EventKind::ProcessStart, 1)]);
        assert_eq!(summary.ignored_by_reason.get("continuation"), Some(&1), "{:?}", summary.ignored_by_reason);
        assert!(summary.notes.iter().any(|n| n.contains("sorted newest first")), "{:?}", summary.notes);
        assert!(
            !summary.notes.iter().any(|n| n.contains("out of time order")),
            "reversed, it is in order: {:?}",
            summary.notes
        );
    }

    #[test]
    fn colour_codes_kept_in_a_record_do_not_hide_the_lines_own_time() {
        let export = "2026-10-07T00:33:00.010Z\tweb-1\t\u{1b}[32m2026-10-07 09:33:00.004 INFO\u{1b}[0m  [BullWorker] job active queue=q id=7\n";
        let (events, summary) = read(export, SEOUL).unwrap();
        assert_eq!(events.len(), 1, "{summary:?}");
        assert_eq!(events[0].at(), at("2026-10-07T00:33:00.004Z"));
        assert_eq!(summary.texts.kept(1), Some("2026-10-07 09:33:00.004 INFO  [BullWorker] job active queue=q id=7"));
    }

    #[test]
    fn records_on_one_line_count_it_once_used_if_one_is() {
        // `aws logs filter-log-events --output json | jq -c .`: every event on line 1.
        let export = r#"{"events":[{"logStreamName":"s","timestamp":1791333180010,"message":"2026-10-07 09:33:00.004 INFO  [BullWorker] job active queue=q id=7","ingestionTime":1791333180100,"eventId":"1"},{"logStreamName":"s","timestamp":1791333181010,"message":"2026-10-07 09:33:01.004 DEBUG [Redis] ping ok","ingestionTime":1791333181100,"eventId":"2"},7]}
"#;
        let spec = SourceSpec::new(SourceKind::Log, PathBuf::from("events.json"), SEOUL, "--log-tz".into());
        let mut events = Vec::new();
        let mut summary = InputSummary::new("events.json", "log", "cloudwatch-json", SEOUL);
        Unwrap(&super::super::cloudwatch_json::CloudwatchJson)
            .read(&spec, 0, Box::new(std::io::Cursor::new(export.to_string())), &mut events, &mut summary)
            .unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(
            (summary.lines, summary.used, summary.ignored, summary.rejected),
            (1, 1, 0, 0),
            "{:?}",
            summary.ignored_by_reason
        );
        assert!(
            summary.notes.iter().any(|n| n.contains("1 element(s) on lines that hold a record too")),
            "{:?}",
            summary.notes
        );
    }

    #[test]
    fn records_without_a_time_say_that_nothing_checks_the_zone() {
        let export = "\
2026-10-07 00:33:00\tweb-1\t2026-10-07 09:33:00.004 INFO  [BullWorker] job active queue=q id=7
";
        let (events, summary) = read(export, SEOUL).unwrap();
        assert_eq!(events[0].at(), at("2026-10-07T00:33:00.004Z"));
        assert!(summary.notes.iter().any(|n| n.contains("give no time leasetrace can place")), "{:?}", summary.notes);
        assert!(summary.envelope_times.is_empty());
    }

    #[test]
    fn a_repeated_hour_is_placed_by_the_records_utc_time_whatever_the_order() {
        // Berlin falls back at 03:00 CEST on 2026-10-25: 02:30 happens at 00:30Z and at 01:30Z.
        let berlin = Some(chrono_tz::Europe::Berlin);
        let export = "\
2026-10-25T01:30:00.100Z\tweb-1\t2026-10-25 02:30:00.000 INFO  [BullWorker] job active queue=q id=8
2026-10-25T00:30:00.100Z\tweb-2\t2026-10-25 02:30:00.000 INFO  [BullWorker] job active queue=q id=7
";
        let (events, summary) = read(export, berlin).unwrap();
        let placed: Vec<_> = events.iter().map(|e| (e.job_id.unwrap().to_string(), e.at())).collect();
        assert_eq!(
            placed,
            [("7".to_string(), at("2026-10-25T00:30:00Z")), ("8".to_string(), at("2026-10-25T01:30:00Z"))]
        );
        assert!(summary.notes.iter().any(|n| n.contains("1 time(s) in a repeated hour")), "{:?}", summary.notes);
        assert!(summary.folds.is_empty(), "no line-order pass to report");
    }

    #[test]
    fn lines_without_an_offset_and_no_zone_are_refused_with_the_zone_their_envelope_says() {
        let export = "\
2026-10-07T00:33:00.010Z\tweb-1\t2026-10-07 09:33:00.004 INFO  job active queue=q id=7
2026-10-07T00:33:01.010Z\tweb-1\t2026-10-07 09:33:01.004 INFO  job active queue=q id=8
";
        let error = read(export, None).unwrap_err().to_string();
        assert!(error.contains("export.tsv:1: timestamp has no UTC offset"), "{error}");
        assert!(error.contains("say the lines were written at UTC+09:00 (Asia/Seoul, Asia/Tokyo"), "{error}");
    }

    #[test]
    fn an_error_of_the_inner_reader_names_the_exports_line() {
        let export = "\
2026-10-07T00:33:00.004Z\tweb-1\t2026-10-07 09:33:00.004 INFO  job active queue=q id=7

2026-10-07T00:33:01.004Z\tweb-1\t2026-13-07 09:33:01.004 INFO  job active queue=q id=8
";
        let error = read(export, SEOUL).unwrap_err().to_string();
        assert!(error.contains("export.tsv:3"), "{error}");
    }

    #[test]
    fn rejected_records_and_nul_bytes_are_accounted_with_their_lines() {
        let export = "no cells here\n2026-10-07T00:33:00.004Z\tweb-1\tjob active\0 queue=q id=7\n2026-10-07T00:33:01.004Z\tweb-1\tjob active queue=q id=8\n";
        let (events, summary) = read(export, None).unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!((summary.lines, summary.rejected), (3, 2));
        let lines: Vec<u64> = summary.rejections.iter().map(|r| r.line).collect();
        assert_eq!(lines, [1, 2]);
        assert!(summary.rejections[1].reason.contains("NUL"));
    }
}
