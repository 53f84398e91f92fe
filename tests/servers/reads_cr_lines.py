"""A strict stdio MCP server whose tool `fetch` GETs its `url`, reading
stdin as the Python SDK's stdio transport does: through a TextIOWrapper
with universal newlines, so a lone CR ends a line too, and a call hidden
between two raw CRs inside another message's string is read, and run, as
a line of its own. `--late-ms N` answers each call on a thread of its
own N ms after it was read (acting first), as a server whose calls take
their time does: most answers then come in a later script's window. Used
by tests/cr_lines.rs; standard library only (with mcp_stdio.py beside it)."""

import sys
import threading
import time

from mcp_stdio import send, serve, try_get

LATE = float(sys.argv[sys.argv.index("--late-ms") + 1]) / 1000 if "--late-ms" in sys.argv else 0

FETCH = {
    "name": "fetch",
    "inputSchema": {"type": "object", "properties": {"url": {"type": "string", "format": "uri"}}, "required": ["url"]},
}


def run(rid, p):
    args = p.get("arguments")
    if p.get("name") != "fetch" or not isinstance(args, dict) or not isinstance(args.get("url"), str):
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "invalid params"}})
        return
    try_get(args["url"])
    send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "fetched"}]}})


def call(rid, p):
    if not LATE:
        run(rid, p)
        return

    def later():
        time.sleep(LATE)
        run(rid, p)

    threading.Thread(target=later, daemon=True).start()


serve("reads-cr-lines", [FETCH], call, strict=True, universal=True)
