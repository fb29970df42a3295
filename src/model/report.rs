//! The finished result of a run, handed to renderers. Nothing here is computed by a renderer.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::Serialize;

use super::timeline::EventId;
use super::{Finding, LockParams, Severity, Timeline};

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
    #[serde(serialize_with = "crate::model::report::rfc3339_opt")]
    pub first_at: Option<DateTime<Utc>>,
    #[serde(serialize_with = "crate::model::report::rfc3339_opt")]
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
            envelope_times: Vec::new(),
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

/// Which command built the report: it decides which events are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// Every event; no findings.
    Timeline,
    /// Findings and the events they cite.
    Analyze,
    /// As `Analyze`, with the CI verdict.
    Check(Severity),
}

#[derive(Debug)]
pub struct Report {
    pub view: View,
    pub display_tz: Tz,
    pub inputs: Vec<InputSummary>,
    pub params: LockParams,
    /// What a reader must know before trusting the numbers (defaults in force, disagreeing
    /// parameters, inputs that gave nothing): shown first.
    pub warnings: Vec<super::warnings::Warning>,
    /// Conventions the analysis relied on, printed so that nobody has to guess them.
    pub assumptions: Vec<String>,
    pub timeline: Timeline,
    /// Ordered for reading: by chain, the most severe first (`chain::arrange`).
    pub findings: Vec<Finding>,
    /// The findings grouped by cause, by position in `findings`, the most severe chain first.
    pub chains: Vec<super::Chain>,
    /// The raw text of the shown events whose text stayed in their file (`LineTexts::is_in_file`).
    pub raw_texts: RawTexts,
    /// What the user narrowed the report to (`--since`, `--job`, ...), if anything: `findings`
    /// then holds the shown findings only (`Report::retain_shown`).
    pub shown: Option<Shown>,
}

/// A filter applied to a report, and what the analysis had before it (`model::filter`).
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    pub filter: super::filter::Filter,
    /// Events the analysis read: the whole timeline.
    pub events_read: usize,
    /// Findings the analysis made, shown or not.
    pub findings_found: usize,
    /// The findings not shown, by severity (error, warning, info).
    pub hidden: [usize; 3],
}

/// Where a report gets the raw text of the shown events whose text stayed in their file.
#[derive(Debug)]
pub enum RawTexts {
    /// Read back once the findings were known: the few lines a report cites.
    Read(HashMap<EventId, String>),
    /// Read back a chunk of events at a time while the report is written (`Report::each_raw`):
    /// a whole timeline's lines (a gigabyte for millions of events) are never held at once.
    OnDemand(Box<dyn ReadBack>),
}

/// Reads the raw texts of events back from the sources they were read from (implemented where
/// the sources are known, in `ingest::io::read_back`).
pub trait ReadBack: Send + Sync + std::fmt::Debug {
    /// The text of each of `ids`, in their order: `None` for an event whose text is kept in
    /// memory (`LineTexts::kept`).
    fn read(&self, timeline: &Timeline, ids: &[EventId]) -> crate::error::Result<Vec<Option<String>>>;
}

/// Events whose texts `Report::each_raw` reads back at once: about 13 MB of ledger lines.
const READ_BACK_CHUNK: usize = 1 << 16;

impl Report {
    /// Ids of the events to show: all for `timeline`, the cited ones otherwise; of those, the
    /// ones a filter shows (`model::filter`).
    pub fn shown_events(&self) -> Vec<EventId> {
        let in_filter = |id: EventId| self.shown.as_ref().is_none_or(|shown| shown.filter.shows(self.timeline.get(id)));
        match self.view {
            View::Timeline => match &self.shown {
                None => self.timeline.ids().map(|(id, _)| id).collect(),
                Some(shown) => {
                    self.timeline.ids().filter(|(_, event)| shown.filter.shows(event)).map(|(id, _)| id).collect()
                }
            },
            View::Analyze | View::Check(_) => {
                let mut ids = self.cited_events();
                ids.retain(|&id| in_filter(id));
                ids
            }
        }
    }

