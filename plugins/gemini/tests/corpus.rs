//! The real Gemini CLI trees of the shared corpus: every `<owner>__<repo>/`
//! folder is read as a `DEJA_GEMINI_ROOT`. Opt-in: it needs `DEJA_SHARED`, the
//! shared folder's path.
//!
//! `DEJA_SHARED=/work/shared cargo test -p deja-plugin-gemini --test corpus -- --include-ignored --nocapture`

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use deja_plugin_api::{FileAction, Reader, Role};
use deja_plugin_gemini::GeminiReader;

/// `sessions_count` of every file in `SOURCES.tsv`, by its path below the corpus.
fn expected_sessions(corpus: &Path) -> BTreeMap<String, u32> {
    let tsv = fs::read_to_string(corpus.join("SOURCES.tsv")).expect("read SOURCES.tsv");
    let mut lines = tsv.lines();
    let header: Vec<&str> = lines.next().expect("header").split('\t').collect();
    let file = header
        .iter()
        .position(|c| *c == "file")
        .expect("file column");
    let count = header
        .iter()
        .position(|c| *c == "sessions_count")
        .expect("sessions_count column");
    lines
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let cells: Vec<&str> = line.split('\t').collect();
            (
                cells[file].to_string(),
                cells[count].parse().expect("a count"),
            )
        })
        .collect()
}

#[derive(Default, Debug)]
struct Totals {
    files: usize,
    sessions: usize,
    user: usize,
    assistant: usize,
    edits: usize,
    reads: usize,
    commands: usize,
    subagents: usize,
}

#[test]
#[ignore = "needs DEJA_SHARED (the shared corpus)"]
fn every_corpus_session_parses() {
    let shared = std::env::var("DEJA_SHARED").expect(
        "DEJA_SHARED is not set: set it to the shared folder's path (e.g. DEJA_SHARED=/work/shared) to run the corpus test",
    );
    let corpus = Path::new(&shared).join("corpus/gemini");
    assert!(corpus.is_dir(), "no corpus at `{}`", corpus.display());
    let expected = expected_sessions(&corpus);

    let mut roots: Vec<PathBuf> = fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    roots.sort();

    let mut totals = Totals::default();
    let mut yielded: BTreeMap<String, u32> = BTreeMap::new();
    for root in &roots {
        let context = common::context(
            Path::new("/nonexistent-home"),
            &[("DEJA_GEMINI_ROOT", root.as_path())],
            "{}",
        );
        let discovery = <GeminiReader as Reader>::discover(&context).unwrap();
        assert!(discovery.warnings.is_empty(), "{:?}", discovery.warnings);
        for transcript in discovery.transcripts.iter() {
            let path = Path::new(transcript.as_str());
            let relative = path
                .strip_prefix(&corpus)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let output = common::parse_file(path, &context);
            assert!(
                output.warnings.is_empty(),
                "{relative}: {:?}",
                output.warnings
            );
            assert_eq!(
                output.skipped_empty, 0,
                "{relative} has a session without messages"
            );
            totals.files += 1;
            yielded.insert(relative, output.sessions.len() as u32);
            for session in output.sessions.iter() {
                totals.sessions += 1;
                totals.subagents += usize::from(session.parent_id.is_some());
                for message in session.messages.iter() {
                    match message.role {
                        Role::User => totals.user += 1,
                        Role::Assistant => totals.assistant += 1,
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
        }
        // The files discovery leaves out are no sessions, and parse as none.
        for (file, count) in expected.iter().filter(|(f, _)| !yielded.contains_key(*f)) {
            if !file.starts_with(&*root.file_name().unwrap().to_string_lossy()) {
                continue;
            }
            assert_eq!(*count, 0, "{file} holds a session but was not discovered");
            let output = common::parse_file(&corpus.join(file), &context);
            assert!(
                output.sessions.is_empty() && output.warnings.is_empty(),
                "{file}: {output:?}"
            );
        }
    }

    for (file, count) in &yielded {
        assert_eq!(
            Some(count),
            expected.get(file),
            "{file}: sessions yielded vs SOURCES.tsv"
        );
    }
    let expected_total: u32 = expected.values().sum();
    assert_eq!(totals.sessions as u32, expected_total);
    println!(
        "gemini corpus: {} roots, {} transcript files, {} sessions ({} subagents), \
         messages: {} user + {} assistant = {}, files records: {} ({} edit, {} read), \
         command records: {}",
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
        totals.commands,
    );
}
