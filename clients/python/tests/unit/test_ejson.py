import datetime as dt
import re
import uuid
from decimal import Decimal
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cybercom import ejson
from cybercom.ejson import MaxKey, MinKey, ObjectId, Regex, Timestamp

UTC = dt.timezone.utc
OID = "5f1d7c6e8b3e4a2d9c0b1a2f"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (dt.datetime(2001, 4, 1, 12, 30, 5, 123456, tzinfo=UTC), {"$date": "2001-04-01T12:30:05.123Z"}),
        (
            dt.datetime(2001, 4, 1, 7, 0, tzinfo=dt.timezone(dt.timedelta(hours=-5))),
            {"$date": "2001-04-01T12:00:00.000Z"},
        ),
        (dt.datetime(2001, 4, 1), {"$date": "2001-04-01T00:00:00.000Z"}),
        (dt.date(2020, 2, 29), {"$date": "2020-02-29T00:00:00.000Z"}),
        (dt.datetime(1960, 1, 1, tzinfo=UTC), {"$date": {"$numberLong": "-315619200000"}}),
        (ObjectId(OID), {"$oid": OID}),
        (Decimal("1.10"), {"$numberDecimal": "1.10"}),
        (b"\x00\xff", {"$binary": {"base64": "AP8=", "subType": "00"}}),
        (uuid.UUID(int=1), {"$uuid": "00000000-0000-0000-0000-000000000001"}),
        (2**60, {"$numberLong": str(2**60)}),
        (2**53 - 1, 2**53 - 1),
        (float("nan"), {"$numberDouble": "NaN"}),
        (float("-inf"), {"$numberDouble": "-Infinity"}),
        (re.compile("^a.c", re.I | re.M), {"$regularExpression": {"pattern": "^a.c", "options": "im"}}),
        (Timestamp(5, 1), {"$timestamp": {"t": 5, "i": 1}}),
        (MinKey, {"$minKey": 1}),
        (MaxKey, {"$maxKey": 1}),
        ({"a": [1, (2, "x")], "b": None, "c": True}, {"a": [1, [2, "x"]], "b": None, "c": True}),
    ],
)
def test_encode(value: object, expected: object) -> None:
    assert ejson.encode(value) == expected


def test_encode_refuses_unknown_types() -> None:
    with pytest.raises(TypeError, match="object"):
        ejson.encode(object())


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        ({"$oid": OID}, ObjectId(OID)),
        ({"$date": "2001-04-01T00:00:00Z"}, dt.datetime(2001, 4, 1, tzinfo=UTC)),
        ({"$date": {"$numberLong": "1000"}}, dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC)),
        ({"$date": 1000}, dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC)),
        ({"$numberDecimal": "3.14159265358979323846"}, Decimal("3.14159265358979323846")),
        ({"$numberLong": "9007199254740993"}, 9007199254740993),
        ({"$numberInt": "7"}, 7),
        ({"$binary": {"base64": "AP8=", "subType": "00"}}, b"\x00\xff"),
        ({"$binary": "AP8=", "$type": "00"}, b"\x00\xff"),
        ({"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAQ==", "subType": "04"}}, uuid.UUID(int=1)),
        ({"$uuid": "00000000-0000-0000-0000-000000000001"}, uuid.UUID(int=1)),
        ({"$regularExpression": {"pattern": "a", "options": "i"}}, Regex("a", "i")),
        ({"$timestamp": {"t": 1, "i": 2}}, Timestamp(1, 2)),
        ({"$minKey": 1}, MinKey),
        # The service's own rendering of a date.
        ("2001-04-01T00:00:00.000Z", dt.datetime(2001, 4, 1, tzinfo=UTC)),
        # Not wrappers: ordinary data stays as it is.
        ({"$oid": OID, "other": 1}, {"$oid": OID, "other": 1}),
        ({"$regex": "^a", "$options": "i"}, {"$regex": "^a", "$options": "i"}),
        ("2001-04-01", "2001-04-01"),
        ({"$date": "garbage"}, {"$date": "garbage"}),
        # A stored record may hold such a key with any text: not a number, so ordinary data too.
        ({"$numberDecimal": "x"}, {"$numberDecimal": "x"}),
        ({"$numberDecimal": ""}, {"$numberDecimal": ""}),
        ({"a": [{"$numberDecimal": "1,5"}]}, {"a": [{"$numberDecimal": "1,5"}]}),
    ],
)
def test_decode(wire: object, expected: object) -> None:
    assert ejson.decode(wire) == expected


