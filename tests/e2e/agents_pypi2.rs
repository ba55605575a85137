//! More harnesses installed from PyPI (by `scripts/fetch-clients`, each in
//! a virtual environment of its own), run for real against the scripted
//! model server in a sandbox HOME: two turns of one conversation, the
//! second going on with the first (one turn where the program has no way
//! to go on with a run). deja then indexes what the program
//! wrote, and `deja sessions`, `deja show` and `deja recall` must give back
//! exactly what was typed, answered and run.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::agents::ModelServer;
use crate::common::Sandbox;
use crate::harness_runs::{
    pypi_client, read_back, run_in as run, two_exchanges_steps, Run, FIRST_ANSWER, FIRST_COMMAND,
    FIRST_LOOK, FIRST_QUESTION, SECOND_ANSWER, SECOND_COMMAND, SECOND_QUESTION, TWO_EXCHANGES,
};

/// A sandbox (embeddings off), the folder the model server and the runs
/// write to, and the project folder the harness runs in.
fn sandbox() -> (Sandbox, PathBuf, PathBuf) {
    let r = Run::new();
    (r.sb, r.run_dir, r.project)
}

/// Indexes, then requires exactly one session of `harness`, with id `id`;
/// `deja show` to give `messages` (the person's words at `user_at`) and
/// `commands` exactly; and `deja recall` to find it first.
fn assert_read(
    sb: &Sandbox,
    harness: &str,
    id: &str,
    messages: &[&str],
    user_at: &[usize],
    commands: &[&str],
) {
    let (_, shown) = read_back(sb, harness, id, messages, commands);
    let users: Vec<usize> = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, m)| m["role"] == "user")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(users, user_at, "{shown:#}");
}

/// LLM 0.36 (an OpenAI-compatible model of the user's own in its
/// `extra-openai-models.yaml`), with a system prompt and its `llm_version`
/// tool, answers a prompt against the scripted model after a tool call,
/// then goes on with the same conversation (`-c`); deja's reader of its
/// `logs.db`, written only in TOML, reads the one conversation with both
/// turns, without the system prompt or the tool's result, and leaves
/// LLM's folder as it was.
#[test]
fn llm_conversations_are_read_as_llm_logs_them() {
    let llm = pypi_client("llm", "llm");
    let (sb, run_dir, project) = sandbox();
    let server = ModelServer::start(
        &run_dir,
        &json!({
            // The second turn offers no tools.
            "require_tools": false,
            "steps": [
                {"text": FIRST_LOOK, "tool": "llm_version", "input": {}},
                {"text": FIRST_ANSWER},
                {"text": SECOND_ANSWER},
            ],
        }),
    );
    sb.write(
        ".config/io.datasette.llm/extra-openai-models.yaml",
        format!(
            "- model_id: mock\n  model_name: gpt-4o\n  api_base: \"{}/v1\"\n  supports_tools: true\n",
            server.url
        ),
    );
    let mut first = sb.command_of(&llm);
    first.args([
        "-m",
        "mock",
        "--key",
        "sk-placeholder",
        "-s",
        "Answer in one sentence.",
        "-T",
        "llm_version",
        FIRST_QUESTION,
    ]);
    run(first, &project, &run_dir, "llm", FIRST_ANSWER);
    let mut second = sb.command_of(&llm);
    second.args(["-c", "--key", "sk-placeholder", SECOND_QUESTION]);
    run(second, &project, &run_dir, "llm-again", SECOND_ANSWER);

    // The conversation's id, found by an independent look (read-only).
    let folder = sb.home.join(".config/io.datasette.llm");
    let db = folder.join("logs.db");
    let ids = Command::new("python3")
        .arg("-c")
        .arg(
            "import sqlite3, sys\n\
             c = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)\n\
             print('\\n'.join(r[0] for r in c.execute('SELECT id FROM threads')))",
        )
        .arg(&db)
        .output()
        .unwrap();
    assert!(ids.status.success(), "{ids:?}");
    let ids = String::from_utf8(ids.stdout).unwrap();
    let ids: Vec<&str> = ids.lines().collect();
    assert_eq!(ids.len(), 1, "{ids:?}");
    let id = ids[0];
    let files = |dir: &Path| {
        let mut all: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .map(|p| {
                let bytes = std::fs::read(&p).unwrap();
                (p.file_name().unwrap().to_string_lossy().into_owned(), bytes)
            })
            .collect();
        all.sort();
        all
    };
    let before = files(&folder);

    assert_read(&sb, "llm", id, &TWO_EXCHANGES, &[0, 3], &[]);
    assert!(files(&folder) == before, "deja changed LLM's folder");
    let resume = sb.ok(&["resume", id]).stdout;
    assert!(resume.contains(&format!("llm chat --cid {id}")), "{resume}");
}

