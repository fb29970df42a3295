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
            let _ = error.print();
            return ExitCode::from(if error.use_stderr() { 2 } else { 0 });
        }
    };
    match run(&cli) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            eprintln!("leasetrace: error: {error}");
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
            let mut out = io::stdout().lock();
            let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
            return Ok(0);
        }
        Command::Completions { shell } => {
            let mut out = io::stdout().lock();
            leasetrace::cli::write_completions(*shell, &mut out);
            let _ = out.flush();
            return Ok(0);
        }
        Command::Man { dir: Some(dir), .. } => {
            let mut out = io::stdout().lock();
            for path in leasetrace::cli::write_man_pages(dir)? {
                let _ = writeln!(out, "{}", path.display());
            }
            return Ok(0);
        }
        Command::Man { command, dir: None } => {
            let mut page = Vec::new();
            leasetrace::cli::write_man(command.as_deref(), &mut page)?;
            let mut out = io::stdout().lock();
            let _ = out.write_all(&page).and_then(|()| out.flush());
            return Ok(0);
        }
        Command::Init { case, force } => {
            let report = leasetrace::init::run(case, *force)?;
            let mut out = io::stdout().lock();
            let _ = out.write_all(report.as_bytes()).and_then(|()| out.flush());
            return Ok(0);
        }
    };
    let config = Config { progress, ..Config::build(args)? };
    let report = build_report(&config, view)?;
    let terminal = Terminal::stdout(cli.color);
    // Colour goes through anstream, which passes the codes on (and, on a Windows console that
    // does not read them, draws them with the console's own calls); without colour, stdout as is.
    let stdout: Box<dyn Write> = if terminal.color {
        Box::new(anstream::AutoStream::always(io::stdout().lock()))
    } else {
        Box::new(io::stdout().lock())
    };
    // Stdout is line-buffered: a timeline of millions of events would be a write per line.
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout);
    let written = render::find(&config.format)
        .ok_or_else(|| Error::usage(format!("unknown format '{}'", config.format)))?
        .render_to(&report, terminal, &mut out)
        .and_then(|()| out.flush());
    match written {
        // A closed pipe (`| head`) is the reader's choice, not an error.
        Err(error) if error.kind() != io::ErrorKind::BrokenPipe => {
            return Err(Error::usage(format!("cannot write the report: {error}")));
        }
        _ => {}
    }
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
    let mut out = io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    Ok(0)
}

/// The doc's one-line summary: the first paragraph after its heading.
fn first_sentence(doc: &str) -> &str {
    doc.lines().map(str::trim).find(|line| !line.is_empty() && !line.starts_with('#')).unwrap_or("")
}
