"""The worker's copy of the service's REVOKED marks: what it asks the result store, and when a
task's own mark must still be read (pure logic: the collection is a stand-in that applies the
query's bounds the way MongoDB does)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from types import SimpleNamespace
from typing import Any, Iterator

import pytest

from cybercom import revocation
from cybercom.revocation import CLOCK_MARGIN, RevocationMarks, marks_query, note_if_revoked

T0 = datetime(2026, 11, 29, 12, 0, 0, tzinfo=timezone.utc)


def _matches(document: dict[str, Any], query: dict[str, Any]) -> bool:
    """The subset of MongoDB's matching the marks query uses: equality, and $or of $gte bounds
    that compare only values of the bound's own type."""
    if document.get("status") != query["status"]:
        return False
    if "$or" not in query:
        return True
    for branch in query["$or"]:
        bound = branch["date_done"]["$gte"]
        value = document.get("date_done")
        if type(value) is type(bound) and value >= bound:
            return True
    return False


class Results:
    """The result collection: documents, and the queries it was asked."""

    def __init__(self, documents: list[dict[str, Any]]) -> None:
        self.documents = documents
        self.queries: list[dict[str, Any]] = []
        self.fail = False

    def find(self, query: dict[str, Any], projection: dict[str, int]) -> Iterator[dict[str, Any]]:
        assert projection == {"_id": 1}
        if self.fail:
            raise ConnectionError("result store unreachable")
        self.queries.append(query)
        return iter([{"_id": d["_id"]} for d in self.documents if _matches(d, query)])


def naive(moment: datetime) -> datetime:
    return moment.astimezone(timezone.utc).replace(tzinfo=None)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


def test_the_first_read_takes_every_mark_and_later_ones_those_stored_since_the_last_read_began() -> None:
    clock = Clock()
    old = T0 - timedelta(days=30)
    results = Results(
        [
            {"_id": "by-celery", "status": "REVOKED", "date_done": naive(old)},
            {"_id": "by-service", "status": "REVOKED", "date_done": naive(old).isoformat()},
            {"_id": "done", "status": "SUCCESS", "date_done": naive(old)},
        ]
    )
    marks = RevocationMarks(now=clock)
    seen: list[str] = []
    assert not marks.current
    assert marks.read(results, seen.append) == 2
    assert sorted(seen) == ["by-celery", "by-service"]
    assert marks.current

    # Stored after the first read: one dated by the service (text), one by Celery (a date),
    # and one dated a little before the read by a clock that runs behind the worker's.
    clock.now = T0 + timedelta(seconds=2)
    results.documents += [
        {"_id": "new-text", "status": "REVOKED", "date_done": naive(T0 + timedelta(seconds=1)).isoformat()},
        {"_id": "new-date", "status": "REVOKED", "date_done": naive(T0 + timedelta(seconds=1))},
        {"_id": "late-clock", "status": "REVOKED", "date_done": naive(T0 - CLOCK_MARGIN / 2)},
    ]
    seen.clear()
    assert marks.read(results, seen.append) == 3
    assert sorted(seen) == ["late-clock", "new-date", "new-text"]
    assert results.queries[-1] == marks_query(T0 - CLOCK_MARGIN)


def test_a_failed_read_or_a_lost_connection_makes_the_copy_not_current_until_a_read_succeeds() -> None:
    results = Results([{"_id": "a", "status": "REVOKED", "date_done": naive(T0)}])
    marks = RevocationMarks(now=Clock())
    marks.read(results, lambda _id: None)
    marks.disconnected()
    assert not marks.current
    marks.read(results, lambda _id: None)
    assert marks.current
    results.fail = True
    with pytest.raises(ConnectionError):
        marks.read(results, lambda _id: None)
    assert not marks.current


def test_a_task_reads_its_own_mark_only_while_the_copy_is_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    class Collection(Results):
        def find_one(self, query: dict[str, Any], projection: dict[str, int]) -> dict[str, Any] | None:
            calls.append(query["_id"])
            return next((d for d in self.documents if d["_id"] == query["_id"]), None)

    collection = Collection([{"_id": "t1", "status": "REVOKED", "date_done": naive(T0)}])
    backend = SimpleNamespace(collection=collection)
    marks = RevocationMarks(now=Clock())
    revoked: set[str] = set()
    monkeypatch.setattr(revocation, "marks", marks)
    monkeypatch.setattr(revocation, "revoked_tasks", revoked)

    note_if_revoked(backend, "t1")
    note_if_revoked(backend, "t2")
    assert calls == ["t1", "t2"] and revoked == {"t1"}
    marks.read(collection, revoked.add)
    note_if_revoked(backend, "t3")
    assert calls == ["t1", "t2"], "no read per task while the marks are current"
    marks.disconnected()
    note_if_revoked(backend, "t3")
    assert calls == ["t1", "t2", "t3"]
