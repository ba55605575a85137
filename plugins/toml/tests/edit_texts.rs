//! What an edit wrote, as reader descriptions say it (`text` in a
//! `[[tools]]` rule), handed over through plugin ABI 1.3: OpenCode 1.18.33's
//! own database, whose `write` call kept its `content`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::Path;

use deja_plugin_api::testing;
use deja_plugin_api::{ParseOutputV1_3, ParseRequest, Reader};
use deja_plugin_toml::TomlReader;

#[test]
fn opencode_keeps_what_its_write_tool_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("opencode.db");
    std::fs::copy(
        testing::fixtures("opencode").join("real-1.18.33/opencode.db"),
        &db,
    )
    .unwrap();
    let bytes = std::fs::read(&db).unwrap();
    let c = common::context("opencode.toml", Path::new("/nonexistent-home"), &[]);
    let out: ParseOutputV1_3 = TomlReader::parse_with_edits(&ParseRequest {
        path: db.to_string_lossy().as_ref().into(),
        bytes: bytes.as_slice().into(),
        modified_ms: 0,
        context: &c,
    })
    .unwrap();
    let s = &out.output.sessions[0];
    let written: Vec<(&str, Option<&str>)> = s
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.path.as_str(), out.edit_text(0, i)))
        .collect();
    assert!(
        written.contains(&("/tmp/oc/proj/notes.md", Some("tenant predicate fix\n"))),
        "{written:?}"
    );
    // Through the older calls, the same sessions.
    let old = TomlReader::parse_with_outcomes(&ParseRequest {
        path: db.to_string_lossy().as_ref().into(),
        bytes: bytes.as_slice().into(),
        modified_ms: 0,
        context: &c,
    })
    .unwrap();
    assert_eq!(old.output, out.output);
}
