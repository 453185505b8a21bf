"""The settings of ``cybercom worker``, read once from the environment or a worker bundle.

The variable names are those of the service's own worker (its ``worker.env``): the shared
``BROKER_*`` and ``MONGO_*`` connection variables with their TLS client certificate, and the
``WORKER_*`` and ``RESULT_*`` ones. A bundle directory holds ``worker.env`` written for a
container, whose certificate paths name ``/run/cybercom/tls``; read from a bundle, they point at
the bundle's own ``certs/`` instead. The environment wins over the bundle's file, so one value can
be changed for one run.

Nothing here imports Celery: the settings can be read, checked and shown without it.
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional
from urllib.parse import quote, urlsplit, urlunsplit

DEFAULT_QUEUE = "python"
"""The queue a Python worker consumes unless told otherwise: one of its own, because a worker that
takes a task it does not know fails it (the TypeScript worker on ``celery`` included)."""

DEFAULT_RESULT_DATABASE = "cybercom"
DEFAULT_RESULT_COLLECTION = "tombstone"
ENV_FILE = "worker.env"
CERTS_DIR = "certs"
TASKS_DIR = "tasks"

# The certificate files of a bundle, by the variable that names them.
_BUNDLE_CERTIFICATES = {
    "BROKER_TLS_CA_FILE": "ca.pem",
    "BROKER_TLS_CERT_FILE": "client.pem",
    "BROKER_TLS_KEY_FILE": "client.key",
    "MONGO_TLS_CA_FILE": "ca.pem",
    "MONGO_TLS_CERT_KEY_FILE": "client-combined.pem",
}


class SettingsError(ValueError):
    """A setting is missing or malformed; the message names the variable."""


@dataclass(frozen=True)
class BrokerSettings:
    url: str
    """The broker URL without credentials, as shown to people (``amqps://host:5671/vhost``)."""
    username: Optional[str]
    password: Optional[str]
    ca_file: Optional[str]
    cert_file: Optional[str]
    key_file: Optional[str]
    queue_type: Optional[str]

    @property
    def tls(self) -> bool:
        return urlsplit(self.url).scheme == "amqps"

    @property
    def url_with_credentials(self) -> str:
        """The URL kombu dials: the user and password go in it, quoted."""
        parts = urlsplit(self.url)
        if not self.username:
            return self.url
        credentials = quote(self.username, safe="") + ":" + quote(self.password or "", safe="")
        host = parts.netloc.rsplit("@", 1)[-1]
        return urlunsplit((parts.scheme, f"{credentials}@{host}", parts.path, "", ""))


@dataclass(frozen=True)
class ResultSettings:
    uri: str
    username: Optional[str]
    password: Optional[str]
    auth_source: str
    ca_file: Optional[str]
    cert_key_file: Optional[str]
    database: str
    collection: str

    @property
    def tls(self) -> bool:
        return self.ca_file is not None or "tls=true" in self.uri.lower()


@dataclass(frozen=True)
class WorkerSettings:
    broker: BrokerSettings
    results: ResultSettings
    node_name: str
    queues: tuple[str, ...]
    concurrency: Optional[int]
    """None: Celery's default, the number of CPUs."""
    prefetch_multiplier: int
    track_started: bool
    log_level: str
    tasks_dir: Optional[Path]
    """The bundle's ``tasks/`` folder, when it has one: loaded when no modules are named."""


def read_env_file(path: Path) -> dict[str, str]:
    """``KEY=value`` lines as the service writes them: a value is bare, or a JSON string in quotes."""
    values: dict[str, str] = {}
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export ") :].lstrip()
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise SettingsError(f"{path}:{number}: not a KEY=value line")
        value = value.strip()
        if value.startswith('"'):
            try:
                value = str(json.loads(value))
            except ValueError as exc:
                raise SettingsError(f"{path}:{number}: {key.strip()} has a malformed quoted value") from exc
        values[key.strip()] = value
    return values


def bundle_environment(bundle: Path) -> dict[str, str]:
    """The variables of a bundle's ``worker.env``, with its certificate paths in the bundle."""
    env_file = bundle / ENV_FILE
    if not env_file.is_file():
        raise SettingsError(f"{bundle} is not a worker bundle: it has no {ENV_FILE}")
    values = read_env_file(env_file)
    for variable, file in _BUNDLE_CERTIFICATES.items():
        if variable in values:
            values[variable] = str((bundle / CERTS_DIR / file).resolve())
    return values


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    value = env.get(name, "").strip().lower()
    if value == "":
        return default
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise SettingsError(f"{name} must be true or false, not {value!r}")


def _integer(env: Mapping[str, str], name: str, minimum: int) -> Optional[int]:
    value = env.get(name, "").strip()
    if value == "":
        return None
    try:
        number = int(value)
    except ValueError:
        raise SettingsError(f"{name} must be a whole number, not {value!r}") from None
    if number < minimum:
        raise SettingsError(f"{name} must be at least {minimum}")
    return number


def _required(env: Mapping[str, str], name: str, what: str) -> str:
    value = env.get(name, "").strip()
    if not value:
        raise SettingsError(f"{name} is not set ({what}); pass --bundle DIR or set it in the environment")
    return value


def _optional(env: Mapping[str, str], name: str) -> Optional[str]:
    value = env.get(name, "").strip()
    return value or None


def _prefetch_multiplier(env: Mapping[str, str]) -> int:
    # One task per worker process at a time by default, so a long task holds back no other
    # message (0 is Celery's "no limit").
    value = _integer(env, "WORKER_PREFETCH_MULTIPLIER", 0)
    return 1 if value is None else value


# The service's log levels (pino's) as Python logging's.
_LOG_LEVELS = {
    "fatal": "CRITICAL",
    "silent": "CRITICAL",
    "error": "ERROR",
    "warn": "WARNING",
    "warning": "WARNING",
    "info": "INFO",
    "debug": "DEBUG",
    "trace": "DEBUG",
}


def _log_level(env: Mapping[str, str]) -> str:
    value = env.get("LOG_LEVEL", "").strip().lower() or "info"
    if value not in _LOG_LEVELS:
        raise SettingsError(f"LOG_LEVEL must be one of {', '.join(_LOG_LEVELS)}, not {value!r}")
    return _LOG_LEVELS[value]


def _queues(text: str) -> tuple[str, ...]:
    return tuple(q.strip() for q in text.split(",") if q.strip())


def load_settings(
    environ: Mapping[str, str] = os.environ,
    bundle: Optional[Path] = None,
) -> WorkerSettings:
    """The worker's settings: the bundle's file (when given) overlaid with `environ`."""
    env: dict[str, str] = {}
    if bundle is not None:
        env.update(bundle_environment(bundle))
    env.update({k: v for k, v in environ.items() if v != ""})

    broker_url = _required(env, "BROKER_URL", "the broker, e.g. amqps://cybercom.example.org:5671/cybercom")
    if urlsplit(broker_url).scheme not in ("amqp", "amqps"):
        raise SettingsError(f"BROKER_URL must start with amqp:// or amqps://, not {broker_url!r}")
    mongo_uri = _required(env, "MONGO_URI", "the result database, e.g. mongodb://cybercom.example.org:27017/")
    if urlsplit(mongo_uri).scheme not in ("mongodb", "mongodb+srv"):
        raise SettingsError("MONGO_URI must start with mongodb:// or mongodb+srv://")
    queues = _queues(env.get("WORKER_QUEUES", DEFAULT_QUEUE))
    if not queues:
        raise SettingsError("WORKER_QUEUES names no queue")
    tasks_dir = bundle / TASKS_DIR if bundle is not None and (bundle / TASKS_DIR).is_dir() else None
    return WorkerSettings(
        broker=BrokerSettings(
            url=broker_url,
            username=_optional(env, "BROKER_USERNAME"),
            password=_optional(env, "BROKER_PASSWORD"),
            ca_file=_optional(env, "BROKER_TLS_CA_FILE"),
            cert_file=_optional(env, "BROKER_TLS_CERT_FILE"),
            key_file=_optional(env, "BROKER_TLS_KEY_FILE"),
            queue_type=_optional(env, "TASK_QUEUE_TYPE"),
        ),
        results=ResultSettings(
            uri=mongo_uri,
            username=_optional(env, "MONGO_USERNAME"),
            password=_optional(env, "MONGO_PASSWORD"),
            auth_source=env.get("MONGO_AUTH_SOURCE", "").strip() or "admin",
            ca_file=_optional(env, "MONGO_TLS_CA_FILE"),
            cert_key_file=_optional(env, "MONGO_TLS_CERT_KEY_FILE"),
            database=env.get("RESULT_DATABASE", "").strip() or DEFAULT_RESULT_DATABASE,
            collection=env.get("RESULT_COLLECTION", "").strip() or DEFAULT_RESULT_COLLECTION,
        ),
        node_name=env.get("WORKER_NODE_NAME", "").strip() or f"python-worker@{socket.gethostname()}",
        queues=queues,
        concurrency=_integer(env, "WORKER_CONCURRENCY", 1),
        # One task per process at a time, so a long task holds back no other message.
        prefetch_multiplier=_prefetch_multiplier(env),
        track_started=_flag(env, "WORKER_TRACK_STARTED", False),
        log_level=_log_level(env),
        tasks_dir=tasks_dir,
    )
