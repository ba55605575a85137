//! Golden tests: every reader fixture under `fixtures/golden/<harness>/`
//! parsed by the real binary through the plugin as the host loads it
//! (`deja parse --json`), compared with a reviewed snapshot. Fixtures are
//! copied to a temporary folder with a fixed modification time (some
//! timestamps fall back to it), and that folder is masked, so snapshots hold
//! on any machine.

use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::common::{fixtures, Sandbox};

/// The modification time given to every copied fixture: 2026-01-01T00:00:00Z.
const FIXED_MTIME: u64 = 1_767_225_600;

fn copy_tree(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            copy_tree(&e.path(), &to.join(e.file_name()));
        }
    } else {
        std::fs::copy(from, to).unwrap();
        let f = std::fs::File::options().write(true).open(to).unwrap();
        f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(FIXED_MTIME))
            .unwrap();
    }
}

fn masked(output: &str, root: &Path) -> String {
    let root = root.to_string_lossy();
    let text = output.replace(root.as_ref(), "[FIXTURES]");
    // aider ids carry a hash of the history's absolute path.
    let ids = regex::Regex::new(r"aider-[0-9a-f]{12}-").unwrap();
    ids.replace_all(&text, "aider-[PATH-HASH]-").into_owned()
}

fn golden(harness: &str) {
    let dir = fixtures().join("golden").join(harness);
    let sb = Sandbox::new();
    let work = sb.home.join("golden");
    copy_tree(&dir, &work);
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    assert!(
        entries.len() >= 15,
        "expected at least 15 {harness} fixtures in {}",
        dir.display()
    );
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("snapshots/golden");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        for path in entries {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let case = name.split('.').next().unwrap().to_string();
            let copy = work.join(&name);
            let out = sb.run(&[
                "parse",
                copy.to_str().unwrap(),
                "--harness",
                harness,
                "--json",
            ]);
            let json: serde_json::Value = out.json();
            assert!(
                json["sessions"].is_array(),
                "{name}: no sessions array\n{}",
                out.stderr
            );
            let pretty = serde_json::to_string_pretty(&json).unwrap();
            insta::assert_snapshot!(format!("{harness}__{case}"), masked(&pretty, &work));
        }
    });
}

#[test]
fn golden_aider() {
    golden("aider");
}

#[test]
fn golden_gemini() {
    golden("gemini");
}
