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
mod tests;
