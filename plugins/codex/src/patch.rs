//! The files an `apply_patch` patch touches. Codex's patch format names each
//! file on a header line: `*** Add File: <path>`, `*** Update File: <path>`,
//! `*** Delete File: <path>`, and `*** Move to: <path>` for a rename; the
//! lines a file's hunks add start with `+`.

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

/// The paths a patch writes, as [`files`] gives them, each with what the
/// patch wrote into it: every run of consecutive added (`+`) lines, one part
/// each ([`deja_plugin_api::join_edit_parts`]); none for a file it deletes
/// or only renames, or whose hunks only remove lines.
pub fn written(patch: &str) -> Vec<(String, Option<String>)> {
    let paths = files(patch);
    let mut parts: Vec<Vec<String>> = vec![Vec::new(); paths.len()];
    let mut current: Option<usize> = None;
    let mut run: Option<String> = None;
    let close = |run: &mut Option<String>, current: Option<usize>, parts: &mut Vec<Vec<String>>| {
        if let (Some(text), Some(slot)) = (run.take(), current.and_then(|i| parts.get_mut(i))) {
            slot.push(text);
        }
    };
    for line in patch.lines() {
        let header = line.trim_end();
        if let Some(path) = HEADERS.iter().find_map(|h| header.strip_prefix(h)) {
            close(&mut run, current, &mut parts);
            let path = path.trim();
            current = paths.iter().position(|p| p == path);
            if header.starts_with("*** Delete File: ") {
                current = None;
            }
            continue;
        }
        if header.starts_with("*** ") {
            close(&mut run, current, &mut parts);
            if header == "*** End Patch" {
                current = None;
            }
            continue;
        }
        match line.strip_prefix('+') {
            Some(added) if current.is_some() => {
                let text = run.get_or_insert_with(String::new);
                text.push_str(added);
                text.push('\n');
            }
            _ => close(&mut run, current, &mut parts),
        }
    }
    close(&mut run, current, &mut parts);
    paths
        .into_iter()
        .zip(parts)
        .map(|(path, parts)| (path, deja_plugin_api::join_edit_parts(parts)))
        .collect()
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
    fn each_file_keeps_the_runs_of_lines_its_hunks_add() {
        let patch = "*** Begin Patch\n*** Add File: a.py\n+x = 1\n+y = 2\n*** Update File: src/b.rs\n*** Move to: src/c.rs\n@@ fn f\n-a\n+b\n+c\n ctx\n+d\n*** Delete File: old.txt\n*** Update File: d.rs\n@@\n-gone\n*** End Patch\n";
        assert_eq!(
            written(patch),
            [
                ("a.py".to_string(), Some("x = 1\ny = 2\n".to_string())),
                ("src/b.rs".to_string(), None),
                (
                    "src/c.rs".to_string(),
                    Some("b\nc\n\n\u{1e}\nd\n".to_string())
                ),
                ("old.txt".to_string(), None),
                ("d.rs".to_string(), None),
            ]
        );
    }

    #[test]
    fn recognizes_a_patch_applied_through_the_shell() {
        let line = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\nEOF";
        assert_eq!(files(in_command(line).unwrap()), ["a"]);
        assert_eq!(in_command("apply_patcher x"), None);
        assert_eq!(in_command("echo apply_patch"), None);
    }
}
