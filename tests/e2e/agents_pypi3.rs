//! Harnesses from PyPI that keep their sessions in a store of their own
//! (Mistral Vibe), run for real against the scripted model server in a
//! sandbox HOME: two turns of one session, the second going on with the
//! first. deja then indexes what the program wrote, and `deja sessions`,
//! `deja show` and `deja recall` must give back exactly what was typed,
//! answered and run, without changing a byte of the harness's folder.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::agents::ModelServer;
use crate::harness_runs::{
    pypi_client, read_back, Run, FIRST_ANSWER, FIRST_COMMAND, FIRST_LOOK, FIRST_QUESTION,
    SECOND_ANSWER, SECOND_COMMAND, SECOND_QUESTION,
};

/// Every file below `dir` with its bytes, sorted.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut all = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                all.push((path, bytes));
            }
        }
    }
    all.sort();
    all
}

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
    let server = ModelServer::start(
        &r.run_dir,
        &json!([
            {"text": FIRST_LOOK, "tool": "bash", "input": {"command": FIRST_COMMAND}},
            {"text": FIRST_ANSWER},
            {"tool": "bash", "input": {"command": SECOND_COMMAND}},
            {"text": SECOND_ANSWER},
        ]),
    );
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
        &[
            FIRST_QUESTION,
            FIRST_LOOK,
            FIRST_ANSWER,
            SECOND_QUESTION,
            SECOND_ANSWER,
        ],
        &[FIRST_COMMAND, SECOND_COMMAND],
    );
    let dir = std::fs::canonicalize(&r.project).unwrap();
    assert_eq!(shown["project"]["dir"], dir.to_str().unwrap(), "{shown:#}");
    assert!(session["parent_id"].is_null(), "{session:#}");
    let users: Vec<&str> = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(users, [FIRST_QUESTION, SECOND_QUESTION], "{shown:#}");
    assert!(tree(&folder) == before, "deja changed Vibe's folder");
    let resume = r.sb.ok(&["resume", id]).stdout;
    assert!(resume.contains(&format!("vibe --resume {id}")), "{resume}");
}
