//! The team crate against a real PostgreSQL server (a scratch cluster):
//! push from one store, pull into another, tombstones, and the schema check.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use deja_model::{Message, Project, Role, Session};
use deja_store::ingest::FileState;
use deja_store::Store;
use deja_team::scratch::ScratchServer;
use deja_team::{connect, pull, push, PushOptions, Settings};

fn session(id: &str, dir: &str, texts: &[&str]) -> Session {
    Session {
        harness: "aider".into(),
        id: id.into(),
        native_id: id.into(),
        started_at_ms: 1_700_000_000_000,
        updated_at_ms: 1_700_000_000_000,
        project: Project {
            dir: Some(dir.into()),
            name: None,
            id: None,
        },
        title: Some(format!("title {id}")),
        parent_id: None,
        precedence: 0,
        messages: texts
            .iter()
            .map(|t| Message {
                role: Role::User,
                text: (*t).to_string(),
                timestamp_ms: 1_700_000_000_000,
                native_id: None,
            })
            .collect(),
        files: vec![],
        commands: vec![],
    }
}

fn store_with(dir: &Path, sessions: &[Session]) -> Store {
    let mut store = Store::open(&dir.join("index.sqlite")).unwrap();
    let file = FileState {
        harness: "aider",
        path: "/t/history.md",
        size: 1,
        mtime_ns: 1,
        hash: "h",
        reader: "aider 1",
        settings: "",
    };
    store.apply(&file, sessions).unwrap();
    store
}

fn settings(server: &ScratchServer, user: &str, name: &str, share: &[&str]) -> Settings {
    let text = format!(
        "[team]\nurl = \"{}\"\nname = \"{name}\"\nshare = {:?}\ntls = \"disable\"\n",
        server.url(user, "team"),
        share
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, text).unwrap();
    let loaded = deja_config::load(&path, false, &|_| None).unwrap();
    let env = |k: &str| (k == "DEJA_TEAM_PASSWORD").then(|| "pw".to_string());
    Settings::from_config(&loaded, &env, Path::new("/home/x")).unwrap()
}

#[test]
fn a_pushed_session_is_pulled_elsewhere_and_its_tombstone_follows() {
    let server = ScratchServer::start(false).unwrap();
    server.create_team("team", &["ana", "ben"], "pw").unwrap();
    let a_dir = tempfile::tempdir().unwrap();
    let b_dir = tempfile::tempdir().unwrap();
    let mut a = store_with(
        a_dir.path(),
        &[
            session(
                "s1",
                "/src/api",
                &["the tenant predicate bug", "fixed in where.rs"],
            ),
            session("s2", "/src/private", &["not shared"]),
        ],
    );
    let mut b = Store::open(&b_dir.path().join("index.sqlite")).unwrap();

    let mut team_a = connect(&settings(&server, "ana", "ana@laptop", &["/src/api"])).unwrap();
    let options = PushOptions {
        redaction_on: true,
        ..PushOptions::default()
    };
    let report = push(&mut team_a, &a, options, &mut |_, _| {}).unwrap();
    assert_eq!((report.shared, report.pushed, report.messages), (1, 1, 2));
    let again = push(&mut team_a, &a, options, &mut |_, _| {}).unwrap();
    assert_eq!((again.pushed, again.unchanged), (0, 1));

    let mut team_b = connect(&settings(&server, "ben", "ben@desk", &[])).unwrap();
    let got = pull(&mut team_b, &mut b, &|s| s, &mut |_, _| {}).unwrap();
    assert_eq!((got.added, got.messages), (1, 2));
    let row = b.session_row("aider", "s1").unwrap().unwrap();
    assert_eq!(row.origin.as_deref(), Some("ana@laptop"));
    assert_eq!(
        b.load_session(&row).unwrap().messages[1].text,
        "fixed in where.rs"
    );
    assert!(b.session_row("aider", "s2").unwrap().is_none());

    let row = a.session_row("aider", "s1").unwrap().unwrap();
    a.forget(&[row]).unwrap();
    let report = push(&mut team_a, &a, options, &mut |_, _| {}).unwrap();
    assert_eq!(report.retracted, 1);
    let got = pull(&mut team_b, &mut b, &|s| s, &mut |_, _| {}).unwrap();
    assert_eq!(got.removed, 1);
    assert!(b.session_row("aider", "s1").unwrap().is_none());
    assert_eq!(
        server
            .psql("team", "SELECT count(*) FROM deja.messages")
            .unwrap()
            .trim(),
        "0"
    );
}

#[test]
fn machines_connecting_at_once_to_a_new_team_store_migrate_it_once() {
    let server = ScratchServer::start(false).unwrap();
    server
        .create_team(
            "team",
            &["ana", "ben", "cat", "dan", "eve", "fay", "gus", "hal"],
            "pw",
        )
        .unwrap();
    let names = ["ana", "ben", "cat", "dan", "eve", "fay", "gus", "hal"];
    let all: Vec<Settings> = names
        .iter()
        .map(|u| settings(&server, u, &format!("{u}@box"), &[]))
        .collect();
    let barrier = std::sync::Barrier::new(all.len());
    std::thread::scope(|scope| {
        let handles: Vec<_> = all
            .iter()
            .map(|s| {
                scope.spawn(|| {
                    barrier.wait();
                    connect(s)
                        .map(|t| t.schema_version)
                        .map_err(|e| e.to_string())
                })
            })
            .collect();
        for h in handles {
            assert_eq!(h.join().unwrap(), Ok(deja_team::schema::current_version()));
        }
    });
    assert_eq!(
        server
            .psql(
                "team",
                "SELECT value FROM deja.meta WHERE key = 'schema_version'"
            )
            .unwrap()
            .trim(),
        "1"
    );
}
