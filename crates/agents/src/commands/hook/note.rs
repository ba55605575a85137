//! The note for a failed command: the error looked up by its words alone
//! (no model loads) in this machine's earlier sessions, and when one met the
//! same error, a short framed note naming it and what was done next, within
//! `context.note_max_bytes` and always with its frame closed.

use anyhow::Result;
use deja_model::Role;
use deja_render::frame;
use deja_store::Store;

use super::input::Input;
use super::seen::{first_time, seen_file};
use crate::app::App;

/// Most bytes of the error text looked up.
const MAX_ERROR: usize = 2000;
/// Fewest distinct words an error must have to be looked up.
const MIN_TERMS: usize = 3;
/// Share of the error's words a message must hold to be the same error.
const MIN_SHARE: f64 = 0.6;

/// The lines of an error that say what went wrong: those that name an
/// error or failure, else the last few, within [`MAX_ERROR`] bytes.
pub fn error_lines(error: &str) -> String {
    let lines: Vec<&str> = error
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let telling: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| {
            let l = l.to_ascii_lowercase();
            [
                "error",
                "exception",
                "failed",
                "fatal",
                "panicked",
                "cannot",
                "not found",
                "denied",
            ]
            .iter()
            .any(|w| l.contains(w))
        })
        .collect();
    let chosen = if telling.is_empty() {
        lines[lines.len().saturating_sub(3)..].to_vec()
    } else {
        telling
    };
    let mut out = chosen.join("\n");
    if out.len() > MAX_ERROR {
        out = frame::cut(&out, MAX_ERROR).to_string();
    }
    out
}

/// Distinct lower-case words of `text` worth matching (no numbers alone).
fn words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = deja_recall::lexical::terms(text)
        .into_iter()
        .map(|t| t.to_lowercase())
        .filter(|t| t.chars().count() >= 3 && !t.chars().all(|c| c.is_ascii_digit()))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Whether `text` holds enough of `terms` to be the same error.
fn same_error(terms: &[String], text: &str) -> bool {
    let have: std::collections::HashSet<String> = words(text).into_iter().collect();
    let found = terms.iter().filter(|t| have.contains(*t)).count();
    found as f64 >= (terms.len() as f64 * MIN_SHARE).ceil()
}

/// The terms most telling of an error, first: long ones, and those that
/// look like identifiers (`_`, `.`, `::`, digits, inner capitals).
fn telling_first(terms: &[String], original: &str) -> Vec<String> {
    let score = |t: &str| {
        let shaped = original.contains(&format!("{t}_"))
            || original.contains(&format!("_{t}"))
            || original.contains(&format!("{t}."))
            || original.contains(&format!(".{t}"))
            || t.chars().any(|c| c.is_ascii_digit());
        (usize::from(shaped) * 100) + t.chars().count()
    };
    let mut out = terms.to_vec();
    out.sort_by(|a, b| score(b).cmp(&score(a)).then_with(|| a.cmp(b)));
    out
}

/// The best message of this machine's earlier sessions (never `own`, nor
/// one found in a code folder unless `code_folders`) that holds most of the
/// error's `terms`: an FTS5 search of all of the most telling ones together
/// (so that rare words bound the work), widened once to fewer, each
/// candidate then checked for [`MIN_SHARE`] of every term.
fn same_error_message(
    store: &Store,
    terms: &[String],
    error: &str,
    own: Option<&str>,
    code_folders: bool,
) -> Result<Option<deja_store::search::HitRow>> {
    let ranked = telling_first(terms, &error.to_lowercase());
    for take in [6usize, 3] {
        let chosen = &ranked[..take.min(ranked.len())];
        let expression = chosen
            .iter()
            .map(|t| deja_store::search::quote(t))
            .collect::<Vec<_>>()
            .join(" AND ");
        let top = store.bm25_top(deja_store::search::Level::Message, &expression, None, 20)?;
        let ids: Vec<i64> = top.iter().map(|(id, _)| *id).collect();
        let rows = store.hit_rows(&ids)?;
        let foreign = if code_folders {
            std::collections::HashSet::new()
        } else {
            store.in_code_folders(&rows.values().map(|r| r.session_row).collect::<Vec<_>>())?
        };
        let best = ids.iter().filter_map(|id| rows.get(id)).find(|r| {
            r.origin.is_none()
                && !foreign.contains(&r.session_row)
                && own.is_none_or(|o| r.session_id != o && r.native_session_id != o)
                && same_error(terms, &r.text)
        });
        if let Some(best) = best {
            return Ok(Some(best.clone()));
        }
        if ranked.len() <= 3 {
            break;
        }
    }
    Ok(None)
}

