//! `deja setup AGENT` never loses an edit of the user's: setting up again
//! after the user changed a file, then `--undo`, keeps the change for every
//! agent and every form of file (JSON, TOML, aider's YAML, files deja owns);
//! undo takes out deja's entries after deja moved or its variables changed,
//! keeps a hook group the user shares with deja, leaves the bytes of the
//! file outside deja's entries as they were, and takes back a change an
//! earlier deja recorded its own way (aider).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::common::{deja_bin, Output, Sandbox};

/// The user's edit of a file, by its form.
fn user_edit(path: &Path, text: &str) -> String {
    match path.extension().and_then(|e| e.to_str()) {
        Some("json") => text.replacen('{', "{\"mine\": 1, ", 1),
        Some("toml") => format!("{text}\n[profiles.mine]\nmodel = \"x\"\n"),
        Some("yml") => format!("{text}dark-mode: true\n"),
        _ => text.to_string(),
    }
}

/// Runs `deja` with the sandbox's environment plus `vars`.
fn deja(sb: &Sandbox, vars: &[(&str, &str)], args: &[&str]) -> Output {
    run(sb, &deja_bin(), vars, args)
}

fn run(sb: &Sandbox, exe: &Path, vars: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd: Command = sb.command_of(exe);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.args(args).output().unwrap();
    let out = Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert_eq!(
        out.code, 0,
        "deja {args:?} failed\nstdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
    out
}

/// The files of each agent setup changes (the user's settings files), with
/// what the user had before (`None`: setup creates it).
fn agent_files(agent: &str) -> Vec<(&'static str, Option<&'static str>)> {
    match agent {
        "claude" => vec![
            (".claude.json", Some("{\n  \"numStartups\": 3\n}\n")),
            (
                ".claude/settings.json",
                Some("{\n  \"permissions\": {\n    \"allow\": [\"Bash(ls)\"]\n  }\n}\n"),
            ),
        ],
        "codex" => vec![
            (".codex/config.toml", Some("# mine\nmodel = \"o3\"\n")),
            (".codex/hooks.json", None),
        ],
        "qwen" => vec![(".qwen/settings.json", Some("{\"general\": {}}\n"))],
        "opencode" => vec![(".config/opencode/opencode.json", None)],
        "kilo" => vec![(
            ".config/kilo/kilo.json",
            Some("{\n  \"model\": \"mock/gpt-4o\"\n}\n"),
        )],
        "copilot" => vec![(
            ".copilot/mcp-config.json",
            Some("{\n  \"mcpServers\": {}\n}\n"),
        )],
        "droid" => vec![
            (".factory/mcp.json", None),
            (
                ".factory/settings.json",
                Some("{\n  \"customModels\": []\n}\n"),
            ),
        ],
        "cline" => vec![(".cline/data/settings/cline_mcp_settings.json", None)],
        "aider" => vec![(".aider.conf.yml", Some("model: gpt-4o\nread: [a.md]\n"))],
        _ => Vec::new(),
    }
}

/// Whether `text` still holds something of deja's.
fn has_deja(text: &str) -> bool {
    text.contains("context --hook")
        || text.contains("\"deja\"")
        || text.contains("mcp__deja")
        || text.contains("mcp_servers.deja")
        || text.contains("context/aider.md")
}

#[test]
fn a_second_setup_after_the_users_edits_then_undo_keeps_them_for_every_agent() {
    for agent in [
        "claude", "codex", "qwen", "opencode", "gemini", "aider", "kilo", "copilot", "droid",
        "cline",
    ] {
        let sb = Sandbox::new();
        let files = agent_files(agent);
        for (rel, before) in &files {
            if let Some(b) = before {
                sb.write(rel, b);
            }
        }
        deja(&sb, &[("DEJA_CLAUDE_ROOT", "/one")], &["setup", agent]);
        // The user edits every file setup changed.
        let mut want = Vec::new();
        for (rel, before) in &files {
            let p = sb.home.join(rel);
            let text = std::fs::read_to_string(&p).unwrap();
            assert!(has_deja(&text), "{agent}: setup left {rel} alone:\n{text}");
            std::fs::write(&p, user_edit(&p, &text)).unwrap();
            want.push((p.clone(), before.map(|b| user_edit(&p, b))));
        }
        // Files of the user's in deja's extension folder.
        let notes = sb.home.join(".gemini/extensions/deja/NOTES.md");
        if agent == "gemini" {
            sb.write(".gemini/extensions/deja/NOTES.md", "mine\n");
        }
        // Set up again (deja's variables changed), then undo (changed again).
        deja(&sb, &[("DEJA_CLAUDE_ROOT", "/two")], &["setup", agent]);
        deja(
            &sb,
            &[("DEJA_CLAUDE_ROOT", "/three")],
            &["setup", agent, "--undo"],
        );
        for (p, want) in &want {
            let got = std::fs::read_to_string(p)
                .unwrap_or_else(|e| panic!("{agent}: {} is gone after undo: {e}", p.display()));
            match want {
                Some(w) => assert_eq!(&got, w, "{agent}: {}", p.display()),
                // Created by setup: the user's key alone is left.
                None => assert_eq!(
                    serde_json::from_str::<Value>(&got).unwrap(),
                    json!({"mine": 1}),
                    "{agent}: {}",
                    p.display()
                ),
            }
            assert!(
                !has_deja(&got),
                "{agent}: {} keeps deja's: {got}",
                p.display()
            );
        }
        if agent == "gemini" {
            let ext = sb.home.join(".gemini/extensions/deja");
            assert_eq!(std::fs::read_to_string(&notes).unwrap(), "mine\n");
            assert!(!ext.join("gemini-extension.json").exists());
            assert!(!ext.join("hooks").exists());
            assert!(!sb.home.join(".gemini/policies/deja.toml").exists());
        }
        if agent == "opencode" {
            assert!(!sb.home.join(".config/opencode/plugin").exists());
        }
        if agent == "kilo" {
            assert!(!sb.home.join(".config/kilo/plugin").exists());
        }
        assert!(
            !sb.data_dir().join("setup").join(agent).exists(),
            "{agent}: the undo record stayed"
        );
    }
}

/// A copy of the deja executable at another path (a hard link: this_exe
/// resolves symbolic links).
fn deja_elsewhere(sb: &Sandbox) -> PathBuf {
    let dir = sb.home.parent().unwrap().join("moved/bin");
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join("deja");
    if std::fs::hard_link(deja_bin(), &exe).is_err() {
        std::fs::copy(deja_bin(), &exe).unwrap();
    }
    exe
}

#[test]
fn undo_after_deja_moved_or_its_variables_changed_takes_its_entries_out() {
    for agent in ["claude", "qwen", "opencode", "codex"] {
        let sb = Sandbox::new();
        let files = agent_files(agent);
        for (rel, before) in &files {
            if let Some(b) = before {
                sb.write(rel, b);
            }
        }
        deja(
            &sb,
            &[("DEJA_HOME", &sb.data_dir().to_string_lossy())],
            &["setup", agent],
        );
        // The agent rewrites its file (Claude Code does at every start).
        for (rel, _) in &files {
            let p = sb.home.join(rel);
            let text = std::fs::read_to_string(&p).unwrap();
            std::fs::write(&p, user_edit(&p, &text)).unwrap();
        }
        // Undone by deja at another path, without DEJA_HOME.
        let moved = deja_elsewhere(&sb);
        let out = run(&sb, &moved, &[], &["setup", agent, "--undo"]);
        for (rel, before) in &files {
            let got = std::fs::read_to_string(sb.home.join(rel)).unwrap();
            assert!(
                !has_deja(&got),
                "{agent}: {rel} keeps deja's:\n{got}\n{}",
                out.stderr
            );
            if let Some(b) = before {
                assert_eq!(got, user_edit(&sb.home.join(rel), b), "{agent}: {rel}");
            }
        }
        assert!(!sb.data_dir().join("setup").join(agent).exists(), "{agent}");
    }
}

#[test]
fn undo_that_cannot_take_an_entry_out_says_so_and_keeps_its_record() {
    let sb = Sandbox::new();
    sb.write(".qwen/settings.json", "{}\n");
    sb.ok(&["setup", "qwen"]);
    let path = sb.home.join(".qwen/settings.json");
    // A repeated key: the first of two `deja` entries.
    let text = std::fs::read_to_string(&path).unwrap().replacen(
        "\"mcpServers\": {",
        "\"mcpServers\": {\"deja\": {\"command\": \"/x/deja\", \"args\": [\"mcp\"]},",
        1,
    );
    std::fs::write(&path, &text).unwrap();
    let out = sb.run(&["setup", "qwen", "--undo"]);
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stderr.contains("still holds `mcpServers.deja`") && out.stderr.contains("hint:"),
        "{}",
        out.stderr
    );
    assert!(sb.data_dir().join("setup/qwen").exists(), "the record went");
}

