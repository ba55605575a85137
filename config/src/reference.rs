//! The configuration reference: a description of every key and the commands
//! that read it, in one table, and the Markdown page (`docs/configuration.md`)
//! generated from that table, the default file (types and defaults), the
//! bounds and the choices, so that the page cannot drift from the code.

use std::fmt::Write as _;

use super::*;

/// What the reference says about one key.
#[derive(Debug, Clone, Copy)]
pub struct KeyDoc {
    /// The dotted key (`recall.limit`); `harness.<name>.enabled` for a key
    /// every harness section takes, `harness.aider.timezone` for one reader's.
    pub key: &'static str,
    /// What the key does.
    pub description: &'static str,
    /// The commands that read it, without `deja ` (`"index"`, `"team push"`).
    pub read_by: &'static [&'static str],
    /// How to show the default when the default file's value does not say it
    /// (an empty string that stands for a place found at run time).
    pub default: Option<&'static str>,
    /// The type, for a key the default file does not set (a reader's own).
    pub kind: Option<&'static str>,
}

const fn key(
    key: &'static str,
    read_by: &'static [&'static str],
    description: &'static str,
) -> KeyDoc {
    KeyDoc {
        key,
        description,
        read_by,
        default: None,
        kind: None,
    }
}

const fn shown(doc: KeyDoc, default: &'static str) -> KeyDoc {
    KeyDoc {
        default: Some(default),
        ..doc
    }
}

/// Every command: the key decides where everything is.
const EVERY: &[&str] = &["every command"];
/// The commands that run readers over transcripts: `deja index`, recall's
/// freshness pass, the MCP server's background index, `deja aider` after
/// aider exits, `deja parse`, and `deja doctor`'s report.
const READING: &[&str] = &["index", "recall", "mcp", "aider", "parse", "doctor"];
/// The commands that store transcripts' text (and so redact it).
const STORING: &[&str] = &[
    "index",
    "recall",
    "mcp",
    "aider",
    "parse",
    "team push",
    "team pull",
];
/// The commands that embed (a query, or new messages).
const EMBEDDING: &[&str] = &["index", "recall", "mcp", "ui", "team pull", "doctor"];
/// The commands that take the writer lock and wait for it.
const WAITING: &[&str] = &["index", "forget", "aider", "team pull", "mcp"];
/// The team commands.
const TEAM: &[&str] = &["team push", "team pull", "team status", "doctor"];
/// The commands that load reader plugins.
const LOADING: &[&str] = &[
    "index", "recall", "mcp", "aider", "parse", "plugins", "resume", "doctor",
];

