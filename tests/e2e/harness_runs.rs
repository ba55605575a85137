//! What the tests of harnesses run for real (`agents_npm*`, `agents_pypi*`)
//! share: the questions and answers the scripted model plays, where the
//! installed clients are, a sandbox with a project folder, running a
//! harness there, and reading its one session back through deja.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::agents::{body, run_agent, summary, ModelServer};
use crate::common::Sandbox;
use crate::mcp::clients_dir;

pub(crate) const FIRST_QUESTION: &str = "Why does the ledger show rows of other tenants?";
pub(crate) const FIRST_LOOK: &str = "Looking at the query first.";
/// A command with quotes, which a harness may write escaped.
pub(crate) const FIRST_COMMAND: &str = "grep -rn \"tenant_id\" .";
pub(crate) const FIRST_ANSWER: &str = "The ledger query lost its tenant predicate in the join.";
pub(crate) const SECOND_QUESTION: &str = "Which migration added the tenant column?";
pub(crate) const SECOND_COMMAND: &str = "ls migrations";
pub(crate) const SECOND_ANSWER: &str = "Migration 0042 added the tenant column to the ledger.";

/// A file of an npm client installed in a folder of its own in the clients
/// cache; panics with the fix when it is missing (these tests never pass
/// without the real program).
pub(crate) fn npm_client_file(folder: &str, rel: &str) -> PathBuf {
    let path = clients_dir().join(folder).join("node_modules").join(rel);
    assert!(
        path.is_file(),
        "{} is missing; run scripts/fetch-clients first",
        path.display()
    );
    path
}

/// A program from a PyPI client's virtual environment in the clients
/// cache; panics with the fix when it is missing (these tests never pass
/// without the real program).
pub(crate) fn pypi_client(venv: &str, program: &str) -> PathBuf {
    let bin = clients_dir().join(venv).join("bin").join(program);
    assert!(
        bin.is_file(),
        "`{program}` is not installed in {}; run scripts/fetch-clients first",
        clients_dir().join(venv).display()
    );
    bin
}

/// A sandbox (embeddings off), the folder the model server and the runs
/// write to, and the project folder the harness runs in.
pub(crate) struct Run {
    pub(crate) sb: Sandbox,
    pub(crate) run_dir: PathBuf,
    pub(crate) project: PathBuf,
}

impl Run {
    pub(crate) fn new() -> Run {
        let sb = Sandbox::new();
        sb.config("[embed]\nenabled = false\n");
        let run_dir = sb.home.parent().unwrap().join("run");
        let project = sb.home.join("work/ledger");
        std::fs::create_dir_all(project.join("migrations")).unwrap();
        Run {
            sb,
            run_dir,
            project,
        }
    }

    /// Runs `cmd` in the project folder and requires it to exit 0 having
    /// printed `answer`.
    pub(crate) fn run(&self, cmd: Command, name: &str, answer: &str) {
        run_in(cmd, &self.project, &self.run_dir, name, answer);
    }

    /// [`read_back`] of the one session of `harness`, `id`, holding
    /// [`TWO_EXCHANGES`] and both commands, in that roles' order and in the
    /// project folder.
    pub(crate) fn read_back_two_exchanges(&self, harness: &str, id: &str) -> (Value, Value) {
        let (session, shown) = read_back(
            &self.sb,
            harness,
            id,
            &TWO_EXCHANGES,
            &[FIRST_COMMAND, SECOND_COMMAND],
        );
        assert_eq!(roles(&shown), TWO_EXCHANGES_ROLES, "{shown:#}");
        assert_eq!(
            session["project"]["dir"],
            self.project.to_str().unwrap(),
            "{session:#}"
        );
        (session, shown)
    }

    /// Runs `cmd` in the project folder and requires it to exit 0 having
    /// printed the second answer; when it does not, says what the model
    /// was asked.
    pub(crate) fn run_showing_requests(&self, server: &ModelServer, mut cmd: Command, name: &str) {
        cmd.current_dir(&self.project);
        let out = run_agent(cmd, &self.run_dir, name);
        let shown = out.stdout.len().saturating_sub(6000);
        assert!(
            out.code == 0 && out.stdout.contains(SECOND_ANSWER),
            "{name} failed (exit {})\nrequests:\n{}\nstdout (its end):\n{}\nstderr:\n{}",
            out.code,
            summary(&server.requests()),
            out.stdout.get(shown..).unwrap_or(&out.stdout),
            out.stderr
        );
    }
}

