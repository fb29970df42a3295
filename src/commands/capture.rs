//! `leasetrace capture OUT --queue NAME [--redis URL]`: a read-only snapshot of what BullMQ keeps
//! in Redis about one queue, written into the new or empty folder OUT as a case `analyze` reads.
//! The server comes from `--redis` or LEASETRACE_REDIS_URL; `--prefix`, `--max-jobs`, `--since`
//! and `--timeout` bound what is read (`capture::Options` validates them). The reading itself is
//! the `capture` room (docs/capture.md); this prints its summary.

use crate::capture::Options;
use crate::error::Error;
use crate::progress::Progress;

pub fn run(options: &Options, progress: &Progress) -> Result<u8, Error> {
    let outcome = crate::capture::run(options, progress)?;
    // The summary names what the server holds (queue, keys): nothing of it reaches the terminal
    // raw (`terminal::visible`), only the summary's own lines.
    let summary = crate::terminal::visible_lines(&outcome.summary);
    super::write_stdout(false, |out| out.write_all(summary.as_bytes()))?;
    Ok(0)
}
