//! The texts a model expects before queries and passages (E5-style models
//! are trained with `query: ` and `passage: `), read from an optional
//! `deja-model.json` in the model folder.

use std::path::Path;

use crate::EmbedError;

/// The file in a model folder that names its prefixes.
pub const FILE: &str = "deja-model.json";

/// What is put before each text the model embeds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prefixes {
    /// Before a query.
    pub query: String,
    /// Before a stored text (a message's window).
    pub passage: String,
}

impl Prefixes {
    /// The prefixes of the model in `model_dir`: none without a
    /// `deja-model.json`; an error naming the file when it is not valid.
    pub fn of(model_dir: &Path) -> Result<Prefixes, EmbedError> {
        let path = model_dir.join(FILE);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Prefixes::default()),
            Err(e) => {
                return Err(EmbedError::Model {
                    path,
                    message: e.to_string(),
                })
            }
        };
        let bad = |message: String| EmbedError::Model {
            path: path.clone(),
            message,
        };
        let value: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| bad(format!("not valid JSON: {e}")))?;
        let field = |name: &str| -> Result<String, EmbedError> {
            match value.get(name) {
                None | Some(serde_json::Value::Null) => Ok(String::new()),
                Some(serde_json::Value::String(s)) => Ok(s.clone()),
                Some(_) => Err(bad(format!("`{name}` must be a string"))),
            }
        };
        Ok(Prefixes {
            query: field("query_prefix")?,
            passage: field("passage_prefix")?,
        })
    }

    /// The part of the model id that tells these prefixes apart: empty
    /// without prefixes (so ids stay what they were), else `/p` and a short
    /// hash of both.
    pub fn tag(&self) -> String {
        if self.query.is_empty() && self.passage.is_empty() {
            return String::new();
        }
        let hash = deja_model::sha256_hex(format!("{}\0{}", self.query, self.passage).as_bytes());
        format!("/p{}", hash.get(..8).unwrap_or(&hash))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn prefixes_come_from_the_model_folder_and_change_the_tag() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Prefixes::of(dir.path()).unwrap(), Prefixes::default());
        assert_eq!(Prefixes::default().tag(), "");
        std::fs::write(
            dir.path().join(FILE),
            r#"{"query_prefix": "query: ", "passage_prefix": "passage: "}"#,
        )
        .unwrap();
        let p = Prefixes::of(dir.path()).unwrap();
        assert_eq!(
            (p.query.as_str(), p.passage.as_str()),
            ("query: ", "passage: ")
        );
        assert!(
            p.tag().starts_with("/p") && p.tag().len() == 10,
            "{}",
            p.tag()
        );
        let other = Prefixes {
            query: "q: ".into(),
            passage: "passage: ".into(),
        };
        assert_ne!(p.tag(), other.tag());

        std::fs::write(dir.path().join(FILE), r#"{"query_prefix": 3}"#).unwrap();
        let e = Prefixes::of(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains(FILE) && e.contains("`query_prefix` must be a string"),
            "{e}"
        );
        std::fs::write(dir.path().join(FILE), "{").unwrap();
        let e = Prefixes::of(dir.path()).unwrap_err().to_string();
        assert!(e.contains("not valid JSON"), "{e}");
    }
}
