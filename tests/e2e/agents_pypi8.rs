//! Harnesses from PyPI that talk to Ollama through its own chat API and are
//! full-screen terminal programs with no headless mode (PAR LLAMA), run for
//! real against the scripted model server, which answers Ollama's API, in a
//! sandbox HOME: the run gets a pseudo-terminal of its own
//! (`tests/agents/terminal.py`), which types as a person does and waits for
//! what the program draws. deja then indexes what the program wrote, and
//! `deja sessions`, `deja show` and `deja recall` must give back exactly
//! what was typed and answered, without changing a byte of the harness's
//! folder.

use serde_json::{json, Value};

use crate::agents::conversation;
use crate::harness_runs::{
    asked_ollama_for_models, in_terminal, pypi_client, read_back, roles, sent, toolless_server,
    tree, Run, FIRST_ANSWER, FIRST_EXCHANGE_THEN_SECOND, FIRST_QUESTION, SECOND_ANSWER,
    SECOND_QUESTION, TWO_ANSWERS, TWO_ANSWERS_ROLES,
};

/// PAR LLAMA 0.10.1 (parllama) with its default provider, Ollama, at
/// `OLLAMA_URL` (the scripted server: the model list, the model's details,
/// and the chat through Ollama's own `/api/chat`; no account): on its Chat
/// tab a question is typed and sent, then a second one in the same chat,
/// and the chat renamed with `/session.name`. deja's reader of its chat
/// files, written only in TOML, reads the one chat with both exchanges
/// under its new name, and leaves PAR LLAMA's folder as it was.
#[test]
fn parllama_chats_are_read_as_parllama_stores_them() {
    let parllama = pypi_client("parllama", "parllama");
    let r = Run::new();
    const MODEL: &str = "llama3.2:latest";
    const NAME: &str = "tenant rows in the ledger";
    // PAR LLAMA offers no tools.
    let server = toolless_server(&r, Some(MODEL));
    // Settings of the user's, as PAR LLAMA keeps them: the welcome dialog
    // of a first start already seen, the Chat tab last used, and the model
    // last chatted with (else picked from the session's model list).
    r.sb.write(
        ".local/share/parllama/settings.json",
        json!({
            "ui": {"show_first_run": false},
            "last_tab": "Chat",
            "last_llm_config": {"provider": "Ollama", "model_name": MODEL},
        })
        .to_string(),
    );
    let folder = r.sb.home.join(".local/share/parllama");
    // The new chat is written once its first question is sent, again once
    // each answer is complete, and when it is renamed; enter sends what is
    // typed, a slash command included; ctrl+q quits.
    let steps = json!([
        {"screen": "Type a message"},
        {"screen": format!("Ollama : {MODEL}")},
        {"type": FIRST_QUESTION},
        {"screen": "tenants?"},
        {"keys": "\r"},
        {"screen": FIRST_ANSWER},
        {"type": SECOND_QUESTION},
        {"screen": "column?"},
        {"keys": "\r"},
        {"screen": SECOND_ANSWER},
        {"type": format!("/session.name {NAME}")},
        {"screen": "the ledger"},
        {"keys": "\r"},
        {"screen": "[1] tenant rows"},
        {"keys": "\u{11}"},
        {"exit": true},
    ]);
    let command = |name: &str, steps: &Value| {
        let mut cmd = in_terminal(&r, name, steps, &parllama, &[]);
        cmd.env("OLLAMA_URL", &server.url);
        // LiteLLM's price list from the package, not the network.
        cmd.env("LITELLM_LOCAL_MODEL_COST_MAP", "True");
        cmd
    };
    r.run(command("parllama", &steps), "parllama", SECOND_ANSWER);

    // PAR LLAMA asked Ollama for its models and the model's details, and
    // the second question went out through /api/chat with the chat as
    // PAR LLAMA keeps it.
    let requests = server.requests();
    asked_ollama_for_models(&requests);
    let asked = conversation(&requests);
    assert_eq!(asked.len(), 2, "{requests:#?}");
    assert_eq!(asked[1]["path"], "/api/chat", "{requests:#?}");
    assert_eq!(asked[1]["body"]["model"], MODEL, "{requests:#?}");
    assert_eq!(sent(asked[1]), FIRST_EXCHANGE_THEN_SECOND, "{requests:#?}");

    // One chat file, named by the session's id.
    let chats: Vec<String> = std::fs::read_dir(folder.join("chats"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(chats.len(), 1, "{chats:?}");
    let id = chats[0].strip_suffix(".json").unwrap().to_string();
    let before = tree(&folder);

    let (session, shown) = read_back(&r.sb, "parllama", &id, &TWO_ANSWERS, &[]);
    assert_eq!(roles(&shown), TWO_ANSWERS_ROLES, "{shown:#}");
    // The slash command renamed the chat; it is not a message.
    assert_eq!(session["title"], NAME, "{session:#}");
    // PAR LLAMA keeps no working directory and no start: no project, and
    // the date is the chat file's, marked approximate.
    assert!(shown["project"]["dir"].is_null(), "{shown:#}");
    assert_eq!(session["date_approximate"], true, "{session:#}");
    assert!(tree(&folder) == before, "deja changed PAR LLAMA's folder");
    let resume = r.sb.ok(&["resume", &id]);
    assert_eq!(resume.stdout.trim(), "parllama", "{}", resume.stderr);
    assert!(
        resume.stderr.contains("Sessions (ctrl+s)"),
        "{}",
        resume.stderr
    );
}
