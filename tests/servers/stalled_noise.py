"""A stdio MCP server that answers each request at once. With its answer
to the first marker of a persistent process (the first request whose id
begins `portcullis-mark-`; a fresh session's marker is another), in the same
write, it begins a line of debug text on stdout: the line begins in the
first script's window, however loaded the machine. It then holds its
output lock GAP seconds (the first argument, default 2.5) and only then
ends the line, still unfinished when the second script's wait ran out.
Its tool `fetch` GETs its `url` argument.

Used by tests/late.rs; standard library only (with mcp_stdio.py beside it)."""

import json
import sys
import threading
import time

from mcp_stdio import FETCH, lock, send, serve, try_get, write

GAP = float(sys.argv[1]) if len(sys.argv) > 1 else 2.5
begun = False


def call(rid, p):
    try_get(str(p.get("arguments", {}).get("url")))
    send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "done"}]}})


def end_line():
    time.sleep(GAP)
    sys.stdout.write(" ... ended\n")
    sys.stdout.flush()
    lock.release()


def other(rid):
    global begun
    lock.acquire()
    answer = {"jsonrpc": "2.0", "id": rid, "result": {}}
    if begun or not (isinstance(rid, str) and rid.startswith("portcullis-mark-")):
        write(answer)
        lock.release()
        return
    begun = True
    sys.stdout.write(json.dumps(answer) + "\ndebug: a line begun")
    sys.stdout.flush()
    threading.Thread(target=end_line).start()


serve("stalled-noise", [FETCH], call, other)
