//! `deja blame FILE:LINE`: which edit wrote a line, through the real binary,
//! from what Claude Code's `Write` and `Edit` and Codex CLI's `apply_patch`
//! wrote into a file of the project, against the file as it is today: the
//! newest edit whose text covers the line, a line changed by hand that no
//! edit wrote, and a short text found in several places that cannot tell.

use std::path::Path;

use serde_json::{json, Value};

use crate::common::{Output, Sandbox};

const CLAUDE_WRITE: &str = "0000b1a1-aaaa-4bbb-8ccc-000000000001";
const CODEX_PATCH: &str = "019d8cbb-0000-7000-8000-00000000b1a2";
const CLAUDE_EDIT: &str = "0000b1a1-aaaa-4bbb-8ccc-000000000003";
const CLAUDE_BRACE: &str = "0000b1a1-aaaa-4bbb-8ccc-000000000004";

const FIRST: &str = "// calculator\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";
const PATCH: &str = "*** Begin Patch\n*** Update File: src/calc.rs\n@@\n }\n+\n+pub fn sub(a: i32, b: i32) -> i32 {\n+    a - b\n+}\n*** End Patch\n";
const MUL: &str = "    a - b\n}\n\npub fn mul(a: i32, b: i32) -> i32 {\n    a * b\n}\n";
/// The file today: the three edits, then a line added by hand.
const TODAY: &str = "// calculator\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\npub fn sub(a: i32, b: i32) -> i32 {\n    a - b\n}\n\npub fn mul(a: i32, b: i32) -> i32 {\n    a * b\n}\n// tuned by hand\n";

/// A Claude Code session of `id` on `day` in `cwd`: a request, then a reply
/// calling `tool` with `input`.
#[allow(clippy::too_many_arguments)]
fn claude(
    sb: &Sandbox,
    id: &str,
    day: u32,
    cwd: &str,
    ask: &str,
    reply: &str,
    tool: &str,
    input: Value,
) {
    let at = |s: u32| format!("2026-07-{day:02}T09:00:{s:02}.000Z");
    let lines = [
        json!({"parentUuid": null, "isSidechain": false, "userType": "external", "cwd": cwd,
            "sessionId": id, "version": "2.1.97", "type": "user",
            "message": {"role": "user", "content": ask}, "uuid": format!("u-{id}"), "timestamp": at(1)}),
        json!({"parentUuid": format!("u-{id}"), "isSidechain": false, "userType": "external", "cwd": cwd,
            "sessionId": id, "version": "2.1.97", "type": "assistant",
            "message": {"model": "claude-sonnet-4-6", "id": format!("msg-{id}"), "type": "message", "role": "assistant",
                "content": [{"type": "text", "text": reply},
                            {"type": "tool_use", "id": format!("t-{id}"), "name": tool, "input": input}],
                "stop_reason": null},
            "uuid": format!("a-{id}"), "timestamp": at(2)}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let folder = cwd.replace(|c: char| !c.is_ascii_alphanumeric(), "-");
    sb.write(&format!(".claude/projects/{folder}/{id}.jsonl"), text);
}

/// A Codex CLI session in `cwd` on 2026-07-12 applying [`PATCH`].
fn codex(sb: &Sandbox, cwd: &str) {
    let at = |s: u32| format!("2026-07-12T10:00:{s:02}.000Z");
    let item = |s: u32, payload: Value| json!({"timestamp": at(s), "type": "response_item", "payload": payload});
    let lines = [
        json!({"timestamp": at(0), "type": "session_meta", "payload":
            {"id": CODEX_PATCH, "timestamp": at(0), "cwd": cwd, "originator": "codex_cli_rs", "cli_version": "0.50.0"}}),
        item(
            1,
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "add a sub function"}]}),
        ),
        item(
            2,
            json!({"type": "custom_tool_call", "status": "completed", "call_id": "p1", "name": "apply_patch", "input": PATCH}),
        ),
        item(
            3,
            json!({"type": "custom_tool_call_output", "call_id": "p1", "output": "{\"output\":\"Success.\"}"}),
        ),
        item(
            4,
            json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Added sub."}]}),
        ),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    sb.write(
        &format!(".codex/sessions/2026/07/12/rollout-2026-07-12T10-00-00-{CODEX_PATCH}.jsonl"),
        text,
    );
}

