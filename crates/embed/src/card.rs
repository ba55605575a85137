//! What a model folder's optional `deja-model.json` says of its model: the
//! texts it expects before queries and passages (E5-style models are trained
//! with `query: ` and `passage: `, BGE with an instruction before queries),
//! and how its token states become one vector (the mean over the tokens, as
//! sentence-transformers' MiniLM and E5 do, or the first token's, as BGE does),
//! which table of per-script means is taken out of its vectors
//! ([`crate::centering`]), and how near sentences on unrelated topics come
//! to each other in its space (`off_topic`, read by recall's relevance
//! judgement; it changes no vector, so it is not part of the model id).

use std::path::Path;

use crate::centering::ScriptMeans;
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
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelCard {
    /// Put before a query.
    pub query_prefix: String,
    /// Put before a stored text (a message's window).
    pub passage_prefix: String,
    /// How token states are pooled.
    pub pooling: Pooling,
    /// The per-script means subtracted from every vector (`script_means`:
    /// a file in the model folder).
    pub centering: Option<ScriptMeans>,
    /// How near (cosine similarity) a question on a topic a history never
    /// discusses comes to its messages in the question's own language, with
    /// this model (`off_topic`; 0 when the card says nothing).
    pub off_topic: f64,
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
        let centering = match field("script_means")?.as_str() {
            "" => None,
            name if Path::new(name).file_name() == Some(std::ffi::OsStr::new(name)) => {
                Some(ScriptMeans::read(&model_dir.join(name))?)
            }
            other => {
                return Err(bad(format!(
                    "`script_means` must name a file in the model folder, not {other:?}"
                )))
            }
        };
        let off_topic = match value.get("off_topic") {
            None | Some(serde_json::Value::Null) => 0.0,
            Some(v) => match v.as_f64() {
                Some(x) if (0.0..1.0).contains(&x) => x,
                _ => {
                    return Err(bad(format!(
                        "`off_topic` must be a number from 0 to under 1, not {v}"
                    )))
                }
            },
        };
        Ok(ModelCard {
            query_prefix: field("query_prefix")?,
            passage_prefix: field("passage_prefix")?,
            pooling,
            centering,
            off_topic,
        })
    }

    /// The part of the model id that tells cards apart: empty for the
    /// defaults (so ids stay what they were); `/p` and a short hash of both
    /// prefixes when there are any, `/cls` for first-token pooling, and
    /// `/c` and a short hash of the means table when there is one (new
    /// means are a new model: its vectors are made again).
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
        if let Some(means) = &self.centering {
            tag.push_str("/c");
            tag.push_str(means.hash().get(..8).unwrap_or(means.hash()));
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
            centering: None,
            off_topic: 0.0,
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

    #[test]
    fn a_means_table_is_read_from_the_folder_and_changes_the_tag() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
        write(
            FILE,
            r#"{"query_prefix": "query: ", "script_means": "means.json"}"#,
        );
        // A card naming a missing table is an error naming the table.
        let e = ModelCard::of(dir.path()).unwrap_err().to_string();
        assert!(e.contains("means.json"), "{e}");
        write("means.json", r#"{"means": {"latin": [1, 0]}}"#);
        let a = ModelCard::of(dir.path()).unwrap();
        let plain = ModelCard {
            centering: None,
            ..a.clone()
        };
        assert!(a.centering.is_some());
        assert_eq!(a.tag().len(), plain.tag().len() + 10, "{}", a.tag());
        assert!(a.tag().starts_with(&plain.tag()) && a.tag().contains("/c"));
        // Other means, another tag: the store's vectors are made again.
        write("means.json", r#"{"means": {"latin": [0, 1]}}"#);
        assert_ne!(ModelCard::of(dir.path()).unwrap().tag(), a.tag());
        // Only a file in the model folder may be named.
        write(FILE, r#"{"script_means": "../means.json"}"#);
        let e = ModelCard::of(dir.path()).unwrap_err().to_string();
        assert!(e.contains("a file in the model folder"), "{e}");
    }

    #[test]
    fn how_near_off_topic_questions_come_is_read_but_changes_no_id() {
        let dir = tempfile::tempdir().unwrap();
        let write = |text: &str| std::fs::write(dir.path().join(FILE), text).unwrap();
        write(r#"{"query_prefix": "query: ", "off_topic": 0.4}"#);
        let c = ModelCard::of(dir.path()).unwrap();
        assert_eq!(c.off_topic, 0.4);
        assert_eq!(c.tag(), card("query: ", "", Pooling::Mean).tag());
        write(r#"{"off_topic": 1.5}"#);
        let e = ModelCard::of(dir.path()).unwrap_err().to_string();
        assert!(e.contains(FILE) && e.contains("`off_topic` must be"), "{e}");
        write(r#"{"off_topic": "high"}"#);
        assert!(ModelCard::of(dir.path()).is_err());
    }
}
