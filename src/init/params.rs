//! Recognising BullMQ lock parameters wherever a config dump puts them.
//!
//! Teams dump their worker options as part of a larger config, nested under a key or two, in
//! JSON or YAML. A document is a parameters file when BullMQ's lock option names
//! (`lockDuration`, `stalledInterval`, `maxStalledCount`, `lockRenewTime`) are keys in it at any
//! depth; `init` says where it found them, and leaves reading them to the parameters reader.
//! A document without them but with keys like them (`lock_duration`, `lockDurationMs`), or with
//! a string that holds them (a config kept as text), is one too, in the parameters reader's eyes:
//! its error names those keys, and `init` gives it rather than a bare "not recognised".

use std::fmt::Write as _;

use serde_json::Value;

use crate::ingest::bullmq::document::{self, Document, Syntax, pointer_token};
use crate::ingest::bullmq::params::{self, PARAM_KEYS};

use super::sample::{Json, Sample, shown};

/// BullMQ's lock option names: any one of them as a key makes a document a parameters file.
pub const LOCK_KEYS: &[&str] = &["lockDuration", "stalledInterval", "maxStalledCount", "lockRenewTime"];

/// Where the lock options are in a document.
/// An object holding lock options.
#[derive(Debug, PartialEq)]
pub struct Place {
    /// `app.queues.review.worker`, or `(top level)`.
    pub name: String,
    /// The same as a JSON pointer, as `params_at` takes it: `/app/queues/review/worker`.
    pub pointer: String,
    /// The options found there, as `key = value`.
    pub keys: Vec<String>,
}

#[derive(Debug, PartialEq)]
pub struct Found {
    pub format: &'static str,
    /// Each place holding lock options.
    pub places: Vec<Place>,
    /// The line of the first lock option (YAML), for the evidence.
    pub line: Option<u64>,
    /// Without any lock option: the keys like them (`'lock_duration' at line 2`) and the strings
    /// that name one, that made it a parameters file (the reader refuses it and says why).
    pub near: Vec<String>,
    /// What the parameters reader takes from the file (`lockDuration = 1178000`, ...) and
    /// says about where, or its error: the file is read as `analyze` will read it.
    pub read: Result<(Vec<String>, Vec<String>), String>,
}

impl Found {
    pub fn evidence(&self) -> String {
        if self.places.is_empty() {
            return format!(
                "{} document without BullMQ lock options but with {}",
                self.format.to_uppercase(),
                shown(&self.near.join(", "), 200)
            );
        }
        let places: Vec<String> = self.places.iter().map(|p| format!("{} ({})", p.name, p.keys.join(", "))).collect();
        let many = if self.places.len() > 1 { "; more than one place: the reader must be told which" } else { "" };
        format!("{} document with BullMQ lock options at {}{many}", self.format.to_uppercase(), places.join("; "))
    }
}

const MAX_DEPTH: usize = 32;

pub fn recognise(sample: &Sample, json: Option<&Json>) -> Option<Found> {
    let found = if let Some(Json::Whole(value, _)) = json {
        let mut places = Vec::new();
        walk(value, &mut Vec::new(), 0, &mut places);
        (!places.is_empty()).then_some(Found {
            format: "json",
            places,
            near: Vec::new(),
            line: None,
            read: Ok(Default::default()),
        })
    } else if json.is_some() {
        // JSON records, one per line: a table or a log, not a document of options.
        return None;
    } else {
        yaml(sample)
    };
    found.or_else(|| near_misses(sample, if json.is_some() { Syntax::Json } else { Syntax::Yaml }))
}

/// A document with no lock option but keys like them or text naming one, found as the
/// parameters reader finds them when it reports none: a key that, lower-cased without `_` and
/// `-`, starts or ends with an option's name; a string that holds an option's name.
fn near_misses(sample: &Sample, syntax: Syntax) -> Option<Found> {
    let doc = Document::parse(&sample.text, syntax).ok()?;
    // A text that is one scalar (prose, a table) is no document of settings.
    if !matches!(doc.node(doc.root()).value, document::Value::Mapping(_) | document::Value::Sequence(_)) {
        return None;
    }
    let wanted: Vec<String> = PARAM_KEYS.iter().map(|k| params::normalized(k)).collect();
    let mut near = Vec::new();
    let mut named = Vec::new();
    // The nodes are in document order, each once.
    for id in (0..doc.len()).filter_map(|i| u32::try_from(i).ok()) {
        let node = doc.node(id);
        match &node.value {
            document::Value::Mapping(entries) => {
                for entry in entries {
                    let Some(key) = &entry.key else { continue };
                    let plain = params::normalized(key);
                    if wanted.iter().any(|w| plain.starts_with(w.as_str()) || plain.ends_with(w.as_str())) {
                        near.push(format!("the key '{}' at line {}", shown(key, 40), entry.line));
                    }
                }
            }
            document::Value::Scalar { text, .. } if PARAM_KEYS.iter().any(|k| text.contains(k)) => {
                named.push(format!("a string naming a lock option at line {}", node.line));
            }
            _ => {}
        }
    }
    near.truncate(5);
    named.truncate(3);
    near.extend(named);
    (!near.is_empty()).then(|| Found {
        format: syntax.name(),
        places: Vec::new(),
        near,
        line: None,
        read: Ok(Default::default()),
    })
}

