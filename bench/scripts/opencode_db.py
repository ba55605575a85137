#!/usr/bin/env python3
"""Writes a generated OpenCode database for measuring the TOML reader.

usage: opencode_db.py OUT.db [--sessions N] [--messages M] [--seed S]

The tables and indexes are OpenCode 1.18.33's own
(fixtures/golden/opencode/schema.sql); each session has M messages (user and
assistant in turn, 20 to 200 words of text each) and every assistant message
a bash tool part with 500 bytes of output, as OpenCode stores them. The file
is in WAL mode and checkpointed. Python standard library only.
"""
import argparse
import json
import os
import random
import sqlite3

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORDS = ("tenant predicate join query index billing invoice ledger report customer order "
         "migration schema deploy cache retry timeout lock").split()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--sessions", type=int, default=500)
    ap.add_argument("--messages", type=int, default=100)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    if os.path.exists(a.out):
        os.remove(a.out)
    c = sqlite3.connect(a.out)
    with open(os.path.join(ROOT, "fixtures/golden/opencode/schema.sql")) as f:
        c.executescript(f.read())
    c.execute("PRAGMA journal_mode=WAL")
    t0 = 1790000000000
    c.execute("INSERT INTO project VALUES ('p','/work/app','git',NULL,NULL,NULL,NULL,?,?,NULL,'[]',NULL)",
              (t0, t0))
    n = 0
    for s in range(a.sessions):
        sid = f"ses_{s:06d}"
        ts = t0 + s * 3_600_000
        c.execute("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, "
                  "time_updated) VALUES (?,?,?,?,?,?,?,?)",
                  (sid, "p", "x", "/work/app", f"Session {s}", "1.18.33", ts, ts + a.messages * 1000))
        for m in range(a.messages):
            n += 1
            role = "user" if m % 2 == 0 else "assistant"
            mid = f"msg_{n:09d}"
            at = ts + m * 1000
            c.execute("INSERT INTO message VALUES (?,?,?,?,?)",
                      (mid, sid, at, at, json.dumps({"role": role, "time": {"created": at}})))
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 200)))
            c.execute("INSERT INTO part VALUES (?,?,?,?,?,?)",
                      (f"prt_{n:09d}a", mid, sid, at, at, json.dumps({"type": "text", "text": text})))
            if role == "assistant":
                tool = {"type": "tool", "tool": "bash", "callID": "c",
                        "state": {"status": "completed", "input": {"command": "ls " + rng.choice(WORDS)},
                                  "output": "x" * 500, "title": "t", "metadata": {},
                                  "time": {"start": at, "end": at}}}
                c.execute("INSERT INTO part VALUES (?,?,?,?,?,?)",
                          (f"prt_{n:09d}b", mid, sid, at, at, json.dumps(tool)))
    c.commit()
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.close()
    print(f"{a.out}: {a.sessions} sessions, {n} messages, {os.path.getsize(a.out)} bytes")


if __name__ == "__main__":
    main()
