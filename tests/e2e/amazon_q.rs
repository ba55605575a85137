//! Amazon Q Developer CLI and Kiro CLI keep their conversations in the
//! SQLite database of their data folder, keyed by the folder each was held
//! in: a HOME with `~/.local/share/amazon-q/data.sqlite3` (a conversation
//! of 1.13 and later and one of before) and `~/.local/share/kiro-cli/
//! data.sqlite3` (two conversations of one folder in `conversations_v2`),
//! written from `fixtures/golden/amazon-q/from-source` (from source, no
//! real file: the programs answer only after an Amazon sign-in). `deja
//! index`, `sessions`, `show` and `recall` read exactly what was typed,
//! answered and run, and nothing in either folder is added or changed.

use std::path::Path;

use serde_json::Value;

use crate::common::{repo, Sandbox};
use crate::harness_runs::{commands, first_hit, messages, tree};

const LEDGER: &str = "9b1f6c3e-2d4a-4f8b-a6e1-7c5d3b2a1f00";
const NOTES: &str = "3c2e8a71-5b6d-4e9f-8a10-2f4b6c8d0e12";
const STACKS: &str = "d41c7e2a-8f3b-4a6c-9e5d-1b2a3c4d5e6f";
const REGION: &str = "e52d8f3b-9a4c-4b7d-8f6e-2c3b4d5e6f70";

/// Writes `data.sqlite3` in `folder` with the rows of
/// `from-source/<name>.json`, in the tables the programs' migrations
/// create.
fn database(name: &str, folder: &Path) {
    let text = std::fs::read_to_string(
        repo().join(format!("fixtures/golden/amazon-q/from-source/{name}.json")),
    )
    .unwrap();
    let tables: serde_json::Map<String, Value> = serde_json::from_str(&text).unwrap();
    std::fs::create_dir_all(folder).unwrap();
    let conn = rusqlite::Connection::open(folder.join("data.sqlite3")).unwrap();
    conn.execute_batch("CREATE TABLE conversations (key TEXT PRIMARY KEY, value TEXT);")
        .unwrap();
    for (key, value) in tables["conversations"].as_object().unwrap() {
        conn.execute(
            "INSERT INTO conversations VALUES (?1, ?2)",
            rusqlite::params![key, value.to_string()],
        )
        .unwrap();
    }
    if let Some(rows) = tables.get("conversations_v2") {
        conn.execute_batch(
            "CREATE TABLE conversations_v2 (key TEXT NOT NULL, conversation_id TEXT NOT NULL, \
             value TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, \
             PRIMARY KEY (key, conversation_id));",
        )
        .unwrap();
        for row in rows.as_array().unwrap() {
            conn.execute(
                "INSERT INTO conversations_v2 VALUES (?1, ?2, ?3, ?4, ?5)",
                rusqlite::params![
                    row["key"].as_str().unwrap(),
                    row["conversation_id"].as_str().unwrap(),
                    row["value"].to_string(),
                    row["created_at"].as_i64().unwrap(),
                    row["updated_at"].as_i64().unwrap(),
                ],
            )
            .unwrap();
        }
    }
}

