//! deja's configuration: the default file embedded in the binary, the user's
//! TOML file layered on top, environment overrides, validation that names the
//! offending key and file, and the provenance of every effective value.
//!
//! - [`schema`]: one struct per section, and the enums its keys take.
//! - [`load`]: defaults, the user's file and the environment layered, with
//!   sources and lines.
//! - [`validate`]: the file's shape against the defaults, bounds and choices.
//! - [`render`]: the effective configuration with its sources, passwords masked.
//! - [`reference`]: every key described, and the reference page generated
//!   from the descriptions, the defaults and the bounds.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::{Table, Value};

/// The default configuration file, with every key documented.
pub const DEFAULT_TOML: &str = include_str!("../default.toml");
/// Keys every `[harness.<name>]` section accepts.
pub const COMMON_HARNESS_KEYS: &[&str] = &["enabled", "roots", "exclude"];
/// The variable naming another config file; when set, that file must exist.
pub const CONFIG_ENV: &str = "DEJA_CONFIG";
/// Errors reading or validating the configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config file `{}`: {source}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// `$DEJA_CONFIG` names a file that does not exist.
    #[error("config file `{}` does not exist (${CONFIG_ENV} names it)", .path.display())]
    Missing {
        /// The file.
        path: PathBuf,
    },
    /// The file is not valid TOML, or a key is unknown, has the wrong type or
    /// is out of bounds.
    #[error("invalid config file `{}`{}: {message}", .path.display(), at_line(*.line))]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The line (1-based) the problem is on, when known.
        line: Option<usize>,
        /// What is wrong, naming the full key.
        message: String,
    },
}
fn at_line(line: Option<usize>) -> String {
    line.map(|l| format!(", line {l}")).unwrap_or_default()
}
/// Where an effective value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The embedded default.
    Default,
    /// The user's config file.
    File(PathBuf),
    /// An environment variable.
    Env(&'static str),
}
impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::File(p) => write!(f, "{}", p.display()),
            Source::Env(v) => write!(f, "${v}"),
        }
    }
}

pub mod load;
pub mod reference;
pub mod render;
pub mod schema;
pub mod validate;

pub use load::*;
pub use render::*;
pub use schema::*;
pub use validate::*;

/// A configured path with a leading `~` (alone or as `~/`) replaced by
/// `home`; other paths are returned as written.
pub use deja_fs::expand_home;

#[cfg(test)]
mod password_tests {
    use super::hide_password;

    #[test]
    fn passwords_in_urls_are_hidden() {
        assert_eq!(
            hide_password("postgres://ana:s3cret@db:5432/team"),
            "postgres://ana:***@db:5432/team"
        );
        assert_eq!(
            hide_password("postgres://ana@db/team"),
            "postgres://ana@db/team"
        );
        assert_eq!(hide_password(""), "");
    }

    #[test]
    fn passwords_in_query_parameters_are_hidden() {
        assert_eq!(
            hide_password("postgres://ana@db/team?password=s3cret"),
            "postgres://ana@db/team?password=***"
        );
        assert_eq!(
            hide_password(
                "postgresql://ana@db/team?sslmode=require&password=s3cret&application_name=x"
            ),
            "postgresql://ana@db/team?sslmode=require&password=***&application_name=x"
        );
        assert_eq!(
            hide_password("postgres://db?user=ana&PassWord=s3cret"),
            "postgres://db?user=ana&PassWord=***"
        );
        assert_eq!(
            hide_password("postgres://db/team?pass%77ord=s3cret"),
            "postgres://db/team?pass%77ord=***"
        );
        // Both forms at once.
        let both = hide_password("postgres://ana:one@db/team?password=two");
        assert!(!both.contains("one") && !both.contains("two"), "{both}");
        // A query without a password is left as it is.
        assert_eq!(
            hide_password("postgres://ana@db/team?sslmode=require"),
            "postgres://ana@db/team?sslmode=require"
        );
    }

