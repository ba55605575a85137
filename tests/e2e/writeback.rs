//! `deja resume ID --write-back` proven with the real agents (Claude Code,
//! Qwen Code, Gemini CLI, Codex CLI, installed by `scripts/fetch-clients`) and the
//! scripted model (`tests/agents/model_server.py`): the agent answers once
//! and writes its session, deja indexes it, the transcript is deleted (deja
//! keeps the session), `--dry-run` names the file and writes nothing, deja
//! writes the session back, reads it again with the same messages, refuses
//! to write it a second time (the file untouched), and the agent's own
//! resume sends the restored history to the model. Sessions whose id or
//! directory could lead a file outside the agent's folder are refused, and
//! nothing is written.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::agents::{agent_cli, body, conversation, run_agent, summary, Agent, ModelServer};
use crate::common::{Output, Sandbox};

/// What the user asked first: quotes, a line break, non-ASCII text.
const FIRST: &str = "Why does the \"ledger\" job stall?\nIt hangs at 02:00 — naïve café ✓";

/// The model's first answer, as awkward.
const ANSWER: &str = "The \"ledger\" job waits on a lock:\n- release it — ✓ 日本";

/// What the user asks the resumed session.
const NEXT: &str = "and after the lock is released?";

/// The agents under test.
#[derive(Clone, Copy, Debug)]
enum Tool {
    Claude,
    Qwen,
    Gemini,
    Codex,
}

impl Tool {
    /// deja's name of its harness.
    fn harness(self) -> &'static str {
        match self {
            Tool::Claude => "claude",
            Tool::Qwen => "qwen",
            Tool::Gemini => "gemini",
            Tool::Codex => "codex",
        }
    }

    /// Its settings, pointed at `url` (Gemini CLI's: the API key auth, no
    /// updates or statistics, `project` trusted).
    fn configure(self, sb: &Sandbox, url: &str, project: &Path) {
        match self {
            Tool::Claude => Agent::Claude.configure(sb, url),
            Tool::Qwen => Agent::Qwen.configure(sb, url),
            Tool::Codex => Agent::Codex.configure(sb, url),
            Tool::Gemini => {
                sb.write(
                    ".gemini/settings.json",
                    "{\n  \"security\": { \"auth\": { \"selectedType\": \"gemini-api-key\" } },\n  \"general\": { \"enableAutoUpdate\": false, \"enableAutoUpdateNotification\": false },\n  \"privacy\": { \"usageStatisticsEnabled\": false },\n  \"telemetry\": { \"enabled\": false }\n}\n",
                );
                sb.write(
                    ".gemini/trustedFolders.json",
                    json!({ project.to_str().unwrap(): "TRUST_FOLDER" }).to_string(),
                );
            }
        }
    }

    /// The non-interactive run of `prompt` in `cwd`, resuming `resume`.
    fn command(
        self,
        sb: &Sandbox,
        url: &str,
        cwd: &Path,
        prompt: &str,
        resume: Option<&str>,
    ) -> Command {
        let resume: Vec<&str> = resume.map(|id| vec!["--resume", id]).unwrap_or_default();
        match self {
            Tool::Claude => Agent::Claude.command(sb, url, cwd, prompt, &resume),
            Tool::Qwen => Agent::Qwen.command(sb, url, cwd, prompt, &resume),
            // `codex exec resume ID PROMPT`.
            Tool::Codex => {
                let mut cmd = sb.command_of(&agent_cli("codex"));
                cmd.current_dir(cwd)
                    .env("MOCK_KEY", "sk-placeholder")
                    .args([
                        "exec",
                        "--skip-git-repo-check",
                        "--dangerously-bypass-hook-trust",
                    ]);
                if let Some(id) = resume.get(1) {
                    cmd.args(["resume", id]);
                }
                cmd.arg(prompt);
                cmd
            }
            Tool::Gemini => {
                let mut cmd = sb.command_of(&agent_cli("gemini"));
                cmd.current_dir(cwd)
                    .env("GOOGLE_GEMINI_BASE_URL", url)
                    .env("GEMINI_API_KEY", "placeholder")
                    .env("GEMINI_TELEMETRY_ENABLED", "false")
                    .args(&resume)
                    .args(["-p", prompt]);
                cmd
            }
        }
    }
}

