"""/v1/jobs/{id}/snapshots: a job's committed snapshots, exporting one under a name, and
deleting a named one."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Path, Response
from pydantic import BaseModel, Field

from api.deps import KeysDep, PrincipalDep, RedisDep, SessionDep
from api.problems import CONFLICT, PROBLEM_RESPONSES
from api.storable import NO_NUL, require_storable
from jetspark.dag.model import Name
from jetspark.jobs import deletion, snapshots

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


@router.delete(
    "/jobs/{job_id}/snapshots/{name:path}",
    operation_id="snapshots-delete",
    status_code=204,
    response_class=Response,
    responses={204: {"description": "Deleted"}, **CONFLICT},
)
def delete_snapshot(
    job_id: uuid.UUID,
    name: Annotated[str, Path(min_length=1, max_length=256, pattern=NO_NUL)],
    session: SessionDep,
    client: RedisDep,
    keys: KeysDep,
    principal: PrincipalDep,
) -> Response:
    """Delete the job's snapshot exported as ``name``, metadata and state (the job may have
    been deleted: a named snapshot outlives it). 409 while an unfinished job starts from it
    (``config.initial_snapshot``); of a job still running, the snapshot only loses its name
    (it may be the job's restore point)."""
    deletion.delete_snapshot(session, client, keys, job_id, name, principal)
    return Response(status_code=204)
