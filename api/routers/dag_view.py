"""``GET /v1/jobs/{id}/dag``: the planned DAG as JSON, or drawn as SVG."""

from __future__ import annotations

import uuid
from typing import Annotated, Literal

from fastapi import APIRouter, Header, Query, Response

from api.dag_svg import render_svg
from api.deps import PrincipalDep, SessionDep
from api.problems import PROBLEM_RESPONSES
from api.schemas import DagView
from jetspark.jobs import service

router = APIRouter(prefix="/v1", tags=["jobs"], responses=PROBLEM_RESPONSES)

SVG_MEDIA_TYPE = "image/svg+xml"


@router.get(
    "/jobs/{job_id}/dag",
    operation_id="jobs-dag",
    response_model=DagView,
    response_model_by_alias=True,
    responses={200: {"content": {SVG_MEDIA_TYPE: {"schema": {"type": "string"}}}}},
)
def job_dag(
    job_id: uuid.UUID,
    session: SessionDep,
    principal: PrincipalDep,
    format: Annotated[Literal["json", "svg"] | None, Query()] = None,
    accept: Annotated[str | None, Header(max_length=1024)] = None,
) -> Response:
    """The DAG as planned. ``?format=svg`` or ``Accept: image/svg+xml`` draws it."""
    view = DagView.of(service.get_job(session, job_id, principal))
    wants_svg = format == "svg" or (format is None and SVG_MEDIA_TYPE in (accept or ""))
    if wants_svg:
        return Response(render_svg(view), media_type=SVG_MEDIA_TYPE)
    return Response(view.model_dump_json(by_alias=True), media_type="application/json")
