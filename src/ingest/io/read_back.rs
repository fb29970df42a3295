//! Reading back the lines a report shows, for sources whose texts stayed in their files
//! (`LineTexts::is_in_file`): the text of millions of ledger rows is not held in memory for the
//! few a report cites.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufRead, BufReader, Seek};

use crate::error::{Error, Result};
use crate::model::report::ReadBack;
use crate::model::timeline::EventId;
use crate::model::{LineTexts, Timeline};
use crate::progress::{Progress, SourceBar};

use crate::ingest::{SourceKind, SourceSpec};

/// The text of each of `ids` whose source's texts stayed in its file, by event id. The sources are
/// the ones the timeline was read from, in the same order.
///
/// The text is the event's line, without its line ending. For a CSV ledger it is the record that
/// starts on that line, which a quoted cell may carry over line endings.
///
/// A compressed source is decompressed again up to its last line shown, with a progress bar
/// (`progress`): for a large file that is a second read, seconds long.
pub fn read_back(
    sources: &[SourceSpec],
    timeline: &Timeline,
    ids: &[EventId],
    progress: &Progress,
) -> Result<HashMap<EventId, String>> {
    let texts = read_in_order(sources, timeline, ids, progress)?;
    Ok(ids.iter().copied().zip(texts).filter_map(|(id, text)| Some((id, text?))).collect())
}

/// The sources of a timeline, read back a chunk of events at a time while a whole timeline is
/// written (`RawTexts::OnDemand`): the lines of millions of events are never held at once.
#[derive(Debug)]
pub struct SourceFiles(pub Vec<SourceSpec>);

impl ReadBack for SourceFiles {
    fn read(&self, timeline: &Timeline, ids: &[EventId]) -> Result<Vec<Option<String>>> {
        // Only plain files are read back this way (see `SourceSpec::reread_compressed`): quick
        // seeks, no bar.
        read_in_order(&self.0, timeline, ids, &Progress::hidden())
    }
}

/// `read_back`, as a list in the order of `ids` (`None` where the text is kept in memory). The
/// sources are read on as many threads as there are cores: a compressed one is decompressed again
/// up to its last line shown.
fn read_in_order(
    sources: &[SourceSpec],
    timeline: &Timeline,
    ids: &[EventId],
    progress: &Progress,
) -> Result<Vec<Option<String>>> {
    let mut by_source: BTreeMap<u16, Vec<(u32, usize)>> = BTreeMap::new();
    for (place, &id) in ids.iter().enumerate() {
        let origin = timeline.get(id).origin();
        // A log read from a stream keeps the texts of its first lines and reads the rest back
        // from its copy (`log::text::read_streamed`): a kept text is not read back.
        if timeline
            .line_texts(origin.source)
            .is_some_and(|texts| texts.is_in_file() && texts.kept(origin.line).is_none())
        {
            by_source.entry(origin.source).or_default().push((origin.line, place));
        }
    }
    let by_source: Vec<(u16, Vec<(u32, usize)>)> = by_source.into_iter().collect();
    let in_source_order: Vec<usize> = (0..by_source.len()).collect();
    let read = crate::parallel::map_in_order(&in_source_order, crate::parallel::cores(), |index| {
        let (source, lines) = &by_source[index];
        match timeline.line_texts(*source) {
            Some(texts) => read_lines(&sources[usize::from(*source)], texts, lines.clone(), progress),
            None => Ok(Vec::new()),
        }
    });
    let mut texts = vec![None; ids.len()];
    // Errors in source order: the same error, whichever thread ended first.
    for texts_of_source in read {
        for (place, text) in texts_of_source? {
            texts[place] = Some(text);
        }
    }
    Ok(texts)
}

