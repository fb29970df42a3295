//! Recognising a run ledger by what its columns hold, whatever they are named.
//!
//! Real tables name their columns after the app (`ts_utc`, `execution_id`, `bull_id`, `step`,
//! `subject`, `node`, `phase`), so the default names of the ledger reader are only a hint here.
//! On the sampled rows (at most `SAMPLE_ROWS`) each column is described by its content: how many
//! cells are timestamps, how many distinct values it has and how they repeat, whether they are
//! BullMQ job ids, whether they are filled on the rows of some events only. The fields are then
//! given in order, each to the column whose content fits it best (a column serves one field):
//!
//! - `time`: a column of timestamps that varies within a run (a round's slot is constant in it);
//! - `event`: every row filled, a few distinct short values, most of them event-like words;
//! - `job`: `repeat:<name>:<millis>` ids (or a job-named column of ids);
//! - `run`: ids that repeat, each with one round-started row; then `slot`, `item` (filled on
//!   the selected and posted rows only), `sweep` (the name in the job ids), and the rest by
//!   name, each checked against its content.
//!
//! A field is proposed only with the evidence that decided it, which the manifest prints.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::ingest::bullmq::jobs::repeat_slot;
use crate::ingest::ledger::{FIELDS, OUTCOME_VALUES};
use crate::model::EventKind;
use chrono::Datelike;

use crate::time::{self, Stamp};

use super::event_values::{self, words};
use super::lifecycle;
use super::sample::{Json, SAMPLE_ROWS, Sample, group, shown};
pub use super::table::{Row, Table};

/// The most columns a ledger may have for `init` to look at it.
const MAX_COLUMNS: usize = 256;

pub fn table(sample: &Sample, json: Option<&Json>) -> Option<Table> {
    match json {
        Some(Json::Records(records)) if sample.text.trim_start().starts_with('{') => jsonl(sample, records),
        Some(_) => None,
        None => csv(sample),
    }
}

fn jsonl(sample: &Sample, records: &[(u64, serde_json::Value)]) -> Option<Table> {
    let mut columns: Vec<String> = Vec::new();
    let mut rows = Vec::new();
    for (line, record) in records.iter().take(SAMPLE_ROWS) {
        let serde_json::Value::Object(object) = record else { return None };
        for key in object.keys() {
            if !columns.contains(key) {
                if columns.len() == MAX_COLUMNS {
                    return None;
                }
                columns.push(key.clone());
            }
        }
        let cells = columns
            .iter()
            .map(|c| match object.get(c) {
                Some(serde_json::Value::String(text)) => text.trim().to_string(),
                Some(value @ (serde_json::Value::Number(_) | serde_json::Value::Bool(_))) => value.to_string(),
                _ => String::new(),
            })
            .collect();
        rows.push(Row { line: *line, cells });
    }
    for row in &mut rows {
        row.cells.resize(columns.len(), String::new());
    }
    let last = rows.last().map_or(0, |r| r.line);
    let end = line_end_offset(&sample.text, last);
    Some(Table { format: "jsonl", columns, rows, end, ragged: None })
}

/// The byte after line `line` (1-based) of `text`.
fn line_end_offset(text: &str, line: u64) -> usize {
    let mut seen = 0;
    for (at, byte) in text.bytes().enumerate() {
        if byte == b'\n' {
            seen += 1;
            if seen == line {
                return at + 1;
            }
        }
    }
    text.len()
}

fn csv(sample: &Sample) -> Option<Table> {
    let first = sample.first_line()?;
    let delimiter = if first.contains('\t') && !first.contains(',') { b'\t' } else { b',' };
    let records = csv_records(&sample.text, delimiter, SAMPLE_ROWS + 1);
    let ((_, header), rest) = records.split_first()?;
    let header: Vec<String> = header.iter().map(|h| h.trim().trim_start_matches('\u{feff}').to_string()).collect();
    let unique: HashSet<&String> = header.iter().collect();
    let plausible = header.len() >= 2
        && header.len() <= MAX_COLUMNS
        && unique.len() == header.len()
        && header.iter().all(|h| !h.is_empty() && time::parse_field(h).is_err());
    if !plausible {
        return None;
    }
    let mut rows = Vec::new();
    let mut ragged = None;
    let mut end = sample.text.len();
    for ((start, line), cells) in rest {
        if rows.len() == SAMPLE_ROWS {
            end = *start;
            break;
        }
        if cells.len() != header.len() && ragged.is_none() {
            ragged = Some((*line, cells.len()));
        }
        let mut cells: Vec<String> = cells.iter().map(|c| c.trim().to_string()).collect();
        cells.resize(header.len(), String::new());
        rows.push(Row { line: *line, cells });
    }
    Some(Table { format: "csv", columns: header, rows, end, ragged })
}

/// CSV records (at most `max`) with the byte where each starts and the line its first character
/// is on, blank lines skipped. Lines end at LF, CRLF or a lone CR, as the ledger reader counts.
fn csv_records(text: &str, delimiter: u8, max: usize) -> Vec<((usize, u64), Vec<String>)> {
    use csv_core::{ReadRecordResult, ReaderBuilder};
    let bytes = text.as_bytes();
    let mut reader = ReaderBuilder::new().delimiter(delimiter).build();
    let (mut output, mut ends) = (vec![0u8; 1 << 12], vec![0usize; 64]);
    let (mut at, mut out_len, mut ends_len, mut start) = (0, 0, 0, 0);
    let (mut lines_before, mut counted_to, mut after_cr) = (0u64, 0usize, false);
    let mut records = Vec::new();
    while records.len() < max {
        let (result, read, wrote, ended) =
            reader.read_record(&bytes[at..], &mut output[out_len..], &mut ends[ends_len..]);
        at += read;
        out_len += wrote;
        ends_len += ended;
        match result {
            ReadRecordResult::InputEmpty => {}
            ReadRecordResult::OutputFull => output.resize(output.len() * 2, 0),
            ReadRecordResult::OutputEndsFull => ends.resize(ends.len() * 2, 0),
            ReadRecordResult::Record => {
                let mut fields = Vec::with_capacity(ends_len);
                let mut from = 0;
                for &end in &ends[..ends_len] {
                    fields.push(String::from_utf8_lossy(&output[from..end]).into_owned());
                    from = end;
                }
                // The record's first character, past the line ends before it.
                let first = start + bytes[start..at].iter().take_while(|b| matches!(b, b'\n' | b'\r')).count();
                lines_before += crate::ingest::line_ends(&bytes[counted_to..first], &mut after_cr);
                counted_to = first;
                let blank = fields.len() == 1 && fields[0].trim().is_empty();
                if !blank {
                    records.push(((first, lines_before + 1), fields));
                }
                start = at;
                out_len = 0;
                ends_len = 0;
            }
            ReadRecordResult::End => break,
        }
    }
    records
}

/// What a column holds, on the sampled rows.
#[derive(Debug, Default)]
struct Profile {
    filled: usize,
    times: usize,
    absolute: usize,
    /// Distinct values with their counts (at most `MAX_DISTINCT` kept).
    distinct: HashMap<String, usize>,
    /// Distinct values in the order first seen (at most `MAX_DISTINCT`).
    order: Vec<String>,
    many: bool,
    repeat_ids: usize,
    integers: usize,
    spaced: usize,
    longest: usize,
    host_pid: usize,
    upper_words: usize,
    outcomes: usize,
    hex: usize,
}

const MAX_DISTINCT: usize = 4096;

