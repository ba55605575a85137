//! The PAR LLAMA reader, written only in TOML (`readers/parllama.toml`):
//! `fixtures/golden/parllama/real-0.10.1/chats/` holds the chat sessions
//! PAR LLAMA 0.10.1 wrote in runs against a scripted Ollama server: a chat
//! of two exchanges renamed with `/session.name`
//! (`24323007ac2547b4bec68967973a1f79.json`), and a chat of one exchange
//! under the name PAR LLAMA gives a new chat, its answer a Markdown block
//! (`d48fd71327f4440eb5d6f3ffb28e789e.json`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
use deja_plugin_api::{HostContext, ParseOutput, ParseRequest, ROption, Reader, Role};
use deja_plugin_toml::TomlReader;

const RENAMED: &str = "24323007ac2547b4bec68967973a1f79";
const UNNAMED: &str = "d48fd71327f4440eb5d6f3ffb28e789e";

fn context(home: &Path, env: &[(&str, &str)]) -> HostContext {
    common::context("parllama.toml", home, env)
}

fn golden(id: &str) -> PathBuf {
    testing::fixtures("parllama").join(format!("real-0.10.1/chats/{id}.json"))
}

fn parse(file: &Path) -> ParseOutput {
    testing::parse_file::<TomlReader>(file, &context(Path::new("/nonexistent"), &[]))
}

#[test]
fn a_chat_parllama_wrote_reads_as_typed_and_answered() {
    let out = parse(&golden(RENAMED));
    let s = common::only_session(&out);
    assert_eq!(s.id.as_str(), RENAMED);
    assert_eq!(common::messages(s), common::LEDGER_ANSWERS);
    // PAR LLAMA's own message ids.
    let ids: Vec<&str> = s
        .messages
        .iter()
        .map(|m| m.native_id.as_ref().map(|i| i.as_str()).unwrap_or(""))
        .collect();
    assert_eq!(
        ids,
        [
            "3a60eb09fe5249198fc243c2bb64e6c9",
            "d5a1b5cef2054c0685573a01145a29ae",
            "4314e229d6c94a98b0e8ba92b074c243",
            "531f66884e494b76bb751dddb1319f06",
        ]
    );
    // `/session.name` renamed it.
    assert_eq!(
        s.title.as_ref().map(|t| t.as_str()),
        ROption::RSome("tenant rows in the ledger")
    );
    assert_eq!(s.project.dir, ROption::RNone);
    assert!(s.commands.is_empty() && s.files.is_empty());
    // No start and no message times: the chat starts at the file's
    // modification time, and was last saved at 23:29:24.074 UTC.
    assert!(s.messages.iter().all(|m| m.timestamp_ms == s.started_at_ms));
    assert!(s.updated_at_ms >= 1_796_599_764_074);
}

#[test]
fn a_new_chats_name_is_no_title_and_markdown_stays_as_written() {
    let out = parse(&golden(UNNAMED));
    let s = &out.sessions[0];
    assert_eq!(s.title, ROption::RNone);
    assert_eq!(
        common::messages(s),
        vec![
            (
                Role::User,
                "Where else is the tenant filter missing? Look at \"reports\""
            ),
            (
                Role::Assistant,
                "Add `AND a.tenant_id = l.tenant_id` to the join:\n\n```sql\n\
                 SELECT * FROM ledger l JOIN accounts a ON a.id = l.account_id\n```"
            ),
        ]
    );
}

