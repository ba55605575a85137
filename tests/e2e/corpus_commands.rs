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
//! what `tests/corpus_commands.py` computes from the raw files alone.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::{json, Value};

use crate::common::{install_plugin, lib_name, test_plugins, Sandbox};

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
        item(s, json!({"type": "function_call", "name": name, "call_id": n,
                       "arguments": args.to_string()}))
    };
    let output = |s: u32, n: &str, text: &str| {
        item(s, json!({"type": "function_call_output", "call_id": n, "output": text}))
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
        &format!(".gemini/tmp/web/chats/session-2026-07-12T11-00-{}.jsonl", &id[..8]),
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
    let response = |n: &str, output: &str| {
        json!([{"functionResponse": {"id": n, "name": "run_shell_command", "response": {"output": output}}}])
    };
    let mut r1 = rec("q3", Some("q2"), "tool_result", response("k1", "Command: make build\nDirectory: (root)\nOutput: error\nError: (none)\nExit Code: 2\nSignal: (none)"));
    r1["toolCallResult"] = json!({"callId": "k1", "status": "success"});
    let mut r2 = rec("q4", Some("q3"), "tool_result", response("k2", "Command: pwd\nOutput: /\nError: (none)\nExit Code: 0\nSignal: (none)"));
    r2["toolCallResult"] = json!({"callId": "k2", "status": "success"});
    let lines = vec![
        rec("q1", None, "user", json!([{"text": "build the cli"}])),
        rec("q2", Some("q1"), "assistant", json!([
            {"text": "Building."},
            {"functionCall": {"id": "k1", "name": "run_shell_command", "args": {"command": "make build"}}},
            {"functionCall": {"id": "k2", "name": "run_shell_command", "args": {"command": "pwd"}}}])),
        r1,
        r2,
    ];
    let folder = cwd.replace(|c: char| !c.is_ascii_alphanumeric(), "-");
    jsonl(sb, &format!(".qwen/projects/{folder}/chats/{id}.jsonl"), &lines);
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
    assert!(!text.contains("ls -la") && !text.contains("echo done"), "{text}");
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
    assert_eq!(out["sessions"][0]["commands"][0]["command"], "make", "{out:#}");
}