/// Runs `cmd` in `project` and requires it to exit 0 having printed
/// `answer`.
pub(crate) fn run_in(mut cmd: Command, project: &Path, run_dir: &Path, name: &str, answer: &str) {
    cmd.current_dir(project);
    let out = run_agent(cmd, run_dir, name);
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
}

/// Indexes, then requires exactly one session of `harness`, with id `id`;
/// `deja show` to give `messages` and `commands` exactly; and `deja recall`
/// to find it first. Returns the session as `deja sessions --json` lists it
/// and what `deja show --json` gave, for the checks a harness adds.
pub(crate) fn read_back(
    sb: &Sandbox,
    harness: &str,
    id: &str,
    messages: &[&str],
    commands: &[&str],
) -> (Value, Value) {
    sb.ok(&["index"]);
    let listed = sb.ok(&["sessions", "--json"]).json();
    let ours: Vec<&Value> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["harness"] == harness)
        .collect();
    assert_eq!(ours.len(), 1, "{listed:#}");
    assert_eq!(ours[0]["id"], id, "{listed:#}");
    let session = ours[0].clone();

    let shown = sb.ok(&["show", id, "--json"]).json();
    let texts: Vec<&str> = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, messages, "{shown:#}");
    let ran: Vec<&str> = shown["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["command"].as_str().unwrap())
        .collect();
    assert_eq!(ran, commands, "{shown:#}");

    let found = sb
        .ok(&[
            "recall",
            "ledger tenant predicate join",
            "--harness",
            harness,
            "--json",
        ])
        .json();
    assert_eq!(found["hits"][0]["session_id"], id, "{found:#}");
    (session, shown)
}

/// The texts of the person's messages in `shown` (`deja show --json`).
pub(crate) fn asked(shown: &Value) -> Vec<&str> {
    shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["text"].as_str().unwrap())
        .collect()
}

/// Every file below `dir` with its bytes, sorted.
pub(crate) fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut all = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                all.push((path, bytes));
            }
        }
    }
    all.sort();
    all
}

/// `program args` in a pseudo-terminal of 40 x 160 in the sandbox, played
/// by `steps` (written to `<run dir>/<name>.steps.json`) through
/// `tests/agents/terminal.py`.
pub(crate) fn in_terminal(
    r: &Run,
    name: &str,
    steps: &Value,
    program: &Path,
    args: &[&str],
) -> Command {
    let steps_path = r.run_dir.join(format!("{name}.steps.json"));
    std::fs::create_dir_all(&r.run_dir).unwrap();
    std::fs::write(&steps_path, steps.to_string()).unwrap();
    let mut cmd = r.sb.command_of(Path::new("python3"));
    cmd.arg(crate::common::repo().join("tests/agents/terminal.py"))
        .arg("--steps")
        .arg(&steps_path)
        .arg("--log")
        .arg(r.run_dir.join(format!("{name}.terminal.log")))
        .args(["--rows", "40", "--cols", "160", "--timeout", "270", "--"])
        .arg(program)
        .args(args);
    cmd
}

/// What `deja show` gives of the two questions, each answered after a
/// command (the first with a word before it): the texts in order.
pub(crate) const TWO_EXCHANGES: [&str; 5] = [
    FIRST_QUESTION,
    FIRST_LOOK,
    FIRST_ANSWER,
    SECOND_QUESTION,
    SECOND_ANSWER,
];

/// The roles of [`TWO_EXCHANGES`]' messages.
pub(crate) const TWO_EXCHANGES_ROLES: [&str; 5] =
    ["user", "assistant", "assistant", "user", "assistant"];

/// The scripted model's steps for the two questions: the first answered
/// after `tool` runs the first command, the second after it runs the
/// second.
pub(crate) fn two_exchanges_steps(tool: &str) -> Value {
    json!([
        {"text": FIRST_LOOK, "tool": tool, "input": {"command": FIRST_COMMAND}},
        {"text": FIRST_ANSWER},
        {"tool": tool, "input": {"command": SECOND_COMMAND}},
        {"text": SECOND_ANSWER},
    ])
}

