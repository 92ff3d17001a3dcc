"""``PgEpochLog``: a streaming job's epochs and snapshots in PostgreSQL, under the job's lease.

A planned epoch is a ``snapshots`` row without ``committed_at``: its ranges are written before
the epoch runs, so a replay after a crash reads exactly the same items. The epoch's commit
writes its ``sink.results`` records and the job's progress in one transaction, and either
turns the row into a committed snapshot (an epoch that ends at a snapshot) or marks it
``results_committed``: a replay of that epoch from an older snapshot writes its records
once only. A worker that lost the job is refused by its fencing token and commits nothing.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session, sessionmaker

from jetspark.db.tables import Job, JobResultPage, Snapshot
from jetspark.jobs import orchestration
from jetspark.jobs.snapshots import committed_named, latest_committed, summary
from worker.engine.contract import EpochCommit, SnapshotRecord
from worker.results import ResultsWriter


class PgEpochLog:
    def __init__(
        self,
        sessions: sessionmaker[Session],
        job_id: uuid.UUID,
        fencing_token: int,
        *,
        results_cap: int,
        principal: str,
    ) -> None:
        self.sessions, self.job_id, self.token = sessions, job_id, fencing_token
        self.results = ResultsWriter(job_id, results_cap)
        self.principal = principal
        """The job's owner: its ``initial_snapshot`` names one of this principal's."""

    def restore_point(self) -> SnapshotRecord | None:
        with self.sessions() as session:
            row = latest_committed(session, self.job_id)
            return None if row is None else record_of(row)

    def named_snapshot(self, name: str) -> SnapshotRecord | None:
        with self.sessions() as session:
            row = committed_named(session, self.principal, name)
            return None if row is None else record_of(row)

    def planned_ranges(self, epoch: int) -> dict[str, Any] | None:
        with self.sessions() as session:
            row = session.execute(
                select(Snapshot).where(
                    Snapshot.job_id == self.job_id,
                    Snapshot.snapshot_id == epoch,
                    Snapshot.committed_at.is_(None),
                )
            ).scalar_one_or_none()
            if row is None:
                return None
            planned: dict[str, Any] = row.source_offsets.get("planned", {})
            return planned

    def plan_epoch(self, epoch: int, ranges: dict[str, Any], fingerprint: str) -> None:
        with self.sessions() as session:
            # Fenced, but not a change anyone watches: no version bump, no NOTIFY.
            orchestration.held_by(session, self.job_id, fencing_token=self.token)
            session.execute(
                delete(Snapshot).where(
                    Snapshot.job_id == self.job_id,
                    Snapshot.snapshot_id >= epoch,
                    Snapshot.committed_at.is_(None),
                )
            )
            session.add(
                Snapshot(
                    job_id=self.job_id,
                    snapshot_id=epoch,
                    epoch=epoch,
                    source_offsets={"planned": ranges},
                    stats={},
                    dag_fingerprint=fingerprint,
                )
            )
            session.commit()

    def reset(self) -> None:
        with self.sessions() as session:
            orchestration.record_progress(
                session,
                self.job_id,
                fencing_token=self.token,
                items_in=0,
                items_out=0,
                vertex_counts=None,
                last_snapshot=None,
            )
            session.execute(delete(JobResultPage).where(JobResultPage.job_id == self.job_id))
            session.execute(
                delete(Snapshot).where(Snapshot.job_id == self.job_id, Snapshot.name.is_(None))
            )
            session.commit()
            self.results.reset()

    def commit(self, commit: EpochCommit) -> list[SnapshotRecord]:
        with self.sessions() as session:
            if commit.snapshot is not None and self._committed(session, commit.snapshot):
                return []  # a retry after a commit whose answer an outage lost
            counts = commit.counts
            job = orchestration.record_progress(
                session,
                self.job_id,
                fencing_token=self.token,
                items_in=sum(counts[s].items_out for s in commit.sources if s in counts),
                items_out=sum(counts[s].items_in for s in commit.sinks if s in counts),
                vertex_counts={
                    n: {"items_in": c.items_in, "items_out": c.items_out} for n, c in counts.items()
                },
            )
            planned = self._planned(session, commit.epoch)
            replayed = planned is not None and bool(planned.stats.get("results_committed"))
            if not replayed:  # a replayed epoch's results are in already
                self.results.write(session, commit.results)
                if planned is not None and commit.snapshot is None:
                    planned.stats = {**planned.stats, "results_committed": True}
            dropped: list[SnapshotRecord] = []
            if commit.snapshot is not None:
                dropped = self._commit_snapshot(session, commit.snapshot, job)
            session.commit()
            self.results.committed()
            return dropped

    def _planned(self, session: Session, epoch: int) -> Snapshot | None:
        """The epoch's planned row (exactly-once), while no snapshot committed it."""
        return session.execute(
            select(Snapshot).where(
                Snapshot.job_id == self.job_id,
                Snapshot.snapshot_id == epoch,
                Snapshot.committed_at.is_(None),
            )
        ).scalar_one_or_none()

    def _committed(self, session: Session, record: SnapshotRecord) -> bool:
        committed = session.execute(
            select(Snapshot.committed_at).where(
                Snapshot.job_id == self.job_id, Snapshot.snapshot_id == record.snapshot_id
            )
        ).scalar_one_or_none()
        return committed is not None

    def _commit_snapshot(
        self, session: Session, record: SnapshotRecord, job: Job
    ) -> list[SnapshotRecord]:
        row = session.execute(
            select(Snapshot).where(
                Snapshot.job_id == self.job_id, Snapshot.snapshot_id == record.snapshot_id
            )
        ).scalar_one_or_none()
        if row is None:
            row = Snapshot(job_id=self.job_id, snapshot_id=record.snapshot_id, dag_fingerprint="")
            session.add(row)
        row.epoch = record.epoch
        row.source_offsets = record.offsets
        row.stats = record.stats
        row.committed_at = datetime.now(UTC)
        session.flush()
        job.last_snapshot = summary(row)
        older = session.scalars(
            delete(Snapshot)
            .where(
                Snapshot.job_id == self.job_id,
                Snapshot.snapshot_id < record.snapshot_id,
                Snapshot.name.is_(None),
            )
            .returning(Snapshot)
        )
        dropped = [record_of(old) for old in older if old.committed_at is not None]
        return dropped


def record_of(row: Snapshot) -> SnapshotRecord:
    return SnapshotRecord(
        job_id=row.job_id,
        snapshot_id=row.snapshot_id,
        epoch=row.epoch,
        name=row.name,
        offsets=dict(row.source_offsets or {}),
        stats=dict(row.stats or {}),
    )
