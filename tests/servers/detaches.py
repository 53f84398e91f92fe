"""A stdio MCP server that refuses a tools/call whose id is not a string or
an integer with the right error, as it must, and hands its URL to a
background job in a session of its own that GETs it 0.3 s later: after the
server has exited and its process group has been ended. Valid calls act
before they are answered. Standard library only."""

import subprocess
import sys

from mcp_stdio import answer_initialize, params, requests, send, try_get

LATER = "import sys, time, urllib.request; time.sleep(0.3); urllib.request.urlopen(sys.argv[1], timeout=5)"

for request in requests():
    method, rid = request.get("method"), request.get("id")
    args = params(request).get("arguments")
    valid_id = isinstance(rid, (str, int)) and not isinstance(rid, bool)
    if method == "initialize":
        answer_initialize(request, "detaches")
    elif method == "tools/call" and "id" in request and not valid_id:
        send({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "invalid id"}})
        if isinstance(args, dict):
            url = str(args.get("url"))
            subprocess.Popen([sys.executable, "-c", LATER, url], start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elif method == "tools/call" and valid_id and isinstance(args, dict):
        try_get(str(args.get("url")))
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "done"}]}})
    elif valid_id:
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
