//! `duplicate-selection`: the same item selected by two different rounds close together.
//!
//! By default "close" means the later selection happened while the earlier selection's round was
//! still running: neither round could have seen the other's work as done. A fixed window in
//! seconds can be set instead.

use crate::model::timeline::EventId;
use crate::model::{EventKind, Finding, Item, Moment, Round, Severity, Value};
use crate::time::seconds_between;

use super::{Context, Detector};

pub struct DuplicateSelection;

impl Detector for DuplicateSelection {
    fn code(&self) -> &'static str {
        "duplicate-selection"
    }

    fn doc(&self) -> &'static str {
        include_str!("../../docs/findings/duplicate-selection.md")
    }

    /// The two rounds overlapped (`sweep-overlap` of the same pair); failing that, one is the
    /// rerun of the other or a rerun's round.
    fn follows_from(&self, finding: &Finding, found: &super::links::Found) -> Vec<usize> {
        let overlaps: Vec<usize> = found
            .of_code("sweep-overlap")
            .filter(|(_, overlap)| super::links::same_pair(finding, overlap))
            .map(|(index, _)| index)
            .collect();
        if !overlaps.is_empty() {
            return overlaps;
        }
        let runs = [finding.text("run_a"), finding.text("run_b")];
        runs.iter().flatten().flat_map(|run| found.reruns_into_round(run)).collect()
    }

    fn detect(&self, context: &Context) -> Vec<Finding> {
        duplicates(context, TRACKED_BEFORE_A_LOOK)
    }
}

/// Items tracked, at the least, before the tracked ones are looked over again (`Tracked`).
const TRACKED_BEFORE_A_LOOK: usize = 4_096;

/// The findings, tracking at least `tracked_before_a_look` items between looks (tests look over
/// them at every selection).
fn duplicates(context: &Context, tracked_before_a_look: usize) -> Vec<Finding> {
    let (timeline, rounds) = (context.timeline, &context.rounds);
    // Times are read from the events once, here: pairing reads them again and again.
    let spans: Vec<(Moment, Moment)> =
        rounds.iter().map(|round| (round.start_moment(timeline), context.round_end(round).earliest)).collect();
    let window = context.settings.duplicate_window_s;
    // Whether a selection at `later_at` can pair with an earlier one, and whether the earlier
    // one can pair with nothing from then on (its round has ended, or it fell out of the
    // fixed window: later selections are later still).
    let close = |earlier: &Selection, later_at: Moment| {
        if let Some(window) = window {
            earlier.at.seconds_to(later_at) <= window
        } else {
            let (start, end) = spans[earlier.round as usize];
            start <= later_at && later_at <= end
        }
    };
    let gone = |earlier: &Selection, later_at: Moment| match window {
        Some(window) => earlier.at.seconds_to(later_at) > window,
        None => later_at > spans[earlier.round as usize].1,
    };
    // The selections are walked once, in time order, and only the items selected by a round
    // that can still pair or select again are tracked: a list of a million selections, sorted
    // by item, was the largest list any detector held.
    let mut tracked = Tracked { floor: tracked_before_a_look, ..Tracked::default() };
    let mut findings: Vec<(Item, Finding)> = Vec::new();
    for (id, round) in selections_in_time_order(rounds) {
        let Some(item) = timeline.get(id).item else { continue };
        let later = Selection { at: timeline.get(id).moment(), id, round };
        tracked.forget_when_full(|state| {
            // A round whose last selection has passed cannot select again; an earlier
            // selection that is gone cannot pair with any later one.
            state.seen.retain(|&(_, last)| last >= id);
            state.open.retain(|earlier| !gone(earlier, later.at));
        });
        let state = tracked.state_of(item);
        // Each round counts with its first selection of the item.
        if state.seen.iter().any(|&(seen, _)| seen == round) {
            continue;
        }
        let last = *rounds.selections(&rounds[round as usize]).last().unwrap_or(&id);
        state.seen.push((round, last));
        // Earlier first selections that can still pair with this one, each pair judged on its
        // own, so that A-B far apart does not hide B-C close together.
        state.open.retain(|earlier| close(earlier, later.at));
        for earlier in &state.open {
            let pair = (&rounds[earlier.round as usize], &rounds[round as usize]);
            findings.push((item, duplicate(context, &item, (earlier.id, pair.0), (id, pair.1))));
        }
        state.open.push(later);
    }
    // Items in text order, then in the order found (by the later selection), for a stable
    // order of findings made at the same time.
    findings.sort_by(|(a, _), (b, _)| a.as_str().cmp(b.as_str()));
    findings.into_iter().map(|(_, finding)| finding).collect()
}

