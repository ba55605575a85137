//! deja's configuration: the default file embedded in the binary, the user's
//! TOML file layered on top, environment overrides, validation that names the
//! offending key and file, and the provenance of every effective value.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::{Table, Value};

/// The default configuration file, with every key documented.
pub const DEFAULT_TOML: &str = include_str!("../default.toml");

/// Keys every `[harness.<name>]` section accepts.
pub const COMMON_HARNESS_KEYS: &[&str] = &["enabled", "roots", "exclude"];

/// The variable naming another config file; when set, that file must exist.
pub const CONFIG_ENV: &str = "DEJA_CONFIG";

/// Errors reading or validating the configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config file `{}`: {source}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// `$DEJA_CONFIG` names a file that does not exist.
    #[error("config file `{}` does not exist (${CONFIG_ENV} names it)", .path.display())]
    Missing {
        /// The file.
        path: PathBuf,
    },
    /// The file is not valid TOML, or a key is unknown, has the wrong type or
    /// is out of bounds.
    #[error("invalid config file `{}`{}: {message}", .path.display(), at_line(*.line))]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The line (1-based) the problem is on, when known.
        line: Option<usize>,
        /// What is wrong, naming the full key.
        message: String,
    },
}

fn at_line(line: Option<usize>) -> String {
    line.map(|l| format!(", line {l}")).unwrap_or_default()
}

/// Where an effective value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The embedded default.
    Default,
    /// The user's config file.
    File(PathBuf),
    /// An environment variable.
    Env(&'static str),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::File(p) => write!(f, "{}", p.display()),
            Source::Env(v) => write!(f, "${v}"),
        }
    }
}

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
}

/// `[embed]`: the local embedding model.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Embed {
    /// Whether to embed at all.
    pub enabled: bool,
    /// Model folder; empty means the installed default.
    pub model_dir: String,
    /// ONNX Runtime library; empty means the installed one or `$ORT_DYLIB_PATH`.
    pub runtime: String,
    /// Tokens per embedded window.
    pub max_tokens: usize,
    /// Tokens shared by consecutive windows.
    pub overlap_tokens: usize,
    /// Tokens of neighbouring messages embedded with each message.
    pub context_tokens: usize,
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
}

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

fn yes() -> bool {
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

/// The configuration with where it came from.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The effective values.
    pub config: Config,
    /// The config file consulted (it may not exist).
    pub path: PathBuf,
    /// Whether that file exists.
    pub file_exists: bool,
    /// The source of every leaf key, by dotted path.
    pub sources: BTreeMap<String, Source>,
    /// The merged TOML tree, for printing.
    pub merged: Table,
    /// The line (1-based) of every key written in the file, by dotted path
    /// (sections included).
    pub lines: BTreeMap<String, usize>,
    /// The `[harness.<name>]` sections the file writes, by name.
    pub file_harnesses: Vec<String>,
}

/// Environment overrides applied after the file: (variable, dotted key).
pub const ENV_OVERRIDES: &[(&str, &str)] =
    &[("DEJA_HOME", "store.dir"), ("DEJA_TEAM_URL", "team.url")];

/// Most hits `deja recall` shows (`recall.limit`, `-n`).
pub const RECALL_MAX_LIMIT: usize = 1000;

/// The bounds of every numeric key: (dotted key, least, most). Some keys are
/// bounded further by others (see [`load`]).
pub const BOUNDS: &[(&str, i64, i64)] = &[
    ("index.max_file_bytes", 1, 17_179_869_184),
    ("index.lock_wait_secs", 0, 86_400),
    ("embed.max_tokens", 8, 512),
    ("embed.overlap_tokens", 0, 255),
    ("embed.context_tokens", 0, 128),
    ("embed.batch_size", 1, 4096),
    ("embed.batch_tokens", 8, 1_048_576),
    ("embed.threads", 0, 1024),
    ("recall.limit", 1, RECALL_MAX_LIMIT as i64),
    ("recall.per_session", 0, RECALL_MAX_LIMIT as i64),
    ("recall.refresh_ms", 0, 60_000),
    ("recall.refresh_max_transcripts", 0, 10_000_000),
    ("mcp.limit", 1, MCP_MAX_LIMIT as i64),
    ("mcp.per_session", 1, MCP_MAX_LIMIT as i64),
    (
        "mcp.max_answer_bytes",
        MCP_MIN_ANSWER_BYTES as i64,
        1_048_576,
    ),
    ("mcp.index_interval_secs", 0, 604_800),
    ("context.max_bytes", 256, 1_000_000),
    ("team.connect_timeout_secs", 1, 600),
    ("team.pull_max_messages", 1, 10_000_000),
    ("team.pull_max_message_bytes", 1, 1_073_741_824),
    ("team.pull_max_session_bytes", 1, 17_179_869_184),
];

/// The bounds of every decimal key: (dotted key, least, most). An integer
/// is accepted where a decimal is expected (`0`, `1`).
pub const FLOAT_BOUNDS: &[(&str, f64, f64)] = &[("recall.min_similarity", 0.0, 1.0)];