/// Role, text, time and id of each message of `deja show --json`.
fn messages(shown: &Value) -> Vec<(String, String, String, String)> {
    shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_string(),
                m["text"].as_str().unwrap().to_string(),
                m["timestamp"].as_str().unwrap_or("").to_string(),
                m["id"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// `text` as it appears inside a JSON string.
fn in_json(text: &str) -> String {
    let quoted = serde_json::to_string(text).unwrap();
    quoted[1..quoted.len() - 1].to_string()
}

/// The whole round: first run, index, delete, dry run, write back, read
/// back, refuse again, resume with the real agent.
fn written_back_and_resumed(tool: Tool) {
    let mut sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n[mcp]\nindex = false\n");
    let project = sb.home.join("src/ledger app");
    std::fs::create_dir_all(&project).unwrap();
    let project = std::fs::canonicalize(&project).unwrap();
    if let Tool::Gemini = tool {
        sb.env("DEJA_GEMINI_ROOT", sb.home.join(".gemini"));
    }
    let name = tool.harness();
    let run_dir = sb.home.parent().unwrap().join("run");
    let server = ModelServer::start(&run_dir, &json!([{ "text": ANSWER }]));
    tool.configure(&sb, &server.url, &project);

    // (1) The agent's own session.
    let first = run_agent(
        tool.command(&sb, &server.url, &project, FIRST, None),
        &run_dir,
        &format!("{name}-first"),
    );
    assert_eq!(first.code, 0, "{}\n{}", first.stdout, first.stderr);
    sb.ok(&["index"]);
    let listed = sb.ok(&["sessions", "--json"]).json();
    let sessions: Vec<&Value> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["harness"] == name)
        .collect();
    assert_eq!(sessions.len(), 1, "{listed:#}");
    let id = sessions[0]["id"].as_str().unwrap().to_string();
    let native = sessions[0]["native_id"].as_str().unwrap().to_string();
    let shown = sb.ok(&["show", &id, "--json"]).json();
    let before = messages(&shown);
    assert!(
        before.iter().any(|(r, t, ..)| r == "user" && t == FIRST)
            && before
                .iter()
                .any(|(r, t, ..)| r == "assistant" && t == ANSWER),
        "{before:#?}"
    );
    let source = PathBuf::from(shown["source"].as_str().unwrap());

    // (2) The transcript is gone; deja keeps the session.
    std::fs::remove_file(&source).unwrap();
    sb.ok(&["index"]);
    let kept = sb.ok(&["show", &id, "--json"]).json();
    assert_eq!(messages(&kept), before);
    assert_eq!(kept["source_present"], false, "{kept:#}");

    // (3) A dry run names the file and the count, and writes nothing.
    let planned = sb
        .ok(&["resume", &id, "--write-back", "--dry-run", "--json"])
        .json();
    let path = PathBuf::from(planned["path"].as_str().unwrap());
    assert_eq!(planned["messages"], before.len(), "{planned:#}");
    assert_eq!(planned["dry_run"], true);
    assert!(!path.exists(), "the dry run wrote {}", path.display());
    let plain = sb.ok(&["resume", &id, "--write-back", "--dry-run"]);
    assert_eq!(
        plain.stdout,
        format!(
            "would write {} messages to {}\n",
            before.len(),
            path.display()
        )
    );
    assert!(!path.exists(), "the dry run wrote {}", path.display());
    match tool {
        // The place the agent wrote it.
        Tool::Claude | Tool::Qwen => assert_eq!(path, source),
        // The same folder (the name holds the start's minute or second).
        Tool::Gemini | Tool::Codex => assert_eq!(path.parent(), source.parent()),
    }

    // (4) Written back: the resume command on stdout, the file on stderr.
    let written = sb.ok(&["resume", &id, "--write-back"]);
    assert!(
        written.stdout.contains(&format!("resume {native}")),
        "{}",
        written.stdout
    );
    assert!(
        written.stderr.contains(&path.display().to_string()),
        "{}",
        written.stderr
    );
    let bytes = std::fs::read(&path).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", path.display());
    }

    // (5) deja reads the file back: the same messages, in order, with their
    // roles, texts, times and ids.
    sb.ok(&["index"]);
    let reread = sb.ok(&["show", &id, "--json"]).json();
    assert_eq!(reread["source"], path.to_str().unwrap(), "{reread:#}");
    assert_eq!(messages(&reread), before);
    assert_eq!(reread["project"]["dir"], project.to_str().unwrap());

    // (6) A second write-back is refused, naming the file, which stays as
    // it was.
    let again = sb.run(&["resume", &id, "--write-back"]);
    assert_eq!(again.code, 2, "{}\n{}", again.stdout, again.stderr);
    assert!(
        again.stderr.contains(&path.display().to_string()) && again.stderr.contains("exists"),
        "{}",
        again.stderr
    );
    assert_eq!(std::fs::read(&path).unwrap(), bytes);

    // (7) The agent's own resume sends the restored history to the model.
    let resumed_dir = run_dir.join("resumed");
    let server2 = ModelServer::start(&resumed_dir, &json!([{ "text": "Resumed." }]));
    tool.configure(&sb, &server2.url, &project);
    let resumed = run_agent(
        tool.command(&sb, &server2.url, &project, NEXT, Some(&native)),
        &resumed_dir,
        &format!("{name}-resumed"),
    );
    let requests = server2.requests();
    let report = summary(&requests);
    assert_eq!(
        resumed.code, 0,
        "{}\n{}\nrequests:\n{report}",
        resumed.stdout, resumed.stderr
    );
    let convo = conversation(&requests);
    let request = convo
        .first()
        .unwrap_or_else(|| panic!("no conversation request:\n{report}"));
    let text = body(request);
    // The conversation the request carries (Anthropic and OpenAI Chat
    // `messages`, Gemini `contents`, OpenAI Responses `input`), for the
    // failure message.
    let history = ["messages", "contents", "input"]
        .iter()
        .map(|k| &request["body"][k])
        .find(|v| !v.is_null())
        .unwrap_or(&Value::Null);
    for earlier in [FIRST, ANSWER, NEXT] {
        assert!(
            text.contains(&in_json(earlier)),
            "{name}'s first request after the resume lacks {earlier:?}; its conversation:\n{history:#}"
        );
    }
}

