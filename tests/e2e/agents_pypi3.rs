//! Harnesses from PyPI that keep a session as a folder of files (Mistral
//! Vibe's session store, OpenHands' event files), run for real against the scripted model server in a
//! sandbox HOME: two turns of one session, the second going on with the
//! first. deja then indexes what the program wrote, and `deja sessions`,
//! `deja show` and `deja recall` must give back exactly what was typed,
//! answered and run, without changing a byte of the harness's folder.

use serde_json::{json, Value};

use crate::agents::ModelServer;
use crate::harness_runs::{
    asked, pypi_client, read_back, shown_texts, tree, two_exchanges_steps, Run, FIRST_ANSWER,
    FIRST_COMMAND, FIRST_LOOK, FIRST_QUESTION, SECOND_ANSWER, SECOND_COMMAND, SECOND_QUESTION,
    TWO_EXCHANGES,
};

/// Mistral Vibe 3.0.2, with a provider of the user's own in
/// `~/.vibe/config.toml` (no account), answers a prompt in headless mode
/// (`vibe -p`) after running a shell command through its `bash` tool, then
/// goes on with the same session (`vibe -c -p`) and runs another; deja's
/// native reader follows the session store's `CURRENT` file to the chunks
/// of its latest snapshot and reads both turns, with the commands and their
/// exit codes, in the folder Vibe ran in, and leaves Vibe's folder as it was.
#[test]
fn mistral_vibe_sessions_are_read_as_vibe_stores_them() {
    let vibe = pypi_client("vibe", "vibe");
    let r = Run::new();
    let server = ModelServer::start(&r.run_dir, &two_exchanges_steps("bash"));
    r.sb.write(
        ".vibe/config.toml",
        format!(
            "active_model = \"mock\"\n\n[[providers]]\nname = \"mock\"\napi_base = \"{}/v1\"\n\
             api_key_env_var = \"MOCK_KEY\"\napi_style = \"openai\"\n\n[[models]]\n\
             name = \"gpt-4o\"\nprovider = \"mock\"\nalias = \"mock\"\n",
            server.url
        ),
    );
    let command = |args: &[&str]| {
        let mut cmd = r.sb.command_of(&vibe);
        cmd.env("MOCK_KEY", "sk-placeholder")
            .args(["--auto-approve", "--trust"])
            .args(args);
        cmd
    };
    r.run(command(&["-p", FIRST_QUESTION]), "vibe", FIRST_ANSWER);
    r.run(
        command(&["-c", "-p", SECOND_QUESTION]),
        "vibe-again",
        SECOND_ANSWER,
    );

    // The session's id: its folder in the store, found by an independent look.
    let folder = r.sb.home.join(".vibe/logs/session");
    let unified = folder.join("unified");
    let ids: Vec<String> = std::fs::read_dir(&unified)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("CURRENT").is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(ids.len(), 1, "{ids:?}");
    let id = &ids[0];
    let before = tree(&folder);

    let (session, shown) = read_back(
        &r.sb,
        "vibe",
        id,
        &TWO_EXCHANGES,
        &[FIRST_COMMAND, SECOND_COMMAND],
    );
    let dir = std::fs::canonicalize(&r.project).unwrap();
    assert_eq!(shown["project"]["dir"], dir.to_str().unwrap(), "{shown:#}");
    assert!(session["parent_id"].is_null(), "{session:#}");
    assert_eq!(
        asked(&shown),
        [FIRST_QUESTION, SECOND_QUESTION],
        "{shown:#}"
    );
    assert!(tree(&folder) == before, "deja changed Vibe's folder");
    let resume = r.sb.ok(&["resume", id]).stdout;
    assert!(resume.contains(&format!("vibe --resume {id}")), "{resume}");
}

