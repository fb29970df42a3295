//! Run ledger as CSV (or TSV) with a header row.
//!
//! A "line" in the input summary is a CSV record (a quoted field may span physical lines; the
//! line reported for a record is the physical line it starts on).
//!
//! Which line that is, is what an editor shows: every `\n`, `\r\n` and, in a file whose lines end
//! with a lone `\r` (an old Mac export, told by its first line's end), every lone `\r` ends a line.
//! Outside quotes a lone `\r` ends a record, and so a line, in any file (as `csv::Reader` ends a
//! record there). Inside a quoted cell of a file whose lines end with `\n` or `\r\n`, a lone `\r`
//! is a character of the cell, as an editor shows it (`^M`): it ends no line, so the records after
//! it are cited at the lines an editor shows them on (`line_ends_in`). Reading back such a record's
//! successors starts from a mark the reader leaves at the next record (`LineTexts::mark_always`):
//! the read-back counts line ends without quotes.

use std::io::BufRead;

use crate::error::{Error, Result};
use std::borrow::Cow;

use crate::model::{Event, InputSummary, Origin};

use crate::ingest::io::recent::RecentTexts;
use crate::ingest::ledger::{self, Columns, FIELDS, FieldId, Outcome};
use crate::ingest::{EventFormat, Reopen, SourceKind, SourceSpec};

pub struct LedgerCsv;

impl EventFormat for LedgerCsv {
    fn name(&self) -> &'static str {
        "csv"
    }

    fn kind(&self) -> SourceKind {
        SourceKind::Ledger
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["csv", "tsv"]
    }

    fn reads_lone_cr(&self) -> bool {
        true
    }

    fn sniff(&self, first_line: &str) -> bool {
        !first_line.starts_with('{') && (first_line.contains(',') || first_line.contains('\t'))
    }

    fn read(
        &self,
        spec: &SourceSpec,
        source: u16,
        input: Box<dyn BufRead + Send>,
        events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<()> {
        read_in_parts(spec, source, input, None, events, summary)
    }

    /// A large file is read in two parts at once: from the start on this thread, and from a line
    /// ending near the middle on another. The second part is kept only if the first reaches a
    /// record that starts exactly there: then the parser's state there is a record's start, as
    /// the second part assumed (a quoted cell that spans the middle makes the first part go past
    /// it instead; the second part is then stopped and dropped, and the first reads on).
    fn read_file(
        &self,
        spec: &SourceSpec,
        source: u16,
        input: Box<dyn BufRead + Send>,
        reopen: &Reopen,
        events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<()> {
        read_in_parts(spec, source, input, Some((reopen, crate::ingest::SPLIT_AT_LEAST)), events, summary)
    }
}

/// `LedgerCsv::read_file` with `file` (the file, and the size from which it is split), else
/// `LedgerCsv::read`.
fn read_in_parts(
    spec: &SourceSpec,
    source: u16,
    mut input: Box<dyn BufRead + Send>,
    file: Option<(&Reopen, u64)>,
    events: &mut Vec<Event>,
    summary: &mut InputSummary,
) -> Result<()> {
    use std::sync::atomic::AtomicBool;
    let delimiter = detect_delimiter(spec, &mut input);
    let cr_lines = lone_cr_ends_lines(&mut input);
    // The input skips a byte-order mark; the offsets that rows are read back by count it.
    let mut records = Records::resuming(input, delimiter, spec.text_start, 1, None);
    records.quotes.cr_lines = cr_lines;
    let Some(mut rows) = Rows::from_header(spec, source, delimiter, &mut records, summary)? else {
        return Ok(());
    };
    if let Some((reopen, split_at_least)) = file
        && let Some(growth) = reopen.growth()
    {
        let parts = (reopen, growth, split_at_least);
        return read_growing_in_parts(spec, parts, records, rows, (cr_lines, delimiter), events, summary);
    }
    let size = |reopen: &Reopen| std::fs::metadata(reopen.path()).map_or(0, |m| m.len());
    let middle = match file {
        Some((reopen, split_at_least)) if size(reopen) >= split_at_least => {
            record_start_after(reopen, size(reopen) / 2)?.map(|middle| (reopen, middle))
        }
        _ => None,
    };
    let Some((reopen, middle)) = middle.filter(|&(_, middle)| middle > records.position()) else {
        while let Some(record) = records.next(spec)? {
            rows.add(&record, events, summary)?;
        }
        return Ok(());
    };
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let (later_rows, expected, stop_ref) = (rows.like(), records.expected, &stop);
        let later =
            scope.spawn(move || read_from(spec, reopen, middle, later_rows, (expected, cr_lines), delimiter, stop_ref));
        // Stops the second part on every way out that does not use it (an error included).
        let _stop_later = StopOnDrop(&stop);
        if let Some(line) = first_part_to(spec, &mut records, || middle, &stop, &mut rows, events, summary)? {
            // The second part counted its lines from 1 at the middle.
            let later = later.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            crate::ingest::join_later_part(spec, line - 1, later, events, summary)?;
        }
        Ok(())
    })
}

/// `read_in_parts` for a source read once, read from its copy as the copy grows (`spool::Growth`):
/// the first part from the start on this thread as the bytes come, and, once the source has
/// ended, a second part from a record start in the middle of what the first has not reached, on
/// another thread, where that is at least `split_at_least` bytes. As for a file, the second part
/// is kept only if the first meets a record that starts exactly there.
fn read_growing_in_parts(
    spec: &SourceSpec,
    (reopen, growth, split_at_least): (&Reopen, &crate::ingest::io::spool::Growth, u64),
    mut records: Records,
    mut rows: Rows,
    (cr_lines, delimiter): (bool, u8),
    events: &mut Vec<Event>,
    summary: &mut InputSummary,
) -> Result<()> {
    use std::sync::atomic::AtomicBool;
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let (later_rows, expected, stop_ref) = (rows.like(), records.expected, &stop);
        let later = scope.spawn(move || {
            let choose = |from| record_start_after(reopen, from);
            let Some(middle) = growth.split(split_at_least, false, choose)? else { return Ok(None) };
            read_from(spec, reopen, middle, later_rows, (expected, cr_lines), delimiter, stop_ref).map(Some)
        });
        // Stops the second part on every way out that does not use it (an error included), and
        // the copy with the first part's reader (which ends a wait for a second part).
        let _stop_later = StopOnDrop(&stop);
        let met_middle = {
            let _end_copy = growth.stop_on_drop();
            // Decided while the first part reads (`u64::MAX` until then): seen before a record
            // that starts at or runs over it, whose bytes come after the decision.
            first_part_to(spec, &mut records, || growth.middle(), &stop, &mut rows, events, summary)?
        };
        let later = later.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        if let Some(line) = met_middle {
            // The second part counted its lines from 1 at the middle.
            let later = later.map(|later| later.expect("a middle was met, so a second part was read"));
            crate::ingest::join_later_part(spec, line - 1, later, events, summary)?;
        }
        Ok(())
    })
}

/// The first part of a ledger read in two: its records up to the one that starts at the middle
/// (`middle()`, asked before each record), whose line is returned; `None` when it read to the end
/// without meeting one there (no middle, or a record ran over it: `stop` then ends the second
/// part, which started inside that record).
fn first_part_to(
    spec: &SourceSpec,
    records: &mut Records,
    middle: impl Fn() -> u64,
    stop: &std::sync::atomic::AtomicBool,
    rows: &mut Rows,
    events: &mut Vec<Event>,
    summary: &mut InputSummary,
) -> Result<Option<u64>> {
    use std::sync::atomic::Ordering;
    while let Some(record) = records.next(spec)? {
        let middle = middle();
        if record.offset == middle && !stop.load(Ordering::Relaxed) {
            return Ok(Some(record.line));
        }
        if record.offset > middle {
            stop.store(true, Ordering::Relaxed);
        }
        rows.add(&record, events, summary)?;
    }
    Ok(None)
}

/// Sets a flag when dropped.
struct StopOnDrop<'a>(&'a std::sync::atomic::AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Where the first record after the first line ending at or after byte `from` would start: past
/// that `\n` and any line endings after it (`None`: no line ending there, or only line endings).
fn record_start_after(reopen: &Reopen, from: u64) -> Result<Option<u64>> {
    let Some((newline, rest)) = reopen.line_end_after(from)? else { return Ok(None) };
    Ok(rest.iter().position(|&b| b != b'\n' && b != b'\r').map(|start| newline + start as u64))
}

/// The second part of a file: the records from byte `start` (a record's start) to the end, with
/// the columns of the header the first part read. Lines are counted from 1 at `start`: the first
/// part knows the line there when it meets it.
fn read_from(
    spec: &SourceSpec,
    reopen: &Reopen,
    start: u64,
    mut rows: Rows,
    (expected, cr_lines): (Option<usize>, bool),
    delimiter: u8,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<(Vec<Event>, InputSummary)> {
    let mut records = Records::resuming(reopen.at(start)?, delimiter, start, 1, expected);
    records.quotes.cr_lines = cr_lines;
    let mut events = Vec::new();
    let mut summary = InputSummary::new(&spec.display_path(), spec.kind.name(), "csv", spec.tz);
    while let Some(record) = records.next(spec)? {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        rows.add(&record, &mut events, &mut summary)?;
    }
    Ok((events, summary))
}

/// Records → events, with the columns the header named.
struct Rows<'s> {
    spec: &'s SourceSpec,
    source: u16,
    columns: Columns,
    /// Per ledger field, the position of its column.
    index: Vec<Option<usize>>,
    /// Joins the cells of a record kept as text (input that cannot be read again).
    separator: &'static str,
    recent: RecentTexts,
}

