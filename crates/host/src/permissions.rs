//! Whether a plugin file may be loaded: the file, the folder holding it and
//! every folder above it, up to `/`, must be owned by this user or by root, and
//! writable by no one else. A folder above the plugin's own may be writable by
//! others only when root owns it and its sticky bit is set (as `/tmp`): there,
//! others cannot rename or replace what this user put in it.
//!
//! Both the path as given and the path with its links resolved are checked,
//! so that neither a link nor the folder holding it can be swapped by someone
//! else.

use std::path::{Path, PathBuf};

use crate::error::LoadError;

/// What a place is to the plugin file being checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// The plugin file itself.
    File,
    /// The folder that holds it.
    Folder,
    /// A folder further up.
    Ancestor,
}

/// What the check needs to know of one file or folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Facts {
    /// Its owner's user id.
    pub uid: u32,
    /// Its permission bits (with the sticky bit).
    pub mode: u32,
    /// Whether it is a folder.
    pub is_dir: bool,
}

const STICKY: u32 = 0o1000;
const GROUP_OR_OTHER_WRITE: u32 = 0o022;

/// Why `place` (at `path`, described by `facts`) makes a plugin unsafe to load
/// for the user `euid`, or `None` when it does not.
pub(crate) fn verdict(path: &Path, facts: Facts, place: Place, euid: u32) -> Option<String> {
    let kind = if facts.is_dir { "folder" } else { "file" };
    if facts.uid != euid && facts.uid != 0 {
        let whose = if place == Place::File {
            "it"
        } else {
            "a folder holding it"
        };
        return Some(format!(
            "{kind} `{}` is owned by user id {}, neither you (user id {euid}) nor root, and plugins are native code run by deja: {whose} could be changed by someone else; hint: move the plugin to a folder you own",
            path.display(),
            facts.uid,
        ));
    }
    if facts.mode & GROUP_OR_OTHER_WRITE == 0 {
        return None;
    }
    // Others may add files to a sticky folder root owns, but not rename or
    // replace this user's folder inside it. The plugin's own folder gets no
    // such leeway: anyone could drop a plugin-named file there.
    let sticky_root = facts.is_dir && facts.mode & STICKY != 0 && facts.uid == 0;
    if place == Place::Ancestor && sticky_root {
        return None;
    }
    let who = match (facts.mode & 0o020 != 0, facts.mode & 0o002 != 0) {
        (true, true) => "its group and everyone",
        (true, false) => "its group",
        _ => "everyone",
    };
    let role = match place {
        Place::File => "",
        Place::Folder => " (the plugin's folder)",
        Place::Ancestor => " (a folder above the plugin)",
    };
    Some(format!(
        "{kind} `{}`{role} is writable by {who}, and plugins are native code run by deja; hint: chmod go-w '{}'",
        path.display(),
        path.display()
    ))
}

/// The places to check for the plugin at `path`: the file, its folder and
/// each folder above, for the path as given (made absolute) and for the path
/// with its links resolved; each place once.
fn places(path: &Path) -> Result<Vec<(PathBuf, Place)>, LoadError> {
    let cannot = |p: &Path, e: std::io::Error| {
        LoadError::Invalid(format!("cannot read `{}`: {e}", p.display()))
    };
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| cannot(path, e))?
            .join(path)
    };
    let resolved = std::fs::canonicalize(&absolute).map_err(|e| cannot(path, e))?;
    let mut out: Vec<(PathBuf, Place)> = Vec::new();
    for chain in [&absolute, &resolved] {
        for (depth, place) in chain.ancestors().enumerate() {
            if place.as_os_str().is_empty() {
                continue;
            }
            let role = match depth {
                0 => Place::File,
                1 => Place::Folder,
                _ => Place::Ancestor,
            };
            if !out.iter().any(|(p, _)| p == place) {
                out.push((place.to_path_buf(), role));
            }
        }
    }
    Ok(out)
}

/// Checks the plugin at `path` for the user `euid`: the first place that
/// makes it unsafe refuses it, naming that place and what to do.
#[cfg(unix)]
pub(crate) fn check_as(path: &Path, euid: u32) -> Result<(), LoadError> {
    use std::os::unix::fs::MetadataExt;
    for (place_path, place) in places(path)? {
        // Links are followed: the folder holding a link is checked as a
        // place of its own.
        let meta = std::fs::metadata(&place_path).map_err(|e| {
            LoadError::Invalid(format!("cannot read `{}`: {e}", place_path.display()))
        })?;
        let facts = Facts {
            uid: meta.uid(),
            mode: meta.mode() & 0o7777,
            is_dir: meta.is_dir(),
        };
        if let Some(reason) = verdict(&place_path, facts, place, euid) {
            return Err(LoadError::Refused(reason));
        }
    }
    Ok(())
}

/// Checks the plugin at `path` for the user this process runs as.
#[cfg(unix)]
pub(crate) fn check(path: &Path) -> Result<(), LoadError> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    check_as(path, euid)
}