    /// Ids of every event the findings cite, in timeline order: their evidence, which a report
    /// shows whole, whatever a filter shows of the timeline.
    pub fn cited_events(&self) -> Vec<EventId> {
        let mut ids: Vec<EventId> = self.findings.iter().flat_map(|f| f.evidence.iter().copied()).collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// Applies `filter`: keeps the findings it shows (each whole, with all its evidence, and the
    /// findings it follows from: `Filter::shown_findings`), arranged into chains again among
    /// themselves; counts what it hides, and says so among the assumptions and, when findings are
    /// hidden, in a header warning. The analysis has run on everything by then.
    pub fn retain_shown(&mut self, filter: super::filter::Filter) {
        use std::fmt::Write as _;
        let found = self.findings.len();
        let shown = filter.shown_findings(&self.findings, &self.timeline);
        let mut hidden = [0; 3];
        for (finding, _) in self.findings.iter().zip(&shown).filter(|(_, shown)| !**shown) {
            hidden[match finding.severity {
                super::Severity::Error => 0,
                super::Severity::Warning => 1,
                super::Severity::Info => 2,
            }] += 1;
        }
        // The shown findings, their links renumbered among them, arranged into chains again.
        let mut position = vec![None; found];
        let mut kept = Vec::new();
        for (index, (finding, shown)) in std::mem::take(&mut self.findings).into_iter().zip(&shown).enumerate() {
            if *shown {
                position[index] = Some(kept.len());
                kept.push(finding);
            }
        }
        for finding in &mut kept {
            finding.caused_by = finding.caused_by.iter().filter_map(|&cause| position[cause]).collect();
        }
        (self.findings, self.chains) = super::chain::arrange(kept);
        let tz = self.display_tz;
        let events = self.timeline.len();
        let mut notice = format!("shown: {}", filter.describe(tz));
        if self.view == View::Timeline {
            let count = self.timeline.events().iter().filter(|event| filter.shows(event)).count();
            let _ = write!(notice, ": {count} of the timeline's {events} events");
        } else {
            let _ = write!(
                notice,
                ", the findings citing any of them and the findings they follow from (each with all its evidence): {} of {found}; the analysis read all {events} events of the timeline",
                self.findings.len()
            );
        }
        if let View::Check(_) = self.view {
            notice += "; the check counts the shown findings only";
        }
        self.assumptions.extend(filter.readings.iter().cloned());
        self.assumptions.push(notice);
        // An id mistyped or a window on the wrong day shows an empty report that reads as "nothing
        // happened": said first.
        if !self.timeline.events().iter().any(|event| filter.shows(event)) {
            self.warnings.push(super::warnings::Warning {
                kind: "filter-matches-nothing",
                message: format!(
                    "no event of the case's {events} is among the {}: ids are compared exactly as the sources wrote them, and times are read in {}",
                    filter.describe(tz),
                    tz.name()
                ),
            });
        }
        let hidden_count: usize = hidden.iter().sum();
        if hidden_count > 0 {
            let by_severity: Vec<String> = [(0, "error"), (1, "warning"), (2, "info")]
                .iter()
                .filter(|(i, _)| hidden[*i] > 0)
                .map(|(i, name)| format!("{} {name}", hidden[*i]))
                .collect();
            let verdict = if let View::Check(_) = self.view { "; the check does not count them" } else { "" };
            self.warnings.push(super::warnings::Warning {
                kind: "findings-filtered-out",
                message: format!(
                    "{hidden_count} of {found} findings are not shown ({}): they cite no event the filter shows ({}), and no shown finding follows from them{verdict}",
                    by_severity.join(", "),
                    filter.describe(tz)
                ),
            });
        }
        self.shown = Some(Shown { filter, events_read: events, findings_found: found, hidden });
    }

    /// The text of the line (record) an event was read from, for a report whose texts were read
    /// back (`RawTexts::Read`: `analyze`, `check`). A report whose texts are read on demand (a
    /// whole timeline) gives them through `each_raw`; here, only the texts kept in memory.
    pub fn raw(&self, id: EventId) -> &str {
        match self.timeline.kept_text(self.timeline.get(id)) {
            Some(text) => text,
            None => match &self.raw_texts {
                RawTexts::Read(texts) => texts.get(&id).map_or("", String::as_str),
                RawTexts::OnDemand(_) => "",
            },
        }
    }

    /// Calls `each` with each of `ids`, in order, and the text of its line (record). Texts read on
    /// demand are read a chunk of ids at a time, in file order within the chunk; a failure to
    /// read them (a file changed since it was read) is handed to `failed` and ends the walk.
    pub fn each_raw<E>(
        &self,
        ids: &[EventId],
        failed: impl Fn(crate::error::Error) -> E,
        each: impl FnMut(EventId, &str) -> Result<(), E>,
    ) -> Result<(), E> {
        self.each_raw_in_chunks(ids, READ_BACK_CHUNK, failed, each)
    }

    /// `each_raw`, reading back `chunk` ids at a time.
    pub(crate) fn each_raw_in_chunks<E>(
        &self,
        ids: &[EventId],
        chunk: usize,
        failed: impl Fn(crate::error::Error) -> E,
        mut each: impl FnMut(EventId, &str) -> Result<(), E>,
    ) -> Result<(), E> {
        let RawTexts::OnDemand(source) = &self.raw_texts else {
            return ids.iter().try_for_each(|&id| each(id, self.raw(id)));
        };
        for chunk in ids.chunks(chunk) {
            let texts = source.read(&self.timeline, chunk).map_err(&failed)?;
            for (&id, text) in chunk.iter().zip(&texts) {
                match text {
                    Some(text) => each(id, text)?,
                    None => each(id, self.raw(id))?,
                }
            }
        }
        Ok(())
    }

    /// Findings at or above the `check` threshold.
    pub fn failing(&self) -> usize {
        match self.view {
            View::Check(threshold) => self.findings.iter().filter(|f| f.severity >= threshold).count(),
            _ => 0,
        }
    }
}
