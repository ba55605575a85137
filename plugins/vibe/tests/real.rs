//! The reader on a session Mistral Vibe 3.0.2 wrote (two turns of one
//! session, each running a shell command; `fixtures/golden/vibe/real-3.0.2`),
//! on the same store as it was on disk before Vibe's last snapshot (the
//! second turn only in the journal), and on stores changed by one rule each.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
use deja_plugin_api::{ParseOutput, Reader, Role};
use deja_plugin_vibe::VibeReader;
use serde_json::{json, Value};

const ID: &str = "6dcfcba8-ee51-aed8-cfeb-812cb6151a2a";
const TEXTS: [&str; 5] = [
    "Why does the ledger show rows of other tenants?",
    "Looking at the query first.",
    "The ledger query lost its tenant predicate in the join.",
    "Which migration added the tenant column?",
    "Migration 0042 added the tenant column to the ledger.",
];
const COMMANDS: [&str; 2] = ["grep -rn \"tenant_id\" .", "ls migrations"];

fn real() -> PathBuf {
    testing::fixtures("vibe")
        .join("real-3.0.2/unified")
        .join(ID)
}

fn parse(current: &Path) -> (ParseOutput, Vec<Option<i32>>) {
    let bytes = fs::read(current).unwrap();
    let context = testing::empty_context();
    let request = deja_plugin_api::ParseRequest {
        path: current.to_str().unwrap().into(),
        bytes: bytes.as_slice().into(),
        modified_ms: 7,
        context: &context,
    };
    let out = VibeReader::parse_with_outcomes(&request).unwrap();
    let codes = out
        .outcomes
        .iter()
        .flat_map(|o| o.commands.iter().map(|c| c.exit_code.into_option()))
        .collect();
    (out.output, codes)
}

fn texts(out: &ParseOutput) -> Vec<(Role, String)> {
    out.sessions[0]
        .messages
        .iter()
        .map(|m| (m.role, m.text.to_string()))
        .collect()
}

fn expected(texts: &[&str]) -> Vec<(Role, String)> {
    texts
        .iter()
        .map(|t| {
            let role = if t.ends_with('?') {
                Role::User
            } else {
                Role::Assistant
            };
            (role, t.to_string())
        })
        .collect()
}