impl<'s> Rows<'s> {
    /// Reads the header (the first record) and resolves the columns (`None`: no record at all).
    fn from_header(
        spec: &'s SourceSpec,
        source: u16,
        delimiter: u8,
        records: &mut Records,
        summary: &mut InputSummary,
    ) -> Result<Option<Rows<'s>>> {
        let Some(record) = records.next(spec)? else { return Ok(None) };
        if record.too_long {
            return Err(Error::input(
                &spec.path,
                Some(record.line),
                format!(
                    "the header is a {}: expected a header row naming the columns",
                    crate::ingest::io::lines::too_long(spec.max_line_bytes)
                ),
            ));
        }
        summary.lines += 1;
        let header: Vec<String> = record.cells().map(|c| c.trim().to_string()).collect();
        let columns = Columns::resolve(spec, &header, record.line)?;
        let index = FIELDS
            .iter()
            .map(|field| {
                let column = columns.column(field.name)?;
                header.iter().position(|name| name == column)
            })
            .collect();
        summary.ignore("header");
        let separator = if delimiter == b'\t' { "\t" } else { "," };
        Ok(Some(Rows { spec, source, columns, index, separator, recent: RecentTexts::default() }))
    }

    /// The same columns, with a cache of its own (for another thread).
    fn like(&self) -> Rows<'s> {
        Rows {
            spec: self.spec,
            source: self.source,
            columns: self.columns.clone(),
            index: self.index.clone(),
            separator: self.separator,
            recent: RecentTexts::default(),
        }
    }

    fn add(&mut self, record: &Record, events: &mut Vec<Event>, summary: &mut InputSummary) -> Result<()> {
        let (spec, line) = (self.spec, record.line);
        summary.lines += 1;
        if record.too_long {
            summary.reject(line, crate::ingest::io::lines::too_long(spec.max_line_bytes));
            return Ok(());
        }
        let in_file = spec.reread.by_offset();
        if in_file && record.after_uncounted {
            // Counting line ends from a mark before it would not find it: marked itself.
            summary.texts.mark_always(line, record.offset);
        } else if in_file {
            // Where some records start: the read-back finds a record from the last one before it.
            summary.texts.mark(line, record.offset);
        }
        let origin = Origin {
            channel: crate::model::Channel::Ledger,
            source: self.source,
            line: crate::ingest::line_of(spec, line)?,
        };
        let index = &self.index;
        let get = |id: FieldId| index[id as usize].and_then(|i| record.cell(i)).map(Cow::Borrowed);
        match ledger::record_to_event(
            spec,
            &self.columns,
            get,
            &mut self.recent,
            &mut summary.folds,
            &mut summary.naive_times,
            origin,
        )? {
            Outcome::Event(event) => {
                summary.used();
                if !in_file {
                    summary.texts.keep(origin.line, &record.cells().collect::<Vec<_>>().join(self.separator));
                }
                events.push(event);
            }
            Outcome::Rejected(reason) => summary.reject(line, reason),
            Outcome::OutsideWindow(at, keys) => summary.outside(at, keys),
        }
        Ok(())
    }
}

/// Whether the lines of a CSV source end with a lone `\r` (an old Mac export): its first line
/// end, in the head of the input, is a `\r` not followed by `\n`. Then a lone `\r` inside a quoted
/// cell ends a line too, as everywhere in that file.
pub(crate) fn lone_cr_ends_lines(input: &mut impl BufRead) -> bool {
    let head = input.fill_buf().unwrap_or_default();
    match memchr::memchr2(b'\n', b'\r', head) {
        Some(end) => head[end] == b'\r' && head.get(end + 1).is_some_and(|&next| next != b'\n'),
        None => false,
    }
}

/// The line ends of a whole CSV record's bytes `record` (from its first byte to its terminator),
/// as the ledger reader counts them (module header): `ingest::line_ends`, less the lone `\r`s in
/// its quoted cells unless `cr_lines`. For reading a record back.
pub(crate) fn line_ends_in(record: &[u8], delimiter: u8, cr_lines: bool, after_cr: &mut bool) -> u64 {
    let ends = crate::ingest::line_ends(record, after_cr);
    let mut quotes = Quotes { cr_lines, ..Quotes::default() };
    quotes.walk(record, delimiter);
    ends.saturating_add_signed(-quotes.take_uncounted())
}

/// The delimiter of a CSV source: a tab for `.tsv` files and for a first line with tabs and no
/// comma, a comma otherwise.
pub(crate) fn detect_delimiter(spec: &SourceSpec, input: &mut impl BufRead) -> u8 {
    let name = spec.path.to_string_lossy().to_lowercase();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    if std::path::Path::new(name).extension().is_some_and(|ext| ext == "tsv") {
        return b'\t';
    }
    let head = input.fill_buf().unwrap_or_default();
    let first = &head[..head.iter().position(|&b| b == b'\n').unwrap_or(head.len())];
    if first.contains(&b'\t') && !first.contains(&b',') { b'\t' } else { b',' }
}

/// Bytes read from the input at a time: records are found in the block with `memchr`, and a
/// record cut by the block's end is carried over to the next.
const BLOCK: usize = 1 << 20;

/// One CSV record: where it is and its cells, borrowed from the reader.
struct Record<'a> {
    /// The physical line the record's first byte is on (see `Records`).
    line: u64,
    /// Where the record's first byte is in the input.
    offset: u64,
    text: &'a str,
    bounds: &'a [(usize, usize)],
    /// A record longer than `SourceSpec::max_line_bytes`, passed over: no cells.
    too_long: bool,
    /// A record before it (since the last one so marked) had a lone `\r` in a quoted cell that
    /// ends no line: its line is not found by counting line ends from an earlier record.
    after_uncounted: bool,
}

impl<'a> Record<'a> {
    /// A record past the cap, passed over.
    fn passed(line: u64, offset: u64) -> Record<'a> {
        Record { line, offset, text: "", bounds: &[], too_long: true, after_uncounted: false }
    }

    fn cell(&self, index: usize) -> Option<&'a str> {
        self.bounds.get(index).map(|&(start, end)| &self.text[start..end])
    }

    fn cells(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.bounds.iter().map(|&(start, end)| &self.text[start..end])
    }
}

/// The records of a CSV input, as `csv::Reader` (no headers, not flexible) would give them.
///
/// Almost every ledger row is a line without a quote: its end is the next `\r` or `\n` and its
/// cells are split at the delimiter, both with `memchr` over a large block. A record with a quote
/// before its line ending (a quoted cell may hold delimiters and line endings), and the first
/// record (which may start with a byte-order mark), are read by `csv_core`, the parser inside
/// `csv::Reader`; the fast path gives the same records:
/// - a record ends at its first `\r` or `\n`; its line and offset are those of its first byte
///   (not, as `csv::Reader` has it, of the line endings before it);
/// - blank lines yield no record;
/// - every record must have as many cells as the first one.
struct Records {
    input: Box<dyn BufRead + Send>,
    delimiter: u8,
    buffer: Vec<u8>,
    /// The unread bytes are `buffer[start..end]`.
    start: usize,
    end: usize,
    at_eof: bool,
    /// Input offset of `buffer[0]`.
    offset: u64,
    /// Line of the next unread byte: one more than the line ends read so far (`ingest::line_ends`).
    line: u64,
    /// Whether the last byte read was a `\r` (a `\n` right after it ends no other line).
    after_cr: bool,
    /// Cells of the first record: every record must have as many.
    expected: Option<usize>,
    quoted: csv_core::Reader,
    /// `csv_core`'s output: the record's unquoted cells back to back, and where each ends.
    unquoted: Vec<u8>,
    ends: Vec<usize>,
    bounds: Vec<(usize, usize)>,
    /// Where the record `csv_core` reads is in its quotes: whether a quoted cell is open at the
    /// end of the input, and the lone `\r`s in quoted cells that end no line.
    quotes: Quotes,
    /// A record read had such a `\r`: the next one returned says so (`Record::after_uncounted`).
    uncounted: bool,
}

impl Records {
    fn new(input: Box<dyn BufRead + Send>, delimiter: u8) -> Records {
        Records::with_block(input, delimiter, BLOCK)
    }

    fn with_block(input: Box<dyn BufRead + Send>, delimiter: u8, block: usize) -> Records {
        Records {
            input,
            delimiter,
            buffer: vec![0; block.max(1)],
            start: 0,
            end: 0,
            at_eof: false,
            offset: 0,
            line: 1,
            after_cr: false,
            expected: None,
            quoted: csv_core::ReaderBuilder::new().delimiter(delimiter).build(),
            unquoted: vec![0; 1024],
            ends: vec![0; 64],
            bounds: Vec::new(),
            quotes: Quotes::default(),
            uncounted: false,
        }
    }

    /// Records from byte `offset` of a file, where a record starts on physical line `line`, each
    /// of `expected` cells (the header's, read by another `Records`).
    fn resuming(
        input: Box<dyn BufRead + Send>,
        delimiter: u8,
        offset: u64,
        line: u64,
        expected: Option<usize>,
    ) -> Records {
        Records { offset, line, expected, ..Records::new(input, delimiter) }
    }

