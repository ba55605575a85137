#!/usr/bin/env python3
"""A scripted model server for end-to-end tests of real coding agents.

usage: model_server.py --script SCRIPT.json --record REQUESTS.jsonl --port-file PORTFILE
                       [--host 127.0.0.1] [--port 0] [--quiet]

Binds HOST (127.0.0.1) on a free port (or --port), writes the port to PORTFILE
(atomically, once listening) and serves until killed; SIGTERM and SIGINT exit
cleanly with status 0. Python 3.11 standard library only.

It speaks, with server-sent-event streaming (and plain JSON when a request
does not ask to stream):

  POST /v1/messages[?beta=true]         Anthropic Messages (Claude Code)
  POST /v1/messages/count_tokens        Anthropic token count ({"input_tokens": N})
  POST /v1/responses                    OpenAI Responses (Codex CLI)
  POST /v1/chat/completions             OpenAI Chat Completions (Qwen Code, OpenCode, aider)
  GET  /v1/models[/ID]                  a model list (OpenAI and Anthropic shapes at once)
  POST /v1beta/models/M:streamGenerateContent   Gemini API, SSE (Gemini CLI; alt=sse)
  POST /v1beta/models/M:generateContent         Gemini API, JSON (Gemini CLI's side requests:
                                        no tools; one asking for JSON by a response schema is
                                        answered with a small value that fits the schema)
  POST /v1beta/models/M:countTokens             Gemini token count ({"totalTokens": N})
  GET  /api/tags, POST /api/show,       Ollama's own API, for clients that list and describe
  GET  /api/ps, GET /api/version        models there and chat through /v1/chat/completions
                                        (oterm): the one model options.model, no running model
  POST /api/chat                        Ollama's own chat (PAR LLAMA, through langchain-ollama):
                                        one JSON object a line when the request streams

(the same paths without the /v1 prefix work too). Anything else is answered
404 with a JSON error, and recorded.

Every request is recorded as one JSON line in REQUESTS.jsonl, flushed at once:
  {"seq", "time", "method", "path", "query", "headers" (credentials redacted),
   "body" (parsed JSON, else {"_raw": text}), "api" (anthropic | responses |
   chat | count_tokens | models | ollama | unknown), "tools" (names the request offers),
   "kind" (main | side | auto | exhausted | other), "step" (index of the
   script step that answered it, or null), "reason" (why it was side/auto),
   "reply" ({"text", "tool", "input", "call_id"} as answered), "status"}

The script
----------
Either a JSON list of steps, or an object {"steps": [...], options...}.
Steps are consumed in order by the "main" conversation requests:

  {"text": "..."}                       answer with that text, stop
  {"tool": "NAME", "input": {...}}      answer with one call of the tool NAME
  {"tool_like": "recall", "input": {}}  call the offered tool whose name ends
                                        with "recall" (mcp__deja__recall,
                                        deja__recall, deja_recall, recall ...);
                                        the shortest such name that ends with
                                        "__recall"/"_recall"/"recall" wins
  {"text": "...", "tool"/"tool_like": ...}  text first, then the call
  optional on any step:
    "match": "substring"    only a request whose body (as compact JSON text,
                            and as the text json.dumps gives with default
                            separators) contains it takes this step
    "no_match": "substring" a request whose body contains it does not take it
    "id": "call_x"          the tool call id (default generated)

Tool names the agents offer for deja's MCP server registered as "deja" (seen in requests):
  Claude Code 2.1.332  mcp__deja__recall, deferred: first only named in a system message beside
                       ToolSearch; ToolSearch {"query": "select:mcp__deja__recall"} adds it
  Codex CLI 0.171.0    a Responses "namespace" tool mcp__deja holding functions recall, session,
                       sessions; listed here as mcp__deja__recall, and answered with a
                       function_call {"namespace": "mcp__deja", "name": "recall"}
  Qwen Code 0.24.4     mcp__deja__recall, deferred behind tool_search + tool_call {"name",
                       "arguments"} (declared directly with "alwaysLoadTools": true on the server)
  OpenCode 1.18.33     deja_recall (server name + "_" + tool name), declared directly
  Gemini CLI 0.61.0    mcp_deja_recall (extension server "deja"), declared directly in
                       functionDeclarations, in `-p` mode only when its policy allows the
                       server (--allowed-mcp-server-names deja); the call is a part
                       {"functionCall": {"id", "name", "args"}}, its result comes back as
                       {"functionResponse": {"id", "name", "response": {"output": text}}}
So {"tool_like": "recall"} works unchanged with all five.

How a request is classified (under one lock, so parallel requests are safe):
  1. count_tokens and /models are answered directly ("other").
  2. A request is a side request (answered with options.side_text, default
     "ok", and never consuming a step) when: it offers no tools and
     options.require_tools is true (the default; set it false for agents that
     send no tools, like aider); or it looks like Claude Code's quota probe
     (max_tokens 1); or the next step's match/no_match rule rejects it; or the
     next step is a tool step and the request neither offers that tool nor
     can reach it (below).
  3. Deferred tools (Claude Code's ToolSearch): when the next step wants a tool
     the request does not offer, but the request offers a tool named
     ToolSearch (options.tool_search_names) and its body names a matching
     tool (e.g. "mcp__deja__recall" in the deferred-tool list), the server
     answers with ToolSearch {"query": "select:<name>"} WITHOUT consuming the
     step ("auto"), so one script serves every agent. Set
     options.auto_tool_search false to script the ToolSearch step yourself.
  4. Otherwise the request is "main" and takes the next step. When the
     script is exhausted, main requests get options.done_text ("done.").

Options (object form): require_tools (true), side_text ("ok"), done_text
("done."), auto_tool_search (true), tool_search_names (["ToolSearch"]),
model (echoed model name when the request names none: "mock-model").
"""

