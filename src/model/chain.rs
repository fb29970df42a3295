//! How findings cause one another, arranged for the reader.
//!
//! Detectors state the links (each finding names the findings it follows from); this module only
//! arranges them. Findings linked to each other, directly or through others, form one group: one
//! incident. Each group is a `Chain`: its main path runs from its most severe effect back to its
//! first cause, and the group's other findings are listed beside it. A finding linked to nothing
//! is a chain of one. The report's findings are ordered by chain (the most severe first), and
//! within a chain causes before their effects, in time order: the order a postmortem tells it.

use serde::Serialize;

use super::{Finding, Severity};

/// One group of findings linked by cause, by position in the report's (arranged) findings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Chain {
    /// From the most severe effect back to the first cause: each follows from the next.
    pub path: Vec<usize>,
    /// The group's other findings (side effects, other findings of the same cause), in report order.
    pub also: Vec<usize>,
}

impl Chain {
    /// The most severe of its findings.
    pub fn severity(&self, findings: &[Finding]) -> Severity {
        self.members().map(|i| findings[i].severity).max().unwrap_or(Severity::Info)
    }

    /// The last finding of the path: the one the chain's first cause is stated by.
    pub fn first_cause(&self) -> usize {
        *self.path.last().expect("a chain's path holds at least its head")
    }

    /// Every finding of the chain: the path, then the others.
    pub fn members(&self) -> impl Iterator<Item = usize> + '_ {
        self.path.iter().chain(&self.also).copied()
    }
}

/// Orders `findings` for the report and groups them into chains. `caused_by` holds positions in
/// `findings` as given; in the result they are positions in the result. A link to itself or to a
/// finding that does not exist is dropped. Links are not required to point back in time: a
/// finding becomes visible when its evidence shows it (an unlogged stall at the stream's stalled
/// entry, before the rerun it belongs to). Should links form a cycle, time order breaks it.
pub fn arrange(mut findings: Vec<Finding>) -> (Vec<Finding>, Vec<Chain>) {
    let count = findings.len();
    for (index, finding) in findings.iter_mut().enumerate() {
        let mut causes = std::mem::take(&mut finding.caused_by);
        causes.retain(|&cause| cause < count && cause != index);
        causes.sort_unstable();
        causes.dedup();
        finding.caused_by = causes;
    }
    let groups = groups(&findings);
    // Causes before effects within a group, else time order: a topological order that takes the
    // earliest ready finding first.
    let mut ordered_groups: Vec<Vec<usize>> = groups.into_iter().map(|group| story_order(&findings, &group)).collect();
    ordered_groups.sort_by(|a, b| {
        let severity = |group: &[usize]| group.iter().map(|&i| findings[i].severity).max();
        let first = |group: &[usize]| group.iter().map(|&i| (findings[i].at, findings[i].code)).min();
        severity(b).cmp(&severity(a)).then_with(|| first(a).cmp(&first(b)))
    });

    let order: Vec<usize> = ordered_groups.iter().flatten().copied().collect();
    let mut position = vec![0; count];
    for (new, &old) in order.iter().enumerate() {
        position[old] = new;
    }
    let mut slots: Vec<Option<Finding>> = findings.into_iter().map(Some).collect();
    let mut arranged: Vec<Finding> = order.iter().map(|&old| slots[old].take().expect("each once")).collect();
    for finding in &mut arranged {
        for cause in &mut finding.caused_by {
            *cause = position[*cause];
        }
        finding.caused_by.sort_unstable();
    }

    let chains = ordered_groups
        .iter()
        .map(|group| {
            let members: Vec<usize> = group.iter().map(|&old| position[old]).collect();
            let path = main_path(&arranged, &members);
            let also = members.iter().copied().filter(|m| !path.contains(m)).collect();
            Chain { path, also }
        })
        .collect();
    (arranged, chains)
}

/// The connected groups of findings, each listed in index order; groups in order of their first
/// member.
fn groups(findings: &[Finding]) -> Vec<Vec<usize>> {
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let mut parent: Vec<usize> = (0..findings.len()).collect();
    for (index, finding) in findings.iter().enumerate() {
        for &cause in &finding.caused_by {
            let (a, b) = (root(&mut parent, index), root(&mut parent, cause));
            if a != b {
                parent[a.max(b)] = a.min(b);
            }
        }
    }
    let mut by_root: std::collections::BTreeMap<usize, Vec<usize>> = std::collections::BTreeMap::new();
    for index in 0..findings.len() {
        let r = root(&mut parent, index);
        by_root.entry(r).or_default().push(index);
    }
    by_root.into_values().collect()
}