fn profile(table: &Table, column: usize) -> Profile {
    let mut p = Profile::default();
    for row in &table.rows {
        let cell = row.cells[column].as_str();
        if cell.is_empty() {
            continue;
        }
        p.filled += 1;
        if let Some(stamp) = timestamp(cell) {
            p.times += 1;
            p.absolute += usize::from(matches!(stamp, Stamp::Absolute(_)));
        }
        if let Some(count) = p.distinct.get_mut(cell) {
            *count += 1;
        } else if p.distinct.len() < MAX_DISTINCT {
            p.distinct.insert(cell.to_string(), 1);
            p.order.push(cell.to_string());
        } else {
            p.many = true;
        }
        p.repeat_ids += usize::from(repeat_slot(cell).is_some());
        p.integers += usize::from(cell.len() <= 18 && cell.bytes().all(|b| b.is_ascii_digit()));
        p.spaced += usize::from(cell.contains(' '));
        p.longest = p.longest.max(cell.chars().count());
        p.host_pid +=
            usize::from(cell.rsplit_once('/').is_some_and(|(host, pid)| {
                !host.is_empty() && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())
            }));
        p.upper_words += usize::from(cell.chars().all(|c| c.is_ascii_uppercase() || c == '_'));
        let lower = cell.to_lowercase();
        p.outcomes += usize::from(OUTCOME_VALUES.iter().any(|(_, names)| names.contains(&lower.as_str())));
        // A digest has letters among its hex digits; a number of 16 digits is a count or a time.
        p.hex += usize::from(
            cell.len() >= 16
                && cell.bytes().all(|b| b.is_ascii_hexdigit())
                && cell.bytes().any(|b| b.is_ascii_alphabetic()),
        );
    }
    p
}

/// A cell that is a timestamp of a plausible moment: text with a date, or an epoch count (of
/// seconds, milliseconds, microseconds or nanoseconds, as the ledger reader reads them) that
/// falls in 2000-2100: other numbers are counts or ids, not times.
pub fn timestamp(cell: &str) -> Option<Stamp> {
    let stamp = time::parse_field(cell).ok()?;
    let epoch = cell.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    match stamp {
        Stamp::Absolute(at) if epoch => (2000..=2100).contains(&at.year()).then_some(stamp),
        _ => Some(stamp),
    }
}

#[allow(clippy::cast_precision_loss)]
fn share(part: usize, whole: usize) -> f64 {
    if whole == 0 { 0.0 } else { part as f64 / whole as f64 }
}

/// One field given to a column, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Mapped {
    pub field: &'static str,
    pub column: String,
    pub why: String,
}

/// A distinct value of the event column.
#[derive(Debug)]
pub struct EventValue {
    pub value: String,
    pub rows: usize,
    pub proposal: event_values::Proposal,
}

#[derive(Debug)]
pub struct Proposal {
    pub format: &'static str,
    pub rows: usize,
    pub mapped: Vec<Mapped>,
    /// Columns no field was given to, with a sample value.
    pub unmapped: Vec<(String, String)>,
    /// Empty for a receiver's record.
    pub event_column: String,
    pub events: Vec<EventValue>,
    /// More distinct event values than were listed.
    pub more_events: bool,
    /// Another column that fits a lifecycle about as well as the event column: the choice is
    /// left to the user.
    pub alternative: Option<Alternative>,
    /// The receiving side's record of effects (item, key, job, outcome), not a run ledger.
    pub receiver: bool,
    /// Whether the time column's timestamps carry an offset (or are epoch counts).
    pub time_absolute: bool,
    pub time_sample: String,
    /// How the mapping was decided, beyond each field's reason (the event column's runs, the
    /// runner-up, the job type).
    pub notes: Vec<String>,
    /// What could not be decided.
    pub undecided: Vec<String>,
}

/// The runner-up event column, when it fits about as well.
#[derive(Debug)]
pub struct Alternative {
    pub column: String,
    pub why: String,
    pub events: Vec<EventValue>,
}

/// What the folder's other exports say about a ledger's columns.
#[derive(Debug, Default)]
pub struct Known {
    /// The job ids of the events streams and job hashes.
    pub jobs: HashSet<String>,
    /// The queues of the job hashes.
    pub queues: HashSet<String>,
}

impl Proposal {
    pub fn column(&self, field: &str) -> Option<&str> {
        self.mapped.iter().find(|m| m.field == field).map(|m| m.column.as_str())
    }

    /// Whether some value of the event column has a kind (a receiver's record has none to have).
    pub fn events_decided(&self) -> bool {
        self.receiver || self.events.iter().any(|e| e.proposal.kind.is_some())
    }
}

/// Name hints beyond the reader's default column names (words of a header, lower case).
const HINTS: &[(&str, &[&str])] = &[
    (
        "time",
        &["ts", "time", "timestamp", "at", "created", "occurred", "logged", "recorded", "inserted", "when", "date"],
    ),
    ("event", &["event", "type", "action", "step", "kind", "stage", "transition", "op", "operation", "what"]),
    ("run", &["run", "round", "execution", "exec", "invocation", "sweep_run"]),
    ("job", &["job", "bull", "bullmq"]),
    ("slot", &["slot", "scheduled", "schedule", "due", "planned", "tick"]),
    ("item", &["item", "pr", "subject", "target", "entity", "resource", "object", "ticket", "issue", "pull", "record"]),
    (
        "worker",
        &[
            "worker", "node", "host", "hostname", "pod", "instance", "owner", "pid", "replica", "machine", "server",
            "consumer", "runner", "executor", "holder", "process", "sender",
        ],
    ),
    ("status", &["status", "state", "phase"]),
    ("sweep", &["sweep", "scheduler", "task", "cron", "jobname"]),
    ("queue", &["queue"]),
    (
        "detail",
        &["detail", "reason", "message", "error", "cause", "note", "notes", "msg", "comment", "description", "info"],
    ),
    ("generation", &["generation", "gen", "fence", "fencing", "epoch"]),
    ("lease_until", &["lease", "until", "expires", "expiry", "deadline", "locked"]),
    ("attempt", &["attempt", "attempts", "try", "tries", "retry"]),
    ("outcome", &["outcome", "result", "accepted", "verdict"]),
    ("key", &["idempotency", "dedupe", "dedup", "idem", "key"]),
    ("payload_hash", &["hash", "sha", "digest", "checksum"]),
];

/// How well a header names `field`: 2 for one of the reader's default names, 1 for a hint word.
fn name_score(field: &str, header: &str) -> u8 {
    let defaults = FIELDS.iter().find(|f| f.name == field).map_or(&[][..], |f| f.defaults);
    if defaults.iter().any(|d| d.eq_ignore_ascii_case(header)) {
        return 2;
    }
    let hints = HINTS.iter().find(|(f, _)| *f == field).map_or(&[][..], |(_, h)| h);
    u8::from(words(header).iter().any(|w| hints.contains(&w.as_str())))
}

struct Columns<'t> {
    table: &'t Table,
    profiles: Vec<Profile>,
    taken: Vec<bool>,
    mapped: Vec<Mapped>,
}

impl Columns<'_> {
    fn free(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.table.columns.len()).filter(|&c| !self.taken[c])
    }

    fn give(&mut self, field: &'static str, column: usize, why: String) {
        self.taken[column] = true;
        self.mapped.push(Mapped { field, column: self.table.columns[column].clone(), why });
    }

    fn index(&self, field: &str) -> Option<usize> {
        let name = self.mapped.iter().find(|m| m.field == field)?.column.as_str();
        self.table.columns.iter().position(|c| c == name)
    }

    /// The free column with the best score (ties: the earlier column); `None` if no score.
    fn best(&self, score: impl Fn(usize) -> Option<f64>) -> Option<usize> {
        let mut best: Option<(usize, f64)> = None;
        for column in self.free() {
            if let Some(s) = score(column)
                && best.is_none_or(|(_, b)| s > b)
            {
                best = Some((column, s));
            }
        }
        best.map(|(c, _)| c)
    }

    /// Among rows grouped by the run column, the share of runs in which `column` has one value.
    fn constant_within_runs(&self, column: usize) -> Option<f64> {
        let run = self.index("run")?;
        let mut values: HashMap<&str, HashSet<&str>> = HashMap::new();
        for row in &self.table.rows {
            let (r, v) = (row.cells[run].as_str(), row.cells[column].as_str());
            if !r.is_empty() && !v.is_empty() {
                values.entry(r).or_default().insert(v);
            }
        }
        let one = values.values().filter(|v| v.len() == 1).count();
        (!values.is_empty()).then(|| share(one, values.len()))
    }
}

/// A field, whether a column's content fits it, and what the content is called.
type Check = (&'static str, fn(&Profile) -> bool, &'static str);

