//! Forgetting a session from the page, in two steps: a confirmation page
//! that says what forgetting does, then a POST (with the page's token) that
//! forgets it as `deja forget ID` does and says what it did.

use anyhow::Result;
use maud::html;

use super::{encode, layout, session_href, stored, token_field, Nav, Site};
use crate::commands;
use crate::http::Page;
use crate::lock::{LockError, Wait};
use crate::output::{dated, project_label};
use crate::select;

/// The confirmation page.
pub fn confirm(site: &mut Site<'_>, id: &str) -> Result<Page> {
    let engine = site.engine()?;
    let row = select::pick_session(engine.store(), id)?;
    let body = html! {
        h1 { "Forget this session?" }
        p { code { (stored(&row.id)) } " · " (stored(&row.harness)) " · "
            (stored(&project_label(&row.project))) " · " (dated(row.started_at, row.date_approximate))
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

/// Forgets the session, then says so; while another deja holds the
/// store's writer lock (a running `deja index`), says to try again rather
/// than wait, which would hold up every page.
pub fn done(site: &mut Site<'_>, id: &str) -> Result<Page> {
    let (row, forgotten) = match commands::forget::forget_one(site.app, id, Wait::No) {
        Ok(done) => done,
        Err(e) => match e.downcast_ref::<LockError>() {
            Some(LockError::Busy { .. }) => return Ok(busy(site, id)),
            _ => return Err(e),
        },
    };
    if let Some(engine) = site.engine.as_mut() {
        engine.refresh();
    }
    let body = html! {
        h1 { "Forgotten" }
        p.done { "Forgot session " code { (stored(&row.id)) } "; " code { "deja index" }
            " will not bring it back (" code { "deja forget --undo " (stored(&row.id)) } " would)." }
        @if forgotten.scrub_pending {
            p.notice { (stored(crate::indexing::SCRUB_PENDING)) }
        }
        p { a href="/" { "Back to search" } }
    };
    Ok(Page::html(200, layout("Forgotten", Nav::None, body)))
}

/// The answer while the index is being written: nothing forgotten, and
/// the same request again a moment later.
fn busy(site: &Site<'_>, id: &str) -> Page {
    let body = html! {
        h1 { "Not forgotten yet" }
        p.notice { "Another deja is updating the index right now (a " code { "deja index" }
            " run, most likely), so nothing was forgotten. Try again in a moment." }
        form.confirm method="post" action=(format!("/forget/{}", encode(id))) {
            (token_field(site))
            button.danger type="submit" { "Try again" }
            " "
            a href=(session_href(id, None)) { "Keep it" }
        }
    };
    Page::html(503, layout("Try again", Nav::None, body))
}
