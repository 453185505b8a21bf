"""The Python worker container's healthcheck: a remote-control ping to the worker's own node name.

Reads the same environment as ``cybercom worker``; exits 0 when the worker answered within five
seconds, 1 otherwise.
"""

import sys

from cybercom.worker import create_app
from cybercom.worker_settings import load_settings

settings = load_settings()
app = create_app(settings)
replies = app.control.ping(destination=[settings.node_name], timeout=5.0)
sys.exit(0 if any(settings.node_name in reply for reply in replies or []) else 1)
