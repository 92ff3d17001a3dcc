"""An epoch log in memory that loses one commit: a worker lost after an epoch's sinks wrote,
before the epoch committed. Shared by the tests of sinks that a replay must not double."""

from __future__ import annotations

import json
from typing import Any

from worker.engine.contract import EpochCommit, SnapshotRecord


class WorkerLost(Exception):
    """Not an outage (those the epoch loop waits out): the worker itself went away."""


class MemoryEpochLog:
    """The worker's epoch log in memory; its commit of ``lose_at`` fails once (the worker
    was lost after the epoch's sinks wrote, before the epoch committed)."""

    def __init__(self, lose_at: int) -> None:
        self.lose_at: int | None = lose_at
        self.planned: dict[int, dict[str, Any]] = {}
        self.snapshots: list[SnapshotRecord] = []

    def restore_point(self) -> SnapshotRecord | None:
        return self.snapshots[-1] if self.snapshots else None

    def named_snapshot(self, name: str) -> SnapshotRecord | None:
        return None

    def planned_ranges(self, epoch: int) -> dict[str, Any] | None:
        return self.planned.get(epoch)

    def plan_epoch(self, epoch: int, ranges: dict[str, Any], fingerprint: str) -> None:
        self.planned[epoch] = json.loads(json.dumps(ranges))  # stored as JSON, as in PostgreSQL

    def reset(self) -> None:
        self.planned.clear()
        self.snapshots.clear()

    def commit(self, commit: EpochCommit) -> list[SnapshotRecord]:
        if commit.epoch == self.lose_at:
            self.lose_at = None
            raise WorkerLost("the worker was lost before the epoch committed")
        if commit.snapshot is not None:
            self.snapshots.append(commit.snapshot)
        return []
