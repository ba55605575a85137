//! Harnesses from PyPI that keep every session in one SQLite database
//! (Hermes Agent's `state.db`), run for real against the scripted model
//! server in a sandbox HOME: a question asked from the command line, and a
//! second one going on with the same session. deja then indexes what the
//! program wrote, and `deja sessions`, `deja show` and `deja recall` must
//! give back exactly what was typed, answered and run, without changing a
//! byte of the harness's folder.

use serde_json::json;

use crate::agents::{conversation, ModelServer};
use crate::harness_runs::{
    outcomes, pypi_client, second_question_sent_with_first, tree, two_exchanges_steps, Run,
    FIRST_ANSWER, FIRST_QUESTION, SECOND_ANSWER, SECOND_QUESTION,
};

/// Hermes Agent 0.19.0 (`hermes`) with a custom OpenAI-compatible endpoint
/// of the user's own in `~/.hermes/config.yaml` (the scripted server; no
/// account): `hermes chat -q` asks the first question, answered after a
/// terminal call, and `hermes chat -q ... --resume <id>` the second, in
/// the same session; the title Hermes asks the model for is the server's
/// answer to a request without tools. deja's reader of `state.db`, written
/// only in TOML, reads both exchanges and both commands (not the tools'
/// results), the session's folder, title and times, and leaves Hermes's
/// folder as it was.
#[test]
fn hermes_agent_sessions_are_read_as_hermes_stores_them() {
    let hermes = pypi_client("hermes-agent", "hermes");
    let r = Run::new();
    const TITLE: &str = "Tenant rows in the ledger";
    let server = ModelServer::start(
        &r.run_dir,
        &json!({
            "side_text": TITLE,
            "steps": two_exchanges_steps("terminal"),
        }),
    );
    r.sb.write(
        ".hermes/config.yaml",
        format!(
            "model:\n  provider: custom\n  base_url: {}/v1\n  default: mock-model\n  api_key: sk-placeholder\n",
            server.url
        ),
    );
    let command = |args: &[&str]| {
        let mut cmd = r.sb.command_of(&hermes);
        cmd.arg("chat").args(args);
        cmd
    };
    r.run(command(&["-q", FIRST_QUESTION]), "hermes", FIRST_ANSWER);
    // It ends by saying how to go on: `hermes --resume <id>`.
    let printed = std::fs::read_to_string(r.run_dir.join("hermes.stdout")).unwrap();
    let id = printed
        .split("hermes --resume ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no session id in:\n{printed}"))
        .to_string();
    r.run(
        command(&["-q", SECOND_QUESTION, "--resume", &id]),
        "hermes-again",
        SECOND_ANSWER,
    );

    // The second question went out with the first exchange, as Hermes
    // keeps the session.
    let requests = server.requests();
    let asked = conversation(&requests);
    second_question_sent_with_first(&asked);

    let folder = r.sb.home.join(".hermes");
    assert!(folder.join("state.db").is_file());
    let before = tree(&folder);
    let (session, shown) = r.read_back_two_exchanges("hermes-agent", &id);
    assert_eq!(session["title"], TITLE, "{session:#}");
    // Dated by the session's own times, not by its file.
    assert_eq!(session["date_approximate"], false, "{session:#}");
    // grep found nothing (exit code 1), ls succeeded, as the terminal
    // tool's results say.
    assert_eq!(
        outcomes(&shown),
        [("failed", 1), ("succeeded", 0)],
        "{shown:#}"
    );
    assert!(tree(&folder) == before, "deja changed Hermes's folder");
    let resume = r.sb.ok(&["resume", &id]);
    assert_eq!(
        resume.stdout.trim(),
        format!("cd {} && hermes --resume {id}", r.project.display()),
        "{}",
        resume.stderr
    );
}
