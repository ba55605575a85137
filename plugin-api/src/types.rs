//! The FFI-safe values that cross the plugin boundary (ABI 1.x).
//!
//! These types are frozen for the whole of ABI major version 1: abi_stable checks
//! their layout when a plugin loads, so changing a field here is a major-version
//! change. Timestamps are milliseconds since the Unix epoch, UTC.

use abi_stable::std_types::{ROption, RSlice, RStr, RString, RVec};
use abi_stable::StableAbi;

use crate::version::AbiVersion;

/// What a plugin says about itself.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, PartialEq, Eq)]
pub struct PluginInfo {
    /// Short plugin name, e.g. `aider`.
    pub name: RString,
    /// The plugin's own version, e.g. `0.3.1`.
    pub version: RString,
    /// The harness whose transcripts it reads, e.g. `aider`, `gemini`. Unique among loaded plugins.
    pub harness: RString,
    /// One line for `deja plugins`.
    pub description: RString,
    /// The ABI version the plugin was built for.
    pub abi: AbiVersion,
    /// Keys the plugin accepts in its config section beyond the common ones
    /// (`enabled`, `roots`, `exclude`). Any other key is reported as an error by the host.
    pub config_keys: RVec<RString>,
}

/// A description a reader serves: its file name and text (ABI 1.1).
#[repr(C)]
#[derive(StableAbi, Debug, Clone, PartialEq, Eq)]
pub struct DescriptionFile {
    /// The file name, e.g. `opencode.toml`.
    pub name: RString,
    /// The description's text.
    pub text: RString,
}

/// The description files a reader serves (ABI 1.1).
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Default, PartialEq, Eq)]
pub struct Descriptions {
    /// The extension of the description files it reads from plugin folders
    /// (`toml`); empty when it serves none.
    pub extension: RString,
    /// Descriptions built into the plugin, served like files found in its
    /// folder (a file of the same harness in a plugin folder wins).
    pub builtin: RVec<DescriptionFile>,
}

/// The variable of the context that holds the text of the description a
/// reader is called for (ABI 1.1).
pub const DESCRIPTION_VAR: &str = "DEJA_READER_DESCRIPTION";
/// The variable of the context that names where that description came from:
/// its file, or `<plugin file>#<name>` for a built-in one (ABI 1.1).
pub const DESCRIPTION_PATH_VAR: &str = "DEJA_READER_DESCRIPTION_PATH";

/// One environment variable.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, PartialEq, Eq)]
pub struct EnvVar {
    /// Variable name.
    pub key: RString,
    /// Its value (lossily converted to UTF-8).
    pub value: RString,
}

/// What the host tells a plugin about the user's machine and configuration.
/// The host does no harness-specific discovery: the plugin works from this.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, PartialEq, Eq)]
pub struct HostContext {
    /// The user's home directory.
    pub home: RString,
    /// The environment of the deja process.
    pub env: RVec<EnvVar>,
    /// The plugin's own section of the user's config, as a JSON object
    /// (`{}` when absent). Common keys: `roots` (array of paths), `exclude` (array of glob patterns).
    pub config_json: RString,
}

/// Where a plugin looked for transcripts, for `deja doctor`.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, PartialEq, Eq)]
pub struct SearchedPlace {
    /// A file or directory the plugin examined.
    pub path: RString,
    /// Why it looked there (e.g. `AIDER_CHAT_HISTORY_FILE`, `config roots`).
    pub reason: RString,
    /// Whether it exists.
    pub exists: bool,
}

/// The result of discovery.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Default, PartialEq, Eq)]
pub struct Discovery {
    /// Transcript files to parse, each once.
    pub transcripts: RVec<RString>,
    /// Places examined.
    pub searched: RVec<SearchedPlace>,
    /// Non-fatal problems, e.g. an unreadable folder.
    pub warnings: RVec<RString>,
}

/// One transcript for a plugin to parse.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy)]
pub struct ParseRequest<'a> {
    /// The transcript's path.
    pub path: RStr<'a>,
    /// The transcript's bytes, exactly as on disk.
    pub bytes: RSlice<'a, u8>,
    /// The file's modification time (ms since epoch, UTC), a fallback for missing timestamps.
    pub modified_ms: i64,
    /// The host context, as for discovery.
    pub context: &'a HostContext,
}

/// Who wrote a message.
#[repr(u8)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// The person at the keyboard.
    User = 0,
    /// The model.
    Assistant = 1,
}

/// One message of a session.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// Its text, as the harness showed it.
    pub text: RString,
    /// When it was written (ms since epoch, UTC).
    pub timestamp_ms: i64,
    /// The harness's own message id, when it has one.
    pub native_id: ROption<RString>,
}

