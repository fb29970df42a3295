//! Job hashes as `redis-cli` prints them (`hgetall-text`): many `HGETALL` replies in one file, each
//! after the line that names its key, as a shell loop writes them
//! (`for k in $(redis-cli --scan --pattern 'bull:q:*'); do echo "$k"; redis-cli hgetall "$k"; done`)
//! or as an interactive session shows them (`127.0.0.1:6379> hgetall bull:q:42`).
//!
//! redis-cli 7.0 writes a reply in one of these forms, all read, each told by its first line:
//! - raw (its default when stdout is not a terminal, or `--raw`): one field or value per line,
//!   verbatim; an empty value is an empty line, an error is its message (`WRONGTYPE ...`) and an
//!   empty reply an empty line;
//! - numbered (a terminal, or `--no-raw`): ` 1) "name"`, ` 2) "review"`, values quoted and
//!   escaped; `(error) ...`, `(empty array)`;
//! - RESP3 numbered (`-3 --no-raw`): `1# "name" => "review"`, a field and its value per line;
//! - JSON (`--json`, RESP3 by default): `{"name":"review",...}` on one line, `[...]` with `-2`,
//!   errors as `error:"..."`;
//! - CSV (`--csv`): `"name","review",...` on one line, errors as `ERROR,"..."`.
//!
//! Raw output cannot show where a value with a line break ends: a field name with a space in it
//! (BullMQ's never have one) is taken for such a value and is an error that says to export with
//! `--no-raw`. A line that names a key starts a new record; in raw output it is told from a field
//! name by its `:` (BullMQ's field names have none).

use std::io::BufRead;

use crate::error::{Error, Result};
use crate::model::{Event, InputSummary};

use crate::ingest::bullmq::jobs::{
    Jobs, MAX_EVIDENCE_BYTES, MAX_RECORD_BYTES, Record, Reply, evidence, segments, size,
};
use crate::ingest::{EventFormat, SourceKind, SourceSpec};

pub struct HgetallText;

impl EventFormat for HgetallText {
    fn name(&self) -> &'static str {
        "hgetall-text"
    }

    fn kind(&self) -> SourceKind {
        SourceKind::BullmqJobs
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["txt"]
    }

    fn sniff(&self, first_line: &str) -> bool {
        let line = first_line.trim();
        hgetall_command(line).is_some()
            || is_prompt(line)
            || looks_like_key(line)
            || item(line, ')').is_some_and(|(n, _)| n == 1)
            || item(line, '#').is_some_and(|(n, _)| n == 1)
    }

    fn read(
        &self,
        spec: &SourceSpec,
        source: u16,
        input: Box<dyn BufRead + Send>,
        events: &mut Vec<Event>,
        summary: &mut InputSummary,
    ) -> Result<()> {
        read(spec, source, input, events, summary, MAX_RECORD_BYTES)
    }
}

/// Where a record is in its reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// Its key was named; no reply line yet.
    Awaiting,
    /// Raw lines, a field or value each.
    Raw,
    /// `n) "..."` lines; the next number expected.
    Numbered(usize),
    /// `n# "field" => "value"` lines; the next number expected.
    Map(usize),
    /// A one-line reply (JSON, CSV, an error, empty) was read: the record is complete.
    Done,
}

/// A record being read.
struct Pending {
    start: u64,
    end: u64,
    key: Option<String>,
    form: Form,
    /// Fields and values, alternating.
    items: Vec<String>,
    error: Option<String>,
    raw: String,
}

impl Pending {
    fn new(line: u64, key: Option<String>, form: Form) -> Self {
        Pending { start: line, end: line, key, form, items: Vec::new(), error: None, raw: String::new() }
    }

    fn add_line(&mut self, line: u64, text: &str) {
        self.end = line;
        // The evidence is cut anyway: a long reply is not copied whole.
        if self.raw.len() <= MAX_EVIDENCE_BYTES {
            if !self.raw.is_empty() {
                self.raw.push(' ');
            }
            self.raw.push_str(text.trim());
        }
    }
}

