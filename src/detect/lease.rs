//! The lease a job's owner held at a given moment, rebuilt from a lease ledger; shared by
//! `stale-completion`, `stale-heartbeat` and `early-takeover`.
//!
//! All three ask the same question of one ledger row: who held this job just before it, with
//! which generation, until when. The answer comes from the store's own rows, never from the
//! worker's view: only a claim or heartbeat the store accepted (or whose outcome the ledger does
//! not record) grants or extends a lease, and a refused one changes nothing. A lease ends at its
//! `lease_until` (the boundary is closed: at that instant it is already over, as in the seed's
//! `lease_until > :store_now` check), or earlier when its holder completed, failed the attempt or
//! the job went dead. Rows of one job are compared by time; rows at the same instant keep the
//! ledger's order (one store wrote them), except that a release at the same instant as a claim
//! counts as before it, so that a hand-over in the same tick is never called early.
//!
//! BullMQ has no ledger of leases, but it refuses a late worker's calls with `Missing lock for job
//! <id>. <cmd>` or `Lock mismatch …`, and its `error` event says `could not renew lock for job
//! <id>`: those are the same fence working, a refused write without generation numbers.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::model::timeline::EventId;
use crate::model::{Event, EventKind, Finding, JobKey, Severity, Text, Value};
use crate::time::seconds_between;

use super::Context;

/// BullMQ's `error` event text when a renewal finds the lock gone (v5.33.0+).
pub const RENEWAL_FAILED: &str = "could not renew lock for job";

/// A row counts as granted when the store accepted it or the ledger does not say.
pub fn granted(event: &Event) -> bool {
    event.lease().accepted != Some(false)
}

/// Two rows come from the same lease holder: the same generation when both carry one, else the
/// same owner.
pub fn same_holder(a: &Event, b: &Event) -> bool {
    match (a.lease().generation, b.lease().generation) {
        (Some(x), Some(y)) => x == y,
        _ => matches!((&a.worker, &b.worker), (Some(x), Some(y)) if x == y),
    }
}

fn anonymous(event: &Event) -> bool {
    event.lease().generation.is_none() && event.worker.is_none()
}

/// One lease as the store granted it.
#[derive(Debug, Clone, PartialEq)]
pub struct Grant {
    /// The accepted claim that started it.
    pub claim: EventId,
    /// The row that set `until`: the claim or its latest accepted extension.
    pub set_by: EventId,
    pub until: Option<DateTime<Utc>>,
    /// The row that ended it early (an accepted completion, a failed attempt, the job going dead).
    pub released_by: Option<EventId>,
}

impl Grant {
    /// The lease started by `claim`, as it stood just before the row `before`.
    pub fn as_of(context: &Context, job_events: &[EventId], claim: EventId, before: EventId) -> Grant {
        let timeline = context.timeline;
        let holder = timeline.get(claim);
        let cutoff = timeline.get(before).at();
        let mut grant = Grant { claim, set_by: claim, until: holder.lease().lease_until, released_by: None };
        for &id in job_events {
            if id <= claim || id == before {
                continue;
            }
            let event = timeline.get(id);
            match event.kind {
                EventKind::LeaseExtended
                    if id < before
                        && granted(event)
                        && same_holder(event, holder)
                        && event.lease().lease_until.is_some() =>
                {
                    grant.set_by = id;
                    grant.until = event.lease().lease_until;
                }
                EventKind::LeaseCompleted | EventKind::RoundFailed | EventKind::JobDead
                    if grant.released_by.is_none()
                        && event.at() <= cutoff
                        && granted(event)
                        && (event.kind == EventKind::JobDead || same_holder(event, holder) || anonymous(event)) =>
                {
                    grant.released_by = Some(id);
                }
                _ => {}
            }
        }
        grant
    }
}

/// The latest claim the store granted before `row`, among those `pick` accepts.
fn latest_claim(
    context: &Context,
    job_events: &[EventId],
    row: EventId,
    pick: impl Fn(&Event) -> bool,
) -> Option<EventId> {
    job_events.iter().copied().filter(|&id| id < row).rev().find(|&id| {
        let event = context.timeline.get(id);
        event.kind == EventKind::LeaseClaimed && granted(event) && pick(event)
    })
}

