"""Retention: finished jobs are deleted after a time per status and beyond a count.

A job that finished (COMPLETED, FAILED, CANCELLED) more than its status's TTL ago is due, as
is one beyond the ``max_jobs`` most recently finished of its principal. Workers sweep
(``worker.loop``, every ``JETSPARK_RETENTION_INTERVAL_S``); each sweep deletes one batch of
due jobs with ``deletion.purge``, as ``DELETE /v1/jobs/{id}`` does: named snapshots stay.

Safe with any number of workers (and API processes deleting): a sweep runs under a
transaction-level advisory lock (another sweeper skips its turn rather than wait), and takes
the due rows ``FOR UPDATE SKIP LOCKED`` (a row a user is deleting or reading for update is
left to the next sweep). The clock is the caller's, so tests freeze it.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

import structlog
from sqlalchemy import and_, func, or_, select
from sqlalchemy.orm import Session

from jetspark.db.tables import Job
from jetspark.jobs.deletion import FINISHED, purge
from jetspark.jobs.status import JobStatus
from jetspark.queue.keys import Keys
from jetspark.redis_client import RedisClient
from jetspark.settings import RetentionSettings

log = structlog.get_logger("jetspark.retention")

SWEEP_LOCK = (0x6A657473, 0x72657465)
"""The sweep's advisory lock: two 32-bit keys, a space apart from the one-key locks
(``pg_advisory_xact_lock(hashtext(...))``) that serialise a principal's submissions."""


@dataclass(frozen=True)
class Policy:
    ttl: Mapping[JobStatus, timedelta]
    """How long a job of each finished status is kept after it finished."""
    max_jobs: int
    """Finished jobs kept per principal; 0: no limit."""
    batch: int
    """Jobs deleted per sweep (one transaction)."""

    @classmethod
    def of(cls, settings: RetentionSettings) -> Policy:
        return cls(
            ttl={
                JobStatus.COMPLETED: timedelta(seconds=settings.completed_s),
                JobStatus.FAILED: timedelta(seconds=settings.failed_s),
                JobStatus.CANCELLED: timedelta(seconds=settings.cancelled_s),
            },
            max_jobs=settings.max_jobs,
            batch=settings.batch,
        )


def due(session: Session, policy: Policy, now: datetime, limit: int) -> list[uuid.UUID]:
    """Up to ``limit`` due jobs, the earliest finished first: past their TTL, then beyond
    their principal's ``max_jobs``."""
    # Every move to a finished status stamps finished_at (``orchestration._move``): compared
    # bare, the (status, finished_at) index finds the expired.
    expired = or_(
        *(
            and_(Job.status == s.value, Job.finished_at <= now - ttl)
            for s, ttl in policy.ttl.items()
        )
    )
    found = list(
        session.execute(
            select(Job.id).where(expired).order_by(Job.finished_at, Job.id).limit(limit)
        ).scalars()
    )
    finished = func.coalesce(Job.finished_at, Job.updated_at)
    if policy.max_jobs and len(found) < limit:
        ranked = (
            select(
                Job.id,
                finished.label("finished"),
                func.row_number()
                .over(partition_by=Job.principal, order_by=(finished.desc(), Job.id.desc()))
                .label("rank"),
            )
            .where(Job.status.in_(FINISHED))
            .subquery()
        )
        beyond = session.execute(
            select(ranked.c.id)
            .where(ranked.c.rank > policy.max_jobs)
            .order_by(ranked.c.finished, ranked.c.id)
            .limit(limit)
        ).scalars()
        seen = set(found)
        found += [job_id for job_id in beyond if job_id not in seen]
    return found[:limit]


def sweep(session: Session, client: RedisClient, keys: Keys, policy: Policy, now: datetime) -> int:
    """Delete one batch of the jobs due at ``now``; commits. Returns how many were deleted
    (0 also when another process is sweeping)."""
    locked = session.execute(select(func.pg_try_advisory_xact_lock(*SWEEP_LOCK))).scalar_one()
    if not locked:
        session.rollback()
        return 0
    try:
        ids = due(session, policy, now, policy.batch)
        jobs = list(
            session.execute(
                select(Job)
                .where(Job.id.in_(ids), Job.status.in_(FINISHED))
                .with_for_update(skip_locked=True)
            ).scalars()
            if ids
            else []
        )
        purge(session, client, keys, jobs)
        session.commit()
    except BaseException:
        session.rollback()
        raise
    if jobs:
        log.info("retention deleted finished jobs", count=len(jobs))
    return len(jobs)
