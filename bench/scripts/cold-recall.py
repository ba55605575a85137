#!/usr/bin/env python3
"""Cold `deja recall --project <conversation>` processes on a LoCoMo home that
`deja-bench quality --set locomo --home HOME` made: p50 and p95 wall time.

usage: bench/scripts/cold-recall.py HOME [N] [--deja PATH]
  N       questions asked, the first N of HOME/questions.jsonl (default 40)
  --deja  the binary (default target/release/deja)
"""

import argparse
import json
import os
import subprocess
import time

ap = argparse.ArgumentParser()
ap.add_argument("home")
ap.add_argument("n", nargs="?", type=int, default=40)
ap.add_argument("--deja", default="target/release/deja")
args = ap.parse_args()
with open(os.path.join(args.home, "questions.jsonl"), encoding="utf-8") as f:
    questions = [json.loads(line) for line in f][: args.n]
env = dict(os.environ, HOME=args.home, NO_COLOR="1")
times = []
for q in questions:
    started = time.perf_counter()
    subprocess.run([args.deja, "recall", q["question"], "--project", q["project"], "-n", "10"],
                   env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    times.append((time.perf_counter() - started) * 1000)
times.sort()
print(f"{args.home}: {len(times)} cold recalls, p50 {times[len(times) // 2]:.0f} ms, "
      f"p95 {times[min(len(times) - 1, int(len(times) * 0.95))]:.0f} ms")
