//! `deja forget`: removes sessions and everything derived from them, and
//! records tombstones so that `deja index` never brings them back.

use std::io::{BufRead, IsTerminal, Write};
use std::time::Duration;

use anyhow::{bail, Result};
use serde_json::json;

use crate::app::App;
use crate::cli::ForgetArgs;
use crate::lock::{self, Wait};
use crate::output::{self, local_short};
use crate::ExitStatus;
use deja_store::query::SessionRow;
use deja_store::Store;

/// Runs the command.
pub fn run(app: &App, args: &ForgetArgs) -> Result<ExitStatus> {
    let has_filter = args.harness.is_some() || args.project.is_some() || args.before.is_some();
    if args.ids.is_empty() && !has_filter {
        bail!("name the sessions to forget: IDs, or --harness / --project / --before");
    }
    let _lock = lock::acquire(
        &app.paths.lock_file(),
        Wait::Up(Duration::from_secs(app.config.config.index.lock_wait_secs)),
        &mut |m| output::warn(m),
    )?;
    let mut store = Store::open(&app.paths.database())?;
    let mut rows: Vec<SessionRow> = Vec::new();
    for id in &args.ids {
        rows.push(super::pick_session(&store, id)?);
    }
    if has_filter {
        super::check_filters(
            app,
            &store,
            args.harness.as_deref(),
            args.project.as_deref(),
        )?;
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
        };
        let matched = store.sessions(&filter, None)?;
        if !matched.is_empty() && !args.yes && !confirm(&matched)? {
            eprintln!("nothing forgotten");
            return Ok(ExitStatus::Success);
        }
        rows.extend(matched);
    }
    rows.sort_by_key(|r| r.row);
    rows.dedup_by_key(|r| r.row);
    let n = store.forget(&rows)?;
    deja_store::vectors::sync_after_change(&store, &app.paths.vectors())?;
    if args.json {
        output::print_json(&json!({
            "forgotten": rows.iter().map(|r| json!({"id": r.id, "harness": r.harness})).collect::<Vec<_>>(),
        }))?;
    }
    eprintln!("forgot {n} sessions; `deja index` will not bring them back");
    Ok(ExitStatus::Success)
}

fn confirm(rows: &[SessionRow]) -> Result<bool> {
    if !std::io::stdin().is_terminal() {
        bail!(
            "{} sessions match; pass --yes to forget them without a prompt",
            rows.len()
        );
    }
    for r in rows.iter().take(10) {
        eprintln!(
            "  {}  {}  {}",
            r.id,
            local_short(r.started_at),
            r.first_user.as_deref().unwrap_or("")
        );
    }
    if rows.len() > 10 {
        eprintln!("  ... and {} more", rows.len() - 10);
    }
    eprint!("Forget these {} sessions? [y/N] ", rows.len());
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}