/// Every key deja's configuration has, described. A key of the default file
/// missing here fails the tests, and so does an entry here that is no key.
pub const KEYS: &[KeyDoc] = &[
    shown(
        key("store.dir", EVERY, "Where the index lives (the SQLite database, the vectors, the model, the runtime, plugins). `$DEJA_HOME` overrides it."),
        "`$DEJA_HOME`, else the platform data folder: `~/.local/share/deja` on Linux (`$XDG_DATA_HOME/deja`), `~/Library/Application Support/deja` on macOS",
    ),
    key("index.max_file_bytes", &["index", "recall", "mcp", "aider", "parse"], "Larger transcripts are skipped with a message, without being read (and tried again on every run: raising the limit indexes them)."),
    key("index.lock_wait_secs", WAITING, "How long a second `deja index` (or another writer) waits for a running one, in seconds; `deja index --no-wait` does not wait at all."),
    key("index.read_tracked", READING, "Read the transcripts found in a code folder (a project's `.aider.chat.history.md` or `.crush/crush.db`) that the project's git repository tracks. `false`: they came with the repository, not from this machine's agents, so they are left out with a note naming the repository."),
    key("embed.enabled", EMBEDDING, "Compute embeddings for recall by meaning. `false`: lexical search only, no model loaded."),
    key("embed.model", EMBEDDING, "Which installed model embeds the history when `embed.model_dir` is empty: `minilm` (all-MiniLM-L6-v2, English), `multilingual` (multilingual-e5-small, installed by `scripts/fetch-model --multilingual`) or `auto`: the model the store's vectors were made with, and for a history not embedded yet the multilingual model when it is installed and at least 20% of the newest 2,000 messages are mostly in Chinese, Japanese, Korean or another non-Latin script, else MiniLM. `deja doctor` says which and why. Changing the model re-embeds everything. See [Recall: Languages](recall.md#languages)."),
    shown(
        key("embed.model_dir", EMBEDDING, "The folder of the ONNX model (`model.onnx`) and its tokenizer files (`tokenizer.json`, `config.json`, `special_tokens_map.json`, `tokenizer_config.json`); `<data>/models/all-MiniLM-L6-v2` is the same model in fp32 arithmetic (1.3 to 1.7 times slower to index, the same recall: BENCHMARKS.md). Another model: see [Getting started](getting-started.md#another-model)."),
        "`<data>/models/all-MiniLM-L6-v2-int8` (`all-MiniLM-L6-v2` while only that one is installed)",
    ),
    shown(
        key("embed.runtime", EMBEDDING, "The ONNX Runtime shared library (`libonnxruntime.so`, `.dylib`, `onnxruntime.dll`)."),
        "`<data>/runtime/libonnxruntime.so`, then `$ORT_DYLIB_PATH`",
    ),
    key("embed.max_tokens", EMBEDDING, "The longest text, in model tokens, embedded as one vector; longer messages are split into windows (the position limit of BERT-style models such as all-MiniLM-L6-v2 is 512). Changing it re-embeds everything."),
    key("embed.overlap_tokens", EMBEDDING, "Tokens shared by consecutive windows of a long message; less than half of `embed.max_tokens`. Changing it re-embeds everything."),
    key("embed.context_tokens", EMBEDDING, "Tokens of the neighbouring messages (the end of the previous one, the start of the next one) embedded with each message, so that a short reply is found by what it replies to; 0: each message alone; at most a quarter of `embed.max_tokens`. Changing it re-embeds everything."),
    key("embed.max_windows", EMBEDDING, "Most windows embedded of one long message: its first and last and others evenly spaced between (0: all); all of its words stay searchable by the lexical half. Changing it re-embeds everything."),
    key("embed.first_windows", &["index", "mcp", "team pull"], "Most windows of one long message embedded by the first pass over the history, chosen the same way; a second pass embeds the rest (0: all in one pass). The vectors end the same either way, so changing it re-embeds nothing."),
    key("embed.batch_size", &["index", "mcp", "team pull"], "Most texts per model call while indexing."),
    key("embed.batch_tokens", &["index", "mcp", "team pull"], "Most padded tokens per model call (the texts of a call are padded to the longest): bounds the model's memory, long texts go a few at a time; at least `embed.max_tokens`."),
    key("embed.threads", EMBEDDING, "ONNX Runtime threads (0: one per core)."),
    key("recall.limit", &["recall", "ui"], "Hits shown unless `-n` is given."),
    key("recall.mode", &["recall", "ui"], "The ranking: `hybrid` (by meaning and by words, fused), `semantic` or `lexical`; `--mode` overrides it."),
    key("recall.per_session", &["recall", "ui"], "Most messages of one session among the hits (0: no cap), so the list reaches more sessions; `--per-session N` overrides it."),
    key("recall.refresh", &["recall"], "Before answering, read the transcripts that changed since the last index (their words are searchable at once; embeddings follow at the next `deja index`); `--no-refresh` skips it."),
    key("recall.refresh_ms", &["recall"], "The time that pass may take, in milliseconds."),
    key("recall.refresh_max_transcripts", &["recall"], "Above this many known transcripts the pass is skipped: checking them all costs more than the recall itself (`deja index`, or the MCP server's background runs, keep such a history fresh)."),
    key("recall.min_similarity", &["recall", "mcp", "ui"], "Relevance floor: a message that shares no word with the query is a hit only when its cosine similarity to the query is at least this (0: no floor). A message that matches by words always passes. See [Recall](recall.md#knowing-when-nothing-answers)."),
    key("recall.min_score", &["recall", "mcp", "ui"], "Relevance bar of hybrid ranking (the default mode): an answer whose best hit scores under this is no answer, so a query nothing in the history answers says \"no matches\" (exit 1), and an agent is told nothing matched, instead of getting the nearest noise (0: always list what ranks). Hits that remain but score under 0.6 are marked weak. See [Recall](recall.md#knowing-when-nothing-answers)."),
    key("mcp.limit", &["mcp"], "Hits of an MCP `recall` call that does not ask for `limit`."),
    key("mcp.per_session", &["mcp"], "Most messages of one session among an MCP `recall` answer's hits; a call may ask for another `per_session`."),
    key("mcp.max_answer_bytes", &["mcp"], "Most bytes of text in one MCP tool answer; longer answers are cut on a character boundary with a note saying what was left out."),
    key("mcp.index", &["mcp"], "Index in the background while `deja mcp` runs (at start, then every `mcp.index_interval_secs`), under the same lock as `deja index`; calls never wait for it."),
    key("mcp.index_interval_secs", &["mcp"], "Seconds between background index runs (0: only once, at start)."),
    key("context.max_bytes", &["context", "aider"], "Most bytes of the project digest `deja context` prints (and agents get when a session starts); the newest sessions come first; `--max-bytes` overrides it."),
    key("context.aider", &["aider"], "`deja aider` writes the project's digest to a file and passes it to aider with `--read`; `false`: it starts aider without it."),
    key("context.pulled", &["context"], "Sessions pulled from teammates in the digest: `\"after\"` this machine's own, each labelled with who published it, or `\"omit\"`."),
    key("context.inject", &["context"], "What the hooks `deja setup` wires add to an agent's session on their own (`deja context --hook`): the digest when a session starts, and a short note when a command fails that an earlier session met. `false`: they add nothing (the MCP tools still answer when the agent asks)."),
    key("context.inject_off", &["context"], "Agents whose hooks add nothing, by name: `\"claude\"`, `\"codex\"`, `\"gemini\"`, `\"qwen\"`, `\"droid\"`."),
    key("context.note_max_bytes", &["context"], "Most bytes of the note a failing command gets (`deja context --hook AGENT --on tool-failure`)."),
    key("context.code_folder_sessions", &["context", "mcp"], "Give agents the sessions read from transcripts found in a code folder (inside a project, where a cloned repository may have brought them): in the digest, the note a failing command gets, and the MCP server's `recall` and `sessions`. `false`: only `deja sessions`, `deja recall` and `deja show` show them, labelled \"found in a code folder\"."),
    key("redact.enabled", STORING, "Replace secrets (API keys, tokens, private keys, passwords in URLs, ...) with typed markers such as `[REDACTED:github-token]` before anything is stored, embedded or printed (see [Security](security.md)). `deja team push` refuses to run with it off unless `--force`. Changing it makes the next `deja index` read every transcript again."),
    key("redact.patterns", STORING, "Extra patterns, a list of `{ name = \"...\", regex = \"...\" }`; matches become `[REDACTED:<name>]`. Example: `patterns = [{ name = \"acme-key\", regex = \"acme_[0-9a-f]{32}\" }]`."),
    key("plugins.paths", LOADING, "Extra plugin files or folders to load, before the others (see [Writing a reader](writing-a-reader.md#where-deja-looks-for-readers))."),
    key("team.url", TEAM, "The team store, `postgres://USER@HOST:PORT/DATABASE` (a socket folder as host: `postgres://USER@%2Fvar%2Frun%2Fpostgresql/DATABASE`); `$DEJA_TEAM_URL` overrides it; empty: no team store. A password written in it is refused unless this config file is readable by you alone (and `deja config` prints it as `***`)."),
    key("team.password_file", TEAM, "A file holding the database password (its first line), readable by you alone (mode `0600`); `$DEJA_TEAM_PASSWORD` overrides it."),
    key("team.tls", TEAM, "`auto` (`require` for a TCP host, `disable` for a Unix socket folder), `disable`, `prefer` (when the server offers it) or `require`. When TLS is used, the server's certificate and name are verified, and over TCP the password goes only through SCRAM-SHA-256-PLUS (channel binding); `disable` on a TCP host is refused unless `team.allow_insecure_auth`."),
    key("team.allow_insecure_auth", TEAM, "Over TCP, allow password authentication an attacker on the network could capture or relay (cleartext, MD5, SCRAM without TLS or without channel binding, or none); no effect on a Unix socket."),
    key("team.ca_file", TEAM, "A PEM file of the certificate authority that signed the server's certificate, trusted besides the system's, for a server with a private CA."),
    shown(
        key("team.name", TEAM, "Who and which machine this is in the team store (`user@machine`); set it on every machine where `$USER@<hostname>` could repeat."),
        "`$USER@<hostname>`",
    ),
    key("team.share", TEAM, "The projects whose sessions this machine publishes: directories (`~/` allowed) or folder names, as `--project` takes them. Nothing is shared unless listed. Example: `share = [\"~/src/billing\", \"api\"]`."),
    key("team.connect_timeout_secs", TEAM, "Seconds to wait for the server when connecting."),
    key("team.pull_max_messages", &["team pull"], "A pulled session with more messages (or more files or commands records) is skipped and reported, never loaded whole."),
    key("team.pull_max_message_bytes", &["team pull"], "A pulled session with a longer message (bytes of text) is skipped and reported."),
    key("team.pull_max_session_bytes", &["team pull"], "A pulled session with more text in all (bytes of messages, files and commands records) is skipped and reported."),
    key("harness.<name>.enabled", READING, "Run this reader."),
    key("harness.<name>.roots", READING, "Extra files or folders holding its transcripts."),
    key("harness.<name>.exclude", READING, "Glob patterns of paths to leave out ([globset](https://docs.rs/globset) syntax: `*` and `?` within a path component, `**` across components, `[ab]`, `{x,y}`; a pattern without `/` matches any one component, e.g. `scratch*`; a pattern with `/` matches that path and everything below it; `~/` is your home; an invalid pattern is reported by `deja index` and `deja doctor` and leaves nothing out)."),
    KeyDoc {
        default: Some("(this machine's zone)"),
        kind: Some("string"),
        ..key("harness.aider.timezone", READING, "The zone of aider's session headers, which are local time: an IANA name (`\"Europe/Berlin\"`), `\"UTC\"` or an offset (`\"+02:00\"`).")
    },
];

