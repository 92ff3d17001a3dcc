"""Tables: jobs, their status history (an audit trail of rows), and snapshot metadata."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    DateTime,
    ForeignKey,
    Identity,
    Index,
    Integer,
    String,
    Text,
    func,
)
from sqlalchemy.dialects.postgresql import JSONB, UUID
from sqlalchemy.orm import Mapped, mapped_column

from jetspark.db.base import Base
from jetspark.jobs.status import JobStatus

_STATUS_VALUES = ", ".join(f"'{s.value}'" for s in JobStatus)

LEGACY_PRINCIPAL = "legacy"
"""The owner of rows made before principals existed (admins see them)."""


class Job(Base):
    """One submitted DAG and where it is in its life."""

    __tablename__ = "jobs"
    __table_args__ = (
        CheckConstraint(f"status IN ({_STATUS_VALUES})", name="status_known"),
        Index("ix_jobs_created_at_id", "created_at", "id"),
        Index("ix_jobs_status", "status"),
        Index("ix_jobs_status_finished_at", "status", "finished_at"),
        Index("ix_jobs_principal_created_at_id", "principal", "created_at", "id"),
        Index("ix_jobs_principal_status", "principal", "status"),
        # An Idempotency-Key is one principal's: another's replay of it makes a new job.
        Index("ix_jobs_principal_idempotency_key", "principal", "idempotency_key", unique=True),
    )

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True, default=uuid.uuid4)
    name: Mapped[str] = mapped_column(String(256))
    principal: Mapped[str] = mapped_column(String(64), server_default=LEGACY_PRINCIPAL)
    """Who submitted it (``jetspark.tenants.principals``): only they and admins see it."""
    status: Mapped[str] = mapped_column(String(16), default=JobStatus.QUEUED.value)
    definition: Mapped[dict[str, Any]] = mapped_column(JSONB)
    """The submitted body (name, dag, config) as accepted."""
    plan: Mapped[dict[str, Any] | None] = mapped_column(JSONB, nullable=True)
    """The execution plan computed at submission."""
    attempt: Mapped[int] = mapped_column(Integer, default=0)
    worker: Mapped[str | None] = mapped_column(String(128), nullable=True)
    fencing_token: Mapped[int] = mapped_column(BigInteger, default=0)
    """Grows with every claim; a worker's writes carry the token it claimed with."""
    lease_expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    version: Mapped[int] = mapped_column(Integer, default=1)
    """Grows with every change of the row; the ETag of the job view."""
    idempotency_key: Mapped[str | None] = mapped_column(String(256))
    request_fingerprint: Mapped[str | None] = mapped_column(String(64))
    error_type: Mapped[str | None] = mapped_column(String(256))
    error_message: Mapped[str | None] = mapped_column(Text)
    error_chain: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONB, nullable=True)
    """A failure's exception chain, outermost first (``jetspark.joblogs.exception_chain``)."""
    items_in: Mapped[int] = mapped_column(BigInteger, default=0)
    items_out: Mapped[int] = mapped_column(BigInteger, default=0)
    vertex_counts: Mapped[dict[str, Any] | None] = mapped_column(JSONB, nullable=True)
    """Items in/out per vertex, recorded when the job ends (and at every epoch of a stream)."""
    last_snapshot: Mapped[dict[str, Any] | None] = mapped_column(JSONB, nullable=True)
    """The summary of the job's last committed snapshot."""
    metrics: Mapped[dict[str, Any] | None] = mapped_column(JSONB, nullable=True)
    """The final ``JobMetrics`` document, stored with the job's last status by its worker."""
    timings: Mapped[dict[str, Any] | None] = mapped_column(JSONB, nullable=True)
    """The last attempt's phases and times (``worker/timings.py``), stored when it ends."""
    webhooks: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONB, nullable=True)
    """Where its status changes are POSTed, fixed at submission: ``{"url", "source"}``,
    source ``job`` (its ``config.notify``) or ``server`` (``JETSPARK_WEBHOOK_DEFAULT_URLS``)."""
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    announced_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class JobTransition(Base):
    """One status change of a job, with its cause: the job's history is rows, not overwrites."""

    __tablename__ = "job_transitions"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    job_id: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), ForeignKey("jobs.id", ondelete="CASCADE"), index=True
    )
    from_status: Mapped[str | None] = mapped_column(String(16))
    to_status: Mapped[str] = mapped_column(String(16))
    cause: Mapped[str] = mapped_column(Text)
    worker: Mapped[str | None] = mapped_column(String(128))
    attempt: Mapped[int] = mapped_column(Integer)
    rule: Mapped[str | None] = mapped_column(String(32))
    """The name of the ``orchestration.RULES`` rule that allowed the move (None: before 0012
    named them)."""
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class WorkerRow(Base):
    """A live worker process (``jetspark.jobs.liveness``): while it lives it holds a
    session-level advisory lock keyed by ``lock_key`` on a connection of its own, and beats
    ``heartbeat_at``. Its death (SIGKILL, OOM, power) ends the session and so releases the
    lock, which the other workers see in ``pg_locks``."""

    __tablename__ = "workers"

    id: Mapped[str] = mapped_column(String(128), primary_key=True)
    lock_key: Mapped[int] = mapped_column(Integer, Identity(), unique=True)
    host: Mapped[str] = mapped_column(String(256))
    pid: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    heartbeat_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now()
    )


