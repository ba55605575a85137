//! The vector index: usearch HNSW indexes of embedding units, keyed by the
//! `chunks` rowids of SQLite, which stays the source of truth.
//!
//! The index is cut into segments by chunk id: segment `i` holds the units
//! with ids `i·S+1 ..= (i+1)·S`, where `S` is the segment size recorded in
//! the store (`vectors_segment_size`, [`SEGMENT_SIZE`] unless a caller chose
//! another). Each segment is its own file: the first keeps the index's name
//! (`vectors.usearch`), the next are `vectors.1.usearch`, `vectors.2.usearch`,
//! and so on. Chunk ids only grow, so new units go to the last segment; the
//! others are sealed. A sync loads one segment at a time (the one it adds
//! to, or one that lost units), so its memory is that of one segment however
//! long the history; readers view (memory-map) every segment and merge each
//! one's nearest keys.
//!
//! Each file is saved atomically (temp file, fsync, rename), so a reader that
//! has it open keeps its old copy. SQLite records the highest chunk id the
//! saved files hold (`vectors_watermark`) and, in `vector_trash`, the keys
//! deleted since. Syncing walks the segments that have work in id order: it
//! removes that segment's trashed keys and adds its chunks above the
//! watermark (their vectors come from the `embeddings` table), saves the
//! file, then moves the watermark to the end of the segment (or to the
//! highest chunk) and clears that segment's trash. A crash before a rename
//! leaves the files behind SQLite; one between a rename and the watermark
//! leaves a file ahead (it holds chunks the watermark does not count yet).
//! Either way the next sync catches up: adding a chunk a file holds replaces
//! it, removing one it lacks does nothing. A segment file that disagrees in a
//! way syncing cannot explain (missing, wrong size or shape, unreadable) is
//! rebuilt from SQLite, alone.
//!
//! usearch's `remove` only marks a slot free: the vector stays in memory and
//! `save` writes it to the file. That is fine for units dropped because their
//! message grew, but not for text that is being erased. So forgetting,
//! retracting a pulled session and re-reading under new redaction settings
//! mark the index for a scrub (`vectors_rebuild`, set in the transaction
//! that removes the text, whose units' keys go to `vector_trash` in the same
//! transaction), and the next sync, in every segment that held one of the
//! trashed keys, removes them and then overwrites every freed slot: usearch
//! gives a new vector a freed slot before a new one, so adding as many
//! filler vectors (random, under keys no chunk can have) as there are freed
//! slots, then removing them, leaves no erased vector in memory or in the
//! saved file, at the cost of two insertions a removed unit rather than a
//! rewrite of the segment ([`Segment::scrub_freed`]; it checks that no
//! filler took a slot of its own, and the segment is written anew from the
//! table when it did). The segments that held none are not touched. The mark
//! is cleared once every such segment is scrubbed.
//!
//! A store whose index predates segments (one file, no recorded segment
//! size) is migrated by its next sync: the segments are written from the
//! `embeddings` table (nothing is embedded again), the later ones first and
//! the first (which replaces the old file) last, so that a reader meanwhile
//! finds every vector, some twice (searches keep each key once).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};

use rusqlite::{params, OptionalExtension};
use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

use crate::Store;

/// Meta key: highest chunk id in the saved index files.
pub(crate) const WATERMARK: &str = "vectors_watermark";
/// Meta key: the segments that held trashed keys must be scrubbed, since
/// they may hold vectors of erased text in freed slots (see the module
/// documentation).
pub(crate) const REBUILD: &str = "vectors_rebuild";
/// Meta key: the scalar kind of the saved files.
const QUANTIZATION: &str = "vectors_quantization";
/// Meta key: how many chunk ids a segment spans.
const SEGMENT_SIZE_KEY: &str = "vectors_segment_size";

/// How many chunk ids a segment spans unless a store records another size:
/// about 180 MB while a sync loads one (f16 vectors of 384 dimensions and
/// their graph take about 920 bytes a unit: 164 MB for 178k units at 100k
/// messages, see BENCHMARKS.md), and nine segments to search at a million
/// messages (1.8 million units).
pub const SEGMENT_SIZE: i64 = 200_000;

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

/// The vector index in memory: its segments, loaded or viewed.
pub struct VectorIndex {
    segments: Vec<Segment>,
}

impl VectorIndex {
    /// An empty index of one segment for `dims`-dimensional vectors, to be
    /// saved at `path`.
    pub fn empty(path: &Path, dims: usize) -> Result<VectorIndex> {
        Ok(VectorIndex {
            segments: vec![Segment::empty(path, dims)?],
        })
    }