def test_decode_untyped_keeps_iso_strings() -> None:
    assert ejson.decode("2001-04-01T00:00:00.000Z", typed=False) == "2001-04-01T00:00:00.000Z"


def test_decode_record_turns_hex_id_into_object_id_that_still_equals_the_string() -> None:
    record = ejson.decode_record({"_id": OID, "ref": OID})
    assert isinstance(record["_id"], ObjectId)
    assert record["_id"] == OID
    assert type(record["ref"]) is str
    assert ejson.decode_record({"_id": "plain"}) == {"_id": "plain"}


def test_decode_leaves_its_input_alone_and_shares_what_needs_no_conversion() -> None:
    plain = {"site": "a", "values": [1, 2.5, None, True]}
    amounts = [{"$numberDecimal": "1.5"}]
    wire = {"_id": OID, "at": "2001-04-01T00:00:00.000Z", "plain": plain, "amounts": amounts}
    before = {**wire, "amounts": [dict(amounts[0])]}
    record = ejson.decode_record(wire)
    assert wire == before  # nothing decoded in place
    assert record["at"] == dt.datetime(2001, 4, 1, tzinfo=UTC)
    assert record["amounts"] == [Decimal("1.5")]
    assert isinstance(record["_id"], ObjectId)
    assert record["plain"] is plain  # unchanged parts are not copied
    assert ejson.decode(plain) is plain


def test_encode_shares_plain_records_and_copies_those_it_changes() -> None:
    plain = {"n": 1, "site": "a", "value": 0.5, "flag": True, "none": None, "tags": ["x", 2]}
    assert ejson.encode(plain) is plain
    when = dt.datetime(2001, 4, 1, tzinfo=UTC)
    record = {"n": 2**60, "at": when, "nested": plain, 3: "key", "bad": float("nan")}
    before = dict(record)
    encoded = ejson.encode(record)
    assert record == before  # never encoded in place
    assert encoded == {
        "n": {"$numberLong": str(2**60)},
        "at": {"$date": "2001-04-01T00:00:00.000Z"},
        "nested": plain,
        "3": "key",
        "bad": {"$numberDouble": "NaN"},
    }
    assert encoded["nested"] is plain


def test_decode_parsed_record_sets_the_id_on_the_record_it_was_given() -> None:
    parsed = {"_id": OID.upper(), "n": 1}
    record = ejson.decode_parsed_record(parsed)
    assert record is parsed
    assert isinstance(record["_id"], ObjectId)
    assert record["_id"] == OID.upper().lower()


@pytest.mark.parametrize("typed", [True, False])
def test_decode_line_equals_decoding_the_parsed_record(typed: bool) -> None:
    lines = [
        b'{"_id":"%s","n":1,"site":"a","tags":["x",2.5,null]}' % OID.encode(),
        b'{"_id":"%s","at":"2001-04-01T00:00:00.000Z"}' % OID.encode(),
        b'{"_id":1,"amount":{"$numberDecimal":"1.5"}}',
        b'{"_id":"x","amount":{"\\u0024numberDecimal":"1.5"}}',
        b'{"_id":"x","text":"ends in Z"}',
        b'["2001-04-01T00:00:00.000Z"]',
    ]
    for line in lines:
        assert ejson.decode_line(line, typed=typed) == ejson.decode_parsed_record(
            orjson.loads(line), typed=typed
        )
    plain = ejson.decode_line(lines[0], typed=typed)
    assert type(plain["_id"]) is (ObjectId if typed else str)
    assert plain["tags"] == ["x", 2.5, None]
    dated = ejson.decode_line(lines[1], typed=typed)
    assert dated["at"] == (dt.datetime(2001, 4, 1, tzinfo=UTC) if typed else "2001-04-01T00:00:00.000Z")
    assert ejson.decode_line(lines[3], typed=typed)["amount"] == Decimal("1.5")  # an escaped "$"


def test_round_trip_through_json_text() -> None:
    value = {
        "when": dt.datetime(2020, 1, 2, 3, 4, 5, 6000, tzinfo=UTC),
        "amount": Decimal("0.1"),
        "raw": b"ab",
    }
    assert ejson.loads(ejson.dumps(value)) == value


