//! Whether a git repository tracks a path, read from its index file
//! (`<git dir>/index`, format versions 2 to 4, SHA-1 or SHA-256 object
//! names, a split index's shared part, a sparse index's folder entries)
//! without running git.

use std::path::Path;

/// Index files larger than this are not read.
const MAX_INDEX_BYTES: u64 = 512 * 1024 * 1024;

/// Whether the index of the repository in `git_dir` holds `relative` (a
/// `/`-separated path below its work tree), or a sparse folder above it.
/// No index file: nothing is tracked.
pub(crate) fn tracks(git_dir: &Path, relative: &[u8]) -> Result<bool, String> {
    let hash_len = hash_len(git_dir);
    let Some(index) = read(&git_dir.join("index"))? else {
        return Ok(false);
    };
    let parsed = parse(&index, hash_len)?;
    if parsed.holds(relative) {
        return Ok(true);
    }
    match parsed.shared {
        // A split index: the rest of the entries are in the shared part.
        Some(name) => match read(&git_dir.join(format!("sharedindex.{name}")))? {
            Some(shared) => Ok(parse(&shared, hash_len)?.holds(relative)),
            None => Err(format!("its shared index `sharedindex.{name}` is missing")),
        },
        None => Ok(false),
    }
}

/// The bytes of an index file; `None` when there is none.
fn read(path: &Path) -> Result<Option<Vec<u8>>, String> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read `{}`: {e}", path.display())),
    };
    if !meta.is_file() || meta.len() > MAX_INDEX_BYTES {
        return Err(format!(
            "`{}` is not a regular file of at most {MAX_INDEX_BYTES} bytes",
            path.display()
        ));
    }
    std::fs::read(path)
        .map(Some)
        .map_err(|e| format!("cannot read `{}`: {e}", path.display()))
}

/// The length of the repository's object names: 32 bytes when its config
/// sets `extensions.objectFormat = sha256`, else 20 (SHA-1).
fn hash_len(git_dir: &Path) -> usize {
    let config = std::fs::read(git_dir.join("config")).unwrap_or_default();
    let text = String::from_utf8_lossy(&config).to_ascii_lowercase();
    let sha256 = text.lines().any(|line| {
        let line: String = line.chars().filter(|c| !c.is_whitespace()).collect();
        line == "objectformat=sha256"
    });
    if sha256 {
        32
    } else {
        20
    }
}

/// The paths of an index, and the name of its shared part when it is split.
#[derive(Debug, Default)]
struct Parsed {
    paths: Vec<Vec<u8>>,
    shared: Option<String>,
}

impl Parsed {
    /// Whether `relative` is an entry, or lies below a sparse folder entry.
    fn holds(&self, relative: &[u8]) -> bool {
        self.paths.iter().any(|p| {
            p.as_slice() == relative
                || (p.last() == Some(&b'/') && relative.starts_with(p.as_slice()))
        })
    }
}

/// A cursor over the index bytes; every read is checked.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).ok_or("the index is cut short")?;
        let out = self
            .bytes
            .get(self.at..end)
            .ok_or("the index is cut short")?;
        self.at = end;
        Ok(out)
    }

    fn u16(&mut self) -> Result<u16, String> {
        let mut two = [0u8; 2];
        two.copy_from_slice(self.take(2)?);
        Ok(u16::from_be_bytes(two))
    }

    fn u32(&mut self) -> Result<u32, String> {
        let mut four = [0u8; 4];
        four.copy_from_slice(self.take(4)?);
        Ok(u32::from_be_bytes(four))
    }

    /// Bytes up to the next NUL, which is consumed.
    fn until_nul(&mut self) -> Result<&'a [u8], String> {
        let rest = self.bytes.get(self.at..).ok_or("the index is cut short")?;
        let len = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or("a path in the index has no end")?;
        let out = self.take(len)?;
        self.take(1)?;
        Ok(out)
    }

    /// Index version 4's variable-length number.
    fn varint(&mut self) -> Result<usize, String> {
        let mut byte = *self.take(1)?.first().ok_or("the index is cut short")?;
        let mut value = usize::from(byte & 0x7f);
        while byte & 0x80 != 0 {
            byte = *self.take(1)?.first().ok_or("the index is cut short")?;
            value = value
                .checked_add(1)
                .and_then(|v| v.checked_mul(128))
                .and_then(|v| v.checked_add(usize::from(byte & 0x7f)))
                .ok_or("a number in the index is too large")?;
        }
        Ok(value)
    }
}

