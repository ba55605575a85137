//! Which directory a session ran in. Claude Code files a session under
//! `projects/<encoded cwd>/`, where every character of the working directory
//! that is not an ASCII letter or digit becomes `-` (`/home/ann/my-app` →
//! `-home-ann-my-app`). The encoding is lossy, so the directory is the `cwd`
//! its records carry: the first one whose encoding matches the folder
//! (ignoring case: VS Code on Windows writes `c:\` where the CLI writes
//! `C:\`), else the first one (a session that `cd`s elsewhere keeps its
//! folder). Only when no record has a `cwd` is the folder name decoded, as a
//! guess that takes every `-` for a separator.

use deja_plugin_api::{Project, ROption, RString};

use deja_plugin_api::paths;

/// Claude Code's folder name for working directory `cwd`.
pub fn encode(cwd: &str) -> String {
    cwd.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The session's directory among the `cwds` its records carry (in order),
/// filed under `folder`.
pub fn choose<'a>(cwds: &[&'a str], folder: Option<&str>) -> Option<&'a str> {
    let matching = folder.and_then(|folder| {
        cwds.iter()
            .find(|cwd| encode(cwd).eq_ignore_ascii_case(folder))
            .copied()
    });
    matching.or_else(|| cwds.first().copied())
}

/// A guess at the directory a folder name encodes: `-home-ann-app` →
/// `/home/ann/app`, `C--Users-ann` → `C:\Users\ann`.
pub fn decode(folder: &str) -> Option<String> {
    let bytes = folder.as_bytes();
    if let [drive, b'-', b'-', ..] = bytes {
        if drive.is_ascii_alphabetic() {
            let rest = folder.get(3..).unwrap_or_default().replace('-', "\\");
            return Some(format!("{}:\\{rest}", char::from(*drive)));
        }
    }
    folder
        .starts_with('-')
        .then(|| folder.replace('-', "/"))
        .filter(|path| path.len() > 1)
}

/// The project of a session: its directory (from `cwds`, else decoded from
/// `folder`), the directory's name, and the folder name as the harness's id.
pub fn resolve(cwds: &[&str], folder: Option<&str>) -> Project {
    let dir = choose(cwds, folder)
        .map(String::from)
        .or_else(|| folder.and_then(decode));
    let id = folder
        .map(String::from)
        .or_else(|| dir.as_deref().map(encode));
    Project {
        name: dir
            .as_deref()
            .and_then(paths::basename)
            .map(RString::from)
            .into(),
        dir: dir.map(RString::from).into(),
        id: id.map(RString::from).into(),
    }
}

/// The directory of `project`, if known.
pub fn dir(project: &Project) -> Option<&str> {
    match &project.dir {
        ROption::RSome(dir) => Some(dir.as_str()),
        ROption::RNone => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_like_claude_code() {
        assert_eq!(encode("/home/ann/my-app"), "-home-ann-my-app");
        assert_eq!(encode("C:\\Users\\x\\.local\\bin"), "C--Users-x--local-bin");
        assert_eq!(
            encode("C:\\Users\\loganf\\Documents\\IDAHO-VAULT\\.claude\\worktrees\\friendly-cartwright"),
            "C--Users-loganf-Documents-IDAHO-VAULT--claude-worktrees-friendly-cartwright"
        );
        assert_eq!(encode("/tmp/é x"), "-tmp---x");
    }

    #[test]
    fn the_cwd_that_matches_the_folder_wins() {
        let cwds = ["/Users/d/.dots", "/Users/d"];
        assert_eq!(choose(&cwds, Some("-Users-d")), Some("/Users/d"));
        assert_eq!(choose(&cwds, Some("-elsewhere")), Some("/Users/d/.dots"));
        assert_eq!(choose(&cwds, None), Some("/Users/d/.dots"));
        assert_eq!(choose(&[], Some("-Users-d")), None);
        let windows = ["C:\\Users\\l\\V"];
        assert_eq!(
            choose(&windows, Some("c--Users-l-V")),
            Some("C:\\Users\\l\\V")
        );
    }

    #[test]
    fn folder_names_decode_as_a_guess() {
        assert_eq!(decode("-home-ann-app").as_deref(), Some("/home/ann/app"));
        assert_eq!(decode("C--Users-ann").as_deref(), Some("C:\\Users\\ann"));
        assert_eq!(decode("c--x").as_deref(), Some("c:\\x"));
        assert_eq!(decode("plain"), None);
        assert_eq!(decode("-"), None);
    }

    #[test]
    fn resolves_dir_name_and_id() {
        let p = resolve(&["/home/ann/app"], Some("-home-ann-app"));
        assert_eq!(dir(&p), Some("/home/ann/app"));
        assert_eq!(p.name, ROption::RSome("app".into()));
        assert_eq!(p.id, ROption::RSome("-home-ann-app".into()));
        let guessed = resolve(&[], Some("-home-ann-app"));
        assert_eq!(dir(&guessed), Some("/home/ann/app"));
        let nothing = resolve(&[], None);
        assert_eq!(nothing, Project::default());
    }
}
