#!/usr/bin/env python3
"""Replays recall's hybrid ranking offline on the evidence `deja-bench
signals` writes, and measures two learned fusions against it: a linear
re-scoring of each candidate session trained with a softmax loss, and a
per-query choice between hybrid, words alone and meaning alone by a small
decision tree. Trained on the tuning halves (the real set's `half`, LoCoMo's
even-numbered conversations in sorted order), reported on the rest.

usage: fusion_replay.py REAL.jsonl REAL_STORE LOCOMO.jsonl LOCOMO_STORE

REAL_STORE and LOCOMO_STORE are the `index.sqlite` files of the homes the
signals were gathered from (they map deja's session ids to the sets' ids).
The replay mirrors `deja_recall::fuse` with its default weights; numpy,
scipy and scikit-learn are needed for the learned fusions.
"""

import json
import math
import sqlite3
import sys
from collections import defaultdict

import numpy as np
from scipy.optimize import minimize
from sklearn.tree import DecisionTreeClassifier

# Recall's defaults (config/src/reference.rs): semantic and lexical weights,
# session words and semantic evidence, its top-k, date and phrase weights,
# the lexical power, the similarity floor and the window discount.
DEF = dict(ws=0.5, wl=1.0, sl=0.4, ss=0.25, stop=3, dw=1.5, pw=0.5, p=1.5, floor=0.25, disc=0.025)


def power(v, p):
    return max(v, 0.0) ** p if p != 1 else v


def rank(sig, wl=DEF["wl"], ws=DEF["ws"], t=DEF):
    lex = {i: power(v, t["p"]) for i, v in sig["lexical"]}
    win = dict(sig["windows"])
    sem = {i: s - t["disc"] * math.sqrt(2 * math.log(max(win.get(i, 1), 1))) for i, s in sig["semantic"]}
    raw = dict(sig["semantic"])
    sc = {i: ws * sem.get(i, 0.0) + wl * lex.get(i, 0.0) for i in set(lex) | set(sem)}
    so = dict(sig["session_of"])
    extra, per = defaultdict(float), defaultdict(list)
    for i, v in sem.items():
        if i in so:
            per[so[i]].append(v)
    for s, v in per.items():
        v.sort(reverse=True)
        extra[s] += t["ss"] * sum(v[: t["stop"]]) / t["stop"]
    for s, v in sig["session_lexical"]:
        extra[s] += t["sl"] * power(v, t["p"])
    for s, v in sig["phrases"]:
        extra[s] += t["pw"] * v
    for s, v in sig["date_affinity"]:
        extra[s] += t["dw"] * v
    for i in sc:
        if i in so:
            sc[i] += extra.get(so[i], 0.0)
    out = sorted(sc.items(), key=lambda x: (-x[1], x[0]))
    return [(i, v) for i, v in out if i in lex or raw.get(i, 0) >= t["floor"]]


def sessions_in_order(ranked, sig, names):
    so, seen = dict(sig["session_of"]), []
    for i, _ in ranked:
        s = names.get(so.get(i))
        if s is not None and s not in seen:
            seen.append(s)
    return seen


def load(jsonl, store):
    names = {r[0]: r[1] for r in sqlite3.connect(store).execute("select id, native_id from sessions")}
    rows = [json.loads(line) for line in open(jsonl)]
    convs = sorted({r.get("project", "") for r in rows})
    out = []
    for r in rows:
        if r.get("unanswerable"):
            continue
        half = r.get("half") or ("tune" if convs.index(r["project"]) % 2 == 0 else "report")
        out.append((r, half, names))
    return out


def candidates(r, names, t=DEF):
    """Each candidate session's features; column 0 is today's fused score."""
    sig = r["signals"]
    so = dict(sig["session_of"])
    lex = {i: power(v, t["p"]) for i, v in sig["lexical"]}
    win = dict(sig["windows"])
    sem = {i: s - t["disc"] * math.sqrt(2 * math.log(max(win.get(i, 1), 1))) for i, s in sig["semantic"]}
    raw = dict(sig["semantic"])
    semv = sorted(raw.values(), reverse=True)
    s1 = semv[0] if semv else 0
    s10 = semv[min(9, len(semv) - 1)] if semv else 0
    sb = semv[min(99, len(semv) - 1)] if semv else 0
    l1 = max(lex.values()) if lex else 1e-9
    per = defaultdict(lambda: dict(L=0.0, S=None, sems=[], SL=0.0, P=0.0, D=0.0, M=-9.0))
    for i in set(lex) | set(sem):
        s = so.get(i)
        if s is None or (i not in lex and raw.get(i, 0) < t["floor"]):
            continue
        d = per[s]
        d["L"] = max(d["L"], lex.get(i, 0))
        if i in sem:
            d["S"] = sem[i] if d["S"] is None else max(d["S"], sem[i])
            d["sems"].append(sem[i])
        d["M"] = max(d["M"], t["ws"] * sem.get(i, 0) + t["wl"] * lex.get(i, 0))
    for key, field in (("session_lexical", "SL"), ("phrases", "P"), ("date_affinity", "D")):
        for s, v in sig[key]:
            if s in per:
                per[s][field] = power(v, t["p"]) if field == "SL" else v
    ids, x = [], []
    for s, d in per.items():
        top = sorted(d["sems"], reverse=True)[:3]
        s3 = sum(top) / 3 if top else 0
        best = d["S"] if d["S"] is not None else sb
        fused = d["M"] + t["ss"] * s3 + t["sl"] * d["SL"] + t["pw"] * d["P"] + t["dw"] * d["D"]
        x.append([fused, d["L"], best - sb, s3, d["SL"], d["P"], d["D"],
                  (best - sb) * (s1 - sb), d["L"] / l1, d["L"] * (s1 - s10), best - s1])
        ids.append(names.get(s))
    return ids, np.array(x)


