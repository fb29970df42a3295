//! `leasetrace init CASE [--force] [--tz FILE=ZONE]... [--display-tz ZONE]`: looks at the files
//! of a case folder and writes a draft leasetrace.toml for the user to review (an existing one
//! only with `--force`); what it found, measured and left undecided is printed. `--tz` and
//! `--display-tz` decide what the user would otherwise write into the draft by hand. The looking
//! is the `init` room (docs/init.md).

use std::path::Path;

use crate::error::Error;

pub fn run(case: &Path, force: bool, zones: &[String], display_tz: Option<&str>) -> Result<u8, Error> {
    // The choices are checked before the folder is read: a zone that is no zone stops at once.
    let choices = crate::init::Choices::parse(zones, display_tz)?;
    let report = crate::init::run(case, force, &choices)?;
    super::write_stdout(false, |out| out.write_all(report.as_bytes()))?;
    Ok(0)
}
