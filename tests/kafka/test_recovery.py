"""An exactly-once Kafka stream survives a SIGKILLed worker: ``source.kafka``'s offsets come
back from the snapshot and the planned ranges, ``sink.jdbc`` commits each epoch with its
marker; every record of the topic reaches the table exactly once."""

from __future__ import annotations

import json
import os
import signal
from collections import Counter
from collections.abc import Callable

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
from tests.jdbc.conftest import PASSWORD_ENV, Db
from tests.kafka.test_broker import create_topic
from tests.kafka.test_kafka import produce, topic_job

pytestmark = [pytest.mark.slow, pytest.mark.spark, pytest.mark.timeout(1800)]

BATCH = 300
PER_EPOCH = 10
"""Records an epoch reads (3 from each of the 3 partitions): the first batch takes over 30
epochs, so the kill lands mid-stream even when several pass between the first snapshot with
rows and the test seeing it (at 30, all 10 could pass while a loaded machine's poll lags)."""


def written(db: Db) -> int:
    exists = db.rows(
        "SELECT COUNT(*) FROM information_schema.tables"
        " WHERE table_schema = :s AND table_name = 'nums'",
        s=db.schema,
    )[0][0]
    return int(db.rows(f"SELECT COUNT(*) FROM {db.table('nums')}")[0][0]) if exists else 0


def test_a_kafka_stream_survives_a_sigkilled_worker_exactly_once(
    kafka: str,
    db: Db,
    start_worker: Callable[..., WorkerProcess],
    sessions: sessionmaker[Session],
    redis_client: redis.Redis,
    keys: Keys,
) -> None:
    topic = create_topic(kafka)
    produce(kafka, topic, range(BATCH))
    clusters = {"events": {"bootstrap": kafka, "topics": {"legacy": [topic]}}}
    settings = {
        "JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH": str(PER_EPOCH),
        "JETSPARK_KAFKA_CLUSTERS": json.dumps(clusters),
        "JETSPARK_JDBC_CONNECTIONS": db.connections_json(main=("legacy",)),
        PASSWORD_ENV: db.password,
    }
    workers = [start_worker("w0", **settings), start_worker("w1", **settings)]
    wait_heartbeating(redis_client, keys, workers)
    sink = {"processor": "sink.jdbc", "params": {"connection": "main", "table": db.table("nums")}}
    body = topic_job(topic, sink, "exactly_once")
    body["config"]["members"] = 1
    job_id = submit(sessions, redis_client, keys, body, settings)

    def progressed(j: Job) -> bool:
        assert j.status in {"QUEUED", "STARTING", "RUNNING"}, (
            f"{j.status}: {j.error_message}",
            [log_of(w.log) for w in workers],
        )
        return j.status == "RUNNING" and j.last_snapshot is not None and written(db) > 0

    job = poll(
        job_when(sessions, job_id, progressed),
        deadline_s=COLD_START_DEADLINE_S + LEASE_S,
        what="a snapshot and rows before the kill",
        every_s=0.2,
    )
    assert written(db) < BATCH, "the kill must land mid-stream"
    holder = next(w for w in workers if w.owns(job.worker))
    os.killpg(holder.pid, signal.SIGKILL)  # the worker and its Spark JVM, mid-epoch
    holder.process.wait(timeout=10)
    workers.remove(holder)
    produce(kafka, topic, range(BATCH, 2 * BATCH))  # records added while no worker holds it
    workers.append(start_worker("w2", **settings))
    poll(
        lambda: written(db) >= 2 * BATCH or None,
        deadline_s=COLD_START_DEADLINE_S + 300,
        what="every record written",
        every_s=0.5,
    )
    with sessions() as session:
        service.request_transition(session, job_id=job_id, action="cancel")
    rows = db.rows(f"SELECT n, partition FROM {db.table('nums')}")
    assert Counter(n for n, _ in rows) == Counter(range(2 * BATCH)), "lost or doubled records"
    assert all(p == n % 3 for n, p in rows)
    with sessions() as session:
        final = session.get(Job, job_id)
        assert final is not None and final.attempt >= 2, final and final.attempt