/// A copy of the real session to change, in a fresh folder.
fn copy() -> (PathBuf, PathBuf) {
    let base = std::env::temp_dir().join(format!(
        "deja-vibe-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    let dir = base.join(ID);
    for file in testing::walk(&real()) {
        let to = dir.join(file.strip_prefix(real()).unwrap());
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        fs::copy(&file, &to).unwrap();
    }
    (base, dir)
}

/// The independent count: the real fixture's files read with nothing but
/// JSON, as the store's format says (latest generation, its projection
/// chunks, the user entries Vibe's prompt logic counts).
#[test]
fn the_real_session_reads_exactly() {
    let current: Value =
        serde_json::from_slice(&fs::read(real().join("CURRENT")).unwrap()).unwrap();
    let generation = current["generation"].as_str().unwrap();
    let manifest: Value = serde_json::from_slice(
        &fs::read(
            real()
                .join("generations")
                .join(generation)
                .join("manifest.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let mut entries = Vec::new();
    for chunk in manifest["projection_state"]["chunks"].as_array().unwrap() {
        let file = real()
            .join("chunks")
            .join(format!("{}.json", chunk.as_str().unwrap()));
        let list: Vec<Value> = serde_json::from_slice(&fs::read(file).unwrap()).unwrap();
        entries.extend(list);
    }
    let users = entries
        .iter()
        .filter(|e| e["role"] == "user" && e["source"] != "harness")
        .count();
    let bash = entries
        .iter()
        .filter(|e| e["type"] == "effect" && e["detail"]["toolName"] == "file_system.bash")
        .count();

    let (out, codes) = parse(&real().join("CURRENT"));
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    assert_eq!(out.sessions.len(), 1);
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), ID);
    assert_eq!(s.native_id.as_str(), ID);
    assert_eq!(texts(&out), expected(&TEXTS));
    assert_eq!(
        s.messages.iter().filter(|m| m.role == Role::User).count(),
        users
    );
    let ran: Vec<&str> = s.commands.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(ran, COMMANDS);
    assert_eq!(ran.len(), bash);
    // grep found nothing (1); `migrations` did not exist where it ran (2).
    assert_eq!(codes, [Some(1), Some(2)]);
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()).into_option(),
        Some("/tmp/try/vh/proj")
    );
    assert!(s.parent_id.is_none());
    assert!(s.title.is_none());
    // meta.json's start_time and end_time.
    assert_eq!(s.started_at_ms, 1_796_533_331_569);
    assert_eq!(s.updated_at_ms, 1_796_533_352_742);
    let first = &s.messages[0];
    assert_eq!(first.timestamp_ms, 1_796_533_331_860);
}

/// Before its second snapshot, Vibe's store had the second turn only in
/// the journal segment after the first snapshot: `CURRENT` named
/// generation 21, whose manifest names `journal/0000000000000022.jsonl`.
/// Read so, the session is the same; without the journal, it is the first
/// turn.
#[test]
fn what_the_journal_holds_after_the_snapshot_is_read() {
    let (base, dir) = copy();
    let current = dir.join("CURRENT");
    let mut value: Value = serde_json::from_slice(&fs::read(&current).unwrap()).unwrap();
    value["generation"] = json!("0000000000000021");
    value["snapshot_sequence"] = json!(21);
    fs::write(&current, serde_json::to_vec(&value).unwrap()).unwrap();
    let (out, codes) = parse(&current);
    assert_eq!(texts(&out), expected(&TEXTS));
    assert_eq!(codes, [Some(1), Some(2)]);

    fs::remove_file(dir.join("journal/0000000000000022.jsonl")).unwrap();
    let (out, codes) = parse(&current);
    assert_eq!(texts(&out), expected(&TEXTS[..3]));
    assert_eq!(codes, [Some(1)]);
    fs::remove_dir_all(base).unwrap();
}

/// Rules on entries the real session lacks, each written into a copy of
/// its projection chunk: text Vibe writes in the person's place (`source:
/// harness`), an answer Vibe discarded, reasoning and system messages are
/// not messages; a steered message is the person's; a sub-agent's session
/// names its parent; a title is the session's.
#[test]
fn harness_text_discarded_answers_and_reasoning_are_left_out() {
    let (base, dir) = copy();
    let manifest: Value = serde_json::from_slice(
        &fs::read(dir.join("generations/0000000000000042/manifest.json")).unwrap(),
    )
    .unwrap();
    let chunk = dir.join("chunks").join(format!(
        "{}.json",
        manifest["projection_state"]["chunks"][0].as_str().unwrap()
    ));
    let mut entries: Vec<Value> = serde_json::from_slice(&fs::read(&chunk).unwrap()).unwrap();
    let message = |role: &str, source: &str, text: &str| {
        json!({"type": "message", "id": text, "role": role, "source": source,
               "createdAt": 1, "updatedAt": 1, "content": [{"type": "text", "text": text}]})
    };
    entries.push(message("user", "harness", "Continue with the plan."));
    entries.push(message("user", "turn_steer", "Only the ledger table."));
    let mut discarded = message("assistant", "harness", "A half answer.");
    discarded["outcome"] = json!({"type": "discarded", "cause": "interrupted"});
    entries.push(discarded);
    entries.push(message("system", "harness", "You are Mistral Vibe."));
    entries.push(json!({"type": "reasoning", "id": "r", "text": "Thinking.", "createdAt": 1, "updatedAt": 1}));
    fs::write(&chunk, serde_json::to_vec(&entries).unwrap()).unwrap();
    let meta_path = dir.join("meta.json");
    let mut meta: Value = serde_json::from_slice(&fs::read(&meta_path).unwrap()).unwrap();
    meta["parent_session_id"] = json!("parent-session");
    meta["title"] = json!("Tenant rows");
    fs::write(&meta_path, serde_json::to_vec(&meta).unwrap()).unwrap();

    let (out, _) = parse(&dir.join("CURRENT"));
    let mut want = expected(&TEXTS);
    want.push((Role::User, "Only the ledger table.".into()));
    assert_eq!(texts(&out), want);
    let s = &out.sessions[0];
    assert_eq!(
        s.parent_id.as_ref().map(|p| p.as_str()).into_option(),
        Some("parent-session")
    );
    assert_eq!(
        s.title.as_ref().map(|p| p.as_str()).into_option(),
        Some("Tenant rows")
    );
    assert_eq!(out.sessions[0].commands.len(), 2);
    fs::remove_dir_all(base).unwrap();
}

/// A session whose generation is gone, or whose chunk is, is not dropped
/// silently: deja says why.
#[test]
fn a_store_missing_its_pieces_says_so() {
    let (base, dir) = copy();
    fs::remove_dir_all(dir.join("chunks")).unwrap();
    let (out, _) = parse(&dir.join("CURRENT"));
    assert!(out.sessions.is_empty());
    assert_eq!(out.skipped_empty, 1);
    assert!(
        out.warnings.iter().any(|w| w.contains("chunks")),
        "{:?}",
        out.warnings
    );
    fs::remove_dir_all(dir.join("generations")).unwrap();
    let (out, _) = parse(&dir.join("CURRENT"));
    assert!(out.sessions.is_empty());
    assert!(
        out.warnings.iter().any(|w| w.contains("manifest")),
        "{:?}",
        out.warnings
    );
    fs::remove_dir_all(base).unwrap();
}

/// Only Vibe's CURRENT files are claimed.
#[test]
fn detect_claims_the_store_s_current_file_only() {
    let current = fs::read(real().join("CURRENT")).unwrap();
    assert_eq!(VibeReader::detect("/x/unified/s/CURRENT", &current), 100);
    assert_eq!(
        VibeReader::detect("/x/unified/s/CURRENT", b"{\"generation\": 1}"),
        0
    );
    let meta = fs::read(real().join("meta.json")).unwrap();
    assert_eq!(VibeReader::detect("/x/unified/s/meta.json", &meta), 0);
}

/// Found in `~/.vibe/logs/session/unified`, in `$VIBE_HOME`'s, and where
/// `DEJA_VIBE_ROOT` says, and nowhere else.
#[test]
fn discovery_follows_vibe_home() {
    let (base, _) = copy();
    let home = base.join("home");
    let place = |root: &Path| {
        let session = root.join("logs/session/unified").join(ID);
        fs::create_dir_all(session.join("chunks")).unwrap();
        fs::copy(real().join("CURRENT"), session.join("CURRENT")).unwrap();
        fs::write(session.join("meta.json"), "{}").unwrap();
        session.join("CURRENT")
    };
    let default = place(&home.join(".vibe"));
    let found = |env: &[(&str, &Path)]| {
        let context = testing::context(&home, env, "{}");
        let d = VibeReader::discover(&context).unwrap();
        d.transcripts
            .iter()
            .map(|t| PathBuf::from(t.as_str()))
            .collect::<Vec<_>>()
    };
    assert_eq!(found(&[]), [default]);
    let other = place(&base.join("vibe-home"));
    assert_eq!(
        found(&[("VIBE_HOME", &base.join("vibe-home"))]),
        std::slice::from_ref(&other)
    );
    let root = base.join("vibe-home/logs/session");
    assert_eq!(found(&[("DEJA_VIBE_ROOT", &root)]), [other]);
    fs::remove_dir_all(base).unwrap();
}
