//! The state every command starts from: resolved paths, the loaded
//! configuration, and (on demand) the plugin host with per-harness contexts.

use std::cell::OnceCell;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use deja_config::Loaded;

use crate::paths::{self, Paths};
use deja_host::{candidates, Plugin, PluginHost, KNOWN_PROJECTS_VAR};

/// Most project directories told.
const MAX_KNOWN_PROJECTS: usize = 2000;

/// The store's meta key that keeps why its model was chosen at the first
/// index (see [`App::model_choice`]).
const MODEL_WHY: &str = "embed_model_why";

/// What follows every config error: where to look for the keys.
pub const CONFIG_HINT: &str =
    "hint: `deja config --default` prints every key with its bounds; `deja doctor` still runs";

/// Shared state of one deja invocation.
pub struct App {
    /// Locations.
    pub paths: Paths,
    /// Configuration with provenance (the defaults while the file is broken).
    pub config: Loaded,
    /// Why the config file could not be used, if it could not.
    config_error: Option<String>,
    host: OnceCell<PluginHost>,
    known_projects: OnceCell<String>,
}

impl App {
    /// Resolves paths and loads the configuration, failing on any problem
    /// with it (harness sections included, see [`App::check_config`]).
    pub fn new() -> Result<App> {
        let app = App::diagnose()?;
        app.check_config()?;
        Ok(app)
    }

    /// Resolves paths and loads the configuration; a broken config file is
    /// recorded (see [`App::config_error`]) and the defaults stand in for it,
    /// so that the commands that diagnose it still run.
    pub fn diagnose() -> Result<App> {
        let home = paths::home_dir()?;
        let (config_file, named) = paths::config_file(&home);
        let env = |k: &str| std::env::var(k).ok();
        let (config, config_error) = match deja_config::load(&config_file, named, &env) {
            Ok(c) => (c, None),
            Err(e) => (
                deja_config::defaults(&config_file, &env)?,
                Some(e.to_string()),
            ),
        };
        let paths = Paths::new(home, config_file, &config.config.store.dir);
        Ok(App {
            paths,
            config,
            config_error,
            host: OnceCell::new(),
            known_projects: OnceCell::new(),
        })
    }

    /// Why the config file could not be loaded, naming its file, line and key.
    pub fn config_error(&self) -> Option<&str> {
        self.config_error.as_deref()
    }

    /// Fails with the config file's problem, if it has one, or with the
    /// first problem of its `[harness.<name>]` sections (checked against the
    /// plugins, which are loaded for that only when the file has such
    /// sections). Every command but `doctor` and `config --default` runs this
    /// first, so that they all accept and refuse the same files.
    pub fn check_config(&self) -> Result<()> {
        if let Some(e) = &self.config_error {
            bail!("{e}\n{CONFIG_HINT}");
        }
        if !self.config.file_harnesses.is_empty() {
            self.check_harness_sections()
                .map_err(|e| anyhow!("{e}\n{CONFIG_HINT}"))?;
        }
        Ok(())
    }

    /// Checks the config's harness sections against the loaded plugins: each
    /// section the file writes names a harness a plugin reads, and holds only
    /// keys that plugin accepts.
    pub fn check_harness_sections(&self) -> std::result::Result<(), deja_config::ConfigError> {
        let host = self.host();
        self.config.check_harness_names(&host.harnesses())?;
        for p in &host.plugins {
            self.config.check_harness_keys(&p.harness, &p.config_keys)?;
        }
        Ok(())
    }

    /// The plugin host, loading every plugin on first use.
    pub fn host(&self) -> &PluginHost {
        self.host.get_or_init(|| {
            let config_paths: Vec<PathBuf> = self
                .config
                .config
                .plugins
                .paths
                .iter()
                .map(|p| deja_config::expand_home(p, &self.paths.home))
                .collect();
            let exe_dir = std::env::current_exe()
                .ok()
                .and_then(|p| p.parent().map(|d| d.to_path_buf()));
            let host = PluginHost::load(candidates::find(
                &config_paths,
                &self.paths.plugin_dir(),
                exe_dir.as_deref(),
            ));
            for warning in &host.warnings {
                crate::output::warn(warning);
            }
            host
        })
    }

    /// Whether the config enables `harness` (absent sections are enabled).
    pub fn harness_enabled(&self, harness: &str) -> bool {
        self.config
            .config
            .harness
            .get(harness)
            .is_none_or(|h| h.enabled)
    }

