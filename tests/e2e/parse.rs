//! `deja parse`: errors that name the file, detection, folders.

use crate::common::Sandbox;

#[test]
fn missing_path_and_unknown_harness_are_clear_errors() {
    let sb = Sandbox::new();
    let out = sb.run(&["parse", "/nonexistent/file.md"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("/nonexistent/file.md") && out.stderr.contains("does not exist"),
        "{}",
        out.stderr
    );

    let file = sb.write("notes.txt", "hello");
    let out = sb.run(&["parse", file.to_str().unwrap(), "--harness", "windsurf"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("no loaded reader for harness `windsurf`"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("aider"), "{}", out.stderr);

    let out = sb.run(&["parse", file.to_str().unwrap()]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("notes.txt") && out.stderr.contains("no reader recognizes"),
        "{}",
        out.stderr
    );
}

#[test]
fn oversized_files_are_skipped_with_the_limit_named() {
    let sb = Sandbox::new();
    sb.config("[index]\nmax_file_bytes = 10\n");
    let file = sb.write(
        "p/.aider.chat.history.md",
        "\n# aider chat started at 2026-07-17 09:00:00\n\n#### hi  \n",
    );
    let out = sb.run(&["parse", file.to_str().unwrap(), "--json"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("max_file_bytes"), "{}", out.stderr);
    assert_eq!(out.json()["errors"][0]["path"], file.to_str().unwrap());
}

/// Minimal Claude Code, Codex CLI and Qwen Code records, as other tools'
/// conformance fixtures write them (no uuid chain, no session fields; a
/// Codex payload without its `type`), read as the user and assistant
/// messages they plainly hold, each by the right reader without `--harness`.
#[test]
fn minimal_claude_codex_and_qwen_records_read_as_their_messages() {
    let sb = Sandbox::new();
    let claude = sb.write(
        "fixtures/claude-minimal.jsonl",
        "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"Why does the export leak other tenants?\"}}\n{\"type\":\"assistant\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"The join drops the tenant predicate.\"}]}}\n",
    );
    let codex = sb.write(
        "fixtures/codex-minimal.jsonl",
        "{\"timestamp\":\"2026-01-01T00:00:00Z\",\"type\":\"response_item\",\"payload\":{\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"Why does the export leak other tenants?\"}]}}\n{\"timestamp\":\"2026-01-01T00:00:05Z\",\"type\":\"response_item\",\"payload\":{\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"The join drops the tenant predicate.\"}]}}\n",
    );
    let qwen = sb.write(
        "fixtures/qwen-minimal.jsonl",
        "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"parts\":[{\"text\":\"Why does the export leak other tenants?\"}]}}\n{\"type\":\"assistant\",\"message\":{\"role\":\"model\",\"parts\":[{\"text\":\"The join drops the tenant predicate.\"}]}}\n",
    );
    for (file, harness) in [(&claude, "claude"), (&codex, "codex"), (&qwen, "qwen")] {
        let out = sb.ok(&["parse", file.to_str().unwrap(), "--json"]).json();
        let s = &out["sessions"][0];
        assert_eq!(s["harness"], harness, "{out:#}");
        let messages: Vec<(&str, &str)> = s["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (m["role"].as_str().unwrap(), m["text"].as_str().unwrap()))
            .collect();
        assert_eq!(
            messages,
            vec![
                ("user", "Why does the export leak other tenants?"),
                ("assistant", "The join drops the tenant predicate."),
            ],
            "{harness}"
        );
    }
}
