//! The summary that compacts an OpenCode session is text OpenCode has the
//! model write for itself: not an answer, in the database
//! (`fixtures/golden/opencode/04-compaction.sql`) as in `storage/`
//! (`opencode_storage.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::Path;

use deja_plugin_api::testing;
use deja_plugin_api::{ParseRequest, Reader, Role};
use deja_plugin_toml::TomlReader;
use rusqlite::Connection;

#[test]
fn a_compaction_summary_is_not_an_answer() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("opencode.db");
    let conn = Connection::open(&db).unwrap();
    for name in ["schema.sql", "04-compaction.sql"] {
        let sql = std::fs::read_to_string(testing::fixtures("opencode").join(name)).unwrap();
        conn.execute_batch(&sql).unwrap();
    }
    drop(conn);
    let bytes = std::fs::read(&db).unwrap();
    let c = common::context("opencode.toml", Path::new("/nonexistent"), &[]);
    let out = TomlReader::parse(&ParseRequest {
        path: db.to_string_lossy().as_ref().into(),
        bytes: bytes.as_slice().into(),
        modified_ms: 0,
        context: &c,
    })
    .unwrap();
    // Hand count: msg_43 has no text, msg_44 is the summary.
    assert_eq!(
        common::messages(&out.sessions[0]),
        vec![
            (Role::User, "Split the router into modules."),
            (Role::Assistant, "Split into routes/ and handlers/."),
            (Role::User, "Now add tests."),
        ]
    );
}
