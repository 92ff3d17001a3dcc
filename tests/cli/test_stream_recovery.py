"""A streaming job survives SIGKILLed workers: five times its holder dies mid-stream, and its
sinks end exactly as a failure-free run leaves them (exactly-once)."""

from __future__ import annotations

import json
import os
import signal
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from jetspark.db.tables import Job, JobResult
from jetspark.queue.keys import Keys
from tests.cli.conftest import log_of, poll
from tests.cli.worker_processes import (
    COLD_START_DEADLINE_S,
    LEASE_S,
    WorkerProcess,
    job_when,
    read_job,
    submit,
    wait_heartbeating,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

KILLS = 5
COUNT = 2400
PER_EPOCH = "40"
"""At least 60 epochs, 12 per kill: the job is still running at the fifth kill even when
several epochs pass between a snapshot committed and the test's SIGKILL (a loaded machine's
polls lag, and a warm holder runs on)."""


def recovery_body(map_name: str, out_dir: Path) -> dict[str, Any]:
    return {
        "name": "recovery",
        "dag": {
            "vertices": [
                {
                    "name": "numbers",
                    "processor": "source.sequence",
                    "params": {"count": COUNT, "rate_per_s": 1_000_000},
                },
                {
                    "name": "stamped",
                    "processor": "insert_watermarks",
                    "params": {"timestamp": "ts", "allowed_lag_ms": 0},
                },
                {
                    "name": "squares",
                    "processor": "map",
                    "params": {"select": {"seq": "seq", "square": "seq * seq"}},
                },
                {"name": "results", "processor": "sink.results"},
                {
                    "name": "by_seq",
                    "processor": "sink.redis_map",
                    "params": {"map": map_name, "key": "seq"},
                },
                {
                    "name": "files",
                    "processor": "sink.files",
                    "params": {"path": str(out_dir), "format": "json"},
                },
            ],
            "edges": [
                {"from": "numbers", "to": "stamped"},
                {"from": "stamped", "to": "squares"},
                {"from": "squares", "to": "results", "from_ordinal": 0},
                {"from": "squares", "to": "by_seq", "from_ordinal": 1},
                {"from": "squares", "to": "files", "from_ordinal": 2},
            ],
        },
        "config": {
            "members": 1,
            "local_parallelism": 2,
            "processing_guarantee": "exactly_once",
            "snapshot_interval_ms": 200,
            "epoch_interval_ms": 200,
        },
    }


def snapshot_id(job: Job) -> int:
    return int(job.last_snapshot["snapshot_id"]) if job.last_snapshot else 0


def test_a_stream_survives_five_sigkilled_workers_exactly_once(
    start_worker: Callable[..., WorkerProcess],
    sessions: sessionmaker[Session],
    redis_client: redis.Redis,
    keys: Keys,
    tmp_path: Path,
) -> None:
    settings = {"JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH": PER_EPOCH}
    workers = [start_worker("w0", **settings), start_worker("w1", **settings)]
    wait_heartbeating(redis_client, keys, workers)
    map_name, out_dir = f"squares-{uuid.uuid4().hex[:8]}", tmp_path / "out"
    job_id = submit(sessions, redis_client, keys, recovery_body(map_name, out_dir))

    seen = 0
    for kill in range(KILLS):
        # Each attempt must have restored and committed a snapshot of its own before it dies.
        def progressed(j: Job, after: int = seen) -> bool:
            assert j.status in {"QUEUED", "STARTING", "RUNNING"}, (
                f"{j.status} before a kill: {j.error_message}",
                [log_of(w.log) for w in workers],
            )
            return j.status == "RUNNING" and snapshot_id(j) > after

        job = poll(
            job_when(sessions, job_id, progressed),
            # The other worker may still be starting (a replacement's cold start and warm-up):
            # the stream waits for it, QUEUED, and goes on where it was.
            deadline_s=COLD_START_DEADLINE_S + LEASE_S,
            what=f"a new snapshot before kill {kill + 1}",
            every_s=0.2,
        )
        seen = snapshot_id(job)
        holder = next(w for w in workers if w.owns(job.worker))
        os.killpg(holder.pid, signal.SIGKILL)  # the worker and its Spark JVM, mid-epoch
        holder.process.wait(timeout=10)
        workers.remove(holder)
        workers.append(start_worker(f"w{kill + 2}", **settings))

    done = poll(
        job_when(sessions, job_id, lambda j: j.status in {"COMPLETED", "FAILED"}),
        # Most of the epochs come after the last kill, maybe on the replacement, cold.
        deadline_s=COLD_START_DEADLINE_S + 300,
        what="the stream completed",
        every_s=0.5,
    )
    assert done.status == "COMPLETED", (done.error_message, [log_of(w.log) for w in workers])
    assert done.attempt == KILLS + 1

    expected = {seq: seq * seq for seq in range(COUNT)}
    with sessions() as session:
        items = session.execute(select(JobResult.item).where(JobResult.job_id == job_id))
        results = Counter(int(item["seq"]) for item in items.scalars())
    assert results == Counter(expected.keys()), "sink.results lost or duplicated records"

    stored = redis_client.hgetall(keys.redis_map("legacy", map_name))
    assert {int(k): json.loads(v)["square"] for k, v in stored.items()} == expected

    rows = [
        json.loads(line)
        for part in sorted(out_dir.glob("epoch=*/part-*"))
        for line in part.read_text().splitlines()
        if line
    ]
    assert Counter(r["seq"] for r in rows) == Counter(expected.keys()), (
        "sink.files lost or duplicated"
    )
    assert read_job(sessions, job_id).items_out == 3 * COUNT
    redis_client.delete(keys.redis_map("legacy", map_name))
