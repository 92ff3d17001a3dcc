"""A stream's snapshot backups: how many copies each snapshot got, and whether the job is
under-replicated.

A snapshot write waits for ``backup_count`` replicas of each primary it writes to or, when a
primary has fewer online (a node lost for good, a promoted replica before a node rejoins),
for the ones it has (``state_store.write_state``). The snapshot then commits with fewer
copies and the job goes on, *under-replicated*, as the seeds' storage goes on when a backup
cannot be placed; the next snapshot after the replicas are back has its full count again.
``BackupWatch`` turns each snapshot's acknowledgements into the ``replication`` entry of its
metadata (the job view, ``/readyz`` and ``/metrics`` read it from the job's last snapshot,
``jetspark.jobs.snapshots.replication_of``) and says so in the job's log once each way.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import structlog

from jetspark.jobs.snapshots import REPLICATION

log = structlog.get_logger("jetspark.stream")


def fewest(acks: Iterable[Mapping[str, int]]) -> dict[str, int]:
    """Per primary, the fewest replicas that acknowledged any of these writes (one per
    vertex of a snapshot): a partition is as safe as its least backed-up part."""
    merged: dict[str, int] = {}
    for acked in acks:
        for primary, count in acked.items():
            merged[primary] = min(count, merged.get(primary, count))
    return merged


class BackupWatch:
    """One stream's replication state from snapshot to snapshot."""

    def __init__(self, job_id: uuid.UUID, backup_count: int) -> None:
        self.job_id, self.backup_count = job_id, backup_count
        self.since: str | None = None
        """When the job's snapshots became under-replicated (ISO 8601); None while they
        have every backup."""

    def resume(self, stats: Mapping[str, Any]) -> None:
        """Go on from the job's own restored snapshot: under-replicated since it was."""
        entry = stats.get(REPLICATION) or {}
        self.since = entry.get("since") if entry.get("under_replicated") else None

    def observe(self, acked: Mapping[str, int]) -> dict[str, Any] | None:
        """The ``replication`` entry of a snapshot whose writes these primaries acknowledged
        (None without ``backup_count``); logs the change when the job becomes, or stops
        being, under-replicated."""
        wanted = self.backup_count
        if wanted == 0:
            return None
        short = {primary: n for primary, n in sorted(acked.items()) if n < wanted}
        replicas = min([wanted, *short.values()])
        if short and self.since is None:
            self.since = datetime.now(UTC).isoformat()
            log.warning(
                "snapshots under-replicated: going on with the replicas there are",
                job=str(self.job_id),
                backup_count=wanted,
                replicas=", ".join(f"{p} has {n}" for p, n in short.items()),
            )
        elif not short and self.since is not None:
            log.info(
                "snapshots have their backups again",
                job=str(self.job_id),
                backup_count=wanted,
                under_replicated_since=self.since,
            )
            self.since = None
        return {
            "backup_count": wanted,
            "replicas": replicas,
            "under_replicated": bool(short),
            "since": self.since,
            "short": short,
        }
