//! Unit tests of transcript ingest: diffing, copies across files, tombstones.

#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;
use crate::embedding::{Due, Unit};
use crate::test_support::{self, session};
use deja_model::{FileRecord, Role};

fn file(path: &str) -> FileState<'_> {
    test_support::file(path, "")
}

fn open() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("index.sqlite")).unwrap();
    (dir, store)
}

/// Gives every message waiting for units one unit, its vector cached
/// under `m`, keyed by the text itself.
fn embed_all(store: &mut Store) {
    let pending = store.pending_page(0, 1000).unwrap();
    embed(store, &pending);
}

/// Gives each of `pending` one unit, as [`embed_all`] does.
fn embed(store: &mut Store, pending: &[crate::embedding::PendingMessage]) {
    let units: Vec<Unit> = pending
        .iter()
        .map(|m| Unit {
            message: m.id,
            ordinal: 0,
            text_hash: m.text.clone(),
        })
        .collect();
    let vector = [1.0f32, 0.0];
    let vectors: Vec<(&str, &[f32])> = units
        .iter()
        .map(|u| (u.text_hash.as_str(), &vector[..]))
        .collect();
    store.add_units("m", &vectors, &units).unwrap();
}

/// (message row id, text) of session `id`, by position.
fn messages(store: &Store, id: &str) -> Vec<(i64, String)> {
    let mut stmt = store
        .conn()
        .prepare(
            "SELECT m.id, m.text FROM messages m JOIN sessions s ON s.id = m.session
             WHERE s.harness = 'test' AND s.session_id = ?1 ORDER BY m.position",
        )
        .unwrap();
    let rows = stmt
        .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap();
    rows.map(|r| r.unwrap()).collect()
}

/// The unit (chunk) id of each message of session `id`, by position;
/// `None` where the message has no unit (it waits for embedding).
fn units(store: &Store, id: &str) -> Vec<Option<i64>> {
    let mut stmt = store
        .conn()
        .prepare(
            "SELECT (SELECT c.id FROM chunks c WHERE c.message = m.id AND c.ordinal = 0)
             FROM messages m JOIN sessions s ON s.id = m.session
             WHERE s.harness = 'test' AND s.session_id = ?1 ORDER BY m.position",
        )
        .unwrap();
    let rows = stmt.query_map([id], |r| r.get(0)).unwrap();
    rows.map(|r| r.unwrap()).collect()
}

/// Keys waiting to leave the vector index.
fn trash(store: &Store) -> Vec<i64> {
    let mut stmt = store
        .conn()
        .prepare("SELECT key FROM vector_trash ORDER BY key")
        .unwrap();
    let rows = stmt.query_map([], |r| r.get(0)).unwrap();
    rows.map(|r| r.unwrap()).collect()
}

/// Message row ids whose text the message-level full-text index matches.
fn fts_messages(store: &Store, word: &str) -> Vec<i64> {
    let mut stmt = store
        .conn()
        .prepare("SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?1 ORDER BY rowid")
        .unwrap();
    let rows = stmt.query_map([word], |r| r.get(0)).unwrap();
    rows.map(|r| r.unwrap()).collect()
}

/// Session row ids whose document the session-level index matches.
fn fts_sessions(store: &Store, word: &str) -> Vec<i64> {
    let mut stmt = store
        .conn()
        .prepare("SELECT rowid FROM sessions_fts WHERE sessions_fts MATCH ?1 ORDER BY rowid")
        .unwrap();
    let rows = stmt.query_map([word], |r| r.get(0)).unwrap();
    rows.map(|r| r.unwrap()).collect()
}

fn row(store: &Store, id: &str) -> crate::SessionRow {
    store.session_row("test", id).unwrap().unwrap()
}

const FIVE: [&str; 5] = ["zero", "one", "two", "three", "four"];

#[test]
fn applying_the_same_sessions_twice_changes_nothing() {
    let (_dir, mut store) = open();
    let sessions = [session("a", &FIVE), session("b", &["alpha", "beta"])];
    let first = store.apply(&file("/t"), &sessions).unwrap();
    assert_eq!(
        first,
        Applied {
            sessions_added: 2,
            messages_added: 7,
            ..Applied::default()
        }
    );
    embed_all(&mut store);
    let before = (
        row(&store, "a").row,
        row(&store, "b").row,
        messages(&store, "a"),
        messages(&store, "b"),
        units(&store, "a"),
        units(&store, "b"),
    );
    assert!(before.4.iter().chain(&before.5).all(Option::is_some));

    let second = store.apply(&file("/t"), &sessions).unwrap();
    assert_eq!(second, Applied::default());
    let after = (
        row(&store, "a").row,
        row(&store, "b").row,
        messages(&store, "a"),
        messages(&store, "b"),
        units(&store, "a"),
        units(&store, "b"),
    );
    assert_eq!(after, before);
    assert_eq!(store.pending_count().unwrap(), 0);
    assert!(trash(&store).is_empty());
}

