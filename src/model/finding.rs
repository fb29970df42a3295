//! A finding: one pattern found in the evidence, with the numbers and the arithmetic behind it.
//!
//! Detectors do not know the display zone, so a summary is a template whose `{metric}`
//! placeholders the renderers fill in the zone the user asked for.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::timeline::EventId;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// A named quantity of a finding. Times are instants; durations are seconds.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Time(DateTime<Utc>),
    Seconds(f64),
    Count(u64),
    Ratio(f64),
    Flag(bool),
    Text(String),
}

/// One step of arithmetic: `result = formula`, in the finding's own metric and parameter names.
#[derive(Debug, Clone, PartialEq)]
pub struct Derivation {
    pub result: &'static str,
    pub formula: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// Stable code, e.g. `stalled-rerun`: the name of the pattern.
    pub code: &'static str,
    pub severity: Severity,
    /// When the pattern became visible (the rerun, the second selection, ...).
    pub at: DateTime<Utc>,
    /// One line for people, with `{metric}` placeholders.
    pub summary: String,
    /// The events used, by timeline index.
    pub evidence: Vec<EventId>,
    pub metrics: Vec<(&'static str, Value)>,
    pub derivations: Vec<Derivation>,
    /// What the computed values rest on, and the assumptions made.
    pub notes: Vec<String>,
    /// One short line for the report's headline, with `{metric}` placeholders (empty: the
    /// summary's first sentence is used).
    pub headline: String,
    /// The first cause that is not itself a finding (a restart before the first lock renewal), as
    /// a `{metric}` template: where the headline's chain ends.
    pub root_cause: Option<String>,
    /// The findings this one follows from, by position in the report's findings, as their
    /// detectors stated (`Detector::follows_from`).
    pub caused_by: Vec<usize>,
}

impl Finding {
    pub fn new(code: &'static str, severity: Severity, at: DateTime<Utc>) -> Self {
        Finding {
            code,
            severity,
            at,
            summary: String::new(),
            evidence: Vec::new(),
            metrics: Vec::new(),
            derivations: Vec::new(),
            notes: Vec::new(),
            headline: String::new(),
            root_cause: None,
            caused_by: Vec::new(),
        }
    }

    /// The headline template: the detector's own, else the summary's first sentence.
    pub fn headline_template(&self) -> &str {
        if !self.headline.is_empty() {
            return &self.headline;
        }
        // A sentence ends at ". " before a capital; times such as 09:54:05.70 and decimals never do.
        let bytes = self.summary.as_bytes();
        let end = (0..bytes.len().saturating_sub(2))
            .find(|&i| bytes[i] == b'.' && bytes[i + 1] == b' ' && bytes[i + 2].is_ascii_uppercase())
            .map_or(self.summary.len(), |i| i + 1);
        &self.summary[..end]
    }

    /// The metric named `name` as text, if it is one.
    pub fn text(&self, name: &str) -> Option<&str> {
        match self.get(name) {
            Some(Value::Text(text)) => Some(text),
            _ => None,
        }
    }

    pub fn metric(&mut self, name: &'static str, value: Value) -> &mut Self {
        self.metrics.push((name, value));
        self
    }

    pub fn derive(&mut self, result: &'static str, formula: impl Into<String>) -> &mut Self {
        self.derivations.push(Derivation { result, formula: formula.into() });
        self
    }

    pub fn note(&mut self, text: impl Into<String>) -> &mut Self {
        self.notes.push(text.into());
        self
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.metrics.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }
}
