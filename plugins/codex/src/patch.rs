//! The files an `apply_patch` patch touches. Codex's patch format names each
//! file on a header line: `*** Add File: <path>`, `*** Update File: <path>`,
//! `*** Delete File: <path>`, and `*** Move to: <path>` for a rename.

use std::collections::HashSet;

/// The header prefixes that name a file the patch writes.
const HEADERS: &[&str] = &[
    "*** Add File: ",
    "*** Update File: ",
    "*** Delete File: ",
    "*** Move to: ",
];

/// The paths a patch adds, updates, deletes or moves to, in order, each once.
pub fn files(patch: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for line in patch.lines() {
        let line = line.trim_end();
        let Some(path) = HEADERS.iter().find_map(|h| line.strip_prefix(h)) else {
            continue;
        };
        let path = path.trim();
        if !path.is_empty() && seen.insert(path) {
            found.push(path.to_string());
        }
    }
    found
}

/// The patch a shell command applies (`apply_patch <<'EOF' ... EOF`, or
/// argv `["apply_patch", "<patch>"]`), when the command is one.
pub fn in_command(line: &str) -> Option<&str> {
    let trimmed = line.trim_start();
    let rest = trimmed
        .strip_prefix("apply_patch")
        .or_else(|| trimmed.strip_prefix("applypatch"))?;
    let starts_word =
        rest.starts_with(|c: char| c.is_whitespace() || c == '<' || c == '\'' || c == '"');
    (starts_word && rest.contains("*** Begin Patch")).then_some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_kind_of_file_header_once() {
        let patch = "*** Begin Patch\n*** Add File: a.py\n+x\n*** Update File: src/b.rs\n*** Move to: src/c.rs\n@@\n-a\n+b\n*** Delete File: old.txt\n*** Update File: src/b.rs\n*** End Patch\n";
        assert_eq!(files(patch), ["a.py", "src/b.rs", "src/c.rs", "old.txt"]);
        assert!(files("+*** Add File: quoted.rs\n").is_empty());
    }

    #[test]
    fn recognizes_a_patch_applied_through_the_shell() {
        let line = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\nEOF";
        assert_eq!(files(in_command(line).unwrap()), ["a"]);
        assert_eq!(in_command("apply_patcher x"), None);
        assert_eq!(in_command("echo apply_patch"), None);
    }
}
