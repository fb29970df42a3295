//! The physical lines of a log store's text or CSV export, each with its number, for the envelopes
//! that join several of them into one record (a CloudWatch event printed over several lines by
//! `aws logs tail`, a CSV row whose quoted message holds line ends).
//!
//! `lines::Lines` passes over a line past the cap and counts it in a summary; an envelope must
//! yield a piece for every line, so here each passed-over line comes back as `Line::TooLong` with
//! its number, in its place among the others.

use std::io::BufRead;

use crate::error::Result;
use crate::ingest::io::lines::Lines;
use crate::model::InputSummary;

use super::Context;

/// One physical line of the export.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A line as text, without its line end.
    Text(u64, String),
    /// A line longer than `Context::max_line_bytes`, passed over unread.
    TooLong(u64),
}

pub struct ExportLines<'a> {
    lines: Lines,
    context: Context<'a>,
    /// Where `Lines` counts the lines it passes over.
    passed: InputSummary,
    /// The number of the last line handed out.
    last: u64,
    /// Lines already read and waiting behind passed-over ones.
    waiting: Option<Line>,
    ended: bool,
    /// Lines passed over after the last line read, still to hand out.
    trailing: u64,
}

impl<'a> ExportLines<'a> {
    pub fn new(input: Box<dyn BufRead + Send>, context: Context<'a>) -> Self {
        ExportLines {
            lines: Lines::new(input, context.max_line_bytes),
            context,
            passed: InputSummary::new("", "log", "envelope", None),
            last: 0,
            waiting: None,
            ended: false,
            trailing: 0,
        }
    }

    /// The next line, or `None` at the end. Text that is not UTF-8 or holds a NUL byte is an error
    /// naming the file and line (`Lines`).
    pub fn next_line(&mut self) -> Result<Option<Line>> {
        if let Some(waiting) = self.waiting.take() {
            return Ok(Some(self.hand_out(waiting)));
        }
        if !self.ended {
            let before = self.passed.lines;
            let read = self.lines.next_line(self.context.path, &mut self.passed)?;
            if let Some((number, text)) = read {
                let line = Line::Text(number, text.to_string());
                return Ok(Some(self.hand_out(line)));
            }
            self.ended = true;
            // Lines passed over at the very end: they follow the last one handed out.
            self.trailing = self.passed.lines - before;
        }
        if self.trailing > 0 {
            self.trailing -= 1;
            self.last += 1;
            return Ok(Some(Line::TooLong(self.last)));
        }
        Ok(None)
    }

    fn hand_out(&mut self, line: Line) -> Line {
        let number = match &line {
            Line::Text(number, _) | Line::TooLong(number) => *number,
        };
        // Passed-over lines still between the last one and this one come first.
        if number > self.last + 1 {
            self.waiting = Some(line);
            self.last += 1;
            return Line::TooLong(self.last);
        }
        self.last = number;
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn all(text: &'static str, cap: usize) -> Vec<Line> {
        let context = Context { path: Path::new("export.txt"), max_line_bytes: cap };
        let mut lines = ExportLines::new(Box::new(text.as_bytes()), context);
        let mut out = Vec::new();
        while let Some(line) = lines.next_line().unwrap() {
            out.push(line);
        }
        out
    }

    #[test]
    fn lines_past_the_cap_come_back_in_their_place() {
        let got = all("a\nxxxxxxxx\nyyyyyyyy\nb\nzzzzzzzz\n", 4);
        assert_eq!(
            got,
            vec![
                Line::Text(1, "a".into()),
                Line::TooLong(2),
                Line::TooLong(3),
                Line::Text(4, "b".into()),
                Line::TooLong(5),
            ]
        );
    }

    #[test]
    fn plain_lines_are_numbered_from_one() {
        assert_eq!(all("a\r\nb", 16), vec![Line::Text(1, "a".into()), Line::Text(2, "b".into())]);
    }

    #[test]
    fn binary_is_an_error_naming_the_line() {
        let context = Context { path: Path::new("export.txt"), max_line_bytes: 16 };
        let mut lines = ExportLines::new(Box::new(&b"a\nb\0\n"[..]), context);
        lines.next_line().unwrap();
        let error = lines.next_line().unwrap_err().to_string();
        assert!(error.contains("export.txt:2"), "{error}");
    }
}
