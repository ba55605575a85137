//! Taking a text's language out of its vector. A multilingual model places
//! every text partly by the script it is written in: a Chinese question
//! lands near Chinese messages whatever they say, and far from the English
//! session that answers it. A model folder may carry the mean vector of each
//! script (`scripts/e5-script-means.json`, made from the same sentences in
//! every language by `scripts/script-means.py`); every vector, stored text's
//! and query's alike, then has its script's mean subtracted and is
//! normalized again, so what remains is mostly what the text says.
//!
//! The script of a text is that of most of its letters: Chinese, Japanese
//! (Han with some Kana) and Korean when at least 0.3 of the letters are
//! Han, Kana or Hangul, else Cyrillic or Latin, whichever has more. A text
//! in another script (Greek, Arabic, ...) or without letters is treated as
//! Latin, whose mean is the one every table must hold.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::EmbedError;

/// The scripts a means table may name, as it names them.
pub const SCRIPTS: [&str; 5] = ["latin", "cyrillic", "zh", "ja", "ko"];

/// The script most of `text`'s letters are written in (one of [`SCRIPTS`]).
pub fn script(text: &str) -> &'static str {
    let (mut kana, mut han, mut hangul, mut cyrillic, mut latin, mut other) = (0, 0, 0, 0, 0, 0);
    for c in text.chars() {
        match c as u32 {
            0x3040..=0x30FF | 0x31F0..=0x31FF | 0xFF66..=0xFF9F => kana += 1,
            0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x3134F => han += 1,
            0x1100..=0x11FF | 0x3130..=0x318F | 0xAC00..=0xD7AF => hangul += 1,
            _ if !c.is_alphabetic() => {}
            0x400..=0x4FF => cyrillic += 1,
            0..=0x24F => latin += 1,
            _ => other += 1,
        }
    }
    let cjk = kana + han + hangul;
    let letters = cjk + cyrillic + latin + other;
    if letters == 0 {
        return "latin";
    }
    if cjk * 10 >= letters * 3 {
        return if hangul > kana && hangul * 4 > han {
            "ko"
        } else if kana * 10 >= cjk {
            "ja"
        } else {
            "zh"
        };
    }
    if cyrillic > latin && cyrillic >= other {
        "cyrillic"
    } else {
        "latin"
    }
}

/// The mean vector of each script, read from a model folder.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptMeans {
    means: HashMap<&'static str, Vec<f32>>,
    /// The file they were read from (for errors).
    path: PathBuf,
    /// sha256 of the file: part of the model's id.
    hash: String,
}

