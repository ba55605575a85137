//! aider's YAML config and deja's file in its top-level `read:` list: a
//! line-level edit that keeps every other key and comment, in each form
//! `read:` can have (absent, a block list, a one-line flow list, a single
//! value); forms it could not undo exactly are refused. Taking the entry
//! back (see [`aider_conf_without`]) removes deja's change alone, never an
//! entry of the user's, and refuses when it cannot tell.

/// The comment that marks deja's line in `~/.aider.conf.yml`.
const AIDER_MARK: &str = "# added by deja setup aider";

/// How the top-level `read:` key of `~/.aider.conf.yml` looked before setup,
/// which says how setup changed it and so how `--undo` reverses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Form {
    /// No `read:` key: setup added `read:` with deja's item.
    Absent,
    /// A block list (`read:` then `  - a.md` lines): setup added one item.
    Block,
    /// A flow list on one line (`read: [a.md, b.md]`): setup added one item to it.
    Flow,
    /// One value (`read: a.md`): setup made it a list of that value and deja's.
    Single,
}

/// A `read:` key setup cannot edit (and so could not undo exactly).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unsupported(String);

/// One change setup makes to `~/.aider.conf.yml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AiderEdit {
    /// The whole new text.
    pub text: String,
    /// How `read:` looked before.
    pub form: Form,
    /// The `read:` line as it was (flow list and single value).
    pub original: Option<String>,
}

/// The top-level `read:` key as found in a file.
#[derive(Debug, Clone)]
struct ReadKey {
    /// Index of the `read:` line.
    line: usize,
    /// What follows `read:`, comment taken off.
    value: String,
    /// The comment after the value (`# ...`), or empty.
    comment: String,
    /// One past the last line of a block list's items.
    end: usize,
    /// Indentation of a block list's items.
    indent: String,
    /// The list's item values (a single value is one item).
    items: Vec<String>,
}

/// `rest` split at the first ` #` outside quotes into (value, comment), both
/// trimmed; `None` when a quote is left open.
fn split_comment(rest: &str) -> Option<(&str, &str)> {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut prev: Option<char> = None;
    for (i, c) in rest.char_indices() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if q == '"' && c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => {
                let after_gap = prev.is_none_or(|p| p.is_whitespace() || p == '[' || p == ',');
                if c == '#' && prev.is_none_or(char::is_whitespace) {
                    return Some((rest[..i].trim(), rest[i..].trim()));
                }
                if (c == '"' || c == '\'') && after_gap {
                    quote = Some(c);
                }
            }
        }
        prev = Some(c);
    }
    if quote.is_some() {
        return None;
    }
    Some((rest.trim(), ""))
}

/// A YAML scalar's text without its quotes.
fn unquote(v: &str) -> String {
    let v = v.trim();
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return v[1..v.len() - 1].to_string();
        }
    }
    v.to_string()
}

/// The items of a one-line flow list's inside (`a.md, "b c.md"`), split at
/// commas outside quotes; `None` when it holds what a plain list of file
/// names does not (nesting, an empty item, an open quote).
fn flow_items(inner: &str) -> Option<Vec<String>> {
    if inner.trim().is_empty() {
        return Some(Vec::new());
    }
    let mut items = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    for c in inner.chars() {
        match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                }
                current.push(c);
            }
            None => match c {
                ',' => items.push(std::mem::take(&mut current)),
                '[' | ']' | '{' | '}' => return None,
                '"' | '\'' if current.trim().is_empty() => {
                    quote = Some(c);
                    current.push(c);
                }
                _ => current.push(c),
            },
        }
    }
    if quote.is_some() {
        return None;
    }
    items.push(current);
    let items: Vec<String> = items.iter().map(|i| i.trim().to_string()).collect();
    if items.iter().any(String::is_empty) {
        return None;
    }
    Some(items)
}

/// Values that are not a plain file name: setup leaves them alone.
fn plain_value(v: &str) -> bool {
    !(v.is_empty()
        || v == "~"
        || v == "null"
        || v.starts_with(['|', '>', '&', '*', '!', '{', '%', '@', '`', '[', ']']))
}

