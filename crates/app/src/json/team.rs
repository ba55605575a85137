//! `deja team push|pull|status --json`.

use serde::Serialize;

/// What `deja team push` did (or, with `--dry-run`, would do).
#[derive(Debug, Clone, Serialize)]
pub struct Push<'a> {
    /// Whether nothing was changed (`--dry-run`).
    pub dry_run: bool,
    /// Messages of the sessions sent.
    pub messages: usize,
    /// Published sessions of this origin that this store has no trace of,
    /// left published (`--retract-missing` retracts them).
    pub missing: usize,
    /// This machine's name in the team store.
    pub origin: &'a str,
    /// Sessions sent (new or changed).
    pub pushed: usize,
    /// Sessions retracted (forgotten here; no longer shared with
    /// `--retract-unshared`; missing with `--retract-missing`).
    pub retracted: usize,
    /// The sessions retracted (with `--dry-run`: that would be), and why.
    pub retractions: Vec<Retraction<'a>>,
    /// How long it took.
    pub seconds: f64,
    /// The team store, without password.
    pub server: &'a str,
    /// Sessions of the shared projects here.
    pub shared: usize,
    /// Whether this push took `team.name` over from another machine.
    pub took_over: bool,
    /// Sessions the team store already had as they are.
    pub unchanged: usize,
    /// Published sessions of this origin still here whose project
    /// `team.share` no longer names, left published (`--retract-unshared`
    /// retracts them).
    pub unshared: usize,
    /// Embedding vectors published with the sessions.
    pub vectors: usize,
}

/// One retracted session.
#[derive(Debug, Clone, Serialize)]
pub struct Retraction<'a> {
    /// Its harness.
    pub harness: &'a str,
    /// Its deja id.
    pub session_id: &'a str,
    /// `forgotten`, `unshared` or `missing`.
    pub why: &'a str,
}

/// A published session a pull left out.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped<'a> {
    /// Its harness, as the team store gives it.
    pub harness: &'a str,
    /// Its publisher.
    pub origin: &'a str,
    /// Why it was left out.
    pub reason: &'a str,
    /// Its deja id.
    pub session_id: &'a str,
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
    /// Texts the model embedded here (checks of teammates' vectors
    /// included).
    pub embedded_by_model: usize,
    /// Sessions left out because this machine forgot them.
    pub forgotten_here: usize,
    /// Embedding units whose vector a teammate published (the model did
    /// not run for them).
    pub from_team: usize,
    /// Sessions left out because this store has its own copy.
    pub kept_local: usize,
    /// Messages fetched.
    pub messages: usize,
    /// This machine's `team.name`, where another machine pushes under it.
    pub name_collision: Option<&'a str>,
    /// This machine's name in the team store.
    pub origin: &'a str,
    /// Pulled sessions whose published vectors failed the check (a sample
    /// embedded here disagreed), embedded here instead.
    pub refused_vectors: usize,
    /// Sessions removed (retracted by their publisher).
    pub removed: usize,
    /// How long it took.
    pub seconds: f64,
    /// The team store, without password.
    pub server: &'a str,
    /// Sessions left out: over the bounds, or failing the checks on names,
    /// ids and content hash.
    pub skipped: Vec<Skipped<'a>>,
    /// Sessions already here as the team store has them.
    pub unchanged: usize,
    /// Sessions whose content changed.
    pub updated: usize,
    /// Embedding vectors taken with the sessions (published by a machine
    /// with this store's model).
    pub vectors: usize,
}

/// `deja team status`.
#[derive(Debug, Clone, Serialize)]
pub struct Status<'a> {
    /// Whether this home has a local store yet (without one it counts as empty).
    pub local_store: bool,
    /// Published sessions of this origin this store has no trace of.
    pub missing: usize,
    /// Whether another machine pushes under this machine's `team.name`.
    pub name_taken: bool,
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
    /// Published sessions of this origin still here whose project
    /// `team.share` no longer names (kept unless `--retract-unshared`).
    pub unshared: usize,
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
            missing: 0,
            origin: "a@b",
            pushed: 0,
            retracted: 0,
            retractions: vec![Retraction {
                harness: "aider",
                session_id: "x",
                why: "forgotten",
            }],
            seconds: 0.0,
            server: "s",
            shared: 0,
            took_over: false,
            unchanged: 0,
            unshared: 0,
            vectors: 0,
        };
        assert_eq!(
            keys(&push),
            [
                "dry_run",
                "messages",
                "missing",
                "origin",
                "pushed",
                "retracted",
                "retractions",
                "seconds",
                "server",
                "shared",
                "took_over",
                "unchanged",
                "unshared",
                "vectors"
            ]
        );
        assert_eq!(keys(&push.retractions[0]), ["harness", "session_id", "why"]);
        let pull = Pull {
            added: 0,
            embedding_error: None,
            embedded_messages: 0,
            embedded_by_model: 0,
            forgotten_here: 0,
            from_team: 0,
            kept_local: 0,
            messages: 0,
            name_collision: None,
            origin: "a@b",
            refused_vectors: 0,
            removed: 0,
            seconds: 0.0,
            server: "s",
            skipped: vec![Skipped {
                harness: "aider",
                origin: "a@b",
                reason: "r",
                session_id: "x",
            }],
            unchanged: 0,
            updated: 0,
            vectors: 0,
        };
        assert_eq!(
            keys(&pull),
            [
                "added",
                "embedding_error",
                "embedded_messages",
                "embedded_by_model",
                "forgotten_here",
                "from_team",
                "kept_local",
                "messages",
                "name_collision",
                "origin",
                "refused_vectors",
                "removed",
                "seconds",
                "server",
                "skipped",
                "unchanged",
                "updated",
                "vectors"
            ]
        );
        assert_eq!(
            keys(&pull.skipped[0]),
            ["harness", "origin", "reason", "session_id"]
        );
        let status = Status {
            local_store: true,
            missing: 0,
            name_taken: false,
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
            unshared: 0,
        };
        assert_eq!(
            keys(&status),
            [
                "local_store",
                "missing",
                "name_taken",
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
                "to_retract",
                "unshared"
            ]
        );
        assert_eq!(
            keys(&status.publishers[0]),
            ["last_push", "messages", "origin", "retracted", "sessions"]
        );
    }
}
