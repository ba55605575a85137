//! Lexical ranking: the user's words become a safe FTS5 query (every term
//! quoted, so no input is a syntax error), ranked by BM25 over message text
//! and, as a second signal, over whole sessions. Scores can be normalized by
//! the query's own weight (the sum of its terms' IDF: what one occurrence of
//! every term in an average-length document scores), so a passing match of one
//! common word is worth little whatever else matches.

use deja_store::search::{match_expression, quote};
use deja_store::segment::word_parts;
pub use deja_store::Level;
use deja_store::Store;

use crate::{Candidates, Result};

/// Words too common to help a search.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "did", "do", "does", "for", "from",
    "had", "has", "have", "he", "her", "his", "how", "i", "if", "in", "into", "is", "it", "its",
    "me", "my", "of", "on", "or", "our", "she", "so", "that", "the", "their", "them", "then",
    "there", "they", "this", "to", "was", "we", "were", "what", "when", "where", "which", "who",
    "why", "will", "with", "you", "your",
];

/// The words of a query as the full-text index holds them: runs of letters,
/// digits and `_`, lower-cased, a run of Chinese, Japanese or Korean
/// characters split into its bigrams as the index splits it
/// ([`deja_store::segment`]).
fn words(query: &str) -> Vec<String> {
    query
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .flat_map(|w| word_parts(&w.to_lowercase()))
        .collect()
}

/// The terms of a query: its [`words`] without stop words (unless nothing
/// else is left).
pub fn terms(query: &str) -> Vec<String> {
    let words = words(query);
    // Single characters (the `s` of "else's") match too much to help.
    let kept: Vec<String> = words
        .iter()
        .filter(|w| !STOP_WORDS.contains(&w.as_str()) && w.chars().count() > 1)
        .cloned()
        .collect();
    let mut out = if kept.is_empty() { words } else { kept };
    let mut seen = std::collections::HashSet::new();
    out.retain(|w| seen.insert(w.clone()));
    out
}

/// Pairs of query words that stand next to each other (neither a stop word):
/// "LGBTQ support group" gives "lgbtq support" and "support group".
pub fn bigrams(query: &str) -> Vec<String> {
    let words = words(query);
    let content = |w: &str| !STOP_WORDS.contains(&w) && w.chars().count() > 1;
    let mut out: Vec<String> = words
        .windows(2)
        .filter(|p| content(&p[0]) && content(&p[1]))
        .map(|p| format!("{} {}", p[0], p[1]))
        .collect();
    out.dedup();
    out
}

/// Per session in scope, the share of the query's word pairs it holds as
/// phrases (whole-session documents).
pub fn phrase_coverage(
    store: &Store,
    query: &str,
    candidates: &Candidates,
) -> Result<std::collections::HashMap<i64, f64>> {
    let pairs = bigrams(query);
    let mut out: std::collections::HashMap<i64, f64> = std::collections::HashMap::new();
    if pairs.is_empty() {
        return Ok(out);
    }
    let share = 1.0 / pairs.len() as f64;
    for pair in &pairs {
        for session in store.sessions_with_phrase(&quote(pair), &candidates.filter)? {
            *out.entry(session).or_default() += share;
        }
    }
    Ok(out)
}

/// Most documents a single term contributes; rarer terms are all counted.
const PER_TERM: usize = 1000;

/// FTS5's BM25 IDF: `ln((N - n + 0.5) / (n + 0.5))`, at least 1e-6.
fn idf(docs: f64, with_term: f64) -> f64 {
    ((docs - with_term + 0.5) / (with_term + 0.5))
        .ln()
        .max(1e-6)
}

