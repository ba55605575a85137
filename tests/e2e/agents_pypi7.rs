//! Harnesses from PyPI that keep their runs in a SQLite database inside
//! the project (RA.Aid's `.ra-aid/pk.db`), run for real against the
//! scripted model server in a sandbox HOME: two runs in one project, each
//! one session. deja then finds the database in the project, indexes it,
//! and `deja sessions`, `deja show` and `deja recall` must give back exactly
//! what was asked, answered and run, without changing a byte of the
//! harness's folder.

use serde_json::json;

use crate::agents::{conversation, ModelServer};
use crate::harness_runs::{
    pypi_client, roles, shown_texts, tree, Run, FIRST_ANSWER, FIRST_COMMAND, FIRST_LOOK,
    FIRST_QUESTION, SECOND_ANSWER, SECOND_COMMAND, SECOND_QUESTION,
};

/// RA.Aid 0.30.2 (LangChain and LangGraph pinned to its lock file), with
/// OpenAI's provider pointed at the scripted server by `OPENAI_API_BASE`
/// and `OPENAI_BASE_URL` and a placeholder key (no account), is given a
/// question with `-m` in cowboy mode (no confirmation of shell commands):
/// its research agent runs a command through `run_shell_command` and
/// answers through `mark_research_complete_no_implementation_required`;
/// run again in the same project, it answers a second question the same
/// way. deja's reader of the project's `.ra-aid/pk.db`, written only in
/// TOML, finds it in the project folder and reads each run as a session:
/// the question, the answer and the command, in the project, and leaves
/// RA.Aid's folder as it was. The text the model wrote beside its tool
/// call (`FIRST_LOOK`) is kept nowhere by RA.Aid: it is not read.
#[test]
fn ra_aid_runs_are_read_as_ra_aid_stores_them() {
    let ra_aid = pypi_client("ra-aid", "ra-aid");
    let r = Run::new();
    std::fs::write(
        r.project.join("migrations/0042_tenant.sql"),
        "ALTER TABLE ledger ADD COLUMN tenant_id INTEGER NOT NULL;\n",
    )
    .unwrap();
    let server = ModelServer::start(
        &r.run_dir,
        &json!([
            {"text": FIRST_LOOK, "tool": "run_shell_command",
             "input": {"command": FIRST_COMMAND, "timeout": 30}},
            {"tool": "mark_research_complete_no_implementation_required",
             "input": {"message": FIRST_ANSWER}},
            // The research agent may ask once more after the tool that ends
            // it: the second run's steps wait for its question.
            {"tool": "run_shell_command", "input": {"command": SECOND_COMMAND},
             "match": SECOND_QUESTION},
            {"tool": "mark_research_complete_no_implementation_required",
             "input": {"message": SECOND_ANSWER}},
        ]),
    );
    let base = format!("{}/v1", server.url);
    // RA.Aid refuses to start without ripgrep's `rg` on PATH: the one its
    // virtual environment holds.
    let bin = ra_aid.parent().unwrap();
    let path = std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let command = |question: &str| {
        let mut cmd = r.sb.command_of(&ra_aid);
        cmd.env("PATH", &path)
            .env("OPENAI_API_KEY", "sk-placeholder")
            // The chat model's base URL, and the OpenAI client's that lists
            // the models to pick an expert from.
            .env("OPENAI_API_BASE", &base)
            .env("OPENAI_BASE_URL", &base)
            // LiteLLM's price list from the package, not the network.
            .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            // Wide enough that the answer's panel does not wrap it.
            .env("COLUMNS", "200")
            .args(["--provider", "openai", "--model", "gpt-4o", "--cowboy-mode"])
            .args(["-m", question]);
        cmd
    };
    r.run(command(FIRST_QUESTION), "ra-aid", FIRST_ANSWER);
    r.run(command(SECOND_QUESTION), "ra-aid-again", SECOND_ANSWER);

    // Both commands ran in the project: their output went back to the model.
    let requests = server.requests();
    let sent = conversation(&requests);
    let bodies: Vec<String> = sent.iter().map(|r| r["body"].to_string()).collect();
    assert!(
        bodies.iter().any(|b| b.contains("0042_tenant.sql:1:")),
        "{requests:#?}"
    );
    assert!(
        bodies
            .iter()
            .any(|b| b.contains(SECOND_QUESTION) && b.contains("\"0042_tenant.sql")),
        "{requests:#?}"
    );

    // The runs, found by an independent look at RA.Aid's database.
    let folder = r.project.join(".ra-aid");
    let conn = rusqlite::Connection::open(folder.join("pk.db")).unwrap();
    let ids: Vec<String> = conn
        .prepare("SELECT id, strftime('%Y%m%dT%H%M%S', start_time) FROM session ORDER BY id")
        .unwrap()
        .query_map([], |row| {
            Ok(format!(
                "ra-aid-{}-{}",
                row.get::<_, i64>(0)?,
                row.get::<_, String>(1)?
            ))
        })
        .unwrap()
        .map(|id| id.unwrap())
        .collect();
    drop(conn);
    assert_eq!(ids.len(), 2, "{ids:?}");
    let before = tree(&folder);

    r.sb.ok(&["index"]);
    let listed = r.sb.ok(&["sessions", "--json"]).json();
    let mut ours: Vec<&str> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["harness"] == "ra-aid")
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    ours.sort();
    assert_eq!(ours, ids, "{listed:#}");

    let dir = std::fs::canonicalize(&r.project).unwrap();
    let expected = [
        (FIRST_QUESTION, FIRST_ANSWER, FIRST_COMMAND),
        (SECOND_QUESTION, SECOND_ANSWER, SECOND_COMMAND),
    ];
    for (id, (question, answer, ran)) in ids.iter().zip(expected) {
        let shown = r.sb.ok(&["show", id, "--json"]).json();
        assert_eq!(
            shown_texts(&shown),
            (vec![question, answer], vec![ran]),
            "{shown:#}"
        );
        assert_eq!(roles(&shown), ["user", "assistant"], "{shown:#}");
        assert_eq!(shown["project"]["dir"], dir.to_str().unwrap(), "{shown:#}");
    }

    let found =
        r.sb.ok(&[
            "recall",
            "ledger tenant predicate join",
            "--harness",
            "ra-aid",
            "--json",
        ])
        .json();
    assert_eq!(found["hits"][0]["session_id"], ids[0].as_str(), "{found:#}");
    assert!(tree(&folder) == before, "deja changed RA.Aid's folder");
    // RA.Aid has no command that reopens a run.
    let resume = r.sb.run(&["resume", &ids[0]]);
    assert_eq!(resume.code, 2, "{}", resume.stdout);
    assert!(
        resume.stderr.contains("no command that reopens a session"),
        "{}",
        resume.stderr
    );
}
