"""``GET /v1/jobs/{id}/metrics`` and ``GET /v1/jobs/{id}/watermarks`` (SPEC §6)."""

from __future__ import annotations

import uuid

from fastapi import APIRouter

from api.deps import KeysDep, PrincipalDep, RedisDep, SessionDep
from api.problems import PROBLEM_RESPONSES
from jetspark.dag.plan import ExecutionPlan
from jetspark.jobs import service
from jetspark.metrics.report import JobMetrics, now_ms
from jetspark.metrics.store import job_metrics
from jetspark.metrics.watermarks import WatermarkReport, watermark_report

router = APIRouter(prefix="/v1", tags=["jobs"], responses=PROBLEM_RESPONSES)


@router.get("/jobs/{job_id}/metrics", operation_id="jobs-metrics", response_model=JobMetrics)
def get_job_metrics(
    job_id: uuid.UUID, session: SessionDep, client: RedisDep, keys: KeysDep, principal: PrincipalDep
) -> JobMetrics:
    """Per vertex and per processor: items, watermarks, queues, backpressure, busy ratio.

    Live (at most about a second old) while the job runs; its final document once it ended;
    an empty ``vertices`` map before the first one."""
    service.get_job(session, job_id, principal)
    return job_metrics(session, client, keys, job_id)[1]


@router.get(
    "/jobs/{job_id}/watermarks", operation_id="jobs-watermarks", response_model=WatermarkReport
)
def get_job_watermarks(
    job_id: uuid.UUID, session: SessionDep, client: RedisDep, keys: KeysDep, principal: PrincipalDep
) -> WatermarkReport:
    """Each vertex's coalesced watermark, the upstream processor (or idle input) holding it
    back, lag, skew of the upstream watermarks, queue fill and backpressure."""
    service.get_job(session, job_id, principal)
    job, doc = job_metrics(session, client, keys, job_id)
    if not job.plan:
        return WatermarkReport(job_id=job_id, at_ms=None, now_ms=now_ms(), vertices=[])
    return watermark_report(ExecutionPlan.model_validate(job.plan), doc, now_ms())