def test_object_id_validates_and_knows_its_time() -> None:
    with pytest.raises(ValueError, match="ObjectId"):
        ObjectId("xyz")
    assert ObjectId("5F1D7C6E8B3E4A2D9C0B1A2F") == OID
    assert ObjectId(OID).generation_time == dt.datetime.fromtimestamp(1595767918, UTC)  # 0x5f1d7c6e


def test_new_object_ids_are_unique_ordered_and_carry_the_time_they_were_made() -> None:
    before = dt.datetime.now(UTC).replace(microsecond=0)
    ids = [ObjectId.new() for _ in range(1000)]
    after = dt.datetime.now(UTC)
    assert all(type(i) is ObjectId and ObjectId(i) == i for i in ids)
    assert len(set(ids)) == 1000
    assert ids == sorted(ids) or ids[0][:8] != ids[-1][:8]  # a counter orders those of one second
    assert before <= ids[0].generation_time <= after
    assert len({i[8:18] for i in ids}) == 1  # the process's random part, as MongoDB drivers do


def test_numpy_scalars_and_arrays_encode_as_python_values() -> None:
    np = pytest.importorskip("numpy")
    assert ejson.encode({"n": np.int64(3), "a": np.array([1.5, 2.5])}) == {"n": 3, "a": [1.5, 2.5]}


def _line_by_line(block: bytes, typed: bool) -> list[Any]:
    """What decode_lines must equal: each non-blank line parsed and decoded (walked) on its own."""
    return [
        ejson.decode_parsed_record(orjson.loads(line), typed=typed)
        for line in block.split(b"\n")
        if line.strip()
    ]


BLOCKS = [
    # Records as the service writes them: an ObjectId's hex, plain values only.
    b'{"_id":"%s","n":1,"site":"a","value":0.5,"flag":true,"tags":["x",2.5,null]}\n{"_id":"%s","n":2}\n'
    % (OID.encode(), OID.encode()),
    # A date, in a block of records without one.
    b'{"_id":"%s","n":1}\n{"_id":"%s","at":"2001-04-01T00:00:00.000Z","deep":[{"at":"2001-04-01T00:00:00.000Z"}]}\n'
    % (OID.encode(), OID.encode()),
    # Extended JSON wrappers, one spelt with an escape.
    b'{"_id":1,"amount":{"$numberDecimal":"1.5"}}\n{"_id":"x","amount":{"\\u0024numberDecimal":"1.5"}}\n',
    # Escapes that spell no "$" and no date; a date-like key; text ending in Z; a dollar in text.
    b'{"_id":"x","text":"a \\"quoted\\" line\\nand a tab\\t","2001-04-01T00:00:00.000Z":1,'
    b'"z":"ends in Z","p":"$5"}\n',
    # An escaped date: walked, and typed.
    b'{"_id":"x","at":"2001-04-01T00:00:00.000\\u005a"}\n',
    # Ids: upper-case hex, not hex, too short, not a string, a string of 24 with a newline; none.
    b'{"_id":"%s"}\n{"_id":"%s"}\n{"_id":"abc"}\n{"_id":5}\n{"_id":"%s\\n"}\n{"n":1}\n'
    % (OID.upper().encode(), ("g" * 24).encode(), OID[:23].encode()),
    # Lines that are not records, blank lines, CRLF, no final newline.
    b'["2001-04-01T00:00:00.000Z"]\n\n7\r\n"x"\n  \n{"_id":"%s"}' % OID.encode(),
    b"",
    b"\n\n",
]


@pytest.mark.parametrize("typed", [True, False])
@pytest.mark.parametrize("block", BLOCKS)
def test_decode_lines_equals_decoding_each_line(block: bytes, typed: bool) -> None:
    records, plain = ejson.decode_lines(block, typed=typed)
    expected = _line_by_line(block, typed)
    assert records == expected
    assert [type(r) for r in records] == [type(r) for r in expected]
    assert [type(r.get("_id")) for r in records if isinstance(r, dict)] == [
        type(r.get("_id")) for r in expected if isinstance(r, dict)
    ]
    if plain:
        assert _only_json(records)
    # Without ObjectIds (for frames): the same values; parsed JSON only when the block says so.
    without, plain = ejson.decode_lines(block, typed=typed, object_ids=False)
    assert without == expected
    if plain:
        assert _only_json(without)
    else:
        assert [type(r) for r in without] == [type(r) for r in expected]


