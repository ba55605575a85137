//! `deja forget`: removes sessions and everything derived from them, and
//! records tombstones so that `deja index` never brings them back;
//! `--dry-run` lists what would go, `--list` shows the tombstones and
//! `--undo` lifts one so that the next `deja index` restores its session.

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Result};
use clap::Args;

use crate::app::App;
use crate::lock::{self, Wait};
use crate::output::{self, local_short, Style};
use crate::{json, ExitStatus};
use deja_store::forget::Tombstone;
use deja_store::query::SessionRow;
use deja_store::Store;

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

/// Matches of an ambiguous id listed before saying how many more there are.
const LISTED: usize = 10;

/// "1 session", "2 sessions".
fn sessions(n: usize) -> String {
    if n == 1 {
        "1 session".to_string()
    } else {
        format!("{n} sessions")
    }
}

/// Runs the command.
pub fn run(app: &App, args: &ForgetArgs) -> Result<ExitStatus> {
    if args.list {
        return list(app, args.json);
    }
    if args.undo {
        return undo(app, args);
    }
    let has_filter = args.harness.is_some() || args.project.is_some() || args.before.is_some();
    if args.ids.is_empty() && !has_filter {
        bail!(
            "name the sessions to forget: IDs, or --harness / --project / --before\n\
             hint: `deja forget --list` lists the forgotten sessions, `--undo ID` brings one back"
        );
    }
    if args.dry_run {
        let store = crate::select::open_read(app)?;
        let rows = select(app, &store, args, false)?.unwrap_or_default();
        print_sessions(&rows, true, args.json)?;
        eprintln!(
            "would forget {}; nothing changed (dry run)",
            sessions(rows.len())
        );
        return Ok(ExitStatus::Success);
    }
    let (_lock, mut store) = open_write(app)?;
    let Some(rows) = select(app, &store, args, !args.yes)? else {
        eprintln!("nothing forgotten");
        return Ok(ExitStatus::Success);
    };
    if rows.is_empty() {
        if args.json {
            print_sessions(&rows, false, true)?;
        }
        eprintln!("no session matches; nothing forgotten");
        return Ok(ExitStatus::Success);
    }
    let Forgotten { n, scrub_pending } = forget_rows(app, &mut store, &rows)?;
    if args.json {
        print_sessions(&rows, false, true)?;
    }
    eprintln!(
        "forgot {}; `deja index` will not bring {} back (`deja forget --undo ID` would)",
        sessions(n),
        if n == 1 { "it" } else { "them" }
    );
    if scrub_pending {
        // Forgotten, but not yet erased from every file: exit 3.
        output::warn(crate::indexing::SCRUB_PENDING);
        return Ok(ExitStatus::Incomplete);
    }
    Ok(ExitStatus::Success)
}

/// The writer lock (waiting up to `index.lock_wait_secs`) and the store
/// opened for writing under it.
fn open_write(app: &App) -> Result<(lock::WriterLock, Store)> {
    open_write_waiting(
        app,
        Wait::Up(Duration::from_secs(app.config.config.index.lock_wait_secs)),
    )
}

/// The writer lock (waiting as `wait` says) and the store opened for
/// writing under it.
fn open_write_waiting(app: &App, wait: Wait) -> Result<(lock::WriterLock, Store)> {
    let held = lock::acquire(&app.paths.lock_file(), wait, &mut |m| output::warn(m))?;
    Ok((held, Store::open(&app.paths.database())?))
}

/// What forgetting did.
#[derive(Debug, Clone, Copy)]
pub struct Forgotten {
    /// Sessions forgotten.
    pub n: usize,
    /// Whether some file still holds their text (a scrub is pending).
    pub scrub_pending: bool,
}

/// Forgets `rows` in `store` (opened for writing, under the writer lock)
/// and drops their vectors. A scrub an earlier run left pending is finished
/// by this one too.
pub fn forget_rows(app: &App, store: &mut Store, rows: &[SessionRow]) -> Result<Forgotten> {
    let n = store.forget(rows)?;
    deja_store::vectors::sync_after_change(store, &app.paths.vectors())?;
    Ok(Forgotten {
        n,
        scrub_pending: store.scrub_pending()?,
    })
}

