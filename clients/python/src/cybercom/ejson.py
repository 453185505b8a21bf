"""MongoDB Extended JSON <-> Python values, without depending on ``bson``.

Out (Python -> request body or query): ``datetime`` -> ``{"$date"}`` (naive datetimes are taken as
UTC), ``date`` -> midnight UTC, :class:`ObjectId` -> ``{"$oid"}``, ``Decimal`` ->
``{"$numberDecimal"}``, ``bytes`` -> ``{"$binary"}``, ``UUID`` -> ``{"$uuid"}``, integers outside
JavaScript's exact range -> ``{"$numberLong"}``, NaN/infinities -> ``{"$numberDouble"}``, compiled
regular expressions -> ``{"$regularExpression"}``; NumPy scalars and arrays become their Python values.

In (answer -> Python): every Extended JSON wrapper (canonical or relaxed) becomes its Python type.
The service renders records as plain JSON (an ObjectId as its 24 hex digits, a date as the ISO
text JavaScript's ``toISOString`` writes), so with ``typed=True`` (the default) two more rules
apply: a top-level ``_id`` of 24 hex digits becomes an :class:`ObjectId` (a ``str`` subclass, so
it still equals the plain string), and a string exactly in ``toISOString`` form
(``2001-04-01T00:00:00.000Z``) becomes an aware ``datetime``.
"""

from __future__ import annotations

import base64
import datetime as dt
import functools
import itertools
import math
import os
import re
import time
import uuid
from decimal import Decimal
from typing import Any, Callable, Optional

import orjson

__all__ = [
    "MaxKey",
    "MinKey",
    "ObjectId",
    "Regex",
    "Timestamp",
    "decode",
    "decode_record",
    "dumps",
    "encode",
    "loads",
]

# Matched whole (fullmatch); ASCII digits only, as the service writes them.
_HEX24 = re.compile(r"[0-9a-fA-F]{24}")
_LOWER_HEX = "0123456789abcdef"
_ISO_UTC = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")
#: Such a date as it stands in JSON text (quoted), searched for in text before it is parsed.
_ISO_UTC_JSON = re.compile(rb'"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z"')
_MAX_SAFE_INTEGER = 2**53 - 1
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def _oid_process_part() -> bytes:
    return os.urandom(5).hex().encode("ascii")


#: The random and counter parts of :meth:`ObjectId.new`; a forked child draws its own, so that it
#: never makes the ids its parent makes.
_oid_process = _oid_process_part()
_oid_counter = itertools.count(int.from_bytes(os.urandom(3), "big"))


def _reseed_object_ids() -> None:
    global _oid_process, _oid_counter
    _oid_process = _oid_process_part()
    _oid_counter = itertools.count(int.from_bytes(os.urandom(3), "big"))


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reseed_object_ids)


def new_object_id_bytes() -> bytes:
    """The 24 hex digits of a fresh id (see :meth:`ObjectId.new`) as ASCII bytes, for JSON bodies
    assembled from bytes without making an :class:`ObjectId` first."""
    return b"%08x%s%06x" % (int(time.time()), _oid_process, next(_oid_counter) & 0xFFFFFF)


class ObjectId(str):
    """A MongoDB ObjectId: 24 lower-case hex digits. A ``str``, so it compares equal to its hex text."""

    __slots__ = ()

    def __new__(cls, value: str) -> ObjectId:
        text = str(value)
        if not _HEX24.fullmatch(text):
            raise ValueError(f"not an ObjectId (24 hex digits): {value!r}")
        return super().__new__(cls, text.lower())

    @classmethod
    def new(cls) -> ObjectId:
        """A fresh id, made as MongoDB drivers make them: four bytes of seconds since the epoch,
        five random bytes drawn once per process, and a three-byte counter that starts at random.
        Ids made in one process are unique, and ordered within a second."""
        return str.__new__(cls, new_object_id_bytes().decode("ascii"))

    @property
    def generation_time(self) -> dt.datetime:
        """When the id was made (its first four bytes are seconds since the epoch)."""
        return _EPOCH + dt.timedelta(seconds=int(self[:8], 16))

    def __repr__(self) -> str:
        return f"ObjectId({str.__repr__(self)})"


