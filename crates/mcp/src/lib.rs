//! `deja mcp`: a Model Context Protocol server on stdio, so that coding
//! agents can ask deja's memory themselves. tokio lives in this crate only;
//! the rest of deja stays synchronous. stdout carries the protocol and
//! nothing else; every log line goes to stderr.
//!
//! - [`server`]: the protocol handler and the shared, warm recall engine.
//! - [`tools`]: the tools `recall`, `session` and `sessions`.
//! - Recalled text is framed as untrusted data and bounded by `deja_render`.
//! - [`blame`]: the tool `blame`, the sessions that edited a file.
//! - [`recap`]: the tool `recap`, what was done in a period.
//! - [`fresh`]: the background index that keeps the store fresh.
//! - [`own`]: the asking agent's live session, never an answer.

// Everything this crate prints for people goes through `deja_render`'s
// terminal filter: this shadows the standard macro in every module below,
// so a stored string that reaches `eprintln!` without its own cleaning still
// cannot act on the terminal (only deja's own styles pass).
macro_rules! eprintln {
    () => {
        $crate::output::err_text("\n")
    };
    ($($arg:tt)*) => {
        $crate::output::err_text(&format!("{}\n", format_args!($($arg)*)))
    };
}

pub mod blame;
pub mod fresh;
pub mod own;
pub mod recap;
pub mod server;
pub mod tools;

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use rmcp::ServiceExt;

pub use deja_app::{app, dates, indexing, json, lock, output, select, ExitStatus};

use crate::app::App;

/// `deja mcp`.
#[derive(Debug, clap::Args)]
pub struct McpArgs {
    /// Also send each answer as structured content (JSON). Off by
    /// default: agents that hand the model the structured content would
    /// show it the memory outside its untrusted-memory frame.
    #[arg(long)]
    pub structured: bool,
}

/// Serves until the client closes stdin.
pub fn run(app: &App, structured: bool) -> Result<ExitStatus> {
    let c = &app.config.config.mcp;
    let limits = tools::Limits {
        limit: c.limit,
        per_session: c.per_session,
        max_answer_bytes: c.max_answer_bytes,
        min_similarity: app.config.config.recall.min_similarity,
        min_score: app.config.config.recall.min_score,
        exclude: Vec::new(),
        code_folders: app.config.config.context.code_folder_sessions,
    };
    let status = fresh::start(c.index, Duration::from_secs(c.index_interval_secs));
    let shared = Arc::new(server::Shared::new(
        app.paths.database(),
        app.paths.vectors(),
        app.embed_settings(),
        limits,
        status,
        own::Own::from_env(&app.paths.data_dir),
        structured,
    ));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the MCP server's runtime")?;
    runtime.block_on(async {
        // The model loads while the client initializes.
        let warm = shared.clone();
        let warming = tokio::task::spawn_blocking(move || warm.warm_up());
        let service = server::Server::new(shared)
            .serve(rmcp::transport::stdio())
            .await
            .context("the MCP handshake failed")?;
        let ended = service.waiting().await;
        let _ = warming.await;
        ended.context("the MCP connection failed")?;
        Ok::<(), anyhow::Error>(())
    })?;
    Ok(ExitStatus::Success)
}
