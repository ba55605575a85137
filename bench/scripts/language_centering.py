#!/usr/bin/env python3
"""Ranking by meaning across languages with each language's mean vector taken
out, measured offline on a store that `deja-bench quality` embedded.

A multilingual model places every text partly by its language: a Chinese
query lands near Chinese messages whatever they say, so on a history that is
mostly English an English session is far from a Chinese question about it.
This replays ranking by meaning (each session ranked by its best unit's
cosine: recall's semantic half without its discount for a long message's
many windows, its per-session evidence and its fusion with the words) four
ways on the store's own vectors:

  raw               the cosines recall uses today
  centered A        each unit and the query minus A times the mean vector of
                    their script's units in this store (Latin, Cyrillic,
                    Chinese, Japanese, Korean, other), normalized again
  blend A           the mean of raw and centered A
  centered global   every vector minus the store's one mean

and, given --parallel, two ways whose means come from no store but from the
same sentences in each language (the translations of Django's own messages,
from its wheel on PyPI: every message translated into Chinese, Japanese,
Korean and Russian, about 860):

  parallel means A    each unit and the query minus A times the mean vector
                      of the translations in its script
  parallel offsets A  each unit and the query in another script moved by A
                      times the difference between its script's mean and
                      English's; English vectors are left as they are

and reports session hit@1 / hit@5 by the set's kind and language.

usage: language_centering.py [--parallel DJANGO_WHEEL] STORE MODEL_DIR SET.jsonl [SET.jsonl ...]
  STORE      a home's index.sqlite (read only)
  MODEL_DIR  the model folder the store was embedded with (its model.onnx and
             tokenizer.json embed the queries, mean pooled; "query: " before
             them when the folder's name says e5, "passage: " before a
             translation)
  DJANGO_WHEEL  e.g. `pip download django==5.2.8 --no-deps` (sha256
             37e687f7bd73ddf043e2b6b97cfe02fcbb11f2dbb3adccc6a2b18c6daa054d7f)

numpy, onnxruntime and tokenizers are needed (PyPI).
"""

import collections
import importlib.util
import json
import os
import sqlite3
import sys

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

MIN_UNITS = 20  # a script with fewer units in the store uses the store's mean

def translations(wheel: str) -> dict:
    """Django's messages in every language the model's means table knows, as
    scripts/script-means.py reads them for deja's table."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "script-means.py")
    spec = importlib.util.spec_from_file_location("script_means", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.translations(wheel)


def script(text: str) -> str:
    """The script most of a text's letters are written in."""
    c = collections.Counter()
    for ch in text:
        o = ord(ch)
        if 0x3040 <= o <= 0x30FF:
            c["kana"] += 1
        elif 0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF:
            c["han"] += 1
        elif 0xAC00 <= o <= 0xD7AF:
            c["hangul"] += 1
        elif ch.isalpha():
            c["cyrillic" if 0x400 <= o <= 0x4FF else "latin" if o < 0x250 else "other"] += 1
    n = sum(c.values())
    if n == 0:
        return "latin"
    cjk = c["kana"] + c["han"] + c["hangul"]
    if cjk / n >= 0.3:
        if c["hangul"] > c["kana"] and c["hangul"] > c["han"] / 4:
            return "ko"
        return "ja" if c["kana"] >= 0.1 * cjk else "zh"
    return max(("latin", "cyrillic", "other"), key=lambda k: c[k])


def vector(blob: bytes) -> np.ndarray:
    # A tag byte and half-precision values, or (older rows) f32 values.
    if len(blob) % 2 == 1:
        return np.frombuffer(blob[1:], dtype="<f2").astype(np.float32)
    return np.frombuffer(blob, dtype="<f4")


