//! The relevance floor: what a message must clear to be a hit at all. A
//! message that matches the query by words (it is in the lexical list) always
//! passes; one found by meaning alone passes only when the cosine similarity
//! of its best unit to the query is at least the floor (undiscounted for
//! the message's windows: the discount orders, the floor judges). Without it, semantic
//! ranking always returns the nearest messages, however far they are, and a
//! query that shares nothing with the history ("xyzzyquux") gets unrelated
//! hits instead of "no matches". BENCHMARKS.md ("Relevance floor") has the
//! similarities the floor was chosen from.

use std::collections::{HashMap, HashSet};

use deja_config::Mode;

use crate::Signals;

/// Keeps the messages of `ranked` that clear `min_similarity` (see the
/// module doc). Lexical rankings are left as they are, and so is everything
/// when `min_similarity` is 0 or less.
pub fn apply(signals: &Signals, ranked: &mut Vec<(i64, f64)>, min_similarity: f64) {
    if min_similarity <= 0.0 || signals.mode == Mode::Lexical {
        return;
    }
    let by_words: HashSet<i64> = signals.lexical.iter().map(|x| x.0).collect();
    let similarity: HashMap<i64, f64> = signals.semantic.iter().cloned().collect();
    ranked.retain(|(id, _)| {
        by_words.contains(id) || similarity.get(id).is_some_and(|sim| *sim >= min_similarity)
    });
}

/// Message `id`'s lexical score when it is found by words, and its
/// similarity when found by meaning: what the floor decides on (for reports
/// of the similarities).
pub fn evidence(signals: &Signals, id: i64) -> (Option<f64>, Option<f64>) {
    (
        signals.lexical.iter().find(|x| x.0 == id).map(|x| x.1),
        signals.semantic.iter().find(|x| x.0 == id).map(|x| x.1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signals(mode: Mode, lexical: &[(i64, f64)], semantic: &[(i64, f64)]) -> Signals {
        Signals {
            lexical: lexical.to_vec(),
            semantic: semantic.to_vec(),
            ..Signals::empty(mode)
        }
    }

    fn ids(ranked: &[(i64, f64)]) -> Vec<i64> {
        ranked.iter().map(|x| x.0).collect()
    }

    #[test]
    fn a_message_found_by_meaning_alone_must_clear_the_floor() {
        // 1: words and meaning; 2: words only, far in meaning; 3: meaning
        // above the floor; 4: meaning just below; 5: exactly at the floor.
        let s = signals(
            Mode::Hybrid,
            &[(1, 0.9), (2, 0.2)],
            &[(1, 0.6), (2, 0.05), (3, 0.5), (4, 0.299), (5, 0.3)],
        );
        let mut ranked = vec![(1, 2.0), (3, 1.0), (2, 0.5), (4, 0.4), (5, 0.3)];
        apply(&s, &mut ranked, 0.3);
        assert_eq!(ids(&ranked), vec![1, 3, 2, 5]);
    }

    #[test]
    fn nothing_near_enough_leaves_no_hit() {
        let s = signals(Mode::Semantic, &[], &[(7, 0.21), (8, 0.18)]);
        let mut ranked = vec![(7, 0.21), (8, 0.18)];
        apply(&s, &mut ranked, 0.3);
        assert!(ranked.is_empty(), "{ranked:?}");
    }

    #[test]
    fn zero_turns_it_off_and_lexical_rankings_are_untouched() {
        let s = signals(Mode::Hybrid, &[], &[(7, 0.01)]);
        let mut ranked = vec![(7, 0.01)];
        apply(&s, &mut ranked, 0.0);
        assert_eq!(ids(&ranked), vec![7]);
        let s = signals(Mode::Lexical, &[(9, 0.1)], &[]);
        let mut ranked = vec![(9, 0.1)];
        apply(&s, &mut ranked, 0.9);
        assert_eq!(ids(&ranked), vec![9]);
    }

    #[test]
    fn the_floor_applies_inside_rank() {
        let s = signals(Mode::Hybrid, &[(1, 0.5)], &[(1, 0.4), (2, 0.1)]);
        let tuning = crate::Tuning {
            min_similarity: 0.3,
            ..crate::Tuning::default()
        };
        assert_eq!(ids(&crate::rank(&s, &tuning)), vec![1]);
        let off = crate::Tuning {
            min_similarity: 0.0,
            ..tuning
        };
        assert_eq!(ids(&crate::rank(&s, &off)), vec![1, 2]);
    }
}
