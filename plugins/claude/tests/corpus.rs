//! The real Claude Code trees of the shared corpus: every `<owner>__<repo>/`
//! folder (laid out as below `~/.claude`) is read as a `DEJA_CLAUDE_ROOT`.
//! Opt-in: it needs `DEJA_SHARED`, the shared folder's path.
//!
//! `DEJA_SHARED=/work/shared cargo test -p deja-plugin-claude --test corpus -- --include-ignored --nocapture`
//!
//! The expected numbers below were counted from the files themselves, not
//! from this reader: by reading every transcript record by record (the
//! per-file notes of `corpus/claude/SOURCES.tsv` and `QUIRKS.md` list their
//! record types) and by a separate Python script applying the rules of the
//! README section line by line (a `user` record counts when a person typed
//! it: not `isMeta`, no compaction summary, not only tool results, markup and
//! wrappers, no interruption marker, no local-command output, no copy written
//! on resume; replies count once per `message.id` with text, made-up ones
//! never; removed queued prompts count; subagent files count without the
//! records they copied from their parent; Bash calls are commands, file tools
//! are files, unless their result says they did not happen). Both agree file
//! by file.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use deja_plugin_api::{CommandOrigin, FileAction, Reader, Role};
use deja_plugin_claude::ClaudeReader;

