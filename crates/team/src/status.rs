//! `deja team status`: both sides compared, nothing changed (beyond the
//! schema migration every connection makes): what this machine shares and
//! has pushed, what waits to be pushed or retracted, who published what,
//! and what waits to be pulled or removed here. It works without a local
//! store (a fresh home) as if the store were empty.

use deja_store::Store;

use crate::{pull, push, Result, Team};

/// One publisher in the team store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Publisher {
    /// `user@machine`.
    pub origin: String,
    /// Live sessions.
    pub sessions: i64,
    /// Their messages.
    pub messages: i64,
    /// Retracted sessions (tombstones).
    pub retracted: i64,
    /// Its last push (ms), if any.
    pub last_push_ms: Option<i64>,
}

/// Where this machine stands with the team store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// The server, without password.
    pub server: String,
    /// This machine's name there.
    pub origin: String,
    /// The server's schema version.
    pub schema_version: i64,
    /// The projects this machine shares.
    pub share: Vec<String>,
    /// Sessions of those projects here.
    pub shared: usize,
    /// Of them, new or changed since the last push.
    pub to_push: usize,
    /// Published sessions to retract at the next push (forgotten here).
    pub to_retract: usize,
    /// Published sessions of this origin this store has no trace of (kept
    /// at a push unless `--retract-missing`).
    pub missing: usize,
    /// Published sessions of this origin still here whose project `share`
    /// no longer matches (kept at a push unless `--retract-unshared`).
    pub unshared: usize,
    /// Whether another machine pushes under this machine's `team.name` (a
    /// push is refused until one of them changes it).
    pub name_taken: bool,
    /// Sessions pulled into this store.
    pub pulled: usize,
    /// Published sessions the next pull fetches.
    pub to_pull: usize,
    /// Pulled sessions the next pull removes.
    pub to_remove: usize,
    /// Everyone who published, this machine included.
    pub publishers: Vec<Publisher>,
}

/// Compares `store` (none: an empty one) with the team store.
pub fn status(team: &mut Team, store: Option<&Store>) -> Result<Status> {
    let mine = push::plan(team, store, &push::PushOptions::default())?;
    let theirs = pull::plan(team, store)?;
    let publishers = team
        .client
        .query(
            "SELECT origin,
                count(*) FILTER (WHERE forgotten_at IS NULL),
                coalesce(sum(message_count) FILTER (WHERE forgotten_at IS NULL), 0)::bigint,
                count(*) FILTER (WHERE forgotten_at IS NOT NULL),
                max(pushed_at)
             FROM deja.sessions GROUP BY origin ORDER BY origin",
            &[],
        )
        .map_err(|e| team.fail(e))?
        .into_iter()
        .map(|r| Publisher {
            origin: r.get(0),
            sessions: r.get(1),
            messages: r.get(2),
            retracted: r.get(3),
            last_push_ms: r.get(4),
        })
        .collect();
    Ok(Status {
        server: team.server(),
        origin: team.origin().to_string(),
        schema_version: team.schema_version,
        share: team.settings.share.clone(),
        shared: mine.shared.len(),
        to_push: mine.to_push.len(),
        to_retract: mine.to_retract.len(),
        missing: mine.missing.len(),
        unshared: mine.unshared.iter().map(|u| u.sessions.len()).sum(),
        name_taken: theirs.name_collision.is_some(),
        pulled: match store {
            Some(store) => store.pulled()?.len(),
            None => 0,
        },
        to_pull: theirs.to_fetch.len(),
        to_remove: theirs.to_remove.len(),
        publishers,
    })
}
