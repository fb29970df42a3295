//! The rows of a log store's CSV export (CloudWatch Logs Insights, Kibana, OpenSearch Dashboards),
//! each with the physical lines it spans: a quoted message that holds line ends (a stack trace
//! kept in one event) makes a row of several lines, and the evidence cites the line it starts on.
//!
//! Rows are found by following the quotes line by line (as RFC 4180 and `csv_core` read them: a
//! quote opens a field only at its start, `""` inside one is a quote), so that a row is held
//! only up to `Context::max_line_bytes` and a longer one is passed over with its lines counted;
//! each row is then split into cells by `csv_core`.

use std::io::BufRead;

use crate::error::{Error, Result};

use super::Context;
use super::export_lines::{ExportLines, Line};

/// One row of the export.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Row {
    /// A row's text as written (quotes and all, its line ends as `\n`), starting on line `line`
    /// and spanning `lines` lines: `split` gives its cells.
    Text { line: u64, lines: u64, text: String },
    /// A row longer than the cap (or holding a line longer than it), passed over.
    TooLong { line: u64, lines: u64 },
    /// An empty line between rows.
    Blank { line: u64 },
}

pub struct CsvRows<'a> {
    lines: ExportLines<'a>,
    context: Context<'a>,
    delimiter: u8,
}

impl<'a> CsvRows<'a> {
    pub fn new(input: Box<dyn BufRead + Send>, context: Context<'a>, delimiter: u8) -> Self {
        CsvRows { lines: ExportLines::new(input, context), context, delimiter }
    }

    /// The delimiter from here on, once the header has told it.
    pub fn set_delimiter(&mut self, delimiter: u8) {
        self.delimiter = delimiter;
    }

    /// The next row, or `None` at the end. A quoted field still open at the end of the input is
    /// an error naming the line it opened on: the export was cut short.
    pub fn next_row(&mut self) -> Result<Option<Row>> {
        let (line, first) = match self.lines.next_line()? {
            None => return Ok(None),
            Some(Line::TooLong(line)) => return Ok(Some(Row::TooLong { line, lines: 1 })),
            Some(Line::Text(line, text)) if text.trim().is_empty() => return Ok(Some(Row::Blank { line })),
            Some(Line::Text(line, text)) => (line, text),
        };
        let mut quotes = Quotes::default();
        quotes.walk(&first, self.delimiter);
        let mut record = Some(first);
        let mut last = line;
        while quotes.open_at_line_end() {
            match self.lines.next_line()? {
                None => {
                    return Err(Error::input(
                        self.context.path,
                        Some(line),
                        format!(
                            "a quoted field opened at line {line} never closes before the end of the file: is the export truncated?"
                        ),
                    ));
                }
                Some(Line::TooLong(number)) => {
                    // Its quotes are unknown: the row is given up at it, and the next line read
                    // as the start of a row.
                    return Ok(Some(Row::TooLong { line, lines: number - line + 1 }));
                }
                Some(Line::Text(number, text)) => {
                    last = number;
                    quotes.walk(&text, self.delimiter);
                    record = record.filter(|held| held.len() + 1 + text.len() <= self.context.max_line_bytes).map(
                        |mut held| {
                            held.push('\n');
                            held.push_str(&text);
                            held
                        },
                    );
                }
            }
        }
        let lines = last - line + 1;
        Ok(Some(match record {
            Some(text) => Row::Text { line, lines, text },
            None => Row::TooLong { line, lines },
        }))
    }
}

/// Where a row's text is among its quotes, as `csv_core` reads them.
#[derive(Debug, Default)]
struct Quotes {
    quoted: bool,
    /// In a quoted field, the last byte was a quote: it closes the field unless another follows.
    after_quote: bool,
    /// The next byte starts a field (only there does a quote open one).
    mid_field: bool,
}

impl Quotes {
    fn walk(&mut self, line: &str, delimiter: u8) {
        for &byte in line.as_bytes() {
            if self.quoted {
                if self.after_quote {
                    self.after_quote = false;
                    if byte == b'"' {
                        continue;
                    }
                    self.quoted = false;
                } else {
                    self.after_quote = byte == b'"';
                    continue;
                }
            }
            if byte == delimiter {
                self.mid_field = false;
            } else if byte == b'"' && !self.mid_field {
                self.quoted = true;
                self.mid_field = true;
            } else {
                self.mid_field = true;
            }
        }
    }