/// ShellGPT 1.5.1 (`API_BASE_URL`), with its default functions installed
/// (`sgpt --install-functions`), runs a chat (`sgpt --chat ledger`) of two
/// turns against the scripted model, each running a shell command through
/// its `execute_shell_command` function; deja's reader of the chat file,
/// written only in TOML, found in the temporary folder as sgpt finds it,
/// reads both turns, with the commands as command records.
#[test]
fn shell_gpt_chats_are_read_as_sgpt_writes_them() {
    let sgpt = pypi_client("shell-gpt", "sgpt");
    let (mut sb, run_dir, project) = sandbox();
    let server = ModelServer::start(
        &run_dir,
        &json!([
            {"text": FIRST_LOOK, "tool": "execute_shell_command",
             "input": {"shell_command": FIRST_COMMAND}},
            {"text": FIRST_ANSWER},
            {"tool": "execute_shell_command", "input": {"shell_command": SECOND_COMMAND}},
            {"text": SECOND_ANSWER},
        ]),
    );
    // Python's temporary folder, for sgpt and for deja.
    let tmp = sb.home.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    sb.env("TMPDIR", &tmp);
    let command = |args: &[&str]| {
        let mut cmd = sb.command_of(&sgpt);
        cmd.env("OPENAI_API_KEY", "sk-placeholder")
            .env("API_BASE_URL", format!("{}/v1", server.url))
            .env("DEFAULT_MODEL", "gpt-4o")
            .args(args);
        cmd
    };
    run(
        command(&["--install-functions"]),
        &project,
        &run_dir,
        "sgpt-functions",
        "execute_shell.py",
    );
    run(
        command(&["--chat", "ledger", FIRST_QUESTION]),
        &project,
        &run_dir,
        "sgpt",
        FIRST_ANSWER,
    );
    run(
        command(&["--chat", "ledger", SECOND_QUESTION]),
        &project,
        &run_dir,
        "sgpt-again",
        SECOND_ANSWER,
    );
    // The chat's file, found by an independent look.
    let chats: Vec<String> = std::fs::read_dir(tmp.join("chat_cache"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(chats, ["ledger"]);

    let first_answer = format!("{FIRST_LOOK}\n\n{FIRST_ANSWER}");
    assert_read(
        &sb,
        "shell-gpt",
        "ledger",
        &[
            FIRST_QUESTION,
            &first_answer,
            SECOND_QUESTION,
            SECOND_ANSWER,
        ],
        &[0, 2],
        &[FIRST_COMMAND, SECOND_COMMAND],
    );
    let resume = sb.ok(&["resume", "ledger"]).stdout;
    assert!(resume.contains("sgpt --repl ledger"), "{resume}");
}

/// mini-swe-agent 2.4.6 (litellm's `openai/` provider with the scripted
/// model's `api_base`), without confirmations and exiting when the model
/// ends the run, works a task with a shell command and answers; deja's
/// reader of the trajectory it leaves, written only in TOML, reads the
/// task as typed (without mini's instructions around it), the answers and
/// the commands. mini has no way to go on with a run: one turn.
#[test]
fn mini_swe_agent_runs_are_read_as_mini_writes_them() {
    let mini = pypi_client("mini-swe-agent", "mini");
    let (sb, run_dir, project) = sandbox();
    let server = ModelServer::start(
        &run_dir,
        &json!([
            {"text": FIRST_LOOK, "tool": "bash", "input": {"command": FIRST_COMMAND}},
            {"text": FIRST_ANSWER, "tool": "bash",
             "input": {"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}},
        ]),
    );
    let mut cmd = sb.command_of(&mini);
    cmd.env("OPENAI_API_KEY", "sk-placeholder")
        // No set-up questions, and litellm's cost map from its package.
        .env("MSWEA_CONFIGURED", "true")
        .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        .args([
            "-y",
            "--exit-immediately",
            "-m",
            "openai/gpt-4o",
            "-c",
            "mini.yaml",
            "-c",
            &format!("model.model_kwargs.api_base={}/v1", server.url),
            "-c",
            "model.cost_tracking=ignore_errors",
            "-t",
            FIRST_QUESTION,
        ]);
    run(cmd, &project, &run_dir, "mini", FIRST_ANSWER);
    // The trajectory, found by an independent look.
    let dir = sb.home.join(".config/mini-swe-agent");
    let trajectories: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".traj.json"))
        .collect();
    assert_eq!(trajectories, ["last_mini_run.traj.json"]);

    sb.ok(&["index"]);
    let listed = sb.ok(&["sessions", "--json"]).json();
    let ours: Vec<&Value> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["harness"] == "mini-swe-agent")
        .collect();
    assert_eq!(ours.len(), 1, "{listed:#}");
    assert_eq!(ours[0]["id"], "last_mini_run.traj", "{listed:#}");
    let shown = sb.ok(&["show", "last_mini_run.traj", "--json"]).json();
    let texts: Vec<(&str, &str)> = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["role"].as_str().unwrap(), m["text"].as_str().unwrap()))
        .collect();
    assert_eq!(
        texts,
        [
            ("user", FIRST_QUESTION),
            ("assistant", FIRST_LOOK),
            ("assistant", FIRST_ANSWER)
        ],
        "{shown:#}"
    );
    let ran: Vec<&str> = shown["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["command"].as_str().unwrap())
        .collect();
    assert_eq!(
        ran,
        [FIRST_COMMAND, "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"],
        "{shown:#}"
    );
    let found = sb
        .ok(&[
            "recall",
            "ledger tenant predicate join",
            "--harness",
            "mini-swe-agent",
            "--json",
        ])
        .json();
    assert_eq!(
        found["hits"][0]["session_id"], "last_mini_run.traj",
        "{found:#}"
    );
}

