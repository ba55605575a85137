//! Finding a described harness's transcripts: its roots (for this OS, with
//! `~` and `$VAR` expanded; a root whose variable is unset is left out), or
//! the folders of its root variable (`DEJA_<HARNESS>_ROOT` unless the
//! description names another) instead; the files its own variables name;
//! the config's roots; then, below each root, the files that match
//! `files.glob` and not `files.exclude`, walked to `files.depth` levels.
//! Without the root variable, a description with `files.in_projects` also
//! looks into every project folder deja knows and those of the usual code
//! folders under home; what it finds there is marked as found in a code
//! folder, since it may have come with a cloned repository.

use std::path::{Path, PathBuf};

use deja_plugin_api::discover::{
    expand_home, split_path_list, Collector, CommonConfig, Excludes, CODE_FOLDERS,
    KNOWN_PROJECTS_VAR,
};
use deja_plugin_api::{Discovery, HostContext, PluginError};

use crate::description::{Description, Os, Root};

/// How many folder levels below a root are walked unless the description says.
pub const DEFAULT_DEPTH: usize = 6;

/// The transcripts the description finds in `context`.
pub fn discover(d: &Description, context: &HostContext) -> Result<Discovery, PluginError> {
    let config: CommonConfig = context.config()?;
    let mut collector = Collector::new(Excludes::new(&config.exclude, context.home()));
    let roots = roots(d, context, &config);
    for var in &d.files.file_vars {
        if let Some(value) = context.env(var) {
            let file = expand_home(value, context.home());
            let file = match (file.is_absolute(), roots.first()) {
                (false, Some((root, _))) => root.join(file),
                _ => file,
            };
            collector.searched(&file, var);
            if file.is_file() {
                collector.add(&file);
            }
        }
    }
    let depth = d.files.depth.unwrap_or(DEFAULT_DEPTH);
    let in_projects = match (&d.files.in_projects, context.env(&root_var(d))) {
        (Some(name), None) => in_projects(context, name),
        _ => Vec::new(),
    };
    // The roots first: a place the user named is not marked even when it is
    // a project folder too.
    let places = roots
        .iter()
        .map(|root| (root, false))
        .chain(in_projects.iter().map(|root| (root, true)));
    for ((root, reason), in_project) in places {
        collector.searched(root, reason);
        if root.is_file() {
            collector.add(root);
            continue;
        }
        let root_path = root.clone();
        collector.walk(root, depth, &mut |c, file| {
            if is_transcript(d, &root_path, file) {
                if in_project {
                    c.add_found_in_code_folder(file);
                } else {
                    c.add(file);
                }
            }
        });
    }
    Ok(collector.finish())
}

/// The variable that replaces the roots.
pub fn root_var(d: &Description) -> String {
    d.files.root_var.clone().unwrap_or_else(|| {
        format!(
            "DEJA_{}_ROOT",
            d.reader.harness.0.to_ascii_uppercase().replace('-', "_")
        )
    })
}

/// The roots to search, each with why; the project folders of
/// `files.in_projects` are not among them (see [`in_projects`]).
pub fn roots(
    d: &Description,
    context: &HostContext,
    config: &CommonConfig,
) -> Vec<(PathBuf, String)> {
    let home = context.home();
    let var = root_var(d);
    let mut out: Vec<(PathBuf, String)> = match context.env(&var) {
        Some(value) => split_path_list(value)
            .into_iter()
            .map(|p| (expand_home(&p.to_string_lossy(), home), var.clone()))
            .collect(),
        None => d
            .files
            .roots
            .iter()
            .filter_map(|root| {
                let (path, os) = match root {
                    Root::Path(p) => (p, None),
                    Root::Os { path, os } => (path, Some(*os)),
                };
                if os.is_some_and(|os| os != Os::current()) {
                    return None;
                }
                let expanded = expand(path, context)?;
                Some((
                    expand_home(&expanded, home),
                    format!("{} default ({path})", d.reader.harness.0),
                ))
            })
            .collect(),
    };
    out.extend(
        config
            .roots
            .iter()
            .map(|r| (expand_home(r, home), "config roots".to_string())),
    );
    let mut seen = std::collections::HashSet::new();
    out.retain(|(p, _)| seen.insert(p.clone()));
    out
}