/// Errors building the reference.
#[derive(Debug, thiserror::Error)]
pub enum ReferenceError {
    /// The embedded default file is not valid TOML.
    #[error("the embedded default configuration is not valid TOML: {0}")]
    Defaults(String),
    /// Keys of the default file that [`KEYS`] does not describe, or
    /// sections that [`SECTIONS`] does not.
    #[error("config keys or sections without a description in config/src/reference.rs (`KEYS`, `SECTIONS`): {}", .0.join(", "))]
    Undescribed(Vec<String>),
    /// Entries of [`KEYS`] that are no key of the configuration.
    #[error("config/src/reference.rs `KEYS` describes keys the configuration does not have: {}", .0.join(", "))]
    Unknown(Vec<String>),
}

/// Every key of the default file, dotted, with its default value; the keys
/// of a `[harness.<name>]` section as `harness.<name>.<key>`.
pub fn default_keys() -> Result<Vec<(String, Value)>, ReferenceError> {
    keys_of(DEFAULT_TOML)
}

fn keys_of(default_toml: &str) -> Result<Vec<(String, Value)>, ReferenceError> {
    let defaults: Table = default_toml
        .parse()
        .map_err(|e: toml::de::Error| ReferenceError::Defaults(e.message().to_string()))?;
    let mut keys = Vec::new();
    for (section, table) in &defaults {
        let Value::Table(table) = table else { continue };
        if section == "harness" {
            for harness in table.values() {
                let Value::Table(harness) = harness else {
                    continue;
                };
                for (k, v) in harness {
                    let dotted = format!("harness.<name>.{k}");
                    if !keys.iter().any(|(d, _)| *d == dotted) {
                        keys.push((dotted, v.clone()));
                    }
                }
            }
            continue;
        }
        for (k, v) in table {
            keys.push((format!("{section}.{k}"), v.clone()));
        }
    }
    Ok(keys)
}

