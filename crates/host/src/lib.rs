//! deja's plugin host: finds reader plugins, checks their ABI, loads every
//! one it can, explains every one it cannot, and wraps the loaded ones in safe
//! calls that take and return deja's own types. With the plugin API, this is
//! the only crate that speaks abi_stable: no `R*` type crosses its public API.
//!
//! - [`candidates`]: where plugin files are looked for.
//! - [`loader`]: permission and ABI checks, loading one library.
//! - [`module`]: one set of calls over the root modules of ABI 1.0 and 1.1.
//! - `permissions`: who may own and write a plugin file and the folders above it.
//! - [`convert`]: the readers' ABI values turned into deja's types.
//! - [`transcripts`]: reading transcript files for the readers.
//! - [`code_folder`]: whether a transcript found in a code folder may be
//!   read (not tracked by its repository, not another user's), with
//!   `git_index` reading a repository's index file.

pub mod candidates;
pub mod code_folder;
mod convert;
mod error;
mod git_index;
pub mod loader;
pub mod module;
mod permissions;
pub mod shared_folder;
pub mod transcripts;

use std::path::{Path, PathBuf};

use deja_model::Session;
use deja_plugin_api as api;

pub use candidates::PluginFolder;
pub use deja_plugin_api::discover::{CODE_FOLDERS, FOUND_IN_CODE_FOLDER, KNOWN_PROJECTS_VAR};
pub use deja_plugin_api::version::AbiVersion;
use module::Module;

/// The plugin ABI version this host speaks.
pub const HOST_ABI: AbiVersion = deja_plugin_api::version::CURRENT;

/// What a reader is told of its surroundings: the user's home, the process
/// environment and its own config section (as JSON).
pub struct Context(api::HostContext);

impl Context {
    /// The context of this process for a reader whose config section is
    /// `config_json`.
    pub fn from_process(home: &Path, config_json: &str) -> Context {
        Context(api::HostContext::from_process(
            &home.to_string_lossy(),
            config_json,
        ))
    }

    /// Adds (or replaces) a variable the host tells the reader, beside the
    /// process's own environment.
    pub fn with_env(mut self, key: &str, value: &str) -> Context {
        self.0.env.retain(|v| v.key.as_str() != key);
        self.0.env.push(api::EnvVar {
            key: key.into(),
            value: value.into(),
        });
        self
    }

    /// The reader's config section, as the JSON it is handed.
    pub fn config_json(&self) -> &str {
        self.0.config_json.as_str()
    }
}

/// A loaded reader plugin.
pub struct Plugin {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// The harness it reads.
    pub harness: String,
    /// One line about it.
    pub description: String,
    /// The ABI version it was built for.
    pub abi: AbiVersion,
    /// Extra config keys it accepts.
    pub config_keys: Vec<String>,
    /// The library file.
    pub path: PathBuf,
    /// Where it was found.
    pub folder: PluginFolder,
    /// The description it reads by, for a reader defined in a description
    /// file (then `path` is that file, or `<plugin>#<name>` for one built in).
    pub reader_description: Option<Description>,
    module: Module,
}

/// A reader description: where it came from and its text.
#[derive(Debug, Clone)]
pub struct Description {
    /// Its file, or `<plugin file>#<name>` for one built into its plugin.
    pub origin: String,
    /// Its text.
    pub text: String,
}

impl Description {
    /// A context holding only this description, for the calls made without
    /// one (describing the reader, detecting a file).
    fn bare_context(&self) -> api::HostContext {
        self.context(&api::HostContext {
            home: api::RString::new(),
            env: api::RVec::new(),
            config_json: "{}".into(),
        })
    }

    /// `context` with this description in it, for the plugin that serves it.
    fn context(&self, context: &api::HostContext) -> api::HostContext {
        let mut context = context.clone();
        context.env.retain(|v| {
            v.key.as_str() != api::DESCRIPTION_VAR && v.key.as_str() != api::DESCRIPTION_PATH_VAR
        });
        for (key, value) in [
            (api::DESCRIPTION_VAR, &self.text),
            (api::DESCRIPTION_PATH_VAR, &self.origin),
        ] {
            context.env.push(api::EnvVar {
                key: key.into(),
                value: value.as_str().into(),
            });
        }
        context
    }
}

