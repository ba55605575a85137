//! Readers written in TOML: the one built in (OpenCode), one a user drops in
//! their plugin folder, a broken one, and a plugin built for ABI 1.0 beside
//! them; real Amp, Cursor and VS Code chat files where those harnesses keep
//! them; all through the real binary.

use serde_json::Value;

use crate::common::{install_plugin, lib_name, repo, set_mode, test_plugins, Sandbox};
use crate::harness_runs::first_hit;

fn plugins(sb: &Sandbox) -> Vec<Value> {
    sb.ok(&["plugins", "--json"]).json()["plugins"]
        .as_array()
        .unwrap()
        .clone()
}

fn by_harness<'a>(list: &'a [Value], harness: &str) -> &'a Value {
    list.iter()
        .find(|p| p["harness"] == harness)
        .unwrap_or_else(|| panic!("no {harness} reader in {list:#?}"))
}

/// A reader for a small JSONL harness, as a user would write it: sessions by
/// a field, content parts, a tool call, a resume command.
const NOTEBOOK: &str = r#"
[reader]
harness = "notebook"
version = "0.2.0"
description = "Notebook agent logs"

[files]
roots = ["~/.notebook"]
glob = ["logs/**/*.jsonl"]
exclude = ["logs/tmp/**"]

[source]
kind = "jsonl"
sessions_by = "/session"

[session]
id = "/session"
project = "/cwd"
title = "/title"

[message]
role = "/from"
roles = { user = "human", assistant = ["bot", "model"] }
text = "/content"
time = "/at"
when = [{ "/kind" = "say" }]

[[tools]]
when = { "/kind" = "run" }
command = "/cmd"

[resume]
argv = ["notebook", "open", "{native_id}"]
"#;

const NOTEBOOK_LOG: &str = r#"{"kind":"say","session":"nb-1","cwd":"/work/shop","from":"human","at":"2026-11-30T10:00:00Z","content":"why does the orders report leak rows of other tenants?"}
{"kind":"run","session":"nb-1","cmd":"rg tenant_id reports/","at":"2026-11-30T10:00:05Z"}
{"kind":"say","session":"nb-1","from":"bot","at":"2026-11-30T10:00:09Z","content":[{"type":"text","text":"The report's join drops the tenant predicate."},{"type":"image","url":"x.png"}]}
{"kind":"title","session":"nb-1","title":"Tenant leak in the orders report"}
not json at all
{"kind":"say","session":"nb-2","cwd":"/work/blog","from":"human","at":"2026-11-30T11:00:00Z","content":"draft the release notes"}
{"kind":"say","session":"nb-2","from":"model","at":"2026-11-30T11:00:04Z","content":"Here is a first draft of the notes."}
"#;

#[test]
fn the_opencode_reader_is_built_in_and_written_only_in_toml() {
    let sb = Sandbox::new();
    let list = plugins(&sb);
    let opencode = by_harness(&list, "opencode");
    assert_eq!(opencode["status"], "loaded", "{opencode:#}");
    assert_eq!(opencode["origin"], "bundled");
    assert_eq!(opencode["abi"], "1.3");
    assert!(
        opencode["path"]
            .as_str()
            .unwrap()
            .ends_with("#opencode.toml"),
        "{opencode:#}"
    );
    assert!(
        opencode["served_by"]
            .as_str()
            .unwrap()
            .ends_with(&lib_name("deja_plugin_toml")),
        "{opencode:#}"
    );
    let engine = list
        .iter()
        .find(|p| p["name"] == "toml")
        .expect("the TOML reader plugin");
    assert_eq!(engine["harness"], Value::Null);
    let built_in = std::fs::read_dir(repo().join("plugins/toml/readers"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "toml")
        })
        .count();
    assert!(
        engine["note"]
            .as_str()
            .unwrap()
            .contains(&format!("{built_in} built in")),
        "{engine:#}"
    );
    // The guide's example is the built-in reader, word for word.
    let guide = std::fs::read_to_string(repo().join(crate::common::WRITING_A_READER)).unwrap();
    let builtin =
        std::fs::read_to_string(repo().join("plugins/toml/readers/opencode.toml")).unwrap();
    assert!(
        guide.contains(&format!("```toml\n{builtin}```")),
        "the \"Write a reader in TOML\" example of {} differs from plugins/toml/readers/opencode.toml",
        crate::common::WRITING_A_READER
    );
}

