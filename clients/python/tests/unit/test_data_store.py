import datetime as dt
import io
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import orjson
import pytest

from cybercom import (
    InsertError,
    InvalidQuery,
    NotFound,
    ObjectId,
    ProtocolError,
    ServiceUnavailable,
    data_store,
    ejson,
)
from cybercom.data_store import query_param, sort_document

from .recorded import body_of, envelope, error_response, json_response, make_client

OID = "65a1b2c3d4e5f60718293a4b"


def params(request: httpx.Request) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(str(request.url)).query).items()}


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        (None, None),
        ("elev", {"elev": 1}),
        ("-elev", {"elev": -1}),
        ([("a", 1), ("b", -1)], {"a": 1, "b": -1}),
    ],
)
def test_sort_document(sort: object, expected: object) -> None:
    assert sort_document(sort) == expected  # type: ignore[arg-type]


def test_query_param_encodes_extended_json() -> None:
    text = query_param({"t": {"$gt": dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)}}, {"_id": 0}, "-t")
    assert orjson.loads(text or "") == {
        "filter": {"t": {"$gt": {"$date": "2020-01-01T00:00:00.000Z"}}},
        "projection": {"_id": 0},
        "sort": {"t": -1},
    }
    assert query_param() is None


def test_find_pages_lazily_and_decodes_records() -> None:
    rows = [{"_id": OID, "n": i, "at": "2020-01-01T00:00:00.000Z"} for i in range(5)]

    def handler(request: httpx.Request) -> httpx.Response:
        p = params(request)
        if p.get("format") == "ndjson":  # a server without NDJSON exports
            return error_response(400, "invalid_format", 'Unknown format "ndjson".')
        page, size = int(p["page"]), int(p["page_size"])
        return json_response(200, envelope(rows[(page - 1) * size : page * size], page, 3, size, 5))

    client, recorder = make_client(handler)
    cursor = client.data_store["d"]["c"].find({"n": {"$gte": 0}}, page_size=2)
    assert recorder.requests == []  # lazy
    records = list(cursor)
    assert [r["n"] for r in records] == [0, 1, 2, 3, 4]
    assert isinstance(records[0]["_id"], ObjectId)
    assert records[0]["at"] == dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)
    assert [params(r).get("page") for r in recorder.requests] == [None, "1", "2", "3"]
    # The fallback is remembered: the next find pages at once.
    list(client.data_store["d"]["c"].find(page_size=2))
    assert params(recorder.requests[4]).get("format") is None


def test_find_streams_ndjson_when_the_server_offers_it() -> None:
    lines = b'{"_id": "a", "n": 1}\n{"_id": "b", "n": 2}\n'

    def handler(request: httpx.Request) -> httpx.Response:
        assert params(request)["format"] == "ndjson"
        assert orjson.loads(params(request)["query"]) == {"filter": {"n": 1}}
        return httpx.Response(200, content=lines, headers={"content-type": "application/x-ndjson"})

    client, _ = make_client(handler)
    assert list(client.data_store["d"]["c"].find({"n": 1})) == [{"_id": "a", "n": 1}, {"_id": "b", "n": 2}]


def test_find_reassembles_records_cut_across_stream_chunks() -> None:
    records = [{"_id": f"{n:024x}", "note": "x" * (n * 700)} for n in range(8)]
    body = b"\n".join(orjson.dumps(r) for r in records)  # the last line has no newline
    # Arriving in chunks of an odd size: records start and end anywhere in a chunk, some span several.
    pieces = [body[i : i + 997] for i in range(0, len(body), 997)]

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=iter(pieces), headers={"content-type": "application/x-ndjson"})

    client, _ = make_client(handler)
    assert list(client.data_store["d"]["c"].find()) == records


def _streaming(body: bytes, piece: int, count: int | None = None) -> Any:
    """A handler that streams ``body`` as NDJSON in pieces of ``piece`` bytes (and answers a
    count query with ``count``)."""

    def handler(request: httpx.Request) -> httpx.Response:
        if params(request).get("format") != "ndjson":
            return json_response(200, envelope([], 1, 1, 1, count or 0))
        pieces = [body[i : i + piece] for i in range(0, len(body), piece)]
        return httpx.Response(200, content=iter(pieces), headers={"content-type": "application/x-ndjson"})

    return handler