/// What happened to a file.
#[repr(u8)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileAction {
    /// The harness edited or wrote it.
    Edit = 0,
    /// It was added to the context as editable.
    Add = 1,
    /// It was added to the context read-only.
    ReadOnly = 2,
    /// The agent read it.
    Read = 3,
}

impl FileAction {
    /// The lower-case name used in output and the store.
    pub fn as_str(self) -> &'static str {
        match self {
            FileAction::Edit => "edit",
            FileAction::Add => "add",
            FileAction::ReadOnly => "read-only",
            FileAction::Read => "read",
        }
    }
}

/// A file a session touched.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, PartialEq, Eq)]
pub struct FileRecord {
    /// The path as the harness wrote it, resolved against the project directory when relative.
    pub path: RString,
    /// What happened to it.
    pub action: FileAction,
    /// When (ms since epoch, UTC).
    pub timestamp_ms: i64,
}

/// Who ran a command.
#[repr(u8)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CommandOrigin {
    /// The user asked for it explicitly (e.g. aider's `/run`).
    User = 0,
    /// The agent ran it as a tool call.
    Agent = 1,
}

impl CommandOrigin {
    /// The lower-case name used in output and the store.
    pub fn as_str(self) -> &'static str {
        match self {
            CommandOrigin::User => "user",
            CommandOrigin::Agent => "agent",
        }
    }
}

/// A shell command a session ran.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, PartialEq, Eq)]
pub struct CommandRecord {
    /// The command line.
    pub command: RString,
    /// Who ran it.
    pub origin: CommandOrigin,
    /// When (ms since epoch, UTC).
    pub timestamp_ms: i64,
}

/// How a command ended, as far as its transcript says (ABI 1.2).
#[repr(u8)]
#[derive(StableAbi, Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum CommandStatus {
    /// The transcript does not say.
    #[default]
    Unknown = 0,
    /// It ended well (exit code 0, or the harness says it succeeded).
    Succeeded = 1,
    /// It failed (a non-zero exit code, or the harness marks its result an error).
    Failed = 2,
}

impl CommandStatus {
    /// The lower-case name used in output and the store.
    pub fn as_str(self) -> &'static str {
        match self {
            CommandStatus::Unknown => "unknown",
            CommandStatus::Succeeded => "succeeded",
            CommandStatus::Failed => "failed",
        }
    }
}

/// A command's outcome (ABI 1.2): its status and, where the transcript
/// gives one, its exit code.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CommandOutcome {
    /// Failed, succeeded or unknown.
    pub status: CommandStatus,
    /// The exit code, when the transcript records one.
    pub exit_code: ROption<i32>,
}

impl CommandOutcome {
    /// The outcome of an exit code: 0 succeeded, anything else failed.
    pub fn from_exit_code(code: i32) -> Self {
        CommandOutcome {
            status: if code == 0 {
                CommandStatus::Succeeded
            } else {
                CommandStatus::Failed
            },
            exit_code: ROption::RSome(code),
        }
    }

    /// An outcome known only as failed or not (no exit code).
    pub fn from_failed(failed: bool) -> Self {
        CommandOutcome {
            status: if failed {
                CommandStatus::Failed
            } else {
                CommandStatus::Succeeded
            },
            exit_code: ROption::RNone,
        }
    }

    /// The outcome the shell tool of Gemini CLI and its forks (Qwen Code)
    /// writes at the end of its output: an `Exit Code: N` line, or, without
    /// a number, a `Signal: S` line naming a signal (failed). `None` when
    /// the text has neither.
    pub fn from_shell_tool_output(text: &str) -> Option<Self> {
        let field = |name: &str| {
            text.lines()
                .rev()
                .find_map(|line| line.trim().strip_prefix(name))
                .map(str::trim)
        };
        if let Some(code) = field("Exit Code:").and_then(|c| c.parse::<i32>().ok()) {
            return Some(CommandOutcome::from_exit_code(code));
        }
        field("Signal:")
            .filter(|s| !s.is_empty() && *s != "(none)")
            .map(|_| CommandOutcome::from_failed(true))
    }
}

/// The outcomes of one session's commands (ABI 1.2), in the order of its
/// [`Session::commands`]; shorter when the last ones are unknown.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionOutcomes {
    /// One per command, in order.
    pub commands: RVec<CommandOutcome>,
}

/// The project a session belongs to. Any part may be unknown.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Default, PartialEq, Eq)]
pub struct Project {
    /// Absolute directory.
    pub dir: ROption<RString>,
    /// Human name (usually the directory's last component).
    pub name: ROption<RString>,
    /// The harness's own project id (e.g. Gemini's hash or slug).
    pub id: ROption<RString>,
}

