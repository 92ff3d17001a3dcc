"""The snapshot store on real servers: state keyed by partition, WAIT for backups."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from pyspark.sql import SparkSession

from jetspark.embedded.redis import EmbeddedRedis
from jetspark.queue.keys import Keys
from tests.cli.conftest import poll
from worker.engine.streaming import state_store
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


def replica_of(primary: EmbeddedRedis, home: Path) -> EmbeddedRedis:
    """A Valkey replicating ``primary``, once in sync."""
    replica = EmbeddedRedis(home)
    replica.start()
    client = redis.Redis.from_url(replica.url, decode_responses=True)
    client.replicaof("127.0.0.1", primary.port)
    poll(
        lambda: client.info("replication").get("master_link_status") == "up",
        deadline_s=30,
        what="the replica in sync",
    )
    client.close()
    return replica


def kill(server: EmbeddedRedis) -> None:
    """SIGKILL, for good: as a lost machine."""
    assert server.process is not None
    server.process.kill()
    server.process.wait(timeout=15)
    server.process = None


def test_required_backups_are_waited_for_and_fail_the_snapshot_without_them(
    spark: SparkSession, primary: EmbeddedRedis, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    address = StoreAddress(primary.url, Keys("t"), uuid.uuid4(), 1, partition_count=271)
    attempts: list[float] = []  # when each write to Redis began: after the Spark job
    write = state_store._write

    def timed(*args: Any, **kwargs: Any) -> dict[str, int]:
        attempts.append(time.monotonic())
        return write(*args, **kwargs)

    monkeypatch.setattr(state_store, "_write", timed)
    with pytest.raises(
        ReplicasMissing, match=r"0 of backup_count=1 replicas of Redis .*\(0 replicas online\)"
    ):
        write_state(
            state(spark),  # type: ignore[arg-type]
            "win",
            address,
            backup_count=1,
            require_backups=True,
            replicas_wait_s=1.0,
        )
    # Waited about replicas_wait_s (its attempts' WAIT of WAIT_TIMEOUT_MS: ~2 s), not the
    # default's 30 s; measured from the first write, the Spark job before it left out.
    waited = time.monotonic() - attempts[0]
    assert waited < state_store.REPLICAS_WAIT_S / 2, f"waited {waited:.1f} s for replicas"

    replica = replica_of(primary, tmp_path / "replica")
    try:
        stats = write_state(
            state(spark),  # type: ignore[arg-type]
            "win",
            address,
            backup_count=1,
            require_backups=True,
        )
        key = Keys("t").snapshot_partition(5, address.job_id, 1)
        assert stats.rows == 40 and redis.Redis.from_url(replica.url).hexists(key, "win")
        assert stats.backups == {f"127.0.0.1:{primary.port}": 1}
    finally:
        replica.stop()


def test_a_lost_replica_costs_its_copies_not_the_snapshot_until_a_replica_is_back(
    spark: SparkSession, primary: EmbeddedRedis, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without ``require_backups``: as many copies as there are replicas, none waited for
    that is not there; once a replica is back, the full ``backup_count`` again."""
    name = f"127.0.0.1:{primary.port}"
    frame = state(spark)

    def written(snapshot: int) -> tuple[dict[str, int], float]:
        address = StoreAddress(primary.url, Keys("t"), uuid.uuid4(), snapshot, partition_count=271)
        started = time.monotonic()
        stats = write_state(frame, "win", address, backup_count=2)  # type: ignore[arg-type]
        assert stats.rows == 40
        return stats.backups, time.monotonic() - started

    with monkeypatch.context() as patched:
        # A WAIT would now block a minute: well under that, none was sent (the Spark job of
        # the write has the rest of the time, on a loaded machine).
        patched.setattr(state_store, "WAIT_TIMEOUT_MS", 60_000)
        alone, took = written(1)  # a single Redis without replicas
    assert alone == {name: 0}
    assert took < 30, f"waited for replicas that are not there ({took:.1f} s)"
    first = replica_of(primary, tmp_path / "first")
    second = replica_of(primary, tmp_path / "second")
    try:
        assert written(2)[0] == {name: 2}
        kill(second)  # lost for good
        assert written(3)[0] == {name: 1}  # waited for the one left
        third = replica_of(primary, tmp_path / "third")  # a new node joins as a replica
        try:
            assert written(4)[0] == {name: 2}
        finally:
            third.stop()
    finally:
        first.stop()
