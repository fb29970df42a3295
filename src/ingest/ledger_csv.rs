//! Run ledger as CSV (or TSV) with a header row.
//!
//! A "line" in the input summary is a CSV record (a quoted field may span physical lines; the
//! line reported for a record is the physical line it starts on).

use std::io::BufRead;

use crate::error::{Error, Result};
use std::borrow::Cow;

use crate::model::{Event, InputSummary, Origin, Raw};

use super::ledger::{self, Columns, FIELDS, FieldId, Outcome};
use super::recent::RecentTexts;
use super::{EventFormat, SourceKind, SourceSpec};

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

    fn sniff(&self, first_line: &str) -> bool {
        !first_line.starts_with('{') && (first_line.contains(',') || first_line.contains('\t'))
    }

    fn read(
        &self,
        spec: &SourceSpec,
        source: u32,
        mut input: Box<dyn BufRead + Send>,
        events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<()> {
        let delimiter = detect_delimiter(spec, &mut input);
        let mut reader =
            csv::ReaderBuilder::new().delimiter(delimiter).has_headers(false).flexible(false).from_reader(input);
        let mut record = csv::ByteRecord::new();
        let mut recent = RecentTexts::default();
        // Per ledger field, the position of its column (resolved once from the header).
        let mut columns: Option<(Columns, Vec<Option<usize>>)> = None;
        let separator = if delimiter == b'\t' { "\t" } else { "," };
        loop {
            let line = reader.position().line();
            match reader.read_byte_record(&mut record) {
                Ok(false) => break,
                Ok(true) => {}
                Err(error) => return Err(csv_error(spec, line, &error)),
            }
            let position = record.position().cloned().unwrap_or_else(csv::Position::new);
            let line = position.line();
            let cells = decode(spec, line, &record)?;
            summary.lines += 1;
            let Some((columns, index)) = &columns else {
                let header: Vec<String> = cells.iter().map(|c| c.trim().to_string()).collect();
                let resolved = Columns::resolve(spec, &header, line)?;
                let index = FIELDS
                    .iter()
                    .map(|field| {
                        let column = resolved.column(field.name)?;
                        header.iter().position(|name| name == column)
                    })
                    .collect();
                columns = Some((resolved, index));
                summary.ignore("header");
                continue;
            };
            let get = |id: FieldId| index[id as usize].and_then(|i| cells.get(i)).map(|cell| Cow::Borrowed(*cell));
            let raw = if spec.rereadable {
                // The record's bytes up to the next record; the line ending is dropped when read back.
                let len = u32::try_from(reader.position().byte() - position.byte()).unwrap_or(u32::MAX);
                Raw::Span { offset: position.byte(), len }
            } else {
                Raw::text(&cells.join(separator))
            };
            let origin = Origin { channel: crate::model::Channel::Ledger, source, line, raw };
            match ledger::record_to_event(spec, columns, &get, &mut recent, origin)? {
                Outcome::Event(event) => {
                    summary.used();
                    events.push(event);
                }
                Outcome::Rejected(reason) => summary.reject(line, reason),
            }
        }
        Ok(())
    }
}

fn detect_delimiter(spec: &SourceSpec, input: &mut Box<dyn BufRead + Send>) -> u8 {
    let name = spec.path.to_string_lossy().to_lowercase();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    if std::path::Path::new(name).extension().is_some_and(|ext| ext == "tsv") {
        return b'\t';
    }
    let head = input.fill_buf().unwrap_or_default();
    let first = &head[..head.iter().position(|&b| b == b'\n').unwrap_or(head.len())];
    if first.contains(&b'\t') && !first.contains(&b',') { b'\t' } else { b',' }
}

/// The cells of a record as text, borrowed from it: the record is checked once, not per cell.
fn decode<'r>(spec: &SourceSpec, line: u64, record: &'r csv::ByteRecord) -> Result<Vec<&'r str>> {
    let bytes = record.as_slice();
    if memchr::memchr(0, bytes).is_some() {
        return Err(binary(spec, line));
    }
    let text = std::str::from_utf8(bytes).map_err(|_| binary(spec, line))?;
    // Cells are contiguous in the record and split at ASCII delimiters, so every cell boundary
    // is a character boundary of the checked text.
    let mut cells = Vec::with_capacity(record.len());
    let mut start = 0;
    for cell in record {
        cells.push(&text[start..start + cell.len()]);
        start += cell.len();
    }
    Ok(cells)
}

fn binary(spec: &SourceSpec, line: u64) -> Error {
    Error::input(&spec.path, Some(line), "binary data (not UTF-8 text): expected a CSV ledger; is this the right file?")
}

fn csv_error(spec: &SourceSpec, line: u64, error: &csv::Error) -> Error {
    match error.kind() {
        csv::ErrorKind::UnequalLengths { pos, expected_len, len } => Error::input(
            &spec.path,
            Some(pos.as_ref().map_or(line, csv::Position::line)),
            format!("row has {len} fields but the header has {expected_len}: expected one value per header column"),
        ),
        csv::ErrorKind::Io(io) => Error::input(&spec.path, Some(line), format!("cannot read: {io}")),
        _ => Error::input(&spec.path, Some(line), format!("not valid CSV: {error}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::{SourceKind, SourceSpec};
    use crate::model::EventKind;
    use std::path::PathBuf;

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
}
