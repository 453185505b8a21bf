"""Python tasks and a client for the canvas interop tests (chains, chords, errbacks, ETA, retries
across the Python and TypeScript workers). Kept apart from interop_tasks so the plain interop
tests' task list is unchanged. The worker runs as `celery -A canvas_tasks worker`.

Client usage: canvas_tasks.py SCENARIO TS_QUEUE PY_QUEUE TIMEOUT_S
Prints one JSON line describing the outcome of the scenario.

Or: canvas_tasks.py --serve TS_QUEUE PY_QUEUE TIMEOUT_S
Reads scenario names, one a line, from standard input and answers each with one JSON line,
{"outcome": ...} or {"error": traceback}: a test file runs its scenarios without paying for a
Python start and Celery's imports every time.
"""

import json
import sys
import time
import traceback
import uuid

from celery import chain, chord, group, signature
from celery.result import AsyncResult, GroupResult
from interop_app import app


@app.task(name="canvas.py_add")
def py_add(x, y):
    """Add two numbers."""
    return x + y


@app.task(name="canvas.py_fail")
def py_fail(message="py boom"):
    """Always fails."""
    raise Exception(message)


@app.task(name="canvas.py_errback")
def py_errback(task_id):
    """Old-style errback: called with the failed task's id; returns what it learned."""
    failed = AsyncResult(task_id, app=app)
    return {"failed": task_id, "state": failed.state}


# How often a client looks for a result: Celery's default (0.5 s) would add up to half a second
# to every wait, and nothing here depends on the pace of the polling.
POLL_S = 0.05


def _wait(result, timeout):
    try:
        return {"status": "SUCCESS", "result": result.get(timeout=timeout, interval=POLL_S)}
    except Exception as exc:  # the task's exception, rebuilt from the result document
        # get() raises as soon as a parent has failed; the state this result ends in (the rest of
        # a failed chain is marked FAILURE by the worker that failed) may be written a moment later.
        deadline = time.time() + timeout
        while not result.ready() and time.time() < deadline:
            time.sleep(POLL_S)
        return {
            "status": result.state,
            "exc_type": type(exc).__name__,
            "exc_message": [str(a) for a in exc.args],
        }


def _revoked_errbacks(on_ts, ts, pyq, timeout):
    """Tasks with a link_error that end REVOKED (expired; on the TS worker also terminated while
    running), then a failing task with the same kind of errback on the same worker. Errbacks run
    on the Python worker (solo pool), one at a time in the order they were sent, so once the
    failed task's errback has run, an errback sent for a revoked task would have run too."""

    def errback():
        errback_id = str(uuid.uuid4())
        return errback_id, signature("canvas.py_errback", queue=pyq, task_id=errback_id, app=app)

    out = {}
    on_worker = ts if on_ts else (lambda name, *args: signature(name, args=args, queue=pyq, app=app))
    expired_errback, link = errback()
    expired = on_worker("canvas.ts_mul" if on_ts else "canvas.py_add", 1, 1).apply_async(
        countdown=2, expires=1, link_error=link
    )
    out["expired"] = _wait(expired, timeout)
    revoked_errbacks = [expired_errback]
    if on_ts:
        terminated_errback, link = errback()
        running = ts("canvas.ts_sleep", 60).apply_async(link_error=link)
        deadline = time.time() + timeout
        while running.state != "STARTED" and time.time() < deadline:
            time.sleep(0.1)
        app.control.revoke(running.id, terminate=True)
        out["terminated"] = _wait(running, timeout)
        revoked_errbacks.append(terminated_errback)
    failed_errback, link = errback()
    failed = on_worker("canvas.ts_fail" if on_ts else "canvas.py_fail").apply_async(link_error=link)
    out["failed"] = _wait(failed, timeout)
    out["failed_errback"] = _wait(AsyncResult(failed_errback, app=app), timeout)
    out["revoked_errback_states"] = [AsyncResult(i, app=app).state for i in revoked_errbacks]
    return out


