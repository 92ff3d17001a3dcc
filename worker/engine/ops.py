"""The translation table: one small op per processor kind, ``apply(context) -> DataFrame``."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from functools import partial
from typing import Any, Protocol, TypeVar

import structlog
from pydantic import BaseModel
from pyspark.sql import Column, DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from jetspark.dag import processors as p
from jetspark.dag.data_paths import PathRefused, check_path, prepare_sink, readable_files
from jetspark.dag.expressions import quote_identifier
from jetspark.dag.model import Routing
from jetspark.dag.plan import EdgePlan, Exchange, VertexPlan
from worker.engine import aggregation
from worker.engine.contract import RedisTarget
from worker.engine.counting import items_column
from worker.engine.errors import EngineError
from worker.engine.expressions import user_column
from worker.engine.local_items import local_items
from worker.engine.observed import ObservedAggregates
from worker.engine.python import PythonOp
from worker.engine.redis_streams import now_ms, stream_frame, write_stream
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
from worker.engine.sequence import Stamps, sequence_frame
from worker.engine.stateful_aggregate import aggregate_step
from worker.engine.streaming.scope import EpochScope
from worker.engine.windowing import window_step

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
    epoch: EpochScope | None = None
    """Set when the job runs in epochs (a streaming job): ranges, state, watermarks."""
    redis: RedisTarget = field(default_factory=RedisTarget.from_settings)
    """The worker's Redis, for the sinks and sources that use one."""
    count_input: Callable[[DataFrame], DataFrame] | None = None
    owner: str = "jetspark"
    """Names the job in the directories its ``sink.files`` creates (``data_paths.MARKER``)."""
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


def _read_once(ctx: OpContext) -> bool:
    """A bounded source in an epoch run reads everything in the first epoch only."""
    return ctx.epoch is None or bool(ctx.epoch.ranges[ctx.vertex.name].get("all", True))


def _nothing(frame: DataFrame) -> DataFrame:
    """The same columns, no rows (Spark plans it without running a task)."""
    return frame.where(F.lit(False))


class ItemsSourceOp:
    """Item i goes to processor i % P."""

    def apply(self, ctx: OpContext) -> DataFrame:
        frame = self.items(ctx)
        return frame if _read_once(ctx) else _nothing(frame)

    def items(self, ctx: OpContext) -> DataFrame:
        params = _params(ctx, p.ItemsSource)
        n = ctx.vertex.parallelism
        if not params.items:
            return ctx.spark.range(0, numPartitions=n).select()
        ordered = [c for c in dict.fromkeys(k for item in params.items for k in item)]
        local = local_items(ctx.spark, params.items, n, ordered)
        if local is not None:
            return local  # no exchange, no Spark job of its own
        rows = [{**item, "__index": i} for i, item in enumerate(params.items)]
        frame = ctx.spark.createDataFrame(rows)
        columns = [F.col(quote_identifier(c)) for c in ordered]
        return place(frame, F.col("__index") % F.lit(n), n).select(*columns)


class SequenceSourceOp:
    """Processor g emits its share of the sequence (see ``worker.engine.sequence``)."""

    def apply(self, ctx: OpContext) -> DataFrame:
        params = _params(ctx, p.SequenceSource)
        n = ctx.vertex.parallelism
        if ctx.epoch is None:
            if params.count is None:
                raise EngineError("an unbounded sequence runs in epochs")
            return sequence_frame(ctx.spark, start=params.start, count=params.count, parallelism=n)
        planned = ctx.epoch.ranges[ctx.vertex.name]
        low, high = int(planned["low"]), int(planned["high"])
        stamps = Stamps(params.start, int(planned["t0_ms"]), params.rate_per_s, planned["stamp_ms"])
        return sequence_frame(ctx.spark, start=low, count=high - low, parallelism=n, stamps=stamps)


class FilesSourceOp:
    """Spark's readers; file splits are shared out over the P processors (round-robin when
    there are fewer splits than processors)."""

    def apply(self, ctx: OpContext) -> DataFrame:
        params = _params(ctx, p.FilesSource)
        paths: str | list[str] = params.path
        if ctx.epoch is not None and params.watch:
            paths = ctx.epoch.ranges[ctx.vertex.name]["files"]
            if not paths:
                return self.empty(ctx, params)
        elif not _read_once(ctx):
            return _nothing(self.read(ctx, params, paths))
        return self.read(ctx, params, paths)

    def empty(self, ctx: OpContext, params: p.FilesSource) -> DataFrame:
        """No new file this epoch: no rows, the columns of the files seen before if any."""
        seen = ctx.epoch.ranges[ctx.vertex.name].get("seen_any") if ctx.epoch else None
        if seen:
            return _nothing(self.read(ctx, params, [seen]))
        columns = "line string" if params.format is p.FileFormat.text else "value string"
        return ctx.spark.createDataFrame([], columns)

    def read(self, ctx: OpContext, params: p.FilesSource, paths: str | list[str]) -> DataFrame:
        reader = ctx.spark.read
        if params.format is p.FileFormat.csv:
            reader = reader.option("header", "true").option("inferSchema", "true")
        files = _readable(params.path, [paths] if isinstance(paths, str) else paths)
        if not files:
            raise EngineError(f"source.files: nothing to read at {params.path!r}")
        root = check_path(params.path).location
        if os.path.isdir(root):
            reader = reader.option("basePath", root)  # partition columns, as for the directory
        frame = reader.format(params.format.value).load(files)
        if params.format is p.FileFormat.text:
            frame = frame.withColumnRenamed("value", "line")
        n = ctx.vertex.parallelism
        if frame.rdd.getNumPartitions() >= n:
            return frame.coalesce(n)  # whole file splits per processor, without a shuffle
        return place(frame, spray(first=F.lit(0), width=n), n)


