//! Team memory through the real binary against a real PostgreSQL server (a
//! throwaway cluster of its own, on a Unix socket): several deja homes share
//! one team store; pushes that die half-way (killed, or the server restarted)
//! are finished by the next push with the same result as a clean one; and a
//! wrong password, a server that is down or a newer schema each give one
//! clear error and change nothing locally.

use std::io::Write;
use std::process::{Child, Stdio};

use serde_json::Value;

use crate::common::Sandbox;
use deja_team::scratch::{ScratchServer, ADMIN, ADMIN_PASSWORD};

const PASSWORD: &str = "team-secret";

/// A server set up as the guide says (its SQL, run as written), with
/// database `team` and roles `ana` and `ben`, plus `cat`, `dan` and `eve`
/// made the way the guide makes `ben`.
pub(crate) fn server() -> ScratchServer {
    let server = ScratchServer::start(false).expect("a scratch PostgreSQL server");
    let basic = &guide_sql("## Setting up the database")[0];
    let mut script = basic
        .replace("choose-one", PASSWORD)
        .replace("choose-another", PASSWORD);
    let ben = basic
        .lines()
        .find(|l| l.starts_with("CREATE ROLE ben "))
        .expect("the guide creates ben")
        .replace("choose-another", PASSWORD);
    let extra: String = ["cat", "dan", "eve"]
        .iter()
        .map(|u| ben.replace("ben", u) + "\n")
        .collect();
    script = script.replacen(
        "CREATE DATABASE team;",
        &format!("{extra}CREATE DATABASE team;"),
        1,
    );
    server.psql_script("postgres", &script).unwrap();
    server
}

/// An aider history of `n` sessions on `topic`, `messages` messages each.
fn history(topic: &str, n: usize, messages: usize) -> String {
    let mut out = String::new();
    for i in 0..n {
        let (day, minute) = (1 + i / (24 * 60) % 28, i % (24 * 60));
        out.push_str(&format!(
            "\n# aider chat started at 2026-03-{day:02} {:02}:{:02}:00\n\n",
            minute / 60,
            minute % 60
        ));
        for m in 0..messages / 2 {
            out.push_str(&format!(
                "#### {topic} question {i}.{m}: why does the {topic} fail?  \n\nThe {topic} answer {i}.{m}: it misses a step.\n\n"
            ));
        }
    }
    out
}

/// A machine: a deja home as `user@machine`, sharing project `billing`, with
/// aider projects `billing` and `private` holding `billing` and `private`.
pub(crate) fn machine(server: &ScratchServer, user: &str, machine: &str, billing: &str) -> Sandbox {
    machine_in(server, "team", user, machine, billing)
}

fn machine_in(
    server: &ScratchServer,
    database: &str,
    user: &str,
    machine: &str,
    billing: &str,
) -> Sandbox {
    let mut sb = Sandbox::new();
    configure(
        &sb,
        server,
        database,
        user,
        machine,
        "[embed]\nenabled = false\n",
    );
    sb.env("DEJA_TEAM_PASSWORD", PASSWORD);
    sb.write("work/billing/.aider.chat.history.md", billing);
    sb.write(
        "work/private/.aider.chat.history.md",
        "\n# aider chat started at 2026-03-01 08:00:00\n\n#### the private zebra roadmap  \n\nThe zebra roadmap stays here.\n",
    );
    sb.write(
        ".config/deja/aider-projects",
        format!(
            "{}\n{}\n",
            sb.home.join("work/billing").display(),
            sb.home.join("work/private").display()
        ),
    );
    sb
}

pub(crate) fn configure(
    sb: &Sandbox,
    server: &ScratchServer,
    db: &str,
    user: &str,
    machine: &str,
    extra: &str,
) {
    sb.config(&format!(
        "{extra}\n[team]\nurl = \"{}\"\nname = \"{user}@{machine}\"\nshare = [\"billing\"]\n",
        server.url(user, db)
    ));
}

pub(crate) fn count(server: &ScratchServer, db: &str, sql: &str) -> i64 {
    server.psql(db, sql).unwrap().trim().parse().unwrap()
}

/// The team store's content of `origin`, without push times, for comparing
/// two stores.
fn team_dump(server: &ScratchServer, db: &str) -> String {
    [
        "SELECT origin, harness, session_id, native_id, started_at, updated_at, project_dir,
                title, precedence, message_count, content_hash, forgotten_at IS NULL
         FROM deja.sessions ORDER BY 1, 2, 3",
        "SELECT origin, harness, session_id, position, role, md5(text), at, native_id
         FROM deja.messages ORDER BY 1, 2, 3, 4",
        "SELECT origin, harness, session_id, position, path, action, at FROM deja.files ORDER BY 1, 2, 3, 4",
        "SELECT origin, harness, session_id, position, md5(command), ran_by, at FROM deja.commands ORDER BY 1, 2, 3, 4",
    ]
    .iter()
    .map(|q| server.psql(db, q).unwrap())
    .collect::<Vec<_>>()
    .join("--\n")
}

pub(crate) fn ids(v: &Value, key: &str) -> Vec<String> {
    let mut ids: Vec<String> = v[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            s["id"]
                .as_str()
                .or(s["session_id"].as_str())
                .unwrap()
                .to_string()
        })
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

