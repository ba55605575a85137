//! The Roo Code extension's reader, written only in TOML
//! (`readers/roo-code.toml`), over `fixtures/golden/roo-code/`: three real
//! tasks committed to Roo Code's repository (Apache-2.0, `SOURCES.md`),
//! and an Orchestrator task with the subtask it started, built from the
//! extension's types in the layout of Roo Code 3.49 and later
//! (`history_item.json` beside each task, `tasks/_index.json`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
use deja_plugin_api::{FileAction, HostContext, ROption, Role, Session};
use deja_plugin_toml::TomlReader;

fn context() -> HostContext {
    common::context("roo-code.toml", Path::new("/nonexistent"), &[])
}

fn task(set: &str, id: &str) -> PathBuf {
    testing::fixtures("roo-code")
        .join(set)
        .join("tasks")
        .join(id)
        .join("ui_messages.json")
}

fn parse(set: &str, id: &str) -> Session {
    let out = testing::parse_file::<TomlReader>(&task(set, id), &context());
    assert_eq!(out.sessions.len(), 1, "{id}");
    out.sessions.into_iter().next().unwrap()
}

fn users(s: &Session) -> Vec<&str> {
    common::messages(s)
        .into_iter()
        .filter(|(r, _)| *r == Role::User)
        .map(|(_, t)| t)
        .collect()
}

#[test]
fn a_real_task_is_the_first_text_then_the_models_answers() {
    let s = parse("real-2025-02", "6a716972-c33f-444f-a8f2-613f03410ace");
    assert_eq!(s.id.as_str(), "6a716972-c33f-444f-a8f2-613f03410ace");
    // The folder is in the first request's environment details.
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("f:/Develop/project/tools/Roo-Code")
    );
    let messages = common::messages(&s);
    assert_eq!(messages.len(), 3, "{messages:#?}");
    assert_eq!(messages[0], (Role::User, "test"));
    assert_eq!(messages[1].0, Role::Assistant);
    assert!(messages[2].1.starts_with("我已经准备就绪"));
    assert_eq!(s.started_at_ms, 1_739_987_209_703);
}

#[test]
fn an_at_mention_is_read_as_typed_not_as_roo_code_expanded_it() {
    let s = parse("real-2025-02", "eaece8cc-d874-4e46-9330-52d772f31492");
    assert_eq!(users(&s), vec!["@problems"]);
    for m in s.messages.iter() {
        for injected in ["<task>", "workspace_diagnostics", "environment_details"] {
            assert!(!m.text.contains(injected), "{}", m.text);
        }
    }
    assert_eq!(s.files.len(), 1);
    assert_eq!(s.files[0].action, FileAction::Read);
    assert!(s.files[0].path.ends_with("package.json"));
}

#[test]
fn a_real_subtask_reads_its_instruction_feedback_and_file_reads() {
    // A subtask's first text is the instruction Orchestrator mode wrote;
    // Roo Code's empty `text` records are no messages.
    let s = parse("real-2025-10", "natural-mini-uncondensed");
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("c:/dev/roo-code")
    );
    let u = users(&s);
    assert_eq!(u.len(), 2, "{u:#?}");
    assert!(u[0].starts_with("# Rédaction des réponses"));
    assert_eq!(u[1], "Lis les fichiers en entier stp");
    let assistants = s
        .messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .count();
    assert_eq!(assistants, 4);
    assert!(s.messages.iter().all(|m| !m.text.trim().is_empty()));
    let reads = s
        .files
        .iter()
        .filter(|f| f.action == FileAction::Read)
        .count();
    assert_eq!((reads, s.files.len()), (7, 7));
}

