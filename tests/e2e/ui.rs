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
    /// `IP:PORT`, as the page's address names it.
    host: String,
    /// The one-time code of the printed address.
    code: String,
}

impl Ui {
    /// `deja ui --no-open`.
    fn start(sb: &Sandbox) -> Ui {
        Ui::spawn(sb, &["ui", "--no-open"])
    }

    fn spawn(sb: &Sandbox, args: &[&str]) -> Ui {
        let mut child = sb
            .command()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        // http://IP:PORT/?token=CODE
        let rest = line
            .trim()
            .strip_prefix("http://")
            .unwrap_or_else(|| panic!("not an address: {line:?}"));
        let (host, code) = rest.split_once("/?token=").unwrap();
        Ui {
            child,
            host: host.to_string(),
            code: code.to_string(),
        }
    }

    fn base(&self) -> String {
        format!("http://{}", self.host)
    }

    fn port(&self) -> u16 {
        self.host.rsplit_once(':').unwrap().1.parse().unwrap()
    }

    /// Spends the printed code and returns the cookie it buys (`name=value`).
    fn login(&self) -> String {
        let (status, headers, body) = self.get(&format!("/?token={}", self.code), None);
        assert_eq!(status, 200, "{body}");
        let set = header(&headers, "set-cookie").unwrap_or_else(|| panic!("{headers:?}"));
        set.split(';').next().unwrap().to_string()
    }

    /// One raw request to the page's address: status, headers (lower-case
    /// names), body.
    fn request(&self, raw: &str) -> (u16, Vec<(String, String)>, String) {
        request(&self.host, raw)
    }

    /// A GET with this page's `Host`.
    fn get(&self, path: &str, cookie: Option<&str>) -> (u16, Vec<(String, String)>, String) {
        self.get_as(path, &self.host, cookie)
    }

