//! BullMQ 6 on PostgreSQL (`createPostgresBackend`, from bullmq 6.0.0): the tables of its schema
//! (`bullmq` unless the connection names another), exported with psql.
//!
//! The backend keeps what the Redis backend spreads over keys in three tables, and they are read
//! as the Redis records they stand for, so that every detector reads them unchanged:
//! - `event` (`events.rs`, kind `bullmq-events`): the events stream, one row an event, its time
//!   `created_at_ms` the **database's** clock (`clock_timestamp()` in `publish_event`);
//! - `job` (`jobs.rs`, kind `bullmq-jobs`): one row a job, the job hash's fields as columns, its
//!   times the workers' clocks (`Date.now()` passed to the SQL functions);
//! - `meta` (`meta.rs`, kind `bullmq-jobs`, as Redis' `:meta` hash is read in a job-hash dump):
//!   the version of the last `Queue` opened and the last effective stalled check.
//!
//! Each table is read from the two exports psql makes: `\copy (SELECT …) TO … CSV HEADER`, and
//! JSON, one `row_to_json` object a line or psql's `json_agg` array (`psql -At`: one element a
//! line). The queues of one schema share its tables: the `queue` column tells them apart.
//! Source: the migrations `0001_schema.sql` and `0002_functions.sql` of bullmq 6.7.0
//! (`src/postgres/migrations/`), see docs/inputs/postgres.md.

pub mod events;
pub mod jobs;
pub mod meta;

/// The tables' readers, in the order of `bullmq::FORMATS` (and the `postgres_tables` fuzz
/// target's selector byte).
pub const FORMATS: &[&dyn EventFormat] = &[&events::PgEventTable, &jobs::PgJobTable, &meta::PgMetaTable];

use std::io::BufRead;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::ingest::io::lines::Lines;
use crate::ingest::{EventFormat, SourceSpec};
use crate::model::InputSummary;

/// The store the evidence is from: PostgreSQL when any source is one of the backend's tables
/// (its stall model is then the one the lock arithmetic uses, `model::QueueBackend`).
pub fn backend_of(inputs: &[InputSummary]) -> crate::model::params::QueueBackend {
    if inputs.iter().any(|input| FORMATS.iter().any(|table| table.name() == input.format)) {
        crate::model::params::QueueBackend::Postgres
    } else {
        crate::model::params::QueueBackend::Redis
    }
}

/// One table's columns: those read (and required among them), those known and not needed.
pub struct Table {
    /// The table's name in the schema, for messages.
    pub name: &'static str,
    /// Columns without which a row says nothing.
    pub required: &'static [&'static str],
    /// Columns read when present.
    pub read: &'static [&'static str],
    /// The table's other columns (bullmq 6.7.0), not needed to place its events.
    pub known: &'static [&'static str],
}

impl Table {
    fn is_known(&self, column: &str) -> bool {
        self.required.contains(&column) || self.read.contains(&column) || self.known.contains(&column)
    }

    /// The table's columns a CSV header or a JSON row holds: an error naming the required ones it
    /// lacks; a note naming the ones the table does not have (an export of a later schema, or a
    /// `SELECT` that adds its own).
    fn check_columns<'a>(
        &self,
        spec: &SourceSpec,
        line: u64,
        columns: impl Iterator<Item = &'a str> + Clone,
        summary: &mut InputSummary,
    ) -> Result<()> {
        let missing: Vec<&str> =
            self.required.iter().copied().filter(|name| !columns.clone().any(|c| c == *name)).collect();
        if !missing.is_empty() {
            return Err(Error::input(
                &spec.path,
                Some(line),
                format!(
                    "a row of bullmq.{} without the column(s) {}: expected at least {} (docs: leasetrace docs inputs/postgres)",
                    self.name,
                    missing.join(", "),
                    self.required.join(", ")
                ),
            ));
        }
        // A hostile header may name a million columns: the note names the first few.
        let unknown: Vec<String> = columns.filter(|c| !self.is_known(c)).take(10).map(|c| cut(c, 40)).collect();
        // Said once a source (JSON rows may each have keys of their own: the first that has any).
        if !unknown.is_empty() && !summary.notes.iter().any(|n| n.starts_with(UNKNOWN_COLUMNS)) {
            summary.notes.push(format!(
                "{UNKNOWN_COLUMNS}{} are not columns of bullmq.{} in bullmq 6.7.0: not read",
                unknown.join(", "),
                self.name
            ));
        }
        Ok(())
    }
}

/// How the note on columns a table does not have begins.
const UNKNOWN_COLUMNS: &str = "column(s) ";

/// At most `max` characters of a text from the export, for a message.
pub(crate) fn cut(text: &str, max: usize) -> String {
    let mut out: String = text.chars().filter(|c| !c.is_control()).take(max).collect();
    if text.chars().count() > max {
        out.push('…');
    }
    out
}