/// The lease in force just before `row`: the latest granted claim, whoever holds it.
pub fn current_grant(context: &Context, job_events: &[EventId], row: EventId) -> Option<Grant> {
    latest_claim(context, job_events, row, |_| true).map(|claim| Grant::as_of(context, job_events, claim, row))
}

/// What the store knew about the writer of `row` just before it.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    /// The writer's own lease (same generation, else same owner).
    pub own: Option<Grant>,
    /// The latest claim granted before the row, whoever holds it.
    pub current: Option<EventId>,
    /// The highest generation handed out before the row.
    pub current_generation: Option<u64>,
    /// A later claim by another holder replaced the writer's.
    pub superseded: bool,
    /// The row came at or after the end of the writer's own lease.
    pub expired: bool,
}

impl Judgement {
    pub fn of(context: &Context, job_events: &[EventId], row: EventId) -> Judgement {
        let timeline = context.timeline;
        let writer = timeline.get(row);
        let own = if anonymous(writer) {
            None
        } else {
            latest_claim(context, job_events, row, |claim| same_holder(claim, writer))
                .map(|claim| Grant::as_of(context, job_events, claim, row))
        };
        let current = latest_claim(context, job_events, row, |_| true);
        let current_generation = job_events
            .iter()
            .copied()
            .filter(|&id| id < row)
            .map(|id| timeline.get(id))
            .filter(|e| e.kind == EventKind::LeaseClaimed && granted(e))
            .filter_map(|e| e.lease().generation)
            .max();
        let superseded = match (writer.lease().generation, current_generation) {
            (Some(mine), Some(newest)) => mine < newest,
            _ => match (&own, current) {
                (Some(own), Some(current)) => own.claim != current && !same_holder(timeline.get(current), writer),
                _ => false,
            },
        };
        let expired = own.as_ref().and_then(|g| g.until).is_some_and(|until| writer.at() >= until);
        Judgement { own, current, current_generation, superseded, expired }
    }

    pub fn is_stale(&self) -> bool {
        self.superseded || self.expired
    }
}

/// Which lease write a BullMQ refusal stands for: `extendLock` calls and renewal failures are
/// heartbeats, every other refused command (moveToFinished, moveToDelayed, …) a completion.
pub fn bullmq_refusal(event: &Event) -> Option<EventKind> {
    if !matches!(event.kind, EventKind::LockRefused | EventKind::Error) {
        return None;
    }
    let detail = event.detail_str().unwrap_or_default().to_ascii_lowercase();
    match event.kind {
        EventKind::LockRefused if detail.contains("extendlock") => Some(EventKind::LeaseExtended),
        EventKind::LockRefused => Some(EventKind::LeaseCompleted),
        EventKind::Error if detail.contains(RENEWAL_FAILED) => Some(EventKind::LeaseExtended),
        _ => None,
    }
}

/// The words that differ between a stale completion and a stale heartbeat.
pub struct WriteKind {
    pub code: &'static str,
    /// `LeaseCompleted` or `LeaseExtended`.
    pub event: EventKind,
    /// "wrote the result of job {job_id}", "extended its lease on job {job_id}".
    pub did: &'static str,
    /// "result", "lease extension".
    pub noun: &'static str,
    /// What an accepted stale write did.
    pub harm: &'static str,
    /// What an accepted stale write needs in the store.
    pub fix: &'static str,
}

/// A job and a lease holder in it: (job id, owner, generation).
type Holder = (JobKey, Option<Text>, Option<u64>);

/// Every stale write of the kind: accepted (error) and unknown (warning) ones one by one, refused
/// ones (info) one finding per job and holder, counted.
pub fn stale_writes(context: &Context, kind: &WriteKind) -> Vec<Finding> {
    let timeline = context.timeline;
    let mut findings = Vec::new();
    if !context.jobs_have(&[kind.event, EventKind::LockRefused, EventKind::Error]) {
        return findings;
    }
    // Refused writes of one job by one holder: a late worker retrying is one story.
    let mut refused: BTreeMap<Holder, Vec<(EventId, Judgement)>> = BTreeMap::new();
    let mut bullmq: BTreeMap<(JobKey, Option<Text>), Vec<EventId>> = BTreeMap::new();
    for (job, job_events) in context.job_events.iter() {
        for &id in job_events {
            let event = timeline.get(id);
            if bullmq_refusal(event) == Some(kind.event) {
                bullmq.entry((job, event.worker)).or_default().push(id);
                continue;
            }
            if event.kind != kind.event {
                continue;
            }
            let judgement = Judgement::of(context, job_events, id);
            if !judgement.is_stale() {
                continue;
            }
            if event.lease().accepted == Some(false) {
                refused.entry((job, event.worker, event.lease().generation)).or_default().push((id, judgement));
            } else {
                findings.push(ledger_finding(context, kind, job, &[(id, judgement)]));
            }
        }
    }
    for ((job, _, _), writes) in refused {
        findings.push(ledger_finding(context, kind, job, &writes));
    }
    for ((job, _), refusals) in bullmq {
        findings.push(bullmq_finding(context, kind, job, &refusals));
    }
    findings
}

