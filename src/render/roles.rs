//! What a cited event means in the incident: the words a postmortem's timeline puts beside it.
//!
//! A finding cites events and names its moments with time metrics (`restart_at`, `rerun_at`).
//! An event plays the role of the metric whose time equals its own: the `process-start` that
//! stalled-rerun cites at its `restart_at` is "the process died before the first lock renewal".
//! This table is the only place that says so. It is read in order, and the first entry that fits
//! wins, so a more specific entry (with a condition) stands before a general one:
//! - `Key::Metric`: the finding's time metric equals the event's time (only events the finding
//!   cites are asked about, so a coincidence of times with another finding's event never counts);
//! - `Key::Kind`: the finding cites an event of this kind (for evidence that no metric names,
//!   such as the ledger's `round-failed` row beside a restart);
//! - an entry with `when` fits only when that flag metric of the finding has that value;
//! - a phrase is a summary template (`{metric}` filled in the display zone, `render::fill_summary`):
//!   an entry whose phrase names a metric the finding lacks does not fit.
//!
//! No entry fits: the renderer falls back to the event's kind. Entries marked `computed` are
//! moments no source recorded (a lock expiry is arithmetic): a renderer shows them as rows of
//! their own, with the arithmetic as their source, unless a cited event stands at that time.
//! docs/outputs/markdown.md describes the table for readers of the output.

use chrono::{DateTime, Utc};

use crate::model::{EventKind, Finding, Value};

use super::fill_summary;

/// What an entry matches in a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A time metric of the finding, equal to the event's time.
    Metric(&'static str),
    /// The kind of a cited event.
    Kind(EventKind),
}

/// One entry of `ROLES`.
#[derive(Debug, Clone, Copy)]
pub struct Role {
    /// The finding code the entry is for.
    pub code: &'static str,
    pub key: Key,
    /// A flag metric that must have this value for the entry to fit.
    pub when: Option<(&'static str, bool)>,
    /// `Key::Metric`: the kinds of event the metric is taken from (empty: any). Two sources often
    /// record one moment to the millisecond (BullMQ writes a job's `stalled` and its next
    /// `active` together): only the event the metric was read from plays its role.
    pub on: &'static [EventKind],
    /// What the moment is in the incident, as a summary template.
    pub phrase: &'static str,
    /// A moment no source recorded: shown as a row of its own (`Key::Metric` only).
    pub computed: bool,
}

const fn metric(code: &'static str, metric: &'static str, phrase: &'static str) -> Role {
    Role { code, key: Key::Metric(metric), when: None, on: &[], phrase, computed: false }
}

const fn kind(code: &'static str, kind: EventKind, phrase: &'static str) -> Role {
    Role { code, key: Key::Kind(kind), when: None, on: &[], phrase, computed: false }
}

impl Role {
    const fn when(self, flag: &'static str, value: bool) -> Role {
        Role { when: Some((flag, value)), ..self }
    }

    const fn on(self, kinds: &'static [EventKind]) -> Role {
        Role { on: kinds, ..self }
    }

