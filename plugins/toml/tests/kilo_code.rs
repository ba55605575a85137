//! The Kilo Code extension's reader, written only in TOML
//! (`readers/kilo-code.toml`), over `fixtures/golden/kilo-code/`: a task
//! built from the extension's types (no real file with a licence was
//! found), in Roo Code's layout, which Kilo Code shares.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::Path;

use deja_plugin_api::testing;
use deja_plugin_api::{FileAction, ROption, Reader, Role};
use deja_plugin_toml::TomlReader;

const ID: &str = "3c2d1e0f-aaaa-4bbb-8ccc-0123456789ab";

#[test]
fn a_task_takes_its_folder_from_the_api_history_and_reads_batched_edits() {
    let path = testing::fixtures("kilo-code")
        .join("from-source/tasks")
        .join(ID)
        .join("ui_messages.json");
    let c = common::context("kilo-code.toml", Path::new("/nonexistent"), &[]);
    let out = testing::parse_file::<TomlReader>(&path, &c);
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), ID);
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/home/me/blog")
    );
    assert_eq!(
        common::messages(s),
        vec![
            (Role::User, "Why is the RSS feed missing drafts?"),
            (
                Role::Assistant,
                "The feed filters on `published`; let me check."
            ),
            (Role::Assistant, "Should drafts appear in the feed at all?"),
            (Role::User, "Yes, marked as drafts."),
            (
                Role::Assistant,
                "Drafts now appear in the feed, titled with a [draft] prefix."
            ),
        ]
    );
    assert_eq!(
        common::files(s),
        vec![
            ("/home/me/blog/feed.py", FileAction::Read),
            ("/home/me/blog/feed.py", FileAction::Edit),
            ("/home/me/blog/templates/item.xml", FileAction::Edit),
        ]
    );
    let commands: Vec<&str> = s.commands.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(commands, vec!["grep -rn published posts/ | head"]);
}

// The editors' user folders named here are Linux's.
#[cfg(target_os = "linux")]
#[test]
fn discovery_finds_kilo_codes_tasks_only() {
    let home = tempfile::tempdir().unwrap();
    let mut wanted = Vec::new();
    for ext in ["kilocode.kilo-code", "saoudrizwan.claude-dev"] {
        let dir = home
            .path()
            .join(".config/VSCodium/User/globalStorage")
            .join(ext)
            .join("tasks/t1");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("ui_messages.json"), b"[]").unwrap();
        if ext.starts_with("kilocode") {
            wanted.push(dir.join("ui_messages.json").to_string_lossy().into_owned());
        }
    }
    let c = common::context("kilo-code.toml", home.path(), &[]);
    let found: Vec<String> = TomlReader::discover(&c)
        .unwrap()
        .transcripts
        .iter()
        .map(|t| t.to_string())
        .collect();
    assert_eq!(found, wanted);
}
