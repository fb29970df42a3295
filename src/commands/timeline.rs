//! `leasetrace timeline [CASE]`: every event of the case on one UTC timeline, shown in the display
//! zone, in `--format` (table, json, jsonl, ... as the renderers offer it). The case comes from its
//! folder's manifest, or from sources by flag (`--ledger`, `--log`, `--events`, `--jobs`), which
//! replace the manifest; the filters (`--since`, `--until`, `--job`, `--run`, `--item`) choose the
//! events shown. No detector runs. Exit 0, or 2 on bad input.

use crate::cli::{CaseArgs, Cli};
use crate::error::Error;
use crate::model::report::View;
use crate::progress::Progress;

pub fn run(args: &CaseArgs, cli: &Cli, progress: Progress) -> Result<u8, Error> {
    super::print_report(args, View::Timeline, cli, progress)
}
