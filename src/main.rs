//! Thin entry point: parse arguments, run the library, map the outcome to an exit code
//! (0 clean, 1 findings at or above the `check` threshold, 2 usage or input error).

use std::io::{self, Write};
use std::process::ExitCode;

use leasetrace::cli::Cli;
use leasetrace::commands;
use leasetrace::error::Error;

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
                print_error(&commands::write_failed(&failure));
                return ExitCode::from(2);
            }
            return ExitCode::from(if error.use_stderr() { 2 } else { 0 });
        }
    };
    match commands::run(&cli) {
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

/// The error on stderr. `eprintln!` would panic (exit 101) when stderr refuses the write
/// (`2> /dev/full`); the exit code still says what happened, so a failed write is let go. The
/// message may quote a file's content or name: no character of it reaches the terminal raw
/// (`terminal::visible`), only the lines leasetrace itself laid out.
fn print_error(error: &Error) {
    let message = error.to_string();
    let _ = writeln!(io::stderr().lock(), "leasetrace: error: {}", leasetrace::terminal::visible_lines(&message));
}