/// The values a string key accepts, where it accepts only some.
const CHOICES: &[(&str, &[&str])] = &[
    ("recall.mode", &["hybrid", "semantic", "lexical"]),
    ("team.tls", &["auto", "disable", "prefer", "require"]),
];

/// Loads the defaults, then the file at `path`, then the environment
/// overrides read through `env`. An absent file means the defaults, unless
/// `must_exist` (the file was named explicitly, by `$DEJA_CONFIG`).
///
/// Every problem is reported with the file, the line and the full dotted key:
/// TOML syntax, unknown sections and keys, wrong types, values out of
/// [`BOUNDS`]. Keys specific to a harness plugin are checked later, against
/// the loaded plugins ([`Loaded::check_harness_keys`]).
pub fn load(
    path: &Path,
    must_exist: bool,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Loaded, ConfigError> {
    let text = match std::fs::metadata(path) {
        Ok(m) if m.is_file() => {
            Some(
                std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                    path: path.to_path_buf(),
                    source,
                })?,
            )
        }
        Ok(_) => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                source: std::io::Error::other("it is not a file"),
            })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if must_exist {
                return Err(ConfigError::Missing {
                    path: path.to_path_buf(),
                });
            }
            None
        }
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    build(path, text.as_deref(), env)
}

/// The defaults and the environment overrides alone, as if there were no
/// file at `path`: what diagnostics run with while the file is broken.
pub fn defaults(path: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<Loaded, ConfigError> {
    let mut loaded = build(path, None, env)?;
    loaded.file_exists = path.is_file();
    Ok(loaded)
}

fn build(
    path: &Path,
    text: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Loaded, ConfigError> {
    let defaults: Table =
        DEFAULT_TOML
            .parse()
            .map_err(|e: toml::de::Error| ConfigError::Invalid {
                path: PathBuf::from("<embedded default>"),
                line: None,
                message: e.message().to_string(),
            })?;
    let mut sources = BTreeMap::new();
    let mut merged = Table::new();
    merge(
        &mut merged,
        defaults.clone(),
        "",
        &Source::Default,
        &mut sources,
    );

    let invalid = |line: Option<usize>, message: String| ConfigError::Invalid {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut lines = BTreeMap::new();
    let mut file_harnesses = Vec::new();
    if let Some(text) = text {
        let user: Table = text.parse().map_err(|e: toml::de::Error| {
            invalid(
                e.span().map(|s| line_at(text, s.start)),
                format!("not valid TOML: {}", e.message().trim_end()),
            )
        })?;
        if let Ok(doc) = toml::de::DeTable::parse(text) {
            key_lines(doc.get_ref(), "", text, &mut lines);
        }
        check_shape(&user, &defaults)
            .map_err(|(key, message)| invalid(lines.get(&key).copied(), message))?;
        if let Some(Value::Table(h)) = user.get("harness") {
            file_harnesses = h.keys().cloned().collect();
        }
        merge(
            &mut merged,
            user,
            "",
            &Source::File(path.to_path_buf()),
            &mut sources,
        );
    }
    for (var, key) in ENV_OVERRIDES {
        if let Some(value) = env(var).filter(|v| !v.is_empty()) {
            set_dotted(&mut merged, key, Value::String(value));
            sources.insert((*key).to_string(), Source::Env(var));
        }
    }

    let config: Config = Value::Table(merged.clone())
        .try_into()
        .map_err(|e: toml::de::Error| invalid(None, e.message().to_string()))?;
    validate(&config).map_err(|(key, message)| invalid(lines.get(key).copied(), message))?;
    Ok(Loaded {
        config,
        path: path.to_path_buf(),
        file_exists: text.is_some(),
        sources,
        merged,
        lines,
        file_harnesses,
    })
}

/// The line (1-based) holding byte `offset` of `text`.
fn line_at(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Records the line of every key of `table` (recursively) under its dotted path.
fn key_lines(
    table: &toml::de::DeTable<'_>,
    prefix: &str,
    text: &str,
    lines: &mut BTreeMap<String, usize>,
) {
    for (key, value) in table.iter() {
        let dotted = if prefix.is_empty() {
            key.get_ref().to_string()
        } else {
            format!("{prefix}.{}", key.get_ref())
        };
        lines
            .entry(dotted.clone())
            .or_insert_with(|| line_at(text, key.span().start));
        if let toml::de::DeValue::Table(inner) = value.get_ref() {
            key_lines(inner, &dotted, text, lines);
        }
    }
}

/// What kind of TOML value `v` is, for messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "a string",
        Value::Integer(_) => "an integer",
        Value::Float(_) => "a decimal number",
        Value::Boolean(_) => "true or false",
        Value::Datetime(_) => "a date",
        Value::Array(_) => "a list",
        Value::Table(_) => "a table",
    }
}

fn backticked<'a>(items: impl Iterator<Item = &'a str>) -> String {
    items
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks the file's table against the shape of the defaults: known sections
/// and keys, the type of every value, the elements of lists, choices and
/// numeric bounds. Errors are (dotted key, message).
fn check_shape(user: &Table, defaults: &Table) -> Result<(), (String, String)> {
    for (section, value) in user {
        let Some(Value::Table(known)) = defaults.get(section) else {
            let sections = defaults
                .iter()
                .filter(|(_, v)| v.is_table())
                .map(|(k, _)| format!("[{k}]"))
                .collect::<Vec<_>>()
                .join(", ");
            let what = if value.is_table() {
                format!("unknown section `[{section}]`")
            } else {
                format!("unknown key `{section}`")
            };
            return Err((
                section.clone(),
                format!("{what}; the file has the sections {sections}"),
            ));
        };
        let Value::Table(table) = value else {
            return Err((
                section.clone(),
                format!(
                    "`{section}` must be a section (`[{section}]`), not {}",
                    kind(value)
                ),
            ));
        };
        if section == "harness" {
            for (name, h) in table {
                let dotted = format!("harness.{name}");
                let Value::Table(h) = h else {
                    return Err((
                        dotted.clone(),
                        format!(
                            "`{dotted}` must be a section (`[{dotted}]`), not {}",
                            kind(h)
                        ),
                    ));
                };
                for (key, v) in h {
                    let dotted = format!("harness.{name}.{key}");
                    match key.as_str() {
                        "enabled" => expect_kind(&dotted, v, &Value::Boolean(true))?,
                        "roots" | "exclude" => strings(&dotted, v)?,
                        _ => {} // the plugin's own keys, checked against it later
                    }
                }
            }
            continue;
        }
        for (key, v) in table {
            let dotted = format!("{section}.{key}");
            let Some(default) = known.get(key) else {
                return Err((
                    dotted.clone(),
                    format!(
                        "unknown key `{dotted}`; `[{section}]` accepts {}",
                        backticked(known.keys().map(String::as_str))
                    ),
                ));
            };
            expect_kind(&dotted, v, default)?;
            let decimal = match v {
                Value::Float(x) => Some(*x),
                Value::Integer(n) if default.is_float() => Some(*n as f64),
                _ => None,
            };
            if let Some(x) = decimal {
                if let Some((_, least, most)) = FLOAT_BOUNDS.iter().find(|(k, _, _)| *k == dotted) {
                    if !(*least..=*most).contains(&x) {
                        return Err((
                            dotted.clone(),
                            format!("`{dotted}` must be between {least} and {most}, not {x}"),
                        ));
                    }
                }
            }
            match v {
                Value::Integer(n) => {
                    if let Some((_, least, most)) = BOUNDS.iter().find(|(k, _, _)| *k == dotted) {
                        if !(*least..=*most).contains(n) {
                            return Err((
                                dotted.clone(),
                                format!("`{dotted}` must be between {least} and {most}, not {n}"),
                            ));
                        }
                    }
                }
                Value::String(s) => {
                    if let Some((_, choices)) = CHOICES.iter().find(|(k, _)| *k == dotted) {
                        if !choices.contains(&s.as_str()) {
                            return Err((
                                dotted.clone(),
                                format!(
                                    "`{dotted}` must be one of {}, not `{s}`",
                                    backticked(choices.iter().copied())
                                ),
                            ));
                        }
                    }
                }
                Value::Array(items) if dotted == "redact.patterns" => {
                    for item in items {
                        let ok = match item {
                            Value::Table(t) => {
                                t.len() == 2
                                    && matches!(t.get("name"), Some(Value::String(_)))
                                    && matches!(t.get("regex"), Some(Value::String(_)))
                            }
                            _ => false,
                        };
                        if !ok {
                            return Err((
                                dotted.clone(),
                                format!(
                                    "each of `{dotted}` must be {{ name = \"...\", regex = \"...\" }}, not {item}"
                                ),
                            ));
                        }
                    }
                }
                Value::Array(_) => strings(&dotted, v)?,
                _ => {}
            }
        }
    }
    Ok(())
}

/// `v` must be of the same kind as `default`.
fn expect_kind(dotted: &str, v: &Value, default: &Value) -> Result<(), (String, String)> {
    // A whole number is a decimal too (`min_similarity = 0`).
    if std::mem::discriminant(v) == std::mem::discriminant(default)
        || (v.is_integer() && default.is_float())
    {
        Ok(())
    } else {
        Err((
            dotted.to_string(),
            format!("`{dotted}` must be {}, not {}", kind(default), kind(v)),
        ))
    }
}

/// `v` must be a list of strings.
fn strings(dotted: &str, v: &Value) -> Result<(), (String, String)> {
    match v {
        Value::Array(items) if items.iter().all(Value::is_str) => Ok(()),
        _ => Err((
            dotted.to_string(),
            format!("`{dotted}` must be a list of strings, such as [\"~/notes\"]"),
        )),
    }
}

/// Bounds that depend on other keys. Errors are (dotted key, message).
fn validate(c: &Config) -> Result<(), (&'static str, String)> {
    let e = &c.embed;
    if e.overlap_tokens >= e.max_tokens / 2 {
        return Err((
            "embed.overlap_tokens",
            format!(
                "`embed.overlap_tokens` must be less than half of `embed.max_tokens` ({}), not {}",
                e.max_tokens, e.overlap_tokens
            ),
        ));
    }
    if e.context_tokens * 4 > e.max_tokens {
        return Err((
            "embed.context_tokens",
            format!(
                "`embed.context_tokens` must be at most a quarter of `embed.max_tokens` ({}), not {}",
                e.max_tokens, e.context_tokens
            ),
        ));
    }
    if e.batch_tokens < e.max_tokens {
        return Err((
            "embed.batch_tokens",
            format!(
                "`embed.batch_tokens` must be at least `embed.max_tokens` ({}), not {}",
                e.max_tokens, e.batch_tokens
            ),
        ));
    }
    Ok(())
}

fn merge(
    into: &mut Table,
    from: Table,
    prefix: &str,
    source: &Source,
    sources: &mut BTreeMap<String, Source>,
) {
    for (key, value) in from {
        let dotted = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        match (into.get_mut(&key), value) {
            (Some(Value::Table(existing)), Value::Table(new)) => {
                merge(existing, new, &dotted, source, sources);
            }
            (_, Value::Table(new)) => {
                let mut fresh = Table::new();
                merge(&mut fresh, new, &dotted, source, sources);
                into.insert(key, Value::Table(fresh));
            }
            (_, value) => {
                sources.insert(dotted, source.clone());
                into.insert(key, value);
            }
        }
    }
}

fn set_dotted(table: &mut Table, dotted: &str, value: Value) {
    let mut parts: Vec<&str> = dotted.split('.').collect();
    let Some(last) = parts.pop() else { return };
    let mut t = table;
    for p in parts {
        let entry = t
            .entry(p.to_string())
            .or_insert_with(|| Value::Table(Table::new()));
        if !entry.is_table() {
            *entry = Value::Table(Table::new());
        }
        match entry {
            Value::Table(inner) => t = inner,
            _ => return,
        }
    }
    t.insert(last.to_string(), value);
}

impl Loaded {
    /// Checks a harness section against the keys its plugin accepts.
    pub fn check_harness_keys(
        &self,
        harness: &str,
        plugin_keys: &[String],
    ) -> Result<(), ConfigError> {
        let Some(section) = self.config.harness.get(harness) else {
            return Ok(());
        };
        for key in section.extra.keys() {
            if !plugin_keys.iter().any(|k| k == key) {
                let dotted = format!("harness.{harness}.{key}");
                let accepted = COMMON_HARNESS_KEYS
                    .iter()
                    .copied()
                    .chain(plugin_keys.iter().map(String::as_str));
                return Err(ConfigError::Invalid {
                    path: self.path.clone(),
                    line: self.lines.get(&dotted).copied(),
                    message: format!(
                        "unknown key `{dotted}`; the {harness} reader accepts {}",
                        backticked(accepted)
                    ),
                });
            }
        }
        Ok(())
    }

    /// Checks that every `[harness.<name>]` section of the file names a
    /// harness that one of `known` (the loaded plugins' harnesses) reads.
    pub fn check_harness_names(&self, known: &[&str]) -> Result<(), ConfigError> {
        let mut known = known.to_vec();
        known.sort_unstable();
        for name in &self.file_harnesses {
            if known.contains(&name.as_str()) {
                continue;
            }
            let dotted = format!("harness.{name}");
            let mut message =
                format!("`[{dotted}]`: no loaded reader plugin reads harness `{name}`");
            if known.is_empty() {
                message.push_str(" (no reader plugin is loaded; see `deja plugins`)");
            } else {
                message.push_str(&format!(
                    " (the loaded readers are {})",
                    backticked(known.iter().copied())
                ));
            }
            if let Some(near) = known.iter().find(|k| near_miss(k, name)) {
                message.push_str(&format!("; did you mean `[harness.{near}]`?"));
            }
            return Err(ConfigError::Invalid {
                path: self.path.clone(),
                line: self.lines.get(&dotted).copied(),
                message,
            });
        }
        Ok(())
    }

    /// The effective configuration as TOML, each value followed by a comment
    /// naming its source.
    pub fn render_with_sources(&self) -> String {
        let mut out = String::new();
        render_table(&self.merged, "", &self.sources, &mut out);
        out
    }
}

fn render_table(t: &Table, prefix: &str, sources: &BTreeMap<String, Source>, out: &mut String) {
    let mut leaves = Vec::new();
    let mut tables = Vec::new();
    for (k, v) in t {
        match v {
            Value::Table(inner) => tables.push((k, inner)),
            _ => leaves.push((k, v)),
        }
    }
    if !leaves.is_empty() && !prefix.is_empty() {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!("[{prefix}]\n"));
    }
    for (k, v) in leaves {
        let dotted = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        let source = sources
            .get(&dotted)
            .map(|s| s.to_string())
            .unwrap_or_else(|| "default".into());
        let shown = match v {
            Value::String(url) if dotted == "team.url" => Value::String(hide_password(url)),
            v => v.clone(),
        };
        out.push_str(&format!("{} = {}  # {}\n", toml_key(k), shown, source));
    }
    for (k, inner) in tables {
        let p = if prefix.is_empty() {
            toml_key(k)
        } else {
            format!("{prefix}.{}", toml_key(k))
        };
        render_table(inner, &p, sources, out);
    }
}

/// A PostgreSQL connection string with every password in it replaced by
/// `***`: the `user:password@` part of a URL, `password=` query parameters
/// (`?password=x`, `&password=x`, in any case, percent-encoded or not), and
/// the `password` of a key=value string (`host=db password=x`, quoted or
/// not).
pub fn hide_password(url: &str) -> String {
    if let Some((scheme, rest)) = url.split_once("://") {
        let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(authority_end);
        let authority = match authority.rsplit_once('@') {
            Some((userinfo, host)) => match userinfo.split_once(':') {
                Some((user, _)) => format!("{user}:***@{host}"),
                None => authority.to_string(),
            },
            None => authority.to_string(),
        };
        let tail = match tail.split_once('?') {
            Some((path, query)) => {
                let params: Vec<String> = query
                    .split('&')
                    .map(|p| match p.split_once('=') {
                        Some((k, _)) if is_password_key(k) => format!("{k}=***"),
                        _ => p.to_string(),
                    })
                    .collect();
                format!("{path}?{}", params.join("&"))
            }
            None => tail.to_string(),
        };
        return format!("{scheme}://{authority}{tail}");
    }
    hide_keyword_password(url)
}

/// Whether a query or key=value key names the password (`password`, in any
/// case, possibly percent-encoded).
fn is_password_key(key: &str) -> bool {
    let bytes = key.trim().as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b, hex) {
            (b'%', Some(v)) => {
                decoded.push(v);
                i += 3;
            }
            _ => {
                decoded.push(b);
                i += 1;
            }
        }
    }
    decoded.eq_ignore_ascii_case(b"password")
}

