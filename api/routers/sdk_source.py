"""``GET /v1/jobs/{id}/sdk``: the Python SDK script that builds the job's DAG again."""

from __future__ import annotations

import uuid

from fastapi import APIRouter
from pydantic import BaseModel

from api.deps import PrincipalDep, SessionDep
from api.problems import PROBLEM_RESPONSES
from jetspark.jobs import service
from jetspark.sdk import DAG
from jetspark.sdk.source import python_source

router = APIRouter(prefix="/v1", tags=["jobs"], responses=PROBLEM_RESPONSES)


class SdkSource(BaseModel):
    job_id: uuid.UUID
    python: str
    """A script on ``jetspark.sdk`` whose ``dag.to_json()`` is the job's definition; run, it
    prints that body (``--local`` runs it here, ``--submit`` submits it)."""


@router.get("/jobs/{job_id}/sdk", operation_id="jobs-sdk", response_model=SdkSource)
def job_sdk_source(job_id: uuid.UUID, session: SessionDep, principal: PrincipalDep) -> SdkSource:
    """The job as a Python SDK script (names and values as literals, never code)."""
    job = service.get_job(session, job_id, principal)
    return SdkSource(job_id=job.id, python=python_source(DAG.from_json(job.definition)))
