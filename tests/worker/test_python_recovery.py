"""A stateful Python processor whose worker is lost twice under exactly-once: its instances
live from epoch to epoch, yet after each loss the job restores them from the snapshot (the
lost run's instances, still in this process's Python workers, are never taken back), and
every running count comes out exactly once."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from tests.engine.test_python_epochs import COUNT, KEYS, running_count_body
from tests.worker.test_stream_join_recovery import results
from tests.worker.test_streaming import lose_workers_at_snapshots
from worker.loop import Worker

pytestmark = pytest.mark.spark


def test_a_python_processor_survives_two_lost_workers_exactly_once(
    make_worker: Callable[..., Worker],
    submit: Callable[[dict[str, Any]], uuid.UUID],
    sessions: sessionmaker[Session],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH", "25")
    body = running_count_body(rate=10_000_000)
    body["config"] |= {
        "processing_guarantee": "exactly_once",
        "snapshot_interval_ms": 300,  # epochs between snapshots are replayed after a loss
        "epoch_interval_ms": 50,
    }
    job_id = submit(body)
    lose_workers_at_snapshots(make_worker, sessions, job_id, (2, 9))
    got = Counter((r["key"], r["count"]) for r in results(sessions, job_id))
    expected = Counter(
        (str(k), i) for k in range(KEYS) for i in range(1, len(range(k, COUNT, KEYS)) + 1)
    )
    assert got == expected
