//! Tests of the vector index: syncing, rebuilding, crashes between the
//! steps, and erasure leaving no vector of removed text on disk.

#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;
use crate::embedding::Unit;
use crate::ingest::FileState;
use crate::test_support::session;
use std::collections::BTreeSet;

pub(super) const DIMS: usize = 4;

pub(super) fn apply(store: &mut Store, id: &str, texts: &[&str]) {
    let file = FileState {
        harness: "test",
        path: &format!("/{id}"),
        size: 1,
        mtime_ns: 1,
        hash: "h",
        reader: "test 1",
        settings: "",
    };
    store.apply(&file, &[session(id, texts)]).unwrap();
}

/// A vector of its own for each text (small integers, exact in f16).
pub(super) fn vector_of(text: &str) -> Vec<f32> {
    let mut v = vec![1.0f32; DIMS];
    for (i, b) in text.bytes().enumerate() {
        v[i % DIMS] += f32::from(b % 16);
    }
    v
}

/// Gives every message waiting for units one unit (keyed by its text),
/// its vector cached under `model`.
pub(super) fn embed(store: &mut Store, model: &str) {
    let pending = store.pending_page(0, 1000).unwrap();
    let units: Vec<Unit> = pending
        .iter()
        .map(|m| Unit {
            message: m.id,
            ordinal: 0,
            text_hash: m.text.clone(),
        })
        .collect();
    let vectors: Vec<Vec<f32>> = units.iter().map(|u| vector_of(&u.text_hash)).collect();
    let pairs: Vec<(&str, &[f32])> = units
        .iter()
        .zip(&vectors)
        .map(|(u, v)| (u.text_hash.as_str(), v.as_slice()))
        .collect();
    store.add_units(model, &pairs, &units).unwrap();
}

/// Every unit: chunk id → the text it was keyed by.
pub(super) fn units(store: &Store) -> HashMap<u64, String> {
    let mut stmt = store
        .conn()
        .prepare("SELECT id, text_hash FROM chunks")
        .unwrap();
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, i64>(0)? as u64, r.get(1)?)))
        .unwrap();
    rows.map(|r| r.unwrap()).collect()
}

fn keys<V>(map: &HashMap<u64, V>) -> BTreeSet<u64> {
    map.keys().copied().collect()
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (norm(a) * norm(b))
}

/// Checks that `index` holds exactly the units of `store`, each with its
/// text's vector.
pub(super) fn holds_exactly_the_units(index: &VectorIndex, store: &Store) {
    let units = units(store);
    assert_eq!(index.len(), units.len());
    let mut buf = Vec::new();
    for (key, text) in &units {
        assert!(index.contains(*key), "unit {key} is missing");
        assert!(index.vector(*key, &mut buf));
        let cos = cosine(&buf, &vector_of(text));
        assert!(cos > 0.9999, "unit {key}: cos {cos}");
    }
}

/// Records model `m` as the store's embedding model.
pub(super) fn stamp_model(store: &Store) {
    store
        .set_model_stamp(&deja_model::ModelStamp {
            fingerprint: "f".into(),
            id: "m".into(),
            dims: DIMS,
        })
        .unwrap();
}

pub(super) fn setup() -> (tempfile::TempDir, Store, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("index.sqlite")).unwrap();
    let path = dir.path().join("vectors.usearch");
    (dir, store, path)
}

pub(super) fn max_unit(store: &Store) -> i64 {
    units(store).keys().max().map(|k| *k as i64).unwrap_or(0)
}

#[test]
fn a_sync_saves_every_unit_and_moves_the_watermark_to_the_highest() {
    let (_dir, mut store, path) = setup();
    apply(&mut store, "a", &["alpha", "beta", "gamma"]);
    embed(&mut store, "m");
    let all_units = units(&store);
    assert_eq!(all_units.len(), 3);
    // Nothing synced yet: every unit is above the watermark.
    assert_eq!(watermark(&store).unwrap(), 0);
    assert_eq!(keys(&unsynced(&store, "m").unwrap()), keys(&all_units));
    assert!(!in_sync(&store, &path).unwrap());

    let index = sync(&store, &path, "m", DIMS).unwrap();
    holds_exactly_the_units(&index, &store);
    assert_eq!(watermark(&store).unwrap(), max_unit(&store));
    assert!(unsynced(&store, "m").unwrap().is_empty());
    assert!(in_sync(&store, &path).unwrap());
    assert_eq!(file_count(&path), Some(3));

    // What was saved is what a reader opens, in either way; another
    // shape is refused.
    for view in [true, false] {
        let opened = VectorIndex::open(&path, DIMS, view).unwrap();
        holds_exactly_the_units(&opened, &store);
    }
    assert!(VectorIndex::open(&path, DIMS + 1, true).is_none());

    // A second sync has nothing to do and changes nothing.
    let again = sync(&store, &path, "m", DIMS).unwrap();
    holds_exactly_the_units(&again, &store);
    assert_eq!(watermark(&store).unwrap(), max_unit(&store));
    assert!(in_sync(&store, &path).unwrap());
}

