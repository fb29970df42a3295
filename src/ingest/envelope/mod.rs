//! Log envelopes: what a platform wraps around each line an application wrote.
//!
//! A responder seldom has the server's own log file. The lines come out of a container runtime
//! (`kubectl logs --timestamps`, the kubelet's CRI files), journald or a log store's export (Loki,
//! CloudWatch Logs, Elasticsearch, Google Cloud Logging), each line in an envelope with a UTC time
//! and labels (pod, container, host, stream). Each envelope is one file here with one `Envelope`:
//! it turns the export into `Piece`s, one per record (the application's line with the envelope's
//! time and labels) or per line of the export that holds none (a header, a bracket, a blank).
//! It knows nothing of what the application's line says: `unwrap` hands the records' messages to
//! the log readers (text, pino, winston, NestJS) as the lines of a log, and puts the envelope's
//! file line, time and labels back on the events they make. `ENVELOPES` is the only list of them.

pub mod by_line;
pub mod cloudwatch_json;
pub mod elasticsearch_json;
pub mod gcloud_json;
pub mod journald_json;
pub mod journald_short;
pub mod json_records;
pub mod loki;
pub mod loki_default;
pub mod loki_jsonl;
pub mod loki_raw;

use std::io::BufRead;
use std::path::Path;

use crate::error::Result;
use crate::model::Moment;

pub mod cloudwatch_insights_csv;
pub mod cloudwatch_tail;
pub mod cri;
pub mod export_csv;
pub mod export_lines;
pub mod kibana_csv;
pub mod kubectl;
pub mod kubectl_prefix;
pub mod one_line;
mod reverse;
mod rows;
mod runtime;
pub mod unwrap;

/// One record of an export: a line the application wrote, as the platform kept it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The export's 1-based line the record starts on (the evidence cites it).
    pub line: u64,
    /// The export's lines the record spans: 1 for a line-per-record export, more for a record
    /// pretty-printed over several lines or a CRI line joined from partial (`P`) lines, 0 for one
    /// that shares its line with the piece before (JSON on one line): every line of the export is
    /// in exactly one piece's count.
    pub lines: u64,
    /// The envelope's time of the record, UTC (`None`: the envelope gives none, like `logcli
    /// --output=raw`). For a runtime, when the line was read from the process's output; for a log
    /// store, the time its agent gave the line.
    pub at: Option<Moment>,
    /// Who wrote the line, as the envelope labels it: `("pod", "web-1")`, `("container", "app")`,
    /// `("host", "ip-10-0-1-5")`, `("stream", "stdout")`, `("pid", "4242")`. In the order the
    /// envelope gives them; `Labels::instance` picks the ones that name a process.
    pub labels: Labels,
    /// The application's line as it wrote it, without its line end. A message of several lines
    /// (a stack trace kept in one record) is given whole: `unwrap` reads its first line and counts
    /// the rest.
    pub message: String,
}

/// The labels of a record (`Record::labels`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Labels(pub Vec<(&'static str, String)>);

/// Label names that say which process wrote a line, most specific last: a restart of one of them
/// is that one's process start, not every instance's. A PID is not one: a restart gives the
/// service a new PID by definition, so with it the restart line (new PID) could never be the
/// restart of the process that held the job (old PID). A systemd service is its host, unit and
/// identifier (journald), as a container is its pod and container name.
pub const INSTANCE_LABELS: &[&str] =
    &["host", "namespace", "pod", "container", "task", "unit", "identifier", "log_stream"];

impl Labels {
    pub fn push(&mut self, name: &'static str, value: impl Into<String>) {
        let value = value.into();
        if !value.is_empty() {
            self.0.push((name, value));
        }
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }

    /// The process that wrote the record, as `pod=web-1 container=app` (the labels of
    /// `INSTANCE_LABELS` it has, in that order), or `None` when it has none.
    pub fn instance(&self) -> Option<String> {
        let parts: Vec<String> =
            INSTANCE_LABELS.iter().filter_map(|name| self.get(name).map(|value| format!("{name}={value}"))).collect();
        (!parts.is_empty()).then(|| parts.join(" "))
    }
}

/// What an envelope makes of the export, in the export's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Record(Record),
    /// Lines of the export that hold no record (a CSV header, a JSON array's brackets, a blank
    /// line, a `-- Boot ... --` marker), with why.
    Ignored {
        line: u64,
        lines: u64,
        reason: &'static str,
    },
    /// Lines that should have been a record and cannot be read as one, with why (the envelope's
    /// expected shape). `lines` 0: it shares its line with the piece before, and is listed
    /// without that line being counted again.
    Rejected {
        line: u64,
        lines: u64,
        reason: String,
    },
}

impl Piece {
    /// The export's lines this piece spans.
    pub fn lines(&self) -> u64 {
        match self {
            Piece::Record(record) => record.lines,
            Piece::Ignored { lines, .. } | Piece::Rejected { lines, .. } => *lines,
        }
    }

