"""Reading records from files (JSON, NDJSON, CSV, GeoJSON) and writing them (CSV, NDJSON, JSON).

CSV follows the service's CSV export, so exported files import back: a header row, dotted column
names for nested objects (``loc.lat``), arrays and objects as JSON text, empty cells for missing
values. Reading a cell: empty -> the field is left out; ``true``/``false`` -> booleans; integers
and decimals -> numbers; text starting with ``[`` or ``{`` that parses as JSON -> that value; any
other text stays a string. :func:`read_records` first decides the type of whole columns (dates,
ObjectId ``_id``, and the types a caller names: see :mod:`cybercom.column_types`); such columns
are read as their type instead.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, Optional

import orjson

from . import ejson
from .column_types import ImportTypes, ParseDates, Survey, TypePlan, cell_text, parse_cell
from .frames import flatten_record

FILE_FORMATS = ("json", "ndjson", "csv", "geojson")


def detect_format(path: str) -> str:
    suffix = Path(path).suffix.lower().lstrip(".")
    aliases = {"jsonl": "ndjson", "ndjson": "ndjson", "csv": "csv", "geojson": "geojson", "json": "json"}
    if suffix not in aliases:
        raise ValueError(f"cannot tell the format of {path!r} from its name; pass --format")
    return aliases[suffix]


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


def csv_cells(reader: csv.DictReader[str]) -> Iterator[dict[str, str]]:
    """Each row's non-empty cells by column, as text."""
    for row in reader:
        yield {k: v for k, v in row.items() if k is not None and v not in ("", None)}


def read_csv(stream: IO[str]) -> Iterator[dict[str, Any]]:
    """The rows as records, each cell read by :func:`parse_cell` (no column is typed as a whole)."""
    for cells in csv_cells(csv.DictReader(stream)):
        yield unflatten({k: parse_cell(v) for k, v in cells.items()})


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


class TypedFile:
    """The records of a file, their columns typed as :mod:`cybercom.column_types` decides. The
    file is read twice: once to decide the types (:meth:`plan`; a value that does not fit the type
    asked for is a ValueError then), and again, record by record, when iterated. NDJSON and CSV are
    read lazily; a JSON file is parsed once and kept."""

    def __init__(self, path: str, format: Optional[str] = None, types: Optional[ImportTypes] = None) -> None:
        self.path = path
        self.format = format or detect_format(path)
        if self.format not in FILE_FORMATS:
            raise ValueError(f"unknown format {self.format!r}; use one of {', '.join(FILE_FORMATS)}")
        self.types = types or ImportTypes()
        self._plan: Optional[TypePlan] = None
        self._json: Optional[list[dict[str, Any]]] = None

    def plan(self) -> TypePlan:
        """The types of the columns (surveying the file the first time)."""
        if self._plan is None:
            survey = Survey(self.types)
            for record in self._read(survey):
                survey.see_record(record)
            self._plan = survey.plan()
        return self._plan

    def __iter__(self) -> Iterator[dict[str, Any]]:
        plan = self.plan()
        for number, record in enumerate(self._read(None), 1):
            if self.format == "csv":
                yield unflatten(plan.read_cells(number, record))
            else:
                yield plan.apply(number, record)

    def _read(self, survey: Optional[Survey]) -> Iterator[dict[str, Any]]:
        """The records as the file holds them (CSV: each row's non-empty cells, as text)."""
        if self.format == "csv":
            with open(self.path, encoding="utf-8-sig", newline="") as text:
                reader = csv.DictReader(text)
                if survey is not None:
                    survey.add_columns(reader.fieldnames or [])
                yield from csv_cells(reader)
        elif self.format == "ndjson":
            with open(self.path, "rb") as stream:
                yield from read_ndjson(stream)
        else:
            if self._json is None:
                with open(self.path, "rb") as stream:
                    data = orjson.loads(stream.read())
                self._json = [ejson.decode(r, typed=False) for r in _records_of_json(data)]
            yield from self._json


def read_records(
    path: str,
    format: Optional[str] = None,
    *,
    parse_dates: ParseDates = "auto",
    dtype: Optional[dict[str, str]] = None,
) -> Iterator[dict[str, Any]]:
    """The records of a file, in file order, typed as pandas' ``read_csv`` would type them:
    ``parse_dates`` is ``"auto"`` (columns holding only ISO 8601 dates become dates), ``"none"``
    or the columns to read as dates; ``dtype`` names a column's type (``{"zip": "str"}``; see
    :data:`cybercom.column_types.DTYPES`). The file is surveyed before the first record is
    answered, so a value that does not fit its type raises ValueError before any is used."""
    return iter(TypedFile(path, format, ImportTypes(parse_dates, dtype)))


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
        writer.writerow([cell_text(flat.get(c)) for c in columns])
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
