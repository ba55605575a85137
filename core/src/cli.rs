//! The command line: clap types only. Each subcommand's behaviour lives in
//! its own module under [`crate::commands`].

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// deja: search the transcripts your AI coding agents left on disk.
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
    /// List reader plugins: name, version, ABI, harness, path and status.
    Plugins {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run the readers on a transcript file or folder and print the sessions, indexing nothing.
    Parse(ParseArgs),
    /// Print the effective configuration and where each value comes from.
    Config {
        /// Print the default configuration file (every key documented) instead.
        #[arg(long)]
        default: bool,
    },
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
