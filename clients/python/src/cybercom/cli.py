"""The ``cybercom`` command line.

Exit codes: 0 done; 1 the service refused the request (bad input, conflict, ...); 2 wrong usage;
3 not signed in or not permitted; 4 not found; 5 an import stopped part-way (a resumable report
was written); 6 the task failed or was revoked; 7 the task did not finish in time; 8 the service
or the network is unavailable.
"""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any, Callable, Optional

import httpx
import orjson

from . import ejson, records_io
from ._version import __version__
from .client import Client
from .column_types import DTYPES, ImportTypes
from .config import config_path, save_config
from .data_store import INSERT_CHUNK_RECORDS, Area, Collection, InsertError
from .errors import (
    AuthenticationFailed,
    CybercomError,
    NotFound,
    PermissionDenied,
    ServiceUnavailable,
    TaskFailed,
    TaskTimeout,
    Throttled,
)

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_AUTH = 3
EXIT_NOT_FOUND = 4
EXIT_PARTIAL = 5
EXIT_TASK_FAILED = 6
EXIT_TIMEOUT = 7
EXIT_UNAVAILABLE = 8


WORKER_HELP = """Runs the lab's own Python tasks on a Celery worker wired to the service.

Settings come from a worker bundle (--bundle DIR, made by ops/worker-bundle --python) or the
environment, with the names of the service's worker.env: BROKER_URL BROKER_USERNAME
BROKER_PASSWORD BROKER_TLS_CA_FILE BROKER_TLS_CERT_FILE BROKER_TLS_KEY_FILE TASK_QUEUE_TYPE
MONGO_URI MONGO_USERNAME MONGO_PASSWORD MONGO_AUTH_SOURCE MONGO_TLS_CA_FILE
MONGO_TLS_CERT_KEY_FILE RESULT_DATABASE RESULT_COLLECTION WORKER_NODE_NAME WORKER_QUEUES
WORKER_CONCURRENCY WORKER_PREFETCH_MULTIPLIER WORKER_TRACK_STARTED LOG_LEVEL. The environment
wins over the bundle's file, and the options below over both.

Tasks are declared with Celery's @shared_task. The worker acknowledges a message after its task
ran, takes one message per process at a time, sends task events, answers the service's catalog
with each task's docstring and signature, and skips tasks the service marked REVOKED.

Exit codes: 0 stopped; 2 wrong usage, bad settings or a task module that does not import;
8 (--check) the broker or the result store did not answer.
"""


class UsageError(Exception):
    pass


def exit_code_for(error: BaseException) -> int:
    """The exit code for an error that ended a command."""
    for cls, code in (
        (InsertError, EXIT_PARTIAL),
        (TaskFailed, EXIT_TASK_FAILED),
        (TaskTimeout, EXIT_TIMEOUT),
        (AuthenticationFailed, EXIT_AUTH),
        (PermissionDenied, EXIT_AUTH),
        (NotFound, EXIT_NOT_FOUND),
        (ServiceUnavailable, EXIT_UNAVAILABLE),
        (Throttled, EXIT_UNAVAILABLE),
        (httpx.TransportError, EXIT_UNAVAILABLE),
        (UsageError, EXIT_USAGE),
        (CybercomError, EXIT_REFUSED),
    ):
        if isinstance(error, cls):
            return code
    return EXIT_REFUSED


def _client(args: argparse.Namespace) -> Client:
    verify: bool | str = not args.insecure
    return Client(args.url, token=args.token, ca_bundle=args.ca_bundle, verify=verify)


def _area(client: Client, args: argparse.Namespace) -> Area:
    return client.catalog if args.catalog else client.data_store


def _json_arg(text: Optional[str], what: str) -> Any:
    if text is None:
        return None
    try:
        return ejson.decode(orjson.loads(text), typed=False)
    except orjson.JSONDecodeError as exc:
        raise UsageError(f"{what} is not valid JSON: {exc}") from exc