/// Finds the top-level `read:` key of `lines`; `Ok(None)` when there is none,
/// an error for a form setup cannot edit.
fn find_read(lines: &[&str]) -> Result<Option<ReadKey>, Unsupported> {
    let unsupported = |why: String| Err(Unsupported(why));
    let mut found: Option<usize> = None;
    for (i, l) in lines.iter().enumerate() {
        let bare = l.trim_start_matches(['"', '\'']);
        let spelled = bare.starts_with("read") && !l.starts_with(' ') && {
            let after = bare["read".len()..].trim_start_matches(['"', '\'']);
            after.trim_start().starts_with(':')
                && (after.starts_with(':') || after.starts_with(' '))
        };
        if l.starts_with("read:") || spelled {
            if !l.starts_with("read:") {
                return unsupported(format!(
                    "line {}: `read` is spelled in a way setup does not edit",
                    i + 1
                ));
            }
            if found.is_some() {
                return unsupported(format!("line {}: a second top-level `read:` key", i + 1));
            }
            found = Some(i);
        }
    }
    let Some(k) = found else {
        return Ok(None);
    };
    let Some((value, comment)) = split_comment(&lines[k]["read:".len()..]) else {
        return unsupported(format!("line {}: a quote that does not close", k + 1));
    };
    let mut key = ReadKey {
        line: k,
        value: value.to_string(),
        comment: comment.to_string(),
        end: k + 1,
        indent: "  ".into(),
        items: Vec::new(),
    };
    if value.is_empty() {
        // A block list (possibly empty).
        let mut indent: Option<String> = None;
        let mut end = k + 1;
        while end < lines.len() {
            let l = lines[end];
            let lead = &l[..l.len() - l.trim_start().len()];
            let body = l.trim_start();
            if body.is_empty() {
                break;
            }
            let is_item = body == "-" || body.starts_with("- ");
            match &indent {
                None if is_item => indent = Some(lead.to_string()),
                None if lead.is_empty() => break,
                None if body.starts_with('#') => {}
                None => {
                    return unsupported(format!(
                        "line {}: `read:` holds something other than a list",
                        end + 1
                    ))
                }
                Some(ind) if is_item && lead == ind => {}
                Some(_) if lead.is_empty() && !is_item => break,
                Some(_) if !lead.is_empty() && body.starts_with('#') => {}
                Some(_) => {
                    return unsupported(format!(
                        "line {}: a list item setup does not edit (nested or continued)",
                        end + 1
                    ))
                }
            }
            if is_item {
                let Some((v, _)) = split_comment(&body[1..]) else {
                    return unsupported(format!("line {}: a quote that does not close", end + 1));
                };
                if !plain_value(v) {
                    return unsupported(format!(
                        "line {}: an item that is not a file name",
                        end + 1
                    ));
                }
                key.items.push(unquote(v));
            }
            end += 1;
        }
        // Trailing comment lines belong to what follows.
        while end > k + 1 && lines[end - 1].trim_start().starts_with('#') {
            end -= 1;
        }
        key.end = end;
        if let Some(ind) = indent {
            key.indent = ind;
        }
        return Ok(Some(key));
    }
    if let Some(rest) = value.strip_prefix('[') {
        let Some(inner) = rest.strip_suffix(']') else {
            return unsupported(format!("line {}: a flow list over several lines", k + 1));
        };
        let Some(items) = flow_items(inner) else {
            return unsupported(format!("line {}: a flow list setup does not edit", k + 1));
        };
        key.items = items.iter().map(|i| unquote(i)).collect();
        return Ok(Some(key));
    }
    if !plain_value(value) {
        return unsupported(format!(
            "line {}: a `read:` value that is not a file name",
            k + 1
        ));
    }
    key.items = vec![unquote(value)];
    Ok(Some(key))
}

