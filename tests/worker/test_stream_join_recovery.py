"""A streaming ``hash_join`` whose worker is lost twice: its build side (and the probe items
waiting for it) come back with the snapshot, and the results equal the batch join."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from jetspark.db.tables import JobResult
from tests.engine.test_stream_join import PER_EPOCH, join_stream, joined_rows, reference
from tests.worker.conftest import drive_until, status_of
from tests.worker.test_streaming import committed_snapshot
from worker.loop import Worker

pytestmark = pytest.mark.spark


def results(sessions: sessionmaker[Session], job_id: uuid.UUID) -> list[dict[str, Any]]:
    with sessions() as session:
        items = session.execute(select(JobResult.item).where(JobResult.job_id == job_id))
        return list(items.scalars())


def test_a_streaming_join_survives_two_lost_workers_exactly_once(
    make_worker: Callable[..., Worker],
    submit: Callable[[dict[str, Any]], uuid.UUID],
    sessions: sessionmaker[Session],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH", str(PER_EPOCH))
    body = join_stream(how="left", streaming=True)
    body["config"] |= {
        "processing_guarantee": "exactly_once",
        "snapshot_interval_ms": 100,
        "epoch_interval_ms": 100,
    }
    job_id = submit(body)
    # The first loss comes while the probe items still wait for the build side's second
    # epoch or just after; the second once the build side is state alone.
    workers = [make_worker("a")]
    for kill, after in enumerate((1, 6)):

        def reached(after: int = after) -> bool:
            return committed_snapshot(sessions, job_id) >= after

        drive_until(workers, reached, what=f"snapshot {after}", deadline_s=180)
        workers[0].stop_running_jobs()  # lost: the job stays RUNNING until its lease ends
        assert status_of(sessions, job_id) == "RUNNING"
        workers = [make_worker(f"w{kill}")]
    drive_until(workers, lambda: status_of(sessions, job_id) == "COMPLETED", deadline_s=180)
    assert joined_rows(results(sessions, job_id)) == reference("left")