def _query(args: argparse.Namespace) -> dict[str, Any]:
    """``--query`` as a filter, or as ``{"filter", "projection", "sort"}`` like the API's parameter."""
    query = _json_arg(args.query, "--query") or {}
    if not isinstance(query, dict):
        raise UsageError("--query must be a JSON object")
    if set(query) and set(query) <= {"filter", "projection", "sort"}:
        return {
            "filter": query.get("filter"),
            "projection": query.get("projection"),
            "sort": query.get("sort"),
        }
    return {"filter": query or None, "projection": None, "sort": None}


def _open_out(path: Optional[str]) -> IO[bytes]:
    return open(path, "wb") if path and path != "-" else sys.stdout.buffer


# ---- commands ------------------------------------------------------------------------------
def _token_of(profile: dict[str, Any]) -> Optional[str]:
    """The API key a profile answer shows (only the answer that creates or rotates it has one)."""
    key = (profile.get("authentication") or {}).get("auth-token")
    return str(key) if key else None


def cmd_login(args: argparse.Namespace) -> int:
    url = args.url or os.environ.get("CYBERCOM_URL") or input("Service URL: ").strip()
    token = args.token
    if token is None:
        username = args.username or input("Username: ").strip()
        password = os.environ.get("CYBERCOM_PASSWORD") or getpass.getpass("Password: ")
        with Client(
            url, username=username, password=password, ca_bundle=args.ca_bundle, verify=not args.insecure
        ) as c:
            token = _token_of(c.user())
            if not token and args.rotate:
                token = _token_of(c._session.json("POST", "/api/user/", json={"auth-token": "update"}))
            if not token:
                raise UsageError(
                    "your API token exists already and is shown only once; pass it with --token, "
                    "or --rotate to replace it (the old key stops working)"
                )
    with Client(url, token=token, ca_bundle=args.ca_bundle, verify=not args.insecure) as c:
        profile = c.user()
    values: dict[str, Any] = {"url": url.rstrip("/"), "token": token}
    if args.ca_bundle:
        values["ca_bundle"] = str(Path(args.ca_bundle).resolve())
    path = save_config(values)
    print(f"Signed in to {url} as {profile.get('username')}; saved to {path} (mode 0600).")
    return EXIT_OK


def cmd_ls(args: argparse.Namespace) -> int:
    with _client(args) as client:
        area = _area(client, args)
        if args.database is None:
            names = area.databases()
        elif args.collection is None:
            names = area[args.database].collections()
        else:
            col = area[args.database][args.collection]
            print(f"{col.count()} records")
            return EXIT_OK
        for name in names:
            print(name)
    return EXIT_OK


def _write(records: Iterator[dict[str, Any]], fmt: str, out: IO[bytes], fields: Optional[list[str]]) -> int:
    if fmt == "csv":
        text = records_io.text_stream(out)
        try:
            return records_io.write_csv(records, text, fields)
        finally:
            text.detach()
    if fmt == "ndjson":
        return records_io.write_ndjson(records, out)
    return records_io.write_json(records, out)


def cmd_query(args: argparse.Namespace) -> int:
    q = _query(args)
    with _client(args) as client:
        col = _area(client, args)[args.database][args.collection]
        cursor = col.find(q["filter"], q["projection"], q["sort"], limit=args.limit, typed=False)
        out = _open_out(args.output)
        try:
            count = _write(iter(cursor), args.format, out, args.fields.split(",") if args.fields else None)
        finally:
            out.flush()
            if out is not sys.stdout.buffer:
                out.close()
    print(f"{count} records", file=sys.stderr)
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    q = _query(args)
    fields = args.fields.split(",") if args.fields else None
    with _client(args) as client:
        col = _area(client, args)[args.database][args.collection]
        out = _open_out(args.output)
        try:
            try:
                size = col.export(out, args.format, fields=fields, **q)
                print(f"{size} bytes written", file=sys.stderr)
            except CybercomError as exc:
                if exc.code != "invalid_format":
                    raise
                # A server without CSV/NDJSON exports: the client writes the format itself.
                count = _write(
                    iter(col.find(q["filter"], q["projection"], q["sort"], typed=False)),
                    args.format,
                    out,
                    fields,
                )
                print(f"{count} records written", file=sys.stderr)
        finally:
            out.flush()
            if out is not sys.stdout.buffer:
                out.close()
    return EXIT_OK


