"""A stdio MCP server whose tool `fetch` GETs its `url` argument, and which
takes DELAY seconds (the first argument, default 0.6) to exit once its
stdin closes, as a server that flushes a store or ends its workers does.
The spec lets a client wait for it ("SHOULD wait for the server to exit"),
so it is no finding where the wait is long enough. Used by
tests/control.rs; standard library only (with mcp_stdio.py beside it)."""

import sys
import time

from mcp_stdio import FETCH, send, serve, try_get

DELAY = float(sys.argv[1]) if len(sys.argv) > 1 else 0.6


def call(rid, p):
    try_get(str(p.get("arguments", {}).get("url")))
    send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "fetched"}]}})


serve("slow-exit", [FETCH], call)
time.sleep(DELAY)
