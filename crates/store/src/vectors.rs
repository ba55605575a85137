//! The vector index: a usearch HNSW index of embedding units, keyed by the
//! `chunks` rowids of SQLite, which stays the source of truth.
//!
//! The index file is saved atomically (temp file, fsync, rename), so a reader
//! that has it open keeps its old copy. SQLite records the highest chunk id the
//! saved file holds (`vectors_watermark`) and, in `vector_trash`, the keys
//! deleted since. Syncing adds every chunk above the watermark (its vector comes
//! from the `embeddings` table), removes the trash, saves, then moves the
//! watermark. A crash before the rename leaves the file behind SQLite; one
//! between the rename and the watermark leaves it ahead (it holds chunks the
//! watermark does not count yet). Either way the next sync catches up: adding
//! a chunk the file holds replaces it. A file that disagrees in a way syncing
//! cannot explain (wrong size or shape, unreadable) is rebuilt from SQLite.
//!
//! usearch's `remove` only marks a slot free: the vector stays in memory and
//! `save` writes it to the file. That is fine for units dropped because their
//! message grew, but not for text that is being erased. So forgetting,
//! retracting a pulled session and re-reading under new redaction settings
//! mark the file for a rebuild (`vectors_rebuild`, set in the transaction that
//! removes the text), and the next sync writes a new file from the
//! `embeddings` table, holding no freed slot.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use rusqlite::{params, OptionalExtension};
use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

use crate::Store;

/// Meta key: highest chunk id in the saved index file.
pub(crate) const WATERMARK: &str = "vectors_watermark";
/// Meta key: the file must be rebuilt, since it may hold vectors of erased
/// text in freed slots (see the module documentation).
pub(crate) const REBUILD: &str = "vectors_rebuild";
/// Meta key: the scalar kind of the saved file.
const QUANTIZATION: &str = "vectors_quantization";

/// Errors of the vector index.
#[derive(Debug, thiserror::Error)]
pub enum VectorError {
    /// usearch failed.
    #[error("vector index `{path}`: {message}")]
    Index {
        /// The index file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] crate::StoreError),
}

type Result<T> = std::result::Result<T, VectorError>;

/// The quantization deja uses: f16 keeps recall within a hair of f32 at half
/// the size (see BENCHMARKS.md).
pub const SCALAR: ScalarKind = ScalarKind::F16;

fn options(dims: usize) -> IndexOptions {
    IndexOptions {
        dimensions: dims,
        metric: MetricKind::Cos,
        quantization: SCALAR,
        connectivity: 16,
        expansion_add: 128,
        expansion_search: 64,
        multi: false,
    }
}

/// A vector index in memory (loaded or viewed).
pub struct VectorIndex {
    index: Index,
    path: PathBuf,
    dims: usize,
}

impl VectorIndex {
    fn err(&self, e: impl std::fmt::Display) -> VectorError {
        VectorError::Index {
            path: self.path.clone(),
            message: e.to_string(),
        }
    }

