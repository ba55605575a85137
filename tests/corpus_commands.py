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
  lines HARNESS DIR        files made from what Claude Code's or Codex CLI's
                           edits wrote (the edits of one place in a project,
                           by project name): for Claude Code, the file it
                           wrote whole and then edited, replayed in time
                           order; then, for the three places edited most, the
                           edits' texts laid one after another. Per line, the
                           time (ms) of the edit deja's rule names (the newest
                           whose text is found once in the file and covers
                           the line; none where the newest text at the line
                           is in several places or no text is there), and of
                           the edit that truly wrote it, as JSON
                           [{"project", "inside", "content", "lines":
                           [[rule_ms|null, truth_ms|null], ...]}, ...]
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


# What deja keeps of an edit's text (EDIT_TEXT_MAX_BYTES) and the line
# between the parts of one edit (EDIT_PARTS_SEPARATOR).
TEXT_CAP = 64 * 1024
PARTS = "\n\x1e\n"


def ms(stamp):
    from datetime import datetime
    try:
        return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)
    except (AttributeError, TypeError, ValueError):
        return None


def capped(text):
    raw = text.encode("utf-8")
    if len(raw) <= TEXT_CAP:
        return text
    head = raw[:TEXT_CAP].decode("utf-8", errors="ignore")
    cut = head.rfind("\n")
    return head[:cut + 1] if cut >= 0 else head


def claude_edits(root):
    """Every Claude Code edit that kept its text and did not fail: (ms,
    order, cwd, path, tool, input), one per call id."""
    found, seen, order = [], set(), 0
    for path in files(root, "*.jsonl"):
        calls, failed = [], set()
        for r in records(path):
            for b in blocks(r):
                if b.get("type") == "tool_use" and b.get("name") in ("Edit", "Write", "MultiEdit"):
                    i = b.get("input") or {}
                    target = i.get("file_path")
                    at = ms(r.get("timestamp"))
                    if isinstance(target, str) and target.startswith("/") and at is not None \
                            and isinstance(r.get("cwd"), str):
                        order += 1
                        calls.append((b.get("id"), (at, order, r["cwd"], target, b["name"], i)))
                elif b.get("type") == "tool_result" and b.get("is_error") is True:
                    failed.add(b.get("tool_use_id"))
        for call, edit in calls:
            if call not in failed and call not in seen:
                seen.add(call)
                found.append(edit)
    return found


def new_text(tool, i):
    if tool == "Write":
        text = i.get("content")
    elif tool == "Edit":
        text = i.get("new_string")
    else:
        parts = [e.get("new_string") for e in i.get("edits") or [] if isinstance(e, dict)]
        parts = [p for p in parts if isinstance(p, str) and p.strip()]
        text = PARTS.join(parts) if parts else None
    if not isinstance(text, str) or not text.strip():
        return None
    return capped(text)


def places(content, part):
    """The (first, last) lines of every place `part` is at, left to right."""
    out, at = [], content.find(part)
    while at >= 0:
        out.append((content.count("\n", 0, at) + 1, content.count("\n", 0, at + len(part) - 1) + 1))
        at = content.find(part, at + len(part))
    return out


def replay(edits):
    """The file after `edits` (oldest first, the first a Write), how many
    of them applied, and per line the index of the newest edit that wrote
    some of it."""
    content, owner, applied = "", [], 0
    for n, (_, _, _, _, tool, i) in enumerate(edits):
        if tool == "Write":
            content = i.get("content") if isinstance(i.get("content"), str) else ""
            owner = [n] * len(content)
            applied += 1
            continue
        pairs = [i] if tool == "Edit" else [e for e in i.get("edits") or [] if isinstance(e, dict)]
        done = False
        for e in pairs:
            old, new = e.get("old_string"), e.get("new_string")
            if not isinstance(old, str) or not isinstance(new, str) or not old or old not in content:
                continue
            at, count = 0, 0
            while True:
                at = content.find(old, at)
                if at < 0 or (count and not e.get("replace_all")):
                    break
                content = content[:at] + new + content[at + len(old):]
                owner = owner[:at] + [n] * len(new) + owner[at + len(old):]
                at += len(new)
                count += 1
            done = True
        applied += done
    lines, start = [], 0
    for line in content.splitlines(keepends=True):
        body = line.rstrip("\n")
        mine = owner[start:start + len(body)] or owner[start:start + len(line)]
        lines.append(max(mine) if mine else None)
        start += len(line)
    return content, applied, lines


def codex_patch_parts(patch):
    """Per file a patch names (as written), the runs of lines it adds."""
    out, current, run = {}, None, None
    def close():
        nonlocal run
        if run is not None and current is not None:
            out[current].append(run)
        run = None
    for line in patch.splitlines():
        head = line.rstrip()
        name = next((head[len(h):].strip() for h in ("*** Add File: ", "*** Update File: ",
                     "*** Delete File: ", "*** Move to: ") if head.startswith(h)), None)
        if name is not None:
            close()
            out.setdefault(name, [])
            current = None if head.startswith("*** Delete File: ") else name
        elif head.startswith("*** "):
            close()
            if head == "*** End Patch":
                current = None
        elif line.startswith("+") and current is not None:
            run = (run or "") + line[1:] + "\n"
        else:
            close()
    close()
    return out