/// Every round's selections, as (event, round position in `rounds`), in time (event) order: each
/// round's are in time order already, and the rounds running at once are merged.
fn selections_in_time_order(rounds: &crate::model::rounds::Rounds) -> impl Iterator<Item = (EventId, u32)> + '_ {
    use std::cmp::Reverse;
    let of = |round: u32| rounds.selections(&rounds[round as usize]);
    let mut by_first: Vec<u32> = (0..u32::try_from(rounds.len()).expect("fewer than 2^32 rounds"))
        .filter(|&round| !of(round).is_empty())
        .collect();
    by_first.sort_unstable_by_key(|&round| of(round)[0]);
    let mut waiting = by_first.into_iter().peekable();
    // The rounds under way: each with its next selection, the earliest on top.
    let mut under_way: std::collections::BinaryHeap<Reverse<(EventId, u32, usize)>> =
        std::collections::BinaryHeap::new();
    std::iter::from_fn(move || {
        while let Some(&round) = waiting.peek()
            && under_way.peek().is_none_or(|Reverse((next, _, _))| of(round)[0] < *next)
        {
            under_way.push(Reverse((of(round)[0], round, 0)));
            waiting.next();
        }
        let Reverse((id, round, at)) = under_way.pop()?;
        if let Some(&next) = of(round).get(at + 1) {
            under_way.push(Reverse((next, round, at + 1)));
        }
        Some((id, round))
    })
}

/// The items being tracked while the selections are walked, each with its state; a state whose
/// item can no longer pair is let go, and its lists are used again for another item.
#[derive(Default)]
struct Tracked {
    places: std::collections::HashMap<Item, u32, rustc_hash::FxBuildHasher>,
    states: Vec<ItemState>,
    free: Vec<u32>,
    /// How many items are tracked before the states are looked over again.
    limit: usize,
    /// The least `limit`.
    floor: usize,
}

/// One item's selections that still matter.
#[derive(Default)]
struct ItemState {
    /// Rounds that selected the item and may select it again: each with its last selection.
    seen: Vec<(u32, EventId)>,
    /// First selections (one per round) that may still pair with a later one, in time order.
    open: Vec<Selection>,
}

impl Tracked {
    fn state_of(&mut self, item: Item) -> &mut ItemState {
        let (states, free) = (&mut self.states, &mut self.free);
        let place = *self.places.entry(item).or_insert_with(|| {
            free.pop().unwrap_or_else(|| {
                states.push(ItemState::default());
                u32::try_from(states.len() - 1).expect("fewer than 2^32 items")
            })
        });
        &mut self.states[place as usize]
    }

    /// Once twice as many items are tracked as after the last look (at least `floor`), `keep`
    /// trims each state, and the items left with nothing are let go: the work is in proportion to
    /// the selections, and the items kept are those of the rounds under way.
    fn forget_when_full(&mut self, mut keep: impl FnMut(&mut ItemState)) {
        if self.places.len() < self.limit {
            return;
        }
        let (states, free) = (&mut self.states, &mut self.free);
        self.places.retain(|_, &mut place| {
            let state = &mut states[place as usize];
            keep(state);
            let done = state.seen.is_empty() && state.open.is_empty();
            if done {
                free.push(place);
            }
            !done
        });
        self.limit = (2 * self.places.len()).max(self.floor);
    }
}

/// One round's first selection of an item (the round by its position in `Context::rounds`), with
/// its time: pairing reads times again and again.
#[derive(Clone, Copy)]
struct Selection {
    at: Moment,
    id: EventId,
    round: u32,
}

