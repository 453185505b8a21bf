"""The user's stored login (``cybercom login``): URL and API token in a 0600 JSON file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Optional

import orjson


def config_path() -> Path:
    """``$CYBERCOM_CONFIG``, else ``$XDG_CONFIG_HOME/cybercom/config.json`` (``~/.config/...``)."""
    explicit = os.environ.get("CYBERCOM_CONFIG")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "cybercom" / "config.json"


def load_config(path: Optional[Path] = None) -> dict[str, Any]:
    path = path or config_path()
    try:
        data = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        return {}
    return data if isinstance(data, dict) else {}


def save_config(values: dict[str, Any], path: Optional[Path] = None) -> Path:
    """Writes the file with mode 0600 from the start (never briefly readable by others)."""
    path = path or config_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(orjson.dumps(values, option=orjson.OPT_INDENT_2))
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
    return path
