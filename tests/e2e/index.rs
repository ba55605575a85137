//! `deja index` and the commands over the index: incremental runs, memory
//! that outlives transcripts, forget with tombstones, one writer at a time,
//! crash safety, sessions/show/resume, permissions.

use std::time::Duration;

use serde_json::Value;

use crate::common::{gemini_session, Sandbox};

const HISTORY: &str = "
# aider chat started at 2026-07-17 09:00:00

> Aider v0.86.2  

#### Show me the failing query  

The query misses the tenant predicate, so rows of every tenant come back.

> Applied edit to query.go  

#### Add a test for it  

Added `TestQueryScopesTenant`.
";

const SECOND_SESSION: &str = "
# aider chat started at 2026-07-18 10:00:00

#### Why is the dashboard slow?  

The chart recomputes its series on every render; memoize it.
";

/// A sandbox with one aider project and one Gemini project, embeddings off.
fn sandbox() -> Sandbox {
    let mut sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    let proj = sb.home.join("work/billing");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(proj.join(".aider.chat.history.md"), HISTORY).unwrap();
    sb.write(
        ".config/deja/aider-projects",
        format!("{}\n", proj.to_str().unwrap()),
    );
    let gemini = sb.home.join(".gemini");
    gemini_session(
        &gemini,
        "billing",
        "0f18b3b3-7342-4d89-826c-b78fc1922f6c",
        0,
        4,
        "invoice export",
    );
    sb.env("GEMINI_CLI_HOME", sb.home.clone());
    sb
}

