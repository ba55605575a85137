//! The agents `deja setup` wires beyond the first six, run for real against
//! the scripted model: `deja setup AGENT` writes deja's entries, the agent's
//! CLI offers deja's `recall` tool to the model, the model's scripted call
//! gets deja's framed answer naming the right past session, `deja setup`
//! lists the agent as wired, and `deja setup AGENT --undo` gives the agent's
//! files back byte for byte.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use serde_json::{json, Value};

use crate::agents::{
    agent_cli, assert_restored, body, conversation, demo, run_agent, snapshot, step_request,
    summary, tool_result, Demo, ModelServer, ANSWER, QUESTION,
};

/// One agent's part of the round: its files, its settings, its run.
struct Wired {
    /// The name `deja setup` takes.
    name: &'static str,
    /// Every file `deja setup` touches, under HOME.
    files: Vec<&'static str>,
    /// The name the agent gives deja's `recall` tool.
    recall: &'static str,
    /// Whether setup gives it the digest in the first user message.
    digest: bool,
    /// Whether the agent leaves setup's files as they are while it runs (so
    /// that undo must give back the bytes from before setup).
    keeps_files: bool,
}

/// `deja setup`'s list entry of `name`.
fn listed(d: &Demo, name: &str) -> Value {
    let list = d.sb.ok(&["setup", "--json"]).json();
    list.as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == name)
        .unwrap_or_else(|| panic!("`deja setup` does not list {name}: {list:#}"))
        .clone()
}

/// The whole round for `w`: `configure` writes the agent's own settings
/// (pointed at the model server's URL), `command` is its non-interactive run
/// of a prompt in the demo's billing-api copy.
fn round_trip(
    w: &Wired,
    configure: impl FnOnce(&Demo, &str),
    command: impl FnOnce(&Demo, &str, &str) -> Command,
) {
    let started = Instant::now();
    let d = demo();
    let sb = &d.sb;
    let run_dir = sb.home.parent().unwrap().join("run");
    let server = ModelServer::start(
        &run_dir,
        &json!([
            {"tool_like": "recall", "input": {"query": "tenant predicate bug"}},
            {"text": ANSWER},
        ]),
    );
    configure(&d, &server.url);
    let files: Vec<PathBuf> = w.files.iter().map(|f| sb.home.join(f)).collect();
    let before = snapshot(&files);
    assert_eq!(listed(&d, w.name)["status"], "not wired");

    let setup = sb.ok(&["setup", w.name]);
    println!("deja setup {}:\n{}{}", w.name, setup.stdout, setup.stderr);
    let set_up = snapshot(&files);
    for (f, (b, s)) in files.iter().zip(before.iter().zip(&set_up)) {
        assert_ne!(b, s, "setup did not change {}", f.display());
    }
    assert_eq!(listed(&d, w.name)["status"], "wired");

    let out = run_agent(command(&d, &server.url, QUESTION), &run_dir, w.name);
    let requests = server.requests();
    let report = summary(&requests);
    println!("requests:\n{report}");
    assert_eq!(
        out.code, 0,
        "{} failed\nstdout:\n{}\nstderr:\n{}\nrequests:\n{report}",
        w.name, out.stdout, out.stderr
    );
    assert!(out.stdout.contains(ANSWER), "stdout: {}", out.stdout);
    let after_run = snapshot(&files);
    if w.keeps_files {
        for (f, (s, a)) in files.iter().zip(set_up.iter().zip(&after_run)) {
            assert!(
                s == a,
                "the run changed {}:\n{}",
                f.display(),
                String::from_utf8_lossy(a.as_deref().unwrap_or_default())
            );
        }
    }

    // (1) The first request offers deja's recall and, where setup gives the
    // agent the digest, carries it in a user message, never in the system
    // prompt, framed, naming the billing-api session.
    let convo = conversation(&requests);
    let first = convo.first().expect("no conversation request");
    // Offered outright, or (droid) named in the request behind a tool
    // search that adds it.
    let offers_recall = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t.as_str() == Some(w.recall))
        || body(first).contains(w.recall);
    assert!(
        offers_recall,
        "the first request does not offer {}: {:?}",
        w.recall, first["tools"]
    );
    if w.digest {
        // Chat Completions' `messages`, or the Responses API's `input` and
        // `instructions` (droid).
        let b = &first["body"];
        let messages: Vec<&Value> = b["messages"]
            .as_array()
            .into_iter()
            .chain(b["input"].as_array())
            .flatten()
            .collect();
        let holding = |role: &str| {
            messages
                .iter()
                .filter(|m| m["role"] == role || (role == "system" && m["role"] == "developer"))
                .map(|m| m["content"].to_string())
                .chain((role == "system").then(|| b["instructions"].to_string()))
                .find(|c| c.contains("(from deja)"))
        };
        assert!(
            holding("system").is_none(),
            "the digest is in the system prompt"
        );
        let user = holding("user")
            .unwrap_or_else(|| panic!("no user message holds the digest:\n{}", body(first)));
        let frame = user
            .find("<recalled-memory source=")
            .unwrap_or_else(|| panic!("the digest has no frame:\n{user}"));
        assert!(
            user[frame..].contains(&d.tenant),
            "the digest does not name {}:\n{user}",
            d.tenant
        );
    }

    // (2) The model called deja's recall.
    let reply = &step_request(&requests, 0)["reply"];
    let called = reply["bridged"]
        .as_str()
        .or(reply["tool"].as_str())
        .unwrap();
    assert_eq!(called, w.recall, "{reply}");
    let call_id = reply["call_id"].as_str().unwrap();

    // (3) The next request hands the model deja's answer: framed as
    // recalled memory, naming the tenant predicate session, no JSON.
    let next = step_request(&requests, 1);
    let result = tool_result(next, call_id).unwrap_or_else(|| {
        panic!(
            "the request after the call lacks its result:\n{}",
            body(next)
        )
    });
    // Cline's CLI hands the model the MCP result itself as JSON; the text
    // in it is what deja answered.
    let text = match serde_json::from_str::<Value>(&result) {
        Ok(v) if v["content"].is_array() => {
            assert!(
                v.get("structuredContent").is_none(),
                "structured content reached the model:\n{result}"
            );
            v["content"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        }
        _ => result.clone(),
    };
    let framed = text.trim();
    assert!(
        framed.starts_with("<recalled-memory") && framed.contains("</recalled-memory>"),
        "the tool result does not start with deja's frame:\n{result}"
    );
    let (inside, after) = framed.rsplit_once("</recalled-memory>").unwrap();
    assert!(
        inside.contains(&d.tenant),
        "the answer does not name {}:\n{result}",
        d.tenant
    );
    assert!(
        !after.contains('{') && !framed.contains("{\"hits\""),
        "JSON reached the model:\n{result}"
    );

    // (4) Undo gives every file back, and the list says so.
    sb.ok(&["setup", w.name, "--undo"]);
    assert_restored(&files, &before, &set_up, &after_run);
    assert_eq!(listed(&d, w.name)["status"], "not wired");
    println!(
        "{} round trip: {:.1}s",
        w.name,
        started.elapsed().as_secs_f64()
    );
}