/// `group` with every cause before its effects, otherwise by time (then code): Kahn's order,
/// taking the earliest ready finding first. A group can hold thousands of findings (one rerun, a
/// duplicate for each item it picked again), so nothing here is quadratic.
fn story_order(findings: &[Finding], group: &[usize]) -> Vec<usize> {
    use std::cmp::Reverse;
    use std::collections::{BinaryHeap, HashMap};
    let slot: HashMap<usize, usize> = group.iter().enumerate().map(|(slot, &i)| (i, slot)).collect();
    let mut waiting_on = vec![0usize; group.len()];
    let mut effects: Vec<Vec<usize>> = vec![Vec::new(); group.len()];
    for (s, &i) in group.iter().enumerate() {
        for cause in &findings[i].caused_by {
            if let Some(&c) = slot.get(cause) {
                waiting_on[s] += 1;
                effects[c].push(s);
            }
        }
    }
    let key = |s: usize| Reverse((findings[group[s]].at, findings[group[s]].code, group[s], s));
    let mut ready: BinaryHeap<_> = (0..group.len()).filter(|&s| waiting_on[s] == 0).map(key).collect();
    let mut done = Vec::with_capacity(group.len());
    let mut placed = vec![false; group.len()];
    while done.len() < group.len() {
        let s = match ready.pop() {
            Some(Reverse((_, _, _, s))) => s,
            // Links only point back in time, so a cycle can only be among equal times: time
            // order (then position) breaks it.
            None => (0..group.len()).filter(|&s| !placed[s]).min_by_key(|&s| key(s).0).expect("one is left"),
        };
        if placed[s] {
            continue;
        }
        placed[s] = true;
        done.push(group[s]);
        for &effect in &effects[s] {
            waiting_on[effect] = waiting_on[effect].saturating_sub(1);
            if waiting_on[effect] == 0 && !placed[effect] {
                ready.push(key(effect));
            }
        }
    }
    done
}

