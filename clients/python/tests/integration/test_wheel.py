"""The wheel the service serves installs with pip into a fresh virtualenv and imports."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import httpx

from .conftest import URL


def _fresh_venv(path: Path) -> Path:
    venv.EnvBuilder(with_pip=True).create(path)
    return path / "bin" / "python"


def _import_from(python: Path) -> str:
    # The package comes from the fresh venv; its dependencies (httpx, orjson, tqdm) from this one,
    # so the test needs no package index.
    env = {
        **os.environ,
        "PYTHONPATH": sysconfig.get_paths()["purelib"] + os.pathsep + sysconfig.get_paths()["platlib"],
    }
    done = subprocess.run(
        [str(python), "-c", "import cybercom, sys; print(cybercom.__version__, cybercom.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def test_served_without_credentials_with_its_metadata() -> None:
    info = httpx.get(f"{URL}/api/client/python/", headers={"Accept": "application/json"}).json()
    assert info["package"] == "cybercom"
    wheel = httpx.get(info["wheel"])
    assert wheel.status_code == 200
    assert wheel.headers["content-type"] == "application/zip"
    assert wheel.content[:2] == b"PK"
    import hashlib

    assert hashlib.sha256(wheel.content).hexdigest() == info["sha256"]


def test_pip_installs_the_wheel_by_url_and_from_the_index(tmp_path: Path) -> None:
    info = httpx.get(f"{URL}/api/client/python/", headers={"Accept": "application/json"}).json()
    for name, source in (
        ("by-url", [info["wheel"]]),
        ("by-index", ["--index-url", info["index_url"], "cybercom"]),
    ):
        python = _fresh_venv(tmp_path / name)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "--python",
                str(python),
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-deps",
                *source,
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        version, location = _import_from(python).split()
        assert version == info["version"]
        assert location.startswith(str(tmp_path / name)), location
    assert sys.version_info >= (3, 9)
