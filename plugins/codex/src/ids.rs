//! A rollout's identity. Codex names every thread with a UUID (v4 until
//! late 2025, v7 since), written as `session_meta.id` and at the end of the
//! rollout's file name (`rollout-<local time>-<uuid>.jsonl`). The id is, in
//! order: the first `session_meta`'s `id`; its `session_id` (some writers put
//! only that), unless that names the parent it was forked from; the legacy
//! header's `id`; the file name's UUID.
//!
//! deja's id is the same UUID: it is unique to the thread, and the same in a
//! live rollout and in an archived copy of it, which deja then keeps once. A
//! file with no id at all gets `codex-<12 hex of the file name's SHA-256>`.

use sha2::{Digest, Sha256};

use crate::record::Meta;

/// A rollout's ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// deja's id.
    pub id: String,
    /// Codex's id (what `codex resume` takes).
    pub native_id: String,
}

/// The identity of the rollout named `file_name` whose first metadata line is `meta`.
pub fn identity(meta: Option<&Meta>, file_name: &str) -> Identity {
    let from_meta = meta.and_then(|m| {
        let parent = |id: &String| {
            m.forked_from_id.as_ref() == Some(id) || m.parent_thread_id.as_ref() == Some(id)
        };
        m.id.clone()
            .or_else(|| m.session_id.clone().filter(|s| !parent(s)))
    });
    let native = from_meta.or_else(|| file_uuid(file_name).map(String::from));
    match native {
        Some(native) => Identity {
            id: native.clone(),
            native_id: native,
        },
        None => {
            let hash = format!("{:x}", Sha256::digest(file_name.as_bytes()));
            let id = format!("codex-{}", hash.get(..12).unwrap_or(&hash));
            Identity {
                id: id.clone(),
                native_id: id,
            }
        }
    }
}

/// The UUID at the end of a rollout's file name.
pub fn file_uuid(file_name: &str) -> Option<&str> {
    let stem = file_name.strip_suffix(".jsonl").unwrap_or(file_name);
    let tail = stem.get(stem.len().checked_sub(36)?..)?;
    is_uuid(tail).then_some(tail)
}

/// Whether `text` is a UUID in its usual 8-4-4-4-12 form.
pub fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, len)| g.len() == len && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "rollout-2026-07-11T10-23-56-019f4efd-0137-7790-9622-c175e1415048.jsonl";

    fn meta(id: Option<&str>, session: Option<&str>, forked: Option<&str>) -> Meta {
        Meta {
            id: id.map(String::from),
            session_id: session.map(String::from),
            forked_from_id: forked.map(String::from),
            ..Meta::default()
        }
    }

    #[test]
    fn the_meta_id_comes_first() {
        let m = meta(Some("own"), Some("root"), Some("root"));
        assert_eq!(identity(Some(&m), FILE).native_id, "own");
        assert_eq!(identity(Some(&m), FILE).id, "own");
    }

    #[test]
    fn session_id_stands_in_unless_it_names_the_parent() {
        let alone = meta(None, Some("only"), None);
        assert_eq!(identity(Some(&alone), FILE).native_id, "only");
        let forked = meta(None, Some("root"), Some("root"));
        assert_eq!(
            identity(Some(&forked), FILE).native_id,
            "019f4efd-0137-7790-9622-c175e1415048"
        );
    }

    #[test]
    fn the_file_name_then_a_hash() {
        assert_eq!(
            identity(None, &format!("6934d1e4dfef__{FILE}")).native_id,
            "019f4efd-0137-7790-9622-c175e1415048"
        );
        let hashed = identity(None, "notes.jsonl");
        assert!(
            hashed.id.starts_with("codex-") && hashed.id.len() == 18,
            "{hashed:?}"
        );
        assert_eq!(file_uuid("é.jsonl"), None);
        assert!(is_uuid("bc45dae1-bef4-47c9-b0c0-afb7f25f12b5"));
        assert!(!is_uuid("bc45dae1-bef4-47c9-b0c0-afb7f25f12bz"));
    }
}
