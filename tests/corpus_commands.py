#!/usr/bin/env python3
"""Expected answers for `deja blame`, `deja recap` and `deja resume
--write-back` on the shared corpus, computed from the raw transcripts alone
(no deja code), for tests/e2e/corpus_commands.rs.

  failed HARNESS DIR       the (command, exit code) pairs of the commands that
                           failed, as JSON [[command, code|null], ...]
  days codex DIR           Codex sessions per UTC day of their first record,
                           as JSON {"YYYY-MM-DD": n}
  edited claude DIR        the absolute path edited by the most Claude Code
                           sessions, and their session ids, as JSON
                           {"path": ..., "sessions": [...]}
  messages HARNESS FILE    the texts of a Claude Code or Codex transcript by
                           role, in order, as JSON [[role, text], ...]
"""

import glob
import json
import os
import re
import sys
from collections import Counter, defaultdict

# Error texts Claude Code gives a Bash call that never ran.
NOT_RUN = ("<tool_use_error>", "The user doesn't want to proceed", "Permission ",
           "User rejected", "Cancelled", "InputValidationError")


def records(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                yield value


def files(root, pattern):
    return sorted(glob.glob(os.path.join(root, "**", pattern), recursive=True))


def result_text(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def blocks(record):
    content = (record.get("message") or {}).get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def is_warmup(path):
    """A sub-agent Claude Code ran to warm its prompt cache: its first user
    message is `Warmup`; it did no work."""
    for r in records(path):
        if r.get("type") == "user":
            return (r.get("message") or {}).get("content") == "Warmup"
    return False


def claude_failed(root):
    out = set()
    for path in files(root, "*.jsonl"):
        if is_warmup(path):
            continue
        calls = {}
        for r in records(path):
            for b in blocks(r):
                if b.get("type") == "tool_use" and b.get("name") == "Bash":
                    command = (b.get("input") or {}).get("command")
                    if isinstance(command, str) and command.strip():
                        calls[b.get("id")] = command.strip()
                elif b.get("type") == "tool_result" and b.get("is_error") is True:
                    command = calls.get(b.get("tool_use_id"))
                    text = result_text(b.get("content")).lstrip()
                    if command is None or text.startswith(NOT_RUN):
                        continue
                    m = re.match(r"Exit code (-?\d+)", text)
                    out.add((command, int(m.group(1)) if m else None))
    return out


def codex_failed(root):
    out = set()
    for path in files(root, "*.jsonl"):
        calls, codes = {}, {}
        for r in records(path):
            p = r.get("payload") if isinstance(r.get("payload"), dict) else r
            kind = p.get("type")
            if kind == "function_call" and p.get("name") in ("shell_command", "exec_command"):
                try:
                    args = json.loads(p.get("arguments") or "{}")
                except ValueError:
                    continue
                line = args.get("command") if p.get("name") == "shell_command" else args.get("cmd")
                if isinstance(line, str) and line.strip() and "apply_patch" not in line:
                    calls[p.get("call_id")] = line.strip()
            elif kind == "function_call_output" and isinstance(p.get("output"), str):
                o = p["output"]
                m = re.match(r"Exit code: (-?\d+)", o) or re.search(
                    r"^Process exited with code (-?\d+)", "\n".join(o.splitlines()[:8]), re.M)
                if m:
                    codes.setdefault(p.get("call_id"), int(m.group(1)))
            elif kind == "exec_command_end" and isinstance(p.get("exit_code"), int):
                codes.setdefault(p.get("call_id"), p["exit_code"])
        for call, line in calls.items():
            if codes.get(call, 0) != 0:
                out.add((line, codes[call]))
    return out


def shell_tool_code(text):
    codes = re.findall(r"^\s*Exit Code: (-?\d+)\s*$", text, re.M)
    return int(codes[-1]) if codes else None


def qwen_failed(root):
    out = set()
    for path in files(root, "*.jsonl"):
        calls, codes, refused = {}, {}, set()
        for r in records(path):
            result = r.get("toolCallResult")
            if isinstance(result, dict) and result.get("status") in ("error", "cancelled"):
                refused.add(result.get("callId"))
            for part in (r.get("message") or {}).get("parts") or []:
                if not isinstance(part, dict):
                    continue
                call = part.get("functionCall")
                if isinstance(call, dict) and call.get("name") in ("run_shell_command", "shell"):
                    command = (call.get("args") or {}).get("command")
                    if isinstance(command, str) and command.strip():
                        calls[call.get("id")] = command
                response = part.get("functionResponse")
                if isinstance(response, dict):
                    body = response.get("response") or {}
                    if isinstance(body, dict) and "error" in body:
                        refused.add(response.get("id"))
                    output = body.get("output") if isinstance(body, dict) else None
                    if isinstance(output, str) and shell_tool_code(output) is not None:
                        codes[response.get("id")] = shell_tool_code(output)
        for call, command in calls.items():
            if call not in refused and codes.get(call, 0) != 0:
                out.add((command, codes[call]))
    return out


def gemini_failed(root):
    out = set()
    for path in files(root, "*.json*"):
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                whole = json.load(f)
            messages = whole.get("messages", []) if isinstance(whole, dict) else []
        except ValueError:
            messages = list(records(path))
        for m in messages:
            if not isinstance(m, dict):
                continue
            for call in m.get("toolCalls") or []:
                if not isinstance(call, dict) or call.get("status") in ("error", "cancelled"):
                    continue
                if call.get("name") not in ("run_shell_command", "shell"):
                    continue
                command = (call.get("args") or {}).get("command")
                outputs = [((p.get("functionResponse") or {}).get("response") or {}).get("output")
                           for p in call.get("result") or [] if isinstance(p, dict)]
                codes = [shell_tool_code(o) for o in outputs if isinstance(o, str)]
                codes = [c for c in codes if c is not None]
                if isinstance(command, str) and command.strip() and codes and codes[0] != 0:
                    out.add((command, codes[0]))
    return out


def codex_days(root):
    first = {}
    # Copies of one growing rollout are named `<commit>__rollout-...`.
    for path in files(root, "*rollout-*.jsonl"):
        sid, start, said = None, None, False
        for n, r in enumerate(records(path)):
            p = r.get("payload") if isinstance(r.get("payload"), dict) else r
            if r.get("type") == "session_meta" and sid is None:
                sid = p.get("id")
            # A legacy rollout (2025) begins with a header line: {id, timestamp, ...}.
            if n == 0 and "type" not in r and isinstance(r.get("id"), str):
                sid = r["id"]
            if start is None and isinstance(r.get("timestamp"), str):
                start = r["timestamp"]
            if p.get("type") in ("user_message", "agent_message") or (
                    p.get("type") == "message" and p.get("role") == "assistant"):
                said = True
            # A user message item that is typed, not context Codex injects
            # (`<environment_context>`, `<user_instructions>`, AGENTS.md).
            if p.get("type") == "message" and p.get("role") == "user" and any(
                    t.strip() and not t.lstrip().startswith(("<", "# AGENTS.md instructions"))
                    for t in texts(p.get("content"))):
                said = True
        if sid and start and said:
            first[sid] = min(first.get(sid, start), start)
    return dict(sorted(Counter(t[:10] for t in first.values()).items()))


def claude_edited(root):
    sessions = defaultdict(set)
    for path in files(root, "*.jsonl"):
        if "/subagents/" in path or os.path.basename(path).startswith("agent-"):
            continue
        sid = os.path.basename(path)[:-len(".jsonl")]
        calls, failed = {}, set()
        for r in records(path):
            for b in blocks(r):
                if b.get("type") == "tool_use" and b.get("name") in ("Edit", "Write", "MultiEdit", "NotebookEdit"):
                    target = (b.get("input") or {}).get("file_path") or (b.get("input") or {}).get("notebook_path")
                    if isinstance(target, str) and target.startswith("/"):
                        calls[b.get("id")] = target
                elif b.get("type") == "tool_result" and b.get("is_error") is True:
                    failed.add(b.get("tool_use_id"))
        for call, target in calls.items():
            if call not in failed:
                sessions[target].add(sid)
    path = max(sessions, key=lambda p: (len(sessions[p]), p))
    return {"path": path, "sessions": sorted(sessions[path])}


def texts(value):
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [b.get("text") for b in value
                if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return []


def messages(harness, path):
    out = []
    if harness == "claude":
        replies = {}
        for r in records(path):
            role = (r.get("message") or {}).get("role")
            if r.get("type") == "user" and role == "user":
                for t in texts((r.get("message") or {}).get("content")):
                    out.append(["user", t])
            elif r.get("type") == "assistant":
                key = (r.get("message") or {}).get("id") or r.get("uuid")
                said = [b.get("text") for b in blocks(r) if b.get("type") == "text"]
                if not said:
                    continue
                if key in replies:
                    out[replies[key]][1] += "\n\n" + "\n\n".join(said)
                else:
                    replies[key] = len(out)
                    out.append(["assistant", "\n\n".join(said)])
    else:
        # Codex writes each message twice, as a response item and as an
        # event: the items, else the events.
        items, events = [], []
        for r in records(path):
            p = r.get("payload") if isinstance(r.get("payload"), dict) else r
            if p.get("type") == "message" and p.get("role") in ("user", "assistant"):
                for t in texts(p.get("content")):
                    items.append([p["role"], t])
            elif p.get("type") == "user_message" and isinstance(p.get("message"), str):
                events.append(["user", p["message"]])
            elif p.get("type") == "agent_message" and isinstance(p.get("message"), str):
                events.append(["assistant", p["message"]])
        out = items or events
    return out


def main(argv):
    what, harness, where = argv[1], argv[2], argv[3]
    if what == "failed":
        found = {"claude": claude_failed, "codex": codex_failed,
                 "qwen": qwen_failed, "gemini": gemini_failed}[harness](where)
        print(json.dumps(sorted(found, key=lambda c: (c[0], c[1] is None, c[1] or 0))))
    elif what == "days" and harness == "codex":
        print(json.dumps(codex_days(where)))
    elif what == "edited" and harness == "claude":
        print(json.dumps(claude_edited(where)))
    elif what == "messages":
        print(json.dumps(messages(harness, where)))
    else:
        sys.exit(f"unknown request: {' '.join(argv[1:])}")


if __name__ == "__main__":
    main(sys.argv)
