//! GitLab code quality (`--format gitlab`): the JSON array GitLab reads from a job's
//! `artifacts:reports:codequality` file and shows in the merge request's code quality widget and
//! the pipeline's Code Quality tab, as ruff's `--output-format gitlab` writes it. The fields are
//! the subset of the Code Climate issue that GitLab documents (docs.gitlab.com, "Code Quality
//! report format"): `description`, `check_name`, `fingerprint`, `severity`, `location.path` and
//! `location.lines.begin`.
//!
//! One issue per finding, at the evidence line where it became visible (the SARIF result's
//! location); a finding with no evidence line has none to show and is placed at line 1 of the
//! first source. Severity: error → `critical`, warning → `major`, info → `info` (GitLab's scale is
//! info, minor, major, critical, blocker). The fingerprint is the SARIF result's (the same finding
//! keeps it across runs of the same exports, whatever line it is on), with a count when two
//! findings share one: GitLab shows only the first of issues with equal fingerprints. Header
//! warnings are not issues of a file: they are in every other format, and GitLab has no place for
//! them. The text is exact (JSON carries any byte): GitLab escapes it when it shows it.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Write};

use serde::Serialize;

use crate::model::report::View;
use crate::model::{Report, Severity};

use super::annotation::{finding_fingerprint, follows_from, message, primary_evidence};
use super::{Renderer, fill_summary};

pub struct Gitlab;

#[derive(Serialize)]
struct Issue {
    description: String,
    check_name: &'static str,
    fingerprint: String,
    severity: &'static str,
    location: Location,
}

#[derive(Serialize)]
struct Location {
    path: String,
    lines: Lines,
}

#[derive(Serialize)]
struct Lines {
    begin: u32,
}

pub fn severity(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "critical",
        Severity::Warning => "major",
        Severity::Info => "info",
    }
}

impl Renderer for Gitlab {
    fn name(&self) -> &'static str {
        "gitlab"
    }

    fn shows_raw(&self, _view: View) -> bool {
        false
    }

    fn refuses(&self, view: View) -> Option<&'static str> {
        match view {
            View::Timeline => {
                Some("gitlab lists findings as code quality issues, and a timeline has none: use `check`")
            }
            _ => None,
        }
    }

    fn render(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        let tz = report.display_tz;
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        let issues: Vec<Issue> = (1..)
            .zip(&report.findings)
            .map(|(number, finding)| {
                let (path, line) = match primary_evidence(report, finding) {
                    Some(id) => {
                        let event = report.timeline.get(id);
                        (report.timeline.path(event).to_string(), event.origin().line.max(1))
                    }
                    None => (report.inputs.first().map_or_else(String::new, |input| input.path.clone()), 1),
                };
                let mut description = format!(
                    "[{number}] {}: {}",
                    finding.code,
                    message(&fill_summary(&finding.summary, &finding.metrics, tz), tz)
                );
                if let Some(causes) = follows_from(report, finding) {
                    let _ = write!(description, "; follows from {causes}");
                }
                let mut fingerprint = finding_fingerprint(report, finding);
                let count = seen.entry(fingerprint.clone()).or_default();
                *count += 1;
                if *count > 1 {
                    let _ = write!(fingerprint, ":{count}");
                }
                Issue {
                    description,
                    check_name: finding.code,
                    fingerprint,
                    severity: severity(finding.severity),
                    location: Location { path, lines: Lines { begin: line } },
                }
            })
            .collect();
        serde_json::to_writer_pretty(&mut *out, &issues).map_err(io::Error::other)?;
        writeln!(out)
    }
}
