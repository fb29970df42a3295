//! What the CI formats (SARIF, GitHub annotations) say of a finding that is read alone, away from
//! the report's header and chains: the evidence line it is placed at, what it follows from, and
//! its summary with the zone its times are in.

use crate::model::timeline::EventId;
use crate::model::{Finding, Report};

/// The evidence event a finding is located at: the one at the finding's own time (where the
/// pattern became visible), else the last one before it, else the first.
pub fn primary_evidence(report: &Report, finding: &Finding) -> Option<EventId> {
    let at = |id: EventId| report.timeline.get(id).at();
    finding
        .evidence
        .iter()
        .copied()
        .find(|&id| at(id) == finding.at)
        .or_else(|| finding.evidence.iter().copied().filter(|&id| at(id) <= finding.at).max_by_key(|&id| at(id)))
        .or_else(|| finding.evidence.first().copied())
}

/// The findings `finding` follows from, as `[3] sweep-overlap, [1] stalled-rerun`.
pub fn follows_from(report: &Report, finding: &Finding) -> Option<String> {
    let causes: Vec<String> = finding
        .caused_by
        .iter()
        .filter_map(|&index| report.findings.get(index).map(|cause| format!("[{}] {}", index + 1, cause.code)))
        .collect();
    (!causes.is_empty()).then(|| causes.join(", "))
}

/// A finding's summary with the zone of its times: a result is read alone, away from the header
/// that names the zone.
pub fn message(summary: &str, tz: chrono_tz::Tz) -> String {
    format!("{summary} (times in {})", tz.name())
}
