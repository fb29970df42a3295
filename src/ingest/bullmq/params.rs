//! BullMQ lock parameters (`kind = "bullmq-params"`): BullMQ's worker options, in its own names and
//! units, found wherever they sit in a JSON or YAML document.
//!
//! Teams rarely keep a file of just the worker options: they dump their config, where the options
//! sit under a queue's name beside connection settings, versions and other queues. A flat object
//! is the simplest case of one search: every object in the document that holds one of BullMQ's
//! option names is a place the parameters may come from. One place, or places whose values come
//! to the same worker settings, is an answer; places that disagree are an error naming both, with
//! the selector (`params_at`, a JSON pointer) that settles it. The report never falls back to
//! BullMQ's defaults in silence: a file that yields no parameter is an error too.
//!
//! A bare `version` is a word every config uses (the app's, the schema's), so it names BullMQ's
//! version only beside the parameters; `bullmqVersion` / `bullmq_version` name it anywhere, and so
//! does a package manifest's dependency on `bullmq` (`deps`, `dependencies`, `devDependencies`,
//! `optionalDependencies`): there an exact version (`5.81.5`, `npm:bullmq@6.7.0`) is the version,
//! and a range (`^5.58.0`) only says the installed one is at least its lower bound.

use std::collections::{BTreeSet, HashSet};
use std::fmt::Write as _;
use std::io::Read;
use std::path::Path;
use std::sync::LazyLock;

use crate::error::{Error, Result};
use crate::ingest::bullmq::document::{self, Document, NodeId, Syntax, Value};
use crate::model::InputSummary;
use crate::model::params::{
    DEFAULT_LOCK_DURATION_MS, DEFAULT_MAX_STALLED_COUNT, DEFAULT_STALLED_INTERVAL_MS, ParamOverrides,
};

/// BullMQ's worker option names for the lock parameters, in the order of `ParamOverrides`.
pub const PARAM_KEYS: [&str; 4] = ["lockDuration", "lockRenewTime", "stalledInterval", "maxStalledCount"];
/// The keys a flat parameters file holds (`init` recognises such a file by them).
pub const KEYS: &[&str] = &["lockDuration", "lockRenewTime", "stalledInterval", "maxStalledCount", "version"];
/// Keys that name BullMQ's version wherever they are, compared without case, `_` or `-`
/// (`bullmqVersion`, `bullmq_version`, `BULLMQ_VERSION`, `bullmq-version`).
const VERSION_KEY: &str = "bullmqversion";
/// Objects of a package manifest whose `bullmq` entry is the dependency's version or range,
/// compared as `VERSION_KEY` is. `peerDependencies` is not one: it says what a library accepts,
/// not what is installed.
const DEPENDENCY_MAPS: &[&str] = &["deps", "dependencies", "devdependencies", "optionaldependencies"];
/// An npm alias of the package: `"bullmq6": "npm:bullmq@6.7.0"`.
const NPM_ALIAS: &str = "npm:bullmq@";
/// An npm alias of legacy Bull: `"queue": "npm:bull@4.16.5"`.
const BULL_ALIAS: &str = "npm:bull@";
/// Keys that name legacy Bull's version wherever they are, compared as `VERSION_KEY` is.
const BULL_VERSION_KEY: &str = "bullversion";
/// Largest file read: a config of worker options is a few KiB.
pub const MAX_BYTES: u64 = 4 << 20;
/// Most `<<` merges followed to give one object its values.
const MAX_MERGES: usize = 64;

/// A version key read from the file.
struct Found {
    /// The version; for a dependency range, its lower bound.
    version: String,
    /// The dependency range as written, when `version` is only its lower bound.
    range: Option<String>,
    map: NodeId,
    index: usize,
    line: u64,
    key: String,
}

/// What the user said about where the parameters are, beyond the file.
#[derive(Debug, Default, Clone, Copy)]
pub struct Selection<'a> {
    /// `params_at` / `--params-at`: a JSON pointer to the object holding the parameters, or to a
    /// part of the document to search.
    pub at: Option<&'a str>,
    /// `--bullmq-version` is given: the file's version is not looked for.
    pub version_given: bool,
}

/// What a parameters file gave.
#[derive(Debug)]
pub struct ParamsFile {
    pub overrides: ParamOverrides,
    pub summary: InputSummary,
    /// Where the values were found and what was not taken, for the report's assumptions. Empty for
    /// a flat object whose keys are BullMQ's.
    pub notes: Vec<String>,
}

impl ParamsFile {
    /// No parameters file: nothing given, nothing to say.
    pub fn none() -> ParamsFile {
        ParamsFile {
            overrides: ParamOverrides::default(),
            summary: InputSummary::new("", "bullmq-params", "json", None),
            notes: Vec::new(),
        }
    }
}

/// Reads the parameters of `path`, searching the whole document.
pub fn read(path: &Path) -> Result<(ParamOverrides, InputSummary)> {
    let file = read_selected(path, Selection::default())?;
    Ok((file.overrides, file.summary))
}

/// A parameter as written: its value, the key's line and whether it was a string of digits.
#[derive(Debug, Clone)]
struct Given {
    value: u64,
    line: u64,
    /// The map and entry it came from (a `<<` merge can bring it from another object).
    from: (NodeId, usize),
    string: bool,
}

/// An object holding at least one parameter.
#[derive(Debug)]
struct Place {
    node: NodeId,
    line: u64,
    given: [Option<Given>; 4],
    /// Some values came from `<<` merges.
    merged: bool,
}

impl Place {
    /// The worker settings this object amounts to, BullMQ's defaults filling the gaps.
    fn effective(&self) -> [u64; 4] {
        let value = |i: usize, default: u64| self.given[i].as_ref().map_or(default, |g| g.value);
        let lock = value(0, DEFAULT_LOCK_DURATION_MS);
        [
            lock,
            value(1, crate::model::params::half_of_lock(lock)),
            value(2, DEFAULT_STALLED_INTERVAL_MS),
            value(3, DEFAULT_MAX_STALLED_COUNT),
        ]
    }
}

struct Reader<'a> {
    path: &'a Path,
    doc: Document,
    syntax: Syntax,
    /// Each node's parent and the step from it, for the paths printed (the tree, aliases not followed).
    parents: Vec<Option<(NodeId, Step)>>,
}

#[derive(Debug, Clone, Copy)]
enum Step {
    Entry(usize),
    Item(usize),
}

pub fn read_selected(path: &Path, selection: Selection) -> Result<ParamsFile> {
    let text = read_text(path)?;
    let syntax = choose_syntax(path, &text);
    let doc = parse(path, &text, syntax)?;
    let mut summary = InputSummary::new(&path.display().to_string(), "bullmq-params", syntax.name(), None);
    summary.lines = text.lines().count() as u64;
    let parents = parents(&doc);
    let reader = Reader { path, doc, syntax, parents };
    reader.read(selection, summary)
}

fn read_text(path: &Path) -> Result<String> {
    let mut bytes = Vec::new();
    crate::ingest::open(path)?
        .take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(Error::input(
            path,
            None,
            format!(
                "larger than {} MiB: a file of BullMQ worker options is a few KiB; cut out the part that holds them",
                MAX_BYTES >> 20
            ),
        ));
    }
    let mut text = String::from_utf8(bytes).map_err(|_| {
        Error::input(
            path,
            None,
            "binary data (not UTF-8 text): expected a JSON or YAML document of BullMQ worker options",
        )
    })?;
    if text.starts_with('\u{feff}') {
        text.drain(..3);
    }
    if text.trim().is_empty() {
        return Err(Error::input(
            path,
            None,
            "file is empty: expected a JSON or YAML document of BullMQ worker options, such as {\"lockDuration\": 30000}",
        ));
    }
    Ok(text)
}

/// JSON or YAML: by the file's ending (under a `.gz`), else by its content.
fn choose_syntax(path: &Path, text: &str) -> Syntax {
    let name = path.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    let name = Path::new(name.strip_suffix(".gz").unwrap_or(&name));
    let ending = name.extension().and_then(|e| e.to_str()).unwrap_or_default();
    if ending == "json" {
        Syntax::Json
    } else if ending == "yaml" || ending == "yml" {
        Syntax::Yaml
    } else if text.trim_start().starts_with(['{', '[']) && Document::parse(text, Syntax::Json).is_ok() {
        Syntax::Json
    } else if text.trim_start().starts_with(['{', '[']) && Document::parse(text, Syntax::Yaml).is_err() {
        // Neither: JSON's error is the likelier help.
        Syntax::Json
    } else {
        Syntax::Yaml
    }
}

fn parse(path: &Path, text: &str, syntax: Syntax) -> Result<Document> {
    Document::parse(text, syntax).map_err(|e| {
        Error::input(
            path,
            e.line,
            format!("{}: expected a {} document of BullMQ worker options", e.message, syntax.name().to_uppercase()),
        )
    })
}

fn parents(doc: &Document) -> Vec<Option<(NodeId, Step)>> {
    let mut parents = vec![None; doc.len()];
    let mut stack = vec![doc.root()];
    while let Some(id) = stack.pop() {
        let children: Vec<(NodeId, Step)> = match &doc.node(id).value {
            Value::Mapping(entries) => entries.iter().enumerate().map(|(i, e)| (e.value, Step::Entry(i))).collect(),
            Value::Sequence(items) => items.iter().enumerate().map(|(i, &item)| (item, Step::Item(i))).collect(),
            Value::Scalar { .. } | Value::Alias(_) => Vec::new(),
        };
        for (child, step) in children {
            parents[child as usize] = Some((id, step));
            stack.push(child);
        }
    }
    parents
}

/// A key as it is compared with BullMQ's option names (`lock_duration` ~ `lockDuration`); `init`
/// recognises near misses by the same rule.
pub(crate) fn normalized(key: &str) -> String {
    key.chars().filter(|c| !matches!(c, '_' | '-')).flat_map(char::to_lowercase).collect()
}

