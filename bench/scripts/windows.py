#!/usr/bin/env python3
"""Windows per message as deja's embedder makes them, and how many a cap keeps.

Counts each message's model tokens with the installed tokenizer and splits as
`crates/embed/src/window.rs` does (windows of max_tokens - 2 * context_tokens,
less the two special tokens, overlapping by overlap_tokens). Reads the
messages of an index database (`--store index.sqlite`) or the turns of
LoCoMo (`--locomo locomo10.json`, with the photo captions the benchmark's
conversion adds). Needs the `tokenizers` package from PyPI.

    python3 bench/scripts/windows.py --tokenizer ~/.local/share/deja/models/all-MiniLM-L6-v2/tokenizer.json \
        --store /tmp/q0/.local/share/deja/index.sqlite --caps 2,4,8
"""

import argparse
import json
import math
import sqlite3
from collections import Counter

from tokenizers import Tokenizer


def texts_of_store(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    for (text,) in db.execute("SELECT text FROM messages"):
        if text and text.strip():
            yield text


def texts_of_locomo(path):
    for conversation in json.load(open(path)):
        for turns in conversation["conversation"].values():
            if not isinstance(turns, list):
                continue
            for turn in turns:
                if isinstance(turn, dict) and "text" in turn:
                    text = turn["text"]
                    if turn.get("blip_caption"):
                        text += f" [shares a photo: {turn['blip_caption']}]"
                    yield text


def windows(tokens, budget, overlap):
    if tokens <= budget:
        return 1
    step = max(budget - overlap, 1)
    return 1 + math.ceil((tokens - budget) / step)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--store")
    ap.add_argument("--locomo")
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--overlap-tokens", type=int, default=32)
    ap.add_argument("--context-tokens", type=int, default=48)
    ap.add_argument("--caps", default="2,4,8")
    a = ap.parse_args()
    tok = Tokenizer.from_file(a.tokenizer)
    tok.no_truncation()
    tok.no_padding()
    texts = texts_of_store(a.store) if a.store else texts_of_locomo(a.locomo)
    budget = a.max_tokens - 2 * a.context_tokens - 2
    counts = [
        windows(len(tok.encode(t.strip(), add_special_tokens=False).ids), budget, a.overlap_tokens)
        for t in texts
    ]
    total = sum(counts)
    print(f"messages {len(counts)}  windows {total}  per message {total / len(counts):.2f}  most {max(counts)}")
    hist = Counter(min(c, 17) for c in counts)
    print("windows: messages  " + "  ".join(
        f"{k if k < 17 else '17+'}: {hist[k]}" for k in sorted(hist)))
    for cap in [int(c) for c in a.caps.split(",") if c]:
        kept = sum(min(c, cap) for c in counts)
        capped = sum(1 for c in counts if c > cap)
        print(f"cap {cap}: windows {kept} ({kept / len(counts):.2f} per message, "
              f"{kept / total:.1%} of all), messages cut {capped}")


if __name__ == "__main__":
    main()
