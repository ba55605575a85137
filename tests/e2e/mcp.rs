//! `deja mcp` driven by clients: the official MCP Python SDK (an independent
//! implementation, installed by `scripts/fetch-clients`) over the demo
//! fixtures with the real model, and raw JSON-RPC for what a well-behaved
//! client never sends (malformed lines, a disconnect in the middle of a call).

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{deja_bin, fixtures, repo, Sandbox};

/// The client tools' folder (see `scripts/fetch-clients`).
pub fn clients_dir() -> PathBuf {
    std::env::var_os("DEJA_CLIENTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache")
                });
            cache.join("deja/clients")
        })
}

/// The Python of the clients' virtual environment; panics with the fix when
/// it is missing (these tests never pass without the real client).
fn client_python() -> PathBuf {
    let python = clients_dir().join("venv/bin/python");
    assert!(
        python.is_file(),
        "the MCP Python SDK is not installed in {}; run scripts/fetch-clients first",
        clients_dir().display()
    );
    python
}

/// The demo fixtures, indexed with the real model, background indexing of
/// the server off (the store is ready), answers bounded at 1 KB.
fn demo_sandbox() -> Sandbox {
    let mut sb = Sandbox::new();
    sb.config_with_model("[mcp]\nmax_answer_bytes = 1024\nindex = false\n");
    sb.env("DEJA_AIDER_ROOTS", fixtures().join("demo/aider"));
    sb.env("DEJA_GEMINI_ROOT", fixtures().join("demo/gemini"));
    sb.ok(&["index"]);
    sb
}

#[test]
fn the_python_sdk_recalls_pages_and_gets_clear_errors() {
    let python = client_python();
    let sb = demo_sandbox();
    let mut cmd = sb.command();
    cmd.env_remove("NO_COLOR");
    let out = Command::new(python)
        .arg(repo().join("tests/clients/mcp_client.py"))
        .arg(deja_bin())
        .envs(
            cmd.get_envs()
                .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_owned()))),
        )
        .current_dir(&sb.home)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        out.status.success() && stdout.contains(" passed, 0 failed"),
        "the Python client failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
}

/// A server child speaking raw JSON-RPC lines.
/// A raw JSON-RPC client of `deja mcp`.
pub(crate) struct Raw {
    child: std::process::Child,
    out: BufReader<std::process::ChildStdout>,
}

impl Raw {
    /// `deja mcp --structured`: answers carry their structured content too.
    pub(crate) fn start(sb: &Sandbox) -> Raw {
        Raw::start_with(sb, &["mcp", "--structured"])
    }

    /// `deja ARGS` (an MCP server command line).
    pub(crate) fn start_with(sb: &Sandbox, args: &[&str]) -> Raw {
        let mut child = sb
            .command()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        Raw { child, out }
    }