/// The keys of the default file that [`KEYS`] does not describe, and the
/// entries of [`KEYS`] that are no key.
pub fn check_keys() -> Result<(), ReferenceError> {
    check(DEFAULT_TOML, KEYS)
}

fn check(default_toml: &str, docs: &[KeyDoc]) -> Result<(), ReferenceError> {
    let keys = keys_of(default_toml)?;
    let described = |k: &str| {
        docs.iter()
            .any(|d| d.key == k && !d.description.trim().is_empty() && !d.read_by.is_empty())
    };
    let undescribed: Vec<String> = keys
        .iter()
        .map(|(k, _)| k)
        .filter(|k| !described(k))
        .cloned()
        .collect();
    if !undescribed.is_empty() {
        return Err(ReferenceError::Undescribed(undescribed));
    }
    let unknown: Vec<String> = docs
        .iter()
        .filter(|d| d.kind.is_none() && !keys.iter().any(|(k, _)| k == d.key))
        .map(|d| d.key.to_string())
        .collect();
    if !unknown.is_empty() {
        return Err(ReferenceError::Unknown(unknown));
    }
    let mut sections: Vec<String> = docs
        .iter()
        .map(|d| section_of(d.key))
        .filter(|s| {
            !SECTIONS
                .iter()
                .any(|(known, about)| known == s && !about.is_empty())
        })
        .map(|s| format!("[{s}]"))
        .collect();
    sections.dedup();
    if !sections.is_empty() {
        return Err(ReferenceError::Undescribed(sections));
    }
    Ok(())
}

