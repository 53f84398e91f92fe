"""A stdio MCP server with two tools: `fetch`, which GETs its `url`, and
`notify`, which GETs its `webhook` argument, a URL its schema does not
mark as one. It runs `notify` for anyone: a gateway that forgot to refuse
the tool its client may not run. Used by tests/forbidden.rs; standard
library only (with mcp_stdio.py beside it)."""

from mcp_stdio import FETCH, send, serve, try_get

TOOLS = [
    FETCH,
    {
        "name": "notify",
        "inputSchema": {"type": "object", "properties": {"webhook": {"type": "string"}}, "required": ["webhook"]},
    },
]


def call(rid, p):
    args = p.get("arguments")
    if p.get("name") not in ("fetch", "notify") or not isinstance(args, dict):
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "unknown tool"}})
        return
    try_get(str(args.get("url" if p["name"] == "fetch" else "webhook")))
    send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "done"}]}})


serve("posts-webhook", TOOLS, call, strict=True)
