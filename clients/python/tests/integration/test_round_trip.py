"""An export read back by ``cybercom import``: a collection holding every type the CSV and NDJSON
exports carry is exported in both formats with ``cybercom export``, each file is imported into a
new collection, and every field of every record is compared, as its BSON type (``$type``, and
the type of each item of an array) and as ``find()`` reads it. What the formats cannot carry back
is listed below, field by field, and the manual (docs/python-client.md, "What an export brings
back") says the same; every other field must come back with its type and value.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from cybercom import Collection, MinKey, ObjectId, Regex, Timestamp

from .conftest import cli

UTC = dt.timezone.utc
MISSING = "<missing>"
#: A field as the test sees it: its BSON types (the field's, then its items' if an array) and value.
Observed = tuple[list[str], Any]


def originals() -> list[dict[str, Any]]:
    first: dict[str, Any] = {
        "_id": ObjectId.new(),
        "text": 'Norman, "OK"\nsecond line',
        "code": "007",
        "int": 357,
        "big_int": 5_000_000_000,
        "huge_int": 2**60,
        "float": 2.5,
        "whole_float": 2.0,
        "negative_zero": -0.0,
        "flag": True,
        "when": dt.datetime(2001, 4, 1, 12, 0, 0, 123000, tzinfo=UTC),
        "old": dt.datetime(1901, 1, 1, tzinfo=UTC),
        "pattern": Regex("^a", "i"),
        "tags": ["a", "b"],
        "mixed": [1, "a", {"k": 1}],
        "empty_list": [],
        "empty_object": {},
        "loc": {"lat": 35.2, "lon": -97.4, "deep": {"x": 1}},
        "inf": float("inf"),
        "neg_inf": float("-inf"),
        # Those below change on the way (see CSV_CHANGES and NDJSON_CHANGES).
        "numtext": "42",
        "boolish": "true",
        "jsonish": "[1, 2]",
        "datelike": "2001-04-01",
        "empty_text": "",
        "nothing": None,
        "nan": float("nan"),
        "decimal": Decimal("12.50"),
        "ref": ObjectId.new(),
        "blob": b"\x00\x01",
        "uuid": uuid.UUID("dc22c688-5f27-4969-b091-e1cb647a045b"),
        "stamp": Timestamp(5, 1),
        "minkey": MinKey,
        "dates": [dt.datetime(2001, 4, 1, tzinfo=UTC)],
    }
    second = {
        **first,
        "_id": ObjectId.new(),
        "text": "plain",
        "int": -1,
        "flag": False,
        "when": dt.datetime(2024, 2, 29, 23, 59, 59, 999000, tzinfo=UTC),
        "ref": ObjectId.new(),
    }
    return [first, second]


FIELDS = [f for f in originals()[0] if f != "_id"] + ["loc.lat", "loc.lon", "loc.deep.x"]

Change = Callable[[Observed], Observed]


def retyped(*types: str) -> Change:
    """The same value as ``find()`` reads it, stored as another type."""
    return lambda seen: (list(types), seen[1])


def became(types: list[str], value: Any) -> Change:
    return lambda _seen: (types, value)


#: What neither export carries back: types whose text or JSON rendering says nothing of the type.
LOST_IN_BOTH: dict[str, Change] = {
    "datelike": became(["date"], dt.datetime(2001, 4, 1, tzinfo=UTC)),
    "ref": retyped("string"),
    "blob": retyped("string"),
    "uuid": retyped("string"),
    "stamp": retyped("object"),
    "minkey": retyped("string"),
    "dates": retyped("array", "string"),
}

#: What the CSV export does not carry back, as the manual lists it.
CSV_CHANGES: dict[str, Change] = {
    **LOST_IN_BOTH,
    "numtext": became(["int"], 42),
    "boolish": became(["bool"], True),
    "jsonish": became(["array", "int", "int"], [1, 2]),
    "empty_text": became(["missing"], MISSING),
    "nothing": became(["missing"], MISSING),
    "decimal": became(["double"], 12.5),
}

#: What the NDJSON export does not carry back.
NDJSON_CHANGES: dict[str, Change] = {
    **LOST_IN_BOTH,
    "huge_int": retyped("string"),
    "decimal": retyped("string"),
}


def observe(col: Collection) -> dict[str, dict[str, Observed]]:
    """Every field of every record, by ``_id``."""
    # Named by position: a projection cannot name both "loc" and "loc.lat".
    projection = {
        f"f{i}": [
            {"$type": f"${f}"},
            {"$map": {"input": {"$cond": [{"$isArray": f"${f}"}, f"${f}", []]}, "in": {"$type": "$$this"}}},
        ]
        for i, f in enumerate(FIELDS)
    }
    types = {str(row["_id"]): row for row in col.aggregate([{"$project": projection}])}
    out: dict[str, dict[str, Observed]] = {}
    for record in col.find():
        rid = str(record["_id"])
        assert isinstance(record["_id"], ObjectId), f"{col.name}: _id {rid!r} is not an ObjectId"
        out[rid] = {}
        for i, field in enumerate(FIELDS):
            kind, items = types[rid][f"f{i}"]
            out[rid][field] = ([kind, *items], _value_at(record, field))
    return out


def _value_at(record: Mapping[str, Any], path: str) -> Any:
    value: Any = record
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return MISSING
        value = value[part]
    return value


def same(a: Any, b: Any) -> bool:
    """Equality in which NaN equals NaN (a NaN that came back is the same value)."""
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(map(same, a, b))
    return bool(a == b)


def differences(
    before: dict[str, dict[str, Observed]],
    after: dict[str, dict[str, Observed]],
    changes: Mapping[str, Change],
) -> list[str]:
    """Each field that did not come back as ``changes`` says it does (or unchanged)."""
    assert sorted(after) == sorted(before), "the same records, by _id"
    found = []
    for rid, fields in before.items():
        for field, seen in fields.items():
            expected = changes[field](seen) if field in changes else seen
            if not same(after[rid][field], expected):
                found.append(f"{rid} {field}: expected {expected!r}, got {after[rid][field]!r}")
    return found


def export_and_import(source: Collection, fmt: str, tmp_path: Path, name: str, *options: str) -> Collection:
    db = source.database.name
    path = tmp_path / f"{name}.{fmt}"
    cli("export", db, source.name, "--format", fmt, "-o", str(path))
    cli("import", db, name, str(path), "--create", "--quiet", *options)
    return source.database[name]


@pytest.fixture
def source(collection: Collection) -> Collection:
    collection.insert(originals())
    return collection


@pytest.mark.server_feature("formats")
@pytest.mark.parametrize(("fmt", "changes"), [("csv", CSV_CHANGES), ("ndjson", NDJSON_CHANGES)])
def test_an_export_imports_back_record_by_record(
    source: Collection, tmp_path: Path, fmt: str, changes: dict[str, Change]
) -> None:
    before = observe(source)
    # The original holds what the test means it to: each type as named.
    first = next(iter(before.values()))
    assert first["when"] == (["date"], originals()[0]["when"])
    kinds = ("big_int", "huge_int", "decimal", "blob", "uuid", "stamp", "minkey", "pattern")
    expected = ["long", "long", "decimal", "binData", "binData", "timestamp", "minKey", "regex"]
    assert [first[f][0][0] for f in kinds] == expected
    copy = export_and_import(source, fmt, tmp_path, f"from_{fmt}")
    assert differences(before, observe(copy), changes) == []


@pytest.mark.server_feature("formats")
def test_dtype_brings_back_what_the_text_cannot_say(source: Collection, tmp_path: Path) -> None:
    before = observe(source)
    as_text = ["numtext=str", "boolish=str", "jsonish=str", "datelike=str"]
    typed = ["decimal=decimal", "ref=objectid"]
    csv_copy = export_and_import(
        source, "csv", tmp_path, "csv_typed", *[f"--dtype={option}" for option in as_text + typed]
    )
    fixed = {option.split("=")[0] for option in as_text + typed}
    still = {f: c for f, c in CSV_CHANGES.items() if f not in fixed}
    assert differences(before, observe(csv_copy), still) == []
    ndjson_copy = export_and_import(
        source,
        "ndjson",
        tmp_path,
        "ndjson_typed",
        "--dtype",
        "huge_int=int,datelike=str",
        "--dtype",
        ",".join(typed),
    )
    still = {f: c for f, c in NDJSON_CHANGES.items() if f not in ("huge_int", "datelike", "decimal", "ref")}
    assert differences(before, observe(ndjson_copy), still) == []
