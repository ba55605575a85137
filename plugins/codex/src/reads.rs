//! Files a shell command reads. Codex has no file-reading tool: agents read
//! with `cat`, `sed -n '1,200p' f`, `nl -ba f | sed -n ...`, `head`, `tail`
//! or PowerShell's `Get-Content`. Codex's own command parser labels such
//! simple commands as reads; deja recognizes the same simple shapes (one
//! program, one file operand, optionally piped into filters) and nothing
//! cleverer, so a read is only recorded when the command surely is one.

use crate::shell::{self, leading_cd, pipeline, program_name};

/// Programs that only filter their input, allowed after a read in a pipeline.
const FILTERS: &[&str] = &[
    "head",
    "tail",
    "sed",
    "nl",
    "wc",
    "cat",
    "grep",
    "rg",
    "sort",
    "uniq",
    "cut",
    "less",
    "more",
    "select-object",
];

/// The file a command line reads, and the directory a leading `cd` moved to.
pub fn read_path(line: &str) -> Option<(Option<String>, String)> {
    let (dir, line) = match leading_cd(line) {
        Some((dir, rest)) => (Some(dir), rest),
        None => (None, line.trim()),
    };
    let segments = pipeline(line)?;
    let (first, filters) = segments.split_first()?;
    let filters_ok = filters.iter().all(|segment| {
        words_of(segment)
            .and_then(|w| w.first().map(|p| program_name(p)))
            .is_some_and(|p| FILTERS.contains(&p.as_str()))
    });
    if !filters_ok {
        return None;
    }
    let path = single_read(&words_of(first)?)?;
    Some((dir, path))
}

/// POSIX words, or PowerShell words for a `Get-Content` line (whose
/// backslashes are path separators, not escapes).
fn words_of(segment: &str) -> Option<Vec<String>> {
    let powershell = segment
        .split_whitespace()
        .next()
        .is_some_and(|w| w.eq_ignore_ascii_case("get-content") || w.eq_ignore_ascii_case("gc"));
    if powershell {
        powershell_words(segment)
    } else {
        shell::words(segment)
    }
}

/// PowerShell's quoting, simply: `'...'` and `"..."` without escapes.
fn powershell_words(segment: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    let mut chars = segment.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        q if q == c => break,
                        '$' | '`' if c == '"' => return None,
                        other => current.push(other),
                    }
                }
            }
            '$' | '`' | ';' | '(' | ')' | '{' | '}' => return None,
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

/// The one file a simple read command names.
fn single_read(words: &[String]) -> Option<String> {
    let (program, args) = words.split_first()?;
    let program = program_name(program);
    let operands: Vec<&String> = match program.as_str() {
        "cat" | "nl" | "bat" | "less" | "more" | "type" => {
            args.iter().filter(|a| !a.starts_with('-')).collect()
        }
        "head" | "tail" => operands_after_flags(args, &["-n", "-c"]),
        "sed" => {
            let (flag, rest) = args.split_first()?;
            let (script, files) = rest.split_first()?;
            if flag != "-n" || !is_print_script(script) {
                return None;
            }
            files.iter().collect()
        }
        "get-content" | "gc" => operands_after_flags(
            args,
            &[
                "-encoding",
                "-totalcount",
                "-tail",
                "-head",
                "-first",
                "-readcount",
                "-delimiter",
            ],
        ),
        _ => return None,
    };
    match operands.as_slice() {
        [path] if is_plain_path(path) => Some((*path).clone()),
        _ => None,
    }
}

/// The non-flag words, skipping the value of each flag in `valued`
/// (case-insensitively; `-Path` / `-LiteralPath` name the operand itself).
fn operands_after_flags<'a>(args: &'a [String], valued: &[&str]) -> Vec<&'a String> {
    let mut operands = Vec::new();
    let mut skip = false;
    for arg in args {
        if skip {
            skip = false;
            continue;
        }
        if arg.starts_with('-') {
            let lower = arg.to_ascii_lowercase();
            skip = valued.contains(&lower.as_str());
            continue;
        }
        if arg.starts_with('+') && arg[1..].chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        operands.push(arg);
    }
    operands
}

/// `p`, `10p`, `1,200p`, `$p`: sed scripts that only print lines.
fn is_print_script(script: &str) -> bool {
    let Some(range) = script.strip_suffix('p') else {
        return false;
    };
    range
        .split(',')
        .all(|bound| bound.is_empty() || bound == "$" || bound.chars().all(|c| c.is_ascii_digit()))
        && range.split(',').count() <= 2
}

/// A path with no glob or variable in it.
fn is_plain_path(path: &str) -> bool {
    !path.is_empty() && path != "-" && !path.contains(['*', '?', '[', ']', '{', '}', '$', '~'])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(line: &str) -> Option<(Option<String>, String)> {
        read_path(line)
    }

    fn path(line: &str) -> Option<String> {
        read(line).map(|(_, p)| p)
    }

    #[test]
    fn recognizes_simple_reads() {
        assert_eq!(
            path("cat .kiro/specs/env/requirements.md").as_deref(),
            Some(".kiro/specs/env/requirements.md")
        );
        assert_eq!(path("sed -n '1,240p' main.py").as_deref(), Some("main.py"));
        assert_eq!(
            path("nl -ba backend/app/api/stt.py | sed -n '1,200p'").as_deref(),
            Some("backend/app/api/stt.py")
        );
        assert_eq!(path("head -n 40 README.md").as_deref(), Some("README.md"));
        assert_eq!(path("tail -n +10 log.txt").as_deref(), Some("log.txt"));
        assert_eq!(
            path("Get-Content -Raw -Encoding UTF8 'D:\\wiki\\a b.md'").as_deref(),
            Some("D:\\wiki\\a b.md")
        );
        assert_eq!(
            path("Get-Content -LiteralPath 'C:\\x\\SKILL.md'").as_deref(),
            Some("C:\\x\\SKILL.md")
        );
        let (dir, p) = read("cd /home/me/app && nl -ba src/a.py").unwrap();
        assert_eq!(
            (dir.as_deref(), p.as_str()),
            (Some("/home/me/app"), "src/a.py")
        );
    }

    #[test]
    fn leaves_everything_else_alone() {
        for line in [
            "cat a b",
            "cat *.md",
            "sed -i 's/a/b/' f",
            "sed -n '/x/p' f",
            "rg -n foo src",
            "cat a > b",
            "cat a && rm a",
            "cat a | python -",
            "git diff",
            "cat",
            "cat $HOME/x",
            "Get-Content $f",
        ] {
            assert_eq!(read(line), None, "{line}");
        }
    }
}