import argparse
import base64
import gzip
import json
import os
import re
import signal
import sys
import threading
import time
import uuid
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

# Background requests of the agents that carry tools but are not the conversation:
# Qwen Code 0.24.4's managed auto-memory extraction (settings memory.enableManagedAutoMemory).
DEFAULT_SIDE_MARKERS = ["Managed memory has TWO directories"]

REDACT = {"authorization", "x-api-key", "api-key", "cookie", "proxy-authorization", "x-goog-api-key"}


def now_ms():
    return int(time.time() * 1000)


def new_id(prefix):
    return prefix + uuid.uuid4().hex[:24]


class Script:
    def __init__(self, data):
        if isinstance(data, list):
            data = {"steps": data}
        if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
            raise ValueError("the script must be a JSON list of steps or an object with a 'steps' list")
        self.steps = data["steps"]
        for i, s in enumerate(self.steps):
            if not isinstance(s, dict) or not any(k in s for k in ("text", "tool", "tool_like")):
                raise ValueError(f"step {i} needs 'text', 'tool' or 'tool_like': {s!r}")
        self.require_tools = bool(data.get("require_tools", True))
        self.side_text = data.get("side_text", "ok")
        self.done_text = data.get("done_text", "done.")
        self.auto_tool_search = bool(data.get("auto_tool_search", True))
        self.tool_search_names = list(data.get("tool_search_names", ["ToolSearch", "tool_search"]))
        # bridge tool -> [key of the tool name, key of the arguments]
        self.tool_bridges = dict(data.get("tool_bridges", {"tool_call": ["name", "arguments"]}))
        self.side_markers = list(data.get("side_markers", DEFAULT_SIDE_MARKERS))
        self.model = data.get("model", "mock-model")
        self.next = 0
        self.lock = threading.Lock()


def offered_tools(api, body):
    names = []
    tools = body.get("tools") if isinstance(body, dict) else None
    if not isinstance(tools, list):
        return names
    for t in tools:
        if not isinstance(t, dict):
            continue
        if api == "gemini":
            # Gemini API: {"functionDeclarations": [{"name", "description", "parametersJsonSchema"}]}
            for fd in t.get("functionDeclarations") or t.get("function_declarations") or []:
                if isinstance(fd, dict) and fd.get("name"):
                    names.append(fd["name"])
        elif api == "chat":
            fn = t.get("function")
            if isinstance(fn, dict) and fn.get("name"):
                names.append(fn["name"])
            elif t.get("name"):
                names.append(t["name"])
        elif api == "responses":
            if t.get("type") == "namespace" and isinstance(t.get("tools"), list):
                # Codex 0.171 groups MCP tools: {"type": "namespace", "name": "mcp__deja",
                # "tools": [{"type": "function", "name": "recall"}, ...]}; the call must
                # then carry "namespace": "mcp__deja", "name": "recall".
                ns = t.get("name") or ""
                for sub in t["tools"]:
                    if isinstance(sub, dict) and sub.get("name"):
                        names.append(qualify(ns, sub["name"]))
            elif t.get("name"):
                names.append(t["name"])
            elif isinstance(t.get("function"), dict) and t["function"].get("name"):
                names.append(t["function"]["name"])
        else:
            if t.get("name"):
                names.append(t["name"])
    return names


