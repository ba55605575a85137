//! Splitting a long text into windows of at most N model tokens that overlap
//! by M tokens, cut at token boundaries of the original text; and taking the
//! first or last N tokens of a text, for context; keeping at most K of a
//! message's windows, evenly spaced.

use tokenizers::Tokenizer;

/// Tokens the model adds around every input ([CLS] and [SEP]).
const SPECIAL_TOKENS: usize = 2;

/// Windows of `text`; one window (the trimmed text) when it fits, none when it
/// is blank.
pub fn split(tok: &Tokenizer, text: &str, max_tokens: usize, overlap: usize) -> Vec<String> {
    let text = text.trim();
    if text.is_empty() {
        return Vec::new();
    }
    let budget = max_tokens.saturating_sub(SPECIAL_TOKENS).max(1);
    let Ok(encoding) = tok.encode(text, false) else {
        return vec![text.to_string()];
    };
    let offsets = encoding.get_offsets();
    if offsets.len() <= budget {
        return vec![text.to_string()];
    }
    let step = budget.saturating_sub(overlap).max(1);
    let mut out = Vec::new();
    let mut start = 0;
    while start < offsets.len() {
        let end = (start + budget).min(offsets.len());
        let from = offsets[start].0;
        let to = offsets[end - 1].1;
        if let Some(piece) = text.get(from..to) {
            let piece = piece.trim();
            if !piece.is_empty() {
                out.push(piece.to_string());
            }
        }
        if end == offsets.len() {
            break;
        }
        start += step;
    }
    if out.is_empty() {
        out.push(text.to_string());
    }
    out
}

/// At most `most` of `windows` (all when `most` is 0 or they are fewer):
/// the first, the last, and the rest evenly spaced between, in order.
pub fn spread(windows: Vec<String>, most: usize) -> Vec<String> {
    let chosen = spread_indices(windows.len(), most);
    if chosen.len() == windows.len() {
        return windows;
    }
    windows
        .into_iter()
        .enumerate()
        .filter(|(i, _)| chosen.binary_search(i).is_ok())
        .map(|(_, w)| w)
        .collect()
}

/// The positions [`spread`] keeps of `n` windows, in increasing order.
pub fn spread_indices(n: usize, most: usize) -> Vec<usize> {
    if most == 0 || n <= most {
        return (0..n).collect();
    }
    if most == 1 {
        return vec![0];
    }
    // Window i * (n - 1) / (most - 1), rounded, for i in 0..most: strictly
    // increasing because n > most, from 0 to n - 1.
    (0..most)
        .map(|i| (i * (n - 1) + (most - 1) / 2) / (most - 1))
        .collect()
}

