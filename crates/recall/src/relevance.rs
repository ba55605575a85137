//! Whether an answer is worth giving, and which of its hits are weak. A hit's
//! fused score already weighs how much of the query's words it holds (each
//! word by its rarity in the history) and how near it is in meaning, plus
//! what its session says; on real histories a question that something
//! answers has a first hit scoring above 0.35, while random letters and
//! topics the history never discusses score below it (BENCHMARKS.md,
//! "Knowing when nothing answers"). So in hybrid ranking, the default, an
//! answer whose best hit stays under [`MIN_SCORE`] is no answer: the caller
//! says "no matches" rather than list the nearest noise. Hits that do
//! remain are marked weak under a second, higher bar, so people and agents
//! can tell a guess from a find. Lexical and semantic rankings are judged
//! only by the second bar: words alone say nothing about noise, and meaning
//! alone cannot separate it from answers (the same measurements).
//!
//! A question answered by meaning alone (it shares no word with its
//! session) scores low however right its answer is, and how near noise
//! comes differs from one history to another: random letters come within
//! 0.2 of a small history's messages and within 0.45 of a large one's short
//! greetings. So each index run measures its history's noise ceiling, the
//! best similarity any of a few strings of random letters ([`PROBES`])
//! reaches in it, and an answer whose nearest message is nearer than that
//! ceiling is kept whatever its score. With some models random letters are
//! not the nearest noise, though: with the multilingual model a sentence on
//! a topic the history never discusses comes nearer its messages in its own
//! language (0.36 to 0.48) than random letters do (under 0.35). Such a
//! model's card says how near (`off_topic`, 0.40 for it), and a nearest
//! message in the question's own writing system then keeps the answer only
//! from above that too. One in another writing system, which words cannot
//! reach (see [`crate::scripts`]), needs only the ceiling. MiniLM's card
//! says nothing: its paraphrases found by meaning alone in a small history
//! lie at 0.3 to 0.4, where its off-topic questions do not reach.

use deja_config::Mode;
use deja_store::vectors::VectorIndex;
use deja_store::Store;

/// Strings of random letters whose nearest messages show how near noise
/// comes in a history (none is in any evaluation set).
pub const PROBES: &[&str] = &[
    "vqxj wpoz kelm",
    "zubrak fliggen",
    "hrmptz",
    "oqwe yzzt plunk grivv",
    "jkdsla qpwoei",
    "xxvv bbnm",
    "trelkop wissam dunq",
    "mqzf",
];

/// The store's meta key of the noise ceiling.
const NOISE_KEY: &str = "noise_ceiling";

/// The best similarity any of `probes` (their embeddings) reaches in
/// `index`: the history's noise ceiling.
pub fn noise_ceiling(index: &VectorIndex, probes: &[Vec<f32>]) -> crate::Result<Option<f64>> {
    let mut best: Option<f64> = None;
    for p in probes {
        if let Some((_, sim)) = index.search(p, 1)?.first() {
            let sim = f64::from(*sim);
            best = Some(best.map_or(sim, |b: f64| b.max(sim)));
        }
    }
    Ok(best)
}

/// Keeps `ceiling` in `store` for recall to read (`None`: the history has
/// no vectors to measure it in, which is recorded too, so that an index run
/// with nothing to do need not load the model to try again).
pub fn record_ceiling(store: &Store, ceiling: Option<f64>) -> crate::Result<()> {
    let value = ceiling.map_or_else(|| "-".to_string(), |c| format!("{c:.6}"));
    Ok(store.set_meta(NOISE_KEY, &value)?)
}

/// The noise ceiling the last index run recorded, if it measured one.
pub fn recorded_ceiling(store: &Store) -> Option<f64> {
    store.meta(NOISE_KEY).ok().flatten()?.parse().ok()
}

/// Whether an index run has measured the noise ceiling (or found nothing
/// to measure it in) since the store last lacked it.
pub fn ceiling_measured(store: &Store) -> bool {
    store.meta(NOISE_KEY).ok().flatten().is_some()
}

/// What meaning alone must beat to keep an answer under the bar: the
/// history's noise ceiling, and for a nearest message in the question's
/// own writing system how near off-topic questions come with the model.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Ceiling {
    /// The history's noise ceiling ([`recorded_ceiling`]).
    pub noise: f64,
    /// The model's `off_topic` (0: none).
    pub off_topic: f64,
}

