//! `deja setup claude|codex|qwen|opencode` proven with the real agents (Claude
//! Code, Codex CLI, Qwen Code, OpenCode, installed by `scripts/fetch-clients`)
//! talking to a scripted model (`tests/agents/model_server.py`): the first
//! request carries deja's digest of the project and offers deja's recall
//! tool, the model calls it, the next request carries deja's framed answer
//! (and nothing outside the frame), deja then finds the session the agent
//! wrote, and `--undo` gives back every file as it was. For Claude Code and
//! Qwen Code, a failing shell command brings deja's note of the earlier
//! session that met the same error. Gemini CLI (`deja setup gemini`, on the
//! Gemini API) makes the same round; aider, which has no MCP client, gets
//! the digest as a read-only file through `deja aider`.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::{fixtures, repo, Output, Sandbox};
use crate::mcp::clients_dir;

/// How long one agent run may take before it is killed.
const AGENT_TIMEOUT: Duration = Duration::from_secs(300);

/// What the user asks every agent.
pub(crate) const QUESTION: &str = "what was that tenant predicate bug?";

/// The model's last answer.
pub(crate) const ANSWER: &str = "That was the tenant predicate bug in billing-api.";

/// What the failing command prints: the error of the demo's Terraform
/// session (aider, infra, 2025-12-01 17:02:18).
const LOCK_ERROR: &str = "Error: Error acquiring the state lock";
const LOCK_DETAIL: &str = "Error message: operation error DynamoDB: PutItem, https response error";

/// An agent CLI from the clients cache; panics with the fix when it is
/// missing (these tests never pass without the real agent).
pub(crate) fn agent_cli(program: &str) -> PathBuf {
    let bin = clients_dir().join("npm/node_modules/.bin").join(program);
    assert!(
        bin.is_file(),
        "`{program}` is not installed in {}; run scripts/fetch-clients first",
        clients_dir().display()
    );
    bin
}

