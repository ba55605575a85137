//! Harnesses from PyPI whose only interface is a full-screen terminal
//! program that keeps each session as a JSON file (TunaCode), run for real
//! against the scripted model server in a sandbox HOME: the program gets a
//! pseudo-terminal (`tests/agents/terminal.py`), which types as a person
//! does and waits for what it draws. deja then indexes what the program
//! wrote, and `deja sessions`, `deja show` and `deja recall` must give back
//! exactly what was typed, answered and run, without changing a byte of the
//! harness's folder.

use serde_json::json;

use crate::agents::{conversation, ModelServer};
use crate::harness_runs::{
    in_terminal, pypi_client, second_question_sent_with_first, tree, two_exchanges_steps, Run,
    FIRST_ANSWER, FIRST_QUESTION, SECOND_ANSWER, SECOND_QUESTION,
};

/// TunaCode 0.2.3 (`tunacode`) with a model of the user's own in
/// `~/.config/tunacode.json` (an OpenAI-compatible endpoint at the scripted
/// server; no account): two questions typed in its terminal interface,
/// each answered after a bash call, then `exit`. deja's reader of the
/// session's JSON file, written only in TOML, reads both exchanges and both
/// commands (not the tools' results), the session's folder and times, and
/// leaves TunaCode's folder as it was.
#[test]
fn tunacode_sessions_are_read_as_tunacode_stores_them() {
    let tunacode = pypi_client("tunacode", "tunacode");
    let r = Run::new();
    let server = ModelServer::start(
        &r.run_dir,
        &json!({
            "steps": two_exchanges_steps("bash"),
        }),
    );
    r.sb.write(
        ".config/tunacode.json",
        json!({
            "default_model": "openai:mock-model",
            "env": {
                "OPENAI_API_KEY": "sk-placeholder",
                "OPENAI_BASE_URL": format!("{}/v1", server.url),
            },
        })
        .to_string(),
    );
    // The status bar names the model once TunaCode is ready; `exit` quits.
    let steps = json!([
        {"screen": "mock-model"},
        {"type": FIRST_QUESTION},
        {"keys": "\r"},
        {"screen": FIRST_ANSWER},
        // The turn is over once its speed is drawn (tokens a second).
        {"screen": " t/s"},
        {"type": SECOND_QUESTION},
        {"keys": "\r"},
        {"screen": SECOND_ANSWER},
        {"type": "exit"},
        {"keys": "\r"},
        {"exit": true},
    ]);
    r.run_showing_requests(
        &server,
        in_terminal(&r, "tunacode", &steps, &tunacode, &[]),
        "tunacode",
    );

    // The second question went out with the first exchange, as TunaCode
    // keeps the session.
    let requests = server.requests();
    let asked = conversation(&requests);
    second_question_sent_with_first(&asked);

    let folder = r.sb.home.join(".local/share/tunacode/sessions");
    let files: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    // <project>_<session id>.json
    let id = files[0]
        .strip_suffix(".json")
        .and_then(|stem| stem.split_once('_'))
        .map(|(_, id)| id.to_string())
        .unwrap();
    let before = tree(&folder);

    let (session, _) = r.read_back_two_exchanges("tunacode", &id);
    // Dated by the session's own times, not by its file.
    assert_eq!(session["date_approximate"], false, "{session:#}");
    assert!(tree(&folder) == before, "deja changed TunaCode's folder");
    let resume = r.sb.ok(&["resume", &id]);
    assert_eq!(
        resume.stdout.trim(),
        format!("cd {} && tunacode", r.project.display()),
        "{}",
        resume.stderr
    );
    assert!(resume.stderr.contains("/resume load"), "{}", resume.stderr);
}