def _readable(path: str, paths: list[str]) -> list[str]:
    """Every file Spark is to read, checked under the data roots just before it reads."""
    check_path(path)  # the roots may have changed since the job was accepted
    try:
        return [file for named in paths for file in readable_files(check_path(named))]
    except PathRefused as error:
        raise EngineError(f"source.files: {error}") from None


class RedisStreamSourceOp:
    """Exactly the entries the epoch's range names: processor g reads streams g, g+P..."""

    def apply(self, ctx: OpContext) -> DataFrame:
        params = _params(ctx, p.RedisStreamSource)
        if ctx.epoch is None:
            raise EngineError("source.redis_stream is unbounded: it runs in epochs")
        planned = ctx.epoch.ranges[ctx.vertex.name]["streams"]
        ranges = [(s, planned[s]["after"], planned[s]["until"]) for s in params.streams]
        return stream_frame(
            ctx.spark, ctx.redis.url, ranges, ctx.vertex.parallelism, key=ctx.redis.user_stream
        )


class MapOp:
    def apply(self, ctx: OpContext) -> DataFrame:
        params = _params(ctx, p.MapParams)
        return ctx.only_input.select(*[user_column(e).alias(f) for f, e in params.select.items()])


class FilterOp:
    def apply(self, ctx: OpContext) -> DataFrame:
        return ctx.only_input.where(user_column(_params(ctx, p.FilterParams).where))


class FlatMapOp:
    def apply(self, ctx: OpContext) -> DataFrame:
        params = _params(ctx, p.FlatMapParams)
        return ctx.only_input.withColumn(params.as_, F.explode(user_column(params.explode)))


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
        if ctx.epoch is not None and not (ctx.epoch.final and ctx.epoch.epoch == 1):
            return self.in_epochs(ctx, params)
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

    def in_epochs(self, ctx: OpContext, params: p.AggregateParams) -> DataFrame:
        """Streaming: partial results carried from epoch to epoch, emitted at the end."""
        assert ctx.epoch is not None
        name, edge, items = ctx.vertex.name, ctx.inbound[0], ctx.only_input
        if edge.exchange is not Exchange.fused:
            items = route(items, edge, ctx.senders[0], ctx.vertex, ctx.partition_count)
        step = aggregate_step(
            items,
            ctx.epoch.state_in.get(name),
            params,
            parallelism=ctx.vertex.parallelism,
            partition_count=ctx.partition_count,
            final=ctx.epoch.final,
            keep=partial(ctx.epoch.checkpointed, name),
        )
        ctx.epoch.state_out[name] = step.state
        return step.output


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
    return [] if params.key is None else [user_column(params.key).alias("key")]


class InsertWatermarksOp:
    """Items pass unchanged; in an epoch run, processor g's greatest timestamp this epoch
    moves its watermark (``top - allowed_lag_ms``), see ``streaming.watermarks``.

    The tops are observed while Spark computes the items for the vertices downstream (a
    window computes its windows before it needs the watermark), not by a job of their own.
    """

    def apply(self, ctx: OpContext) -> DataFrame:
        params = _params(ctx, p.InsertWatermarksParams)
        frame = ctx.only_input
        epoch = ctx.epoch
        if epoch is None:
            return frame
        ts, g = user_column(params.timestamp).cast("bigint"), F.spark_partition_id()
        n = ctx.vertex.parallelism
        tops = ObservedAggregates(frame, {f"top_{i}": F.max(F.when(g == i, ts)) for i in range(n)})
        kept = ctx.keep(tops.frame)  # computed once, observed then, read by every consumer

        def observe() -> None:
            by_processor = {
                int(name.removeprefix("top_")): top
                for name, top in tops.values().items()
                if top is not None
            }
            observe_watermarks(epoch, ctx.vertex.name, params, by_processor)

        epoch.defer(observe)
        return kept


def observe_watermarks(
    epoch: EpochScope, vertex: str, params: p.InsertWatermarksParams, tops: dict[int, int]
) -> None:
    """An ``insert_watermarks`` vertex saw these greatest timestamps per processor this
    epoch (none at all in an epoch without input: only its idle clocks move)."""
    epoch.watermarks.observe_events(
        vertex,
        tops,
        allowed_lag_ms=params.allowed_lag_ms,
        idle_timeout_ms=params.idle_timeout_ms,
        now_ms=epoch.now_ms,
    )


