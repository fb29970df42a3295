//! A ledger's sample read as a table: what `ledger` proposes columns from and `lifecycle` fits
//! runs to, kept apart so that neither has to reach into the other for it.

/// A ledger's sampled records, cells as text.
#[derive(Debug)]
pub struct Table {
    pub format: &'static str,
    pub columns: Vec<String>,
    pub rows: Vec<Row>,
    /// Where the last row read ends in the sample: the reader is tried on the text before it.
    pub end: usize,
    /// The first CSV row whose field count differs from the header's: the reader stops there.
    pub ragged: Option<(u64, usize)>,
}

#[derive(Debug)]
pub struct Row {
    pub line: u64,
    pub cells: Vec<String>,
}
