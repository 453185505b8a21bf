"""The ``cybercom`` command as a user runs it (a subprocess), against the real service."""

from __future__ import annotations

import datetime as dt
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from cybercom import Client, Collection

from .conftest import URL, cli

UTC = dt.timezone.utc


def test_help_from_the_installed_command() -> None:
    # Every command's --help is checked by the unit tests; here the executable itself answers.
    assert "login" in cli("--help").stdout
    assert "usage: cybercom import" in cli("import", "--help").stdout


def test_login_stores_url_and_token_privately(tmp_path: Path) -> None:
    config = tmp_path / "cfg" / "config.json"
    env = {
        "CYBERCOM_CONFIG": str(config),
        "CYBERCOM_PASSWORD": os.environ["CYBERCOM_TEST_CLI_PASSWORD"],
        "CYBERCOM_TOKEN": "",
        "CYBERCOM_URL": "",
    }
    done = cli("login", "--url", URL, "--username", os.environ["CYBERCOM_TEST_CLI_USER"], env=env)
    assert "Signed in" in done.stdout
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    saved = json.loads(config.read_text())
    assert saved["url"] == URL and saved["token"]
    # The stored login is used when nothing else is given.
    assert cli("ls", env=env).returncode == 0
    # A second password login cannot show the existing token again.
    again = cli(
        "login", "--url", URL, "--username", os.environ["CYBERCOM_TEST_CLI_USER"], env=env, check_code=2
    )
    assert "--token" in again.stderr
    cli("login", "--url", URL, "--token", saved["token"], env=env)


def test_ls_query_and_export(collection: Collection, tmp_path: Path) -> None:
    collection.insert(
        [{"name": "a", "n": 1, "loc": {"lat": 1.5}}, {"name": "b", "n": 2, "loc": {"lat": 2.5}}]
    )
    db, col = collection.database.name, collection.name
    assert db in cli("ls").stdout.split()
    assert cli("ls", db).stdout.split() == [col]
    assert cli("ls", db, col).stdout.strip() == "2 records"
    q = json.dumps({"filter": {"n": {"$gt": 1}}, "projection": {"_id": 0}})
    assert [json.loads(line) for line in cli("query", db, col, "-q", q).stdout.splitlines()] == [
        {"name": "b", "n": 2, "loc": {"lat": 2.5}}
    ]
    assert json.loads(cli("query", db, col, "-q", '{"n": 1}', "--format", "json").stdout)[0]["name"] == "a"
    csv_out = cli("query", db, col, "-q", q, "--format", "csv").stdout
    assert csv_out.splitlines() == ["name,n,loc.lat", "b,2,2.5"]
    for fmt in ("csv", "ndjson", "json"):
        target = tmp_path / f"out.{fmt}"
        cli("export", db, col, "--format", fmt, "-o", str(target), "-q", '{"filter": {}, "sort": {"n": 1}}')
        text = target.read_text()
        assert "a" in text and "b" in text, fmt
    assert (tmp_path / "out.csv").read_text().splitlines()[0].split(",")[:1] == ["_id"]


