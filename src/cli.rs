//! Command-line types. Nothing outside this file and `config.rs` sees clap's structures.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::model::Severity;

#[derive(Debug, Parser)]
#[command(
    name = "leasetrace",
    version,
    about = "Incident forensics for job queues: merge a run ledger, server logs and BullMQ lock settings into one timeline and find stalled reruns, overlapping sweeps and duplicate work.",
    after_help = "Exit codes: 0 clean, 1 findings at or above --fail-on (check only), 2 usage or input error.\nDocs: docs/inputs.md, docs/findings.md, docs/json.md"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// No progress bars on stderr (they are drawn only when stderr is a terminal anyway).
    #[arg(short, long, global = true)]
    pub quiet: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the merged timeline: every event, its time in the display zone, kind, ids and source line.
    Timeline(CaseArgs),
    /// Print the findings with their evidence and arithmetic (exit 0 unless the input is bad).
    Analyze(CaseArgs),
    /// Like analyze, for CI: exit 1 when a finding is at or above --fail-on.
    Check {
        #[command(flatten)]
        case: CaseArgs,
        /// Lowest severity that fails the check.
        #[arg(long, value_enum, default_value_t = Severity::Warning)]
        fail_on: Severity,
    },
    /// BullMQ lock arithmetic for one job: renewals, expiry, stalled-check window, and a what-if
    /// table over other lockDuration values (give a CASE to weigh it against observed runs).
    Lock {
        #[command(flatten)]
        case: CaseArgs,
        /// When the job became active: RFC 3339 (2026-10-07T00:33:00Z), or local time with --tz.
        #[arg(long, value_name = "TIME")]
        activated_at: String,
        /// When its process died (e.g. the restart), same forms.
        #[arg(long, value_name = "TIME")]
        died_at: Option<String>,
        /// lockDuration values (ms) for the what-if table, comma-separated. Default: L/4, L/2, L, 2L.
        #[arg(long, value_name = "MS,MS,...", value_delimiter = ',', value_parser = clap::value_parser!(u64).range(..=crate::model::params::MAX_PARAM_VALUE))]
        what_if: Vec<u64>,
    },
    /// Look at the files of a case folder and write a leasetrace.toml for you to review.
    Init {
        /// The folder holding the exports.
        case: PathBuf,
        /// Replace an existing leasetrace.toml.
        #[arg(long)]
        force: bool,
    },
    /// Print the documentation of a finding (or list them all).
    Explain {
        /// A finding code such as stalled-rerun; omit to list every code.
        code: Option<String>,
    },
}

#[derive(Debug, Args, Clone, Default)]
pub struct CaseArgs {
    /// Case folder holding leasetrace.toml, or the manifest file itself.
    pub case: Option<PathBuf>,

    /// A run ledger (CSV, TSV or JSON Lines; '-' for stdin). Repeatable.
    #[arg(long, value_name = "PATH")]
    pub ledger: Vec<PathBuf>,

    /// A server log (lines starting with a timestamp; '-' for stdin). Repeatable.
    #[arg(long, value_name = "PATH")]
    pub log: Vec<PathBuf>,

    /// BullMQ's events stream exported with XRANGE (JSON, JSON Lines or redis-cli text). Repeatable.
    #[arg(long, value_name = "PATH")]
    pub events: Vec<PathBuf>,

    /// BullMQ job hashes exported with HGETALL: JSON (records, a keyed object, BullMQ's job JSON) or redis-cli text. Repeatable.
    #[arg(long, value_name = "PATH")]
    pub jobs: Vec<PathBuf>,

    /// Queue name for --events (the stream bull:<queue>:events does not say it); for --jobs, where a key's job id begins.
    #[arg(long, value_name = "NAME")]
    pub queue: Option<String>,

    /// BullMQ lock parameters: worker options as JSON or YAML, flat or nested in a larger config
    /// (lockDuration, lockRenewTime, stalledInterval, maxStalledCount; ms).
    #[arg(long, value_name = "PATH")]
    pub params: Option<PathBuf>,

