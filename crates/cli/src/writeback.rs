//! `deja resume ID --write-back [--dry-run]`: the session recreated from the
//! store in its agent's own format ([`deja_writeback`]), and what was done
//! said on stderr (stdout keeps the resume command) or as JSON.

use anyhow::Result;

use crate::app::App;
use crate::{json, output};
use deja_store::{SessionRow, Store};
use deja_writeback::{Error, Places, Plan};

/// What `--write-back` came to.
pub enum Outcome {
    /// Nothing written, and why (exit 2).
    Refused(String),
    /// `--dry-run`: what would be written.
    Planned(Plan),
    /// Written.
    Written(Plan),
}

/// Plans, and unless `dry_run` writes, the session of `row`.
pub fn write_back(app: &App, store: &Store, row: &SessionRow, dry_run: bool) -> Result<Outcome> {
    let session = store.load_session(row)?;
    let places = Places::from_process(&app.paths.home);
    let plan = match deja_writeback::plan(&session, &places) {
        Ok(plan) => plan,
        Err(e) => return Ok(Outcome::Refused(e.to_string())),
    };
    if dry_run {
        return Ok(Outcome::Planned(plan));
    }
    match deja_writeback::write(&plan) {
        Ok(()) => Ok(Outcome::Written(plan)),
        Err(e @ (Error::Exists { .. } | Error::Outside { .. })) => {
            Ok(Outcome::Refused(e.to_string()))
        }
        Err(e) => Err(e.into()),
    }
}

/// Says what was (or, `dry_run`, would be) written; `resume` is how to
/// reopen it (printed by the caller, except in JSON).
pub fn report(
    row: &SessionRow,
    plan: &Plan,
    resume: Option<json::resume::Command<'_>>,
    dry_run: bool,
    as_json: bool,
) -> Result<()> {
    let path = plan.path.to_string_lossy();
    let count = output::plural(plan.messages, "message", "messages");
    if as_json {
        return output::print_json(&json::resume::WriteBack {
            session_id: &row.id,
            harness: plan.harness,
            path: &path,
            messages: plan.messages,
            dry_run,
            resume,
        });
    }
    if dry_run {
        output::out_text(&format!("would write {count} to {path}\n"));
    } else {
        output::err_text(&format!("wrote {count} of session {} to {path}\n", row.id));
    }
    Ok(())
}