/// The note for a failed command, when an earlier session met its error.
pub fn failure_note(
    app: &App,
    agent: &str,
    input: &Input,
    max_bytes: usize,
) -> Result<Option<String>> {
    let Some(error) = input.error() else {
        return Ok(None);
    };
    let query = error_lines(&error);
    let terms = words(&query);
    if terms.len() < MIN_TERMS {
        return Ok(None);
    }
    let store = match Store::open_read(&app.paths.database()) {
        Ok(s) => s,
        Err(_) => return Ok(None),
    };
    let code_folders = app.config.config.context.code_folder_sessions;
    let Some(hit) = same_error_message(&store, &terms, &query, input.session_id(), code_folders)?
    else {
        return Ok(None);
    };
    if let Some(session) = input.session_id() {
        if !first_time(&seen_file(app, agent, session), &query) {
            return Ok(None);
        }
    }
    // What was done next: the agent's next message after the hit.
    let next = store.next_message(hit.session_row, hit.message_index, Role::Assistant)?;
    Ok(note(&hit, next.as_deref(), max_bytes))
}

/// The note naming `hit` and what was done `next`, within `max_bytes`: each
/// quote cleaned first, then cut to its share of the room, and only the
/// body cut further, so that the frame always closes; `None` when not even
/// the frame fits.
fn note(hit: &deja_store::search::HitRow, next: Option<&str>, max_bytes: usize) -> Option<String> {
    let date = chrono::DateTime::from_timestamp_millis(hit.started_at)
        .map(|d| d.format("%Y-%m-%d").to_string())
        .unwrap_or_default();
    // Only deja's own words stand outside the frame: the session's id, like
    // every stored string, is inside it.
    let head = "deja: an earlier session met this error; read it with deja's `session` tool or `deja show ID`, the ID named in the frame.\n";
    let named = format!(
        "session: {} ({}, {date})\n",
        frame::field(&hit.session_id),
        frame::field(&hit.harness),
    );
    // The frame's own lines, and the newline `wrap` may add.
    let room =
        max_bytes.saturating_sub(head.len() + frame::open().len() + frame::close().len() + 1);
    let mut quotes = vec![("there", hit.text.as_str())];
    if let Some(next) = next {
        quotes.push(("what was done", next));
    }
    let share = room.saturating_sub(named.len()) / quotes.len();
    let mut body = named;
    for (label, text) in quotes {
        let clean = frame::untrusted(&deja_model::one_line(text, share));
        let line = format!("{label}: {clean}");
        body.push_str(frame::cut(&line, share.saturating_sub(1)));
        body.push('\n');
    }
    let mut body = frame::cut(&body, room).to_string();
    loop {
        let note = format!("{head}{}", frame::wrap(&body));
        if note.len() <= max_bytes {
            return Some(note);
        }
        if body.is_empty() {
            return None;
        }
        let over = note.len() - max_bytes;
        body = frame::cut(&body, body.len().saturating_sub(over)).to_string();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_telling_lines_of_an_error_are_looked_up() {
        let e = "Traceback (most recent call last):\n  File \"x.py\", line 3\n    foo()\nNameError: name 'foo' is not defined\n";
        assert_eq!(error_lines(e), "NameError: name 'foo' is not defined");
        assert_eq!(error_lines("a\nb\nc\nd\n"), "b\nc\nd");
        assert!(error_lines(&"error ".repeat(1000)).len() <= MAX_ERROR);
    }

    #[test]
    fn the_same_error_shares_most_of_its_words() {
        let terms = words("psycopg2.errors.UndefinedColumn: column \"tenant_id\" does not exist");
        assert!(terms.len() >= MIN_TERMS, "{terms:?}");
        assert!(same_error(
            &terms,
            "I ran it and got psycopg2.errors.UndefinedColumn: column \"tenant_id\" does not exist at line 4"
        ));
        assert!(!same_error(&terms, "the tenant column was renamed"));
    }

    #[test]
    fn a_note_of_control_characters_keeps_its_frame_closed_within_the_bound() {
        let error = "Error: Error acquiring the state lock";
        let hit = deja_store::search::HitRow {
            message_row: 1,
            session_row: 1,
            session_id: "aider-infra".into(),
            harness: "aider".into(),
            project: deja_model::Project::default(),
            started_at: 0,
            message_id: "aider-infra#0".into(),
            message_index: 0,
            role: "user".into(),
            timestamp: 0,
            text: format!("{error}{}", "\x08".repeat(2000)),
            source_path: None,
            native_session_id: "infra".into(),
            origin: None,
        };
        for max in [1200, 700, 500] {
            for next in [None, Some("\x1b[31m".repeat(900))] {
                let n = note(&hit, next.as_deref(), max).unwrap();
                assert!(n.len() <= max, "{} > {max}: {n}", n.len());
                assert_eq!(n.matches("<recalled-memory").count(), 1, "{n}");
                assert_eq!(n.matches("</recalled-memory>").count(), 1, "{n}");
                assert!(n.trim_end().ends_with("</recalled-memory>"), "{n}");
                assert!(n.contains("aider-infra"), "{n}");
            }
        }
        // Too small a bound for the frame itself: no note rather than an open frame.
        assert_eq!(note(&hit, None, 256), None);
    }
}