fn duplicate(context: &Context, item: &str, earlier: (EventId, &Round), later: (EventId, &Round)) -> Finding {
    let timeline = context.timeline;
    let (a, b) = (timeline.get(earlier.0), timeline.get(later.0));
    let effects: Vec<EventId> = [earlier.1, later.1]
        .iter()
        .flat_map(|round| context.rounds.effects(round).iter().copied())
        .filter(|&id| timeline.get(id).item.as_deref() == Some(item) && timeline.kind(id) == EventKind::EffectPosted)
        .collect();
    let both_posted = [earlier.1, later.1]
        .iter()
        .all(|round| context.rounds.effects(round).iter().any(|&id| timeline.get(id).item.as_deref() == Some(item)));
    let severity = if both_posted { Severity::Error } else { Severity::Warning };
    let mut finding = Finding::new("duplicate-selection", severity, b.at());
    finding.metric("item", Value::Text(item.to_string()));
    finding.metric("run_a", Value::Text(earlier.1.run_id.to_string()));
    finding.metric("run_b", Value::Text(later.1.run_id.to_string()));
    finding.metric("selected_a_at", Value::Time(a.at()));
    finding.metric("selected_b_at", Value::Time(b.at()));
    finding.metric("delta_s", Value::Seconds(seconds_between(a.at(), b.at())));
    finding.derive("delta_s", "selected_b_at − selected_a_at");
    finding.metric("effects_posted", Value::Count(effects.len() as u64));
    finding.evidence.extend([earlier.0, later.0]);
    finding.evidence.extend(&effects);
    finding.evidence.sort_unstable();
    match context.settings.duplicate_window_s {
        Some(window) => {
            finding.note(format!("window: the two selections at most {window} s apart (--duplicate-window)"))
        }
        None => finding.note("window: the later selection happened while the earlier round was still running"),
    };
    let consequence = if both_posted {
        "both rounds delivered an effect for it"
    } else if effects.is_empty() {
        "no effect for it is recorded"
    } else {
        "one effect for it is recorded"
    };
    finding.summary = format!(
        "{{item}} was selected by round {{run_a}} at {{selected_a_at}} and again by round {{run_b}} at {{selected_b_at}}, {{delta_s}} apart; {consequence}."
    );
    finding
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::Settings;
    use crate::model::{Event, LockParams, Origin, Timeline};
    use chrono::{DateTime, Utc};

    fn row(line: u32, when: &str, kind: EventKind, run: &str, item: Option<&str>) -> Event {
        let origin = Origin { channel: crate::model::Channel::Ledger, source: 0, line };
        let mut event =
            Event::new(DateTime::parse_from_rfc3339(when).unwrap().with_timezone(&Utc).into(), kind, origin);
        event.edit().run_id = Some(crate::model::Text::from(run));
        event.item = item.map(Item::from);
        event
    }

    fn detect(events: Vec<Event>, settings: &Settings) -> Vec<Finding> {
        let timeline = Timeline::new(events);
        let params = LockParams::default();
        DuplicateSelection.detect(&Context::new(&timeline, &params, settings))
    }

    fn incident() -> Vec<Event> {
        vec![
            row(1, "2026-10-07T00:53:03Z", EventKind::RoundStarted, "a", None),
            row(2, "2026-10-07T00:54:03Z", EventKind::RoundStarted, "b", None),
            row(3, "2026-10-07T00:54:05.700Z", EventKind::ItemSelected, "a", Some("PR-1")),
            row(4, "2026-10-07T00:54:06.360Z", EventKind::ItemSelected, "b", Some("PR-1")),
            row(5, "2026-10-07T00:55:00Z", EventKind::EffectPosted, "a", Some("PR-1")),
            row(6, "2026-10-07T00:55:01Z", EventKind::EffectPosted, "b", Some("PR-1")),
            row(7, "2026-10-07T00:55:40Z", EventKind::RoundFinished, "a", None),
            row(8, "2026-10-07T00:55:41Z", EventKind::RoundFinished, "b", None),
        ]
    }

    #[test]
    fn same_item_while_both_rounds_run_is_flagged_with_its_delta() {
        let findings = detect(incident(), &Settings::default());
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].get("delta_s"), Some(&Value::Seconds(0.66)));
        assert_eq!(findings[0].get("effects_posted"), Some(&Value::Count(2)));
        assert_eq!(findings[0].severity, Severity::Error);
    }

    #[test]
    fn a_later_round_picking_the_item_again_is_not_a_duplicate() {
        let findings = detect(
            vec![
                row(1, "2026-10-07T00:33:03Z", EventKind::RoundStarted, "a", None),
                row(2, "2026-10-07T00:33:05Z", EventKind::ItemSelected, "a", Some("PR-1")),
                row(3, "2026-10-07T00:34:00Z", EventKind::RoundFinished, "a", None),
                row(4, "2026-10-07T00:54:03Z", EventKind::RoundStarted, "b", None),
                row(5, "2026-10-07T00:54:05Z", EventKind::ItemSelected, "b", Some("PR-1")),
                row(6, "2026-10-07T00:55:00Z", EventKind::RoundFinished, "b", None),
            ],
            &Settings::default(),
        );
        assert!(findings.is_empty());
    }

    #[test]
    fn an_early_finished_round_does_not_hide_a_later_overlapping_pair() {
        let findings = detect(
            vec![
                row(1, "2026-10-07T00:10:00Z", EventKind::RoundStarted, "a", None),
                row(2, "2026-10-07T00:10:05Z", EventKind::ItemSelected, "a", Some("PR-1")),
                row(3, "2026-10-07T00:11:00Z", EventKind::RoundFinished, "a", None),
                row(4, "2026-10-07T00:53:03Z", EventKind::RoundStarted, "b", None),
                row(5, "2026-10-07T00:54:03Z", EventKind::RoundStarted, "c", None),
                row(6, "2026-10-07T00:54:05.700Z", EventKind::ItemSelected, "b", Some("PR-1")),
                row(7, "2026-10-07T00:54:06.360Z", EventKind::ItemSelected, "c", Some("PR-1")),
                row(8, "2026-10-07T00:55:40Z", EventKind::RoundFinished, "b", None),
                row(9, "2026-10-07T00:55:41Z", EventKind::RoundFinished, "c", None),
            ],
            &Settings::default(),
        );
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].get("run_a"), Some(&Value::Text("b".into())));
        assert_eq!(findings[0].get("run_b"), Some(&Value::Text("c".into())));
    }

    #[test]
    fn items_whose_hashes_are_alike_are_paired_only_with_themselves() {
        // Rounds a and b each select B, then A, while both run. A and B hash alike (`Item::key`),
        // so they are grouped together, interleaved, before their texts tell them apart: each is
        // a duplicate of itself, with its own selection times.
        let (a_text, b_text) = crate::model::item::texts_with_one_key();
        let findings = detect(
            vec![
                row(1, "2026-10-07T00:53:03Z", EventKind::RoundStarted, "a", None),
                row(2, "2026-10-07T00:53:30Z", EventKind::ItemSelected, "a", Some(b_text)),
                row(3, "2026-10-07T00:54:03Z", EventKind::RoundStarted, "b", None),
                row(4, "2026-10-07T00:54:05.700Z", EventKind::ItemSelected, "a", Some(a_text)),
                row(5, "2026-10-07T00:54:06Z", EventKind::ItemSelected, "b", Some(b_text)),
                row(6, "2026-10-07T00:54:06.360Z", EventKind::ItemSelected, "b", Some(a_text)),
                row(7, "2026-10-07T00:55:40Z", EventKind::RoundFinished, "a", None),
                row(8, "2026-10-07T00:55:41Z", EventKind::RoundFinished, "b", None),
            ],
            &Settings::default(),
        );
        let mut found: Vec<(String, String)> = findings
            .iter()
            .map(|finding| match (finding.get("item"), finding.get("delta_s")) {
                (Some(Value::Text(item)), Some(delta)) => (item.clone(), format!("{delta:?}")),
                other => panic!("a duplicate without item or delta: {other:?}"),
            })
            .collect();
        found.sort();
        let mut expected = vec![
            (a_text.to_string(), format!("{:?}", Value::Seconds(0.66))),
            (b_text.to_string(), format!("{:?}", Value::Seconds(36.0))),
        ];
        expected.sort();
        assert_eq!(found, expected);
    }

    /// A round's first selection of an item: ((time in ms, line), run, round start, round end).
    type First = ((u64, u32), String, u64, u64);

    #[test]
    fn many_rounds_give_the_pairs_of_the_rule_read_pair_by_pair() {
        // 6,000 rounds over some 18,000 items, two to four selections each, an item picked again
        // by rounds close by, some rounds overlapping (more items than are tracked before the
        // tracked ones are looked over, so letting items go and using their lists again are both
        // exercised, and then looked over at every selection); the findings are
        // the pairs the documented rule gives when every two rounds' first selections of an
        // item are judged on their own.
        let mut seed: u64 = 11;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) % n
        };
        let base = DateTime::parse_from_rfc3339("2026-10-07T00:00:00Z").unwrap().with_timezone(&Utc);
        let at = |ms: u64| (base + chrono::Duration::milliseconds(i64::try_from(ms).unwrap())).to_rfc3339();
        let mut events = Vec::new();
        // Per item, each round's first selection as ((time, line), run, start, end), for the
        // reference.
        let mut firsts: std::collections::BTreeMap<String, Vec<First>> = std::collections::BTreeMap::new();
        let mut line = 0;
        for round in 0..6_000u64 {
            let run = format!("run-{round}");
            // Every 7th round starts before the one before it ends.
            let start = round * 60_000 + 50_000 - if round % 7 == 3 { 50_000 } else { 0 };
            let end = start + 20_000;
            line += 1;
            events.push(row(line, &at(start), EventKind::RoundStarted, &run, None));
            for k in 0..2 + next(3) {
                let item = format!("PR-{}", round * 3 + next(40));
                let ms = start + 1_000 + k * 2_000 + next(500);
                line += 1;
                events.push(row(line, &at(ms), EventKind::ItemSelected, &run, Some(&item)));
                let of_item = firsts.entry(item).or_default();
                if !of_item.iter().any(|(_, r, _, _)| *r == run) {
                    of_item.push(((ms, line), run.clone(), start, end));
                }
            }
            line += 1;
            events.push(row(line, &at(end), EventKind::RoundFinished, &run, None));
        }
        let mut expected = Vec::new();
        for (item, of_item) in &firsts {
            for (a, run_a, start_a, end_a) in of_item {
                for (b, run_b, _, _) in of_item {
                    if a < b && *start_a <= b.0 && b.0 <= *end_a {
                        expected.push((item.clone(), run_a.clone(), run_b.clone()));
                    }
                }
            }
        }
        assert!(expected.len() > 100, "overlapping rounds pick items together: {}", expected.len());
        expected.sort();
        let timeline = Timeline::new(events);
        let (params, settings) = (LockParams::default(), Settings::default());
        let context = Context::new(&timeline, &params, &settings);
        // Tracked items looked over as the detector does, and at every selection.
        for floor in [TRACKED_BEFORE_A_LOOK, 1] {
            let mut found: Vec<(String, String, String)> = duplicates(&context, floor)
                .iter()
                .map(|finding| match (finding.get("item"), finding.get("run_a"), finding.get("run_b")) {
                    (Some(Value::Text(item)), Some(Value::Text(a)), Some(Value::Text(b))) => {
                        (item.clone(), a.clone(), b.clone())
                    }
                    other => panic!("a duplicate without item or runs: {other:?}"),
                })
                .collect();
            found.sort();
            assert_eq!(found, expected, "looked over after at least {floor} items");
        }
    }

    #[test]
    fn a_fixed_window_replaces_the_running_rule() {
        let narrow = Settings { duplicate_window_s: Some(0.5), ..Settings::default() };
        assert!(detect(incident(), &narrow).is_empty());
        let wide = Settings { duplicate_window_s: Some(1.0), ..Settings::default() };
        assert_eq!(detect(incident(), &wide).len(), 1);
    }
}
