import datetime as dt
import math
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cybercom import ObjectId
from cybercom import records_io as rio
from cybercom.column_types import ImportTypes, cell_text, parse_cell, parse_iso_date

UTC = dt.timezone.utc


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("2001-04-01T00:00:00.000Z", dt.datetime(2001, 4, 1, tzinfo=UTC)),  # the exports' own form
        ("2001-04-01", dt.datetime(2001, 4, 1, tzinfo=UTC)),
        ("2001-04-01T12:30", dt.datetime(2001, 4, 1, 12, 30, tzinfo=UTC)),  # no offset: UTC
        ("2001-04-01 12:30:15", dt.datetime(2001, 4, 1, 12, 30, 15, tzinfo=UTC)),
        ("2001-04-01T12:30:15.123456789Z", dt.datetime(2001, 4, 1, 12, 30, 15, 123456, tzinfo=UTC)),
        ("2001-04-01T12:00:00+02:00", dt.datetime(2001, 4, 1, 10, tzinfo=UTC)),
        ("2001-04-01T12:00:00-0530", dt.datetime(2001, 4, 1, 17, 30, tzinfo=UTC)),
        ("1901-12-31T23:59:59Z", dt.datetime(1901, 12, 31, 23, 59, 59, tzinfo=UTC)),
        ("2001-02-30", None),
        ("2001-04-01T25:00", None),
        ("2001-4-1", None),
        ("2001-04-01Z", None),
        ("20010401", None),
        ("+010000-01-01T00:00:00.000Z", None),  # beyond the years Python holds
        ("Norman", None),
        ("", None),
    ],
)
def test_iso_dates(text: str, value: object) -> None:
    assert parse_iso_date(text) == value


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


CSV = (
    "_id,name,when,day,n,zip,note\r\n"
    "65a1b2c3d4e5f60718293a4b,Norman,2001-04-01T00:00:00.000Z,2001-04-01,1,01234,2001-04-01\r\n"
    "65a1b2c3d4e5f60718293a4c,Tulsa,2001-04-02T06:00:00.000Z,,2,73019,later\r\n"
)


def test_auto_reads_date_columns_and_hex_ids_of_a_csv(tmp_path: Path) -> None:
    path = write(tmp_path, "a.csv", CSV)
    records = list(rio.read_records(path))
    assert records[0] == {
        "_id": ObjectId("65a1b2c3d4e5f60718293a4b"),
        "name": "Norman",
        "when": dt.datetime(2001, 4, 1, tzinfo=UTC),
        "day": dt.datetime(2001, 4, 1, tzinfo=UTC),
        "n": 1,
        "zip": "01234",
        "note": "2001-04-01",  # one date among text: the column is text
    }
    assert records[1]["when"] == dt.datetime(2001, 4, 2, 6, tzinfo=UTC)
    assert "day" not in records[1]  # an empty cell stays missing
    plan = rio.TypedFile(path).plan()
    assert plan.auto_dates == ["when", "day"]
    assert plan.records == 2


def test_parse_dates_none_or_named_and_dtype_overrides(tmp_path: Path) -> None:
    path = write(tmp_path, "a.csv", CSV)
    none = list(rio.read_records(path, parse_dates="none"))
    assert none[0]["when"] == "2001-04-01T00:00:00.000Z"
    assert isinstance(none[0]["_id"], ObjectId)  # ids are not dates
    named = list(
        rio.read_records(path, parse_dates=["when"], dtype={"zip": "str", "n": "float", "_id": "str"})
    )
    assert named[0]["when"] == dt.datetime(2001, 4, 1, tzinfo=UTC)
    assert named[0]["day"] == "2001-04-01"
    assert named[1]["zip"] == "73019" and named[0]["n"] == 1.0 and isinstance(named[0]["n"], float)
    assert type(named[0]["_id"]) is str
    typed = list(rio.read_records(path, dtype={"n": "decimal", "name": "str", "note": "str"}))
    assert typed[0]["n"] == Decimal("1") and typed[1]["note"] == "later"


