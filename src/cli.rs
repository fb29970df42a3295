//! Command-line types. Nothing outside this file and `config.rs` sees clap's structures: the
//! shell completions and man pages generated from them are written here too.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use clap::{Args, CommandFactory, Parser, Subcommand};

use crate::model::Severity;
use crate::terminal::{ColorWhen, color};

/// Where a reader of `--help` or the man page finds the rest: the documentation is carried in
/// the binary (`leasetrace docs`), since an installed binary has no docs/ folder beside it.
const AFTER_HELP: &str = "Exit codes: 0 clean, 1 findings at or above --fail-on (check only), 2 usage or input error.
Docs: `leasetrace docs` lists the documentation's topics and `leasetrace docs TOPIC` prints one \
(inputs, inputs/ledger, inputs/log, outputs, outputs/ci, json, findings, ...); `leasetrace explain CODE` \
prints a finding's page; `leasetrace man` prints the manual page.";

#[derive(Debug, Parser)]
#[command(
    name = "leasetrace",
    version,
    about = "Incident forensics for job queues: merge a run ledger, server logs and BullMQ lock settings into one timeline and find stalled reruns, overlapping sweeps and duplicate work.",
    after_help = AFTER_HELP
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// No progress bars on stderr (they are drawn only when stderr is a terminal anyway).
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// Colour in tables: auto (on a terminal, unless NO_COLOR is set or CLICOLOR=0; also when
    /// piped if CLICOLOR_FORCE or FORCE_COLOR is set), always or never.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColorWhen::Auto, global = true)]
    pub color: ColorWhen,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the merged timeline: every event, its time in the display zone, kind, ids and source line.
    Timeline(CaseArgs),
    /// Print the findings with their evidence and arithmetic (exit 0 unless the input is bad).
    Analyze(CaseArgs),
    /// Like analyze, for CI: exit 1 when a finding is at or above --fail-on.
    #[command(
        after_help = "Exit codes: 0 no shown finding at or above --fail-on; 1 at least one (the findings a filter hides are not counted, and the report says how many); 2 usage or input error, or a filter that matches no event (--allow-empty-filter accepts one), with no report written.\nDocs: `leasetrace docs outputs/ci` (the CI formats and workflows), `leasetrace docs outputs/filters`."
    )]
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
        /// When the job became active, in the forms --since takes: RFC 3339 (2026-10-07T00:33:00Z),
        /// a local date and time (2026-10-07 09:33:00) read in the display zone (--tz, or the case's
        /// display_tz), or a clock time (09:33:00) on the case's date (with a CASE only).
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
        /// The zone FILE's times without an offset were written in (an IANA name, e.g.
        /// server.log=Asia/Seoul; FILE as the manifest names it): accepts a proposed zone, or
        /// gives one, without editing the manifest. Repeatable, one per file.
        #[arg(long = "tz", value_name = "FILE=ZONE")]
        zones: Vec<String>,
        /// The zone times are shown in (display_tz). Default: the zone given for a log by --tz,
        /// else one at the offset init measured for the logs, else UTC.
        #[arg(long, value_name = "ZONE")]
        display_tz: Option<String>,
    },
    /// Take a read-only snapshot of what BullMQ keeps about one queue, in Redis (events stream,
    /// job hashes with their states, locks, stalled bookkeeping) or in PostgreSQL (the backend's
    /// event, job and meta tables, and your own ledger table), into a new case folder for analyze
    ///
    /// Redis: only read commands are sent (SCAN, never KEYS; XRANGE in pages); OUT receives
    /// events.jsonl, jobs.jsonl, job-logs.jsonl. PostgreSQL: one read-only REPEATABLE READ
    /// transaction, the window pushed into every query; OUT receives event.csv, job.csv, meta.csv
    /// (and ledger.csv). Both write capture.json (the capture record) and leasetrace.toml.
    Capture {
        /// The folder to write: new, or empty.
        out: PathBuf,
        /// A Redis server: redis://[user:password@]host[:port][/db], or rediss://... for TLS.
        /// From LEASETRACE_REDIS_URL when neither --redis nor --postgres is given: a password on
        /// the command line is visible to every user of the machine (ps), one in the environment
        /// only to the user's own.
        #[arg(long, value_name = "URL", conflicts_with = "postgres")]
        redis: Option<String>,
        /// A PostgreSQL database that BullMQ's PostgreSQL backend writes to:
        /// postgres://[user[:password]@][host][:port][/dbname][?sslmode=...], or
        /// postgres:///dbname?host=/var/run/postgresql for a socket. From LEASETRACE_POSTGRES_URL
        /// when neither --redis nor --postgres is given; the password may come from PGPASSWORD
        /// or ~/.pgpass.
        #[arg(long, value_name = "URL")]
        postgres: Option<String>,
        /// The queue's name (as given to BullMQ's Queue and Worker).
        #[arg(long, value_name = "NAME")]
        queue: String,
        /// BullMQ's key prefix (the `prefix` option of Queue and Worker; Redis). Default: bull.
        #[arg(long, value_name = "PREFIX")]
        prefix: Option<String>,
        /// The queue is legacy Bull's (npm `bull` 3.x/4.x), at this version (package-lock.json's):
        /// read with Bull's lock rules; Bull keeps no events stream (Redis).
        #[arg(long, value_name = "VERSION")]
        bull: Option<String>,
        /// The schema of BullMQ's PostgreSQL backend (PostgreSQL). Default: bullmq.
        #[arg(long, value_name = "NAME")]
        schema: Option<String>,
        /// Write at most N job hashes (Redis, in SCAN order) or job rows (PostgreSQL, by seq); the
        /// record says how many were left out.
        #[arg(long, value_name = "N")]
        max_jobs: Option<u64>,
        /// Only stream entries (event rows) from TIME on, and job hashes (job rows) with a time at or
        /// after it (PostgreSQL: pushed into every query):
        /// RFC 3339 (2026-10-07T09:50:00+09:00), or a date and time read in UTC (a clock time
        /// alone has no case to take its date from).
        #[arg(long, value_name = "TIME")]
        since: Option<String>,
        /// Only rows before TIME (PostgreSQL: pushed into every query, as --since is), in the
        /// forms --since takes. A Redis capture reads to the present.
        #[arg(long, value_name = "TIME")]
        until: Option<String>,
        /// Your own ledger table, by a query whose rows are the ledger (PostgreSQL), written as
        /// ledger.csv: `SELECT * FROM sweep_ledger`. The window is pushed into it (it is read
        /// as a subquery), so a ledger of any size costs the window.
        #[arg(long, value_name = "SQL", requires = "ledger_time_column")]
        ledger_query: Option<String>,
        /// The column of --ledger-query's rows that holds each row's time (timestamptz, or
        /// timestamp with --ledger-tz).
        #[arg(long, value_name = "COLUMN", requires = "ledger_query")]
        ledger_time_column: Option<String>,
        /// The zone of a --ledger-time-column of type timestamp (without time zone).
        #[arg(long, value_name = "ZONE", requires = "ledger_query")]
        ledger_tz: Option<String>,
        /// Seconds to wait for the connection and for each answer of the server.
        #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
        timeout: f64,
        /// Seconds the whole capture may take: past them it stops, and writes nothing.
        #[arg(long, value_name = "SECONDS", default_value_t = 300.0)]
        deadline: f64,
        /// The most one reply may hold (64 MiB): a larger one is refused before the rest of it is read.
        #[arg(long, value_name = "BYTES", default_value_t = crate::capture::MAX_REPLY_BYTES)]
        max_reply_bytes: u64,
        /// The longest line written (16 MiB: the longest analyze reads by default).
        #[arg(long, value_name = "BYTES", default_value_t = crate::capture::MAX_RECORD_BYTES)]
        max_record_bytes: u64,
    },
    /// Print a page of the documentation, which the binary carries, or list the topics. Messages
    /// and help texts cite pages as `leasetrace docs TOPIC`.
    Docs {
        /// A topic such as inputs/ledger, findings/stalled-rerun, json or outputs/ci (a page's own
        /// name will do when only one page has it: ledger, stalled-rerun); omit to list them all.
        topic: Option<String>,
    },
    /// Print the documentation of a finding (or list them all).
    Explain {
        /// A finding code such as stalled-rerun; omit to list every code.
        code: Option<String>,
    },
    /// Print the shell completion script for SHELL on stdout
    ///
    /// Install it where the shell looks for completions, for example:
    ///   bash:  leasetrace completions bash > ~/.local/share/bash-completion/completions/leasetrace
    ///   zsh:   leasetrace completions zsh > ~/.zfunc/_leasetrace   (with fpath=(~/.zfunc $fpath) before compinit)
    ///   fish:  leasetrace completions fish > ~/.config/fish/completions/leasetrace.fish
    ///   elvish (rc.elv):        eval (leasetrace completions elvish | slurp)
    ///   PowerShell ($PROFILE):  leasetrace completions powershell | Out-String | Invoke-Expression
    #[command(verbatim_doc_comment)]
    Completions {
        /// The shell the script is for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff) on stdout, or write every page (leasetrace.1 and one per command) into a folder
    ///
    /// For man to find the pages, write them into a man1 folder on its path; man-db looks in ../share/man beside each bin folder on PATH, such as ~/.cargo/bin:
    ///   mkdir -p ~/.cargo/share/man/man1 && leasetrace man --dir ~/.cargo/share/man/man1
    #[command(verbatim_doc_comment)]
    Man {
        /// A command whose page to print (leasetrace-COMMAND(1)) instead of leasetrace(1).
        command: Option<String>,
        /// Write leasetrace.1 and leasetrace-COMMAND.1 for every command into DIR (for example
        /// ~/.local/share/man/man1) and print their paths.
        #[arg(long, value_name = "DIR", conflicts_with = "command")]
        dir: Option<PathBuf>,
    },
}