    /// Where the next unread byte is in the input.
    fn position(&self) -> u64 {
        self.offset + self.start as u64
    }

    /// The next record, or `None` at the end of the input.
    fn next(&mut self, spec: &SourceSpec) -> Result<Option<Record<'_>>> {
        // Line endings and blank lines before a record are passed over here, so that its line and
        // offset are those of its first byte. (`csv::Reader` counts them into the record that
        // follows: the records of a CRLF file, and a record after a blank line, would be cited one
        // line early.)
        let first = loop {
            let skipped = self.buffer[self.start..self.end].iter().position(|&b| b != b'\n' && b != b'\r');
            let upto = skipped.map_or(self.end, |skipped| self.start + skipped);
            self.line += crate::ingest::line_ends(&self.buffer[self.start..upto], &mut self.after_cr);
            self.start = upto;
            if skipped.is_some() {
                break upto;
            }
            if self.at_eof {
                return Ok(None);
            }
            self.refill().map_err(|error| read_error(spec, self.line, &error))?;
        };
        let line = self.line;
        let offset = self.offset + first as u64;
        let after_uncounted = std::mem::take(&mut self.uncounted);
        let record = self.next_after_line_ends(spec, line, offset)?;
        Ok(record.map(|record| Record { after_uncounted, ..record }))
    }

    /// `next` from the record's first byte, at `line` and `offset`.
    fn next_after_line_ends(&mut self, spec: &SourceSpec, line: u64, offset: u64) -> Result<Option<Record<'_>>> {
        if self.expected.is_none() {
            return self.next_by_csv_core(spec, line, offset);
        }
        // The byte that ends the record: a line ending, or a quote (then `csv_core` reads it).
        let stop = loop {
            if let Some(stop) = memchr::memchr3(b'\n', b'\r', b'"', &self.buffer[self.start..self.end]) {
                break Some(self.start + stop);
            }
            if self.at_eof {
                break None;
            }
            if self.end - self.start > spec.max_line_bytes {
                // No end in sight: passed over, not held.
                self.quotes.start(line);
                return self.pass_record(spec, line, offset);
            }
            self.refill().map_err(|error| read_error(spec, line, &error))?;
        };
        let first = self.start;
        let content_end = match stop {
            Some(stop) if self.buffer[stop] == b'"' => return self.next_by_csv_core(spec, line, offset),
            Some(stop) => stop,
            None => self.end,
        };
        // The line ending is left to the next record's pass over line endings, which counts it.
        self.start = content_end;
        self.after_cr = false;
        if content_end - first > spec.max_line_bytes {
            return Ok(Some(Record::passed(line, offset)));
        }

        let content = &self.buffer[first..content_end];
        self.bounds.clear();
        let mut cell_start = 0;
        for delimiter in memchr::memchr_iter(self.delimiter, content) {
            self.bounds.push((cell_start, delimiter));
            cell_start = delimiter + 1;
        }
        self.bounds.push((cell_start, content.len()));
        check_width(spec, line, self.expected, self.bounds.len())?;
        // Cells are split at an ASCII delimiter: the record is text exactly when every cell is.
        if memchr::memchr(0, content).is_some() {
            return Err(binary(spec, line));
        }
        let text = std::str::from_utf8(content).map_err(|_| binary(spec, line))?;
        Ok(Some(Record { line, offset, text, bounds: &self.bounds, too_long: false, after_uncounted: false }))
    }

    /// Counts the line ends of `read`, bytes of the record `csv_core` has just read (after the
    /// quote walk over them): `ingest::line_ends`, less the lone `\r`s of quoted cells that end no
    /// line (module header).
    fn count_lines(&mut self, read: std::ops::Range<usize>) {
        let ends = crate::ingest::line_ends(&self.buffer[read], &mut self.after_cr);
        let uncounted = self.quotes.take_uncounted();
        self.uncounted |= uncounted != 0;
        self.line = self.line.saturating_add(ends).saturating_add_signed(-uncounted);
    }

    /// Reads one record with `csv_core`, as `csv::Reader::read_byte_record` does.
    fn next_by_csv_core(&mut self, spec: &SourceSpec, line: u64, offset: u64) -> Result<Option<Record<'_>>> {
        use csv_core::ReadRecordResult;
        // `csv_core` drops a byte-order mark only when the first input it is given holds all of it,
        // and takes an input of the mark alone for the end of the input.
        while self.expected.is_none() && self.end - self.start <= 3 && !self.at_eof {
            self.refill().map_err(|error| read_error(spec, line, &error))?;
        }
        let (mut written, mut ended) = (0, 0);
        self.quotes.start(line);
        // `csv_core` drops a byte-order mark before the header: the walk passes over it too.
        if self.expected.is_none() && self.buffer[self.start..self.end].starts_with(crate::ingest::io::lines::BOM) {
            self.quotes.skip = crate::ingest::io::lines::BOM.len();
        }
        loop {
            // An empty input tells `csv_core` that the input has ended.
            if self.start == self.end && !self.at_eof {
                self.refill().map_err(|error| read_error(spec, line, &error))?;
                continue;
            }
            let (result, read, wrote, ends) = self.quoted.read_record(
                &self.buffer[self.start..self.end],
                &mut self.unquoted[written..],
                &mut self.ends[ended..],
            );
            self.quotes.walk(&self.buffer[self.start..self.start + read], self.delimiter);
            // Counted here, not by `csv_core`, which ends lines at `\n` only.
            self.count_lines(self.start..self.start + read);
            self.start += read;
            written += wrote;
            ended += ends;
            match result {
                ReadRecordResult::InputEmpty => {}
                ReadRecordResult::OutputFull | ReadRecordResult::OutputEndsFull
                    if self.position() - offset > spec.max_line_bytes as u64 =>
                {
                    return self.pass_record(spec, line, offset);
                }
                ReadRecordResult::OutputFull => self.unquoted.resize(self.unquoted.len() * 2, 0),
                ReadRecordResult::OutputEndsFull => self.ends.resize(self.ends.len() * 2, 0),
                ReadRecordResult::Record => break,
                ReadRecordResult::End => return Ok(None),
            }
        }
        self.quotes.check_closed(spec, line, self.at_eof && self.start == self.end)?;
        if self.position() - offset > spec.max_line_bytes as u64 {
            return Ok(Some(Record::passed(line, offset)));
        }
        check_width(spec, line, self.expected, ended)?;
        self.expected = Some(ended);
        let cells = &self.unquoted[..written];
        self.bounds.clear();
        let mut cell_start = 0;
        for &cell_end in &self.ends[..ended] {
            self.bounds.push((cell_start, cell_end));
            cell_start = cell_end;
        }
        if memchr::memchr(0, cells).is_some() {
            return Err(binary(spec, line));
        }
        // Each cell must be text on its own: cells back to back can be text when one of them ends
        // inside a character.
        match std::str::from_utf8(cells) {
            Ok(text) if self.bounds.iter().all(|&(_, end)| text.is_char_boundary(end)) => {
                Ok(Some(Record { line, offset, text, bounds: &self.bounds, too_long: false, after_uncounted: false }))
            }
            _ => Err(binary(spec, line)),
        }
    }

    /// Passes over the rest of a record past the cap (from its first byte, or where `csv_core`
    /// stopped in it) through `csv_core`, so that its end is where a quoted cell allows, its
    /// cells written to a scratch buffer and dropped: the record is never held.
    fn pass_record(&mut self, spec: &SourceSpec, line: u64, offset: u64) -> Result<Option<Record<'_>>> {
        use csv_core::ReadRecordResult;
        let (mut scratch, mut ends) = ([0u8; 4096], [0usize; 256]);
        loop {
            if self.start == self.end && !self.at_eof {
                self.refill().map_err(|error| read_error(spec, line, &error))?;
                continue;
            }
            let (result, read, _, _) =
                self.quoted.read_record(&self.buffer[self.start..self.end], &mut scratch, &mut ends);
            // Binary data (`/dev/zero`) is refused, not passed over for ever.
            if memchr::memchr(0, &self.buffer[self.start..self.start + read]).is_some() {
                return Err(binary(spec, line));
            }
            self.quotes.walk(&self.buffer[self.start..self.start + read], self.delimiter);
            self.count_lines(self.start..self.start + read);
            self.start += read;
            if matches!(result, ReadRecordResult::Record | ReadRecordResult::End) {
                break;
            }
        }
        self.quotes.check_closed(spec, line, self.at_eof && self.start == self.end)?;
        Ok(Some(Record::passed(line, offset)))
    }

    /// Reads more input after the unread bytes, moving them to the front of the buffer first.
    fn refill(&mut self) -> std::io::Result<()> {
        if self.start > 0 {
            self.buffer.copy_within(self.start..self.end, 0);
            self.offset += self.start as u64;
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buffer.len() {
            // One record longer than the block.
            self.buffer.resize(self.buffer.len() * 2, 0);
        }
        loop {
            match self.input.read(&mut self.buffer[self.end..]) {
                Ok(0) => self.at_eof = true,
                Ok(read) => self.end += read,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error),
            }
            return Ok(());
        }
    }
}

