//! Harnesses installed from PyPI (by `scripts/fetch-clients`, each in a
//! virtual environment of its own), run for real against the scripted model
//! server in a sandbox HOME: two turns, the second going on with the first
//! session, each with a shell command and an answer. deja then indexes what
//! the program wrote, and `deja sessions`, `deja show` and `deja recall`
//! must give back exactly what was typed, answered and run.

use std::path::Path;

use serde_json::{json, Value};

use crate::agents::ModelServer;
use crate::harness_runs::{
    pypi_client, read_back, two_exchanges_steps, Run, FIRST_ANSWER, FIRST_COMMAND, FIRST_LOOK,
    FIRST_QUESTION, SECOND_ANSWER, SECOND_COMMAND, SECOND_QUESTION, TWO_EXCHANGES,
};

/// Indexes, then requires exactly one session of `harness`, with id `id`,
/// in the run's project; `deja show` to give `messages` (two of them the
/// person's) and `commands` exactly; and `deja recall` to find it first.
/// Returns what `deja show --json` gave.
fn assert_read(r: &Run, harness: &str, id: &str, messages: &[&str], commands: &[&str]) -> Value {
    let (session, shown) = read_back(&r.sb, harness, id, messages, commands);
    let project = r.project.to_str().unwrap();
    assert_eq!(session["project"]["dir"], project, "{session:#}");
    let user_turns = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .count();
    assert_eq!(user_turns, 2, "{shown:#}");
    assert_eq!(shown["project"]["dir"], project, "{shown:#}");
    shown
}