#[test]
fn appended_messages_are_added_and_the_old_last_one_loses_its_units() {
    let (_dir, mut store) = open();
    store
        .apply(&file("/t"), &[session("a", &FIVE[..3])])
        .unwrap();
    embed_all(&mut store);
    let old = messages(&store, "a");
    let old_units = units(&store, "a");

    let applied = store.apply(&file("/t"), &[session("a", &FIVE)]).unwrap();
    assert_eq!(
        applied,
        Applied {
            sessions_updated: 1,
            messages_added: 2,
            ..Applied::default()
        }
    );
    let now = messages(&store, "a");
    assert_eq!(now.len(), 5);
    assert_eq!(now[..3], old[..], "the earlier messages keep their rows");
    assert_eq!(row(&store, "a").message_count, 5);
    // The old last message was embedded with no next message as context:
    // its unit goes; the two before it keep theirs.
    assert_eq!(
        units(&store, "a"),
        [old_units[0], old_units[1], None, None, None]
    );
    assert_eq!(trash(&store), [old_units[2].unwrap()]);
    let pending: Vec<i64> = store
        .pending_page(0, 100)
        .unwrap()
        .iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(pending, [now[2].0, now[3].0, now[4].0]);
    assert_eq!(fts_sessions(&store, "four"), [row(&store, "a").row]);
}

#[test]
fn a_changed_message_invalidates_its_units_and_its_neighbours_only() {
    let (_dir, mut store) = open();
    store.apply(&file("/t"), &[session("a", &FIVE)]).unwrap();
    store.apply(&file("/u"), &[session("b", &FIVE)]).unwrap();
    embed_all(&mut store);
    let old = messages(&store, "a");
    let old_units = units(&store, "a");
    let other_units = units(&store, "b");

    let mut changed = FIVE;
    changed[2] = "zebra";
    let applied = store.apply(&file("/t"), &[session("a", &changed)]).unwrap();
    assert_eq!(
        applied,
        Applied {
            sessions_updated: 1,
            messages_changed: 1,
            ..Applied::default()
        }
    );
    let now = messages(&store, "a");
    // Same rows, the middle one with its new text.
    assert_eq!(
        now.iter().map(|m| m.0).collect::<Vec<_>>(),
        old.iter().map(|m| m.0).collect::<Vec<_>>()
    );
    assert_eq!(now[2].1, "zebra");
    // Units are embedded with the neighbouring messages as context
    // (`PendingMessage::previous`/`next`): the changed message's and
    // those of the messages right before and after it go, the others
    // stay, and so does every unit of another session.
    assert_eq!(
        units(&store, "a"),
        [old_units[0], None, None, None, old_units[4]]
    );
    assert_eq!(units(&store, "b"), other_units);
    assert_eq!(
        trash(&store),
        [
            old_units[1].unwrap(),
            old_units[2].unwrap(),
            old_units[3].unwrap()
        ]
    );
    // The full-text indexes follow the new text.
    assert_eq!(fts_messages(&store, "zebra"), [now[2].0]);
    assert!(!fts_messages(&store, "two").contains(&now[2].0));
    assert_eq!(fts_sessions(&store, "zebra"), [row(&store, "a").row]);
    assert_eq!(fts_sessions(&store, "two"), [row(&store, "b").row]);

    // Re-embedding restores every unit; the untouched ones keep their ids.
    embed_all(&mut store);
    let again = units(&store, "a");
    assert!(again.iter().all(Option::is_some));
    assert_eq!((again[0], again[4]), (old_units[0], old_units[4]));
}

#[test]
fn a_new_timestamp_alone_is_recorded_without_touching_the_units() {
    let (_dir, mut store) = open();
    store.apply(&file("/t"), &[session("a", &FIVE)]).unwrap();
    embed_all(&mut store);
    let old_units = units(&store, "a");
    let mut later = session("a", &FIVE);
    later.messages[1].timestamp_ms = 42;
    later.messages[1].native_id = Some("n1".into());
    assert_eq!(
        store.apply(&file("/t"), &[later]).unwrap(),
        Applied::default()
    );
    assert_eq!(units(&store, "a"), old_units);
    let loaded = store.load_session(&row(&store, "a")).unwrap();
    assert_eq!(loaded.messages[1].timestamp_ms, 42);
    assert_eq!(loaded.messages[1].native_id.as_deref(), Some("n1"));
}