/// How a value's type is written in the reference.
fn kind_of(dotted: &str, v: &Value) -> &'static str {
    match v {
        Value::String(_) if CHOICES.iter().any(|(k, _)| *k == dotted) => "choice",
        Value::String(_) => "string",
        Value::Integer(_) => "integer",
        Value::Float(_) => "decimal",
        Value::Boolean(_) => "boolean",
        Value::Array(_) if dotted == "redact.patterns" => "list of `{ name, regex }`",
        Value::Array(_) => "list of strings",
        Value::Datetime(_) => "date",
        Value::Table(_) => "table",
    }
}

/// What values a key takes, from the bounds and choices.
fn allowed(dotted: &str) -> String {
    if let Some((_, least, most)) = BOUNDS.iter().find(|(k, _, _)| *k == dotted) {
        return format!("{least} to {most}");
    }
    if let Some((_, least, most)) = FLOAT_BOUNDS.iter().find(|(k, _, _)| *k == dotted) {
        return format!("{least} to {most}");
    }
    if let Some((_, choices)) = CHOICES.iter().find(|(k, _)| *k == dotted) {
        return backticked(choices.iter().copied());
    }
    String::new()
}

/// A default value as the reference shows it.
fn default_text(v: &Value) -> String {
    match v {
        Value::String(s) if s.is_empty() => "`\"\"`".to_string(),
        Value::String(s) => format!("`\"{s}\"`"),
        other => format!("`{other}`"),
    }
}

/// A table cell: no line breaks, pipes escaped.
fn cell(text: &str) -> String {
    text.replace('\n', " ").replace('|', "\\|")
}

const HEADER: &str = "<!-- Generated from config/src/reference.rs, config/default.toml and config/src/validate.rs: do not edit by hand. Regenerate with `UPDATE_DOCS=1 cargo test -p deja-config reference`. -->

# Configuration reference

deja reads its configuration from `$DEJA_CONFIG` (which must then exist),
else from `~/.config/deja/config.toml` on Linux (`$XDG_CONFIG_HOME/deja`).
Every key is optional: a config file overrides any key of the default
configuration, `config/default.toml`, which is embedded in the binary with
every key documented (`deja config --default` prints it). `deja config`
shows each effective value and where it came from (default, the file, or an
environment variable).

