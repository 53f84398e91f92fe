"""A stdio MCP server whose tool `fetch` GETs its `url` argument, read
from stdin on a thread of its own while the main thread waits for it, as
an asyncio server's reader task runs beside its loop. A line nested over
1,000 deep raises RecursionError in the reader (as json.loads does past
CPython's recursion limit; raised here by count, whatever the interpreter's
limits), and it is not caught: the thread dies, the process runs on, and
nothing after that line is read or answered. A request whose id is
neither a string nor an integer gets no answer at all (a server owes it an
error with a null id). With --ignore-ping it never answers `ping` (which
MCP requires) and is otherwise the same. Used by tests/stalled.rs;
standard library only (with mcp_stdio.py beside it)."""

import json
import sys
import threading

from mcp_stdio import FETCH, answer_initialize, params, send, try_get


IGNORE_PING = "--ignore-ping" in sys.argv[1:]


def read():
    for line in sys.stdin:
        if line.count("[") > 1000:
            raise RecursionError("nested too deep")  # not caught: the reader dies
        request = json.loads(line)
        rid = request.get("id") if isinstance(request, dict) else None
        if isinstance(rid, bool) or not isinstance(rid, (str, int)):
            continue
        method = request.get("method")
        if method == "initialize":
            answer_initialize(request, "stalls-on-depth")
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [FETCH]}})
        elif method == "ping" and IGNORE_PING:
            pass
        elif method == "tools/call":
            try_get(str(params(request).get("arguments", {}).get("url")))
            send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "fetched"}]}})
        else:
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
    done.set()


done = threading.Event()
threading.Thread(target=read, daemon=True).start()
done.wait()
