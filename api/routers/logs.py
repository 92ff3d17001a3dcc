"""``GET /v1/jobs/{id}/logs?from=&size=``: a job's log lines, a page at a time (as Livy's
``GET /batches/{id}/log``). Lines come from ``jetspark.joblogs``; the oldest are dropped past
``JETSPARK_JOB_LOGS_MAX_LINES``, so ``first`` tells where the kept ones begin."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from api.deps import JobLogSettingsDep, KeysDep, PrincipalDep, RedisDep, SessionDep
from api.problems import PROBLEM_RESPONSES
from jetspark import joblogs
from jetspark.jobs import service

router = APIRouter(prefix="/v1", tags=["jobs"], responses=PROBLEM_RESPONSES)


class LogPage(BaseModel):
    """Lines ``from`` on, each ``{seq, at, level, event, fields?, exception?}``; ``exception``
    is the exception chain (type, message, traceback per cause) of a failure."""

    job_id: uuid.UUID
    from_: int = Field(alias="from")
    size: int
    total: int
    """Lines the job ever logged (the next one's ``seq``)."""
    first: int
    """The oldest line still kept."""
    lines: list[dict[str, Any]]

    model_config = {"populate_by_name": True}


@router.get(
    "/jobs/{job_id}/logs",
    operation_id="jobs-logs",
    response_model=LogPage,
    response_model_by_alias=True,
)
def job_logs(
    job_id: uuid.UUID,
    session: SessionDep,
    client: RedisDep,
    keys: KeysDep,
    principal: PrincipalDep,
    settings: JobLogSettingsDep,
    from_: Annotated[int, Query(alias="from", ge=0, le=2**62)] = 0,
    size: Annotated[int, Query(ge=1, le=100_000)] = 100,
) -> LogPage:
    """The job's log lines from line ``from`` (0: its first), at most ``size`` of them."""
    service.get_job(session, job_id, principal)  # 404 for another principal's job
    size = min(size, settings.page_max)
    page = joblogs.read(client, keys, job_id, from_, size)
    return LogPage(
        job_id=job_id, from_=from_, size=size, total=page.total, first=page.first, lines=page.lines
    )
