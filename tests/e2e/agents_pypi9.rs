//! Harnesses from PyPI whose conversation is typed in a terminal interface
//! that hands the work to a local server of its own (klaude-code), run for
//! real against the scripted model server in a sandbox HOME: the program
//! gets a pseudo-terminal (`tests/agents/terminal.py`), which types as a
//! person does and waits for what it draws. deja then indexes what the
//! program wrote, and `deja sessions`, `deja show` and `deja recall` must
//! give back exactly what was typed, answered and run, without changing a
//! byte of the harness's folder.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::agents::{body, conversation, ModelServer};
use crate::harness_runs::{
    in_terminal, outcomes, pypi_client, second_question_sent_with_first, tree, Run, FIRST_ANSWER,
    FIRST_COMMAND, FIRST_LOOK, FIRST_QUESTION, SECOND_ANSWER, SECOND_COMMAND, SECOND_QUESTION,
};

/// Stops the server klaude started in the sandbox (it outlives the
/// terminal interface), also when the test fails.
struct KlaudeServer<'a> {
    run: &'a Run,
    klaude: &'a Path,
}

impl Drop for KlaudeServer<'_> {
    fn drop(&mut self) {
        let _ = self
            .run
            .sb
            .command_of(self.klaude)
            .args(["server", "stop"])
            .output();
    }
}

/// klaude-code 2.43.0 (`klaude`) with a provider of the user's own in
/// `~/.klaude/klaude-config.yaml` (the OpenAI protocol at the scripted
/// server; no account): two questions typed in its terminal interface, each
/// answered after a Bash call, then `exit`. deja's reader of the session's
/// events.jsonl, written only in TOML, reads both exchanges and both
/// commands (not klaude's reminders, nor its prompt suggestions), the
/// session's folder and title from meta.json, and leaves klaude's folder
/// as it was.
#[test]
fn klaude_code_sessions_are_read_as_klaude_stores_them() {
    let klaude = pypi_client("klaude-code", "klaude");
    let r = Run::new();
    const TITLE: &str = "Tenant rows in the ledger";
    // After each turn klaude asks, with its tools offered, for a
    // suggestion of what to type next, and shows it in its input box once
    // the turn is over: a question typed before is lost. Each gets a
    // suggestion of its own, for the steps to wait for.
    const SUGGESTING: &str = "Reply with ONLY the suggestion text";
    const NEXT: &str = "show the migrations";
    const LAST: &str = "close the ticket";
    let server = ModelServer::start(
        &r.run_dir,
        &json!({
            // It names the session with a request of no tools.
            "side_text": TITLE,
            "steps": [
                {"text": FIRST_LOOK, "tool": "Bash", "input": {"command": FIRST_COMMAND},
                 "no_match": SUGGESTING},
                {"text": FIRST_ANSWER, "no_match": SUGGESTING},
                {"text": NEXT, "match": SUGGESTING},
                {"tool": "Bash", "input": {"command": SECOND_COMMAND}, "no_match": SUGGESTING},
                {"text": SECOND_ANSWER, "no_match": SUGGESTING},
                {"text": LAST, "match": SUGGESTING},
            ],
        }),
    );
    r.sb.write(
        ".klaude/klaude-config.yaml",
        format!(
            "main_model: mock-model@local\n\
             provider_list:\n\
             \x20 - provider_name: local\n\
             \x20   protocol: openai\n\
             \x20   base_url: {}/v1\n\
             \x20   api_key: sk-placeholder\n\
             \x20   model_list:\n\
             \x20     - model_name: mock-model\n",
            server.url
        ),
    );
    let _stop = KlaudeServer {
        run: &r,
        klaude: &klaude,
    };
    // klaude takes what is typed once the session is prepared, when it
    // lists the skills it has (skill-creator last); `exit` quits.
    let steps = json!([
        {"screen": "skill-creator"},
        {"type": FIRST_QUESTION},
        {"keys": "\r"},
        {"screen": NEXT},
        {"type": SECOND_QUESTION},
        {"keys": "\r"},
        {"screen": LAST},
        {"type": "exit"},
        {"keys": "\r"},
        {"exit": true},
    ]);
    r.run_showing_requests(
        &server,
        in_terminal(&r, "klaude", &steps, &klaude, &[]),
        "klaude",
    );

    // The second question went out with the first exchange, as klaude
    // keeps the session.
    let requests = server.requests();
    let asked: Vec<&serde_json::Value> = conversation(&requests)
        .into_iter()
        .filter(|r| !body(r).contains(SUGGESTING))
        .collect();
    second_question_sent_with_first(&asked);

    let folder = r.sb.home.join(".klaude/projects");
    let sessions: Vec<PathBuf> = std::fs::read_dir(
        folder
            .read_dir()
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path()
            .join("sessions"),
    )
    .unwrap()
    .map(|e| e.unwrap().path())
    .collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let id = sessions[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let before = tree(&folder);

    let (session, shown) = r.read_back_two_exchanges("klaude-code", &id);
    // grep finds nothing in the empty project (exit code 1); ls does.
    assert_eq!(
        outcomes(&shown),
        [("failed", 1), ("succeeded", 0)],
        "{shown:#}"
    );
    assert_eq!(session["title"], TITLE, "{session:#}");
    assert!(tree(&folder) == before, "deja changed klaude's folder");
    let resume = r.sb.ok(&["resume", &id]).stdout;
    assert!(
        resume.contains(&format!("klaude --resume {id}")),
        "{resume}"
    );
}
