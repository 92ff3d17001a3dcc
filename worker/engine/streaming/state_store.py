"""Processor state in Redis, keyed by partition: the snapshot store.

A stateful vertex's state is a frame whose rows carry ``__partition`` (the partition of the
row's key, 0..partition_count-1). Each partition's rows of a vertex go as one Arrow IPC blob
into the hash ``Keys.snapshot_partition(p, job, snapshot)``, field = vertex, then ``WAIT``
for ``backup_count`` replicas. On a Redis Cluster the partition's hash tag places it on one
primary: the writes go per primary, each followed by ``WAIT`` on that primary (on the same
connection, which is what ``WAIT`` counts), so every partition has ``backup_count`` copies
besides its primary's, as the seeds' backups. A primary with fewer replicas online than
that (one lost for good, a promoted replica before a node rejoins) is waited for with the
replicas it has: the write returns how many acknowledged, per primary, and the snapshot
commits under-replicated (``backups.BackupWatch``), as Hazelcast goes on when a backup
cannot be placed; only ``require_backups`` fails it. Only when every part is written does
the caller commit the snapshot's metadata in PostgreSQL, so a half-written snapshot is never
restored. Reading runs one Spark task per slice of partitions.
"""

from __future__ import annotations

import io
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import redis
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType
from redis.cluster import RedisCluster

from jetspark.placement import address_of, online_replicas
from jetspark.queue.keys import Keys
from jetspark.redis_client import RedisClient, connect
from jetspark.retry import Retry
from worker.engine.state_columns import PARTITION

WAIT_TIMEOUT_MS = 2_000
"""How long a snapshot write waits for its replicas to acknowledge it."""
REPLICAS_WAIT_S = 30.0
"""Under ``require_backups``: how long a snapshot write waits for a primary to have
``backup_count`` replicas again (a failover leaves the promoted replica without one until a
node rejoins) before the snapshot, and so the job, fails."""


class SnapshotLost(Exception):
    """A committed snapshot's state is no longer (all) in Redis: restarted empty, evicted."""

    error_type = "SnapshotLost"


class ReplicasMissing(Exception):
    """Fewer replicas than ``backup_count`` acknowledged a snapshot write that
    ``require_backups``."""

    error_type = "SnapshotBackupsMissing"


@dataclass(frozen=True)
class StoreAddress:
    """Where a snapshot's state lives: everything a Spark task needs to reach it."""

    url: str
    keys: Keys
    job_id: uuid.UUID
    snapshot_id: int
    partition_count: int
    cluster: bool = False
    """``url`` names one node of a Redis Cluster."""

    def client(self, **options: Any) -> RedisClient:
        return connect(self.url, cluster=self.cluster, **options)


@dataclass(frozen=True)
class VertexStats:
    keys: int
    bytes: int
    rows: int
    schema: str
    """The state frame's schema as JSON, to read it back."""
    backups: dict[str, int] = field(default_factory=dict)
    """Replicas that acknowledged the write, per primary written to (``host:port``); empty
    when nothing was written or ``backup_count`` is 0."""


def write_state(
    frame: DataFrame,
    vertex: str,
    address: StoreAddress,
    *,
    backup_count: int,
    require_backups: bool = False,
    replicas_wait_s: float = REPLICAS_WAIT_S,
) -> VertexStats:
    """Write one vertex's state; returns what was written once every part is in Redis.

    The rows come over to this process as Arrow (in a worker's local mode, out of the same
    JVM) and go to Redis in one pipeline: a Python task per core cost a fixed ~0.1-0.3 s
    per snapshot on two cores, more than the writes themselves. A server away, a failover
    or a slot moving raises (an outage: the commit's retry writes it all again, idempotent).
    A primary with fewer replicas online than ``backup_count`` is waited for with those it
    has, and the stats say how many acknowledged; with ``require_backups``, fewer than
    ``backup_count`` is waited out for ``replicas_wait_s``, then raises ``ReplicasMissing``.
    """
    table = frame.toArrow()
    ordered = table.sort_by(PARTITION)
    runs = pc.value_counts(ordered.column(PARTITION)).to_pylist()  # in sorted order
    blobs: dict[str, bytes] = {}
    offset = size = 0
    for run in runs:
        partition, rows = int(run["values"]), int(run["counts"])
        blob = _ipc(ordered.slice(offset, rows))
        key = address.keys.snapshot_partition(partition, address.job_id, address.snapshot_id)
        blobs[key] = blob
        offset, size = offset + rows, size + len(blob)
    backups: dict[str, int] = {}
    if blobs:
        wanted = _Wanted(backup_count, require_backups, address.snapshot_id)
        retry = Retry(
            f"snapshot {address.snapshot_id}: waiting for replicas",
            retry_on=lambda error: isinstance(error, ReplicasMissing),
            deadline_s=replicas_wait_s,
        )
        backups = retry(_write, address, blobs, vertex, wanted)
    return VertexStats(
        keys=len(runs),
        rows=table.num_rows,
        bytes=size,
        schema=frame.schema.json(),
        backups=backups,
    )


