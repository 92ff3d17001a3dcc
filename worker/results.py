"""``ResultsWriter``: the one way ``sink.results`` records reach PostgreSQL.

A batch job's final write and a streaming job's epoch commits both go through it, so results
are numbered and capped by one rule: ``seq`` goes on after the job's last stored record, the
job keeps at most ``results_cap`` records in all (later ones are dropped, as a stream's past
the cap are), and each item and a run's total are bounded in bytes (docs/SECURITY.md): past
either the job fails saying so. A write is in the caller's transaction, so the records commit
with the status or snapshot they belong to.

A write reads where the job's records stand, then sends its records by ``COPY``, encoded a
chunk at a time so that PostgreSQL stores one chunk while the next is encoded (issue 16): the
former single ``INSERT`` of a ``jsonb[]`` parameter spent 0.7 s of its 1.5 s for 100k records
in psycopg quoting the array element by element. Records are encoded by orjson (0.045 s for
100k records where ``json.dumps`` took 0.23 s), as UTF-8; JSON has no NaN or infinity, which
become ``null`` (``json.dumps`` wrote ``NaN``, which PostgreSQL refused). A record orjson
cannot encode (an integer past 64 bits) goes through ``json.dumps``. PostgreSQL then spent
0.39 s storing 100k records, 0.23 s of it checking each one's foreign key on ``jobs``;
migration 0010 checks a statement's records at once (0.2 s in all).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
from sqlalchemy import text
from sqlalchemy.orm import Session

from jetspark.settings import ResultLimits
from worker.engine.contract import RESULTS_CAP

_KEPT = text("SELECT count(*), coalesce(max(seq), -1) FROM job_results WHERE job_id = :job_id")
_COPY = "COPY job_results (job_id, seq, vertex, item) FROM STDIN"
CHUNK = 5000
"""Records encoded per ``COPY`` write."""
_COPY_TEXT = str.maketrans({"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"})
"""What COPY's text format escapes (in a name)."""


def _encoded(record: dict[str, Any]) -> bytes:
    """``record`` as JSON in UTF-8."""
    try:
        return orjson.dumps(record)
    except TypeError:  # orjson.JSONEncodeError: an integer past 64 bits, a key not a str...
        return json.dumps(record, ensure_ascii=False, allow_nan=False).encode()


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
        if not any(results.values()):
            return
        count, last = session.execute(_KEPT, {"job_id": self.job_id}).one()
        room = self.results_cap - int(count)  # the rest is dropped: results_cap
        if room <= 0:
            self._pending = (int(count), self.run_bytes)
            return
        written, size = 0, self.run_bytes
        driver: Any = session.connection().connection.driver_connection  # psycopg's
        with driver.cursor() as cursor, cursor.copy(_COPY) as copy:
            for vertex, records in results.items():
                kept = records[: room - written]
                job = f"{self.job_id}\t".encode()
                column = f"\t{vertex.translate(_COPY_TEXT)}\t".encode()
                for start in range(0, len(kept), CHUNK):
                    lines = []
                    for record in kept[start : start + CHUNK]:
                        encoded = _encoded(record)
                        size += self._checked(len(encoded), size)
                        written += 1
                        seq = str(int(last) + written).encode()
                        # JSON text has no raw newline, tab or CR: of COPY's escapes, only
                        # the backslash is left to double.
                        lines.append(job + seq + column + encoded.replace(b"\\", b"\\\\") + b"\n")
                    copy.write(b"".join(lines))
        self._pending = (int(count) + written, size)

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
