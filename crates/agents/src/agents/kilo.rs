//! Kilo CLI, a fork of OpenCode that keeps its config format and plugin
//! loader: deja's MCP server in the `mcp` block of `~/.config/kilo/kilo.json`
//! (`$XDG_CONFIG_HOME` moves the folder, `$KILO_CONFIG_DIR` replaces it;
//! Kilo reads `config.json`, `kilo.json`, `kilo.jsonc`, `opencode.json` and
//! `opencode.jsonc` there) and deja's plugin in its `plugin/` folder, wired
//! by the same mechanism as OpenCode's ([`super::opencode::OpenCodeFamily`]).

use super::opencode::OpenCodeFamily;

/// Kilo CLI.
pub static KILO: OpenCodeFamily = OpenCodeFamily {
    name: "kilo",
    title: "Kilo CLI",
    folder: "kilo",
    dir_var: Some("KILO_CONFIG_DIR"),
    config_file: "kilo.json",
    marker: "// deja: the project's memory at session start. Written by `deja setup kilo`; `deja setup kilo --undo` removes it.",
};