/// One row of a table: its cells by column (`None` for SQL NULL), with where it was read.
pub struct Row {
    pub cells: Vec<(String, Option<String>)>,
    /// Its first line, and how many lines it spans (a CSV cell may hold line ends).
    pub line: u64,
    pub span: u64,
    pub raw: String,
}

impl Row {
    pub fn get(&self, column: &str) -> Option<&str> {
        self.cells.iter().find(|(name, _)| name == column).and_then(|(_, value)| value.as_deref())
    }
}

/// Whether a CSV header line is one of `table`'s: it names all its required columns.
pub fn csv_header_is(first_line: &str, table: &Table) -> bool {
    let Some(cells) = split_csv(first_line) else { return false };
    table.required.iter().all(|name| cells.iter().any(|cell| cell == name))
}

/// Whether a JSON line is a row of `table`: an object (or the first element of psql's `json_agg`
/// array) with the required columns as keys.
pub fn json_row_is(first_line: &str, table: &Table) -> bool {
    let text = first_line.trim_start().trim_start_matches('[').trim_start();
    text.starts_with('{') && table.required.iter().all(|name| text.contains(&format!("\"{name}\":")))
}

/// Reads every row of a CSV or JSON export of `table` (told apart by the first character), each
/// handed to `row`, which says what it became: lines used, or ignored with a reason.
pub fn read_rows(
    spec: &SourceSpec,
    input: Box<dyn BufRead + Send>,
    table: &Table,
    summary: &mut InputSummary,
    mut row: impl FnMut(&Row, &mut InputSummary) -> Result<()>,
) -> Result<()> {
    let mut lines = Lines::new(input, spec.max_line_bytes);
    let mut header: Option<Vec<String>> = None;
    let mut json: Option<bool> = None;
    // A CSV record whose quoted cell holds line ends, while it is read: its lines and first line.
    let mut pending = String::new();
    let mut pending_from = 0;
    let mut pending_lines = 0;
    let mut open_quote = false;
    while let Some((line, text)) = lines.next_line(&spec.path, summary)? {
        summary.lines += 1;
        if pending.is_empty() && text.trim().is_empty() {
            summary.ignore("blank");
            continue;
        }
        let is_json = *json.get_or_insert_with(|| matches!(text.trim_start().chars().next(), Some('{' | '[')));
        if is_json {
            json_line(spec, line, text, table, summary, &mut row)?;
            continue;
        }
        if pending.is_empty() {
            pending_from = line;
        } else {
            pending.push('\n');
        }
        pending.push_str(text);
        pending_lines += 1;
        // Counted per line, not over the record: a hostile cell of a million lines stays linear.
        open_quote ^= memchr::memchr_iter(b'"', text.as_bytes()).count() % 2 == 1;
        if pending.len() > spec.max_line_bytes {
            return Err(Error::input(
                &spec.path,
                Some(pending_from),
                format!(
                    "a CSV record of bullmq.{} longer than {} (a quote opened and never closed?)",
                    table.name,
                    crate::ingest::io::lines::size(spec.max_line_bytes)
                ),
            ));
        }
        // A quoted cell still open: the record goes on on the next line.
        if open_quote {
            continue;
        }
        let record = std::mem::take(&mut pending);
        let span = std::mem::take(&mut pending_lines);
        let cells = split_csv(&record).ok_or_else(|| {
            Error::input(
                &spec.path,
                Some(pending_from),
                format!("not a CSV record of bullmq.{}: a quote inside a cell that is not quoted", table.name),
            )
        })?;
        let Some(names) = &header else {
            table.check_columns(spec, pending_from, cells.iter().map(String::as_str), summary)?;
            // A quoted column name may hold a line end: the header is every line it took.
            for _ in 0..span {
                summary.ignore("header");
            }
            header = Some(cells);
            continue;
        };
        if cells.len() != names.len() {
            return Err(Error::input(
                &spec.path,
                Some(pending_from),
                format!("{} cells, but the header names {} columns", cells.len(), names.len()),
            ));
        }
        // psql writes SQL NULL as an empty cell (an empty text is `""`, the same once unquoted:
        // no column read here tells an empty text from none).
        let cells = names.iter().cloned().zip(cells.into_iter().map(|c| (!c.is_empty()).then_some(c))).collect();
        let parsed = Row { cells, line: pending_from, span, raw: record };
        row(&parsed, summary)?;
    }
    if !pending.is_empty() {
        return Err(Error::input(
            &spec.path,
            Some(pending_from),
            format!("the export ends inside a quoted cell of bullmq.{}: is the file cut short?", table.name),
        ));
    }
    if header.is_none() && json == Some(false) {
        return Err(Error::input(
            &spec.path,
            None,
            format!("no header line: expected psql's CSV HEADER of bullmq.{}", table.name),
        ));
    }
    Ok(())
}

