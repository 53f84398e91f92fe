"""A stdio MCP server that serves its first N tools/calls correctly (N the
first argument, 3 by default) and then starts every answer with a debug
line on stdout: a bug that only a process that has served several scripts
shows, which a fresh session with fewer calls does not repeat. Its tool
`fetch` GETs its `url` argument. Standard library only."""

from mcp_stdio import lock, send, serve, sys, try_get

served = [0]
worn_after = int(sys.argv[1]) if len(sys.argv) > 1 else 3


def call(rid, params):
    # An id no response may carry is refused, so that stdout stays clean
    # but for the debug line.
    if isinstance(rid, bool) or not isinstance(rid, (str, int)):
        send({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}})
        return
    args = params.get("arguments")
    if isinstance(args, dict):
        try_get(str(args.get("url")))
    served[0] += 1
    if served[0] > worn_after:
        with lock:
            sys.stdout.write("debug: served %d calls\n" % served[0])
            sys.stdout.flush()
    send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "done"}]}})


serve("wears-out", [], call)
