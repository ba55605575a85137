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
            "-p",
            "deja-plugin-claude",
            "-p",
            "deja-plugin-codex",
            "-p",
            "deja-plugin-qwen",
            "-p",
            "deja-plugin-vibe",
            "-p",
            "deja-plugin-toml",
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

/// The folder holding the test plugins and the guide's example plugin,
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

    // The guide's example, exactly as documented, with the path to plugin-api filled in.
    let guide = std::fs::read_to_string(root.join(WRITING_A_READER)).unwrap();
    let manifest = guide_block(&guide, "plugin-example:Cargo.toml").replace(
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
        guide_block(&guide, "plugin-example:lib.rs"),
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

/// The guide's page on writing readers, whose examples the tests build and run.
pub const WRITING_A_READER: &str = "docs/writing-a-reader.md";

/// The code block that follows `<!-- marker -->` in a page of the guide.
fn guide_block(page: &str, marker: &str) -> String {
    let start = page
        .find(&format!("<!-- {marker} -->"))
        .unwrap_or_else(|| panic!("{WRITING_A_READER} has no `{marker}` block"));
    let rest = &page[start..];
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
        self.command_of(&deja_bin())
    }

    /// A command for `program` with the clean environment deja runs in.
    pub fn command_of(&self, program: &Path) -> Command {
        let mut cmd = Command::new(program);
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

/// The installed model and runtime (from `scripts/fetch-model`), for tests
/// that need real embeddings. Panics with the fix when they are missing: such
/// tests never pass without the model.
pub fn installed_model() -> (PathBuf, PathBuf) {
    let data = std::env::var_os("DEJA_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".local/share/deja")
        });
    let model = data.join("models/all-MiniLM-L6-v2-int8");
    let runtime = [
        "libonnxruntime.so",
        "libonnxruntime.dylib",
        "onnxruntime.dll",
    ]
    .iter()
    .map(|n| data.join("runtime").join(n))
    .find(|p| p.exists());
    match runtime {
        Some(rt) if model.join("model.onnx").exists() => (model, rt),
        _ => panic!(
            "the embedding model is not installed under {}; run scripts/fetch-model first",
            data.display()
        ),
    }
}

impl Sandbox {
    /// Configures the installed model (see [`installed_model`]) plus `extra` TOML.
    pub fn config_with_model(&self, extra: &str) {
        let (model, runtime) = installed_model();
        self.config(&format!(
            "[embed]\nmodel_dir = {:?}\nruntime = {:?}\n{extra}",
            model.to_str().unwrap(),
            runtime.to_str().unwrap()
        ));
    }

    /// The index database.
    pub fn database(&self) -> PathBuf {
        self.data_dir().join("index.sqlite")
    }

    /// A canonical dump of the store's content (no row ids or times of
    /// indexing), for comparing two stores.
    pub fn dump(&self) -> String {
        let conn = rusqlite::Connection::open_with_flags(
            self.database(),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .unwrap();
        // FTS5's own consistency check (fails on a corrupt index; changes nothing).
        {
            let rw = rusqlite::Connection::open(self.database()).unwrap();
            rw.execute(
                "INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)",
                [],
            )
            .expect("the full-text index is consistent");
        }
        let mut out = String::new();
        let queries = [
            "SELECT harness, session_id, native_id, coalesce(source_path,''), source_id IS NULL, started_at,
                    updated_at, coalesce(project_dir,''), coalesce(project_name,''), coalesce(project_id,''),
                    coalesce(title,''), coalesce(parent_id,''), message_count, coalesce(first_user,'')
             FROM sessions ORDER BY harness, session_id",
            "SELECT s.harness, s.session_id, m.position, m.role, m.hash, m.timestamp, coalesce(m.native_id,'')
             FROM messages m JOIN sessions s ON s.id = m.session ORDER BY 1, 2, 3",
            "SELECT s.harness, s.session_id, f.position, f.path, f.action FROM files f
             JOIN sessions s ON s.id = f.session ORDER BY 1, 2, 3",
            "SELECT s.harness, s.session_id, c.position, c.command, c.origin FROM commands c
             JOIN sessions s ON s.id = c.session ORDER BY 1, 2, 3",
            "SELECT s.harness, s.session_id, m.position, c.ordinal, c.text_hash FROM chunks c
             JOIN messages m ON m.id = c.message JOIN sessions s ON s.id = m.session ORDER BY 1, 2, 3, 4",
            // Through the full-text index itself, not its content table.
            "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'module OR tenant OR question OR answer'",
            "SELECT harness, path, hash, error IS NULL FROM sources ORDER BY 1, 2",
            "SELECT harness, session_id FROM tombstones ORDER BY 1, 2",
        ];
        for q in queries {
            let mut stmt = conn.prepare(q).unwrap();
            let n = stmt.column_count();
            let rows = stmt
                .query_map([], |r| {
                    let mut cols = Vec::new();
                    for i in 0..n {
                        let v: rusqlite::types::Value = r.get(i)?;
                        cols.push(format!("{v:?}"));
                    }
                    Ok(cols.join("|"))
                })
                .unwrap();
            for row in rows {
                out.push_str(&row.unwrap());
                out.push('\n');
            }
            out.push_str("--\n");
        }
        out
    }

    /// Runs `deja index --json` and returns its summary.
    pub fn index(&self) -> Value {
        self.ok(&["index", "--json"]).json()
    }
}

/// Writes a Gemini CLI JSONL recording with `n` messages under
/// `<gemini>/tmp/<project>/chats/`, returning its path.
pub fn gemini_session(
    gemini: &Path,
    project: &str,
    id: &str,
    start_minute: u32,
    n: usize,
    topic: &str,
) -> PathBuf {
    let chats = gemini.join("tmp").join(project).join("chats");
    std::fs::create_dir_all(&chats).unwrap();
    let start = format!(
        "2026-07-17T{:02}:{:02}:00.000Z",
        8 + start_minute / 60,
        start_minute % 60
    );
    let mut lines = vec![serde_json::json!({
        "sessionId": id, "projectHash": "0".repeat(64), "startTime": start,
        "lastUpdated": start, "kind": "main"
    })];
    for i in 0..n {
        let (kind, content) = if i % 2 == 0 {
            (
                "user",
                serde_json::json!([{"text": format!("Question {i} about {topic}: how should the {topic} work in module {i}?")}]),
            )
        } else {
            ("gemini", serde_json::json!(format!("Answer {i}: the {topic} in module {i} keeps its state in a small table, and the tests cover it.")))
        };
        lines.push(serde_json::json!({"id": format!("{id}-m{i}"), "timestamp": start, "type": kind, "content": content}));
        lines.push(serde_json::json!({"$set": {"lastUpdated": start}}));
    }
    let path = chats.join(format!(
        "session-2026-07-17T08-{:02}-{}.jsonl",
        start_minute % 60,
        &id[..8]
    ));
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

/// A sandbox with one aider session of `n` exchanges (2n messages) in
/// `work/long`, indexed without embeddings; exchange `wombat_at` is about
/// "the wombat scheduler deadlock", the others about routine chores.
pub fn long_aider_session(n: usize, wombat_at: usize) -> Sandbox {
    let sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    let mut history = String::from("\n# aider chat started at 2026-07-17 09:00:00\n\n");
    for i in 0..n {
        let topic = if i == wombat_at {
            "the wombat scheduler deadlock"
        } else {
            "routine chores"
        };
        history.push_str(&format!(
            "#### question {i} about {topic}  \n\nAnswer {i} about {topic}.\n\n"
        ));
    }
    sb.write("work/long/.aider.chat.history.md", &history);
    sb.write(
        ".config/deja/aider-projects",
        format!("{}\n", sb.home.join("work/long").display()),
    );
    sb.ok(&["index"]);
    sb
}
