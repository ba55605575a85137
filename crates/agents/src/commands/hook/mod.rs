//! `deja context --hook AGENT [--on EVENT]`: the answer to an agent's hook,
//! JSON in on stdin and JSON out on stdout, never blocking the session (a
//! failure still answers, with nothing added).
//!
//! - `session-start` (the default): the project's digest, for Claude Code,
//!   Codex CLI, Gemini CLI, Qwen Code and droid's SessionStart hooks, never listing
//!   the session that starts (or resumes, clears, compacts). The session is
//!   also recorded as its agent's live session ([`live`]), which deja's MCP
//!   server of the same agent never answers with.
//! - `tool-failure`: when a command fails (Claude Code's and Qwen Code's
//!   PostToolUseFailure, Gemini CLI's AfterTool for a shell command that
//!   exited non-zero), the error is looked up by its words alone (no model
//!   loads) in earlier sessions; when one met the same error, a short framed
//!   note names it and what was done next ([`note`]). At most once per error
//!   text per session ([`seen`]), bounded by `context.note_max_bytes`,
//!   silent when nothing matches, and never about the session that asks.
//!
//! `context.inject = false` (or the agent in `context.inject_off`) makes
//! every hook answer empty.

pub mod input;
pub mod live;
pub mod note;
pub mod seen;

use std::path::PathBuf;

use anyhow::Result;

pub use input::Input;
pub use note::{error_lines, failure_note};

use crate::app::App;
use crate::json;

/// The agents whose hooks deja answers.
pub const AGENTS: [&str; 5] = ["claude", "codex", "gemini", "qwen", "droid"];

/// The hook events deja answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Event {
    /// A session starts (or resumes, clears, compacts): the project's digest.
    SessionStart,
    /// A tool call failed: a note when an earlier session met the error.
    ToolFailure,
}

/// Whether hooks of `agent` may add anything.
pub fn inject(app: &App, agent: &str) -> bool {
    let c = &app.config.config.context;
    c.inject && !c.inject_off.iter().any(|a| a == agent)
}

/// The answer to a hook: `{"hookSpecificOutput": {...}}`, or `{}`.
pub fn answer(event: &str, context: Option<&str>) -> Result<String> {
    let answer = json::context::Hook {
        hook_specific_output: context.map(|text| json::context::HookOutput {
            additional_context: text,
            hook_event_name: event,
        }),
    };
    Ok(serde_json::to_string(&answer)?)
}

/// Records the session that starts as its agent's live session (whatever
/// `context.inject` says: leaving it out of answers is no injection).
fn record_live(app: &App, agent: &str, input: &Input) {
    let (Some(session), Some(process)) = (input.session_id(), live::agent()) else {
        return;
    };
    let cwd = input.cwd();
    if let Err(e) = live::record(
        &app.paths.data_dir,
        &process,
        agent,
        session,
        cwd.as_deref(),
    ) {
        eprintln!("deja context: the live session was not recorded: {e:#}");
    }
}

/// The digest for the session that starts, without that session.
fn session_start(
    app: &App,
    input: &Input,
    project: Option<&str>,
    max_bytes: usize,
) -> Option<String> {
    let dir = project
        .map(PathBuf::from)
        .or_else(|| input.cwd())
        .or_else(|| std::env::current_dir().ok())?;
    let own: Vec<String> = input.session_id().map(str::to_string).into_iter().collect();
    match super::digest::digest_excluding(app, &super::digest::project_of(&dir), max_bytes, &own) {
        Ok(d) => Some(d.text),
        Err(e) => {
            eprintln!("deja context: {e:#}");
            None
        }
    }
}

/// Runs the hook: prints its answer (always, `{}` when there is nothing to add).
pub fn run(
    app: &App,
    agent: &str,
    event: Event,
    project: Option<&str>,
    max_bytes: usize,
) -> Result<()> {
    let input = Input::read();
    if event == Event::SessionStart {
        record_live(app, agent, &input);
    }
    let text = if !inject(app, agent) {
        None
    } else {
        match event {
            Event::SessionStart => session_start(app, &input, project, max_bytes),
            Event::ToolFailure => {
                let cap = app.config.config.context.note_max_bytes;
                match failure_note(app, agent, &input, cap) {
                    Ok(note) => note,
                    Err(e) => {
                        eprintln!("deja context: {e:#}");
                        None
                    }
                }
            }
        }
    };
    let name = match (event, agent) {
        (Event::SessionStart, _) => "SessionStart",
        (Event::ToolFailure, "gemini") => "AfterTool",
        (Event::ToolFailure, _) => "PostToolUseFailure",
    };
    println!("{}", answer(name, text.as_deref())?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn an_empty_answer_is_an_empty_object() {
        assert_eq!(answer("SessionStart", None).unwrap(), "{}");
        let a: Value =
            serde_json::from_str(&answer("PostToolUseFailure", Some("n")).unwrap()).unwrap();
        assert_eq!(
            a["hookSpecificOutput"]["hookEventName"],
            "PostToolUseFailure"
        );
        assert_eq!(a["hookSpecificOutput"]["additionalContext"], "n");
    }
}
