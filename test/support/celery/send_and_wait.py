"""A stock Celery client: send_task() then AsyncResult.get() through the MongoDB result backend.

Usage: send_and_wait.py TASK_NAME ARGS_JSON KWARGS_JSON HEADERS_JSON TIMEOUT_S
Prints one JSON line: {"task_id", "status", "result"} or, when the task failed,
{"task_id", "status", "exc_type", "exc_module", "exc_message", "traceback"}.
"""

import json
import sys

from interop_app import app, queue


def main() -> None:
    name, args, kwargs, headers, timeout = sys.argv[1:6]
    result = app.send_task(
        name, args=json.loads(args), kwargs=json.loads(kwargs), headers=json.loads(headers), queue=queue
    )
    out = {"task_id": result.id}
    try:
        value = result.get(timeout=float(timeout), propagate=True)
        out.update(status=result.status, result=value)
    except Exception as exc:  # the task's exception, rebuilt by Celery from the result document
        out.update(
            status=result.status,
            exc_type=type(exc).__name__,
            exc_module=type(exc).__module__,
            exc_message=[str(a) for a in exc.args],
            traceback=result.traceback,
        )
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
