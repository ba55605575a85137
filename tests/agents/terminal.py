#!/usr/bin/env python3
"""Runs a full-screen terminal program in a pseudo-terminal and types into it.

usage: terminal.py --steps STEPS.json --log RAW.log [--rows 40] [--cols 160]
                   [--timeout 90] -- PROGRAM [ARG...]

For end-to-end tests of harnesses that are terminal user interfaces and have
no headless mode: the program gets a terminal of ROWS x COLS of its own
(TERM=xterm-256color unless TERM is set) and a session of its own, and the
steps are played in order. Python 3.11 standard library only.

Steps (a JSON list):
  {"screen": "text"}                   wait until the program has drawn text:
                                       the screen it has drawn (kept by a small
                                       terminal emulator, as a terminal shows it)
                                       or its output with the control sequences
                                       taken out holds the text, all white space
                                       left out of both
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
import codecs
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
import unicodedata

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


class Screen:
    """The cells a terminal of ROWS x COLS would show, main and alternate
    screen, for the control sequences full-screen programs use (cursor
    movement and addressing, erasing, scrolling, insertion and deletion).
    Programs that redraw only the cells that changed (prompt_toolkit does)
    leave in their output only the changed letters of a word drawn over
    another, so what they show is read here, not from the stream."""

    SEQUENCE = re.compile(
        r"\x1b\[([0-?]*)([ -/]*)([@-~])"
        r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"
        r"|\x1b[P_^][^\x1b]*\x1b\\"
        r"|\x1b[()][0-9A-Za-z]"
        r"|\x1b([@-Z\\-_0-9=>c])"
        r"|([\x00-\x1a\x1c-\x1f])"
    )

    def __init__(self, rows: int, cols: int) -> None:
        self.rows, self.cols = rows, cols
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.pending = ""
        self.main = self.blank()
        self.alternate = self.blank()
        self.cells = self.main
        self.row = self.col = 0
        self.saved = (0, 0)
        self.top, self.bottom = 0, rows - 1
        self.wrap_next = False

    def blank(self) -> list:
        return [[" "] * self.cols for _ in range(self.rows)]

    def text(self) -> str:
        return "\n".join("".join(line) for line in self.cells)

    def feed(self, data: bytes) -> None:
        text = self.pending + self.decoder.decode(data)
        self.pending = ""
        at = 0
        for m in self.SEQUENCE.finditer(text):
            self.put(text[at : m.start()])
            at = m.end()
            if m.group(3) is not None:
                self.csi(m.group(1), m.group(2), m.group(3))
            elif m.group(4) is not None:
                self.escape(m.group(4))
            elif m.group(5) is not None:
                self.control(m.group(5))
        rest = text[at:]
        cut = rest.find("\x1b")
        if cut >= 0 and len(rest) - cut < 256:
            # An unfinished sequence: kept for the next chunk.
            self.pending = rest[cut:]
            rest = rest[:cut]
        self.put(rest.replace("\x1b", ""))

    def put(self, text: str) -> None:
        for ch in text:
            if ch < " " or ch == "\x7f" or unicodedata.combining(ch) or ch in "\u200b\u200d\ufe0f":
                continue
            width = 2 if unicodedata.east_asian_width(ch) in "WF" else 1
            if self.wrap_next or self.col + width > self.cols:
                self.col = 0
                self.line_feed()
                self.wrap_next = False
            self.cells[self.row][self.col] = ch
            if width == 2 and self.col + 1 < self.cols:
                self.cells[self.row][self.col + 1] = ""
            self.col += width
            if self.col >= self.cols:
                self.col = self.cols - 1
                self.wrap_next = True

    def line_feed(self) -> None:
        if self.row == self.bottom:
            self.scroll(1)
        elif self.row < self.rows - 1:
            self.row += 1

    def scroll(self, n: int) -> None:
        """Scrolls the region up by n lines (down when n < 0)."""
        region = self.cells[self.top : self.bottom + 1]
        n = max(-len(region), min(len(region), n))
        if n > 0:
            region = region[n:] + [[" "] * self.cols for _ in range(n)]
        elif n < 0:
            region = [[" "] * self.cols for _ in range(-n)] + region[:n]
        self.cells[self.top : self.bottom + 1] = region

    def control(self, ch: str) -> None:
        if ch == "\r":
            self.col = 0
        elif ch in "\n\x0b\x0c":
            self.line_feed()
        elif ch == "\b":
            self.col = max(0, self.col - 1)
        elif ch == "\t":
            self.col = min(self.cols - 1, (self.col // 8 + 1) * 8)
        else:
            return
        self.wrap_next = False

    def escape(self, ch: str) -> None:
        if ch == "7":
            self.saved = (self.row, self.col)
        elif ch == "8":
            self.row, self.col = self.saved
        elif ch == "D":
            self.line_feed()
        elif ch == "E":
            self.col = 0
            self.line_feed()
        elif ch == "M":
            if self.row == self.top:
                self.scroll(-1)
            else:
                self.row = max(0, self.row - 1)
        elif ch == "c":
            self.__init__(self.rows, self.cols)
        self.wrap_next = False

    def csi(self, params: str, _between: str, final: str) -> None:
        private = params.startswith(("?", ">", "<", "="))
        numbers = [int(p) if p.isdigit() else 0 for p in params.lstrip("?><=").split(";")]
        first = numbers[0] if numbers else 0
        n = max(1, first)
        self.wrap_next = False
        if private:
            if final in "hl" and any(p in (47, 1047, 1049) for p in numbers):
                if final == "h":
                    if 1049 in numbers:
                        self.saved = (self.row, self.col)
                    self.alternate = self.blank()
                    self.cells = self.alternate
                else:
                    self.cells = self.main
                    if 1049 in numbers:
                        self.row, self.col = self.saved
            return
        line = self.cells[self.row]
        if final == "A":
            self.row = max(0, self.row - n)
        elif final in "Be":
            self.row = min(self.rows - 1, self.row + n)
        elif final in "Ca":
            self.col = min(self.cols - 1, self.col + n)
        elif final == "D":
            self.col = max(0, self.col - n)
        elif final == "E":
            self.row, self.col = min(self.rows - 1, self.row + n), 0
        elif final == "F":
            self.row, self.col = max(0, self.row - n), 0
        elif final in "G`":
            self.col = min(self.cols - 1, n - 1)
        elif final == "d":
            self.row = min(self.rows - 1, n - 1)
        elif final in "Hf":
            col = numbers[1] if len(numbers) > 1 else 0
            self.row = min(self.rows - 1, n - 1)
            self.col = min(self.cols - 1, max(1, col) - 1)
        elif final == "J":
            if first == 0:
                line[self.col :] = [" "] * (self.cols - self.col)
                for r in range(self.row + 1, self.rows):
                    self.cells[r] = [" "] * self.cols
            elif first == 1:
                line[: self.col + 1] = [" "] * (self.col + 1)
                for r in range(self.row):
                    self.cells[r] = [" "] * self.cols
            else:
                for r in range(self.rows):
                    self.cells[r] = [" "] * self.cols
        elif final == "K":
            if first == 0:
                line[self.col :] = [" "] * (self.cols - self.col)
            elif first == 1:
                line[: self.col + 1] = [" "] * (self.col + 1)
            else:
                line[:] = [" "] * self.cols
        elif final == "X":
            end = min(self.cols, self.col + n)
            line[self.col : end] = [" "] * (end - self.col)
        elif final == "P":
            del line[self.col : self.col + n]
            line.extend([" "] * (self.cols - len(line)))
        elif final == "@":
            line[self.col : self.col] = [" "] * n
            del line[self.cols :]
        elif final in "LM" and self.top <= self.row <= self.bottom:
            top = self.top
            self.top = self.row
            self.scroll(-n if final == "L" else n)
            self.top = top
        elif final == "S":
            self.scroll(n)
        elif final == "T":
            self.scroll(-n)
        elif final == "r":
            top = max(1, first)
            bottom = numbers[1] if len(numbers) > 1 and numbers[1] else self.rows
            if top < bottom <= self.rows:
                self.top, self.bottom = top - 1, bottom - 1
                self.row, self.col = 0, 0
        elif final == "s":
            self.saved = (self.row, self.col)
        elif final == "u":
            self.row, self.col = self.saved


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
    screen = Screen(args.rows, args.cols)
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
                screen.feed(chunk)
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
            met = lambda: wanted_text in squeezed(screen.text()) or wanted_text in squeezed(
                plain(bytes(raw))
            )
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
                shown = "\n".join(line.rstrip() for line in screen.text().split("\n"))
                print(f"the screen at that moment:\n{shown}", file=sys.stderr)
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