def _already_written(col: Collection, report: dict[str, Any]) -> int:
    """Records of the file written by the run that left ``report``: its prefix, plus those of its
    unconfirmed ids that the service now has (an ordered insert writes a prefix)."""
    unconfirmed = [ejson.decode(i, typed=False) for i in report.get("unconfirmed_ids") or []]
    return int(report["failed_index"]) + col.present_prefix(unconfirmed)


def cmd_import(args: argparse.Namespace) -> int:
    fmt = args.format or records_io.detect_format(args.file)
    report_path = Path(args.report or f"{args.file}.import-report.json")
    # The whole file is read once before anything is sent: it decides the columns' types, and a
    # value that does not fit the type asked for stops the import with nothing written.
    source = records_io.TypedFile(
        args.file, fmt, ImportTypes.from_options(args.parse_dates, args.dtype or [])
    )
    plan = source.plan()
    if plan.auto_dates:
        print(f"read as dates: {', '.join(plan.auto_dates)} (--parse-dates none keeps text)", file=sys.stderr)
    with _client(args) as client:
        col = _area(client, args)[args.database][args.collection]
        if args.create:
            col.database.create_collection(col.name, exist_ok=True)
        skip = 0
        if args.resume:
            previous = orjson.loads(Path(args.resume).read_bytes())
            if previous.get("source") not in (None, str(Path(args.file).resolve())):
                raise UsageError(f"{args.resume} is the report of another file ({previous.get('source')})")
            skip = _already_written(col, previous)
            print(f"resuming: skipping the {skip} records written before", file=sys.stderr)
        records = iter(source)
        for _ in range(skip):
            next(records, None)
        try:
            ids = col.insert(
                records,
                chunk_size=args.chunk_size,
                progress=not args.quiet,
                total=max(0, plan.records - skip),
            )
        except InsertError as exc:
            report = {"source": str(Path(args.file).resolve()), **exc.report()}
            report["failed_index"] = skip + exc.failed_index
            report_path.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2))
            print(
                f"import stopped: {skip + len(exc.inserted_ids)} records of {args.file} are in "
                f"{args.database}.{args.collection}; {exc.cause}\n"
                f"report: {report_path} (re-run with --resume {report_path} to continue)",
                file=sys.stderr,
            )
            return EXIT_PARTIAL
    print(f"{len(ids)} records imported into {args.database}.{args.collection}", file=sys.stderr)
    return EXIT_OK


def _task_args(values: Sequence[str]) -> list[Any]:
    """Each argument as JSON when it parses (``2``, ``[1,2]``, ``"x"``), else as a string."""
    parsed: list[Any] = []
    for value in values:
        try:
            parsed.append(orjson.loads(value))
        except orjson.JSONDecodeError:
            parsed.append(value)
    return parsed


def cmd_submit(args: argparse.Namespace) -> int:
    kwargs = _json_arg(args.kwargs, "--kwargs") or {}
    if not isinstance(kwargs, dict):
        raise UsageError("--kwargs must be a JSON object")
    with _client(args) as client:
        run = client.tasks.submit(
            args.task,
            *_task_args(args.args),
            queue=args.queue,
            tags=args.tag or None,
            wait=min(args.wait, 30.0) if args.wait else None,
            task_kwargs=kwargs,
        )
        if args.wait is None:
            print(orjson.dumps({"task_id": run.id, "status": run.state}).decode())
            return EXIT_OK
        try:
            result = run.result(timeout=args.wait)
        except TaskFailed as exc:
            print(f"{exc}\n{exc.traceback or ''}", file=sys.stderr)
            print(orjson.dumps({"task_id": run.id, "status": run.state, "error": exc.detail}).decode())
            return EXIT_TASK_FAILED
        print(orjson.dumps({"task_id": run.id, "status": run.state, "result": result}).decode())
    return EXIT_OK


