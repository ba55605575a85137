//! Forgetting a session from the page, in two steps: a confirmation page
//! that says what forgetting does, then a POST (with the page's token) that
//! forgets it as `deja forget ID` does and says what it did.

use anyhow::Result;
use maud::html;

use super::{encode, layout, session_href, stored, token_field, Nav, Site};
use crate::commands;
use crate::output::{local_short, project_label};
use crate::ui::http::Page;

/// The confirmation page.
pub fn confirm(site: &mut Site<'_>, id: &str) -> Result<Page> {
    let engine = site.engine()?;
    let row = commands::pick_session(engine.store(), id)?;
    let body = html! {
        h1 { "Forget this session?" }
        p { code { (stored(&row.id)) } " · " (stored(&row.harness)) " · "
            (stored(&project_label(&row.project))) " · " (local_short(row.started_at))
            " · " (row.message_count) " messages" }
        p { "Its messages, their vectors and its file and command records leave the index, and "
            code { "deja index" } " will not bring it back. The transcript itself stays where it is; "
            code { "deja forget --undo " (stored(&row.id)) } " lets the next index restore it." }
        form.confirm method="post" action=(format!("/forget/{}", encode(&row.id))) {
            (token_field(site))
            button.danger type="submit" { "Forget it" }
            " "
            a href=(session_href(&row.id, None)) { "Keep it" }
        }
    };
    Ok(Page::html(200, layout("Forget?", Nav::None, body)))
}

/// Forgets the session, then says so.
pub fn done(site: &mut Site<'_>, id: &str) -> Result<Page> {
    let (row, forgotten) = commands::forget::forget_one(site.app, id)?;
    if let Some(engine) = site.engine.as_mut() {
        engine.refresh();
    }
    let body = html! {
        h1 { "Forgotten" }
        p.done { "Forgot session " code { (stored(&row.id)) } "; " code { "deja index" }
            " will not bring it back (" code { "deja forget --undo " (stored(&row.id)) } " would)." }
        @if forgotten.scrub_pending {
            p.notice { (stored(commands::index::SCRUB_PENDING)) }
        }
        p { a href="/" { "Back to search" } }
    };
    Ok(Page::html(200, layout("Forgotten", Nav::None, body)))
}