class Regex:
    """A BSON regular expression as stored (pattern and MongoDB option letters)."""

    __slots__ = ("options", "pattern")

    def __init__(self, pattern: str, options: str = "") -> None:
        self.pattern = pattern
        self.options = options

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Regex) and (self.pattern, self.options) == (other.pattern, other.options)

    def __hash__(self) -> int:
        return hash((self.pattern, self.options))

    def __repr__(self) -> str:
        return f"Regex({self.pattern!r}, {self.options!r})"


class Timestamp:
    """A BSON timestamp (seconds ``t``, ordinal ``i``)."""

    __slots__ = ("i", "t")

    def __init__(self, t: int, i: int) -> None:
        self.t = t
        self.i = i

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Timestamp) and (self.t, self.i) == (other.t, other.i)

    def __hash__(self) -> int:
        return hash((self.t, self.i))

    def __repr__(self) -> str:
        return f"Timestamp({self.t}, {self.i})"


class _Key:
    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name


MinKey = _Key("MinKey")
MaxKey = _Key("MaxKey")

_REGEX_FLAGS = ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"), (re.VERBOSE, "x"))


def _date_wrapper(value: dt.datetime) -> dict[str, Any]:
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.timezone.utc)
    utc = value.astimezone(dt.timezone.utc)
    if 1970 <= utc.year <= 9999:
        return {"$date": utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"}
    millis = (utc - _EPOCH) // dt.timedelta(milliseconds=1)
    return {"$date": {"$numberLong": str(millis)}}


def encode(value: Any) -> Any:
    """A JSON-ready tree of ``value`` with Extended JSON wrappers for the types JSON lacks. Dicts
    in which nothing needs a wrapper are shared with ``value``, not copied (never modified)."""
    if value is None or (isinstance(value, (bool, str)) and not isinstance(value, ObjectId)):
        return value
    if isinstance(value, ObjectId):
        return {"$oid": str(value)}
    if isinstance(value, int):
        return value if abs(value) <= _MAX_SAFE_INTEGER else {"$numberLong": str(value)}
    if isinstance(value, float):
        if math.isnan(value):
            return {"$numberDouble": "NaN"}
        if math.isinf(value):
            return {"$numberDouble": "Infinity" if value > 0 else "-Infinity"}
        return value
    if isinstance(value, dict):
        return _encode_dict(value)
    if isinstance(value, (list, tuple)):
        items = [encode(v) for v in value]
        # A list in which nothing changed is shared, like a dict.
        same = type(value) is list and all(new is old for new, old in zip(items, value))
        return value if same else items
    if isinstance(value, dt.datetime):
        return _date_wrapper(value)
    if isinstance(value, dt.date):
        return _date_wrapper(dt.datetime(value.year, value.month, value.day, tzinfo=dt.timezone.utc))
    if isinstance(value, Decimal):
        return {"$numberDecimal": str(value)}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"$binary": {"base64": base64.b64encode(bytes(value)).decode("ascii"), "subType": "00"}}
    if isinstance(value, uuid.UUID):
        return {"$uuid": str(value)}
    if isinstance(value, Regex):
        return {"$regularExpression": {"pattern": value.pattern, "options": value.options}}
    if isinstance(value, re.Pattern):
        options = "".join(letter for flag, letter in _REGEX_FLAGS if value.flags & flag)
        return {"$regularExpression": {"pattern": value.pattern, "options": options}}
    if isinstance(value, Timestamp):
        return {"$timestamp": {"t": value.t, "i": value.i}}
    if value is MinKey:
        return {"$minKey": 1}
    if value is MaxKey:
        return {"$maxKey": 1}
    if isinstance(value, (set, frozenset)):
        return [encode(v) for v in value]
    # NumPy / pandas scalars and arrays (not imported: optional).
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        return encode(tolist())
    item = getattr(value, "item", None)
    if callable(item):
        return encode(item())
    raise TypeError(f"cannot encode {type(value).__name__} as Extended JSON")


