#!/usr/bin/env python3
"""Compute the per-script mean vectors that deja takes out of a multilingual
model's vectors, from the same sentences written in every language.

A multilingual model places every text partly by its language: a Chinese
question lands near Chinese messages whatever they say, and far from the
English session that answers it. deja subtracts from each vector the mean
vector of its text's script (Latin, Cyrillic, Chinese, Japanese, Korean),
then normalizes it again, for stored texts and queries alike
(crates/embed/src/centering.rs). The means come from no history: they are
the means of Django's own interface messages, the same 810 sentences
translated into Chinese, Japanese, Korean and Russian, read from Django's
wheel on PyPI (pinned by sha256), each embedded as a stored text is
("passage: " first), one text per call, in int8 arithmetic made exact as
deja's sessions make it.

The output is scripts/e5-script-means.json, which scripts/fetch-model
installs beside the model (pinned by hash, so a change of means is a change
of model id and deja re-embeds). Floating-point sums may differ in their last
bits between processors, so the committed file is what is installed, and
--check recomputes the means and compares them with it.

usage: script-means.py MODEL_DIR DJANGO_WHEEL OUT.json
       script-means.py --check MODEL_DIR DJANGO_WHEEL FILE.json
  MODEL_DIR     the installed model folder (model.onnx, tokenizer.json)
  DJANGO_WHEEL  `pip download django==5.2.8 --no-deps` (sha256 below)

numpy, onnxruntime and tokenizers are needed (PyPI).
"""

import gettext
import hashlib
import io
import json
import os
import sys
import zipfile

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

DJANGO = "django==5.2.8"
DJANGO_SHA256 = "37e687f7bd73ddf043e2b6b97cfe02fcbb11f2dbb3adccc6a2b18c6daa054d7f"

# deja's script names (crates/embed/src/centering.rs) and Django's locales.
LOCALES = {"zh": "zh_Hans", "ja": "ja", "ko": "ko", "cyrillic": "ru"}

PREFIX = "passage: "
MAX_TOKENS = 256  # deja's default window
TOLERANCE = 1e-4  # --check: the largest difference of one value accepted


def translations(wheel: str) -> dict:
    """Every message of Django's catalogs translated into all of LOCALES'
    languages: {script: [text, ...]}, the English originals under "latin",
    in the same order for every script."""
    z = zipfile.ZipFile(wheel)
    catalogs = {}
    for key, locale in LOCALES.items():
        merged = {}
        for name in sorted(z.namelist()):
            if name.endswith(".mo") and f"/locale/{locale}/LC_MESSAGES/" in name:
                catalog = gettext.GNUTranslations(io.BytesIO(z.read(name)))._catalog
                merged.update({k: v for k, v in catalog.items() if isinstance(k, str) and k and v})
        catalogs[key] = merged
    common = sorted(set.intersection(*(set(c) for c in catalogs.values())))
    out = {"latin": [m.split("\x04")[-1] for m in common]}
    for key, catalog in catalogs.items():
        out[key] = [catalog[m] for m in common]
    return out


def means(model_dir: str, wheel: str) -> dict:
    digest = hashlib.sha256(open(wheel, "rb").read()).hexdigest()
    if digest != DJANGO_SHA256:
        sys.exit(f"error: {wheel}: sha256 {digest}, expected {DJANGO_SHA256} ({DJANGO})")
    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.enable_truncation(MAX_TOKENS)
    so = ort.SessionOptions()
    so.add_session_config_entry("session.x64quantprecision", "1")
    so.intra_op_num_threads = 1
    onnx = ort.InferenceSession(os.path.join(model_dir, "model.onnx"), so)
    inputs = {i.name for i in onnx.get_inputs()}

    def embed(text: str) -> np.ndarray:
        enc = tok.encode(PREFIX + text)
        ids = np.array([enc.ids], dtype=np.int64)
        mask = np.array([enc.attention_mask], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        out = onnx.run(None, feed)[0][0].astype(np.float64)
        v = (out * mask[0][:, None]).sum(0) / mask.sum()
        return v / np.linalg.norm(v)

    texts = translations(wheel)
    result = {}
    for key in ["latin", "cyrillic", "zh", "ja", "ko"]:
        result[key] = np.stack([embed(t) for t in texts[key]]).mean(0)
    return {"count": len(texts["latin"]), "means": result}


def document(m: dict) -> dict:
    return {
        "about": (
            "Per-script mean vectors of multilingual-e5-small-int8, which deja subtracts "
            "from every vector of a text in that script before normalizing it again. "
            f"Made by scripts/script-means.py from the {m['count']} interface messages of "
            f"{DJANGO} (sha256 {DJANGO_SHA256}) that are translated into every language below, "
            "each embedded as a stored text."
        ),
        "messages": m["count"],
        "means": {k: [float(f"{x:.7g}") for x in v] for k, v in m["means"].items()},
    }


def main() -> None:
    args = sys.argv[1:]
    check = args[:1] == ["--check"]
    if check:
        args = args[1:]
    if len(args) != 3:
        sys.exit(__doc__)
    model_dir, wheel, path = args
    m = means(model_dir, wheel)
    if not check:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(document(m), f, indent=None, separators=(",", ":"))
            f.write("\n")
        print(f"wrote {path}: means of {m['count']} messages in {', '.join(m['means'])}")
        return
    with open(path, encoding="utf-8") as f:
        committed = json.load(f)["means"]
    worst = 0.0
    for key, v in m["means"].items():
        if key not in committed or len(committed[key]) != len(v):
            sys.exit(f"error: {path}: no mean of {len(v)} values for `{key}`")
        worst = max(worst, float(np.abs(np.array(committed[key]) - v).max()))
    print(f"{path}: recomputed from {m['count']} messages; largest difference {worst:.2e}")
    if worst > TOLERANCE:
        sys.exit(f"error: {path} differs from the recomputed means by {worst:.2e} (> {TOLERANCE})")


if __name__ == "__main__":
    main()
