"""``source.kafka`` and ``sink.kafka`` against a real Kafka-protocol broker (Tansu)."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import Producer
from pyspark.sql import SparkSession

from jetspark.dag.model import JobSpec
from jetspark.dag.plan import build_plan
from jetspark.dag.validate import validate_job
from jetspark.jdbc.connections import JdbcConnections
from jetspark.kafka.clusters import KafkaClusters, KafkaConfigError, topic_problems
from tests.jdbc.conftest import ALICE, Db, body
from tests.kafka.test_broker import create_topic, read_all
from worker.engine import JobControl, run_job
from worker.engine.contract import RedisTarget
from worker.engine.runner import JobCancelled


def clusters(bootstrap: str) -> KafkaClusters:
    rules = {ALICE: ["t-*"], "*": ["public.*"]}
    return KafkaClusters.parse(json.dumps({"events": {"bootstrap": bootstrap, "topics": rules}}))


def topic_job(
    source_topic: str, sink: dict[str, Any], guarantee: str = "at_least_once"
) -> dict[str, Any]:
    return body(
        [
            {"name": "in", "processor": "source.kafka",
             "params": {"cluster": "events", "topics": [source_topic]}},
            {"name": "v", "processor": "map",
             "params": {"select": {"n": "cast(value AS int)", "partition": "partition"}}},
            {"name": "out", **sink},
        ],
        [{"from": "in", "to": "v"}, {"from": "v", "to": "out"}],
        processing_guarantee=guarantee,
        epoch_interval_ms=100,
        snapshot_interval_ms=200,
        local_parallelism=2,
    )  # fmt: skip


def test_clusters_and_topics_are_the_operators_per_principal() -> None:
    known = clusters("127.0.0.1:1")
    assert known.by_name["events"].allows(ALICE, "t-1")
    assert known.by_name["events"].allows("bob", "public.x")
    assert not known.by_name["events"].allows("bob", "t-1")
    for bad in ("{", '{"c": {"bootstrap": ""}}', '{"c": {"bootstrap": "h:1", "topics": []}}'):
        with pytest.raises(KafkaConfigError):
            KafkaClusters.parse(bad)
    sink = {"processor": "sink.kafka", "params": {"cluster": "events", "topic": "t-out"}}
    spec = JobSpec.model_validate(topic_job("t-in", sink))
    assert topic_problems(spec, ALICE, known) == []
    assert [p.pointer for p in topic_problems(spec, "bob", known)] == [
        "/dag/vertices/0/params/topics/0",
        "/dag/vertices/2/params/topic",
    ]
    elsewhere = JobSpec.model_validate(
        topic_job("t-in", {**sink, "params": {"cluster": "other", "topic": "t-out"}})
    )
    [unknown] = topic_problems(elsewhere, ALICE, known)
    assert "unknown Kafka cluster 'other'" in unknown.message
    assert unknown.pointer == "/dag/vertices/2/params/cluster"


def produce(bootstrap: str, topic: str, values: range) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for n in values:
        producer.produce(topic, value=str(n).encode(), partition=n % 3)
    assert producer.flush(30) == 0


def run_stream(
    spark: SparkSession, job_body: dict[str, Any], control: JobControl
) -> tuple[threading.Thread, list[BaseException]]:
    spec = JobSpec.model_validate(job_body)
    plan = build_plan(validate_job(spec))
    control.job_id = uuid.UUID(control.job_group.removeprefix("job-"))
    ended: list[BaseException] = []

    def run() -> None:
        try:
            run_job(spark, plan, control)
        except BaseException as error:  # the test reads how it ended
            ended.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, ended


def poll(
    check: Callable[[], bool], what: str, thread: threading.Thread, ended: list[BaseException]
) -> None:
    deadline = time.monotonic() + 600  # a first epoch took 90 s on a loaded machine
    while not check():
        assert thread.is_alive(), (what, ended)
        assert time.monotonic() < deadline, what
        time.sleep(0.2)  # polling the broker or the table, bounded by the deadline


def stop(control: JobControl, thread: threading.Thread, ended: list[BaseException]) -> None:
    control.cancelled.set()
    thread.join(timeout=120)
    assert len(ended) == 1 and isinstance(ended[0], JobCancelled), ended


@pytest.mark.spark
@pytest.mark.timeout(900)
def test_a_topic_streams_into_a_topic(
    kafka: str, spark: SparkSession, redis_url: str, redis_namespace: str
) -> None:
    source, target = create_topic(kafka), create_topic(kafka)
    produce(kafka, source, range(300))
    sink = {"processor": "sink.kafka", "params": {"cluster": "events", "topic": target, "key": "n"}}
    control = JobControl(
        job_group=f"job-{uuid.uuid4()}",
        redis=RedisTarget(redis_url, redis_namespace, ALICE),
        kafka=clusters(kafka),
    )
    thread, ended = run_stream(spark, topic_job(source, sink), control)
    try:
        poll(lambda: len(read_all(kafka, target, 3)) >= 300, "the first records", thread, ended)
        produce(kafka, source, range(300, 500))
        poll(lambda: len(read_all(kafka, target, 3)) >= 500, "the records added", thread, ended)
    finally:
        stop(control, thread, ended)
    values = [json.loads(v) for _, v in read_all(kafka, target, 3)]
    assert Counter(v["n"] for v in values) == Counter(range(500))
    assert all(v["partition"] == v["n"] % 3 for v in values)


@pytest.mark.spark
@pytest.mark.timeout(900)
def test_a_topic_streams_into_a_table_exactly_once(
    kafka: str,
    spark: SparkSession,
    db: Db,
    connections: JdbcConnections,
    redis_url: str,
    redis_namespace: str,
) -> None:
    """Kafka offsets in the planned ranges, the table's rows committed with their epoch."""
    source = create_topic(kafka)
    produce(kafka, source, range(200))
    sink = {"processor": "sink.jdbc", "params": {"connection": "main", "table": db.table("nums")}}
    control = JobControl(
        job_group=f"job-{uuid.uuid4()}",
        redis=RedisTarget(redis_url, redis_namespace, ALICE),
        kafka=clusters(kafka),
        jdbc=connections,
    )
    thread, ended = run_stream(spark, topic_job(source, sink, "exactly_once"), control)

    def written() -> int:
        exists = db.rows(
            "SELECT COUNT(*) FROM information_schema.tables"
            " WHERE table_schema = :s AND table_name = 'nums'",
            s=db.schema,
        )[0][0]
        return int(db.rows(f"SELECT COUNT(*) FROM {db.table('nums')}")[0][0]) if exists else 0

    try:
        poll(lambda: written() >= 200, "the records in the table", thread, ended)
    finally:
        stop(control, thread, ended)
    rows = db.rows(f"SELECT n FROM {db.table('nums')}")
    assert Counter(n for (n,) in rows) == Counter(range(200))
