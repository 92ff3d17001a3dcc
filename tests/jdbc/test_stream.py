"""``source.jdbc`` with an incremental column and ``sink.jdbc`` in streams, on the engine."""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from pyspark.sql import SparkSession

from jetspark.dag.model import JobSpec
from jetspark.dag.plan import build_plan
from jetspark.dag.validate import validate_job
from jetspark.jdbc.connections import JdbcConnections
from tests.jdbc.conftest import ALICE, Db, body
from worker.engine import JobControl, RunnableJob, run_job
from worker.engine.contract import RedisTarget
from worker.engine.jdbc_io import MARKERS
from worker.engine.runner import JobCancelled

pytestmark = pytest.mark.spark


def stream_body(db: Db, guarantee: str) -> dict[str, Any]:
    return body(
        [
            {
                "name": "read",
                "processor": "source.jdbc",
                "params": {
                    "connection": "main",
                    "table": db.table("events"),
                    "columns": ["id", "v"],
                    "where": "v >= 0",
                    "incremental_column": "id",
                },
            },
            {"name": "twice", "processor": "map", "params": {"select": {"id": "id", "w": "v * 2"}}},
            {
                "name": "write",
                "processor": "sink.jdbc",
                "params": {"connection": "main", "table": db.table("out")},
            },
        ],
        [{"from": "read", "to": "twice"}, {"from": "twice", "to": "write"}],
        processing_guarantee=guarantee,
        epoch_interval_ms=100,
        snapshot_interval_ms=200,
        local_parallelism=2,
    )


def insert(db: Db, low: int, high: int) -> None:
    db.run(
        f"INSERT INTO {db.table('events')} SELECT g, CASE WHEN g % 10 = 0 THEN -1 ELSE g END"
        f" FROM generate_series({low}, {high}) g"
    )


def poll(check: Callable[[], bool], what: str, alive: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 180
    while not check():
        assert alive(), f"the stream ended before {what}"
        assert time.monotonic() < deadline, what
        time.sleep(0.1)  # polling the table, bounded by the deadline


@pytest.mark.parametrize("guarantee", ["exactly_once", "at_least_once"])
def test_an_incremental_read_streams_each_new_row_once(
    db: Db,
    spark: SparkSession,
    connections: JdbcConnections,
    redis_url: str,
    redis_namespace: str,
    guarantee: str,
) -> None:
    db.run(f"CREATE TABLE {db.table('events')} (id BIGINT PRIMARY KEY, v INT NOT NULL)")
    insert(db, 1, 50)
    spec = JobSpec.model_validate(stream_body(db, guarantee))
    plan = build_plan(validate_job(spec))
    job = RunnableJob(uuid.uuid4(), 1, plan.model_dump(mode="json"))
    control = JobControl(
        job_group=f"job-{job.id}",
        job_id=job.id,
        redis=RedisTarget(redis_url, redis_namespace, ALICE),
        jdbc=connections,
    )
    ended: list[BaseException] = []

    def run() -> None:
        try:
            run_job(spark, plan, control)
        except BaseException as error:  # the test reads how it ended
            ended.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()

    def written() -> int:
        found = db.rows(
            "SELECT COUNT(*) FROM information_schema.tables"
            " WHERE table_schema = :s AND table_name = 'out'",
            s=db.schema,
        )[0][0]
        return int(db.rows(f"SELECT COUNT(*) FROM {db.table('out')}")[0][0]) if found else 0

    try:
        poll(lambda: written() >= 45, "the first rows", thread.is_alive)
        insert(db, 51, 120)
        poll(lambda: written() >= 108, "the rows added while it ran", thread.is_alive)
    finally:
        control.cancelled.set()
        thread.join(timeout=120)
    assert len(ended) == 1 and isinstance(ended[0], JobCancelled), ended
    rows = db.rows(f"SELECT id, w FROM {db.table('out')}")
    assert Counter(i for i, _ in rows) == Counter(i for i in range(1, 121) if i % 10), (
        "lost or doubled"
    )
    assert all(w == 2 * i for i, w in rows)
    markers = db.rows(
        "SELECT COUNT(*) FROM information_schema.tables"
        " WHERE table_schema = :s AND table_name = :t",
        s=db.schema,
        t=MARKERS,
    )[0][0]
    assert markers == (1 if guarantee == "exactly_once" else 0)