fn read(
    spec: &SourceSpec,
    source: u16,
    mut input: Box<dyn BufRead + Send>,
    events: &mut Vec<Event>,
    summary: &mut InputSummary,
    cap: usize,
) -> Result<()> {
    let mut jobs = Jobs::new(spec, source, events, summary);
    let mut current: Option<Pending> = None;
    let mut buffer = Vec::new();
    let mut number = 0;
    let bad = |line: u64, what: String| Error::input(&spec.path, Some(line), what);
    while next_line(spec, &mut input, &mut buffer, number + 1, cap)? {
        number += 1;
        let text = std::str::from_utf8(&buffer).map_err(|_| binary(spec, number))?;
        let text = text.strip_suffix('\n').unwrap_or(text);
        let text = text.strip_suffix('\r').unwrap_or(text);
        if text.contains('\0') {
            return Err(binary(spec, number));
        }
        let line = text.trim();
        let form = current.as_ref().map(|p| p.form);

        // A raw value, whatever it looks like (an empty line is an empty value).
        if let Some(pending) = current.as_mut().filter(|p| p.form == Form::Raw && p.items.len() % 2 == 1) {
            pending.items.push(text.to_string());
            pending.add_line(number, text);
            continue;
        }
        if line.is_empty() {
            if let Some(pending) = current.as_mut().filter(|p| p.form == Form::Awaiting) {
                // Raw output's empty reply (no such key; `--csv` writes one too).
                pending.form = Form::Done;
                pending.add_line(number, text);
            } else {
                finish(&mut jobs, current.take())?;
                jobs.gap(number, "blank");
            }
            continue;
        }
        if let Some(key) = hgetall_command(line) {
            finish(&mut jobs, current.take())?;
            let mut pending = Pending::new(number, Some(key), Form::Awaiting);
            pending.add_line(number, text);
            current = Some(pending);
            continue;
        }
        if is_prompt(line) {
            finish(&mut jobs, current.take())?;
            jobs.gap(number, "redis-cli prompt (a command other than HGETALL)");
            continue;
        }
        for (marker, numbered) in [(')', true), ('#', false)] {
            let Some((n, rest)) = item(line, marker) else { continue };
            let expected = match form {
                Some(Form::Numbered(next)) if numbered => next,
                Some(Form::Map(next)) if !numbered => next,
                _ => 1,
            };
            let awaiting = form == Some(Form::Awaiting);
            if n == 1 && (expected != 1 || !awaiting) {
                // A reply without a key line before it (or after another reply).
                finish(&mut jobs, current.take())?;
                current = Some(Pending::new(number, None, Form::Awaiting));
            } else if n != expected {
                return Err(bad(
                    number,
                    format!(
                        "item {n}{marker} out of sequence: expected {expected}{marker} (a HGETALL reply numbers its items from 1; is part of it missing?)"
                    ),
                ));
            }
            let pending = current.as_mut().expect("a record was started above");
            if numbered {
                let value = quoted_whole(rest)
                    .ok_or_else(|| bad(number, format!("expected a quoted string after '{n})', found '{rest}'")))?;
                pending.items.push(value);
                pending.form = Form::Numbered(n + 1);
            } else {
                let (field, value) = map_item(rest).ok_or_else(|| {
                    bad(number, format!("expected \"field\" => \"value\" after '{n}#', found '{rest}'"))
                })?;
                pending.items.push(field);
                pending.items.push(value);
                pending.form = Form::Map(n + 1);
            }
            pending.add_line(number, text);
            break;
        }
        if current.as_ref().is_some_and(|p| p.end == number) {
            continue;
        }
        // One-line replies: an error, an empty reply, JSON, CSV.
        if let Some(reply) = one_line_reply(line).transpose() {
            let reply = reply.map_err(|what| bad(number, what))?;
            if form != Some(Form::Awaiting) {
                finish(&mut jobs, current.take())?;
                current = Some(Pending::new(number, None, Form::Awaiting));
            }
            let pending = current.as_mut().expect("a record was started above");
            match reply {
                OneLine::Error(message) => pending.error = Some(message),
                OneLine::Items(items) => pending.items = items,
            }
            pending.form = Form::Done;
            pending.add_line(number, text);
            continue;
        }
        if form == Some(Form::Awaiting) && raw_error(line) {
            let pending = current.as_mut().expect("awaiting a reply");
            pending.error = Some(line.to_string());
            pending.form = Form::Done;
            pending.add_line(number, text);
            continue;
        }
        if looks_like_key(line) {
            finish(&mut jobs, current.take())?;
            let mut pending = Pending::new(number, Some(line.to_string()), Form::Awaiting);
            pending.add_line(number, text);
            current = Some(pending);
            continue;
        }
        // A raw field name.
        match current.as_mut() {
            Some(pending) if matches!(pending.form, Form::Awaiting | Form::Raw) => {
                if line.contains(char::is_whitespace) {
                    return Err(bad(
                        number,
                        format!(
                            "'{line}' is not a field name (BullMQ's have no spaces): in redis-cli's raw output a value with a line break looks like this; export with --no-raw or --json instead"
                        ),
                    ));
                }
                pending.form = Form::Raw;
                pending.items.push(text.to_string());
                pending.add_line(number, text);
            }
            _ => {
                return Err(bad(
                    number,
                    format!(
                        "'{line}' is neither a key nor part of a HGETALL reply: expected redis-cli HGETALL output, each reply after the line that names its key"
                    ),
                ));
            }
        }
    }
    finish(&mut jobs, current.take())?;
    jobs.finish(number, "blank")
}