/// Proposes the columns and event mapping of a table, or says why it is not a ledger.
/// `jobs` are the job ids other exports of the folder name (events stream, job hashes): a column
/// of them is the job column whatever it is named and however its ids look (BullMQ's `42`).
pub fn propose(table: &Table, known: &Known) -> Result<Proposal, String> {
    let jobs = &known.jobs;
    let rows = table.rows.len();
    if rows == 0 {
        return Err("a header and no rows".into());
    }
    let profiles: Vec<Profile> = (0..table.columns.len()).map(|c| profile(table, c)).collect();
    let mut cols = Columns { table, profiles, taken: vec![false; table.columns.len()], mapped: Vec::new() };
    let names = &table.columns;
    let example = |c: usize, cols: &Columns| cols.profiles[c].order.first().map(|v| shown(v, 40)).unwrap_or_default();

    // Timestamps: candidates for time, slot and lease_until.
    let timed: Vec<usize> = (0..names.len())
        .filter(|&c| cols.profiles[c].filled > 0 && share(cols.profiles[c].times, cols.profiles[c].filled) >= 0.95)
        .collect();
    if timed.is_empty() {
        return Err(format!("no column of timestamps among {}", shown(&names.join(", "), 120)));
    }

    // The event column: of the columns with a few distinct short values on every row, the one
    // whose runs fit a lifecycle best (lifecycle.rs); ids, hosts and queue names never are.
    let ranked = event_candidates(&cols, &timed, known);
    let receiver = receiver_outcome(&cols, &ranked);
    let mut undecided = Vec::new();
    let mut notes = Vec::new();
    let mut alternative = None;
    let mut events: Vec<EventValue> = Vec::new();
    let mut event_column = String::new();
    let mut prefixed = None;
    if let Some(outcome) = receiver {
        let p = &cols.profiles[outcome];
        let values: Vec<&str> = p.order.iter().map(String::as_str).take(6).collect();
        cols.give(
            "outcome",
            outcome,
            format!("every row filled with what the receiver did with the request ({})", values.join(", ")),
        );
    } else {
        let Some(first) = ranked.first() else {
            return Err(format!(
                "no column of a few distinct event-like values filled on every row among {}",
                shown(&names.join(", "), 120)
            ));
        };
        let event = first.column;
        events = first.values(&cols);
        let proposed = events.iter().filter(|e| e.proposal.kind.is_some()).count();
        if proposed == 0 {
            undecided
                .push(format!("the event kind of each value of column '{}' (no value has a proposal)", names[event]));
        }
        notes.push(format!("event column '{}': {}", names[event], first.fit.evidence(names)));
        if let Some(runner) = ranked.get(1) {
            let differ = first.differing_rows(runner, table);
            let tie = runner.fit.value >= 0.5 && (first.content - runner.content).abs() <= TIE && differ.is_some();
            let judged = format!(
                "'{}' (lifecycle fit {:.2} against {:.2}: {})",
                names[runner.column],
                runner.fit.value,
                first.fit.value,
                runner.fit.evidence(names)
            );
            if tie {
                let (count, line) = differ.unwrap_or_default();
                let why = format!(
                    "the event column: '{}' and {judged} fit a run's lifecycle about equally and read {count} row(s) differently (e.g. line {line}): uncomment the source with the one that says what happened",
                    names[event]
                );
                undecided.push(why);
                notes.push(format!("NOT DECIDED: the runner-up, {judged}"));
                alternative = Some(Alternative {
                    column: names[runner.column].clone(),
                    why: format!(
                        "the runner-up: {} distinct values; {}",
                        runner.values(&cols).len(),
                        runner.fit.evidence(names)
                    ),
                    events: runner.values(&cols),
                });
            } else if differ.is_none() && runner.fit.value >= 0.5 {
                notes.push(format!(
                    "'{}' gives the same kind on every row: either reads the same",
                    names[runner.column]
                ));
            } else if runner.fit.value >= NOTED {
                notes.push(format!("the next best, {judged}"));
            }
        }
        if let Some(p) = &first.prefixed {
            notes.push(format!(
                "its values are <job type>{}<step> (job types {}): each is read by its step",
                p.separator,
                shown(&p.prefixes.join(", "), 120)
            ));
        }
        prefixed.clone_from(&first.prefixed);
        cols.give(
            "event",
            event,
            format!(
                "every row filled, {} distinct value{}, {proposed} with a proposed kind (below)",
                events.len(),
                if events.len() == 1 { "" } else { "s" }
            ),
        );
        event_column.clone_from(&names[event]);
    }
    let event = cols.index("event");
    let kinds: HashMap<&str, Option<EventKind>> = events.iter().map(|e| (e.value.as_str(), e.proposal.kind)).collect();
    let row_kind = |row: &Row| event.and_then(|e| kinds.get(row.cells[e].as_str()).copied().flatten());

    // Job ids: those of the folder's stream or job hashes, BullMQ's repeat ids, or a job-named
    // column of ids.
    let known = |c: usize| {
        let p = &cols.profiles[c];
        p.distinct.iter().filter(|(v, _)| jobs.contains(*v)).map(|(_, n)| *n).sum::<usize>()
    };
    if let Some(job) = cols.best(|c| {
        let p = &cols.profiles[c];
        let repeat = share(p.repeat_ids, p.filled);
        if p.filled == 0 || timed.contains(&c) {
            return None;
        }
        if share(known(c), p.filled) >= 0.5 {
            return Some(4.0 + share(known(c), p.filled));
        }
        if repeat >= 0.9 {
            return Some(2.0 + repeat);
        }
        (name_score("job", &names[c]) > 0 && p.spaced == 0 && p.longest <= 128).then_some(1.0)
    }) {
        let p = &cols.profiles[job];
        let why = if share(known(job), p.filled) >= 0.5 {
            format!(
                "{} of {} filled cells are job ids of the folder's events stream or job hashes (e.g. '{}')",
                group(known(job) as u64),
                group(p.filled as u64),
                example(job, &cols)
            )
        } else if share(p.repeat_ids, p.filled) >= 0.9 {
            format!(
                "{} of {} filled cells are BullMQ repeat job ids (e.g. '{}')",
                group(p.repeat_ids as u64),
                group(p.filled as u64),
                example(job, &cols)
            )
        } else {
            format!("named like a job id column; {} distinct ids (e.g. '{}')", p.distinct.len(), example(job, &cols))
        };
        cols.give("job", job, why);
    }

    // The run: ids that repeat, each value with one round-started row.
    let started = |row: &Row| row_kind(row) == Some(EventKind::RoundStarted);
    let any_start = table.rows.iter().any(started);
    let run_score = |c: usize| -> Option<(f64, String)> {
        let p = &cols.profiles[c];
        let distinct = p.distinct.len();
        if timed.contains(&c) || p.spaced > 0 || p.longest > 128 || share(p.filled, rows) < 0.9 || distinct < 2 {
            return None;
        }
        if distinct >= p.filled {
            return None;
        }
        let mut starts: HashMap<&str, usize> = HashMap::new();
        for row in &table.rows {
            let value = row.cells[c].as_str();
            if !value.is_empty() {
                *starts.entry(value).or_default() += usize::from(started(row));
            }
        }
        let one_start = starts.values().filter(|&&n| n == 1).count();
        let name = f64::from(name_score("run", &names[c]));
        let per_run = share(p.filled, distinct);
        if any_start {
            let fit = share(one_start, starts.len());
            let why = format!(
                "{} distinct ids, {per_run:.1} rows each; {one_start} of them have exactly one round-started row",
                group(distinct as u64)
            );
            (fit >= 0.5 || name > 0.0).then_some((fit * 3.0 + name, why))
        } else {
            let why = format!("{} distinct ids, {per_run:.1} rows each", group(distinct as u64));
            (name > 0.0).then_some((name, why))
        }
    };
    if let Some(run) = cols.best(|c| run_score(c).map(|(s, _)| s)) {
        let why = run_score(run).map(|(_, why)| why).unwrap_or_default();
        cols.give("run", run, why);
    }

    // Time: the timestamp column that varies most within runs; the slot is constant in them.
    let Some(time) = cols.best(|c| {
        if !timed.contains(&c) {
            return None;
        }
        let p = &cols.profiles[c];
        let constant = cols.constant_within_runs(c).unwrap_or(0.0);
        Some(
            share(p.filled, rows) * 2.0 + share(p.distinct.len(), p.filled) - constant
                + f64::from(name_score("time", &names[c])) * 0.5,
        )
    }) else {
        return Err("no free column of timestamps".into());
    };
    let tp = &cols.profiles[time];
    let time_absolute = tp.absolute == tp.times;
    let time_sample = example(time, &cols);
    cols.give(
        "time",
        time,
        format!(
            "{} of {} rows are timestamps {} (e.g. '{time_sample}'), {} distinct",
            group(tp.times as u64),
            group(rows as u64),
            if time_absolute { "with an offset or epoch counts" } else { "without an offset" },
            group(tp.distinct.len() as u64),
        ),
    );
    // Slot: a timestamp column constant within runs, or equal to the job ids' slot.
    let job = cols.index("job");
    let slot_fit = |c: usize| -> Option<(f64, String)> {
        if !timed.contains(&c) {
            return None;
        }
        let matches_job = job.map(|j| {
            let (mut same, mut both) = (0, 0);
            for row in &table.rows {
                if let (Some(slot), Some(Stamp::Absolute(at))) = (repeat_slot(&row.cells[j]), timestamp(&row.cells[c]))
                {
                    both += 1;
                    same += usize::from(slot == at);
                }
            }
            share(same, both)
        });
        let constant = cols.constant_within_runs(c);
        let name = f64::from(name_score("slot", &names[c]));
        if matches_job.unwrap_or(0.0) >= 0.9 {
            return Some((3.0 + name, "equals the slot in the job ids (repeat:<name>:<millis>)".into()));
        }
        match constant {
            Some(share) if share >= 0.95 && (name > 0.0 || cols.profiles[c].distinct.len() > 1) => Some((
                1.0 + name,
                format!("one value within {:.0}% of runs: the round's scheduled time", share * 100.0),
            )),
            _ => None,
        }
    };
    if let Some(slot) = cols.best(|c| slot_fit(c).map(|(s, _)| s)) {
        let why = slot_fit(slot).map(|(_, w)| w).unwrap_or_default();
        cols.give("slot", slot, why);
    }
    if let Some(until) = cols.best(|c| (timed.contains(&c) && name_score("lease_until", &names[c]) > 0).then_some(1.0))
    {
        cols.give("lease_until", until, "timestamps, named like a lease expiry".into());
    }

    // Item: filled on the rows that select or post, empty on the rows that start or finish (a
    // run's last row may name its item: then empty on the rows that start). A row number is not.
    let item_fit = |c: usize| -> Option<(f64, String)> {
        let p = &cols.profiles[c];
        if timed.contains(&c) || p.filled == 0 || p.longest > 128 || share(p.spaced, p.filled) > 0.2 {
            return None;
        }
        if p.integers == p.filled && p.distinct.len() == p.filled && !p.many && p.filled > 1 {
            return None;
        }
        let (mut acting, mut acting_filled, mut framing, mut framing_filled) = (0, 0, 0, 0);
        let (mut starting, mut starting_filled) = (0, 0);
        for row in &table.rows {
            let filled = usize::from(!row.cells[c].is_empty());
            match row_kind(row) {
                Some(EventKind::ItemSelected | EventKind::EffectPosted) => {
                    acting += 1;
                    acting_filled += filled;
                }
                Some(kind @ (EventKind::RoundStarted | EventKind::RoundFinished)) => {
                    framing += 1;
                    framing_filled += filled;
                    if kind == EventKind::RoundStarted {
                        starting += 1;
                        starting_filled += filled;
                    }
                }
                _ => {}
            }
        }
        let name = f64::from(name_score("item", &names[c]));
        if acting > 0 && share(acting_filled, acting) >= 0.8 && share(framing_filled, framing) <= 0.3 {
            let why = format!(
                "filled on {acting_filled} of {acting} item-selected/effect-posted rows and {framing_filled} of {framing} round-started/finished rows (e.g. '{}')",
                example(c, &cols)
            );
            return Some((2.0 + name, why));
        }
        if acting > 0 && starting > 0 && share(acting_filled, acting) >= 0.8 && share(starting_filled, starting) <= 0.1
        {
            let why = format!(
                "filled on {acting_filled} of {acting} item-selected/effect-posted rows and {starting_filled} of {starting} round-started rows (e.g. '{}')",
                example(c, &cols)
            );
            return Some((1.5 + name, why));
        }
        (name >= 2.0).then(|| (name, format!("the reader's default name for the item (e.g. '{}')", example(c, &cols))))
    };
    if let Some(item) = cols.best(|c| item_fit(c).map(|(s, _)| s)) {
        let why = item_fit(item).map(|(_, w)| w).unwrap_or_default();
        cols.give("item", item, why);
    }

    // Sweep: the name in the repeat job ids.
    if let Some(j) = job {
        let sweep_fit = |c: usize| -> Option<f64> {
            let (mut same, mut both) = (0, 0);
            for row in &table.rows {
                let id = row.cells[j].as_str();
                let name = id.strip_prefix("repeat:").and_then(|r| r.rsplit_once(':')).map(|(n, _)| n);
                if let (Some(name), false) = (name, row.cells[c].is_empty()) {
                    both += 1;
                    same += usize::from(name == row.cells[c]);
                }
            }
            (both > 0 && share(same, both) >= 0.9).then(|| share(same, both))
        };
        if let Some(sweep) = cols.best(sweep_fit) {
            cols.give("sweep", sweep, "equals the scheduler name in the job ids (repeat:<name>:<millis>)".into());
        }
    }

    // The rest, by name, each checked against what it holds.
    let by_name: &[Check] = &[
        ("worker", |p| p.spaced == 0 && p.longest <= 128, "ids of who ran the row"),
        ("status", |p| p.distinct.len() <= 20 && p.longest <= 40, "a few short values"),
        ("sweep", |p| p.spaced == 0 && p.distinct.len() <= 50, "a few names"),
        ("queue", |p| p.spaced == 0 && p.distinct.len() <= 50, "a few names"),
        ("detail", |_| true, "free text"),
        ("generation", |p| p.integers == p.filled, "whole numbers"),
        ("attempt", |p| p.integers == p.filled, "whole numbers"),
        ("outcome", |p| p.outcomes == p.filled, "accepted/rejected values"),
        ("key", |p| p.spaced == 0, "keys"),
        ("payload_hash", |p| p.spaced == 0, "hashes"),
    ];
    for (field, fits, what) in by_name {
        if cols.index(field).is_some() {
            continue;
        }
        let pick = cols.best(|c| {
            let p = &cols.profiles[c];
            let name = name_score(field, &names[c]);
            (name > 0 && p.filled > 0 && !timed.contains(&c) && fits(p)).then_some(f64::from(name))
        });
        if let Some(c) = pick {
            let why = format!("named like the {field} and holds {what} (e.g. '{}')", example(c, &cols));
            cols.give(field, c, why);
        }
    }
    // Content alone, for the usual shapes: `host/pid` workers, upper-case statuses, free text.
    let content: &[Check] = &[
        ("worker", |p| share(p.host_pid, p.filled) >= 0.9, "host/pid values"),
        ("status", |p| share(p.upper_words, p.filled) >= 0.9 && p.distinct.len() <= 12, "a few upper-case words"),
        ("detail", |p| share(p.spaced, p.filled) >= 0.3 && p.longest >= 16, "free text"),
        ("outcome", |p| p.outcomes == p.filled, "accepted/rejected values"),
        ("payload_hash", |p| p.hex == p.filled, "hexadecimal digests"),
    ];
    for (field, fits, what) in content {
        if cols.index(field).is_some() {
            continue;
        }
        let pick = cols.best(|c| {
            let p = &cols.profiles[c];
            (p.filled > 0 && !timed.contains(&c) && fits(p)).then_some(0.5)
        });
        if let Some(c) = pick {
            let why = format!("holds {what} (e.g. '{}')", example(c, &cols));
            cols.give(field, c, why);
        }
    }

    // What the ledger reader would take by a column's name anyway: said, not left implicit.
    for field in FIELDS {
        if cols.index(field.name).is_some() {
            continue;
        }
        if let Some(c) = cols.best(|c| (name_score(field.name, &names[c]) == 2).then_some(1.0)) {
            let why = format!("the ledger reader's default name for the {} (e.g. '{}')", field.name, example(c, &cols));
            cols.give(field.name, c, why);
        }
    }
    // The job type: a sweep column, or the prefix of the event values, which no field reads.
    if let Some(p) = prefixed.as_ref().filter(|_| cols.index("sweep").is_none()) {
        let types = shown(&p.prefixes.join(", "), 120);
        // What the analysis takes for a round's sweep instead (docs/findings/sweep-overlap.md).
        let instead = match cols.index("queue") {
            Some(q) => format!("a round's queue (column '{}') is its sweep to the analysis", names[q]),
            None => "the rounds are one sweep to the analysis".to_string(),
        };
        notes.push(format!(
            "no column names the job type: it is the prefix of the event values ({types}), which no field reads; {instead}"
        ));
        undecided.push(format!(
            "the job type: no column names it (no sweep field); it is the prefix of the values of column '{event_column}' ({types}), which no field reads"
        ));
    }
    if let Some(c) = cols.index("worker").filter(|_| receiver.is_some()) {
        let why = format!("named like who sent the request (e.g. '{}')", example(c, &cols));
        if let Some(worker) = cols.mapped.iter_mut().find(|m| m.field == "worker") {
            worker.why = why;
        }
    }
    let unmapped = cols.free().map(|c| (names[c].clone(), example(c, &cols))).collect();
    let more_events = event.is_some_and(|e| cols.profiles[e].distinct.len() > events.len() || cols.profiles[e].many);
    let mut mapped = cols.mapped;
    let order: BTreeMap<&str, usize> = FIELDS.iter().enumerate().map(|(i, f)| (f.name, i)).collect();
    mapped.sort_by_key(|m| order.get(m.field).copied().unwrap_or(usize::MAX));
    Ok(Proposal {
        format: table.format,
        rows,
        mapped,
        unmapped,
        event_column,
        more_events,
        events,
        alternative,
        receiver: receiver.is_some(),
        time_absolute,
        time_sample,
        notes,
        undecided,
    })
}

