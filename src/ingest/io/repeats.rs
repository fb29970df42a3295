//! Evidence read twice, kept once. Log shippers deliver at least once, so a log may hold a line
//! twice; a case may name one file twice (the same path in a manifest and on the command line, a
//! copy in another folder). Counted twice, one activation becomes a rerun and one pick a duplicate
//! selection. Two kinds of repeat are found, both exact:
//!
//! - **a line repeated within a source**: a line whose text is word for word that of an earlier
//!   line of the same source and whose events say the same (time, kind, ids, item, detail). Its
//!   events are dropped and the line counted as ignored (`REPEATED_LINE`).
//! - **a source repeated**: a source whose events are those of an earlier source, line for line
//!   (the same number of lines read, the same events on the same lines). All its events are
//!   dropped and its used lines counted as ignored (`same evidence as <path>`).
//!
//! Near-repeats across sources (the same activation in a pod's log and in the stream) are not
//! repeats: they are several records of one event, which the detectors merge.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};

use crate::error::Result;
use crate::ingest::SourceSpec;
use crate::model::timeline::EventId;
use crate::model::{Event, InputSummary, Timeline};

/// What an event says, but not where (`Event::content_key`).
type ContentKey = (
    crate::model::Moment,
    crate::model::EventKind,
    crate::model::event::Handle<crate::model::event::Scope>,
    Option<crate::model::Item>,
    crate::model::event::Handle<crate::model::event::Extra>,
    crate::model::event::Channel,
);
use crate::progress::Progress;

use crate::model::input::{REPEATED_LINE, Repeat, SAME_EVIDENCE_AS};

/// Finds the repeats of `timeline` (read from `sources`, summarised in `inputs`), and returns
/// the timeline without them, `inputs` accounting for them, and what was found.
pub fn drop_repeats(
    timeline: Timeline,
    sources: &[SourceSpec],
    inputs: &mut [InputSummary],
    progress: &Progress,
) -> Result<(Timeline, Vec<Repeat>)> {
    let mut drop = vec![false; timeline.len()];
    let mut repeats: Vec<Repeat> = Vec::new();
    let same_as = repeated_sources(&timeline, inputs);
    for (&source, &earlier) in &same_as {
        repeats.push(Repeat { source, lines: 0, first: None, same_as: Some(earlier) });
    }
    for (id, event) in timeline.ids() {
        if same_as.contains_key(&event.origin().source) {
            drop[id as usize] = true;
        }
    }
    for (source, lines) in repeated_lines(&timeline, sources, &drop, progress)? {
        let mut dropped_lines = 0u64;
        let mut first = None;
        let mut events_dropped = 0u64;
        let repeated: HashMap<u32, u32> = lines.iter().copied().collect();
        for (id, event) in timeline.ids() {
            let origin = event.origin();
            if origin.source == source && repeated.contains_key(&origin.line) && !drop[id as usize] {
                drop[id as usize] = true;
                events_dropped += 1;
            }
        }
        for &(line, earlier) in &lines {
            dropped_lines += 1;
            if first.is_none_or(|(first_line, _)| line < first_line) {
                first = Some((line, earlier));
            }
        }
        if let Some(input) = inputs.get_mut(usize::from(source)) {
            input.used = input.used.saturating_sub(dropped_lines);
            input.events = input.events.saturating_sub(events_dropped);
            input.ignored += dropped_lines;
            *input.ignored_by_reason.entry(REPEATED_LINE.to_string()).or_default() += dropped_lines;
        }
        repeats.push(Repeat { source, lines: dropped_lines, first, same_as: None });
    }
    for (&source, &earlier) in &same_as {
        let earlier_path = inputs.get(usize::from(earlier)).map(|input| input.path.clone()).unwrap_or_default();
        if let Some(input) = inputs.get_mut(usize::from(source)) {
            let used = std::mem::take(&mut input.used);
            input.events = 0;
            input.ignored += used;
            *input.ignored_by_reason.entry(format!("{SAME_EVIDENCE_AS} {earlier_path}")).or_default() += used;
        }
    }
    repeats.sort_by_key(|repeat| repeat.source);
    let timeline = if drop.iter().any(|&dropped| dropped) { timeline.without(&drop) } else { timeline };
    Ok((timeline, repeats))
}

