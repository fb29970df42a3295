//! What happened, in a few lines: the report's chains, most severe first, each from its final
//! effect back through the findings it follows from to its first cause. Every human format
//! opens with these lines; each format only lays them out.
//!
//! The lines are built from the report alone: the chains and links the detectors stated, and each
//! finding's headline template filled in the display zone. Nothing here decides a cause.

use crate::model::{Chain, Report, Severity};

use super::fill_summary;

/// Chains shown line by line; the rest are counted by their head's code.
pub const MAX_CHAINS: usize = 5;
/// Findings beside a chain's path listed one by one; more are counted by code.
pub const MAX_ALSO: usize = 3;

/// What a headline line says about its finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The final effect of a chain (or a finding linked to nothing).
    Effect,
    /// A finding the line above follows from.
    CausedBy,
    /// The first cause, which is not itself a finding (a restart before the first renewal).
    RootCause,
    /// Another finding of the same chain, beside its path.
    Also,
    /// A count of what is not listed (more chains, more findings beside a path, info findings).
    More,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HeadlineLine {
    /// 0 for a chain's effect; one more for each cause behind it.
    pub depth: usize,
    pub role: Role,
    pub severity: Option<Severity>,
    pub code: Option<&'static str>,
    /// The finding's number in the report (its 1-based position).
    pub number: Option<usize>,
    /// Filled in the display zone.
    pub text: String,
}

/// The headline of `report`: every chain at warning or above (at most `MAX_CHAINS`), then one
/// line counting the info findings. Empty when there are no findings.
pub fn lines(report: &Report) -> Vec<HeadlineLine> {
    let findings = &report.findings;
    let tz = report.display_tz;
    let line = |depth, role, index: usize| {
        let finding = &findings[index];
        HeadlineLine {
            depth,
            role,
            severity: Some(finding.severity),
            code: Some(finding.code),
            number: Some(index + 1),
            text: fill_summary(finding.headline_template(), &finding.metrics, tz),
        }
    };
    let more =
        |depth, text: String| HeadlineLine { depth, role: Role::More, severity: None, code: None, number: None, text };

    let (serious, info): (Vec<&Chain>, Vec<&Chain>) =
        report.chains.iter().partition(|chain| chain.severity(findings) >= Severity::Warning);
    let mut lines = Vec::new();
    for chain in serious.iter().take(MAX_CHAINS) {
        for (depth, &index) in chain.path.iter().enumerate() {
            lines.push(line(depth, if depth == 0 { Role::Effect } else { Role::CausedBy }, index));
        }
        let last = chain.first_cause();
        if let Some(text) = super::root_cause(&findings[last], tz) {
            lines.push(HeadlineLine {
                depth: chain.path.len(),
                role: Role::RootCause,
                severity: None,
                code: None,
                number: None,
                text,
            });
        }
        if chain.also.len() <= MAX_ALSO {
            lines.extend(chain.also.iter().map(|&index| line(1, Role::Also, index)));
        } else {
            lines.push(more(
                1,
                format!("and {} more findings of this chain: {}", chain.also.len(), by_code(report, &chain.also)),
            ));
        }
    }
    if serious.len() > MAX_CHAINS {
        let rest: Vec<usize> = serious[MAX_CHAINS..].iter().map(|chain| chain.path[0]).collect();
        lines.push(more(0, format!("and {} more chains: {}", rest.len(), by_code(report, &rest))));
    }
    if !info.is_empty() {
        let heads: Vec<usize> = info.iter().flat_map(|chain| chain.members()).collect();
        let noun = if heads.len() == 1 { "finding" } else { "findings" };
        lines.push(more(0, format!("{} info {noun}: {}", heads.len(), by_code(report, &heads))));
    }
    lines
}

/// `code [n]` for a few findings, `code ×count ([first]…[last])` grouped by code for many.
fn by_code(report: &Report, indices: &[usize]) -> String {
    let mut codes: Vec<(&str, Vec<usize>)> = Vec::new();
    for &index in indices {
        let code = report.findings[index].code;
        match codes.iter_mut().find(|(c, _)| *c == code) {
            Some((_, numbers)) => numbers.push(index + 1),
            None => codes.push((code, vec![index + 1])),
        }
    }
    codes
        .iter()
        .map(|(code, numbers)| match numbers.as_slice() {
            [one] => format!("{code} [{one}]"),
            [first, .., last] if numbers.len() > 3 => format!("{code} ×{} ([{first}]…[{last}])", numbers.len()),
            many => format!("{code} {}", many.iter().map(|n| format!("[{n}]")).collect::<Vec<_>>().join(" ")),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The report's headline (`lines`) as plain lines: indented by depth, each finding with
/// its severity, number and code, as the table prints it.
pub fn plain_lines(report: &Report) -> Vec<String> {
    lines(report)
        .iter()
        .map(|line| {
            let indent = "  ".repeat(line.depth);
            let finding = match (line.severity, line.code, line.number) {
                (Some(severity), Some(code), Some(number)) => {
                    format!("{} [{number}] {code}: ", severity.name().to_uppercase())
                }
                _ => String::new(),
            };
            let lead = match line.role {
                Role::Effect | Role::More => "",
                Role::CausedBy => "← caused by ",
                Role::RootCause => "← because ",
                Role::Also => "also ",
            };
            format!("{indent}{lead}{finding}{}", line.text)
        })
        .collect()
}
