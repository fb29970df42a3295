//! `leasetrace man [COMMAND] [--dir DIR]`: the manual page (roff) of leasetrace or of one command
//! on stdout, or with `--dir` every page written into DIR and their paths printed.

use std::path::Path;

use crate::error::Error;

pub fn run(command: Option<&str>, dir: Option<&Path>) -> Result<u8, Error> {
    if let Some(dir) = dir {
        let paths = crate::cli::write_man_pages(dir)?;
        super::write_stdout(false, |out| paths.iter().try_for_each(|path| writeln!(out, "{}", path.display())))?;
    } else {
        let mut page = Vec::new();
        crate::cli::write_man(command, &mut page)?;
        super::write_stdout(false, |out| out.write_all(&page))?;
    }
    Ok(0)
}
