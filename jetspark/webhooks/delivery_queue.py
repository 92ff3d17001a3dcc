"""The webhook outbox in PostgreSQL: rows written with a status change, claimed, settled.

``enqueue`` runs inside the transaction that changes the job's status (``orchestration``),
so a change commits with its deliveries or not at all. ``claim_due`` takes due rows with
``FOR UPDATE SKIP LOCKED`` and leases them (``next_attempt_at`` moves past the POST's
deadline), so several API processes share the work and a process that dies mid-POST only
delays a delivery: at least once. ``settle`` records an attempt's outcome if the row is still
the claimer's.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from jetspark.db.tables import Job, WebhookDelivery
from jetspark.jobs.status import JobStatus
from jetspark.webhooks.signing import EVENT

ERROR_CHARS = 1000
"""An error message in a webhook body is cut to this length."""


def _stamp(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def body_of(delivery_id: uuid.UUID, job: Job, previous: JobStatus | None) -> str:
    """The JSON POSTed for ``job``'s change from ``previous``: public fields, no principal."""
    error: dict[str, Any] | None = None
    if job.status == JobStatus.FAILED.value and job.error_type:
        error = {"type": job.error_type, "message": (job.error_message or "")[:ERROR_CHARS]}
    document = {
        "delivery_id": str(delivery_id),
        "event": EVENT,
        "job": {
            "id": str(job.id),
            "name": job.name,
            "status": job.status,
            "previous_status": previous.value if previous is not None else None,
            "version": job.version,
            "attempt": job.attempt,
            "created_at": _stamp(job.created_at),
            "updated_at": _stamp(job.updated_at),
            "started_at": _stamp(job.started_at),
            "finished_at": _stamp(job.finished_at),
            "error": error,
        },
    }
    return json.dumps(document, separators=(",", ":"))


def enqueue(session: Session, job: Job, previous: JobStatus | None) -> int:
    """Add one delivery per webhook of ``job`` for its change from ``previous`` (the
    caller's transaction commits them); returns how many."""
    for hook in job.webhooks or ():
        delivery_id = uuid.uuid4()
        session.add(
            WebhookDelivery(
                id=delivery_id,
                job_id=job.id,
                url=hook["url"],
                source=hook["source"],
                body=body_of(delivery_id, job, previous),
                state="pending",
                attempts=0,
            )
        )
    return len(job.webhooks or ())


@dataclass(frozen=True)
class Claimed:
    """A delivery taken for one attempt."""

    id: uuid.UUID
    job_id: uuid.UUID
    url: str
    body: str
    attempts: int
    """Including this one."""
    created_at: datetime


def claim_due(session: Session, *, limit: int, lease: timedelta) -> list[Claimed]:
    """Take up to ``limit`` due deliveries, oldest due first, for ``lease``; commits."""
    due = (
        select(WebhookDelivery.id)
        .where(WebhookDelivery.state == "pending", WebhookDelivery.next_attempt_at <= func.now())
        .order_by(WebhookDelivery.next_attempt_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
        .scalar_subquery()
    )
    rows = session.execute(
        update(WebhookDelivery)
        .where(WebhookDelivery.id.in_(due))
        .values(
            attempts=WebhookDelivery.attempts + 1,
            next_attempt_at=func.now() + lease,
        )
        .returning(
            WebhookDelivery.id,
            WebhookDelivery.job_id,
            WebhookDelivery.url,
            WebhookDelivery.body,
            WebhookDelivery.attempts,
            WebhookDelivery.created_at,
        )
    ).all()
    session.commit()
    return [Claimed(*row) for row in rows]


def settle(
    session: Session,
    claimed: Claimed,
    *,
    state: str,
    retry_in: timedelta | None = None,
    status_code: int | None = None,
    error: str | None = None,
) -> bool:
    """Record an attempt: ``state`` ``delivered``/``failed``/``refused`` finishes the row,
    ``pending`` with ``retry_in`` schedules the next attempt. False if another claimer took
    the row meanwhile (its lease ran out): its outcome stands. Commits."""
    values: dict[str, Any] = {
        "state": state,
        "last_status_code": status_code,
        "last_error": error[:ERROR_CHARS] if error else None,
    }
    if state == "pending":
        values["next_attempt_at"] = func.now() + (retry_in or timedelta(0))
    else:
        values["finished_at"] = func.now()
    result = session.execute(
        update(WebhookDelivery)
        .where(
            WebhookDelivery.id == claimed.id,
            WebhookDelivery.state == "pending",
            WebhookDelivery.attempts == claimed.attempts,
        )
        .values(**values)
    )
    session.commit()
    return bool(result.rowcount)  # type: ignore[attr-defined]


def next_due_in(session: Session) -> float | None:
    """Seconds until the next pending delivery is due (0 if one is), None if none is."""
    wait = session.execute(
        select(func.extract("epoch", func.min(WebhookDelivery.next_attempt_at) - func.now())).where(
            WebhookDelivery.state == "pending"
        )
    ).scalar_one_or_none()
    return None if wait is None else max(0.0, float(wait))


def list_for_job(
    session: Session, job_id: uuid.UUID, *, sources: list[str], after: int, limit: int
) -> list[WebhookDelivery]:
    """A job's deliveries from ``sources`` in the order they were made, after ``seq``."""
    return list(
        session.execute(
            select(WebhookDelivery)
            .where(
                WebhookDelivery.job_id == job_id,
                WebhookDelivery.source.in_(sources),
                WebhookDelivery.seq > after,
            )
            .order_by(WebhookDelivery.seq)
            .limit(limit)
        ).scalars()
    )


def status_of(body: str) -> str:
    """The job status a delivery's body announces."""
    status: str = json.loads(body)["job"]["status"]
    return status