A mistake in the file is an error that names the file, the line and the full
key (`recall.limit`, not `limit`): invalid TOML, an unknown section or key, a
value of the wrong type or out of its bounds, a `[harness.<name>]` section
that no loaded reader plugin reads (the error lists those that are loaded), or
a key its reader does not accept. Every command refuses such a file with the
same message (exit 2), except the ones that help to fix it: `deja doctor`
reports it as a problem and checks everything else with the defaults,
`deja config --default` and `deja --help` print what they always print with
the error as a warning, and `deja plugins` still lists the plugins when only a
harness section is wrong. When the file has harness sections, every command
loads the plugins to check them, so that all commands accept the same files.

Numbers are bounded as the *allowed* column says; decimals may be written as
whole numbers (`0`, `1`). *Read by* names the commands whose behaviour the
key changes (`recall` includes its freshness pass, which reads changed
transcripts; `mcp` includes the server's background index).
";

const FOOTER: &str = "
## What a change does to the store

Changing `embed.model_dir`, `embed.max_tokens`, `embed.overlap_tokens`,
`embed.context_tokens` or `embed.max_windows` (or a model's prefixes or
pooling, see [Getting started](getting-started.md#another-model)) makes the
next `deja index` re-embed everything (vectors of different models or
windowings never mix); vectors already computed for a text are cached and
reused (a vector whose text left the store, changed or forgotten, is dropped).
Until then recall answers by words and says why.

Changing `redact.*` or a reader's `harness.<name>` section makes the next
`deja index` read the transcripts it shapes again (all of them for
redaction, that reader's for its section), also those whose content changed
in the meantime, and text stored before that is gone now is scrubbed from the
data folder, the vector file included, as after `deja forget`.
";

/// The section a dotted key belongs to (`harness` for `harness.<name>.*`).
fn section_of(dotted: &str) -> &str {
    dotted.split('.').next().unwrap_or_default()
}

/// The configuration reference as Markdown: one table per section, in the
/// order of [`SECTIONS`], its keys in the order of [`KEYS`], with every key's
/// type, default, bounds or choices, the commands that read it and its
/// description.
pub fn reference_markdown() -> Result<String, ReferenceError> {
    check_keys()?;
    let defaults = default_keys()?;
    let mut out = String::from(HEADER);
    for (section, about) in SECTIONS {
        let title = if *section == "harness" {
            "[harness.<name>]".to_string()
        } else {
            format!("[{section}]")
        };
        let _ = write!(
            out,
            "\n## `{title}`\n\n{about}\n\n| key | type | default | allowed | read by | description |\n|---|---|---|---|---|---|\n"
        );
        for doc in KEYS.iter().filter(|d| section_of(d.key) == *section) {
            let value = defaults.iter().find(|(k, _)| k == doc.key).map(|(_, v)| v);
            let kind = match (doc.kind, value) {
                (Some(kind), _) => kind,
                (None, Some(v)) => kind_of(doc.key, v),
                (None, None) => "",
            };
            let default = match (doc.default, value) {
                (Some(shown), _) => shown.to_string(),
                (None, Some(v)) => default_text(v),
                (None, None) => String::new(),
            };
            let read_by = doc
                .read_by
                .iter()
                .map(|c| {
                    if *c == "every command" {
                        c.to_string()
                    } else {
                        format!("`deja {c}`")
                    }
                })
                .collect::<Vec<_>>()
                .join(", ");
            let env = ENV_OVERRIDES
                .iter()
                .filter(|(_, k)| *k == doc.key)
                .map(|(v, _)| format!(" Environment: `${v}`."))
                .collect::<String>();
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} | {} | {}{} |",
                cell(doc.key),
                cell(kind),
                cell(&default),
                cell(&allowed(doc.key)),
                cell(&read_by),
                cell(doc.description),
                cell(&env),
            );
        }
    }
    out.push_str(FOOTER);
    Ok(out)
}

/// What each section is for, above its table.
const SECTIONS: &[(&str, &str)] = &[
    ("store", "Where deja keeps its data."),
    ("index", "Limits of `deja index` and of every pass that reads transcripts."),
    ("embed", "The local embedding model and how messages are cut into windows for it."),
    ("recall", "The defaults of `deja recall` and of the web page's search."),
    ("mcp", "The MCP server, `deja mcp`."),
    ("context", "The project digest (`deja context`) and what the hooks `deja setup` wires add to agents' sessions."),
    ("redact", "Secret redaction, before anything is stored, embedded or printed."),
    ("plugins", "Where else reader plugins are loaded from."),
    ("team", "Team memory through a shared PostgreSQL database (see [Team memory](team.md)). Nothing is shared unless listed in `share`."),
    ("harness", "One section per reader, `[harness.aider]`, `[harness.gemini]`, ...: every section takes `enabled`, `roots` and `exclude`; a reader may accept more keys, and a key it does not accept is an error naming the section. A missing section means the reader runs with no extra roots."),
];

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// The page the tests compare with the generated text.
    const PAGE: &str = "docs/configuration.md";

    #[test]
    fn reference_describes_every_key() {
        if let Err(e) = check_keys() {
            panic!("{e}");
        }
        for doc in KEYS {
            assert!(
                !doc.description.trim().is_empty(),
                "`{}` has no description",
                doc.key
            );
            assert!(
                !doc.read_by.is_empty(),
                "`{}` names no command that reads it",
                doc.key
            );
        }
    }

    #[test]
    fn reference_names_a_key_without_a_description() {
        let with_new = DEFAULT_TOML.replace("[recall]\n", "[recall]\nnew_key = 1\n");
        let e = check(&with_new, KEYS).unwrap_err().to_string();
        assert!(e.contains("recall.new_key"), "{e}");
        // A description without the commands that read the key is no description.
        let mut docs = KEYS.to_vec();
        docs.iter_mut()
            .find(|d| d.key == "recall.limit")
            .unwrap()
            .read_by = &[];
        let e = check(DEFAULT_TOML, &docs).unwrap_err().to_string();
        assert!(e.contains("recall.limit"), "{e}");
        // A description of a key the configuration does not have.
        docs.push(key("recall.gone", &["recall"], "No longer a key."));
        docs.iter_mut()
            .find(|d| d.key == "recall.limit")
            .unwrap()
            .read_by = &["recall"];
        let e = check(DEFAULT_TOML, &docs).unwrap_err().to_string();
        assert!(e.contains("recall.gone"), "{e}");
    }

    #[test]
    fn reference_states_every_bound_and_choice() {
        let page = reference_markdown().unwrap();
        for (key, least, most) in BOUNDS {
            let row = page
                .lines()
                .find(|l| l.starts_with(&format!("| `{key}` |")))
                .unwrap();
            assert!(row.contains(&format!("| {least} to {most} |")), "{row}");
        }
        for (key, least, most) in FLOAT_BOUNDS {
            let row = page
                .lines()
                .find(|l| l.starts_with(&format!("| `{key}` |")))
                .unwrap();
            assert!(row.contains(&format!("| {least} to {most} |")), "{row}");
        }
        for (key, choices) in CHOICES {
            let row = page
                .lines()
                .find(|l| l.starts_with(&format!("| `{key}` |")))
                .unwrap();
            for c in *choices {
                assert!(row.contains(&format!("`{c}`")), "{row}");
            }
        }
    }

    #[test]
    fn reference_page_is_generated_from_the_schema() {
        let generated = reference_markdown().unwrap();
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(PAGE);
        if std::env::var_os("UPDATE_DOCS").is_some() {
            std::fs::write(&path, &generated).unwrap();
        }
        let written = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            written == generated,
            "{PAGE} differs from the reference generated from the configuration's schema; \
             regenerate it with `UPDATE_DOCS=1 cargo test -p deja-config reference` and commit it"
        );
    }
}