/// The folders directly in `dir`.
fn folders(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// gptme 0.35.1 (its `local` provider: `OPENAI_BASE_URL`), in its
/// non-interactive mode with tool calls in the `tool` format, runs a turn
/// with a shell command against the scripted model and ends it with its
/// `complete` tool, then goes on with the same conversation (`--name`) for
/// a second turn; deja's reader of it, written only in TOML, reads the one
/// conversation with both turns, without the nudges gptme writes in the
/// person's name and without the tool calls it writes into the answers.
#[test]
fn gptme_conversations_are_read_as_gptme_writes_them() {
    let gptme = pypi_client("gptme", "gptme");
    let r = Run::new();
    // gptme's side requests (the conversation's title) offer no tools and
    // are answered aside.
    let server = ModelServer::start(
        &r.run_dir,
        &json!([
            {"text": FIRST_LOOK, "tool": "shell", "input": {"command": FIRST_COMMAND}},
            {"text": FIRST_ANSWER, "tool": "complete", "input": {}},
            {"tool": "shell", "input": {"command": SECOND_COMMAND}},
            {"text": SECOND_ANSWER, "tool": "complete", "input": {}},
        ]),
    );
    let command = |question: &str, name: Option<&str>| {
        let mut cmd = r.sb.command_of(&gptme);
        cmd.env("OPENAI_BASE_URL", format!("{}/v1", server.url))
            .env("OPENAI_API_KEY", "sk-placeholder")
            .env("GPTME_NO_LOCAL_DISCOVERY", "1")
            .args(["-n", "--tool-format", "tool", "-m", "local/gpt-4o"]);
        if let Some(name) = name {
            cmd.args(["--name", name]);
        }
        cmd.arg(question);
        cmd
    };
    r.run(command(FIRST_QUESTION, None), "gptme", FIRST_ANSWER);
    // The conversation's folder, found by an independent look.
    let logs = r.sb.home.join(".local/share/gptme/logs");
    let names = folders(&logs);
    assert_eq!(names.len(), 1, "{names:?}");
    let name = names[0].clone();
    r.run(
        command(SECOND_QUESTION, Some(&name)),
        "gptme-again",
        SECOND_ANSWER,
    );
    assert_eq!(
        folders(&logs),
        std::slice::from_ref(&name),
        "a second conversation"
    );

    assert_read(
        &r,
        "gptme",
        &name,
        &TWO_EXCHANGES,
        &[FIRST_COMMAND, SECOND_COMMAND],
    );
    let resume = r.sb.ok(&["resume", &name]).stdout;
    assert!(resume.contains(&format!("gptme --name {name}")), "{resume}");
}

/// Kimi CLI 1.51.0, with a provider of the user's own in
/// `~/.kimi/config.toml` (an OpenAI-compatible endpoint), in its print mode,
/// runs a turn with a shell command against the scripted model, then goes on
/// with the same session (`-r <id>`) for a second turn; deja's reader of
/// its wire, written only in TOML, reads the one session with both turns.
#[test]
fn kimi_sessions_are_read_as_kimi_writes_them() {
    let kimi = pypi_client("kimi", "kimi");
    let r = Run::new();
    let server = ModelServer::start(&r.run_dir, &two_exchanges_steps("Shell"));
    r.sb.write(
        ".kimi/config.toml",
        format!(
            "default_model = \"mock\"\n\n[providers.mock]\ntype = \"openai_legacy\"\nbase_url = \"{}/v1\"\napi_key = \"sk-placeholder\"\n\n[models.mock]\nprovider = \"mock\"\nmodel = \"gpt-4o\"\nmax_context_size = 128000\n",
            server.url
        ),
    );
    let command = |question: &str, id: Option<&str>| {
        let mut cmd = r.sb.command_of(&kimi);
        cmd.args(["--print", "--yolo"]);
        if let Some(id) = id {
            cmd.args(["-r", id]);
        }
        cmd.args(["-p", question]);
        cmd
    };
    r.run(command(FIRST_QUESTION, None), "kimi", FIRST_ANSWER);
    // The session's folder, found by an independent look: one folder per
    // working directory, one per session inside.
    let sessions = r.sb.home.join(".kimi/sessions");
    let dirs = folders(&sessions);
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let ids = folders(&sessions.join(&dirs[0]));
    assert_eq!(ids.len(), 1, "{ids:?}");
    let id = ids[0].clone();
    r.run(
        command(SECOND_QUESTION, Some(&id)),
        "kimi-again",
        SECOND_ANSWER,
    );
    assert_eq!(
        folders(&sessions.join(&dirs[0])),
        std::slice::from_ref(&id),
        "a second session"
    );

    assert_read(
        &r,
        "kimi",
        &id,
        &TWO_EXCHANGES,
        &[FIRST_COMMAND, SECOND_COMMAND],
    );
    let resume = r.sb.ok(&["resume", &id]).stdout;
    assert!(resume.contains(&format!("kimi --session {id}")), "{resume}");
}

/// Open Interpreter 0.4.3 (its OpenAI-compatible `--api_base`), in its
/// `--stdin` mode (one message, read from standard input: the program has
/// no non-interactive way to go on with a conversation), runs a shell code
/// block against the scripted model and answers; deja's reader of the
/// conversation file, written only in TOML, reads it as typed and answered.
#[test]
fn open_interpreter_conversations_are_read_as_it_writes_them() {
    let interpreter = pypi_client("open-interpreter", "interpreter");
    let r = Run::new();
    let server = ModelServer::start(
        &r.run_dir,
        &json!([
            {"text": FIRST_LOOK, "tool": "execute",
             "input": {"language": "shell", "code": FIRST_COMMAND}},
            {"text": FIRST_ANSWER},
        ]),
    );
    let question = r.run_dir.join("question.txt");
    std::fs::create_dir_all(&r.run_dir).unwrap();
    std::fs::write(&question, format!("{FIRST_QUESTION}\n")).unwrap();
    let mut cmd = r.sb.command_of(Path::new("/bin/sh"));
    cmd.env("DISABLE_TELEMETRY", "true").arg("-c").arg(format!(
        "exec \"$0\" --stdin --plain -y --model openai/gpt-4o --api_base {}/v1 --api_key sk-placeholder < \"$1\"",
        server.url
    ));
    cmd.arg(&interpreter).arg(&question);
    r.run(cmd, "interpreter", FIRST_ANSWER);
    // The conversation's file, found by an independent look.
    let dir = r.sb.home.join(".config/open-interpreter/conversations");
    let files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let id = files[0].trim_end_matches(".json").to_string();

    let sb = &r.sb;
    sb.ok(&["index"]);
    let listed = sb.ok(&["sessions", "--json"]).json();
    let ours: Vec<&Value> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["harness"] == "open-interpreter")
        .collect();
    assert_eq!(ours.len(), 1, "{listed:#}");
    assert_eq!(ours[0]["id"], id.as_str(), "{listed:#}");
    // The file's name dates it, to the second.
    assert_eq!(ours[0]["date_approximate"], false, "{listed:#}");
    let shown = sb.ok(&["show", &id, "--json"]).json();
    let texts: Vec<&str> = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        [FIRST_QUESTION, FIRST_LOOK, FIRST_ANSWER],
        "{shown:#}"
    );
    assert_eq!(shown["commands"][0]["command"], FIRST_COMMAND, "{shown:#}");
    assert_eq!(shown["commands"].as_array().unwrap().len(), 1, "{shown:#}");
    let found = sb
        .ok(&[
            "recall",
            "ledger tenant predicate join",
            "--harness",
            "open-interpreter",
            "--json",
        ])
        .json();
    assert_eq!(found["hits"][0]["session_id"], id.as_str(), "{found:#}");
}
