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
