//! Commands that failed, through the real binary: transcripts of Claude
//! Code, Codex CLI, Gemini CLI and Qwen Code in the shapes those agents
//! write (a Bash result marked an error with `Exit code N`, a Codex call
//! output's `Exit code: N` and `Process exited with code N`, the shell
//! tool's `Exit Code: N` line), read by `deja index` and listed per project
//! and day by `deja recap` (text and `--json`); and a plugin built for ABI
//! 1.1, which gives no outcomes, still loads and lists none.
//!
//! The `#[ignore]`d tests check blame, recap and write-back on the shared
//! corpus of real transcripts (`DEJA_SHARED`, as in `corpus.rs`), against
//! what `tests/corpus_commands.py` computes from the raw files alone
//! (blame's line attribution on files made from the edits' texts, since the
//! projects themselves are not in the corpus).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::common::{install_plugin, lib_name, test_plugins, Sandbox};
use crate::harness_runs::commands;

/// Writes JSON lines to `rel` under HOME.
fn jsonl(sb: &Sandbox, rel: &str, lines: &[Value]) -> PathBuf {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    sb.write(rel, text)
}

fn claude(sb: &Sandbox) {
    let id = "6f9619ff-8b86-4011-b42d-00c04fc96401";
    let cwd = sb.write("work/shop/.keep", "").parent().unwrap().to_owned();
    let cwd = cwd.to_str().unwrap();
    let base = |uuid: &str, parent: Option<&str>, time: &str| {
        json!({"uuid": uuid, "parentUuid": parent, "sessionId": id, "cwd": cwd,
               "timestamp": format!("2026-07-10T09:{time}.000Z")})
    };
    let with = |mut v: Value, extra: Value| {
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v
    };
    let call = |n: &str, command: &str| {
        json!({"type": "tool_use", "id": format!("toolu_{n}"), "name": "Bash",
               "input": {"command": command}})
    };
    let result = |n: &str, error: bool, text: &str| {
        json!({"type": "tool_result", "tool_use_id": format!("toolu_{n}"),
               "is_error": error, "content": text})
    };
    let lines = vec![
        with(
            base("u1", None, "00:00"),
            json!({"type": "user", "message": {"role": "user", "content": "run the shop tests"}}),
        ),
        with(
            base("a1", Some("u1"), "00:05"),
            json!({"type": "assistant", "message": {"id": "msg_1", "role": "assistant", "content": [
                {"type": "text", "text": "Running them."},
                call("1", "cargo test -p shop"), call("2", "ls -la"), call("3", "rm -rf target")]}}),
        ),
        with(
            base("u2", Some("a1"), "00:09"),
            json!({"type": "user", "message": {"role": "user", "content": [
                result("1", true, "Exit code 101\nerror: test failed, to rerun pass `-p shop --lib`"),
                result("2", false, "total 0"),
                result("3", true, "The user doesn't want to proceed with this tool use.")]}}),
        ),
        with(
            base("a2", Some("u2"), "00:12"),
            json!({"type": "assistant", "message": {"id": "msg_2", "role": "assistant", "content": [
                {"type": "text", "text": "One test fails."}, call("4", "cargo check")]}}),
        ),
        with(
            base("u3", Some("a2"), "00:15"),
            json!({"type": "user", "message": {"role": "user", "content": [
                result("4", true, "Command timed out after 2m 0.0s")]}}),
        ),
    ];
    let folder = cwd.replace(|c: char| !c.is_ascii_alphanumeric(), "-");
    jsonl(sb, &format!(".claude/projects/{folder}/{id}.jsonl"), &lines);
}

