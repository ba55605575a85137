//! The Chatblade reader, written only in TOML (`readers/chatblade.toml`),
//! through the `yaml` source kind: `fixtures/golden/chatblade/real-0.7.0/`
//! holds the sessions Chatblade 0.7.0 wrote in a run against a scripted
//! model: `ledger.yaml` (`chatblade -p tenant -S ledger`, two turns, a
//! prompt file's system message first) and `last.yaml` (a question asked
//! without a session, its answer on several lines that PyYAML writes
//! double-quoted and folded).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
use deja_plugin_api::{HostContext, ParseOutput, ParseRequest, ROption, Reader, Role};
use deja_plugin_toml::TomlReader;

fn context(home: &Path, env: &[(&str, &str)]) -> HostContext {
    common::context("chatblade.toml", home, env)
}

fn golden(name: &str) -> PathBuf {
    testing::fixtures("chatblade").join("real-0.7.0").join(name)
}

fn parse(file: &Path) -> ParseOutput {
    testing::parse_file::<TomlReader>(file, &context(Path::new("/nonexistent"), &[]))
}

#[test]
fn a_session_chatblade_wrote_reads_as_typed_and_answered() {
    let out = parse(&golden("ledger.yaml"));
    let s = common::only_session(&out);
    assert_eq!(s.id.as_str(), "ledger");
    assert_eq!(s.project.dir, ROption::RNone);
    // Not the prompt file's system message.
    assert_eq!(common::messages(s), common::LEDGER_ANSWERS);
    assert!(s.commands.is_empty());
}

#[test]
fn quoted_and_folded_text_reads_back_exactly() {
    let out = parse(&golden("last.yaml"));
    let s = &out.sessions[0];
    assert_eq!(s.id.as_str(), "last");
    assert_eq!(
        common::messages(s),
        vec![
            (
                Role::User,
                "Where else is the tenant filter missing? Look at \"reports\": yes/no"
            ),
            (
                Role::Assistant,
                "Two places:\n\n- `ledger.sql`: the join on \"accounts\" drops `tenant_id`;\n\
                 - 'reports' reuses it.\n\n# Fix\n  Add `AND a.tenant_id = l.tenant_id` \u{2014} then re-run: yes"
            ),
        ]
    );
}

#[test]
fn a_file_that_is_not_yaml_is_an_error_and_plain_scalars_stay_text() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.yaml");
    std::fs::write(&broken, "- role: user\n  content: [unclosed\n").unwrap();
    let c = context(Path::new("/nonexistent"), &[]);
    let bytes = std::fs::read(&broken).unwrap();
    let out = TomlReader::parse(&ParseRequest {
        path: broken.to_string_lossy().as_ref().into(),
        bytes: bytes.as_slice().into(),
        modified_ms: 0,
        context: &c,
    });
    assert!(out.is_err(), "{out:?}");
    // A plain `yes` or `42` is text to a YAML 1.2 reader, as PyYAML wrote
    // it quoted for its own 1.1 reading.
    let plain = dir.path().join("plain.yaml");
    std::fs::write(
        &plain,
        "- role: user\n  content: '42'\n- role: assistant\n  content: yes\n",
    )
    .unwrap();
    let out = parse(&plain);
    assert_eq!(
        common::messages(&out.sessions[0]),
        vec![(Role::User, "42"), (Role::Assistant, "yes")]
    );
}

#[test]
fn discovery_follows_chatblades_own_places() {
    let home = tempfile::tempdir().unwrap();
    let cache = home.path().join(".cache/chatblade");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::copy(golden("ledger.yaml"), cache.join("ledger.yaml")).unwrap();
    // A session being written, before it replaces the file.
    std::fs::write(cache.join("ledger.yaml.aB3dE5gH7j"), b"- role: user\n").unwrap();
    let found: Vec<String> = TomlReader::discover(&context(home.path(), &[]))
        .unwrap()
        .transcripts
        .iter()
        .map(|t| t.to_string())
        .filter(|p| p.starts_with(home.path().to_str().unwrap()))
        .collect();
    assert_eq!(
        found,
        vec![cache.join("ledger.yaml").to_string_lossy().into_owned()]
    );
}

#[test]
fn resume_reopens_the_session_in_chatblades_interactive_mode() {
    let c = context(Path::new("/nonexistent"), &[]);
    let (argv, _) = common::resume(&c, "ledger", None);
    assert_eq!(argv, vec!["chatblade", "-S", "ledger", "-i"]);
}
