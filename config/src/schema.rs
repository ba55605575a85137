//! The configuration's shape: one struct per section, deserialized from the
//! merged TOML tree, and the small enums its keys take.

use super::*;

/// The effective configuration.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// `[store]`.
    pub store: Store,
    /// `[index]`.
    pub index: Index,
    /// `[embed]`.
    pub embed: Embed,
    /// `[recall]`.
    pub recall: Recall,
    /// `[redact]`.
    pub redact: Redact,
    /// `[mcp]`.
    pub mcp: Mcp,
    /// `[context]`.
    pub context: Context,
    /// `[plugins]`.
    pub plugins: Plugins,
    /// `[team]`.
    pub team: Team,
    /// `[harness.<name>]`, one per harness.
    pub harness: BTreeMap<String, Harness>,
}

/// `[store]`: where the index lives.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Store {
    /// The data folder; empty means the platform default.
    pub dir: String,
}

/// `[index]`: ingest limits.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Index {
    /// Larger transcripts are skipped.
    pub max_file_bytes: u64,
    /// Seconds to wait for another running index.
    pub lock_wait_secs: u64,
    /// Whether transcripts found in a code folder that the folder's git
    /// repository tracks are read.
    pub read_tracked: bool,
}

/// `[embed]`: the local embedding model.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Embed {
    /// Whether to embed at all.
    pub enabled: bool,
    /// Which installed model when `model_dir` is empty: `auto`, `minilm`
    /// or `multilingual`.
    pub model: String,
    /// Model folder; empty means the installed model `model` picks.
    pub model_dir: String,
    /// ONNX Runtime library; empty means the installed one or `$ORT_DYLIB_PATH`.
    pub runtime: String,
    /// Tokens per embedded window.
    pub max_tokens: usize,
    /// Tokens shared by consecutive windows.
    pub overlap_tokens: usize,
    /// Tokens of neighbouring messages embedded with each message.
    pub context_tokens: usize,
    /// Most windows embedded of one message, evenly spaced; 0 means all.
    pub max_windows: usize,
    /// Most windows of one message embedded by the first pass over the
    /// history, evenly spaced (the rest by a second pass); 0 means all at once.
    pub first_windows: usize,
    /// Most texts per model call.
    pub batch_size: usize,
    /// Most padded tokens per model call.
    pub batch_tokens: usize,
    /// ONNX Runtime threads; 0 means one per core.
    pub threads: usize,
}

/// Ranking modes of `deja recall`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Semantic and lexical, fused.
    Hybrid,
    /// Embeddings only.
    Semantic,
    /// Full-text search only.
    Lexical,
}

impl Mode {
    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Hybrid => "hybrid",
            Mode::Semantic => "semantic",
            Mode::Lexical => "lexical",
        }
    }
}

/// `[recall]`: defaults of `deja recall`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recall {
    /// Hits shown.
    pub limit: usize,
    /// Ranking mode.
    pub mode: Mode,
    /// Most messages of one session among the hits; 0: no cap.
    pub per_session: usize,
    /// Whether recall first reads transcripts that changed.
    pub refresh: bool,
    /// The time budget of that pass, in milliseconds.
    pub refresh_ms: u64,
    /// Above this many known transcripts the pass is skipped.
    pub refresh_max_transcripts: u64,
    /// The least cosine similarity of a hit that shares no word with the
    /// query; 0: no floor.
    pub min_similarity: f64,
    /// The least score of a hybrid answer's best hit; 0: no bar.
    pub min_score: f64,
}

impl Recall {
    /// The per-session cap, `None` when there is none.
    pub fn per_session_cap(&self) -> Option<usize> {
        (self.per_session > 0).then_some(self.per_session)
    }
}

/// `[context]`: the project digest agents get when a session starts.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Context {
    /// Most bytes of a digest.
    pub max_bytes: usize,
    /// Whether `deja aider` passes the digest to aider as a read-only file.
    pub aider: bool,
    /// Sessions pulled from the team store: listed after this machine's own,
    /// labelled with who published them, or left out.
    pub pulled: Pulled,
    /// Whether the hooks `deja setup` wires add anything to a session (the
    /// digest at its start, a note when a command fails).
    pub inject: bool,
    /// Agents whose hooks add nothing (`claude`, `codex`, `gemini`, `qwen`).
    pub inject_off: Vec<String>,
    /// Most bytes of the note a failing command gets.
    pub note_max_bytes: usize,
    /// Whether agents are given the sessions read from transcripts found in
    /// a code folder (the digest, the MCP server's `recall` and `sessions`).
    pub code_folder_sessions: bool,
}