#[derive(Debug, Args, Clone, Default)]
pub struct CaseArgs {
    /// Case folder holding leasetrace.toml, or the manifest file itself.
    pub case: Option<PathBuf>,

    /// Read a source that the manifest names outside the case folder (`../x.log`, `/var/log/x`,
    /// a link out of it). By default such a source is refused: a case folder from someone else
    /// could make the report quote any file you can read. The report says which it read outside.
    #[arg(long)]
    pub allow_outside_case: bool,

    /// A run ledger (CSV, TSV or JSON Lines; '-' for stdin). Repeatable.
    #[arg(long, value_name = "PATH")]
    pub ledger: Vec<PathBuf>,

    /// A server log (lines starting with a timestamp; '-' for stdin). Repeatable.
    #[arg(long, value_name = "PATH")]
    pub log: Vec<PathBuf>,

    /// BullMQ's events stream exported with XRANGE (JSON, JSON Lines or redis-cli text), or the
    /// PostgreSQL backend's event table (psql CSV or JSON). Repeatable.
    #[arg(long, value_name = "PATH")]
    pub events: Vec<PathBuf>,

    /// BullMQ job hashes exported with HGETALL: JSON (records, a keyed object, BullMQ's job JSON) or redis-cli text;
    /// or the PostgreSQL backend's job and meta tables (psql CSV or JSON). Repeatable.
    #[arg(long, value_name = "PATH")]
    pub jobs: Vec<PathBuf>,

