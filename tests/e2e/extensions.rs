//! The Cline, Roo Code and Kilo Code editor extensions through the real
//! `deja` binary: their task folders are found in the storage of several
//! editors in a temporary HOME, indexed, listed with their folders, and a
//! Roo Code subtask is labelled as its task's child; the text the
//! extensions send the model besides what was typed is never a message.

use std::path::Path;

use serde_json::Value;

use crate::common::{fixtures, Sandbox};

/// Copies the folder `from` (recursively) to `to`.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

const PARENT: &str = "0b9e3c1e-5d7a-4f0e-9a51-2c4d6e8f1a20";
const CHILD: &str = "7f3a2b10-8c4d-4e6f-a1b2-c3d4e5f60718";

/// A HOME with Cline tasks in VS Code's and Cursor's storage, Roo Code's
/// task and subtask in VSCodium's, and a Kilo Code task in Windsurf's.
fn editors() -> Sandbox {
    let sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    let golden = fixtures().join("golden");
    let cline = golden.join("cline-vscode/globalStorage/saoudrizwan.claude-dev");
    let code = sb
        .home
        .join(".config/Code/User/globalStorage/saoudrizwan.claude-dev");
    copy_dir(&cline.join("state"), &code.join("state"));
    copy_dir(
        &cline.join("tasks/1796100000000"),
        &code.join("tasks/1796100000000"),
    );
    copy_dir(
        &cline.join("tasks/1733000000000"),
        &sb.home
            .join(".config/Cursor/User/globalStorage/saoudrizwan.claude-dev/tasks/1733000000000"),
    );
    copy_dir(
        &golden.join("roo-code/from-source/tasks"),
        &sb.home
            .join(".config/VSCodium/User/globalStorage/rooveterinaryinc.roo-cline/tasks"),
    );
    copy_dir(
        &golden.join("kilo-code/from-source/tasks"),
        &sb.home
            .join(".config/Windsurf/User/globalStorage/kilocode.kilo-code/tasks"),
    );
    sb
}

/// The listed session whose id is or ends in `id`.
fn session<'a>(list: &'a Value, id: &str) -> &'a Value {
    list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"].as_str().is_some_and(|s| s.ends_with(id)))
        .unwrap_or_else(|| panic!("no session {id} in {list:#}"))
}

#[test]
fn tasks_in_each_editors_storage_are_indexed_with_their_folders() {
    let sb = editors();
    let summary = sb.index();
    assert_eq!(summary["transcripts"]["scanned"], 5, "{summary:#}");
    assert_eq!(
        summary["transcripts"]["failed"].as_array().map(Vec::len),
        Some(0),
        "{summary:#}"
    );
    let list = sb.ok(&["sessions", "--json"]).json();
    let expect = [
        ("1796100000000", "cline-vscode", "/home/me/shop"),
        ("1733000000000", "cline-vscode", "/home/me/tools"),
        (PARENT, "roo-code", "/home/me/shop"),
        (CHILD, "roo-code", "/home/me/shop"),
        (
            "3c2d1e0f-aaaa-4bbb-8ccc-0123456789ab",
            "kilo-code",
            "/home/me/blog",
        ),
    ];
    for (id, harness, dir) in expect {
        let s = session(&list, id);
        assert_eq!(s["harness"], harness, "{s:#}");
        assert_eq!(s["project"]["dir"], dir, "{s:#}");
    }
    assert_eq!(
        list["sessions"].as_array().unwrap().len(),
        expect.len(),
        "{list:#}"
    );

    // doctor names the places it looked in for each reader.
    let d = sb.run(&["doctor", "--json"]).json();
    let reader = |harness: &str| {
        d["readers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["harness"] == harness)
            .unwrap_or_else(|| panic!("no {harness} in {:#}", d["readers"]))
            .clone()
    };
    let cline = reader("cline-vscode");
    assert_eq!(cline["transcripts"], 2, "{cline:#}");
    let looked = cline["looked_in"].to_string();
    for place in [
        ".config/Code/User/globalStorage/saoudrizwan.claude-dev",
        ".config/Cursor/User/globalStorage/saoudrizwan.claude-dev",
    ] {
        assert!(looked.contains(place), "{place} not in {looked}");
    }
    assert_eq!(reader("roo-code")["transcripts"], 2);
    assert_eq!(reader("kilo-code")["transcripts"], 1);
    assert!(reader("kilo-code")["looked_in"]
        .to_string()
        .contains(".config/Windsurf/User/globalStorage/kilocode.kilo-code"));
}

#[test]
fn injected_text_is_no_message_and_a_subtask_is_its_tasks_child() {
    let sb = editors();
    sb.ok(&["index"]);
    // What the extensions send the model around what was typed (the
    // wrappers, the environment details) is never a message.
    for id in ["1796100000000", "1733000000000", PARENT, CHILD] {
        let shown = sb.ok(&["show", id, "--json"]).json();
        let text = shown.to_string();
        for injected in [
            "environment_details",
            "<task>",
            "<user_message>",
            "Current Working Directory",
            "Current Workspace Directory",
        ] {
            assert!(!text.contains(injected), "{injected} in {id}: {shown:#}");
        }
    }
    // Nothing found: exit status 1.
    let found = sb.run(&["recall", "Working Directory", "--mode", "lexical", "--json"]);
    assert_eq!(found.code, 1, "{}", found.stdout);
    assert_eq!(found.json()["hits"].as_array().map(Vec::len), Some(0));
    // The first thing typed is the user's message, and the task's title.
    let shown = sb.ok(&["show", "1796100000000", "--json"]).json();
    let first = &shown["messages"][0];
    assert_eq!(first["role"], "user", "{shown:#}");
    assert_eq!(
        first["text"],
        "Why does the orders report show other tenants?"
    );

    // The subtask Roo Code's Orchestrator started is that task's child.
    let list = sb.ok(&["sessions", "--json"]).json();
    let parent = session(&list, PARENT);
    let child = session(&list, CHILD);
    let parent_id = parent["id"].as_str().unwrap();
    assert_eq!(child["parent_id"], parent_id, "{child:#}");
    assert!(parent["parent_id"].is_null(), "{parent:#}");
    let text = sb.ok(&["sessions"]).stdout;
    let child_line = text
        .lines()
        .find(|l| l.starts_with(child["id"].as_str().unwrap()))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        child_line.contains(&format!("(sub-agent of {parent_id})")),
        "{text}"
    );
    let found = sb
        .ok(&["recall", "refund tests", "--mode", "lexical", "--json"])
        .json();
    let hit = found["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["session_id"] == child["id"])
        .unwrap_or_else(|| panic!("{found:#}"));
    assert_eq!(hit["parent_id"], parent_id, "{hit:#}");
}
