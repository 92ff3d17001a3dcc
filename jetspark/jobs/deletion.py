"""Deleting finished jobs and named snapshots: every row and Redis key of theirs.

``purge`` is the one deletion of jobs: ``DELETE /v1/jobs/{id}`` (``delete_job``) and the
retention sweep (``jetspark.jobs.retention``) both call it on rows they have locked. A job's
rows in ``job_transitions``, ``job_results`` and ``lifecycle_requests`` (its lifecycle
Idempotency-Keys; its submission's key is on its own row) go by their foreign keys' cascade
(``job_result_pages``' by migration 0010's trigger), its unnamed snapshots here; its named ones
stay (``Snapshot`` has no foreign key) until ``delete_snapshot``. The Redis keys
(``Keys.job_keys``, each snapshot's partition hashes) are deleted before the caller commits,
so a Redis that fails leaves the job whole, to try again, and never rows gone with their
keys left behind.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from jetspark.db.tables import Job, Snapshot
from jetspark.jobs import orchestration
from jetspark.jobs.orchestration import JobNotFound, OrchestrationError
from jetspark.jobs.snapshots import SnapshotConflict
from jetspark.jobs.status import TERMINAL_STATUSES, JobStatus
from jetspark.queue.keys import Keys
from jetspark.redis_client import RedisClient
from jetspark.tenants.principals import LOCAL, Principal

DELETE_CHUNK = 512
"""Keys per ``DEL``."""

FINISHED = sorted(s.value for s in TERMINAL_STATUSES)


class JobNotFinished(OrchestrationError):
    """Only a finished job is deleted (409)."""

    def __init__(self, job_id: uuid.UUID, status: str) -> None:
        super().__init__(
            f"job {job_id} is {status}: only a finished job ({', '.join(FINISHED)}) can be "
            "deleted; cancel it first"
        )


class SnapshotNotFound(Exception):
    """No snapshot of the job has the name (or it is another principal's): 404."""

    def __init__(self, job_id: uuid.UUID, name: str) -> None:
        super().__init__(f"job {job_id} has no snapshot named {name!r}")


def partition_count(stats: dict[str, Any] | None, job: Job | None) -> int:
    """How many partition hashes a snapshot has: its stats say (a committed one), else its
    job's plan (a planned epoch's row, whose state may be half-written)."""
    counted = (stats or {}).get("partition_count")
    if counted is None and job is not None:
        counted = (job.plan or {}).get("partition_count")
    if counted is None and job is not None:
        counted = (job.definition.get("config") or {}).get("partition_count")
    return int(counted or 271)


def delete_keys(client: RedisClient, names: Sequence[str]) -> None:
    """``DEL`` the keys, a chunk at a time (a cluster client splits a chunk by slot)."""
    for first in range(0, len(names), DELETE_CHUNK):
        client.delete(*names[first : first + DELETE_CHUNK])


def purge(session: Session, client: RedisClient, keys: Keys, jobs: Sequence[Job]) -> None:
    """Delete ``jobs`` (finished, locked by the caller) with everything of theirs but their
    named snapshots; NOTIFYs each deletion. The caller commits (or rolls back on an error)."""
    if not jobs:
        return
    by_id = {job.id: job for job in jobs}
    unnamed = session.execute(
        delete(Snapshot)
        .where(Snapshot.job_id.in_(list(by_id)), Snapshot.name.is_(None))
        .returning(Snapshot.job_id, Snapshot.snapshot_id, Snapshot.stats)
    ).all()
    names = [name for job in jobs for name in keys.job_keys(job.id, job.attempt)]
    for job_id, snapshot_id, stats in unnamed:
        count = partition_count(stats, by_id[job_id])
        names.extend(keys.snapshot_keys(job_id, snapshot_id, count))
    session.execute(
        delete(Job).where(Job.id.in_(list(by_id))).execution_options(synchronize_session=False)
    )
    for job in jobs:
        orchestration.notify_deleted(session, job)
    delete_keys(client, names)


def delete_job(
    session: Session,
    client: RedisClient,
    keys: Keys,
    job_id: uuid.UUID,
    principal: Principal = LOCAL,
) -> Job:
    """Delete a finished job of ``principal`` (``purge``); commits. Another principal's job
    is not found; an unfinished one is refused (``JobNotFinished``)."""
    job = session.execute(
        select(Job).where(Job.id == job_id).with_for_update()
    ).scalar_one_or_none()
    if job is None or not principal.owns(job.principal):
        raise JobNotFound(job_id)
    if not JobStatus(job.status).is_terminal:
        raise JobNotFinished(job_id, job.status)
    try:
        purge(session, client, keys, [job])
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return job


def delete_snapshot(
    session: Session,
    client: RedisClient,
    keys: Keys,
    job_id: uuid.UUID,
    name: str,
    principal: Principal = LOCAL,
) -> None:
    """Delete the snapshot of job ``job_id`` named ``name``; commits. The job may be gone
    (a named snapshot outlives it). Refused (``SnapshotConflict``) while an unfinished job
    of its owner starts from it (``config.initial_snapshot``). Of a job that has not
    finished, it only loses its name: it may be the job's restore point, and the job's
    worker drops it with its state once a newer snapshot is committed."""
    row = session.execute(
        select(Snapshot).where(Snapshot.job_id == job_id, Snapshot.name == name).with_for_update()
    ).scalar_one_or_none()
    if row is None or not principal.owns(row.principal):
        raise SnapshotNotFound(job_id, name)
    users = list(
        session.execute(
            select(Job.id)
            .where(
                Job.principal == row.principal,
                Job.status.not_in(FINISHED),
                Job.definition["config"]["initial_snapshot"].astext == name,
            )
            .limit(3)
        ).scalars()
    )
    if users:
        raise SnapshotConflict(
            f"snapshot {name!r} is in use: unfinished job(s) {', '.join(map(str, users))} "
            "start from it (config.initial_snapshot); delete it once they have finished"
        )
    job = session.get(Job, job_id)
    try:
        if job is not None and not JobStatus(job.status).is_terminal:
            row.name = None
            row.principal = None
        else:
            count = partition_count(row.stats, job)
            session.delete(row)
            session.flush()
            delete_keys(client, keys.snapshot_keys(job_id, row.snapshot_id, count))
        session.commit()
    except BaseException:
        session.rollback()
        raise
