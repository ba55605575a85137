//! Meaning across writing systems. Words can only match a message written
//! like the question: an English question shares no word with a Chinese
//! message, whatever it says. With a model that compares meaning across
//! languages (one whose vectors have each script's mean taken out, see
//! `deja_embed::centering`), a message in another writing system than the
//! question's is therefore ranked with more weight on its meaning, in
//! proportion to how well the question's words matched in its own writing
//! system: where they matched well, they lift the question's own language
//! by as much, and meaning alone must stand in for them elsewhere; where
//! they hardly matched, nothing changes. Measured on the languages set
//! (BENCHMARKS.md, "Meaning across writing systems").

use std::collections::{HashMap, HashSet};

use deja_embed::centering;
use deja_store::Store;

use crate::{Result, Signals};

/// The default of [`crate::Tuning::across_scripts`]: a message in another
/// writing system has its meaning counted up to twice.
pub const WEIGHT: f64 = 1.0;

/// The words score (a message's share of the question's weight) at which
/// the question's words count as matched well: the other writing systems'
/// meaning then gets its full weight, below it a share.
pub const WORDS_MATCHED: f64 = 0.4;

/// How many characters of a message tell its writing system.
const OPENING: usize = 2000;

/// Writing systems whose texts can share words: Chinese and Japanese share
/// Han characters, so they are one.
fn writing_system(text: &str) -> &'static str {
    match centering::script(text) {
        "zh" | "ja" => "han",
        other => other,
    }
}

/// Marks the messages of the semantic list written in another writing
/// system than `query`.
pub fn mark(store: &Store, signals: &mut Signals, query: &str) -> Result<()> {
    let ids: Vec<i64> = signals.semantic.iter().map(|x| x.0).collect();
    if ids.is_empty() {
        return Ok(());
    }
    let asked = writing_system(query);
    let openings = store.message_openings(&ids, OPENING)?;
    signals.other_script = others(&openings, asked);
    Ok(())
}

fn others(openings: &HashMap<i64, String>, asked: &str) -> HashSet<i64> {
    openings
        .iter()
        .filter(|(_, text)| writing_system(text) != asked)
        .map(|(id, _)| *id)
        .collect()
}

/// How much more a marked message's meaning counts for this query: 1 plus
/// `weight` times how well the question's words matched (the best words
/// score over [`WORDS_MATCHED`], at most 1).
pub fn factor(signals: &Signals, weight: f64) -> f64 {
    let best = signals.lexical.iter().map(|x| x.1).fold(0.0_f64, f64::max);
    1.0 + weight * (best / WORDS_MATCHED).min(1.0)
}

/// Raises the semantic scores of the messages in another writing system by
/// [`factor`].
pub fn weigh(semantic: &mut [(i64, f64)], signals: &Signals, weight: f64) {
    if weight == 0.0 || signals.other_script.is_empty() {
        return;
    }
    let f = factor(signals, weight);
    for (id, score) in semantic.iter_mut() {
        if signals.other_script.contains(id) {
            *score *= f;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use deja_config::Mode;

    #[test]
    fn chinese_and_japanese_are_one_writing_system_korean_and_english_others() {
        assert_eq!(writing_system("内存泄露的问题"), "han");
        assert_eq!(writing_system("メモリリークの問題"), "han");
        assert_eq!(writing_system("메모리 누수 문제"), "ko");
        assert_eq!(writing_system("the memory leak"), "latin");
        let openings: HashMap<i64, String> = [
            (1, "内存泄露".to_string()),
            (2, "メモリリーク".to_string()),
            (3, "memory leak".to_string()),
        ]
        .into();
        let mut got: Vec<i64> = others(&openings, "latin").into_iter().collect();
        got.sort_unstable();
        assert_eq!(got, vec![1, 2]);
        assert_eq!(others(&openings, "han"), [3].into());
    }

    fn signals(lexical: &[(i64, f64)], other: &[i64]) -> Signals {
        Signals {
            lexical: lexical.to_vec(),
            other_script: other.iter().copied().collect(),
            ..Signals::empty(Mode::Hybrid)
        }
    }

    #[test]
    fn meaning_in_another_script_counts_more_as_the_words_match_better() {
        assert_eq!(factor(&signals(&[], &[1]), 1.0), 1.0);
        assert!((factor(&signals(&[(5, 0.2)], &[1]), 1.0) - 1.5).abs() < 1e-9);
        assert_eq!(factor(&signals(&[(5, 0.9), (6, 0.1)], &[1]), 1.0), 2.0);
        let s = signals(&[(5, 0.9)], &[1]);
        let mut semantic = vec![(1, 0.4), (2, 0.4)];
        weigh(&mut semantic, &s, 1.0);
        assert_eq!(semantic, vec![(1, 0.8), (2, 0.4)]);
        let mut off = vec![(1, 0.4)];
        weigh(&mut off, &s, 0.0);
        assert_eq!(off, vec![(1, 0.4)]);
    }
}