#[test]
fn a_reader_written_in_toml_in_the_user_folder_indexes_and_recalls() {
    let sb = Sandbox::new();
    let dir = sb.plugin_dir();
    let description = dir.join("notebook.toml");
    std::fs::write(&description, NOTEBOOK).unwrap();
    set_mode(&description, 0o644);
    sb.write(".notebook/logs/2026/11.jsonl", NOTEBOOK_LOG);
    sb.write(
        ".notebook/logs/tmp/scratch.jsonl",
        NOTEBOOK_LOG.replace("nb-", "tmp-"),
    );

    let list = plugins(&sb);
    let notebook = by_harness(&list, "notebook");
    assert_eq!(notebook["status"], "loaded", "{notebook:#}");
    assert_eq!(notebook["origin"], "user");
    assert_eq!(notebook["path"], description.to_str().unwrap());
    assert!(notebook["version"]
        .as_str()
        .unwrap()
        .starts_with("0.2.0+toml."));

    let report = sb.index();
    assert_eq!(report["sessions"]["added"], 2, "{report:#}");
    let out = sb
        .ok(&["sessions", "--harness", "notebook", "--json"])
        .json();
    let sessions = out["sessions"].as_array().unwrap();
    let nb1 = sessions.iter().find(|s| s["id"] == "nb-1").expect("nb-1");
    assert_eq!(nb1["title"], "Tenant leak in the orders report");
    assert_eq!(nb1["project"]["dir"], "/work/shop");
    assert!(sessions
        .iter()
        .all(|s| !s["id"].as_str().unwrap().starts_with("tmp-")));

    let shown = sb.ok(&["show", "nb-1", "--json"]).json();
    let messages = shown["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{shown:#}");
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(
        messages[1]["text"],
        "The report's join drops the tenant predicate."
    );
    assert_eq!(shown["commands"][0]["command"], "rg tenant_id reports/");

    let hits = sb.ok(&["recall", "tenant predicate join", "--json"]).json();
    assert_eq!(hits["hits"][0]["session_id"], "nb-1", "{hits:#}");

    let resume = sb.ok(&["resume", "nb-1"]).stdout;
    assert!(resume.contains("notebook open nb-1"), "{resume}");
    assert!(resume.contains("/work/shop"), "{resume}");
}

#[test]
fn a_broken_description_disables_that_reader_only_and_names_file_line_and_key() {
    let sb = Sandbox::new();
    let dir = sb.plugin_dir();
    let broken = dir.join("broken.toml");
    std::fs::write(
        &broken,
        NOTEBOOK
            .replace("harness = \"notebook\"", "harness = \"broken\"")
            .replace("role = \"/from\"", "role = \"from\""),
    )
    .unwrap();
    set_mode(&broken, 0o644);
    let list = plugins(&sb);
    let entry = list
        .iter()
        .find(|p| p["path"] == broken.to_str().unwrap())
        .expect("the broken description is listed");
    assert_eq!(entry["status"], "invalid", "{entry:#}");
    let reason = entry["reason"].as_str().unwrap();
    assert!(reason.contains(broken.to_str().unwrap()), "{reason}");
    assert!(reason.contains("line 22"), "{reason}");
    assert!(reason.contains("key `message.role`"), "{reason}");
    assert!(reason.contains("starts with `/`"), "{reason}");
    // Every other reader, the built-in TOML one included, loads.
    for harness in ["aider", "claude", "opencode"] {
        assert_eq!(by_harness(&list, harness)["status"], "loaded");
    }
    let text = sb.ok(&["plugins"]).stdout;
    assert!(text.contains("key `message.role`"), "{text}");
}

#[test]
fn a_description_others_can_change_is_refused() {
    let sb = Sandbox::new();
    let dir = sb.plugin_dir();
    let loose = dir.join("notebook.toml");
    std::fs::write(&loose, NOTEBOOK).unwrap();
    set_mode(&loose, 0o666);
    let out = sb.ok(&["plugins", "--json"]);
    let list: Value = out.json();
    let entry = list["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["path"] == loose.to_str().unwrap())
        .expect("listed");
    assert_eq!(entry["status"], "refused", "{entry:#}");
    assert!(out.stderr.contains("notebook.toml"), "{}", out.stderr);
}

#[test]
fn a_plugin_built_for_abi_one_zero_still_loads_and_reads() {
    let sb = Sandbox::new();
    install_plugin(
        &test_plugins().join(lib_name("deja_plugin_test_abi_one_zero")),
        &sb.plugin_dir(),
    );
    let list = plugins(&sb);
    let old = by_harness(&list, "oldabi");
    assert_eq!(old["status"], "loaded", "{old:#}");
    assert_eq!(old["abi"], "1.0");
    let file = sb.write(
        "notes/chat.oldabi",
        "user: where is the tenant check?\nassistant: in the join\n",
    );
    let out = sb.ok(&["parse", file.to_str().unwrap(), "--json"]).json();
    let messages = out["sessions"][0]["messages"].as_array().unwrap();
    assert_eq!(out["sessions"][0]["harness"], "oldabi", "{out:#}");
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[1]["text"], "in the join");
}