fn ledger_finding(context: &Context, kind: &WriteKind, job: JobKey, writes: &[(EventId, Judgement)]) -> Finding {
    let timeline = context.timeline;
    let (first, judgement) = &writes[0];
    let write = timeline.get(*first);
    let severity = match write.lease().accepted {
        Some(true) => Severity::Error,
        Some(false) => Severity::Info,
        None => Severity::Warning,
    };
    let mut finding = Finding::new(kind.code, severity, write.at());
    finding.metric("job_id", Value::Text(job.to_string()));
    let owner = write.worker;
    if let Some(owner) = &owner {
        finding.metric("owner", Value::Text(owner.to_string()));
    }
    if let Some(generation) = write.lease().generation {
        finding.metric("generation", Value::Count(generation));
    }
    if let Some(current) = judgement.current_generation {
        finding.metric("current_generation", Value::Count(current));
    }
    let current_owner = judgement.current.filter(|_| judgement.superseded).and_then(|id| timeline.get(id).worker);
    if let Some(current_owner) = &current_owner {
        finding.metric("current_owner", Value::Text(current_owner.to_string()));
    }
    let until = judgement.own.as_ref().and_then(|g| g.until);
    if let Some(until) = until {
        finding.metric("lease_until", Value::Time(until));
    }
    finding.metric("written_at", Value::Time(write.at()));
    let late_by = until.filter(|_| judgement.expired).map(|until| seconds_between(until, write.at()));
    if let Some(late_by) = late_by {
        finding.metric("late_by_s", Value::Seconds(late_by));
        finding.derive("late_by_s", "written_at − lease_until");
    }
    if let (EventKind::LeaseExtended, Some(true), Some(to)) =
        (kind.event, write.lease().accepted, write.lease().lease_until)
    {
        finding.metric("extended_to", Value::Time(to));
    }
    if let Some(accepted) = write.lease().accepted {
        finding.metric("accepted", Value::Flag(accepted));
    }
    let because = match (judgement.expired, judgement.superseded) {
        (true, true) => "lease expired; generation superseded",
        (true, false) => "lease expired",
        _ => "generation superseded",
    };
    finding.metric("stale_because", Value::Text(because.to_string()));
    if write.lease().accepted == Some(false) {
        finding.metric("rejected_count", Value::Count(writes.len() as u64));
    }

    if let Some(own) = &judgement.own {
        finding.evidence.extend([own.claim, own.set_by]);
    }
    if judgement.superseded {
        finding.evidence.extend(judgement.current);
    }
    finding.evidence.extend(writes.iter().map(|(id, _)| *id));
    finding.evidence.sort_unstable();
    finding.evidence.dedup();

    if judgement.own.is_none() {
        finding.note("no claim of this holder was found before the row: its own lease is unknown, only its generation could be judged");
    } else if until.is_none() {
        finding.note("the holder's claim carries no lease_until: only its generation could be judged");
    }
    if late_by == Some(0.0) {
        finding.note("the row came at the very instant the lease ended: the boundary is closed (a write needs lease_until > the store's now), so it is stale");
    }
    finding.note("times and lease_until are read from the ledger: the store's clock, the one the fence compares");

    let who = if owner.is_some() { "{owner}" } else { "A worker" };
    let generation = if write.lease().generation.is_some() { " with generation {generation}" } else { "" };
    let expiry = match late_by {
        Some(0.0) => "at the very instant its lease ended ({lease_until})",
        Some(_) => "{late_by_s} after its lease ended at {lease_until}",
        None => "",
    };
    let taker = match (judgement.current_generation.is_some(), current_owner.is_some()) {
        (true, true) => "generation {current_generation} ({current_owner}) had taken the job over",
        (true, false) => "generation {current_generation} had taken the job over",
        (false, true) => "{current_owner} had taken the job over",
        (false, false) => "another owner had taken the job over",
    };
    let reason = match (judgement.expired, judgement.superseded) {
        (true, true) => format!("{expiry} and after {taker}"),
        (true, false) => expiry.to_string(),
        _ => format!("after {taker}"),
    };
    finding.summary = match write.lease().accepted {
        Some(true) => {
            finding.note(kind.fix);
            note_current_owner(context, kind, job, *first, judgement, &mut finding);
            format!(
                "{who} {}{generation} at {{written_at}}, {reason}, yet the store accepted it: {}.",
                kind.did, kind.harm
            )
        }
        Some(false) => format!(
            "The store refused the {} {who} sent for job {{job_id}}{generation} at {{written_at}}, {reason}: the fence held ({{rejected_count}} refused).",
            kind.noun
        ),
        None => {
            finding.note("the ledger has no outcome for this row: whether the store accepted it is unknown");
            format!(
                "{who} {}{generation} at {{written_at}}, {reason}; the ledger does not say whether the store accepted it.",
                kind.did
            )
        }
    };
    finding
}

