//! The test harness: a temporary HOME, the real binary with a controlled
//! environment, and builders for the plugins the tests load.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The fixtures folder.
pub fn fixtures() -> PathBuf {
    repo().join("fixtures")
}

/// The deja binary under test, with the bundled plugins built beside it.
pub fn deja_bin() -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_deja"));
    BUILT.get_or_init(|| {
        let release = bin
            .parent()
            .and_then(|p| p.file_name())
            .is_some_and(|n| n == "release");
        let mut cmd = Command::new(env!("CARGO"));
        cmd.current_dir(repo()).args([
            "build",
            "--quiet",
            "-p",
            "deja-plugin-aider",
            "-p",
            "deja-plugin-gemini",
        ]);
        if release {
            cmd.arg("--release");
        }
        let status = cmd
            .status()
            .expect("run cargo to build the bundled plugins");
        assert!(status.success(), "building the bundled plugins failed");
    });
    bin
}

/// The folder holding the test plugins and the README's example plugin,
/// built once per test run outside deja's workspace.
pub fn test_plugins() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(build_test_plugins)
}

fn build_test_plugins() -> PathBuf {
    let root = repo();
    let work = root.join("target/test-plugins");
    let target = work.join("target");
    std::fs::create_dir_all(&work).unwrap();
    // Same dependency versions as deja itself, and no network.
    std::fs::copy(
        root.join("Cargo.lock"),
        root.join("tests/plugins/Cargo.lock"),
    )
    .unwrap();

    // The README's example, exactly as documented, with the path to plugin-api filled in.
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let manifest = readme_block(&readme, "plugin-example:Cargo.toml").replace(
        "/path/to/deja/plugin-api",
        &root.join("plugin-api").to_string_lossy(),
    );
    let hello = work.join("hello");
    std::fs::create_dir_all(hello.join("src")).unwrap();
    std::fs::write(
        hello.join("Cargo.toml"),
        format!("{manifest}\n[workspace]\n"),
    )
    .unwrap();
    std::fs::copy(root.join("Cargo.lock"), hello.join("Cargo.lock")).unwrap();
    std::fs::write(
        hello.join("src/lib.rs"),
        readme_block(&readme, "plugin-example:lib.rs"),
    )
    .unwrap();

    for manifest in [
        root.join("tests/plugins/Cargo.toml"),
        hello.join("Cargo.toml"),
    ] {
        let out = Command::new(env!("CARGO"))
            .args([
                "build",
                "--offline",
                "--quiet",
                "--workspace",
                "--manifest-path",
            ])
            .arg(&manifest)
            .env("CARGO_TARGET_DIR", &target)
            .output()
            .expect("run cargo to build test plugins");
        assert!(
            out.status.success(),
            "building {} failed:\n{}",
            manifest.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    target.join("debug")
}

/// The code block that follows `<!-- marker -->` in the README.
fn readme_block(readme: &str, marker: &str) -> String {
    let start = readme
        .find(&format!("<!-- {marker} -->"))
        .unwrap_or_else(|| panic!("README has no `{marker}` block"));
    let rest = &readme[start..];
    let open = rest.find("```").unwrap();
    let body = &rest[open..];
    let body = &body[body.find('\n').unwrap() + 1..];
    let close = body.find("\n```").unwrap();
    body[..close + 1].to_string()
}

/// The file name of a plugin library called `name` on this platform.
pub fn lib_name(name: &str) -> String {
    format!(
        "{}{name}.{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_EXTENSION
    )
}

/// A temporary HOME with its own deja data folder, and a way to run deja in it.
pub struct Sandbox {
    _dir: tempfile::TempDir,
    /// The HOME directory.
    pub home: PathBuf,
    env: Vec<(String, String)>,
}

/// What a deja run printed.
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    /// stdout as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        Sandbox {
            _dir: dir,
            home,
            env: Vec::new(),
        }
    }

    /// deja's data folder in this HOME.
    pub fn data_dir(&self) -> PathBuf {
        self.home.join(".local/share/deja")
    }

    /// The user plugin folder, created 0755.
    pub fn plugin_dir(&self) -> PathBuf {
        let dir = self.data_dir().join("plugins");
        std::fs::create_dir_all(&dir).unwrap();
        set_mode(&dir, 0o755);
        dir
    }

    /// The config file path.
    pub fn config_path(&self) -> PathBuf {
        self.home.join(".config/deja/config.toml")
    }

    /// Writes the config file.
    pub fn config(&self, toml: &str) {
        let p = self.config_path();
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, toml).unwrap();
    }

    /// Sets an environment variable for later runs.
    #[allow(dead_code)]
    pub fn env(&mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) {
        self.env.push((
            key.to_string(),
            value.as_ref().to_string_lossy().into_owned(),
        ));
    }

    /// Writes a file under HOME and returns its path.
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let p = self.home.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, content).unwrap();
        p
    }

    /// A command for the deja binary with a clean environment.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(deja_bin());
        cmd.env_clear()
            .env("HOME", &self.home)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("TZ", "UTC")
            .env("NO_COLOR", "1")
            .current_dir(&self.home);
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }

    /// Runs deja with `args`.
    pub fn run(&self, args: &[&str]) -> Output {
        let out = self.command().args(args).output().unwrap();
        Output {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Runs deja and requires exit status 0.
    pub fn ok(&self, args: &[&str]) -> Output {
        let out = self.run(args);
        assert_eq!(
            out.code, 0,
            "deja {args:?} failed\nstdout:\n{}\nstderr:\n{}",
            out.stdout, out.stderr
        );
        out
    }
}

/// Sets Unix permissions.
pub fn set_mode(path: &Path, mode: u32) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
}

/// Copies a plugin library into `dir` with safe permissions.
pub fn install_plugin(from: &Path, dir: &Path) -> PathBuf {
    let to = dir.join(from.file_name().unwrap());
    std::fs::copy(from, &to).unwrap();
    set_mode(&to, 0o755);
    to
}
