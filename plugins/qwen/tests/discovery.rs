//! Discovery in a temporary folder acting as HOME, with the environment
//! passed through the `HostContext` (never set on the process): what is
//! searched and why, unreadable folders, an empty home, a bad config section.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use deja_plugin_api::{Discovery, EnvVar, ErrorKind, HostContext, Reader};
use deja_plugin_qwen::QwenReader;

/// A fresh folder under the system's temp dir, removed on drop.
struct TempHome(PathBuf);

impl TempHome {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("deja-qwen-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        TempHome(dir.canonicalize().unwrap())
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.0.join(rel)
    }

    /// Creates the chat file `rel` (and its folders); returns its path.
    fn chat(&self, rel: &str) -> PathBuf {
        let path = self.path(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(
            &path,
            r#"{"uuid":"a","parentUuid":null,"sessionId":"s","type":"user","message":{"role":"user","parts":[{"text":"hi"}]}}
"#,
        )
        .unwrap();
        path
    }
}

impl Drop for TempHome {
    fn drop(&mut self) {
        #[cfg(unix)]
        set_mode(&self.0.join(".qwen/projects/-locked/chats"), 0o755);
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    let _ = fs::set_permissions(path, fs::Permissions::from_mode(mode));
}

fn context(home: &Path, env: &[(&str, String)], config_json: &str) -> HostContext {
    HostContext {
        home: home.to_string_lossy().into_owned().into(),
        env: env
            .iter()
            .map(|(key, value)| EnvVar {
                key: (*key).into(),
                value: value.as_str().into(),
            })
            .collect::<Vec<_>>()
            .into(),
        config_json: config_json.into(),
    }
}

fn found(discovery: &Discovery) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = discovery
        .transcripts
        .iter()
        .map(|p| PathBuf::from(p.as_str()))
        .collect();
    paths.sort();
    paths
}

fn searched(discovery: &Discovery) -> Vec<(PathBuf, String, bool)> {
    discovery
        .searched
        .iter()
        .map(|s| {
            (
                PathBuf::from(s.path.as_str()),
                s.reason.to_string(),
                s.exists,
            )
        })
        .collect()
}

#[test]
fn every_place_is_recorded_with_its_reason() {
    let home = TempHome::new("places");
    let runtime_chat = home.chat("rt/projects/-srv-a/chats/1.jsonl");
    let root_chat = home.chat("roots/one/projects/-srv-b/chats/2.jsonl");
    let missing = home.path("no-such-root");
    let env = [
        ("QWEN_RUNTIME_DIR", "~/rt".to_string()),
        (
            "QWEN_HOME",
            home.path("ignored").to_string_lossy().into_owned(),
        ),
    ];
    let config = format!(
        r#"{{"roots":["~/roots/one","{}"]}}"#,
        missing.to_string_lossy()
    );
    let discovery = QwenReader::discover(&context(&home.0, &env, &config)).unwrap();
    assert_eq!(found(&discovery), vec![root_chat, runtime_chat]);
    assert_eq!(
        searched(&discovery),
        vec![
            (
                home.path("rt/projects"),
                "QWEN_RUNTIME_DIR".to_string(),
                true
            ),
            (
                home.path("roots/one/projects"),
                "config roots".to_string(),
                true
            ),
            (missing, "config roots".to_string(), false),
        ]
    );
    assert!(discovery.warnings.is_empty(), "{:?}", discovery.warnings);
}

#[cfg(unix)]
#[test]
fn an_unreadable_chats_folder_is_a_warning() {
    let home = TempHome::new("locked");
    let readable = home.chat(".qwen/projects/-open/chats/1.jsonl");
    let _hidden = home.chat(".qwen/projects/-locked/chats/2.jsonl");
    let locked = home.path(".qwen/projects/-locked/chats");
    set_mode(&locked, 0o000);
    if fs::read_dir(&locked).is_ok() {
        // Root reads a folder with mode 000: the check is made by `nobody`.
        deja_plugin_api::testing::rerun_unprivileged("an_unreadable_chats_folder_is_a_warning");
        return;
    }
    let discovery = QwenReader::discover(&context(&home.0, &[], "{}")).unwrap();
    assert_eq!(found(&discovery), vec![readable]);
    assert!(
        discovery
            .warnings
            .iter()
            .any(|w| w.contains(&*locked.to_string_lossy())),
        "{:?}",
        discovery.warnings
    );
}

#[test]
fn an_empty_home_finds_nothing_and_fails_nothing() {
    let home = TempHome::new("empty");
    let discovery = QwenReader::discover(&context(&home.0, &[], "{}")).unwrap();
    assert!(discovery.transcripts.is_empty());
    assert!(discovery.warnings.is_empty(), "{:?}", discovery.warnings);
    assert_eq!(
        searched(&discovery),
        vec![(
            home.path(".qwen"),
            "Qwen Code default (~/.qwen)".to_string(),
            false
        )]
    );
}

#[test]
fn a_bad_config_section_is_a_config_error() {
    let home = TempHome::new("badconfig");
    let err = QwenReader::discover(&context(&home.0, &[], r#"{"exclude":"x"}"#)).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Config);
}