    /// OpenTelemetry traces of BullMQ workers (bullmq-otel) as OTLP JSON: the Collector's file exporter lines or a saved POST /v1/traces body ('-' for stdin). Repeatable.
    #[arg(long, value_name = "PATH")]
    pub trace: Vec<PathBuf>,

    /// `redis-cli MONITOR` output recorded during the incident: legacy Bull's lock scripts, with Redis's microsecond times ('-' for stdin). Repeatable.
    #[arg(long, value_name = "PATH")]
    pub monitor: Vec<PathBuf>,

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

    /// Legacy Bull version in use, e.g. 4.16.5: the case ran Bull, not BullMQ (selects Bull's lock models).
    #[arg(long, value_name = "VERSION", conflicts_with = "bullmq_version")]
    pub bull_version: Option<String>,

    /// Display zone for times (IANA name). Default: the manifest's display_tz, else UTC.
    #[arg(long, value_name = "ZONE")]
    pub tz: Option<String>,

    /// duplicate-selection: flag two selections at most this many seconds apart, instead of "while the earlier round runs".
    #[arg(long, value_name = "SECONDS")]
    pub duplicate_window: Option<f64>,

    /// Longest line (or CSV record) read, in bytes (default 16777216, 16 MiB): a longer one is
    /// rejected with its line number and passed over without being held in memory.
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..=crate::ingest::io::lines::MAX_LINE_BYTES_CEILING))]
    pub max_line_bytes: Option<u64>,

    /// Most bytes of records kept aside by a reader that must read an export from its end (one
    /// sorted newest first, its records kept in a temporary file in TMPDIR; default 536870912, 512
    /// MiB): past it the run stops and says how to export the records oldest first.
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..=crate::ingest::io::lines::MAX_HELD_BYTES_CEILING))]
    pub max_held_bytes: Option<u64>,

    /// Show only events at or after TIME (and the findings citing them): RFC 3339 with an offset
    /// (2026-10-07T09:50:00+09:00), a local date and time (2026-10-07 09:50) or a clock time
    /// (09:50, on the case's date), both read in the display zone (--tz). Ledgers and logs are
    /// read from TIME minus --read-margin on (a clock time reads everything); a plain-text log
    /// file in time order is sought to it, not read up to it (leasetrace docs outputs/filters).
    #[arg(long, value_name = "TIME", help_heading = "What to show")]
    pub since: Option<String>,

    /// Show only events at or before TIME (inclusive; same forms as --since).
    #[arg(long, value_name = "TIME", help_heading = "What to show")]
    pub until: Option<String>,

    /// How far before --since and after --until ledgers and logs are read, in seconds (default
    /// 3600), so that the shown findings' causes are seen; rows and lines further out are counted,
    /// not kept. `all` reads everything and only the report is cut.
    #[arg(long, value_name = "SECONDS|all", help_heading = "What to show")]
    pub read_margin: Option<String>,

    /// Show only events of this job id (as the source wrote it), and the findings citing them. Repeatable: any of them. (Not --jobs, which reads job hashes.)
    #[arg(long = "job", value_name = "ID", help_heading = "What to show")]
    pub job_ids: Vec<String>,

    /// Show only events of this run id, and the findings citing them. Repeatable: any of them.
    #[arg(long = "run", value_name = "ID", help_heading = "What to show")]
    pub run_ids: Vec<String>,

    /// Show only events about this item (e.g. PR-4412), and the findings citing them. Repeatable: any of them.
    #[arg(long = "item", value_name = "ITEM", help_heading = "What to show")]
    pub items: Vec<String>,

    /// Accept a filter that matches no event of the case (a window that may hold nothing): the
    /// report then says so in a warning. By default such a filter is an error (exit 2) that shows
    /// what the evidence holds, so that a mistyped id cannot pass a CI check.
    #[arg(long, help_heading = "What to show")]
    pub allow_empty_filter: bool,

    /// Output format: NAME writes it to stdout (or to --output-file), NAME=PATH to the file PATH.
    /// Repeatable, so that one run writes a report for people and one for programs (check
    /// --format github --format sarif=leasetrace.sarif). At most one without a PATH; without
    /// one, stdout gets the table.
    #[arg(long = "format", value_name = "NAME[=PATH]", value_parser = OutputParser, help_heading = "Output")]
    pub formats: Vec<Output>,

    /// Write the report to PATH instead of stdout (the format without a =PATH, table by
    /// default), never coloured. The file is replaced only once the report is whole.
    #[arg(long, value_name = "PATH", help_heading = "Output")]
    pub output_file: Option<PathBuf>,
}