fn codex(sb: &Sandbox) {
    let id = "019d8cbb-0000-7000-8000-00000000c0de";
    let cwd = sb.write("work/api/.keep", "").parent().unwrap().to_owned();
    let at = |s: u32| format!("2026-07-11T10:00:{s:02}.000Z");
    let item = |s: u32, payload: Value| json!({"timestamp": at(s), "type": "response_item", "payload": payload});
    let call = |s: u32, n: &str, name: &str, args: Value| {
        item(
            s,
            json!({"type": "function_call", "name": name, "call_id": n,
                       "arguments": args.to_string()}),
        )
    };
    let output = |s: u32, n: &str, text: &str| {
        item(
            s,
            json!({"type": "function_call_output", "call_id": n, "output": text}),
        )
    };
    let lines = vec![
        json!({"timestamp": at(0), "type": "session_meta", "payload":
            {"id": id, "timestamp": at(0), "cwd": cwd, "originator": "codex_cli_rs", "cli_version": "0.50.0"}}),
        item(1, json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "why does the api build fail?"}]})),
        call(2, "c1", "shell_command", json!({"command": "pytest -q"})),
        output(3, "c1", "Exit code: 1\nWall time: 2 seconds\nOutput:\n1 failed"),
        call(4, "c2", "shell_command", json!({"command": "git status"})),
        output(5, "c2", "Exit code: 0\nWall time: 0.1 seconds\nOutput:\n"),
        call(6, "c3", "exec_command", json!({"cmd": "make api"})),
        json!({"timestamp": at(7), "type": "event_msg", "payload":
            {"type": "exec_command_end", "call_id": "c3", "exit_code": 2, "status": "failed"}}),
        output(8, "c3", "Chunk ID: 1a\nWall time: 0.2 seconds\nProcess exited with code 2\nOutput:\nmake: *** [api] Error 2"),
        item(9, json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "A test and the build fail."}]})),
    ];
    jsonl(
        sb,
        &format!(".codex/sessions/2026/07/11/rollout-2026-07-11T10-00-00-{id}.jsonl"),
        &lines,
    );
}

fn gemini(sb: &Sandbox) {
    let id = "3b0c2a51-7c1e-4d6a-9d52-0d9a4c2b9e11";
    let start = "2026-07-12T11:00:00.000Z";
    let shell = |n: &str, command: &str, output: &str| {
        json!({"id": n, "name": "run_shell_command", "args": {"command": command},
               "status": "success", "timestamp": start,
               "result": [{"functionResponse": {"id": n, "name": "run_shell_command",
                           "response": {"output": output}}}]})
    };
    let lines = vec![
        json!({"sessionId": id, "projectHash": "a".repeat(64), "startTime": start, "lastUpdated": start, "kind": "main"}),
        json!({"id": "g1", "timestamp": start, "type": "user", "content": [{"text": "run the web tests"}]}),
        json!({"id": "g2", "timestamp": start, "type": "gemini", "content": "Running them.", "toolCalls": [
            shell("s1", "npm test", "Output: 2 failing\nError: (none)\nExit Code: 1\nSignal: (none)\nProcess Group PGID: 1"),
            shell("s2", "echo done", "Output: done\nError: (none)\nExit Code: 0\nSignal: (none)")]}),
    ];
    jsonl(
        sb,
        &format!(
            ".gemini/tmp/web/chats/session-2026-07-12T11-00-{}.jsonl",
            &id[..8]
        ),
        &lines,
    );
}

fn qwen(sb: &Sandbox) {
    let id = "9a7b3c1d-2e4f-4a6b-8c0d-1e2f3a4b5c6d";
    let cwd = sb.write("work/cli/.keep", "").parent().unwrap().to_owned();
    let cwd = cwd.to_str().unwrap();
    let rec = |uuid: &str, parent: Option<&str>, kind: &str, parts: Value| {
        json!({"uuid": uuid, "parentUuid": parent, "sessionId": id, "timestamp": "2026-07-13T12:00:00.000Z",
               "type": kind, "cwd": cwd, "message": {"role": if kind == "assistant" { "model" } else { "user" }, "parts": parts}})
    };
    let response = |n: &str, output: &str| json!([{"functionResponse": {"id": n, "name": "run_shell_command", "response": {"output": output}}}]);
    let mut r1 = rec("q3", Some("q2"), "tool_result", response("k1", "Command: make build\nDirectory: (root)\nOutput: error\nError: (none)\nExit Code: 2\nSignal: (none)"));
    r1["toolCallResult"] = json!({"callId": "k1", "status": "success"});
    let mut r2 = rec(
        "q4",
        Some("q3"),
        "tool_result",
        response(
            "k2",
            "Command: pwd\nOutput: /\nError: (none)\nExit Code: 0\nSignal: (none)",
        ),
    );
    r2["toolCallResult"] = json!({"callId": "k2", "status": "success"});
    let lines = vec![
        rec("q1", None, "user", json!([{"text": "build the cli"}])),
        rec(
            "q2",
            Some("q1"),
            "assistant",
            json!([
            {"text": "Building."},
            {"functionCall": {"id": "k1", "name": "run_shell_command", "args": {"command": "make build"}}},
            {"functionCall": {"id": "k2", "name": "run_shell_command", "args": {"command": "pwd"}}}]),
        ),
        r1,
        r2,
    ];
    let folder = cwd.replace(|c: char| !c.is_ascii_alphanumeric(), "-");
    jsonl(
        sb,
        &format!(".qwen/projects/{folder}/chats/{id}.jsonl"),
        &lines,
    );
}

