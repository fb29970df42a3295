//! Which process ran an activation, and which restart ended that process.
//!
//! A restart line is the start of a new process; it does not say which process died. In a case
//! of one server that is never in doubt. In a fleet it is: a restart of pod web-2 says nothing of
//! a job web-1 was running, and taking it as that job's restart turns the lock's expiry window
//! into an exact time that is wrong by however long web-1 lived on. So a restart is a job's only
//! when the evidence ties it to the process that ran the job:
//!
//! - **the same instance** (an envelope's label: `pod=web-1 container=app`), or **the same host**
//!   (the host part of a worker, `web-1/41877`: a pod keeps its hostname when its container
//!   restarts), or **the same log file**; and
//! - that instance, host or file is **one process at a time**: the process ids its lines name
//!   never run side by side. Two replicas on one VM share a hostname and often a log file, and
//!   their pids overlap: there a restart cannot be placed, and none is taken. A log that names no
//!   process ids at all is taken as one process's, and the finding says so.
//!
//! A restart whose instance or host differs from the job's process is never its restart.

use std::collections::HashMap;

use crate::model::timeline::{CLOCK_SKEW_MS, EventId};
use crate::model::{Channel, Event, EventKind, Moment, Round, Text, Timeline};

use super::Context;

/// When a round stopped running, as far as the evidence pins it (`Context::round_end`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoundEnd {
    /// It ran at least until then.
    pub earliest: Moment,
    /// It had stopped by then.
    pub latest: Moment,
    /// The restart of its owner's process that ended it, when another process closed it later.
    pub restart: Option<EventId>,
}

/// How a restart was tied to the process that ran a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attribution {
    /// The same instance label, and that instance runs one process at a time.
    Instance,
    /// The same host, and that host runs one process at a time.
    Host,
    /// The same log file, whose process ids never overlap.
    Log,
    /// The same log file, which names no process ids: taken to be one process's.
    LogWithoutPids,
}

impl Attribution {
    /// Why the restart is the job's, for a finding's notes.
    pub fn describe(self) -> &'static str {
        match self {
            Attribution::Instance => {
                "the restart is of the instance that ran the job (the same envelope label), and that instance ran one process at a time"
            }
            Attribution::Host => {
                "the restart is on the host that ran the job (the same host in the worker field), and that host ran one process at a time (its process ids never overlap)"
            }
            Attribution::Log => {
                "the restart is in the log of the process that ran the job, and that log is one process's at a time (its process ids never overlap)"
            }
            Attribution::LogWithoutPids => {
                "the restart is in the log that recorded the job's activation; that log names no process ids, so it is taken to be one process's at a time: if several processes write it, the restart may be another's"
            }
        }
    }
}

/// Where a process is known from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Place {
    Instance(Text),
    Host(Text),
    Source(u16),
}

/// Whether each instance, host and log file runs one process at a time, from the process ids
/// its log lines name.
#[derive(Debug, Default)]
pub struct Processes {
    /// `Some(true)`: the pids never overlap; `Some(false)`: they do; absent: no pid named.
    one_at_a_time: HashMap<Place, bool>,
    /// The log files each process (host, when named, and pid) wrote lines to: a ledger row's
    /// worker (`api-1/41877`) is the process of a log whose lines name pid 41877.
    logs_of: HashMap<(Option<Text>, Text), Vec<u16>>,
}

/// The host and the process id of a worker as the sources write it: `api-1/41877` (a ledger, a
/// pino line), `41877` (a `pid=` field).
fn host_and_pid(worker: &str) -> (Option<&str>, &str) {
    match worker.rsplit_once('/') {
        Some((host, pid)) if !host.is_empty() => (Some(host), pid),
        _ => (None, worker),
    }
}

fn places(event: &Event) -> impl Iterator<Item = Place> {
    let host = event.worker.and_then(|worker| host_and_pid(worker.as_str()).0.map(Text::from));
    let source = (event.origin().channel == Channel::Log).then_some(Place::Source(event.origin().source));
    event.instance.map(Place::Instance).into_iter().chain(host.map(Place::Host)).chain(source)
}

impl Processes {
    pub fn read(timeline: &Timeline) -> Processes {
        // Each place's processes, with the span of their lines.
        let mut spans: HashMap<Place, HashMap<&str, (i64, i64)>> = HashMap::new();
        let mut logs_of: HashMap<(Option<Text>, Text), Vec<u16>> = HashMap::new();
        for event in timeline.events() {
            if event.origin().channel != Channel::Log {
                continue;
            }
            let Some(worker) = event.worker else { continue };
            let (host, pid) = host_and_pid(worker.as_str());
            let logs = logs_of.entry((host.map(Text::from), Text::from(pid))).or_default();
            if !logs.contains(&event.origin().source) {
                logs.push(event.origin().source);
            }
            let at = event.moment().nanos();
            for place in places(event) {
                let span = spans.entry(place).or_default().entry(pid).or_insert((at, at));
                span.0 = span.0.min(at);
                span.1 = span.1.max(at);
            }
        }
        let one_at_a_time = spans
            .into_iter()
            .map(|(place, pids)| {
                let mut spans: Vec<(i64, i64)> = pids.into_values().collect();
                spans.sort_unstable();
                (place, spans.windows(2).all(|pair| pair[0].1 < pair[1].0))
            })
            .collect();
        Processes { one_at_a_time, logs_of }
    }

