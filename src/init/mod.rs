//! `leasetrace init CASE`: look at the files of a folder and write a manifest for the user to
//! review.
//!
//! `init` decides only what the content shows, and says with each decision what showed it (the
//! file, how much of it was read, the sample that decided). Each file's kind is recognised by its
//! content (`sniff`), whatever its name: lock parameters at any depth of a JSON or YAML document,
//! job hashes and events-stream exports in the shapes clients write them, logs, and ledgers whose
//! columns are found by what they hold (`ledger`). Then the files are read together: a naive log
//! that names the same jobs or runs as a source with offsets gets its offset measured and the
//! zones that had it then listed (`zone`), and the lines it writes at the stream's moments get
//! rules (`rules`). A zone is never decided: several zones share every offset, so the candidates
//! are written commented out, and until one is uncommented `analyze` stops with an error that
//! names the source. Every file is read through `sample`: a bounded prefix, every byte hostile.

mod choices;
mod event_values;
mod events;
mod ids;
mod jobs;
mod ledger;
mod lifecycle;
mod logs;
mod manifest;
mod monitor;
mod params;
mod redis_text;
mod rules;
mod sample;
mod sniff;
mod table;
mod trace;
mod zone;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::config::MANIFEST;
use crate::error::{Error, Result};
use crate::ingest::SourceKind;
use crate::time::Stamp;

pub use choices::Choices;
pub use sample::{SAMPLE_BYTES, SAMPLE_ROWS};
pub use zone::Reference;

/// What a moment of a job records, as far as the zone and rule proposers care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum What {
    Active,
    Stalled,
    Failed,
    Completed,
    Other,
}

/// What `init` recognised in one file.
#[derive(Debug)]
pub enum Found {
    Params(params::Found),
    Jobs(jobs::Found),
    Events(events::Found),
    Log(logs::Found),
    Ledger(Box<sniff::LedgerFound>),
    Trace(trace::Found),
    /// `redis-cli MONITOR` output, read as the trace is: its job moments by the reader's events.
    Monitor(trace::Found),
}

/// One file of the folder, recognised.
#[derive(Debug)]
pub struct File {
    pub name: String,
    /// How much was read: "all 684 lines", "its first 30,512 lines (4 MiB sample)".
    pub extent: String,
    /// Some bytes were not UTF-8.
    pub lossy: bool,
    /// The file goes on past the sample.
    pub truncated: bool,
    /// Logs and events streams: leasetrace's reader on the sample, as `analyze` will run it
    /// (its account of the lines, or its error).
    pub check: Option<std::result::Result<crate::model::InputSummary, String>>,
    pub found: Found,
}

impl File {
    pub fn kind(&self) -> SourceKind {
        match &self.found {
            Found::Params(_) => SourceKind::BullmqParams,
            Found::Jobs(_) => SourceKind::BullmqJobs,
            Found::Events(_) => SourceKind::BullmqEvents,
            Found::Log(_) => SourceKind::Log,
            Found::Ledger(_) => SourceKind::Ledger,
            Found::Trace(_) => SourceKind::Trace,
            Found::Monitor(_) => SourceKind::RedisMonitor,
        }
    }

    /// The format to declare (`None`: the reader chooses, from content and name).
    pub fn format(&self) -> Option<String> {
        match &self.found {
            Found::Params(_) | Found::Trace(_) | Found::Monitor(_) => None,
            Found::Jobs(found) => found.format.map(str::to_string),
            Found::Events(found) => Some(found.format.to_string()),
            Found::Log(found) => Some(found.declared()),
            Found::Ledger(found) => Some(found.proposal.format.to_string()),
        }
    }
}

/// The zone of a source whose times need one.
#[derive(Debug)]
pub enum Zone {
    /// Times carry offsets or are epoch counts.
    NotNeeded(String),
    /// Naive times, and the offset measured against sources with offsets.
    Measured { measured: Box<zone::Measured>, against: Vec<String>, date: String, what: String },
    /// Naive times and nothing to measure them against.
    Unmeasured(String),
}

/// Everything `init` concluded about one file, ready to write.
#[derive(Debug)]
pub struct Proposal {
    pub file: File,
    /// `None` for kinds without a zone (parameters, stream, job hashes).
    pub zone: Option<Zone>,
    /// bullmq-events: the queue, with the evidence; or why it is not known.
    pub queue: Option<std::result::Result<(String, String), String>>,
    pub rules: Vec<rules::Proposal>,
    /// Why no rule was looked for, when other sources give moments.
    pub rules_note: Option<String>,
}

/// The outcome for a whole folder.
#[derive(Debug)]
pub struct Inspection {
    pub folder: String,
    pub proposals: Vec<Proposal>,
    /// Files that are not any known source, with the reason.
    pub skipped: Vec<(String, String)>,
    /// Files left out because a case holds one of them (a second parameters file).
    pub notes: Vec<String>,
    /// The zones given by `init --tz FILE=ZONE`, by file name.
    pub given: BTreeMap<String, chrono_tz::Tz>,
    /// The display zone to write, and why.
    pub display: choices::Display,
}

