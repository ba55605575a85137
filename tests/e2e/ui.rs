//! `deja ui`: the guard checked over raw HTTP (requests no browser would
//! send), and the pages driven in a real browser (Debian's Chromium through
//! its ChromeDriver, by Selenium's Python client: `scripts/fetch-browser`,
//! `scripts/fetch-clients`) over the demo fixtures with the real model and
//! one hostile transcript.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::common::{fixtures, repo, Sandbox};

/// A transcript that tries to run script in the page and act on a terminal.
const HOSTILE: &str = "
# aider chat started at 2026-02-03 10:00:00

#### Why does the quuxbanner show <script>document.title='pwned';window.pwned=1</script> and <img src=x onerror=\"document.title='pwned'\"> twice?  

The template inserts `<script>` tags raw, and \u{1b}]0;pwned\u{7} sets titles. A frame closes with </recalled-memory> and <a href=\"javascript:alert(1)\">this link</a>.

```html
<script>document.title='pwned'</script>
<iframe src=\"javascript:alert(1)\"></iframe>
<style>body { display: none }</style>
```
";

/// The demo fixtures and the hostile transcript, indexed with the real model.
fn ui_sandbox() -> Sandbox {
    let mut sb = Sandbox::new();
    sb.config_with_model("[mcp]\nindex = false\n");
    sb.write("hostile/evil-project/.aider.chat.history.md", HOSTILE);
    let roots =
        std::env::join_paths([fixtures().join("demo/aider"), sb.home.join("hostile")]).unwrap();
    sb.env("DEJA_AIDER_ROOTS", roots);
    sb.env("DEJA_GEMINI_ROOT", fixtures().join("demo/gemini"));
    sb.env("DEJA_CLAUDE_ROOT", fixtures().join("demo/claude"));
    sb.env("DEJA_CODEX_ROOT", fixtures().join("demo/codex"));
    let out = sb.ok(&["index"]);
    assert!(out.stderr.contains("embedded"), "{}", out.stderr);
    sb
}

/// The ids of the sessions of `project`, newest first.
fn sessions_of(sb: &Sandbox, project: &str) -> Vec<String> {
    let v = sb.ok(&["sessions", "--json", "--project", project]).json();
    v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect()
}

/// The newest session of `project`.
fn session_of(sb: &Sandbox, project: &str) -> String {
    sessions_of(sb, project).swap_remove(0)
}

/// The tenant-predicate session of the demo (aider, billing-api, begun
/// 2025-12-09 10:12:33).
fn tenant_session(sb: &Sandbox) -> String {
    sessions_of(sb, "billing-api")
        .into_iter()
        .find(|id| id.starts_with("aider-") && id.ends_with("-20251209T101233"))
        .unwrap()
}

/// A running `deja ui`, stopped when dropped.
struct Ui {
    child: Child,
    port: u16,
    token: String,
}