    /// An empty index for `dims`-dimensional vectors, to be saved at `path`.
    pub fn empty(path: &Path, dims: usize) -> Result<VectorIndex> {
        let index = Index::new(&options(dims)).map_err(|e| VectorError::Index {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        Ok(VectorIndex {
            index,
            path: path.to_path_buf(),
            dims,
        })
    }

    /// Opens the file at `path` if it has the expected shape; `None` if it is
    /// missing or does not match (the caller rebuilds).
    pub fn open(path: &Path, dims: usize, view: bool) -> Option<VectorIndex> {
        let text = path.to_str()?;
        if !path.is_file() {
            return None;
        }
        let meta = Index::metadata(text).ok()?;
        if meta.dimensions as usize != dims || meta.quantization != SCALAR || meta.multi {
            return None;
        }
        let index = Index::new(&options(dims)).ok()?;
        let loaded = if view {
            index.view(text)
        } else {
            index.load(text)
        };
        loaded.ok()?;
        index.change_expansion_search(64);
        Some(VectorIndex {
            index,
            path: path.to_path_buf(),
            dims,
        })
    }

    /// Number of vectors.
    pub fn len(&self) -> usize {
        self.index.size()
    }

    /// Whether it holds no vector.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `key` is present.
    pub fn contains(&self, key: u64) -> bool {
        self.index.contains(key)
    }

    /// Copies the vector of `key` into `buf`; false when absent.
    pub fn vector(&self, key: u64, buf: &mut Vec<f32>) -> bool {
        buf.resize(self.dims, 0.0);
        matches!(self.index.get(key, &mut buf[..]), Ok(n) if n > 0)
    }

    /// The bytes the index stores for `key` (its scalars, little-endian
    /// [`SCALAR`]), as they are laid out in the saved file; `None` when absent.
    pub fn stored_bytes(&self, key: u64) -> Option<Vec<u8>> {
        let mut halves = vec![0i16; self.dims];
        let found = self
            .index
            .get(key, usearch::f16::from_mut_i16s(&mut halves));
        if !matches!(found, Ok(n) if n > 0) {
            return None;
        }
        Some(halves.iter().flat_map(|h| h.to_le_bytes()).collect())
    }

    /// Adds (or replaces) the vector of `key`.
    pub fn add(&mut self, key: u64, vector: &[f32]) -> Result<()> {
        if vector.len() != self.dims {
            return Err(self.err(format!(
                "vector of {} dimensions for an index of {}",
                vector.len(),
                self.dims
            )));
        }
        if self.index.contains(key) {
            self.index.remove(key).map_err(|e| self.err(e))?;
        }
        if self.index.size() + 1 > self.index.capacity() {
            let grow = (self.index.capacity() * 2).max(1024);
            self.index.reserve(grow).map_err(|e| self.err(e))?;
        }
        self.index.add(key, vector).map_err(|e| self.err(e))
    }

    /// Removes `key` if present.
    pub fn remove(&mut self, key: u64) -> Result<()> {
        if self.index.contains(key) {
            self.index.remove(key).map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    /// The `k` nearest keys to `query` with their cosine similarity.
    pub fn search(&self, query: &[f32], k: usize) -> Result<Vec<(u64, f32)>> {
        if self.is_empty() || k == 0 {
            return Ok(Vec::new());
        }
        let m = self.index.search(query, k).map_err(|e| self.err(e))?;
        Ok(m.keys
            .into_iter()
            .zip(m.distances)
            .map(|(key, d)| (key, 1.0 - d))
            .collect())
    }

    /// The `k` nearest keys among those `allowed` accepts.
    pub fn filtered_search(
        &self,
        query: &[f32],
        k: usize,
        allowed: impl Fn(u64) -> bool,
    ) -> Result<Vec<(u64, f32)>> {
        if self.is_empty() || k == 0 {
            return Ok(Vec::new());
        }
        let m = self
            .index
            .filtered_search(query, k, allowed)
            .map_err(|e| self.err(e))?;
        Ok(m.keys
            .into_iter()
            .zip(m.distances)
            .map(|(key, d)| (key, 1.0 - d))
            .collect())
    }

    /// Writes the index next to its path and renames it into place, so readers
    /// never see a partial file.
    pub fn save_atomic(&self) -> Result<()> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let tmp = dir.join(format!(
            "{}{}",
            temporary_prefix(&self.path),
            std::process::id()
        ));
        let tmp_text = tmp.to_string_lossy().into_owned();
        self.index.save(&tmp_text).map_err(|e| self.err(e))?;
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(&tmp)
            .map_err(|e| self.err(e))?;
        file.sync_all().map_err(|e| self.err(e))?;
        drop(file);
        crate::make_private(&tmp)?;
        std::fs::rename(&tmp, &self.path).map_err(|e| self.err(e))?;
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

/// The name prefix of the temporary copies [`VectorIndex::save_atomic`]
/// writes beside the index file at `path` (`.<name>.tmp-`, then a pid).
fn temporary_prefix(path: &Path) -> String {
    format!(
        ".{}.tmp-",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    )
}

/// Removes temporary copies of the index file at `path` left by a writer
/// that died while saving (`kill -9`, a crash, power loss). Only the writer
/// saves the index, so the caller must hold the writer lock: then every such
/// file is stale. Returns how many were removed.
pub fn remove_stale_temporaries(path: &Path) -> Result<usize> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let prefix = temporary_prefix(path);
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => {
            return Err(VectorError::Index {
                path: dir.to_path_buf(),
                message: e.to_string(),
            })
        }
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let Some(pid) = name.strip_prefix(&prefix) else {
            continue;
        };
        if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if entry.file_type().is_ok_and(|t| t.is_file())
            && std::fs::remove_file(entry.path()).is_ok()
        {
            removed += 1;
        }
    }
    Ok(removed)
}

/// How many vectors the index file at `path` holds, read from its header
/// without loading it; `None` when it is missing or unreadable.
pub fn file_count(path: &Path) -> Option<usize> {
    path.to_str()
        .and_then(|p| Index::metadata(p).ok())
        .map(|m| m.count_present as usize)
}

/// Reads a stored vector blob (little-endian f32s).
pub fn from_blob(blob: &[u8]) -> Vec<f32> {
    blob.chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// Encodes a vector as a blob (little-endian f32s).
pub fn to_blob(v: &[f32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * 4);
    for x in v {
        out.write_all(&x.to_le_bytes()).ok();
    }
    out
}

/// The watermark recorded in the store.
pub fn watermark(store: &Store) -> Result<i64> {
    Ok(store
        .meta(WATERMARK)?
        .and_then(|v| v.parse().ok())
        .unwrap_or(0))
}

/// Whether the saved index file already matches the store: it exists and
/// is readable, holds exactly as many vectors as there are units, of the
/// store's dimensions, no key waits for removal and no unit is above its
/// watermark.
pub fn in_sync(store: &Store, path: &Path) -> Result<bool> {
    let sq = |e: rusqlite::Error| VectorError::Store(store.wrap(e));
    let (chunks, trash, max): (i64, i64, i64) = store
        .conn()
        .query_row(
            "SELECT (SELECT count(*) FROM chunks), (SELECT count(*) FROM vector_trash),
                    (SELECT coalesce(max(id), 0) FROM chunks)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .map_err(sq)?;
    if !path.is_file() {
        return Ok(chunks == 0);
    }
    let Some(meta) = path.to_str().and_then(|p| Index::metadata(p).ok()) else {
        return Ok(false);
    };
    let dims: Option<u64> = store.meta("embed_dims")?.and_then(|d| d.parse().ok());
    Ok(meta.count_present as i64 == chunks
        && dims.is_none_or(|d| d == meta.dimensions)
        && trash == 0
        && max <= watermark(store)?
        && !rebuild_pending(store)?)
}

/// Whether the file must be rebuilt before anything else is done with it:
/// text was erased since it was saved (see the module documentation).
pub fn rebuild_pending(store: &Store) -> Result<bool> {
    Ok(store.meta(REBUILD)?.is_some())
}

/// Brings the index file in line with the store: removes trashed keys, adds
/// chunks above the watermark, rebuilds from scratch when the file is missing
/// or inconsistent or text was erased since the last save, and saves
/// atomically. `model` is the store's embedding model id; `dims` its
/// dimensions.
pub fn sync(store: &Store, path: &Path, model: &str, dims: usize) -> Result<VectorIndex> {
    if rebuild_pending(store)? {
        // A new file from the table: the old one may hold erased vectors
        // in freed slots, which `remove` and `save` keep.
        return sync_fresh(store, path, model, dims);
    }
    let conn = store.conn();
    let sq = |e: rusqlite::Error| VectorError::Store(store.wrap(e));
    let max_chunk: i64 = conn
        .query_row("SELECT coalesce(max(id), 0) FROM chunks", [], |r| r.get(0))
        .map_err(sq)?;
    let chunk_count: i64 = conn
        .query_row("SELECT count(*) FROM chunks", [], |r| r.get(0))
        .map_err(sq)?;
    let mark = watermark(store)?;
    let quant_ok = store.meta(QUANTIZATION)?.as_deref() == Some(scalar_name());

    let mut index = match VectorIndex::open(path, dims, false) {
        Some(ix) if quant_ok && mark <= max_chunk => ix,
        _ => VectorIndex::empty(path, dims)?,
    };
    let from = if index.is_empty() { 0 } else { mark };

    // Remove what was deleted since the last save.
    let trash: Vec<i64> = {
        let mut stmt = conn.prepare("SELECT key FROM vector_trash").map_err(sq)?;
        let rows = stmt.query_map([], |r| r.get(0)).map_err(sq)?;
        rows.collect::<rusqlite::Result<_>>().map_err(sq)?
    };
    for key in &trash {
        index.remove(*key as u64)?;
    }

    // Add what was embedded since.
    add_embedded(store, &mut index, model, from)?;

    // A file that still disagrees with SQLite is rebuilt.
    if index.len() as i64 != chunk_count {
        drop(index);
        let _ = std::fs::remove_file(path);
        store.set_meta(WATERMARK, "0")?;
        return sync_fresh(store, path, model, dims);
    }
    index.save_atomic()?;
    store.set_meta(WATERMARK, &max_chunk.to_string())?;
    store.set_meta(QUANTIZATION, scalar_name())?;
    if !trash.is_empty() {
        // Only the writer (who holds the lock) adds to the trash.
        conn.execute("DELETE FROM vector_trash", []).map_err(sq)?;
    }
    Ok(index)
}

fn sync_fresh(store: &Store, path: &Path, model: &str, dims: usize) -> Result<VectorIndex> {
    let conn = store.conn();
    let sq = |e: rusqlite::Error| VectorError::Store(store.wrap(e));
    let mut index = VectorIndex::empty(path, dims)?;
    let max = add_embedded(store, &mut index, model, 0)?;
    index.save_atomic()?;
    store.set_meta(WATERMARK, &max.to_string())?;
    store.set_meta(QUANTIZATION, scalar_name())?;
    conn.execute("DELETE FROM vector_trash", []).map_err(sq)?;
    conn.execute("DELETE FROM meta WHERE key = ?1", [REBUILD])
        .map_err(sq)?;
    Ok(index)
}

/// Adds to `index` the vector of every unit above row id `after` that has one
/// under `model`, one row at a time (at 100k messages the vectors as f32
/// blobs would be hundreds of MB held at once); returns the largest row id
/// added, or `after`.
///
/// Units go in in the order the embedding passes walk the history (newest
/// session first, its messages in order, each message's windows in order),
/// not in the order they were embedded: the graph, and so what an
/// approximate search finds, is the same whether a long message got its
/// windows in one pass or in two. For units embedded in one pass that order
/// is their row ids'.
fn add_embedded(store: &Store, index: &mut VectorIndex, model: &str, after: i64) -> Result<i64> {
    let conn = store.conn();
    let sq = |e: rusqlite::Error| VectorError::Store(store.wrap(e));
    let newer: i64 = conn
        .query_row("SELECT count(*) FROM chunks WHERE id > ?1", [after], |r| {
            r.get(0)
        })
        .map_err(sq)?;
    let need = (index.len() + newer as usize).max(1);
    if need > index.index.capacity() {
        index.index.reserve(need).map_err(|e| index.err(e))?;
    }
    // The order first (ids only: small), then each vector by its id.
    let order: Vec<i64> = {
        let mut stmt = conn
            .prepare(
                "SELECT c.id FROM chunks c
                 JOIN messages m ON m.id = c.message JOIN sessions s ON s.id = m.session
                 WHERE c.id > ?1
                 ORDER BY s.started_at DESC, m.session DESC, m.id, c.ordinal",
            )
            .map_err(sq)?;
        let rows = stmt.query_map([after], |r| r.get(0)).map_err(sq)?;
        rows.collect::<rusqlite::Result<_>>().map_err(sq)?
    };
    let mut vector = conn
        .prepare(
            "SELECT e.vector FROM chunks c
             JOIN embeddings e ON e.text_hash = c.text_hash AND e.model = ?2
             WHERE c.id = ?1",
        )
        .map_err(sq)?;
    let mut max = after;
    for id in order {
        let blob: Option<Vec<u8>> = vector
            .query_row(params![id, model], |r| r.get(0))
            .optional()
            .map_err(sq)?;
        if let Some(blob) = blob {
            index.add(id as u64, &from_blob(&blob))?;
            max = max.max(id);
        }
    }
    Ok(max)
}

fn scalar_name() -> &'static str {
    "f16"
}

/// After sessions were removed: drop their vectors from the index file at
/// `path`, if there is one (no model needed: the vectors come from the
/// table). When text was erased the file is rebuilt, so that no freed slot
/// keeps an erased vector.
pub fn sync_after_change(store: &Store, path: &Path) -> Result<()> {
    let model = store.meta("embed_model")?;
    let dims = store.meta("embed_dims")?.and_then(|d| d.parse().ok());
    let (Some(model), Some(dims)) = (model, dims) else {
        // Never embedded: a file left there holds nothing the store knows.
        if rebuild_pending(store)? {
            match std::fs::remove_file(path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(VectorError::Index {
                        path: path.to_path_buf(),
                        message: e.to_string(),
                    })
                }
            }
            store
                .conn()
                .execute("DELETE FROM meta WHERE key = ?1", [REBUILD])
                .map_err(|e| VectorError::Store(store.wrap(e)))?;
        }
        return Ok(());
    };
    sync(store, path, &model, dims).map(|_| ())
}

/// Vectors of chunks the saved file does not hold yet (above the watermark),
/// for readers that search while an index run is writing: keyed by chunk id.
pub fn unsynced(store: &Store, model: &str) -> Result<HashMap<u64, Vec<f32>>> {
    since(store, model, watermark(store)?)
}

/// Every stored vector, for a reader whose index file is missing or unusable.
pub fn all(store: &Store, model: &str) -> Result<HashMap<u64, Vec<f32>>> {
    since(store, model, 0)
}

fn since(store: &Store, model: &str, mark: i64) -> Result<HashMap<u64, Vec<f32>>> {
    let conn = store.conn();
    let sq = |e: rusqlite::Error| VectorError::Store(store.wrap(e));
    let mut stmt = conn
        .prepare(
            "SELECT c.id, e.vector FROM chunks c
             JOIN embeddings e ON e.text_hash = c.text_hash AND e.model = ?2
             WHERE c.id > ?1",
        )
        .map_err(sq)?;
    let rows = stmt
        .query_map(params![mark, model], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?))
        })
        .map_err(sq)?;
    let mut out = HashMap::new();
    for row in rows {
        let (id, blob) = row.map_err(sq)?;
        out.insert(id as u64, from_blob(&blob));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::embedding::Unit;
    use crate::ingest::FileState;
    use crate::test_support::session;
    use std::collections::BTreeSet;

    const DIMS: usize = 4;

    fn apply(store: &mut Store, id: &str, texts: &[&str]) {
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
    fn vector_of(text: &str) -> Vec<f32> {
        let mut v = vec![1.0f32; DIMS];
        for (i, b) in text.bytes().enumerate() {
            v[i % DIMS] += f32::from(b % 16);
        }
        v
    }

    /// Gives every message waiting for units one unit (keyed by its text),
    /// its vector cached under `model`.
    fn embed(store: &mut Store, model: &str) {
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
    fn units(store: &Store) -> HashMap<u64, String> {
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
    fn holds_exactly_the_units(index: &VectorIndex, store: &Store) {
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

    fn setup() -> (tempfile::TempDir, Store, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("index.sqlite")).unwrap();
        let path = dir.path().join("vectors.usearch");
        (dir, store, path)
    }

    fn max_unit(store: &Store) -> i64 {
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
        store
            .set_model_stamp(&deja_model::ModelStamp {
                fingerprint: "f".into(),
                id: "m".into(),
                dims: DIMS,
            })
            .unwrap();
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
    fn file_holds(path: &Path, needle: &[u8]) -> bool {
        std::fs::read(path)
            .unwrap()
            .windows(needle.len())
            .any(|w| w == needle)
    }

    /// The stored bytes of every unit of session `id`, read from the file.
    fn stored_units_of(store: &Store, path: &Path, id: &str) -> Vec<Vec<u8>> {
        let row = store.session_row("test", id).unwrap().unwrap();
        let mut stmt = store
            .conn()
            .prepare("SELECT c.id FROM chunks c JOIN messages m ON m.id = c.message WHERE m.session = ?1")
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
        store
            .set_model_stamp(&deja_model::ModelStamp {
                fingerprint: "f".into(),
                id: "m".into(),
                dims: DIMS,
            })
            .unwrap();
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
    fn a_pulled_session_retracted_leaves_its_vector_bytes_in_no_byte_of_the_file() {
        let (_dir, mut store, path) = setup();
        let theirs = session("t", &["pulled one", "pulled two"]);
        store
            .apply_pulled(&[crate::pulled::Pulled {
                origin: "ana@laptop",
                hash: "h1",
                session: &theirs,
            }])
            .unwrap();
        embed(&mut store, "m");
        apply(&mut store, "a", &["alpha", "beta"]);
        embed(&mut store, "m");
        store
            .set_model_stamp(&deja_model::ModelStamp {
                fingerprint: "f".into(),
                id: "m".into(),
                dims: DIMS,
            })
            .unwrap();
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
    fn blobs_round_trip() {
        let v = [0.0f32, -1.5, 3.25e-7, f32::MAX];
        let blob = to_blob(&v);
        assert_eq!(blob.len(), 16);
        assert_eq!(&blob[4..8], &(-1.5f32).to_le_bytes());
        assert_eq!(from_blob(&blob), v);
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
    fn noise(seed: u64, dims: usize) -> Vec<f32> {
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
}
