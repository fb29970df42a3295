//! `duplicate-effect`: one job delivered the same external effect more than once.
//!
//! Fencing a late worker's result does not take back what it already sent: a worker that posts a
//! notification and dies before recording it leaves a job that the next owner runs again, and the
//! receiver gets the effect twice unless both deliveries carry the same idempotency key. So the
//! finding is about the key, not the count: no key and a fresh key per retry are both errors (the
//! receiver cannot tell), the same key is info (the receiver could deduplicate), and the same key
//! with a different payload is an error whether or not the receiver refused it.
//!
//! "The same effect" is deliberately narrow: `effect-posted` rows of one job (a run id when the
//! row has no job id) for one item. Two different jobs or rounds acting on one item are two logical
//! tasks that both chose it: that is `duplicate-selection`, which sees the selections too.
//!
//! A receiver's own record (a ledger with `role = "receiver"`: `effect-received` rows) is the other
//! side of the same deliveries, never more of them: its rows of the job id and item are what the
//! receiver got, and say what it accepted and what it recognised as a repeat. Each delivery is
//! counted once, as the side that saw more of them counts it.

use crate::model::timeline::EventId;
use crate::model::{Event, EventKind, Finding, Item, JobKey, Severity, Text, Value};
use crate::time::seconds_between;

use super::{Context, Detector};

pub struct DuplicateEffect;

/// How the deliveries of one effect used idempotency keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyPolicy {
    /// No delivery carried a key.
    None,
    /// Every delivery carried a key, each a different one.
    NewKeyPerRetry,
    /// Every delivery carried the same key and the same payload (or no payload hash).
    SameKey,
    /// Every delivery carried the same key, with more than one payload hash.
    SameKeyDifferentPayload,
    /// Some deliveries with a key and some without, or keys partly repeated.
    Mixed,
}

impl KeyPolicy {
    pub fn name(self) -> &'static str {
        match self {
            KeyPolicy::None => "none",
            KeyPolicy::NewKeyPerRetry => "new-key-per-retry",
            KeyPolicy::SameKey => "same-key",
            KeyPolicy::SameKeyDifferentPayload => "same-key-different-payload",
            KeyPolicy::Mixed => "mixed",
        }
    }
}

/// Whether the receiver's answer says it recognised a repeat (outcome `deduplicated` or
/// `duplicate`; the ledger reader keeps that word in the detail).
fn answered_duplicate(event: &Event) -> bool {
    event.detail_str().is_some_and(|d| {
        let d = d.to_ascii_lowercase();
        d.contains("deduplicated") || d.contains("duplicate")
    })
}

