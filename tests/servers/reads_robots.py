"""A stdio MCP server whose tool `fetch` first GETs /robots.txt on the host
of its `url` argument, then the URL itself, as fetch servers that honour
robots.txt do: a request the server makes by design beside each call, which
carries no token. Otherwise as naive as Python's `json` module. Used by
tests/control.rs; standard library only (with mcp_stdio.py beside
it)."""

import urllib.parse

from mcp_stdio import get, send, serve

FETCH = {
    "name": "fetch",
    "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
}


def fetch(url):
    parts = urllib.parse.urlsplit(url)
    try:
        get(urllib.parse.urlunsplit((parts.scheme, parts.netloc, "/robots.txt", "", "")))
        get(url)
    except (OSError, ValueError) as e:
        return {"content": [{"type": "text", "text": str(e)}], "isError": True}
    return {"content": [{"type": "text", "text": "fetched"}]}


def unknown(rid):
    send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "unknown method"}})


def call(rid, p):
    if not isinstance(p.get("arguments"), dict):
        return unknown(rid)
    send({"jsonrpc": "2.0", "id": rid, "result": fetch(str(p["arguments"].get("url")))})


serve("reads-robots", [FETCH], call, unknown)