    /// Opens the segment files of the index at `path` if each has the
    /// expected shape; `None` if there is none or one does not match (the
    /// caller falls back on the stored vectors).
    pub fn open(path: &Path, dims: usize, view: bool) -> Option<VectorIndex> {
        let mut segments = Vec::new();
        for (_, file) in segment_files(path) {
            match Segment::open(&file, dims, view) {
                Some(s) => segments.push(s),
                // Removed since it was listed (a sync dropped an empty
                // segment): nothing of it is missed.
                None if !file.exists() => {}
                None => return None,
            }
        }
        if segments.is_empty() {
            return None;
        }
        Some(VectorIndex { segments })
    }

    /// Number of vectors.
    pub fn len(&self) -> usize {
        self.segments.iter().map(Segment::len).sum()
    }

    /// Whether it holds no vector.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many segment files it was opened from.
    pub fn segment_count(&self) -> usize {
        self.segments.len()
    }

    /// Whether `key` is present.
    pub fn contains(&self, key: u64) -> bool {
        self.segments.iter().any(|s| s.contains(key))
    }

    /// Copies the vector of `key` into `buf`; false when absent.
    pub fn vector(&self, key: u64, buf: &mut Vec<f32>) -> bool {
        self.segments.iter().any(|s| s.vector(key, buf))
    }

    /// The bytes the index stores for `key` (its scalars, little-endian
    /// [`SCALAR`]), as they are laid out in its segment's file; `None` when
    /// absent.
    pub fn stored_bytes(&self, key: u64) -> Option<Vec<u8>> {
        self.segments.iter().find_map(|s| s.stored_bytes(key))
    }

    /// Adds (or replaces) the vector of `key`, in the last segment.
    pub fn add(&mut self, key: u64, vector: &[f32]) -> Result<()> {
        for s in &mut self.segments {
            s.remove(key)?;
        }
        match self.segments.last_mut() {
            Some(last) => last.add(key, vector),
            None => Ok(()),
        }
    }

    /// Removes `key` if present.
    pub fn remove(&mut self, key: u64) -> Result<()> {
        for s in &mut self.segments {
            s.remove(key)?;
        }
        Ok(())
    }

    /// The `k` nearest keys to `query` with their cosine similarity: each
    /// segment's `k` nearest, merged.
    pub fn search(&self, query: &[f32], k: usize) -> Result<Vec<(u64, f32)>> {
        let mut found = Vec::new();
        for s in &self.segments {
            found.extend(s.search(query, k)?);
        }
        Ok(merge(found, k))
    }

    /// The `k` nearest keys among those `allowed` accepts.
    pub fn filtered_search(
        &self,
        query: &[f32],
        k: usize,
        allowed: impl Fn(u64) -> bool,
    ) -> Result<Vec<(u64, f32)>> {
        let mut found = Vec::new();
        for s in &self.segments {
            found.extend(s.filtered_search(query, k, &allowed)?);
        }
        Ok(merge(found, k))
    }

    /// Saves every segment atomically (see [`Segment::save_atomic`]).
    pub fn save_atomic(&self) -> Result<()> {
        self.segments.iter().try_for_each(Segment::save_atomic)
    }
}

/// The `k` most similar of `found`, each key once (a reader that opened the
/// files while a sync moved units between them may see a key twice).
fn merge(mut found: Vec<(u64, f32)>, k: usize) -> Vec<(u64, f32)> {
    found.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut seen = BTreeSet::new();
    found.retain(|(key, _)| seen.insert(*key));
    found.truncate(k);
    found
}

/// One segment file in memory (loaded or viewed).
pub(crate) struct Segment {
    index: Index,
    path: PathBuf,
    dims: usize,
}

impl Segment {
    fn err(&self, e: impl std::fmt::Display) -> VectorError {
        VectorError::Index {
            path: self.path.clone(),
            message: e.to_string(),
        }
    }