/// The password of a key=value connection string (`host=db password=x`,
/// `password = 'x y'`, with `\'` escapes) replaced by `***`.
fn hide_keyword_password(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        // A key: up to `=` or a space.
        let start = i;
        while i < chars.len() && chars[i] != '=' && !chars[i].is_whitespace() {
            i += 1;
        }
        let key: String = chars[start..i].iter().collect();
        out.push_str(&key);
        // Spaces and the `=`.
        let mut j = i;
        while j < chars.len() && chars[j].is_whitespace() {
            j += 1;
        }
        if j >= chars.len() || chars[j] != '=' {
            // Not a key=value pair here: copy the spaces and go on.
            out.extend(&chars[i..j]);
            i = j;
            if i == start {
                if let Some(c) = chars.get(i) {
                    out.push(*c);
                }
                i += 1;
            }
            continue;
        }
        out.extend(&chars[i..=j]);
        i = j + 1;
        while i < chars.len() && chars[i].is_whitespace() {
            out.push(chars[i]);
            i += 1;
        }
        // The value: quoted (with backslash escapes) or up to a space.
        let value_start = i;
        if chars.get(i) == Some(&'\'') {
            i += 1;
            while i < chars.len() && chars[i] != '\'' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i = (i + 1).min(chars.len());
        } else {
            while i < chars.len() && !chars[i].is_whitespace() {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i = i.min(chars.len());
        }
        if is_password_key(&key) {
            out.push_str("***");
        } else {
            out.extend(&chars[value_start..i]);
        }
    }
    out
}