    /// At the end of a line: whether the row goes on (a quoted field holds the line end).
    fn open_at_line_end(&mut self) -> bool {
        if self.quoted && self.after_quote {
            self.quoted = false;
            self.after_quote = false;
        }
        if !self.quoted {
            self.mid_field = false;
        }
        self.quoted
    }
}

/// A row's cells, unquoted.
pub fn split(record: &str, delimiter: u8) -> Vec<String> {
    let input = record.as_bytes();
    let mut reader = csv_core::ReaderBuilder::new().delimiter(delimiter).build();
    // Unquoting only shortens: the row fits in its own length, and it has at most one cell more
    // than it has bytes.
    let mut output = vec![0; input.len() + 1];
    let mut ends = vec![0; input.len() + 2];
    let (mut read, mut written, mut ended) = (0, 0, 0);
    loop {
        let (result, r, w, e) = reader.read_record(&input[read..], &mut output[written..], &mut ends[ended..]);
        read += r;
        written += w;
        ended += e;
        match result {
            // All of the row given: an empty input tells `csv_core` it ended.
            csv_core::ReadRecordResult::InputEmpty if read == input.len() && r == 0 => break,
            csv_core::ReadRecordResult::InputEmpty => {}
            _ => break,
        }
    }
    let mut cells = Vec::with_capacity(ended);
    let mut start = 0;
    for &end in &ends[..ended] {
        // Only ASCII quotes and delimiters are taken out of UTF-8 text: each cell is UTF-8.
        cells.push(String::from_utf8_lossy(&output[start..end]).into_owned());
        start = end;
    }
    cells
}

/// A header's cells as a CSV export writes them, for sniffing: the first line split at
/// `delimiter`, each cell unquoted and trimmed (a header's names hold no line ends).
pub fn header_cells(first_line: &str, delimiter: u8) -> Vec<String> {
    split(first_line.trim_start_matches('\u{feff}').trim_end(), delimiter)
        .into_iter()
        .map(|c| c.trim().to_string())
        .collect()
}

/// The delimiter of a header that names `needed` columns: `,`, else `;` or a tab (Kibana's
/// `csv:separator` may be either).
pub fn delimiter_for(first_line: &str, needed: &[&str]) -> Option<u8> {
    [b',', b';', b'\t'].into_iter().find(|&delimiter| {
        let cells = header_cells(first_line, delimiter);
        needed.iter().all(|name| cells.iter().any(|cell| cell == name))
    })
}

/// What one CSV export's envelope says of its columns; `pieces` does the rest.
pub trait CsvExport: Sync {
    /// The export, for messages: `a CloudWatch Logs Insights CSV export`.
    fn what(&self) -> &'static str;
    /// The header and a row as the tool writes them (`Envelope::example`).
    fn example(&self) -> &'static str;
    fn time_column(&self) -> &'static str;
    fn message_column(&self) -> &'static str;
    /// Columns kept as labels: (column, label), the first present one winning for a label.
    fn label_columns(&self) -> &'static [(&'static str, &'static str)];
    /// The time a row's time cell says, UTC: `Ok(None)` when the cell is empty or its time names
    /// no zone (a wall-clock time in a zone the file does not say is no evidence of the instant),
    /// `Err` with what was expected when it cannot be read.
    fn time(&self, cell: &str) -> std::result::Result<Option<chrono::DateTime<chrono::Utc>>, String>;
}

/// An export's header, as its columns' places.
struct Columns {
    width: usize,
    time: usize,
    message: usize,
    labels: Vec<(usize, &'static str)>,
}

/// The pieces of a CSV export: the header (ignored once it has named the columns), then a record
/// per row.
pub fn pieces<'a>(
    shape: &'a dyn CsvExport,
    input: Box<dyn BufRead + Send>,
    context: Context<'a>,
) -> Box<dyn Iterator<Item = Result<super::Piece>> + Send + 'a> {
    Box::new(CsvPieces {
        shape,
        rows: CsvRows::new(input, context, b','),
        context,
        columns: None,
        delimiter: b',',
        done: false,
    })
}

struct CsvPieces<'a> {
    shape: &'a dyn CsvExport,
    rows: CsvRows<'a>,
    context: Context<'a>,
    columns: Option<Columns>,
    delimiter: u8,
    done: bool,
}