/// Elsewhere, folder permissions are not Unix modes: nothing is checked.
#[cfg(not(unix))]
pub(crate) fn check(path: &Path) -> Result<(), LoadError> {
    places(path).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ME: u32 = 1000;

    fn facts(uid: u32, mode: u32, is_dir: bool) -> Facts {
        Facts { uid, mode, is_dir }
    }

    fn refused(f: Facts, place: Place) -> Option<String> {
        verdict(Path::new("/p/x"), f, place, ME)
    }

    #[test]
    fn own_or_root_and_written_by_no_one_else_is_accepted() {
        for place in [Place::File, Place::Folder, Place::Ancestor] {
            for uid in [ME, 0] {
                assert_eq!(refused(facts(uid, 0o755, true), place), None);
            }
        }
        assert_eq!(refused(facts(ME, 0o644, false), Place::File), None);
    }

    #[test]
    fn someone_elses_file_or_folder_is_refused() {
        for place in [Place::File, Place::Folder, Place::Ancestor] {
            let why = refused(facts(4242, 0o755, place != Place::File), place).unwrap();
            assert!(why.contains("`/p/x`"), "{why}");
            assert!(why.contains("user id 4242"), "{why}");
            assert!(why.contains("neither you (user id 1000) nor root"), "{why}");
        }
    }

    #[test]
    fn group_or_world_writable_places_are_refused() {
        let why = refused(facts(ME, 0o664, false), Place::File).unwrap();
        assert!(why.contains("writable by its group"), "{why}");
        assert!(why.contains("chmod go-w '/p/x'"), "{why}");
        let why = refused(facts(ME, 0o757, true), Place::Ancestor).unwrap();
        assert!(why.contains("writable by everyone"), "{why}");
        assert!(why.contains("a folder above the plugin"), "{why}");
        let why = refused(facts(0, 0o777, true), Place::Folder).unwrap();
        assert!(why.contains("its group and everyone"), "{why}");
    }

    #[test]
    fn only_a_sticky_folder_root_owns_may_be_open_and_only_above_the_plugin() {
        let tmp = facts(0, 0o1777, true);
        assert_eq!(refused(tmp, Place::Ancestor), None);
        // The plugin's own folder: anyone could add a plugin there.
        assert!(refused(tmp, Place::Folder).is_some());
        // Sticky but owned by a user: that user can change its mode.
        assert!(refused(facts(ME, 0o1777, true), Place::Ancestor).is_some());
        // Root's but not sticky: anyone can rename this user's folder away.
        assert!(refused(facts(0, 0o777, true), Place::Ancestor).is_some());
    }

    #[test]
    fn places_cover_the_path_as_given_and_resolved() {
        let root = tempfile::tempdir().unwrap();
        let real = root.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::fs::write(real.join("lib.so"), b"").unwrap();
        let link_dir = root.path().join("links");
        std::fs::create_dir(&link_dir).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(real.join("lib.so"), link_dir.join("lib.so")).unwrap();
        #[cfg(unix)]
        {
            let found = places(&link_dir.join("lib.so")).unwrap();
            let resolved_real = std::fs::canonicalize(&real).unwrap();
            let has = |p: &Path, role: Place| found.iter().any(|(q, r)| q == p && *r == role);
            assert!(has(&link_dir.join("lib.so"), Place::File), "{found:?}");
            assert!(has(&link_dir, Place::Folder), "{found:?}");
            assert!(has(&resolved_real.join("lib.so"), Place::File), "{found:?}");
            assert!(has(&resolved_real, Place::Folder), "{found:?}");
            assert!(has(Path::new("/"), Place::Ancestor), "{found:?}");
        }
    }

    #[cfg(unix)]
    fn mode(path: &Path, mode: u32) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// `<tmp>/a/b/lib.so`, every part private to this user.
    #[cfg(unix)]
    fn tree() -> (tempfile::TempDir, PathBuf) {
        let root = tempfile::tempdir().unwrap();
        let b = root.path().join("a/b");
        std::fs::create_dir_all(&b).unwrap();
        mode(&root.path().join("a"), 0o755);
        mode(&b, 0o755);
        let lib = b.join("lib.so");
        std::fs::write(&lib, b"").unwrap();
        mode(&lib, 0o755);
        (root, lib)
    }

    #[cfg(unix)]
    #[test]
    fn a_private_tree_under_the_temporary_folder_is_accepted() {
        let (_root, lib) = tree();
        check(&lib).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn an_open_folder_anywhere_above_the_plugin_refuses_it() {
        let (root, lib) = tree();
        let a = root.path().join("a");
        mode(&a, 0o775);
        let Err(LoadError::Refused(why)) = check(&lib) else {
            panic!("loaded under a group-writable folder")
        };
        assert!(why.contains(&format!("`{}`", a.display())), "{why}");
        assert!(why.contains("a folder above the plugin"), "{why}");
        mode(&a, 0o755);
        check(&lib).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_file_someone_else_owns_is_refused() {
        use std::os::unix::fs::MetadataExt;
        let (_root, lib) = tree();
        // SAFETY: geteuid has no preconditions.
        let euid = unsafe { libc::geteuid() };
        let owner = if euid == 0 {
            // Root can give the file away: to `nobody`, checked as root.
            let c = std::ffi::CString::new(lib.to_str().unwrap()).unwrap();
            // SAFETY: a valid C string; -1 leaves the group as it is.
            let rc = unsafe { libc::chown(c.as_ptr(), 65534, u32::MAX) };
            assert_eq!(rc, 0, "chown failed");
            65534
        } else {
            std::fs::metadata(&lib).unwrap().uid()
        };
        // As root, the file is nobody's; otherwise it is this user's, checked
        // for another (non-root) user.
        let checker = if euid == 0 { 0 } else { euid + 1 };
        let Err(LoadError::Refused(why)) = check_as(&lib, checker) else {
            panic!("loaded a file owned by {owner}")
        };
        assert!(why.contains(&format!("user id {owner}")), "{why}");
        assert!(why.contains("lib.so"), "{why}");
    }
}
