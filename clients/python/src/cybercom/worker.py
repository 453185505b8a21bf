"""``cybercom worker``: a Celery worker for a lab's own Python tasks, wired to a cybercom service.

The lab writes only task functions (``@shared_task`` from Celery, with docstrings and type
hints); this module owns the wiring, the way the service's own worker is configured:

- the broker over AMQPS with the worker's client certificate, the MongoDB result backend over TLS,
  results in the service's result collection (``cybercom.tombstone`` by default), JSON only;
- the queue convention of the service: each queue a direct exchange of the same name, bound with
  routing key = queue name (what the service's publisher and worker declare);
- task events on, so the service's task history and metrics see the tasks run;
- late acknowledgement and one message per worker process (a task that kills its process is
  delivered again, and a long task holds back no other message);
- the task-docs extension (:mod:`cybercom.celery`), so the service's task catalog shows each
  task's docstring and signature;
- the service's REVOKED marks honoured before a task runs (:mod:`cybercom.revocation`).

Celery is imported only by the functions that need it, so ``cybercom --help`` works without it.
"""

from __future__ import annotations

import importlib
import os
import ssl
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence
from urllib.parse import urlsplit

from .worker_settings import WorkerSettings

APP_NAME = "cybercom-worker"


class TaskLoadError(Exception):
    """A task module could not be imported; the message carries Python's error."""


def configure(app: Any, settings: WorkerSettings) -> None:
    """Sets `app`'s configuration for the service described by `settings`."""
    broker, results = settings.broker, settings.results
    options: dict[str, Any] = {"authSource": results.auth_source, "serverSelectionTimeoutMS": 10000}
    if results.ca_file is not None:
        options.update(tls=True, tlsCAFile=results.ca_file)
    if results.cert_key_file is not None:
        options["tlsCertificateKeyFile"] = results.cert_key_file
    queue = settings.queues[0]
    app.conf.update(
        broker_url=broker.url_with_credentials,
        broker_use_ssl=_broker_tls(settings) if broker.tls else False,
        broker_connection_retry_on_startup=True,
        result_backend=results.uri,
        mongodb_backend_settings={
            "database": results.database,
            "taskmeta_collection": results.collection,
            "user": results.username,
            "password": results.password,
            "options": options,
        },
        # The name, arguments, worker and queue in each result, as the service's worker stores them.
        result_extended=True,
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        task_default_queue=queue,
        task_default_exchange=queue,
        task_default_routing_key=queue,
        task_create_missing_queues=True,
        task_acks_late=True,
        task_track_started=settings.track_started,
        worker_prefetch_multiplier=settings.prefetch_multiplier,
        worker_send_task_events=True,
        task_send_sent_event=True,
    )
    if broker.queue_type is not None and broker.queue_type != "classic":
        # Celery 5.5 and later; older releases cannot declare quorum queues.
        app.conf.task_default_queue_type = broker.queue_type


def _broker_tls(settings: WorkerSettings) -> dict[str, Any]:
    broker = settings.broker
    tls: dict[str, Any] = {"cert_reqs": ssl.CERT_REQUIRED}
    if broker.ca_file is not None:
        tls["ca_certs"] = broker.ca_file
    if broker.cert_file is not None:
        tls["certfile"] = broker.cert_file
    if broker.key_file is not None:
        tls["keyfile"] = broker.key_file
    return tls


def create_app(settings: WorkerSettings) -> Any:
    """A Celery app for the service, current and default, so ``@shared_task`` binds to it."""
    from celery import Celery

    from . import celery as task_docs
    from . import revocation

    app = Celery(APP_NAME, set_as_current=True)
    configure(app, settings)
    app.set_default()
    task_docs.install(app)
    revocation.install(app)
    return app


def modules_in(folder: Path) -> list[str]:
    """The importable modules and packages directly in `folder`, sorted (``_private`` ones left out)."""
    names = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith(("_", ".")):
            continue
        if entry.is_file() and entry.suffix == ".py":
            names.append(entry.stem)
        elif entry.is_dir() and (entry / "__init__.py").is_file():
            names.append(entry.name)
    return names


def load_tasks(app: Any, modules: Sequence[str], folders: Sequence[Path]) -> list[str]:
    """Imports the lab's modules (from the working directory) and every module in `folders`.

    Answers the names of the tasks registered, Celery's own ``celery.*`` left out.
    """
    from . import revocation

    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    names = list(modules)
    for folder in folders:
        if not folder.is_dir():
            raise TaskLoadError(f"{folder} is not a folder")
        sys.path.insert(0, str(folder.resolve()))
        names.extend(modules_in(folder))
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:
            raise TaskLoadError(f"could not import {name}: {type(exc).__name__}: {exc}") from exc
    app.finalize(auto=True)
    # Tasks declared with a base class of their own bypass the app's default base.
    revocation.install(app)
    return sorted(name for name in app.tasks if not name.startswith("celery."))


def _redacted(url: str) -> str:
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    return parts._replace(netloc=host).geturl()


def describe(settings: WorkerSettings, tasks: Sequence[str]) -> str:
    """What the worker connects to and runs, for people (no secrets)."""
    broker, results = settings.broker, settings.results
    broker_tls = "TLS" if broker.tls else "no TLS"
    if broker.cert_file is not None:
        broker_tls += f", client certificate {broker.cert_file}"
    result_tls = "TLS" if results.tls else "no TLS"
    if results.cert_key_file is not None:
        result_tls += f", client certificate {results.cert_key_file}"
    lines = [
        f"cybercom worker {settings.node_name}",
        f"  broker:         {_redacted(broker.url)} ({broker_tls})"
        + (f" as {broker.username}" if broker.username else ""),
        f"  queues:         {', '.join(settings.queues)}"
        + (f" ({broker.queue_type})" if broker.queue_type else ""),
        f"  result backend: {_redacted(results.uri)} database {results.database}, "
        f"collection {results.collection} ({result_tls})"
        + (f" as {results.username}" if results.username else ""),
        f"  tasks ({len(tasks)}):      {', '.join(tasks) if tasks else 'none'}",
    ]
    return "\n".join(lines)


@dataclass(frozen=True)
class ConnectionCheck:
    broker: Optional[str]
    """None when the broker answered, else why not."""
    results: Optional[str]

    @property
    def ok(self) -> bool:
        return self.broker is None and self.results is None


def check_connections(app: Any, timeout: float = 10.0) -> ConnectionCheck:
    """Connects to the broker and reads the result collection once, as the worker would."""
    broker_problem: Optional[str] = None
    try:
        with app.connection_for_write() as connection:
            connection.ensure_connection(max_retries=1, timeout=timeout)
    except Exception as exc:
        broker_problem = f"{type(exc).__name__}: {exc}"
    results_problem: Optional[str] = None
    try:
        app.backend.collection.find_one({"_id": "cybercom-worker-check"}, {"_id": 1})
    except Exception as exc:
        results_problem = f"{type(exc).__name__}: {exc}"
    return ConnectionCheck(broker=broker_problem, results=results_problem)


def run(
    app: Any,
    settings: WorkerSettings,
    pool: Optional[str] = None,
    without_mingle: bool = False,
    without_gossip: bool = False,
) -> int:
    """Runs the worker in the foreground until it is stopped; answers its exit code."""
    worker = app.Worker(
        hostname=settings.node_name,
        queues=list(settings.queues),
        concurrency=settings.concurrency,
        pool_cls=pool,
        loglevel=settings.log_level,
        task_events=True,
        without_mingle=without_mingle,
        without_gossip=without_gossip,
    )
    worker.start()
    code: int = worker.exitcode or 0
    return code
