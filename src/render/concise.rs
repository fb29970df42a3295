//! One line per finding (`--format concise`), as ruff's `--output-format concise` prints one per
//! violation: `path:line: severity [n] code: summary`, at the evidence line where the finding
//! became visible (the SARIF result's location). For a CI log that is read by grep, or a
//! terminal too narrow for the table.
//!
//! The report's header warnings come first, one line each (`WARNING [kind]: …`), since they say
//! what makes every line after them less than certain; then the findings in report order; then,
//! for `check`, the verdict line the table ends with. Text from the case is made
//! `terminal::visible`: a line break in a summary or a path cannot add a line.

use std::io::{self, Write};

use crate::model::Report;
use crate::model::report::View;
use crate::terminal::visible;

use super::annotation::{follows_from, primary_evidence};
use super::{Renderer, fill_summary};

pub struct Concise;

impl Renderer for Concise {
    fn name(&self) -> &'static str {
        "concise"
    }

    fn shows_raw(&self, _view: View) -> bool {
        false
    }

    fn refuses(&self, view: View) -> Option<&'static str> {
        match view {
            View::Timeline => {
                Some("concise lists findings, one a line, and a timeline has none: use `check` or `analyze`")
            }
            _ => None,
        }
    }

    fn render(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        let tz = report.display_tz;
        for warning in &report.warnings {
            writeln!(out, "WARNING [{}]: {}", warning.kind, visible(&warning.message))?;
        }
        for (index, finding) in report.findings.iter().enumerate() {
            let place = primary_evidence(report, finding).map_or_else(String::new, |id| {
                let event = report.timeline.get(id);
                format!("{}:{}: ", visible(report.timeline.path(event)), event.origin().line)
            });
            let summary = visible(&fill_summary(&finding.summary, &finding.metrics, tz)).into_owned();
            let causes =
                follows_from(report, finding).map_or_else(String::new, |causes| format!(" (follows from {causes})"));
            writeln!(out, "{place}{} [{}] {}: {summary}{causes}", finding.severity.name(), index + 1, finding.code)?;
        }
        if let View::Check(threshold) = report.view {
            writeln!(out, "{}", super::verdict(report, threshold))?;
        } else {
            let count = report.findings.len();
            writeln!(out, "{count} finding{} (times in {})", if count == 1 { "" } else { "s" }, tz.name())?;
        }
        Ok(())
    }
}
