"""What the worker hands the engine and what it gets back."""

from __future__ import annotations

import os
import threading
import uuid
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from jetspark.jdbc.connections import JdbcConnections
    from jetspark.kafka.clusters import KafkaClusters
    from jetspark.redis_client import RedisClient
    from jetspark.settings import DataSettings, StreamSettings

RESULTS_CAP = 100_000
"""``sink.results`` records kept per job at most."""
BEHIND_KEPT = 512
"""Spans a stream ran behind kept for its live metrics (the newest)."""


def stamp() -> str:
    """Now, as the ISO 8601 UTC time a job's timings store (``JobControl.timings``)."""
    return datetime.now(UTC).isoformat()


@dataclass(frozen=True)
class RunnableJob:
    """A claimed job: its stored execution plan (JSON, as stored), all the engine runs it
    from (``ExecutionPlan``)."""

    id: uuid.UUID
    attempt: int
    plan: dict[str, Any]


@dataclass(frozen=True)
class SnapshotRecord:
    """A committed snapshot: where its state lives and what it needs to be restored."""

    job_id: uuid.UUID
    """The job whose run wrote the state (another job's, for an ``initial_snapshot``)."""
    snapshot_id: int
    epoch: int
    name: str | None
    offsets: dict[str, Any]
    """``sources`` (where each source goes on), ``watermarks`` (every processor's marks)."""
    stats: dict[str, Any]
    """``partition_count`` and, per stateful vertex, its kind, state shape, layout, schema,
    keys, rows and bytes."""


@dataclass
class EpochCommit:
    """What an epoch's end writes to PostgreSQL in one transaction."""

    epoch: int
    snapshot: SnapshotRecord | None
    """The snapshot taken at this epoch's barrier, when the job has a guarantee."""
    results: dict[str, list[dict[str, Any]]]
    counts: dict[str, VertexCounts]
    """Every vertex's counts so far."""
    sources: list[str]
    sinks: list[str]


class EpochLog(Protocol):
    """The worker's side of a streaming job's epochs in PostgreSQL, fenced by its lease."""

    def restore_point(self) -> SnapshotRecord | None:
        """The job's last committed snapshot."""
        ...

    def named_snapshot(self, name: str) -> SnapshotRecord | None: ...

    def planned_ranges(self, epoch: int) -> dict[str, Any] | None:
        """The ranges a lost attempt planned for ``epoch`` (replayed exactly), if any."""
        ...

    def plan_epoch(self, epoch: int, ranges: dict[str, Any], fingerprint: str) -> None: ...

    def reset(self) -> None:
        """Forget every epoch, result and snapshot of the job (not its exported ones): it
        replays from its sources' beginning."""
        ...

    def commit(self, commit: EpochCommit) -> list[SnapshotRecord]:
        """Commit the epoch; returns older snapshots whose state may now be deleted."""
        ...


class SnapshotHistoryLog(Protocol):
    """Where a stream says when each snapshot began and how it ended, for the job's
    snapshot history (``jetspark.jobs.snapshot_history``). Never stops the job: an
    implementation swallows its own failures."""

    def snapshot_started(self, snapshot_id: int, epoch: int) -> None:
        """The commit thread begins writing the snapshot's state (again, on a retry)."""
        ...

    def snapshot_ended(self, snapshot_id: int, error: BaseException) -> None:
        """The snapshot will not commit: its write or commit raised ``error``."""
        ...


@dataclass(frozen=True)
class StreamMarks:
    """A streaming job's epoch and, per vertex, each processor's watermark fields
    (``top_observed_wm``, ``coalesced_wm``, ``last_forwarded_wm``, ``idle``,
    ``late_items_dropped``), as the metrics document names them."""

    epoch: int
    processors: dict[str, list[dict[str, Any]]]


@dataclass(frozen=True)
class RedisTarget:
    """The Redis the worker uses, for what the engine writes there (state, maps, events)."""

    url: str
    namespace: str
    principal: str = "legacy"
    """The job's owner: its maps and streams live under its own prefix."""
    cluster: bool = False
    """``url`` names one node of a Redis Cluster (``JETSPARK_REDIS_CLUSTER``)."""

    def client(self, **options: Any) -> RedisClient:
        """A client of this Redis (``jetspark.redis_client.connect``), in any process."""
        from jetspark.redis_client import connect

        return connect(self.url, cluster=self.cluster, **options)

    def user_map(self, name: str) -> str:
        from jetspark.queue.keys import Keys

        return Keys(self.namespace).redis_map(self.principal, name)

    def user_stream(self, name: str) -> str:
        from jetspark.queue.keys import Keys

        return Keys(self.namespace).user_stream(self.principal, name)

    @classmethod
    def from_settings(cls) -> RedisTarget:
        from jetspark.settings import RedisSettings

        settings = RedisSettings()
        url = settings.url or "redis://127.0.0.1:6379/0"
        return cls(url, settings.namespace, cluster=settings.cluster)

    @classmethod
    def of_client(cls, client: Any, namespace: str, principal: str = "legacy") -> RedisTarget:
        """The Redis a client talks to (a cluster's: through one of its nodes)."""
        from jetspark.redis_client import is_cluster, url_of

        return cls(url_of(client), namespace, principal, cluster=is_cluster(client))


@dataclass(frozen=True)
class _JobSettings:
    """What a job's control takes from the worker's settings (``JobControl``'s defaults)."""

    allowed_python_modules: tuple[str, ...]
    metrics_url: str | None
    metrics_cluster: bool
    data: DataSettings
    jdbc: JdbcConnections
    kafka: KafkaClusters
    stream: StreamSettings