class Snapshot(Base):
    """Metadata of a committed snapshot; the state itself lives in Redis.

    ``job_id`` has no foreign key: a named snapshot outlives its job (deleting a job deletes
    its unnamed snapshots, ``jetspark.jobs.deletion``)."""

    __tablename__ = "snapshots"
    __table_args__ = (
        Index("ix_snapshots_job_id_snapshot_id", "job_id", "snapshot_id", unique=True),
        Index("ix_snapshots_principal_name", "principal", "name", unique=True),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    job_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True))
    """The job whose run wrote the state (its Redis keys are named after it)."""
    snapshot_id: Mapped[int] = mapped_column(BigInteger)
    name: Mapped[str | None] = mapped_column(String(256))
    """Set when the snapshot is exported under a name (unique per principal)."""
    principal: Mapped[str | None] = mapped_column(String(64))
    """The owner of the name: the job's principal, set on export."""
    epoch: Mapped[int] = mapped_column(BigInteger)
    source_offsets: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    stats: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    """Bytes and keys per vertex."""
    dag_fingerprint: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    committed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class SnapshotHistory(Base):
    """One snapshot a stream took or tried to take, for its history (``GET
    /v1/jobs/{id}/snapshots``, ``jetspark.jobs.snapshot_history``): kept for the job's last
    ``JETSPARK_STREAM_SNAPSHOT_HISTORY`` snapshots, failed and abandoned ones included, and
    deleted with the job (foreign key, ``ON DELETE CASCADE``). Not the snapshot itself: a
    committed one's state and metadata are ``Snapshot``'s and go when a newer one commits."""

    __tablename__ = "snapshot_history"
    __table_args__ = (
        Index("ux_snapshot_history_job_attempt_snapshot", "job_id", "attempt", "snapshot_id",
              unique=True),
        CheckConstraint(
            "state IN ('in_progress', 'committed', 'failed', 'abandoned')", name="state_known"
        ),
    )  # fmt: skip

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    job_id: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), ForeignKey("jobs.id", ondelete="CASCADE")
    )
    attempt: Mapped[int] = mapped_column(Integer)
    """The job's attempt that took it (a lost worker's attempt leaves its snapshot behind)."""
    snapshot_id: Mapped[int] = mapped_column(BigInteger)
    epoch: Mapped[int] = mapped_column(BigInteger)
    state: Mapped[str] = mapped_column(String(16))
    """``in_progress``, ``committed``, ``failed`` (its write or commit failed: the job failed
    with it) or ``abandoned`` (its attempt stopped or lost the job before it committed)."""
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    """When the commit thread began writing its state."""
    written_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    """When its state was in the snapshot store, with every backup it waited for."""
    ended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    """When it committed in PostgreSQL, failed or was abandoned."""
    vertices: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    """Per stateful vertex, its state's ``keys``, ``rows`` and ``bytes``."""
    replication: Mapped[dict[str, Any] | None] = mapped_column(JSONB, nullable=True)
    """The ``replication`` entry (``backup_count``, ``replicas`` acknowledged, ``short``)."""
    reason: Mapped[str | None] = mapped_column(Text)
    """Why it failed or was abandoned."""


