//! Tests of the segmented vector index: searches merged across segments,
//! erasure rewriting only the segments that held the erased units, crashes
//! between a segment's save and the store's record of it, and the migration
//! of a single file from before segments.

#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::tests::{
    apply, embed, file_holds, holds_exactly_the_units, max_unit, noise, setup, stamp_model,
    stored_units_of, DIMS,
};
use super::*;
use crate::embedding::Unit;
use std::os::unix::fs::MetadataExt;

/// Gives every message waiting for units one unit whose vector is noise of
/// `dims` seeded by its message id.
fn embed_noise(store: &mut Store, model: &str, dims: usize) {
    let pending = store.pending_page(0, 1000).unwrap();
    let units: Vec<Unit> = pending
        .iter()
        .map(|m| Unit {
            message: m.id,
            ordinal: 0,
            text_hash: m.text.clone(),
        })
        .collect();
    let vectors: Vec<Vec<f32>> = pending.iter().map(|m| noise(m.id as u64, dims)).collect();
    let pairs: Vec<(&str, &[f32])> = units
        .iter()
        .zip(&vectors)
        .map(|(u, v)| (u.text_hash.as_str(), v.as_slice()))
        .collect();
    store.add_units(model, &pairs, &units).unwrap();
}

/// Each segment file: its number, inode and bytes.
fn files(path: &Path) -> Vec<(usize, u64, Vec<u8>)> {
    segment_files(path)
        .into_iter()
        .map(|(n, f)| {
            let ino = std::fs::metadata(&f).unwrap().ino();
            (n, ino, std::fs::read(&f).unwrap())
        })
        .collect()
}

/// Whether any segment file holds `needle`.
fn any_file_holds(path: &Path, needle: &[u8]) -> bool {
    segment_files(path)
        .iter()
        .any(|(_, f)| file_holds(f, needle))
}

/// The chunk ids of session `id`.
fn keys_of(store: &Store, id: &str) -> Vec<i64> {
    let row = store.session_row("test", id).unwrap().unwrap();
    let mut stmt = store
        .conn()
        .prepare(
            "SELECT c.id FROM chunks c JOIN messages m ON m.id = c.message WHERE m.session = ?1",
        )
        .unwrap();
    let keys = stmt.query_map([row.row], |r| r.get(0)).unwrap();
    keys.map(|k| k.unwrap()).collect()
}

/// Three sessions of three units each, synced in segments of four ids:
/// `a` in segment 0, `b` across 0 and 1, `c` across 1 and 2.
fn three_sessions() -> (tempfile::TempDir, Store, PathBuf) {
    let (dir, mut store, path) = setup();
    apply(&mut store, "a", &["alpha one", "alpha two", "alpha three"]);
    apply(&mut store, "b", &["bravo one", "bravo two", "bravo three"]);
    apply(
        &mut store,
        "c",
        &["charlie one", "charlie two", "charlie three"],
    );
    embed(&mut store, "m");
    stamp_model(&store);
    let report = sync_with(&store, &path, "m", DIMS, Some(4)).unwrap();
    assert_eq!(report.rebuilt, vec![0, 1, 2]);
    let segments = |id: &str| -> BTreeSet<usize> {
        keys_of(&store, id)
            .into_iter()
            .map(|k| segment_of(k, 4))
            .collect()
    };
    assert_eq!(segments("a"), BTreeSet::from([0]));
    assert_eq!(segments("b"), BTreeSet::from([0, 1]));
    assert_eq!(segments("c"), BTreeSet::from([1, 2]));
    (dir, store, path)
}

#[test]
fn segment_files_are_named_after_the_index_and_numbered() {
    let path = Path::new("/d/vectors.usearch");
    assert_eq!(segment_path(path, 0), PathBuf::from("/d/vectors.usearch"));
    assert_eq!(
        segment_path(path, 12),
        PathBuf::from("/d/vectors.12.usearch")
    );
    assert_eq!(segment_of_name(path, "vectors.usearch"), Some(0));
    assert_eq!(segment_of_name(path, "vectors.12.usearch"), Some(12));
    for other in [
        "vectors.0.usearch",
        "vectors.012.usearch",
        "vectors.x.usearch",
        "vectors.1.usearch.tmp-5",
        "other.1.usearch",
        "vectors.1",
    ] {
        assert_eq!(segment_of_name(path, other), None, "{other}");
    }
}