    /// The loaded, enabled plugins, after checking their config sections.
    pub fn enabled_plugins(&self) -> Result<Vec<&Plugin>> {
        self.check_harness_sections()
            .map_err(|e| anyhow!("{e}\n{CONFIG_HINT}"))?;
        Ok(self
            .host()
            .plugins
            .iter()
            .filter(|p| self.harness_enabled(&p.harness))
            .collect())
    }

    /// The context handed to `plugin`: home, environment and its config section.
    pub fn context_for(&self, harness: &str) -> Result<deja_host::Context> {
        let section = self
            .config
            .config
            .harness
            .get(harness)
            .cloned()
            .unwrap_or_default()
            .to_table();
        let config_json = serde_json::to_string(&section)
            .with_context(|| format!("cannot pass the `harness.{harness}` config to its plugin"))?;
        let context = deja_host::Context::from_process(&self.paths.home, &config_json);
        let known = self.known_projects();
        Ok(if known.is_empty() {
            context
        } else {
            context.with_env(KNOWN_PROJECTS_VAR, known)
        })
    }

    /// The project directories the store's sessions name, as a platform
    /// path list (empty without a store): readers of transcripts kept in
    /// the project folder (aider's) look there without configuration.
    fn known_projects(&self) -> &str {
        self.known_projects.get_or_init(|| {
            let dirs = deja_store::Store::open_read(&self.paths.database())
                .and_then(|s| s.project_dirs(MAX_KNOWN_PROJECTS))
                .unwrap_or_default();
            std::env::join_paths(dirs.iter().filter(|d| Path::new(d).is_absolute()))
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
    }

    /// Every enabled reader with its context, for indexing.
    pub fn readers(&self) -> Result<Vec<deja_index::Reader<'_>>> {
        self.enabled_plugins()?
            .into_iter()
            .map(|plugin| {
                Ok(deja_index::Reader {
                    plugin,
                    context: self.context_for(&plugin.harness)?,
                })
            })
            .collect()
    }

    /// Records in `store` why the model about to embed it was chosen, unless
    /// it is the store's own model already (the reason given then stays).
    pub fn record_model_choice(&self, store: &deja_store::Store) -> Result<()> {
        if let Some(choice) = self.model_choice().filter(|c| !c.kept) {
            store.set_meta(MODEL_WHY, &choice.why)?;
        }
        Ok(())
    }

    /// The embedding settings of the config and data folder, with the
    /// model [`App::model_choice`] picks when the config names no folder.
    pub fn embed_settings(&self) -> deja_embed::Settings {
        let mut settings = deja_embed::Settings::from_config(
            &self.config.config.embed,
            &self.paths.home,
            &self.paths.data_dir,
        );
        if let Some(choice) = self.model_choice() {
            settings.model_dir = choice.dir;
        }
        settings
    }

    /// Which installed model embeds this history, and why, when
    /// `embed.model_dir` names no folder (see [`deja_embed::choice`]): the
    /// store's own model, else one picked by `embed.model` and, for `auto`,
    /// by the scripts the stored messages are written in. `None` when the
    /// config names a folder.
    pub fn model_choice(&self) -> Option<deja_embed::choice::Choice> {
        use deja_embed::choice::{self, Preference, Scripts};
        let embed = &self.config.config.embed;
        if !embed.model_dir.is_empty() {
            return None;
        }
        let preference = Preference::parse(&embed.model).unwrap_or(Preference::Auto);
        let store = deja_store::Store::open_read(&self.paths.database()).ok();
        let recorded = store.as_ref().and_then(|s| s.model_stamp()).map(|k| k.id);
        let mut chosen = choice::choose(
            preference,
            &self.paths.data_dir.join("models"),
            recorded.as_deref(),
            || {
                store
                    .as_ref()
                    .and_then(|s| {
                        s.text_sample(choice::SAMPLE_MESSAGES, choice::SAMPLE_CHARS)
                            .ok()
                    })
                    .map(|texts| Scripts::of(&texts))
                    .unwrap_or_default()
            },
        );
        let first = store
            .as_ref()
            .and_then(|s| s.meta(MODEL_WHY).ok().flatten());
        if let (true, Some(first)) = (chosen.kept, first) {
            chosen.why = format!("{}; chosen at the first index: {first}", chosen.why);
        }
        Some(chosen)
    }
}