/// `entry` as a YAML scalar (quoted when plain would not do).
fn scalar(entry: &str) -> String {
    let plain = !entry.is_empty()
        && plain_value(entry)
        && !entry.contains(": ")
        && !entry.contains(" #")
        && !entry.contains([',', '[', ']', '{', '}', '"', '\''])
        && !entry.starts_with(['-', '?', ':', '#'])
        && entry.trim() == entry;
    if plain {
        entry.to_string()
    } else {
        format!("\"{}\"", entry.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// `~/.aider.conf.yml` with `entry` added to its top-level `read:` key.
/// `Ok(None)` when the entry is there already; an error for a `read:` key
/// setup could not undo exactly.
pub fn aider_conf_with(text: &str, entry: &str) -> Result<Option<AiderEdit>, Unsupported> {
    if text.lines().any(|l| l.contains(entry)) {
        return Ok(None);
    }
    let lines: Vec<&str> = text.lines().collect();
    let owned = |ls: &[&str]| ls.iter().map(|l| l.to_string()).collect::<Vec<String>>();
    let e = scalar(entry);
    let mut out: Vec<String> = Vec::new();
    let (form, original) = match find_read(&lines)? {
        None => {
            out.extend(owned(&lines));
            out.push(format!("read:  {AIDER_MARK}"));
            out.push(format!("  - {e}  {AIDER_MARK}"));
            (Form::Absent, None)
        }
        Some(key) if key.value.is_empty() => {
            out.extend(owned(&lines[..key.end]));
            out.push(format!("{}- {e}  {AIDER_MARK}", key.indent));
            out.extend(owned(&lines[key.end..]));
            (Form::Block, None)
        }
        Some(key) if key.value.starts_with('[') => {
            let inner = key.value[1..key.value.len() - 1].trim();
            let sep = if inner.is_empty() { "" } else { ", " };
            let comment = if key.comment.is_empty() {
                String::new()
            } else {
                format!("  {}", key.comment)
            };
            out.extend(owned(&lines[..key.line]));
            out.push(format!("read: [{inner}{sep}{e}]{comment}  {AIDER_MARK}"));
            out.extend(owned(&lines[key.line + 1..]));
            (Form::Flow, Some(lines[key.line].to_string()))
        }
        Some(key) => {
            out.extend(owned(&lines[..key.line]));
            out.push(format!("read:  {AIDER_MARK} (was: read: {})", key.value));
            out.push(single_item(&key));
            out.push(format!("  - {e}  {AIDER_MARK}"));
            out.extend(owned(&lines[key.line + 1..]));
            (Form::Single, Some(lines[key.line].to_string()))
        }
    };
    let nl = newline(text);
    let mut joined = out.join(nl);
    joined.push_str(nl);
    Ok(Some(AiderEdit {
        text: joined,
        form,
        original,
    }))
}

/// The line ending `text` uses (Windows editors write `\r\n`).
fn newline(text: &str) -> &'static str {
    if text.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    }
}

/// The list item a single `read:` value becomes, its comment kept.
fn single_item(key: &ReadKey) -> String {
    if key.comment.is_empty() {
        format!("  - {}", key.value)
    } else {
        format!("  - {}  {}", key.value, key.comment)
    }
}

/// `text` (edited since setup) with exactly deja's change taken back: deja's
/// item removed from the list, in whatever form the list now has, and the
/// `read:` line setup rewrote put back as it was when the list holds what
/// it held then (else left a list, with the user's items). An error says
/// why it cannot be done safely.
pub fn aider_conf_without(
    text: &str,
    entry: &str,
    form: Option<Form>,
    original: Option<&str>,
) -> Result<String, Unsupported> {
    let no = |why: String| Err(Unsupported(why));
    let lines: Vec<&str> = text.lines().collect();
    let Some(key) = find_read(&lines)? else {
        if let Some(i) = lines.iter().position(|l| l.contains(entry)) {
            return no(format!("line {} names deja's file outside `read:`", i + 1));
        }
        return Ok(text.to_string());
    };
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let mut drop: Vec<usize> = Vec::new();
    // deja's item, wherever it is now.
    for (i, l) in lines.iter().enumerate() {
        if !l.contains(entry) {
            continue;
        }
        if i > key.line && i < key.end {
            let body = l.trim_start();
            let value = split_comment(&body[1..]).map(|(v, _)| unquote(v));
            if value.as_deref() != Some(entry) {
                return no(format!(
                    "line {} holds deja's file inside another value",
                    i + 1
                ));
            }
            drop.push(i);
        } else if i == key.line && key.value.starts_with('[') {
            let inner = &key.value[1..key.value.len() - 1];
            let items = flow_items(inner).unwrap_or_default();
            let kept: Vec<&String> = items.iter().filter(|v| unquote(v) != entry).collect();
            if kept.len() + 1 != items.len() {
                return no(format!(
                    "line {} names deja's file in a way setup did not write",
                    i + 1
                ));
            }
            let user_items: Vec<String> = kept.iter().map(|v| unquote(v)).collect();
            let was = original.filter(|_| form == Some(Form::Flow)).and_then(|o| {
                let ls = [o];
                find_read(&ls).ok().flatten().map(|k| (o, k.items))
            });
            out[i] = match was {
                Some((o, items)) if items == user_items => o.to_string(),
                _ => {
                    let comment = key.comment.replace(AIDER_MARK, "");
                    let comment = comment.trim();
                    let joined: Vec<&str> = kept.iter().map(|s| s.as_str()).collect();
                    let mut line = format!("read: [{}]", joined.join(", "));
                    if !comment.is_empty() {
                        line.push_str("  ");
                        line.push_str(comment);
                    }
                    line
                }
            };
        } else {
            return no(format!(
                "line {} names deja's file in a way setup did not write",
                i + 1
            ));
        }
    }
    // A flow list setup extended whose item the user took out: only the mark goes.
    if key.value.starts_with('[')
        && lines[key.line].contains(AIDER_MARK)
        && !lines[key.line].contains(entry)
    {
        out[key.line] = lines[key.line].replace(&format!("  {AIDER_MARK}"), "");
    }
    // The `read:` line setup added or rewrote, when it still carries the mark.
    if lines[key.line].contains(AIDER_MARK) && key.value.is_empty() {
        let items: Vec<usize> = (key.line + 1..key.end)
            .filter(|i| !drop.contains(i) && lines[*i].trim_start().starts_with('-'))
            .collect();
        let single = original
            .filter(|_| form == Some(Form::Single) || lines[key.line].contains("(was: read: "));
        match single {
            Some(o) => {
                let was = single_original(o);
                let restorable = items.len() == 1
                    && was
                        .as_ref()
                        .is_some_and(|k| lines[items[0]] == single_item(k));
                if restorable {
                    out[key.line] = o.to_string();
                    drop.push(items[0]);
                } else if items.is_empty() {
                    drop.push(key.line);
                } else {
                    out[key.line] = "read:".into();
                }
            }
            None if items.is_empty() => drop.push(key.line),
            None => out[key.line] = "read:".into(),
        }
    } else if lines[key.line].contains(AIDER_MARK) && !key.value.starts_with('[') {
        return no(format!(
            "line {}: deja's `read:` line was changed",
            key.line + 1
        ));
    }
    let kept: Vec<String> = out
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !drop.contains(i))
        .map(|(_, l)| l)
        .collect();
    let nl = newline(text);
    let mut joined = kept.join(nl);
    if !joined.is_empty() {
        joined.push_str(nl);
    }
    // Never an entry of the user's lost, whatever happened above.
    let before: Vec<String> = key.items.iter().filter(|v| *v != entry).cloned().collect();
    let after_lines: Vec<&str> = joined.lines().collect();
    let after = find_read(&after_lines)?
        .map(|k| k.items)
        .unwrap_or_default();
    if before != after || joined.contains(entry) {
        return no("the result would not keep your `read:` entries as they are".into());
    }
    Ok(joined)
}

