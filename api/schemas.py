"""Response views of the API."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from jetspark.dag.plan import EdgePlan, ExecutionPlan
from jetspark.db.tables import Job, JobTransition
from jetspark.jobs.snapshots import under_replication
from jetspark.jobs.status import JobStatus
from jetspark.metrics.epochs import EpochTiming


class ExceptionLink(BaseModel):
    """One exception of a failure's chain: the error, then what caused it."""

    type: str
    message: str
    traceback: str
    """Python's; a Python processor's own is in the message of the Spark error it caused."""


class JobError(BaseModel):
    type: str
    message: str
    chain: list[ExceptionLink] | None = None
    """The exception chain of a failure, outermost first (also in the job's logs)."""


class Progress(BaseModel):
    items_in: int
    items_out: int


class SparkJobTiming(BaseModel):
    """One Spark job a jetspark job ran."""

    id: int
    stages: list[int]
    status: str | None = None
    submitted: datetime | None
    """When its first stage was submitted (None if every stage was skipped)."""


class Timings(BaseModel):
    """When the last attempt went through each phase, to explain a slow run."""

    queued: datetime | None = None
    claimed: datetime | None = None
    running: datetime | None = None
    planned: datetime | None = None
    spark_jobs: list[SparkJobTiming] = []
    computed: datetime | None = None
    """The engine finished: its results are in the worker, to be written."""
    results_written: datetime | None = None
    finished: datetime | None = None
    restoring: datetime | None = None
    """A stream's restore from a snapshot began."""
    restored: datetime | None = None
    """It ended: the first epoch was asked for."""
    first_epoch: datetime | None = None
    """A stream's first epoch of this attempt committed."""
    first_snapshot: datetime | None = None
    """A stream's first snapshot of this attempt committed (its timings are stored then)."""
    spark_application: str | None = None
    """The Spark application that ran the attempt (the worker's; ``app-...`` on a cluster):
    its jobs are under this id in Spark's UI or History Server, when an operator runs one."""
    spark_job_group: str | None = None
    """The Spark job group of the job's Spark jobs (``spark_jobs`` lists their ids and
    stage ids)."""
    epochs: list[EpochTiming] = []
    """A stream's first epochs and its latest ones, each with where its time went."""


class UnderReplication(BaseModel):
    """The job's last snapshot has fewer backups than ``config.backup_count``: a Redis node
    that held them is lost. The job goes on; the next snapshot after replicas are back has
    them all again, and this is cleared."""

    backup_count: int
    replicas: int
    """The fewest replicas any primary written to acknowledged."""
    since: datetime | None
    """When the job's snapshots became under-replicated."""
    short: dict[str, int] = {}
    """Each primary (``host:port``) with fewer than ``backup_count`` replicas: how many."""


class JobView(BaseModel):
    """A job as clients see it."""

    id: uuid.UUID
    name: str
    status: JobStatus
    version: int
    attempt: int
    worker: str | None
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    error: JobError | None
    progress: Progress
    vertex_counts: dict[str, Any] | None
    last_snapshot: dict[str, Any] | None = None
    under_replicated: UnderReplication | None = None
    """Set while the job's last snapshot lacks backups (a lost Redis node), until one has
    them all again; None for a finished job."""
    plan: dict[str, Any] | None
    timings: Timings | None = None
    """Set once an attempt ended (COMPLETED or FAILED)."""

    @classmethod
    def of(cls, job: Job) -> JobView:
        error = (
            JobError(
                type=job.error_type,
                message=job.error_message or "",
                chain=[ExceptionLink.model_validate(link) for link in job.error_chain]
                if job.error_chain
                else None,
            )
            if job.error_type
            else None
        )
        return cls(
            id=job.id,
            name=job.name,
            status=JobStatus(job.status),
            version=job.version,
            attempt=job.attempt,
            worker=job.worker,
            created_at=job.created_at,
            updated_at=job.updated_at,
            started_at=job.started_at,
            finished_at=job.finished_at,
            error=error,
            progress=Progress(items_in=job.items_in, items_out=job.items_out),
            vertex_counts=job.vertex_counts,
            last_snapshot=job.last_snapshot,
            under_replicated=_under_replicated(job),
            plan=job.plan,
            timings=Timings.model_validate(job.timings) if job.timings else None,
        )


