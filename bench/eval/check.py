#!/usr/bin/env python3
"""Validate bench/eval/real.jsonl against an index of the real-transcript corpus.

Usage:
    DEJA_HOME=... DEJA_CONFIG=... python3 bench/eval/check.py path/to/deja [path/to/real.jsonl]

The index named by DEJA_HOME / DEJA_CONFIG must already hold the corpus
(`deja index` run with every corpus root configured).  The script checks that

  * every line parses and has the expected fields and values;
  * ids run r001, r002, ... in file order;
  * `half` alternates tune / report within each kind, in file order;
  * every session id is a native id that `deja sessions --json` reports, of
    the line's harness;
  * every turn names one of the line's sessions and a message index that
    `deja show` reports for that session;

then prints the counts by harness, kind and half.  Exit status 0 when all is
well, 1 when a check failed.  Standard library only.
"""

import collections
import json
import os
import subprocess
import sys

KINDS = ["paraphrase", "identifier", "error", "file", "decision", "vague"]
HARNESSES = ["aider", "gemini", "claude", "codex", "qwen"]
HALVES = ["tune", "report"]
FIELDS = ["id", "harness", "kind", "half", "query", "sessions", "turns", "note"]


def run_json(deja, *args):
    out = subprocess.run([deja, *args], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    deja = sys.argv[1]
    path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "real.jsonl")
    if not os.environ.get("DEJA_HOME") or not os.environ.get("DEJA_CONFIG"):
        print("warning: DEJA_HOME or DEJA_CONFIG is not set; using deja's defaults", file=sys.stderr)

    sessions = run_json(deja, "sessions", "--json")["sessions"]
    # One native id can name several indexed sessions (e.g. Gemini's "a2a-server",
    # or a Gemini CLI helper chat that reuses its parent's session id).
    by_native = collections.defaultdict(list)
    for s in sessions:
        by_native[s["native_id"]].append(s)

    message_indexes = {}  # deja id -> set of indexes

    def indexes(deja_id):
        if deja_id not in message_indexes:
            shown = run_json(deja, "show", "--json", deja_id)
            message_indexes[deja_id] = {m["index"] for m in shown["messages"]}
        return message_indexes[deja_id]

    errors = []
    notes = []
    rows = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                errors.append(f"line {lineno}: blank line")
                continue
            try:
                rows.append((lineno, json.loads(line)))
            except json.JSONDecodeError as e:
                errors.append(f"line {lineno}: not JSON ({e})")

    seen_per_kind = collections.Counter()
    for n, (lineno, r) in enumerate(rows, 1):
        where = f"line {lineno} ({r.get('id')})"
        missing = [k for k in FIELDS if k not in r]
        if missing:
            errors.append(f"{where}: missing fields {missing}")
            continue
        extra = sorted(set(r) - set(FIELDS))
        if extra:
            errors.append(f"{where}: unexpected fields {extra}")
        if r["id"] != f"r{n:03d}":
            errors.append(f"{where}: id should be r{n:03d}")
        if r["harness"] not in HARNESSES:
            errors.append(f"{where}: unknown harness {r['harness']!r}")
        if r["kind"] not in KINDS:
            errors.append(f"{where}: unknown kind {r['kind']!r}")
        if r["half"] not in HALVES:
            errors.append(f"{where}: unknown half {r['half']!r}")
        else:
            want = HALVES[seen_per_kind[r["kind"]] % 2]
            if r["half"] != want:
                errors.append(f"{where}: half should be {want} (alternating within kind {r['kind']})")
        seen_per_kind[r["kind"]] += 1
        if not isinstance(r["query"], str) or not r["query"].strip():
            errors.append(f"{where}: empty query")
        if not r["sessions"]:
            errors.append(f"{where}: no sessions")
        if not r["turns"]:
            errors.append(f"{where}: no turns")
        if len(set(r["sessions"])) != len(r["sessions"]):
            errors.append(f"{where}: repeated session")

        for sid in r["sessions"]:
            found = by_native.get(sid)
            if not found:
                errors.append(f"{where}: session {sid!r} is not an indexed native id")
                continue
            harnesses = {s["harness"] for s in found}
            if harnesses != {r["harness"]}:
                errors.append(f"{where}: session {sid!r} belongs to {sorted(harnesses)}, not {r['harness']}")
            if len(found) > 1:
                notes.append(f"{where}: native id {sid!r} names {len(found)} indexed sessions "
                             f"({', '.join(s['id'] for s in found)})")
        answered = set()
        for turn in r["turns"]:
            if (not isinstance(turn, list) or len(turn) != 2 or not isinstance(turn[0], str)
                    or not isinstance(turn[1], int) or isinstance(turn[1], bool)):
                errors.append(f"{where}: malformed turn {turn!r}")
                continue
            sid, idx = turn
            if sid not in r["sessions"]:
                errors.append(f"{where}: turn {turn!r} names a session not in sessions")
                continue
            found = by_native.get(sid, [])
            if found and not any(idx in indexes(s["id"]) for s in found):
                errors.append(f"{where}: turn {turn!r}: no message {idx} in that session")
            answered.add(sid)
        for sid in r["sessions"]:
            if sid not in answered:
                errors.append(f"{where}: session {sid!r} has no turn")

    valid = [r for _, r in rows]
    print(f"{len(valid)} queries, {len({s for r in valid for s in r['sessions']})} distinct sessions, "
          f"{sum(len(r['sessions']) > 1 for r in valid)} with more than one accepted session")
    print()
    by_hk = collections.Counter((r["harness"], r["kind"]) for r in valid)
    by_hh = collections.Counter((r["harness"], r["half"]) for r in valid)
    by_kh = collections.Counter((r["kind"], r["half"]) for r in valid)
    width = max(len(k) for k in KINDS)
    header = f"{'':8}" + "".join(f"{k:>{width + 1}}" for k in KINDS) + f"{'total':>7}{'tune':>6}{'report':>7}"
    print(header)
    for h in HARNESSES:
        cells = "".join(f"{by_hk[(h, k)]:>{width + 1}}" for k in KINDS)
        total = sum(by_hk[(h, k)] for k in KINDS)
        print(f"{h:8}{cells}{total:>7}{by_hh[(h, 'tune')]:>6}{by_hh[(h, 'report')]:>7}")
    totals = "".join(f"{sum(by_hk[(h, k)] for h in HARNESSES):>{width + 1}}" for k in KINDS)
    print(f"{'total':8}{totals}{len(valid):>7}{sum(by_hh[(h, 'tune')] for h in HARNESSES):>6}"
          f"{sum(by_hh[(h, 'report')] for h in HARNESSES):>7}")
    for half in HALVES:
        cells = "".join(f"{by_kh[(k, half)]:>{width + 1}}" for k in KINDS)
        print(f"{half:8}{cells}")
    missing_cells = [f"{h}/{half}" for h in HARNESSES for half in HALVES if not by_hh[(h, half)]]
    missing_cells += [f"{k}/{half}" for k in KINDS for half in HALVES if not by_kh[(k, half)]]
    if missing_cells:
        errors.append("empty harness or kind in a half: " + ", ".join(missing_cells))

    if notes:
        print()
        for line in notes:
            print("note:", line)
    if errors:
        print()
        for line in errors:
            print("error:", line)
        print(f"\n{len(errors)} problem(s)")
        return 1
    print("\nall checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
