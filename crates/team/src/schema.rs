//! The team store's schema, in PostgreSQL schema `deja`, and its
//! migrations. `deja.meta` holds `schema_version`; migrations run in one
//! transaction under an advisory lock, so that machines connecting at once
//! migrate once. A version newer than this deja knows is refused before
//! anything is written.

use postgres::{Client, GenericClient};

/// Migrations in order; the schema version is the number applied.
const MIGRATIONS: &[&str] = &[
    // 1: sessions keyed by who published them (origin), their messages,
    //    files and commands records. A forgotten or unshared session keeps
    //    its key with `forgotten_at` set and no content: the tombstone other
    //    machines pull.
    r#"
CREATE TABLE deja.meta (
    key   text PRIMARY KEY,
    value text NOT NULL
);
CREATE TABLE deja.sessions (
    origin        text    NOT NULL,
    harness       text    NOT NULL,
    session_id    text    NOT NULL,
    native_id     text    NOT NULL,
    started_at    bigint  NOT NULL,
    updated_at    bigint  NOT NULL,
    project_dir   text,
    project_name  text,
    project_id    text,
    title         text,
    parent_id     text,
    precedence    integer NOT NULL,
    message_count integer NOT NULL,
    content_hash  text    NOT NULL,
    forgotten_at  bigint,
    pushed_at     bigint  NOT NULL,
    PRIMARY KEY (origin, harness, session_id)
);
CREATE TABLE deja.messages (
    origin     text    NOT NULL,
    harness    text    NOT NULL,
    session_id text    NOT NULL,
    position   integer NOT NULL,
    role       text    NOT NULL,
    text       text    NOT NULL,
    at         bigint  NOT NULL,
    native_id  text,
    PRIMARY KEY (origin, harness, session_id, position),
    FOREIGN KEY (origin, harness, session_id) REFERENCES deja.sessions ON DELETE CASCADE
);
CREATE TABLE deja.files (
    origin     text    NOT NULL,
    harness    text    NOT NULL,
    session_id text    NOT NULL,
    position   integer NOT NULL,
    path       text    NOT NULL,
    action     text    NOT NULL,
    at         bigint  NOT NULL,
    PRIMARY KEY (origin, harness, session_id, position),
    FOREIGN KEY (origin, harness, session_id) REFERENCES deja.sessions ON DELETE CASCADE
);
CREATE TABLE deja.commands (
    origin     text    NOT NULL,
    harness    text    NOT NULL,
    session_id text    NOT NULL,
    position   integer NOT NULL,
    command    text    NOT NULL,
    ran_by     text    NOT NULL,
    at         bigint  NOT NULL,
    PRIMARY KEY (origin, harness, session_id, position),
    FOREIGN KEY (origin, harness, session_id) REFERENCES deja.sessions ON DELETE CASCADE
);
INSERT INTO deja.meta (key, value) VALUES ('schema_version', '0');
"#,
    // 2: who publishes under each origin: the machine id of the machine that
    //    pushed under it last, so that two machines sharing one `team.name`
    //    are told apart before either retracts the other's sessions.
    r#"
CREATE TABLE deja.publishers (
    origin     text   PRIMARY KEY,
    machine_id text   NOT NULL,
    claimed_at bigint NOT NULL,
    pushed_at  bigint NOT NULL
);
"#,
    // 3: the vectors of a published session's embedding units, by the text
    //    hash of the unit and the model that made them (its id names the
    //    model file and the windowing), in half precision: a machine with
    //    the same model takes them instead of running it. They go with
    //    their session (retraction clears them as it clears messages).
    //    And whether a session's start is only its transcript's
    //    modification time, so that pulled copies say so too.
    r#"
ALTER TABLE deja.sessions ADD COLUMN date_approximate boolean NOT NULL DEFAULT false;
CREATE TABLE deja.vectors (
    origin     text  NOT NULL,
    harness    text  NOT NULL,
    session_id text  NOT NULL,
    model      text  NOT NULL,
    text_hash  text  NOT NULL,
    vector     bytea NOT NULL,
    PRIMARY KEY (origin, harness, session_id, model, text_hash),
    FOREIGN KEY (origin, harness, session_id) REFERENCES deja.sessions ON DELETE CASCADE
);
"#,
];