#[test]
fn a_search_over_segments_finds_what_one_index_of_the_same_vectors_finds() {
    const WIDE: usize = 16;
    let (dir, mut store, path) = setup();
    for s in 0..6 {
        let texts: Vec<String> = (0..10)
            .map(|i| format!("session {s} message {i}"))
            .collect();
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        apply(&mut store, &format!("s{s}"), &texts);
    }
    embed_noise(&mut store, "m", WIDE);
    let report = sync_with(&store, &path, "m", WIDE, Some(16)).unwrap();
    assert_eq!(report.rebuilt, vec![0, 1, 2, 3]);
    let segmented = VectorIndex::open(&path, WIDE, true).unwrap();
    assert_eq!(segmented.segment_count(), 4);
    assert_eq!(segmented.len(), 60);

    let mut one = VectorIndex::empty(&dir.path().join("one.usearch"), WIDE).unwrap();
    for (key, v) in all(&store, "m").unwrap() {
        one.add(key, &v).unwrap();
    }
    let even = |k: u64| k.is_multiple_of(2);
    for q in 0..25 {
        let query = noise(10_000 + q, WIDE);
        for (a, b) in [
            (
                segmented.search(&query, 10).unwrap(),
                one.search(&query, 10).unwrap(),
            ),
            (
                segmented.filtered_search(&query, 7, even).unwrap(),
                one.filtered_search(&query, 7, even).unwrap(),
            ),
        ] {
            let keys = |r: &[(u64, f32)]| r.iter().map(|(k, _)| *k).collect::<Vec<_>>();
            assert_eq!(keys(&a), keys(&b), "query {q}");
            for ((_, x), (_, y)) in a.iter().zip(&b) {
                assert!((x - y).abs() < 1e-4, "query {q}: {x} vs {y}");
            }
        }
        // The nearest keys come from more than one segment.
        let from: BTreeSet<usize> = segmented
            .search(&query, 10)
            .unwrap()
            .iter()
            .map(|(k, _)| segment_of(*k as i64, 16))
            .collect();
        assert!(from.len() > 1, "query {q}: {from:?}");
    }
}

#[test]
fn forgetting_a_session_rewrites_only_the_segments_that_held_it() {
    let (_dir, mut store, path) = three_sessions();
    let gone = stored_units_of(&store, &path, "b");
    let kept: Vec<Vec<u8>> = ["a", "c"]
        .iter()
        .flat_map(|id| stored_units_of(&store, &path, id))
        .collect();
    for bytes in &gone {
        assert!(any_file_holds(&path, bytes), "the check below can fail");
        assert!(!kept.contains(bytes));
    }
    let before = files(&path);
    assert_eq!(before.len(), 3);

    let row = store.session_row("test", "b").unwrap().unwrap();
    store.forget(&[row]).unwrap();
    assert!(rebuild_pending(&store).unwrap());
    assert!(!in_sync(&store, &path).unwrap());
    let report = sync_with(&store, &path, "m", DIMS, None).unwrap();
    // Scrubbed in place, not written anew from the table.
    assert_eq!(report.updated, vec![0, 1]);
    assert!(report.rebuilt.is_empty());
    assert!(!rebuild_pending(&store).unwrap());
    assert!(in_sync(&store, &path).unwrap());

    let after = files(&path);
    assert_eq!(after.len(), 3);
    // Segment 2 held none of b's units: the very same file, untouched.
    assert_eq!(after[2], before[2]);
    // Segments 0 and 1 are new files.
    for n in [0, 1] {
        assert_ne!(after[n].1, before[n].1, "segment {n} was not rewritten");
    }
    for bytes in &gone {
        assert!(
            !any_file_holds(&path, bytes),
            "a forgotten vector is on disk"
        );
    }
    for bytes in &kept {
        assert!(any_file_holds(&path, bytes));
    }
    holds_exactly_the_units(&VectorIndex::open(&path, DIMS, false).unwrap(), &store);
}

#[test]
fn new_units_change_only_the_last_segment_files() {
    let (_dir, mut store, path) = three_sessions();
    let before = files(&path);
    // Unit 10 goes to segment 2, beside c's last.
    apply(&mut store, "d", &["delta one"]);
    embed(&mut store, "m");
    let report = sync_with(&store, &path, "m", DIMS, None).unwrap();
    assert_eq!(report.updated, vec![2]);
    assert!(report.rebuilt.is_empty());
    let after = files(&path);
    assert_eq!(after[..2], before[..2]);
    assert_ne!(after[2].2, before[2].2);
    assert_eq!(watermark(&store).unwrap(), max_unit(&store));
    holds_exactly_the_units(&VectorIndex::open(&path, DIMS, true).unwrap(), &store);
    assert!(in_sync(&store, &path).unwrap());
}

