"""Schedules: periodic and one-off runs of tasks, fired by the service (``/api/queue/schedules/``).

>>> client.schedules.create("nightly", "tasks.harvest", cron="0 2 * * *", tz="America/Chicago",
...                         kwargs={"site": "lake"})
>>> client.schedules.pause("nightly", note="sensor maintenance")

A Celery ``beat_schedule`` is brought over with :meth:`Schedules.import_beat` (or
``cybercom schedule import mymodule:app``): see :func:`from_beat`.
"""

from __future__ import annotations

import builtins
import datetime as dt
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Optional, Union
from urllib.parse import quote

from .errors import NotFound
from .session import Session

PATH = "/api/queue/schedules/"
#: Celery's solar event names, as the service names them (beat's other events have no counterpart).
BEAT_SOLAR_EVENTS = {
    "sunrise": "sunrise",
    "sunset": "sunset",
    "dawn_civil": "dawn",
    "dusk_civil": "dusk",
    "solar_noon": "solar_noon",
}
_EVERY = re.compile(r"^(\d+(?:\.\d+)?)\s*(s|m|h|d)?$")
_PERIODS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}

Every = Union[int, float, str, dt.timedelta]


def interval_of(every: Every) -> dict[str, Any]:
    """``every`` as the API's interval: seconds (a number or timedelta) or ``"15m"``-style text."""
    if isinstance(every, dt.timedelta):
        return {"every": every.total_seconds(), "period": "seconds"}
    if isinstance(every, (int, float)):
        return {"every": every, "period": "seconds"}
    match = _EVERY.match(every.strip())
    if match is None:
        raise ValueError(f"an interval is a number of seconds or like 15m, 2h, 1d (got {every!r})")
    number = float(match.group(1))
    return {
        "every": int(number) if number.is_integer() else number,
        "period": _PERIODS[match.group(2) or "s"],
    }


def _instant(value: Union[str, dt.datetime]) -> str:
    if isinstance(value, str):
        return value
    if value.tzinfo is None:
        raise ValueError("a time needs its time zone (a timezone-aware datetime)")
    return value.isoformat()


def schedule_body(
    name: str,
    task: str,
    *,
    args: Optional[list[Any]] = None,
    kwargs: Optional[Mapping[str, Any]] = None,
    queue: Optional[str] = None,
    cron: Optional[str] = None,
    tz: Optional[str] = None,
    every: Optional[Every] = None,
    anchor: Optional[Union[str, dt.datetime]] = None,
    solar: Optional[tuple[str, float, float]] = None,
    at: Optional[Union[str, dt.datetime]] = None,
    **options: Any,
) -> dict[str, Any]:
    """The API's body for a schedule; ``options`` are passed as they are (overlap,
    catch_up_window, jitter, start_time, end_time, max_runs, expires, paused, note)."""
    body: dict[str, Any] = {"name": name, "task": task}
    if args is not None:
        body["args"] = list(args)
    if kwargs is not None:
        body["kwargs"] = dict(kwargs)
    if queue is not None:
        body["queue"] = queue
    if cron is not None:
        body["crontab"] = cron
        if tz is not None:
            body["timezone"] = tz
    if every is not None:
        body["interval"] = interval_of(every)
        if anchor is not None:
            body["interval"]["anchor"] = _instant(anchor)
    if solar is not None:
        event, latitude, longitude = solar
        body["solar"] = {"event": event, "latitude": latitude, "longitude": longitude}
    if at is not None:
        body["clocked"] = _instant(at)
    for key, value in options.items():
        body[key] = _instant(value) if isinstance(value, dt.datetime) else value
    return body


@dataclass
class Schedule:
    """One schedule as the service shows it (``info`` holds every field of the answer)."""

    id: str
    name: str
    task: str
    paused: bool
    next_fire_at: Optional[str]
    last_outcome: Optional[str]
    info: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, row: dict[str, Any]) -> Schedule:
        return cls(
            id=str(row["id"]),
            name=str(row["name"]),
            task=str(row["task"]),
            paused=bool(row.get("paused")),
            next_fire_at=row.get("next_fire_at"),
            last_outcome=row.get("last_outcome"),
            info=row,
        )

    @property
    def timing(self) -> str:
        """The timing in a few words: ``cron 0 2 * * * (America/Chicago)``, ``every 15 minutes``, ..."""
        i = self.info
        if i.get("crontab"):
            return f"cron {i['crontab']} ({i.get('timezone', 'UTC')})"
        if i.get("interval"):
            return f"every {i['interval']['every']} {i['interval']['period']}"
        if i.get("solar"):
            s = i["solar"]
            return f"{s['event']} at {s['latitude']}, {s['longitude']}"
        return f"once at {i.get('clocked')}"