/// Every failed command of a recap's JSON: (harness, command, exit code).
fn failed(recap: &Value) -> BTreeSet<(String, String, Option<i64>)> {
    let mut out = BTreeSet::new();
    for p in recap["projects"].as_array().unwrap() {
        for d in p["days"].as_array().unwrap() {
            for c in d["failed_commands"].as_array().unwrap() {
                out.insert((
                    c["harness"].as_str().unwrap().to_string(),
                    c["command"].as_str().unwrap().to_string(),
                    c["exit_code"].as_i64(),
                ));
            }
        }
    }
    out
}

#[test]
fn recap_lists_the_commands_that_failed_in_each_harness() {
    let sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    claude(&sb);
    codex(&sb);
    gemini(&sb);
    qwen(&sb);
    let summary = sb.index();
    assert_eq!(summary["sessions"]["added"], 4, "{summary:#}");
    let period = ["--since", "2026-07-01", "--until", "2026-08-01"];
    let recap = sb
        .ok(&[&["recap", "--json"][..], &period[..]].concat())
        .json();
    let s = |h: &str, c: &str, code: Option<i64>| (h.to_string(), c.to_string(), code);
    let expected: BTreeSet<_> = [
        s("claude", "cargo test -p shop", Some(101)),
        s("claude", "cargo check", None),
        s("codex", "pytest -q", Some(1)),
        s("codex", "make api", Some(2)),
        s("gemini", "npm test", Some(1)),
        s("qwen", "make build", Some(2)),
    ]
    .into_iter()
    .collect();
    assert_eq!(failed(&recap), expected, "{recap:#}");
    assert_eq!(recap["totals"]["failed_commands"], 6, "{recap:#}");

    // Each failed command is listed under its session's project and day.
    let shop = recap["projects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["label"] == "shop")
        .expect("the shop project");
    assert_eq!(shop["days"][0]["date"], "2026-07-10");
    assert_eq!(
        shop["days"][0]["failed_commands"][0]["session"],
        shop["days"][0]["sessions"][0]["id"]
    );

    let text = sb.ok(&[&["recap"][..], &period[..]].concat()).stdout;
    assert!(text.contains("6 failed commands"), "{text}");
    let line = text
        .lines()
        .find(|l| l.contains("cargo test -p shop"))
        .expect("the failed command's line");
    assert!(
        line.trim_start().starts_with("failed") && line.contains("exit 101"),
        "{text}"
    );
    assert!(
        !text.contains("ls -la") && !text.contains("echo done"),
        "{text}"
    );

    // `deja show` says how each command ended, where known.
    let id = shop["days"][0]["sessions"][0]["id"].as_str().unwrap();
    let shown = sb.ok(&["show", id, "--json"]).json();
    assert_eq!(
        commands(&shown),
        [
            ("cargo test -p shop", Some("failed"), Some(101)),
            ("ls -la", Some("succeeded"), None),
            ("cargo check", Some("failed"), None),
        ],
        "{shown:#}"
    );
    let text = sb.ok(&["show", id]).stdout;
    assert!(
        text.contains("cargo test -p shop  (failed, exit 101)"),
        "{text}"
    );
}

#[test]
fn a_plugin_built_for_abi_one_one_loads_and_its_commands_are_not_failed() {
    let sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    install_plugin(
        &test_plugins().join(lib_name("deja_plugin_test_abi_one_one")),
        &sb.plugin_dir(),
    );
    let list = sb.ok(&["plugins", "--json"]).json();
    let entry = list["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["harness"] == "oneone")
        .unwrap_or_else(|| panic!("{list:#}"));
    assert_eq!(entry["status"], "loaded", "{entry:#}");
    assert_eq!(entry["abi"], "1.1", "{entry:#}");
    let file = sb.write(
        "notes/chat.oneone",
        "user: build it\n$ make\nassistant: built\n",
    );
    let out = sb.ok(&["parse", file.to_str().unwrap(), "--json"]).json();
    assert_eq!(
        out["sessions"][0]["commands"][0]["command"], "make",
        "{out:#}"
    );
}

// ---- the shared corpus ----------------------------------------------------

fn shared() -> PathBuf {
    let dir = std::env::var_os("DEJA_SHARED")
        .map(PathBuf::from)
        .expect("DEJA_SHARED is not set: point it at the shared folder (with corpus/)");
    assert!(
        dir.join("corpus").is_dir(),
        "{} has no corpus/",
        dir.display()
    );
    dir
}

fn corpus(harness: &str) -> PathBuf {
    shared().join("corpus").join(harness)
}

/// What `tests/corpus_commands.py` computes from the raw files.
fn expected(args: &[&str]) -> Value {
    let script = crate::common::repo().join("tests/corpus_commands.py");
    let out = std::process::Command::new("python3")
        .arg(&script)
        .args(args)
        .output()
        .expect("run python3 tests/corpus_commands.py");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Every owner folder below `corpus/<harness>/`, each laid out like that
/// harness's home.
fn owners(harness: &str) -> Vec<String> {
    let mut dirs: Vec<String> = std::fs::read_dir(corpus(harness))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    dirs
}

/// A sandbox that reads the corpus of `harnesses` only, without embeddings.
fn corpus_sandbox(harnesses: &[&str]) -> Sandbox {
    let sb = Sandbox::new();
    let mut config = String::from("[embed]\nenabled = false\n");
    for h in harnesses {
        config.push_str(&format!("[harness.{h}]\nroots = {:?}\n", owners(h)));
    }
    sb.config(&config);
    sb
}

/// The whole history, as a period.
const ALL: [&str; 4] = ["--since", "2000-01-01", "--until", "2100-01-01"];

/// Whether `stored` is `original` with some parts replaced by deja's
/// `[REDACTED:kind]` markers.
fn redacted_from(stored: &str, original: &str) -> bool {
    let mut pieces = Vec::new();
    let mut rest = stored;
    while let Some(at) = rest.find("[REDACTED:") {
        pieces.push(&rest[..at]);
        rest = match rest[at..].find(']') {
            Some(end) => &rest[at + end + 1..],
            None => return false,
        };
    }
    if pieces.is_empty() {
        return false;
    }
    pieces.push(rest);
    let last = pieces.len() - 1;
    let mut left = original;
    for (i, piece) in pieces.iter().enumerate() {
        let found = if i == 0 {
            left.starts_with(piece).then_some(0)
        } else if i == last {
            left.ends_with(piece).then(|| left.len() - piece.len())
        } else {
            left.find(piece)
        };
        match found {
            Some(at) => left = &left[at + piece.len()..],
            None => return false,
        }
    }
    true
}

#[test]
#[ignore = "needs DEJA_SHARED (the shared corpus)"]
fn corpus_recap_lists_the_failed_commands_the_transcripts_record() {
    let harnesses = ["claude", "codex", "gemini", "qwen"];
    let sb = corpus_sandbox(&harnesses);
    let summary = sb.index();
    assert_eq!(
        summary["transcripts"]["failed"].as_array().unwrap().len(),
        0,
        "{summary:#}"
    );
    let recap = sb.ok(&[&["recap", "--json"][..], &ALL[..]].concat()).json();
    let found = failed(&recap);
    let mut total = 0;
    for h in harnesses {
        let want: BTreeSet<(String, String, Option<i64>)> =
            expected(&["failed", h, corpus(h).to_str().unwrap()])
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    (
                        h.to_string(),
                        c[0].as_str().unwrap().to_string(),
                        c[1].as_i64(),
                    )
                })
                .collect();
        let got: BTreeSet<_> = found.iter().filter(|c| c.0 == h).cloned().collect();
        println!("{h}: {} failed commands", want.len());
        assert!(!want.is_empty(), "{h}: the corpus has failed commands");
        let mut extra: Vec<_> = got.difference(&want).collect();
        let mut missing: Vec<_> = want.difference(&got).collect();
        // deja stores a command with its secrets redacted.
        extra.retain(|e| {
            match missing
                .iter()
                .position(|m| m.2 == e.2 && redacted_from(&e.1, &m.1))
            {
                Some(i) => {
                    missing.remove(i);
                    false
                }
                None => true,
            }
        });
        assert!(
            extra.is_empty() && missing.is_empty(),
            "{h}: listed but not expected {extra:#?}\nexpected but not listed {missing:#?}"
        );
        total += want.len();
    }
    assert!(recap["totals"]["failed_commands"].as_u64().unwrap() >= total as u64);
}

#[test]
#[ignore = "needs DEJA_SHARED (the shared corpus)"]
fn corpus_recap_counts_each_days_sessions() {
    let sb = corpus_sandbox(&["codex"]);
    sb.index();
    let recap = sb.ok(&[&["recap", "--json"][..], &ALL[..]].concat()).json();
    let got: serde_json::Map<String, Value> = recap["days"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["date"].as_str().unwrap().to_string(),
                d["sessions"].clone(),
            )
        })
        .collect();
    let want = expected(&["days", "codex", corpus("codex").to_str().unwrap()]);
    assert_eq!(Value::Object(got), want);
}

