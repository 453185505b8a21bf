"""Makes a Celery worker honour the REVOKED marks the cybercom service keeps in the result store.

The service revokes a task in two ways at once: it broadcasts Celery's ``revoke`` command, which
only the workers online at that moment hear, and it stores REVOKED as the task's result (for
instance for every queued task of a user who is deactivated). The service's own worker reads
that state before it runs a task; a stock Celery worker does not, so a worker that was offline
during the broadcast, or started later, would run the task anyway.

:class:`RevocationCheckingRequest` closes that gap. When a task message arrives it reads the task's
state from the result store; a task already REVOKED there joins the worker's own set of revoked
ids, and from there Celery does what it does for any revoked task: it does not run it, sends the
``task-revoked`` event, keeps the state REVOKED and acknowledges the message.
"""

from __future__ import annotations

import logging
from typing import Any

from celery.worker.request import Request
from celery.worker.state import revoked as revoked_tasks

logger = logging.getLogger(__name__)

REVOKED = "REVOKED"


def revoked_by_service(backend: Any, task_id: str) -> bool:
    """Whether the result store holds REVOKED for `task_id` (a MongoDB result backend's collection)."""
    collection = getattr(backend, "collection", None)
    if collection is None:
        return False
    document = collection.find_one({"_id": task_id}, {"status": 1})
    return document is not None and document.get("status") == REVOKED


class RevocationCheckingRequest(Request):  # type: ignore[misc]
    """A task request that first asks the result store whether the service revoked the task."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        task_id = self.id
        if task_id in revoked_tasks:
            return
        try:
            revoked = revoked_by_service(self.task.backend, task_id)
        except Exception as exc:
            # The broadcast revoke still reaches this worker; a task is not held back because
            # the result store did not answer.
            logger.warning("could not read the state of task %s before running it: %s", task_id, exc)
            return
        if revoked:
            revoked_tasks.add(task_id)


def install(app: Any) -> None:
    """Every task of `app` (those registered so far, and later ones of its default base) checks."""
    app.Task.Request = RevocationCheckingRequest
    for task in app.tasks.values():
        task.Request = RevocationCheckingRequest