    pub(crate) fn send(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The next line the server writes, as JSON (every stdout line must be).
    pub(crate) fn receive(&mut self) -> serde_json::Value {
        let mut line = String::new();
        self.out.read_line(&mut line).unwrap();
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON-RPC ({e}): {line:?}"))
    }

    pub(crate) fn initialize(&mut self) {
        self.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#);
        let init = self.receive();
        assert_eq!(init["id"], 1, "{init}");
        assert_eq!(init["result"]["serverInfo"]["name"], "deja", "{init}");
        assert_eq!(
            init["result"]["protocolVersion"], "2025-06-18",
            "negotiated down: {init}"
        );
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }

    /// Closes stdin and waits (bounded) for the exit status.
    pub(crate) fn finish(mut self) -> (std::process::ExitStatus, String) {
        drop(self.child.stdin.take());
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let mut err = String::new();
                std::io::Read::read_to_string(self.child.stderr.as_mut().unwrap(), &mut err)
                    .unwrap();
                return (status, err);
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the server did not exit after stdin closed"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[test]
fn raw_json_rpc_errors_and_disconnects_never_crash_or_corrupt() {
    let sb = demo_sandbox();
    let before = sb.dump();

    // An unknown method gets a JSON-RPC error, and the server goes on.
    let mut raw = Raw::start(&sb);
    raw.initialize();
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"no/such/method","params":{}}"#);
    let err = raw.receive();
    assert_eq!(err["id"], 2, "{err}");
    assert!(err["error"]["code"].is_i64(), "{err}");
    raw.send(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope","arguments":{}}}"#,
    );
    let err = raw.receive();
    assert_eq!(err["id"], 3, "{err}");
    assert_eq!(err["error"]["code"], -32602, "{err}");
    raw.send(r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#);
    let list = raw.receive();
    assert_eq!(
        list["result"]["tools"].as_array().unwrap().len(),
        5,
        "{list}"
    );
    let (status, stderr) = raw.finish();
    assert!(status.success(), "exit {status:?}\n{stderr}");

    // A line that is not JSON: an error answer or a clean exit, never a crash.
    let mut raw = Raw::start(&sb);
    raw.initialize();
    raw.send("this is not json {");
    let (status, stderr) = raw.finish();
    assert!(
        status.code().is_some(),
        "killed by a signal: {status:?}\n{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");

    // A client that disconnects in the middle of a call.
    let mut raw = Raw::start(&sb);
    raw.initialize();
    raw.send(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"recall","arguments":{"query":"tenant predicate"}}}"#);
    let (status, stderr) = raw.finish();
    assert!(
        status.code().is_some(),
        "killed by a signal: {status:?}\n{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");

    assert_eq!(before, sb.dump(), "the store changed");
    let doctor = sb.run(&["doctor", "--json"]);
    assert!(!doctor.stdout.contains("\"corrupt"), "{}", doctor.stdout);
}

#[test]
fn a_model_switched_on_in_the_config_reaches_a_running_server_after_its_next_index() {
    let mut sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n[mcp]\nindex_interval_secs = 1\n");
    let gemini = sb.home.join(".gemini");
    crate::common::gemini_session(
        &gemini,
        &"0".repeat(64),
        "2c3d4e5f-7342-4d89-826c-b78fc1922f6c",
        0,
        2,
        "tenant predicate",
    );
    sb.env("GEMINI_CLI_HOME", sb.home.clone());
    sb.ok(&["index"]);
    let mut raw = Raw::start(&sb);
    raw.initialize();
    let mut id = 10;
    let mut recall = |raw: &mut Raw| {
        id += 1;
        raw.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "recall", "arguments": {"query": "tenant predicate"}}})
            .to_string(),
        );
        loop {
            let answer = raw.receive();
            if answer["id"] == id {
                return answer["result"]["structuredContent"]["mode"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
            }
        }
    };
    assert_eq!(recall(&mut raw), "lexical");
    // The model is switched on while the server runs.
    let (model, runtime) = crate::common::installed_model();
    sb.config(&format!(
        "[embed]\nmodel_dir = {:?}\nruntime = {:?}\n[mcp]\nindex_interval_secs = 1\n",
        model.to_str().unwrap(),
        runtime.to_str().unwrap()
    ));
    let started = Instant::now();
    let mut mode = String::new();
    while started.elapsed() < Duration::from_secs(120) {
        mode = recall(&mut raw);
        if mode == "hybrid" {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    assert_eq!(
        mode, "hybrid",
        "the server kept the settings it started with"
    );
    let (status, stderr) = raw.finish();
    assert!(status.success(), "{stderr}");
}

/// `recall` through a raw server started with `args`: the call's result.
fn recall_through(sb: &Sandbox, args: &[&str], query: &str) -> serde_json::Value {
    let mut raw = Raw::start_with(sb, args);
    raw.initialize();
    let call = serde_json::json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "recall", "arguments": {"query": query}},
    });
    raw.send(&call.to_string());
    let answer = raw.receive();
    let (status, stderr) = raw.finish();
    assert!(status.success(), "exit {status:?}\n{stderr}");
    answer["result"].clone()
}

