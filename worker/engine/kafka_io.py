"""Kafka partitions read by offset range in Spark tasks, and items produced to a topic, with
confluent-kafka (librdkafka). The driver plans the ranges (``ops.kafka.KafkaPlanner``); a
task reads exactly the offsets it is given, so a replayed epoch reads the same records."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.window import Window

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
METADATA_TIMEOUT_S = 10.0
STALL_S = 60.0
"""A range whose records do not come for this long fails the task (the broker is away)."""

Range = tuple[str, int, int, int]
"""(topic, partition, first offset, end offset): the records first..end-1."""


def _text(value: bytes | None) -> str | None:
    return None if value is None else value.decode("utf-8", errors="replace")


def read_range(bootstrap: str, ranges: list[Range], batch: int) -> Iterator[pa.RecordBatch]:
    """The records of each range, in offset order, in Arrow batches of at most ``batch``."""
    from confluent_kafka import Consumer

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
            rows: list[tuple[str, int, int, str | None, str | None, int]] = []
            for message in range_messages(consumer, "source.kafka", topic, partition, first, end):
                rows.append(
                    (
                        topic,
                        partition,
                        int(message.offset() or 0),
                        _text(message.key()),
                        _text(message.value()),
                        message.timestamp()[1],
                    )
                )
                if len(rows) >= batch:
                    yield _batch(rows)
                    rows = []
            if rows:
                yield _batch(rows)
    finally:
        consumer.close()


def range_messages(
    consumer: Any, kind: str, topic: str, partition: int, first: int, end: int
) -> Iterator[Any]:
    """The partition's messages of offsets ``first`` to ``end - 1``, in order, ``consumer``
    assigned to them; their not coming for ``STALL_S`` (the broker is away) fails ``kind``."""
    import time

    from confluent_kafka import TopicPartition

    consumer.assign([TopicPartition(topic, partition, first)])
    at, waited = first, time.monotonic()
    while at < end:
        message = consumer.poll(POLL_S)
        if message is None:
            if time.monotonic() - waited > STALL_S:
                raise EngineError(f"{kind}: {topic}[{partition}] stalled at {at}")
            continue
        if message.error() is not None:
            raise EngineError(f"{kind}: {topic}[{partition}]: {message.error()}")
        waited = time.monotonic()
        offset = int(message.offset() or 0)
        at = offset + 1
        if offset >= end:
            break
        yield message


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


PROBE_S = 5.0
PATIENT_NEXT_S = 0.2


def true_end(
    consumer: Any, topic: str, partition: int, low: int, high: int, *, patient: bool = False
) -> int:
    """The offset after the partition's last record, or less (never less than ``high``). A
    broker may report as its high watermark the base offset of its last record batch plus
    one (Tansu does): the batch is fetched once from ``high - 1`` and the records it already
    holds counted. Not waiting for more costs nothing but a later epoch for them: a range
    ends where it was planned to. A ``patient`` probe, for a read that must see every record
    (``tagged_since``), waits ``PATIENT_NEXT_S`` after each. On Kafka that is one record, and
    the end is ``high``."""
    from confluent_kafka import TopicPartition

    if high <= low:
        return high
    consumer.assign([TopicPartition(topic, partition, high - 1)])
    end = high
    message = consumer.poll(PROBE_S)  # the batch is fetched whole...
    while message is not None:
        if message.error() is None:
            end = max(end, int(message.offset() or 0) + 1)
        message = consumer.poll(PATIENT_NEXT_S if patient else 0)  # ...the rest is here
    consumer.unassign()
    return end


@dataclass(frozen=True)
class RecordTag:
    """Who wrote a record, in its headers: the job, the sink vertex and, in a stream, the
    epoch. A replayed epoch finds by them the records its lost attempt wrote."""

    job: str
    vertex: str
    epoch: int | None = None

    def headers(self) -> list[tuple[str, bytes]]:
        named = [(JOB_HEADER, self.job), (VERTEX_HEADER, self.vertex)]
        if self.epoch is not None:
            named.append((EPOCH_HEADER, str(self.epoch)))
        return [(name, value.encode()) for name, value in named]

    def marks(self, headers: list[tuple[str, bytes | None]] | None) -> bool:
        """Do a record's headers name this job, vertex and epoch?"""
        return sorted(headers or []) == sorted(self.headers())


JOB_HEADER, VERTEX_HEADER, EPOCH_HEADER = "jetspark-job", "jetspark-vertex", "jetspark-epoch"

