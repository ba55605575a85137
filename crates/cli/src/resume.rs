//! `deja resume ID`: how to reopen a session in its harness, as its reader
//! advises; `--run` runs that command in that directory; `--write-back`
//! first recreates the session's transcript from the store ([`writeback`]).

use anyhow::{anyhow, bail, Context, Result};

use crate::app::App;
use crate::output;
use crate::{json, ExitStatus};
use deja_host::Resume;

/// `deja resume`.
#[derive(Debug, clap::Args)]
pub struct ResumeArgs {
    /// A session id (deja's or the harness's), or a unique prefix.
    pub id: String,
    /// Run the command in the session's directory.
    #[arg(long)]
    pub run: bool,
    /// Recreate the session's transcript from deja's store, in the agent's
    /// own format where the agent looks for it (Claude Code, Qwen Code,
    /// Gemini CLI, Codex CLI), when it is gone; never replaces a file.
    #[arg(long)]
    pub write_back: bool,
    /// With --write-back: print the file it would write and its message
    /// count; write nothing.
    #[arg(long, requires = "write_back", conflicts_with = "run")]
    pub dry_run: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Quotes `s` for a POSIX shell when it needs it.
fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// Says that session `id` cannot be resumed here, and why (exit 2).
fn refuse(id: &str, message: &str, as_json: bool) -> Result<ExitStatus> {
    if as_json {
        output::print_json(&json::resume::Refused {
            refused: message,
            session_id: id,
        })?;
    }
    output::error(&format!("session `{id}`: {message}"));
    Ok(ExitStatus::Error)
}

/// How to reopen a session.
pub enum Advice {
    /// The command that does, in `cwd`.
    Command {
        /// The program and its arguments.
        argv: Vec<String>,
        /// Where to run it.
        cwd: Option<String>,
        /// What the reader says about it (may be empty).
        note: String,
        /// The whole command as one shell line (`cd DIR && ...`).
        line: String,
    },
    /// Why it cannot be reopened here.
    Refused(String),
}

/// How `row` can be reopened, as its reader advises.
pub fn advise(app: &App, row: &deja_store::SessionRow) -> Result<Advice> {
    if let Some(origin) = &row.origin {
        // Pulled from the team store: its transcript, and the harness state
        // that resuming needs, are on the machine that published it.
        return Ok(Advice::Refused(format!(
            "it lives on another machine, {origin} (pulled from the team store); resume it there with `deja resume {id}`, or read it here with `deja show {id}`",
            id = row.id
        )));
    }
    let plugin = app.host().get(&row.harness).ok_or_else(|| {
        anyhow!(
            "no loaded reader for harness `{}`, which wrote session `{}`; see `deja plugins`",
            row.harness,
            row.id
        )
    })?;
    let context = app.context_for(&row.harness)?;
    let source = row.source_path.as_deref().filter(|_| row.has_source);
    let advice = plugin.resume(
        &row.id,
        &row.native_id,
        row.project.dir.as_deref(),
        source,
        &context,
    )?;
    Ok(match advice {
        Resume::Refused(message) => Advice::Refused(message),
        Resume::Command { argv, cwd, note } => {
            let command = argv
                .iter()
                .map(|a| shell_quote(a))
                .collect::<Vec<_>>()
                .join(" ");
            let line = match &cwd {
                Some(dir) => format!("cd {} && {command}", shell_quote(dir)),
                None => command,
            };
            Advice::Command {
                argv,
                cwd,
                note,
                line,
            }
        }
    })
}

/// Runs the command.
pub fn run(app: &App, args: &ResumeArgs) -> Result<ExitStatus> {
    let (run_it, as_json) = (args.run, args.json);
    let store = crate::select::open_read(app)?;
    let mut row = crate::select::pick_session(&store, &args.id)?;
    let mut written = None;
    if args.write_back {
        match crate::writeback::write_back(app, &store, &row, args.dry_run)? {
            crate::writeback::Outcome::Refused(message) => {
                return refuse(&row.id, &message, as_json)
            }
            crate::writeback::Outcome::Planned(plan) => {
                crate::writeback::report(&row, &plan, None, true, as_json)?;
                return Ok(ExitStatus::Success);
            }
            crate::writeback::Outcome::Written(plan) => {
                // The session is now this machine's, in the agent's folder.
                row.origin = None;
                row.source_path = Some(plan.path.to_string_lossy().into_owned());
                row.has_source = true;
                written = Some(plan);
            }
        }
    }
    match advise(app, &row)? {
        // The reader's message says who cannot and why.
        Advice::Refused(message) => refuse(&row.id, &message, as_json),
        Advice::Command {
            argv,
            cwd,
            note,
            line,
        } => {
            let Some((program, rest)) = argv.split_first() else {
                bail!("the {} reader advised an empty command", row.harness);
            };
            if !note.is_empty() {
                output::warn(&note);
            }
            if let Some(dir) = cwd.as_deref().filter(|d| !std::path::Path::new(d).is_dir()) {
                if !run_it {
                    output::warn(&format!(
                        "the session's directory `{dir}` does not exist on this machine; the command works where it does"
                    ));
                }
            }
            let command = json::resume::Command {
                argv: &argv,
                cwd: cwd.as_deref(),
                note: &note,
                session_id: &row.id,
                shell: &line,
            };
            if let Some(plan) = &written {
                crate::writeback::report(&row, plan, Some(command), false, as_json)?;
            } else if as_json {
                output::print_json(&command)?;
            }
            if !as_json && !run_it {
                println!("{line}");
            }
            if !run_it {
                return Ok(ExitStatus::Success);
            }
            let mut cmd = std::process::Command::new(program);
            cmd.args(rest);
            if let Some(dir) = &cwd {
                if !std::path::Path::new(dir).is_dir() {
                    bail!("the session's directory `{dir}` does not exist any more");
                }
                cmd.current_dir(dir);
            }
            let status = cmd.status().with_context(|| {
                format!("cannot run `{program}` (is it installed and on PATH?)")
            })?;
            std::process::exit(status.code().unwrap_or(2));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::shell_quote;

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("gemini"), "gemini");
        assert_eq!(shell_quote("/a b/it's"), r"'/a b/it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