    const fn computed(self) -> Role {
        Role { computed: true, ..self }
    }
}

/// The events an activation is read from.
const ACTIVATION: &[EventKind] = &[EventKind::JobActive, EventKind::RoundStarted];

/// Every role, in the order they are tried (see the module's introduction).
#[rustfmt::skip]
pub static ROLES: &[Role] = &[
    // stalled-rerun: the lost run, the restart that killed it, the expiry, the rerun.
    metric("stalled-rerun", "activated_at", "the run that was lost began: BullMQ locked the job").on(ACTIVATION),
    metric("stalled-rerun", "restart_at", "the process died before the first lock renewal (due by {first_renewal_due_at}): nothing renewed the lock").when("died_before_first_renewal", true),
    metric("stalled-rerun", "restart_at", "the process restarted; a lock renewal before it cannot be ruled out"),
    metric("stalled-rerun", "rerun_at", "a stalled check gave the job out again but BullMQ failed it over the stall limit: the processor did not run").when("processor_reran", false).on(ACTIVATION),
    metric("stalled-rerun", "rerun_at", "a stalled check gave the job out again: it re-ran from the start, {restart_to_rerun_s} after the restart").on(ACTIVATION),
    metric("stalled-rerun", "rerun_at", "a stalled check gave the job out again: it re-ran from the start").on(ACTIVATION),
    metric("stalled-rerun", "lock_expired_at", "the lock of the lost run expired (activation + lockDuration)").computed(),
    metric("stalled-rerun", "lock_expired_earliest_at", "the lock of the lost run expired at the earliest (no renewal)").computed(),
    metric("stalled-rerun", "old_worker_last_seen_at", "the old worker was still writing after its lock expired: it lived on without renewing"),
    kind("stalled-rerun", EventKind::RoundFailed, "the ledger marked the lost run failed; BullMQ's lock stays until it expires"),
    kind("stalled-rerun", EventKind::RoundStarted, "the ledger row of a run of the job"),
    kind("stalled-rerun", EventKind::JobStalled, "BullMQ's stalled check moved the job back to wait"),
    kind("stalled-rerun", EventKind::JobFailed, "BullMQ failed the job as soon as it was taken again"),
    // unlogged-stall
    metric("unlogged-stall", "recovered_at", "the job was recovered from a stall that no log line records"),
    metric("unlogged-stall", "activated_at", "the activation whose stall went unlogged"),
    // sweep-overlap
    metric("sweep-overlap", "b_started_at", "round {run_b} started while round {run_a} was still running: the overlap began"),
    metric("sweep-overlap", "overlap_end_at", "the first of the two rounds ended: the overlap ended after {overlap_s}"),
    metric("sweep-overlap", "a_started_at", "round {run_a} started"),
    metric("sweep-overlap", "a_ended_at", "round {run_a} ended"),
    metric("sweep-overlap", "b_ended_at", "round {run_b} ended"),
    // duplicate-selection
    metric("duplicate-selection", "selected_a_at", "first selection of {item}, by round {run_a}"),
    metric("duplicate-selection", "selected_b_at", "second selection of {item}, by round {run_b}: {delta_s} after the first"),
    kind("duplicate-selection", EventKind::EffectPosted, "an effect for {item} was delivered"),
    // duplicate-effect
    metric("duplicate-effect", "first_at", "the first delivery of the effect"),
    metric("duplicate-effect", "second_at", "the same effect delivered again, {gap_s} after the first"),
    metric("duplicate-effect", "last_at", "the last delivery of the effect"),
    // lock-headroom
    kind("lock-headroom", EventKind::JobActive, "the longest run ({max_s}) began"),
    kind("lock-headroom", EventKind::JobCompleted, "the longest run ended: {max_ratio} of lockDuration"),
    kind("lock-headroom", EventKind::JobFailed, "the longest run ended: {max_ratio} of lockDuration"),
    // stalled-limit-exceeded
    metric("stalled-limit-exceeded", "failed_at", "BullMQ failed the job over maxStalledCount without running the processor"),
    metric("stalled-limit-exceeded", "last_activated_at", "the last activation before BullMQ failed the job"),
    kind("stalled-limit-exceeded", EventKind::JobStalled, "a stall BullMQ counted towards maxStalledCount"),
    kind("stalled-limit-exceeded", EventKind::JobFailed, "the same failure, as another source recorded it"),
    // orphaned-round
    metric("orphaned-round", "started_at", "the round that never finished began"),
    metric("orphaned-round", "last_row_at", "the round's last row: it never wrote an end"),
    metric("orphaned-round", "owner_last_seen_at", "the round's owner was last seen"),
    metric("orphaned-round", "restart_at", "a process restarted after the owner's last sign"),
    metric("orphaned-round", "stalled_at", "BullMQ's stalled check moved the job back to wait"),
    metric("orphaned-round", "replaced_at", "the job ran again: round {replaced_by_run_id} replaced this one"),
    metric("orphaned-round", "replaced_at", "the job ran again: a new round replaced this one"),
    // retry-exhausted
    metric("retry-exhausted", "first_attempt_at", "the first attempt began"),
    metric("retry-exhausted", "dead_at", "the job was given up after {attempts} attempts"),
    // retry-storm
    metric("retry-storm", "failed_at", "the job first failed on invalid input"),
    metric("retry-storm", "retried_at", "the first retry after that failure"),
    metric("retry-storm", "first_at", "the herd's first retry"),
    metric("retry-storm", "last_at", "the herd's last retry"),
    // early-takeover
    metric("early-takeover", "previous_lease_set_at", "the previous owner's lease was set"),
    metric("early-takeover", "claimed_at", "another worker was granted the claim {early_by_s} before that lease ended"),
    // stale-completion, stale-heartbeat
    metric("stale-completion", "written_at", "a write reached the store after its lease had passed"),
    kind("stale-completion", EventKind::LeaseClaimed, "a claim of the job: a lease the write is measured against"),
    kind("stale-completion", EventKind::LeaseExtended, "a renewal of the job's lease"),
    metric("stale-heartbeat", "written_at", "a heartbeat reached the store after its lease had passed"),
    kind("stale-heartbeat", EventKind::LeaseClaimed, "a claim of the job: a lease the heartbeat is measured against"),
    // stuck-running
    metric("stuck-running", "oldest_since_at", "the oldest job still shown running began"),
    metric("stuck-running", "oldest_expired_at", "the lease or lock of the oldest running job ran out").computed(),
    metric("stuck-running", "evidence_end_at", "the case's last event: the job still showed running"),
    // lock-params-contradicted
    metric("lock-params-contradicted", "recovered_at", "a recovery earlier than the lock parameters allow"),
    metric("lock-params-contradicted", "activated_at", "the activation the recovery is measured from"),
    metric("lock-params-contradicted", "restart_at", "the restart between the two activations"),
    metric("lock-params-contradicted", "earlier_check_at", "a stalled check"),
    metric("lock-params-contradicted", "later_check_at", "the next stalled check, closer than stalledInterval allows"),
];

/// The phrase of `role` for `finding`, when the role fits it (its flag, its placeholders): a
/// template the renderer fills (`render::fill_summary`, or its own escaping fill).
fn fitted(role: &Role, finding: &Finding) -> Option<&'static str> {
    if let Some((flag, value)) = role.when
        && finding.get(flag) != Some(&Value::Flag(value))
    {
        return None;
    }
    // The zone does not matter here: only whether every placeholder is filled.
    let filled = fill_summary(role.phrase, &finding.metrics, chrono_tz::UTC);
    (!has_placeholder(&filled)).then_some(role.phrase)
}

