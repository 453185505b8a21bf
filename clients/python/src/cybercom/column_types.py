"""The types of imported values: which columns of a file hold dates, and the types a user names
(``cybercom import --parse-dates/--dtype``, ``read_records(parse_dates=, dtype=)``), as pandas'
``read_csv`` takes them.

A column is a leaf of a record named by its dotted path (``loc.lat``), as the CSV export names
its columns; in JSON records, objects are walked into (except those with ``$`` keys, which are
values, like ``{"$regex": ...}``) and arrays are leaves. The whole file is surveyed first
(:class:`Survey`), so that a column's type is decided from all of its values, as pandas decides
it, and a value that does not fit the type asked for stops the import before anything is sent.

Decided per column, in this order: the type ``dtype`` names; with ``parse_dates`` a list, a date
for each column listed; with ``parse_dates="auto"``, a date for each column all of whose values
are ISO 8601 dates (``2001-04-01``) or dates and times (``2001-04-01T12:00:00.000Z``, the CSV
and NDJSON exports' form; ``T`` or a space; seconds, fractions and an offset optional; without
an offset, UTC); and a top-level ``_id`` all of whose values are 24 hex digits is an ObjectId
(the exports write ObjectIds so). Other CSV cells are read by :func:`parse_cell`;
other JSON values stay as they are. Empty CSV cells and JSON nulls are never converted.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Any, Callable, Optional, Union

import orjson

from . import ejson
from .ejson import ObjectId

DTYPES = ("str", "int", "float", "bool", "date", "objectid", "decimal")
ParseDates = Union[str, Sequence[str]]

_ISO_DATE = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?"
    r"([Zz]|[+-]\d{2}(?::?\d{2})?)?)?"
)
_HEX24 = re.compile(r"[0-9a-fA-F]{24}")
_WHOLE = re.compile(r"[+-]?\d+")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(nan|inf|infinity)", re.IGNORECASE)
_CELL_INT = re.compile(r"^-?(0|[1-9]\d*)$")
_CELL_FLOAT = re.compile(r"^-?(0|[1-9]\d*)?\.\d+([eE][+-]?\d+)?$|^-?(0|[1-9]\d*)[eE][+-]?\d+$")
_NOT_FINITE = frozenset({"inf", "-inf", "nan"})
_TRUE = frozenset({"true", "1"})
_FALSE = frozenset({"false", "0"})


def parse_iso_date(text: str) -> Optional[dt.datetime]:
    """The aware datetime an ISO 8601 date or date and time stands for (see the module), or None.
    Fractions of a second beyond microseconds are cut off (the database keeps milliseconds)."""
    # The cheap test first: almost every string of a file is not a date.
    if len(text) < 10 or text[4] != "-" or text[7] != "-":
        return None
    found = _ISO_DATE.fullmatch(text)
    if found is None:
        return None
    year, month, day, hour, minute, second, fraction, offset = found.groups()
    try:
        return dt.datetime(
            int(year),
            int(month),
            int(day),
            int(hour or 0),
            int(minute or 0),
            int(second or 0),
            int((fraction or "0")[:6].ljust(6, "0")),
            tzinfo=_zone(offset),
        )
    except ValueError:  # 2001-02-30, 25:00, year 0
        return None


def _zone(offset: Optional[str]) -> dt.timezone:
    if offset is None or offset in ("Z", "z"):
        return dt.timezone.utc
    digits = offset[1:].replace(":", "")
    minutes = int(digits[:2]) * 60 + int(digits[2:] or 0)
    return dt.timezone(dt.timedelta(minutes=-minutes if offset[0] == "-" else minutes))


def parse_cell(text: str) -> Any:
    """One CSV cell of a column without a type, as the value it most likely holds: ``true``/
    ``false`` -> booleans; integers and decimals -> numbers (not ``007``: a code); ``inf``, ``-inf``
    and ``nan`` (how the service writes a double that is not finite) -> those floats; text starting
    with ``[`` or ``{`` that parses as JSON -> that value; any other text stays a string."""
    if text == "true":
        return True
    if text == "false":
        return False
    if text in _NOT_FINITE:
        return float(text)
    if _CELL_INT.match(text):
        return int(text)
    if _CELL_FLOAT.match(text):
        return float(text)
    if text[:1] in ("[", "{"):
        try:
            return ejson.decode(orjson.loads(text), typed=False)
        except orjson.JSONDecodeError:
            return text
    return text


def cell_text(value: Any) -> str:
    """A value as a CSV cell holds it: as the service's CSV export writes it (dates as ISO 8601
    UTC with milliseconds, objects and arrays as JSON text, ``true``/``false``)."""
    if value is None:
        return ""
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        return str(ejson.encode(value)["$date"]) if value.year >= 1970 else value.isoformat()
    if isinstance(value, (str, int, float)):
        return str(value)
    return orjson.dumps(ejson.encode(value)).decode("utf-8")


class _Unfit(Exception):
    """A value that is not of the type asked for; ``what`` completes "... is not <what>"."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


def _to_str(value: Any) -> str:
    return value if isinstance(value, str) else cell_text(value)


def _to_int(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _WHOLE.fullmatch(value):
        return int(value)
    raise _Unfit("a whole number")


def _to_float(value: Any) -> float:
    if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and _NUMBER.fullmatch(value):
        return float(value)
    raise _Unfit("a number")


def _to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.lower() in _TRUE:
        return True
    if isinstance(value, str) and value.lower() in _FALSE:
        return False
    raise _Unfit("true or false (true, false, 1 or 0)")


def _to_date(value: Any) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value
    parsed = parse_iso_date(value) if isinstance(value, str) else None
    if parsed is None:
        raise _Unfit("an ISO 8601 date or date and time (2001-04-01, 2001-04-01T12:00:00Z)")
    return parsed


def _to_object_id(value: Any) -> ObjectId:
    if isinstance(value, ObjectId):
        return value
    if isinstance(value, str) and _HEX24.fullmatch(value):
        return ObjectId(value)
    raise _Unfit("an ObjectId (24 hex digits)")


def _to_decimal(value: Any) -> Decimal:
    if isinstance(value, Decimal):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    if isinstance(value, str) and _NUMBER.fullmatch(value):
        return Decimal(value)
    raise _Unfit("a decimal number")


_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "str": _to_str,
    "int": _to_int,
    "float": _to_float,
    "bool": _to_bool,
    "date": _to_date,
    "objectid": _to_object_id,
    "decimal": _to_decimal,
}


class ImportTypes:
    """What the user asked for: ``parse_dates`` is ``"auto"`` (default), ``"none"`` or the columns
    to read as dates; ``dtype`` maps columns to one of :data:`DTYPES`. Refuses what cannot be meant
    (an unknown type, a column both a date and another type) with a ValueError."""

    def __init__(self, parse_dates: ParseDates = "auto", dtype: Optional[Mapping[str, str]] = None) -> None:
        if isinstance(parse_dates, str) and parse_dates not in ("auto", "none"):
            raise ValueError(f'parse_dates must be "auto", "none" or a list of columns; got {parse_dates!r}')
        self.auto_dates = parse_dates == "auto"
        self.dtype: dict[str, str] = {}
        for column in () if isinstance(parse_dates, str) else parse_dates:
            self.dtype[str(column)] = "date"
        for column, kind in (dtype or {}).items():
            if kind not in DTYPES:
                raise ValueError(
                    f"the type of column {column!r} must be one of {', '.join(DTYPES)}; got {kind!r}"
                )
            if self.dtype.get(column, kind) != kind:
                raise ValueError(f"column {column!r} is listed in parse_dates and given the type {kind!r}")
            self.dtype[column] = kind

    @classmethod
    def from_options(cls, parse_dates: str, dtypes: Sequence[str]) -> ImportTypes:
        """From the command line: ``--parse-dates auto|none|COL,...`` and ``--dtype COL=TYPE``
        (repeatable; one option may also list several, ``a=int,b=str``)."""
        dates: ParseDates = parse_dates
        if parse_dates not in ("auto", "none"):
            dates = [c.strip() for c in parse_dates.split(",") if c.strip()]
            if not dates:
                raise ValueError("--parse-dates needs auto, none or column names")
        named: dict[str, str] = {}
        for option in dtypes:
            for pair in option.split(","):
                column, sep, kind = pair.partition("=")
                if not sep or not column.strip():
                    raise ValueError(
                        f"--dtype takes COLUMN=TYPE, TYPE one of {', '.join(DTYPES)}; got {pair!r}"
                    )
                named[column.strip()] = kind.strip()
        return cls(dates, named)


def leaves(record: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted path, value) of each leaf of a record (see the module for what a leaf is)."""
    for key, value in record.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value and not any(str(k).startswith("$") for k in value):
            yield from leaves(value, f"{path}.")
        else:
            yield path, value


class _Column:
    __slots__ = ("dates", "ids", "texts")

    def __init__(self) -> None:
        self.dates = True  # every value so far a date (or a date's text)
        self.ids = True  # every value so far an ObjectId (or its 24 hex digits)
        self.texts = False  # some value is text (a column of typed values needs no conversion)


class TypePlan:
    """The type decided for each column that gets one, and what the survey found."""

    def __init__(self, converters: dict[str, str], auto_dates: list[str], records: int) -> None:
        #: Column -> one of DTYPES.
        self.types = converters
        #: The columns read as dates because all of their values are dates.
        self.auto_dates = auto_dates
        #: How many records the file holds.
        self.records = records

    def convert(self, number: int, column: str, value: Any) -> Any:
        """``value`` of ``column`` in record ``number`` (from 1) as its column's type; a
        ValueError that names the record and column when it does not fit."""
        kind = self.types.get(column)
        if kind is None or value is None:
            return value
        try:
            return _CONVERTERS[kind](value)
        except _Unfit as unfit:
            raise ValueError(f"record {number}, column {column!r}: {value!r} is not {unfit.what}") from None

    def read_cells(self, number: int, cells: Mapping[str, str]) -> dict[str, Any]:
        """A CSV row's cells (by column, as text) as values: the planned columns converted, the
        others read by :func:`parse_cell`."""
        typed = self.types
        return {k: self.convert(number, k, v) if k in typed else parse_cell(v) for k, v in cells.items()}

    def apply(self, number: int, record: dict[str, Any], prefix: str = "") -> dict[str, Any]:
        """A JSON record with the planned columns converted (a copy where anything changes)."""
        if not self.types:
            return record
        changed: Optional[dict[str, Any]] = None
        for key, value in record.items():
            path = f"{prefix}{key}"
            if isinstance(value, dict) and value and not any(str(k).startswith("$") for k in value):
                new = self.apply(number, value, f"{path}.")
            else:
                new = self.convert(number, path, value)
            if new is not value:
                if changed is None:
                    changed = dict(record)
                changed[key] = new
        return record if changed is None else changed


class Survey:
    """The first pass over a file: every leaf of every record is shown to :meth:`see`, which
    converts the values of the columns the user typed (so that a misfit stops the import before
    anything is sent) and notes which columns hold only dates or only ObjectIds."""

    def __init__(self, types: ImportTypes) -> None:
        self._types = types
        self._named = TypePlan(dict(types.dtype), [], 0)
        #: Columns known to exist: a CSV header's, and every leaf seen.
        self._known: dict[str, None] = {}
        self._columns: dict[str, _Column] = {}
        self.records = 0

    def add_columns(self, columns: Sequence[str]) -> None:
        """Columns the file has even where no value was seen (a CSV header's)."""
        self._known.update(dict.fromkeys(columns))

    def see(self, column: str, value: Any) -> None:
        self._known[column] = None
        if value is None:
            return
        self._named.convert(self.records, column, value)
        state = self._columns.get(column)
        if state is None:
            state = self._columns[column] = _Column()
        text = isinstance(value, str) and not isinstance(value, ObjectId)
        state.texts = state.texts or text
        if state.dates and not isinstance(value, dt.datetime):
            state.dates = text and parse_iso_date(value) is not None
        if state.ids and column == "_id" and not isinstance(value, ObjectId):
            state.ids = text and _HEX24.fullmatch(value) is not None

    def see_record(self, record: Mapping[str, Any]) -> None:
        """Every leaf of the next record (a CSV row: its cells by column)."""
        self.records += 1
        for column, value in leaves(record):
            self.see(column, value)

    def plan(self) -> TypePlan:
        """The types decided; a ValueError when a typed column is not in the file."""
        missing = [c for c in self._types.dtype if c not in self._known]
        if missing:
            names = ", ".join(map(repr, missing))
            some = ", ".join(list(self._known)[:20]) + (", ..." if len(self._known) > 20 else "")
            raise ValueError(f"no column named {names} in the file (its columns: {some})")
        types = dict(self._types.dtype)
        auto_dates = []
        for column, state in self._columns.items():
            if column in types or not state.texts:
                continue
            if self._types.auto_dates and state.dates:
                types[column] = "date"
                auto_dates.append(column)
            elif column == "_id" and state.ids:
                types[column] = "objectid"
        return TypePlan(types, auto_dates, self.records)