static DURATION: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(
        r"(?i)^\s*(\d+(?:\.\d+)?)\s*(ms|msecs?|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?)\s*$",
    )
    .expect("valid regex")
});

/// `"12s"` as milliseconds, for the error that refuses it.
fn duration_millis(text: &str) -> Option<u64> {
    let captures = DURATION.captures(text)?;
    let amount: f64 = captures[1].parse().ok()?;
    let unit = captures[2].to_ascii_lowercase();
    let scale = match unit.as_bytes()[0] {
        b'm' if unit == "m" || unit.starts_with("min") => 60_000.0,
        b'm' => 1.0,
        b's' => 1000.0,
        _ => 3_600_000.0,
    };
    whole(amount * scale)
}

/// The error for a value above `MAX_PARAM_VALUE`.
pub(crate) fn too_large(key: &str, value: u64) -> String {
    format!(
        "'{key}' is {value}, more than {} (about 31 years of milliseconds): not a setting the timeline can weigh",
        crate::model::params::MAX_PARAM_VALUE
    )
}

/// A float that is a whole number of milliseconds, within what JavaScript counts exactly.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // checked: whole, ≥ 0, < 2^53
fn whole(value: f64) -> Option<u64> {
    (value.is_finite() && value.fract() == 0.0 && (0.0..9.0e15).contains(&value)).then_some(value as u64)
}

