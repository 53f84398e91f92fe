"""posts_webhook.py after a sleep of argv[1] seconds before it reads or
writes anything: a server slow to start (an interpreter loading its
packages). Used by tests/starting.rs; standard library only."""

import sys
import time

time.sleep(float(sys.argv[1]))
import posts_webhook  # noqa: E402,F401  (serves on import)
