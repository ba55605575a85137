//! The two embedding passes with the installed model: a first pass gives a
//! long message a sample of its windows and marks it as embedded in part; a
//! second pass (in the same run or a later one, after an interruption) adds
//! the rest, ending with exactly the units of one pass over all windows.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use deja_embed::{Embedder, Settings};
use deja_index::embedding::{self, Pass};
use deja_model::{Message, Role, Session};
use deja_store::ingest::FileState;
use deja_store::Store;

/// The default `[embed]` settings with the installed model (panics with the
/// fix when it is missing: these tests never pass without it).
fn settings(first_windows: usize) -> Settings {
    let data = std::env::var_os("DEJA_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".local/share/deja")
        });
    let config = deja_config::defaults(Path::new("/nonexistent/config.toml"), &|_| None)
        .unwrap()
        .config
        .embed;
    let mut s = Settings::from_config(&config, Path::new("/nonexistent"), &data);
    if s.model_files().is_err() || s.runtime().is_err() {
        panic!(
            "the embedding model is not installed under {}; run scripts/fetch-model first",
            data.display()
        );
    }
    s.first_windows = first_windows;
    s.threads = 2;
    s
}

/// A session of three messages, the middle one long (many windows).
fn session() -> Session {
    let long = (0..400)
        .map(|i| format!("Step {i}: the token bucket refills at the configured rate."))
        .collect::<Vec<_>>()
        .join(" ");
    let texts = [
        "Why does the rate limiter drop bursts?".to_string(),
        long,
        "Thanks, that explains the bursts.".to_string(),
    ];
    Session {
        harness: "test".into(),
        id: "s".into(),
        native_id: "s".into(),
        started_at_ms: 1_700_000_000_000,
        updated_at_ms: 1_700_000_000_000,
        date_approximate: false,
        project: Default::default(),
        title: None,
        parent_id: None,
        precedence: 0,
        messages: texts
            .iter()
            .enumerate()
            .map(|(i, t)| Message {
                role: if i % 2 == 0 {
                    Role::User
                } else {
                    Role::Assistant
                },
                text: t.clone(),
                timestamp_ms: 1_700_000_000_000 + i as i64,
                native_id: None,
            })
            .collect(),
        files: vec![],
        commands: vec![],
    }
}

fn store(dir: &Path) -> Store {
    let mut store = Store::open(&dir.join("index.sqlite")).unwrap();
    let file = FileState {
        harness: "test",
        path: "/t",
        size: 0,
        mtime_ns: 0,
        hash: "h",
        reader: "test 0",
        settings: "",
    };
    store.apply(&file, &[session()]).unwrap();
    store
}

/// (message row id, ordinal, text hash) of every unit of `store`, in order.
fn units(store: &Store) -> Vec<(i64, i64, String)> {
    let conn = rusqlite::Connection::open(store.path()).unwrap();
    let mut stmt = conn
        .prepare("SELECT message, ordinal, text_hash FROM chunks ORDER BY 1, 2")
        .unwrap();
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap();
    rows.map(|r| r.unwrap()).collect()
}

#[test]
fn an_interrupted_second_pass_resumes_and_ends_with_every_window() {
    // One pass over all windows: the reference.
    let whole = tempfile::tempdir().unwrap();
    let mut reference = store(whole.path());
    let mut embedder = Embedder::load(&settings(0), None).unwrap();
    let vectors = whole.path().join("vectors.usearch");
    let one = embedding::run(
        &mut reference,
        &mut embedder,
        &vectors,
        Pass::First,
        &mut (),
    )
    .unwrap();
    assert_eq!((one.messages, one.partial), (3, 0));
    assert_eq!(reference.partial_count().unwrap(), 0);
    let all = units(&reference);
    let long = all[1].0;
    let long_windows = all.iter().filter(|u| u.0 == long).count();
    assert!(
        long_windows > 4,
        "the long message has {long_windows} windows"
    );

    // The default first pass: four windows of the long message, marked.
    let parts = tempfile::tempdir().unwrap();
    let mut split = store(parts.path());
    let mut embedder = Embedder::load(&settings(4), None).unwrap();
    assert_eq!(embedder.first_windows(), 4, "the default");
    let vectors = parts.path().join("vectors.usearch");
    let first = embedding::run(&mut split, &mut embedder, &vectors, Pass::First, &mut ()).unwrap();
    assert_eq!((first.messages, first.partial, first.completed), (3, 1, 0));
    assert_eq!(
        split.pending_count().unwrap(),
        0,
        "every message is found by meaning"
    );
    assert_eq!(split.partial_count().unwrap(), 1);
    assert_eq!(split.coverage().unwrap().partial, 1);
    let sampled = units(&split);
    let long_sampled: Vec<i64> = sampled
        .iter()
        .filter(|u| u.0 == long)
        .map(|u| u.1)
        .collect();
    let last = long_windows as i64 - 1;
    assert_eq!(long_sampled.len(), 4);
    assert_eq!(
        (long_sampled[0], long_sampled[3]),
        (0, last),
        "first and last kept"
    );
    // Each sampled window is the reference's window at the same place.
    for u in &sampled {
        assert!(all.contains(u), "{u:?} is not a unit of the one-pass store");
    }

    // The process stops here (the marks are in the store); a later run,
    // with a new embedder, does the rest.
    drop(embedder);
    drop(split);
    let mut split = Store::open(&parts.path().join("index.sqlite")).unwrap();
    let mut embedder = Embedder::load(&settings(4), split.model_stamp().as_ref()).unwrap();
    let again = embedding::run(&mut split, &mut embedder, &vectors, Pass::First, &mut ()).unwrap();
    assert_eq!(again.messages, 0, "the first pass has nothing left");
    let rest = embedding::run(&mut split, &mut embedder, &vectors, Pass::Rest, &mut ()).unwrap();
    assert_eq!((rest.completed, rest.units), (1, long_windows - 4));
    assert_eq!(rest.embedded, long_windows - 4, "no window embedded twice");
    assert_eq!(split.partial_count().unwrap(), 0);
    assert_eq!(embedding::pending(&split).unwrap(), 0);
    assert_eq!(units(&split), all, "the same units as one pass");
}
