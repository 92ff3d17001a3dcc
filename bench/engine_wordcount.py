"""Engine throughput: word count of 10M words, the built-in DAG vs hand-written DataFrame code.

Run: ``make bench-engine`` (``.venv/bin/python -m bench.engine_wordcount [--words N]``).
Both run in the same SparkSession (``local[2]``) on the same text file, written once under the
temp directory. The DAG is the seeds' two-stage word count: source.files -> flat_map ->
aggregate(accumulate) over a local partitioned edge -> aggregate(combine) over a distributed
partitioned edge -> sink.results. The hand-written code is split/explode/groupBy().count()
collected to the driver. Best of ``--runs`` each, the runs interleaved (hand-written, then each
DAG) so that a busy machine slows both alike; the ratio is hand-written time / DAG time (also
given of the medians, steadier when the JVM's collections land on some runs). The
Spark jobs a run starts are counted too (a figure the machine's load does not move).
The DAG runs twice: with SPEC's default murmur3 partitioner (canonical bytes hashed in the
JVM) and with ``spark_hash`` (Spark's own hash of the key).

``--server``: the DAG goes through the HTTP API to a warm worker (``bench.latency``'s: uvicorn,
real PostgreSQL and Redis, the worker in this process on the same SparkSession), timed from
the POST to the client seeing COMPLETED, its 100k results written to PostgreSQL; the
hand-written code runs in the same warm session, interleaved, a warm-up run of each first.
Each server run's phases (from its view's ``timings``, seconds after it was queued) are
printed: planned, each Spark job submitted, results written with COMPLETED.

Is the comparison fair? The hand-written program ends with the 100k ``(word, count)`` rows in
its driver (``collect()``), where its user needs them; it counts nothing it would not need.
The server's job ends with the same rows stored in PostgreSQL, readable by any client: that
write is work a server does for its users, which the ratio includes on purpose (issue 16).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jetspark.dag.model import JobSpec
from jetspark.dag.plan import ExecutionPlan, build_plan
from jetspark.dag.validate import validate_job
from jetspark.spark_session import build_spark_session
from worker.engine import JobControl, RunnableJob, run_job

WORDS_PER_LINE = 10
DISTINCT = 100_000


def text_file(spark: SparkSession, words: int, folder: Path | None = None) -> Path:
    """``words`` words over ``DISTINCT`` keys, ten a line, written once (in ``folder``, else
    the temp directory) and reused."""
    path = (folder or Path(tempfile.gettempdir())) / f"jetspark-bench-words-{words}"
    if (path / "_SUCCESS").exists():
        return path
    lines = spark.range(words // WORDS_PER_LINE, numPartitions=4)
    columns = [
        F.concat(F.lit("w"), F.pmod(F.hash(F.col("id"), F.lit(j)), F.lit(DISTINCT)).cast("string"))
        for j in range(WORDS_PER_LINE)
    ]
    lines.select(F.concat_ws(" ", *columns).alias("value")).write.mode("overwrite").text(str(path))
    return path


def word_count_job(
    path: Path,
    config: dict[str, Any],
    partitioner: str = "murmur3",
    *,
    name: str = "bench-word-count",
) -> dict[str, Any]:
    """The two-stage word count over the text files at ``path``, as a job body."""
    body: dict[str, Any] = {
        "name": name,
        "dag": {
            "vertices": [
                {"name": "lines", "processor": "source.files",
                 "params": {"path": str(path), "format": "text"}},
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
        "config": config,
    }  # fmt: skip
    for edge in body["dag"]["edges"]:
        if edge.get("routing") == "partitioned":
            edge["partitioner"] = partitioner
    return body


def run_dag(spark: SparkSession, body: dict[str, Any]) -> int:
    spec = JobSpec.model_validate(body)
    plan = build_plan(validate_job(spec))
    job = RunnableJob(id=uuid.uuid4(), attempt=1, plan=plan.model_dump(mode="json"))
    control = JobControl(job_group=f"bench-{job.id}", cancelled=threading.Event())
    outcome = run_job(spark, ExecutionPlan.model_validate(job.plan), control)
    return len(outcome.results["sink"])


def hand_written(spark: SparkSession, path: Path) -> int:
    lines: DataFrame = spark.read.text(str(path))
    words = lines.select(F.explode(F.split("value", " ")).alias("word"))
    return len(words.groupBy("word").count().collect())


SERVER_SPARK_JOBS: list[int] = []
"""The Spark jobs of each job run through the server (from its view's ``timings``)."""


def spark_jobs(spark: SparkSession, group: str, work: Any) -> tuple[float, int, int]:
    """Seconds, result and Spark jobs of one run of ``work`` (its jobs tagged by ``group``,
    or, run by the server's worker, listed in the job's timings)."""
    context = spark.sparkContext
    context.setJobGroup(group, group)
    ran = len(SERVER_SPARK_JOBS)
    started = time.perf_counter()
    result = work()
    seconds = time.perf_counter() - started
    if len(SERVER_SPARK_JOBS) > ran:
        return seconds, result, SERVER_SPARK_JOBS[-1]
    return seconds, result, len(context.statusTracker().getJobIdsForGroup(group))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--words", type=int, default=10_000_000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--local-parallelism", type=int, default=2)
    parser.add_argument("--server", action="store_true", help="the DAG through the HTTP API")
    args = parser.parse_args()
    spark = build_spark_session(master="local[2]", app_name="jetspark-bench")
    spark.sparkContext.setLogLevel("ERROR")
    try:
        path = text_file(spark, args.words)
        # The words file is this bench's data: DAGs may read only under a data root.
        os.environ["JETSPARK_DATA_ROOTS"] = str(path.parent)
        hand_written(spark, path)  # warm up the JVM and the file cache for both
        if args.server:
            with through_server(spark) as submit:
                compare(spark, args, path, submit)
        else:
            compare(spark, args, path, lambda body: run_dag(spark, body))
    finally:
        spark.stop()