/// Kilo CLI 7.7.7 (OpenCode's fork) in `kilo run --auto`: deja's MCP server
/// in `~/.config/kilo/kilo.json`, its plugin in `~/.config/kilo/plugin/`.
#[test]
fn kilo_cli_gets_the_digest_recalls_through_deja_and_undo_restores_its_files() {
    let w = Wired {
        name: "kilo",
        recall: "deja_recall",
        files: vec![".config/kilo/kilo.json", ".config/kilo/plugin/deja.js"],
        digest: true,
        keeps_files: true,
    };
    round_trip(
        &w,
        |d, url| {
            // Kilo moves a config's bash permission once, rewriting the
            // file, and leaves this mark; a user who ran it before has it.
            d.sb.write(".config/kilo/.bash-permission-migrated", "");
            d.sb.write(
                ".config/kilo/kilo.json",
                serde_json::to_string_pretty(&json!({
                    "$schema": "https://app.kilo.ai/config.json",
                    "provider": {"mock": {
                        "npm": "@ai-sdk/openai-compatible",
                        "name": "Mock",
                        "options": {"baseURL": format!("{url}/v1"), "apiKey": "sk-placeholder"},
                        "models": {"gpt-4o": {"name": "gpt-4o", "tool_call": true}},
                    }},
                    "model": "mock/gpt-4o",
                    "autoupdate": false,
                    "share": "disabled",
                }))
                .unwrap()
                    + "\n",
            );
        },
        |d, _url, prompt| {
            let mut cmd = d.sb.command_of(&agent_cli("kilo"));
            cmd.current_dir(&d.billing)
                .env("KILO_DISABLE_AUTOUPDATE", "1")
                .env("KILO_DISABLE_MODELS_FETCH", "1")
                .args(["run", "--auto", prompt]);
            cmd
        },
    );
}