/// The key a recorded single-value `read:` line had.
fn single_original(line: &str) -> Option<ReadKey> {
    let ls = [line];
    find_read(&ls)
        .ok()
        .flatten()
        .filter(|k| !k.value.is_empty() && !k.value.starts_with('['))
}

#[cfg(test)]
mod tests {
    use super::*;

    const E: &str = "/d/context/aider.md";

    fn with(conf: &str) -> AiderEdit {
        aider_conf_with(conf, E).unwrap().unwrap()
    }

    #[test]
    fn read_key_forms_are_kept_and_extended() {
        let added = format!("  - {E}  {AIDER_MARK}");
        let key = format!("read:  {AIDER_MARK}");
        assert_eq!(with("").text, format!("{key}\n{added}\n"));
        let conf = "# mine\nmodel: gpt-4o\n";
        let edit = with(conf);
        assert_eq!(
            edit.text,
            format!("# mine\nmodel: gpt-4o\n{key}\n{added}\n")
        );
        assert_eq!(edit.form, Form::Absent);
        let conf = "read: CONVENTIONS.md  # style\nmodel: x\n";
        let edit = with(conf);
        assert_eq!(
            edit.text,
            format!("read:  {AIDER_MARK} (was: read: CONVENTIONS.md)\n  - CONVENTIONS.md  # style\n{added}\nmodel: x\n")
        );
        assert_eq!(edit.form, Form::Single);
        assert_eq!(
            edit.original.as_deref(),
            Some("read: CONVENTIONS.md  # style")
        );
        let conf = "read:\n  - a.md\n  - b.md\n# after\nmodel: x\n";
        let edit = with(conf);
        assert_eq!(
            edit.text,
            format!("read:\n  - a.md\n  - b.md\n{added}\n# after\nmodel: x\n")
        );
        assert_eq!(edit.form, Form::Block);
        // Items at the key's own indentation stay a list of that indentation.
        assert_eq!(
            with("read:\n- a.md\n").text,
            format!("read:\n- a.md\n- {E}  {AIDER_MARK}\n")
        );
        let conf = "read: [a.md, b.md]  # two\n";
        let edit = with(conf);
        assert_eq!(
            edit.text,
            format!("read: [a.md, b.md, {E}]  # two  {AIDER_MARK}\n")
        );
        assert_eq!(edit.form, Form::Flow);
        assert_eq!(aider_conf_with(&format!("read:\n{added}\n"), E), Ok(None));
    }

