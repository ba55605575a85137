//! Helpers shared by the tests of the readers written in TOML: a host
//! context holding one built-in description, and a session's messages and
//! file records as plain pairs to compare.

#![allow(dead_code, clippy::unwrap_used)]

use std::path::Path;

use deja_plugin_api::testing;
use deja_plugin_api::{
    EnvVar, FileAction, HostContext, Role, Session, DESCRIPTION_PATH_VAR, DESCRIPTION_VAR,
};
use deja_plugin_toml::BUILTIN;

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