/// Two candidates whose content scores are this close fit about equally (the fit weighs 2, the
/// share of rows with a proposed kind 1): their names do not decide between them.
const TIE: f64 = 0.25;
/// A runner-up that fits at least this well is named beside the event column's evidence.
const NOTED: f64 = 0.25;
/// The most candidate event columns scored by their runs, and columns tried to group them by.
const MAX_CANDIDATES: usize = 12;
const MAX_GROUPINGS: usize = 24;

/// A column that could be the event column, with its values read and its runs scored.
struct Candidate {
    column: usize,
    prefixed: Option<event_values::Prefixed>,
    proposals: HashMap<String, event_values::Proposal>,
    fit: lifecycle::Fit,
    /// The share of rows with a proposed kind (a column of one value weighs a quarter).
    words: f64,
    /// What the content says: the fit (twice) and the words.
    content: f64,
    /// The content and the column's name.
    score: f64,
}

impl Candidate {
    fn kind(&self, value: &str) -> Option<EventKind> {
        self.proposals.get(value).and_then(|p| p.kind)
    }

    /// The listed values, most rows first.
    fn values(&self, cols: &Columns) -> Vec<EventValue> {
        let p = &cols.profiles[self.column];
        let mut events: Vec<EventValue> = p
            .order
            .iter()
            .take(40)
            .map(|value| EventValue {
                value: value.clone(),
                rows: p.distinct[value],
                proposal: event_values::propose_in(value, self.prefixed.as_ref()),
            })
            .collect();
        events.sort_by_key(|e| std::cmp::Reverse(e.rows));
        events
    }

