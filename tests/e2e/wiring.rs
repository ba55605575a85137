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

/// Runs `deja context --hook AGENT [--on EVENT]` with `input` on stdin.
fn hook(sb: &Sandbox, agent: &str, event: &str, input: &serde_json::Value) -> serde_json::Value {
    let mut child = sb
        .command()
        .args(["context", "--hook", agent, "--on", event])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the hook failed");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A failed `terraform plan` of a new session, as Claude Code reports it.
fn state_lock_failure(session: &str) -> serde_json::Value {
    serde_json::json!({
        "session_id": session,
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "/tmp",
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash",
        "tool_input": {"command": "terraform plan"},
        "error": "Exit code 1\n\u{2502} Error: Error acquiring the state lock\n\u{2502} ConditionalCheckFailedException: The conditional request failed\n",
    })
}

#[test]
fn a_failed_command_gets_one_framed_note_naming_the_session_that_met_its_error() {
    let sb = demo_sandbox();
    let first = hook(&sb, "claude", "tool-failure", &state_lock_failure("live-1"));
    assert_eq!(
        first["hookSpecificOutput"]["hookEventName"], "PostToolUseFailure",
        "{first:#}"
    );
    let note = first["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    // The demo's infra session of 2025-12-01 17:02:18 met this lock.
    assert!(
        note.contains("aider-") && note.contains("-20251201T170218"),
        "the note does not name the state-lock session: {note}"
    );
    assert!(
        note.contains("<recalled-memory") && note.contains("</recalled-memory>"),
        "{note}"
    );
    assert!(note.contains("what was done"), "{note}");
    assert!(note.len() <= 1200, "{}", note.len());
    // Once per error text per session; another session hears it again.
    assert_eq!(
        hook(&sb, "claude", "tool-failure", &state_lock_failure("live-1")),
        serde_json::json!({})
    );
    assert!(
        hook(&sb, "qwen", "tool-failure", &state_lock_failure("live-2"))["hookSpecificOutput"]
            .is_object()
    );
    // Gemini CLI's AfterTool: a shell command that exited non-zero.
    let gemini = serde_json::json!({
        "session_id": "live-g",
        "cwd": "/tmp",
        "hook_event_name": "AfterTool",
        "tool_name": "run_shell_command",
        "tool_input": {"command": "terraform plan"},
        "tool_response": {
            "llmContent": "Command: terraform plan\nOutput: Error: Error acquiring the state lock\nConditionalCheckFailedException: The conditional request failed\nExit Code: 1\n",
            "returnDisplay": "",
        },
    });
    let noted = hook(&sb, "gemini", "tool-failure", &gemini);
    assert_eq!(
        noted["hookSpecificOutput"]["hookEventName"], "AfterTool",
        "{noted:#}"
    );
    assert!(noted["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .contains("-20251201T170218"));
    let mut ok = gemini.clone();
    ok["session_id"] = "live-h".into();
    ok["tool_response"]["llmContent"] =
        "Command: terraform plan\nOutput: Error: Error acquiring the state lock\nExit Code: 0\n"
            .into();
    assert_eq!(
        hook(&sb, "gemini", "tool-failure", &ok),
        serde_json::json!({}),
        "a command that succeeded got a note"
    );
    // An error no session met, and one too short to tell: nothing.
    let mut other = state_lock_failure("live-3");
    other["error"] = "zsh: command not found: frobnicate-the-widgets --harder".into();
    assert_eq!(
        hook(&sb, "claude", "tool-failure", &other),
        serde_json::json!({})
    );
    other["error"] = "exit 1".into();
    assert_eq!(
        hook(&sb, "claude", "tool-failure", &other),
        serde_json::json!({})
    );
}

#[test]
fn a_note_quoting_control_characters_keeps_its_frame_closed_within_its_bound() {
    // A stored message with the error and 2,000 backspaces: each becomes a
    // three-byte picture, which must not push the frame's end past the bound.
    let mut sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    let history = format!(
        "\n# aider chat started at 2025-12-01 17:02:18\n\n#### terraform plan dies with: Error: Error acquiring the state lock ConditionalCheckFailedException: The conditional request failed{}  \n\nThe lock is left over from the killed apply; unlock it with its ID.\n",
        "\u{8}".repeat(2000)
    );
    sb.write("src/infra/.aider.chat.history.md", history);
    sb.env("DEJA_AIDER_ROOTS", sb.home.join("src"));
    sb.ok(&["index"]);
    let shown = sb.ok(&["sessions", "--json"]).json();
    assert_eq!(shown["sessions"].as_array().unwrap().len(), 1, "{shown:#}");
    let answer = hook(&sb, "claude", "tool-failure", &state_lock_failure("live-1"));
    let note = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_else(|| panic!("no note: {answer:#}"));
    assert!(
        note.contains('\u{2408}'),
        "the backspaces are not quoted: {note}"
    );
    assert_eq!(note.matches("<recalled-memory").count(), 1, "{note}");
    assert_eq!(note.matches("</recalled-memory>").count(), 1, "{note}");
    assert!(note.trim_end().ends_with("</recalled-memory>"), "{note}");
    assert!(note.len() <= 1200, "{} bytes: {note}", note.len());
}

#[test]
fn hooks_add_nothing_when_injection_is_off_globally_or_for_the_agent() {
    let sb = demo_sandbox();
    let start = serde_json::json!({"session_id": "s", "cwd": billing_api(), "hook_event_name": "SessionStart"});
    assert!(hook(&sb, "claude", "session-start", &start)["hookSpecificOutput"].is_object());
    sb.config(
        "[embed]\nenabled = false\n[mcp]\nindex = false\n[context]\ninject_off = [\"claude\"]\n",
    );
    assert_eq!(
        hook(&sb, "claude", "session-start", &start),
        serde_json::json!({})
    );
    assert_eq!(
        hook(&sb, "claude", "tool-failure", &state_lock_failure("x")),
        serde_json::json!({})
    );
    assert!(hook(&sb, "qwen", "session-start", &start)["hookSpecificOutput"].is_object());
    sb.config("[embed]\nenabled = false\n[mcp]\nindex = false\n[context]\ninject = false\n");
    assert_eq!(
        hook(&sb, "qwen", "session-start", &start),
        serde_json::json!({})
    );
    sb.config("[context]\ninject_off = [\"vim\"]\n");
    let bad = sb.run(&["config"]);
    let said = format!("{}{}", bad.stderr, bad.stdout);
    assert!(
        said.contains("context.inject_off") && said.contains("vim"),
        "{said}"
    );
}

#[test]
fn setup_lists_every_agent_it_knows_with_what_it_would_change() {
    let sb = demo_sandbox();
    let list = sb.ok(&["setup", "--json"]).json();
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "claude", "codex", "gemini", "qwen", "opencode", "kilo", "copilot", "droid", "cline",
            "aider"
        ]
    );
    for a in list.as_array().unwrap() {
        assert_eq!(a["status"], "not wired", "{a:#}");
        assert!(!a["changes"].as_array().unwrap().is_empty(), "{a:#}");
    }
    // Nothing found in an empty HOME: `--all` wires nothing, says so.
    let out = sb.ok(&["setup", "--all"]);
    assert!(out.stderr.contains("no agent found"), "{}", out.stderr);
    std::fs::create_dir_all(sb.home.join(".qwen")).unwrap();
    let out = sb.ok(&["setup", "--all", "--dry-run"]).stdout;
    assert!(
        out.contains("would create") && out.contains(".qwen/settings.json"),
        "{out}"
    );
    assert!(
        !out.contains(".claude"),
        "an agent not found was wired: {out}"
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
        first.stderr.contains("only in folders you trust"),
        "{}",
        first.stderr
    );
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
    // The `extensions` folder setup created goes with it.
    assert!(!sb.home.join(".gemini/extensions").exists());
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
    // The project's own digest, the only one in the per-project folder.
    let digests = tree(&sb.data_dir().join("context/aider"));
    assert_eq!(digests.len(), 1, "{digests:?}");
    let context = digests[0].0.clone();
    let name = context.file_name().unwrap().to_str().unwrap().to_string();
    // aider names the file relative to where it runs.
    // (It wraps long lines: read the words.)
    let all = format!("{stdout}\n{stderr}");
    let words: Vec<&str> = all.split_whitespace().collect();
    let loaded = words
        .join(" ")
        .contains(&format!("context/aider/{name} to the chat (read-only)"));
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

/// Runs `deja setup aider` (or with `--undo`) and returns the conf file's text.
fn aider_setup(sb: &Sandbox, undo: bool) -> String {
    let args: &[&str] = if undo {
        &["setup", "aider", "--undo"]
    } else {
        &["setup", "aider"]
    };
    sb.ok(args);
    std::fs::read_to_string(sb.home.join(".aider.conf.yml")).unwrap_or_default()
}

/// The forms of `read:` setup edits, each with the file as the user had it,
/// an item the user adds after setup (appended at the end of the file, where
/// the list is) and what undo must leave then.
const FORMS: &[(&str, &str, &str, &str)] = &[
    (
        "no read key",
        "# my aider settings\nmodel: gpt-4o  # the default model\n",
        "  - mine.md\n",
        "# my aider settings\nmodel: gpt-4o  # the default model\nread:\n  - mine.md\n",
    ),
    (
        "block list",
        "model: gpt-4o\nread:\n  - a.md\n  - b.md  # style\n",
        "  - mine.md\n",
        "model: gpt-4o\nread:\n  - a.md\n  - b.md  # style\n  - mine.md\n",
    ),
    (
        "single value",
        "model: gpt-4o\nread: CONVENTIONS.md  # style\n",
        "  - mine.md\n",
        "model: gpt-4o\nread:\n  - CONVENTIONS.md  # style\n  - mine.md\n",
    ),
    (
        "flow list",
        "model: gpt-4o\nread: [a.md,b.md]  # two\n",
        "",
        "model: gpt-4o\nread: [a.md, b.md, mine.md]  # two\n",
    ),
];

#[test]
fn setup_aider_undo_restores_every_read_form_byte_for_byte_when_unedited() {
    for (form, conf, _, _) in FORMS {
        let sb = Sandbox::new();
        let path = sb.write(".aider.conf.yml", conf);
        crate::common::set_mode(&path, 0o640);
        let edited = aider_setup(&sb, false);
        assert_ne!(&edited, conf, "{form}: setup changed nothing");
        assert!(
            edited.contains(sb.data_dir().join("context/aider.md").to_str().unwrap()),
            "{form}: {edited}"
        );
        assert_eq!(&aider_setup(&sb, true), conf, "{form}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o640, "{form}: the file's mode changed");
        }
        assert!(
            !sb.home.join(".aider.conf.yml.deja-backup").exists(),
            "{form}: the backup stayed"
        );
        let again = sb.ok(&["setup", "aider", "--undo"]);
        assert!(again.stdout.is_empty(), "{form}: {}", again.stdout);
    }
}

#[test]
fn setup_aider_undo_after_another_key_was_added_gives_back_the_original_and_the_key() {
    for (form, conf, _, _) in FORMS {
        let sb = Sandbox::new();
        let edited = aider_setup(sb_with(&sb, conf), false);
        let path = sb.home.join(".aider.conf.yml");
        std::fs::write(&path, format!("{edited}dark-mode: true\n")).unwrap();
        let out = sb.ok(&["setup", "aider", "--undo"]);
        assert!(
            out.stdout.contains("edited since setup"),
            "{form}: {}",
            out.stdout
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{conf}dark-mode: true\n"),
            "{form}"
        );
    }
}

/// `sb` with `conf` as its `~/.aider.conf.yml`.
fn sb_with<'a>(sb: &'a Sandbox, conf: &str) -> &'a Sandbox {
    sb.write(".aider.conf.yml", conf);
    sb
}

#[test]
fn setup_aider_undo_after_the_user_added_an_entry_keeps_it_and_every_other() {
    for (form, conf, added, want) in FORMS {
        let sb = Sandbox::new();
        let edited = aider_setup(sb_with(&sb, conf), false);
        let entry = sb.data_dir().join("context/aider.md");
        let entry = entry.to_str().unwrap();
        let path = sb.home.join(".aider.conf.yml");
        let user = if added.is_empty() {
            // The flow list: an item after deja's, inside the brackets.
            edited.replace(&format!("{entry}]"), &format!("{entry}, mine.md]"))
        } else {
            format!("{edited}{added}")
        };
        assert_ne!(user, edited, "{form}: the test did not edit the file");
        std::fs::write(&path, &user).unwrap();
        sb.ok(&["setup", "aider", "--undo"]);
        let undone = std::fs::read_to_string(&path).unwrap();
        assert_eq!(&undone, want, "{form}: from\n{user}");
        assert!(!undone.contains(entry), "{form}");
    }
}

#[test]
fn setup_aider_refuses_what_it_could_not_undo_and_undo_refuses_to_guess() {
    let sb = Sandbox::new();
    let path = sb.home.join(".aider.conf.yml");
    // A flow list over two lines: setup leaves it alone.
    let conf = "read: [a.md,\n  b.md]\n";
    sb.write(".aider.conf.yml", conf);
    let out = sb.run(&["setup", "aider"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("flow list over several lines"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("hint:"), "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), conf);

    // The user made deja's file their single value: undo cannot tell whose
    // it is, says so, and changes nothing (and keeps what it needs).
    sb.write(".aider.conf.yml", "model: x\nread: a.md\n");
    let edited = aider_setup(&sb, false);
    let entry = sb.data_dir().join("context/aider.md");
    let entry = entry.to_str().unwrap();
    let mine = format!("model: x\nread: {entry}\n");
    std::fs::write(&path, &mine).unwrap();
    let out = sb.run(&["setup", "aider", "--undo"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("cannot undo"), "{}", out.stderr);
    assert!(out.stderr.contains("hint:"), "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), mine);
    // Put back as setup left it, undo then works.
    std::fs::write(&path, &edited).unwrap();
    assert_eq!(aider_setup(&sb, true), "model: x\nread: a.md\n");
}

#[test]
fn deja_aider_gives_each_project_its_own_digest() {
    let mut sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    // A stand-in for aider: the first time, it writes a chat history naming
    // its project, as aider does; it shows the file it was given to read.
    let bin = sb.home.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("aider");
    std::fs::write(
        &fake,
        "#!/bin/sh\nname=$(basename \"$(pwd)\")\n[ -f .aider.chat.history.md ] || printf '\\n# aider chat started at 2026-07-17 09:00:00\\n\\n#### why is the %s queue stuck?  \\n\\nThe %s queue lost its consumer.\\n' \"$name\" \"$name\" >> .aider.chat.history.md\nwhile [ $# -gt 0 ]; do if [ \"$1\" = --read ]; then echo \"READ $2\"; fi; shift; done\n",
    )
    .unwrap();
    crate::common::set_mode(&fake, 0o755);
    sb.env("PATH", format!("{}:/usr/bin:/bin", bin.display()));
    let mut read = std::collections::BTreeMap::new();
    for round in 0..2 {
        for name in ["alpha", "beta"] {
            let repo = sb.home.join("code").join(name);
            std::fs::create_dir_all(repo.join(".git")).unwrap();
            let out = sb
                .command()
                .current_dir(&repo)
                .arg("aider")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
            let file = stdout
                .lines()
                .find_map(|l| l.strip_prefix("READ "))
                .unwrap_or_else(|| panic!("no --read: {stdout}"))
                .to_string();
            if round == 1 {
                read.insert(name, (repo, PathBuf::from(file)));
            }
        }
    }
    let (alpha, alpha_file) = &read["alpha"];
    let (beta, beta_file) = &read["beta"];
    assert_ne!(alpha_file, beta_file, "one digest file for two projects");
    for f in [alpha_file, beta_file] {
        assert_eq!(f.parent().unwrap(), sb.data_dir().join("context/aider"));
    }
    let ids = |repo: &Path| -> Vec<String> {
        let v = sb
            .ok(&["sessions", "--json", "--project", repo.to_str().unwrap()])
            .json();
        v["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_string())
            .collect()
    };
    let (alpha_ids, beta_ids) = (ids(alpha), ids(beta));
    assert!(!alpha_ids.is_empty() && !beta_ids.is_empty());
    let alpha_digest = std::fs::read_to_string(alpha_file).unwrap();
    let beta_digest = std::fs::read_to_string(beta_file).unwrap();
    for id in &alpha_ids {
        assert!(
            alpha_digest.contains(id.as_str()),
            "{id} not in\n{alpha_digest}"
        );
        assert!(
            !beta_digest.contains(id.as_str()),
            "alpha's {id} in beta's\n{beta_digest}"
        );
    }
    for id in &beta_ids {
        assert!(
            beta_digest.contains(id.as_str()),
            "{id} not in\n{beta_digest}"
        );
        assert!(
            !alpha_digest.contains(id.as_str()),
            "beta's {id} in alpha's\n{alpha_digest}"
        );
    }
    assert!(
        alpha_digest.contains("alpha queue") && !alpha_digest.contains("beta queue"),
        "{alpha_digest}"
    );
    assert!(
        beta_digest.contains("beta queue") && !beta_digest.contains("alpha queue"),
        "{beta_digest}"
    );
    // Both projects are recorded for the reader.
    let projects = std::fs::read_to_string(sb.home.join(".config/deja/aider-projects")).unwrap();
    assert_eq!(
        projects,
        format!("{}\n{}\n", alpha.display(), beta.display())
    );
    // The file setup names in ~/.aider.conf.yml holds neither project's memory.
    sb.ok(&["setup", "aider"]);
    let shared = std::fs::read_to_string(sb.data_dir().join("context/aider.md")).unwrap();
    for id in alpha_ids.iter().chain(&beta_ids) {
        assert!(!shared.contains(id.as_str()), "{shared}");
    }
    assert!(shared.contains("deja aider"), "{shared}");
}
