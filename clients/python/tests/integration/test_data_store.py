import datetime as dt
import uuid
from decimal import Decimal

import pytest

from cybercom import (
    AuthenticationFailed,
    Client,
    Collection,
    Conflict,
    InsertError,
    InvalidName,
    InvalidQuery,
    NotFound,
    ObjectId,
    PermissionDenied,
)

from .conftest import TOKEN, URL

UTC = dt.timezone.utc
STATIONS = [
    {"name": "Norman", "elev": 357, "installed": dt.datetime(2001, 4, 1, tzinfo=UTC), "loc": {"lat": 35.2}},
    {"name": "Boise City", "elev": 1265, "tags": ["high", "dry"]},
    {"name": "Tulsa", "elev": 194, "budget": Decimal("12.50")},
]


def test_databases_and_collections_are_created_listed_and_dropped(client: Client, dbname: str) -> None:
    db = client.data_store.create_database(dbname)
    try:
        assert dbname in client.data_store.databases()
        assert db.exists()
        db.create_collection("a")
        db.create_collection("b")
        with pytest.raises(Conflict):
            db.create_collection("a")
        db.create_collection("a", exist_ok=True)
        assert sorted(db.collections()) == ["a", "b"]
        db.drop_collection("b")
        db["a"].drop()
        assert db.collections() == []
    finally:
        db.drop()
    assert not client.data_store[dbname].exists()
    assert dbname not in client.data_store.databases()


def test_insert_find_count_distinct_aggregate(collection: Collection) -> None:
    ids = collection.insert(STATIONS)
    assert len(ids) == 3 and all(isinstance(i, ObjectId) for i in ids)
    assert collection.count() == 3
    assert collection.count({"elev": {"$gt": 300}}) == 2
    high = collection.find({"elev": {"$gt": 300}}, {"_id": 0, "name": 1, "elev": 1}, [("elev", -1)]).to_list()
    assert high == [{"name": "Boise City", "elev": 1265}, {"name": "Norman", "elev": 357}]
    norman = collection.find_one({"name": "Norman"})
    assert norman is not None
    assert norman["installed"] == dt.datetime(2001, 4, 1, tzinfo=UTC)  # a datetime again
    assert norman["_id"] == ids[0]
    assert sorted(collection.distinct("name")) == ["Boise City", "Norman", "Tulsa"]
    assert collection.distinct("name", {"elev": {"$lt": 300}}) == ["Tulsa"]
    total = collection.aggregate([{"$group": {"_id": None, "total": {"$sum": "$elev"}}}])
    assert total == [{"_id": None, "total": 1816}]
    # A date in a filter is sent as Extended JSON and compared as a date by the server.
    assert collection.count({"installed": {"$lt": dt.datetime(2002, 1, 1, tzinfo=UTC)}}) == 1
    # Decimal128 is stored exactly and read back as its decimal text (the JSON rendering).
    tulsa = collection.find_one({"name": "Tulsa"})
    assert tulsa is not None and Decimal(tulsa["budget"]) == Decimal("12.50")
    assert collection.count({"budget": Decimal("12.5")}) == 1


def test_find_reads_every_page_lazily_with_limit(collection: Collection) -> None:
    collection.insert(({"n": i} for i in range(250)), chunk_size=100)
    cursor = collection.find(sort={"n": 1}, projection={"_id": 0}, page_size=40, stream=False)
    assert [r["n"] for r in cursor] == list(range(250))
    assert [r["n"] for r in collection.find(sort="-n", limit=5)] == [249, 248, 247, 246, 245]
    assert cursor.count() == 250


def test_get_replace_update_delete(collection: Collection) -> None:
    rid = collection.insert_one({"name": "Mesonet", "n": 1})
    assert collection.get(rid) == {"_id": rid, "name": "Mesonet", "n": 1}
    assert collection.update(rid, {"active": True})["active"] is True
    assert collection.update(rid, {"$inc": {"n": 2}})["n"] == 3
    replaced = collection.replace(rid, {"name": "Other"})
    assert replaced == {"_id": rid, "name": "Other"}
    assert collection.get(rid) == {"_id": rid, "name": "Other"}
    collection.delete(rid)
    with pytest.raises(NotFound) as caught:
        collection.get(rid)
    assert caught.value.status == 404


def test_an_insert_stopping_part_way_reports_exactly_what_was_written(collection: Collection) -> None:
    collection.insert_one({"_id": "dup", "n": -1})
    records = [{"_id": f"r{i}", "n": i} for i in range(7)]
    records.insert(5, {"_id": "dup", "n": 99})
    with pytest.raises(InsertError) as caught:
        collection.insert(records, chunk_size=3, progress=False)
    err = caught.value
    assert isinstance(err.cause, Conflict)
    assert err.failed_index == 5
    assert err.inserted_ids == ["r0", "r1", "r2", "r3", "r4"]
    assert err.unconfirmed_ids == []
    stored = sorted(r["_id"] for r in collection.find(projection={"_id": 1}))
    assert stored == sorted(["dup", "r0", "r1", "r2", "r3", "r4"])


def test_error_classes_from_real_error_answers(
    client: Client, other_client: Client, collection: Collection
) -> None:
    with pytest.raises(NotFound) as not_found:
        client.data_store[f"missing{uuid.uuid4().hex[:6]}"]["x"].count()
    assert not_found.value.code in ("no_such_database", "no_such_collection")
    with pytest.raises(InvalidQuery) as bad:
        collection.count({"n": {"$nosuchop": 1}})
    assert bad.value.status == 400 and bad.value.message
    with pytest.raises(InvalidName):
        client.data_store.create_database("admin")
    with pytest.raises(PermissionDenied) as denied:
        other_client.data_store.create_database(f"x{uuid.uuid4().hex[:6]}")
    assert denied.value.status == 403
    with Client(URL, token="not-a-valid-token") as anonymous, pytest.raises(AuthenticationFailed) as auth:
        anonymous.data_store.databases()
    assert auth.value.status == 401


