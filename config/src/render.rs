//! Showing a configuration: the effective values with their sources, and
//! passwords masked in every form a connection string takes.

use super::*;

pub(crate) fn render_table(
    t: &Table,
    prefix: &str,
    sources: &BTreeMap<String, Source>,
    out: &mut String,
) {
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
pub(crate) fn is_password_key(key: &str) -> bool {
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
pub(crate) fn hide_keyword_password(text: &str) -> String {
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

pub(crate) fn toml_key(k: &str) -> String {
    if !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        k.to_string()
    } else {
        format!("{k:?}")
    }
}
