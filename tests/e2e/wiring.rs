//! Wiring deja into the harnesses: `deja context` (the project digest, and
//! Gemini CLI's SessionStart hook), `deja setup gemini|aider` with its
//! guarantees (dry run, idempotence, exact undo), proven with the real Gemini
//! CLI (`gemini mcp list` must show deja connected) and the real aider (it
//! must load the digest read-only), both installed by `scripts/fetch-clients`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::{deja_bin, fixtures, Sandbox};
use crate::mcp::clients_dir;

/// The demo fixtures indexed without embeddings (the digest needs none).
fn demo_sandbox() -> Sandbox {
    let mut sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n[mcp]\nindex = false\n");
    sb.env("DEJA_AIDER_ROOTS", fixtures().join("demo/aider"));
    sb.env("DEJA_GEMINI_ROOT", fixtures().join("demo/gemini"));
    sb.ok(&["index"]);
    sb
}

fn billing_api() -> PathBuf {
    std::fs::canonicalize(fixtures().join("demo/aider/billing-api")).unwrap()
}

#[test]
fn context_is_a_bounded_deterministic_digest_in_the_frame() {
    let sb = demo_sandbox();
    let project = billing_api();
    let project = project.to_str().unwrap();
    let out = sb.ok(&["context", "--project", project]).stdout;
    assert!(out.contains("<recalled-memory"), "{out}");
    assert!(out.contains("</recalled-memory>"), "{out}");
    assert!(out.contains("aider"), "{out}");
    assert!(out.len() <= 4000, "{}", out.len());
    assert_eq!(
        out,
        sb.ok(&["context", "--project", project]).stdout,
        "not deterministic"
    );
    let json = sb.ok(&["context", "--project", project, "--json"]).json();
    let listed = json["sessions"].as_array().unwrap();
    assert!(!listed.is_empty(), "{json:#}");
    for id in listed {
        assert!(out.contains(id.as_str().unwrap()), "{id} not in the digest");
    }

    let small = sb
        .ok(&["context", "--project", project, "--max-bytes", "400"])
        .stdout;
    assert!(small.len() <= 400, "{}: {small}", small.len());

    let none = sb.ok(&["context", "--project", "/no/such/project"]).stdout;
    assert!(none.contains("no past session of this project"), "{none}");
    let empty = Sandbox::new();
    let nothing = empty.ok(&["context", "--project", project]).stdout;
    assert!(
        nothing.contains("has not indexed anything yet"),
        "{nothing}"
    );
}

#[test]
fn gemini_session_start_hook_answers_in_its_protocol() {
    let sb = demo_sandbox();
    let mut child = sb
        .command()
        .args(["context", "--hook", "gemini"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let input = serde_json::json!({
        "session_id": "s1",
        "transcript_path": "/tmp/t.json",
        "cwd": billing_api(),
        "hook_event_name": "SessionStart",
        "timestamp": "2026-12-01T00:00:00Z",
        "source": "startup",
    });
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["hookSpecificOutput"]["hookEventName"], "SessionStart",
        "{v:#}"
    );
    let context = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        context.contains("<recalled-memory") && context.contains("aider"),
        "{context}"
    );
}

/// Every file below `dir` with its bytes, for comparing trees (empty when
/// `dir` does not exist; a folder that cannot be listed fails the test).
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => panic!("cannot list {}: {e}", dir.display()),
    };
    let mut out = Vec::new();
    for e in entries {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(tree(&p));
        } else {
            out.push((p.clone(), std::fs::read(&p).unwrap()));
        }
    }
    out.sort();
    out
}

fn gemini_cli() -> PathBuf {
    let bin = clients_dir().join("npm/node_modules/.bin/gemini");
    assert!(
        bin.is_file(),
        "Gemini CLI is not installed in {}; run scripts/fetch-clients first",
        clients_dir().display()
    );
    bin
}

#[test]
fn setup_gemini_makes_the_real_gemini_cli_connect_and_undo_restores_everything() {
    let gemini = gemini_cli();
    let sb = demo_sandbox();
    let work = sb.home.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let settings = r#"{
  "ui": { "theme": "Default" },
  "mcpServers": { "other": { "command": "true" } }
}
"#;
    sb.write(".gemini/settings.json", settings);
    sb.write(
        ".gemini/trustedFolders.json",
        serde_json::json!({ work.to_str().unwrap(): "TRUST_FOLDER" }).to_string(),
    );
    let before = tree(&sb.home.join(".gemini"));

    let dry = sb.ok(&["setup", "gemini", "--dry-run"]);
    assert!(dry.stdout.contains("would write"), "{}", dry.stdout);
    assert_eq!(
        before,
        tree(&sb.home.join(".gemini")),
        "a dry run changed files"
    );

    let first = sb.ok(&["setup", "gemini"]);
    assert!(
        first.stdout.contains("gemini-extension.json"),
        "{}",
        first.stdout
    );
    let wired = tree(&sb.home.join(".gemini"));
    let again = sb.ok(&["setup", "gemini"]);
    assert!(
        again.stdout.is_empty(),
        "a second setup changed: {}",
        again.stdout
    );
    assert_eq!(wired, tree(&sb.home.join(".gemini")));

    let doctor = sb.run(&["doctor", "--json"]).json();
    let gemini_wiring = doctor["wiring"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["harness"] == "gemini")
        .unwrap()
        .clone();
    assert_eq!(gemini_wiring["status"], "wired", "{gemini_wiring:#}");

    // The real Gemini CLI lists deja's server as connected.
    let out = Command::new(&gemini)
        .args(["mcp", "list"])
        .env_clear()
        .env("HOME", &sb.home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GEMINI_API_KEY", "dummy")
        .current_dir(&work)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    println!("gemini mcp list:\n{stdout}\n{stderr}");
    let line = stdout
        .lines()
        .chain(stderr.lines())
        .find(|l| l.contains("deja"))
        .unwrap_or_else(|| panic!("deja is not listed:\n{stdout}\n{stderr}"));
    assert!(line.contains("Connected"), "not connected: {line}");
    assert!(
        line.contains(deja_bin().to_str().unwrap()) || line.contains("mcp"),
        "{line}"
    );

    // Undo: the settings are byte for byte what they were, the extension gone.
    sb.ok(&["setup", "gemini", "--undo"]);
    assert_eq!(
        std::fs::read_to_string(sb.home.join(".gemini/settings.json")).unwrap(),
        settings
    );
    assert!(!sb.home.join(".gemini/extensions/deja").exists());
    let after: Vec<(PathBuf, Vec<u8>)> = tree(&sb.home.join(".gemini"))
        .into_iter()
        .filter(|(p, _)| before.iter().any(|(q, _)| q == p))
        .collect();
    assert_eq!(before, after, "a file that was there before changed");
}

