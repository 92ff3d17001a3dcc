"""``source.kafka`` and ``sink.kafka``: topics of operator-named clusters, each topic checked
against the job's principal (``jetspark.kafka.clusters``) where it is used."""

from __future__ import annotations

from typing import Any

import structlog
from pydantic import BaseModel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from jetspark.dag import kinds as p
from jetspark.dag.plan import ExecutionPlan
from jetspark.kafka.clusters import KafkaCluster, KafkaClusters, TopicRefused
from worker.engine.contract import JobControl
from worker.engine.errors import EngineError
from worker.engine.expressions import user_column
from worker.engine.kafka_io import (
    METADATA_TIMEOUT_S,
    Range,
    RecordTag,
    assigned_reader,
    end_offsets,
    produce,
    tagged_since,
    topic_frame,
    topic_partitions,
    true_end,
)
from worker.engine.observed import ObservedAggregates
from worker.engine.ops.base import Op, OpContext, SourceOp, outbox_capacity, params_of
from worker.engine.ops.event_time import computed_once
from worker.engine.ops.sinks import union_inputs
from worker.engine.streaming.scope import EpochScope
from worker.engine.streaming.source_planners import Json, SourcePlanner

log = structlog.get_logger("jetspark.engine")


def cluster_of(
    clusters: KafkaClusters, principal: str, kind: str, name: str, topics: list[str]
) -> KafkaCluster:
    try:
        return clusters.for_principal(name, principal, topics)
    except TopicRefused as refused:
        raise EngineError(f"{kind}: {refused}") from None


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
        from confluent_kafka import TopicPartition

        assert isinstance(params, p.KafkaSource)
        cluster = self.cluster(params)
        # One per epoch, closed after: a planner has no end to close a kept one at.
        consumer = assigned_reader(cluster.bootstrap)
        marks: dict[str, tuple[int, int]] = {}
        try:
            # Every partition's offsets first: a probe's fetch would hold the connection.
            reported = {
                (topic, partition): consumer.get_watermark_offsets(
                    TopicPartition(topic, partition), timeout=METADATA_TIMEOUT_S
                )
                for topic in params.topics
                for partition in topic_partitions(consumer, topic)
            }
            for (topic, partition), (low, high) in reported.items():
                end = true_end(consumer, topic, partition, int(low), int(high))
                marks[partition_name(topic, partition)] = (int(low), end)
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
        for key, (low, high) in sorted(marks.items(), key=_by_topic_and_partition):
            first = max(known.get(key, low), low)  # a new partition from its start
            topic, _, partition = key.rpartition(":")
            ranges.append((topic, int(partition), first, max(first, min(high, first + share))))
        return {"ranges": [list(r) for r in ranges]}

    def advance(self, params: BaseModel, offsets: Json, planned: Json) -> Json:
        known = dict(offsets.get("next", {}))
        for topic, partition, _first, end in planned["ranges"]:
            known[partition_name(topic, partition)] = end
        return {**offsets, "next": known}

    def exhausted(self, params: BaseModel, offsets: Json) -> bool:
        return False

    def is_empty(self, planned: Json) -> bool:
        return all(end <= first for _t, _p, first, end in planned["ranges"])


def _by_topic_and_partition(entry: tuple[str, Any]) -> tuple[str, int]:
    """(topic, partition number): partition 10 after partition 2."""
    topic, _, partition = entry[0].rpartition(":")
    return topic, int(partition)


class KafkaSourceOp(SourceOp):
    """Exactly the offsets the epoch's ranges name: Kafka partition i to processor i % P.

    It emits watermarks itself, per Kafka partition (``WatermarkTracker.observe_partitions``):
    each partition's greatest record timestamp read this epoch is observed while Spark reads
    the records for the vertices downstream, as ``insert_watermarks`` observes its own."""

    forwards_own_watermarks = True

    def planner_for(self, control: JobControl) -> SourcePlanner:
        return KafkaPlanner(control)

    def quiet(self, epoch: EpochScope, vertex: str, params: BaseModel) -> None:
        assert isinstance(params, p.KafkaSource)
        if watermarks_used(epoch.plan, vertex):
            observe_partitions(epoch, vertex, params, {})

    def apply(self, ctx: OpContext) -> DataFrame:
        params = params_of(ctx, p.KafkaSource)
        epoch = ctx.epoch
        if epoch is None:
            raise EngineError("source.kafka is unbounded: it runs in epochs")
        cluster = cluster_of(
            ctx.kafka, ctx.job_redis.principal, "source.kafka", params.cluster, params.topics
        )
        ranges = epoch_ranges(epoch, ctx.vertex.name)
        frame = topic_frame(
            ctx.spark, cluster.bootstrap, ranges, ctx.vertex.parallelism, outbox_capacity(ctx)
        )
        if not watermarks_used(epoch.plan, ctx.vertex.name):
            return frame  # no Spark job or persisted records for watermarks nobody reads
        read = {partition_name(t, q): (t, q) for t, q, first, end in ranges if end > first}
        if not read:
            observe_partitions(epoch, ctx.vertex.name, params, {})
            return frame
        topic, partition, ts = F.col("topic"), F.col("partition"), F.col("ts")
        tops = ObservedAggregates(
            frame,
            {
                name: F.max(F.when((topic == F.lit(t)) & (partition == F.lit(q)), ts))
                for name, (t, q) in read.items()
            },
            vertex=ctx.vertex.name,
        )
        kept = tops.frame if computed_once(ctx) else ctx.keep(tops.frame)

        def observe() -> None:
            seen = {name: top for name, top in tops.values().items() if top is not None}
            observe_partitions(epoch, ctx.vertex.name, params, seen)

        epoch.defer(observe)
        return kept


