//! The command line: the `deja` command and its subcommands, each
//! subcommand's arguments defined next to the code that runs it (under
//! [`crate::commands`], [`crate::mcp`] and [`crate::ui`]).

use clap::{Parser, Subcommand};

use crate::commands::{
    aider::AiderArgs, blame::BlameArgs, completions::CompletionsArgs, config::ConfigArgs,
    context::ContextArgs, doctor::DoctorArgs, forget::ForgetArgs, index::IndexArgs,
    parse::ParseArgs, plugins::PluginsArgs, recall::RecallArgs, recap::RecapArgs,
    resume::ResumeArgs, sessions::SessionsArgs, setup::SetupArgs, show::ShowArgs, team::TeamArgs,
};
use crate::mcp::McpArgs;
use crate::ui::UiArgs;

/// deja: search what your AI coding agents discussed, by meaning and by words.
#[derive(Debug, Parser)]
#[command(name = "deja", version, about, long_about = None, max_term_width = 100)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// deja's commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Index every transcript the readers find (only what changed).
    Index(IndexArgs),
    /// Find past messages by meaning and by words.
    Recall(RecallArgs),
    /// List indexed sessions, newest first.
    Sessions(SessionsArgs),
    /// Print one session: messages, then files and commands.
    Show(ShowArgs),
    /// List the sessions that edited a file (FILE[:LINE]), newest first, with the message behind each edit.
    Blame(BlameArgs),
    /// Sum up a period (default: the last 7 days) per project and day: sessions, files changed most, sessions forgotten.
    Recap(RecapArgs),
    /// Print how to reopen a session in its harness (--write-back first recreates its transcript from the store).
    Resume(ResumeArgs),
    /// Remove sessions from the index for good (--dry-run, --list, --undo).
    Forget(ForgetArgs),
    /// Run the readers on a transcript file or folder and print the sessions, indexing nothing.
    Parse(ParseArgs),
    /// List reader plugins: name, version, ABI, harness, path and status.
    Plugins(PluginsArgs),
    /// Check the store, config, plugins, transcripts and model, with fixes for problems.
    Doctor(DoctorArgs),
    /// Print the effective configuration and where each value comes from.
    Config(ConfigArgs),
    /// Serve deja's memory to coding agents over the Model Context Protocol (stdio).
    Mcp(McpArgs),
    /// Wire deja into the agents: Claude Code, Codex CLI, Gemini CLI, Qwen Code, OpenCode, Kilo CLI, Copilot CLI, Factory droid, Cline CLI, aider; none: list them.
    Setup(SetupArgs),
    /// Share sessions with a team through PostgreSQL: push, pull, status.
    Team(TeamArgs),
    /// Print a project's memory as a short Markdown digest (for an agent's session start).
    Context(ContextArgs),
    /// Browse and search the memory in a local web page (on a loopback address of its own, opened through a one-time address).
    Ui(UiArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(CompletionsArgs),
    /// Start aider here, after recording this project so deja finds its history.
    #[command(disable_help_flag = true)]
    Aider(AiderArgs),
}