impl CsvPieces<'_> {
    fn header(&mut self, line: u64, text: &str) -> Result<Columns> {
        let (time, message) = (self.shape.time_column(), self.shape.message_column());
        let Some(delimiter) = delimiter_for(text, &[time, message]) else {
            return Err(Error::input(
                self.context.path,
                Some(line),
                format!(
                    "expected a header naming the columns `{time}` and `{message}`: {} starts like\n{}",
                    self.shape.what(),
                    self.shape.example()
                ),
            ));
        };
        self.delimiter = delimiter;
        self.rows.set_delimiter(delimiter);
        let names = header_cells(text, delimiter);
        let place = |name: &str| names.iter().position(|cell| cell == name);
        let mut labels: Vec<(usize, &'static str)> = Vec::new();
        for &(column, label) in self.shape.label_columns() {
            if let Some(at) = place(column)
                && !labels.iter().any(|&(_, held)| held == label)
            {
                labels.push((at, label));
            }
        }
        Ok(Columns {
            width: names.len(),
            time: place(time).unwrap_or_default(),
            message: place(message).unwrap_or_default(),
            labels,
        })
    }

    fn record(&self, columns: &Columns, line: u64, lines: u64, text: &str) -> super::Piece {
        use super::{Labels, Piece, Record};
        let cells = split(text, self.delimiter);
        let rejected = |reason: String| Piece::Rejected { line, lines, reason };
        if cells.len() != columns.width {
            return rejected(format!(
                "expected {} cells, as the header names, found {}: {} rows look like\n{}",
                columns.width,
                cells.len(),
                self.shape.what(),
                self.shape.example()
            ));
        }
        let message = &cells[columns.message];
        if message.is_empty() {
            return Piece::Ignored { line, lines, reason: "a row with an empty message" };
        }
        let at = match self.shape.time(cells[columns.time].trim()) {
            Err(expected) => return rejected(expected),
            Ok(None) => None,
            Ok(Some(at)) => match crate::model::Moment::new(at) {
                Ok(at) => Some(at),
                Err(_) => {
                    return rejected(format!(
                        "time {} is outside the years 1677-2262 a timeline holds",
                        at.to_rfc3339()
                    ));
                }
            },
        };
        let mut labels = Labels::default();
        for &(at, label) in &columns.labels {
            labels.push(label, cells[at].trim());
        }
        Piece::Record(Record { line, lines, at, labels, message: message.clone() })
    }
}

impl Iterator for CsvPieces<'_> {
    type Item = Result<super::Piece>;

    fn next(&mut self) -> Option<Result<super::Piece>> {
        use super::Piece;
        if self.done {
            return None;
        }
        let row = match self.rows.next_row() {
            Ok(Some(row)) => row,
            Ok(None) => {
                self.done = true;
                return None;
            }
            Err(error) => {
                self.done = true;
                return Some(Err(error));
            }
        };
        Some(Ok(match row {
            Row::Blank { line } => Piece::Ignored { line, lines: 1, reason: "blank" },
            Row::TooLong { line, lines } => {
                Piece::Rejected { line, lines, reason: crate::ingest::io::lines::too_long(self.context.max_line_bytes) }
            }
            Row::Text { line, lines, text } => match self.columns.take() {
                None => match self.header(line, &text) {
                    Ok(columns) => {
                        self.columns = Some(columns);
                        Piece::Ignored { line, lines, reason: "the header" }
                    }
                    Err(error) => {
                        self.done = true;
                        return Some(Err(error));
                    }
                },
                Some(columns) => {
                    let piece = self.record(&columns, line, lines, &text);
                    self.columns = Some(columns);
                    piece
                }
            },
        }))
    }
}

/// Whether the head's first line is a header naming all of `names` (split at `,`, `;` or a
/// tab) and none of `not`.
pub fn sniff_header(head: &str, names: &[&str], not: &[&str]) -> bool {
    let first = head.trim_start_matches('\u{feff}').lines().next().unwrap_or("");
    delimiter_for(first, names).is_some_and(|delimiter| {
        let cells = header_cells(first, delimiter);
        !not.iter().any(|name| cells.iter().any(|cell| cell == name))
    })
}

