//! Recognising BullMQ lock parameters wherever a config dump puts them.
//!
//! Teams dump their worker options as part of a larger config, nested under a key or two, in
//! JSON or YAML. A document is a parameters file when BullMQ's lock option names
//! (`lockDuration`, `stalledInterval`, `maxStalledCount`, `lockRenewTime`) are keys in it at any
//! depth; `init` says where it found them, and leaves reading them to the parameters reader.

use std::fmt::Write as _;

use serde_json::Value;

use super::sample::{Json, Sample, shown};

/// BullMQ's lock option names: any one of them as a key makes a document a parameters file.
pub const LOCK_KEYS: &[&str] = &["lockDuration", "stalledInterval", "maxStalledCount", "lockRenewTime"];

/// Where the lock options are in a document.
#[derive(Debug, PartialEq)]
pub struct Found {
    pub format: &'static str,
    /// Each place holding lock options (`app.queues.review.worker`, or `(top level)`), with the
    /// options found there as `key = value`.
    pub places: Vec<(String, Vec<String>)>,
    /// The line of the first lock option (YAML), for the evidence.
    pub line: Option<u64>,
}

impl Found {
    pub fn evidence(&self) -> String {
        let places: Vec<String> =
            self.places.iter().map(|(place, keys)| format!("{place} ({})", keys.join(", "))).collect();
        let many = if self.places.len() > 1 { "; more than one place: the reader must be told which" } else { "" };
        format!("{} document with BullMQ lock options at {}{many}", self.format.to_uppercase(), places.join("; "))
    }
}

const MAX_DEPTH: usize = 32;

pub fn recognise(sample: &Sample, json: Option<&Json>) -> Option<Found> {
    if let Some(Json::Whole(value, _)) = json {
        let mut places = Vec::new();
        walk(value, &mut String::new(), 0, &mut places);
        return (!places.is_empty()).then_some(Found { format: "json", places, line: None });
    }
    if json.is_some() {
        return None;
    }
    yaml(sample)
}

fn walk(value: &Value, path: &mut String, depth: usize, places: &mut Vec<(String, Vec<String>)>) {
    if depth > MAX_DEPTH {
        return;
    }
    match value {
        Value::Object(object) => {
            let keys: Vec<String> = object
                .iter()
                .filter(|(key, _)| LOCK_KEYS.contains(&key.as_str()))
                .map(|(key, value)| format!("{key} = {}", shown(&value.to_string(), 24)))
                .collect();
            if !keys.is_empty() {
                let place = if path.is_empty() { "(top level)".to_string() } else { path.clone() };
                places.push((place, keys));
            }
            for (key, child) in object {
                let before = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&shown(key, 40));
                walk(child, path, depth + 1, places);
                path.truncate(before);
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                let before = path.len();
                let _ = write!(path, "[{index}]");
                walk(child, path, depth + 1, places);
                path.truncate(before);
            }
        }
        _ => {}
    }
}

/// YAML, read only as far as recognising it: `lockDuration: 12000` lines, their parents found
/// by indentation.
fn yaml(sample: &Sample) -> Option<Found> {
    let mut parents: Vec<(usize, String)> = Vec::new();
    let mut places: Vec<(String, Vec<String>)> = Vec::new();
    let mut first = None;
    for (line, text) in sample.lines() {
        let body = text.trim_start();
        if body.starts_with('#') || body.starts_with("---") {
            continue;
        }
        let indent = text.len() - body.len();
        let item = body.strip_prefix("- ").map_or(body, str::trim_start);
        let Some((key, value)) = item.split_once(':') else { continue };
        let key = key.trim().trim_matches(['"', '\'']);
        if key.is_empty() || key.contains(char::is_whitespace) {
            continue;
        }
        while parents.last().is_some_and(|(at, _)| *at >= indent) {
            parents.pop();
        }
        let value = value.trim();
        if LOCK_KEYS.contains(&key) && !value.is_empty() {
            first.get_or_insert(line);
            let place = if parents.is_empty() {
                "(top level)".to_string()
            } else {
                parents.iter().map(|(_, k)| k.as_str()).collect::<Vec<_>>().join(".")
            };
            let option = format!("{key} = {}", shown(value, 24));
            match places.iter_mut().find(|(p, _)| *p == place) {
                Some((_, keys)) => keys.push(option),
                None => places.push((place, vec![option])),
            }
        } else if value.is_empty() || value.starts_with('#') {
            parents.push((indent, shown(key, 40)));
        }
    }
    (!places.is_empty()).then_some(Found { format: "yaml", places, line: first })
}

#[cfg(test)]
mod tests {
    use super::super::sample;
    use super::*;

    fn found(text: &str) -> Option<Found> {
        let sample = Sample::from_text(text);
        recognise(&sample, sample::json(&sample).as_ref())
    }

    #[test]
    fn lock_options_nested_in_json_are_found_with_their_place() {
        let found = found(
            r#"{"service":"api","bullmq":{"version":"5.81.5","queues":[{"name":"review","worker":{"lockDuration":12000,"stalledInterval":5000,"concurrency":2}}]}}"#,
        )
        .unwrap();
        assert_eq!(found.format, "json");
        assert_eq!(
            found.places,
            [(
                "bullmq.queues[0].worker".to_string(),
                vec!["lockDuration = 12000".into(), "stalledInterval = 5000".into()]
            )]
        );
        assert!(found.evidence().contains("at bullmq.queues[0].worker (lockDuration = 12000"));
    }

    #[test]
    fn a_flat_object_is_the_top_level() {
        let found = found(r#"{"lockDuration": 1178000, "concurrency": 2}"#).unwrap();
        assert_eq!(found.places[0].0, "(top level)");
    }

    #[test]
    fn yaml_dumps_are_found_by_indentation() {
        let found = found(
            "# worker config\nqueues:\n  review:\n    worker:\n      lockDuration: 12000\n      maxStalledCount: 1\n  other:\n    concurrency: 3\n",
        )
        .unwrap();
        assert_eq!(found.format, "yaml");
        assert_eq!(found.line, Some(5));
        assert_eq!(
            found.places,
            [("queues.review.worker".to_string(), vec!["lockDuration = 12000".into(), "maxStalledCount = 1".into()])]
        );
    }

    #[test]
    fn documents_without_lock_options_and_logs_are_not_parameters() {
        assert!(found(r#"{"concurrency": 2, "connection": {"host": "redis"}}"#).is_none());
        assert!(found("2026-10-07 09:00:00 INFO worker lockDuration=12000ms stalledInterval=5000ms\n").is_none());
        assert!(found("{\"level\":30,\"lockDuration\":5}\n{\"level\":30}\n").is_none(), "JSON lines are records");
    }
}
