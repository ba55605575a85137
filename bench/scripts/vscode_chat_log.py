#!/usr/bin/env python3
"""Writes a generated VS Code user folder of chat sessions for measuring the
TOML reader's change-log source (`kind = "json-log"`).

usage: vscode_chat_log.py OUT_DIR [--sessions N] [--requests M] [--seed S]

OUT_DIR gets `User/workspaceStorage/<id>/chatSessions/<session>.jsonl` (and
the workspace's `workspace.json`), as VS Code 1.109 and later write them: a
first line holding the session with the first half of its M requests (as a
log holds after VS Code compacts it), then, for each further request, a push
of the request with an empty response, pushes of its response in five parts
as they stream, and a set of its model state: as many lines as VS Code
writes before it compacts again (at most 1,024). Each response is 60 to 300
words of markdown. Python standard library only.
"""
import argparse
import json
import os
import random

WORDS = ("tenant predicate join query index billing invoice ledger report customer order "
         "migration schema deploy cache retry timeout lock").split()


def words(rng, lo, hi):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi)))


def request(rng, i, t):
    return {
        "requestId": f"request_{i}",
        "timestamp": t,
        "message": {"text": words(rng, 5, 30), "parts": []},
        "variableData": {"variables": []},
        "response": [],
        "modelId": "copilot/gpt-4o",
    }


def parts(rng):
    text = words(rng, 60, 300).split(" ")
    n = len(text) // 5 + 1
    return [{"value": " ".join(text[k:k + n]) + " ", "supportThemeIcons": False}
            for k in range(0, len(text), n)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--sessions", type=int, default=100)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    t0 = 1_767_225_600_000
    lines_total = 0
    for s in range(a.sessions):
        ws = os.path.join(a.out, "User", "workspaceStorage", f"ws{s:04d}")
        os.makedirs(os.path.join(ws, "chatSessions"), exist_ok=True)
        with open(os.path.join(ws, "workspace.json"), "w") as f:
            json.dump({"folder": f"file:///work/project-{s % 20}"}, f)
        t = t0 + s * 3_600_000
        first = a.requests // 2
        done = []
        for i in range(first):
            r = request(rng, i, t + i * 60_000)
            r["response"] = parts(rng)
            r["modelState"] = {"value": 1, "completedAt": t + i * 60_000 + 9_000}
            done.append(r)
        doc = {"version": 3, "creationDate": t, "initialLocation": "panel",
               "responderUsername": "GitHub Copilot", "sessionId": f"session-{s:04d}",
               "customTitle": words(rng, 3, 6), "requests": done}
        lines = [{"kind": 0, "v": doc}]
        for i in range(first, a.requests):
            at = t + i * 60_000
            lines.append({"kind": 2, "k": ["requests"], "v": [request(rng, i, at)]})
            for p in parts(rng):
                lines.append({"kind": 2, "k": ["requests", i, "response"], "v": [p]})
            lines.append({"kind": 1, "k": ["requests", i, "modelState"],
                          "v": {"value": 1, "completedAt": at + 9_000}})
        lines_total += len(lines)
        path = os.path.join(ws, "chatSessions", f"session-{s:04d}.jsonl")
        with open(path, "w") as f:
            f.write("\n".join(json.dumps(l, separators=(",", ":")) for l in lines) + "\n")
    print(f"{a.sessions} sessions, {a.sessions * a.requests} requests, {lines_total} log lines")


if __name__ == "__main__":
    main()
