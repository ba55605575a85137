//! The real Codex homes of the shared corpus: every `<owner>__<repo>/` folder
//! is read as a `DEJA_CODEX_ROOT`. Opt-in: it needs `DEJA_SHARED`, the shared
//! folder's path.
//!
//! `DEJA_SHARED=/work/shared cargo test -p deja-plugin-codex --test corpus -- --include-ignored --nocapture`
//!
//! The expected numbers below were counted outside this reader, by two small
//! Python scripts reading the JSON lines of each file (written for this check,
//! not derived from the Rust code):
//! - messages: `response_item` messages of role user/assistant with their
//!   injected parts dropped (AGENTS.md, `<environment_context>` and the other
//!   `<snake_case>...</snake_case>` blocks, image tags, IDE preambles), plus the
//!   `user_message` / `agent_message` / `item_completed` events left over after
//!   matching each event to a response item with the same role and text
//!   anywhere in the file (a multiset match, not this reader's "twin of the
//!   previous message" rule), events inside review mode excluded;
//! - commands: `shell` / `shell_command` / `exec_command` calls that are not
//!   `apply_patch`, plus `command:` / `cmd:` string literals in code-mode `exec`
//!   programs, plus `<user_shell_command>` blocks;
//! - files: the distinct `*** Add/Update/Delete File:` / `*** Move to:` headers
//!   of each patch, plus shell commands recognized by a regex-based read detector.
//!
//! Both counts were also checked by reading the files: e.g. the 2025-08 legacy
//! rollout `…T11-49-52…` holds one typed prompt and no answer, `…T12-33-03…` only
//! an `<environment_context>`, and `…T18-29-45…` only its header.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use deja_plugin_api::{FileAction, ParseOutput, Reader, Role, Session};
use deja_plugin_codex::CodexReader;