#[test]
fn a_hook_group_shared_with_the_users_hooks_keeps_them_through_setup_and_undo() {
    let sb = Sandbox::new();
    let settings = r#"{
  "hooks": {
    "SessionStart": [
      {
        "matcher": "startup",
        "hooks": [
          { "type": "command", "command": "~/bin/notify-start" },
          { "type": "command", "command": "/opt/old/deja context --hook claude" }
        ]
      },
      { "hooks": [ { "type": "command", "command": "echo ' context --hook '" } ] }
    ]
  }
}
"#;
    let path = sb.write(".claude/settings.json", settings);
    sb.ok(&["setup", "claude"]);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let groups = v["hooks"]["SessionStart"].as_array().unwrap();
    assert_eq!(
        groups[0],
        json!({"matcher": "startup", "hooks": [{"type": "command", "command": "~/bin/notify-start"}]}),
        "{v:#}"
    );
    assert_eq!(groups[1]["hooks"][0]["command"], "echo ' context --hook '");
    assert_eq!(groups.len(), 3, "{v:#}");
    sb.ok(&["setup", "claude", "--undo"]);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let groups = v["hooks"]["SessionStart"].as_array().unwrap();
    assert_eq!(groups.len(), 2, "{v:#}");
    assert_eq!(groups[0]["hooks"][0]["command"], "~/bin/notify-start");
    assert_eq!(groups[1]["hooks"][0]["command"], "echo ' context --hook '");
}

