"""Integration tests against a running service (started by test/integration/client/python-client.test.ts).

Environment: CYBERCOM_URL, CYBERCOM_TOKEN (a superuser), CYBERCOM_USERNAME/CYBERCOM_PASSWORD (the
same user), CYBERCOM_TEST_PREFIX (database names), CYBERCOM_TEST_TS_QUEUE / CYBERCOM_TEST_PY_QUEUE
(queues of a TypeScript and a Python Celery worker), CYBERCOM_TEST_OTHER_TOKEN (a user without
permissions), CYBERCOM_TEST_CLI_USER / CYBERCOM_TEST_CLI_PASSWORD (a user that has no token yet),
CYBERCOM_TEST_CATALOG_DB (a catalog database).

Tests marked ``engine_restart`` kill and restart the service's database engine, so they run only
against a service on an engine of its own whose restarts CYBERCOM_TEST_ENGINE_CONTROL offers
(test/integration/client/python-client-restart.test.ts); without it they are deselected, not
skipped: they belong to that other run.

Parts of the interface a server gained after the basic data store (exports, signed links, indexes,
task signatures) are marked ``@pytest.mark.server_feature(name)``: each is probed once against the
server, and its tests fail at once with the reason ``server has no ...`` when the server lacks it
(this suite tests the server it ships with, which has them all: nothing is skipped).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from cybercom import Client, Collection, CybercomError

ENV = os.environ

if not ENV.get("CYBERCOM_URL") or not ENV.get("CYBERCOM_TOKEN"):
    pytest.skip("integration tests need CYBERCOM_URL and CYBERCOM_TOKEN", allow_module_level=True)

URL = ENV["CYBERCOM_URL"]
TOKEN = ENV["CYBERCOM_TOKEN"]
PREFIX = ENV.get("CYBERCOM_TEST_PREFIX", "pyc")


def _probe(name: str) -> str | None:
    """None when the server has the feature, else the skip reason."""
    headers = {"Authorization": f"Token {TOKEN}", "Accept": "application/json"}
    with httpx.Client(base_url=URL, headers=headers, timeout=30) as http:
        if name == "links":
            answer = http.post("/api/links/", json={})
            missing = answer.status_code == 404 and "no_such_endpoint" in answer.text
            return "server has no /api/links/" if missing else None
        if name == "indexes":
            answer = http.get("/api/data_store/indexes/no_such_db/no_such_col/")
            missing = answer.status_code == 404 and "no_such_endpoint" in answer.text
            return "server has no /api/data_store/indexes/" if missing else None
        if name == "formats":
            answer = http.get("/api/data_store/data/", params={"format": "ndjson"})
            missing = answer.status_code == 400 and "invalid_format" in answer.text
            return "server has no ?format=ndjson|csv exports" if missing else None
        if name == "signatures":
            answer = http.get("/api/queue/", params={"page_size": 0})
            rows = answer.json().get("results", [])
            missing = not any("signature" in row for row in rows)
            return "server sends no task signatures in /api/queue/" if missing else None
    raise ValueError(f"unknown server feature {name!r}")


_probed: dict[str, str | None] = {}


def cli(
    *args: str, env: dict[str, str] | None = None, check_code: int | None = 0
) -> subprocess.CompletedProcess[str]:
    """The ``cybercom`` command as a user runs it (a subprocess of this Python), signed in with
    CYBERCOM_URL and CYBERCOM_TOKEN; asserts its exit code unless ``check_code`` is None."""
    base = {**os.environ, "CYBERCOM_URL": URL, "CYBERCOM_TOKEN": TOKEN, **(env or {})}
    done = subprocess.run(
        [sys.executable, "-m", "cybercom", *args], env=base, capture_output=True, text=True, timeout=180
    )
    if check_code is not None:
        assert done.returncode == check_code, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "engine_restart: kills and restarts the service's database engine (see above)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if ENV.get("CYBERCOM_TEST_ENGINE_CONTROL"):
        return
    restarts = [item for item in items if item.get_closest_marker("engine_restart") is not None]
    if restarts:
        config.hook.pytest_deselected(items=restarts)
        items[:] = [item for item in items if item.get_closest_marker("engine_restart") is None]


def pytest_runtest_setup(item: pytest.Item) -> None:
    for marker in item.iter_markers("server_feature"):
        name = str(marker.args[0])
        if name not in _probed:
            _probed[name] = _probe(name)
        reason = _probed[name]
        if reason is not None:
            pytest.fail(reason, pytrace=False)


@pytest.fixture(scope="session")
def client() -> Iterator[Client]:
    with Client(URL, token=TOKEN) as c:
        yield c


@pytest.fixture(scope="session")
def other_client() -> Iterator[Client]:
    with Client(URL, token=ENV["CYBERCOM_TEST_OTHER_TOKEN"]) as c:
        yield c


@pytest.fixture
def dbname() -> str:
    return f"{PREFIX}_{uuid.uuid4().hex[:8]}"


@pytest.fixture
def collection(client: Client, dbname: str) -> Iterator[Collection]:
    db = client.data_store.create_database(dbname)
    col = db.create_collection("records")
    yield col
    with contextlib.suppress(CybercomError):
        db.drop()


@pytest.fixture(scope="session")
def queues() -> dict[str, Any]:
    return {"ts": ENV["CYBERCOM_TEST_TS_QUEUE"], "py": ENV["CYBERCOM_TEST_PY_QUEUE"]}
