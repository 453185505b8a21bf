"""Runs every ```python client-example block of the manual against the real service, so the
documented code is known to work: docs/python-client.md's walk-through in order and in one
namespace (like a notebook), and the README's first-screen lines on a collection of their own."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any

from cybercom import Client

ROOT = Path(__file__).resolve().parents[4]
WALK_THROUGH = ROOT / "docs" / "python-client.md"
README = ROOT / "README.md"


def blocks(path: Path) -> list[str]:
    return re.findall(r"```python client-example\n(.*?)```", path.read_text(), flags=re.S)


def run_blocks(path: Path, found: list[str], dbname: str, namespace: dict[str, Any]) -> None:
    for number, code in enumerate(found, 1):
        code = code.replace('"weather"', f'"{dbname}"')  # a database of its own per run
        exec(compile(code, f"{path.name} example {number}", "exec"), namespace)


def test_the_walk_through_runs(dbname: str, queues: dict[str, Any]) -> None:
    found = blocks(WALK_THROUGH)
    assert len(found) >= 5
    namespace: dict[str, Any] = {}
    try:
        run_blocks(WALK_THROUGH, found, dbname, namespace)
    finally:
        client = namespace.get("client")
        if client is not None:
            with contextlib.suppress(Exception):  # cleanup only
                client.data_store[dbname].drop()


def test_the_readme_lines_load_a_dataframe(client: Client, dbname: str) -> None:
    found = blocks(README)
    assert len(found) == 1
    stations = client.data_store.create_database(dbname).create_collection("stations")
    try:
        stations.insert(
            [
                {"name": "Norman", "elev": 357},
                {"name": "Boise City", "elev": 1265},
                {"name": "Tulsa", "elev": 194},
            ]
        )
        namespace: dict[str, Any] = {}
        run_blocks(README, found, dbname, namespace)
        assert sorted(namespace["df"]["name"].tolist()) == ["Boise City", "Norman"]
    finally:
        with contextlib.suppress(Exception):  # cleanup only
            client.data_store[dbname].drop()
