"""Liveness and readiness, open to all (no token)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from sqlalchemy import text

from api.problems import PROBLEM_MEDIA_TYPE, TYPE_BASE, problem_response_doc
from api.schemas import Health

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
    """200 when PostgreSQL and Redis answer; 503 problem naming what is down."""
    checks: dict[str, str] = {}
    try:
        with request.app.state.sessions() as session:
            session.execute(text("SELECT 1"))
        checks["postgresql"] = "ok"
    except Exception as error:
        checks["postgresql"] = f"down: {type(error).__name__}"
    try:
        request.app.state.redis.ping()
        checks["redis"] = "ok"
    except Exception as error:
        checks["redis"] = f"down: {type(error).__name__}"
    down = [name for name, state in checks.items() if state != "ok"]
    if not down:
        return JSONResponse(Health(status="ok", checks=checks).model_dump())
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