    /// An empty index for `dims`-dimensional vectors, to be saved at `path`.
    pub(crate) fn empty(path: &Path, dims: usize) -> Result<Segment> {
        let index = Index::new(&options(dims)).map_err(|e| VectorError::Index {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        Ok(Segment {
            index,
            path: path.to_path_buf(),
            dims,
        })
    }

    /// Opens the file at `path` if it has the expected shape; `None` if it is
    /// missing or does not match (the caller rebuilds).
    pub(crate) fn open(path: &Path, dims: usize, view: bool) -> Option<Segment> {
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
        Some(Segment {
            index,
            path: path.to_path_buf(),
            dims,
        })
    }

    /// Number of vectors.
    pub(crate) fn len(&self) -> usize {
        self.index.size()
    }

    /// Whether it holds no vector.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `key` is present.
    pub(crate) fn contains(&self, key: u64) -> bool {
        self.index.contains(key)
    }

    /// Copies the vector of `key` into `buf`; false when absent.
    pub(crate) fn vector(&self, key: u64, buf: &mut Vec<f32>) -> bool {
        buf.resize(self.dims, 0.0);
        matches!(self.index.get(key, &mut buf[..]), Ok(n) if n > 0)
    }

    /// The bytes the index stores for `key` (its scalars, little-endian
    /// [`SCALAR`]), as they are laid out in the saved file; `None` when absent.
    pub(crate) fn stored_bytes(&self, key: u64) -> Option<Vec<u8>> {
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
    pub(crate) fn add(&mut self, key: u64, vector: &[f32]) -> Result<()> {
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
    pub(crate) fn remove(&mut self, key: u64) -> Result<()> {
        if self.index.contains(key) {
            self.index.remove(key).map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    /// Slots of the graph that hold no key: removed units whose vectors
    /// usearch keeps until a new vector takes the slot.
    #[cfg(test)]
    pub(crate) fn freed_slots(&self) -> usize {
        self.index.stats().nodes.saturating_sub(self.index.size())
    }

    /// Overwrites the vector of every freed slot: adds one filler vector (a
    /// seeded random unit vector, under a key above every chunk id) per
    /// freed slot, which usearch puts in freed slots before new ones, then
    /// removes the fillers. Returns false when a filler took a new slot
    /// (then some freed slot may still hold its old vector, and the caller
    /// writes the segment anew).
    pub(crate) fn scrub_freed(&mut self) -> Result<bool> {
        // `stats` walks every node: once before, once after.
        let slots = self.index.stats().nodes;
        let freed = slots.saturating_sub(self.index.size());
        if freed == 0 {
            return Ok(true);
        }
        if self.index.size() + freed > self.index.capacity() {
            self.index
                .reserve(self.index.size() + freed)
                .map_err(|e| self.err(e))?;
        }
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut vector = vec![0f32; self.dims];
        let keys: Vec<u64> = (0..freed as u64).map(|i| FILLER_KEYS - i).collect();
        for key in &keys {
            filler(&mut seed, &mut vector);
            self.index.add(*key, &vector).map_err(|e| self.err(e))?;
        }
        for key in &keys {
            self.index.remove(*key).map_err(|e| self.err(e))?;
        }
        Ok(self.index.stats().nodes == slots)
    }

    /// The `k` nearest keys to `query` with their cosine similarity.
    pub(crate) fn search(&self, query: &[f32], k: usize) -> Result<Vec<(u64, f32)>> {
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
    pub(crate) fn filtered_search(
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
    pub(crate) fn save_atomic(&self) -> Result<()> {
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

/// The highest key a filler vector takes ([`Segment::scrub_freed`]); the
/// fillers count down from it. Chunk ids are SQLite rowids, below 2^63, and
/// `u64::MAX` is usearch's own.
const FILLER_KEYS: u64 = u64::MAX - 1;

/// A pseudo-random unit vector into `out` (xorshift from `seed`): filler
/// for a freed slot, close to no real embedding.
fn filler(seed: &mut u64, out: &mut [f32]) {
    let mut norm = 0f32;
    for x in out.iter_mut() {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        let v = (*seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
        *x = v;
        norm += v * v;
    }
    let norm = norm.sqrt().max(f32::EPSILON);
    out.iter_mut().for_each(|x| *x /= norm);
}

/// The file of segment `n` of the index at `path`: `path` itself for the
/// first, `<stem>.<n>.<extension>` beside it for the others.
pub fn segment_path(path: &Path, n: usize) -> PathBuf {
    if n == 0 {
        return path.to_path_buf();
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}.{n}.{}", ext.to_string_lossy()),
        None => format!("{stem}.{n}"),
    };
    path.with_file_name(name)
}

/// Which segment of the index at `path` a file called `name` is, if any.
fn segment_of_name(path: &Path, name: &str) -> Option<usize> {
    let base = path.file_name()?.to_string_lossy();
    if name == base {
        return Some(0);
    }
    let stem = path.file_stem()?.to_string_lossy();
    let rest = name.strip_prefix(&*stem)?.strip_prefix('.')?;
    let number = match path.extension() {
        Some(ext) => rest.strip_suffix(&*format!(".{}", ext.to_string_lossy()))?,
        None => rest,
    };
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) || number.starts_with('0') {
        return None;
    }
    number.parse().ok().filter(|n| *n > 0)
}

/// The segment files of the index at `path` that exist, by segment number.
pub fn segment_files(path: &Path) -> Vec<(usize, PathBuf)> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<(usize, PathBuf)> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| {
            let name = e.file_name();
            let n = segment_of_name(path, &name.to_string_lossy())?;
            Some((n, segment_path(path, n)))
        })
        .collect();
    files.sort();
    files
}

/// Removes every segment file of the index at `path`.
pub fn remove_files(path: &Path) -> Result<()> {
    for (_, file) in segment_files(path) {
        match std::fs::remove_file(&file) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(VectorError::Index {
                    path: file,
                    message: e.to_string(),
                })
            }
        }
    }
    Ok(())
}

/// The bytes the segment files of the index at `path` take on disk; `None`
/// when there is none.
pub fn disk_bytes(path: &Path) -> Option<u64> {
    let files = segment_files(path);
    if files.is_empty() {
        return None;
    }
    Some(
        files
            .iter()
            .filter_map(|(_, f)| std::fs::metadata(f).ok())
            .map(|m| m.len())
            .sum(),
    )
}

/// Size and modification time of each segment file of the index at `path`:
/// a reader that keeps the index open reopens it when these change.
pub fn file_stamps(path: &Path) -> Vec<(usize, u64, Option<std::time::SystemTime>)> {
    segment_files(path)
        .into_iter()
        .filter_map(|(n, f)| {
            let m = std::fs::metadata(f).ok()?;
            Some((n, m.len(), m.modified().ok()))
        })
        .collect()
}

/// The name prefix of the temporary copies [`Segment::save_atomic`] writes
/// beside the segment file at `path` (`.<name>.tmp-`, then a pid).
fn temporary_prefix(path: &Path) -> String {
    format!(
        ".{}.tmp-",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    )
}

/// Removes temporary copies of the segment files of the index at `path`
/// left by a writer that died while saving (`kill -9`, a crash, power
/// loss). Only the writer saves the index, so the caller must hold the
/// writer lock: then every such file is stale. Returns how many were
/// removed.
pub fn remove_stale_temporaries(path: &Path) -> Result<usize> {
    let dir = path.parent().unwrap_or(Path::new("."));
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
        let Some((file, pid)) = name
            .strip_prefix('.')
            .and_then(|rest| rest.rsplit_once(".tmp-"))
        else {
            continue;
        };
        if segment_of_name(path, file).is_none()
            || pid.is_empty()
            || !pid.bytes().all(|b| b.is_ascii_digit())
        {
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

/// How many vectors the segment files of the index at `path` hold, read from
/// their headers without loading them; `None` when there is none or one is
/// unreadable.
pub fn file_count(path: &Path) -> Option<usize> {
    let files = segment_files(path);
    if files.is_empty() {
        return None;
    }
    files.iter().map(|(_, f)| header_count(f)).sum()
}

fn header_count(file: &Path) -> Option<usize> {
    file.to_str()
        .and_then(|p| Index::metadata(p).ok())
        .map(|m| m.count_present as usize)
}

/// Whether the header of the segment file `file` says it holds `count`
/// vectors of `dims` dimensions (when known) in deja's shape.
fn header_matches(file: &Path, dims: Option<u64>, count: i64) -> bool {
    file.to_str()
        .and_then(|p| Index::metadata(p).ok())
        .is_some_and(|m| {
            m.count_present as i64 == count
                && dims.is_none_or(|d| d == m.dimensions)
                && m.quantization == SCALAR
                && !m.multi
        })
}

/// The first byte of a cached vector stored in half precision. Vectors
/// cached before were little-endian f32s, a multiple of four bytes long; a
/// half-precision blob is this byte and two bytes a value, an odd length, so
/// the two are never confused and both are read.
const HALF: u8 = 0x16;

/// Reads a cached vector blob: half precision after [`HALF`], or the f32s
/// of stores written before.
pub fn from_blob(blob: &[u8]) -> Vec<f32> {
    match blob.split_first() {
        Some((&HALF, halves)) if blob.len() % 2 == 1 => halves
            .chunks_exact(2)
            .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect(),
        _ => blob
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
    }
}

/// Encodes a vector for the cache in half precision (what the vector index
/// holds anyway): a fifth of the bytes on disk that f32s took, whose rows
/// spilled onto overflow pages.
pub fn to_blob(v: &[f32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 + v.len() * 2);
    out.push(HALF);
    for x in v {
        out.extend_from_slice(&half::f16::from_f32(*x).to_le_bytes());
    }
    out
}

/// Encodes a vector as little-endian f32s, as stores before half precision
/// cached them.
pub fn to_f32_blob(v: &[f32]) -> Vec<u8> {
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

/// The segment size the store's index files were written with; `None`
/// before the first sync, or for a file that predates segments.
pub fn segment_size(store: &Store) -> Result<Option<i64>> {
    Ok(store
        .meta(SEGMENT_SIZE_KEY)?
        .and_then(|v| v.parse().ok())
        .filter(|s: &i64| *s > 0))
}

/// The segment of chunk id `id` (ids start at 1).
fn segment_of(id: i64, size: i64) -> usize {
    ((id.max(1) - 1) / size) as usize
}

/// The chunk ids segment `n` spans: `(after, last]`.
fn span(n: usize, size: i64) -> (i64, i64) {
    let after = n as i64 * size;
    (after, after + size)
}

/// What the store holds for the index: units per segment, trashed keys per
/// segment, the highest chunk id.
struct Census {
    units: BTreeMap<usize, i64>,
    trash: BTreeMap<usize, Vec<i64>>,
    max_chunk: i64,
}

fn census(store: &Store, size: i64) -> Result<Census> {
    let conn = store.conn();
    let sq = |e: rusqlite::Error| VectorError::Store(store.wrap(e));
    let mut units = BTreeMap::new();
    {
        let mut stmt = conn
            .prepare("SELECT (id - 1) / ?1, count(*), max(id) FROM chunks GROUP BY 1")
            .map_err(sq)?;
        let rows = stmt
            .query_map([size], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            })
            .map_err(sq)?;
        let mut max_chunk = 0;
        for row in rows {
            let (n, count, max) = row.map_err(sq)?;
            units.insert(n.max(0) as usize, count);
            max_chunk = max_chunk.max(max);
        }
        let mut trash: BTreeMap<usize, Vec<i64>> = BTreeMap::new();
        let mut stmt = conn.prepare("SELECT key FROM vector_trash").map_err(sq)?;
        let keys = stmt.query_map([], |r| r.get::<_, i64>(0)).map_err(sq)?;
        for key in keys {
            let key = key.map_err(sq)?;
            trash.entry(segment_of(key, size)).or_default().push(key);
        }
        Ok(Census {
            units,
            trash,
            max_chunk,
        })
    }
}

/// Whether the saved index files already match the store: every segment
/// that holds units has a readable file of the store's dimensions with
/// exactly as many vectors, no key waits for removal, no unit is above the
/// watermark and no rebuild is owed.
pub fn in_sync(store: &Store, path: &Path) -> Result<bool> {
    let Some(size) = segment_size(store)? else {
        // Never synced, or a single file from before segments: in sync
        // only while there is nothing to hold.
        let chunks: i64 = store
            .conn()
            .query_row("SELECT count(*) FROM chunks", [], |r| r.get(0))
            .map_err(|e| VectorError::Store(store.wrap(e)))?;
        return Ok(chunks == 0);
    };
    let census = census(store, size)?;
    if !census.trash.is_empty() || census.max_chunk > watermark(store)? || rebuild_pending(store)? {
        return Ok(false);
    }
    let dims: Option<u64> = store.meta("embed_dims")?.and_then(|d| d.parse().ok());
    if segment_files(path)
        .iter()
        .any(|(n, _)| *n > 0 && !census.units.contains_key(n))
    {
        return Ok(false);
    }
    Ok(census
        .units
        .iter()
        .all(|(n, count)| header_matches(&segment_path(path, *n), dims, *count)))
}

/// Whether segments must be scrubbed before anything else is done with
/// them: text was erased since they were saved (see the module
/// documentation).
pub fn rebuild_pending(store: &Store) -> Result<bool> {
    Ok(store.meta(REBUILD)?.is_some())
}

/// What [`sync`] did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SyncReport {
    /// Segments whose file was written anew from the `embeddings` table.
    pub rebuilt: Vec<usize>,
    /// Segments whose file was loaded, changed and saved.
    pub updated: Vec<usize>,
}

/// Brings the index files in line with the store (see the module
/// documentation): per segment, removes trashed keys and adds chunks above
/// the watermark, scrubbing the freed slots of a segment that held erased
/// text, rewriting from the table one whose file is missing or
/// inconsistent, and saves atomically. `model`
/// is the store's embedding model id; `dims` its dimensions. Returns the
/// index, viewed.
pub fn sync(store: &Store, path: &Path, model: &str, dims: usize) -> Result<VectorIndex> {
    sync_with(store, path, model, dims, None)?;
    open_synced(path, dims)
}

/// [`sync`] with a segment size: `None` keeps the store's (or uses
/// [`SEGMENT_SIZE`] for a store that has none); another size than the
/// store's rewrites every segment. Returns what it did, opening nothing.
pub fn sync_with(
    store: &Store,
    path: &Path,
    model: &str,
    dims: usize,
    size: Option<i64>,
) -> Result<SyncReport> {
    let recorded = segment_size(store)?;
    let quant_ok = store.meta(QUANTIZATION)?.as_deref() == Some(scalar_name());
    let want = size.filter(|s| *s > 0).or(recorded).unwrap_or(SEGMENT_SIZE);
    if recorded != Some(want) || !quant_ok {
        return rewrite_all(store, path, model, dims, want);
    }
    let size = want;
    let census = census(store, size)?;
    let mark = watermark(store)?;
    let erased = rebuild_pending(store)?;
    let sq = |e: rusqlite::Error| VectorError::Store(store.wrap(e));

    // The segments with work: those with trash, those with units above the
    // watermark, and those whose file disagrees with the store.
    let mut work: BTreeSet<usize> = census.trash.keys().copied().collect();
    if census.max_chunk > mark {
        work.extend(segment_of(mark + 1, size)..=segment_of(census.max_chunk, size));
    }
    for (n, count) in &census.units {
        if !header_matches(&segment_path(path, *n), Some(dims as u64), *count) {
            work.insert(*n);
        }
    }
    let mut report = SyncReport::default();
    for n in work {
        let (after, last) = span(n, size);
        let file = segment_path(path, n);
        let expected = census.units.get(&n).copied().unwrap_or(0);
        let trash = census.trash.get(&n).map(Vec::as_slice).unwrap_or(&[]);
        let scrub = erased && !trash.is_empty();
        let mut saved = false;
        if let Some(mut segment) = Segment::open(&file, dims, false) {
            for key in trash {
                segment.remove(*key as u64)?;
            }
            add_embedded(store, &mut segment, model, after.max(mark), last)?;
            // Freed slots keep the removed vectors until overwritten.
            let clean = !scrub || segment.scrub_freed()?;
            if clean && segment.len() as i64 == expected {
                segment.save_atomic()?;
                report.updated.push(n);
                saved = true;
            }
        }
        if !saved {
            // A new file from the table: the old one disagrees with the
            // store, or a scrub could not overwrite its freed slots.
            write_segment(store, path, model, dims, n, size, expected)?;
            report.rebuilt.push(n);
        }
        if !trash.is_empty() {
            conn_delete_trash(store, after, last)?;
        }
        if mark < census.max_chunk && last > mark {
            let moved = last.min(census.max_chunk);
            store.set_meta(WATERMARK, &moved.to_string())?;
        }
    }
    remove_strays(path, &census)?;
    if erased {
        store
            .conn()
            .execute("DELETE FROM meta WHERE key = ?1", [REBUILD])
            .map_err(sq)?;
    }
    Ok(report)
}

/// Removes the files of segments (other than the first) that hold no unit
/// of the store: their sessions were forgotten, or they were left by a sync
/// with another segment size.
fn remove_strays(path: &Path, census: &Census) -> Result<()> {
    for (n, file) in segment_files(path) {
        if n > 0 && !census.units.contains_key(&n) {
            match std::fs::remove_file(&file) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(VectorError::Index {
                        path: file,
                        message: e.to_string(),
                    })
                }
            }
        }
    }
    Ok(())
}

fn conn_delete_trash(store: &Store, after: i64, last: i64) -> Result<()> {
    // Only the writer (who holds the lock) adds to the trash.
    store
        .conn()
        .execute(
            "DELETE FROM vector_trash WHERE key > ?1 AND key <= ?2",
            [after, last],
        )
        .map_err(|e| VectorError::Store(store.wrap(e)))?;
    Ok(())
}

/// Writes segment `n` anew from the `embeddings` table: an empty one is
/// still written when it is the first (so that an index with no unit has a
/// file) and otherwise its file is removed.
fn write_segment(
    store: &Store,
    path: &Path,
    model: &str,
    dims: usize,
    n: usize,
    size: i64,
    expected: i64,
) -> Result<()> {
    let (after, last) = span(n, size);
    let file = segment_path(path, n);
    if expected == 0 && n > 0 {
        return match std::fs::remove_file(&file) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(VectorError::Index {
                path: file,
                message: e.to_string(),
            }),
        };
    }
    let mut segment = Segment::empty(&file, dims)?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_THREADS));
    if expected as usize >= PARALLEL_FROM && threads > 1 {
        add_in_parallel(store, &segment, model, after, last, threads)?;
    } else {
        add_embedded(store, &mut segment, model, after, last)?;
    }
    segment.save_atomic()
}

/// From this many units a segment written anew is built by several threads
/// (below it, threads do not pay for themselves and the graph stays the
/// same from run to run).
const PARALLEL_FROM: usize = 20_000;
/// Most threads building one segment.
const MAX_THREADS: usize = 4;

/// Adds to the empty `segment` the vector of every unit with a row id in
/// `(after, last]`, in [`add_embedded`]'s order, by `threads` threads at
/// once: the vectors are read a block at a time on this thread and each
/// block is inserted by all of them. Insertion into the graph is where a
/// rebuild spends its time (hundreds of units a second into a segment of
/// 200,000), and usearch takes concurrent insertions; which thread inserts
/// which unit, and so the graph, varies from run to run.
fn add_in_parallel(
    store: &Store,
    segment: &Segment,
    model: &str,
    after: i64,
    last: i64,
    threads: usize,
) -> Result<()> {
    const BLOCK: usize = 2048;
    let conn = store.conn();
    let sq = |e: rusqlite::Error| VectorError::Store(store.wrap(e));
    let order = embedded_order(store, after, last)?;
    segment
        .index
        .reserve_capacity_and_threads(order.len().max(1), threads)
        .map_err(|e| segment.err(e))?;
    let mut stmt = conn.prepare(UNIT_VECTOR).map_err(sq)?;
    for ids in order.chunks(BLOCK) {
        let mut block: Vec<(u64, Vec<f32>)> = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(v) = unit_vector(store, &mut stmt, *id, model)? {
                if v.len() != segment.dims {
                    return Err(segment.err(format!(
                        "vector of {} dimensions for an index of {}",
                        v.len(),
                        segment.dims
                    )));
                }
                block.push((*id as u64, v));
            }
        }
        let share = block.len().div_ceil(threads).max(1);
        let failed = std::thread::scope(|scope| {
            let workers: Vec<_> = block
                .chunks(share)
                .map(|part| {
                    scope.spawn(move || {
                        for (key, v) in part {
                            if let Err(e) = segment.index.add(*key, v) {
                                return Some(e.to_string());
                            }
                        }
                        None
                    })
                })
                .collect();
            workers.into_iter().find_map(|w| {
                w.join()
                    .unwrap_or_else(|_| Some("a thread panicked".into()))
            })
        });
        if let Some(message) = failed {
            return Err(segment.err(message));
        }
    }
    Ok(())
}

