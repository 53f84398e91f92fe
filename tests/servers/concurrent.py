"""A stdio MCP server that answers requests concurrently, as the official
SDKs do: a tools/call is answered on its own thread after a delay, so a ping
sent after it is answered first. Its tool `fetch` GETs its `url` argument.
Used by tests/concurrent.rs; standard library only.

With the arguments STATE_DIR N [SECONDS [EVERY]], it counts its starts in
STATE_DIR and sleeps SECONDS (default 1) before serving on its Nth start, as
a server slowed by a loaded machine would, and EVERY seconds (default 0) on
every other start, as an interpreter slow to start would. Further arguments
VERSION=SECONDS make it sleep that long before answering an `initialize` for
that protocol version."""

import json
import os
import sys
import threading
import time
import urllib.request

lock = threading.Lock()


def send(message):
    with lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def call(request):
    time.sleep(0.02)
    url = request["params"]["arguments"]["url"]
    with urllib.request.urlopen(url, timeout=5) as response:
        response.read()
    send({"jsonrpc": "2.0", "id": request["id"], "result": {"content": [{"type": "text", "text": "ok"}]}})


def count_start(state):
    """The number of this start: the first free start-N file, created."""
    for n in range(1, 1000):
        try:
            os.close(os.open(os.path.join(state, f"start-{n}"), os.O_CREAT | os.O_EXCL))
            return n
        except FileExistsError:
            continue
    return 0


def main():
    if len(sys.argv) >= 3:
        slowed = count_start(sys.argv[1]) == int(sys.argv[2])
        every = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
        time.sleep((float(sys.argv[3]) if len(sys.argv) > 3 else 1.0) if slowed else every)
    slow_init = dict((v, float(s)) for v, s in (a.split("=") for a in sys.argv[5:]))
    threads = []
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
            continue
        method, rid = request.get("method"), request.get("id")
        if method == "initialize":
            version = request["params"]["protocolVersion"]
            time.sleep(slow_init.get(version, 0.0))
            result = {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": {"name": "concurrent", "version": "1"}}
            send({"jsonrpc": "2.0", "id": rid, "result": result})
        elif method == "tools/call":
            threads.append(threading.Thread(target=call, args=(request,)))
            threads[-1].start()
        elif rid is not None:
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
    for t in threads:
        t.join()


main()
