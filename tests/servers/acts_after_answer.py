"""A stdio MCP server that answers a tools/call at once and acts on it
DELAY seconds later (the first argument, default 0.3), as a gateway that
queues its actions does; when stdin closes, it finishes what it queued before
it exits. Its tool `fetch` GETs its `url` argument. Used by tests/shared.rs;
standard library only."""

import json
import sys
import threading
import time
import urllib.parse
import urllib.request

lock = threading.Lock()


def send(message):
    with lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def act(url, delay):
    time.sleep(delay)
    try:
        with urllib.request.urlopen(urllib.parse.quote(url, safe=":/?&=%"), timeout=5) as response:
            response.read()
    except (OSError, ValueError):
        pass


def main():
    delay = float(sys.argv[1]) if len(sys.argv) > 1 else 0.3
    queued = []
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except (ValueError, RecursionError):
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
            continue
        if not isinstance(request, dict):
            continue
        method, rid = request.get("method"), request.get("id")
        params = request.get("params") if isinstance(request.get("params"), dict) else {}
        if method == "initialize":
            result = {
                "protocolVersion": params.get("protocolVersion"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "acts-after-answer", "version": "1"},
            }
            send({"jsonrpc": "2.0", "id": rid, "result": result})
        elif method == "tools/call" and rid is not None and isinstance(params.get("arguments"), dict):
            send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "queued"}]}})
            queued.append(threading.Thread(target=act, args=(str(params["arguments"].get("url")), delay)))
            queued[-1].start()
        elif rid is not None:
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
    for t in queued:
        t.join()


main()
