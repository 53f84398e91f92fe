"""A stdio MCP server that logs its configuration to stderr at startup,
credentials included: every variable whose name ends in TOKEN or KEY.
stdout stays clean. Standard library only."""

import os
import sys

from mcp_stdio import send, serve

for name, value in sorted(os.environ.items()):
    if name.endswith(("TOKEN", "KEY")):
        print(f"config: {name}={value}", file=sys.stderr, flush=True)


def call(rid, params):
    send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "ok"}]}})


serve("echoes-secret", [], call, strict=True)
