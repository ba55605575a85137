//! The reader over the real histories of the shared corpus
//! (`$DEJA_SHARED/corpus/aider`). Opt-in: run it with
//! `DEJA_SHARED=/path/to/shared cargo test -p deja-plugin-aider --test corpus -- --include-ignored --nocapture`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use deja_plugin_aider::AiderReader;
use deja_plugin_api::{HostContext, ParseOutput, ParseRequest, Reader, Role};

const HEADERS: [&str; 3] = [
    "# aider chat started at",
    "# Aider chat started at",
    "# New session started at",
];

#[derive(Debug, Default)]
struct Totals {
    files: usize,
    sessions: usize,
    skipped: usize,
    messages: usize,
    user_messages: usize,
    file_records: usize,
    command_records: usize,
}

#[test]
#[ignore = "needs DEJA_SHARED (the shared corpus)"]
fn corpus_files_parse_sensibly() {
    let shared = std::env::var_os("DEJA_SHARED").expect(
        "DEJA_SHARED is not set: point it at the shared folder (the one holding corpus/aider)",
    );
    let dir = Path::new(&shared).join("corpus").join("aider");
    let files = history_files(&dir);
    assert!(!files.is_empty(), "no .md files in `{}`", dir.display());
    let mut totals = Totals::default();
    let mut failures = Vec::new();
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let output = parse(path, &bytes);
        failures.extend(check(path, &bytes, &output));
        add(&mut totals, &output);
    }
    println!("{totals:#?}");
    assert!(
        failures.is_empty(),
        "{} problem(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn history_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read `{}`: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    files
}

fn parse(path: &Path, bytes: &[u8]) -> ParseOutput {
    let context = HostContext {
        home: "/nonexistent".into(),
        env: Vec::new().into(),
        config_json: r#"{"timezone":"UTC"}"#.into(),
    };
    let path = path.to_string_lossy();
    let request = ParseRequest {
        path: path.as_ref().into(),
        bytes: bytes.into(),
        modified_ms: 0,
        context: &context,
    };
    AiderReader::parse(&request).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The problems found in one file's output.
fn check(path: &Path, bytes: &[u8], output: &ParseOutput) -> Vec<String> {
    let name = path.file_name().unwrap().to_string_lossy();
    let mut problems = Vec::new();
    let raw: Vec<u8> = bytes.iter().copied().filter(|&b| b != 0).collect();
    let raw = String::from_utf8_lossy(&raw);
    let raw_lines: Vec<&str> = raw.split(['\r', '\n']).collect();
    let headers = raw_lines.iter().filter(|l| is_header(l)).count();
    let found = output.sessions.len() + output.skipped_empty as usize;
    if found != headers {
        problems.push(format!(
            "{name}: {found} sessions (with skipped), {headers} headers"
        ));
    }
    let keeps_marks = raw_lines.iter().any(|l| {
        l.starts_with("#### ") && l.ends_with("  ") && !l.trim_start_matches('#').trim().is_empty()
    });
    for session in &output.sessions {
        for message in &session.messages {
            let text = message.text.as_str();
            if text.lines().any(is_header) {
                problems.push(format!("{name}: {} holds a header", session.id));
            }
            if keeps_marks && has_aider_output_line(text) {
                problems.push(format!("{name}: {} holds an aider `>` line", session.id));
            }
        }
    }
    problems
}

fn is_header(line: &str) -> bool {
    HEADERS.iter().any(|h| line.starts_with(h))
}

/// Whether `text` has a line aider wrote as tool output (`> ...  `) outside a fence.
fn has_aider_output_line(text: &str) -> bool {
    let mut fence: Option<usize> = None;
    for line in text.lines() {
        let ticks = line.trim_start().bytes().take_while(|&b| b == b'`').count();
        if ticks >= 3 {
            fence = match fence {
                Some(open) if ticks >= open => None,
                Some(open) => Some(open),
                None => Some(ticks),
            };
            continue;
        }
        if fence.is_none() && line.starts_with("> ") && line.ends_with("  ") {
            return true;
        }
    }
    false
}

fn add(totals: &mut Totals, output: &ParseOutput) {
    totals.files += 1;
    totals.sessions += output.sessions.len();
    totals.skipped += output.skipped_empty as usize;
    for session in &output.sessions {
        totals.messages += session.messages.len();
        totals.user_messages += session
            .messages
            .iter()
            .filter(|m| m.role == Role::User)
            .count();
        totals.file_records += session.files.len();
        totals.command_records += session.commands.len();
    }
}
