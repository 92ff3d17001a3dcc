"""A new worker runs a small stream before it takes jobs, so that it is warm in fact.

A worker's SparkSession is built at start, but its first job still paid for everything the
JVM and Spark do once per process: the JIT of Catalyst's analyser, optimiser and planner,
code generation's first compilations, the first Python worker and its imports. On the
shared two-core machine a stream's first epoch took 68 s on a fresh session and 8 s on a
session that had run the same DAG once (steady epochs 3 s). A worker taking over the stream
of a worker that died paid that inside the takeover (issue 24). Here that cost is paid at
start, before the loop claims anything: a small windowed stream (sequence, map, event time,
a keyed window over a partitioned edge, ``sink.results``) runs through the real engine with
exactly-once snapshots, and a snapshot's state is written to Redis and read back as a
restore reads it. What it wrote is deleted; it never fails the worker.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import structlog

from jetspark.queue.keys import Keys
from worker.engine import run_job
from worker.engine.contract import JobControl, RedisTarget, RunnableJob
from worker.engine.state_columns import PARTITION
from worker.engine.streaming.state_store import (
    StoreAddress,
    delete_snapshot,
    read_state,
    write_state,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = structlog.get_logger("jetspark.worker")

PARTITIONS = 271
EPOCHS = 2


def warm_up_job() -> dict[str, Any]:
    """A keyed tumbling-window stream of a few epochs, like the streams workers resume."""
    return {
        "name": "jetspark warm-up",
        "dag": {
            "vertices": [
                {
                    "name": "numbers",
                    "processor": "source.sequence",
                    "params": {"count": 200 * EPOCHS, "rate_per_s": 2000},
                },
                {
                    "name": "events",
                    "processor": "map",
                    "params": {"select": {"seq": "seq", "ts": "seq * 5", "k": "seq % 7"}},
                },
                {
                    "name": "stamped",
                    "processor": "insert_watermarks",
                    "params": {"timestamp": "ts", "allowed_lag_ms": 0},
                },
                {
                    "name": "windows",
                    "processor": "window",
                    "params": {
                        "timestamp": "ts",
                        "type": "tumbling",
                        "size_ms": 100,
                        "key": "k",
                        "aggregations": {"n": "count(*)", "total": "sum(seq)"},
                    },
                },
                {
                    "name": "keyed",
                    "processor": "map",
                    "params": {"select": {"start": "window_start", "key": "key", "n": "n"}},
                },
                {"name": "results", "processor": "sink.results"},
            ],
            "edges": [
                {"from": "numbers", "to": "events"},
                {"from": "events", "to": "stamped"},
                {
                    "from": "stamped",
                    "to": "windows",
                    "routing": "partitioned",
                    "key": "k",
                    "distributed": True,
                },
                {"from": "windows", "to": "keyed"},
                {"from": "keyed", "to": "results"},
            ],
        },
        "config": {
            "members": 1,
            "processing_guarantee": "exactly_once",
            "epoch_interval_ms": 100,
            "snapshot_interval_ms": 100,
        },
    }


def warm_up(spark: SparkSession, redis: RedisTarget) -> float:
    """Run the warm-up stream and a snapshot's write and read; returns the seconds it took.
    Never raises: a worker that could not warm up is still a worker."""
    started = time.monotonic()
    job_id = uuid.uuid4()
    keys = Keys(redis.namespace)
    client = redis.client()
    try:
        control = JobControl(job_group=f"warm-up-{job_id}", redis=redis)
        job = RunnableJob(id=job_id, attempt=1, definition=warm_up_job(), plan={})
        context = spark.sparkContext
        context.setJobGroup(control.job_group, "jetspark warm-up", True)
        context.setLocalProperty("spark.scheduler.pool", "jetspark")
        try:
            run_job(spark, job, control)
        finally:
            context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
        last = control.marks().epoch if control.marks is not None else EPOCHS * 2
        address = StoreAddress(redis.url, keys, job_id, 0, PARTITIONS, cluster=redis.cluster)
        for snapshot_id in range(last + 1):  # no epoch log deletes them
            delete_snapshot(client, replace(address, snapshot_id=snapshot_id))
        _restore(spark, address, client)
    except Exception as error:
        log.warning("warm-up failed: the first job runs cold", error=str(error)[:300])
    finally:
        client.close()
    seconds = round(time.monotonic() - started, 2)
    log.info("worker warmed up", seconds=seconds)
    return seconds


def _restore(spark: SparkSession, address: StoreAddress, client: Any) -> None:
    """A snapshot's state written and read back as a restore reads it (a Python task per
    core), then deleted."""
    from pyspark.sql import functions as F

    partition = F.pmod(F.col("id"), F.lit(PARTITIONS)).cast("int")
    frame = spark.range(64).select(F.col("id").alias("key"), partition.alias(PARTITION))
    written = write_state(frame, "warm-up", address, backup_count=0)
    try:
        restored = read_state(spark, "warm-up", address, written.schema)
        restored.localCheckpoint(eager=True).unpersist()
    finally:
        delete_snapshot(client, address)


def keep_python_workers(spark: SparkSession) -> None:
    """Use each of the session's Python workers once (a task per core), so that Spark's idle
    monitor leaves them, warm, for the next job. Never raises."""
    from pyspark.sql.types import LongType, StructField, StructType

    context = spark.sparkContext
    try:
        context.setJobGroup("jetspark-keep-warm", "jetspark: keep Python workers warm", True)
        tasks = context.defaultParallelism
        schema = StructType([StructField("id", LongType())])
        spark.range(tasks, numPartitions=tasks).mapInArrow(_same, schema).collect()
    except Exception as error:
        log.info("keeping Python workers warm failed", error=str(error)[:200])
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]


def _same(batches: Any) -> Any:
    yield from batches
