//! The gptme reader, written only in TOML (`readers/gptme.toml`):
//! `fixtures/golden/gptme/` holds two conversations gptme 0.35.1 wrote in
//! runs against a scripted model, each of two turns (the second resumed with
//! `--name`): one in the `tool` format (tool calls written into the text as
//! `@shell(<id>): {json}`), one in the default `markdown` format.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
use deja_plugin_api::{FileAction, HostContext, ParseOutput, ROption, Reader, Role};
use deja_plugin_toml::TomlReader;

fn context(home: &Path, env: &[(&str, &str)]) -> HostContext {
    common::context("gptme.toml", home, env)
}

fn conversation(dir: &str) -> PathBuf {
    let files: Vec<PathBuf> = testing::walk(&testing::fixtures("gptme").join(dir))
        .into_iter()
        .filter(|f| f.ends_with("conversation.jsonl"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files.into_iter().next().unwrap()
}

fn parse(dir: &str) -> ParseOutput {
    testing::parse_file::<TomlReader>(&conversation(dir), &context(Path::new("/nonexistent"), &[]))
}

#[test]
fn a_conversation_in_the_tool_format_reads_as_typed_and_answered() {
    let out = parse("real-0.35.1-tool");
    assert_eq!(out.sessions.len(), 1);
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "2026-12-06-hopping-happy-bird");
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/tmp/gt/proj")
    );
    assert_eq!(
        common::messages(s),
        vec![
            (
                Role::User,
                "Why does the ledger show rows of other tenants?"
            ),
            (Role::Assistant, "Looking at the query first."),
            (
                Role::Assistant,
                "The ledger query lost its tenant predicate in the join."
            ),
            (Role::User, "Write that down in notes.md"),
            (Role::Assistant, "I will note it."),
            (Role::Assistant, "Saved the note in notes.md."),
        ]
    );
    // The arguments are JSON in the text: the command comes out unescaped.
    let commands: Vec<&str> = s.commands.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(commands, vec!["grep -rn \"tenant_id\" . && echo 'done'"]);
    assert_eq!(
        common::files(s),
        vec![("/tmp/gt/proj/notes.md", FileAction::Edit)]
    );
    // gptme dates a message in local time without an offset (this run's
    // was UTC); the question was dated before gptme wrote its system prompt.
    assert_eq!(s.started_at_ms, 1_796_523_307_895);
}

#[test]
fn a_conversation_in_the_markdown_format_keeps_the_code_blocks_it_showed() {
    let out = parse("real-0.35.1-markdown");
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "2026-12-06-walking-funny-rat");
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/tmp/gt/md/proj")
    );
    let messages = common::messages(s);
    assert_eq!(
        messages[0],
        (Role::User, "Why does the orders report show other tenants?")
    );
    assert_eq!(
        messages[1],
        (
            Role::Assistant,
            "Let me read the report first.\n\n```shell\ncat reports/orders.sql | head -n 5\n```"
        )
    );
    // The `complete` block that ends an autonomous run says nothing.
    assert_eq!(
        messages[3],
        (
            Role::Assistant,
            "Fixed: the report filters by tenant again."
        )
    );
    assert_eq!(messages[4], (Role::User, "What changed?"));
    assert_eq!(messages.len(), 7, "{messages:#?}");
    let commands: Vec<&str> = s.commands.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(
        commands,
        vec!["cat reports/orders.sql | head -n 5", "git diff --stat"]
    );
    assert_eq!(
        common::files(s),
        vec![("/tmp/gt/md/proj/reports/orders.sql", FileAction::Edit)]
    );
}