    #[test]
    fn passwords_in_key_value_strings_are_hidden() {
        assert_eq!(
            hide_password("host=db user=ana password=s3cret dbname=team"),
            "host=db user=ana password=*** dbname=team"
        );
        assert_eq!(
            hide_password("host=db password = 's3 cret' dbname=team"),
            "host=db password = *** dbname=team"
        );
        assert_eq!(
            hide_password("password='it\\'s secret' host=db"),
            "password=*** host=db"
        );
        assert_eq!(
            hide_password("host=db password=s3cret"),
            "host=db password=***"
        );
        assert_eq!(hide_password("host=db user=ana"), "host=db user=ana");
        for shown in [
            hide_password("host=db password=s3cret"),
            hide_password("PASSWORD=s3cret host=db"),
        ] {
            assert!(!shown.contains("s3cret"), "{shown}");
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn a_default_harness_section_is_an_empty_one() {
        let empty: Harness = toml::from_str("").unwrap();
        let default = Harness::default();
        assert!(default.enabled);
        assert_eq!(empty.enabled, default.enabled);
        assert_eq!(empty.to_table(), default.to_table());
    }

    #[test]
    fn defaults_load_without_a_file() {
        let l = load(Path::new("/nonexistent/deja.toml"), false, &no_env).unwrap();
        assert!(!l.file_exists);
        assert_eq!(l.config.recall.mode, Mode::Hybrid);
        assert_eq!(l.config.index.max_file_bytes, 256 * 1024 * 1024);
        assert!(l.config.harness["aider"].enabled);
        assert_eq!(l.sources["recall.limit"], Source::Default);
    }

    #[test]
    fn file_overrides_and_provenance() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "[recall]\nlimit = 3\n[harness.aider]\ntimezone = \"UTC\"\n[harness.other]\nroots = [\"/x\"]\n",
        )
        .unwrap();
        let env = |k: &str| (k == "DEJA_HOME").then(|| "/data".to_string());
        let l = load(&path, false, &env).unwrap();
        assert_eq!(l.config.recall.limit, 3);
        assert_eq!(l.sources["recall.limit"], Source::File(path.clone()));
        assert_eq!(l.config.store.dir, "/data");
        assert_eq!(l.sources["store.dir"], Source::Env("DEJA_HOME"));
        assert_eq!(l.config.harness["other"].roots, vec!["/x".to_string()]);
        assert!(l.config.harness["other"].enabled);
        let text = l.render_with_sources();
        assert!(text.contains("limit = 3  # "), "{text}");
        assert!(text.contains("dir = \"/data\"  # $DEJA_HOME"), "{text}");
        // The rendering is itself valid TOML.
        let _: Table = text.parse().unwrap();
    }