#[test]
fn a_session_loads_with_its_header_as_stored_now() {
    let (_dir, mut store) = open();
    store.apply(&file("/t"), &[session("a", &FIVE)]).unwrap();
    // A header read before a writer changed the session.
    let stale = row(&store, "a");
    let mut later = session("a", &FIVE);
    later.title = Some("renamed".into());
    later.messages.push(Message {
        role: Role::Assistant,
        text: "one more".into(),
        timestamp_ms: 0,
        native_id: None,
    });
    store.apply(&file("/t"), &[later]).unwrap();
    let loaded = store.load_session(&stale).unwrap();
    // The header comes from the same snapshot as the messages.
    assert_eq!(loaded.title.as_deref(), Some("renamed"));
    assert_eq!(loaded.messages.len(), FIVE.len() + 1);
    // And the read leaves no transaction open: a writer goes on.
    assert!(store.conn().is_autocommit());
    store.apply(&file("/t"), &[session("a", &FIVE)]).unwrap();
}

#[test]
fn a_new_role_alone_is_a_change() {
    let (_dir, mut store) = open();
    store.apply(&file("/t"), &[session("a", &FIVE)]).unwrap();
    let mut other = session("a", &FIVE);
    other.messages[4].role = Role::Assistant;
    let applied = store.apply(&file("/t"), &[other]).unwrap();
    assert_eq!(applied.messages_changed, 1, "{applied:?}");
    let loaded = store.load_session(&row(&store, "a")).unwrap();
    assert_eq!(loaded.messages[4].role, Role::Assistant);
}

#[test]
fn lost_messages_are_removed_and_the_new_last_one_loses_its_units() {
    let (_dir, mut store) = open();
    store.apply(&file("/t"), &[session("a", &FIVE)]).unwrap();
    embed_all(&mut store);
    let old = messages(&store, "a");
    let old_units = units(&store, "a");

    let applied = store
        .apply(&file("/t"), &[session("a", &FIVE[..3])])
        .unwrap();
    assert_eq!(
        applied,
        Applied {
            sessions_updated: 1,
            messages_removed: 2,
            ..Applied::default()
        }
    );
    assert_eq!(messages(&store, "a"), old[..3]);
    assert_eq!(row(&store, "a").message_count, 3);
    // The new last message lost the next message it was embedded with.
    assert_eq!(units(&store, "a"), [old_units[0], old_units[1], None]);
    assert_eq!(
        trash(&store),
        [
            old_units[2].unwrap(),
            old_units[3].unwrap(),
            old_units[4].unwrap()
        ]
    );
    assert!(fts_messages(&store, "four").is_empty());
    assert!(fts_sessions(&store, "four").is_empty());
    assert_eq!(fts_sessions(&store, "two"), [row(&store, "a").row]);
}

#[test]
fn a_message_removed_from_the_middle_shifts_the_later_ones() {
    let (_dir, mut store) = open();
    store.apply(&file("/t"), &[session("a", &FIVE)]).unwrap();
    embed_all(&mut store);
    let old = messages(&store, "a");
    let old_units = units(&store, "a");

    // Messages are keyed by position: dropping "two" changes positions
    // 2 and 3 and removes position 4.
    let applied = store
        .apply(
            &file("/t"),
            &[session("a", &["zero", "one", "three", "four"])],
        )
        .unwrap();
    assert_eq!(
        (applied.messages_changed, applied.messages_removed),
        (2, 1),
        "{applied:?}"
    );
    let now = messages(&store, "a");
    assert_eq!(
        now.iter().map(|m| m.1.as_str()).collect::<Vec<_>>(),
        ["zero", "one", "three", "four"]
    );
    assert_eq!(now[..2], old[..2]);
    assert_eq!(units(&store, "a"), [old_units[0], None, None, None]);
}

