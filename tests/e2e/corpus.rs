//! Tests over the real transcripts in the shared corpus (opt-in: they need
//! `DEJA_SHARED`, the path of the shared folder, and run with
//! `--include-ignored`; CI enables them when the folder exists).

use std::path::PathBuf;

use crate::common::Sandbox;

fn shared() -> PathBuf {
    let dir = std::env::var_os("DEJA_SHARED")
        .map(PathBuf::from)
        .expect("DEJA_SHARED is not set: point it at the shared folder (with corpus/ and bench/)");
    assert!(
        dir.join("corpus").is_dir(),
        "{} has no corpus/",
        dir.display()
    );
    dir
}

/// A sandbox whose config points the readers at every corpus transcript.
fn corpus_sandbox() -> Sandbox {
    let corpus = shared().join("corpus");
    let mut aider: Vec<String> = std::fs::read_dir(corpus.join("aider"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    aider.sort();
    let mut gemini: Vec<String> = std::fs::read_dir(corpus.join("gemini"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    gemini.sort();
    let sb = Sandbox::new();
    sb.config(&format!(
        "[embed]\nenabled = false\n[harness.aider]\nroots = {aider:?}\ntimezone = \"UTC\"\n[harness.gemini]\nroots = {gemini:?}\n"
    ));
    sb
}

#[test]
#[ignore = "needs DEJA_SHARED (the shared corpus)"]
fn corpus_indexed_twice_gives_identical_stores_and_the_second_run_parses_nothing() {
    let sb = corpus_sandbox();
    let first = sb.index();
    println!("first run: {first:#}");
    assert_eq!(
        first["transcripts"]["failed"].as_array().unwrap().len(),
        0,
        "{first:#}"
    );
    assert_eq!(
        first["transcripts"]["scanned"],
        40 + 13,
        "40 aider histories and 13 Gemini recordings"
    );
    let before = sb.dump();
    let second = sb.index();
    assert_eq!(second["transcripts"]["changed"], 0, "{second:#}");
    assert_eq!(second["sessions"]["added"], 0);
    assert_eq!(second["messages"]["added"], 0);
    assert_eq!(before, sb.dump(), "the second run changed the store");

    // A fresh store from the same files is the same too (ids are stable).
    let other = corpus_sandbox();
    other.index();
    assert_eq!(before, other.dump());

    let list = sb.ok(&["sessions", "--json"]).json();
    let sessions = list["sessions"].as_array().unwrap();
    let aider = sessions.iter().filter(|s| s["harness"] == "aider").count();
    let gemini = sessions.iter().filter(|s| s["harness"] == "gemini").count();
    println!("sessions: {aider} aider, {gemini} gemini");
    assert_eq!(gemini, 13);
    assert!(aider > 100, "{aider}");
}

/// Every owner folder below `corpus/<harness>/`, each laid out like that
/// harness's home (`~/.claude`, `~/.codex`, `~/.qwen`).
fn homes_of(harness: &str) -> Vec<String> {
    let mut dirs: Vec<String> = std::fs::read_dir(shared().join("corpus").join(harness))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    dirs
}

/// A sandbox reading all five harnesses of the corpus, each owner's files as
/// one home of that harness.
fn five_harness_sandbox() -> Sandbox {
    let sb = corpus_sandbox();
    let mut config = std::fs::read_to_string(sb.config_path()).unwrap();
    for harness in ["claude", "codex", "qwen"] {
        config.push_str(&format!(
            "[harness.{harness}]\nroots = {:?}\n",
            homes_of(harness)
        ));
    }
    sb.config(&config);
    sb
}

#[test]
#[ignore = "needs DEJA_SHARED (the shared corpus)"]
fn all_five_harnesses_are_indexed_recalled_and_resumed() {
    let sb = five_harness_sandbox();
    let first = sb.index();
    println!("index: {first:#}");
    assert_eq!(
        first["transcripts"]["failed"].as_array().unwrap().len(),
        0,
        "{first:#}"
    );
    let list = sb.ok(&["sessions", "--json"]).json();
    let sessions = list["sessions"].as_array().unwrap();
    for (harness, expected) in EXPECTED_SESSIONS {
        let mine: Vec<&serde_json::Value> = sessions
            .iter()
            .filter(|s| s["harness"] == *harness)
            .collect();
        println!("{harness}: {} sessions", mine.len());
        assert_eq!(mine.len(), *expected, "{harness} sessions");

        // Recall finds a session of this harness by its own first request.
        let session = mine
            .iter()
            .find(|s| {
                s["parent_id"].is_null()
                    && s["first_user_line"]
                        .as_str()
                        .is_some_and(|t| t.split_whitespace().count() >= 4)
            })
            .unwrap_or_else(|| panic!("no {harness} session with a first request"));
        let id = session["id"].as_str().unwrap();
        let words: Vec<&str> = session["first_user_line"]
            .as_str()
            .unwrap()
            .split_whitespace()
            .take(12)
            .collect();
        let hits = sb
            .ok(&[
                "recall",
                "--json",
                "--mode",
                "lexical",
                "-n",
                "10",
                "--harness",
                harness,
                &words.join(" "),
            ])
            .json();
        let hits = hits["hits"].as_array().unwrap();
        assert!(
            hits.iter().any(|h| h["session_id"] == id
                || h["duplicates"]
                    .as_array()
                    .is_some_and(|d| d.iter().any(|x| x == id))),
            "{harness}: recall of {words:?} missed {id}: {hits:#?}"
        );

        // Resume names the harness's own command, or says why it cannot.
        let out = sb.run(&["resume", "--json", id]);
        let advice: serde_json::Value = serde_json::from_str(&out.stdout).unwrap_or_default();
        println!("{harness} resume: {advice}");
        if *harness == "aider" {
            // aider cannot reopen one session of a history, and says why.
            assert!(advice["refused"].is_string(), "{advice:#}");
        } else {
            let argv = advice["argv"]
                .as_array()
                .unwrap_or_else(|| panic!("{harness}: {advice:#}"));
            assert_eq!(argv[0], *harness_program(harness), "{advice:#}");
        }
    }
}

/// Sessions each harness's reader finds in the corpus (counted by each
/// reader's own corpus test, which checks them against the files).
const EXPECTED_SESSIONS: &[(&str, usize)] = &[
    ("aider", 163),
    ("gemini", 13),
    ("claude", 28),
    ("codex", 19),
    ("qwen", 12),
];

fn harness_program(harness: &str) -> &'static str {
    match harness {
        "claude" => "claude",
        "codex" => "codex",
        "qwen" => "qwen",
        "gemini" => "gemini",
        _ => "aider",
    }
}

/// Queries nothing in the corpus answers: random letters and topics no
/// transcript discusses (some share a word with one: "bake", "moon").
const UNANSWERABLE: &[&str] = &[
    "xyzzyquux",
    "zzkqv",
    "qwertyuiop asdfghjkl",
    "purple elephant riding a unicycle on the moon",
    "how do I bake sourdough bread",
];

#[test]
#[ignore = "needs DEJA_SHARED (the shared corpus)"]
fn a_query_nothing_answers_gets_no_matches_from_the_cli_and_the_mcp_server() {
    // Claude Code and Gemini CLI transcripts of the corpus, embedded with
    // the real model: a history of real sessions, short greetings included.
    let sb = Sandbox::new();
    sb.config_with_model(&format!(
        "[harness.claude]\nroots = {:?}\n[harness.gemini]\nroots = {:?}\n",
        homes_of("claude"),
        homes_of("gemini")
    ));
    let index = sb.index();
    assert_eq!(index["transcripts"]["failed"].as_array().unwrap().len(), 0);

    for q in UNANSWERABLE {
        let out = sb.run(&["recall", q]);
        assert_eq!(out.code, 1, "{q}: {}{}", out.stdout, out.stderr);
        assert!(out.stdout.is_empty(), "{q}: {}", out.stdout);
        assert!(out.stderr.contains("no matches"), "{q}: {}", out.stderr);
        let json = sb.run(&["recall", "--json", q]).json();
        assert_eq!(json["hits"].as_array().unwrap().len(), 0, "{q}: {json:#}");
        // What ranked at all was held back by the relevance bar (the
        // floor leaves nothing of some).
        if out.stderr.contains("ranked, none near enough") {
            assert!(json["withheld"].as_u64().unwrap() > 0, "{q}: {json:#}");
        }
    }
    // Without the bar, the greetings and fragments nearest to random
    // letters would be listed: the bar is what says "no matches" here.
    let ranked = sb.run(&["recall", "xyzzyquux"]);
    assert!(
        ranked.stderr.contains("ranked, none near enough"),
        "{}",
        ranked.stderr
    );

    // A question the corpus does answer, in other words than the session's,
    // still finds it first (the real-transcript set's r090).
    let out = sb.ok(&[
        "recall",
        "--json",
        "the loading animation sat at the foot of the page instead of the middle of the grid",
    ]);
    let hits = out.json()["hits"].as_array().unwrap().clone();
    assert!(!hits.is_empty());
    let first = sb.ok(&["show", "--json", hits[0]["session_id"].as_str().unwrap()]);
    assert_eq!(
        first.json()["native_id"],
        "354b2588-2a5c-43d7-b678-e95a4a87bd2a",
        "{hits:#?}"
    );

    // An agent asking through MCP is told that nothing answers, not handed
    // the nearest noise as memory.
    let mut raw = crate::mcp::Raw::start(&sb);
    raw.initialize();
    for (n, q) in UNANSWERABLE.iter().enumerate() {
        let call = serde_json::json!({
            "jsonrpc": "2.0", "id": 10 + n, "method": "tools/call",
            "params": {"name": "recall", "arguments": {"query": q}},
        });
        raw.send(&call.to_string());
        let answer = raw.receive();
        let text = answer["result"]["content"][0]["text"].as_str().unwrap();
        assert!(
            text.contains("No past message answers this query")
                || text.contains("No past message matches this query"),
            "{q}: {text}"
        );
        let hits = &answer["result"]["structuredContent"]["hits"];
        assert_eq!(hits.as_array().unwrap().len(), 0, "{q}: {answer:#}");
    }
    let (status, stderr) = raw.finish();
    assert!(status.success(), "{stderr}");

    // With the bar off, the same queries list the nearest messages, each
    // marked weak in the text, the JSON and the agent's answer.
    sb.config_with_model(&format!(
        "[harness.claude]\nroots = {:?}\n[harness.gemini]\nroots = {:?}\n[recall]\nmin_score = 0\n",
        homes_of("claude"),
        homes_of("gemini")
    ));
    let out = sb.ok(&["recall", "xyzzyquux"]);
    let sessions: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert!(!sessions.is_empty(), "{}", out.stdout);
    assert!(
        sessions.iter().all(|l| l.contains("weak match")),
        "{}",
        out.stdout
    );
    let json = sb.ok(&["recall", "--json", "xyzzyquux"]).json();
    assert!(json["hits"]
        .as_array()
        .unwrap()
        .iter()
        .all(|h| h["weak"] == true));
    let mut raw = crate::mcp::Raw::start(&sb);
    raw.initialize();
    raw.send(
        &serde_json::json!({
            "jsonrpc": "2.0", "id": 99, "method": "tools/call",
            "params": {"name": "recall", "arguments": {"query": "xyzzyquux"}},
        })
        .to_string(),
    );
    let answer = raw.receive();
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("weak match"), "{text}");
    assert!(text.contains("not sure answers"), "{text}");
    let _ = raw.finish();
}
