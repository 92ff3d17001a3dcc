"""The translation table: one small op per processor kind, ``apply(context) -> DataFrame``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Protocol, TypeVar

import structlog
from pydantic import BaseModel
from pyspark.sql import Column, DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from jetspark.dag import processors as p
from jetspark.dag.model import Routing
from jetspark.dag.plan import EdgePlan, Exchange, VertexPlan
from worker.engine import aggregation
from worker.engine.counting import items_column
from worker.engine.errors import EngineError
from worker.engine.python import PythonOp
from worker.engine.routing import (
    SLOT,
    by_processor,
    candidates,
    partition_id,
    place,
    route,
    row_in_partition,
    sender_member,
    spray,
    targeted,
    with_slot,
    without_slot,
)
from worker.engine.sequence import sequence_frame

log = structlog.get_logger("jetspark.engine")


def _unpersisted(frame: DataFrame) -> DataFrame:
    return frame


@dataclass
class OpContext:
    """What an op sees: its vertex, params and already-routed inbound frames.

    ``inputs[i]`` arrived over ``inbound[i]`` (index = ``to_ordinal``). A routed frame carries
    the ``SLOT`` column it is partitioned on; a frame over a fused edge may not. An op that
    ``places_own_input`` gets the sender's frame as it is over a non-fused edge.
    """

    spark: SparkSession
    vertex: VertexPlan
    params: BaseModel
    inputs: list[DataFrame]
    inbound: list[EdgePlan]
    senders: list[VertexPlan]
    """The vertex at the other end of each inbound edge."""
    partition_count: int
    results_cap: int
    sink_results: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    keep: Callable[[DataFrame], DataFrame] = _unpersisted
    """Persist a frame for the rest of the job (read twice, computed once)."""
    outbound: list[EdgePlan] = field(default_factory=list)
    """Outbound edges, index = from_ordinal."""
    count_input: Callable[[DataFrame], DataFrame] | None = None
    """Set when an op that ``counts_own_input`` is to count its items itself: it aggregates
    ``counting.items_column()`` with its groups and passes the groups through this."""

    @property
    def only_input(self) -> DataFrame:
        return self.inputs[0]


class Op(Protocol):
    def apply(self, ctx: OpContext) -> DataFrame: ...


ParamsT = TypeVar("ParamsT", bound=BaseModel)


def _params(ctx: OpContext, kind: type[ParamsT]) -> ParamsT:
    if not isinstance(ctx.params, kind):
        raise EngineError(f"vertex {ctx.vertex.name}: params are not {kind.__name__}")
    return ctx.params


class ItemsSourceOp:
    """Item i goes to processor i % P."""

    def apply(self, ctx: OpContext) -> DataFrame:
        params = _params(ctx, p.ItemsSource)
        n = ctx.vertex.parallelism
        if not params.items:
            return ctx.spark.range(0, numPartitions=n).select()
        rows = [{**item, "__index": i} for i, item in enumerate(params.items)]
        frame = ctx.spark.createDataFrame(rows)
        ordered = [c for c in dict.fromkeys(k for item in params.items for k in item)]
        return place(frame, F.col("__index") % F.lit(n), n).select(*ordered)


class SequenceSourceOp:
    """Processor g emits the g-th slice of the sequence (see ``worker.engine.sequence``)."""

    def apply(self, ctx: OpContext) -> DataFrame:
        params = _params(ctx, p.SequenceSource)
        if params.count is None:
            raise EngineError("unbounded sequences need the streaming engine (not built yet)")
        return sequence_frame(
            ctx.spark, start=params.start, count=params.count, parallelism=ctx.vertex.parallelism
        )


class FilesSourceOp:
    """Spark's readers; file splits are shared out over the P processors (round-robin when
    there are fewer splits than processors)."""

    def apply(self, ctx: OpContext) -> DataFrame:
        params = _params(ctx, p.FilesSource)
        if params.watch:
            raise EngineError("watching a directory needs the streaming engine (not built yet)")
        reader = ctx.spark.read
        if params.format is p.FileFormat.csv:
            reader = reader.option("header", "true").option("inferSchema", "true")
        frame = reader.format(params.format.value).load(params.path)
        if params.format is p.FileFormat.text:
            frame = frame.withColumnRenamed("value", "line")
        n = ctx.vertex.parallelism
        if frame.rdd.getNumPartitions() >= n:
            return frame.coalesce(n)  # whole file splits per processor, without a shuffle
        return place(frame, spray(first=F.lit(0), width=n), n)


class MapOp:
    def apply(self, ctx: OpContext) -> DataFrame:
        params = _params(ctx, p.MapParams)
        return ctx.only_input.select(*[F.expr(e).alias(f) for f, e in params.select.items()])


class FilterOp:
    def apply(self, ctx: OpContext) -> DataFrame:
        return ctx.only_input.where(F.expr(_params(ctx, p.FilterParams).where))


class FlatMapOp:
    def apply(self, ctx: OpContext) -> DataFrame:
        params = _params(ctx, p.FlatMapParams)
        return ctx.only_input.withColumn(params.as_, F.explode(F.expr(params.explode)))


class AggregateOp:
    """Each processor aggregates the items routed to it: a group is (processor, key).

    Over an exchange the op routes its own input (``places_own_input``) so that partial
    groups travel instead of items, with Spark's partial aggregation before the shuffle:

    - partitioned on the aggregation key (or all-to-one): the target processor is a function
      of the key and, on a local edge, of the sender's member, so the op groups by
      (member, key) first and computes each group's processor afterwards, once per group;
    - otherwise each item gets its target ``SLOT`` and the op groups by (slot, key).

    Either way each processor's groups are then placed on its partition: the groups and
    where they end up are those of aggregating after moving every item. The placement is
    left out when no outbound edge can tell where a row is (``_placed_downstream``). Over a
    fused edge the frame is aggregated where it is, and so are the items of an aggregate
    (already one per group: routed first, then aggregated in place, one exchange instead of
    two). Without a key and with P > 1, every processor that received items emits its own
    aggregate, as Jet's non-keyed aggregation does. The op counts its own input
    (``counts_own_input``) in its groups, keeping Spark's code generation across the items.
    """

    places_own_input = True
    counts_own_input = True

    def apply(self, ctx: OpContext) -> DataFrame:
        params = _params(ctx, p.AggregateParams)
        stage = aggregation.STAGES[params.stage]
        columns = [stage(field, e) for field, e in params.aggregations.items()]
        counted = ctx.count_input or (lambda groups: groups)
        if ctx.count_input is not None:
            columns.append(items_column())
        n, edge, frame = ctx.vertex.parallelism, ctx.inbound[0], ctx.only_input
        if params.key is None and n == 1:
            return counted(frame.agg(*columns))  # one processor: a row even for no input
        sender = ctx.senders[0]
        routed = edge.exchange is not Exchange.fused and sender.processor == "aggregate"
        if routed:  # few items, one per group already: no partial aggregation to gain
            frame = route(frame, edge, sender, ctx.vertex, ctx.partition_count)
        if routed or edge.exchange is Exchange.fused:
            # No exchange: Spark's HashPartitioning(SLOT) satisfies the grouping in place.
            keys = [F.col(SLOT), *_key(params)]
            return counted(by_processor(frame, n).groupBy(*keys).agg(*columns)).drop(SLOT)
        if params.key is not None and (
            edge.routing is Routing.all_to_one
            or (edge.routing is Routing.partitioned and edge.key == params.key)
        ):
            # the sender's member matters on a local edge from several members (one: member 0)
            local = not edge.distributed and sender.parallelism > sender.local_parallelism
            member = [sender_member(sender).alias("__member")] if local else []
            grouped = counted(without_slot(frame).groupBy(*member, *_key(params)).agg(*columns))
            first, width = candidates(edge, ctx.vertex, F.col("__member") if local else F.lit(0))
            on_key = edge.model_copy(update={"key": "`key`"})
            pid = partition_id(grouped, on_key, ctx.partition_count)
            slotted = with_slot(grouped, first + F.pmod(pid, F.lit(width)), n)
            return _placed(ctx, slotted, n).drop(SLOT, "__member")
        items = targeted(frame, edge, sender, ctx.vertex, ctx.partition_count)
        keys = [F.col(SLOT), *_key(params)]
        return _placed(ctx, counted(items.groupBy(*keys).agg(*columns)), n).drop(SLOT)


def _placed(ctx: OpContext, slotted: DataFrame, n: int) -> DataFrame:
    """Each row on the partition its ``SLOT`` names, unless no outbound edge can tell."""
    return slotted.repartition(n, SLOT) if _placed_downstream(ctx) else slotted


def _placed_downstream(ctx: OpContext) -> bool:
    """Whether a consumer of the output can tell which partition a row is in.

    A distributed edge that is partitioned, all-to-one or broadcast routes each item by its
    content alone (no sender member, no sender row index), so where the row was is lost.
    """
    return not all(
        e.exchange is not Exchange.fused and e.distributed and e.routing is not Routing.unicast
        for e in ctx.outbound
    )


def _key(params: p.AggregateParams) -> list[Column]:
    return [] if params.key is None else [F.expr(params.key).alias("key")]


class HashJoinOp:
    """Ordinal 0 is the build side (consumed first, by its priority), ordinal 1 the probe.

    Processor g joins the probe items it received with the build items it received: the join
    condition includes ``SLOT`` and both sides are hash-partitioned on it with P partitions,
    so Spark joins them in place (a shuffled hash join that builds on the build side). The
    output is the probe item's fields plus the build item's, the probe's winning a clash.
    """

    def apply(self, ctx: OpContext) -> DataFrame:
        params = _params(ctx, p.HashJoinParams)
        n = ctx.vertex.parallelism
        build, probe = (by_processor(frame, n) for frame in ctx.inputs)
        fields = [c for c in probe.columns if c != SLOT]
        extra = [c for c in build.columns if c not in probe.columns]
        build = build.select(
            F.col(SLOT).alias("__build_slot"),
            F.expr(params.build_key).alias("__build_key"),
            *extra,
        )
        probe = probe.withColumn("__probe_key", F.expr(params.probe_key))
        on = (F.col(SLOT) == F.col("__build_slot")) & (F.col("__probe_key") == F.col("__build_key"))
        joined = probe.join(build.hint("shuffle_hash"), on, params.how)
        return joined.select(*fields, *extra)


class SortOp:
    """Each processor sorts what it received; a total order is a sort of parallelism 1."""

    def apply(self, ctx: OpContext) -> DataFrame:
        by = _params(ctx, p.SortParams).by
        columns = [F.expr(b) for b in ([by] if isinstance(by, str) else by)]
        return ctx.only_input.sortWithinPartitions(*columns)


_AS_IS = frozenset({str, int, float, bool, type(None)})


def json_safe(value: Any) -> Any:
    """A collected value as JSON can hold it; a ``Row`` (nested too) becomes a dict."""
    if type(value) in _AS_IS:
        return value
    if isinstance(value, Row):
        return {field: json_safe(v) for field, v in zip(value.__fields__, value, strict=True)}
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, bytes | bytearray):
        return value.hex()
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    return value


class ResultsSinkOp:
    """Keeps at most ``results_cap`` records with the job; consumes every item."""

    def apply(self, ctx: OpContext) -> DataFrame:
        # One full pass, so every vertex's counts are complete: each processor hands over at
        # most the cap (its first rows), the driver keeps the first ``results_cap`` of them
        # in processor order, as ``limit(cap).collect()`` would.
        frame = _union(ctx.inputs)
        rows = frame.where(row_in_partition() < F.lit(ctx.results_cap)).collect()
        rows = rows[: ctx.results_cap]
        ctx.sink_results[ctx.vertex.name] = [json_safe(row) for row in rows]
        return frame


class LoggerSinkOp:
    """Consumes every item (one pass, nothing kept) and logs how many arrived."""

    def apply(self, ctx: OpContext) -> DataFrame:
        frame = _union(ctx.inputs)
        log.info("sink.logger", vertex=ctx.vertex.name, items=frame.count())
        return frame


class FilesSinkOp:
    def apply(self, ctx: OpContext) -> DataFrame:
        params = _params(ctx, p.FilesSink)
        frame = _union(ctx.inputs)
        out = frame
        if params.format is p.FileFormat.text:
            out = frame.select(F.to_json(F.struct(*frame.columns)).alias("value"))
        writer = out.write.mode("overwrite").format(params.format.value)
        if params.format is p.FileFormat.csv:
            writer = writer.option("header", "true")
        writer.save(params.path)
        return frame


class RedisMapSinkOp:
    """A Redis hash per map, like the seeds' IMap: field = key, value = the item as JSON."""

    def apply(self, ctx: OpContext) -> DataFrame:
        from jetspark.queue.keys import Keys
        from jetspark.settings import RedisSettings

        params = _params(ctx, p.RedisMapSink)
        settings = RedisSettings()
        url, hash_key = settings.url, Keys(settings.namespace).redis_map(params.map)
        frame = _union(ctx.inputs)
        keyed = frame.select(
            F.expr(params.key).cast("string").alias("k"),
            F.to_json(F.struct(*frame.columns)).alias("v"),
        )

        def write(rows: Any) -> None:
            import redis as redis_client

            client = redis_client.Redis.from_url(url or "redis://127.0.0.1:6379/0")
            pipe = client.pipeline(transaction=False)
            for row in rows:
                pipe.hset(hash_key, row["k"], row["v"])
            pipe.execute()

        keyed.foreachPartition(write)
        return frame


def _union(frames: list[DataFrame]) -> DataFrame:
    """A sink's inbound frames as one, without the routing column."""
    first, *rest = (without_slot(frame) for frame in frames)
    for other in rest:
        first = first.unionByName(other, allowMissingColumns=True)
    return first


OPS: dict[str, Op] = {
    "source.items": ItemsSourceOp(),
    "source.sequence": SequenceSourceOp(),
    "source.files": FilesSourceOp(),
    "map": MapOp(),
    "filter": FilterOp(),
    "flat_map": FlatMapOp(),
    "aggregate": AggregateOp(),
    "hash_join": HashJoinOp(),
    "sort": SortOp(),
    "sink.results": ResultsSinkOp(),
    "sink.logger": LoggerSinkOp(),
    "sink.files": FilesSinkOp(),
    "sink.redis_map": RedisMapSinkOp(),
    "python": PythonOp(),
}
