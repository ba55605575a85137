//! `deja plugins --json`.

use std::borrow::Cow;

use serde::Serialize;

/// Every plugin file found, with the host's ABI version.
#[derive(Debug, Clone, Serialize)]
pub struct Plugins<'a> {
    /// The ABI version this deja loads.
    pub abi: String,
    /// The plugin files, in the order they were found.
    pub plugins: Vec<Plugin<'a>>,
}

/// One plugin file.
#[derive(Debug, Clone, Serialize)]
pub struct Plugin<'a> {
    /// Its ABI version, when it could say.
    pub abi: Option<String>,
    /// Whether its harness is enabled in the config (null without a harness).
    pub enabled: Option<bool>,
    /// The harness it reads.
    pub harness: Option<&'a str>,
    /// Its name.
    pub name: Option<&'a str>,
    /// Anything else to say: a plugin that serves reader descriptions says so.
    pub note: Option<&'a str>,
    /// Where it was found: `config`, `user` or `bundled`.
    pub origin: &'a str,
    /// The file.
    pub path: Cow<'a, str>,
    /// Why it was not loaded.
    pub reason: Option<&'a str>,
    /// For a reader description: the plugin file that reads by it.
    pub served_by: Option<Cow<'a, str>>,
    /// `loaded`, `incompatible`, `refused` or `invalid`.
    pub status: &'a str,
    /// Its version.
    pub version: Option<&'a str>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::testing::keys;

    #[test]
    fn field_names() {
        let out = Plugins {
            abi: "1.0".into(),
            plugins: vec![Plugin {
                abi: None,
                enabled: None,
                harness: None,
                name: None,
                note: None,
                origin: "user",
                path: "/p.so".into(),
                reason: None,
                served_by: None,
                status: "loaded",
                version: None,
            }],
        };
        assert_eq!(keys(&out), ["abi", "plugins"]);
        assert_eq!(
            keys(&out.plugins[0]),
            [
                "abi",
                "enabled",
                "harness",
                "name",
                "note",
                "origin",
                "path",
                "reason",
                "served_by",
                "status",
                "version"
            ]
        );
    }
}
