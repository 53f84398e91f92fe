"""A stdio MCP server whose one tool, `get_time`, has no effect a probe can
see: it answers with the time in the `timezone` it is given. It refuses a
tools/call whose id is not a string or an integer, as it must, unless run
with `--lax-ids`: then it answers that call with a success result, which
under `--effect answer` is its action. Standard library only."""

import sys
import time

from mcp_stdio import answer_initialize, params, requests, send

LAX = "--lax-ids" in sys.argv[1:]
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
        now = time.strftime("%H:%M:%S")
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": f"{now} in {args['timezone']}"}]}})