def test_dtype_from_text_and_from_json_values(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "a.ndjson",
        '{"a": "12", "b": 1, "c": "true", "d": 2.0, "e": "2001-04-01", "f": "65a1b2c3d4e5f60718293a4b",'
        ' "g": 12.5, "h": {"x": [1, 2]}, "i": null}\n',
    )
    dtype = {"a": "int", "b": "bool", "c": "bool", "d": "int", "e": "date", "f": "objectid", "g": "str"}
    [record] = rio.read_records(path, dtype={**dtype, "h.x": "str", "i": "int"})
    assert record == {
        "a": 12,
        "b": True,
        "c": True,
        "d": 2,
        "e": dt.datetime(2001, 4, 1, tzinfo=UTC),
        "f": ObjectId("65a1b2c3d4e5f60718293a4b"),
        "g": "12.5",
        "h": {"x": "[1,2]"},
        "i": None,  # null stays null
    }


def test_ndjson_date_text_is_read_as_dates_like_csv(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "a.ndjson",
        '{"_id": "65a1b2c3d4e5f60718293a4b", "t": "2001-04-01T00:00:00.000Z", "loc": {"at": "2001-04-02"}}\n'
        '{"_id": "x", "t": {"$date": "2002-01-01T00:00:00Z"}, "loc": {"at": null}, "tags": ["2001-04-01"]}\n',
    )
    first, second = rio.read_records(path)
    assert first["t"] == dt.datetime(2001, 4, 1, tzinfo=UTC)
    assert first["loc"]["at"] == dt.datetime(2001, 4, 2, tzinfo=UTC)
    assert first["_id"] == "65a1b2c3d4e5f60718293a4b" and type(first["_id"]) is str  # "x" is no ObjectId
    assert second["t"] == dt.datetime(2002, 1, 1, tzinfo=UTC)
    assert second["tags"] == ["2001-04-01"]  # arrays are values: their items keep their text


@pytest.mark.parametrize(
    ("dtype", "message"),
    [
        ({"name": "int"}, "record 1, column 'name': 'Norman' is not a whole number"),
        ({"note": "date"}, "record 2, column 'note': 'later' is not an ISO 8601 date"),
        ({"name": "bool"}, "is not true or false"),
        ({"name": "float"}, "is not a number"),
        ({"name": "objectid"}, "is not an ObjectId"),
        ({"name": "decimal"}, "is not a decimal number"),
        ({"nope": "int"}, "no column named 'nope' in the file"),
    ],
)
def test_a_value_that_does_not_fit_stops_before_the_first_record(
    tmp_path: Path, dtype: dict[str, str], message: str
) -> None:
    records = rio.read_records(write(tmp_path, "a.csv", CSV), dtype=dtype)
    with pytest.raises(ValueError, match=message):
        next(records)


@pytest.mark.parametrize(
    ("parse_dates", "dtype", "message"),
    [
        ("sometimes", None, "parse_dates"),
        ("auto", {"n": "integer"}, "must be one of str, int"),
        (["n"], {"n": "int"}, "listed in parse_dates"),
    ],
)
def test_options_that_cannot_be_meant_are_refused(parse_dates: object, dtype: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ImportTypes(parse_dates, dtype)  # type: ignore[arg-type]


def test_command_line_options() -> None:
    types = ImportTypes.from_options("a, b", ["zip=str,n=int", "when=date"])
    assert types.dtype == {"a": "date", "b": "date", "zip": "str", "n": "int", "when": "date"}
    assert not types.auto_dates
    assert ImportTypes.from_options("none", []).dtype == {}
    for bad in (["zip"], ["=int"]):
        with pytest.raises(ValueError, match="COLUMN=TYPE"):
            ImportTypes.from_options("auto", bad)
    with pytest.raises(ValueError, match="--parse-dates"):
        ImportTypes.from_options(",", [])


@given(st.floats() | st.integers(-(2**53), 2**53).map(float))
def test_a_float_cell_reads_back_as_a_float(value: float) -> None:
    # Whole floats too: "3.0" is a float column's cell, never the integer 3; inf and nan as well.
    read = parse_cell(cell_text(value))
    assert type(read) is float
    if math.isnan(value):
        assert math.isnan(read)
        return
    assert read == value and math.copysign(1, read) == math.copysign(1, value)
