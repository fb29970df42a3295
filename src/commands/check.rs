//! `leasetrace check [CASE] [--fail-on SEVERITY]`: `analyze` for CI. The same report (the SARIF
//! and GitHub formats are made for it), and exit 1 when a finding shown is at or above
//! `--fail-on` (default warning), 0 otherwise, 2 on bad input.

use crate::cli::{CaseArgs, Cli};
use crate::error::Error;
use crate::model::Severity;
use crate::model::report::View;
use crate::progress::Progress;

pub fn run(args: &CaseArgs, fail_on: Severity, cli: &Cli, progress: Progress) -> Result<u8, Error> {
    super::print_report(args, View::Check(fail_on), cli, progress)
}
