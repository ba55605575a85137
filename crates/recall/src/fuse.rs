//! Fusing the semantic and lexical rankings into one. The default is a
//! weighted sum of the scores themselves: lexical scores are already
//! normalized by the query's weight (see [`super::lexical`]) and semantic ones
//! are cosine similarities, so neither depends on what else was retrieved, and
//! a message missing from a list simply gets nothing from it. Z-score fusion
//! and reciprocal rank fusion are kept for comparison in the benchmark: both
//! rank worse (BENCHMARKS.md), and z-scores punish a paraphrase whenever a few
//! other messages match one of its words by chance.

use std::collections::HashMap;

/// How to fuse.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fusion {
    /// Weighted sum of the scores as they are (lexical ones normalized by the
    /// query's weight, semantic ones cosine similarities); a message missing
    /// from a list contributes nothing from it.
    Weighted {
        /// Weight of the lexical list.
        lexical: f64,
        /// Weight of the semantic list.
        semantic: f64,
    },
    /// Weighted sum of z-scores.
    ZScore {
        /// Weight of the lexical list.
        lexical: f64,
        /// Weight of the semantic list.
        semantic: f64,
    },
    /// Reciprocal rank fusion with constant `k`.
    Rrf {
        /// The constant.
        k: f64,
    },
}

/// The default fusion, tuned on LoCoMo (BENCHMARKS.md).
pub const DEFAULT: Fusion = Fusion::Weighted {
    lexical: 1.0,
    semantic: 0.5,
};

fn zscores(list: &[(i64, f64)]) -> (HashMap<i64, f64>, f64) {
    if list.is_empty() {
        return (HashMap::new(), 0.0);
    }
    let n = list.len() as f64;
    let mean = list.iter().map(|x| x.1).sum::<f64>() / n;
    let var = list.iter().map(|x| (x.1 - mean).powi(2)).sum::<f64>() / n;
    let sd = var.sqrt();
    let z = |v: f64| if sd > 1e-12 { (v - mean) / sd } else { 0.0 };
    let map: HashMap<i64, f64> = list.iter().map(|(id, v)| (*id, z(*v))).collect();
    let floor = map.values().cloned().fold(f64::INFINITY, f64::min);
    (map, floor)
}

