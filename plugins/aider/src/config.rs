//! The plugin's section of the user's config: the common `roots` and
//! `exclude`, and `timezone` (see [`crate::clock`]).

use deja_plugin_api::discover::CommonConfig;
use serde::Deserialize;

/// The aider plugin's config section.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct AiderConfig {
    /// `roots` and `exclude`.
    #[serde(flatten)]
    pub common: CommonConfig,
    /// The zone the headers' local times are read in; `None`: the machine's.
    pub timezone: Option<String>,
}
