//! The Cline extension's reader, written only in TOML
//! (`readers/cline-vscode.toml`), over
//! `fixtures/golden/cline-vscode/globalStorage/saoudrizwan.claude-dev/`: two
//! tasks built from the extension's own types (no real file with a licence
//! was found), one with the task history Cline keeps in `state/` and one in
//! the shape of its early versions.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
use deja_plugin_api::{FileAction, HostContext, ROption, Reader, Role};
use deja_plugin_toml::TomlReader;

fn context(home: &Path) -> HostContext {
    common::context("cline-vscode.toml", home, &[])
}

fn task(id: &str) -> PathBuf {
    testing::fixtures("cline-vscode")
        .join("globalStorage/saoudrizwan.claude-dev/tasks")
        .join(id)
        .join("ui_messages.json")
}

#[test]
fn a_task_is_what_was_typed_the_answers_and_the_tools_it_ran() {
    let out = testing::parse_file::<TomlReader>(
        &task("1796100000000"),
        &context(Path::new("/nonexistent")),
    );
    assert_eq!(out.sessions.len(), 1);
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "1796100000000");
    // The folder and the title come from state/taskHistory.json.
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/home/me/shop")
    );
    assert_eq!(
        s.title.as_ref().map(|t| t.as_str()),
        ROption::RSome("Why does the orders report show other tenants?")
    );
    assert_eq!(s.parent_id, ROption::RNone);
    assert_eq!(
        common::messages(s),
        vec![
            (Role::User, "Why does the orders report show other tenants?"),
            (Role::Assistant, "Let me look at the report."),
            (
                Role::Assistant,
                "Should the fix also cover the invoices report?"
            ),
            (Role::User, "Yes, both reports."),
            (
                Role::Assistant,
                "The report's join lost the tenant predicate; I added it back."
            ),
        ]
    );
    // The wrappers and the environment details Cline sends are not text
    // anyone typed.
    for m in s.messages.iter() {
        for injected in ["<task>", "environment_details", "Current Working Directory"] {
            assert!(!m.text.contains(injected), "{}", m.text);
        }
    }
    assert_eq!(
        (s.started_at_ms, s.updated_at_ms),
        (1_796_100_000_000, 1_796_100_036_100)
    );
    let commands: Vec<&str> = s.commands.iter().map(|c| c.command.as_str()).collect();
    // The marker Cline appends to a command the model wants approved is not
    // part of it.
    assert_eq!(
        commands,
        vec!["rg -n tenant_id reports/", "git log -1 --oneline"]
    );
    assert_eq!(
        common::files(s),
        vec![
            ("/home/me/shop/reports/orders.sql", FileAction::Read),
            ("/home/me/shop/reports/orders.sql", FileAction::Edit),
            ("/home/me/shop/reports/README.md", FileAction::Edit),
        ]
    );
}

#[test]
fn an_early_task_starts_with_the_first_text_and_finds_its_folder_in_the_request() {
    let out = testing::parse_file::<TomlReader>(
        &task("1733000000000"),
        &context(Path::new("/nonexistent")),
    );
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "1733000000000");
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/home/me/tools")
    );
    assert_eq!(s.title, ROption::RNone);
    assert_eq!(
        common::messages(s),
        vec![
            (Role::User, "Add a --dry-run flag to the sync script"),
            (Role::Assistant, "I'll read the script first."),
            (
                Role::Assistant,
                "Added --dry-run: the script prints each rsync it would run."
            ),
        ]
    );
    assert_eq!(
        common::files(s),
        vec![("/home/me/tools/scripts/sync.sh", FileAction::Read)]
    );
}

#[test]
fn a_folder_in_the_api_history_is_used_when_nothing_else_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("tasks/1790000000000");
    std::fs::create_dir_all(&task).unwrap();
    std::fs::write(
        task.join("ui_messages.json"),
        r#"[{"ts":1790000000000,"type":"say","say":"task","text":"hi"}]"#,
    )
    .unwrap();
    std::fs::write(
        task.join("api_conversation_history.json"),
        r#"[{"role":"user","content":[{"type":"text","text":"<task>\nhi\n</task>"},{"type":"text","text":"<environment_details>\n# Current Working Directory (/w/app) Files\n</environment_details>"}]}]"#,
    )
    .unwrap();
    let out = testing::parse_file::<TomlReader>(
        &task.join("ui_messages.json"),
        &context(Path::new("/nonexistent")),
    );
    assert_eq!(
        out.sessions[0].project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/w/app")
    );
}

// The editors' user folders named here are Linux's.
#[cfg(target_os = "linux")]
#[test]
fn discovery_finds_tasks_in_every_editor_and_in_clines_data_folder() {
    let home = tempfile::tempdir().unwrap();
    let places = [
        ".config/Code/User/globalStorage/saoudrizwan.claude-dev",
        ".config/Cursor/User/globalStorage/saoudrizwan.claude-dev",
        ".vscode-server/data/User/globalStorage/saoudrizwan.claude-dev",
        ".cline/data",
    ];
    let mut wanted = Vec::new();
    for place in places {
        let dir = home.path().join(place).join("tasks/1796100000000");
        std::fs::create_dir_all(&dir).unwrap();
        for name in [
            "ui_messages.json",
            "api_conversation_history.json",
            "task_metadata.json",
        ] {
            std::fs::write(dir.join(name), b"[]").unwrap();
        }
        wanted.push(dir.join("ui_messages.json").to_string_lossy().into_owned());
    }
    // Another extension's tasks are not Cline's.
    let roo = home
        .path()
        .join(".config/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks/x");
    std::fs::create_dir_all(&roo).unwrap();
    std::fs::write(roo.join("ui_messages.json"), b"[]").unwrap();
    let found = common::discovered(&context(home.path()));
    wanted.sort();
    assert_eq!(found, wanted);
}

#[test]
fn a_task_file_is_recognised_by_where_it_is() {
    let head = br#"[{"ts":1,"type":"say","say":"task","text":"hi"}]"#;
    let cline =
        "/h/.config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/1/ui_messages.json";
    let roo =
        "/h/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks/1/ui_messages.json";
    let c = context(Path::new("/nonexistent"));
    let score = |p: &str| TomlReader::detect_in(&c, p, head);
    assert!(score(cline) > score(roo), "{} {}", score(cline), score(roo));
}