/// One unit's cached vector under a model: `?1` the chunk id, `?2` the model.
const UNIT_VECTOR: &str = "SELECT e.vector FROM chunks c
     JOIN embeddings e ON e.text_hash = c.text_hash AND e.model = ?2
     WHERE c.id = ?1";

/// The vector of unit `id` under `model` ([`UNIT_VECTOR`] prepared as
/// `stmt`); `None` when it has none.
fn unit_vector(
    store: &Store,
    stmt: &mut rusqlite::Statement<'_>,
    id: i64,
    model: &str,
) -> Result<Option<Vec<f32>>> {
    let blob: Option<Vec<u8>> = stmt
        .query_row(params![id, model], |r| r.get(0))
        .optional()
        .map_err(|e| VectorError::Store(store.wrap(e)))?;
    Ok(blob.map(|b| from_blob(&b)))
}

/// The chunk ids in `(after, last]` in the order the embedding passes walk
/// the history (see [`add_embedded`]).
fn embedded_order(store: &Store, after: i64, last: i64) -> Result<Vec<i64>> {
    let sq = |e: rusqlite::Error| VectorError::Store(store.wrap(e));
    let mut stmt = store
        .conn()
        .prepare(
            "SELECT c.id FROM chunks c
             JOIN messages m ON m.id = c.message JOIN sessions s ON s.id = m.session
             WHERE c.id > ?1 AND c.id <= ?2
             ORDER BY s.started_at DESC, m.session DESC, m.id, c.ordinal",
        )
        .map_err(sq)?;
    let rows = stmt.query_map([after, last], |r| r.get(0)).map_err(sq)?;
    rows.collect::<rusqlite::Result<_>>().map_err(sq)
}