/// A cell's time when it carries its offset (`2026-10-07T00:33:00.123Z`, `...+09:00`, `+0900`,
/// a space for the `T`): then it is an instant whatever zone the export was made in.
pub fn time_with_offset(cell: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    let parsed = chrono::DateTime::parse_from_rfc3339(cell)
        .or_else(|_| chrono::DateTime::parse_from_str(cell, "%Y-%m-%dT%H:%M:%S%.f%z"))
        .or_else(|_| chrono::DateTime::parse_from_str(cell, "%Y-%m-%d %H:%M:%S%.f%z"));
    parsed.ok().map(|at| at.with_timezone(&chrono::Utc))
}

/// A cell as a message quotes it: its first 80 characters.
pub fn quote(cell: &str) -> String {
    let mut chars = cell.chars();
    let head: String = chars.by_ref().take(80).collect();
    if chars.next().is_some() { format!("{head}...") } else { head }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn rows(text: &'static str, cap: usize) -> Result<Vec<Row>> {
        let context = Context { path: Path::new("export.csv"), max_line_bytes: cap };
        let mut rows = CsvRows::new(Box::new(text.as_bytes()), context, b',');
        let mut out = Vec::new();
        while let Some(row) = rows.next_row()? {
            out.push(row);
        }
        Ok(out)
    }

    /// The row, with its text split, for comparing.
    fn cells(line: u64, lines: u64, cells: &[&str]) -> (u64, u64, Vec<String>) {
        (line, lines, cells.iter().map(ToString::to_string).collect())
    }

    fn split_rows(text: &'static str, cap: usize) -> Vec<(u64, u64, Vec<String>)> {
        rows(text, cap)
            .unwrap()
            .into_iter()
            .map(|row| match row {
                Row::Text { line, lines, text } => (line, lines, split(&text, b',')),
                Row::TooLong { line, lines } => (line, lines, vec!["<too long>".to_string()]),
                Row::Blank { line } => (line, 1, vec!["<blank>".to_string()]),
            })
            .collect()
    }

    #[test]
    fn a_quoted_cell_with_line_ends_makes_one_row_of_several_lines() {
        let got = split_rows("a,b\n1,\"x\ny \"\"q\"\"\nz\"\n2,w\n", 1024);
        assert_eq!(got, vec![cells(1, 1, &["a", "b"]), cells(2, 3, &["1", "x\ny \"q\"\nz"]), cells(5, 1, &["2", "w"])]);
    }

    #[test]
    fn a_quote_inside_an_unquoted_cell_opens_nothing() {
        let got = split_rows("a,b\"c\n2,w\n", 1024);
        assert_eq!(got, vec![cells(1, 1, &["a", "b\"c"]), cells(2, 1, &["2", "w"])]);
    }

    #[test]
    fn a_quote_closed_at_a_line_end_ends_the_row() {
        let got = split_rows("\"a\nb\"\n\"c\"\n", 1024);
        assert_eq!(got, vec![cells(1, 2, &["a\nb"]), cells(3, 1, &["c"])]);
    }

    #[test]
    fn blank_lines_and_crlf() {
        let got = split_rows("a,b\r\n\r\n1,2\r\n", 1024);
        assert_eq!(got, vec![cells(1, 1, &["a", "b"]), cells(2, 1, &["<blank>"]), cells(3, 1, &["1", "2"])]);
    }

    #[test]
    fn a_row_past_the_cap_is_passed_over_with_its_lines() {
        let got = split_rows("a,b\n1,\"xxxx\nxxxx\nxxxx\"\n2,w\n", 10);
        assert_eq!(got, vec![cells(1, 1, &["a", "b"]), cells(2, 3, &["<too long>"]), cells(5, 1, &["2", "w"])]);
    }

    #[test]
    fn an_open_quote_at_the_end_is_an_error_naming_its_line() {
        let error = rows("a,b\n1,\"never\ncloses\n", 1024).unwrap_err().to_string();
        assert!(error.contains("export.csv:2") && error.contains("never closes"), "{error}");
    }

    #[test]
    fn delimiters_are_found_from_the_header() {
        assert_eq!(delimiter_for("\"@timestamp\";message", &["@timestamp", "message"]), Some(b';'));
        assert_eq!(delimiter_for("\u{feff}\"@timestamp\",message\r", &["@timestamp", "message"]), Some(b','));
        assert_eq!(delimiter_for("time,msg", &["@timestamp", "message"]), None);
    }
}
