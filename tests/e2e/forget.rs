//! Safe forgetting through the real binary: `deja forget --dry-run` changes
//! nothing, `--list` shows the tombstones, `--undo` lets the next index bring a
//! session back from its transcript (or says that the transcript is gone),
//! and every message counts sessions in the right number.

use serde_json::Value;

use crate::common::{gemini_session, Sandbox};

/// The Gemini session ids (deja's ids add the start time to them).
const IDS: [&str; 3] = [
    "0f18b3b3-7342-4d89-826c-b78fc1922f6c",
    "1a2b3c4d-1111-4d89-826c-b78fc1922f6c",
    "2b3c4d5e-2222-4d89-826c-b78fc1922f6c",
];

/// Three Gemini sessions, indexed, embeddings off.
fn indexed() -> Sandbox {
    let mut sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    sb.env("GEMINI_CLI_HOME", sb.home.clone());
    let gemini = sb.home.join(".gemini");
    for (i, (id, topic)) in IDS
        .iter()
        .zip(["invoice export", "tenant predicate", "webhook retries"])
        .enumerate()
    {
        gemini_session(&gemini, "billing", id, 10 * i as u32, 4, topic);
    }
    let run = sb.index();
    assert_eq!(run["sessions"]["added"], 3, "{run:#}");
    sb
}

fn session_ids(v: &Value) -> Vec<String> {
    let mut ids: Vec<String> = v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

/// The session whose harness id is `native`, as `deja sessions --json` lists it.
fn listed(sb: &Sandbox, native: &str) -> Value {
    let list = sb.ok(&["sessions", "--json"]).json();
    list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["native_id"] == native)
        .unwrap_or_else(|| panic!("no session {native}: {list:#}"))
        .clone()
}

/// The transcript a session was read from.
fn source_of(sb: &Sandbox, native: &str) -> std::path::PathBuf {
    listed(sb, native)["source"].as_str().unwrap().into()
}

