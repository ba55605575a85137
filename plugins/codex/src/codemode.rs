//! Commands inside a code-mode `exec` call. Since mid-2026 Codex can let the
//! model write a JavaScript program (`custom_tool_call` named `exec`) that
//! calls tools, e.g. `await tools.shell_command({command: "rg -n foo", workdir: "..."})`.
//! The commands are the string literals given as `command:` or `cmd:`; a
//! command the program builds at run time (`"rg " + file`) cannot be known
//! and is left out rather than recorded wrong.

/// The keys whose literal values are command lines.
const COMMAND_KEYS: &[&str] = &["command", "cmd"];

/// Whether the program calls a shell tool at all.
pub fn runs_shell(program: &str) -> bool {
    program.contains("tools.shell_command")
        || program.contains("tools.exec_command")
        || program.contains("tools.shell(")
}

/// The command lines written as literals in `program`, in order.
pub fn commands(program: &str) -> Vec<String> {
    if !runs_shell(program) {
        return Vec::new();
    }
    let mut found = Vec::new();
    // Where the literal last read ends: keys inside it are text, not keys.
    let mut consumed = 0;
    for key_end in key_ends(program) {
        if key_end < consumed {
            continue;
        }
        let rest = &program[key_end..];
        let Some(value) = rest.trim_start_matches([' ', '\t']).strip_prefix(':') else {
            continue;
        };
        let value = value.trim_start();
        let value_start = program.len() - value.len();
        let Some((text, used)) = literal(value) else {
            continue;
        };
        consumed = value_start + used;
        let after = value[used..].trim_start();
        if after.is_empty() || after.starts_with([',', '}', '\n']) {
            let text = text.trim();
            if !text.is_empty() {
                found.push(text.to_string());
            }
        }
    }
    found
}

/// The offsets just after each `command` / `cmd` key (bare, or quoted with
/// its closing quote), in order, in one pass over `text`.
fn key_ends(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut ends: Vec<usize> = COMMAND_KEYS
        .iter()
        .flat_map(|key| {
            text.match_indices(key)
                .map(move |(at, _)| (at, at + key.len()))
        })
        .filter_map(|(start, end)| {
            let before = start.checked_sub(1).and_then(|i| bytes.get(i).copied());
            let after = bytes.get(end).copied();
            let word_char =
                |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80;
            match (before, after) {
                (Some(q @ (b'"' | b'\'')), Some(a)) if a == q => Some(end + 1),
                (b, a)
                    if !b.is_some_and(|b| word_char(b) || b == b'.')
                        && !a.is_some_and(word_char) =>
                {
                    Some(end)
                }
                _ => None,
            }
        })
        .collect();
    ends.sort_unstable();
    ends
}

/// A JavaScript string literal at the start of `text`: its value and length.
/// Template literals with `${...}` are not literals.
fn literal(text: &str) -> Option<(String, usize)> {
    let quote = text
        .chars()
        .next()
        .filter(|c| matches!(c, '"' | '\'' | '`'))?;
    let mut value = String::new();
    let mut chars = text.char_indices().skip(1);
    while let Some((at, c)) = chars.next() {
        match c {
            c if c == quote => return Some((value, at + c.len_utf8())),
            '$' if quote == '`' && text[at..].starts_with("${") => return None,
            '\n' if quote != '`' => return None,
            '\\' => {
                let (_, escaped) = chars.next()?;
                match escaped {
                    'n' => value.push('\n'),
                    't' => value.push('\t'),
                    'r' => value.push('\r'),
                    '0' => value.push('\0'),
                    'b' => value.push('\u{8}'),
                    'f' => value.push('\u{c}'),
                    'v' => value.push('\u{b}'),
                    'u' => {
                        let hex: String = (0..4)
                            .filter_map(|_| chars.next().map(|(_, h)| h))
                            .collect();
                        value.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                    }
                    'x' => {
                        let hex: String = (0..2)
                            .filter_map(|_| chars.next().map(|(_, h)| h))
                            .collect();
                        value.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                    }
                    '\n' => {}
                    other => value.push(other),
                }
            }
            other => value.push(other),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_literal_commands() {
        let program = "const r = await tools.shell_command({\n  command: \"rg -n 'a\\\\.b' Script\",\n  workdir: \"C:\\\\p\",\n  timeout_ms: 20000\n});\ntext(r);\n";
        assert_eq!(commands(program), ["rg -n 'a\\.b' Script"]);
        let compact = "await tools.shell_command({command:\"Get-Content -Raw 'C:\\\\x.md'\",\"workdir\":\"C:\\\\p\"})";
        assert_eq!(commands(compact), ["Get-Content -Raw 'C:\\x.md'"]);
        let listed = "const cmds = [{label:\"a\", cmd:\"ls\"}, {label:\"b\", cmd:'pwd'}];\nawait Promise.all(cmds.map(x => tools.shell_command({command:x.cmd})));";
        assert_eq!(commands(listed), ["ls", "pwd"]);
        let nested = "tools.shell_command({command: \"echo cmd: 'x'\", cmd: \"ls\"})";
        assert_eq!(commands(nested), ["echo cmd: 'x'", "ls"]);
    }

    #[test]
    fn large_programs_are_scanned_once() {
        let program = format!(
            "tools.shell_command({{}});\n{}",
            "{cmd: x, command: y}\n".repeat(200_000)
        );
        assert!(commands(&program).is_empty());
    }

    #[test]
    fn skips_commands_built_at_run_time() {
        let built = "tools.shell_command({ command: \"rg -n '^' -- \\\"\" + file + \"\\\"\", workdir: \"/p\" })";
        assert!(commands(built).is_empty());
        let template = "tools.shell_command({ command: `cat ${f}` })";
        assert!(commands(template).is_empty());
        assert!(commands("const command = \"ls\";").is_empty());
    }
}
