//! What every ledger format shares: finding the columns and turning one record into an event.
//!
//! A ledger row is one thing that happened to a round: started, selected an item, posted an
//! effect, finished, failed. Columns are found by default names (first match, case-insensitive)
//! unless the user maps them; the table below is documented in docs/inputs/ledger.md.

pub mod csv;
pub mod jsonl;

/// The ledger formats, in the order they are tried (`ingest::FAMILIES`).
pub const FORMATS: &[&dyn super::EventFormat] = &[&csv::LedgerCsv, &jsonl::LedgerJsonl];

use std::borrow::Cow;
use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::error::{Error, Result};
use crate::model::event::{Extra, LeaseFacts};
use crate::model::{Event, EventKind, Origin, Text};
use crate::time;
use crate::time::fold::FoldLines;

use crate::ingest::SourceSpec;
use crate::ingest::io::recent::RecentTexts;

/// A ledger field, the default column names tried for it, and whether it is required.
pub struct Field {
    pub name: &'static str,
    pub defaults: &'static [&'static str],
    pub required: bool,
    pub meaning: &'static str,
}

pub const FIELDS: &[Field] = &[
    Field {
        name: "time",
        defaults: &["at", "time", "timestamp", "ts", "created_at", "occurred_at"],
        required: true,
        meaning: "when the row's event happened",
    },
    Field {
        name: "event",
        defaults: &["event", "type", "action", "event_type"],
        required: true,
        meaning: "what happened (see event values)",
    },
    Field {
        name: "run",
        defaults: &["run_id", "run", "round_id", "round"],
        required: false,
        meaning: "the run (round execution) the row belongs to",
    },
    Field {
        name: "job",
        defaults: &["job_id", "job", "bull_job_id"],
        required: false,
        meaning: "the queue job that executed the run",
    },
    Field {
        name: "slot",
        defaults: &["slot", "slot_at", "scheduled_at", "scheduled_for"],
        required: false,
        meaning: "the scheduled time of the round",
    },
    Field {
        name: "item",
        defaults: &["item", "pr", "pr_number", "pull_request"],
        required: false,
        meaning: "the item selected or acted on (a PR)",
    },
    Field {
        name: "worker",
        defaults: &["worker", "owner", "host", "hostname", "pid"],
        required: false,
        meaning: "who executed the run",
    },
    Field {
        name: "status",
        defaults: &["status", "state"],
        required: false,
        meaning: "status written with the row (e.g. FAILED)",
    },
    Field {
        name: "sweep",
        defaults: &["sweep", "job_name", "name"],
        required: false,
        meaning: "which periodic sweep the round belongs to",
    },
    Field { name: "queue", defaults: &["queue", "queue_name"], required: false, meaning: "the queue of the job" },
    Field {
        name: "detail",
        defaults: &["detail", "reason", "message", "error", "cause"],
        required: false,
        meaning: "free text: failure reason or cause, note",
    },
    Field {
        name: "generation",
        defaults: &["generation", "gen", "fencing_token", "fence", "lease_generation"],
        required: false,
        meaning: "lease ledgers: the fencing number the actor held (incremented on every claim)",
    },
    Field {
        name: "lease_until",
        defaults: &["lease_until", "lease_expires_at", "expires_at", "locked_until"],
        required: false,
        meaning: "lease ledgers: until when the lease is valid after this row (the store's clock)",
    },
    Field {
        name: "attempt",
        defaults: &["attempt", "attempts", "attempts_made", "try"],
        required: false,
        meaning: "which attempt of the job this is (1-based)",
    },
    Field {
        name: "outcome",
        defaults: &["outcome", "result", "accepted"],
        required: false,
        meaning: "whether the store accepted the claim, heartbeat, completion or effect (see outcome values)",
    },
    Field {
        name: "key",
        defaults: &["idempotency_key", "dedupe_key", "key"],
        required: false,
        meaning: "the idempotency key sent with an external effect",
    },
    Field {
        name: "payload_hash",
        defaults: &["payload_hash", "payload_sha", "body_hash"],
        required: false,
        meaning: "a hash of the external effect's payload",
    },
];

