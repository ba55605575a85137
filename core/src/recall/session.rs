//! Session facts for ranking: which session each candidate message belongs to
//! and when it started, and a session's semantic score from its best
//! messages, so that a session discussing the query in several places
//! outranks a lone passing mention.

use std::collections::HashMap;

use rusqlite::params_from_iter;

use crate::store::Store;

/// For `messages`: message → session row, and session row → start (ms).
pub fn sessions_of(
    store: &Store,
    messages: &[i64],
) -> crate::store::Result<(HashMap<i64, i64>, HashMap<i64, i64>)> {
    let mut session_of = HashMap::new();
    let mut started = HashMap::new();
    let mut ids = messages.to_vec();
    ids.sort_unstable();
    ids.dedup();
    for chunk in ids.chunks(500) {
        let marks = vec!["?"; chunk.len()].join(",");
        let sql = format!(
            "SELECT m.id, m.session, s.started_at FROM messages m JOIN sessions s ON s.id = m.session
             WHERE m.id IN ({marks})"
        );
        let mut stmt = store.conn().prepare(&sql).map_err(|e| store.wrap(e))?;
        let rows = stmt
            .query_map(params_from_iter(chunk.iter()), |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            })
            .map_err(|e| store.wrap(e))?;
        for r in rows {
            let (m, s, t) = r.map_err(|e| store.wrap(e))?;
            session_of.insert(m, s);
            started.insert(s, t);
        }
    }
    Ok((session_of, started))
}

/// Per session, the mean of its `top` best scores in `ranked` (missing ones
/// count as zero, so one good message is not enough).
pub fn top_mean(
    ranked: &[(i64, f64)],
    session_of: &HashMap<i64, i64>,
    top: usize,
) -> HashMap<i64, f64> {
    let mut per: HashMap<i64, Vec<f64>> = HashMap::new();
    for (id, score) in ranked {
        if let Some(s) = session_of.get(id) {
            per.entry(*s).or_default().push(*score);
        }
    }
    let top = top.max(1);
    per.into_iter()
        .map(|(s, mut v)| {
            v.sort_by(|a, b| b.total_cmp(a));
            (s, v.iter().take(top).sum::<f64>() / top as f64)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_mean_needs_several_good_messages() {
        let session_of: HashMap<i64, i64> = [(1, 10), (2, 10), (3, 20)].into();
        let m = top_mean(&[(1, 0.6), (2, 0.6), (3, 0.9)], &session_of, 2);
        assert!((m[&10] - 0.6).abs() < 1e-9);
        assert!((m[&20] - 0.45).abs() < 1e-9);
    }
}
