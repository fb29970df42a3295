//! Reading back the lines a report shows, for events that kept only where their text starts
//! (`Raw::span`): the text of millions of ledger rows is not held in memory for the few a report
//! cites.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader};

use crate::error::{Error, Result};
use crate::model::Timeline;
use crate::model::report::ReadBack;
use crate::model::timeline::EventId;

use super::{SourceKind, SourceSpec};

/// The text of each of `ids` whose raw text is a span of its source file, by event id. The
/// sources are the ones the timeline was read from, in the same order.
///
/// A span is where its line starts: the text is that line, without its line ending. For a CSV
/// ledger it is the record, which a quoted cell may carry over line endings.
pub fn read_back(sources: &[SourceSpec], timeline: &Timeline, ids: &[EventId]) -> Result<HashMap<EventId, String>> {
    let texts = read_in_order(sources, timeline, ids)?;
    Ok(ids.iter().copied().zip(texts).filter_map(|(id, text)| Some((id, text?))).collect())
}

/// The sources of a timeline, read back a chunk of events at a time while a whole timeline is
/// written (`RawTexts::OnDemand`): the lines of millions of events are never held at once.
#[derive(Debug)]
pub struct SourceFiles(pub Vec<SourceSpec>);

impl ReadBack for SourceFiles {
    fn read(&self, timeline: &Timeline, ids: &[EventId]) -> Result<Vec<Option<String>>> {
        read_in_order(&self.0, timeline, ids)
    }
}

/// `read_back`, as a list in the order of `ids` (`None` where the text is kept in memory).
fn read_in_order(sources: &[SourceSpec], timeline: &Timeline, ids: &[EventId]) -> Result<Vec<Option<String>>> {
    let mut by_source: HashMap<u16, Vec<(u64, usize)>> = HashMap::new();
    for (place, &id) in ids.iter().enumerate() {
        let origin = timeline.get(id).origin();
        if let Some(offset) = origin.raw.offset() {
            by_source.entry(origin.source).or_default().push((offset, place));
        }
    }
    let mut texts = vec![None; ids.len()];
    for (source, mut spans) in by_source {
        let spec = &sources[usize::from(source)];
        let io = |source| Error::Io { path: spec.path.clone(), source };
        let file = File::open(&spec.path).map_err(io)?;
        let size = file.metadata().map_err(io)?.len();
        let mut file = BufReader::with_capacity(1 << 20, file);
        let delimiter = (spec.kind == SourceKind::Ledger).then(|| super::ledger_csv::detect_delimiter(spec, &mut file));
        // In file order through one buffer: reading back a whole timeline is one forward pass,
        // not a seek and a read per line.
        spans.sort_unstable();
        let mut position = 0u64;
        let mut buffer = Vec::new();
        for (offset, place) in spans {
            if offset >= size {
                return Err(Error::input(
                    &spec.path,
                    Some(u64::from(timeline.get(ids[place]).origin().line)),
                    "the file is shorter than when it was read: it changed during the run",
                ));
            }
            let skip = i64::try_from(offset).unwrap_or(i64::MAX) - i64::try_from(position).unwrap_or(i64::MAX);
            file.seek_relative(skip).map_err(io)?;
            buffer.clear();
            position = offset + read_record(&mut file, delimiter, &mut buffer).map_err(io)?;
            let text = String::from_utf8_lossy(&buffer);
            texts[place] = Some(text.trim_end_matches(['\n', '\r']).to_string());
        }
    }
    Ok(texts)
}

/// Reads the line at the reader's position into `out`, or with a CSV `delimiter`, the record
/// (the lines up to the one that ends its last quoted cell). Returns the bytes read.
fn read_record(file: &mut impl BufRead, delimiter: Option<u8>, out: &mut Vec<u8>) -> std::io::Result<u64> {
    use csv_core::ReadRecordResult;
    let mut read = file.read_until(b'\n', out)? as u64;
    let Some(delimiter) = delimiter else { return Ok(read) };
    if memchr::memchr(b'"', out).is_none() {
        return Ok(read);
    }
    // `csv_core`, the parser the ledger was read with, says which line ending ends the record.
    let mut parser = csv_core::ReaderBuilder::new().delimiter(delimiter).build();
    let (mut cells, mut ends) = (vec![0; out.len()], vec![0; 64]);
    let mut fed = 0;
    loop {
        let (result, consumed, _, _) = parser.read_record(&out[fed..], &mut cells, &mut ends);
        fed += consumed;
        match result {
            ReadRecordResult::Record | ReadRecordResult::End => return Ok(read),
            ReadRecordResult::OutputFull => cells.resize(cells.len() * 2 + 1, 0),
            ReadRecordResult::OutputEndsFull => ends.resize(ends.len() * 2, 0),
            ReadRecordResult::InputEmpty => {
                let more = file.read_until(b'\n', out)?;
                if more == 0 {
                    // An empty input tells `csv_core` that the input has ended.
                    parser.read_record(&[], &mut cells, &mut ends);
                    return Ok(read);
                }
                read += more as u64;
            }
        }
    }
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
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let spec = SourceSpec::new(SourceKind::Ledger, path, Some(chrono_tz::UTC), "--ledger-tz".into());
        let (events, _) = read_sources(std::slice::from_ref(&spec), &Progress::hidden()).unwrap();
        (spec, Timeline::new(events))
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
        assert!(timeline.events().iter().all(|e| e.origin().raw.offset().is_some()));
        let texts = read_back(&[spec], &timeline, &[0, 1]).unwrap();
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
        let texts = read_back(&[spec], &timeline, &[2, 0, 1]).unwrap();
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
            assumptions: Vec::new(),
            timeline,
            findings: Vec::new(),
            raw_texts: RawTexts::OnDemand(Box::new(SourceFiles(vec![spec.clone()]))),
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
        let at_once = read_back(std::slice::from_ref(&spec), &timeline, &ids).unwrap();
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
    fn a_file_cut_short_since_it_was_read_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let (spec, timeline) = ledger(&dir, "ledger.csv", "at,event\n2026-10-07T00:33:00Z,round_started\n");
        std::fs::write(&spec.path, "at,event\n").unwrap();
        let error = read_back(&[spec], &timeline, &[0]).unwrap_err().to_string();
        assert!(error.contains("ledger.csv:2: the file is shorter than when it was read"), "{error}");
    }
}
