//! What a model folder's optional `deja-model.json` says of its model: the
//! texts it expects before queries and passages (E5-style models are trained
//! with `query: ` and `passage: `, BGE with an instruction before queries),
//! and how its token states become one vector (the mean over the tokens, as
//! sentence-transformers' MiniLM and E5 do, or the first token's, as BGE does).

use std::path::Path;

use crate::EmbedError;

/// The file in a model folder that describes the model.
pub const FILE: &str = "deja-model.json";

/// How a text's token states become its vector.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Pooling {
    /// The mean of the states of the text's tokens.
    #[default]
    Mean,
    /// The state of the first token (`[CLS]`).
    Cls,
}

/// What `deja-model.json` says; the defaults without one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelCard {
    /// Put before a query.
    pub query_prefix: String,
    /// Put before a stored text (a message's window).
    pub passage_prefix: String,
    /// How token states are pooled.
    pub pooling: Pooling,
}

impl ModelCard {
    /// The card of the model in `model_dir`: the defaults without a
    /// `deja-model.json`; an error naming the file when it is not valid.
    pub fn of(model_dir: &Path) -> Result<ModelCard, EmbedError> {
        let path = model_dir.join(FILE);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ModelCard::default()),
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
        let pooling = match field("pooling")?.as_str() {
            "" | "mean" => Pooling::Mean,
            "cls" => Pooling::Cls,
            other => {
                return Err(bad(format!(
                    "`pooling` must be \"mean\" or \"cls\", not {other:?}"
                )))
            }
        };
        Ok(ModelCard {
            query_prefix: field("query_prefix")?,
            passage_prefix: field("passage_prefix")?,
            pooling,
        })
    }

    /// The part of the model id that tells cards apart: empty for the
    /// defaults (so ids stay what they were); `/p` and a short hash of both
    /// prefixes when there are any, and `/cls` for first-token pooling.
    pub fn tag(&self) -> String {
        let mut tag = String::new();
        if !(self.query_prefix.is_empty() && self.passage_prefix.is_empty()) {
            let hash = deja_model::sha256_hex(
                format!("{}\0{}", self.query_prefix, self.passage_prefix).as_bytes(),
            );
            tag.push_str("/p");
            tag.push_str(hash.get(..8).unwrap_or(&hash));
        }
        if self.pooling == Pooling::Cls {
            tag.push_str("/cls");
        }
        tag
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn card(query_prefix: &str, passage_prefix: &str, pooling: Pooling) -> ModelCard {
        ModelCard {
            query_prefix: query_prefix.into(),
            passage_prefix: passage_prefix.into(),
            pooling,
        }
    }

    #[test]
    fn the_card_comes_from_the_model_folder_and_changes_the_tag() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(ModelCard::of(dir.path()).unwrap(), ModelCard::default());
        assert_eq!(ModelCard::default().tag(), "");
        std::fs::write(
            dir.path().join(FILE),
            r#"{"query_prefix": "query: ", "passage_prefix": "passage: "}"#,
        )
        .unwrap();
        let p = ModelCard::of(dir.path()).unwrap();
        assert_eq!(p, card("query: ", "passage: ", Pooling::Mean));
        assert!(
            p.tag().starts_with("/p") && p.tag().len() == 10,
            "{}",
            p.tag()
        );
        let other = ModelCard {
            query_prefix: "q: ".into(),
            ..p.clone()
        };
        assert_ne!(p.tag(), other.tag());
        let cls = ModelCard {
            pooling: Pooling::Cls,
            ..p.clone()
        };
        assert_eq!(cls.tag(), format!("{}/cls", p.tag()));

        std::fs::write(
            dir.path().join(FILE),
            r#"{"query_prefix": "Represent this: ", "pooling": "cls"}"#,
        )
        .unwrap();
        let c = ModelCard::of(dir.path()).unwrap();
        assert_eq!(c, card("Represent this: ", "", Pooling::Cls));

        std::fs::write(dir.path().join(FILE), r#"{"query_prefix": 3}"#).unwrap();
        let e = ModelCard::of(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains(FILE) && e.contains("`query_prefix` must be a string"),
            "{e}"
        );
        std::fs::write(dir.path().join(FILE), r#"{"pooling": "max"}"#).unwrap();
        let e = ModelCard::of(dir.path()).unwrap_err().to_string();
        assert!(e.contains(FILE) && e.contains("`pooling`"), "{e}");
        std::fs::write(dir.path().join(FILE), "{").unwrap();
        let e = ModelCard::of(dir.path()).unwrap_err().to_string();
        assert!(e.contains("not valid JSON"), "{e}");
    }
}
