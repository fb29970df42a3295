//! `leasetrace init CASE [--force]`: looks at the files of a case folder and writes a draft
//! leasetrace.toml for the user to review (an existing one only with `--force`); what it found,
//! measured and left undecided is printed. The looking is the `init` room (docs/init.md).

use std::path::Path;

use crate::error::Error;

pub fn run(case: &Path, force: bool) -> Result<u8, Error> {
    let report = crate::init::run(case, force)?;
    super::write_stdout(false, |out| out.write_all(report.as_bytes()))?;
    Ok(0)
}
