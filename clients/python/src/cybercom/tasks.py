"""The task queue: the catalog of tasks, submissions, runs and the history."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Callable, Optional
from urllib.parse import quote

from . import ejson
from .errors import BadRequest, TaskFailed, TaskTimeout
from .session import Params, Session

READY_STATES = frozenset({"SUCCESS", "FAILURE", "REVOKED"})
FAILED_STATES = frozenset({"FAILURE", "REVOKED"})
#: The longest a single request of ``result()`` asks the server to hold its answer.
LONG_POLL_SECONDS = 10.0


@dataclass(frozen=True)
class TaskInfo:
    """A task live workers offer: its name, documentation, queues and (when sent) signature."""

    name: str
    docstring: Optional[str]
    queues: list[str]
    url: Optional[str] = None
    signature: Optional[dict[str, Any]] = None

    @property
    def signature_text(self) -> Optional[str]:
        return None if self.signature is None else str(self.signature.get("text"))

    def help(self) -> str:
        """``name(signature)`` and the docstring, as ``help()`` would show it."""
        head = f"{self.name}{self.signature_text or '(...)'}"
        return f"{head}\n    {self.docstring}" if self.docstring else head

    @classmethod
    def from_json(cls, row: dict[str, Any]) -> TaskInfo:
        return cls(
            name=str(row["name"]),
            docstring=row.get("docstring"),
            queues=list(row.get("queues") or []),
            url=row.get("url"),
            signature=row.get("signature"),
        )


def wait_param(seconds: float) -> str:
    """``?wait=`` as the API reads it: plain decimal digits (never ``1e-05``), milliseconds at most."""
    text = f"{max(seconds, 0.0):.3f}".rstrip("0").rstrip(".")
    return text or "0"


def _message_text(message: Any) -> str:
    # Celery's failures carry exc_message as a list of the exception's arguments.
    if isinstance(message, list):
        return ", ".join(str(m) for m in message)
    return "" if message is None else str(message)


@dataclass
class TaskRun:
    """One submitted task: ``status``, ``result(timeout)``, ``revoke()``."""

    id: str
    _tasks: Tasks = field(repr=False)
    name: Optional[str] = None
    state: str = "PENDING"
    info: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def status(self) -> str:
        """The current state (asks the server unless the run has finished)."""
        if self.state not in READY_STATES:
            self.refresh()
        return self.state

    @property
    def ready(self) -> bool:
        return self.status in READY_STATES

    def refresh(self, *, wait: Optional[float] = None) -> dict[str, Any]:
        """Reads the run's page: state, result or error, traceback, worker, tags, ...
        ``wait`` seconds: the server holds the answer until the run finished or the time is up."""
        params: Optional[Params] = {"wait": wait_param(wait)} if wait else None
        self._update(
            self._tasks._session.json("GET", f"/api/queue/task/{quote(self.id, safe='')}/", params=params)
        )
        return self.info

    def _update(self, answer: dict[str, Any]) -> None:
        self.info = {**self.info, **answer}
        self.state = str(answer.get("status", self.state))
        if answer.get("task_name"):
            self.name = str(answer["task_name"])

    def result(
        self, timeout: Optional[float] = None, *, interval: float = 0.2, max_interval: float = 2.0
    ) -> Any:
        """Waits for the run to finish and returns its result; re-raises a failure as
        :class:`TaskFailed` (with the task's exception type, message and traceback).
        ``timeout=None`` waits indefinitely; :class:`TaskTimeout` when it runs out.

        The server is asked to hold each answer until the run finished (a long poll), so the
        result arrives as soon as it is stored; a server that cannot hold them is polled every
        ``interval`` seconds (growing to ``max_interval``)."""
        tasks = self._tasks
        deadline = None if timeout is None else tasks._clock() + timeout
        while self.state not in READY_STATES:
            asked_at = tasks._clock()
            held = self._refresh_waiting(None if deadline is None else max(deadline - asked_at, 0.0))
            if self.state in READY_STATES:
                break
            now = tasks._clock()
            if deadline is not None and now >= deadline:
                raise TaskTimeout(
                    f"task {self.id} is still {self.state} after {timeout} s", code="task_timeout"
                )
            if held is not None and now - asked_at >= held / 2:
                continue  # the server held the answer as asked: ask again at once
            wait = interval if deadline is None else min(interval, max(deadline - now, 0.0))
            tasks._sleep(wait)
            interval = min(interval * 1.5, max_interval)
        if self.state in FAILED_STATES:
            raise self.failure()
        return ejson.decode(self.info.get("result"), typed=False)

    def _refresh_waiting(self, remaining: Optional[float]) -> Optional[float]:
        """Refreshes, held by the server for up to ``remaining`` seconds (a long poll) when it
        can; returns the seconds asked for, or None after a plain refresh."""
        tasks = self._tasks
        wait = tasks._long_poll_seconds if remaining is None else min(remaining, tasks._long_poll_seconds)
        if tasks._long_poll is False or wait < 0.001:
            self.refresh()
            return None
        try:
            self.refresh(wait=wait)
        except BadRequest as exc:
            # A server from before ?wait= on a run's page, or one whose TASK_WAIT_MAX_S is lower.
            if exc.code not in ("unknown_parameter", "invalid_wait"):
                raise
            tasks._long_poll = False
            self.refresh()
            return None
        return wait

    def failure(self) -> TaskFailed:
        error = self.info.get("error") or {}
        return TaskFailed(
            _message_text(error.get("message")) or self.state,
            task_id=self.id,
            exc_type=error.get("type"),
            traceback=self.info.get("traceback"),
            state=self.state,
            code="task_failed" if self.state == "FAILURE" else "task_revoked",
            detail=error or None,
        )

    def revoke(self, terminate: bool = False) -> str:
        """Revokes the run (``terminate`` aborts it while it runs); returns the new state."""
        body = {"terminate": True} if terminate else {}
        self._update(
            self._tasks._session.json("POST", f"/api/queue/task/{quote(self.id, safe='')}/revoke/", json=body)
        )
        return self.state


class Tasks:
    """``client.tasks``: iterate it for the catalog; ``submit``, ``run``, ``get`` and ``history``."""

    def __init__(
        self,
        session: Session,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._session = session
        self._sleep = sleep
        self._clock = clock
        # Learned on first use: whether the server holds a run's page (?wait=) for result().
        self._long_poll: Optional[bool] = None
        # Each hold well inside the HTTP read timeout.
        read_timeout = session.http.timeout.read
        self._long_poll_seconds = (
            LONG_POLL_SECONDS if read_timeout is None else min(LONG_POLL_SECONDS, read_timeout / 2)
        )

    def catalog(self, *, refresh: bool = False) -> list[TaskInfo]:
        """Every task live workers offer, by name (``refresh``: task admins ask the workers anew)."""
        params: Params = {"refresh": "true"} if refresh else {}
        return [
            TaskInfo.from_json(row) for row in self._session.results("/api/queue/", params, page_size=500)
        ]

    def __iter__(self) -> Iterator[TaskInfo]:
        return iter(self.catalog())

    def __getitem__(self, name: str) -> TaskInfo:
        for task in self.catalog():
            if task.name == name:
                return task
        raise KeyError(name)

    def __repr__(self) -> str:
        return "\n".join(t.help() for t in self.catalog()) or "<no tasks: no worker is running>"

    def submit(
        self,
        name: str,
        *args: Any,
        queue: Optional[str] = None,
        tags: Optional[Sequence[str]] = None,
        wait: Optional[float] = None,
        task_kwargs: Optional[dict[str, Any]] = None,
        **kwargs: Any,
    ) -> TaskRun:
        """Submits ``name(*args, **kwargs)`` (``task_kwargs`` for keywords named like these options).
        ``wait`` seconds: the server holds the answer until the task finished or the time is up."""
        body: dict[str, Any] = {
            "function": name,
            "args": list(args),
            "kwargs": {**(task_kwargs or {}), **kwargs},
        }
        if queue is not None:
            body["queue"] = queue
        if tags is not None:
            body["tags"] = list(tags)
        params: Params = {"wait": wait_param(wait)} if wait else {}
        answer = self._session.json(
            "POST", f"/api/queue/run/{quote(name, safe='')}/", params=params, json=body
        )
        run = TaskRun(str(answer["task_id"]), self, name=name)
        run._update(answer)
        return run

    def run(self, name: str, *args: Any, timeout: Optional[float] = 60.0, **kwargs: Any) -> Any:
        """Submits and waits for the result (raises :class:`TaskFailed` for a failure)."""
        first_wait = 10.0 if timeout is None else min(timeout, 10.0)
        started = self._clock()
        run = self.submit(name, *args, wait=first_wait, **kwargs)
        remaining = None if timeout is None else max(timeout - (self._clock() - started), 0.0)
        return run.result(remaining)

    def get(self, task_id: str) -> TaskRun:
        """A run by its id (NotFound unless it is yours or you are a task admin)."""
        run = TaskRun(task_id, self)
        run.refresh()
        return run

    def history(
        self,
        *,
        status: Optional[str] = None,
        task: Optional[str | Sequence[str]] = None,
        tag: Optional[str] = None,
        page_size: int = 100,
    ) -> Iterator[TaskRun]:
        """Your runs, newest first."""
        params: Params = {}
        if status:
            params["status"] = status
        if task:
            params["taskname"] = task if isinstance(task, str) else ",".join(task)
        if tag:
            params["tag"] = tag
        for row in self._session.results("/api/queue/usertasks/", params, page_size):
            run = TaskRun(str(row["task_id"]), self)
            run._update(row)
            yield run
