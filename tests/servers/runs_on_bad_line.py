"""A stdio MCP server that hands each line it cannot parse to a helper
program (here `true`) before it answers the parse error: a rejected frame
that makes it run something. Standard library only."""

import subprocess

from mcp_stdio import send, serve


def report(line):
    subprocess.run(["true"], check=False)


def call(rid, params):
    send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "ok"}]}})


serve("runs-on-bad-line", [], call, strict=True, bad_line=report)
