//! Bulk reads for tools and the benchmark: every vector, every session's
//! texts. Nothing on a user's recall path uses them.

use crate::{Result, Store};

impl Store {
    /// Every embedding unit's vector, by unit id (for benchmarks and tools).
    pub fn all_vectors(&self) -> Result<Vec<(u64, Vec<f32>)>> {
        let model = self.meta("embed_model")?.unwrap_or_default();
        let mut stmt = self
            .conn()
            .prepare(
                "SELECT c.id, e.vector FROM chunks c
                 JOIN embeddings e ON e.text_hash = c.text_hash AND e.model = ?1 ORDER BY c.id",
            )
            .map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map([model], |r| {
                Ok((
                    r.get::<_, i64>(0)? as u64,
                    crate::vectors::from_blob(&r.get::<_, Vec<u8>>(1)?),
                ))
            })
            .map_err(|e| self.wrap(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.wrap(e))
    }

    /// Every session's message texts, in order (for benchmarks and tools).
    pub fn texts_by_session(&self) -> Result<Vec<Vec<String>>> {
        let mut stmt = self
            .conn()
            .prepare("SELECT session, text FROM messages ORDER BY session, position")
            .map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
            .map_err(|e| self.wrap(e))?;
        let mut out: Vec<Vec<String>> = Vec::new();
        let mut current = None;
        for row in rows {
            let (session, text) = row.map_err(|e| self.wrap(e))?;
            if current != Some(session) {
                out.push(Vec::new());
                current = Some(session);
            }
            if let Some(last) = out.last_mut() {
                last.push(text);
            }
        }
        Ok(out)
    }
}
