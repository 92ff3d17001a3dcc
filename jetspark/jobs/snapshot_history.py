"""A stream's snapshot history, as Flink's checkpoint history: the job's last N snapshots
(``JETSPARK_STREAM_SNAPSHOT_HISTORY``), committed, failed and abandoned, each with when it
started, was written and committed, its duration, its bytes and rows per vertex and the
replicas that acknowledged it.

The worker writes a row when its commit thread starts a snapshot (``started``), and ends it
when the snapshot commits (``committed``, in the commit's transaction) or its write fails
(``ended``). A row left ``in_progress`` by an attempt that is over (its worker died, or the
job finished without it) reads as ``abandoned``: nothing can commit it any more.
History rows are not fenced: a worker that lost its job may still say how its snapshot
ended, and a job deleted meanwhile takes its rows with it (foreign key), so a late write
finds nothing and is dropped.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from jetspark.db.tables import Job, SnapshotHistory
from jetspark.jobs.status import JobStatus

IN_PROGRESS, COMMITTED, FAILED, ABANDONED = "in_progress", "committed", "failed", "abandoned"

ABANDONING = frozenset({"JobCancelled", "JobHandedOver", "StaleFencingToken", "JobBusy"})
"""Errors that end a snapshot because its attempt stopped, not because it went wrong."""

MAX_REASON = 2000
"""A reason is cut to this many characters."""


@dataclass(frozen=True)
class HistoryPage:
    items: list[dict[str, Any]]
    next_cursor: str | None


def started(
    session: Session,
    job_id: uuid.UUID,
    attempt: int,
    snapshot_id: int,
    epoch: int,
    at: datetime,
    *,
    keep: int,
) -> None:
    """A snapshot's write began (again, after a retry: the first start is kept); drops the
    job's records beyond the newest ``keep``. The caller commits."""
    session.execute(
        insert(SnapshotHistory)
        .values(
            job_id=job_id,
            attempt=attempt,
            snapshot_id=snapshot_id,
            epoch=epoch,
            state=IN_PROGRESS,
            started_at=at,
            vertices={},
        )
        .on_conflict_do_nothing(index_elements=["job_id", "attempt", "snapshot_id"])
    )
    newest = (
        select(SnapshotHistory.id)
        .where(SnapshotHistory.job_id == job_id)
        .order_by(SnapshotHistory.id.desc())
        .limit(keep)
    )
    session.execute(
        delete(SnapshotHistory).where(
            SnapshotHistory.job_id == job_id, SnapshotHistory.id.not_in(newest)
        )
    )


def committed(
    session: Session,
    job_id: uuid.UUID,
    attempt: int,
    snapshot_id: int,
    epoch: int,
    *,
    stats: dict[str, Any],
    written_at: datetime,
    at: datetime,
) -> None:
    """The snapshot committed (in the caller's transaction: the epoch's commit). Its row is
    written here if its start's was lost (PostgreSQL away then), started when written."""
    vertices = {
        name: {k: int(v.get(k, 0)) for k in ("keys", "rows", "bytes")}
        for name, v in (stats.get("vertices") or {}).items()
    }
    ended = {
        "state": COMMITTED,
        "written_at": written_at,
        "ended_at": at,
        "vertices": vertices,
        "replication": stats.get("replication"),
        "reason": None,
    }
    session.execute(
        insert(SnapshotHistory)
        .values(
            job_id=job_id,
            attempt=attempt,
            snapshot_id=snapshot_id,
            epoch=epoch,
            started_at=written_at,
            **ended,
        )
        .on_conflict_do_update(index_elements=["job_id", "attempt", "snapshot_id"], set_=ended)
    )


def ended(
    session: Session,
    job_id: uuid.UUID,
    attempt: int,
    snapshot_id: int,
    error: BaseException,
    at: datetime,
) -> None:
    """The snapshot will never commit: ``failed`` for an error of its own, ``abandoned``
    when its attempt stopped (cancelled, handed over, the job lost to another worker). The
    caller commits."""
    kind = type(error).__name__
    state = ABANDONED if kind in ABANDONING else FAILED
    reason = f"{kind}: {error}"[:MAX_REASON]
    session.execute(
        update(SnapshotHistory)
        .where(
            SnapshotHistory.job_id == job_id,
            SnapshotHistory.attempt == attempt,
            SnapshotHistory.snapshot_id == snapshot_id,
            SnapshotHistory.state == IN_PROGRESS,
        )
        .values(state=state, ended_at=at, reason=reason)
    )


def page(session: Session, job: Job, *, limit: int, cursor: str | None) -> HistoryPage:
    """The job's snapshot records, newest first, ``limit`` from ``cursor`` (the last page's
    ``next_cursor``) on."""
    query = select(SnapshotHistory).where(SnapshotHistory.job_id == job.id)
    if cursor is not None:
        query = query.where(SnapshotHistory.id < int(cursor))
    rows = list(session.scalars(query.order_by(SnapshotHistory.id.desc()).limit(limit + 1)))
    more = len(rows) > limit
    rows = rows[:limit]
    return HistoryPage(
        items=[view(row, job) for row in rows],
        next_cursor=str(rows[-1].id) if more and rows else None,
    )


def view(row: SnapshotHistory, job: Job) -> dict[str, Any]:
    """A record as the API shows it; an unfinished one whose attempt is over is abandoned."""
    state, reason = row.state, row.reason
    over = row.attempt < job.attempt or JobStatus(job.status).is_terminal
    if state == IN_PROGRESS and over:
        state = ABANDONED
        reason = f"attempt {row.attempt} ended before the snapshot committed"
    duration_ms = None
    if row.ended_at is not None and state == COMMITTED:
        duration_ms = round((row.ended_at - row.started_at).total_seconds() * 1000, 1)
    write_ms = None
    if row.written_at is not None:
        write_ms = round((row.written_at - row.started_at).total_seconds() * 1000, 1)
    vertices: dict[str, dict[str, int]] = row.vertices or {}
    replication = row.replication or None
    return {
        "snapshot_id": row.snapshot_id,
        "epoch": row.epoch,
        "attempt": row.attempt,
        "state": state,
        "started_at": row.started_at,
        "written_at": row.written_at,
        "ended_at": row.ended_at,
        "duration_ms": duration_ms,
        "write_ms": write_ms,
        "bytes": sum(v.get("bytes", 0) for v in vertices.values()),
        "rows": sum(v.get("rows", 0) for v in vertices.values()),
        "vertices": vertices,
        "backup_count": replication.get("backup_count") if replication else 0,
        "replicas": replication.get("replicas") if replication else None,
        "under_replicated": bool(replication and replication.get("under_replicated")),
        "reason": reason,
    }