/// The project `src/app` with `src/calc.rs` as it is [`TODAY`], and the
/// sessions that wrote it: Claude Code wrote it whole, Codex CLI patched in
/// `sub`, Claude Code edited in `mul`; then a line was added by hand.
fn project(brace: bool) -> Sandbox {
    let sb = Sandbox::new();
    sb.write("src/app/.git/HEAD", "ref: refs/heads/main\n");
    sb.write("src/app/src/calc.rs", TODAY);
    let app = sb.home.join("src/app");
    let app = app.to_str().unwrap();
    claude(
        &sb,
        CLAUDE_WRITE,
        10,
        app,
        "start a calculator",
        "Writing the calculator.",
        "Write",
        json!({"file_path": format!("{app}/src/calc.rs"), "content": FIRST}),
    );
    codex(&sb, app);
    claude(
        &sb,
        CLAUDE_EDIT,
        14,
        app,
        "and multiplication",
        "Adding mul after sub.",
        "Edit",
        json!({"file_path": "src/calc.rs", "old_string": "    a - b\n}\n", "new_string": MUL}),
    );
    if brace {
        claude(
            &sb,
            CLAUDE_BRACE,
            16,
            app,
            "close the brace",
            "Closing it.",
            "Edit",
            json!({"file_path": "src/calc.rs", "old_string": "}}", "new_string": "}"}),
        );
    }
    sb.ok(&["index"]);
    sb
}

