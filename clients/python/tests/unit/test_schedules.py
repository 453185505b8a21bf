"""Schedules without a server: the bodies the client sends, a Celery beat_schedule brought over,
and the ``cybercom schedule`` command line."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import pytest
from celery.schedules import crontab, schedule

from cybercom.cli import build_parser, main
from cybercom.schedules import from_beat, interval_of, schedule_body


class solar:
    """Stands in for celery.schedules.solar, which needs the ephem package to be built: the import
    reads a solar schedule by its type name and its event, lat and lon, as beat keeps them."""

    def __init__(self, event: str, lat: float, lon: float) -> None:
        self.event, self.lat, self.lon = event, lat, lon


@pytest.mark.parametrize(
    ("every", "interval"),
    [
        (30, {"every": 30, "period": "seconds"}),
        ("15m", {"every": 15, "period": "minutes"}),
        ("2h", {"every": 2, "period": "hours"}),
        ("1d", {"every": 1, "period": "days"}),
        ("90", {"every": 90, "period": "seconds"}),
        (dt.timedelta(minutes=5), {"every": 300.0, "period": "seconds"}),
    ],
)
def test_intervals(every: object, interval: dict[str, object]) -> None:
    assert interval_of(every) == interval  # type: ignore[arg-type]


def test_an_unreadable_interval_is_refused() -> None:
    with pytest.raises(ValueError, match="15m"):
        interval_of("every quarter hour")


def test_body_of_each_kind() -> None:
    assert schedule_body(
        "n", "tasks.harvest", cron="0 2 * * *", tz="America/Chicago", kwargs={"site": "lake"}
    ) == {
        "name": "n",
        "task": "tasks.harvest",
        "kwargs": {"site": "lake"},
        "crontab": "0 2 * * *",
        "timezone": "America/Chicago",
    }
    assert schedule_body("n", "t.x", solar=("sunrise", 46.8, -89.5))["solar"] == {
        "event": "sunrise",
        "latitude": 46.8,
        "longitude": -89.5,
    }
    at = dt.datetime(2026, 7, 1, 9, tzinfo=dt.timezone.utc)
    assert schedule_body("n", "t.x", at=at, overlap="skip")["clocked"] == "2026-07-01T09:00:00+00:00"
    with pytest.raises(ValueError, match="time zone"):
        schedule_body("n", "t.x", at=dt.datetime(2026, 7, 1, 9))


def test_a_beat_schedule_is_brought_over_entry_by_entry() -> None:
    beat = {
        "gauges": {"task": "tasks.gauges", "schedule": 900.0, "args": (1, 2)},
        "nightly": {
            "task": "tasks.summary",
            "schedule": crontab(minute=0, hour=2, day_of_week="mon-fri"),
            "kwargs": {"site": "lake"},
            "options": {"queue": "lab", "expires": 3600},
        },
        "hourly": {"task": "tasks.h", "schedule": schedule(run_every=dt.timedelta(hours=1))},
        "calibrate": {"task": "tasks.cal", "schedule": solar("sunrise", 46.8, -89.5)},
        "dusk": {"task": "tasks.dusk", "schedule": solar("dusk_civil", 46.8, -89.5)},
    }
    assert from_beat(beat, tz="America/Chicago") == [
        {
            "name": "gauges",
            "task": "tasks.gauges",
            "args": [1, 2],
            "interval": {"every": 900, "period": "seconds"},
        },
        {
            "name": "nightly",
            "task": "tasks.summary",
            "kwargs": {"site": "lake"},
            "queue": "lab",
            "expires": 3600,
            "crontab": "0 2 * * mon-fri",
            "timezone": "America/Chicago",
        },
        {"name": "hourly", "task": "tasks.h", "interval": {"every": 3600.0, "period": "seconds"}},
        {
            "name": "calibrate",
            "task": "tasks.cal",
            "solar": {"event": "sunrise", "latitude": 46.8, "longitude": -89.5},
        },
        {
            "name": "dusk",
            "task": "tasks.dusk",
            "solar": {"event": "dusk", "latitude": 46.8, "longitude": -89.5},
        },
    ]


def test_a_beat_entry_without_a_counterpart_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="twilight: the solar event 'dawn_nautical'"):
        from_beat({"twilight": {"task": "t.x", "schedule": solar("dawn_nautical", 46.8, -89.5)}})


def test_the_schedule_command_has_help_for_every_action(capsys: pytest.CaptureFixture[str]) -> None:
    for action in ("add", "ls", "pause", "resume", "rm", "next", "import"):
        with pytest.raises(SystemExit) as caught:
            build_parser().parse_args(["schedule", action, "--help"])
        assert caught.value.code == 0
        assert f"usage: cybercom schedule {action}" in capsys.readouterr().out


def test_add_needs_exactly_one_timing(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["schedule", "add", "n", "tasks.add", "--url", "http://127.0.0.1:9", "--token", "x"])
    assert code == 2
    assert "exactly one of --cron, --every, --solar, --at" in capsys.readouterr().err


def test_import_reads_a_celery_app_and_its_time_zone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "labbeat.py").write_text(
        "from celery import Celery\n"
        "from celery.schedules import crontab\n"
        "app = Celery('lab')\n"
        "app.conf.timezone = 'Europe/Berlin'\n"
        "app.conf.beat_schedule = {'n': {'task': 't.n', 'schedule': crontab(minute=30, hour=1)}}\n"
    )
    monkeypatch.chdir(tmp_path)
    from cybercom.cli import _load_beat

    try:
        beat, tz = _load_beat("labbeat:app")
    finally:
        sys.modules.pop("labbeat", None)
    assert tz == "Europe/Berlin"
    assert from_beat(beat, tz=tz) == [
        {"name": "n", "task": "t.n", "crontab": "30 1 * * *", "timezone": "Europe/Berlin"}
    ]
