//! The pages of `deja ui`, rendered on the thread that owns the recall
//! engine: [`search`], [`session`], a file's history ([`file`]),
//! [`timeline`], a period's [`recap`], [`status`] and the two steps of
//! [`forget`]; the timeline and the recap draw a [`calendar`]. Every
//! string that came from a transcript or the team store goes through
//! [`stored`] (`deja_render::html::text`); the templates (maud) escape
//! whatever else they are given.

mod calendar;
mod file;
mod forget;
mod recap;
mod search;
mod session;
mod status;
mod timeline;

use anyhow::Result;
use maud::{html, Markup, PreEscaped, DOCTYPE};

use deja_recall::engine::Engine;

pub use super::http::encode;
use super::http::{Page, Request};
use crate::app::App;

/// The stylesheet, compiled into the binary.
const STYLE: &str = include_str!("style.css");

/// What the pages share: the app, the engine (opened on first use), the
/// token the write forms carry, the status report while it is kept.
pub struct Site<'a> {
    app: &'a App,
    engine: Option<Engine>,
    token: String,
    status: Option<status::Kept<status::Report>>,
}

impl<'a> Site<'a> {
    /// The pages over `app`'s store.
    pub fn new(app: &'a App, token: String) -> Site<'a> {
        Site {
            app,
            engine: None,
            token,
            status: None,
        }
    }

    /// Opens the engine and loads the model, so that the first search does
    /// not wait for them; a store that does not exist yet is not an error
    /// here (the pages say so).
    pub fn warm_up(&mut self) {
        if let Ok(engine) = self.engine() {
            let _ = engine.warm_up();
        }
    }

    /// The engine, opened on first use (the store must exist).
    fn engine(&mut self) -> Result<&mut Engine> {
        match &mut self.engine {
            Some(_) => {}
            None => {
                let store = crate::select::open_read(self.app)?;
                self.engine = Some(Engine::open(
                    store,
                    &self.app.paths.vectors(),
                    Some(self.app.embed_settings()),
                ));
            }
        }
        self.engine
            .as_mut()
            .ok_or_else(|| anyhow::anyhow!("the index could not be opened"))
    }

    /// The page for `request`.
    pub fn answer(&mut self, request: &Request) -> Page {
        let segments: Vec<&str> = request.segments.iter().map(String::as_str).collect();
        let result = match (request.post, segments.as_slice()) {
            (false, []) | (false, ["search"]) => search::page(self, request),
            (false, ["session", id]) => session::page(self, id, request),
            (false, ["file"]) => file::page(self, request),
            (false, ["forget", id]) => forget::confirm(self, id),
            (true, ["forget", id]) => forget::done(self, id),
            (false, ["timeline"]) => timeline::page(self, request),
            (false, ["recap"]) => recap::page(self, request),
            (false, ["status"]) => status::page(self),
            (false, ["style.css"]) => {
                return Page {
                    status: 200,
                    content_type: "text/css; charset=utf-8",
                    body: STYLE.to_string(),
                    location: None,
                }
            }
            _ => Ok(Page::html(
                404,
                layout(
                    "Not found",
                    Nav::None,
                    html! { h1 { "Not found" } p { "This page has no such address." } },
                ),
            )),
        };
        result.unwrap_or_else(|e| {
            Page::html(
                400,
                layout(
                    "Error",
                    Nav::None,
                    html! {
                        h1 { "Something went wrong" }
                        pre.error { (stored(&format!("{e:#}"))) }
                    },
                ),
            )
        })
    }
}

/// Which item of the navigation is the current page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nav {
    Search,
    Timeline,
    Recap,
    Status,
    None,
}

/// A stored string, cleaned and escaped by the one rendering layer.
pub fn stored(text: &str) -> PreEscaped<String> {
    PreEscaped(deja_render::html::text(text))
}

/// How a session is named in a page: its title, else its first user line,
/// on one line and cut to `max` characters; else its id.
pub fn session_title(row: &deja_store::SessionRow, max: usize) -> String {
    match row.title.as_deref().or(row.first_user.as_deref()) {
        Some(t) => deja_render::term::line(t).chars().take(max).collect(),
        None => row.id.clone(),
    }
}

/// The address of session `id`, at message `at` when given.
pub fn session_href(id: &str, at: Option<i64>) -> String {
    match at {
        Some(n) => format!("/session/{}?at={n}#m{n}", encode(id)),
        None => format!("/session/{}", encode(id)),
    }
}

/// A whole page: head, navigation, `body`.
pub fn layout(title: &str, nav: Nav, body: Markup) -> String {
    let item = |href: &str, label: &str, this: Nav| {
        html! {
            a href=(href) class=@if nav == this { "here" } { (label) }
        }
    };
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="referrer" content="same-origin";
                title { (title) " · deja" }
                link rel="stylesheet" href="/style.css";
            }
            body {
                header.top {
                    a.brand href="/" { "deja" }
                    nav {
                        (item("/", "Search", Nav::Search))
                        (item("/timeline", "Timeline", Nav::Timeline))
                        (item("/recap", "Recap", Nav::Recap))
                        (item("/status", "Status", Nav::Status))
                    }
                }
                main { (body) }
                footer { "Served from this machine only; nothing leaves it." }
            }
        }
    }
    .into_string()
}

/// The form field that carries the token of a write.
pub fn token_field(site: &Site<'_>) -> Markup {
    html! { input type="hidden" name="token" value=(site.token); }
}
