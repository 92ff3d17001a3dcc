"""Interactive latency: submit -> COMPLETED through the HTTP API with a warm worker.

Run: ``make bench-latency`` (``.venv/bin/python -m bench.latency [--runs N]``), under the shared
lock on a shared machine. One process serves the real API (uvicorn) and runs a worker with its
SparkSession (``local[2]``) built once, on real PostgreSQL and Redis (``JETSPARK_DATABASE_URL``
/ ``JETSPARK_REDIS_URL``, else the embedded servers), like ``jetspark up`` with one worker.

Workloads: ``tiny`` (source.items of 10 -> map -> sink.results), ``wordcount`` (1k lines,
two-stage aggregate), ``join`` (hash_join of 1k dims x 10k facts). Each is submitted
``--runs`` times one after another (after 3 warm-up runs); a run's latency is from the POST to
the client seeing COMPLETED (long-poll ``?wait_s`` with ``If-None-Match``). Against: the same
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
from pathlib import Path
from typing import Any

import httpx
import redis
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from sqlalchemy.orm import sessionmaker

from api.app import create_app
from bench.stack import running_stack
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
    """Submit ``body`` and follow it to its end; seconds from POST to COMPLETED, and its view."""
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
    return seconds, view


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--workloads", default="tiny,wordcount,join")
    parser.add_argument("--throughput-jobs", type=int, default=96)
    parser.add_argument("--throughput-warmup", type=int, default=60)
    parser.add_argument("--no-cold", action="store_true")
    parser.add_argument("--no-throughput", action="store_true")
    args = parser.parse_args()
    report: dict[str, Any] = {"runs": args.runs}
    with (
        tempfile.TemporaryDirectory(prefix="jetspark-latency-") as home,
        services(Path(home)) as (server, redis_url),
    ):
        database = fresh_database(server)
        namespace = f"bench-latency-{uuid.uuid4().hex[:6]}"
        app = create_app(
            database_url=database,
            redis_url=redis_url,
            redis_namespace=namespace,
            api_settings=ApiSettings(tokens=[TOKEN], max_body_bytes=4 * 1024 * 1024),
        )
        spark = build_spark_session(master="local[2]", app_name="jetspark-bench-latency")
        spark.sparkContext.setLogLevel("ERROR")
        headers = {"Authorization": f"Bearer {TOKEN}"}
        with (
            live_server(app) as url,
            httpx.Client(base_url=url, headers=headers, timeout=120) as http,
            warm_worker(spark, database, redis_url, namespace, 2),
        ):
            for name in args.workloads.split(","):
                make_body, hand = WORKLOADS[name]
                for _ in range(3):
                    run_once(http, make_body())
                    hand(spark)
                api, warm, slowest = [], [], None
                for _ in range(args.runs):
                    seconds, view = run_once(http, make_body())
                    api.append(seconds)
                    if slowest is None or seconds > slowest[0]:
                        slowest = (seconds, view.get("timings"))
                    started = time.perf_counter()
                    hand(spark)
                    warm.append(time.perf_counter() - started)
                report[name] = {
                    "api": percentiles(api),
                    "hand_written_warm": percentiles(warm),
                    "ratio_p50": statistics.median(warm) / statistics.median(api),
                    "slowest_timings": slowest[1] if slowest else None,
                }
                print(name, json.dumps(report[name]["api"]), flush=True)
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
