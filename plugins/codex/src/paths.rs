//! Path strings as Codex wrote them: the shared helpers of the plugin API,
//! and a join for rollouts whose working directory may be unknown.

pub use deja_plugin_api::paths::basename;

/// `relative` resolved against `dir` (see [`deja_plugin_api::paths::join`]);
/// any path is returned unchanged when `dir` is unknown or blank.
pub fn join(dir: Option<&str>, relative: &str) -> String {
    match dir.filter(|d| !d.trim().is_empty()) {
        Some(dir) => deja_plugin_api::paths::join(dir, relative),
        None => relative.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_only_with_a_known_directory() {
        assert_eq!(join(Some("/p/x/"), "src/a.rs"), "/p/x/src/a.rs");
        assert_eq!(join(Some("/p/x"), "./a.rs"), "/p/x/a.rs");
        assert_eq!(join(Some("/p/x"), "/etc/hosts"), "/etc/hosts");
        assert_eq!(join(None, "a.rs"), "a.rs");
        assert_eq!(join(Some("  "), "a.rs"), "a.rs");
        assert_eq!(
            join(Some("c:\\users\\me\\vault"), "notes/a.md"),
            "c:\\users\\me\\vault\\notes\\a.md"
        );
    }
}