def _encode_dict(value: dict[Any, Any]) -> dict[str, Any]:
    """``value`` encoded; the dict itself when nothing in it needs a wrapper (the usual record:
    strings and small numbers), else a copy, never a modified original. Scalars are checked by
    exact type first, inline: this loop runs for every field of every record inserted."""
    changed: Optional[dict[str, Any]] = None
    for key, item in value.items():
        kind = type(item)
        if kind is str or kind is bool or item is None:
            new = item
        elif kind is int:
            new = item if -_MAX_SAFE_INTEGER <= item <= _MAX_SAFE_INTEGER else {"$numberLong": str(item)}
        elif kind is float:
            new = item if math.isfinite(item) else encode(item)
        else:
            new = encode(item)
        if new is not item or type(key) is not str:
            if changed is None:
                changed = {str(k): v for k, v in value.items()}
            changed[str(key)] = new
    return value if changed is None else changed


def _parse_date(raw: Any) -> Any:
    if isinstance(raw, dict) and "$numberLong" in raw:
        raw = int(raw["$numberLong"])
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        return _EPOCH + dt.timedelta(milliseconds=raw)
    if isinstance(raw, str):
        return parse_iso_datetime(raw)
    raise ValueError(f"invalid $date: {raw!r}")


def parse_iso_datetime(text: str) -> dt.datetime:
    """An aware datetime from ISO 8601 text (``Z`` or an offset; naive text is taken as UTC)."""
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    parsed = dt.datetime.fromisoformat(text)
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=dt.timezone.utc)


def _binary(raw: Any) -> Any:
    if isinstance(raw, dict):
        data = base64.b64decode(raw["base64"])
        subtype = str(raw.get("subType", "00"))
    else:  # legacy {"$binary": "<base64>", "$type": "00"}
        data = base64.b64decode(raw)
        subtype = "00"
    if subtype.lower() in ("04", "4") and len(data) == 16:
        return uuid.UUID(bytes=data)
    return data


_DECODERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "$oid": lambda w: ObjectId(w["$oid"]),
    "$date": lambda w: _parse_date(w["$date"]),
    "$numberDecimal": lambda w: Decimal(w["$numberDecimal"]),
    "$numberLong": lambda w: int(w["$numberLong"]),
    "$numberInt": lambda w: int(w["$numberInt"]),
    "$numberDouble": lambda w: float(w["$numberDouble"]),
    "$binary": lambda w: _binary(w["$binary"]),
    "$uuid": lambda w: uuid.UUID(w["$uuid"]),
    "$regularExpression": lambda w: Regex(
        w["$regularExpression"]["pattern"], w["$regularExpression"]["options"]
    ),
    "$timestamp": lambda w: Timestamp(w["$timestamp"]["t"], w["$timestamp"]["i"]),
    "$minKey": lambda w: MinKey,
    "$maxKey": lambda w: MaxKey,
}

# The keys each wrapper may carry; an object with other keys is ordinary data.
_WRAPPER_KEYS: dict[str, frozenset[str]] = {key: frozenset({key}) for key in _DECODERS}
_WRAPPER_KEYS["$binary"] = frozenset({"$binary", "$type"})


def _is_iso_utc(text: str) -> bool:
    # The cheap tests first: almost every string of a record is not a date.
    return len(text) == 24 and text[23] == "Z" and text[10] == "T" and _ISO_UTC.fullmatch(text) is not None