#[test]
fn units_added_after_a_sync_are_exactly_the_unsynced_ones() {
    let (_dir, mut store, path) = setup();
    apply(&mut store, "a", &["alpha", "beta"]);
    embed(&mut store, "m");
    sync(&store, &path, "m", DIMS).unwrap();
    let before = keys(&units(&store));

    apply(&mut store, "b", &["delta", "epsilon", "zeta"]);
    embed(&mut store, "m");
    let after = units(&store);
    let new: BTreeSet<u64> = keys(&after).difference(&before).copied().collect();
    assert_eq!(new.len(), 3);
    let pending = unsynced(&store, "m").unwrap();
    assert_eq!(keys(&pending), new);
    for (key, v) in &pending {
        assert_eq!(v, &vector_of(&after[key]), "unit {key}");
    }
    assert!(!in_sync(&store, &path).unwrap());

    let index = sync(&store, &path, "m", DIMS).unwrap();
    holds_exactly_the_units(&index, &store);
    assert!(unsynced(&store, "m").unwrap().is_empty());
    assert_eq!(watermark(&store).unwrap(), max_unit(&store));
    assert!(in_sync(&store, &path).unwrap());
}

#[test]
fn units_dropped_after_a_sync_leave_the_index_at_the_next_sync() {
    let (_dir, mut store, path) = setup();
    let five = ["zero", "one", "two", "three", "four"];
    apply(&mut store, "a", &five);
    apply(&mut store, "b", &["other", "session"]);
    embed(&mut store, "m");
    sync(&store, &path, "m", DIMS).unwrap();
    let before = keys(&units(&store));

    // A changed message drops its unit and its neighbours'.
    let mut changed = five;
    changed[2] = "changed";
    apply(&mut store, "a", &changed);
    let kept = keys(&units(&store));
    let dropped: BTreeSet<u64> = before.difference(&kept).copied().collect();
    assert_eq!(dropped.len(), 3);
    assert!(!in_sync(&store, &path).unwrap());
    // Until the next sync the saved file still has them; a reader finds
    // no unit for them in the store, so they are stale and filtered out.
    let saved = VectorIndex::open(&path, DIMS, true).unwrap();
    let stale: Vec<u64> = dropped.iter().copied().collect();
    assert!(stale.iter().all(|k| saved.contains(*k)));
    assert!(store.messages_of_units(&stale).unwrap().is_empty());
    drop(saved);

    let index = sync(&store, &path, "m", DIMS).unwrap();
    holds_exactly_the_units(&index, &store);
    assert!(dropped.iter().all(|k| !index.contains(*k)));
    let trash: i64 = store
        .conn()
        .query_row("SELECT count(*) FROM vector_trash", [], |r| r.get(0))
        .unwrap();
    assert_eq!(trash, 0);
    assert!(in_sync(&store, &path).unwrap());

    // Re-embedding gives them new ids, never the old ones.
    embed(&mut store, "m");
    let fresh = keys(&unsynced(&store, "m").unwrap());
    assert_eq!(fresh.len(), 3);
    assert!(fresh.iter().all(|k| *k > *before.iter().max().unwrap()));
    let index = sync(&store, &path, "m", DIMS).unwrap();
    holds_exactly_the_units(&index, &store);
}

#[test]
fn a_sync_that_only_removes_units_keeps_the_rest_of_the_file() {
    let (_dir, mut store, path) = setup();
    apply(&mut store, "a", &["zero", "one", "two", "three", "four"]);
    apply(&mut store, "b", &["other", "session"]);
    embed(&mut store, "m");
    sync(&store, &path, "m", DIMS).unwrap();
    // The cached vector of a unit that stays is changed behind the
    // file's back: only a rebuild from the table would pick it up.
    store
        .conn()
        .execute(
            "UPDATE embeddings SET vector = ?1 WHERE text_hash = 'zero'",
            [to_blob(&[0.0, 0.0, 0.0, 1.0])],
        )
        .unwrap();
    apply(
        &mut store,
        "a",
        &["zero", "one", "changed", "three", "four"],
    );
    let index = sync(&store, &path, "m", DIMS).unwrap();
    // The removals were applied to the saved file, which kept the rest.
    holds_exactly_the_units(&index, &store);
    assert_eq!(index.len(), 4);
}

