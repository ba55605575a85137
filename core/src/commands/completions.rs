//! `deja completions SHELL`: prints the shell completion script, generated
//! from the command line's own definition.

use anyhow::Result;
use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::Cli;
use crate::ExitStatus;

/// Runs the command.
pub fn run(shell: Shell) -> Result<ExitStatus> {
    let mut command = Cli::command();
    let mut out = std::io::stdout().lock();
    clap_complete::generate(shell, &mut command, "deja", &mut out);
    Ok(ExitStatus::Success)
}
