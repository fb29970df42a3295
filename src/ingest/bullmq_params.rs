//! BullMQ lock parameters as JSON, in BullMQ's own option names and units:
//! `{"lockDuration": 1178000, "stalledInterval": 30000, "maxStalledCount": 1, "version": "5.58.0"}`.
//!
//! The file is a copy of the worker options, so other options (`concurrency`, `connection`, ...)
//! may be present; they are counted as ignored keys, never an error.

use std::io::Read;
use std::path::Path;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::model::InputSummary;
use crate::model::params::ParamOverrides;

pub const KEYS: &[&str] = &["lockDuration", "lockRenewTime", "stalledInterval", "maxStalledCount", "version"];

pub fn read(path: &Path) -> Result<(ParamOverrides, InputSummary)> {
    let mut text = String::new();
    super::open(path)?.read_to_string(&mut text).map_err(|_| {
        Error::input(path, None, "binary data (not UTF-8 text): expected a JSON object of BullMQ worker options")
    })?;
    let mut summary = InputSummary::new(&path.display().to_string(), "bullmq-params", "json", None);
    summary.lines = text.lines().count() as u64;
    if text.trim().is_empty() {
        return Err(Error::input(
            path,
            None,
            "file is empty: expected a JSON object such as {\"lockDuration\": 30000}",
        ));
    }
    let object: Map<String, Value> = serde_json::from_str(&text).map_err(|error| {
        Error::input(path, Some(error.line() as u64), format!("not a JSON object of BullMQ worker options: {error}"))
    })?;
    let mut overrides = ParamOverrides::default();
    for (key, value) in &object {
        let line = line_of_key(&text, key);
        let millis = |what: &str| -> Result<u64> {
            value.as_u64().ok_or_else(|| {
                Error::input(path, line, format!("'{key}' must be a whole number of {what}, found {value}"))
            })
        };
        match key.as_str() {
            "lockDuration" => {
                overrides.lock_duration = Some(positive(path, line, key, millis("milliseconds")?)?);
            }
            "lockRenewTime" => {
                overrides.lock_renew_time = Some(positive(path, line, key, millis("milliseconds")?)?);
            }
            "stalledInterval" => {
                overrides.stalled_interval = Some(positive(path, line, key, millis("milliseconds")?)?);
            }
            "maxStalledCount" => overrides.max_stalled_count = Some(millis("stalls")?),
            "version" => {
                let version = value.as_str().ok_or_else(|| {
                    Error::input(path, line, format!("'version' must be a string such as \"5.58.0\", found {value}"))
                })?;
                let plain = version.trim_start_matches('v');
                let parts: Vec<&str> = plain.split('.').collect();
                if parts.len() < 2 || parts.iter().any(|p| p.parse::<u32>().is_err()) {
                    return Err(Error::input(
                        path,
                        line,
                        format!(
                            "'version' must be the BullMQ version in use, such as \"5.58.0\" (not a range), found \"{version}\""
                        ),
                    ));
                }
                overrides.version = Some(plain.to_string());
            }
            other => {
                summary.ignore(&format!("unused key '{other}'"));
                continue;
            }
        }
        summary.used();
        summary.events += 1;
    }
    Ok((overrides, summary))
}

fn positive(path: &Path, line: Option<u64>, key: &str, value: u64) -> Result<u64> {
    if value == 0 {
        return Err(Error::input(path, line, format!("'{key}' must be greater than 0")));
    }
    Ok(value)
}

fn line_of_key(text: &str, key: &str) -> Option<u64> {
    let quoted = format!("\"{key}\"");
    text.lines().position(|l| l.contains(&quoted)).map(|i| i as u64 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> tempfile_path::TempPath {
        tempfile_path::TempPath::new(text)
    }

    mod tempfile_path {
        pub struct TempPath(pub std::path::PathBuf);
        impl TempPath {
            pub fn new(text: &str) -> Self {
                use std::sync::atomic::{AtomicU32, Ordering};
                static N: AtomicU32 = AtomicU32::new(0);
                let path = std::env::temp_dir().join(format!(
                    "leasetrace-params-{}-{}.json",
                    std::process::id(),
                    N.fetch_add(1, Ordering::Relaxed)
                ));
                std::fs::write(&path, text).unwrap();
                TempPath(path)
            }
        }
        impl Drop for TempPath {
            fn drop(&mut self) {
                let _ = std::fs::remove_file(&self.0);
            }
        }
    }

    #[test]
    fn reads_bullmq_names_and_counts_other_options() {
        let file = write("{\n  \"lockDuration\": 1178000,\n  \"stalledInterval\": 30000,\n  \"concurrency\": 4\n}\n");
        let (overrides, summary) = read(&file.0).unwrap();
        assert_eq!(overrides.lock_duration, Some(1_178_000));
        assert_eq!(overrides.stalled_interval, Some(30_000));
        assert_eq!(overrides.lock_renew_time, None);
        assert_eq!((summary.events, summary.ignored), (2, 1));
    }

    #[test]
    fn wrong_types_name_the_line() {
        let file = write("{\n  \"lockDuration\": \"30s\"\n}\n");
        let error = read(&file.0).unwrap_err().to_string();
        assert!(error.ends_with(":2: 'lockDuration' must be a whole number of milliseconds, found \"30s\""), "{error}");
    }
}
