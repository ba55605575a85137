//! The multilingual model: `scripts/fetch-model --multilingual` installs it
//! with every file pinned, and `--check` verifies it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The data folder scripts/fetch-model installed into.
fn data_home() -> PathBuf {
    std::env::var_os("DEJA_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".local/share/deja")
        })
}

const E5: &str = "multilingual-e5-small-int8";

/// The installed multilingual model's folder; panics with the fix when it is
/// not installed.
pub fn installed_e5() -> PathBuf {
    let dir = data_home().join("models").join(E5);
    assert!(
        dir.join("model.onnx").is_file(),
        "the multilingual model is not installed under {}; run scripts/fetch-model --multilingual first",
        dir.display()
    );
    dir
}

/// `scripts/fetch-model --check` (plus `extra`) on the data folder `home`:
/// its exit code and what it said.
fn check(home: &Path, extra: &[&str]) -> (i32, String) {
    let out = Command::new("python3")
        .arg(crate::common::repo().join("scripts/fetch-model"))
        .args(["--check", "--home"])
        .arg(home)
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A copy of `from` in `to`: small files copied (so they can be changed),
/// large ones linked.
fn mirror(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let meta = std::fs::metadata(&src).unwrap();
        if meta.is_dir() {
            mirror(&src, &dst);
        } else if meta.len() < 1 << 20 {
            std::fs::copy(&src, &dst).unwrap();
        } else {
            std::os::unix::fs::symlink(&src, &dst).unwrap();
        }
    }
}

#[test]
fn check_verifies_the_multilingual_model_file_by_file() {
    installed_e5();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("deja");
    mirror(&data_home().join("runtime"), &home.join("runtime"));
    for model in ["all-MiniLM-L6-v2", "all-MiniLM-L6-v2-int8", E5] {
        mirror(
            &data_home().join("models").join(model),
            &home.join("models").join(model),
        );
    }
    let folder = home.join("models").join(E5);

    // Installed: it is verified, and its card and licence are there.
    let (code, said) = check(&home, &["--multilingual"]);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains(E5), "{said}");
    let card: serde_json::Value =
        serde_json::from_slice(&std::fs::read(folder.join("deja-model.json")).unwrap()).unwrap();
    assert_eq!(card["query_prefix"], "query: ");
    assert_eq!(card["passage_prefix"], "passage: ");
    assert_eq!(card["pooling"], "mean");
    let about = std::fs::read_to_string(folder.join("MODEL")).unwrap();
    assert!(about.contains("license: MIT"), "{about}");

    // A changed card fails the check, naming the file, with or without the flag.
    std::fs::write(
        folder.join("deja-model.json"),
        r#"{"query_prefix": "", "passage_prefix": "", "pooling": "mean"}"#,
    )
    .unwrap();
    for extra in [&["--multilingual"][..], &[]] {
        let (code, said) = check(&home, extra);
        assert_eq!(code, 1, "{said}");
        assert!(
            said.contains("deja-model.json does not match its pinned sha256"),
            "{said}"
        );
    }

    // A missing file fails it too.
    std::fs::remove_file(folder.join("deja-model.json")).unwrap();
    std::fs::remove_file(folder.join("tokenizer_config.json")).unwrap();
    let (code, said) = check(&home, &[]);
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("tokenizer_config.json is missing"), "{said}");

    // Without the folder, only --multilingual asks for it.
    std::fs::remove_dir_all(&folder).unwrap();
    let (code, said) = check(&home, &[]);
    assert_eq!(code, 0, "{said}");
    let (code, said) = check(&home, &["--multilingual"]);
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("model.onnx is missing"), "{said}");
}
