//! Sessions where harnesses keep them before their databases: OpenCode's
//! `storage/` JSON files (`fixtures/golden/opencode/storage-1.0`, built from
//! OpenCode's source) are indexed, the sub-agent's session as the child of
//! the session that ran it, and found by recall.

use crate::common::{repo, Sandbox};

const MAIN: &str = "ses_5399504217ffeOGxkqNNmvR3Gq";
const SUB: &str = "ses_53993b3149ffe1tB9NvuwQmWq2";

/// Copies the files below `from` to `<home>/<to>`.
fn place(sb: &Sandbox, from: &std::path::Path, to: &str) {
    let mut stack = vec![from.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(from)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                sb.write(&format!("{to}/{rel}"), std::fs::read(&path).unwrap());
            }
        }
    }
}

#[test]
fn opencode_storage_files_index_with_the_sub_agent_as_a_child() {
    let sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    place(
        &sb,
        &repo().join("fixtures/golden/opencode/storage-1.0/storage"),
        ".local/share/opencode/storage",
    );
    let report = sb.index();
    // The fixture's count (its SOURCES.md): 4 + 2 messages, one empty session.
    assert_eq!(report["messages"]["added"], 6, "{report:#}");
    let listed = sb
        .ok(&["sessions", "--json", "--harness", "opencode"])
        .json();
    let sessions = listed["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2, "{listed:#}");
    let sub = sessions.iter().find(|s| s["id"] == SUB).unwrap();
    assert_eq!(sub["parent_id"], MAIN, "{sub:#}");
    let main = sessions.iter().find(|s| s["id"] == MAIN).unwrap();
    assert_eq!(main["parent_id"], serde_json::Value::Null);
    let hits = sb.ok(&["recall", "where is tax rounded", "--json"]).json();
    assert_eq!(hits["hits"][0]["session_id"], SUB, "{hits:#}");
}
