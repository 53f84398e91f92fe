"""A stdio MCP server that is clean as released, but writes a banner to
stdout when VERBOSE is set (as a dependency's import might), and, given
`--config=PATH` naming no file, a friendly error to stdout before it exits
1 (as a crash handler built for a terminal might). Standard library only."""

import os
import sys

from mcp_stdio import send, serve

for arg in sys.argv[1:]:
    if arg.startswith("--config=") and not os.path.exists(arg.split("=", 1)[1]):
        print("error: no configuration at " + arg.split("=", 1)[1])
        sys.exit(1)

if os.environ.get("VERBOSE"):
    print("loading optional extension")
    sys.stdout.flush()


def call(rid, params):
    send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "ok"}]}})


serve("verbose-banner", [], call, strict=True)