/// Per transcript (path below the corpus, with `…` for the project folder):
/// sessions, user messages, assistant messages, sessions left out (no message
/// or a warm-up). Files with no conversation at all give `(0, 0, 0, 0)`.
const EXPECTED: &[(&str, u32, u32, u32, u32)] = &[
    ("4thehalibit__omarchy-backup/…/0b903f4a-f843-4a76-90bb-df10400e0478.jsonl", 1, 1, 1, 0),
    ("4thehalibit__omarchy-backup/…/44ef5cbf-9cc3-4f7b-ac40-337a4d39713b.jsonl", 1, 9, 6, 0),
    ("4thehalibit__omarchy-backup/…/44ef5cbf-9cc3-4f7b-ac40-337a4d39713b/subagents/agent-a71969c1296961234.jsonl", 1, 1, 3, 0),
    ("4thehalibit__omarchy-backup/…/8a3e5a2e-788d-4759-ad92-56023d9aee60.jsonl", 1, 4, 6, 0),
    // `/exit` only.
    ("4thehalibit__omarchy-backup/…/a12d49f7-99d4-4568-af07-d149858678db.jsonl", 0, 0, 0, 1),
    ("AndersKaae__dotfiles/…/0cd1e921-e97d-4dbb-8c1c-b1aae37fd984.jsonl", 1, 3, 3, 0),
    ("JamesTiberiusKirk__dotsv2/…/4390c09a-b503-474e-8e6d-79935f2e5c56.jsonl", 1, 6, 8, 0),
    ("JamesTiberiusKirk__dotsv2/…/983c6d70-0ec5-4892-8277-c8fc164c3bfb.jsonl", 1, 11, 13, 0),
    ("JamesTiberiusKirk__dotsv2/…/983c6d70-0ec5-4892-8277-c8fc164c3bfb/subagents/agent-a91c7987b06ae1fca.jsonl", 1, 1, 6, 0),
    ("JamesTiberiusKirk__dotsv2/…/74f505ae-fa88-4fed-8eea-2a85cb5d4c3e.jsonl", 1, 1, 1, 0),
    ("JamesTiberiusKirk__dotsv2/…/4bb63645-c6ef-443f-aec1-53d354b98a7a.jsonl", 1, 11, 14, 0),
    ("LAF-US__IDAHO-VAULT/…/fdbe59e1-052a-490e-99d8-bc71d445c8bf.jsonl", 1, 27, 46, 0),
    ("LAF-US__IDAHO-VAULT/…/fdbe59e1-052a-490e-99d8-bc71d445c8bf/subagents/agent-a653d89b870042ab4.jsonl", 1, 1, 2, 0),
    ("LAF-US__IDAHO-VAULT/…/fdbe59e1-052a-490e-99d8-bc71d445c8bf/subagents/agent-a7a61c434c152d38b.jsonl", 1, 1, 6, 0),
    ("LAF-US__IDAHO-VAULT/…/fdbe59e1-052a-490e-99d8-bc71d445c8bf/subagents/agent-a8250e424f46d248f.jsonl", 1, 1, 9, 0),
    // The only reply is a rate-limit notice.
    ("LAF-US__IDAHO-VAULT/…/080e0219-39f6-4ced-9823-76c17a4180b0.jsonl", 1, 1, 0, 0),
    // A single `teleported-from` line.
    ("LAF-US__IDAHO-VAULT/…/0e973150-6151-404d-968f-a07b3f204eb3.jsonl", 0, 0, 0, 0),
    ("LAF-US__IDAHO-VAULT/…/237326ca-5e6a-4313-b3dd-44df36143943.jsonl", 1, 6, 24, 0),
    // Side questions: what follows the parent's conversation they copy.
    ("LAF-US__IDAHO-VAULT/…/237326ca-5e6a-4313-b3dd-44df36143943/subagents/agent-aside_question-7a81e4850e48fc1e.jsonl", 1, 1, 1, 0),
    ("LAF-US__IDAHO-VAULT/…/237326ca-5e6a-4313-b3dd-44df36143943/subagents/agent-aside_question-f0d9d80758d763dd.jsonl", 1, 1, 1, 0),
    ("LAF-US__IDAHO-VAULT/…/41a308c7-b1e0-4819-ab03-4f553a17c6e0.jsonl", 1, 2, 4, 0),
    ("LAF-US__IDAHO-VAULT/…/4bd5ca10-d7dc-4472-8780-dd8c62dbbcbf.jsonl", 1, 1, 0, 0),
    ("LAF-US__IDAHO-VAULT/…/9f76d25d-1f33-4fbb-bff8-d3a7c5cfe15d.jsonl", 1, 1, 0, 0),
    // `mode`, `permission-mode` and `/model`.
    ("MrMarHVD__claude-config-to-rule-them-all/…/1d837563-5ffc-4194-adbd-a9f20ea1f15b.jsonl", 0, 0, 0, 0),
    ("awesumsawz__dotfiles-universal/…/34006f28-34f9-4399-a42f-3d4c1ba263bf.jsonl", 1, 1, 9, 0),
    ("awesumsawz__dotfiles-universal/…/8c81ef1f-1223-4457-8904-3b7674d0c125.jsonl", 1, 1, 0, 0),
    ("borja-rojo-ilvento__dotfiles/…/db5a052d-6499-4f59-af43-563050aefc54.jsonl", 1, 3, 3, 0),
    // Summary-only files.
    ("borja-rojo-ilvento__dotfiles/…/054e8c71-c001-4325-a1a3-131a25d69605.jsonl", 0, 0, 0, 0),
    ("borja-rojo-ilvento__dotfiles/…/85792226-0d82-4702-88f9-95747dd809f2.jsonl", 1, 3, 3, 0),
    // 2.8 MB: resumed twice (history rewritten with new uuids), compacted once.
    ("bradymholt__dotfiles/…/354b2588-2a5c-43d7-b678-e95a4a87bd2a.jsonl", 1, 29, 88, 0),
    ("bradymholt__dotfiles/…/7fbaec9d-622c-4561-9d12-dffaddbfa99d.jsonl", 0, 0, 0, 0),
    ("bradymholt__dotfiles/…/a0457e1c-7d65-4cd4-890f-7b8170dccaed.jsonl", 1, 5, 6, 0),
    // `Warmup` subagents.
    ("bradymholt__dotfiles/…/agent-a05b3d3.jsonl", 0, 0, 0, 1),
    ("bradymholt__dotfiles/…/agent-a0edd2b.jsonl", 0, 0, 0, 1),
    ("bradymholt__dotfiles/…/d7287e7b-2a31-45d3-8db1-0e89a9c80416.jsonl", 1, 1, 2, 0),
];

#[derive(Default, Debug, PartialEq)]
struct Totals {
    files: usize,
    sessions: usize,
    subagents: usize,
    user: usize,
    assistant: usize,
    edits: usize,
    reads: usize,
    agent_commands: usize,
    user_commands: usize,
    skipped: u32,
}

/// `owner__repo/projects/<folder>/rest` → `owner__repo/…/rest`.
fn key(relative: &Path) -> String {
    let parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    format!("{}/…/{}", parts[0], parts[3..].join("/"))
}