    /// The log files the process of `worker` wrote to (by its host and pid, or its pid alone
    /// when either names no host).
    fn logs_of(&self, worker: &str) -> impl Iterator<Item = u16> + '_ {
        let (host, pid) = host_and_pid(worker);
        let (host, pid) = (host.map(Text::from), Text::from(pid));
        self.logs_of
            .iter()
            .filter(move |((their_host, their_pid), _)| {
                *their_pid == pid && (host.is_none() || their_host.is_none() || *their_host == host)
            })
            .flat_map(|(_, logs)| logs.iter().copied())
    }
}

impl Context<'_> {
    /// The process start, among `candidates` (in time order), that ended the process `near`
    /// (an activation, or a row of its run) came from, and how it is tied to it (see the module's
    /// introduction). `None`: no candidate can be tied to that process.
    pub fn restart_of(&self, near: &Event, candidates: &[EventId]) -> Option<(EventId, Attribution)> {
        if candidates.is_empty() {
            return None;
        }
        let processes = self.processes.get_or_init(|| Processes::read(self.timeline));
        let records = self.records_of_activation(near);
        let mut ours: Vec<Place> = records.iter().flat_map(|&event| places(event)).collect();
        // The logs the job's process wrote to, found by its pid: a ledger row names its worker.
        for worker in records.iter().filter_map(|event| event.worker) {
            ours.extend(processes.logs_of(worker.as_str()).map(Place::Source));
        }
        let hosts: Vec<Text> =
            ours.iter().filter_map(|place| if let Place::Host(host) = place { Some(*host) } else { None }).collect();
        let instances: Vec<Text> = records.iter().filter_map(|event| event.instance).collect();
        candidates.iter().copied().find_map(|id| {
            let restart = self.timeline.get(id);
            // Another instance's or another host's restart is never this process's.
            if restart.instance.is_some_and(|i| !instances.is_empty() && !instances.contains(&i)) {
                return None;
            }
            let host = restart.worker.and_then(|w| host_and_pid(w.as_str()).0.map(Text::from));
            if host.is_some_and(|h| !hosts.is_empty() && !hosts.contains(&h)) {
                return None;
            }
            places(restart).filter(|place| ours.contains(place)).find_map(|place| {
                // Several processes side by side (`Some(false)`), or a host no pid was seen on:
                // the restart cannot be placed there.
                match (place, processes.one_at_a_time.get(&place)) {
                    (Place::Instance(_), None | Some(true)) => Some((id, Attribution::Instance)),
                    (Place::Host(_), Some(true)) => Some((id, Attribution::Host)),
                    (Place::Source(_), Some(true)) => Some((id, Attribution::Log)),
                    (Place::Source(_), None) => Some((id, Attribution::LogWithoutPids)),
                    _ => None,
                }
            })
        })
    }

    /// The process that made the activation `near` is (or a row of its run): the worker its
    /// records name, as `host/pid` when one of them gives both, else as written. `None`: no record
    /// names one (the events stream names no worker).
    pub fn process_of(&self, near: &Event) -> Option<Text> {
        let records = self.records_of_activation(near);
        let workers = records.iter().filter_map(|event| event.worker);
        workers.clone().find(|worker| host_and_pid(worker.as_str()).0.is_some()).or_else(|| workers.clone().next())
    }

    /// When `round` stopped running: its end row, unless another process wrote that row (a new
    /// process marking the runs it found `running` failed at startup) after a restart tied to the
    /// round's owner: the owner died at or before that restart, and after its last sign of life
    /// (its last row or log line), and the round stopped with it. A round without an end row runs
    /// to its last row.
    pub fn round_end(&self, round: &Round) -> RoundEnd {
        let timeline = self.timeline;
        let end = round.end_moment(timeline);
        let known = RoundEnd { earliest: end, latest: end, restart: None };
        let (Some(ended), Some(started)) = (round.ended(), round.started()) else { return known };
        let (owner, closer) = (timeline.get(started).worker, timeline.get(ended).worker);
        let (Some(owner), Some(closer)) = (owner, closer) else { return known };
        if owner == closer {
            return known;
        }
        let start = round.start_moment(timeline);
        let restarts: Vec<EventId> = self
            .restarts
            .iter()
            .copied()
            .filter(|&id| start < timeline.get(id).moment() && timeline.get(id).moment() <= end)
            .collect();
        let Some((restart, _)) = self.restart_of(timeline.get(started), &restarts) else { return known };
        let died_by = timeline.get(restart).moment();
        // The owner's last sign of life before the restart: any record its process wrote.
        let (host, pid) = host_and_pid(owner.as_str());
        let from = timeline.events().partition_point(|e| e.moment() < start);
        let last_seen = timeline
            .ids_from(from)
            .take_while(|(_, e)| e.moment() < died_by)
            .filter(|(_, e)| {
                e.worker.is_some_and(|worker| {
                    let (their_host, their_pid) = host_and_pid(worker.as_str());
                    their_pid == pid && (host.is_none() || their_host.is_none() || their_host == host)
                })
            })
            .map(|(_, e)| e.moment())
            .last()
            .unwrap_or(start);
        RoundEnd { earliest: last_seen, latest: died_by, restart: Some(restart) }
    }

    /// The records of the activation `near` is (or of the run it belongs to): itself, and the
    /// job's other records of the same activation (a log line within the clocks' skew and its
    /// time's resolution, the ledger's `round-started` row of the run before the next
    /// activation), which name the worker and instance the events stream does not.
    fn records_of_activation<'t>(&'t self, near: &'t Event) -> Vec<&'t Event> {
        let mut records = vec![near];
        let Some(job) = self.job_of(near) else { return records };
        let timeline = self.timeline;
        let at = near.moment().nanos();
        let next = self
            .attempts_of_job(job)
            .iter()
            .map(|attempt| timeline.get(attempt.activated).moment().nanos())
            .find(|&other| other > at + CLOCK_SKEW_MS * 1_000_000);
        let lock_ns = i64::try_from(self.params.lock_duration).unwrap_or(i64::MAX).saturating_mul(1_000_000);
        let mut ledger_row = false;
        for &id in self.events_of_job(job) {
            let event = timeline.get(id);
            let after = event.moment().nanos() - at;
            let close = match (event.kind, event.origin().channel) {
                (EventKind::JobActive, Channel::Log) => {
                    // A whole-second line may be up to a second earlier than what it records.
                    let slack = CLOCK_SKEW_MS * 1_000_000
                        + if event.at().timestamp_subsec_nanos() == 0 { 1_000_000_000 } else { 0 };
                    after.abs() <= slack
                }
                (EventKind::RoundStarted, Channel::Ledger) if !ledger_row => {
                    let before_next = next.is_none_or(|next| event.moment().nanos() < next);
                    let close = after > -CLOCK_SKEW_MS * 1_000_000 && after < lock_ns && before_next;
                    ledger_row |= close;
                    close
                }
                _ => false,
            };
            if close && !std::ptr::eq(event, near) {
                records.push(event);
            }
        }
        records
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::Settings;
    use crate::model::{LockParams, Origin};

    /// A log line of source `source` at `second`, written by `worker`.
    fn line(source: u16, second: i64, kind: EventKind, worker: &str) -> Event {
        let at = chrono::DateTime::from_timestamp(1_796_028_400 + second, 0).unwrap();
        let line = u32::try_from(second).unwrap() + 1;
        let mut event = Event::new(at.into(), kind, Origin { channel: Channel::Log, source, line });
        event.edit().worker = Some(worker.into());
        if kind == EventKind::JobActive {
            event.edit().job_id = Some("7".into());
        }
        event
    }

    fn restart(events: Vec<Event>) -> Option<(EventId, Attribution)> {
        let timeline = Timeline::new(events);
        let params = LockParams::default();
        let settings = Settings::default();
        let context = Context::new(&timeline, &params, &settings);
        let activation = timeline.ids().find(|(_, e)| e.kind == EventKind::JobActive).map(|(id, _)| id).unwrap();
        let candidates: Vec<EventId> = context.restarts.clone();
        context.restart_of(timeline.get(activation), &candidates)
    }

    #[test]
    fn a_pods_own_restart_is_its_restart_another_pods_is_not() {
        // One log per pod, pino's host/pid workers; web-2 restarts first, then web-1.
        let events = vec![
            line(0, 0, EventKind::JobActive, "web-1/10"),
            line(1, 5, EventKind::ProcessStart, "web-2/30"),
            line(0, 9, EventKind::ProcessStart, "web-1/11"),
        ];
        assert_eq!(restart(events), Some((2, Attribution::Host)));
    }

    #[test]
    fn in_a_log_two_replicas_share_no_restart_can_be_placed() {
        // Two processes on one host, both writing one file: pid 10 and pid 20 overlap.
        let events = vec![
            line(0, 0, EventKind::JobActive, "10"),
            line(0, 1, EventKind::JobCompleted, "20"),
            line(0, 3, EventKind::JobCompleted, "10"),
            line(0, 5, EventKind::ProcessStart, "30"),
            line(0, 9, EventKind::JobCompleted, "20"),
        ];
        assert_eq!(restart(events), None);
    }

    #[test]
    fn a_server_log_of_one_process_at_a_time_ties_its_restart() {
        // The 2026-10-07 incident: pid 41877, then 52117 after the restart.
        let events = vec![
            line(0, 0, EventKind::JobActive, "41877"),
            line(0, 200, EventKind::JobCompleted, "41877"),
            line(0, 266, EventKind::ProcessStart, "52117"),
        ];
        assert_eq!(restart(events), Some((2, Attribution::Log)));
    }

    #[test]
    fn a_restart_in_another_log_without_a_shared_instance_or_host_is_not_taken() {
        let events = vec![line(0, 0, EventKind::JobActive, "10"), line(1, 5, EventKind::ProcessStart, "11")];
        assert_eq!(restart(events), None);
    }
}
