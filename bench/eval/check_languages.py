#!/usr/bin/env python3
"""Validate bench/eval/languages.jsonl against an index of the real-transcript corpus.

Usage:
    DEJA_HOME=... DEJA_CONFIG=... python3 bench/eval/check_languages.py path/to/deja [path/to/languages.jsonl]

The index must hold the whole corpus (see README.md, "Validating"). The script
checks that

  * every line parses and has the expected fields and values;
  * ids run l001, l002, ... in file order, and `half` alternates tune / report
    within each (lang, kind) in file order;
  * every session is an indexed native id of the line's harness, and every
    turn a message index `deja show` reports for one of the line's sessions;
  * a `paraphrase` shares no word with its answer messages: no Latin-script
    word of three letters or more, no run of three Chinese or Japanese
    characters (two-character words are common to any text of the language);
  * a `cross` query in Chinese or Japanese holds no Latin letter or digit,
    so it shares no word, identifier or project name with an English session;
    a `cross` query in English holds no Chinese or Japanese character;
  * a `keyword` query's words all occur in one of its answer messages;

then prints the counts by query language and kind. Exit status 0 when all is
well, 1 when a check failed. Standard library only.
"""

import collections
import json
import os
import re
import subprocess
import sys

KINDS = ["paraphrase", "keyword", "cross"]
LANGS = ["zh", "ja", "en"]
HARNESSES = ["aider", "gemini", "claude", "codex", "qwen"]
HALVES = ["tune", "report"]
FIELDS = ["id", "harness", "kind", "half", "lang", "query", "sessions", "turns", "note"]

CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")
CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]+")
LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]{2,}")


def run_json(deja, *args):
    out = subprocess.run([deja, *args], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def trigrams(text):
    out = set()
    for run in CJK_RUN.findall(text):
        out.update(run[i:i + 3] for i in range(len(run) - 2))
    return out


def latin_words(text):
    return {w.lower() for w in LATIN_WORD.findall(text)}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    deja = sys.argv[1]
    path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "languages.jsonl")

    sessions = run_json(deja, "sessions", "--json")["sessions"]
    by_native = collections.defaultdict(list)
    for s in sessions:
        by_native[s["native_id"]].append(s)
    shown = {}

    def messages(deja_id):
        if deja_id not in shown:
            shown[deja_id] = {m["index"]: m.get("text", "")
                              for m in run_json(deja, "show", "--json", deja_id)["messages"]}
        return shown[deja_id]

    errors = []
    rows = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            try:
                rows.append((lineno, json.loads(line)))
            except json.JSONDecodeError as e:
                errors.append(f"line {lineno}: not JSON ({e})")

    seen = collections.Counter()
    for n, (lineno, r) in enumerate(rows, 1):
        where = f"line {lineno} ({r.get('id')})"
        missing = [k for k in FIELDS if k not in r]
        if missing:
            errors.append(f"{where}: missing fields {missing}")
            continue
        if sorted(set(r) - set(FIELDS)):
            errors.append(f"{where}: unexpected fields {sorted(set(r) - set(FIELDS))}")
        if r["id"] != f"l{n:03d}":
            errors.append(f"{where}: id should be l{n:03d}")
        if r["harness"] not in HARNESSES or r["kind"] not in KINDS or r["lang"] not in LANGS:
            errors.append(f"{where}: unknown harness, kind or lang")
            continue
        want = HALVES[seen[(r["lang"], r["kind"])] % 2]
        seen[(r["lang"], r["kind"])] += 1
        if r["half"] != want:
            errors.append(f"{where}: half should be {want}")
        query = r["query"]
        if r["lang"] in ("zh", "ja") and not CJK.search(query):
            errors.append(f"{where}: a {r['lang']} query without Chinese or Japanese characters")
        if r["lang"] == "en" and CJK.search(query):
            errors.append(f"{where}: an English query with Chinese or Japanese characters")

        answer_texts = []
        session_texts = []
        for sid in r["sessions"]:
            found = by_native.get(sid)
            if not found:
                errors.append(f"{where}: session {sid!r} is not an indexed native id")
                continue
            if {s["harness"] for s in found} != {r["harness"]}:
                errors.append(f"{where}: session {sid!r} is not of harness {r['harness']}")
            for s in found:
                session_texts.extend(messages(s["id"]).values())
        answered = set()
        for turn in r["turns"]:
            sid, idx = turn
            if sid not in r["sessions"]:
                errors.append(f"{where}: turn {turn!r} names a session not in sessions")
                continue
            texts = [messages(s["id"]).get(idx) for s in by_native.get(sid, [])]
            texts = [t for t in texts if t is not None]
            if not texts:
                errors.append(f"{where}: turn {turn!r}: no such message")
            answer_texts.extend(texts)
            answered.add(sid)
        for sid in r["sessions"]:
            if sid not in answered:
                errors.append(f"{where}: session {sid!r} has no turn")

        if r["kind"] == "paraphrase":
            answer = "\n".join(answer_texts)
            shared = sorted(trigrams(query) & trigrams(answer))
            words = sorted(latin_words(query) & latin_words(answer))
            if shared or words:
                errors.append(f"{where}: the paraphrase shares {shared + words} with its answer")
        elif r["kind"] == "cross":
            if r["lang"] in ("zh", "ja") and re.search(r"[A-Za-z0-9]", query):
                errors.append(f"{where}: a cross-language query with Latin letters or digits")
            if r["lang"] in ("zh", "ja"):
                session = "\n".join(session_texts)
                if CJK.search(session) is None and trigrams(query) & trigrams(session):
                    errors.append(f"{where}: shares words with the session")
        elif r["kind"] == "keyword":
            for word in query.split():
                if not any(word.lower() in t.lower() for t in answer_texts):
                    errors.append(f"{where}: keyword {word!r} is not in an answer message")

    valid = [r for _, r in rows if all(k in r for k in FIELDS)]
    print(f"{len(valid)} queries, {len({s for r in valid for s in r['sessions']})} distinct sessions")
    counts = collections.Counter((r["lang"], r["kind"]) for r in valid)
    print(f"{'':4}" + "".join(f"{k:>12}" for k in KINDS) + f"{'total':>8}")
    for lang in LANGS:
        cells = "".join(f"{counts[(lang, k)]:>12}" for k in KINDS)
        print(f"{lang:4}{cells}{sum(counts[(lang, k)] for k in KINDS):>8}")
    for e in errors:
        print(f"error: {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