    pub fn record(&self) -> Option<&Record> {
        match self {
            Piece::Record(record) => Some(record),
            _ => None,
        }
    }
}

/// What the envelopes' tests ask of the pieces they get.
#[cfg(test)]
pub(crate) mod testing {
    use super::{Piece, Record};

    pub fn records(pieces: &[Piece]) -> Vec<&Record> {
        pieces.iter().filter_map(Piece::record).collect()
    }

    /// The export's lines the pieces span: every line of a test's input, once.
    pub fn lines(pieces: &[Piece]) -> u64 {
        pieces.iter().map(Piece::lines).sum()
    }
}

/// What an envelope needs from the source besides its bytes.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// For errors (`Error::input(path, Some(line), ...)`).
    pub path: &'a Path,
    /// The longest line (record) held: a longer one is a `Piece::Rejected` with
    /// `lines::too_long`, passed over in bounded memory (`lines::Lines` does this for line-based
    /// exports).
    pub max_line_bytes: usize,
}

/// One envelope format.
pub trait Envelope: Sync {
    /// The name used in `format = "..."` (a log source's manifest entry).
    fn name(&self) -> &'static str;
    /// File name endings (after removing `.gz`) this envelope is chosen for by default: mostly
    /// none, since exports are named anything and the content tells.
    fn extensions(&self) -> &'static [&'static str] {
        &[]
    }
    /// Whether the start of the input (up to its first 64 KiB, as text) is this envelope. It must
    /// not take a plain log for an envelope: a log whose lines start with an RFC 3339 time in UTC
    /// is the text format unless the envelope's own marks are there.
    fn sniff(&self, head: &str) -> bool;
    /// A record of this envelope as the tool writes it, for messages that say what was expected.
    fn example(&self) -> &'static str;
    /// Whether each record is one line of the export, with nothing carried from line to line
    /// (kubectl's and docker's): then `unwrap` reads the export in blocks and each record's
    /// message where it lies (`one_line`), not through `pieces`. What it reads is what `pieces`
    /// gives, line for line.
    fn one_line(&self) -> Option<&dyn OneLine> {
        None
    }
    /// The export's records and other lines, in the export's order. An error that stops the
    /// reading (not UTF-8, a document that does not parse) names the file and line.
    fn pieces<'a>(
        &'a self,
        input: Box<dyn BufRead + Send>,
        context: Context<'a>,
    ) -> Box<dyn Iterator<Item = Result<Piece>> + Send + 'a>;
}

/// One line of an export whose records are each one line of it, as its envelope reads it: the
/// record's time and its message, borrowed from the line, or the piece the line is otherwise.
#[derive(Debug)]
pub enum Split<'l> {
    Record { at: Option<Moment>, message: &'l str },
    Other(Piece),
}

impl Split<'_> {
    /// The piece line `line` is, its message copied.
    pub fn into_piece(self, line: u64) -> Piece {
        match self {
            Split::Record { at, message } => {
                Piece::Record(Record { line, lines: 1, at, labels: Labels::default(), message: message.to_string() })
            }
            Split::Other(piece) => piece,
        }
    }
}

/// An envelope whose records are each one line of the export, with no labels and nothing carried
/// from one line to the next (`Envelope::one_line`).
pub trait OneLine: Sync {
    /// What line `line` of the export, `text` (without its line end), is.
    fn split<'l>(&self, line: u64, text: &'l str) -> Split<'l>;
}

/// Every envelope leasetrace reads, each as the log format it is read as. Adding one: a file
/// here and a line in this list.
#[rustfmt::skip]
pub static ENVELOPES: &[unwrap::Unwrap] = &[
    unwrap::Unwrap(&journald_json::JournaldJson),
    unwrap::Unwrap(&journald_short::SHORT_ISO),
    unwrap::Unwrap(&journald_short::SHORT_ISO_PRECISE),
    unwrap::Unwrap(&loki_jsonl::LokiJsonl),
    unwrap::Unwrap(&loki_default::LokiDefault),
    unwrap::Unwrap(&loki_raw::LokiRaw),
    unwrap::Unwrap(&cloudwatch_json::CloudwatchJson),
    unwrap::Unwrap(&elasticsearch_json::ElasticsearchJson),
    unwrap::Unwrap(&gcloud_json::GcloudJson),
    unwrap::Unwrap(&cloudwatch_tail::DETAILED),
    unwrap::Unwrap(&cloudwatch_tail::SHORT),
    unwrap::Unwrap(&cloudwatch_insights_csv::INSIGHTS_CSV),
    unwrap::Unwrap(&cloudwatch_insights_csv::INSIGHTS_CSV_UTC),
    unwrap::Unwrap(&kibana_csv::KIBANA_CSV),
    unwrap::Unwrap(&kibana_csv::KIBANA_CSV_UTC),
    unwrap::Unwrap(&kubectl::Kubectl),
    unwrap::Unwrap(&kubectl_prefix::KubectlPrefix),
    unwrap::Unwrap(&cri::Cri),
];