/// Forgets the session `id` names (an id or a unique prefix), under the
/// writer lock (waiting for it as `wait` says), as `deja forget ID --yes`
/// does; returns its row and what forgetting did.
pub fn forget_one(app: &App, id: &str, wait: Wait) -> Result<(SessionRow, Forgotten)> {
    let (_lock, mut store) = open_write_waiting(app, wait)?;
    let row = crate::select::pick_session(&store, id)?;
    let done = forget_rows(app, &mut store, std::slice::from_ref(&row))?;
    Ok((row, done))
}

/// The sessions the ids and filters name, without duplicates; `None` when
/// the user declined at the prompt (asked only when `ask` and filters
/// selected some).
fn select(
    app: &App,
    store: &Store,
    args: &ForgetArgs,
    ask: bool,
) -> Result<Option<Vec<SessionRow>>> {
    let mut rows: Vec<SessionRow> = Vec::new();
    for id in &args.ids {
        rows.push(crate::select::pick_session(store, id)?);
    }
    let has_filter = args.harness.is_some() || args.project.is_some() || args.before.is_some();
    if has_filter {
        crate::select::check_filters(app, store, args.harness.as_deref(), args.project.as_deref())?;
        let filter = deja_store::query::SessionFilter {
            harness: args.harness.clone(),
            project: args.project.clone(),
            since: None,
            until: match &args.before {
                Some(b) => Some(
                    crate::dates::parse(b, chrono::Utc::now())
                        .map_err(|e| anyhow::anyhow!("--before: {e}"))?,
                ),
                None => None,
            },
            origin: None,
            exclude: Vec::new(),
            skip_code_folders: false,
        };
        let matched = store.sessions(&filter, None)?;
        if !matched.is_empty() && ask && !confirm(&matched)? {
            return Ok(None);
        }
        rows.extend(matched);
    }
    rows.sort_by_key(|r| r.row);
    rows.dedup_by_key(|r| r.row);
    Ok(Some(rows))
}

/// Prints the sessions forgotten (or, in a dry run, that would be): JSON
/// when asked, else one line each on stdout for a dry run.
fn print_sessions(rows: &[SessionRow], dry_run: bool, as_json: bool) -> Result<()> {
    if as_json {
        return output::print_json(&json::forget::Forgotten {
            dry_run,
            forgotten: rows.iter().map(json::forget::Session::from).collect(),
        });
    }
    if dry_run {
        // Listed as `deja sessions` lists them, newest first.
        let mut sorted = rows.to_vec();
        sorted.sort_by(|a, b| {
            b.started_at
                .cmp(&a.started_at)
                .then_with(|| a.id.cmp(&b.id))
        });
        super::sessions::print_rows(&sorted);
    }
    Ok(())
}

/// Whether the transcript a tombstone names is still there (`None`: it
/// names none).
fn transcript_present(t: &Tombstone) -> Option<bool> {
    t.source_path.as_deref().map(|p| Path::new(p).exists())
}

/// `deja forget --list`: the tombstones, most recently forgotten first.
fn list(app: &App, as_json: bool) -> Result<ExitStatus> {
    let store = crate::select::open_read(app)?;
    let tombstones = store.tombstones()?;
    if as_json {
        output::print_json(&json::forget::Tombstones {
            forgotten: tombstones.iter().map(tombstone_json).collect(),
        })?;
    } else {
        let s = Style::stdout();
        for t in &tombstones {
            let started = t.started_at.map(local_short).unwrap_or_else(|| "-".into());
            let project = t.project_dir.as_deref().unwrap_or("-");
            let source = match (&t.source_path, transcript_present(t)) {
                (Some(p), Some(false)) => format!("{p} (gone)"),
                (Some(p), _) => p.clone(),
                (None, _) => "-".into(),
            };
            println!(
                "{}  {:<7} started {}  forgotten {}  {}  {}",
                s.cyan(&t.id),
                t.harness,
                started,
                local_short(t.forgotten_at),
                project,
                s.dim(&source)
            );
        }
    }
    if tombstones.is_empty() {
        eprintln!("no forgotten sessions");
    } else {
        eprintln!(
            "{} forgotten; `deja forget --undo ID` brings one back",
            sessions(tombstones.len())
        );
    }
    Ok(ExitStatus::Success)
}

fn tombstone_json(t: &Tombstone) -> json::forget::Tombstone<'_> {
    json::forget::Tombstone::new(t, transcript_present(t))
}