    #[test]
    fn forms_setup_could_not_undo_are_refused() {
        for conf in [
            "read: [a.md,\n  b.md]\n",
            "read: [a.md, [b.md]]\n",
            "read: |\n  a.md\n",
            "read:\n  - a.md\n    continued\n",
            "read:\n  nested: x\n",
            "read: a.md\nread: b.md\n",
            "\"read\": a.md\n",
            "read : a.md\n",
            "read: \"a.md\n",
            "read: ~\n",
            "read: &files a.md\n",
        ] {
            assert!(aider_conf_with(conf, E).is_err(), "accepted {conf:?}");
        }
        assert!(aider_conf_with("readme: x\nread_only: y\n", E).is_ok());
    }

    fn undo(edit: &AiderEdit, text: &str) -> Result<String, Unsupported> {
        aider_conf_without(text, E, Some(edit.form), edit.original.as_deref())
    }

    #[test]
    fn undo_of_an_unedited_file_gives_back_the_original() {
        for conf in [
            "model: x\n",
            "read:\n  - a.md\n  - b.md\nmodel: x\n",
            "read: [a.md, b.md]\n",
            "read: [a.md,b.md]   # spaced oddly\n",
            "read: a.md  # style\nmodel: x\n",
            "read: \"my notes.md\"\n",
        ] {
            let edit = with(conf);
            assert_eq!(undo(&edit, &edit.text).unwrap(), conf, "{conf:?}");
        }
    }

    #[test]
    fn undo_after_an_edit_takes_back_deja_alone() {
        // Flow list: the user's items stay, deja's item goes.
        let edit = with("read: [a.md, b.md]\n");
        let edited = edit.text.replace("b.md, ", "b.md, c.md, ") + "model: x\n";
        assert_eq!(
            undo(&edit, &edited).unwrap(),
            "read: [a.md, b.md, c.md]\nmodel: x\n"
        );
        // Flow list, only another key added: the original line comes back.
        let edited = edit.text.clone() + "model: x\n";
        assert_eq!(
            undo(&edit, &edited).unwrap(),
            "read: [a.md, b.md]\nmodel: x\n"
        );
        // Block list with an item added after deja's.
        let edit = with("read:\n  - a.md\n");
        let edited = edit.text.clone() + "  - c.md\n";
        assert_eq!(undo(&edit, &edited).unwrap(), "read:\n  - a.md\n  - c.md\n");
        // Single value, another key added: the original line comes back.
        let edit = with("read: a.md  # style\n");
        let edited = edit.text.clone() + "model: x\n";
        assert_eq!(
            undo(&edit, &edited).unwrap(),
            "read: a.md  # style\nmodel: x\n"
        );
        // Single value, an item added: still a list, with both of the user's.
        let edited = edit.text.clone() + "  - c.md\n";
        assert_eq!(
            undo(&edit, &edited).unwrap(),
            "read:\n  - a.md  # style\n  - c.md\n"
        );
        // No key before, the user added an item under deja's key.
        let edit = with("model: x\n");
        let edited = edit.text.clone() + "  - c.md\n";
        assert_eq!(undo(&edit, &edited).unwrap(), "model: x\nread:\n  - c.md\n");
        let edited = edit.text.clone() + "dark-mode: true\n";
        assert_eq!(undo(&edit, &edited).unwrap(), "model: x\ndark-mode: true\n");
        // The user took deja's item out of the flow list themselves.
        let edit = with("read: [a.md]\n");
        let edited = edit.text.replace(&format!(", {E}"), "");
        assert_eq!(undo(&edit, &edited).unwrap(), "read: [a.md]\n");
        // Windows line endings stay.
        let edit = with("model: x\r\nread: a.md\r\n");
        assert!(
            edit.text.ends_with(&format!("{AIDER_MARK}\r\n")),
            "{:?}",
            edit.text
        );
        let edited = edit.text.clone() + "dark-mode: true\r\n";
        assert_eq!(
            undo(&edit, &edited).unwrap(),
            "model: x\r\nread: a.md\r\ndark-mode: true\r\n"
        );
        // deja's item moved into a flow list by the user.
        let edit = with("model: x\n");
        let edited = format!("read: [c.md, {E}]\n");
        assert_eq!(undo(&edit, &edited).unwrap(), "read: [c.md]\n");
    }

    #[test]
    fn undo_refuses_what_it_cannot_take_back_safely() {
        let edit = with("read: a.md\n");
        for edited in [
            format!("read: {E}\n"),
            format!("model: x  # see {E}\n"),
            format!("read:\n  - \"{E} old\"\n"),
            format!("read:  {AIDER_MARK} (was: read: a.md)\n  - a.md\n  - {E}.old\n"),
        ] {
            assert!(undo(&edit, &edited).is_err(), "undid {edited:?}");
        }
    }
}