def qualify(ns, name):
    """The name a namespaced Responses tool is known by here: mcp__deja + recall -> mcp__deja__recall."""
    if not ns:
        return name
    return ns + name if ns.endswith("__") else ns + "__" + name


def split_qualified(body, qualified):
    """(namespace, name) for a qualified Responses tool name, (None, name) when it is not namespaced."""
    for t in (body.get("tools") or []) if isinstance(body, dict) else []:
        if isinstance(t, dict) and t.get("type") == "namespace":
            for sub in t.get("tools") or []:
                if isinstance(sub, dict) and qualify(t.get("name") or "", sub.get("name") or "") == qualified:
                    return t.get("name"), sub.get("name")
    return None, qualified


def pick_like(names, suffix):
    cands = [n for n in names if n == suffix or n.endswith("__" + suffix) or n.endswith("_" + suffix)
             or n.endswith("." + suffix) or n.endswith("/" + suffix)]
    if not cands:
        cands = [n for n in names if n.endswith(suffix)]
    if not cands:
        return None
    # prefer mcp__<server>__<tool>, then the shortest
    cands.sort(key=lambda n: (not n.startswith("mcp__"), not n.endswith("__" + suffix), len(n), n))
    return cands[0]


def all_strings(obj):
    """Every string inside a parsed JSON value (keys and values)."""
    out = []
    stack = [obj]
    while stack:
        o = stack.pop()
        if isinstance(o, str):
            out.append(o)
        elif isinstance(o, dict):
            out.extend(k for k in o if isinstance(k, str))
            stack.extend(o.values())
        elif isinstance(o, list):
            stack.extend(o)
    return out


def body_texts(body):
    return (json.dumps(body, ensure_ascii=False, separators=(",", ":")),
            json.dumps(body, ensure_ascii=False))


def step_matches(step, texts):
    m = step.get("match")
    if m is not None and not any(m in t for t in texts):
        return False
    nm = step.get("no_match")
    if nm is not None and any(nm in t for t in texts):
        return False
    return True


def reach_deferred(script, step, idx, body, tools, want, reply):
    """The step wants a tool the request does not declare. Claude Code and Qwen Code defer MCP
    tools: they list them by name only, behind a search tool (ToolSearch, tool_search) and, for
    Qwen Code, a bridge (tool_call {"name", "arguments"}) that calls a still-hidden tool."""
    strings = all_strings(body)
    mentioned = sorted(set(re.findall(r"[A-Za-z0-9_.\-]+", "\n".join(strings))) - set(tools))
    if "tool" in step:
        target = want if want in mentioned else None
    else:
        target = pick_like(mentioned, want)
    if target is not None:
        searched = any(("select:" + target) in x for x in strings)
        search = [n for n in tools if n in script.tool_search_names]
        bridge = [n for n in tools if n in script.tool_bridges]
        if search and not searched and script.auto_tool_search:
            return ("auto", None, {"tool": search[0], "input": {"query": "select:" + target}, "call_id": None},
                    f"step {idx} wants {target}, deferred: select it through {search[0]}")
        if bridge:
            keys = script.tool_bridges[bridge[0]]
            script.next += 1
            reply.update(tool=bridge[0], input={keys[0]: target, keys[1]: step.get("input", {})},
                         call_id=step.get("id"), bridged=target)
            return "main", idx, reply, f"{target} is deferred: called through {bridge[0]}"
    return "side", None, {"text": script.side_text}, f"step {idx} wants tool {want!r}, not offered"