/// One normalized session.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// deja's id for the session: unique within the harness and stable across re-parsing.
    pub id: RString,
    /// The harness's own id, used to resume (may be shared by several sessions).
    pub native_id: RString,
    /// Start (ms since epoch, UTC). A reader that finds no time for the
    /// session gives the transcript's modification time
    /// ([`ParseRequest::modified_ms`]) exactly: deja then marks the
    /// session's date approximate.
    pub started_at_ms: i64,
    /// Last activity (ms since epoch, UTC).
    pub updated_at_ms: i64,
    /// Where it ran.
    pub project: Project,
    /// Title or summary, when the harness records one.
    pub title: ROption<RString>,
    /// deja id of the parent session, for subagents.
    pub parent_id: ROption<RString>,
    /// When one session is found in two files, the copy with the higher precedence
    /// wins; on a tie, the later `updated_at_ms`.
    pub precedence: i32,
    /// The messages, in order.
    pub messages: RVec<Message>,
    /// Files it touched.
    pub files: RVec<FileRecord>,
    /// Commands it ran.
    pub commands: RVec<CommandRecord>,
}

/// The result of parsing one transcript.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Default, PartialEq, Eq)]
pub struct ParseOutput {
    /// Sessions that hold at least one message.
    pub sessions: RVec<Session>,
    /// Sessions found but left out because they hold no message.
    pub skipped_empty: u32,
    /// Non-fatal problems worth telling the user.
    pub warnings: RVec<RString>,
}

/// The result of parsing one transcript, with its commands' outcomes (ABI
/// 1.2). The value types of ABI 1.0 stay as they were: the outcomes travel
/// beside the sessions, `outcomes[i]` for `output.sessions[i]` (missing
/// entries: unknown).
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Default, PartialEq, Eq)]
pub struct ParseOutputV1_2 {
    /// What ABI 1.0 returns.
    pub output: ParseOutput,
    /// Per session, in the same order, its commands' outcomes.
    pub outcomes: RVec<SessionOutcomes>,
}

impl ParseOutputV1_2 {
    /// `output` with every command's outcome unknown.
    pub fn without_outcomes(output: ParseOutput) -> Self {
        ParseOutputV1_2 {
            output,
            outcomes: RVec::new(),
        }
    }

    /// The outcome of command `command` of session `session` (unknown when not given).
    pub fn outcome(&self, session: usize, command: usize) -> CommandOutcome {
        self.outcomes
            .get(session)
            .and_then(|s| s.commands.get(command))
            .copied()
            .unwrap_or_default()
    }
}

/// Most bytes of one edit's text a reader hands over (ABI 1.3) and deja
/// keeps: a longer text is cut at its last whole line within the cap (see
/// [`cap_edit_text`]).
pub const EDIT_TEXT_MAX_BYTES: usize = 64 * 1024;

/// `text` cut to [`EDIT_TEXT_MAX_BYTES`]: whole as it is when it fits, else
/// up to the end of its last line that fits (a single line longer than the
/// cap: up to the cap, on a character boundary).
pub fn cap_edit_text(text: &str) -> &str {
    if text.len() <= EDIT_TEXT_MAX_BYTES {
        return text;
    }
    let mut end = EDIT_TEXT_MAX_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let head = text.get(..end).unwrap_or_default();
    match head.rfind('\n') {
        Some(i) => head.get(..=i).unwrap_or(head),
        None => head,
    }
}

/// The line between the parts of one edit's text, when one edit changed
/// several places of a file (Claude Code's `MultiEdit`, a patch with several
/// hunks): a line holding only U+001E (record separator).
pub const EDIT_PARTS_SEPARATOR: &str = "\n\u{1e}\n";

/// The text of an edit made of `parts` (empty ones left out), joined with
/// [`EDIT_PARTS_SEPARATOR`]; none when no part has text.
pub fn join_edit_parts<S: AsRef<str>>(parts: impl IntoIterator<Item = S>) -> Option<String> {
    let kept: Vec<S> = parts
        .into_iter()
        .filter(|p| !p.as_ref().trim().is_empty())
        .collect();
    if kept.is_empty() {
        return None;
    }
    let mut out = String::new();
    for (i, p) in kept.iter().enumerate() {
        if i > 0 {
            out.push_str(EDIT_PARTS_SEPARATOR);
        }
        out.push_str(p.as_ref());
    }
    Some(out)
}