def run_scenario(scenario, tsq, pyq, timeout):
    """Runs one scenario and returns what it found (the JSON-able outcome)."""
    ts = lambda name, *args, **options: signature(name, args=args, queue=tsq, app=app, **options)  # noqa: E731
    out = {}
    if scenario == "chain":
        res = chain(
            py_add.s(1, 2).set(queue=pyq), ts("canvas.ts_mul", 10), py_add.s(5).set(queue=pyq)
        ).apply_async()
        out = _wait(res, timeout)
        ids = []
        node = res
        while node is not None:
            ids.append(node.id)
            node = node.parent
        out["ids"] = list(reversed(ids))
    elif scenario == "chain_failure":
        res = chain(
            py_add.s(1, 2).set(queue=pyq), ts("canvas.ts_fail"), py_add.s(5).set(queue=pyq)
        ).apply_async()
        out = _wait(res, timeout)
    elif scenario == "chord":
        res = chord(
            [py_add.s(1, 1).set(queue=pyq), ts("canvas.ts_mul", 2, 3), ts("canvas.ts_mul", 4, 5)],
            ts("canvas.ts_sum"),
        ).apply_async()
        out = _wait(res, timeout)
        out["body_id"] = res.id
    elif scenario == "chord_failure":
        res = chord([py_add.s(1, 1).set(queue=pyq), ts("canvas.ts_fail")], ts("canvas.ts_sum")).apply_async()
        out = _wait(res, timeout)
        out["body_id"] = res.id
    elif scenario == "group":
        res = group(py_add.s(1, 1).set(queue=pyq), ts("canvas.ts_mul", 3, 3)).apply_async()
        res.save()
        restored = GroupResult.restore(res.id, app=app)
        if isinstance(restored, list):  # what the MongoDB backend's restore_group gives back
            restored = GroupResult(res.id, restored, app=app)
        out = {
            "group_id": res.id,
            "result": restored.get(timeout=timeout, interval=POLL_S),
            "ids": [r.id for r in restored.results],
        }
    elif scenario == "errback":
        errback_id = str(uuid.uuid4())
        res = ts("canvas.ts_fail").apply_async(
            link_error=signature("canvas.py_errback", queue=pyq, task_id=errback_id, app=app)
        )
        out = _wait(res, timeout)
        out["errback"] = _wait(AsyncResult(errback_id, app=app), timeout)
        out["task_id"] = res.id
    elif scenario in ("revoked_errback_ts", "revoked_errback_py"):
        out = _revoked_errbacks(scenario.endswith("_ts"), ts, pyq, timeout)
    elif scenario == "eta":
        start = time.time()
        held = ts("canvas.ts_mul", 2, 2).apply_async(countdown=3)
        quick = ts("canvas.ts_mul", 3, 3).apply_async()
        out["quick"] = _wait(quick, timeout)
        out["quick_s"] = time.time() - start
        out["held"] = _wait(held, timeout)
        out["held_s"] = time.time() - start
    elif scenario == "expires":
        # Due after it expires: the worker holds it, then discards it as REVOKED.
        res = ts("canvas.ts_mul", 1, 1).apply_async(countdown=2, expires=1)
        out = _wait(res, timeout)
    elif scenario == "retry":
        res = ts("canvas.ts_flaky", 2).apply_async()
        out = _wait(res, timeout)
        out["retries"] = AsyncResult(res.id, app=app)._get_task_meta().get("retries")
    elif scenario == "retry_exhausted":
        res = ts("canvas.ts_always_retry").apply_async()
        out = _wait(res, timeout)
    else:
        raise ValueError(f"unknown scenario {scenario}")
    return out


def serve(tsq, pyq, timeout):
    for line in sys.stdin:
        scenario = line.strip()
        if not scenario:
            continue
        try:
            answer = {"outcome": run_scenario(scenario, tsq, pyq, timeout)}
        except Exception:
            answer = {"error": traceback.format_exc()}
        print(json.dumps(answer), flush=True)


def main() -> None:
    if sys.argv[1] == "--serve":
        serve(sys.argv[2], sys.argv[3], float(sys.argv[4]))
        return
    scenario, tsq, pyq, timeout = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    print(json.dumps(run_scenario(scenario, tsq, pyq, timeout)), flush=True)


if __name__ == "__main__":
    main()
