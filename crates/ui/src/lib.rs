//! `deja ui`: the memory in a local web page, served by the same engine as
//! `deja recall`, on this machine only.
//!
//! - [`guard`]: who may ask: a loopback address drawn for the run,
//!   one-time codes that buy a strict same-site cookie, the `Host` header
//!   checked against DNS rebinding, a token in every form that writes, and
//!   the security headers of every answer.
//! - [`browser`]: opening the page without the code on a command line.
//! - [`http`]: the HTTP side (axum on a tokio thread), which checks each
//!   request with the guard and hands it to the pages.
//! - [`pages`]: the pages (search, session, timeline, status, forget),
//!   rendered on the thread that owns the engine; every stored string
//!   reaches them through `deja_render::html`.

// Everything this crate prints for people goes through `deja_render`'s
// terminal filter: these shadow the standard macros in every module below,
// so a stored string that reaches `println!` without its own cleaning still
// cannot act on the terminal (only deja's own styles pass).
macro_rules! println {
    () => {
        $crate::output::out_text("\n")
    };
    ($($arg:tt)*) => {
        $crate::output::out_text(&format!("{}\n", format_args!($($arg)*)))
    };
}
macro_rules! eprintln {
    () => {
        $crate::output::err_text("\n")
    };
    ($($arg:tt)*) => {
        $crate::output::err_text(&format!("{}\n", format_args!($($arg)*)))
    };
}

mod browser;
mod guard;
mod http;
mod pages;

use std::net::{Ipv4Addr, TcpListener};
use std::sync::mpsc;

use anyhow::{Context, Result};

pub use deja_app::{app, indexing, json, lock, output, select, ExitStatus};
pub use deja_cli as commands;

use crate::app::App;

/// `deja ui`.
#[derive(Debug, clap::Args)]
pub struct UiArgs {
    /// Port on the page's loopback address (0, the default: any free port).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Print the page's address without opening a browser.
    #[arg(long)]
    pub no_open: bool,
}

/// Runs the command: serves until interrupted.
pub fn run(app: &App, args: &UiArgs) -> Result<ExitStatus> {
    let listener = listen(args.port)?;
    let address = listener.local_addr()?;
    let guard = guard::Guard::new(address, guard::new_token()?);
    let form_token = guard.form_token().to_string();
    // Two ways in, each good once: the printed address, and the one the
    // browser is sent to.
    let printed = format!("http://{address}/?token={}", guard.one_time_code()?);
    let for_browser = if args.no_open {
        None
    } else {
        Some(format!(
            "http://{address}/?token={}",
            guard.one_time_code()?
        ))
    };
    let (jobs, incoming) = mpsc::channel::<http::Job>();
    let server = std::thread::Builder::new()
        .name("deja-ui-http".into())
        .spawn(move || http::serve(listener, guard, jobs))?;
    // The address is the data of this command: on stdout, alone.
    println!("{printed}");
    eprintln!(
        "deja ui: serving the memory on {address}; the address above opens it once \
         (its cookie keeps the browser in); Ctrl-C stops"
    );
    if let Some(address) = for_browser {
        browser::open(&app.paths.data_dir, &address);
    }
    let mut site = pages::Site::new(app, form_token);
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

/// Listens on `port` (0: any free one) of a loopback address drawn at
/// random for this run, so that the page's cookie belongs to a host no other
/// service answers at; where the system serves 127.0.0.1 only (macOS), on
/// 127.0.0.1, with a warning that its cookie is then sent to every service
/// there.
fn listen(port: u16) -> Result<TcpListener> {
    let [a, b, c] = guard::random::<3>()?;
    // 127.1.0.1 to 127.254.255.254: never 127.0.x.x, which hosts use.
    let ip = Ipv4Addr::new(127, 1 + a % 254, b, 1 + c % 254);
    match TcpListener::bind((ip, port)) {
        Ok(l) => Ok(l),
        Err(e) if e.kind() == std::io::ErrorKind::AddrNotAvailable => {
            output::warn(
                "this system serves no loopback address but 127.0.0.1: the page's cookie \
                 is sent to every service on 127.0.0.1 that this browser visits",
            );
            TcpListener::bind((Ipv4Addr::LOCALHOST, port))
                .with_context(|| format!("cannot listen on 127.0.0.1:{port}"))
        }
        Err(e) => Err(e).with_context(|| format!("cannot listen on {ip}:{port}")),
    }
}
