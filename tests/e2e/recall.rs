//! `deja recall`: lexical answers without a model (with one warning), the
//! JSON shape, filters, exit statuses, and semantic recall with the real model.

use serde_json::Value;

use crate::common::{fixtures, gemini_session, Sandbox};

const BILLING: &str = "
# aider chat started at 2026-07-17 09:00:00

#### The monthly report shows invoices of other customers  

The query misses the tenant predicate: `WHERE tenant_id = $1` was dropped in
the join, so every tenant's rows come back. I added it and a test,
`TestInvoicesScopedToTenant`, that fails without it (ErrInvoiceScopeLeak).

#### thanks  

You're welcome.
";

const DASHBOARD: &str = "
# aider chat started at 2026-08-02 15:00:00

#### The chart flickers and the tab uses a lot of CPU  

`useChartSeries` rebuilds its data on every render. Wrapping the series in
`useMemo` keyed on the filters stops the re-renders.
";

fn sandbox() -> Sandbox {
    let sb = Sandbox::new();
    for (dir, text) in [("work/billing", BILLING), ("work/dashboard", DASHBOARD)] {
        sb.write(&format!("{dir}/.aider.chat.history.md"), text);
    }
    sb.write(
        ".config/deja/aider-projects",
        format!(
            "{}\n{}\n",
            sb.home.join("work/billing").display(),
            sb.home.join("work/dashboard").display()
        ),
    );
    gemini_session(
        &sb.home.join(".gemini"),
        "billing",
        "0f18b3b3-7342-4d89-826c-b78fc1922f6c",
        0,
        4,
        "refund export",
    );
    sb
}

fn with_gemini(mut sb: Sandbox) -> Sandbox {
    sb.env("GEMINI_CLI_HOME", sb.home.clone());
    sb
}