/// Writes every segment anew with segment size `size`: for a store never
/// synced, one from before segments, one synced with another size or
/// scalar kind. The later segments first and the first (which may replace a
/// single file holding every vector) last, so that a reader finds every
/// vector meanwhile; the store records the size only once all are written,
/// so a crash in between starts over.
fn rewrite_all(
    store: &Store,
    path: &Path,
    model: &str,
    dims: usize,
    size: i64,
) -> Result<SyncReport> {
    let sq = |e: rusqlite::Error| VectorError::Store(store.wrap(e));
    store
        .conn()
        .execute("DELETE FROM meta WHERE key = ?1", [SEGMENT_SIZE_KEY])
        .map_err(sq)?;
    let census = census(store, size)?;
    let last_segment = segment_of(census.max_chunk, size);
    let mut report = SyncReport::default();
    for n in (0..=last_segment).rev() {
        let expected = census.units.get(&n).copied().unwrap_or(0);
        write_segment(store, path, model, dims, n, size, expected)?;
        report.rebuilt.push(n);
    }
    remove_strays(path, &census)?;
    report.rebuilt.reverse();
    store.set_meta(WATERMARK, &census.max_chunk.to_string())?;
    store.set_meta(QUANTIZATION, scalar_name())?;
    store.set_meta(SEGMENT_SIZE_KEY, &size.to_string())?;
    let conn = store.conn();
    conn.execute("DELETE FROM vector_trash", []).map_err(sq)?;
    conn.execute("DELETE FROM meta WHERE key = ?1", [REBUILD])
        .map_err(sq)?;
    Ok(report)
}

