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
    /// A row's cells, unquoted, starting on line `line` and spanning `lines` lines.
    Cells { line: u64, lines: u64, cells: Vec<String> },
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
            Some(record) => Row::Cells { line, lines, cells: split(&record, self.delimiter) },
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
fn split(record: &str, delimiter: u8) -> Vec<String> {
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

    fn cells(line: u64, lines: u64, cells: &[&str]) -> Row {
        Row::Cells { line, lines, cells: cells.iter().map(ToString::to_string).collect() }
    }

    #[test]
    fn a_quoted_cell_with_line_ends_makes_one_row_of_several_lines() {
        let got = rows("a,b\n1,\"x\ny \"\"q\"\"\nz\"\n2,w\n", 1024).unwrap();
        assert_eq!(got, vec![cells(1, 1, &["a", "b"]), cells(2, 3, &["1", "x\ny \"q\"\nz"]), cells(5, 1, &["2", "w"])]);
    }

    #[test]
    fn a_quote_inside_an_unquoted_cell_opens_nothing() {
        let got = rows("a,b\"c\n2,w\n", 1024).unwrap();
        assert_eq!(got, vec![cells(1, 1, &["a", "b\"c"]), cells(2, 1, &["2", "w"])]);
    }

    #[test]
    fn a_quote_closed_at_a_line_end_ends_the_row() {
        let got = rows("\"a\nb\"\n\"c\"\n", 1024).unwrap();
        assert_eq!(got, vec![cells(1, 2, &["a\nb"]), cells(3, 1, &["c"])]);
    }

    #[test]
    fn blank_lines_and_crlf() {
        let got = rows("a,b\r\n\r\n1,2\r\n", 1024).unwrap();
        assert_eq!(got, vec![cells(1, 1, &["a", "b"]), Row::Blank { line: 2 }, cells(3, 1, &["1", "2"])]);
    }

    #[test]
    fn a_row_past_the_cap_is_passed_over_with_its_lines() {
        let got = rows("a,b\n1,\"xxxx\nxxxx\nxxxx\"\n2,w\n", 10).unwrap();
        assert_eq!(got, vec![cells(1, 1, &["a", "b"]), Row::TooLong { line: 2, lines: 3 }, cells(5, 1, &["2", "w"])]);
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
