"""``source.kafka``'s watermarks per Kafka partition with the real broker and Spark: keyed
tumbling windows of a 3-partition topic close by the minimum over the partitions that are
not idle (the seeds' coalescing rules, ``WatermarkTracker.observe_partitions``)."""

from __future__ import annotations

import json
import threading
import uuid
from collections import Counter
from typing import Any

import pytest
from confluent_kafka import Producer
from pyspark.sql import SparkSession

from jetspark.metrics import names
from tests.jdbc.conftest import ALICE, body
from tests.kafka.test_broker import create_topic, read_all
from tests.kafka.test_kafka import clusters, poll, run_stream, stop
from worker.engine import JobControl
from worker.engine.contract import RedisTarget, StreamMarks

# The first epochs took minutes each on a loaded machine.
pytestmark = [pytest.mark.spark, pytest.mark.timeout(1500)]

BASE = 1_700_000_000_000
"""Event time of the records (ms), a whole second: window k is [BASE + k s, BASE + (k+1) s)."""
WINDOWS = 10


def window_job(source: str, target: str, idle_timeout_ms: int) -> dict[str, Any]:
    return body(
        [
            {"name": "in", "processor": "source.kafka",
             "params": {"cluster": "events", "topics": [source],
                        "idle_timeout_ms": idle_timeout_ms}},
            {"name": "w", "processor": "window",
             "params": {"timestamp": "ts", "type": "tumbling", "size_ms": 1000,
                        "key": "partition", "aggregations": {"n": "count(*)"}}},
            {"name": "out", "processor": "sink.kafka",
             "params": {"cluster": "events", "topic": target, "key": "key"}},
        ],
        [
            {"from": "in", "to": "w", "routing": "partitioned", "key": "partition",
             "distributed": True},
            {"from": "w", "to": "out"},
        ],
        processing_guarantee="at_least_once",
        epoch_interval_ms=100,
        snapshot_interval_ms=500,
        local_parallelism=2,  # processor 0 reads partitions 0 and 2, processor 1 partition 1
    )  # fmt: skip


def produce_windows(bootstrap: str, topic: str, partitions: list[int]) -> None:
    """Two records in each of the ``WINDOWS`` windows, on each of ``partitions``."""
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for partition in partitions:
        for k in range(WINDOWS):
            for at in (100, 600):
                stamp = BASE + k * 1000 + at
                producer.produce(topic, value=b"x", partition=partition, timestamp=stamp)
    assert producer.flush(30) == 0


def windows_out(bootstrap: str, topic: str) -> Counter[tuple[int, int, int]]:
    """(key = Kafka partition, window start - BASE, count) of each window emitted."""
    values = [json.loads(v) for _, v in read_all(bootstrap, topic, 3)]
    return Counter((int(v["key"]), int(v["window_start"]) - BASE, int(v["n"])) for v in values)


def control_for(kafka: str, redis_url: str, redis_namespace: str) -> JobControl:
    return JobControl(
        job_group=f"job-{uuid.uuid4()}",
        redis=RedisTarget(redis_url, redis_namespace, ALICE),
        kafka=clusters(kafka),
    )


def marks_of(control: JobControl) -> StreamMarks:
    """The stream's watermarks (none before it starts)."""
    return StreamMarks(0, {}) if control.marks is None else control.marks()


class Feeder:
    """Records every 0.2 s at a fixed event time on some partitions: a partition fed is never
    idle, and its watermark stays where the feeder's time is."""

    def __init__(self, bootstrap: str, topic: str, stamps: dict[int, int]) -> None:
        self.producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
        self.topic, self.stamps = topic, dict(stamps)
        self.fed: Counter[int] = Counter()
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.feed, daemon=True)
        self.thread.start()

    def feed(self) -> None:
        while not self.stopping.is_set():
            with self.lock:
                for partition, stamp in self.stamps.items():
                    self.producer.produce(
                        self.topic, value=b"feed", partition=partition, timestamp=stamp
                    )
                self.producer.flush(10)
                self.fed.update(list(self.stamps))  # one record each
            self.stopping.wait(0.2)

    def stop_feeding(self, partition: int) -> int:
        """No more records on ``partition``; how many it had."""
        with self.lock:
            del self.stamps[partition]
            return self.fed[partition]

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(timeout=30)