/// The one tombstone `id` names; an error naming what it matches otherwise.
fn pick_tombstone(store: &Store, id: &str) -> Result<Tombstone> {
    let id = id.trim();
    if id.is_empty() {
        bail!("the session id is empty\nhint: `deja forget --list` lists the forgotten sessions");
    }
    let mut found = store.find_tombstones(id, LISTED)?;
    match found.total {
        0 => {
            let indexed = store.find_sessions(id, 1)?.total > 0;
            if indexed {
                bail!("`{id}` names a session in the index, not a forgotten one\nhint: `deja forget --list` lists the forgotten sessions");
            }
            bail!("no forgotten session `{id}`\nhint: `deja forget --list` lists them")
        }
        1 if !found.rows.is_empty() => Ok(found.rows.remove(0)),
        n => {
            let mut list = found
                .rows
                .iter()
                .map(|t| {
                    format!(
                        "  {}  {} id {}",
                        t.id,
                        t.harness,
                        t.native_id.as_deref().unwrap_or("?")
                    )
                })
                .collect::<Vec<_>>()
                .join("\n");
            if n > found.rows.len() {
                list.push_str(&format!("\n  ... and {} more", n - found.rows.len()));
            }
            bail!("`{id}` matches {n} forgotten sessions; give more of the id:\n{list}")
        }
    }
}

/// `deja forget --undo ID...`: lifts the tombstones, so that the next
/// `deja index` reads their transcripts again and brings the sessions back.
fn undo(app: &App, args: &ForgetArgs) -> Result<ExitStatus> {
    let (_lock, mut store) = open_write(app)?;
    // Every id is resolved before anything changes.
    let mut picked: Vec<Tombstone> = Vec::new();
    for id in &args.ids {
        let t = pick_tombstone(&store, id)?;
        if !picked.contains(&t) {
            picked.push(t);
        }
    }
    let mut done = Vec::new();
    let mut returning = 0;
    for t in picked {
        let Some(undone) = store.unforget(&t.harness, &t.id)? else {
            continue;
        };
        let t = undone.tombstone;
        let present = transcript_present(&t);
        let message = match (&t.source_path, present) {
            (Some(p), Some(true)) => {
                returning += 1;
                format!("`{}` ({}) is no longer forgotten: its transcript `{p}` is still there, so the next `deja index` brings it back", t.id, t.harness)
            }
            (Some(p), _) => format!(
                "`{}` ({}) is no longer forgotten, but its transcript `{p}` is gone: `deja index` cannot bring it back unless the transcript returns",
                t.id, t.harness
            ),
            (None, _) => {
                returning += 1;
                format!(
                    "`{}` ({}) is no longer forgotten; no transcript was recorded for it, so the next `deja index` reads every {} transcript again and brings it back if one still holds it (a session pulled from the team store comes back with the next `deja team pull`)",
                    t.id, t.harness, t.harness
                )
            }
        };
        eprintln!("{message}");
        done.push(t);
    }
    if args.json {
        output::print_json(&json::forget::Unforgotten {
            unforgotten: done.iter().map(tombstone_json).collect(),
        })?;
    }
    if returning > 0 {
        output::hint(&format!(
            "run `deja index` to bring back {}",
            if returning == 1 {
                "the session".to_string()
            } else {
                sessions(returning)
            }
        ));
    }
    Ok(ExitStatus::Success)
}

fn confirm(rows: &[SessionRow]) -> Result<bool> {
    let n = rows.len();
    if !std::io::stdin().is_terminal() {
        let (verb, them) = if n == 1 {
            ("matches", "it")
        } else {
            ("match", "them")
        };
        bail!(
            "{} {verb}; pass --yes to forget {them} without a prompt (--dry-run lists {them})",
            sessions(n)
        );
    }
    for r in rows.iter().take(LISTED) {
        eprintln!(
            "  {}  {}  {}",
            r.id,
            local_short(r.started_at),
            r.first_user.as_deref().unwrap_or("")
        );
    }
    if n > LISTED {
        eprintln!("  ... and {} more", n - LISTED);
    }
    if n == 1 {
        eprint!("Forget this session? [y/N] ");
    } else {
        eprint!("Forget these {n} sessions? [y/N] ");
    }
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}