Record = tuple[str | None, str]
"""A record as ``sink.kafka`` writes it: (key, JSON value)."""


def assigned_reader(bootstrap: str) -> Any:
    """A short-lived consumer for the driver's offset queries and probes (``true_end``)."""
    from confluent_kafka import Consumer

    return Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "jetspark-unused",  # assigned, never subscribed: no group is joined
            "enable.auto.commit": False,
            "enable.partition.eof": False,
            # A fetch left waiting by a probe holds the broker's connection: the next offset
            # query waited behind it for the default 500 ms (1 s of each epoch's planning).
            "fetch.wait.max.ms": 10,
        }
    )


def topic_partitions(consumer: Any, topic: str) -> list[int]:
    listed = consumer.list_topics(topic, timeout=METADATA_TIMEOUT_S)
    return sorted(listed.topics[topic].partitions) if topic in listed.topics else []


def end_offsets(bootstrap: str, topic: str) -> dict[str, int]:
    """Each partition's high watermark now (``"partition" -> offset``; none for a topic that
    does not exist yet). A broker that reports less than the true end (``true_end``) only
    makes a read from these offsets start a little earlier."""
    from confluent_kafka import TopicPartition

    consumer = assigned_reader(bootstrap)
    try:
        return {
            str(q): int(
                consumer.get_watermark_offsets(
                    TopicPartition(topic, q), timeout=METADATA_TIMEOUT_S
                )[1]
            )
            for q in topic_partitions(consumer, topic)
        }
    finally:
        consumer.close()


def tagged_since(
    bootstrap: str, topic: str, since: dict[str, int], tag: RecordTag
) -> Counter[Record]:
    """The records tagged ``tag`` in ``topic`` from the offsets ``since`` (per partition; a
    partition it does not name, from its start) to the partitions' ends now, counted."""
    from confluent_kafka import TopicPartition

    found: Counter[Record] = Counter()
    consumer = assigned_reader(bootstrap)
    try:
        for q in topic_partitions(consumer, topic):
            low, high = consumer.get_watermark_offsets(
                TopicPartition(topic, q), timeout=METADATA_TIMEOUT_S
            )
            end = true_end(consumer, topic, q, int(low), int(high), patient=True)
            at = max(int(since.get(str(q), low)), int(low))
            if at >= end:
                continue
            for message in range_messages(consumer, "sink.kafka", topic, q, at, end):
                if tag.marks(message.headers()):
                    found[(_text(message.key()), _text(message.value()) or "")] += 1
            consumer.unassign()
    finally:
        consumer.close()
    return found


def produce(
    frame: DataFrame,
    bootstrap: str,
    topic: str,
    key: Any | None,
    tag: RecordTag,
    written: Counter[Record] | None = None,
) -> None:
    """Every row as a JSON value (keyed by ``key``, a Column, when given), tagged ``tag``,
    with the idempotent producer: each task flushes before it ends, so an epoch that
    completes has every record acknowledged. Records already ``written`` (as many of each as
    it counts) are left out: a replayed epoch writes only what its lost attempt did not."""
    columns = [F.col(quote_identifier(c)) for c in frame.columns]
    records = frame.select(
        (key.cast("string") if key is not None else F.lit(None).cast("string")).alias("k"),
        F.to_json(F.struct(*columns)).alias("v"),
    )
    if written:
        records = _left_out(records, written)
    headers: list[tuple[str, str | bytes | None]] = list(tag.headers())

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
                    producer.produce(
                        topic,
                        value=row["v"],
                        key=row["k"],
                        headers=headers,
                        on_delivery=delivered,
                    )
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


def _left_out(records: DataFrame, written: Counter[Record]) -> DataFrame:
    """``records`` without the first ``n`` copies of each record ``written`` ``n`` times:
    copies of one record are alike, so which of them go does not matter."""
    spark = records.sparkSession
    present = spark.createDataFrame(
        [(k, v, n) for (k, v), n in written.items()], "wk string, wv string, present bigint"
    )
    copy = F.row_number().over(Window.partitionBy("k", "v").orderBy("v"))
    numbered = records.withColumn("copy", copy)
    joined = numbered.join(
        F.broadcast(present),
        on=numbered["k"].eqNullSafe(present["wk"]) & (numbered["v"] == present["wv"]),
        how="left",
    )
    return joined.where(F.col("copy") > F.coalesce(F.col("present"), F.lit(0))).select("k", "v")