/// A loaded plugin that serves reader descriptions.
struct Engine {
    path: PathBuf,
    abi: AbiVersion,
    module: Module,
    extension: String,
    builtin: Vec<api::DescriptionFile>,
}

impl Engine {
    fn of(c: &candidates::Candidate, l: &loader::Loaded) -> Option<Engine> {
        let d = l.module.descriptions().into_result().ok()?;
        if d.extension.is_empty() {
            return None;
        }
        Some(Engine {
            path: c.path.clone(),
            abi: l.abi,
            module: l.module,
            extension: d.extension.into_string(),
            builtin: d.builtin.into_vec(),
        })
    }
}

/// The most a description file may hold.
const MAX_DESCRIPTION_BYTES: u64 = 1 << 20;

/// A description file's text, refused when too large or not UTF-8.
fn read_description(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read it: {e}"))?;
    if meta.len() > MAX_DESCRIPTION_BYTES {
        return Err(format!(
            "it is {} bytes, over the limit of {MAX_DESCRIPTION_BYTES} for a reader description",
            meta.len()
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read it: {e}"))?;
    String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_string())
}

/// What loading one candidate file gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Loaded and usable.
    Loaded,
    /// Built for another ABI.
    Incompatible(String),
    /// Not loaded for a policy reason (permissions, duplicate harness).
    Refused(String),
    /// Not a deja plugin, or it failed while describing itself.
    Invalid(String),
}

impl Status {
    /// `loaded`, `incompatible`, `refused` or `invalid`.
    pub fn label(&self) -> &'static str {
        match self {
            Status::Loaded => "loaded",
            Status::Incompatible(_) => "incompatible",
            Status::Refused(_) => "refused",
            Status::Invalid(_) => "invalid",
        }
    }

    /// The reason, for anything but `loaded`.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Status::Loaded => None,
            Status::Incompatible(r) | Status::Refused(r) | Status::Invalid(r) => Some(r),
        }
    }
}

/// One line of `deja plugins`.
#[derive(Debug, Clone)]
pub struct Report {
    /// The file.
    pub path: PathBuf,
    /// Where it was found.
    pub folder: PluginFolder,
    /// Name, version, harness and ABI, when the plugin could say.
    pub name: Option<String>,
    /// Plugin version.
    pub version: Option<String>,
    /// Harness.
    pub harness: Option<String>,
    /// ABI version.
    pub abi: Option<AbiVersion>,
    /// What happened.
    pub status: Status,
    /// For a reader description: the plugin that serves it.
    pub served_by: Option<PathBuf>,
    /// Anything else to say (a plugin that serves descriptions says so).
    pub note: Option<String>,
}

impl Report {
    fn new(c: &candidates::Candidate) -> Report {
        Report {
            path: c.path.clone(),
            folder: c.folder.clone(),
            name: None,
            version: None,
            harness: None,
            abi: None,
            status: Status::Loaded,
            served_by: None,
            note: None,
        }
    }
}

/// A failed plugin call.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{harness} reader: {message}")]
pub struct CallError {
    /// The harness of the plugin.
    pub harness: String,
    /// Its message.
    pub message: String,
}

/// A parsed transcript, in host types.
#[derive(Debug, Clone, Default)]
pub struct Parsed {
    /// Sessions with at least one message.
    pub sessions: Vec<Session>,
    /// Sessions left out for having no message.
    pub skipped_empty: u32,
    /// Warnings from the plugin.
    pub warnings: Vec<String>,
}

/// Where discovery looked and what it found, in host types.
#[derive(Debug, Clone, Default)]
pub struct Discovered {
    /// Transcript paths.
    pub transcripts: Vec<PathBuf>,
    /// (path, reason, exists) for every place examined.
    pub searched: Vec<(String, String, bool)>,
    /// Warnings.
    pub warnings: Vec<String>,
}