/// OpenHands CLI 1.16.0, with a model of the user's own given by
/// `LLM_MODEL`, `LLM_API_KEY` and `LLM_BASE_URL` (`--override-with-envs`,
/// no account), answers a task in headless mode after running a command in
/// its terminal, then goes on with the same conversation (`--resume <id>`),
/// where its `task` tool runs a sub-agent that runs a command of its own.
/// deja's reader of the event files, written only in TOML, reads the
/// conversation with both turns and only its own command, and the
/// sub-agent's as a child of it, and leaves OpenHands' folder as it was.
#[test]
fn openhands_conversations_are_read_as_openhands_writes_them() {
    let openhands = pypi_client("openhands", "openhands");
    let r = Run::new();
    const SUB_TASK: &str = "List the migrations of the ledger.";
    const SUB_ANSWER: &str = "The migrations folder holds 0042_tenant.sql.";
    let server = ModelServer::start(
        &r.run_dir,
        &json!([
            {"text": FIRST_LOOK, "tool": "terminal",
             "input": {"command": FIRST_COMMAND, "security_risk": "LOW"}},
            {"text": FIRST_ANSWER},
            {"tool": "task", "input": {"prompt": SUB_TASK,
             "description": "List ledger migrations", "security_risk": "LOW"}},
            {"tool": "terminal", "input": {"command": SECOND_COMMAND, "security_risk": "LOW"}},
            {"text": SUB_ANSWER},
            {"text": SECOND_ANSWER},
        ]),
    );
    let command = |args: &[&str]| {
        let mut cmd = r.sb.command_of(&openhands);
        cmd.env("LLM_API_KEY", "sk-placeholder")
            .env("LLM_MODEL", "openai/gpt-4o")
            .env("LLM_BASE_URL", format!("{}/v1", server.url))
            .env("OPENHANDS_SUPPRESS_BANNER", "1")
            // LiteLLM's price list from the package, not the network.
            .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            .args(["--headless", "--override-with-envs"])
            .args(args);
        cmd
    };
    r.run(command(&["-t", FIRST_QUESTION]), "openhands", FIRST_ANSWER);

    // The conversation's id: its folder, found by an independent look.
    let folder = r.sb.home.join(".openhands/conversations");
    let ids: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("base_state.json").is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(ids.len(), 1, "{ids:?}");
    let id = ids[0].clone();
    r.run(
        command(&["--resume", &id, "-t", SECOND_QUESTION]),
        "openhands-again",
        SECOND_ANSWER,
    );
    let subagents: Vec<String> = std::fs::read_dir(folder.join(&id).join("subagents"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(subagents.len(), 1, "{subagents:?}");
    let sub = &subagents[0];
    let before = tree(&folder);

    r.sb.ok(&["index"]);
    let listed = r.sb.ok(&["sessions", "--json"]).json();
    let ours: Vec<&Value> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["harness"] == "openhands")
        .collect();
    assert_eq!(ours.len(), 2, "{listed:#}");
    let parent = ours.iter().find(|s| s["id"] == id.as_str()).unwrap();
    assert!(parent["parent_id"].is_null(), "{listed:#}");
    let child = ours.iter().find(|s| s["id"] == sub.as_str()).unwrap();
    assert_eq!(child["parent_id"], id.as_str(), "{listed:#}");

    let shown = r.sb.ok(&["show", &id, "--json"]).json();
    assert_eq!(
        shown_texts(&shown),
        (
            vec![
                FIRST_QUESTION,
                FIRST_LOOK,
                FIRST_ANSWER,
                SECOND_QUESTION,
                SECOND_ANSWER
            ],
            vec![FIRST_COMMAND]
        ),
        "{shown:#}"
    );
    assert_eq!(asked(&shown), [FIRST_QUESTION, SECOND_QUESTION]);
    let dir = std::fs::canonicalize(&r.project).unwrap();
    assert_eq!(shown["project"]["dir"], dir.to_str().unwrap(), "{shown:#}");
    let shown = r.sb.ok(&["show", sub, "--json"]).json();
    assert_eq!(
        shown_texts(&shown),
        (vec![SUB_TASK, SUB_ANSWER], vec![SECOND_COMMAND]),
        "{shown:#}"
    );

    let found =
        r.sb.ok(&[
            "recall",
            "ledger tenant predicate join",
            "--harness",
            "openhands",
            "--json",
        ])
        .json();
    assert_eq!(found["hits"][0]["session_id"], id.as_str(), "{found:#}");
    assert!(tree(&folder) == before, "deja changed OpenHands' folder");
    let resume = r.sb.ok(&["resume", &id]).stdout;
    assert!(
        resume.contains(&format!("openhands --resume {id}")),
        "{resume}"
    );
}
