"""``ResultsWriter``: the one way ``sink.results`` records reach PostgreSQL.

A batch job's final write and a streaming job's epoch commits both go through it, so results
are numbered and capped by one rule: ``seq`` goes on after the job's last stored record, the
job keeps at most ``results_cap`` records in all (later ones are dropped, as a stream's past
the cap are), and each item and a run's total are bounded in bytes (docs/SECURITY.md): past
either the job fails saying so. All of a write is one ``INSERT`` (one round trip), in the
caller's transaction, so the records commit with the status or snapshot they belong to.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session

from jetspark.settings import ResultLimits
from worker.engine.contract import RESULTS_CAP

_INSERT = text(
    """
    WITH kept AS (
        SELECT count(*) AS n, coalesce(max(seq), -1) AS last
        FROM job_results WHERE job_id = :job_id
    ), added AS (
        INSERT INTO job_results (job_id, seq, vertex, item)
        SELECT :job_id, kept.last + r.ord, r.vertex, r.item
        FROM kept, unnest(CAST(:vertices AS text[]), CAST(:items AS jsonb[]))
            WITH ORDINALITY AS r(vertex, item, ord)
        WHERE r.ord <= :cap - kept.n
        RETURNING 1
    )
    SELECT (SELECT n FROM kept) + (SELECT count(*) FROM added)
    """
)


class ResultsTooLarge(Exception):
    """An item, or a run's results, over the bytes ``sink.results`` may keep."""

    error_type = "ResultsTooLarge"


@dataclass
class ResultsWriter:
    """Writes one run's ``sink.results`` records; knows what the run kept so far.

    ``write`` adds to the caller's transaction; ``committed`` is called once it committed,
    so a write retried after a failed transaction is counted once.
    """

    job_id: uuid.UUID
    results_cap: int = RESULTS_CAP
    limits: ResultLimits = field(default_factory=ResultLimits)
    stored: int | None = None
    """Records the job has in PostgreSQL, once a committed write told us."""
    run_bytes: int = 0
    """Bytes this run kept so far."""
    _pending: tuple[int, int] | None = None

    def write(self, session: Session, results: Mapping[str, Sequence[dict[str, Any]]]) -> None:
        """Add ``results`` (records per vertex, in order) after the job's stored records."""
        self._pending = None
        room = self.results_cap - (self.stored or 0)
        vertices: list[str] = []
        items: list[str] = []
        size = self.run_bytes
        for vertex, records in results.items():
            for record in records:
                if len(items) >= room:
                    break  # dropped: the job keeps at most results_cap records
                encoded = json.dumps(record)
                size += self._checked(len(encoded), size)
                vertices.append(vertex)
                items.append(encoded)
        if not items:
            return
        stored = session.execute(
            _INSERT,
            {"job_id": self.job_id, "vertices": vertices, "items": items, "cap": self.results_cap},
        ).scalar_one()
        self._pending = (int(stored), size)

    def committed(self) -> None:
        """The transaction holding the last ``write`` committed."""
        if self._pending is not None:
            self.stored, self.run_bytes = self._pending
            self._pending = None

    def reset(self) -> None:
        """The job's records were deleted (a stream replays from its start)."""
        self.stored, self.run_bytes, self._pending = 0, 0, None

    def _checked(self, item_bytes: int, so_far: int) -> int:
        limits = self.limits
        if item_bytes > limits.max_item_bytes:
            raise ResultsTooLarge(
                f"sink.results: an item of {item_bytes} bytes is over "
                f"JETSPARK_RESULTS_MAX_ITEM_BYTES ({limits.max_item_bytes})"
            )
        if so_far + item_bytes > limits.max_job_bytes:
            raise ResultsTooLarge(
                f"sink.results: the job's results are over "
                f"JETSPARK_RESULTS_MAX_JOB_BYTES ({limits.max_job_bytes} bytes)"
            )
        return item_bytes