#[test]
fn setup_gemini_leaves_an_extension_it_did_not_write_alone_and_doctor_sees_a_stale_one() {
    let sb = demo_sandbox();
    let ext = sb.home.join(".gemini/extensions/deja");
    let foreign = r#"{"name": "deja", "version": "someone else's"}"#;
    sb.write(".gemini/extensions/deja/gemini-extension.json", foreign);
    for args in [&["setup", "gemini"][..], &["setup", "gemini", "--undo"]] {
        let out = sb.run(args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains("not written by"), "{}", out.stderr);
        assert_eq!(
            std::fs::read_to_string(ext.join("gemini-extension.json")).unwrap(),
            foreign,
            "{args:?} touched it"
        );
    }

    // deja's own extension, then changed as when the deja it runs is replaced.
    std::fs::remove_dir_all(&ext).unwrap();
    sb.ok(&["setup", "gemini"]);
    assert!(ext.join(".deja-setup.json").is_file());
    let manifest = ext.join("gemini-extension.json");
    let written = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, written.replace("mcp", "mcp-elsewhere")).unwrap();
    let doctor = sb.run(&["doctor", "--json"]).json();
    let gemini = doctor["wiring"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["harness"] == "gemini")
        .unwrap()
        .clone();
    assert_eq!(gemini["status"], "stale", "{gemini:#}");
    let problems = doctor["problems"].to_string();
    assert!(problems.contains("deja setup gemini"), "{problems}");
    // Setting up again repairs it.
    sb.ok(&["setup", "gemini"]);
    assert_eq!(std::fs::read_to_string(&manifest).unwrap(), written);
}

#[test]
fn setup_aider_edits_the_conf_keeping_everything_and_undo_restores_it() {
    let sb = demo_sandbox();
    let conf = "# my aider settings\nmodel: gpt-4o  # the default model\nread: CONVENTIONS.md\ndark-mode: true\n";
    sb.write(".aider.conf.yml", conf);
    let dry = sb.ok(&["setup", "aider", "--dry-run"]);
    assert!(dry.stdout.contains("would add"), "{}", dry.stdout);
    assert_eq!(
        std::fs::read_to_string(sb.home.join(".aider.conf.yml")).unwrap(),
        conf
    );

    sb.ok(&["setup", "aider"]);
    let edited = std::fs::read_to_string(sb.home.join(".aider.conf.yml")).unwrap();
    let context = sb.data_dir().join("context/aider.md");
    for kept in [
        "# my aider settings",
        "model: gpt-4o  # the default model",
        "  - CONVENTIONS.md",
        "dark-mode: true",
    ] {
        assert!(edited.contains(kept), "lost `{kept}`:\n{edited}");
    }
    assert!(edited.contains(context.to_str().unwrap()), "{edited}");
    assert!(context.is_file(), "the digest file was not written");
    let again = sb.ok(&["setup", "aider"]);
    assert!(again.stdout.is_empty(), "{}", again.stdout);

    sb.ok(&["setup", "aider", "--undo"]);
    assert_eq!(
        std::fs::read_to_string(sb.home.join(".aider.conf.yml")).unwrap(),
        conf
    );
}

fn real_aider() -> PathBuf {
    let bin = clients_dir().join("aider/bin/aider");
    assert!(
        bin.is_file(),
        "aider is not installed in {}; run scripts/fetch-clients first",
        clients_dir().display()
    );
    bin
}

#[test]
fn deja_aider_starts_the_real_aider_with_the_digest_read_only() {
    let aider = real_aider();
    let mut sb = demo_sandbox();
    let project = sb.home.join("proj");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    let bin_dir = aider.parent().unwrap().to_path_buf();
    let path = std::env::join_paths(std::iter::once(bin_dir).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    sb.env("PATH", path);
    sb.env("OPENAI_API_KEY", "sk-dummy");
    let out = sb
        .command()
        .current_dir(&project)
        .args([
            "aider",
            "--model",
            "gpt-4o",
            "--exit",
            "--no-git",
            "--no-check-update",
            "--no-show-release-notes",
            "--yes-always",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let context = sb.data_dir().join("context/aider.md");
    // aider names the file relative to where it runs.
    let loaded = stdout.lines().chain(stderr.lines()).any(|l| {
        l.starts_with("Added ")
            && l.contains("context/aider.md")
            && l.contains("to the chat (read-only)")
    });
    assert!(
        loaded,
        "aider did not load the digest\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let digest = std::fs::read_to_string(&context).unwrap();
    assert!(
        digest.contains(&project.to_string_lossy().into_owned()),
        "{digest}"
    );
}