/// The schema version this deja writes.
pub fn current_version() -> i64 {
    MIGRATIONS.len() as i64
}

/// Why the schema cannot be used.
#[derive(Debug)]
pub enum SchemaError {
    /// Written by a newer deja: its version.
    TooNew(i64),
    /// The server failed.
    Server(postgres::Error),
}

impl From<postgres::Error> for SchemaError {
    fn from(e: postgres::Error) -> Self {
        SchemaError::Server(e)
    }
}

/// The schema version of the store behind `client` (0: no schema yet).
pub fn version(client: &mut impl GenericClient) -> Result<i64, postgres::Error> {
    let exists: Option<String> = client
        .query_one("SELECT to_regclass('deja.meta')::text", &[])?
        .get(0);
    if exists.is_none() {
        return Ok(0);
    }
    let row = client.query_opt(
        "SELECT value FROM deja.meta WHERE key = 'schema_version'",
        &[],
    )?;
    Ok(row
        .and_then(|r| r.get::<_, String>(0).parse().ok())
        .unwrap_or(0))
}

/// Brings the schema to [`current_version`] and returns it; refuses a newer
/// one, changing nothing.
pub fn prepare(client: &mut Client) -> Result<i64, SchemaError> {
    let known = current_version();
    let found = version(client)?;
    if found > known {
        return Err(SchemaError::TooNew(found));
    }
    if found == known {
        return Ok(known);
    }
    // One migrator at a time: the others wait here and then find it done.
    // The lock is the session's, taken before the transaction starts, so
    // that the transaction sees the catalog as the previous migrator left it
    // (a backend refreshes its catalog caches when a transaction starts, not
    // when an advisory lock it waited for is granted).
    client.execute("SELECT pg_advisory_lock(hashtext('deja team schema'))", &[])?;
    let migrated = migrate(client, known);
    let unlocked = client.execute(
        "SELECT pg_advisory_unlock(hashtext('deja team schema'))",
        &[],
    );
    let version = migrated?;
    unlocked?;
    Ok(version)
}

/// Applies the migrations the store lacks in one transaction (the caller
/// holds the schema lock).
fn migrate(client: &mut Client, known: i64) -> Result<i64, SchemaError> {
    let mut tx = client.transaction()?;
    let found = version(&mut tx)?;
    if found > known {
        return Err(SchemaError::TooNew(found));
    }
    if found == known {
        return Ok(known);
    }
    // Tables belong to the schema's owner (the team's group role, when the
    // connecting role is one of its members), so that every member can use
    // the tables the first of them created.
    let owner: Option<String> = tx
        .query_opt(
            "SELECT n.nspowner::regrole::text FROM pg_namespace n
             WHERE n.nspname = 'deja' AND n.nspowner <> current_user::regrole
               AND pg_has_role(current_user, n.nspowner, 'MEMBER')",
            &[],
        )?
        .map(|r| r.get(0));
    if let Some(owner) = owner {
        tx.batch_execute(&format!("SET LOCAL ROLE {owner}"))?;
    }
    if found == 0 {
        let exists = tx
            .query_opt("SELECT 1 FROM pg_namespace WHERE nspname = 'deja'", &[])?
            .is_some();
        if !exists {
            tx.batch_execute("CREATE SCHEMA deja")?;
        }
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(found.max(0) as usize) {
        tx.batch_execute(sql)?;
        tx.execute(
            "UPDATE deja.meta SET value = $1 WHERE key = 'schema_version'",
            &[&(i as i64 + 1).to_string()],
        )?;
    }
    tx.commit()?;
    Ok(known)
}
