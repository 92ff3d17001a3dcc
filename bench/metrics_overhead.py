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
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

import redis
from pyspark.sql import SparkSession

from bench.python_processors import word_count_spec, write_lines
from jetspark.dag.plan import ExecutionPlan, build_plan
from jetspark.dag.validate import validate_job
from jetspark.embedded.redis import EmbeddedRedis
from jetspark.queue.keys import Keys
from jetspark.spark_session import build_spark_session
from worker.engine import JobControl, RunnableJob, run_job
from worker.engine.python.live import PROCESSORS_KEY
from worker.live_metrics import JobReporter, MetricsReporting


def run_once(spark: SparkSession, path: Path, reporting: MetricsReporting | None) -> int:
    spec = word_count_spec(path)
    plan = build_plan(validate_job(spec)).model_dump(mode="json")
    job = RunnableJob(id=uuid.uuid4(), attempt=1, definition=spec.as_json(), plan=plan)
    control = JobControl(job_group=f"bench-{job.id}")
    context = spark.sparkContext
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--words", type=int, default=12_000_000)  # 4M: too short to tell
    parser.add_argument("--repeats", type=int, default=3)
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
            path = Path(home) / "lines"
            write_lines(spark, path, options.words, 10, 100_000)
            variants: dict[str, MetricsReporting | None] = {"on": reporting, "off": None}
            for variant in variants.values():
                run_once(spark, path, variant)  # warm-up: Python workers, JIT
            best = dict.fromkeys(variants, float("inf"))
            for _ in range(options.repeats):
                for name, variant in variants.items():
                    started = time.perf_counter()
                    words = run_once(spark, path, variant)
                    best[name] = min(best[name], time.perf_counter() - started)
                    assert words == options.words, f"{name}: {words} words"
            print(f"{options.words} words through a Python Tokenizer, best of {options.repeats}")
            for name, seconds in best.items():
                rate = options.words / seconds / 1e6
                print(f"metrics {name:3s} {seconds:7.2f} s  {rate:5.2f} M words/s")
            print(f"ratio on / off: {best['off'] / best['on']:.3f} (target >= 0.95)")
        finally:
            spark.stop()
            client.close()
            server.stop()


if __name__ == "__main__":
    main()
