//! `deja doctor --json`.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// Where everything is, whether it works, and every problem with its fix.
#[derive(Debug, Clone, Serialize)]
pub struct Doctor<'a> {
    /// The config file.
    pub config: Config<'a>,
    /// The embedding model and runtime.
    pub model: Model<'a>,
    /// Every plugin file found.
    pub plugins: Vec<Plugin<'a>>,
    /// The problems found, each with its fix.
    pub problems: Vec<Problem<'a>>,
    /// What each loaded reader found, and where it looked.
    pub readers: Vec<Reader<'a>>,
    /// The index and its vectors.
    pub store: Store<'a>,
    /// Team memory's settings (checked without connecting).
    pub team: Team,
    /// What `deja setup` has wired, per harness.
    pub wiring: Vec<Wiring>,
}

/// Team memory's settings, as `deja team` would use them.
#[derive(Debug, Clone, Serialize)]
pub struct Team {
    /// Whether a team store is configured (`team.url` or `$DEJA_TEAM_URL`).
    pub configured: bool,
    /// This machine's name in the team store, when the settings are usable.
    pub origin: Option<String>,
    /// Sessions pulled from the team store into this index.
    pub pulled_sessions: Option<i64>,
    /// The team store, without password, when the settings are usable.
    pub server: Option<String>,
    /// The projects this machine shares.
    pub share: Vec<String>,
}

/// The config file.
#[derive(Debug, Clone, Serialize)]
pub struct Config<'a> {
    /// Why it cannot be used, when it cannot.
    pub error: Option<&'a str>,
    /// Whether the file exists (without it, the defaults apply).
    pub exists: bool,
    /// The file.
    pub path: &'a Path,
}

/// The index. The counts are there only when it could be opened.
#[derive(Debug, Clone, Serialize)]
pub struct Store<'a> {
    /// The database's size, when it exists.
    pub bytes: Option<u64>,
    /// deja's data folder.
    pub data_dir: &'a Path,
    /// The model the index was embedded with (null when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embed_model: Option<Option<String>>,
    /// Embedding units.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedding_units: Option<i64>,
    /// Forgotten sessions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forgotten: Option<i64>,
    /// Recall by meaning covers the sessions begun after this time (RFC
    /// 3339); absent when it covers all of them (or embeddings are off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meaning_covers_after: Option<String>,
    /// Messages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<i64>,
    /// Long messages embedded in part so far (a sample of their windows,
    /// found by meaning already; the rest follows with `deja index`), when
    /// embeddings are on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages_embedded_in_part: Option<i64>,
    /// Messages with no embedding yet (an interrupted index, or embeddings
    /// off), when embeddings are on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages_without_vectors: Option<i64>,
    /// The database.
    pub path: PathBuf,
    /// Sessions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sessions: Option<i64>,
    /// Sessions whose transcript is gone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sessions_without_source: Option<i64>,
    /// Transcripts known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transcripts: Option<i64>,
    /// The vector index.
    pub vectors: Vectors,
}

/// The vector index file.
#[derive(Debug, Clone, Serialize)]
pub struct Vectors {
    /// Its size, when it exists.
    pub bytes: Option<u64>,
    /// Vectors in it, when it can be read.
    pub count: Option<usize>,
    /// Whether it holds every unit of the database (only when the database
    /// could be opened).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_sync: Option<bool>,
    /// The file.
    pub path: PathBuf,
}

/// One plugin file.
#[derive(Debug, Clone, Serialize)]
pub struct Plugin<'a> {
    /// Its ABI version, when it could say.
    pub abi: Option<String>,
    /// The harness it reads.
    pub harness: Option<&'a str>,
    /// Its name.
    pub name: Option<&'a str>,
    /// The file.
    pub path: &'a Path,
    /// Why it was not loaded.
    pub reason: Option<&'a str>,
    /// `loaded`, `incompatible`, `refused` or `invalid`.
    pub status: &'a str,
    /// Its version.
    pub version: Option<&'a str>,
}

/// What one reader found.
#[derive(Debug, Clone, Serialize)]
pub struct Reader<'a> {
    /// Whether its harness is enabled in the config.
    pub enabled: bool,
    /// Its harness.
    pub harness: &'a str,
    /// Where it looked.
    pub looked_in: Vec<LookedIn>,
    /// Transcripts found.
    pub transcripts: usize,
}

/// A place a reader looked for transcripts.
#[derive(Debug, Clone, Serialize)]
pub struct LookedIn {
    /// Whether it exists.
    pub exists: bool,
    /// The folder or file.
    pub path: String,
    /// Why the reader looked there.
    pub reason: String,
}

/// The embedding model and runtime. Loaded only when enabled: `status` is
/// there then, and `dims`, `id` and `load_ms` when it loaded.
#[derive(Debug, Clone, Serialize)]
pub struct Model<'a> {
    /// Vector dimensions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dims: Option<usize>,
    /// Whether semantic recall is enabled in the config.
    pub enabled: bool,
    /// The model's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Milliseconds the model took to load.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_ms: Option<u64>,
    /// The model's folder.
    pub model_dir: &'a Path,
    /// ONNX Runtime's library, when found.
    pub runtime: Option<PathBuf>,
    /// `ok`, or why it did not load.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// The table of each script's mean vector the model takes out of every
    /// vector, when its card names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub script_means: Option<PathBuf>,
    /// How near off-topic questions come with this model, when its card
    /// says (an answer under the relevance bar is kept by meaning alone
    /// only from nearer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub off_topic: Option<f64>,
    /// Why this model, when the config names no model folder (`embed.model`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// A problem, with its fix.
