"""What the test servers beside it share: JSON-RPC lines written whole
under one lock, the requests read from stdin (a line that does not parse is
answered with a parse error, a value that is not an object is skipped), the
answer to `initialize`, the GET their tools perform, and a loop serving a
list of tools. Standard library only."""

import io
import json
import sys
import threading
import time
import urllib.parse
import urllib.request

lock = threading.Lock()


# A tool that GETs its `url`, a URL by its schema.
FETCH = {
    "name": "fetch",
    "inputSchema": {
        "type": "object",
        "properties": {"url": {"type": "string", "format": "uri"}},
        "required": ["url"],
    },
}


def write(message):
    """Writes one line; the caller holds `lock`."""
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def send(message):
    with lock:
        write(message)


def refuse_constant(name):
    raise ValueError(name + " is not JSON")


def requests(strict=False, bad_line=None, universal=False):
    """The JSON objects on stdin, one per line, until it closes. `strict`
    refuses NaN and Infinity, and answers a request whose id is not a
    string or an integer, or whose `jsonrpc` is not "2.0", with an
    invalid-request error. `bad_line`, if
    given, is called with each line that does not parse. `universal` reads
    stdin as the Python SDK does, through a TextIOWrapper with universal
    newlines: a lone CR ends a line too."""
    lines = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace") if universal else sys.stdin
    for line in lines:
        try:
            request = json.loads(line, parse_constant=refuse_constant if strict else None)
        except (ValueError, RecursionError):
            if bad_line is not None:
                bad_line(line)
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
            continue
        if not isinstance(request, dict):
            continue
        rid = request.get("id")
        bad_version = request.get("jsonrpc") != "2.0"
        if strict and (bad_version or "id" in request and (isinstance(rid, bool) or not isinstance(rid, (str, int)))):
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "invalid request"}})
            continue
        yield request


def params(request):
    """The request's params when they are an object, else an empty one."""
    p = request.get("params")
    return p if isinstance(p, dict) else {}


def answer_initialize(request, name):
    result = {
        "protocolVersion": params(request).get("protocolVersion"),
        "capabilities": {"tools": {}},
        "serverInfo": {"name": name, "version": "1"},
    }
    send({"jsonrpc": "2.0", "id": request.get("id"), "result": result})


def get(url):
    """GETs `url`, its non-ASCII characters escaped; raises OSError or
    ValueError when that fails."""
    with urllib.request.urlopen(urllib.parse.quote(url, safe=":/?&=%"), timeout=5) as response:
        response.read()


def try_get(url, delay=0):
    """GETs `url` after `delay` seconds; a failed GET is only a call that
    did not act, so it is let be."""
    time.sleep(delay)
    try:
        get(url)
    except (OSError, ValueError):
        pass


def serve(name, tools, call, other=None, strict=False, bad_line=None, universal=False):
    """Answers each request until stdin closes: `initialize`, `tools/list`
    with `tools`, `tools/call` through `call(rid, params)`, and any other
    through `other(rid)` (an empty result by default). Notifications get
    nothing. `strict`, `bad_line` and `universal` as for `requests`; `strict` also
    refuses every request but `ping` before `initialize`."""
    initialized = False
    for request in requests(strict, bad_line, universal):
        method, rid = request.get("method"), request.get("id")
        if rid is None:
            continue
        if method == "initialize":
            initialized = True
            answer_initialize(request, name)
        elif strict and not initialized and method != "ping":
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32600, "message": "not initialized"}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": tools}})
        elif method == "tools/call":
            call(rid, params(request))
        elif other is not None:
            other(rid)
        else:
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