/// The best `k` documents of `level` for `query` among `candidates` (roles
/// apply at the message level only): (row id, score).
///
/// The score is BM25 with each term's IDF computed *within the candidates*,
/// so a word that fills the searched project (its name, the people in a
/// conversation) counts for little, divided by the query's own weight (the
/// sum of those IDFs, words found nowhere included): the share of the query
/// a document matches. FTS5 gives each document's BM25 for each term alone;
/// dividing by FTS5's global IDF of the term leaves the term-frequency part,
/// which is re-weighted with the local IDF.
pub fn search(
    store: &Store,
    query: &str,
    candidates: &Candidates,
    level: Level,
    k: usize,
) -> Result<Vec<(i64, f64)>> {
    let terms = terms(query);
    if terms.is_empty() {
        return Ok(Vec::new());
    }
    let total = store.max_row_id(level)?;
    if candidates.is_unrestricted() {
        return search_unrestricted(store, &terms, level, total, k);
    }
    let in_scope = store.count_in_scope(level, candidates)?;

    let mut scores: std::collections::HashMap<i64, f64> = std::collections::HashMap::new();
    let mut weight = 0.0;
    for term in &terms {
        let quoted = quote(term);
        let global = store.fts_doc_count(level, &quoted)?;
        if global == 0.0 {
            // A word no document has still belongs to the query: its weight
            // counts, so matching the query's other words is a partial match.
            weight += idf(in_scope, 0.0);
            continue;
        }
        let global_idf = idf(total.max(global), global);
        let rows = store.fts_term_top(level, &quoted, candidates, PER_TERM)?;
        let local = if rows.len() < PER_TERM {
            rows.len() as f64
        } else {
            store.fts_term_count(level, &quoted, candidates)?
        };
        if local == 0.0 {
            weight += idf(in_scope, 0.0);
            continue;
        }
        let local_idf = idf(in_scope.max(local), local);
        weight += local_idf;
        for (id, bm25) in rows {
            *scores.entry(id).or_insert(0.0) += local_idf * bm25 / global_idf;
        }
    }
    if weight <= 0.0 {
        return Ok(Vec::new());
    }
    let mut out: Vec<(i64, f64)> = scores.into_iter().map(|(id, s)| (id, s / weight)).collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out.truncate(k);
    Ok(out)
}

/// A term held by more than this share of the documents is common: documents
/// holding only common terms are left out of scoring when they provably cannot
/// reach the top (see [`search_unrestricted`]).
const COMMON_SHARE: f64 = 0.08;

/// FTS5's BM25 `k1`: one term adds at most `(k1 + 1) × IDF` to a score.
const BM25_K1: f64 = 1.2;

