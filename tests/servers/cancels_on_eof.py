"""A stdio MCP server that, as the Python SDK's does, handles each tools/call
concurrently and, when stdin closes, cancels the calls still in flight: they
are answered "Connection closed" and never act. Its tool `fetch` GETs its
`url` argument after DELAY seconds (the first argument, default 0.3), as a
tool that does real work would. A client that closes stdin before its answer
has come loses the call. A second argument N:SECONDS makes the Nth valid
call take SECONDS instead, as a call that meets a slow site would; with
N:SECONDS:spin, it spends them busy on the CPU, as a call that computes. A
third argument `silent` drops the calls in flight at EOF without a word, as
the Python SDK does. Used by
tests/concurrent.rs; standard library only (with
mcp_stdio.py beside it)."""

import json
import os
import sys
import threading
import time

from mcp_stdio import answer_initialize, get, lock, params, requests, send, write

in_flight = {}  # request id (as JSON text) -> request, until it acts
closing = False


def call(request, delay, spin=False):
    until = time.monotonic() + delay
    while spin and time.monotonic() < until:
        pass
    time.sleep(max(0.0, until - time.monotonic()))
    key = json.dumps(request["id"])
    with lock:
        if closing:
            return
        del in_flight[key]
    try:
        get(request["params"]["arguments"]["url"])
    except (OSError, ValueError) as e:
        send({"jsonrpc": "2.0", "id": request["id"], "result": {"content": [{"type": "text", "text": str(e)}], "isError": True}})
        return
    send({"jsonrpc": "2.0", "id": request["id"], "result": {"content": [{"type": "text", "text": "ok"}]}})


def valid_call(request):
    args = params(request).get("arguments")
    return isinstance(args, dict) and isinstance(args.get("url"), str)


def main():
    global closing
    delay = float(sys.argv[1]) if len(sys.argv) > 1 else 0.3
    slow = (sys.argv[2] if len(sys.argv) > 2 else "0:0").split(":")
    slow_nth, slow_delay, spin = slow[0], slow[1], slow[2:] == ["spin"]
    calls = 0
    for request in requests():
        method, rid = request.get("method"), request.get("id")
        if method == "initialize":
            answer_initialize(request, "cancels-on-eof")
        elif method == "tools/call" and rid is not None and valid_call(request):
            with lock:
                in_flight[json.dumps(rid)] = request
            calls += 1
            slow = calls == int(slow_nth)
            took = float(slow_delay) if slow else delay
            threading.Thread(target=call, args=(request, took, slow and spin), daemon=True).start()
        elif rid is not None:
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
    with lock:
        closing = True
        silent = sys.argv[3:4] == ["silent"]
        for request in [] if silent else in_flight.values():
            error = {"code": -32000, "message": "Connection closed"}
            write({"jsonrpc": "2.0", "id": request["id"], "error": error})
    os._exit(0)


main()
