//! Discovery in a temporary folder acting as HOME, with the environment
//! passed through the `HostContext` (never set on the process).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use deja_plugin_aider::AiderReader;
use deja_plugin_api::{Discovery, EnvVar, ErrorKind, HostContext, Reader};

const HISTORY: &str = ".aider.chat.history.md";

/// A fresh folder under the system's temp dir, removed on drop.
struct TempHome(PathBuf);

impl TempHome {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("deja-aider-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        TempHome(dir.canonicalize().unwrap())
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.0.join(rel)
    }

    /// Creates the file `rel` (and its folders); returns its path.
    fn touch(&self, rel: &str) -> PathBuf {
        let path = self.path(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, "\n# aider chat started at 2026-07-17 09:00:00\n\n").unwrap();
        path
    }
}

impl Drop for TempHome {
    fn drop(&mut self) {
        #[cfg(unix)]
        set_mode(&self.0.join("roots/locked"), 0o755);
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

fn reasons(discovery: &Discovery) -> Vec<(PathBuf, String, bool)> {
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

fn join_paths(paths: &[PathBuf]) -> String {
    std::env::join_paths(paths)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn finds_every_documented_place() {
    let home = TempHome::new("all");
    let home_history = home.touch(HISTORY);
    let moved = home.touch("elsewhere/my-history.md");
    let project_a = home.touch(&format!("projects/a/{HISTORY}"));
    fs::create_dir_all(home.path("projects/b")).unwrap();
    let list = format!(
        "# projects deja started aider in\n\n{}\n  {}  \nrelative/dir\n",
        home.path("projects/a").display(),
        home.path("projects/b").display()
    );
    fs::create_dir_all(home.path(".config/deja")).unwrap();
    fs::write(home.path(".config/deja/aider-projects"), list).unwrap();
    let shallow = home.touch(&format!("roots/one/{HISTORY}"));
    let deep = home.touch(&format!("roots/one/two/{HISTORY}"));
    home.touch(&format!("roots/one/two/three/{HISTORY}"));
    home.touch(&format!("roots/.git/{HISTORY}"));
    home.touch(&format!("roots/node_modules/pkg/{HISTORY}"));
    home.touch(&format!("roots/target/debug/{HISTORY}"));
    home.touch("roots/one/other.md");
    let file_root = home.touch("single/copy.md");
    let kept = home.touch(&format!("more/keep/{HISTORY}"));
    home.touch(&format!("more/scratch-1/{HISTORY}"));
    let missing_root = home.path("no-such-root");

    let env = [
        (
            "AIDER_CHAT_HISTORY_FILE",
            "~/elsewhere/my-history.md".to_string(),
        ),
        (
            "DEJA_AIDER_ROOTS",
            join_paths(&[home.path("roots"), missing_root.clone()]),
        ),
    ];
    let config = format!(
        r#"{{"roots":["{}","~/more"],"exclude":["scratch*"]}}"#,
        file_root.display()
    );
    let discovery = AiderReader::discover(&context(&home.0, &env, &config)).unwrap();

    let mut expected = vec![
        home_history.clone(),
        moved.clone(),
        project_a,
        shallow,
        deep,
        file_root.clone(),
        kept,
    ];
    expected.sort();
    assert_eq!(found(&discovery), expected);

    let searched = reasons(&discovery);
    for (path, reason, exists) in [
        (home_history, "home history", true),
        (moved, "AIDER_CHAT_HISTORY_FILE", true),
        (
            home.path(".config/deja/aider-projects"),
            "aider-projects",
            true,
        ),
        (
            home.path(&format!("projects/a/{HISTORY}")),
            "aider-projects",
            true,
        ),
        (
            home.path(&format!("projects/b/{HISTORY}")),
            "aider-projects",
            false,
        ),
        (home.path("roots"), "DEJA_AIDER_ROOTS", true),
        (missing_root, "DEJA_AIDER_ROOTS", false),
        (file_root, "config roots", true),
        (home.path("more"), "config roots", true),
    ] {
        assert!(
            searched.contains(&(path.clone(), reason.to_string(), exists)),
            "{} ({reason}, exists: {exists}) not in {searched:#?}",
            path.display()
        );
    }
    assert!(
        discovery
            .warnings
            .iter()
            .any(|w| w.contains("relative/dir")),
        "{:?}",
        discovery.warnings
    );
}

#[cfg(unix)]
#[test]
fn an_unreadable_folder_is_a_warning() {
    let home = TempHome::new("locked");
    let readable = home.touch(&format!("roots/open/{HISTORY}"));
    let _hidden = home.touch(&format!("roots/locked/inner/{HISTORY}"));
    let locked = home.path("roots/locked");
    set_mode(&locked, 0o000);
    let env = [(
        "DEJA_AIDER_ROOTS",
        home.path("roots").to_string_lossy().into_owned(),
    )];
    if fs::read_dir(&locked).is_ok() {
        // Root reads a folder with mode 000: the check is made by `nobody`.
        deja_plugin_api::testing::rerun_unprivileged("an_unreadable_folder_is_a_warning");
        return;
    }
    let discovery = AiderReader::discover(&context(&home.0, &env, "{}")).unwrap();
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
    let discovery = AiderReader::discover(&context(&home.0, &[], "{}")).unwrap();
    assert!(discovery.transcripts.is_empty());
    assert!(discovery.warnings.is_empty(), "{:?}", discovery.warnings);
    let reasons: Vec<String> = reasons(&discovery).into_iter().map(|r| r.1).collect();
    assert_eq!(reasons, vec!["home history", "aider-projects"]);
}

#[test]
fn a_bad_config_section_is_a_config_error() {
    let home = TempHome::new("badconfig");
    let err =
        AiderReader::discover(&context(&home.0, &[], r#"{"roots":"not a list"}"#)).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Config);
}

#[test]
fn without_configuration_it_looks_in_known_projects_and_the_usual_code_folders() {
    let home = TempHome::new("unconfigured");
    // A project another harness's session named, outside every root.
    let named = home.touch(&format!("elsewhere/service/{HISTORY}"));
    let unnamed = home.touch(&format!("elsewhere/other/{HISTORY}"));
    // Code folders under home, walked two folders deep.
    let in_src = home.touch(&format!("src/app/{HISTORY}"));
    let in_work = home.touch(&format!("work/team/api/{HISTORY}"));
    home.touch(&format!("work/a/b/c/{HISTORY}"));
    let env = [(
        "DEJA_KNOWN_PROJECTS",
        join_paths(&[
            home.path("elsewhere/service"),
            home.path("elsewhere/no-history"),
            PathBuf::from("relative/dir"),
        ]),
    )];
    let discovery = AiderReader::discover(&context(&home.0, &env, "{}")).unwrap();
    let mut expected = vec![named.clone(), in_src, in_work];
    expected.sort();
    assert_eq!(found(&discovery), expected);
    assert!(!found(&discovery).contains(&unnamed));
    let searched = reasons(&discovery);
    assert!(
        searched.contains(&(named, "a project of another harness's session".into(), true)),
        "{searched:#?}"
    );
    assert!(searched.contains(&(home.path("src"), "code folders under home".into(), true)));
    // Only what exists is listed: no line per project without a history,
    // none for code folders that are not there.
    assert!(!searched
        .iter()
        .any(|(p, _, _)| p.starts_with(home.path("elsewhere/no-history"))));
    assert!(!searched.iter().any(|(p, _, _)| *p == home.path("code")));
    // Every history found so is marked: it may have come with a clone.
    let mut marked: Vec<PathBuf> = searched
        .iter()
        .filter(|(_, reason, _)| reason == "found in a code folder")
        .map(|(p, _, _)| p.clone())
        .collect();
    marked.sort();
    assert_eq!(marked, expected);
}

#[test]
fn a_listed_project_in_a_code_folder_is_not_marked_as_found_there() {
    let home = TempHome::new("listed-in-src");
    let listed = home.touch(&format!("src/mine/{HISTORY}"));
    let cloned = home.touch(&format!("src/cloned/{HISTORY}"));
    let list = home.touch(".config/deja/aider-projects");
    std::fs::write(&list, format!("{}\n", home.path("src/mine").display())).unwrap();
    let discovery = AiderReader::discover(&context(&home.0, &[], "{}")).unwrap();
    let mut expected = vec![listed, cloned.clone()];
    expected.sort();
    assert_eq!(found(&discovery), expected);
    let marked: Vec<PathBuf> = reasons(&discovery)
        .into_iter()
        .filter(|(_, reason, _)| reason == "found in a code folder")
        .map(|(p, _, _)| p)
        .collect();
    assert_eq!(marked, [cloned]);
}
