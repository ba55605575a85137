#!/usr/bin/env python3
"""Runs a full-screen terminal program in a pseudo-terminal and types into it.

usage: terminal.py --steps STEPS.json --log RAW.log [--rows 40] [--cols 160]
                   [--timeout 90] -- PROGRAM [ARG...]

For end-to-end tests of harnesses that are terminal user interfaces and have
no headless mode: the program gets a terminal of ROWS x COLS of its own
(TERM=xterm-256color unless TERM is set) and a session of its own, and the
steps are played in order. Python 3.11 standard library only.

Steps (a JSON list):
  {"screen": "text"}                   wait until the program has drawn text
                                       (its output with the terminal's control
                                       sequences and all white space taken out
                                       holds it without its white space)
  {"file": "PATH", "contains": "text"} wait until the file PATH holds text
                                       (UTF-8), as a program's database does
                                       once it has committed what it shows
  {"type": "text"}                     type text, a character at a time
  {"keys": "\\n"}                      send bytes as they are (control keys:
                                       "\\n" is ctrl+j, "\\u0003" ctrl+c)
  {"exit": true}                       wait until the program exits

Every wait fails after TIMEOUT seconds (all steps together). When the steps
are done the program is given until the timeout to exit, then killed.

Prints the program's output with the control sequences taken out (stdout),
writes it as it came to RAW.log, and says on stderr which step failed. Exits
with the program's status, or 124 when a step or the exit timed out.
"""

import argparse
import fcntl
import json
import os
import re
import select
import signal
import struct
import sys
import termios
import time

# CSI, OSC, DCS/APC/PM strings and two-byte escapes.
CONTROL = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"
    r"|\x1b[P_^][^\x1b]*\x1b\\"
    r"|\x1b[@-Z\\-_]"
    r"|\x1b[()][0-9A-Za-z]"
)


def plain(raw: bytes) -> str:
    return CONTROL.sub("", raw.decode("utf-8", errors="replace"))


def squeezed(text: str) -> str:
    """Text without its white space. A screen is matched this way because a
    program that redraws only the cells that changed (prompt_toolkit does)
    moves the cursor over a blank cell that was blank before instead of
    writing a space, so the drawn words run together once the control
    sequences are taken out, or not, depending on what the screen held."""
    return "".join(text.split())


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--rows", type=int, default=40)
    parser.add_argument("--cols", type=int, default=160)
    parser.add_argument("--timeout", type=float, default=90.0)
    parser.add_argument("program", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    program = args.program[1:] if args.program[:1] == ["--"] else args.program
    if not program:
        parser.error("no program to run")
    with open(args.steps, encoding="utf-8") as f:
        steps = json.load(f)

    env = dict(os.environ)
    env.setdefault("TERM", "xterm-256color")
    pid, fd = os.forkpty()
    if pid == 0:
        try:
            os.execvpe(program[0], program, env)
        finally:
            os._exit(127)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", args.rows, args.cols, 0, 0))
    os.kill(pid, signal.SIGWINCH)

    raw = bytearray()
    log = open(args.log, "wb")
    deadline = time.monotonic() + args.timeout
    status = None

    def pump(wait: float) -> None:
        """Reads what the program wrote within `wait` seconds; notes its exit."""
        nonlocal status
        ready, _, _ = select.select([fd], [], [], wait)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            if chunk:
                raw.extend(chunk)
                log.write(chunk)
                log.flush()
        if status is None:
            done, code = os.waitpid(pid, os.WNOHANG)
            if done:
                status = os.waitstatus_to_exitcode(code)

    def finish(code: int) -> int:
        if status is None:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            os.waitpid(pid, 0)
        log.close()
        sys.stdout.write(plain(bytes(raw)))
        sys.stdout.flush()
        return code

    for number, step in enumerate(steps, 1):
        if "type" in step or "keys" in step:
            if "type" in step:
                for ch in step["type"]:
                    os.write(fd, ch.encode("utf-8"))
                    pump(0.02)
            else:
                os.write(fd, step["keys"].encode("utf-8"))
                pump(0.05)
            continue
        if "screen" in step:
            wanted_text = squeezed(step["screen"])
            met = lambda: wanted_text in squeezed(plain(bytes(raw)))
        elif "file" in step:
            wanted = step["contains"].encode("utf-8")

            def met() -> bool:
                try:
                    with open(step["file"], "rb") as f:
                        return wanted in f.read()
                except OSError:
                    return False

        elif step.get("exit"):
            met = lambda: status is not None
        else:
            print(f"step {number}: unknown step {step!r}", file=sys.stderr)
            return finish(2)
        while not met():
            if time.monotonic() > deadline:
                print(f"step {number} timed out: {step!r}", file=sys.stderr)
                return finish(124)
            if status is not None and not step.get("exit"):
                print(f"step {number}: the program exited ({status}) first: {step!r}", file=sys.stderr)
                return finish(status or 1)
            pump(0.1)

    while status is None:
        if time.monotonic() > deadline:
            print("the program did not exit", file=sys.stderr)
            return finish(124)
        pump(0.1)
    # What it wrote last.
    while select.select([fd], [], [], 0)[0]:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        raw.extend(chunk)
        log.write(chunk)
    return finish(status)


if __name__ == "__main__":
    sys.exit(main())
