//! How each input was read: its lines used, ignored with a reason, or rejected with one, the
//! span of time it covered and what its reader noticed on the way (`InputSummary`). A reader
//! fills one per source; the report, its warnings and its renderers read them.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::Serialize;

/// How one input was accounted for: every line is used, ignored as noise, or rejected.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct InputSummary {
    pub path: String,
    /// `ledger`, `log` or `bullmq-params`.
    pub kind: &'static str,
    /// The parser that read it, e.g. `csv`, `jsonl`, `text`, `json`.
    pub format: &'static str,
    /// Declared zone for wall-clock timestamps, if any.
    pub tz: Option<String>,
    pub lines: u64,
    /// Lines (records) that became evidence.
    pub used: u64,
    /// Events produced (a job-hash record can yield several; bullmq-params: parameters used).
    pub events: u64,
    pub ignored: u64,
    pub rejected: u64,
    /// Why lines were ignored, with counts (e.g. `noise`, `continuation`, `blank`).
    pub ignored_by_reason: BTreeMap<String, u64>,
    /// The first rejected lines with their reasons (all of them are counted in `rejected`).
    pub rejections: Vec<Rejection>,
    /// Time span of the events read: what this source can speak for.
    #[serde(serialize_with = "crate::model::input::rfc3339_opt")]
    pub first_at: Option<DateTime<Utc>>,
    #[serde(serialize_with = "crate::model::input::rfc3339_opt")]
    pub last_at: Option<DateTime<Utc>>,
    /// Where the texts of the lines that became events are, while the source is read: the
    /// timeline takes them over (`Timeline::with_line_texts`).
    #[serde(skip)]
    pub texts: super::LineTexts,
    /// What became of the lines in repeated hours (DST fall-backs) of the source's zone: the
    /// report's assumptions say it (`time::fold::notes`).
    #[serde(skip)]
    pub folds: Vec<crate::time::fold::FoldLines>,
    /// What the reader had to decide or could not use, for the report's assumptions (each is
    /// printed there, after the source's path).
    #[serde(skip)]
    pub notes: Vec<String>,
    /// Timestamps read without an offset, placed in the source's zone: whether a ledger's default
    /// zone (UTC) was relied on at all, and for how many.
    #[serde(skip)]
    pub naive_times: u64,
    /// BullMQ versions a queue's `:meta` hash names (`version: bullmq:5.81.5`), with the line:
    /// written by the last `Queue` constructed, so evidence about a client, not the workers.
    #[serde(skip)]
    pub meta_versions: Vec<(String, u64)>,
    /// Lines of a plain-text log that hold `CROWDED_STAMPS` or more timestamps of the log's own
    /// layout: line ends lost (lines joined, an unknown line-end convention). A header warning
    /// (`warnings::crowded_lines`).
    #[serde(skip)]
    pub crowded: Option<Crowded>,
    /// A log read inside an envelope (`ingest::envelope`) whose lines carry their own times: the
    /// envelope's UTC time of each line that became an event, by line, in line order. Evidence
    /// about the zone the lines' own times were read in (`clock-offset-suspected`).
    #[serde(skip)]
    pub envelope_times: Vec<(u32, crate::model::Moment)>,
    /// The jobs and runs of the rows and lines left outside the read window
    /// (`filter::outside_key`): a finding about one of them may lack part of its story, and the
    /// report says so (`warnings::window_cut`).
    #[serde(skip)]
    pub outside_ids: super::filter::OutsideIds,
    /// The first and last times of the rows and lines left outside the read window: what the
    /// source holds beyond what was read, for the error on a filter that matches nothing.
    #[serde(skip)]
    pub outside_span: Option<(DateTime<Utc>, DateTime<Utc>)>,
    /// A plain log read by time for the read window (`ingest::io::seek`): the bytes read, of
    /// the file's. `None`: read whole (or not a file that can be).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_read: Option<WindowRead>,
}

/// Which bytes of a plain log were read for a read window (`ingest::io::seek`): `from_byte` to
/// `to_byte` of the file's `size`, and `bytes_read` with the search's probes and the head read to
/// tell the format. Its lines are numbered from `from_byte`, where its line 1 is.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct WindowRead {
    /// Whether the part read starts at the text's start (after a byte-order mark): its lines are
    /// then the file's.
    #[serde(skip)]
    pub from_start: bool,
    pub from_byte: u64,
    pub to_byte: u64,
    pub size: u64,
    pub bytes_read: u64,
}

/// The reason an events export that is an empty JSON array (`[]`) is counted as ignored: the
/// export ran and found nothing, which the warning for a source that gave nothing says.
pub const NO_ENTRIES: &str = "an empty JSON array (no stream entries)";

/// The reason a line that repeats an earlier line of its source word for word is ignored
/// (`ingest::io::repeats`).
pub const REPEATED_LINE: &str = "repeat of an earlier line, word for word";

/// The reason a source that repeats an earlier one has its lines ignored, before that source's
/// path (`ingest::io::repeats`).
pub const SAME_EVIDENCE_AS: &str = "same evidence as";