#: Records as a stream brings them: blocks of records alike, of different fields, dates, ids of
#: every kind, a wrapper, nested objects.
STREAMED = [
    *(
        {"_id": f"{n:024x}", "n": n, "site": f"s{n % 3}", "value": n * 0.5, "flag": n % 2 == 0}
        for n in range(40)
    ),
    *({"_id": f"{n:024X}", "n": n, "loc": {"lat": n + 0.5, "lon": -n}} for n in range(40, 60)),
    {"_id": "not an id", "n": 60, "at": "2001-04-01T00:00:00.000Z", "amount": {"$numberDecimal": "1.5"}},
    {"_id": 61, "extra": [1, "two"], "n": 61},
    *({"n": n, "site": None} for n in range(62, 70)),
]


@pytest.mark.parametrize("piece", [7, 997, 1 << 20])
def test_find_streams_records_as_decoded_line_by_line(piece: int) -> None:
    body = b"".join(orjson.dumps(r) + (b"\r\n" if r["n"] % 7 == 0 else b"\n") for r in STREAMED) + b"\n"
    client, _ = make_client(_streaming(body, piece))
    records = list(client.data_store["d"]["c"].find())
    expected = [ejson.decode_line(orjson.dumps(r)) for r in STREAMED]
    assert repr(records) == repr(expected)  # values and their types
    assert type(records[0]["_id"]) is ObjectId and records[40]["_id"] == f"{40:024x}"
    assert records[60]["at"] == dt.datetime(2001, 4, 1, tzinfo=dt.timezone.utc)
    # As many as asked for, when a limit cuts a block.
    assert list(client.data_store["d"]["c"].find(limit=45, stream=True)) == expected[:45]


@pytest.mark.parametrize("flatten", [False, True])
@pytest.mark.parametrize("piece", [7, 997, 1 << 20])
def test_find_to_dataframe_equals_the_frame_of_the_records(piece: int, flatten: bool) -> None:
    pd = pytest.importorskip("pandas")
    from cybercom.frames import records_to_dataframe

    body = b"".join(orjson.dumps(r) + b"\n" for r in STREAMED)
    client, _ = make_client(_streaming(body, piece, count=len(STREAMED)))
    col = client.data_store["d"]["c"]
    expected = records_to_dataframe(list(col.find()), flatten=flatten)
    for progress in (False, True):
        frame = col.find().to_dataframe(flatten=flatten, progress=progress)
        pd.testing.assert_frame_equal(frame, expected)
    assert frame["_id"].tolist()[:2] == [f"{0:024x}", f"{1:024x}"]  # ObjectIds as their text
    assert frame["_id"].tolist()[40] == f"{40:024x}"  # lower case, as an ObjectId has it
    assert col.find(limit=45, stream=True).to_dataframe().shape[0] == 45


def test_find_to_arrow_equals_the_table_of_the_records() -> None:
    pytest.importorskip("pyarrow")
    from cybercom.frames import records_to_arrow

    body = b"".join(orjson.dumps(r) + b"\n" for r in STREAMED)
    client, _ = make_client(_streaming(body, 997))
    col = client.data_store["d"]["c"]
    assert col.find().to_arrow().equals(records_to_arrow(list(col.find())))


def test_find_limit_reads_only_what_it_needs() -> None:
    client, recorder = make_client(
        lambda r: json_response(200, envelope([{"n": 1}, {"n": 2}], 1, 50, 2, 100))
    )
    assert [r["n"] for r in client.data_store["d"]["c"].find(limit=2, page_size=500)] == [1, 2]
    assert len(recorder.requests) == 1
    assert params(recorder.requests[0])["page_size"] == "2"


