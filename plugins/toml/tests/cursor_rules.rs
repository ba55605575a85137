//! The Cursor reader's rules for text that is not the person's nor the
//! answer: the context Cursor puts around `<user_query>` and the reasoning
//! summaries it writes as text parts. Cursor is closed source and no
//! licensed transcript with reasoning in clear was found: the transcript is
//! built in the shape of the real one (`fixtures/golden/cursor`), with
//! reasoning summaries where that file writes `[REDACTED]`, the
//! `<timestamp>`/`<attached_files>` wrapping and `turn_ended` lines other
//! readers' fixtures show.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::Path;

use deja_plugin_api::{ParseRequest, Reader, Role};
use deja_plugin_toml::TomlReader;

fn line(role: &str, content: serde_json::Value) -> String {
    serde_json::json!({"role": role, "message": {"content": content}}).to_string()
}

fn text(t: &str) -> serde_json::Value {
    serde_json::json!({"type": "text", "text": t})
}

#[test]
fn reasoning_summaries_and_attached_context_are_not_messages() {
    let lines = [
        line(
            "user",
            serde_json::json!([text(
                "<timestamp>Monday, Jun 1, 2026, 12:04 PM (UTC+2)</timestamp>\n<attached_files>\n<file path=\"/home/me/.gitconfig\">\n[include]\n  path = ~/.gitconfig.local\n</file>\n</attached_files>\n<user_query>\nwhy does git say my gitconfig is invalid?\n</user_query>"
            )]),
        ),
        line(
            "assistant",
            serde_json::json!([
                text("**Analyzing gitconfig issue**\n\nThe user reports an invalid gitconfig; I should read it first."),
                {"type": "tool_use", "name": "Read", "input": {"path": "/home/me/.gitconfig"}}
            ]),
        ),
        line(
            "assistant",
            serde_json::json!([
                text("**Checking include paths**\n\nThe include points at a file that may not exist."),
                {"type": "tool_use", "name": "Shell", "input": {"command": "git config --list --show-origin"}}
            ]),
        ),
        line(
            "assistant",
            serde_json::json!([text(
                "Your `[include]` names `~/.gitconfig.local`, which does not exist.\n\n**Fix**: create it or remove the include.\n\n[REDACTED]"
            )]),
        ),
        r#"{"type":"turn_ended","status":"success"}"#.to_string(),
        line(
            "user",
            serde_json::json!([text("<user_query>\nthanks, that was it\n</user_query>")]),
        ),
        // A reasoning summary alone on its line, with no tool call.
        line(
            "assistant",
            serde_json::json!([text("**Acknowledging thanks**\n\nNothing more to do.")]),
        ),
        line("assistant", serde_json::json!([text("Glad it works.")])),
    ]
    .join("\n");
    let c = common::context("cursor.toml", Path::new("/nonexistent"), &[]);
    let out = TomlReader::parse(&ParseRequest {
        path: "/h/.cursor/projects/home-me/agent-transcripts/c1/c1.jsonl".into(),
        bytes: lines.as_bytes().into(),
        modified_ms: 1,
        context: &c,
    })
    .unwrap();
    // Hand count: 2 typed queries, 2 answers; the three summaries and the
    // attached file are neither.
    assert_eq!(
        common::messages(&out.sessions[0]),
        vec![
            (Role::User, "why does git say my gitconfig is invalid?"),
            (
                Role::Assistant,
                "Your `[include]` names `~/.gitconfig.local`, which does not exist.\n\n**Fix**: create it or remove the include."
            ),
            (Role::User, "thanks, that was it"),
            (Role::Assistant, "Glad it works."),
        ]
    );
    // The steps' tool calls are still read.
    assert_eq!(out.sessions[0].commands.len(), 1);
    assert_eq!(out.sessions[0].files.len(), 1);
    // The session starts when Cursor's <timestamp> says: 12:04 in UTC+2.
    let june_1 = 1_780_308_240_000;
    assert_eq!(out.sessions[0].started_at_ms, june_1);
    // The answers that follow take the query's time; the second query has
    // none of its own.
    let times: Vec<i64> = out.sessions[0]
        .messages
        .iter()
        .map(|m| m.timestamp_ms)
        .collect();
    assert_eq!(times, [june_1; 4]);
}

#[test]
fn without_a_timestamp_the_session_is_as_old_as_its_file() {
    let lines = [
        line(
            "user",
            serde_json::json!([text("<user_query>\nhi\n</user_query>")]),
        ),
        line("assistant", serde_json::json!([text("Hello.")])),
    ]
    .join("\n");
    let c = common::context("cursor.toml", Path::new("/nonexistent"), &[]);
    let out = TomlReader::parse(&ParseRequest {
        path: "/h/.cursor/projects/home-me/agent-transcripts/c2.jsonl".into(),
        bytes: lines.as_bytes().into(),
        modified_ms: 1_700_000_000_000,
        context: &c,
    })
    .unwrap();
    assert_eq!(out.sessions[0].started_at_ms, 1_700_000_000_000);
}