/// Outcome-column values, after lower-casing: accepted by the store (or delivered), or not.
pub const OUTCOME_VALUES: &[(bool, &[&str])] = &[
    (true, &["accepted", "ok", "true", "yes", "applied", "success", "succeeded", "delivered", "1"]),
    (false, &["rejected", "refused", "false", "no", "conflict", "denied", "stale", "deduplicated", "duplicate", "0"]),
];

/// Event-column values understood by default, after lower-casing and turning `-` and spaces
/// into `_`.
pub const EVENT_VALUES: &[(EventKind, &[&str])] = &[
    (EventKind::RoundStarted, &["round_started", "run_started", "started", "start"]),
    (EventKind::ItemSelected, &["item_selected", "pr_selected", "selected", "select"]),
    (EventKind::EffectPosted, &["effect_posted", "review_posted", "posted", "effect"]),
    (EventKind::RoundFinished, &["round_finished", "run_finished", "finished", "done", "completed", "succeeded"]),
    (EventKind::RoundFailed, &["round_failed", "run_failed", "failed", "error", "attempt_failed"]),
    (EventKind::LeaseClaimed, &["lease_claimed", "claim", "claimed", "acquire", "take"]),
    (EventKind::LeaseExtended, &["lease_extended", "heartbeat", "extend", "renew"]),
    (EventKind::LeaseCompleted, &["lease_completed", "complete", "completion", "result_written", "commit"]),
    (EventKind::JobDead, &["job_dead", "dead", "quarantined", "dead_lettered"]),
];

/// For each field, the column name to read it from (if the ledger has one).
#[derive(Debug, Clone)]
pub struct Columns {
    pub names: BTreeMap<&'static str, String>,
}

impl Columns {
    /// Matches fields to the columns present. `available` is the header (CSV) or the keys of the
    /// first record (JSON Lines).
    pub fn resolve(spec: &SourceSpec, available: &[String], line: u64) -> Result<Columns> {
        for key in spec.columns.keys() {
            if !FIELDS.iter().any(|f| f.name == key) {
                let known: Vec<&str> = FIELDS.iter().map(|f| f.name).collect();
                return Err(Error::usage(format!(
                    "{}: unknown ledger field '{key}' in the column mapping: expected one of {}",
                    spec.display_path(),
                    known.join(", ")
                )));
            }
        }
        let mut names = BTreeMap::new();
        for field in FIELDS {
            let found = if let Some(mapped) = spec.columns.get(field.name) {
                let hit = available.iter().find(|c| c.eq_ignore_ascii_case(mapped));
                if hit.is_none() {
                    return Err(Error::input(
                        &spec.path,
                        Some(line),
                        format!(
                            "column '{mapped}' (mapped to the ledger field '{}') is not in the header; the header has: {}",
                            field.name,
                            available.join(", ")
                        ),
                    ));
                }
                hit
            } else {
                field.defaults.iter().find_map(|d| available.iter().find(|c| c.eq_ignore_ascii_case(d)))
            };
            match found {
                Some(column) => {
                    names.insert(field.name, column.clone());
                }
                // A receiver's record has no event column: each row is an effect it received.
                None if field.required
                    && !(field.name == "event" && spec.role == crate::ingest::LedgerRole::Receiver) =>
                {
                    return Err(Error::input(
                        &spec.path,
                        Some(line),
                        format!(
                            "missing column for the ledger field '{}' ({}): expected one of {}; the header has: {}. Map it with --column {}=NAME or columns.{} in the manifest",
                            field.name,
                            field.meaning,
                            field.defaults.join(", "),
                            available.join(", "),
                            field.name,
                            field.name
                        ),
                    ));
                }
                None => {}
            }
        }
        Ok(Columns { names })
    }