/// One `--format`: the renderer's name, and the file it writes (`NAME=PATH`), or `None`: stdout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    pub name: &'static str,
    pub path: Option<PathBuf>,
}

impl Output {
    pub fn stdout(name: &'static str) -> Self {
        Output { name, path: None }
    }
}

impl CaseArgs {
    /// The format written to stdout (or to `--output-file`): the `--format` given without a
    /// file, else the table.
    pub fn main_format(&self) -> &'static str {
        self.formats.iter().find(|output| output.path.is_none()).map_or("table", |output| output.name)
    }

    /// Every output of the run, the one to stdout (or `--output-file`) first: refused when two
    /// would write to stdout or to the same file.
    pub fn outputs(&self) -> Result<Vec<Output>, crate::error::Error> {
        let mut to_stdout = self.formats.iter().filter(|output| output.path.is_none());
        if let (Some(first), Some(second)) = (to_stdout.next(), to_stdout.next()) {
            return Err(crate::error::Error::usage(format!(
                "--format {} and --format {} would both write to stdout: give the other a file, e.g. --format {}=leasetrace.{}",
                first.name, second.name, second.name, second.name
            )));
        }
        let main = Output { name: self.main_format(), path: self.output_file.clone() };
        let mut outputs = vec![main];
        outputs.extend(self.formats.iter().filter(|output| output.path.is_some()).cloned());
        let mut paths: Vec<&Path> = outputs.iter().filter_map(|output| output.path.as_deref()).collect();
        paths.sort_unstable();
        if let Some(pair) = paths.windows(2).find(|pair| pair[0] == pair[1]) {
            return Err(crate::error::Error::usage(format!(
                "two outputs would write {}: give each format a file of its own",
                crate::terminal::visible(&pair[0].display().to_string())
            )));
        }
        Ok(outputs)
    }
}