#[derive(Debug, Clone, Serialize)]
pub struct Problem<'a> {
    /// What to do about it.
    pub fix: &'a str,
    /// What is wrong.
    pub problem: &'a str,
}

/// What `deja setup` has wired into one harness.
#[derive(Debug, Clone, Serialize)]
pub struct Wiring {
    /// What is there, or what to do.
    pub detail: String,
    /// The command that wires it.
    pub fix: String,
    /// The harness.
    pub harness: &'static str,
    /// `wired`, `not wired`, `not found`, `stale` or `unknown`.
    pub status: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::testing::keys;

    #[test]
    fn field_names() {
        let p = Path::new("/p");
        let out = Doctor {
            config: Config {
                error: None,
                exists: false,
                path: p,
            },
            model: Model {
                dims: Some(384),
                enabled: true,
                id: Some("m".into()),
                load_ms: Some(1),
                model_dir: p,
                runtime: None,
                status: Some("ok".into()),
                script_means: None,
                off_topic: None,
                why: None,
            },
            plugins: vec![Plugin {
                abi: None,
                harness: None,
                name: None,
                path: p,
                reason: None,
                status: "loaded",
                version: None,
            }],
            problems: vec![Problem {
                fix: "f",
                problem: "p",
            }],
            readers: vec![Reader {
                enabled: true,
                harness: "aider",
                looked_in: vec![LookedIn {
                    exists: true,
                    path: "/p".into(),
                    reason: "r".into(),
                }],
                transcripts: 0,
            }],
            store: Store {
                bytes: None,
                data_dir: p,
                embed_model: Some(None),
                embedding_units: Some(0),
                forgotten: Some(0),
                messages: Some(0),
                messages_embedded_in_part: Some(0),
                messages_without_vectors: Some(0),
                meaning_covers_after: Some("2026-01-01T00:00:00Z".into()),
                path: p.into(),
                sessions: Some(0),
                sessions_without_source: Some(0),
                transcripts: Some(0),
                vectors: Vectors {
                    bytes: None,
                    count: None,
                    in_sync: Some(true),
                    path: p.into(),
                },
            },
            team: Team {
                configured: false,
                origin: None,
                pulled_sessions: None,
                server: None,
                share: Vec::new(),
            },
            wiring: vec![Wiring {
                detail: "d".into(),
                fix: "deja setup aider".into(),
                harness: "aider",
                status: "wired",
            }],
        };
        assert_eq!(
            keys(&out),
            ["config", "model", "plugins", "problems", "readers", "store", "team", "wiring"]
        );
        assert_eq!(
            keys(&out.team),
            ["configured", "origin", "pulled_sessions", "server", "share"]
        );
        assert_eq!(keys(&out.config), ["error", "exists", "path"]);
        assert_eq!(
            keys(&out.model),
            [
                "dims",
                "enabled",
                "id",
                "load_ms",
                "model_dir",
                "runtime",
                "status"
            ]
        );
        assert_eq!(
            keys(&out.plugins[0]),
            ["abi", "harness", "name", "path", "reason", "status", "version"]
        );
        assert_eq!(keys(&out.problems[0]), ["fix", "problem"]);
        assert_eq!(
            keys(&out.readers[0]),
            ["enabled", "harness", "looked_in", "transcripts"]
        );
        assert_eq!(
            keys(&out.readers[0].looked_in[0]),
            ["exists", "path", "reason"]
        );
        assert_eq!(
            keys(&out.store),
            [
                "bytes",
                "data_dir",
                "embed_model",
                "embedding_units",
                "forgotten",
                "meaning_covers_after",
                "messages",
                "messages_embedded_in_part",
                "messages_without_vectors",
                "path",
                "sessions",
                "sessions_without_source",
                "transcripts",
                "vectors"
            ]
        );
        assert_eq!(
            keys(&out.store.vectors),
            ["bytes", "count", "in_sync", "path"]
        );
        assert_eq!(keys(&out.wiring[0]), ["detail", "fix", "harness", "status"]);
    }

    #[test]
    fn absent_parts_stay_absent() {
        let p = Path::new("/p");
        let model = Model {
            dims: None,
            enabled: false,
            id: None,
            load_ms: None,
            model_dir: p,
            runtime: None,
            status: None,
            script_means: None,
            off_topic: None,
            why: None,
        };
        assert_eq!(keys(&model), ["enabled", "model_dir", "runtime"]);
        let vectors = Vectors {
            bytes: None,
            count: None,
            in_sync: None,
            path: p.into(),
        };
        assert_eq!(keys(&vectors), ["bytes", "count", "path"]);
        let store = Store {
            bytes: None,
            data_dir: p,
            embed_model: None,
            embedding_units: None,
            forgotten: None,
            messages: None,
            messages_embedded_in_part: None,
            messages_without_vectors: None,
            meaning_covers_after: None,
            path: p.into(),
            sessions: None,
            sessions_without_source: None,
            transcripts: None,
            vectors,
        };
        assert_eq!(keys(&store), ["bytes", "data_dir", "path", "vectors"]);
    }
}
