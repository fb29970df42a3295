//! `leasetrace init CASE`: look at the files of a folder and write a manifest for the user to
//! review.
//!
//! It decides what the content shows (kind and format from the registry's sniffers, whether
//! timestamps carry an offset) and nothing else: a zone that the files do not state is left
//! undecided, commented out in the manifest and listed, so that `analyze` stops with a clear error
//! until someone who knows the system declares it.

use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::config::MANIFEST;
use crate::error::{Error, Result};
use crate::ingest::{self, SourceKind, SourceSpec, ledger};
use crate::time::{self, Leading, Stamp};

/// What `init` concluded about one file.
#[derive(Debug, PartialEq)]
pub struct Guess {
    pub path: String,
    pub kind: SourceKind,
    pub format: &'static str,
    pub tz: Zone,
    pub queue: Option<String>,
}

#[derive(Debug, PartialEq)]
pub enum Zone {
    /// Timestamps carry offsets or are epoch counts: no zone needed.
    NotNeeded,
    /// Wall-clock timestamps: the zone is not in the file.
    Undecided(String),
}

/// The outcome for a whole folder.
#[derive(Debug)]
pub struct Inspection {
    pub guesses: Vec<Guess>,
    /// Files that are not any known source, with the reason.
    pub skipped: Vec<(String, String)>,
}

const HEAD_BYTES: usize = 64 * 1024;

pub fn inspect(folder: &Path) -> Result<Inspection> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(folder)
        .map_err(|source| Error::Io { path: folder.to_path_buf(), source })?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    entries.sort();
    let mut guesses = Vec::new();
    let mut skipped = Vec::new();
    for path in entries {
        let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        let is_doc = Path::new(&name).extension().is_some_and(|e| e.eq_ignore_ascii_case("md"));
        if name == MANIFEST || name.starts_with('.') || is_doc {
            continue;
        }
        match guess(&path, &name) {
            Ok(guess) => guesses.push(guess),
            Err(reason) => skipped.push((name, reason)),
        }
    }
    Ok(Inspection { guesses, skipped })
}