/// Where a record is in its quotes, followed as `csv_core` reads it (a quote opens a quoted cell
/// only as a cell's first byte; `""` inside one is a quote; a cell goes on after its closing
/// quote up to a delimiter), to tell a quoted cell still open at the end of the input: `csv_core`
/// gives it as a complete value, where it is a truncated export.
#[derive(Default)]
struct Quotes {
    state: QuoteState,
    /// The physical line the walk is on, and whether the byte before was a `\r`.
    line: u64,
    after_cr: bool,
    /// The line the open quoted cell started on.
    opened: u64,
    /// Bytes at the start to pass over (a byte-order mark `csv_core` drops).
    skip: usize,
    /// Whether the file's lines end with a lone `\r` (`lone_cr_ends_lines`): then one in a quoted
    /// cell ends a line too.
    cr_lines: bool,
    /// The lone `\r`s in quoted cells walked since last taken that end no line (`\r`s less the
    /// `\n`s right after one; signed, as a `\r\n` may be cut between two walks).
    uncounted: i64,
}

#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum QuoteState {
    /// At a cell's first byte.
    #[default]
    CellStart,
    /// In a cell that is not quoted (or after a quoted cell's closing quote).
    Plain,
    /// In a quoted cell.
    Quoted,
    /// At a quote in a quoted cell: its end, or the first of `""`.
    QuoteInQuoted,
}

impl Quotes {
    /// The start of a record on physical line `line`.
    fn start(&mut self, line: u64) {
        *self = Quotes { line, cr_lines: self.cr_lines, uncounted: self.uncounted, ..Quotes::default() };
    }

    /// The lone `\r`s in quoted cells that end no line, since last taken.
    fn take_uncounted(&mut self) -> i64 {
        std::mem::take(&mut self.uncounted)
    }

    /// Follows the record's bytes `bytes`, the next `csv_core` read. Outside quotes only the
    /// cell boundaries are looked for; inside, only the next quote (with `memchr` both).
    fn walk(&mut self, bytes: &[u8], delimiter: u8) {
        let mut at = self.skip.min(bytes.len());
        self.skip -= at;
        while at < bytes.len() {
            match self.state {
                QuoteState::CellStart if bytes[at] == b'"' => {
                    self.state = QuoteState::Quoted;
                    self.opened = self.line;
                    self.after_cr = false;
                    at += 1;
                }
                QuoteState::CellStart | QuoteState::Plain => {
                    match memchr::memchr3(delimiter, b'\n', b'\r', &bytes[at..]) {
                        Some(found) if bytes[at + found] == delimiter => {
                            self.state = QuoteState::CellStart;
                            at += found + 1;
                        }
                        // The record's end: nothing after it is this record's.
                        Some(_) => {
                            self.state = QuoteState::CellStart;
                            return;
                        }
                        None => {
                            self.state = QuoteState::Plain;
                            return;
                        }
                    }
                }
                QuoteState::Quoted => {
                    let end = memchr::memchr(b'"', &bytes[at..]).map_or(bytes.len(), |found| at + found);
                    let ends = crate::ingest::line_ends(&bytes[at..end], &mut self.after_cr);
                    if self.cr_lines {
                        self.line += ends;
                    } else {
                        // Only `\n` ends a line in the cell: `ends` less the lone `\r`s.
                        let newlines = memchr::memchr_iter(b'\n', &bytes[at..end]).count() as u64;
                        self.line += newlines;
                        self.uncounted +=
                            i64::try_from(ends).unwrap_or(i64::MAX) - i64::try_from(newlines).unwrap_or(0);
                    }
                    if end < bytes.len() {
                        self.state = QuoteState::QuoteInQuoted;
                        self.after_cr = false;
                    }
                    at = (end + 1).min(bytes.len());
                }
                QuoteState::QuoteInQuoted => {
                    self.state = if bytes[at] == b'"' { QuoteState::Quoted } else { QuoteState::Plain };
                    if bytes[at] == b'"' {
                        at += 1;
                    }
                }
            }
        }
    }

    /// An error when the input has ended (`at_end`) inside a quoted cell.
    fn check_closed(&self, spec: &SourceSpec, line: u64, at_end: bool) -> Result<()> {
        if at_end && self.state == QuoteState::Quoted {
            return Err(Error::input(
                &spec.path,
                Some(line),
                format!(
                    "a quoted field opened at line {} never closes before the end of the file: is the export truncated?",
                    self.opened
                ),
            ));
        }
        Ok(())
    }
}

fn check_width(spec: &SourceSpec, line: u64, expected: Option<usize>, width: usize) -> Result<()> {
    match expected {
        Some(expected) if expected != width => Err(Error::input(
            &spec.path,
            Some(line),
            format!("row has {width} fields but the header has {expected}: expected one value per header column"),
        )),
        _ => Ok(()),
    }
}

fn read_error(spec: &SourceSpec, line: u64, error: &std::io::Error) -> Error {
    Error::input(&spec.path, Some(line), format!("cannot read: {error}"))
}