impl Discovered {
    /// The transcripts the reader found in a code folder rather than in its
    /// harness's own data folder or a place the user named (see
    /// [`FOUND_IN_CODE_FOLDER`]).
    pub fn in_code_folders(&self) -> std::collections::HashSet<PathBuf> {
        self.searched
            .iter()
            .filter(|(_, reason, _)| reason == FOUND_IN_CODE_FOLDER)
            .map(|(path, _, _)| PathBuf::from(path))
            .collect()
    }
}

/// How to reopen a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resume {
    /// Run `argv` in `cwd`.
    Command {
        /// Program and arguments.
        argv: Vec<String>,
        /// Directory, when known.
        cwd: Option<String>,
        /// A note for the user.
        note: String,
    },
    /// The harness cannot reopen it.
    Refused(String),
}

impl Plugin {
    fn new(
        info: api::PluginInfo,
        c: &candidates::Candidate,
        abi: AbiVersion,
        module: Module,
        description: Option<Description>,
    ) -> Plugin {
        Plugin {
            name: info.name.into_string(),
            version: info.version.into_string(),
            harness: info.harness.into_string(),
            description: info.description.into_string(),
            abi,
            config_keys: info
                .config_keys
                .into_iter()
                .map(|k| k.into_string())
                .collect(),
            path: c.path.clone(),
            folder: c.folder.clone(),
            reader_description: description,
            module,
        }
    }

    /// The context a call gets: `context`, with the reader's description
    /// when it has one.
    fn context<'a>(&self, context: &'a api::HostContext) -> std::borrow::Cow<'a, api::HostContext> {
        match &self.reader_description {
            Some(d) => std::borrow::Cow::Owned(d.context(context)),
            None => std::borrow::Cow::Borrowed(context),
        }
    }

    fn call_error(&self, e: api::PluginError) -> CallError {
        CallError {
            harness: self.harness.clone(),
            message: e.message.into_string(),
        }
    }

    /// How sure the plugin is that `path` is one of its transcripts (0–100).
    /// A failing or panicking detector counts as "not mine".
    pub fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        let path = path.to_string_lossy();
        let context = self
            .reader_description
            .as_ref()
            .map(Description::bare_context);
        match self.module.detect(context.as_ref(), &path, head) {
            api::RResult::ROk(score) => score.min(100),
            api::RResult::RErr(_) => 0,
        }
    }

    /// Runs the plugin's discovery.
    pub fn discover(&self, context: &Context) -> Result<Discovered, CallError> {
        let d = self
            .module
            .discover(&self.context(&context.0))
            .into_result()
            .map_err(|e| self.call_error(e))?;
        Ok(Discovered {
            transcripts: d
                .transcripts
                .into_iter()
                .map(|p| PathBuf::from(p.into_string()))
                .collect(),
            searched: d
                .searched
                .into_iter()
                .map(|s| (s.path.into_string(), s.reason.into_string(), s.exists))
                .collect(),
            warnings: d.warnings.into_iter().map(|w| w.into_string()).collect(),
        })
    }

    /// Parses one transcript.
    pub fn parse(
        &self,
        path: &Path,
        bytes: &[u8],
        modified_ms: i64,
        context: &Context,
    ) -> Result<Parsed, CallError> {
        let path_text = path.to_string_lossy();
        let context = self.context(&context.0);
        let request = api::ParseRequest {
            path: path_text.as_ref().into(),
            bytes: bytes.into(),
            modified_ms,
            context: &context,
        };
        let out = self
            .module
            .parse(&request)
            .into_result()
            .map_err(|e| self.call_error(e))?;
        let api::ParseOutputV1_3 {
            output: out,
            outcomes,
            edits,
        } = out;
        Ok(Parsed {
            sessions: out
                .sessions
                .into_iter()
                .enumerate()
                .map(|(i, s)| {
                    let o = outcomes
                        .get(i)
                        .map(|o| o.commands.as_slice())
                        .unwrap_or(&[]);
                    let e = edits.get(i).map(|e| e.texts.as_slice()).unwrap_or(&[]);
                    convert::session(&self.harness, s, o, e, modified_ms)
                })
                .collect(),
            skipped_empty: out.skipped_empty,
            warnings: out.warnings.into_iter().map(|w| w.into_string()).collect(),
        })
    }

    /// Asks how to reopen a session.
    pub fn resume(
        &self,
        id: &str,
        native_id: &str,
        project_dir: Option<&str>,
        source_path: Option<&str>,
        context: &Context,
    ) -> Result<Resume, CallError> {
        let context = self.context(&context.0);
        let request = api::ResumeRequest {
            id: id.into(),
            native_id: native_id.into(),
            project_dir: project_dir.map(api::RStr::from).into(),
            source_path: source_path.map(api::RStr::from).into(),
            context: &context,
        };
        let advice = self
            .module
            .resume(&request)
            .into_result()
            .map_err(|e| self.call_error(e))?;
        Ok(match advice {
            api::ResumeAdvice::Command { argv, cwd, note } => Resume::Command {
                argv: argv.into_iter().map(|a| a.into_string()).collect(),
                cwd: cwd.into_option().map(|c| c.into_string()),
                note: note.into_string(),
            },
            api::ResumeAdvice::Refused { message } => Resume::Refused(message.into_string()),
        })
    }
}