WATERMARK_READERS = frozenset({"window", "python"})
"""The kinds that act on the watermarks they receive (a ``python`` processor's
``try_process_watermark``); every other kind passes them on."""


def watermarks_used(plan: ExecutionPlan, source: str) -> bool:
    """Does a vertex downstream of ``source`` act on its watermarks: a window or a Python
    vertex reached without an ``insert_watermarks`` (which replaces them) in between? If not,
    the source emits none: observing them costs a Spark job per epoch when no window
    follows the source directly (``computed_once``)."""
    seen, todo = {source}, [source]
    while todo:
        for edge in plan.outbound(todo.pop()):
            kind = plan.vertex(edge.to).processor
            if edge.to in seen or kind == "insert_watermarks":
                continue
            if kind in WATERMARK_READERS:
                return True
            seen.add(edge.to)
            todo.append(edge.to)
    return False


def partition_name(topic: str, partition: int) -> str:
    """A Kafka partition's name in the offsets and the watermarks: ``topic:partition``."""
    return f"{topic}:{partition}"


def epoch_ranges(epoch: EpochScope, vertex: str) -> list[Range]:
    return [(str(t), int(q), int(a), int(b)) for t, q, a, b in epoch.ranges[vertex]["ranges"]]


def observe_partitions(
    epoch: EpochScope, vertex: str, params: p.KafkaSource, tops: dict[str, int]
) -> None:
    """The source's Kafka partitions gave these greatest timestamps this epoch (none at all
    in an epoch without records: only their idle clocks move). Partition i of the epoch's
    ranges is processor i % P's, as it reads them (``topic_frame``)."""
    parallelism = epoch.plan.vertex(vertex).parallelism
    owners = {
        partition_name(t, q): i % parallelism
        for i, (t, q, _first, _end) in enumerate(epoch_ranges(epoch, vertex))
    }
    epoch.watermarks.observe_partitions(
        vertex,
        owners,
        tops,
        allowed_lag_ms=params.allowed_lag_ms,
        idle_timeout_ms=params.idle_timeout_ms,
        now_ms=epoch.now_ms,
    )


class KafkaSinkOp(Op):
    """Each item as a JSON record, with the idempotent producer, its headers naming the job,
    the vertex and the epoch (``RecordTag``). Under exactly-once, an epoch's plan keeps the
    topic's end offsets (``epoch_mark``) and a replayed epoch first reads back what its lost
    attempt wrote since then and writes only the rest, so each record is in the topic once
    (without Kafka transactions, SPEC §5). Otherwise at-least-once."""

    def epoch_mark(self, control: JobControl, params: BaseModel) -> Json | None:
        assert isinstance(params, p.KafkaSink)
        cluster = cluster_of(
            control.kafka, control.redis.principal, "sink.kafka", params.cluster, [params.topic]
        )
        try:
            return {"since": end_offsets(cluster.bootstrap, params.topic)}
        except Exception as error:  # librdkafka's KafkaException: the broker is away
            raise EngineError(f"sink.kafka: cluster {params.cluster!r}: {error}") from None

    def apply(self, ctx: OpContext) -> DataFrame:
        params = params_of(ctx, p.KafkaSink)
        frame = union_inputs(ctx.inputs)
        cluster = cluster_of(
            ctx.kafka, ctx.job_redis.principal, "sink.kafka", params.cluster, [params.topic]
        )
        key = user_column(params.key) if params.key is not None else None
        epoch = ctx.epoch
        tag = RecordTag(ctx.owner, ctx.vertex.name, None if epoch is None else epoch.epoch)
        mark = None if epoch is None or not epoch.replayed else epoch.sink_mark(ctx.vertex.name)
        written = None
        if mark is not None:
            written = tagged_since(cluster.bootstrap, params.topic, mark["since"], tag)
            log.info(
                "sink.kafka: a replayed epoch",
                vertex=ctx.vertex.name,
                epoch=tag.epoch,
                already_written=sum(written.values()),
            )
        produce(frame, cluster.bootstrap, params.topic, key, tag, written)
        return frame