def codex_edits(root):
    """Every file an apply_patch call wrote with text: (ms, order, cwd, path,
    parts)."""
    found, order = [], 0
    for path in files(root, "rollout-*.jsonl"):
        cwd = None
        for r in records(path):
            p = r.get("payload") if isinstance(r.get("payload"), dict) else {}
            if r.get("type") in ("session_meta", "turn_context") and isinstance(p.get("cwd"), str):
                cwd = cwd or p["cwd"]
            patch = None
            if p.get("type") == "custom_tool_call" and p.get("name") == "apply_patch":
                patch = p.get("input")
            elif p.get("type") == "function_call" and p.get("name") == "apply_patch":
                try:
                    args = json.loads(p.get("arguments") or "{}")
                except ValueError:
                    args = {}
                patch = args.get("input") or args.get("patch")
            elif p.get("type") == "function_call":
                # The patch as a program's argument: ["apply_patch", PATCH].
                try:
                    args = json.loads(p.get("arguments") or "{}")
                except ValueError:
                    args = {}
                argv = args.get("command") if isinstance(args, dict) else None
                if isinstance(argv, list) and len(argv) > 1 and isinstance(argv[0], str) \
                        and os.path.basename(argv[0]) in ("apply_patch", "applypatch"):
                    patch = argv[1]
            at = ms(r.get("timestamp"))
            if not isinstance(patch, str) or cwd is None or at is None:
                continue
            for name, runs in codex_patch_parts(patch).items():
                runs = [x for x in runs if x.strip()]
                if not runs:
                    continue
                target = name if name.startswith("/") else cwd.rstrip("/") + "/" + name
                order += 1
                found.append((at, order, cwd, os.path.normpath(target), [capped(PARTS.join(runs))]))
    return found


def claude_texts(root):
    """The Claude Code edits as codex_edits gives Codex's, with their input."""
    return [(at, order, cwd, path, [new_text(tool, i)], tool, i)
            for at, order, cwd, path, tool, i in claude_edits(root)
            if new_text(tool, i) is not None]


def by_place(edits):
    groups = defaultdict(list)
    for e in edits:
        cwd = e[2].rstrip("/")
        if e[3].startswith(cwd + "/") and os.path.basename(cwd):
            groups[(os.path.basename(cwd), e[3][len(cwd) + 1:])].append(e)
    return groups


def judged(key, chosen, content, owner):
    """Per line of `content`: the time of the edit deja's rule names, and
    of the edit `owner` says wrote it."""
    newest = list(reversed(chosen))
    found = []
    for e in newest:
        located, several = [], []
        for text in e[4]:
            for part in text.split(PARTS):
                part = part.strip("\n\r")
                if not part.strip():
                    continue
                at = places(content, part)
                (located if len(at) == 1 else several).extend(at)
        found.append((located, several))
    out = []
    for n in range(1, len(owner) + 1):
        rule = None
        for (located, several), e in zip(found, newest):
            if any(a <= n <= b for a, b in located):
                rule = e[0]
                break
            if any(a <= n <= b for a, b in several):
                break
        truth = owner[n - 1]
        out.append([rule, None if truth is None else chosen[truth][0]])
    return {"project": key[0], "inside": key[1], "content": content, "lines": out}


def laid_out(key, chosen):
    """A file of the edits' texts one after the other, oldest first, each
    after a line of its own: per line, the edit whose text it is."""
    content, owner = "", []
    for n, e in enumerate(chosen):
        filler = f"~~ deja corpus check: edit {n} ~~\n"
        content += filler
        owner.append(None)
        for text in e[4]:
            for part in text.split(PARTS):
                part = part if part.endswith("\n") else part + "\n"
                content += part
                owner.extend([n] * part.count("\n"))
    return judged(key, chosen, content, owner)


def lines(harness, root):
    if harness == "claude":
        edits = claude_texts(root)
    else:
        edits = codex_edits(root)
    groups = by_place(edits)
    out = []
    if harness == "claude":
        # A file Claude Code wrote whole, then edited: replayed.
        written = [k for k in groups if sorted(groups[k])[0][5] == "Write"]
        if written:
            key = max(written, key=lambda k: (len(groups[k]), k))
            chosen = sorted(groups[key])
            content, _, owner = replay([(e[0], e[1], e[2], e[3], e[5], e[6]) for e in chosen])
            out.append(judged(key, chosen, content, owner))
    for key in sorted(groups, key=lambda k: (-len(groups[k]), k))[:3]:
        out.append(laid_out(key, sorted(groups[key])))
    return out


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
    elif what == "lines" and harness in ("claude", "codex"):
        print(json.dumps(lines(harness, where)))
    elif what == "messages":
        print(json.dumps(messages(harness, where)))
    else:
        sys.exit(f"unknown request: {' '.join(argv[1:])}")


if __name__ == "__main__":
    main(sys.argv)
