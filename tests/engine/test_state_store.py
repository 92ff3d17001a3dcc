"""The snapshot store on real servers: state keyed by partition, WAIT for backups."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from pyspark.sql import SparkSession

from jetspark.embedded.redis import EmbeddedRedis
from jetspark.queue.keys import Keys
from tests.cli.conftest import poll
from worker.engine.streaming.state_store import (
    ReplicasMissing,
    StoreAddress,
    read_state,
    write_state,
)

pytestmark = pytest.mark.spark


@pytest.fixture
def primary(tmp_path: Path) -> Iterator[EmbeddedRedis]:
    server = EmbeddedRedis(tmp_path / "primary")
    server.start()
    yield server
    server.stop()


def state(spark: SparkSession) -> object:
    rows = [(p % 7, p, f"k{p}", p * 10) for p in range(40)]
    return spark.createDataFrame(rows, "__processor int, __partition int, key string, n bigint")


def test_state_round_trips_keyed_by_partition_in_hash_tagged_keys(
    spark: SparkSession, primary: EmbeddedRedis
) -> None:
    address = StoreAddress(primary.url, Keys("t"), uuid.uuid4(), 3, partition_count=271)
    frame = state(spark)
    stats = write_state(frame, "win", address, backup_count=0)  # type: ignore[arg-type]
    assert (stats.keys, stats.rows) == (40, 40) and stats.bytes > 0
    client = redis.Redis.from_url(primary.url)
    key = Keys("t").snapshot_partition(17, address.job_id, 3)
    assert "{p17}" in key and client.hexists(key, "win")
    back = read_state(spark, "win", address, stats.schema)
    assert sorted(map(tuple, back.collect())) == sorted(map(tuple, frame.collect()))  # type: ignore[attr-defined]


def test_a_snapshot_waits_for_its_backups_and_fails_without_them(
    spark: SparkSession, primary: EmbeddedRedis, tmp_path: Path
) -> None:
    address = StoreAddress(primary.url, Keys("t"), uuid.uuid4(), 1, partition_count=271)
    started = time.monotonic()
    with pytest.raises(
        ReplicasMissing, match=r"0 of backup_count=1 replicas of Redis .*\(0 replicas connected\)"
    ):
        write_state(state(spark), "win", address, backup_count=1, replicas_wait_s=1.0)  # type: ignore[arg-type]
    assert time.monotonic() - started < 15  # waited about replicas_wait_s, not the default

    replica = EmbeddedRedis(tmp_path / "replica")
    replica.start()
    try:
        replica_client = redis.Redis.from_url(replica.url, decode_responses=True)
        replica_client.replicaof("127.0.0.1", primary.port)
        poll(
            lambda: replica_client.info("replication").get("master_link_status") == "up",
            deadline_s=30,
            what="the replica in sync",
        )
        stats = write_state(state(spark), "win", address, backup_count=1)  # type: ignore[arg-type]
        key = Keys("t").snapshot_partition(5, address.job_id, 1)
        assert stats.rows == 40 and replica_client.hexists(key, "win")
    finally:
        replica.stop()
