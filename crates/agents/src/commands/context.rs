//! `deja context`: prints a project's digest ([`super::digest`]) as Markdown
//! or JSON. `--hook AGENT` answers an agent's hook instead
//! ([`super::hook`]).

use std::path::Path;

use anyhow::Result;

use super::digest::{digest_for, project_of};
use crate::app::App;
use crate::output;
use crate::{json, ExitStatus};

/// `deja context` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct ContextArgs {
    /// The project: a directory (default: the current one), a folder name or a harness project id.
    #[arg(long, value_name = "PROJECT")]
    pub project: Option<String>,
    /// Most bytes of the digest (default: `context.max_bytes`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(256..=1_000_000))]
    pub max_bytes: Option<u64>,
    /// Answer an agent's hook on stdout instead (reads the hook's input on stdin).
    #[arg(long, value_name = "AGENT", value_parser = super::hook::AGENTS)]
    pub hook: Option<String>,
    /// The hook's event (with `--hook`).
    #[arg(
        long = "on",
        value_name = "EVENT",
        value_enum,
        default_value = "session-start",
        requires = "hook"
    )]
    pub event: super::hook::Event,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(app: &App, args: &ContextArgs) -> Result<ExitStatus> {
    let max = args
        .max_bytes
        .map(|m| usize::try_from(m).unwrap_or(usize::MAX))
        .unwrap_or(app.config.config.context.max_bytes);
    if let Some(agent) = &args.hook {
        super::hook::run(app, agent, args.event, args.project.as_deref(), max)?;
        return Ok(ExitStatus::Success);
    }
    let project = match &args.project {
        Some(p) if Path::new(p).is_dir() => project_of(Path::new(p)),
        Some(p) => p.trim_end_matches('/').to_string(),
        None => project_of(&std::env::current_dir()?),
    };
    let d = digest_for(app, &project, max)?;
    if args.json {
        output::print_json(&json::context::Context {
            project: &project,
            sessions: &d.sessions,
            text: &d.text,
        })?;
    } else {
        print!("{}", d.text);
    }
    Ok(ExitStatus::Success)
}