KEEP_OPEN = BASE + (WINDOWS - 1) * 1000 + 600
"""The feeders' time on partitions 0 and 1: in the last window, which never closes."""
CLOSED = Counter((q, k * 1000, 2) for q in (0, 1) for k in range(WINDOWS - 1))
"""Windows 0..8 of partitions 0 and 1: closed by the watermark KEEP_OPEN."""


def test_a_partition_without_records_does_not_hold_the_windows_back(
    kafka: str, spark: SparkSession, redis_url: str, redis_namespace: str
) -> None:
    source, target = create_topic(kafka), create_topic(kafka)
    produce_windows(kafka, source, [0, 1])  # partition 2 gets nothing: idle after 1 s
    feeder = Feeder(kafka, source, {0: KEEP_OPEN, 1: KEEP_OPEN})
    control = control_for(kafka, redis_url, redis_namespace)
    thread, ended = run_stream(spark, window_job(source, target, 1000), control)
    try:
        poll(lambda: windows_out(kafka, target) == CLOSED, "windows 0..8", thread, ended)
        marks = marks_of(control).processors["in"]
        assert [m[names.LAST_FORWARDED_WM] for m in marks] == [KEEP_OPEN] * 2
        assert [m["idle"] for m in marks] == [False, False]
    finally:
        feeder.stop()
        stop(control, thread, ended)
    assert windows_out(kafka, target) == CLOSED


def test_a_slow_partition_holds_the_watermark_back_until_it_is_idle(
    kafka: str, spark: SparkSession, redis_url: str, redis_namespace: str
) -> None:
    source, target = create_topic(kafka), create_topic(kafka)
    produce_windows(kafka, source, [0, 1])
    slow = BASE + 300  # partition 2's time: in window 0
    feeder = Feeder(kafka, source, {0: KEEP_OPEN, 1: KEEP_OPEN, 2: slow})
    control = control_for(kafka, redis_url, redis_namespace)
    thread, ended = run_stream(spark, window_job(source, target, 3000), control)
    try:

        def source_marks() -> list[dict[str, Any]]:
            return marks_of(control).processors.get("in", [])

        def read_the_rest() -> bool:
            tops = [m[names.TOP_OBSERVED_WM] for m in source_marks()]
            return tops == [KEEP_OPEN] * 2

        def forwarded() -> list[Any]:
            return [m[names.LAST_FORWARDED_WM] for m in source_marks()]

        poll(read_the_rest, "partitions 0 and 1 read", thread, ended)
        # The feeder's first record on partition 2 may come late on a loaded machine: until
        # it does, processor 0 forwards nothing (partition 2 is not idle for 3 s yet).
        poll(lambda: forwarded() == [slow, KEEP_OPEN], "partition 2's time", thread, ended)
        seen_at = marks_of(control).epoch
        poll(lambda: marks_of(control).epoch >= seen_at + 3, "three epochs more", thread, ended)
        # Processor 0 has partitions 0 and 2: partition 2 holds it back, and so every window
        # (the minimum over the processors): none closes.
        assert forwarded() == [slow, KEEP_OPEN]
        assert marks_of(control).processors["w"][0][names.COALESCED_WM] == slow
        assert windows_out(kafka, target) == Counter()
        fed = feeder.stop_feeding(2)
        # Quiet for 3 s, partition 2 is idle: the watermark is KEEP_OPEN.
        expected = CLOSED + Counter({(2, 0, fed): 1})
        poll(lambda: windows_out(kafka, target) == expected, "windows 0..8", thread, ended)
        assert [m[names.LAST_FORWARDED_WM] for m in source_marks()] == [KEEP_OPEN] * 2
    finally:
        feeder.stop()
        stop(control, thread, ended)
    assert windows_out(kafka, target) == expected