/// What the store records of the index (its meta keys and trash), to put
/// back as a crash would have left it.
type Record = (Vec<(String, String)>, Vec<i64>);

fn record(store: &Store) -> Record {
    let conn = store.conn();
    let mut stmt = conn
        .prepare("SELECT key, value FROM meta WHERE key LIKE 'vectors_%'")
        .unwrap();
    let meta = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    let mut stmt = conn.prepare("SELECT key FROM vector_trash").unwrap();
    let trash = stmt
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    (meta, trash)
}

fn restore(store: &Store, (meta, trash): &Record) {
    let conn = store.conn();
    conn.execute("DELETE FROM meta WHERE key LIKE 'vectors_%'", [])
        .unwrap();
    for (k, v) in meta {
        conn.execute("INSERT INTO meta (key, value) VALUES (?1, ?2)", [k, v])
            .unwrap();
    }
    conn.execute("DELETE FROM vector_trash", []).unwrap();
    for key in trash {
        conn.execute("INSERT INTO vector_trash (key) VALUES (?1)", [key])
            .unwrap();
    }
}

#[test]
fn a_crash_between_a_segment_save_and_the_store_record_is_caught_up() {
    for saved in [1, 2, 3] {
        // `saved` segment files were renamed into place before the crash;
        // the store recorded nothing of the sync.
        let (dir, mut store, path) = three_sessions();
        let gone = stored_units_of(&store, &path, "a");
        apply(
            &mut store,
            "d",
            &["delta one", "delta two", "delta three", "delta four"],
        );
        embed(&mut store, "m");
        let row = store.session_row("test", "a").unwrap().unwrap();
        store.forget(&[row]).unwrap();

        let copies = dir.path().join("copies");
        std::fs::create_dir(&copies).unwrap();
        for (n, f) in segment_files(&path) {
            std::fs::copy(f, copies.join(n.to_string())).unwrap();
        }
        let kept = record(&store);
        let report = sync_with(&store, &path, "m", DIMS, None).unwrap();
        // a's units were in segment 0: scrubbed; 1 neither lost nor
        // gained any; 2 takes three of d's units, and the new 3 the last.
        assert_eq!(report.rebuilt, vec![3]);
        assert_eq!(report.updated, vec![0, 2]);
        // Put back the files not yet saved at the crash, and the record.
        let touched = [0usize, 2, 3];
        for n in &touched[saved..] {
            let copy = copies.join(n.to_string());
            let file = segment_path(&path, *n);
            if copy.is_file() {
                std::fs::copy(copy, file).unwrap();
            } else {
                std::fs::remove_file(file).unwrap();
            }
        }
        restore(&store, &kept);
        assert!(rebuild_pending(&store).unwrap());
        assert!(!in_sync(&store, &path).unwrap());

        sync_with(&store, &path, "m", DIMS, None).unwrap();
        assert!(in_sync(&store, &path).unwrap(), "after {saved} saves");
        assert!(!rebuild_pending(&store).unwrap());
        assert_eq!(watermark(&store).unwrap(), max_unit(&store));
        holds_exactly_the_units(&VectorIndex::open(&path, DIMS, false).unwrap(), &store);
        for bytes in &gone {
            assert!(!any_file_holds(&path, bytes), "after {saved} saves");
        }
    }
}