/// The index after a sync, viewed; an empty one when there is no file.
fn open_synced(path: &Path, dims: usize) -> Result<VectorIndex> {
    match VectorIndex::open(path, dims, true) {
        Some(index) => Ok(index),
        None => VectorIndex::empty(path, dims),
    }
}

/// Adds to `segment` the vector of every unit with a row id in
/// `(after, last]` that has one under `model`, one row at a time (at 100k
/// messages the vectors as f32 blobs would be hundreds of MB held at once).
///
/// Units go in in the order the embedding passes walk the history (newest
/// session first, its messages in order, each message's windows in order),
/// not in the order they were embedded: the graph, and so what an
/// approximate search finds, is the same whether a long message got its
/// windows in one pass or in two. For units embedded in one pass that order
/// is their row ids'.
fn add_embedded(
    store: &Store,
    segment: &mut Segment,
    model: &str,
    after: i64,
    last: i64,
) -> Result<()> {
    if after >= last {
        return Ok(());
    }
    let conn = store.conn();
    let sq = |e: rusqlite::Error| VectorError::Store(store.wrap(e));
    let newer: i64 = conn
        .query_row(
            "SELECT count(*) FROM chunks WHERE id > ?1 AND id <= ?2",
            [after, last],
            |r| r.get(0),
        )
        .map_err(sq)?;
    let need = (segment.len() + newer as usize).max(1);
    if need > segment.index.capacity() {
        segment.index.reserve(need).map_err(|e| segment.err(e))?;
    }
    // The order first (ids only: small), then each vector by its id.
    let order = embedded_order(store, after, last)?;
    let mut stmt = conn.prepare(UNIT_VECTOR).map_err(sq)?;
    for id in order {
        if let Some(v) = unit_vector(store, &mut stmt, id, model)? {
            segment.add(id as u64, &v)?;
        }
    }
    Ok(())
}

fn scalar_name() -> &'static str {
    "f16"
}

/// After sessions were removed: drop their vectors from the index files at
/// `path`, if there are any (no model needed: the vectors come from the
/// table). When text was erased the segments that held it are scrubbed,
/// so that no freed slot keeps an erased vector.
pub fn sync_after_change(store: &Store, path: &Path) -> Result<()> {
    let model = store.meta("embed_model")?;
    let dims = store.meta("embed_dims")?.and_then(|d| d.parse().ok());
    let (Some(model), Some(dims)) = (model, dims) else {
        // Never embedded: files left there hold nothing the store knows.
        if rebuild_pending(store)? {
            remove_files(path)?;
            store
                .conn()
                .execute("DELETE FROM meta WHERE key = ?1", [REBUILD])
                .map_err(|e| VectorError::Store(store.wrap(e)))?;
        }
        return Ok(());
    };
    sync_with(store, path, &model, dims, None).map(|_| ())
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
mod segment_tests;
#[cfg(test)]
mod tests;
