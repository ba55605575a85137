//! `deja show ID`: one session in full (messages with roles and times, then
//! the files and commands it touched), or the part of it around one message
//! (`--around N`, or a hit's message id). A long session on a terminal goes
//! through the pager (`$PAGER`, else `less`); piped output never does.

use std::fmt::Write as _;

use anyhow::{bail, Result};
use deja_store::{SessionRow, Store};

use crate::app::App;
use crate::output::{self, local_short, Style};
use crate::{json, ExitStatus};

/// `deja show`.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// A session id (deja's or the harness's) or a unique prefix; or a
    /// hit's message id (`<session>#<index>` or the harness's message
    /// id), which opens the session at that message.
    pub id: String,
    /// Show message N (its index, `#N` in recall's output) and its neighbours.
    #[arg(long, value_name = "N")]
    pub around: Option<usize>,
    /// Messages shown before it (default 3 with --around or a message id).
    #[arg(long, value_name = "N")]
    pub before: Option<usize>,
    /// Messages shown after it (default 3 with --around or a message id).
    #[arg(long, value_name = "N")]
    pub after: Option<usize>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Which messages to show.
#[derive(Debug, Clone, Copy, Default)]
pub struct Window {
    /// The message to centre on.
    pub around: Option<usize>,
    /// Messages before it.
    pub before: Option<usize>,
    /// Messages after it.
    pub after: Option<usize>,
}

/// Neighbours shown on each side of a message by default.
const NEIGHBOURS: usize = 3;

/// The session `id` names and the message it points at, if it names one:
/// a session id or prefix; `<session>#<index>`; a harness message id.
fn resolve(store: &Store, id: &str) -> Result<(SessionRow, Option<usize>)> {
    let id = id.trim();
    if let Some((session, index)) = id.rsplit_once('#') {
        if let Ok(index) = index.parse::<usize>() {
            return Ok((crate::select::pick_session(store, session)?, Some(index)));
        }
    }
    if store.find_sessions(id, 1)?.total > 0 {
        return Ok((crate::select::pick_session(store, id)?, None));
    }
    let found = store.find_message(id, 6)?;
    match found.as_slice() {
        [] => Ok((crate::select::pick_session(store, id)?, None)),
        [(session, index)] => Ok((crate::select::pick_session(store, session)?, Some(*index))),
        many => {
            let list: Vec<String> = many
                .iter()
                .take(5)
                .map(|(s, i)| format!("  {s}#{i}"))
                .collect();
            bail!(
                "message id `{id}` is in {} sessions; name one:\n{}",
                if many.len() > 5 {
                    "more than 5".to_string()
                } else {
                    many.len().to_string()
                },
                list.join("\n")
            )
        }
    }
}