def cmd_tasks(args: argparse.Namespace) -> int:
    with _client(args) as client:
        tasks = client.tasks.catalog(refresh=args.refresh)
    if args.json:
        print(orjson.dumps([t.__dict__ for t in tasks]).decode())
    elif not tasks:
        print("No worker is running: no task can be submitted right now.", file=sys.stderr)
    for task in tasks if not args.json else []:
        print(f"{task.help()}\n    queues: {', '.join(task.queues)}")
    return EXIT_OK


def cmd_history(args: argparse.Namespace) -> int:
    with _client(args) as client:
        for n, run in enumerate(client.tasks.history(status=args.status, task=args.task, tag=args.tag)):
            if args.limit is not None and n >= args.limit:
                break
            tags = ",".join(run.info.get("tags") or [])
            print(f"{run.info.get('timestamp', '')}  {run.state:<8}  {run.name}  {run.id}  {tags}")
    return EXIT_OK


def _schedule_options(args: argparse.Namespace) -> dict[str, Any]:
    timings = [t for t in (args.cron, args.every, args.solar, args.at) if t is not None]
    if len(timings) != 1:
        raise UsageError("give exactly one of --cron, --every, --solar, --at")
    options: dict[str, Any] = {}
    if args.cron is not None:
        options["cron"] = args.cron
        options["tz"] = args.tz
    if args.every is not None:
        options["every"] = args.every
    if args.solar is not None:
        parts = args.solar.split(":")
        if len(parts) != 3:
            raise UsageError("--solar is EVENT:LATITUDE:LONGITUDE, e.g. sunrise:46.8:-89.5")
        try:
            options["solar"] = (parts[0], float(parts[1]), float(parts[2]))
        except ValueError as exc:
            raise UsageError(f"--solar: {exc}") from exc
    if args.at is not None:
        options["at"] = args.at
    kwargs = _json_arg(args.kwargs, "--kwargs")
    if kwargs is not None and not isinstance(kwargs, dict):
        raise UsageError("--kwargs must be a JSON object")
    extra = {
        "args": _task_args(args.args) if args.args else None,
        "kwargs": kwargs,
        "queue": args.queue,
        "overlap": args.overlap,
        "catch_up_window": args.catch_up_window,
        "jitter": args.jitter,
        "max_runs": args.max_runs,
        "expires": args.expires,
        "note": args.note,
        "paused": True if args.paused else None,
    }
    return {**options, **{k: v for k, v in extra.items() if v is not None}}


def cmd_schedule(args: argparse.Namespace) -> int:
    action = args.action
    with _client(args) as client:
        schedules = client.schedules
        if action == "add":
            made = schedules.create(args.name, args.task, **_schedule_options(args))
            for warning in made.info.get("warnings") or []:
                print(f"warning: {warning}", file=sys.stderr)
            print(orjson.dumps(made.info).decode())
        elif action == "ls":
            rows = schedules.list()
            if args.json:
                print(orjson.dumps([s.info for s in rows]).decode())
            for s in rows if not args.json else []:
                state = "paused" if s.paused else (s.next_fire_at or "finished")
                print(f"{s.name}  {s.task}  {s.timing}  next: {state}  last: {s.last_outcome or '-'}")
        elif action == "pause":
            print(orjson.dumps(schedules.pause(args.name, note=args.note).info).decode())
        elif action == "resume":
            print(orjson.dumps(schedules.resume(args.name).info).decode())
        elif action == "rm":
            schedules.delete(args.name)
        elif action == "next":
            for t in schedules.next(args.name, args.count):
                print(t.isoformat())
        elif action == "import":
            beat, tz = _load_beat(args.app)
            for imported in schedules.import_beat(beat, tz=args.tz or tz, replace=args.replace):
                print(f"{imported.name}  {imported.task}  {imported.timing}")
    return EXIT_OK