impl Detector for DuplicateEffect {
    fn code(&self) -> &'static str {
        "duplicate-effect"
    }

    fn doc(&self) -> &'static str {
        include_str!("../../docs/findings/duplicate-effect.md")
    }

    /// The item was selected twice (`duplicate-selection` of the same item); failing that, the
    /// job was re-run after it lost its lock, before the second delivery.
    fn follows_from(&self, finding: &Finding, found: &super::links::Found) -> Vec<usize> {
        let Some(second) = super::links::time(finding, "second_at") else { return Vec::new() };
        let selections: Vec<usize> = found
            .of_code("duplicate-selection")
            .filter(|(_, selection)| finding.text("item").is_some() && selection.text("item") == finding.text("item"))
            .filter(|(_, selection)| selection.at <= second)
            .map(|(index, _)| index)
            .collect();
        if !selections.is_empty() {
            return selections;
        }
        found.of_job_before(super::links::RERUNS, finding, second)
    }

    fn detect(&self, context: &Context) -> Vec<Finding> {
        let timeline = context.timeline;
        let received = received_by_job(context);
        // Effects are grouped where they already are: a job's events (for rows with a job id),
        // else a round's (run id). One small list per task, sorted by item, instead of one table
        // of the million effects of a big ledger.
        let mut repeated: Vec<(Effect, Vec<EventId>)> = Vec::new();
        let mut deliveries: Vec<(Option<Item>, EventId)> = Vec::new();
        // The (job id, item) pairs a sender's rows speak for: the receiver's rows of the others
        // are effects only the receiver recorded.
        let mut sent_for: rustc_hash::FxHashSet<(Text, Option<Item>)> = rustc_hash::FxHashSet::default();
        let mut add_repeats = |task: Task, deliveries: &mut Vec<(Option<Item>, EventId)>| {
            // Equal items together (their texts are read only where hashes are alike: the findings
            // are sorted by text below), then in time order (ids are timeline positions).
            deliveries.sort_unstable_by(|(a, a_id), (b, b_id)| {
                let items = match (a, b) {
                    (Some(a), Some(b)) => a.grouping_cmp(b),
                    _ => a.is_some().cmp(&b.is_some()),
                };
                items.then(a_id.cmp(b_id))
            });
            for same in deliveries.chunk_by(|a, b| a.0 == b.0) {
                let item = same[0].0;
                let received_twice = match task {
                    Task::Job(job) => {
                        sent_for.insert((job.id, item));
                        received.get(&(job.id, item)).is_some_and(|r| r.len() > 1)
                    }
                    Task::Run(_) => false,
                };
                if same.len() > 1 || received_twice {
                    repeated.push(((task, item), same.iter().map(|&(_, id)| id).collect()));
                }
            }
        };
        if context.jobs_have(&[EventKind::EffectPosted]) {
            for (job, ids) in context.job_events.iter_having(&[EventKind::EffectPosted]) {
                deliveries.clear();
                deliveries.extend(
                    ids.iter()
                        .copied()
                        .filter(|&id| timeline.kind(id) == EventKind::EffectPosted)
                        .map(|id| (timeline.get(id).item, id)),
                );
                add_repeats(Task::Job(job), &mut deliveries);
            }
        }
        for round in &context.rounds {
            deliveries.clear();
            deliveries.extend(
                context
                    .rounds
                    .effects(round)
                    .iter()
                    .map(|&id| (id, timeline.get(id)))
                    .filter(|(_, e)| context.job_of(e).is_none())
                    .map(|(id, e)| (e.item, id)),
            );
            add_repeats(Task::Run(round.run_id), &mut deliveries);
        }
        // Effects only the receiver recorded, twice or more.
        for (&(job_id, item), ids) in &received {
            if ids.len() > 1 && !sent_for.contains(&(job_id, item)) {
                let first = timeline.get(ids[0]);
                let job = context.job_of(first).unwrap_or_else(|| JobKey::new(first.queue, job_id));
                repeated.push(((Task::Job(job), item), Vec::new()));
            }
        }
        // In (task, item) order, as text (`Text` orders by its text).
        repeated.sort_unstable_by_key(|(effect, _)| *effect);
        repeated
            .into_iter()
            .filter_map(|((task, item), sent)| {
                let got = match task {
                    Task::Job(job) => received.get(&(job.id, item)).map_or(&[][..], Vec::as_slice),
                    Task::Run(_) => &[],
                };
                duplicate(context, task, item.as_deref(), &sent, &matching(context.timeline, &sent, got))
            })
            .collect()
    }
}

/// The receiver's rows (`effect-received`) by job id and item, in time order. By id, not by job:
/// a receiver's record seldom names the sender's queue, and the sender's rows of the item name the
/// job.
fn received_by_job(context: &Context) -> rustc_hash::FxHashMap<(Text, Option<Item>), Vec<EventId>> {
    let mut received: rustc_hash::FxHashMap<(Text, Option<Item>), Vec<EventId>> = rustc_hash::FxHashMap::default();
    if !context.jobs_have(&[EventKind::EffectReceived]) {
        return received;
    }
    let timeline = context.timeline;
    for (id, event) in timeline.ids().filter(|&(id, _)| timeline.kind(id) == EventKind::EffectReceived) {
        if let Some(job_id) = event.job_id {
            received.entry((job_id, event.item)).or_default().push(id);
        }
    }
    received
}

/// The receiver's rows that can be the other side of `sent`: with a key the sender's rows used, or
/// without a key (a sender whose rows carry keys sent nothing under another).
fn matching(timeline: &crate::model::Timeline, sent: &[EventId], got: &[EventId]) -> Vec<EventId> {
    let keys: Vec<Text> = sent.iter().filter_map(|&id| timeline.get(id).lease().key).collect();
    got.iter()
        .copied()
        .filter(|&id| keys.is_empty() || timeline.get(id).lease().key.is_none_or(|key| keys.contains(&key)))
        .collect()
}

