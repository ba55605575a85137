//! deja's session ids: `<sessionId>-<YYYYMMDDTHHMMSS>`.
//!
//! Gemini's `sessionId` alone is not unique: every a2a-server session is
//! `a2a-server`, and before v0.30 subagents wrote sibling files under their
//! parent's id. The stamp is the *first* `startTime` of the file, in UTC, so it
//! stays the same as the file grows (a2a-server files repeat their metadata
//! line with new start times, which Gemini's loader merges over the first),
//! and a legacy `.json` and the `.jsonl` Gemini migrates it to share it.
//! Without a start time the file name's minute is used, else 8 hex digits of
//! the file name's sha256.

use chrono::NaiveDateTime;
use sha2::{Digest, Sha256};

use crate::replay::Identity;
use crate::time;

/// deja's id for the session a file starts with.
pub fn session_id(identity: &Identity, file_name: &str) -> String {
    let stamp = time::parse_ms(identity.start_time.as_deref())
        .and_then(time::compact_utc)
        .or_else(|| file_name_stamp(file_name))
        .unwrap_or_else(|| short_hash(file_name));
    format!("{}-{stamp}", identity.session_id)
}

/// The stamp of `session-2026-03-28T21-19-0f18b3b3.jsonl`: `20260328T211900`.
fn file_name_stamp(file_name: &str) -> Option<String> {
    let minute = file_name.strip_prefix("session-")?.get(..16)?;
    let parsed = NaiveDateTime::parse_from_str(minute, "%Y-%m-%dT%H-%M").ok()?;
    Some(parsed.format("%Y%m%dT%H%M%S").to_string())
}

fn short_hash(file_name: &str) -> String {
    let hex = sha256_hex(file_name);
    hex.get(..8).unwrap_or(&hex).to_string()
}

/// The lower-case hex sha256 of `text` (Gemini's `projectHash` of a root).
pub fn sha256_hex(text: &str) -> String {
    format!("{:x}", Sha256::digest(text.as_bytes()))
}

/// gemini-cli's `sanitizeFilenamePart`: what is not `[A-Za-z0-9_-]` becomes `_`.
pub fn sanitize(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(start: Option<&str>) -> Identity {
        Identity {
            session_id: "abc".into(),
            start_time: start.map(String::from),
        }
    }

    #[test]
    fn stamps_the_first_start_time_in_utc() {
        let id = session_id(&identity(Some("2026-03-28T23:19:05.125+02:00")), "x.json");
        assert_eq!(id, "abc-20260328T211905");
    }

    #[test]
    fn falls_back_to_the_file_name_then_its_hash() {
        let name = "session-2026-03-28T21-19-0f18b3b3.jsonl";
        assert_eq!(session_id(&identity(None), name), "abc-20260328T211900");
        assert_eq!(
            session_id(&identity(Some("bad")), name),
            "abc-20260328T211900"
        );
        let hashed = session_id(&identity(None), "twynek.jsonl");
        assert_eq!(hashed, format!("abc-{}", &sha256_hex("twynek.jsonl")[..8]));
        assert_eq!(
            session_id(&identity(None), "session-é"),
            format!("abc-{}", &sha256_hex("session-é")[..8])
        );
    }

    #[test]
    fn hashes_like_gemini() {
        assert_eq!(
            sha256_hex("/google/devshell/editor/code-oss-for-cloud-shell"),
            "23142f308149287adbb8d963a761e36e173d5b2b69bf2129dd820f869e8f65aa"
        );
    }

    #[test]
    fn sanitizes_like_gemini() {
        assert_eq!(sanitize("a2a-server"), "a2a-server");
        assert_eq!(sanitize("a/b.c d_é"), "a_b_c_d__");
    }
}