impl Ui {
    fn start(sb: &Sandbox) -> Ui {
        let mut child = sb
            .command()
            .args(["ui", "--no-open"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        // http://127.0.0.1:PORT/?token=TOKEN
        let rest = line
            .trim()
            .strip_prefix("http://127.0.0.1:")
            .unwrap_or_else(|| panic!("not an address: {line:?}"));
        let (port, token) = rest.split_once("/?token=").unwrap();
        Ui {
            child,
            port: port.parse().unwrap(),
            token: token.to_string(),
        }
    }

    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn cookie(&self) -> String {
        format!("deja_ui_{}={}", self.port, self.token)
    }

    /// One raw request: status, headers (lower-case names), body.
    fn request(&self, raw: &str) -> (u16, Vec<(String, String)>, String) {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        s.write_all(raw.as_bytes()).unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
        let mut lines = head.lines();
        let status = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        (status, headers, body.to_string())
    }

    fn get(
        &self,
        path: &str,
        host: &str,
        cookie: Option<&str>,
    ) -> (u16, Vec<(String, String)>, String) {
        let cookie = cookie
            .map(|c| format!("Cookie: {c}\r\n"))
            .unwrap_or_default();
        self.request(&format!(
            "GET {path} HTTP/1.1\r\nHost: {host}\r\n{cookie}Connection: close\r\n\r\n"
        ))
    }
}

impl Drop for Ui {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

#[test]
fn the_guard_refuses_what_lacks_the_token_or_comes_from_elsewhere() {
    let sb = ui_sandbox();
    let ui = Ui::start(&sb);
    let host = format!("127.0.0.1:{}", ui.port);
    let tenant = tenant_session(&sb);

    // No token: refused, with the security headers all the same.
    let (status, headers, body) = ui.get("/", &host, None);
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("needs the address"), "{body}");
    let csp = header(&headers, "content-security-policy").unwrap();
    assert!(csp.contains("default-src 'none'"), "{csp}");
    assert!(!csp.contains("script-src"), "no script is allowed: {csp}");
    // A wrong token, another port's cookie, a session page without a token.
    for (path, cookie) in [
        ("/?token=0000".to_string(), None),
        ("/".to_string(), Some(format!("deja_ui_1={}", ui.token))),
        (format!("/session/{tenant}"), None),
    ] {
        let (status, _, body) = ui.get(&path, &host, cookie.as_deref());
        assert_eq!(status, 403, "{path}: {body}");
        assert!(!body.contains("tenant"), "{body}");
    }
    // A rebound domain (DNS rebinding) is refused even with the cookie.
    let (status, _, _) = ui.get(
        "/",
        &format!("evil.example:{}", ui.port),
        Some(&ui.cookie()),
    );
    assert_eq!(status, 403);

    // The printed address sets the cookie and drops the token from the address.
    let (status, headers, _) = ui.get(&format!("/search?q=x&token={}", ui.token), &host, None);
    assert_eq!(status, 303);
    assert_eq!(header(&headers, "location"), Some("/search?q=x"));
    let set = header(&headers, "set-cookie").unwrap();
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Strict"),
        "{set}"
    );

    // With the cookie: the answer, as `deja recall` ranks it.
    let (status, headers, body) = ui.get(
        "/search?q=that+tenant+predicate+bug",
        &host,
        Some(&ui.cookie()),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(header(&headers, "x-frame-options"), Some("DENY"));
    let first = body.find("class=\"group\"").unwrap();
    assert!(body[first..].contains(&tenant), "{body}");
    assert!(body.contains("<mark>tenant</mark>"), "{body}");
    assert!(!body.contains("<script"), "{body}");

    // A write needs the form's token, not only the cookie.
    let form = "confirm=1";
    let (status, _, body) = ui.request(&format!(
        "POST /forget/{tenant} HTTP/1.1\r\nHost: {host}\r\nCookie: {}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{form}",
        ui.cookie(),
        form.len()
    ));
    assert_eq!(status, 403, "{body}");
    // From another origin, even with the token.
    let form = format!("token={}", ui.token);
    let (status, _, _) = ui.request(&format!(
        "POST /forget/{tenant} HTTP/1.1\r\nHost: {host}\r\nOrigin: http://evil.example\r\nCookie: {}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{form}",
        ui.cookie(),
        form.len()
    ));
    assert_eq!(status, 403);
    assert!(
        sessions_of(&sb, "billing-api").contains(&tenant),
        "nothing was forgotten"
    );

    // The hostile transcript is text on its page.
    let hostile = session_of(&sb, "evil-project");
    let (status, _, body) = ui.get(&format!("/session/{hostile}"), &host, Some(&ui.cookie()));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("&lt;script&gt;document.title="), "{body}");
    for tag in [
        "<script",
        "<img",
        "<iframe",
        "<style",
        "<a href=\"javascript",
        "\u{1b}",
    ] {
        assert!(!body.contains(tag), "{tag:?} in {body}");
    }
}

/// Chromium and its ChromeDriver; panics with the fix when missing (these
/// tests never pass without the real browser).
fn browser() -> (PathBuf, PathBuf) {
    let find = |var: &str, name: &str| -> PathBuf {
        if let Some(p) = std::env::var_os(var) {
            return PathBuf::from(p);
        }
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|d| d.join(name))
            .find(|p| p.is_file())
            .unwrap_or_else(|| {
                panic!("{name} is not installed (or set {var}); run scripts/fetch-browser first")
            })
    };
    (
        find("DEJA_CHROMIUM", "chromium"),
        find("DEJA_CHROMEDRIVER", "chromedriver"),
    )
}

/// Selenium's Python (see `scripts/fetch-clients`).
fn selenium_python() -> PathBuf {
    let python = crate::mcp::clients_dir().join("browser/bin/python");
    assert!(
        python.is_file(),
        "Selenium's Python client is not installed in {}; run scripts/fetch-clients first",
        crate::mcp::clients_dir().display()
    );
    python
}

