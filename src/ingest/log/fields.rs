//! What a log line says about its job, whatever wrote it: the fields a rule's captures, the
//! line's `key=value` pairs or a structured line's keys fill (`Classified`), and the names they
//! are known by (`FIELD_KEYS`, `CAPTURES`). Below the rules and the worker settings, which both
//! fill them.

use crate::model::{EventKind, Text};

/// `key=value` keys (lower-cased) that fill event fields.
pub const FIELD_KEYS: &[(&str, &[&str])] = &[
    ("job_id", &["id", "jobid", "job_id", "job.id"]),
    ("job_name", &["name", "jobname", "job_name", "job.name"]),
    ("queue", &["queue", "queuename", "queue_name"]),
    ("run_id", &["run", "run_id", "runid"]),
    ("item", &["item", "pr"]),
    ("worker", &["worker", "pid", "host", "hostname", "instance"]),
    ("detail", &["reason", "failedreason", "err", "error"]),
];

/// Capture names a user rule may use.
pub const CAPTURES: &[&str] = &["job_id", "job_name", "queue", "run_id", "item", "worker", "detail"];

/// What a rule found on a line.
#[derive(Debug, Default, PartialEq, Clone)]
pub struct Classified {
    pub kind: Option<EventKind>,
    pub job_id: Option<String>,
    pub job_name: Option<String>,
    pub queue: Option<String>,
    pub run_id: Option<String>,
    pub item: Option<String>,
    pub worker: Option<String>,
    pub detail: Option<String>,
}

impl Classified {
    /// Moves the ids and detail found on a line into its event.
    pub fn fill(self, event: &mut crate::model::Event) {
        let scope = crate::model::Scope {
            job_id: self.job_id.as_deref().map(Text::from),
            job_name: self.job_name.as_deref().map(Text::from),
            queue: self.queue.as_deref().map(Text::from),
            run_id: self.run_id.as_deref().map(Text::from),
            slot: event.slot,
            worker: self.worker.as_deref().map(Text::from),
            instance: event.instance,
        };
        event.set_scope(scope.interned());
        event.item = self.item.as_deref().map(crate::model::Item::from);
        event.set_detail(self.detail.as_deref().map(Text::from));
    }

    pub(super) fn set(&mut self, field: &str, value: String) {
        let slot = match field {
            "job_id" => &mut self.job_id,
            "job_name" => &mut self.job_name,
            "queue" => &mut self.queue,
            "run_id" => &mut self.run_id,
            "item" => &mut self.item,
            "worker" => &mut self.worker,
            "detail" => &mut self.detail,
            _ => return,
        };
        if slot.is_none() && !value.is_empty() {
            *slot = Some(value);
        }
    }
}