def test_insert_in_chunks_returns_ids_and_reports_exactly_what_was_written() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        chunk = body_of(request)
        if chunk[0]["n"] < 4:
            return json_response(201, {"inserted_count": len(chunk)})
        return error_response(
            409,
            "duplicate_key",
            "E11000 duplicate key",
            {"inserted_ids": ["id4"], "inserted_count": 1, "failed_index": 1},
        )

    client, recorder = make_client(handler)
    with pytest.raises(InsertError) as caught:
        client.data_store["d"]["c"].insert(
            ({"_id": f"id{i}", "n": i} for i in range(8)), chunk_size=2, progress=False
        )
    err = caught.value
    assert err.inserted_ids == ["id0", "id1", "id2", "id3", "id4"]
    assert err.failed_index == 5
    assert err.unconfirmed_ids == []
    assert err.status == 409 and err.code == "duplicate_key"
    assert err.report()["inserted_count"] == 5
    assert len(recorder.requests) == 3  # nothing after the failing chunk


def test_insert_cuts_chunks_at_a_byte_budget_and_at_chunk_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(data_store, "INSERT_CHUNK_BYTES", 1000)
    client, recorder = make_client(lambda r: json_response(201, {"inserted_count": len(body_of(r))}))
    # About 113 bytes a record (with its own _id, so that no id is added to it): 8 fit in 1,000
    # bytes; chunk_size caps the chunk below that.
    records = [{"_id": i, "n": i, "note": "x" * 87} for i in range(20)]
    ids = client.data_store["d"]["c"].insert(records, progress=False)
    assert ids == list(range(20))
    bodies = [r.content for r in recorder.requests]
    assert [len(orjson.loads(b)) for b in bodies] == [8, 8, 4]
    assert all(len(b) <= 1000 for b in bodies)
    recorder.requests.clear()
    client.data_store["d"]["c"].insert(records, chunk_size=4, progress=False)
    assert [len(body_of(r)) for r in recorder.requests] == [4, 4, 4, 4, 4]
    # A record larger than the budget goes alone rather than not at all.
    recorder.requests.clear()
    client.data_store["d"]["c"].insert([{"n": 0}, {"n": 1, "note": "y" * 2000}, {"n": 2}], progress=False)
    assert [len(body_of(r)) for r in recorder.requests] == [1, 1, 1]


def test_insert_reports_unconfirmed_ids_of_a_lost_connection() -> None:
    client, _ = make_client(
        lambda r: error_response(
            503,
            "database_unavailable",
            "lost",
            {"inserted_ids": [], "inserted_count": 0, "failed_index": 0, "unconfirmed_ids": ["x", "y"]},
        )
    )
    with pytest.raises(InsertError) as caught:
        client.data_store["d"]["c"].insert([{"_id": "x"}, {"_id": "y"}])
    assert caught.value.unconfirmed_ids == ["x", "y"]
    assert isinstance(caught.value.cause, ServiceUnavailable)


def test_insert_asks_for_counts_and_returns_the_ids_it_sent() -> None:
    """The service answers each chunk with its count (answer=count); the ids returned are those
    the records were sent with: the caller's, as given, or the client's ObjectIds."""
    client, recorder = make_client(lambda r: json_response(201, {"inserted_count": len(body_of(r))}))
    when = dt.datetime(2024, 5, 1, 12, 30)
    records = [{"_id": 7, "n": 0}, {"n": 1}, {"_id": when, "n": 2}, {"_id": "5f1d7a2b9c8e4f3a2b1c0d9e"}]
    ids = client.data_store["d"]["c"].insert(records, chunk_size=2, progress=False)
    assert [params(r) for r in recorder.requests] == [{"answer": "count"}] * 2
    sent = [ejson.decode(r["_id"]) for request in recorder.requests for r in body_of(request)]
    assert ids[0] == 7 and ids[2] is when and type(ids[3]) is str
    assert type(ids[1]) is ObjectId and ids[1] == sent[1]


def test_insert_falls_back_to_ids_on_a_service_without_count_answers() -> None:
    """A service older than answer=count refuses the parameter (nothing written): the chunk is
    sent again without it, and the following chunks are sent without it from the start."""

    def handler(request: httpx.Request) -> httpx.Response:
        if "answer" in params(request):
            return error_response(400, "unknown_parameter", 'Unknown query parameter "answer".')
        return echo_ids(request)

    client, recorder = make_client(handler)
    records = [{"_id": i} for i in range(5)]
    assert client.data_store["d"]["c"].insert(records, chunk_size=2, progress=False) == list(range(5))
    assert [params(r) for r in recorder.requests] == [{"answer": "count"}, {}, {}, {}]
    assert [len(body_of(r)) for r in recorder.requests] == [2, 2, 2, 1]


