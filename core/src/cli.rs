//! The command line: clap types only. Each subcommand's behaviour lives in
//! its own module under [`crate::commands`].

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

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
    Show {
        /// A session id (deja's or the harness's) or a unique prefix; or a
        /// hit's message id (`<session>#<index>` or the harness's message
        /// id), which opens the session at that message.
        id: String,
        /// Show message N (its index, `#N` in recall's output) and its neighbours.
        #[arg(long, value_name = "N")]
        around: Option<usize>,
        /// Messages shown before it (default 3 with --around or a message id).
        #[arg(long, value_name = "N")]
        before: Option<usize>,
        /// Messages shown after it (default 3 with --around or a message id).
        #[arg(long, value_name = "N")]
        after: Option<usize>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print how to reopen a session in its harness.
    Resume {
        /// A session id (deja's or the harness's), or a unique prefix.
        id: String,
        /// Run the command in the session's directory.
        #[arg(long)]
        run: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove sessions from the index for good (--dry-run, --list, --undo).
    Forget(ForgetArgs),
    /// Run the readers on a transcript file or folder and print the sessions, indexing nothing.
    Parse(ParseArgs),
    /// List reader plugins: name, version, ABI, harness, path and status.
    Plugins {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Check the store, config, plugins, transcripts and model, with fixes for problems.
    Doctor {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print the effective configuration and where each value comes from.
    Config {
        /// Print the default configuration file (every key documented) instead.
        #[arg(long)]
        default: bool,
    },
    /// Serve deja's memory to coding agents over the Model Context Protocol (stdio).
    Mcp {
        /// Also send each answer as structured content (JSON). Off by
        /// default: agents that hand the model the structured content would
        /// show it the memory outside its untrusted-memory frame.
        #[arg(long)]
        structured: bool,
    },
    /// Wire deja into the agents: Claude Code, Codex CLI, Gemini CLI, Qwen Code, OpenCode, aider; none: list them.
    Setup(crate::commands::setup::SetupArgs),
    /// Share sessions with a team through PostgreSQL: push, pull, status.
    Team(crate::commands::team::TeamArgs),
    /// Print a project's memory as a short Markdown digest (for an agent's session start).
    Context(crate::commands::context::ContextArgs),
    /// Browse and search the memory in a local web page (127.0.0.1 only, with a per-run token).
    Ui(crate::ui::UiArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Start aider here, after recording this project so deja finds its history.
    #[command(disable_help_flag = true)]
    Aider {
        /// Arguments passed to aider unchanged.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<std::ffi::OsString>,
    },
}

/// Most sessions `deja sessions -n` lists.
pub const SESSIONS_MAX_LIMIT: usize = 1_000_000;

/// A count between `least` and `most`, or the error clap prints.
fn bounded(text: &str, least: usize, most: usize) -> Result<usize, String> {
    let wrong = || format!("must be a whole number from {least} to {most}");
    let n: usize = text.trim().parse().map_err(|_| wrong())?;
    if (least..=most).contains(&n) {
        Ok(n)
    } else {
        Err(wrong())
    }
}

/// `deja recall -n`: 1 to [`deja_config::RECALL_MAX_LIMIT`], like `recall.limit`.
fn recall_limit(text: &str) -> Result<usize, String> {
    bounded(text, 1, deja_config::RECALL_MAX_LIMIT)
}

/// `deja sessions -n`: 1 to [`SESSIONS_MAX_LIMIT`].
fn sessions_limit(text: &str) -> Result<usize, String> {
    bounded(text, 1, SESSIONS_MAX_LIMIT)
}

/// Filters shared by listing and searching.
#[derive(Debug, Args, Clone, Default)]
pub struct FilterArgs {
    /// Only this harness (e.g. aider, gemini).
    #[arg(long, value_name = "NAME")]
    pub harness: Option<String>,
    /// Only this project: a directory, a folder name or a project id.
    #[arg(long, value_name = "PROJECT")]
    pub project: Option<String>,
    /// Only sessions started at or after DATE (YYYY-MM-DD, RFC 3339, today, 7d, ...).
    #[arg(long, value_name = "DATE", allow_hyphen_values = true)]
    pub since: Option<String>,
    /// Only sessions started before DATE.
    #[arg(long, value_name = "DATE", allow_hyphen_values = true)]
    pub until: Option<String>,
    /// Only sessions pulled from this origin of the team store (user@machine, or user for all their machines).
    #[arg(long, value_name = "WHO", conflicts_with = "mine")]
    pub origin: Option<String>,
    /// Only this machine's own sessions (none pulled from the team store).
    #[arg(long)]
    pub mine: bool,
}

/// `deja index`.
#[derive(Debug, Args)]
pub struct IndexArgs {
    /// Exit at once if another index is running, instead of waiting.
    #[arg(long)]
    pub no_wait: bool,
    /// Print a JSON summary.
    #[arg(long)]
    pub json: bool,
}

/// Ranking modes.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ModeArg {
    /// Semantic and lexical, fused.
    Hybrid,
    /// By meaning only.
    Semantic,
    /// By words only.
    Lexical,
}

impl From<ModeArg> for deja_config::Mode {
    fn from(m: ModeArg) -> Self {
        match m {
            ModeArg::Hybrid => deja_config::Mode::Hybrid,
            ModeArg::Semantic => deja_config::Mode::Semantic,
            ModeArg::Lexical => deja_config::Mode::Lexical,
        }
    }
}

/// Message roles.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum RoleArg {
    /// What you wrote.
    User,
    /// What the model wrote.
    Assistant,
}

impl From<RoleArg> for deja_model::Role {
    fn from(r: RoleArg) -> Self {
        match r {
            RoleArg::User => deja_model::Role::User,
            RoleArg::Assistant => deja_model::Role::Assistant,
        }
    }
}

/// `deja recall`.
#[derive(Debug, Args)]
pub struct RecallArgs {
    /// What to look for, in your own words.
    #[arg(required = true, num_args = 1..)]
    pub query: Vec<String>,
    /// Number of hits, 1 to 1000 (default: `recall.limit`).
    #[arg(short = 'n', long, value_name = "N", value_parser = recall_limit)]
    pub limit: Option<usize>,
    /// Filters.
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Only messages by this role.
    #[arg(long)]
    pub role: Option<RoleArg>,
    /// Ranking (default: `recall.mode`).
    #[arg(long)]
    pub mode: Option<ModeArg>,
    /// At most N hits from one session (default `recall.per_session`, 2; 0: no cap); the others are counted.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(0..=1000))]
    pub per_session: Option<u16>,
    /// Do not read transcripts that changed since the last index first (`recall.refresh`).
    #[arg(long)]
    pub no_refresh: bool,
    /// Show the Nth session of the list in context, at its best message (as `deja show ID --around I`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub open: Option<u16>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `deja sessions`.
#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// Filters.
    #[command(flatten)]
    pub filter: FilterArgs,
    /// At most this many sessions, 1 to 1000000 (default: all).
    #[arg(short = 'n', long, value_name = "N", value_parser = sessions_limit)]
    pub limit: Option<usize>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `deja forget`.
#[derive(Debug, Args)]
pub struct ForgetArgs {
    /// Session ids (deja's or the harness's), or unique prefixes; with
    /// --undo, ids of forgotten sessions.
    pub ids: Vec<String>,
    /// Every session of this harness.
    #[arg(long, value_name = "NAME")]
    pub harness: Option<String>,
    /// Every session of this project.
    #[arg(long, value_name = "PROJECT")]
    pub project: Option<String>,
    /// Every session started before DATE.
    #[arg(long, value_name = "DATE", allow_hyphen_values = true)]
    pub before: Option<String>,
    /// List what would be forgotten, changing nothing.
    #[arg(long, conflicts_with_all = ["list", "undo"])]
    pub dry_run: bool,
    /// List the forgotten sessions (their tombstones) instead.
    #[arg(long, conflicts_with_all = ["ids", "harness", "project", "before", "undo", "yes"])]
    pub list: bool,
    /// Lift the tombstones of the forgotten sessions IDS, so that the next
    /// `deja index` brings them back from their transcripts.
    #[arg(long, requires = "ids", conflicts_with_all = ["harness", "project", "before", "yes"])]
    pub undo: bool,
    /// Do not ask for confirmation.
    #[arg(short, long)]
    pub yes: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `deja parse`.
#[derive(Debug, Args)]
pub struct ParseArgs {
    /// A transcript file or a folder holding transcripts.
    pub path: PathBuf,
    /// Use this harness's reader instead of detecting it.
    #[arg(long, value_name = "NAME")]
    pub harness: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}
