"""A stdio MCP server whose one tool, `get_time`, has no effect a probe can
see: it answers with the time in the `timezone` it is given. It refuses a
tools/call whose id is not a string or an integer, as it must, unless run
with `--lax-ids`: then it answers that call with a success result, which
under `--effect answer` is its action. With `--late`, a call is answered
on a thread of its own 0.3 s after it is read, as the SDKs' concurrent
handlers do: a ping after it is answered first. A batch is skipped, with no
answer and no action. Standard library only."""

import sys
import threading
import time

from mcp_stdio import answer_initialize, params, requests, send

LAX = "--lax-ids" in sys.argv[1:]
LATE = "--late" in sys.argv[1:]
TOOL = {"name": "get_time", "inputSchema": {"type": "object", "required": ["timezone"],
                                            "properties": {"timezone": {"type": "string"}}}}

for request in requests():
    method, rid = request.get("method"), request.get("id")
    if "id" not in request:
        continue
    valid_id = isinstance(rid, (str, int)) and not isinstance(rid, bool)
    args = params(request).get("arguments")
    if not valid_id and not (LAX and method == "tools/call"):
        send({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "invalid id"}})
    elif method == "initialize":
        answer_initialize(request, "clock")
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [TOOL]}})
    elif method != "tools/call" or params(request).get("name") != "get_time":
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "not found"}})
    elif not isinstance(args, dict) or list(args) != ["timezone"] or not isinstance(args["timezone"], str):
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "invalid arguments"}})
    else:
        text = time.strftime("%H:%M:%S") + " in the timezone asked for"
        answer = {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}}
        if LATE:
            threading.Timer(0.3, send, args=(answer,)).start()
        else:
            send(answer)