def _jetspark_environ() -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("JETSPARK_")))


@lru_cache(maxsize=4)
def _settings_of(environ: tuple[tuple[str, str], ...]) -> _JobSettings:
    from jetspark.jdbc.connections import JdbcConnections
    from jetspark.kafka.clusters import KafkaClusters
    from jetspark.settings import (
        DagLimits,
        DataSettings,
        JdbcSettings,
        KafkaSettings,
        RedisSettings,
        StreamSettings,
    )

    redis = RedisSettings()
    return _JobSettings(
        allowed_python_modules=tuple(DagLimits().allowed_python_modules),
        metrics_url=redis.url,
        metrics_cluster=redis.cluster,
        data=DataSettings(),
        jdbc=JdbcConnections.parse(JdbcSettings().connections),
        kafka=KafkaClusters.parse(KafkaSettings().clusters),
        stream=StreamSettings(),
    )


def _job_settings() -> _JobSettings:
    """The settings, parsed once per value of the ``JETSPARK_`` environment (the settings
    models a job took 4-5 ms to build; a setting changed, as tests do, is read again)."""
    return _settings_of(_jetspark_environ())


@dataclass
class JobControl:
    """Signals from the worker to a running job."""

    job_group: str
    """The Spark job group the worker set for this job's thread."""
    job_id: uuid.UUID = field(default_factory=uuid.uuid4)
    """The job's id (its snapshots and epochs are recorded under it)."""
    cancelled: threading.Event = field(default_factory=threading.Event)
    handover: threading.Event = field(default_factory=threading.Event)
    """The worker is stopping (SIGTERM): a stream ends at its next barrier once its last
    snapshot is committed, raising ``JobHandedOver``, so another worker resumes it."""
    results_cap: int = RESULTS_CAP
    epochs: EpochLog | None = None
    """Set for jobs the worker runs: streaming jobs commit their epochs through it."""
    redis: RedisTarget = field(default_factory=RedisTarget.from_settings)
    snapshot_history: SnapshotHistoryLog | None = None
    """Set by the worker: each snapshot's start and failure go to the job's history (its
    commit goes with ``epochs.commit``)."""
    marks: Callable[[], StreamMarks] | None = None
    """Set by the epoch engine: every processor's watermarks so far (read from another thread)."""
    behind: deque[tuple[int, int]] = field(default_factory=lambda: deque(maxlen=BEHIND_KEPT))
    """Set by the epoch engine: spans of wall-clock ms in which the stream ran behind its
    epoch interval (an epoch started later than due, its sources' input waiting); the live
    metrics measure built-in vertices' backpressure against them."""
    counts: Callable[[], Mapping[str, VertexCounts]] | None = None
    """Set by the engine: the per-vertex counts known so far (the live metrics read it from
    another thread; it may raise while the engine adds vertices)."""
    timings: dict[str, Any] = field(default_factory=dict)
    """The run's phases and their ISO times (``worker/timings.py``); the engine adds
    ``planned``."""
    allowed_python_modules: tuple[str, ...] = field(
        default_factory=lambda: _job_settings().allowed_python_modules
    )
    """Modules a ``python`` vertex may load its class from: the worker's setting, read where
    the job's control is made, so ops never read the environment."""
    metrics_url: str | None = field(default_factory=lambda: _job_settings().metrics_url)
    """The Redis Python processors publish live metrics to (none: not published)."""
    metrics_cluster: bool = field(default_factory=lambda: _job_settings().metrics_cluster)
    """``metrics_url`` names a node of a Redis Cluster."""
    data: DataSettings = field(default_factory=lambda: _job_settings().data)
    """Where ``source.files`` may read and ``sink.files`` write (the data roots): the worker's
    setting, read where the job's control is made."""
    jdbc: JdbcConnections = field(default_factory=lambda: _job_settings().jdbc)
    """The databases ``source.jdbc`` and ``sink.jdbc`` may use (``JETSPARK_JDBC_CONNECTIONS``),
    each checked against the job's principal (``redis.principal``) when it is used."""
    kafka: KafkaClusters = field(default_factory=lambda: _job_settings().kafka)
    """The Kafka clusters ``source.kafka`` / ``sink.kafka`` may use and their topic rules
    (``JETSPARK_KAFKA_CLUSTERS``), checked against the job's principal when used."""
    stream: StreamSettings = field(default_factory=lambda: _job_settings().stream)
    """How a streaming job's epochs are paced and sized (``JETSPARK_STREAM_``)."""


class JobHandedOver(Exception):
    """A stream stopped for its worker's shutdown with its last snapshot committed."""


@dataclass
class VertexCounts:
    items_in: int = 0
    items_out: int = 0


@dataclass
class JobOutcome:
    """What a finished job produced: ``sink.results`` records and per-vertex counts."""

    results: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Records per ``sink.results`` vertex, in order, at most ``results_cap`` in all."""
    vertex_counts: dict[str, VertexCounts] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)
    sinks: list[str] = field(default_factory=list)

    @property
    def items_in(self) -> int:
        """Items that entered the DAG: what its sources emitted."""
        return sum(self.vertex_counts[s].items_out for s in self.sources if s in self.vertex_counts)

    @property
    def items_out(self) -> int:
        """Items that left the DAG: what its sinks received."""
        return sum(self.vertex_counts[s].items_in for s in self.sinks if s in self.vertex_counts)
