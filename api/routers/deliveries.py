"""``GET /v1/jobs/{id}/deliveries``: the webhook deliveries of a job and how each went."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel

from api.deps import PrincipalDep, SessionDep
from api.problems import PROBLEM_RESPONSES
from jetspark.db.tables import WebhookDelivery
from jetspark.jobs import service
from jetspark.webhooks import delivery_queue

router = APIRouter(prefix="/v1", tags=["jobs"], responses=PROBLEM_RESPONSES)


class DeliveryView(BaseModel):
    """One status change POSTed (or being POSTed) to one webhook URL."""

    id: uuid.UUID
    """The delivery id (``X-Jetspark-Delivery``), the same on every attempt."""
    seq: int
    url: str
    source: Literal["job", "server"]
    state: Literal["pending", "delivered", "failed", "refused"]
    """``failed``: given up after the attempts or age allowed; ``refused``: the target
    rules refused the URL at delivery."""
    attempts: int
    status: str
    """The job status the delivery announces."""
    created_at: datetime
    next_attempt_at: datetime | None
    finished_at: datetime | None
    last_status_code: int | None
    last_error: str | None

    @classmethod
    def of(cls, row: WebhookDelivery) -> DeliveryView:
        status = delivery_queue.status_of(row.body)
        return cls(
            id=row.id,
            seq=row.seq,
            url=row.url,
            source=row.source,
            state=row.state,
            attempts=row.attempts,
            status=status,
            created_at=row.created_at,
            next_attempt_at=row.next_attempt_at if row.state == "pending" else None,
            finished_at=row.finished_at,
            last_status_code=row.last_status_code,
            last_error=row.last_error,
        )


class DeliveryPage(BaseModel):
    items: list[DeliveryView]
    next_cursor: int | None
    """``after`` of the next page (None at the end)."""


@router.get(
    "/jobs/{job_id}/deliveries", operation_id="jobs-deliveries", response_model=DeliveryPage
)
def job_deliveries(
    job_id: uuid.UUID,
    session: SessionDep,
    principal: PrincipalDep,
    after: Annotated[int, Query(ge=0, le=2**62)] = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> DeliveryPage:
    """The job's webhook deliveries, oldest first, after ``seq`` ``after``. A principal sees
    those to its job's ``config.notify`` URLs; an admin also the server's default ones."""
    service.get_job(session, job_id, principal)  # 404 for another principal's job
    sources = ["job", "server"] if principal.admin else ["job"]
    rows = delivery_queue.list_for_job(
        session, job_id, sources=sources, after=after, limit=limit + 1
    )
    more = len(rows) > limit
    rows = rows[:limit]
    return DeliveryPage(
        items=[DeliveryView.of(row) for row in rows],
        next_cursor=rows[-1].seq if more else None,
    )