/// The demo's aider projects copied under HOME (deja's aider ids and the
/// digest's project are the history's folder, so the agents must run in the
/// folder deja indexed), the Gemini sessions read in place, indexed without
/// embeddings (lexical recall and the digest need none), the MCP server not
/// indexing in the background.
pub(crate) struct Demo {
    pub(crate) sb: Sandbox,
    /// The copy of `billing-api`, where the agents run.
    pub(crate) billing: PathBuf,
    /// deja's id of the tenant predicate session (aider, billing-api).
    pub(crate) tenant: String,
    /// deja's id of the Terraform state lock session (aider, infra).
    lock: String,
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// The id among `sessions` (the `sessions` of `deja context --json`) that
/// ends with the session's start time.
fn session_ending(sessions: &Value, start: &str) -> String {
    sessions
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .find(|id| id.ends_with(start))
        .unwrap_or_else(|| panic!("no session ending in {start}: {sessions:#}"))
        .to_string()
}

pub(crate) fn demo() -> Demo {
    let mut sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n[mcp]\nindex = false\n");
    let src = sb.home.join("src");
    copy_tree(&fixtures().join("demo/aider"), &src);
    sb.env("DEJA_AIDER_ROOTS", &src);
    sb.env("DEJA_GEMINI_ROOT", fixtures().join("demo/gemini"));
    sb.ok(&["index"]);
    let billing = std::fs::canonicalize(src.join("billing-api")).unwrap();
    let infra = std::fs::canonicalize(src.join("infra")).unwrap();
    let billing_text = billing.to_str().unwrap();
    let listed = sb
        .ok(&["context", "--project", billing_text, "--json"])
        .json();
    let tenant = session_ending(&listed["sessions"], "-20251209T101233");
    let digest = sb.ok(&["context", "--project", billing_text]).stdout;
    assert!(
        digest.contains("(from deja)") && digest.contains(&tenant),
        "the digest of {billing_text} does not list {tenant}:\n{digest}"
    );
    let infra_listed = sb
        .ok(&["context", "--project", infra.to_str().unwrap(), "--json"])
        .json();
    let lock = session_ending(&infra_listed["sessions"], "-20251201T170218");
    Demo {
        sb,
        billing,
        tenant,
        lock,
    }
}

/// The scripted model server, killed when dropped.
pub(crate) struct ModelServer {
    child: Child,
    dir: PathBuf,
    pub(crate) url: String,
}

impl ModelServer {
    pub(crate) fn start(dir: &Path, script: &Value) -> ModelServer {
        std::fs::create_dir_all(dir).unwrap();
        let script_path = dir.join("script.json");
        std::fs::write(&script_path, script.to_string()).unwrap();
        let port_file = dir.join("port");
        let child = Command::new("python3")
            .arg(repo().join("tests/agents/model_server.py"))
            .arg("--script")
            .arg(&script_path)
            .arg("--record")
            .arg(dir.join("requests.jsonl"))
            .arg("--port-file")
            .arg(&port_file)
            .arg("--quiet")
            .stdin(Stdio::null())
            .spawn()
            .expect("start python3 tests/agents/model_server.py");
        let mut server = ModelServer {
            child,
            dir: dir.to_path_buf(),
            url: String::new(),
        };
        let start = Instant::now();
        loop {
            if let Ok(port) = std::fs::read_to_string(&port_file) {
                server.url = format!("http://127.0.0.1:{}", port.trim());
                return server;
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("the model server exited: {status}");
            }
            assert!(
                start.elapsed() < Duration::from_secs(15),
                "the model server wrote no port"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Every request so far.
    pub(crate) fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(self.dir.join("requests.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `cmd` in a process group of its own with stdin closed, killing the
/// group after [`AGENT_TIMEOUT`] (and whatever it left running after it
/// exits); output goes through files in `dir`.
pub(crate) fn run_agent(mut cmd: Command, dir: &Path, name: &str) -> Output {
    let out_path = dir.join(format!("{name}.stdout"));
    let err_path = dir.join(format!("{name}.stderr"));
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
    let pgid = child.id();
    let kill_group = || {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{pgid}")])
            .stderr(Stdio::null())
            .status();
    };
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > AGENT_TIMEOUT {
            kill_group();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    kill_group();
    let read = |p: &Path| {
        let mut s = String::new();
        std::fs::File::open(p)
            .unwrap()
            .read_to_string(&mut s)
            .unwrap();
        s
    };
    let out = Output {
        code: status.and_then(|s| s.code()).unwrap_or(-1),
        stdout: read(&out_path),
        stderr: read(&err_path),
    };
    println!(
        "{name}: exit {} after {:.1}s",
        out.code,
        start.elapsed().as_secs_f64()
    );
    assert!(
        status.is_some(),
        "{name} ran past {AGENT_TIMEOUT:?} and was killed\nstdout:\n{}\nstderr:\n{}",
        out.stdout,
        out.stderr
    );
    out
}

/// The agents under test: how each is configured for the model server, run,
/// and where it keeps what deja reads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Agent {
    Claude,
    Codex,
    Qwen,
    OpenCode,
}

impl Agent {
    fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Qwen => "qwen",
            Agent::OpenCode => "opencode",
        }
    }

    /// Every file `deja setup` touches, under `home`.
    fn files(self, home: &Path) -> Vec<PathBuf> {
        match self {
            Agent::Claude => vec![
                home.join(".claude.json"),
                home.join(".claude/settings.json"),
            ],
            Agent::Codex => vec![
                home.join(".codex/config.toml"),
                home.join(".codex/hooks.json"),
            ],
            Agent::Qwen => vec![home.join(".qwen/settings.json")],
            Agent::OpenCode => vec![
                home.join(".config/opencode/opencode.json"),
                home.join(".config/opencode/plugin/deja.js"),
            ],
        }
    }

    /// The agent's own settings: its provider pointed at `url`, quiet and
    /// offline, and a key of the user's, so that there is content to keep.
    pub(crate) fn configure(self, sb: &Sandbox, url: &str) {
        match self {
            Agent::Claude => {
                sb.write(
                    ".claude.json",
                    "{\n  \"hasCompletedOnboarding\": true,\n  \"userNote\": \"mine, keep it\"\n}\n",
                );
                sb.write(
                    ".claude/settings.json",
                    "{\n  \"cleanupPeriodDays\": 30,\n  \"permissions\": {\n    \"allow\": [\"Read\"]\n  }\n}\n",
                );
            }
            Agent::Codex => {
                sb.write(
                    ".codex/config.toml",
                    format!(
                        "# my codex settings\nmodel = \"gpt-4o\"\nmodel_provider = \"mock\"\ncheck_for_update_on_startup = false\n\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"{url}/v1\"\nwire_api = \"responses\"\nenv_key = \"MOCK_KEY\"\n"
                    ),
                );
            }
            Agent::Qwen => {
                sb.write(
                    ".qwen/settings.json",
                    "{\n  \"memory\": { \"enableManagedAutoMemory\": false },\n  \"general\": { \"disableAutoUpdate\": true },\n  \"privacy\": { \"usageStatisticsEnabled\": false }\n}\n",
                );
            }
            Agent::OpenCode => {
                sb.write(
                    ".config/opencode/opencode.json",
                    serde_json::to_string_pretty(&json!({
                        "$schema": "https://opencode.ai/config.json",
                        "provider": {"mock": {
                            "npm": "@ai-sdk/openai-compatible",
                            "name": "Mock",
                            "options": {"baseURL": format!("{url}/v1"), "apiKey": "sk-placeholder"},
                            "models": {"gpt-4o": {"name": "gpt-4o", "tool_call": true}},
                        }},
                        "model": "mock/gpt-4o",
                        "autoupdate": false,
                        "share": "disabled",
                    }))
                    .unwrap()
                        + "\n",
                );
            }
        }
    }

    /// The non-interactive run of `prompt` in `cwd`; `extra` are more flags.
    pub(crate) fn command(
        self,
        sb: &Sandbox,
        url: &str,
        cwd: &Path,
        prompt: &str,
        extra: &[&str],
    ) -> Command {
        let program = agent_cli(self.name());
        let mut cmd = sb.command_of(&program);
        cmd.current_dir(cwd);
        match self {
            Agent::Claude => {
                cmd.env("ANTHROPIC_BASE_URL", url)
                    .env("ANTHROPIC_API_KEY", "sk-placeholder")
                    .env("DISABLE_AUTOUPDATER", "1")
                    .env("DISABLE_TELEMETRY", "1")
                    .env("DISABLE_ERROR_REPORTING", "1")
                    .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
                    .args(["-p", prompt, "--output-format", "json"]);
            }
            Agent::Codex => {
                cmd.env("MOCK_KEY", "sk-placeholder").args([
                    "exec",
                    "--skip-git-repo-check",
                    "--dangerously-bypass-hook-trust",
                    prompt,
                ]);
            }
            Agent::Qwen => {
                cmd.env("OPENAI_BASE_URL", format!("{url}/v1"))
                    .env("OPENAI_API_KEY", "sk-placeholder")
                    .env("OPENAI_MODEL", "gpt-4o")
                    .args(["-p", prompt, "--auth-type", "openai"]);
            }
            Agent::OpenCode => {
                cmd.env("OPENCODE_DISABLE_MODELS_FETCH", "1")
                    .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
                    .args(["run", prompt]);
            }
        }
        cmd.args(extra);
        cmd
    }

    /// The agent's id of the session it just ran, as deja's reader names it.
    fn session_id(self, sb: &Sandbox, out: &Output, requests: &[Value]) -> String {
        match self {
            Agent::Claude => {
                let v: Value = serde_json::from_str(&out.stdout)
                    .unwrap_or_else(|e| panic!("claude -p printed no JSON ({e}): {}", out.stdout));
                v["session_id"].as_str().unwrap().to_string()
            }
            Agent::Codex => requests
                .iter()
                .find_map(|r| r["headers"]["session-id"].as_str())
                .expect("codex sent no session-id header")
                .to_string(),
            Agent::Qwen => {
                let mut ids = Vec::new();
                for project in std::fs::read_dir(sb.home.join(".qwen/projects")).unwrap() {
                    let chats = project.unwrap().path().join("chats");
                    for f in std::fs::read_dir(&chats).into_iter().flatten() {
                        let p = f.unwrap().path();
                        if p.extension().is_some_and(|e| e == "jsonl") {
                            ids.push(p.file_stem().unwrap().to_string_lossy().into_owned());
                        }
                    }
                }
                assert_eq!(ids.len(), 1, "qwen transcripts: {ids:?}");
                ids.remove(0)
            }
            // OpenCode's own database, read by Python's sqlite3 (not deja):
            // the one session the run created.
            Agent::OpenCode => {
                let db = sb.home.join(".local/share/opencode/opencode.db");
                let out = std::process::Command::new("python3")
                    .args([
                        "-c",
                        "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1])\nprint('\\n'.join(r[0] for r in c.execute('SELECT id FROM session')))",
                    ])
                    .arg(&db)
                    .output()
                    .expect("run python3");
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                let ids: Vec<String> = String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .map(str::to_string)
                    .collect();
                assert_eq!(ids.len(), 1, "opencode sessions: {ids:?}");
                ids.into_iter().next().unwrap()
            }
        }
    }

    /// deja's reader of this agent's transcripts.
    fn harness(self) -> Option<&'static str> {
        match self {
            Agent::Claude => Some("claude"),
            Agent::Codex => Some("codex"),
            Agent::Qwen => Some("qwen"),
            // A reader written in TOML (plugins/toml/readers/opencode.toml).
            Agent::OpenCode => Some("opencode"),
        }
    }
}

/// The bytes of each file, `None` where it does not exist.
pub(crate) fn snapshot(files: &[PathBuf]) -> Vec<Option<Vec<u8>>> {
    files.iter().map(|f| std::fs::read(f).ok()).collect()
}

/// The request body as text.
pub(crate) fn body(r: &Value) -> String {
    r["body"].to_string()
}

/// The conversation's requests (main, and those the server answered on the
/// script's behalf), without title, quota or memory side requests.
pub(crate) fn conversation(requests: &[Value]) -> Vec<&Value> {
    requests
        .iter()
        .filter(|r| matches!(r["kind"].as_str(), Some("main" | "auto" | "exhausted")))
        .collect()
}

/// Text of a tool result's content: a string or a list of text parts.
fn content_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .map(|p| {
                p["text"]
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| p.to_string())
            })
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

/// The result of the tool call `call_id` as the request hands it to the model.
pub(crate) fn tool_result(r: &Value, call_id: &str) -> Option<String> {
    let b = &r["body"];
    let items = b["messages"]
        .as_array()
        .into_iter()
        .chain(b["input"].as_array())
        .flatten();
    for m in items {
        // OpenAI Chat Completions (Qwen Code, OpenCode).
        if m["role"] == "tool" && m["tool_call_id"] == call_id {
            return Some(content_text(&m["content"]));
        }
        // OpenAI Responses (Codex CLI).
        if m["type"] == "function_call_output" && m["call_id"] == call_id {
            return Some(content_text(&m["output"]));
        }
        // Anthropic Messages (Claude Code).
        for part in m["content"].as_array().into_iter().flatten() {
            if part["type"] == "tool_result" && part["tool_use_id"] == call_id {
                return Some(content_text(&part["content"]));
            }
        }
    }
    None
}

/// The main request that the script's step `step` answered.
pub(crate) fn step_request(requests: &[Value], step: u64) -> &Value {
    requests
        .iter()
        .find(|r| r["kind"] == "main" && r["step"] == step)
        .unwrap_or_else(|| {
            panic!(
                "no request took step {step}; requests:\n{}",
                summary(requests)
            )
        })
}

/// One line per request, for failure messages.
pub(crate) fn summary(requests: &[Value]) -> String {
    requests
        .iter()
        .map(|r| {
            format!(
                "#{} {} {} kind={} step={} reason={} tools={} reply={}",
                r["seq"],
                r["method"],
                r["path"],
                r["kind"],
                r["step"],
                r["reason"],
                r["tools"].as_array().map_or(0, Vec::len),
                r["reply"]
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The JSON of a file setup touched, without deja's entries (what `--undo`
/// takes out): for a file the agent itself rewrote while it ran.
fn without_deja(mut v: Value, before: &Value) -> Value {
    fn is_deja(v: &Value) -> bool {
        v.as_str().is_some_and(|s| s.starts_with("mcp__deja"))
            || v.to_string().contains(" context --hook ")
    }
    for (a, b) in [("mcpServers", "deja"), ("mcp", "deja")] {
        if let Some(o) = v.get_mut(a).and_then(Value::as_object_mut) {
            o.remove(b);
        }
    }
    if let Some(list) = v
        .pointer_mut("/permissions/allow")
        .and_then(Value::as_array_mut)
    {
        list.retain(|x| !is_deja(x));
    }
    if let Some(hooks) = v.get_mut("hooks").and_then(Value::as_object_mut) {
        for list in hooks.values_mut() {
            if let Some(list) = list.as_array_mut() {
                list.retain(|x| !is_deja(x));
            }
        }
        hooks.retain(|k, list| {
            !list.as_array().is_some_and(Vec::is_empty) || before["hooks"].get(k).is_some()
        });
    }
    // The containers of deja's entries that setup created go with them.
    if let Some(o) = v.as_object_mut() {
        o.retain(|k, x| {
            let ours = ["mcpServers", "mcp", "permissions", "hooks"].contains(&k.as_str());
            let empty = x.as_object().is_some_and(|m| {
                m.is_empty() || m.values().all(|y| y.as_array().is_some_and(Vec::is_empty))
            });
            !(ours && empty) || before.get(k).is_some()
        });
    }
    v
}

/// After `--undo`: each file as it was before setup, or, where the agent
/// rewrote it while it ran, as the agent left it less deja's entries.
pub(crate) fn assert_restored(
    files: &[PathBuf],
    before: &[Option<Vec<u8>>],
    set_up: &[Option<Vec<u8>>],
    after_run: &[Option<Vec<u8>>],
) {
    let undone = snapshot(files);
    for (i, f) in files.iter().enumerate() {
        if after_run[i] == set_up[i] {
            assert!(
                undone[i] == before[i],
                "{} is not byte for byte what it was before setup:\nbefore:\n{}\nafter undo:\n{}",
                f.display(),
                before[i]
                    .as_deref()
                    .map(String::from_utf8_lossy)
                    .unwrap_or_default(),
                undone[i]
                    .as_deref()
                    .map(String::from_utf8_lossy)
                    .unwrap_or_default()
            );
            continue;
        }
        // The agent rewrote the file (Claude Code rewrites ~/.claude.json).
        let parse = |b: &Option<Vec<u8>>| -> Value {
            b.as_deref()
                .map(|b| {
                    serde_json::from_slice(b).unwrap_or_else(|e| {
                        panic!(
                            "{} changed during the run and is not JSON: {e}",
                            f.display()
                        )
                    })
                })
                .unwrap_or(Value::Null)
        };
        let base = parse(&before[i]);
        let expected = without_deja(parse(&after_run[i]), &base);
        let got = parse(&undone[i]);
        println!(
            "{} was rewritten by the agent; compared as JSON",
            f.display()
        );
        assert_eq!(
            got,
            expected,
            "{}: undo did not give back the agent's file less deja's entries",
            f.display()
        );
        assert_eq!(
            got["userNote"],
            base["userNote"],
            "{}: the user's own key is gone",
            f.display()
        );
    }
}

/// The whole round: the agent's settings, `deja setup`, one run on the
/// recall script, what deja then finds, `deja setup --undo`.
fn round_trip(agent: Agent) {
    let started = Instant::now();
    let d = demo();
    let sb = &d.sb;
    let run_dir = sb.home.parent().unwrap().join("run");
    let server = ModelServer::start(
        &run_dir,
        &json!([
            {"tool_like": "recall", "input": {"query": "tenant predicate bug"}},
            {"text": ANSWER},
        ]),
    );
    agent.configure(sb, &server.url);
    let files = agent.files(&sb.home);
    let before = snapshot(&files);

    let setup = sb.ok(&["setup", agent.name()]);
    println!(
        "deja setup {}:\n{}{}",
        agent.name(),
        setup.stdout,
        setup.stderr
    );
    let set_up = snapshot(&files);
    assert_ne!(before, set_up, "setup changed nothing");

    let out = run_agent(
        agent.command(sb, &server.url, &d.billing, QUESTION, &[]),
        &run_dir,
        agent.name(),
    );
    let requests = server.requests();
    let report = summary(&requests);
    println!("requests:\n{report}");
    assert_eq!(
        out.code,
        0,
        "{} failed\nstdout:\n{}\nstderr:\n{}\nrequests:\n{report}",
        agent.name(),
        out.stdout,
        out.stderr
    );
    assert!(out.stdout.contains(ANSWER), "stdout: {}", out.stdout);
    let after_run = snapshot(&files);

    // (1) The first request of the conversation carries deja's digest and
    // offers deja's recall tool (Claude Code and Qwen Code name deferred
    // tools in the prompt).
    let convo = conversation(&requests);
    let first = convo.first().expect("no conversation request");
    let text = body(first);
    assert!(
        text.contains("(from deja)") && text.contains("## Memory of past sessions in"),
        "the first request lacks deja's digest:\n{text}"
    );
    // Qwen Code escapes `<` and `>` in what SessionStart hooks add (deja
    // prints the frame raw, as Claude Code and Codex CLI pass it on).
    let frame = text
        .find("<recalled-memory source=")
        .or_else(|| {
            (agent == Agent::Qwen)
                .then(|| text.find("&lt;recalled-memory source="))
                .flatten()
        })
        .unwrap_or_else(|| {
            let at = text.find("(from deja)").unwrap();
            panic!(
                "the digest in the first request has no frame:\n…{}…",
                around(&text, at + 1000)
            )
        });
    assert!(
        text[frame..].contains(&d.tenant),
        "the digest in the first request does not name {}",
        d.tenant
    );
    let offers_recall = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t.as_str().is_some_and(|t| t.ends_with("recall")))
        || text.contains("mcp__deja__recall");
    assert!(
        offers_recall,
        "the first request does not offer deja's recall: {:?}",
        first["tools"]
    );
    // OpenCode: deja's plugin puts the digest in the first user message,
    // never in the system prompt.
    if agent == Agent::OpenCode {
        let messages = first["body"]["messages"].as_array().unwrap();
        let holds = |role: &str| {
            messages
                .iter()
                .filter(|m| m["role"] == role)
                .any(|m| m["content"].to_string().contains("(from deja)"))
        };
        assert!(!holds("system"), "the digest is in the system prompt");
        assert!(holds("user"), "no user message holds the digest");
    }

    // (2) The model called deja's recall.
    let call = step_request(&requests, 0);
    let reply = &call["reply"];
    let called = reply["bridged"]
        .as_str()
        .or(reply["tool"].as_str())
        .unwrap();
    assert!(called.ends_with("recall"), "{reply}");
    let call_id = reply["call_id"].as_str().unwrap();

    // (3) The next request carries deja's framed answer, naming the tenant
    // session, and nothing outside the frame (no structuredContent).
    let next = step_request(&requests, 1);
    let result = tool_result(next, call_id).unwrap_or_else(|| {
        panic!(
            "the request after the call lacks its result:\n{}",
            body(next)
        )
    });
    // Codex CLI puts "Wall time: …\nOutput:\n" before a tool's output.
    let framed = match result.split_once("Output:\n") {
        Some((head, rest)) if head.starts_with("Wall time") => rest,
        _ => result.as_str(),
    }
    .trim();
    assert!(
        framed.starts_with("<recalled-memory") && framed.contains("</recalled-memory>"),
        "the tool result does not start with deja's frame:\n{result}"
    );
    // After the frame deja adds plain notes (why semantic recall was off,
    // how to cite), never JSON.
    let (_, after) = framed.rsplit_once("</recalled-memory>").unwrap();
    assert!(
        !after.contains('{') && !after.contains("\"hits\""),
        "JSON after deja's frame:\n{result}"
    );
    assert!(
        framed.contains(&d.tenant),
        "the answer does not name {}:\n{result}",
        d.tenant
    );
    assert!(
        !body(next).contains("structuredContent") && !framed.contains("{\"hits\""),
        "structured content reached the model:\n{result}"
    );

    // (4) deja finds the session the agent just wrote.
    if let Some(harness) = agent.harness() {
        let native = agent.session_id(sb, &out, &requests);
        sb.ok(&["index"]);
        let found = sb
            .ok(&["recall", QUESTION, "--harness", harness, "--json"])
            .json();
        let hits = found["hits"].as_array().unwrap();
        assert!(
            hits.iter().any(|h| h["session_id"]
                .as_str()
                .is_some_and(|s| s.contains(&native))),
            "deja recall --harness {harness} does not find session {native}:\n{found:#}"
        );
    }

    // (5) Undo gives every file back.
    sb.ok(&["setup", agent.name(), "--undo"]);
    assert_restored(&files, &before, &set_up, &after_run);
    println!(
        "{} round trip: {:.1}s",
        agent.name(),
        started.elapsed().as_secs_f64()
    );
}

#[test]
fn claude_code_gets_the_digest_recalls_through_deja_and_undo_restores_its_files() {
    round_trip(Agent::Claude);
}

#[test]
fn codex_gets_the_digest_recalls_through_deja_and_undo_restores_its_files() {
    round_trip(Agent::Codex);
}

#[test]
fn qwen_code_gets_the_digest_recalls_through_deja_and_undo_restores_its_files() {
    round_trip(Agent::Qwen);
}

#[test]
fn opencode_gets_the_digest_recalls_through_deja_and_undo_restores_its_files() {
    round_trip(Agent::OpenCode);
}

#[test]
fn setup_then_undo_gives_every_agents_files_back_byte_for_byte() {
    let sb = Sandbox::new();
    let agents = [Agent::Claude, Agent::Codex, Agent::Qwen, Agent::OpenCode];
    for agent in agents {
        agent.configure(&sb, "http://127.0.0.1:9");
    }
    for agent in agents {
        let files = agent.files(&sb.home);
        let before = snapshot(&files);
        let dry = sb.ok(&["setup", agent.name(), "--dry-run"]);
        assert_eq!(
            before,
            snapshot(&files),
            "{}: a dry run changed files: {}",
            agent.name(),
            dry.stdout
        );
        sb.ok(&["setup", agent.name()]);
        let set_up = snapshot(&files);
        assert_ne!(before, set_up, "{}: setup changed nothing", agent.name());
        sb.ok(&["setup", agent.name()]);
        assert_eq!(
            set_up,
            snapshot(&files),
            "{}: a second setup changed files",
            agent.name()
        );
        sb.ok(&["setup", agent.name(), "--undo"]);
        assert_eq!(
            before,
            snapshot(&files),
            "{}: undo did not give the files back byte for byte",
            agent.name()
        );
    }
    // Folders setup created for its own files go with them.
    assert!(!sb.home.join(".config/opencode/plugin").exists());
}

/// A failing shell command whose error an earlier session met: the request
/// after it carries deja's note naming that session (the Terraform lock of
/// the demo's infra project; the agent runs in billing-api, whose digest does
/// not name it).
fn failure_note(agent: Agent, shell_tool: &str, input: Value, extra: &[&str]) {
    let started = Instant::now();
    let d = demo();
    let sb = &d.sb;
    let run_dir = sb.home.parent().unwrap().join("run");
    let server = ModelServer::start(
        &run_dir,
        &json!([
            {"tool": shell_tool, "input": input},
            {"text": "The state lock is left over from the killed apply."},
        ]),
    );
    agent.configure(sb, &server.url);
    sb.ok(&["setup", agent.name()]);
    let out = run_agent(
        agent.command(
            sb,
            &server.url,
            &d.billing,
            "terraform plan fails, why?",
            extra,
        ),
        &run_dir,
        agent.name(),
    );
    let requests = server.requests();
    let report = summary(&requests);
    println!("requests:\n{report}");
    assert_eq!(
        out.code,
        0,
        "{} failed\nstdout:\n{}\nstderr:\n{}\nrequests:\n{report}",
        agent.name(),
        out.stdout,
        out.stderr
    );
    let call = step_request(&requests, 0);
    assert!(
        !body(call).contains(&d.lock),
        "the request before the failure already names {}",
        d.lock
    );
    let call_id = call["reply"]["call_id"].as_str().unwrap();
    let next = step_request(&requests, 1);
    let result = tool_result(next, call_id).unwrap_or_else(|| {
        panic!(
            "the request after the call lacks its result:\n{}",
            body(next)
        )
    });
    assert!(
        result.contains(LOCK_ERROR),
        "the command did not fail as scripted:\n{result}"
    );
    let text = body(next);
    let at = text.find(&d.lock).unwrap_or_else(|| {
        panic!(
            "the request after the failure does not name {}:\n{text}",
            d.lock
        )
    });
    // deja's note: the frame, which names the session and quotes what it
    // did. Qwen Code escapes `<` and `>` in a PostToolUseFailure hook's
    // context (deja prints them raw, as Claude Code passes them on).
    let note = &text[at..];
    let (open, close) = if agent == Agent::Qwen && !text.contains("<recalled-memory") {
        ("&lt;recalled-memory source=", "&lt;/recalled-memory&gt;")
    } else {
        ("<recalled-memory source=", "</recalled-memory>")
    };
    let framed = text[..at]
        .rfind(open)
        .filter(|&o| at - o < 600)
        .is_some_and(|o| !text[o..at].contains(close) && note.contains(close));
    assert!(
        framed,
        "the note naming {} has no frame after it:\n…{}…",
        d.lock,
        around(&text, at)
    );
    assert!(
        note.contains("ConditionalCheckFailedException") || note.contains("state lock"),
        "the note does not quote the earlier session:\n{}",
        around(&text, at)
    );
    println!(
        "{} failure note: {:.1}s",
        agent.name(),
        started.elapsed().as_secs_f64()
    );
}

/// The text around byte `at`, for failure messages.
fn around(text: &str, at: usize) -> &str {
    let mut from = at.saturating_sub(1500);
    while !text.is_char_boundary(from) {
        from -= 1;
    }
    let mut to = (at + 500).min(text.len());
    while !text.is_char_boundary(to) {
        to += 1;
    }
    &text[from..to]
}

fn failing_command() -> String {
    format!("printf '%s\\n\\n%s\\n' '{LOCK_ERROR}' '{LOCK_DETAIL}' >&2; exit 1")
}

#[test]
fn claude_code_gets_a_note_when_bash_fails_as_an_earlier_session_did() {
    failure_note(
        Agent::Claude,
        "Bash",
        json!({"command": failing_command(), "description": "Run terraform plan"}),
        &["--allowedTools", "Bash"],
    );
}

/// The words only the first run of the resumed session says.
const OWN_WORDS: &str = "quokka ledger reconciliation";

/// The transcripts under `dir` whose file name holds `id`.
fn transcripts_of(dir: &Path, id: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = e.path();
        if e.file_type().unwrap().is_dir() {
            out.extend(transcripts_of(&path, id));
        } else if path.to_string_lossy().ends_with(".jsonl")
            && e.file_name().to_string_lossy().contains(id)
        {
            out.push(path);
        }
    }
    out
}

/// Moves every time of today in the transcript at `path` to the day before.
fn move_back_a_day(path: &Path) {
    let today = chrono::Utc::now().date_naive();
    let yesterday = today.pred_opt().unwrap();
    let text = std::fs::read_to_string(path).unwrap().replace(
        &today.format("%Y-%m-%dT").to_string(),
        &yesterday.format("%Y-%m-%dT").to_string(),
    );
    std::fs::write(path, text).unwrap();
}

/// A session of `agent` answered once, indexed, then resumed: the
/// resumed run's SessionStart digest does not list it, and deja's recall
/// (asked for words only that session said) does not answer with it.
fn resumed_never_gets_itself(agent: Agent) {
    let d = demo();
    let sb = &d.sb;
    let run_dir = sb.home.parent().unwrap().join("run");
    let server = ModelServer::start(
        &run_dir,
        &json!([
            {"text": format!("Noted: the {OWN_WORDS} runs nightly.")},
            {"tool_like": "recall", "input": {"query": OWN_WORDS}},
            {"text": ANSWER},
        ]),
    );
    agent.configure(sb, &server.url);
    sb.ok(&["setup", agent.name()]);
    let question = format!("remember the {OWN_WORDS} plan");
    let first = run_agent(
        agent.command(sb, &server.url, &d.billing, &question, &[]),
        &run_dir,
        &format!("{}-first", agent.name()),
    );
    assert_eq!(first.code, 0, "{}\n{}", first.stdout, first.stderr);
    let live = agent.session_id(sb, &first, &server.requests());
    // A session resumed a day later: its transcript dated the day before
    // (so that no rule about sessions begun since the server started covers
    // it), then in the store, as a background index would put it.
    let dated = transcripts_of(&sb.home, &live);
    assert!(!dated.is_empty(), "no transcript of {live}");
    for t in dated {
        move_back_a_day(&t);
    }
    sb.ok(&["index"]);
    let stored = sb.ok(&["recall", OWN_WORDS, "--json"]).json();
    assert!(
        stored["hits"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["session_id"].as_str().is_some_and(|s| s.contains(&live))),
        "the first run's session {live} is not in the store: {stored:#}"
    );

    // The same session, resumed: its SessionStart hook (source `resume`)
    // and deja's server both see the live session.
    let resume = match agent {
        Agent::Claude => agent.command(
            sb,
            &server.url,
            &d.billing,
            QUESTION,
            &["--resume", &live, "--allowedTools", "mcp__deja__recall"],
        ),
        Agent::Codex => {
            let mut cmd = sb.command_of(&agent_cli("codex"));
            cmd.current_dir(&d.billing)
                .env("MOCK_KEY", "sk-placeholder")
                .args([
                    "exec",
                    "--skip-git-repo-check",
                    "--dangerously-bypass-hook-trust",
                ])
                .args(["resume", &live, QUESTION]);
            cmd
        }
        other => panic!("no resumed run for {other:?}"),
    };
    let resumed = run_agent(resume, &run_dir, &format!("{}-resumed", agent.name()));
    let requests = server.requests();
    let report = summary(&requests);
    assert_eq!(
        resumed.code, 0,
        "{}\n{}\nrequests:\n{report}",
        resumed.stdout, resumed.stderr
    );
    let call = step_request(&requests, 1);
    let text = body(call);
    // The last digest: the resumed run's (the first run's is in its history).
    let from = text
        .rfind("## Memory of past sessions in")
        .unwrap_or_else(|| panic!("the resumed run got no digest:\n{text}"));
    let digest = &text[from..];
    let digest = &digest[..digest.find("</recalled-memory>").unwrap_or(digest.len())];
    assert!(digest.contains(&d.tenant), "{digest}");
    assert!(
        !digest.contains(&live),
        "the digest of the resumed run lists its own session {live}:\n{digest}"
    );
    let call_id = call["reply"]["call_id"].as_str().unwrap();
    let result = tool_result(step_request(&requests, 2), call_id)
        .unwrap_or_else(|| panic!("no result of the recall call:\n{report}"));
    assert!(
        result.contains("<recalled-memory") && !result.contains(&live),
        "recall answered the resumed run with its own session {live}:\n{result}"
    );
}

#[test]
fn claude_code_resumed_gets_neither_its_own_session_in_the_digest_nor_in_recall() {
    resumed_never_gets_itself(Agent::Claude);
}

#[test]
fn codex_resumed_gets_neither_its_own_session_in_the_digest_nor_in_recall() {
    resumed_never_gets_itself(Agent::Codex);
}

#[test]
fn qwen_code_gets_a_note_when_a_shell_command_fails_as_an_earlier_session_did() {
    failure_note(
        Agent::Qwen,
        "run_shell_command",
        json!({"command": failing_command(), "description": "Run terraform plan", "is_background": false}),
        // `--allowed-tools run_shell_command` is not enough in `-p` mode (a
        // deny rule "edit" still refuses it).
        &["--approval-mode", "yolo"],
    );
}

/// The result of the Gemini API function call `call_id` in a request: the
/// `functionResponse` part's `response.output` (Gemini CLI 0.61 sends the MCP
/// tool's text there).
fn function_response(r: &Value, call_id: &str) -> Option<String> {
    for c in r["body"]["contents"].as_array().into_iter().flatten() {
        for part in c["parts"].as_array().into_iter().flatten() {
            let fr = &part["functionResponse"];
            if fr["id"] == call_id {
                return Some(
                    fr["response"]["output"]
                        .as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| fr["response"].to_string()),
                );
            }
        }
    }
    None
}

/// Gemini CLI's files: the user's settings and trusted folders, and the
/// extension `deja setup gemini` writes.
fn gemini_files(home: &Path) -> Vec<PathBuf> {
    let g = home.join(".gemini");
    let ext = g.join("extensions/deja");
    vec![
        g.join("settings.json"),
        g.join("trustedFolders.json"),
        ext.join("gemini-extension.json"),
        ext.join("hooks/hooks.json"),
        ext.join(".deja-setup.json"),
    ]
}

/// `deja setup gemini` proven with the real Gemini CLI 0.61.0 on the Gemini
/// API (`GOOGLE_GEMINI_BASE_URL` at the model server): the extension's
/// SessionStart hook brings the digest, its MCP server the recall tool
/// (`mcp_deja_recall`), the framed answer reaches the model, deja finds the
/// session Gemini wrote, and `--undo` takes the extension away.
#[test]
fn gemini_cli_gets_the_digest_recalls_through_deja_and_undo_restores_its_files() {
    let started = Instant::now();
    let gemini = agent_cli("gemini");
    let mut d = demo();
    let home = d.sb.home.clone();
    // deja reads the demo's Gemini sessions and those this run writes.
    d.sb.env(
        "DEJA_GEMINI_ROOT",
        std::env::join_paths([fixtures().join("demo/gemini"), home.join(".gemini")]).unwrap(),
    );
    let sb = &d.sb;
    let run_dir = home.parent().unwrap().join("run");
    let server = ModelServer::start(
        &run_dir,
        &json!([
            {"tool_like": "recall", "input": {"query": "tenant predicate bug"}},
            {"text": ANSWER},
        ]),
    );
    // The Gemini API key auth (the only one a custom base URL serves), no
    // update checks or usage statistics, the project's folder trusted (Gemini
    // CLI runs no MCP server in an untrusted folder).
    sb.write(
        ".gemini/settings.json",
        "{\n  \"security\": { \"auth\": { \"selectedType\": \"gemini-api-key\" } },\n  \"general\": { \"enableAutoUpdate\": false, \"enableAutoUpdateNotification\": false },\n  \"privacy\": { \"usageStatisticsEnabled\": false },\n  \"telemetry\": { \"enabled\": false }\n}\n",
    );
    sb.write(
        ".gemini/trustedFolders.json",
        serde_json::to_string_pretty(&json!({ d.billing.to_str().unwrap(): "TRUST_FOLDER" }))
            .unwrap()
            + "\n",
    );
    let files = gemini_files(&home);
    let before = snapshot(&files);

    let setup = sb.ok(&["setup", "gemini"]);
    println!("deja setup gemini:\n{}{}", setup.stdout, setup.stderr);
    let set_up = snapshot(&files);
    assert_ne!(before, set_up, "setup changed nothing");

    let mut cmd = sb.command_of(&gemini);
    cmd.current_dir(&d.billing)
        .env("GOOGLE_GEMINI_BASE_URL", &server.url)
        .env("GEMINI_API_KEY", "placeholder")
        .env("GEMINI_TELEMETRY_ENABLED", "false")
        // In `-p` mode Gemini CLI offers an MCP server's tools only when
        // its policy allows them without asking: setup's user policy
        // (`~/.gemini/policies/deja.toml`) is what allows deja's.
        .args(["-p", QUESTION]);
    let out = run_agent(cmd, &run_dir, "gemini");
    let requests = server.requests();
    let report = summary(&requests);
    println!("requests:\n{report}");
    assert_eq!(
        out.code, 0,
        "gemini failed\nstdout:\n{}\nstderr:\n{}\nrequests:\n{report}",
        out.stdout, out.stderr
    );
    assert!(out.stdout.contains(ANSWER), "stdout: {}", out.stdout);
    let after_run = snapshot(&files);

    // (1) The first request of the conversation carries the digest the
    // extension's SessionStart hook printed and offers deja's recall.
    let convo = conversation(&requests);
    let first = convo.first().expect("no conversation request");
    assert!(
        first["path"]
            .as_str()
            .is_some_and(|p| p.ends_with(":streamGenerateContent")),
        "{report}"
    );
    let text = body(first);
    assert!(
        text.contains("(from deja)") && text.contains("## Memory of past sessions in"),
        "the first request lacks deja's digest:\n{text}"
    );
    // Gemini CLI escapes `<` and `>` in what hooks add (as Qwen Code does).
    let frame = text
        .find("<recalled-memory source=")
        .or_else(|| text.find("&lt;recalled-memory source="))
        .unwrap_or_else(|| {
            let at = text.find("(from deja)").unwrap();
            panic!(
                "the digest in the first request has no frame:\n…{}…",
                around(&text, at + 1000)
            )
        });
    assert!(
        text[frame..].contains(&d.tenant),
        "the digest in the first request does not name {}",
        d.tenant
    );
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        tools.contains(&"mcp_deja_recall"),
        "the first request does not offer deja's recall: {tools:?}"
    );

    // (2) The model called deja's recall.
    let call = step_request(&requests, 0);
    assert_eq!(call["reply"]["tool"], "mcp_deja_recall", "{report}");
    let call_id = call["reply"]["call_id"].as_str().unwrap();

    // (3) The next request carries deja's framed answer naming the tenant
    // session, and nothing outside the frame.
    let next = step_request(&requests, 1);
    let result = function_response(next, call_id).unwrap_or_else(|| {
        panic!(
            "the request after the call lacks its result:\n{}",
            body(next)
        )
    });
    // Gemini CLI wraps what an MCP tool returns in <untrusted_context>.
    let framed = result.trim();
    let framed = framed
        .strip_prefix("<untrusted_context>")
        .and_then(|f| f.strip_suffix("</untrusted_context>"))
        .unwrap_or(framed)
        .trim();
    assert!(
        framed.starts_with("<recalled-memory") && framed.contains("</recalled-memory>"),
        "the tool result does not start with deja's frame:\n{result}"
    );
    let (_, after) = framed.rsplit_once("</recalled-memory>").unwrap();
    assert!(
        !after.contains('{') && !after.contains("\"hits\""),
        "JSON after deja's frame:\n{result}"
    );
    assert!(
        framed.contains(&d.tenant),
        "the answer does not name {}:\n{result}",
        d.tenant
    );
    assert!(
        !body(next).contains("structuredContent") && !framed.contains("{\"hits\""),
        "structured content reached the model:\n{result}"
    );

    // (4) deja finds the session Gemini CLI just wrote
    // (~/.gemini/tmp/<project>/chats/session-*.jsonl, its id on line 1).
    let mut chats = Vec::new();
    for project in std::fs::read_dir(home.join(".gemini/tmp")).unwrap() {
        let dir = project.unwrap().path().join("chats");
        for f in std::fs::read_dir(&dir).into_iter().flatten() {
            let p = f.unwrap().path();
            if p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("session-")
            {
                chats.push(p);
            }
        }
    }
    assert_eq!(chats.len(), 1, "gemini transcripts: {chats:?}");
    let head: Value = serde_json::from_str(
        std::fs::read_to_string(&chats[0])
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let native = head["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("{}: no sessionId: {head}", chats[0].display()))
        .to_string();
    sb.ok(&["index"]);
    let found = sb
        .ok(&["recall", QUESTION, "--harness", "gemini", "--json"])
        .json();
    let hits = found["hits"].as_array().unwrap();
    assert!(
        hits.iter().any(|h| h["session_id"]
            .as_str()
            .is_some_and(|s| s.contains(&native))),
        "deja recall --harness gemini does not find session {native}:\n{found:#}"
    );

    // (5) Undo takes the extension (and the `extensions` folder it created)
    // away and leaves the user's files as they were.
    sb.ok(&["setup", "gemini", "--undo"]);
    assert_restored(&files, &before, &set_up, &after_run);
    assert!(!home.join(".gemini/extensions/deja").exists());
    assert!(!home.join(".gemini/extensions").exists());
    println!("gemini round trip: {:.1}s", started.elapsed().as_secs_f64());
}

/// aider 0.86.2 from the clients cache; panics with the fix when missing.
fn aider_cli() -> PathBuf {
    let bin = clients_dir().join("aider/bin/aider");
    assert!(
        bin.is_file(),
        "aider is not installed in {}; run scripts/fetch-clients first",
        clients_dir().display()
    );
    bin
}

/// deja's ids of the sessions of `project`.
fn session_ids(sb: &Sandbox, project: &Path) -> Vec<String> {
    let v = sb
        .ok(&["sessions", "--json", "--project", project.to_str().unwrap()])
        .json();
    v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect()
}

/// `deja aider` proven with the real aider 0.86.2 on the Chat Completions
/// API (aider has no MCP client: the digest is its read-only file): the
/// request carries the project's digest, aider appends the session to the
/// project's chat history, deja finds it, and `deja setup aider --undo`
/// gives the user's `~/.aider.conf.yml` back byte for byte.
#[test]
fn aider_gets_the_digest_read_only_through_deja_aider_and_deja_finds_its_session() {
    let started = Instant::now();
    let aider = aider_cli();
    let mut d = demo();
    // `deja aider` starts the aider found on PATH.
    let path = std::env::join_paths(
        std::iter::once(aider.parent().unwrap().to_path_buf()).chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )),
    )
    .unwrap();
    d.sb.env("PATH", path);
    let sb = &d.sb;
    let home = sb.home.clone();
    let run_dir = home.parent().unwrap().join("run");
    let server = ModelServer::start(
        &run_dir,
        &json!({"steps": [{"text": ANSWER}], "require_tools": false}),
    );
    // aider looks its models up in a price list it would download
    // (raw.githubusercontent.com); a cached one keeps it offline.
    let model = json!({"max_input_tokens": 128000, "max_output_tokens": 16384,
        "litellm_provider": "openai", "mode": "chat",
        "input_cost_per_token": 0, "output_cost_per_token": 0});
    sb.write(
        ".aider/caches/model_prices_and_context_window.json",
        json!({"gpt-4o": model, "gpt-4o-mini": model}).to_string(),
    );
    // The user's own conf, wired with `deja setup aider`.
    let conf = "# my aider settings\ncheck-update: false  # offline\nshow-release-notes: false\n";
    let conf_path = sb.write(".aider.conf.yml", conf);
    sb.ok(&["setup", "aider"]);
    assert_ne!(std::fs::read_to_string(&conf_path).unwrap(), conf);

    let history = d.billing.join(".aider.chat.history.md");
    let history_before = std::fs::read_to_string(&history).unwrap_or_default();
    let ids_before = session_ids(sb, &d.billing);

    let mut cmd = sb.command();
    cmd.current_dir(&d.billing)
        .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        .args([
            "aider",
            "--model",
            "openai/gpt-4o",
            "--openai-api-base",
            &format!("{}/v1", server.url),
            "--openai-api-key",
            "placeholder",
            "--message",
            QUESTION,
            "--yes-always",
            "--no-git",
            "--no-show-model-warnings",
            "--no-check-update",
            "--no-analytics",
        ]);
    let out = run_agent(cmd, &run_dir, "aider");
    let requests = server.requests();
    let report = summary(&requests);
    println!("requests:\n{report}");
    assert_eq!(
        out.code, 0,
        "deja aider failed\nstdout:\n{}\nstderr:\n{}\nrequests:\n{report}",
        out.stdout, out.stderr
    );
    assert!(out.stdout.contains(ANSWER), "stdout: {}", out.stdout);

    // (1) The first request carries the project's digest as the content of
    // a read-only file, naming the tenant session inside deja's frame.
    let convo = conversation(&requests);
    let first = convo.first().expect("no conversation request");
    assert_eq!(first["api"], "chat", "{report}");
    let read_only = first["body"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .find(|c| c.contains("READ ONLY files"))
        .unwrap_or_else(|| panic!("no read-only file in the request:\n{}", body(first)));
    assert!(
        read_only.contains("context/aider/")
            && read_only.contains("(from deja)")
            && read_only.contains("## Memory of past sessions in"),
        "the read-only file is not deja's digest:\n{read_only}"
    );
    let frame = read_only
        .find("<recalled-memory source=")
        .unwrap_or_else(|| panic!("the digest has no frame:\n{read_only}"));
    assert!(
        read_only[frame..].contains(&d.tenant),
        "the digest does not name {}:\n{read_only}",
        d.tenant
    );

    // (2) aider appended this session to the project's chat history.
    let history_after = std::fs::read_to_string(&history).unwrap();
    let added = history_after
        .strip_prefix(history_before.as_str())
        .unwrap_or_else(|| panic!("aider rewrote {} instead of appending", history.display()));
    assert!(
        added.contains("# aider chat started at")
            && added.contains(&format!("#### {QUESTION}"))
            && added.contains(ANSWER),
        "{} did not get this session:\n{added}",
        history.display()
    );

    // (3) deja finds that new session.
    sb.ok(&["index"]);
    let new: Vec<String> = session_ids(sb, &d.billing)
        .into_iter()
        .filter(|id| !ids_before.contains(id))
        .collect();
    assert_eq!(new.len(), 1, "new aider sessions: {new:?}");
    let found = sb
        .ok(&["recall", QUESTION, "--harness", "aider", "--json"])
        .json();
    assert!(
        found["hits"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["session_id"] == new[0].as_str()),
        "deja recall --harness aider does not find session {}:\n{found:#}",
        new[0]
    );

    // (4) Undo gives the user's conf back byte for byte.
    sb.ok(&["setup", "aider", "--undo"]);
    assert_eq!(std::fs::read_to_string(&conf_path).unwrap(), conf);
    println!("aider round trip: {:.1}s", started.elapsed().as_secs_f64());
}

/// What the harness tests below have each CLI asked, how the scripted model
/// answers, and what deja must then find.
const LEDGER_QUESTION: &str = "Why does the ledger show rows of other tenants?";
const LEDGER_FIRST: &str = "Looking at the query first.";
const LEDGER_ANSWER: &str = "The ledger query lost its tenant predicate in the join.";
const LEDGER_COMMAND: &str = "grep -rn tenant_id .";

/// A CLI's run of the ledger question in a sandbox (embeddings off), and
/// what deja reads of the session it wrote.
struct Ledger {
    sb: Sandbox,
    run_dir: PathBuf,
    project: PathBuf,
}

impl Ledger {
    fn new() -> Ledger {
        let sb = Sandbox::new();
        sb.config("[embed]\nenabled = false\n");
        let run_dir = sb.home.parent().unwrap().join("run");
        let project = sb.home.join("work/ledger");
        std::fs::create_dir_all(&project).unwrap();
        Ledger {
            sb,
            run_dir,
            project,
        }
    }

    /// The scripted model: a call of `tool` with `input` (the shell
    /// command), then the answer.
    fn server(&self, tool: &str, input: Value) -> ModelServer {
        ModelServer::start(
            &self.run_dir,
            &json!([
                {"text": LEDGER_FIRST, "tool": tool, "input": input},
                {"text": LEDGER_ANSWER},
            ]),
        )
    }

    /// Runs `cmd` (the CLI, in the project folder) and requires it to exit 0
    /// having printed the answer.
    fn run(&self, mut cmd: Command, name: &str) {
        cmd.current_dir(&self.project);
        let out = run_agent(cmd, &self.run_dir, name);
        assert_eq!(
            out.code, 0,
            "{name} failed\nstdout:\n{}\nstderr:\n{}",
            out.stdout, out.stderr
        );
        assert!(out.stdout.contains("tenant predicate"), "{}", out.stdout);
    }

    /// Indexes, then requires `deja recall --harness harness` to find the
    /// session first and `deja show` to hold the two answers, the command
    /// and the project folder; returns its id and the first message's text
    /// (what the CLI stored of the question).
    fn assert_read(&self, harness: &str) -> (String, String) {
        let sb = &self.sb;
        sb.ok(&["index"]);
        let found = sb
            .ok(&[
                "recall",
                "ledger tenant predicate join",
                "--harness",
                harness,
                "--json",
            ])
            .json();
        let id = found["hits"][0]["session_id"]
            .as_str()
            .unwrap_or_else(|| panic!("no {harness} hit: {found:#}"))
            .to_string();
        let shown = sb.ok(&["show", &id, "--json"]).json();
        let texts: Vec<&str> = shown["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["text"].as_str().unwrap())
            .collect();
        assert_eq!(texts.len(), 3, "{shown:#}");
        assert_eq!(&texts[1..], [LEDGER_FIRST, LEDGER_ANSWER], "{shown:#}");
        assert_eq!(shown["commands"][0]["command"], LEDGER_COMMAND, "{shown:#}");
        assert_eq!(
            shown["project"]["dir"],
            self.project.to_str().unwrap(),
            "{shown:#}"
        );
        let first = texts[0].to_string();
        (id, first)
    }

    /// The names of the entries of `dir` (under HOME) that `keep` accepts.
    fn entries(&self, dir: &str, keep: impl Fn(&Path) -> bool) -> Vec<String> {
        std::fs::read_dir(self.sb.home.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| keep(p))
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect()
    }

    /// `deja resume id`'s advice.
    fn resume(&self, id: &str) -> String {
        self.sb.ok(&["resume", id]).stdout
    }
}

/// Continue's CLI (`cn` 1.5.47) runs a turn with a shell command against the
/// scripted model and saves the session as Continue does; deja's reader of
/// it, written only in TOML, indexes it: `deja recall` finds the session and
/// `deja show` has what was typed, answered and run.
#[test]
fn continue_cli_sessions_are_read_as_the_cli_writes_them() {
    let l = Ledger::new();
    let server = l.server("Bash", json!({"command": LEDGER_COMMAND}));
    let config = l.sb.write(
        ".continue-test/config.yaml",
        format!(
            "name: local\nversion: 1.0.0\nschema: v1\nmodels:\n  - name: mock\n    provider: openai\n    model: gpt-4o\n    apiBase: {}/v1\n    apiKey: sk-placeholder\n    roles: [chat]\n",
            server.url
        ),
    );
    let mut cmd = l.sb.command_of(&agent_cli("cn"));
    cmd.env("CONTINUE_TELEMETRY_ENABLED", "0")
        .args(["-p", LEDGER_QUESTION, "--auto", "--config"])
        .arg(&config);
    l.run(cmd, "cn");
    // The session file cn wrote, found by an independent look at its folder.
    let files = l.entries(".continue/sessions", |p| {
        p.file_name().is_some_and(|n| n != "sessions.json")
    });
    assert_eq!(files.len(), 1, "{files:?}");
    let file_id = files[0].trim_end_matches(".json");

    let (id, first) = l.assert_read("continue");
    assert_eq!(id, file_id);
    assert_eq!(first, LEDGER_QUESTION);
}

/// Kilo CLI 7.7.7 (a fork of OpenCode) runs a turn with a shell command
/// against the scripted model and writes its SQLite database; deja's reader
/// of it, written only in TOML, indexes the session Kilo just wrote, its
/// write-ahead log included.
#[test]
fn kilo_cli_sessions_are_read_as_kilo_writes_them() {
    let l = Ledger::new();
    let server = l.server(
        "bash",
        json!({"command": LEDGER_COMMAND, "description": "Find the predicate"}),
    );
    l.sb.write(
        ".config/kilo/kilo.json",
        serde_json::to_string_pretty(&json!({
            "provider": {"mock": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Mock",
                "options": {"baseURL": format!("{}/v1", server.url), "apiKey": "sk-placeholder"},
                "models": {"gpt-4o": {"name": "gpt-4o", "tool_call": true}},
            }},
            "model": "mock/gpt-4o",
            "autoupdate": false,
            "share": "disabled",
        }))
        .unwrap(),
    );
    let mut cmd = l.sb.command_of(&agent_cli("kilo"));
    cmd.env("KILO_DISABLE_AUTOUPDATE", "1")
        .env("KILO_DISABLE_MODELS_FETCH", "1")
        .args(["run", "--auto", LEDGER_QUESTION]);
    l.run(cmd, "kilo");
    let db = l.sb.home.join(".local/share/kilo/kilo.db");
    assert!(db.is_file(), "kilo wrote no database at {}", db.display());

    // `kilo run` stores its message argument as given, quotes and all.
    let (id, first) = l.assert_read("kilo");
    assert!(id.starts_with("ses_"), "{id}");
    assert!(first.contains(LEDGER_QUESTION), "{first}");
    let resume = l.resume(&id);
    assert!(resume.contains(&format!("kilo --session {id}")), "{resume}");
}

/// GitHub Copilot CLI 1.0.102, offline with a custom model provider (its
/// `COPILOT_OFFLINE` and `COPILOT_PROVIDER_BASE_URL`), runs a turn with a
/// shell command against the scripted model and writes its session's events;
/// deja's reader of them, written only in TOML, indexes the session.
#[test]
fn copilot_cli_sessions_are_read_as_copilot_writes_them() {
    let l = Ledger::new();
    let server = l.server(
        "bash",
        json!({"command": LEDGER_COMMAND, "description": "Find the predicate"}),
    );
    let mut cmd = l.sb.command_of(&agent_cli("copilot"));
    cmd.env("COPILOT_OFFLINE", "true")
        .env("COPILOT_PROVIDER_BASE_URL", format!("{}/v1", server.url))
        .env("COPILOT_PROVIDER_API_KEY", "sk-placeholder")
        .env("COPILOT_MODEL", "gpt-4o")
        .env("COPILOT_AUTO_UPDATE", "false")
        .env("COPILOT_ALLOW_ALL", "true")
        .args(["-p", LEDGER_QUESTION, "--disable-client-telemetry"]);
    l.run(cmd, "copilot");
    // The session's folder, found by an independent look.
    let folders = l.entries(".copilot/session-state", |p| {
        p.join("events.jsonl").is_file()
    });
    assert_eq!(folders.len(), 1, "{folders:?}");

    let (id, first) = l.assert_read("copilot");
    assert_eq!(id, folders[0]);
    assert_eq!(first, LEDGER_QUESTION);
    let resume = l.resume(&id);
    assert!(
        resume.contains(&format!("copilot --resume={id}")),
        "{resume}"
    );
}

/// Cline CLI 3.0.65, with an OpenAI-compatible provider set by `cline auth`,
/// runs a turn with a shell command against the scripted model and writes
/// the session's messages; deja's reader of them, written only in TOML,
/// indexes the session.
#[test]
fn cline_cli_sessions_are_read_as_cline_writes_them() {
    let l = Ledger::new();
    let server = l.server("run_commands", json!({"commands": [LEDGER_COMMAND]}));
    let cline = agent_cli("cline");
    let mut auth = l.sb.command_of(&cline);
    auth.args([
        "auth",
        "-p",
        "openai",
        "-k",
        "sk-placeholder",
        "-m",
        "gpt-4o",
        "-b",
    ])
    .arg(format!("{}/v1", server.url));
    let out = run_agent(auth, &l.run_dir, "cline-auth");
    assert_eq!(
        out.code, 0,
        "cline auth failed\n{}\n{}",
        out.stdout, out.stderr
    );
    let mut cmd = l.sb.command_of(&cline);
    cmd.arg(LEDGER_QUESTION);
    l.run(cmd, "cline");
    let folders = l.entries(".cline/data/sessions", |_| true);
    assert_eq!(folders.len(), 1, "{folders:?}");

    let (id, first) = l.assert_read("cline");
    assert_eq!(id, folders[0]);
    assert_eq!(first, LEDGER_QUESTION);
}

/// pi 0.73.1, with a provider of its own in `~/.pi/agent/models.json`, runs a
/// turn with a shell command against the scripted model and writes its
/// session file; deja's reader of it, written only in TOML, indexes it.
#[test]
fn pi_sessions_are_read_as_pi_writes_them() {
    let l = Ledger::new();
    let server = l.server("bash", json!({"command": LEDGER_COMMAND}));
    l.sb.write(
        ".pi/agent/models.json",
        json!({"providers": {"mock": {
            "baseUrl": format!("{}/v1", server.url),
            "api": "openai-completions",
            "apiKey": "sk-placeholder",
            "models": [{"id": "gpt-4o"}],
        }}})
        .to_string(),
    );
    let mut cmd = l.sb.command_of(&agent_cli("pi"));
    cmd.env("PI_OFFLINE", "1").args([
        "-p",
        "--provider",
        "mock",
        "--model",
        "gpt-4o",
        LEDGER_QUESTION,
    ]);
    l.run(cmd, "pi");

    let (id, first) = l.assert_read("pi");
    assert_eq!(id.len(), 36, "{id}");
    assert_eq!(first, LEDGER_QUESTION);
}

/// Factory droid 0.225.2, with a model of the user's own in
/// `~/.factory/settings.json` (no Factory login), runs a turn with a shell
/// command against the scripted model and writes its session file; deja's
/// reader of it, written only in TOML, indexes it.
#[test]
fn droid_sessions_are_read_as_droid_writes_them() {
    let droid = clients_dir().join("npm/node_modules/@factory/cli-linux-x64/bin/droid");
    assert!(
        droid.is_file(),
        "droid is not installed in {}; run scripts/fetch-clients first (Linux x64)",
        clients_dir().display()
    );
    let l = Ledger::new();
    let server = l.server(
        "Execute",
        json!({"command": LEDGER_COMMAND, "riskLevel": "low", "riskLevelReason": "read only"}),
    );
    l.sb.write(
        ".factory/settings.json",
        json!({"customModels": [{
            "model": "gpt-4o",
            "displayName": "Mock",
            "baseUrl": format!("{}/v1", server.url),
            "apiKey": "sk-placeholder",
            "provider": "openai",
            "maxOutputTokens": 4096,
        }]})
        .to_string(),
    );
    let mut cmd = l.sb.command_of(&droid);
    cmd.args([
        "exec",
        "--auto",
        "high",
        "-m",
        "custom:gpt-4o",
        LEDGER_QUESTION,
    ]);
    l.run(cmd, "droid");

    let (id, first) = l.assert_read("droid");
    assert_eq!(id.len(), 36, "{id}");
    assert_eq!(first, LEDGER_QUESTION);
    let shown = l.sb.ok(&["show", &id, "--json"]).json();
    assert_eq!(shown["title"], LEDGER_QUESTION, "{shown:#}");
}
