//! Path strings as Qwen Code wrote them: the shared helpers of the plugin API
//! (both separators, any operating system), and Qwen Code's own encoding of a
//! project directory into its folder name.

pub use deja_plugin_api::paths::{basename, is_windows, join};

/// qwen-code's `sanitizeCwd`, the name of a project's folder: lower-cased when
/// the directory is a Windows path, then every character that is not an ASCII
/// letter or digit becomes `-` (one per UTF-16 unit, as JavaScript counts).
pub fn encode(cwd: &str) -> String {
    let lowered;
    let cwd = if is_windows(cwd) {
        lowered = cwd.to_lowercase();
        &lowered
    } else {
        cwd
    };
    let mut out = String::with_capacity(cwd.len());
    for c in cwd.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else {
            for _ in 0..c.len_utf16() {
                out.push('-');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_with_the_directory_separator() {
        assert_eq!(join("/p/x/", "src/a.rs"), "/p/x/src/a.rs");
        assert_eq!(join("/p/x", "./a.rs"), "/p/x/a.rs");
        assert_eq!(join("/p/x", "/etc/hosts"), "/etc/hosts");
        assert_eq!(
            join("C:\\Users\\me", ".qwen/agents/"),
            "C:\\Users\\me\\.qwen\\agents\\"
        );
        assert_eq!(join("c:\\vault", "D:\\x.md"), "D:\\x.md");
    }

    #[test]
    fn basenames_of_both_systems() {
        assert_eq!(basename("/home/me/proj/"), Some("proj"));
        assert_eq!(
            basename("c:\\Users\\ChuHai\\Documents\\CloudSchool"),
            Some("CloudSchool")
        );
        assert_eq!(basename("/"), None);
        assert_eq!(basename("C:\\"), None);
    }

    #[test]
    fn encodes_like_qwen_code() {
        // The corpus' folder names for these cwd values.
        assert_eq!(encode("/home/archbtw"), "-home-archbtw");
        assert_eq!(
            encode("c:\\Users\\ChuHai\\Documents\\CloudSchool"),
            "c--users-chuhai-documents-cloudschool"
        );
        assert_eq!(encode("C:\\Windows\\System32"), "c--windows-system32");
        assert_eq!(encode("/a/b😀"), "-a-b--");
    }
}