/// For an accepted stale completion: did the current owner write its own result, before or after?
fn note_current_owner(
    context: &Context,
    kind: &WriteKind,
    job: JobKey,
    write: EventId,
    judgement: &Judgement,
    finding: &mut Finding,
) {
    let (Some(current), true, EventKind::LeaseCompleted) = (judgement.current, judgement.superseded, kind.event) else {
        return;
    };
    let timeline = context.timeline;
    let holder = timeline.get(current);
    let job_events = context.events_of_job(job);
    let own_write = job_events.iter().copied().find(|&id| {
        let event = timeline.get(id);
        id > current
            && id != write
            && event.kind == EventKind::LeaseCompleted
            && granted(event)
            && same_holder(event, holder)
    });
    let Some(id) = own_write else {
        finding.note("the current owner recorded no result of its own: the stale result is the one that stands");
        return;
    };
    finding.evidence.push(id);
    finding.evidence.sort_unstable();
    let gap = seconds_between(timeline.get(write).at(), timeline.get(id).at());
    if id < write {
        finding.note(format!(
            "the current owner had written its result {:.3} s before: the stale write replaced it",
            -gap
        ));
    } else {
        finding.note(format!("the current owner wrote its result {gap:.3} s later: which one stands depends on the last write the store kept, and the stale one was visible in between"));
    }
}