/// The texts of `lines` (with their places in the caller's list) of one source, in file order
/// through one buffer: reading back a whole timeline is one forward pass, not a seek and a read
/// per line. A line is reached by reading forward from the last mark before it, or from where the
/// last line read ended when that is nearer.
fn read_lines(
    spec: &SourceSpec,
    texts: &LineTexts,
    mut lines: Vec<(u32, usize)>,
    progress: &Progress,
) -> Result<Vec<(usize, String)>> {
    let io = |source| Error::Io { path: spec.path.clone(), source };
    let shorter = |line: u32| {
        Error::input(
            &spec.path,
            Some(u64::from(line)),
            "the file is shorter than when it was read: it changed during the run",
        )
    };
    let changed = |line: u32| {
        Error::input(
            &spec.path,
            Some(u64::from(line)),
            "the line is not where it was when the file was read: the file changed during the run",
        )
    };
    let mut input = SourceText::open(spec, progress)?;
    let delimiter = (spec.kind == SourceKind::Ledger)
        .then(|| crate::ingest::ledger::csv::detect_delimiter(spec, &mut input.reader()));
    // A ledger's lines as its reader counted them (`ledger::csv`'s module header).
    let cr_lines = delimiter.is_some() && crate::ingest::ledger::csv::lone_cr_ends_lines(&mut input.reader());
    lines.sort_unstable();
    // Where the reader is: the byte, the line that starts there, and whether the byte before it
    // was a `\r` (for a CSV ledger, whose line ends are `line_ends`').
    let (mut position, mut line, mut after_cr) = (0u64, 1u32, false);
    let mut buffer = Vec::new();
    let mut texts_read = Vec::with_capacity(lines.len());
    let mut last: Option<(u32, String)> = None;
    for (wanted, place) in lines {
        // Events read from one line share its text.
        if let Some((at, text)) = &last
            && *at == wanted
        {
            texts_read.push((place, text.clone()));
            continue;
        }
        let mark = texts.mark_at_or_before(wanted);
        // A log read by time for a window numbers its lines from the byte it was read from: its
        // first mark is line 1 there, past the file's start (`io::seek`).
        if mark.line > line || (mark.line == line && mark.offset > position && line == 1 && position == 0) {
            if !input.move_to(spec, position, mark.offset).map_err(io)? {
                return Err(shorter(wanted));
            }
            (position, line, after_cr) = (mark.offset, mark.line, false);
        }
        // A record read before ran past the wanted line only if the file changed since it was read.
        let Some(ahead) = wanted.checked_sub(line) else { return Err(changed(wanted)) };
        let (passed, reached) = pass_lines(input.reader(), ahead, &mut after_cr).map_err(io)?;
        position += passed;
        if !reached {
            return Err(shorter(wanted));
        }
        line = wanted;
        buffer.clear();
        let from_start = position == 0;
        // A cited line was at most the cap when it was read: one longer now (the file changed) is
        // not held. Its line end, and a byte more, tell it.
        let limit = u64::try_from(spec.max_line_bytes).unwrap_or(u64::MAX).saturating_add(3);
        let read = read_record(&mut std::io::Read::take(input.reader(), limit), delimiter, &mut buffer).map_err(io)?;
        if read == 0 {
            return Err(shorter(wanted));
        }
        if read == limit {
            return Err(changed(wanted));
        }
        position += read;
        let ends = match delimiter {
            Some(delimiter) => crate::ingest::ledger::csv::line_ends_in(&buffer, delimiter, cr_lines, &mut after_cr),
            None => crate::ingest::line_ends(&buffer, &mut after_cr),
        };
        // A source has at most `u32::MAX` lines (`Origin::line_number`).
        line = line.saturating_add(u32::try_from(ends).unwrap_or(u32::MAX));
        // A plain file's first line is read back with the byte-order mark its reader skipped.
        let text =
            if from_start { buffer.strip_prefix(crate::ingest::io::lines::BOM).unwrap_or(&buffer) } else { &buffer };
        let text = String::from_utf8_lossy(text).trim_end_matches(['\n', '\r']).to_string();
        texts_read.push((place, text.clone()));
        last = Some((wanted, text));
    }
    Ok(texts_read)
}

/// Reads past `count` line ends (as `line_ends` counts them, with its `after_cr`: every reader
/// counts LF, CRLF and a lone CR as one line end), and then past the `\n` of a `\r\n` whose `\r`
/// ended the last line passed. Returns the bytes passed, and whether all `count` were there before
/// the input ended.
fn pass_lines(input: &mut dyn BufRead, mut count: u32, after_cr: &mut bool) -> std::io::Result<(u64, bool)> {
    let mut passed = 0u64;
    loop {
        let available = input.fill_buf()?;
        if available.is_empty() {
            return Ok((passed, count == 0));
        }
        if count == 0 {
            if *after_cr && available[0] == b'\n' {
                input.consume(1);
                passed += 1;
            }
            *after_cr = false;
            return Ok((passed, true));
        }
        let mut used = available.len();
        let mut ends = |at: usize| {
            count -= 1;
            (count == 0).then_some(at + 1)
        };
        let found = memchr::memchr2_iter(b'\n', b'\r', available)
            .filter(|&at| {
                let cr_before = if at == 0 { *after_cr } else { available[at - 1] == b'\r' };
                available[at] == b'\r' || !cr_before
            })
            .find_map(&mut ends);
        if let Some(end) = found {
            used = end;
        }
        *after_cr = available[used - 1] == b'\r';
        input.consume(used);
        passed += used as u64;
    }
}

