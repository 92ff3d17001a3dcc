"""/v1/jobs/{id}/snapshots: a job's committed snapshots, exporting one under a name, and
deleting a named one."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query, Response
from pydantic import BaseModel, Field

from api.deps import KeysDep, PrincipalDep, RedisDep, SessionDep
from api.problems import CONFLICT, PROBLEM_RESPONSES
from api.storable import NO_NUL, require_storable
from jetspark.dag.model import Name
from jetspark.jobs import deletion, snapshot_history, snapshots
from jetspark.jobs.lookup import get_job

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


class SnapshotAttempt(BaseModel):
    """One snapshot of the job's history: committed, failed, abandoned or in progress."""

    snapshot_id: int
    epoch: int
    attempt: int
    """The job's attempt that took it."""
    state: Literal["in_progress", "committed", "failed", "abandoned"]
    """``failed``: its write or commit failed (the job failed with it); ``abandoned``: its
    attempt stopped (cancelled, handed over, its worker lost) before it committed."""
    started_at: datetime
    """When the worker began writing its state (its epoch's barrier had passed)."""
    written_at: datetime | None
    """When its state was in Redis, with every backup it waited for."""
    ended_at: datetime | None
    """When it committed in PostgreSQL, failed or was abandoned."""
    duration_ms: float | None
    """Committed: ``ended_at - started_at`` (state written, then committed)."""
    write_ms: float | None
    """``written_at - started_at``: writing the state and waiting for its backups."""
    bytes: int
    rows: int
    vertices: dict[str, VertexState]
    """Per stateful vertex, its state's keys, rows and bytes (once committed)."""
    backup_count: int
    """Replicas asked for (``config.backup_count``)."""
    replicas: int | None
    """The fewest replicas any primary acknowledged (null without ``backup_count``)."""
    under_replicated: bool
    reason: str | None
    """Why it failed or was abandoned."""


class SnapshotList(BaseModel):
    items: list[SnapshotView]
    """The committed snapshots a job can start from: the latest and every exported one."""
    history: list[SnapshotAttempt] = []
    """The job's last snapshots (``JETSPARK_STREAM_SNAPSHOT_HISTORY``, 100), newest first,
    a page of ``limit`` from ``cursor``."""
    next_cursor: str | None = None
    """The ``cursor`` of the history's next (older) page; null on its last."""


class ExportRequest(BaseModel):
    model_config = {"extra": "forbid"}

    name: Name = Field(
        description="A name no other snapshot of the principal has; its jobs start from it by name."
    )


@router.get("/jobs/{job_id}/snapshots", operation_id="snapshots-list", response_model=SnapshotList)
def list_snapshots(
    job_id: uuid.UUID,
    session: SessionDep,
    principal: PrincipalDep,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    cursor: Annotated[str | None, Query(max_length=18, pattern=r"^[0-9]{1,18}$")] = None,
) -> SnapshotList:
    """The job's latest committed snapshot and every one exported from it, newest first
    (``items``); and its snapshot history, a page of ``limit`` records from ``cursor``
    (``history``, ``next_cursor``)."""
    job = get_job(session, job_id, principal)
    rows = snapshots.list_snapshots(session, job_id, principal)
    page = snapshot_history.page(session, job, limit=limit, cursor=cursor)
    return SnapshotList(
        items=[SnapshotView.model_validate(snapshots.summary(r)) for r in rows],
        history=[SnapshotAttempt.model_validate(item) for item in page.items],
        next_cursor=page.next_cursor,
    )


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