def test_insert_stops_at_a_chunk_answered_with_another_count() -> None:
    client, recorder = make_client(lambda r: json_response(201, {"inserted_count": len(body_of(r)) - 1}))
    with pytest.raises(ProtocolError) as caught:
        client.data_store["d"]["c"].insert([{"_id": i} for i in range(6)], chunk_size=2, progress=False)
    assert caught.value.code == "insert_count"
    assert len(recorder.requests) == 1  # the next chunk is not sent


def test_insert_serialises_the_next_chunk_once_the_current_body_is_sent() -> None:
    """Not while the sending thread still needs the interpreter lock to write the body: it would
    wait for it up to the switch interval (5 ms) for each chunk."""
    client, recorder = make_client(lambda r: json_response(201, {"inserted_count": len(body_of(r))}))
    # How many requests the service had received when each record was taken from the iterable.
    seen: list[int] = []

    def records() -> Iterator[dict[str, Any]]:
        for i in range(10):
            seen.append(len(recorder.requests))
            yield {"_id": i}

    client.data_store["d"]["c"].insert(records(), chunk_size=2, progress=False)
    # Taking record 2 ends the first chunk; the records after it are taken while the chunk before
    # theirs is answered, so its body has been sent by then.
    assert [i for i, received in enumerate(seen) if received < (i - 1) // 2] == []
    assert len(recorder.requests) == 5
    # The body goes with its length, as bytes do (not in chunks).
    first = recorder.requests[0]
    assert first.headers["content-length"] == str(len(first.content))
    assert "transfer-encoding" not in first.headers


def echo_ids(request: httpx.Request) -> httpx.Response:
    """The service's answer to a chunk that was written whole: the ids it was sent, in order."""
    return json_response(201, {"inserted_ids": [r["_id"] for r in body_of(request)]})


def sent_ids(request: httpx.Request) -> list[Any]:
    return [ejson.decode(r["_id"]) for r in body_of(request)]


@pytest.mark.parametrize(
    "failure",
    [httpx.ConnectError("connection refused"), httpx.ReadError(""), httpx.ReadTimeout("timed out")],
)
def test_a_chunk_lost_to_a_transport_error_is_reported_with_its_ids_unconfirmed(
    failure: httpx.TransportError,
) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if len(recorder.requests) == 2:
            raise failure
        return echo_ids(request)

    client, recorder = make_client(handler)
    records = [{"n": i} for i in range(7)]
    with pytest.raises(InsertError) as caught:
        client.data_store["d"]["c"].insert(records, chunk_size=3, progress=False)
    err = caught.value
    first, second = (sent_ids(r) for r in recorder.requests)
    # Ids made by the client: the records of the chunk whose answer never came can be looked up.
    assert all(type(i) is ObjectId for i in first + second)
    assert err.inserted_ids == first
    assert err.failed_index == 3
    assert err.unconfirmed_ids == second
    assert err.cause is failure
    assert err.status is None and err.code == "transport_error"
    assert type(failure).__name__ in str(err)
    report = orjson.loads(orjson.dumps(err.report()))
    assert report["unconfirmed_ids"] == [{"$oid": i} for i in second]
    assert report["error"]["code"] == "transport_error"
    assert len(recorder.requests) == 2  # a POST is not repeated, and nothing follows the lost chunk


def test_insert_gives_records_without_id_a_client_objectid_and_leaves_the_callers_records() -> None:
    client, recorder = make_client(echo_ids)
    records = [{"n": 0}, {"_id": "mine", "n": 1}, {"n": 2, "_id": None}, {"n": 3}, {}]
    before = orjson.dumps(records)
    ids = client.data_store["d"]["c"].insert(records, progress=False)
    assert orjson.dumps(records) == before  # not given an "_id" behind the caller's back
    sent = body_of(recorder.requests[0])
    assert sent[1] == {"_id": "mine", "n": 1} and sent[2] == {"n": 2, "_id": None}
    assert [r.get("n") for r in sent] == [0, 1, 2, 3, None]
    assert set(sent[4]) == {"_id"} and ids[4] == ObjectId(sent[4]["_id"]["$oid"])
    assert set(sent[0]) == {"_id", "n"} and set(sent[0]["_id"]) == {"$oid"}
    assert ids[0] == ObjectId(sent[0]["_id"]["$oid"]) and ids[3] == ObjectId(sent[3]["_id"]["$oid"])
    assert ids[0] != ids[3]


def test_insert_one_sends_a_client_objectid_and_reports_a_lost_answer_with_it() -> None:
    client, recorder = make_client(lambda r: json_response(201, {"_id": body_of(r)["_id"]}))
    record = {"n": 1}
    rid = client.data_store["d"]["c"].insert_one(record)
    assert record == {"n": 1}  # the caller's record is left as it is
    sent = body_of(recorder.requests[0])
    assert sent == {"_id": {"$oid": str(rid)}, "n": 1} and type(rid) is ObjectId
    assert client.data_store["d"]["c"].insert_one({"_id": "mine"}) == "mine"

    failure = httpx.ReadError("")

    def lost(request: httpx.Request) -> httpx.Response:
        raise failure

    client, recorder = make_client(lost)
    with pytest.raises(InsertError) as caught:
        client.data_store["d"]["c"].insert_one({"n": 2})
    err = caught.value
    # The id the record was sent with: whether it was written can be looked up.
    assert err.unconfirmed_ids == [ObjectId(body_of(recorder.requests[0])["_id"]["$oid"])]
    assert err.inserted_ids == [] and err.failed_index == 0 and err.cause is failure
    assert err.code == "transport_error"
    assert len(recorder.requests) == 1  # a POST is not repeated


def test_report_keeps_the_type_of_server_assigned_ids() -> None:
    oids = [f"{i:024x}" for i in range(3)]
    client, _ = make_client(
        lambda r: error_response(
            503,
            "database_unavailable",
            "lost",
            {"inserted_ids": oids[:1], "inserted_count": 1, "failed_index": 1, "unconfirmed_ids": oids[1:]},
        )
    )
    with pytest.raises(InsertError) as caught:
        client.data_store["d"]["c"].insert([{"n": 0}, {"n": 1}, {"n": 2}])
    # Written as its hex text, an ObjectId would be looked up as a string on resuming, and missed.
    report = orjson.loads(orjson.dumps(caught.value.report()))
    assert report["inserted_ids"] == [{"$oid": oids[0]}]
    assert report["unconfirmed_ids"] == [{"$oid": oids[1]}, {"$oid": oids[2]}]


def test_present_prefix_asks_about_a_bounded_number_of_ids_per_request() -> None:
    held = {f"r{i}" for i in range(250)}

    def handler(request: httpx.Request) -> httpx.Response:
        asked = orjson.loads(params(request)["query"])["filter"]["_id"]["$in"]
        rows = [{"_id": i} for i in asked if i in held]
        return json_response(200, envelope(rows, 1, 1, len(rows), 1000))

    client, recorder = make_client(handler)
    ids = [f"r{i}" for i in range(1000)]
    assert client.data_store["d"]["c"].present_prefix(ids) == 250
    # 10,000 ids in one URL would be refused (431); batches stop at the first missing id.
    assert [len(orjson.loads(params(r)["query"])["filter"]["_id"]["$in"]) for r in recorder.requests] == [
        100,
        100,
        100,
    ]


def test_single_record_insert_replace_update_delete_and_get() -> None:
    seen: list[tuple[str, str]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append((request.method, request.url.raw_path.decode().split("?")[0]))
        if request.method == "POST":
            return json_response(201, {"_id": OID})
        if request.method == "GET" and request.url.path.endswith("/missing/"):
            return error_response(404, "no_such_record", "No record.")
        return json_response(200, {"_id": OID, **(body_of(request) if request.content else {})})

    client, _ = make_client(handler)
    col = client.data_store["d b"]["c/1"]
    assert col.insert({"a": 1}) == [OID]
    assert col.replace(OID, {"a": 2}) == {"_id": OID, "a": 2}
    assert col.update(OID, {"$inc": {"a": 1}}) == {"_id": OID, "$inc": {"a": 1}}
    col.delete(OID)
    assert col.get(OID)["_id"] == OID
    with pytest.raises(NotFound):
        col.get("missing")
    base = "/api/data_store/data/d%20b/c%2F1/"
    assert seen[:5] == [
        ("POST", base),
        ("PUT", f"{base}{OID}/"),
        ("PATCH", f"{base}{OID}/"),
        ("DELETE", f"{base}{OID}/"),
        ("GET", f"{base}{OID}/"),
    ]


def test_count_distinct_aggregate() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        p = params(request)
        if "distinct" in p:
            return json_response(200, envelope(["Norman", "Tulsa"], 1, 1, 1000, 2))
        if "aggregate" in p:
            assert orjson.loads(p["aggregate"]) == [{"$group": {"_id": None, "n": {"$sum": 1}}}]
            return json_response(200, envelope([{"_id": None, "n": 3}], 1, 1, 1000, 1))
        if "query" in p and "$where" in p["query"]:
            return error_response(400, "invalid_query", "unknown operator $where")
        return json_response(200, envelope([{}], 1, 3, 1, 3))

    client, _ = make_client(handler)
    col = client.data_store["d"]["c"]
    assert col.count() == 3
    assert col.distinct("name") == ["Norman", "Tulsa"]
    assert col.aggregate([{"$group": {"_id": None, "n": {"$sum": 1}}}]) == [{"_id": None, "n": 3}]
    with pytest.raises(InvalidQuery):
        col.count({"$where": "1"})


def test_databases_and_collections_listing_create_drop() -> None:
    bodies: list[object] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            bodies.append(body_of(request))
            if body_of(request) == {"collection": "exists"}:
                return error_response(409, "collection_exists", "exists")
            return json_response(201, {})
        if request.url.path == "/api/data_store/data/":
            return json_response(200, envelope([{"database": "a"}, {"database": "b"}], 1, 1, 1000, 2))
        return json_response(200, envelope([{"collection": "x"}], 1, 1, 1000, 1))

    client, _ = make_client(handler)
    assert client.data_store.databases() == ["a", "b"]
    db = client.data_store.create_database("new")
    assert db.collections() == ["x"]
    db.create_collection("exists", exist_ok=True)
    db["x"].drop()
    db.drop()
    assert bodies == [
        {"database": "new"},
        {"collection": "exists"},
        {"collection": "x", "action": "delete"},
        {"database": "new", "action": "delete"},
    ]


def test_indexes_per_the_interface() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path.startswith("/api/catalog/indexes/db/col/")
        if request.method == "GET":
            return json_response(200, {"indexes": [{"name": "_id_", "key": {"_id": 1}}]})
        if request.method == "POST":
            assert body_of(request) == {"keys": [["a", 1], ["b", -1]], "unique": True}
            return json_response(201, {"name": "a_1_b_-1"})
        assert request.url.path.endswith("/a_1_b_-1/")
        return json_response(200, {"deleted": "a_1_b_-1"})

    client, _ = make_client(handler)
    col = client.catalog["db"]["col"]
    assert col.indexes() == [{"name": "_id_", "key": {"_id": 1}}]
    assert col.create_index([("a", 1), ("b", -1)], unique=True) == "a_1_b_-1"
    col.drop_index("a_1_b_-1")


def test_export_url_asks_for_a_signed_link_of_exactly_the_export_path() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        body = body_of(request)
        assert request.url.path == "/api/links/"
        assert body["expires_in"] == 600
        path = body["path"]
        assert path.startswith("/api/data_store/data/d/c/?")
        q = parse_qs(urlsplit(path).query)
        assert q["format"] == ["csv"]
        assert q["fields"] == ["a,b.c"]
        assert orjson.loads(q["query"][0]) == {"filter": {"a": 1}}
        return json_response(
            201, {"url": f"http://api.test{path}&link=tok", "expires": "2030-01-01T00:00:00Z"}
        )

    client, _ = make_client(handler)
    url = client.data_store["d"]["c"].export_url("csv", filter={"a": 1}, fields=["a", "b.c"], expires_in=600)
    assert url.endswith("&link=tok")
    with pytest.raises(ValueError, match="format"):
        client.data_store["d"]["c"].export_path("xlsx")


def test_export_streams_the_body_into_a_file() -> None:
    client, _ = make_client(lambda r: httpx.Response(200, content=b"_id,a\r\n1,2\r\n"))
    out = io.BytesIO()
    assert client.data_store["d"]["c"].export(out, "csv") == 12
    assert out.getvalue() == b"_id,a\r\n1,2\r\n"


def test_update_many_and_delete_many_send_the_filter_and_answer_pymongo_counts() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/api/data_store/data/d/c/"
        query = orjson.loads(params(request)["query"])
        if request.method == "PATCH":
            assert query == {"filter": {"t": {"$lt": {"$date": "2020-01-01T00:00:00.000Z"}}}}
            assert body_of(request) == {"$set": {"old": True}}
            return json_response(200, {"matched_count": 3, "modified_count": 2})
        assert request.method == "DELETE"
        assert query == {"filter": {}}  # an empty filter is sent, never left out
        return json_response(200, {"deleted_count": 5})

    client, recorder = make_client(handler)
    col = client.data_store["d"]["c"]
    updated = col.update_many({"t": {"$lt": dt.datetime(2020, 1, 1)}}, {"$set": {"old": True}})
    assert (updated.matched_count, updated.modified_count) == (3, 2)
    assert col.delete_many({}).deleted_count == 5
    assert len(recorder.requests) == 2
    with pytest.raises(TypeError, match="every record"):
        col.delete_many(None)  # type: ignore[arg-type]


def test_update_many_refused_raises_the_query_error() -> None:
    client, _ = make_client(lambda r: error_response(400, "missing_filter", "Updates need a filter."))
    with pytest.raises(InvalidQuery) as caught:
        client.data_store["d"]["c"].update_many({}, {"x": 1})
    assert caught.value.code == "missing_filter"


def test_skip_is_sent_to_the_server_for_streams_and_pages() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        p = params(request)
        assert p["skip"] == "3"
        if p.get("format") == "ndjson":
            return httpx.Response(
                200, content=b'{"n": 3}\n', headers={"content-type": "application/x-ndjson"}
            )
        return json_response(200, envelope([{"n": 3}], 1, 1, 2, 1))

    client, recorder = make_client(handler)
    col = client.data_store["d"]["c"]
    assert list(col.find(skip=3)) == [{"n": 3}]
    assert list(col.find().skip(3)) == [{"n": 3}]
    assert list(col.find(skip=3, limit=2)) == [{"n": 3}]
    assert params(recorder.requests[-1])["page_size"] == "2"
    with pytest.raises(ValueError, match="skip"):
        col.find(skip=-1)
    with pytest.raises(ValueError, match="limit"):
        col.find(limit=-5)


def test_find_without_skip_sends_none_and_limit_zero_means_no_limit() -> None:
    rows = [{"n": i} for i in range(3)]

    def handler(request: httpx.Request) -> httpx.Response:
        assert "skip" not in params(request)
        return httpx.Response(
            200,
            content=b"".join(orjson.dumps(r) + b"\n" for r in rows),
            headers={"content-type": "application/x-ndjson"},
        )

    client, _ = make_client(handler)
    assert list(client.data_store["d"]["c"].find(limit=0)) == rows  # pymongo's "no limit"


def test_aggregate_answers_a_list_that_turns_into_frames() -> None:
    pd = pytest.importorskip("pandas")
    rows = [{"_id": "alpha", "n": 2}, {"_id": "beta", "n": 1}]
    client, _ = make_client(lambda r: json_response(200, envelope(rows, 1, 1, 1000, 2)))
    result = client.data_store["d"]["c"].aggregate([{"$group": {"_id": "$site", "n": {"$sum": 1}}}])
    assert result == rows and isinstance(result, list)
    df = result.to_dataframe()
    assert isinstance(df, pd.DataFrame)
    assert df.to_dict("records") == rows
    assert result.to_arrow().column("n").to_pylist() == [2, 1]