    /// A GET naming `host` in its `Host` header.
    fn get_as(
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

    /// A form POST to `path` with `form`, as the page's own form sends it.
    fn post(&self, path: &str, cookie: &str, form: &str) -> (u16, Vec<(String, String)>, String) {
        self.request(&format!(
            "POST {path} HTTP/1.1\r\nHost: {host}\r\nOrigin: http://{host}\r\nCookie: {cookie}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{form}",
            form.len(),
            host = self.host,
        ))
    }
}

/// One raw request to `address`: status, headers (lower-case names), body.
fn request(address: &str, raw: &str) -> (u16, Vec<(String, String)>, String) {
    let mut s = TcpStream::connect(address).unwrap();
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

/// Where a page that forwards the browser sends it.
fn forwards_to(body: &str) -> Option<&str> {
    let at = body.find("content=\"0; url=")? + "content=\"0; url=".len();
    body[at..].split('"').next()
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
    let tenant = tenant_session(&sb);

    // No token: refused, with the security headers all the same.
    let (status, headers, body) = ui.get("/", None);
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("needs the address"), "{body}");
    let csp = header(&headers, "content-security-policy").unwrap();
    assert!(csp.contains("default-src 'none'"), "{csp}");
    assert!(!csp.contains("script-src"), "no script is allowed: {csp}");
    let cookie = ui.login();
    let secret = cookie.split_once('=').unwrap().1;
    // A wrong token, another port's cookie, a session page without a cookie.
    for (path, cookie) in [
        ("/?token=0000".to_string(), None),
        ("/".to_string(), Some(format!("deja_ui_1={secret}"))),
        (format!("/session/{tenant}"), None),
    ] {
        let (status, _, body) = ui.get(&path, cookie.as_deref());
        assert_eq!(status, 403, "{path}: {body}");
        assert!(!body.contains("tenant"), "{body}");
    }
    // A rebound domain (DNS rebinding) is refused even with the cookie.
    let (status, _, _) = ui.get_as("/", &format!("evil.example:{}", ui.port()), Some(&cookie));
    assert_eq!(status, 403);

    // With the cookie: the answer, as `deja recall` ranks it.
    let (status, headers, body) = ui.get("/search?q=that+tenant+predicate+bug", Some(&cookie));
    assert_eq!(status, 200, "{body}");
    assert_eq!(header(&headers, "x-frame-options"), Some("DENY"));
    let first = body.find("class=\"group\"").unwrap();
    assert!(body[first..].contains(&tenant), "{body}");
    assert!(body.contains("<mark>tenant</mark>"), "{body}");
    assert!(!body.contains("<script"), "{body}");
    // A question in other words is answered, its hit marked as the weak
    // match that meaning alone makes; one nothing answers gets no hits.
    let (status, _, body) = ui.get(
        "/search?q=firms+peeking+at+each+other%27s+financials",
        Some(&cookie),
    );
    assert_eq!(status, 200, "{body}");
    let first = body.find("class=\"group\"").unwrap();
    assert!(body[first..].contains(&tenant), "{body}");
    assert!(body[first..].contains("weak match"), "{body}");
    let (_, _, body) = ui.get("/search?q=zzkqv", Some(&cookie));
    assert!(body.contains("No matches"), "{body}");
    assert!(!body.contains("class=\"group\""), "{body}");

    // A write needs the form's token, not only the cookie.
    let (status, _, body) = ui.post(&format!("/forget/{tenant}"), &cookie, "confirm=1");
    assert_eq!(status, 403, "{body}");
    // From another origin, even with the token.
    let (_, _, confirm) = ui.get(&format!("/forget/{tenant}"), Some(&cookie));
    let form = format!("token={}", form_token(&confirm));
    let (status, _, _) = ui.request(&format!(
        "POST /forget/{tenant} HTTP/1.1\r\nHost: {host}\r\nOrigin: http://evil.example\r\nCookie: {cookie}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{form}",
        form.len(),
        host = ui.host,
    ));
    assert_eq!(status, 403);
    // The printed code is not the forms' token.
    let (status, _, _) = ui.post(
        &format!("/forget/{tenant}"),
        &cookie,
        &format!("token={}", ui.code),
    );
    assert_eq!(status, 403);
    assert!(
        sessions_of(&sb, "billing-api").contains(&tenant),
        "nothing was forgotten"
    );

    // The hostile transcript is text on its page.
    let hostile = session_of(&sb, "evil-project");
    let (status, _, body) = ui.get(&format!("/session/{hostile}"), Some(&cookie));
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

/// The token of the write form in `page`.
fn form_token(page: &str) -> &str {
    let at = page
        .find("name=\"token\" value=\"")
        .unwrap_or_else(|| panic!("no form token in {page}"))
        + "name=\"token\" value=\"".len();
    page[at..].split('"').next().unwrap()
}

/// A sandbox with one small aider session in `work/birds`, indexed
/// without embeddings.
fn small_sandbox() -> Sandbox {
    let sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    small_history(&sb, "birds", "2026-03-05", "march heron");
    sb.ok(&["index"]);
    sb
}

/// Writes one aider session about `topic` in `work/<project>` and lists
/// that project for the aider reader.
fn small_history(sb: &Sandbox, project: &str, day: &str, topic: &str) {
    sb.write(
        &format!("work/{project}/.aider.chat.history.md"),
        format!("\n# aider chat started at {day} 09:00:00\n\n#### {topic}  \n\nAnswer about {topic}.\n\n"),
    );
    let list = sb.home.join(".config/deja/aider-projects");
    let mut projects = std::fs::read_to_string(&list).unwrap_or_default();
    projects.push_str(&format!(
        "{}\n",
        sb.home.join("work").join(project).display()
    ));
    sb.write(".config/deja/aider-projects", projects);
}

#[test]
fn the_printed_address_opens_the_page_once_and_its_cookie_is_not_the_code() {
    let sb = small_sandbox();
    let ui = Ui::start(&sb);
    // The code sets a cookie and forwards to the same address without it.
    let (status, headers, body) = ui.get(&format!("/search?q=x&token={}", ui.code), None);
    assert_eq!(status, 200, "{body}");
    assert_eq!(forwards_to(&body), Some("/search?q=x"), "{body}");
    let set = header(&headers, "set-cookie").unwrap();
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Strict"),
        "{set}"
    );
    assert!(!set.to_ascii_lowercase().contains("domain="), "{set}");
    let cookie = set.split(';').next().unwrap();
    assert!(
        !cookie.contains(&ui.code),
        "the cookie is not the code: {set}"
    );
    let (status, _, body) = ui.get("/search?q=heron", Some(cookie));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("march <mark>heron</mark>"), "{body}");
    // Spent: the same address lets no one else in.
    let (status, headers, body) = ui.get(&format!("/?token={}", ui.code), None);
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("used already"), "{body}");
    assert!(header(&headers, "set-cookie").is_none());
}

