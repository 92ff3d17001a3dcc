"""An exactly-once table stream survives SIGKILLed workers: ``source.jdbc`` reading new rows by
its incremental column, ``sink.jdbc`` writing each epoch with its marker; every row of the
source table reaches the target table exactly once."""

from __future__ import annotations

import os
import signal
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
import redis
from sqlalchemy.orm import Session, sessionmaker

from jetspark.db.tables import Job
from jetspark.jobs import service
from jetspark.queue.keys import Keys
from tests.cli.conftest import log_of, poll
from tests.cli.worker_processes import (
    COLD_START_DEADLINE_S,
    LEASE_S,
    WorkerProcess,
    job_when,
    submit,
    wait_heartbeating,
)
from tests.jdbc.conftest import PASSWORD_ENV, Db, body

pytestmark = [pytest.mark.slow, pytest.mark.spark, pytest.mark.timeout(1800)]

KILLS = 2
BATCH = 300


def insert(db: Db, batch: int) -> None:
    low, high = batch * BATCH + 1, (batch + 1) * BATCH
    db.run(
        f"INSERT INTO {db.table('events')} SELECT g, g % 13 FROM generate_series({low}, {high}) g"
    )


def stream(db: Db) -> dict[str, Any]:
    return body(
        [
            {
                "name": "read",
                "processor": "source.jdbc",
                "params": {
                    "connection": "main",
                    "table": db.table("events"),
                    "incremental_column": "id",
                },
            },
            {"name": "sq", "processor": "map", "params": {"select": {"id": "id", "k": "k * k"}}},
            {
                "name": "write",
                "processor": "sink.jdbc",
                "params": {"connection": "main", "table": db.table("out")},
            },
        ],
        [{"from": "read", "to": "sq"}, {"from": "sq", "to": "write"}],
        members=1,
        local_parallelism=2,
        processing_guarantee="exactly_once",
        snapshot_interval_ms=200,
        epoch_interval_ms=200,
    )


def snapshot_id(job: Job) -> int:
    return int(job.last_snapshot["snapshot_id"]) if job.last_snapshot else 0


def written(db: Db) -> int:
    exists = db.rows(
        "SELECT COUNT(*) FROM information_schema.tables"
        " WHERE table_schema = :s AND table_name = 'out'",
        s=db.schema,
    )[0][0]
    return int(db.rows(f"SELECT COUNT(*) FROM {db.table('out')}")[0][0]) if exists else 0


def test_a_table_stream_survives_sigkilled_workers_exactly_once(
    db: Db,
    start_worker: Callable[..., WorkerProcess],
    sessions: sessionmaker[Session],
    redis_client: redis.Redis,
    keys: Keys,
) -> None:
    db.run(f"CREATE TABLE {db.table('events')} (id BIGINT PRIMARY KEY, k INT NOT NULL)")
    insert(db, 0)
    settings = {
        "JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH": "40",  # many epochs, so kills land mid-stream
        "JETSPARK_JDBC_CONNECTIONS": db.connections_json(main=("legacy",)),
        PASSWORD_ENV: db.password,
    }
    workers = [start_worker("w0", **settings), start_worker("w1", **settings)]
    wait_heartbeating(redis_client, keys, workers)
    job_id = submit(sessions, redis_client, keys, stream(db), settings)
    seen = 0
    for kill in range(KILLS):

        def progressed(j: Job, after: int = seen) -> bool:
            assert j.status in {"QUEUED", "STARTING", "RUNNING"}, (
                f"{j.status}: {j.error_message}",
                [log_of(w.log) for w in workers],
            )
            return j.status == "RUNNING" and snapshot_id(j) > after and written(db) > 0

        job = poll(
            job_when(sessions, job_id, progressed),
            deadline_s=COLD_START_DEADLINE_S + LEASE_S,
            what=f"a new snapshot before kill {kill + 1}",
            every_s=0.2,
        )
        seen = snapshot_id(job)
        holder = next(w for w in workers if w.owns(job.worker))
        os.killpg(holder.pid, signal.SIGKILL)  # the worker and its Spark JVM, mid-epoch
        holder.process.wait(timeout=10)
        workers.remove(holder)
        insert(db, kill + 1)  # rows added while no worker holds the stream
        workers.append(start_worker(f"w{kill + 2}", **settings))

    total = (KILLS + 1) * BATCH
    poll(
        lambda: written(db) >= total or None,
        deadline_s=COLD_START_DEADLINE_S + 300,
        what="every row written",
        every_s=0.5,
    )
    with sessions() as session:
        service.request_transition(session, job_id=job_id, action="cancel")
    rows = db.rows(f"SELECT id, k FROM {db.table('out')}")
    assert Counter(i for i, _ in rows) == Counter(range(1, total + 1)), "lost or doubled rows"
    assert all(k == (i % 13) ** 2 for i, k in rows)
    with sessions() as session:
        final = session.get(Job, job_id)
        assert final is not None and final.attempt >= KILLS + 1, final and final.attempt
