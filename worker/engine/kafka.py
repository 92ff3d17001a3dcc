"""Kafka partitions read by offset range in Spark tasks, and items produced to a topic, with
confluent-kafka (librdkafka). The driver plans the ranges (``ops.kafka.KafkaPlanner``); a
task reads exactly the offsets it is given, so a replayed epoch reads the same records."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jetspark.dag.expressions import quote_identifier
from worker.engine.errors import EngineError

SCHEMA = "topic string, partition int, offset bigint, key string, value string, ts bigint"
_ARROW = pa.schema(
    [
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("key", pa.string()),
        ("value", pa.string()),
        ("ts", pa.int64()),
    ]
)
POLL_S = 1.0
STALL_S = 60.0
"""A range whose records do not come for this long fails the task (the broker is away)."""

Range = tuple[str, int, int, int]
"""(topic, partition, first offset, end offset): the records first..end-1."""


def _text(value: bytes | None) -> str | None:
    return None if value is None else value.decode("utf-8", errors="replace")


def read_range(bootstrap: str, ranges: list[Range], batch: int) -> Iterator[pa.RecordBatch]:
    """The records of each range, in offset order, in Arrow batches of at most ``batch``."""
    import time

    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "jetspark-unused",  # assigned, never subscribed: no group is joined
            "enable.auto.commit": False,
            "enable.partition.eof": False,
            "isolation.level": "read_committed",
        }
    )
    try:
        for topic, partition, first, end in ranges:
            if end <= first:
                continue
            consumer.assign([TopicPartition(topic, partition, first)])
            rows: list[tuple[str, int, int, str | None, str | None, int]] = []
            at, waited = first, time.monotonic()
            while at < end:
                message = consumer.poll(POLL_S)
                if message is None:
                    if time.monotonic() - waited > STALL_S:
                        raise EngineError(f"source.kafka: {topic}[{partition}] stalled at {at}")
                    continue
                if message.error() is not None:
                    raise EngineError(f"source.kafka: {topic}[{partition}]: {message.error()}")
                waited = time.monotonic()
                offset = int(message.offset() or 0)
                at = offset + 1
                if offset >= end:
                    break
                stamp = message.timestamp()[1]
                rows.append(
                    (topic, partition, offset, _text(message.key()), _text(message.value()), stamp)
                )
                if len(rows) >= batch:
                    yield _batch(rows)
                    rows = []
            if rows:
                yield _batch(rows)
    finally:
        consumer.close()


def _batch(rows: list[tuple[Any, ...]]) -> pa.RecordBatch:
    columns = list(zip(*rows, strict=True))
    return pa.RecordBatch.from_arrays(
        [pa.array(list(c), f.type) for c, f in zip(columns, _ARROW, strict=True)], schema=_ARROW
    )


def topic_frame(
    spark: SparkSession, bootstrap: str, ranges: list[Range], parallelism: int, batch: int
) -> DataFrame:
    """Processor g reads ``ranges[g::parallelism]``."""

    def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for _ in batches:  # one seed row per processor
            pass
        g = TaskContext.get().partitionId()  # type: ignore[union-attr]
        yield from read_range(bootstrap, ranges[g::parallelism], batch)

    seeds = spark.range(parallelism, numPartitions=parallelism)
    return seeds.mapInArrow(read, SCHEMA)


def produce(frame: DataFrame, bootstrap: str, topic: str, key: Any | None) -> None:
    """Every row as a JSON value (keyed by ``key``, a Column, when given), with the
    idempotent producer: each task flushes before it ends, so an epoch that completes has
    every record acknowledged."""
    columns = [F.col(quote_identifier(c)) for c in frame.columns]
    records = frame.select(
        (key.cast("string") if key is not None else F.lit(None).cast("string")).alias("k"),
        F.to_json(F.struct(*columns)).alias("v"),
    )

    def write(rows: Iterator[Any]) -> None:
        from confluent_kafka import Producer

        producer = Producer(
            {"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5}
        )
        failures: list[str] = []

        def delivered(error: Any, _message: Any) -> None:
            if error is not None:
                failures.append(str(error))

        for row in rows:
            while True:
                try:
                    producer.produce(topic, value=row["v"], key=row["k"], on_delivery=delivered)
                    break
                except BufferError:  # the local queue is full: let it drain
                    producer.poll(0.1)
            producer.poll(0)
        left = producer.flush(120)
        if left or failures:
            raise EngineError(
                f"sink.kafka: {left} records unacknowledged, failures: {failures[:3]}"
            )

    records.foreachPartition(write)