fn walk(value: &Value, path: &mut Vec<String>, depth: usize, places: &mut Vec<Place>) {
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
                places.push(place(path, keys));
            }
            for (key, child) in object {
                path.push(key.clone());
                walk(child, path, depth + 1, places);
                path.pop();
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                path.push(index.to_string());
                walk(child, path, depth + 1, places);
                path.pop();
            }
        }
        _ => {}
    }
}

fn place(path: &[String], keys: Vec<String>) -> Place {
    let name = if path.is_empty() {
        "(top level)".to_string()
    } else {
        path.iter().map(|step| shown(step, 40)).collect::<Vec<_>>().join(".")
    };
    let mut pointer = String::new();
    for step in path {
        let _ = write!(pointer, "/{}", pointer_token(step));
    }
    Place { name, pointer, keys }
}

/// The parameters reader on the file, as `analyze` will run it.
pub fn read(path: &std::path::Path) -> Result<(Vec<String>, Vec<String>), String> {
    // The reader names the file as it was opened; the manifest names it by its name in the folder.
    let shown_path = path.display().to_string();
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    let file = crate::ingest::bullmq::params::read_selected(path, crate::ingest::bullmq::params::Selection::default())
        .map_err(|e| e.to_string().replace(&shown_path, &name))?;
    let o = &file.overrides;
    let values: Vec<String> = [
        ("lockDuration", o.lock_duration),
        ("lockRenewTime", o.lock_renew_time),
        ("stalledInterval", o.stalled_interval),
        ("maxStalledCount", o.max_stalled_count),
    ]
    .iter()
    .filter_map(|(name, value)| value.map(|v| format!("{name} = {v}")))
    .chain(o.version.iter().map(|v| format!("version {v}")))
    .collect();
    let notes = file.notes.iter().map(|note| note.replace(&shown_path, &name)).collect();
    Ok((values, notes))
}

/// YAML, read only as far as recognising it: `lockDuration: 12000` lines, their parents found
/// by indentation.
fn yaml(sample: &Sample) -> Option<Found> {
    let mut parents: Vec<(usize, String)> = Vec::new();
    let mut places: Vec<Place> = Vec::new();
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
            let path: Vec<String> = parents.iter().map(|(_, k)| k.clone()).collect();
            let option = format!("{key} = {}", shown(value, 24));
            let found = place(&path, Vec::new());
            match places.iter_mut().find(|p| p.pointer == found.pointer) {
                Some(p) => p.keys.push(option),
                None => places.push(Place { keys: vec![option], ..found }),
            }
        } else if value.is_empty() || value.starts_with('#') {
            parents.push((indent, key.to_string()));
        }
    }
    (!places.is_empty()).then_some(Found {
        format: "yaml",
        places,
        near: Vec::new(),
        line: first,
        read: Ok(Default::default()),
    })
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
            [Place {
                name: "bullmq.queues.0.worker".into(),
                pointer: "/bullmq/queues/0/worker".into(),
                keys: vec!["lockDuration = 12000".into(), "stalledInterval = 5000".into()]
            }]
        );
        assert!(found.evidence().contains("at bullmq.queues.0.worker (lockDuration = 12000"));
    }

    #[test]
    fn a_flat_object_is_the_top_level() {
        let found = found(r#"{"lockDuration": 1178000, "concurrency": 2}"#).unwrap();
        assert_eq!((found.places[0].name.as_str(), found.places[0].pointer.as_str()), ("(top level)", ""));
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
            [Place {
                name: "queues.review.worker".into(),
                pointer: "/queues/review/worker".into(),
                keys: vec!["lockDuration = 12000".into(), "maxStalledCount = 1".into()]
            }]
        );
    }

    #[test]
    fn a_document_with_keys_like_lock_options_is_one_whose_reader_says_why() {
        let yaml = found("worker:\n  lock_duration: 12000\n  stalled-interval-ms: 5000\n  concurrency: 2\n").unwrap();
        assert_eq!((yaml.format, yaml.places.len()), ("yaml", 0));
        assert_eq!(yaml.near, ["the key 'lock_duration' at line 2", "the key 'stalled-interval-ms' at line 3"]);
        assert_eq!(
            yaml.evidence(),
            "YAML document without BullMQ lock options but with the key 'lock_duration' at line 2, the key 'stalled-interval-ms' at line 3"
        );
        let json = found(r#"{"worker": {"LockDuration": 12000}, "env": {"BULL": "{\"lockDuration\": 1}"}}"#).unwrap();
        assert_eq!(json.format, "json");
        assert_eq!(json.near, ["the key 'LockDuration' at line 1", "a string naming a lock option at line 1"]);
        // Not a document of settings: no key like an option, or one scalar of text.
        assert!(found("worker:\n  lock: 12000\n  durations: 3\n").is_none());
        assert!(found("we set lockDuration to 30 s\nand lock_duration too\n").is_none());
    }

    #[test]
    fn documents_without_lock_options_and_logs_are_not_parameters() {
        assert!(found(r#"{"concurrency": 2, "connection": {"host": "redis"}}"#).is_none());
        assert!(found("2026-10-07 09:00:00 INFO worker lockDuration=12000ms stalledInterval=5000ms\n").is_none());
        assert!(found("{\"level\":30,\"lockDuration\":5}\n{\"level\":30}\n").is_none(), "JSON lines are records");
    }
}