#[test]
fn a_better_copy_in_another_file_takes_the_session_over() {
    let (_dir, mut store) = open();
    let mut a = session("s", &["x", "y"]);
    a.updated_at_ms = 1;
    store.apply(&file("/a"), &[a.clone()]).unwrap();
    embed_all(&mut store);
    let old = messages(&store, "s");
    let old_units = units(&store, "s");
    let session_row = row(&store, "s").row;

    // A later copy with one more message, in another file.
    let mut b = session("s", &["x", "y", "z"]);
    b.updated_at_ms = 2;
    let applied = store.apply(&file("/b"), &[b]).unwrap();
    assert_eq!(
        applied,
        Applied {
            sessions_updated: 1,
            messages_added: 1,
            ..Applied::default()
        }
    );
    let now = row(&store, "s");
    assert_eq!(now.row, session_row);
    assert_eq!(now.source_path.as_deref(), Some("/b"));
    assert!(now.has_source);
    assert_eq!(messages(&store, "s")[..2], old[..]);
    assert_eq!(units(&store, "s"), [old_units[0], None, None]);

    // The first file read again with its older copy: superseded.
    let applied = store.apply(&file("/a"), &[a]).unwrap();
    assert_eq!(
        applied,
        Applied {
            sessions_superseded: 1,
            ..Applied::default()
        }
    );
    assert_eq!(messages(&store, "s").len(), 3);
    // The first file read again without it: the session is not its
    // any more, so nothing is orphaned.
    let applied = store.apply(&file("/a"), &[]).unwrap();
    assert_eq!(applied, Applied::default());
    assert_eq!(row(&store, "s").source_path.as_deref(), Some("/b"));
}

#[test]
fn a_copy_of_higher_precedence_moves_the_session_and_keeps_its_units() {
    let (_dir, mut store) = open();
    store.apply(&file("/a"), &[session("s", &FIVE)]).unwrap();
    embed_all(&mut store);
    let old = (messages(&store, "s"), units(&store, "s"));
    let mut better = session("s", &FIVE);
    better.precedence = 1;
    let applied = store.apply(&file("/b"), &[better]).unwrap();
    assert_eq!(
        applied,
        Applied {
            sessions_updated: 1,
            ..Applied::default()
        }
    );
    assert_eq!(row(&store, "s").source_path.as_deref(), Some("/b"));
    assert_eq!((messages(&store, "s"), units(&store, "s")), old);
    assert!(trash(&store).is_empty());
}

#[test]
fn an_equal_or_lower_ranked_copy_in_another_file_is_superseded() {
    let (_dir, mut store) = open();
    let mut first = session("s", &["x", "y"]);
    first.precedence = 1;
    first.updated_at_ms = 5;
    store.apply(&file("/a"), &[first.clone()]).unwrap();
    embed_all(&mut store);
    let old = (messages(&store, "s"), units(&store, "s"));

    // The same rank, other text.
    let mut equal = session("s", &["x", "changed"]);
    equal.precedence = 1;
    equal.updated_at_ms = 5;
    // Lower precedence, though later and longer.
    let mut lower = session("s", &["x", "y", "z", "w"]);
    lower.precedence = 0;
    lower.updated_at_ms = 9;
    for copy in [equal, lower] {
        let applied = store.apply(&file("/b"), &[copy]).unwrap();
        assert_eq!(
            applied,
            Applied {
                sessions_superseded: 1,
                ..Applied::default()
            }
        );
        assert_eq!((messages(&store, "s"), units(&store, "s")), old);
        assert_eq!(row(&store, "s").source_path.as_deref(), Some("/a"));
    }
    assert!(trash(&store).is_empty());
}

#[test]
fn a_session_that_leaves_its_file_is_kept_and_any_copy_may_claim_it() {
    let (_dir, mut store) = open();
    let mut first = session("s", &["x", "y"]);
    first.precedence = 3;
    store
        .apply(&file("/a"), &[first, session("t", &["other"])])
        .unwrap();
    let applied = store
        .apply(&file("/a"), &[session("t", &["other"])])
        .unwrap();
    assert_eq!(
        applied,
        Applied {
            sessions_orphaned: 1,
            ..Applied::default()
        }
    );
    let orphan = row(&store, "s");
    assert!(!orphan.has_source);
    assert_eq!(orphan.source_path.as_deref(), Some("/a"));
    assert_eq!(messages(&store, "s").len(), 2);
    assert!(row(&store, "t").has_source);

    // With no file holding it, even a copy of lower precedence is taken.
    let applied = store
        .apply(&file("/b"), &[session("s", &["x", "y", "z"])])
        .unwrap();
    assert_eq!(
        applied,
        Applied {
            sessions_updated: 1,
            messages_added: 1,
            ..Applied::default()
        }
    );
    assert_eq!(messages(&store, "s").len(), 3);
    let claimed = row(&store, "s");
    assert_eq!(claimed.row, orphan.row);
    assert!(claimed.has_source);
    assert_eq!(claimed.source_path.as_deref(), Some("/b"));
}

