//! Harnesses from PyPI that keep a conversation as a YAML file (Chatblade's
//! named sessions), run for real against the scripted model server in a
//! sandbox HOME: two turns of one session, the second going on with the
//! first. deja then indexes what the program wrote, and `deja sessions`,
//! `deja show` and `deja recall` must give back exactly what was typed and
//! answered, without changing a byte of the harness's folder.

use crate::agents::conversation;
use crate::harness_runs::{
    asked, pypi_client, read_back, sent, toolless_server, tree, Run, FIRST_ANSWER, FIRST_QUESTION,
    SECOND_ANSWER, SECOND_QUESTION, TWO_ANSWERS,
};

/// Chatblade 0.7.0 (with httpx 0.27.2: its OpenAI client passes `proxies`,
/// which later httpx refuses), pointed at the scripted server with
/// `--openai-base-url` and a placeholder `OPENAI_API_KEY` (no account),
/// starts a named session with a prompt file (`-p tenant -S ledger`) and
/// goes on with it (`-S ledger`); deja's reader of the session's YAML file,
/// written only in TOML, reads both exchanges without the prompt file's
/// system message, and leaves Chatblade's folder as it was. Chatblade has
/// no tools: no commands.
#[test]
fn chatblade_sessions_are_read_as_chatblade_stores_them() {
    let chatblade = pypi_client("chatblade", "chatblade");
    let r = Run::new();
    const SYSTEM: &str = "Answer in one sentence.";
    // Chatblade offers no tools.
    let server = toolless_server(&r, None);
    // A prompt file of the user's, and ~/.cache as a machine has it
    // (without it, the first run's session lands in another folder than
    // the second run looks in).
    r.sb.write(".config/chatblade/tenant", SYSTEM);
    let folder = r.sb.home.join(".cache/chatblade");
    std::fs::create_dir_all(r.sb.home.join(".cache")).unwrap();
    let base = format!("{}/v1", server.url);
    let command = |args: &[&str]| {
        let mut cmd = r.sb.command_of(&chatblade);
        cmd.env("OPENAI_API_KEY", "sk-placeholder")
            .args(["--openai-base-url", &base])
            .args(args);
        cmd
    };
    r.run(
        command(&["-p", "tenant", "-S", "ledger", FIRST_QUESTION]),
        "chatblade",
        FIRST_ANSWER,
    );
    r.run(
        command(&["-S", "ledger", SECOND_QUESTION]),
        "chatblade-again",
        SECOND_ANSWER,
    );

    // The second question went out with the session as Chatblade keeps
    // it: the prompt file, the first exchange, the question.
    let requests = server.requests();
    let chat = conversation(&requests);
    assert_eq!(chat.len(), 2, "{requests:#?}");
    let messages = sent(chat[1]);
    assert_eq!(
        messages,
        [
            ("system", SYSTEM),
            ("user", FIRST_QUESTION),
            ("assistant", FIRST_ANSWER),
            ("user", SECOND_QUESTION),
        ],
        "{requests:#?}"
    );

    // The session's file, found by an independent look.
    let mut names: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["ledger.yaml"]);
    let before = tree(&folder);

    let (session, shown) = read_back(&r.sb, "chatblade", "ledger", &TWO_ANSWERS, &[]);
    assert_eq!(
        asked(&shown),
        [FIRST_QUESTION, SECOND_QUESTION],
        "{shown:#}"
    );
    assert!(shown["project"]["dir"].is_null(), "{shown:#}");
    assert!(session["parent_id"].is_null(), "{session:#}");
    assert!(tree(&folder) == before, "deja changed Chatblade's folder");
    let resume = r.sb.ok(&["resume", "ledger"]).stdout;
    assert!(resume.contains("chatblade -S ledger -i"), "{resume}");
}
