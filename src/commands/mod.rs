//! The verbs, one file each: what its arguments mean and its `run`, which returns the exit code
//! (0 clean, 1 findings at or above `check`'s threshold; an error is 2, chosen by `Error`).
//! `main.rs` parses the command line and calls `run`; everything a verb prints reaches stdout
//! through `write_stdout`, so that every verb fails the same way on a full disk or a closed pipe.

pub mod analyze;
pub mod capture;
pub mod check;
pub mod completions;
pub mod docs;
pub mod explain;
pub mod init;
pub mod lock;
pub mod man;
pub mod timeline;

use std::io::{self, Write};

use crate::cli::{CaseArgs, Cli, Command};
use crate::config::Config;
use crate::error::Error;
use crate::model::report::View;
use crate::progress::Progress;
use crate::render;
use crate::terminal::Terminal;

/// Runs the verb `cli` names; the exit code when it ran to its end.
pub fn run(cli: &Cli) -> Result<u8, Error> {
    let progress = Progress::on_stderr(cli.quiet);
    match &cli.command {
        Command::Timeline(args) => timeline::run(args, cli, progress),
        Command::Analyze(args) => analyze::run(args, cli, progress),
        Command::Check { case, fail_on } => check::run(case, *fail_on, cli, progress),
        Command::Explain { code } => explain::run(code.as_deref()),
        Command::Docs { topic } => docs::run(topic.as_deref()),
        Command::Lock { case, activated_at, died_at, what_if } => {
            lock::run(case, activated_at, died_at.as_deref(), what_if, &progress)
        }
        Command::Completions { shell } => completions::run(*shell),
        Command::Man { command, dir } => man::run(command.as_deref(), dir.as_deref()),
        Command::Capture {
            out,
            redis,
            postgres,
            queue,
            prefix,
            schema,
            max_jobs,
            since,
            until,
            ledger_query,
            ledger_time_column,
            ledger_tz,
            bull,
            timeout,
            deadline,
            max_reply_bytes,
            max_record_bytes,
        } => {
            let plan = crate::capture::Plan::build(&crate::capture::Asked {
                out,
                redis: redis.as_deref(),
                postgres: postgres.as_deref(),
                queue,
                prefix: prefix.as_deref(),
                schema: schema.as_deref(),
                max_jobs: *max_jobs,
                since: since.as_deref(),
                until: until.as_deref(),
                ledger_query: ledger_query.as_deref(),
                ledger_time_column: ledger_time_column.as_deref(),
                ledger_tz: ledger_tz.as_deref(),
                bull: bull.as_deref(),
                timeout: *timeout,
                deadline: *deadline,
                max_reply_bytes: *max_reply_bytes,
                max_record_bytes: *max_record_bytes,
            })?;
            capture::run(&plan, &progress)
        }
        Command::Init { case, force, zones, display_tz } => init::run(case, *force, zones, display_tz.as_deref()),
    }
}

/// What the report verbs (`timeline`, `analyze`, `check`) share: the case's settings validated,
/// the report built for `view` and rendered in `--format` on stdout. Exit 1 when a finding is at
/// or above the check's threshold (only `check` has one).
fn print_report(args: &CaseArgs, view: View, cli: &Cli, progress: Progress) -> Result<u8, Error> {
    // Every format checked before any input is read.
    let asked = args.outputs()?;
    let config = Config { progress, ..Config::build(args)? };
    let mut outputs = Vec::new();
    for output in asked {
        let renderer =
            render::find(output.name).ok_or_else(|| Error::usage(format!("unknown format '{}'", output.name)))?;
        if let Some(why) = renderer.refuses(view) {
            return Err(Error::usage(format!("--format {}: {why}", output.name)));
        }
        outputs.push((renderer, output.path));
    }
    let report = crate::build_report(&config, view)?;
    // The files first, every one whole before any replaces its path (a run that cannot write one
    // of them writes none); then stdout, so that a check's log ends with its verdict.
    let mut staged = Vec::new();
    for (renderer, path) in &outputs {
        if let Some(path) = path {
            staged.push((stage_file(path, |out| renderer.render(&report, out))?, path));
        }
    }
    for (file, path) in staged {
        file.persist(path).map_err(|error| Error::Write { path: path.clone(), source: error.error })?;
    }
    if let Some((renderer, None)) = outputs.first() {
        let terminal = Terminal::stdout(cli.color);
        write_stdout(terminal.color, |out| renderer.render_to(&report, terminal, out))?;
    }
    Ok(u8::from(report.failing() > 0))
}

/// Writes a report to the file `path`, whole or not at all (`stage_file`, then renamed over
/// `path`): a failed run leaves the previous report, never half of one.
pub fn write_file(path: &std::path::Path, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<(), Error> {
    stage_file(path, write)?
        .persist(path)
        .map_err(|error| Error::Write { path: path.to_path_buf(), source: error.error })?;
    Ok(())
}

/// A new file beside `path` with what `write` wrote, to be renamed over `path`.
fn stage_file(
    path: &std::path::Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<tempfile::NamedTempFile, Error> {
    let cannot = |source: io::Error| Error::Write { path: path.to_path_buf(), source };
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => std::path::Path::new("."),
    };
    if path.is_dir() {
        return Err(cannot(io::Error::new(io::ErrorKind::IsADirectory, "it is a folder; give a file name")));
    }
    let mut builder = tempfile::Builder::new();
    builder.prefix(".leasetrace-");
    // A report is a file like any other the user writes (tempfile's default is owner-only).
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let mut file = builder.tempfile_in(folder).map_err(cannot)?;
    let mut out = io::BufWriter::with_capacity(1 << 16, file.as_file_mut());
    match write(&mut out).and_then(|()| out.flush()) {
        Ok(()) => {}
        Err(error) => {
            return Err(render::as_read_back_failure(error).unwrap_or_else(cannot));
        }
    }
    drop(out);
    Ok(file)
}

/// The one way a command's output reaches stdout, so that every command fails the same way: a
/// failed write (a full disk, `> /dev/full`) is exit 2 with the reason, never exit 0 with nothing
/// written; a closed pipe (`| head`) is the reader's choice, not an error, and stays exit 0.
pub fn write_stdout(color: bool, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<(), Error> {
    // Colour goes through anstream, which passes the codes on (and, on a Windows console that
    // does not read them, draws them with the console's own calls); without colour, stdout as is.
    let stdout: Box<dyn Write> =
        if color { Box::new(anstream::AutoStream::always(io::stdout().lock())) } else { Box::new(io::stdout().lock()) };
    // Stdout is line-buffered: a timeline of millions of events would be a write per line.
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout);
    match write(&mut out).and_then(|()| out.flush()) {
        Err(error) if error.kind() != io::ErrorKind::BrokenPipe => {
            Err(render::as_read_back_failure(error).unwrap_or_else(|error| write_failed(&error)))
        }
        _ => Ok(()),
    }
}

/// A failed write of the output, as the error the user reads.
pub fn write_failed(error: &io::Error) -> Error {
    // The OS's text without Rust's " (os error 28)": the reason is what the user acts on.
    let reason = error.to_string();
    let reason = reason.split(" (os error").next().unwrap_or(&reason);
    Error::usage(format!("cannot write the output: {reason}"))
}
