"""A stdio MCP server that prints a debug line to stdout on each tool call,
before its answer: the opening alone leaves stdout clean. Standard library
only (with mcp_stdio.py beside it)."""

import sys

from mcp_stdio import send, serve

TOOLS = [{"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}]


def call(rid, p):
    print(f"debug: tools/call {p.get('name')}", flush=True)
    send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "ok"}]}})


serve("debug-on-call", TOOLS, call, strict=True)
