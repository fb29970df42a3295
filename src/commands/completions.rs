//! `leasetrace completions SHELL`: the shell completion script, generated from the command-line
//! types (`cli`), on stdout.

use crate::error::Error;

pub fn run(shell: clap_complete::Shell) -> Result<u8, Error> {
    // Into memory first: clap_complete panics on a failed write instead of returning it.
    let mut script = Vec::new();
    crate::cli::write_completions(shell, &mut script);
    super::write_stdout(false, |out| out.write_all(&script))?;
    Ok(0)
}
