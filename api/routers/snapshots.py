"""/v1/jobs/{id}/snapshots: a job's committed snapshots, and exporting one under a name."""

from __future__ import annotations

import uuid
from datetime import datetime

from fastapi import APIRouter
from pydantic import BaseModel, Field

from api.deps import PrincipalDep, SessionDep
from api.problems import CONFLICT, PROBLEM_RESPONSES
from api.storable import require_storable
from jetspark.dag.model import Name
from jetspark.jobs import snapshots

router = APIRouter(prefix="/v1", tags=["snapshots"], responses=PROBLEM_RESPONSES)


class VertexState(BaseModel):
    keys: int
    rows: int
    bytes: int


class SnapshotView(BaseModel):
    """A committed snapshot: its state lives in Redis, its metadata in PostgreSQL."""

    snapshot_id: int
    epoch: int
    name: str | None
    created_at: datetime | None
    committed_at: datetime | None
    bytes: int = 0
    """The snapshot's size: its vertices' state, in bytes, summed."""
    vertices: dict[str, VertexState]


class SnapshotList(BaseModel):
    items: list[SnapshotView]


class ExportRequest(BaseModel):
    model_config = {"extra": "forbid"}

    name: Name = Field(
        description="A name no other snapshot of the principal has; its jobs start from it by name."
    )


@router.get("/jobs/{job_id}/snapshots", operation_id="snapshots-list", response_model=SnapshotList)
def list_snapshots(job_id: uuid.UUID, session: SessionDep, principal: PrincipalDep) -> SnapshotList:
    """The job's latest committed snapshot and every one exported from it, newest first."""
    rows = snapshots.list_snapshots(session, job_id, principal)
    return SnapshotList(items=[SnapshotView.model_validate(snapshots.summary(r)) for r in rows])


@router.post(
    "/jobs/{job_id}/snapshots",
    operation_id="snapshots-export",
    status_code=201,
    response_model=SnapshotView,
    responses=CONFLICT,
)
def export_snapshot(
    job_id: uuid.UUID, body: ExportRequest, session: SessionDep, principal: PrincipalDep
) -> SnapshotView:
    """Export the job's latest committed snapshot under ``name`` (it then outlives the job);
    a new job starts from it with ``config.initial_snapshot``. 409 when the job has none yet
    or the name is taken."""
    require_storable(body.model_dump())
    row = snapshots.export_snapshot(session, job_id, body.name, principal)
    return SnapshotView.model_validate(snapshots.summary(row))