@dataclass(frozen=True)
class _Wanted:
    """The backups a snapshot write asks for."""

    backup_count: int
    required: bool
    snapshot_id: int


def _write(
    address: StoreAddress, blobs: dict[str, bytes], vertex: str, wanted: _Wanted
) -> dict[str, int]:
    client = address.client(socket_timeout=WAIT_TIMEOUT_MS / 1000 + 10)
    try:
        if isinstance(client, RedisCluster):
            return _write_per_primary(client, blobs, vertex, wanted)
        return {address_of(client): _write_waiting(client, blobs, vertex, wanted, "Redis")}
    finally:
        client.close()


def _write_waiting(
    client: redis.Redis, blobs: dict[str, bytes], vertex: str, wanted: _Wanted, where: str
) -> int:
    """HSET every blob, then WAIT for the replicas, in one pipeline: one connection, so WAIT
    counts these writes. Returns how many acknowledged.

    Waits for ``backup_count`` replicas, or for the ones online when there are fewer (none:
    no WAIT, rather than its whole timeout at every snapshot); as soon as the primary has
    ``backup_count`` again, all of them are waited for again. ``required`` always waits for
    ``backup_count`` and raises ``ReplicasMissing`` when fewer acknowledge.
    """
    count = wanted.backup_count
    wait_for = count if wanted.required else min(count, online_replicas(client))
    pipe = client.pipeline(transaction=False)
    for key, blob in blobs.items():
        pipe.hset(key, vertex, blob)
    if wait_for > 0:
        pipe.wait(wait_for, WAIT_TIMEOUT_MS)
    replies = pipe.execute()
    acked = int(replies[-1]) if wait_for > 0 else 0
    if wanted.required and acked < count:
        raise ReplicasMissing(
            f"snapshot {wanted.snapshot_id}: {acked} of backup_count={count} replicas of "
            f"{where} acknowledged within {WAIT_TIMEOUT_MS} ms ({_online(client)} replicas "
            "online): lower backup_count, add replicas, or let the job go on "
            "under-replicated (config.require_backups false)"
        )
    return acked


def _write_per_primary(
    client: RedisCluster, blobs: dict[str, bytes], vertex: str, wanted: _Wanted
) -> dict[str, int]:
    """Each primary gets its partitions' blobs and a WAIT of its own. A node gone or a slot
    moved on (``MOVED``/``ASK``/``CLUSTERDOWN``, a refused connection) raises: the next
    attempt's client reads the topology afresh."""
    by_node: dict[str, dict[str, bytes]] = {}
    nodes = {}
    for key, blob in blobs.items():
        node = client.get_node_from_key(key)  # type: ignore[no-untyped-call]
        by_node.setdefault(node.name, {})[key] = blob
        nodes[node.name] = node
    acked: dict[str, int] = {}
    for name, part in by_node.items():
        target = client.get_redis_connection(nodes[name])
        acked[name] = _write_waiting(target, part, vertex, wanted, f"primary {name}")
    return acked


def _online(client: redis.Redis) -> int | str:
    """Replicas online, for a message: "?" when the server cannot say."""
    try:
        return online_replicas(client)
    except redis.RedisError:
        return "?"


def read_state(
    spark: SparkSession, vertex: str, address: StoreAddress, schema_json: str
) -> DataFrame:
    """One vertex's state of a committed snapshot, as a frame (any partitioning)."""
    schema = StructType.fromJson(_loads(schema_json))
    url, keys, job, sid = address.url, address.keys, address.job_id, address.snapshot_id
    cluster = address.cluster

    def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        partitions = [p for batch in batches for p in batch.column(0).to_pylist()]
        client = connect(url, cluster=cluster)
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