/// Every plugin found, loaded or not.
#[derive(Default)]
pub struct PluginHost {
    /// The loaded plugins, one per harness.
    pub plugins: Vec<Plugin>,
    /// One report per candidate file.
    pub reports: Vec<Report>,
    /// One line per plugin file refused for who owns or can change it: the
    /// file and the reason, for deja to print whatever the command.
    pub warnings: Vec<String>,
}

impl PluginHost {
    /// Loads every candidate. Failures are recorded in `reports`; they never
    /// stop the other plugins from loading.
    ///
    /// A library that serves reader descriptions (ABI 1.1) is not a reader
    /// itself: each description it serves becomes one, the description files
    /// found among the candidates (`*.toml`) in their place in the search
    /// order, and the descriptions built into it at its own place. A broken
    /// description disables that reader only.
    pub fn load(candidates: Vec<candidates::Candidate>) -> PluginHost {
        let mut host = PluginHost::default();
        // Libraries first, so that a description in an earlier folder finds
        // the plugin that serves it in a later one.
        let loaded: Vec<Option<Result<loader::Loaded, loader::LoadError>>> = candidates
            .iter()
            .map(|c| (!c.is_description()).then(|| loader::load(&c.path)))
            .collect();
        let engines: Vec<Engine> = candidates
            .iter()
            .zip(&loaded)
            .filter_map(|(c, l)| match l {
                Some(Ok(l)) => Engine::of(c, l),
                _ => None,
            })
            .collect();
        for (c, l) in candidates.iter().zip(loaded) {
            match l {
                None => host.add_description_file(c, &engines),
                Some(l) => host.add_library(c, l, &engines),
            }
        }
        host
    }

    fn add_library(
        &mut self,
        c: &candidates::Candidate,
        loaded: Result<loader::Loaded, loader::LoadError>,
        engines: &[Engine],
    ) {
        let mut report = Report::new(c);
        let loaded = match loaded {
            Err(loader::LoadError::Refused(r)) => {
                self.warnings
                    .push(format!("plugin `{}` not loaded: {r}", c.path.display()));
                report.status = Status::Refused(r);
                return self.reports.push(report);
            }
            Err(loader::LoadError::Incompatible(r)) => {
                report.status = Status::Incompatible(r);
                return self.reports.push(report);
            }
            Err(loader::LoadError::Invalid(r)) => {
                report.status = Status::Invalid(r);
                return self.reports.push(report);
            }
            Ok(loaded) => loaded,
        };
        report.abi = Some(loaded.abi);
        if let Some(engine) = engines.iter().find(|e| e.path == c.path) {
            // A reader of descriptions: its built-in ones are readers here.
            match loaded.module.describe().into_result() {
                Ok(info) => {
                    report.name = Some(info.name.into_string());
                    report.version = Some(info.version.into_string());
                }
                Err(e) => {
                    report.status = Status::Invalid(format!("describe failed: {}", e.message))
                }
            }
            report.note = Some(format!(
                "serves reader descriptions (`*.{}` files in the plugin folders; {} built in)",
                engine.extension,
                engine.builtin.len()
            ));
            self.reports.push(report);
            for d in &engine.builtin {
                let origin = format!("{}#{}", c.path.display(), d.name);
                self.add_description(
                    c,
                    PathBuf::from(&origin),
                    origin,
                    d.text.to_string(),
                    engine,
                );
            }
            return;
        }
        match loaded.module.describe().into_result() {
            Err(e) => report.status = Status::Invalid(format!("describe failed: {}", e.message)),
            Ok(info) => {
                let plugin = Plugin::new(info, c, loaded.abi, loaded.module, None);
                self.register(plugin, report);
                return;
            }
        }
        self.reports.push(report);
    }