/// A running OpenCode writes to its database's write-ahead log, and the
/// database file itself does not change until a checkpoint: `deja index`
/// still sees each new message, and reads nothing again when nothing is new.
#[test]
fn a_message_only_in_the_write_ahead_log_is_indexed_on_the_next_run() {
    let sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    let data = sb.home.join(".local/share/opencode");
    std::fs::create_dir_all(&data).unwrap();
    let db = data.join("opencode.db");
    let writer = rusqlite::Connection::open(&db).unwrap();
    writer
        .execute_batch("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;")
        .unwrap();
    let golden = repo().join("fixtures/golden/opencode");
    for file in ["schema.sql", "01-basic.sql"] {
        writer
            .execute_batch(&std::fs::read_to_string(golden.join(file)).unwrap())
            .unwrap();
    }
    let main_file = std::fs::read(&db).unwrap();
    assert_eq!(sb.index()["messages"]["added"], 2);
    assert_eq!(sb.index()["transcripts"]["changed"], 0);

    writer
        .execute_batch(
            "INSERT INTO message VALUES ('msg_03', 'ses_basic', 1764000100000, 1764000100000, '{\"role\":\"user\",\"time\":{\"created\":1764000100000}}');
             INSERT INTO part VALUES ('prt_03a', 'msg_03', 'ses_basic', 1764000100000, 1764000100000, '{\"type\":\"text\",\"text\":\"does the flamingo cache need the predicate too?\"}');",
        )
        .unwrap();
    // Still only in the log.
    assert_eq!(std::fs::read(&db).unwrap(), main_file);
    let report = sb.index();
    assert_eq!(report["messages"]["added"], 1, "{report:#}");
    let hits = sb.ok(&["recall", "flamingo cache", "--json"]).json();
    assert_eq!(hits["hits"][0]["session_id"], "ses_basic", "{hits:#}");
    assert_eq!(sb.index()["transcripts"]["changed"], 0);
    drop(writer);
}

/// Copies the files below `fixtures/golden/<from>` to `<home>/<to>`.
fn place(sb: &Sandbox, from: &str, to: &str) {
    let base = repo().join("fixtures/golden").join(from);
    let mut stack = vec![base.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if !path.ends_with("SOURCES.md") && !path.to_string_lossy().contains("LICENSE") {
                let rel = path
                    .strip_prefix(&base)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                sb.write(&format!("{to}/{rel}"), std::fs::read(&path).unwrap());
            }
        }
    }
}