def _load_beat(spec: str) -> tuple[dict[str, Any], str]:
    """``module:attribute`` (a Celery app, or a beat_schedule dict), imported from the working
    directory; answers the schedule and the app's time zone (UTC when it has none)."""
    import importlib

    module_name, _, attribute = spec.partition(":")
    sys.path.insert(0, os.getcwd())
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(f"cannot import {module_name}: {exc}") from exc
    for part in (attribute or "app").split("."):
        if not hasattr(target, part):
            raise UsageError(f"{module_name} has no {attribute or 'app'}")
        target = getattr(target, part)
    conf = getattr(target, "conf", None)
    if conf is not None:
        return dict(conf.beat_schedule or {}), str(conf.timezone or "UTC")
    if isinstance(target, dict):
        return target, "UTC"
    raise UsageError(f"{spec} is neither a Celery app nor a beat_schedule dict")


def _worker_overrides(args: argparse.Namespace) -> dict[str, str]:
    """The command line's settings, by the environment variable each one replaces."""
    overrides = {
        "WORKER_QUEUES": args.queues,
        "WORKER_NODE_NAME": args.node_name,
        "WORKER_CONCURRENCY": None if args.concurrency is None else str(args.concurrency),
        "LOG_LEVEL": args.loglevel,
    }
    return {k: v for k, v in overrides.items() if v is not None}


def cmd_worker(args: argparse.Namespace) -> int:
    try:
        from . import worker as lab_worker
        from .worker_settings import load_settings
    except ImportError as exc:
        raise UsageError(
            f"cybercom worker needs Celery and pymongo: pip install 'cybercom[celery]' ({exc})"
        ) from exc
    for variable in ("CELERY_BROKER_URL", "CELERY_RESULT_BACKEND"):
        # Celery lets these replace the configured broker and backend; the worker's come from
        # BROKER_URL and MONGO_URI (or the bundle) only.
        if os.environ.pop(variable, None) is not None:
            print(f"cybercom worker: ignoring {variable}", file=sys.stderr)
    bundle = Path(args.bundle) if args.bundle else None
    settings = load_settings({**os.environ, **_worker_overrides(args)}, bundle)
    folders = [Path(f) for f in args.tasks_dir or []]
    if not args.modules and not folders and settings.tasks_dir is not None:
        folders = [settings.tasks_dir]
    if not args.modules and not folders:
        raise UsageError("name the lab's task modules: -A MODULE (repeatable) or --tasks-dir DIR")
    app = lab_worker.create_app(settings)
    try:
        tasks = lab_worker.load_tasks(app, args.modules or [], folders)
    except lab_worker.TaskLoadError as exc:
        raise UsageError(str(exc)) from exc
    if not tasks:
        where = ", ".join([*(args.modules or []), *(str(f) for f in folders)])
        raise UsageError(
            f"no tasks in {where}: declare them with @shared_task (from celery import shared_task)"
        )
    print(lab_worker.describe(settings, tasks), flush=True)
    if args.check:
        check = lab_worker.check_connections(app)
        print(f"  broker:         {'reachable' if check.broker is None else check.broker}")
        print(f"  result backend: {'reachable' if check.results is None else check.results}")
        return EXIT_OK if check.ok else EXIT_UNAVAILABLE
    return lab_worker.run(
        app,
        settings,
        pool=args.pool,
        without_mingle=args.without_mingle,
        without_gossip=args.without_gossip,
    )


