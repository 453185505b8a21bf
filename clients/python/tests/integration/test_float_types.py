"""Floats stay floats: a Python float the client inserts (written ``3.0``) is stored as a BSON
double, also when its value is whole or -0.0, and comes back a float through ``find()``,
``to_dataframe()`` (float64), a CSV export read by pandas and ``cybercom import`` of a CSV file
(docs/python-client.md, "Numbers"). Integers stay integers beside them."""

from __future__ import annotations

import io
import math
import uuid
from pathlib import Path
from typing import Any

import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cybercom import Collection

from .conftest import cli

FLOATS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(min_value=-(2**53), max_value=2**53).map(float),
    st.sampled_from([0.0, -0.0, 1e20, 1e21, 5e-324]),
)


def same_float(read: Any, written: float) -> bool:
    """The same float, its type and its sign (-0.0 is not 0.0) included."""
    return type(read) is float and read == written and math.copysign(1, read) == math.copysign(1, written)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(FLOATS, min_size=1, max_size=12))
def test_floats_come_back_as_floats(collection: Collection, values: list[float]) -> None:
    batch = uuid.uuid4().hex
    collection.insert([{"batch": batch, "i": i, "x": x, "nested": {"y": [x]}} for i, x in enumerate(values)])
    selected = {"batch": batch}
    assert collection.count({**selected, "x": {"$type": "double"}}) == len(values)
    assert collection.count({**selected, "i": {"$type": "int"}}) == len(values)

    records = list(collection.find(selected, sort="i"))
    for record, x in zip(records, values):
        assert same_float(record["x"], x), (record["x"], x)
        assert same_float(record["nested"]["y"][0], x)
        assert type(record["i"]) is int

    frame = collection.find(selected, {"_id": 0, "i": 1, "x": 1}, sort="i").to_dataframe()
    assert str(frame["x"].dtype) == "float64"
    assert str(frame["i"].dtype) == "int64"
    assert frame["x"].tolist() == values

    exported = io.BytesIO()
    collection.export(exported, "csv", filter=selected, sort="i", fields=["i", "x"])
    table = pd.read_csv(io.BytesIO(exported.getvalue()))
    assert str(table["x"].dtype) == "float64"
    assert table["x"].tolist() == values


def test_a_csv_column_of_whole_floats_is_imported_as_doubles(collection: Collection, tmp_path: Path) -> None:
    db, col = collection.database.name, collection.name
    source = tmp_path / "depths.csv"
    source.write_text("site,depth,count\nA,3.0,3\nB,-0.0,4\nC,1e3,5\n")
    cli("import", db, col, str(source), "--quiet")
    assert collection.count({"depth": {"$type": "double"}}) == 3
    assert collection.count({"count": {"$type": "int"}}) == 3
    frame = collection.find({}, {"_id": 0}, sort="site").to_dataframe()
    assert str(frame["depth"].dtype) == "float64"
    assert same_float(frame["depth"].tolist()[1], -0.0)