/// The record read, checked and handed on.
fn finish(jobs: &mut Jobs, pending: Option<Pending>) -> Result<()> {
    let Some(pending) = pending else { return Ok(()) };
    let reply = match (pending.form, pending.error) {
        (_, Some(message)) => Reply::NotAHash(message),
        (Form::Awaiting, None) => Reply::Missing,
        (_, None) => {
            if pending.items.len() % 2 == 1 {
                let whose = pending.key.as_deref().map_or_else(String::new, |key| format!(" of '{key}'"));
                return Err(Error::input(
                    &jobs.spec.path,
                    Some(pending.start),
                    format!(
                        "the HGETALL reply{whose} (lines {}-{}) has an odd number of lines of fields and values ({}): they come in pairs (in redis-cli's raw output a value with a line break looks like this; export with --no-raw or --json instead)",
                        pending.start,
                        pending.end,
                        pending.items.len()
                    ),
                ));
            }
            let mut items = pending.items.into_iter();
            let mut pairs = Vec::new();
            while let (Some(field), Some(value)) = (items.next(), items.next()) {
                pairs.push((field, value));
            }
            Reply::Hash(pairs)
        }
    };
    let record = Record {
        start: pending.start,
        end: pending.end,
        key: pending.key,
        id: None,
        state: None,
        qualified: None,
        reply,
        raw: evidence(pending.raw),
    };
    jobs.take(&record, "blank")
}

/// Reads the next line into `buffer` (its line end kept); `false` at the end of the input.
fn next_line(
    spec: &SourceSpec,
    input: &mut Box<dyn BufRead + Send>,
    buffer: &mut Vec<u8>,
    line: u64,
    cap: usize,
) -> Result<bool> {
    buffer.clear();
    let limit = u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1);
    let read = std::io::Read::take(&mut **input, limit)
        .read_until(b'\n', buffer)
        .map_err(|source| Error::Io { path: spec.path.clone(), source })?;
    if buffer.len() > cap {
        return Err(Error::input(
            &spec.path,
            Some(line),
            format!(
                "this line is longer than {}: leasetrace reads redis-cli lines up to that size (drop large fields such as data and returnvalue from the export)",
                size(cap)
            ),
        ));
    }
    Ok(read > 0)
}

fn binary(spec: &SourceSpec, line: u64) -> Error {
    Error::input(
        &spec.path,
        Some(line),
        "binary data (not UTF-8 text): expected redis-cli HGETALL output; is this the right file?",
    )
}

/// The key of a line that runs `HGETALL <key>`: an interactive prompt (`127.0.0.1:6379> hgetall
/// bull:q:42`), or a shell command echoed (`+ redis-cli hgetall bull:q:42`).
fn hgetall_command(line: &str) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let [.., command, key] = words.as_slice() else { return None };
    if !command.eq_ignore_ascii_case("hgetall") {
        return None;
    }
    let key = match key.as_bytes().first() {
        Some(b'"') => quoted_whole(key)?,
        Some(b'\'') => key.strip_prefix('\'')?.strip_suffix('\'')?.to_string(),
        _ => (*key).to_string(),
    };
    Some(key)
}

/// An interactive redis-cli prompt: `127.0.0.1:6379>`, `127.0.0.1:6379[2]>`, `not connected>`.
fn is_prompt(line: &str) -> bool {
    let first = line.split_whitespace().next().unwrap_or_default();
    (first.ends_with('>') && first.contains(':')) || line.starts_with("not connected>")
}

/// A line that is a whole Redis key of the shape `<prefix>:<queue>:<rest>`, as `echo "$k"` prints.
fn looks_like_key(line: &str) -> bool {
    !line.is_empty() && !line.contains(char::is_whitespace) && !line.starts_with('"') && segments(line).len() >= 3
}

/// A numbered item, `12) rest` or `12# rest` (`marker`), with leading spaces (redis-cli pads the
/// numbers of a reply to one width).
fn item(line: &str, marker: char) -> Option<(usize, &str)> {
    let line = line.trim_start();
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    let rest = line[digits..].strip_prefix(marker)?.strip_prefix(' ')?;
    Some((line[..digits].parse().ok()?, rest))
}