fn bullmq_finding(context: &Context, kind: &WriteKind, job: JobKey, refusals: &[EventId]) -> Finding {
    let timeline = context.timeline;
    let first = timeline.get(refusals[0]);
    let mut finding = Finding::new(kind.code, Severity::Info, first.at());
    finding.metric("job_id", Value::Text(job.to_string()));
    if let Some(owner) = &first.worker {
        finding.metric("owner", Value::Text(owner.to_string()));
    }
    finding.metric("written_at", Value::Time(first.at()));
    finding.metric("accepted", Value::Flag(false));
    let renewal = first.kind == EventKind::Error;
    let command = if renewal { Some("extendLock".into()) } else { first.detail() };
    if let Some(command) = &command {
        finding.metric("command", Value::Text(command.to_string()));
    }
    finding.metric("stale_because", Value::Text("lock lost".to_string()));
    finding.metric("rejected_count", Value::Count(refusals.len() as u64));
    finding.evidence.extend(refusals);
    let bull = context.params_of(job).bull_version.is_some();
    let library = if bull { "Bull" } else { "BullMQ" };
    finding.note(format!("{library} keeps no generations or lease times in its exports: its lock (bull:<queue>:<id>:lock, a token with a time to live) was gone or held by another token when the call arrived"));
    if kind.event == EventKind::LeaseCompleted {
        finding.note("the processor had run to its end: whatever it did outside Redis (posted a review, sent a notification) is not undone by the refusal");
    }
    let who = if first.worker.is_some() { " from worker {owner}" } else { "" };
    // Bull's refusal names the move, not a command (`Missing lock for job 7 failed`): "refused
    // failed" would read as nonsense.
    let call = match command.as_deref() {
        Some("finished" | "failed" | "completed") => "the move to {command}",
        Some(_) => "{command}",
        None => "a call",
    };
    let shared = if bull && kind.event == EventKind::LeaseCompleted { shared_token(context, job, first) } else { None };
    if let Some((activations, completed)) = shared {
        // Bull's token is the Queue instance's (lib/queue.js `this.token`), not the attempt's.
        finding.severity = Severity::Warning;
        finding.metric("shared_token", Value::Flag(true));
        finding.metric("accepted_completion_at", Value::Time(timeline.get(completed).at()));
        finding.evidence.extend(activations.iter().copied().chain([completed]));
        finding.evidence.sort_unstable();
        finding.evidence.dedup();
        finding.note("Bull's lock token belongs to the Queue instance, not to the attempt: a worker that runs a job again under the same Queue can finish the first attempt late and pass the lock check, after which the rerun's own finish is the one refused. Which attempt finished first is not in the evidence: if it was the first, its stale result was accepted (the rerun's result never was)");
        finding.summary = format!(
            "Bull refused {call} for job {{job_id}} at {{written_at}}{who}, after that worker ran the job twice under one lock token and a completion of it was accepted at {{accepted_completion_at}}: one of the two attempts finished without owning the job, and Bull's token check cannot tell them apart."
        );
        return finding;
    }
    finding.summary = format!(
        "{library} refused {call} for job {{job_id}} at {{written_at}}{who}: the worker no longer held the job's lock, so its {} was discarded (the fence held; {{rejected_count}} refused).",
        kind.noun
    );
    finding
}

/// Bull's shared-token case (`crate::model::bull`): the refusing worker activated the job twice
/// and a completion by that worker came after its second activation and before the refusal. The
/// activations and the completion, when so.
fn shared_token(context: &Context, job: JobKey, refusal: &Event) -> Option<(Vec<EventId>, EventId)> {
    let timeline = context.timeline;
    let worker = refusal.worker?;
    let mine = |id: &EventId, kind: EventKind| {
        let event = timeline.get(*id);
        event.kind == kind && event.worker == Some(worker) && event.moment() <= refusal.moment()
    };
    let events = context.events_of_job(job);
    let activations: Vec<EventId> = events.iter().copied().filter(|id| mine(id, EventKind::JobActive)).collect();
    let second = timeline.get(*activations.get(1)?).moment();
    let completed =
        events.iter().copied().find(|id| mine(id, EventKind::JobCompleted) && timeline.get(*id).moment() >= second)?;
    Some((activations, completed))
}

