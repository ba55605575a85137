//! Whether a path a transcript recorded means a given file: the same
//! absolute path, a relative path under the session's project, or the same
//! place inside a project of the same name elsewhere (a teammate's home,
//! another machine).

use std::borrow::Cow;
use std::path::{Component, Path, PathBuf};

/// The file asked about, resolved once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Its absolute path, `.` and `..` resolved by name.
    pub abs: PathBuf,
    /// The same file through its symbolic links, when that differs.
    pub real: Option<PathBuf>,
    /// The project folder it is in (the git repository's root), when known.
    pub root: Option<PathBuf>,
}

/// How a record's path came to mean the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Matched {
    /// The same absolute path.
    Exact,
    /// A relative path, under the session's project folder.
    Relative,
    /// The same place in a project of the same name elsewhere.
    Elsewhere,
}

impl Matched {
    /// How `--json` and the pages name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Matched::Exact => "exact",
            Matched::Relative => "relative",
            Matched::Elsewhere => "elsewhere",
        }
    }
}

impl Target {
    /// `file` made absolute against `cwd`, and the git repository holding it
    /// (the nearest folder above it with a `.git`).
    pub fn resolve(file: &Path, cwd: &Path) -> Target {
        let on_disk = normalize(&cwd.join(file));
        // The store keeps paths as text: compare in that form.
        let abs = lossy(&on_disk);
        let real = std::fs::canonicalize(&on_disk)
            .ok()
            .map(|p| lossy(&normalize(&p)))
            .filter(|p| *p != abs);
        let root = on_disk
            .ancestors()
            .skip(1)
            .find(|dir| dir.join(".git").exists())
            .map(lossy);
        Target { abs, real, root }
    }

    /// The file's name (its last component), to narrow a query.
    pub fn name(&self) -> String {
        self.abs
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// Whether `record` (a path as a session recorded it, in a session run
    /// in `session_dir`, of the project named `session_name`) means this
    /// file, and how.
    pub fn matches(
        &self,
        record: &str,
        session_dir: Option<&str>,
        session_name: Option<&str>,
    ) -> Option<Matched> {
        let windows = session_dir.is_some_and(|d| matches!(portable(d), Cow::Owned(_)));
        let record = portable_in(record, windows);
        let session_dir = session_dir.map(|d| portable_in(d, windows));
        let session_dir = session_dir.as_deref();
        let recorded = Path::new(record.as_ref());
        let (path, how) = if recorded.is_absolute() {
            (normalize(recorded), Matched::Exact)
        } else {
            match session_dir.map(Path::new).filter(|d| d.is_absolute()) {
                Some(dir) => (normalize(&dir.join(recorded)), Matched::Relative),
                // No folder to place it in: the same place inside the
                // project folder of the session's project name.
                None => {
                    let (_, inside) = self.inside(session_name.filter(|n| !n.is_empty())?)?;
                    let same = normalize(recorded) == inside && !inside.as_os_str().is_empty();
                    return same.then_some(Matched::Relative);
                }
            }
        };
        if self.same(&path) {
            return Some(how);
        }
        // Elsewhere: the session's project has the name of this file's
        // project folder, and the record lies at the same place inside it.
        let project = session_name
            .filter(|n| !n.is_empty())
            .map(str::to_string)
            .or_else(|| session_dir.and_then(|d| last_name(Path::new(d))))?;
        let (name, inside) = self.inside(&project)?;
        let theirs = match session_dir.map(|d| normalize(Path::new(d))) {
            Some(dir) if path.starts_with(&dir) && last_name(&dir).as_deref() == Some(&name) => {
                path.strip_prefix(&dir).ok()?.to_path_buf()
            }
            _ => after_last(&path, &name)?,
        };
        (theirs == inside && !inside.as_os_str().is_empty()).then_some(Matched::Elsewhere)
    }

    fn same(&self, path: &Path) -> bool {
        *path == self.abs || self.real.as_deref() == Some(path)
    }

    /// The project folder named `project` holding this file (its git root
    /// when it has one, else the nearest folder above it of that name), and
    /// the file's path inside it.
    fn inside(&self, project: &str) -> Option<(String, PathBuf)> {
        let folder = match &self.root {
            Some(root) => Some(root.as_path()),
            None => self
                .abs
                .ancestors()
                .skip(1)
                .find(|d| last_name(d).as_deref() == Some(project)),
        }?;
        let name = last_name(folder)?;
        if name != project {
            return None;
        }
        Some((name, self.abs.strip_prefix(folder).ok()?.to_path_buf()))
    }
}

/// A path recorded on Windows (`C:\...`, `\\server\...`) in `/` form
/// (`/C:/...`), so that its folders compare here; any other path as it is.
/// On Windows itself paths are compared as they are.
fn portable(path: &str) -> Cow<'_, str> {
    let drive = matches!(path.as_bytes(), [d, b':', b'\\' | b'/', ..] if d.is_ascii_alphabetic());
    if cfg!(windows) {
        Cow::Borrowed(path)
    } else if drive {
        Cow::Owned(format!("/{}", path.replace('\\', "/")))
    } else if path.starts_with("\\\\") {
        Cow::Owned(path.replace('\\', "/"))
    } else {
        Cow::Borrowed(path)
    }
}

