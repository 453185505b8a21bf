import io
import json
from pathlib import Path

import pytest

from cybercom import records_io as rio
from cybercom.cli import (
    EXIT_AUTH,
    EXIT_NOT_FOUND,
    EXIT_PARTIAL,
    EXIT_UNAVAILABLE,
    build_parser,
    exit_code_for,
)
from cybercom.errors import AuthenticationFailed, NotFound, ServiceUnavailable


@pytest.mark.parametrize(
    ("cell", "value"),
    [
        ("true", True),
        ("false", False),
        ("42", 42),
        ("-7", -7),
        ("007", "007"),  # a code, not a number
        ("3.5", 3.5),
        ("1e3", 1000.0),
        (".5", 0.5),
        ("[1, 2]", [1, 2]),
        ('{"a": 1}', {"a": 1}),
        ("[not json", "[not json"),
        ("Norman", "Norman"),
        ("inf", float("inf")),
        ("-inf", float("-inf")),
        ("Inf", "Inf"),
        ("2001-04-01T00:00:00.000Z", "2001-04-01T00:00:00.000Z"),
    ],
)
def test_parse_cell(cell: str, value: object) -> None:
    assert rio.parse_cell(cell) == value


def test_csv_round_trip_with_dotted_columns() -> None:
    records = [
        {"_id": "a", "loc": {"lat": 1.5, "lon": 2}, "tags": ["x"], "ok": True},
        {"_id": "b", "loc": {"lat": 3}},
    ]
    out = io.StringIO()
    assert rio.write_csv(records, out) == 2
    text = out.getvalue()
    assert text.splitlines()[0] == "_id,loc.lat,loc.lon,tags,ok"
    assert text.splitlines()[1] == 'a,1.5,2,"[""x""]",true'
    assert list(rio.read_csv(io.StringIO(text))) == records


def test_read_files_of_every_format(tmp_path: Path) -> None:
    (tmp_path / "a.ndjson").write_text('{"n": 1}\n\n{"n": 2, "t": {"$date": "2001-01-01T00:00:00Z"}}\n')
    (tmp_path / "a.json").write_text('[{"n": 1}, {"n": 2}]')
    (tmp_path / "one.json").write_text('{"n": 1}')
    (tmp_path / "a.csv").write_text("\ufeffn,name\n1,x\n2,\n")
    fc = {
        "type": "FeatureCollection",
        "features": [{"type": "Feature", "geometry": None, "properties": {"n": 1}}],
    }
    (tmp_path / "a.geojson").write_text(json.dumps(fc))
    assert [r["n"] for r in rio.read_records(str(tmp_path / "a.ndjson"))] == [1, 2]
    assert list(rio.read_records(str(tmp_path / "a.json"))) == [{"n": 1}, {"n": 2}]
    assert list(rio.read_records(str(tmp_path / "one.json"))) == [{"n": 1}]
    assert list(rio.read_records(str(tmp_path / "a.csv"))) == [{"n": 1, "name": "x"}, {"n": 2}]
    assert list(rio.read_records(str(tmp_path / "a.geojson"))) == fc["features"]
    with pytest.raises(ValueError, match="format"):
        rio.detect_format("data.xlsx")
    (tmp_path / "bad.ndjson").write_text("[1]\n")
    with pytest.raises(ValueError, match="line 1"):
        list(rio.read_records(str(tmp_path / "bad.ndjson")))


def test_json_and_ndjson_writers() -> None:
    out = io.BytesIO()
    rio.write_json([{"a": 1}, {"b": b"\x00"}], out)
    assert json.loads(out.getvalue()) == [{"a": 1}, {"b": {"$binary": {"base64": "AA==", "subType": "00"}}}]
    out = io.BytesIO()
    rio.write_json([], out)
    assert json.loads(out.getvalue()) == []
    out = io.BytesIO()
    assert rio.write_ndjson([{"a": 1}, {"a": 2}], out) == 2
    assert out.getvalue() == b'{"a":1}\n{"a":2}\n'


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (AuthenticationFailed("x", status=401), EXIT_AUTH),
        (NotFound("x", status=404), EXIT_NOT_FOUND),
        (ServiceUnavailable("x", status=503), EXIT_UNAVAILABLE),
    ],
)
def test_exit_codes(error: Exception, code: int) -> None:
    assert exit_code_for(error) == code
    assert EXIT_PARTIAL == 5


def test_every_command_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("login", "ls", "query", "export", "import", "submit", "tasks", "history"):
        with pytest.raises(SystemExit) as caught:
            build_parser().parse_args([command, "--help"])
        assert caught.value.code == 0
        assert f"usage: cybercom {command}" in capsys.readouterr().out