    #[test]
    fn unknown_keys_name_the_key_and_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[recall]\nlimt = 3\n").unwrap();
        let err = load(&path, false, &no_env).unwrap_err().to_string();
        assert!(err.contains("limt"), "{err}");
        assert!(err.contains(&path.display().to_string()), "{err}");
    }

    #[test]
    fn bad_values_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[recall]\nmode = \"fuzzy\"\n").unwrap();
        let err = load(&path, false, &no_env).unwrap_err().to_string();
        assert!(err.contains("fuzzy"), "{err}");
        std::fs::write(&path, "[embed]\nbatch_size = 0\n").unwrap();
        let err = load(&path, false, &no_env).unwrap_err().to_string();
        assert!(err.contains("embed.batch_size"), "{err}");
    }

    #[test]
    fn harness_keys_are_checked_against_the_plugin() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[harness.aider]\ntimezon = \"UTC\"\n").unwrap();
        let l = load(&path, false, &no_env).unwrap();
        let err = l
            .check_harness_keys("aider", &["timezone".to_string()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("harness.aider.timezon"), "{err}");
        assert!(err.contains("`timezone`"), "{err}");
        assert!(err.contains("line 2"), "{err}");
        assert!(l.check_harness_keys("gemini", &[]).is_ok());
    }

    /// The error `load` gives for a file holding `toml`.
    fn error_for(toml: &str) -> (ConfigError, PathBuf, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, toml).unwrap();
        let err = load(&path, false, &no_env).unwrap_err();
        (err, path, dir)
    }

    fn line_of(e: &ConfigError) -> Option<usize> {
        match e {
            ConfigError::Invalid { line, .. } => *line,
            _ => None,
        }
    }

    #[test]
    fn errors_name_the_file_the_line_and_the_full_key() {
        let (e, path, _d) = error_for("# mine\n[recall]\nmode = \"lexical\"\nlimt = 3\n");
        let msg = e.to_string();
        assert_eq!(line_of(&e), Some(4), "{msg}");
        assert!(msg.contains(&path.display().to_string()), "{msg}");
        assert!(msg.contains("line 4"), "{msg}");
        assert!(msg.contains("`recall.limt`"), "{msg}");
        assert!(msg.contains("`limit`"), "{msg}");

        // Invalid TOML: the line of the syntax error.
        let (e, _, _d) = error_for("[recall]\nlimit = 3\nmode = \n");
        assert_eq!(line_of(&e), Some(3), "{e}");
        assert!(e.to_string().contains("not valid TOML"), "{e}");

        // Wrong types, with the full key.
        let (e, _, _d) = error_for("[index]\n\nlock_wait_secs = \"ten\"\n");
        assert_eq!(line_of(&e), Some(3), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains("`index.lock_wait_secs` must be an integer, not a string"),
            "{msg}"
        );
        let (e, _, _d) = error_for("[harness.aider]\nroots = \"/x\"\n");
        assert!(
            e.to_string()
                .contains("`harness.aider.roots` must be a list of strings"),
            "{e}"
        );
        let (e, _, _d) = error_for("[recall]\nmode = \"fuzzy\"\n");
        let msg = e.to_string();
        assert!(
            msg.contains("`recall.mode` must be one of") && msg.contains("fuzzy"),
            "{msg}"
        );
        assert_eq!(line_of(&e), Some(2));
        let (e, _, _d) = error_for("[redact]\npatterns = [{ name = \"x\" }]\n");
        assert!(e.to_string().contains("`redact.patterns`"), "{e}");

        // Unknown sections and top-level keys.
        let (e, _, _d) = error_for("[recal]\nlimit = 3\n");
        assert_eq!(line_of(&e), Some(1));
        assert!(e.to_string().contains("unknown section `[recal]`"), "{e}");
        assert!(e.to_string().contains("[recall]"), "{e}");
        let (e, _, _d) = error_for("limit = 3\n");
        assert!(e.to_string().contains("unknown key `limit`"), "{e}");
        let (e, _, _d) = error_for("recall = 3\n");
        assert!(e.to_string().contains("`recall` must be a section"), "{e}");
    }

    #[test]
    fn decimal_keys_are_bounded_and_take_whole_numbers() {
        for (key, least, most) in FLOAT_BOUNDS {
            let (section, name) = key.split_once('.').unwrap();
            for bad in [least - 0.5, most + 0.5] {
                let (e, _, _d) = error_for(&format!("[{section}]\n{name} = {bad:?}\n"));
                let msg = e.to_string();
                assert!(
                    msg.contains(&format!("`{key}` must be between {least} and {most}")),
                    "{msg}"
                );
                assert_eq!(line_of(&e), Some(2), "{msg}");
            }
            let doc = documentation(section, name);
            assert!(
                doc.contains(&format!("{least} to {most}")),
                "the documentation of `{key}` does not say `{least} to {most}`: {doc}"
            );
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        for (text, want) in [("0", 0.0), ("1", 1.0), ("0.25", 0.25)] {
            std::fs::write(&path, format!("[recall]\nmin_similarity = {text}\n")).unwrap();
            let l = load(&path, false, &no_env).unwrap();
            assert_eq!(l.config.recall.min_similarity, want, "{text}");
        }
        let (e, _, _d) = error_for("[recall]\nmin_similarity = 2\n");
        assert!(e.to_string().contains("between 0 and 1, not 2"), "{e}");
        let (e, _, _d) = error_for("[recall]\nmin_similarity = \"high\"\n");
        assert!(e.to_string().contains("must be a decimal number"), "{e}");
    }

    #[test]
    fn numeric_keys_are_bounded() {
        for (key, least, most) in BOUNDS {
            let (section, name) = key.split_once('.').unwrap();
            for bad in [least - 1, most + 1] {
                let (e, _, _d) = error_for(&format!("[{section}]\n{name} = {bad}\n"));
                let msg = e.to_string();
                assert!(
                    msg.contains(&format!(
                        "`{key}` must be between {least} and {most}, not {bad}"
                    )),
                    "{msg}"
                );
                assert_eq!(line_of(&e), Some(2), "{msg}");
            }
        }
        // Every integer key of the defaults is bounded, its default within
        // bounds, and its documentation states the bounds.
        let defaults: Table = DEFAULT_TOML.parse().unwrap();
        let mut integers = Vec::new();
        for (section, t) in &defaults {
            for (k, v) in t.as_table().unwrap() {
                if let Value::Integer(n) = v {
                    integers.push((format!("{section}.{k}"), *n));
                }
            }
        }
        assert_eq!(integers.len(), BOUNDS.len(), "{integers:?}");
        for (key, n) in integers {
            let (_, least, most) = BOUNDS.iter().find(|(k, _, _)| *k == key).unwrap();
            assert!((*least..=*most).contains(&n), "{key}");
            let (section, name) = key.split_once('.').unwrap();
            let doc = documentation(section, name);
            assert!(
                doc.contains(&format!("{least} to {most}")),
                "the documentation of `{key}` does not say `{least} to {most}`: {doc}"
            );
        }
        // Keys bounded by others.
        let (e, _, _d) = error_for("[embed]\nmax_tokens = 64\noverlap_tokens = 32\n");
        assert!(
            e.to_string()
                .contains("`embed.overlap_tokens` must be less than half"),
            "{e}"
        );
        assert_eq!(line_of(&e), Some(3));
    }

    /// The comment lines right above `key` in `[section]` of the default file.
    fn documentation(section: &str, key: &str) -> String {
        let mut in_section = false;
        let mut comment = Vec::new();
        for line in DEFAULT_TOML.lines() {
            let t = line.trim();
            if t.starts_with('[') {
                in_section = t == format!("[{section}]");
                comment.clear();
            } else if let Some(c) = t.strip_prefix('#') {
                comment.push(c.trim().to_string());
            } else if in_section && t.starts_with(&format!("{key} =")) {
                return comment.join(" ");
            } else {
                comment.clear();
            }
        }
        String::new()
    }

    #[test]
    fn a_named_file_must_exist() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing.toml");
        // Not named: a missing file means the defaults.
        let d = load(&path, false, &no_env).unwrap();
        assert!(!d.file_exists);
        assert_eq!(d.config.recall.limit, 10);
        let e = load(&path, true, &no_env).unwrap_err().to_string();
        assert!(
            e.contains("missing.toml") && e.contains("does not exist"),
            "{e}"
        );
        assert!(e.contains("DEJA_CONFIG"), "{e}");
        // A folder is not a config file.
        let e = load(dir.path(), false, &no_env).unwrap_err().to_string();
        assert!(e.contains("not a file"), "{e}");
        // The defaults stand in for a broken file.
        std::fs::write(&path, "[recall\n").unwrap();
        assert!(load(&path, false, &no_env).is_err());
        let d = defaults(&path, &no_env).unwrap();
        assert!(d.file_exists);
        assert_eq!(d.config.recall.limit, 10);
    }

    #[test]
    fn harness_sections_must_name_a_loaded_reader() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "[recall]\nlimit = 3\n\n[harness.gemni]\nenabled = false\n",
        )
        .unwrap();
        let l = load(&path, false, &no_env).unwrap();
        assert_eq!(l.file_harnesses, vec!["gemni".to_string()]);
        let e = l.check_harness_names(&["aider", "gemini"]).unwrap_err();
        assert_eq!(line_of(&e), Some(4));
        let msg = e.to_string();
        assert!(msg.contains("`[harness.gemni]`"), "{msg}");
        assert!(msg.contains("did you mean `[harness.gemini]`"), "{msg}");
        assert!(msg.contains("`aider`, `gemini`"), "{msg}");
        assert!(l.check_harness_names(&["gemni"]).is_ok());
        // The default file's own sections are not the user's to explain.
        let l = load(Path::new("/nonexistent/deja.toml"), false, &no_env).unwrap();
        assert!(l.check_harness_names(&[]).is_ok());
    }

    #[test]
    fn every_default_key_is_documented() {
        // Each key line in the default file is preceded by a comment line
        // (directly, or as part of a block of keys under one comment).
        let mut documented = false;
        for line in DEFAULT_TOML.lines() {
            let t = line.trim();
            if t.starts_with('#') {
                documented = true;
            } else if t.starts_with('[') {
                documented = t.starts_with("[harness.");
            } else if t.is_empty() {
                documented = false;
            } else {
                assert!(documented, "undocumented key: {t}");
            }
        }
    }
}