fn head(path: &Path) -> std::result::Result<String, String> {
    let mut bytes = Vec::new();
    ingest::open(path)
        .map_err(|e| e.to_string())?
        .take(HEAD_BYTES as u64)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.contains(&0) {
        return Err("binary data".into());
    }
    // The cut at HEAD_BYTES may split a character.
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn guess(path: &Path, name: &str) -> std::result::Result<Guess, String> {
    let text = head(path)?;
    let first = text.lines().map(str::trim).find(|l| !l.is_empty()).ok_or("empty file")?;
    let make = |kind, format, tz| Guess { path: name.to_string(), kind, format, tz, queue: None };
    let whole: Option<Value> = (text.len() < HEAD_BYTES).then(|| serde_json::from_str(&text).ok()).flatten();

    if let Some(Value::Object(object)) = &whole
        && ingest::bullmq_params::KEYS.iter().any(|k| object.contains_key(*k))
    {
        return Ok(make(SourceKind::BullmqParams, "json", Zone::NotNeeded));
    }
    let record: Option<Value> = match &whole {
        Some(Value::Array(items)) => items.first().cloned(),
        _ => serde_json::from_str(first).ok(),
    };
    if let Some(Value::Object(object)) = &record {
        if object.contains_key("fields") && object.get("id").and_then(Value::as_str).is_some() {
            return Ok(make(SourceKind::BullmqEvents, "xrange-json", Zone::NotNeeded));
        }
        if let (true, Some(key)) = (object.contains_key("fields"), object.get("key").and_then(Value::as_str)) {
            let mut guess = make(SourceKind::BullmqJobs, "hgetall-json", Zone::NotNeeded);
            guess.queue = key.split(':').nth(1).map(str::to_string);
            return Ok(guess);
        }
    }
    if let Some(format) = ingest::FORMATS
        .iter()
        .find(|f| f.kind() == SourceKind::BullmqEvents && f.name() == "xrange-text" && f.sniff(first))
    {
        return Ok(make(SourceKind::BullmqEvents, format.name(), Zone::NotNeeded));
    }
    // Structured logs before plain text and ledgers: their lines are JSON or have a fixed prefix.
    for format in ingest::FORMATS.iter().filter(|f| f.kind() == SourceKind::Log && f.name() != "text") {
        if format.sniff(first) {
            let zone = match format.name() {
                "nestjs" => Zone::Undecided("NestJS writes local time without an offset".into()),
                _ => json_time_zone(record.as_ref()),
            };
            return Ok(make(SourceKind::Log, format.name(), zone));
        }
    }
    if let Leading::Found(stamp, _) = time::leading_stamp(first) {
        let zone = match stamp {
            Stamp::Absolute(_) => Zone::NotNeeded,
            Stamp::Local(_) => Zone::Undecided("log timestamps have no UTC offset".into()),
        };
        return Ok(make(SourceKind::Log, "text", zone));
    }
    if let Some(Value::Object(object)) = &record {
        let keys: Vec<String> = object.keys().cloned().collect();
        if let Some(columns) = ledger_columns(path, &keys) {
            let time = columns.column("time").and_then(|c| object.get(c)).map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
            return Ok(make(SourceKind::Ledger, "jsonl", ledger_zone(time.as_deref())));
        }
    }
    let delimiter = if first.contains('\t') && !first.contains(',') { '\t' } else { ',' };
    let header: Vec<String> = first.split(delimiter).map(|h| h.trim().trim_matches('"').to_string()).collect();
    if header.len() > 1
        && let Some(columns) = ledger_columns(path, &header)
    {
        let row = text.lines().map(str::trim).filter(|l| !l.is_empty()).nth(1);
        let time = row.and_then(|row| {
            let index = header.iter().position(|h| Some(h.as_str()) == columns.column("time"))?;
            row.split(delimiter).nth(index).map(|c| c.trim().trim_matches('"').to_string())
        });
        return Ok(make(SourceKind::Ledger, "csv", ledger_zone(time.as_deref())));
    }
    Err("not a ledger, log, BullMQ export or lock parameters file that leasetrace can tell from its first lines".into())
}

fn ledger_columns(path: &Path, keys: &[String]) -> Option<ledger::Columns> {
    let spec = SourceSpec::new(SourceKind::Ledger, path.to_path_buf(), None, String::new());
    ledger::Columns::resolve(&spec, keys, 1).ok()
}

fn ledger_zone(time: Option<&str>) -> Zone {
    match time.map(time::parse_field) {
        Some(Ok(Stamp::Absolute(_))) => Zone::NotNeeded,
        Some(Ok(Stamp::Local(_))) => Zone::Undecided(
            "ledger timestamps have no UTC offset (leasetrace reads them as UTC unless tz says otherwise)".into(),
        ),
        _ => Zone::Undecided("the first row's time could not be read".into()),
    }
}

/// pino writes epoch milliseconds; winston writes whatever its timestamp format produced.
fn json_time_zone(record: Option<&Value>) -> Zone {
    let Some(Value::Object(object)) = record else { return Zone::NotNeeded };
    match object.get("timestamp").or_else(|| object.get("time")) {
        Some(Value::String(text)) => match time::parse_field(text) {
            Ok(Stamp::Local(_)) => Zone::Undecided("log timestamps have no UTC offset".into()),
            _ => Zone::NotNeeded,
        },
        _ => Zone::NotNeeded,
    }
}

/// The manifest text for an inspection: decided keys set, undecided ones commented with why.
pub fn manifest(inspection: &Inspection) -> String {
    let mut out = String::from("# Written by `leasetrace init`: review every line before relying on it.\n");
    let undecided: Vec<String> = inspection
        .guesses
        .iter()
        .filter_map(|g| match &g.tz {
            Zone::Undecided(why) => {
                Some(format!("#   - {}: {why}; set tz to the zone the system wrote them in", g.path))
            }
            Zone::NotNeeded => None,
        })
        .collect();
    if !undecided.is_empty() || !inspection.skipped.is_empty() {
        out.push_str("#\n# Could not decide:\n");
        for line in &undecided {
            let _ = writeln!(out, "{line}");
        }
        for (path, reason) in &inspection.skipped {
            let _ = writeln!(out, "#   - {path}: left out ({reason})");
        }
    }
    out.push_str("\ndisplay_tz = \"UTC\"   # the zone to show times in\n");
    for guess in &inspection.guesses {
        let _ = write!(
            out,
            "\n[[sources]]\nkind = \"{}\"\npath = \"{}\"\nformat = \"{}\"\n",
            guess.kind.name(),
            guess.path,
            guess.format
        );
        match &guess.tz {
            Zone::Undecided(why) => {
                let _ = writeln!(out, "# tz = \"Asia/Seoul\"   # UNDECIDED: {why}");
            }
            Zone::NotNeeded if matches!(guess.kind, SourceKind::Ledger | SourceKind::Log) => {
                out.push_str("# timestamps carry their offset: no tz needed\n");
            }
            Zone::NotNeeded => {}
        }
        if guess.kind == SourceKind::BullmqEvents {
            out.push_str("# queue = \"...\"   # the queue of bull:<queue>:events (not in the export)\n");
        }
    }
    out
}

/// Writes the manifest into `folder` (refusing to replace one unless `force`) and returns a
/// report for the terminal.
pub fn run(folder: &Path, force: bool) -> Result<String> {
    if !folder.is_dir() {
        return Err(Error::usage(format!("{}: not a folder", folder.display())));
    }
    let target = folder.join(MANIFEST);
    if target.exists() && !force {
        return Err(Error::usage(format!("{}: already exists; pass --force to replace it", target.display())));
    }
    let inspection = inspect(folder)?;
    if inspection.guesses.is_empty() {
        return Err(Error::usage(format!("{}: no file here looks like a source leasetrace reads", folder.display())));
    }
    let text = manifest(&inspection);
    std::fs::write(&target, &text).map_err(|source| Error::Io { path: target.clone(), source })?;
    let mut report = format!("wrote {}\n", target.display());
    for guess in &inspection.guesses {
        let zone = match &guess.tz {
            Zone::NotNeeded => "zone not needed".to_string(),
            Zone::Undecided(why) => format!("ZONE UNDECIDED: {why}"),
        };
        let _ = writeln!(report, "  {:<28} {:<14} {:<13} {zone}", guess.path, guess.kind.name(), guess.format);
    }
    for (path, reason) in &inspection.skipped {
        let _ = writeln!(report, "  {path:<28} left out: {reason}");
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_incident_folder_is_recognised_and_the_log_zone_left_to_the_user() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/incident-2026-10-07");
        let inspection = inspect(&root).unwrap();
        let found: Vec<(&str, &str, &str)> =
            inspection.guesses.iter().map(|g| (g.path.as_str(), g.kind.name(), g.format)).collect();
        assert_eq!(
            found,
            [("bullmq.json", "bullmq-params", "json"), ("ledger.csv", "ledger", "csv"), ("server.log", "log", "text")]
        );
        assert_eq!(inspection.guesses[1].tz, Zone::NotNeeded);
        assert!(matches!(inspection.guesses[2].tz, Zone::Undecided(_)));
        let text = manifest(&inspection);
        assert!(text.contains("# tz = \"Asia/Seoul\"   # UNDECIDED: log timestamps have no UTC offset"), "{text}");
        assert!(text.contains("server.log: log timestamps have no UTC offset; set tz"), "{text}");
    }
}