/// redis-cli's quoting (`sdscatrepr`): the string a quoted token at the start of `text` stands for,
/// and the text after it. Escapes: `\\ \" \n \r \t \a \b \xHH`; bytes are decoded as UTF-8.
fn quoted(text: &str) -> Option<(String, &str)> {
    let bytes = text.as_bytes();
    if bytes.first() != Some(&b'"') {
        return None;
    }
    let mut out = Vec::new();
    let mut at = 1;
    while at < bytes.len() {
        match bytes[at] {
            b'"' => return Some((String::from_utf8_lossy(&out).into_owned(), &text[at + 1..])),
            b'\\' => {
                let escaped = *bytes.get(at + 1)?;
                at += 2;
                match escaped {
                    b'n' => out.push(b'\n'),
                    b'r' => out.push(b'\r'),
                    b't' => out.push(b'\t'),
                    b'a' => out.push(0x07),
                    b'b' => out.push(0x08),
                    b'x' => {
                        let hex = text.get(at..at + 2)?;
                        out.push(u8::from_str_radix(hex, 16).ok()?);
                        at += 2;
                    }
                    other => out.push(other),
                }
            }
            byte => {
                out.push(byte);
                at += 1;
            }
        }
    }
    None
}

/// A quoted token that is the whole text.
fn quoted_whole(text: &str) -> Option<String> {
    quoted(text).and_then(|(value, rest)| rest.is_empty().then_some(value))
}

/// `"field" => "value"`.
fn map_item(text: &str) -> Option<(String, String)> {
    let (field, rest) = quoted(text)?;
    Some((field, quoted_whole(rest.strip_prefix(" => ")?)?))
}

enum OneLine {
    Error(String),
    Items(Vec<String>),
}

/// A reply on one line, when `line` is one (`Err`: it is one, but malformed).
fn one_line_reply(line: &str) -> std::result::Result<Option<OneLine>, String> {
    if let Some(message) = line.strip_prefix("(error) ") {
        return Ok(Some(OneLine::Error(message.to_string())));
    }
    if matches!(line, "(empty array)" | "(empty hash)" | "(empty list or set)" | "(nil)") {
        return Ok(Some(OneLine::Items(Vec::new())));
    }
    // --json
    if let Some(message) = line.strip_prefix("error:") {
        let message =
            serde_json::from_str::<String>(message).map_err(|e| format!("not a redis-cli --json error: {e}"))?;
        return Ok(Some(OneLine::Error(message)));
    }
    let json = line.starts_with('[')
        || line.strip_prefix('{').is_some_and(|rest| rest.starts_with('"') || rest.starts_with('}'));
    if json {
        // redis-cli answers HGETALL with strings only; anything else is a JSON export of another
        // shape, which `hgetall-json` reads.
        let other = |what: &str| {
            format!(
                "{what}, not a redis-cli --json reply to HGETALL: for a JSON export, declare format = \"hgetall-json\" for this source"
            )
        };
        let value: serde_json::Value =
            serde_json::from_str(line).map_err(|e| other(&format!("not JSON on one line ({e})")))?;
        let string = |v: &serde_json::Value| v.as_str().map(str::to_string);
        let items: Option<Vec<String>> = match &value {
            serde_json::Value::Object(map) => map
                .iter()
                .map(|(k, v)| Some([k.clone(), string(v)?]))
                .collect::<Option<Vec<_>>>()
                .map(|pairs| pairs.concat()),
            serde_json::Value::Array(list) => list.iter().map(string).collect(),
            _ => None,
        };
        let items = items.ok_or_else(|| other("JSON whose values are not all strings"))?;
        if items.len() % 2 == 1 {
            return Err(format!(
                "the redis-cli --json reply lists {} items: HGETALL lists fields and values in pairs",
                items.len()
            ));
        }
        return Ok(Some(OneLine::Items(items)));
    }
    // --csv
    if let Some(message) = line.strip_prefix("ERROR,") {
        return Ok(Some(OneLine::Error(quoted_whole(message).unwrap_or_else(|| message.to_string()))));
    }
    if line.starts_with('"') {
        let mut items = Vec::new();
        let mut rest = line;
        loop {
            let (value, after) = quoted(rest).ok_or_else(|| format!("not a redis-cli --csv reply: '{line}'"))?;
            items.push(value);
            if after.is_empty() {
                break;
            }
            rest = after.strip_prefix(',').ok_or_else(|| format!("not a redis-cli --csv reply: '{line}'"))?;
        }
        if items.len() % 2 == 1 {
            return Err(format!(
                "the redis-cli --csv reply lists {} items: HGETALL lists fields and values in pairs",
                items.len()
            ));
        }
        return Ok(Some(OneLine::Items(items)));
    }
    Ok(None)
}

