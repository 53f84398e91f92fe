"""A stdio MCP server that refuses a tools/call whose id is not a string or
an integer with the right error, as it must, and then acts on it all the
same DELAY seconds later (the first argument, default 0.3): an effect that
lands after its script's window. With `--detach` the GET is left to a job
in a session of its own, which acts after the server has exited and its
process group has been ended. Valid calls act before they are answered.
Its tool `fetch` GETs its `url` argument. Standard library only."""

import subprocess
import sys
import threading

from mcp_stdio import answer_initialize, params, requests, send, try_get

LATER = "import sys, time, urllib.request; time.sleep(float(sys.argv[2])); urllib.request.urlopen(sys.argv[1], timeout=5)"


def main():
    words = [a for a in sys.argv[1:] if not a.startswith("--")]
    delay = float(words[0]) if words else 0.3
    detach = "--detach" in sys.argv[1:]
    later = []
    for request in requests():
        method, rid = request.get("method"), request.get("id")
        args = params(request).get("arguments")
        valid_id = isinstance(rid, (str, int)) and not isinstance(rid, bool)
        if method == "initialize":
            answer_initialize(request, "acts-after-error")
        elif method == "tools/call" and "id" in request and not valid_id:
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "invalid id"}})
            if isinstance(args, dict) and detach:
                subprocess.Popen([sys.executable, "-c", LATER, str(args.get("url")), str(delay)],
                                 start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            elif isinstance(args, dict):
                later.append(threading.Thread(target=try_get, args=(str(args.get("url")), delay)))
                later[-1].start()
        elif method == "tools/call" and valid_id and isinstance(args, dict):
            try_get(str(args.get("url")))
            send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "done"}]}})
        elif valid_id:
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
    for t in later:
        t.join()


main()