/// One line of a JSON export: a `row_to_json` object, or an element of psql's `json_agg` array
/// (`[{…},` then ` {…},` … ` {…}]`), or the array's own bracket.
fn json_line(
    spec: &SourceSpec,
    line: u64,
    text: &str,
    table: &Table,
    summary: &mut InputSummary,
    row: &mut impl FnMut(&Row, &mut InputSummary) -> Result<()>,
) -> Result<()> {
    let mut body = text.trim();
    body = body.strip_prefix('[').unwrap_or(body).trim_start();
    body = body.strip_suffix(']').unwrap_or(body).trim_end();
    body = body.strip_suffix(',').unwrap_or(body).trim_end();
    if body.is_empty() {
        summary.ignore("JSON array bracket");
        return Ok(());
    }
    let expected = format!(
        "one row of bullmq.{} a line (psql -At of row_to_json, or of json_agg); a pretty-printed array reads as one row a line once written with jq -c '.[]'",
        table.name
    );
    let object: Map<String, Value> = crate::ingest::io::lines::json_object(&spec.path, line, body, &expected)?;
    table.check_columns(spec, line, object.keys().map(String::as_str), summary)?;
    let cells = object
        .into_iter()
        .map(|(name, value)| {
            let value = match value {
                Value::Null => None,
                Value::String(text) => Some(text),
                other => Some(other.to_string()),
            };
            (name, value)
        })
        .collect();
    row(&Row { cells, line, span: 1, raw: body.to_string() }, summary)
}

/// The cells of one CSV record (RFC 4180, as psql writes it: `"` quotes a cell, `""` is a quote
/// in it), or `None` when a quote stands inside a cell that is not quoted.
fn split_csv(record: &str) -> Option<Vec<String>> {
    let mut cells = Vec::new();
    let mut chars = record.chars().peekable();
    loop {
        let mut cell = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        cell.push('"');
                    }
                    Some('"') => break,
                    Some(c) => cell.push(c),
                    None => return None,
                }
            }
            match chars.next() {
                Some(',') => cells.push(cell),
                None => {
                    cells.push(cell);
                    return Some(cells);
                }
                Some(_) => return None,
            }
        } else {
            loop {
                match chars.next() {
                    Some(',') => break,
                    Some('"') => return None,
                    Some(c) => cell.push(c),
                    None => {
                        cells.push(cell);
                        return Some(cells);
                    }
                }
            }
            cells.push(cell);
        }
    }
}

/// Epoch milliseconds as BullMQ and `publish_event` write them, or an error naming the row.
pub(crate) fn millis(spec: &SourceSpec, row: &Row, column: &str) -> Result<Option<crate::model::Moment>> {
    let Some(text) = row.get(column) else { return Ok(None) };
    let bad = |why: &str| Error::input(&spec.path, Some(row.line), format!("{column} is '{}': {why}", cut(text, 40)));
    let value: i64 = text.parse().map_err(|_| bad("expected epoch milliseconds"))?;
    // `Date.now()` and `clock_timestamp()` in milliseconds: 13 digits since 2001.
    if value < 1_000_000_000_000 {
        return Err(bad("before 2001-09-09 as epoch milliseconds: BullMQ writes 13 digits; is the value in seconds?"));
    }
    chrono::DateTime::from_timestamp_millis(value)
        .and_then(|at| crate::time::moment(at).ok())
        .map(Some)
        .ok_or_else(|| bad("outside the years 1677-2262 that a timeline holds"))
}

/// The queue a row is of, and whether it is the one the source is read for (`queue = "…"` in the
/// manifest, `--queue`): the queues of a schema share its tables.
pub(crate) fn queue_of<'a>(spec: &SourceSpec, row: &'a Row) -> (Option<&'a str>, bool) {
    let queue = row.get("queue");
    let wanted = match (&spec.queue, queue) {
        (Some(want), Some(queue)) => want == queue,
        _ => true,
    };
    (queue, wanted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_records_split_as_psql_writes_them() {
        assert_eq!(
            split_csv(r#"pr-review,6,completed,"{""prev"": ""active""}",1796548783256"#).unwrap(),
            ["pr-review", "6", "completed", r#"{"prev": "active"}"#, "1796548783256"]
        );
        assert_eq!(split_csv("a,,b").unwrap(), ["a", "", "b"]);
        assert_eq!(split_csv(r#""a""#).unwrap(), ["a"]);
        assert_eq!(split_csv("a,").unwrap(), ["a", ""]);
        assert!(split_csv(r#"a"b,c"#).is_none());
        assert!(split_csv(r#""a"b"#).is_none());
        assert!(split_csv(r#""open"#).is_none());
    }
}
