#!/usr/bin/env python3
"""A strict, spec-conforming MCP stdio server, used as a test oracle.

Usage: python3 strict.py --log FILE [--policy close|keep-open] [--revision R] [--bug NAME]...

Follows RFC 8259, JSON-RPC 2.0 and the MCP stdio transport in both eras:
the handshake revisions 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25,
and the stateless 2026-07-28, where a connection's first request decides
(`initialize` opens the handshake era; any other request with a whole
`_meta` envelope opens a stateless one, which then serves only requests
whose envelope names 2026-07-28). --revision or --handshake-only keep it
to the handshake era. One tool, "record",
appends one JSON line to the --log file each time it is validly called. In
stateless sessions a second tool, "purge", appends one only once the client
has confirmed: its call needs the `elicitation` capability declared by that
very request, gets an `input_required` result whose `requestState` is
signed (HMAC) and names the target, and acts on a retry that carries that
state, unspent, for the same target, with an accepting answer. Standard
library only. Planted bugs (off by default): id-true, lax-jsonrpc (serves
a request whose `jsonrpc` is missing or wrong), lenient-args, banner;
and in the stateless era no-envelope (serves a call without a whole
envelope), any-version (serves a call naming another revision),
inherit-capability (counts a capability an earlier request declared),
trust-state (takes any requestState for a confirmation), replay-state
(never spends a requestState), unbound-state (takes a requestState signed
for another target), untyped (no `resultType` in results).
"""
import argparse
import base64
import hashlib
import hmac
import json
import math
import os
import secrets
import sys

REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST = "2025-11-25"
ONLY_REVISION = None                 # --revision: the one revision negotiated
STATELESS_TOO = True                 # whether it speaks 2026-07-28 (not with --revision or --handshake-only)
BATCH_REVISION = "2025-03-26"
MAX_LINE = 4 * 1024 * 1024          # bytes, not counting the terminating LF
MAX_DEPTH = 64
MAX_INT = 2 ** 53 - 1
BOM = b"\xef\xbb\xbf"
BLANK = b" \t\r"
BUGS = ("id-true", "lax-jsonrpc", "lenient-args", "banner",
        "no-envelope", "any-version", "inherit-capability", "trust-state", "replay-state", "unbound-state", "untyped")
STATELESS = "2026-07-28"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
UNSUPPORTED_VERSION = -32022
MISSING_CAPABILITY = -32021
STATE_KEY = secrets.token_bytes(32)   # signs the requestStates this process hands out

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

RECORD_TOOL = {
    "name": "record",
    "description": "Append a note (and an optional count) to the log.",
    "inputSchema": {
        "type": "object",
        "properties": {"note": {"type": "string"},
                       "count": {"type": "integer"}},
        "required": ["note"],
        "additionalProperties": False,
    },
}

PURGE_TOOL = {
    "name": "purge",
    "description": "Purge a target from the log's cache; asks the user to confirm first.",
    "inputSchema": {
        "type": "object",
        "properties": {"target": {"type": "string"}},
        "required": ["target"],
        "additionalProperties": False,
    },
}


LENIENT = False
CRLF = "accept"


class ParseFailure(ValueError):
    """Raised when a line is not exactly one acceptable JSON value."""


def _reject_constant(name):
    """parse_constant hook: NaN, Infinity and -Infinity are not JSON."""
    raise ParseFailure(f"non-finite number {name}")


def _checked_int(text):
    """parse_int hook: reject integers outside the interoperable range."""
    value = int(text)
    if abs(value) > MAX_INT:
        raise ParseFailure("integer magnitude above 2**53-1")
    return value


def _checked_float(text):
    """parse_float hook: reject numbers that overflow to infinity."""
    value = float(text)
    if math.isinf(value):
        raise ParseFailure("number overflows to infinity")
    return value


def _unique_pairs(pairs):
    """object_pairs_hook: build a dict, rejecting duplicate keys."""
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise ParseFailure(f"duplicate key {key!r}")
        obj[key] = value
    return obj


