//! Checking a configuration: the shape of the user's file against the
//! defaults (unknown keys with near misses, wrong kinds), and the bounds and
//! choices of every value, each error naming the key.

use super::*;

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
    ("embed.max_windows", 0, 100_000),
    ("embed.first_windows", 0, 100_000),
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
    ("context.note_max_bytes", 256, 8000),
    ("team.connect_timeout_secs", 1, 600),
    ("team.pull_max_messages", 1, 10_000_000),
    ("team.pull_max_message_bytes", 1, 1_073_741_824),
    ("team.pull_max_session_bytes", 1, 17_179_869_184),
];

/// The bounds of every decimal key: (dotted key, least, most). An integer
/// is accepted where a decimal is expected (`0`, `1`).
pub const FLOAT_BOUNDS: &[(&str, f64, f64)] = &[
    ("recall.min_similarity", 0.0, 1.0),
    ("recall.min_score", 0.0, 10.0),
];

/// The values a string key accepts, where it accepts only some.
pub(crate) const CHOICES: &[(&str, &[&str])] = &[
    ("embed.model", &["auto", "minilm", "multilingual"]),
    ("recall.mode", &["hybrid", "semantic", "lexical"]),
    ("team.tls", &["auto", "disable", "prefer", "require"]),
];

/// What kind of TOML value `v` is, for messages.
pub(crate) fn kind(v: &Value) -> &'static str {
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

pub(crate) fn backticked<'a>(items: impl Iterator<Item = &'a str>) -> String {
    items
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks the file's table against the shape of the defaults: known sections
/// and keys, the type of every value, the elements of lists, choices and
/// numeric bounds. Errors are (dotted key, message).
pub(crate) fn check_shape(user: &Table, defaults: &Table) -> Result<(), (String, String)> {
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
pub(crate) fn expect_kind(
    dotted: &str,
    v: &Value,
    default: &Value,
) -> Result<(), (String, String)> {
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
pub(crate) fn strings(dotted: &str, v: &Value) -> Result<(), (String, String)> {
    match v {
        Value::Array(items) if items.iter().all(Value::is_str) => Ok(()),
        _ => Err((
            dotted.to_string(),
            format!("`{dotted}` must be a list of strings, such as [\"~/notes\"]"),
        )),
    }
}

/// Bounds that depend on other keys. Errors are (dotted key, message).
pub(crate) fn validate(c: &Config) -> Result<(), (&'static str, String)> {
    if let Some(bad) = c
        .context
        .inject_off
        .iter()
        .find(|a| !crate::schema::HOOK_AGENTS.contains(&a.as_str()))
    {
        return Err((
            "context.inject_off",
            format!(
                "`context.inject_off` names agents, one of {}, not `{bad}`",
                backticked(crate::schema::HOOK_AGENTS.iter().copied())
            ),
        ));
    }
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

/// Whether `a` and `b` differ by at most two single-character edits (a typo).
pub(crate) fn near_miss(a: &str, b: &str) -> bool {
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
