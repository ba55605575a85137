//! The web page as a browser asks it: `deja ui --no-open` started once over
//! a store, admitted with the token of the address it prints (the cookie it
//! sets), then each search and the page of the longest session timed from
//! request to the last byte of the answer, over HTTP on the loopback.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::env::{percentiles, BenchEnv};
use crate::queries::QUERIES;

/// A running `deja ui`.
struct Ui {
    child: Child,
    host: String,
    port: u16,
    cookie: String,
}

impl Ui {
    fn start(env: &BenchEnv) -> Result<Ui> {
        let mut child = env
            .command()
            .args(["ui", "--no-open"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start deja ui")?;
        let mut line = String::new();
        BufReader::new(child.stdout.take().context("no stdout")?).read_line(&mut line)?;
        // A loopback address drawn for the run: http://127.x.y.z:PORT/?token=…
        let rest = line
            .trim()
            .strip_prefix("http://")
            .with_context(|| format!("deja ui printed no address: {line:?}"))?;
        let (address, token) = rest.split_once("/?token=").context("no token")?;
        let (host, port) = address.rsplit_once(':').context("no port")?;
        let port: u16 = port.parse()?;
        let mut ui = Ui {
            child,
            host: host.to_string(),
            port,
            cookie: String::new(),
        };
        // The one-time code buys the session's cookie, as a browser's first
        // visit does.
        let answer = ui.request(&format!("/?token={token}"))?;
        let head = String::from_utf8_lossy(&answer);
        ui.cookie = head
            .lines()
            .take_while(|l| !l.is_empty())
            .find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("set-cookie")
                    .then(|| value.trim().split(';').next().unwrap_or("").to_string())
            })
            .with_context(|| format!("deja ui gave no cookie for its code: {head:.200}"))?;
        Ok(ui)
    }

    /// GETs `path` with the cookie (none before it has one): the whole answer.
    fn request(&self, path: &str) -> Result<Vec<u8>> {
        let mut s = TcpStream::connect((self.host.as_str(), self.port))?;
        let cookie = if self.cookie.is_empty() {
            String::new()
        } else {
            format!("Cookie: {}\r\n", self.cookie)
        };
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: {}:{}\r\n{cookie}Connection: close\r\n\r\n",
            self.host, self.port
        )?;
        let mut answer = Vec::new();
        s.read_to_end(&mut answer)?;
        Ok(answer)
    }

    /// GETs `path` with the cookie: status and body length.
    fn get(&self, path: &str) -> Result<(u16, usize)> {
        let answer = self.request(path)?;
        let head = String::from_utf8_lossy(&answer[..answer.len().min(64)]).into_owned();
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        Ok((status, answer.len()))
    }

    /// The p50 and p95 of `rounds` GETs of each path (a first round
    /// untimed), ms.
    fn time(&self, paths: &[String], rounds: usize) -> Result<(f64, f64)> {
        let mut times = Vec::new();
        for round in 0..=rounds {
            for p in paths {
                let started = Instant::now();
                let (status, _) = self.get(p)?;
                if status != 200 {
                    bail!("GET {p}: status {status}");
                }
                if round > 0 {
                    times.push(started.elapsed().as_secs_f64() * 1000.0);
                }
            }
        }
        Ok(percentiles(times))
    }
}

impl Drop for Ui {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A query as an address parameter.
fn param(q: &str) -> String {
    q.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Messages of the long session the page timings need.
pub const LONG: i64 = 2000;

/// Gives the store in `env` a session of [`LONG`] messages when it has none
/// that long: appended to a generated aider history, indexed with
/// embeddings off, then given synthetic vectors as `scale` gives the rest.
fn ensure_long_session(env: &BenchEnv) -> Result<()> {
    let longest = longest_session(env)?;
    if longest.message_count >= LONG {
        return Ok(());
    }
    crate::generate::append_long_session(&env.home, LONG as usize / 2, 2031)
        .context("appending the long session (the HOME needs a generated corpus)")?;
    env.configure("enabled = false\n")?;
    env.run(&["index"])?;
    crate::scale::fill_vectors(&env.database(), &env.vectors())?;
    env.configure("[mcp]\nindex = false\n")?;
    let now = longest_session(env)?;
    anyhow::ensure!(
        now.message_count >= LONG,
        "the long session holds {} messages",
        now.message_count
    );
    Ok(())
}

/// The session with the most messages.
fn longest_session(env: &BenchEnv) -> Result<deja_store::SessionRow> {
    let store = deja_store::Store::open_read(&env.database())?;
    store
        .sessions(&deja_store::SessionFilter::default(), None)?
        .into_iter()
        .max_by_key(|r| r.message_count)
        .context("the store has no session")
}

/// The page timings on an existing HOME, as a Markdown table: searches,
/// the first and a late page of a 2,000-message session (added when the
/// store has none), the timeline and the status page.
pub fn measure(deja: &std::path::Path, home: &std::path::Path, rounds: usize) -> Result<String> {
    let env = BenchEnv::at(deja, "[mcp]\nindex = false\n", Some(home))?;
    ensure_long_session(&env)?;
    let longest = longest_session(&env)?;
    let sessions = deja_store::Store::open_read(&env.database())?
        .counts()?
        .sessions;
    let ui = Ui::start(&env)?;
    let searches: Vec<String> = QUERIES
        .iter()
        .map(|q| format!("/search?q={}", param(q)))
        .collect();
    let id = param(&longest.id);
    let late = (longest.message_count * 3 / 4) as usize;
    let pages = [
        (format!("search ({} queries)", QUERIES.len()), searches),
        (
            format!("session of {} messages, page 1", longest.message_count),
            vec![format!("/session/{id}")],
        ),
        (
            format!("same session at message {late} (hit and neighbours marked)"),
            vec![format!("/session/{id}?at={late}")],
        ),
        (
            format!("timeline ({sessions} sessions)"),
            vec!["/timeline".to_string()],
        ),
        ("status".to_string(), vec!["/status".to_string()]),
    ];
    let mut out = String::from("| page | p50 ms | p95 ms | size KB |\n|---|---|---|---|\n");
    for (name, paths) in &pages {
        let (p50, p95) = ui.time(paths, rounds.max(5))?;
        let (_, bytes) = ui.get(&paths[0])?;
        out.push_str(&format!(
            "| {name} | {p50:.1} | {p95:.1} | {:.0} |\n",
            bytes as f64 / 1024.0
        ));
    }
    Ok(out)
}