/// Whether a filled template still names a metric (`{name}`): the finding lacks it.
fn has_placeholder(text: &str) -> bool {
    text.split('{').skip(1).any(|rest| {
        rest.find('}').is_some_and(|end| {
            let name = &rest[..end];
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        })
    })
}

fn time_of(finding: &Finding, metric: &str) -> Option<DateTime<Utc>> {
    match finding.get(metric) {
        Some(Value::Time(at)) => Some(*at),
        _ => None,
    }
}

/// What an event that `finding` cites, of `kind` at `at`, is in the incident: the phrase (a
/// template of the finding's metrics) of the first role that fits. `None`: no role does (say the
/// event's kind instead).
pub fn of_event(finding: &Finding, kind: EventKind, at: DateTime<Utc>) -> Option<&'static str> {
    let roles = || ROLES.iter().filter(|role| role.code == finding.code);
    let by_metric = roles().find_map(|role| match role.key {
        Key::Metric(name) if time_of(finding, name) == Some(at) && (role.on.is_empty() || role.on.contains(&kind)) => {
            fitted(role, finding)
        }
        _ => None,
    });
    by_metric.or_else(|| {
        roles().find_map(|role| match role.key {
            Key::Kind(of) if of == kind => fitted(role, finding),
            _ => None,
        })
    })
}

/// A moment of a finding that no source recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Computed {
    pub metric: &'static str,
    pub at: DateTime<Utc>,
    /// A template of the finding's metrics.
    pub phrase: &'static str,
    /// The arithmetic that gave it (`activated_at + lockDuration (1178 s)`), when the finding
    /// states it.
    pub formula: Option<String>,
}

