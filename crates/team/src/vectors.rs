//! Vectors that travel with published sessions, so that a team embeds its
//! history once. A push publishes the vectors of each shared session's
//! embedding units (by the unit's text hash, in half precision, with the id
//! of the model that made them); a pull by a machine whose store uses the
//! same model id keeps them beside the pulled session, and the embedding
//! pass takes them instead of running the model (after checking a sample,
//! [`deja_store::pulled_vectors`]). A unit's text hash covers the exact text
//! embedded, so a vector is only ever taken for the text it was made from:
//! text this machine's redaction changed, or windowed otherwise, does not
//! match and is embedded here. Vectors go with their session: a re-push or a
//! retraction clears them with its messages.

use std::collections::HashMap;

use deja_store::pulled_vectors::to_f16_blob;
use deja_store::Store;

use crate::{Key, Result, Team};

/// Unit vectors by text hash.
type Vectors = Vec<(String, Vec<f32>)>;

/// Most vectors sent in one transaction.
const BATCH_VECTORS: usize = 4000;

/// Most vectors taken per message of a pulled session (a message has one
/// per window; a long one several): a session offering more is taken
/// without its vectors.
const MOST_PER_MESSAGE: i64 = 64;

/// Publishes the unit vectors of `model` of the shared sessions `rows`
/// (each with its team key) that the team store holds another number of
/// (none yet, or fewer: a message embedded in part since), and drops this
/// origin's vectors of any other model. Returns how many vectors were sent.
pub(crate) fn publish(
    team: &mut Team,
    store: &Store,
    model: &str,
    rows: &[(Key, i64)],
) -> Result<usize> {
    let origin = team.settings.origin.clone();
    let remote: HashMap<(String, String), i64> = team
        .client
        .query(
            "SELECT harness, session_id, count(*) FROM deja.vectors
             WHERE origin = $1 AND model = $2 GROUP BY harness, session_id",
            &[&origin, &model],
        )
        .map_err(|e| team.fail(e))?
        .into_iter()
        .map(|r| ((r.get(0), r.get(1)), r.get(2)))
        .collect();
    team.client
        .execute(
            "DELETE FROM deja.vectors WHERE origin = $1 AND model <> $2",
            &[&origin, &model],
        )
        .map_err(|e| team.fail(e))?;
    let mut batch: Vec<(&Key, Vectors)> = Vec::new();
    let mut in_batch = 0;
    let mut sent = 0;
    for (key, row) in rows {
        let vectors = store.unit_vectors(*row, model)?;
        let theirs = remote
            .get(&(key.harness.clone(), key.id.clone()))
            .copied()
            .unwrap_or(0);
        if vectors.is_empty() || vectors.len() as i64 == theirs {
            continue;
        }
        in_batch += vectors.len();
        sent += vectors.len();
        batch.push((key, vectors));
        if in_batch >= BATCH_VECTORS {
            send(team, model, &batch)?;
            batch.clear();
            in_batch = 0;
        }
    }
    if !batch.is_empty() {
        send(team, model, &batch)?;
    }
    Ok(sent)
}

/// Replaces the vectors of each session of `batch`, in one transaction.
fn send(team: &mut Team, model: &str, batch: &[(&Key, Vectors)]) -> Result<()> {
    let result = (|| -> std::result::Result<(), postgres::Error> {
        let mut tx = team.client.transaction()?;
        for (key, vectors) in batch {
            tx.execute(
                "DELETE FROM deja.vectors WHERE origin = $1 AND harness = $2 AND session_id = $3",
                &[&key.origin, &key.harness, &key.id],
            )?;
            let hashes: Vec<&str> = vectors.iter().map(|(h, _)| h.as_str()).collect();
            let blobs: Vec<Vec<u8>> = vectors.iter().map(|(_, v)| to_f16_blob(v)).collect();
            tx.execute(
                "INSERT INTO deja.vectors (origin, harness, session_id, model, text_hash, vector)
                 SELECT $1, $2, $3, $4, v.* FROM unnest($5::text[], $6::bytea[]) AS v",
                &[&key.origin, &key.harness, &key.id, &model, &hashes, &blobs],
            )?;
        }
        tx.commit()
    })();
    result.map_err(|e| team.fail(e))
}

/// Takes the vectors of `model` (vectors of `dims` values) published with
/// the pulled sessions `sessions` (each with its local row and message
/// count) into `store`, where the embedding pass finds them. A vector of
/// another length, a malformed text hash, or a session offering more than
/// [`MOST_PER_MESSAGE`] vectors per message is left out. Returns how many
/// vectors were kept.
pub(crate) fn take(
    team: &mut Team,
    store: &mut Store,
    model: &str,
    dims: usize,
    sessions: &[(Key, i64, usize)],
) -> Result<usize> {
    if sessions.is_empty() {
        return Ok(0);
    }
    let origins: Vec<&str> = sessions.iter().map(|(k, _, _)| k.origin.as_str()).collect();
    let harnesses: Vec<&str> = sessions
        .iter()
        .map(|(k, _, _)| k.harness.as_str())
        .collect();
    let ids: Vec<&str> = sessions.iter().map(|(k, _, _)| k.id.as_str()).collect();
    let bytes = i32::try_from(dims * 2).unwrap_or(i32::MAX);
    let rows = team
        .client
        .query(
            "SELECT v.origin, v.harness, v.session_id, v.text_hash, v.vector
             FROM deja.vectors v
             JOIN unnest($1::text[], $2::text[], $3::text[]) AS k(origin, harness, session_id)
               USING (origin, harness, session_id)
             WHERE v.model = $4 AND octet_length(v.vector) = $5
             ORDER BY v.origin, v.harness, v.session_id, v.text_hash",
            &[&origins, &harnesses, &ids, &model, &bytes],
        )
        .map_err(|e| team.fail(e))?;
    let mut by_session: HashMap<Key, Vec<(String, Vec<u8>)>> = HashMap::new();
    for r in rows {
        let hash: String = r.get(3);
        if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            continue;
        }
        let key = Key {
            origin: r.get(0),
            harness: r.get(1),
            id: r.get(2),
        };
        by_session.entry(key).or_default().push((hash, r.get(4)));
    }
    let mut kept = 0;
    for (key, row, messages) in sessions {
        let Some(vectors) = by_session.remove(key) else {
            continue;
        };
        let most = (*messages as i64).saturating_mul(MOST_PER_MESSAGE);
        if vectors.len() as i64 > most {
            continue;
        }
        kept += store.put_pulled_vectors(*row, model, &vectors)?;
    }
    Ok(kept)
}