fn ids(v: &Value) -> Vec<String> {
    v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_second_run_with_nothing_changed_parses_nothing() {
    let sb = sandbox();
    let first = sb.index();
    assert_eq!(first["transcripts"]["scanned"], 2, "{first:#}");
    assert_eq!(first["transcripts"]["changed"], 2);
    assert_eq!(first["sessions"]["added"], 2);
    assert_eq!(first["messages"]["added"], 8);
    let before = sb.dump();
    let second = sb.index();
    assert_eq!(second["transcripts"]["scanned"], 2);
    assert_eq!(second["transcripts"]["changed"], 0, "{second:#}");
    assert_eq!(second["sessions"]["added"], 0);
    assert_eq!(second["messages"]["added"], 0);
    assert_eq!(before, sb.dump());

    // Touching a file without changing it re-hashes it but parses nothing.
    let history = sb.home.join("work/billing/.aider.chat.history.md");
    let f = std::fs::File::options().write(true).open(&history).unwrap();
    f.set_modified(std::time::SystemTime::now() + Duration::from_secs(5))
        .unwrap();
    let third = sb.index();
    assert_eq!(third["transcripts"]["changed"], 0, "{third:#}");
    assert_eq!(before, sb.dump());
}

#[test]
fn appending_a_session_adds_only_what_is_new() {
    let sb = sandbox();
    sb.index();
    let history = sb.home.join("work/billing/.aider.chat.history.md");
    let sessions_before = sb.ok(&["sessions", "--json", "--harness", "aider"]).json();
    let mut text = std::fs::read_to_string(&history).unwrap();
    text.push_str(SECOND_SESSION);
    std::fs::write(&history, text).unwrap();
    let run = sb.index();
    assert_eq!(run["transcripts"]["changed"], 1, "{run:#}");
    assert_eq!(run["sessions"]["added"], 1);
    assert_eq!(run["sessions"]["updated"], 0);
    assert_eq!(run["messages"]["added"], 2);
    assert_eq!(run["messages"]["changed"], 0);
    let after = sb.ok(&["sessions", "--json", "--harness", "aider"]).json();
    let old = ids(&sessions_before);
    let new = ids(&after);
    assert_eq!(new.len(), 2);
    assert!(
        new.contains(&old[0]),
        "the first session keeps its id: {old:?} {new:?}"
    );
    // Newest first.
    assert!(new[0].ends_with("20260718T100000"), "{new:?}");
}

#[test]
fn sessions_outlive_their_transcript() {
    let sb = sandbox();
    sb.index();
    let history = sb.home.join("work/billing/.aider.chat.history.md");
    std::fs::remove_file(&history).unwrap();
    let run = sb.index();
    assert_eq!(run["sessions"]["orphaned"], 1, "{run:#}");
    let list = sb.ok(&["sessions", "--json", "--harness", "aider"]).json();
    let s = &list["sessions"][0];
    assert_eq!(s["source_present"], false, "{list:#}");
    let id = s["id"].as_str().unwrap();
    let shown = sb.ok(&["show", id, "--json"]).json();
    assert_eq!(shown["messages"][0]["text"], "Show me the failing query");
    assert_eq!(shown["source_present"], false);
    let text = sb.ok(&["show", id]).stdout;
    assert!(text.contains("gone; the session is kept"), "{text}");
    // Still found by recall.
    let hits = sb.ok(&["recall", "tenant predicate", "--json"]).json();
    assert_eq!(hits["hits"][0]["session_id"], id);

    // The file coming back re-links it without duplicates.
    std::fs::write(&history, HISTORY).unwrap();
    sb.index();
    let list = sb.ok(&["sessions", "--json", "--harness", "aider"]).json();
    assert_eq!(list["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(list["sessions"][0]["source_present"], true);
}

#[test]
fn forget_sticks_across_reindexing() {
    let sb = sandbox();
    sb.index();
    let list = sb.ok(&["sessions", "--json", "--harness", "aider"]).json();
    let id = list["sessions"][0]["id"].as_str().unwrap().to_string();
    sb.ok(&["forget", &id]);
    assert!(ids(&sb.ok(&["sessions", "--json"]).json())
        .iter()
        .all(|s| *s != id));
    let out = sb.run(&["recall", "tenant predicate", "--json", "--harness", "aider"]);
    assert_eq!(
        out.code, 1,
        "forgotten messages must not be found: {}",
        out.stdout
    );
    // Re-indexing (even after the transcript changes) never brings it back.
    let history = sb.home.join("work/billing/.aider.chat.history.md");
    std::fs::write(
        &history,
        format!("{HISTORY}\n#### One more question  \n\nOne more answer.\n"),
    )
    .unwrap();
    let run = sb.index();
    assert_eq!(run["sessions"]["forgotten_skipped"], 1, "{run:#}");
    assert!(ids(&sb.ok(&["sessions", "--json"]).json())
        .iter()
        .all(|s| *s != id));
    let out = sb.run(&["show", &id]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("no session"), "{}", out.stderr);

    // A filter selection asks first; without a terminal it needs --yes.
    let out = sb.run(&["forget", "--harness", "gemini"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("--yes"), "{}", out.stderr);
    assert_eq!(ids(&sb.ok(&["sessions", "--json"]).json()).len(), 1);
    sb.ok(&["forget", "--harness", "gemini", "--yes"]);
    assert!(ids(&sb.ok(&["sessions", "--json"]).json()).is_empty());
    let out = sb.run(&["forget"]);
    assert_eq!(out.code, 2);
}

#[test]
fn one_writer_at_a_time_and_readers_are_not_blocked() {
    let sb = sandbox();
    sb.index();
    // Hold the writer lock as a running index would.
    let lock = std::fs::File::options()
        .read(true)
        .write(true)
        .open(sb.data_dir().join("index.lock"))
        .unwrap();
    lock.try_lock().unwrap();
    let out = sb.run(&["index", "--no-wait"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("another deja is updating the index"),
        "{}",
        out.stderr
    );
    // Readers work meanwhile.
    sb.ok(&["sessions"]);
    sb.ok(&["recall", "tenant"]);
    // A waiting index says so, then gives up after the configured time.
    sb.config("[embed]\nenabled = false\n[index]\nlock_wait_secs = 1\n");
    let out = sb.run(&["index"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("waiting for it to finish"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("gave up after 1 s"), "{}", out.stderr);
    drop(lock);
    sb.ok(&["index"]);
}

#[test]
fn a_failing_transcript_is_reported_and_keeps_what_was_indexed() {
    let sb = sandbox();
    sb.index();
    // The Gemini file turns into something the reader rejects (not JSON at all),
    // while a new good one appears.
    let chats = sb.home.join(".gemini/tmp/billing/chats");
    let bad = std::fs::read_dir(&chats)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::write(
        &bad,
        "version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 12\n",
    )
    .unwrap();
    gemini_session(
        &sb.home.join(".gemini"),
        "billing",
        "5b6234f8-0315-4733-a3be-ee67d6712014",
        5,
        2,
        "refunds",
    );
    let out = sb.ok(&["index", "--json"]);
    let run = out.json();
    assert_eq!(run["sessions"]["added"], 1, "{run:#}");
    // The broken file's earlier session is kept.
    let list = ids(&sb.ok(&["sessions", "--json", "--harness", "gemini"]).json());
    assert_eq!(list.len(), 2, "{list:?}");

    // A transcript that grows past the size limit fails: reported with its
    // path and the reason, counted, skipped, and its sessions kept.
    sb.config("[embed]\nenabled = false\n[index]\nmax_file_bytes = 400\n");
    let history = sb.home.join("work/billing/.aider.chat.history.md");
    std::fs::write(&history, format!("{HISTORY}{SECOND_SESSION}")).unwrap();
    let out = sb.ok(&["index", "--json"]);
    let run = out.json();
    assert_eq!(
        run["transcripts"]["failed"][0]["path"],
        history.to_str().unwrap(),
        "{run:#}"
    );
    assert!(run["transcripts"]["failed"][0]["error"]
        .as_str()
        .unwrap()
        .contains("max_file_bytes"));
    assert!(
        out.stderr
            .contains("skipped; what was indexed before is kept"),
        "{}",
        out.stderr
    );
    let aider = ids(&sb.ok(&["sessions", "--json", "--harness", "aider"]).json());
    assert_eq!(aider.len(), 1);
    let shown = sb.ok(&["show", &aider[0], "--json"]).json();
    assert_eq!(shown["messages"].as_array().unwrap().len(), 4);
    let doctor = sb.run(&["doctor", "--json"]).json();
    let problems = doctor["problems"].to_string();
    assert!(problems.contains("max_file_bytes"), "{problems}");
}

#[test]
fn store_and_folder_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let sb = sandbox();
    sb.index();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&sb.data_dir()), 0o700);
    assert_eq!(mode(&sb.database()), 0o600);
    assert_eq!(mode(&sb.data_dir().join("index.lock")), 0o600);
}

#[test]
fn sessions_show_and_resume() {
    let sb = sandbox();
    sb.index();
    let list = sb.ok(&["sessions", "--json"]).json();
    let sessions = list["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2);
    let aider = sessions.iter().find(|s| s["harness"] == "aider").unwrap();
    assert_eq!(aider["message_count"], 4);
    assert_eq!(aider["first_user_line"], "Show me the failing query");
    assert_eq!(aider["project"]["name"], "billing");
    let gemini = sessions.iter().find(|s| s["harness"] == "gemini").unwrap();
    assert_eq!(gemini["native_id"], "0f18b3b3-7342-4d89-826c-b78fc1922f6c");

    // Filters.
    let only = sb.ok(&["sessions", "--json", "--harness", "gemini"]).json();
    assert_eq!(ids(&only).len(), 1);
    let proj = sb
        .ok(&["sessions", "--json", "--project", "billing"])
        .json();
    assert_eq!(
        ids(&proj).len(),
        2,
        "aider by folder name, gemini by project id"
    );
    let since = sb
        .ok(&["sessions", "--json", "--since", "2026-07-17T08:30:00Z"])
        .json();
    assert_eq!(ids(&since), vec![aider["id"].as_str().unwrap()]);

    // show: messages, then files and commands; a unique prefix is enough.
    let id = aider["id"].as_str().unwrap();
    let shown = sb.ok(&["show", &id[..id.len() - 3], "--json"]).json();
    assert_eq!(shown["id"], id);
    assert_eq!(shown["messages"].as_array().unwrap().len(), 4);
    assert_eq!(shown["messages"][1]["role"], "assistant");
    assert!(shown["files"][0]["path"]
        .as_str()
        .unwrap()
        .ends_with("work/billing/query.go"));
    let text = sb.ok(&["show", id]).stdout;
    let (m, f) = (
        text.find("Add a test for it").unwrap(),
        text.find("query.go").unwrap(),
    );
    assert!(m < f, "messages come before files:\n{text}");
    let out = sb.run(&["show", "zzz"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("no session `zzz`"), "{}", out.stderr);

    // resume: aider refuses and names the flag; Gemini gives the command and directory.
    let out = sb.run(&["resume", id]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("--restore-chat-history"),
        "{}",
        out.stderr
    );
    let gid = gemini["id"].as_str().unwrap();
    let r = sb.ok(&["resume", gid, "--json"]).json();
    assert_eq!(
        r["argv"],
        serde_json::json!(["gemini", "--resume", "0f18b3b3-7342-4d89-826c-b78fc1922f6c"])
    );
    // The project directory of this fixture is unknown: deja says so instead of guessing.
    assert!(r["cwd"].is_null());
    assert!(!r["note"].as_str().unwrap().is_empty());
}

#[test]
fn a_killed_index_is_completed_by_the_next_run() {
    // Enough transcripts that an index run takes a while.
    let mut sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    let gemini = sb.home.join(".gemini");
    for i in 0..120u32 {
        let id = format!("{i:08x}-7342-4d89-826c-b78fc1922f6c");
        gemini_session(
            &gemini,
            &format!("p{}", i % 7),
            &id,
            i % 60,
            30,
            &format!("topic {i}"),
        );
    }
    sb.env("GEMINI_CLI_HOME", sb.home.clone());

    let mut rng = 0x9e3779b97f4a7c15u64;
    let mut killed = 0;
    for _ in 0..8 {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let delay = 30 + rng % 600;
        let mut child = sb.command().args(["index"]).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(delay));
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
            killed += 1;
        }
        child.wait().unwrap();
    }
    assert!(
        killed > 0,
        "no run was killed mid-way; the corpus is too small for this machine"
    );
    sb.ok(&["index"]);
    let after = sb.dump();

    // A clean index of the same files.
    let mut clean = Sandbox::new();
    clean.config("[embed]\nenabled = false\n");
    copy_dir(&gemini, &clean.home.join(".gemini"));
    clean.env("GEMINI_CLI_HOME", clean.home.clone());
    clean.ok(&["index"]);
    let expected = clean
        .dump()
        .replace(clean.home.to_str().unwrap(), sb.home.to_str().unwrap());
    assert_eq!(
        after, expected,
        "the store after kills differs from a clean index"
    );
}

#[test]
fn index_exits_3_when_a_reader_cannot_look_for_transcripts() {
    let sb = sandbox();
    // A setting the aider reader cannot read (its name is right, its value
    // is not): its discovery fails.
    sb.config("[embed]\nenabled = false\n[harness.aider]\ntimezone = 5\n");
    let out = sb.run(&["index", "--json"]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("aider reader could not look for transcripts"),
        "{}",
        out.stderr
    );
    let run = out.json();
    assert_eq!(run["discovery_errors"][0]["harness"], "aider", "{run:#}");
    // The other readers were indexed all the same.
    assert_eq!(run["sessions"]["added"], 1, "{run:#}");
    // Fixed, the same run is a success.
    sb.config("[embed]\nenabled = false\n");
    let out = sb.run(&["index", "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.json()["sessions"]["added"], 1);
}

#[test]
fn index_exits_3_when_the_model_cannot_be_loaded_and_0_when_it_is_not_installed() {
    let (model, runtime) = crate::common::installed_model();
    let sb = sandbox();
    // The model's folder is there, its model file is not a model.
    let broken = sb.home.join("models/broken");
    copy_dir(&model, &broken);
    std::fs::write(broken.join("model.onnx"), b"not an onnx model at all").unwrap();
    sb.config(&format!(
        "[embed]\nmodel_dir = {:?}\nruntime = {:?}\n",
        broken.to_str().unwrap(),
        runtime.to_str().unwrap()
    ));
    let out = sb.run(&["index", "--json"]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.contains("semantic index not updated"),
        "{}",
        out.stderr
    );
    let run = out.json();
    assert!(run["embeddings"]["skipped"].is_string(), "{run:#}");
    // The transcripts were indexed all the same.
    assert_eq!(run["sessions"]["added"], 2, "{run:#}");

    // Not installed at all is a state the README documents, not a failure.
    sb.config(&format!(
        "[embed]\nmodel_dir = {:?}\nruntime = {:?}\n",
        sb.home.join("models/none").to_str().unwrap(),
        runtime.to_str().unwrap()
    ));
    let out = sb.run(&["index", "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("scripts/fetch-model"), "{}", out.stderr);
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// A full disk is the store's failure, not one transcript's: `deja index`
/// stops with exit 2 naming the store and the cause, keeps what was there,
/// and the next run with room completes. The disk is filled by a file-size
/// limit (`ulimit -f`, with SIGXFSZ ignored so writes fail with EFBIG).
#[cfg(unix)]
#[test]
fn a_full_disk_stops_the_index_with_exit_2_and_the_store_stays_consistent() {
    let sb = sandbox();
    sb.index();
    let before = sb.dump();
    // Plenty of new text: far more than the limit below lets the store grow.
    let gemini = sb.home.join(".gemini");
    for i in 0..40u32 {
        gemini_session(
            &gemini,
            "bulk",
            &format!("{i:08x}-2222-4222-8333-444455556666"),
            i % 60,
            60,
            &format!(
                "bulk topic {i} {}",
                "padding words for a larger store ".repeat(20)
            ),
        );
    }
    let largest = ["index.sqlite", "index.sqlite-wal"]
        .iter()
        .filter_map(|f| std::fs::metadata(sb.data_dir().join(f)).ok())
        .map(|m| m.len())
        .max()
        .unwrap();
    // In 512-byte blocks (POSIX sh); a shell counting 1 KiB blocks only allows more.
    let blocks = largest / 512 + 128;
    let deja = crate::common::deja_bin();
    let out = sb
        .command_of(std::path::Path::new("/bin/sh"))
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; ulimit -f {blocks}; exec \"$0\" index"
        ))
        .arg(&deja)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(sb.database().to_str().unwrap()), "{stderr}");
    assert!(
        stderr.contains("full") || stderr.contains("too large") || stderr.contains("I/O"),
        "the cause is not named: {stderr}"
    );
    assert!(
        !stderr.contains("(skipped; what was indexed before is kept)"),
        "reported as a transcript's problem: {stderr}"
    );
    // Consistent: what was indexed is still there, whole: every row of the
    // first run's sessions, messages, files, commands and transcripts (all
    // but the one-column count of full-text matches, which new text raises).
    let after = sb.dump();
    let kept: std::collections::HashSet<&str> = after.lines().collect();
    let rows: Vec<&str> = before.lines().filter(|l| l.contains('|')).collect();
    assert!(
        rows.iter().any(|l| l.contains("invoice export")),
        "the first run's rows are not in the dump:\n{before}"
    );
    for line in rows {
        assert!(kept.contains(line), "lost: {line}");
    }
    // With room again, the next run completes and equals a clean index.
    sb.ok(&["index"]);
    let v = sb.ok(&["sessions", "--json"]).json();
    assert_eq!(
        v["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["project"]["name"] == "bulk" || s.to_string().contains("bulk"))
            .count(),
        40,
        "{v:#}"
    );
}

#[test]
fn aider_histories_are_found_without_configuration() {
    let sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    let aider = |title: &str| {
        format!("\n# aider chat started at 2026-07-20 09:00:00\n\n#### {title}\n\nDone: {title}.\n")
    };
    // A project a Claude Code session worked in, outside every usual place.
    let project = sb.write(
        "clients/acme-portal/.aider.chat.history.md",
        aider("fix the acme login redirect"),
    );
    let project = project.parent().unwrap().to_str().unwrap().to_string();
    let claude_id = "0000c1a0-aaaa-4bbb-8ccc-0000000000aa";
    let line = serde_json::json!({"parentUuid": null, "isSidechain": false, "userType": "external",
        "cwd": project, "sessionId": claude_id, "version": "2.1.97", "type": "user",
        "message": {"role": "user", "content": "look at the portal's login"},
        "uuid": "u1", "timestamp": "2026-07-19T09:00:01.000Z"});
    sb.write(
        &format!(".claude/projects/-clients-acme-portal/{claude_id}.jsonl"),
        format!("{line}\n"),
    );
    // And one in a usual code folder under home.
    sb.write(
        "src/tools/.aider.chat.history.md",
        aider("add the csv exporter"),
    );

    sb.ok(&["index"]);
    let aider_sessions = |sb: &Sandbox| -> Vec<String> {
        let v = sb.ok(&["sessions", "--harness", "aider", "--json"]).json();
        v["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["project"]["dir"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    let first = aider_sessions(&sb);
    assert!(first.iter().any(|d| d.ends_with("/src/tools")), "{first:?}");
    // The next run knows the projects the first one's sessions named.
    sb.ok(&["index"]);
    let next = aider_sessions(&sb);
    assert!(next.contains(&project), "{project} not in {next:?}");
    let doctor = sb.ok(&["doctor", "--json"]).json();
    let aider_reader = doctor["readers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["harness"] == "aider")
        .unwrap()
        .clone();
    let reasons: Vec<&str> = aider_reader["looked_in"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["reason"].as_str())
        .collect();
    assert!(
        reasons.contains(&"a project of another harness's session"),
        "{reasons:?}"
    );
    assert!(reasons.contains(&"code folders under home"), "{reasons:?}");
}

/// An aider history whose one reply is long (many text windows for the
/// model), in `work/long` of `sb`, listed for the aider reader.
fn long_reply_history(sb: &Sandbox) {
    let reply: String = (0..120)
        .map(|i| format!("Step {i}: the token bucket refills at the configured rate. "))
        .collect();
    let history = format!(
        "\n# aider chat started at 2026-07-17 09:00:00\n\n#### Why does the rate limiter drop bursts?  \n\n{reply}\n\n#### And the retry storm after a deploy?  \n\nClients retry in lockstep; add jitter to the backoff.\n"
    );
    sb.write("work/long/.aider.chat.history.md", history);
    sb.write(
        ".config/deja/aider-projects",
        format!("{}\n", sb.home.join("work/long").display()),
    );
}

/// (position, ordinal, text hash) of every embedding unit.
fn unit_rows(sb: &Sandbox) -> Vec<(i64, i64, String)> {
    let conn = rusqlite::Connection::open(sb.database()).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT m.position, c.ordinal, c.text_hash FROM chunks c
             JOIN messages m ON m.id = c.message ORDER BY 1, 2",
        )
        .unwrap();
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap();
    rows.map(|r| r.unwrap()).collect()
}

/// The hits of `deja recall --json QUERY`: (message index, score).
fn hits(sb: &Sandbox, query: &str) -> Vec<(i64, f64)> {
    let v = sb.ok(&["recall", "--json", query]).json();
    v["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["message_index"].as_i64().unwrap(),
                h["score"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn long_messages_are_embedded_in_two_passes_that_end_as_one() {
    let two = Sandbox::new();
    two.config_with_model("[mcp]\nindex = false\n");
    long_reply_history(&two);
    let one = Sandbox::new();
    one.config_with_model("first_windows = 0\n[mcp]\nindex = false\n");
    long_reply_history(&one);

    let split = two.ok(&["index", "--json"]);
    let v = split.json();
    assert_eq!(v["embeddings"]["messages"], 4, "{v:#}");
    assert_eq!(v["embeddings"]["completed"], 1, "{v:#}");
    assert!(
        v["embeddings"]["searchable_after_seconds"].is_f64(),
        "{v:#}"
    );
    assert!(
        split
            .stderr
            .contains("every message was searchable by meaning after")
            && split
                .stderr
                .contains("the rest of the windows of 1 long message followed"),
        "{}",
        split.stderr
    );
    let whole = one.index();
    assert_eq!(whole["embeddings"]["completed"], 0, "{whole:#}");
    assert!(whole["embeddings"]["searchable_after_seconds"].is_null());
    assert_eq!(whole["embeddings"]["units"], v["embeddings"]["units"]);

    // The same units, and so the same answers.
    let units = unit_rows(&two);
    assert!(units.iter().filter(|u| u.0 == 1).count() > 4, "{units:?}");
    assert_eq!(units, unit_rows(&one));
    for query in ["why are bursts dropped", "token bucket refill", "jitter"] {
        let (a, b) = (hits(&two, query), hits(&one, query));
        assert_eq!(a.len(), b.len(), "{query}: {a:?} {b:?}");
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.0, y.0, "{query}: {a:?} {b:?}");
            assert!((x.1 - y.1).abs() < 1e-6, "{query}: {a:?} {b:?}");
        }
    }
    let doctor = two.ok(&["doctor", "--json"]).json();
    assert_eq!(
        doctor["store"]["messages_embedded_in_part"], 0,
        "{doctor:#}"
    );
    // Nothing left: the next run loads no model and embeds nothing.
    let again = two.index();
    assert_eq!(again["embeddings"]["units"], 0, "{again:#}");
}
