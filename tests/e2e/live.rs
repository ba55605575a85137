//! The agent's live session is never memory: a session an agent's
//! SessionStart hook names (on startup, resume, `/clear` or compaction) is
//! left out of that hook's digest, and deja's MCP server started by the same
//! agent never recalls it nor shows it through `session`, whichever id leads
//! there; a session begun in the server's folder after it started is left
//! out too, whether the folder is named by its resolved path or through a
//! symbolic link. Here the test process plays the agent: it runs the hook
//! and the server as its own children, as the agents do.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::common::{fixtures, Sandbox};

/// The demo's aider and Gemini CLI sessions, indexed without embeddings
/// (lexical recall and the digest need none).
fn demo() -> Sandbox {
    let mut sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n[mcp]\nindex = false\n");
    sb.env("DEJA_AIDER_ROOTS", fixtures().join("demo/aider"));
    sb.env("DEJA_GEMINI_ROOT", fixtures().join("demo/gemini"));
    sb.ok(&["index"]);
    sb
}

/// Runs the SessionStart hook of `agent` with `input`: its JSON answer.
fn session_start(sb: &Sandbox, agent: &str, input: &Value) -> Value {
    let mut child = sb
        .command()
        .args(["context", "--hook", agent])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the hook failed");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Starts `deja mcp --structured` as `cmd` (a command of the sandbox),
/// makes each tool call of `calls` (name, arguments) in turn, and gives
/// each call's result.
fn tool_calls(mut cmd: Command, calls: &[(&str, Value)]) -> Vec<Value> {
    let mut child = cmd
        .args(["mcp", "--structured"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut send = |v: Value| {
        stdin.write_all(format!("{v}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    };
    let mut receive = |id: i64| loop {
        let mut line = String::new();
        assert!(out.read_line(&mut line).unwrap() > 0, "the server closed");
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["id"] == id {
            return v;
        }
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "live", "version": "0"}}}),
    );
    receive(1);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut results = Vec::new();
    for (i, (name, arguments)) in calls.iter().enumerate() {
        let id = 10 + i as i64;
        send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}));
        results.push(receive(id)["result"].clone());
    }
    drop(stdin);
    let _ = child.wait();
    results
}

/// The session ids of a `recall` result's hits.
fn hit_sessions(result: &Value) -> Vec<String> {
    result["structuredContent"]["hits"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|h| h["session_id"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn a_session_its_agent_names_at_session_start_is_never_recalled_shown_or_digested() {
    let sb = demo();
    let query = "tenant predicate bug";
    let before = tool_calls(sb.command(), &[("recall", json!({"query": query}))]);
    let hits = before[0]["structuredContent"]["hits"].as_array().unwrap();
    let live = hits[0]["session_id"].as_str().unwrap().to_string();
    let message = hits[0]["message_id"].as_str().unwrap().to_string();
    let project = hits[0]["project"]["dir"].as_str().unwrap().to_string();

    // The agent resumes that session: its SessionStart hook names it. The
    // digest of its project lists the project's sessions, never that one.
    let start = json!({"session_id": live, "cwd": project,
        "hook_event_name": "SessionStart", "source": "resume"});
    let answer = session_start(&sb, "claude", &start);
    let digest = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(digest.contains("(from deja)"), "{digest}");
    assert!(
        !digest.contains(&live),
        "the digest lists {live}:\n{digest}"
    );
    let listed = sb.ok(&["context", "--project", &project]).stdout;
    assert!(listed.contains(&live), "{listed}");

    // The same agent's server: neither recall nor `session` answers with it.
    let after = tool_calls(
        sb.command(),
        &[
            ("recall", json!({"query": query})),
            ("session", json!({"id": live})),
            ("session", json!({"id": message})),
        ],
    );
    let recalled = hit_sessions(&after[0]);
    assert!(
        !recalled.contains(&live),
        "{live} was recalled: {recalled:?}"
    );
    for shown in &after[1..] {
        assert_eq!(shown["isError"], true, "{shown:#}");
        let text = shown["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("own session"), "{text}");
    }

    // The server of another agent (here a Python process between) is not
    // told to leave it out.
    let mut other = sb.command_of(Path::new("python3"));
    other.args([
        "-c",
        "import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:]))",
        crate::common::deja_bin().to_str().unwrap(),
    ]);
    let theirs = tool_calls(other, &[("recall", json!({"query": query}))]);
    assert!(hit_sessions(&theirs[0]).contains(&live), "{:#}", theirs[0]);
}

/// A Claude Code session of the demo, moved to `dir` and to a later date
/// (so that it begins after any server of this test started).
fn later_session_in(sb: &Sandbox, dir: &Path) {
    let from = fixtures().join("demo/claude/projects/-home-dev-partner-importer");
    let to = sb.home.join("claude/projects/moved");
    std::fs::create_dir_all(&to).unwrap();
    for e in std::fs::read_dir(&from).unwrap() {
        let e = e.unwrap();
        let text = std::fs::read_to_string(e.path())
            .unwrap()
            .replace("/home/dev/partner-importer", dir.to_str().unwrap())
            .replace("2026-05-12T", "2099-05-12T");
        std::fs::write(to.join(e.file_name()), text).unwrap();
    }
}

#[test]
fn a_session_begun_in_the_servers_folder_is_left_out_through_a_symbolic_link_too() {
    let mut sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n[mcp]\nindex = false\n");
    let real = sb.home.join("code/importer");
    std::fs::create_dir_all(&real).unwrap();
    let link = sb.home.join("importer");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    // The agent records the folder as its shell names it: through the link.
    later_session_in(&sb, &link);
    sb.env("DEJA_CLAUDE_ROOT", sb.home.join("claude"));
    sb.ok(&["index"]);
    let query = "partner importer pods OOMKilled leak";
    let found = sb.ok(&["recall", query, "--json"]).json();
    let session = found["hits"][0]["session_id"].as_str().unwrap().to_string();
    assert_eq!(found["hits"][0]["project"]["dir"], link.to_str().unwrap());

    // A server started in that folder, as an agent starts it there.
    let mut cmd = sb.command();
    cmd.current_dir(&link).env("PWD", &link);
    let answer = tool_calls(cmd, &[("recall", json!({"query": query}))]);
    let recalled = hit_sessions(&answer[0]);
    assert!(
        !recalled.contains(&session),
        "the session begun in the server's folder came back: {:#}",
        answer[0]
    );
}