fn blame(sb: &Sandbox, dir: &Path, args: &[&str]) -> Output {
    let out = sb
        .command()
        .current_dir(dir)
        .arg("blame")
        .args(args)
        .output()
        .unwrap();
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The session of the edit that wrote `line`, by `--json`.
fn writer(sb: &Sandbox, dir: &Path, line: usize) -> Value {
    let out = blame(sb, dir, &[&format!("src/calc.rs:{line}"), "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    out.json()
}

#[test]
fn the_newest_edit_whose_text_covers_a_line_wrote_it() {
    let sb = project(false);
    let app = sb.home.join("src/app");
    // Written whole by Claude Code, and untouched since.
    let v = writer(&sb, &app, 2);
    assert_eq!(v["line_edit"]["session"]["id"], CLAUDE_WRITE, "{v:#}");
    assert_eq!(
        v["line_edit"]["show"],
        format!("deja show {CLAUDE_WRITE}#1")
    );
    assert!(v["line_note"].is_null(), "{v:#}");
    // Patched in by Codex CLI (the message before the call: the request).
    let v = writer(&sb, &app, 6);
    assert_eq!(v["line_edit"]["session"]["id"], CODEX_PATCH, "{v:#}");
    assert_eq!(v["line_edit"]["message"]["index"], 0, "{v:#}");
    assert_eq!(v["line_edit"]["message"]["snippet"], "add a sub function");
    // Line 7 is in both Codex's patch and Claude's later edit: the newer.
    let v = writer(&sb, &app, 7);
    assert_eq!(v["line_edit"]["session"]["id"], CLAUDE_EDIT, "{v:#}");
    let v = writer(&sb, &app, 11);
    assert_eq!(v["line_edit"]["session"]["id"], CLAUDE_EDIT, "{v:#}");
    let edits = v["edits"].as_array().unwrap();
    let by: Vec<(&str, bool, &str)> = edits
        .iter()
        .map(|e| {
            (
                e["session"]["id"].as_str().unwrap(),
                e["covers_line"].as_bool().unwrap(),
                e["text_match"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        by,
        [
            (CLAUDE_EDIT, true, "located"),
            (CODEX_PATCH, false, "located"),
            (CLAUDE_WRITE, false, "located"),
        ]
    );

    // The text: the sentence names the session, the message and `deja show`.
    let out = blame(&sb, &app, &["src/calc.rs:6"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let first = out.stdout.lines().next().unwrap();
    assert!(
        first.contains(&format!("in session {CODEX_PATCH}, message #0")),
        "{}",
        out.stdout
    );
    assert!(
        first.contains(&format!("deja show {CODEX_PATCH}#0")),
        "{}",
        out.stdout
    );
    assert!(first.ends_with("wrote line 6"), "{}", out.stdout);
    assert!(
        out.stdout.contains("its text covers line 6"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("its text is in the file, not at line 6"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_line_changed_by_hand_cannot_be_told_nor_an_ambiguous_one() {
    let sb = project(true);
    let app = sb.home.join("src/app");
    let out = blame(&sb, &app, &["src/calc.rs:13"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains(
            "which edit wrote line 13 cannot be told: no edit's text is at line 13 today (it was changed after them, or by hand)"
        ),
        "{}",
        out.stdout
    );
    let v = writer(&sb, &app, 13);
    assert!(v["line_edit"].is_null(), "{v:#}");
    assert!(
        v["line_note"].as_str().unwrap().contains("by hand"),
        "{v:#}"
    );
    // `}` is on lines 4, 8 and 12: the newest edit wrote one of them, which
    // cannot be told, and the older edits are not named instead.
    let v = writer(&sb, &app, 4);
    assert!(v["line_edit"].is_null(), "{v:#}");
    let note = v["line_note"].as_str().unwrap();
    assert!(
        note.contains("is in several places of the file, line 4 among them"),
        "{note}"
    );
    assert!(note.contains(CLAUDE_BRACE), "{note}");
    assert_eq!(v["edits"][0]["text_match"], "ambiguous");
    // A line no short text is at still has its writer.
    assert_eq!(
        writer(&sb, &app, 3)["line_edit"]["session"]["id"],
        CLAUDE_WRITE
    );

    // The MCP tool answers the same.
    let mut raw = crate::mcp::Raw::start(&sb);
    raw.initialize();
    let file = app.join("src/calc.rs");
    raw.send(
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "blame", "arguments": {"file": format!("{}:11", file.display())}}})
        .to_string(),
    );
    let answer = raw.receive();
    let (status, stderr) = raw.finish();
    assert!(status.success(), "exit {status:?}\n{stderr}");
    let result = &answer["result"];
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains(&format!("in session {CLAUDE_EDIT}, message #1")),
        "{text}"
    );
    assert!(text.contains("wrote line 11"), "{text}");
    assert_eq!(
        result["structuredContent"]["line_edit"]["session"]["id"], CLAUDE_EDIT,
        "{result:#}"
    );

    // The file gone: nothing can be told, every edit is still listed.
    std::fs::remove_file(&file).unwrap();
    let v = writer(&sb, &app, 2);
    assert!(v["line_edit"].is_null());
    assert!(
        v["line_note"]
            .as_str()
            .unwrap()
            .contains("is not there today"),
        "{v:#}"
    );
    assert_eq!(v["edits"].as_array().unwrap().len(), 4);
}

#[test]
fn a_plugin_built_for_abi_one_two_loads_and_its_edits_keep_no_text() {
    let sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    crate::common::install_plugin(
        &crate::common::test_plugins()
            .join(crate::common::lib_name("deja_plugin_test_abi_one_two")),
        &sb.plugin_dir(),
    );
    let list = sb.ok(&["plugins", "--json"]).json();
    let entry = list["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["harness"] == "onetwo")
        .unwrap_or_else(|| panic!("{list:#}"));
    assert_eq!(entry["status"], "loaded", "{entry:#}");
    assert_eq!(entry["abi"], "1.2", "{entry:#}");
    let file = sb.write("proj/x.rs", "fn x() {}\n");
    sb.write(
        "notes/chat.onetwo",
        format!(
            "user: write x\nassistant: written\nedit {}\n",
            file.display()
        ),
    );
    sb.ok(&["index"]);
    let v = blame(&sb, &sb.home, &[&format!("{}:1", file.display()), "--json"]).json();
    assert_eq!(v["edits"].as_array().unwrap().len(), 1, "{v:#}");
    assert_eq!(v["edits"][0]["text_match"], "no-text", "{v:#}");
    assert!(v["line_edit"].is_null(), "{v:#}");
    assert!(
        v["line_note"]
            .as_str()
            .unwrap()
            .contains("none of the edits kept the text it wrote"),
        "{v:#}"
    );
}

/// One GET of `path` from the page at `host`, with the session `cookie`.
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
fn the_file_page_says_which_edit_wrote_a_line() {
    use std::io::BufRead;
    let sb = project(false);
    let file = sb.home.join("src/app/src/calc.rs");
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
    let page = |n: &str| {
        http_get(
            host,
            &format!("/file?path={}&line={n}", file.display()),
            Some(&cookie),
        )
    };
    let (six, thirteen, bad) = (page("6"), page("13"), page("x"));
    let _ = child.kill();
    let _ = child.wait();
    assert!(six.starts_with("HTTP/1.1 200"), "{six}");
    assert!(
        six.contains(&format!("in session {CODEX_PATCH}, message #0")),
        "{six}"
    );
    assert!(six.contains("wrote line 6"), "{six}");
    assert!(six.contains("wrote it"), "{six}");
    assert!(thirteen.starts_with("HTTP/1.1 200"), "{thirteen}");
    assert!(
        thirteen.contains("which edit wrote line 13 cannot be told"),
        "{thirteen}"
    );
    assert!(!bad.starts_with("HTTP/1.1 200"), "{bad}");
    assert!(bad.contains("the line must be a number from 1"), "{bad}");
}
