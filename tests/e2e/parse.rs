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
    let out = sb.run(&["parse", file.to_str().unwrap(), "--harness", "cursor"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("no loaded reader for harness `cursor`"),
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