#[test]
fn the_units_of_a_forgotten_session_leave_the_index() {
    let (_dir, mut store, path) = setup();
    apply(&mut store, "a", &["alpha", "beta"]);
    apply(&mut store, "b", &["gamma", "delta"]);
    embed(&mut store, "m");
    stamp_model(&store);
    sync(&store, &path, "m", DIMS).unwrap();
    let row = store.session_row("test", "b").unwrap().unwrap();
    store.forget(&[row]).unwrap();
    assert!(!in_sync(&store, &path).unwrap());
    sync_after_change(&store, &path).unwrap();
    assert!(in_sync(&store, &path).unwrap());
    let index = VectorIndex::open(&path, DIMS, false).unwrap();
    holds_exactly_the_units(&index, &store);
    assert_eq!(index.len(), 2);
}

/// Whether `needle` is somewhere in the bytes of the file at `path`.
pub(super) fn file_holds(path: &Path, needle: &[u8]) -> bool {
    std::fs::read(path)
        .unwrap()
        .windows(needle.len())
        .any(|w| w == needle)
}

/// The stored bytes of every unit of session `id`, read from the file.
pub(super) fn stored_units_of(store: &Store, path: &Path, id: &str) -> Vec<Vec<u8>> {
    let row = store.session_row("test", id).unwrap().unwrap();
    let mut stmt = store
        .conn()
        .prepare(
            "SELECT c.id FROM chunks c JOIN messages m ON m.id = c.message WHERE m.session = ?1",
        )
        .unwrap();
    let keys: Vec<i64> = stmt
        .query_map([row.row], |r| r.get(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert!(!keys.is_empty());
    let saved = VectorIndex::open(path, DIMS, true).unwrap();
    keys.iter()
        .map(|k| saved.stored_bytes(*k as u64).unwrap())
        .collect()
}

#[test]
fn the_vector_bytes_of_a_forgotten_session_are_in_no_byte_of_the_file() {
    let (_dir, mut store, path) = setup();
    apply(&mut store, "a", &["alpha", "beta"]);
    apply(&mut store, "b", &["gamma", "delta", "epsilon"]);
    embed(&mut store, "m");
    stamp_model(&store);
    sync(&store, &path, "m", DIMS).unwrap();
    // The session forgotten is not the last one: a file whose watermark
    // is above every unit left is rebuilt anyway.
    let gone = stored_units_of(&store, &path, "a");
    let kept = stored_units_of(&store, &path, "b");
    // What the file stores for a unit is found in it: the check below
    // can fail.
    for bytes in gone.iter().chain(&kept) {
        assert_eq!(bytes.len(), DIMS * 2);
        assert!(file_holds(&path, bytes));
    }

    let row = store.session_row("test", "a").unwrap().unwrap();
    store.forget(&[row]).unwrap();
    assert!(rebuild_pending(&store).unwrap());
    assert!(!in_sync(&store, &path).unwrap());
    sync_after_change(&store, &path).unwrap();
    assert!(!rebuild_pending(&store).unwrap());
    assert!(in_sync(&store, &path).unwrap());
    for bytes in &gone {
        assert!(
            !file_holds(&path, bytes),
            "a forgotten vector is in the file"
        );
    }
    for bytes in &kept {
        assert!(file_holds(&path, bytes));
    }
    holds_exactly_the_units(&VectorIndex::open(&path, DIMS, false).unwrap(), &store);
}

#[test]
fn a_forget_overwrites_every_freed_slot_of_the_segment_in_place() {
    let (_dir, mut store, path) = setup();
    let five = ["zero", "one", "two", "three", "four"];
    apply(&mut store, "a", &five);
    apply(&mut store, "b", &["gamma", "delta"]);
    embed(&mut store, "m");
    stamp_model(&store);
    sync(&store, &path, "m", DIMS).unwrap();
    let before_a = stored_units_of(&store, &path, "a");
    // A changed message drops three units; they are not embedded again
    // before the sync, so their slots stay freed, vectors and all.
    let mut changed = five;
    changed[2] = "changed";
    apply(&mut store, "a", &changed);
    sync(&store, &path, "m", DIMS).unwrap();
    let still_a = stored_units_of(&store, &path, "a");
    let dropped: Vec<&Vec<u8>> = before_a.iter().filter(|b| !still_a.contains(b)).collect();
    assert_eq!(dropped.len(), 3);
    for bytes in &dropped {
        assert!(file_holds(&path, bytes), "the check below can fail");
    }
    let gone = stored_units_of(&store, &path, "b");
    let segment = Segment::open(&path, DIMS, false).unwrap();
    assert_eq!(segment.freed_slots(), 3);
    let slots = segment.index.stats().nodes;
    drop(segment);

    let row = store.session_row("test", "b").unwrap().unwrap();
    store.forget(&[row]).unwrap();
    sync_after_change(&store, &path).unwrap();
    assert!(!rebuild_pending(&store).unwrap());
    assert!(in_sync(&store, &path).unwrap());
    for bytes in gone.iter().chain(dropped.iter().copied()) {
        assert!(!file_holds(&path, bytes), "a freed vector is in the file");
    }
    for bytes in &still_a {
        assert!(file_holds(&path, bytes));
    }
    // The same graph, its slots overwritten rather than the file rebuilt.
    let segment = Segment::open(&path, DIMS, false).unwrap();
    assert_eq!(segment.index.stats().nodes, slots);
    assert_eq!(segment.freed_slots(), 5);
    drop(segment);
    let index = VectorIndex::open(&path, DIMS, false).unwrap();
    holds_exactly_the_units(&index, &store);
    for (key, text) in units(&store) {
        let hit = index.search(&vector_of(&text), 1).unwrap();
        assert_eq!(hit[0].0, key, "{text}");
    }
}

#[test]
fn a_pulled_session_retracted_leaves_its_vector_bytes_in_no_byte_of_the_file() {
    let (_dir, mut store, path) = setup();
    let theirs = session("t", &["pulled one", "pulled two"]);
    store
        .apply_pulled(&[crate::ingest::pulled::Pulled {
            origin: "ana@laptop",
            hash: "h1",
            session: &theirs,
        }])
        .unwrap();
    embed(&mut store, "m");
    apply(&mut store, "a", &["alpha", "beta"]);
    embed(&mut store, "m");
    stamp_model(&store);
    sync(&store, &path, "m", DIMS).unwrap();
    let gone = stored_units_of(&store, &path, "t");
    assert!(gone.iter().all(|b| file_holds(&path, b)));
    let pulled: Vec<i64> = store.pulled().unwrap().iter().map(|p| p.row).collect();
    assert_eq!(store.remove_pulled(&pulled).unwrap(), 1);
    // Whoever syncs next rebuilds: here the embedding pass's sync.
    sync(&store, &path, "m", DIMS).unwrap();
    for bytes in &gone {
        assert!(
            !file_holds(&path, bytes),
            "a retracted vector is in the file"
        );
    }
    holds_exactly_the_units(&VectorIndex::open(&path, DIMS, false).unwrap(), &store);
}

#[test]
fn units_dropped_by_a_growing_message_do_not_rebuild_the_file() {
    let (_dir, mut store, path) = setup();
    apply(&mut store, "a", &["zero", "one"]);
    embed(&mut store, "m");
    sync(&store, &path, "m", DIMS).unwrap();
    apply(&mut store, "a", &["zero", "one and more"]);
    assert!(!rebuild_pending(&store).unwrap());
    let index = sync(&store, &path, "m", DIMS).unwrap();
    holds_exactly_the_units(&index, &store);
}

#[test]
fn a_missing_index_file_is_rebuilt_from_the_table() {
    let (_dir, mut store, path) = setup();
    apply(&mut store, "a", &["alpha", "beta", "gamma"]);
    embed(&mut store, "m");
    sync(&store, &path, "m", DIMS).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(!in_sync(&store, &path).unwrap());
    let index = sync(&store, &path, "m", DIMS).unwrap();
    holds_exactly_the_units(&index, &store);
    assert_eq!(file_count(&path), Some(3));
    assert_eq!(watermark(&store).unwrap(), max_unit(&store));
    assert!(in_sync(&store, &path).unwrap());
}

#[test]
fn an_unreadable_index_file_is_rebuilt_from_the_table() {
    let (_dir, mut store, path) = setup();
    apply(&mut store, "a", &["alpha", "beta", "gamma"]);
    embed(&mut store, "m");
    sync(&store, &path, "m", DIMS).unwrap();
    std::fs::write(&path, b"not an index at all").unwrap();
    assert!(!in_sync(&store, &path).unwrap());
    let index = sync(&store, &path, "m", DIMS).unwrap();
    holds_exactly_the_units(&index, &store);
    assert!(in_sync(&store, &path).unwrap());
    holds_exactly_the_units(&VectorIndex::open(&path, DIMS, true).unwrap(), &store);
}

#[test]
fn an_index_file_of_another_shape_is_rebuilt_from_the_table() {
    let (_dir, mut store, path) = setup();
    apply(&mut store, "a", &["alpha", "beta"]);
    embed(&mut store, "m");
    sync(&store, &path, "m", DIMS).unwrap();
    let mut other = VectorIndex::empty(&path, DIMS + 2).unwrap();
    for key in units(&store).keys() {
        other.add(*key, &[1.0; DIMS + 2]).unwrap();
    }
    other.save_atomic().unwrap();
    drop(other);
    let index = sync(&store, &path, "m", DIMS).unwrap();
    holds_exactly_the_units(&index, &store);
    assert!(VectorIndex::open(&path, DIMS, true).is_some());
}

#[test]
fn an_index_file_behind_its_watermark_is_rebuilt_from_the_table() {
    let (dir, mut store, path) = setup();
    apply(&mut store, "a", &["alpha", "beta"]);
    embed(&mut store, "m");
    sync(&store, &path, "m", DIMS).unwrap();
    let old = dir.path().join("old.usearch");
    std::fs::copy(&path, &old).unwrap();
    apply(&mut store, "b", &["gamma", "delta"]);
    embed(&mut store, "m");
    sync(&store, &path, "m", DIMS).unwrap();
    // An older copy comes back (a backup restored): the watermark says
    // it holds units it does not.
    std::fs::copy(&old, &path).unwrap();
    assert!(!in_sync(&store, &path).unwrap());
    let index = sync(&store, &path, "m", DIMS).unwrap();
    holds_exactly_the_units(&index, &store);
    assert_eq!(index.len(), 4);
    assert!(in_sync(&store, &path).unwrap());
}

#[test]
fn all_returns_every_vector_of_the_model_and_none_of_another() {
    let (_dir, mut store, path) = setup();
    apply(&mut store, "a", &["alpha", "beta", "gamma"]);
    embed(&mut store, "m1");
    // Another model has a vector for one of the texts only.
    let other = [9.0f32, 0.0, 0.0, 1.0];
    store.add_units("m2", &[("beta", &other[..])], &[]).unwrap();
    sync(&store, &path, "m1", DIMS).unwrap();

    let units = units(&store);
    let m1 = all(&store, "m1").unwrap();
    assert_eq!(keys(&m1), keys(&units));
    for (key, v) in &m1 {
        assert_eq!(v, &vector_of(&units[key]));
    }
    // All of them, whatever the watermark says.
    assert!(unsynced(&store, "m1").unwrap().is_empty());

    let m2 = all(&store, "m2").unwrap();
    let beta: Vec<u64> = units
        .iter()
        .filter(|(_, t)| t.as_str() == "beta")
        .map(|(k, _)| *k)
        .collect();
    assert_eq!(keys(&m2), beta.iter().copied().collect());
    assert_eq!(m2[&beta[0]], other);
    assert!(all(&store, "m3").unwrap().is_empty());
}

#[test]
fn blobs_are_cached_in_half_precision_and_earlier_f32_blobs_still_read() {
    // Half precision: one tag byte and two bytes a value, exact for values
    // half precision holds and within its precision for the rest.
    let v = [0.0f32, -1.5, 0.333_333_34, 0.068_359_375];
    let blob = to_blob(&v);
    assert_eq!(blob.len(), 1 + 2 * v.len());
    let back = from_blob(&blob);
    assert_eq!(back.len(), v.len());
    assert_eq!(&back[..2], &v[..2]);
    assert!((back[2] - v[2]).abs() < 2e-4, "{back:?}");
    assert_eq!(back[3], v[3]);
    // A store's f32 blob of before, even one whose first byte is the tag.
    let old = [0.0f32, -1.5, 3.25e-7, f32::MAX];
    let blob = to_f32_blob(&old);
    assert_eq!(blob.len(), 16);
    assert_eq!(&blob[4..8], &(-1.5f32).to_le_bytes());
    assert_eq!(from_blob(&blob), old);
    let tagged_first = [f32::from_le_bytes([0x16, 0, 0, 0]), 2.0];
    assert_eq!(from_blob(&to_f32_blob(&tagged_first)), tagged_first);
    // A unit vector of 384 values: a row that fits its page.
    let unit: Vec<f32> = (0..384).map(|i| if i == 7 { 1.0 } else { 0.0 }).collect();
    assert_eq!(to_blob(&unit).len(), 769);
    assert_eq!(from_blob(&to_blob(&unit)), unit);
}

#[test]
fn stale_temporaries_of_the_index_are_removed_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vectors.usearch");
    for name in [
        ".vectors.usearch.tmp-123",
        ".vectors.usearch.tmp-99999999",
        ".vectors.usearch.tmp-x",
        ".other.tmp-123",
        "vectors.usearch",
    ] {
        std::fs::write(dir.path().join(name), b"x").unwrap();
    }
    assert_eq!(remove_stale_temporaries(&path).unwrap(), 2);
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        [
            ".other.tmp-123",
            ".vectors.usearch.tmp-x",
            "vectors.usearch"
        ]
    );
    // A folder that does not exist yet holds nothing stale.
    assert_eq!(
        remove_stale_temporaries(&dir.path().join("none/vectors.usearch")).unwrap(),
        0
    );
}

