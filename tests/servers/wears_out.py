"""A stdio MCP server that serves its first three tools/calls correctly and
then, from the fourth on, starts every answer with a debug line on stdout:
a bug that only a process that has served several scripts shows, which a
fresh session with one call does not repeat. Its tool `fetch` GETs its
`url` argument. Standard library only."""

from mcp_stdio import lock, send, serve, sys, try_get

served = [0]


def call(rid, params):
    args = params.get("arguments")
    if isinstance(args, dict):
        try_get(str(args.get("url")))
    served[0] += 1
    if served[0] > 3:
        with lock:
            sys.stdout.write("debug: served %d calls\n" % served[0])
            sys.stdout.flush()
    send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "done"}]}})


serve("wears-out", [], call)
