//! Sources → events.
//!
//! Each input format is one file with one `EventFormat`, in the folder of its source family
//! (`ledger`, `log`, `bullmq`, `trace`, `bull`), whose `FORMATS` lists them; `FAMILIES` lists the families (and
//! `envelope::ENVELOPES` the log envelopes), and format selection reads both (`formats`). A parser turns lines into typed
//! events with their origin and accounts for every line (used, ignored with a reason, or
//! rejected with a reason); it never judges what the events mean. Sources are read as streams:
//! memory follows the events kept, not the bytes read.

pub mod bull;
pub mod bullmq;
pub mod envelope;
pub mod io;
pub mod ledger;
pub mod log;
pub mod trace;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use chrono_tz::Tz;

use io::{gzip, lines, read_ahead, spool};

use crate::error::{Error, Result};
use crate::model::{Event, InputSummary, Moment};
use crate::progress::{Progress, SourceBar};

/// What a source is evidence of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// The application's run ledger (UTC by default).
    Ledger,
    /// Server log lines that start with a timestamp.
    Log,
    /// BullMQ worker options (`lockDuration`, ...).
    BullmqParams,
    /// BullMQ's Redis events stream (`XRANGE bull:<queue>:events`).
    BullmqEvents,
    /// BullMQ job hashes (`HGETALL bull:<queue>:<id>`).
    BullmqJobs,
    /// OpenTelemetry traces of BullMQ workers (`bullmq-otel`), as OTLP JSON.
    Trace,
    /// `redis-cli MONITOR` output: legacy Bull's lock scripts as Redis ran them.
    RedisMonitor,
}

impl SourceKind {
    pub fn name(self) -> &'static str {
        match self {
            SourceKind::Ledger => "ledger",
            SourceKind::Log => "log",
            SourceKind::BullmqParams => "bullmq-params",
            SourceKind::BullmqEvents => "bullmq-events",
            SourceKind::BullmqJobs => "bullmq-jobs",
            SourceKind::Trace => "trace",
            SourceKind::RedisMonitor => "redis-monitor",
        }
    }

    /// The flag that gives a source of this kind on the command line.
    pub fn flag(self) -> &'static str {
        match self {
            SourceKind::Ledger => "--ledger",
            SourceKind::Log => "--log",
            SourceKind::BullmqParams => "--params",
            SourceKind::BullmqEvents => "--events",
            SourceKind::BullmqJobs => "--jobs",
            SourceKind::Trace => "--trace",
            SourceKind::RedisMonitor => "--monitor",
        }
    }

    pub fn from_name(name: &str) -> Option<SourceKind> {
        [
            SourceKind::Ledger,
            SourceKind::Log,
            SourceKind::BullmqParams,
            SourceKind::BullmqEvents,
            SourceKind::BullmqJobs,
            SourceKind::Trace,
            SourceKind::RedisMonitor,
        ]
        .into_iter()
        .find(|kind| kind.name() == name)
    }
}

/// A user-defined log rule: a regex with named captures that yields one event kind.
#[derive(Debug, Clone)]
pub struct RuleSpec {
    pub event: String,
    pub pattern: String,
}

/// One source, validated: everything a parser needs, nothing about the CLI.
/// Whose record a ledger is. The application's ledger records what it did (`effect-posted`: it
/// sent an effect); a receiver's own record of what it got (a webhook's request log, a payment
/// provider's idempotency table) is the other side of the same deliveries. Read as a second
/// sender, each delivery would count twice; read as the receiver's, its rows say what the receiver
/// accepted and what it recognised as a repeat (`effect-received`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LedgerRole {
    #[default]
    Sender,
    Receiver,
}

#[derive(Debug, Clone)]
pub struct SourceSpec {
    pub kind: SourceKind,
    pub path: PathBuf,
    /// Explicit format name; otherwise chosen from the file name and content.
    pub format: Option<String>,
    /// Zone of wall-clock timestamps in this source.
    pub tz: Option<Tz>,
    /// Where the user declares the zone (a flag or a manifest key), for error messages.
    pub tz_fix: String,
    /// Whether `tz` is the kind's default (a ledger's UTC), declared by nobody: the report says
    /// so when some time had no offset (`InputSummary::naive_times`).
    pub tz_defaulted: bool,
    /// How a local time that a fall-back makes happen twice is placed (`ambiguous`).
    pub ambiguous: crate::time::Ambiguous,
    /// Where the user says how (a manifest key or a flag), for error messages.
    pub ambiguous_fix: String,
    /// Ledger: field name → column name overrides.
    pub columns: BTreeMap<String, String>,
    /// Ledger: extra event-column values → event kind names.
    pub event_values: BTreeMap<String, String>,
    /// Log: user rules, tried before the built-in ones.
    pub rules: Vec<RuleSpec>,
    /// Log: whether the built-in rules apply.
    pub builtin_rules: bool,
    /// BullMQ events stream: the queue the stream belongs to (`bull:<queue>:events`).
    pub queue: Option<String>,
    /// Ledger: whose record it is (`LedgerRole`).
    pub role: LedgerRole,
    /// How the source's lines can be read again: formats with many events then keep no texts,
    /// only marks to find lines by (`LineTexts`), and the report reads back the lines it shows.
    /// Set when the source is opened.
    pub reread: Reread,
    /// Whether a compressed file is read back by decompressing it again (`Reread::Decompress`)
    /// rather than keeping the text of each event. True but for a whole timeline that shows its
    /// lines, which would decompress the file again for every chunk of events it writes.
    pub reread_compressed: bool,
    /// Bytes at the start of a plain file before its text: 3 for a UTF-8 byte-order mark, which
    /// the reader never sees (`lines::Text`) but the byte offsets that lines are read back by
    /// (`Reread::Seek`) count. Set when the source is opened.
    pub text_start: u64,
    /// The longest line (a CSV ledger: record) read, in bytes: a longer one is rejected and passed
    /// over in bounded memory (`lines::MAX_LINE_BYTES` unless `--max-line-bytes` says otherwise).
    pub max_line_bytes: usize,
    /// The most bytes of records a reader holds when it must hold a source whole (a newest-first
    /// export: `lines::MAX_HELD_BYTES` unless `--max-held-bytes` says otherwise).
    pub max_held_bytes: usize,
    /// A gzip-compressed plain-text log: the most memory the texts of its lines with events take
    /// when kept as they are read; past it they are dropped, and the report decompresses the file
    /// again for the lines it shows (`log::text::KEPT_WITHIN` unless a test lowers it).
    pub max_kept_bytes: usize,
    /// Where a source read once (standard input, a FIFO) is read back from: the temporary copy
    /// written while it is read, or stdin's own file (`spool::Spool`). Set before the sources are
    /// read (`spool::attach`).
    pub spool: Option<std::sync::Arc<spool::Spool>>,
    /// Ledgers and logs: the time range kept (`--since`/`--until` widened by `--read-margin`);
    /// an event outside it is counted and not kept.
    pub window: Option<crate::model::filter::ReadWindow>,
}