#[test]
fn a_pushed_session_is_recalled_elsewhere_and_leaves_with_its_tombstone() {
    let server = server();
    let ana = machine(
        &server,
        "ana",
        "laptop",
        "\n# aider chat started at 2026-03-02 10:00:00\n\n#### the invoice query leaks rows across customers  \n\nThe query misses the tenant predicate; add `WHERE tenant_id = $1`.\n",
    );
    let ben = machine(&server, "ben", "desk", "");
    // Embeddings on for ben: pulled sessions are embedded like any other.
    configure(&ben, &server, "team", "ben", "desk", "");
    ben.config_with_model(&std::fs::read_to_string(ben.config_path()).unwrap());
    ana.index();
    ben.index();
    let ana_id = ids(
        &ana.ok(&["sessions", "--project", "billing", "--json"])
            .json(),
        "sessions",
    );
    assert_eq!(ana_id.len(), 1);
    let ana_id = &ana_id[0];

    let push = ana.ok(&["team", "push", "--json"]).json();
    assert_eq!(
        (
            push["shared"].as_u64(),
            push["pushed"].as_u64(),
            push["messages"].as_u64()
        ),
        (Some(1), Some(1), Some(2)),
        "{push:#}"
    );
    assert_eq!(push["origin"], "ana@laptop");
    // Only the shared project left this machine.
    assert_eq!(
        count(&server, "team", "SELECT count(*) FROM deja.sessions"),
        1
    );
    assert_eq!(
        count(
            &server,
            "team",
            "SELECT count(*) FROM deja.messages WHERE text LIKE '%zebra%'"
        ),
        0
    );
    // A second push sends nothing.
    let again = ana.ok(&["team", "push", "--json"]).json();
    assert_eq!(
        (again["pushed"].as_u64(), again["unchanged"].as_u64()),
        (Some(0), Some(1))
    );

    let pulled = ben.ok(&["team", "pull", "--json"]).json();
    assert_eq!(
        (pulled["added"].as_u64(), pulled["messages"].as_u64()),
        (Some(1), Some(2)),
        "{pulled:#}"
    );
    assert_eq!(pulled["embedded_messages"].as_u64(), Some(2), "{pulled:#}");

    // Recall finds it by words and by meaning, with its origin shown.
    let out = ben
        .ok(&["recall", "--no-refresh", "tenant predicate"])
        .stdout;
    assert!(
        out.contains(ana_id.as_str()) && out.contains("from ana@laptop"),
        "{out}"
    );
    let semantic = ben
        .ok(&[
            "recall",
            "--no-refresh",
            "--mode",
            "semantic",
            "--json",
            "-n",
            "1",
            "customers seeing each other's invoices",
        ])
        .json();
    assert_eq!(
        semantic["hits"][0]["session_id"].as_str(),
        Some(ana_id.as_str()),
        "{semantic:#}"
    );
    assert_eq!(semantic["hits"][0]["origin"], "ana@laptop");
    // Filterable by origin.
    let theirs = ben.ok(&["sessions", "--origin", "ana", "--json"]).json();
    assert_eq!(ids(&theirs, "sessions"), std::slice::from_ref(ana_id));
    assert_eq!(theirs["sessions"][0]["origin"], "ana@laptop");
    let mine = ben.ok(&["sessions", "--mine", "--json"]).json();
    assert!(!ids(&mine, "sessions").contains(ana_id), "{mine:#}");
    assert!(!mine["sessions"].as_array().unwrap().is_empty());
    // Ben's own sessions may hold nothing that clears the relevance floor:
    // "nothing found" (exit 1) is as good as hits, so long as Ana's is not one.
    let none = ben.run(&[
        "recall",
        "--no-refresh",
        "--mine",
        "--json",
        "tenant predicate",
    ]);
    assert!(none.code == 0 || none.code == 1, "{}", none.stderr);
    assert!(!none.stdout.contains(ana_id.as_str()), "{}", none.stdout);
    let unknown = ben.run(&["sessions", "--origin", "zed"]);
    assert_eq!(unknown.code, 2);
    assert!(
        unknown.stderr.contains("ana@laptop (1 session)"),
        "{}",
        unknown.stderr
    );
    // The MCP tools show and filter it too.
    let mut mcp = crate::mcp::Raw::start(&ben);
    mcp.initialize();
    for (id, origin, found) in [
        (2, "ana@laptop", true),
        (3, "mine", false),
        (4, "ana", true),
    ] {
        mcp.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"recall","arguments":{{"query":"tenant predicate","origin":"{origin}"}}}}}}"#));
        let answer = mcp.receive();
        let hits = answer["result"]["structuredContent"]["hits"]
            .as_array()
            .unwrap()
            .clone();
        let ours = hits
            .iter()
            .any(|h| h["session_id"] == ana_id.as_str() && h["origin"] == "ana@laptop");
        assert_eq!(ours, found, "{origin}: {answer:#}");
        if found {
            let text = answer["result"]["content"][0]["text"].as_str().unwrap();
            assert!(text.contains("from ana@laptop"), "{text}");
        }
    }
    mcp.send(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"sessions","arguments":{"origin":"ana@laptop"}}}"#);
    let answer = mcp.receive();
    assert!(answer.to_string().contains(ana_id.as_str()), "{answer:#}");
    let (status, stderr) = mcp.finish();
    assert!(status.success(), "{stderr}");
    // show says where it comes from; resume says plainly it is elsewhere.
    let shown = ben.ok(&["show", ana_id]).stdout;
    assert!(
        shown.contains("from      ana@laptop (pulled from the team store)"),
        "{shown}"
    );
    assert_eq!(
        ben.ok(&["show", ana_id, "--json"]).json()["origin"],
        "ana@laptop"
    );
    let resume = ben.run(&["resume", ana_id]);
    assert_eq!(resume.code, 2);
    assert!(
        resume
            .stderr
            .contains("lives on another machine, ana@laptop"),
        "{}",
        resume.stderr
    );
    // The next index keeps the pulled session (it has no transcript here).
    ben.ok(&["index"]);
    assert_eq!(
        ids(
            &ben.ok(&["sessions", "--origin", "ana@laptop", "--json"])
                .json(),
            "sessions"
        ),
        std::slice::from_ref(ana_id)
    );

    // doctor reports the settings without connecting: ben shares a project he has no session of.
    let doctor = ben.run(&["doctor", "--json"]);
    let report = doctor.json();
    assert_eq!(report["team"]["origin"], "ben@desk", "{report:#}");
    assert_eq!(report["team"]["pulled_sessions"], 1);
    assert!(
        report["problems"]
            .to_string()
            .contains("`team.share` names `billing`"),
        "{report:#}"
    );
    let status = ben.ok(&["team", "status", "--json"]).json();
    assert_eq!(
        (
            status["pulled"].as_u64(),
            status["to_pull"].as_u64(),
            status["schema_version"].as_i64()
        ),
        (Some(1), Some(0), Some(deja_team::schema::current_version())),
        "{status:#}"
    );
    assert_eq!(status["publishers"][0]["origin"], "ana@laptop");
    assert_eq!(status["publishers"][0]["sessions"], 1);

    // Ana forgets it and pushes: the tombstone travels, and ben's copy goes.
    ana.ok(&["forget", ana_id, "--yes"]);
    let status = ana.ok(&["team", "status", "--json"]).json();
    assert_eq!(status["to_retract"].as_u64(), Some(1), "{status:#}");
    let push = ana.ok(&["team", "push", "--json"]).json();
    assert_eq!(push["retracted"].as_u64(), Some(1), "{push:#}");
    assert_eq!(
        count(&server, "team", "SELECT count(*) FROM deja.messages"),
        0
    );
    assert_eq!(
        count(
            &server,
            "team",
            "SELECT count(*) FROM deja.sessions WHERE forgotten_at IS NOT NULL AND title IS NULL"
        ),
        1
    );
    let pulled = ben.ok(&["team", "pull", "--json"]).json();
    assert_eq!(pulled["removed"].as_u64(), Some(1), "{pulled:#}");
    let gone = ben.run(&["recall", "--no-refresh", "--json", "tenant predicate"]);
    assert!(!gone.stdout.contains(ana_id.as_str()), "{}", gone.stdout);
    assert_eq!(ben.run(&["show", ana_id]).code, 2);
    // No text of it is left in ben's store either.
    let db = std::fs::read(ben.database()).unwrap();
    assert!(
        !db.windows(16).any(|w| w == b"tenant predicate"),
        "text left in the store file"
    );
}

