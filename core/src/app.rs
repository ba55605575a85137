//! The state every command starts from: resolved paths, the loaded
//! configuration, and (on demand) the plugin host with per-harness contexts.

use std::cell::OnceCell;
use std::path::PathBuf;

use anyhow::{Context, Result};
use deja_config::Loaded;

use crate::paths::{self, Paths};
use deja_host::{candidates, Plugin, PluginHost};

/// Shared state of one deja invocation.
pub struct App {
    /// Locations.
    pub paths: Paths,
    /// Configuration with provenance.
    pub config: Loaded,
    host: OnceCell<PluginHost>,
}

impl App {
    /// Resolves paths and loads the configuration.
    pub fn new() -> Result<App> {
        let home = paths::home_dir()?;
        let config_file = paths::config_file(&home);
        let env = |k: &str| std::env::var(k).ok();
        let config = deja_config::load(&config_file, &env)?;
        let paths = Paths::new(home, config_file, &config.config.store.dir);
        Ok(App {
            paths,
            config,
            host: OnceCell::new(),
        })
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
            PluginHost::load(candidates::find(
                &config_paths,
                &self.paths.plugin_dir(),
                exe_dir.as_deref(),
            ))
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
        let mut out = Vec::new();
        for p in &self.host().plugins {
            self.config.check_harness_keys(&p.harness, &p.config_keys)?;
            if self.harness_enabled(&p.harness) {
                out.push(p);
            }
        }
        Ok(out)
    }

    /// The context handed to `plugin`: home, environment and its config section.
    pub fn context_for(&self, harness: &str) -> Result<deja_host::Context> {
        let section = self
            .config
            .config
            .harness
            .get(harness)
            .map(|h| h.to_table())
            .unwrap_or_default();
        let config_json = serde_json::to_string(&section)
            .with_context(|| format!("cannot pass the `harness.{harness}` config to its plugin"))?;
        Ok(deja_host::Context::from_process(
            &self.paths.home,
            &config_json,
        ))
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

    /// The embedding settings of the config and data folder.
    pub fn embed_settings(&self) -> deja_embed::Settings {
        deja_embed::Settings::from_config(
            &self.config.config.embed,
            &self.paths.home,
            &self.paths.data_dir,
        )
    }
}