#[cfg(target_os = "linux")]
#[test]
fn amazon_q_and_kiro_cli_conversations_are_read_where_they_keep_them() {
    let sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    let data = sb.home.join(".local/share");
    database("amazon-q", &data.join("amazon-q"));
    database("kiro-cli", &data.join("kiro-cli"));
    // deja keeps its own data beside them, in ~/.local/share/deja.
    let folders = [data.join("amazon-q"), data.join("kiro-cli")];
    let before: Vec<_> = folders.iter().map(|f| tree(f)).collect();

    let report = sb.index();
    assert_eq!(report["sessions"]["added"], 4, "{report:#}");
    let after: Vec<_> = folders.iter().map(|f| tree(f)).collect();
    assert!(after == before, "deja changed the programs' folders");

    let listed = sb
        .ok(&["sessions", "--harness", "amazon-q", "--json"])
        .json();
    let sessions = listed["sessions"].as_array().unwrap();
    let mut ids: Vec<&str> = sessions.iter().map(|s| s["id"].as_str().unwrap()).collect();
    ids.sort();
    let mut expected = [LEDGER, NOTES, STACKS, REGION];
    expected.sort();
    assert_eq!(ids, expected, "{listed:#}");
    let ledger = sessions.iter().find(|s| s["id"] == LEDGER).unwrap();
    assert_eq!(ledger["started_at"], "2025-09-14T08:00:00Z", "{ledger:#}");
    let stacks = sessions.iter().find(|s| s["id"] == STACKS).unwrap();
    assert_eq!(stacks["started_at"], "2026-01-01T09:00:00Z", "{stacks:#}");

    // What the person typed (not the context Q sent with it), what the
    // model answered, what ran and how it ended, the files written and read.
    let shown = sb.ok(&["show", LEDGER, "--json"]).json();
    assert_eq!(shown["project"]["dir"], "/home/me/code/ledger", "{shown:#}");
    assert_eq!(
        messages(&shown),
        [
            ("user", "Why does the ledger total drift by a cent?"),
            ("assistant", "Let me look at how the totals are summed."),
            ("assistant", "The total sums floating-point amounts; I'll sum integer cents instead."),
            ("assistant", "The tests pass. I'll note the change."),
            ("assistant", "Fixed: totals are now summed in integer cents, so they no longer drift, and the tests pass."),
            ("user", "Also run the benchmarks"),
            ("assistant", "Running the benchmarks."),
            ("user", "Skip the benchmarks, they take too long"),
            ("assistant", "Understood, I left the benchmarks alone."),
        ],
        "{shown:#}"
    );
    assert_eq!(
        commands(&shown),
        [
            ("cargo test --quiet", Some("succeeded"), Some(0)),
            ("cargo bench", Some("failed"), None),
        ],
        "{shown:#}"
    );
    let files: Vec<(&str, &str)> = shown["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), f["action"].as_str().unwrap()))
        .collect();
    assert_eq!(
        files,
        [
            ("/home/me/code/ledger/src/total.rs", "read"),
            ("/home/me/code/ledger/src/total.rs", "edit"),
            ("/home/me/code/ledger/NOTES.md", "edit"),
        ],
        "{shown:#}"
    );

    // A conversation of before 1.13, its turns pairs.
    let shown = sb.ok(&["show", NOTES, "--json"]).json();
    assert_eq!(shown["project"]["dir"], "/home/me/code/notes", "{shown:#}");
    assert_eq!(
        messages(&shown),
        [
            ("user", "Which files mention TODO?"),
            ("assistant", "Searching the folder."),
            ("assistant", "Nothing matched; let me check the README."),
            (
                "assistant",
                "No file mentions TODO; the README holds only a title."
            ),
            // The prompt `q chat --resume` sent in the person's name is not theirs.
            (
                "assistant",
                "We looked for TODO notes in this folder and found none."
            ),
        ],
        "{shown:#}"
    );
    assert_eq!(
        commands(&shown),
        [("grep -rl TODO .", Some("failed"), Some(1))],
        "{shown:#}"
    );

    // Kiro CLI: two conversations of one folder.
    let shown = sb.ok(&["show", STACKS, "--json"]).json();
    assert_eq!(shown["project"]["dir"], "/home/me/code/infra", "{shown:#}");
    assert_eq!(
        messages(&shown),
        [
            ("user", "List the stacks in this folder"),
            ("assistant", "There are two stacks: db and network."),
        ],
        "{shown:#}"
    );
    assert_eq!(
        commands(&shown),
        [("ls stacks", Some("succeeded"), Some(0))],
        "{shown:#}"
    );
    let shown = sb.ok(&["show", REGION, "--json"]).json();
    assert_eq!(shown["project"]["dir"], "/home/me/code/infra", "{shown:#}");
    assert_eq!(
        messages(&shown),
        [
            ("user", "Which region does the db stack deploy to?"),
            ("assistant", "eu-west-1, as stacks/db/config.json sets it."),
        ],
        "{shown:#}"
    );

    let first = |query: &str| first_hit(&sb, query);
    assert_eq!(first("ledger total drift cent"), LEDGER);
    assert_eq!(first("files mention TODO"), NOTES);
    assert_eq!(first("region db stack deploy"), REGION);
    // The context Q added to the prompt (a hook's AGENTS.md) is not indexed.
    let hits = sb
        .ok(&["recall", "Always run cargo test before finishing", "--json"])
        .json();
    assert!(
        hits["hits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| !h.to_string().contains("before finishing")),
        "{hits:#}"
    );
}