/// The entries' paths (and a split index's link) of an index file.
fn parse(bytes: &[u8], hash_len: usize) -> Result<Parsed, String> {
    let mut c = Cursor { bytes, at: 0 };
    if c.take(4)? != b"DIRC" {
        return Err("the index does not start with `DIRC`".into());
    }
    let version = c.u32()?;
    if !(2..=4).contains(&version) {
        return Err(format!("index version {version} is not known"));
    }
    let count = c.u32()?;
    let mut parsed = Parsed::default();
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = c.at;
        // ctime, mtime, dev, ino, mode, uid, gid, size; the object name.
        c.take(40 + hash_len)?;
        let flags = c.u16()?;
        if flags & 0x4000 != 0 {
            if version < 3 {
                return Err("an entry has extended flags in a version 2 index".into());
            }
            c.u16()?;
        }
        let path = if version == 4 {
            let strip = c.varint()?;
            let keep = previous
                .len()
                .checked_sub(strip)
                .ok_or("an entry's path strips more than the previous one has")?;
            let mut path = previous.get(..keep).unwrap_or_default().to_vec();
            path.extend_from_slice(c.until_nul()?);
            path
        } else {
            let path = c.until_nul()?.to_vec();
            // Entries are padded with NULs to a multiple of eight bytes
            // (the path's own NUL included).
            let used = c.at - start;
            let padded = used.div_ceil(8) * 8;
            c.take(padded - used)?;
            path
        };
        previous.clone_from(&path);
        parsed.paths.push(path);
    }
    // Extensions: a four-byte name and a length each, then the checksum.
    while bytes.len().saturating_sub(c.at) > hash_len {
        let name = c.take(4)?;
        let len = usize::try_from(c.u32()?).map_err(|_| "an extension is too large")?;
        let data = c.take(len)?;
        if name == b"link" {
            let shared = data
                .get(..hash_len)
                .ok_or("the split index link is cut short")?;
            let hex: String = shared.iter().map(|b| format!("{b:02x}")).collect();
            if hex.bytes().any(|b| b != b'0') {
                parsed.shared = Some(hex);
            }
        }
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A version 2 or 3 index of `paths` (SHA-1 names).
    fn index(version: u32, paths: &[&str]) -> Vec<u8> {
        let mut out = b"DIRC".to_vec();
        out.extend_from_slice(&version.to_be_bytes());
        out.extend_from_slice(&(paths.len() as u32).to_be_bytes());
        for p in paths {
            let start = out.len();
            out.extend_from_slice(&[0u8; 60]);
            out.extend_from_slice(&(p.len() as u16).to_be_bytes());
            out.extend_from_slice(p.as_bytes());
            out.push(0);
            while !(out.len() - start).is_multiple_of(8) {
                out.push(0);
            }
        }
        out.extend_from_slice(&[0u8; 20]);
        out
    }

    #[test]
    fn versions_two_and_three() {
        for version in [2, 3] {
            let bytes = index(version, &["README.md", "src/.aider.chat.history.md", "z"]);
            let parsed = parse(&bytes, 20).unwrap();
            assert!(parsed.holds(b"src/.aider.chat.history.md"));
            assert!(parsed.holds(b"z"));
            assert!(!parsed.holds(b"src"));
            assert!(!parsed.holds(b".aider.chat.history.md"));
        }
    }

    #[test]
    fn version_four_strips_the_previous_path() {
        let mut out = b"DIRC".to_vec();
        out.extend_from_slice(&4u32.to_be_bytes());
        out.extend_from_slice(&2u32.to_be_bytes());
        for (strip, suffix) in [(0u8, "a/.crush/crush.db"), (8, "notes.md")] {
            out.extend_from_slice(&[0u8; 60]);
            out.extend_from_slice(&0u16.to_be_bytes());
            out.push(strip);
            out.extend_from_slice(suffix.as_bytes());
            out.push(0);
        }
        out.extend_from_slice(&[0u8; 20]);
        let parsed = parse(&out, 20).unwrap();
        assert!(parsed.holds(b"a/.crush/crush.db"));
        assert!(parsed.holds(b"a/.crush/notes.md"));
        assert!(!parsed.holds(b"notes.md"));
    }

    #[test]
    fn a_sparse_folder_holds_what_is_below_it() {
        let parsed = parse(&index(3, &["vendor/"]), 20).unwrap();
        assert!(parsed.holds(b"vendor/x/.aider.chat.history.md"));
        assert!(!parsed.holds(b"vendored.md"));
    }

    #[test]
    fn damaged_indexes_are_errors_not_panics() {
        let good = index(2, &["a", "bb/cc"]);
        for cut in 0..good.len() - 20 {
            let _ = parse(&good[..cut], 20);
        }
        assert!(parse(b"DIRX\0\0\0\x02\0\0\0\0", 20).is_err());
        assert!(parse(b"DIRC\0\0\0\x09\0\0\0\0", 20).is_err());
        let mut huge = b"DIRC\0\0\0\x02".to_vec();
        huge.extend_from_slice(&u32::MAX.to_be_bytes());
        assert!(parse(&huge, 20).is_err());
    }

    #[test]
    fn no_index_tracks_nothing() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(tracks(dir.path(), b"a"), Ok(false));
        std::fs::write(dir.path().join("index"), index(2, &["a"])).unwrap();
        assert_eq!(tracks(dir.path(), b"a"), Ok(true));
        assert_eq!(tracks(dir.path(), b"b"), Ok(false));
    }
}