#[test]
fn of_two_copies_in_one_file_the_winning_one_is_stored() {
    let (_dir, mut store) = open();
    let mut low = session("s", &["low", "copy", "longer"]);
    low.precedence = 0;
    let mut high = session("s", &["high"]);
    high.precedence = 1;
    let applied = store
        .apply(&file("/a"), &[low.clone(), high.clone(), low])
        .unwrap();
    assert_eq!(
        applied,
        Applied {
            sessions_added: 1,
            messages_added: 1,
            ..Applied::default()
        }
    );
    assert_eq!(
        messages(&store, "s")
            .into_iter()
            .map(|m| m.1)
            .collect::<Vec<_>>(),
        ["high"]
    );
    // Equal copies: the first one read wins.
    let (_dir2, mut store2) = open();
    store2
        .apply(
            &file("/a"),
            &[session("s", &["first"]), session("s", &["second"])],
        )
        .unwrap();
    assert_eq!(messages(&store2, "s")[0].1, "first");
}

#[test]
fn a_forgotten_session_is_not_added_again() {
    let (_dir, mut store) = open();
    let sessions = [session("a", &["quokka"]), session("b", &["wombat"])];
    store.apply(&file("/t"), &sessions).unwrap();
    embed_all(&mut store);
    assert_eq!(store.forget(&[row(&store, "a")]).unwrap(), 1);

    // The same transcript again, and a copy of it in another file.
    for (path, sessions) in [("/t", &sessions[..]), ("/u", &sessions[..1])] {
        let applied = store.apply(&file(path), sessions).unwrap();
        assert_eq!(
            applied,
            Applied {
                sessions_forgotten: 1,
                ..Applied::default()
            },
            "{path}"
        );
        assert!(store.session_row("test", "a").unwrap().is_none());
        assert!(messages(&store, "a").is_empty());
        assert!(fts_messages(&store, "quokka").is_empty());
        assert!(fts_sessions(&store, "quokka").is_empty());
    }
    // Other sessions of the file are still applied as usual.
    let applied = store
        .apply(&file("/t"), &[sessions[0].clone(), session("b", &["emu"])])
        .unwrap();
    assert_eq!(
        applied,
        Applied {
            sessions_forgotten: 1,
            sessions_updated: 1,
            messages_changed: 1,
            ..Applied::default()
        }
    );
    assert_eq!(store.pending_count().unwrap(), 1);
}

