//! Splitting a long text into windows of at most N model tokens that overlap
//! by M tokens, cut at token boundaries of the original text; and taking the
//! first or last N tokens of a text, for context.

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