    /// The columns one record has, without judging what is missing: JSON Lines records omit keys
    /// whose value is empty, so each record is matched on its own keys.
    pub fn present(spec: &SourceSpec, keys: &[String]) -> Columns {
        let names = FIELDS
            .iter()
            .filter_map(|field| {
                let found = match spec.columns.get(field.name) {
                    Some(mapped) => keys.iter().find(|k| k.eq_ignore_ascii_case(mapped)),
                    None => field.defaults.iter().find_map(|d| keys.iter().find(|k| k.eq_ignore_ascii_case(d))),
                };
                found.map(|key| (field.name, key.clone()))
            })
            .collect();
        Columns { names }
    }

    pub fn column(&self, field: &str) -> Option<&str> {
        self.names.get(field).map(String::as_str)
    }
}

/// What became of one record.
pub enum Outcome {
    // Not boxed: a ledger is millions of rows, and a heap allocation per row showed in profiles.
    Event(Event),
    Rejected(String),
    /// Its time is outside the source's read window (`SourceSpec::window`): counted, not kept,
    /// with the keys of its job and run (`filter::outside_key`).
    OutsideWindow(DateTime<Utc>, [Option<u64>; 2]),
}

/// A ledger field by its position in `FIELDS`.
#[derive(Debug, Clone, Copy)]
pub enum FieldId {
    Time,
    Event,
    Run,
    Job,
    Slot,
    Item,
    Worker,
    Status,
    Sweep,
    Queue,
    Detail,
    Generation,
    LeaseUntil,
    Attempt,
    Outcome,
    Key,
    PayloadHash,
}

impl FieldId {
    pub fn name(self) -> &'static str {
        FIELDS[self as usize].name
    }
}