/// `--format NAME[=PATH]`, with the renderers' names as its possible values (for `--help` and
/// the completions).
#[derive(Debug, Clone, Copy)]
struct OutputParser;

impl clap::builder::TypedValueParser for OutputParser {
    type Value = Output;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Output, clap::Error> {
        let refuse = |message: String| clap::Error::raw(clap::error::ErrorKind::InvalidValue, message).with_cmd(cmd);
        let text = value.to_string_lossy();
        let (name, path) = match text.split_once('=') {
            Some((name, path)) => (name, Some(path)),
            None => (text.as_ref(), None),
        };
        let Some(renderer) = crate::render::find(name) else {
            return Err(refuse(format!(
                "invalid value '{}' for '--format <NAME[=PATH]>': expected one of {}, alone (to stdout) or as NAME=PATH (to a file)\n",
                crate::terminal::visible(&text),
                crate::render::names().join(", ")
            )));
        };
        let path = match path {
            None => None,
            Some("") => return Err(refuse(format!("--format {name}=: the file name is missing after '='\n"))),
            // The path as given, not as lossy text: a file name need not be UTF-8.
            Some(_) => Some(PathBuf::from(split_path(value, name.len() + 1))),
        };
        Ok(Output { name: renderer.name(), path })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(crate::render::names().into_iter().map(clap::builder::PossibleValue::new)))
    }
}

/// `value` from byte `at` on: what follows `NAME=` of a `--format`, as the OS gave it (a file
/// name need not be UTF-8). `at` is just past the ASCII `NAME=`, the same bytes in both forms.
fn split_path(value: &std::ffi::OsStr, at: usize) -> std::ffi::OsString {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        std::ffi::OsStr::from_bytes(&value.as_bytes()[at..]).to_os_string()
    }
    #[cfg(not(unix))]
    {
        std::ffi::OsString::from(&value.to_string_lossy()[at..])
    }
}