#[test]
fn files_and_commands_are_replaced_not_appended() {
    let (_dir, mut store) = open();
    let mut s = session("a", &["x"]);
    s.files = vec![FileRecord {
        path: "src/main.rs".into(),
        action: "edit",
        timestamp_ms: 0,
        text: None,
    }];
    for _ in 0..2 {
        store.apply(&file("/t"), &[s.clone()]).unwrap();
    }
    let count = |store: &Store| -> i64 {
        store
            .conn()
            .query_row("SELECT count(*) FROM files", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(count(&store), 1);
    s.files.clear();
    store.apply(&file("/t"), &[s]).unwrap();
    assert_eq!(count(&store), 0);
}

#[test]
fn counts_add_up() {
    let mut total = Applied {
        sessions_added: 1,
        messages_added: 2,
        ..Applied::default()
    };
    total.add(&Applied {
        sessions_added: 1,
        sessions_updated: 2,
        sessions_forgotten: 3,
        sessions_superseded: 4,
        sessions_orphaned: 5,
        messages_added: 6,
        messages_changed: 7,
        messages_removed: 8,
    });
    assert_eq!(
        total,
        Applied {
            sessions_added: 2,
            sessions_updated: 2,
            sessions_forgotten: 3,
            sessions_superseded: 4,
            sessions_orphaned: 5,
            messages_added: 8,
            messages_changed: 7,
            messages_removed: 8,
        }
    );
}

#[test]
fn pending_messages_come_newest_session_first_and_the_walk_resumes() {
    let (_dir, mut store) = open();
    let at = |id: &str, texts: &[&str], day: i64| Session {
        started_at_ms: day * 86_400_000,
        ..session(id, texts)
    };
    let sessions = [
        at("old", &["o1", "o2"], 1),
        at("new", &["n1", "n2", "n3"], 30),
        at("mid", &["m1"], 10),
    ];
    store.apply(&file("/t"), &sessions).unwrap();
    assert_eq!(
        store.coverage().unwrap(),
        crate::embedding::Coverage {
            pending: 6,
            waiting_since: Some(30 * 86_400_000),
            partial: 0,
        }
    );
    // Pages of two: the walk goes on where it stopped, nothing twice.
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let (page, last) = store.pending_newest(Due::Units, after, 2).unwrap();
        if page.is_empty() {
            break;
        }
        after = last;
        seen.extend(page.into_iter().map(|m| m.text));
    }
    assert_eq!(seen, ["n1", "n2", "n3", "m1", "o1", "o2"]);
    // The newest session embedded: coverage reaches back to the next one.
    let (page, _) = store.pending_newest(Due::Units, None, 3).unwrap();
    embed(&mut store, &page);
    let c = store.coverage().unwrap();
    assert_eq!((c.pending, c.waiting_since), (3, Some(10 * 86_400_000)));
    assert_eq!(store.recorded_coverage().unwrap(), None);
    assert_eq!(store.record_coverage().unwrap(), c);
    assert_eq!(store.recorded_coverage().unwrap(), Some(c));
    // A run that begins forgets the record; cut short after embedding
    // more, the coverage reported is what the store holds, not the record.
    store.forget_recorded_coverage().unwrap();
    let (page, _) = store.pending_newest(Due::Units, None, 1).unwrap();
    embed(&mut store, &page);
    assert_eq!(store.recorded_coverage().unwrap(), None);
    let now = store.current_coverage().unwrap();
    assert_eq!(now, store.coverage().unwrap());
    assert_eq!((now.pending, now.waiting_since), (2, Some(86_400_000)));
    embed_all(&mut store);
    assert_eq!(store.coverage().unwrap().waiting_since, None);
    store.record_coverage().unwrap();
    assert_eq!(
        store.recorded_coverage().unwrap(),
        Some(crate::embedding::Coverage {
            pending: 0,
            waiting_since: None,
            partial: 0,
        })
    );
    // A newer session read (recall's freshness pass reads without
    // embedding) makes the record stale: it is dropped, and counted again.
    store
        .apply(&file("/u"), &[at("newer", &["x1"], 40)])
        .unwrap();
    assert_eq!(store.recorded_coverage().unwrap(), None);
    let now = store.current_coverage().unwrap();
    assert_eq!((now.pending, now.waiting_since), (1, Some(40 * 86_400_000)));
}

#[test]
fn sessions_dated_by_their_file_time_are_embedded_after_every_dated_one() {
    let (_dir, mut store) = open();
    let at = |id: &str, texts: &[&str], day: i64, approximate: bool| Session {
        started_at_ms: day * 86_400_000,
        date_approximate: approximate,
        ..session(id, texts)
    };
    let sessions = [
        at("copied", &["c1", "c2"], 90, true),
        at("old", &["o1"], 1, false),
        at("new", &["n1"], 30, false),
        at("copied-before", &["b1"], 60, true),
    ];
    store.apply(&file("/t"), &sessions).unwrap();
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let (page, last) = store.pending_newest(Due::Units, after, 2).unwrap();
        if page.is_empty() {
            break;
        }
        after = last;
        seen.extend(page.into_iter().map(|m| m.text));
    }
    assert_eq!(seen, ["n1", "o1", "c1", "c2", "b1"]);
}

/// Units of `message` with these ordinals, each keyed by `text` and the
/// ordinal.
fn units_of(message: i64, text: &str, ordinals: &[usize]) -> Vec<Unit> {
    ordinals
        .iter()
        .map(|&ordinal| Unit {
            message,
            ordinal,
            text_hash: format!("{text}#{ordinal}"),
        })
        .collect()
}

/// Message → windows, as recall reads them with the messages of every unit.
fn windows_of_units(store: &Store) -> std::collections::HashMap<i64, usize> {
    let keys: Vec<u64> = store
        .conn()
        .prepare("SELECT id FROM chunks")
        .unwrap()
        .query_map([], |r| r.get::<_, i64>(0))
        .unwrap()
        .map(|k| k.unwrap() as u64)
        .collect();
    store
        .messages_of_units(&keys)
        .unwrap()
        .into_values()
        .collect()
}

