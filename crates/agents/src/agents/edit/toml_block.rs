//! deja's block of tables appended to a TOML file: added, found again when
//! an earlier deja wrote it otherwise, and taken out.

use std::path::Path;

use anyhow::{bail, Result};

/// The TOML file's text with deja's block appended; `None` when it is there.
pub(super) fn toml_with(
    file: &Path,
    text: &str,
    table: &[&str],
    block: &str,
) -> Result<Option<String>> {
    if text.contains(block) {
        return Ok(None);
    }
    // An earlier deja's block (another path, other variables) is replaced.
    if let Some((start, end)) = block_span(text, block, table) {
        let out = format!("{}{block}{}", &text[..start], &text[end..]);
        toml::from_str::<toml::Table>(&out).map_err(|e| {
            anyhow::anyhow!(
                "`{}`: replacing deja's `[{}]` would make it invalid TOML ({}); setup leaves it alone",
                file.display(),
                table.join("."),
                e.message()
            )
        })?;
        return Ok(Some(out));
    }
    let parsed: toml::Table = toml::from_str(text).map_err(|e| {
        anyhow::anyhow!(
            "`{}` is not TOML setup can read ({}); setup leaves it alone",
            file.display(),
            e.message()
        )
    })?;
    let mut at = Some(&parsed);
    let mut found = false;
    for (i, k) in table.iter().enumerate() {
        match at.and_then(|t| t.get(*k)) {
            Some(toml::Value::Table(t)) => {
                at = Some(t);
                found = i + 1 == table.len();
            }
            Some(_) if i + 1 == table.len() => found = true,
            _ => break,
        }
    }
    if found {
        bail!(
            "`{}` already has `[{}]`, not written by this deja setup; setup leaves it alone\nhint: remove that table (or the line deja would replace), then run setup again",
            file.display(),
            table.join(".")
        );
    }
    let mut out = text.to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(block);
    toml::from_str::<toml::Table>(&out).map_err(|e| {
        anyhow::anyhow!(
            "`{}`: adding `[{}]` would make it invalid TOML ({}); setup leaves it alone",
            file.display(),
            table.join("."),
            e.message()
        )
    })?;
    Ok(Some(out))
}

/// Where a block that starts with `block`'s first line (the comment naming
/// deja) is in `text`: from that line to the next blank line, the next
/// table that is not `table` or below it, or the end.
fn block_span(text: &str, block: &str, table: &[&str]) -> Option<(usize, usize)> {
    let marker = block.lines().next()?;
    let name = table.join(".");
    let mut offset = 0;
    let mut start = None;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        match start {
            None if bare == marker => start = Some(offset),
            None => {}
            Some(s) => {
                let header = bare.trim_start().starts_with('[');
                let own = bare
                    .trim_start()
                    .trim_start_matches('[')
                    .trim_end_matches(']');
                let own = own == name || own.starts_with(&format!("{name}."));
                if bare.trim().is_empty() || (header && !own) {
                    return Some((s, offset));
                }
            }
        }
        offset += line.len();
    }
    start.map(|s| (s, text.len()))
}

/// The TOML file's text without deja's block (and the blank line before it).
pub(super) fn toml_without(text: &str, block: &str, table: &[&str]) -> Option<String> {
    let (at, end) = match text.find(block) {
        Some(at) => (at, at + block.len()),
        None => block_span(text, block, table)?,
    };
    let mut start = at;
    if text[..start].ends_with("\n\n") {
        start -= 1;
    }
    Some(format!("{}{}", &text[..start], &text[end..]))
}