impl Cli {
    /// The command line of this process, with clap's own output (`--help`, usage errors) coloured
    /// by the rules and the `--color` flag the report follows (`terminal::color`), judged on the
    /// stream clap writes to (stdout for help, stderr for errors) rather than by clap, whose
    /// reading of CLICOLOR_FORCE=0 differs. The flag is looked for in the raw arguments, since
    /// clap's output is what a failed parse gives; a failed parse is repeated with that colour.
    pub fn parse_args() -> Result<Cli, clap::Error> {
        use clap::FromArgMatches;
        use std::io::IsTerminal;
        let error = match Cli::command().color(clap::ColorChoice::Never).try_get_matches() {
            Ok(matches) => return Cli::from_arg_matches(&matches),
            Err(error) => error,
        };
        let when = color_in_args(std::env::args_os().skip(1)).unwrap_or_default();
        let terminal = if error.use_stderr() { io::stderr().is_terminal() } else { io::stdout().is_terminal() };
        if !color(when, terminal, |name| std::env::var_os(name)) {
            return Err(error);
        }
        Err(Cli::command().color(clap::ColorChoice::Always).try_get_matches().err().unwrap_or(error))
    }
}

/// The last `--color WHEN` / `--color=WHEN` before a `--`, if one names a known choice (a wrong
/// one is left for the parser to refuse).
fn color_in_args(args: impl IntoIterator<Item = std::ffi::OsString>) -> Option<ColorWhen> {
    use clap::ValueEnum;
    let mut found = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let Some(arg) = arg.to_str().map(str::to_string) else { continue };
        let value = match arg.as_str() {
            "--" => break,
            "--color" => args.next().and_then(|v| v.into_string().ok()),
            other => other.strip_prefix("--color=").map(str::to_string),
        };
        if let Some(value) = value {
            found = ColorWhen::from_str(&value, false).ok().or(found);
        }
    }
    found
}

/// `leasetrace completions SHELL`: the completion script clap_complete generates for SHELL from
/// the same definitions `--help` is built from, so the two cannot drift apart.
pub fn write_completions(shell: clap_complete::Shell, out: &mut dyn Write) {
    clap_complete::generate(shell, &mut Cli::command(), "leasetrace", out);
}

/// The definitions the man pages are generated from: without clap's `help` subcommand, which has
/// no page (its listing would name a leasetrace-help(1) that does not exist).
fn man_command() -> clap::Command {
    let mut command = Cli::command().disable_help_subcommand(true);
    command.build();
    command
}

/// The names of the commands that have a page of their own (`leasetrace-NAME(1)`).
pub fn man_commands() -> Vec<String> {
    man_command().get_subcommands().filter(|c| !c.is_hide_set()).map(|c| c.get_name().to_string()).collect()
}

/// `leasetrace man [COMMAND]`: the roff of leasetrace(1), or of leasetrace-COMMAND(1).
pub fn write_man(command: Option<&str>, out: &mut dyn Write) -> Result<(), crate::error::Error> {
    let root = man_command();
    let page = match command {
        None => root,
        Some(name) => root.find_subcommand(name).cloned().ok_or_else(|| {
            crate::error::Error::usage(format!(
                "no manual page for '{name}': expected one of {}",
                man_commands().join(", ")
            ))
        })?,
    };
    render_man(page, out).map_err(|error| crate::error::Error::usage(format!("cannot write the manual page: {error}")))
}

/// One manual page: clap_mangen's sections from the definitions (name, synopsis, description,
/// options, commands), then the sections a man page reader looks for and clap cannot know: EXIT
/// STATUS, ENVIRONMENT, FILES, EXAMPLES and SEE ALSO (`man_sections`), then the version.
fn render_man(page: clap::Command, out: &mut dyn Write) -> io::Result<()> {
    let verb = (page.get_name() != "leasetrace").then(|| page.get_name().to_string());
    let has_options = page.get_arguments().any(|arg| !arg.is_hide_set());
    let has_commands = page.get_subcommands().any(|command| !command.is_hide_set());
    let has_version = page.get_version().or(page.get_long_version()).is_some();
    let man = clap_mangen::Man::new(page);
    man.render_title(out)?;
    man.render_name_section(out)?;
    man.render_synopsis_section(out)?;
    man.render_description_section(out)?;
    if has_options {
        man.render_options_section(out)?;
    }
    if has_commands {
        man.render_subcommands_section(out)?;
    }
    let mut roff = roff::Roff::new();
    man_sections(verb.as_deref(), &mut roff);
    roff.to_writer(out)?;
    if has_version {
        man.render_version_section(out)?;
    }
    Ok(())
}

