"""What a researcher coming from pymongo and pandas reaches for, against the real service:
``update_many``/``delete_many``, ``skip``, and aggregation results as frames."""

from __future__ import annotations

import pytest

from cybercom import BadRequest, Client, Collection, InvalidQuery, NotFound, PermissionDenied

SITES = [{"n": n, "site": "alpha" if n % 2 == 0 else "beta"} for n in range(10)]


def test_update_many_merges_or_applies_operators_and_counts_like_pymongo(collection: Collection) -> None:
    collection.insert(SITES)
    result = collection.update_many({"site": "alpha"}, {"checked": True})
    assert (result.matched_count, result.modified_count) == (5, 5)
    assert collection.count({"checked": True}) == 5
    again = collection.update_many({"n": {"$lt": 4}}, {"$set": {"checked": True}})
    assert (again.matched_count, again.modified_count) == (4, 2)  # two of them were checked already
    assert collection.update_many({}, {"$inc": {"n": 100}}).matched_count == 10
    assert sorted(r["n"] for r in collection.find()) == list(range(100, 110))
    assert collection.update_many({"site": "gamma"}, {"x": 1}).matched_count == 0


def test_delete_many_removes_what_the_filter_matches_and_keeps_the_collection(collection: Collection) -> None:
    collection.insert(SITES)
    assert collection.delete_many({"n": {"$gte": 7}}).deleted_count == 3
    assert collection.count() == 7
    assert collection.delete_many({}).deleted_count == 7
    assert collection.count() == 0
    assert collection.name in collection.database.collections()


def test_writes_by_filter_refuse_bad_input_and_strangers(
    collection: Collection, other_client: Client
) -> None:
    collection.insert(SITES)
    with pytest.raises(BadRequest) as bad_update:
        collection.update_many({}, {"$set": {"_id": 1}})
    assert bad_update.value.code == "immutable_id"
    with pytest.raises(InvalidQuery) as bad_filter:
        collection.delete_many({"$where": "true"})
    assert bad_filter.value.code == "forbidden_operator"
    stranger = other_client.data_store[collection.database.name][collection.name]
    with pytest.raises(PermissionDenied):
        stranger.delete_many({})
    with pytest.raises(PermissionDenied):
        stranger.update_many({}, {"x": 1})
    with pytest.raises(NotFound):
        collection.database["no_such_collection"].delete_many({})
    assert collection.count() == 10 and collection.count({"x": 1}) == 0


@pytest.mark.server_feature("formats")
def test_skip_streams_or_pages_from_the_server(collection: Collection) -> None:
    collection.insert(SITES)
    streamed = collection.find(sort="n", skip=6)
    assert [r["n"] for r in streamed] == [6, 7, 8, 9]
    assert collection._area._ndjson_supported is True
    paged = collection.find({"site": "alpha"}, sort="-n", stream=False, page_size=2).skip(1)
    assert [r["n"] for r in paged] == [6, 4, 2, 0]
    assert [r["n"] for r in collection.find(sort="n", skip=3, limit=2)] == [3, 4]
    assert collection.find(skip=50).to_list() == []
    assert collection.find_one(sort="n", skip=9) is not None
    # count() is of the filter, as pymongo's count_documents: skip and limit do not change it.
    assert collection.find(skip=6).count() == 10


def test_aggregation_results_as_frames(collection: Collection) -> None:
    pd = pytest.importorskip("pandas")
    collection.insert(SITES)
    per_site = collection.aggregate(
        [{"$group": {"_id": "$site", "total": {"$sum": "$n"}}}, {"$sort": {"_id": 1}}]
    )
    assert per_site == [{"_id": "alpha", "total": 20}, {"_id": "beta", "total": 25}]
    df = per_site.to_dataframe()
    assert isinstance(df, pd.DataFrame)
    assert df.set_index("_id")["total"].to_dict() == {"alpha": 20, "beta": 25}
    nested = collection.aggregate([{"$match": {"n": 1}}, {"$project": {"_id": 0, "at": {"n": "$n"}}}])
    assert nested.to_dataframe(flatten=True).columns.tolist() == ["at.n"]
    assert per_site.to_arrow().column("total").to_pylist() == [20, 25]


def test_aggregation_results_as_a_geodataframe(collection: Collection) -> None:
    pytest.importorskip("geopandas")
    collection.insert(
        [{"name": f"s{i}", "geometry": {"type": "Point", "coordinates": [-97.0 + i, 35.0]}} for i in range(3)]
    )
    near = collection.aggregate([{"$match": {"name": {"$ne": "s1"}}}, {"$sort": {"name": 1}}])
    gdf = near.to_geodataframe()
    assert gdf["name"].tolist() == ["s0", "s2"]
    assert [point.x for point in gdf.geometry] == [-97.0, -95.0]
    assert str(gdf.crs) == "EPSG:4326"
