//! Thin entry point: parse arguments, run the library, map the outcome to an exit code
//! (0 clean, 1 findings at or above the `check` threshold, 2 usage or input error).

use std::fmt::Write as _;
use std::io::{self, Write};
use std::process::ExitCode;

use leasetrace::cli::{Cli, Command};
use leasetrace::config::Config;
use leasetrace::error::Error;
use leasetrace::model::report::View;
use leasetrace::progress::Progress;
use leasetrace::terminal::Terminal;
use leasetrace::{build_report, detect, render};

fn main() -> ExitCode {
    return_large_allocations_when_freed();
    let cli = match Cli::parse_args() {
        Ok(cli) => cli,
        Err(error) => {
            let printed = error.print().and_then(|()| io::stdout().flush());
            // `--help` and `--version` are output too: a failed write of them is not a success.
            if let Err(failure) = printed
                && !error.use_stderr()
                && failure.kind() != io::ErrorKind::BrokenPipe
            {
                print_error(&write_failed(&failure));
                return ExitCode::from(2);
            }
            return ExitCode::from(if error.use_stderr() { 2 } else { 0 });
        }
    };
    match run(&cli) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            print_error(&error);
            ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(2))
        }
    }
}

/// Has glibc map every allocation of 128 KiB or more on its own (its default threshold, kept
/// fixed), so that freeing one returns its memory. Left to itself, glibc raises the threshold to
/// the largest block freed so far, up to 32 MiB (the readers' buffers, a ledger part's events),
/// and the lists built after that (the context's, the detectors') come from the threads' heaps,
/// which keep them once freed: 30 MB of the main case's 249 MB (docs/performance.md). Set here,
/// not in the library, which must not change the allocator of a program that embeds it.
fn return_large_allocations_when_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets an allocator parameter, which glibc allows at any time and from
    // any thread; a refusal (0) leaves the default in place, which is correct too.
    #[allow(unsafe_code)]
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

fn run(cli: &Cli) -> Result<u8, Error> {
    let progress = Progress::on_stderr(cli.quiet);
    let (args, view) = match &cli.command {
        Command::Timeline(args) => (args, View::Timeline),
        Command::Analyze(args) => (args, View::Analyze),
        Command::Check { case, fail_on } => (case, View::Check(*fail_on)),
        Command::Explain { code } => return explain(code.as_deref()),
        Command::Lock { case, activated_at, died_at, what_if } => {
            let text = leasetrace::lock_report(case, activated_at, died_at.as_deref(), what_if, &progress)?;
            write_stdout(false, |out| out.write_all(text.as_bytes()))?;
            return Ok(0);
        }
        Command::Completions { shell } => {
            // Into memory first: clap_complete panics on a failed write instead of returning it.
            let mut script = Vec::new();
            leasetrace::cli::write_completions(*shell, &mut script);
            write_stdout(false, |out| out.write_all(&script))?;
            return Ok(0);
        }
        Command::Man { dir: Some(dir), .. } => {
            let paths = leasetrace::cli::write_man_pages(dir)?;
            write_stdout(false, |out| paths.iter().try_for_each(|path| writeln!(out, "{}", path.display())))?;
            return Ok(0);
        }
        Command::Man { command, dir: None } => {
            let mut page = Vec::new();
            leasetrace::cli::write_man(command.as_deref(), &mut page)?;
            write_stdout(false, |out| out.write_all(&page))?;
            return Ok(0);
        }
        Command::Capture { out, redis, queue, prefix, max_jobs, since, timeout } => {
            let options =
                leasetrace::capture::Options::build(out, redis, queue, prefix, *max_jobs, since.as_deref(), *timeout)?;
            let outcome = leasetrace::capture::run(&options, &progress)?;
            write_stdout(false, |out| out.write_all(outcome.summary.as_bytes()))?;
            return Ok(0);
        }
        Command::Init { case, force } => {
            let report = leasetrace::init::run(case, *force)?;
            write_stdout(false, |out| out.write_all(report.as_bytes()))?;
            return Ok(0);
        }
    };
    let config = Config { progress, ..Config::build(args)? };
    let renderer =
        render::find(&config.format).ok_or_else(|| Error::usage(format!("unknown format '{}'", config.format)))?;
    if let Some(why) = renderer.refuses(view) {
        return Err(Error::usage(format!("--format {}: {why}", config.format)));
    }
    let report = build_report(&config, view)?;
    let terminal = Terminal::stdout(cli.color);
    write_stdout(terminal.color, |out| renderer.render_to(&report, terminal, out))?;
    Ok(u8::from(report.failing() > 0))
}

fn explain(code: Option<&str>) -> Result<u8, Error> {
    let mut text = String::new();
    if let Some(code) = code {
        let detector = detect::find(code).ok_or_else(|| {
            let codes: Vec<&str> = detect::DETECTORS.iter().map(|d| d.code()).collect();
            Error::usage(format!("unknown finding '{code}': expected one of {}", codes.join(", ")))
        })?;
        text.push_str(detector.doc());
    } else {
        for detector in detect::DETECTORS {
            let _ = writeln!(text, "{:<22} {}", detector.code(), first_sentence(detector.doc()));
        }
    }
    write_stdout(false, |out| out.write_all(text.as_bytes()))?;
    Ok(0)
}

/// The one way a command's output reaches stdout, so that every command fails the same way: a
/// failed write (a full disk, `> /dev/full`) is exit 2 with the reason, never exit 0 with nothing
/// written; a closed pipe (`| head`) is the reader's choice, not an error, and stays exit 0.
fn write_stdout(color: bool, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<(), Error> {
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

/// The error on stderr. `eprintln!` would panic (exit 101) when stderr refuses the write
/// (`2> /dev/full`); the exit code still says what happened, so a failed write is let go.
fn print_error(error: &Error) {
    let _ = writeln!(io::stderr().lock(), "leasetrace: error: {error}");
}

fn write_failed(error: &io::Error) -> Error {
    // The OS's text without Rust's " (os error 28)": the reason is what the user acts on.
    let reason = error.to_string();
    let reason = reason.split(" (os error").next().unwrap_or(&reason);
    Error::usage(format!("cannot write the output: {reason}"))
}

/// The doc's one-line summary: the first paragraph after its heading.
fn first_sentence(doc: &str) -> &str {
    doc.lines().map(str::trim).find(|line| !line.is_empty() && !line.starts_with('#')).unwrap_or("")
}
