//! `deja setup [AGENT|--all] [--dry-run] [--undo]`: wires deja into the
//! agents on this machine so that they use the memory without being told.
//! Each agent's wiring lives in [`crate::agents`]; this command only picks
//! the agents and prints what changed. With no agent it lists the agents it
//! knows: found or not, wired or not, and what setup would change.

use anyhow::Result;

use crate::agents::{self, Agent, Env, Wiring};
use crate::app::App;
use crate::json::setup as out;
use crate::output;
use crate::ExitStatus;

/// The agents setup knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Target {
    /// Claude Code: MCP server (user scope), SessionStart and PostToolUseFailure hooks.
    Claude,
    /// Codex CLI: MCP server in config.toml, SessionStart hook in hooks.json.
    Codex,
    /// Gemini CLI: an extension with the MCP server, a SessionStart hook and an AfterTool hook for failed shell commands.
    Gemini,
    /// Qwen Code: MCP server, SessionStart and PostToolUseFailure hooks.
    Qwen,
    /// OpenCode: MCP server and a plugin that adds the digest.
    Opencode,
    /// Kilo CLI: MCP server and a plugin that adds the digest (OpenCode's wiring).
    Kilo,
    /// GitHub Copilot CLI: MCP server in mcp-config.json.
    Copilot,
    /// Factory droid: MCP server in ~/.factory/mcp.json, SessionStart hook in settings.json.
    Droid,
    /// Cline CLI: MCP server in cline_mcp_settings.json.
    Cline,
    /// aider: a note in `read:` of `~/.aider.conf.yml` (`deja aider` passes each project's digest).
    Aider,
}

impl Target {
    /// The agent's wiring.
    pub fn agent(self) -> &'static dyn Agent {
        let name = match self {
            Target::Claude => "claude",
            Target::Codex => "codex",
            Target::Gemini => "gemini",
            Target::Qwen => "qwen",
            Target::Opencode => "opencode",
            Target::Kilo => "kilo",
            Target::Copilot => "copilot",
            Target::Droid => "droid",
            Target::Cline => "cline",
            Target::Aider => "aider",
        };
        // Every target is an agent of `agents::all()` (a unit test checks).
        agents::by_name(name).unwrap_or(&agents::aider::Aider)
    }
}

/// `deja setup` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct SetupArgs {
    /// The agent to wire deja into; none: list the agents and their wiring.
    pub agent: Option<Target>,
    /// Every agent found on this machine (with `--undo`: every agent wired).
    #[arg(long, conflicts_with = "agent")]
    pub all: bool,
    /// Print what would change, changing nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Remove what setup added.
    #[arg(long)]
    pub undo: bool,
    /// The list as JSON (with no agent).
    #[arg(long)]
    pub json: bool,
}

/// `wired`, `not wired`, `stale` or `unknown`, and the detail.
pub fn status(agent: &dyn Agent, env: &Env) -> (&'static str, Option<String>) {
    match agent.check(env) {
        Ok(Wiring::Wired) => ("wired", None),
        Ok(Wiring::Missing) => ("not wired", None),
        Ok(Wiring::Stale(why)) => ("stale", Some(why)),
        Err(e) => ("unknown", Some(format!("{e:#}"))),
    }
}

fn list(env: &Env, json: bool) -> Result<ExitStatus> {
    let rows: Vec<out::Agent> = agents::all()
        .into_iter()
        .map(|a| {
            let p = a.provides();
            let (status, _) = status(a, env);
            out::Agent {
                changes: a
                    .apply(env, true)
                    .unwrap_or_else(|e| vec![format!("cannot: {e:#}")]),
                failure_notes: p.failure_notes,
                found: a.found(env),
                mcp: p.mcp,
                name: a.name(),
                session_start: p.session_start,
                status,
                title: a.title(),
            }
        })
        .collect();
    if json {
        output::print_json(&rows)?;
        return Ok(ExitStatus::Success);
    }
    for r in &rows {
        println!(
            "{:<9} {:<13} {:<10} {}",
            r.name,
            r.title,
            r.status,
            r.found.as_deref().unwrap_or("not found on this machine")
        );
        for c in &r.changes {
            println!("{:<9} would {c}", "");
        }
    }
    output::hint("`deja setup AGENT` wires one agent, `deja setup --all` every agent found; `--dry-run` shows the changes, `--undo` takes them back");
    Ok(ExitStatus::Success)
}

fn report(agent: &dyn Agent, args: &SetupArgs, changes: &[String]) {
    if changes.is_empty() {
        eprintln!(
            "deja setup {}: nothing to change ({})",
            agent.name(),
            if args.undo {
                "nothing to undo"
            } else {
                "already set up"
            }
        );
    }
    for c in changes {
        if args.dry_run {
            println!("would {c}");
        } else {
            println!("{c}");
        }
    }
    if !args.undo {
        if let Some(h) = agent.hint() {
            output::hint(h);
        }
    }
}

/// Runs the command.
pub fn run(app: &App, args: &SetupArgs) -> Result<ExitStatus> {
    let env = Env::new(app)?;
    let chosen: Vec<&dyn Agent> = match (args.agent, args.all) {
        (Some(t), _) => vec![t.agent()],
        (None, true) if args.undo => agents::all().into_iter().collect(),
        (None, true) => agents::all()
            .into_iter()
            .filter(|a| a.found(&env).is_some())
            .collect(),
        (None, false) => return list(&env, args.json),
    };
    if chosen.is_empty() {
        eprintln!(
            "deja setup: no agent found on this machine (`deja setup` lists the ones deja knows)"
        );
        return Ok(ExitStatus::Success);
    }
    let mut failed = 0;
    for agent in chosen {
        let result = if args.undo {
            agent.undo(&env, args.dry_run)
        } else {
            agent.apply(&env, args.dry_run)
        };
        match result {
            Ok(changes) => report(agent, args, &changes),
            Err(e) if args.all => {
                failed += 1;
                eprintln!("deja setup {}: {e:#}", agent.name());
            }
            Err(e) => return Err(e.context(format!("deja setup {}", agent.name()))),
        }
    }
    Ok(if failed > 0 {
        ExitStatus::Incomplete
    } else {
        ExitStatus::Success
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn every_target_is_an_agent_of_that_name() {
        for t in Target::value_variants() {
            let name = t.to_possible_value().unwrap().get_name().to_string();
            assert_eq!(t.agent().name(), name);
        }
        assert_eq!(agents::all().len(), Target::value_variants().len());
    }
}
