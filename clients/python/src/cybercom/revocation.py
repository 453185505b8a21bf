"""Makes a Celery worker honour the REVOKED marks the cybercom service keeps in the result store.

The service revokes a task in two ways at once: it stores REVOKED as the task's result (for
instance for every queued task of a user who is deactivated), then broadcasts Celery's ``revoke``
command, which only the workers online at that moment hear. A stock Celery worker hears only the
broadcast, so a worker that was offline at that moment, or started later, would run the task.

This module closes that gap without a database read per task, which would put a round trip to
the result store in front of every task:

- :class:`RevocationSync`, a step of the worker's consumer, reads the REVOKED marks into the
  worker's own set of revoked ids each time the consumer connects (at start, and after every
  reconnection to the broker), after the remote-control consumer listens for broadcasts, and
  before any task message is handled; then again every :data:`SYNC_INTERVAL` seconds, reading
  only the marks stored since the last read. A task in that set is handled by Celery as any
  revoked task: not run, a ``task-revoked`` event, REVOKED kept, the message acknowledged.
- :class:`RevocationCheckingRequest` reads the task's own mark when a message arrives while those
  marks are not known to be current: before the first read, after a failed one, while the
  consumer is reconnecting, or on a worker that does not listen to broadcasts.

So a mark stored while the worker was away is honoured before the worker runs anything, and one
stored while it is online is honoured at once by the broadcast, or at the next read when the
broadcast was lost.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Optional

from celery import bootsteps
from celery.worker.request import Request
from celery.worker.state import revoked as revoked_tasks

logger = logging.getLogger(__name__)

REVOKED = "REVOKED"
#: Seconds between two reads of the marks stored since the last one.
SYNC_INTERVAL = 2.0
#: A read asks for the marks stored since the previous one began, less this: the service's clock
#: (which dates the marks) and the worker's may differ.
CLOCK_MARGIN = timedelta(minutes=5)


def revoked_by_service(backend: Any, task_id: str) -> bool:
    """Whether the result store holds REVOKED for `task_id` (a MongoDB result backend's collection)."""
    collection = getattr(backend, "collection", None)
    if collection is None:
        return False
    document = collection.find_one({"_id": task_id}, {"status": 1})
    return document is not None and document.get("status") == REVOKED


def marks_query(since: Optional[datetime]) -> dict[str, Any]:
    """The REVOKED marks stored from `since` on (all of them when None).

    ``date_done`` is a date where Celery stores it and a naive UTC ISO-8601 text where the
    service does; MongoDB compares a bound only with values of its own type, so both are asked.
    """
    if since is None:
        return {"status": REVOKED}
    utc = since.astimezone(timezone.utc).replace(tzinfo=None)
    return {
        "status": REVOKED,
        "$or": [{"date_done": {"$gte": utc}}, {"date_done": {"$gte": utc.isoformat()}}],
    }


class RevocationMarks:
    """The worker's copy of the service's REVOKED marks, and whether it is current."""

    def __init__(self, now: Callable[[], datetime] = lambda: datetime.now(timezone.utc)) -> None:
        self._now = now
        self._lock = threading.Lock()
        self._since: Optional[datetime] = None
        self._current = False

    @property
    def current(self) -> bool:
        """Whether the marks were read since the consumer connected, the last read succeeding."""
        return self._current

    def read(self, collection: Any, add: Callable[[str], None] = revoked_tasks.add) -> int:
        """Adds the marks stored since the last read (all, the first time) to the revoked ids.

        Answers how many were read; a failed read leaves the copy not current and raises.
        """
        with self._lock:
            started = self._now()
            since = None if self._since is None else self._since - CLOCK_MARGIN
            try:
                ids = [str(doc["_id"]) for doc in collection.find(marks_query(since), {"_id": 1})]
            except Exception:
                self._current = False
                raise
            for task_id in ids:
                add(task_id)
            self._since = started
            self._current = True
            return len(ids)

    def disconnected(self) -> None:
        """The consumer lost its connection: broadcasts may be missed until the next read."""
        self._current = False


#: The marks of this worker process (Celery's revoked ids are per process too).
marks = RevocationMarks()


def note_if_revoked(backend: Any, task_id: str) -> None:
    """What a task message's arrival asks: its own mark, unless the worker's copy is current."""
    if marks.current or task_id in revoked_tasks:
        return
    try:
        revoked = revoked_by_service(backend, task_id)
    except Exception as exc:
        # The broadcast revoke still reaches this worker; a task is not held back because
        # the result store did not answer.
        logger.warning("could not read the state of task %s before running it: %s", task_id, exc)
        return
    if revoked:
        revoked_tasks.add(task_id)


class RevocationCheckingRequest(Request):  # type: ignore[misc]
    """A task request that reads the task's own mark when the worker's copy is not current."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        note_if_revoked(self.task.backend, self.id)


class RevocationSync(bootsteps.StartStopStep):  # type: ignore[misc]
    """Reads the REVOKED marks when the consumer connects, and every SYNC_INTERVAL seconds after."""

    # After the remote-control consumer listens, so no broadcast after a read goes unheard.
    requires = ("celery.worker.consumer.control:Control",)

    def __init__(self, c: Any, **kwargs: Any) -> None:
        super().__init__(c, **kwargs)
        self._timer_entry: Any = None

    def start(self, c: Any) -> None:
        collection = getattr(c.app.backend, "collection", None)
        if collection is None or not c.app.conf.worker_enable_remote_control:
            # Without broadcasts only a read per task keeps revokes honoured.
            return
        self._read(collection)
        self._timer_entry = c.timer.call_repeatedly(SYNC_INTERVAL, self._read, (collection,))

    def _read(self, collection: Any) -> None:
        started = time.monotonic()
        try:
            found = marks.read(collection)
        except Exception as exc:
            logger.warning(
                "could not read the revoked tasks (each task's own state is read instead): %s", exc
            )
            return
        logger.debug("read %d revoked task ids in %.1f ms", found, 1000 * (time.monotonic() - started))

    def stop(self, c: Any) -> None:
        marks.disconnected()
        if self._timer_entry is not None:
            self._timer_entry.cancel()
            self._timer_entry = None

    shutdown = stop


def install(app: Any) -> None:
    """Every task of `app` (those registered so far, and later ones of its default base) checks,
    and the app's workers read the marks."""
    app.Task.Request = RevocationCheckingRequest
    for task in app.tasks.values():
        task.Request = RevocationCheckingRequest
    app.steps["consumer"].add(RevocationSync)
