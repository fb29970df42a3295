//! `leasetrace analyze [CASE]`: the findings of a case, with their evidence and arithmetic, the
//! chains of cause between them, and first what makes them less than certain (warnings, then
//! assumptions). The case and the filters are read as `timeline` reads them; the filters choose
//! the findings shown, never what the detectors see. Exit 0 whatever was found (`check` is the
//! gate), 2 on bad input.

use crate::cli::{CaseArgs, Cli};
use crate::error::Error;
use crate::model::report::View;
use crate::progress::Progress;

pub fn run(args: &CaseArgs, cli: &Cli, progress: Progress) -> Result<u8, Error> {
    super::print_report(args, View::Analyze, cli, progress)
}
