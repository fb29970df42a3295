//! Rounds and job attempts: the units detectors reason about, assembled from events by id.
//!
//! A round is everything the ledger recorded under one run id. A job attempt is one activation of
//! one job id. Both are built from ids and times only, never from line order.

use ustr::UstrMap;

use chrono::{DateTime, Utc};

use super::timeline::EventId;
use super::{Channel, EventKind, Text, Timeline};

#[derive(Debug, Clone, PartialEq)]
pub struct Round {
    pub run_id: Text,
    /// Which periodic sweep the round belongs to (`job_name`, else `queue`); `None` when the
    /// ledger does not say, in which case all such rounds are taken as one sweep.
    pub sweep: Option<Text>,
    pub job_id: Option<Text>,
    pub slot: Option<DateTime<Utc>>,
    pub started: Option<EventId>,
    /// The earliest `round-finished` or `round-failed` row.
    pub ended: Option<EventId>,
    pub first_event: EventId,
    pub last_event: EventId,
    pub selections: Vec<EventId>,
    pub effects: Vec<EventId>,
}

impl Round {
    /// When the round began: its `round-started` row, else its first row.
    pub fn start_at(&self, timeline: &Timeline) -> DateTime<Utc> {
        timeline.get(self.started.unwrap_or(self.first_event)).at
    }

    /// When the round is known to have stopped running: its end row, else its last row (it was
    /// running at least until then).
    pub fn end_at(&self, timeline: &Timeline) -> DateTime<Utc> {
        timeline.get(self.ended.unwrap_or(self.last_event)).at
    }

    pub fn is_running_at(&self, timeline: &Timeline, at: DateTime<Utc>) -> bool {
        self.start_at(timeline) <= at && at <= self.end_at(timeline)
    }
}

/// Groups ledger events by run id, ordered by start time (then run id, for stable output).
pub fn rounds(timeline: &Timeline) -> Vec<Round> {
    // Keyed by the interned run id (hashing is a pointer); the order comes from the sort below.
    // Nearly every round has one start row: sized for them, the table is not rebuilt as it grows.
    let mut by_run: UstrMap<Round> = UstrMap::with_capacity_and_hasher(
        timeline.count_of(EventKind::RoundStarted),
        std::hash::BuildHasherDefault::default(),
    );
    for (id, event) in timeline.ids() {
        let Some(run_id) = event.run_id else {
            continue;
        };
        if !matches!(
            event.kind,
            EventKind::RoundStarted
                | EventKind::ItemSelected
                | EventKind::EffectPosted
                | EventKind::RoundFinished
                | EventKind::RoundFailed
        ) {
            continue;
        }
        let round = by_run.entry(run_id).or_insert_with(|| Round {
            run_id,
            sweep: None,
            job_id: None,
            slot: None,
            started: None,
            ended: None,
            first_event: id,
            last_event: id,
            selections: Vec::new(),
            effects: Vec::new(),
        });
        round.last_event = id;
        if round.sweep.is_none() {
            round.sweep = event.job_name.or(event.queue);
        }
        if round.job_id.is_none() {
            round.job_id = event.job_id;
        }
        if round.slot.is_none() {
            round.slot = event.slot;
        }
        match event.kind {
            EventKind::RoundStarted if round.started.is_none() => round.started = Some(id),
            EventKind::RoundFinished | EventKind::RoundFailed if round.ended.is_none() => {
                round.ended = Some(id);
            }
            EventKind::ItemSelected => round.selections.push(id),
            EventKind::EffectPosted => round.effects.push(id),
            _ => {}
        }
    }
    let mut rounds: Vec<Round> = by_run.into_values().collect();
    // Each start time is looked up once: the comparisons would otherwise read events all over
    // the timeline.
    rounds.sort_by_cached_key(|a| (a.start_at(timeline), a.run_id));
    rounds
}

/// One activation of a job.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    pub job_id: Text,
    /// The `job-active` log line, or the ledger's `round-started` row when no log saw the job.
    pub activated: EventId,
}

/// Activations per job id, in time order, all from one channel: the most authoritative channel
/// that saw the job active (events stream, then logs, then the ledger's `round-started` rows, then
/// a job hash's `processedOn`), so that one activation is never counted twice from two sources.
/// Jobs come in id order.
pub fn attempts(timeline: &Timeline) -> Vec<(Text, Vec<Attempt>)> {
    let mut best: UstrMap<(u8, Vec<Attempt>)> = UstrMap::with_capacity_and_hasher(
        timeline.count_of(EventKind::RoundStarted).max(timeline.count_of(EventKind::JobActive)),
        std::hash::BuildHasherDefault::default(),
    );
    // Activations are a few of the events: their kinds are looked at first, without reading the
    // others.
    let activations =
        timeline.ids().filter(|&(id, _)| matches!(timeline.kind(id), EventKind::JobActive | EventKind::RoundStarted));
    for (id, event) in activations {
        let Some(job_id) = event.job_id else {
            continue;
        };
        let is_activation = match event.kind {
            EventKind::JobActive => true,
            EventKind::RoundStarted => event.origin.channel == Channel::Ledger,
            _ => false,
        };
        if !is_activation {
            continue;
        }
        let rank = event.origin.channel.activation_rank();
        let entry = best.entry(job_id).or_insert((rank, Vec::new()));
        if rank < entry.0 {
            *entry = (rank, Vec::new());
        }
        if rank == entry.0 {
            entry.1.push(Attempt { job_id, activated: id });
        }
    }
    let mut attempts: Vec<(Text, Vec<Attempt>)> =
        best.into_iter().map(|(job, (_, attempts))| (job, attempts)).collect();
    attempts.sort_unstable_by(|(a, _), (b, _)| a.as_str().cmp(b.as_str()));
    attempts
}
