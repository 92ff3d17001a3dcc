"""Streaming jobs on in-process workers: epochs committed in PostgreSQL, state in Redis,
and a job another worker takes over goes on from the last committed snapshot."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
import redis
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from jetspark.db.tables import JobResult, Snapshot
from jetspark.queue.keys import Keys
from tests.worker.conftest import drive_until, status_of
from worker.loop import Worker

pytestmark = pytest.mark.spark


def streaming_body(name: str, *, count: int, rate: int, guarantee: str) -> dict[str, Any]:
    return {
        "name": name,
        "dag": {
            "vertices": [
                {
                    "name": "numbers",
                    "processor": "source.sequence",
                    "params": {"count": count, "rate_per_s": rate},
                },
                {
                    "name": "stamped",
                    "processor": "insert_watermarks",
                    "params": {"timestamp": "ts", "allowed_lag_ms": 50},
                },
                {"name": "results", "processor": "sink.results"},
                {
                    "name": "by_seq",
                    "processor": "sink.redis_map",
                    "params": {"map": f"seq-{uuid.uuid4().hex[:8]}", "key": "seq"},
                },
            ],
            "edges": [
                {"from": "numbers", "to": "stamped"},
                {"from": "stamped", "to": "results", "from_ordinal": 0},
                {"from": "stamped", "to": "by_seq", "from_ordinal": 1},
            ],
        },
        "config": {
            "members": 1,
            "local_parallelism": 2,
            "processing_guarantee": guarantee,
            "snapshot_interval_ms": 300,
        },
    }


def committed_snapshot(sessions: sessionmaker[Session], job_id: uuid.UUID) -> int:
    with sessions() as session:
        found = session.execute(
            select(func.max(Snapshot.snapshot_id)).where(
                Snapshot.job_id == job_id, Snapshot.committed_at.is_not(None)
            )
        ).scalar_one_or_none()
        return int(found or 0)


def result_seqs(sessions: sessionmaker[Session], job_id: uuid.UUID) -> list[int]:
    with sessions() as session:
        items = session.execute(select(JobResult.item).where(JobResult.job_id == job_id))
        return sorted(int(item["seq"]) for item in items.scalars())


def test_a_lost_workers_stream_goes_on_from_its_last_snapshot_exactly_once(
    make_worker: Callable[..., Worker],
    submit: Callable[[dict[str, Any]], uuid.UUID],
    sessions: sessionmaker[Session],
    redis_client: redis.Redis,
    monkeypatch: pytest.MonkeyPatch,
    keys: Keys,
) -> None:
    # At most 300 items an epoch: at least 8 epochs however slow the machine is.
    monkeypatch.setenv("JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH", "300")
    body = streaming_body("stream", count=2400, rate=2000, guarantee="exactly_once")
    job_id = submit(body)
    a = make_worker("a")
    drive_until(
        [a], lambda: committed_snapshot(sessions, job_id) >= 2, what="two snapshots committed"
    )
    a.stop_running_jobs()  # A is lost: its job stays RUNNING until the lease runs out
    assert status_of(sessions, job_id) == "RUNNING"
    lost_at = committed_snapshot(sessions, job_id)

    b = make_worker("b")
    drive_until([b], lambda: status_of(sessions, job_id) == "COMPLETED", deadline_s=120)
    assert committed_snapshot(sessions, job_id) > lost_at
    assert result_seqs(sessions, job_id) == list(range(2400))
    map_key = keys.redis_map(body["dag"]["vertices"][3]["params"]["map"])
    assert redis_client.hlen(map_key) == 2400
    redis_client.delete(map_key)