fn toml_key(k: &str) -> String {
    if !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        k.to_string()
    } else {
        format!("{k:?}")
    }
}

/// Whether `a` and `b` differ by at most two single-character edits (a typo).
fn near_miss(a: &str, b: &str) -> bool {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut row = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            row.push((prev[j] + cost).min(prev[j + 1] + 1).min(row[j] + 1));
        }
        prev = row;
    }
    prev.last().is_some_and(|&d| d <= 2)
}

/// A configured path with a leading `~` (alone or as `~/`) replaced by
/// `home`; other paths are returned as written.
pub fn expand_home(path: &str, home: &Path) -> PathBuf {
    if path == "~" {
        home.to_path_buf()
    } else if let Some(rest) = path.strip_prefix("~/") {
        home.join(rest)
    } else {
        PathBuf::from(path)
    }
}

#[cfg(test)]
mod password_tests {
    use super::hide_password;

    #[test]
    fn passwords_in_urls_are_hidden() {
        assert_eq!(
            hide_password("postgres://ana:s3cret@db:5432/team"),
            "postgres://ana:***@db:5432/team"
        );
        assert_eq!(
            hide_password("postgres://ana@db/team"),
            "postgres://ana@db/team"
        );
        assert_eq!(hide_password(""), "");
    }

