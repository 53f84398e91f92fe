"""A stdio MCP server whose `fetch` GETs its `url` only when the URL's host
is in the ALLOWED_HOSTS variable (comma-separated); any other call is a
tool error. Without the variable it still starts and lists `fetch`: only a
call shows that it needs it. Standard library only (with mcp_stdio.py
beside it)."""

import os
import urllib.parse

from mcp_stdio import FETCH, send, serve, try_get

TOOLS = [FETCH]
ALLOWED = [h for h in os.environ.get("ALLOWED_HOSTS", "").split(",") if h]


def call(rid, p):
    args = p.get("arguments")
    url = args.get("url") if isinstance(args, dict) else None
    if p.get("name") != "fetch" or not isinstance(url, str):
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "unknown tool"}})
        return
    if urllib.parse.urlsplit(url).hostname not in ALLOWED:
        result = {"content": [{"type": "text", "text": "host not allowed"}], "isError": True}
        send({"jsonrpc": "2.0", "id": rid, "result": result})
        return
    try_get(url)
    send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "done"}]}})


serve("allow-list", TOOLS, call, strict=True)
