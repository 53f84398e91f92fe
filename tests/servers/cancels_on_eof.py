"""A stdio MCP server that, as the Python SDK's does, handles each tools/call
concurrently and, when stdin closes, cancels the calls still in flight: they
are answered "Connection closed" and never act. Its tool `fetch` GETs its
`url` argument after DELAY seconds (the first argument, default 0.3), as a
tool that does real work would. A client that closes stdin before its answer
has come loses the call. Used by tests/answers_awaited.rs; standard library
only."""

import json
import os
import sys
import threading
import time
import urllib.parse
import urllib.request

lock = threading.Lock()
in_flight = {}  # request id (as JSON text) -> request, until it acts
closing = False


def send(message):
    with lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def call(request, delay):
    time.sleep(delay)
    key = json.dumps(request["id"])
    with lock:
        if closing:
            return
        del in_flight[key]
    url = urllib.parse.quote(request["params"]["arguments"]["url"], safe=":/?&=%")
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            response.read()
    except (OSError, ValueError) as e:
        send({"jsonrpc": "2.0", "id": request["id"], "result": {"content": [{"type": "text", "text": str(e)}], "isError": True}})
        return
    send({"jsonrpc": "2.0", "id": request["id"], "result": {"content": [{"type": "text", "text": "ok"}]}})


def valid_call(request):
    params = request.get("params")
    args = params.get("arguments") if isinstance(params, dict) else None
    return isinstance(args, dict) and isinstance(args.get("url"), str)


def main():
    global closing
    delay = float(sys.argv[1]) if len(sys.argv) > 1 else 0.3
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except (ValueError, RecursionError):
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
            continue
        if not isinstance(request, dict):
            continue
        method, rid = request.get("method"), request.get("id")
        if method == "initialize":
            result = {
                "protocolVersion": request["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "cancels-on-eof", "version": "1"},
            }
            send({"jsonrpc": "2.0", "id": rid, "result": result})
        elif method == "tools/call" and rid is not None and valid_call(request):
            with lock:
                in_flight[json.dumps(rid)] = request
            threading.Thread(target=call, args=(request, delay), daemon=True).start()
        elif rid is not None:
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
    with lock:
        closing = True
        for request in in_flight.values():
            error = {"code": -32000, "message": "Connection closed"}
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": error}) + "\n")
        sys.stdout.flush()
    os._exit(0)


main()