#[test]
fn real_amp_cursor_and_vs_code_chat_files_index_and_recall_where_the_harnesses_keep_them() {
    let sb = Sandbox::new();
    place(&sb, "amp", ".local/share/amp");
    place(&sb, "cursor", ".cursor");
    place(&sb, "copilot-chat/User", ".config/Code/User");
    let report = sb.index();
    assert_eq!(report["sessions"]["added"], 5, "{report:#}");
    let count = |harness: &str| {
        sb.ok(&["sessions", "--harness", harness, "--json"]).json()["sessions"]
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(
        (count("amp"), count("cursor"), count("copilot-chat")),
        (2, 1, 2)
    );

    let first = |query: &str| first_hit(&sb, query);
    assert_eq!(
        first("plan for a random joke command line tool"),
        "T-019ca1ce-3ae2-7686-a41e-ccc078837f8a"
    );
    assert_eq!(first("HBO shows from the 90s"), "cursor-session-simple");
    assert_eq!(
        first("joke about 7sadfh32u23gdaWF"),
        "7de89a80-6d93-43e7-be0a-0a9afe980198"
    );

    let shown = sb
        .ok(&["show", "7de89a80-6d93-43e7-be0a-0a9afe980198", "--json"])
        .json();
    assert_eq!(shown["messages"].as_array().unwrap().len(), 4, "{shown:#}");
    assert_eq!(
        shown["project"]["dir"],
        "/Users/svarlamov/projects/testing-git"
    );
    let resume = sb
        .ok(&["resume", "T-019ca1f6-7f21-77b5-a308-65416ebbdf48"])
        .stdout;
    assert!(
        resume.contains("amp threads continue T-019ca1f6-7f21-77b5-a308-65416ebbdf48"),
        "{resume}"
    );
}

/// The Continue sessions `cn` 1.5.47 wrote (`real-cn-1.5.47/`: a session and
/// the index beside it) and one without an entry in the index, in
/// `~/.continue/sessions`.
pub(crate) fn continue_sessions(sb: &Sandbox, with_index: bool) {
    let golden = repo().join("fixtures/golden/continue");
    let dir = sb.home.join(".continue/sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let real = "0797f663-ddde-460e-994f-0e7b87ee5763.json";
    std::fs::copy(golden.join("real-cn-1.5.47").join(real), dir.join(real)).unwrap();
    let rule = "9b1c0a52-parts-and-ide-tools.json";
    std::fs::copy(golden.join("rules").join(rule), dir.join(rule)).unwrap();
    if with_index {
        std::fs::copy(
            golden.join("real-cn-1.5.47/sessions.json"),
            dir.join("sessions.json"),
        )
        .unwrap();
    }
}

#[test]
fn a_session_takes_its_date_from_the_harness_index_else_it_is_marked_approximate() {
    // The copies were made just now: their files' time is today.
    let sb = Sandbox::new();
    continue_sessions(&sb, true);
    sb.ok(&["index"]);
    let listed = sb.ok(&["sessions", "--json"]).json();
    let sessions = listed["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2, "{listed:#}");
    // In the index: dated as Continue recorded it ("dateCreated": "1796183765318").
    let real = &sessions[0];
    assert_eq!(
        real["id"], "0797f663-ddde-460e-994f-0e7b87ee5763",
        "{listed:#}"
    );
    assert_eq!(real["started_at"], "2026-12-02T03:56:05.318Z");
    assert_eq!(real["date_approximate"], false);
    // Not in it: the file's time, marked, and listed after the dated one
    // although it is newer.
    let other = &sessions[1];
    assert_eq!(other["date_approximate"], true, "{listed:#}");
    assert!(
        other["started_at"].as_str().unwrap() > real["started_at"].as_str().unwrap(),
        "{listed:#}"
    );
    let text = sb.ok(&["sessions"]).stdout;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].starts_with("0797f663") && !lines[0].contains("about"),
        "{text}"
    );
    assert!(lines[1].contains("  about 20"), "{text}");
    let shown = sb.ok(&["show", "9b1c0a52"]).stdout;
    assert!(shown.contains("started   about 20"), "{shown}");
    let shown = sb.ok(&["show", "0797f663", "--json"]).json();
    assert_eq!(shown["date_approximate"], false);
    let hits = sb.ok(&["recall", "tenant", "--json"]).json();
    for hit in hits["hits"].as_array().unwrap() {
        let id = hit["session_id"].as_str().unwrap();
        assert_eq!(
            hit["date_approximate"],
            !id.starts_with("0797f663"),
            "{hit:#}"
        );
    }
    // Agents are told which dates are approximate, in the value and the text.
    let answer = crate::cloned::mcp_result(&sb, "recall", serde_json::json!({"query": "tenant"}));
    let text = answer["content"][0]["text"].as_str().unwrap();
    let hits = answer["structuredContent"]["hits"].as_array().unwrap();
    assert!(!hits.is_empty(), "{answer:#}");
    for hit in hits {
        let id = hit["session_id"].as_str().unwrap();
        let approximate = !id.starts_with("0797f663");
        assert_eq!(hit["date_approximate"], approximate, "{hit:#}");
        let line = text
            .lines()
            .find(|l| l.contains(&format!("session {id} ")))
            .unwrap_or_else(|| panic!("{text}"));
        assert_eq!(
            line.contains("(approximate: the transcript's modification time)"),
            approximate,
            "{line}"
        );
    }

    // Without the index, both are dated by their files and marked so.
    let sb = Sandbox::new();
    continue_sessions(&sb, false);
    sb.ok(&["index"]);
    let listed = sb.ok(&["sessions", "--json"]).json();
    let sessions = listed["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2, "{listed:#}");
    assert!(
        sessions.iter().all(|s| s["date_approximate"] == true),
        "{listed:#}"
    );
    let text = sb.ok(&["recall", "tenant"]).stdout;
    assert!(text.contains(" · about 20"), "{text}");
}
