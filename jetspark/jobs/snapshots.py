"""Snapshots as users see them: listed, exported under a name, used to start a new job."""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import ValidationError
from sqlalchemy import and_, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from jetspark.dag.plan import ExecutionPlan
from jetspark.dag.snapshots import incompatibilities
from jetspark.db.tables import Job, Snapshot
from jetspark.jobs.lookup import get_job
from jetspark.jobs.status import TERMINAL_STATUSES, JobStatus
from jetspark.tenants.principals import LOCAL, Principal

REPLICATION = "replication"
"""A snapshot's (and so a job's ``last_snapshot``) entry saying how many backups it got:
``backup_count``, ``replicas`` (the fewest any primary written to has), ``under_replicated``,
``since`` and ``short`` (the primaries with fewer, and how many they have)."""


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
        **({REPLICATION: row.stats[REPLICATION]} if (row.stats or {}).get(REPLICATION) else {}),
    }


def under_replication(job: Job) -> dict[str, Any] | None:
    """The ``replication`` entry of the job's last snapshot while it is under-replicated and
    the job may still restore it (not finished); None otherwise."""
    entry = (job.last_snapshot or {}).get(REPLICATION)
    if not entry or not entry.get("under_replicated"):
        return None
    if JobStatus(job.status).is_terminal:
        return None
    found: dict[str, Any] = entry
    return found


def under_replicated_jobs(session: Session, *, limit: int = 100) -> tuple[int, list[Job]]:
    """How many unfinished jobs' last snapshot is under-replicated (``/readyz``,
    ``/metrics``), and the first ``limit`` of them, the longest under-replicated first."""
    entry = Job.last_snapshot[REPLICATION]
    short = and_(
        Job.status.not_in([s.value for s in TERMINAL_STATUSES]),
        entry["under_replicated"].as_boolean().is_(True),
    )
    count = session.execute(select(func.count()).select_from(Job).where(short)).scalar_one()
    first = session.scalars(
        select(Job).where(short).order_by(entry["since"].as_string(), Job.id).limit(limit)
    )
    return int(count), list(first)


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


def committed_named(
    session: Session, principal: str, name: str, *, for_share: bool = False
) -> Snapshot | None:
    """The committed snapshot ``principal`` exported under ``name`` (names are per
    principal: another's snapshot of that name is not found). ``for_share`` holds it until
    the caller commits: a submission starting from it and its deletion are serialised."""
    query = select(Snapshot).where(
        Snapshot.principal == principal,
        Snapshot.name == name,
        Snapshot.committed_at.is_not(None),
    )
    if for_share:
        query = query.with_for_update(read=True)
    return session.execute(query).scalar_one_or_none()


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


def check_initial_snapshot(
    session: Session, principal: str, name: str, plan: ExecutionPlan
) -> None:
    """Refuse (SnapshotConflict) a planned DAG that cannot start from ``principal``'s named
    snapshot, naming everything that differs (``jetspark.dag.snapshots.incompatibilities``)."""
    row = committed_named(session, principal, name, for_share=True)
    if row is None:
        raise SnapshotConflict(f"no exported snapshot is named {name!r}")
    stats = row.stats or {}
    written_by = None
    if any("inbound" not in v for v in stats.get("vertices", {}).values()):
        written_by = _plan(session, row.job_id)  # an older snapshot: its job's DAG
    problems = incompatibilities(plan, row.source_offsets or {}, stats, written_by=written_by)
    if problems:
        raise SnapshotConflict(
            f"the DAG cannot start from snapshot {name!r}: " + "; ".join(problems)
        )


def _plan(session: Session, job_id: uuid.UUID) -> ExecutionPlan | None:
    """The plan of the job that wrote a snapshot, while PostgreSQL still keeps it."""
    stored = session.scalar(select(Job.plan).where(Job.id == job_id))
    if stored is None:
        return None
    try:
        return ExecutionPlan.model_validate(stored)
    except ValidationError:
        return None  # stored by an older version under other rules
