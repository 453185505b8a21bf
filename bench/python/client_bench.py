"""One phase of the Python client benchmark (bench/python-client.bench.ts runs each in its own
process, so each phase's peak RSS is its own). Prints one JSON line with the phase's numbers.

Phases (RECORDS records of about 1 KB in BENCH_DB):
  insert-pymongo  pymongo insert_many straight into the database (the baseline)
  insert-client   Collection.insert through the API (chunked, ordered)
  find-pymongo    list(pymongo find) and pandas.DataFrame of it (the baselines)
  find-client     list(col.find({}))
  frame-client    col.find({}).to_dataframe()
  csv-pandas      pandas.read_csv of the collection's CSV export, with the token header
  submit-celery   Celery's own send_task(...).get() of a no-op task, ROUNDS times (the baseline)
  submit-client   client.tasks.submit(...).result(), ROUNDS times

Environment: CYBERCOM_URL CYBERCOM_TOKEN, the MONGO_* and BROKER_* settings the interop app reads
(test/support/celery/interop_app.py, on PYTHONPATH), BENCH_DB, RECORDS, ROUNDS, INTEROP_QUEUE.
BENCH_PY_PROFILE=<dir> profiles the phase's timed calls with cProfile, written there as
<phase>-<pid>-<n>.pstats (n: the phase's nth timed call).
"""

from __future__ import annotations

import json
import os
import resource
import ssl
import statistics
import sys
import time
from typing import Any, Callable


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def record(i: int) -> dict[str, Any]:
    return {
        "n": i,
        "site": f"site-{i % 97}",
        "value": i * 0.5,
        "flag": i % 2 == 0,
        "note": f"record {i}".ljust(960, "."),
    }


RECORDS = int(os.environ.get("RECORDS", "100000"))
ROUNDS = int(os.environ.get("ROUNDS", "50"))
DB = os.environ.get("BENCH_DB", "bench_client")
MONGO_BATCH = 25_000


def mongo_collection(name: str) -> Any:
    import pymongo

    client: Any = pymongo.MongoClient(
        os.environ["MONGO_URI"],
        username=os.environ.get("MONGO_USERNAME"),
        password=os.environ.get("MONGO_PASSWORD"),
        authSource=os.environ.get("MONGO_AUTH_SOURCE", "admin"),
        tls=True,
        tlsCAFile=os.environ["MONGO_TLS_CA_FILE"],
        tlsCertificateKeyFile=os.environ["MONGO_TLS_CERT_KEY_FILE"],
    )
    return client[DB][name]


def client_collection(name: str) -> Any:
    from cybercom import Client

    return Client().data_store[DB][name]


#: CPU seconds this process spent in the phase's timed calls (what the client side of it costs).
timed_cpu_seconds = 0.0


PROFILE_DIR = os.environ.get("BENCH_PY_PROFILE")
profiled_calls = 0


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    global timed_cpu_seconds, profiled_calls
    profiler = None
    if PROFILE_DIR:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    cpu = time.process_time()
    started = time.perf_counter()
    value = fn()
    elapsed = time.perf_counter() - started
    timed_cpu_seconds += time.process_time() - cpu
    if profiler is not None:
        profiler.disable()
        profiled_calls += 1
        os.makedirs(PROFILE_DIR, exist_ok=True)
        profiler.dump_stats(os.path.join(PROFILE_DIR, f"{sys.argv[1]}-{os.getpid()}-{profiled_calls}.pstats"))
    return elapsed, value


def main(phase: str) -> dict[str, Any]:
    out: dict[str, Any] = {"phase": phase}
    if phase == "insert-pymongo":
        col = mongo_collection("pymongo")
        col.drop()
        docs = [record(i) for i in range(RECORDS)]

        def insert_all() -> None:
            # FerretDB refuses write batches over 25,000 documents (MongoDB splits them itself), so
            # the baseline does what a pymongo user must: insert_many per slice of that size.
            for start in range(0, RECORDS, MONGO_BATCH):
                col.insert_many(docs[start : start + MONGO_BATCH], ordered=True)

        seconds, _ = timed(insert_all)
        out.update(seconds=seconds, rate=RECORDS / seconds)
    elif phase == "insert-client":
        # Into a new, empty collection, as the baseline's (a round may follow an earlier one).
        col = client_collection("client")
        if col.database.exists() and "client" in col.database.collections():
            col.drop()
        col.database.create_collection("client")
        docs = [record(i) for i in range(RECORDS)]
        seconds, ids = timed(lambda: col.insert(docs, progress=False))
        assert len(ids) == RECORDS, len(ids)
        out.update(seconds=seconds, rate=RECORDS / seconds)
    elif phase == "find-pymongo":
        col = mongo_collection("client")
        seconds, rows = timed(lambda: list(col.find({})))
        assert len(rows) == RECORDS, len(rows)
        out.update(seconds=seconds, rate=RECORDS / seconds)
        import pandas

        frame_seconds, frame = timed(lambda: pandas.DataFrame(list(col.find({}))))
        assert len(frame) == RECORDS
        out.update(frame_seconds=frame_seconds)
    elif phase == "find-client":
        col = client_collection("client")
        seconds, rows = timed(lambda: list(col.find({})))
        assert len(rows) == RECORDS, len(rows)
        out.update(seconds=seconds, rate=RECORDS / seconds)
    elif phase == "frame-client":
        # pandas imported before the clock starts, as the baseline's is (find-pymongo): its import
        # (about 0.3 s of CPU) is paid once per process, by either, and is not the read's cost.
        import pandas

        col = client_collection("client")
        seconds, frame = timed(lambda: col.find({}).to_dataframe())
        assert len(frame) == RECORDS, len(frame)
        out.update(seconds=seconds)
    elif phase == "csv-pandas":
        import pandas

        url = f"{os.environ['CYBERCOM_URL']}/api/data_store/data/{DB}/client/?format=csv"
        headers = {"Authorization": f"Token {os.environ['CYBERCOM_TOKEN']}"}
        seconds, frame = timed(lambda: pandas.read_csv(url, storage_options=headers))
        assert len(frame) == RECORDS, len(frame)
        out.update(seconds=seconds)
    elif phase == "submit-celery":
        from interop_app import app, queue

        latencies = []
        app.send_task("tasks.noop", queue=queue).get(timeout=60)  # warm-up: connections
        for _ in range(ROUNDS):
            seconds, _ = timed(
                lambda: app.send_task("tasks.noop", queue=queue).get(timeout=60, interval=0.05)
            )
            latencies.append(seconds)
        out.update(p50_ms=statistics.median(latencies) * 1000)
    elif phase == "submit-client":
        from cybercom import Client

        tasks = Client().tasks
        queue = os.environ["INTEROP_QUEUE"]
        tasks.submit("tasks.noop", queue=queue).result(timeout=60)
        latencies = []
        for _ in range(ROUNDS):
            seconds, _ = timed(lambda: tasks.submit("tasks.noop", queue=queue).result(timeout=60))
            latencies.append(seconds)
        out.update(p50_ms=statistics.median(latencies) * 1000)
    else:
        raise SystemExit(f"unknown phase {phase}")
    out["peak_rss_mb"] = peak_rss_mb()
    out.update(cpu_seconds=timed_cpu_seconds)
    return out


if __name__ == "__main__":
    ssl.create_default_context()  # fail early on a broken TLS stack
    print(json.dumps(main(sys.argv[1])), flush=True)