fn binary(spec: &SourceSpec, line: u64) -> Error {
    Error::input(&spec.path, Some(line), "binary data (not UTF-8 text): expected a CSV ledger; is this the right file?")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::{SourceKind, SourceSpec};
    use crate::model::EventKind;
    use std::path::PathBuf;

    /// The file `text` read as a plain file, in two parts when `split_at_least` allows, or in one.
    fn read_file(text: &str, split_at_least: u64) -> Result<(Vec<Event>, InputSummary)> {
        read_file_with(text, split_at_least, |_| {})
    }

    /// `read_file`, with the source's spec changed by `adjust`.
    fn read_file_with(
        text: &str,
        split_at_least: u64,
        adjust: impl Fn(&mut SourceSpec),
    ) -> Result<(Vec<Event>, InputSummary)> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.csv");
        std::fs::write(&path, text).unwrap();
        let mut spec = SourceSpec {
            reread: crate::ingest::Reread::Seek,
            ..SourceSpec::new(SourceKind::Ledger, path.clone(), Some(chrono_tz::UTC), "--ledger-tz".into())
        };
        adjust(&mut spec);
        let mut events = Vec::new();
        let mut summary = InputSummary::new("ledger.csv", "ledger", "csv", spec.tz);
        let reopen = Reopen { path: &path, bar: None, lone_cr: false, growth: None };
        let input = reopen.at(0)?;
        read_in_parts(&spec, 0, input, Some((&reopen, split_at_least)), &mut events, &mut summary)?;
        // Every event's record is found again in the file by the marks the read left: it starts
        // with its first line, and is that line when it holds no quote.
        let lines = physical_lines(text);
        let texts = std::mem::take(&mut summary.texts);
        assert!(texts.is_in_file() || events.is_empty());
        for (line, read) in crate::ingest::io::read_back::every_event_read_back(&spec, &events, texts)? {
            let first = lines[line as usize - 1];
            assert!(read.starts_with(first), "line {line}: {read:?}");
            assert!(first.contains('"') || read == first, "line {line}: {read:?}");
        }
        Ok((events, summary))
    }

    /// `text` read as standard input is: copied while it is read, the copy read in two parts as
    /// it grows when `split_at_least` allows (`spool::Growth`). `settled`: the copy is whole
    /// before the first part starts, so a second part starts where a file's would. Also says
    /// whether a second part was started (it is kept only where a record starts there).
    fn read_piped(text: &str, split_at_least: u64, settled: bool) -> Result<((Vec<Event>, InputSummary), bool)> {
        use crate::ingest::io::spool::{Growth, Spool};
        let dir = tempfile::tempdir().unwrap();
        let spool = std::sync::Arc::new(Spool::copy_in(std::path::Path::new("-"), dir.path().to_path_buf()).unwrap());
        let spec = SourceSpec {
            reread: crate::ingest::Reread::Seek,
            spool: Some(std::sync::Arc::clone(&spool)),
            ..SourceSpec::new(
                SourceKind::Ledger,
                PathBuf::from("ledger.csv"),
                Some(chrono_tz::UTC),
                "--ledger-tz".into(),
            )
        };
        let (growth, copy) = Growth::start(Box::new(std::io::Cursor::new(text.as_bytes().to_vec())), &spool).unwrap();
        if settled {
            growth.wait_ended();
        }
        let mut events = Vec::new();
        let mut summary = InputSummary::new("ledger.csv", "ledger", "csv", spec.tz);
        let reopen = Reopen { path: spool.path(), bar: None, lone_cr: false, growth: Some(&growth) };
        let input = Box::new(std::io::BufReader::new(copy));
        read_in_parts(&spec, 0, input, Some((&reopen, split_at_least)), &mut events, &mut summary)?;
        let lines = physical_lines(text);
        let texts = std::mem::take(&mut summary.texts);
        for (line, read) in crate::ingest::io::read_back::every_event_read_back(&spec, &events, texts)? {
            let first = lines[line as usize - 1];
            assert!(read.starts_with(first), "line {line}: {read:?}");
        }
        Ok(((events, summary), growth.middle() != u64::MAX))
    }

    #[test]
    fn a_piped_ledger_is_read_in_two_parts_as_it_comes_with_the_events_and_account_of_one_read() {
        // The first part takes a MiB at a time: a few MiB leave a second part something to read.
        // Every seventh row has a quoted cell over three lines: some span the ends of the copy's
        // blocks (128 KiB), of the parts' (1 MiB), and the middle.
        let mut quoted = 0;
        let text: String = ledger(60_000, None, None, "\n")
            .split_inclusive('\n')
            .map(|line| {
                quoted += 1;
                if quoted % 7 == 0 {
                    line.replace(",review posted\n", ",\"a, b\nc \"\"d\"\"\ne\"\n")
                } else {
                    line.to_string()
                }
            })
            .collect();
        assert!(text.len() > 3 << 20, "{}", text.len());
        let whole = read_file(&text, u64::MAX).unwrap();
        assert!(whole.0.len() > 50_000 && whole.1.rejected > 0);
        for settled in [true, false] {
            let (piped, split) = read_piped(&text, 1, settled).unwrap();
            assert!(piped.0 == whole.0, "settled: {settled}");
            assert_eq!(piped.1, whole.1);
            assert!(split || !settled, "a pipe's whole copy is read in two parts");
        }
    }

    #[test]
    fn an_error_in_either_part_of_a_piped_ledger_is_the_first_one_in_it() {
        let error = |text: &str| {
            let message = read_piped(text, 1, true).unwrap_err().to_string();
            message.split_once("ledger.csv:").map(|(_, rest)| rest.to_string()).unwrap()
        };
        // Row 50000 is in the second part: found on the line one read gives.
        let later = ledger(60_000, None, Some(50_000), "\n");
        assert_eq!(
            error(&later),
            read_file(&later, u64::MAX).unwrap_err().to_string().split_once("ledger.csv:").unwrap().1
        );
        assert!(error(&later).starts_with("51615: column 'at'"), "{}", error(&later));
        // With an error before the middle too (row 100), that one is reported.
        let both = ledger(60_000, None, Some(100), "\n").replace("2026-10-07T00:16:40Z", "2026-10-07T00:16:4Z");
        assert!(error(&both).starts_with("105: column 'at'"), "{}", error(&both));
    }

    /// The lines of `text` as an editor shows them (module header): `\n`, `\r\n` and a lone `\r`
    /// end one, but a lone `\r` in quotes only in a file whose first line ends with one.
    fn physical_lines(text: &str) -> Vec<&str> {
        let mut lines = Vec::new();
        let mut start = 0;
        let bytes = text.as_bytes();
        let cr_lines = lone_cr_ends_lines(&mut &bytes[..]);
        let mut quoted = false;
        let mut at = 0;
        while at < bytes.len() {
            match bytes[at] {
                b'"' => {
                    quoted = !quoted;
                    at += 1;
                }
                b'\r' if quoted && !cr_lines && bytes.get(at + 1) != Some(&b'\n') => at += 1,
                b'\r' if bytes.get(at + 1) == Some(&b'\n') => {
                    lines.push(&text[start..at]);
                    at += 2;
                    start = at;
                }
                b'\r' | b'\n' => {
                    lines.push(&text[start..at]);
                    at += 1;
                    start = at;
                }
                _ => at += 1,
            }
        }
        lines.push(&text[start..]);
        lines
    }

    /// A ledger of `rows` rounds' rows: `quoted` puts a detail with line endings in a quoted cell
    /// at that row, `bad` an unreadable time; some rows are rejected, some lines blank.
    fn ledger(rows: usize, quoted: Option<usize>, bad: Option<usize>, ending: &str) -> String {
        use std::fmt::Write;
        let mut text = format!("at,run_id,event,item,detail{ending}");
        for n in 0..rows {
            let at = if bad == Some(n) {
                "2026-10-07T25:00:00Z".to_string()
            } else {
                format!("2026-10-07T00:{:02}:{:02}Z", n / 60 % 60, n % 60)
            };
            let event = if n % 97 == 13 {
                "ping"
            } else {
                ["round_started", "item_selected", "effect_posted", "round_finished"][n % 4]
            };
            let detail = if quoted == Some(n) {
                format!("\"a, b{ending}c \"\"d\"\"{ending}e\"")
            } else {
                "review posted".to_string()
            };
            write!(text, "{at},run-{},{event},PR-{},{detail}{ending}", n / 4, n % 50).unwrap();
            if n % 31 == 7 {
                text += ending;
            }
        }
        text
    }

    #[test]
    fn a_file_read_in_two_parts_gives_the_events_and_account_of_one_read() {
        let mut over_the_middle = 0;
        for (quoted, ending) in
            [(None, "\n"), (None, "\r\n"), (Some(1), "\n")].into_iter().chain((590..610).map(|q| (Some(q), "\n")))
        {
            let text = ledger(1200, quoted, None, ending);
            let whole = read_file(&text, u64::MAX).unwrap();
            let parts = read_file(&text, 1).unwrap();
            assert_eq!(parts.0.len(), whole.0.len());
            assert!(parts.0 == whole.0, "quoted row {quoted:?}, ending {ending:?}");
            assert_eq!(parts.1, whole.1);
            assert!(whole.1.rejected > 0 && whole.0.len() > 1000);
            // Whether the quoted cell spans the middle (the second part is then dropped).
            if let Some(row) = quoted {
                let start = text.find(&format!("run-{},", row / 4)).unwrap();
                let middle = text.len() / 2;
                let record = text[start..].find("e\"").map(|end| start + end).unwrap();
                over_the_middle += usize::from(start < middle && middle < record);
            }
        }
        assert!(over_the_middle > 0, "no case put the middle inside a quoted cell");
    }

    #[test]
    fn a_lone_cr_in_a_quoted_cell_of_a_file_of_newlines_ends_no_line() {
        // As an editor shows the file: the `\r` inside the item is `^M` on line 2, and the rows
        // after it are on lines 3 and 5 (a CRLF and an LF inside a quoted cell do end lines).
        let text = "at,run_id,event,item\n\
            2026-10-07T00:54:05.700Z,r1,item_selected,\"PR-OK (no duplicate)\rERROR [4]\"\n\
            2026-10-07T00:54:06.360Z,r2,item_selected,\"a\r\nb\"\n\
            2026-10-07T00:55:00.000Z,r2,round_started,\"\r\"\n\
            2026-10-07T00:56:00.000Z,r2,round_finished,\n";
        for split in [u64::MAX, 1] {
            let (events, summary) = read_file(text, split).unwrap();
            let lines: Vec<u32> = events.iter().map(|e| e.origin().line).collect();
            assert_eq!(lines, [2, 3, 5, 6], "split at {split}");
            assert_eq!(summary.lines, 5);
        }
        // In a file whose lines end with a lone `\r`, one in a quoted cell ends a line there too.
        let old_mac = text.replace("\r\n", "\r").replace('\n', "\r");
        let (events, _) = read_file(&old_mac, u64::MAX).unwrap();
        let lines: Vec<u32> = events.iter().map(|e| e.origin().line).collect();
        assert_eq!(lines, [2, 4, 6, 8]);
        // And the walk over a record that is read back counts the same.
        let record = "1,\"a\rb\r\nc\",x\r\n".as_bytes();
        assert_eq!(line_ends_in(record, b',', false, &mut false), 2);
        assert_eq!(line_ends_in(record, b',', true, &mut false), 3);
    }

    #[test]
    fn records_after_lone_crs_in_quoted_cells_read_the_same_in_two_parts_and_back() {
        let mut over_the_middle = 0;
        for quoted in (590..610).chain([1]) {
            // The quoted cell holds a lone `\r`, then an `\n`.
            let text = ledger(1200, Some(quoted), None, "\n").replacen("\"a, b\nc", "\"a, b\rc", 1);
            assert!(text.contains("\"a, b\rc"));
            let whole = read_file(&text, u64::MAX).unwrap();
            let parts = read_file(&text, 1).unwrap();
            assert!(parts.0 == whole.0, "quoted row {quoted}");
            assert_eq!(parts.1, whole.1);
            let start = text.find(&format!("run-{},", quoted / 4)).unwrap();
            let record = text[start..].find("e\"").map(|end| start + end).unwrap();
            over_the_middle += usize::from(start < text.len() / 2 && text.len() / 2 < record);
        }
        assert!(over_the_middle > 0, "no case put the middle inside the quoted cell");
    }

    #[test]
    fn repeated_times_are_counted_the_same_in_two_parts() {
        // A naive Los Angeles ledger across the fall-back, rows a second apart from 00:59:00 on
        // (the hour 01:00-02:00 is rows 60 to 3659), read with ambiguous = "later".
        use std::fmt::Write;
        let mut text = String::from("at,run_id,event\n");
        for n in 0..3720 {
            let at = 59 * 60 + n;
            writeln!(
                text,
                "2026-11-01 {:02}:{:02}:{:02},run-{},round_started",
                at / 3600,
                at / 60 % 60,
                at % 60,
                n / 4
            )
            .unwrap();
        }
        let later = |spec: &mut SourceSpec| {
            spec.tz = Some(chrono_tz::America::Los_Angeles);
            spec.ambiguous = crate::time::Ambiguous::Later;
        };
        let whole = read_file_with(&text, u64::MAX, later).unwrap();
        let parts = read_file_with(&text, 1, later).unwrap();
        assert!(parts.0 == whole.0);
        assert_eq!(parts.1, whole.1);
        assert_eq!(whole.1.folds.len(), 1);
        // Line 1 is the header: row n is on line n + 2.
        assert_eq!(whole.1.folds[0].second, crate::time::fold::Lines { count: 3600, first: 62, last: 3661 });
        assert_eq!(whole.1.folds[0].first.count, 0);
    }

    #[test]
    fn an_error_in_either_part_is_the_first_one_in_the_file() {
        // The message from the file's name on (each read has its own folder).
        let error = |text: &str, split_at_least| {
            let message = read_file(text, split_at_least).unwrap_err().to_string();
            message.split_once("ledger.csv:").map(|(_, rest)| rest.to_string()).unwrap()
        };
        // Row 1000 is past the middle: the second part finds it, on the line one read gives.
        let later = ledger(1200, None, Some(1000), "\n");
        assert_eq!(error(&later, 1), error(&later, u64::MAX));
        assert!(error(&later, 1).starts_with("1035: column 'at'"), "{}", error(&later, 1));
        // With an error before the middle too (row 100), that one is reported.
        let both = ledger(1200, None, Some(100), "\n").replace("2026-10-07T00:16:40Z", "2026-10-07T00:16:4Z");
        assert_eq!(error(&both, 1), error(&both, u64::MAX));
        assert!(error(&both, 1).starts_with("105: column 'at'"), "{}", error(&both, 1));
    }

    fn read(text: &str) -> Result<(Vec<Event>, InputSummary)> {
        let spec = SourceSpec::new(
            SourceKind::Ledger,
            PathBuf::from("ledger.csv"),
            Some(chrono_tz::UTC),
            "--ledger-tz".into(),
        );
        let mut events = Vec::new();
        let mut summary = InputSummary::new("ledger.csv", "ledger", "csv", spec.tz);
        LedgerCsv.read(&spec, 0, Box::new(std::io::Cursor::new(text.to_string())), &mut events, &mut summary)?;
        Ok((events, summary))
    }

    /// `text` read as a ledger in `zone`, its time from `column`, local times that happen twice
    /// taken as `choice` says.
    fn read_as(
        text: &str,
        zone: chrono_tz::Tz,
        column: &str,
        choice: crate::time::Ambiguous,
    ) -> Result<(Vec<Event>, InputSummary)> {
        let mut spec = SourceSpec { ambiguous: choice, ..spec() };
        spec.tz = Some(zone);
        spec.columns.insert("time".into(), column.into());
        let mut events = Vec::new();
        let mut summary = InputSummary::new("ledger.csv", "ledger", "csv", spec.tz);
        LedgerCsv.read(&spec, 0, Box::new(std::io::Cursor::new(text.to_string())), &mut events, &mut summary)?;
        Ok((events, summary))
    }

    #[test]
    fn psql_exports_in_every_session_zone_and_epoch_unit_are_the_same_instants() {
        // fixtures/formats/psql-*.csv: one timestamptz table exported by psql's \copy under
        // SET timezone = 'UTC', 'Asia/Seoul' and 'Asia/Kolkata' (offsets +00, +09 and +05:30,
        // microseconds), its timestamp cast (naive, Seoul wall clock) and epoch counts.
        let utc = include_str!("../../../fixtures/formats/psql-utc.csv");
        let seoul = include_str!("../../../fixtures/formats/psql-seoul.csv");
        let kolkata = include_str!("../../../fixtures/formats/psql-kolkata.csv");
        let epoch = include_str!("../../../fixtures/formats/psql-epoch.csv");
        let instants = |(events, _): (Vec<Event>, InputSummary)| -> Vec<(i64, Option<chrono::DateTime<chrono::Utc>>)> {
            events.iter().map(|e| (e.moment().utc().timestamp_nanos_opt().unwrap(), e.slot)).collect()
        };
        let error = crate::time::Ambiguous::Error;
        let expected = instants(read(utc).unwrap());
        assert_eq!(expected[1].0, 1_796_154_520_036_865_000, "2026-12-01 19:48:40.036865+00 to the microsecond");
        assert_eq!(expected[1].1.unwrap().to_rfc3339(), "2026-12-01T19:48:00+00:00");
        // Whatever zone the reader declares, the offsets decide.
        for zone in [chrono_tz::UTC, chrono_tz::America::Los_Angeles] {
            for text in [seoul, kolkata] {
                assert_eq!(instants(read_as(text, zone, "at", error).unwrap()), expected, "{zone}");
            }
        }
        // The naive cast needs the zone it was written in.
        let naive: Vec<i64> =
            instants(read_as(seoul, chrono_tz::Asia::Seoul, "at_local", error).unwrap()).iter().map(|e| e.0).collect();
        assert_eq!(naive, expected.iter().map(|e| e.0).collect::<Vec<_>>());
        let in_utc = instants(read_as(seoul, chrono_tz::UTC, "at_local", error).unwrap());
        assert_eq!(in_utc[0].0 - expected[0].0, 9 * 3_600 * 1_000_000_000, "Seoul wall clock read as UTC");
        // Epoch seconds with a fraction and microseconds are exact; milliseconds are cut by the export.
        for column in ["at_s", "at_us"] {
            let times: Vec<i64> =
                instants(read_as(epoch, chrono_tz::UTC, column, error).unwrap()).iter().map(|e| e.0).collect();
            assert_eq!(times, expected.iter().map(|e| e.0).collect::<Vec<_>>(), "{column}");
        }
        let millis: Vec<i64> =
            instants(read_as(epoch, chrono_tz::UTC, "at_ms", error).unwrap()).iter().map(|e| e.0).collect();
        assert_eq!(millis, expected.iter().map(|e| e.0 / 1_000_000 * 1_000_000).collect::<Vec<_>>());
    }

    #[test]
    fn naive_times_in_a_fall_back_stop_a_ledger_unless_it_says_which() {
        // fixtures/formats/psql-la-fall-back.csv: at (timestamptz) and at::timestamp under
        // SET timezone = 'America/Los_Angeles'; rows 3 and 4 are both 01:30:00.125 local.
        let text = include_str!("../../../fixtures/formats/psql-la-fall-back.csv");
        let la = chrono_tz::America::Los_Angeles;
        let times = |(events, _): (Vec<Event>, InputSummary)| -> Vec<String> {
            events.iter().map(|e| crate::time::format_rfc3339(e.at())).collect()
        };
        let exact = [
            "2026-11-01T07:59:58.250Z",
            "2026-11-01T08:30:00.125Z",
            "2026-11-01T09:30:00.125Z",
            "2026-11-01T10:00:01.000Z",
        ];
        assert_eq!(times(read_as(text, la, "at", crate::time::Ambiguous::Error).unwrap()), exact);
        let error = read_as(text, la, "at_local", crate::time::Ambiguous::Error).unwrap_err().to_string();
        assert_eq!(
            error,
            "ledger.csv:3: column 'at_local': local time occurs twice in America/Los_Angeles (daylight-saving fold: the clocks went back); the line cannot be placed on the timeline without an offset; say which time it is with --ledger-ambiguous earlier or --ledger-ambiguous later"
        );
        // Said: every such time is taken so, and the report says how many.
        let (events, summary) = read_as(text, la, "at_local", crate::time::Ambiguous::Later).unwrap();
        assert_eq!(times((events, summary.clone()))[1..3], ["2026-11-01T09:30:00.125Z", "2026-11-01T09:30:00.125Z"]);
        assert_eq!(
            crate::time::fold::notes("ledger.csv", crate::time::Ambiguous::Later, &summary.folds),
            [
                "ledger.csv: 2 lines in the repeated hour 01:00–02:00 PDT/PST on 2026-11-01 (America/Los_Angeles) read as the second pass, as ambiguous = \"later\" says: 2 as PST (second pass, lines 3–4)"
            ]
        );
    }

    /// A record as a test compares it: line, offset and cells, or the error's text.
    type Seen = std::result::Result<(u64, u64, Vec<String>), String>;

    fn spec() -> SourceSpec {
        SourceSpec::new(SourceKind::Ledger, PathBuf::from("ledger.csv"), Some(chrono_tz::UTC), "--ledger-tz".into())
    }

    /// Where the record `csv::Reader` places at `byte` really starts (past the line endings and
    /// blank lines it counts into the record), and the line of that byte. `counted` is how far
    /// line ends have been counted, and how many there were: records come in input order.
    fn first_byte(input: &[u8], byte: u64, counted: &mut (usize, u64)) -> (u64, u64) {
        let at = usize::try_from(byte).unwrap();
        let first = at + input[at..].iter().take_while(|&&b| b == b'\r' || b == b'\n').count();
        let mut after_cr = counted.0 > 0 && input[counted.0 - 1] == b'\r';
        counted.1 += crate::ingest::line_ends(&input[counted.0..first], &mut after_cr);
        counted.0 = first;
        (1 + counted.1, first as u64)
    }

    /// The records as `csv::Reader` gives them, checked as the reader did before it had a fast
    /// path, with each record's line and offset those of its first byte: the reference the fast
    /// path must match.
    fn by_csv_reader(input: &[u8], delimiter: u8) -> Vec<Seen> {
        let spec = spec();
        let mut reader =
            csv::ReaderBuilder::new().delimiter(delimiter).has_headers(false).flexible(false).from_reader(input);
        let mut record = csv::ByteRecord::new();
        let mut seen = Vec::new();
        let mut counted = (0, 0);
        loop {
            let line = reader.position().line();
            match reader.read_byte_record(&mut record) {
                Ok(false) => break,
                Ok(true) => {}
                Err(error) => {
                    let message = match error.kind() {
                        csv::ErrorKind::UnequalLengths { pos, expected_len, len } => Error::input(
                            &spec.path,
                            Some(pos.as_ref().map_or(line, |pos| first_byte(input, pos.byte(), &mut counted).0)),
                            format!(
                                "row has {len} fields but the header has {expected_len}: expected one value per header column"
                            ),
                        ),
                        _ => panic!("unexpected error {error}"),
                    };
                    seen.push(Err(message.to_string()));
                    break;
                }
            }
            let position = record.position().unwrap();
            let (line, first) = first_byte(input, position.byte(), &mut counted);
            let bytes = record.as_slice();
            if memchr::memchr(0, bytes).is_some() || std::str::from_utf8(bytes).is_err() {
                seen.push(Err(binary(&spec, line).to_string()));
                break;
            }
            let cells = record.iter().map(|cell| String::from_utf8(cell.to_vec()).unwrap()).collect();
            seen.push(Ok((line, first, cells)));
        }
        seen
    }

    fn by_records(input: &[u8], delimiter: u8, block: usize) -> Vec<Seen> {
        let spec = spec();
        let mut records = Records::with_block(Box::new(std::io::Cursor::new(input.to_vec())), delimiter, block);
        let mut seen = Vec::new();
        loop {
            match records.next(&spec) {
                Ok(None) => break,
                Ok(Some(record)) => {
                    seen.push(Ok((record.line, record.offset, record.cells().map(str::to_string).collect())));
                }
                Err(error) => {
                    seen.push(Err(error.to_string()));
                    break;
                }
            }
        }
        seen
    }

    /// The fast path against `csv::Reader`, with blocks small enough to cut every record
    /// somewhere and with the real block size.
    fn same_as_csv_reader(input: &[u8]) {
        for delimiter in [b',', b'\t'] {
            let input = if delimiter == b',' { input.to_vec() } else { tabs(input) };
            let expected = by_csv_reader(&input, delimiter);
            for block in [1, 2, 3, 5, 8, 13, 64, BLOCK] {
                assert_eq!(
                    by_records(&input, delimiter, block),
                    expected,
                    "block {block}, input {:?}",
                    String::from_utf8_lossy(&input)
                );
            }
        }
    }

    /// The same input as TSV: commas become tabs.
    fn tabs(input: &[u8]) -> Vec<u8> {
        input.iter().map(|&b| if b == b',' { b'\t' } else { b }).collect()
    }

    const HEADER: &str = "at,run_id,event\n";

    #[test]
    fn plain_records_match_the_csv_reader() {
        same_as_csv_reader(b"at,run_id,event\n2026-10-07T00:33:03Z,r1,started\n2026-10-07T00:33:04Z,r1,finished\n");
        same_as_csv_reader(b"at,run_id,event\n2026-10-07T00:33:03Z,r1,started\n2026-10-07T00:33:04Z,r1,finished");
        same_as_csv_reader(b"at,run_id,event\n,,\n a , b ,c \n");
        same_as_csv_reader(b"at,run_id,event\n");
        same_as_csv_reader(b"at,run_id,event");
        same_as_csv_reader(b"");
        same_as_csv_reader(b"at\n1\n2\n");
        same_as_csv_reader("at,run_id,event\n2026-10-07T00:33:03Z,r\u{e9}sum\u{e9},\u{1f600}\n".as_bytes());
    }

    #[test]
    fn crlf_and_lone_cr_match_the_csv_reader() {
        same_as_csv_reader(b"at,run_id,event\r\n1,r1,started\r\n2,r1,finished\r\n");
        same_as_csv_reader(b"at,run_id,event\r\n1,r1,started\r\n2,r1,finished");
        same_as_csv_reader(b"at,run_id,event\r\n1,r1,started\r\n2,r1,finished\r");
        same_as_csv_reader(b"at,run_id,event\r1,r1,started\r2,r1,finished\r");
        same_as_csv_reader(b"at,run_id,event\n1,r1,started\r2,r1,finished\n");
        same_as_csv_reader(b"at,run_id,event\r\n\r\n\r\n1,r1,started\r\n\r\n");
    }

    #[test]
    fn blank_lines_match_the_csv_reader() {
        same_as_csv_reader(b"\n\nat,run_id,event\n1,r1,started\n");
        same_as_csv_reader(b"at,run_id,event\n\n1,r1,started\n\n\n2,r1,finished\n");
        same_as_csv_reader(b"at,run_id,event\n1,r1,started\n\n\n");
        same_as_csv_reader(b"at,run_id,event\n\r\n1,r1,started\n");
        same_as_csv_reader(b"\n\n\n");
        // Whitespace is not blank: a record of one cell.
        same_as_csv_reader(b"at,run_id,event\n1,r1,started\n \n");
        same_as_csv_reader(b"at\n1\n \n\t\n");
    }

    #[test]
    fn quoted_records_match_the_csv_reader() {
        same_as_csv_reader(b"at,run_id,event\n1,\"r,1\",started\n2,r1,finished\n");
        same_as_csv_reader(b"at,run_id,event\n1,\"r\n1\",started\n2,r1,finished\n");
        same_as_csv_reader(b"at,run_id,event\r\n1,\"r\r\n1\",started\r\n2,r1,finished\r\n3,\"\"\"x\"\"\",y\r\n");
        same_as_csv_reader(b"at,run_id,event\n1,ab\"c,started\n2,\"x\"y,z\n");
        same_as_csv_reader(b"\"at\",\"run_id\",\"event\"\n1,r1,started\n\n\"2\",r1,\"finished\"");
        // A quoted cell still open at the end of the file, which `csv::Reader` gives as a value,
        // is an error: see `an_unterminated_quote_at_eof_is_an_error`.
    }

    #[test]
    fn ragged_rows_match_the_csv_reader() {
        same_as_csv_reader(b"at,run_id,event\n1,r1,started,extra\n");
        same_as_csv_reader(b"at,run_id,event\n1,r1,started\n2,r1\n");
        same_as_csv_reader(b"at,run_id,event\n\n\n1,r1\n");
        same_as_csv_reader(b"at,run_id,event\r\n1,r1,started\r\n2\r\n");
        same_as_csv_reader(b"at,run_id,event\n1,\"r,1\",started,x\n");
        same_as_csv_reader(b"at,run_id,event\n1,\"r\n1\"\n");
    }

    #[test]
    fn binary_data_matches_the_csv_reader() {
        same_as_csv_reader(b"at,run_id,event\n1,r1,started\n2,r\x001,finished\n");
        same_as_csv_reader(b"at,run_id,event\n1,r1,started\n2,r\xff1,finished\n");
        same_as_csv_reader(b"at,run_id,event\n1,\"r\xff\",started\n");
        same_as_csv_reader(b"at,run\x00_id,event\n1,r1,started\n");
        same_as_csv_reader(b"at,run_id,event\n1,r1,\xe2\x82\n");
        // A field count error comes before the check for text, as in `csv::Reader`.
        same_as_csv_reader(b"at,run_id,event\n2,r\xff1\n");
    }

    #[test]
    fn a_character_split_by_the_delimiter_is_binary_data_not_a_panic() {
        // Back to back the cells `\xc3` and `\xa9` are the text `é`; on their own neither is.
        for input in [&b"at,run_id,event\n1,\xc3,\xa9\n"[..], b"at,run_id,event\n1,\"\xc3\",\xa9\n"] {
            let seen = by_records(input, b',', BLOCK);
            let Some(Err(error)) = seen.last() else { panic!("{seen:?}") };
            assert!(error.starts_with("ledger.csv:2: binary data"), "{error}");
        }
    }

    #[test]
    fn a_byte_order_mark_is_dropped_from_the_header_only() {
        same_as_csv_reader(b"\xef\xbb\xbfat,run_id,event\n1,r1,started\n");
        same_as_csv_reader(b"at,run_id,event\n\xef\xbb\xbf1,r1,started\n");
    }

    #[test]
    fn records_longer_than_the_block_and_many_blocks_match_the_csv_reader() {
        use std::fmt::Write;
        let mut input = String::from(HEADER);
        for n in 0..40_000 {
            match n % 7 {
                0 => writeln!(input, "{n},\"r,{n}\",started").unwrap(),
                1 => write!(input, "{n},r{n},started\r\n").unwrap(),
                2 => input.push('\n'),
                _ => writeln!(input, "{n},r{n},finished").unwrap(),
            }
        }
        writeln!(input, "0,{},started", "x".repeat(3 * BLOCK)).unwrap();
        write!(input, "0,\"{}\",started\n1,r1,finished", "y\n".repeat(BLOCK)).unwrap();
        let input = input.as_bytes();
        for delimiter in [b',', b'\t'] {
            let input = if delimiter == b',' { input.to_vec() } else { tabs(input) };
            let expected = by_csv_reader(&input, delimiter);
            // The header, the rows that are not blank, and the three long records.
            assert_eq!(expected.len(), 1 + 40_000 - 40_000 / 7 + 3);
            for block in [100, 4096, BLOCK] {
                assert!(by_records(&input, delimiter, block) == expected, "block {block}");
            }
        }
    }

    #[test]
    fn rows_become_events_and_every_row_is_accounted_for() {
        let (events, summary) = read(
            "at,run_id,job_id,slot,event,item,status\n\
             2026-10-07T00:33:03.120Z,r1,repeat:s:1,2026-10-07T00:33:00Z,round_started,,RUNNING\n\
             2026-10-07T00:54:05.700Z,r1,repeat:s:1,2026-10-07T00:33:00Z,item_selected,PR-4412,\n\
             2026-10-07T00:54:06.000Z,r1,,,ping,,\n",
        )
        .unwrap();
        assert_eq!(events.len(), 2);
        assert_eq!(events[1].kind, EventKind::ItemSelected);
        assert_eq!(events[1].item.as_deref(), Some("PR-4412"));
        assert_eq!(events[0].slot.unwrap().to_rfc3339(), "2026-10-07T00:33:00+00:00");
        assert_eq!((summary.lines, summary.used, summary.ignored, summary.rejected), (4, 2, 1, 1));
        assert_eq!(summary.rejections[0].line, 4);
        assert!(summary.rejections[0].reason.contains("unknown event 'ping'"));
    }

    #[test]
    fn each_row_gets_the_scope_of_its_own_cells_when_rows_of_a_round_differ() {
        // Job, worker, slot and run of an event.
        type Seen<'a> = (Option<&'a str>, Option<&'a str>, Option<String>, Option<&'a str>);
        // The reader keeps the scopes of recent rounds by their cells as written: a row that
        // changes one cell (a worker takes over, a slot appears, cells that only differ in where
        // one ends) must get its own scope, and a malformed slot in a later row of a known round
        // is still an error on its line.
        let (events, _) = read(
            "at,run_id,job_id,slot,worker,event\n\
             2026-10-07T00:33:03Z,r1,j1791333180,,w1,round_started\n\
             2026-10-07T00:33:04Z,r1,j1791333180,,w1,item_selected\n\
             2026-10-07T00:33:05Z,r1,j1791333180,,w2,item_selected\n\
             2026-10-07T00:33:06Z,r1,j,1791333180,w2,item_selected\n\
             2026-10-07T00:33:07Z,r1,j1791333180,2026-10-07T00:33:00Z,w2,item_selected\n\
             2026-10-07T00:33:08Z,r1,j1791333180,,w1,round_finished\n",
        )
        .unwrap();
        let scopes: Vec<Seen> = events
            .iter()
            .map(|e| (e.job_id.as_deref(), e.worker.as_deref(), e.slot.map(|s| s.to_rfc3339()), e.run_id.as_deref()))
            .collect();
        let slot = Some("2026-10-07T00:33:00+00:00".to_string());
        let job = Some("j1791333180");
        assert_eq!(
            scopes,
            [
                (job, Some("w1"), None, Some("r1")),
                (job, Some("w1"), None, Some("r1")),
                (job, Some("w2"), None, Some("r1")),
                // "j1791333180","" and "j","1791333180": the same bytes, ending elsewhere (an
                // epoch-seconds slot).
                (Some("j"), Some("w2"), slot.clone(), Some("r1")),
                (job, Some("w2"), slot, Some("r1")),
                (job, Some("w1"), None, Some("r1")),
            ]
        );
        assert_eq!(events[0].scope(), events[1].scope());
        assert_eq!(events[0].scope(), events[5].scope());
        let error = read(
            "at,run_id,slot,event\n\
             2026-10-07T00:33:03Z,r1,2026-10-07T00:33:00Z,round_started\n\
             2026-10-07T00:33:04Z,r1,2026-10-07T00:33:00Z,item_selected\n\
             2026-10-07T00:33:05Z,r1,2026-10-07T25:33:00Z,item_selected\n",
        )
        .unwrap_err()
        .to_string();
        assert!(error.starts_with("ledger.csv:4: column 'slot': malformed timestamp"), "{error}");
    }

    #[test]
    fn rows_are_cited_by_the_line_they_are_on_with_crlf_endings_and_after_blank_lines() {
        // A CRLF export (Excel, SQL Server tools) and a blank line between rows: each row's
        // evidence must point at its own line, as a text editor numbers it.
        let (events, summary) = read(
            "at,run_id,event\r\n2026-10-07T00:33:03Z,r1,round_started\r\n\r\n2026-10-07T00:34:03Z,r1,round_finished\r\n2026-10-07T00:35:03Z,r1,ping\r\n",
        )
        .unwrap();
        let lines: Vec<u32> = events.iter().map(|e| e.origin().line).collect();
        assert_eq!(lines, [2, 4]);
        assert_eq!(summary.rejections[0].line, 5);
    }

    #[test]
    fn rows_of_a_file_with_lone_cr_endings_are_cited_by_their_own_lines() {
        // Old Mac exports end lines with a lone `\r`: a text editor shows one row per line, and
        // each row's evidence must point at its own (it once pointed every row at line 1).
        let (events, summary) = read(
            "at,run_id,event\r2026-10-07T00:33:03Z,r1,round_started\r\r2026-10-07T00:34:03Z,\"r\r1\",round_finished\r2026-10-07T00:35:03Z,r1,round_finished\r2026-10-07T00:36:03Z,r1,ping\r",
        )
        .unwrap();
        let lines: Vec<u32> = events.iter().map(|e| e.origin().line).collect();
        assert_eq!(lines, [2, 4, 6]);
        assert_eq!(summary.rejections[0].line, 7);
    }

    #[test]
    fn missing_required_column_names_the_field_and_the_fix() {
        let error = read("when,run_id,event\n2026-10-07T00:33:03Z,r1,started\n").unwrap_err().to_string();
        assert!(error.starts_with("ledger.csv:1: missing column for the ledger field 'time'"), "{error}");
        assert!(error.contains("--column time=NAME"), "{error}");
    }

    #[test]
    fn malformed_timestamp_names_the_line() {
        let error =
            read("at,event\n2026-10-07T00:33:03Z,started\n2026-10-07 25:00:00,started\n").unwrap_err().to_string();
        assert!(error.starts_with("ledger.csv:3: column 'at': malformed timestamp"), "{error}");
    }

    #[test]
    fn ragged_rows_are_errors_with_a_line() {
        let error = read("at,event\n2026-10-07T00:33:03Z,started,extra\n").unwrap_err().to_string();
        assert!(error.starts_with("ledger.csv:2: row has 3 fields but the header has 2"), "{error}");
    }

    fn read_capped(text: &str, cap: usize, block: usize) -> Result<(Vec<Event>, InputSummary)> {
        let spec = SourceSpec {
            max_line_bytes: cap,
            ..SourceSpec::new(
                SourceKind::Ledger,
                PathBuf::from("ledger.csv"),
                Some(chrono_tz::UTC),
                "--ledger-tz".into(),
            )
        };
        let mut events = Vec::new();
        let mut summary = InputSummary::new("ledger.csv", "ledger", "csv", spec.tz);
        let mut records = Records::with_block(Box::new(std::io::Cursor::new(text.to_string())), b',', block);
        let mut rows = Rows::from_header(&spec, 0, b',', &mut records, &mut summary)?.unwrap();
        while let Some(record) = records.next(&spec)? {
            rows.add(&record, &mut events, &mut summary)?;
        }
        Ok((events, summary))
    }

    #[test]
    fn a_record_past_the_cap_is_rejected_and_passed_over_quoted_or_not() {
        let row = "2026-10-07T00:33:03Z,round_started";
        let long = "x".repeat(300);
        // Unquoted; quoted over lines (its end is where its quote closes); quoted after a first cell.
        let text =
            format!("at,event\n{row}\n{row}{long}\n{row}\n\"{long}\n{long}\",a\n{row}\n{row},\"{long}\r\n\"\n{row}\n");
        for block in [7, 64, 1 << 20] {
            let (events, summary) = read_capped(&text, 200, block).unwrap();
            let rejected: Vec<u64> = summary.rejections.iter().map(|r| r.line).collect();
            assert_eq!(rejected, [3, 5, 8], "block {block}");
            assert_eq!(summary.rejections[0].reason, crate::ingest::io::lines::too_long(200));
            assert_eq!((summary.lines, summary.used, events.len()), (8, 4, 4), "block {block}");
        }
        // Under the cap, the long records are rows again, and line 5's first cell is no time.
        let error = read_capped(&text, 1000, 64).unwrap_err().to_string();
        assert!(error.starts_with("ledger.csv:5: column 'at': malformed timestamp"), "{error}");
    }

    #[test]
    fn an_unterminated_quote_at_eof_is_an_error() {
        for text in [
            "at,event\n2026-10-07T00:33:03Z,round_started\n2026-10-07T00:33:04Z,\"round_finished\n",
            "at,event\n2026-10-07T00:33:03Z,round_started\n2026-10-07T00:33:04Z,\"a \"\"quoted\"\" word\nand more",
            "at,event\n2026-10-07T00:33:03Z,round_started\n\"\n",
        ] {
            for block in [3, 1 << 20] {
                let error = read_capped(text, 1 << 20, block).unwrap_err().to_string();
                assert_eq!(
                    error,
                    "ledger.csv:3: a quoted field opened at line 3 never closes before the end of the file: is the export truncated?",
                    "block {block}"
                );
            }
        }
        // Past the cap too: the record with no end is the truncation, not a long row.
        let text = format!("at,event\n2026-10-07T00:33:03Z,\"{}", "x\n".repeat(400));
        let error = read_capped(&text, 100, 64).unwrap_err().to_string();
        assert!(error.starts_with("ledger.csv:2: a quoted field opened at line 2 never closes"), "{error}");
        // After a byte-order mark (which `csv_core` drops), a header's quote opens a quoted cell.
        let mut quotes = Quotes::default();
        quotes.start(1);
        quotes.skip = 3;
        quotes.walk("\u{feff}\"a,\"b\n".as_bytes(), b',');
        assert!(quotes.state == QuoteState::CellStart, "the record ended outside quotes");
        // A closed quote at the end of the file, and a quote inside an unquoted cell, are values.
        for text in
            ["at,event\n2026-10-07T00:33:03Z,\"round_started\"", "at,event\n2026-10-07T00:33:03Z,round\"started"]
        {
            let (_, summary) = read(text).unwrap();
            assert_eq!(summary.lines, 2, "{text}");
        }
    }
}
