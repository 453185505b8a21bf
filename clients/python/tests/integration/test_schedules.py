"""Schedules through the client and the ``cybercom schedule`` command, against the real service."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from cybercom import BadRequest, Client, NotFound

from .conftest import cli


def _name() -> str:
    return f"s-{uuid.uuid4().hex[:8]}"


def test_create_list_preview_pause_resume_run_and_delete(client: Client, queues: dict[str, Any]) -> None:
    name = _name()
    made = client.schedules.create(
        name, "tasks.add", cron="0 2 * * *", tz="America/Chicago", args=[2, 3], queue=queues["ts"]
    )
    assert made.name == name and not made.paused and made.next_fire_at is not None
    assert made.timing == "cron 0 2 * * * (America/Chicago)"
    assert name in [s.name for s in client.schedules.list()]
    times = client.schedules.next(name, 5)
    assert len(times) == 5 and times == sorted(times)
    assert all(t.astimezone(dt.timezone(dt.timedelta(hours=-6))).hour in (1, 2) for t in times)

    paused = client.schedules.pause(name, note="sensor maintenance")
    assert paused.paused and paused.next_fire_at is None and paused.info["note"] == "sensor maintenance"
    assert not client.schedules.resume(name).paused

    task_id = client.schedules.run_now(name)
    assert client.tasks.get(task_id).result(timeout=30) == 5
    runs = client.schedules.runs(name)
    assert [(r["kind"], r["state"], r["task_id"]) for r in runs] == [("manual", "published", task_id)]

    client.schedules.delete(name)
    with pytest.raises(NotFound):
        client.schedules.get(name)


def test_bad_input_is_refused_with_the_services_reason(client: Client) -> None:
    with pytest.raises(BadRequest) as caught:
        client.schedules.create(_name(), "tasks.add", cron="0 2 * * *", tz="America/Chikago")
    assert caught.value.code == "unknown_timezone"


def test_the_schedule_command(queues: dict[str, Any]) -> None:
    name = _name()
    added = cli("schedule", "add", name, "tasks.add", "1", "2", "--every", "1h", "--queue", queues["ts"])
    assert json.loads(added.stdout)["interval"]["every"] == 1
    assert any(
        line.startswith(f"{name}  tasks.add  every 1 hours")
        for line in cli("schedule", "ls").stdout.splitlines()
    )
    assert len(cli("schedule", "next", name, "-n", "3").stdout.split()) == 3
    assert json.loads(cli("schedule", "pause", name, "--note", "away").stdout)["paused"] is True
    assert json.loads(cli("schedule", "resume", name).stdout)["paused"] is False
    cli("schedule", "rm", name)
    assert cli("schedule", "pause", name, check_code=4).returncode == 4


def test_import_of_a_celery_beat_schedule(tmp_path: Path, client: Client, queues: dict[str, Any]) -> None:
    prefix = _name()
    (tmp_path / "labbeat.py").write_text(
        "from datetime import timedelta\n"
        "from celery import Celery\n"
        "from celery.schedules import crontab\n"
        "app = Celery('lab')\n"
        "app.conf.timezone = 'Europe/Berlin'\n"
        "app.conf.beat_schedule = {\n"
        f"    '{prefix}-gauges': {{'task': 'tasks.add', 'schedule': timedelta(minutes=15), 'args': (1, 2),\n"
        f"                        'options': {{'queue': '{queues['ts']}'}}}},\n"
        f"    '{prefix}-nightly': {{'task': 'tasks.add', 'schedule': crontab(minute=0, hour=2),\n"
        "                         'args': (3, 4)},\n"
        "}\n"
    )
    done = cli("schedule", "import", "labbeat:app", env={"PYTHONPATH": str(tmp_path)})
    assert f"{prefix}-nightly  tasks.add  cron 0 2 * * * (Europe/Berlin)" in done.stdout
    ours = {s.name: s for s in client.schedules.list() if s.name.startswith(prefix)}
    assert ours[f"{prefix}-gauges"].info["interval"] == {
        "every": 900,
        "period": "seconds",
        "anchor": ours[f"{prefix}-gauges"].info["interval"]["anchor"],
    }
    assert ours[f"{prefix}-gauges"].info["queue"] == queues["ts"]
    for schedule in ours.values():
        client.schedules.delete(schedule.id)
