//! Words in scripts written without spaces: Chinese, Japanese and Korean
//! text is split into overlapping pairs of characters (bigrams) before the
//! full-text index sees it, at index and query time alike, so that
//! `内存泄露` is found inside `修复内存泄露的问题`. Text without such characters
//! is left exactly as it is, so its words and their ranking do not change.
//!
//! A run of Han, Kana or Hangul characters becomes its bigrams, separated by
//! spaces (a run of one character stays itself): `内存泄露` becomes
//! `内存 存泄 泄露`. The tokenizer then sees each pair as a word, a query's run
//! becomes the same pairs, and a phrase of consecutive pairs matches exactly
//! the original run.

use std::borrow::Cow;

/// SQL name of [`segment`], which the full-text triggers call.
pub const SQL_FUNCTION: &str = "deja_segment";

/// Whether `c` belongs to a script written without spaces between words
/// (Han ideographs, Hiragana, Katakana) or whose words the index should see
/// in parts (Hangul, whose particles attach to the word).
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3005 | 0x3007                // 々 〇
        | 0x3040..=0x309F              // Hiragana
        | 0x30A0..=0x30FF              // Katakana (ー included)
        | 0x31F0..=0x31FF              // Katakana phonetic extensions
        | 0x3400..=0x4DBF              // CJK extension A
        | 0x4E00..=0x9FFF              // CJK unified ideographs
        | 0xF900..=0xFAFF              // CJK compatibility ideographs
        | 0xFF66..=0xFF9F              // halfwidth Katakana
        | 0x1100..=0x11FF              // Hangul Jamo
        | 0x3130..=0x318F              // Hangul compatibility Jamo
        | 0xA960..=0xA97F              // Hangul Jamo extended A
        | 0xAC00..=0xD7AF              // Hangul syllables
        | 0xD7B0..=0xD7FF              // Hangul Jamo extended B
        | 0x20000..=0x3134F // CJK extensions B to G, compatibility supplement
    )
}

/// `text` as the full-text index sees it: every run of [`is_cjk`]
/// characters replaced by its bigrams, with spaces around; any other text
/// unchanged (borrowed when there is no such run).
pub fn segment(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_cjk) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() * 2);
    let mut run: Vec<char> = Vec::new();
    for c in text.chars() {
        if is_cjk(c) {
            run.push(c);
        } else {
            push_run(&mut out, &run);
            run.clear();
            out.push(c);
        }
    }
    push_run(&mut out, &run);
    Cow::Owned(out)
}

/// Appends a run's bigrams (or its one character), spaced from its
/// neighbours.
fn push_run(out: &mut String, run: &[char]) {
    if run.is_empty() {
        return;
    }
    out.push(' ');
    if run.len() == 1 {
        out.push(run[0]);
    } else {
        for (i, pair) in run.windows(2).enumerate() {
            if i > 0 {
                out.push(' ');
            }
            out.push(pair[0]);
            out.push(pair[1]);
        }
    }
    out.push(' ');
}

/// The index words of one query word: the word itself, or, when it holds
/// [`is_cjk`] characters, its parts as [`segment`] makes them (`Rust内存` gives
/// `Rust`, `内存`).
pub fn word_parts(word: &str) -> Vec<String> {
    match segment(word) {
        Cow::Borrowed(w) => vec![w.to_string()],
        Cow::Owned(s) => s.split_whitespace().map(str::to_string).collect(),
    }
}