def classify(script, api, body, tools):
    """Returns (kind, step_index, reply, reason). reply: {"text"?, "tool"?, "input"?, "call_id"?}."""
    texts = body_texts(body)
    if not tools and script.require_tools:
        return "side", None, {"text": script.side_text}, "offers no tools"
    for marker in script.side_markers:
        if any(marker in t for t in texts):
            return "side", None, {"text": script.side_text}, f"side marker {marker!r}"
    if isinstance(body, dict) and body.get("max_tokens") == 1:
        return "side", None, {"text": script.side_text}, "max_tokens 1 (quota probe)"
    if script.next >= len(script.steps):
        return "exhausted", None, {"text": script.done_text}, "script exhausted"
    idx = script.next
    step = script.steps[idx]
    if not step_matches(step, texts):
        return "side", None, {"text": script.side_text}, f"step {idx} match/no_match rejects it"
    reply = {}
    if "text" in step:
        reply["text"] = step["text"]
    if "tool" in step or "tool_like" in step:
        if "tool" in step:
            want = step["tool"]
            name = want if want in tools else None
        else:
            want = step["tool_like"]
            name = pick_like(tools, want)
        if name is None:
            return reach_deferred(script, step, idx, body, tools, want, reply)
        reply["tool"] = name
        reply["input"] = step.get("input", {})
        reply["call_id"] = step.get("id")
    script.next += 1
    return "main", idx, reply, None


# ---------------------------------------------------------------- encoders


def sse(event, data):
    out = ""
    if event:
        out += f"event: {event}\n"
    out += "data: " + json.dumps(data, ensure_ascii=False) + "\n\n"
    return out.encode()


def anthropic_events(reply, model, input_tokens):
    mid = new_id("msg_")
    events = [sse("message_start", {"type": "message_start", "message": {
        "id": mid, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}})]
    blocks, stop = anthropic_blocks(reply)
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            events.append(sse("content_block_start", {"type": "content_block_start", "index": i,
                                                      "content_block": {"type": "text", "text": ""}}))
            events.append(sse("ping", {"type": "ping"}))
            events.append(sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                      "delta": {"type": "text_delta", "text": b["text"]}}))
        else:
            events.append(sse("content_block_start", {"type": "content_block_start", "index": i,
                                                      "content_block": {"type": "tool_use", "id": b["id"],
                                                                        "name": b["name"], "input": {}}}))
            events.append(sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                      "delta": {"type": "input_json_delta",
                                                                "partial_json": json.dumps(b["input"])}}))
        events.append(sse("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(sse("message_delta", {"type": "message_delta",
                                        "delta": {"stop_reason": stop, "stop_sequence": None},
                                        "usage": {"output_tokens": 10}}))
    events.append(sse("message_stop", {"type": "message_stop"}))
    return events


def anthropic_blocks(reply):
    blocks = []
    if reply.get("text") is not None:
        blocks.append({"type": "text", "text": reply["text"]})
    stop = "end_turn"
    if reply.get("tool"):
        blocks.append({"type": "tool_use", "id": reply["call_id"], "name": reply["tool"], "input": reply["input"]})
        stop = "tool_use"
    if not blocks:
        blocks.append({"type": "text", "text": ""})
    return blocks, stop


