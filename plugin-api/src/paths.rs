//! Path strings as a harness wrote them, on any operating system: a
//! transcript made on Windows (`c:\users\me\proj`) is read on Linux too, so
//! these helpers understand both separators instead of using `std::path`.

/// Whether `path` is a Windows path: a drive letter (`C:\`, `c:/`) or a UNC share (`\\host`).
pub fn is_windows(path: &str) -> bool {
    let drive = matches!(
        path.as_bytes(),
        [letter, b':', b'\\' | b'/', ..] if letter.is_ascii_alphabetic()
    );
    drive || path.starts_with("\\\\")
}

/// Whether `path` is absolute on Unix or Windows.
pub fn is_absolute(path: &str) -> bool {
    path.starts_with('/') || is_windows(path)
}

/// `relative` resolved against `dir`, with `dir`'s separator; an absolute
/// `relative` is returned unchanged.
pub fn join(dir: &str, relative: &str) -> String {
    if is_absolute(relative) {
        return relative.to_string();
    }
    let windows = is_windows(dir);
    let (sep, other) = if windows { ('\\', '/') } else { ('/', '\\') };
    let relative = if windows {
        relative.replace(other, "\\")
    } else {
        relative.to_string()
    };
    let relative = relative
        .strip_prefix(&format!(".{sep}"))
        .unwrap_or(&relative);
    format!("{}{sep}{relative}", dir.trim_end_matches(['/', '\\']))
}

/// The last component of `path`, whichever separator it uses.
pub fn basename(path: &str) -> Option<&str> {
    path.trim_end_matches(['/', '\\'])
        .rsplit(['/', '\\'])
        .next()
        .filter(|name| !name.is_empty() && !name.ends_with(':'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognizes_absolute_paths_of_both_systems() {
        assert!(is_absolute("/home/me/a.rs"));
        assert!(is_absolute("C:\\Users\\me"));
        assert!(is_absolute("c:/Users/me"));
        assert!(is_absolute("\\\\server\\share"));
        assert!(!is_absolute("src/main.rs"));
        assert!(!is_absolute("!/agent.sh"));
        assert!(!is_absolute("C:"));
    }

    #[test]
    fn joins_with_the_directory_separator() {
        assert_eq!(join("/p/x/", "src/a.rs"), "/p/x/src/a.rs");
        assert_eq!(join("/p/x", "./a.rs"), "/p/x/a.rs");
        assert_eq!(join("/p/x", "/etc/hosts"), "/etc/hosts");
        assert_eq!(
            join("c:\\users\\me\\vault", ".github/workflows/a.yml"),
            "c:\\users\\me\\vault\\.github\\workflows\\a.yml"
        );
        assert_eq!(join("c:\\vault", "D:\\x.md"), "D:\\x.md");
        assert_eq!(join("C:\\vault", "docs/a.md"), "C:\\vault\\docs\\a.md");
    }

    #[test]
    fn basenames_of_both_systems() {
        assert_eq!(basename("/home/me/proj/"), Some("proj"));
        assert_eq!(basename("c:\\users\\me\\idaho-vault"), Some("idaho-vault"));
        assert_eq!(basename("C:\\Users\\me\\IDAHO-VAULT"), Some("IDAHO-VAULT"));
        assert_eq!(basename("/"), None);
        assert_eq!(basename("C:\\"), None);
    }
}
