"""Finding a job as its principal may see it (shared by the job and snapshot services)."""

from __future__ import annotations

import uuid

from sqlalchemy.orm import Session

from jetspark.db.tables import Job
from jetspark.jobs.orchestration import JobNotFound
from jetspark.tenants.principals import Principal


def get_job(session: Session, job_id: uuid.UUID, principal: Principal | None = None) -> Job:
    """The job, if it exists and ``principal`` (when given) owns it: another principal's job
    is "not found" (404), so its existence is not told either."""
    job = session.get(Job, job_id)
    if job is None or (principal is not None and not principal.owns(job.principal)):
        raise JobNotFound(job_id)
    return job
