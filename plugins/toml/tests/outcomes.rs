//! How commands ended, as reader descriptions say it (`exit_code`, `failed`
//! and `succeeded` in a `[[tools]]` rule, or a `[[results]]` record matched
//! by `call_id`), on what the agents wrote: OpenCode 1.18.33's and pi
//! 0.73.1's own files, and the Copilot CLI events of the golden fixtures.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::path::Path;

use deja_plugin_api::testing;
use deja_plugin_api::{CommandOutcome, ParseOutputV1_2, ParseRequest, Reader};
use deja_plugin_toml::TomlReader;

/// The commands of the first session read by description `name` from
/// `path`, each with its outcome.
fn commands(name: &str, path: &Path) -> Vec<(String, CommandOutcome)> {
    let bytes = std::fs::read(path).unwrap();
    let c = common::context(name, Path::new("/nonexistent-home"), &[]);
    let out: ParseOutputV1_2 = TomlReader::parse_with_outcomes(&ParseRequest {
        path: path.to_string_lossy().as_ref().into(),
        bytes: bytes.as_slice().into(),
        modified_ms: 0,
        context: &c,
    })
    .unwrap();
    let s = &out.output.sessions[0];
    s.commands
        .iter()
        .enumerate()
        .map(|(i, cmd)| (cmd.command.to_string(), out.outcome(0, i)))
        .collect()
}

fn only_file(dir: &Path) -> std::path::PathBuf {
    testing::walk(dir)
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .unwrap()
}

#[test]
fn opencode_keeps_the_bash_tools_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("opencode.db");
    std::fs::copy(
        testing::fixtures("opencode").join("real-1.18.33/opencode.db"),
        &db,
    )
    .unwrap();
    assert_eq!(
        commands("opencode.toml", &db),
        [("ls -la".to_string(), CommandOutcome::from_exit_code(0))]
    );
}

#[test]
fn pi_gives_a_bash_calls_outcome_in_its_tool_result() {
    let file = only_file(&testing::fixtures("pi").join("real-0.73.1"));
    assert_eq!(
        commands("pi.toml", &file),
        [("ls -la".to_string(), CommandOutcome::from_failed(false))]
    );
}

#[test]
fn copilot_gives_the_exit_code_of_a_shell_execution() {
    let file = testing::fixtures("copilot")
        .join("7c1e2f90-1b2c-4d5e-8f90-a1b2c3d4e5f6")
        .join("events.jsonl");
    let found = commands("copilot.toml", &file);
    assert_eq!(
        found,
        [(
            "rg -n tenant_id reports/".to_string(),
            CommandOutcome::from_exit_code(1)
        )]
    );
}