#[test]
#[ignore = "needs DEJA_SHARED (the shared corpus)"]
fn corpus_blame_names_the_sessions_that_edited_a_file() {
    let sb = corpus_sandbox(&["claude"]);
    sb.index();
    let want = expected(&["edited", "claude", corpus("claude").to_str().unwrap()]);
    let path = want["path"].as_str().unwrap();
    let out = sb.ok(&["blame", path, "--json"]).json();
    let got: BTreeSet<&str> = out["edits"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["matched"] == "exact")
        .map(|e| e["session"]["native_id"].as_str().unwrap())
        .collect();
    let want: BTreeSet<&str> = want["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    println!("{path}: {want:?}");
    assert_eq!(got, want, "{out:#}");
}

/// For each file `tests/corpus_commands.py lines HARNESS` makes from the
/// corpus' edits (placed in a project of the same name under HOME, which
/// blame matches as `elsewhere`), `deja blame FILE:LINE --json` names the
/// edit the script's own computation of the rule names, line by line (by
/// its time), or none where the script finds none. Redaction is off: a
/// redacted text is not found in a file that holds the secret.
fn check_line_attribution(harness: &str) {
    let sb = corpus_sandbox(&[harness]);
    // A redacted text no longer matches the file it was written into (the
    // file holds the secret): the script does not redact, so neither does
    // deja here.
    let config = std::fs::read_to_string(sb.config_path()).unwrap();
    sb.config(&format!("[redact]\nenabled = false\n{config}"));
    sb.index();
    let files = expected(&["lines", harness, corpus(harness).to_str().unwrap()]);
    let files = files.as_array().unwrap();
    assert!(!files.is_empty(), "{harness}: no edit kept its text");
    let (mut told, mut checked, mut true_to_replay) = (0, 0, 0);
    for f in files {
        let project = f["project"].as_str().unwrap();
        let inside = f["inside"].as_str().unwrap();
        sb.write(
            &format!("src/{project}/.git/HEAD"),
            "ref: refs/heads/main\n",
        );
        let path = sb.write(
            &format!("src/{project}/{inside}"),
            f["content"].as_str().unwrap(),
        );
        let lines = f["lines"].as_array().unwrap();
        // Every line of a short file, else about 120 spread over it.
        let step = lines.len().div_ceil(120).max(1);
        for (i, want) in lines.iter().enumerate().step_by(step) {
            let n = i + 1;
            let out = sb
                .ok(&["blame", &format!("{}:{n}", path.display()), "--json"])
                .json();
            let got = out["line_edit"]["at"].as_str().map(|at| {
                chrono::DateTime::parse_from_rfc3339(at)
                    .unwrap()
                    .timestamp_millis()
            });
            assert_eq!(
                got,
                want[0].as_i64(),
                "{harness}: {project}/{inside} line {n}: deja says {}, the script {}",
                out["line_edit"],
                want[0]
            );
            checked += 1;
            if got.is_some() {
                told += 1;
                true_to_replay += usize::from(got == want[1].as_i64());
            }
        }
    }
    println!(
        "{harness}: {} files, {checked} lines asked, {told} told, {true_to_replay} of them the edit that truly wrote the line",
        files.len()
    );
    assert!(told > 0, "{harness}: no line could be told");
}

#[test]
#[ignore = "needs DEJA_SHARED (the shared corpus)"]
fn corpus_blame_line_names_the_edit_claude_code_wrote_it_with() {
    check_line_attribution("claude");
}

#[test]
#[ignore = "needs DEJA_SHARED (the shared corpus)"]
fn corpus_blame_line_names_the_patch_codex_wrote_it_with() {
    check_line_attribution("codex");
}

/// Copies `file` of the corpus to `rel` under HOME, indexes it, removes it,
/// writes the session back and returns (the written file, what `deja show`
/// gave before).
fn written_back(sb: &Sandbox, file: &Path, rel: &str) -> (PathBuf, Value) {
    let copy = sb.write(rel, std::fs::read(file).unwrap());
    sb.index();
    let list = sb.ok(&["sessions", "--json"]).json();
    let session = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["parent_id"].is_null())
        .expect("a session")
        .clone();
    let id = session["id"].as_str().unwrap().to_string();
    let before = sb.ok(&["show", &id, "--json"]).json();
    std::fs::remove_file(&copy).unwrap();
    sb.index();
    let planned = sb
        .ok(&["resume", &id, "--write-back", "--dry-run", "--json"])
        .json();
    let path = PathBuf::from(planned["path"].as_str().unwrap());
    sb.ok(&["resume", &id, "--write-back"]);
    assert!(path.is_file(), "{}", path.display());
    (path, before)
}

