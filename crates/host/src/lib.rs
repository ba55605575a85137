//! deja's plugin host: finds reader plugins, checks their ABI, loads every
//! one it can, explains every one it cannot, and wraps the loaded ones in safe
//! calls that take and return deja's own types. With the plugin API, this is
//! the only crate that speaks abi_stable: no `R*` type crosses its public API.
//!
//! - [`candidates`]: where plugin files are looked for.
//! - [`loader`]: permission and ABI checks, loading one library.
//! - `permissions`: who may own and write a plugin file and the folders above it.
//! - [`convert`]: the readers' ABI values turned into deja's types.
//! - [`transcripts`]: reading transcript files for the readers.

pub mod candidates;
mod convert;
pub mod loader;
mod permissions;
pub mod transcripts;

use std::path::{Path, PathBuf};

use deja_model::Session;
use deja_plugin_api as api;

pub use candidates::PluginFolder;
pub use deja_plugin_api::version::AbiVersion;

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
    module: api::PluginModuleV1_0Ref,
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
        match (self.module.detect())(path.as_ref().into(), head.into()) {
            api::RResult::ROk(score) => score.min(100),
            api::RResult::RErr(_) => 0,
        }
    }

    /// Runs the plugin's discovery.
    pub fn discover(&self, context: &Context) -> Result<Discovered, CallError> {
        let d = (self.module.discover())(&context.0)
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
        let request = api::ParseRequest {
            path: path_text.as_ref().into(),
            bytes: bytes.into(),
            modified_ms,
            context: &context.0,
        };
        let out = (self.module.parse())(&request)
            .into_result()
            .map_err(|e| self.call_error(e))?;
        Ok(Parsed {
            sessions: out
                .sessions
                .into_iter()
                .map(|s| convert::session(&self.harness, s))
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
        let request = api::ResumeRequest {
            id: id.into(),
            native_id: native_id.into(),
            project_dir: project_dir.map(api::RStr::from).into(),
            source_path: source_path.map(api::RStr::from).into(),
            context: &context.0,
        };
        let advice = (self.module.resume())(&request)
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
    pub fn load(candidates: Vec<candidates::Candidate>) -> PluginHost {
        let mut host = PluginHost::default();
        for c in candidates {
            let mut report = Report {
                path: c.path.clone(),
                folder: c.folder.clone(),
                name: None,
                version: None,
                harness: None,
                abi: None,
                status: Status::Loaded,
            };
            match loader::load(&c.path) {
                Err(loader::LoadError::Refused(r)) => {
                    host.warnings
                        .push(format!("plugin `{}` not loaded: {r}", c.path.display()));
                    report.status = Status::Refused(r)
                }
                Err(loader::LoadError::Incompatible(r)) => report.status = Status::Incompatible(r),
                Err(loader::LoadError::Invalid(r)) => report.status = Status::Invalid(r),
                Ok(loaded) => {
                    report.abi = Some(loaded.abi);
                    match (loaded.module.describe())().into_result() {
                        Err(e) => {
                            report.status =
                                Status::Invalid(format!("describe failed: {}", e.message))
                        }
                        Ok(info) => {
                            let plugin = Plugin {
                                name: info.name.into_string(),
                                version: info.version.into_string(),
                                harness: info.harness.into_string(),
                                description: info.description.into_string(),
                                abi: loaded.abi,
                                config_keys: info
                                    .config_keys
                                    .into_iter()
                                    .map(|k| k.into_string())
                                    .collect(),
                                path: c.path.clone(),
                                folder: c.folder.clone(),
                                module: loaded.module,
                            };
                            report.name = Some(plugin.name.clone());
                            report.version = Some(plugin.version.clone());
                            report.harness = Some(plugin.harness.clone());
                            if let Some(first) = host.get(&plugin.harness) {
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
                                host.plugins.push(plugin);
                            }
                        }
                    }
                }
            }
            host.reports.push(report);
        }
        host
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