#[test]
#[ignore = "needs DEJA_SHARED (the shared corpus)"]
fn every_corpus_transcript_parses_to_the_counted_sessions() {
    let shared = std::env::var("DEJA_SHARED").expect(
        "DEJA_SHARED is not set: set it to the shared folder's path (e.g. DEJA_SHARED=/work/shared) to run the corpus test",
    );
    let corpus = Path::new(&shared).join("corpus/claude");
    assert!(corpus.is_dir(), "no corpus at `{}`", corpus.display());
    let mut roots: Vec<PathBuf> = fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    roots.sort();

    let expected: BTreeMap<&str, (u32, u32, u32, u32)> = EXPECTED
        .iter()
        .map(|&(file, s, u, a, k)| (file, (s, u, a, k)))
        .collect();
    let mut seen: BTreeMap<String, (u32, u32, u32, u32)> = BTreeMap::new();
    let mut totals = Totals::default();
    let mut slowest = (std::time::Duration::ZERO, String::new(), 0usize);
    for root in &roots {
        let context = common::context(
            Path::new("/nonexistent-home"),
            &[("DEJA_CLAUDE_ROOT", root.as_path())],
            "{}",
        );
        let discovery = <ClaudeReader as Reader>::discover(&context).unwrap();
        assert!(discovery.warnings.is_empty(), "{:?}", discovery.warnings);
        for transcript in discovery.transcripts.iter() {
            let path = Path::new(transcript.as_str());
            let relative = key(path.strip_prefix(&corpus).unwrap());
            let bytes = fs::read(path).unwrap();
            // What the host reads to pick a reader: the first 4 KiB.
            let head = &bytes[..bytes.len().min(4096)];
            assert_eq!(
                <ClaudeReader as Reader>::detect(transcript.as_str(), head),
                100,
                "{relative}: detect"
            );
            let start = std::time::Instant::now();
            let output = common::parse_bytes(transcript.as_str(), &bytes, 0, &context);
            let took = start.elapsed();
            if took > slowest.0 {
                slowest = (took, relative.clone(), bytes.len());
            }
            assert!(
                output.warnings.is_empty(),
                "{relative}: {:?}",
                output.warnings
            );
            totals.files += 1;
            totals.skipped += output.skipped_empty;
            let (mut user, mut assistant) = (0, 0);
            for session in output.sessions.iter() {
                totals.sessions += 1;
                totals.subagents += usize::from(session.parent_id.is_some());
                assert!(session.started_at_ms <= session.updated_at_ms, "{relative}");
                assert!(
                    session.project.dir.is_some(),
                    "{relative}: no project directory"
                );
                for message in session.messages.iter() {
                    assert!(
                        !message.text.trim().is_empty(),
                        "{relative}: an empty message"
                    );
                    match message.role {
                        Role::User => user += 1,
                        Role::Assistant => assistant += 1,
                    }
                }
                for file in session.files.iter() {
                    match file.action {
                        FileAction::Read => totals.reads += 1,
                        _ => totals.edits += 1,
                    }
                }
                for command in session.commands.iter() {
                    match command.origin {
                        CommandOrigin::User => totals.user_commands += 1,
                        CommandOrigin::Agent => totals.agent_commands += 1,
                    }
                }
            }
            totals.user += user as usize;
            totals.assistant += assistant as usize;
            let counts = (
                output.sessions.len() as u32,
                user,
                assistant,
                output.skipped_empty,
            );
            assert_eq!(
                Some(&counts),
                expected.get(relative.as_str()),
                "{relative}: (sessions, user, assistant, skipped) vs the counted ones"
            );
            seen.insert(relative, counts);
        }
    }
    // Every `.jsonl` of the corpus was discovered.
    let missing: Vec<&&str> = expected
        .keys()
        .filter(|k| !seen.contains_key(**k))
        .collect();
    assert!(missing.is_empty(), "not discovered: {missing:?}");

    assert_eq!(
        totals,
        Totals {
            files: 35,
            sessions: 28,
            subagents: 7,
            user: 134,
            assistant: 265,
            edits: 66,
            reads: 121,
            agent_commands: 160,
            user_commands: 10,
            skipped: 3,
        }
    );
    println!(
        "claude corpus: {} roots, {} transcript files, {} sessions ({} subagents), \
         messages: {} user + {} assistant = {}, files records: {} ({} edit, {} read), \
         command records: {} ({} agent, {} user), left out: {}; slowest parse: {:?} for {} ({} bytes)",
        roots.len(),
        totals.files,
        totals.sessions,
        totals.subagents,
        totals.user,
        totals.assistant,
        totals.user + totals.assistant,
        totals.edits + totals.reads,
        totals.edits,
        totals.reads,
        totals.agent_commands + totals.user_commands,
        totals.agent_commands,
        totals.user_commands,
        totals.skipped,
        slowest.0,
        slowest.1,
        slowest.2,
    );
}