/// Who delivered an effect: a job (rows with a job id), else a round (run id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Task {
    Run(Text),
    Job(JobKey),
}

/// One effect: the task that delivered it and the item.
type Effect = (Task, Option<Item>);

/// `sent`: the sender's rows of the effect; `got`: the receiver's rows of it. Either may be empty.
fn duplicate(context: &Context, task: Task, item: Option<&str>, sent: &[EventId], got: &[EventId]) -> Option<Finding> {
    let timeline = context.timeline;
    let received: Vec<&Event> = got.iter().map(|&id| timeline.get(id)).collect();
    // The deliveries as the side that recorded more of them saw them (the sender's rows on a tie:
    // they name the job); the receiver's rows, when there are any, say what it accepted.
    let ids = if received.len() > sent.len() { got } else { sent };
    let deliveries: Vec<&Event> = ids.iter().map(|&id| timeline.get(id)).collect();
    if deliveries.len() < 2 {
        return None;
    }
    let answers: &[&Event] = if received.is_empty() { &deliveries } else { &received };
    let applied = answers.iter().filter(|e| e.lease().accepted != Some(false) && !answered_duplicate(e)).count();
    let mut keys: Vec<&str> = deliveries.iter().filter_map(|e| e.lease().key.as_deref()).collect();
    let keyed = keys.len();
    keys.sort_unstable();
    keys.dedup();
    let mut hashes: Vec<&str> = deliveries.iter().filter_map(|e| e.lease().payload_hash.as_deref()).collect();
    hashes.sort_unstable();
    hashes.dedup();
    let policy = if keyed == 0 {
        KeyPolicy::None
    } else if keyed < deliveries.len() {
        KeyPolicy::Mixed
    } else if keys.len() == deliveries.len() {
        KeyPolicy::NewKeyPerRetry
    } else if keys.len() == 1 && hashes.len() > 1 {
        KeyPolicy::SameKeyDifferentPayload
    } else if keys.len() == 1 {
        KeyPolicy::SameKey
    } else {
        KeyPolicy::Mixed
    };
    // Without a shared key the receiver cannot have recognised a repeat: the effect happened twice
    // only if it accepted two deliveries (a delivery it refused, a 503 say, did not happen).
    let reported = match policy {
        KeyPolicy::SameKey | KeyPolicy::SameKeyDifferentPayload => true,
        KeyPolicy::None | KeyPolicy::NewKeyPerRetry | KeyPolicy::Mixed => applied >= 2,
    };
    if !reported {
        return None;
    }
    let severity = if policy == KeyPolicy::SameKey { Severity::Info } else { Severity::Error };
    let (first, second, last) = (deliveries[0], deliveries[1], deliveries[deliveries.len() - 1]);
    let deduplicated =
        answers.iter().skip(1).filter(|e| e.lease().accepted == Some(false) || answered_duplicate(e)).count();

    let mut finding = Finding::new("duplicate-effect", severity, second.at());
    match task {
        Task::Job(job) => {
            finding.metric("job_id", Value::Text(job.to_string()));
            if let Some(queue) = job.queue {
                finding.metric("queue", Value::Text(queue.to_string()));
            }
        }
        Task::Run(run) => {
            finding.metric("run_id", Value::Text(run.to_string()));
        }
    }
    let is_job = matches!(task, Task::Job(_));
    if let Some(item) = item {
        finding.metric("item", Value::Text(item.to_string()));
    }
    finding.metric("key_policy", Value::Text(policy.name().to_string()));
    finding.metric("deliveries", Value::Count(deliveries.len() as u64));
    finding.metric("accepted_by_receiver", Value::Count(applied as u64));
    finding.metric("receiver_deduplicated", Value::Count(deduplicated as u64));
    finding.metric("distinct_keys", Value::Count(keys.len() as u64));
    finding.metric("payload_hashes", Value::Count(hashes.len() as u64));
    finding.metric("first_at", Value::Time(first.at()));
    finding.metric("second_at", Value::Time(second.at()));
    finding.metric("gap_s", Value::Seconds(seconds_between(first.at(), second.at())));
    finding.derive("gap_s", "second_at − first_at");
    if deliveries.len() > 2 {
        finding.metric("last_at", Value::Time(last.at()));
    }
    let mut workers: Vec<&str> = Vec::new();
    for worker in deliveries.iter().filter_map(|e| e.worker.as_deref()) {
        if !workers.contains(&worker) {
            workers.push(worker);
        }
    }
    if !workers.is_empty() {
        finding.metric("workers", Value::Text(workers.join(", ")));
    }
    let mut rejected_text = String::new();
    if policy == KeyPolicy::SameKeyDifferentPayload {
        // Every delivery whose payload differs from the first one's must have been refused.
        let differing: Vec<&&Event> = deliveries
            .iter()
            .filter(|e| e.lease().payload_hash.is_some() && e.lease().payload_hash != first.lease().payload_hash)
            .collect();
        let refused = differing.iter().all(|e| e.lease().accepted == Some(false));
        finding.metric("different_payload_rejected", Value::Flag(refused));
        rejected_text = if refused {
            "the receiver refused the different payload, as it must; the sender computed a different payload for the same logical request".to_string()
        } else {
            "the receiver did NOT refuse the different payload: it accepted a changed request under a key it had already answered".to_string()
        };
    }
    finding.evidence.extend(sent);
    finding.evidence.extend(got);
    finding.evidence.sort_unstable();
    if !received.is_empty() {
        finding.metric("receiver_records", Value::Count(received.len() as u64));
        finding.note(format!(
            "the receiver's own record has {} row(s) of this effect: they are the other side of the same deliveries, not more of them, and say what it accepted",
            received.len()
        ));
    }
    finding.note(format!(
        "same effect: effect-posted rows with the same {} and the same item (or both without an item); two jobs or rounds posting for one item are duplicate-selection's",
        if is_job { "job id" } else { "run id (the rows have no job id)" }
    ));
    if policy == KeyPolicy::SameKey && deduplicated == 0 {
        finding.note("the receiver answered every delivery as accepted: if it returned the stored result that is deduplication, but the ledger cannot show it; record the receiver's answer (deduplicated) to be sure");
    }
    if answers.iter().any(|e| e.lease().accepted.is_none()) {
        finding.note("some deliveries have no outcome: they are counted as accepted by the receiver");
    }

    let subject = if is_job { "Job {job_id}" } else { "Run {run_id}" };
    let what = if item.is_some() { "the effect for {item}" } else { "its effect" };
    let when = "at {first_at} and again at {second_at} ({gap_s} later)";
    finding.summary = match policy {
        KeyPolicy::None => format!(
            "{subject} delivered {what} {{deliveries}} times without an idempotency key, {when}: the receiver accepted {{accepted_by_receiver}} and could not tell them apart."
        ),
        KeyPolicy::NewKeyPerRetry => format!(
            "{subject} delivered {what} {{deliveries}} times with a new idempotency key each time ({{distinct_keys}} keys), {when}: the keys cannot deduplicate anything, and the receiver accepted {{accepted_by_receiver}}."
        ),
        KeyPolicy::Mixed => format!(
            "{subject} delivered {what} {{deliveries}} times, not all under one idempotency key ({{distinct_keys}} key(s)), {when}: the receiver accepted {{accepted_by_receiver}}."
        ),
        KeyPolicy::SameKey => format!(
            "{subject} delivered {what} {{deliveries}} times under the same idempotency key, {when}: the receiver could deduplicate; it answered {{receiver_deduplicated}} repeat(s) as deduplicated or refused."
        ),
        KeyPolicy::SameKeyDifferentPayload => format!(
            "{subject} delivered {what} {{deliveries}} times under the same idempotency key with {{payload_hashes}} different payloads, {when}: {rejected_text}."
        ),
    };
    Some(finding)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::Settings;
    use crate::model::{Channel, LockParams, Origin, Timeline};
    use chrono::{DateTime, Utc};

    struct Row {
        at: &'static str,
        job: Option<&'static str>,
        run: Option<&'static str>,
        item: Option<&'static str>,
        key: Option<&'static str>,
        hash: Option<&'static str>,
        accepted: Option<bool>,
        detail: Option<&'static str>,
    }

    const ROW: Row = Row {
        at: "2026-12-01T00:00:00Z",
        job: Some("job-1"),
        run: None,
        item: None,
        key: None,
        hash: None,
        accepted: None,
        detail: None,
    };

    fn detect(rows: &[Row]) -> Vec<Finding> {
        detect_with_receiver(rows, &[])
    }

    /// `rows` from the sender's ledger (source 0), `received` from the receiver's record (source 1).
    fn detect_with_receiver(rows: &[Row], received: &[Row]) -> Vec<Finding> {
        let sent = rows.iter().map(|r| (r, 0u16, EventKind::EffectPosted));
        let got = received.iter().map(|r| (r, 1u16, EventKind::EffectReceived));
        let events = sent
            .chain(got)
            .enumerate()
            .map(|(n, (r, source, kind))| {
                let origin = Origin { channel: Channel::Ledger, source, line: u32::try_from(n).unwrap() + 2 };
                let at = DateTime::parse_from_rfc3339(r.at).unwrap().with_timezone(&Utc);
                let mut event = Event::new(at.into(), kind, origin);
                event.edit().job_id = r.job.map(crate::model::Text::from);
                event.edit().run_id = r.run.map(crate::model::Text::from);
                event.item = r.item.map(Item::from);
                event.lease_mut().key = r.key.map(crate::model::Text::from);
                event.lease_mut().payload_hash = r.hash.map(crate::model::Text::from);
                event.lease_mut().accepted = r.accepted;
                event.set_detail(r.detail.map(crate::model::Text::from));
                event
            })
            .collect();
        let timeline = Timeline::new(events);
        let params = LockParams::default();
        let settings = Settings::default();
        DuplicateEffect.detect(&Context::new(&timeline, &params, &settings))
    }

    fn text(f: &Finding, name: &str) -> String {
        match f.get(name) {
            Some(Value::Text(t)) => t.clone(),
            other => panic!("{name}: {other:?}"),
        }
    }

    #[test]
    fn the_receivers_record_is_the_other_side_of_the_deliveries_not_more_of_them() {
        let sent = [Row { item: Some("PR-1"), ..ROW }, Row { at: "2026-12-01T00:00:09Z", item: Some("PR-1"), ..ROW }];
        let got = [
            Row { at: "2026-12-01T00:00:00.020Z", item: Some("PR-1"), accepted: Some(true), ..ROW },
            Row { at: "2026-12-01T00:00:09.020Z", item: Some("PR-1"), accepted: Some(true), ..ROW },
        ];
        let found = detect_with_receiver(&sent, &got);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].get("deliveries"), Some(&Value::Count(2)), "not 4");
        assert_eq!(found[0].get("accepted_by_receiver"), Some(&Value::Count(2)));
        assert_eq!(found[0].get("receiver_records"), Some(&Value::Count(2)));
        assert_eq!(found[0].evidence.len(), 4);
        // One delivery each side: one effect, no finding (today's FP was 1 + 1 = 2).
        assert!(detect_with_receiver(&sent[..1], &got[..1]).is_empty());
    }

    #[test]
    fn the_receiver_says_it_recognised_the_repeat_under_the_same_key() {
        let sent = [Row { key: Some("k"), ..ROW }, Row { at: "2026-12-01T00:00:05Z", key: Some("k"), ..ROW }];
        let got = [
            Row { key: Some("k"), accepted: Some(true), ..ROW },
            Row { at: "2026-12-01T00:00:05Z", key: Some("k"), accepted: Some(false), detail: Some("duplicate"), ..ROW },
        ];
        let found = detect_with_receiver(&sent, &got);
        assert_eq!((found[0].severity, text(&found[0], "key_policy")), (Severity::Info, "same-key".into()));
        assert_eq!(found[0].get("accepted_by_receiver"), Some(&Value::Count(1)));
        assert_eq!(found[0].get("receiver_deduplicated"), Some(&Value::Count(1)));
    }

    #[test]
    fn twice_in_the_receivers_record_alone_is_a_duplicate_effect() {
        // The sender's row of the second delivery was lost with its process.
        let sent = [Row { item: Some("PR-2"), ..ROW }];
        let got = [
            Row { item: Some("PR-2"), accepted: Some(true), ..ROW },
            Row { at: "2026-12-01T00:00:30Z", item: Some("PR-2"), accepted: Some(true), ..ROW },
        ];
        let found = detect_with_receiver(&sent, &got);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].get("deliveries"), Some(&Value::Count(2)));
        assert_eq!(found[0].severity, Severity::Error);
    }

    #[test]
    fn two_deliveries_without_a_key_are_an_error() {
        let found = detect(&[ROW, Row { at: "2026-12-01T00:00:11.500Z", ..ROW }]);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].severity, Severity::Error);
        assert_eq!(text(&found[0], "key_policy"), "none");
        assert_eq!(found[0].get("deliveries"), Some(&Value::Count(2)));
        assert_eq!(found[0].get("gap_s"), Some(&Value::Seconds(11.5)));
    }

    #[test]
    fn a_new_key_per_retry_is_an_error_and_the_same_key_is_info() {
        let found =
            detect(&[Row { key: Some("k-1"), ..ROW }, Row { at: "2026-12-01T00:00:12Z", key: Some("k-2"), ..ROW }]);
        assert_eq!((found[0].severity, text(&found[0], "key_policy")), (Severity::Error, "new-key-per-retry".into()));
        assert_eq!(found[0].get("distinct_keys"), Some(&Value::Count(2)));

        let found = detect(&[
            Row { key: Some("k-1"), hash: Some("h1"), accepted: Some(true), ..ROW },
            Row {
                at: "2026-12-01T00:00:12Z",
                key: Some("k-1"),
                hash: Some("h1"),
                accepted: Some(false),
                detail: Some("deduplicated"),
                ..ROW
            },
        ]);
        assert_eq!((found[0].severity, text(&found[0], "key_policy")), (Severity::Info, "same-key".into()));
        assert_eq!(found[0].get("receiver_deduplicated"), Some(&Value::Count(1)));
        assert_eq!(found[0].get("accepted_by_receiver"), Some(&Value::Count(1)));
    }

    #[test]
    fn the_same_key_with_another_payload_is_an_error_saying_whether_it_was_refused() {
        let rows = |second: Option<bool>| {
            detect(&[
                Row { key: Some("k-1"), hash: Some("h1"), accepted: Some(true), ..ROW },
                Row { at: "2026-12-01T00:00:12Z", key: Some("k-1"), hash: Some("h2"), accepted: second, ..ROW },
            ])
        };
        let refused = rows(Some(false));
        assert_eq!(refused[0].severity, Severity::Error);
        assert_eq!(text(&refused[0], "key_policy"), "same-key-different-payload");
        assert_eq!(refused[0].get("different_payload_rejected"), Some(&Value::Flag(true)));
        assert_eq!(rows(Some(true))[0].get("different_payload_rejected"), Some(&Value::Flag(false)));
    }

    #[test]
    fn a_refused_first_delivery_without_a_key_happened_once() {
        let found = detect(&[Row { accepted: Some(false), ..ROW }, Row { at: "2026-12-01T00:00:12Z", ..ROW }]);
        assert!(found.is_empty());
    }

    #[test]
    fn different_jobs_or_items_are_different_effects() {
        assert!(detect(&[ROW, Row { job: Some("job-2"), ..ROW }]).is_empty(), "that is duplicate-selection's");
        assert!(detect(&[Row { item: Some("PR-1"), ..ROW }, Row { item: Some("PR-2"), ..ROW }]).is_empty());
        // Without a job id the run is the task.
        let found = detect(&[
            Row { job: None, run: Some("r1"), item: Some("PR-1"), ..ROW },
            Row { job: None, run: Some("r1"), item: Some("PR-1"), at: "2026-12-01T00:00:01Z", ..ROW },
        ]);
        assert_eq!(text(&found[0], "run_id"), "r1");
        assert_eq!(text(&found[0], "item"), "PR-1");
    }

    #[test]
    fn items_whose_hashes_are_alike_are_different_effects() {
        // A, B, A for one job, with A and B hashing alike (`Item::key`): A was delivered twice, B
        // once, however the sort interleaves them.
        let (a, b) = crate::model::item::texts_with_one_key();
        let found = detect(&[
            Row { item: Some(a), ..ROW },
            Row { at: "2026-12-01T00:00:05Z", item: Some(b), ..ROW },
            Row { at: "2026-12-01T00:00:09Z", item: Some(a), ..ROW },
        ]);
        assert_eq!(found.len(), 1);
        assert_eq!(text(&found[0], "item"), a);
        assert_eq!(found[0].get("deliveries"), Some(&Value::Count(2)));
        assert_eq!(found[0].get("gap_s"), Some(&Value::Seconds(9.0)));
    }
}
