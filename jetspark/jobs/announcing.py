"""Telling the workers about QUEUED jobs: once when queued, again when Redis may have lost it.

PostgreSQL is the truth; an announcement is a hint (an entry on the jobs stream). A job whose
announcement is lost stays QUEUED and is found again: by an idle worker's poll, or by the
reconciler announcing it anew.
"""

from __future__ import annotations

import contextlib
import uuid
from datetime import datetime, timedelta

import redis
from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from jetspark.db.tables import Job
from jetspark.jobs.status import JobStatus
from jetspark.queue.keys import Keys
from jetspark.queue.stream import announce
from jetspark.redis_client import RedisClient


def announce_job(client: RedisClient, keys: Keys, job_id: uuid.UUID) -> None:
    """Tell the workers (the job's ``announced_at`` was stamped when it was queued); if Redis
    is down the job stays QUEUED and an idle worker finds it in PostgreSQL."""
    with contextlib.suppress(redis.RedisError):
        announce(client, keys, job_id)


def announce_again(
    session: Session,
    client: RedisClient,
    keys: Keys,
    *,
    now: datetime,
    older_than: timedelta | None,
) -> int:
    """Announce every QUEUED job last announced before ``now - older_than`` (every one when
    ``older_than`` is None: Redis lost its data) and stamp ``announced_at``; the caller
    commits. Returns how many; a Redis error propagates (the caller retries)."""
    queued = select(Job).where(Job.status == JobStatus.QUEUED.value)
    if older_than is not None:
        queued = queued.where(or_(Job.announced_at.is_(None), Job.announced_at < now - older_than))
    announced = 0
    for job in list(session.execute(queued).scalars()):
        announce(client, keys, job.id)
        job.announced_at = now
        announced += 1
    return announced