/// [`search`] without filters: every document is in scope, so each term's
/// local IDF is FTS5's own and the score is FTS5's BM25 of all the terms at
/// once, which one query computes (each document is scored once, not once
/// per term), divided by the query's weight.
///
/// FTS5 scores every document that holds any query word, and an everyday
/// word can be in a fifth of them. So when the query has both rare and common
/// terms, the documents holding a rare one are scored first (the same BM25 of
/// all the terms); a document holding only common terms scores at most the sum
/// of their `(k1 + 1) × IDF`, and if the k-th score found is at least that, no
/// document left out could enter the top k and the answer is exact (MaxScore
/// with two groups). Otherwise every matching document is scored.
fn search_unrestricted(
    store: &Store,
    terms: &[String],
    level: Level,
    total: f64,
    k: usize,
) -> Result<Vec<(i64, f64)>> {
    let mut weight = 0.0;
    let mut present = Vec::new();
    let mut rare = Vec::new();
    // `total` (the largest row id) is at least FTS5's row count, so this
    // bound is at least FTS5's own.
    let mut common_bound = 0.0;
    for term in terms {
        let global = store.fts_doc_count(level, &quote(term))?;
        let term_idf = idf(total.max(global), global);
        weight += term_idf;
        if global > 0.0 {
            present.push(term.clone());
            if global > COMMON_SHARE * total {
                common_bound += (BM25_K1 + 1.0) * term_idf;
            } else {
                rare.push(term.clone());
            }
        }
    }
    let Some(expression) = match_expression(&present) else {
        return Ok(Vec::new());
    };
    if weight <= 0.0 {
        return Ok(Vec::new());
    }
    let pruned = match match_expression(&rare) {
        Some(rare) if common_bound > 0.0 => {
            let rows = store.bm25_top(level, &expression, Some(&rare), k)?;
            let exact = rows.len() == k && rows.last().is_some_and(|r| r.1 >= common_bound);
            exact.then_some(rows)
        }
        _ => None,
    };
    let mut out = match pruned {
        Some(rows) => rows,
        None => store.bm25_top(level, &expression, None, k)?,
    };
    for row in &mut out {
        row.1 /= weight;
    }
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use deja_model::{Message, Role, Session};
    use deja_store::ingest::FileState;

    #[test]
    fn chinese_japanese_and_korean_words_become_the_bigrams_the_index_holds() {
        assert_eq!(terms("内存泄露"), vec!["内存", "存泄", "泄露"]);
        assert_eq!(terms("Rust的内存"), vec!["rust", "的内", "内存"]);
        assert_eq!(terms("메모리 누수"), vec!["메모", "모리", "누수"]);
        // Next to each other, the pairs are phrases that rank a session
        // holding the run whole above one holding its parts apart.
        assert_eq!(bigrams("内存泄露"), vec!["内存 存泄", "存泄 泄露"]);
        // Latin queries are split exactly as before.
        assert_eq!(terms("the tenant predicate"), vec!["tenant", "predicate"]);
    }

    #[test]
    fn terms_drop_stop_words_and_punctuation() {
        assert_eq!(
            terms("that tenant predicate bug!"),
            vec!["tenant", "predicate", "bug"]
        );
        assert_eq!(terms("what is it"), vec!["what", "is", "it"]);
        assert_eq!(
            terms("fix tenant_id AND \"xy\""),
            vec!["fix", "tenant_id", "xy"]
        );
        assert!(terms("  ?!  ").is_empty());
        assert_eq!(terms("someone else's"), vec!["someone", "else"]);
    }

    #[test]
    fn expressions_are_quoted() {
        let e = match_expression(&terms("NEAR(ab cd) OR ef* \"gh")).unwrap();
        assert_eq!(e, "\"near\" OR \"ab\" OR \"cd\" OR \"ef\" OR \"gh\"");
    }

    /// A store of one session whose messages hold `common` in every message
    /// and `rare` (several times, so it outweighs `common`) in the first
    /// `rare` ones; message row ids are 1..=docs in order.
    fn fts_store(docs: i64, rare: i64) -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("index.sqlite")).unwrap();
        let messages = (1..=docs)
            .map(|id| Message {
                role: Role::User,
                text: if id <= rare {
                    format!("tenant tenant common filler{id}")
                } else {
                    format!("common filler{id} and more words here")
                },
                timestamp_ms: id,
                native_id: None,
            })
            .collect();
        let session = Session {
            harness: "test".into(),
            id: "s".into(),
            native_id: "s".into(),
            started_at_ms: 0,
            updated_at_ms: 0,
            date_approximate: false,
            project: Default::default(),
            title: None,
            parent_id: None,
            precedence: 0,
            messages,
            files: vec![],
            commands: vec![],
        };
        let file = FileState {
            harness: "test",
            path: "/t",
            size: 0,
            mtime_ns: 0,
            hash: "h",
            reader: "test 0",
            settings: "",
        };
        store.apply(&file, &[session]).unwrap();
        (dir, store)
    }

    fn scored_fully(store: &Store, terms: &[String], total: f64, k: usize) -> Vec<(i64, f64)> {
        let expression = match_expression(terms).unwrap();
        let weight: f64 = terms
            .iter()
            .map(|t| {
                let n = store.fts_doc_count(Level::Message, &quote(t)).unwrap();
                idf(total.max(n), n)
            })
            .sum();
        let mut out: Vec<(i64, f64)> = store
            .bm25_top(Level::Message, &expression, None, k)
            .unwrap()
            .into_iter()
            .map(|(id, s)| (id, s / weight))
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out
    }

    #[test]
    fn skipping_common_only_documents_keeps_the_exact_ranking() {
        let (_dir, store) = fts_store(400, 40);
        let terms = vec!["tenant".to_string(), "common".to_string()];
        // "common" is in every document: with 10 wanted, the documents that
        // hold "tenant" fill the top and the others cannot reach it.
        let rare = store
            .bm25_top(
                Level::Message,
                "\"tenant\" OR \"common\"",
                Some("\"tenant\""),
                10,
            )
            .unwrap();
        assert_eq!(rare.len(), 10);
        assert!(rare.iter().all(|(id, _)| *id <= 40));
        let got = search_unrestricted(&store, &terms, Level::Message, 400.0, 10).unwrap();
        assert_eq!(got, scored_fully(&store, &terms, 400.0, 10));
        // Asking for more than the rare documents can fill falls back to
        // scoring everything, and the common-only documents come after.
        let got = search_unrestricted(&store, &terms, Level::Message, 400.0, 60).unwrap();
        assert_eq!(got.len(), 60);
        assert!(got[..40].iter().all(|(id, _)| *id <= 40));
        assert!(got[40..].iter().all(|(id, _)| *id > 40));
        assert_eq!(got, scored_fully(&store, &terms, 400.0, 60));
    }
}
