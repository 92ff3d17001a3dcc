"""Processor state in Redis, keyed by partition: the snapshot store.

A stateful vertex's state is a frame whose rows carry ``__partition`` (the partition of the
row's key, 0..partition_count-1). Each partition's rows of a vertex go as one Arrow IPC blob
into the hash ``Keys.snapshot_partition(p, job, snapshot)``, field = vertex, then ``WAIT``
for ``backup_count`` replicas. Only when every task has returned does the
caller commit the snapshot's metadata in PostgreSQL, so a half-written snapshot is never
restored. Reading runs one Spark task per slice of partitions.
"""

from __future__ import annotations

import io
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import redis
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from jetspark.queue.keys import Keys
from worker.engine.state_columns import PARTITION

WAIT_TIMEOUT_MS = 2_000
"""How long a snapshot write waits for its backups before the snapshot fails."""


class SnapshotLost(Exception):
    """A committed snapshot's state is no longer (all) in Redis: restarted empty, evicted."""

    error_type = "SnapshotLost"


class ReplicasMissing(Exception):
    """Fewer replicas than ``backup_count`` acknowledged a snapshot write."""

    error_type = "SnapshotBackupsMissing"


@dataclass(frozen=True)
class StoreAddress:
    """Where a snapshot's state lives: everything a Spark task needs to reach it."""

    url: str
    keys: Keys
    job_id: uuid.UUID
    snapshot_id: int
    partition_count: int


@dataclass(frozen=True)
class VertexStats:
    keys: int
    bytes: int
    rows: int
    schema: str
    """The state frame's schema as JSON, to read it back."""


def write_state(
    frame: DataFrame, vertex: str, address: StoreAddress, *, backup_count: int
) -> VertexStats:
    """Write one vertex's state; returns what was written once every part is in Redis.

    The rows come over to this process as Arrow (in a worker's local mode, out of the same
    JVM) and go to Redis in one pipeline: a Python task per core cost a fixed ~0.1-0.3 s
    per snapshot on two cores, more than the writes themselves.
    """
    table = frame.toArrow()
    ordered = table.sort_by(PARTITION)
    runs = pc.value_counts(ordered.column(PARTITION)).to_pylist()  # in sorted order
    client = redis.Redis.from_url(address.url, socket_timeout=WAIT_TIMEOUT_MS / 1000 + 10)
    try:
        pipe = client.pipeline(transaction=False)
        offset = size = 0
        for run in runs:
            partition, rows = int(run["values"]), int(run["counts"])
            blob = _ipc(ordered.slice(offset, rows))
            key = address.keys.snapshot_partition(partition, address.job_id, address.snapshot_id)
            pipe.hset(key, vertex, blob)
            offset, size = offset + rows, size + len(blob)
        pipe.execute()
        if backup_count > 0:
            acked = int(client.wait(backup_count, WAIT_TIMEOUT_MS))
            if acked < backup_count:
                raise ReplicasMissing(
                    f"snapshot {address.snapshot_id}: {acked} of {backup_count} Redis "
                    "replicas acknowledged"
                )
    finally:
        client.close()
    return VertexStats(keys=len(runs), rows=table.num_rows, bytes=size, schema=frame.schema.json())


def read_state(
    spark: SparkSession, vertex: str, address: StoreAddress, schema_json: str
) -> DataFrame:
    """One vertex's state of a committed snapshot, as a frame (any partitioning)."""
    schema = StructType.fromJson(_loads(schema_json))
    url, keys, job, sid = address.url, address.keys, address.job_id, address.snapshot_id

    def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        partitions = [p for batch in batches for p in batch.column(0).to_pylist()]
        client = redis.Redis.from_url(url)
        pipe = client.pipeline(transaction=False)
        for p in partitions:
            pipe.hget(keys.snapshot_partition(p, job, sid), vertex)
        for blob in pipe.execute():
            if blob:
                yield from pa.ipc.open_stream(io.BytesIO(blob)).read_all().to_batches()

    tasks = spark.sparkContext.defaultParallelism
    seeds = spark.range(address.partition_count, numPartitions=tasks)
    return seeds.mapInArrow(read, schema)


def missing_state(client: Any, address: StoreAddress, vertex: str, *, keys: int, size: int) -> str:
    """What is missing of one vertex's state against what its commit recorded in PostgreSQL
    (``keys`` partition blobs, ``size`` bytes in all); empty when it is all there."""
    pipe = client.pipeline(transaction=False)
    job, sid = address.job_id, address.snapshot_id
    for p in range(address.partition_count):
        pipe.hstrlen(address.keys.snapshot_partition(p, job, sid), vertex)
    lengths = [int(n) for n in pipe.execute()]
    found, found_bytes = sum(1 for n in lengths if n), sum(lengths)
    if (found, found_bytes) == (keys, size):
        return ""
    return (
        f"vertex {vertex!r}: {found} of {keys} partition blobs, {found_bytes} of {size} bytes "
        "in Redis"
    )


def delete_snapshot(client: Any, address: StoreAddress) -> None:
    """Drop every partition hash of one snapshot (the driver does this, after a commit)."""
    names = address.keys.snapshot_keys(address.job_id, address.snapshot_id, address.partition_count)
    for first in range(0, len(names), 512):
        client.delete(*names[first : first + 512])


def _ipc(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def _loads(text: str) -> dict[str, Any]:
    import json

    loaded: dict[str, Any] = json.loads(text)
    return loaded
