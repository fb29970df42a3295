//! The finished result of a run, handed to renderers. Nothing here is computed by a renderer.

use std::collections::HashMap;

use chrono_tz::Tz;

use super::timeline::EventId;
use super::{Finding, InputSummary, LockParams, Severity, Timeline};

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
