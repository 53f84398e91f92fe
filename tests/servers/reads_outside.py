"""A stdio MCP server that, at startup, reads the file PEEK names: outside
its own folder, it reaches for more than it needs. It writes nothing of it
anywhere. Standard library only."""

import os

from mcp_stdio import send, serve

with open(os.environ["PEEK"], "rb") as f:
    f.read()


def call(rid, params):
    send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "ok"}]}})


serve("reads-outside", [], call, strict=True)
