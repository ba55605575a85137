//! One module per subcommand, plus what several of them share: opening the
//! index for reading and resolving a session id the user typed.

pub mod aider;
pub mod config;
pub mod context;
pub mod doctor;
pub mod forget;
pub mod index;
pub mod parse;
pub mod plugins;
pub mod recall;
pub mod resume;
pub mod sessions;
pub mod setup;
pub mod show;

use anyhow::{bail, Result};

use crate::app::App;
use deja_store::query::SessionRow;
use deja_store::{SessionFilter, Store, StoreError};

use crate::cli::FilterArgs;

/// The store filter the command line's filters name (dates relative to now).
pub fn session_filter(args: &FilterArgs) -> Result<SessionFilter> {
    let now = chrono::Utc::now();
    let date = |d: &Option<String>, flag: &str| -> Result<Option<i64>> {
        d.as_deref()
            .map(|t| crate::dates::parse(t, now).map_err(|e| anyhow::anyhow!("{flag}: {e}")))
            .transpose()
    };
    Ok(SessionFilter {
        harness: args.harness.clone(),
        project: args.project.clone(),
        since: date(&args.since, "--since")?,
        until: date(&args.until, "--until")?,
    })
}

/// Opens the index for reading, with a hint when there is none yet.
pub fn open_read(app: &App) -> Result<Store> {
    match Store::open_read(&app.paths.database()) {
        Ok(s) => Ok(s),
        Err(StoreError::Missing(p)) => {
            bail!(
                "no index at `{}` yet\nhint: run `deja index` first",
                p.display()
            )
        }
        Err(e) => Err(e.into()),
    }
}

/// The one session `id` names: a deja id, a harness id, or a unique prefix.
pub fn pick_session(store: &Store, id: &str) -> Result<SessionRow> {
    let mut found = store.find_sessions(id)?;
    match found.len() {
        0 => bail!("no session `{id}` in the index\nhint: `deja sessions` lists them"),
        1 => Ok(found.remove(0)),
        n => {
            let list = found
                .iter()
                .take(10)
                .map(|r| format!("  {} ({})", r.id, r.harness))
                .collect::<Vec<_>>()
                .join("\n");
            bail!("`{id}` matches {n} sessions; use a full id:\n{list}")
        }
    }
}
