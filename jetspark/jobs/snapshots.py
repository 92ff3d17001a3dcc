"""Snapshots as users see them: listed, exported under a name, used to start a new job."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from jetspark.dag.snapshots import incompatibilities
from jetspark.dag.validate import ValidatedDag
from jetspark.db.tables import Snapshot
from jetspark.jobs.lookup import get_job
from jetspark.tenants.principals import LOCAL, Principal


class SnapshotConflict(Exception):
    """A snapshot request that cannot be met as things are (409)."""


def summary(row: Snapshot) -> dict[str, Any]:
    """A committed snapshot as the API and the job view show it."""
    vertices = row.stats.get("vertices", {}) if row.stats else {}
    states = {
        name: {k: v.get(k, 0) for k in ("keys", "rows", "bytes")} for name, v in vertices.items()
    }
    return {
        "snapshot_id": row.snapshot_id,
        "epoch": row.epoch,
        "name": row.name,
        "created_at": row.created_at.isoformat() if row.created_at else None,
        "committed_at": row.committed_at.isoformat() if row.committed_at else None,
        "bytes": sum(state["bytes"] for state in states.values()),
        "vertices": states,
    }


def latest_committed(
    session: Session, job_id: uuid.UUID, *, for_update: bool = False
) -> Snapshot | None:
    """The job's last committed snapshot: what a restart restores and an export names."""
    query = (
        select(Snapshot)
        .where(Snapshot.job_id == job_id, Snapshot.committed_at.is_not(None))
        .order_by(Snapshot.snapshot_id.desc())
        .limit(1)
    )
    return session.execute(query.with_for_update() if for_update else query).scalar_one_or_none()


def committed_named(session: Session, principal: str, name: str) -> Snapshot | None:
    """The committed snapshot ``principal`` exported under ``name`` (names are per
    principal: another's snapshot of that name is not found)."""
    return session.execute(
        select(Snapshot).where(
            Snapshot.principal == principal,
            Snapshot.name == name,
            Snapshot.committed_at.is_not(None),
        )
    ).scalar_one_or_none()


def list_snapshots(session: Session, job_id: uuid.UUID, principal: Principal) -> list[Snapshot]:
    """The job's committed snapshots (its latest and every exported one), newest first."""
    get_job(session, job_id, principal)
    rows = session.execute(
        select(Snapshot)
        .where(Snapshot.job_id == job_id, Snapshot.committed_at.is_not(None))
        .order_by(Snapshot.snapshot_id.desc())
    )
    return list(rows.scalars())


def export_snapshot(
    session: Session, job_id: uuid.UUID, name: str, principal: Principal = LOCAL
) -> Snapshot:
    """Name the job's latest committed snapshot, so it outlives the job; commits. The name
    belongs to the job's principal."""
    job = get_job(session, job_id, principal)
    latest = latest_committed(session, job_id, for_update=True)
    if latest is None:
        raise SnapshotConflict(
            f"job {job_id} has no committed snapshot yet (it needs a processing guarantee "
            "and one epoch)"
        )
    if latest.name is not None and latest.name != name:
        raise SnapshotConflict(
            f"the latest snapshot of job {job_id} is already exported as {latest.name!r}"
        )
    latest.name = name
    latest.principal = job.principal
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        raise SnapshotConflict(f"a snapshot named {name!r} exists already") from None
    return latest


def check_initial_snapshot(session: Session, principal: str, name: str, dag: ValidatedDag) -> None:
    """Refuse (SnapshotConflict) a DAG that cannot start from ``principal``'s named
    snapshot."""
    row = committed_named(session, principal, name)
    if row is None:
        raise SnapshotConflict(f"no exported snapshot is named {name!r}")
    problems = incompatibilities(dag, row.source_offsets or {}, row.stats or {})
    if problems:
        raise SnapshotConflict(
            f"the DAG cannot start from snapshot {name!r}: " + "; ".join(problems)
        )