#[test]
fn big_integers_and_the_files_formatting_keep_their_bytes() {
    let sb = Sandbox::new();
    let original = "{\n\t\"big\": 123456789012345678901234567890,\n\t\"ratio\": 1.50,\n\t\"tips\": {\"a\": 1, \"b\": [1,2]}\n}\n";
    let path = sb.write(".claude.json", original);
    sb.ok(&["setup", "claude"]);
    let wired = std::fs::read_to_string(&path).unwrap();
    assert!(
        wired.starts_with(
            "{\n\t\"big\": 123456789012345678901234567890,\n\t\"ratio\": 1.50,\n\t\"tips\": {\"a\": 1, \"b\": [1,2]},\n\t\"mcpServers\": {\n\t\t\"deja\": {"
        ),
        "{wired}"
    );
    // The agent changes a key of its own: undo takes deja's entry alone.
    std::fs::write(&path, wired.replace("\"a\": 1", "\"a\": 2")).unwrap();
    sb.ok(&["setup", "claude", "--undo"]);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        original.replace("\"a\": 1", "\"a\": 2")
    );
}

/// What an earlier deja wrote for `deja setup aider`: the conf with its
/// entry, its record in `<data>/setup/aider.json` and the original beside
/// the conf.
fn old_aider_setup(sb: &Sandbox, original: &str) -> String {
    let entry = sb.data_dir().join("context/aider.md");
    let entry = entry.to_str().unwrap();
    let mark = "# added by deja setup aider";
    let written = format!("{original}read:  {mark}\n  - {entry}  {mark}\n");
    sb.write(".aider.conf.yml", &written);
    sb.write(".aider.conf.yml.deja-backup", original);
    let record = json!({
        "created": false,
        "file": sb.home.join(".aider.conf.yml"),
        "written_sha256": deja_model::sha256_hex(written.as_bytes()),
        "entry": entry,
        "form": "absent",
        "original": null,
    });
    std::fs::create_dir_all(sb.data_dir().join("setup")).unwrap();
    std::fs::write(sb.data_dir().join("setup/aider.json"), record.to_string()).unwrap();
    written
}

