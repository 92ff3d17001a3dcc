"""``PgEpochLog``: a streaming job's epochs and snapshots in PostgreSQL, under the job's lease.

A planned epoch is a ``snapshots`` row without ``committed_at``: its ranges are written before
the epoch runs, so a replay after a crash reads exactly the same items. The epoch's commit
writes its ``sink.results`` records and the job's progress in one transaction, and either
turns the row into a committed snapshot (an epoch that ends at a snapshot) or marks it
``results_committed``: a replay of that epoch from an older snapshot writes its records
once only. A worker that lost the job is refused by its fencing token and commits nothing.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import structlog
from sqlalchemy import delete, select
from sqlalchemy.orm import Session, sessionmaker

from jetspark.db.tables import Job, JobResultPage, Snapshot
from jetspark.jobs import orchestration, snapshot_history
from jetspark.jobs.snapshots import committed_named, latest_committed, summary
from worker.engine.contract import EpochCommit, SnapshotRecord
from worker.results import ResultsWriter
from worker.timings import recovery_phases, stamp

log = structlog.get_logger("jetspark.worker")

TIMINGS_EVERY_S = 2.0
"""How often a commit stores the attempt's timings (its epochs' profiles) with the job."""


class PgEpochLog:
    def __init__(
        self,
        sessions: sessionmaker[Session],
        job_id: uuid.UUID,
        fencing_token: int,
        *,
        results_cap: int,
        principal: str,
        timings: dict[str, Any] | None = None,
        attempt: int = 0,
        history: int = 100,
    ) -> None:
        self.sessions, self.job_id, self.token = sessions, job_id, fencing_token
        self.attempt = attempt
        self.history = history
        """Snapshot records kept per job (``JETSPARK_STREAM_SNAPSHOT_HISTORY``)."""
        self.results = ResultsWriter(job_id, results_cap)
        self.principal = principal
        """The job's owner: its ``initial_snapshot`` names one of this principal's."""
        self.timings: dict[str, Any] = timings if timings is not None else {}
        """The attempt's timings (``JobControl.timings``): the log stamps when a restore
        began (``restoring``) and ended (``restored``: the first epoch is asked for), the
        first epoch's commit and the first snapshot's; the latter is stored with the job
        then, so a running stream's view says where its recovery's seconds went; the
        epochs' profiles (``timings["epochs"]``) are stored again every ``TIMINGS_EVERY_S``."""
        self.timings_due = 0.0

    def restore_point(self) -> SnapshotRecord | None:
        began = stamp()
        with self.sessions() as session:
            row = latest_committed(session, self.job_id)
            return None if row is None else self._restoring(began, record_of(row))

    def named_snapshot(self, name: str) -> SnapshotRecord | None:
        began = stamp()
        with self.sessions() as session:
            row = committed_named(session, self.principal, name)
            return None if row is None else self._restoring(began, record_of(row))

    def _restoring(self, began: str, record: SnapshotRecord) -> SnapshotRecord:
        self.timings.setdefault("restoring", began)
        self.timings.setdefault("restored_snapshot", record.snapshot_id)
        return record

    def _epochs_begin(self) -> None:
        """The engine asks for its first epoch: whatever it restored is in place."""
        if "restoring" in self.timings:
            self.timings.setdefault("restored", stamp())

    def planned_ranges(self, epoch: int) -> dict[str, Any] | None:
        self._epochs_begin()
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
        self._epochs_begin()
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

    # --- the snapshot history (``SnapshotHistoryLog``) -----------------------------------

    def snapshot_started(self, snapshot_id: int, epoch: int) -> None:
        self._history_write(
            "start",
            lambda session: snapshot_history.started(
                session,
                self.job_id,
                self.attempt,
                snapshot_id,
                epoch,
                datetime.now(UTC),
                keep=self.history,
            ),
        )

    def snapshot_ended(self, snapshot_id: int, error: BaseException) -> None:
        self._history_write(
            "end",
            lambda session: snapshot_history.ended(
                session, self.job_id, self.attempt, snapshot_id, error, datetime.now(UTC)
            ),
        )

    def _history_write(self, what: str, write: Callable[[Session], None]) -> None:
        """One history write in a transaction of its own; its failure (PostgreSQL away, the
        job deleted meanwhile) is logged and the job goes on: history never stops a job."""
        try:
            with self.sessions() as session:
                write(session)
                session.commit()
        except Exception as error:
            log.warning("snapshot history not kept", job=str(self.job_id), what=what,
                        error=str(error))  # fmt: skip

    def commit(self, commit: EpochCommit) -> list[SnapshotRecord]:
        self._epochs_begin()
        written_at = datetime.now(UTC)  # the engine commits as soon as the state is written
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
            first_snapshot = commit.snapshot is not None and "first_snapshot" not in self.timings
            if commit.snapshot is not None:
                dropped = self._commit_snapshot(session, commit.snapshot, job)
                snapshot_history.committed(
                    session,
                    self.job_id,
                    self.attempt,
                    commit.snapshot.snapshot_id,
                    commit.snapshot.epoch,
                    stats=commit.snapshot.stats,
                    written_at=written_at,
                    at=datetime.now(UTC),
                )
            if first_snapshot:  # the attempt's phases so far, kept with the job now
                self.timings.setdefault("first_epoch", stamp())
                self.timings["first_snapshot"] = stamp()
            now = time.monotonic()
            if first_snapshot or ("epochs" in self.timings and now >= self.timings_due):
                job.timings = dict(self.timings)  # and the epochs' profiles, now and then
                self.timings_due = now + TIMINGS_EVERY_S
            session.commit()
            self.timings.setdefault("first_epoch", stamp())
            self.results.committed()
        if first_snapshot:
            log.info(
                "first snapshot of this attempt committed",
                job=str(self.job_id),
                snapshot=commit.snapshot.snapshot_id if commit.snapshot else None,
                **{f"{phase}_s": seconds for phase, seconds in recovery_phases(self.timings)},
            )
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