def _only_json(value: Any) -> bool:
    if isinstance(value, dict):
        return type(value) is dict and all(type(k) is str and _only_json(v) for k, v in value.items())
    if isinstance(value, list):
        return type(value) is list and all(_only_json(v) for v in value)
    return value is None or type(value) in (str, int, float, bool)


def test_decode_lines_reads_the_usual_block_without_walking_it(monkeypatch: pytest.MonkeyPatch) -> None:
    walked: list[Any] = []
    real = ejson._decode_in
    monkeypatch.setattr(ejson, "_decode_in", lambda value, typed: walked.append(value) or real(value, typed))
    block = b"".join(b'{"_id":"%024x","n":%d,"note":"record %d"}\n' % (n, n, n) for n in range(50))
    records, plain = ejson.decode_lines(block)
    assert len(records) == 50 and walked == []
    assert all(type(r["_id"]) is ObjectId for r in records)
    assert not plain  # ObjectIds are not parsed JSON
    records, plain = ejson.decode_lines(block, object_ids=False)
    assert plain and all(type(r["_id"]) is str for r in records)


@pytest.mark.parametrize(
    "block",
    [
        b'{"a":"x\n","b":1}\n',  # a raw newline in a string: not a line of NDJSON
        b'{"a":1}\n1,2\n',  # two values on a line
        b'{"a":\n1}\n',  # a value over two lines
        b"[1,\n2]\n",
        b'{"a":1} {"b":2}\n',
    ],
)
def test_decode_lines_refuses_what_line_by_line_refuses(block: bytes) -> None:
    with pytest.raises(orjson.JSONDecodeError):
        _line_by_line(block, True)
    with pytest.raises(orjson.JSONDecodeError):
        ejson.decode_lines(block)


def test_ids_and_dates_are_typed_only_when_whole() -> None:
    with pytest.raises(ValueError, match="ObjectId"):
        ObjectId(OID + "\n")
    assert type(ejson.decode_record({"_id": OID + "\n"})["_id"]) is str
    assert type(ejson.decode_line(orjson.dumps({"_id": OID + "\n"}))["_id"]) is str
    # Digits other than ASCII ones make no date (nor an error): 2001-04-01 in Arabic-Indic digits.
    arabic = "\u0662\u0660\u0660\u0661-\u0660\u0664-\u0660\u0661T00:00:00.000Z"
    assert ejson.decode({"at": arabic}) == {"at": arabic}


#: Text that may or may not spell what decoding converts: dates (whole, cut, escaped), "$" keys.
TRICKY_TEXT = st.sampled_from(
    [
        "2001-04-01T00:00:00.000Z",
        "2001-04-01T00:00:00.000Z ",
        "x2001-04-01T00:00:00.000Z",
        "2001-04-01T00:00:00Z",
        "$numberDecimal",
        "$oid",
        "$",
        "Z",
        'a "quote" and \\ backslash',
        "line\nbreak",
        "\u0000",
        "é ünï 日本",
        OID,
        OID.upper(),
    ]
)
KEYS = st.one_of(TRICKY_TEXT, st.text(max_size=4))
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53), 2**53),
    st.floats(allow_nan=False),
    TRICKY_TEXT,
    st.text(max_size=8),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(KEYS, inner, max_size=3),
        st.builds(
            lambda key, value: {key: value}, st.sampled_from(["$numberDecimal", "$oid", "$date"]), TRICKY_TEXT
        ),
    ),
    max_leaves=8,
)
RECORDS = st.dictionaries(st.one_of(st.just("_id"), KEYS), VALUES, max_size=5)


@given(records=st.lists(RECORDS, max_size=6), typed=st.booleans())
def test_decode_lines_of_any_records_equals_decoding_each_line(
    records: list[dict[str, Any]], typed: bool
) -> None:
    block = b"".join(orjson.dumps(record) + b"\n" for record in records)
    try:
        expected = _line_by_line(block, typed)
    except Exception as exc:  # whatever line-by-line decoding refuses, the block decoder refuses alike
        with pytest.raises(type(exc)):
            ejson.decode_lines(block, typed=typed)
        return
    decoded, plain = ejson.decode_lines(block, typed=typed)
    assert decoded == expected
    assert repr(decoded) == repr(expected)  # types too (repr tells an ObjectId or a datetime from text)
    if plain:
        assert _only_json(decoded)
