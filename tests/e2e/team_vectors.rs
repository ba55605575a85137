//! A team embeds once: a push publishes the vectors of its sessions' units,
//! a pull by a machine with the same model takes them instead of running the
//! model (checking one unit of each session), a machine with another model
//! embeds for itself, vectors that disagree with the model are refused, and
//! vectors leave the team store with their session.

use serde_json::Value;

use crate::common::{installed_model, Sandbox};
use crate::team::{configure, count, ids, machine, server};
use deja_team::scratch::ScratchServer;

/// Three sessions of project `billing`, on three subjects.
const BILLING: &str = "
# aider chat started at 2026-03-02 10:00:00

#### the invoice query leaks rows across customers  

The query misses the tenant predicate; add `WHERE tenant_id = $1` to every invoice lookup.

#### does the export have the same problem?  

Yes: the CSV export joins invoices without the tenant filter too.

# aider chat started at 2026-03-03 09:00:00

#### totals are off by one cent on large invoices  

Summing floats loses precision; keep amounts as integer cents and round once at the end.

# aider chat started at 2026-03-04 16:30:00

#### the nightly payment reminder email goes out twice  

The cron job and the queue worker both send it; keep only the worker and mark reminders as sent.
";

/// `machine` with the installed model (or `model_dir`, another model).
fn with_model(
    server: &ScratchServer,
    user: &str,
    host: &str,
    billing: &str,
    model_dir: Option<&str>,
) -> Sandbox {
    let sb = machine(server, user, host, billing);
    configure(&sb, server, "team", user, host, "");
    sb.config_with_model(&std::fs::read_to_string(sb.config_path()).unwrap());
    if let Some(dir) = model_dir {
        let text = std::fs::read_to_string(sb.config_path()).unwrap();
        let (model, _) = installed_model();
        let other = model.parent().unwrap().join(dir);
        std::fs::write(
            sb.config_path(),
            text.replace(model.to_str().unwrap(), other.to_str().unwrap()),
        )
        .unwrap();
    }
    sb
}

fn semantic_first(sb: &Sandbox, query: &str) -> Option<String> {
    let hits = sb
        .ok(&[
            "recall",
            "--no-refresh",
            "--mode",
            "semantic",
            "--json",
            "-n",
            "1",
            query,
        ])
        .json();
    hits["hits"][0]["session_id"].as_str().map(String::from)
}

fn n(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v:#}"))
}

#[test]
fn a_teammates_vectors_make_pulled_sessions_searchable_by_meaning_without_the_model() {
    let server = server();
    let ana = with_model(&server, "ana", "laptop", BILLING, None);
    ana.index();
    let push = ana.ok(&["team", "push", "--json"]).json();
    assert_eq!(n(&push, "pushed"), 3, "{push:#}");
    let published = count(&server, "team", "SELECT count(*) FROM deja.vectors");
    assert!(
        published >= 6,
        "one vector per message at least: {published}"
    );
    assert_eq!(n(&push, "vectors") as i64, published, "{push:#}");
    assert_eq!(
        count(
            &server,
            "team",
            "SELECT count(*) FROM deja.vectors WHERE octet_length(vector) <> 768"
        ),
        0,
        "384 values in half precision"
    );
    // Nothing changed, nothing sent again.
    let again = ana.ok(&["team", "push", "--json"]).json();
    assert_eq!((n(&again, "pushed"), n(&again, "vectors")), (0, 0));

    // Ben has the same model and a home that was never indexed.
    let ben = with_model(&server, "ben", "desk", "", None);
    let pulled = ben.ok(&["team", "pull", "--json"]).json();
    assert_eq!(n(&pulled, "added"), 3, "{pulled:#}");
    assert_eq!(n(&pulled, "vectors") as i64, published, "{pulled:#}");
    // The model ran once per pulled session, to check one of its vectors;
    // every text took its published vector.
    assert_eq!(n(&pulled, "embedded_by_model"), 3, "{pulled:#}");
    assert_eq!(n(&pulled, "from_team") as i64, published, "{pulled:#}");
    assert_eq!(n(&pulled, "refused_vectors"), 0);
    assert_eq!(n(&pulled, "embedded_messages"), 8, "{pulled:#}");

    // Found by meaning at once, as on the machine that embedded them.
    for query in [
        "customers can see each other's bills",
        "rounding error in the sum of money",
        "customers get the same notification two times",
    ] {
        let here = semantic_first(&ana, query);
        assert!(here.is_some(), "{query}");
        assert_eq!(semantic_first(&ben, query), here, "{query}");
    }
    // The published vectors were taken, not kept beside the store's own.
    let again = ben.ok(&["team", "pull", "--json"]).json();
    assert_eq!((n(&again, "added"), n(&again, "vectors")), (0, 0));

    // Dan's model is another (the same weights in fp32 arithmetic): he
    // takes no vectors and embeds everything himself.
    let dan = with_model(&server, "dan", "box", "", Some("all-MiniLM-L6-v2"));
    dan.index();
    let pulled = dan.ok(&["team", "pull", "--json"]).json();
    assert_eq!(n(&pulled, "added"), 3, "{pulled:#}");
    assert_eq!((n(&pulled, "vectors"), n(&pulled, "from_team")), (0, 0));
    assert_eq!(n(&pulled, "embedded_by_model") as i64, published);

    // Forgetting a session retracts its vectors with it.
    let listed = ana
        .ok(&["sessions", "--project", "billing", "--json"])
        .json();
    let ana_ids = ids(&listed, "sessions");
    assert_eq!(ana_ids.len(), 3);
    ana.ok(&["forget", &ana_ids[0], "--yes"]);
    let push = ana.ok(&["team", "push", "--json"]).json();
    assert_eq!(n(&push, "retracted"), 1, "{push:#}");
    let left = count(&server, "team", "SELECT count(*) FROM deja.vectors");
    assert!(left > 0 && left < published, "{left} of {published}");
    assert_eq!(
        count(
            &server,
            "team",
            &format!(
                "SELECT count(*) FROM deja.vectors WHERE session_id = '{}'",
                ana_ids[0]
            )
        ),
        0
    );
}

#[test]
fn vectors_that_disagree_with_the_model_here_are_refused_and_the_session_embedded_here() {
    let server = server();
    let ana = with_model(&server, "ana", "laptop", BILLING, None);
    ana.index();
    let push = ana.ok(&["team", "push", "--json"]).json();
    let published = n(&push, "vectors") as i64;
    assert!(published >= 6, "{push:#}");
    let truth = semantic_first(&ana, "rounding error in the sum of money");
    assert!(truth.is_some());

    // Every published vector replaced by one pointing the same way, which
    // would put these sessions first for any question.
    server
        .psql(
            "team",
            "UPDATE deja.vectors SET vector = decode(repeat('003c', 384), 'hex')",
        )
        .unwrap();
    let cat = with_model(&server, "cat", "mini", "", None);
    cat.index();
    let out = cat.ok(&["team", "pull", "--json"]);
    let pulled = out.json();
    assert_eq!(n(&pulled, "vectors") as i64, published, "{pulled:#}");
    assert_eq!(n(&pulled, "refused_vectors"), 3, "{pulled:#}");
    assert_eq!(n(&pulled, "from_team"), 0, "{pulled:#}");
    // Each session's check, then all its texts.
    assert_eq!(n(&pulled, "embedded_by_model") as i64, published + 3);
    assert!(
        out.stderr.contains("disagreed with this machine's model"),
        "{}",
        out.stderr
    );
    assert_eq!(
        semantic_first(&cat, "rounding error in the sum of money"),
        truth
    );
}