/// Fuses two ranked lists of (message id, score, higher is better) into one,
/// best first.
pub fn fuse(semantic: &[(i64, f64)], lexical: &[(i64, f64)], how: Fusion) -> Vec<(i64, f64)> {
    let mut ids: Vec<i64> = semantic.iter().chain(lexical).map(|x| x.0).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut out: Vec<(i64, f64)> = match how {
        Fusion::Weighted {
            lexical: wl,
            semantic: ws,
        } => {
            let s: HashMap<i64, f64> = semantic.iter().cloned().collect();
            let l: HashMap<i64, f64> = lexical.iter().cloned().collect();
            ids.into_iter()
                .map(|id| {
                    let sv = s.get(&id).copied().unwrap_or(0.0);
                    let lv = l.get(&id).copied().unwrap_or(0.0);
                    (id, ws * sv + wl * lv)
                })
                .collect()
        }
        Fusion::ZScore {
            lexical: wl,
            semantic: ws,
        } => {
            let (zs, fs) = zscores(semantic);
            let (zl, fl) = zscores(lexical);
            ids.into_iter()
                .map(|id| {
                    let s = if semantic.is_empty() {
                        0.0
                    } else {
                        *zs.get(&id).unwrap_or(&fs)
                    };
                    let l = if lexical.is_empty() {
                        0.0
                    } else {
                        *zl.get(&id).unwrap_or(&fl)
                    };
                    (id, ws * s + wl * l)
                })
                .collect()
        }
        Fusion::Rrf { k } => {
            let rank = |list: &[(i64, f64)]| -> HashMap<i64, usize> {
                list.iter().enumerate().map(|(i, x)| (x.0, i + 1)).collect()
            };
            let (rs, rl) = (rank(semantic), rank(lexical));
            ids.into_iter()
                .map(|id| {
                    let f = |r: Option<&usize>| r.map(|r| 1.0 / (k + *r as f64)).unwrap_or(0.0);
                    (id, f(rs.get(&id)) + f(rl.get(&id)))
                })
                .collect()
        }
    };
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreement_wins() {
        let sem = [(1, 0.9), (2, 0.8), (3, 0.1)];
        let lex = [(2, 10.0), (4, 9.0), (1, 1.0)];
        let z = fuse(
            &sem,
            &lex,
            Fusion::ZScore {
                lexical: 1.0,
                semantic: 1.0,
            },
        );
        assert_eq!(z[0].0, 2, "{z:?}");
        let w = fuse(&sem, &[(2, 0.9), (4, 0.8), (1, 0.1)], DEFAULT);
        assert_eq!(w[0].0, 2, "{w:?}");
        let r = fuse(&sem, &lex, Fusion::Rrf { k: 60.0 });
        assert!(r[0].0 == 2 || r[0].0 == 1, "{r:?}");
        assert_eq!(z.len(), 4);
    }

    fn close(a: &[(i64, f64)], b: &[(i64, f64)]) -> bool {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| x.0 == y.0 && (x.1 - y.1).abs() < 1e-9)
    }

    #[test]
    fn weighted_fusion_sums_the_weighted_scores_and_a_missing_entry_adds_nothing() {
        let sem = [(1, 0.8), (2, 0.4)];
        let lex = [(2, 0.5), (3, 0.9)];
        let fused = fuse(&sem, &lex, DEFAULT);
        assert!(
            close(&fused, &[(3, 0.9), (2, 0.5 * 0.4 + 0.5), (1, 0.5 * 0.8)]),
            "{fused:?}"
        );
        let other = fuse(
            &sem,
            &lex,
            Fusion::Weighted {
                lexical: 0.0,
                semantic: 2.0,
            },
        );
        assert!(close(&other, &[(1, 1.6), (2, 0.8), (3, 0.0)]), "{other:?}");
    }

    #[test]
    fn rrf_adds_the_reciprocal_ranks() {
        let sem = [(1, 0.9), (2, 0.8)];
        let lex = [(2, 5.0), (3, 4.0)];
        let fused = fuse(&sem, &lex, Fusion::Rrf { k: 60.0 });
        assert!(
            close(
                &fused,
                &[
                    (2, 1.0 / 62.0 + 1.0 / 61.0),
                    (1, 1.0 / 61.0),
                    (3, 1.0 / 62.0)
                ]
            ),
            "{fused:?}"
        );
    }

    #[test]
    fn z_scores_of_a_flat_list_are_zero_and_a_missing_entry_gets_the_lowest() {
        let sem = [(1, 0.5), (2, 0.5)];
        let lex = [(3, 1.0), (1, 0.0)];
        let fused = fuse(
            &sem,
            &lex,
            Fusion::ZScore {
                lexical: 1.0,
                semantic: 1.0,
            },
        );
        // Lexical z-scores are ±1; 2 is missing there and gets the lowest.
        assert!(
            close(&fused, &[(3, 1.0), (1, -1.0), (2, -1.0)]),
            "{fused:?}"
        );
    }

    #[test]
    fn ties_go_to_the_lower_id_in_every_fusion() {
        let lex = [(9, 0.5), (4, 0.5), (7, 0.5)];
        for how in [
            DEFAULT,
            Fusion::ZScore {
                lexical: 1.0,
                semantic: 1.0,
            },
            Fusion::Rrf { k: 60.0 },
        ] {
            // RRF ranks by position, so give it a tie through both lists.
            let (sem, lex): (Vec<_>, Vec<_>) = match how {
                Fusion::Rrf { .. } => (vec![(9, 1.0), (4, 0.9)], vec![(4, 1.0), (9, 0.9)]),
                _ => (vec![], lex.to_vec()),
            };
            let order: Vec<i64> = fuse(&sem, &lex, how).iter().map(|x| x.0).collect();
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(order, sorted, "{how:?}");
        }
    }

    #[test]
    fn one_empty_list_keeps_the_other_order() {
        let lex = [(7, 3.0), (8, 2.0)];
        let z = fuse(&[], &lex, DEFAULT);
        assert_eq!(z.iter().map(|x| x.0).collect::<Vec<_>>(), vec![7, 8]);
        let z = fuse(
            &[],
            &lex,
            Fusion::ZScore {
                lexical: 1.0,
                semantic: 1.0,
            },
        );
        assert_eq!(z.iter().map(|x| x.0).collect::<Vec<_>>(), vec![7, 8]);
    }
}
