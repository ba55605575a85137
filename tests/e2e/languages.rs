//! Memory in every language, through the real binary: Chinese, Japanese and
//! Korean words are found inside the runs of characters they stand in (no
//! space parts them).

use crate::common::*;

/// Writes a Gemini CLI session `id` in project `project` whose user asks
/// `question` and whose model answers `answer`.
fn chat(sb: &Sandbox, project: &str, id: &str, minute: u32, question: &str, answer: &str) {
    let start = format!("2026-07-17T09:{minute:02}:00.000Z");
    let lines = [
        serde_json::json!({"sessionId": id, "projectHash": "0".repeat(64), "startTime": start,
            "lastUpdated": start, "kind": "main"}),
        serde_json::json!({"id": format!("{id}-q"), "timestamp": start, "type": "user",
            "content": [{"text": question}]}),
        serde_json::json!({"id": format!("{id}-a"), "timestamp": start, "type": "gemini",
            "content": answer}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    sb.write(
        &format!(
            ".gemini/tmp/{project}/chats/session-2026-07-17T09-{minute:02}-{}.jsonl",
            &id[..8]
        ),
        text,
    );
}

fn sandbox() -> Sandbox {
    let mut sb = Sandbox::new();
    sb.config("[embed]\nenabled = false\n");
    chat(
        &sb,
        "zh",
        "11111111-0000-4000-8000-000000000001",
        1,
        "服务运行几个小时后内存一直上涨，怎么排查？",
        "找到了：缓存没有设置上限，导致内存泄露。给缓存加上容量限制后问题解决了。",
    );
    chat(
        &sb,
        "ja",
        "22222222-0000-4000-8000-000000000002",
        2,
        "CIでテストが失敗する原因を調べてください",
        "原因はデータベース接続のタイムアウトです。待ち時間を延ばしました。",
    );
    chat(
        &sb,
        "ko",
        "33333333-0000-4000-8000-000000000003",
        3,
        "서버에서 메모리 누수가 발생했습니다",
        "연결 풀을 닫지 않아서 메모리 누수가 생겼습니다. 이제 고쳤습니다.",
    );
    chat(
        &sb,
        "en",
        "44444444-0000-4000-8000-000000000004",
        4,
        "why does the invoice query leak another tenant's rows?",
        "The tenant predicate was missing from the invoice query; it is added now.",
    );
    let home = sb.home.clone();
    sb.env("GEMINI_CLI_HOME", home);
    sb.ok(&["index"]);
    sb
}

/// The session ids of `deja recall --mode lexical --json QUERY`, in order,
/// and the first hit's snippet.
fn recall(sb: &Sandbox, query: &str) -> (Vec<String>, String) {
    let v = sb
        .ok(&["recall", "--mode", "lexical", "--json", query])
        .json();
    let hits = v["hits"].as_array().cloned().unwrap_or_default();
    let ids = hits
        .iter()
        .map(|h| h["session_id"].as_str().unwrap_or_default().to_string())
        .collect();
    let text = hits
        .first()
        .and_then(|h| h["text"].as_str())
        .unwrap_or_default()
        .to_string();
    (ids, text)
}

#[test]
fn chinese_japanese_and_korean_words_are_found_inside_their_runs() {
    let sb = sandbox();
    for (query, id, word) in [
        ("内存泄露", "11111111", "内存泄露"),
        ("缓存", "11111111", "缓存"),
        ("タイムアウト", "22222222", "タイムアウト"),
        ("テストが失敗", "22222222", "失敗"),
        ("메모리 누수", "33333333", "누수"),
        ("tenant predicate", "44444444", "tenant"),
    ] {
        let (ids, text) = recall(&sb, query);
        // Every hit is a message of the one session that holds the words.
        assert!(!ids.is_empty(), "{query}: no hit");
        assert!(ids.iter().all(|i| i.starts_with(id)), "{query}: {ids:?}");
        assert!(text.contains(word), "{query}: {text}");
    }
    // Characters in another order are not the phrase.
    let out = sb.run(&["recall", "--mode", "lexical", "--json", "泄露内存"]);
    let v = out.json();
    assert!(
        v["hits"].as_array().is_none_or(|h| h
            .iter()
            .all(|h| !h["text"].as_str().unwrap_or_default().contains("泄露内存"))),
        "{v:#}"
    );
}