/// Whether every (role, text) of `written` is in `original`, in order: the
/// text the same as, or inside, an original text of that role.
fn in_order(written: &Value, original: &Value) -> Result<(), String> {
    let original = original.as_array().unwrap();
    let mut at = 0;
    for m in written.as_array().unwrap() {
        let (role, text) = (m[0].as_str().unwrap(), m[1].as_str().unwrap().trim());
        match original
            .iter()
            .skip(at)
            .position(|o| o[0] == role && o[1].as_str().unwrap().contains(text))
        {
            Some(i) => at += i + 1,
            None => {
                return Err(format!(
                    "{role}: {text:?} is not in the original after #{at}"
                ))
            }
        }
    }
    Ok(())
}

fn check_written_back(harness: &str, original: &Path, rel: &str) {
    let sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    let (path, before) = written_back(&sb, original, rel);
    let written = expected(&["messages", harness, path.to_str().unwrap()]);
    let source = expected(&["messages", harness, original.to_str().unwrap()]);
    assert_eq!(
        written.as_array().unwrap().len(),
        before["message_count"].as_u64().unwrap() as usize,
        "{written:#}"
    );
    assert!(!written.as_array().unwrap().is_empty());
    if let Err(e) = in_order(&written, &source) {
        panic!("{}: {e}", path.display());
    }
    // Read again, the written file gives the session deja kept.
    sb.index();
    let id = before["id"].as_str().unwrap();
    let after = sb.ok(&["show", id, "--json"]).json();
    let texts = |v: &Value| -> Vec<(String, String)> {
        v["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["role"].as_str().unwrap().to_string(),
                    m["text"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    assert_eq!(texts(&after), texts(&before));
}

/// Every file below `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// The `*.jsonl` file of the corpus of `harness` that `keep` keeps with the
/// most lines (a real session of some length).
fn longest(harness: &str, keep: impl Fn(&Path) -> bool) -> PathBuf {
    let mut files: Vec<PathBuf> = walk(&corpus(harness))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl") && keep(p))
        .collect();
    files.sort_by_key(|p| {
        let lines = std::fs::read_to_string(p)
            .map(|t| t.lines().count())
            .unwrap_or(0);
        (std::cmp::Reverse(lines), p.clone())
    });
    files.into_iter().next().expect("a transcript")
}

#[test]
#[ignore = "needs DEJA_SHARED (the shared corpus)"]
fn corpus_claude_session_written_back_holds_the_transcripts_messages() {
    let file = longest("claude", |p| {
        let name = p.file_name().unwrap().to_string_lossy();
        !p.to_string_lossy().contains("/subagents/")
            && !name.starts_with("agent-")
            && name.len() == 42
    });
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    let folder = file
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    check_written_back(
        "claude",
        &file,
        &format!(".claude/projects/{folder}/{name}"),
    );
}

#[test]
#[ignore = "needs DEJA_SHARED (the shared corpus)"]
fn corpus_codex_session_written_back_holds_the_transcripts_messages() {
    let file = longest("codex", |p| {
        let name = p.file_name().unwrap().to_string_lossy();
        name.starts_with("rollout-2026")
    });
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    let day = &name["rollout-".len().."rollout-2026-01-01".len()];
    let rel = format!(".codex/sessions/{}/{name}", day.replace('-', "/"));
    check_written_back("codex", &file, &rel);
}

#[test]
fn the_mcp_recap_tool_lists_the_failed_commands() {
    let sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n[mcp]\nindex = false\n");
    claude(&sb);
    codex(&sb);
    sb.index();
    let mut raw = crate::mcp::Raw::start(&sb);
    raw.initialize();
    raw.send(
        &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "recap", "arguments": {"since": "2026-07-01", "until": "2026-08-01"}}})
        .to_string(),
    );
    let answer = raw.receive();
    let (status, stderr) = raw.finish();
    assert!(status.success(), "exit {status:?}\n{stderr}");
    let result = &answer["result"];
    assert_ne!(result["isError"], true, "{result:#}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("4 failed commands"), "{text}");
    assert!(
        text.contains("failed cargo test -p shop · exit 101 · in "),
        "{text}"
    );
    assert!(text.contains("failed make api · exit 2 · in "), "{text}");
    assert!(!text.contains("git status"), "{text}");
    let structured = failed(&result["structuredContent"]);
    let s = |h: &str, c: &str, code: Option<i64>| (h.to_string(), c.to_string(), code);
    assert_eq!(
        structured,
        [
            s("claude", "cargo check", None),
            s("claude", "cargo test -p shop", Some(101)),
            s("codex", "make api", Some(2)),
            s("codex", "pytest -q", Some(1)),
        ]
        .into_iter()
        .collect::<BTreeSet<_>>()
    );
}

/// One GET to `deja ui` at `host`: the status line and the whole answer.
fn http_get(host: &str, path: &str, cookie: Option<&str>) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(host).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .unwrap();
    let cookie = cookie
        .map(|c| format!("Cookie: {c}\r\n"))
        .unwrap_or_default();
    s.write_all(
        format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n{cookie}Connection: close\r\n\r\n")
            .as_bytes(),
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    answer
}

#[test]
fn the_recap_page_lists_the_failed_commands_with_links_to_their_sessions() {
    use std::io::BufRead;
    let sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    claude(&sb);
    sb.index();
    let mut child = sb
        .command()
        .args(["ui", "--no-open"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let (host, code) = line
        .trim()
        .strip_prefix("http://")
        .and_then(|rest| rest.split_once("/?token="))
        .unwrap_or_else(|| panic!("not an address: {line:?}"));
    let login = http_get(host, &format!("/?token={code}"), None);
    let cookie = login
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase().starts_with("set-cookie:").then(|| {
                l["set-cookie:".len()..]
                    .trim()
                    .split(';')
                    .next()
                    .unwrap()
                    .to_string()
            })
        })
        .unwrap_or_else(|| panic!("{login}"));
    let page = http_get(
        host,
        "/recap?since=2026-07-01&until=2026-08-01",
        Some(&cookie),
    );
    let _ = child.kill();
    let _ = child.wait();
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page.contains("2 failed commands"), "{page}");
    assert!(
        page.contains(
            "<td class=\"path\"><code>cargo test -p shop</code></td><td class=\"n\">101</td>"
        ),
        "{page}"
    );
    assert!(
        page.contains("<td class=\"path\"><code>cargo check</code></td><td class=\"n\"></td>"),
        "{page}"
    );
    assert!(page.contains("href=\"/session/"), "{page}");
    assert!(!page.contains("<code>ls -la</code>"), "{page}");
}