def anthropic_json(reply, model, input_tokens):
    blocks, stop = anthropic_blocks(reply)
    return {"id": new_id("msg_"), "type": "message", "role": "assistant", "model": model,
            "content": blocks, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": 10}}


def responses_items(reply):
    items = []
    if reply.get("text") is not None:
        items.append({"type": "message", "id": new_id("msg_"), "status": "completed", "role": "assistant",
                      "content": [{"type": "output_text", "text": reply["text"], "annotations": []}]})
    if reply.get("tool"):
        item = {"type": "function_call", "id": new_id("fc_"), "status": "completed",
                "call_id": reply["call_id"], "name": reply.get("wire_name", reply["tool"]),
                "arguments": json.dumps(reply["input"])}
        if reply.get("namespace"):
            item["namespace"] = reply["namespace"]
        items.append(item)
    return items


def responses_usage(input_tokens):
    return {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input_tokens + 10}


def responses_events(reply, model, input_tokens):
    rid = new_id("resp_")
    created = int(time.time())
    base = {"id": rid, "object": "response", "created_at": created, "model": model, "output": [],
            "status": "in_progress"}
    events = [sse("response.created", {"type": "response.created", "response": base}),
              sse("response.in_progress", {"type": "response.in_progress", "response": base})]
    items = responses_items(reply)
    for i, it in enumerate(items):
        if it["type"] == "message":
            added = dict(it, status="in_progress", content=[])
            events.append(sse("response.output_item.added", {"type": "response.output_item.added",
                                                             "output_index": i, "item": added}))
            part = {"type": "output_text", "text": "", "annotations": []}
            events.append(sse("response.content_part.added", {"type": "response.content_part.added",
                                                              "item_id": it["id"], "output_index": i,
                                                              "content_index": 0, "part": part}))
            text = it["content"][0]["text"]
            events.append(sse("response.output_text.delta", {"type": "response.output_text.delta",
                                                             "item_id": it["id"], "output_index": i,
                                                             "content_index": 0, "delta": text}))
            events.append(sse("response.output_text.done", {"type": "response.output_text.done",
                                                            "item_id": it["id"], "output_index": i,
                                                            "content_index": 0, "text": text}))
            events.append(sse("response.content_part.done", {"type": "response.content_part.done",
                                                             "item_id": it["id"], "output_index": i,
                                                             "content_index": 0, "part": it["content"][0]}))
        else:
            added = dict(it, status="in_progress", arguments="")
            events.append(sse("response.output_item.added", {"type": "response.output_item.added",
                                                             "output_index": i, "item": added}))
            events.append(sse("response.function_call_arguments.delta", {
                "type": "response.function_call_arguments.delta", "item_id": it["id"], "output_index": i,
                "delta": it["arguments"]}))
            events.append(sse("response.function_call_arguments.done", {
                "type": "response.function_call_arguments.done", "item_id": it["id"], "output_index": i,
                "arguments": it["arguments"]}))
        events.append(sse("response.output_item.done", {"type": "response.output_item.done",
                                                        "output_index": i, "item": it}))
    done = dict(base, status="completed", output=items, usage=responses_usage(input_tokens))
    events.append(sse("response.completed", {"type": "response.completed", "response": done}))
    return events


def responses_json(reply, model, input_tokens):
    return {"id": new_id("resp_"), "object": "response", "created_at": int(time.time()), "model": model,
            "status": "completed", "output": responses_items(reply), "usage": responses_usage(input_tokens)}


def chat_usage(input_tokens):
    return {"prompt_tokens": input_tokens, "completion_tokens": 10, "total_tokens": input_tokens + 10}


def chat_events(reply, model, input_tokens, include_usage):
    cid = new_id("chatcmpl-")
    created = int(time.time())

    def chunk(delta, finish=None, **extra):
        d = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
             "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
        d.update(extra)
        return ("data: " + json.dumps(d, ensure_ascii=False) + "\n\n").encode()

    events = [chunk({"role": "assistant", "content": ""})]
    finish = "stop"
    if reply.get("text") is not None:
        events.append(chunk({"content": reply["text"]}))
    if reply.get("tool"):
        finish = "tool_calls"
        events.append(chunk({"tool_calls": [{"index": 0, "id": reply["call_id"], "type": "function",
                                             "function": {"name": reply["tool"], "arguments": ""}}]}))
        events.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": json.dumps(reply["input"])}}]}))
    events.append(chunk({}, finish))
    if include_usage:
        d = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
             "choices": [], "usage": chat_usage(input_tokens)}
        events.append(("data: " + json.dumps(d) + "\n\n").encode())
    events.append(b"data: [DONE]\n\n")
    return events


def chat_json(reply, model, input_tokens):
    msg = {"role": "assistant", "content": reply.get("text")}
    finish = "stop"
    if reply.get("tool"):
        finish = "tool_calls"
        msg["tool_calls"] = [{"id": reply["call_id"], "type": "function",
                              "function": {"name": reply["tool"], "arguments": json.dumps(reply["input"])}}]
    return {"id": new_id("chatcmpl-"), "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": msg, "logprobs": None, "finish_reason": finish}],
            "usage": chat_usage(input_tokens)}


def gemini_parts(reply):
    parts = []
    if reply.get("text") is not None:
        parts.append({"text": reply["text"]})
    if reply.get("tool"):
        parts.append({"functionCall": {"id": reply["call_id"], "name": reply["tool"], "args": reply["input"]}})
    if not parts:
        parts.append({"text": ""})
    return parts