/// What one source repeated (`ingest::io::repeats`): lines of its own, or a whole source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repeat {
    pub source: u16,
    /// Lines dropped as repeats of earlier lines of the source.
    pub lines: u64,
    /// The first of them, and the line it repeats.
    pub first: Option<(u32, u32)>,
    /// The earlier source this one repeats whole.
    pub same_as: Option<u16>,
}

/// A plain-text log's lines that hold many timestamps (`InputSummary::crowded`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Crowded {
    /// How many lines.
    pub lines: u64,
    /// The first of them, and how many timestamps it holds (its own included).
    pub first_line: u64,
    pub first_stamps: u64,
}

/// A log line holding at least this many timestamps in the log's layout (its own first) is
/// taken for several lines whose ends were lost. Two is common in a real line (a message that
/// quotes a deadline or a job's timestamp); three in the same layout as the line's own prefix is
/// not, while a log whose ends were lost has one per entry it joined.
pub const CROWDED_STAMPS: u64 = 3;

impl Crowded {
    /// Counts line `line`, holding `stamps` timestamps.
    pub fn add(crowded: &mut Option<Crowded>, line: u64, stamps: u64) {
        match crowded {
            Some(seen) => seen.lines += 1,
            None => *crowded = Some(Crowded { lines: 1, first_line: line, first_stamps: stamps }),
        }
    }
}

pub fn rfc3339_opt<S: serde::Serializer>(at: &Option<DateTime<Utc>>, serializer: S) -> Result<S::Ok, S::Error> {
    match at {
        Some(at) => serializer.serialize_str(&crate::time::format_rfc3339(*at)),
        None => serializer.serialize_none(),
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Rejection {
    pub line: u64,
    pub reason: String,
}

/// At most this many rejections are listed per input; all are counted.
pub const MAX_LISTED_REJECTIONS: usize = 20;

/// The span that holds both spans.
fn widen(
    span: Option<(DateTime<Utc>, DateTime<Utc>)>,
    more: Option<(DateTime<Utc>, DateTime<Utc>)>,
) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
    match (span, more) {
        (Some((first, last)), Some((from, to))) => Some((first.min(from), last.max(to))),
        (span, more) => span.or(more),
    }
}

impl InputSummary {
    pub fn new(path: &str, kind: &'static str, format: &'static str, tz: Option<Tz>) -> Self {
        InputSummary {
            path: path.to_string(),
            kind,
            format,
            tz: tz.map(|tz| tz.name().to_string()),
            lines: 0,
            used: 0,
            events: 0,
            ignored: 0,
            rejected: 0,
            ignored_by_reason: BTreeMap::new(),
            rejections: Vec::new(),
            first_at: None,
            last_at: None,
            texts: super::LineTexts::default(),
            folds: Vec::new(),
            notes: Vec::new(),
            naive_times: 0,
            meta_versions: Vec::new(),
            crowded: None,
            outside_ids: super::filter::OutsideIds::default(),
            outside_span: None,
            envelope_times: Vec::new(),
            window_read: None,
        }
    }

    /// One line (record) became evidence.
    pub fn used(&mut self) {
        self.used += 1;
    }

    pub fn ignore(&mut self, reason: &str) {
        self.ignored += 1;
        // Looked up before inserting: a reason is counted for millions of lines, allocated once.
        match self.ignored_by_reason.get_mut(reason) {
            Some(count) => *count += 1,
            None => {
                self.ignored_by_reason.insert(reason.to_string(), 1);
            }
        }
    }

    /// A row or line at `at` was left outside the read window, with the keys of its job and run.
    pub fn outside(&mut self, at: DateTime<Utc>, keys: [Option<u64>; 2]) {
        self.ignore(super::filter::OUTSIDE_READ_WINDOW);
        self.outside_ids.extend(keys.into_iter().flatten());
        self.outside_span = widen(self.outside_span, Some((at, at)));
    }

    pub fn reject(&mut self, line: u64, reason: impl Into<String>) {
        self.rejected += 1;
        if self.rejections.len() < MAX_LISTED_REJECTIONS {
            self.rejections.push(Rejection { line, reason: reason.into() });
        }
    }

    /// Adds the account of the lines after this one's, read apart (a part of the same file).
    pub fn absorb(&mut self, later: InputSummary) {
        self.lines += later.lines;
        self.used += later.used;
        self.ignored += later.ignored;
        self.rejected += later.rejected;
        for (reason, count) in later.ignored_by_reason {
            *self.ignored_by_reason.entry(reason).or_default() += count;
        }
        self.notes.extend(later.notes);
        self.naive_times += later.naive_times;
        self.outside_ids.extend(later.outside_ids);
        self.outside_span = widen(self.outside_span, later.outside_span);
        let room = MAX_LISTED_REJECTIONS.saturating_sub(self.rejections.len());
        self.rejections.extend(later.rejections.into_iter().take(room));
        crate::time::fold::merge(&mut self.folds, later.folds);
        // The later part's lines are counted in the file already (`ingest::join_later_part`).
        self.crowded = match (self.crowded, later.crowded) {
            (Some(mut first), Some(more)) => {
                first.lines += more.lines;
                Some(first)
            }
            (first, more) => first.or(more),
        };
    }
}
