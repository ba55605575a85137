"""Drives `deja mcp` with the official MCP Python SDK, an independent client.

usage: mcp_client.py DEJA_BINARY

The environment (HOME, DEJA_* variables) must point deja at a store holding
the demo fixtures, indexed with the real model, and configure
`mcp.max_answer_bytes = 1024` so that paging is exercised. Prints one line per
check and a closing `N passed, 0 failed` line; exits 1 on the first failure.
"""

import asyncio
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

PASSED = 0


def check(name, condition, detail=""):
    global PASSED
    if not condition:
        print(f"FAIL {name}: {detail}", flush=True)
        print(f"{PASSED} passed, 1 failed", flush=True)
        sys.exit(1)
    PASSED += 1
    print(f"ok   {name}", flush=True)


def text_of(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def main(deja):
    params = StdioServerParameters(command=deja, args=["mcp", "--structured"], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            check("server names itself", init.server_info.name == "deja", init.server_info)
            check("instructions say when to recall", "recall" in (init.instructions or ""), init.instructions)

            tools = await session.list_tools()
            names = sorted(t.name for t in tools.tools)
            check("five tools", names == ["blame", "recall", "recap", "session", "sessions"], names)

            result = await session.call_tool("recall", {"query": "firms peeking at each other's financials"})
            check("recall succeeds", not result.is_error, text_of(result))
            hits = result.structured_content["hits"]
            first = hits[0]
            check(
                "the paraphrase finds the tenant predicate session first",
                first["harness"] == "aider"
                and first["project"]["name"] == "billing-api"
                and first["session_id"].endswith("20251209T101233"),
                first,
            )
            text = text_of(result)
            check("hits come in the untrusted-data frame", text.startswith("<recalled-memory") and "</recalled-memory>" in text, text[:200])
            check("the text names the first session", first["session_id"] in text, text[:400])
            check("the text stays under the bound", len(text.encode()) <= 1024, len(text.encode()))
            per_session = {}
            for h in hits:
                per_session[h["session_id"]] = per_session.get(h["session_id"], 0) + 1
            check("at most two hits per session", max(per_session.values()) <= 2, per_session)

            capped = (await session.call_tool("recall", {"query": "deploy", "limit": 5, "per_session": 1})).structured_content
            ids = [h["session_id"] for h in capped["hits"]]
            check("per_session 1 gives distinct sessions", len(ids) == len(set(ids)) and len(ids) + capped["left_out"] > 1, capped)

            around = await session.call_tool("session", {"id": first["message_id"], "before": 1, "after": 1})
            check("session around a hit succeeds", not around.is_error, text_of(around))
            indexes = [m["index"] for m in around.structured_content["messages"]]
            check("the hit's message is shown", first["message_index"] in indexes, indexes)

            # Paging through a whole session under the 1 KB bound.
            seen, cursor, pages = [], None, 0
            while True:
                args = {"id": first["session_id"]}
                if cursor:
                    args["cursor"] = cursor
                page = await session.call_tool("session", args)
                check(f"page {pages + 1} succeeds", not page.is_error, text_of(page))
                check(f"page {pages + 1} stays under the bound", len(text_of(page).encode()) <= 1024, len(text_of(page).encode()))
                value = page.structured_content
                seen += [m["index"] for m in value["messages"]]
                cursor = value["next_cursor"]
                pages += 1
                if not cursor or pages > 100:
                    break
            total = page.structured_content["message_count"]
            check("paging reads every message once, in order", seen == list(range(total)), (seen, total))
            check("the session needs several pages", pages > 1, pages)

            listed = await session.call_tool("sessions", {"project": "billing-api", "limit": 3})
            check("sessions lists a project's sessions", not listed.is_error and 0 < len(listed.structured_content["sessions"]) <= 3, text_of(listed))

            empty = await session.call_tool("recall", {"query": "   "})
            check("an empty query is a tool error", empty.is_error and "empty" in text_of(empty), text_of(empty))
            huge = await session.call_tool("recall", {"query": "tenant", "limit": 10**12})
            check("a huge limit is a tool error naming it", huge.is_error and "limit" in text_of(huge), text_of(huge))
            wrong = await session.call_tool("recall", {"query": 42})
            check("a wrong argument type is a tool error", wrong.is_error and "invalid arguments" in text_of(wrong), text_of(wrong))
            unknown = await session.call_tool("recall", {"query": "tenant", "harness": "nosuch"})
            check("an unknown harness is a tool error naming what exists", unknown.is_error and "aider" in text_of(unknown), text_of(unknown))
            nowhere = await session.call_tool("sessions", {"project": "/no/such/project"})
            check("an unknown project is a tool error naming projects", nowhere.is_error and "billing-api" in text_of(nowhere), text_of(nowhere))
            missing = await session.call_tool("session", {"id": "no-such-session"})
            check("an unknown session is a tool error", missing.is_error and "no session" in text_of(missing), text_of(missing))
            try:
                await session.call_tool("no_such_tool", {})
                check("an unknown tool is a protocol error", False, "no error")
            except MCPError as e:
                check("an unknown tool is a protocol error", "unknown tool" in str(e), str(e))

            again = await session.call_tool("recall", {"query": "firms peeking at each other's financials"})
            check("the server still answers after bad calls", again.structured_content["hits"][0]["session_id"] == first["session_id"])
    print(f"{PASSED} passed, 0 failed", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
