"""A stdio MCP server that answers every request at once and, 0.1 s after
each tools/call's answer, writes a debug line to stdout: output that lands
after its script's window, which is still that script's. Its tool `fetch`
GETs its `url` argument before it answers. Standard library only."""

import threading
import time

from mcp_stdio import lock, send, serve, sys, try_get


def debug_later():
    time.sleep(0.1)
    with lock:
        sys.stdout.write("debug: call done\n")
        sys.stdout.flush()


def call(rid, params):
    args = params.get("arguments")
    if isinstance(args, dict):
        try_get(str(args.get("url")))
    send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "done"}]}})
    threading.Thread(target=debug_later).start()


serve("late-banner", [], call)
