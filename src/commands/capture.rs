//! `leasetrace capture OUT --queue NAME [--redis URL | --postgres URL]`: a read-only snapshot of
//! what BullMQ keeps in Redis, or in its PostgreSQL backend, about one queue, written into the
//! new or empty folder OUT as a case `analyze` reads. The server comes from the flag or the
//! environment; `--max-jobs`, `--since`, `--until` and the time limits bound what is read
//! (`capture::Plan` validates them). The reading itself is the `capture` room (docs/capture.md);
//! this prints its summary.

use crate::capture::Plan;
use crate::error::Error;
use crate::progress::Progress;

pub fn run(plan: &Plan, progress: &Progress) -> Result<u8, Error> {
    let outcome = match plan {
        Plan::Redis(options) => crate::capture::run(options, progress)?,
        Plan::Postgres(options) => crate::capture::postgres::run(options, progress)?,
    };
    // The summary names what the server holds (queue, keys): nothing of it reaches the terminal
    // raw (`terminal::visible`), only the summary's own lines.
    let summary = crate::terminal::visible_lines(&outcome.summary);
    super::write_stdout(false, |out| out.write_all(summary.as_bytes()))?;
    Ok(0)
}