#[test]
fn the_nudges_of_an_autonomous_run_are_not_the_users() {
    let line = |role: &str, content: &str, hide: bool| {
        serde_json::json!({"role": role, "content": content,
            "timestamp": "2026-12-06T02:12:09.528646", "hide": hide})
        .to_string()
    };
    let text = [
        line(
            "system",
            "## System Information\n\n**Working Directory:** /home/me/shop",
            true,
        ),
        line("user", "Fix the orders report", false),
        line("user", "<file path=\"a.py\">x</file>", true),
        line("assistant", "Done.", false),
        line(
            "user",
            "<system>No tool call detected in last message. Did you mean to finish?</system>",
            false,
        ),
        line("assistant", "done.", false),
    ]
    .join("\n");
    let out = testing::parse_bytes::<TomlReader>(
        "/logs/2026-12-06-a/conversation.jsonl",
        text.as_bytes(),
        0,
        &context(Path::new("/nonexistent"), &[]),
    );
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "2026-12-06-a");
    assert_eq!(
        common::messages(s),
        vec![
            (Role::User, "Fix the orders report"),
            (Role::Assistant, "Done."),
            (Role::Assistant, "done."),
        ]
    );
}

#[test]
fn discovery_follows_gptmes_own_places() {
    let home = tempfile::tempdir().unwrap();
    let logs = home.path().join(".local/share/gptme/logs");
    std::fs::create_dir_all(logs.join("2026-12-06-a")).unwrap();
    std::fs::write(logs.join("2026-12-06-a/conversation.jsonl"), b"{}").unwrap();
    std::fs::write(logs.join("2026-12-06-a/events.jsonl"), b"{}").unwrap();
    let found =
        |env: &[(&str, &str)]| -> usize { common::discovered(&context(home.path(), env)).len() };
    assert_eq!(found(&[]), 1);
    let other = home.path().join("elsewhere");
    std::fs::create_dir_all(other.join("b")).unwrap();
    std::fs::write(other.join("b/conversation.jsonl"), b"{}").unwrap();
    let other_text = other.to_string_lossy().into_owned();
    assert_eq!(found(&[("GPTME_LOGS_HOME", &other_text)]), 2);
}

#[test]
fn resume_goes_on_with_the_conversation_by_name() {
    let c = context(Path::new("/nonexistent"), &[]);
    let (argv, _) = common::resume(&c, "2026-12-06-a", Some("/home/me/shop"));
    assert_eq!(argv, vec!["gptme", "--name", "2026-12-06-a"]);
}

#[test]
fn a_sub_agents_conversation_is_a_child_of_the_one_that_ran_it() {
    let dir = testing::fixtures("gptme").join("real-0.35.1-subagent");
    let parent = "2026-12-06-dancing-yellow-shark";
    let out = testing::parse_file::<TomlReader>(
        &dir.join(parent).join("conversation.jsonl"),
        &context(Path::new("/nonexistent"), &[]),
    );
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), parent);
    assert_eq!(s.parent_id, ROption::RNone);
    assert_eq!(
        common::messages(s),
        vec![
            (Role::User, "Which migration added the tenant column?"),
            (Role::Assistant, "I will ask a subagent."),
            (Role::Assistant, "The subagent found 0042_tenant.sql."),
        ]
    );
    let out = testing::parse_file::<TomlReader>(
        &dir.join("subagent-mig-3pk0/conversation.jsonl"),
        &context(Path::new("/nonexistent"), &[]),
    );
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "subagent-mig-3pk0");
    assert_eq!(
        s.parent_id.as_ref().map(|p| p.as_str()),
        ROption::RSome(parent)
    );
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/tmp/gs/proj")
    );
    assert_eq!(
        common::messages(s),
        vec![
            (
                Role::User,
                "List the migrations folder and report the tenant migration."
            ),
            (Role::Assistant, "Listing."),
            (Role::Assistant, "0042_tenant.sql is the tenant migration."),
        ]
    );
    let commands: Vec<&str> = s.commands.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(commands, vec!["ls migrations"]);
}

#[test]
fn a_conversation_is_recognized_by_its_first_bytes() {
    let file = conversation("real-0.35.1-tool");
    let head = std::fs::read(&file).unwrap();
    let head = &head[..head.len().min(4096)];
    let sure = TomlReader::detect_in(
        &context(Path::new("/nonexistent"), &[]),
        file.to_str().unwrap(),
        head,
    );
    assert!(sure > 0, "{sure}");
}