impl ScriptMeans {
    /// Reads the table at `path`: a JSON object whose `means` maps script
    /// names ([`SCRIPTS`]; `latin` required) to vectors of one length.
    pub fn read(path: &Path) -> Result<ScriptMeans, EmbedError> {
        let bad = |message: String| EmbedError::Model {
            path: path.to_path_buf(),
            message,
        };
        let bytes = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
        let value: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| bad(format!("not valid JSON: {e}")))?;
        let table = value
            .get("means")
            .and_then(|m| m.as_object())
            .ok_or_else(|| bad("no `means` object".into()))?;
        let mut means = HashMap::new();
        for (name, vector) in table {
            let Some(script) = SCRIPTS.iter().find(|s| **s == name.as_str()) else {
                return Err(bad(format!(
                    "`{name}` is not a script deja knows ({})",
                    SCRIPTS.join(", ")
                )));
            };
            let vector: Vec<f32> = vector
                .as_array()
                .and_then(|a| a.iter().map(|x| x.as_f64().map(|x| x as f32)).collect())
                .ok_or_else(|| bad(format!("the mean of `{name}` is not a list of numbers")))?;
            means.insert(*script, vector);
        }
        let dims = means
            .get("latin")
            .map(Vec::len)
            .ok_or_else(|| bad("no mean for `latin`, which other scripts fall back on".into()))?;
        if dims == 0 || means.values().any(|v| v.len() != dims) {
            return Err(bad("the means are not all of one, non-zero length".into()));
        }
        Ok(ScriptMeans {
            means,
            path: path.to_path_buf(),
            hash: deja_model::sha256_hex(&bytes),
        })
    }

    /// How many values each mean has.
    pub fn dims(&self) -> usize {
        self.means.get("latin").map_or(0, Vec::len)
    }

    /// The table's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// sha256 of the table's file.
    pub fn hash(&self) -> &str {
        &self.hash
    }

    /// Subtracts the mean of `text`'s script from `v` (a vector of `text`)
    /// and normalizes it again; an error naming the table when its means are
    /// not of `v`'s length.
    pub fn center(&self, text: &str, v: &mut [f32]) -> Result<(), EmbedError> {
        let mean = self
            .means
            .get(script(text))
            .or_else(|| self.means.get("latin"))
            .filter(|m| m.len() == v.len())
            .ok_or_else(|| EmbedError::Model {
                path: self.path.clone(),
                message: format!("the means are not of the model's {} dimensions", v.len()),
            })?;
        for (x, m) in v.iter_mut().zip(mean) {
            *x -= m;
        }
        crate::normalize(v);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_text_is_of_the_script_most_of_its_letters_are_in() {
        for (text, want) in [
            ("the tenant predicate bug", "latin"),
            ("", "latin"),
            ("1234 ++ --", "latin"),
            ("修复内存泄露的问题", "zh"),
            ("メモリリークを修正する", "ja"),
            ("テストが失敗した原因を調べて", "ja"),
            ("메모리 누수를 고쳐 주세요", "ko"),
            ("исправь утечку памяти", "cyrillic"),
            ("Καλημέρα κόσμε", "latin"),
            // Chinese in English code: the letters decide.
            ("fn main() { println!(\"修复\"); }", "latin"),
            ("修复 `parse_config` 里的内存泄露", "zh"),
            // Han with a little Kana is Japanese; Hangul among Han Korean.
            ("設定ファイルの読み込み", "ja"),
            ("데이터베이스 連結 問題", "ko"),
        ] {
            assert_eq!(script(text), want, "{text}");
        }
    }

    fn table(dir: &Path, json: &str) -> Result<ScriptMeans, EmbedError> {
        let path = dir.join("means.json");
        std::fs::write(&path, json).unwrap();
        ScriptMeans::read(&path)
    }

    #[test]
    fn a_vector_loses_its_scripts_mean_and_is_normalized_again() {
        let dir = tempfile::tempdir().unwrap();
        let m = table(
            dir.path(),
            r#"{"means": {"latin": [0.5, 0, 0], "zh": [0, 0.5, 0]}}"#,
        )
        .unwrap();
        let mut v = vec![0.5, 0.5, 0.5];
        m.center("memory leak", &mut v).unwrap();
        let n = 0.5f32.sqrt();
        assert!(
            v.iter().zip([0.0, n, n]).all(|(a, b)| (a - b).abs() < 1e-6),
            "{v:?}"
        );
        let mut v = vec![0.5, 0.5, 0.5];
        m.center("内存泄露", &mut v).unwrap();
        assert!(
            v.iter().zip([n, 0.0, n]).all(|(a, b)| (a - b).abs() < 1e-6),
            "{v:?}"
        );
        // A script without a mean uses Latin's.
        let mut v = vec![0.5, 0.5, 0.5];
        m.center("메모리 누수", &mut v).unwrap();
        assert!(
            v.iter().zip([0.0, n, n]).all(|(a, b)| (a - b).abs() < 1e-6),
            "{v:?}"
        );
        // The wrong length is an error naming the table.
        let e = m.center("x", &mut [1.0, 0.0]).unwrap_err().to_string();
        assert!(
            e.contains("means.json") && e.contains("2 dimensions"),
            "{e}"
        );
    }

    #[test]
    fn a_bad_table_is_refused_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        for (json, reason) in [
            ("{", "not valid JSON"),
            (r#"{"x": 1}"#, "no `means` object"),
            (r#"{"means": {"zh": [1]}}"#, "no mean for `latin`"),
            (
                r#"{"means": {"latin": [1], "el": [1]}}"#,
                "`el` is not a script",
            ),
            (r#"{"means": {"latin": [1, "a"]}}"#, "not a list of numbers"),
            (
                r#"{"means": {"latin": [1, 2], "ko": [1]}}"#,
                "one, non-zero length",
            ),
        ] {
            let e = table(dir.path(), json).unwrap_err().to_string();
            assert!(
                e.contains("means.json") && e.contains(reason),
                "{json}: {e}"
            );
        }
        let a = table(dir.path(), r#"{"means": {"latin": [1]}}"#).unwrap();
        let b = table(dir.path(), r#"{"means": {"latin": [2]}}"#).unwrap();
        assert_ne!(a.hash(), b.hash());
    }
}
