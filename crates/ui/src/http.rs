//! The HTTP side of `deja ui`: axum on a tokio thread of its own. Every
//! request is checked by the [`Guard`]; one that passes goes, as a plain
//! [`Request`], to the thread that owns the engine, and its [`Page`] comes
//! back. The guard's headers go on every answer, refusals included.
//!
//! An address that carries `token` is answered here, without the pages: a
//! small page that sets the cookie the guard chose (when the token let the
//! browser in) and forwards to the same address without the token. A page
//! that forwards, rather than a redirect, because the browser sends the
//! strict cookie only on a navigation this server's own page starts (the
//! first address may come from a file or another application).

use std::collections::HashMap;
use std::net::TcpListener;
use std::sync::{mpsc, Arc, Mutex};

use anyhow::Result;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::Response;
use axum::Router;
use maud::{html, DOCTYPE};
use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
use tokio::sync::oneshot;

use super::guard::{Guard, Presented, Verdict, HEADERS};

/// Largest request body read (forms are small).
const MAX_BODY: usize = 64 * 1024;

/// A request that passed the guard.
#[derive(Debug)]
pub struct Request {
    /// Whether it is a POST (else a GET or HEAD).
    pub post: bool,
    /// The path's segments, each percent-decoded (so that `%2F` is part
    /// of a segment, not a separator); empty segments left out.
    pub segments: Vec<String>,
    /// The address's parameters (the token left out).
    pub query: HashMap<String, String>,
}

impl Request {
    /// The address's parameter `name`, trimmed; `None` when empty.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .get(name)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
    }
}

/// An answer.
#[derive(Debug)]
pub struct Page {
    /// HTTP status.
    pub status: u16,
    /// `Content-Type`.
    pub content_type: &'static str,
    /// The body.
    pub body: String,
    /// Where to send the browser (a redirect), if anywhere.
    pub location: Option<String>,
}

impl Page {
    /// An HTML page.
    pub fn html(status: u16, body: String) -> Page {
        Page {
            status,
            content_type: "text/html; charset=utf-8",
            body,
            location: None,
        }
    }
}

/// A request on its way to the pages, with the way back.
pub struct Job {
    /// The request.
    pub request: Request,
    /// Where its page goes.
    pub reply: oneshot::Sender<Page>,
}

struct Shared {
    guard: Guard,
    jobs: Mutex<mpsc::Sender<Job>>,
}

/// Serves `listener` until the pages' thread stops taking jobs.
pub fn serve(listener: TcpListener, guard: Guard, jobs: mpsc::Sender<Job>) -> Result<()> {
    listener.set_nonblocking(true)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        let shared = Arc::new(Shared {
            guard,
            jobs: Mutex::new(jobs),
        });
        let app = Router::new().fallback(handle).with_state(shared);
        axum::serve(listener, app).await?;
        Ok(())
    })
}

/// The pairs of a query string or form, percent-decoded.
fn pairs(raw: &[u8]) -> HashMap<String, String> {
    form_urlencoded::parse(raw).into_owned().collect()
}

/// The segments of `path`: split at `/`, then each percent-decoded.
fn segments(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(|s| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        })
        .collect()
}

/// A string for one path segment or query value of an address.
pub fn encode(text: &str) -> String {
    utf8_percent_encode(text, NON_ALPHANUMERIC).to_string()
}

/// The address of `segments` with the parameters of `query` but `token`:
/// always a path on this server (one leading `/`, every segment encoded),
/// never `//host` or `/\host`, which a browser would take for another site.
fn address_without_token(segments: &[String], query: &HashMap<String, String>) -> String {
    let mut to = String::from("/");
    to.push_str(
        &segments
            .iter()
            .map(|s| encode(s))
            .collect::<Vec<_>>()
            .join("/"),
    );
    let mut rest: Vec<(&String, &String)> = query
        .iter()
        .filter(|(k, _)| k.as_str() != "token")
        .collect();
    rest.sort();
    if !rest.is_empty() {
        let mut s = form_urlencoded::Serializer::new(String::new());
        for (k, v) in rest {
            s.append_pair(k, v);
        }
        to.push('?');
        to.push_str(&s.finish());
    }
    to
}