/// How near a query's nearest messages by meaning are (cosine similarity):
/// the nearest of all, and the nearest written in another writing system
/// than the query ([`crate::Signals::other_script`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Nearest {
    /// The nearest message in the query's own writing system (or any, where
    /// the model does not compare writing systems).
    pub own: Option<f64>,
    /// The nearest message in another writing system.
    pub other: Option<f64>,
}

impl Nearest {
    /// Of `signals`' semantic list.
    pub fn of(signals: &crate::Signals) -> Nearest {
        let mut n = Nearest::default();
        for (id, sim) in &signals.semantic {
            let slot = if signals.other_script.contains(id) {
                &mut n.other
            } else {
                &mut n.own
            };
            *slot = Some(slot.map_or(*sim, |b: f64| b.max(*sim)));
        }
        n
    }

    /// Whether meaning alone keeps an answer: its nearest message in the
    /// query's writing system is above both `ceiling` and `off_topic` (the
    /// model's), or one in another writing system above `ceiling`.
    fn keeps(&self, ceiling: f64, off_topic: f64) -> bool {
        self.own.is_some_and(|s| s > ceiling.max(off_topic))
            || self.other.is_some_and(|s| s > ceiling)
    }
}

/// The default of `recall.min_score`: the least score of an answer's best
/// hit in hybrid ranking.
pub const MIN_SCORE: f64 = 0.35;

/// Below this score a hybrid hit is weak.
pub const WEAK_HYBRID: f64 = 0.6;

/// Below this score a hit ranked by meaning alone is weak.
pub const WEAK_SEMANTIC: f64 = 0.4;

/// Below this score a hit ranked by words alone is weak.
pub const WEAK_LEXICAL: f64 = 0.5;

/// Whether a hit of `score`, ranked in `mode`, is weak.
pub fn weak(mode: Mode, score: f64) -> bool {
    score
        < match mode {
            Mode::Hybrid => WEAK_HYBRID,
            Mode::Semantic => WEAK_SEMANTIC,
            Mode::Lexical => WEAK_LEXICAL,
        }
}

/// Judges a ranking of `signals` as [`withhold`] does, reading the noise
/// ceiling `store` recorded, with the model's `off_topic` (0: none);
/// returns how many messages were withheld.
pub fn judge(
    store: &Store,
    signals: &crate::Signals,
    ranked: &mut Vec<(i64, f64)>,
    min_score: f64,
    off_topic: f64,
) -> usize {
    withhold(
        signals.mode,
        ranked,
        min_score,
        (
            Nearest::of(signals),
            recorded_ceiling(store).map(|c| Ceiling {
                noise: c,
                off_topic,
            }),
        ),
    )
}

/// Marks the weak ones of `hits`, ranked in `mode`.
pub fn mark(hits: &mut [crate::Hit], mode: Mode) {
    for h in hits {
        h.weak = weak(mode, h.score);
    }
}

