//! Session evidence for ranking: a session's semantic score from its best
//! messages, so that a session discussing the query in several places
//! outranks a lone passing mention.

use std::collections::HashMap;

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