/// The agents `context.inject_off` may name.
pub const HOOK_AGENTS: [&str; 5] = ["claude", "codex", "gemini", "qwen", "droid"];

/// `context.pulled`: where a digest puts sessions pulled from teammates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pulled {
    /// After this machine's own sessions, each labelled `from user@machine`.
    After,
    /// Not in the digest at all.
    Omit,
}

/// Most hits one MCP `recall` call may ask for.
pub const MCP_MAX_LIMIT: usize = 20;
/// The smallest answer bound the MCP server accepts: room for a hit and its frame.
pub const MCP_MIN_ANSWER_BYTES: usize = 1024;

/// `[mcp]`: the MCP server (`deja mcp`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mcp {
    /// Hits a `recall` call returns unless it asks for `limit`.
    pub limit: usize,
    /// Most messages of one session among a `recall` answer's hits.
    pub per_session: usize,
    /// Most bytes of text in one tool answer.
    pub max_answer_bytes: usize,
    /// Whether the server indexes in the background.
    pub index: bool,
    /// Seconds between background index runs (0: only at start).
    pub index_interval_secs: u64,
}

/// A user-defined redaction pattern.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Pattern {
    /// Marker name: matches become `[REDACTED:<name>]`.
    pub name: String,
    /// The regular expression.
    pub regex: String,
}

/// `[redact]`: secret redaction.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Redact {
    /// Whether to redact.
    pub enabled: bool,
    /// Extra patterns.
    pub patterns: Vec<Pattern>,
}

/// How the team store's connection uses TLS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tls {
    /// From the host: `require` for a TCP host, `disable` for a Unix socket
    /// (which carries no TLS and never crosses a network).
    Auto,
    /// Never.
    Disable,
    /// When the server offers it (certificates verified when used).
    Prefer,
    /// Always, with the server's certificate and name verified.
    Require,
}

impl Tls {
    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Tls::Auto => "auto",
            Tls::Disable => "disable",
            Tls::Prefer => "prefer",
            Tls::Require => "require",
        }
    }
}

/// `[team]`: team memory, opted-in sessions shared through PostgreSQL.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Team {
    /// The team database (`postgres://user@host:port/db`); empty: none.
    pub url: String,
    /// A file holding the password (mode 0600); empty: none.
    pub password_file: String,
    /// TLS use.
    pub tls: Tls,
    /// Whether password authentication without channel binding (cleartext,
    /// MD5, or SCRAM without TLS) may be used over TCP.
    pub allow_insecure_auth: bool,
    /// A PEM file of the certificate authority that signed the server's
    /// certificate, besides the system's; empty: the system's only.
    pub ca_file: String,
    /// Who and which machine this is (`user@machine`); empty: `$USER@<hostname>`.
    pub name: String,
    /// The projects (directories or names) whose sessions this machine publishes.
    pub share: Vec<String>,
    /// Seconds to wait for the server to answer a connection.
    pub connect_timeout_secs: u64,
    /// Most messages of one pulled session; a larger one is skipped.
    pub pull_max_messages: u64,
    /// Most bytes of one pulled message's text; a session with a larger one
    /// is skipped.
    pub pull_max_message_bytes: u64,
    /// Most bytes of one pulled session's text (messages, files and
    /// commands records); a larger one is skipped.
    pub pull_max_session_bytes: u64,
}

/// `[plugins]`: where else to load plugins from.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plugins {
    /// Extra plugin files or folders.
    pub paths: Vec<String>,
}

/// `[harness.<name>]`: one reader's settings.
#[derive(Debug, Clone, Deserialize)]
pub struct Harness {
    /// Whether the reader runs at all.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Extra transcript files or folders.
    #[serde(default)]
    pub roots: Vec<String>,
    /// Glob patterns of paths to leave out.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Keys specific to the plugin, checked against what it declares.
    #[serde(flatten)]
    pub extra: Table,
}

pub(crate) fn yes() -> bool {
    true
}

/// A missing section means the same as an empty one: the reader runs.
impl Default for Harness {
    fn default() -> Self {
        Harness {
            enabled: true,
            roots: Vec::new(),
            exclude: Vec::new(),
            extra: Table::new(),
        }
    }
}

impl Harness {
    /// The section as JSON-compatible key/values for the plugin (common and extra keys).
    pub fn to_table(&self) -> Table {
        let mut t = self.extra.clone();
        t.insert("enabled".into(), Value::Boolean(self.enabled));
        t.insert(
            "roots".into(),
            Value::Array(self.roots.iter().cloned().map(Value::String).collect()),
        );
        t.insert(
            "exclude".into(),
            Value::Array(self.exclude.iter().cloned().map(Value::String).collect()),
        );
        t
    }
}