#[test]
fn a_message_embedded_in_part_waits_for_the_rest_until_it_is_complete_or_changes() {
    let (_dir, mut store) = open();
    let day = |id: &str, texts: &[&str], d: i64| Session {
        started_at_ms: d * 86_400_000,
        ..session(id, texts)
    };
    store
        .apply(
            &file("/t"),
            &[day("a", &["long a", "short"], 2), day("b", &["long b"], 1)],
        )
        .unwrap();
    let (page, _) = store.pending_newest(Due::Units, None, 10).unwrap();
    assert_eq!(page.len(), 3);
    let ids: Vec<i64> = page.iter().map(|m| m.id).collect();
    let (long_a, short, long_b) = (ids[0], ids[1], ids[2]);
    // A first pass: the long messages get windows 0 and 3 of four, the short
    // one its only window.
    let mut units = units_of(long_a, "a", &[0, 3]);
    units.extend(units_of(short, "s", &[0]));
    units.extend(units_of(long_b, "b", &[0, 3]));
    let v = [1.0f32, 0.0];
    let vectors: Vec<(&str, &[f32])> = units
        .iter()
        .map(|u| (u.text_hash.as_str(), &v[..]))
        .collect();
    store
        .add_page("m", &vectors, &units, &[long_a, long_b])
        .unwrap();
    assert_eq!(store.pending_count().unwrap(), 0);
    let c = store.coverage().unwrap();
    assert_eq!((c.pending, c.waiting_since, c.partial), (0, None, 2));
    store.record_coverage().unwrap();
    assert_eq!(store.recorded_coverage().unwrap(), Some(c));

    // The rest, newest first, with the ordinals each already has.
    let (rest, _) = store.pending_newest(Due::Rest, None, 10).unwrap();
    let got: Vec<(i64, Vec<usize>)> = rest.iter().map(|m| (m.id, m.embedded.clone())).collect();
    assert_eq!(got, [(long_a, vec![0, 3]), (long_b, vec![0, 3])]);
    assert_eq!(store.due_count(Due::Rest).unwrap(), 2);

    // Completing one leaves the other waiting.
    let more = units_of(long_a, "a", &[1, 2]);
    let vectors: Vec<(&str, &[f32])> = more
        .iter()
        .map(|u| (u.text_hash.as_str(), &v[..]))
        .collect();
    assert_eq!(
        windows_of_units(&store),
        [(long_a, 2), (short, 1), (long_b, 2)].into()
    );
    store.add_units("m", &vectors, &more).unwrap();
    let (rest, _) = store.pending_newest(Due::Rest, None, 10).unwrap();
    assert_eq!(rest.iter().map(|m| m.id).collect::<Vec<_>>(), [long_b]);
    // Recall counts the windows a message has in the store.
    assert_eq!(
        windows_of_units(&store),
        [(long_a, 4), (short, 1), (long_b, 2)].into()
    );

    // A changed message loses its units and its place in the second pass:
    // it is embedded anew from its first.
    store
        .apply(
            &file("/t"),
            &[
                day("a", &["long a", "short"], 2),
                day("b", &["long b, edited"], 1),
            ],
        )
        .unwrap();
    assert_eq!(store.partial_count().unwrap(), 0);
    let (page, _) = store.pending_newest(Due::Units, None, 10).unwrap();
    assert_eq!(
        page.iter().map(|m| m.text.as_str()).collect::<Vec<_>>(),
        ["long b, edited"]
    );
    assert!(page[0].embedded.is_empty());

    // Dropping the units (another model) drops every partial mark too.
    let units = units_of(page[0].id, "b2", &[0]);
    let vectors: Vec<(&str, &[f32])> = units
        .iter()
        .map(|u| (u.text_hash.as_str(), &v[..]))
        .collect();
    store
        .add_page("m", &vectors, &units, &[page[0].id])
        .unwrap();
    assert_eq!(store.partial_count().unwrap(), 1);
    store
        .reset_units(&_dir.path().join("vectors.usearch"))
        .unwrap();
    assert_eq!(store.partial_count().unwrap(), 0);
}