/// EXIT STATUS, ENVIRONMENT, FILES, EXAMPLES and SEE ALSO of leasetrace(1) (`verb` `None`) or of
/// leasetrace-VERB(1).
fn man_sections(verb: Option<&str>, roff: &mut roff::Roff) {
    use roff::{bold, roman};
    let item = |roff: &mut roff::Roff, term: &str, text: &str| {
        roff.control("TP", []).text([bold(term)]).text([roman(text)]);
    };
    roff.control("SH", ["EXIT STATUS"]);
    item(roff, "0", "The command ran to its end: for check, no shown finding is at or above --fail-on.");
    if matches!(verb, None | Some("check")) {
        item(roff, "1", "check only: at least one shown finding is at or above --fail-on (default warning).");
    }
    item(
        roff,
        "2",
        "A usage or input error: the message on standard error names the file, the line and the fix. No report is written (no file of a --format NAME=PATH either).",
    );
    roff.control("SH", ["ENVIRONMENT"]);
    item(roff, "NO_COLOR", "Set and not empty: no colour (a --color flag wins over it).");
    item(
        roff,
        "CLICOLOR_FORCE, FORCE_COLOR",
        "Set, not empty and not 0 (nor false for FORCE_COLOR): colour even into a pipe or a file given as stdout; never into a --format NAME=PATH or --output-file file.",
    );
    item(roff, "CLICOLOR", "0: no colour on a terminal.");
    item(roff, "COLUMNS", "The width tables wrap to on a terminal that does not report one.");
    if matches!(verb, None | Some("capture")) {
        item(
            roff,
            "LEASETRACE_REDIS_URL",
            "capture: the Redis server when neither --redis nor --postgres is given (a password in the environment is not shown by ps).",
        );
        item(
            roff,
            "LEASETRACE_POSTGRES_URL",
            "capture: the PostgreSQL database when neither --redis nor --postgres is given.",
        );
        item(
            roff,
            "PGPASSWORD, PGPASSFILE",
            "capture --postgres: the password, when the URL has none (as libpq reads them).",
        );
    }
    roff.control("SH", ["FILES"]);
    match verb {
        Some("init") => {
            item(roff, "CASE/leasetrace.toml", "The manifest init writes, for you to review (--force replaces one).");
        }
        Some("capture") => {
            item(roff, "OUT/leasetrace.toml", "The manifest of the case capture writes.");
            item(roff, "OUT/capture.json", "The capture record: what was read, when, and what was left out.");
        }
        _ => item(
            roff,
            "CASE/leasetrace.toml",
            "The case's manifest: its sources (kind, path, format, zone), the display zone and the analysis settings (leasetrace docs inputs). Without a CASE, the current folder's.",
        ),
    }
    roff.control("SH", ["EXAMPLES"]);
    let examples: &[(&str, &str)] = match verb {
        None | Some("analyze") => &[
            ("leasetrace init exports/", "Draft a manifest from a folder of exports."),
            (
                "leasetrace analyze exports/ --tz Asia/Seoul",
                "The findings, their chains, arithmetic and evidence, in Seoul time.",
            ),
            (
                "leasetrace analyze --ledger runs.csv --log server.log --log-tz Asia/Seoul --params worker.json",
                "The same, from files given by flag.",
            ),
        ],
        Some("check") => &[
            ("leasetrace check exports/ --fail-on error", "Exit 1 only on an error finding."),
            (
                "leasetrace check exports/ --format github --format sarif=leasetrace.sarif",
                "Annotations on stdout and SARIF into a file, in one run.",
            ),
            (
                "leasetrace check exports/ --format concise --format gitlab=gl-code-quality.json --format junit=junit.xml",
                "For GitLab CI: the code quality and JUnit reports.",
            ),
        ],
        Some("timeline") => &[
            (
                "leasetrace timeline exports/ --since 09:50 --until 09:55 --tz Asia/Seoul",
                "Every event of five minutes, in Seoul time.",
            ),
            (
                "leasetrace timeline exports/ --format jsonl > timeline.jsonl",
                "The whole timeline for programs, one event a line.",
            ),
        ],
        Some("lock") => &[(
            "leasetrace lock --activated-at 2026-10-07T00:33:00Z --lock-duration 1178000 --died-at 2026-10-07T00:37:26Z",
            "When the lock of a job activated then expires, and when a stalled check can take it.",
        )],
        Some("init") => {
            &[("leasetrace init exports/ && leasetrace analyze exports/", "Draft the manifest, review it, analyze.")]
        }
        Some("capture") => &[
            (
                "LEASETRACE_REDIS_URL=redis://10.0.0.5:6379 leasetrace capture case/ --queue pr-review",
                "A read-only snapshot of the queue into the new folder case/.",
            ),
            (
                "leasetrace capture case/ --postgres postgres://oncall@db/app --queue pr-review --since '2026-10-07 00:30' --until '2026-10-07 01:00' --ledger-query 'SELECT * FROM sweep_ledger' --ledger-time-column ts",
                "Half an hour of the PostgreSQL backend's tables and of the team's ledger table, read-only.",
            ),
        ],
        Some("docs") => {
            &[("leasetrace docs", "The topics."), ("leasetrace docs inputs/ledger", "How a run ledger is read.")]
        }
        Some("explain") => {
            &[("leasetrace explain stalled-rerun", "What a stalled-rerun finding means and what to change.")]
        }
        Some("completions") => &[(
            "leasetrace completions bash > ~/.local/share/bash-completion/completions/leasetrace",
            "Install the bash completion.",
        )],
        Some("man") => &[("leasetrace man --dir ~/.local/share/man/man1", "Install every page.")],
        Some(_) => &[],
    };
    for (command, what) in examples {
        roff.control("TP", []).text([bold(*command)]).text([roman(*what)]);
    }
    roff.control("SH", ["SEE ALSO"]);
    roff.text([roman(
        "leasetrace docs, with no topic, lists the documentation's topics, carried in the binary (inputs, outputs, json, findings, ...); leasetrace docs TOPIC prints one; leasetrace explain CODE prints a finding's page.",
    )]);
}

