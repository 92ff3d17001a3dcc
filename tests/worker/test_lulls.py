"""A stream that goes quiet still closes its windows: with ``max_lull_ms`` the watermark of a
quiet input advances with the wall clock, and an epoch without input runs Spark only when a
window closes."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
import redis
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from jetspark.db.tables import JobResult
from jetspark.queue.keys import Keys
from tests.worker.conftest import drive_until, status_of
from worker.loop import Worker

pytestmark = pytest.mark.spark

LULL_MS, EPOCH_MS, SIZE_MS = 500, 1000, 500
# What one epoch's Spark job may take on a loaded 2-core machine beyond its interval: the bound
# is "the lull, then at most two epochs", and an epoch ends when its Spark job does (4.6 s in
# all was seen with a 2 s slack in a full CI run; a window that never closes fails at 60 s, and
# one that waited for the next item would wait for ever: there is none).
SPARK_JOB_SLACK_MS = 20_000


def quiet_stream(stream: str) -> dict[str, Any]:
    """Redis entries counted in 500 ms windows of their id's time; each window records the
    wall-clock time it was computed at (``closed_at``)."""
    return {
        "name": "lulls",
        "dag": {
            "vertices": [
                {"name": "events", "processor": "source.redis_stream",
                 "params": {"streams": [stream], "start": "0"}},
                {"name": "stamped", "processor": "insert_watermarks",
                 "params": {"timestamp": "ts", "allowed_lag_ms": 0, "max_lull_ms": LULL_MS}},
                {"name": "windows", "processor": "window",
                 "params": {"timestamp": "ts", "type": "tumbling", "size_ms": SIZE_MS,
                            "aggregations": {"n": "count(*)"}}},
                {"name": "closed", "processor": "map",
                 "params": {"select": {"window_end": "window_end", "n": "n",
                                       "closed_at": "unix_millis(current_timestamp())"}}},
                {"name": "results", "processor": "sink.results"},
            ],
            "edges": [
                {"from": "events", "to": "stamped"},
                {"from": "stamped", "to": "windows", "routing": "all_to_one"},
                {"from": "windows", "to": "closed"},
                {"from": "closed", "to": "results"},
            ],
        },
        "config": {"members": 1, "local_parallelism": 1},
    }  # fmt: skip


def entry_ms(entry_id: Any) -> int:
    """The wall-clock ms of a Redis stream entry id (``<ms>-<n>``)."""
    text = entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id)
    return int(text.split("-")[0])


def windows(sessions: sessionmaker[Session], job_id: uuid.UUID) -> dict[int, dict[str, Any]]:
    with sessions() as session:
        items = session.execute(select(JobResult.item).where(JobResult.job_id == job_id))
        return {int(i["window_end"]): i for i in items.scalars()}


def test_a_quiet_stream_closes_its_windows_within_the_lull_and_two_epochs(
    make_worker: Callable[..., Worker],
    submit: Callable[[dict[str, Any]], uuid.UUID],
    sessions: sessionmaker[Session],
    redis_client: redis.Redis,
    keys: Keys,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("JETSPARK_STREAM_EPOCH_INTERVAL_MS", str(EPOCH_MS))
    name = f"quiet-{uuid.uuid4().hex[:8]}"
    key = keys.user_stream("legacy", name)
    job_id = submit(quiet_stream(name))
    worker = make_worker("w")
    drive_until([worker], lambda: status_of(sessions, job_id) == "RUNNING", deadline_s=60)
    try:
        for _burst in range(2):  # the first warms Spark up; the second is measured
            ids = [redis_client.xadd(key, {"n": str(i)}) for i in range(20)]
            last = max(entry_ms(i) for i in ids)
            end = last - last % SIZE_MS + SIZE_MS

            def closed(end: int = end) -> bool:
                return end in windows(sessions, job_id)

            drive_until([worker], closed, what=f"the window ending at {end}", deadline_s=60)
        got = windows(sessions, job_id)
        assert sum(w["n"] for w in got.values()) == 40, got
        bound = LULL_MS + 2 * EPOCH_MS + SPARK_JOB_SLACK_MS
        assert got[end]["closed_at"] - last <= bound, (last, got[end])
        assert status_of(sessions, job_id) == "RUNNING"  # quiet, not ended
    finally:
        redis_client.delete(key)
