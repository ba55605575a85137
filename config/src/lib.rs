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

/// Errors reading or validating the configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config file `{path}`: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid TOML, or a key is unknown or has the wrong type.
    #[error("invalid config file `{path}`: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the key.
        message: String,
    },
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
}

/// `[context]`: the project digest agents get when a session starts.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Context {
    /// Most bytes of a digest.
    pub max_bytes: usize,
    /// Whether `deja aider` passes the digest to aider as a read-only file.
    pub aider: bool,
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

/// `[plugins]`: where else to load plugins from.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plugins {
    /// Extra plugin files or folders.
    pub paths: Vec<String>,
}

/// `[harness.<name>]`: one reader's settings.
#[derive(Debug, Clone, Deserialize, Default)]
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
}

/// Environment overrides applied after the file: (variable, dotted key).
pub const ENV_OVERRIDES: &[(&str, &str)] = &[("DEJA_HOME", "store.dir")];

/// Loads the defaults, then the file at `path` if it exists, then the
/// environment overrides read through `env`.
pub fn load(path: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<Loaded, ConfigError> {
    let defaults: Table =
        DEFAULT_TOML
            .parse()
            .map_err(|e: toml::de::Error| ConfigError::Invalid {
                path: PathBuf::from("<embedded default>"),
                message: e.to_string(),
            })?;
    let mut sources = BTreeMap::new();
    let mut merged = Table::new();
    merge(&mut merged, defaults, "", &Source::Default, &mut sources);

    let file_exists = path.is_file();
    if file_exists {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let user: Table = text
            .parse()
            .map_err(|e: toml::de::Error| ConfigError::Invalid {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
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

    let config: Config =
        Value::Table(merged.clone())
            .try_into()
            .map_err(|e: toml::de::Error| ConfigError::Invalid {
                path: path.to_path_buf(),
                message: e.message().to_string(),
            })?;
    validate(&config).map_err(|message| ConfigError::Invalid {
        path: path.to_path_buf(),
        message,
    })?;
    Ok(Loaded {
        config,
        path: path.to_path_buf(),
        file_exists,
        sources,
        merged,
    })
}

fn validate(c: &Config) -> Result<(), String> {
    if c.embed.max_tokens < 8 {
        return Err("`embed.max_tokens` must be at least 8".into());
    }
    if c.embed.overlap_tokens >= c.embed.max_tokens / 2 {
        return Err("`embed.overlap_tokens` must be less than half of `embed.max_tokens`".into());
    }
    if c.embed.context_tokens * 4 > c.embed.max_tokens {
        return Err(
            "`embed.context_tokens` must be at most a quarter of `embed.max_tokens`".into(),
        );
    }
    if c.embed.batch_size == 0 {
        return Err("`embed.batch_size` must be at least 1".into());
    }
    if c.embed.batch_tokens < c.embed.max_tokens {
        return Err("`embed.batch_tokens` must be at least `embed.max_tokens`".into());
    }
    if c.recall.limit == 0 {
        return Err("`recall.limit` must be at least 1".into());
    }
    if !(1..=MCP_MAX_LIMIT).contains(&c.mcp.limit) {
        return Err(format!("`mcp.limit` must be between 1 and {MCP_MAX_LIMIT}"));
    }
    if !(256..=1_000_000).contains(&c.context.max_bytes) {
        return Err("`context.max_bytes` must be between 256 and 1000000".into());
    }
    if c.mcp.per_session == 0 {
        return Err("`mcp.per_session` must be at least 1".into());
    }
    if c.mcp.max_answer_bytes < MCP_MIN_ANSWER_BYTES {
        return Err(format!(
            "`mcp.max_answer_bytes` must be at least {MCP_MIN_ANSWER_BYTES}"
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
                let mut accepted: Vec<String> =
                    COMMON_HARNESS_KEYS.iter().map(|k| k.to_string()).collect();
                accepted.extend(plugin_keys.iter().cloned());
                let source = self
                    .sources
                    .get(&format!("harness.{harness}.{key}"))
                    .map(|s| s.to_string())
                    .unwrap_or_else(|| self.path.display().to_string());
                return Err(ConfigError::Invalid {
                    path: PathBuf::from(source),
                    message: format!(
                        "unknown key `harness.{harness}.{key}`; the {harness} reader accepts {}",
                        accepted
                            .iter()
                            .map(|k| format!("`{k}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                });
            }
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
        out.push_str(&format!("{} = {}  # {}\n", toml_key(k), v, source));
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
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn defaults_load_without_a_file() {
        let l = load(Path::new("/nonexistent/deja.toml"), &no_env).unwrap();
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
        let l = load(&path, &env).unwrap();
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
        let err = load(&path, &no_env).unwrap_err().to_string();
        assert!(err.contains("limt"), "{err}");
        assert!(err.contains(&path.display().to_string()), "{err}");
    }

    #[test]
    fn bad_values_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[recall]\nmode = \"fuzzy\"\n").unwrap();
        let err = load(&path, &no_env).unwrap_err().to_string();
        assert!(err.contains("fuzzy"), "{err}");
        std::fs::write(&path, "[embed]\nbatch_size = 0\n").unwrap();
        let err = load(&path, &no_env).unwrap_err().to_string();
        assert!(err.contains("embed.batch_size"), "{err}");
    }

    #[test]
    fn harness_keys_are_checked_against_the_plugin() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[harness.aider]\ntimezon = \"UTC\"\n").unwrap();
        let l = load(&path, &no_env).unwrap();
        let err = l
            .check_harness_keys("aider", &["timezone".to_string()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("harness.aider.timezon"), "{err}");
        assert!(err.contains("`timezone`"), "{err}");
        assert!(l.check_harness_keys("gemini", &[]).is_ok());
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
