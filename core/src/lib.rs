//! The deja host: loads reader plugins, keeps the index, answers recall.
//!
//! Data flows one module per step: [`plugin_host`] finds and loads readers,
//! [`transcripts`] reads files, the readers parse them into [`model`] types,
//! and [`commands`] drives each subcommand, printing through [`output`] and [`json`].

pub mod app;
pub mod cli;
pub mod commands;
pub mod json;
pub mod model;
pub mod output;
pub mod paths;
pub mod plugin_host;
pub mod transcripts;

/// How a command ended, mapped to the process exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// 0: done (with results, for searches).
    Success,
    /// 1: a search found nothing.
    NoResults,
    /// 2: something failed.
    Error,
}

impl ExitStatus {
    /// The process exit code.
    pub fn code(self) -> i32 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::NoResults => 1,
            ExitStatus::Error => 2,
        }
    }
}

/// Runs a parsed command line.
pub fn run(cli: cli::Cli) -> anyhow::Result<ExitStatus> {
    use cli::Command;
    let app = app::App::new()?;
    match cli.command {
        Command::Plugins { json } => commands::plugins::run(&app, json),
        Command::Parse(args) => commands::parse::run(&app, &args),
        Command::Config { default } => commands::config::run(&app, default),
    }
}