#[test]
fn system_prompts_thinking_and_parllamas_own_notes_are_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir
        .path()
        .join("chats/0123456789abcdef0123456789abcdef.json");
    let chat = serde_json::json!({
        "id": "0123456789abcdef0123456789abcdef",
        "_salt": null,
        "__key__": null,
        "name": "Ledger",
        "name_generated": true,
        "last_updated": "2026-12-06T23:29:24.074048+00:00",
        "llm_config": {"class_name": "LlmConfig", "provider": "Ollama", "model_name": "qwen3:8b"},
        "total_cost": 0.0,
        "total_usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0},
        "messages": [
            {"id": "a1", "role": "system", "content": "Answer in one sentence.", "thinking": ""},
            {"id": "a2", "role": "user", "content": "Why are rows missing?", "thinking": ""},
            {"id": "a3", "role": "assistant", "content": "The join drops them.\n\nAborted...",
             "thinking": "Let me look at the join."},
            {"id": "a4", "role": "user", "content": "Summarize the export job.", "thinking": ""},
            {"id": "a5", "role": "assistant",
             "content": "The export\n\n[Generation stopped at the token limit. The model used its whole \
                         context window (thinking models can spend it all before answering) \u{2014} \
                         raise num_ctx in the session config or ask about a smaller part of the document.]",
             "thinking": ""},
        ],
    });
    let bytes = serde_json::to_vec_pretty(&chat).unwrap();
    let c = context(Path::new("/nonexistent"), &[]);
    // Modified at 23:20 UTC.
    let out = TomlReader::parse(&ParseRequest {
        path: file.to_string_lossy().as_ref().into(),
        bytes: bytes.as_slice().into(),
        modified_ms: 1_796_599_200_000,
        context: &c,
    })
    .unwrap();
    let s = &out.sessions[0];
    assert_eq!(
        s.title.as_ref().map(|t| t.as_str()),
        ROption::RSome("Ledger")
    );
    assert_eq!(
        common::messages(s),
        vec![
            (Role::User, "Why are rows missing?"),
            (Role::Assistant, "The join drops them."),
            (Role::User, "Summarize the export job."),
            (Role::Assistant, "The export"),
        ]
    );
    assert_eq!(
        s.messages[1].native_id.as_ref().map(|i| i.as_str()),
        ROption::RSome("a3")
    );
    // Dated by the file (approximate), last saved 2026-12-06T23:29:24.074Z.
    assert_eq!(s.started_at_ms, 1_796_599_200_000);
    assert_eq!(s.updated_at_ms, 1_796_599_764_074);
}

#[test]
fn discovery_follows_parllamas_data_folder() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join(".local/share/parllama");
    std::fs::create_dir_all(data.join("chats")).unwrap();
    std::fs::create_dir_all(data.join("prompts")).unwrap();
    std::fs::copy(golden(RENAMED), data.join(format!("chats/{RENAMED}.json"))).unwrap();
    // Its settings and custom prompts are not chats.
    std::fs::write(data.join("settings.json"), "{}").unwrap();
    std::fs::write(data.join("prompts/p.json"), "{}").unwrap();
    let found =
        |env: &[(&str, &str)]| -> usize { common::discovered(&context(home.path(), env)).len() };
    assert_eq!(found(&[]), 1);
    let xdg = home.path().join("xdg");
    std::fs::create_dir_all(xdg.join("parllama/chats")).unwrap();
    std::fs::copy(
        golden(UNNAMED),
        xdg.join(format!("parllama/chats/{UNNAMED}.json")),
    )
    .unwrap();
    let xdg_text = xdg.to_string_lossy().into_owned();
    assert_eq!(found(&[("XDG_DATA_HOME", &xdg_text)]), 2);
    // PARLLAMA_DATA_DIR names the data folder itself.
    let own = home.path().join("own");
    std::fs::create_dir_all(own.join("chats")).unwrap();
    std::fs::copy(golden(UNNAMED), own.join(format!("chats/{UNNAMED}.json"))).unwrap();
    let own_text = own.to_string_lossy().into_owned();
    assert_eq!(found(&[("PARLLAMA_DATA_DIR", &own_text)]), 2);
}

#[test]
fn detection_wants_a_parllama_chat() {
    let c = context(Path::new("/nonexistent"), &[]);
    let bytes = std::fs::read(golden(RENAMED)).unwrap();
    let path = format!("/x/.local/share/parllama/chats/{RENAMED}.json");
    assert!(TomlReader::detect_in(&c, &path, &bytes) > 0);
    // Another program's JSON in a chats folder.
    let other = br#"{"id": "x", "messages": [{"role": "user", "content": "hi"}]}"#;
    assert_eq!(TomlReader::detect_in(&c, "/x/chats/x.json", other), 0);
}

#[test]
fn resume_starts_parllama_to_find_the_chat() {
    let c = context(Path::new("/nonexistent"), &[]);
    let (argv, note) = common::resume(&c, RENAMED, None);
    assert_eq!(argv, vec!["parllama"]);
    assert!(note.contains("Sessions (ctrl+s)"), "{note}");
}
