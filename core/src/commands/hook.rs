//! `deja context --hook AGENT [--on EVENT]`: the answer to an agent's hook,
//! JSON in on stdin and JSON out on stdout, never blocking the session (a
//! failure still answers, with nothing added).
//!
//! - `session-start` (the default): the project's digest, for Claude Code,
//!   Codex CLI, Gemini CLI and Qwen Code's SessionStart hooks.
//! - `tool-failure`: when a command fails (Claude Code's and Qwen Code's
//!   PostToolUseFailure, Gemini CLI's AfterTool for a shell command that
//!   exited non-zero), the error is looked up by its words alone (no model
//!   loads) in earlier sessions; when one met the same error, a short framed
//!   note names it and what was done next. At most once per error text per
//!   session, bounded by `context.note_max_bytes`, silent when nothing
//!   matches, and never about the session that asks.
//!
//! `context.inject = false` (or the agent in `context.inject_off`) makes
//! every hook answer empty.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::Result;
use deja_model::Role;
use deja_render::frame;
use deja_store::Store;
use serde_json::Value;

use crate::app::App;
use crate::json;

/// The agents whose hooks deja answers.
pub const AGENTS: [&str; 4] = ["claude", "codex", "gemini", "qwen"];

/// The hook events deja answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Event {
    /// A session starts (or resumes, clears, compacts): the project's digest.
    SessionStart,
    /// A tool call failed: a note when an earlier session met the error.
    ToolFailure,
}

/// Most bytes of the hook's input read.
const MAX_INPUT: u64 = 1 << 20;
/// Most bytes of the error text looked up.
const MAX_ERROR: usize = 2000;
/// Fewest distinct words an error must have to be looked up.
const MIN_TERMS: usize = 3;
/// Share of the error's words a message must hold to be the same error.
const MIN_SHARE: f64 = 0.6;

/// What the agent sent.
#[derive(Debug, Default)]
pub struct Input {
    /// The hook's JSON (`Value::Null` when none could be read).
    pub json: Value,
}

impl Input {
    /// Reads the hook's input from stdin.
    pub fn read() -> Input {
        let mut text = String::new();
        let _ = std::io::stdin().take(MAX_INPUT).read_to_string(&mut text);
        Input {
            json: serde_json::from_str(&text).unwrap_or(Value::Null),
        }
    }

    fn str(&self, key: &str) -> Option<&str> {
        self.json[key].as_str().filter(|s| !s.trim().is_empty())
    }

    /// The session's working folder.
    pub fn cwd(&self) -> Option<PathBuf> {
        self.str("cwd").map(PathBuf::from)
    }

    /// The harness's id of the session that asks.
    pub fn session_id(&self) -> Option<&str> {
        self.str("session_id")
    }

    /// The failure's text: the `error` field (Claude Code, Qwen Code), else a
    /// tool response's `error` or stderr, else, for a shell command that
    /// exited non-zero, its output as the agent reports it (Gemini CLI's
    /// AfterTool: `llmContent` with `Exit Code: N`). `None`: no failure.
    pub fn error(&self) -> Option<String> {
        if let Some(e) = self.str("error") {
            return Some(e.to_string());
        }
        let response = &self.json["tool_response"];
        let error = &response["error"];
        if let Some(e) = error.as_str().or_else(|| error["message"].as_str()) {
            return Some(e.to_string());
        }
        if let Some(e) = response["stderr"].as_str().filter(|e| !e.trim().is_empty()) {
            return Some(e.to_string());
        }
        let content = match &response["llmContent"] {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => return None,
        };
        let failed = content.lines().any(|l| {
            l.trim()
                .strip_prefix("Exit Code:")
                .map(str::trim)
                .is_some_and(|code| !code.is_empty() && code != "0" && code != "(none)")
        });
        failed.then_some(content)
    }
}

/// Whether hooks of `agent` may add anything.
pub fn inject(app: &App, agent: &str) -> bool {
    let c = &app.config.config.context;
    c.inject && !c.inject_off.iter().any(|a| a == agent)
}

/// The answer to a hook: `{"hookSpecificOutput": {...}}`, or `{}`.
pub fn answer(event: &str, context: Option<&str>) -> Result<String> {
    let answer = json::context::Hook {
        hook_specific_output: context.map(|text| json::context::HookOutput {
            additional_context: text,
            hook_event_name: event,
        }),
    };
    Ok(serde_json::to_string(&answer)?)
}

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

/// The file that records which errors a session was already told about.
fn seen_file(app: &App, agent: &str, session: &str) -> PathBuf {
    let key = deja_model::sha256_hex(format!("{agent}\0{session}").as_bytes());
    app.paths
        .data_dir
        .join("hooks")
        .join(format!("{agent}-{}", &key[..16]))
}

/// Records `error` for `session`; false when it was recorded already.
fn first_time(path: &Path, error: &str) -> bool {
    let hash = deja_model::sha256_hex(error.as_bytes());
    let seen = std::fs::read_to_string(path).unwrap_or_default();
    if seen.lines().any(|l| l == hash) {
        return false;
    }
    if let Some(dir) = path.parent() {
        let _ = deja_store::create_private_dir(dir);
        if seen.is_empty() {
            forget_old_sessions(dir);
        }
    }
    let _ = deja_fs::atomic_write(path, format!("{seen}{hash}\n").as_bytes());
    true
}

