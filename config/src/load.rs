//! Loading a configuration: the defaults, the user's file layered on top,
//! environment overrides, where every value came from and on which line of
//! the file each key is written.

use super::*;

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

pub(crate) fn build(
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
pub(crate) fn line_at(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Records the line of every key of `table` (recursively) under its dotted path.
pub(crate) fn key_lines(
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

pub(crate) fn merge(
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

pub(crate) fn set_dotted(table: &mut Table, dotted: &str, value: Value) {
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
