"""Interactive latency: submit -> COMPLETED through the HTTP API with a warm worker.

Run: ``make bench-latency`` (``.venv/bin/python -m bench.latency [--runs N]``), under the shared
lock on a shared machine. The real API (uvicorn, in a process of its own) and a worker with
its SparkSession (``local[2]``) built once in the bench's process, on real PostgreSQL and Redis
(``JETSPARK_DATABASE_URL`` / ``JETSPARK_REDIS_URL``, else the embedded servers), like
``jetspark up`` with one worker.

Workloads: ``tiny`` (source.items of 10 -> map -> sink.results), ``wordcount`` (1k lines,
two-stage aggregate), ``join`` (hash_join of 1k dims x 10k facts). Each is submitted
``--runs`` times one after another (after 3 warm-up runs); a run's latency is from the POST to
the client seeing COMPLETED (long-poll ``?wait_s`` with ``If-None-Match``), the API under uvicorn
in a process of its own as ``jetspark up`` runs it (``--api-in-process``: in the bench's own
interpreter, beside the worker), each phase's median printed from the jobs' ``timings``
(``posted->queued``, ``queued->claimed``, ... ``finished->seen``). Against: the same
work hand-written in PySpark in the worker's warm session (``warm``), and one cold
``spark-submit`` of the tiny work (``cold``).

Then jobs/s as users would see it: ``jetspark up`` (``bench.stack``: the API, one worker and
its Spark JVM, PostgreSQL and Redis each in their own processes) with ``max_concurrent_jobs``
2 and 4; after ``--throughput-warmup`` tiny jobs (the JVM's JIT settles), ``--throughput-jobs``
tiny jobs from 1, 4 and 16 concurrent clients, each client one job after another. With each
rate, the CPU milliseconds one job cost in each part of the stack: on a machine of C cores, N
clients can reach at most C / (CPU per job) jobs/s, whatever the server does. Against that,
the same tiny work hand-written, from 1, 4 and 16 threads in the warm session: the rate 16
clients can reach over one's when nothing but Spark's own cost of a job is paid.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

import httpx
import redis
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from sqlalchemy.orm import sessionmaker

from api.app import create_app
from bench.processes import uvicorn_server
from bench.stack import APP_FACTORY, UNLIMITED, running_stack
from bench.submit_latency import fresh_database, services
from jetspark.db.engine import make_engine
from jetspark.queue import stream
from jetspark.queue.keys import Keys
from jetspark.settings import ApiSettings, WorkerSettings
from jetspark.spark_session import build_spark_session
from tests.live_server import live_server
from worker.engine import run_job
from worker.loop import Worker

TOKEN = "bench-latency"
TERMINAL = {"COMPLETED", "FAILED", "CANCELLED"}


def tiny() -> dict[str, Any]:
    return {
        "name": "tiny",
        "dag": {
            "vertices": [
                {"name": "items", "processor": "source.items",
                 "params": {"items": [{"n": i} for i in range(10)]}},
                {"name": "double", "processor": "map", "params": {"select": {"n": "n * 2"}}},
                {"name": "out", "processor": "sink.results"},
            ],
            "edges": [{"from": "items", "to": "double"}, {"from": "double", "to": "out"}],
        },
        "config": {"members": 1, "local_parallelism": 1},
    }  # fmt: skip


LINES = [f"w{i % 97} w{i % 13} w{i % 7} w{i % 89} w{i % 5}" for i in range(1000)]
DIMS = [{"id": i, "name": f"d{i}"} for i in range(1000)]
FACTS = [{"dim_id": i % 1000, "v": i} for i in range(10_000)]


def wordcount() -> dict[str, Any]:
    return {
        "name": "wordcount",
        "dag": {
            "vertices": [
                {"name": "lines", "processor": "source.items",
                 "params": {"items": [{"line": line} for line in LINES]}},
                {"name": "tokenize", "processor": "flat_map",
                 "params": {"explode": "split(line, ' ')", "as": "word"}},
                {"name": "accumulate", "processor": "aggregate",
                 "params": {"key": "word", "aggregations": {"count": "count(*)"},
                            "stage": "accumulate"}},
                {"name": "combine", "processor": "aggregate",
                 "params": {"key": "key", "aggregations": {"count": "count(*)"},
                            "stage": "combine"}},
                {"name": "sink", "processor": "sink.results"},
            ],
            "edges": [
                {"from": "lines", "to": "tokenize"},
                {"from": "tokenize", "to": "accumulate", "routing": "partitioned", "key": "word"},
                {"from": "accumulate", "to": "combine", "routing": "partitioned", "key": "key",
                 "distributed": True},
                {"from": "combine", "to": "sink"},
            ],
        },
        "config": {"members": 1, "local_parallelism": 2},
    }  # fmt: skip


def join() -> dict[str, Any]:
    return {
        "name": "join",
        "dag": {
            "vertices": [
                {"name": "dims", "processor": "source.items", "params": {"items": DIMS}},
                {"name": "facts", "processor": "source.items", "params": {"items": FACTS}},
                {"name": "join", "processor": "hash_join",
                 "params": {"build_key": "id", "probe_key": "dim_id"}},
                {"name": "out", "processor": "sink.results"},
            ],
            "edges": [
                {"from": "dims", "to": "join", "to_ordinal": 0, "priority": 0,
                 "routing": "partitioned", "key": "id", "distributed": True},
                {"from": "facts", "to": "join", "to_ordinal": 1, "priority": 1,
                 "routing": "partitioned", "key": "dim_id", "distributed": True},
                {"from": "join", "to": "out"},
            ],
        },
        "config": {"members": 1, "local_parallelism": 2},
    }  # fmt: skip


def warm_tiny(spark: SparkSession) -> int:
    frame = spark.createDataFrame([(i,) for i in range(10)], "n long")
    return len(frame.select((F.col("n") * 2).alias("n")).collect())


def warm_wordcount(spark: SparkSession) -> int:
    lines = spark.createDataFrame([(line,) for line in LINES], "line string")
    words = lines.select(F.explode(F.split("line", " ")).alias("word"))
    return len(words.groupBy("word").count().collect())


def warm_join(spark: SparkSession) -> int:
    dims = spark.createDataFrame([(d["id"], d["name"]) for d in DIMS], "id long, name string")
    facts = spark.createDataFrame([(f["dim_id"], f["v"]) for f in FACTS], "dim_id long, v long")
    return len(facts.join(dims, facts.dim_id == dims.id).collect())


WORKLOADS: dict[str, tuple[Callable[[], dict[str, Any]], Callable[[SparkSession], int]]] = {
    "tiny": (tiny, warm_tiny),
    "wordcount": (wordcount, warm_wordcount),
    "join": (join, warm_join),
}

COLD = """
import sys, time
from pyspark.sql import SparkSession, functions as F
spark = SparkSession.builder.master("local[2]").appName("cold").getOrCreate()
frame = spark.createDataFrame([(i,) for i in range(10)], "n long")
frame.select((F.col("n") * 2).alias("n")).collect()
spark.stop()
"""


def percentiles(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return {
        "p50": statistics.median(ordered),
        "p90": at(0.90),
        "p99": at(0.99),
        "max": ordered[-1],
    }


def run_once(http: httpx.Client, body: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    """Submit ``body`` and follow it to its end; seconds from POST to COMPLETED, and its view
    (with ``posted_at`` and ``seen_at``: the client's clock when it posted and saw the end)."""
    posted_at = datetime.now(UTC)
    started = time.perf_counter()
    response = http.post("/v1/jobs", json=body)
    response.raise_for_status()
    view: dict[str, Any] = response.json()
    etag = response.headers["ETag"]
    while view["status"] not in TERMINAL:
        got = http.get(
            f"/v1/jobs/{view['id']}", params={"wait_s": 30}, headers={"If-None-Match": etag}
        )
        if got.status_code == 200:
            view, etag = got.json(), got.headers["ETag"]
    seconds = time.perf_counter() - started
    if view["status"] != "COMPLETED":
        raise RuntimeError(f"job {view['id']} ended {view['status']}: {view.get('error')}")
    return seconds, {**view, "posted_at": posted_at, "seen_at": datetime.now(UTC)}


PHASE_STAMPS = ("queued", "claimed", "running", "planned", "computed", "results_written")
"""The stamps of a batch job's ``timings``, in order (``worker/timings.py``)."""


def phases(view: dict[str, Any]) -> dict[str, float]:
    """Milliseconds between a run's consecutive stamps: the POST, the worker's stamps, the
    end written (``finished``) and the client seeing it. Clocks are one machine's."""
    timings: dict[str, Any] = view.get("timings") or {}
    spark_jobs: list[dict[str, Any]] = timings.get("spark_jobs") or []
    stamps: list[tuple[str, datetime]] = [("posted", view["posted_at"])]
    for name in PHASE_STAMPS:
        if isinstance(timings.get(name), str):
            stamps.append((name, datetime.fromisoformat(timings[name])))
        if name == "planned" and spark_jobs and isinstance(spark_jobs[0].get("submitted"), str):
            stamps.append(("spark_job", datetime.fromisoformat(spark_jobs[0]["submitted"])))
    if isinstance(view.get("finished_at"), str):
        stamps.append(("finished", datetime.fromisoformat(view["finished_at"])))
    stamps.append(("seen", view["seen_at"]))
    return {f"{a}->{b}": (tb - ta).total_seconds() * 1000
            for (a, ta), (b, tb) in pairwise(stamps)}  # fmt: skip


def phase_medians(views: list[dict[str, Any]]) -> dict[str, float]:
    """Each phase's median over ``views``, in milliseconds."""
    by_phase: dict[str, list[float]] = {}
    for view in views:
        for name, ms in phases(view).items():
            by_phase.setdefault(name, []).append(ms)
    return {name: round(statistics.median(values), 1) for name, values in by_phase.items()}


def cold_submit() -> float:
    script = Path(tempfile.gettempdir()) / "jetspark-bench-cold.py"
    script.write_text(COLD)
    submit = Path(sys.executable).parent / "spark-submit"
    started = time.perf_counter()
    subprocess.run(
        [str(submit), "--master", "local[2]", str(script)],
        check=True,
        capture_output=True,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable},
    )
    return time.perf_counter() - started


