//! Recall: ranks stored messages for a query by meaning (embeddings), by words
//! (FTS5 BM25), or both fused; groups near-duplicate hits; and returns them
//! with their session, project, time and a snippet.

pub mod fuse;
pub mod lexical;
pub mod semantic;
pub mod snippet;

use std::collections::HashMap;

use deja_config::Mode;
use rusqlite::params_from_iter;
use rusqlite::types::Value;

use crate::model::{Project, Role};
use crate::store::query::SessionFilter;
use crate::store::{sha256_hex, Store};

/// Which messages a search may return.
#[derive(Debug, Clone, Default)]
pub struct Candidates {
    /// Session filters.
    pub filter: SessionFilter,
    /// Only messages of this role.
    pub role: Option<Role>,
}

impl Candidates {
    /// Whether nothing is filtered.
    pub fn is_unrestricted(&self) -> bool {
        self.role.is_none()
            && self.filter.harness.is_none()
            && self.filter.project.is_none()
            && self.filter.since.is_none()
            && self.filter.until.is_none()
    }

    /// SQL condition over `m` (messages) and `s` (sessions), with parameters ?1..
    pub fn sql(&self) -> (String, Vec<Value>) {
        let (mut cond, mut args) = self.filter.sql();
        if let Some(role) = self.role {
            args.push(Value::Text(role.as_str().to_string()));
            cond.push_str(&format!(" AND m.role = ?{}", args.len()));
        }
        (cond, args)
    }
}

/// One result.
#[derive(Debug, Clone)]
pub struct Hit {
    /// 1-based rank.
    pub rank: usize,
    /// The fused (or single-mode) score; higher is better.
    pub score: f64,
    /// Message row id.
    pub message_row: i64,
    /// The session's deja id.
    pub session_id: String,
    /// Harness.
    pub harness: String,
    /// Project.
    pub project: Project,
    /// Session start, ms.
    pub started_at: i64,
    /// The harness's message id, or deja's.
    pub message_id: String,
    /// Position in the session.
    pub message_index: i64,
    /// Role.
    pub role: String,
    /// Message time, ms.
    pub timestamp: i64,
    /// Full text.
    pub text: String,
    /// Transcript path.
    pub source_path: Option<String>,
    /// Other hits with the same text, folded into this one.
    pub duplicates: Vec<String>,
}

/// How many candidates each ranker contributes before fusion.
const DEPTH: usize = 100;

/// Ranks messages for `query`. `semantic` carries the query embedding and the
/// vectors when semantic ranking is possible.
pub fn search(
    store: &Store,
    query: &str,
    mode: Mode,
    candidates: &Candidates,
    semantic: Option<(&semantic::Vectors, &[f32])>,
    limit: usize,
) -> crate::store::Result<Vec<Hit>> {
    let depth = DEPTH.max(limit * 3);
    let lex = match mode {
        Mode::Lexical | Mode::Hybrid => lexical::search(store, query, candidates, depth)?,
        Mode::Semantic => Vec::new(),
    };
    let sem = match (mode, semantic) {
        (Mode::Semantic | Mode::Hybrid, Some((vectors, q))) => {
            semantic::search(store, vectors, q, candidates, depth)?
        }
        _ => Vec::new(),
    };
    let ranked = match mode {
        Mode::Lexical => lex,
        Mode::Semantic => sem,
        Mode::Hybrid => fuse::fuse(&sem, &lex, fuse::DEFAULT),
    };
    hydrate(store, &ranked, limit)
}

/// Loads the top hits, folding messages with the same text into the first.
fn hydrate(store: &Store, ranked: &[(i64, f64)], limit: usize) -> crate::store::Result<Vec<Hit>> {
    let mut hits: Vec<Hit> = Vec::new();
    let mut by_text: HashMap<String, usize> = HashMap::new();
    for chunk in ranked.chunks(50) {
        let rows = load(store, chunk)?;
        for (id, score) in chunk {
            let Some(mut hit) = rows.get(id).cloned() else {
                continue;
            };
            let key = sha256_hex(
                hit.text
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
                    .to_lowercase()
                    .as_bytes(),
            );
            if let Some(&i) = by_text.get(&key) {
                hits[i].duplicates.push(hit.session_id.clone());
                continue;
            }
            if hits.len() == limit {
                continue;
            }
            hit.score = *score;
            hit.rank = hits.len() + 1;
            by_text.insert(key, hits.len());
            hits.push(hit);
        }
        if hits.len() == limit {
            break;
        }
    }
    Ok(hits)
}

fn load(store: &Store, ids: &[(i64, f64)]) -> crate::store::Result<HashMap<i64, Hit>> {
    let marks = vec!["?"; ids.len()].join(",");
    let sql = format!(
        "SELECT m.id, s.session_id, s.harness, s.project_dir, s.project_name, s.project_id,
                s.started_at, m.native_id, m.position, m.role, m.timestamp, m.text, s.source_path
         FROM messages m JOIN sessions s ON s.id = m.session
         WHERE m.id IN ({marks})"
    );
    let mut stmt = store.conn().prepare(&sql).map_err(|e| store.wrap(e))?;
    let rows = stmt
        .query_map(params_from_iter(ids.iter().map(|x| x.0)), |r| {
            let session_id: String = r.get(1)?;
            let native: Option<String> = r.get(7)?;
            let position: i64 = r.get(8)?;
            Ok(Hit {
                rank: 0,
                score: 0.0,
                message_row: r.get(0)?,
                message_id: native
                    .unwrap_or_else(|| crate::model::message_id(&session_id, position as usize)),
                session_id,
                harness: r.get(2)?,
                project: Project {
                    dir: r.get(3)?,
                    name: r.get(4)?,
                    id: r.get(5)?,
                },
                started_at: r.get(6)?,
                message_index: position,
                role: r.get(9)?,
                timestamp: r.get(10)?,
                text: r.get(11)?,
                source_path: r.get(12)?,
                duplicates: Vec::new(),
            })
        })
        .map_err(|e| store.wrap(e))?;
    let mut out = HashMap::new();
    for r in rows {
        let hit = r.map_err(|e| store.wrap(e))?;
        out.insert(hit.message_row, hit);
    }
    Ok(out)
}
