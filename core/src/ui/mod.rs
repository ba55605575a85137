//! `deja ui`: the memory in a local web page, served by the same engine as
//! `deja recall`, on this machine only.
//!
//! - [`guard`]: who may ask: the loopback interface, a random per-run
//!   token (in the printed address, then a strict same-site cookie), the
//!   `Host` header checked against DNS rebinding, a token in every form
//!   that writes, and the security headers of every answer.
//! - [`http`]: the HTTP side (axum on a tokio thread), which checks each
//!   request with the guard and hands it to the pages.
//! - [`pages`]: the pages (search, session, timeline, status, forget),
//!   rendered on the thread that owns the engine; every stored string
//!   reaches them through `deja_render::html`.

mod guard;
mod http;
mod pages;

use std::net::{Ipv4Addr, TcpListener};
use std::sync::mpsc;

use anyhow::{Context, Result};

use crate::app::App;
use crate::{output, ExitStatus};

/// `deja ui`.
#[derive(Debug, clap::Args)]
pub struct UiArgs {
    /// Port on 127.0.0.1 (0, the default: any free port).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Print the page's address without opening a browser.
    #[arg(long)]
    pub no_open: bool,
}

/// Runs the command: serves until interrupted.
pub fn run(app: &App, args: &UiArgs) -> Result<ExitStatus> {
    let token = guard::new_token()?;
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, args.port))
        .with_context(|| format!("cannot listen on 127.0.0.1:{}", args.port))?;
    let port = listener.local_addr()?.port();
    let address = format!("http://127.0.0.1:{port}/?token={token}");
    let (jobs, incoming) = mpsc::channel::<http::Job>();
    let guard = guard::Guard::new(token.clone(), port);
    let server = std::thread::Builder::new()
        .name("deja-ui-http".into())
        .spawn(move || http::serve(listener, guard, jobs))?;
    // The address is the data of this command: on stdout, alone.
    println!("{address}");
    eprintln!(
        "deja ui: serving the memory on 127.0.0.1:{port} (only this address, with its token, opens it); Ctrl-C stops"
    );
    if !args.no_open {
        open_browser(&address);
    }
    let mut site = pages::Site::new(app, token);
    site.warm_up();
    for job in incoming {
        let page = site.answer(&job.request);
        let _ = job.reply.send(page);
    }
    // The HTTP thread ended: it says why.
    match server.join() {
        Ok(Ok(())) => Ok(ExitStatus::Success),
        Ok(Err(e)) => Err(e.context("the web server stopped")),
        Err(_) => anyhow::bail!("the web server stopped unexpectedly"),
    }
}

/// Opens `address` in the browser (`$BROWSER`, else the desktop's opener),
/// with a warning when none starts.
fn open_browser(address: &str) {
    let opener = std::env::var("BROWSER")
        .ok()
        .filter(|b| !b.trim().is_empty());
    let program = opener.unwrap_or_else(|| {
        if cfg!(target_os = "macos") {
            "open".to_string()
        } else {
            "xdg-open".to_string()
        }
    });
    let started = std::process::Command::new(&program)
        .arg(address)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if started.is_err() {
        output::warn(&format!(
            "could not start `{program}` to open the page; open the address above in a browser"
        ));
    }
}
