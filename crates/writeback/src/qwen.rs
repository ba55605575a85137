//! Qwen Code: `<runtime>/projects/<folder>/chats/<id>.jsonl`, the runtime
//! folder being `QWEN_RUNTIME_DIR`, else `QWEN_HOME`, else `~/.qwen`, the
//! folder named as Claude Code names it. One `user` or `assistant` record a
//! message (`message: {role: user|model, parts: [{text}]}`), chained by
//! `parentUuid`.

use std::path::{Path, PathBuf};

use deja_model::Role;
use serde_json::json;

use crate::claude::encode_dir;
use crate::{ids, Checked, Error, Placement, Places, Writer};

/// Qwen Code's writer.
pub struct Qwen;

impl Writer for Qwen {
    fn harness(&self) -> &'static str {
        "qwen"
    }

    fn root(&self, places: &Places) -> PathBuf {
        places
            .dir_var("QWEN_RUNTIME_DIR")
            .or_else(|| places.dir_var("QWEN_HOME"))
            .unwrap_or_else(|| places.home.join(".qwen"))
            .join("projects")
    }

    fn place(&self, session: &Checked<'_>, root: &Path) -> Result<Placement, Error> {
        Ok(Placement {
            dir: root.join(encode_dir(session.cwd)).join("chats"),
            file_name: format!("{}.jsonl", session.id),
            markers: Vec::new(),
        })
    }

    fn encode(&self, session: &Checked<'_>) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        let mut parent: Option<String> = None;
        let mut given = ids::Given::default();
        for (i, m) in session.messages.iter().enumerate() {
            // deja's id of a message is its record's `uuid`.
            let uuid = given.keep(
                m.native_id.as_deref(),
                ids::is_uuid,
                ids::record("qwen", session.id, i),
            );
            let role = match m.role {
                Role::User => "user",
                Role::Assistant => "model",
            };
            let record = json!({
                "uuid": uuid,
                "parentUuid": parent,
                "sessionId": session.id,
                "timestamp": ids::rfc3339(session.time_of(i)),
                "type": m.role.as_str(),
                "cwd": session.cwd,
                "message": {"role": role, "parts": [{"text": m.text}]},
            });
            serde_json::to_writer(&mut out, &record)?;
            out.push(b'\n');
            parent = Some(uuid);
        }
        Ok(out)
    }
}