/// Requires the model to have been asked four times in `asked` (the
/// conversation's requests), the second question going out with the first
/// exchange, as a harness that keeps the session sends it.
pub(crate) fn second_question_sent_with_first(asked: &[&Value]) {
    assert_eq!(asked.len(), 4, "{asked:#?}");
    let second = body(asked[2]);
    for said in [FIRST_QUESTION, FIRST_ANSWER, SECOND_QUESTION] {
        assert!(second.contains(said), "{said} not sent: {second}");
    }
}

/// The roles of the messages in `shown` (`deja show --json`).
pub(crate) fn roles(shown: &Value) -> Vec<&str> {
    shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect()
}

/// The outcome and exit code of each command in `shown` (`deja show
/// --json`).
pub(crate) fn outcomes(shown: &Value) -> Vec<(&str, i64)> {
    shown["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["outcome"].as_str().unwrap(),
                c["exit_code"].as_i64().unwrap(),
            )
        })
        .collect()
}

/// What `deja show` gives of the two questions, each answered without a
/// command: the texts in order.
pub(crate) const TWO_ANSWERS: [&str; 4] =
    [FIRST_QUESTION, FIRST_ANSWER, SECOND_QUESTION, SECOND_ANSWER];

/// The roles of [`TWO_ANSWERS`]' messages.
pub(crate) const TWO_ANSWERS_ROLES: [&str; 4] = ["user", "assistant", "user", "assistant"];

/// The texts of the messages and of the commands in `shown` (`deja show
/// --json`).
pub(crate) fn shown_texts(shown: &Value) -> (Vec<&str>, Vec<&str>) {
    let texts = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    let commands = shown["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["command"].as_str().unwrap())
        .collect();
    (texts, commands)
}

/// The (role, content) of each message the model was sent in `request`.
pub(crate) fn sent(request: &Value) -> Vec<(&str, &str)> {
    request["body"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["role"].as_str().unwrap(), m["content"].as_str().unwrap()))
        .collect()
}

/// What a harness that keeps the chat sends with the second question, as
/// (role, content): the first exchange, then the question.
pub(crate) const FIRST_EXCHANGE_THEN_SECOND: [(&str, &str); 3] = [
    ("user", FIRST_QUESTION),
    ("assistant", FIRST_ANSWER),
    ("user", SECOND_QUESTION),
];

/// Requires the harness to have asked the Ollama API of the scripted
/// server for its models (`/api/tags`) and one model's details
/// (`/api/show`) among `requests`.
pub(crate) fn asked_ollama_for_models(requests: &[Value]) {
    let ollama: Vec<&str> = requests
        .iter()
        .filter(|r| r["api"] == "ollama")
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert!(
        ollama.contains(&"/api/tags") && ollama.contains(&"/api/show"),
        "{ollama:?}"
    );
}

/// The (role, text) of each message in `shown` (`deja show --json`).
pub(crate) fn messages(shown: &Value) -> Vec<(&str, &str)> {
    shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["role"].as_str().unwrap(), m["text"].as_str().unwrap()))
        .collect()
}

/// Each command in `shown` (`deja show --json`) with its outcome and exit
/// code where it has them.
pub(crate) fn commands(shown: &Value) -> Vec<(&str, Option<&str>, Option<i64>)> {
    shown["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["command"].as_str().unwrap(),
                c["outcome"].as_str(),
                c["exit_code"].as_i64(),
            )
        })
        .collect()
}

/// The id of the session `deja recall query` finds first in `sb`, or ""
/// when it finds none.
pub(crate) fn first_hit(sb: &Sandbox, query: &str) -> String {
    let hits = sb.ok(&["recall", query, "--json"]).json();
    hits["hits"][0]["session_id"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// The scripted model for a harness that offers no tools: it answers the
/// two questions in turn, and goes by `model` where one is given (as an
/// Ollama server lists its models).
pub(crate) fn toolless_server(r: &Run, model: Option<&str>) -> ModelServer {
    let mut script = json!({
        "require_tools": false,
        "steps": [{"text": FIRST_ANSWER}, {"text": SECOND_ANSWER}],
    });
    if let Some(model) = model {
        script["model"] = json!(model);
    }
    ModelServer::start(&r.run_dir, &script)
}
