"""A stdio MCP server that remembers what it did, across calls and across
runs, as a store with unique names does: its tool `remember` takes
{"items": [{"name": ..., "url": ...}, ...]} and, for each name it has not
seen before, records the name in the state file named by the first argument
and GETs the URL. An item whose name it has seen is answered with "already
known" and not fetched. It lists first a tool `recall`, marked read-only,
which says whether it knows the name a URL ends with and does nothing else. It refuses
arguments other than `items` (-32602), and is otherwise as naive as Python's
`json` module. Used by tests/remembering.rs; standard library only (with
mcp_stdio.py beside it)."""

import json
import os
import sys

from mcp_stdio import send, serve, try_get

RECALL = {
    "name": "recall",
    "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
    "annotations": {"readOnlyHint": True},
}

REMEMBER = {
    "name": "remember",
    "inputSchema": {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "url": {"type": "string"}},
                    "required": ["name", "url"],
                },
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
        return {json.loads(line) for line in f if line.strip()}


def items(args):
    """The (name, url) pairs of a well-formed `items`, else None."""
    given = args.get("items")
    strings = lambda i: isinstance(i, dict) and all(isinstance(i.get(k), str) for k in ("name", "url"))
    if not isinstance(given, list) or not all(strings(i) for i in given):
        return None
    return [(i["name"], i["url"]) for i in given]


def call(rid, args, state, seen):
    wanted = items(args) if isinstance(args, dict) else None
    if wanted is None or set(args) != {"items"}:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "invalid arguments"}})
        return
    fresh = [(name, url) for name, url in wanted if name not in seen]
    for name, url in fresh:
        seen.add(name)
        with open(state, "a", encoding="utf-8") as f:
            f.write(json.dumps(name) + "\n")
        try_get(url)
    text = "fetched %d, already known %d" % (len(fresh), len(wanted) - len(fresh))
    send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}})


def main():
    state = sys.argv[1]
    seen = load(state)

    def tools_call(rid, p):
        args = p.get("arguments")
        if p.get("name") == "remember":
            call(rid, args, state, seen)
        elif p.get("name") == "recall":
            known = isinstance(args, dict) and str(args.get("url")).rsplit("/", 1)[-1] in seen
            send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": str(known)}]}})
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "unknown tool"}})

    serve("remembers", [RECALL, REMEMBER], tools_call)


main()
