"""A stdio MCP server that runs each tools/call on a thread of its own and
answers it with a line of about 100 KiB that reaches stdout in two parts,
0.4 s apart (as a long line does through a pipe its reader drains), the
whole line under the output lock, so no other line splits it. Other requests
are answered at once, so the ping after a call is answered before the
call. Its tool `fetch` GETs its `url` argument. Used by tests/late.rs;
standard library only (with mcp_stdio.py beside it)."""

import json
import sys
import threading
import time

from mcp_stdio import FETCH, lock, serve, try_get


def answer_in_two_parts(rid, p):
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
        time.sleep(0.4)
        sys.stdout.write(text[half:])
        sys.stdout.flush()


def call(rid, p):
    threading.Thread(target=answer_in_two_parts, args=(rid, p)).start()


serve("slow-long-answer", [FETCH], call)