def test_import_every_format(client: Client, collection: Collection, tmp_path: Path) -> None:
    db, col = collection.database.name, collection.name
    files = {
        "a.json": json.dumps([{"k": "json", "n": 1}, {"k": "json", "n": 2}]),
        "a.ndjson": '{"k": "ndjson", "t": {"$date": "2020-01-01T00:00:00Z"}}\n{"k": "ndjson"}\n',
        "a.csv": "k,n,loc.lat\ncsv,1,3.5\ncsv,2,\n",
        "a.geojson": json.dumps(
            {
                "type": "FeatureCollection",
                "features": [
                    {
                        "type": "Feature",
                        "geometry": {"type": "Point", "coordinates": [1, 2]},
                        "properties": {"k": "geo"},
                    }
                ],
            }
        ),
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        cli("import", db, col, str(tmp_path / name), "--quiet")
    assert collection.count({"k": "json"}) == 2
    assert collection.count({"t": {"$type": "date"}}) == 1
    assert collection.find_one({"k": "csv", "n": 1}, projection={"_id": 0}) == {
        "k": "csv",
        "n": 1,
        "loc": {"lat": 3.5},
    }
    assert collection.count({"type": "Feature", "properties.k": "geo"}) == 1


def test_import_stores_dates_and_the_types_named(collection: Collection, tmp_path: Path) -> None:
    db, col = collection.database.name, collection.name
    source = tmp_path / "observations.csv"
    source.write_text(
        "station,at,zip,code\nNorman,2024-05-01T12:00:00Z,01234,7\nTulsa,2024-05-02 08:30:00,73019,8\n"
    )
    done = cli("import", db, col, str(source), "--quiet", "--dtype", "zip=str", "--dtype=code=str")
    assert "read as dates: at" in done.stderr
    # A date range matches the stored dates (the text "2024-05-01T..." would match nothing).
    day = {"$gte": dt.datetime(2024, 5, 1, tzinfo=UTC), "$lt": dt.datetime(2024, 5, 2, tzinfo=UTC)}
    assert collection.count({"at": day}) == 1
    tulsa = collection.find_one({"station": "Tulsa"}, projection={"_id": 0})
    assert tulsa == {
        "station": "Tulsa",
        "at": dt.datetime(2024, 5, 2, 8, 30, tzinfo=UTC),
        "zip": "73019",
        "code": "8",
    }
    cli("import", db, col, str(source), "--quiet", "--parse-dates", "none")
    assert collection.count({"at": {"$type": "string"}}) == 2
    # A cell that does not fit the type asked for stops the import before anything is written.
    for bad in (["--dtype", "station=int"], ["--dtype", "nowhere=int"], ["--parse-dates", "zip"]):
        refused = cli("import", db, col, str(source), "--create", *bad, check_code=2)
        assert "cybercom import:" in refused.stderr and "Traceback" not in refused.stderr
    assert collection.count() == 4


def test_import_stops_with_a_report_and_resumes(collection: Collection, tmp_path: Path) -> None:
    db, col = collection.database.name, collection.name
    collection.insert_one({"_id": "r5", "blocker": True})
    source = tmp_path / "big.ndjson"
    source.write_text("".join(json.dumps({"_id": f"r{i}", "n": i}) + "\n" for i in range(12)))
    report = tmp_path / "report.json"
    done = cli(
        "import", db, col, str(source), "--chunk-size", "4", "--report", str(report), "--quiet", check_code=5
    )
    assert "--resume" in done.stderr
    written: dict[str, Any] = json.loads(report.read_text())
    assert written["failed_index"] == 5
    assert written["inserted_ids"] == ["r0", "r1", "r2", "r3", "r4"]
    collection.delete("r5")  # the user fixes the cause
    cli("import", db, col, str(source), "--chunk-size", "4", "--resume", str(report), "--quiet")
    assert sorted(r["n"] for r in collection.find()) == list(range(12))


def test_submit_tasks_history_and_exit_codes(queues: dict[str, Any]) -> None:
    done = cli("submit", "tasks.add", "2", "3", "--queue", queues["ts"], "--tag", "cli", "--wait", "30")
    assert json.loads(done.stdout)["result"] == 5
    queued = json.loads(cli("submit", "tasks.noop", "--queue", queues["ts"]).stdout)
    assert queued["task_id"]
    failed = cli("submit", "tasks.fail", "oops", "--queue", queues["ts"], "--wait", "30", check_code=6)
    assert "oops" in failed.stderr
    assert "tasks.add(" in cli("tasks").stdout
    assert "tasks.add" in cli("history", "--tag", "cli").stdout
    cli("ls", "no_such_db_here", check_code=4)
    cli("ls", env={"CYBERCOM_TOKEN": "wrong"}, check_code=3)
    cli("query", "d", "c", "-q", "{not json", check_code=2)


@pytest.mark.parametrize("bad", [["ls", "--nope"], ["frobnicate"]])
def test_usage_errors_exit_2(bad: list[str]) -> None:
    cli(*bad, check_code=2)