def gemini_response(reply, model, input_tokens):
    return {"candidates": [{"content": {"role": "model", "parts": gemini_parts(reply)},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": input_tokens, "candidatesTokenCount": 10,
                              "totalTokenCount": input_tokens + 10},
            "modelVersion": model, "responseId": new_id("resp_")}


def gemini_events(reply, model, input_tokens):
    return [("data: " + json.dumps(gemini_response(reply, model, input_tokens), ensure_ascii=False)
             + "\r\n\r\n").encode()]


def gemini_schema(body):
    """The JSON schema a Gemini API request asks its answer to follow, if any."""
    gc = body.get("generationConfig") if isinstance(body, dict) else None
    if not isinstance(gc, dict):
        return None
    for key in ("responseJsonSchema", "responseSchema", "response_json_schema", "response_schema"):
        if isinstance(gc.get(key), dict):
            return gc[key]
    if gc.get("responseMimeType") == "application/json":
        return {}
    return None


def from_schema(schema):
    """A small value that fits `schema`: the first enum value, "ok", 0, false, [] or an object of those.
    Gemini CLI's side requests (next speaker, model routing, loop checks) ask for JSON this way."""
    if not isinstance(schema, dict):
        return "ok"
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if str(x).lower() != "null"), None)
    t = str(t or ("object" if "properties" in schema else "string")).lower()
    if t == "object":
        return {k: from_schema(v) for k, v in (schema.get("properties") or {}).items()}
    if t == "array":
        return []
    if t in ("number", "integer"):
        for key in ("minimum", "exclusiveMinimum"):
            if isinstance(schema.get(key), (int, float)):
                return schema[key] + (1 if key == "exclusiveMinimum" else 0)
        # an integer 1: Gemini CLI's model router wants complexity_score 1-100 (its
        # schema does not say so); a number 0 (a loop check's confidence: no loop)
        return 1 if t == "integer" else 0
    if t == "boolean":
        return False
    return "ok"


def models_list(model):
    ids = [model, "gpt-4o", "claude-sonnet-4-5", "claude-haiku-4-5"]
    seen, data = set(), []
    for m in ids:
        if m in seen:
            continue
        seen.add(m)
        data.append({"id": m, "object": "model", "type": "model", "created": 0,
                     "created_at": "2025-01-01T00:00:00Z", "owned_by": "mock", "display_name": m})
    return {"object": "list", "data": data, "has_more": False, "first_id": data[0]["id"], "last_id": data[-1]["id"]}


