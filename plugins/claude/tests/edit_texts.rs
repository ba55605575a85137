//! What an edit wrote, as the reader hands it over through plugin ABI 1.3
//! (`parse_with_edits`), read from a golden fixture: each file record
//! with its edit's new text, none for a record that wrote none.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use deja_plugin_api::testing;
use deja_plugin_claude::ClaudeReader;

/// The file records of every session of the fixture, each with its text.
fn written(relative: &str) -> Vec<(String, Option<String>)> {
    let path = testing::fixtures("claude").join(relative);
    let bytes = std::fs::read(&path).unwrap();
    let out = testing::parse_edits::<ClaudeReader>(
        &path.to_string_lossy(),
        &bytes,
        &testing::empty_context(),
    );
    let mut found = Vec::new();
    for (s, session) in out.output.sessions.iter().enumerate() {
        for (f, file) in session.files.iter().enumerate() {
            found.push((
                file.path.to_string(),
                out.edit_text(s, f).map(str::to_string),
            ));
        }
    }
    found
}

#[test]
fn each_edit_keeps_what_it_wrote() {
    let found =
        written("06-tools/projects/-home-dev-app/00000007-aaaa-4bbb-8ccc-000000000007.jsonl");
    for (path, text) in [
        ("docs/guide.md", Some("b")),
        ("docs/new.md", Some("# New")),
        ("README.md", None),
    ] {
        let text: Option<&str> = text;
        assert!(
            found
                .iter()
                .any(|(p, t)| p.replace('\\', "/").ends_with(path) && t.as_deref() == text),
            "{path}: {text:?} not in {found:#?}"
        );
    }
}
