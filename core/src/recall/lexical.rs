//! Lexical ranking: the user's words become a safe FTS5 query (every term
//! quoted, so no input is a syntax error), ranked by BM25 over message text.

use rusqlite::params_from_iter;

use super::Candidates;
use crate::store::Store;

/// Words too common to help a search.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "did", "do", "does", "for", "from",
    "had", "has", "have", "he", "her", "his", "how", "i", "if", "in", "into", "is", "it", "its",
    "me", "my", "of", "on", "or", "our", "she", "so", "that", "the", "their", "them", "then",
    "there", "they", "this", "to", "was", "we", "were", "what", "when", "where", "which", "who",
    "why", "will", "with", "you", "your",
];

/// The terms of a query: runs of letters, digits and `_`, lower-cased, without
/// stop words (unless nothing else is left).
pub fn terms(query: &str) -> Vec<String> {
    let words: Vec<String> = query
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase())
        .collect();
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

/// An FTS5 MATCH expression for `terms`: each term quoted, any of them may match.
pub fn match_expression(terms: &[String]) -> Option<String> {
    if terms.is_empty() {
        return None;
    }
    Some(
        terms
            .iter()
            .map(|t| format!("\"{}\"", t.replace('"', "")))
            .collect::<Vec<_>>()
            .join(" OR "),
    )
}

/// The best `k` messages for `query` among `candidates`: (message id, BM25
/// score where higher is better).
pub fn search(
    store: &Store,
    query: &str,
    candidates: &Candidates,
    k: usize,
) -> crate::store::Result<Vec<(i64, f64)>> {
    let Some(expr) = match_expression(&terms(query)) else {
        return Ok(Vec::new());
    };
    let (cond, mut args) = candidates.sql();
    args.insert(0, rusqlite::types::Value::Text(expr));
    // Shift the candidate placeholders by one: the MATCH expression is ?1.
    let cond = shift_placeholders(&cond, 1);
    let sql = format!(
        "SELECT m.id, -bm25(messages_fts) AS score
         FROM messages_fts
         JOIN messages m ON m.id = messages_fts.rowid
         JOIN sessions s ON s.id = m.session
         WHERE messages_fts MATCH ?1 AND {cond}
         ORDER BY bm25(messages_fts) LIMIT {k}"
    );
    let mut stmt = store.conn().prepare(&sql).map_err(|e| store.wrap(e))?;
    let rows = stmt
        .query_map(params_from_iter(args), |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(|e| store.wrap(e))?;
    rows.collect::<rusqlite::Result<_>>()
        .map_err(|e| store.wrap(e))
}

/// Renumbers `?N` placeholders in `sql` to `?N+by`.
pub fn shift_placeholders(sql: &str, by: usize) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '?' {
            let mut digits = String::new();
            while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                digits.push(*d);
                chars.next();
            }
            if let Ok(n) = digits.parse::<usize>() {
                out.push_str(&(n + by).to_string());
            } else {
                out.push_str(&digits);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_drop_stop_words_and_punctuation() {
        assert_eq!(
            terms("that tenant predicate bug!"),
            vec!["tenant", "predicate", "bug"]
        );
        assert_eq!(terms("what is it"), vec!["what", "is", "it"]);
        assert_eq!(
            terms("fix tenant_id AND \"x\""),
            vec!["fix", "tenant_id", "x"]
        );
        assert!(terms("  ?!  ").is_empty());
        assert_eq!(terms("someone else's"), vec!["someone", "else"]);
    }

    #[test]
    fn expressions_are_quoted() {
        let e = match_expression(&terms("NEAR(a b) OR c* \"d")).unwrap();
        assert_eq!(e, "\"near\" OR \"a\" OR \"b\" OR \"c\" OR \"d\"");
    }

    #[test]
    fn placeholders_shift() {
        assert_eq!(
            shift_placeholders("a = ?1 AND b = ?12", 1),
            "a = ?2 AND b = ?13"
        );
    }
}