impl Reader<'_> {
    fn error(&self, line: Option<u64>, message: impl Into<String>) -> Error {
        Error::input(self.path, line.filter(|&l| l > 0), message)
    }

    /// The JSON pointer of a node in the tree.
    fn pointer(&self, mut id: NodeId) -> String {
        let mut steps = Vec::new();
        while let Some((parent, step)) = self.parents[id as usize] {
            steps.push(match step {
                Step::Entry(i) => document::pointer_token(self.doc.entries(parent)[i].key.as_deref().unwrap_or("?")),
                Step::Item(i) => i.to_string(),
            });
            id = parent;
        }
        steps.iter().rev().fold(String::new(), |mut pointer, step| {
            pointer.push('/');
            pointer.push_str(step);
            pointer
        })
    }

    /// A pointer as prose: the top level has the empty pointer.
    fn place_name(&self, id: NodeId) -> String {
        match self.pointer(id) {
            p if p.is_empty() => "the top level".to_string(),
            p => p,
        }
    }

    /// The key under which a node sits in its parent mapping.
    fn key_of(&self, id: NodeId) -> Option<&str> {
        match self.parents[id as usize] {
            Some((parent, Step::Entry(i))) => self.doc.entries(parent)[i].key.as_deref(),
            _ => None,
        }
    }

    fn is_within(&self, mut id: NodeId, ancestor: NodeId) -> bool {
        loop {
            if id == ancestor {
                return true;
            }
            match self.parents[id as usize] {
                Some((parent, _)) => id = parent,
                None => return false,
            }
        }
    }

    /// The objects a mapping takes values from, in precedence order: itself, then what its `<<`
    /// keys merge (YAML's merge key, which config files use to share worker defaults).
    fn merge_order(&self, map: NodeId) -> Vec<NodeId> {
        let mut order = Vec::new();
        let mut seen = HashSet::new();
        let mut stack = vec![self.doc.resolve(map)];
        while let Some(id) = stack.pop() {
            if order.len() >= MAX_MERGES || !seen.insert(id) {
                continue;
            }
            order.push(id);
            if self.syntax != Syntax::Yaml {
                continue;
            }
            let mut sources = Vec::new();
            for entry in self.doc.entries(id).iter().filter(|e| e.key.as_deref() == Some("<<")) {
                let value = self.doc.resolve(entry.value);
                match &self.doc.node(value).value {
                    Value::Mapping(_) => sources.push(value),
                    Value::Sequence(items) => sources.extend(items.iter().map(|&i| self.doc.resolve(i))),
                    _ => {}
                }
            }
            // Earlier sources win: pushed last, popped first.
            stack.extend(sources.into_iter().rev());
        }
        order
    }

    /// The parameters a mapping gives, its own keys first, then merged ones.
    fn place_of(&self, map: NodeId) -> Result<Option<Place>> {
        let mut given: [Option<Given>; 4] = Default::default();
        let mut merged = false;
        for (depth, source) in self.merge_order(map).into_iter().enumerate() {
            let mut own: [Option<Given>; 4] = Default::default();
            for (index, entry) in self.doc.entries(source).iter().enumerate() {
                let Some(slot) = PARAM_KEYS.iter().position(|k| entry.key.as_deref() == Some(k)) else { continue };
                let value = self.number(PARAM_KEYS[slot], entry.value, entry.line, slot == 3)?;
                let value = Given { value: value.0, line: entry.line, from: (source, index), string: value.1 };
                if let Some(earlier) = &own[slot]
                    && earlier.value != value.value
                {
                    return Err(self.error(
                        Some(entry.line),
                        format!(
                            "'{}' is given twice in one object ({} at line {}, {} here): remove one",
                            PARAM_KEYS[slot], earlier.value, earlier.line, value.value
                        ),
                    ));
                }
                own[slot].get_or_insert(value);
            }
            for (slot, value) in own.into_iter().enumerate() {
                if given[slot].is_none()
                    && let Some(value) = value
                {
                    merged |= depth > 0;
                    given[slot] = Some(value);
                }
            }
        }
        if given.iter().all(Option::is_none) {
            return Ok(None);
        }
        // The object's own first parameter, else the object.
        let node = self.doc.resolve(map);
        let own = given.iter().flatten().filter(|g| g.from.0 == node).map(|g| g.line).min();
        let line = own.unwrap_or(self.doc.node(node).line);
        Ok(Some(Place { node, line, given, merged }))
    }

    /// A whole number of milliseconds (or stalls): BullMQ's unit. A string of digits is read as
    /// its number, as JavaScript does when BullMQ computes with it.
    fn number(&self, key: &str, id: NodeId, line: u64, count: bool) -> Result<(u64, bool)> {
        let what = if count { "stalls" } else { "milliseconds" };
        let found = match &self.doc.node(self.doc.resolve(id)).value {
            Value::Scalar { text, quoted } => {
                let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
                let value = if digits {
                    text.parse::<u64>().ok()
                } else {
                    (!quoted).then(|| text.parse::<f64>().ok().and_then(whole)).flatten()
                };
                if let Some(value) = value {
                    if value == 0 && !count {
                        return Err(self.error(Some(line), format!("'{key}' must be greater than 0")));
                    }
                    if value > crate::model::params::MAX_PARAM_VALUE {
                        return Err(self.error(Some(line), too_large(key, value)));
                    }
                    return Ok((value, *quoted));
                }
                let shown = if *quoted { format!("{text:?}") } else { text.clone() };
                if let Some(millis) = duration_millis(text).filter(|_| !count) {
                    let flag = flag_of(key);
                    return Err(self.error(
                        Some(line),
                        format!(
                            "'{key}' must be a whole number of milliseconds, found {shown}: BullMQ takes a number of milliseconds, not a duration ({shown} would be {millis}); if your app converts it before BullMQ sees it, write {millis} in the file or give {flag} {millis}"
                        ),
                    ));
                }
                shown
            }
            Value::Mapping(_) => "an object".to_string(),
            Value::Sequence(_) => "a list".to_string(),
            Value::Alias(_) => "an alias".to_string(),
        };
        Err(self.error(Some(line), format!("'{key}' must be a whole number of {what}, found {found}")))
    }

    fn read(self, selection: Selection, mut summary: InputSummary) -> Result<ParamsFile> {
        let scope = match selection.at {
            Some(pointer) => self.select(pointer)?,
            None => self.doc.root(),
        };
        let (places, named) = self.places(scope, selection.at)?;
        let mut notes = Vec::new();
        let first = &places[0];
        let effective = first.effective();
        if let Some(other) = places.iter().find(|p| p.effective() != effective) {
            return Err(self.disagreement(first, other));
        }
        // An object where another worker's options sit that gives no parameter runs on BullMQ's
        // defaults: a second answer, unless params_at named the object.
        if !named && let Some(parallel) = self.parallel_without_params(first, scope, &places) {
            let line = self.doc.entries(parallel).first().map_or(self.doc.node(parallel).line, |e| e.line);
            let defaults = Place { node: parallel, line, given: Default::default(), merged: false };
            if defaults.effective() != effective {
                return Err(self.disagreement(first, &defaults));
            }
        }
        let mut overrides = ParamOverrides::default();
        let slots = [
            &mut overrides.lock_duration,
            &mut overrides.lock_renew_time,
            &mut overrides.stalled_interval,
            &mut overrides.max_stalled_count,
        ];
        let mut used: HashSet<(NodeId, usize)> = HashSet::new();
        // Places that agree amount to the same settings: a value any of them gives is from the file.
        for (index, slot) in slots.into_iter().enumerate() {
            *slot = places.iter().find_map(|p| p.given[index].as_ref()).map(|g| g.value);
        }
        for place in &places {
            used.extend(place.given.iter().flatten().map(|g| g.from));
        }
        summary.events = (0..4).filter(|&i| places.iter().any(|p| p.given[i].is_some())).count() as u64;
        let chosen: HashSet<NodeId> = places.iter().map(|p| p.node).collect();

        if let Some(note) = self.found_note(&places) {
            notes.push(note);
        }
        if !selection.version_given {
            let bull = self.bull_version()?;
            let (mut version, version_notes) = self.version(scope, selection.at.is_some(), &places)?;
            if let Some(bull) = bull {
                // A bare `version` that says the same as the `bull` entry is Bull's; any other
                // BullMQ version beside a Bull one leaves the library in doubt.
                match version.take() {
                    Some(other)
                        if other.range.is_none() && (other.key != "version" || other.version != bull.version) =>
                    {
                        return Err(self.error(
                            Some(other.line),
                            format!(
                                "both Bull {} (`{}`, line {}) and BullMQ {} (`{}`, line {}): a case ran one library; give the one its workers ran with --bull-version or --bullmq-version",
                                bull.version, bull.key, bull.line, other.version, other.key, other.line
                            ),
                        ));
                    }
                    Some(other) => {
                        used.insert((other.map, other.index));
                    }
                    None => {}
                }
                notes.push(format!(
                    "{}: Bull {}{} (from `{}`, line {}) selects legacy Bull's lock renewal and stall-limit models (not BullMQ's)",
                    self.path.display(),
                    bull.version,
                    bull.range.as_deref().map(|r| format!(" (at least: the range {r})")).unwrap_or_default(),
                    bull.key,
                    bull.line
                ));
                overrides.bull_version = Some(bull.version);
                used.insert((bull.map, bull.index));
                summary.events += 1;
            }
            if let Some(found) = version {
                if found.range.is_some() {
                    overrides.version_at_least = Some(found.version);
                } else {
                    overrides.version = Some(found.version);
                }
                used.insert((found.map, found.index));
                summary.events += 1;
            }
            notes.extend(version_notes);
        }
        summary.used = used.len() as u64;
        self.account(&mut summary, &used, &chosen);
        Ok(ParamsFile { overrides, summary, notes })
    }

    /// The node `params_at` names: through aliases and `<<` merges, one step per pointer token.
    fn select(&self, pointer: &str) -> Result<NodeId> {
        let usage = |message: String| Error::usage(format!("params_at (--params-at) {pointer:?}: {message}"));
        if !pointer.is_empty() && !pointer.starts_with('/') {
            return Err(usage(format!(
                "expected a JSON pointer such as \"/queues/sweep/worker\" (keys separated by '/', from the top of {})",
                self.path.display()
            )));
        }
        let mut at = self.doc.root();
        let mut walked = String::new();
        for token in pointer.split('/').skip(1) {
            let key = document::unescape_token(token);
            let here = if walked.is_empty() { "the top level".to_string() } else { walked.clone() };
            let node = self.doc.resolve(at);
            at = match &self.doc.node(node).value {
                Value::Mapping(_) => {
                    let found = self.merge_order(node).into_iter().find_map(|source| {
                        self.doc.entries(source).iter().find(|e| e.key.as_deref() == Some(key.as_str()))
                    });
                    let Some(entry) = found else {
                        let keys: Vec<String> = self
                            .doc
                            .entries(node)
                            .iter()
                            .filter_map(|e| e.key.clone())
                            .take(12)
                            .map(|k| format!("'{k}'"))
                            .collect();
                        return Err(usage(format!(
                            "{}: no key '{key}' at {here} (line {}); the keys there are {}",
                            self.path.display(),
                            self.doc.node(node).line,
                            if keys.is_empty() { "none".to_string() } else { keys.join(", ") }
                        )));
                    };
                    entry.value
                }
                Value::Sequence(items) => match token.parse::<usize>().ok().and_then(|i| items.get(i)) {
                    Some(&item) => item,
                    None => {
                        return Err(usage(format!(
                            "{}: {here} (line {}) is a list of {} items; '{token}' is not one of its indexes (0 to {})",
                            self.path.display(),
                            self.doc.node(node).line,
                            items.len(),
                            items.len().saturating_sub(1)
                        )));
                    }
                },
                Value::Scalar { .. } | Value::Alias(_) => {
                    return Err(usage(format!(
                        "{}: {here} (line {}) is a single value, not an object holding '{key}'",
                        self.path.display(),
                        self.doc.node(node).line
                    )));
                }
            };
            walked = format!("{walked}/{token}");
        }
        Ok(self.doc.resolve(at))
    }

    /// Every object in `scope` that gives a parameter, in document order. When `params_at` names
    /// an object that gives some itself, it is the only place.
    /// Also says whether `params_at` named the object.
    fn places(&self, scope: NodeId, selected: Option<&str>) -> Result<(Vec<Place>, bool)> {
        if selected.is_some()
            && let Some(place) = self.place_of(scope)?
        {
            return Ok((vec![place], true));
        }
        let mut places = Vec::new();
        let mut stack = vec![scope];
        while let Some(id) = stack.pop() {
            match &self.doc.node(id).value {
                Value::Mapping(entries) => {
                    // An object that only merges its values (`<<: *defaults`) repeats its source,
                    // which is a place of its own.
                    let owns = entries.iter().any(|e| PARAM_KEYS.iter().any(|k| e.key.as_deref() == Some(k)));
                    if owns && let Some(place) = self.place_of(id)? {
                        places.push(place);
                    }
                    stack.extend(entries.iter().rev().map(|e| e.value));
                }
                Value::Sequence(items) => stack.extend(items.iter().rev()),
                // An alias repeats a node that is walked where it is written.
                Value::Scalar { .. } | Value::Alias(_) => {}
            }
        }
        if places.is_empty() {
            return Err(self.nothing_found(scope, selected));
        }
        Ok((places, false))
    }

    /// An object in `scope` that sits where `place` does for another key or list item of one of
    /// its ancestors (`/queues/notify/worker` beside `/queues/sweep/worker`, `/workers/1` beside
    /// `/workers/0`) and gives no parameter at all. The place's own key has no such siblings:
    /// `/queues/sweep/repeat` beside `/queues/sweep/worker` is another kind of setting.
    fn parallel_without_params(&self, place: &Place, scope: NodeId, places: &[Place]) -> Option<NodeId> {
        let known: HashSet<NodeId> = places.iter().map(|p| p.node).collect();
        let mut chain = Vec::new();
        let mut id = place.node;
        while id != scope {
            let (parent, step) = self.parents[id as usize]?;
            chain.push((parent, step));
            id = parent;
        }
        chain.reverse();
        for (level, &(ancestor, step)) in chain.iter().enumerate() {
            let last = level + 1 == chain.len();
            if last && matches!(step, Step::Entry(_)) {
                continue;
            }
            let siblings: Vec<NodeId> = match (&self.doc.node(ancestor).value, step) {
                (Value::Mapping(entries), Step::Entry(own)) => {
                    entries.iter().enumerate().filter(|(i, _)| *i != own).map(|(_, e)| e.value).collect()
                }
                (Value::Sequence(items), Step::Item(own)) => {
                    items.iter().enumerate().filter(|(i, _)| *i != own).map(|(_, &item)| item).collect()
                }
                _ => continue,
            };
            for sibling in siblings {
                // Follow the rest of the place's path from the sibling, by key and index.
                let mut at = Some(sibling);
                for &(from, step) in &chain[level + 1..] {
                    at = at.and_then(|node| {
                        let node = self.doc.resolve(node);
                        match (&self.doc.node(node).value, step) {
                            (Value::Mapping(entries), Step::Entry(i)) => {
                                let key = self.doc.entries(from)[i].key.as_deref()?;
                                entries.iter().find(|e| e.key.as_deref() == Some(key)).map(|e| e.value)
                            }
                            (Value::Sequence(items), Step::Item(i)) => items.get(i).copied(),
                            _ => None,
                        }
                    });
                }
                let Some(found) = at.map(|n| self.doc.resolve(n)) else { continue };
                let gives = self.place_of(found).ok().flatten().is_some();
                if matches!(self.doc.node(found).value, Value::Mapping(_)) && !known.contains(&found) && !gives {
                    return Some(found);
                }
            }
        }
        None
    }

    fn nothing_found(&self, scope: NodeId, selected: Option<&str>) -> Error {
        let mut near = Vec::new();
        let mut embedded = Vec::new();
        let wanted: Vec<String> = PARAM_KEYS.iter().map(|k| normalized(k)).collect();
        let mut stack = vec![scope];
        while let Some(id) = stack.pop() {
            match &self.doc.node(id).value {
                Value::Mapping(entries) => {
                    for entry in entries {
                        if let Some(key) = &entry.key {
                            let plain = normalized(key);
                            if wanted.iter().any(|w| plain.starts_with(w.as_str()) || plain.ends_with(w.as_str())) {
                                near.push(format!("'{key}' at line {}", entry.line));
                            }
                        }
                    }
                    stack.extend(entries.iter().rev().map(|e| e.value));
                }
                Value::Sequence(items) => stack.extend(items.iter().rev()),
                Value::Scalar { text, .. } => {
                    if PARAM_KEYS.iter().any(|k| text.contains(k)) {
                        embedded.push(format!("{} (line {})", self.place_name(id), self.doc.node(id).line));
                    }
                }
                Value::Alias(_) => {}
            }
        }
        let mut message = format!(
            "no BullMQ lock parameter in this {} document{}: looked for the keys {} (BullMQ's worker option names, at any depth, also under a Bull 3 `settings` object)",
            self.syntax.name().to_uppercase(),
            selected.map(|p| format!(" under params_at {p:?}")).unwrap_or_default(),
            PARAM_KEYS.join(", ")
        );
        if !near.is_empty() {
            near.truncate(5);
            let _ = write!(
                message,
                "; found {}, which BullMQ does not read: its options are spelled as above",
                near.join(", ")
            );
        }
        if !embedded.is_empty() {
            embedded.truncate(3);
            let _ = write!(
                message,
                "; the text of {} names one: a config kept as a string is not read, save that text as a file of its own",
                embedded.join(", ")
            );
        }
        message.push_str(
            ". Give the file that holds the worker options, or the values as flags (--lock-duration, --stalled-interval, ...)",
        );
        self.error(None, message)
    }

    fn disagreement(&self, first: &Place, other: &Place) -> Error {
        let (a, b) = (first.effective(), other.effective());
        // A value neither object gives (lockRenewTime following lockDuration) is no news.
        let differ: Vec<String> = (0..4)
            .filter(|&i| a[i] != b[i] && (first.given[i].is_some() || other.given[i].is_some()))
            .map(|i| {
                let say = |place: &Place, value: u64| match &place.given[i] {
                    Some(g) => format!("{value} (line {})", g.line),
                    None => format!("{value} (not given: BullMQ's default)"),
                };
                format!(
                    "{} {} at {} but {} at {}",
                    PARAM_KEYS[i],
                    say(first, a[i]),
                    self.place_name(first.node),
                    say(other, b[i]),
                    self.place_name(other.node)
                )
            })
            .collect();
        let suggest = |place: &Place| self.pointer(place.node);
        // The line of the first value that differs, in the later object if it gives it.
        let line = (0..4)
            .filter(|&i| a[i] != b[i])
            .find_map(|i| other.given[i].as_ref().or(first.given[i].as_ref()))
            .filter(|_| other.given.iter().any(Option::is_some))
            .map_or(other.line, |g| g.line);
        let what = if other.given.iter().all(Option::is_none) {
            format!(
                "{} sits where {} does but gives no lock parameter, so BullMQ's defaults apply to it; which worker's are in force is ambiguous",
                self.place_name(other.node),
                self.place_name(first.node)
            )
        } else {
            "two objects give different lock parameters, so which worker's are in force is ambiguous".to_string()
        };
        self.error(
            Some(line),
            format!(
                "{what}: {}. Choose the object of the worker in this case: params_at = {:?} (or {:?}) on the bullmq-params source in the manifest, or --params-at {:?}",
                differ.join("; "),
                suggest(first),
                suggest(other),
                suggest(first)
            ),
        )
    }

    /// The note saying where the values were found, when that is not a flat object of BullMQ's
    /// names.
    fn found_note(&self, places: &[Place]) -> Option<String> {
        let first = &places[0];
        // What each parameter was read from: the first place that gives it.
        let taken: Vec<(&str, &Given)> = PARAM_KEYS
            .iter()
            .enumerate()
            .filter_map(|(i, k)| places.iter().find_map(|p| p.given[i].as_ref()).map(|g| (*k, g)))
            .collect();
        let strings: Vec<&str> = taken.iter().filter(|(_, g)| g.string).map(|(k, _)| *k).collect();
        let bull3 = places.iter().any(|p| self.key_of(p.node) == Some("settings"));
        let merged = places.iter().any(|p| p.merged);
        if first.node == self.doc.root() && places.len() == 1 && strings.is_empty() && !merged {
            return None;
        }
        let names: Vec<&str> = taken.iter().map(|(k, _)| *k).collect();
        let mut note = format!(
            "{}: lock parameters ({}) read from {} (line {})",
            self.path.display(),
            names.join(", "),
            self.place_name(first.node),
            first.line
        );
        if merged {
            note.push_str(", some through a YAML `<<` merge");
        }
        if places.len() > 1 {
            let others: Vec<String> =
                places[1..].iter().take(5).map(|p| format!("{} (line {})", self.place_name(p.node), p.line)).collect();
            let more = places.len().saturating_sub(6);
            let _ = write!(
                note,
                "; {} give the same settings{}",
                others.join(", "),
                if more > 0 { format!(", and {more} more") } else { String::new() }
            );
        }
        if !strings.is_empty() {
            let _ = write!(
                note,
                "; {} written as a string of digits, read as its number (as JavaScript does when BullMQ computes with it)",
                strings.join(", ")
            );
        }
        if bull3 {
            note.push_str(
                "; they sit in a `settings` object, Bull 3's queue shape (BullMQ takes them at the top of the worker options): Bull 3 gives these four the same meaning and defaults, but renews each job's lock on a timer of its own every lockRenewTime, as BullMQ did before 3.10 (for a Bull queue, --bull-version or a `bull` dependency applies Bull's model)",
            );
        }
        Some(note)
    }

    /// BullMQ's version: `bullmqVersion` (any spelling) anywhere, else a `version` beside the
    /// parameters, else a `version` at the top of a document that holds nothing but it and the
    /// path to the parameters. Returns the version with the entry it came from, and notes.
    fn version(&self, scope: NodeId, selected: bool, places: &[Place]) -> Result<(Option<Found>, Vec<String>)> {
        let mut explicit = Vec::new();
        let mut ranges: Vec<Found> = Vec::new();
        let mut unreadable = Vec::new();
        let mut bare = Vec::new();
        let mut stack = vec![self.doc.root()];
        while let Some(id) = stack.pop() {
            match &self.doc.node(id).value {
                Value::Mapping(entries) => {
                    for (index, entry) in entries.iter().enumerate() {
                        let Some(key) = &entry.key else { continue };
                        // `bullmq: {version: ...}` names it as plainly as `bullmqVersion`.
                        let under_bullmq =
                            key == "version" && self.key_of(id).is_some_and(|k| normalized(k) == "bullmq");
                        let dependency = self
                            .key_of(id)
                            .is_some_and(|k| DEPENDENCY_MAPS.contains(&normalized(k).as_str()))
                            && (normalized(key) == "bullmq"
                                || self.doc.scalar(entry.value).is_some_and(|(t, _)| t.trim().starts_with(NPM_ALIAS)));
                        if dependency {
                            let at = format!("{}.{key}", self.key_of(id).unwrap_or_default());
                            match self.doc.scalar(entry.value).map(|(t, _)| package_spec(t)) {
                                Some(Spec::Exact(version)) => explicit.push(Found {
                                    version,
                                    range: None,
                                    map: id,
                                    index,
                                    line: entry.line,
                                    key: at,
                                }),
                                Some(Spec::Range(floor)) => ranges.push(Found {
                                    version: floor,
                                    range: self.doc.scalar(entry.value).map(|(t, _)| t.trim().to_string()),
                                    map: id,
                                    index,
                                    line: entry.line,
                                    key: at,
                                }),
                                Some(Spec::Unknown) => {
                                    let shown = self.doc.scalar(entry.value).map(|(t, _)| t).unwrap_or_default();
                                    unreadable.push(format!(
                                        "{}: `{at}` {shown:?} (line {}) not taken as BullMQ's version: expected a version such as \"5.81.5\" or a range such as \"^5.58.0\"",
                                        self.path.display(),
                                        entry.line
                                    ));
                                }
                                // An object is a lockfile's entry (`"bullmq": {"version": ...}`),
                                // read below as `bullmq.version`.
                                None => {}
                            }
                        } else if normalized(key) == VERSION_KEY || under_bullmq {
                            let version = self.version_text(key, entry.value, entry.line)?;
                            let key = if under_bullmq {
                                format!("{}.version", self.key_of(id).unwrap_or_default())
                            } else {
                                key.clone()
                            };
                            explicit.push(Found { version, range: None, map: id, index, line: entry.line, key });
                        } else if key == "version" {
                            bare.push((id, index));
                        }
                    }
                    stack.extend(entries.iter().rev().map(|e| e.value));
                }
                Value::Sequence(items) => stack.extend(items.iter().rev()),
                Value::Scalar { .. } | Value::Alias(_) => {}
            }
        }
        let mut notes = unreadable;
        let describe = |found: &Found, how: &str| {
            format!(
                "{}: BullMQ {} (from `{}` {how}, line {}) selects the lock renewal and stall-limit models",
                self.path.display(),
                found.version,
                found.key,
                found.line
            )
        };
        if !explicit.is_empty() {
            let distinct = |list: &[&Found]| list.iter().map(|f| f.version.clone()).collect::<BTreeSet<_>>().len();
            let all: Vec<&Found> = explicit.iter().collect();
            let within: Vec<&Found> = all.iter().copied().filter(|f| self.is_within(f.map, scope)).collect();
            let pick = if distinct(&all) == 1 {
                all[0]
            } else if selected && !within.is_empty() && distinct(&within) == 1 {
                within[0]
            } else {
                let (a, b) = (all[0], all.iter().find(|f| f.version != all[0].version).expect("two versions"));
                return Err(self.error(
                    Some(b.line),
                    format!(
                        "two BullMQ versions: {} at {} (line {}) and {} at {} (line {}); give the one this case ran with --bullmq-version, or select the part of the document with params_at (a version under it is preferred)",
                        a.version,
                        self.place_name(a.map),
                        a.line,
                        b.version,
                        self.place_name(b.map),
                        b.line
                    ),
                ));
            };
            notes.push(describe(pick, &format!("at {}", self.place_name(pick.map))));
            for range in &ranges {
                notes.push(format!(
                    "{}: `{}` {} (line {}) is a range, not taken: the exact version {} is",
                    self.path.display(),
                    range.key,
                    range.range.as_deref().unwrap_or_default(),
                    range.line,
                    pick.version
                ));
            }
            let pick = Found { version: pick.version.clone(), range: None, key: pick.key.clone(), ..*pick };
            return Ok((Some(pick), notes));
        }

        // A bare `version` beside the parameters.
        let chosen: Vec<NodeId> = places.iter().map(|p| p.node).collect();
        let beside: Vec<(NodeId, usize)> = bare.iter().copied().filter(|(map, _)| chosen.contains(map)).collect();
        let mut taken = None;
        for &(map, index) in &beside {
            let entry = &self.doc.entries(map)[index];
            let version = self.version_text("version", entry.value, entry.line)?;
            let found = Found { version, range: None, map, index, line: entry.line, key: "version".into() };
            match &taken {
                None => taken = Some(found),
                Some(first) if first.version != found.version => {
                    return Err(self.error(
                        Some(found.line),
                        format!(
                            "two BullMQ versions beside the lock parameters: {} (line {}) and {}: give the one this case ran with --bullmq-version, or select the object with params_at",
                            first.version, first.line, found.version
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
        if let Some(found) = &taken
            && found.map != self.doc.root()
        {
            notes.push(describe(found, &format!("beside the lock parameters at {}", self.place_name(found.map))));
        }
        // A `version` at the top of a document that holds nothing else but the way down to the
        // parameters: `{"version": "5.58.0", "worker": {"lockDuration": ...}}`.
        let root = self.doc.root();
        if taken.is_none()
            && let Some(&(map, index)) = bare.iter().find(|(map, _)| *map == root)
        {
            let first_step = |place: &Place| {
                let mut id = place.node;
                while let Some((parent, step)) = self.parents[id as usize] {
                    if parent == root {
                        return Some(step);
                    }
                    id = parent;
                }
                None
            };
            let paths: BTreeSet<usize> = places
                .iter()
                .filter_map(first_step)
                .filter_map(|s| if let Step::Entry(i) = s { Some(i) } else { None })
                .collect();
            let only_the_way_down = paths.len() == 1
                && self.doc.entries(root).iter().enumerate().all(|(i, e)| {
                    i == index || paths.contains(&i) || PARAM_KEYS.iter().any(|k| e.key.as_deref() == Some(k))
                });
            let entry = &self.doc.entries(root)[index];
            let readable = self.version_text("version", entry.value, entry.line).ok();
            if only_the_way_down && let Some(version) = readable {
                let found = Found { version, range: None, map, index, line: entry.line, key: "version".into() };
                notes.push(describe(&found, "at the top of a document that holds only it and the lock parameters"));
                taken = Some(found);
            }
        }
        // Say which `version` keys were not taken as BullMQ's, so that a reader who expected
        // one sees why.
        let skipped: Vec<String> = bare
            .iter()
            .filter(|&&(map, index)| taken.as_ref().is_none_or(|t| (t.map, t.index) != (map, index)))
            .take(3)
            .map(|&(map, index)| {
                let entry = &self.doc.entries(map)[index];
                let shown = match self.doc.scalar(entry.value) {
                    Some((text, true)) => format!(" {text:?}"),
                    Some((text, false)) => format!(" {text}"),
                    None => String::new(),
                };
                format!("`version`{shown} at {}/version (line {})", self.pointer(map), entry.line)
            })
            .collect();
        if !skipped.is_empty() {
            notes.push(format!(
                "{}: {} not taken as BullMQ's version: a bare `version` counts only beside the lock parameters (name it bullmqVersion, or give --bullmq-version)",
                self.path.display(),
                skipped.join(", ")
            ));
        }
        // A dependency range, when nothing exact was found: the installed version is at least its
        // lower bound (the lowest, if several ranges differ), which decides only the models that
        // are alike for every version from there on.
        if let Some(found) = taken {
            for range in &ranges {
                notes.push(format!(
                    "{}: `{}` {} (line {}) is a range, not taken: the exact version {} is",
                    self.path.display(),
                    range.key,
                    range.range.as_deref().unwrap_or_default(),
                    range.line,
                    found.version
                ));
            }
            return Ok((Some(found), notes));
        }
        let lowest = ranges.into_iter().min_by_key(|r| crate::model::params::parse_version(&r.version));
        if let Some(range) = &lowest {
            notes.push(format!(
                    "{}: `{}` (line {}): range {}: the installed version is at least {}, not known exactly; a model that is the same for every version from {} on uses it, any other assumes as with no version (give the exact version with --bullmq-version or [analysis] bullmq_version)",
                    self.path.display(),
                    range.key,
                    range.line,
                    range.range.as_deref().unwrap_or_default(),
                    range.version,
                    range.version
                ));
        }
        Ok((lowest, notes))
    }

    /// Legacy Bull's version: `bullVersion` (any spelling), `bull: {version: ...}`, `bull:
    /// "4.16.5"`, or a package manifest's dependency on `bull` (`npm:bull@4.16.5` too). A range
    /// names the library as surely as a version does; its lower bound stands for the version.
    /// Two different Bull versions are an error, as two BullMQ ones are.
    fn bull_version(&self) -> Result<Option<Found>> {
        let mut found: Vec<Found> = Vec::new();
        let mut stack = vec![self.doc.root()];
        while let Some(id) = stack.pop() {
            match &self.doc.node(id).value {
                Value::Mapping(entries) => {
                    let parent = self.key_of(id).map(normalized);
                    for (index, entry) in entries.iter().enumerate() {
                        let Some(key) = &entry.key else { continue };
                        let scalar = self.doc.scalar(entry.value).map(|(t, _)| t.trim());
                        let in_dependencies = parent.as_deref().is_some_and(|k| DEPENDENCY_MAPS.contains(&k));
                        let spec = match scalar {
                            Some(text)
                                if in_dependencies && (normalized(key) == "bull" || text.starts_with(BULL_ALIAS)) =>
                            {
                                Some(package_spec(text.strip_prefix(BULL_ALIAS).unwrap_or(text)))
                            }
                            Some(text)
                                if normalized(key) == BULL_VERSION_KEY
                                    || normalized(key) == "bull"
                                    || (key == "version" && parent.as_deref() == Some("bull")) =>
                            {
                                // Outside a manifest only an exact version counts: `bull: true`
                                // or a queue's settings under `bull` say nothing about it.
                                match package_spec(text) {
                                    exact @ Spec::Exact(_) => Some(exact),
                                    _ => None,
                                }
                            }
                            _ => None,
                        };
                        let (version, range) = match spec {
                            Some(Spec::Exact(version)) => (version, None),
                            Some(Spec::Range(floor)) => (floor, scalar.map(str::to_string)),
                            _ => continue,
                        };
                        let key = match &parent {
                            Some(_) => format!("{}.{key}", self.key_of(id).unwrap_or_default()),
                            None => key.clone(),
                        };
                        found.push(Found { version, range, map: id, index, line: entry.line, key });
                    }
                    stack.extend(entries.iter().rev().map(|e| e.value));
                }
                Value::Sequence(items) => stack.extend(items.iter().rev()),
                Value::Scalar { .. } | Value::Alias(_) => {}
            }
        }
        // An exact version over a range; two exact ones must agree.
        found.sort_by_key(|f| f.range.is_some());
        if let (Some(first), Some(other)) = (
            found.first(),
            found.iter().find(|f| f.range.is_none() && found[0].range.is_none() && f.version != found[0].version),
        ) {
            return Err(self.error(
                Some(other.line),
                format!(
                    "two Bull versions: {} (`{}`, line {}) and {} (`{}`, line {}); give the one this case ran with --bull-version",
                    first.version, first.key, first.line, other.version, other.key, other.line
                ),
            ));
        }
        Ok(found.into_iter().next())
    }

    /// A version as `major.minor[.patch]`, with an optional `v`: the version in use, not a range.
    fn version_text(&self, key: &str, id: NodeId, line: u64) -> Result<String> {
        let Some((text, _)) = self.doc.scalar(id) else {
            return Err(
                self.error(Some(line), format!("'{key}' must be a string such as \"5.58.0\", found an object or list"))
            );
        };
        let plain = text.trim().trim_start_matches('v');
        let parts: Vec<&str> = plain.split('.').collect();
        if parts.len() < 2 || parts.iter().any(|p| p.parse::<u32>().is_err()) {
            return Err(self.error(
                Some(line),
                format!(
                    "'{key}' must be the BullMQ version in use, such as \"5.58.0\" (not a range), found \"{text}\""
                ),
            ));
        }
        Ok(plain.to_string())
    }

    /// Every key of the document is accounted for: used, a key of a parameters object that is not
    /// a parameter, or a key elsewhere.
    fn account(&self, summary: &mut InputSummary, used: &HashSet<(NodeId, usize)>, chosen: &HashSet<NodeId>) {
        for id in 0..self.doc.len() {
            let id = NodeId::try_from(id).expect("MAX_NODES fits in 32 bits");
            let Value::Mapping(entries) = &self.doc.node(id).value else { continue };
            for (index, entry) in entries.iter().enumerate() {
                if used.contains(&(id, index)) {
                    continue;
                }
                if chosen.contains(&id) {
                    summary.ignore(&format!("unused key '{}'", entry.key.as_deref().unwrap_or("?")));
                } else {
                    summary.ignore("key outside the lock parameters");
                }
            }
        }
    }
}

/// What a package manifest's dependency value says about the version installed.
#[derive(Debug, PartialEq, Eq)]
enum Spec {
    /// `5.81.5`, `=5.81.5`, `v5.81.5`, `npm:bullmq@5.81.5`: that version.
    Exact(String),
    /// `^5.58.0`, `~6.7.0`, `>=5.58.0 <6`, `5.x`, `5.58`, `5.0.0 - 5.9.0`: at least this version.
    Range(String),
    /// `latest`, `*`, `a || b`, a tag, a URL or path: nothing about the version.
    Unknown,
}

/// npm's range syntax, as far as a lower bound goes (node-semver's grammar).
fn package_spec(text: &str) -> Spec {
    let text = text.trim();
    let text = text.strip_prefix(NPM_ALIAS).unwrap_or(text).trim();
    if text.contains("||") {
        return Spec::Unknown;
    }
    // Whole numbers, or x/X/* wildcards; no pre-release (it sorts before its release).
    let parts = |v: &str| -> Option<Vec<Option<u32>>> {
        let v = v.trim().trim_start_matches(['v', '=']);
        let list: Vec<Option<u32>> = v
            .split('.')
            .map(|p| match p {
                "x" | "X" | "*" => Ok(None),
                _ if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => p.parse().map(Some).map_err(|_| ()),
                _ => Err(()),
            })
            .collect::<std::result::Result<_, ()>>()
            .ok()?;
        (1..=3).contains(&list.len()).then_some(list)
    };
    let floor = |list: &[Option<u32>]| -> Option<String> {
        let major = list.first().copied().flatten()?;
        Some(format!(
            "{major}.{}.{}",
            list.get(1).copied().flatten().unwrap_or(0),
            list.get(2).copied().flatten().unwrap_or(0)
        ))
    };
    let first = text.split_whitespace().next().unwrap_or_default();
    if let Some(list) = parts(first)
        && text.split_whitespace().count() == 1
    {
        return match (list.len(), list.iter().all(Option::is_some)) {
            (3, true) => Spec::Exact(floor(&list).expect("three numbers")),
            _ => floor(&list).map_or(Spec::Unknown, Spec::Range),
        };
    }
    // `5.0.0 - 5.9.0`: a hyphen range starts at its first version.
    let mut words = text.split_whitespace();
    if let (Some(low), Some("-")) = (words.next(), words.next()) {
        return parts(low).and_then(|l| floor(&l)).map_or(Spec::Unknown, Spec::Range);
    }
    let rest = ["^", "~>", "~", ">="].iter().find_map(|op| first.strip_prefix(op));
    match rest {
        Some(rest) => parts(rest).and_then(|l| floor(&l)).map_or(Spec::Unknown, Spec::Range),
        None => Spec::Unknown,
    }
}

/// The command-line flag of a parameter.
fn flag_of(key: &str) -> &'static str {
    match key {
        "lockDuration" => "--lock-duration",
        "lockRenewTime" => "--lock-renew-time",
        "stalledInterval" => "--stalled-interval",
        _ => "--max-stalled-count",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A parameters file with the given name ending and text.
    fn file(suffix: &str, text: &str) -> tempfile::NamedTempFile {
        let mut file = tempfile::Builder::new().suffix(suffix).tempfile().unwrap();
        std::io::Write::write_all(&mut file, text.as_bytes()).unwrap();
        file
    }

    fn read_text(suffix: &str, text: &str, at: Option<&str>) -> Result<ParamsFile> {
        let file = file(suffix, text);
        read_selected(file.path(), Selection { at, version_given: false })
    }

    fn values(file: &ParamsFile) -> [Option<u64>; 4] {
        let o = &file.overrides;
        [o.lock_duration, o.lock_renew_time, o.stalled_interval, o.max_stalled_count]
    }

    fn error(suffix: &str, text: &str, at: Option<&str>) -> String {
        read_text(suffix, text, at).unwrap_err().to_string()
    }

    #[test]
    fn reads_bullmq_names_and_counts_other_options() {
        let text = "{\n  \"lockDuration\": 1178000,\n  \"stalledInterval\": 30000,\n  \"concurrency\": 4\n}\n";
        let read = read_text(".json", text, None).unwrap();
        assert_eq!(values(&read), [Some(1_178_000), None, Some(30_000), None]);
        assert_eq!((read.summary.events, read.summary.used, read.summary.ignored), (2, 2, 1));
        assert_eq!(read.summary.ignored_by_reason.get("unused key 'concurrency'"), Some(&1));
        assert!(read.notes.is_empty(), "a flat file needs no note: {:?}", read.notes);
    }

    #[test]
    fn wrong_types_name_the_line() {
        let error = error(".json", "{\n  \"lockDuration\": true\n}\n", None);
        assert!(error.ends_with(":2: 'lockDuration' must be a whole number of milliseconds, found true"), "{error}");
        let error = super::tests::error(".yaml", "worker:\n  maxStalledCount: [1]\n", None);
        assert!(error.ends_with(":2: 'maxStalledCount' must be a whole number of stalls, found a list"), "{error}");
    }

    #[test]
    fn nested_json_is_found_and_its_place_said() {
        let text = r#"{
  "app": {"name": "sweeper"},
  "redis": {"host": "redis", "port": 6379},
  "queues": {
    "sweep": {
      "worker": {"concurrency": 2, "lockDuration": 12000, "stalledInterval": 5000}
    }
  }
}"#;
        let read = read_text(".json", text, None).unwrap();
        assert_eq!(values(&read), [Some(12_000), None, Some(5_000), None]);
        assert_eq!(read.summary.format, "json");
        assert_eq!(read.notes.len(), 1, "{:?}", read.notes);
        assert!(
            read.notes[0]
                .ends_with(": lock parameters (lockDuration, stalledInterval) read from /queues/sweep/worker (line 6)"),
            "{}",
            read.notes[0]
        );
        // Every key is accounted for: 2 used, concurrency beside them, 8 others.
        assert_eq!((read.summary.used, read.summary.ignored), (2, 9));
        assert_eq!(read.summary.ignored_by_reason.get("key outside the lock parameters"), Some(&8));
    }

    #[test]
    fn nested_yaml_is_found_with_its_line() {
        let text = "# config dump\nqueues:\n  sweep:\n    name: sweep\n    worker:\n      lockDuration: 12000\n      lockRenewTime: 4000\n      maxStalledCount: 0\n";
        let read = read_text(".yaml", text, None).unwrap();
        assert_eq!(values(&read), [Some(12_000), Some(4_000), None, Some(0)]);
        assert_eq!(read.summary.format, "yaml");
        assert!(read.notes[0].contains("read from /queues/sweep/worker (line 6)"), "{}", read.notes[0]);
    }

    #[test]
    fn the_syntax_is_sniffed_without_a_telling_name() {
        let yaml = read_text(".conf", "worker:\n  lockDuration: 12000\n", None).unwrap();
        assert_eq!((yaml.summary.format, yaml.overrides.lock_duration), ("yaml", Some(12_000)));
        let json = read_text("", "{\"worker\": {\"lockDuration\": 12000}}", None).unwrap();
        assert_eq!((json.summary.format, json.overrides.lock_duration), ("json", Some(12_000)));
        // YAML's flow style starts like JSON but is not JSON.
        let flow = read_text(".txt", "{worker: {lockDuration: 12000}}", None).unwrap();
        assert_eq!((flow.summary.format, flow.overrides.lock_duration), ("yaml", Some(12_000)));
        // Broken either way: JSON's message.
        let error = error("", "{\"lockDuration\": 12000,,}", None);
        assert!(error.contains(":1: not JSON: "), "{error}");
    }

    #[test]
    fn objects_in_arrays_are_found() {
        let text = r#"{"workers": [{"queue": "sweep", "options": {"lockDuration": 12000}}]}"#;
        let read = read_text(".json", text, None).unwrap();
        assert_eq!(read.overrides.lock_duration, Some(12_000));
        assert!(read.notes[0].contains("read from /workers/0/options (line 1)"), "{}", read.notes[0]);
    }

    #[test]
    fn objects_that_agree_give_one_answer_and_are_all_named() {
        // The second names maxStalledCount's default: the same settings.
        let text = "workers:\n  - name: a\n    lockDuration: \"12000\"\n  - name: b\n    lockDuration: 12000\n    maxStalledCount: 1\n";
        let read = read_text(".yml", text, None).unwrap();
        assert_eq!(values(&read), [Some(12_000), None, None, Some(1)]);
        let note = &read.notes[0];
        assert!(note.contains("read from /workers/0 (line 3); /workers/1 (line 5) give the same settings"), "{note}");
        assert!(note.contains("lockDuration written as a string of digits"), "{note}");
        assert_eq!(read.summary.used, 3);
    }

    #[test]
    fn objects_that_disagree_are_an_error_naming_both_and_the_fix() {
        let text = "queues:\n  sweep:\n    worker:\n      lockDuration: 12000\n  report:\n    worker:\n      lockDuration: 12000\n      stalledInterval: 5000\n";
        let error = error(".yaml", text, None);
        assert!(error.contains(":8: two objects give different lock parameters"), "{error}");
        assert!(
            error.contains("stalledInterval 30000 (not given: BullMQ's default) at /queues/sweep/worker but 5000 (line 8) at /queues/report/worker"),
            "{error}"
        );
        assert!(!error.contains("lockDuration 12000"), "values that agree are not listed: {error}");
        assert!(error.contains("params_at = \"/queues/sweep/worker\" (or \"/queues/report/worker\")"), "{error}");
        assert!(error.contains("--params-at \"/queues/sweep/worker\""), "{error}");
    }

    #[test]
    fn a_worker_beside_it_that_gives_none_runs_on_defaults_and_is_ambiguous() {
        let text = "queues:\n  sweep:\n    worker: {concurrency: 2, lockDuration: 12000}\n    repeat: {every: 60000}\n  notify:\n    worker: {concurrency: 4}\n";
        let error = error(".yaml", text, None);
        assert!(
            error.contains(":6: /queues/notify/worker sits where /queues/sweep/worker does but gives no lock parameter, so BullMQ's defaults apply to it"),
            "{error}"
        );
        assert!(error.contains("lockDuration 12000 (line 3) at /queues/sweep/worker but 30000 (not given: BullMQ's default) at /queues/notify/worker"), "{error}");
        assert_eq!(
            read_text(".yaml", text, Some("/queues/sweep/worker")).unwrap().overrides.lock_duration,
            Some(12_000)
        );
        // The same in a list of workers.
        let error = super::tests::error(".json", r#"{"workers": [{"lockDuration": 12000}, {"name": "b"}]}"#, None);
        assert!(error.contains("/workers/1 sits where /workers/0 does"), "{error}");
        // A sibling of the object's own key (`repeat`) is another kind of setting, and a
        // worker that gives the defaults' values agrees.
        let text = "queues:\n  sweep:\n    worker: {lockDuration: 30000}\n    repeat: {every: 60000}\n  notify:\n    worker: {concurrency: 4}\n";
        assert_eq!(read_text(".yaml", text, None).unwrap().overrides.lock_duration, Some(30_000));
    }

    #[test]
    fn params_at_selects_one_object_or_a_part_to_search() {
        let text = r#"{"lockDuration": 60000, "queues": {"sweep": {"name": "sweep", "worker": {"lockDuration": 12000}}, "report": {"worker": {"lockDuration": 90000}}}}"#;
        let pick = |at: &str| read_text(".json", text, Some(at)).map(|r| r.overrides.lock_duration);
        assert_eq!(pick("/queues/sweep/worker").unwrap(), Some(12_000));
        // A part without parameters of its own is searched.
        assert_eq!(pick("/queues/report").unwrap(), Some(90_000));
        // The top level gives one itself: only its own are taken.
        assert_eq!(pick("").unwrap(), Some(60_000));
        let missing = pick("/queues/swep").unwrap_err().to_string();
        assert!(
            missing.contains("no key 'swep' at /queues (line 1); the keys there are 'sweep', 'report'"),
            "{missing}"
        );
        let nothing = pick("/queues/sweep/name").unwrap_err().to_string();
        assert!(
            nothing.contains("no BullMQ lock parameter in this JSON document under params_at \"/queues/sweep/name\""),
            "{nothing}"
        );
        let dotted = pick("queues.sweep").unwrap_err().to_string();
        assert!(dotted.contains("expected a JSON pointer such as \"/queues/sweep/worker\""), "{dotted}");
    }

    #[test]
    fn params_at_reads_array_indexes_and_escaped_keys() {
        let text = "workers:\n  - {lockDuration: 1000}\n  - {lockDuration: 2000}\n\"a/b\":\n  lockDuration: 3000\n";
        let pick = |at: &str| read_text(".yaml", text, Some(at)).map(|r| r.overrides.lock_duration);
        assert_eq!(pick("/workers/1").unwrap(), Some(2_000));
        assert_eq!(pick("/a~1b").unwrap(), Some(3_000));
        let error = pick("/workers/2").unwrap_err().to_string();
        assert!(
            error.contains("/workers (line 2) is a list of 2 items; '2' is not one of its indexes (0 to 1)"),
            "{error}"
        );
    }

    #[test]
    fn a_file_without_any_parameter_is_an_error_listing_the_keys_looked_for() {
        let error = error(".json", "{\"version\": \"5.58.0\", \"concurrency\": 2}", None);
        assert!(error.contains("no BullMQ lock parameter in this JSON document"), "{error}");
        assert!(error.contains("lockDuration, lockRenewTime, stalledInterval, maxStalledCount"), "{error}");
        // Near misses and configs kept as text are named.
        let text = "worker:\n  lock_duration: 12000\n  lockDurationMs: 5000\ndata:\n  bullmq.json: '{\"lockDuration\": 12000}'\n";
        let error = super::tests::error(".yaml", text, None);
        assert!(error.contains("found 'lock_duration' at line 2, 'lockDurationMs' at line 3"), "{error}");
        assert!(error.contains("the text of /data/bullmq.json (line 5) names one"), "{error}");
        // An empty document too.
        let error = super::tests::error(".yaml", "# nothing\n---\n", None);
        assert!(error.contains("no BullMQ lock parameter"), "{error}");
    }

    #[test]
    fn duration_strings_are_refused_with_their_milliseconds() {
        let error = error(".yaml", "worker:\n  lockDuration: 12s\n", None);
        assert!(error.contains(":2: 'lockDuration' must be a whole number of milliseconds, found 12s"), "{error}");
        assert!(error.contains("(12s would be 12000)") && error.contains("--lock-duration 12000"), "{error}");
        let error = super::tests::error(".json", "{\"stalledInterval\": \"1.5 min\"}", None);
        assert!(
            error.contains("(\"1.5 min\" would be 90000)") && error.contains("--stalled-interval 90000"),
            "{error}"
        );
        let error = super::tests::error(".json", "{\"lockDuration\": \"12000.5\"}", None);
        assert!(error.ends_with("found \"12000.5\""), "{error}");
        // Larger than the detectors' arithmetic holds (u64::MAX once panicked adding it to a time).
        let error = super::tests::error(".json", "{\"lockDuration\": 18446744073709551615}", None);
        assert!(error.contains(":1: 'lockDuration' is 18446744073709551615, more than 1000000000000"), "{error}");
        let error = super::tests::error(".yaml", "stalledInterval: 9.0e14\n", None);
        assert!(error.contains(":1: 'stalledInterval' is 900000000000000, more than"), "{error}");
        let error = super::tests::error(".yaml", "maxStalledCount: \"99999999999999\"\n", None);
        assert!(error.contains(":1: 'maxStalledCount' is 99999999999999, more than"), "{error}");
        let error = super::tests::error(".json", "{\"lockDuration\": 0}", None);
        assert!(error.ends_with(":1: 'lockDuration' must be greater than 0"), "{error}");
        let error = super::tests::error(".yaml", "lockDuration: ~\n", None);
        assert!(error.ends_with("found ~"), "{error}");
    }

    #[test]
    fn a_whole_float_is_its_number() {
        let read = read_text(".yaml", "lockDuration: 12000.0\nstalledInterval: 5e3\n", None).unwrap();
        assert_eq!(values(&read), [Some(12_000), None, Some(5_000), None]);
    }

    #[test]
    fn yaml_merge_keys_give_their_values() {
        let text = "defaults: &defaults\n  lockDuration: 12000\n  stalledInterval: 5000\nqueues:\n  sweep:\n    <<: *defaults\n    concurrency: 2\n";
        let read = read_text(".yaml", text, None).unwrap();
        assert_eq!(values(&read), [Some(12_000), None, Some(5_000), None]);
        // An override in a merging object is a second set of settings: ambiguous.
        let text = "defaults: &defaults\n  lockDuration: 30000\n  stalledInterval: 5000\nsweep:\n  <<: *defaults\n  lockDuration: 12000\n";
        let error = error(".yaml", text, None);
        assert!(error.contains("lockDuration 30000 (line 2) at /defaults but 12000 (line 6) at /sweep"), "{error}");
        let read = read_text(".yaml", text, Some("/sweep")).unwrap();
        assert_eq!(values(&read), [Some(12_000), None, Some(5_000), None]);
        assert!(
            read.notes[0].contains("read from /sweep (line 6), some through a YAML `<<` merge"),
            "{}",
            read.notes[0]
        );
    }

    #[test]
    fn bull_3_settings_are_read_and_said() {
        let text = "bull:\n  redis: localhost\n  settings:\n    lockDuration: 300000\n    lockRenewTime: 30000\n    guardInterval: 5000\n";
        let read = read_text(".yaml", text, None).unwrap();
        assert_eq!(values(&read), [Some(300_000), Some(30_000), None, None]);
        assert!(read.notes[0].contains("Bull 3's queue shape"), "{}", read.notes[0]);
    }

    #[test]
    fn a_key_given_twice_in_one_object_with_two_values_is_an_error() {
        let error = error(".json", "{\"lockDuration\": 1000,\n \"lockDuration\": 2000}", None);
        assert!(
            error.contains(":2: 'lockDuration' is given twice in one object (1000 at line 1, 2000 here)"),
            "{error}"
        );
    }

    #[test]
    fn bullmq_version_is_taken_anywhere_and_said() {
        let text = "app:\n  version: 1.4.2\nmeta:\n  bullmqVersion: 5.81.5\nworker:\n  lockDuration: 12000\n";
        let read = read_text(".yaml", text, None).unwrap();
        assert_eq!(read.overrides.version.as_deref(), Some("5.81.5"));
        let notes = read.notes.join("\n");
        assert!(notes.contains("BullMQ 5.81.5 (from `bullmqVersion` at /meta, line 4)"), "{notes}");
        assert_eq!(read.summary.events, 2);
        let read = read_text(
            ".json",
            r#"{"app": {"version": "1.4.2"}, "bullmq": {"version": "5.81.5"}, "w": {"lockDuration": 1}}"#,
            None,
        )
        .unwrap();
        assert_eq!(read.overrides.version.as_deref(), Some("5.81.5"));
        assert!(read.notes.join("\n").contains("(from `bullmq.version` at /bullmq, line 1)"), "{:?}", read.notes);
        for key in ["bullmq_version", "BULLMQ_VERSION"] {
            let read = read_text(".json", &format!("{{\"{key}\": \"v6.2.0\", \"w\": {{\"lockDuration\": 1}}}}"), None)
                .unwrap();
            assert_eq!(read.overrides.version.as_deref(), Some("6.2.0"), "{key}");
        }
    }

    #[test]
    fn an_unrelated_version_is_not_taken_and_the_report_says_so() {
        // The app's version and a schema version: neither beside the parameters.
        let text =
            r#"{"version": 3, "app": {"version": "1.4.2"}, "queues": {"sweep": {"lockDuration": 12000}}, "redis": {}}"#;
        let read = read_text(".json", text, None).unwrap();
        assert_eq!(read.overrides.version, None);
        let notes = read.notes.join("\n");
        assert!(notes.contains("`version` 3 at /version (line 1), `version` \"1.4.2\" at /app/version (line 1) not taken as BullMQ's version"), "{notes}");
    }

    #[test]
    fn a_bare_version_counts_beside_the_parameters_or_atop_a_params_only_document() {
        let beside = read_text(
            ".json",
            r#"{"app": {"version": "1.4.2"}, "worker": {"version": "5.58.0", "lockDuration": 1}}"#,
            None,
        )
        .unwrap();
        assert_eq!(beside.overrides.version.as_deref(), Some("5.58.0"));
        assert!(beside.notes.join("\n").contains("beside the lock parameters at /worker"), "{:?}", beside.notes);
        let atop = read_text(".yaml", "version: 5.58.0\nworker:\n  lockDuration: 1\n", None).unwrap();
        assert_eq!(atop.overrides.version.as_deref(), Some("5.58.0"));
        // With anything else at the top, a top-level version may be the config's own.
        let not = read_text(".yaml", "version: 5.58.0\nredis: {host: r}\nworker:\n  lockDuration: 1\n", None).unwrap();
        assert_eq!(not.overrides.version, None);
        // The flat file: as before, and no note.
        let flat = read_text(".json", r#"{"version": "5.81.5", "lockDuration": 1}"#, None).unwrap();
        assert_eq!(flat.overrides.version.as_deref(), Some("5.81.5"));
        assert!(flat.notes.is_empty(), "{:?}", flat.notes);
        let range = error(".json", "{\"lockDuration\": 1,\n\"version\": \"^5.58.0\"}", None);
        assert!(
            range.ends_with(
                ":2: 'version' must be the BullMQ version in use, such as \"5.58.0\" (not a range), found \"^5.58.0\""
            ),
            "{range}"
        );
    }

    #[test]
    fn a_package_manifests_exact_dependency_is_the_version() {
        for (text, key) in [
            (r#"{"deps": {"bullmq": "5.81.5"}, "worker": {"lockDuration": 1}}"#, "deps.bullmq"),
            (r#"{"dependencies": {"bullmq": "=5.81.5"}, "worker": {"lockDuration": 1}}"#, "dependencies.bullmq"),
            (
                r#"{"devDependencies": {"queue": "npm:bullmq@5.81.5"}, "worker": {"lockDuration": 1}}"#,
                "devDependencies.queue",
            ),
        ] {
            let read = read_text(".json", text, None).unwrap();
            assert_eq!(read.overrides.version.as_deref(), Some("5.81.5"), "{text}");
            assert_eq!(read.overrides.version_at_least, None, "{text}");
            assert!(read.notes.join("\n").contains(&format!("BullMQ 5.81.5 (from `{key}`")), "{:?}", read.notes);
        }
        // A lockfile's entry is an object: its `version` is read, with nothing else said.
        let lock =
            r#"{"dependencies": {"bullmq": {"version": "5.81.5", "integrity": "sha512-x"}}, "w": {"lockDuration": 1}}"#;
        let read = read_text(".json", lock, None).unwrap();
        assert_eq!(read.overrides.version.as_deref(), Some("5.81.5"));
        assert!(!read.notes.join("\n").contains("not taken"), "{:?}", read.notes);
        // peerDependencies say what a library accepts, not what is installed.
        let peer =
            read_text(".json", r#"{"peerDependencies": {"bullmq": "5.81.5"}, "worker": {"lockDuration": 1}}"#, None)
                .unwrap();
        assert_eq!(peer.overrides.version, None);
    }

    #[test]
    fn a_bull_dependency_or_key_names_legacy_bull_not_bullmq() {
        for (text, key) in [
            (r#"{"dependencies": {"bull": "4.16.5"}, "worker": {"lockDuration": 1}}"#, "dependencies.bull"),
            (r#"{"deps": {"queue": "npm:bull@4.16.5"}, "worker": {"lockDuration": 1}}"#, "deps.queue"),
            (r#"{"bull": "4.16.5", "lockDuration": 1}"#, "bull"),
            (r#"{"bullVersion": "v4.16.5", "lockDuration": 1}"#, "bullVersion"),
            // A bare `version` that says the same is Bull's, not a BullMQ 4.16.5.
            (r#"{"dependencies": {"bull": "4.16.5"}, "lockDuration": 1, "version": "4.16.5"}"#, "dependencies.bull"),
        ] {
            let read = read_text(".json", text, None).unwrap();
            assert_eq!(read.overrides.bull_version.as_deref(), Some("4.16.5"), "{text}");
            assert_eq!(read.overrides.version, None, "{text}");
            assert!(read.notes.join("\n").contains(&format!("Bull 4.16.5 (from `{key}`")), "{:?}", read.notes);
        }
        let yaml = read_text(".yaml", "bull: 4.16.5\nqueue:\n  lockDuration: 1\n", None).unwrap();
        assert_eq!(yaml.overrides.bull_version.as_deref(), Some("4.16.5"));
        // A range names the library; its lower bound stands for the version, said as a range.
        let range = read_text(".json", r#"{"dependencies": {"bull": "^4.16.0"}, "lockDuration": 1}"#, None).unwrap();
        assert_eq!(range.overrides.bull_version.as_deref(), Some("4.16.0"));
        assert!(range.notes.join("\n").contains("the range ^4.16.0"), "{:?}", range.notes);
        // Settings under `bull` and `bull: true` name no version.
        let settings = read_text(".json", r#"{"bull": {"lockDuration": 1}, "other": {"bull": true}}"#, None).unwrap();
        assert_eq!(settings.overrides.bull_version, None);
        // Both libraries named: the error says which lines.
        let both =
            error(".json", r#"{"dependencies": {"bull": "4.16.5", "bullmq": "5.81.5"}, "lockDuration": 1}"#, None);
        assert!(both.contains("both Bull 4.16.5") && both.contains("BullMQ 5.81.5"), "{both}");
        let two =
            error(".json", r#"{"dependencies": {"bull": "4.16.5"}, "bullVersion": "3.22.0", "lockDuration": 1}"#, None);
        assert!(two.contains("two Bull versions"), "{two}");
    }

    #[test]
    fn a_dependency_range_gives_only_a_lower_bound_and_says_so() {
        let text = "dependencies:\n  bullmq: ^5.58.0\nworker:\n  lockDuration: 1\n";
        let read = read_text(".yaml", text, None).unwrap();
        assert_eq!(read.overrides.version, None);
        assert_eq!(read.overrides.version_at_least.as_deref(), Some("5.58.0"));
        let notes = read.notes.join("\n");
        assert!(
            notes.contains("range ^5.58.0: the installed version is at least 5.58.0, not known exactly"),
            "{notes}"
        );
        // An exact version elsewhere wins over the range, and the range is said not taken.
        let both = "dependencies:\n  bullmq: ~6.7.0\nbullmqVersion: 6.7.2\nworker:\n  lockDuration: 1\n";
        let read = read_text(".yaml", both, None).unwrap();
        assert_eq!(read.overrides.version.as_deref(), Some("6.7.2"));
        assert_eq!(read.overrides.version_at_least, None);
        assert!(
            read.notes.join("\n").contains("`dependencies.bullmq` ~6.7.0 (line 2) is a range, not taken"),
            "{:?}",
            read.notes
        );
        // Nothing about the version: said, not guessed.
        let latest = read_text(".json", r#"{"deps": {"bullmq": "latest"}, "w": {"lockDuration": 1}}"#, None).unwrap();
        assert_eq!((latest.overrides.version, latest.overrides.version_at_least), (None, None));
        assert!(latest.notes.join("\n").contains("`deps.bullmq` \"latest\" (line 1) not taken as BullMQ's version"));
    }

    #[test]
    fn package_specs_read_as_npm_reads_them() {
        let exact = |v: &str| Spec::Exact(v.into());
        let range = |v: &str| Spec::Range(v.into());
        assert_eq!(package_spec("5.81.5"), exact("5.81.5"));
        assert_eq!(package_spec(" v5.81.5 "), exact("5.81.5"));
        assert_eq!(package_spec("npm:bullmq@6.7.0"), exact("6.7.0"));
        assert_eq!(package_spec("^5.58.0"), range("5.58.0"));
        assert_eq!(package_spec("~6.7.0"), range("6.7.0"));
        assert_eq!(package_spec("npm:bullmq@^6.7.0"), range("6.7.0"));
        assert_eq!(package_spec(">=5.58.0 <6"), range("5.58.0"));
        assert_eq!(package_spec("5.58"), range("5.58.0"));
        assert_eq!(package_spec("5.x"), range("5.0.0"));
        assert_eq!(package_spec("5.0.0 - 5.9.0"), range("5.0.0"));
        for unknown in ["latest", "*", "<6", "^5.0.0 || ^6.0.0", "5.81.5-beta.1", "github:taskforcesh/bullmq", ""] {
            assert_eq!(package_spec(unknown), Spec::Unknown, "{unknown}");
        }
    }

    #[test]
    fn two_bullmq_versions_are_an_error_unless_the_selection_or_the_flag_settles_it() {
        let text = "a:\n  bullmqVersion: 5.58.0\n  worker: {lockDuration: 1}\nb:\n  bullmqVersion: 6.2.0\n  worker: {lockDuration: 1}\n";
        let error = error(".yaml", text, None);
        assert!(error.contains(":5: two BullMQ versions: 5.58.0 at /a (line 2) and 6.2.0 at /b (line 5)"), "{error}");
        assert_eq!(read_text(".yaml", text, Some("/b")).unwrap().overrides.version.as_deref(), Some("6.2.0"));
        let file = file(".yaml", text);
        let flagged = read_selected(file.path(), Selection { at: None, version_given: true }).unwrap();
        assert_eq!(flagged.overrides.version, None);
    }

    #[test]
    fn a_yaml_bomb_is_read_in_bounded_memory() {
        // A billion "lol"s if aliases were expanded; the parameters sit beside them.
        let mut text = String::from("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for level in 1..10 {
            let previous = format!("*a{}", level - 1);
            let _ = writeln!(text, "a{level}: &a{level} [{}]", [previous.as_str(); 10].join(", "));
        }
        text.push_str("worker:\n  lockDuration: 12000\n  extra: *a9\n");
        let started = std::time::Instant::now();
        let read = read_text(".yaml", &text, None).unwrap();
        assert_eq!(read.overrides.lock_duration, Some(12_000));
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
        // A merge that names itself is followed once.
        let read = read_text(".yaml", "w: &w\n  lockDuration: 1\n  <<: *w\n", None).unwrap();
        assert_eq!(read.overrides.lock_duration, Some(1));
    }

    #[test]
    fn deep_nesting_and_huge_files_are_errors() {
        let deep = format!("{}{}", "{\"a\": ".repeat(10_000), "}".repeat(10_000));
        let error = error(".json", &deep, None);
        assert!(error.contains(&format!("nested more than {} levels deep", document::MAX_DEPTH)), "{error}");
        let deep: String = (0..300).map(|depth| " ".repeat(depth) + "k:\n").collect();
        let error = super::tests::error(".yaml", &deep, None);
        assert!(error.contains("nested more than"), "{error}");
        let huge = format!("{{\"lockDuration\": 1, \"pad\": \"{}\"}}", "x".repeat(usize::try_from(MAX_BYTES).unwrap()));
        let error = super::tests::error(".json", &huge, None);
        assert!(error.contains("larger than 4 MiB"), "{error}");
    }
}
