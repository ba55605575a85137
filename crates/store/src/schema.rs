//! The SQLite schema and its migrations. `PRAGMA user_version` holds the
//! schema version; each migration runs once, in its own transaction.

/// Migrations in order; the schema version is the number applied.
pub const MIGRATIONS: &[&str] = &[
    // 1: sources, sessions, messages with FTS5, files, commands, tombstones,
    //    embedding units and the embedding cache.
    r#"
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- One row per transcript file a reader returned.
CREATE TABLE sources (
    id         INTEGER PRIMARY KEY,
    harness    TEXT    NOT NULL,
    path       TEXT    NOT NULL,
    size       INTEGER NOT NULL,
    mtime_ns   INTEGER NOT NULL,
    hash       TEXT    NOT NULL,
    indexed_at INTEGER NOT NULL,
    reader     TEXT    NOT NULL,
    error      TEXT,
    UNIQUE (harness, path)
);

-- source_id is NULL once the transcript is gone: memory outlives files.
CREATE TABLE sessions (
    id            INTEGER PRIMARY KEY,
    harness       TEXT    NOT NULL,
    session_id    TEXT    NOT NULL,
    native_id     TEXT    NOT NULL,
    source_id     INTEGER REFERENCES sources(id) ON DELETE SET NULL,
    source_path   TEXT,
    started_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    project_dir   TEXT,
    project_name  TEXT,
    project_id    TEXT,
    title         TEXT,
    parent_id     TEXT,
    precedence    INTEGER NOT NULL,
    message_count INTEGER NOT NULL,
    first_user    TEXT,
    UNIQUE (harness, session_id)
);
CREATE INDEX sessions_started ON sessions (started_at);
CREATE INDEX sessions_source ON sessions (source_id);

CREATE TABLE messages (
    id        INTEGER PRIMARY KEY,
    session   INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    position  INTEGER NOT NULL,
    role      TEXT    NOT NULL,
    text      TEXT    NOT NULL,
    timestamp INTEGER NOT NULL,
    native_id TEXT,
    hash      TEXT    NOT NULL,
    UNIQUE (session, position)
);

CREATE VIRTUAL TABLE messages_fts USING fts5(
    text,
    content = 'messages',
    content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts (rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
CREATE TRIGGER messages_au AFTER UPDATE OF text ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO messages_fts (rowid, text) VALUES (new.id, new.text);
END;

CREATE TABLE files (
    session   INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    position  INTEGER NOT NULL,
    path      TEXT    NOT NULL,
    action    TEXT    NOT NULL,
    timestamp INTEGER NOT NULL
);
CREATE INDEX files_session ON files (session);

CREATE TABLE commands (
    session   INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    position  INTEGER NOT NULL,
    command   TEXT    NOT NULL,
    origin    TEXT    NOT NULL,
    timestamp INTEGER NOT NULL
);
CREATE INDEX commands_session ON commands (session);

-- Forgotten sessions never come back.
CREATE TABLE tombstones (
    harness      TEXT    NOT NULL,
    session_id   TEXT    NOT NULL,
    forgotten_at INTEGER NOT NULL,
    PRIMARY KEY (harness, session_id)
);

-- Embedding units: windows of a message's text, keyed by the vector index.
-- A row exists only once its vector is in `embeddings`. Ids are never reused,
-- so a stale key left in the vector index can never name another chunk.
CREATE TABLE chunks (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    message   INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    ordinal   INTEGER NOT NULL,
    text_hash TEXT    NOT NULL,
    UNIQUE (message, ordinal)
);
CREATE INDEX chunks_hash ON chunks (text_hash);

-- Keys to remove from the vector index at its next save.
CREATE TABLE vector_trash (
    key INTEGER PRIMARY KEY
);
CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT OR IGNORE INTO vector_trash (key) VALUES (old.id);
END;

-- Never embed the same text twice with the same model.
CREATE TABLE embeddings (
    text_hash TEXT NOT NULL,
    model     TEXT NOT NULL,
    vector    BLOB NOT NULL,
    PRIMARY KEY (text_hash, model)
) WITHOUT ROWID;
"#,
    // 2: a session-level full-text index (one document per session, all its
    //    messages), contentless so that text is not stored twice.
    r#"
CREATE VIRTUAL TABLE sessions_fts USING fts5(
    text,
    content = '',
    contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO sessions_fts (rowid, text)
    SELECT session, group_concat(text, char(10))
    FROM (SELECT session, text FROM messages ORDER BY session, position)
    GROUP BY session;
CREATE TRIGGER sessions_ad AFTER DELETE ON sessions BEGIN
    DELETE FROM sessions_fts WHERE rowid = old.id;
END;
"#,
    // 3: what else a transcript was read with besides its reader's version
    //    (a fingerprint of the reader's config section and of the redaction
    //    settings), so that changing them re-reads it; and the text hashes of
    //    dropped embedding units, whose cached vectors go once nothing uses
    //    them.
    r#"
ALTER TABLE sources ADD COLUMN settings TEXT NOT NULL DEFAULT '';

CREATE TABLE dropped_units (
    text_hash TEXT PRIMARY KEY
) WITHOUT ROWID;
DROP TRIGGER chunks_ad;
CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT OR IGNORE INTO vector_trash (key) VALUES (old.id);
    INSERT OR IGNORE INTO dropped_units (text_hash) VALUES (old.text_hash);
END;
"#,
    // 4: what a tombstone remembers of its session besides its ids, so that
    //    forgotten sessions can be listed and brought back: when it started,
    //    its project folder and the transcript it was read from. Never its
    //    text (not even the title): forgetting leaves no text behind.
    r#"
ALTER TABLE tombstones ADD COLUMN native_id TEXT;
ALTER TABLE tombstones ADD COLUMN started_at INTEGER;
ALTER TABLE tombstones ADD COLUMN project_dir TEXT;
ALTER TABLE tombstones ADD COLUMN source_path TEXT;
"#,
    // 5: team memory. A session pulled from the team store names who and
    //    which machine published it (`origin`, NULL for this machine's own
    //    sessions) and the team content hash it was pulled at, so that the
    //    next pull fetches only what changed. And an index on the project id,
    //    which a session without a project directory looks its directory up
    //    by (it was a scan per such session).
    r#"
ALTER TABLE sessions ADD COLUMN origin TEXT;
ALTER TABLE sessions ADD COLUMN origin_hash TEXT;
CREATE INDEX sessions_origin ON sessions (origin);
CREATE INDEX sessions_project_id ON sessions (project_id, harness);
"#,
    // 6: messages embedded in part. The first embedding pass gives a long
    //    message a sample of its windows (so the whole history is searchable
    //    by meaning sooner); a second pass embeds the rest and removes the
    //    row. A row goes with its message, and with its message's units
    //    (a changed message is embedded anew, from its first pass).
    r#"
CREATE TABLE partial_units (
    message INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE
);
DROP TRIGGER chunks_ad;
CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT OR IGNORE INTO vector_trash (key) VALUES (old.id);
    INSERT OR IGNORE INTO dropped_units (text_hash) VALUES (old.text_hash);
    DELETE FROM partial_units WHERE message = old.message;
END;
"#,
    // 7: whether a session's transcript was found in a code folder (inside
    //    a project, where a cloned repository may have brought it) rather
    //    than in its harness's own data folder: such sessions are labelled
    //    and kept from agents unless the user says otherwise.
    r#"
ALTER TABLE sessions ADD COLUMN in_code_folder INTEGER NOT NULL DEFAULT 0;
"#,
    // 8: words in Chinese, Japanese and Korean. Both full-text indexes see a
    //    message's text through `deja_segment` (crate::segment: runs of Han,
    //    Kana and Hangul become their bigrams; other text is unchanged), so
    //    the message index no longer reads its text from `messages` (it
    //    holds tokens the text does not) and becomes contentless, like the
    //    session index. Both are filled again from the stored text; nothing
    //    is embedded again.
    r#"
DROP TRIGGER messages_ai;
DROP TRIGGER messages_ad;
DROP TRIGGER messages_au;
DROP TABLE messages_fts;
CREATE VIRTUAL TABLE messages_fts USING fts5(
    text,
    content = '',
    contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO messages_fts (rowid, text) SELECT id, deja_segment(text) FROM messages;
CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts (rowid, text) VALUES (new.id, deja_segment(new.text));
END;
CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN
    DELETE FROM messages_fts WHERE rowid = old.id;
END;
CREATE TRIGGER messages_au AFTER UPDATE OF text ON messages BEGIN
    DELETE FROM messages_fts WHERE rowid = old.id;
    INSERT INTO messages_fts (rowid, text) VALUES (new.id, deja_segment(new.text));
END;
DELETE FROM sessions_fts;
INSERT INTO sessions_fts (rowid, text)
    SELECT session, deja_segment(group_concat(text, char(10)))
    FROM (SELECT session, text FROM messages ORDER BY session, position)
    GROUP BY session;
"#,
    // 9: whether a session's start is only its transcript's modification
    //    time (no record of the harness dates it): such a date is shown as
    //    approximate and sorts below every recorded one. A reader gives
    //    exactly that time when it finds none, so sessions stored before
    //    are marked by the same rule, against the time their transcript
    //    was last read at.
    r#"
ALTER TABLE sessions ADD COLUMN date_approximate INTEGER NOT NULL DEFAULT 0;
UPDATE sessions SET date_approximate = 1
    WHERE source_id IS NOT NULL
      AND started_at = (SELECT o.mtime_ns / 1000000 FROM sources o WHERE o.id = sessions.source_id);
"#,
    // 10: vectors a teammate published with a pulled session (half
    //    precision), by the text hash of their unit and the model that made
    //    them: the embedding pass takes them instead of running the model,
    //    after checking a sample. They go with their session.
    r#"
CREATE TABLE pulled_vectors (
    session   INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    model     TEXT    NOT NULL,
    text_hash TEXT    NOT NULL,
    vector    BLOB    NOT NULL,
    PRIMARY KEY (session, model, text_hash)
) WITHOUT ROWID;
"#,
    // 11: how each command ended (failed, succeeded or unknown) and its exit
    //    code where the transcript gives one. Commands stored before are
    //    unknown; their transcripts are read again by the next index, so
    //    that readers that know the outcome fill it in.
    r#"
ALTER TABLE commands ADD COLUMN outcome TEXT NOT NULL DEFAULT 'unknown';
ALTER TABLE commands ADD COLUMN exit_code INTEGER;
UPDATE sources SET reader = '';
"#,
    // 12: what each edit wrote (its new text, at most 64 KiB, redacted as
    //    message text is), for `deja blame FILE:LINE`. It goes with its
    //    session (forgetting removes it). Edits stored before keep none;
    //    their transcripts are read again by the next index, so that
    //    readers that keep it fill it in.
    r#"
ALTER TABLE files ADD COLUMN text TEXT;
UPDATE sources SET reader = '';
"#,
    // 13: vectors are cached in half precision (a tag byte, then two bytes
    //    a value); those cached before stay f32s and are read as such. No
    //    table changes: the version keeps an earlier deja, which would read
    //    the new blobs as f32s, from opening the store.
    r#"
UPDATE meta SET value = value WHERE 0;
"#,
    // 14: the messages waiting for embedding units (text that is not only
    //    white space, and no unit yet), kept by triggers as messages and
    //    units come and go, so that what an index run owes the embedding
    //    pass is counted and walked in proportion to what waits rather than
    //    by a scan of every message. Filled once from that rule.
    r#"
CREATE TABLE waiting_units (
    message INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE
);
INSERT INTO waiting_units (message)
    SELECT m.id FROM messages m
    WHERE length(trim(m.text, ' ' || char(9) || char(10) || char(13))) > 0
      AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.message = m.id);
CREATE TRIGGER messages_wait_ai AFTER INSERT ON messages
WHEN length(trim(new.text, ' ' || char(9) || char(10) || char(13))) > 0 BEGIN
    INSERT OR IGNORE INTO waiting_units (message) VALUES (new.id);
END;
CREATE TRIGGER messages_wait_au AFTER UPDATE OF text ON messages BEGIN
    DELETE FROM waiting_units WHERE message = new.id;
    INSERT OR IGNORE INTO waiting_units (message)
        SELECT new.id
        WHERE length(trim(new.text, ' ' || char(9) || char(10) || char(13))) > 0
          AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.message = new.id);
END;
CREATE TRIGGER chunks_wait_ai AFTER INSERT ON chunks BEGIN
    DELETE FROM waiting_units WHERE message = new.message;
END;
CREATE TRIGGER chunks_wait_ad AFTER DELETE ON chunks BEGIN
    INSERT OR IGNORE INTO waiting_units (message)
        SELECT m.id FROM messages m
        WHERE m.id = old.message
          AND length(trim(m.text, ' ' || char(9) || char(10) || char(13))) > 0
          AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.message = old.message);
END;
"#,
    // 15: the directory of a session without one is looked up among its
    //    project's sessions that have one; with only the project id indexed,
    //    a project of thousands of sessions none of which has a directory
    //    (Gemini CLI's project hashes) was scanned once per session: seconds
    //    for `deja sessions` and the timeline at a million messages.
    r#"
CREATE INDEX sessions_project_dir ON sessions (project_id, harness)
    WHERE project_dir IS NOT NULL;
"#,
];

/// The schema version this deja writes.
pub fn current_version() -> i64 {
    MIGRATIONS.len() as i64
}
