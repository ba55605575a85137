//! Harnesses from PyPI that talk to Ollama and are full-screen terminal
//! programs with no headless mode (oterm), run for real against the
//! scripted model server, which answers Ollama's own API beside the chat,
//! in a sandbox HOME: each run gets a pseudo-terminal of its own
//! (`tests/agents/terminal.py`), which types and clicks as a person does
//! and waits for what the program draws. deja then indexes what the
//! program wrote, and `deja sessions`, `deja show` and `deja recall` must
//! give back exactly what was typed and answered, without changing a byte
//! of the harness's folder.

use serde_json::{json, Value};

use crate::agents::conversation;
use crate::harness_runs::{
    asked_ollama_for_models, in_terminal, pypi_client, read_back, roles, sent, toolless_server,
    tree, Run, FIRST_ANSWER, FIRST_EXCHANGE_THEN_SECOND, FIRST_QUESTION, SECOND_ANSWER,
    SECOND_QUESTION, TWO_ANSWERS, TWO_ANSWERS_ROLES,
};

/// A left click at column `col`, row `row` of the terminal (1-based), as
/// a terminal reports it to a program that asked for the mouse (SGR).
fn click(col: u32, row: u32) -> Value {
    json!({"keys": format!("\u{1b}[<0;{col};{row}M\u{1b}[<0;{col};{row}m")})
}

/// oterm 0.26.1 with its default provider, Ollama, at `OLLAMA_URL` (the
/// scripted server: the model list, the model's details, and the chat
/// through Ollama's OpenAI-compatible endpoint; no account): a new chat
/// (ctrl+n, the model picked from the list, Save) answers a question;
/// started again, it opens the chat as a tab and answers a second one.
/// deja's reader of its `store.db`, written only in TOML, reads the one
/// chat with both exchanges, and leaves oterm's folder as it was.
#[test]
fn oterm_chats_are_read_as_oterm_stores_them() {
    let oterm = pypi_client("oterm", "oterm");
    let r = Run::new();
    const MODEL: &str = "llama3.2:latest";
    // No tool is picked for the chat: none is offered.
    let server = toolless_server(&r, Some(MODEL));
    let folder = r.sb.home.join(".local/share/oterm");
    // Without the splash screen's animation (a setting of the user's).
    r.sb.write(
        ".local/share/oterm/config.json",
        "{\"splash-screen\": false}",
    );
    let db = folder.join("store.db");
    let db_text = db.to_str().unwrap();
    // On the 160 x 40 screen of the new chat's dialog, the model list's
    // first entry is on row 14 and Save on row 36. Save is enabled once
    // the model's details are in: its capabilities (vision, 👁️) are drawn
    // then. An answer is in the database once oterm has committed it,
    // after it is drawn; ctrl+q quits.
    let first = json!([
        {"screen": "Press Ctrl+N"},
        {"keys": "\u{e}"},
        {"screen": MODEL},
        click(10, 14),
        {"screen": "\u{1f441}"},
        click(12, 36),
        {"screen": format!("model: {MODEL}")},
        {"type": FIRST_QUESTION},
        {"keys": "\r"},
        {"screen": FIRST_ANSWER},
        {"file": db_text, "contains": FIRST_ANSWER},
        {"keys": "\u{11}"},
        {"exit": true},
    ]);
    // Started again, oterm opens every chat as a tab, the prompt focused.
    let second = json!([
        {"screen": FIRST_ANSWER},
        {"type": SECOND_QUESTION},
        {"keys": "\r"},
        {"screen": SECOND_ANSWER},
        {"file": db_text, "contains": SECOND_ANSWER},
        {"keys": "\u{11}"},
        {"exit": true},
    ]);
    let command = |name: &str, steps: &Value| {
        let mut cmd = in_terminal(&r, name, steps, &oterm, &[]);
        cmd.env("OLLAMA_URL", &server.url);
        cmd
    };
    r.run(command("oterm", &first), "oterm", FIRST_ANSWER);
    r.run(
        command("oterm-again", &second),
        "oterm-again",
        SECOND_ANSWER,
    );

    // oterm asked Ollama for its models and the model's details, and the
    // second question went out with the chat as oterm keeps it.
    let requests = server.requests();
    asked_ollama_for_models(&requests);
    let asked = conversation(&requests);
    assert_eq!(asked.len(), 2, "{requests:#?}");
    assert_eq!(asked[1]["body"]["model"], MODEL, "{requests:#?}");
    assert_eq!(sent(asked[1]), FIRST_EXCHANGE_THEN_SECOND, "{requests:#?}");
    let before = tree(&folder);

    let (session, shown) = read_back(&r.sb, "oterm", "oterm-1", &TWO_ANSWERS, &[]);
    assert_eq!(roles(&shown), TWO_ANSWERS_ROLES, "{shown:#}");
    // `chat #1 - llama3.2:latest` is the name oterm gives a new chat: no
    // title. oterm keeps no working directory and no time: no project, and
    // the date is the database's, marked approximate.
    assert!(session["title"].is_null(), "{session:#}");
    assert!(shown["project"]["dir"].is_null(), "{shown:#}");
    assert_eq!(session["date_approximate"], true, "{session:#}");
    assert!(tree(&folder) == before, "deja changed oterm's folder");
    let resume = r.sb.ok(&["resume", "oterm-1"]);
    assert_eq!(resume.stdout.trim(), "oterm", "{}", resume.stderr);
    assert!(resume.stderr.contains("pick the chat"), "{}", resume.stderr);
}