@contextmanager
def through_server(spark: SparkSession) -> Iterator[Callable[[Any], int]]:
    """A function submitting a DAG through the API to a warm worker; its result count."""
    from api.app import create_app
    from bench.latency import TOKEN, run_once, warm_worker
    from bench.submit_latency import fresh_database, services
    from jetspark.settings import ApiSettings
    from tests.live_server import live_server

    with (
        tempfile.TemporaryDirectory(prefix="jetspark-wordcount-") as home,
        services(Path(home)) as (server, redis_url),
    ):
        database = fresh_database(server)
        namespace = f"bench-wordcount-{uuid.uuid4().hex[:6]}"
        app = create_app(
            database_url=database,
            redis_url=redis_url,
            redis_namespace=namespace,
            api_settings=ApiSettings(tokens=[TOKEN]),
        )
        headers = {"Authorization": f"Bearer {TOKEN}"}
        with (
            live_server(app) as url,
            httpx.Client(base_url=url, headers=headers, timeout=600) as http,
            warm_worker(spark, database, redis_url, namespace, 2),
        ):

            def submit(body: Any) -> int:
                _, view = run_once(http, body)
                timings = view.get("timings") or {}
                SERVER_SPARK_JOBS.append(len(timings.get("spark_jobs", [])))
                print("  server run:", phases(timings), flush=True)
                return int(view["progress"]["items_out"])

            yield submit


def phases(timings: dict[str, Any]) -> str:
    """A job's ``timings`` as seconds after it was queued."""
    if not timings.get("queued"):
        return "no timings"
    queued = datetime.fromisoformat(timings["queued"])

    def at(stamp: str) -> str:
        return f"{(datetime.fromisoformat(stamp) - queued).total_seconds():.2f}"

    jobs = " ".join(f"job {j['id']} {at(j['submitted'])}" for j in timings.get("spark_jobs", [])
                    if j.get("submitted"))  # fmt: skip
    return (
        f"planned {at(timings['planned'])}, {jobs}, computed {at(timings['computed'])}, "
        f"results written {at(timings['results_written'])}"
    )


def compare(
    spark: SparkSession, args: argparse.Namespace, path: Path, submit: Callable[[Any], int]
) -> None:
    """Best of ``args.runs`` of each, interleaved; ratios against the hand-written code."""
    work: dict[str, Any] = {"hand-written DataFrame": lambda: hand_written(spark, path)}
    for partitioner in ("murmur3", "spark_hash"):
        body = word_count_job(
            path, {"members": 1, "local_parallelism": args.local_parallelism}, partitioner
        )
        work[f"DAG, {partitioner:10} edges"] = lambda body=body: submit(body)
    if args.server:
        for perform in work.values():
            perform()  # warm-up: the worker's first job, the Python workers
    seconds: dict[str, list[float]] = {name: [] for name in work}
    jobs: dict[str, int] = {}
    keys: dict[str, int] = {}
    # Interleaved runs: a busy machine slows the hand-written code and the DAG alike.
    for run in range(args.runs):
        for i, (name, perform) in enumerate(work.items()):
            took, keys[name], jobs[name] = spark_jobs(spark, f"bench-{run}-{i}", perform)
            seconds[name].append(took)
    hand = "hand-written DataFrame"
    hand_s, hand_median = min(seconds[hand]), statistics.median(seconds[hand])
    print(f"words: {args.words:,}  distinct: {keys[hand]:,}  best of {args.runs}")
    for name, taken in seconds.items():
        assert keys[name] == keys[hand], (name, keys[name], keys[hand])
        best = min(taken)
        print(
            f"{name:26} {best:6.2f} s  {args.words / best / 1e6:5.2f} M/s"
            f"  ratio {hand_s / best:.2f} (of medians {hand_median / statistics.median(taken):.2f})"
            f"  Spark jobs {jobs[name]}  (runs: {', '.join(f'{t:.2f}' for t in taken)})"
        )


if __name__ == "__main__":
    main()
