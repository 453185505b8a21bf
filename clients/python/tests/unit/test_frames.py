import datetime as dt
from decimal import Decimal

import pytest

from cybercom.ejson import ObjectId
from cybercom.frames import columns_of, flatten_record

OID = "65a1b2c3d4e5f60718293a4b"
RECORDS = [
    {"_id": ObjectId(OID), "name": "Norman", "loc": {"lat": 35.2, "lon": -97.4}},
    {"_id": "x", "elev": 1265, "loc": {"lat": 36.7}},
]


def test_columns_in_order_of_first_appearance_padded_with_none() -> None:
    columns, rows = columns_of(RECORDS)
    assert rows == 2
    assert list(columns) == ["_id", "name", "loc", "elev"]
    assert columns["elev"] == [None, 1265]
    assert columns["name"] == ["Norman", None]
    assert type(columns["_id"][0]) is str  # plain strings in frames


def test_flatten() -> None:
    assert flatten_record({"a": {"b": {"c": 1}, "d": [1]}, "e": {}}) == {"a.b.c": 1, "a.d": [1], "e": {}}
    columns, _ = columns_of(RECORDS, flatten=True)
    assert columns["loc.lon"] == [-97.4, None]


def test_to_dataframe_and_arrow() -> None:
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    from cybercom.frames import records_to_arrow, records_to_dataframe

    when = dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)
    records = [{"a": 1, "t": when, "d": Decimal("1.5"), "mixed": 1}, {"a": 2, "t": None, "mixed": "x"}]
    df = records_to_dataframe(records)
    assert list(df.columns) == ["a", "t", "d", "mixed"]
    assert df["a"].tolist() == [1, 2]
    assert str(df["t"].dtype).startswith("datetime64") and str(df["t"].dt.tz) == "UTC"
    assert records_to_dataframe([]).shape == (0, 0)
    assert isinstance(records_to_dataframe(RECORDS, flatten=True), pd.DataFrame)
    table = records_to_arrow(records)
    assert table.column_names == ["a", "t", "d", "mixed"]
    assert table.column("a").to_pylist() == [1, 2]
    assert pa.types.is_timestamp(table.schema.field("t").type)
    assert table.column("mixed").to_pylist() == ["1", '"x"']  # mixed types kept as JSON text


def test_columns_of_blocks_equal_those_of_their_records_one_by_one() -> None:
    from cybercom.frames import columns_of_blocks

    blocks = [
        [{"a": 1, "b": "x"}, {"b": "y", "a": 2}],  # the same fields, in another order
        [{"c": 3.5}],  # one field, new; a and b missing
        [{"a": 4, "c": None, "d": [1]}, {"a": 5, "c": 6.5, "d": []}],
        [{"a": 7}, {"a": 8, "e": {"f": 1}}],  # not alike: record by record
        [{}, {}],  # no fields
        [{"_id": ObjectId(OID), "a": 9}],  # not parsed JSON (an ObjectId): record by record
        [{"e": {"f": 2, "g": {"h": 3}}, "a": 10}, {"a": 11, "e": {"f": 4, "g": {"h": 5}}}],
    ]
    for flatten in (False, True):
        plain = [(block, not any("_id" in r for r in block)) for block in blocks]
        expected = columns_of([r for block in blocks for r in block], flatten=flatten)
        assert columns_of_blocks(plain, flatten=flatten) == expected
        columns, rows = expected
        assert rows == 12 and all(len(values) == rows for values in columns.values())
    assert type(columns_of_blocks([(blocks[5], False)])[0]["_id"][0]) is str


def test_a_block_of_what_is_not_records_fails_as_record_by_record() -> None:
    from cybercom.frames import columns_of_blocks

    for block in ([7, 8], [{"a": 1}, 8]):
        with pytest.raises(AttributeError):
            columns_of(block)  # type: ignore[arg-type]
        with pytest.raises(AttributeError):
            columns_of_blocks([(block, True)])  # type: ignore[list-item]
