//! What an edit wrote, as the reader hands it over through plugin ABI 1.3
//! (`parse_with_edits`), read from a golden fixture: each file record
//! with its edit's new text, none for a record that wrote none.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use deja_plugin_api::testing;
use deja_plugin_gemini::GeminiReader;

/// The file records of every session of the fixture, each with its text.
fn written(relative: &str) -> Vec<(String, Option<String>)> {
    let path = testing::fixtures("gemini").join(relative);
    let bytes = std::fs::read(&path).unwrap();
    let out = testing::parse_edits::<GeminiReader>(
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
        written("11-tool-calls/tmp/tools-app/chats/session-2026-07-17T09-00-bbbb1111.jsonl");
    for (path, text) in [
        ("src/lib.rs", Some("b")),
        ("tests/date.rs", Some("#[test] fn t() {}")),
        ("docs/design.md", None),
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
