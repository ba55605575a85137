//! `deja completions SHELL`: prints the shell completion script, generated
//! from the command line's own definition.

use anyhow::Result;
use clap_complete::Shell;

use crate::ExitStatus;

/// `deja completions`.
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Runs the command: `command` is the whole command line's definition.
pub fn run(shell: Shell, mut command: clap::Command) -> Result<ExitStatus> {
    let mut out = std::io::stdout().lock();
    clap_complete::generate(shell, &mut command, "deja", &mut out);
    Ok(ExitStatus::Success)
}