/// How the lines of a source are read again for the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reread {
    /// Standard input (and a compressed file when `reread_compressed` is off): each event keeps
    /// the text of its line.
    #[default]
    No,
    /// A plain file: read again at any byte offset, and readable in parts at once.
    Seek,
    /// A gzip-compressed file: decompressed again from its start, forward to each offset (in the
    /// decompressed text) that the report shows.
    Decompress,
}

impl Reread {
    /// Whether events keep only where their line is.
    pub fn by_offset(self) -> bool {
        self != Reread::No
    }
}

impl SourceSpec {
    pub fn new(kind: SourceKind, path: PathBuf, tz: Option<Tz>, tz_fix: String) -> Self {
        let (ambiguous, flag) = match kind {
            SourceKind::Log => (crate::time::Ambiguous::Order, "--log-ambiguous"),
            _ => (crate::time::Ambiguous::Error, "--ledger-ambiguous"),
        };
        SourceSpec {
            kind,
            path,
            format: None,
            tz,
            tz_fix,
            tz_defaulted: false,
            ambiguous,
            ambiguous_fix: format!("{flag} earlier or {flag} later"),
            columns: BTreeMap::new(),
            event_values: BTreeMap::new(),
            rules: Vec::new(),
            builtin_rules: true,
            queue: None,
            role: LedgerRole::Sender,
            reread: Reread::No,
            reread_compressed: true,
            text_start: 0,
            max_line_bytes: lines::MAX_LINE_BYTES,
            max_held_bytes: lines::MAX_HELD_BYTES,
            max_kept_bytes: log::text::KEPT_WITHIN,
            spool: None,
            window: None,
        }
    }

    pub fn display_path(&self) -> String {
        self.path.display().to_string()
    }

    /// The file the source's text is read again from: its spool's when it is read once (`spool`),
    /// else its path.
    pub fn file(&self) -> &Path {
        self.spool.as_deref().map_or(&self.path, spool::Spool::path)
    }

    /// Why a time of this source cannot be placed, with the setting that fixes it.
    pub fn zone_problem(&self, problem: &crate::time::ZoneProblem) -> String {
        match problem {
            crate::time::ZoneProblem::Ambiguous(_) => {
                format!("{}; say which time it is with {}", problem.explain(&self.tz_fix), self.ambiguous_fix)
            }
            _ => problem.explain(&self.tz_fix),
        }
    }

    /// Follows this source's lines through the folds of its zone (`time::fold::LineOrder`).
    pub fn line_order(&self) -> Option<crate::time::fold::LineOrder> {
        crate::time::fold::LineOrder::new(self.tz, self.ambiguous)
    }

    /// The end of a source read in order: moves the events of a fold's second pass, and writes
    /// what became of the lines in repeated hours into `summary` (an error when a log is all in
    /// one and line order cannot place its events).
    pub(crate) fn finish_order(
        &self,
        order: Option<crate::time::fold::LineOrder>,
        events: &mut [Event],
        summary: &mut InputSummary,
    ) -> Result<()> {
        let Some(order) = order else { return Ok(()) };
        let folds = order
            .finish(events, &self.ambiguous_fix)
            .map_err(|(line, message)| Error::input(&self.path, Some(line), message))?;
        crate::time::fold::merge(&mut summary.folds, folds);
        Ok(())
    }
}