#[test]
fn an_earlier_dejas_aider_record_and_backup_are_undone_and_moved() {
    let original = "# mine\nmodel: gpt-4o\n";
    // As that setup left it: the original byte for byte.
    let sb = Sandbox::new();
    old_aider_setup(&sb, original);
    sb.ok(&["setup", "aider", "--undo"]);
    let conf = sb.home.join(".aider.conf.yml");
    assert_eq!(std::fs::read_to_string(&conf).unwrap(), original);
    assert!(!sb.home.join(".aider.conf.yml.deja-backup").exists());
    assert!(!sb.data_dir().join("setup/aider.json").exists());
    // Edited since: deja's entry alone comes out.
    let sb = Sandbox::new();
    let written = old_aider_setup(&sb, original);
    std::fs::write(
        sb.home.join(".aider.conf.yml"),
        format!("{written}dark-mode: true\n"),
    )
    .unwrap();
    sb.ok(&["setup", "aider", "--undo"]);
    assert_eq!(
        std::fs::read_to_string(sb.home.join(".aider.conf.yml")).unwrap(),
        format!("{original}dark-mode: true\n")
    );
    // Set up again by this deja: the old record and the backup in HOME go,
    // and a later undo still gives back the original.
    let sb = Sandbox::new();
    old_aider_setup(&sb, original);
    sb.ok(&["setup", "aider"]);
    assert!(!sb.home.join(".aider.conf.yml.deja-backup").exists());
    assert!(!sb.data_dir().join("setup/aider.json").exists());
    sb.ok(&["setup", "aider", "--undo"]);
    assert_eq!(
        std::fs::read_to_string(sb.home.join(".aider.conf.yml")).unwrap(),
        original
    );
}

#[test]
fn auto_approval_names_dejas_tools_one_by_one() {
    let sb = Sandbox::new();
    sb.write(".claude/settings.json", "{}\n");
    for agent in ["claude", "qwen", "codex", "gemini"] {
        sb.ok(&["setup", agent]);
    }
    let tools = ["recall", "session", "sessions"];
    let read = |rel: &str| std::fs::read_to_string(sb.home.join(rel)).unwrap();
    for rel in [".claude/settings.json", ".qwen/settings.json"] {
        let v: Value = serde_json::from_str(&read(rel)).unwrap();
        let allow: Vec<&str> = v["permissions"]["allow"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let want: Vec<String> = tools.iter().map(|t| format!("mcp__deja__{t}")).collect();
        assert_eq!(allow, want, "{rel}");
        assert!(!read(rel).contains("\"trust\""), "{rel}");
    }
    let codex: toml::Table = toml::from_str(&read(".codex/config.toml")).unwrap();
    let server = &codex["mcp_servers"]["deja"];
    assert!(server.get("default_tools_approval_mode").is_none());
    for t in tools {
        assert_eq!(
            server["tools"][t]["approval_mode"].as_str(),
            Some("approve"),
            "{t}"
        );
    }
    let policy: toml::Table = toml::from_str(&read(".gemini/policies/deja.toml")).unwrap();
    let names: Vec<&str> = policy["rule"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert_eq!(r["mcpName"].as_str(), Some("deja"));
            r["toolName"].as_str().unwrap()
        })
        .collect();
    assert_eq!(names, tools);
}
