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

    fn detect(&self, context: &Context) -> Vec<Finding> {
        let timeline = context.timeline;
        // Times are read from the events once, here: pairing reads them again and again, and the
        // events of a million selections do not stay in the cache.
        let spans: Vec<(Moment, Moment)> =
            context.rounds.iter().map(|round| (round.start_moment(timeline), round.end_moment(timeline))).collect();
        // One flat list, grouped by item (by the hash of its text first, `Item::key`: any grouping
        // will do, the findings are put in item text order below) and in time order within an
        // item. A list per item would cost an allocation per item, and nearly every item is
        // selected once or twice.
        let mut selections: Vec<Selection> = Vec::with_capacity(context.rounds.selection_count());
        for (index, round) in context.rounds.iter().enumerate() {
            let index = u32::try_from(index).expect("fewer than 2^32 rounds");
            for &id in context.rounds.selections(round) {
                let event = timeline.get(id);
                if let Some(item) = event.item {
                    selections.push(Selection { item, at: event.moment(), id, round: index });
                }
            }
        }
        selections.sort_unstable_by_key(|s| (s.item.key(), s.id));
        let mut findings: Vec<(Item, Finding)> = Vec::new();
        let mut same_item: Vec<Selection> = Vec::new();
        let mut firsts: Vec<Selection> = Vec::new();
        let mut open: Vec<Selection> = Vec::new();
        // Whether a selection at `later_at` can pair with an earlier one, and whether the earlier
        // one can pair with nothing from then on (its round has ended, or it fell out of the
        // fixed window: later selections are later still).
        let window = context.settings.duplicate_window_s;
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
        for same_key in selections.chunk_by(|a, b| a.item.key() == b.item.key()) {
            if same_key.len() < 2 {
                continue;
            }
            // An item selected again, but never while another round that selected it ran (nearly
            // every item re-selected in a long ledger), is let go before any text is read: if no
            // two selections with this key pair, no two of one item do.
            open.clear();
            let may_pair = same_key.iter().any(|later| {
                open.retain(|earlier| !gone(earlier, later.at));
                let pairs = open.iter().any(|earlier| earlier.round != later.round && close(earlier, later.at));
                open.push(*later);
                pairs
            });
            if !may_pair {
                continue;
            }
            // Items whose texts hash alike are told apart here (each text is read once when they
            // are all the same item, as they nearly always are).
            let (groups, one_item): (&[Selection], bool) = if same_key.iter().all(|s| s.item == same_key[0].item) {
                (same_key, true)
            } else {
                same_item.clear();
                same_item.extend_from_slice(same_key);
                same_item.sort_by(|a, b| a.item.grouping_cmp(&b.item).then(a.id.cmp(&b.id)));
                (&same_item, false)
            };
            for group in groups.chunk_by(|a, b| one_item || a.item == b.item) {
                if group.len() < 2 {
                    continue;
                }
                let group_item = group[0].item;
                // Each round counts with its first selection of the item; every pair of rounds
                // is judged on its own, so A–B far apart does not hide B–C close together.
                firsts.clear();
                firsts.extend_from_slice(group);
                firsts.sort_unstable_by_key(|s| (s.round, s.id));
                firsts.dedup_by_key(|s| s.round);
                firsts.sort_unstable_by_key(|s| s.id);
                // Earlier first selections that can still pair with a later one: once a round has
                // ended (or a selection fell out of the fixed window) it cannot pair with anything
                // later, so an item picked by thousands of rounds over a long ledger stays one pass.
                open.clear();
                for &later in &firsts {
                    open.retain(|earlier| close(earlier, later.at));
                    for earlier in &open {
                        let rounds = (&context.rounds[earlier.round as usize], &context.rounds[later.round as usize]);
                        let finding = duplicate(context, &group_item, (earlier.id, rounds.0), (later.id, rounds.1));
                        findings.push((group_item, finding));
                    }
                    open.push(later);
                }
            }
        }
        // Items in text order, for a stable order of findings made at the same time (sorting the
        // findings, not the items: few items have any).
        findings.sort_by(|(a, _), (b, _)| a.as_str().cmp(b.as_str()));
        findings.into_iter().map(|(_, finding)| finding).collect()
    }
}

/// One round's selection of an item (the round by its position in `Context::rounds`), with its
/// time: pairing reads times again and again, and the events of a million selections are
/// scattered over the timeline.
#[derive(Clone, Copy)]
struct Selection {
    item: Item,
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

    #[test]
    fn a_fixed_window_replaces_the_running_rule() {
        let narrow = Settings { duplicate_window_s: Some(0.5), ..Settings::default() };
        assert!(detect(incident(), &narrow).is_empty());
        let wide = Settings { duplicate_window_s: Some(1.0), ..Settings::default() };
        assert_eq!(detect(incident(), &wide).len(), 1);
    }
}