/// A parser of one input format into events.
pub trait EventFormat: Sync {
    /// The name used in `format = "..."` and `--*-format`.
    fn name(&self) -> &'static str;
    fn kind(&self) -> SourceKind;
    /// File name endings (after removing `.gz`) this format is chosen for by default.
    fn extensions(&self) -> &'static [&'static str];
    /// Whether the first non-blank line looks like this format (used when the name says nothing).
    fn sniff(&self, first_line: &str) -> bool;
    /// Whether the start of the input (its first 64 KiB or so, as text) looks like this format:
    /// the first non-blank line's `sniff`, but for formats whose first line says too little (a
    /// pretty-printed JSON document starts with `{`).
    fn sniff_head(&self, head: &str) -> bool {
        let first = head.split(['\n', '\r']).map(str::trim).find(|line| !line.is_empty());
        self.sniff(first.unwrap_or_default())
    }
    /// Whether this is a log envelope (`envelope::unwrap::Unwrap`): its records' lines are read
    /// by one of the other log formats.
    fn is_envelope(&self) -> bool {
        false
    }
    /// Reads the whole input, pushing events and accounting for every line in `summary`.
    fn read(
        &self,
        spec: &SourceSpec,
        source: u16,
        input: Box<dyn BufRead + Send>,
        events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<()>;

    /// Whether the format reads a lone `\r` as a line end itself (the CSV ledger, whose quoted
    /// cells may hold one). The others read their input through `lines::LineEnds`, which
    /// turns each lone `\r` into `\n`.
    fn reads_lone_cr(&self) -> bool {
        false
    }

    /// As `read`, for a plain file that `reopen` can open again at any byte: a format may read
    /// parts of a large file on several threads (the CSV ledger does). The events and the
    /// account must be those `read` gives.
    fn read_file(
        &self,
        spec: &SourceSpec,
        source: u16,
        input: Box<dyn BufRead + Send>,
        _reopen: &Reopen,
        events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<()> {
        self.read(spec, source, input, events, summary)
    }
}

/// Plain files at least this large are read in two parts on two threads by the formats that can
/// (`EventFormat::read_file`: the CSV ledger and the text log).
pub(crate) const SPLIT_AT_LEAST: u64 = 16 << 20;

/// Opens a plain source file again at a byte offset, its bytes counted on the source's bar.
pub struct Reopen<'a> {
    path: &'a Path,
    bar: Option<&'a SourceBar>,
    /// Whether a lone `\r` is read as `\n` (`lines::LineEnds`), as the first read had it.
    lone_cr: bool,
    /// For a source read once, the copy being made of it (`path`), which the first part reads as
    /// it grows: a second part is decided once the source has ended (`spool::Growth::split`).
    growth: Option<&'a spool::Growth>,
}

impl Reopen<'_> {
    pub fn path(&self) -> &Path {
        self.path
    }

    /// The copy being made, for a source read once (standard input, a FIFO): its size is known
    /// only at its end.
    pub fn growth(&self) -> Option<&spool::Growth> {
        self.growth
    }

    /// The file from byte `offset` on.
    pub fn at(&self, offset: u64) -> Result<Box<dyn BufRead + Send>> {
        use std::io::{Seek, SeekFrom};
        let io = |source| Error::Io { path: self.path.to_path_buf(), source };
        let mut file = File::open(self.path).map_err(io)?;
        file.seek(SeekFrom::Start(offset)).map_err(io)?;
        let input: Box<dyn BufRead + Send> = match self.bar {
            Some(bar) => Box::new(BufReader::with_capacity(1 << 16, bar.count(file))),
            None => Box::new(BufReader::with_capacity(1 << 16, file)),
        };
        // Only the file's start can hold a byte-order mark: a later part is read as it is.
        let input: Box<dyn BufRead + Send> = if offset == 0 { Box::new(lines::Text::new(input)) } else { input };
        Ok(if self.lone_cr { Box::new(lines::LineEnds::new(input)) } else { input })
    }

    /// Where the first `\n` at or after byte `from` is, and the bytes from there to the end of
    /// the 1 MiB read from `from` (not counted on the bar: a look for where a second part of the
    /// file may start). `None`: no line ending in that MiB.
    pub fn line_end_after(&self, from: u64) -> Result<Option<(u64, Vec<u8>)>> {
        use std::io::{Read, Seek, SeekFrom};
        let io = |source| Error::Io { path: self.path.to_path_buf(), source };
        let mut file = File::open(self.path).map_err(io)?;
        file.seek(SeekFrom::Start(from)).map_err(io)?;
        let mut block = vec![0; 1 << 20];
        let read = file.read(&mut block).map_err(io)?;
        block.truncate(read);
        Ok(memchr::memchr(b'\n', &block).map(|newline| (from + newline as u64, block.split_off(newline))))
    }
}

/// The second part of a file read in two (from a line start on, its lines counted from 1 there),
/// after the first part's `before` lines: its lines, rejections and error renumbered, its events
/// and account added to the first part's. Formats that read a large file in two parts on two
/// threads (CSV ledger, text log) join them here.
pub(crate) fn join_later_part(
    spec: &SourceSpec,
    before: u64,
    later: Result<(Vec<Event>, InputSummary)>,
    events: &mut Vec<Event>,
    summary: &mut InputSummary,
) -> Result<()> {
    let (mut more, mut account) = later.map_err(|error| shifted(error, before))?;
    for event in &mut more {
        let line = line_of(spec, u64::from(event.origin().line) + before)?;
        event.set_origin(crate::model::Origin { line, ..event.origin() });
    }
    append_freeing(events, more);
    for rejection in &mut account.rejections {
        rejection.line += before;
    }
    for fold in &mut account.folds {
        fold.shift(before);
    }
    if let Some(crowded) = &mut account.crowded {
        crowded.first_line += before;
    }
    let texts = std::mem::take(&mut account.texts);
    summary.texts.append_later(texts, line_of(spec, before)?);
    summary.absorb(account);
    Ok(())
}