#[test]
fn an_index_file_from_before_segments_is_migrated_without_embedding_again() {
    let (_dir, mut store, path) = setup();
    apply(&mut store, "a", &["alpha one", "alpha two", "alpha three"]);
    apply(&mut store, "b", &["bravo one", "bravo two", "bravo three"]);
    apply(
        &mut store,
        "c",
        &["charlie one", "charlie two", "charlie three"],
    );
    embed(&mut store, "m");
    stamp_model(&store);
    // What earlier versions left: one file with every unit, a watermark
    // and a scalar kind, no segment size.
    let mut legacy = VectorIndex::empty(&path, DIMS).unwrap();
    for (key, v) in all(&store, "m").unwrap() {
        legacy.add(key, &v).unwrap();
    }
    legacy.save_atomic().unwrap();
    drop(legacy);
    store
        .set_meta(WATERMARK, &max_unit(&store).to_string())
        .unwrap();
    store.set_meta(QUANTIZATION, "f16").unwrap();
    assert_eq!(segment_size(&store).unwrap(), None);
    // Readers still find every vector in it.
    holds_exactly_the_units(&VectorIndex::open(&path, DIMS, true).unwrap(), &store);
    assert!(!in_sync(&store, &path).unwrap());

    let embeddings = |s: &Store| -> i64 {
        s.conn()
            .query_row("SELECT count(*) FROM embeddings", [], |r| r.get(0))
            .unwrap()
    };
    let cached = embeddings(&store);
    let report = sync_with(&store, &path, "m", DIMS, Some(4)).unwrap();
    assert_eq!(report.rebuilt, vec![0, 1, 2]);
    assert_eq!(embeddings(&store), cached);
    assert_eq!(segment_size(&store).unwrap(), Some(4));
    assert_eq!(segment_files(&path).len(), 3);
    // The first segment replaced the single file: it holds ids 1 to 4.
    assert_eq!(header_count(&path), Some(4));
    assert_eq!(file_count(&path), Some(9));
    assert!(in_sync(&store, &path).unwrap());
    holds_exactly_the_units(&VectorIndex::open(&path, DIMS, true).unwrap(), &store);
}

#[test]
fn files_of_segments_left_without_units_are_removed() {
    let (_dir, mut store, path) = three_sessions();
    let row = store.session_row("test", "c").unwrap().unwrap();
    store.forget(&[row]).unwrap();
    sync_after_change(&store, &path).unwrap();
    // c's units were the only ones of segment 2.
    assert_eq!(
        segment_files(&path)
            .iter()
            .map(|(n, _)| *n)
            .collect::<Vec<_>>(),
        vec![0, 1]
    );
    assert!(in_sync(&store, &path).unwrap());
    holds_exactly_the_units(&VectorIndex::open(&path, DIMS, true).unwrap(), &store);
}

#[test]
fn a_large_segment_written_anew_by_several_threads_holds_every_unit() {
    const NOISE_DIMS: usize = 16;
    let (_dir, mut store, path) = setup();
    let texts: Vec<String> = (0..100).map(|i| format!("line {i}")).collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let sessions = PARALLEL_FROM / texts.len() + 1;
    for s in 0..sessions {
        apply(&mut store, &format!("s{s}"), &texts);
    }
    let mut after = 0;
    loop {
        let page = store.pending_page(after, 4096).unwrap();
        let Some(last) = page.last() else { break };
        after = last.id;
        let units: Vec<Unit> = page
            .iter()
            .map(|m| Unit {
                message: m.id,
                ordinal: 0,
                text_hash: format!("{}-{}", m.id, m.text),
            })
            .collect();
        let vectors: Vec<Vec<f32>> = page
            .iter()
            .map(|m| noise(m.id as u64, NOISE_DIMS))
            .collect();
        let pairs: Vec<(&str, &[f32])> = units
            .iter()
            .zip(&vectors)
            .map(|(u, v)| (u.text_hash.as_str(), v.as_slice()))
            .collect();
        store.add_units("m", &pairs, &units).unwrap();
    }
    let report = sync_with(&store, &path, "m", NOISE_DIMS, None).unwrap();
    assert_eq!(report.rebuilt, vec![0]);
    let index = VectorIndex::open(&path, NOISE_DIMS, false).unwrap();
    let keys: Vec<(i64, i64)> = {
        let mut stmt = store
            .conn()
            .prepare("SELECT id, message FROM chunks ORDER BY id")
            .unwrap();
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        rows.map(|r| r.unwrap()).collect()
    };
    assert!(keys.len() >= PARALLEL_FROM);
    assert_eq!(index.len(), keys.len());
    let mut buf = Vec::new();
    for (key, message) in &keys {
        assert!(index.vector(*key as u64, &mut buf), "unit {key} is missing");
        let want = noise(*message as u64, NOISE_DIMS);
        let dot: f32 = buf.iter().zip(&want).map(|(a, b)| a * b).sum();
        assert!(dot > 0.999, "unit {key}: {dot}");
    }
    // The graph is searchable: a unit's own vector finds it.
    let found = keys
        .iter()
        .step_by(97)
        .filter(|(key, message)| {
            let hit = index
                .search(&noise(*message as u64, NOISE_DIMS), 1)
                .unwrap();
            hit.first().map(|h| h.0) == Some(*key as u64)
        })
        .count();
    let asked = keys.iter().step_by(97).count();
    assert!(found * 100 >= asked * 95, "{found} of {asked}");
}
