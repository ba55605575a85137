//! `deja-bench-sync DATABASE VECTORS [SEGMENT_SIZE]`: brings the vector
//! index at VECTORS in line with the store at DATABASE, as `deja index` does
//! once its embedding pass is done, and nothing else, so that the scale
//! benchmark can time it and read its peak memory as a process of its own.
//! A segment size other than the store's rewrites every segment (a size
//! above the highest chunk id gives the single file of earlier versions).
//! Prints the segments rewritten and updated (JSON) on stdout.

use anyhow::{Context, Result};
use deja_store::{vectors, Store};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(database), Some(path)) = (args.first(), args.get(1)) else {
        anyhow::bail!("usage: deja-bench-sync DATABASE VECTORS [SEGMENT_SIZE]");
    };
    let size = match args.get(2) {
        Some(s) => Some(s.parse::<i64>().context("SEGMENT_SIZE is a number")?),
        None => None,
    };
    let store = Store::open(std::path::Path::new(database))?;
    let model = store
        .meta("embed_model")?
        .context("the store has no embedding model")?;
    let dims: usize = store
        .meta("embed_dims")?
        .and_then(|d| d.parse().ok())
        .context("the store has no embedding dimensions")?;
    let report = vectors::sync_with(&store, std::path::Path::new(path), &model, dims, size)?;
    println!(
        "{{\"rebuilt\":{:?},\"updated\":{:?}}}",
        report.rebuilt, report.updated
    );
    Ok(())
}