#[test]
fn claude_code_resumes_a_session_deja_wrote_back() {
    written_back_and_resumed(Tool::Claude);
}

#[test]
fn qwen_code_resumes_a_session_deja_wrote_back() {
    written_back_and_resumed(Tool::Qwen);
}

#[test]
fn gemini_cli_resumes_a_session_deja_wrote_back() {
    written_back_and_resumed(Tool::Gemini);
}

#[test]
fn codex_cli_resumes_a_session_deja_wrote_back() {
    written_back_and_resumed(Tool::Codex);
}

/// Every file under `dir`, with its bytes.
fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = e.path();
        if e.file_type().unwrap().is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push((path.clone(), std::fs::read(&path).unwrap_or_default()));
        }
    }
    out.sort();
    out
}

/// Writes a transcript of `lines` (JSON records) at `rel` under HOME.
fn transcript(sb: &Sandbox, rel: &str, lines: &[Value]) -> PathBuf {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    sb.write(rel, text)
}

/// Claude Code's folder name for directory `dir` (ASCII): each character
/// that is not a letter or digit becomes `-`.
fn claude_folder(dir: &str) -> String {
    dir.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// A Claude Code record of `session` in `cwd`.
fn claude_record(session: &str, cwd: &str, role: &str, text: &str, n: u32) -> Value {
    let content = if role == "user" {
        json!(text)
    } else {
        json!([{ "type": "text", "text": text }])
    };
    json!({
        "type": role, "uuid": format!("u{n}"), "parentUuid": null,
        "timestamp": format!("2026-01-01T10:00:0{n}Z"), "cwd": cwd, "sessionId": session,
        "message": { "id": format!("m{n}"), "role": role, "content": content },
    })
}

/// A Qwen Code record of `session` in `cwd`.
fn qwen_record(session: &str, cwd: &str, role: &str, text: &str, n: u32) -> Value {
    json!({
        "type": role, "uuid": format!("u{n}"), "parentUuid": null,
        "timestamp": format!("2026-01-01T10:00:0{n}Z"), "cwd": cwd, "sessionId": session,
        "message": { "role": if role == "user" { "user" } else { "model" }, "parts": [{ "text": text }] },
    })
}

/// A Claude Code session pulled from a teammate (`deja team pull`), which
/// never was on this machine: plain `resume` says it lives elsewhere;
/// written back into this machine's Claude Code folder, the real
/// `claude --resume` reopens it with its history.
#[test]
fn a_session_pulled_from_a_teammate_is_written_back_and_resumed_here() {
    let server = crate::team::server();
    let ana = crate::team::machine(&server, "ana", "laptop", "");
    let project = std::fs::canonicalize(ana.home.join("work/billing")).unwrap();
    let dir = project.to_str().unwrap();
    let id = "7d0c2a51-3f0e-4c1a-9b7e-2f4d5e6a7b8c";
    let slug = claude_folder(dir);
    transcript(
        &ana,
        &format!(".claude/projects/{slug}/{id}.jsonl"),
        &[
            claude_record(id, dir, "user", FIRST, 1),
            claude_record(id, dir, "assistant", ANSWER, 2),
        ],
    );
    ana.index();
    ana.ok(&["team", "push"]);

    let ben = crate::team::machine(&server, "ben", "desk", "");
    ben.ok(&["team", "pull"]);
    let pulled = ben.ok(&["sessions", "--origin", "ana", "--json"]).json();
    let session = pulled["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["harness"] == "claude")
        .unwrap_or_else(|| panic!("ana's Claude Code session was not pulled: {pulled:#}"));
    let deja_id = session["id"].as_str().unwrap().to_string();
    let plain = ben.run(&["resume", &deja_id]);
    assert_eq!(
        plain.code, 2,
        "{}
{}",
        plain.stdout, plain.stderr
    );
    assert!(plain.stderr.contains("another machine"), "{}", plain.stderr);

    let written = ben.ok(&["resume", &deja_id, "--write-back"]);
    let path = ben.home.join(format!(".claude/projects/{slug}/{id}.jsonl"));
    assert!(
        path.is_file(),
        "{}
{}",
        written.stdout,
        written.stderr
    );
    assert_eq!(
        written.stdout,
        format!("cd {dir} && claude --resume {id}\n"),
        "{}",
        written.stderr
    );

    let run_dir = ben.home.parent().unwrap().join("run");
    let model = ModelServer::start(&run_dir, &json!([{ "text": "Resumed." }]));
    Agent::Claude.configure(&ben, &model.url);
    let resumed = run_agent(
        Agent::Claude.command(&ben, &model.url, &project, NEXT, &["--resume", id]),
        &run_dir,
        "claude-pulled",
    );
    let requests = model.requests();
    assert_eq!(
        resumed.code,
        0,
        "{}\n{}\nrequests:\n{}",
        resumed.stdout,
        resumed.stderr,
        summary(&requests)
    );
    let convo = conversation(&requests);
    let text = body(convo.first().expect("no conversation request"));
    for earlier in [FIRST, ANSWER, NEXT] {
        assert!(
            text.contains(&in_json(earlier)),
            "the first request after the resume lacks {earlier:?}"
        );
    }
}

/// `--write-back --run`: the file is written, then the agent's resume
/// command runs in the session's directory (here a stand-in `claude` on
/// PATH that records its arguments and directory); `--dry-run --run` is
/// refused by the command line.
#[test]
fn write_back_then_run_starts_the_agents_resume_in_the_sessions_directory() {
    let mut sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    let project = sb.home.join("src/app");
    std::fs::create_dir_all(&project).unwrap();
    let project = std::fs::canonicalize(&project).unwrap();
    let dir = project.to_str().unwrap();
    let id = "3c9e8f10-5b2a-4d6c-8e7f-a1b2c3d4e5f6";
    let transcript_path = transcript(
        &sb,
        &format!(".claude/projects/{}/{id}.jsonl", claude_folder(dir)),
        &[
            claude_record(id, dir, "user", FIRST, 1),
            claude_record(id, dir, "assistant", ANSWER, 2),
        ],
    );
    sb.ok(&["index"]);
    std::fs::remove_file(&transcript_path).unwrap();

    let bin = sb.home.join("bin");
    let record = sb.home.join("ran.txt");
    sb.write(
        "bin/claude",
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$PWD\" \"$@\" > '{}'\n",
            record.display()
        ),
    );
    crate::common::set_mode(&bin.join("claude"), 0o755);
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![bin];
    dirs.extend(std::env::split_paths(&path));
    sb.env("PATH", std::env::join_paths(dirs).unwrap());

    let refused = sb.run(&["resume", id, "--write-back", "--dry-run", "--run"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(!transcript_path.exists() && !record.exists());

    let ran = sb.ok(&["resume", id, "--write-back", "--run"]);
    assert!(transcript_path.is_file(), "{}", ran.stderr);
    assert_eq!(
        std::fs::read_to_string(&record).unwrap(),
        format!("{dir}\n--resume\n{id}\n")
    );
}

/// Sessions whose id or directory would place a file outside the agent's
/// folder (`..`, slashes, control characters, a relative directory) are
/// refused with exit 2 naming the value, and no file appears anywhere.
#[test]
fn hostile_ids_and_directories_write_nothing() {
    let sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    let cases: [(&str, &str, &str, &str); 4] = [
        (
            "claude",
            "../../../../escape\u{1b}[31m",
            "/home/ann/app",
            "id",
        ),
        (
            "claude",
            "0b7c3a52-good-id",
            "/home/ann/../../../tmp/evil",
            "directory",
        ),
        ("qwen", "a/../../b", "/home/ann/app", "id"),
        ("qwen", "5e1d-good-id", "/tmp/evil\nline", "directory"),
    ];
    let mut paths = Vec::new();
    for (i, (harness, session, cwd, _)) in cases.iter().enumerate() {
        let (rel, lines) = match *harness {
            "claude" => (
                format!(".claude/projects/-case{i}/case{i}.jsonl"),
                vec![
                    claude_record(session, cwd, "user", &format!("hostile case {i}"), 1),
                    claude_record(session, cwd, "assistant", "ok", 2),
                ],
            ),
            _ => (
                format!(".qwen/projects/-case{i}/chats/case{i}.jsonl"),
                vec![
                    qwen_record(session, cwd, "user", &format!("hostile case {i}"), 1),
                    qwen_record(session, cwd, "assistant", "ok", 2),
                ],
            ),
        };
        paths.push(transcript(&sb, &rel, &lines));
    }
    sb.ok(&["index"]);
    for p in &paths {
        std::fs::remove_file(p).unwrap();
    }
    let root = sb.home.parent().unwrap().to_path_buf();
    let data = sb.data_dir();
    let outside_data = |files: Vec<(PathBuf, Vec<u8>)>| -> Vec<(PathBuf, Vec<u8>)> {
        files
            .into_iter()
            .filter(|(p, _)| !p.starts_with(&data))
            .collect()
    };
    let before = outside_data(files_under(&root));
    let listed = sb.ok(&["sessions", "--json"]).json();
    for (harness, session, _, what) in cases {
        let id = listed["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["harness"] == harness && s["native_id"] == session)
            .unwrap_or_else(|| panic!("{session:?} is not stored: {listed:#}"))["id"]
            .as_str()
            .unwrap()
            .to_string();
        for extra in [&[][..], &["--dry-run"][..]] {
            let mut args = vec!["resume", id.as_str(), "--write-back"];
            args.extend(extra);
            let out: Output = sb.run(&args);
            assert_eq!(out.code, 2, "{args:?}\n{}\n{}", out.stdout, out.stderr);
            assert!(
                out.stderr.contains(&format!("the session's {what} ")),
                "{args:?}: {}",
                out.stderr
            );
            assert!(out.stdout.is_empty(), "{}", out.stdout);
        }
    }
    assert_eq!(
        outside_data(files_under(&root)),
        before,
        "a file was written"
    );
}

/// A harness without a writer is refused, naming those that have one.
#[test]
fn a_harness_without_a_writer_is_refused_naming_those_with_one() {
    let mut sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    let src = sb.home.join("src");
    std::fs::create_dir_all(src.join("app")).unwrap();
    sb.write(
        "src/app/.aider.chat.history.md",
        "\n# aider chat started at 2026-01-01 10:00:00\n\n#### fix the ledger\n\nDone.\n",
    );
    sb.env("DEJA_AIDER_ROOTS", &src);
    sb.ok(&["index"]);
    let listed = sb.ok(&["sessions", "--json"]).json();
    let id = listed["sessions"][0]["id"].as_str().unwrap().to_string();
    let out = sb.run(&["resume", &id, "--write-back", "--json"]);
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(
        out.json()["refused"],
        "deja cannot write back aider sessions; it can write back sessions of: claude, qwen, gemini, codex"
    );
}
