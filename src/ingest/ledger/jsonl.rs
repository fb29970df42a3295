//! Run ledger as JSON Lines: one object per line, keys named like CSV columns.

use std::borrow::Cow;
use std::io::BufRead;

use serde_json::Value;

use crate::error::Result;
use crate::model::{Event, InputSummary, Origin};

use crate::ingest::io::lines::Lines;
use crate::ingest::io::recent::RecentTexts;
use crate::ingest::ledger::{self, Columns, FieldId, Outcome};
use crate::ingest::{EventFormat, SourceKind, SourceSpec};

pub struct LedgerJsonl;

impl EventFormat for LedgerJsonl {
    fn name(&self) -> &'static str {
        "jsonl"
    }

    fn kind(&self) -> SourceKind {
        SourceKind::Ledger
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["jsonl", "ndjson"]
    }

    fn sniff(&self, first_line: &str) -> bool {
        first_line.starts_with('{')
    }

    fn read(
        &self,
        spec: &SourceSpec,
        source: u16,
        input: Box<dyn BufRead + Send>,
        events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<()> {
        let mut lines = Lines::new(input, spec.max_line_bytes);
        let mut validated = false;
        let mut recent = RecentTexts::default();
        while let Some((line, text)) = lines.next_line(&spec.path, summary)? {
            summary.lines += 1;
            if text.trim().is_empty() {
                summary.ignore("blank");
                continue;
            }
            let object = crate::ingest::io::lines::json_object(&spec.path, line, text, "one ledger record per line")?;
            let keys: Vec<String> = object.keys().cloned().collect();
            if !validated {
                // The first record shows whether the mapping fits at all: a missing required
                // field there is a mapping error, later it is one incomplete record.
                Columns::resolve(spec, &keys, line)?;
                validated = true;
            }
            let columns = &Columns::present(spec, &keys);
            let get = |id: FieldId| columns.column(id.name()).and_then(|key| object.get(key)).and_then(scalar);
            let origin =
                Origin { channel: crate::model::Channel::Ledger, source, line: crate::ingest::line_of(spec, line)? };
            match ledger::record_to_event(
                spec,
                columns,
                get,
                &mut recent,
                &mut summary.folds,
                &mut summary.naive_times,
                origin,
            )? {
                Outcome::Event(event) => {
                    summary.used();
                    summary.texts.keep(event.origin().line, text);
                    events.push(event);
                }
                Outcome::Rejected(reason) => summary.reject(line, reason),
                Outcome::OutsideWindow(at, keys) => summary.outside(at, keys),
            }
        }
        Ok(())
    }
}

fn scalar(value: &Value) -> Option<Cow<'_, str>> {
    match value {
        Value::String(text) => Some(Cow::Borrowed(text)),
        Value::Number(number) => Some(Cow::Owned(number.to_string())),
        Value::Bool(flag) => Some(Cow::Owned(flag.to_string())),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EventKind;
    use std::path::PathBuf;

    #[test]
    fn objects_map_like_csv_columns_and_epoch_millis_need_no_zone() {
        let spec = SourceSpec::new(SourceKind::Ledger, PathBuf::from("ledger.jsonl"), None, "--ledger-tz".into());
        let text = "{\"ts\":1791333183120,\"event\":\"round_started\",\"run_id\":\"r1\",\"job_id\":\"repeat:s:1\"}\n\n{\"ts\":\"oops\",\"event\":\"started\"}\n";
        let mut events = Vec::new();
        let mut summary = InputSummary::new("ledger.jsonl", "ledger", "jsonl", None);
        let error = LedgerJsonl
            .read(&spec, 0, Box::new(std::io::Cursor::new(text.to_string())), &mut events, &mut summary)
            .unwrap_err()
            .to_string();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].kind, EventKind::RoundStarted);
        assert_eq!(events[0].at().to_rfc3339(), "2026-10-07T00:33:03.120+00:00");
        assert!(error.starts_with("ledger.jsonl:3: column 'ts': malformed timestamp"), "{error}");
    }
}
