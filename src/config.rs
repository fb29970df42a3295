//! Raw arguments and the case manifest → one validated configuration.
//!
//! Everything the user can say (manifest keys, flags, defaults) is resolved here, once, before any
//! file is parsed; zones are parsed, paths made relative to the manifest, and every default that
//! the analysis will rely on is written down as an assumption for the report.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono_tz::Tz;
use serde::Deserialize;

use crate::cli::CaseArgs;
use crate::confine::{CaseFolder, Place};
use crate::detect::Settings;
use crate::error::{Error, Result};
use crate::ingest::{RuleSpec, SourceKind, SourceSpec};
use crate::model::filter::FilterSpec;
use crate::model::params::ParamOverrides;
use crate::model::warnings::Warning;
use crate::progress::Progress;
use crate::time::{Ambiguous, parse_zone};

pub mod wrong_path;

/// The manifest file looked for in a case folder.
pub const MANIFEST: &str = "leasetrace.toml";
/// A manifest lists sources and settings: a few KiB. Larger is not a manifest.
pub const MANIFEST_MAX_BYTES: u64 = 1 << 20;

#[derive(Debug)]
pub struct Config {
    pub sources: Vec<SourceSpec>,
    pub params_path: Option<PathBuf>,
    /// The manifest's `capture` record, relative paths resolved against the manifest's folder.
    pub capture_record: Option<PathBuf>,
    /// Where in the parameters file the parameters are (`params_at`, `--params-at`): a JSON pointer.
    pub params_at: Option<String>,
    pub param_flags: ParamOverrides,
    pub display_tz: Tz,
    pub settings: Settings,
    pub assumptions: Vec<String>,
    /// What the report must say at its top that is known before any file is read: sources read
    /// outside the case folder (`--allow-outside-case`).
    pub warnings: Vec<Warning>,
    /// The formats the report is rendered in (`--format`): whether it must read lines back.
    pub formats: Vec<&'static str>,
    /// What the report shows (`--since`, `--until`, `--job`, `--run`, `--item`): applied to the
    /// finished report, never to what the detectors read (`model::filter`).
    pub filter: FilterSpec,
    /// Not from the arguments of a case: the binary sets it from `--quiet` and whether stderr is a
    /// terminal. Hidden when built here.
    pub progress: Progress,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Manifest {
    display_tz: Option<String>,
    /// A capture record (`capture.json`, written by `leasetrace capture`) the report takes notes from.
    capture: Option<String>,
    #[serde(default)]
    sources: Vec<ManifestSource>,
    #[serde(default)]
    analysis: ManifestAnalysis,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestSource {
    kind: String,
    path: String,
    format: Option<String>,
    tz: Option<String>,
    /// How a local time that a fall-back makes happen twice is placed: order, earlier, later, error.
    ambiguous: Option<String>,
    #[serde(default)]
    columns: BTreeMap<String, String>,
    #[serde(default)]
    events: BTreeMap<String, String>,
    #[serde(default)]
    rules: Vec<ManifestRule>,
    builtin_rules: Option<bool>,
    /// bullmq-events: the queue whose stream this is.
    queue: Option<String>,
    /// bullmq-params: a JSON pointer to the object holding the parameters.
    params_at: Option<String>,
    /// ledger: whose record it is: `sender` (the application's, the default) or `receiver` (the
    /// receiving side's record of the effects it got).
    role: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestRule {
    event: String,
    pattern: String,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ManifestAnalysis {
    duplicate_window_s: Option<f64>,
    /// The longest line or CSV record read, in bytes, as `--max-line-bytes` gives it (the flag wins).
    max_line_bytes: Option<u64>,
    /// The most bytes of records held for an export read whole, as `--max-held-bytes` gives it
    /// (the flag wins).
    max_held_bytes: Option<u64>,
    /// The BullMQ version the case ran with, as `--bullmq-version` gives it (the flag wins).
    bullmq_version: Option<String>,
    /// Legacy Bull's version, when the case ran Bull, as `--bull-version` gives it (the flag wins).
    bull_version: Option<String>,
}

/// `major.minor[.patch]` with an optional `v`: a version, not a range.
/// The lock parameters given by flag are durations BullMQ divides and waits: none may be 0, as
/// a parameters file may not give one (`lock` checks them too, with or without a case).
pub fn check_lock_flags(args: &CaseArgs) -> Result<()> {
    for (name, value) in [
        ("--lock-duration", args.lock_duration),
        ("--lock-renew-time", args.lock_renew_time),
        ("--stalled-interval", args.stalled_interval),
    ] {
        if value == Some(0) {
            return Err(Error::usage(format!("{name} must be greater than 0 ms")));
        }
    }
    Ok(())
}

fn exact_version(text: &str) -> bool {
    let parts: Vec<&str> = text.trim().trim_start_matches('v').split('.').collect();
    (2..=3).contains(&parts.len()) && parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

fn zone(name: &str, place: &str) -> Result<Tz> {
    parse_zone(name).map_err(|reason| Error::usage(format!("{place}: {reason}")))
}

/// The `ambiguous` choice for a source of `kind`, said at `place`. A ledger has no `order`: its
/// rows are not necessarily in time order (an export sorted by id, rows written at the end of a
/// run), so the order of its rows says nothing about which of two times a row means.
fn ambiguous(name: &str, kind: SourceKind, place: &str) -> Result<Ambiguous> {
    let choice = Ambiguous::from_name(name).ok_or_else(|| {
        Error::usage(format!(
            "{place}: ambiguous = '{name}': expected one of {}",
            if kind == SourceKind::Log { "order, earlier, later, error" } else { "earlier, later, error" }
        ))
    })?;
    if choice == Ambiguous::Order && kind != SourceKind::Log {
        return Err(Error::usage(format!(
            "{place}: ambiguous = 'order' is for logs, which are written in time order; a {} is not necessarily, so choose earlier, later or error",
            kind.name()
        )));
    }
    Ok(choice)
}

impl Config {
    pub fn build(args: &CaseArgs) -> Result<Config> {
        let no_flag_sources = args.ledger.is_empty()
            && args.log.is_empty()
            && args.events.is_empty()
            && args.jobs.is_empty()
            && args.trace.is_empty()
            && args.monitor.is_empty();
        // Run inside a case folder with no CASE and no sources by flag, the case is the folder's
        // manifest (`cd case && leasetrace analyze`), as `leasetrace analyze .` would read it;
        // its paths stay relative (`server.log`, not `./server.log`). Sources given by flag mean
        // the user said what to read: the folder's manifest is not mixed in.
        // A folder or a missing path given to a file flag is said before anything is read.
        let flag_paths: Vec<(&str, &PathBuf)> = [
            ("--ledger", &args.ledger),
            ("--log", &args.log),
            ("--events", &args.events),
            ("--jobs", &args.jobs),
            ("--trace", &args.trace),
        ]
        .into_iter()
        .flat_map(|(flag, paths)| paths.iter().map(move |path| (flag, path)))
        .chain(args.params.iter().map(|path| ("--params", path)))
        .collect();
        wrong_path::check_flag_paths(&flag_paths).map_err(Error::usage)?;
        let from_cwd = args.case.is_none() && no_flag_sources && Path::new(MANIFEST).is_file();
        let case = args.case.clone().or_else(|| from_cwd.then(|| PathBuf::from(MANIFEST)));
        let (manifest, base, manifest_path) = match &case {
            Some(case) => {
                if std::fs::symlink_metadata(case).is_err() {
                    return Err(Error::usage(wrong_path::missing(
                        case,
                        &format!("a case folder holding {MANIFEST}, or the manifest itself"),
                    )));
                }
                let path = if case.is_dir() { case.join(MANIFEST) } else { case.clone() };
                // The manifest a folder holds is read like its sources (`confine`): a FIFO there
                // would hang the run. One named on the command line is the user's choice.
                if let (true, Some(what)) = (case.is_dir(), crate::confine::not_a_file(&path)) {
                    return Err(Error::usage(format!(
                        "{}: {what}, not a regular file: a case folder's manifest is a file",
                        path.display()
                    )));
                }
                if !path.exists() {
                    return Err(Error::usage(format!(
                        "{}: no {MANIFEST} here; `leasetrace init {}` drafts one from the files (the manifest: `leasetrace docs inputs`), or give the sources with --ledger, --log and --params",
                        case.display(),
                        case.display()
                    )));
                }
                // A file given as the case that does not read as a manifest is most often a source
                // (`analyze server.log`): said so, with the command that reads it.
                let not_a_manifest = |error: Error| {
                    if !case.is_file() {
                        return error;
                    }
                    match (wrong_path::file_as_case(case), wrong_path::not_a_manifest_hint(case), error) {
                        (Some(message), _, _) => Error::usage(message),
                        (None, Some(hint), Error::Input { path, line, message }) => {
                            Error::Input { path, line, message: format!("{message}; {hint}") }
                        }
                        (None, _, error) => error,
                    }
                };
                let text = crate::ingest::io::lines::read_small_text(
                    &path,
                    MANIFEST_MAX_BYTES,
                    "a leasetrace manifest, a TOML file of a few KiB (`leasetrace docs inputs`)",
                )
                .map_err(not_a_manifest)?;
                let manifest: Manifest = toml::from_str(&text)
                    .map_err(|e| {
                        let line = e.span().map(|span| text[..span.start].matches('\n').count() as u64 + 1);
                        Error::input(&path, line, format!("invalid manifest: {}", e.message()))
                    })
                    .map_err(not_a_manifest)?;
                let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
                (manifest, base, Some(path))
            }
            None => (Manifest::default(), PathBuf::new(), None),
        };
        if manifest_path.is_none() && no_flag_sources {
            return Err(Error::usage(format!(
                "nothing to read: no {MANIFEST} in the current folder; give a case folder (with {MANIFEST}), run in one, or give sources with --ledger, --log and --params (`leasetrace init FOLDER` drafts a {MANIFEST})"
            )));
        }
        let manifest_name = manifest_path.as_ref().map_or(MANIFEST.to_string(), |p| p.display().to_string());
        let ledger_tz = args.ledger_tz.as_deref().map(|z| zone(z, "--ledger-tz")).transpose()?;
        let log_tz = args.log_tz.as_deref().map(|z| zone(z, "--log-tz")).transpose()?;
        let ledger_ambiguous = args
            .ledger_ambiguous
            .as_deref()
            .map(|a| ambiguous(a, SourceKind::Ledger, "--ledger-ambiguous"))
            .transpose()?;
        let log_ambiguous =
            args.log_ambiguous.as_deref().map(|a| ambiguous(a, SourceKind::Log, "--log-ambiguous")).transpose()?;
        let mut assumptions = Vec::new();
        if from_cwd {
            assumptions.push(format!("no CASE given: read the case of the current folder ({MANIFEST})"));
        }
        let mut sources = Vec::new();
        let mut params_path = args.params.clone();
        let mut params_at = args.params_at.clone();
        let mut manifest_params = false;
        if manifest_path.is_some() && manifest.sources.is_empty() && no_flag_sources {
            return Err(Error::usage(format!(
                "{manifest_name}: the manifest lists no sources; add [[sources]] entries (`leasetrace init FOLDER` drafts them; `leasetrace docs inputs` describes them)"
            )));
        }

        let mut warnings = Vec::new();
        // Resolved once the manifest is read: it was read from there, so the folder resolves.
        let folder = match &manifest_path {
            Some(path) => Some(CaseFolder::new(&base).ok_or_else(|| {
                Error::usage(format!("{}: cannot resolve the folder of the manifest", path.display()))
            })?),
            None => None,
        };
        for (index, source) in manifest.sources.iter().enumerate() {
            let place = format!("{manifest_name}: source {} ({})", index + 1, source.path);
            let kind = SourceKind::from_name(&source.kind).ok_or_else(|| {
                Error::usage(format!(
                    "{place}: unknown kind '{}': expected ledger, log, bullmq-events, bullmq-jobs, bullmq-params or trace",
                    source.kind
                ))
            })?;
            // `-` is standard input wherever the manifest lives: what the user pipes in is theirs.
            let path = if source.path == "-" { PathBuf::from("-") } else { base.join(&source.path) };
            // A parameters file that --params replaces is not read: nothing to check.
            let replaced = kind == SourceKind::BullmqParams && args.params.is_some();
            if let (Some(folder), false) = (&folder, source.path == "-" || replaced) {
                warnings.extend(confine(folder, &place, &path, kind, args.allow_outside_case)?);
            }
            if kind == SourceKind::BullmqParams {
                if manifest_params {
                    return Err(Error::usage(format!(
                        "{place}: a second bullmq-params source; a case has one set of lock parameters"
                    )));
                }
                manifest_params = true;
                if args.params.is_none() {
                    params_path = Some(path);
                    params_at = args.params_at.clone().or_else(|| source.params_at.clone());
                } else {
                    assumptions.push(format!("{}: replaced by --params", path.display()));
                }
                continue;
            }
            if source.params_at.is_some() {
                return Err(Error::usage(format!(
                    "{place}: params_at is for a bullmq-params source (it says where in that file the lock parameters are)"
                )));
            }
            for key in source.events.values() {
                if crate::ingest::ledger::mapping_target(key).is_none() {
                    return Err(Error::usage(format!(
                        "{place}: events maps to '{key}': expected one of round-started, item-selected, effect-posted, round-finished, round-failed, lease-claimed, lease-extended, lease-completed, job-dead"
                    )));
                }
            }
            let declared = source.tz.as_deref().map(|z| zone(z, &place)).transpose()?;
            let (flag_tz, flag) = match kind {
                SourceKind::Ledger => (ledger_tz, "--ledger-tz"),
                _ => (log_tz, "--log-tz"),
            };
            let tz_fix = format!("tz = \"...\" for this source in {manifest_name} (or {flag})");
            let mut spec = SourceSpec::new(kind, path, flag_tz.or(declared), tz_fix);
            let (flag_ambiguous, flag) = match kind {
                SourceKind::Ledger => (ledger_ambiguous, "--ledger-ambiguous"),
                _ => (log_ambiguous, "--log-ambiguous"),
            };
            let declared = source.ambiguous.as_deref().map(|a| ambiguous(a, kind, &place)).transpose()?;
            if let Some(choice) = flag_ambiguous.or(declared) {
                spec.ambiguous = choice;
            }
            spec.ambiguous_fix = format!(
                "ambiguous = \"earlier\" or ambiguous = \"later\" for this source in {manifest_name} (or {flag} earlier|later)"
            );
            spec.format.clone_from(&source.format);
            spec.columns.clone_from(&source.columns);
            spec.event_values.clone_from(&source.events);
            // A huge pattern is refused here, naming the manifest, before anything compiles it.
            for (number, rule) in source.rules.iter().enumerate() {
                crate::ingest::log::rules::check_pattern_length(&rule.pattern).map_err(|why| {
                    Error::usage(format!(
                        "{place}: log rule {} ('{}'): {why}",
                        number + 1,
                        crate::ingest::log::rules::quote_pattern(&rule.pattern)
                    ))
                })?;
            }
            spec.rules =
                source.rules.iter().map(|r| RuleSpec { event: r.event.clone(), pattern: r.pattern.clone() }).collect();
            spec.builtin_rules = source.builtin_rules.unwrap_or(true);
            spec.queue = source.queue.clone().or_else(|| args.queue.clone());
            if let Some(role) = &source.role {
                spec.role = match (kind, role.as_str()) {
                    (SourceKind::Ledger, "sender") => crate::ingest::LedgerRole::Sender,
                    (SourceKind::Ledger, "receiver") => crate::ingest::LedgerRole::Receiver,
                    (SourceKind::Ledger, other) => {
                        return Err(Error::usage(format!(
                            "{place}: role = '{}': expected sender (the application's ledger, the default) or receiver (the receiving side's record of the effects it got)",
                            crate::terminal::visible(other)
                        )));
                    }
                    _ => {
                        return Err(Error::usage(format!(
                            "{place}: role is for a ledger (whose record it is: sender or receiver)"
                        )));
                    }
                };
            }
            sources.push(spec);
        }
        for path in &args.ledger {
            let mut spec = SourceSpec::new(SourceKind::Ledger, path.clone(), ledger_tz, "--ledger-tz".into());
            spec.ambiguous = ledger_ambiguous.unwrap_or(spec.ambiguous);
            sources.push(spec);
        }
        for path in &args.log {
            let mut spec = SourceSpec::new(SourceKind::Log, path.clone(), log_tz, "--log-tz".into());
            spec.ambiguous = log_ambiguous.unwrap_or(spec.ambiguous);
            sources.push(spec);
        }
        // Stream ids and job-hash fields are epoch milliseconds: these sources need no zone.
        for (kind, paths) in [(SourceKind::BullmqEvents, &args.events), (SourceKind::BullmqJobs, &args.jobs)] {
            for path in paths {
                let mut spec = SourceSpec::new(kind, path.clone(), None, String::new());
                spec.queue.clone_from(&args.queue);
                sources.push(spec);
            }
        }

        // Span times are UTC nanoseconds: no zone either.
        for path in &args.trace {
            sources.push(SourceSpec::new(SourceKind::Trace, path.clone(), None, String::new()));
        }
        // MONITOR prints epoch seconds: no zone either.
        for path in &args.monitor {
            sources.push(SourceSpec::new(SourceKind::RedisMonitor, path.clone(), None, String::new()));
        }

        let stdin_users =
            sources.iter().map(|s| &s.path).chain(params_path.as_ref()).filter(|p| p.as_os_str() == "-").count();
        if stdin_users > 1 {
            return Err(Error::usage("standard input ('-') can feed only one source"));
        }
        let columns = parse_columns(&args.columns)?;
        for spec in &mut sources {
            if spec.kind == SourceKind::Ledger {
                spec.columns.extend(columns.clone());
                if spec.tz.is_none() {
                    // Said in the report only if some time had no offset (`lib::ledger_zone_note`).
                    spec.tz = Some(chrono_tz::UTC);
                    spec.tz_defaulted = true;
                }
            }
        }
        if params_path.is_none() && params_at.is_some() {
            return Err(Error::usage(
                "--params-at says where the lock parameters are in a parameters file: give the file with --params (or a bullmq-params source)",
            ));
        }
        if params_path.is_none() {
            assumptions
                .push("no lock parameters file: lock parameters are BullMQ's defaults (the same in v2–v6) unless given by flags or logged by the workers (worker-settings lines)".into());
        }

        let display_tz = match (&args.tz, &manifest.display_tz) {
            (Some(name), _) => zone(name, "--tz")?,
            (None, Some(name)) => zone(name, &format!("{manifest_name}: display_tz"))?,
            (None, None) => chrono_tz::UTC,
        };
        let filter = filter_spec(args, display_tz, args.tz.is_some() || manifest.display_tz.is_some())?;
        let duplicate_window_s = args.duplicate_window.or(manifest.analysis.duplicate_window_s);
        if let Some(window) = duplicate_window_s
            && !(window.is_finite() && window >= 0.0)
        {
            return Err(Error::usage(format!(
                "duplicate window (--duplicate-window or [analysis] duplicate_window_s) must be a number of seconds ≥ 0, found {window}"
            )));
        }
        // A hand-written manifest declares the version as the flag does: an exact one, since a
        // range is not the version in use.
        let manifest_version = match &manifest.analysis.bullmq_version {
            Some(text) if !exact_version(text) => {
                return Err(Error::usage(format!(
                    "{manifest_name}: [analysis] bullmq_version must be the BullMQ version in use, such as \"5.81.5\" (not a range), found {text:?}"
                )));
            }
            other => other.as_ref().map(|v| v.trim().trim_start_matches('v').to_string()),
        };
        let bull_version = match (&args.bull_version, &manifest.analysis.bull_version) {
            (Some(text), _) | (None, Some(text)) if !exact_version(text) => {
                return Err(Error::usage(format!(
                    "--bull-version / [analysis] bull_version must be the Bull version in use, such as \"4.16.5\" (not a range), found {text:?}"
                )));
            }
            (Some(text), _) | (None, Some(text)) => Some(text.trim().trim_start_matches('v').to_string()),
            (None, None) => None,
        };
        if bull_version.is_some()
            && manifest.analysis.bullmq_version.is_some()
            && args.bullmq_version.is_none()
            && args.bull_version.is_none()
        {
            return Err(Error::usage(format!(
                "{manifest_name}: [analysis] gives both bull_version and bullmq_version: a case ran one library; keep the one its workers ran"
            )));
        }
        let param_flags = ParamOverrides {
            lock_duration: args.lock_duration,
            lock_renew_time: args.lock_renew_time,
            stalled_interval: args.stalled_interval,
            max_stalled_count: args.max_stalled_count,
            version: if bull_version.is_some() { None } else { args.bullmq_version.clone().or(manifest_version) },
            version_at_least: None,
            bull_version,
        };
        check_lock_flags(args)?;
        let max_line_bytes = match (args.max_line_bytes, manifest.analysis.max_line_bytes) {
            (Some(bytes), _) => bytes,
            (None, Some(bytes)) if (1..=crate::ingest::io::lines::MAX_LINE_BYTES_CEILING).contains(&bytes) => bytes,
            (None, Some(bytes)) => {
                return Err(Error::usage(format!(
                    "{manifest_name}: [analysis] max_line_bytes must be a number of bytes from 1 to {}, found {bytes}",
                    crate::ingest::io::lines::MAX_LINE_BYTES_CEILING
                )));
            }
            (None, None) => crate::ingest::io::lines::MAX_LINE_BYTES as u64,
        };
        let ceiling = crate::ingest::io::lines::MAX_HELD_BYTES_CEILING;
        let max_held_bytes = match (args.max_held_bytes, manifest.analysis.max_held_bytes) {
            (Some(bytes), _) => bytes,
            (None, Some(bytes)) if (1..=ceiling).contains(&bytes) => bytes,
            (None, Some(bytes)) => {
                return Err(Error::usage(format!(
                    "{manifest_name}: [analysis] max_held_bytes must be a number of bytes from 1 to {ceiling}, found {bytes}"
                )));
            }
            (None, None) => crate::ingest::io::lines::MAX_HELD_BYTES as u64,
        };
        for spec in &mut sources {
            // At most the ceiling (1 GiB), checked above.
            spec.max_line_bytes = usize::try_from(max_line_bytes).unwrap_or(usize::MAX);
            spec.max_held_bytes = usize::try_from(max_held_bytes).unwrap_or(usize::MAX);
        }
        let source_zones = sources.iter().map(|s| s.tz).collect();
        let capture_record = manifest.capture.as_ref().map(|path| base.join(path));
        // The capture record is named by the manifest like its sources, and held to the same rule.
        if let (Some(folder), Some(path)) = (&folder, &capture_record) {
            let place = format!("{manifest_name}: capture ({})", path.display());
            match folder.place(path) {
                Place::Outside(resolved) if !args.allow_outside_case => {
                    return Err(Error::usage(format!(
                        "{place}: resolves to {}, outside the case folder {}: copy the capture record into the folder, or pass --allow-outside-case to read it",
                        resolved.display(),
                        folder.root().display()
                    )));
                }
                Place::Outside(resolved) => warnings.push(Warning {
                    kind: "source-outside-case",
                    message: format!(
                        "{place} was read from {}, outside the case folder {} (--allow-outside-case)",
                        resolved.display(),
                        folder.root().display()
                    ),
                }),
                Place::Inside => {}
            }
            if let Some(what) = crate::confine::not_a_file(path) {
                return Err(Error::usage(format!(
                    "{place}: {what}, not a regular file: the capture record is a JSON file"
                )));
            }
        }
        Ok(Config {
            sources,
            params_path,
            capture_record,
            params_at,
            param_flags,
            display_tz,
            settings: Settings { duplicate_window_s, source_zones },
            assumptions,
            warnings,
            formats: args.outputs()?.iter().map(|output| output.name).collect(),
            filter,
            progress: Progress::hidden(),
        })
    }
}

/// A path the manifest names, checked (`confine`): it must resolve to a regular file inside the
/// case folder. One outside it is an error unless `allow_outside` (`--allow-outside-case`), and
/// then a warning for the report's top, since a reviewer of the report must know that it quotes a
/// file the folder does not hold. `place` names the source in messages.
fn confine(
    folder: &CaseFolder,
    place: &str,
    path: &Path,
    kind: SourceKind,
    allow_outside: bool,
) -> Result<Option<Warning>> {
    let mut warning = None;
    if let Place::Outside(resolved) = folder.place(path) {
        if !allow_outside {
            return Err(Error::usage(format!(
                "{place}: resolves to {}, outside the case folder {}; a case folder from someone else could make the report read and quote any file: copy the file into the folder, or pass --allow-outside-case to read it",
                resolved.display(),
                folder.root().display()
            )));
        }
        warning = Some(Warning {
            kind: "source-outside-case",
            message: format!(
                "{place} was read from {}, outside the case folder {} (--allow-outside-case): what this report quotes from it is not in the folder",
                resolved.display(),
                folder.root().display()
            ),
        });
    }
    if let Some(what) = crate::confine::not_a_file(path) {
        let fix = if what == "a folder" {
            "name a file in it".to_string()
        } else {
            format!(
                "a manifest names files, which are read again to quote the lines a report cites, and {what} can hang the run or read without end; to read it once, as standard input is read, give it on the command line ({} {})",
                kind.flag(),
                path.display()
            )
        };
        return Err(Error::usage(format!("{place}: {what}, not a regular file: {fix}")));
    }
    Ok(warning)
}

/// The filter flags, read: bounds parsed (placed once the timeline is known, see
/// `FilterSpec::place`), ids kept as given. `zone_declared`: whether the display zone was given
/// (`--tz`, `display_tz`), since only then is a local time read in it.
fn filter_spec(args: &CaseArgs, display_tz: Tz, zone_declared: bool) -> Result<FilterSpec> {
    let bound = |flag: &str, text: &Option<String>| {
        text.as_ref()
            .map(|text| {
                crate::time::parse_bound(text)
                    .map(|bound| (text.clone(), bound))
                    .map_err(|reason| Error::usage(format!("{flag} {reason}")))
            })
            .transpose()
    };
    for (flag, values) in [("--job", &args.job_ids), ("--run", &args.run_ids), ("--item", &args.items)] {
        if values.iter().any(|v| v.trim().is_empty()) {
            return Err(Error::usage(format!("{flag} needs a value (an id as the source wrote it)")));
        }
    }
    let read_margin = match args.read_margin.as_deref().map(str::trim) {
        None => Some(chrono::TimeDelta::seconds(crate::model::filter::DEFAULT_READ_MARGIN_S)),
        Some("all") => None,
        Some(text) => {
            let seconds = text.parse::<u32>().map_err(|_| {
                Error::usage(format!(
                    "--read-margin '{text}': expected a whole number of seconds (3600 is an hour) or all"
                ))
            })?;
            Some(chrono::TimeDelta::seconds(i64::from(seconds)))
        }
    };
    Ok(FilterSpec {
        read_margin,
        allow_empty: args.allow_empty_filter,
        since: bound("--since", &args.since)?,
        until: bound("--until", &args.until)?,
        jobs: args.job_ids.clone(),
        runs: args.run_ids.clone(),
        items: args.items.clone(),
        zone: zone_declared.then_some(display_tz),
        display_tz,
    })
}

fn parse_columns(pairs: &[String]) -> Result<BTreeMap<String, String>> {
    pairs
        .iter()
        .map(|pair| {
            pair.split_once('=')
                .map(|(field, column)| (field.trim().to_string(), column.trim().to_string()))
                .filter(|(field, column)| !field.is_empty() && !column.is_empty())
                .ok_or_else(|| {
                    Error::usage(format!("--column expects FIELD=COLUMN (e.g. time=created_at), found '{pair}'"))
                })
        })
        .collect()
}
