"""``source.kafka`` and ``sink.kafka``: topics of operator-named clusters, each topic checked
against the job's principal (``jetspark.kafka.clusters``) where it is used."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pyspark.sql import DataFrame

from jetspark.dag import kinds as p
from jetspark.kafka.clusters import KafkaCluster, KafkaClusters, TopicRefused
from worker.engine.contract import JobControl
from worker.engine.errors import EngineError
from worker.engine.expressions import user_column
from worker.engine.kafka import Range, produce, topic_frame
from worker.engine.ops.base import Op, OpContext, SourceOp, outbox_capacity, params_of
from worker.engine.ops.sinks import union_inputs
from worker.engine.streaming.source_planners import Json, SourcePlanner

METADATA_TIMEOUT_S = 10.0


def cluster_of(
    clusters: KafkaClusters, principal: str, kind: str, name: str, topics: list[str]
) -> KafkaCluster:
    try:
        return clusters.for_principal(name, principal, topics)
    except TopicRefused as refused:
        raise EngineError(f"{kind}: {refused}") from None


PROBE_FIRST_S = 5.0
PROBE_NEXT_S = 0.2


def _true_end(consumer: Any, topic: str, partition: int, low: int, high: int) -> int:
    """The offset after the partition's last record. A broker may report as its high
    watermark the base offset of its last record batch plus one (Tansu does): the records
    from ``high - 1`` on are read once to find the batch's last offset. On Kafka that is one
    record, and the end is ``high``."""
    from confluent_kafka import TopicPartition

    if high <= low:
        return high
    consumer.assign([TopicPartition(topic, partition, high - 1)])
    end = high
    message = consumer.poll(PROBE_FIRST_S)
    while message is not None:
        if message.error() is None:
            end = max(end, int(message.offset() or 0) + 1)
        message = consumer.poll(PROBE_NEXT_S)
    consumer.unassign()
    return end


class KafkaPlanner:
    """Per Kafka partition of the topics, the next offset to read (``next``, kept in the
    snapshots); an epoch reads from it to the partition's end when planned, at most
    ``max_items`` records in all, shared out over the partitions."""

    def __init__(self, control: JobControl) -> None:
        self.control = control

    def cluster(self, params: p.KafkaSource) -> KafkaCluster:
        return cluster_of(
            self.control.kafka,
            self.control.redis.principal,
            "source.kafka",
            params.cluster,
            params.topics,
        )

    def watermarks(self, params: BaseModel) -> dict[str, tuple[int, int]]:
        """``topic:partition`` -> (low, high) offsets now."""
        from confluent_kafka import Consumer, TopicPartition

        assert isinstance(params, p.KafkaSource)
        cluster = self.cluster(params)
        # One per epoch, closed after: a planner has no end to close a kept one at.
        consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": "jetspark-unused"})
        marks: dict[str, tuple[int, int]] = {}
        try:
            for topic in params.topics:
                listed = consumer.list_topics(topic, timeout=METADATA_TIMEOUT_S)
                partitions = listed.topics[topic].partitions if topic in listed.topics else {}
                for partition in sorted(partitions):
                    low, high = consumer.get_watermark_offsets(
                        TopicPartition(topic, partition), timeout=METADATA_TIMEOUT_S
                    )
                    end = _true_end(consumer, topic, partition, int(low), int(high))
                    marks[f"{topic}:{partition}"] = (int(low), end)
        except Exception as error:  # librdkafka's KafkaException: the broker is away
            raise EngineError(f"source.kafka: cluster {params.cluster!r}: {error}") from None
        finally:
            consumer.close()
        return marks

    def start(self, params: BaseModel, now_ms: int) -> Json:
        assert isinstance(params, p.KafkaSource)
        marks = self.watermarks(params)
        at = 0 if params.start == "earliest" else 1
        return {"next": {key: mark[at] for key, mark in marks.items()}}

    def plan(self, params: BaseModel, offsets: Json, now_ms: int, max_items: int) -> Json:
        marks = self.watermarks(params)
        known: dict[str, int] = dict(offsets.get("next", {}))
        share = max(1, max_items // max(1, len(marks)))
        ranges: list[Range] = []
        for key, (low, high) in sorted(marks.items()):
            first = max(known.get(key, low), low)  # a new partition from its start
            topic, _, partition = key.rpartition(":")
            ranges.append((topic, int(partition), first, max(first, min(high, first + share))))
        return {"ranges": [list(r) for r in ranges]}

    def advance(self, params: BaseModel, offsets: Json, planned: Json) -> Json:
        known = dict(offsets.get("next", {}))
        for topic, partition, _first, end in planned["ranges"]:
            known[f"{topic}:{partition}"] = end
        return {**offsets, "next": known}

    def exhausted(self, params: BaseModel, offsets: Json) -> bool:
        return False

    def is_empty(self, planned: Json) -> bool:
        return all(end <= first for _t, _p, first, end in planned["ranges"])


class KafkaSourceOp(SourceOp):
    """Exactly the offsets the epoch's ranges name: Kafka partition i to processor i % P."""

    def planner_for(self, control: JobControl) -> SourcePlanner:
        return KafkaPlanner(control)

    def apply(self, ctx: OpContext) -> DataFrame:
        params = params_of(ctx, p.KafkaSource)
        if ctx.epoch is None:
            raise EngineError("source.kafka is unbounded: it runs in epochs")
        cluster = cluster_of(
            ctx.kafka, ctx.job_redis.principal, "source.kafka", params.cluster, params.topics
        )
        ranges: list[Range] = [
            (str(t), int(q), int(a), int(b))
            for t, q, a, b in ctx.epoch.ranges[ctx.vertex.name]["ranges"]
        ]
        return topic_frame(
            ctx.spark, cluster.bootstrap, ranges, ctx.vertex.parallelism, outbox_capacity(ctx)
        )


class KafkaSinkOp(Op):
    """Each item as JSON, with the idempotent producer: at-least-once."""

    def apply(self, ctx: OpContext) -> DataFrame:
        params = params_of(ctx, p.KafkaSink)
        frame = union_inputs(ctx.inputs)
        cluster = cluster_of(
            ctx.kafka, ctx.job_redis.principal, "sink.kafka", params.cluster, [params.topic]
        )
        key = user_column(params.key) if params.key is not None else None
        produce(frame, cluster.bootstrap, params.topic, key)
        return frame
