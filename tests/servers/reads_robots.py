"""A stdio MCP server whose tool `fetch` first GETs /robots.txt on the host
of its `url` argument, then the URL itself, as fetch servers that honour
robots.txt do: a request the server makes by design beside each call, which
carries no token. Otherwise as naive as Python's `json` module. Used by
tests/control.rs; standard library only (with mcp_stdio.py beside
it)."""

import urllib.parse

from mcp_stdio import answer_initialize, get, params, requests, send

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


def main():
    for request in requests():
        method, rid = request.get("method"), request.get("id")
        if rid is None:
            continue
        if method == "initialize":
            answer_initialize(request, "reads-robots")
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [FETCH]}})
        elif method == "tools/call" and isinstance(params(request).get("arguments"), dict):
            result = fetch(str(params(request)["arguments"].get("url")))
            send({"jsonrpc": "2.0", "id": rid, "result": result})
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "unknown method"}})


main()
