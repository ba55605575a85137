//! The smaller commands: `config`, `doctor`, `deja aider`, and errors that
//! name the file and key.

use crate::common::{set_mode, Sandbox};

#[test]
fn config_prints_values_and_where_they_come_from() {
    let mut sb = Sandbox::new();
    sb.config("[recall]\nlimit = 3\n");
    sb.env("DEJA_HOME", sb.home.join("data"));
    let out = sb.ok(&["config"]);
    let path = sb.config_path();
    assert!(
        out.stdout
            .contains(&format!("limit = 3  # {}", path.display())),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("mode = \"hybrid\"  # default"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("# $DEJA_HOME"), "{}", out.stdout);
    // Empty defaults say what they resolve to here; every loaded reader has a section.
    let models = sb.home.join("data/models/all-MiniLM-L6-v2-int8");
    assert!(
        out.stdout.contains(&format!(
            "model_dir = \"\"  # default, here {}",
            models.display()
        )),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("name = \"\"  # default, here "),
        "{}",
        out.stdout
    );
    for h in ["aider", "gemini", "claude", "codex", "qwen"] {
        assert!(
            out.stdout.contains(&format!("[harness.{h}]")),
            "{}",
            out.stdout
        );
    }
    let default = sb.ok(&["config", "--default"]).stdout;
    assert!(default.contains("max_file_bytes = 268435456"));
    // DEJA_HOME moves the store.
    sb.ok(&["index"]);
    assert!(sb.home.join("data/index.sqlite").exists());
}

#[test]
fn unknown_config_keys_name_the_key_and_the_file() {
    let sb = Sandbox::new();
    sb.config("[recall]\nlimt = 3\n");
    let out = sb.run(&["sessions"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("limt") && out.stderr.contains(sb.config_path().to_str().unwrap()),
        "{}",
        out.stderr
    );
    // Plugin sections are checked against what the plugin accepts.
    sb.config("[harness.aider]\ntimezon = \"UTC\"\n");
    let out = sb.run(&["index"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("harness.aider.timezon") && out.stderr.contains("`timezone`"),
        "{}",
        out.stderr
    );
    // DEJA_CONFIG points elsewhere.
    let mut sb = Sandbox::new();
    let other = sb.write("elsewhere.toml", "[recall]\nmode = \"fuzzy\"\n");
    sb.env("DEJA_CONFIG", &other);
    let out = sb.run(&["sessions"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("elsewhere.toml") && out.stderr.contains("fuzzy"),
        "{}",
        out.stderr
    );
}

#[test]
fn doctor_reports_locations_readers_and_problems_with_fixes() {
    let sb = Sandbox::new();
    sb.write(
        "p/.aider.chat.history.md",
        "\n# aider chat started at 2026-07-17 09:00:00\n\n#### hi  \n\nhello\n",
    );
    sb.write(
        ".config/deja/aider-projects",
        format!("{}\n", sb.home.join("p").display()),
    );
    // Before any index, without a model.
    let out = sb.run(&["doctor", "--json"]);
    assert_eq!(out.code, 1, "problems make doctor exit 1");
    let d = out.json();
    let problems = d["problems"].to_string();
    assert!(problems.contains("deja index"), "{problems}");
    assert!(problems.contains("fetch-model"), "{problems}");
    let aider = d["readers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["harness"] == "aider")
        .unwrap();
    assert_eq!(aider["transcripts"], 1);
    assert!(aider["looked_in"].to_string().contains("aider-projects"));
    let plugins = d["plugins"].as_array().unwrap();
    assert!(plugins.len() >= 5, "the bundled readers: {plugins:?}");
    assert!(
        plugins.iter().all(|p| p["status"] == "loaded"),
        "{plugins:?}"
    );

    // Indexed without a model: the messages wait for an installed model,
    // which `deja index` alone cannot bring; the fix names the installer.
    sb.ok(&["index"]);
    let d = sb.run(&["doctor", "--json"]).json();
    let waiting = d["problems"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["problem"].as_str().unwrap().contains("no embedding yet"))
        .unwrap_or_else(|| panic!("{:#}", d["problems"]));
    let fix = waiting["fix"].as_str().unwrap();
    assert!(!fix.contains("run `deja index`"), "{fix}");
    let script = crate::common::repo().join("scripts/fetch-model");
    let script = script.canonicalize().unwrap();
    assert!(
        fix.contains(&format!("run {} first", script.display())),
        "{fix}"
    );

    // With the model and an index: no problems.
    sb.config_with_model("");
    sb.ok(&["index"]);
    let out = sb.run(&["doctor", "--json"]);
    let d = out.json();
    assert_eq!(out.code, 0, "{:#}", d["problems"]);
    assert_eq!(d["store"]["sessions"], 1);
    assert_eq!(d["model"]["status"], "ok");
    assert_eq!(d["model"]["dims"], 384);
    assert_eq!(d["store"]["vectors"]["in_sync"], true);
    let text = sb.ok(&["doctor"]).stdout;
    assert!(text.contains("no problems found"), "{text}");
}

#[test]
fn deja_aider_records_the_project_and_runs_aider() {
    let mut sb = Sandbox::new();
    // A stand-in for aider that shows what it was given.
    let bin = sb.home.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("aider");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho \"aider ran in $(pwd) with: $*\"\nexit 3\n",
    )
    .unwrap();
    set_mode(&fake, 0o755);
    let repo = sb.home.join("code/app");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("src")).unwrap();
    sb.env("PATH", format!("{}:/usr/bin:/bin", bin.display()));

    let out = sb
        .command()
        .current_dir(repo.join("src"))
        .args(["aider", "--model", "sonnet", "--yes"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "aider's exit status passes through"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    // deja passes the project's digest first (see wiring.rs), then ARGS unchanged.
    assert!(stdout.contains(" --model sonnet --yes"), "{stdout}");
    let projects = std::fs::read_to_string(sb.home.join(".config/deja/aider-projects")).unwrap();
    assert_eq!(projects, format!("{}\n", repo.display()));
    // Again: no duplicate line.
    sb.command()
        .current_dir(&repo)
        .arg("aider")
        .output()
        .unwrap();
    let projects = std::fs::read_to_string(sb.home.join(".config/deja/aider-projects")).unwrap();
    assert_eq!(projects.lines().count(), 1);

    // Without aider on PATH: a clear error, nothing recorded.
    sb.env("PATH", "/nonexistent");
    let out = sb
        .command()
        .current_dir(sb.home.join("code"))
        .arg("aider")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("`aider` was not found on PATH"), "{stderr}");
}

#[test]
fn deja_aider_indexes_the_session_that_just_ended_and_ends_like_aider() {
    let mut sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    // A stand-in for aider that writes a chat history in the project, as aider does.
    let bin = sb.home.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("aider");
    std::fs::write(
        &fake,
        "#!/bin/sh\nprintf '\\n# aider chat started at 2026-07-17 09:00:00\\n\\n#### why is the pangolin queue stuck?  \\n\\nThe pangolin queue lost its consumer.\\n' >> .aider.chat.history.md\nif [ -n \"$FAKE_SIGNAL\" ]; then kill -$FAKE_SIGNAL $$; fi\nexit 4\n",
    )
    .unwrap();
    set_mode(&fake, 0o755);
    let repo = sb.home.join("code/app");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    sb.env("PATH", format!("{}:/usr/bin:/bin", bin.display()));
    let out = sb
        .command()
        .current_dir(&repo)
        .arg("aider")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "aider's exit status: {stderr}");
    assert!(
        stderr.contains("indexed 2 new messages from this session"),
        "{stderr}"
    );
    // Recallable at once, without `deja index` (and without the refresh pass).
    let v = sb
        .ok(&["recall", "--no-refresh", "--json", "pangolin queue"])
        .json();
    assert!(
        v["hits"][0]["text"].as_str().unwrap().contains("pangolin"),
        "{v:#}"
    );
    // aider ended by a signal: deja ends by the same signal.
    sb.env("FAKE_SIGNAL", "TERM");
    let out = sb
        .command()
        .current_dir(&repo)
        .arg("aider")
        .output()
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(15), "{:?}", out.status);
}

#[test]
fn sessions_line_up_show_whole_project_names_and_short_hash_ids() {
    let mut sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    let hash = "9f2c4e1a7b3d5f60a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718";
    let gemini = sb.home.join(".gemini");
    crate::common::gemini_session(
        &gemini,
        hash,
        "0f18b3b3-7342-4d89-826c-b78fc1922f6c",
        0,
        2,
        "hash folders",
    );
    sb.env("GEMINI_CLI_HOME", sb.home.clone());
    let long = "a-rather-long-project-name-one";
    for name in [long, "a-rather-long-project-name-two"] {
        sb.write(
            &format!("work/{name}/.aider.chat.history.md"),
            "\n# aider chat started at 2026-07-17 09:00:00\n\n#### hello there  \n\nHi.\n",
        );
    }
    sb.write(
        ".config/deja/aider-projects",
        format!(
            "{}\n{}\n",
            sb.home.join(format!("work/{long}")).display(),
            sb.home
                .join("work/a-rather-long-project-name-two")
                .display()
        ),
    );
    sb.ok(&["index"]);
    let out = sb.ok(&["sessions"]).stdout;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    // Whole names when piped: the two projects can be told apart.
    assert!(
        out.contains(long) && out.contains("a-rather-long-project-name-two"),
        "{out}"
    );
    // The hash folder shows as its first 12 hex digits, which --project accepts.
    assert!(out.contains(&format!(" {} ", &hash[..12])), "{out}");
    assert!(!out.contains(hash), "{out}");
    // Columns line up across harnesses.
    let at: Vec<usize> = lines.iter().map(|l| l.find(" msg").unwrap()).collect();
    assert!(at.iter().all(|a| *a == at[0]), "{out}");
    let v = sb
        .ok(&["sessions", "--json", "--project", &hash[..12]])
        .json();
    assert_eq!(v["sessions"].as_array().unwrap().len(), 1, "{v:#}");
    assert_eq!(v["sessions"][0]["harness"], "gemini");
}

#[test]
fn doctor_reports_messages_that_have_no_vectors_yet() {
    let mut sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    crate::common::gemini_session(
        &sb.home.join(".gemini"),
        "p",
        "0f18b3b3-7342-4d89-826c-b78fc1922f6c",
        0,
        3,
        "vectors",
    );
    sb.env("GEMINI_CLI_HOME", sb.home.clone());
    sb.ok(&["index"]);
    // Embeddings on now: the three messages indexed without them are waiting.
    sb.config_with_model("");
    let out = sb.run(&["doctor", "--json"]);
    let d = out.json();
    assert_eq!(d["store"]["messages_without_vectors"], 3, "{d:#}");
    assert!(
        d["problems"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["problem"]
                .as_str()
                .unwrap()
                .contains("3 messages have no embedding yet")),
        "{d:#}"
    );
    assert_eq!(out.code, 1);
    sb.ok(&["index"]);
    let d = sb.ok(&["doctor", "--json"]).json();
    assert_eq!(d["store"]["messages_without_vectors"], 0, "{d:#}");
}

#[test]
fn a_recall_refused_for_its_arguments_reads_no_transcript_first() {
    let mut sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    let gemini = sb.home.join(".gemini");
    crate::common::gemini_session(
        &gemini,
        &"0".repeat(64),
        "1a2b3c4d-7342-4d89-826c-b78fc1922f6c",
        0,
        2,
        "first topic",
    );
    sb.env("GEMINI_CLI_HOME", sb.home.clone());
    sb.ok(&["index"]);
    let before = sb.dump();
    // A new transcript the freshness pass would read.
    crate::common::gemini_session(
        &gemini,
        &"0".repeat(64),
        "5e6f7a8b-7342-4d89-826c-b78fc1922f6c",
        5,
        2,
        "second topic",
    );
    for args in [
        vec!["recall", "  "],
        vec!["recall", "topic", "--since", "not-a-date"],
    ] {
        let out = sb.run(&args);
        assert_eq!(out.code, 2, "deja {args:?}: {}", out.stderr);
        assert_eq!(sb.dump(), before, "deja {args:?} wrote to the store");
    }
    // A valid recall does read it first.
    let out = sb.ok(&["recall", "second topic", "--json"]);
    assert_ne!(sb.dump(), before, "{}", out.stdout);
}

#[test]
fn resume_says_when_the_sessions_directory_is_not_on_this_machine() {
    let mut sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    sb.env(
        "DEJA_CLAUDE_ROOT",
        crate::common::fixtures().join("golden/claude/01-session"),
    );
    sb.ok(&["index"]);
    let out = sb.ok(&["resume", "00000001-aaaa-4bbb-8ccc-000000000001"]);
    assert!(
        out.stdout
            .starts_with("cd /home/dev/app && claude --resume"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr
            .contains("the session's directory `/home/dev/app` does not exist on this machine"),
        "{}",
        out.stderr
    );
}

#[test]
fn recall_in_an_empty_index_says_so_and_where_to_look() {
    let sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    sb.ok(&["index"]);
    let out = sb.run(&["recall", "that tenant predicate bug"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    assert!(
        out.stderr.contains("the index holds no session yet"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("deja doctor"), "{}", out.stderr);
    // Not a short list of harnesses: every reader the host loaded is meant.
    assert!(
        out.stderr
            .contains("reads the transcripts of every harness `deja plugins` lists"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("vector index"), "{}", out.stderr);
}

#[test]
fn the_embedding_summary_adds_up_when_two_messages_share_a_text() {
    let mut sb = Sandbox::new();
    sb.config_with_model("");
    let gemini = sb.home.join(".gemini");
    for (n, id) in [
        "3a4b5c6d-7342-4d89-826c-b78fc1922f6c",
        "7e8f9a0b-7342-4d89-826c-b78fc1922f6c",
    ]
    .iter()
    .enumerate()
    {
        crate::common::gemini_session(&gemini, &"0".repeat(64), id, n as u32 * 5, 1, "same words");
    }
    sb.env("GEMINI_CLI_HOME", sb.home.clone());
    let out = sb.ok(&["index"]);
    assert!(
        out.stderr.contains(
            "embedded 2 messages as 2 text windows (1 new to the model, 0 from the cache, 1 repeat of a text embedded once in this run)"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn show_names_a_sessions_subagents() {
    let mut sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    sb.env(
        "DEJA_CLAUDE_ROOT",
        crate::common::fixtures().join("golden/claude/13-subagents"),
    );
    sb.ok(&["index"]);
    let list = sb.ok(&["sessions", "--json"]).json();
    let rows = list["sessions"].as_array().unwrap();
    let child = rows
        .iter()
        .find(|s| s["id"].as_str().is_some_and(|id| id.contains("-agent-")))
        .expect("a subagent session");
    let child_id = child["id"].as_str().unwrap();
    let parent_id = &child_id[..child_id.find("-agent-").unwrap()];
    let shown = sb.ok(&["show", parent_id]).stdout;
    let line = shown
        .lines()
        .find(|l| l.starts_with("subagents "))
        .unwrap_or_else(|| panic!("{shown}"));
    assert!(line.contains(child_id), "{line}");
    assert_eq!(child["parent_id"], parent_id);

    // Listed and found as sub-agent work, never as a session the person started.
    let text = sb.ok(&["sessions"]).stdout;
    let line_of = |id: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{id} ")))
            .unwrap_or_else(|| panic!("{id} in\n{text}"))
            .to_string()
    };
    assert!(
        line_of(child_id).contains(&format!("(sub-agent of {parent_id})")),
        "{text}"
    );
    assert!(!line_of(parent_id).contains("sub-agent"), "{text}");
    let found = sb
        .ok(&["recall", "usual places", "--mode", "lexical", "--json"])
        .json();
    let hit = found["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| {
            h["session_id"]
                .as_str()
                .is_some_and(|id| id.starts_with(&format!("{parent_id}-agent-")))
        })
        .unwrap_or_else(|| panic!("{found}"));
    assert_eq!(hit["parent_id"], parent_id);
    let out = sb
        .ok(&["recall", "usual places", "--mode", "lexical"])
        .stdout;
    assert!(out.contains(&format!("sub-agent of {parent_id}")), "{out}");

    // Agents are told the same through MCP.
    let answer = crate::cloned::mcp_result(
        &sb,
        "recall",
        serde_json::json!({"query": "usual places", "limit": 10}),
    );
    let hits = answer["structuredContent"]["hits"].as_array().unwrap();
    let child_hit = hits
        .iter()
        .find(|h| h["session_id"] == hit["session_id"])
        .unwrap_or_else(|| panic!("{answer:#}"));
    assert_eq!(child_hit["parent_id"], parent_id);
    for h in hits.iter().filter(|h| h["session_id"] == parent_id) {
        assert!(h["parent_id"].is_null(), "{h:#}");
    }
    let text = answer["content"][0]["text"].as_str().unwrap();
    let child = hit["session_id"].as_str().unwrap();
    let line = text
        .lines()
        .find(|l| l.contains(&format!("session {child} ")))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains(&format!("sub-agent of {parent_id}")),
        "{line}"
    );
}