/// `more` added at the end of `events`, a block at a time, each block's memory returned as it is
/// moved: `append` would hold both copies of the moved events at once, 31 MB at the peak of
/// reading the main benchmark case's ledger (a million events of its second part). Exactly what
/// `more` needs is reserved (`append` alone would grow the capacity to twice its own).
pub(crate) fn append_freeing(events: &mut Vec<Event>, mut more: Vec<Event>) {
    const BLOCK: usize = 1 << 15;
    events.reserve_exact(more.len());
    if more.len() <= BLOCK {
        events.append(&mut more);
        return;
    }
    // Reversed, the earliest events are at the end, where a list can shrink: each block is taken
    // from there, and the list shrunk to what is left (a large allocation gives its pages back).
    more.reverse();
    while !more.is_empty() {
        let rest = more.len().saturating_sub(BLOCK);
        events.extend(more.drain(rest..).rev());
        more.shrink_to_fit();
    }
}

/// An error of a file's second part, its line counted in the file (see `join_later_part`).
pub(crate) fn shifted(error: Error, before: u64) -> Error {
    match error {
        Error::Input { path, line: Some(line), message } => Error::Input { path, line: Some(line + before), message },
        other => other,
    }
}

/// Every source family's event formats but the log envelopes (`formats` gives all), each
/// family's list in its own `mod.rs`: adding a format is one file and one line there, adding a
/// family one line here. Within a kind, a family's order is the order formats are tried in.
pub static FAMILIES: &[&[&dyn EventFormat]] =
    &[ledger::FORMATS, log::FORMATS, bullmq::FORMATS, trace::FORMATS, bull::FORMATS];

/// Every format but the log envelopes, family by family.
pub fn plain_formats() -> impl Iterator<Item = &'static dyn EventFormat> + Clone {
    FAMILIES.iter().flat_map(|family| family.iter().copied())
}

/// Every format, the log envelopes' (`envelope::ENVELOPES`) after the families'.
pub fn formats() -> impl Iterator<Item = &'static dyn EventFormat> + Clone {
    plain_formats().chain(envelope::ENVELOPES.iter().map(|format| format as &dyn EventFormat))
}

/// Opens a source: a file or `-` for standard input, gzip-compressed or not (by content).
pub fn open(path: &Path) -> Result<Box<dyn BufRead + Send>> {
    open_counted(path, &Progress::hidden()).map(|(input, _)| input)
}

/// As `open`, with a progress bar for the source when `progress` shows any. The bar goes when the
/// returned `SourceBar` is dropped, so the caller keeps it for as long as it reads.
pub fn open_counted(path: &Path, progress: &Progress) -> Result<(Box<dyn BufRead + Send>, Option<SourceBar>)> {
    open_labelled(path, &path.display().to_string(), progress)
}

