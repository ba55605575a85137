//! Helpers shared by the tests of the readers written in TOML: a host
//! context holding one built-in description, and a session's messages and
//! file records as plain pairs to compare.

#![allow(dead_code, clippy::unwrap_used)]

use std::path::Path;

use deja_plugin_api::testing;
use deja_plugin_api::{
    CommandOutcome, EnvVar, FileAction, HostContext, ParseOutput, ParseOutputV1_2, ParseOutputV1_3,
    ParseRequest, Reader, Role, Session, DESCRIPTION_PATH_VAR, DESCRIPTION_VAR,
};
use deja_plugin_toml::{TomlReader, BUILTIN};

/// A context with `home`, exactly the variables `env`, and the built-in
/// description `name` (`opencode.toml`, ...) as the host hands it over.
pub fn context(name: &str, home: &Path, env: &[(&str, &str)]) -> HostContext {
    let text = BUILTIN
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
        .unwrap_or_else(|| panic!("no built-in description {name}"));
    let mut c = testing::context(home, &[], "{}");
    for (key, value) in env
        .iter()
        .copied()
        .chain([(DESCRIPTION_VAR, text), (DESCRIPTION_PATH_VAR, name)])
    {
        c.env.push(EnvVar {
            key: key.into(),
            value: value.into(),
        });
    }
    c
}

/// The session's messages as (role, text).
pub fn messages(s: &Session) -> Vec<(Role, &str)> {
    s.messages
        .iter()
        .map(|m| (m.role, m.text.as_str()))
        .collect()
}

/// The session's file records as (path, action).
pub fn files(s: &Session) -> Vec<(&str, FileAction)> {
    s.files
        .iter()
        .map(|f| (f.path.as_str(), f.action))
        .collect()
}

/// The command the reader of `context` gives to reopen session `id` of
/// the project `project`, and its note.
pub fn resume(context: &HostContext, id: &str, project: Option<&str>) -> (Vec<String>, String) {
    use deja_plugin_api::{ROption, RStr, Reader, ResumeAdvice, ResumeRequest};
    let advice = deja_plugin_toml::TomlReader::resume(&ResumeRequest {
        id: id.into(),
        native_id: id.into(),
        project_dir: match project {
            Some(p) => ROption::RSome(RStr::from(p)),
            None => ROption::RNone,
        },
        source_path: ROption::RNone,
        context,
    })
    .unwrap();
    match advice {
        ResumeAdvice::Command { argv, note, .. } => (
            argv.iter().map(|a| a.to_string()).collect(),
            note.to_string(),
        ),
        ResumeAdvice::Refused { message } => panic!("refused: {message}"),
    }
}

/// Every file in `dir` with its bytes.
pub fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p.file_name().unwrap().to_string_lossy().into_owned(), bytes)
        })
        .collect();
    files.sort();
    files
}

/// The two questions about the ledger's tenants, each answered after a
/// first short reply, as the scripted model's runs typed and answered them.
pub const LEDGER_TALK: [(Role, &str); 6] = [
    (
        Role::User,
        "Why does the ledger show rows of other tenants?",
    ),
    (Role::Assistant, "Looking at the query first."),
    (
        Role::Assistant,
        "The ledger query lost its tenant predicate in the join.",
    ),
    (Role::User, "Which migration added the tenant column?"),
    (Role::Assistant, "Noting it."),
    (
        Role::Assistant,
        "Migration 0042 added the tenant column to the ledger.",
    ),
];

/// `file` parsed with its commands' outcomes by the built-in description
/// `name`, with no home.
pub fn parse_with_outcomes(name: &str, file: &Path) -> ParseOutputV1_2 {
    let bytes = std::fs::read(file).unwrap();
    let c = context(name, Path::new("/nonexistent"), &[]);
    TomlReader::parse_with_outcomes(&ParseRequest {
        path: file.to_string_lossy().as_ref().into(),
        bytes: bytes.as_slice().into(),
        modified_ms: 0,
        context: &c,
    })
    .unwrap()
}

/// `file`, last changed at `modified_ms`, parsed with its edits by the
/// built-in description `name`, with no home.
pub fn parse_with_edits(name: &str, file: &Path, modified_ms: i64) -> ParseOutputV1_3 {
    let bytes = std::fs::read(file).unwrap();
    let c = context(name, Path::new("/nonexistent"), &[]);
    TomlReader::parse_with_edits(&ParseRequest {
        path: file.to_string_lossy().as_ref().into(),
        bytes: bytes.as_slice().into(),
        modified_ms,
        context: &c,
    })
    .unwrap()
}

/// The commands of session `session` of `out` with their outcomes.
pub fn ran(out: &ParseOutputV1_2, session: usize) -> Vec<(&str, CommandOutcome)> {
    out.output.sessions[session]
        .commands
        .iter()
        .enumerate()
        .map(|(i, c)| (c.command.as_str(), out.outcome(session, i)))
        .collect()
}

/// What the reader of `context` discovers under `home` once each of
/// `folders` holds an empty `file`, as sorted paths.
pub fn discovered_in(
    context: &HostContext,
    home: &Path,
    folders: &[&str],
    file: &str,
) -> Vec<String> {
    for folder in folders {
        let dir = home.join(folder);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(file), b"").unwrap();
    }
    discovered(context)
}

/// What the reader of `context` discovers, as sorted paths.
pub fn discovered(context: &HostContext) -> Vec<String> {
    let mut found: Vec<String> = TomlReader::discover(context)
        .unwrap()
        .transcripts
        .iter()
        .map(|t| t.to_string())
        .collect();
    found.sort();
    found
}

/// The two questions about the ledger's tenants, each answered at once.
pub const LEDGER_ANSWERS: [(Role, &str); 4] = [
    (
        Role::User,
        "Why does the ledger show rows of other tenants?",
    ),
    (
        Role::Assistant,
        "The ledger query lost its tenant predicate in the join.",
    ),
    (Role::User, "Which migration added the tenant column?"),
    (
        Role::Assistant,
        "Migration 0042 added the tenant column to the ledger.",
    ),
];

/// The one session of `out`, read without a warning.
pub fn only_session(out: &ParseOutput) -> &Session {
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    assert_eq!(out.sessions.len(), 1);
    &out.sessions[0]
}

/// The two commands of the ledger's runs with how they ended: grep found
/// nothing (exit code 1), ls succeeded.
pub fn ledger_ran() -> Vec<(&'static str, CommandOutcome)> {
    vec![
        (
            "grep -rn \"tenant_id\" .",
            CommandOutcome::from_exit_code(1),
        ),
        ("ls migrations", CommandOutcome::from_exit_code(0)),
    ]
}