/// What the edits of one session wrote (ABI 1.3), in the order of its
/// [`Session::files`]: `texts[i]` is the new text of `files[i]` (Claude
/// Code's `new_string` or `content`, the lines a patch adds), none where the
/// record is not an edit or the transcript keeps no text; shorter when the
/// last ones have none. Each at most [`EDIT_TEXT_MAX_BYTES`].
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionEdits {
    /// One per file record, in order.
    pub texts: RVec<ROption<RString>>,
}

impl SessionEdits {
    /// The edits of records whose texts are `texts`, in order, each cut to
    /// the cap.
    pub fn from_texts(texts: impl IntoIterator<Item = Option<String>>) -> Self {
        SessionEdits {
            texts: texts
                .into_iter()
                .map(|t| t.map(|t| RString::from(cap_edit_text(&t))).into())
                .collect(),
        }
    }
}

/// The result of parsing one transcript, with its commands' outcomes and
/// its edits' texts (ABI 1.3). As in 1.2, the value types of ABI 1.0 stay
/// as they were: `outcomes[i]` and `edits[i]` belong to `output.sessions[i]`
/// (missing entries: unknown, no text).
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Default, PartialEq, Eq)]
pub struct ParseOutputV1_3 {
    /// What ABI 1.0 returns.
    pub output: ParseOutput,
    /// Per session, in the same order, its commands' outcomes.
    pub outcomes: RVec<SessionOutcomes>,
    /// Per session, in the same order, its edits' texts.
    pub edits: RVec<SessionEdits>,
}

impl ParseOutputV1_3 {
    /// A 1.2 answer: no edit keeps its text.
    pub fn without_edits(output: ParseOutputV1_2) -> Self {
        ParseOutputV1_3 {
            output: output.output,
            outcomes: output.outcomes,
            edits: RVec::new(),
        }
    }

    /// The 1.2 answer within it (the edits' texts left out).
    pub fn into_v1_2(self) -> ParseOutputV1_2 {
        ParseOutputV1_2 {
            output: self.output,
            outcomes: self.outcomes,
        }
    }

    /// The text of file record `file` of session `session`, if kept.
    pub fn edit_text(&self, session: usize, file: usize) -> Option<&str> {
        self.edits
            .get(session)
            .and_then(|s| s.texts.get(file))
            .and_then(|t| t.as_ref().into_option())
            .map(|t| t.as_str())
    }
}

/// A session to resume.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy)]
pub struct ResumeRequest<'a> {
    /// deja's id.
    pub id: RStr<'a>,
    /// The harness's id.
    pub native_id: RStr<'a>,
    /// The project directory, when known.
    pub project_dir: ROption<RStr<'a>>,
    /// The transcript it was read from, when it still exists.
    pub source_path: ROption<RStr<'a>>,
    /// The host context.
    pub context: &'a HostContext,
}

/// How to reopen a session in its harness.
#[repr(C, u8)]
#[derive(StableAbi, Debug, Clone, PartialEq, Eq)]
pub enum ResumeAdvice {
    /// Run `argv` in `cwd`.
    Command {
        /// Program and arguments.
        argv: RVec<RString>,
        /// The directory to run it in; `None` when unknown (`note` then says so).
        cwd: ROption<RString>,
        /// Anything the user should know (may be empty).
        note: RString,
    },
    /// The harness cannot reopen this session; `message` says why and what to do instead.
    Refused {
        /// Explanation for the user.
        message: RString,
    },
}

/// Kinds of plugin failure.
#[repr(u8)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The input is not in the expected format.
    InvalidInput = 0,
    /// A file could not be read.
    Io = 1,
    /// The plugin panicked; the panic was caught.
    Panic = 2,
    /// The operation is not supported by this plugin.
    Unsupported = 3,
    /// The configuration is wrong.
    Config = 4,
    /// Anything else.
    Other = 5,
}

/// An error returned by a plugin call.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, PartialEq, Eq)]
pub struct PluginError {
    /// What kind of failure.
    pub kind: ErrorKind,
    /// A message for the user.
    pub message: RString,
}

impl PluginError {
    /// An error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        PluginError {
            kind,
            message: RString::from(message.into()),
        }
    }

    /// Shorthand for [`ErrorKind::InvalidInput`].
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidInput, message)
    }

    /// Shorthand for [`ErrorKind::Config`].
    pub fn config(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Config, message)
    }
}

impl std::fmt::Display for PluginError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PluginError {}

impl HostContext {
    /// The value of environment variable `key`, if set and non-empty.
    pub fn env(&self, key: &str) -> Option<&str> {
        self.env
            .iter()
            .find(|v| v.key.as_str() == key)
            .map(|v| v.value.as_str())
            .filter(|v| !v.is_empty())
    }

