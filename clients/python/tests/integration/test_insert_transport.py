"""``Collection.insert`` when a chunk's request fails below HTTP, against the real service.

A transport of the test's own passes every request to the service, except that one insert
request fails as a dropped connection does: either before it reaches the service (nothing of
it is written) or after the service wrote it, its answer lost on the way back. The records have
no ``_id``: the client names them, so the report's unconfirmed ids can be looked up, and
resuming as ``cybercom import --resume`` does stores every record exactly once.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from cybercom import Client, Collection, InsertError, ObjectId

from .conftest import TOKEN, URL

pytestmark = pytest.mark.integration

CHUNK = 50
CHUNKS = 4
#: The insert request (0-based) whose connection fails.
LOST_CHUNK = 2


class DroppingTransport(httpx.BaseTransport):
    """The real service, but insert request ``LOST_CHUNK`` fails with a transport error."""

    def __init__(self, answer_lost: bool) -> None:
        self.real = httpx.HTTPTransport()
        self.answer_lost = answer_lost
        self.inserts = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            self.inserts += 1
            if self.inserts - 1 == LOST_CHUNK:
                if not self.answer_lost:
                    raise httpx.ConnectError("connection refused", request=request)
                self.real.handle_request(request).close()  # written; the answer never comes back
                raise httpx.ReadError("connection reset by peer", request=request)
        return self.real.handle_request(request)

    def close(self) -> None:
        self.real.close()


@pytest.fixture
def records() -> list[dict[str, Any]]:
    return [{"n": n} for n in range(CHUNK * CHUNKS)]


def insert_through(
    col: Collection, transport: DroppingTransport, records: list[dict[str, Any]]
) -> InsertError:
    with Client(URL, token=TOKEN, transport=transport) as dropping:
        target = dropping.data_store[col.database.name][col.name]
        with pytest.raises(InsertError) as caught:
            target.insert(records, chunk_size=CHUNK, progress=False)
    return caught.value


def stored(col: Collection) -> Iterator[tuple[Any, int]]:
    return ((r["_id"], r["n"]) for r in col.find(projection={"_id": 1, "n": 1}, sort=[("n", 1)]))


@pytest.mark.parametrize("answer_lost", [False, True], ids=["request-lost", "answer-lost"])
def test_a_dropped_connection_is_reported_and_resumed_without_loss_or_duplicates(
    collection: Collection, records: list[dict[str, Any]], answer_lost: bool
) -> None:
    err = insert_through(collection, DroppingTransport(answer_lost), records)
    assert isinstance(err.cause, httpx.TransportError)
    assert len(err.inserted_ids) == LOST_CHUNK * CHUNK
    assert err.failed_index == LOST_CHUNK * CHUNK
    assert len(err.unconfirmed_ids) == CHUNK
    assert all(type(i) is ObjectId for i in err.inserted_ids + err.unconfirmed_ids)
    assert records[0] == {"n": 0}  # the caller's records are not given ids

    # The service stored the client's ids as ObjectIds (not as their hex text), and returned them.
    expected = LOST_CHUNK * CHUNK + (CHUNK if answer_lost else 0)
    assert collection.count({"_id": {"$type": "objectId"}}) == expected
    assert collection.count({"_id": {"$type": "string"}}) == 0
    rows = list(stored(collection))
    assert [n for _, n in rows] == list(range(expected))
    assert [i for i, _ in rows[: len(err.inserted_ids)]] == err.inserted_ids

    # Resuming: the unconfirmed records the service holds are skipped, the rest sent.
    written = collection.present_prefix(err.unconfirmed_ids)
    assert written == (CHUNK if answer_lost else 0)
    collection.insert(records[err.failed_index + written :], chunk_size=CHUNK, progress=False)
    assert [n for _, n in stored(collection)] == list(range(CHUNK * CHUNKS))
