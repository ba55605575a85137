//! Discovery over the `19-discovery` fixture tree and a temporary folder,
//! with the environment passed through the `HostContext` (never set on the
//! process).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use deja_plugin_api::{Discovery, ErrorKind, HostContext, Reader};
use deja_plugin_claude::ClaudeReader;

fn base() -> PathBuf {
    common::fixtures()
        .join("19-discovery")
        .canonicalize()
        .unwrap()
}

fn sid(n: u32) -> String {
    format!("{n:08}-aaaa-4bbb-8ccc-{n:012}")
}

fn discover(context: &HostContext) -> Discovery {
    let discovery = <ClaudeReader as Reader>::discover(context).unwrap();
    assert!(discovery.warnings.is_empty(), "{:?}", discovery.warnings);
    discovery
}

/// The transcripts found, relative to `base()`, sorted.
fn found(discovery: &Discovery) -> Vec<String> {
    let base = base();
    let mut found: Vec<String> = discovery
        .transcripts
        .iter()
        .map(|t| {
            Path::new(t.as_str())
                .strip_prefix(&base)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    found.sort();
    found
}

fn searched(discovery: &Discovery) -> Vec<(String, String, bool)> {
    let base = base();
    discovery
        .searched
        .iter()
        .map(|s| {
            let path = Path::new(s.path.as_str());
            let path = path.strip_prefix(&base).unwrap_or(path);
            (
                path.to_string_lossy().into_owned(),
                s.reason.to_string(),
                s.exists,
            )
        })
        .collect()
}

#[test]
fn the_home_claude_folder_holds_sessions_and_subagents_and_nothing_else() {
    let home = base().join("home");
    let discovery = discover(&common::context(&home, &[], "{}"));
    // Not `history.jsonl`, `sessions-index.json`, memory files, spilled tool
    // outputs or `.meta.json`.
    assert_eq!(
        found(&discovery),
        [
            format!("home/.claude/projects/-home-dev-app/{}.jsonl", sid(40)),
            format!(
                "home/.claude/projects/-home-dev-app/{}/subagents/agent-a1.jsonl",
                sid(40)
            ),
            "home/.claude/projects/-home-dev-app/agent-b2.jsonl".to_string(),
            format!(
                "home/.claude/projects/-home-dev-scratch-1/{}.jsonl",
                sid(41)
            ),
            format!(
                "home/.config/claude/projects/-home-dev-xdg/{}.jsonl",
                sid(42)
            ),
        ]
    );
    assert_eq!(
        searched(&discovery),
        [
            (
                "home/.claude/projects".into(),
                "Claude Code default (~/.claude)".into(),
                true
            ),
            (
                "home/.config/claude/projects".into(),
                "Claude Code XDG location (~/.config/claude)".into(),
                true
            ),
        ]
    );
}

#[test]
fn xdg_config_home_moves_the_xdg_location() {
    let home = base().join("home");
    let xdg = base().join("nowhere");
    let discovery = discover(&common::context(&home, &[("XDG_CONFIG_HOME", &xdg)], "{}"));
    assert!(found(&discovery).iter().all(|f| !f.contains("xdg")));
    assert_eq!(
        searched(&discovery)[1],
        (
            "nowhere/claude".into(),
            "Claude Code XDG location (~/.config/claude)".into(),
            false
        )
    );
}

#[test]
fn claude_config_dir_replaces_the_home_folders() {
    let home = base().join("home");
    let config = base().join("config-dir");
    let discovery = discover(&common::context(
        &home,
        &[("CLAUDE_CONFIG_DIR", &config)],
        "{}",
    ));
    assert_eq!(
        found(&discovery),
        [format!(
            "config-dir/projects/-home-dev-custom/{}.jsonl",
            sid(43)
        )]
    );
    assert_eq!(
        searched(&discovery),
        [(
            "config-dir/projects".into(),
            "CLAUDE_CONFIG_DIR".into(),
            true
        )]
    );
}

#[test]
fn deja_claude_root_overrides_and_names_a_claude_folder_a_projects_folder_or_a_project() {
    let home = base().join("home");
    let config = base().join("config-dir");
    let list = std::env::join_paths([
        base().join("deja-root"),
        base().join("bare-projects"),
        base().join("one-project"),
    ])
    .unwrap();
    let context = common::context(
        &home,
        &[
            ("CLAUDE_CONFIG_DIR", &config),
            ("DEJA_CLAUDE_ROOT", Path::new(&list)),
        ],
        "{}",
    );
    let discovery = discover(&context);
    assert_eq!(
        found(&discovery),
        [
            format!("bare-projects/-home-dev-bare/{}.jsonl", sid(45)),
            format!("deja-root/projects/-home-dev-deja/{}.jsonl", sid(44)),
            format!("one-project/{}.jsonl", sid(46)),
        ]
    );
    let reasons: Vec<String> = searched(&discovery).into_iter().map(|s| s.1).collect();
    assert_eq!(reasons, ["DEJA_CLAUDE_ROOT"; 3]);
}

#[test]
fn config_roots_add_places_minus_excludes() {
    let home = base().join("home");
    let config = r#"{"roots": ["~/../extra"], "exclude": ["-home-dev-scratch-*", "agent-b*"]}"#;
    let discovery = discover(&common::context(&home, &[], config));
    assert_eq!(
        found(&discovery),
        [
            "home/../extra/projects/-home-dev-extra/00000047-aaaa-4bbb-8ccc-000000000047.jsonl"
                .to_string(),
            format!("home/.claude/projects/-home-dev-app/{}.jsonl", sid(40)),
            format!(
                "home/.claude/projects/-home-dev-app/{}/subagents/agent-a1.jsonl",
                sid(40)
            ),
            format!(
                "home/.config/claude/projects/-home-dev-xdg/{}.jsonl",
                sid(42)
            ),
        ]
    );
    assert_eq!(searched(&discovery)[2].1, "config roots");
}

#[test]
fn a_bad_config_section_is_a_config_error() {
    let context = common::context(&base().join("home"), &[], r#"{"roots": "not a list"}"#);
    let error = <ClaudeReader as Reader>::discover(&context).unwrap_err();
    assert_eq!(error.kind, ErrorKind::Config);
}

#[test]
fn an_empty_home_finds_nothing_and_fails_nothing() {
    let discovery = discover(&common::empty_context());
    assert!(discovery.transcripts.is_empty());
    assert!(discovery.warnings.is_empty(), "{:?}", discovery.warnings);
    assert!(!discovery.searched.is_empty(), "no place was searched");
    assert!(discovery.searched.iter().all(|s| !s.exists));
}

#[test]
fn every_discovered_fixture_parses_to_one_session() {
    let home = base().join("home");
    let context = common::context(&home, &[], "{}");
    for transcript in discover(&context).transcripts.iter() {
        let output = common::parse_file(Path::new(transcript.as_str()), &context);
        assert_eq!(output.sessions.len(), 1, "{transcript}");
    }
}

#[cfg(unix)]
#[test]
fn an_unreadable_project_folder_is_a_warning() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("deja-claude-locked-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let open = dir.join("projects/-open");
    let locked = dir.join("projects/-locked");
    fs::create_dir_all(&open).unwrap();
    fs::create_dir_all(locked.join("s/subagents")).unwrap();
    fs::write(open.join("a.jsonl"), "{}\n").unwrap();
    fs::write(locked.join("b.jsonl"), "{}\n").unwrap();
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
    let context = common::context(
        Path::new("/nonexistent-home"),
        &[("DEJA_CLAUDE_ROOT", &dir)],
        "{}",
    );
    if fs::read_dir(&locked).is_ok() {
        // Root reads a folder with mode 000: the check is made by `nobody`.
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).unwrap();
        fs::remove_dir_all(&dir).unwrap();
        deja_plugin_api::testing::rerun_unprivileged("an_unreadable_project_folder_is_a_warning");
        return;
    }
    let discovery = <ClaudeReader as Reader>::discover(&context).unwrap();
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).unwrap();
    let found: Vec<PathBuf> = discovery
        .transcripts
        .iter()
        .map(|t| PathBuf::from(t.as_str()))
        .collect();
    assert_eq!(found, [open.join("a.jsonl")]);
    assert!(
        discovery
            .warnings
            .iter()
            .any(|w| w.contains(&*locked.to_string_lossy())),
        "{:?}",
        discovery.warnings
    );
    fs::remove_dir_all(&dir).unwrap();
}