    /// The home directory.
    pub fn home(&self) -> &std::path::Path {
        std::path::Path::new(self.home.as_str())
    }

    /// Deserializes the plugin's config section.
    pub fn config<T: serde::de::DeserializeOwned>(&self) -> Result<T, PluginError> {
        let text = if self.config_json.is_empty() {
            "{}"
        } else {
            self.config_json.as_str()
        };
        serde_json::from_str(text)
            .map_err(|e| PluginError::config(format!("invalid plugin configuration: {e}")))
    }

    /// A context built from the current process (for tests and tools).
    pub fn from_process(home: &str, config_json: &str) -> Self {
        HostContext {
            home: home.into(),
            env: std::env::vars_os()
                .map(|(k, v)| EnvVar {
                    key: k.to_string_lossy().into_owned().into(),
                    value: v.to_string_lossy().into_owned().into(),
                })
                .collect(),
            config_json: config_json.into(),
        }
    }
}

impl Message {
    /// A message without a native id.
    pub fn new(role: Role, text: impl Into<String>, timestamp_ms: i64) -> Self {
        Message {
            role,
            text: RString::from(text.into()),
            timestamp_ms,
            native_id: ROption::RNone,
        }
    }
}

impl Session {
    /// An empty session with the given ids and times; fill in the rest.
    pub fn new(
        id: impl Into<String>,
        native_id: impl Into<String>,
        started_at_ms: i64,
        updated_at_ms: i64,
    ) -> Self {
        Session {
            id: RString::from(id.into()),
            native_id: RString::from(native_id.into()),
            started_at_ms,
            updated_at_ms,
            project: Project::default(),
            title: ROption::RNone,
            parent_id: ROption::RNone,
            precedence: 0,
            messages: RVec::new(),
            files: RVec::new(),
            commands: RVec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_tool_output_gives_the_exit_code() {
        let ok = "Command: ls\nOutput: a\nError: (none)\nExit Code: 0\nSignal: (none)";
        assert_eq!(
            CommandOutcome::from_shell_tool_output(ok),
            Some(CommandOutcome::from_exit_code(0))
        );
        let failed = "Output: x\nExit Code: 255\nProcess Group PGID: 7832";
        let failed = CommandOutcome::from_shell_tool_output(failed).unwrap();
        assert_eq!(failed.status, CommandStatus::Failed);
        assert_eq!(failed.exit_code.into_option(), Some(255));
        let killed = "Output: x\nExit Code: (none)\nSignal: 9";
        assert_eq!(
            CommandOutcome::from_shell_tool_output(killed),
            Some(CommandOutcome::from_failed(true))
        );
        assert_eq!(CommandOutcome::from_shell_tool_output("Output: hi"), None);
    }

    #[test]
    fn an_edit_text_past_the_cap_is_cut_at_a_line() {
        assert_eq!(cap_edit_text("short\n"), "short\n");
        let lines = "0123456789abcde\n".repeat(EDIT_TEXT_MAX_BYTES / 16 + 3);
        let cut = cap_edit_text(&lines);
        assert_eq!(cut.len(), EDIT_TEXT_MAX_BYTES);
        assert!(cut.ends_with('\n') && lines.starts_with(cut));
        // One line longer than the cap: cut on a character boundary.
        let wide = "é".repeat(EDIT_TEXT_MAX_BYTES);
        let cut = cap_edit_text(&wide);
        assert!(cut.len() <= EDIT_TEXT_MAX_BYTES && cut.len() > EDIT_TEXT_MAX_BYTES - 2);
        let edits = SessionEdits::from_texts([Some(lines.clone()), None]);
        assert_eq!(
            edits.texts[0].as_ref().map(|t| t.len()).into_option(),
            Some(EDIT_TEXT_MAX_BYTES)
        );
        assert!(edits.texts[1].is_none());
    }

    #[test]
    fn the_parts_of_an_edit_are_joined_by_a_line_of_their_own() {
        assert_eq!(
            join_edit_parts(["a\n", " ", "b"]).as_deref(),
            Some("a\n\n\u{1e}\nb")
        );
        assert_eq!(join_edit_parts(["", "\n"]), None);
    }

    #[test]
    fn a_one_two_answer_keeps_its_outcomes_and_no_text() {
        let mut v12 = ParseOutputV1_2::default();
        v12.outcomes.push(SessionOutcomes {
            commands: vec![CommandOutcome::from_exit_code(1)].into(),
        });
        let v13 = ParseOutputV1_3::without_edits(v12.clone());
        assert_eq!(v13.edit_text(0, 0), None);
        assert_eq!(v13.into_v1_2(), v12);
    }
}
