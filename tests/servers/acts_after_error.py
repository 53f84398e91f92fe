"""A stdio MCP server that refuses a tools/call whose id is not a string or
an integer with the right error, as it must, and then acts on it all the
same DELAY seconds later (the first argument, default 0.3): an effect that
lands after its script's window. Valid calls act before they are answered.
Its tool `fetch` GETs its `url` argument. Standard library only."""

import sys
import threading

from mcp_stdio import answer_initialize, params, requests, send, try_get


def main():
    delay = float(sys.argv[1]) if len(sys.argv) > 1 else 0.3
    later = []
    for request in requests():
        method, rid = request.get("method"), request.get("id")
        args = params(request).get("arguments")
        valid_id = isinstance(rid, (str, int)) and not isinstance(rid, bool)
        if method == "initialize":
            answer_initialize(request, "acts-after-error")
        elif method == "tools/call" and "id" in request and not valid_id:
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "invalid id"}})
            if isinstance(args, dict):
                later.append(threading.Thread(target=try_get, args=(str(args.get("url")), delay)))
                later[-1].start()
        elif method == "tools/call" and valid_id and isinstance(args, dict):
            try_get(str(args.get("url")))
            send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "done"}]}})
        elif valid_id:
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
    for t in later:
        t.join()


main()
