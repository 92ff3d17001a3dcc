"""Where a job's metrics document is read: live from Redis while it runs, else from PostgreSQL."""

from __future__ import annotations

import uuid

from sqlalchemy.orm import Session

from jetspark.db.tables import Job
from jetspark.jobs import service
from jetspark.jobs.status import JobStatus
from jetspark.metrics.report import JobMetrics, MetricsPublisher
from jetspark.queue.keys import Keys
from jetspark.redis_client import RedisClient


def job_metrics(
    session: Session, client: RedisClient, keys: Keys, job_id: uuid.UUID
) -> tuple[Job, JobMetrics]:
    """The job (``JobNotFound`` if none) and its metrics: the final document once it ended
    and one was kept, else the latest in Redis, else an empty one (no vertices yet)."""
    job = service.get_job(session, job_id)
    if JobStatus(job.status).is_terminal and job.metrics:
        return job, JobMetrics.model_validate(job.metrics)
    latest = MetricsPublisher(client, keys).latest(job_id)
    if latest is not None:
        return job, latest
    if job.metrics:
        return job, JobMetrics.model_validate(job.metrics)
    return job, JobMetrics.empty(job_id)
