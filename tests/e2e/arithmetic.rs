//! Vectors a store made before int8 arithmetic was exact on every processor
//! (its model id without `+x16`): recall still answers by meaning with them,
//! and the next index run re-embeds them where this processor's sums
//! saturated, or keeps them, under today's id, where they did not.

use crate::common::{gemini_session, Sandbox};

fn meta(conn: &rusqlite::Connection, key: &str) -> String {
    conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .unwrap()
}

fn count(conn: &rusqlite::Connection, sql: &str, model: &str) -> i64 {
    conn.query_row(sql, [model], |r| r.get(0)).unwrap()
}

#[test]
fn vectors_made_with_saturating_int8_sums_answer_until_re_embedded_where_they_differ() {
    let mut sb = Sandbox::new();
    sb.config_with_model("");
    gemini_session(
        &sb.home.join(".gemini"),
        "ledger",
        "5b1c0a3e-2f4d-4e7a-9c8b-1d2e3f4a5b6c",
        0,
        6,
        "tenant predicate",
    );
    sb.env("GEMINI_CLI_HOME", sb.home.clone());
    let first = sb.index();
    let texts = first["embeddings"]["embedded"].as_u64().unwrap();
    assert!(texts > 0, "{first:#}");

    // Today's id of the int8 model carries the tag; the store of an earlier
    // deja had it without, its vectors cached under that id, and a
    // fingerprint of the model files without it.
    let conn = rusqlite::Connection::open(sb.database()).unwrap();
    let id = meta(&conn, "embed_model");
    assert!(id.contains(deja_embed::EXACT_INT8_TAG), "{id}");
    let old = deja_embed::id_before_exact_int8(&id).unwrap();
    assert!(!old.contains(deja_embed::EXACT_INT8_TAG), "{old}");
    let fingerprint = meta(&conn, "embed_fingerprint");
    conn.execute_batch(&format!(
        "UPDATE meta SET value = '{old}' WHERE key = 'embed_model';
         UPDATE meta SET value = '{}' WHERE key = 'embed_fingerprint';
         UPDATE embeddings SET model = '{old}' WHERE model = '{id}';",
        fingerprint.replace(deja_embed::EXACT_INT8_TAG, "")
    ))
    .unwrap();
    drop(conn);

    // Recall answers by meaning with those vectors meanwhile.
    let out = sb.ok(&[
        "recall",
        "tenant predicate module",
        "--mode",
        "semantic",
        "--json",
    ]);
    let hits = out.json()["hits"].as_array().cloned().unwrap_or_default();
    assert!(!hits.is_empty(), "{}{}", out.stdout, out.stderr);

    // The next index run: the same vectors under today's id where int8 sums
    // were exact here anyway, every unit embedded again where they were not.
    let second = sb.index();
    let embedded = second["embeddings"]["embedded"].as_u64().unwrap();
    let conn = rusqlite::Connection::open(sb.database()).unwrap();
    assert_eq!(meta(&conn, "embed_model"), id);
    let cached_under = |model: &str| {
        count(
            &conn,
            "SELECT count(*) FROM embeddings WHERE model = ?1",
            model,
        )
    };
    if deja_embed::int8_was_exact_here() {
        assert_eq!(embedded, 0, "{second:#}");
        assert_eq!(cached_under(&old), 0);
    } else {
        assert_eq!(embedded, texts, "{second:#}");
    }
    assert_eq!(cached_under(&id) as u64, texts, "{second:#}");

    // And nothing more to do after it.
    let third = sb.index();
    assert_eq!(third["embeddings"]["embedded"], 0, "{third:#}");
}