/// As `open_counted`, the bar named `label`.
pub fn open_labelled(
    path: &Path,
    label: &str,
    progress: &Progress,
) -> Result<(Box<dyn BufRead + Send>, Option<SourceBar>)> {
    let (raw, bar): (Box<dyn Read + Send>, _) = if path == Path::new("-") {
        (Box::new(std::io::stdin()), progress.source("stdin", None))
    } else {
        let file = File::open(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
        // A FIFO or a device has no meaningful length: it gets a spinner, like stdin.
        let size = file.metadata().ok().filter(std::fs::Metadata::is_file).map(|m| m.len());
        (Box::new(file), progress.source(label, size))
    };
    let (input, _) = open_text(raw, bar.as_ref(), path)?;
    Ok((input, bar))
}

/// The bytes read from a source before its format is chosen, and the reader's buffer.
const HEAD_BYTES: usize = 1 << 16;

/// What the first bytes of a source said.
#[derive(Debug, Clone, Copy)]
struct TextStart {
    gzip: bool,
    /// A UTF-8 byte-order mark before the text (of a plain source).
    bom: bool,
}

/// The text of `raw`: decompressed when it is gzip (by its first bytes), the byte-order mark
/// skipped. `bar` counts the bytes read.
fn open_text(
    raw: Box<dyn Read + Send>,
    bar: Option<&SourceBar>,
    path: &Path,
) -> Result<(Box<dyn BufRead + Send>, TextStart)> {
    // Counted before the gzip decoder, so that a compressed file's bar ends at its size on disk.
    let mut raw: Box<dyn Read + Send> = match bar {
        Some(bar) => Box::new(bar.count(raw)),
        None => raw,
    };
    // The first block read whole, as the first read of a file gives it: a pipe's first read may
    // give a few bytes, fewer than a gzip's magic or the lines a format is told by (`peek_head`).
    let mut head = Vec::with_capacity(HEAD_BYTES);
    (&mut raw)
        .take(HEAD_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
    let start = TextStart { gzip: head.starts_with(&GZIP_MAGIC), bom: head.starts_with(lines::BOM) };
    let reader = BufReader::with_capacity(HEAD_BYTES, std::io::Cursor::new(head).chain(raw));
    // A byte-order mark is skipped where the text starts: after decompression for a gzip.
    let input: Box<dyn BufRead + Send> = if start.gzip {
        // Decompressed on its own thread, ahead of the parsing.
        Box::new(lines::Text::new(read_ahead::ReadAhead::new(gzip::Members::new(reader))))
    } else {
        Box::new(lines::Text::new(reader))
    };
    Ok((input, start))
}

/// Picks the parser for a source: the declared format, else the file ending, else the content.
/// `head` is the start of the input as text (its first line is enough for most formats). A log
/// envelope's name may say the format of the lines inside: `kubectl+pino`.
pub fn choose_format(spec: &SourceSpec, head: &str) -> Result<&'static dyn EventFormat> {
    let candidates = formats().filter(|f| f.kind() == spec.kind);
    if let Some(name) = &spec.format {
        let names: Vec<&str> = candidates.clone().map(EventFormat::name).collect();
        let (outer, inner) = match name.split_once('+') {
            Some((outer, inner)) => (outer, Some(inner)),
            None => (name.as_str(), None),
        };
        let format = candidates.into_iter().find(|f| f.name() == outer).ok_or_else(|| {
            Error::input(
                &spec.path,
                None,
                format!("unknown {} format '{name}': expected one of {}", spec.kind.name(), names.join(", ")),
            )
        })?;
        if inner.is_some() && !format.is_envelope() {
            return Err(Error::input(
                &spec.path,
                None,
                format!(
                    "format '{name}': only a log envelope (kubectl, journald-json, loki-jsonl, ...) names a format inside it after '+'"
                ),
            ));
        }
        return Ok(format);
    }
    // Envelopes first: their lines hold a log format's lines (a kubectl line of pino is a time,
    // then pino), and their sniffing asks for marks a plain log does not have.
    if let Some(format) = candidates.clone().find(|f| f.is_envelope() && f.sniff_head(head)) {
        return Ok(format);
    }
    // Formats without file endings (pino, winston, nestjs) are known only by their content, which
    // is distinctive: they are tried first, so that a `.log` file of pino lines is read as pino.
    if let Some(format) = candidates.clone().find(|f| f.extensions().is_empty() && f.sniff_head(head)) {
        return Ok(format);
    }
    let file_name = spec.path.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
    let file_name = file_name.strip_suffix(".gz").unwrap_or(&file_name);
    if let Some(format) =
        candidates.clone().find(|f| f.extensions().iter().any(|ext| file_name.ends_with(&format!(".{ext}"))))
    {
        return Ok(format);
    }
    if let Some(format) = candidates.clone().find(|f| f.sniff_head(head)) {
        return Ok(format);
    }
    let names: Vec<&str> = candidates.map(EventFormat::name).collect();
    Err(Error::input(
        &spec.path,
        Some(1),
        format!(
            "cannot tell the format of this {} from its name or first line; name the file with one of the endings .csv, .tsv, .jsonl, .log or declare format = \"...\" for the source in the manifest (one of {})",
            spec.kind.name(),
            names.join(", ")
        ),
    ))
}

/// The line ends in `bytes` as a CSV ledger counts its lines, and as text editors number them: a
/// line ends at `\n`, `\r\n` or a lone `\r` (old Mac exports), so every `\r` ends one and every
/// `\n` not right after a `\r`. `after_cr` says whether the byte before `bytes` was a `\r`, and
/// is updated to whether their last byte is.
pub(crate) fn line_ends(bytes: &[u8], after_cr: &mut bool) -> u64 {
    let mut count = 0;
    for at in memchr::memchr2_iter(b'\n', b'\r', bytes) {
        let cr_before = if at == 0 { *after_cr } else { bytes[at - 1] == b'\r' };
        count += u64::from(bytes[at] == b'\r' || !cr_before);
    }
    if let Some(&last) = bytes.last() {
        *after_cr = last == b'\r';
    }
    count
}

/// `line` as an event keeps it (`Origin::line`), or an error naming the file.
pub(crate) fn line_of(spec: &SourceSpec, line: u64) -> Result<u32> {
    crate::model::Origin::line_number(line).map_err(|problem| Error::input(&spec.path, Some(line), problem))
}

/// Reads every event source of a case, in order, each with its own bar when `progress` shows any.
pub fn read_sources(specs: &[SourceSpec], progress: &Progress) -> Result<(Vec<Event>, Vec<InputSummary>)> {
    // Sources are independent until the timeline merges them: they are read on as many threads as
    // there are cores (a case of dozens of log files would otherwise hold a read buffer and a
    // thread for each at once), the largest first, and the results are combined in source order,
    // so the output does not depend on which finished first (and the first failing source, in
    // order, is the error reported). A large file read in two parts adds a thread of its own.
    if specs.len() > crate::model::event::MAX_SOURCES {
        return Err(Error::usage(format!(
            "{} sources: more than one analysis can take ({}): merge files of one kind first",
            specs.len(),
            crate::model::event::MAX_SOURCES
        )));
    }
    let size = |spec: &SourceSpec| std::fs::metadata(spec.file()).map_or(0, |m| m.len());
    let mut largest_first: Vec<usize> = (0..specs.len()).collect();
    largest_first.sort_by_key(|&index| std::cmp::Reverse(size(&specs[index])));
    let results = crate::parallel::map_in_order(&largest_first, crate::parallel::cores(), |index| {
        // At most `MAX_SOURCES`, checked above.
        let source = u16::try_from(index).expect("at most MAX_SOURCES sources");
        read_source(source, &specs[index], progress)
    });
    let mut reads = Vec::new();
    let mut summaries = Vec::new();
    for result in results {
        let (read, summary) = result?;
        reads.push(read);
        summaries.push(summary);
    }
    // The largest source's events become the whole list and the others are appended to it: no
    // second copy of millions of events. The timeline sorts them, so the order here is free.
    let largest = (0..reads.len()).max_by_key(|&i| reads[i].len()).unwrap_or(0);
    let mut events = if reads.is_empty() { Vec::new() } else { reads.swap_remove(largest) };
    let total = events.len() + reads.iter().map(Vec::len).sum::<usize>();
    if total > crate::model::timeline::MAX_EVENTS {
        return Err(Error::usage(format!(
            "the sources hold {total} events, more than one analysis can take ({}): analyze a shorter time range, or fewer sources at a time",
            crate::model::timeline::MAX_EVENTS
        )));
    }
    // Exactly what the others need: `append` alone would double a capacity of millions.
    events.reserve_exact(total - events.len());
    for read in reads {
        append_freeing(&mut events, read);
    }
    Ok((events, summaries))
}

fn read_source(index: u16, spec: &SourceSpec, progress: &Progress) -> Result<(Vec<Event>, InputSummary)> {
    if let Some(spool) = &spec.spool
        && spool.is_copy()
    {
        return read_spooled(index, spec, spool, progress);
    }
    // `bar` lives to the end of the function: its bar is cleared when this source is done.
    let (input, bar) = open_labelled(spec.file(), &spec.display_path(), progress)?;
    let reread = reread(spec);
    let text_start = if reread == Reread::Seek { bom_length(spec.file()) } else { 0 };
    let spec = &SourceSpec { reread, text_start, ..spec.clone() };
    read_opened(index, spec, input, bar.as_ref())
}

/// A source read once, copied to its spool while it is read and then read back from there as a
/// file is: by offset, plain (`Reread::Seek`) or compressed (`Reread::Decompress`).
fn read_spooled(
    index: u16,
    spec: &SourceSpec,
    spool: &spool::Spool,
    progress: &Progress,
) -> Result<(Vec<Event>, InputSummary)> {
    let io = |source| Error::Io { path: spec.path.clone(), source };
    let (raw, pipe, bar): (Box<dyn Read + Send>, _, _) = if spec.path == Path::new("-") {
        let stdin = std::io::stdin();
        let pipe = spool::Pipe::of(&stdin);
        (Box::new(stdin), pipe, progress.source("stdin", None))
    } else {
        let file = File::open(&spec.path).map_err(io)?;
        let pipe = spool::Pipe::of(&file);
        (Box::new(file), pipe, progress.source(&spec.display_path(), None))
    };
    // Counted as it is copied: the parts then read the copy.
    let tally = bar.as_ref().map(|bar| bar.count(std::io::empty()));
    let mut raw: Box<dyn Read + Send> = match &bar {
        Some(bar) => Box::new(bar.count(raw)),
        None => raw,
    };
    let mut pipe = pipe.map(|fd| spool::Pipe { fd, tally });
    if spec.kind == SourceKind::Log {
        if let Some(pipe) = &pipe {
            pipe.enlarge();
        }
        // Its first bytes tell whether it is a plain-text log, read as it comes with no copy.
        let mut head = Vec::with_capacity(HEAD_BYTES);
        Read::by_ref(&mut raw).take(HEAD_BYTES as u64).read_to_end(&mut head).map_err(io)?;
        let plain_text = !head.starts_with(&GZIP_MAGIC)
            && choose_format(spec, &String::from_utf8_lossy(head.strip_prefix(lines::BOM).unwrap_or(&head)))
                .is_ok_and(|format| format.name() == log::text::ServerLog.name());
        // Read through `raw` from here on, what standard input holds in its buffer included: the
        // kernel cannot move the rest of the pipe after it.
        raw = Box::new(std::io::Cursor::new(head).chain(raw));
        pipe = None;
        if plain_text {
            let (input, _) = open_text(raw, None, &spec.path)?;
            let spec = &SourceSpec { reread: Reread::No, text_start: 0, ..spec.clone() };
            let how = Reading::Streamed { copy: spool.path(), segment: log::text::SEGMENT_BYTES };
            return read_opened_as(index, spec, input, bar.as_ref(), how);
        }
    }
    let source = spool::Source { raw, pipe };
    let (growth, copy) = spool::Growth::start_from(source, spool).map_err(io)?;
    let (input, start) = open_text(Box::new(copy), None, &spec.path)?;
    let reread = match (start.gzip, spec.reread_compressed) {
        (false, _) => Reread::Seek,
        (true, true) => Reread::Decompress,
        (true, false) => Reread::No,
    };
    let text_start = if reread == Reread::Seek && start.bom { lines::BOM.len() as u64 } else { 0 };
    let spec = &SourceSpec { reread, text_start, ..spec.clone() };
    // Plain text is read in parts as a file is, the copy in place of the file; compressed, in one.
    let growth = (reread == Reread::Seek).then_some(&*growth);
    read_opened_as(index, spec, input, bar.as_ref(), Reading::Growing(growth))
}

/// `read_source` from the opened text on (the byte-order mark skipped, decompressed): the format
/// chosen, the lines read and accounted, the summary's span filled. `crate::fuzzing` reads
/// in-memory inputs through it, as a file is read.
pub(crate) fn read_opened(
    index: u16,
    spec: &SourceSpec,
    input: Box<dyn BufRead + Send>,
    bar: Option<&SourceBar>,
) -> Result<(Vec<Event>, InputSummary)> {
    read_opened_as(index, spec, input, bar, Reading::Growing(None))
}

/// How a source read once is read (`read_opened_as`).
#[derive(Clone, Copy)]
enum Reading<'a> {
    /// From its copy as the copy grows (`growth`, when its text is plain), in parts as the file
    /// would be.
    Growing(Option<&'a spool::Growth>),
    /// A plain-text log, as it comes, in segments of `segment` bytes, with no copy unless its
    /// kept texts grow past the most (`log::text::read_streamed`, which copies to `copy` from
    /// there on).
    Streamed { copy: &'a Path, segment: usize },
}

/// `read_opened` for a plain-text log read as it comes (`Reading::Streamed`): `crate::fuzzing`
/// holds it to the one read.
pub(crate) fn read_opened_streamed(
    index: u16,
    spec: &SourceSpec,
    input: Box<dyn BufRead + Send>,
    copy: &Path,
    segment: usize,
) -> Result<(Vec<Event>, InputSummary)> {
    read_opened_as(index, spec, input, None, Reading::Streamed { copy, segment })
}

/// `read_opened`, for a source read once (`how`).
fn read_opened_as(
    index: u16,
    spec: &SourceSpec,
    mut input: Box<dyn BufRead + Send>,
    bar: Option<&SourceBar>,
    how: Reading<'_>,
) -> Result<(Vec<Event>, InputSummary)> {
    let growth = match how {
        Reading::Growing(growth) => growth,
        Reading::Streamed { .. } => None,
    };
    let head = peek_head(&mut input, &spec.path)?;
    // Said before the format is chosen: an empty input has no format to tell, and stdin has no
    // file name to tell it by ("cannot tell the format" would send the user to the wrong fix).
    if input.fill_buf().map_err(|source| Error::Io { path: spec.path.clone(), source })?.is_empty() {
        return Err(empty(spec));
    }
    let format = choose_format(spec, &head)?;
    let lone_cr = !format.reads_lone_cr();
    if lone_cr {
        input = Box::new(lines::LineEnds::new(input));
    }
    let mut summary = InputSummary::new(&spec.display_path(), spec.kind.name(), format.name(), spec.tz);
    let mut events = Vec::new();
    // A source being copied while it is read is reopened only once it has ended (`growth`).
    let in_place = spec.spool.as_ref().is_none_or(|spool| !spool.is_copy());
    if let Reading::Streamed { copy, segment } = how
        && format.name() == log::text::ServerLog.name()
    {
        log::text::read_streamed(spec, index, input, copy, segment, &mut events, &mut summary)?;
    } else if spec.reread == Reread::Seek && (in_place || growth.is_some()) {
        // The bytes of a copy were counted as they were copied.
        let bar = if in_place { bar } else { None };
        let reopen = Reopen { path: spec.file(), bar, lone_cr, growth };
        format.read_file(spec, index, input, &reopen, &mut events, &mut summary)?;
    } else {
        format.read(spec, index, input, &mut events, &mut summary)?;
    }
    if let Some(window) = spec.window {
        drop_outside(window, &mut events, &mut summary);
    }
    summary.events = events.len() as u64;
    summary.first_at = events.iter().map(Event::moment).min().map(Moment::utc);
    summary.last_at = events.iter().map(Event::moment).max().map(Moment::utc);
    // A part read by time for the window may hold no line: the file does, outside it.
    if summary.lines == 0 && summary.window_read.is_none() {
        return Err(no_entries(spec, &head));
    }
    Ok((events, summary))
}

/// Drops the events outside `window` that a reader kept (the ledgers drop theirs as they read a
/// row, before its texts are kept): a line whose every event is dropped moves from `used` to
/// ignored as `OUTSIDE_READ_WINDOW`. Worker settings stay wherever they are: they say what the
/// workers ran with, which a window does not change.
fn drop_outside(window: crate::model::filter::ReadWindow, events: &mut Vec<Event>, summary: &mut InputSummary) {
    if events.iter().all(|event| window.holds(event.moment())) {
        return;
    }
    let (mut kept_lines, mut dropped_lines) = (Vec::new(), Vec::new());
    let mut span: Option<(Moment, Moment)> = None;
    events.retain(|event| {
        let keep = window.holds(event.moment()) || event.kind == crate::model::EventKind::WorkerSettings;
        if keep {
            kept_lines.push(event.origin().line);
        } else {
            dropped_lines.push(event.origin().line);
            let keys = crate::model::filter::outside_keys(event.job_id.as_deref(), event.run_id.as_deref());
            summary.outside_ids.extend(keys.into_iter().flatten());
            let at = event.moment();
            span = Some(span.map_or((at, at), |(first, last)| (first.min(at), last.max(at))));
        }
        keep
    });
    if let Some((first, last)) = span {
        let earlier = summary.outside_span.take();
        summary.outside_span =
            Some(earlier.map_or((first.utc(), last.utc()), |(from, to)| (from.min(first.utc()), to.max(last.utc()))));
    }
    kept_lines.sort_unstable();
    dropped_lines.sort_unstable();
    dropped_lines.dedup();
    for line in dropped_lines {
        if kept_lines.binary_search(&line).is_err() {
            summary.used = summary.used.saturating_sub(1);
            summary.ignore(crate::model::filter::OUTSIDE_READ_WINDOW);
        }
    }
}

/// A source whose bytes gave no line to its reader (the input was not empty, `empty`'s case): a
/// JSON document with nothing in it, said as such, else as `empty`.
fn no_entries(spec: &SourceSpec, head: &str) -> Error {
    let document = match head.trim_start_matches('\u{feff}').trim_start().as_bytes().first() {
        Some(b'[') => "an empty JSON array",
        Some(b'{') => "an empty JSON object",
        _ => return empty(spec),
    };
    Error::input(
        &spec.path,
        None,
        format!(
            "holds no entries ({document}, not an empty file): expected a {} with at least one entry",
            spec.kind.name()
        ),
    )
}

/// A source with no line: a file that is empty, or standard input that gave nothing.
fn empty(spec: &SourceSpec) -> Error {
    let what = if spec.path == Path::new("-") { "standard input is empty" } else { "file is empty" };
    Error::input(&spec.path, None, format!("{what}: expected a {} with at least one line", spec.kind.name()))
}

use gzip::MAGIC as GZIP_MAGIC;

/// Whether the file read from its start is gzip-compressed (it is left past its first bytes).
pub(crate) fn is_gzip(file: &mut File) -> bool {
    let mut magic = [0u8; 2];
    file.read_exact(&mut magic).is_ok() && magic == GZIP_MAGIC
}

/// How a source can be read again: a regular file at the offsets the first read saw, directly
/// or, compressed, by decompressing it again; standard input, a FIFO or a device not at all.
fn reread(spec: &SourceSpec) -> Reread {
    // Asked before opening: a second open of a FIFO whose writer has finished would wait for
    // another writer for ever (the source itself is already open, and read once).
    let path = spec.file();
    if path == Path::new("-") || !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return Reread::No;
    }
    let Ok(mut file) = File::open(path) else { return Reread::No };
    if !is_gzip(&mut file) {
        Reread::Seek
    } else if spec.reread_compressed {
        Reread::Decompress
    } else {
        Reread::No
    }
}

/// 3 when the plain file at `path` starts with a UTF-8 byte-order mark, else 0.
fn bom_length(path: &Path) -> u64 {
    let mut head = [0u8; 3];
    let starts_with_bom =
        File::open(path).and_then(|mut file| file.read_exact(&mut head)).is_ok() && head == lines::BOM;
    if starts_with_bom { lines::BOM.len() as u64 } else { 0 }
}

/// The start of the input as text: what its reader has buffered (64 KiB from a file).
fn peek_head(input: &mut Box<dyn BufRead + Send>, path: &Path) -> Result<String> {
    let buffer = input.fill_buf().map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
    Ok(String::from_utf8_lossy(buffer).into_owned())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_document_with_no_entries_is_not_called_an_empty_file() {
        let spec = super::SourceSpec::new(
            super::SourceKind::BullmqJobs,
            std::path::PathBuf::from("jobs.json"),
            None,
            "tz".into(),
        );
        assert_eq!(
            super::no_entries(&spec, " [ ]").to_string(),
            "jobs.json: holds no entries (an empty JSON array, not an empty file): expected a bullmq-jobs with at least one entry"
        );
        assert!(
            super::no_entries(&spec, "\u{feff}{}").to_string().contains("(an empty JSON object, not an empty file)")
        );
        assert_eq!(super::no_entries(&spec, "").to_string(), super::empty(&spec).to_string());
    }

    #[test]
    fn appending_a_block_at_a_time_keeps_every_event_in_order() {
        use crate::model::{Channel, Event, EventKind, Origin};
        let at = chrono::DateTime::parse_from_rfc3339("2026-10-07T00:33:00Z").unwrap().with_timezone(&chrono::Utc);
        let event =
            |line: u32| Event::new(at.into(), EventKind::Error, Origin { channel: Channel::Log, source: 0, line });
        // Around the block size: less than a block, exactly one, one and a bit, several.
        for (before, more) in [(0, 3), (5, 1 << 15), (2, (1 << 15) + 1), (1, 3 * (1 << 15) + 17)] {
            let mut events: Vec<Event> = (1..=before).map(event).collect();
            super::append_freeing(&mut events, (before + 1..=before + more).map(event).collect());
            let lines: Vec<u32> = events.iter().map(|event| event.origin().line).collect();
            assert_eq!(lines, (1..=before + more).collect::<Vec<u32>>(), "{before} then {more}");
            assert_eq!(events.capacity(), events.len(), "{before} then {more}: exactly what they need");
        }
    }

    #[test]
    fn line_ends_count_lf_crlf_and_lone_cr_once_each_across_pieces() {
        let text = b"a\nb\r\nc\rd\r\r\ne\n\n\r";
        let whole = super::line_ends(text, &mut false);
        assert_eq!(whole, 8);
        // Cut anywhere (a `\r\n` cut in two included), the pieces count the same.
        for cut in 0..=text.len() {
            let mut after_cr = false;
            let pieces = super::line_ends(&text[..cut], &mut after_cr) + super::line_ends(&text[cut..], &mut after_cr);
            assert_eq!(pieces, whole, "cut at {cut}");
        }
    }
}