/// Runs the command.
pub fn run(app: &App, id: &str, window: Window, as_json: bool) -> Result<ExitStatus> {
    let store = crate::select::open_read(app)?;
    let (row, pointed) = resolve(&store, id)?;
    let session = store.load_session(&row)?;
    let total = session.messages.len();
    let target = window.around.or(pointed);
    if let Some(t) = target {
        if t >= total {
            bail!(
                "session {} has {} (indexes 0 to {}); there is no message {t}",
                session.id,
                if total == 1 {
                    "1 message".to_string()
                } else {
                    format!("{total} messages")
                },
                total.saturating_sub(1)
            );
        }
    } else if window.before.is_some() || window.after.is_some() {
        bail!("--before and --after need a message: give --around N or a message id (`<session>#<index>`)");
    }
    let range = match target {
        Some(t) => {
            let before = window.before.unwrap_or(NEIGHBOURS);
            let after = window.after.unwrap_or(NEIGHBOURS);
            t.saturating_sub(before)..t.saturating_add(after).saturating_add(1).min(total)
        }
        None => 0..total,
    };
    if as_json {
        let mut out = json::Session::new(&session, row.source_path.as_deref().map(Into::into));
        out.source_present = Some(row.has_source);
        out.origin = row.origin.as_deref();
        if let Some(t) = target {
            out.messages.truncate(range.end);
            out.messages.drain(..range.start);
            out.window = Some(json::Window {
                around: t,
                from: range.start,
                to: range.end,
                total,
            });
        }
        output::print_json(&out)?;
        return Ok(ExitStatus::Success);
    }
    let s = Style::stdout();
    let mut out = String::new();
    let line = deja_render::term::line;
    let _ = writeln!(out, "{} {}", s.bold("session"), s.cyan(&line(&session.id)));
    let _ = writeln!(
        out,
        "harness   {} (id {})",
        line(&session.harness),
        line(&session.native_id)
    );
    if let Some(dir) = session
        .project
        .dir
        .as_deref()
        .or(session.project.name.as_deref())
        .or(session.project.id.as_deref())
    {
        let _ = writeln!(out, "project   {}", line(dir));
    }
    let _ = writeln!(
        out,
        "started   {}",
        output::dated(session.started_at_ms, session.date_approximate)
    );
    if let Some(t) = &session.title {
        let _ = writeln!(out, "title     {}", line(t));
    }
    if let Some(p) = &session.parent_id {
        let _ = writeln!(out, "parent    {}", line(p));
    }
    let children = store.children(&session.id)?;
    if !children.is_empty() {
        let ids: Vec<String> = children.iter().take(5).map(|c| line(&c.id)).collect();
        let more = children.len().saturating_sub(ids.len());
        let _ = writeln!(
            out,
            "subagents {}{}",
            ids.join(", "),
            if more > 0 {
                format!(" (and {more} more)")
            } else {
                String::new()
            }
        );
    }
    if let Some(origin) = &row.origin {
        let _ = writeln!(
            out,
            "from      {} (pulled from the team store)",
            line(origin)
        );
    }
    if row.in_code_folder {
        let _ = writeln!(
            out,
            "found     in a code folder (it may have come with a cloned repository)"
        );
    }
    match (&row.source_path, row.has_source) {
        (Some(p), true) => {
            let _ = writeln!(out, "source    {p}");
        }
        (Some(p), false) => {
            let _ = writeln!(out, "source    {p} (gone; the session is kept)");
        }
        _ => {}
    }
    if target.is_some() {
        let _ = writeln!(
            out,
            "messages  {} to {} of {total}",
            range.start,
            range.end.saturating_sub(1)
        );
    }
    for (i, m) in session
        .messages
        .iter()
        .enumerate()
        .take(range.end)
        .skip(range.start)
    {
        let _ = writeln!(out);
        let mark = if Some(i) == target { "▶ " } else { "" };
        let _ = writeln!(
            out,
            "{} {}",
            s.bold(&format!("── {mark}#{i} {} ", m.role.as_str())),
            s.dim(&local_short(m.timestamp_ms))
        );
        let _ = writeln!(out, "{}", deja_render::clean(&m.text));
    }
    if target.is_none() {
        if !session.files.is_empty() {
            let _ = writeln!(out);
            let _ = writeln!(out, "{}", s.bold("files"));
            for f in &session.files {
                let _ = writeln!(out, "  {:<9} {}", line(f.action), line(&f.path));
            }
        }
        if !session.commands.is_empty() {
            let _ = writeln!(out);
            let _ = writeln!(out, "{}", s.bold("commands"));
            for c in &session.commands {
                let failed = match (c.outcome.status, c.outcome.exit_code) {
                    (deja_model::OutcomeStatus::Failed, Some(code)) => {
                        format!("  {}", s.red(&format!("(failed, exit {code})")))
                    }
                    (deja_model::OutcomeStatus::Failed, None) => {
                        format!("  {}", s.red("(failed)"))
                    }
                    _ => String::new(),
                };
                let _ = writeln!(out, "  {:<5} {}{failed}", c.origin, line(&c.command));
            }
        }
    }
    output::page(&out)?;
    Ok(ExitStatus::Success)
}