/// `(file below corpus/codex, messages, commands, files)`; 0 messages means the
/// rollout holds no message and is counted as skipped.
const EXPECTED: &[(&str, usize, usize, usize)] = &[
    ("0h-n0__local-voice-assistant-codex/sessions/2025/12/25/6934d1e4dfef__rollout-2025-12-25T22-45-23-019b55c1-d022-7061-bbb9-b0c90708472b.jsonl", 89, 240, 81),
    ("0h-n0__local-voice-assistant-codex/sessions/2025/12/25/d69f8b301ab7__rollout-2025-12-25T22-45-23-019b55c1-d022-7061-bbb9-b0c90708472b.jsonl", 111, 270, 81),
    ("0h-n0__local-voice-assistant-codex/sessions/2025/12/25/e31a3df85794__rollout-2025-12-25T22-45-23-019b55c1-d022-7061-bbb9-b0c90708472b.jsonl", 95, 249, 81),
    ("0h-n0__local-voice-assistant-codex/sessions/2025/12/26/rollout-2025-12-26T01-48-36-019b5669-8da8-7bc3-bed8-e1c1b805dad5.jsonl", 2, 4, 3),
    ("ADIOCLASSMATE__dotfile/archived_sessions/rollout-2026-07-03T15-12-18-019f26d2-378f-7123-aaab-925df3e2bf7b.jsonl", 16, 39, 2),
    ("BearTDK6__ba-pro/sessions/2026/01/08/rollout-2026-01-08T15-18-19-019b9caf-68c8-7c22-a303-de71e0e74e08.jsonl", 1, 0, 0),
    ("BearTDK6__ba-pro/sessions/2026/01/21/rollout-2026-01-21T22-46-13-019be13c-21b4-7103-a3e2-9f85a85fab31.jsonl", 2, 0, 0),
    ("BearTDK6__ba-pro/sessions/2026/04/10/rollout-2026-04-10T09-04-18-019d7522-0c25-7753-988a-ecb75536b66a.jsonl", 8, 12, 5),
    ("CodeGandee__auto-quantize-model/sessions/2025/11/28/rollout-2025-11-28T03-40-25-019ac88c-3f80-7990-a29a-d20399dcab74.jsonl", 0, 0, 0),
    ("JaydenXsoe__ocodex/sessions/2025/08/30/rollout-2025-08-30T11-49-52-bc45dae1-bef4-47c9-b0c0-afb7f25f12b5.jsonl", 1, 0, 0),
    ("JaydenXsoe__ocodex/sessions/2025/08/30/rollout-2025-08-30T12-33-03-ddb14791-ff64-4389-ad02-b847be462b33.jsonl", 0, 0, 0),
    ("JaydenXsoe__ocodex/sessions/2025/09/06/rollout-2025-09-06T18-29-45-d5dddd2b-12b0-4bf0-92fa-95d18c5daa8f.jsonl", 0, 0, 0),
    ("JaydenXsoe__ocodex/sessions/2025/09/06/rollout-2025-09-06T18-58-12-e48b27c2-74e7-4ab9-9683-90504d2230a7.jsonl", 1, 0, 0),
    ("LAF-US__IDAHO-VAULT/archived_sessions/rollout-2026-03-23T01-39-29-019d19a2-6ff2-7cf3-a8e7-16f38b9dee35.jsonl", 4, 0, 0),
    ("LAF-US__IDAHO-VAULT/archived_sessions/rollout-2026-04-01T00-01-07-019d47a1-9e9c-7171-b063-752c5657820e.jsonl", 97, 65, 40),
    ("LAF-US__IDAHO-VAULT/sessions/2026/04/19/rollout-2026-04-19T21-56-39-019da908-7d99-77e2-8d7b-8797ad28f198.jsonl", 1, 0, 0),
    ("Xu-Wentao__dotfile/sessions/2026/04/09/rollout-2026-04-09T00-16-48-019d6de1-d0fe-7f81-a1e1-d510f519f70e.jsonl", 1, 0, 0),
    ("blubber__dotfiles/sessions/2026/02/17/rollout-2026-02-17T08-31-40-019c6a83-1048-75a2-9ea8-84c4983ca6be.jsonl", 0, 0, 0),
    ("doudouqie66__CommonTools/sessions/2026/07/01/rollout-2026-07-01T17-24-47-019f1cfe-bd04-7393-9acb-dd60ec461065.jsonl", 2, 0, 0),
    ("doudouqie66__CommonTools/sessions/2026/07/11/rollout-2026-07-11T10-12-00-019f4ef2-1395-7b11-922e-38d69dc1b66a.jsonl", 1, 0, 0),
    ("doudouqie66__CommonTools/sessions/2026/07/11/rollout-2026-07-11T10-23-56-019f4efd-0137-7790-9622-c175e1415048.jsonl", 5, 34, 1),
    ("doudouqie66__CommonTools/sessions/2026/07/13/rollout-2026-07-13T17-34-22-019f5ad3-cc03-70a1-a033-21832dc4d591.jsonl", 30, 49, 20),
    ("h-morishita-esol__devenv/sessions/2026/02/19/rollout-2026-02-19T15-53-21-019c74ac-b57f-7c31-b3b6-976b175185ff.jsonl", 2, 1, 1),
    ("mncuchiinhuttt__exact2026/sessions/2026/05/07/rollout-2026-05-07T15-38-21-019e0317-0939-7262-9c00-59e4b98f1c8b.jsonl", 70, 85, 71),
    ("sandialabs__conin/sessions/2026/09/02/rollout-2026-09-02T15-58-14-01a06421-3bf7-7ed2-a618-e42b6c961905.jsonl", 2, 0, 0),
];

/// The growing rollout, its snapshots in the order they were committed.
const GROWING: [&str; 3] = [
    "0h-n0__local-voice-assistant-codex/sessions/2025/12/25/6934d1e4dfef__rollout-2025-12-25T22-45-23-019b55c1-d022-7061-bbb9-b0c90708472b.jsonl",
    "0h-n0__local-voice-assistant-codex/sessions/2025/12/25/e31a3df85794__rollout-2025-12-25T22-45-23-019b55c1-d022-7061-bbb9-b0c90708472b.jsonl",
    "0h-n0__local-voice-assistant-codex/sessions/2025/12/25/d69f8b301ab7__rollout-2025-12-25T22-45-23-019b55c1-d022-7061-bbb9-b0c90708472b.jsonl",
];

/// Titles the homes' `session_index.jsonl` give (the last entry wins), and the
/// one a `thread_name_updated` event gives.
const TITLES: &[(&str, &str)] = &[
    (
        "019f26d2-378f-7123-aaab-925df3e2bf7b",
        "查看 ubpb_c4_342M_sdar_g1 失败原因",
    ),
    (
        "019d19a2-6ff2-7cf3-a8e7-16f38b9dee35",
        "List available tools",
    ),
    ("019d47a1-9e9c-7171-b063-752c5657820e", "The Hunter"),
    (
        "019e0317-0939-7262-9c00-59e4b98f1c8b",
        "Build physics reasoning pipeline",
    ),
];

fn corpus() -> PathBuf {
    let shared = std::env::var("DEJA_SHARED").expect(
        "DEJA_SHARED is not set: set it to the shared folder's path (e.g. DEJA_SHARED=/work/shared) to run the corpus test",
    );
    let corpus = Path::new(&shared).join("corpus/codex");
    assert!(corpus.is_dir(), "no corpus at `{}`", corpus.display());
    corpus
}