/// The computed moments of `finding`, except those at the time of an event it cites
/// (`cited_at`): that event's row says it.
pub fn computed(finding: &Finding, cited_at: &[DateTime<Utc>]) -> Vec<Computed> {
    let mut moments: Vec<Computed> = Vec::new();
    for role in ROLES.iter().filter(|role| role.code == finding.code && role.computed) {
        let Key::Metric(metric) = role.key else { continue };
        let Some(at) = time_of(finding, metric) else { continue };
        if cited_at.contains(&at) || moments.iter().any(|m| m.metric == metric) {
            continue;
        }
        if let Some(phrase) = fitted(role, finding) {
            let formula = finding.derivations.iter().find(|d| d.result == metric).map(|d| d.formula.clone());
            moments.push(Computed { metric, at, phrase, formula });
        }
    }
    moments
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Severity;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    fn rerun(died_early: bool) -> Finding {
        let mut finding = Finding::new("stalled-rerun", Severity::Warning, at("2026-10-07T00:53:00Z"));
        finding
            .metric("activated_at", Value::Time(at("2026-10-07T00:33:00Z")))
            .metric("restart_at", Value::Time(at("2026-10-07T00:37:26Z")))
            .metric("first_renewal_due_at", Value::Time(at("2026-10-07T00:42:49Z")))
            .metric("died_before_first_renewal", Value::Flag(died_early))
            .metric("rerun_at", Value::Time(at("2026-10-07T00:53:00Z")))
            .metric("restart_to_rerun_s", Value::Seconds(934.0));
        if died_early {
            finding.metric("lock_expired_at", Value::Time(at("2026-10-07T00:52:38Z")));
            finding.derive("lock_expired_at", "activated_at + lockDuration (1178 s)");
        }
        finding
    }

    #[test]
    fn an_event_plays_the_role_of_the_metric_at_its_time() {
        let tz = chrono_tz::Asia::Seoul;
        let finding = rerun(true);
        let role = |kind, when| of_event(&finding, kind, at(when)).map(|p| fill_summary(p, &finding.metrics, tz));
        let restart = role(EventKind::ProcessStart, "2026-10-07T00:37:26Z").unwrap();
        assert_eq!(
            restart,
            "the process died before the first lock renewal (due by 09:42:49): nothing renewed the lock"
        );
        let rerun_role = role(EventKind::JobActive, "2026-10-07T00:53:00Z").unwrap();
        assert!(rerun_role.ends_with("15 min 34 s after the restart"), "{rerun_role}");
    }

    #[test]
    fn a_record_of_another_kind_at_the_same_moment_does_not_take_the_metrics_role() {
        let finding = rerun(true);
        let stalled = of_event(&finding, EventKind::JobStalled, at("2026-10-07T00:53:00Z"));
        assert_eq!(stalled, Some("BullMQ's stalled check moved the job back to wait"));
    }

    #[test]
    fn a_condition_that_does_not_hold_passes_to_the_next_entry() {
        let finding = rerun(false);
        let restart = of_event(&finding, EventKind::ProcessStart, at("2026-10-07T00:37:26Z"));
        assert_eq!(restart, Some("the process restarted; a lock renewal before it cannot be ruled out"));
    }

    #[test]
    fn a_phrase_naming_a_missing_metric_passes_to_the_next_entry() {
        let mut finding = rerun(true);
        finding.metrics.retain(|(name, _)| *name != "restart_to_rerun_s");
        let role = of_event(&finding, EventKind::JobActive, at("2026-10-07T00:53:00Z"));
        assert_eq!(role, Some("a stalled check gave the job out again: it re-ran from the start"));
    }

    #[test]
    fn evidence_no_metric_names_is_told_by_its_kind_or_not_at_all() {
        let finding = rerun(true);
        let failed = of_event(&finding, EventKind::RoundFailed, at("2026-10-07T00:37:26.912Z"));
        assert!(failed.unwrap().starts_with("the ledger marked the lost run failed"));
        assert_eq!(of_event(&finding, EventKind::JobProgress, at("2026-10-07T00:40:00Z")), None);
        let other = Finding { code: "no-such-finding", ..rerun(true) };
        assert_eq!(of_event(&other, EventKind::ProcessStart, at("2026-10-07T00:37:26Z")), None);
    }

    #[test]
    fn a_computed_moment_comes_with_its_arithmetic_unless_an_event_stands_there() {
        let finding = rerun(true);
        let moments = computed(&finding, &[]);
        assert_eq!(moments.len(), 1);
        assert_eq!(moments[0].metric, "lock_expired_at");
        assert_eq!(moments[0].at, at("2026-10-07T00:52:38Z"));
        assert_eq!(moments[0].formula.as_deref(), Some("activated_at + lockDuration (1178 s)"));
        assert!(computed(&finding, &[at("2026-10-07T00:52:38Z")]).is_empty());
        assert!(computed(&rerun(false), &[]).is_empty(), "no exact expiry, no row");
    }

    #[test]
    fn every_role_names_a_known_finding_and_a_placeholder_is_a_metric_name() {
        for role in ROLES {
            let detector = crate::detect::DETECTORS.iter().find(|d| d.code() == role.code);
            let doc = detector.unwrap_or_else(|| panic!("{} is not a finding code", role.code)).doc();
            assert!(!role.computed || matches!(role.key, Key::Metric(_)), "{role:?}");
            // Every metric an entry reads is one its finding documents: a renamed metric cannot
            // leave an entry that never fits.
            let mut names: Vec<&str> =
                role.phrase.split('{').skip(1).filter_map(|r| r.split_once('}')).map(|(n, _)| n).collect();
            names.extend(role.when.map(|(flag, _)| flag));
            if let Key::Metric(name) = role.key {
                names.push(name);
            }
            for name in names {
                assert!(doc.contains(&format!("`{name}`")), "{}: `{name}` is not a documented metric", role.code);
            }
        }
        assert!(has_placeholder("due by {first_renewal_due_at}"));
        assert!(!has_placeholder("a set {} or {Not a metric} or {"));
    }
}
