//! Running one test of the current test
//! binary again as an unprivileged user, for checks that a process with
//! root's powers passes whatever the code does (a folder with mode 000 is
//! readable to root). CI runs as root; such a check is then made by `nobody`
//! instead of being skipped, and fails if it cannot be made.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Set in the environment of a re-run: a re-run never starts another.
pub const RERUN_ENV: &str = "DEJA_TEST_UNPRIVILEGED";

/// The user and group ids of `nobody` (from `/etc/passwd`, else 65534).
pub fn nobody() -> (u32, u32) {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    passwd
        .lines()
        .find_map(|line| {
            let mut fields = line.split(':');
            if fields.next() != Some("nobody") {
                return None;
            }
            let uid = fields.nth(1)?.parse().ok()?;
            let gid = fields.next()?.parse().ok()?;
            Some((uid, gid))
        })
        .unwrap_or((65534, 65534))
}

/// Whether this process is an unprivileged re-run.
pub fn is_rerun() -> bool {
    std::env::var_os(RERUN_ENV).is_some()
}

/// Runs the test `name` (its full name as libtest prints it, e.g.
/// `an_unreadable_folder_is_a_warning` or `trust::a_test`) of this test binary
/// again as `nobody` (user and group, no supplementary groups), from `/`, and
/// panics unless exactly that one test ran and passed. The binary is run from
/// a copy in a folder `nobody` can enter, wherever the build folder is.
///
/// Call it where a test finds it has root's powers. It panics, so the test
/// fails rather than passes unchecked, when this process is already a re-run
/// (the privileges were not dropped) or the re-run cannot be started (the
/// process may not change its user).
pub fn rerun_unprivileged(name: &str) {
    assert!(
        !is_rerun(),
        "`{name}` runs as `nobody` yet still has root's powers: privileges were not dropped"
    );
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let (uid, gid) = nobody();
    let exe = std::env::current_exe()
        .unwrap_or_else(|e| panic!("cannot find this test binary to run `{name}` again: {e}"));
    let dir: PathBuf = std::env::temp_dir().join(format!(
        "deja-unprivileged-{}-{}",
        std::process::id(),
        RUNS.fetch_add(1, Ordering::Relaxed)
    ));
    let open = |path: &std::path::Path| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
            .unwrap_or_else(|e| panic!("cannot open `{}` to `nobody`: {e}", path.display()))
    };
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("cannot create `{}`: {e}", dir.display()));
    open(&dir);
    let copy = dir.join("test-binary");
    std::fs::copy(&exe, &copy).unwrap_or_else(|e| panic!("cannot copy `{}`: {e}", exe.display()));
    open(&copy);
    let out = Command::new(&copy)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(RERUN_ENV, "1")
        .current_dir("/")
        .uid(uid)
        .gid(gid)
        .output();
    let _ = std::fs::remove_dir_all(&dir);
    let out = out.unwrap_or_else(|e| {
        panic!("cannot run `{name}` as user id {uid} (this process may not change its user): {e}")
    });
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "`{name}` failed when run as user id {uid}:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("test result: ok. 1 passed"),
        "`{name}` did not run as user id {uid} (is the name exact?):\n{stdout}\n{stderr}"
    );
}