fn first_session(v: &Value) -> String {
    v["hits"][0]["session_id"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn without_a_model_recall_answers_lexically_with_one_warning() {
    let sb = with_gemini(sandbox());
    // No model installed in this HOME: index and recall still work.
    let out = sb.ok(&["index"]);
    assert!(out.stderr.contains("scripts/fetch-model"), "{}", out.stderr);
    let out = sb.ok(&["recall", "ErrInvoiceScopeLeak", "--json"]);
    let v = out.json();
    assert_eq!(v["mode"], "lexical");
    assert!(v["hits"][0]["text"]
        .as_str()
        .unwrap()
        .contains("tenant predicate"));
    let warnings: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("warning:"))
        .collect();
    assert_eq!(warnings.len(), 1, "{}", out.stderr);
    assert!(
        warnings[0].contains("answering lexically") && warnings[0].contains("fetch-model"),
        "{}",
        warnings[0]
    );
}

#[test]
fn json_shape_and_exit_statuses() {
    let sb = with_gemini(sandbox());
    sb.ok(&["index"]);
    let v = sb
        .ok(&["recall", "tenant predicate", "--mode", "lexical", "--json"])
        .json();
    assert_eq!(v["query"], "tenant predicate");
    assert_eq!(v["mode"], "lexical");
    let hit = &v["hits"][0];
    for key in [
        "rank",
        "score",
        "session_id",
        "harness",
        "project",
        "started_at",
        "message_id",
        "message_index",
        "role",
        "timestamp",
        "text",
        "source_path",
    ] {
        assert!(hit.get(key).is_some(), "hit lacks {key}: {hit:#}");
    }
    assert_eq!(hit["rank"], 1);
    assert_eq!(hit["harness"], "aider");
    assert_eq!(hit["role"], "assistant");
    assert_eq!(hit["message_index"], 1);
    assert_eq!(hit["started_at"], "2026-07-17T09:00:00Z");
    assert!(hit["message_id"].as_str().unwrap().ends_with("#1"));
    assert!(hit["source_path"]
        .as_str()
        .unwrap()
        .ends_with("billing/.aider.chat.history.md"));
    // Gemini hits carry the harness's own message id.
    let g = sb
        .ok(&["recall", "refund export", "--json", "--harness", "gemini"])
        .json();
    assert!(
        g["hits"][0]["message_id"]
            .as_str()
            .unwrap()
            .starts_with("0f18b3b3"),
        "{g:#}"
    );

    // No hits: exit 1. Syntax-looking input is not an error.
    let out = sb.run(&["recall", "zyxwvut", "--json"]);
    assert_eq!(out.code, 1);
    assert_eq!(out.json()["hits"].as_array().unwrap().len(), 0);
    for q in [
        "\"unbalanced",
        "NEAR(a b",
        "tenant*",
        "a:b",
        "(",
        "-x",
        "AND OR NOT",
    ] {
        let out = sb.run(&["recall", "--mode", "lexical", "--", q]);
        assert!(
            out.code == 0 || out.code == 1,
            "query {q:?} failed: {}",
            out.stderr
        );
    }
    // Errors: exit 2.
    let out = sb.run(&["recall", "x", "--since", "someday"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("--since"), "{}", out.stderr);
}

#[test]
fn filters_narrow_the_results() {
    let sb = with_gemini(sandbox());
    sb.ok(&["index"]);
    let q = ["recall", "--mode", "lexical", "--json"];
    let all = sb.ok(&[&q[..], &["the", "-n", "20"]].concat()).json();
    let harnesses = |v: &Value| -> Vec<String> {
        v["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["harness"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(
        harnesses(&all).contains(&"gemini".to_string())
            && harnesses(&all).contains(&"aider".to_string())
    );
    let only = sb
        .ok(&[&q[..], &["the", "--harness", "gemini"]].concat())
        .json();
    assert!(harnesses(&only).iter().all(|h| h == "gemini"), "{only:#}");
    let proj = sb
        .ok(&[&q[..], &["the", "--project", "dashboard"]].concat())
        .json();
    assert!(!proj["hits"].as_array().unwrap().is_empty());
    assert!(
        proj["hits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["project"]["name"] == "dashboard"),
        "{proj:#}"
    );
    let by_dir = sb
        .ok(&[
            &q[..],
            &[
                "the",
                "--project",
                sb.home.join("work/dashboard").to_str().unwrap(),
            ],
        ]
        .concat())
        .json();
    assert_eq!(
        by_dir["hits"].as_array().unwrap().len(),
        proj["hits"].as_array().unwrap().len()
    );
    let late = sb
        .ok(&[&q[..], &["the", "--since", "2026-08-01"]].concat())
        .json();
    assert!(
        late["hits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["started_at"].as_str().unwrap() >= "2026-08-01"),
        "{late:#}"
    );
    let early = sb
        .ok(&[&q[..], &["the", "--until", "2026-08-01"]].concat())
        .json();
    assert!(early["hits"]
        .as_array()
        .unwrap()
        .iter()
        .all(|h| h["started_at"].as_str().unwrap() < "2026-08-01"));
    let users = sb.ok(&[&q[..], &["the", "--role", "user"]].concat()).json();
    assert!(users["hits"]
        .as_array()
        .unwrap()
        .iter()
        .all(|h| h["role"] == "user"));
    let limited = sb.ok(&[&q[..], &["the", "-n", "2"]].concat()).json();
    assert_eq!(limited["hits"].as_array().unwrap().len(), 2);
}

#[test]
fn text_output_names_session_project_and_role() {
    let sb = with_gemini(sandbox());
    sb.ok(&["index"]);
    let out = sb.ok(&["recall", "--mode", "lexical", "useMemo"]);
    let mut lines = out.stdout.lines();
    let first = lines.next().unwrap();
    assert!(first.starts_with(" 1. aider-"), "{first}");
    assert!(first.contains("aider · dashboard ·"), "{first}");
    let message = lines.next().unwrap();
    assert!(
        message.starts_with("    #")
            && message.contains(" assistant ")
            && message.contains("useMemo"),
        "{message}"
    );
    // NO_COLOR is set by the harness: no escape codes.
    assert!(!out.stdout.contains('\x1b'));
}

#[test]
fn paraphrases_find_the_right_session_with_the_real_model() {
    let sb = with_gemini(sandbox());
    sb.config_with_model("");
    let out = sb.ok(&["index"]);
    assert!(out.stderr.contains("embedded"), "{}", out.stderr);
    let billing = sb
        .ok(&[
            "sessions",
            "--json",
            "--project",
            "billing",
            "--harness",
            "aider",
        ])
        .json();
    let billing_id = billing["sessions"][0]["id"].as_str().unwrap().to_string();
    let dashboard = sb
        .ok(&["sessions", "--json", "--project", "dashboard"])
        .json();
    let dashboard_id = dashboard["sessions"][0]["id"].as_str().unwrap().to_string();
    // No content word of these queries appears in the target session.
    for (query, expected) in [
        (
            "client records leaking into someone else's account statement",
            &billing_id,
        ),
        (
            "graph redraws constantly and burns processor time in the browser",
            &dashboard_id,
        ),
    ] {
        for mode in ["semantic", "hybrid"] {
            let v = sb.ok(&["recall", "--mode", mode, "--json", query]).json();
            assert_eq!(v["mode"], mode);
            assert_eq!(&first_session(&v), expected, "{mode} `{query}`:\n{v:#}");
        }
        // Lexically they share no word with their target.
        let lex = sb.run(&["recall", "--mode", "lexical", "--json", query]);
        let lex = lex.json();
        assert_ne!(
            &first_session(&lex),
            expected,
            "lexical should not find `{query}`"
        );
    }
    // A rare identifier is found lexically, and in hybrid mode too.
    for mode in ["lexical", "hybrid"] {
        let v = sb
            .ok(&["recall", "--mode", mode, "--json", "ErrInvoiceScopeLeak"])
            .json();
        assert_eq!(first_session(&v), billing_id, "{mode}");
    }
    // Filters apply to semantic results as well. The one Gemini session is
    // about something else (below the relevance floor), so the floor is off
    // here: this checks the filter, not relevance.
    sb.config_with_model("[recall]\nmin_similarity = 0\n");
    let v = sb
        .ok(&[
            "recall",
            "--mode",
            "semantic",
            "--json",
            "--harness",
            "gemini",
            "client records leaking into someone else's account",
        ])
        .json();
    let hits = v["hits"].as_array().unwrap();
    assert!(!hits.is_empty(), "{v:#}");
    assert!(hits.iter().all(|h| h["harness"] == "gemini"));
}

#[test]
fn per_session_caps_hits_of_one_session_and_counts_the_rest() {
    let sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    let mut history = String::from("\n# aider chat started at 2026-07-17 09:00:00\n\n");
    for i in 0..4 {
        history.push_str(&format!(
            "#### the quokka cache expired again, attempt {i}  \n\nThe quokka cache entry expired because its TTL was {i} minutes.\n\n"
        ));
    }
    let other = "\n# aider chat started at 2026-08-01 10:00:00\n\n#### why does the quokka cache expire so soon?  \n\nIts TTL is short.\n";
    sb.write("work/a/.aider.chat.history.md", &history);
    sb.write("work/b/.aider.chat.history.md", other);
    sb.write(
        ".config/deja/aider-projects",
        format!(
            "{}\n{}\n",
            sb.home.join("work/a").display(),
            sb.home.join("work/b").display()
        ),
    );
    sb.ok(&["index"]);
    let sessions = |v: &Value| -> Vec<String> {
        v["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["session_id"].as_str().unwrap().to_string())
            .collect()
    };
    let all = sb
        .ok(&[
            "recall",
            "--json",
            "--mode",
            "lexical",
            "-n",
            "5",
            "--per-session",
            "0",
            "quokka cache expired",
        ])
        .json();
    let ids = sessions(&all);
    assert!(
        ids.len() > 2 && ids.iter().filter(|s| **s == ids[0]).count() > 2,
        "without a cap one session fills the list: {ids:?}"
    );
    // By default (`recall.per_session` = 2) a session shows at most two.
    let default = sb
        .ok(&[
            "recall",
            "--json",
            "--mode",
            "lexical",
            "-n",
            "5",
            "quokka cache expired",
        ])
        .json();
    let ids = sessions(&default);
    assert_eq!(
        ids.len(),
        3,
        "two of the first session, one of the other: {default:#}"
    );
    let most = ids
        .iter()
        .map(|id| ids.iter().filter(|s| *s == id).count())
        .max();
    assert_eq!(most, Some(2), "{ids:?}");
    let capped = sb
        .ok(&[
            "recall",
            "--json",
            "--mode",
            "lexical",
            "-n",
            "5",
            "--per-session",
            "1",
            "quokka cache expired",
        ])
        .json();
    let ids = sessions(&capped);
    let mut distinct = ids.clone();
    distinct.dedup();
    assert_eq!(
        ids.len(),
        2,
        "one hit per session, two sessions: {capped:#}"
    );
    assert_eq!(distinct.len(), ids.len(), "{ids:?}");
    let more: u64 = capped["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["more_in_session"].as_u64().unwrap())
        .sum();
    assert!(
        more >= 3,
        "the other messages of the first session are counted: {capped:#}"
    );
    let text = sb
        .ok(&[
            "recall",
            "--mode",
            "lexical",
            "--per-session",
            "1",
            "quokka cache expired",
        ])
        .stdout;
    assert!(
        text.contains("more matching messages in this session"),
        "{text}"
    );
    // Text output: one line per session, its messages below it.
    let text = sb
        .ok(&["recall", "--mode", "lexical", "quokka cache expired"])
        .stdout;
    let heads: Vec<&str> = text.lines().filter(|l| !l.starts_with("    ")).collect();
    assert_eq!(heads.len(), 2, "{text}");
    assert!(
        heads[0].starts_with(" 1. aider-") && heads[1].starts_with(" 2. aider-"),
        "{text}"
    );
    let messages = text
        .lines()
        .filter(|l| l.trim_start().starts_with('#'))
        .count();
    assert_eq!(messages, 3, "two of one session, one of the other: {text}");
    assert!(
        text.contains("more matching messages in this session: deja show aider-"),
        "{text}"
    );
    let bad = sb.run(&["recall", "--per-session", "1001", "quokka"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
}

/// A store whose semantic and lexical halves can be broken one at a time.
fn two_halves() -> Sandbox {
    let mut sb = Sandbox::new();
    sb.config_with_model("");
    let gemini = sb.home.join(".gemini");
    for (i, topic) in ["tenant scoping", "cache eviction", "retry backoff"]
        .iter()
        .enumerate()
    {
        gemini_session(
            &gemini,
            "halves",
            &format!("{i:08x}-3333-4222-8333-444455556666"),
            i as u32 * 5,
            4,
            topic,
        );
    }
    sb.env("GEMINI_CLI_HOME", sb.home.clone());
    sb.ok(&["index"]);
    sb
}

fn sql(sb: &Sandbox, statement: &str) {
    let conn = rusqlite::Connection::open(sb.database()).unwrap();
    // The full-text triggers segment text through deja's SQL function.
    deja_store::segment::register(&conn).unwrap();
    conn.execute_batch(statement).unwrap();
}

#[test]
fn a_failing_semantic_half_is_a_warning_and_the_lexical_half_answers() {
    let sb = two_halves();
    // The vector file is gone and the embedding table cannot be read.
    std::fs::remove_file(sb.data_dir().join("vectors.usearch")).unwrap();
    sql(&sb, "UPDATE embeddings SET vector = 'not a vector';");
    let out = sb.run(&["recall", "--json", "retry backoff"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v = out.json();
    assert_eq!(v["mode"], "lexical", "{v:#}");
    assert_eq!(v["missing_half"], "semantic", "{v:#}");
    let warnings = v["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("the semantic search failed")),
        "{v:#}"
    );
    assert!(
        out.stderr.contains("the semantic search failed"),
        "{}",
        out.stderr
    );
    let hits = v["hits"].as_array().unwrap();
    assert!(!hits.is_empty(), "{v:#}");
    assert!(hits[0]["text"].as_str().unwrap().contains("retry backoff"));
    // Asked for semantic ranking only, the words answer, with the same warning.
    let out = sb.run(&["recall", "--json", "--mode", "semantic", "retry backoff"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v = out.json();
    assert_eq!(
        (v["mode"].as_str(), v["missing_half"].as_str()),
        (Some("lexical"), Some("semantic"))
    );
    assert!(!v["hits"].as_array().unwrap().is_empty(), "{v:#}");
}

#[test]
fn a_failing_lexical_half_is_a_warning_and_the_semantic_half_answers() {
    let sb = two_halves();
    sql(&sb, "DROP TABLE messages_fts;");
    let out = sb.run(&["recall", "--json", "retry backoff"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v = out.json();
    assert_eq!(v["mode"], "semantic", "{v:#}");
    assert_eq!(v["missing_half"], "lexical", "{v:#}");
    assert!(
        v["warnings"][0]
            .as_str()
            .unwrap()
            .contains("the full-text search failed"),
        "{v:#}"
    );
    assert!(!v["hits"].as_array().unwrap().is_empty(), "{v:#}");
    // Lexical mode has no other half: an error naming the store.
    let out = sb.run(&["recall", "--mode", "lexical", "retry backoff"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("index.sqlite"), "{}", out.stderr);
}

#[test]
fn an_unreadable_message_is_left_out_with_a_warning_and_the_rest_answer() {
    let sb = two_halves();
    // One message's text is no longer valid UTF-8.
    sql(
        &sb,
        "UPDATE messages SET text = CAST(x'ff72657472792062' AS TEXT)
         WHERE id = (SELECT min(id) FROM messages WHERE text LIKE '%retry backoff%');",
    );
    let out = sb.run(&[
        "recall",
        "--json",
        "--mode",
        "lexical",
        "-n",
        "20",
        "retry backoff",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v = out.json();
    let warnings: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("could not be read and is left out")),
        "{v:#}"
    );
    assert!(!v["hits"].as_array().unwrap().is_empty(), "{v:#}");
}

/// An aider history of one session with `n` exchanges about numbered topics.
fn long_session(n: usize) -> Sandbox {
    crate::common::long_aider_session(n, 6)
}

#[test]
fn show_opens_a_session_at_a_message_and_recall_open_shows_a_hit_in_context() {
    let mut sb = long_session(10);
    let hit = sb
        .ok(&[
            "recall",
            "--json",
            "--mode",
            "lexical",
            "wombat scheduler deadlock",
        ])
        .json()["hits"][0]
        .clone();
    let session = hit["session_id"].as_str().unwrap().to_string();
    let index = hit["message_index"].as_u64().unwrap();
    assert_eq!(index, 12, "{hit:#}");
    // --around N with the default three neighbours on each side.
    let out = sb.ok(&["show", &session, "--around", "12"]).stdout;
    assert!(out.contains("messages  9 to 15 of 20"), "{out}");
    assert!(out.contains("── ▶ #12 user"), "{out}");
    assert!(
        out.contains("#9 ")
            && out.contains("#15 ")
            && !out.contains("#8 ")
            && !out.contains("#16 "),
        "{out}"
    );
    // A hit's message id opens the session there; --before/--after narrow it.
    let id = hit["message_id"].as_str().unwrap();
    assert_eq!(id, format!("{session}#12"));
    let out = sb.ok(&["show", id, "--before", "1", "--after", "0"]).stdout;
    assert!(out.contains("messages  11 to 12 of 20"), "{out}");
    let v = sb.ok(&["show", id, "--json", "--after", "1"]).json();
    assert_eq!(v["window"]["from"], 9);
    assert_eq!(v["window"]["to"], 14);
    assert_eq!(v["messages"].as_array().unwrap().len(), 5);
    assert_eq!(v["messages"][3]["index"], 12);
    // Out of range, and --before without a message, are clear errors.
    let bad = sb.run(&["show", &session, "--around", "20"]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("has 20 messages (indexes 0 to 19)"),
        "{}",
        bad.stderr
    );
    let bad = sb.run(&["show", &session, "--before", "2"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("--around"), "{}", bad.stderr);
    // recall --open 1 shows the first listed session at its best message.
    let out = sb
        .ok(&[
            "recall",
            "--mode",
            "lexical",
            "--open",
            "1",
            "wombat scheduler deadlock",
        ])
        .stdout;
    assert!(
        out.contains("── ▶ #12 user") || out.contains("── ▶ #13 assistant"),
        "{out}"
    );
    let bad = sb.run(&[
        "recall",
        "--mode",
        "lexical",
        "--open",
        "3",
        "wombat scheduler deadlock",
    ]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("the answer lists 1 session"),
        "{}",
        bad.stderr
    );
    // Piped output never goes through the pager, however long.
    let marker = sb.home.join("pager-ran");
    sb.env("PAGER", format!("touch {}; cat", marker.display()));
    sb.env("LINES", "5");
    let out = sb.ok(&["show", &session]).stdout;
    assert!(out.contains("Answer 9 about routine chores"), "{out}");
    assert!(!marker.exists(), "the pager ran on piped output");
}

#[test]
fn recall_reads_changed_transcripts_first_unless_told_not_to() {
    let sb = long_session(3);
    let history = sb.home.join("work/long/.aider.chat.history.md");
    let mut text = std::fs::read_to_string(&history).unwrap();
    text.push_str(
        "#### and what about the axolotl migration?  \n\nThe axolotl migration runs last.\n\n",
    );
    std::fs::write(&history, text).unwrap();
    // Skipped: the new words are not in the index yet.
    let out = sb.run(&["recall", "--mode", "lexical", "--no-refresh", "axolotl"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    // While another deja holds the writer lock, recall does not wait for it.
    let lock = std::fs::File::options()
        .read(true)
        .write(true)
        .open(sb.data_dir().join("index.lock"))
        .unwrap();
    lock.try_lock().unwrap();
    let out = sb.run(&["recall", "--mode", "lexical", "axolotl"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    drop(lock);
    // By default, the changed transcript is read before answering.
    let v = sb
        .ok(&["recall", "--mode", "lexical", "--json", "axolotl"])
        .json();
    assert!(
        v["hits"][0]["text"]
            .as_str()
            .unwrap()
            .contains("axolotl migration"),
        "{v:#}"
    );
    // Off in the config: as with --no-refresh.
    let mut text = std::fs::read_to_string(&history).unwrap();
    text.push_str("#### the narwhal cache?  \n\nNarwhal cache is cold.\n\n");
    std::fs::write(&history, text).unwrap();
    sb.config("[embed]\nenabled = false\n[recall]\nrefresh = false\n");
    let out = sb.run(&["recall", "--mode", "lexical", "narwhal"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    // More transcripts than `recall.refresh_max_transcripts`: skipped too.
    sb.config("[embed]\nenabled = false\n[recall]\nrefresh_max_transcripts = 0\n");
    let out = sb.run(&["recall", "--mode", "lexical", "narwhal"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    sb.config("[embed]\nenabled = false\n");
    let out = sb.run(&["recall", "--mode", "lexical", "narwhal"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    sb.config("[embed]\nenabled = false\n[recall]\nrefresh_ms = 60001\n");
    let out = sb.run(&["recall", "narwhal"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("recall.refresh_ms"), "{}", out.stderr);
}

/// The demo fixtures indexed with the real model, `extra` TOML in the config
/// (background indexing of the MCP server off: the store is ready).
fn demo_with_model(extra: &str) -> Sandbox {
    let mut sb = Sandbox::new();
    sb.config_with_model(&format!("[mcp]\nindex = false\n{extra}"));
    for (var, dir) in [
        ("DEJA_AIDER_ROOTS", "demo/aider"),
        ("DEJA_GEMINI_ROOT", "demo/gemini"),
        ("DEJA_CLAUDE_ROOT", "demo/claude"),
        ("DEJA_CODEX_ROOT", "demo/codex"),
    ] {
        sb.env(var, crate::common::fixtures().join(dir));
    }
    let out = sb.ok(&["index"]);
    assert!(out.stderr.contains("embedded"), "{}", out.stderr);
    sb
}

/// The MCP `recall` tool's text answer for `query`.
fn mcp_recall(sb: &Sandbox, query: &str) -> String {
    let mut raw = crate::mcp::Raw::start(sb);
    raw.initialize();
    raw.send(
        &serde_json::json!({
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "recall", "arguments": {"query": query}},
        })
        .to_string(),
    );
    let answer = raw.receive();
    assert_eq!(answer["id"], 2, "{answer}");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {answer}"))
        .to_string();
    let (status, err) = raw.finish();
    assert!(status.success(), "{err}");
    text
}

#[test]
fn a_query_that_shares_nothing_with_the_history_finds_nothing_but_a_paraphrase_still_does() {
    // The default floor (`recall.min_similarity`).
    let sb = demo_with_model("");
    for mode in ["hybrid", "semantic"] {
        let out = sb.run(&["recall", "--mode", mode, "xyzzyquux"]);
        assert_eq!(out.code, 1, "{mode}: {}\n{}", out.stdout, out.stderr);
        assert!(out.stderr.contains("no matches"), "{mode}: {}", out.stderr);
        assert!(out.stdout.trim().is_empty(), "{mode}: {}", out.stdout);
        let v = sb.run(&["recall", "--mode", mode, "--json", "xyzzyquux"]);
        assert_eq!(v.code, 1, "{mode}: {}", v.stdout);
        assert_eq!(v.json()["hits"].as_array().map(Vec::len), Some(0), "{mode}");
    }
    let text = mcp_recall(&sb, "xyzzyquux");
    assert!(text.contains("No past message matches"), "{text}");
    // A paraphrase with no word in common with its session (fixtures/demo/
    // queries.tsv) is found by meaning alone, above the floor: the tenant
    // predicate bug of billing-api.
    for mode in ["hybrid", "semantic"] {
        let v = sb
            .ok(&[
                "recall",
                "--mode",
                mode,
                "--json",
                "firms peeking at each other's financials",
            ])
            .json();
        let first = &v["hits"][0];
        assert_eq!(first["project"]["name"], "billing-api", "{mode}: {v:#}");
        assert!(
            first["session_id"]
                .as_str()
                .is_some_and(|id| id.ends_with("20251209T101233")),
            "{mode}: {v:#}"
        );
    }
    let text = mcp_recall(&sb, "firms peeking at each other's financials");
    assert!(!text.contains("No past message matches"), "{text}");
    assert!(text.contains("billing-api"), "{text}");

    // With the floor off, the relevance bar still finds nothing near enough
    // to be an answer, and says how much it held back.
    let off = demo_with_model("[recall]\nmin_similarity = 0\n");
    let v = off.run(&["recall", "--json", "xyzzyquux"]);
    assert_eq!(v.code, 1, "{}", v.stdout);
    assert!(
        v.json()["withheld"].as_u64().is_some_and(|n| n > 0),
        "{}",
        v.stdout
    );
    // With both off, the nearest messages come back however far they are,
    // each marked weak.
    let off = demo_with_model("[recall]\nmin_similarity = 0\nmin_score = 0\n");
    let v = off.ok(&["recall", "--json", "xyzzyquux"]).json();
    let hits = v["hits"].as_array().cloned().unwrap_or_default();
    assert!(!hits.is_empty(), "{v:#}");
    assert!(hits.iter().all(|h| h["weak"] == true), "{v:#}");
}

#[test]
fn recall_says_how_much_of_the_history_meaning_covers() {
    let mut sb = Sandbox::new();
    sb.config_with_model("[mcp]\nindex = false\n");
    sb.env("DEJA_AIDER_ROOTS", fixtures().join("demo/aider"));
    sb.ok(&["index"]);
    let covers = |sb: &Sandbox| -> Vec<String> {
        let out = sb.run(&["recall", "tenant predicate", "--json"]);
        let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|w| w.as_str())
            .filter(|w| w.contains("meaning covers"))
            .map(str::to_string)
            .collect()
    };
    assert!(
        covers(&sb).is_empty(),
        "everything is embedded: {:?}",
        covers(&sb)
    );
    // Gemini CLI's sessions read with embeddings off: they wait.
    sb.env("DEJA_GEMINI_ROOT", fixtures().join("demo/gemini"));
    sb.config_with_model("enabled = false\n[mcp]\nindex = false\n");
    sb.ok(&["index"]);
    sb.config_with_model("[mcp]\nindex = false\n");
    let said = covers(&sb);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].contains("found by words only") && said[0].contains("deja index"),
        "{said:?}"
    );
    let doctor = sb.run(&["doctor", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&doctor.stdout).unwrap();
    assert!(v["store"]["meaning_covers_after"].is_string(), "{v:#}");
    assert!(v["store"]["messages_without_vectors"].as_i64().unwrap() > 0);
    // The next index embeds them: nothing left to say.
    sb.ok(&["index"]);
    assert!(covers(&sb).is_empty());
}

/// An unrestricted recall searches the vector index beside the lexical half
/// (on its own thread); a restricted one filters its nearest messages to the
/// scope, computing similarities exactly. A filter that lets everything
/// through must answer as no filter does: same sessions, messages and order,
/// scores equal but for the vector index's rounding.
#[test]
fn an_all_inclusive_filter_answers_exactly_as_no_filter() {
    let sb = demo_with_model("");
    let hits = |v: &Value| -> Vec<(String, i64, f64)> {
        v["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| {
                (
                    h["session_id"].as_str().unwrap().to_string(),
                    h["message_index"].as_i64().unwrap(),
                    h["score"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    for query in [
        "that tenant predicate bug",
        "the chart redraws and burns processor time",
        "how did we make the retry wait longer each time",
    ] {
        for mode in ["hybrid", "semantic"] {
            let free = hits(&sb.run(&["recall", "--mode", mode, "--json", query]).json());
            let scoped = hits(
                &sb.run(&[
                    "recall",
                    "--mode",
                    mode,
                    "--json",
                    "--since",
                    "2000-01-01",
                    query,
                ])
                .json(),
            );
            assert!(!free.is_empty(), "{mode} `{query}`");
            let order = |h: &[(String, i64, f64)]| -> Vec<(String, i64)> {
                h.iter().map(|(s, i, _)| (s.clone(), *i)).collect()
            };
            assert_eq!(order(&free), order(&scoped), "{mode} `{query}`");
            for (a, b) in free.iter().zip(&scoped) {
                assert!((a.2 - b.2).abs() < 1e-3, "{mode} `{query}`: {a:?} vs {b:?}");
            }
        }
    }
}

#[test]
fn doctor_and_recall_state_the_same_coverage_after_a_run_cut_short() {
    let mut sb = Sandbox::new();
    sb.env("DEJA_AIDER_ROOTS", fixtures().join("demo/aider"));
    sb.env("DEJA_GEMINI_ROOT", fixtures().join("demo/gemini"));
    // Read with embeddings off: every message waits, and the run says so.
    sb.config_with_model("enabled = false\n[mcp]\nindex = false\n");
    sb.ok(&["index"]);
    let waiting = |sb: &Sandbox| -> (i64, Option<String>) {
        let v = sb.run(&["doctor", "--json"]).json();
        (
            v["store"]["messages_without_vectors"].as_i64().unwrap(),
            v["store"]["meaning_covers_after"]
                .as_str()
                .map(|t| t[..10].to_string()),
        )
    };
    sb.config_with_model("[mcp]\nindex = false\n");
    let (before, _) = waiting(&sb);
    assert!(before > 0);
    // A run that embeds, then stops before its end: the vector file cannot
    // be written (a folder stands in its place).
    let vectors = sb.data_dir().join("vectors.usearch");
    let _ = std::fs::remove_file(&vectors);
    std::fs::create_dir_all(&vectors).unwrap();
    let out = sb.run(&["index"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    std::fs::remove_dir(&vectors).unwrap();
    let (pending, after) = waiting(&sb);
    assert!(
        pending < before,
        "the run embedded some: {pending} of {before}"
    );
    // Recall says what doctor says, in the same words.
    let out = sb.run(&["recall", "tenant predicate", "--json"]);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    let said: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .filter(|w| w.contains("meaning covers"))
        .collect();
    match after {
        Some(day) => {
            assert_eq!(said.len(), 1, "{said:?}");
            assert!(
                said[0].contains(&format!("sessions begun after {day};")),
                "doctor: after {day}; recall: {said:?}"
            );
            assert!(said[0].contains(&format!("{pending} message")), "{said:?}");
            let doctor = sb.run(&["doctor"]);
            let text = format!("{}{}", doctor.stdout, doctor.stderr);
            assert!(
                text.contains(&format!("covers the sessions begun after {day}")),
                "{text}"
            );
        }
        None => assert!(said.is_empty(), "doctor: all covered; recall: {said:?}"),
    }
}

#[test]
fn date_flags_take_the_phrases_a_query_understands_and_refuse_an_inverted_range() {
    let sb = sandbox();
    sb.ok(&["index"]);
    // The sessions date from 2026: none began in the last 3 days.
    for command in [
        vec!["recall", "tenant", "--json"],
        vec!["sessions", "--json"],
    ] {
        let mut args = command.clone();
        args.extend(["--since", "3 days ago"]);
        let out = sb.run(&args);
        assert_ne!(out.code, 2, "{args:?}: {}", out.stderr);
        let mut args = command.clone();
        args.extend(["--since", "June 2026", "--until", "a week ago"]);
        let out = sb.run(&args);
        assert_ne!(out.code, 2, "{args:?}: {}", out.stderr);
        let mut args = command.clone();
        args.extend(["--since", "2026-05-01", "--until", "2026-04-01"]);
        let out = sb.run(&args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(
            out.stderr
                .contains("--since (2026-05-01 00:00) is not before --until (2026-04-01 00:00)"),
            "{}",
            out.stderr
        );
    }
    // `--since "August 2026"` keeps the August session and drops the July one.
    let v = sb
        .ok(&[
            "sessions",
            "--json",
            "--harness",
            "aider",
            "--since",
            "August 2026",
        ])
        .json();
    let listed = v["sessions"].as_array().unwrap();
    assert_eq!(listed.len(), 1, "{v:#}");
}
