"""A new worker runs a small stream before it takes jobs, so that it is warm in fact.

A worker's SparkSession is built at start, but its first job still paid for everything the
JVM and Spark do once per process: the JIT of Catalyst's analyser, optimiser and planner,
code generation's first compilations, the first Python worker and its imports. On the
shared two-core machine a stream's first epoch took 68 s on a fresh session and 8 s on a
session that had run the same DAG once (steady epochs 3 s). A worker taking over the stream
of a worker that died paid that inside the takeover (issue 24). Here that cost is paid at
start, before the loop claims anything: a small windowed stream (sequence, map, event time,
a keyed window over a partitioned edge, and the sinks streams write most: ``sink.results``,
``sink.redis_map``, ``sink.files`` as JSON and as Parquet) runs through the real engine with
exactly-once snapshots, and a snapshot's state is written to Redis and read back as a
restore reads it. A takeover's first epoch was the slowest part of moving a stream (a sink's
first write compiles its plan and starts its writer), so each sink is warmed once here. What
it wrote (its files in a temporary folder, its map, its snapshots) is deleted; it never fails
the worker.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
import uuid
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import structlog

from jetspark import spark_pools
from jetspark.dag.model import JobSpec
from jetspark.dag.plan import ExecutionPlan
from jetspark.jobs.accept import AcceptRules, accept
from jetspark.queue.keys import Keys
from jetspark.settings import DataSettings, StreamSettings
from worker.engine import run_job
from worker.engine.contract import JobControl, RedisTarget
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
PRINCIPAL = "jetspark-warm-up"
"""The warm-up's map lives under a principal of its own, never a user's."""


def warm_up_job(out_dir: str, map_name: str) -> dict[str, Any]:
    """A keyed tumbling-window stream of a few epochs, like the streams workers resume,
    writing to every sink a stream commonly has (files under ``out_dir``)."""
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
                {
                    "name": "map",
                    "processor": "sink.redis_map",
                    "params": {"map": map_name, "key": "key"},
                },
                {
                    "name": "json",
                    "processor": "sink.files",
                    "params": {"path": f"{out_dir}/json", "format": "json"},
                },
                {
                    "name": "parquet",
                    "processor": "sink.files",
                    "params": {"path": f"{out_dir}/parquet", "format": "parquet"},
                },
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
                {"from": "keyed", "to": "results", "from_ordinal": 0},
                {"from": "keyed", "to": "map", "from_ordinal": 1},
                {"from": "keyed", "to": "json", "from_ordinal": 2},
                {"from": "keyed", "to": "parquet", "from_ordinal": 3},
            ],
        },
        "config": {
            "members": 1,
            "processing_guarantee": "exactly_once",
            "epoch_interval_ms": 100,
            "snapshot_interval_ms": 100,
        },
    }


def warm_up_plan(body: dict[str, Any], data: DataSettings) -> ExecutionPlan:
    """The warm-up's plan, accepted as every job is, under its own data root (a temporary
    folder outside the operator's)."""
    return accept(JobSpec.model_validate(body), AcceptRules(data=data)).plan


def warm_up(spark: SparkSession, redis: RedisTarget) -> float:
    """Run the warm-up stream and a snapshot's write and read; returns the seconds it took.
    Never raises: a worker that could not warm up is still a worker."""
    started = time.monotonic()
    job_id = uuid.uuid4()
    keys = Keys(redis.namespace)
    client = redis.client()
    redis = replace(redis, principal=PRINCIPAL)
    map_name = f"warm-up-{job_id.hex[:8]}"
    out_dir = tempfile.mkdtemp(prefix="jetspark-warm-up-")
    try:
        data = DataSettings(roots=[out_dir])
        # Its own epoch sizes, not the worker's: a small ``max_items_per_epoch`` or a slow
        # start must not stretch the warm-up over many epochs (a pair of workers starting with
        # 40 items per epoch warmed up for two minutes, running ten epochs instead of three).
        stream = StreamSettings(max_items_per_epoch=200 * EPOCHS, epoch_target_ms=0)
        control = JobControl(
            job_group=f"warm-up-{job_id}", job_id=job_id, redis=redis, data=data, stream=stream
        )
        plan = warm_up_plan(warm_up_job(out_dir, map_name), data)
        context = spark.sparkContext
        context.setJobGroup(control.job_group, "jetspark warm-up", True)
        context.setLocalProperty("spark.scheduler.pool", spark_pools.STREAMS)
        try:
            run_job(spark, plan, control)
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
        shutil.rmtree(out_dir, ignore_errors=True)
        with contextlib.suppress(Exception):
            client.delete(redis.user_map(map_name))
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
