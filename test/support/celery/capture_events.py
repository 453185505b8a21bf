"""A stock Celery event receiver (the one `celery events` and Flower use), capturing one worker's task events.

Usage: capture_events.py HOSTNAME TASKS TIMEOUT_S
Prints "ready" once its queue is bound to the event exchange, then one JSON line per task event
from HOSTNAME ({"type", "uuid", "name"}), and exits after `task-succeeded` of TASKS distinct
tasks (status 0) or after TIMEOUT_S without events (status 1).
"""

import json
import socket
import sys

from interop_app import app


def main() -> None:
    hostname, tasks, timeout = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    succeeded = set()
    receiver = None

    def on_event(event: dict) -> None:
        if event.get("hostname") != hostname or not str(event.get("type", "")).startswith("task-"):
            return
        print(json.dumps({k: event.get(k) for k in ("type", "uuid", "name")}), flush=True)
        if event["type"] == "task-succeeded":
            succeeded.add(event.get("uuid"))
            if len(succeeded) >= tasks:
                receiver.should_stop = True

    with app.connection_for_read() as connection:
        receiver = app.events.Receiver(connection, handlers={"*": on_event})
        receiver.on_consume_ready = lambda *args, **kwargs: print("ready", flush=True)
        try:
            receiver.capture(limit=None, timeout=timeout, wakeup=False)
        except socket.timeout:
            sys.exit(1)


if __name__ == "__main__":
    main()
