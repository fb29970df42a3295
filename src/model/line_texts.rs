//! Where the text of each line an event was read from is. An event keeps only its source and
//! line (`Origin`): millions of events are 8 bytes smaller than with a place for the text in each,
//! and a report shows the texts of the few lines it cites.

/// The texts of one source's lines, for the events read from it: either the source is a file that
/// is read again for the lines a report shows (it has marks: a gigabyte of log or ledger is not
/// kept in memory for them), or the texts are kept here (standard input and compressed files, which
/// cannot be read again cheaply, and formats whose events are few).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineTexts {
    /// Lines the reader passed, each with the byte of the file at which it starts, in line order
    /// and at least `MARK_SPACING` bytes apart: a line is found by reading forward from the last
    /// mark before it (`mark_at_or_before`).
    marks: Vec<Mark>,
    /// The kept texts, by line, in line order: one per line that has events.
    kept: Vec<(u32, Box<str>)>,
}

/// A line and the byte of its file at which it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    pub line: u32,
    pub offset: u64,
}

/// Bytes between marks: reading back a line reads at most about this much before it.
pub const MARK_SPACING: u64 = 1 << 20;

impl LineTexts {
    /// Whether the lines are read again from the file (`false`: their texts are kept here). A
    /// reader that leaves the texts in the file marks its first line with an event, at least.
    pub fn is_in_file(&self) -> bool {
        !self.marks.is_empty()
    }

    /// Notes that `line` starts at byte `offset`, when the last mark is `MARK_SPACING` bytes or
    /// more before it (readers may call this for every line). A line beyond the 32 bits events
    /// keep has no events, and is not marked.
    pub fn mark(&mut self, line: u64, offset: u64) {
        let Ok(line) = u32::try_from(line) else { return };
        if self.marks.last().is_none_or(|last| offset >= last.offset.saturating_add(MARK_SPACING)) {
            self.marks.push(Mark { line, offset });
        }
    }

    /// `mark`, however near the last mark: for a line that reading forward by line ends would not
    /// find (a CSV record after one whose quoted cell holds a lone `\r`, which ends no line there).
    pub fn mark_always(&mut self, line: u64, offset: u64) {
        let Ok(line) = u32::try_from(line) else { return };
        if self.marks.last().is_none_or(|last| offset > last.offset) {
            self.marks.push(Mark { line, offset });
        }
    }

    /// The last mark at or before `line`; the start of the file when there is none.
    pub fn mark_at_or_before(&self, line: u32) -> Mark {
        let after = self.marks.partition_point(|mark| mark.line <= line);
        after.checked_sub(1).map_or(Mark { line: 1, offset: 0 }, |last| self.marks[last])
    }

    /// Keeps `text` as the text of `line`. The events of one line share its text: a line already
    /// kept keeps its first text.
    pub fn keep(&mut self, line: u32, text: &str) {
        match self.kept.last() {
            Some(&(last, _)) if last == line => {}
            Some(&(last, _)) if last > line => {
                // Out of line order (no reader does this today): kept in order all the same.
                let at = self.kept.partition_point(|&(kept, _)| kept < line);
                if self.kept.get(at).is_none_or(|&(kept, _)| kept != line) {
                    self.kept.insert(at, (line, text.into()));
                }
            }
            _ => self.kept.push((line, text.into())),
        }
    }

    /// The kept text of `line` (`None` when none was kept).
    pub fn kept(&self, line: u32) -> Option<&str> {
        let at = self.kept.binary_search_by_key(&line, |&(kept, _)| kept).ok()?;
        Some(&self.kept[at].1)
    }

    /// The memory the kept texts take, their places included.
    pub fn kept_bytes(&self) -> usize {
        self.kept.iter().map(|(_, text)| text.len() + std::mem::size_of::<(u32, Box<str>)>()).sum()
    }

    /// Drops the marks: the kept texts are the lines' texts, and the file is not read again.
    pub fn forget_marks(&mut self) {
        self.marks = Vec::new();
    }

    /// Drops the kept texts: the lines are read again from the file, from their marks.
    pub fn forget_kept(&mut self) {
        self.kept = Vec::new();
    }

    /// The kept texts, by line, in line order.
    pub fn into_kept(self) -> Vec<(u32, Box<str>)> {
        self.kept
    }

    /// Adds the texts of a later part of the same file, whose lines were counted from 1 at its
    /// start: `before` lines come before it.
    pub fn append_later(&mut self, later: LineTexts, before: u32) {
        // A mark past the 32 bits events keep has no events after it to find.
        let marks =
            later.marks.into_iter().filter_map(|mark| Some(Mark { line: mark.line.checked_add(before)?, ..mark }));
        self.marks.extend(marks);
        for (line, text) in later.kept {
            // Kept for events, whose shifted lines were checked first (`ingest::join_later_part`).
            self.keep(line.saturating_add(before), &text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_are_spaced_and_the_last_one_at_or_before_a_line_is_found() {
        let mut texts = LineTexts::default();
        // A line every 1,000 bytes.
        for line in 1..=5_000u64 {
            texts.mark(line, (line - 1) * 1_000);
        }
        let lines: Vec<u32> = texts.marks.iter().map(|mark| mark.line).collect();
        assert_eq!(lines, [1, 1_050, 2_099, 3_148, 4_197], "one mark per MARK_SPACING bytes");
        assert_eq!(texts.mark_at_or_before(1), Mark { line: 1, offset: 0 });
        assert_eq!(texts.mark_at_or_before(1_049), Mark { line: 1, offset: 0 });
        assert_eq!(texts.mark_at_or_before(1_050), Mark { line: 1_050, offset: 1_049_000 });
        assert_eq!(texts.mark_at_or_before(4_999), Mark { line: 4_197, offset: 4_196_000 });
        // Without marks: the start of the file.
        assert_eq!(LineTexts::default().mark_at_or_before(77), Mark { line: 1, offset: 0 });
        assert!(texts.is_in_file());
    }

    #[test]
    fn kept_texts_are_found_by_line_whatever_order_they_came_in() {
        let mut texts = LineTexts::default();
        texts.keep(3, "three");
        texts.keep(3, "three again");
        texts.keep(7, "seven");
        texts.keep(5, "five");
        assert_eq!(texts.kept(3), Some("three"));
        assert_eq!(texts.kept(5), Some("five"));
        assert_eq!(texts.kept(7), Some("seven"));
        assert_eq!(texts.kept(4), None);
        assert!(!texts.is_in_file());
    }

    #[test]
    fn a_later_part_is_shifted_by_the_lines_before_it() {
        let mut first = LineTexts::default();
        first.mark(1, 0);
        let mut later = LineTexts::default();
        later.mark(1, 5_000_000);
        first.append_later(later, 40_000);
        assert_eq!(first.mark_at_or_before(40_000), Mark { line: 1, offset: 0 });
        assert_eq!(first.mark_at_or_before(40_001), Mark { line: 40_001, offset: 5_000_000 });
        let mut first = LineTexts::default();
        first.keep(2, "two");
        let mut later = LineTexts::default();
        later.keep(1, "eleven");
        first.append_later(later, 10);
        assert_eq!((first.kept(2), first.kept(11), first.kept(1)), (Some("two"), Some("eleven"), None));
    }
}
