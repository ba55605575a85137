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

    #[test]
    fn top_mean_takes_the_best_scores_whatever_their_order() {
        let session_of: HashMap<i64, i64> = [(1, 10), (2, 10), (3, 10), (4, 10), (5, 20)].into();
        let ranked = [(1, 0.1), (2, 0.9), (3, 0.5), (4, 0.7), (5, 0.3)];
        let m = top_mean(&ranked, &session_of, 2);
        assert!((m[&10] - 0.8).abs() < 1e-9, "{m:?}");
        assert!((m[&20] - 0.15).abs() < 1e-9, "{m:?}");
        // A top of 0 counts as 1: the best score.
        let m = top_mean(&ranked, &session_of, 0);
        assert!((m[&10] - 0.9).abs() < 1e-9, "{m:?}");
    }

    #[test]
    fn top_mean_leaves_out_messages_of_no_known_session() {
        let session_of: HashMap<i64, i64> = [(1, 10)].into();
        let m = top_mean(&[(1, 0.6), (2, 0.9)], &session_of, 1);
        assert_eq!(m.len(), 1);
        assert!((m[&10] - 0.6).abs() < 1e-9);
        assert!(top_mean(&[], &session_of, 3).is_empty());
    }
}
