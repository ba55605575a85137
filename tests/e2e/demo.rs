//! The bundled demo (`fixtures/demo`): indexed with the real model, every row
//! of `queries.tsv` must rank its session first — paraphrases that share no
//! word with their session in semantic and hybrid modes, rare identifiers in
//! lexical mode.

use serde_json::Value;

use crate::common::{fixtures, Sandbox};

/// Whether a hit belongs to the session `expected` names (see queries.tsv).
fn matches(hit: &Value, expected: &str) -> bool {
    let id = hit["session_id"].as_str().unwrap_or_default();
    match expected.split_once(':') {
        Some(("gemini", sid)) => hit["harness"] == "gemini" && id.starts_with(sid),
        // Claude Code's sessionId and Codex's thread id are deja's ids as they are.
        Some((harness @ ("claude" | "codex"), sid)) => hit["harness"] == harness && id == sid,
        Some(("aider", rest)) => {
            let (folder, time) = rest.split_once(':').unwrap();
            let stamp: String = time.chars().filter(|c| c.is_ascii_digit()).collect();
            let (date, clock) = stamp.split_at(8);
            hit["harness"] == "aider"
                && hit["project"]["name"] == folder
                && id.ends_with(&format!("{date}T{clock}"))
        }
        _ => panic!("bad expected session `{expected}`"),
    }
}

#[test]
fn every_demo_query_finds_its_session_first() {
    let mut sb = Sandbox::new();
    sb.config_with_model("");
    sb.env("DEJA_AIDER_ROOTS", fixtures().join("demo/aider"));
    sb.env("DEJA_GEMINI_ROOT", fixtures().join("demo/gemini"));
    sb.env("DEJA_CLAUDE_ROOT", fixtures().join("demo/claude"));
    sb.env("DEJA_CODEX_ROOT", fixtures().join("demo/codex"));
    let out = sb.ok(&["index", "--json"]);
    let run = out.json();
    assert_eq!(
        run["transcripts"]["failed"].as_array().unwrap().len(),
        0,
        "{run:#}"
    );
    assert_eq!(run["sessions"]["added"], 14, "{run:#}");
    assert!(!out.stderr.contains("warning"), "{}", out.stderr);

    let table = std::fs::read_to_string(fixtures().join("demo/queries.tsv")).unwrap();
    let mut checked = 0;
    let mut failures = Vec::new();
    for line in table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let cols: Vec<&str> = line.split('\t').collect();
        let (modes, query, expected) = (cols[0], cols[1], cols[2]);
        for mode in modes.split('+') {
            let v = sb
                .ok(&["recall", "--json", "--mode", mode, "-n", "5", query])
                .json();
            assert_eq!(v["mode"], mode, "{v:#}");
            let first = &v["hits"][0];
            if !matches(first, expected) {
                failures.push(format!(
                    "{mode} `{query}`: expected {expected}, got {} ({})",
                    first["session_id"],
                    first["text"]
                        .as_str()
                        .unwrap_or_default()
                        .chars()
                        .take(80)
                        .collect::<String>()
                ));
            }
            checked += 1;
        }
    }
    assert!(checked >= 34, "only {checked} checks in queries.tsv");
    assert!(
        failures.is_empty(),
        "{} of {checked} demo queries failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