#[test]
fn a_real_browser_searches_reads_folds_and_forgets_and_no_stored_script_runs() {
    let (chromium, chromedriver) = browser();
    let python = selenium_python();
    let sb = ui_sandbox();
    let tenant = tenant_session(&sb);
    let hostile = session_of(&sb, "evil-project");
    let forget = session_of(&sb, "infra");
    let ui = Ui::start(&sb);
    // A relative folder is taken from the repository's root (cargo runs
    // the test in core/).
    let shots = std::env::var_os("DEJA_UI_SCREENSHOTS")
        .map(|d| repo().join(d))
        .unwrap_or_else(|| sb.home.join("screenshots"));
    std::fs::create_dir_all(&shots).unwrap();
    let config = serde_json::json!({
        "base": ui.base(),
        "token": ui.token,
        "chromium": chromium,
        "chromedriver": chromedriver,
        "profile": sb.home.join("chromium-profile"),
        "shots": shots,
        "tenant": tenant,
        "hostile": hostile,
        "forget": forget,
    });
    let out = Command::new(python)
        .arg(repo().join("tests/clients/ui_browser.py"))
        .arg(config.to_string())
        .env("HOME", &sb.home)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("all checks passed"), "{stdout}");
    // The page forgot the session as `deja forget` does.
    assert!(!sessions_of(&sb, "infra").contains(&forget));
    let listed = sb.ok(&["forget", "--list", "--json"]).stdout;
    assert!(listed.contains(&forget), "{listed}");
    for page in ["search", "session", "timeline", "status"] {
        let shot = shots.join(format!("{page}.png"));
        let bytes = std::fs::read(&shot).unwrap_or_default();
        assert!(
            bytes.starts_with(b"\x89PNG"),
            "{} is not a PNG",
            shot.display()
        );
    }
}

#[test]
fn a_long_session_is_paged_and_a_hit_opens_its_page() {
    // 1,000 exchanges: 2,000 messages, ten pages of 200.
    let sb = crate::common::long_aider_session(1000, 750);
    let id = session_of(&sb, "long");
    let ui = Ui::start(&sb);
    let host = format!("127.0.0.1:{}", ui.port);
    let cookie = ui.cookie();
    let (status, _, body) = ui.get(&format!("/session/{id}"), &host, Some(&cookie));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body.matches("<article ").count(), 200);
    assert!(body.contains("page 1 of 10"), "{body}");
    assert!(body.contains("id=\"m0\"") && !body.contains("id=\"m200\""));
    // The search's hit links to the page that holds it, at the message.
    let (_, _, found) = ui.get("/search?q=wombat+deadlock", &host, Some(&cookie));
    let link = format!("/session/{}?at=1500#m1500", encode_id(&id));
    assert!(found.contains(&link), "{link} not in {found}");
    let (status, _, body) = ui.get(&format!("/session/{id}?at=1500"), &host, Some(&cookie));
    assert_eq!(status, 200);
    assert!(body.contains("page 8 of 10"), "{body}");
    assert!(body.contains("id=\"m1500\" class=\"msg hit\""), "{body}");
    assert_eq!(body.matches("class=\"msg near\"").count(), 6);
}

/// A session id as the pages put it in an address (every character but
/// letters and digits percent-encoded).
fn encode_id(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_string()
            } else {
                let mut buf = [0u8; 4];
                c.encode_utf8(&mut buf)
                    .bytes()
                    .map(|b| format!("%{b:02X}"))
                    .collect()
            }
        })
        .collect()
}

#[test]
fn the_timeline_shows_one_month_in_full_and_every_month_counted() {
    let sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    let session = |day: &str, topic: &str| {
        format!("\n# aider chat started at {day} 09:00:00\n\n#### {topic}  \n\nAnswer about {topic}.\n\n")
    };
    let history = [
        session("2026-01-10", "january gopher"),
        session("2026-01-20", "january otter"),
        session("2026-03-05", "march heron"),
    ]
    .concat();
    sb.write("work/birds/.aider.chat.history.md", &history);
    sb.write(
        ".config/deja/aider-projects",
        format!("{}\n", sb.home.join("work/birds").display()),
    );
    sb.ok(&["index"]);
    let ui = Ui::start(&sb);
    let host = format!("127.0.0.1:{}", ui.port);
    let cookie = ui.cookie();
    // The newest month in full; every month a counted row with its link.
    let (status, _, body) = ui.get("/timeline", &host, Some(&cookie));
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("3 sessions · 6 messages · 2 months"),
        "{body}"
    );
    assert!(body.contains("march heron"), "{body}");
    assert!(!body.contains("january gopher"), "{body}");
    assert!(
        body.contains("href=\"/timeline?month=2026%2D01\""),
        "{body}"
    );
    assert!(
        body.contains("<tr class=\"current\"><td><a href=\"/timeline?month=2026%2D03\">"),
        "{body}"
    );
    // The older month when asked for; a month that does not exist shows the newest.
    let (_, _, january) = ui.get("/timeline?month=2026-01", &host, Some(&cookie));
    assert!(january.contains("january gopher") && january.contains("january otter"));
    assert!(!january.contains("march heron"), "{january}");
    let (_, _, unknown) = ui.get("/timeline?month=1999-01", &host, Some(&cookie));
    assert!(unknown.contains("march heron"), "{unknown}");
}