NF = 11


def hits(data, w, keep):
    n = h1 = h5 = 0
    for r, half, ids, x, y in data:
        if not keep(r, half):
            continue
        n += 1
        if len(x) == 0:
            continue
        order = np.argsort(-(x @ w), kind="stable")
        pos = [k for k, j in enumerate(order) if j in y]
        if pos:
            h1 += pos[0] == 0
            h5 += pos[0] < 5
    return f"{h1 / max(n, 1):.3f} / {h5 / max(n, 1):.3f} ({n})"


def fit(train, mask, l2):
    def loss(wm):
        w = np.zeros(NF)
        w[0] = 1
        w[mask] = wm
        total, g = 0.0, np.zeros(NF)
        for _, _, _, x, y in train:
            if not y or len(x) < 2:
                continue
            sc = x @ w * 8
            sc -= sc.max()
            p = np.exp(sc)
            p /= p.sum()
            py = p[y].sum()
            total -= np.log(py + 1e-12)
            q = np.zeros(len(p))
            q[y] = p[y] / max(py, 1e-12)
            g -= 8 * ((q - p) @ x)
        total += l2 * np.sum(wm**2) * len(train)
        g[mask] += 2 * l2 * wm * len(train)
        return total, g[mask]

    w = np.zeros(NF)
    w[0] = 1
    w[mask] = minimize(loss, np.zeros(len(mask)), jac=True, method="L-BFGS-B").x
    return w


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    sets = {}
    for name, jsonl, store in (("real", sys.argv[1], sys.argv[2]), ("locomo", sys.argv[3], sys.argv[4])):
        data = []
        for r, half, names in load(jsonl, store):
            ids, x = candidates(r, names)
            data.append((r, half, ids, x, [i for i, s in enumerate(ids) if s in r["sessions"]]))
        sets[name] = data

    def report(label, w):
        cells = []
        for name in ("real", "locomo"):
            for half in ("tune", "report"):
                cells.append(f"{name} {half} {hits(sets[name], w, lambda r, h, half=half: h == half)}")
        for half in ("tune", "report"):
            keep = lambda r, h, half=half: h == half and r.get("kind") == "paraphrase"
            cells.append(f"paraphrases {half} {hits(sets['real'], w, keep)}")
        print(f"{label}\n  " + "\n  ".join(cells))

    base = np.zeros(NF)
    base[0] = 1
    report("today's fusion (hit@1 / hit@5)", base)
    train = [d for data in sets.values() for d in data if d[1] == "tune"]
    for mask in ([1, 2], [2, 7], [1, 2, 7, 8], [1, 2, 3, 4, 5, 7, 8, 9, 10]):
        for l2 in (0.001, 0.01):
            w = fit(train, mask, l2)
            report(f"linear re-scoring, features {mask}, L2 {l2}: weights {np.round(w[mask], 3).tolist()}", w)

    # Per-query choice between the three rankings.
    def choice_rows(name):
        out = []
        for r, half, names in load(*{"real": sys.argv[1:3], "locomo": sys.argv[3:5]}[name]):
            sig = r["signals"]
            hy = sessions_in_order(rank(sig), sig, names)
            lx = sessions_in_order(rank(sig, wl=1, ws=0), sig, names)
            se = sessions_in_order(rank(sig, wl=0, ws=1), sig, names)
            semv = sorted((v for _, v in sig["semantic"]), reverse=True) + [0, 0]
            lexv = sorted((v for _, v in sig["lexical"]), reverse=True) + [0, 0]
            f = [semv[0] - semv[1], semv[0] - semv[min(99, len(semv) - 3)], lexv[0], lexv[0] - lexv[1],
                 len(sig["lexical"]), len(r["query"].split()), float(lx[:1] == se[:1])]
            ok = [bool(v) and v[0] in r["sessions"] for v in (hy, lx, se)]
            out.append((half, f, ok))
        return out

    rows = {name: choice_rows(name) for name in sets}
    for name, data in rows.items():
        for half in ("tune", "report"):
            sel = [d for d in data if d[0] == half]
            oracle = sum(any(d[2]) for d in sel) / len(sel)
            print(f"{name} {half}: hybrid {sum(d[2][0] for d in sel) / len(sel):.3f}, oracle of the three {oracle:.3f}")
    for alt, label in ((2, "meaning alone"), (1, "words alone")):
        train = [d for data in rows.values() for d in data if d[0] == "tune" and d[2][0] != d[2][alt]]
        for depth in (1, 2, 3):
            tree = DecisionTreeClassifier(max_depth=depth, min_samples_leaf=20, random_state=0)
            tree.fit(np.array([d[1] for d in train]), np.array([d[2][alt] for d in train]))
            cells = []
            for name, data in rows.items():
                for half in ("tune", "report"):
                    sel = [d for d in data if d[0] == half]
                    right = sum(d[2][alt] if tree.predict([d[1]])[0] else d[2][0] for d in sel)
                    cells.append(f"{name} {half} {right / len(sel):.3f}")
            print(f"choose {label} when a depth-{depth} tree says so (hit@1): " + ", ".join(cells))


if __name__ == "__main__":
    main()
