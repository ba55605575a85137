//! Discovery over the `20-discovery` fixture trees (a home with `~/.codex`, a
//! `CODEX_HOME`, a `DEJA_CODEX_ROOT`, a bare folder of rollouts, a config
//! root), with the environment passed through the `HostContext` (never set on
//! the process), plus an unreadable folder in a temporary directory.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::{ErrorKind, HostContext, Reader};
use deja_plugin_codex::CodexReader;

fn base() -> PathBuf {
    common::fixtures()
        .join("20-discovery")
        .canonicalize()
        .unwrap()
}

/// The transcripts found, relative to the fixture, sorted.
fn discovered(context: &HostContext) -> Vec<String> {
    let discovery = <CodexReader as Reader>::discover(context).unwrap();
    assert!(discovery.warnings.is_empty(), "{:?}", discovery.warnings);
    let mut found: Vec<String> = discovery
        .transcripts
        .iter()
        .map(|t| relative(t.as_str()))
        .collect();
    found.sort();
    found
}

fn relative(path: &str) -> String {
    Path::new(path)
        .strip_prefix(base())
        .unwrap_or(Path::new(path))
        .to_string_lossy()
        .into_owned()
}

const UUID: &str = "019f0000-0000-7000-8000-0000000000";

#[test]
fn reads_live_and_archived_rollouts_of_the_home_codex_folder() {
    let context = common::context(&base().join("home"), &[], "{}");
    assert_eq!(
        discovered(&context),
        [
            format!("home/.codex/archived_sessions/rollout-2026-07-17T11-01-00-{UUID}41.jsonl"),
            format!("home/.codex/sessions/2026/07/17/rollout-2026-07-17T11-00-00-{UUID}40.jsonl"),
        ]
    );
    // history.jsonl, session_index.jsonl, config.toml and logs are not transcripts;
    // both folders are reported as searched, with the reason.
    let discovery = <CodexReader as Reader>::discover(&context).unwrap();
    let searched: Vec<(String, String, bool)> = discovery
        .searched
        .iter()
        .map(|s| (relative(s.path.as_str()), s.reason.to_string(), s.exists))
        .collect();
    let reason = "Codex CLI default (~/.codex)".to_string();
    assert_eq!(
        searched,
        [
            ("home/.codex/sessions".into(), reason.clone(), true),
            ("home/.codex/archived_sessions".into(), reason, true),
        ]
    );
}

#[test]
fn codex_home_replaces_the_default() {
    let context = common::context(
        &base().join("home"),
        &[("CODEX_HOME", &base().join("codex-home"))],
        "{}",
    );
    assert_eq!(
        discovered(&context),
        [format!(
            "codex-home/sessions/2026/07/17/rollout-2026-07-17T11-00-00-{UUID}42.jsonl"
        )]
    );
    let discovery = <CodexReader as Reader>::discover(&context).unwrap();
    let missing: Vec<(String, bool)> = discovery
        .searched
        .iter()
        .map(|s| (relative(s.path.as_str()), s.exists))
        .collect();
    assert_eq!(
        missing,
        [
            ("codex-home/sessions".into(), true),
            ("codex-home/archived_sessions".into(), false),
        ]
    );
}

#[test]
fn deja_codex_root_overrides_both_and_takes_a_path_list() {
    let list = std::env::join_paths([base().join("deja-root"), base().join("bare")]).unwrap();
    let list = PathBuf::from(list);
    let context = common::context(
        &base().join("home"),
        &[
            ("CODEX_HOME", &base().join("codex-home")),
            ("DEJA_CODEX_ROOT", &list),
        ],
        "{}",
    );
    // A folder holding rollouts itself is read as it is; other .jsonl files are not rollouts.
    assert_eq!(
        discovered(&context),
        [
            format!("bare/rollout-2026-07-17T11-00-00-{UUID}44.jsonl"),
            format!("deja-root/archived_sessions/rollout-2026-07-17T11-00-00-{UUID}43.jsonl"),
        ]
    );
    let reasons: Vec<String> = <CodexReader as Reader>::discover(&context)
        .unwrap()
        .searched
        .iter()
        .map(|s| s.reason.to_string())
        .collect();
    assert!(!reasons.is_empty(), "no place was searched");
    assert!(
        reasons.iter().all(|r| r == "DEJA_CODEX_ROOT"),
        "{reasons:?}"
    );
}

#[test]
fn config_roots_add_places_minus_excludes() {
    let config = r#"{"roots": ["~/../extra"], "exclude": ["scratch-*"]}"#;
    let context = common::context(
        &base().join("home"),
        &[("DEJA_CODEX_ROOT", &base().join("deja-root"))],
        config,
    );
    assert_eq!(
        discovered(&context),
        [
            format!("deja-root/archived_sessions/rollout-2026-07-17T11-00-00-{UUID}43.jsonl"),
            format!("home/../extra/sessions/2026/07/17/rollout-2026-07-17T11-00-00-{UUID}45.jsonl"),
        ]
    );
    let bad = common::context(&base().join("home"), &[], r#"{"roots": "not a list"}"#);
    let error = <CodexReader as Reader>::discover(&bad).unwrap_err();
    assert_eq!(error.kind, ErrorKind::Config);
}

#[test]
fn a_missing_home_finds_nothing_quietly() {
    let discovery = <CodexReader as Reader>::discover(&common::empty_context()).unwrap();
    assert!(discovery.transcripts.is_empty());
    assert!(discovery.warnings.is_empty());
    assert_eq!(discovery.searched.len(), 1);
    assert!(!discovery.searched[0].exists);
}

#[cfg(unix)]
#[test]
fn an_unreadable_folder_is_a_warning() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("deja-codex-discovery-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let day = dir.join(".codex/sessions/2026/07/17");
    std::fs::create_dir_all(&day).unwrap();
    std::fs::write(
        day.join(format!("rollout-2026-07-17T11-00-00-{UUID}47.jsonl")),
        "{}\n",
    )
    .unwrap();
    let locked = dir.join(".codex/sessions/2026/07/18");
    std::fs::create_dir_all(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read_dir(&locked).is_ok() {
        // Root reads a folder with mode 000: the check is made by `nobody`.
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        deja_plugin_api::testing::rerun_unprivileged("an_unreadable_folder_is_a_warning");
        return;
    }
    let discovery = <CodexReader as Reader>::discover(&common::context(&dir, &[], "{}")).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(discovery.transcripts.len(), 1);
    assert_eq!(discovery.warnings.len(), 1, "{:?}", discovery.warnings);
    assert!(discovery.warnings[0].contains("2026/07/18"));
}