/// Registers [`segment`] as the SQL function [`SQL_FUNCTION`] on `conn`.
/// Every connection that writes messages needs it: the full-text triggers
/// call it.
pub fn register(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    use rusqlite::functions::FunctionFlags;
    conn.create_scalar_function(
        SQL_FUNCTION,
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            use rusqlite::types::ValueRef;
            // Text that is not valid UTF-8 (a damaged row) is indexed as
            // far as it reads, never refused: refusing would fail the write.
            Ok(match ctx.get_raw(0) {
                ValueRef::Null => None,
                ValueRef::Text(b) | ValueRef::Blob(b) => {
                    Some(segment(&String::from_utf8_lossy(b)).into_owned())
                }
                ValueRef::Integer(i) => Some(i.to_string()),
                ValueRef::Real(r) => Some(r.to_string()),
            })
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin_text_is_left_as_it_is() {
        let text = "Fix the tenant predicate — naïve café, 42 tests.";
        assert!(matches!(segment(text), Cow::Borrowed(t) if t == text));
    }

    #[test]
    fn a_han_run_becomes_its_bigrams() {
        assert_eq!(segment("内存泄露"), " 内存 存泄 泄露 ");
        assert_eq!(
            segment("修复Rust内存泄露的问题。"),
            " 修复 Rust 内存 存泄 泄露 露的 的问 问题 。"
        );
        assert_eq!(segment("a 锁 b"), "a  锁  b");
    }

    #[test]
    fn kana_and_hangul_runs_are_split_too() {
        assert_eq!(segment("メモリー"), " メモ モリ リー ");
        assert_eq!(segment("메모리 누수가"), " 메모 모리   누수 수가 ");
        assert_eq!(segment("テストが失敗"), " テス スト トが が失 失敗 ");
    }

    #[test]
    fn query_words_split_the_same_way() {
        assert_eq!(word_parts("tenant"), vec!["tenant"]);
        assert_eq!(word_parts("Rust内存"), vec!["Rust", "内存"]);
        assert_eq!(word_parts("泄露"), vec!["泄露"]);
    }

    /// Message rows whose text the message index matches for `phrase`.
    fn found(store: &crate::Store, phrase: &str) -> Vec<i64> {
        let mut stmt = store
            .conn()
            .prepare("SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?1 ORDER BY rowid")
            .unwrap();
        let q = crate::search::quote(&word_parts(phrase).join(" "));
        let rows = stmt.query_map([q], |r| r.get(0)).unwrap();
        rows.map(|r| r.unwrap()).collect()
    }

    #[test]
    fn chinese_japanese_and_korean_words_are_found_inside_longer_runs() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = crate::Store::open(&dir.path().join("index.sqlite")).unwrap();
        let texts = [
            "修复了内存泄露的问题",
            "テストが失敗した原因はタイムアウトです",
            "메모리 누수가 발생했습니다",
            "the tenant predicate is missing",
        ];
        store
            .apply(
                &crate::test_support::file("/t", ""),
                &[crate::test_support::session("s", &texts)],
            )
            .unwrap();
        let rows: Vec<i64> = {
            let mut stmt = store
                .conn()
                .prepare("SELECT id FROM messages ORDER BY position")
                .unwrap();
            let rows = stmt.query_map([], |r| r.get(0)).unwrap();
            rows.map(|r| r.unwrap()).collect()
        };
        assert_eq!(found(&store, "内存泄露"), vec![rows[0]]);
        assert_eq!(found(&store, "泄露"), vec![rows[0]]);
        assert_eq!(found(&store, "タイムアウト"), vec![rows[1]]);
        assert_eq!(found(&store, "失敗"), vec![rows[1]]);
        assert_eq!(found(&store, "누수"), vec![rows[2]]);
        assert_eq!(found(&store, "tenant"), vec![rows[3]]);
        // A phrase matches only the characters in that order.
        assert!(found(&store, "泄露内存").is_empty());
        // The session document is segmented the same way.
        let sessions: i64 = store
            .conn()
            .query_row(
                "SELECT count(*) FROM sessions_fts WHERE sessions_fts MATCH ?1",
                [crate::search::quote("内存 存泄 泄露")],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(sessions, 1);
    }

    #[test]
    fn the_sql_function_indexes_a_damaged_text_as_far_as_it_reads() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        register(&conn).unwrap();
        let out: String = conn
            .query_row(
                "SELECT deja_segment(CAST(x'ff72657472792be58685e5ad98' AS TEXT))",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(out, "\u{FFFD}retry+ 内存 ");
        let null: Option<String> = conn
            .query_row("SELECT deja_segment(NULL)", [], |r| r.get(0))
            .unwrap();
        assert_eq!(null, None);
    }

    #[test]
    fn any_text_segments_without_panicking_and_keeps_its_other_characters() {
        let samples = ["", "内", "a内b", "\u{0}内\u{10FFFF}", "𠀀𠀁", "ｱｲｳ", "ㄱㄴ"];
        for s in samples {
            let out = segment(s);
            let kept: String = out.chars().filter(|c| !c.is_whitespace()).collect();
            let orig: String = s.chars().filter(|c| !c.is_whitespace()).collect();
            // Every character of the original appears in the output.
            for c in orig.chars() {
                assert!(kept.contains(c), "{s:?} lost {c:?}: {out:?}");
            }
        }
    }
}