#[test]
fn the_token_leaves_the_address_even_with_a_cookie_and_never_for_another_site() {
    let sb = small_sandbox();
    let ui = Ui::start(&sb);
    let cookie = ui.login();
    // A valid cookie and a token (spent or not) still forward the browser
    // to the address without it, setting nothing.
    for token in [ui.code.as_str(), "whatever"] {
        let (status, headers, body) = ui.get(&format!("/timeline?token={token}"), Some(&cookie));
        assert_eq!(status, 200, "{body}");
        assert_eq!(forwards_to(&body), Some("/timeline"), "{body}");
        assert!(header(&headers, "set-cookie").is_none());
    }
    // A path that a browser would read as another host stays on this one.
    for path in ["//evil.example/x", "///evil.example/x"] {
        let (status, _, body) = ui.get(&format!("{path}?token=t"), Some(&cookie));
        assert_eq!(status, 200, "{path}: {body}");
        let to = forwards_to(&body).unwrap();
        assert_eq!(to, "/evil%2Eexample/x", "{path}: {body}");
        assert!(!body.contains("//evil"), "{body}");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn the_page_has_a_loopback_address_of_its_own_so_127_0_0_1_never_gets_its_cookie() {
    let sb = small_sandbox();
    let ui = Ui::start(&sb);
    let cookie = ui.login();
    // A random address of 127.0.0.0/8, other than 127.0.0.1, drawn per run.
    let ip: std::net::Ipv4Addr = ui.host.rsplit_once(':').unwrap().0.parse().unwrap();
    assert!(ip.is_loopback() && ip.octets()[1] != 0, "{ip}");
    let other = Ui::start(&sb);
    assert_ne!(other.host.rsplit_once(':').unwrap().0, ip.to_string());
    // The browser sends the cookie back to this host only; at 127.0.0.1
    // deja does not even listen, and named as 127.0.0.1 or localhost it is
    // refused there, cookie and all.
    assert!(TcpStream::connect(("127.0.0.1", ui.port())).is_err());
    for host in [
        format!("127.0.0.1:{}", ui.port()),
        format!("localhost:{}", ui.port()),
    ] {
        let (status, _, body) = ui.get_as("/", &host, Some(&cookie));
        assert_eq!(status, 403, "{host}: {body}");
    }
    let (status, _, _) = ui.get("/", Some(&cookie));
    assert_eq!(status, 200);
}

/// A `$BROWSER` program that records its arguments, one a line, in `record`.
fn recording_browser(sb: &Sandbox, record: &std::path::Path) -> PathBuf {
    let script = sb.write(
        "bin/record-browser",
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}.tmp'\nmv '{0}.tmp' '{0}'\n",
            record.display()
        ),
    );
    crate::common::set_mode(&script, 0o755);
    script
}

