"""A stdio MCP server that answers a tools/call at once and acts on it
DELAY seconds later (the first argument, default 0.3), as a gateway that
queues its actions does; when stdin closes, it finishes what it queued before
it exits. Its tool `fetch` GETs its `url` argument. Used by tests/control.rs;
standard library only (with mcp_stdio.py beside it)."""

import sys
import threading

from mcp_stdio import answer_initialize, params, requests, send, try_get


def main():
    delay = float(sys.argv[1]) if len(sys.argv) > 1 else 0.3
    queued = []
    for request in requests():
        method, rid = request.get("method"), request.get("id")
        args = params(request).get("arguments")
        if method == "initialize":
            answer_initialize(request, "acts-after-answer")
        elif method == "tools/call" and rid is not None and isinstance(args, dict):
            send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "queued"}]}})
            queued.append(threading.Thread(target=try_get, args=(str(args.get("url")), delay)))
            queued[-1].start()
        elif rid is not None:
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
    for t in queued:
        t.join()


main()