/// The page that forwards the browser to `to` (a path on this server).
fn forward(to: &str) -> Page {
    let body = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta http-equiv="refresh" content=(format!("0; url={to}"));
                title { "deja" }
            }
            body { p { a href=(to) { "Continue to the page" } } }
        }
    };
    Page::html(200, body.into_string())
}

/// One request: the guard, then the pages.
async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let post = method == Method::POST;
    if !(post || method == Method::GET || method == Method::HEAD) {
        return refusal(405, "this page answers GET and POST only");
    }
    if body.len() > MAX_BODY {
        return refusal(413, "the request is too large");
    }
    let query = pairs(uri.query().unwrap_or("").as_bytes());
    let form = if post { pairs(&body) } else { HashMap::new() };
    let text = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    let cookies: Vec<&str> = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    let cookie = cookies.join("; ");
    let verdict = shared.guard.check(&Presented {
        writes: post,
        host: text(header::HOST),
        origin: text(header::ORIGIN),
        cookie: Some(cookie.as_str()).filter(|c| !c.is_empty()),
        query_token: query.get("token").map(String::as_str),
        form_token: form.get("token").map(String::as_str),
    });
    match verdict {
        Verdict::Refuse(status, why) => refusal(status, why),
        Verdict::Forward { set_cookie } => {
            let to = address_without_token(&segments(uri.path()), &query);
            let mut r = respond(forward(&to));
            if let Some(v) = set_cookie.and_then(|c| HeaderValue::from_str(&c).ok()) {
                r.headers_mut().insert(header::SET_COOKIE, v);
            }
            r
        }
        Verdict::Pass => {
            let segments = segments(uri.path());
            let mut query = query;
            query.remove("token");
            let (reply, answer) = oneshot::channel();
            let job = Job {
                request: Request {
                    post,
                    segments,
                    query,
                },
                reply,
            };
            let sent = match shared.jobs.lock() {
                Ok(jobs) => jobs.send(job).is_ok(),
                Err(_) => false,
            };
            if !sent {
                return refusal(503, "deja ui is stopping");
            }
            match answer.await {
                Ok(page) => respond(page),
                Err(_) => refusal(500, "the page failed"),
            }
        }
    }
}

/// A refusal, as plain text.
fn refusal(status: u16, why: &str) -> Response {
    respond(Page {
        status,
        content_type: "text/plain; charset=utf-8",
        body: format!("deja ui: {why}\n"),
        location: None,
    })
}

/// `page` as an HTTP response, with the guard's headers.
fn respond(page: Page) -> Response {
    let mut r = Response::new(Body::from(page.body));
    *r.status_mut() = StatusCode::from_u16(page.status).unwrap_or(StatusCode::OK);
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(page.content_type),
    );
    for (name, value) in HEADERS {
        h.insert(*name, HeaderValue::from_static(value));
    }
    if let Some(to) = page.location.and_then(|l| HeaderValue::from_str(&l).ok()) {
        h.insert(header::LOCATION, to);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn to(path: &str, query: &str) -> String {
        address_without_token(&segments(path), &pairs(query.as_bytes()))
    }

    #[test]
    fn a_segment_keeps_its_encoded_slash() {
        assert_eq!(segments("/session/a%2Fb"), ["session", "a/b"]);
        assert_eq!(segments("//session///x/"), ["session", "x"]);
        assert_eq!(to("/session/a%2Fb", "token=t"), "/session/a%2Fb");
    }

    #[test]
    fn the_address_without_the_token_stays_on_this_server() {
        assert_eq!(to("/", "token=t"), "/");
        assert_eq!(to("/search", "q=x&token=t"), "/search?q=x");
        for path in [
            "//evil.example/x",
            "///evil.example/x",
            "/%2F/evil.example/x",
        ] {
            let t = to(path, "token=t");
            assert!(t.starts_with('/') && !t.starts_with("//"), "{path}: {t}");
            assert!(!t.contains('\\'), "{path}: {t}");
        }
        assert_eq!(to("//evil.example/x", "token=t"), "/evil%2Eexample/x");
        assert_eq!(to("/\\evil.example/x", ""), "/%5Cevil%2Eexample/x");
    }
}