def test_frames_from_a_find(collection: Collection) -> None:
    pd = pytest.importorskip("pandas")
    collection.insert(STATIONS)
    df = collection.find(sort={"elev": 1}).to_dataframe()
    assert df["name"].tolist() == ["Tulsa", "Norman", "Boise City"]
    assert str(df["installed"].dtype).startswith("datetime64")
    assert pd.isna(df["installed"].iloc[0])
    flat = collection.find(projection={"_id": 0, "loc": 1, "name": 1}, sort={"elev": 1}).to_dataframe(
        flatten=True
    )
    assert flat["loc.lat"].tolist()[1] == 35.2
    table = collection.find(projection={"_id": 0, "name": 1, "elev": 1}).to_arrow()
    assert sorted(table.column("elev").to_pylist()) == [194, 357, 1265]


def test_geodataframe_from_geojson_features(collection: Collection) -> None:
    pytest.importorskip("geopandas")
    collection.insert(
        [
            {
                "type": "Feature",
                "geometry": {"type": "Point", "coordinates": [-97.4, 35.2]},
                "properties": {"n": 1},
            },
            {
                "type": "Feature",
                "geometry": {"type": "Point", "coordinates": [-96.0, 36.1]},
                "properties": {"n": 2},
            },
        ]
    )
    gdf = collection.find(sort={"properties.n": 1}).to_geodataframe()
    assert gdf["n"].tolist() == [1, 2]
    assert gdf.geometry.iloc[0].x == -97.4
    assert str(gdf.crs) == "EPSG:4326"


def test_catalog_reads_like_the_data_store(client: Client) -> None:
    import os

    name = os.environ["CYBERCOM_TEST_CATALOG_DB"]
    db = client.catalog[name]
    col = db.create_collection(f"c{uuid.uuid4().hex[:6]}")
    try:
        col.insert([{"a": 1}, {"a": 2}])
        assert col.name in db.collections()
        assert [r["a"] for r in col.find(sort="a")] == [1, 2]
        assert name in client.catalog.databases()
    finally:
        col.drop()


@pytest.mark.server_feature("formats")
def test_find_streams_ndjson_and_export_writes_csv(collection: Collection, tmp_path: object) -> None:
    import io

    collection.insert({"n": i, "loc": {"lat": i / 2}} for i in range(30))
    assert [r["n"] for r in collection.find(sort="n", projection={"_id": 0})] == list(range(30))
    assert collection._area._ndjson_supported is True
    out = io.BytesIO()
    collection.export(out, "csv", sort="n", projection={"_id": 0})
    lines = out.getvalue().decode().splitlines()
    assert lines[0] == "n,loc.lat"
    assert lines[1:3] == ["0,0.0", "1,0.5"]


@pytest.mark.server_feature("formats")
def test_streams_from_this_machine_come_as_they_are_and_compressed_when_asked(
    collection: Collection, dbname: str
) -> None:
    """The suite's service is on 127.0.0.1: the client asks for its streams uncompressed, and
    reads the same records from them as a client that asks for them compressed."""
    records = [{"n": i, "note": f"record {i}".ljust(300, ".")} for i in range(200)]
    collection.insert(records)
    path = f"{collection.path}?format=ndjson"
    with Client(URL, token=TOKEN, compression=True) as compressing:
        answer = collection._session.send("GET", path, stream=True)
        answer.close()
        assert "content-encoding" not in answer.headers
        answer = compressing._session.send("GET", path, stream=True)
        answer.close()
        assert answer.headers["content-encoding"] in ("gzip", "br")
        mine = compressing.data_store[dbname][collection.name]
        expected = [{"n": r["n"], "note": r["note"]} for r in records]
        assert list(mine.find(sort="n", projection={"_id": 0})) == expected
        assert list(collection.find(sort="n", projection={"_id": 0})) == expected


@pytest.mark.server_feature("links")
def test_export_url_is_a_signed_link_pandas_reads_without_credentials(collection: Collection) -> None:
    pd = pytest.importorskip("pandas")
    collection.insert([{"n": 1, "name": "a"}, {"n": 2, "name": "b"}])
    url = collection.export_url("csv", sort="n", fields=["n", "name"], expires_in=600)
    assert "link=" in url
    df = pd.read_csv(url)
    assert df.to_dict("records") == [{"n": 1, "name": "a"}, {"n": 2, "name": "b"}]


@pytest.mark.server_feature("indexes")
def test_indexes_are_created_listed_and_dropped(collection: Collection) -> None:
    name = collection.create_index([("n", 1), ("name", -1)], unique=True)
    listed = {i["name"]: i for i in collection.indexes()}
    assert listed[name]["key"] == {"n": 1, "name": -1}
    assert listed[name].get("unique") is True
    collection.insert_one({"n": 1, "name": "a"})
    with pytest.raises(InsertError) as caught:
        collection.insert([{"n": 1, "name": "a"}])
    assert isinstance(caught.value.cause, Conflict)
    collection.drop_index(name)
    assert name not in {i["name"] for i in collection.indexes()}
    with pytest.raises(NotFound):
        collection.drop_index(name)
