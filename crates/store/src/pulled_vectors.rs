//! Vectors that travel with team memory: the unit vectors of a session this
//! machine embedded (what `deja team push` publishes), and the vectors a
//! teammate published with a session pulled here, kept until the embedding
//! pass takes them in place of running the model. Vectors travel in half
//! precision, the precision the vector index keeps them in.

use rusqlite::{params, OptionalExtension};

use crate::{Result, Store};

/// Encodes a vector in half precision (little-endian IEEE 754 binary16).
pub fn to_f16_blob(v: &[f32]) -> Vec<u8> {
    v.iter()
        .flat_map(|x| half::f16::from_f32(*x).to_le_bytes())
        .collect()
}

/// Reads a half-precision vector blob; `None` when its length is not
/// `dims` values or a value is not finite.
pub fn from_f16_blob(blob: &[u8], dims: usize) -> Option<Vec<f32>> {
    if blob.len() != dims * 2 {
        return None;
    }
    let v: Vec<f32> = blob
        .chunks_exact(2)
        .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
        .collect();
    v.iter().all(|x| x.is_finite()).then_some(v)
}

impl Store {
    /// The vectors of `model` of the units of session `row` (its messages'
    /// units, each text once), in text hash order: what a push publishes.
    pub fn unit_vectors(&self, row: i64, model: &str) -> Result<Vec<(String, Vec<f32>)>> {
        let mut stmt = self
            .conn()
            .prepare_cached(
                "SELECT DISTINCT c.text_hash, e.vector
                 FROM messages m JOIN chunks c ON c.message = m.id
                 JOIN embeddings e ON e.text_hash = c.text_hash AND e.model = ?2
                 WHERE m.session = ?1 ORDER BY c.text_hash",
            )
            .map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map(params![row, model], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    crate::vectors::from_blob(&r.get::<_, Vec<u8>>(1)?),
                ))
            })
            .map_err(|e| self.wrap(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.wrap(e))
    }

    /// Replaces the vectors of `model` a teammate published with pulled
    /// session `row` (by text hash, half precision). Returns how many are
    /// kept.
    pub fn put_pulled_vectors(
        &mut self,
        row: i64,
        model: &str,
        vectors: &[(String, Vec<u8>)],
    ) -> Result<usize> {
        self.in_transaction(|tx| {
            tx.execute("DELETE FROM pulled_vectors WHERE session = ?1", [row])?;
            let mut put = tx.prepare_cached(
                "INSERT OR IGNORE INTO pulled_vectors (session, model, text_hash, vector)
                 VALUES (?1, ?2, ?3, ?4)",
            )?;
            let mut n = 0;
            for (hash, blob) in vectors {
                n += put.execute(params![row, model, hash, blob])?;
            }
            Ok(n)
        })
    }

    /// The vector of `model` a teammate published for the unit text hashed
    /// `hash` of session `row`, if one waits and reads as `dims` values.
    pub fn pulled_vector(
        &self,
        row: i64,
        model: &str,
        hash: &str,
        dims: usize,
    ) -> Result<Option<Vec<f32>>> {
        let mut stmt = self
            .conn()
            .prepare_cached(
                "SELECT vector FROM pulled_vectors
                 WHERE session = ?1 AND model = ?2 AND text_hash = ?3",
            )
            .map_err(|e| self.wrap(e))?;
        let blob: Option<Vec<u8>> = stmt
            .query_row(params![row, model, hash], |r| r.get(0))
            .optional()
            .map_err(|e| self.wrap(e))?;
        Ok(blob.and_then(|b| from_f16_blob(&b, dims)))
    }

    /// Drops the published vectors waiting for `sessions` (taken, or
    /// refused after a check). Returns how many went.
    pub fn drop_pulled_vectors(&mut self, sessions: &[i64]) -> Result<usize> {
        self.in_transaction(|tx| {
            let mut drop = tx.prepare_cached("DELETE FROM pulled_vectors WHERE session = ?1")?;
            let mut n = 0;
            for s in sessions {
                n += drop.execute([s])?;
            }
            Ok(n)
        })
    }

    /// Drops the published vectors of sessions none of whose messages waits
    /// for units any more (every vector they could give is taken).
    pub fn drop_taken_pulled_vectors(&mut self) -> Result<usize> {
        self.conn()
            .execute(
                "DELETE FROM pulled_vectors WHERE session NOT IN (
                    SELECT m.session FROM waiting_units w CROSS JOIN messages m ON m.id = w.message
                    UNION
                    SELECT m.session FROM partial_units p CROSS JOIN messages m ON m.id = p.message)",
                [],
            )
            .map_err(|e| self.wrap(e))
    }

    /// How many published vectors wait to be taken.
    pub fn pulled_vector_count(&self) -> Result<i64> {
        self.conn()
            .query_row("SELECT count(*) FROM pulled_vectors", [], |r| r.get(0))
            .map_err(|e| self.wrap(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_precision_round_trips_within_its_precision_and_refuses_bad_blobs() {
        let v = vec![0.5f32, -0.25, 0.123_456_79, 1e-3, 0.0];
        let blob = to_f16_blob(&v);
        assert_eq!(blob.len(), 10);
        let back = from_f16_blob(&blob, 5).expect("five values");
        for (a, b) in v.iter().zip(&back) {
            assert!((a - b).abs() <= a.abs() / 1000.0 + 1e-6, "{a} vs {b}");
        }
        assert_eq!(from_f16_blob(&blob, 4), None, "wrong length");
        let inf = half::f16::INFINITY.to_le_bytes();
        assert_eq!(from_f16_blob(&inf, 1), None, "not finite");
    }
}