#[test]
fn a_subtask_is_the_child_of_the_task_that_started_it() {
    let parent = parse("from-source", "0b9e3c1e-5d7a-4f0e-9a51-2c4d6e8f1a20");
    let child = parse("from-source", "7f3a2b10-8c4d-4e6f-a1b2-c3d4e5f60718");
    assert_eq!(parent.parent_id, ROption::RNone);
    assert_eq!(
        child.parent_id.as_ref().map(|p| p.as_str()),
        ROption::RSome("0b9e3c1e-5d7a-4f0e-9a51-2c4d6e8f1a20")
    );
    for s in [&parent, &child] {
        assert_eq!(
            s.project.dir.as_ref().map(|d| d.as_str()),
            ROption::RSome("/home/me/shop")
        );
    }
    assert_eq!(
        child.title.as_ref().map(|t| t.as_str()),
        ROption::RSome("Write unit tests for src/pay.ts covering refunds.")
    );
    assert_eq!(
        common::messages(&child),
        vec![
            (
                Role::User,
                "Write unit tests for src/pay.ts covering refunds."
            ),
            (Role::Assistant, "Reading the module first."),
            (Role::Assistant, "Should partial refunds round down?"),
            (Role::User, "To the nearest cent."),
            (
                Role::Assistant,
                "Added 6 refund tests in src/pay.test.ts; all pass."
            ),
        ]
    );
    assert_eq!(
        common::files(&child),
        vec![
            ("/home/me/shop/src/pay.ts", FileAction::Read),
            ("/home/me/shop/src/refund.ts", FileAction::Read),
            ("/home/me/shop/src/pay.test.ts", FileAction::Edit),
            ("/home/me/shop/src/pay.ts", FileAction::Edit),
        ]
    );
    let commands: Vec<&str> = child.commands.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(commands, vec!["npx vitest run src/pay.test.ts"]);
}

#[test]
fn the_index_names_the_parent_when_the_tasks_own_entry_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let child = dir.path().join("tasks/c1");
    std::fs::create_dir_all(&child).unwrap();
    std::fs::write(
        child.join("ui_messages.json"),
        r#"[{"ts":1790000000000,"type":"say","say":"text","text":"do it"}]"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("tasks/_index.json"),
        r#"{"version":1,"updatedAt":1,"entries":[{"id":"c1","parentTaskId":"p1","workspace":"/w/x","task":"do it","ts":1,"number":2,"tokensIn":0,"tokensOut":0,"totalCost":0}]}"#,
    )
    .unwrap();
    let out = testing::parse_file::<TomlReader>(&child.join("ui_messages.json"), &context());
    let s = &out.sessions[0];
    assert_eq!(
        s.parent_id.as_ref().map(|p| p.as_str()),
        ROption::RSome("p1")
    );
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/w/x")
    );
}

#[test]
fn records_of_the_wrong_shape_are_passed_by() {
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("tasks/t1");
    std::fs::create_dir_all(&task).unwrap();
    // A tool's text that is not JSON, a question written as plain text, a
    // number, a null, a time that is no time.
    std::fs::write(
        task.join("ui_messages.json"),
        r#"[{"ts":1790000000000,"type":"say","say":"text","text":"hi"},
            {"ts":1790000001000,"type":"ask","ask":"tool","text":"{not json"},
            {"ts":1790000002000,"type":"ask","ask":"followup","text":"plain?"},
            7, null,
            {"ts":"soon","type":"say","say":"text","text":"answer"}]"#,
    )
    .unwrap();
    let out = testing::parse_file::<TomlReader>(&task.join("ui_messages.json"), &context());
    let s = &out.sessions[0];
    assert_eq!(
        common::messages(s),
        vec![(Role::User, "hi"), (Role::Assistant, "answer")]
    );
    assert!(s.files.is_empty() && s.commands.is_empty());
    // A document that is not a list of messages holds no session.
    std::fs::write(task.join("ui_messages.json"), r#"{"not": "a list"}"#).unwrap();
    let out = testing::parse_file::<TomlReader>(&task.join("ui_messages.json"), &context());
    assert!(out.sessions.is_empty());
    assert_eq!(out.skipped_empty, 1);
}