/// The first (`from_end` false) or last `n` tokens of `text`, cut at token
/// boundaries; the whole trimmed text when it is shorter.
pub fn edge(tok: &Tokenizer, text: &str, n: usize, from_end: bool) -> String {
    let text = text.trim();
    if text.is_empty() || n == 0 {
        return String::new();
    }
    let Ok(encoding) = tok.encode(text, false) else {
        return String::new();
    };
    let offsets = encoding.get_offsets();
    if offsets.len() <= n {
        return text.to_string();
    }
    let piece = if from_end {
        text.get(offsets[offsets.len() - n].0..)
    } else {
        text.get(..offsets[n - 1].1)
    };
    piece.unwrap_or_default().trim().to_string()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::str::FromStr;

    /// A tokenizer that makes one token of each whitespace-separated word,
    /// so token counts are word counts.
    fn words() -> Tokenizer {
        Tokenizer::from_str(
            r#"{
                "version": "1.0",
                "truncation": null,
                "padding": null,
                "added_tokens": [],
                "normalizer": null,
                "pre_tokenizer": {"type": "WhitespaceSplit"},
                "post_processor": null,
                "decoder": null,
                "model": {"type": "WordLevel", "vocab": {"[UNK]": 0}, "unk_token": "[UNK]"}
            }"#,
        )
        .unwrap()
    }

    fn tokens(tok: &Tokenizer, text: &str) -> usize {
        tok.encode(text, false).unwrap().get_ids().len()
    }

    /// `n` distinct words, `w0 w1 …`.
    fn text_of(n: usize) -> String {
        (0..n)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn split_words(s: &str) -> Vec<&str> {
        s.split_whitespace().collect()
    }

    #[test]
    fn windows_cover_the_text_within_the_limit_and_overlap_as_configured() {
        let tok = words();
        for (n, max, overlap) in [
            (100, 12, 3),
            (100, 12, 0),
            (101, 12, 3),
            (37, 10, 4),
            (500, 64, 16),
            (11, 12, 3),
        ] {
            let text = text_of(n);
            let all = split_words(&text);
            let windows = split(&tok, &text, max, overlap);
            let budget = max - SPECIAL_TOKENS;
            assert!(windows.len() >= 2, "{n} words in {max}: {windows:?}");
            for w in &windows {
                let count = tokens(&tok, w);
                assert!(count <= budget, "{count} tokens > {budget}: {w:?}");
            }
            // Every window but the last is full.
            for w in &windows[..windows.len() - 1] {
                assert_eq!(tokens(&tok, w), budget, "{w:?}");
            }
            // Consecutive windows share exactly `overlap` words, and
            // stitching them back (dropping the shared words) gives the text.
            let mut stitched: Vec<&str> = split_words(&windows[0]);
            for pair in windows.windows(2) {
                let (a, b) = (split_words(&pair[0]), split_words(&pair[1]));
                assert_eq!(a[a.len() - overlap..], b[..overlap], "{pair:?}");
                stitched.extend(&b[overlap..]);
            }
            assert_eq!(stitched, all, "{n} words in {max} with {overlap}");
        }
    }

    #[test]
    fn a_text_that_fits_is_one_window_of_the_trimmed_text() {
        let tok = words();
        assert_eq!(
            split(&tok, "  just a few words \n", 12, 3),
            ["just a few words"]
        );
        // Exactly the budget (the limit less the two special tokens) fits.
        let ten = text_of(10);
        assert_eq!(split(&tok, &ten, 12, 3), vec![ten]);
        // One more does not.
        assert_eq!(split(&tok, &text_of(11), 12, 3).len(), 2);
    }

    #[test]
    fn a_blank_text_has_no_window() {
        let tok = words();
        assert!(split(&tok, "", 12, 3).is_empty());
        assert!(split(&tok, " \n\t ", 12, 3).is_empty());
    }

    #[test]
    fn windows_cut_at_token_boundaries_of_text_that_is_not_ascii() {
        let tok = words();
        let text = (0..30)
            .map(|i| format!("ünï{i}🚀"))
            .collect::<Vec<_>>()
            .join("  \n ");
        let windows = split(&tok, &text, 7, 2);
        let all = split_words(&text);
        let mut stitched = split_words(&windows[0]);
        for w in &windows[1..] {
            stitched.extend(&split_words(w)[2..]);
        }
        assert_eq!(stitched, all);
        // Each window is a piece of the text as it was, whitespace included.
        assert!(windows.iter().all(|w| text.contains(w.as_str())));
    }

    #[test]
    fn an_overlap_as_large_as_the_window_still_moves_on() {
        let tok = words();
        let text = text_of(20);
        // Budget 4, overlap 9: each window starts one token after the last.
        let windows = split(&tok, &text, 6, 9);
        assert_eq!(windows.len(), 20 - 4 + 1);
        assert_eq!(windows[0], "w0 w1 w2 w3");
        assert_eq!(windows[16], "w16 w17 w18 w19");
        // A limit below the special tokens still gives one-token windows.
        assert_eq!(split(&tok, "a b c", 1, 0), ["a", "b", "c"]);
    }

    #[test]
    fn edges_are_the_first_or_last_tokens() {
        let tok = words();
        let text = format!("  {}  ", text_of(10));
        assert_eq!(edge(&tok, &text, 3, false), "w0 w1 w2");
        assert_eq!(edge(&tok, &text, 3, true), "w7 w8 w9");
        assert_eq!(edge(&tok, &text, 10, true), text_of(10));
        assert_eq!(edge(&tok, &text, 50, false), text_of(10));
        assert_eq!(edge(&tok, &text, 0, false), "");
        assert_eq!(edge(&tok, "   ", 3, true), "");
    }

    #[test]
    fn a_capped_message_keeps_its_first_last_and_evenly_spaced_windows() {
        let all: Vec<String> = (0..10).map(|i| format!("w{i}")).collect();
        let kept = |most| spread(all.clone(), most);
        assert_eq!(kept(0), all);
        assert_eq!(kept(10), all);
        assert_eq!(kept(20), all);
        assert_eq!(kept(1), ["w0"]);
        assert_eq!(kept(2), ["w0", "w9"]);
        assert_eq!(kept(4), ["w0", "w3", "w6", "w9"]);
        assert_eq!(kept(9).len(), 9);
        // For every length and cap: the cap is met, order kept, no window
        // twice, first and last always kept.
        for n in 1..40 {
            let all: Vec<String> = (0..n).map(|i| i.to_string()).collect();
            for most in 1..45 {
                let got = spread(all.clone(), most);
                assert_eq!(got.len(), n.min(most), "{n} {most}");
                let at: Vec<usize> = got.iter().map(|w| w.parse().unwrap()).collect();
                assert!(at.windows(2).all(|p| p[0] < p[1]), "{n} {most} {at:?}");
                assert_eq!(at[0], 0);
                if most > 1 {
                    assert_eq!(*at.last().unwrap(), n - 1);
                }
            }
        }
    }
}
