"""Reading records from files (JSON, NDJSON, CSV, GeoJSON) and writing them (CSV, NDJSON, JSON).

CSV follows the service's CSV export, so exported files import back: a header row, dotted column
names for nested objects (``loc.lat``), arrays and objects as JSON text, empty cells for missing
values. Reading a cell: empty -> the field is left out; ``true``/``false`` -> booleans; integers
and decimals -> numbers; text starting with ``[`` or ``{`` that parses as JSON -> that value; any
other text stays a string.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, Optional

import orjson

from . import ejson
from .frames import flatten_record

FILE_FORMATS = ("json", "ndjson", "csv", "geojson")
_INT = re.compile(r"^-?(0|[1-9]\d*)$")
_FLOAT = re.compile(r"^-?(0|[1-9]\d*)?\.\d+([eE][+-]?\d+)?$|^-?(0|[1-9]\d*)[eE][+-]?\d+$")


def detect_format(path: str) -> str:
    suffix = Path(path).suffix.lower().lstrip(".")
    aliases = {"jsonl": "ndjson", "ndjson": "ndjson", "csv": "csv", "geojson": "geojson", "json": "json"}
    if suffix not in aliases:
        raise ValueError(f"cannot tell the format of {path!r} from its name; pass --format")
    return aliases[suffix]


def parse_cell(text: str) -> Any:
    """One CSV cell as the value it most likely holds (see the module's rules)."""
    if text == "true":
        return True
    if text == "false":
        return False
    if _INT.match(text):
        return int(text)
    if _FLOAT.match(text):
        return float(text)
    if text[:1] in ("[", "{"):
        try:
            return ejson.decode(orjson.loads(text), typed=False)
        except orjson.JSONDecodeError:
            return text
    return text


def unflatten(row: Mapping[str, Any]) -> dict[str, Any]:
    """``{"loc.lat": 1}`` -> ``{"loc": {"lat": 1}}``."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        parts = key.split(".")
        target = out
        for part in parts[:-1]:
            child = target.get(part)
            if not isinstance(child, dict):
                child = target[part] = {}
            target = child
        target[parts[-1]] = value
    return out


def read_csv(stream: IO[str]) -> Iterator[dict[str, Any]]:
    for row in csv.DictReader(stream):
        yield unflatten({k: parse_cell(v) for k, v in row.items() if k is not None and v not in ("", None)})


def read_ndjson(stream: IO[bytes]) -> Iterator[dict[str, Any]]:
    for number, line in enumerate(stream, 1):
        if line.strip():
            record = ejson.decode(orjson.loads(line), typed=False)
            if not isinstance(record, dict):
                raise ValueError(f"line {number} is not a JSON object")
            yield record


def _records_of_json(data: Any) -> list[dict[str, Any]]:
    if isinstance(data, dict) and data.get("type") == "FeatureCollection":
        return list(data.get("features") or [])
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        return list(data["results"])  # a saved API answer
    if isinstance(data, dict):
        return [data]
    if isinstance(data, list) and all(isinstance(r, dict) for r in data):
        return data
    raise ValueError("a JSON file must hold an object, an array of objects or a GeoJSON FeatureCollection")


def read_records(path: str, format: Optional[str] = None) -> Iterator[dict[str, Any]]:
    """The records of a file, in file order (NDJSON and CSV are read lazily)."""
    fmt = format or detect_format(path)
    if fmt == "ndjson":
        with open(path, "rb") as stream:
            yield from read_ndjson(stream)
    elif fmt == "csv":
        with open(path, encoding="utf-8-sig", newline="") as text:
            yield from read_csv(text)
    elif fmt in ("json", "geojson"):
        with open(path, "rb") as stream:
            yield from (ejson.decode(r, typed=False) for r in _records_of_json(orjson.loads(stream.read())))
    else:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FILE_FORMATS)}")


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        return str(ejson.encode(value)["$date"]) if value.year >= 1970 else value.isoformat()
    if isinstance(value, (str, int, float)):
        return str(value)
    return orjson.dumps(ejson.encode(value)).decode("utf-8")


def write_csv(records: Iterable[Mapping[str, Any]], out: IO[str], fields: Optional[list[str]] = None) -> int:
    """CSV with the columns of the first record (or ``fields``); returns the number of rows."""
    writer: Optional[Any] = None
    count = 0
    for record in records:
        flat = flatten_record(record)
        if writer is None:
            columns = fields or list(flat)
            writer = csv.writer(out, lineterminator="\r\n")
            writer.writerow(columns)
        writer.writerow([_csv_cell(flat.get(c)) for c in columns])
        count += 1
    if writer is None and fields:
        csv.writer(out, lineterminator="\r\n").writerow(fields)
    return count


def write_ndjson(records: Iterable[Mapping[str, Any]], out: IO[bytes]) -> int:
    count = 0
    for record in records:
        out.write(orjson.dumps(ejson.encode(record)) + b"\n")
        count += 1
    return count


def write_json(records: Iterable[Mapping[str, Any]], out: IO[bytes]) -> int:
    count = 0
    out.write(b"[")
    for record in records:
        out.write((b",\n" if count else b"\n") + orjson.dumps(ejson.encode(record)))
        count += 1
    out.write(b"\n]\n" if count else b"]\n")
    return count


def text_stream(binary: IO[bytes]) -> io.TextIOWrapper:
    return io.TextIOWrapper(binary, encoding="utf-8", newline="", write_through=True)
