//! The OpenCode reader on the JSON files OpenCode kept before its database
//! (`storage/session/<project>/<session>.json`, `storage/message/<session>/`,
//! `storage/part/<message>/`), read through `[source.linked]`. The tree in
//! `fixtures/golden/opencode/storage-1.0/` is built from OpenCode's source
//! (see its SOURCES.md); its counts were checked by a short script there.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
use deja_plugin_api::{FileAction, HostContext, ParseOutput, ParseRequest, ROption, Reader, Role};
use deja_plugin_toml::TomlReader;

const PROJECT: &str = "4b0ea68d7af9a6031a7ffda7ad66e0cb83315750";
const MAIN: &str = "ses_5399504217ffeOGxkqNNmvR3Gq";
const SUB: &str = "ses_53993b3149ffe1tB9NvuwQmWq2";
const EMPTY: &str = "ses_5399000000ffeEmptyEmptyEmpt";
const T0: i64 = 1_762_700_000_000;

fn context(home: &Path) -> HostContext {
    common::context("opencode.toml", home, &[])
}

/// The fixture's storage/ folder copied below `home` where OpenCode keeps
/// it; returns the storage folder.
fn install(home: &Path) -> PathBuf {
    let storage = home.join(".local/share/opencode/storage");
    copy_tree(
        &testing::fixtures("opencode").join("storage-1.0/storage"),
        &storage,
    );
    storage
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn session_file(storage: &Path, id: &str) -> PathBuf {
    storage.join(format!("session/{PROJECT}/{id}.json"))
}

fn parse(file: &Path) -> ParseOutput {
    let bytes = std::fs::read(file).unwrap();
    let c = context(Path::new("/nonexistent"));
    TomlReader::parse(&ParseRequest {
        path: file.to_string_lossy().as_ref().into(),
        bytes: bytes.as_slice().into(),
        modified_ms: 0,
        context: &c,
    })
    .unwrap()
}

#[test]
fn a_session_file_reads_with_its_messages_and_parts() {
    let home = tempfile::tempdir().unwrap();
    let storage = install(home.path());
    let out = parse(&session_file(&storage, MAIN));
    let s = common::only_session(&out);
    assert_eq!(s.id.as_str(), MAIN);
    assert_eq!(s.parent_id, ROption::RNone);
    // The script's count: 4 messages, 1 bash call, 2 file tools. The
    // @-mentioned file's text (synthetic), the reasoning, the tool output
    // and the compaction summary are not messages.
    assert_eq!(
        common::messages(s),
        vec![
            (
                Role::User,
                "Why is the checkout total off by a cent? @src/cart.ts"
            ),
            (
                Role::Assistant,
                "Each line is rounded before the sum, so cents drift. Tax is rounded again in src/tax.ts."
            ),
            (Role::User, "Round once, at the end"),
            (
                Role::Assistant,
                "Done: the total is rounded once, after the sum."
            ),
        ]
    );
    assert_eq!(s.messages[0].timestamp_ms, T0 + 1000);
    assert_eq!(
        s.messages[0].native_id.as_ref().map(|m| m.as_str()),
        ROption::RSome("msg_ac66afbd6001xP0K3c0c0Y3Ab1")
    );
    assert_eq!((s.started_at_ms, s.updated_at_ms), (T0, T0 + 60_000));
    assert_eq!(
        s.title.as_ref().map(|t| t.as_str()),
        ROption::RSome("Checkout total off by a cent")
    );
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/home/dev/shop")
    );
    assert_eq!(
        s.project.id.as_ref().map(|d| d.as_str()),
        ROption::RSome(PROJECT)
    );
    assert_eq!(s.commands.len(), 1);
    assert_eq!(s.commands[0].command.as_str(), "grep -rn Math.round src/");
    assert_eq!(
        common::files(s),
        vec![
            ("/home/dev/shop/src/cart.ts", FileAction::Edit),
            ("/home/dev/shop/src/tax.ts", FileAction::Read),
        ]
    );
}

#[test]
fn a_sub_agents_session_is_the_child_of_the_session_that_ran_it() {
    let home = tempfile::tempdir().unwrap();
    let storage = install(home.path());
    let out = parse(&session_file(&storage, SUB));
    let s = &out.sessions[0];
    assert_eq!(s.parent_id, ROption::RSome(MAIN.into()));
    assert_eq!(
        common::messages(s),
        vec![
            (Role::User, "Find where tax is rounded"),
            (Role::Assistant, "In src/tax.ts line 12."),
        ]
    );
}

#[test]
fn a_session_without_text_is_skipped_as_empty() {
    let home = tempfile::tempdir().unwrap();
    let storage = install(home.path());
    let out = parse(&session_file(&storage, EMPTY));
    assert!(out.sessions.is_empty());
    assert_eq!(out.skipped_empty, 1);
}

