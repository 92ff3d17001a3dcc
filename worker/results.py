"""``ResultsWriter``: the one way ``sink.results`` records reach PostgreSQL.

A batch job's final write and a streaming job's epoch commits both go through it, so results
are numbered and capped by one rule: ``seq`` goes on after the job's last stored record, the
job keeps at most ``results_cap`` records in all (later ones are dropped, as a stream's past
the cap are), and each item and a run's total are bounded in bytes (docs/SECURITY.md): past
either the job fails saying so. A write is in the caller's transaction, so the records commit
with the status or snapshot they belong to.

A write reads where the job's records stand, then sends them by ``COPY`` as pages of up to
``PAGE_RECORDS`` records (``job_result_pages``; readers see one record a row through the
``job_results`` view). Issue 16 measured 100k records: the former single ``INSERT`` of a
``jsonb[]`` parameter took 1.5 s (0.7 s of it psycopg quoting the array element by element);
a ``COPY`` of a row per record 0.39 s in PostgreSQL, 0.23 s of it the per-row foreign-key
check on ``jobs`` (now a check per statement, migration 0010), plus 0.23 s of ``json.dumps``;
pages of 1,000 records encoded by orjson take 0.06 s in all. orjson writes UTF-8; JSON has
no NaN or infinity, which become ``null`` (``json.dumps`` wrote ``NaN``, which PostgreSQL
refused). A record orjson cannot encode (an integer past 64 bits) goes through
``json.dumps``.
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

_KEPT = text(
    "SELECT coalesce(sum(last_seq - first_seq + 1), 0), coalesce(max(last_seq), -1) "
    "FROM job_result_pages WHERE job_id = :job_id"
)
_COPY = "COPY job_result_pages (job_id, first_seq, last_seq, vertex, items) FROM STDIN"
PAGE_RECORDS = 1000
"""Records per stored page: few rows to write, little to unfold to read a page of them."""
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
                for start in range(0, len(kept), PAGE_RECORDS):
                    page = []
                    for record in kept[start : start + PAGE_RECORDS]:
                        encoded = _encoded(record)
                        size += self._checked(len(encoded), size)
                        page.append(encoded)
                    first = int(last) + written + 1
                    written += len(page)
                    seqs = f"{first}\t{first + len(page) - 1}".encode()
                    # JSON text has no raw newline, tab or CR: of COPY's escapes, only the
                    # backslash is left to double.
                    items = (b"[" + b",".join(page) + b"]").replace(b"\\", b"\\\\")
                    copy.write(job + seqs + column + items + b"\n")
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