def _check_string(text):
    """Reject strings holding lone surrogates (escaped \\uD800..\\uDFFF)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ParseFailure("lone UTF-16 surrogate in string") from None


def _check_tree(value):
    """Walk a parsed value: nesting depth and surrogate-free strings/keys."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, str):
            _check_string(node)
        elif isinstance(node, (dict, list)):
            if depth > MAX_DEPTH:
                raise ParseFailure(f"nesting deeper than {MAX_DEPTH}")
            if isinstance(node, dict):
                for key, item in node.items():
                    _check_string(key)
                    stack.append((item, depth + 1))
            else:
                stack.extend((item, depth + 1) for item in node)


def parse_line_lenient(raw):
    """Parse one line as the specifications allow and no stricter: a BOM
    is skipped, duplicate keys keep the last value, lone surrogates,
    huge numbers and deep nesting are read as Python reads them."""
    if b"\x00" in raw:
        raise ParseFailure("NUL byte in line")
    text = raw.removeprefix(BOM).decode("utf-8")
    try:
        return json.loads(text, strict=True, parse_constant=_reject_constant)
    except RecursionError:
        raise ParseFailure("nesting too deep for this reader") from None


def parse_line(raw):
    """Parse one line (bytes, LF removed) strictly; raise on any defect."""
    if LENIENT:
        return parse_line_lenient(raw)
    if b"\x00" in raw:
        raise ParseFailure("NUL byte in line")
    if raw.startswith(BOM):
        raise ParseFailure("UTF-8 byte order mark")
    text = raw.decode("utf-8")      # strict: invalid UTF-8 raises
    value = json.loads(text, strict=True, object_pairs_hook=_unique_pairs,
                       parse_int=_checked_int, parse_float=_checked_float,
                       parse_constant=_reject_constant)
    _check_tree(value)
    return value


def error(rid, code, message):
    """Build a JSON-RPC error response."""
    return {"jsonrpc": "2.0", "id": rid,
            "error": {"code": code, "message": message}}


def result(rid, value):
    """Build a JSON-RPC success response."""
    return {"jsonrpc": "2.0", "id": rid, "result": value}


def whole_envelope(params):
    """Whether a request's `_meta` names a revision (a string) and the
    client's capabilities (an object)."""
    meta = params.get("_meta")
    return isinstance(meta, dict) and isinstance(meta.get(VERSION_KEY), str) \
        and isinstance(meta.get(CAPABILITIES_KEY), dict)