/// The lines `record` holds once the browser program has written it.
fn recorded(record: &std::path::Path) -> Vec<String> {
    for _ in 0..200 {
        if let Ok(text) = std::fs::read_to_string(record) {
            return text.lines().map(str::to_string).collect();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!(
        "the browser was not started ({} not written)",
        record.display()
    );
}

#[test]
fn the_browser_gets_a_private_file_and_never_the_code_on_its_command_line() {
    let mut sb = small_sandbox();
    let record = sb.home.join("browser-args");
    let script = recording_browser(&sb, &record);
    // A colon-separated list whose first program does not exist, and `%s`.
    sb.env(
        "BROWSER",
        format!("no-such-browser-here:{} --new-tab %s", script.display()),
    );
    let ui = Ui::spawn(&sb, &["ui"]);
    let args = recorded(&record);
    assert_eq!(args.len(), 2, "{args:?}");
    assert_eq!(args[0], "--new-tab");
    for a in &args {
        assert!(!a.contains("token") && !a.contains(&ui.code), "{args:?}");
    }
    let file = PathBuf::from(
        args[1]
            .strip_prefix("file://")
            .unwrap_or_else(|| panic!("{args:?}")),
    );
    assert!(file.starts_with(sb.data_dir()), "{}", file.display());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{}", file.display());
    // The file forwards to the page with a code of its own, good once.
    let text = std::fs::read_to_string(&file).unwrap();
    let to = forwards_to(&text).unwrap_or_else(|| panic!("{text}"));
    let (host, code) = to
        .strip_prefix("http://")
        .and_then(|r| r.split_once("/?token="))
        .unwrap_or_else(|| panic!("{to}"));
    assert_eq!(host, ui.host);
    assert_ne!(code, ui.code);
    let (status, headers, _) = ui.get(&format!("/?token={code}"), None);
    assert_eq!(status, 200);
    assert!(header(&headers, "set-cookie").is_some());
    let (status, _, _) = ui.get(&format!("/?token={code}"), None);
    assert_eq!(status, 403, "the file's code is spent");
    // The printed address is still good, once.
    ui.login();
}

#[test]
fn a_session_whose_id_holds_a_slash_opens_and_its_forget_page_too() {
    let mut sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    crate::common::gemini_session(
        &sb.home.join(".gemini"),
        &"0".repeat(64),
        "abcdefgh/slashed",
        0,
        2,
        "otters",
    );
    sb.env("GEMINI_CLI_HOME", sb.home.clone());
    sb.ok(&["index"]);
    let ids = sb.ok(&["sessions", "--json"]).json()["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect::<Vec<_>>();
    let id = ids
        .iter()
        .find(|i| i.contains('/'))
        .unwrap_or_else(|| panic!("{ids:?}"));
    let ui = Ui::start(&sb);
    let cookie = ui.login();
    let (status, _, body) = ui.get(&format!("/session/{}", encode_id(id)), Some(&cookie));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("otters"), "{body}");
    let (status, _, body) = ui.get(&format!("/forget/{}", encode_id(id)), Some(&cookie));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Forget this session?"), "{body}");
    assert!(
        body.contains(&format!("action=\"/forget/{}\"", encode_id(id))),
        "{body}"
    );
}

#[test]
fn the_status_page_is_gathered_once_and_shown_again_while_fresh() {
    let sb = Sandbox::new();
    sb.config_with_model("");
    small_history(&sb, "birds", "2026-03-05", "march heron");
    sb.ok(&["index"]);
    let ui = Ui::start(&sb);
    let cookie = ui.login();
    let aider_row = |n: usize| format!("<td>aider</td><td>yes</td><td class=\"n\">{n}</td>");
    let started = std::time::Instant::now();
    let (status, _, first) = ui.get("/status", Some(&cookie));
    let gathering = started.elapsed();
    assert_eq!(status, 200, "{first}");
    assert!(first.contains(&aider_row(1)), "{first}");
    assert!(first.contains("Gathered at"), "{first}");
    // A second transcript appears; the next view, a moment later, shows the
    // report already gathered (no discovery, no model load), not a new one.
    small_history(&sb, "fish", "2026-03-06", "april trout");
    let started = std::time::Instant::now();
    let (status, _, second) = ui.get("/status", Some(&cookie));
    let shown = started.elapsed();
    assert_eq!(status, 200, "{second}");
    assert!(
        second.contains(&aider_row(1)),
        "the second view gathered again (first {gathering:?}, second {shown:?}): {second}"
    );
    let stamp = |page: &str| {
        page.split("Gathered at ")
            .nth(1)
            .map(|r| r[..8].to_string())
    };
    assert_eq!(stamp(&first), stamp(&second));
    // `deja doctor` itself gathers afresh: the transcript is there.
    let doctor = sb.ok(&["doctor", "--json"]).json();
    let aider = doctor["readers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["harness"] == "aider")
        .unwrap()
        .clone();
    assert_eq!(aider["transcripts"], 2, "{aider}");
}

#[test]
fn a_forget_while_the_index_is_written_answers_at_once_with_try_again() {
    let sb = small_sandbox();
    sb.config("[embed]\nenabled = false\n[index]\nlock_wait_secs = 60\n");
    let id = session_of(&sb, "birds");
    let ui = Ui::start(&sb);
    let cookie = ui.login();
    let (_, _, confirm) = ui.get(&format!("/forget/{id}"), Some(&cookie));
    let form = format!("token={}", form_token(&confirm));
    // Another writer (as `deja index` would) holds the store's lock.
    let lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(sb.data_dir().join("index.lock"))
        .unwrap();
    lock.try_lock().unwrap();
    let started = std::time::Instant::now();
    let (status, _, body) = ui.post(&format!("/forget/{id}"), &cookie, &form);
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(10),
        "waited {took:?} for the lock"
    );
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("Try again"), "{body}");
    // Meanwhile the other pages answer, and nothing was forgotten.
    let (status, _, _) = ui.get("/timeline", Some(&cookie));
    assert_eq!(status, 200);
    assert!(sessions_of(&sb, "birds").contains(&id));
    // Once the lock is free, the same request forgets it.
    lock.unlock().unwrap();
    let (status, _, body) = ui.post(&format!("/forget/{id}"), &cookie, &form);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Forgotten"), "{body}");
    let listed = sb.ok(&["forget", "--list", "--json"]).stdout;
    assert!(listed.contains(&id), "{listed}");
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
    let mut sb = ui_sandbox();
    let tenant = tenant_session(&sb);
    let hostile = session_of(&sb, "evil-project");
    let forget = session_of(&sb, "infra");
    // The page opens as `deja ui` opens it: the browser is handed a file.
    let record = sb.home.join("browser-args");
    let script = recording_browser(&sb, &record);
    sb.env("BROWSER", script);
    let ui = Ui::spawn(&sb, &["ui"]);
    let open = recorded(&record).swap_remove(0);
    // A relative folder is taken from the repository's root (cargo runs
    // the test in core/).
    let shots = std::env::var_os("DEJA_UI_SCREENSHOTS")
        .map(|d| repo().join(d))
        .unwrap_or_else(|| sb.home.join("screenshots"));
    std::fs::create_dir_all(&shots).unwrap();
    let config = serde_json::json!({
        "base": ui.base(),
        "open": open,
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
    for page in ["search", "session", "timeline", "status", "recap"] {
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
    let cookie = ui.login();
    let (status, _, body) = ui.get(&format!("/session/{id}"), Some(&cookie));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body.matches("<article ").count(), 200);
    assert!(body.contains("page 1 of 10"), "{body}");
    assert!(body.contains("id=\"m0\"") && !body.contains("id=\"m200\""));
    // The search's hit links to the page that holds it, at the message.
    let (_, _, found) = ui.get("/search?q=wombat+deadlock", Some(&cookie));
    let link = format!("/session/{}?at=1500#m1500", encode_id(&id));
    assert!(found.contains(&link), "{link} not in {found}");
    let (status, _, body) = ui.get(&format!("/session/{id}?at=1500"), Some(&cookie));
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
    let cookie = ui.login();
    // The newest month in full; every month a counted row with its link.
    let (status, _, body) = ui.get("/timeline", Some(&cookie));
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
    let (_, _, january) = ui.get("/timeline?month=2026-01", Some(&cookie));
    assert!(january.contains("january gopher") && january.contains("january otter"));
    assert!(!january.contains("march heron"), "{january}");
    let (_, _, unknown) = ui.get("/timeline?month=1999-01", Some(&cookie));
    assert!(unknown.contains("march heron"), "{unknown}");
    // The calendar of the year that ends with the month shown: a square a
    // day, each titled with its counts.
    assert_eq!(body.matches("<svg class=\"calendar\"").count(), 1, "{body}");
    assert_eq!(body.matches("<rect class=\"day ").count(), 365, "{body}");
    for day in ["2026-01-10", "2026-01-20", "2026-03-05"] {
        assert!(
            body.contains(&format!("<title>{day}: 1 session, 2 messages</title>")),
            "{day}: {body}"
        );
    }
    assert!(body.contains("<title>2026-03-31: 0 sessions"), "{body}");
    assert!(!body.contains("2026-04-01"), "{body}");
    assert!(
        january.contains("<title>2026-01-31: 0 sessions") && !january.contains("2026-03-05"),
        "{january}"
    );
}

#[test]
fn the_recap_page_shows_a_periods_work_with_its_calendar_escaped_and_guarded() {
    let sb = crate::recap::sandbox();
    let ui = Ui::start(&sb);
    let address = "/recap?since=2026-07-10&until=2026-07-17";
    // Guarded like every page.
    let (status, _, body) = ui.get(address, None);
    assert_ne!(status, 200, "{body}");
    assert!(!body.contains(&crate::blame::id(1)), "{body}");

    let cookie = ui.login();
    let (status, _, body) = ui.get(address, Some(&cookie));
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("<a href=\"/recap\" class=\"here\">Recap</a>"),
        "{body}"
    );
    assert!(
        body.contains(
            "From 2026-07-10 00:00 to 2026-07-17 00:00: 6 sessions · 12 messages · 2 projects"
        ),
        "{body}"
    );
    // The sessions of the period, each a link; not the one after it.
    for n in 1..=6 {
        let link = format!("href=\"/session/{}\"", encode_id(&crate::blame::id(n)));
        assert!(body.contains(&link), "{link}: {body}");
    }
    assert!(!body.contains(&crate::blame::id(7)), "{body}");
    let app = body.find("<h2>app ").unwrap_or_else(|| panic!("{body}"));
    let other = body.find("<h2>other ").unwrap_or_else(|| panic!("{body}"));
    assert!(app < other, "{body}");
    assert!(
        body.contains(
            "<td class=\"path\">src/x.rs</td><td class=\"n\">2</td><td class=\"n\">2</td>"
        ),
        "{body}"
    );
    // The calendar: one square a day of the period, titled with its counts.
    assert_eq!(body.matches("<rect class=\"day ").count(), 7, "{body}");
    assert!(
        body.contains("<title>2026-07-10: 3 sessions, 6 messages</title>"),
        "{body}"
    );
    assert!(
        body.contains("<title>2026-07-12: 2 sessions, 4 messages</title>"),
        "{body}"
    );
    assert!(
        body.contains("<title>2026-07-16: 0 sessions, 0 messages</title>"),
        "{body}"
    );
    // The hostile request is text.
    assert!(!body.contains("<script>"), "{body}");
    assert!(!body.contains('\u{1b}'), "{body}");
    assert!(
        body.contains("&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt; tidy"),
        "{body}"
    );
    // One project; an empty period; a date that cannot be read.
    let (_, _, other) = ui.get(&format!("{address}&project=other"), Some(&cookie));
    assert!(
        other.contains("2 sessions · 4 messages · 1 project"),
        "{other}"
    );
    assert!(!other.contains(&crate::blame::id(1)), "{other}");
    let (status, _, empty) = ui.get("/recap?since=2020-01-01&until=2020-02-01", Some(&cookie));
    assert_eq!(status, 200, "{empty}");
    assert!(
        empty.contains("Nothing recorded between 2020-01-01 00:00 and 2020-02-01 00:00."),
        "{empty}"
    );
    let (status, _, bad) = ui.get("/recap?since=someday", Some(&cookie));
    assert_eq!(status, 200, "{bad}");
    assert!(
        bad.contains("--since: cannot read `someday` as a date"),
        "{bad}"
    );
    assert!(bad.contains("value=\"someday\""), "{bad}");
}

#[test]
fn newest_sessions_list_a_date_that_is_only_a_file_time_as_about_and_last() {
    let sb = Sandbox::new();
    crate::described::continue_sessions(&sb, true);
    sb.ok(&["index"]);
    let ui = Ui::start(&sb);
    let cookie = ui.login();
    let (status, _, body) = ui.get("/", Some(&cookie));
    assert_eq!(status, 200, "{body}");
    // The session Continue's index dates comes first, without `about`; the
    // one dated by its file (copied just now) after it, with `about`.
    let dated = body.find("0797f663").unwrap_or_else(|| panic!("{body}"));
    let filed = body.find("9b1c0a52").unwrap_or_else(|| panic!("{body}"));
    assert!(dated < filed, "{body}");
    assert_eq!(body.matches(" · about 20").count(), 1, "{body}");
    assert!(body[filed..].contains(" · about 20"), "{body}");
    // The recap of the last seven days counts it today, marked too.
    let (status, _, recap) = ui.get("/recap", Some(&cookie));
    assert_eq!(status, 200, "{recap}");
    let filed = recap.find("9b1c0a52").unwrap_or_else(|| panic!("{recap}"));
    assert!(
        recap[filed..].contains("<span class=\"meta\">about "),
        "{recap}"
    );
}

#[test]
fn a_files_history_page_lists_its_edits_escaped_and_guarded() {
    let sb = crate::blame::project();
    // A path that would be markup, edited in a session of its own.
    let app = sb.home.join("src/app");
    let hostile = format!("{}/src/<script>alert(1)</script>.rs", app.display());
    crate::blame::claude(
        &sb,
        6,
        17,
        app.to_str().unwrap(),
        "make <img src=x onerror=alert(2)>",
        "Done <i>now</i>.",
        "Write",
        &hostile,
    );
    sb.ok(&["index"]);
    let ui = Ui::start(&sb);
    let file = app.join("src/x.rs");
    let address = format!("/file?path={}", encode_id(file.to_str().unwrap()));
    // Guarded like every page: no cookie, no history.
    let (status, _, body) = ui.get(&address, None);
    assert_ne!(status, 200, "{body}");
    assert!(!body.contains(&crate::blame::id(1)), "{body}");

    let cookie = ui.login();
    let (status, _, body) = ui.get(&address, Some(&cookie));
    assert_eq!(status, 200, "{body}");
    let (c, b, a) = (
        body.find(&crate::blame::id(3)).unwrap(),
        body.find(&crate::blame::id(2)).unwrap(),
        body.find(&crate::blame::id(1)).unwrap(),
    );
    assert!(c < b && b < a, "newest first: {body}");
    assert!(body.contains("Fixing the loop bound."), "{body}");
    assert!(
        body.contains("Teammate &lt;b&gt;change&lt;/b&gt;."),
        "{body}"
    );
    assert!(!body.contains("<b>change"), "{body}");
    assert!(body.contains("Read by"), "{body}");
    assert!(body.contains(&crate::blame::id(5)), "{body}");

    // The hostile path: linked from its session's page, shown as text.
    let (status, _, page) = ui.get(
        &format!("/session/{}", encode_id(&crate::blame::id(6))),
        Some(&cookie),
    );
    assert_eq!(status, 200, "{page}");
    let link = format!("/file?path={}", encode_id(&hostile));
    assert!(page.contains(&link), "{page}");
    let (status, _, body) = ui.get(&link, Some(&cookie));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(&crate::blame::id(6)), "{body}");
    assert!(!body.contains("<script>alert(1)"), "{body}");
    assert!(
        body.contains("&lt;script&gt;alert(1)&lt;/script&gt;.rs"),
        "{body}"
    );
    assert!(!body.contains("<i>now"), "{body}");

    // No path: an error page, not a crash.
    let (status, _, body) = ui.get("/file", Some(&cookie));
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("the file page needs a path"), "{body}");
}