#[test]
fn agents_get_the_framed_text_only_and_never_their_own_live_session() {
    let mut sb = demo_sandbox();
    let query = "tenant predicate bug";
    // By default: the framed text, no structured content to hand the model
    // outside the frame; `--structured` adds it.
    let plain = recall_through(&sb, &["mcp"], query);
    assert!(plain.get("structuredContent").is_none(), "{plain:#}");
    let text = plain["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("<recalled-memory"), "{text}");
    let structured = recall_through(&sb, &["mcp", "--structured"], query);
    let hits = structured["structuredContent"]["hits"].as_array().unwrap();
    let top = hits[0]["session_id"].as_str().unwrap().to_string();
    assert!(text.contains(&top), "{text}");
    // The agent that asks names its session: that session is never a hit.
    sb.env("CLAUDE_CODE_SESSION_ID", &top);
    let own = recall_through(&sb, &["mcp", "--structured"], query);
    let hits = own["structuredContent"]["hits"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        hits.iter().all(|h| h["session_id"] != top.as_str()),
        "the asking session {top} came back: {own:#}"
    );
}

#[test]
fn a_warm_server_answers_exactly_as_a_one_shot_recall() {
    // The server keeps its model loaded, so from its first call on the
    // session evidence is gathered on a second connection beside the
    // messages' ranking; a one-shot `deja recall` gathers it in line. Both
    // must give the same hits, in the same order, with the same scores.
    let mut sb = Sandbox::new();
    sb.config_with_model("[mcp]\nmax_answer_bytes = 65536\nindex = false\n");
    sb.env("DEJA_AIDER_ROOTS", fixtures().join("demo/aider"));
    sb.env("DEJA_GEMINI_ROOT", fixtures().join("demo/gemini"));
    sb.env("DEJA_CLAUDE_ROOT", fixtures().join("demo/claude"));
    sb.env("DEJA_CODEX_ROOT", fixtures().join("demo/codex"));
    sb.ok(&["index"]);
    let queries = [
        "that tenant predicate bug",
        "the chart redraws and burns processor time",
        "how did we make the retry wait longer each time",
    ];
    let key = |h: &serde_json::Value| {
        (
            h["session_id"].as_str().unwrap().to_string(),
            h["message_index"].as_i64().unwrap(),
            h["score"].as_f64().unwrap(),
        )
    };
    let mut raw = Raw::start_with(&sb, &["mcp", "--structured"]);
    raw.initialize();
    for (i, query) in queries.iter().enumerate() {
        // Twice each: the second call certainly finds the model loaded.
        for round in 0..2 {
            let id = 100 + 2 * i + round;
            raw.send(
                &serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "recall", "arguments": {"query": query, "limit": 8, "per_session": 2}}})
                .to_string(),
            );
            let answer = loop {
                let a = raw.receive();
                if a["id"] == id {
                    break a;
                }
            };
            let served: Vec<_> = answer["result"]["structuredContent"]["hits"]
                .as_array()
                .unwrap()
                .iter()
                .map(key)
                .collect();
            let cli = sb
                .ok(&["recall", "--json", "-n", "8", "--per-session", "2", query])
                .json();
            let alone: Vec<_> = cli["hits"].as_array().unwrap().iter().map(key).collect();
            assert!(!alone.is_empty(), "`{query}`");
            assert_eq!(
                served.len(),
                alone.len(),
                "`{query}`: {served:?} vs {alone:?}"
            );
            for (a, b) in served.iter().zip(&alone) {
                assert_eq!(
                    (&a.0, a.1),
                    (&b.0, b.1),
                    "`{query}`: {served:?} vs {alone:?}"
                );
                assert!((a.2 - b.2).abs() < 1e-6, "`{query}`: {a:?} vs {b:?}");
            }
        }
    }
    let (status, stderr) = raw.finish();
    assert!(status.success(), "{stderr}");
}