class Server:
    """Protocol state and message handling for one stdio session."""

    def __init__(self, log_path, bugs):
        self.log_path = log_path
        self.bugs = set(bugs)
        self.version = None         # negotiated revision, None before init
        self.stateless = False      # whether the first request opened a 2026-07-28 session
        self.elicited = False       # whether any request declared elicitation (for a bug)
        self.spent = set()          # nonces of requestStates already redeemed
        self.used_ids = set()       # ids already answered (never reply twice)
        self.out = sys.stdout.buffer
        self.crlf_line = False      # whether the line being handled ended in CRLF

    def write_raw(self, data):
        """Write bytes to stdout and flush; survive a closed stdout."""
        try:
            self.out.write(data)
            self.out.flush()
        except OSError:             # e.g. BrokenPipeError: discard output
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.out.fileno())
            os.close(devnull)

    def send(self, message):
        """Write one complete JSON-RPC message (or batch) as one line."""
        line = json.dumps(message, separators=(",", ":"), ensure_ascii=True)
        self.write_raw(line.encode("ascii") + b"\n")

    def handle_line(self, raw):
        """Handle one line; return True if it was a parse/invalid-request error."""
        if raw.strip(BLANK) == b"":
            return False
        self.crlf_line = raw.endswith(b"\r")
        if self.crlf_line and CRLF == "reject":
            self.send(error(None, PARSE_ERROR, "Parse error: CR before LF"))
            return True
        try:
            value = parse_line(raw)
        except Exception as exc:    # any defect at all is a parse error
            print(f"strict: parse error: {exc!r}"[:500], file=sys.stderr)
            self.send(error(None, PARSE_ERROR, "Parse error"))
            return True
        try:
            reply, fatal = self.handle_value(value)
        except Exception as exc:    # a fault of this server's own: said, not a crash
            print(f"strict: internal error: {exc!r}"[:500], file=sys.stderr)
            rid = value.get("id") if isinstance(value, dict) and type(value.get("id")) in (str, int) else None
            reply, fatal = error(rid, INTERNAL_ERROR, "Internal error"), False
        if reply is not None:
            self.send(reply)
        return fatal

    def handle_value(self, value):
        """Handle a parsed value, a single message or a batch."""
        if not isinstance(value, list):
            return self.handle_message(value)
        if self.version != BATCH_REVISION:
            return error(None, INVALID_REQUEST, "Batches not supported"), True
        if not value:
            return error(None, INVALID_REQUEST, "Empty batch"), True
        replies, fatal = [], False
        for item in value:
            reply, bad = self.handle_message(item)
            fatal = fatal or bad
            if reply is not None:
                replies.append(reply)
        return (replies or None), fatal

    def valid_id(self, rid):
        """An id must be a string or an integer (bool is neither)."""
        if type(rid) is bool:
            return "id-true" in self.bugs
        return type(rid) in (str, int)

    def handle_message(self, msg):
        """Validate one message; return (reply or None, fatal)."""
        invalid = error(None, INVALID_REQUEST, "Invalid Request")
        if not isinstance(msg, dict):
            return invalid, True
        if "method" not in msg and ("result" in msg or "error" in msg):
            return None, False      # a client response: ignore silently
        if not LENIENT and "result" in msg:
            return invalid, True    # request and response at once: ambiguous
        lax = "lax-jsonrpc" in self.bugs
        if (msg.get("jsonrpc") != "2.0" and not lax) or not isinstance(msg.get("method"), str):
            return invalid, True
        if "id" in msg and not self.valid_id(msg["id"]):
            return invalid, True
        if "params" in msg and not isinstance(msg["params"], dict):
            return invalid, True
        method, params = msg["method"], msg.get("params", {})
        if "id" not in msg:
            return None, False      # notification: never answered, no effect
        rid = msg["id"]
        key = (type(rid).__name__, rid)
        if key in self.used_ids:
            return error(None, INVALID_REQUEST, "Request id already used"), True
        self.used_ids.add(key)
        return self.handle_request(method, params, rid)

    def handle_request(self, method, params, rid):
        """Dispatch a valid request; return (reply, fatal)."""
        if STATELESS_TOO and self.version is None and method != "initialize" and whole_envelope(params):
            self.version, self.stateless = STATELESS, True
        if self.stateless:
            return self.handle_stateless(method, params, rid), False
        if method == "initialize":
            if self.version is not None:
                return error(rid, INVALID_REQUEST, "Already initialized"), True
            requested = params.get("protocolVersion")
            if not isinstance(requested, str):
                return error(rid, INVALID_PARAMS, "protocolVersion must be a string"), False
            self.version = ONLY_REVISION or (requested if requested in REVISIONS else LATEST)
            return result(rid, {"protocolVersion": self.version,
                                "capabilities": {"tools": {}},
                                "serverInfo": {"name": "strict", "version": "1.0"}}), False
        if method == "ping":
            return result(rid, {}), False
        if self.version is None:
            return error(rid, INVALID_REQUEST, "Server not initialized"), True
        if method == "tools/list":
            return result(rid, {"tools": [RECORD_TOOL]}), False
        if method == "tools/call":
            return self.call_tool(params, rid), False
        return error(rid, METHOD_NOT_FOUND, "Method not found"), False

    def handle_stateless(self, method, params, rid):
        """A request of a 2026-07-28 session: its envelope first, then the method."""
        meta = params.get("_meta")
        version = meta.get(VERSION_KEY) if isinstance(meta, dict) else None
        capabilities = meta.get(CAPABILITIES_KEY) if isinstance(meta, dict) else None
        lax = method == "tools/call"
        if not (isinstance(version, str) and isinstance(capabilities, dict)):
            if not (lax and "no-envelope" in self.bugs):
                return error(rid, INVALID_PARAMS, "_meta needs protocolVersion and clientCapabilities")
            capabilities = capabilities if isinstance(capabilities, dict) else {}
        elif version != STATELESS and not (lax and "any-version" in self.bugs):
            reply = error(rid, UNSUPPORTED_VERSION, "Unsupported protocol version")
            reply["error"]["data"] = {"supported": [STATELESS], "requested": version}
            return reply
        declared = isinstance(capabilities.get("elicitation"), dict)
        elicits = declared or (self.elicited and "inherit-capability" in self.bugs)
        self.elicited = self.elicited or declared
        if method == "server/discover":
            return self.typed(rid, {"supportedVersions": [STATELESS],
                                    "capabilities": {"tools": {}},
                                    "_meta": {"io.modelcontextprotocol/serverInfo":
                                              {"name": "strict", "version": "1.0"}},
                                    "ttlMs": 0, "cacheScope": "private"})
        if method == "tools/list":
            return self.typed(rid, {"tools": [RECORD_TOOL, PURGE_TOOL]})
        if method == "tools/call" and params.get("name") == PURGE_TOOL["name"]:
            return self.purge(params, rid, elicits)
        if method == "tools/call":
            reply = self.call_tool(params, rid)
            return self.typed(rid, reply["result"]) if "result" in reply else reply
        return error(rid, METHOD_NOT_FOUND, "Method not found")

    def typed(self, rid, value):
        """A stateless result, its `resultType` "complete" unless it says
        otherwise."""
        if "untyped" not in self.bugs:
            value = {"resultType": "complete", **value}
        return result(rid, value)

    def purge(self, params, rid, elicits):
        """The confirmation step of "purge", then the purge itself."""
        args = params.get("arguments")
        if not isinstance(args, dict) or set(args) != {"target"} or not isinstance(args["target"], str):
            return error(rid, INVALID_PARAMS, "purge takes one string argument, target")
        if not elicits:
            reply = error(rid, MISSING_CAPABILITY, "purge asks for confirmation: declare elicitation")
            reply["error"]["data"] = {"requiredCapabilities": {"elicitation": {}}}
            return reply
        target, state, answers = args["target"], params.get("requestState"), params.get("inputResponses")
        if state is None:
            # Answers to nothing this server asked are no confirmation: ask.
            return self.typed(rid, self.ask(target))
        if not isinstance(state, str):
            return error(rid, INVALID_PARAMS, "requestState must be a string")
        if "trust-state" not in self.bugs:
            nonce = self.redeem(state, target)
            if nonce is None:
                return error(rid, INVALID_PARAMS, "requestState was not handed out for this call")
            answer = answers.get("confirm") if isinstance(answers, dict) else None
            accepted = isinstance(answer, dict) and answer.get("action") == "accept" \
                and isinstance(answer.get("content"), dict) and answer["content"].get("confirm") is True
            if not accepted:
                return self.typed(rid, {"content": [{"type": "text", "text": "not purged"}]})
            if "replay-state" not in self.bugs:
                self.spent.add(nonce)
        if not self.append({"purge": target}):
            return error(rid, INTERNAL_ERROR, "Cannot write log")
        return self.typed(rid, {"content": [{"type": "text", "text": "purged"}]})

    def ask(self, target):
        """An input_required result asking to confirm a purge of `target`."""
        body = base64.urlsafe_b64encode(json.dumps({"target": target, "nonce": secrets.token_hex(8)}).encode())
        mac = hmac.new(STATE_KEY, body, hashlib.sha256).hexdigest()
        schema = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
        ask = {"method": "elicitation/create",
               "params": {"mode": "form", "message": f"Purge {target}?", "requestedSchema": schema}}
        return {"resultType": "input_required", "inputRequests": {"confirm": ask},
                "requestState": f"{body.decode()}.{mac}"}

    def redeem(self, state, target):
        """The nonce of a requestState this process signed for `target`
        and has not spent, else None."""
        body, _, mac = state.rpartition(".")
        raw = body.encode("utf-8", "surrogatepass")
        good = hmac.new(STATE_KEY, raw, hashlib.sha256).hexdigest()
        if not body or not hmac.compare_digest(mac.encode("utf-8", "surrogatepass"), good.encode()):
            return None
        fields = json.loads(base64.urlsafe_b64decode(body.encode()))
        bound = fields.get("target") == target or "unbound-state" in self.bugs
        if not bound or fields.get("nonce") in self.spent:
            return None
        return fields["nonce"]

    def append(self, entry):
        """Append one entry to the log; whether it was written."""
        try:
            with open(self.log_path, "a", encoding="utf-8") as log:
                log.write(json.dumps(entry) + "\n")
                log.flush()
            return True
        except OSError as exc:
            print(f"strict: cannot write log: {exc}", file=sys.stderr)
            return False

    def call_tool(self, params, rid):
        """Validate a tools/call exactly against the schema, then run it."""
        name = params.get("name")
        if not isinstance(name, str):
            return error(rid, INVALID_PARAMS, "Tool name must be a string")
        args = params.get("arguments", {})
        if not isinstance(args, dict):
            return error(rid, INVALID_PARAMS, "arguments must be an object")
        if name != RECORD_TOOL["name"]:
            return error(rid, INVALID_PARAMS, f"Unknown tool: {name}")
        extra = sorted(set(args) - {"note", "count"})
        if extra and "lenient-args" not in self.bugs:
            return error(rid, INVALID_PARAMS, f"Unexpected arguments: {extra}")
        note = args.get("note")
        if not isinstance(note, str):
            return error(rid, INVALID_PARAMS, "note is required and must be a string")
        count = args.get("count")
        if "count" in args:
            # JSON Schema: "integer" is any number with a zero fractional part.
            if type(count) is float and count.is_integer():
                count = int(count)
            elif type(count) is not int:
                return error(rid, INVALID_PARAMS, "count must be an integer")
        for _ in range(2 if self.crlf_line and CRLF == "twice" else 1):
            if not self.append({"note": note, "count": count}):
                return error(rid, INTERNAL_ERROR, "Cannot write log")
        return result(rid, {"content": [{"type": "text", "text": "recorded"}]})