fn relative(corpus: &Path, path: &Path) -> String {
    path.strip_prefix(corpus)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[derive(Default, Debug)]
struct Totals {
    files: usize,
    sessions: usize,
    skipped: usize,
    subagents: usize,
    user: usize,
    assistant: usize,
    edits: usize,
    reads: usize,
    commands: usize,
}

#[test]
#[ignore = "needs DEJA_SHARED (the shared corpus)"]
fn every_corpus_rollout_parses_to_the_counted_numbers() {
    let corpus = corpus();
    let mut roots: Vec<PathBuf> = fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    roots.sort();

    let mut totals = Totals::default();
    let mut found: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    let mut slowest = (Duration::ZERO, String::new(), 0);
    let mut titles: BTreeMap<String, String> = BTreeMap::new();
    for root in &roots {
        let context = common::context(
            Path::new("/nonexistent-home"),
            &[("DEJA_CODEX_ROOT", root.as_path())],
            "{}",
        );
        let discovery = <CodexReader as Reader>::discover(&context).unwrap();
        assert!(discovery.warnings.is_empty(), "{:?}", discovery.warnings);
        for transcript in discovery.transcripts.iter() {
            let path = Path::new(transcript.as_str());
            let name = relative(&corpus, path);
            let bytes = fs::read(path).unwrap();
            // The host hands detect the first 4 KiB; a rollout's first line is longer.
            let head = &bytes[..bytes.len().min(4096)];
            assert_eq!(
                <CodexReader as Reader>::detect(transcript.as_str(), head),
                100,
                "{name}"
            );
            let started = Instant::now();
            let output = common::parse_bytes(transcript.as_str(), &bytes, 0, &context);
            let took = started.elapsed();
            if took > slowest.0 {
                slowest = (took, name.clone(), bytes.len());
            }
            assert!(output.warnings.is_empty(), "{name}: {:?}", output.warnings);
            assert!(
                output.sessions.len() + output.skipped_empty as usize == 1,
                "{name}: one session per rollout"
            );
            totals.files += 1;
            totals.skipped += output.skipped_empty as usize;
            let counts = output.sessions.first().map_or((0, 0, 0), |s| {
                add(&mut totals, s);
                if let Some(title) = s.title.as_ref().into_option() {
                    titles.insert(s.native_id.to_string(), title.to_string());
                }
                check_session(&name, s);
                (s.messages.len(), s.commands.len(), s.files.len())
            });
            found.insert(name, counts);
        }
    }

    let expected: BTreeMap<String, (usize, usize, usize)> = EXPECTED
        .iter()
        .map(|(f, m, c, fi)| (f.to_string(), (*m, *c, *fi)))
        .collect();
    assert_eq!(
        found, expected,
        "discovered files and their (messages, commands, files)"
    );
    assert_eq!(totals.files, 25);
    assert_eq!(totals.sessions, 21);
    assert_eq!(totals.skipped, 4);
    assert_eq!(totals.user + totals.assistant, 541);
    assert_eq!(totals.commands, 1048);
    assert_eq!((totals.edits, totals.reads), (173, 213));
    let expected_titles: BTreeMap<String, String> = TITLES
        .iter()
        .map(|(id, t)| (id.to_string(), t.to_string()))
        .collect();
    assert_eq!(titles, expected_titles);
    println!(
        "codex corpus: {} roots, {} rollout files, {} sessions ({} sub-agents) + {} without messages, \
         messages: {} user + {} assistant = {}, files records: {} ({} edit, {} read), command records: {}",
        roots.len(),
        totals.files,
        totals.sessions,
        totals.subagents,
        totals.skipped,
        totals.user,
        totals.assistant,
        totals.user + totals.assistant,
        totals.edits + totals.reads,
        totals.edits,
        totals.reads,
        totals.commands,
    );
    println!(
        "slowest parse: {:?} for {} ({} bytes)",
        slowest.0, slowest.1, slowest.2
    );
}

fn add(totals: &mut Totals, s: &Session) {
    totals.sessions += 1;
    totals.subagents += usize::from(s.parent_id.is_some());
    for m in s.messages.iter() {
        match m.role {
            Role::User => totals.user += 1,
            Role::Assistant => totals.assistant += 1,
        }
    }
    for f in s.files.iter() {
        match f.action {
            FileAction::Read => totals.reads += 1,
            _ => totals.edits += 1,
        }
    }
    totals.commands += s.commands.len();
}

/// What holds for every real session: a directory, times in order, no
/// injected context among the messages.
fn check_session(name: &str, s: &Session) {
    assert!(s.project.dir.is_some(), "{name}: no project directory");
    assert!(s.started_at_ms <= s.updated_at_ms, "{name}");
    assert!(
        name.contains(s.native_id.as_str()),
        "{name}: id {}",
        s.native_id
    );
    for m in s.messages.iter() {
        let text = m.text.as_str();
        assert!(!text.trim().is_empty(), "{name}: empty message");
        for marker in [
            "<environment_context>",
            "# AGENTS.md instructions",
            "<user_instructions>",
            "<turn_aborted>",
            "<user_action>",
            "<permissions instructions>",
            "# Context from my IDE setup:",
        ] {
            assert!(
                !text.starts_with(marker),
                "{name}: injected message {text:.80}"
            );
        }
        assert!(
            s.started_at_ms <= m.timestamp_ms,
            "{name}: message before the start"
        );
    }
}

#[test]
#[ignore = "needs DEJA_SHARED (the shared corpus)"]
fn the_growing_rollout_reads_as_prefixes_of_itself() {
    let corpus = corpus();
    let context = common::empty_context();
    let read = |name: &str| -> (Vec<u8>, ParseOutput) {
        let path = corpus.join(name);
        let bytes = fs::read(&path).unwrap();
        let output = common::parse_bytes(&path.to_string_lossy(), &bytes, 0, &context);
        (bytes, output)
    };
    let snapshots: Vec<(Vec<u8>, ParseOutput)> = GROWING.iter().map(|n| read(n)).collect();
    for pair in snapshots.windows(2) {
        let ((old_bytes, old), (new_bytes, new)) = (&pair[0], &pair[1]);
        assert!(
            new_bytes.starts_with(old_bytes),
            "each snapshot is a byte prefix of the next"
        );
        let (old, new) = (&old.sessions[0], &new.sessions[0]);
        assert_eq!((&old.id, &old.native_id), (&new.id, &new.native_id));
        assert_eq!(old.started_at_ms, new.started_at_ms);
        assert!(new.messages.len() > old.messages.len());
        assert_eq!(
            &new.messages.as_slice()[..old.messages.len()],
            old.messages.as_slice()
        );
        assert_eq!(
            &new.commands.as_slice()[..old.commands.len()],
            old.commands.as_slice()
        );
        assert_eq!(
            &new.files.as_slice()[..old.files.len()],
            old.files.as_slice()
        );
    }
    // And cut at every line of the latest snapshot (each a moment of its growth).
    let (bytes, full) = &snapshots[2];
    let full = &full.sessions[0];
    let name = corpus.join(GROWING[2]).to_string_lossy().into_owned();
    let mut cuts = 0;
    for (end, _) in bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .step_by(7)
    {
        let part = common::parse_bytes(&name, &bytes[..end], 0, &context);
        if let Some(s) = part.sessions.first() {
            assert_eq!(
                &full.messages.as_slice()[..s.messages.len()],
                s.messages.as_slice()
            );
            cuts += 1;
        }
    }
    assert!(cuts > 100);
}

#[test]
#[ignore = "needs DEJA_SHARED (the shared corpus)"]
fn side_files_are_no_sessions() {
    let corpus = corpus();
    let context = common::empty_context();
    for side in [
        "JaydenXsoe__ocodex/history.jsonl",
        "LAF-US__IDAHO-VAULT/history.jsonl",
        "LAF-US__IDAHO-VAULT/session_index.jsonl",
        "ADIOCLASSMATE__dotfile/session_index.jsonl",
    ] {
        let path = corpus.join(side);
        let head = fs::read(&path).unwrap();
        assert_eq!(
            <CodexReader as Reader>::detect(&path.to_string_lossy(), &head),
            0,
            "{side}"
        );
        let output = common::parse_file(&path, &context);
        assert!(output.sessions.is_empty(), "{side}: {output:?}");
    }
}

#[test]
#[ignore = "needs DEJA_SHARED (the shared corpus)"]
fn other_harnesses_files_are_not_claimed() {
    let corpus = corpus();
    let others = corpus.parent().unwrap();
    let mut checked = 0;
    for harness in ["claude", "qwen", "gemini", "aider"] {
        let dir = others.join(harness);
        if !dir.is_dir() {
            continue;
        }
        for file in common::walk(&dir) {
            let bytes = fs::read(&file).unwrap();
            let head = &bytes[..bytes.len().min(4096)];
            let score = <CodexReader as Reader>::detect(&file.to_string_lossy(), head);
            assert_eq!(score, 0, "{}", file.display());
            checked += 1;
        }
    }
    assert!(checked > 50, "only {checked} files of other harnesses");
}