    /// Where in the parameters file the worker's options are, as a JSON pointer such as
    /// /queues/sweep/worker (when several objects give different ones). Overrides the manifest's params_at.
    #[arg(long, value_name = "POINTER")]
    pub params_at: Option<String>,

    /// Zone of ledger timestamps written without an offset (IANA name). Default: UTC.
    #[arg(long, value_name = "ZONE")]
    pub ledger_tz: Option<String>,

    /// Zone of log timestamps written without an offset (IANA name, e.g. Asia/Seoul). Overrides the manifest.
    #[arg(long, value_name = "ZONE")]
    pub log_tz: Option<String>,

    /// Ledger times without an offset that a DST fall-back makes happen twice: earlier, later or error (default: error).
    #[arg(long, value_name = "CHOICE", value_parser = clap::builder::PossibleValuesParser::new(["earlier", "later", "error"]))]
    pub ledger_ambiguous: Option<String>,

    /// Log times without an offset that a DST fall-back makes happen twice: order (by the lines around them), earlier, later or error. Default: order.
    #[arg(long, value_name = "CHOICE", value_parser = clap::builder::PossibleValuesParser::new(crate::time::Ambiguous::NAMES))]
    pub log_ambiguous: Option<String>,

    /// Map a ledger field to a column, e.g. --column time=created_at. Repeatable.
    #[arg(long = "column", value_name = "FIELD=COLUMN")]
    pub columns: Vec<String>,

    /// BullMQ lockDuration in ms (overrides the parameters file).
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(..=crate::model::params::MAX_PARAM_VALUE))]
    pub lock_duration: Option<u64>,

    /// BullMQ lockRenewTime in ms (default lockDuration / 2).
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(..=crate::model::params::MAX_PARAM_VALUE))]
    pub lock_renew_time: Option<u64>,

    /// BullMQ stalledInterval in ms.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(..=crate::model::params::MAX_PARAM_VALUE))]
    pub stalled_interval: Option<u64>,

    /// BullMQ maxStalledCount.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(..=crate::model::params::MAX_PARAM_VALUE))]
    pub max_stalled_count: Option<u64>,

    /// BullMQ version in use, e.g. 5.58.0 (selects the lock renewal model).
    #[arg(long, value_name = "VERSION")]
    pub bullmq_version: Option<String>,

    /// Display zone for times (IANA name). Default: the manifest's display_tz, else UTC.
    #[arg(long, value_name = "ZONE")]
    pub tz: Option<String>,

    /// duplicate-selection: flag two selections at most this many seconds apart, instead of "while the earlier round runs".
    #[arg(long, value_name = "SECONDS")]
    pub duplicate_window: Option<f64>,

    /// Show only events at or after TIME (and the findings citing them): RFC 3339 with an offset
    /// (2026-10-07T09:50:00+09:00), a local date and time (2026-10-07 09:50) or a clock time
    /// (09:50, on the case's date), both read in the display zone (--tz). The analysis reads everything.
    #[arg(long, value_name = "TIME", help_heading = "What to show")]
    pub since: Option<String>,

    /// Show only events at or before TIME (inclusive; same forms as --since).
    #[arg(long, value_name = "TIME", help_heading = "What to show")]
    pub until: Option<String>,

    /// Show only events of this job id (as the source wrote it), and the findings citing them. Repeatable: any of them. (Not --jobs, which reads job hashes.)
    #[arg(long = "job", value_name = "ID", help_heading = "What to show")]
    pub job_ids: Vec<String>,

    /// Show only events of this run id, and the findings citing them. Repeatable: any of them.
    #[arg(long = "run", value_name = "ID", help_heading = "What to show")]
    pub run_ids: Vec<String>,

    /// Show only events about this item (e.g. PR-4412), and the findings citing them. Repeatable: any of them.
    #[arg(long = "item", value_name = "ITEM", help_heading = "What to show")]
    pub items: Vec<String>,

    /// Output format.
    #[arg(long, default_value = "table", value_parser = clap::builder::PossibleValuesParser::new(crate::render::names()))]
    pub format: String,
}