class JobResultPage(Base):
    """Records that reached one ``sink.results`` vertex, numbered ``first_seq`` to
    ``last_seq`` in the order they were kept: a JSON array of up to ``PAGE_RECORDS``.

    Stored a page to a row, not a record to a row: PostgreSQL stores 100k records as 100 rows
    in 0.06 s, as 100k rows in 0.25 s (issue 16). Its job must exist and its deletion
    deletes it, as a foreign key with ``ON DELETE CASCADE`` would; statement-level triggers
    (migration 0010) keep that rule. Read records through ``JobResult``.
    """

    __tablename__ = "job_result_pages"
    __table_args__ = (
        Index("ux_job_result_pages_job_id_last_seq", "job_id", "last_seq", unique=True),
        CheckConstraint("last_seq >= first_seq", name="pages_are_not_empty"),
    )

    job_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    first_seq: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    last_seq: Mapped[int] = mapped_column(BigInteger)
    vertex: Mapped[str] = mapped_column(String(256))
    items: Mapped[list[Any]] = mapped_column(JSONB)


class JobResult(Base):
    """One record that reached a ``sink.results`` vertex, in the order it was kept: a row of
    the ``job_results`` view, which unfolds ``job_result_pages`` (read-only)."""

    __tablename__ = "job_results"
    __table_args__ = ({"info": {"is_view": True}},)

    job_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    seq: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    vertex: Mapped[str] = mapped_column(String(256))
    item: Mapped[dict[str, Any]] = mapped_column(JSONB)


class LifecycleRequest(Base):
    """A lifecycle POST (cancel, suspend, resume, restart) made with an Idempotency-Key: a
    retry with the same key acts once and answers with the job as it is."""

    __tablename__ = "lifecycle_requests"

    principal: Mapped[str] = mapped_column(String(128), primary_key=True)
    """Keys are per principal, as a submission's are."""
    key: Mapped[str] = mapped_column(String(256), primary_key=True)
    job_id: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), ForeignKey("jobs.id", ondelete="CASCADE"), index=True
    )
    action: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class WebhookDelivery(Base):
    """One status change of a job to POST to one URL: the webhook outbox.

    Inserted in the transaction of the status change (``orchestration``), so a committed
    change always has its deliveries; the deliverer claims due rows with ``SKIP LOCKED``.
    """

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        CheckConstraint(
            "state IN ('pending', 'delivered', 'failed', 'refused')", name="delivery_state_known"
        ),
        Index(
            "ix_webhook_deliveries_due",
            "next_attempt_at",
            postgresql_where="state = 'pending'",
        ),
        Index("ix_webhook_deliveries_job_id_seq", "job_id", "seq"),
    )

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    """The delivery id (``X-Jetspark-Delivery``): the same on every attempt."""
    seq: Mapped[int] = mapped_column(BigInteger, Identity(), unique=True)
    job_id: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), ForeignKey("jobs.id", ondelete="CASCADE")
    )
    url: Mapped[str] = mapped_column(Text)
    source: Mapped[str] = mapped_column(String(8))
    """``job`` (the job's ``config.notify``) or ``server`` (the default list)."""
    body: Mapped[str] = mapped_column(Text)
    """The JSON text POSTed, fixed when the change committed (signed as sent)."""
    state: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now()
    )
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    """When it was delivered or given up."""
    last_status_code: Mapped[int | None] = mapped_column(Integer)
    last_error: Mapped[str | None] = mapped_column(Text)
