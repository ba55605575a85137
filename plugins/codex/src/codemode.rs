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
    let mut rest = program;
    while let Some(at) = next_key(rest) {
        rest = &rest[at..];
        let value = rest.trim_start_matches([' ', '\t']);
        let Some(value) = value.strip_prefix(':') else {
            continue;
        };
        let value = value.trim_start();
        match literal(value) {
            Some((text, used)) => {
                let after = value[used..].trim_start();
                if after.is_empty() || after.starts_with([',', '}', '\n']) {
                    let text = text.trim().to_string();
                    if !text.is_empty() {
                        found.push(text);
                    }
                }
                rest = &value[used..];
            }
            None => rest = value,
        }
    }
    found
}

/// The offset just after the next `command` / `cmd` key (bare or quoted,
/// not part of a longer name).
fn next_key(text: &str) -> Option<usize> {
    // (start, end) of the earliest-starting key; a quoted key starts before
    // the bare word inside it.
    let mut best: Option<(usize, usize)> = None;
    for key in COMMAND_KEYS {
        for quoted in [format!("\"{key}\""), format!("'{key}'"), (*key).to_string()] {
            let mut from = 0;
            while let Some(pos) = text[from..].find(&quoted) {
                let start = from + pos;
                let end = start + quoted.len();
                let before_ok = text[..start]
                    .chars()
                    .next_back()
                    .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '.' || c == '$'));
                let after_ok = text[end..]
                    .chars()
                    .next()
                    .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
                if before_ok && after_ok {
                    if best.is_none_or(|(s, _)| start < s) {
                        best = Some((start, end));
                    }
                    break;
                }
                from = end;
            }
        }
    }
    best.map(|(_, end)| end)
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