def discard_rest_of_line(stream):
    """Skip the remainder of an over-long line, up to and including its LF."""
    while True:
        chunk = stream.readline(65536)
        if not chunk or chunk.endswith(b"\n"):
            return


def main(argv=None):
    """Parse arguments and serve stdin until EOF (or a fatal error under close)."""
    parser = argparse.ArgumentParser(description="Strict MCP stdio server")
    parser.add_argument("--log", required=True)
    parser.add_argument("--policy", choices=("close", "keep-open"), default="keep-open")
    parser.add_argument("--bug", action="append", default=[], choices=BUGS)
    parser.add_argument("--crlf", choices=("accept", "reject", "twice"), default="accept",
                        help="a CR before the LF: read as whitespace, refused, or (a bug) acted on twice")
    parser.add_argument("--lenient", action="store_true",
                        help="parse as the specifications allow, without the hardening checks")
    parser.add_argument("--revision", choices=REVISIONS,
                        help="negotiate this revision whatever the client asks for, and speak no other")
    parser.add_argument("--handshake-only", action="store_true",
                        help="speak the handshake era alone, as servers before 2026-07-28 do")
    args = parser.parse_args(argv)
    global LENIENT, CRLF, ONLY_REVISION, STATELESS_TOO
    LENIENT, CRLF, ONLY_REVISION = args.lenient, args.crlf, args.revision
    STATELESS_TOO = not (args.handshake_only or args.revision)
    server = Server(args.log, args.bug)
    close = args.policy == "close"
    if "banner" in server.bugs:
        server.write_raw(b"strict server ready\n")
    stdin = sys.stdin.buffer
    while True:
        line = stdin.readline(MAX_LINE + 1)
        if not line:
            return 0
        if line.endswith(b"\n"):
            fatal = server.handle_line(line[:-1])
        elif len(line) > MAX_LINE:
            print("strict: line longer than 4 MiB", file=sys.stderr)
            server.send(error(None, PARSE_ERROR, "Parse error: line too long"))
            if close:
                return 0
            discard_rest_of_line(stdin)
            continue
        else:                       # last line at EOF, without LF
            fatal = server.handle_line(line)
        if fatal and close:
            return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(0)
