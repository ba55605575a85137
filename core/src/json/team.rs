//! `deja team push|pull|status --json`.

use serde::Serialize;

/// What `deja team push` did (or, with `--dry-run`, would do).
#[derive(Debug, Clone, Serialize)]
pub struct Push<'a> {
    /// Whether nothing was changed (`--dry-run`).
    pub dry_run: bool,
    /// Messages of the sessions sent.
    pub messages: usize,
    /// This machine's name in the team store.
    pub origin: &'a str,
    /// Sessions sent (new or changed).
    pub pushed: usize,
    /// Sessions retracted (forgotten here or no longer shared).
    pub retracted: usize,
    /// How long it took.
    pub seconds: f64,
    /// The team store, without password.
    pub server: &'a str,
    /// Sessions of the shared projects here.
    pub shared: usize,
    /// Sessions the team store already had as they are.
    pub unchanged: usize,
}

/// What `deja team pull` did.
#[derive(Debug, Clone, Serialize)]
pub struct Pull<'a> {
    /// Sessions new to this store.
    pub added: usize,
    /// Why the embedding pass could not run, if it could not.
    pub embedding_error: Option<&'a str>,
    /// Messages given embeddings.
    pub embedded_messages: usize,
    /// Sessions left out because this machine forgot them.
    pub forgotten_here: usize,
    /// Sessions left out because this store has its own copy.
    pub kept_local: usize,
    /// Messages fetched.
    pub messages: usize,
    /// This machine's name in the team store.
    pub origin: &'a str,
    /// Sessions removed (retracted by their publisher).
    pub removed: usize,
    /// How long it took.
    pub seconds: f64,
    /// The team store, without password.
    pub server: &'a str,
    /// Sessions already here as the team store has them.
    pub unchanged: usize,
    /// Sessions whose content changed.
    pub updated: usize,
}

/// `deja team status`.
#[derive(Debug, Clone, Serialize)]
pub struct Status<'a> {
    /// This machine's name in the team store.
    pub origin: &'a str,
    /// Sessions pulled into this store.
    pub pulled: usize,
    /// Everyone who published, this machine included.
    pub publishers: Vec<Publisher<'a>>,
    /// The schema version this deja writes.
    pub schema_known: i64,
    /// The team store's schema version.
    pub schema_version: i64,
    /// The team store, without password.
    pub server: &'a str,
    /// The projects this machine shares.
    pub share: &'a [String],
    /// Sessions of those projects here.
    pub shared: usize,
    /// Published sessions the next pull fetches.
    pub to_pull: usize,
    /// Sessions new or changed since the last push.
    pub to_push: usize,
    /// Pulled sessions the next pull removes.
    pub to_remove: usize,
    /// Published sessions the next push retracts.
    pub to_retract: usize,
}

/// One publisher.
#[derive(Debug, Clone, Serialize)]
pub struct Publisher<'a> {
    /// Its last push.
    pub last_push: Option<String>,
    /// Live sessions' messages.
    pub messages: i64,
    /// `user@machine`.
    pub origin: &'a str,
    /// Retracted sessions (tombstones).
    pub retracted: i64,
    /// Live sessions.
    pub sessions: i64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::testing::keys;

    #[test]
    fn field_names() {
        let push = Push {
            dry_run: false,
            messages: 0,
            origin: "a@b",
            pushed: 0,
            retracted: 0,
            seconds: 0.0,
            server: "s",
            shared: 0,
            unchanged: 0,
        };
        assert_eq!(
            keys(&push),
            [
                "dry_run",
                "messages",
                "origin",
                "pushed",
                "retracted",
                "seconds",
                "server",
                "shared",
                "unchanged"
            ]
        );
        let pull = Pull {
            added: 0,
            embedding_error: None,
            embedded_messages: 0,
            forgotten_here: 0,
            kept_local: 0,
            messages: 0,
            origin: "a@b",
            removed: 0,
            seconds: 0.0,
            server: "s",
            unchanged: 0,
            updated: 0,
        };
        assert_eq!(
            keys(&pull),
            [
                "added",
                "embedding_error",
                "embedded_messages",
                "forgotten_here",
                "kept_local",
                "messages",
                "origin",
                "removed",
                "seconds",
                "server",
                "unchanged",
                "updated"
            ]
        );
        let status = Status {
            origin: "a@b",
            pulled: 0,
            publishers: vec![Publisher {
                last_push: None,
                messages: 0,
                origin: "a@b",
                retracted: 0,
                sessions: 0,
            }],
            schema_known: 1,
            schema_version: 1,
            server: "s",
            share: &[],
            shared: 0,
            to_pull: 0,
            to_push: 0,
            to_remove: 0,
            to_retract: 0,
        };
        assert_eq!(
            keys(&status),
            [
                "origin",
                "pulled",
                "publishers",
                "schema_known",
                "schema_version",
                "server",
                "share",
                "shared",
                "to_pull",
                "to_push",
                "to_remove",
                "to_retract"
            ]
        );
        assert_eq!(
            keys(&status.publishers[0]),
            ["last_push", "messages", "origin", "retracted", "sessions"]
        );
    }
}