def main() -> None:
    args = sys.argv[1:]
    wheel = None
    if args[:1] == ["--parallel"]:
        wheel, args = args[1], args[2:]
    store, model_dir, sets = args[0], args[1], args[2:]
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    model = con.execute("SELECT model FROM embeddings LIMIT 1").fetchone()[0]
    rows = con.execute(
        """SELECT s.native_id, m.text, e.vector FROM chunks c
           JOIN messages m ON m.id = c.message JOIN sessions s ON s.id = m.session
           JOIN embeddings e ON e.text_hash = c.text_hash AND e.model = ?""",
        (model,),
    ).fetchall()
    units = np.stack([vector(r[2]) for r in rows])
    units /= np.linalg.norm(units, axis=1, keepdims=True)
    sessions = [r[0] for r in rows]
    scripts = np.array([script(r[1]) for r in rows])
    counts = collections.Counter(scripts.tolist())
    print(f"{model}: {len(rows)} units of {len(set(sessions))} sessions, by script {dict(counts)}")
    overall = units.mean(0)
    means = {s: units[scripts == s].mean(0) for s in counts if counts[s] >= MIN_UNITS}

    def mean_of(s: str) -> np.ndarray:
        return means.get(s, overall)

    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.enable_truncation(256)
    onnx = ort.InferenceSession(os.path.join(model_dir, "model.onnx"))
    inputs = {i.name for i in onnx.get_inputs()}
    e5 = "e5" in os.path.basename(os.path.normpath(model_dir))

    def embed(text: str, prefix: str = "query: ") -> np.ndarray:
        enc = tok.encode((prefix + text) if e5 else text)
        ids = np.array([enc.ids], dtype=np.int64)
        mask = np.array([enc.attention_mask], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        out = onnx.run(None, feed)[0][0]
        v = (out * mask[0][:, None]).sum(0) / mask.sum()
        return v / np.linalg.norm(v)

    present = set(sessions)
    items = []
    for path in sets:
        with open(path, encoding="utf-8") as f:
            items += [json.loads(line) for line in f if line.strip()]
    items = [it for it in items if any(s in present for s in it["sessions"])]
    queries = [(it, embed(it["query"]), script(it["query"])) for it in items]

    def shifted(shift):
        """Scores with every vector v of script s, and the query, replaced by
        v - shift(s) and normalized again."""
        docs = units - np.stack([shift(s) for s in scripts])
        docs /= np.linalg.norm(docs, axis=1, keepdims=True)

        def score(q, s):
            q = q - shift(s)
            return docs @ (q / np.linalg.norm(q))

        return score

    def centered(alpha: float):
        return shifted(lambda s: alpha * mean_of(s))

    def blend(alpha: float):
        c = centered(alpha)
        return lambda q, s: 0.5 * (units @ q + c(q, s))

    ways = [("raw", lambda q, s: units @ q)]
    for a in (0.5, 0.75, 1.0):
        ways.append((f"centered {a}", centered(a)))
        ways.append((f"blend {a}", blend(a)))
    ways.append(("centered global", shifted(lambda s: overall)))

    if wheel:
        texts = translations(wheel)
        pm = {k: np.stack([embed(t, "passage: ") for t in v]).mean(0) for k, v in texts.items()}
        print(f"parallel means from {len(texts['latin'])} messages in {sorted(texts)}")
        zero = np.zeros_like(overall)
        for a in (0.5, 0.75, 1.0):
            ways.append((f"parallel means {a}", shifted(lambda s, a=a: a * pm.get(s, pm["latin"]))))
        for a in (0.5, 1.0, 1.5):
            ways.append((
                f"parallel offsets {a}",
                shifted(lambda s, a=a: a * (pm[s] - pm["latin"]) if s in pm else zero),
            ))

    groups = sorted({group for it, _, _ in queries for group in keys(it)})
    print("| way | " + " | ".join(f"{g} (n {sum(g in keys(it) for it, _, _ in queries)})" for g in groups) + " |")
    print("|---|" + "---|" * len(groups))
    for name, score in ways:
        tally = collections.defaultdict(lambda: [0, 0, 0])
        for it, q, s in queries:
            best = {}
            for session, sim in zip(sessions, score(q, s)):
                if sim > best.get(session, -9.0):
                    best[session] = sim
            ranked = sorted(best, key=lambda x: -best[x])
            rank = next((i for i, x in enumerate(ranked) if x in it["sessions"]), 99)
            for g in keys(it):
                tally[g][0] += 1
                tally[g][1] += rank < 1
                tally[g][2] += rank < 5
        print(f"| {name} | " + " | ".join(
            f"{tally[g][1] / tally[g][0]:.3f} / {tally[g][2] / tally[g][0]:.3f}" for g in groups) + " |")


def keys(item: dict) -> list:
    """The groups a query counts in: its set's language tag and its kind."""
    lang = item.get("lang", "en")
    if item.get("id", "").startswith("r"):
        return ["English set", f"English set: {item['kind']}"] if item["kind"] == "paraphrase" else ["English set"]
    if item["kind"] == "cross":
        return ["languages set", f"cross ({lang} query)", "cross, all"]
    return ["languages set", item["kind"]]


if __name__ == "__main__":
    main()