/// `<project>/<name>` for every project folder deja knows and every folder
/// (two levels deep) of the usual code folders under home, where it exists.
/// What is found there is marked as found in a code folder
/// ([`deja_plugin_api::discover::FOUND_IN_CODE_FOLDER`]): a transcript inside
/// a project may have come with a cloned repository.
pub fn in_projects(context: &HostContext, name: &str) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    if let Some(known) = context.env(KNOWN_PROJECTS_VAR) {
        for dir in split_path_list(known) {
            let root = dir.join(name);
            if root.is_dir() {
                out.push((root, "a project folder of another session".to_string()));
            }
        }
    }
    let home = context.home();
    for code in CODE_FOLDERS {
        let top = home.join(code);
        let Ok(level1) = std::fs::read_dir(&top) else {
            continue;
        };
        for a in level1.flatten().map(|e| e.path()).filter(|p| p.is_dir()) {
            if a.join(name).is_dir() {
                out.push((a.join(name), format!("a project in ~/{code}")));
                continue;
            }
            let Ok(level2) = std::fs::read_dir(&a) else {
                continue;
            };
            for b in level2.flatten().map(|e| e.path()).filter(|p| p.is_dir()) {
                if b.join(name).is_dir() {
                    out.push((b.join(name), format!("a project in ~/{code}")));
                }
            }
        }
    }
    out.sort();
    out
}

/// `$VAR` and `${VAR}` replaced from the context; `None` when one is unset.
fn expand(path: &str, context: &HostContext) -> Option<String> {
    let mut out = String::new();
    let mut rest = path;
    while let Some(i) = rest.find('$') {
        out.push_str(rest.get(..i)?);
        let after = rest.get(i + 1..)?;
        let (name, tail) = if let Some(braced) = after.strip_prefix('{') {
            let end = braced.find('}')?;
            (braced.get(..end)?, braced.get(end + 1..)?)
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (after.get(..end)?, after.get(end..)?)
        };
        if name.is_empty() {
            out.push('$');
            rest = after;
            continue;
        }
        out.push_str(context.env(name)?);
        rest = tail;
    }
    out.push_str(rest);
    Some(out)
}

/// Whether `file` below `root` matches the description's globs.
pub fn is_transcript(d: &Description, root: &Path, file: &Path) -> bool {
    let Ok(relative) = file.strip_prefix(root) else {
        return false;
    };
    let relative = relative.to_string_lossy().replace('\\', "/");
    d.files.glob.iter().any(|g| g.matcher.is_match(&relative))
        && !d.files.exclude.iter().any(|g| {
            g.matcher.is_match(&relative)
                || Path::new(&relative)
                    .ancestors()
                    .any(|a| g.matcher.is_match(a))
        })
        && !superseded(&d.files.prefer, file)
}

/// Whether a file of the same name with an extension that comes earlier in
/// `prefer` is beside `file`.
fn superseded(prefer: &[String], file: &Path) -> bool {
    let Some(ext) = file.extension().and_then(|e| e.to_str()) else {
        return false;
    };
    let Some(rank) = prefer.iter().position(|p| p == ext) else {
        return false;
    };
    prefer
        .iter()
        .take(rank)
        .any(|better| file.with_extension(better).is_file())
}

#[cfg(test)]
mod tests {
    use super::*;
    use deja_plugin_api::EnvVar;

    fn context(env: &[(&str, &str)]) -> HostContext {
        HostContext {
            home: "/home/me".into(),
            env: env
                .iter()
                .map(|(k, v)| EnvVar {
                    key: (*k).into(),
                    value: (*v).into(),
                })
                .collect(),
            config_json: "{}".into(),
        }
    }

    #[test]
    fn variables_expand_and_unset_ones_drop_the_root() {
        let c = context(&[("XDG_DATA_HOME", "/data"), ("EMPTY", "")]);
        assert_eq!(
            expand("$XDG_DATA_HOME/opencode", &c).as_deref(),
            Some("/data/opencode")
        );
        assert_eq!(expand("${XDG_DATA_HOME}x", &c).as_deref(), Some("/datax"));
        assert_eq!(expand("$UNSET/opencode", &c), None);
        assert_eq!(expand("$EMPTY/opencode", &c), None);
        assert_eq!(expand("~/a$", &c).as_deref(), Some("~/a$"));
    }
}
