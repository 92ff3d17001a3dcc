"""Liveness and readiness, open to all (no token)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from sqlalchemy import text

from api.problems import PROBLEM_MEDIA_TYPE, TYPE_BASE, problem_response_doc
from api.schemas import Health
from jetspark.db.tables import Job
from jetspark.jobs.snapshots import REPLICATION, under_replicated_jobs

router = APIRouter(tags=["health"])
LIVE = Health(status="ok").model_dump_json().encode()
"""The one answer of ``/healthz``, encoded once: load balancers ask many times a second."""


@router.get("/healthz", operation_id="health-live", response_model=Health)
async def healthz() -> Response:
    """200 while the process is up."""
    return Response(LIVE, media_type="application/json")


@router.get(
    "/readyz",
    operation_id="health-ready",
    response_model=Health,
    responses={503: {**problem_response_doc(503), "description": "A dependency is down"}},
)
def readyz(request: Request) -> JSONResponse:
    """200 when PostgreSQL and Redis answer; 503 problem naming what is down. Still 200 but
    ``degraded`` while jobs' snapshots are under-replicated (a Redis node lost): the
    ``snapshot_backups`` check and ``detail`` say how many (each job's view says more; this
    route is open to all, so it names no job)."""
    checks: dict[str, str] = {}
    short: list[Job] = []
    count = 0
    try:
        with request.app.state.sessions() as session:
            session.execute(text("SELECT 1"))
            count, short = under_replicated_jobs(session, limit=1)
        checks["postgresql"] = "ok"
        checks["snapshot_backups"] = f"under-replicated: {count} jobs" if count else "ok"
    except Exception as error:
        checks["postgresql"] = f"down: {type(error).__name__}"
    try:
        request.app.state.redis.ping()
        checks["redis"] = "ok"
    except Exception as error:
        checks["redis"] = f"down: {type(error).__name__}"
    down = [name for name, state in checks.items() if state.startswith("down")]
    if not down:
        health = Health(status="ok", checks=checks)
        if short:
            since = (short[0].last_snapshot or {}).get(REPLICATION, {}).get("since")
            health.status = "degraded"
            health.detail = (
                f"the snapshots of {count} jobs are under-replicated, the first since {since}: "
                "a Redis node that held their backups is lost; the jobs go on, and have their "
                "backups again once replicas are back (each job's view names its primaries)"
            )
        return JSONResponse(health.model_dump(exclude_none=True))
    return JSONResponse(
        {
            "type": TYPE_BASE + "not-ready",
            "title": "Service Unavailable",
            "status": 503,
            "detail": f"not ready: {', '.join(down)} down",
            "instance": "/readyz",
            "checks": checks,
        },
        status_code=503,
        media_type=PROBLEM_MEDIA_TYPE,
    )