# ---------------------------------------------------------------- server


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "deja-model-server/1"

    def log_message(self, fmt, *args):
        if not self.server.quiet:
            sys.stderr.write("model_server: " + (fmt % args) + "\n")

    # -- plumbing

    def read_body(self):
        te = (self.headers.get("Transfer-Encoding") or "").lower()
        if "chunked" in te:
            raw = b""
            while True:
                line = self.rfile.readline()
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                raw += self.rfile.read(size)
                self.rfile.readline()
        else:
            n = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(n) if n > 0 else b""
        enc = (self.headers.get("Content-Encoding") or "").lower()
        try:
            if enc == "gzip":
                raw = gzip.decompress(raw)
            elif enc == "deflate":
                raw = zlib.decompress(raw)
        except Exception:
            pass
        if not raw:
            return {}
        try:
            return json.loads(raw.decode("utf-8"))
        except Exception:
            try:
                return {"_raw": raw.decode("utf-8")}
            except UnicodeDecodeError:
                return {"_raw_base64": base64.b64encode(raw).decode(), "_content_encoding": enc}

    def send_json(self, status, obj):
        data = json.dumps(obj, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", new_id("req_"))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def send_stream(self, events):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.send_header("request-id", new_id("req_"))
        self.end_headers()
        self.close_connection = True
        for e in events:
            self.wfile.write(e)
            self.wfile.flush()

    def record(self, entry):
        self.server.recorder.write(entry)

    # -- dispatch

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def do_HEAD(self):
        self.handle_any("HEAD")

    def do_PUT(self):
        self.handle_any("PUT")

    def do_DELETE(self):
        self.handle_any("DELETE")

    def handle_any(self, method):
        url = urlsplit(self.path)
        path = url.path.rstrip("/") or "/"
        if path.startswith("/v1/"):
            norm = path[3:]
        else:
            norm = path
        body = self.read_body() if method in ("POST", "PUT") else {}
        headers = {k.lower(): ("<redacted>" if k.lower() in REDACT else v) for k, v in self.headers.items()}
        entry = {"method": method, "path": path, "query": parse_qs(url.query), "headers": headers,
                 "body": body, "api": "unknown", "tools": [], "kind": "other", "step": None,
                 "reason": None, "reply": None, "status": 200}
        script = self.server.script
        model = (body.get("model") if isinstance(body, dict) else None) or script.model
        try:
            if method == "GET" and (norm == "/models" or norm.startswith("/models/")):
                entry["api"] = "models"
                if norm == "/models":
                    obj = models_list(model)
                else:
                    mid = norm[len("/models/"):]
                    obj = {"id": mid, "object": "model", "type": "model", "created": 0,
                           "created_at": "2025-01-01T00:00:00Z", "owned_by": "mock", "display_name": mid}
                self.record(entry)
                return self.send_json(200, obj)
            if path.startswith("/api/"):
                return self.handle_ollama(entry, method, path, body, script.model)
            gm = GEMINI_PATH.match(path) if method == "POST" else None
            if gm is not None:
                return self.handle_gemini(entry, body, gm.group(1), gm.group(2))
            if method == "POST" and norm == "/messages/count_tokens":
                entry["api"] = "count_tokens"
                self.record(entry)
                return self.send_json(200, {"input_tokens": estimate_tokens(body)})
            api = {"/messages": "anthropic", "/responses": "responses",
                   "/chat/completions": "chat"}.get(norm) if method == "POST" else None
            if api is None:
                entry["status"] = 404
                self.record(entry)
                if method == "HEAD":
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                return self.send_json(404, {"type": "error", "error": {
                    "type": "not_found_error", "message": f"model_server: no route for {method} {path}"}})
            entry["api"] = api
            tools = offered_tools(api, body)
            entry["tools"] = tools
            with script.lock:
                kind, idx, reply, reason = classify(script, api, body, tools)
                if reply.get("tool") and not reply.get("call_id"):
                    reply["call_id"] = new_id("toolu_" if api == "anthropic" else "call_")
                if reply.get("tool") and api == "responses":
                    ns, wire = split_qualified(body, reply["tool"])
                    if ns is not None:
                        reply["namespace"], reply["wire_name"] = ns, wire
                entry.update(kind=kind, step=idx, reply=reply, reason=reason)
                self.record(entry)
            stream = bool(body.get("stream")) if isinstance(body, dict) else False
            itok = estimate_tokens(body)
            if api == "anthropic":
                if stream:
                    return self.send_stream(anthropic_events(reply, model, itok))
                return self.send_json(200, anthropic_json(reply, model, itok))
            if api == "responses":
                if stream:
                    return self.send_stream(responses_events(reply, model, itok))
                return self.send_json(200, responses_json(reply, model, itok))
            if stream:
                so = body.get("stream_options") or {}
                return self.send_stream(chat_events(reply, model, itok, bool(so.get("include_usage"))))
            return self.send_json(200, chat_json(reply, model, itok))
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


    def handle_ollama(self, entry, method, path, body, model):
        """Ollama's API around the chat (oterm lists models with /api/tags, reads one's
        capabilities with /api/show, its context length with /api/ps); the chat itself goes
        through Ollama's OpenAI-compatible /v1/chat/completions."""
        entry["api"] = "ollama"
        if method == "POST" and path == "/api/chat":
            return self.handle_ollama_chat(entry, body, model)
        obj = None
        if method == "GET" and path == "/api/tags":
            obj = {"models": [dict(ollama_model(model), name=model)]}
        elif method == "POST" and path == "/api/show":
            obj = {"modelfile": "", "parameters": "", "template": "{{ .Prompt }}",
                   "details": ollama_model(model)["details"], "model_info": {},
                   "capabilities": ["completion", "vision"], "modified_at": "2025-01-01T00:00:00Z"}
        elif method == "GET" and path == "/api/ps":
            obj = {"models": []}
        elif method == "GET" and path == "/api/version":
            obj = {"version": "0.12.0"}
        if obj is None:
            entry["status"] = 404
            self.record(entry)
            return self.send_json(404, {"error": f"model_server: no Ollama route for {method} {path}"})
        self.record(entry)
        return self.send_json(200, obj)

    def handle_ollama_chat(self, entry, body, model):
        """Ollama's own chat, POST /api/chat: the reply as one message, streamed (the default)
        as one JSON object a line, the last with "done": true."""
        script = self.server.script
        tools = offered_tools("chat", body)
        entry["tools"] = tools
        with script.lock:
            kind, idx, reply, reason = classify(script, "chat", body, tools)
            if reply.get("tool") and not reply.get("call_id"):
                reply["call_id"] = new_id("call_")
            entry.update(kind=kind, step=idx, reply=reply, reason=reason)
            self.record(entry)
        model = (body.get("model") if isinstance(body, dict) else None) or model
        created = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
        message = {"role": "assistant", "content": reply.get("text") or ""}
        if reply.get("tool"):
            message["tool_calls"] = [{"function": {"name": reply["tool"], "arguments": reply["input"]}}]
        done = {"model": model, "created_at": created, "message": {"role": "assistant", "content": ""},
                "done": True, "done_reason": "stop", "total_duration": 1000000, "load_duration": 0,
                "prompt_eval_count": estimate_tokens(body), "prompt_eval_duration": 0,
                "eval_count": 10, "eval_duration": 1000000}
        if isinstance(body, dict) and body.get("stream") is False:
            return self.send_json(200, dict(done, message=message))
        lines = [dict(model=model, created_at=created, message=message, done=False), done]
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        for line in lines:
            self.wfile.write((json.dumps(line, ensure_ascii=False) + "\n").encode())
            self.wfile.flush()

    def handle_gemini(self, entry, body, model, action):
        """Gemini API (Gemini CLI): models/{model}:streamGenerateContent (SSE), :generateContent
        (JSON; Gemini CLI's side requests, which offer no tools), :countTokens."""
        script = self.server.script
        if action == "countTokens":
            entry["api"] = "count_tokens"
            self.record(entry)
            return self.send_json(200, {"totalTokens": estimate_tokens(body)})
        if action not in ("streamGenerateContent", "generateContent"):
            entry["status"] = 404
            self.record(entry)
            return self.send_json(404, {"error": {"code": 404, "status": "NOT_FOUND",
                                                  "message": f"model_server: no Gemini method {action}"}})
        entry["api"] = "gemini"
        tools = offered_tools("gemini", body)
        entry["tools"] = tools
        with script.lock:
            kind, idx, reply, reason = classify(script, "gemini", body, tools)
            if reply.get("tool") and not reply.get("call_id"):
                reply["call_id"] = new_id("call_")
            schema = gemini_schema(body)
            if kind == "side" and schema is not None:
                reply = {"text": json.dumps(from_schema(schema))}
            entry.update(kind=kind, step=idx, reply=reply, reason=reason)
            self.record(entry)
        itok = estimate_tokens(body)
        if action == "streamGenerateContent":
            return self.send_stream(gemini_events(reply, model, itok))
        return self.send_json(200, gemini_response(reply, model, itok))


def ollama_model(model):
    """One model as Ollama's /api/tags lists it."""
    return {"model": model, "modified_at": "2025-01-01T00:00:00Z", "size": 0, "digest": "0" * 64,
            "details": {"parent_model": "", "format": "gguf", "family": "mock", "families": ["mock"],
                        "parameter_size": "1B", "quantization_level": "Q4_0"}}


# POST /v1beta/models/{model}:{action} (the Gemini API; v1 and v1alpha too)
GEMINI_PATH = re.compile(r"^/(?:v1beta|v1alpha|v1)/models/([^/:]+):([A-Za-z]+)$")


def estimate_tokens(body):
    try:
        return max(1, len(json.dumps(body)) // 4)
    except Exception:
        return 1


class Recorder:
    def __init__(self, path):
        self.f = open(path, "a", encoding="utf-8")
        self.lock = threading.Lock()
        self.seq = 0

    def write(self, entry):
        with self.lock:
            self.seq += 1
            entry = dict(seq=self.seq, time=now_ms(), **entry)
            self.f.write(json.dumps(entry, ensure_ascii=False) + "\n")
            self.f.flush()

    def close(self):
        with self.lock:
            self.f.close()


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main(argv=None):
    ap = argparse.ArgumentParser(description="Scripted model server for agent end-to-end tests.")
    ap.add_argument("--script", required=True, help="JSON script: a list of steps, or {'steps': [...], options}")
    ap.add_argument("--record", required=True, help="JSONL file; one line per request")
    ap.add_argument("--port-file", required=True, help="file the listening port is written to")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--quiet", action="store_true", help="no access log on stderr")
    args = ap.parse_args(argv)

    with open(args.script, encoding="utf-8") as f:
        script = Script(json.load(f))
    server = Server((args.host, args.port), Handler)
    server.script = script
    server.recorder = Recorder(args.record)
    server.quiet = args.quiet

    def stop(signum, frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    port = server.server_address[1]
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"{port}\n")
    os.replace(tmp, args.port_file)
    if not args.quiet:
        sys.stderr.write(f"model_server: listening on {args.host}:{port}\n")
    try:
        server.serve_forever(poll_interval=0.2)
    except SystemExit:
        pass
    finally:
        server.server_close()
        server.recorder.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