/// From an effect of the group (a finding nothing else follows from) back through its causes to
/// a finding that follows from nothing. The effect is the one whose path holds the most severe
/// finding, then the most severe itself, then the latest (the end of the story); each step back
/// takes the most severe cause, then the earliest.
fn main_path(findings: &[Finding], members: &[usize]) -> Vec<usize> {
    let causes: std::collections::HashSet<usize> =
        members.iter().flat_map(|&m| findings[m].caused_by.iter().copied()).collect();
    let path_from = |head: usize| {
        let mut path = vec![head];
        let mut current = head;
        while let Some(&next) = findings[current]
            .caused_by
            .iter()
            .filter(|c| !path.contains(c))
            .max_by_key(|&&c| (findings[c].severity, std::cmp::Reverse(findings[c].at), std::cmp::Reverse(c)))
        {
            path.push(next);
            current = next;
        }
        path
    };
    let mut effects: Vec<usize> = members.iter().copied().filter(|m| !causes.contains(m)).collect();
    if effects.is_empty() {
        // Every member is a cause of another (a cycle): any may lead.
        effects = members.to_vec();
    }
    effects
        .into_iter()
        .map(|head| {
            let path = path_from(head);
            let worst = path.iter().map(|&i| findings[i].severity).max();
            ((worst, findings[head].severity, findings[head].at, head), path)
        })
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, path)| path)
        .expect("a group has a member")
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, TimeZone, Utc};

    fn at(s: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 10, 7, 0, 50, 0).unwrap() + chrono::TimeDelta::seconds(i64::from(s))
    }

    fn finding(code: &'static str, severity: Severity, s: u32, caused_by: &[usize]) -> Finding {
        let mut f = Finding::new(code, severity, at(s));
        f.caused_by = caused_by.to_vec();
        f
    }

    fn codes(findings: &[Finding], ids: &[usize]) -> Vec<&'static str> {
        ids.iter().map(|&i| findings[i].code).collect()
    }

    #[test]
    fn the_reference_incident_reads_as_one_chain_from_cause_to_effect() {
        // As the detectors emit them, in time order: headroom, rerun, unlogged, overlap, duplicate.
        let findings = vec![
            finding("lock-headroom", Severity::Info, 0, &[]),
            finding("stalled-rerun", Severity::Warning, 180, &[]),
            finding("unlogged-stall", Severity::Warning, 180, &[1]),
            finding("sweep-overlap", Severity::Warning, 243, &[1]),
            finding("duplicate-selection", Severity::Error, 246, &[3]),
        ];
        let (arranged, chains) = arrange(findings);
        let order: Vec<&str> = arranged.iter().map(|f| f.code).collect();
        assert_eq!(
            order,
            ["stalled-rerun", "unlogged-stall", "sweep-overlap", "duplicate-selection", "lock-headroom"],
            "the incident first, causes before effects; the unlinked info finding last"
        );
        assert_eq!(chains.len(), 2);
        assert_eq!(codes(&arranged, &chains[0].path), ["duplicate-selection", "sweep-overlap", "stalled-rerun"]);
        assert_eq!(codes(&arranged, &chains[0].also), ["unlogged-stall"]);
        assert_eq!(chains[0].severity(&arranged), Severity::Error);
        assert_eq!(codes(&arranged, &chains[1].path), ["lock-headroom"]);
        // Links now point at the new positions.
        assert_eq!(arranged[3].caused_by, vec![2]);
        assert_eq!(arranged[2].caused_by, vec![0]);
    }

    #[test]
    fn a_link_to_itself_or_to_no_finding_is_dropped_and_a_later_cause_is_kept() {
        let findings = vec![finding("a", Severity::Warning, 10, &[1, 0, 7]), finding("b", Severity::Warning, 20, &[])];
        let (arranged, chains) = arrange(findings);
        let order: Vec<&str> = arranged.iter().map(|f| f.code).collect();
        assert_eq!(order, ["b", "a"], "a cause is told before its effect even when it became visible later");
        assert_eq!(arranged[1].caused_by, vec![0], "only the link to b is left");
        assert_eq!(chains.len(), 1);
        assert_eq!(codes(&arranged, &chains[0].path), ["a", "b"]);
    }

    #[test]
    fn a_severe_cause_of_a_mild_effect_makes_the_chain_severe() {
        // An early takeover (error) whose late write the fence refused (info).
        let findings = vec![
            finding("early-takeover", Severity::Error, 12, &[]),
            finding("stale-completion", Severity::Info, 14, &[0]),
        ];
        let (arranged, chains) = arrange(findings);
        assert_eq!(chains[0].severity(&arranged), Severity::Error);
        assert_eq!(codes(&arranged, &chains[0].path), ["stale-completion", "early-takeover"]);
    }

    #[test]
    fn the_effect_leading_a_chain_is_the_one_behind_which_the_worst_finding_is() {
        // Two effects of one cause: a mild one late, a severe one early.
        let findings = vec![
            finding("cause", Severity::Warning, 0, &[]),
            finding("severe", Severity::Error, 5, &[0]),
            finding("mild", Severity::Info, 9, &[0]),
        ];
        let (arranged, chains) = arrange(findings);
        assert_eq!(codes(&arranged, &chains[0].path), ["severe", "cause"]);
        assert_eq!(codes(&arranged, &chains[0].also), ["mild"]);
    }

    #[test]
    fn equal_times_linked_both_ways_still_give_every_finding_once() {
        let findings = vec![finding("a", Severity::Warning, 10, &[1]), finding("b", Severity::Error, 10, &[0])];
        let (arranged, chains) = arrange(findings);
        assert_eq!(arranged.len(), 2);
        let members: Vec<usize> = chains[0].members().collect();
        assert_eq!(members.len(), 2, "{chains:?}");
        assert_eq!(arranged[chains[0].path[0]].code, "b", "the most severe heads the path");
    }

    #[test]
    fn chains_are_ordered_by_severity_then_time_and_unlinked_findings_follow_suit() {
        let findings = vec![
            finding("w-early", Severity::Warning, 1, &[]),
            finding("e-late", Severity::Error, 50, &[]),
            finding("w-cause", Severity::Warning, 5, &[]),
            finding("e-effect", Severity::Error, 9, &[2]),
            finding("i", Severity::Info, 0, &[]),
        ];
        let (arranged, chains) = arrange(findings);
        let order: Vec<&str> = arranged.iter().map(|f| f.code).collect();
        assert_eq!(order, ["w-cause", "e-effect", "e-late", "w-early", "i"]);
        assert_eq!(chains.len(), 4);
    }

    #[test]
    fn one_rerun_behind_thousands_of_duplicates_is_one_chain_with_them_beside_its_path() {
        let mut findings = vec![
            finding("stalled-rerun", Severity::Warning, 0, &[]),
            finding("sweep-overlap", Severity::Warning, 5, &[0]),
        ];
        findings.extend((0..20_000).map(|i| finding("duplicate-selection", Severity::Error, 10 + i, &[1])));
        let (arranged, chains) = arrange(findings);
        assert_eq!(chains.len(), 1);
        assert_eq!(codes(&arranged, &chains[0].path), ["duplicate-selection", "sweep-overlap", "stalled-rerun"]);
        assert_eq!(chains[0].also.len(), 19_999);
        assert_eq!(arranged[0].code, "stalled-rerun");
        assert_eq!(arranged[chains[0].path[0]].at, at(10 + 19_999), "the latest of the equally severe effects leads");
    }
}
