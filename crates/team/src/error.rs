//! The errors of team memory, each saying what failed and, where one
//! helps, a `hint:` line.

use std::path::PathBuf;

/// What can go wrong with the team store.
#[derive(Debug, thiserror::Error)]
pub enum TeamError {
    /// No team store is configured.
    #[error("no team store is configured\nhint: set `url` under [team] in the config file (`deja config` shows where it is) or $DEJA_TEAM_URL")]
    NotConfigured,
    /// A setting is wrong.
    #[error("{0}")]
    Config(String),
    /// The password file cannot be used.
    #[error("password file `{path}`: {problem}")]
    PasswordFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// The server cannot be reached or refused the connection.
    #[error("cannot connect to the team store {server}: {cause}{hint}")]
    Connect {
        /// `user@host:port/db`, without password.
        server: String,
        /// Why.
        cause: String,
        /// A `\nhint: ...` line, or nothing.
        hint: String,
    },
    /// The server's schema was written by a newer deja.
    #[error("the team store {server} has schema version {found}; this deja knows versions up to {known}\nhint: upgrade deja on this machine (nothing was changed)")]
    TooNew {
        /// `user@host:port/db`.
        server: String,
        /// The server's version.
        found: i64,
        /// The newest version this deja knows.
        known: i64,
    },
    /// The server failed during work.
    #[error("team store {server}: {cause}{hint}")]
    Server {
        /// `user@host:port/db`.
        server: String,
        /// Why.
        cause: String,
        /// A `\nhint: ...` line, or nothing.
        hint: String,
    },
    /// Another machine pushes under this machine's `team.name`.
    #[error("`team.name` is {origin}, and another machine pushes under that name in the team store {server} (its last push: {last_push}); this push changed nothing\nhint: give this machine a name of its own (`team.name`, e.g. {suggestion}); if this is that machine with a new data folder (reinstalled, or its folder wiped), take the name over with `deja team push --take-over-name`")]
    NameTaken {
        /// The origin.
        origin: String,
        /// `user@host:port/db`.
        server: String,
        /// When the other machine last pushed, RFC 3339.
        last_push: String,
        /// A name to suggest.
        suggestion: String,
    },
    /// A push needs this machine's id, which the caller did not give.
    #[error("this machine has no team machine id\nhint: this is a bug in the caller of deja-team: read or make it with deja_team::machine::load_or_create")]
    NoMachineId,
    /// Pushing would publish unredacted text.
    #[error("redaction is off ([redact] enabled = false): pushing would publish secrets that redaction would have replaced\nhint: turn redaction on and run `deja index`, or push anyway with `deja team push --force`")]
    Unredacted,
    /// The local store failed.
    #[error(transparent)]
    Store(#[from] deja_store::StoreError),
}

/// The message of a PostgreSQL error with its cause chain and, for the
/// errors a person can fix, a hint.
pub(crate) fn describe(e: &postgres::Error) -> (String, String) {
    use postgres::error::SqlState;
    let cause = match e.as_db_error() {
        Some(db) => db.message().to_string(),
        None => {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(s) = source {
                let more = s.to_string();
                if !text.contains(&more) {
                    text.push_str(": ");
                    text.push_str(&more);
                }
                source = s.source();
            }
            text
        }
    };
    if cause.contains("row-level security") {
        return (
            cause,
            "\nhint: this team store lets each role publish only under its own name: set `team.name` to <your database role>@<machine>".to_string(),
        );
    }
    if cause.contains("password missing") {
        return (
            cause,
            "\nhint: the server asks for a password: set $DEJA_TEAM_PASSWORD or `team.password_file`".to_string(),
        );
    }
    let hint = match e.code() {
        Some(c) if *c == SqlState::INVALID_PASSWORD => {
            "\nhint: check $DEJA_TEAM_PASSWORD or the file named by `team.password_file`"
        }
        Some(c) if *c == SqlState::INVALID_AUTHORIZATION_SPECIFICATION => {
            "\nhint: the server does not accept this user from this machine (pg_hba.conf), or a password is needed: $DEJA_TEAM_PASSWORD or `team.password_file`"
        }
        Some(c) if *c == SqlState::INSUFFICIENT_PRIVILEGE => {
            "\nhint: the role lacks a privilege the README's \"Team memory\" lists; where members only read and write (the stricter set-up), the schema's owner makes upgrades: run `deja team status` as that role once"
        }
        Some(c) if *c == SqlState::INVALID_CATALOG_NAME => {
            "\nhint: create the database first (README, \"Team memory\")"
        }
        None if e.as_db_error().is_none() && !e.is_closed() => {
            "\nhint: is the server running, and are the host and port (or socket folder) in the URL right?"
        }
        _ => "",
    };
    (cause, hint.to_string())
}
