"""A stream's epoch does not queue behind batch jobs' tasks (``jetspark.spark_pools``)."""

from __future__ import annotations

import copy
import threading
import time

from pyspark.sql import SparkSession

from jetspark import spark_pools
from jetspark.dag.model import JobSpec
from jetspark.dag.plan import build_plan
from jetspark.dag.validate import validate_job
from tests.worker.conftest import LONG_JOB


def _slow_task(_: object) -> int:
    time.sleep(1.0)  # the work of a batch task that is slow
    return 1


def test_the_pools_are_the_allocation_files(spark: SparkSession) -> None:
    scheduler = spark.sparkContext._jsc.sc()
    streams = scheduler.getPoolForName(spark_pools.STREAMS).get()
    batch = scheduler.getPoolForName(spark_pools.BATCH).get()
    assert (streams.minShare(), streams.weight()) == (1, 2)
    assert (batch.minShare(), batch.weight()) == (0, 1)


def test_a_stream_runs_in_the_streams_pool_and_a_batch_job_in_the_batch_pool() -> None:
    stream = copy.deepcopy(LONG_JOB)
    stream["dag"]["vertices"][0] = {
        "name": "numbers",
        "processor": "source.sequence",
        "params": {"count": None, "rate_per_s": 10},
    }
    for body, pool in ((LONG_JOB, spark_pools.BATCH), (stream, spark_pools.STREAMS)):
        plan = build_plan(validate_job(JobSpec.model_validate(body)))
        assert spark_pools.pool_for(plan.runs_in_epochs) == pool


def test_a_streams_task_runs_before_the_batch_tasks_queued_ahead_of_it(
    spark: SparkSession,
) -> None:
    context = spark.sparkContext
    batch_done = threading.Event()

    def batch() -> None:
        context.setLocalProperty("spark.scheduler.pool", spark_pools.BATCH)
        context.parallelize(range(24), 24).map(_slow_task).sum()  # 24 x 1 s on 2 cores
        batch_done.set()

    runner = threading.Thread(target=batch)
    runner.start()
    try:
        deadline = time.monotonic() + 60
        while not context.statusTracker().getActiveStageIds():  # the batch's tasks queued
            assert time.monotonic() < deadline, "the batch job never started"
            time.sleep(0.01)
        context.setLocalProperty("spark.scheduler.pool", spark_pools.STREAMS)
        try:
            assert context.parallelize([1], 1).map(lambda x: x + 1).collect() == [2]
        finally:
            context.setLocalProperty("spark.scheduler.pool", None)  # type: ignore[arg-type]
        # In one FIFO pool it would have waited for all 24 tasks (about 12 s).
        assert not batch_done.is_set(), "the stream's task waited for the batch job"
    finally:
        runner.join(120)
