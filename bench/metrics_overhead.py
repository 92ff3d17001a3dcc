"""Live metrics overhead: the same job with metrics reporting on and off, in one run.

Run: ``.venv/bin/python -m bench.metrics_overhead [--words 12000000] [--repeats 3]``. One
SparkSession (local[2]) and an embedded Valkey; a word count whose tokenizer is the Python
``Tokenizer`` processor (``python`` vertices are the ones that report from their Spark tasks),
through ``worker.engine.run_job``, in rounds (each variant once per round), best of them:

- ``on``: as a worker runs it with ``JETSPARK_WORKER_METRICS_ENABLED`` (the default): a
  ``JobReporter`` publishing every 0.5 s and every task writing its processor's report to
  Redis every 0.5 s;
- ``off``: no reporter, no task reports (the setting off).

Prints words/s of each and the ratio on / off (target ≥ 0.95).

``--part builtin``: the word count of ``bench.engine_wordcount`` (built-in vertices only:
``source.files`` -> ``flat_map`` -> two-stage ``aggregate`` -> ``sink.results``), ``on`` with
the reporter reading the job's Spark queries back for its built-in vertices' busy and
backpressure (``worker/spark_pipelines.py``), as a worker runs it, ``reporter`` with the
reporter as it was before them; target on / reporter ≥ 0.97 (issue 28: collecting them costs
at most 3%). ``--part stream``: the same for ``bench.streaming``'s
windowed stream over ``--words`` events (a sequence as fast as it goes, 1 s epochs, guarantee
``none``), where every epoch's queries are read back.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis
from pyspark.sql import SparkSession

from bench.engine_wordcount import text_file, word_count_job
from bench.python_processors import word_count_spec, write_lines
from bench.streaming import pipeline
from jetspark.dag.model import JobSpec
from jetspark.dag.plan import ExecutionPlan, build_plan
from jetspark.dag.validate import validate_job
from jetspark.embedded.redis import EmbeddedRedis
from jetspark.queue.keys import Keys
from jetspark.spark_session import build_spark_session
from worker.engine import JobControl, RunnableJob, run_job
from worker.engine.python.live import PROCESSORS_KEY
from worker.engine.work_names import job_description
from worker.live_metrics import JobReporter, MetricsReporting
from worker.spark_pipelines import SparkPipelines


@dataclass(frozen=True)
class Variant:
    """How a run reports: not at all, or with a reporter (``spark_loads``: reading the job's
    Spark queries back for its built-in vertices' busy and backpressure)."""

    reporting: MetricsReporting | None
    spark_loads: bool = True


def run_once(spark: SparkSession, path: Path, variant: Variant) -> int:
    spec = word_count_spec(path)
    plan = build_plan(validate_job(spec)).model_dump(mode="json")
    job = RunnableJob(id=uuid.uuid4(), attempt=1, plan=plan)
    control = JobControl(job_group=f"bench-{job.id}")
    context = spark.sparkContext
    reporting = variant.reporting
    reporter = JobReporter(reporting, job, control).start() if reporting else None
    if reporter is not None:
        context.setLocalProperty(PROCESSORS_KEY, reporter.processors_key)
    try:
        outcome = run_job(spark, ExecutionPlan.model_validate(job.plan), control)
    finally:
        context.setLocalProperty(PROCESSORS_KEY, None)  # type: ignore[arg-type]
    if reporter is not None:
        final = reporter.finish(outcome.vertex_counts)
        assert final.vertices["tokenize"].processors, "no processor reported"
    return outcome.vertex_counts["tokenize"].items_out


def run_builtin(spark: SparkSession, path: Path, variant: Variant) -> int:
    """The built-in word count once."""
    body = word_count_job(path, {"members": 1, "local_parallelism": 2})
    return run_measured(spark, body, variant, "tokenize")


Runner = Callable[[SparkSession, Path, Variant], int]


def stream_runner(events: int) -> Runner:
    """Runs ``bench.streaming``'s windowed stream over ``events`` events."""

    def run(spark: SparkSession, path: Path, variant: Variant) -> int:
        del path
        return run_measured(spark, stream_body(events), variant, "events")

    return run


def stream_body(events: int) -> dict[str, Any]:
    body = pipeline("none", rate=None, interval_ms=1000)
    body["dag"]["vertices"][0]["params"]["count"] = events
    return body


def run_measured(spark: SparkSession, body: dict[str, Any], variant: Variant, counted: str) -> int:
    """``body`` once through the engine, as a worker runs it (its job description set), as
    ``variant`` reports. Items ``counted`` emitted."""
    spec = JobSpec.model_validate(body)
    plan = build_plan(validate_job(spec))
    job = RunnableJob(id=uuid.uuid4(), attempt=1, plan=plan.model_dump(mode="json"))
    control = JobControl(job_group=f"bench-{job.id}")
    spark.sparkContext.setJobGroup(control.job_group, job_description(job.id), True)
    reporter = None
    if variant.reporting is not None:
        pipelines = None
        if variant.spark_loads:
            pipelines = SparkPipelines(spark, job_description(job.id))
        cores = spark.sparkContext.defaultParallelism
        reporter = JobReporter(variant.reporting, job, control, pipelines, cores=cores).start()
    outcome = run_job(spark, plan, control)
    if reporter is not None:
        final = reporter.finish(outcome.vertex_counts)
        measured = final.vertices[counted].busy_ratio > 0
        assert measured or not variant.spark_loads, "no built-in vertex measured"
    return outcome.vertex_counts[counted].items_out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--words", type=int, default=12_000_000)  # 4M: too short to tell
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--part", choices=("python", "builtin", "stream"), default="python")
    options = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    with tempfile.TemporaryDirectory() as home:
        server = EmbeddedRedis(Path(home) / "redis")
        url = server.start()
        os.environ["JETSPARK_REDIS_URL"] = url  # where the Spark tasks report
        client = redis.Redis.from_url(url, decode_responses=True)
        reporting = MetricsReporting(client, Keys("bench-metrics"))
        spark = build_spark_session(master="local[2]", warehouse=Path(home) / "warehouse")
        try:
            run: Runner
            if options.part == "stream":
                path, run, target = Path(home), stream_runner(options.words), 0.97
                shape = "a windowed stream (events)"
            elif options.part == "builtin":
                path, run, target = text_file(spark, options.words), run_builtin, 0.97
                os.environ["JETSPARK_DATA_ROOTS"] = str(path.parent)  # DAGs read only there
                shape = "built-in vertices only"
            else:
                path, run, target = Path(home) / "lines", run_once, 0.95
                write_lines(spark, path, options.words, 10, 100_000)
                shape = "a Python Tokenizer"
            variants = {"on": Variant(reporting), "off": Variant(None)}
            if options.part != "python":  # the reporter as it was before Spark's loads
                variants["reporter"] = Variant(reporting, spark_loads=False)
            for variant in variants.values():
                run(spark, path, variant)  # warm-up: Python workers, JIT
            best = dict.fromkeys(variants, float("inf"))
            for _ in range(options.repeats):
                for name, variant in variants.items():
                    started = time.perf_counter()
                    words = run(spark, path, variant)
                    best[name] = min(best[name], time.perf_counter() - started)
                    assert words == options.words, f"{name}: {words} words"
            print(f"{options.words} words through {shape}, best of {options.repeats}")
            for name, seconds in best.items():
                rate = options.words / seconds / 1e6
                print(f"metrics {name:8s} {seconds:7.2f} s  {rate:5.2f} M words/s")
            print(f"ratio on / off: {best['off'] / best['on']:.3f}")
            if "reporter" in best:
                loads = best["reporter"] / best["on"]
                print(
                    f"ratio on / reporter (Spark's loads alone): {loads:.3f} (target >= {target})"
                )
            else:
                print(f"(target >= {target})")
        finally:
            spark.stop()
            client.close()
            server.stop()


if __name__ == "__main__":
    main()
