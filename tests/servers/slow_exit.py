"""A stdio MCP server that is slow to exit: at EOF it appends "eof" to the
file named by its first argument and waits 5 s before it exits; SIGTERM
appends "term" and ends it at once. It answers `initialize` and `ping`.
Used by tests/shared.rs to see in what order a job's processes are ended;
standard library only (with mcp_stdio.py beside it)."""

import os
import signal
import sys
import time

from mcp_stdio import answer_initialize, requests, send


def note(word):
    with open(sys.argv[1], "a") as log:
        log.write(word + "\n")


def on_term(_signum, _frame):
    note("term")
    os._exit(0)


def main():
    signal.signal(signal.SIGTERM, on_term)
    for request in requests():
        method, rid = request.get("method"), request.get("id")
        if method == "initialize":
            answer_initialize(request, "slow-exit")
        elif rid is not None:
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
    note("eof")
    time.sleep(5)


if __name__ == "__main__":
    main()
