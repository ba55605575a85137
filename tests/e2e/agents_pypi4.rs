//! Harnesses from PyPI that are full-screen terminal programs with no
//! headless mode (Elia), run for real against the scripted model server in
//! a sandbox HOME: each run gets a pseudo-terminal of its own
//! (`tests/agents/terminal.py`), which types what a person types and waits
//! for what the program draws. deja then indexes what the program wrote,
//! and `deja sessions`, `deja show` and `deja recall` must give back exactly
//! what was typed and answered, without changing a byte of the harness's
//! folder.

use std::process::Command;

use serde_json::{json, Value};

use crate::agents::conversation;
use crate::harness_runs::{
    in_terminal, pypi_client, read_back, roles, sent, toolless_server, tree, Run, FIRST_ANSWER,
    FIRST_QUESTION, SECOND_ANSWER, SECOND_QUESTION, TWO_ANSWERS, TWO_ANSWERS_ROLES,
};

/// Elia 1.10.0 (elia-chat, a model of the user's own in its `config.toml`:
/// LiteLLM's `openai/` provider with the scripted server as `api_base`, no
/// account), started with a question (`elia "..."`), answers it; started
/// again, the chat is opened from the history on its home screen and a
/// second question typed and sent (ctrl+j). deja's reader of its
/// `elia.sqlite`, written only in TOML, reads the one chat with both
/// exchanges, without the system prompt, and leaves Elia's folder as it was.
#[test]
fn elia_chats_are_read_as_elia_stores_them() {
    let elia = pypi_client("elia", "elia");
    let r = Run::new();
    const SYSTEM: &str = "Answer in one sentence.";
    // Elia offers no tools.
    let server = toolless_server(&r, None);
    r.sb.write(
        ".config/elia/config.toml",
        format!(
            "default_model = \"mock\"\nsystem_prompt = \"{SYSTEM}\"\n\n[[models]]\nid = \"mock\"\n\
             name = \"openai/gpt-4o\"\napi_base = \"{}/v1\"\napi_key = \"sk-placeholder\"\n",
            server.url
        ),
    );
    let folder = r.sb.home.join(".local/share/elia");
    let db = folder.join("elia.sqlite");
    let db_text = db.to_str().unwrap();
    // An answer is in the database once Elia has committed it, after it is
    // drawn; ctrl+c quits.
    let first = json!([
        {"screen": FIRST_ANSWER},
        {"file": db_text, "contains": FIRST_ANSWER},
        {"keys": "\u{3}"},
        {"exit": true},
    ]);
    // The home screen lists the chat; down moves from the prompt to the
    // list, enter opens the chat there.
    let second = json!([
        {"screen": FIRST_QUESTION},
        {"keys": "\u{1b}[B"},
        {"screen": "Archive chat"},
        {"keys": "\r"},
        {"screen": FIRST_ANSWER},
        {"type": SECOND_QUESTION},
        {"keys": "\n"},
        {"screen": SECOND_ANSWER},
        {"file": db_text, "contains": SECOND_ANSWER},
        {"keys": "\u{3}"},
        {"exit": true},
    ]);
    let command = |name: &str, steps: &Value, args: &[&str]| {
        let mut cmd = in_terminal(&r, name, steps, &elia, args);
        // LiteLLM's price list from the package, not the network.
        cmd.env("LITELLM_LOCAL_MODEL_COST_MAP", "True");
        cmd
    };
    r.run(
        command("elia", &first, &[FIRST_QUESTION]),
        "elia",
        FIRST_ANSWER,
    );
    r.run(
        command("elia-again", &second, &[]),
        "elia-again",
        SECOND_ANSWER,
    );

    // The second question went out with the chat as Elia keeps it: the
    // system prompt, the first exchange, the question.
    let requests = server.requests();
    let asked = conversation(&requests);
    assert_eq!(asked.len(), 2, "{requests:#?}");
    let sent = sent(asked[1]);
    assert_eq!(
        sent,
        [
            ("system", SYSTEM),
            ("user", FIRST_QUESTION),
            ("assistant", FIRST_ANSWER),
            ("user", SECOND_QUESTION),
        ],
        "{requests:#?}"
    );

    // The chat's number and start, found by an independent look (read-only).
    let rows = Command::new("python3")
        .arg("-c")
        .arg(
            "import sqlite3, sys\n\
             c = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)\n\
             print('\\n'.join(f'{r[0]} {r[1]}' for r in c.execute('SELECT id, started_at FROM chat')))",
        )
        .arg(&db)
        .output()
        .unwrap();
    assert!(rows.status.success(), "{rows:?}");
    let rows = String::from_utf8(rows.stdout).unwrap();
    let rows: Vec<&str> = rows.lines().collect();
    assert_eq!(rows.len(), 1, "{rows:?}");
    // `1 2026-12-06 20:09:38.516040` is elia-1-20261206T200938.
    let (chat, started) = rows[0].split_once(' ').unwrap();
    let compact: String = started
        .get(..19)
        .unwrap()
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == ' ')
        .map(|c| if c == ' ' { 'T' } else { c })
        .collect();
    let id = format!("elia-{chat}-{compact}");
    let before = tree(&folder);

    let (_, shown) = read_back(&r.sb, "elia", &id, &TWO_ANSWERS, &[]);
    assert_eq!(roles(&shown), TWO_ANSWERS_ROLES, "{shown:#}");
    assert!(shown["project"]["dir"].is_null(), "{shown:#}");
    assert!(tree(&folder) == before, "deja changed Elia's folder");
    let resume = r.sb.ok(&["resume", &id]);
    assert_eq!(resume.stdout.trim(), "elia", "{}", resume.stderr);
    assert!(
        resume.stderr.contains("pick the chat from its history"),
        "{}",
        resume.stderr
    );
}
