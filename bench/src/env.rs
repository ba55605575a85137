//! A throwaway environment for one measurement: a temporary HOME whose
//! config points at the installed model, and a way to run the real `deja`
//! binary in it while measuring wall time and peak memory.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// Where the model and runtime are installed (by `scripts/fetch-model`): the
/// default model, or the folder `DEJA_BENCH_MODEL` names under `models/` (to
/// measure another installed model, such as `all-MiniLM-L6-v2`).
pub fn installed_model() -> Result<(PathBuf, PathBuf)> {
    let data = std::env::var_os("DEJA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share/deja")))
        .context("HOME is not set")?;
    let name = std::env::var("DEJA_BENCH_MODEL")
        .ok()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| deja_embed::DEFAULT_MODEL.to_string());
    let model = data.join("models").join(name);
    let runtime = data.join("runtime/libonnxruntime.so");
    if !model.join("model.onnx").is_file() || !runtime.exists() {
        bail!(
            "the model is not installed under {}; run scripts/fetch-model first",
            data.display()
        );
    }
    Ok((model, runtime))
}

/// What one process run cost.
#[derive(Debug, Clone, Copy)]
pub struct Cost {
    /// Wall time.
    pub wall: Duration,
    /// Peak resident set size, bytes.
    pub peak_rss: u64,
}

/// A temporary HOME for deja.
pub struct BenchEnv {
    _dir: tempfile::TempDir,
    /// HOME.
    pub home: PathBuf,
    /// The deja binary.
    pub deja: PathBuf,
    env: Vec<(String, OsString)>,
}

impl BenchEnv {
    /// A fresh HOME configured with the installed model and `extra` TOML,
    /// which continues the `[embed]` table (start it with a `[table]` header
    /// to set other tables).
    pub fn new(deja: &Path, extra: &str) -> Result<BenchEnv> {
        Self::at(deja, extra, None)
    }

    /// Like [`BenchEnv::new`], in `home` when given (kept afterwards).
    pub fn at(deja: &Path, extra: &str, home: Option<&Path>) -> Result<BenchEnv> {
        let dir = tempfile::tempdir()?;
        let home = match home {
            Some(h) => h.to_path_buf(),
            None => dir.path().join("home"),
        };
        let env = BenchEnv {
            _dir: dir,
            home,
            deja: deja.to_path_buf(),
            env: Vec::new(),
        };
        env.configure(extra)?;
        Ok(env)
    }

    /// (Re)writes the config: the installed model and `extra` TOML.
    pub fn configure(&self, extra: &str) -> Result<()> {
        std::fs::create_dir_all(self.home.join(".config/deja"))?;
        let (model, runtime) = installed_model()?;
        std::fs::write(
            self.home.join(".config/deja/config.toml"),
            format!(
                "[embed]\nmodel_dir = {:?}\nruntime = {:?}\n{extra}",
                model.display().to_string(),
                runtime.display().to_string()
            ),
        )?;
        Ok(())
    }

    /// Sets an environment variable for later runs.
    pub fn set(&mut self, key: &str, value: impl Into<OsString>) {
        self.env.push((key.to_string(), value.into()));
    }

    /// The index database.
    pub fn database(&self) -> PathBuf {
        self.home.join(".local/share/deja/index.sqlite")
    }

    /// The vector index.
    pub fn vectors(&self) -> PathBuf {
        self.home.join(".local/share/deja/vectors.usearch")
    }

    /// Bytes on disk of the index database and the vector index.
    pub fn store_size(&self) -> u64 {
        let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        size(&self.database()) + deja_store::vectors::disk_bytes(&self.vectors()).unwrap_or(0)
    }

    /// A command for deja in this HOME with a clean environment.
    pub fn command(&self) -> Command {
        self.in_home(Command::new(&self.deja))
    }

    /// `cmd` with a clean environment: this HOME, PATH, no colour and the
    /// variables set with [`BenchEnv::set`].
    fn in_home(&self, mut cmd: Command) -> Command {
        cmd.env_clear()
            .env("HOME", &self.home)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("NO_COLOR", "1");
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }

    /// Runs deja with `args`, discarding its output, and measures it.
    ///
    /// Peak memory comes from GNU time when it is installed: a child's
    /// `ru_maxrss` as `wait4` reports it also counts what this (possibly
    /// large) benchmark process held when it started the child.
    pub fn run(&self, args: &[&str]) -> Result<Cost> {
        Ok(self.run_saying(args)?.0)
    }

    /// [`BenchEnv::run`], with what the command wrote to stderr.
    pub fn run_saying(&self, args: &[&str]) -> Result<(Cost, String)> {
        let rss_file = tempfile::NamedTempFile::new()?;
        let err_file = tempfile::NamedTempFile::new()?;
        let mut cmd = self.measured(rss_file.path());
        cmd.args(args)
            .stdout(std::process::Stdio::null())
            .stderr(err_file.reopen()?);
        let started = Instant::now();
        let child = cmd
            .spawn()
            .with_context(|| format!("cannot run {}", self.deja.display()))?;
        let pid = child.id() as libc::pid_t;
        let mut status = 0;
        // SAFETY: zeroed rusage is a valid value to be filled by wait4.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: waiting for our own child; status and usage are valid pointers.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        let wall = started.elapsed();
        if r < 0 {
            bail!("wait4 failed: {}", std::io::Error::last_os_error());
        }
        let code = if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            -1
        };
        if code != 0 && code != 1 {
            let err = std::fs::read_to_string(err_file.path()).unwrap_or_default();
            bail!("deja {} failed with status {code}: {err}", args.join(" "));
        }
        let cost = Cost {
            wall,
            peak_rss: peak_kb(rss_file.path()).unwrap_or(usage.ru_maxrss as u64) * 1024,
        };
        Ok((
            cost,
            std::fs::read_to_string(err_file.path()).unwrap_or_default(),
        ))
    }
}

impl BenchEnv {
    /// Runs deja with `args`, keeping what it prints, and measures it (peak
    /// memory from GNU time; 0 where it is not installed).
    pub fn output(&self, args: &[&str]) -> Result<(std::process::Output, Cost)> {
        let rss_file = tempfile::NamedTempFile::new()?;
        let started = Instant::now();
        let out = self
            .measured(rss_file.path())
            .args(args)
            .output()
            .with_context(|| format!("cannot run {}", self.deja.display()))?;
        let cost = Cost {
            wall: started.elapsed(),
            peak_rss: peak_kb(rss_file.path()).unwrap_or(0) * 1024,
        };
        Ok((out, cost))
    }

    /// The command that runs deja in this home, under GNU time writing its
    /// peak memory (KB) to `rss` where GNU time is installed.
    fn measured(&self, rss: &Path) -> Command {
        let gnu_time = Path::new("/usr/bin/time");
        let cmd = if gnu_time.is_file() {
            let mut c = Command::new(gnu_time);
            c.arg("-f").arg("%M").arg("-o").arg(rss).arg(&self.deja);
            c
        } else {
            Command::new(&self.deja)
        };
        self.in_home(cmd)
    }
}

/// The peak memory (KB) GNU time wrote to `path`.
fn peak_kb(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| t.lines().last().and_then(|l| l.trim().parse::<u64>().ok()))
}

/// Median and 95th percentile of durations, in milliseconds.
pub fn percentiles(mut v: Vec<f64>) -> (f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0);
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.95))
}

/// Megabytes, for reports.
pub fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1_048_576.0
}
