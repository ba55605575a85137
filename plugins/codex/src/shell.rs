//! Shell command lines: the script a shell tool's argv runs, and a small
//! POSIX-style word splitter for recognizing simple commands.
//!
//! Codex's `shell` tool and `local_shell_call` items carry argv such as
//! `["bash", "-lc", "cargo test"]` or `["powershell.exe", "-Command", "dir"]`;
//! the command the agent ran is the script. `shell_command` and
//! `exec_command` carry the script as a string already.

/// The command line an argv runs: the script of a shell's `-c` / `-lc` or
/// PowerShell's `-Command`, else the words joined (quoted where needed).
pub fn command_line(argv: &[String]) -> Option<String> {
    let first = argv.first()?;
    let program = program_name(first);
    let script = match program.as_str() {
        "bash" | "sh" | "zsh" | "dash" | "ksh" | "fish" => script_after(argv, |a| {
            a.starts_with('-') && !a.starts_with("--") && a.ends_with('c')
        }),
        "powershell" | "pwsh" => script_after(argv, |a| {
            a.eq_ignore_ascii_case("-command") || a.eq_ignore_ascii_case("-c")
        }),
        "cmd" => script_after(argv, |a| a.eq_ignore_ascii_case("/c")),
        _ => None,
    };
    let line =
        script.unwrap_or_else(|| argv.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" "));
    let line = line.trim();
    (!line.is_empty()).then(|| line.to_string())
}

/// The words after the first flag matching `is_flag`, joined (the script).
fn script_after(argv: &[String], is_flag: impl Fn(&str) -> bool) -> Option<String> {
    let at = argv.iter().skip(1).position(|a| is_flag(a))? + 2;
    let rest = argv.get(at..)?;
    (!rest.is_empty()).then(|| rest.join(" "))
}

/// `/usr/bin/bash` → `bash`, `C:\...\powershell.exe` → `powershell`.
pub fn program_name(word: &str) -> String {
    let base = word.rsplit(['/', '\\']).next().unwrap_or(word);
    let base = base.strip_suffix(".exe").unwrap_or(base);
    base.to_ascii_lowercase()
}

/// A word quoted for a POSIX shell when it needs it.
pub fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%^".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The words of a simple command line, as a POSIX shell splits them
/// (single and double quotes, backslash escapes). `None` when quotes are
/// unbalanced or the line uses what a simple split cannot follow
/// (substitutions, redirections, sequencing).
pub fn words(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        other => current.push(other),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => {
                            let next = chars.next()?;
                            if !matches!(next, '"' | '\\' | '$' | '`') {
                                current.push('\\');
                            }
                            current.push(next);
                        }
                        '$' | '`' => return None,
                        other => current.push(other),
                    }
                }
            }
            '\\' => {
                in_word = true;
                current.push(chars.next()?);
            }
            '$' | '`' | ';' | '&' | '|' | '<' | '>' | '(' | ')' | '\n' => return None,
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut current));
                    in_word = false;
                }
            }
            other => {
                in_word = true;
                current.push(other);
            }
        }
    }
    if in_word {
        words.push(current);
    }
    Some(words)
}

/// Splits `line` at top-level `|` (outside quotes); `None` when it also
/// sequences commands (`;`, `&&`, `||`, newlines) outside quotes.
pub fn pipeline(line: &str) -> Option<Vec<&str>> {
    let mut segments = Vec::new();
    let mut start = 0;
    let mut quote: Option<char> = None;
    let bytes: Vec<(usize, char)> = line.char_indices().collect();
    let mut i = 0;
    while let Some(&(at, c)) = bytes.get(i) {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => i += 1,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '\\') => i += 1,
            (None, ';' | '\n') => return None,
            (None, '&') => return None,
            (None, '|') => {
                if bytes.get(i + 1).is_some_and(|(_, n)| *n == '|') {
                    return None;
                }
                segments.push(line[start..at].trim());
                start = at + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if quote.is_some() {
        return None;
    }
    segments.push(line[start..].trim());
    Some(segments)
}

/// A leading `cd <dir> &&` of a command line: the directory and the rest.
pub fn leading_cd(line: &str) -> Option<(String, &str)> {
    let rest = line.trim_start().strip_prefix("cd ")?;
    let split = rest.find("&&")?;
    let dir = words(rest[..split].trim())?;
    match dir.as_slice() {
        [dir] => Some((dir.clone(), rest[split + 2..].trim_start())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn takes_the_script_of_a_shell() {
        assert_eq!(
            command_line(&argv(&["bash", "-lc", "cargo test"])).as_deref(),
            Some("cargo test")
        );
        assert_eq!(
            command_line(&argv(&["/bin/zsh", "-c", "ls -la"])).as_deref(),
            Some("ls -la")
        );
        assert_eq!(
            command_line(&argv(&[
                "C:\\WINDOWS\\System32\\WindowsPowerShell\\v1.0\\powershell.exe",
                "-Command",
                "Get-ChildItem"
            ]))
            .as_deref(),
            Some("Get-ChildItem")
        );
        assert_eq!(
            command_line(&argv(&["rg", "-n", "a b", "src"])).as_deref(),
            Some("rg -n 'a b' src")
        );
        assert_eq!(command_line(&argv(&[])), None);
        assert_eq!(
            command_line(&argv(&["bash", "-lc"])).as_deref(),
            Some("bash -lc")
        );
    }

    #[test]
    fn splits_words_like_a_shell() {
        assert_eq!(
            words("sed -n '1,20p' \"a b.rs\"").unwrap(),
            ["sed", "-n", "1,20p", "a b.rs"]
        );
        assert_eq!(words("cat a\\ b").unwrap(), ["cat", "a b"]);
        assert_eq!(words("cat 'unclosed"), None);
        assert_eq!(words("cat $(ls)"), None);
        assert_eq!(words("cat a > b"), None);
    }

    #[test]
    fn splits_pipelines_and_leading_cds() {
        assert_eq!(
            pipeline("nl -ba a.py | sed -n '1,5p'").unwrap(),
            ["nl -ba a.py", "sed -n '1,5p'"]
        );
        assert_eq!(pipeline("grep 'a|b' f").unwrap(), ["grep 'a|b' f"]);
        assert_eq!(pipeline("a && b"), None);
        assert_eq!(pipeline("a || b"), None);
        assert_eq!(pipeline("a; b"), None);
        let (dir, rest) = leading_cd("cd /home/me/app && git diff").unwrap();
        assert_eq!((dir.as_str(), rest), ("/home/me/app", "git diff"));
        assert_eq!(leading_cd("git diff"), None);
    }
}