#[test]
fn discovery_finds_the_session_files_and_nothing_else_of_storage() {
    let home = tempfile::tempdir().unwrap();
    let storage = install(home.path());
    let found = common::discovered(&context(home.path()));
    let mut want: Vec<String> = [EMPTY, SUB, MAIN]
        .iter()
        .map(|id| session_file(&storage, id).to_string_lossy().into_owned())
        .collect();
    want.sort();
    assert_eq!(found, want);
    // Detection: a session file is OpenCode's, a message or part file not.
    let c = context(home.path());
    let head = std::fs::read(session_file(&storage, MAIN)).unwrap();
    assert!(TomlReader::detect_in(&c, &session_file(&storage, MAIN).to_string_lossy(), &head) > 0);
    assert_eq!(
        TomlReader::detect_in(&c, "/s/message/ses_1/msg_1.json", &head),
        0
    );
}

#[test]
fn a_storage_being_written_reads_as_a_prefix() {
    let home = tempfile::tempdir().unwrap();
    let storage = install(home.path());
    let file = session_file(&storage, MAIN);
    let full: Vec<(Role, String)> = common::messages(&parse(&file).sessions[0])
        .into_iter()
        .map(|(r, t)| (r, t.to_string()))
        .collect();
    // Messages removed from the newest: what is left is a prefix.
    let folder = storage.join(format!("message/{MAIN}"));
    let mut names: Vec<PathBuf> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    while let Some(last) = names.pop() {
        std::fs::remove_file(last).unwrap();
        let out = parse(&file);
        let now: Vec<(Role, String)> = out
            .sessions
            .first()
            .map(|s| {
                common::messages(s)
                    .into_iter()
                    .map(|(r, t)| (r, t.to_string()))
                    .collect()
            })
            .unwrap_or_default();
        assert!(full.starts_with(&now), "{now:?}");
    }
}

#[test]
fn damaged_and_hostile_files_are_skipped_and_said() {
    let home = tempfile::tempdir().unwrap();
    let storage = install(home.path());
    let file = session_file(&storage, MAIN);
    // A part that is not JSON, and one that is a folder.
    let parts = storage.join("part/msg_ac66b0a1e001Bq5m8nJ4Y2Wcc3");
    std::fs::write(parts.join("prt_zz1.json"), b"{\"type\":\"text\",\"te").unwrap();
    std::fs::create_dir(parts.join("prt_zz2.json")).unwrap();
    let out = parse(&file);
    assert_eq!(out.sessions[0].messages.len(), 4);
    assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
    assert!(out.warnings[0].starts_with("2 of the session's message or part files"));
    // A session whose id would lead out of storage/ names no folder.
    for id in ["..", "../../..", "a/../../b"] {
        let doc = serde_json::json!({"id": id, "title": "x", "time": {"created": 1, "updated": 2}});
        let evil = storage.join(format!("session/{PROJECT}/ses_evil.json"));
        std::fs::write(&evil, doc.to_string()).unwrap();
        let out = parse(&evil);
        assert!(out.sessions.is_empty(), "{id}");
    }
    // A session file that is not JSON is an error naming the problem.
    let bad = storage.join(format!("session/{PROJECT}/ses_bad.json"));
    std::fs::write(&bad, b"\x00\xffnot json").unwrap();
    let c = context(Path::new("/nonexistent"));
    let err = TomlReader::parse(&ParseRequest {
        path: bad.to_string_lossy().as_ref().into(),
        bytes: b"\x00\xffnot json".as_slice().into(),
        modified_ms: 0,
        context: &c,
    })
    .unwrap_err();
    assert!(
        err.message.contains("not a JSON document"),
        "{}",
        err.message
    );
}

#[cfg(unix)]
#[test]
fn a_part_that_is_a_fifo_is_not_read() {
    let home = tempfile::tempdir().unwrap();
    let storage = install(home.path());
    let fifo = storage.join("part/msg_ac66b0a1e001Bq5m8nJ4Y2Wcc3/prt_zz3.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let started = std::time::Instant::now();
    let out = parse(&session_file(&storage, MAIN));
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(out.sessions[0].messages.len(), 4);
    assert_eq!(out.warnings.len(), 1);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Any bytes as the session file, beside a real storage tree, never
    /// panic.
    #[test]
    fn any_session_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
        let home = tempfile::tempdir().unwrap();
        let storage = install(home.path());
        let file = session_file(&storage, MAIN);
        std::fs::write(&file, &bytes).unwrap();
        let c = context(Path::new("/nonexistent"));
        let _ = TomlReader::parse(&ParseRequest {
            path: file.to_string_lossy().as_ref().into(),
            bytes: bytes.as_slice().into(),
            modified_ms: 0,
            context: &c,
        });
    }
}