    /// How many rows the two columns give different kinds, and the first such row's line;
    /// `None` when they agree on every row (either column reads the same).
    fn differing_rows(&self, other: &Candidate, table: &Table) -> Option<(usize, u64)> {
        let mut count = 0;
        let mut first = None;
        for row in &table.rows {
            if self.kind(&row.cells[self.column]) != other.kind(&row.cells[other.column]) {
                count += 1;
                first.get_or_insert(row.line);
            }
        }
        first.map(|line| (count, line))
    }
}

/// The candidate event columns, best first: every row filled, 1 to 64 distinct short values,
/// not ids (`gh-1001`, `27806`), hosts (`pod/pid`), job ids or the folder's queue names; scored
/// by how their runs fit a lifecycle, then by the share of rows with a proposed kind.
fn event_candidates(cols: &Columns, timed: &[usize], known: &Known) -> Vec<Candidate> {
    let table = cols.table;
    let rows = table.rows.len();
    let names = &table.columns;
    let mut out: Vec<(Candidate, usize, f64)> = Vec::new();
    for c in cols.free() {
        let p = &cols.profiles[c];
        let distinct = p.distinct.len();
        if timed.contains(&c) || p.many || share(p.filled, rows) < 0.98 || distinct == 0 || distinct > 64 {
            continue;
        }
        // Job ids are not events, though their scheduler names may hold event words.
        if p.repeat_ids > 0 || p.longest > 48 || share(p.spaced, p.filled) > 0.5 {
            continue;
        }
        // What a row is about (an id, a host, a job, a queue) is not what happened.
        let rows_of = |test: &dyn Fn(&str) -> bool| -> usize {
            p.distinct.iter().filter(|(v, _)| test(v)).map(|(_, n)| *n).sum()
        };
        if share(rows_of(&|v| event_values::id_like(v)), p.filled) >= 0.5
            || share(p.host_pid, p.filled) >= 0.5
            || share(rows_of(&|v| known.jobs.contains(v)), p.filled) >= 0.5
            || (!known.queues.is_empty() && rows_of(&|v| known.queues.contains(v)) == p.filled)
        {
            continue;
        }
        let values: Vec<(&str, usize)> = p.order.iter().map(|v| (v.as_str(), p.distinct[v])).collect();
        let prefixed = event_values::prefixed(&values);
        let proposals: HashMap<String, event_values::Proposal> =
            values.iter().map(|(v, _)| ((*v).to_string(), event_values::propose_in(v, prefixed.as_ref()))).collect();
        let proposed: usize = values.iter().filter(|(v, _)| proposals[*v].kind.is_some()).map(|(_, n)| *n).sum();
        // A value on almost every row of its own is an id, unless the values are event words
        // (a short ledger of one round: start, select, post, finish).
        if distinct > 3 && distinct * 2 > rows && share(proposed, rows) < 0.5 {
            continue;
        }
        // A ledger records at least two kinds of event (a start and an end): one value is a
        // constant (a sweep name, a status), not the event column.
        let single = if distinct == 1 && rows > 1 { 0.25 } else { 1.0 };
        let words = share(proposed, rows) * single;
        #[allow(clippy::cast_precision_loss)]
        let by_name = 0.5 * f64::from(name_score("event", &names[c])) + distinct as f64 / 10_000.0;
        let fit = lifecycle::Fit::default();
        out.push((
            Candidate { column: c, prefixed, proposals, fit, words, content: 0.0, score: 0.0 },
            c,
            words + by_name,
        ));
    }
    out.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.1.cmp(&b.1)));
    out.truncate(MAX_CANDIDATES);
    // Columns to group rows into runs by: ids that repeat on most rows.
    let mut groupings: Vec<usize> = (0..names.len())
        .filter(|&c| {
            let p = &cols.profiles[c];
            let distinct = p.distinct.len();
            !p.many && share(p.filled, rows) >= 0.9 && p.spaced == 0 && distinct >= 2 && distinct < p.filled
        })
        .collect();
    groupings.sort_by_key(|&c| std::cmp::Reverse(cols.profiles[c].distinct.len()));
    groupings.truncate(MAX_GROUPINGS);
    let mut ranked: Vec<Candidate> = out
        .into_iter()
        .map(|(mut candidate, _, prior)| {
            let kinds: HashMap<&str, Option<EventKind>> =
                candidate.proposals.iter().map(|(v, p)| (v.as_str(), p.kind)).collect();
            candidate.fit = lifecycle::fit(table, candidate.column, &kinds, &groupings);
            candidate.content = 2.0 * candidate.fit.value + candidate.words;
            candidate.score = 2.0 * candidate.fit.value + prior;
            candidate
        })
        .collect();
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.column.cmp(&b.column)));
    ranked
}

