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
