//! Reading back the lines a report shows, for events that kept only where their text is
//! (`Raw::Span`): the text of millions of ledger rows is not held in memory for the few a report
//! cites.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read};

use crate::error::{Error, Result};
use crate::model::timeline::EventId;
use crate::model::{Raw, Timeline};

use super::SourceSpec;

/// The text of each of `ids` whose raw text is a span of its source file, by event id. The
/// sources are the ones the timeline was read from, in the same order.
pub fn read_back(sources: &[SourceSpec], timeline: &Timeline, ids: &[EventId]) -> Result<HashMap<EventId, String>> {
    let mut by_source: HashMap<u32, Vec<(u64, u32, EventId)>> = HashMap::new();
    for &id in ids {
        let origin = &timeline.get(id).origin;
        if let Raw::Span { offset, len } = origin.raw {
            by_source.entry(origin.source).or_default().push((offset, len, id));
        }
    }
    let mut texts = HashMap::new();
    for (source, mut spans) in by_source {
        let spec = &sources[source as usize];
        let io = |source| Error::Io { path: spec.path.clone(), source };
        let file = File::open(&spec.path).map_err(io)?;
        let size = file.metadata().map_err(io)?.len();
        // In file order through one buffer: reading back a whole timeline is one forward pass,
        // not a seek and a read per line.
        spans.sort_unstable();
        let mut file = BufReader::with_capacity(1 << 20, file);
        let mut position = 0u64;
        let mut buffer = Vec::new();
        for (offset, len, id) in spans {
            if offset + u64::from(len) > size {
                return Err(Error::input(
                    &spec.path,
                    Some(timeline.get(id).origin.line),
                    "the file is shorter than when it was read: it changed during the run",
                ));
            }
            let skip = i64::try_from(offset).unwrap_or(i64::MAX) - i64::try_from(position).unwrap_or(i64::MAX);
            file.seek_relative(skip).map_err(io)?;
            buffer.resize(len as usize, 0);
            file.read_exact(&mut buffer).map_err(io)?;
            position = offset + u64::from(len);
            let text = String::from_utf8_lossy(&buffer);
            // With CRLF endings the CSV reader places a record after the \r, at the \n.
            texts.insert(id, text.trim_matches(['\n', '\r']).to_string());
        }
    }
    Ok(texts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::{SourceKind, read_sources};
    use crate::progress::Progress;

    #[test]
    fn shown_rows_are_read_back_verbatim_from_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.csv");
        let rows = [
            "at,run_id,event,item,detail",
            "2026-10-07T00:33:00Z,r1,round_started,,",
            "2026-10-07T00:54:05.700Z,r1,item_selected,PR-4412,\"picked, twice\"",
        ];
        std::fs::write(&path, rows.join("\r\n") + "\r\n").unwrap();
        let spec = SourceSpec::new(SourceKind::Ledger, path, Some(chrono_tz::UTC), "--ledger-tz".into());
        let (events, _) = read_sources(std::slice::from_ref(&spec), &Progress::hidden()).unwrap();
        let timeline = Timeline::new(events);
        assert!(timeline.events().iter().all(|e| matches!(e.origin.raw, Raw::Span { .. })));
        let texts = read_back(&[spec], &timeline, &[0, 1]).unwrap();
        assert_eq!(texts[&0], rows[1]);
        assert_eq!(texts[&1], rows[2], "the record as written, quotes and all, without its line ending");
    }

    #[test]
    fn a_file_cut_short_since_it_was_read_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.csv");
        std::fs::write(&path, "at,event\n2026-10-07T00:33:00Z,round_started\n").unwrap();
        let spec = SourceSpec::new(SourceKind::Ledger, path.clone(), None, "--ledger-tz".into());
        let (events, _) = read_sources(std::slice::from_ref(&spec), &Progress::hidden()).unwrap();
        let timeline = Timeline::new(events);
        std::fs::write(&path, "at,event\n").unwrap();
        let error = read_back(&[spec], &timeline, &[0]).unwrap_err().to_string();
        assert!(error.contains("ledger.csv:2: the file is shorter than when it was read"), "{error}");
    }
}