/// What a stale write follows from: the early takeover or the rerun of the same job that made it
/// stale, at or before the write.
pub fn follows_from(finding: &Finding, found: &super::links::Found) -> Vec<usize> {
    let written = super::links::time(finding, "written_at").unwrap_or(finding.at);
    let mut codes = vec!["early-takeover"];
    codes.extend_from_slice(super::links::RERUNS);
    found.of_job_before(&codes, finding, written)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::detect::Settings;
    use crate::model::{Channel, LockParams, Origin, Timeline};

    /// Logical second `t` of the seed's clock: 2026-10-01T00:00:00Z + t s.
    pub fn t(seconds: f64) -> DateTime<Utc> {
        #[allow(clippy::cast_possible_truncation)]
        let millis = (seconds * 1000.0).round() as i64;
        DateTime::parse_from_rfc3339("2026-10-01T00:00:00Z").unwrap().with_timezone(&Utc)
            + chrono::Duration::milliseconds(millis)
    }

    /// A lease-ledger row of job `job`: (line, time, kind, worker, generation, lease_until, accepted).
    pub fn row(
        line: u32,
        at: f64,
        kind: EventKind,
        worker: &str,
        generation: Option<u64>,
        until: Option<f64>,
        accepted: Option<bool>,
    ) -> Event {
        let origin = Origin { channel: Channel::Ledger, source: 0, line };
        let mut event = Event::new(t(at).into(), kind, origin);
        event.edit().job_id = Some("job-1".into());
        event.edit().worker = Some(crate::model::Text::from(worker));
        event.lease_mut().generation = generation;
        event.lease_mut().lease_until = until.map(t);
        event.lease_mut().accepted = accepted;
        event
    }

    pub fn detect(detector: &dyn super::super::Detector, events: Vec<Event>) -> Vec<Finding> {
        let timeline = Timeline::new(events);
        let params = LockParams::default();
        let settings = Settings::default();
        detector.detect(&Context::new(&timeline, &params, &settings))
    }

    fn judge(events: Vec<Event>, row: EventId) -> Judgement {
        let timeline = Timeline::new(events);
        let params = LockParams::default();
        let settings = Settings::default();
        let context = Context::new(&timeline, &params, &settings);
        Judgement::of(&context, context.events_of_job("job-1".into()), row)
    }

    #[test]
    fn a_refused_claim_changes_nothing_and_a_takeover_supersedes() {
        use EventKind::{LeaseClaimed, LeaseCompleted};
        let events = vec![
            row(1, 0.0, LeaseClaimed, "worker-a", Some(1), Some(10.0), Some(true)),
            row(2, 5.0, LeaseClaimed, "worker-b", None, None, Some(false)),
            row(3, 11.0, LeaseClaimed, "worker-b", Some(2), Some(21.0), Some(true)),
            row(4, 12.0, LeaseCompleted, "worker-a", Some(1), None, Some(false)),
        ];
        let judgement = judge(events, 3);
        assert_eq!(judgement.own.as_ref().map(|g| g.claim), Some(0));
        assert_eq!(judgement.own.as_ref().and_then(|g| g.until), Some(t(10.0)));
        assert_eq!(judgement.current, Some(2));
        assert_eq!(judgement.current_generation, Some(2));
        assert!(judgement.superseded && judgement.expired);
    }

    #[test]
    fn heartbeats_extend_and_releases_end_a_lease() {
        use EventKind::{LeaseClaimed, LeaseExtended, RoundFailed};
        let events = vec![
            row(1, 0.0, LeaseClaimed, "worker-a", Some(1), Some(10.0), Some(true)),
            row(2, 7.0, LeaseExtended, "worker-a", Some(1), Some(17.0), Some(true)),
            row(3, 8.0, LeaseExtended, "worker-a", Some(1), Some(99.0), Some(false)),
            row(4, 9.0, RoundFailed, "worker-a", Some(1), None, None),
            row(5, 9.5, LeaseClaimed, "worker-b", Some(2), Some(19.5), Some(true)),
        ];
        let timeline = Timeline::new(events);
        let params = LockParams::default();
        let settings = Settings::default();
        let context = Context::new(&timeline, &params, &settings);
        let grant = Grant::as_of(&context, context.events_of_job("job-1".into()), 0, 4);
        assert_eq!((grant.set_by, grant.until), (1, Some(t(17.0))), "the refused heartbeat does not count");
        assert_eq!(grant.released_by, Some(3));
    }

    #[test]
    fn without_generations_the_owner_decides() {
        use EventKind::{LeaseClaimed, LeaseCompleted};
        let events = vec![
            row(1, 0.0, LeaseClaimed, "worker-a", None, Some(10.0), None),
            row(2, 10.0, LeaseClaimed, "worker-b", None, Some(20.0), None),
            row(3, 9.0, LeaseCompleted, "worker-a", None, None, Some(true)),
        ];
        // Sorted: claim a (0), completion a (1, at 9 s), claim b (2).
        let judgement = judge(events, 1);
        assert!(!judgement.is_stale(), "within its lease and before the takeover");
    }

    #[test]
    fn bullmq_refusals_are_sorted_by_command() {
        let mut event = row(1, 0.0, EventKind::LockRefused, "41877", None, None, None);
        event.set_detail(Some("moveToFinished".into()));
        assert_eq!(bullmq_refusal(&event), Some(EventKind::LeaseCompleted));
        event.set_detail(Some("extendLock".into()));
        assert_eq!(bullmq_refusal(&event), Some(EventKind::LeaseExtended));
        event.kind = EventKind::Error;
        event.set_detail(Some("ERROR [BullWorker] could not renew lock for job 42".into()));
        assert_eq!(bullmq_refusal(&event), Some(EventKind::LeaseExtended));
        event.set_detail(Some("ERROR [ReviewClient] POST /reviews failed".into()));
        assert_eq!(bullmq_refusal(&event), None);
    }
}
