//! The real Qwen Code trees of the shared corpus: every `<owner>__<repo>/`
//! folder is a `.qwen`-like folder, read as a `DEJA_QWEN_ROOT`. Opt-in: it
//! needs `DEJA_SHARED`, the shared folder's path.
//!
//! `DEJA_SHARED=/work/shared cargo test -p deja-plugin-qwen --test corpus -- --include-ignored --nocapture`
//!
//! The expected numbers below were counted from the files themselves, not from
//! this reader: a short Python script read every line with `json.loads` and
//! counted, per file, the `user` records without `subtype` whose text parts
//! (with an `@path` reference's pasted `--- Content from referenced files ---`
//! block cut) are not blank, the `assistant` records whose non-thought text
//! parts are not blank, the `functionCall`s of `run_shell_command`
//! (commands), of `write_file`/`edit` (edits) and of `read_file` (reads)
//! whose `toolCallResult.status` is not `error`/`cancelled`, the `filesRead`
//! of successful `at_command` records, and the successful
//! `qwen-code.tool_call` telemetry events whose `prompt_id` names a subagent
//! (`<session>#debugger-mjmpeo#<n>`: 37 `read_file`s in `41135fab`). Every
//! file is one linear `parentUuid` chain with one root (checked by the same
//! script), so the conversation is every record. The small files were also
//! checked by eye.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use deja_plugin_api::{FileAction, Reader, Role};
use deja_plugin_qwen::QwenReader;

/// `(first 8 characters of the file name, user messages, assistant messages)`;
/// a file with no message holds no session (it is counted as skipped).
const EXPECTED: &[(&str, usize, usize)] = &[
    ("5c7e5311", 6, 30),
    ("ae23cc34", 1, 1),
    ("734553eb", 1, 1),
    ("9f7385a4", 0, 0), // two slash_command records only
    ("9a578cd0", 1, 1),
    ("67ed48eb", 1, 1),
    ("41135fab", 1, 1),
    ("853b5a66", 0, 0), // two slash_command records only
    ("80a2d37c", 3, 5),
    ("c3a040f6", 2, 1),
    ("111b7dee", 22, 135),
    ("6af11f56", 3, 4),
    ("7b2fb554", 1, 2),
    ("c736a006", 1, 0), // a single user line
];
const FILES: usize = 14;
const SESSIONS: usize = 12;
const COMMANDS: usize = 89;
const EDITS: usize = 106;
const READS: usize = 57;

#[derive(Default, Debug)]
struct Totals {
    files: usize,
    sessions: usize,
    skipped: usize,
    user: usize,
    assistant: usize,
    edits: usize,
    reads: usize,
    commands: usize,
}

#[test]
#[ignore = "needs DEJA_SHARED (the shared corpus)"]
fn every_corpus_session_parses() {
    let shared = std::env::var("DEJA_SHARED").expect(
        "DEJA_SHARED is not set: set it to the shared folder's path (e.g. DEJA_SHARED=/work/shared) to run the corpus test",
    );
    let corpus = Path::new(&shared).join("corpus/qwen");
    assert!(corpus.is_dir(), "no corpus at `{}`", corpus.display());

    let mut roots: Vec<PathBuf> = fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    roots.sort();

    let mut totals = Totals::default();
    let mut counted: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut largest: (u64, PathBuf) = (0, PathBuf::new());
    for root in &roots {
        let context = common::context(
            Path::new("/nonexistent-home"),
            &[("DEJA_QWEN_ROOT", root.as_path())],
            "{}",
        );
        let discovery = <QwenReader as Reader>::discover(&context).unwrap();
        assert!(discovery.warnings.is_empty(), "{:?}", discovery.warnings);
        for transcript in discovery.transcripts.iter() {
            let path = Path::new(transcript.as_str());
            let name: String = path
                .file_name()
                .unwrap()
                .to_string_lossy()
                .chars()
                .take(8)
                .collect();
            let bytes = fs::read(path).unwrap();
            if bytes.len() as u64 > largest.0 {
                largest = (bytes.len() as u64, path.to_path_buf());
            }
            assert_eq!(
                <QwenReader as Reader>::detect(
                    transcript.as_str(),
                    &bytes[..bytes.len().min(4096)]
                ),
                100,
                "{name}: detect"
            );
            let output = common::parse_file(path, &context);
            assert!(output.warnings.is_empty(), "{name}: {:?}", output.warnings);
            assert!(output.sessions.len() <= 1, "{name}: one session per file");
            totals.files += 1;
            totals.skipped += output.skipped_empty as usize;
            let (mut user, mut assistant) = (0, 0);
            for session in output.sessions.iter() {
                totals.sessions += 1;
                let stem = path.file_stem().unwrap().to_string_lossy();
                assert_eq!(
                    session.native_id.as_str(),
                    stem,
                    "{name}: native id is the file's"
                );
                assert_eq!(session.id, session.native_id);
                assert!(
                    session.project.dir.is_some(),
                    "{name}: project dir from cwd"
                );
                assert!(session.started_at_ms <= session.updated_at_ms);
                for message in session.messages.iter() {
                    assert!(!message.text.trim().is_empty());
                    assert!(message.native_id.is_some());
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
                totals.commands += session.commands.len();
            }
            totals.user += user;
            totals.assistant += assistant;
            counted.insert(name, (user, assistant));
        }
    }

    let expected: BTreeMap<String, (usize, usize)> = EXPECTED
        .iter()
        .map(|(name, u, a)| (name.to_string(), (*u, *a)))
        .collect();
    assert_eq!(counted, expected, "messages per file (user, assistant)");
    assert_eq!(totals.files, FILES);
    assert_eq!(totals.sessions, SESSIONS);
    assert_eq!(totals.skipped, FILES - SESSIONS);
    assert_eq!(
        (totals.commands, totals.edits, totals.reads),
        (COMMANDS, EDITS, READS),
        "command, edit and read records"
    );

    // The largest file, parsed on its own, timed.
    let context = common::empty_context();
    let bytes = fs::read(&largest.1).unwrap();
    let start = Instant::now();
    let output = common::parse_bytes(&largest.1.to_string_lossy(), &bytes, 0, &context);
    let elapsed = start.elapsed();
    assert_eq!(output.sessions.len(), 1);

    println!(
        "qwen corpus: {} roots, {} transcript files, {} sessions ({} without messages skipped), \
         messages: {} user + {} assistant = {}, files records: {} ({} edit, {} read), \
         command records: {}; largest file {} bytes parsed in {:?}",
        roots.len(),
        totals.files,
        totals.sessions,
        totals.skipped,
        totals.user,
        totals.assistant,
        totals.user + totals.assistant,
        totals.edits + totals.reads,
        totals.edits,
        totals.reads,
        totals.commands,
        largest.0,
        elapsed,
    );
}
