"""Job statuses (SPEC §6) and the transitions allowed between them."""

from __future__ import annotations

from enum import StrEnum


class JobStatus(StrEnum):
    """Where a job is in its life. PostgreSQL holds the truth; Redis only announces."""

    QUEUED = "QUEUED"
    STARTING = "STARTING"
    RUNNING = "RUNNING"
    COMPLETING = "COMPLETING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    SUSPENDED = "SUSPENDED"
    RESTARTING = "RESTARTING"

    @property
    def is_terminal(self) -> bool:
        return self in TERMINAL_STATUSES


TERMINAL_STATUSES: frozenset[JobStatus] = frozenset(
    {JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELLED}
)

HELD_BY_WORKER: frozenset[JobStatus] = frozenset(
    {JobStatus.STARTING, JobStatus.RUNNING, JobStatus.COMPLETING, JobStatus.RESTARTING}
)
"""Statuses in which a worker holds the job under a lease."""
