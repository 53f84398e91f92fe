"""A stdio MCP server that remembers what it did, across calls and across
runs, as a store with unique names does: its tool `remember` takes
{"items": [{"url": ...}, ...]} and GETs each URL it has not seen before,
recording it in the state file named by the first argument. A URL seen
before is answered with "already known" and not fetched again. It refuses
arguments other than `items` (-32602), and is otherwise as naive as Python's
`json` module. Used by tests/remembering.rs; standard library only (with
mcp_stdio.py beside it)."""

import os
import sys

from mcp_stdio import answer_initialize, get, params, requests, send

TOOL = {
    "name": "remember",
    "inputSchema": {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
            }
        },
        "required": ["items"],
        "additionalProperties": False,
    },
}


def load(path):
    if not os.path.exists(path):
        return set()
    with open(path, encoding="utf-8") as f:
        return set(f.read().split())


def urls(args):
    """The URLs of a well-formed `items`, else None."""
    items = args.get("items")
    if not isinstance(items, list) or not all(isinstance(i, dict) and isinstance(i.get("url"), str) for i in items):
        return None
    return [i["url"] for i in items]


def call(rid, args, state, seen):
    wanted = urls(args) if isinstance(args, dict) else None
    if wanted is None or set(args) != {"items"}:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "invalid arguments"}})
        return
    fresh = [u for u in wanted if u not in seen]
    for url in fresh:
        seen.add(url)
        with open(state, "a", encoding="utf-8") as f:
            f.write(url + "\n")
        try:
            get(url)
        except (OSError, ValueError):
            pass
    text = "fetched %d, already known %d" % (len(fresh), len(wanted) - len(fresh))
    send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}})


def main():
    state = sys.argv[1]
    seen = load(state)
    for request in requests():
        method, rid = request.get("method"), request.get("id")
        if rid is None:
            continue
        if method == "initialize":
            answer_initialize(request, "remembers")
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [TOOL]}})
        elif method == "tools/call" and params(request).get("name") == "remember":
            call(rid, params(request).get("arguments"), state, seen)
        elif method == "tools/call":
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "unknown tool"}})
        else:
            send({"jsonrpc": "2.0", "id": rid, "result": {}})


main()