#[test]
fn the_timeline_lists_the_newest_sessions_of_a_crowded_month_and_counts_the_rest() {
    let sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    let history: String = (0..53)
        .map(|i| {
            format!(
                "\n# aider chat started at 2026-03-{:02} {:02}:{:02}:00\n\n#### crowded topic {i}  \n\nAnswer {i}.\n\n",
                1 + i / 24,
                i % 24,
                i
            )
        })
        .collect();
    sb.write("work/crowd/.aider.chat.history.md", &history);
    sb.write(
        ".config/deja/aider-projects",
        format!("{}\n", sb.home.join("work/crowd").display()),
    );
    sb.ok(&["index"]);
    let ui = Ui::start(&sb);
    let cookie = ui.login();
    let (status, _, body) = ui.get("/timeline", Some(&cookie));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("53 sessions"), "{body}");
    // The fifty newest by name, the three oldest counted.
    assert!(body.contains("crowded topic 52"), "{body}");
    assert!(body.contains("crowded topic 3<"), "{body}");
    for oldest in ["crowded topic 0<", "crowded topic 1<", "crowded topic 2<"] {
        assert!(!body.contains(oldest), "{oldest}: {body}");
    }
    assert!(
        body.contains("and 3 older sessions of this month"),
        "{body}"
    );
}
