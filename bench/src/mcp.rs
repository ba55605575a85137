//! Recall through the MCP server as an agent sees it: `deja mcp` started
//! once over a store, driven over stdio by a JSON-RPC client (the handshake,
//! then `tools/call recall` per query), each call timed from request to
//! response, protocol included; the server's peak memory from the kernel.
//! And the Gemini CLI SessionStart hook (`deja context --hook gemini`), a
//! cold process per session start, timed end to end.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdout, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use crate::env::{percentiles, BenchEnv};
use crate::queries::QUERIES;

/// A running `deja mcp` and its stdout.
struct Server {
    child: Child,
    out: BufReader<ChildStdout>,
    next_id: u64,
}

impl Server {
    fn start(env: &BenchEnv) -> Result<Server> {
        let mut child = env
            .command()
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start deja mcp")?;
        let out = BufReader::new(child.stdout.take().context("no stdout")?);
        let mut s = Server {
            child,
            out,
            next_id: 1,
        };
        s.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "deja-bench", "version": "0"}}),
        )?;
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(s)
    }

    fn send(&mut self, v: &Value) -> Result<()> {
        let stdin = self.child.stdin.as_mut().context("no stdin")?;
        writeln!(stdin, "{v}")?;
        stdin.flush()?;
        Ok(())
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        loop {
            let mut line = String::new();
            if self.out.read_line(&mut line)? == 0 {
                bail!("deja mcp closed its output");
            }
            let v: Value = serde_json::from_str(&line).context("a line that is not JSON-RPC")?;
            if v["id"] == id {
                if v.get("error").is_some() {
                    bail!("{method} failed: {}", v["error"]);
                }
                return Ok(v["result"].clone());
            }
        }
    }

    /// The server's peak resident memory, bytes (Linux).
    fn peak_rss(&self) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("VmHWM:"))
                    .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            })
            .map_or(0, |kb| kb * 1024)
    }

    fn stop(mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// `recall` through the server, `rounds` times over [`QUERIES`] after one
/// warm-up round: (p50 ms, p95 ms, server peak RSS bytes). Background
/// indexing should be off in `env`'s config (`mcp.index = false`).
pub fn server_latency(env: &BenchEnv, rounds: usize) -> Result<(f64, f64, u64)> {
    let mut server = Server::start(env)?;
    let mut times = Vec::new();
    for round in 0..=rounds {
        for q in QUERIES {
            let started = Instant::now();
            let result = server.request(
                "tools/call",
                json!({"name": "recall", "arguments": {"query": q, "limit": 10}}),
            )?;
            if result["isError"] == true {
                bail!("recall `{q}` failed: {result}");
            }
            if round > 0 {
                times.push(started.elapsed().as_secs_f64() * 1000.0);
            }
        }
    }
    let rss = server.peak_rss();
    server.stop();
    let (p50, p95) = percentiles(times);
    Ok((p50, p95, rss))
}

/// One cold hook process: `deja ARGS` with `input` on stdin; its time (ms)
/// and its JSON answer.
fn cold_hook(env: &BenchEnv, args: &[&str], input: &Value) -> Result<(f64, Value)> {
    let started = Instant::now();
    let mut child = env
        .command()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    child
        .stdin
        .take()
        .context("no stdin")?
        .write_all(input.to_string().as_bytes())?;
    let out = child.wait_with_output()?;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let v: Value = serde_json::from_slice(&out.stdout).context("the hook's answer is not JSON")?;
    Ok((ms, v))
}

/// Cold `deja context --hook gemini` processes for the project of the
/// store's newest session, its directory given on stdin as Gemini CLI does:
/// (p50 ms, p95 ms).
pub fn hook_latency(env: &BenchEnv, project_dir: &str, runs: usize) -> Result<(f64, f64)> {
    let input = json!({
        "session_id": "bench",
        "transcript_path": "/dev/null",
        "cwd": project_dir,
        "hook_event_name": "SessionStart",
        "timestamp": "2026-12-01T00:00:00Z",
        "source": "startup",
    });
    let mut times = Vec::new();
    for _ in 0..runs {
        let (ms, v) = cold_hook(env, &["context", "--hook", "gemini"], &input)?;
        times.push(ms);
        if v["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .is_none_or(|t| !t.contains("recalled-memory"))
        {
            bail!("the hook gave no digest for `{project_dir}`: {v}");
        }
    }
    Ok(percentiles(times))
}

/// Cold `deja context --hook claude --on tool-failure` processes, each as a
/// new session whose command failed with `error`: (p50 ms, p95 ms, whether
/// a note came back).
pub fn failure_hook_latency(env: &BenchEnv, error: &str, runs: usize) -> Result<(f64, f64, bool)> {
    let mut times = Vec::new();
    let mut noted = false;
    for i in 0..runs {
        let input = json!({
            "session_id": format!("bench-failure-{i}"),
            "transcript_path": "/dev/null",
            "cwd": "/tmp",
            "hook_event_name": "PostToolUseFailure",
            "tool_name": "Bash",
            "tool_input": {"command": "make test"},
            "error": error,
        });
        let (ms, v) = cold_hook(
            env,
            &["context", "--hook", "claude", "--on", "tool-failure"],
            &input,
        )?;
        times.push(ms);
        noted |= v["hookSpecificOutput"]["additionalContext"].is_string();
    }
    let (p50, p95) = percentiles(times);
    Ok((p50, p95, noted))
}

/// A project directory of the store (the hook's `cwd`).
pub fn project_dir(store: &deja_store::Store) -> Result<String> {
    store
        .sessions(&deja_store::SessionFilter::default(), None)?
        .into_iter()
        .find_map(|r| r.project.dir)
        .context("the store has no session with a project directory")
}

/// Both measurements on an existing HOME, as a Markdown table.
pub fn measure(deja: &std::path::Path, home: &std::path::Path, rounds: usize) -> Result<String> {
    let env = BenchEnv::at(deja, "[mcp]\nindex = false\n", Some(home))?;
    let project = project_dir(&deja_store::Store::open_read(&env.database())?)?;
    let (p50, p95, rss) = server_latency(&env, rounds)?;
    let (h50, h95) = hook_latency(&env, &project, 20)?;
    Ok(format!(
        "| `recall` via `deja mcp` p50 / p95 ms | server peak RSS MB | SessionStart hook (cold) p50 / p95 ms |\n|---|---|---|\n| {p50:.1} / {p95:.1} | {:.0} | {h50:.0} / {h95:.0} |\n",
        crate::env::mb(rss)
    ))
}

/// The hooks' cold latency over a generated store of `messages` (see
/// `deja-bench hooks`), as a Markdown table row with its header.
pub fn hooks(deja: &std::path::Path, messages: usize, runs: usize) -> Result<String> {
    let env = BenchEnv::at(deja, "enabled = false\n", None)?;
    crate::generate::corpus(&env.home, messages, 42 + messages as u64)?;
    env.run(&["index"])?;
    let store = deja_store::Store::open_read(&env.database())?;
    let stored = store.counts()?.messages;
    let project = project_dir(&store)?;
    drop(store);
    let start = hook_latency(&env, &project, runs)?;
    let matched = failure_hook_latency(&env, crate::generate::CORPUS_ERROR, runs)?;
    let unmatched = failure_hook_latency(
        &env,
        "error: cannot open shared object file libfrobnicate.so.7: No such file or directory",
        runs,
    )?;
    Ok(format!(
        "| messages | SessionStart hook p50 / p95 ms | failure note, an error the store holds: p50 / p95 ms (note given) | failure note, an error it does not hold: p50 / p95 ms (note given) |\n|---|---|---|---|\n| {stored} | {:.0} / {:.0} | {:.0} / {:.0} ({}) | {:.0} / {:.0} ({}) |\n",
        start.0, start.1, matched.0, matched.1, if matched.2 { "yes" } else { "no" },
        unmatched.0, unmatched.1, if unmatched.2 { "yes" } else { "no" },
    ))
}