#[test]
fn sessions_found_in_a_code_folder_are_labelled_and_filters_can_leave_them_out() {
    let (_dir, mut store) = open();
    store
        .apply(&file("/own"), &[session("own", &["mine"])])
        .unwrap();
    store
        .apply_found(
            &file("/src/x/.crush/crush.db"),
            &[session("cloned", &["planted"])],
            Found::InCodeFolder,
        )
        .unwrap();
    assert!(!row(&store, "own").in_code_folder);
    assert!(row(&store, "cloned").in_code_folder);
    let ids = |filter: &crate::SessionFilter| -> Vec<String> {
        let mut ids: Vec<String> = store
            .sessions(filter, None)
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(ids(&crate::SessionFilter::default()), ["cloned", "own"]);
    let agents = crate::SessionFilter {
        skip_code_folders: true,
        ..Default::default()
    };
    assert!(!agents.is_empty());
    assert_eq!(ids(&agents), ["own"]);
    // Read again from its own place, it is this machine's own again.
    store
        .apply(
            &file("/src/x/.crush/crush.db"),
            &[session("cloned", &["planted"])],
        )
        .unwrap();
    assert!(!row(&store, "cloned").in_code_folder);
}

#[test]
fn a_transcript_no_longer_read_leaves_its_sessions_labelled() {
    let (_dir, mut store) = open();
    store
        .apply(
            &file("/src/cloned/.aider.chat.history.md"),
            &[session("a", &["x"])],
        )
        .unwrap();
    assert_eq!(
        store
            .label_found_in_code_folder("test", "/src/cloned/.aider.chat.history.md")
            .unwrap(),
        1
    );
    assert!(row(&store, "a").in_code_folder);
    assert_eq!(
        store
            .label_found_in_code_folder("test", "/src/cloned/.aider.chat.history.md")
            .unwrap(),
        0
    );
}

/// The messages `waiting_units` lists, and those the rule it keeps selects.
fn waiting(store: &Store) -> (Vec<i64>, Vec<i64>) {
    let ids = |sql: &str| -> Vec<i64> {
        let mut stmt = store.conn().prepare(sql).unwrap();
        let rows = stmt.query_map([], |r| r.get(0)).unwrap();
        rows.map(|r| r.unwrap()).collect()
    };
    (
        ids("SELECT message FROM waiting_units ORDER BY message"),
        ids(&format!(
            "SELECT m.id FROM messages m WHERE {} ORDER BY m.id",
            crate::embedding::WITHOUT_UNITS
        )),
    )
}

#[track_caller]
fn waiting_agrees(store: &Store, what: &str) -> usize {
    let (listed, rule) = waiting(store);
    assert_eq!(listed, rule, "{what}");
    assert_eq!(
        store.pending_count().unwrap(),
        listed.len() as i64,
        "{what}"
    );
    listed.len()
}

#[test]
fn the_list_of_waiting_messages_follows_messages_and_units() {
    let (dir, mut store) = open();
    let a = |texts: &[&str]| vec![session("a", texts), session("b", &["emu"])];
    store
        .apply(&file("/t"), &a(&["one", "  \n", "three", "four", "five"]))
        .unwrap();
    assert_eq!(
        waiting_agrees(&store, "added"),
        5,
        "the blank one never waits"
    );
    embed_all(&mut store);
    assert_eq!(waiting_agrees(&store, "embedded"), 0);
    // A changed message waits again, and so do its neighbours (their
    // context changed); a blank neighbour does not.
    store
        .apply(&file("/t"), &a(&["one", "  \n", "3", "four", "five"]))
        .unwrap();
    assert_eq!(waiting_agrees(&store, "changed"), 2);
    // A message made blank stops waiting; one cut off goes with its row.
    store
        .apply(&file("/t"), &a(&["one", "  \n", "\t", "four"]))
        .unwrap();
    assert_eq!(waiting_agrees(&store, "blanked and cut"), 1);
    // A blank message given text waits.
    store
        .apply(&file("/t"), &a(&["one", "now words", "\t", "four"]))
        .unwrap();
    waiting_agrees(&store, "filled");
    embed_all(&mut store);
    assert_eq!(waiting_agrees(&store, "embedded again"), 0);
    // A forgotten session's messages go, waiting or not.
    store
        .apply(&file("/t"), &a(&["one", "now words", "\t", "four", "new"]))
        .unwrap();
    let row = store.session_row("test", "a").unwrap().unwrap();
    store.forget(&[row]).unwrap();
    assert_eq!(waiting_agrees(&store, "forgotten"), 0);
    // Dropping every unit (another model) makes every message wait.
    store
        .apply(&file("/u"), &[session("c", &["x", "y"])])
        .unwrap();
    embed_all(&mut store);
    store
        .reset_units(&dir.path().join("vectors.usearch"))
        .unwrap();
    assert_eq!(waiting_agrees(&store, "units reset"), 3);
}

#[test]
fn a_store_of_schema_thirteen_lists_its_waiting_messages_when_opened() {
    let (dir, mut store) = open();
    store
        .apply(&file("/t"), &[session("a", &["one", " ", "three"])])
        .unwrap();
    let pending = store.pending_page(0, 1).unwrap();
    embed(&mut store, &pending);
    store
        .conn()
        .execute_batch(
            "DROP TRIGGER messages_wait_ai; DROP TRIGGER messages_wait_au;
             DROP TRIGGER chunks_wait_ai; DROP TRIGGER chunks_wait_ad;
             DROP TABLE waiting_units; DROP INDEX sessions_project_dir;
             PRAGMA user_version = 13;",
        )
        .unwrap();
    drop(store);
    let store = Store::open(&dir.path().join("index.sqlite")).unwrap();
    assert_eq!(waiting_agrees(&store, "migrated"), 1);
}