/// Turns one record into an event. `get` returns the cell of a field (`None` when the ledger has
/// no such column); blank cells count as absent. Timestamps that cannot be read are errors, not
/// rejections: a ledger whose times are wrong cannot be placed on the timeline at all.
// Generic over `get`, not `&dyn Fn`: the getter is called for every field of millions of rows,
// and inlined it costs a table lookup and a slice.
pub fn record_to_event<'r>(
    spec: &SourceSpec,
    columns: &Columns,
    get: impl Fn(FieldId) -> Option<Cow<'r, str>>,
    recent: &mut RecentTexts,
    folds: &mut Vec<FoldLines>,
    naive: &mut u64,
    origin: Origin,
) -> Result<Outcome> {
    let field = |id: FieldId| {
        get(id).and_then(|value| match value {
            Cow::Borrowed(text) => Some(Cow::Borrowed(trim(text))).filter(|t| !t.is_empty()),
            Cow::Owned(text) => Some(Cow::<str>::Owned(trim(&text).to_string())).filter(|t| !t.is_empty()),
        })
    };
    let column = |id: FieldId| columns.column(id.name()).unwrap_or(id.name());
    let line = u64::from(origin.line);
    let Some(time_text) = field(FieldId::Time) else {
        return Ok(Outcome::Rejected(format!("empty time in column '{}'", column(FieldId::Time))));
    };
    let at = parse_time(spec, line, || column(FieldId::Time), &time_text, folds, naive)?;
    let at = time::moment(at).map_err(|problem| {
        Error::input(
            &spec.path,
            Some(line),
            format!("column '{}': {}", column(FieldId::Time), spec.zone_problem(&problem)),
        )
    })?;
    let kind = if spec.role == crate::ingest::LedgerRole::Receiver {
        // Every row of a receiver's record is an effect it received; its outcome column says how.
        EventKind::EffectReceived
    } else {
        let Some(event_text) = field(FieldId::Event) else {
            return Ok(Outcome::Rejected(format!("empty event in column '{}'", column(FieldId::Event))));
        };
        let Some(kind) = event_kind(&event_text, &spec.event_values) else {
            let known: Vec<&str> = EVENT_VALUES.iter().map(|(_, names)| names[0]).collect();
            return Ok(Outcome::Rejected(format!(
                "unknown event '{event_text}' in column '{}': expected {} (or map it under events in the manifest)",
                column(FieldId::Event),
                known.join(", ")
            )));
        };
        kind
    };
    // Before any of its texts are kept: interned texts stay for the whole run.
    if spec.window.is_some_and(|window| !window.holds(at)) {
        let (job, run) = (field(FieldId::Job), field(FieldId::Run));
        return Ok(Outcome::OutsideWindow(
            at.utc(),
            crate::model::filter::outside_keys(job.as_deref(), run.as_deref()),
        ));
    }
    let mut event = Event::new(at, kind, origin);
    // A row of a recent round takes its scope from its cells as written (a malformed slot is an
    // error here, before the lease columns are read, as it always was).
    let cell = |id: FieldId| field(id).unwrap_or_default();
    let (run, job, slot, worker, sweep, queue) = (
        cell(FieldId::Run),
        cell(FieldId::Job),
        cell(FieldId::Slot),
        cell(FieldId::Worker),
        cell(FieldId::Sweep),
        cell(FieldId::Queue),
    );
    let cells = [&*run, &*job, &*slot, &*worker, &*sweep, &*queue];
    let scope = recent.scope_of_cells(&cells, |recent| {
        let mut text = |text: &str| (!text.is_empty()).then(|| recent.text(text));
        let slot = if slot.is_empty() {
            None
        } else {
            Some(parse_time(spec, line, || column(FieldId::Slot), &slot, folds, naive)?)
        };
        Ok::<_, Error>(crate::model::Scope {
            run_id: text(&run),
            job_id: text(&job),
            worker: text(&worker),
            job_name: text(&sweep),
            queue: text(&queue),
            slot,
            instance: None,
        })
    })?;
    event.item = field(FieldId::Item).map(|value| recent.item(&value));
    let mut text = |id: FieldId| field(id).map(|value| recent.text(&value));
    let mut detail = match (field(FieldId::Status), field(FieldId::Detail)) {
        (Some(status), Some(detail)) => Some(Text::from(format!("{status}: {detail}").as_str())),
        (Some(_), None) => text(FieldId::Status),
        (None, _) => text(FieldId::Detail),
    };
    // Lease and effect columns, kept only when the row has any.
    let mut lease = LeaseFacts::default();
    if let Some(until) = field(FieldId::LeaseUntil) {
        lease.lease_until = Some(parse_time(spec, line, || column(FieldId::LeaseUntil), &until, folds, naive)?);
    }
    for (id, slot) in [(FieldId::Generation, &mut lease.generation), (FieldId::Attempt, &mut lease.attempt)] {
        if let Some(text) = field(id) {
            let Ok(number) = text.parse::<u64>() else {
                return Ok(Outcome::Rejected(format!(
                    "{} '{text}' in column '{}' is not a whole number",
                    id.name(),
                    column(id)
                )));
            };
            *slot = Some(number);
        }
    }
    if let Some(text) = field(FieldId::Outcome) {
        let value = text.to_lowercase();
        let Some(accepted) = OUTCOME_VALUES.iter().find(|(_, names)| names.contains(&value.as_str())).map(|(a, _)| *a)
        else {
            return Ok(Outcome::Rejected(format!(
                "unknown outcome '{text}' in column '{}': expected accepted or rejected (see `leasetrace docs inputs/ledger`)",
                column(FieldId::Outcome)
            )));
        };
        lease.accepted = Some(accepted);
        if matches!(value.as_str(), "deduplicated" | "duplicate") {
            let noted = detail.map_or_else(|| value.clone(), |d| format!("{d}; {value}"));
            detail = Some(Text::from(noted.as_str()));
        }
    }
    lease.key = text(FieldId::Key);
    lease.payload_hash = text(FieldId::PayloadHash);
    let lease = (lease != LeaseFacts::default()).then_some(lease);
    event.set_extra(recent.extra(Extra { detail, lease, settings: None }));
    event.set_scope(scope);
    Ok(Outcome::Event(event))
}