/// Pseudo-random unit-length vectors of `dims`, from `seed`.
pub(super) fn noise(seed: u64, dims: usize) -> Vec<f32> {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut v: Vec<f32> = (0..dims)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) as f32 / (1u64 << 31) as f32) - 0.5
        })
        .collect();
    let norm = v.iter().map(|a| a * a).sum::<f32>().sqrt();
    v.iter_mut().for_each(|a| *a /= norm);
    v
}

#[test]
fn the_graph_is_the_same_whether_windows_came_in_one_pass_or_two() {
    const N: usize = 3000;
    // Random vectors this wide make the search approximate: a graph
    // built in another order answers some queries differently.
    const WIDE: usize = 128;
    let texts: Vec<String> = (0..N).map(|i| format!("message {i}")).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    // Two windows a message: (message position, ordinal) → vector.
    let vector = |pos: usize, ordinal: usize| noise((pos * 2 + ordinal) as u64, WIDE);
    let build = |two_passes: bool| {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("index.sqlite")).unwrap();
        apply(&mut store, "s", &refs);
        let pending = store.pending_page(0, N).unwrap();
        let unit = |pos: usize, ordinal: usize| Unit {
            message: pending[pos].id,
            ordinal,
            text_hash: format!("{pos}/{ordinal}"),
        };
        let vectors: Vec<(String, Vec<f32>)> = (0..N)
            .flat_map(|p| (0..2).map(move |o| (format!("{p}/{o}"), vector(p, o))))
            .collect();
        let pairs: Vec<(&str, &[f32])> = vectors
            .iter()
            .map(|(h, v)| (h.as_str(), v.as_slice()))
            .collect();
        if two_passes {
            // Every first window, then every second one: other row ids.
            let first: Vec<Unit> = (0..N).map(|p| unit(p, 0)).collect();
            let ids: Vec<i64> = pending.iter().map(|m| m.id).collect();
            store.add_page("m", &pairs, &first, &ids).unwrap();
            let rest: Vec<Unit> = (0..N).map(|p| unit(p, 1)).collect();
            store.add_units("m", &[], &rest).unwrap();
        } else {
            let all: Vec<Unit> = (0..N).flat_map(|p| [unit(p, 0), unit(p, 1)]).collect();
            store.add_units("m", &pairs, &all).unwrap();
        }
        assert_eq!(store.partial_count().unwrap(), 0);
        let path = dir.path().join("vectors.usearch");
        let index = sync(&store, &path, "m", WIDE).unwrap();
        // Key → (message position, ordinal), through the unit's hash.
        let named: HashMap<u64, String> = units(&store);
        (dir, index, named)
    };
    let (_a, one, one_names) = build(false);
    let (_b, two, two_names) = build(true);
    assert_eq!(one.len(), 2 * N);
    for q in 0..100 {
        let query = noise(1_000_000 + q, WIDE);
        let found = |index: &VectorIndex, names: &HashMap<u64, String>| -> Vec<(String, u32)> {
            index
                .search(&query, 40)
                .unwrap()
                .into_iter()
                .map(|(key, s)| (names[&key].clone(), s.to_bits()))
                .collect()
        };
        assert_eq!(
            found(&one, &one_names),
            found(&two, &two_names),
            "query {q}"
        );
    }
}
