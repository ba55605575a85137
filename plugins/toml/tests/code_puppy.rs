//! The Code Puppy reader, written only in TOML (`readers/code-puppy.toml`):
//! `fixtures/golden/code-puppy/real-0.0.946/` holds the automatic save Code
//! Puppy 0.0.946 wrote (`code-puppy -p`, then `-p ... --resume <name>`) in a
//! run against a scripted model, each turn running a shell command, with
//! its `_meta.json` beside it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::{Path, PathBuf};

use deja_plugin_api::testing;
use deja_plugin_api::{HostContext, ParseOutput, ROption, Reader, Role};
use deja_plugin_toml::TomlReader;

const NAME: &str = "auto_session_20261206_032121_467355_16226";

fn context(home: &Path, env: &[(&str, &str)]) -> HostContext {
    common::context("code-puppy.toml", home, env)
}

fn golden() -> PathBuf {
    testing::fixtures("code-puppy").join("real-0.0.946")
}

fn parse(file: &Path) -> ParseOutput {
    testing::parse_file::<TomlReader>(file, &context(Path::new("/nonexistent"), &[]))
}

#[test]
fn a_session_code_puppy_saved_reads_as_typed_and_answered() {
    let out = parse(&golden().join(format!("{NAME}.json")));
    let s = common::only_session(&out);
    assert_eq!(s.id.as_str(), NAME);
    // The folder it ran in, from the sidecar.
    assert_eq!(
        s.project.dir.as_ref().map(|d| d.as_str()),
        ROption::RSome("/tmp/cand/t8/home/work/ledger")
    );
    // Not the instructions, nor the tool results sent back in requests.
    assert_eq!(
        common::messages(s),
        vec![
            (
                Role::User,
                "Why does the ledger show rows of other tenants?"
            ),
            (Role::Assistant, "Looking at the query first."),
            (
                Role::Assistant,
                "The ledger query lost its tenant predicate in the join."
            ),
            (Role::User, "Which migration added the tenant column?"),
            (
                Role::Assistant,
                "Migration 0042 added the tenant column to the ledger."
            ),
        ]
    );
    let commands: Vec<&str> = s.commands.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(commands, vec!["grep -rn \"tenant_id\" .", "ls migrations"]);
    // 2026-12-06 03:21:22.078 UTC.
    assert_eq!(s.messages[0].timestamp_ms, 1_796_527_282_078);
}

#[test]
fn discovery_follows_code_puppys_own_places_and_passes_the_sidecars_by() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".code_puppy/autosaves");
    std::fs::create_dir_all(&dir).unwrap();
    for f in [format!("{NAME}.json"), format!("{NAME}_meta.json")] {
        std::fs::copy(golden().join(&f), dir.join(&f)).unwrap();
    }
    let found = |env: &[(&str, &str)]| -> Vec<String> {
        let mut names: Vec<String> = TomlReader::discover(&context(home.path(), env))
            .unwrap()
            .transcripts
            .iter()
            .map(|t| {
                Path::new(t.as_str())
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        names.sort();
        names
    };
    assert_eq!(found(&[]), vec![format!("{NAME}.json")]);
    let cache = home.path().join("cache");
    std::fs::create_dir_all(cache.join("code_puppy/autosaves")).unwrap();
    std::fs::copy(
        golden().join(format!("{NAME}.json")),
        cache.join("code_puppy/autosaves/other.json"),
    )
    .unwrap();
    let cache_text = cache.to_string_lossy().into_owned();
    assert_eq!(found(&[("XDG_CACHE_HOME", &cache_text)]).len(), 2);
}

#[test]
fn resume_reopens_the_session() {
    let c = context(Path::new("/nonexistent"), &[]);
    let (argv, _) = common::resume(&c, NAME, Some("/tmp"));
    assert_eq!(argv, vec!["code-puppy", "--resume", NAME]);
}