    #[test]
    fn passwords_in_query_parameters_are_hidden() {
        assert_eq!(
            hide_password("postgres://ana@db/team?password=s3cret"),
            "postgres://ana@db/team?password=***"
        );
        assert_eq!(
            hide_password(
                "postgresql://ana@db/team?sslmode=require&password=s3cret&application_name=x"
            ),
            "postgresql://ana@db/team?sslmode=require&password=***&application_name=x"
        );
        assert_eq!(
            hide_password("postgres://db?user=ana&PassWord=s3cret"),
            "postgres://db?user=ana&PassWord=***"
        );
        assert_eq!(
            hide_password("postgres://db/team?pass%77ord=s3cret"),
            "postgres://db/team?pass%77ord=***"
        );
        // Both forms at once.
        let both = hide_password("postgres://ana:one@db/team?password=two");
        assert!(!both.contains("one") && !both.contains("two"), "{both}");
        // A query without a password is left as it is.
        assert_eq!(
            hide_password("postgres://ana@db/team?sslmode=require"),
            "postgres://ana@db/team?sslmode=require"
        );
    }

    #[test]
    fn passwords_in_key_value_strings_are_hidden() {
        assert_eq!(
            hide_password("host=db user=ana password=s3cret dbname=team"),
            "host=db user=ana password=*** dbname=team"
        );
        assert_eq!(
            hide_password("host=db password = 's3 cret' dbname=team"),
            "host=db password = *** dbname=team"
        );
        assert_eq!(
            hide_password("password='it\\'s secret' host=db"),
            "password=*** host=db"
        );
        assert_eq!(
            hide_password("host=db password=s3cret"),
            "host=db password=***"
        );
        assert_eq!(hide_password("host=db user=ana"), "host=db user=ana");
        for shown in [
            hide_password("host=db password=s3cret"),
            hide_password("PASSWORD=s3cret host=db"),
        ] {
            assert!(!shown.contains("s3cret"), "{shown}");
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn a_default_harness_section_is_an_empty_one() {
        let empty: Harness = toml::from_str("").unwrap();
        let default = Harness::default();
        assert!(default.enabled);
        assert_eq!(empty.enabled, default.enabled);
        assert_eq!(empty.to_table(), default.to_table());
    }

    #[test]
    fn defaults_load_without_a_file() {
        let l = load(Path::new("/nonexistent/deja.toml"), false, &no_env).unwrap();
        assert!(!l.file_exists);
        assert_eq!(l.config.recall.mode, Mode::Hybrid);
        assert_eq!(l.config.index.max_file_bytes, 256 * 1024 * 1024);
        assert!(l.config.harness["aider"].enabled);
        assert_eq!(l.sources["recall.limit"], Source::Default);
    }

    #[test]
    fn file_overrides_and_provenance() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "[recall]\nlimit = 3\n[harness.aider]\ntimezone = \"UTC\"\n[harness.other]\nroots = [\"/x\"]\n",
        )
        .unwrap();
        let env = |k: &str| (k == "DEJA_HOME").then(|| "/data".to_string());
        let l = load(&path, false, &env).unwrap();
        assert_eq!(l.config.recall.limit, 3);
        assert_eq!(l.sources["recall.limit"], Source::File(path.clone()));
        assert_eq!(l.config.store.dir, "/data");
        assert_eq!(l.sources["store.dir"], Source::Env("DEJA_HOME"));
        assert_eq!(l.config.harness["other"].roots, vec!["/x".to_string()]);
        assert!(l.config.harness["other"].enabled);
        let text = l.render_with_sources();
        assert!(text.contains("limit = 3  # "), "{text}");
        assert!(text.contains("dir = \"/data\"  # $DEJA_HOME"), "{text}");
        // The rendering is itself valid TOML.
        let _: Table = text.parse().unwrap();
    }