/// `column` names the column for an error: looked up only then (a map lookup, and every row has
/// two or three times). A local time that happens twice is placed as the source's `ambiguous`
/// says (an error by default: a ledger is not necessarily in time order) and counted in `folds`.
/// Every time without an offset is counted in `naive`: only those rest on the source's zone.
fn parse_time<'c>(
    spec: &SourceSpec,
    line: u64,
    column: impl Fn() -> &'c str,
    text: &str,
    folds: &mut Vec<FoldLines>,
    naive: &mut u64,
) -> Result<DateTime<Utc>> {
    let stamp = time::parse_field(text)
        .map_err(|reason| Error::input(&spec.path, Some(line), format!("column '{}': {reason}", column())))?;
    if matches!(stamp, time::Stamp::Local(_)) {
        *naive += 1;
    }
    let (at, folded) = stamp.place(spec.tz, spec.ambiguous).map_err(|problem| {
        Error::input(&spec.path, Some(line), format!("column '{}': {}", column(), spec.zone_problem(&problem)))
    })?;
    if folded && let (time::Stamp::Local(local), Some(zone)) = (stamp, spec.tz) {
        time::fold::count(folds, zone, local, line, spec.ambiguous);
    }
    Ok(at)
}

/// `str::trim`, without its Unicode tables for the usual cell that starts and ends with a
/// visible ASCII character.
fn trim(text: &str) -> &str {
    match text.as_bytes() {
        [first, .., last] if first.is_ascii_graphic() && last.is_ascii_graphic() => text,
        [only] if only.is_ascii_graphic() => text,
        _ => text.trim(),
    }
}

fn normalize(value: &str) -> String {
    value.trim().to_lowercase().replace(['-', ' '], "_")
}

/// The event kind an `events` mapping target names; `round_started` and `round-started` both work.
pub fn mapping_target(name: &str) -> Option<EventKind> {
    let name = normalize(name).replace('_', "-");
    EventKind::from_name(&name).filter(|kind| EVENT_VALUES.iter().any(|(k, _)| k == kind))
}

pub fn event_kind(value: &str, extra: &BTreeMap<String, String>) -> Option<EventKind> {
    // Most ledgers write the canonical names: no copy for those (this runs on every row).
    let normalized = value.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
    let value = if normalized { Cow::Borrowed(value) } else { Cow::Owned(normalize(value)) };
    if let Some(kind) = extra.iter().find(|(from, _)| normalize(from) == value).and_then(|(_, to)| mapping_target(to)) {
        return Some(kind);
    }
    EVENT_VALUES.iter().find(|(_, names)| names.contains(&value.as_ref())).map(|(kind, _)| *kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quick_trim_is_str_trim() {
        for text in
            ["", "a", " ", "ab", " a", "a ", "\ta\t", "PR-4412", "\u{a0}x\u{a0}", "é", "xé", "x\u{3000}", "\u{2003}"]
        {
            assert_eq!(trim(text), text.trim(), "{text:?}");
        }
    }

    #[test]
    fn event_values_are_normalized() {
        let none = BTreeMap::new();
        assert_eq!(event_kind("Round-Started", &none), Some(EventKind::RoundStarted));
        assert_eq!(event_kind("FAILED", &none), Some(EventKind::RoundFailed));
        assert_eq!(event_kind("review posted", &none), Some(EventKind::EffectPosted));
        assert_eq!(event_kind("ping", &none), None);
        assert_eq!(event_kind("heartbeat", &none), Some(EventKind::LeaseExtended));
        let extra = BTreeMap::from([
            ("begin".to_string(), "round-started".to_string()),
            ("end".to_string(), "round_finished".to_string()),
        ]);
        assert_eq!(event_kind("BEGIN", &extra), Some(EventKind::RoundStarted));
        assert_eq!(event_kind("end", &extra), Some(EventKind::RoundFinished));
        assert_eq!(mapping_target("job-active"), None, "ledgers cannot produce log events");
    }
}