/// GitHub Copilot CLI 1.0.102, offline with the scripted model as its
/// provider, in `copilot -p` with deja's `recall` allowed by name: deja's
/// MCP server in `~/.copilot/mcp-config.json`, beside a server of the
/// user's that setup and undo leave alone.
#[test]
fn copilot_cli_recalls_through_deja_and_undo_restores_its_files() {
    let w = Wired {
        name: "copilot",
        recall: "deja-recall",
        files: vec![".copilot/mcp-config.json"],
        digest: false,
        keeps_files: true,
    };
    round_trip(
        &w,
        |d, _url| {
            d.sb.write(
                ".copilot/mcp-config.json",
                "{\n  \"mcpServers\": {\n    \"notes\": {\n      \"tools\": [\n        \"*\"\n      ],\n      \"type\": \"local\",\n      \"command\": \"/nonexistent/notes-server\",\n      \"args\": []\n    }\n  }\n}\n",
            );
        },
        |d, url, prompt| {
            let mut cmd = d.sb.command_of(&agent_cli("copilot"));
            cmd.current_dir(&d.billing)
                .env("COPILOT_OFFLINE", "true")
                .env("COPILOT_PROVIDER_BASE_URL", format!("{url}/v1"))
                .env("COPILOT_PROVIDER_API_KEY", "sk-placeholder")
                .env("COPILOT_MODEL", "gpt-4o")
                .env("COPILOT_AUTO_UPDATE", "false")
                .args([
                    "-p",
                    prompt,
                    "--allow-tool",
                    "deja(recall)",
                    "--disable-client-telemetry",
                ]);
            cmd
        },
    );
}

/// Factory's droid 0.225.2 in `droid exec --auto high` with the scripted model
/// as a custom model: deja's MCP server in `~/.factory/mcp.json`, its
/// SessionStart hook in `~/.factory/settings.json` beside the user's models.
#[test]
fn droid_gets_the_digest_recalls_through_deja_and_undo_restores_its_files() {
    let droid = crate::mcp::clients_dir().join("npm/node_modules/@factory/cli-linux-x64/bin/droid");
    assert!(
        droid.is_file(),
        "droid is not installed at {}; run scripts/fetch-clients first (Linux x64)",
        droid.display()
    );
    let w = Wired {
        name: "droid",
        recall: "deja___recall",
        files: vec![".factory/mcp.json", ".factory/settings.json"],
        digest: true,
        keeps_files: true,
    };
    round_trip(
        &w,
        |d, url| {
            d.sb.write(
                ".factory/settings.json",
                json!({"customModels": [{
                    "model": "gpt-4o",
                    "displayName": "Mock",
                    "baseUrl": format!("{url}/v1"),
                    "apiKey": "sk-placeholder",
                    "provider": "openai",
                    "maxOutputTokens": 4096,
                }]})
                .to_string(),
            );
        },
        |d, _url, prompt| {
            let mut cmd = d.sb.command_of(&droid);
            cmd.current_dir(&d.billing).args([
                "exec",
                "--auto",
                "high",
                "-m",
                "custom:gpt-4o",
                prompt,
            ]);
            cmd
        },
    );
}

/// Cline's CLI 3.0.65, signed in to the scripted model with `cline auth`:
/// deja's MCP server in `~/.cline/data/settings/cline_mcp_settings.json`.
#[test]
fn cline_cli_recalls_through_deja_and_undo_restores_its_files() {
    let w = Wired {
        name: "cline",
        files: vec![".cline/data/settings/cline_mcp_settings.json"],
        recall: "deja__recall",
        digest: false,
        keeps_files: true,
    };
    round_trip(
        &w,
        |d, url| {
            let mut auth = d.sb.command_of(&agent_cli("cline"));
            auth.args([
                "auth",
                "-p",
                "openai",
                "-k",
                "sk-placeholder",
                "-m",
                "gpt-4o",
                "-b",
            ])
            .arg(format!("{url}/v1"));
            let dir = d.sb.home.parent().unwrap().join("run");
            let out = run_agent(auth, &dir, "cline-auth");
            assert_eq!(
                out.code, 0,
                "cline auth failed\n{}\n{}",
                out.stdout, out.stderr
            );
        },
        |d, _url, prompt| {
            let mut cmd = d.sb.command_of(&agent_cli("cline"));
            cmd.current_dir(&d.billing).arg(prompt);
            cmd
        },
    );
}