/// Starts `deja team push` on every machine, then requires each to succeed.
fn push_all_at_once(machines: &[Sandbox]) {
    let children: Vec<Child> = machines
        .iter()
        .map(|m| {
            m.command()
                .args(["team", "push"])
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn four_machines_pushing_at_once_lose_nothing() {
    let server = server();
    let names = ["ana", "ben", "cat", "dan"];
    let machines: Vec<Sandbox> = names
        .iter()
        .map(|u| machine(&server, u, "box", &history(&format!("{u} ledger"), 60, 6)))
        .collect();
    for m in &machines {
        m.index();
    }
    // The first run creates the schema; all four race for it too.
    push_all_at_once(&machines);
    assert_eq!(
        count(&server, "team", "SELECT count(*) FROM deja.sessions"),
        240
    );
    assert_eq!(
        count(&server, "team", "SELECT count(*) FROM deja.messages"),
        240 * 6
    );
    assert_eq!(
        count(
            &server,
            "team",
            "SELECT count(DISTINCT origin) FROM deja.sessions"
        ),
        4
    );
    // And again at once, with every machine's sessions changed: still no loss, no duplicate.
    for (m, u) in machines.iter().zip(names) {
        m.write(
            "work/billing/.aider.chat.history.md",
            history(&format!("{u} ledger"), 60, 8),
        );
        m.index();
    }
    push_all_at_once(&machines);
    assert_eq!(
        count(&server, "team", "SELECT count(*) FROM deja.messages"),
        240 * 8
    );
    let eve = machine(&server, "eve", "spare", "");
    eve.index();
    let pulled = eve.ok(&["team", "pull", "--json"]).json();
    assert_eq!(
        (pulled["added"].as_u64(), pulled["messages"].as_u64()),
        (Some(240), Some(240 * 8)),
        "{pulled:#}"
    );
    assert_eq!(
        eve.ok(&["sessions", "--origin", "cat@box", "--json"])
            .json()["sessions"]
            .as_array()
            .unwrap()
            .len(),
        60
    );
    // A pulled session eve forgets stays forgotten at her next pull.
    let cats = ids(
        &eve.ok(&["sessions", "--origin", "cat@box", "--json"])
            .json(),
        "sessions",
    );
    eve.ok(&["forget", &cats[0], "--yes"]);
    let again = eve.ok(&["team", "pull", "--json"]).json();
    assert_eq!(
        (again["added"].as_u64(), again["forgotten_here"].as_u64()),
        (Some(0), Some(1)),
        "{again:#}"
    );
    assert_eq!(eve.run(&["show", &cats[0]]).code, 2);
    // Lifting the tombstone lets the next pull bring it back.
    let undo = eve.ok(&["forget", "--undo", &cats[0]]);
    assert!(
        undo.stderr.contains("next `deja team pull`"),
        "{}",
        undo.stderr
    );
    let back = eve.ok(&["team", "pull", "--json"]).json();
    assert_eq!(back["added"].as_u64(), Some(1), "{back:#}");
    assert_eq!(
        eve.ok(&["show", &cats[0], "--json"]).json()["origin"],
        "cat@box"
    );
}

/// Holds an uncommitted insert of session `id`'s key as the team store's
/// owner, so that a push reaching that session waits there (with the
/// sessions before it committed).
struct Blocker {
    child: Child,
}

impl Blocker {
    fn hold(server: &ScratchServer, origin: &str, id: &str) -> Blocker {
        let mut child = std::process::Command::new("psql")
            .arg("-h")
            .arg(server.socket_dir())
            .args([
                "-p",
                &server.port().to_string(),
                "-U",
                ADMIN,
                "-d",
                "team",
                "-X",
                "-q",
                "-v",
                "ON_ERROR_STOP=1",
            ])
            .env("PGPASSWORD", ADMIN_PASSWORD)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.as_mut().unwrap();
        writeln!(
            stdin,
            "BEGIN; INSERT INTO deja.sessions (origin, harness, session_id, native_id, started_at, updated_at, precedence, message_count, content_hash, pushed_at) VALUES ('{origin}', 'aider', '{id}', 'x', 0, 0, 0, 0, 'x', 0);"
        )
        .unwrap();
        stdin.flush().unwrap();
        // The insert holds its key once psql sits in the open transaction.
        wait_for(
            server,
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'psql' AND state = 'idle in transaction'",
            1,
        );
        Blocker { child }
    }

    fn release(mut self) {
        if let Some(stdin) = self.child.stdin.as_mut() {
            let _ = writeln!(stdin, "ROLLBACK;");
        }
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// Waits until `sql` counts at least `n`.
fn wait_for(server: &ScratchServer, sql: &str, n: i64) -> i64 {
    for _ in 0..600 {
        let c = count(server, "team", sql);
        if c >= n {
            return c;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("`{sql}` never reached {n}");
}

/// Waits until a push blocks on the held key (a lock wait shows in pg_stat_activity).
fn wait_for_block(server: &ScratchServer) {
    wait_for(
        server,
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND application_name = 'deja'",
        1,
    );
}

/// A machine with 300 shared sessions (three transactions' worth), indexed,
/// and the id of its 250th session in push order.
fn big_machine(server: &ScratchServer, db: &str) -> (Sandbox, String) {
    let m = machine_in(server, db, "ana", "laptop", &history("ledger", 300, 10));
    m.index();
    let list = m.ok(&["sessions", "--project", "billing", "--json"]).json();
    let all = ids(&list, "sessions");
    assert_eq!(all.len(), 300);
    (m, all[250].clone())
}

/// What a clean push of `m`'s sessions puts in a fresh team store.
fn clean_push(server: &ScratchServer, m: &Sandbox) -> String {
    server.psql("postgres", "CREATE DATABASE clean").unwrap();
    server
        .psql("clean", "CREATE SCHEMA deja AUTHORIZATION deja_team")
        .unwrap();
    server
        .psql("postgres", "GRANT CONNECT ON DATABASE clean TO deja_team")
        .unwrap();
    let config = std::fs::read_to_string(m.config_path()).unwrap();
    configure(
        m,
        server,
        "clean",
        "ana",
        "laptop",
        "[embed]\nenabled = false\n",
    );
    m.ok(&["team", "push"]);
    m.config(&config);
    team_dump(server, "clean")
}

/// A push of 300 sessions held half-way: the sessions of its first
/// transaction are committed, and it waits on a key another transaction
/// holds. Returns the machine, the running push (stderr piped) and the hold.
fn push_held_half_way(server: &ScratchServer) -> (Sandbox, Child, Blocker) {
    let (ana, blocked) = big_machine(server, "team");
    ana.ok(&["team", "status"]); // creates the schema
    let blocker = Blocker::hold(server, "ana@laptop", &blocked);
    let push = ana
        .command()
        .args(["team", "push"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_block(server);
    (ana, push, blocker)
}

/// Ana's sessions in the team store, which must be some but not all.
fn partial(server: &ScratchServer) -> i64 {
    let n = count(
        server,
        "team",
        "SELECT count(*) FROM deja.sessions WHERE origin = 'ana@laptop'",
    );
    assert!(
        n > 0 && n < 300,
        "{n} sessions of 300 before the push was cut"
    );
    n
}

#[test]
fn a_push_killed_half_way_is_finished_by_the_next_with_a_clean_result() {
    let server = server();
    let (ana, mut push, blocker) = push_held_half_way(&server);
    let partial = partial(&server);
    std::process::Command::new("kill")
        .args(["-9", &push.id().to_string()])
        .status()
        .unwrap();
    push.wait().unwrap();
    blocker.release();
    let out = ana.ok(&["team", "push", "--json"]).json();
    assert_eq!(out["pushed"].as_i64(), Some(300 - partial), "{out:#}");
    assert_eq!(team_dump(&server, "team"), clean_push(&server, &ana));
}

#[test]
fn a_push_cut_by_a_server_restart_is_finished_by_the_next_with_a_clean_result() {
    let server = server();
    let (ana, push, blocker) = push_held_half_way(&server);
    server.restart().unwrap();
    let out = push.wait_with_output().unwrap();
    blocker.release();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("error: team store ana@"), "{stderr}");
    assert_eq!(stderr.matches("error:").count(), 1, "{stderr}");
    partial(&server);
    ana.ok(&["team", "push"]);
    assert_eq!(team_dump(&server, "team"), clean_push(&server, &ana));
}

#[test]
fn a_wrong_password_a_down_server_and_a_newer_schema_change_nothing_here() {
    let mut server = server();
    let mut ana = machine(&server, "ana", "laptop", &history("ledger", 3, 2));
    ana.index();
    ana.ok(&["team", "push"]);
    let mut ben = machine(&server, "ben", "desk", "");
    ben.index();
    let before = ben.dump();
    let team_before = team_dump(&server, "team");

    let one_error = |out: &crate::common::Output, needle: &str| {
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert!(out.stderr.contains(needle), "{needle}: {}", out.stderr);
        assert_eq!(out.stderr.matches("error:").count(), 1, "{}", out.stderr);
        assert!(out.stdout.is_empty(), "{}", out.stdout);
    };

    ben.env("DEJA_TEAM_PASSWORD", "wrong");
    for cmd in [
        &["team", "pull"][..],
        &["team", "push"],
        &["team", "status"],
    ] {
        let out = ben.run(cmd);
        one_error(&out, "password authentication failed for user \"ben\"");
        assert!(
            out.stderr.contains("hint: check $DEJA_TEAM_PASSWORD"),
            "{}",
            out.stderr
        );
    }
    assert_eq!(ben.dump(), before);
    ben.env("DEJA_TEAM_PASSWORD", PASSWORD);

    server.stop().unwrap();
    for cmd in [
        &["team", "pull"][..],
        &["team", "push"],
        &["team", "status"],
    ] {
        let out = ben.run(cmd);
        one_error(&out, "cannot connect to the team store ben@");
        assert!(
            out.stderr.contains("hint: is the server running"),
            "{}",
            out.stderr
        );
    }
    assert_eq!(ben.dump(), before);
    server.start_again().unwrap();

    server
        .psql(
            "team",
            "UPDATE deja.meta SET value = '99' WHERE key = 'schema_version'",
        )
        .unwrap();
    for cmd in [
        &["team", "pull"][..],
        &["team", "push"],
        &["team", "status"],
    ] {
        let out = ben.run(cmd);
        one_error(
            &out,
            &format!(
                "has schema version 99; this deja knows versions up to {}",
                deja_team::schema::current_version()
            ),
        );
    }
    assert_eq!(ben.dump(), before);
    assert_eq!(team_dump(&server, "team"), team_before);
    server
        .psql(
            "team",
            &format!(
                "UPDATE deja.meta SET value = '{}' WHERE key = 'schema_version'",
                deja_team::schema::current_version()
            ),
        )
        .unwrap();

    // Redaction off: push refuses unless forced.
    let config = std::fs::read_to_string(ana.config_path()).unwrap();
    ana.config(&format!("[redact]\nenabled = false\n{config}"));
    let out = ana.run(&["team", "push"]);
    one_error(&out, "redaction is off");
    ana.ok(&["team", "push", "--force"]);

    // Passwords never sit where others can read them.
    ana.config(&config.replace("postgres://ana@", &format!("postgres://ana:{PASSWORD}@")));
    crate::common::set_mode(&ana.config_path(), 0o644);
    let out = ana.run(&["team", "status"]);
    one_error(&out, "holds a password, and others can read that file");
    crate::common::set_mode(&ana.config_path(), 0o600);
    ana.env("DEJA_TEAM_PASSWORD", "");
    ana.ok(&["team", "status"]);
    let shown = ana.ok(&["config"]).stdout;
    assert!(
        shown.contains("ana:***@") && !shown.contains(PASSWORD),
        "{shown}"
    );
    let file = ana.write("pw", format!("{PASSWORD}\n"));
    crate::common::set_mode(&file, 0o644);
    ana.config(&format!("{config}password_file = \"~/pw\"\n"));
    let out = ana.run(&["team", "status"]);
    one_error(&out, "others can read it (mode 644)");
    let doctor = ana.run(&["doctor", "--json"]).json();
    assert!(
        doctor["problems"]
            .to_string()
            .contains("others can read it (mode 644)"),
        "{doctor:#}"
    );
    assert_eq!(doctor["team"]["configured"], true);
    crate::common::set_mode(&file, 0o600);
    ana.ok(&["team", "status"]);
}

#[test]
fn tls_is_used_and_verified_when_required() {
    let server = server();
    let ca = server.enable_tls().unwrap();
    let mut ana = machine(&server, "ana", "laptop", &history("ledger", 2, 2));
    ana.index();
    fn tls_config(sb: &Sandbox, tls: &str, url: &str, ca_file: Option<&std::path::Path>) {
        let ca_line = ca_file
            .map(|p| format!("ca_file = \"{}\"\n", p.display()))
            .unwrap_or_default();
        sb.config(&format!(
            "[embed]\nenabled = false\n[team]\nurl = \"{url}\"\nname = \"ana@laptop\"\nshare = [\"billing\"]\ntls = \"{tls}\"\n{ca_line}"
        ));
    }
    let tcp = server.tcp_url("ana", "team");
    // The server takes TCP connections with TLS only (hostssl): this push proves TLS was used.
    tls_config(&ana, "require", &tcp, Some(&ca));
    let out = ana.ok(&["team", "push", "--json"]).json();
    assert_eq!(out["pushed"].as_u64(), Some(2), "{out:#}");
    tls_config(&ana, "prefer", &tcp, Some(&ca));
    ana.ok(&["team", "status"]);
    // Without the authority, the server's certificate is not trusted.
    tls_config(&ana, "require", &tcp, None);
    let out = ana.run(&["team", "status"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("cannot connect to the team store ana@localhost"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.to_lowercase().contains("certificate"),
        "{}",
        out.stderr
    );
    // Plain text over TCP is refused here unless asked for, and then by this server.
    tls_config(&ana, "disable", &tcp, None);
    let out = ana.run(&["team", "status"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("would send the password to a TCP host without TLS"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("hint:") && out.stderr.contains("allow_insecure_auth"),
        "{}",
        out.stderr
    );
    let config = std::fs::read_to_string(ana.config_path()).unwrap();
    ana.config(&format!("{config}allow_insecure_auth = true\n"));
    let out = ana.run(&["team", "status"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("no encryption"), "{}", out.stderr);
    // $DEJA_TEAM_URL overrides the file's URL.
    tls_config(
        &ana,
        "require",
        "postgres://nobody@%2Fnonexistent:1/none",
        Some(&ca),
    );
    assert_eq!(ana.run(&["team", "status"]).code, 2);
    ana.env("DEJA_TEAM_URL", &tcp);
    let status = ana.ok(&["team", "status", "--json"]).json();
    assert_eq!(
        status["server"],
        format!("ana@localhost:{}/team", server.port())
    );
    ana.env("DEJA_TEAM_URL", "");
    // A server that offers no TLS (a Unix socket) is refused when TLS is
    // required, with a hint about `team.tls`, not about the server.
    tls_config(&ana, "require", &server.url("ana", "team"), Some(&ca));
    let out = ana.run(&["team", "status"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("cannot connect to the team store"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("hint: a Unix socket carries no TLS")
            && !out.stderr.contains("is the server running"),
        "{}",
        out.stderr
    );
    // The default on a socket is no TLS.
    tls_config(&ana, "auto", &server.url("ana", "team"), None);
    ana.ok(&["team", "status"]);
    // A password asked for in cleartext, even inside TLS, is not sent
    // unless asked for.
    server.set_tcp_auth("password").unwrap();
    tls_config(&ana, "require", &tcp, Some(&ca));
    let out = ana.run(&["team", "status"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("did not use channel binding")
            && out.stderr.contains("hint:")
            && out.stderr.contains("team.allow_insecure_auth"),
        "{}",
        out.stderr
    );
    let config = std::fs::read_to_string(ana.config_path()).unwrap();
    ana.config(&format!("{config}allow_insecure_auth = true\n"));
    ana.ok(&["team", "status"]);
}

#[test]
fn the_default_tls_is_required_over_tcp_and_a_certificate_for_another_name_fails() {
    let server = server();
    let ana = machine(&server, "ana", "laptop", &history("ledger", 2, 2));
    ana.index();
    let tcp = server.tcp_url("ana", "team");
    let with = |tls: &str, extra: &str| {
        format!(
            "[embed]\nenabled = false\n[team]\nurl = \"{tcp}\"\nname = \"ana@laptop\"\nshare = [\"billing\"]\n{tls}{extra}"
        )
    };
    // A server that declines TLS over TCP is refused under the default.
    server.enable_tcp().unwrap();
    ana.config(&with("", ""));
    let out = ana.run(&["team", "push"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("server does not support TLS")
            && out.stderr.contains("hint: the server offers no TLS"),
        "{}",
        out.stderr
    );
    // Under `prefer`, the downgrade gets no password either.
    ana.config(&with("tls = \"prefer\"\n", ""));
    let out = ana.run(&["team", "push"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("did not use channel binding"),
        "{}",
        out.stderr
    );
    assert_eq!(
        server
            .psql("team", "SELECT to_regclass('deja.sessions') IS NULL")
            .unwrap()
            .trim(),
        "t",
        "nothing was created"
    );
    // Asked for on purpose, it works.
    ana.config(&with("tls = \"disable\"\n", "allow_insecure_auth = true\n"));
    ana.ok(&["team", "status"]);

    // A certificate that does not name the host is refused.
    let ca = server.enable_tls_for("DNS:elsewhere.invalid").unwrap();
    ana.config(&with("", &format!("ca_file = \"{}\"\n", ca.display())));
    let out = ana.run(&["team", "push"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.to_lowercase().contains("certificate")
            && out
                .stderr
                .contains("hint: the server's certificate is not trusted for this host name"),
        "{}",
        out.stderr
    );
    assert_eq!(
        count(&server, "team", "SELECT count(*) FROM deja.sessions"),
        0
    );
    // The same authority with the right name: TLS and channel binding work.
    let ca = server.enable_tls().unwrap();
    ana.config(&with("", &format!("ca_file = \"{}\"\n", ca.display())));
    let out = ana.ok(&["team", "push", "--json"]).json();
    assert_eq!(out["pushed"].as_u64(), Some(2), "{out:#}");
}

/// The SQL blocks of the guide's team memory page (`docs/team.md`) in the
/// section under `heading`, in order.
fn guide_sql(heading: &str) -> Vec<String> {
    let page = std::fs::read_to_string(crate::common::repo().join("docs/team.md")).unwrap();
    let start = page
        .find(heading)
        .unwrap_or_else(|| panic!("docs/team.md has no `{heading}`"));
    let section = &page[start..];
    let end = section[3..]
        .find("\n## ")
        .map(|i| i + 3)
        .unwrap_or(section.len());
    section[..end]
        .split("```sql\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap().to_string())
        .collect()
}

#[test]
fn the_stricter_set_up_lets_members_publish_only_under_their_own_name() {
    let server = ScratchServer::start(false).unwrap();
    let blocks = guide_sql("## A stricter set-up");
    assert_eq!(blocks.len(), 2, "{blocks:?}");
    let roles = blocks[0]
        .replace("owner-password", PASSWORD)
        .replace("choose-one", PASSWORD)
        .replace("choose-another", PASSWORD);
    server.psql_script("postgres", &roles).unwrap();

    // Before the owner creates the tables, a member's deja cannot, and says who can.
    let ana = machine(&server, "ana", "laptop", &history("ledger", 3, 2));
    ana.index();
    let out = ana.run(&["team", "push"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("run `deja team status` as that role once"),
        "{}",
        out.stderr
    );

    let mut owner = Sandbox::new();
    owner.config("[embed]\nenabled = false\n");
    owner.env("DEJA_TEAM_URL", server.url("deja_owner", "team"));
    owner.env("DEJA_TEAM_PASSWORD", PASSWORD);
    owner.ok(&["index"]);
    owner.ok(&["team", "status"]);
    server.psql_script("team", &blocks[1]).unwrap();

    ana.ok(&["team", "push"]);
    assert_eq!(
        count(&server, "team", "SELECT count(*) FROM deja.sessions"),
        3
    );
    // Ben cannot publish under Ana's name, nor retract her sessions.
    let ben = machine(&server, "ben", "desk", &history("other ledger", 2, 2));
    configure(
        &ben,
        &server,
        "team",
        "ben",
        "desk",
        "[embed]\nenabled = false\n",
    );
    ben.index();
    // His own sessions, under his own name, are his to publish.
    ben.ok(&["team", "push"]);
    let config = std::fs::read_to_string(ben.config_path()).unwrap();
    ben.config(&config.replace("name = \"ben@desk\"", "name = \"ana@laptop\""));
    // deja itself refuses a name another machine pushes under...
    let out = ben.run(&["team", "push"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("another machine pushes under that name"),
        "{}",
        out.stderr
    );
    // ...and taking it over is refused by the server.
    let out = ben.run(&["team", "push", "--take-over-name"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("row-level security"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("hint: this team store lets each role publish only under its own name"),
        "{}",
        out.stderr
    );
    assert_eq!(count(&server, "team", "SELECT count(*) FROM deja.sessions WHERE origin = 'ana@laptop' AND forgotten_at IS NULL"), 3);
    ben.config(&config);
    // Everyone reads everyone's sessions.
    let pulled = ben.ok(&["team", "pull", "--json"]).json();
    assert_eq!(pulled["added"].as_u64(), Some(3), "{pulled:#}");
    // Members cannot change the tables.
    let drop = std::process::Command::new("psql")
        .arg("-h")
        .arg(server.socket_dir())
        .args([
            "-p",
            &server.port().to_string(),
            "-U",
            "ben",
            "-d",
            "team",
            "-X",
            "-c",
            "DROP TABLE deja.messages",
        ])
        .env("PGPASSWORD", PASSWORD)
        .output()
        .unwrap();
    assert!(!drop.status.success());
    assert!(
        String::from_utf8_lossy(&drop.stderr).contains("must be owner"),
        "{}",
        String::from_utf8_lossy(&drop.stderr)
    );
}

#[test]
fn pulled_sessions_are_redacted_by_this_machines_rules_too() {
    let server = server();
    let ana = machine(
        &server,
        "ana",
        "laptop",
        "\n# aider chat started at 2026-03-02 10:00:00\n\n#### the vendor key acme_4242 stopped working  \n\nRotate acme_4242 in the vault.\n",
    );
    ana.index();
    ana.ok(&["team", "push"]);
    let ben = machine(&server, "ben", "desk", "");
    configure(
        &ben,
        &server,
        "team",
        "ben",
        "desk",
        "[embed]\nenabled = false\n[redact]\npatterns = [{ name = \"acme-key\", regex = \"acme_[0-9]+\" }]\n",
    );
    ben.ok(&["team", "pull"]);
    let id = ids(
        &ben.ok(&["sessions", "--origin", "ana", "--json"]).json(),
        "sessions",
    );
    let shown = ben.ok(&["show", &id[0]]).stdout;
    assert!(
        shown.contains("[REDACTED:acme-key]") && !shown.contains("acme_4242"),
        "{shown}"
    );
    let db = std::fs::read(ben.database()).unwrap();
    assert!(
        !db.windows(9).any(|w| w == b"acme_4242"),
        "the key is in ben's store file"
    );
}

/// Everything the team store holds, publishers included, without push times.
fn full_dump(server: &ScratchServer) -> String {
    format!(
        "{}--\n{}",
        team_dump(server, "team"),
        server
            .psql(
                "team",
                "SELECT origin, machine_id, claimed_at FROM deja.publishers ORDER BY 1"
            )
            .unwrap()
    )
}

#[test]
fn a_wiped_data_folder_retracts_nothing_and_every_session_still_reaches_the_team() {
    let server = server();
    let ana = machine(&server, "ana", "laptop", &history("ledger", 3, 2));
    ana.index();
    ana.ok(&["team", "push"]);
    // The laptop is reinstalled: a new data folder, the same synced config,
    // and none of the old transcripts.
    std::fs::remove_dir_all(ana.data_dir()).unwrap();
    ana.write("work/billing/.aider.chat.history.md", "");
    ana.index();
    let before = full_dump(&server);
    // To the team store this is a new machine under a name in use: refused.
    let out = ana.run(&["team", "push"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(out.stderr.matches("error:").count(), 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("another machine pushes under that name")
            && out.stderr.contains("hint:")
            && out.stderr.contains("--take-over-name"),
        "{}",
        out.stderr
    );
    assert_eq!(full_dump(&server), before);
    // Taking the name over deliberately retracts nothing it has no evidence for.
    let push = ana
        .ok(&["team", "push", "--take-over-name", "--json"])
        .json();
    assert_eq!(
        (
            push["retracted"].as_u64(),
            push["missing"].as_u64(),
            push["took_over"].as_bool()
        ),
        (Some(0), Some(3), Some(true)),
        "{push:#}"
    );
    let again = ana.ok(&["team", "push"]);
    assert!(
        again
            .stderr
            .contains("3 sessions published as ana@laptop are not in this store")
            && again.stderr.contains("--retract-missing"),
        "{}",
        again.stderr
    );
    // A dry run of --retract-missing lists what would go and changes nothing.
    let before = team_dump(&server, "team");
    let dry = ana.ok(&["team", "push", "--retract-missing", "--dry-run"]);
    assert_eq!(
        dry.stdout.matches("would retract aider ").count(),
        3,
        "{}",
        dry.stdout
    );
    assert!(dry.stdout.contains("(missing)"), "{}", dry.stdout);
    assert_eq!(team_dump(&server, "team"), before);
    // Ben still pulls every session Ana published.
    let ben = machine(&server, "ben", "desk", "");
    ben.index();
    let pulled = ben.ok(&["team", "pull", "--json"]).json();
    assert_eq!(
        (pulled["added"].as_u64(), pulled["messages"].as_u64()),
        (Some(3), Some(6)),
        "{pulled:#}"
    );
    // Asked for explicitly, the missing sessions go, and Ben's copies with them.
    let gone = ana
        .ok(&["team", "push", "--retract-missing", "--json"])
        .json();
    assert_eq!(gone["retracted"].as_u64(), Some(3), "{gone:#}");
    assert_eq!(gone["retractions"][0]["why"], "missing", "{gone:#}");
    let pulled = ben.ok(&["team", "pull", "--json"]).json();
    assert_eq!(pulled["removed"].as_u64(), Some(3), "{pulled:#}");
}

#[test]
fn a_mistyped_share_entry_retracts_nothing_and_names_the_project() {
    let server = server();
    let ana = machine(&server, "ana", "laptop", &history("ledger", 3, 2));
    ana.index();
    ana.ok(&["team", "push"]);
    let ben = machine(&server, "ben", "desk", "");
    ben.index();
    let pulled = ben.ok(&["team", "pull", "--json"]).json();
    assert_eq!(pulled["added"].as_u64(), Some(3), "{pulled:#}");
    // `billing` mistyped: its sessions are still here, no longer shared.
    ana.config(&format!(
        "[embed]\nenabled = false\n[team]\nurl = \"{}\"\nname = \"ana@laptop\"\nshare = [\"biling\"]\n",
        server.url("ana", "team")
    ));
    let project = format!("  {}: 3 sessions", ana.home.join("work/billing").display());
    let named = |stderr: &str| {
        stderr.contains(
            "3 sessions published as ana@laptop are in a project `team.share` no longer names",
        ) && stderr.contains(&project)
            && stderr.contains("`deja team push --retract-unshared`")
    };
    let before = team_dump(&server, "team");
    let dry = ana.ok(&["team", "push", "--dry-run"]);
    assert!(!dry.stdout.contains("would retract"), "{}", dry.stdout);
    assert!(named(&dry.stderr), "{}", dry.stderr);
    let push = ana.ok(&["team", "push", "--json"]);
    assert!(named(&push.stderr), "{}", push.stderr);
    let push = push.json();
    assert_eq!(
        (push["retracted"].as_u64(), push["unshared"].as_u64()),
        (Some(0), Some(3)),
        "{push:#}"
    );
    assert_eq!(team_dump(&server, "team"), before);
    let status = ana.ok(&["team", "status", "--json"]).json();
    assert_eq!(
        (status["to_retract"].as_u64(), status["unshared"].as_u64()),
        (Some(0), Some(3)),
        "{status:#}"
    );
    let pulled = ben.ok(&["team", "pull", "--json"]).json();
    assert_eq!(pulled["removed"].as_u64(), Some(0), "{pulled:#}");
    // Asked for, a dry run lists them, and a push retracts them.
    let dry = ana.ok(&["team", "push", "--retract-unshared", "--dry-run"]);
    assert_eq!(
        dry.stdout.matches("would retract aider ").count(),
        3,
        "{}",
        dry.stdout
    );
    assert!(dry.stdout.contains("(unshared)"), "{}", dry.stdout);
    assert_eq!(team_dump(&server, "team"), before);
    let gone = ana
        .ok(&["team", "push", "--retract-unshared", "--json"])
        .json();
    assert_eq!(gone["retracted"].as_u64(), Some(3), "{gone:#}");
    assert_eq!(gone["retractions"][0]["why"], "unshared", "{gone:#}");
    let pulled = ben.ok(&["team", "pull", "--json"]).json();
    assert_eq!(pulled["removed"].as_u64(), Some(3), "{pulled:#}");
}

#[test]
fn two_homes_with_one_team_name_the_second_push_is_refused_and_changes_nothing() {
    let server = server();
    let first = machine(&server, "ana", "laptop", &history("ledger", 3, 2));
    first.index();
    first.ok(&["team", "push"]);
    // A second home, its config copied: the same `team.name`.
    let second = machine(&server, "ana", "laptop", &history("other ledger", 2, 2));
    second.index();
    let before = full_dump(&server);
    let out = second.run(&["team", "push"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(out.stderr.matches("error:").count(), 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("`team.name` is ana@laptop, and another machine pushes under that name")
            && out
                .stderr
                .contains("hint: give this machine a name of its own"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    assert_eq!(full_dump(&server), before);
    // Its dry run is refused the same way.
    assert_eq!(second.run(&["team", "push", "--dry-run"]).code, 2);
    // Its status says so.
    let status = second.ok(&["team", "status", "--json"]).json();
    assert_eq!(status["name_taken"], true, "{status:#}");
    let text = second.ok(&["team", "status"]).stdout;
    assert!(
        text.contains("another machine pushes under this name"),
        "{text}"
    );
    // It pulls the first machine's sessions instead of taking them for its own.
    let pulled = second.ok(&["team", "pull", "--json"]);
    let json = pulled.json();
    assert_eq!(json["added"].as_u64(), Some(3), "{json:#}");
    assert_eq!(json["name_collision"], "ana@laptop", "{json:#}");
    assert!(
        pulled
            .stderr
            .contains("another machine pushes under this machine's `team.name`"),
        "{}",
        pulled.stderr
    );
    // The first machine's own pull and push go on as before.
    let own = first.ok(&["team", "pull", "--json"]).json();
    assert_eq!(
        (own["added"].as_u64(), own["name_collision"].is_null()),
        (Some(0), true),
        "{own:#}"
    );
    first.ok(&["team", "push"]);
    assert_eq!(full_dump(&server), before);
}

#[test]
fn status_works_in_a_fresh_home_and_pull_reports_what_it_skips() {
    let server = server();
    let ana = machine(&server, "ana", "laptop", &history("ledger", 3, 4));
    ana.index();
    ana.ok(&["team", "push"]);
    // Ben has indexed nothing yet: status works, counting his store as empty.
    let mut ben = Sandbox::new();
    configure(
        &ben,
        &server,
        "team",
        "ben",
        "desk",
        "[embed]\nenabled = false\n",
    );
    ben.env("DEJA_TEAM_PASSWORD", PASSWORD);
    let status = ben.ok(&["team", "status", "--json"]).json();
    assert_eq!(
        (
            status["local_store"].as_bool(),
            status["to_pull"].as_u64(),
            status["pulled"].as_u64()
        ),
        (Some(false), Some(3), Some(0)),
        "{status:#}"
    );
    let text = ben.ok(&["team", "status"]).stdout;
    assert!(text.contains("local store   none yet"), "{text}");
    // status made nothing here.
    assert!(!ben.database().exists());
    // A bound on the messages of a pulled session: the sessions over it are
    // skipped and reported, the others pulled.
    configure(
        &ben,
        &server,
        "team",
        "ben",
        "desk",
        "[embed]\nenabled = false\n",
    );
    let config = std::fs::read_to_string(ben.config_path()).unwrap();
    ben.config(&format!("{config}pull_max_messages = 3\n"));
    let out = ben.ok(&["team", "pull", "--json"]);
    let json = out.json();
    assert_eq!(json["added"].as_u64(), Some(0), "{json:#}");
    let skipped = json["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 3, "{json:#}");
    assert_eq!(skipped[0]["origin"], "ana@laptop");
    assert!(
        skipped[0]["reason"]
            .as_str()
            .unwrap()
            .contains("4 messages (at most 3: `team.pull_max_messages`)"),
        "{json:#}"
    );
    assert_eq!(
        out.stderr.matches("skipped aider session").count(),
        3,
        "{}",
        out.stderr
    );
    ben.config(&config);
    let out = ben.ok(&["team", "pull", "--json"]).json();
    assert_eq!(out["added"].as_u64(), Some(3), "{out:#}");
}

#[test]
fn a_session_dated_only_by_its_file_stays_approximate_on_the_machines_that_pull_it() {
    let server = server();
    let ana = machine(&server, "ana", "laptop", "");
    let ben = machine(&server, "ben", "desk", "");
    // One Continue session dated by the harness's index, one only by its file.
    crate::described::continue_sessions(&ana, true);
    ana.index();
    let listed = ana
        .ok(&["sessions", "--harness", "continue", "--json"])
        .json();
    let sessions = listed["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2, "{listed:#}");
    let mut share: Vec<String> = sessions
        .iter()
        .filter_map(|s| s["project"]["dir"].as_str().map(String::from))
        .collect();
    share.sort();
    share.dedup();
    assert!(!share.is_empty(), "{listed:#}");
    ana.config(&format!(
        "[embed]\nenabled = false\n[team]\nurl = \"{}\"\nname = \"ana@laptop\"\nshare = {share:?}\n",
        server.url("ana", "team")
    ));
    let push = ana.ok(&["team", "push", "--json"]).json();
    assert_eq!(push["pushed"].as_u64(), Some(2), "{push:#}");
    ben.index();
    ben.ok(&["team", "pull"]);
    let pulled = ben.ok(&["sessions", "--origin", "ana", "--json"]).json();
    let flags = |v: &Value| -> Vec<(String, bool)> {
        let mut out: Vec<(String, bool)> = v["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["id"].as_str().unwrap().to_string(),
                    s["date_approximate"].as_bool().unwrap(),
                )
            })
            .collect();
        out.sort();
        out
    };
    assert_eq!(flags(&pulled), flags(&listed));
    assert!(flags(&pulled).iter().any(|(_, a)| *a), "{pulled:#}");
    assert!(flags(&pulled).iter().any(|(_, a)| !*a), "{pulled:#}");
}
