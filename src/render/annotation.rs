//! What the CI formats (SARIF, GitHub annotations, GitLab code quality, JUnit, concise) say of a finding that is read alone, away from
//! the report's header and chains: the evidence line it is placed at, what it follows from, and
//! its summary with the zone its times are in, and what identifies it across runs.

use crate::model::timeline::EventId;
use crate::model::{Finding, Report, Value};
use crate::time::format_rfc3339;

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

/// What identifies a finding across runs of the same exports, whatever lines they are on: its
/// code, the job, run and item ids of its evidence, its text metrics (ids and names such as
/// `job_id`, `parameter`) and its time (two stalls of one job are two findings).
pub fn finding_fingerprint(report: &Report, finding: &Finding) -> String {
    let mut parts: Vec<String> = Vec::new();
    for &id in &finding.evidence {
        let event = report.timeline.get(id);
        for (name, value) in
            [("job", event.job_id.as_deref()), ("run", event.run_id.as_deref()), ("item", event.item.as_deref())]
        {
            if let Some(value) = value {
                parts.push(format!("{name}={value}"));
            }
        }
    }
    for (name, value) in &finding.metrics {
        if let Value::Text(text) = value {
            parts.push(format!("{name}={text}"));
        }
    }
    parts.sort();
    parts.dedup();
    parts.push(format!("at={}", format_rfc3339(finding.at)));
    let mut all: Vec<&str> = vec![finding.code];
    all.extend(parts.iter().map(String::as_str));
    fingerprint(&all)
}

/// FNV-1a, 64 bits, over the parts separated by NUL: the same parts give the same value in every
/// build, on every machine (unlike `std`'s hasher, whose output may change between releases).
pub fn fingerprint(parts: &[&str]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for (n, part) in parts.iter().enumerate() {
        let separator: &[u8] = if n == 0 { b"" } else { b"\0" };
        for &byte in separator.iter().chain(part.as_bytes()) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}