/// A moment as two exports of the same records both give it: id, epoch ms, what.
type MomentKey = (String, i64, u8);

pub fn inspect(folder: &Path) -> Result<Inspection> {
    inspect_with(folder, &BTreeMap::new())
}

/// `inspect`, with the zones the user gave for files (`init --tz`, by file name): a log's lines
/// are placed in its given zone to look for its rules.
pub fn inspect_with(folder: &Path, given: &BTreeMap<String, chrono_tz::Tz>) -> Result<Inspection> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(folder)
        .map_err(|source| Error::Io { path: folder.to_path_buf(), source })?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        // Sub-folders are not sources (a link to a folder neither).
        .filter(|p| !p.is_dir())
        .collect();
    entries.sort();
    // What `analyze` will read of the manifest (`confine`): only regular files inside the
    // folder, so a link out of it or a FIFO is neither read here nor proposed.
    let case = crate::confine::CaseFolder::new(folder);
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    for path in entries {
        let Some(name) = path.file_name().and_then(|n| n.to_str()).map(str::to_string) else {
            let shown = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
            skipped.push((shown, "the file name is not UTF-8: rename it to write it in a manifest".into()));
            continue;
        };
        let is_doc = Path::new(&name).extension().is_some_and(|e| e.eq_ignore_ascii_case("md"));
        if name == MANIFEST || name.starts_with('.') || is_doc {
            continue;
        }
        if let Some(crate::confine::Place::Outside(resolved)) = case.as_ref().map(|case| case.place(&path)) {
            let reason = format!(
                "a link to {}, outside the case folder: a manifest's sources must be in it (copy the file in to read it)",
                resolved.display()
            );
            skipped.push((name, reason));
            continue;
        }
        if let Some(what) = crate::confine::not_a_file(&path) {
            skipped.push((name, format!("{what}, not a regular file: a manifest's sources are files")));
            continue;
        }
        if !path.is_file() {
            // A dangling link: nothing to read.
            skipped.push((name, "a link that leads nowhere".into()));
            continue;
        }
        match sniff::recognise(&path, &name) {
            Ok(file) => files.push(file),
            Err(reason) => skipped.push((name, reason)),
        }
    }
    // A ledger's job column may hold BullMQ's plain ids (`42`): known once the stream and the job
    // hashes of the folder are read.
    // Its event column is never the queue names of the job hashes.
    let known = ledger::Known {
        jobs: files
            .iter()
            .filter(|f| matches!(f.found, Found::Events(_) | Found::Jobs(_) | Found::Trace(_) | Found::Monitor(_)))
            .flat_map(|f| file_moments(f).iter().map(|m| m.id.clone()))
            .collect(),
        queues: files
            .iter()
            .filter_map(|f| match &f.found {
                Found::Jobs(found) => Some(found.queues.iter().cloned()),
                _ => None,
            })
            .flatten()
            .collect(),
    };
    if !known.jobs.is_empty() || !known.queues.is_empty() {
        files = files
            .into_iter()
            .map(|file| match file.found {
                Found::Ledger(found) => File { found: Found::Ledger(Box::new(found.with_known(&known))), ..file },
                _ => file,
            })
            .collect();
    }
    let mut notes = Vec::new();
    // One parameters file per case: the first the parameters reader reads, the others named.
    let readable = |file: &File| matches!(&file.found, Found::Params(found) if found.read.is_ok());
    let chosen = files
        .iter()
        .find(|f| readable(f))
        .or_else(|| files.iter().find(|f| f.kind() == SourceKind::BullmqParams))
        .map(|f| f.name.clone());
    let kept_values: Option<Vec<String>> =
        files.iter().find(|f| Some(&f.name) == chosen.as_ref()).and_then(|f| match &f.found {
            Found::Params(found) => found.read.as_ref().ok().map(|(values, _)| values.clone()),
            _ => None,
        });
    let mut kept: Vec<(SourceKind, String, HashSet<MomentKey>)> = Vec::new();
    let mut kept_meta: Vec<(String, Vec<String>)> = Vec::new();
    files.retain(|file| {
        if let Found::Params(found) = &file.found {
            if chosen.as_ref() == Some(&file.name) {
                return true;
            }
            let first = chosen.clone().unwrap_or_default();
            let verdict = match (&found.read, &kept_values) {
                (Ok((values, _)), Some(kept)) if values == kept => format!("the same values, {}", values.join(", ")),
                (Ok((values, _)), _) => format!("other values, {}: check which file the workers used", values.join(", ")),
                (Err(error), _) => format!("the parameters reader refuses it: {}", sample::shown(error, 160)),
            };
            notes.push(format!(
                "{}: a second lock parameters file ({verdict}), left out: a case has one set of lock parameters and {first} is read",
                file.name
            ));
            return false;
        }
        // Two exports of the same records (a stream as JSON and as redis-cli text) would count
        // every event twice.
        let moments: HashSet<MomentKey> = file_moments(file)
            .iter()
            .map(|m| (m.id.clone(), m.at.timestamp_millis(), m.what as u8))
            .collect();
        if moments.is_empty() {
            // A meta table places no moment: two exports of it are told by what they say.
            let Found::Jobs(found) = &file.found else { return true };
            if found.meta_rows.is_empty() {
                return true;
            }
            if let Some((first, _)) = kept_meta.iter().find(|(_, rows)| *rows == found.meta_rows) {
                notes.push(format!(
                    "{}: the same meta rows as {first} ({}), left out (reading both would say each twice)",
                    file.name,
                    found.meta_rows.len()
                ));
                return false;
            }
            kept_meta.push((file.name.clone(), found.meta_rows.clone()));
            return true;
        }
        if let Some((_, first, _)) = kept.iter().find(|(kind, _, seen)| *kind == file.kind() && moments.is_subset(seen)) {
            notes.push(format!(
                "{}: the same job moments as {first} ({} distinct), left out (reading both would count every event twice)",
                file.name,
                moments.len()
            ));
            return false;
        }
        kept.push((file.kind(), file.name.clone(), moments));
        true
    });
    let proposals = together(files, given);
    let folder = folder.file_name().map_or_else(|| folder.display().to_string(), |n| n.to_string_lossy().to_string());
    Ok(Inspection { folder, proposals, skipped, notes, given: BTreeMap::new(), display: choices::Display::default() })
}