def _under_replicated(job: Job) -> UnderReplication | None:
    entry = under_replication(job)
    return None if entry is None else UnderReplication.model_validate(entry)


class JobPage(BaseModel):
    items: list[JobView]
    next_cursor: str | None


class ResultPage(BaseModel):
    items: list[dict[str, Any]]
    next_cursor: str | None


class Diagnostic(BaseModel):
    level: str
    message: str


class ValidationReport(BaseModel):
    valid: bool
    diagnostics: list[Diagnostic]
    plan: dict[str, Any]


class StoreNodeView(BaseModel):
    address: str
    """``host:port`` of the Redis node."""
    id: str | None = None
    """The node's cluster id (Redis Cluster only)."""
    health: str | None = None
    """``online``, ``failed``, ``loading`` (a cluster node); a replica's link state on a
    single Redis."""


class PartitionStorageView(BaseModel):
    """Where the partition's snapshot state lives (the seeds' partition table): its keys'
    hash tag, and on a Redis Cluster the tag's slot and the nodes serving it now."""

    hash_tag: str
    cluster: bool
    slot: int | None = None
    primary: StoreNodeView | None = None
    replicas: list[StoreNodeView] = []


class PartitionView(BaseModel):
    key: Any
    canonical_hex: str
    partition_id: int
    partition_count: int
    storage: PartitionStorageView | None = None
    """None when Redis could not be asked (it is down: the partition id stands alone)."""


class Health(BaseModel):
    status: str
    """``ok``, or ``degraded`` while serving with something short (jobs under-replicated)."""
    checks: dict[str, str] = {}
    detail: str | None = None
    """What is degraded, when something is."""


class TransitionView(BaseModel):
    """One status change of a job: the ``data`` of a ``status`` server-sent event."""

    id: int
    job_id: uuid.UUID
    from_status: JobStatus | None
    to_status: JobStatus
    cause: str
    worker: str | None
    attempt: int
    at: datetime

    @classmethod
    def of(cls, row: JobTransition) -> TransitionView:
        return cls(
            id=row.id,
            job_id=row.job_id,
            from_status=JobStatus(row.from_status) if row.from_status else None,
            to_status=JobStatus(row.to_status),
            cause=row.cause,
            worker=row.worker,
            attempt=row.attempt,
            at=row.at,
        )


class DagVertexView(BaseModel):
    name: str
    processor: str
    parallelism: int
    local_parallelism: int
    stage: int


class DagEdgeView(BaseModel):
    source: str = Field(serialization_alias="from")
    to: str
    from_ordinal: int
    to_ordinal: int
    routing: str
    exchange: str
    distributed: bool
    priority: int
    buffered: bool
    key: str | None
    label: str
    """How the edge routes, in a few words: ``partitioned(word) distributed``."""


class DagView(BaseModel):
    """A job's DAG as planned: vertices with their stage and parallelism, edges with routing."""

    job_id: uuid.UUID
    members: int
    stages: int
    vertices: list[DagVertexView]
    edges: list[DagEdgeView]

    @classmethod
    def of(cls, job: Job) -> DagView:
        plan = ExecutionPlan.model_validate(job.plan)
        return cls(
            job_id=job.id,
            members=plan.members,
            stages=len(plan.stages),
            vertices=[
                DagVertexView(
                    name=v.name,
                    processor=v.processor,
                    parallelism=v.parallelism,
                    local_parallelism=v.local_parallelism,
                    stage=v.stage,
                )
                for v in plan.vertices
            ],
            edges=[
                DagEdgeView(
                    source=e.source,
                    to=e.to,
                    from_ordinal=e.from_ordinal,
                    to_ordinal=e.to_ordinal,
                    routing=e.routing.value,
                    exchange=e.exchange.value,
                    distributed=e.distributed,
                    priority=e.priority,
                    buffered=e.buffered,
                    key=e.key,
                    label=_edge_label(e),
                )
                for e in plan.edges
            ],
        )


def _edge_label(edge: EdgePlan) -> str:
    words = [f"{edge.routing.value}({edge.key})" if edge.key else edge.routing.value]
    if edge.distributed:
        words.append("distributed")
    if edge.priority:
        words.append(f"priority {edge.priority}")
    if edge.buffered:
        words.append("buffered")
    return " ".join(words)
