"""``sink.kafka`` under exactly-once, without Kafka transactions: each record is tagged with
its job, vertex and epoch; an epoch's plan keeps the topic's end offsets; a replayed epoch
reads back what its lost attempt wrote from there and writes only the rest."""

from __future__ import annotations

import json
import threading
import uuid
from collections import Counter

import pytest
from confluent_kafka import Consumer, TopicPartition
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from tests.engine.epoch_logs import MemoryEpochLog, WorkerLost
from tests.jdbc.conftest import ALICE
from tests.kafka.test_broker import create_topic
from tests.kafka.test_kafka import clusters, poll, produce, run_stream, stop, topic_job
from worker.engine import JobControl
from worker.engine.contract import RedisTarget
from worker.engine.kafka_io import RecordTag, end_offsets, tagged_since
from worker.engine.kafka_io import produce as produce_frame

Tagged = tuple[str | None, str, tuple[tuple[str, bytes], ...]]


def records(bootstrap: str, topic: str, partitions: int = 3) -> Counter[Tagged]:
    """Every record of ``topic``: (key, value, headers), counted."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    seen: Counter[Tagged] = Counter()
    empty = 0
    while empty < 5:  # five quiet polls: the topic is read to its end
        message = consumer.poll(1.0)
        if message is None:
            empty += 1
            continue
        assert message.error() is None, message.error()
        key = message.key()
        raw = message.headers() or []
        pairs = list(raw.items()) if isinstance(raw, dict) else raw
        headers = tuple(sorted((n, _bytes(v)) for n, v in pairs))
        seen[
            (
                None if key is None else _bytes(key).decode(),
                _bytes(message.value()).decode(),
                headers,
            )
        ] += 1
    consumer.close()
    return seen


def _bytes(value: str | bytes | None) -> bytes:
    return value.encode() if isinstance(value, str) else value or b""


@pytest.mark.spark
def test_a_replayed_epoch_writes_only_what_its_lost_attempt_did_not(
    kafka: str, spark: SparkSession
) -> None:
    topic = create_topic(kafka)
    rows = [(n, "distinct") for n in range(40)] + [(99, "copy")] * 3  # a record thrice
    frame = spark.createDataFrame(rows, "n int, kind string").repartition(3)
    key = F.col("n")
    tag = RecordTag("job-a", "out", 7)
    since = end_offsets(kafka, topic)
    # Records alike but not this epoch's: another epoch of the job, and another job.
    produce_frame(frame.limit(5), kafka, topic, key, RecordTag("job-a", "out", 6))
    produce_frame(frame.limit(5), kafka, topic, key, RecordTag("job-b", "out", 7))
    # The lost attempt wrote some of the epoch: 15 records and one of the three copies.
    lost = spark.createDataFrame([*rows[:15], (99, "copy")], "n int, kind string")
    produce_frame(lost, kafka, topic, key, tag)
    written = tagged_since(kafka, topic, since, tag)
    assert sum(written.values()) == 16
    assert written[("99", json.dumps({"n": 99, "kind": "copy"}, separators=(",", ":")))] == 1

    produce_frame(frame, kafka, topic, key, tag, written)  # the replay

    mine = tuple(sorted(tag.headers()))
    expected = Counter(
        (str(n), json.dumps({"n": n, "kind": kind}, separators=(",", ":")), mine)
        for n, kind in rows
    )
    out = records(kafka, topic)
    assert Counter({r: c for r, c in out.items() if r[2] == mine}) == expected
    assert sum(out.values()) == len(rows) + 10  # the other epoch's and job's, as they were
    # Replayed again (the replay's worker lost too): nothing more.
    produce_frame(frame, kafka, topic, key, tag, tagged_since(kafka, topic, since, tag))
    assert sum(records(kafka, topic).values()) == len(rows) + 10


@pytest.mark.spark
@pytest.mark.timeout(900)
def test_epochs_written_by_a_lost_attempt_are_not_written_again(
    kafka: str,
    spark: SparkSession,
    redis_url: str,
    redis_namespace: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Through the epoch loop: the attempt is lost when epoch 1 commits, after the epochs 1
    and 2 wrote their records (2 ran while 1 committed); the next attempt replays both from
    their plans and writes none of their records again."""
    monkeypatch.setenv("JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH", "30")  # 3 epochs of 90 records
    source, target = create_topic(kafka), create_topic(kafka)
    produce(kafka, source, range(90))
    sink = {"processor": "sink.kafka", "params": {"cluster": "events", "topic": target, "key": "n"}}
    body = topic_job(source, sink, guarantee="exactly_once")
    epochs = MemoryEpochLog(lose_at=1)
    group = f"job-{uuid.uuid4()}"

    def control() -> JobControl:
        return JobControl(
            job_group=group,
            cancelled=threading.Event(),
            epochs=epochs,
            redis=RedisTarget(redis_url, redis_namespace, ALICE),
            kafka=clusters(kafka),
        )

    thread, ended = run_stream(spark, body, control())
    thread.join(timeout=600)
    assert len(ended) == 1 and isinstance(ended[0], WorkerLost), ended
    first = records(kafka, target)
    assert sum(first.values()) == 60  # epochs 1 and 2, each 30 records
    assert Counter(int(dict(h)["jetspark-epoch"]) for _, _, h in first.elements()) == {1: 30, 2: 30}

    again = control()
    thread, ended = run_stream(spark, body, again)
    try:
        poll(lambda: sum(records(kafka, target).values()) >= 90, "epoch 3", thread, ended)
    finally:
        stop(again, thread, ended)
    out = records(kafka, target)
    values = Counter(json.loads(v)["n"] for (_, v, _), c in out.items() for _ in range(c))
    assert values == Counter(range(90))  # each record once: 60 replayed, none written again
    assert {dict(h)["jetspark-job"] for _, _, h in out} == {group.encode()}