/// The moments a file gives (with offsets), whatever its kind.
fn file_moments(file: &File) -> &[Reference] {
    match &file.found {
        Found::Events(found) => &found.moments,
        Found::Jobs(found) => &found.moments,
        Found::Ledger(found) => &found.moments,
        Found::Trace(found) | Found::Monitor(found) => &found.moments,
        _ => &[],
    }
}

/// The moments of every file with offsets, by channel.
fn references(files: &[File]) -> Vec<(rules::Channel, Reference)> {
    let mut out = Vec::new();
    for (index, file) in files.iter().enumerate() {
        let (channel, moments) = match &file.found {
            Found::Events(found) => (rules::Channel::Stream, &found.moments),
            Found::Jobs(found) => (rules::Channel::JobHash, &found.moments),
            Found::Ledger(found) if found.proposal.time_absolute => (rules::Channel::Ledger, &found.moments),
            _ => continue,
        };
        out.extend(moments.iter().map(|m| (channel, Reference { file: index, ..m.clone() })));
    }
    out
}

/// The naive records of a file, with the ids they name.
fn mentions(file: &File, known: &HashSet<&str>) -> Vec<zone::Mention> {
    match &file.found {
        Found::Log(found) => found
            .lines
            .iter()
            .filter_map(|line| {
                let Stamp::Local(naive) = line.stamp else { return None };
                let mut ids = ids::line_ids(line, known);
                let own = envelope_id(line.line);
                if known.contains(own.as_str()) {
                    ids.push(own);
                }
                (!ids.is_empty()).then_some(zone::Mention { line: line.line, naive, ids })
            })
            .collect(),
        Found::Ledger(found) if !found.proposal.time_absolute => found
            .naive_rows
            .iter()
            .filter_map(|(line, naive, ids)| {
                let ids: Vec<String> = ids.iter().filter(|id| known.contains(id.as_str())).cloned().collect();
                (!ids.is_empty()).then_some(zone::Mention { line: *line, naive: *naive, ids })
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The id that pairs a record's line with its own envelope time (`zone::Mention`): no real id
/// has a NUL in it.
fn envelope_id(line: u64) -> String {
    format!("\0envelope:{line}")
}

fn together(files: Vec<File>, given: &BTreeMap<String, chrono_tz::Tz>) -> Vec<Proposal> {
    let all = references(&files);
    let mut names: Vec<String> = files.iter().map(|f| f.name.clone()).collect();
    names.extend(files.iter().map(|f| format!("{} (its envelope's UTC times)", f.name)));
    let queues: BTreeSet<String> = files
        .iter()
        .filter_map(|f| match &f.found {
            Found::Jobs(found) => Some(found.queues.iter().cloned()),
            _ => None,
        })
        .flatten()
        .collect();
    let mut decided = Vec::new();
    for (index, file) in files.iter().enumerate() {
        // A file is measured against the others, never itself.
        let others: Vec<(rules::Channel, Reference)> = all.iter().filter(|(_, r)| r.file != index).cloned().collect();
        let mut plain: Vec<Reference> = others.iter().map(|(_, r)| r.clone()).collect();
        // A log in an envelope is measured against its own envelope's UTC times too, each the
        // same moment as its record's line (a file of its own in `names`, after the real ones).
        if let Found::Log(found) = &file.found {
            plain.extend(found.envelope.iter().map(|&(line, at)| Reference {
                id: envelope_id(line),
                at,
                what: What::Other,
                file: files.len() + index,
                line,
            }));
        }
        let known: HashSet<&str> = plain.iter().map(|r| r.id.as_str()).collect();
        let zone = zone_of(file, &mentions(file, &known), &plain, &names);
        let tz = match &zone {
            _ if given.contains_key(&file.name) => given.get(&file.name).copied(),
            Some(Zone::Measured { measured, .. }) => measured.zones.first().map(|c| c.tz),
            _ => None,
        };
        let (rules, rules_note) = match (&file.found, &zone) {
            // Naive lines cannot be placed at other sources' moments without a zone.
            (Found::Log(found), Some(Zone::Unmeasured(_) | Zone::Measured { .. })) if tz.is_none() && found.naive > 0 => (
                Vec::new(),
                (!others.is_empty()).then(|| {
                    "not proposed: without the log's zone its lines cannot be placed at the moments other sources give".to_string()
                }),
            ),
            (Found::Log(found), Some(_)) => {
                let utc = logs::instants(&found.lines, tz);
                (rules::propose(&found.lines, &utc, &others, found.whole_seconds), None)
            }
            _ => (Vec::new(), None),
        };
        // A PostgreSQL event table names each row's queue itself: no queue is declared for it.
        let queue = matches!(&file.found, Found::Events(found) if !found.queues_in_rows())
            .then(|| queue_of(file, &files, &queues));
        decided.push((zone, queue, rules, rules_note));
    }
    files
        .into_iter()
        .zip(decided)
        .map(|(file, (zone, queue, rules, rules_note))| Proposal { file, zone, queue, rules, rules_note })
        .collect()
}

fn zone_of(file: &File, mentions: &[zone::Mention], references: &[Reference], names: &[String]) -> Option<Zone> {
    let (naive, first) = match &file.found {
        Found::Log(found) => (found.naive, found.first_naive.clone()),
        Found::Ledger(found) => {
            if found.proposal.time_absolute {
                return Some(Zone::NotNeeded(format!(
                    "timestamps carry their offset (e.g. '{}'): no tz needed",
                    found.proposal.time_sample
                )));
            }
            (found.naive_rows.len().max(1), None)
        }
        _ => return None,
    };
    if naive == 0 {
        return Some(Zone::NotNeeded("timestamps carry their offset or are epoch counts: no tz needed".into()));
    }
    let what = match (&file.found, &first) {
        (Found::Ledger(_), _) => {
            "ledger timestamps have no UTC offset (leasetrace reads them as UTC unless tz says otherwise)".to_string()
        }
        (_, Some((line, text))) => {
            format!("{naive} timestamps without a UTC offset (e.g. line {line} '{}')", sample::shown(text, 60))
        }
        _ => format!("{naive} timestamps without a UTC offset"),
    };
    let Some(measured) = zone::measure(mentions, references) else {
        let why = if mentions.is_empty() {
            "no line names a job or run id that a source with offsets (ledger in UTC, events stream, job hashes) has"
        } else {
            "the lines that name ids of other sources are not within minutes of any 15-minute offset from them"
        };
        return Some(Zone::Unmeasured(format!("{what}; {why}")));
    };
    let mut against: Vec<String> = measured
        .clusters
        .iter()
        .flat_map(|c| c.pairs.iter().map(|p| names[references[p.reference].file].clone()))
        .collect();
    against.sort();
    against.dedup();
    let date = measured
        .clusters
        .iter()
        .map(|c| {
            let days: BTreeSet<String> =
                c.pairs.iter().map(|p| references[p.reference].at.format("%Y-%m-%d").to_string()).collect();
            let days: Vec<String> = days.into_iter().collect();
            match days.as_slice() {
                [one] => one.clone(),
                [first, .., last] => format!("{first} to {last}"),
                [] => String::new(),
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    Some(Zone::Measured { measured: Box::new(measured), against, date, what })
}

/// The queue of an events stream, with the evidence, or why it is not known. The export does not
/// name it; the evidence does, when it is clear:
///
/// - the job ids its entries name are job hashes of one queue: that queue's hashes hold nearly
///   all of them (90 %) and every other queue's clearly fewer (job ids repeat across queues:
///   `gh-1004` in two queues is two jobs);
/// - its file name names one known queue (of the job hashes, the ledger's queue column, the
///   logs' `queue` keys) as a word (`events-notify.json`);
/// - the log lines that name its jobs all say one `queue`.
///
/// Two that disagree leave it undecided, saying both.
fn queue_of(
    file: &File,
    files: &[File],
    hash_queues: &BTreeSet<String>,
) -> std::result::Result<(String, String), String> {
    let Found::Events(stream) = &file.found else { return Err(String::new()) };
    let jobs: HashSet<&str> = stream.moments.iter().map(|m| m.id.as_str()).collect();
    let by_ids = queue_by_ids(&jobs, files);
    let by_name = queue_by_name(&file.name, files);
    let name_says = |queue: &str| format!("its file name names queue {queue}, the only known queue it names");
    match (by_ids, by_name) {
        (Ids::Decided(queue, why), Some(named)) if named == queue => {
            Ok((queue, format!("{why}; {}", name_says(&named))))
        }
        (Ids::Decided(_, why), Some(named)) => Err(format!("{why}, but its file name names queue {named}")),
        (Ids::Decided(queue, why), None) => Ok((queue, why)),
        (Ids::Unclear(why), Some(named)) => {
            if let Some(against) = why.as_ref().filter(|(_, covered)| !covered.contains(&named)) {
                return Err(format!("{}, but its file name names queue {named}", against.0));
            }
            Ok((named.clone(), name_says(&named)))
        }
        (Ids::Unclear(why), None) => {
            if let [queue] = hash_queues.iter().collect::<Vec<_>>().as_slice() {
                let hashes: Vec<&str> =
                    files.iter().filter(|f| matches!(f.found, Found::Jobs(_))).map(|f| f.name.as_str()).collect();
                return Ok((
                    (*queue).clone(),
                    format!("the job hashes in {} are all of queue {queue}", hashes.join(", ")),
                ));
            }
            queue_by_logs(&jobs, files)
                .map_err(|none| why.map_or(none, |(why, _)| format!("{why}, and its file name names no known queue")))
        }
    }
}

/// What the job ids of a stream say of its queue.
enum Ids {
    Decided(String, String),
    /// Why not, with the queues whose hashes hold nearly all of them (`None`: no job hashes).
    Unclear(Option<(String, Vec<String>)>),
}

/// The queue whose job hashes hold nearly all (90 %) the job ids of a stream while every other
/// queue's hold at least a tenth (and 2) fewer.
fn queue_by_ids(jobs: &HashSet<&str>, files: &[File]) -> Ids {
    let mut ids: std::collections::BTreeMap<&str, HashSet<&str>> = std::collections::BTreeMap::new();
    let mut names: std::collections::BTreeMap<&str, BTreeSet<&str>> = std::collections::BTreeMap::new();
    for file in files {
        let Found::Jobs(found) = &file.found else { continue };
        for (queue, of) in &found.ids {
            ids.entry(queue.as_str()).or_default().extend(of.iter().map(String::as_str));
            names.entry(queue.as_str()).or_default().insert(file.name.as_str());
        }
    }
    if ids.is_empty() || jobs.is_empty() {
        return Ids::Unclear(None);
    }
    let mut covered: Vec<(&str, usize)> =
        ids.iter().map(|(queue, of)| (*queue, jobs.iter().filter(|j| of.contains(*j)).count())).collect();
    covered.sort_by_key(|(queue, n)| (std::cmp::Reverse(*n), *queue));
    let n = jobs.len();
    let (best, most) = covered[0];
    let next = covered.get(1).map_or(0, |(_, c)| *c);
    let others: Vec<String> = covered[1..].iter().map(|(q, c)| format!("queue {q}'s {c}")).collect();
    let share = if most == n {
        format!("every job id its entries name ({n}) is a job hash")
    } else {
        format!("{most} of the {n} job ids its entries name are job hashes")
    };
    let said = format!(
        "{share} of queue {best} ({}){}",
        names.get(best).map(|f| f.iter().copied().collect::<Vec<_>>().join(", ")).unwrap_or_default(),
        if others.is_empty() { String::new() } else { format!(", against {}", others.join(", ")) }
    );
    if most * 10 >= n * 9 && most >= next + (n / 10).max(2) {
        return Ids::Decided(best.to_string(), said);
    }
    let near: Vec<String> = covered.iter().filter(|(_, c)| c * 10 >= n * 9).map(|(q, _)| (*q).to_string()).collect();
    Ids::Unclear(Some((format!("the job ids do not tell: {said}"), near)))
}

/// The one known queue the file's name names as a word (`events-notify.json`, `notify_events`).
fn queue_by_name(name: &str, files: &[File]) -> Option<String> {
    let mut known: BTreeSet<String> = BTreeSet::new();
    for file in files {
        match &file.found {
            Found::Jobs(found) => known.extend(found.queues.iter().cloned()),
            Found::Ledger(found) => {
                let Some(column) = found.proposal.column("queue") else { continue };
                let Some(at) = found.table.columns.iter().position(|c| c == column) else { continue };
                known.extend(
                    found.table.rows.iter().map(|r| r.cells[at].clone()).filter(|q| !q.is_empty()).take(10_000),
                );
            }
            Found::Log(found) => known.extend(found.lines.iter().filter_map(|l| l.fields.queue.clone())),
            _ => {}
        }
    }
    let lower = name.to_lowercase();
    let named: Vec<String> = known
        .into_iter()
        .filter(|queue| {
            let queue = queue.to_lowercase();
            !queue.is_empty()
                && lower.match_indices(&queue).any(|(at, _)| {
                    let before = lower[..at].chars().next_back();
                    let after = lower[at + queue.len()..].chars().next();
                    !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
                })
        })
        .collect();
    match named.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// The one `queue` the log lines that name the stream's jobs say.
fn queue_by_logs(jobs: &HashSet<&str>, files: &[File]) -> std::result::Result<(String, String), String> {
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut lines = 0;
    for other in files {
        let Found::Log(log) = &other.found else { continue };
        for line in &log.lines {
            if ids::line_ids(line, jobs).is_empty() {
                continue;
            }
            let from_key = line.fields.queue.clone();
            let from_pair = line
                .message
                .split_whitespace()
                .find_map(|t| t.strip_prefix("queue=").map(|q| q.trim_matches(['"', '\'', ',']).to_string()));
            if let Some(queue) = from_key.or(from_pair).filter(|q| !q.is_empty()) {
                seen.insert(queue);
                lines += 1;
            }
        }
    }
    match seen.len() {
        1 => {
            let queue = seen.into_iter().next().unwrap_or_default();
            Ok((queue.clone(), format!("{lines} log lines that name the stream's jobs say queue={queue}")))
        }
        0 => Err("the export does not name its queue, and no job hash, file name or log line names it".into()),
        _ => Err(format!(
            "log lines that name the stream's jobs give several queues ({})",
            seen.into_iter().collect::<Vec<_>>().join(", ")
        )),
    }
}

/// What one file looks like to `init`, for a message to someone who gave it where a case folder
/// is expected: its kind, a few words saying what it is ("a server log (text)"), and whether its
/// times need a zone declared (a log with times without an offset). `None` when it is none of the
/// sources leasetrace reads. Reads at most `SAMPLE_BYTES` of it, decompressed when gzip.
pub fn looks_like(path: &Path) -> Option<(SourceKind, String, bool)> {
    let name = path.file_name().map_or_else(String::new, |n| n.to_string_lossy().to_string());
    let file = sniff::recognise(path, &name).ok()?;
    let (what, needs_zone) = match &file.found {
        Found::Log(found) => (format!("a server log ({})", found.declared()), found.naive > 0),
        Found::Ledger(found) if found.proposal.receiver => {
            (format!("a receiver's record of effects ({})", found.proposal.format), false)
        }
        Found::Ledger(found) => (format!("a run ledger ({})", found.proposal.format), false),
        Found::Events(found) => (format!("BullMQ's events stream ({})", found.format), false),
        Found::Jobs(_) => ("BullMQ job hashes".to_string(), false),
        Found::Params(_) => ("BullMQ lock parameters (worker options)".to_string(), false),
        Found::Trace(found) => (format!("OpenTelemetry traces ({})", found.format), false),
        Found::Monitor(_) => ("redis-cli MONITOR output (legacy Bull)".to_string(), false),
    };
    Some((file.kind(), what, needs_zone))
}

/// Writes the manifest into `folder` (refusing to replace one unless `force`) and returns a
/// report for the terminal.
pub fn run(folder: &Path, force: bool, choices: &Choices) -> Result<String> {
    if std::fs::symlink_metadata(folder).is_err() {
        return Err(Error::usage(crate::config::wrong_path::missing(folder, "a folder of exports")));
    }
    if !folder.is_dir() {
        // One file, not a folder of them: what it looks like and the command that reads it.
        let is_not = "not a folder: init looks at the files of a folder of exports";
        return Err(Error::usage(crate::config::wrong_path::file_as_folder(folder, is_not).unwrap_or_else(|| {
            format!(
                "{}: {is_not}; to read one file, give it with its flag: `leasetrace analyze --log FILE` (or --ledger, --events, --jobs, --trace, --params)",
                folder.display()
            )
        })));
    }
    let target = folder.join(MANIFEST);
    if target.exists() && !force {
        return Err(Error::usage(format!("{}: already exists; pass --force to replace it", target.display())));
    }
    let given = choices.zones_by_name(folder);
    let mut inspection = inspect_with(folder, &given)?;
    inspection.given = choices.zones_by_file(&inspection, folder)?;
    inspection.display = choices::display(choices, &inspection.given, &inspection);
    if inspection.proposals.is_empty() {
        // One line per file, each name and reason written out (`terminal::visible`): the
        // message's own line breaks are the only ones.
        let mut why = String::new();
        for (name, reason) in &inspection.skipped {
            let _ = write!(why, "\n  {}", crate::terminal::visible(&format!("{name}: {reason}")));
        }
        return Err(Error::usage(format!(
            "{}: no file here looks like a source leasetrace reads{why}",
            crate::terminal::visible(&folder.display().to_string())
        )));
    }
    let text = manifest::write(&inspection);
    std::fs::write(&target, &text).map_err(|source| Error::Write { path: target.clone(), source })?;
    Ok(manifest::report(&inspection, &target))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_incident_folder_is_recognised_and_the_log_zone_measured_but_left_to_the_user() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/incident-2026-10-07");
        let inspection = inspect(&root).unwrap();
        let found: Vec<(&str, &str, Option<String>)> = inspection
            .proposals
            .iter()
            .map(|p| (p.file.name.as_str(), p.file.kind().name(), p.file.format()))
            .collect();
        assert_eq!(
            found,
            [
                ("bullmq.json", "bullmq-params", None),
                ("ledger.csv", "ledger", Some("csv".to_string())),
                ("server.log", "log", Some("text".to_string()))
            ]
        );
        assert!(matches!(inspection.proposals[1].zone, Some(Zone::NotNeeded(_))));
        let Some(Zone::Measured { measured, against, date, .. }) = &inspection.proposals[2].zone else {
            panic!("{:?}", inspection.proposals[2].zone)
        };
        assert_eq!(measured.clusters.len(), 1);
        assert_eq!(measured.clusters[0].offset_s, 9 * 3600);
        assert_eq!(against, &["ledger.csv"]);
        assert_eq!(date, "2026-10-06 to 2026-10-07", "the ledger's rows are UTC: 23:54 on the 6th");
        assert!(measured.zones.iter().any(|c| c.tz.name() == "Asia/Seoul"));
    }
}

#[cfg(test)]
mod queues {
    use super::*;

    /// The queue proposed for the stream `name` (entries naming `jobs`) beside the job hashes of
    /// `mail` (7, 8, 9, 10) and `sms` (7, 8, 11, 12): ids collide across queues.
    fn queue(name: &str, jobs: &[&str]) -> std::result::Result<(String, String), String> {
        let dir = tempfile::tempdir().unwrap();
        for (queue, ids) in [("mail", ["7", "8", "9", "10"]), ("sms", ["7", "8", "11", "12"])] {
            let hashes: Vec<String> = ids
                .iter()
                .map(|id| {
                    format!(
                        r#"{{"key":"bull:{queue}:{id}","fields":{{"name":"send","timestamp":"1796524973816","processedOn":"1796524973843"}}}}"#
                    )
                })
                .collect();
            std::fs::write(dir.path().join(format!("hashes-{queue}.jsonl")), hashes.join("\n")).unwrap();
        }
        let entries: Vec<String> = jobs
            .iter()
            .enumerate()
            .map(|(n, id)| format!(r#"{{"id":"17965249739{n:02}-0","fields":{{"event":"active","jobId":"{id}"}}}}"#))
            .collect();
        std::fs::write(dir.path().join(name), format!("[{}]", entries.join(","))).unwrap();
        let inspection = inspect(dir.path()).unwrap();
        inspection.proposals.into_iter().find(|p| p.file.name == name).unwrap().queue.unwrap()
    }

    #[test]
    fn a_streams_queue_is_the_one_whose_hashes_hold_its_jobs_or_the_one_its_name_names() {
        assert_eq!(
            queue("stream.json", &["7", "8", "9", "10"]),
            Ok((
                "mail".into(),
                "every job id its entries name (4) is a job hash of queue mail (hashes-mail.jsonl), against queue sms's 2"
                    .into()
            ))
        );
        // Ids both queues have: the name tells.
        assert_eq!(
            queue("sms-events.json", &["7", "8"]),
            Ok(("sms".into(), "its file name names queue sms, the only known queue it names".into()))
        );
    }

    #[test]
    fn a_streams_queue_is_left_undecided_when_the_evidence_disagrees_or_is_silent() {
        assert_eq!(
            queue("sms-events.json", &["7", "8", "9", "10"]).unwrap_err(),
            "every job id its entries name (4) is a job hash of queue mail (hashes-mail.jsonl), against queue sms's 2, but its file name names queue sms"
        );
        assert_eq!(
            queue("stream.json", &["7", "8"]).unwrap_err(),
            "the job ids do not tell: every job id its entries name (2) is a job hash of queue mail (hashes-mail.jsonl), against queue sms's 2, and its file name names no known queue"
        );
        assert!(queue("mail-sms.json", &["7", "8"]).is_err(), "a name that names both queues tells nothing");
    }
}

#[cfg(test)]
mod hostile {
    //! Any bytes in a folder: `init` never panics and writes valid TOML.
    use super::*;

    /// A small deterministic generator (no test dependency needed).
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self) -> usize {
            self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            usize::try_from(self.0 >> 33).unwrap_or(0)
        }

        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.next() % items.len()]
        }
    }

    const PIECES: &[&str] = &[
        "2026-10-07 09:33:00.000 INFO job active id=repeat:s:1791333180000 run=r-1",
        "2026-10-07T00:33:00.000Z",
        "at,run_id,job_id,event\n",
        ",",
        "\t",
        "\"",
        "\"\"",
        "\n",
        "\r",
        "\r\n",
        "{",
        "}",
        "[",
        "]",
        "{\"id\":\"1791333180000-0\",\"fields\":{\"event\":\"stalled\",\"jobId\":\"repeat:s:1791333180000\"}}",
        "{\"key\":\"bull:q:repeat:s:1791333180000\",\"fields\":{\"processedOn\":\"1791333180004\",\"name\":\"s\"}}",
        "lockDuration: 12000\n",
        "{\"lockDuration\": 5}",
        "repeat:s:1791333180000",
        "r-1",
        "start",
        "done",
        "[Nest] 1  - 10/07/2026, 9:33:00 AM     LOG [X] job active id=7",
        "1791333180000-0",
        "event",
        "1) \"processedOn\"",
        "bull:q:7",
        "é",
        "\u{feff}",
        "\u{2028}",
        "'",
        "#",
        "\\",
        "=",
        "(?P<job_id>",
        "9999-99-99 99:99:99",
        "0001-01-01T00:00:00Z",
        "18446744073709551616",
    ];

    /// Real exports, to be mutated.
    const SEEDS: &[&str] = &[
        "fixtures/incident-2026-10-07/ledger.csv",
        "fixtures/incident-2026-10-07/server.log",
        "fixtures/incident-2026-10-07/bullmq.json",
        "fixtures/bullmq-5.81.5-stalled/events.json",
        "fixtures/bullmq-5.81.5-stalled/events.txt",
        "fixtures/bullmq-5.81.5-stalled/jobs.jsonl",
        "fixtures/bullmq-5.81.5-stalled/server.log",
        "fixtures/bullmq-5.81.5-stalled/ledger.csv",
        "fixtures/formats/nestjs.log",
        "fixtures/formats/pino.log",
    ];

    /// `bytes` with a few random edits: a piece written over, a range cut, a line repeated.
    fn mutate(random: &mut Lcg, mut bytes: Vec<u8>) -> Vec<u8> {
        for _ in 0..=(random.next() % 4) {
            if bytes.is_empty() {
                break;
            }
            let at = random.next() % bytes.len();
            let len = (random.next() % 64).min(bytes.len() - at);
            match random.next() % 4 {
                0 => {
                    bytes.splice(at..at + len, random.pick(PIECES).bytes());
                }
                1 => {
                    bytes.drain(at..at + len);
                }
                2 => {
                    let copy = bytes[at..at + len].to_vec();
                    bytes.splice(at..at, copy);
                }
                _ => bytes[at] = u8::try_from(random.next() % 256).unwrap_or(0),
            }
        }
        bytes
    }

    #[test]
    fn random_folders_give_valid_toml_and_no_panic() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let seeds: Vec<Vec<u8>> = SEEDS.iter().map(|s| std::fs::read(root.join(s)).unwrap()).collect();
        let mut random = Lcg(16);
        let mut kinds = BTreeSet::new();
        for round in 0..60 {
            let dir = tempfile::tempdir().unwrap();
            for (index, seed) in seeds.iter().enumerate() {
                if random.next().is_multiple_of(3) {
                    continue;
                }
                let bytes = if random.next().is_multiple_of(3) {
                    let mut text = String::new();
                    for _ in 0..(random.next() % 200) {
                        text.push_str(random.pick(PIECES));
                    }
                    text.into_bytes()
                } else {
                    mutate(&mut random, seed.clone())
                };
                // A name that would end its comment and add a source, were it written raw.
                let name = format!("f{index}\"'\n[[sources]]\npath = \"..\\u002Fx\"\u{1b}\u{202E}.txt");
                std::fs::write(dir.path().join(name), bytes).unwrap();
            }
            let inspection = inspect(dir.path()).unwrap();
            for proposal in &inspection.proposals {
                let measured = matches!(proposal.zone, Some(Zone::Measured { .. }));
                kinds.insert(format!("{}{}", proposal.file.kind().name(), if measured { " measured" } else { "" }));
            }
            let text = manifest::write(&inspection);
            let parsed: std::result::Result<toml::Value, _> = toml::from_str(&text);
            assert!(parsed.is_ok(), "round {round}: {:?}\n{text}", parsed.err());
            let sources = parsed.ok().and_then(|p| p.get("sources").and_then(|s| s.as_array()).cloned());
            for source in sources.unwrap_or_default() {
                let path = source.get("path").and_then(toml::Value::as_str).unwrap_or_default();
                assert!(dir.path().join(path).is_file() && !path.contains('/'), "round {round}: {path:?}\n{text}");
            }
            // Uncommenting a proposed zone keeps it valid.
            for line in text.lines().filter(|l| l.starts_with("# tz = \"") && !l.contains("...")) {
                let one = text.replacen(line, &line[2..], 1);
                assert!(toml::from_str::<toml::Value>(&one).is_ok(), "round {round}: {line}");
            }
        }
        // The mutations reach every recogniser and the zone proposer.
        let reached: Vec<&str> = kinds.iter().map(String::as_str).collect();
        for kind in ["bullmq-events", "bullmq-jobs", "bullmq-params", "ledger", "log measured"] {
            assert!(reached.contains(&kind), "{kind} not reached: {reached:?}");
        }
    }

    #[test]
    fn degenerate_files_are_left_out_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("empty.csv"), "").unwrap();
        std::fs::write(dir.path().join("long.log"), "x".repeat(SAMPLE_BYTES + 10)).unwrap();
        std::fs::write(dir.path().join("deep.json"), "[".repeat(100_000)).unwrap();
        std::fs::write(
            dir.path().join("wide.csv"),
            format!("{}\n", (0..5000).map(|i| format!("c{i}")).collect::<Vec<_>>().join(",")),
        )
        .unwrap();
        let inspection = inspect(dir.path()).unwrap();
        assert!(inspection.proposals.is_empty(), "{:?}", inspection.proposals);
        let reasons: Vec<(&str, &str)> = inspection.skipped.iter().map(|(n, r)| (n.as_str(), r.as_str())).collect();
        assert_eq!(
            reasons[0],
            (
                "deep.json",
                "not a ledger, log, BullMQ export or lock parameters file that leasetrace can tell from its first lines"
            )
        );
        assert_eq!(reasons[1], ("empty.csv", "empty file"));
        assert_eq!(reasons[2], ("long.log", "no line ends in the first 4 MiB: not a text export"));
        assert!(reasons[3].0 == "wide.csv" && reasons[3].1.starts_with("not a ledger"), "{reasons:?}");
    }
}