/// Each source whose events are an earlier source's, line for line, with the earlier source.
fn repeated_sources(timeline: &Timeline, inputs: &[InputSummary]) -> HashMap<u16, u16> {
    let hasher = rustc_hash::FxBuildHasher;
    let mut fingerprints: Vec<(rustc_hash::FxHasher, u64)> =
        (0..inputs.len()).map(|_| (hasher.build_hasher(), 0)).collect();
    for event in timeline.events() {
        if let Some((state, count)) = fingerprints.get_mut(usize::from(event.origin().source)) {
            event.hash_content(state);
            *count += 1;
        }
    }
    let mut seen: HashMap<(u64, u64, u64, &str, &str), u16> = HashMap::new();
    let mut same_as = HashMap::new();
    for (source, ((state, count), input)) in fingerprints.iter().zip(inputs).enumerate() {
        let Ok(source) = u16::try_from(source) else { break };
        if *count == 0 {
            continue;
        }
        let key = (state.finish(), *count, input.lines, input.kind, input.format);
        match seen.get(&key) {
            // The fingerprints agree: the events decide, one by one.
            Some(&earlier) if same_events(timeline, earlier, source) => {
                same_as.insert(source, earlier);
            }
            Some(_) => {}
            None => {
                seen.insert(key, source);
            }
        }
    }
    same_as
}

/// Whether sources `a` and `b` give the same events on the same lines.
fn same_events(timeline: &Timeline, a: u16, b: u16) -> bool {
    let of = |source: u16| timeline.events().iter().filter(move |event| event.origin().source == source);
    let content = |event: &Event| (event.content_key(), event.origin().line);
    of(a).map(content).eq(of(b).map(content))
}

/// A repeated line and the earlier line it repeats.
type LineRepeat = (u32, u32);

/// Per source, each line whose events say what an earlier line's say at the same time and whose
/// text is the same, with that earlier line.
fn repeated_lines(
    timeline: &Timeline,
    sources: &[SourceSpec],
    dropped: &[bool],
    progress: &Progress,
) -> Result<Vec<(u16, Vec<LineRepeat>)>> {
    // Candidates: events of one moment and source that say the same, in groups. The timeline is
    // in time order, so they are neighbours within their moment. A group is compared whole, not
    // with its first member only: two lines that say the same in different words (a shipper's
    // own timestamps differ), each delivered twice, are two repeats.
    let events = timeline.events();
    let mut groups: Vec<Vec<EventId>> = Vec::new();
    let mut start = 0;
    while start < events.len() {
        let mut end = start + 1;
        while end < events.len() && events[end].moment() == events[start].moment() {
            end += 1;
        }
        if end - start > 1 {
            let mut group_of: HashMap<(u16, ContentKey), usize> = HashMap::new();
            let mut moment_groups: Vec<Vec<EventId>> = Vec::new();
            for index in start..end {
                if dropped[index] {
                    continue;
                }
                let event = &events[index];
                let key = (event.origin().source, event.content_key());
                let group = *group_of.entry(key).or_insert_with(|| {
                    moment_groups.push(Vec::new());
                    moment_groups.len() - 1
                });
                moment_groups[group].push(to_id(index));
            }
            groups.extend(moment_groups.into_iter().filter(|group| group.len() > 1));
        }
        start = end;
    }
    if groups.is_empty() {
        return Ok(Vec::new());
    }
    // The texts decide: two rows of a ledger whose columns leasetrace does not read (a row id)
    // may say the same and be two rows.
    let ids: Vec<EventId> = groups.iter().flatten().copied().collect();
    let read = crate::ingest::io::read_back::read_back(sources, timeline, &ids, progress)?;
    let text = |id: EventId| -> Option<String> {
        read.get(&id).cloned().or_else(|| timeline.kept_text(timeline.get(id)).map(str::to_string))
    };
    let mut by_source: std::collections::BTreeMap<u16, HashMap<u32, u32>> = std::collections::BTreeMap::new();
    for mut group in groups {
        group.sort_by_key(|&id| timeline.get(id).origin().line);
        // Each text's first line in the group: a later line with that text repeats it (a line
        // repeated three times: each repeat names the first).
        let mut first_line: HashMap<String, u32> = HashMap::new();
        for id in group {
            let origin = timeline.get(id).origin();
            let Some(text) = text(id) else { continue };
            match first_line.get(&text) {
                Some(&earlier) if earlier != origin.line => {
                    by_source.entry(origin.source).or_default().entry(origin.line).or_insert(earlier);
                }
                Some(_) => {}
                None => {
                    first_line.insert(text, origin.line);
                }
            }
        }
    }
    Ok(by_source
        .into_iter()
        .map(|(source, lines)| {
            let mut lines: Vec<(u32, u32)> = lines.into_iter().collect();
            lines.sort_unstable();
            (source, lines)
        })
        .collect())
}

fn to_id(index: usize) -> EventId {
    EventId::try_from(index).expect("a timeline holds at most EventId::MAX events")
}