/// [`portable`], and a relative path's `\` taken as a separator too when
/// its session ran on Windows.
fn portable_in(path: &str, windows: bool) -> Cow<'_, str> {
    match portable(path) {
        Cow::Borrowed(p) if windows && !cfg!(windows) => Cow::Owned(p.replace('\\', "/")),
        other => other,
    }
}

/// The path after its last component named `name`.
fn after_last(path: &Path, name: &str) -> Option<PathBuf> {
    let parts: Vec<Component<'_>> = path.components().collect();
    let at = parts
        .iter()
        .rposition(|c| matches!(c, Component::Normal(n) if n.to_string_lossy() == name))?;
    Some(parts.get(at + 1..)?.iter().collect())
}

fn lossy(path: &Path) -> PathBuf {
    PathBuf::from(path.to_string_lossy().into_owned())
}

fn last_name(path: &Path) -> Option<String> {
    path.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// `path` with `.` left out and each `..` taking away the folder before it
/// (never above the root), by name only.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() && !out.has_root() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(abs: &str, root: Option<&str>) -> Target {
        Target {
            abs: PathBuf::from(abs),
            real: None,
            root: root.map(PathBuf::from),
        }
    }

    #[test]
    fn an_absolute_record_matches_the_same_path() {
        let t = target("/Users/bob/src/app/src/x.rs", Some("/Users/bob/src/app"));
        assert_eq!(
            t.matches(
                "/Users/bob/src/app/src/x.rs",
                Some("/Users/bob/src/app"),
                None
            ),
            Some(Matched::Exact)
        );
        assert_eq!(t.matches("/Users/bob/src/app/src/y.rs", None, None), None);
    }

    #[test]
    fn a_relative_record_is_joined_to_the_session_project() {
        let t = target("/Users/bob/src/app/src/x.rs", Some("/Users/bob/src/app"));
        assert_eq!(
            t.matches("src/x.rs", Some("/Users/bob/src/app"), Some("app")),
            Some(Matched::Relative)
        );
        assert_eq!(
            t.matches("./src/../src/x.rs", Some("/Users/bob/src/app"), None),
            Some(Matched::Relative)
        );
        // Without the session's folder, its project's name places it.
        assert_eq!(
            t.matches("src/x.rs", None, Some("app")),
            Some(Matched::Relative)
        );
        assert_eq!(t.matches("src/x.rs", None, Some("other")), None);
        assert_eq!(t.matches("src/x.rs", None, None), None);
        assert_eq!(t.matches("lib/x.rs", None, Some("app")), None);
    }

    #[test]
    fn another_home_matches_by_project_name_and_place_inside() {
        let t = target("/Users/bob/src/app/src/x.rs", Some("/Users/bob/src/app"));
        assert_eq!(
            t.matches(
                "/home/alice/src/app/src/x.rs",
                Some("/home/alice/src/app"),
                Some("app")
            ),
            Some(Matched::Elsewhere)
        );
        // The session's project folder unknown: its name still places it.
        assert_eq!(
            t.matches("/home/alice/work/app/src/x.rs", None, Some("app")),
            Some(Matched::Elsewhere)
        );
        // Another project's file of the same name is not this one.
        assert_eq!(
            t.matches(
                "/home/alice/src/other/src/x.rs",
                Some("/home/alice/src/other"),
                Some("other")
            ),
            None
        );
        // Same project name, another place inside.
        assert_eq!(
            t.matches(
                "/home/alice/src/app/lib/x.rs",
                Some("/home/alice/src/app"),
                Some("app")
            ),
            None
        );
    }

    #[test]
    fn a_teammate_on_windows_matches_by_project_name_and_place_inside() {
        let t = target("/Users/bob/src/app/src/x.rs", Some("/Users/bob/src/app"));
        let dir = Some(r"C:\Users\al\src\app");
        assert_eq!(
            t.matches(r"C:\Users\al\src\app\src\x.rs", dir, Some("app")),
            Some(Matched::Elsewhere)
        );
        assert_eq!(
            t.matches(r"src\x.rs", dir, Some("app")),
            Some(Matched::Elsewhere)
        );
        assert_eq!(
            t.matches(r"C:\Users\al\src\app\lib\x.rs", dir, Some("app")),
            None
        );
        assert_eq!(portable(r"\\srv\share\app\x.rs"), "//srv/share/app/x.rs");
        assert_eq!(portable("/home/a/x.rs"), "/home/a/x.rs");
        assert_eq!(portable("C:"), "C:");
    }

    #[test]
    fn without_a_git_root_the_folder_named_like_the_project_is_taken() {
        let t = target("/Users/bob/src/app/src/x.rs", None);
        assert_eq!(
            t.matches(
                "/home/alice/app/src/x.rs",
                Some("/home/alice/app"),
                Some("app")
            ),
            Some(Matched::Elsewhere)
        );
        assert_eq!(
            t.matches("/home/alice/nope/src/x.rs", Some("/home/alice/nope"), None),
            None
        );
    }

    #[test]
    fn dot_dot_cannot_climb_out_to_match() {
        let t = target("/etc/passwd", None);
        assert_eq!(
            t.matches("/home/dev/app/../../../etc/passwd", None, None),
            Some(Matched::Exact)
        );
        assert_eq!(normalize(Path::new("/../../etc")), PathBuf::from("/etc"));
        // A relative record climbing out of the project is judged where it lands.
        let t = target("/home/dev/app/x.rs", Some("/home/dev/app"));
        assert_eq!(
            t.matches("../app/x.rs", Some("/home/dev/app"), None),
            Some(Matched::Relative)
        );
        assert_eq!(
            t.matches("../../x.rs", Some("/home/dev/app"), Some("app")),
            None
        );
    }

    #[test]
    fn very_long_and_lossy_paths_are_compared_without_failing() {
        let long = format!("/home/dev/app/{}/x.rs", "deep/".repeat(5000));
        let t = target(&long, Some("/home/dev/app"));
        assert_eq!(t.matches(&long, None, None), Some(Matched::Exact));
        assert_eq!(t.matches(&format!("{long}.bak"), None, Some("app")), None);

        #[cfg(unix)]
        {
            use std::ffi::OsStr;
            use std::os::unix::ffi::OsStrExt;
            let raw = OsStr::from_bytes(b"/home/dev/app/caf\xe9.rs");
            let t = Target::resolve(Path::new(raw), Path::new("/"));
            // The store keeps paths as text, decoded lossily.
            let stored = String::from_utf8_lossy(raw.as_bytes()).into_owned();
            assert_eq!(t.matches(&stored, None, None), Some(Matched::Exact));
            assert_eq!(t.name(), "caf\u{fffd}.rs");
        }
    }

    #[test]
    fn resolve_makes_relative_files_absolute_and_finds_the_git_root() {
        let dir = std::env::temp_dir().join(format!("deja-blame-{}", std::process::id()));
        let _ = std::fs::create_dir_all(dir.join("repo/.git"));
        let _ = std::fs::create_dir_all(dir.join("repo/src"));
        let t = Target::resolve(Path::new("src/../src/x.rs"), &dir.join("repo"));
        assert_eq!(t.abs, dir.join("repo/src/x.rs"));
        assert_eq!(t.root.as_deref(), Some(dir.join("repo").as_path()));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