#[test]
fn forget_dry_run_lists_what_would_go_and_changes_nothing() {
    let sb = indexed();
    let sessions_before = sb.ok(&["sessions", "--json"]).stdout;
    let store_before = sb.dump();

    // A filter selection needs no --yes in a dry run (there is nothing to confirm).
    let out = sb.ok(&["forget", "--dry-run", "--harness", "gemini"]);
    for id in IDS {
        assert!(out.stdout.contains(id), "{}", out.stdout);
    }
    assert!(
        out.stderr.contains("would forget 3 sessions"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("nothing changed"), "{}", out.stderr);

    let out = sb.ok(&["forget", "--dry-run", "--json", &IDS[1][..8]]);
    let v = out.json();
    assert_eq!(v["dry_run"], true, "{v:#}");
    assert_eq!(v["forgotten"].as_array().unwrap().len(), 1, "{v:#}");
    assert_eq!(v["forgotten"][0]["native_id"], IDS[1], "{v:#}");
    assert_eq!(v["forgotten"][0]["harness"], "gemini", "{v:#}");
    assert!(
        out.stderr.contains("would forget 1 session;"),
        "{}",
        out.stderr
    );

    assert_eq!(sb.ok(&["sessions", "--json"]).stdout, sessions_before);
    assert_eq!(sb.dump(), store_before);
    let out = sb.ok(&["forget", "--list", "--json"]);
    assert_eq!(out.json()["forgotten"].as_array().unwrap().len(), 0);
    assert!(
        out.stderr.contains("no forgotten sessions"),
        "{}",
        out.stderr
    );
}

#[test]
fn forget_messages_count_sessions_in_the_right_number() {
    let sb = indexed();
    let out = sb.ok(&["forget", IDS[0]]);
    assert!(out.stderr.contains("forgot 1 session;"), "{}", out.stderr);
    assert!(out.stderr.contains("bring it back"), "{}", out.stderr);
    let out = sb.ok(&["forget", IDS[1], IDS[2]]);
    assert!(out.stderr.contains("forgot 2 sessions;"), "{}", out.stderr);
    assert!(out.stderr.contains("bring them back"), "{}", out.stderr);
    let out = sb.ok(&["forget", "--list"]);
    assert!(
        out.stderr.contains("3 sessions forgotten"),
        "{}",
        out.stderr
    );
    let out = sb.ok(&["forget", "--undo", IDS[0]]);
    assert!(
        out.stderr
            .contains("run `deja index` to bring back the session"),
        "{}",
        out.stderr
    );
    let out = sb.ok(&["forget", "--undo", IDS[1], IDS[2]]);
    assert!(
        out.stderr
            .contains("run `deja index` to bring back 2 sessions"),
        "{}",
        out.stderr
    );

    // Without a terminal, a filter selection asks for --yes, in the right number.
    let sb = indexed();
    let out = sb.run(&["forget", "--harness", "gemini"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("3 sessions match; pass --yes to forget them"),
        "{}",
        out.stderr
    );
    sb.ok(&["forget", IDS[0], IDS[1]]);
    let out = sb.run(&["forget", "--harness", "gemini"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("1 session matches; pass --yes to forget it"),
        "{}",
        out.stderr
    );
}

#[test]
fn forget_list_shows_the_tombstones_and_undo_brings_a_session_back() {
    let sb = indexed();
    let before = sb.ok(&["show", IDS[1], "--json"]).json();
    let id = listed(&sb, IDS[1])["id"].as_str().unwrap().to_string();
    let transcript = source_of(&sb, IDS[1]);
    sb.ok(&["forget", IDS[1]]);
    assert!(!session_ids(&sb.ok(&["sessions", "--json"]).json()).contains(&id));

    let out = sb.ok(&["forget", "--list"]);
    assert!(out.stdout.contains(&id), "{}", out.stdout);
    assert!(out.stdout.contains("gemini"), "{}", out.stdout);
    assert!(
        out.stdout.contains(transcript.to_str().unwrap()),
        "{}",
        out.stdout
    );
    assert!(out.stderr.contains("1 session forgotten"), "{}", out.stderr);
    let list = sb.ok(&["forget", "--list", "--json"]).json();
    let t = &list["forgotten"][0];
    assert_eq!(list["forgotten"].as_array().unwrap().len(), 1, "{list:#}");
    assert_eq!(t["id"], id.as_str());
    assert_eq!(t["harness"], "gemini");
    assert_eq!(t["native_id"], IDS[1]);
    assert_eq!(t["source"], transcript.to_str().unwrap());
    assert_eq!(t["source_present"], true);
    assert_eq!(
        t["started_at"], before["started_at"],
        "{list:#}\n{before:#}"
    );
    assert!(t["forgotten_at"].as_str().unwrap().ends_with('Z'), "{t}");

    // Re-indexing alone never brings it back.
    let run = sb.index();
    assert_eq!(run["sessions"]["added"], 0, "{run:#}");

    // An id that names nothing forgotten is an error that says so.
    let out = sb.run(&["forget", "--undo", IDS[0]]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("not a forgotten one"), "{}", out.stderr);
    let out = sb.run(&["forget", "--undo", "ffffffff"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("no forgotten session"),
        "{}",
        out.stderr
    );

    // Undo by a prefix, then index: the session is back as it was.
    let out = sb.ok(&["forget", "--undo", &IDS[1][..6]]);
    assert!(out.stderr.contains("no longer forgotten"), "{}", out.stderr);
    assert!(out.stderr.contains("still there"), "{}", out.stderr);
    assert!(out.stderr.contains("deja index"), "{}", out.stderr);
    let out = sb.ok(&["forget", "--list", "--json"]);
    assert_eq!(out.json()["forgotten"].as_array().unwrap().len(), 0);
    let run = sb.index();
    assert_eq!(run["sessions"]["added"], 1, "{run:#}");
    let after = sb.ok(&["show", IDS[1], "--json"]).json();
    assert_eq!(after["messages"], before["messages"]);
    assert_eq!(session_ids(&sb.ok(&["sessions", "--json"]).json()).len(), 3);
    // The other transcripts were not read again.
    assert_eq!(run["transcripts"]["changed"], 1, "{run:#}");
}

#[test]
fn undo_says_when_the_transcript_is_gone() {
    let sb = indexed();
    let transcript = source_of(&sb, IDS[2]);
    sb.ok(&["forget", IDS[2]]);
    std::fs::remove_file(&transcript).unwrap();
    let list = sb.ok(&["forget", "--list", "--json"]).json();
    assert_eq!(list["forgotten"][0]["source_present"], false, "{list:#}");
    let out = sb.ok(&["forget", "--list"]);
    assert!(out.stdout.contains("(gone)"), "{}", out.stdout);

    let out = sb.ok(&["forget", "--undo", IDS[2], "--json"]);
    assert!(out.stderr.contains("is gone"), "{}", out.stderr);
    assert!(
        out.stderr.contains("cannot bring it back"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("run `deja index`"), "{}", out.stderr);
    let v = out.json();
    assert_eq!(v["unforgotten"][0]["native_id"], IDS[2], "{v:#}");
    assert_eq!(v["unforgotten"][0]["source_present"], false, "{v:#}");
    sb.index();
    assert_eq!(session_ids(&sb.ok(&["sessions", "--json"]).json()).len(), 2);
}