    #[test]
    fn unknown_keys_name_the_key_and_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[recall]\nlimt = 3\n").unwrap();
        let err = load(&path, false, &no_env).unwrap_err().to_string();
        assert!(err.contains("limt"), "{err}");
        assert!(err.contains(&path.display().to_string()), "{err}");
    }

    #[test]
    fn bad_values_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[recall]\nmode = \"fuzzy\"\n").unwrap();
        let err = load(&path, false, &no_env).unwrap_err().to_string();
        assert!(err.contains("fuzzy"), "{err}");
        std::fs::write(&path, "[embed]\nbatch_size = 0\n").unwrap();
        let err = load(&path, false, &no_env).unwrap_err().to_string();
        assert!(err.contains("embed.batch_size"), "{err}");
    }

    #[test]
    fn harness_keys_are_checked_against_the_plugin() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[harness.aider]\ntimezon = \"UTC\"\n").unwrap();
        let l = load(&path, false, &no_env).unwrap();
        let err = l
            .check_harness_keys("aider", &["timezone".to_string()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("harness.aider.timezon"), "{err}");
        assert!(err.contains("`timezone`"), "{err}");
        assert!(err.contains("line 2"), "{err}");
        assert!(l.check_harness_keys("gemini", &[]).is_ok());
    }

    /// The error `load` gives for a file holding `toml`.
    fn error_for(toml: &str) -> (ConfigError, PathBuf, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, toml).unwrap();
        let err = load(&path, false, &no_env).unwrap_err();
        (err, path, dir)
    }

    fn line_of(e: &ConfigError) -> Option<usize> {
        match e {
            ConfigError::Invalid { line, .. } => *line,
            _ => None,
        }
    }

    #[test]
    fn errors_name_the_file_the_line_and_the_full_key() {
        let (e, path, _d) = error_for("# mine\n[recall]\nmode = \"lexical\"\nlimt = 3\n");
        let msg = e.to_string();
        assert_eq!(line_of(&e), Some(4), "{msg}");
        assert!(msg.contains(&path.display().to_string()), "{msg}");
        assert!(msg.contains("line 4"), "{msg}");
        assert!(msg.contains("`recall.limt`"), "{msg}");
        assert!(msg.contains("`limit`"), "{msg}");

        // Invalid TOML: the line of the syntax error.
        let (e, _, _d) = error_for("[recall]\nlimit = 3\nmode = \n");
        assert_eq!(line_of(&e), Some(3), "{e}");
        assert!(e.to_string().contains("not valid TOML"), "{e}");

        // Wrong types, with the full key.
        let (e, _, _d) = error_for("[index]\n\nlock_wait_secs = \"ten\"\n");
        assert_eq!(line_of(&e), Some(3), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains("`index.lock_wait_secs` must be an integer, not a string"),
            "{msg}"
        );
        let (e, _, _d) = error_for("[harness.aider]\nroots = \"/x\"\n");
        assert!(
            e.to_string()
                .contains("`harness.aider.roots` must be a list of strings"),
            "{e}"
        );
        let (e, _, _d) = error_for("[recall]\nmode = \"fuzzy\"\n");
        let msg = e.to_string();
        assert!(
            msg.contains("`recall.mode` must be one of") && msg.contains("fuzzy"),
            "{msg}"
        );
        assert_eq!(line_of(&e), Some(2));
        let (e, _, _d) = error_for("[redact]\npatterns = [{ name = \"x\" }]\n");
        assert!(e.to_string().contains("`redact.patterns`"), "{e}");

        // Unknown sections and top-level keys.
        let (e, _, _d) = error_for("[recal]\nlimit = 3\n");
        assert_eq!(line_of(&e), Some(1));
        assert!(e.to_string().contains("unknown section `[recal]`"), "{e}");
        assert!(e.to_string().contains("[recall]"), "{e}");
        let (e, _, _d) = error_for("limit = 3\n");
        assert!(e.to_string().contains("unknown key `limit`"), "{e}");
        let (e, _, _d) = error_for("recall = 3\n");
        assert!(e.to_string().contains("`recall` must be a section"), "{e}");
    }

    #[test]
    fn decimal_keys_are_bounded_and_take_whole_numbers() {
        for (key, least, most) in FLOAT_BOUNDS {
            let (section, name) = key.split_once('.').unwrap();
            for bad in [least - 0.5, most + 0.5] {
                let (e, _, _d) = error_for(&format!("[{section}]\n{name} = {bad:?}\n"));
                let msg = e.to_string();
                assert!(
                    msg.contains(&format!("`{key}` must be between {least} and {most}")),
                    "{msg}"
                );
                assert_eq!(line_of(&e), Some(2), "{msg}");
            }
            let doc = documentation(section, name);
            assert!(
                doc.contains(&format!("{least} to {most}")),
                "the documentation of `{key}` does not say `{least} to {most}`: {doc}"
            );
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        for (text, want) in [("0", 0.0), ("1", 1.0), ("0.25", 0.25)] {
            std::fs::write(&path, format!("[recall]\nmin_similarity = {text}\n")).unwrap();
            let l = load(&path, false, &no_env).unwrap();
            assert_eq!(l.config.recall.min_similarity, want, "{text}");
        }
        let (e, _, _d) = error_for("[recall]\nmin_similarity = 2\n");
        assert!(e.to_string().contains("between 0 and 1, not 2"), "{e}");
        let (e, _, _d) = error_for("[recall]\nmin_similarity = \"high\"\n");
        assert!(e.to_string().contains("must be a decimal number"), "{e}");
    }

    #[test]
    fn numeric_keys_are_bounded() {
        for (key, least, most) in BOUNDS {
            let (section, name) = key.split_once('.').unwrap();
            for bad in [least - 1, most + 1] {
                let (e, _, _d) = error_for(&format!("[{section}]\n{name} = {bad}\n"));
                let msg = e.to_string();
                assert!(
                    msg.contains(&format!(
                        "`{key}` must be between {least} and {most}, not {bad}"
                    )),
                    "{msg}"
                );
                assert_eq!(line_of(&e), Some(2), "{msg}");
            }
        }
        // Every integer key of the defaults is bounded, its default within
        // bounds, and its documentation states the bounds.
        let defaults: Table = DEFAULT_TOML.parse().unwrap();
        let mut integers = Vec::new();
        for (section, t) in &defaults {
            for (k, v) in t.as_table().unwrap() {
                if let Value::Integer(n) = v {
                    integers.push((format!("{section}.{k}"), *n));
                }
            }
        }
        assert_eq!(integers.len(), BOUNDS.len(), "{integers:?}");
        for (key, n) in integers {
            let (_, least, most) = BOUNDS.iter().find(|(k, _, _)| *k == key).unwrap();
            assert!((*least..=*most).contains(&n), "{key}");
            let (section, name) = key.split_once('.').unwrap();
            let doc = documentation(section, name);
            assert!(
                doc.contains(&format!("{least} to {most}")),
                "the documentation of `{key}` does not say `{least} to {most}`: {doc}"
            );
        }
        // Keys bounded by others.
        let (e, _, _d) = error_for("[embed]\nmax_tokens = 64\noverlap_tokens = 32\n");
        assert!(
            e.to_string()
                .contains("`embed.overlap_tokens` must be less than half"),
            "{e}"
        );
        assert_eq!(line_of(&e), Some(3));
    }

    #[test]
    fn the_readme_states_every_bound() {
        let readme = include_str!("../../README.md").replace('\n', " ");
        for (key, least, most) in BOUNDS {
            assert!(readme.contains(&format!("`{key}`")), "README lacks `{key}`");
            assert!(
                readme.contains(&format!("{least} to {most}")),
                "README lacks the bounds of `{key}`: {least} to {most}"
            );
        }
    }

    /// The comment lines right above `key` in `[section]` of the default file.
    fn documentation(section: &str, key: &str) -> String {
        let mut in_section = false;
        let mut comment = Vec::new();
        for line in DEFAULT_TOML.lines() {
            let t = line.trim();
            if t.starts_with('[') {
                in_section = t == format!("[{section}]");
                comment.clear();
            } else if let Some(c) = t.strip_prefix('#') {
                comment.push(c.trim().to_string());
            } else if in_section && t.starts_with(&format!("{key} =")) {
                return comment.join(" ");
            } else {
                comment.clear();
            }
        }
        String::new()
    }

    #[test]
    fn a_named_file_must_exist() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing.toml");
        // Not named: a missing file means the defaults.
        let d = load(&path, false, &no_env).unwrap();
        assert!(!d.file_exists);
        assert_eq!(d.config.recall.limit, 10);
        let e = load(&path, true, &no_env).unwrap_err().to_string();
        assert!(
            e.contains("missing.toml") && e.contains("does not exist"),
            "{e}"
        );
        assert!(e.contains("DEJA_CONFIG"), "{e}");
        // A folder is not a config file.
        let e = load(dir.path(), false, &no_env).unwrap_err().to_string();
        assert!(e.contains("not a file"), "{e}");
        // The defaults stand in for a broken file.
        std::fs::write(&path, "[recall\n").unwrap();
        assert!(load(&path, false, &no_env).is_err());
        let d = defaults(&path, &no_env).unwrap();
        assert!(d.file_exists);
        assert_eq!(d.config.recall.limit, 10);
    }

    #[test]
    fn harness_sections_must_name_a_loaded_reader() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "[recall]\nlimit = 3\n\n[harness.gemni]\nenabled = false\n",
        )
        .unwrap();
        let l = load(&path, false, &no_env).unwrap();
        assert_eq!(l.file_harnesses, vec!["gemni".to_string()]);
        let e = l.check_harness_names(&["aider", "gemini"]).unwrap_err();
        assert_eq!(line_of(&e), Some(4));
        let msg = e.to_string();
        assert!(msg.contains("`[harness.gemni]`"), "{msg}");
        assert!(msg.contains("did you mean `[harness.gemini]`"), "{msg}");
        assert!(msg.contains("`aider`, `gemini`"), "{msg}");
        assert!(l.check_harness_names(&["gemni"]).is_ok());
        // The default file's own sections are not the user's to explain.
        let l = load(Path::new("/nonexistent/deja.toml"), false, &no_env).unwrap();
        assert!(l.check_harness_names(&[]).is_ok());
    }

    #[test]
    fn every_default_key_is_documented() {
        // Each key line in the default file is preceded by a comment line
        // (directly, or as part of a block of keys under one comment).
        let mut documented = false;
        for line in DEFAULT_TOML.lines() {
            let t = line.trim();
            if t.starts_with('#') {
                documented = true;
            } else if t.starts_with('[') {
                documented = t.starts_with("[harness.");
            } else if t.is_empty() {
                documented = false;
            } else {
                assert!(documented, "undocumented key: {t}");
            }
        }
    }
}