/// The outcome column of a receiver's record of effects: no column tells of more than one kind
/// of event (every row is one request received), and one is filled on every row with accepted
/// or rejected values (`accepted`, `duplicate`), beside an item or key column. `None` for a
/// ledger of runs.
fn receiver_outcome(cols: &Columns, ranked: &[Candidate]) -> Option<usize> {
    let names = &cols.table.columns;
    let rows = cols.table.rows.len();
    let many_kinds = ranked.iter().any(|c| {
        let mut kinds: Vec<EventKind> = c.proposals.values().filter_map(|p| p.kind).collect();
        kinds.sort_by_key(|k| k.name());
        kinds.dedup();
        kinds.len() >= 2
    });
    if many_kinds {
        return None;
    }
    let effect = (0..names.len()).any(|c| {
        cols.profiles[c].filled > 0 && (name_score("item", &names[c]) > 0 || name_score("key", &names[c]) > 0)
    });
    if !effect {
        return None;
    }
    let outcome = cols.best(|c| {
        let p = &cols.profiles[c];
        (p.filled > 0 && share(p.filled, rows) >= 0.95 && p.outcomes == p.filled)
            .then(|| 1.0 + f64::from(name_score("outcome", &names[c]) + name_score("status", &names[c])))
    })?;
    // The receiving side: named so (`received_at`, `request_id`, `sender`), or it recognised
    // repeats (`duplicate`), which a sender's record of its own sends does not say.
    let receiving = names.iter().any(|n| words(n).iter().any(|w| RECEIVING.contains(&w.as_str())));
    let repeats = cols.profiles[outcome]
        .distinct
        .keys()
        .any(|v| matches!(v.to_lowercase().as_str(), "duplicate" | "deduplicated"));
    (receiving || repeats).then_some(outcome)
}

/// Words of a receiving side's columns.
const RECEIVING: &[&str] =
    &["received", "receiver", "receive", "request", "inbound", "incoming", "sender", "caller", "client"];

#[cfg(test)]
mod tests {
    use super::*;

    fn proposal(text: &str) -> Result<Proposal, String> {
        let sample = Sample::from_text(text);
        let json = super::super::sample::json(&sample);
        propose(&table(&sample, json.as_ref()).ok_or("not a table")?, &Known::default())
    }

    /// The incident's rounds, in a table with the app's own names and words.
    const OWN_NAMES: &str = "\
ts_utc,execution_id,bull_id,step,subject,node,phase,note
2026-10-07T00:33:03.118Z,run-0933-a,repeat:pr-review-sweep:1791333180000,begin,,api-1/41877,RUNNING,
2026-10-07T00:33:58.402Z,run-0933-a,repeat:pr-review-sweep:1791333180000,pr_picked,PR-4409,api-1/41877,,
2026-10-07T00:37:26.912Z,run-0933-a,repeat:pr-review-sweep:1791333180000,crashed,,api-1/52117,FAILED,marked failed at startup: server restarted
2026-10-07T00:53:03.000Z,run-0933-b,repeat:pr-review-sweep:1791333180000,begin,,api-1/52117,RUNNING,
2026-10-07T00:54:03.310Z,run-0954-a,repeat:pr-review-sweep:1791334440000,begin,,api-1/52117,RUNNING,
2026-10-07T00:54:05.700Z,run-0933-b,repeat:pr-review-sweep:1791333180000,pr_picked,PR-4412,api-1/52117,,
2026-10-07T00:54:06.360Z,run-0954-a,repeat:pr-review-sweep:1791334440000,pr_picked,PR-4412,api-1/52117,,
2026-10-07T00:55:12.433Z,run-0933-b,repeat:pr-review-sweep:1791333180000,review_created,PR-4412,api-1/52117,,review posted
2026-10-07T00:55:40.200Z,run-0933-b,repeat:pr-review-sweep:1791333180000,end,,api-1/52117,DONE,
2026-10-07T00:55:18.905Z,run-0954-a,repeat:pr-review-sweep:1791334440000,review_created,PR-4412,api-1/52117,,review posted
2026-10-07T00:56:02.500Z,run-0954-a,repeat:pr-review-sweep:1791334440000,end,,api-1/52117,DONE,
";

    #[test]
    fn columns_with_the_apps_own_names_are_found_by_content() {
        let p = proposal(OWN_NAMES).unwrap();
        let mapped: Vec<(&str, &str)> = p.mapped.iter().map(|m| (m.field, m.column.as_str())).collect();
        assert_eq!(
            mapped,
            [
                ("time", "ts_utc"),
                ("event", "step"),
                ("run", "execution_id"),
                ("job", "bull_id"),
                ("item", "subject"),
                ("worker", "node"),
                ("status", "phase"),
                ("detail", "note"),
            ]
        );
        assert!(p.time_absolute);
        assert!(p.unmapped.is_empty(), "{:?}", p.unmapped);
        let events: Vec<(&str, usize, Option<EventKind>)> =
            p.events.iter().map(|e| (e.value.as_str(), e.rows, e.proposal.kind)).collect();
        assert_eq!(
            events,
            [
                ("begin", 3, Some(EventKind::RoundStarted)),
                ("pr_picked", 3, Some(EventKind::ItemSelected)),
                ("review_created", 2, Some(EventKind::EffectPosted)),
                ("end", 2, Some(EventKind::RoundFinished)),
                ("crashed", 1, Some(EventKind::RoundFailed)),
            ]
        );
        let run = &p.mapped[2];
        assert_eq!(run.why, "3 distinct ids, 3.7 rows each; 3 of them have exactly one round-started row");
    }

    #[test]
    fn the_slot_is_told_from_the_time_by_how_it_repeats() {
        let text = "\
when,slot_time,run,job,event
2026-10-07T00:33:03Z,2026-10-07T00:33:00Z,a,repeat:s:1791333180000,start
2026-10-07T00:33:05Z,2026-10-07T00:33:00Z,a,repeat:s:1791333180000,done
2026-10-07T00:54:03Z,2026-10-07T00:54:00Z,b,repeat:s:1791334440000,start
2026-10-07T00:54:09Z,2026-10-07T00:54:00Z,b,repeat:s:1791334440000,done
";
        let p = proposal(text).unwrap();
        assert_eq!(p.column("time"), Some("when"));
        assert_eq!(p.column("slot"), Some("slot_time"));
        assert_eq!(
            p.mapped.iter().find(|m| m.field == "slot").unwrap().why,
            "equals the slot in the job ids (repeat:<name>:<millis>)"
        );
    }

    #[test]
    fn json_lines_and_naive_times() {
        let text = "{\"t\":\"2026-12-01 19:48:40.036865\",\"exec\":\"e1\",\"what\":\"Started\"}\n{\"t\":\"2026-12-01 19:48:41\",\"exec\":\"e1\",\"what\":\"Finished\"}\n{\"t\":\"2026-12-01 19:49:41\",\"exec\":\"e2\",\"what\":\"Started\"}\n";
        let p = proposal(text).unwrap();
        assert_eq!(p.format, "jsonl");
        assert_eq!((p.column("time"), p.column("event"), p.column("run")), (Some("t"), Some("what"), Some("exec")));
        assert!(!p.time_absolute);
    }

