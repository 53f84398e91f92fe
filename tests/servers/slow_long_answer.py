"""A stdio MCP server that runs each tools/call on a thread of its own and
answers it with a line of about 100 KiB that reaches stdout in two parts,
GAP seconds apart (the first argument, default 0.4; as a long line does
through a pipe its reader drains), the whole line under the output lock, so
no other line splits it. Other requests are answered at once, so the ping
after a call is answered before the call. Its tool `fetch` GETs its `url`
argument.

With a second argument `mixed`, the first call of each three is answered at
once and acts 0.3 s later, the second is the long answer above, begun
0.05 s on, and the third is answered in the same write as the rest of the
second: a window that waits for the first call to act ends with the
second's line half written, and the third's answer comes with the rest.

Used by tests/late.rs; standard library only (with mcp_stdio.py beside it)."""

import json
import sys
import threading
import time

from mcp_stdio import FETCH, lock, send, serve, try_get

GAP = float(sys.argv[1]) if len(sys.argv) > 1 else 0.4
MIXED = len(sys.argv) > 2 and sys.argv[2] == "mixed"
calls = 0


third = []  # (rid, params) of the third call, answered with the second's rest


def long_answer(rid, p, delay=0.0):
    time.sleep(delay)
    args = p.get("arguments")
    if not isinstance(args, dict) or p.get("name") != "fetch":
        line = {"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "bad call"}}
        text = json.dumps(line) + "\n"
    else:
        try_get(str(args.get("url")))
        result = {"content": [{"type": "text", "text": "x" * (100 << 10)}]}
        text = json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}) + "\n"
    half = len(text) // 2
    with lock:
        sys.stdout.write(text[:half])
        sys.stdout.flush()
        time.sleep(GAP)
        rest = text[half:]
        for rid3, p3 in third:
            try_get(str(p3.get("arguments", {}).get("url")))
            rest += json.dumps({"jsonrpc": "2.0", "id": rid3, "result": {"content": [{"type": "text", "text": "done"}]}}) + "\n"
        third.clear()
        sys.stdout.write(rest)
        sys.stdout.flush()


def acts_after_answer(rid, p):
    send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "queued"}]}})
    try_get(str(p.get("arguments", {}).get("url")), 0.3)


def call(rid, p):
    global calls
    calls += 1
    if not MIXED:
        threading.Thread(target=long_answer, args=(rid, p)).start()
    elif calls % 3 == 1:
        threading.Thread(target=acts_after_answer, args=(rid, p)).start()
    elif calls % 3 == 2:
        threading.Thread(target=long_answer, args=(rid, p, 0.05)).start()
    else:
        third.append((rid, p))


serve("slow-long-answer", [FETCH], call)
