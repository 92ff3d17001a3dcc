"""Stateless transforms: map, filter, flat_map, hash_join, sort."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from jetspark.dag import processors as p
from worker.engine.accumulation import bounded
from worker.engine.expressions import user_column
from worker.engine.ops.base import Op, OpContext, params_of
from worker.engine.routing import (
    SLOT,
    by_processor,
)


class MapOp(Op):
    def apply(self, ctx: OpContext) -> DataFrame:
        params = params_of(ctx, p.MapParams)
        return ctx.only_input.select(*[user_column(e).alias(f) for f, e in params.select.items()])


class FilterOp(Op):
    def apply(self, ctx: OpContext) -> DataFrame:
        return ctx.only_input.where(user_column(params_of(ctx, p.FilterParams).where))


class FlatMapOp(Op):
    def apply(self, ctx: OpContext) -> DataFrame:
        params = params_of(ctx, p.FlatMapParams)
        return ctx.only_input.withColumn(params.as_, F.explode(user_column(params.explode)))


class HashJoinOp(Op):
    """Ordinal 0 is the build side (consumed first, by its priority), ordinal 1 the probe.

    Processor g joins the probe items it received with the build items it received: the join
    condition includes ``SLOT`` and both sides are hash-partitioned on it with P partitions,
    so Spark joins them in place (a shuffled hash join that builds on the build side). The
    output is the probe item's fields plus the build item's, the probe's winning a clash.
    """

    def apply(self, ctx: OpContext) -> DataFrame:
        params = params_of(ctx, p.HashJoinParams)
        n = ctx.vertex.parallelism
        build, probe = (by_processor(frame, n) for frame in ctx.inputs)
        build = bounded(build, ctx.max_records, ctx.vertex.name, "build items")
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


class SortOp(Op):
    """Each processor sorts what it received; a total order is a sort of parallelism 1."""

    def apply(self, ctx: OpContext) -> DataFrame:
        by = params_of(ctx, p.SortParams).by
        columns = [user_column(b) for b in ([by] if isinstance(by, str) else by)]
        items = bounded(ctx.only_input, ctx.max_records, ctx.vertex.name, "items to sort")
        return items.sortWithinPartitions(*columns)