/// The text of a source file, read forward from its start.
enum SourceText {
    /// A plain file: moved about by seeking.
    Plain { file: BufReader<File>, size: u64 },
    /// A compressed file: decompressed from its start, its compressed bytes counted on `bar`.
    /// Its size on disk says nothing of its text's, and going back means starting again.
    Compressed { input: Box<dyn BufRead + Send>, bar: Option<SourceBar>, progress: Progress },
}

impl SourceText {
    fn open(spec: &SourceSpec, progress: &Progress) -> Result<SourceText> {
        let io = |source| Error::Io { path: spec.path.clone(), source };
        let mut file = File::open(spec.file()).map_err(io)?;
        let size = file.metadata().map_err(io)?.len();
        if crate::ingest::is_gzip(&mut file) {
            let (input, bar) = Self::decompress(spec, progress)?;
            return Ok(SourceText::Compressed { input, bar, progress: progress.clone() });
        }
        file.rewind().map_err(io)?;
        Ok(SourceText::Plain { file: BufReader::with_capacity(1 << 20, file), size })
    }

    /// A compressed file's text from its start, with its bar.
    fn decompress(spec: &SourceSpec, progress: &Progress) -> Result<(Box<dyn BufRead + Send>, Option<SourceBar>)> {
        crate::ingest::open_labelled(spec.file(), &format!("{} (cited lines)", spec.display_path()), progress)
    }

    fn reader(&mut self) -> &mut dyn BufRead {
        match self {
            SourceText::Plain { file, .. } => file,
            SourceText::Compressed { input, .. } => input,
        }
    }

    /// Moves from byte `from` of the text to byte `to`; false when the text ends before `to`.
    fn move_to(&mut self, spec: &SourceSpec, from: u64, to: u64) -> std::io::Result<bool> {
        match self {
            SourceText::Plain { file, size } => {
                if to >= *size {
                    return Ok(false);
                }
                let ahead = i64::try_from(to).unwrap_or(i64::MAX) - i64::try_from(from).unwrap_or(i64::MAX);
                file.seek_relative(ahead)?;
                Ok(true)
            }
            SourceText::Compressed { input, bar, progress } => {
                let from = if to < from {
                    // Its bar goes with it: the new one starts again from zero.
                    bar.take();
                    (*input, *bar) = Self::decompress(spec, progress).map_err(std::io::Error::other)?;
                    0
                } else {
                    from
                };
                Ok(skip(input, to - from)? == to - from)
            }
        }
    }
}

/// Reads and drops `count` bytes; returns how many there were before the end of the input.
fn skip(input: &mut dyn BufRead, count: u64) -> std::io::Result<u64> {
    let mut left = count;
    while left > 0 {
        let available = input.fill_buf()?;
        if available.is_empty() {
            break;
        }
        let taken = available.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        input.consume(taken);
        left -= taken as u64;
    }
    Ok(count - left)
}

/// Reads the line at the reader's position into `out`, to its first `\r` or `\n` (the `\n` of a
/// `\r\n` is passed by `pass_lines`). Returns the bytes read.
fn read_line(file: &mut dyn BufRead, out: &mut Vec<u8>) -> std::io::Result<u64> {
    let mut read = 0;
    loop {
        let available = file.fill_buf()?;
        if available.is_empty() {
            return Ok(read);
        }
        let (taken, ended) = match memchr::memchr2(b'\n', b'\r', available) {
            Some(at) => (at + 1, true),
            None => (available.len(), false),
        };
        out.extend_from_slice(&available[..taken]);
        file.consume(taken);
        read += taken as u64;
        if ended {
            return Ok(read);
        }
    }
}