def _wrapper(value: dict[str, Any]) -> tuple[bool, Any]:
    """(True, the Python value) when ``value`` is an Extended JSON wrapper, else (False, None)."""
    for key in value:
        if key in _DECODERS and set(value) <= _WRAPPER_KEYS[key]:
            try:
                return True, _DECODERS[key](value)
            # ArithmeticError: decimal.InvalidOperation, for {"$numberDecimal": "x"}.
            except (KeyError, TypeError, ValueError, ArithmeticError):
                return False, None
    return False, None


def _decode_in(value: Any, typed: bool) -> Any:
    """``value`` decoded; containers in which nothing changes are returned as they are (not
    copied), and a container in which something changes is copied, never modified. Scalars are
    checked by exact type first: a record's fields are mostly numbers and plain strings."""
    kind = type(value)
    if kind is str:
        return parse_iso_datetime(value) if typed and _is_iso_utc(value) else value
    if kind is int or kind is float or kind is bool or value is None:
        return value
    if isinstance(value, dict):
        if len(value) <= 2:
            found, decoded = _wrapper(value)
            if found:
                return decoded
        changed: Optional[dict[str, Any]] = None
        for key, item in value.items():
            # The scalar tests of _decode_in, inlined: this loop runs for every field of every record.
            kind = type(item)
            if kind is str:
                if not (typed and len(item) == 24 and _is_iso_utc(item)):
                    continue
                new = parse_iso_datetime(item)
            elif kind is int or kind is float or kind is bool or item is None:
                continue
            else:
                new = _decode_in(item, typed)
            if new is not item:
                if changed is None:
                    changed = dict(value)
                changed[key] = new
        return value if changed is None else changed
    if isinstance(value, list):
        copy: Optional[list[Any]] = None
        for index, item in enumerate(value):
            new = _decode_in(item, typed)
            if new is not item:
                if copy is None:
                    copy = list(value)
                copy[index] = new
        return value if copy is None else copy
    if typed and isinstance(value, str) and _is_iso_utc(value):
        return parse_iso_datetime(value)
    return value


def decode(value: Any, *, typed: bool = True) -> Any:
    """Python values for a parsed JSON tree: Extended JSON wrappers (and, with ``typed``, ISO dates).
    The tree given is never modified; parts of it that need no conversion are shared, not copied."""
    return _decode_in(value, typed)


def _hex_id(value: Any) -> Optional[str]:
    """The lower-case hex text of a top-level ``_id`` that ``typed`` reads as an ObjectId (24 hex
    digits), else None."""
    if type(value) is not str or len(value) != 24:
        return None
    if not value.strip(_LOWER_HEX):  # only lower-case hex digits: as the service writes ids
        return value
    return value.lower() if _HEX24.fullmatch(value) else None


def decode_record(value: Any, *, typed: bool = True) -> Any:
    """:func:`decode` for one record; with ``typed``, a 24-hex ``_id`` becomes an :class:`ObjectId`."""
    out = decode(value, typed=typed)
    if typed and isinstance(out, dict):
        rid = _hex_id(out.get("_id"))
        if rid is not None:
            if out is value:
                out = dict(value)
            out["_id"] = str.__new__(ObjectId, rid)  # checked by _hex_id
    return out


def decode_parsed_record(value: Any, *, typed: bool = True) -> Any:
    """:func:`decode_record` for a record just parsed and owned by the caller (a streamed read):
    its ``_id`` is set in place rather than on a copy."""
    out = _decode_in(value, typed)
    if typed and type(out) is dict:
        rid = _hex_id(out.get("_id"))
        if rid is not None:
            out["_id"] = str.__new__(ObjectId, rid)  # checked by _hex_id
    return out


def _needs_walk(text: bytes, typed: bool) -> bool:
    """Whether parsed JSON ``text`` may hold something :func:`decode` converts: an Extended JSON
    wrapper (a key that starts with ``$``) or, with ``typed``, a date in ``toISOString`` form.
    Both show in the text as it is, found by searches of the bytes far cheaper than walking the
    parsed values, unless spelled with ``\\u`` escapes: text with one is always walked."""
    # Each search of two bytes only where one of one byte (memchr, many times faster) found any.
    if text.find(b"$") >= 0 and text.find(b'"$') >= 0:
        return True
    if text.find(b"\\") >= 0 and text.find(b"\\u") >= 0:
        return True
    return typed and text.find(b"Z") >= 0 and _ISO_UTC_JSON.search(text) is not None