/// `leasetrace man --dir DIR`: every page written into `dir` (which must exist); returns the paths.
pub fn write_man_pages(dir: &Path) -> Result<Vec<PathBuf>, crate::error::Error> {
    if !dir.is_dir() {
        return Err(crate::error::Error::usage(format!(
            "--dir {}: not a folder (create it first, for example with mkdir -p)",
            dir.display()
        )));
    }
    let root = man_command();
    let mut written = Vec::new();
    for page in std::iter::once(&root).chain(root.get_subcommands().filter(|c| !c.is_hide_set())) {
        let path = dir.join(clap_mangen::Man::new(page.clone()).get_filename());
        let cannot = |source: io::Error| crate::error::Error::Write { path: path.clone(), source };
        let mut file = io::BufWriter::new(std::fs::File::create(&path).map_err(cannot)?);
        render_man(page.clone(), &mut file).and_then(|()| file.flush()).map_err(cannot)?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn color(args: &[&str]) -> Option<ColorWhen> {
        color_in_args(args.iter().map(std::ffi::OsString::from))
    }

    #[test]
    fn color_is_found_in_the_raw_arguments_before_parsing() {
        assert_eq!(color(&["analyze", "--help"]), None);
        assert_eq!(color(&["--color", "never", "--help"]), Some(ColorWhen::Never));
        assert_eq!(color(&["analyze", "--color=always", "case"]), Some(ColorWhen::Always));
        assert_eq!(color(&["--color=never", "analyze", "--color", "always"]), Some(ColorWhen::Always), "the last one");
        assert_eq!(color(&["--color", "sometimes"]), None, "left for clap to refuse");
        assert_eq!(color(&["analyze", "--", "--color=never"]), None, "after --, a file name");
    }

    #[test]
    fn the_definitions_are_consistent() {
        Cli::command().debug_assert();
    }
}