# ---- parser --------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    conn = common.add_argument_group(
        "connection (default: CYBERCOM_URL / CYBERCOM_TOKEN, then `cybercom login`)"
    )
    conn.add_argument("--url", help="the service's base URL, e.g. https://cybercom.example.org")
    conn.add_argument("--token", help="an API token")
    conn.add_argument("--ca-bundle", help="CA certificate file of a self-signed installation")
    conn.add_argument("--insecure", action="store_true", help="do not verify TLS certificates")

    parser = argparse.ArgumentParser(
        prog="cybercom",
        description="Command line for a cybercom service: data store, catalog and task queue.",
        epilog=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"cybercom {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, help: str, fn: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=help, parents=[common])
        p.set_defaults(fn=fn)
        return p

    def area_flag(p: argparse.ArgumentParser) -> None:
        p.add_argument("--catalog", action="store_true", help="the catalog instead of the data store")

    p = add("login", f"sign in and store the URL and API token in {config_path()} (mode 0600)", cmd_login)
    p.add_argument("--username", help="sign in with this user (the password is asked, or CYBERCOM_PASSWORD)")
    p.add_argument("--rotate", action="store_true", help="replace an API token that exists already")

    p = add("ls", "list databases, a database's collections, or count a collection's records", cmd_ls)
    p.add_argument("database", nargs="?")
    p.add_argument("collection", nargs="?")
    area_flag(p)

    def query_args(p: argparse.ArgumentParser, default_format: str) -> None:
        p.add_argument("database")
        p.add_argument("collection")
        p.add_argument(
            "--query", "-q", help='a filter {"elev": {"$gt": 300}} or {"filter", "projection", "sort"}'
        )
        p.add_argument("--format", "-f", choices=("csv", "ndjson", "json"), default=default_format)
        p.add_argument("--fields", help="CSV columns, in order: a,b.c")
        p.add_argument("--output", "-o", help="file to write (default: standard output)")
        area_flag(p)

    p = add("query", "print the records matching a query", cmd_query)
    query_args(p, "ndjson")
    p.add_argument("--limit", type=int, help="at most this many records")

    p = add("export", "download a whole collection (or a query's result) as a file", cmd_export)
    query_args(p, "csv")

    p = add("import", "insert the records of a JSON, NDJSON, CSV or GeoJSON file", cmd_import)
    p.add_argument("database")
    p.add_argument("collection")
    p.add_argument("file")
    p.add_argument("--format", "-f", choices=records_io.FILE_FORMATS, help="default: from the file name")
    p.add_argument(
        "--chunk-size",
        type=int,
        default=INSERT_CHUNK_RECORDS,
        help=f"at most this many records per request (default {INSERT_CHUNK_RECORDS}; "
        "a request also stays under about 4 MB)",
    )
    p.add_argument(
        "--parse-dates",
        default="auto",
        metavar="auto|none|COL,...",
        help="which columns to store as dates: auto (default) those whose every value is an ISO 8601 "
        "date or date and time, as the exports write them; none; or the columns named",
    )
    p.add_argument(
        "--dtype",
        action="append",
        metavar="COL=TYPE",
        help=f"store a column (a dotted path: loc.lat) as TYPE, one of {', '.join(DTYPES)} "
        "(repeatable; e.g. --dtype zip=str)",
    )
    p.add_argument("--create", action="store_true", help="create the collection when it does not exist")
    p.add_argument(
        "--report", help="where to write the report when the import stops (default FILE.import-report.json)"
    )
    p.add_argument("--resume", metavar="REPORT", help="skip the records a stopped import wrote (its report)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    area_flag(p)

    p = add("submit", "submit a task (arguments are JSON when they parse, else strings)", cmd_submit)
    p.add_argument("task")
    p.add_argument("args", nargs="*")
    p.add_argument("--kwargs", help="keyword arguments as a JSON object")
    p.add_argument("--queue")
    p.add_argument("--tag", action="append", help="a tag (repeatable)")
    p.add_argument(
        "--wait",
        type=float,
        nargs="?",
        const=60.0,
        help="wait for the result (seconds, default 60) and print it",
    )

    p = add("tasks", "list the tasks live workers offer, with their signatures and docs", cmd_tasks)
    p.add_argument("--refresh", action="store_true", help="ask the workers anew (task admins)")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = add("history", "your task runs, newest first", cmd_history)
    p.add_argument("--status", help="SUCCESS, FAILURE, PENDING, ...")
    p.add_argument("--task", help="task names, comma-separated")
    p.add_argument("--tag")
    p.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")

    schedule_help = "manage schedules: add, ls, pause, resume, rm, next, import (a Celery beat_schedule)"
    p = sub.add_parser("schedule", help=schedule_help, description=schedule_help)
    p.set_defaults(fn=cmd_schedule)
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")

    def action(name: str, help: str) -> argparse.ArgumentParser:
        return actions.add_parser(name, help=help, description=help, parents=[common])

    a = action("add", "create a schedule (exactly one of --cron, --every, --solar, --at)")
    a.add_argument("name")
    a.add_argument("task")
    a.add_argument("args", nargs="*", help="the task's arguments (JSON when they parse, else strings)")
    a.add_argument("--cron", help='five cron fields, e.g. "0 2 * * *"')
    a.add_argument("--tz", help="the crontab's IANA time zone (default UTC)")
    a.add_argument("--every", help="an interval: seconds, or like 15m, 2h, 1d")
    a.add_argument("--solar", help="EVENT:LATITUDE:LONGITUDE (sunrise, sunset, dawn, dusk, solar_noon)")
    a.add_argument("--at", help="one run at this ISO 8601 time (with its offset)")
    a.add_argument("--kwargs", help="keyword arguments as a JSON object")
    a.add_argument("--queue")
    a.add_argument("--overlap", choices=("allow", "skip", "buffer_one", "cancel_previous"))
    a.add_argument("--catch-up-window", type=float, help="seconds: fires missed within it run once, late")
    a.add_argument("--jitter", type=float, help="seconds of random delay added to each fire")
    a.add_argument("--max-runs", type=int)
    a.add_argument("--expires", type=float, help="seconds each fired task may wait in the queue")
    a.add_argument("--paused", action="store_true", help="create it paused")
    a.add_argument("--note")
    a = action("ls", "list your schedules (task admins: everyone's)")
    a.add_argument("--json", action="store_true", help="print JSON")
    a = action("pause", "pause a schedule")
    a.add_argument("name")
    a.add_argument("--note", help="why")
    a = action("resume", "resume a paused schedule")
    a.add_argument("name")
    a = action("rm", "delete a schedule and its run log")
    a.add_argument("name")
    a = action("next", "print the next fire times")
    a.add_argument("name")
    a.add_argument("-n", "--count", type=int, default=10)
    a = action("import", "create schedules from a Celery app's beat_schedule (module:app)")
    a.add_argument("app", help="module:attribute, e.g. proj.celery:app (imported from the working directory)")
    a.add_argument("--tz", help="the crontabs' time zone (default: the app's timezone setting, else UTC)")
    a.add_argument("--replace", action="store_true", help="replace schedules of the same names")

    p = sub.add_parser(
        "worker",
        help="run the lab's own Python tasks: a Celery worker wired to the service (needs [celery])",
        description=WORKER_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.set_defaults(fn=cmd_worker)
    p.add_argument("--bundle", metavar="DIR", help="a worker bundle: its worker.env, certs/ and tasks/")
    p.add_argument(
        "-A", "--app", dest="modules", action="append", metavar="MODULE", help="a task module (repeatable)"
    )
    p.add_argument(
        "--tasks-dir", action="append", metavar="DIR", help="load every module in DIR (repeatable)"
    )
    p.add_argument("-Q", "--queues", help="comma-separated queues to consume (WORKER_QUEUES; default python)")
    p.add_argument("-n", "--node-name", help="node name, name@host (WORKER_NODE_NAME)")
    p.add_argument(
        "-c", "--concurrency", type=int, help="worker processes (WORKER_CONCURRENCY; default: CPUs)"
    )
    p.add_argument("-l", "--loglevel", help="error, warn, info or debug (LOG_LEVEL; default info)")
    p.add_argument("-P", "--pool", help="Celery pool: prefork (default), solo or threads")
    p.add_argument("--without-mingle", action="store_true", help="do not sync with other workers at start")
    p.add_argument("--without-gossip", action="store_true", help="do not follow other workers' events")
    p.add_argument(
        "--check",
        action="store_true",
        help="load the tasks, show the settings, connect once to the broker and the result store, and exit",
    )
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code: int = args.fn(args)
        return code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (CybercomError, httpx.TransportError, UsageError, ValueError, OSError) as exc:
        print(f"cybercom {args.command}: {exc}", file=sys.stderr)
        return exit_code_for(exc) if not isinstance(exc, (ValueError, OSError)) else EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