/// Empties `ranked` (best first) when it is a hybrid ranking whose best
/// score is under `min_score` (0 or less: never) and whose `nearest`
/// messages by meaning do not keep it against the history's noise `ceiling`
/// ([`Nearest`]; no ceiling recorded: the score alone decides), returning
/// how many messages it held.
pub fn withhold(
    mode: Mode,
    ranked: &mut Vec<(i64, f64)>,
    min_score: f64,
    (nearest, ceiling): (Nearest, Option<Ceiling>),
) -> usize {
    if mode != Mode::Hybrid || min_score <= 0.0 {
        return 0;
    }
    if ceiling.is_some_and(|c| nearest.keeps(c.noise, c.off_topic)) {
        return 0;
    }
    match ranked.first() {
        Some((_, best)) if *best < min_score => {
            let n = ranked.len();
            ranked.clear();
            n
        }
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hybrid_answer_whose_best_hit_is_under_the_bar_is_withheld() {
        let mut ranked = vec![(1, 0.34), (2, 0.2)];
        assert_eq!(
            withhold(
                Mode::Hybrid,
                &mut ranked,
                MIN_SCORE,
                (own(0.4), noise(0.45))
            ),
            2
        );
        assert!(ranked.is_empty());
    }

    fn noise(c: f64) -> Option<Ceiling> {
        Some(Ceiling {
            noise: c,
            off_topic: 0.0,
        })
    }

    /// A ceiling `c` with the multilingual model's off-topic similarity.
    fn off_topic(c: f64) -> Option<Ceiling> {
        Some(Ceiling {
            noise: c,
            off_topic: 0.4,
        })
    }

    fn own(sim: f64) -> Nearest {
        Nearest {
            own: Some(sim),
            other: None,
        }
    }

    #[test]
    fn a_nearest_message_above_the_noise_ceiling_keeps_a_low_scoring_answer() {
        let mut ranked = vec![(1, 0.2), (2, 0.1)];
        assert_eq!(
            withhold(
                Mode::Hybrid,
                &mut ranked,
                MIN_SCORE,
                (own(0.5), noise(0.45))
            ),
            0
        );
        assert_eq!(ranked.len(), 2);
        // No ceiling recorded: the score alone decides.
        assert_eq!(
            withhold(Mode::Hybrid, &mut ranked, MIN_SCORE, (own(0.5), None)),
            2
        );
    }

    #[test]
    fn in_the_question_s_own_writing_system_meaning_must_also_beat_off_topic_questions() {
        let judged = |nearest: Nearest, ceiling: Option<Ceiling>| {
            withhold(
                Mode::Hybrid,
                &mut vec![(1, 0.2)],
                MIN_SCORE,
                (nearest, ceiling),
            )
        };
        // With a model whose card says off-topic questions come within
        // 0.4: above a low ceiling is not enough, above 0.4 is.
        assert_eq!(judged(own(0.38), off_topic(0.27)), 1);
        assert_eq!(judged(own(0.41), off_topic(0.27)), 0);
        // A card that says nothing: the ceiling alone.
        assert_eq!(judged(own(0.38), noise(0.27)), 0);
        // In another writing system, the ceiling alone.
        let other = Nearest {
            own: Some(0.3),
            other: Some(0.38),
        };
        assert_eq!(judged(other, off_topic(0.27)), 0);
        assert_eq!(judged(other, off_topic(0.4)), 1);
    }

    #[test]
    fn the_nearest_messages_are_split_by_writing_system() {
        let s = crate::Signals {
            semantic: vec![(1, 0.5), (2, 0.45), (3, 0.3)],
            other_script: [1].into(),
            ..crate::Signals::empty(Mode::Hybrid)
        };
        assert_eq!(
            Nearest::of(&s),
            Nearest {
                own: Some(0.45),
                other: Some(0.5)
            }
        );
        assert_eq!(
            Nearest::of(&crate::Signals::empty(Mode::Hybrid)),
            Nearest::default()
        );
    }

    #[test]
    fn an_answer_with_one_hit_over_the_bar_keeps_all_its_hits() {
        let mut ranked = vec![(1, 0.35), (2, 0.1)];
        assert_eq!(
            withhold(
                Mode::Hybrid,
                &mut ranked,
                MIN_SCORE,
                (Nearest::default(), None)
            ),
            0
        );
        assert_eq!(ranked, vec![(1, 0.35), (2, 0.1)]);
    }

    #[test]
    fn other_modes_and_a_bar_of_zero_withhold_nothing() {
        for mode in [Mode::Lexical, Mode::Semantic] {
            let mut ranked = vec![(1, 0.01)];
            assert_eq!(
                withhold(mode, &mut ranked, MIN_SCORE, (Nearest::default(), None)),
                0
            );
            assert_eq!(ranked.len(), 1);
        }
        let mut ranked = vec![(1, 0.01)];
        assert_eq!(
            withhold(Mode::Hybrid, &mut ranked, 0.0, (Nearest::default(), None)),
            0
        );
        assert_eq!(ranked.len(), 1);
    }

    #[test]
    fn the_noise_ceiling_is_the_nearest_any_probe_comes() {
        let dir = tempfile::tempdir().unwrap();
        let mut index = VectorIndex::empty(&dir.path().join("v.usearch"), 2).unwrap();
        index.add(1, &[1.0, 0.0]).unwrap();
        index.add(2, &[0.0, 1.0]).unwrap();
        let s = std::f32::consts::FRAC_1_SQRT_2;
        // One probe halfway between both (0.707 from each), one near the first.
        let probes = vec![vec![s, s], vec![0.96, 0.28]];
        let c = noise_ceiling(&index, &probes).unwrap().unwrap();
        assert!((c - 0.96).abs() < 0.02, "{c}");
        assert_eq!(noise_ceiling(&index, &[]).unwrap(), None);
    }

    #[test]
    fn weakness_is_judged_by_each_mode_s_own_bar() {
        assert!(weak(Mode::Hybrid, 0.59));
        assert!(!weak(Mode::Hybrid, 0.6));
        assert!(weak(Mode::Semantic, 0.39));
        assert!(!weak(Mode::Semantic, 0.45));
        assert!(weak(Mode::Lexical, 0.49));
        assert!(!weak(Mode::Lexical, 1.2));
    }
}
