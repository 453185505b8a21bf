"""Runs every ```python client-example block of docs/python-client.md, in order, in one namespace
(like a notebook), against the real service: the documented code is known to work."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any

DOC = Path(__file__).resolve().parents[4] / "docs" / "python-client.md"


def blocks() -> list[str]:
    return re.findall(r"```python client-example\n(.*?)```", DOC.read_text(), flags=re.S)


def test_the_walk_through_runs(dbname: str, queues: dict[str, Any]) -> None:
    found = blocks()
    assert len(found) >= 5
    namespace: dict[str, Any] = {}
    try:
        for number, code in enumerate(found, 1):
            code = code.replace('"weather"', f'"{dbname}"')  # a database of its own per run
            exec(compile(code, f"{DOC.name} example {number}", "exec"), namespace)
    finally:
        client = namespace.get("client")
        if client is not None:
            with contextlib.suppress(Exception):  # cleanup only
                client.data_store[dbname].drop()