def decode_line(line: bytes, *, typed: bool = True) -> Any:
    """:func:`decode_parsed_record` of one record's JSON text (a line of NDJSON). Most records hold
    no Extended JSON wrapper and no date; their text says so (see :func:`_needs_walk`), and then
    only the ``_id`` is typed."""
    value = orjson.loads(line)
    if _needs_walk(line, typed):
        return decode_parsed_record(value, typed=typed)
    if typed and type(value) is dict:
        rid = _hex_id(value.get("_id"))
        if rid is not None:
            value["_id"] = str.__new__(ObjectId, rid)  # checked by _hex_id
    return value


def decode_lines(block: bytes, *, typed: bool = True, object_ids: bool = True) -> tuple[list[Any], bool]:
    """The records of whole lines of NDJSON (blank lines are skipped), each as :func:`decode_line`
    decodes it; and whether they are parsed JSON only (str, int, float, bool, None, list and dict:
    no value of another type, such as an ObjectId or a datetime, to look for in them).

    ``object_ids=False`` leaves a top-level ``_id`` that ``typed`` makes an ObjectId as its
    lower-case text instead (what a DataFrame keeps of it).

    When the text needs no walk (:func:`_needs_walk`, asked once of the whole block) its lines are
    parsed as one JSON array, one call of the parser rather than one a line, and only the ``_id``
    of each record is typed. Each newline becomes ``,`` and a newline, so that a value spanning
    lines fails to parse (a string cannot hold a raw newline, nor a list or object a ``,`` at its
    start or end); with as many values as lines, each line was one value, as line by line."""
    text = block.rstrip(b"\r\n")
    if not text.strip():
        return [], True
    if not _needs_walk(text, typed):
        array = text.replace(b"\n", b",\n")
        try:
            records = orjson.loads(b"[" + array + b"]")
        except orjson.JSONDecodeError:
            records = None  # a blank line, or a line that is not one value: read line by line
        # One byte was added for each newline: as many values as lines.
        if records is not None and len(records) == len(array) - len(text) + 1:
            if typed:
                _type_ids(records, object_ids)
            return records, not (typed and object_ids)
    return [decode_line(line, typed=typed) for line in text.split(b"\n") if line.strip()], False


#: An ObjectId of text known to be 24 lower-case hex digits (no check).
_object_id_of_hex = functools.partial(str.__new__, ObjectId)


def _type_ids(records: list[Any], object_ids: bool) -> None:
    """Types the top-level ``_id`` of each parsed record in place (see :func:`decode_lines`). The
    usual block, every record a dict whose ``_id`` is 24 lower-case hex digits (as the service
    writes ObjectIds), is checked with a few calls over the whole block rather than per record."""
    try:
        ids: list[Any] = list(map(dict.get, records, itertools.repeat("_id")))  # TypeError: not a dict
        usual = set(map(len, ids)) == {24} and not "".join(ids).strip(_LOWER_HEX)  # TypeError: not str
    except TypeError:
        usual = False
    if usual:
        if object_ids:
            for record, rid in zip(records, map(_object_id_of_hex, ids)):
                record["_id"] = rid
        return
    for record in records:
        if type(record) is dict:
            rid = _hex_id(record.get("_id"))
            if rid is not None:
                record["_id"] = str.__new__(ObjectId, rid) if object_ids else rid


def dumps(value: Any) -> bytes:
    """JSON bytes of ``value`` in Extended JSON."""
    return orjson.dumps(encode(value))


def loads(data: bytes | str, *, typed: bool = True) -> Any:
    """Parses JSON text and decodes Extended JSON in it."""
    return decode(orjson.loads(data), typed=typed)