/// Reads the line at the reader's position into `out`, or with a CSV `delimiter`, the record
/// (the lines up to the one that ends its last quoted cell). Returns the bytes read.
fn read_record(file: &mut dyn BufRead, delimiter: Option<u8>, out: &mut Vec<u8>) -> std::io::Result<u64> {
    use csv_core::ReadRecordResult;
    let Some(delimiter) = delimiter else { return read_line(file, out) };
    // A record ends at its first line ending outside quotes (`\r` or `\n`, as the ledger was
    // read). Without a quote before the line ending, that is the first one.
    let available = file.fill_buf()?;
    if let Some(at) = memchr::memchr3(b'\n', b'\r', b'"', available)
        && available[at] != b'"'
    {
        out.extend_from_slice(&available[..=at]);
        file.consume(at + 1);
        return Ok(at as u64 + 1);
    }
    // Else `csv_core`, the parser the ledger was read with, says where it ends.
    let mut parser = csv_core::ReaderBuilder::new().delimiter(delimiter).build();
    let (mut cells, mut ends) = (vec![0; 1024], vec![0; 64]);
    let mut read = 0;
    loop {
        // An empty input (the end of the file) tells `csv_core` that the input has ended: it
        // then gives the record or the end.
        let available = file.fill_buf()?;
        let (result, consumed, _, _) = parser.read_record(available, &mut cells, &mut ends);
        out.extend_from_slice(&available[..consumed]);
        file.consume(consumed);
        read += consumed as u64;
        match result {
            ReadRecordResult::Record | ReadRecordResult::End => return Ok(read),
            ReadRecordResult::OutputFull => cells.resize(cells.len() * 2, 0),
            ReadRecordResult::OutputEndsFull => ends.resize(ends.len() * 2, 0),
            ReadRecordResult::InputEmpty => {}
        }
    }
}