class WindowOp:
    """The seeds' windows over event time (``windowing.window_step``): each processor keeps
    its open windows as partial results between epochs and emits a window once the
    watermark it coalesced passes the window's end; late items are counted and dropped.

    It coalesces its watermarks itself, once its windows are computed: the job that
    computes them observes the timestamps upstream on the way (``InsertWatermarksOp``)."""

    coalesces_itself = True

    def apply(self, ctx: OpContext) -> DataFrame:
        params = _params(ctx, p.WindowParams)
        epoch = ctx.epoch
        if epoch is None:
            raise EngineError("a window runs in epochs")
        name = ctx.vertex.name
        step = window_step(
            ctx.only_input,
            epoch.state_in.get(name),
            params,
            parallelism=ctx.vertex.parallelism,
            partition_count=ctx.partition_count,
            wm_before=epoch.watermarks.coalesced(name),
            wm_after=lambda: epoch.coalesce(name),
            final=epoch.final,
            keep=partial(epoch.checkpointed, name),
        )
        epoch.state_out[name] = step.state
        if step.late is not None:
            epoch.late_items[name] = step.late
        return step.output


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
            user_column(params.build_key).alias("__build_key"),
            *extra,
        )
        probe = probe.withColumn("__probe_key", user_column(params.probe_key))
        on = (F.col(SLOT) == F.col("__build_slot")) & (F.col("__probe_key") == F.col("__build_key"))
        joined = probe.join(build.hint("shuffle_hash"), on, params.how)
        return joined.select(*fields, *extra)


class SortOp:
    """Each processor sorts what it received; a total order is a sort of parallelism 1."""

    def apply(self, ctx: OpContext) -> DataFrame:
        by = _params(ctx, p.SortParams).by
        columns = [user_column(b) for b in ([by] if isinstance(by, str) else by)]
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
        # Their bytes are bounded where they are written (``worker.results``).
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
            out = frame.select(
                F.to_json(F.struct(*[F.col(quote_identifier(c)) for c in frame.columns])).alias(
                    "value"
                )
            )
        writer = out.write.mode("overwrite").format(params.format.value)
        if params.format is p.FileFormat.csv:
            writer = writer.option("header", "true")
        try:
            target = check_path(params.path)
            # only into a directory created for this job; a batch run replaces what it wrote
            prepare_sink(target, ctx.owner, empty=ctx.epoch is None)
        except PathRefused as error:
            raise EngineError(f"sink.files: {error}") from None
        if ctx.epoch is None:
            writer.mode("append").save(target.location)
            return frame
        # An epoch writes its own directory inside the job's, overwritten when it is replayed.
        writer.save(os.path.join(target.location, f"epoch={ctx.epoch.epoch:08d}"))
        return frame


class RedisMapSinkOp:
    """A Redis hash per map, like the seeds' IMap: field = key, value = the item as JSON."""

    def apply(self, ctx: OpContext) -> DataFrame:
        params = _params(ctx, p.RedisMapSink)
        url, hash_key = ctx.redis.url, ctx.redis.user_map(params.map)
        frame = _union(ctx.inputs)
        keyed = frame.select(
            user_column(params.key).cast("string").alias("k"),
            F.to_json(F.struct(*[F.col(quote_identifier(c)) for c in frame.columns])).alias("v"),
        )

        def write(rows: Any) -> None:
            import redis as redis_client

            client = redis_client.Redis.from_url(url)
            pipe = client.pipeline(transaction=False)
            for row in rows:
                pipe.hset(hash_key, row["k"], row["v"])
            pipe.execute()

        keyed.foreachPartition(write)
        return frame


class RedisStreamSinkOp:
    """XADD each item, ids ``<job_t0_ms + epoch>-<n>``: a replayed epoch writes nothing twice
    (see ``worker.engine.redis_streams``). A bounded job's ids are ``<its start>-<n>``."""

    def apply(self, ctx: OpContext) -> DataFrame:
        params = _params(ctx, p.RedisStreamSink)
        frame = _union(ctx.inputs)
        epoch_ms = now_ms() if ctx.epoch is None else ctx.epoch.job_t0_ms + ctx.epoch.epoch
        done = write_stream(
            frame,
            url=ctx.redis.url,
            stream=ctx.redis.user_stream(params.stream),
            maxlen=params.maxlen,
            epoch_ms=epoch_ms,
        )
        log.info(
            "sink.redis_stream",
            vertex=ctx.vertex.name,
            stream=params.stream,
            written=done.written,
            already_written=done.skipped,
        )
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
    "source.redis_stream": RedisStreamSourceOp(),
    "map": MapOp(),
    "filter": FilterOp(),
    "flat_map": FlatMapOp(),
    "aggregate": AggregateOp(),
    "insert_watermarks": InsertWatermarksOp(),
    "window": WindowOp(),
    "hash_join": HashJoinOp(),
    "sort": SortOp(),
    "sink.results": ResultsSinkOp(),
    "sink.logger": LoggerSinkOp(),
    "sink.files": FilesSinkOp(),
    "sink.redis_map": RedisMapSinkOp(),
    "sink.redis_stream": RedisStreamSinkOp(),
    "python": PythonOp(),
}
