"""A job as a run leaves it, written straight to PostgreSQL and Redis: its history, results,
lifecycle request, snapshots (planned, committed, named) and a key of every Redis family."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

import redis
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from jetspark.db.tables import (
    Job,
    JobResult,
    JobResultPage,
    JobTransition,
    LifecycleRequest,
    Snapshot,
    SnapshotHistory,
)
from jetspark.jobs import orchestration
from jetspark.jobs.status import JobStatus
from jetspark.queue import events
from jetspark.queue.keys import Keys

PARTITIONS = 4
"""The seeded jobs' partition count: few partition hashes per snapshot."""


@dataclass(frozen=True)
class Seeded:
    id: uuid.UUID
    principal: str
    named: str | None
    """The name of its exported snapshot (id 2), if it has one."""


def seed_job(
    session: Session,
    client: redis.Redis,
    keys: Keys,
    *,
    principal: str,
    status: JobStatus = JobStatus.COMPLETED,
    finished_at: datetime | None = None,
    named: str | None = None,
    initial_snapshot: str | None = None,
) -> Seeded:
    """A job of ``principal`` in ``status`` (finished at ``finished_at``) with two attempts,
    rows in every table and keys in Redis; with ``named``, its snapshot 2 is exported."""
    config: dict[str, object] = {"partition_count": PARTITIONS}
    if initial_snapshot is not None:
        config["initial_snapshot"] = initial_snapshot
    job = Job(
        name="seeded",
        principal=principal,
        definition={"name": "seeded", "config": config},
        plan={"partition_count": PARTITIONS},
        status=status.value,
        attempt=2,
        finished_at=(finished_at or datetime.now(UTC)) if status.is_terminal else None,
    )
    session.add(job)
    orchestration.record_creation(session, job)
    session.add(
        JobResultPage(job_id=job.id, first_seq=0, last_seq=0, vertex="out", items=[{"n": 1}])
    )
    session.add(
        LifecycleRequest(principal=principal, key=f"k-{job.id}", job_id=job.id, action="cancel")
    )
    stats = {"partition_count": PARTITIONS, "vertices": {}}
    for snapshot_id, name, committed in ((1, None, True), (2, named, True), (3, None, False)):
        session.add(
            Snapshot(
                job_id=job.id,
                snapshot_id=snapshot_id,
                epoch=snapshot_id,
                name=name,
                principal=principal if name else None,
                source_offsets={"sources": {}},
                stats=stats if committed else {},
                dag_fingerprint="f",
                committed_at=datetime.now(UTC) if committed else None,
            )
        )
        session.add(
            SnapshotHistory(
                job_id=job.id,
                attempt=2,
                snapshot_id=snapshot_id,
                epoch=snapshot_id,
                state="committed" if committed else "in_progress",
                started_at=datetime.now(UTC),
                vertices={},
            )
        )
    session.commit()
    pipe = client.pipeline(transaction=False)
    pipe.rpush(keys.job_logs(job.id), '{"event":"x"}')
    pipe.set(keys.job_log_count(job.id), 1)
    pipe.set(keys.job_metrics(job.id), "{}")
    for attempt in (1, 2):
        pipe.hset(keys.job_processor_metrics(job.id, attempt), "v/0", "{}")
    for snapshot_id in (1, 2, 3):
        for name in keys.snapshot_keys(job.id, snapshot_id, PARTITIONS):
            pipe.hset(name, "vertex", "state")
    pipe.execute()
    events.publish(client, keys, job.id, events.EventKind.log, {"seq": 0})
    return Seeded(job.id, principal, named)


def redis_keys_of(client: redis.Redis, keys: Keys, job_id: uuid.UUID) -> set[str]:
    """Every key that names the job (its id is unique: any such key is the job's)."""
    del keys
    return {str(k) for k in client.scan_iter(match=f"*{job_id}*", count=1000)}


def named_snapshot_keys(keys: Keys, seeded: Seeded) -> set[str]:
    return set(keys.snapshot_keys(seeded.id, 2, PARTITIONS))


def rows_of(session: Session, job_id: uuid.UUID) -> dict[str, int]:
    """How many rows of the job each table holds (snapshots: unnamed and named apart)."""

    def count(table: type, *where: object) -> int:
        query = select(func.count()).select_from(table).where(*where)  # type: ignore[arg-type]
        return int(session.execute(query).scalar_one())

    return {
        "jobs": count(Job, Job.id == job_id),
        "job_transitions": count(JobTransition, JobTransition.job_id == job_id),
        "job_results": count(JobResult, JobResult.job_id == job_id),
        "lifecycle_requests": count(LifecycleRequest, LifecycleRequest.job_id == job_id),
        "unnamed_snapshots": count(Snapshot, Snapshot.job_id == job_id, Snapshot.name.is_(None)),
        "named_snapshots": count(Snapshot, Snapshot.job_id == job_id, Snapshot.name.is_not(None)),
        "snapshot_history": count(SnapshotHistory, SnapshotHistory.job_id == job_id),
    }


GONE = {
    "jobs": 0,
    "job_transitions": 0,
    "job_results": 0,
    "lifecycle_requests": 0,
    "unnamed_snapshots": 0,
    "snapshot_history": 0,
}