    fn add_description_file(&mut self, c: &candidates::Candidate, engines: &[Engine]) {
        let extension = c
            .path
            .extension()
            .map(|e| e.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut report = Report::new(c);
        let Some(engine) = engines.iter().find(|e| e.extension == extension) else {
            report.status = Status::Invalid(format!(
                "a reader description, but no loaded plugin serves `*.{extension}` descriptions"
            ));
            return self.reports.push(report);
        };
        let text = match loader::check_permissions(&c.path)
            .map_err(|e| e.to_string())
            .and_then(|()| read_description(&c.path))
        {
            Ok(text) => text,
            Err(reason) => {
                report.status = Status::Refused(reason.clone());
                self.warnings.push(format!(
                    "reader description `{}` not loaded: {reason}",
                    c.path.display()
                ));
                return self.reports.push(report);
            }
        };
        let origin = c.path.to_string_lossy().into_owned();
        self.add_description(c, c.path.clone(), origin, text, engine);
    }

    fn add_description(
        &mut self,
        c: &candidates::Candidate,
        path: PathBuf,
        origin: String,
        text: String,
        engine: &Engine,
    ) {
        let mut report = Report::new(c);
        report.path = path.clone();
        report.abi = Some(engine.abi);
        report.served_by = Some(engine.path.clone());
        let description = Description { origin, text };
        let context = description.bare_context();
        match engine.module.describe_in(&context).into_result() {
            Err(e) => {
                report.status = Status::Invalid(e.message.into_string());
                self.reports.push(report);
            }
            Ok(info) => {
                let mut candidate = c.clone();
                candidate.path = path;
                let plugin = Plugin::new(
                    info,
                    &candidate,
                    engine.abi,
                    engine.module,
                    Some(description),
                );
                self.register(plugin, report);
            }
        }
    }

    /// Adds a described plugin unless its harness is taken or malformed.
    fn register(&mut self, plugin: Plugin, mut report: Report) {
        report.name = Some(plugin.name.clone());
        report.version = Some(plugin.version.clone());
        report.harness = Some(plugin.harness.clone());
        if let Some(first) = self.get(&plugin.harness) {
            report.status = Status::Refused(format!(
                "duplicate harness `{}`: already provided by `{}`",
                plugin.harness,
                first.path.display()
            ));
        } else if plugin.harness.is_empty()
            || !plugin
                .harness
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_')
        {
            report.status = Status::Invalid(format!(
                "invalid harness name `{}` (use letters, digits, `-` and `_`)",
                plugin.harness
            ));
        } else {
            self.plugins.push(plugin);
        }
        self.reports.push(report);
    }

    /// The plugin for `harness`.
    pub fn get(&self, harness: &str) -> Option<&Plugin> {
        self.plugins.iter().find(|p| p.harness == harness)
    }

    /// The plugin most sure that `path` is its transcript, if any is.
    pub fn detect(&self, path: &Path, head: &[u8]) -> Option<&Plugin> {
        self.plugins
            .iter()
            .map(|p| (p.detect(path, head), p))
            .filter(|(score, _)| *score > 0)
            .max_by_key(|(score, _)| *score)
            .map(|(_, p)| p)
    }

    /// The harness names of the loaded plugins.
    pub fn harnesses(&self) -> Vec<&str> {
        self.plugins.iter().map(|p| p.harness.as_str()).collect()
    }
}