/// Each of `events`' line number and text read back from `spec` by `texts`, in line order (for
/// the readers' tests).
#[cfg(test)]
pub(crate) fn every_event_read_back(
    spec: &SourceSpec,
    events: &[crate::model::Event],
    texts: LineTexts,
) -> Result<Vec<(u32, String)>> {
    let timeline = Timeline::new(events.to_vec()).with_line_texts(vec![texts]);
    let ids: Vec<EventId> = timeline.ids().map(|(id, _)| id).collect();
    let read = read_back(std::slice::from_ref(spec), &timeline, &ids, &Progress::hidden())?;
    // As a report gives them: read back, or kept (a log read from a stream keeps its first ones).
    let text =
        |id: &EventId| read.get(id).cloned().or_else(|| timeline.kept_text(timeline.get(*id)).map(str::to_string));
    let mut lines: Vec<(u32, String)> =
        ids.iter().map(|id| (timeline.get(*id).origin().line, text(id).unwrap_or_default())).collect();
    lines.sort();
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::{SourceKind, read_sources};
    use crate::model::Report;
    use crate::model::report::{RawTexts, View};
    use crate::progress::Progress;

    /// A ledger file of `text` in `dir`, read as a case would read it.
    fn ledger(dir: &tempfile::TempDir, name: &str, text: &str) -> (SourceSpec, Timeline) {
        ledger_bytes(dir, name, text.as_bytes(), |spec| spec)
    }

    /// `parts` gzip-compressed, each its own member (as `cat a.gz b.gz` gives).
    fn gzip(parts: &[&str]) -> Vec<u8> {
        use std::io::Write;
        let mut out = Vec::new();
        for part in parts {
            let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            encoder.write_all(part.as_bytes()).unwrap();
            out.extend(encoder.finish().unwrap());
        }
        out
    }

    /// The timeline of `specs`, with where their lines' texts are, as a case builds it.
    fn timeline_of(specs: &[SourceSpec]) -> Timeline {
        let (events, mut inputs) = read_sources(specs, &Progress::hidden()).unwrap();
        let texts = inputs.iter_mut().map(|input| std::mem::take(&mut input.texts)).collect();
        Timeline::new(events).with_line_texts(texts)
    }

    /// The ledger in `bytes`, written to `name` in `dir` and read as a case would read it.
    fn ledger_bytes(
        dir: &tempfile::TempDir,
        name: &str,
        bytes: &[u8],
        spec: impl Fn(SourceSpec) -> SourceSpec,
    ) -> (SourceSpec, Timeline) {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let spec = spec(SourceSpec::new(SourceKind::Ledger, path, Some(chrono_tz::UTC), "--ledger-tz".into()));
        (spec.clone(), timeline_of(&[spec]))
    }

    const QUOTED_ROWS: [&str; 5] = [
        "at,run_id,event,item,detail",
        "2026-10-07T00:33:00Z,r1,round_started,,",
        "2026-10-07T00:34:00Z,r1,item_selected,PR-1,\"first line\r\nsecond, \"\"quoted\"\"\"",
        "2026-10-07T00:35:00Z,r1,item_selected,PR-2,\"picked, once\"",
        "2026-10-07T00:36:00Z,r1,round_finished,,",
    ];

    #[test]
    fn a_compressed_ledger_is_read_back_by_decompressing_it_again_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let text = QUOTED_ROWS.join("\r\n") + "\r\n";
        // Two members, the second starting inside the quoted cell.
        let cut = text.find("second").unwrap();
        let (spec, timeline) = ledger_bytes(&dir, "ledger.csv.gz", &gzip(&[&text[..cut], &text[cut..]]), |s| s);
        let ids: Vec<EventId> = timeline.ids().map(|(id, _)| id).collect();
        assert_eq!(ids.len(), 4);
        assert!(timeline.line_texts(0).unwrap().is_in_file(), "read back, not kept");
        // Asked for out of file order, and one of them twice.
        let asked = [3, 1, 0, 2, 1];
        let texts = read_back(std::slice::from_ref(&spec), &timeline, &asked, &Progress::hidden()).unwrap();
        for id in asked {
            assert_eq!(texts[&id], QUOTED_ROWS[id as usize + 1], "event {id}: the record as written, quotes and all");
        }
        let (plain, plain_timeline) = ledger_bytes(&dir, "ledger.csv", text.as_bytes(), |s| s);
        assert_eq!(
            read_back(&[plain], &plain_timeline, &asked, &Progress::hidden()).unwrap(),
            texts,
            "as from the plain file"
        );
    }

    #[test]
    fn reading_back_a_compressed_file_counts_its_compressed_bytes_on_a_bar() {
        let dir = tempfile::tempdir().unwrap();
        let rows = (0..50_000).map(|n| format!("2026-10-07T00:33:00Z,r{n},item_selected,PR-{n},\"row {n}\"\n"));
        let text: String = std::iter::once(QUOTED_ROWS[0].to_string() + "\n").chain(rows).collect();
        let (spec, _) = ledger_bytes(&dir, "ledger.csv.gz", &gzip(&[&text]), |s| s);
        let size = std::fs::metadata(&spec.path).unwrap().len();
        let mut source = SourceText::open(&spec, &Progress::counting()).unwrap();
        let SourceText::Compressed { bar: Some(_), .. } = &source else { panic!("a compressed file, with its bar") };
        // To the last line: every compressed byte has gone through the bar.
        let last = text[..text.len() - 1].rfind('\n').unwrap() as u64 + 1;
        assert!(source.move_to(&spec, 0, last).unwrap());
        let mut record = Vec::new();
        read_record(&mut source.reader(), Some(b','), &mut record).unwrap();
        assert!(record.starts_with(b"2026-10-07T00:33:00Z,r49999,"));
        assert_eq!(skip(source.reader(), 1).unwrap(), 0, "at the end");
        let SourceText::Compressed { bar: Some(bar), .. } = &source else { unreachable!() };
        assert_eq!(bar.position(), size);
        // Hidden progress: no bar at all.
        let hidden = SourceText::open(&spec, &Progress::hidden()).unwrap();
        assert!(matches!(hidden, SourceText::Compressed { bar: None, .. }));
    }

    #[test]
    fn a_compressed_file_cut_short_since_it_was_read_is_an_error_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let text = QUOTED_ROWS.join("\n") + "\n";
        let (spec, timeline) = ledger_bytes(&dir, "ledger.csv.gz", &gzip(&[&text]), |s| s);
        let two_rows = QUOTED_ROWS[..2].join("\n") + "\n";
        std::fs::write(&spec.path, gzip(&[&two_rows])).unwrap();
        assert_eq!(
            read_back(std::slice::from_ref(&spec), &timeline, &[0], &Progress::hidden()).unwrap()[&0],
            QUOTED_ROWS[1]
        );
        let error =
            read_back(std::slice::from_ref(&spec), &timeline, &[0, 3], &Progress::hidden()).unwrap_err().to_string();
        assert!(error.contains("ledger.csv.gz:6: the file is shorter than when it was read"), "{error}");
    }

    #[test]
    fn a_compressed_source_keeps_its_texts_when_it_is_not_to_be_decompressed_again() {
        let dir = tempfile::tempdir().unwrap();
        let text = QUOTED_ROWS.join("\n") + "\n";
        let keep = |spec: SourceSpec| SourceSpec { reread_compressed: false, ..spec };
        let (_, timeline) = ledger_bytes(&dir, "ledger.csv.gz", &gzip(&[&text]), keep);
        assert!(!timeline.line_texts(0).unwrap().is_in_file());
        assert!(timeline.events().iter().all(|e| timeline.kept_text(e).is_some()));
        let (_, timeline) = ledger_bytes(&dir, "ledger.csv", text.as_bytes(), keep);
        assert!(timeline.line_texts(0).unwrap().is_in_file(), "a plain file is read back");
        assert!(timeline.events().iter().all(|e| timeline.kept_text(e).is_none()));
    }

    #[test]
    fn a_compressed_log_keeps_the_texts_of_its_lines_as_the_plain_file_gives_them_back() {
        let dir = tempfile::tempdir().unwrap();
        // CRLF and LF endings, job lines, noise, a process start, and a settings dump whose
        // continuation lines are events of their own.
        let mut text = String::new();
        for n in 0..3_000 {
            let at = format!("2026-10-07 09:{:02}:{:02}.{:03}", n / 60 % 60, n % 60, n % 1000);
            let end = if n % 3 == 0 { "\r\n" } else { "\n" };
            let line = match n % 41 {
                5 => format!("{at} INFO [worker] job active queue=q name=sweep id={n} pid=41877{end}"),
                9 => format!("{at} INFO [main] server starting pid={n}{end}"),
                13 => format!("{at} DEBUG [Config] worker options:{end}{{{end}  \"lockDuration\": 12000{end}}}{end}"),
                _ => format!("{at} INFO GET /api/health 200 {n}ms{end}"),
            };
            text.push_str(&line);
        }
        let log = |name: &str, bytes: &[u8], spec: &dyn Fn(SourceSpec) -> SourceSpec| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            spec(SourceSpec::new(SourceKind::Log, path, Some(chrono_tz::Asia::Seoul), "--log-tz".into()))
        };
        let plain = log("server.log", text.as_bytes(), &|s| s);
        let plain_timeline = timeline_of(std::slice::from_ref(&plain));
        let ids: Vec<EventId> = plain_timeline.ids().map(|(id, _)| id).collect();
        assert!(ids.len() > 200, "{} events", ids.len());
        assert!(plain_timeline.line_texts(0).unwrap().is_in_file());
        let from_file = read_back(std::slice::from_ref(&plain), &plain_timeline, &ids, &Progress::hidden()).unwrap();
        assert_eq!(from_file.len(), ids.len());
        // Two members, the second starting inside a line.
        let cut = text.len() / 3;
        let gz = log("server.log.gz", &gzip(&[&text[..cut], &text[cut..]]), &|s| s);
        let timeline = timeline_of(std::slice::from_ref(&gz));
        assert!(!timeline.line_texts(0).unwrap().is_in_file(), "kept as read: not decompressed again");
        assert!(read_back(std::slice::from_ref(&gz), &timeline, &ids, &Progress::hidden()).unwrap().is_empty());
        for &id in &ids {
            assert_eq!(timeline.get(id).origin(), plain_timeline.get(id).origin());
            assert_eq!(timeline.kept_text(timeline.get(id)), Some(from_file[&id].as_str()), "event {id}");
        }
        // Past the most it may keep, the texts are dropped, and read back by decompressing.
        let small =
            log("server.log.gz", &gzip(&[&text[..cut], &text[cut..]]), &|s| SourceSpec { max_kept_bytes: 4_000, ..s });
        let timeline = timeline_of(std::slice::from_ref(&small));
        let texts = timeline.line_texts(0).unwrap();
        assert!(texts.is_in_file(), "read back");
        assert!(texts.clone().into_kept().is_empty(), "nothing kept past the most");
        assert_eq!(read_back(std::slice::from_ref(&small), &timeline, &ids, &Progress::hidden()).unwrap(), from_file);
    }

    #[test]
    fn lines_of_a_large_log_are_found_from_the_nearest_mark() {
        // Some 3 MiB of log (read in two parts), a job line every 97 lines: each is read back from
        // the last mark before it, out of order and across the marks.
        use std::fmt::Write;
        let dir = tempfile::tempdir().unwrap();
        let mut text = String::new();
        for n in 0..30_000 {
            let at = format!("2026-10-07 09:{:02}:{:02}.{:03}", n / 60 % 60, n % 60, n % 1000);
            if n % 97 == 5 {
                writeln!(text, "{at} INFO [worker] job active queue=q name=sweep id={n} pid=41877").unwrap();
            } else {
                writeln!(text, "{at} INFO GET /api/health 200 {n}ms {}", "x".repeat(n % 50)).unwrap();
            }
        }
        let path = dir.path().join("server.log");
        std::fs::write(&path, &text).unwrap();
        let spec = SourceSpec::new(SourceKind::Log, path, Some(chrono_tz::Asia::Seoul), "--log-tz".into());
        let timeline = timeline_of(std::slice::from_ref(&spec));
        let texts = timeline.line_texts(0).unwrap();
        assert!(texts.is_in_file());
        assert!(texts.mark_at_or_before(29_000).line > 20_000, "marked along the file");
        let lines: Vec<&str> = text.lines().collect();
        let mut ids: Vec<EventId> = timeline.ids().map(|(id, _)| id).collect();
        assert_eq!(ids.len(), 30_000 / 97 + 1);
        ids.reverse();
        ids.rotate_left(100);
        let read = read_back(std::slice::from_ref(&spec), &timeline, &ids, &Progress::hidden()).unwrap();
        for id in ids {
            let line = timeline.get(id).origin().line as usize;
            assert_eq!(read[&id], lines[line - 1], "line {line}");
        }
    }

    #[test]
    fn records_of_a_ledger_with_lone_cr_endings_are_read_back_one_each() {
        let dir = tempfile::tempdir().unwrap();
        let rows = [
            "at,run_id,event,item,detail",
            "2026-10-07T00:33:00Z,r1,round_started,,",
            "2026-10-07T00:34:00Z,r1,item_selected,PR-1,\"two\rlines\"",
            "2026-10-07T00:35:00Z,r1,item_selected,PR-2,plain",
            "2026-10-07T00:36:00Z,r1,round_finished,,",
        ];
        let (spec, timeline) = ledger(&dir, "ledger.csv", &(rows.join("\r") + "\r"));
        let lines: Vec<u32> = timeline.events().iter().map(|e| e.origin().line).collect();
        assert_eq!(lines, [2, 3, 5, 6], "a lone CR ends a line, in a quoted cell too");
        let texts = read_back(&[spec], &timeline, &[3, 1, 0, 2], &Progress::hidden()).unwrap();
        for id in 0..4 {
            assert_eq!(texts[&id], rows[id as usize + 1], "event {id}");
        }
    }

    #[test]
    fn shown_rows_are_read_back_verbatim_from_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let rows = [
            "at,run_id,event,item,detail",
            "2026-10-07T00:33:00Z,r1,round_started,,",
            "2026-10-07T00:54:05.700Z,r1,item_selected,PR-4412,\"picked, twice\"",
        ];
        let (spec, timeline) = ledger(&dir, "ledger.csv", &(rows.join("\r\n") + "\r\n"));
        assert!(timeline.line_texts(0).unwrap().is_in_file());
        let texts = read_back(&[spec], &timeline, &[0, 1], &Progress::hidden()).unwrap();
        assert_eq!(texts[&0], rows[1]);
        assert_eq!(texts[&1], rows[2], "the record as written, quotes and all, without its line ending");
    }

    #[test]
    fn a_record_whose_quoted_cell_holds_line_endings_is_read_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let rows = [
            "at\trun_id\tevent\titem\tdetail",
            "2026-10-07T00:33:00Z\tr1\titem_selected\tPR-1\t\"first line\r\nsecond \"\"line\"\"\nthird\"",
            "2026-10-07T00:34:00Z\tr1\titem_selected\tPR-2\t\"quoted, one line\"",
            "2026-10-07T00:35:00Z\tr1\tround_finished\t\t",
        ];
        let (spec, timeline) = ledger(&dir, "ledger.tsv", &(rows.join("\n") + "\n"));
        let lines: Vec<u32> = timeline.events().iter().map(|e| e.origin().line).collect();
        assert_eq!(lines, [2, 5, 6]);
        let texts = read_back(&[spec], &timeline, &[2, 0, 1], &Progress::hidden()).unwrap();
        assert_eq!(texts[&0], rows[1], "all three lines of the record");
        assert_eq!(texts[&1], rows[2]);
        assert_eq!(texts[&2], rows[3], "the record after, from its own line");
    }

    /// A report of `timeline` whose texts are read back from `spec` on demand.
    fn on_demand(spec: &SourceSpec, timeline: Timeline) -> Report {
        Report {
            view: View::Timeline,
            display_tz: chrono_tz::UTC,
            inputs: Vec::new(),
            params: crate::model::LockParams::default(),
            warnings: Vec::new(),
            assumptions: Vec::new(),
            timeline,
            findings: Vec::new(),
            chains: Vec::new(),
            raw_texts: RawTexts::OnDemand(Box::new(SourceFiles(vec![spec.clone()]))),
            shown: None,
        }
    }

    #[test]
    fn texts_read_on_demand_in_chunks_are_the_texts_read_back_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut rows = vec!["at,run_id,event,item,detail".to_string()];
        for i in 0..9 {
            let detail = if i == 4 { "\"two\nlines\"".to_string() } else { format!("row {i}") };
            rows.push(format!("2026-10-07T00:{:02}:00Z,r1,item_selected,PR-{i},{detail}", 30 + i));
        }
        let (spec, timeline) = ledger(&dir, "ledger.csv", &(rows.join("\n") + "\n"));
        let ids: Vec<EventId> = timeline.ids().map(|(id, _)| id).collect();
        let at_once = read_back(std::slice::from_ref(&spec), &timeline, &ids, &Progress::hidden()).unwrap();
        let report = on_demand(&spec, timeline);
        for chunk in [1, 2, 4, 100] {
            let mut seen = Vec::new();
            report
                .each_raw_in_chunks(
                    &ids,
                    chunk,
                    |e| e.to_string(),
                    |id, raw| {
                        seen.push((id, raw.to_string()));
                        Ok(())
                    },
                )
                .unwrap();
            let expected: Vec<(EventId, String)> = ids.iter().map(|&id| (id, at_once[&id].clone())).collect();
            assert_eq!(seen, expected, "chunks of {chunk}");
        }
        assert_eq!(at_once[&4], rows[5], "the quoted cell's two lines");
        assert_eq!(report.raw(4), "", "texts read on demand are given by each_raw only");
    }

    #[test]
    fn a_file_cut_short_while_texts_are_read_on_demand_ends_the_walk_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let text = "at,event\n2026-10-07T00:33:00Z,round_started\n2026-10-07T00:34:00Z,round_finished\n";
        let (spec, timeline) = ledger(&dir, "ledger.csv", text);
        let report = on_demand(&spec, timeline);
        std::fs::write(&spec.path, "at,event\n2026-10-07T00:33:00Z,round_started\n").unwrap();
        let mut seen = Vec::new();
        let error = report
            .each_raw_in_chunks(
                &[0, 1],
                1,
                |e| e.to_string(),
                |id, raw| {
                    seen.push((id, raw.to_string()));
                    Ok(())
                },
            )
            .unwrap_err();
        assert_eq!(seen, [(0, "2026-10-07T00:33:00Z,round_started".to_string())], "the first chunk is written");
        assert!(error.contains("ledger.csv:3: the file is shorter than when it was read"), "{error}");
    }

    #[test]
    fn a_file_cut_short_while_a_streamed_format_is_written_is_its_input_error_not_a_write_error() {
        let dir = tempfile::tempdir().unwrap();
        let text = "at,event\n2026-10-07T00:33:00Z,round_started\n2026-10-07T00:34:00Z,round_finished\n";
        let (spec, timeline) = ledger(&dir, "ledger.csv", text);
        let report = on_demand(&spec, timeline);
        std::fs::write(&spec.path, "at,event\n2026-10-07T00:33:00Z,round_started\n").unwrap();
        for name in ["json", "jsonl", "timesketch"] {
            let renderer = crate::render::find(name).unwrap();
            let error = renderer.render(&report, &mut Vec::new()).unwrap_err();
            let error = crate::render::as_read_back_failure(error).expect("the read-back failure, whole");
            assert!(error.to_string().contains("ledger.csv:3: the file is shorter"), "{name}: {error}");
        }
        let written = std::io::Error::other("No space left on device");
        assert!(crate::render::as_read_back_failure(written).is_err(), "a write error stays a write error");
    }

    #[test]
    fn a_file_cut_short_since_it_was_read_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let (spec, timeline) = ledger(&dir, "ledger.csv", "at,event\n2026-10-07T00:33:00Z,round_started\n");
        std::fs::write(&spec.path, "at,event\n").unwrap();
        let error = read_back(&[spec], &timeline, &[0], &Progress::hidden()).unwrap_err().to_string();
        assert!(error.contains("ledger.csv:2: the file is shorter than when it was read"), "{error}");
    }

    #[test]
    fn a_record_that_now_runs_over_the_next_wanted_line_is_an_error_not_a_wrong_text() {
        let dir = tempfile::tempdir().unwrap();
        let rows = "at,run_id,event\n2026-10-07T00:33:00Z,r1,round_started\n2026-10-07T00:34:00Z,r1,round_finished\n";
        let (spec, timeline) = ledger(&dir, "ledger.csv", rows);
        // Rewritten since: the first record's quoted cell now takes the second's line.
        std::fs::write(&spec.path, "at,run_id,event\n2026-10-07T00:33:00Z,\"r1\nr2\",round_started\n").unwrap();
        let error = read_back(&[spec], &timeline, &[0, 1], &Progress::hidden()).unwrap_err().to_string();
        assert!(error.contains("ledger.csv:3: the line is not where it was"), "{error}");
    }
}
