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
use crate::throughput::QUERIES;

/// A running `deja ui`.
struct Ui {
    child: Child,
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
        let rest = line
            .trim()
            .strip_prefix("http://127.0.0.1:")
            .with_context(|| format!("deja ui printed no address: {line:?}"))?;
        let (port, token) = rest.split_once("/?token=").context("no token")?;
        let port: u16 = port.parse()?;
        Ok(Ui {
            child,
            port,
            cookie: format!("deja_ui_{port}={token}"),
        })
    }

    /// GETs `path` with the cookie: status and body length.
    fn get(&self, path: &str) -> Result<(u16, usize)> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port))?;
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nCookie: {}\r\nConnection: close\r\n\r\n",
            self.port, self.cookie
        )?;
        let mut answer = Vec::new();
        s.read_to_end(&mut answer)?;
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

/// The page timings on an existing HOME, as a Markdown table.
pub fn measure(deja: &std::path::Path, home: &std::path::Path, rounds: usize) -> Result<String> {
    let env = BenchEnv::at(deja, "[mcp]\nindex = false\n", Some(home))?;
    let store = deja_store::Store::open_read(&env.database())?;
    let longest = store
        .sessions(&deja_store::SessionFilter::default(), None)?
        .into_iter()
        .max_by_key(|r| r.message_count)
        .context("the store has no session")?;
    drop(store);
    let ui = Ui::start(&env)?;
    let searches: Vec<String> = QUERIES
        .iter()
        .map(|q| format!("/search?q={}", param(q)))
        .collect();
    let (s50, s95) = ui.time(&searches, rounds)?;
    let session = vec![format!("/session/{}", param(&longest.id))];
    let (p50, p95) = ui.time(&session, rounds.max(5))?;
    let (_, bytes) = ui.get(&session[0])?;
    Ok(format!(
        "| search p50 / p95 ms | session page ({} messages, first page of 200, {:.0} KB) p50 / p95 ms |\n|---|---|\n| {s50:.1} / {s95:.1} | {p50:.1} / {p95:.1} |\n",
        longest.message_count,
        bytes as f64 / 1024.0
    ))
}