    #[test]
    fn tables_that_are_not_ledgers_say_why() {
        assert_eq!(proposal("a,b\n1,2\n3,4\n").unwrap_err(), "no column of timestamps among a, b");
        let no_event = proposal("at,msg\n2026-10-07T00:00:00Z,hello there\n2026-10-07T00:00:01Z,general kenobi\n");
        assert!(no_event.unwrap_err().starts_with("no column of a few distinct event-like values"));
        assert!(proposal("only\n").is_err());
        let unknown = proposal("at,code\n2026-10-07T00:00:00Z,S1\n2026-10-07T00:00:01Z,S2\n2026-10-07T00:00:02Z,S1\n2026-10-07T00:00:03Z,S2\n").unwrap();
        assert_eq!(unknown.undecided, ["the event kind of each value of column 'code' (no value has a proposal)"]);
        assert!(!unknown.events_decided());
    }

    #[test]
    fn one_round_of_epoch_times_is_a_ledger_and_its_digits_are_not_digests() {
        // psql `extract(epoch ...)` exports: seconds, milliseconds, microseconds; one round.
        let text = "\
at_s,at_us,run_id,job_id,event
1796154480.000000,1796154480000000,run-1948,repeat:s:1796154480000,round_started
1796154520.036865,1796154520036865,run-1948,repeat:s:1796154480000,item_selected
1796154521.500000,1796154521500000,run-1948,repeat:s:1796154480000,effect_posted
1796154542.000001,1796154542000001,run-1948,repeat:s:1796154480000,round_finished
";
        let p = proposal(text).unwrap();
        assert_eq!(p.column("event"), Some("event"), "four distinct event words in four rows");
        assert_eq!(p.column("time"), Some("at_s"));
        assert_eq!(p.column("payload_hash"), None, "digits are not a digest");
        let run = p.mapped.iter().find(|m| m.field == "run").unwrap();
        assert_eq!(run.why, "the ledger reader's default name for the run (e.g. 'run-1948')");
        assert!(timestamp("1796154480000000").is_some() && timestamp("42").is_none() && timestamp("99999").is_none());
    }

    #[test]
    fn a_column_of_the_streams_job_ids_is_the_job_column_whatever_its_name() {
        let text = "\
ts,execution,ref,step
2026-10-07T00:33:00Z,e-1,42,begin
2026-10-07T00:33:05Z,e-1,42,end
2026-10-07T00:34:00Z,e-2,43,begin
2026-10-07T00:34:05Z,e-2,43,end
";
        let sample = Sample::from_text(text);
        let table = table(&sample, None).unwrap();
        let without = propose(&table, &Known::default()).unwrap();
        assert_eq!(without.column("job"), None, "numbers named 'ref' are not known to be job ids");
        let jobs: HashSet<String> = ["42".to_string(), "43".to_string(), "44".to_string()].into_iter().collect();
        let with = propose(&table, &Known { jobs, queues: HashSet::new() }).unwrap();
        assert_eq!(with.column("job"), Some("ref"));
        assert_eq!(with.column("run"), Some("execution"));
        assert!(with.mapped.iter().any(|m| m.why.starts_with("4 of 4 filled cells are job ids of the folder's")));
    }

    /// A ledger shared by five job types (the fleet's PostgreSQL table, `psql \\copy ... csv
    /// header`): the lifecycle in one column, a job type before each step, beside a final state,
    /// a queue, the job and the worker; the pod names hold the word `review`.
    const SHARED: &str = "\
id,logged_at,queue_name,bull_job_id,run_ref,lifecycle,final_state,item_ref,idem_key,worker_node,details
1,2026-12-06 11:42:53.855428+09,review,gh-1001,review-gh-1001-a,review.begin,,,,review-bot-7d9f8c6b5-8nbbd/27806,
2,2026-12-06 11:42:53.857339+09,review,repeat:pr-sweep:1796524973804,sweep-114253-a,sweep.begin,,,,review-bot-7d9f8c6b5-hv6gs/27805,
3,2026-12-06 11:42:53.860271+09,notify,gh-1001,notify-gh-1001-a,notify.begin,,,,review-bot-7d9f8c6b5-pb2vv/27807,
4,2026-12-06 11:42:53.866139+09,notify,repeat:digest:1796524973816,digest-114253-a,digest.begin,,,,review-bot-7d9f8c6b5-hv6gs/27805,
5,2026-12-06 11:42:54.168686+09,review,repeat:pr-sweep:1796524973804,sweep-114253-a,sweep.pick,,PR-4094,,review-bot-7d9f8c6b5-hv6gs/27805,
6,2026-12-06 11:42:54.176799+09,review,repeat:pr-sweep:1796524973804,sweep-114253-a,sweep.pick,,PR-4095,,review-bot-7d9f8c6b5-hv6gs/27805,
7,2026-12-06 11:42:54.375754+09,notify,repeat:digest:1796524973816,digest-114253-a,digest.send,,digest-1142,digest:1796524973816,review-bot-7d9f8c6b5-hv6gs/27805,
8,2026-12-06 11:42:54.37993+09,notify,repeat:digest:1796524973816,digest-114253-a,digest.end,done,,,review-bot-7d9f8c6b5-hv6gs/27805,
9,2026-12-06 11:42:54.931304+09,notify,gh-1001,notify-gh-1001-a,notify.send,,user-6,notify:gh-1001:user-6,review-bot-7d9f8c6b5-pb2vv/27807,
10,2026-12-06 11:42:54.933884+09,notify,gh-1001,notify-gh-1001-a,notify.end,done,user-6,,review-bot-7d9f8c6b5-pb2vv/27807,
11,2026-12-06 11:42:55.363371+09,review,repeat:pr-sweep:1796524973804,sweep-114253-a,sweep.send,,PR-4094,,review-bot-7d9f8c6b5-hv6gs/27805,
12,2026-12-06 11:42:55.507519+09,review,gh-1001,review-gh-1001-a,review.send,,PR-5001,,review-bot-7d9f8c6b5-8nbbd/27806,
13,2026-12-06 11:42:55.523733+09,review,gh-1001,review-gh-1001-a,review.end,done,PR-5001,,review-bot-7d9f8c6b5-8nbbd/27806,
14,2026-12-06 11:42:56.039394+09,review,gh-1002,review-gh-1002-a,review.begin,,,,review-bot-7d9f8c6b5-pb2vv/27807,
15,2026-12-06 11:42:56.083381+09,notify,gh-1002,notify-gh-1002-a,notify.begin,,,,review-bot-7d9f8c6b5-pb2vv/27807,
16,2026-12-06 11:42:56.465392+09,notify,gh-1002,notify-gh-1002-a,notify.send,,user-4,notify:gh-1002:user-4,review-bot-7d9f8c6b5-pb2vv/27807,
17,2026-12-06 11:42:56.477661+09,notify,gh-1002,notify-gh-1002-a,notify.end,done,user-4,,review-bot-7d9f8c6b5-pb2vv/27807,
18,2026-12-06 11:42:56.628332+09,review,repeat:pr-sweep:1796524973804,sweep-114253-a,sweep.send,,PR-4095,,review-bot-7d9f8c6b5-hv6gs/27805,
19,2026-12-06 11:42:56.653751+09,review,repeat:pr-sweep:1796524973804,sweep-114253-a,sweep.end,done,,,review-bot-7d9f8c6b5-hv6gs/27805,
20,2026-12-06 11:42:57.422354+09,review,gh-1002,review-gh-1002-a,review.send,,PR-5002,,review-bot-7d9f8c6b5-pb2vv/27807,
178,2026-12-06 11:43:26.27367+09,notify,gh-1014,notify-gh-1014-b,notify.begin,,,,review-bot-7d9f8c6b5-8nbbd/27806,
179,2026-12-06 11:43:26.405997+09,notify,gh-1013,notify-gh-1013-b,notify.reaped,failed,,,review-bot-7d9f8c6b5-pb2vv/30052,marked failed at startup: container restarted
";

    fn mapped(p: &Proposal) -> Vec<(&str, &str)> {
        p.mapped.iter().map(|m| (m.field, m.column.as_str())).collect()
    }

