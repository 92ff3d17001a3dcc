"""Keep Redis consistent with PostgreSQL, the truth.

Re-announces QUEUED jobs that Redis may have lost (it restarted empty, or an XADD failed
after the commit), and requeues jobs whose holder's lease ran out without anybody reclaiming
them (rule ``lease-expired``: a hung worker; a dead one's jobs were requeued by the others'
liveness threads long before). One reconciler runs at a time, under a Redis lock.
"""

from __future__ import annotations

from datetime import timedelta

import structlog
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from jetspark.db.tables import Job
from jetspark.jobs import orchestration
from jetspark.jobs.announcing import announce_again
from jetspark.jobs.orchestration import OrchestrationError
from jetspark.jobs.status import HELD_BY_WORKER, JobStatus
from jetspark.queue.keys import Keys
from jetspark.queue.stream import ensure_group
from jetspark.redis_client import RedisClient

log = structlog.get_logger("jetspark.reconciler")


def reconcile(
    *,
    sessions: sessionmaker[Session],
    client: RedisClient,
    keys: Keys,
    reannounce_after: timedelta,
    lock_ttl: timedelta,
    worker: str,
) -> int:
    """One pass; returns how many jobs were announced again."""
    if not client.set(
        keys.reconciler_lock, worker, nx=True, px=int(lock_ttl.total_seconds() * 1000)
    ):
        return 0
    # Redis restarted empty (the marker and the group are gone): every QUEUED job's entry
    # may be gone with them, so announce them all now rather than after ``reannounce_after``.
    lost = not client.exists(keys.alive_marker)
    lost = ensure_group(client, keys) or lost
    with sessions() as session:
        now = orchestration.now()
        expired = session.execute(
            select(Job.id, Job.worker).where(
                Job.status.in_([s.value for s in HELD_BY_WORKER]),
                Job.lease_expires_at < now,
            )
        )
        for job_id, holder in list(expired):
            try:
                orchestration.transition(
                    session,
                    job_id,
                    JobStatus.QUEUED,
                    rule="lease-expired",
                    cause=f"lease of worker {holder} expired",
                    worker=worker,
                )
                session.commit()
            except OrchestrationError:
                session.rollback()
        older_than = None if lost else reannounce_after
        announced = announce_again(session, client, keys, now=now, older_than=older_than)
        session.commit()
    client.set(keys.alive_marker, worker)  # once every QUEUED job is announced again
    if announced:
        log.info("re-announced queued jobs", count=announced, redis_lost_data=lost)
    return announced
