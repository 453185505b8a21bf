"""Partial-failure reports of ``Collection.insert`` while the database engine restarts.

The service runs on a database engine of its own (test/integration/client/python-client-restart.test.ts
starts it), which these tests have killed through CYBERCOM_TEST_ENGINE_CONTROL as the service sends
it one chunk of an insert of several (``POST /kill-during-insert``), and start again (``POST
/restart``) once the insert has failed. The client's :class:`InsertError` must say exactly what was written:
every record it reports written is stored, no record it reports not written is, and the records it
cannot vouch for are listed as unconfirmed. Sending the remainder the report names (as ``cybercom
import --resume`` does) then completes the set with no record lost and none twice.

Marked ``engine_restart``: collected only when the control endpoint is given (see conftest.py).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from cybercom import Collection, CybercomError, InsertError
from cybercom.cli import main as cli_main

pytestmark = [pytest.mark.integration, pytest.mark.engine_restart]

CONTROL = os.environ.get("CYBERCOM_TEST_ENGINE_CONTROL", "")
#: Records per insert request, and requests per insert.
CHUNK = 1000
CHUNKS = 6
#: The chunk whose write the engine dies under (0-based): the chunks before it were answered.
KILLED_CHUNK = 2
PAYLOAD = "x" * 200


def engine(action: str, **params: str) -> None:
    answer = httpx.post(f"{CONTROL}/{action}", params=params, timeout=180)
    assert answer.status_code == 204, f"{action}: {answer.status_code} {answer.text}"


def wait_until_serving(col: Collection, timeout: float = 120) -> None:
    """Until the service reads the collection again (the engine is back and the API reconnected)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            col.count()
            return
        except (CybercomError, httpx.TransportError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def make_records(with_ids: bool) -> list[dict[str, Any]]:
    """``n`` numbers every record; ``_id`` is set here or left to the service (an ObjectId)."""
    records = [{"n": n, "payload": PAYLOAD} for n in range(CHUNK * CHUNKS)]
    if with_ids:
        for record in records:
            record["_id"] = f"rec-{record['n']:06d}"
    return records


def kill_during_insert(col: Collection, target: str) -> None:
    """Has the engine killed as the service sends it the write of chunk ``KILLED_CHUNK``; it stays
    down until :func:`engine` ``("restart")``, longer than the service keeps asking it which
    records of a failed write it holds."""
    engine(
        "kill-during-insert",
        target=target,
        db=col.database.name,
        collection=col.name,
        skip=str(KILLED_CHUNK),
    )


def stored_records(col: Collection) -> list[tuple[Any, int]]:
    """``(_id, n)`` of every stored record, sorted by ``n`` (duplicates kept, so that they show)."""
    return sorted(((r["_id"], int(r["n"])) for r in col.find({}, {"n": 1}, stream=False)), key=lambda r: r[1])


def check_report(col: Collection, error: InsertError, records: list[dict[str, Any]]) -> set[int]:
    """Checks the report against the collection; answers the ``n`` of the stored records."""
    total = len(records)
    written = len(error.inserted_ids)
    unconfirmed = error.unconfirmed_ids
    # The insert is ordered: what was written is a prefix, the unconfirmed records follow it.
    assert error.failed_index == written
    assert CHUNK <= written < total, f"the kill at chunk {KILLED_CHUNK} should stop the insert part-way"
    stored = stored_records(col)
    stored_set = {n for _, n in stored}
    assert len(stored) == len(stored_set), "a record was stored twice"
    # Every record reported written is stored, under the id reported for it, in order.
    by_id = dict(stored)
    assert [by_id.get(i) for i in error.inserted_ids] == list(range(written))
    if "_id" in records[0]:
        assert list(error.inserted_ids) == [r["_id"] for r in records[:written]]
        assert list(unconfirmed) == [r["_id"] for r in records[written : written + len(unconfirmed)]]
    # The unconfirmed records may or may not be stored; none after them is.
    not_written = set(range(written + len(unconfirmed), total))
    assert not (stored_set & not_written), (
        f"records reported not written are stored: {sorted(stored_set & not_written)[:10]}..."
        f" (report: {written} written, {len(unconfirmed)} unconfirmed)"
    )
    assert set(range(written)) <= stored_set
    return stored_set


def store_some_unconfirmed(col: Collection, error: InsertError, records: list[dict[str, Any]]) -> int:
    """Stores the first half of the unconfirmed records under their reported ids, as the engine
    may have done before its answer was lost (when it wrote none of them), so that resuming must
    find out which of them the service has. Answers how many were stored."""
    written = len(error.inserted_ids)
    unconfirmed = list(error.unconfirmed_ids)
    maybe = records[written : written + len(unconfirmed)]
    stored = {n for _, n in stored_records(col)}
    if any(r["n"] in stored for r in maybe):
        return 0
    half = len(unconfirmed) // 2
    col.insert([{**r, "_id": i} for r, i in zip(maybe[:half], unconfirmed[:half])], progress=False)
    return half


@pytest.mark.parametrize(
    ("target", "with_ids"),
    [
        pytest.param("front", True, id="ferretdb-killed"),
        pytest.param("front", False, id="ferretdb-killed-server-assigned-ids"),
        pytest.param("storage", True, id="postgres-killed"),
    ],
)
def test_interrupted_insert_reports_what_was_written_and_resumes(
    collection: Collection, tmp_path: Path, target: str, with_ids: bool
) -> None:
    """``front``: the wire server dies as the write reaches it, so its answer is lost and the
    service can only report the chunk's records unconfirmed. ``storage``: the postmaster dies;
    its backends may still finish the writes under way, so the insert stops at that chunk or at a
    later one."""
    records = make_records(with_ids)
    kill_during_insert(collection, target)
    try:
        with pytest.raises(InsertError) as caught:
            collection.insert(records, chunk_size=CHUNK, progress=False)
    finally:
        engine("restart")
    wait_until_serving(collection)
    error = caught.value
    print(
        f"\n{target} killed: {error.code}, {len(error.inserted_ids)} written, "
        f"{len(error.unconfirmed_ids)} unconfirmed: {error.cause.message}"
    )
    check_report(collection, error, records)
    if target == "front":
        # The engine stays away longer than the service asks it which records it holds.
        assert error.failed_index == KILLED_CHUNK * CHUNK, "the kill did not find a chunk being written"
        assert len(error.unconfirmed_ids) == CHUNK
    else:
        # Backends notice their postmaster's death only when they next wait, and the kill itself is
        # a process of its own: on a busy machine a chunk or more after the killed one may still be
        # written before the insert stops. What must hold is the report, checked above.
        assert error.failed_index >= KILLED_CHUNK * CHUNK
        assert error.failed_index % CHUNK == 0
    store_some_unconfirmed(collection, error, records)
    # Which unconfirmed records the service holds: the leading ones whose `n` is stored.
    written = error.failed_index
    stored = {n for _, n in stored_records(collection)}
    held = 0
    while held < len(error.unconfirmed_ids) and written + held in stored:
        held += 1
    assert collection.present_prefix(error.unconfirmed_ids) == held

    # Resume as `cybercom import --resume` does: from the report of the stopped import.
    source = tmp_path / "records.ndjson"
    source.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    report = tmp_path / "report.json"
    report.write_bytes(orjson.dumps({"source": str(source.resolve()), **error.report()}))
    args = [collection.database.name, collection.name, str(source), "--resume", str(report)]
    code = cli_main(["import", *args, "--chunk-size", str(CHUNK), "--quiet"])
    assert code == 0
    assert [n for _, n in stored_records(collection)] == list(range(len(records))), "records lost or twice"