class Schedules:
    """The caller's schedules (a task admin's: everyone's). Names or ids are accepted wherever a
    schedule is named."""

    def __init__(self, session: Session) -> None:
        self._session = session

    def __repr__(self) -> str:
        return "<cybercom.Schedules>"

    def __iter__(self) -> Iterator[Schedule]:
        return iter(self.list())

    def list(self) -> builtins.list[Schedule]:
        return [Schedule.from_json(row) for row in self._session.results(PATH)]

    def get(self, name_or_id: str) -> Schedule:
        for schedule in self.list():
            if name_or_id in (schedule.id, schedule.name):
                return schedule
        raise NotFound(f"no schedule named {name_or_id!r}", status=404, code="no_such_schedule")

    def _path(self, name_or_id: str, action: str = "") -> str:
        return f"{PATH}{quote(self.get(name_or_id).id, safe='')}/{action}"

    def create(self, name: str, task: str, **options: Any) -> Schedule:
        """A new schedule running ``task``: give one of ``cron=`` (with ``tz=``), ``every=``
        (seconds, a timedelta or ``"15m"``; ``anchor=``), ``solar=(event, lat, lon)`` or ``at=``
        (one run); and any of ``args``, ``kwargs``, ``queue``, ``overlap``, ``catch_up_window``,
        ``jitter``, ``start_time``, ``end_time``, ``max_runs``, ``expires``, ``paused``, ``note``."""
        answer = self._session.json("POST", PATH, json=schedule_body(name, task, **options))
        return Schedule.from_json(answer)

    def update(self, name_or_id: str, **fields: Any) -> Schedule:
        """Changes the fields given (API names: ``crontab``, ``interval``, ``overlap``, ...)."""
        body = {k: _instant(v) if isinstance(v, dt.datetime) else v for k, v in fields.items()}
        return Schedule.from_json(self._session.json("PATCH", self._path(name_or_id), json=body))

    def pause(self, name_or_id: str, note: Optional[str] = None) -> Schedule:
        body = {} if note is None else {"note": note}
        return Schedule.from_json(self._session.json("POST", self._path(name_or_id, "pause/"), json=body))

    def resume(self, name_or_id: str) -> Schedule:
        return Schedule.from_json(self._session.json("POST", self._path(name_or_id, "resume/")))

    def delete(self, name_or_id: str) -> None:
        self._session.send("DELETE", self._path(name_or_id))

    def run_now(self, name_or_id: str) -> str:
        """Runs the schedule's task once now, as its owner; returns the task id."""
        return str(self._session.json("POST", self._path(name_or_id, "run/"))["task_id"])

    def next(self, name_or_id: str, count: int = 10) -> builtins.list[dt.datetime]:
        """The next fire times (timezone-aware, UTC)."""
        answer = self._session.json("GET", self._path(name_or_id, "next/"), params={"count": str(count)})
        return [dt.datetime.fromisoformat(t.replace("Z", "+00:00")) for t in answer["next_fire_times"]]

    def runs(self, name_or_id: str) -> builtins.list[dict[str, Any]]:
        """The run log, newest first: each fire's state, task id and lateness."""
        return list(self._session.results(self._path(name_or_id, "runs/")))

    def import_beat(
        self, beat_schedule: Mapping[str, Mapping[str, Any]], *, tz: str = "UTC", replace: bool = False
    ) -> builtins.list[Schedule]:
        """Creates a schedule for every entry of a Celery ``beat_schedule`` (see :func:`from_beat`);
        ``replace=True`` deletes a schedule of the same name first."""
        bodies = from_beat(beat_schedule, tz=tz)
        existing = {s.name: s for s in self.list()} if replace else {}
        made = []
        for body in bodies:
            if body["name"] in existing:
                self.delete(existing[body["name"]].id)
            made.append(Schedule.from_json(self._session.json("POST", PATH, json=body)))
        return made


def _cron_field(schedule: Any, name: str) -> str:
    original = getattr(schedule, f"_orig_{name}", None)
    return "*" if original is None else str(original).replace(" ", "")


def from_beat(beat_schedule: Mapping[str, Mapping[str, Any]], *, tz: str = "UTC") -> list[dict[str, Any]]:
    """The service's schedule bodies for a Celery ``beat_schedule`` dict, entry by entry:
    ``schedule`` a number of seconds or a ``timedelta`` (an interval), a ``crontab`` (its five
    fields, in ``tz``: the app's ``timezone``), or a ``solar`` (its event, latitude, longitude);
    ``args``, ``kwargs``, and ``options`` ``queue`` and ``expires``. Anything else is refused with
    ``ValueError`` naming the entry, before anything is created."""
    bodies = []
    for name, entry in beat_schedule.items():
        schedule: Any = entry.get("schedule")
        body: dict[str, Any] = {"name": name, "task": entry["task"]}
        if entry.get("args") is not None:
            body["args"] = list(entry["args"])
        if entry.get("kwargs") is not None:
            body["kwargs"] = dict(entry["kwargs"])
        options = dict(entry.get("options") or {})
        if options.get("queue"):
            body["queue"] = str(options["queue"])
        expires = options.get("expires")
        if isinstance(expires, (int, float)):
            body["expires"] = expires
        kind = type(schedule).__name__
        if isinstance(schedule, (int, float, dt.timedelta)):
            body["interval"] = interval_of(schedule)
        elif kind == "schedule" and hasattr(schedule, "run_every"):
            body["interval"] = interval_of(schedule.run_every)
        elif kind == "crontab":
            fields = ("minute", "hour", "day_of_month", "month_of_year", "day_of_week")
            body["crontab"] = " ".join(_cron_field(schedule, f) for f in fields)
            body["timezone"] = tz
        elif kind == "solar":
            event = BEAT_SOLAR_EVENTS.get(schedule.event)
            if event is None:
                raise ValueError(
                    f"{name}: the solar event {schedule.event!r} has no counterpart here "
                    f"(use one of {', '.join(BEAT_SOLAR_EVENTS)})"
                )
            body["solar"] = {"event": event, "latitude": schedule.lat, "longitude": schedule.lon}
        else:
            raise ValueError(f"{name}: cannot bring over a schedule of type {kind}")
        bodies.append(body)
    return bodies