@contextmanager
def warm_worker(
    spark: SparkSession, database: str, redis_url: str, namespace: str, max_jobs: int
) -> Iterator[Worker]:
    engine = make_engine(database, pool_size=max_jobs + 4)
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    keys = Keys(namespace)
    stream.ensure_group(client, keys)
    worker = Worker(
        spark=spark,
        sessions=sessionmaker(engine, expire_on_commit=False),
        client=client,
        keys=keys,
        engine_run=run_job,
        settings=WorkerSettings(max_concurrent_jobs=max_jobs),
    )
    thread = threading.Thread(target=worker.run, name="bench-worker", daemon=True)
    thread.start()
    try:
        yield worker
    finally:
        worker.stop()
        thread.join(timeout=60)
        worker.stop_running_jobs()
        worker.close()  # its liveness thread ends before the services it beats to stop
        engine.dispose()


def throughput(url: str, token: str, clients: int, jobs: int) -> float:
    """Jobs/s: ``jobs`` tiny jobs submitted by ``clients`` clients, each one after another."""
    headers = {"Authorization": f"Bearer {token}"}

    def client_loop(count: int) -> None:
        with httpx.Client(base_url=url, headers=headers, timeout=120) as http:
            for _ in range(count):
                run_once(http, tiny())

    shares = [jobs // clients + (1 if i < jobs % clients else 0) for i in range(clients)]
    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        for future in [pool.submit(client_loop, n) for n in shares if n]:
            future.result()
    return jobs / (time.perf_counter() - started)


def hand_written_rates(spark: SparkSession, jobs: int) -> dict[str, float]:
    """Jobs/s of the tiny work hand-written in one warm session, from 1, 4 and 16 threads.

    The ceiling of any server driving Spark on these cores: the JVM's own cost of a job
    (planning, scheduling, a task) is what 16 clients share, so their rate over one client's
    is bounded here before any HTTP, PostgreSQL or Redis work is added."""
    rates: dict[str, float] = {}
    for clients in (1, 4, 16):
        shares = [jobs // clients + (1 if i < jobs % clients else 0) for i in range(clients)]
        started = time.perf_counter()
        with ThreadPoolExecutor(clients) as pool:
            done = [pool.submit(lambda n: [warm_tiny(spark) for _ in range(n)], n) for n in shares]
            for future in done:
                future.result()
        rates[f"clients={clients}"] = round(jobs / (time.perf_counter() - started), 2)
    rates["16_over_1"] = round(rates["clients=16"] / rates["clients=1"], 2)
    print("hand-written tiny jobs/s", json.dumps(rates), flush=True)
    return rates


def throughput_on_stack(jobs: int, warmup: int) -> dict[str, Any]:
    """Jobs/s and CPU ms per job by part, through ``jetspark up`` with one worker."""
    rates: dict[str, Any] = {}
    for max_jobs in (2, 4):
        env = {"JETSPARK_WORKER_MAX_CONCURRENT_JOBS": str(max_jobs)}
        with running_stack(workers=1, extra_env=env) as stack:
            stack.wait_workers_warm()
            throughput(stack.url, stack.token, 2, warmup)
            for clients in (1, 4, 16):
                before = stack.cpu_seconds_by_part()
                rate = throughput(stack.url, stack.token, clients, jobs)
                after = stack.cpu_seconds_by_part()
                cpu_ms = {
                    part: round((after[part] - before.get(part, 0.0)) / jobs * 1000, 1)
                    for part in after
                }
                cpu_ms["total"] = round(sum(cpu_ms.values()), 1)
                rates[f"max_jobs={max_jobs} clients={clients}"] = {
                    "jobs_per_s": round(rate, 2),
                    "cpu_ms_per_job": cpu_ms,
                }
                print(max_jobs, clients, f"{rate:.2f} jobs/s", json.dumps(cpu_ms), flush=True)
    return rates


@contextmanager
def api_process(database: str, redis_url: str, namespace: str) -> Iterator[str]:
    """The API under uvicorn in a process of its own, as ``jetspark up`` runs it: its work
    shares the machine's cores with the worker, not the worker's interpreter."""
    env = (
        os.environ
        | UNLIMITED
        | {
            "JETSPARK_DATABASE_URL": database,
            "JETSPARK_REDIS_URL": redis_url,
            "JETSPARK_REDIS_NAMESPACE": namespace,
            "JETSPARK_API_TOKENS": TOKEN,
            "JETSPARK_API_MAX_BODY_BYTES": str(4 * 1024 * 1024),
        }
    )
    with uvicorn_server(APP_FACTORY, env=env, factory=True, ready_path="/readyz") as served:
        yield served[0]


@contextmanager
def api_in_process(database: str, redis_url: str, namespace: str) -> Iterator[str]:
    """The API in the bench's own interpreter, beside the worker (the shape of earlier
    figures: every request's Python then waits for the worker's threads, and theirs for it)."""
    app = create_app(
        database_url=database,
        redis_url=redis_url,
        redis_namespace=namespace,
        api_settings=ApiSettings(tokens=[TOKEN], max_body_bytes=4 * 1024 * 1024),
    )
    with live_server(app) as url:
        yield url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--workloads", default="tiny,wordcount,join")
    parser.add_argument("--throughput-jobs", type=int, default=96)
    parser.add_argument("--throughput-warmup", type=int, default=60)
    parser.add_argument("--no-cold", action="store_true")
    parser.add_argument("--no-throughput", action="store_true")
    parser.add_argument(
        "--api-in-process", action="store_true", help="serve the API in the bench's interpreter"
    )
    args = parser.parse_args()
    report: dict[str, Any] = {"runs": args.runs}
    with (
        tempfile.TemporaryDirectory(prefix="jetspark-latency-") as home,
        services(Path(home)) as (server, redis_url),
    ):
        database = fresh_database(server)
        namespace = f"bench-latency-{uuid.uuid4().hex[:6]}"
        spark = build_spark_session(master="local[2]", app_name="jetspark-bench-latency")
        spark.sparkContext.setLogLevel("ERROR")
        headers = {"Authorization": f"Bearer {TOKEN}"}
        serve = api_in_process if args.api_in_process else api_process
        with (
            serve(database, redis_url, namespace) as url,
            httpx.Client(base_url=url, headers=headers, timeout=120) as http,
            warm_worker(spark, database, redis_url, namespace, 2),
        ):
            for name in args.workloads.split(","):
                make_body, hand = WORKLOADS[name]
                for _ in range(3):
                    run_once(http, make_body())
                    hand(spark)
                api, warm, slowest, views = [], [], None, []
                for _ in range(args.runs):
                    seconds, view = run_once(http, make_body())
                    api.append(seconds)
                    views.append(view)
                    if slowest is None or seconds > slowest[0]:
                        slowest = (seconds, view.get("timings"))
                    started = time.perf_counter()
                    hand(spark)
                    warm.append(time.perf_counter() - started)
                report[name] = {
                    "api": percentiles(api),
                    "hand_written_warm": percentiles(warm),
                    "ratio_p50": statistics.median(warm) / statistics.median(api),
                    "phase_p50_ms": phase_medians(views),
                    "slowest_timings": slowest[1] if slowest else None,
                }
                print(name, json.dumps(report[name]["api"]), flush=True)
                print(name, "phases p50 ms", json.dumps(report[name]["phase_p50_ms"]), flush=True)
            if not args.no_throughput:
                for _ in range(args.throughput_warmup):
                    warm_tiny(spark)
                report["hand_written_jobs_per_s"] = hand_written_rates(spark, args.throughput_jobs)
        spark.stop()
    if not args.no_throughput:
        report["jobs_per_s"] = throughput_on_stack(args.throughput_jobs, args.throughput_warmup)
    if not args.no_cold:
        report["cold_spark_submit_tiny_s"] = cold_submit()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
