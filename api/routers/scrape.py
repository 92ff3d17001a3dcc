"""``GET /metrics``: the Prometheus exposition, open like the health checks."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

router = APIRouter(tags=["health"])


@router.get(
    "/metrics",
    operation_id="health-metrics",
    response_class=Response,
    responses={200: {"description": "Prometheus text format", "content": {"text/plain": {}}}},
)
def metrics(request: Request) -> Response:
    """Request counts and latencies, jobs by status, worker heartbeat ages."""
    return Response(generate_latest(request.app.state.registry), media_type=CONTENT_TYPE_LATEST)