/// How long a session's record of the errors it was told about is kept.
const SEEN_KEPT: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);

/// Removes the records of sessions untouched for [`SEEN_KEPT`] (run when a
/// new session's first note is recorded, so the folder stays small).
fn forget_old_sessions(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > SEEN_KEPT);
        if old && e.file_type().is_ok_and(|t| t.is_file()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
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

/// The best message of this machine's earlier sessions (never `own`) that
/// holds most of the error's `terms`: an FTS5 search of all of the most
/// telling ones together (so that rare words bound the work), widened once
/// to fewer, each candidate then checked for [`MIN_SHARE`] of every term.
fn same_error_message(
    store: &Store,
    terms: &[String],
    error: &str,
    own: Option<&str>,
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
        let best = ids.iter().filter_map(|id| rows.get(id)).find(|r| {
            r.origin.is_none()
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
    let Some(hit) = same_error_message(&store, &terms, &query, input.session_id())? else {
        return Ok(None);
    };
    if let Some(session) = input.session_id() {
        if !first_time(&seen_file(app, agent, session), &query) {
            return Ok(None);
        }
    }
    // What was done next: the agent's next message after the hit.
    let next = store
        .session_row(&hit.harness, &hit.session_id)?
        .map(|row| store.load_session(&row))
        .transpose()?
        .and_then(|s| {
            s.messages
                .into_iter()
                .skip(usize::try_from(hit.message_index).unwrap_or(0) + 1)
                .find(|m| m.role == Role::Assistant)
                .map(|m| m.text)
        });
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
    let quote = |label: &str, text: &str, room: usize| {
        let one = deja_model::one_line(text, room);
        format!("{label}: {}\n", frame::untrusted(frame::cut(&one, room)))
    };
    let room = max_bytes
        .saturating_sub(head.len() + named.len() + frame::open().len() + frame::close().len() + 40)
        / 2;
    let mut body = named;
    body.push_str(&quote("there", &hit.text, room));
    if let Some(next) = &next {
        body.push_str(&quote("what was done", next, room));
    }
    let note = format!("{head}{}{body}{}", frame::open(), frame::close());
    Ok(Some(frame::cut(&note, max_bytes).to_string()))
}

/// Runs the hook: prints its answer (always, `{}` when there is nothing to add).
pub fn run(
    app: &App,
    agent: &str,
    event: Event,
    project: Option<&str>,
    max_bytes: usize,
) -> Result<()> {
    let input = Input::read();
    let text = if !inject(app, agent) {
        None
    } else {
        match event {
            Event::SessionStart => {
                let dir = project
                    .map(PathBuf::from)
                    .or_else(|| input.cwd())
                    .or_else(|| std::env::current_dir().ok());
                dir.and_then(|d| {
                    match super::context::digest_for(
                        app,
                        &super::context::project_of(&d),
                        max_bytes,
                    ) {
                        Ok(d) => Some(d.text),
                        Err(e) => {
                            eprintln!("deja context: {e:#}");
                            None
                        }
                    }
                })
            }
            Event::ToolFailure => {
                let cap = app.config.config.context.note_max_bytes;
                match failure_note(app, agent, &input, cap) {
                    Ok(note) => note,
                    Err(e) => {
                        eprintln!("deja context: {e:#}");
                        None
                    }
                }
            }
        }
    };
    let name = match (event, agent) {
        (Event::SessionStart, _) => "SessionStart",
        (Event::ToolFailure, "gemini") => "AfterTool",
        (Event::ToolFailure, _) => "PostToolUseFailure",
    };
    println!("{}", answer(name, text.as_deref())?);
    Ok(())
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
    fn a_failure_is_read_from_each_agents_input() {
        let input = |v: Value| Input { json: v };
        let claude = input(serde_json::json!({"error": "Exit code 1\nboom"}));
        assert_eq!(claude.error().as_deref(), Some("Exit code 1\nboom"));
        let gemini = |content: &str| {
            input(
                serde_json::json!({"tool_response": {"llmContent": content, "returnDisplay": ""}}),
            )
        };
        let failed = gemini("Command: make\nOutput: Error: no rule\nExit Code: 2\n");
        assert!(failed.error().unwrap().contains("no rule"));
        assert_eq!(
            gemini("Command: ls\nOutput: a b\nExit Code: 0\n").error(),
            None
        );
        assert_eq!(gemini("Command: ls\nOutput: a b\n").error(), None);
        let object = input(serde_json::json!({"tool_response": {"error": {"message": "denied"}}}));
        assert_eq!(object.error().as_deref(), Some("denied"));
        assert_eq!(input(Value::Null).error(), None);
    }

    #[test]
    fn an_empty_answer_is_an_empty_object() {
        assert_eq!(answer("SessionStart", None).unwrap(), "{}");
        let a: Value =
            serde_json::from_str(&answer("PostToolUseFailure", Some("n")).unwrap()).unwrap();
        assert_eq!(
            a["hookSpecificOutput"]["hookEventName"],
            "PostToolUseFailure"
        );
        assert_eq!(a["hookSpecificOutput"]["additionalContext"], "n");
    }
}
