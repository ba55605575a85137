//! Reading and writing an agent's file: its bytes as text, and a write that
//! happens only when the file is still as it was read.

use std::path::Path;

use anyhow::{Context, Result};

pub(super) fn read_file(path: &Path) -> Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read `{}`", path.display())),
    }
}

pub(super) fn text_of<'a>(path: &Path, bytes: &'a [u8]) -> Result<&'a str> {
    std::str::from_utf8(bytes).map_err(|_| {
        anyhow::anyhow!(
            "`{}` is not UTF-8 text; setup leaves it alone",
            path.display()
        )
    })
}

/// Writes `new` to `path` (or removes it with `None`) when the file is
/// still `expected`; `false` when it changed since it was read.
pub(super) fn write_checked(
    path: &Path,
    expected: Option<&[u8]>,
    new: Option<&[u8]>,
) -> Result<bool> {
    if read_file(path)?.as_deref() != expected {
        return Ok(false);
    }
    match new {
        Some(bytes) => {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create `{}`", dir.display()))?;
            }
            let mode = deja_fs::mode(path).unwrap_or(0o600);
            deja_fs::atomic_write_with_mode(path, bytes, mode)?;
        }
        None => {
            if expected.is_some() {
                std::fs::remove_file(path)
                    .with_context(|| format!("cannot remove `{}`", path.display()))?;
            }
        }
    }
    Ok(true)
}