    #[test]
    fn of_competing_columns_the_one_whose_runs_fit_a_lifecycle_is_the_event_column() {
        let sample = Sample::from_text(SHARED);
        let table = table(&sample, None).unwrap();
        let known = Known { jobs: HashSet::new(), queues: ["review".into(), "notify".into()].into_iter().collect() };
        let p = propose(&table, &known).unwrap();
        assert_eq!(
            mapped(&p),
            [
                ("time", "logged_at"),
                ("event", "lifecycle"),
                ("run", "run_ref"),
                ("job", "bull_job_id"),
                ("item", "item_ref"),
                ("worker", "worker_node"),
                ("status", "final_state"),
                ("queue", "queue_name"),
                ("detail", "details"),
                ("key", "idem_key"),
            ]
        );
        assert!(p.alternative.is_none());
        let kinds: Vec<(&str, Option<EventKind>)> =
            p.events.iter().map(|e| (e.value.as_str(), e.proposal.kind)).collect();
        for (value, kind) in [
            ("review.begin", EventKind::RoundStarted),
            ("sweep.pick", EventKind::ItemSelected),
            ("notify.send", EventKind::EffectPosted),
            ("review.end", EventKind::RoundFinished),
            ("notify.reaped", EventKind::RoundFailed),
        ] {
            assert!(kinds.contains(&(value, Some(kind))), "{value}: {kinds:?}");
        }
        assert!(kinds.iter().all(|(_, kind)| kind.is_some()), "{kinds:?}");
        assert_eq!(
            p.notes[0],
            "event column 'lifecycle': of 8 runs (by 'run_ref'), 7 open with their one round-started row, 6 have several values, 6 close with a finish or failure"
        );
        assert!(p.notes.iter().any(|n| n.starts_with("its values are <job type>.<step> (job types ")), "{:?}", p.notes);
        // No column names the job type: said, and left to the user.
        assert!(
            p.undecided.iter().any(|u| u.starts_with("the job type: no column names it (no sweep field); it is the prefix of the values of column 'lifecycle'")),
            "{:?}",
            p.undecided
        );
        // The row number is filled on every row and is no item.
        assert!(p.unmapped.iter().any(|(c, _)| c == "id"), "{:?}", p.unmapped);
    }

    #[test]
    fn two_columns_that_fit_about_equally_and_disagree_are_left_to_the_user() {
        // The app's step and the state the UI shows: both tell each run's story, and they read the
        // send rows differently (posted, or a selection?).
        let text = "\
at,run,step,ui_state
2026-10-07T00:00:00Z,r1,begin,start
2026-10-07T00:00:01Z,r1,pick,select
2026-10-07T00:00:02Z,r1,send,select
2026-10-07T00:00:03Z,r1,end,done
2026-10-07T00:01:00Z,r2,begin,start
2026-10-07T00:01:01Z,r2,pick,select
2026-10-07T00:01:02Z,r2,send,select
2026-10-07T00:01:03Z,r2,end,done
";
        let p = proposal(text).unwrap();
        assert_eq!(p.column("event"), Some("step"));
        let alternative = p.alternative.as_ref().expect("a runner-up");
        assert_eq!(alternative.column, "ui_state");
        assert!(
            p.undecided
                .iter()
                .any(|u| u.starts_with("the event column: 'step' and 'ui_state' (lifecycle fit 1.00 against 1.00")
                    && u.contains("read 2 row(s) differently (e.g. line 4)")),
            "{:?}",
            p.undecided
        );
        // The same story in other words reads the same: decided, and said.
        let same = text.replace(",send,select", ",send,post");
        let p = proposal(&same).unwrap();
        assert!(p.alternative.is_none());
        assert_eq!(p.column("event"), Some("step"));
        assert!(
            p.notes.iter().any(|n| n == "'ui_state' gives the same kind on every row: either reads the same"),
            "{:?}",
            p.notes
        );
    }

    #[test]
    fn queue_names_hosts_and_ids_are_never_the_event_column() {
        // Every value of these columns holds an event word ('review', 'notify', 'done'), and the
        // lifecycle column holds none the words alone would read.
        let text = "\
ts,queue,node,job,run,phase
2026-10-07T00:00:00Z,review,review-pod-1/2,gh-1001,a,opened
2026-10-07T00:00:01Z,review,review-pod-1/2,gh-1001,a,closed
2026-10-07T00:00:02Z,notify,notify-pod-2/3,gh-1002,b,opened
2026-10-07T00:00:03Z,notify,notify-pod-2/3,gh-1002,b,closed
";
        let known = Known { jobs: HashSet::new(), queues: ["review".into(), "notify".into()].into_iter().collect() };
        let sample = Sample::from_text(text);
        let err = propose(&table(&sample, None).unwrap(), &known).map(|p| p.column("event").map(str::to_string));
        assert!(!matches!(err, Ok(Some(ref c)) if c == "queue" || c == "node" || c == "job"), "{err:?}");
    }

    /// The receiving side's own record of the effects it got (the fleet's `receiver.csv`).
    const RECEIVED: &str = "\
received_at,request_id,idempotency_key,item,job_id,sender,status
2026-12-06T02:42:54.316Z,req-00001,digest:1796524973816,digest-1142,repeat:digest:1796524973816,review-bot-7d9f8c6b5-hv6gs,accepted
2026-12-06T02:42:54.909Z,req-00002,notify:gh-1001:user-6,user-6,gh-1001,review-bot-7d9f8c6b5-pb2vv,accepted
2026-12-06T02:42:55.334Z,req-00003,,PR-4094,repeat:pr-sweep:1796524973804,review-bot-7d9f8c6b5-hv6gs,accepted
2026-12-06T02:42:55.490Z,req-00004,,PR-5001,gh-1001,review-bot-7d9f8c6b5-8nbbd,accepted
2026-12-06T02:43:05.943Z,req-00017,notify:gh-1005:user-7,user-7,gh-1005,review-bot-7d9f8c6b5-8nbbd,duplicate
2026-12-06T02:43:07.676Z,req-00022,notify:gh-1006:user-7,user-7,gh-1006,review-bot-7d9f8c6b5-8nbbd,duplicate
";

    #[test]
    fn a_receivers_record_of_effects_is_told_from_a_run_ledger() {
        let p = proposal(RECEIVED).unwrap();
        assert!(p.receiver);
        assert!(p.events.is_empty() && p.event_column.is_empty());
        assert_eq!(
            mapped(&p),
            [
                ("time", "received_at"),
                ("job", "job_id"),
                ("item", "item"),
                ("worker", "sender"),
                ("outcome", "status"),
                ("key", "idempotency_key"),
            ]
        );
        assert_eq!(p.unmapped, [("request_id".to_string(), "req-00001".to_string())]);
        // Other words for the same record: delivered/deduplicated, a `dedupe_key`, a `pr`.
        let other = "at,dedupe_key,pr,result\n2026-12-06T02:42:54Z,k1,PR-1,delivered\n2026-12-06T02:42:55Z,k1,PR-1,deduplicated\n2026-12-06T02:42:56Z,k2,PR-2,delivered\n";
        let p = proposal(other).unwrap();
        assert!(p.receiver);
        assert_eq!(p.column("outcome"), Some("result"));
        // A sender's own record of its deliveries says nothing of repeats: not the receiver's.
        let outbox = "sent_at,job_id,item,idempotency_key,status\n2026-12-06T02:42:54Z,j1,PR-1,k1,delivered\n2026-12-06T02:42:55Z,j2,PR-2,k2,rejected\n";
        assert!(!proposal(outbox).unwrap().receiver);
        // A lease ledger has outcomes too, beside its events: not a receiver's record.
        let lease = "at,job_id,event,outcome,item\n2026-12-02T01:00:00Z,n-1,claim,accepted,\n2026-12-02T01:00:03Z,n-1,effect_posted,delivered,user-77\n";
        assert!(!proposal(lease).unwrap().receiver);
    }

    #[test]
    fn csv_records_keep_their_lines_through_quotes_and_line_ends() {
        let records = csv_records("a,b\r\n\r\n\"x\ny\",1\rz,2\n", b',', 10);
        let lines: Vec<u64> = records.iter().map(|((_, line), _)| *line).collect();
        assert_eq!(lines, [1, 3, 5]);
        assert_eq!(records[1].1, ["x\ny", "1"]);
    }
}