/// Code Puppy 0.0.946 (a `custom_openai` model of the user's own in its
/// `extra_models.json`), in its single-prompt mode (`-p`, YOLO), runs a
/// turn with a shell command against the scripted model, then goes on with
/// the same session (`--resume <name>`) for a second turn; deja's reader of
/// its automatic save, written only in TOML, reads the one session with
/// both turns, in the folder it ran in.
#[test]
fn code_puppy_sessions_are_read_as_code_puppy_saves_them() {
    let puppy = pypi_client("code-puppy", "code-puppy");
    let (sb, run_dir, project) = sandbox();
    let server = ModelServer::start(&run_dir, &two_exchanges_steps("shell"));
    sb.write(
        ".code_puppy/extra_models.json",
        json!({"mock": {
            "type": "custom_openai",
            "name": "gpt-4o",
            "custom_endpoint": {"url": format!("{}/v1", server.url), "api_key": "sk-placeholder"},
            "context_length": 128000,
        }})
        .to_string(),
    );
    // The names its first run asks for.
    sb.write(
        ".code_puppy/puppy.cfg",
        "[puppy]\npuppy_name = Rex\nowner_name = Ana\nmodel = mock\n",
    );
    let command = |question: &str, name: Option<&str>| {
        let mut cmd = sb.command_of(&puppy);
        cmd.args(["-p", question, "-m", "mock", "--yolo", "true"]);
        if let Some(name) = name {
            cmd.args(["--resume", name]);
        }
        cmd
    };
    run(
        command(FIRST_QUESTION, None),
        &project,
        &run_dir,
        "code-puppy",
        FIRST_ANSWER,
    );
    // The save, found by an independent look.
    let saves = sb.home.join(".code_puppy/autosaves");
    let names = || -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&saves)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".json") && !n.ends_with("_meta.json"))
            .map(|n| n.trim_end_matches(".json").to_string())
            .collect();
        names.sort();
        names
    };
    let first = names();
    assert_eq!(first.len(), 1, "{first:?}");
    let name = first[0].clone();
    run(
        command(SECOND_QUESTION, Some(&name)),
        &project,
        &run_dir,
        "code-puppy-again",
        SECOND_ANSWER,
    );
    assert_eq!(names(), first, "a second session");

    assert_read(
        &sb,
        "code-puppy",
        &name,
        &TWO_EXCHANGES,
        &[0, 3],
        &[FIRST_COMMAND, SECOND_COMMAND],
    );
    let shown = sb.ok(&["show", &name, "--json"]).json();
    let dir = std::fs::canonicalize(&project).unwrap();
    assert_eq!(shown["project"]["dir"], dir.to_str().unwrap(), "{shown:#}");
    let resume = sb.ok(&["resume", &name]).stdout;
    assert!(
        resume.contains(&format!("code-puppy --resume {name}")),
        "{resume}"
    );
}