/// An error as raw output prints it: its code in capitals, then a message (`WRONGTYPE Operation
/// against a key holding the wrong kind of value`, `MOVED 3999 10.0.0.3:6379`).
fn raw_error(line: &str) -> bool {
    let (code, message) = line.split_once(' ').unwrap_or((line, ""));
    code.len() >= 2 && code.bytes().all(|b| b.is_ascii_uppercase()) && !message.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EventKind;
    use std::path::PathBuf;

    fn read_capped(text: &str, cap: usize) -> Result<(Vec<Event>, InputSummary)> {
        let spec = SourceSpec::new(SourceKind::BullmqJobs, PathBuf::from("jobs.txt"), None, String::new());
        let mut events = Vec::new();
        let mut summary = InputSummary::new("jobs.txt", "bullmq-jobs", "hgetall-text", None);
        read(&spec, 0, Box::new(std::io::Cursor::new(text.to_string())), &mut events, &mut summary, cap)?;
        assert_eq!(summary.lines, summary.used + summary.ignored + summary.rejected, "every line once");
        assert_eq!(summary.ignored_by_reason.values().sum::<u64>(), summary.ignored);
        assert_eq!(summary.lines, text.lines().count() as u64);
        Ok((events, summary))
    }

    fn read_text(text: &str) -> Result<(Vec<Event>, InputSummary)> {
        read_capped(text, MAX_RECORD_BYTES)
    }

    fn shown(events: &[Event]) -> Vec<(i64, EventKind, String, String, String)> {
        events
            .iter()
            .map(|e| {
                (
                    e.at().timestamp_millis(),
                    e.kind,
                    e.job_id.as_deref().unwrap_or_default().to_string(),
                    e.queue.as_deref().unwrap_or_default().to_string(),
                    e.detail_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    }

    /// Job 2 completed, job 3 failed, the meta hash, a lock; in each form below.
    const RAW: &str = "bull:q:2\nname\nreview\ntimestamp\n1791333180000\nprocessedOn\n1791333180010\nfinishedOn\n1791333180020\nreturnvalue\n\nbull:q:2:lock\nWRONGTYPE Operation against a key holding the wrong kind of value\n\nbull:q:3\nname\nreview\ntimestamp\n1791333181000\nfinishedOn\n1791333181020\nfailedReason\nreview API answered 502\nbull:q:meta\nversion\nbullmq:5.81.5\nbull:q:99\n\n";

    #[test]
    fn raw_output_is_read_by_pairs_after_each_key() {
        let (events, summary) = read_text(RAW).unwrap();
        assert_eq!(
            events.iter().map(|e| (e.job_id.as_deref().unwrap(), e.kind)).collect::<Vec<_>>(),
            [
                ("2", EventKind::JobAdded),
                ("2", EventKind::JobActive),
                // `returnvalue` is the empty line: no value, so not a completed job's return value;
                // without a failure reason the job completed all the same.
                ("2", EventKind::JobCompleted),
                ("3", EventKind::JobAdded),
                ("3", EventKind::JobFailed),
            ]
        );
        assert_eq!(events[4].detail_str(), Some("review API answered 502"));
        assert_eq!(events[0].origin().line, 1);
        assert_eq!(events[3].origin().line, 15);
        assert_eq!((summary.used, summary.ignored, summary.rejected), (20, 8, 0));
        assert_eq!(summary.ignored_by_reason["BullMQ's ':lock' key, not a job"], 2);
        assert_eq!(summary.ignored_by_reason["BullMQ's ':meta' key, not a job"], 3);
        assert_eq!(summary.ignored_by_reason["empty reply: no such key (removed before HGETALL?)"], 2);
        assert_eq!(summary.ignored_by_reason["blank"], 1, "the line after the raw error");
        assert!(summary.texts.kept(1).unwrap().starts_with("bull:q:2 name review timestamp 1791333180000"));
    }

    /// Legacy Bull 4.16.5's hashes, cut from the e2e's dump (tests/e2e/bull-stalled.mjs): a job
    /// completed by its rerun whose late first attempt's refused finish Bull saved into the hash, a
    /// job failed by the stalled check over the limit, and Bull's own keys; the last hash, a job
    /// retried by `job.retry()` (`retriedOn`), is written by hand: the e2e retries none.
    const BULL: &str = "bull:digest:id\nWRONGTYPE Operation against a key holding the wrong kind of value\n\nbull:digest:pr-303\nreturnvalue\n{\"reviewed\":\"PR-303\"}\nstacktrace\n[\"Error: Missing lock for job pr-303 finished\\n    at Object.finishedErrors (node_modules/bull/lib/scripts.js:289:16)\"]\ndata\n{\"pr\":\"PR-303\"}\npriority\n0\nstalledCounter\n1\nprocessedOn\n1796549345345\nfailedReason\nMissing lock for job pr-303 finished\nfinishedOn\n1796549346549\nopts\n{\"jobId\":\"pr-303\",\"attempts\":1,\"delay\":0,\"timestamp\":1796549342083}\nname\n__default__\nattemptsMade\n1\ndelay\n0\ntimestamp\n1796549342083\nbull:notify:meta-paused\nWRONGTYPE Operation against a key holding the wrong kind of value\n\nbull:notify:pr-202\nstalledCounter\n2\nname\n__default__\nfinishedOn\n1796549347904\ntimestamp\n1796549342100\nprocessedOn\n1796549345159\nfailedReason\njob stalled more than allowable limit\nbull:review:pr-101\nname\n__default__\ntimestamp\n1796549342100\nretriedOn\n1796549349000\n";

    #[test]
    fn bulls_hashes_are_read_with_bulls_field_names_and_its_refused_finish_said() {
        let (events, summary) = read_text(BULL).unwrap();
        let kinds: Vec<(&str, EventKind)> = events.iter().map(|e| (e.job_id.as_deref().unwrap(), e.kind)).collect();
        assert_eq!(
            kinds,
            [
                ("pr-303", EventKind::JobAdded),
                ("pr-303", EventKind::JobActive),
                ("pr-303", EventKind::JobCompleted),
                ("pr-202", EventKind::JobAdded),
                ("pr-202", EventKind::JobActive),
                ("pr-202", EventKind::JobFailed),
                ("pr-101", EventKind::JobAdded),
                ("pr-101", EventKind::JobWaiting),
            ]
        );
        assert_eq!(events[1].detail_str(), Some("last activation (processedOn); atm=1 stc=1"));
        // The completion keeps the refused late finish that saveStacktrace wrote, without a time.
        let completed = events[2].detail_str().unwrap();
        assert!(
            completed
                .starts_with("failedReason \"Missing lock for job pr-303 finished\": a late worker's refused finish"),
            "{completed}"
        );
        assert_eq!(events[2].at().timestamp_millis(), 1_796_549_346_549);
        assert_eq!(events[5].detail_str(), Some("job stalled more than allowable limit"));
        assert_eq!(events[4].detail_str(), Some("last activation (processedOn); stc=2"));
        assert_eq!(
            (events[7].at().timestamp_millis(), events[7].detail_str()),
            (1_796_549_349_000, Some("retried (retriedOn)"))
        );
        assert_eq!(summary.ignored_by_reason["Bull's ':meta-paused' key, not a job"], 2);
        assert_eq!(summary.ignored_by_reason["BullMQ's ':id' key, not a job"], 2);
        assert_eq!(summary.rejected, 0);
        assert_eq!(summary.lines, summary.used + summary.ignored);
    }

    /// The same dump in the other forms redis-cli writes.
    fn forms() -> Vec<(&'static str, String)> {
        let numbered = "bull:q:2\n1) \"name\"\n2) \"review\"\n3) \"timestamp\"\n4) \"1791333180000\"\n5) \"processedOn\"\n6) \"1791333180010\"\n7) \"finishedOn\"\n8) \"1791333180020\"\n9) \"returnvalue\"\n10) \"\"\nbull:q:2:lock\n(error) WRONGTYPE Operation against a key holding the wrong kind of value\nbull:q:3\n1) \"name\"\n2) \"review\"\n3) \"timestamp\"\n4) \"1791333181000\"\n5) \"finishedOn\"\n6) \"1791333181020\"\n7) \"failedReason\"\n8) \"review API answered 502\"\nbull:q:meta\n1) \"version\"\n2) \"bullmq:5.81.5\"\nbull:q:99\n(empty array)\n";
        let session = numbered
            .lines()
            .map(|l| if l.starts_with("bull:") { format!("127.0.0.1:6379> hgetall {l}\r") } else { format!("{l}\r") })
            .chain(["127.0.0.1:6379> quit\r".to_string()])
            .collect::<Vec<_>>()
            .join("\n");
        let resp3 = "bull:q:2\n1# \"name\" => \"review\"\n2# \"timestamp\" => \"1791333180000\"\n3# \"processedOn\" => \"1791333180010\"\n4# \"finishedOn\" => \"1791333180020\"\n5# \"returnvalue\" => \"\"\nbull:q:2:lock\n(error) WRONGTYPE Operation against a key holding the wrong kind of value\nbull:q:3\n1# \"name\" => \"review\"\n2# \"timestamp\" => \"1791333181000\"\n3# \"finishedOn\" => \"1791333181020\"\n4# \"failedReason\" => \"review API answered 502\"\nbull:q:meta\n1# \"version\" => \"bullmq:5.81.5\"\nbull:q:99\n(empty hash)\n";
        let json = "bull:q:2\n{\"name\":\"review\",\"timestamp\":\"1791333180000\",\"processedOn\":\"1791333180010\",\"finishedOn\":\"1791333180020\",\"returnvalue\":\"\"}\nbull:q:2:lock\nerror:\"WRONGTYPE Operation against a key holding the wrong kind of value\"\nbull:q:3\n[\"name\",\"review\",\"timestamp\",\"1791333181000\",\"finishedOn\",\"1791333181020\",\"failedReason\",\"review API answered 502\"]\nbull:q:meta\n{\"version\":\"bullmq:5.81.5\"}\nbull:q:99\n{}\n";
        let csv = "bull:q:2\n\"name\",\"review\",\"timestamp\",\"1791333180000\",\"processedOn\",\"1791333180010\",\"finishedOn\",\"1791333180020\",\"returnvalue\",\"\"\nbull:q:2:lock\nERROR,\"WRONGTYPE Operation against a key holding the wrong kind of value\"\nbull:q:3\n\"name\",\"review\",\"timestamp\",\"1791333181000\",\"finishedOn\",\"1791333181020\",\"failedReason\",\"review API answered 502\"\nbull:q:meta\n\"version\",\"bullmq:5.81.5\"\nbull:q:99\n\n";
        vec![
            ("numbered", numbered.to_string()),
            ("session", session),
            ("resp3", resp3.to_string()),
            ("json", json.to_string()),
            ("csv", csv.to_string()),
        ]
    }

    #[test]
    fn every_form_redis_cli_writes_gives_the_events_of_the_raw_form() {
        let (expected, _) = read_text(RAW).unwrap();
        for (name, text) in forms() {
            let (events, summary) = read_text(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(shown(&events), shown(&expected), "{name}");
            assert_eq!(summary.rejected, 0, "{name}");
            assert!(summary.ignored_by_reason.contains_key("BullMQ's ':lock' key, not a job"), "{name}");
            assert!(HgetallText.sniff(text.lines().next().unwrap()), "{name}");
        }
    }

    #[test]
    fn quoting_is_undone_as_redis_cli_writes_it() {
        assert_eq!(quoted_whole(r#""{\"pr\":\"PR-4410\"}""#).as_deref(), Some(r#"{"pr":"PR-4410"}"#));
        assert_eq!(quoted_whole(r#""a\\b\nc\x41\xc3\xa9""#).as_deref(), Some("a\\b\ncAé"));
        assert_eq!(quoted_whole(r#""open"#), None);
        assert_eq!(quoted_whole(r#""a" b"#), None);
        assert_eq!(map_item(r#""name" => "a => b""#), Some(("name".into(), "a => b".into())));
    }

    #[test]
    fn an_odd_number_of_lines_is_an_error_naming_the_reply() {
        // A dump cut off after a field name.
        let error = read_text("bull:q:1\nname\nn\nbull:q:2\nname\nreview\ntimestamp\n").unwrap_err().to_string();
        assert!(
            error.starts_with("jobs.txt:4: the HGETALL reply of 'bull:q:2' (lines 4-7) has an odd number"),
            "{error}"
        );
        let error = read_text("bull:q:2\n1) \"name\"\n2) \"review\"\n3) \"timestamp\"\n").unwrap_err().to_string();
        assert!(error.starts_with("jobs.txt:1: the HGETALL reply of 'bull:q:2' (lines 1-4)"), "{error}");
    }

    #[test]
    fn a_numbered_line_out_of_sequence_is_an_error() {
        let error = read_text("bull:q:2\n1) \"name\"\n2) \"review\"\n4) \"timestamp\"\n").unwrap_err().to_string();
        assert!(error.starts_with("jobs.txt:4: item 4) out of sequence: expected 3)"), "{error}");
        let error = read_text("bull:q:2\n2) \"review\"\n").unwrap_err().to_string();
        assert!(error.starts_with("jobs.txt:2: item 2) out of sequence: expected 1)"), "{error}");
        let error = read_text("bull:q:2\n1# \"name\" => \"n\"\n3# \"a\" => \"b\"\n").unwrap_err().to_string();
        assert!(error.starts_with("jobs.txt:3: item 3# out of sequence: expected 2#"), "{error}");
    }

    #[test]
    fn a_reply_without_its_key_is_rejected_and_a_key_without_an_id_too() {
        let text = "1) \"name\"\n2) \"n\"\n3) \"timestamp\"\n4) \"1791333180000\"\n1) \"name\"\n2) \"n\"\n3) \"timestamp\"\n4) \"1791333180001\"\nbull:q:\nname\nn\ntimestamp\n1791333180002\n";
        let (events, summary) = read_text(text).unwrap();
        assert!(events.is_empty());
        assert_eq!((summary.used, summary.ignored, summary.rejected), (0, 0, 13));
        let reasons: Vec<(u64, &str)> = summary.rejections.iter().map(|r| (r.line, r.reason.as_str())).collect();
        assert_eq!(reasons.len(), 3);
        assert_eq!(reasons[0].0, 1);
        assert!(reasons[0].1.contains("without its key or id"), "{reasons:?}");
        assert_eq!(reasons[1].0, 5);
        assert_eq!(reasons[2], (9, "key 'bull:q:' has no job id: expected <prefix>:<queue>:<job id>"));
    }

    #[test]
    fn a_value_with_a_line_break_in_raw_output_is_caught() {
        let text = "bull:q:2\nname\nn\nfailedReason\nfirst line\nsecond line\ntimestamp\n1791333180000\n";
        let error = read_text(text).unwrap_err().to_string();
        assert!(error.starts_with("jobs.txt:6: 'second line' is not a field name"), "{error}");
    }

    #[test]
    fn errors_other_than_wrongtype_do_not_pass_for_not_a_job() {
        let (events, summary) =
            read_text("bull:q:2\nMOVED 3999 10.0.0.3:6379\n\nbull:q:3\n(error) NOAUTH Authentication required.\n")
                .unwrap();
        assert!(events.is_empty());
        assert_eq!(summary.rejected, 4);
        assert!(summary.rejections[0].reason.contains("MOVED 3999"), "{:?}", summary.rejections);
        assert_eq!(summary.ignored_by_reason["blank"], 1);
    }

    #[test]
    fn lines_that_are_no_redis_cli_output_are_an_error_with_their_line() {
        let error = read_text("bull:q:2\n1) \"name\"\n2) \"n\"\n== next ==\n").unwrap_err().to_string();
        assert!(error.starts_with("jobs.txt:4: '== next ==' is neither a key nor part of a HGETALL reply"), "{error}");
        let error = read_text("bull:q:2\n{\"key\":\"bull:q:2\",\"fields\":{}}\n").unwrap_err().to_string();
        assert!(
            error.starts_with("jobs.txt:2: JSON whose values are not all strings, not a redis-cli --json reply"),
            "{error}"
        );
        let error = read_text("[{\"key\":\"bull:q:2\",\"fields\":{}},{\"key\":\"bull:q:3\",\"fields\":{}}]\n")
            .unwrap_err()
            .to_string();
        assert!(error.contains("declare format = \"hgetall-json\""), "{error}");
        let error = read_text("[\n").unwrap_err().to_string();
        assert!(error.starts_with("jobs.txt:1: not JSON on one line"), "{error}");
        let error =
            read_capped("bull:q:2\nname\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n", 16).unwrap_err().to_string();
        assert!(error.starts_with("jobs.txt:3: this line is longer than 16 bytes"), "{error}");
    }

    #[test]
    fn a_list_of_keys_alone_gives_no_job_and_says_so() {
        let (events, summary) = read_text("bull:q:1\nbull:q:2\n").unwrap();
        assert!(events.is_empty());
        assert_eq!(summary.ignored_by_reason["a key without a HGETALL reply after it"], 2);
        assert!(summary.notes[0].starts_with("no job hash in this file"), "{:?}", summary.notes);
    }
    #[test]
    fn a_failure_the_hash_gives_no_time_is_said_naming_the_job() {
        // Bull 3.23.3's stall limit, as tests/e2e/bull-stalled.mjs recorded it (no finishedOn).
        let text = "bull:notify:pr-202\nstalledCounter\n2\ntimestamp\n1796562971233\nprocessedOn\n1796562974245\nname\n__default__\nfailedReason\njob stalled more than allowable limit\n";
        let (events, summary) = read_text(text).unwrap();
        assert_eq!(events.iter().filter(|e| e.kind == EventKind::JobFailed).count(), 0);
        assert_eq!(summary.notes.len(), 1, "{:?}", summary.notes);
        assert!(
            summary.notes[0].starts_with("1 job hash(es) hold a failedReason but no finishedOn")
                && summary.notes[0].contains("job pr-202: \"job stalled more than allowable limit\"")
                && summary.notes[0].contains("Bull 3"),
            "{:?}",
            summary.notes
        );
    }
}
